/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfmon's rooms share this: the events of one run (pfmon_events.c: names
 * to PMC values through libpfm4), the results (pfmon_output.c: text, CSV,
 * JSON) and the run itself (pfmon.c).
 */
#ifndef PFMON_H
#define PFMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <perfmon/perfmon.h>
#include <perfmon/pv_perfmon.h>

#include "cli.h"

#define SYSFS		"/sys/kernel/perfmon"
#define MAX_SETS	16
#define MAX_EVS		32	/* per set */

/*
 * pfmon's own failures exit with PFMON_EXIT_FAIL, as env(1), timeout(1)
 * and chroot(1) do, so that they stay apart from the command's status,
 * which is pfmon's otherwise: 126 the command cannot be run, 127 it was
 * not found, 128 + N it was killed by signal N.
 */
#define PFMON_EXIT_FAIL		125
#define PFMON_EXIT_NOEXEC	126
#define PFMON_EXIT_NOTFOUND	127

/* -I: perf stat's lower bound; below it the calls themselves would show */
#define PFMON_MIN_INTERVAL_MS		10
#define PFMON_DFL_SWITCH_TIMEOUT_NS	10000000	/* --switch-timeout */

/* the keys of the options that have no short form (pfmon_cli.c) */
enum pfmon_opt {
	OPT_SET = CLI_LONG_ONLY,
	OPT_SWITCH_TIMEOUT,
	OPT_SMPL_PERIOD,
	OPT_SMPL_PER_FUNCTION,
	OPT_SMPL_PER_ADDRESS,
	OPT_SMPL_PER_LINE,
	OPT_SMPL_OUTFILE,
	OPT_REPORT,
	OPT_SYSTEM_WIDE,
	OPT_CPU_LIST,
	OPT_ATTACH_TASK,
	OPT_FOLLOW_FORK,
	OPT_FOLLOW_VFORK,
	OPT_FOLLOW_PTHREAD,
	OPT_FOLLOW_EXEC,
	OPT_FOLLOW_ALL,
	OPT_AGGREGATE,
	OPT_JSON,
};

extern const struct cli_program pfmon_cli;

/* privilege levels, as libpfm4's PFM_PLM3 (user) and PFM_PLM0 (kernel) */
#define PLM_USER	0x8
#define PLM_KERNEL	0x1

struct event {
	char name[128];		/* as the user wrote it */
	int vpmd;		/* virtual PMD number, or 0: hardware */
	uint64_t pmc_value;	/* hardware: the PMC value written */
	int pmc;		/* hardware: PMC = PMD number; -1 virtual */
	bool emulated;		/* the host backs it with an admin's alias */
};

struct set {
	struct event ev[MAX_EVS];
	int n;
	int nhw;
};

/* one set's figures at one reading (pfm_getinfo_evtsets + read_pmds) */
struct set_reading {
	uint64_t runs, act_ns;		/* the set's runs and active time */
	uint64_t host_enabled_ns;	/* summed over the set's PMDs */
	uint64_t host_running_ns;
	uint64_t raw[MAX_EVS];		/* the PMDs' values */
};

struct reading {
	double t;			/* s since monitoring started */
	uint64_t total_act_ns;		/* sum over the sets */
	struct set_reading set[MAX_SETS];
};

enum out_fmt { OUT_TEXT, OUT_CSV, OUT_JSON };

extern struct set sets[MAX_SETS];
extern int nsets;
extern FILE *out;		/* results: stdout or -o FILE */
extern enum out_fmt out_fmt;
extern const char *csv_sep;

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
					      noreturn));
int sysfs_read(const char *rel, char *buf, size_t size);
/* a number in /sys/kernel/perfmon/@rel; *@ok false if none */
uint64_t sysfs_u64(const char *rel, bool *ok);
/*
 * Room for element @n of @arr, an array of @size-byte elements and *@cap
 * slots: @arr, or the array moved to twice the slots (@first when it had
 * none) if it was full. Dies when memory runs out.
 */
void *grow(void *arr, size_t *cap, size_t n, size_t size, size_t first);

/* pfmon_events.c */
extern char model[64];
extern int counters;
void events_init(void);
void event_parse(const char *spec, unsigned int dfl_plm, int setid,
		 struct event *e);
void list_events(int fd);
const char *events_libpfm_version(void);

/* pfmon_syms.c */
enum smpl_view { VIEW_FUNCTION, VIEW_ADDRESS, VIEW_LINE };
void syms_begin(pid_t pid, const char *exe);
void syms_snapshot(void);
void syms_hit(uint64_t ip);
void syms_set_maps(const char *text, const char *exe);
const char *syms_maps(void);
void syms_report(FILE *o, enum smpl_view view);

/* pfmon_output.c */
void print_counts(const char *target, const struct reading *r,
		  const struct reading *prev);
void print_interval_header(void);
void warn_starved(const char *target, const struct reading *r);

#endif
