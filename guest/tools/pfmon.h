/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfmon's rooms share this: its options (pfmon.c, from pfmon_cli.c's
 * table), the events of one run (pfmon_events.c: names to PMC values
 * through libpfm4), the contexts (pfmon_ctx.c), the session and its
 * command (pfmon_session.c), counting (pfmon_count.c), following
 * (pfmon_follow.c), sampling (pfmon_smpl.c, its symbols pfmon_syms.c)
 * and the results (pfmon_output.c: text, CSV, JSON).
 */
#ifndef PFMON_H
#define PFMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <poll.h>
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
#define PFMON_MAX_SESSION_S		31536000	/* -t: a year */
/* --smpl-period's buffer: thousands of one-PMD entries between two
 * notifications, a sixteenth of the host's default per-buffer limit */
#define PFMON_DFL_SMPL_BUF_SIZE		262144	/* 256 KiB */
#define PFMON_MIN_SMPL_BUF_SIZE		4096

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
	OPT_PROFILE_FORMAT,
	OPT_SMPL_BUF_SIZE,
	OPT_SMPL_RANDOM,
};

/* --follow-*: the kinds of task a followed task's creations are */
#define FOLLOW_FORK	0x1
#define FOLLOW_VFORK	0x2
#define FOLLOW_PTHREAD	0x4
#define FOLLOW_EXEC	0x8
#define FOLLOW_ALL	0xf

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
	/* getinfo's PVPFM_SETINFO_*: what the host's limits took */
	uint64_t ovfls_lost, host_throttles, periods_raised;
	uint64_t raw[MAX_EVS];		/* the PMDs' values */
};

struct reading {
	double t;			/* s since monitoring started */
	uint64_t total_act_ns;		/* sum over the sets */
	struct set_reading set[MAX_SETS];
};

enum out_fmt { OUT_TEXT, OUT_CSV, OUT_JSON };
enum smpl_view { VIEW_FUNCTION, VIEW_ADDRESS, VIEW_LINE };
/* --profile-format: pfmon's table, perf script's text, folded stacks */
enum profile_fmt { PROFILE_TABLE, PROFILE_PERF_SCRIPT, PROFILE_FOLDED };

/* what main() parsed, for the rooms that run the session */
struct pfmon_opts {
	uint64_t switch_timeout;	/* ns, every context's sets */
	uint64_t interval_ms;		/* -I; 0: counts at the end only */
	uint64_t session_s;		/* -t; 0: until the session ends */
	uint64_t smpl_period;		/* 0: counting only */
	uint64_t smpl_random_mask;	/* --smpl-periods-random; 0: none */
	uint32_t smpl_random_seed;
	size_t smpl_buf_size;
	const char *smpl_outfile;	/* --smpl-outfile, or NULL */
	enum smpl_view smpl_view;
	enum profile_fmt profile_fmt;
	unsigned int follow;		/* FOLLOW_* */
	bool aggregate;			/* --aggregate-results */
	bool verbose;			/* -v: the registers each event takes */
};

extern struct set sets[MAX_SETS];
extern int nsets;
extern FILE *out;		/* results: stdout or -o FILE */
extern enum out_fmt out_fmt;
extern const char *csv_sep;
extern struct pfmon_opts opts;

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
/* @fn runs before die() exits: it leaves what pfmon traces as it found it */
void die_cleanup(void (*fn)(void));

/* pfmon_ctx.c */
int ctx_create(uint32_t flags);
/* a context for a followed task: -1 and *@why instead of dying */
int ctx_create_or_why(uint32_t flags, char *why, size_t len);
void ctx_program(int fd);
int ctx_load(int fd, uint32_t pid);
const char *load_strerror(int err);
/* every set's PMDs and getinfo, into @r */
void ctx_read(int fd, struct reading *r);
void reading_add(struct reading *sum, const struct reading *r);
struct smpl_ctx;
/* @fd's counts printed (@sc: a sampling context's, NULL: counting) */
void final_report(int fd, const struct smpl_ctx *sc, const char *target);

/* pfmon_session.c */
void session_init(void);
void session_start(void);
double since_start(void);
/*
 * Waits until one of @n @pfd is ready (poll's count), a signal came (0)
 * or @timeout_ms passed (0; -1: no limit, and the session timeout counts
 * for pfmon --attach-task and system-wide sessions as their callers say).
 */
int session_wait(struct pollfd *pfd, int n, int timeout_ms);
/* the signal that asked the session to end, 0 while none did */
int session_stop_signal(void);
/* -t: ms left, -1 without one; 0 once it passed */
int session_ms_left(void);
bool session_over(void);
pid_t spawn(char **argv, int fd, bool traced);
/* the status of the command or a task @pid that ended, as a shell's */
int cmd_status(pid_t pid, int st);
/* the command's status once it ended (WNOHANG), or -1 */
int cmd_reap(pid_t pid);
int wait_cmd(pid_t pid);
/* the process of thread @tid, or @tid when it cannot be told */
pid_t tgid_of(pid_t tid);

/* pfmon_count.c */
int count_cmd(char **argv, int fd);
int count_syswide(const char *cpulist, char **argv);
int count_attached(pid_t pid, int fd);

/* pfmon_follow.c */
void ftask_traced(pid_t pid, int fd);
int follow_cmd(char **argv, int fd);
int follow_attached(pid_t pid, int fd);

/* pfmon_events.c */
extern char model[64];
extern int counters;
void events_init(void);
void event_parse(const char *spec, unsigned int dfl_plm, int setid,
		 struct event *e);
void list_events(int fd);
const char *events_libpfm_version(void);

/* pfmon_smpl.c */
/* how often a sampling session reads the sampled processes' maps */
#define SMPL_POLL_MS	200

/* a sampling context: its buffer and what was taken from it */
struct smpl_ctx {
	int fd;
	const void *buf;	/* the mapped buffer, NULL once unmapped */
	uint64_t samples;	/* entries taken: periods of the sampling PMD */
	uint64_t taken;		/* of the buffer's entries, since its restart */
	uint64_t fills;		/* full-buffer notifications */
	uint64_t lost;		/* periods the host did not sample */
};

/* the profile of @target begins: --smpl-outfile opened */
void smpl_begin(const char *target);
void smpl_map(struct smpl_ctx *sc, int fd);
/* one message of @sc's: a full buffer drained and restarted; true: END */
bool smpl_msg(struct smpl_ctx *sc);
/*
 * the entries written since the last look taken while sampling goes on,
 * so that a process's map is read while it lives
 */
void smpl_poll(struct smpl_ctx *sc);
/* the last entries taken, the buffer unmapped */
void smpl_unmap(struct smpl_ctx *sc);
/*
 * ctx_read(), and with @sc the sampling PMD's count: its periods and the
 * partial one (after smpl_unmap(): every entry taken)
 */
void smpl_read(int fd, const struct smpl_ctx *sc, struct reading *r);
/* where a command is found, for the profile's title */
const char *cmd_path(const char *cmd);
/* --smpl-outfile closed, the profile of every context printed */
void smpl_end(void);
int sample_cmd(char **argv, int fd);
int report_file(const char *path, enum smpl_view view,
		enum profile_fmt fmt);

/* pfmon_syms.c */
/* @tgid's memory map read now and whenever syms_snapshot() runs */
void syms_watch(pid_t tgid);
void syms_snapshot(void);
void syms_hit(pid_t tgid, pid_t tid, uint32_t cpu, uint64_t tstamp,
	      uint64_t ip);
/*
 * --report: a process's map as a --smpl-outfile kept it, and the
 * build-ids of its files then ("buildid HEX PATH" lines, or NULL)
 */
void syms_set_maps(pid_t tgid, const char *text, const char *exe,
		   const char *build_ids);
/*
 * --smpl-outfile: every process's map, a "space TGID EXE" line first,
 * then a "buildid HEX PATH" line for each of its files that has one
 */
void syms_write_maps(FILE *f);
/* the profile of the samples of @event, as @fmt asks */
void syms_report(FILE *o, enum smpl_view view, enum profile_fmt fmt,
		 const char *event);

/* pfmon_output.c */
void print_counts(const char *target, const struct reading *r,
		  const struct reading *prev);
void print_interval_header(void);
void warn_host_limits(const char *target, const struct reading *r);

#endif
