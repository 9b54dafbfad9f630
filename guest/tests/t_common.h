/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the guest test programs (guest/tests/t_*.c). They run inside
 * a guest with perfmon2.ko loaded, linked against libperfmon2. Each
 * program prints one line per check and ends with "N passed, N failed"
 * (tests/common/result.h); its exit status is 1 on a failure.
 */
#ifndef T_COMMON_H
#define T_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>
#include <perfmon/pv_perfmon.h>

#include "tests/common/child.h"
#include "tests/common/result.h"
#include "tests/common/testdefs.h"

#define T_SYSFS		"/sys/kernel/perfmon"

/* results: t_check, t_pass, t_fail, t_skip, t_note, t_done */
/* a call expected to fail with @want: PASS or FAIL saying what came */
bool t_expect_err(const char *name, int ret, int want);
/* a call expected to succeed */
bool t_expect_ok(const char *name, int ret);

/* time */
uint64_t t_now_ns(void);
uint64_t t_thread_cpu_ns(void);
void t_busy_ns(uint64_t ns);
void t_sleep_ns(uint64_t ns);
/*
 * @n VM exits made by this thread: CPUID always exits to the hypervisor
 * (KVM intercepts it on Intel and AMD). A count in no clock: the checks
 * that the host counts this thread's events where it runs use it.
 */
void t_exits(unsigned int n);

/* CPUs */
int t_online_cpus(int *cpus, int max);
int t_pin(int cpu);

/*
 * Interrupts taken so far, all CPUs, by the lines of /proc/interrupts
 * naming @action (e.g. "perfmon2"); *lines gets how many named it
 */
unsigned long long t_irqs(const char *action, int *lines);

/* sysfs: the file's first line; -1 (errno) if it cannot be read */
int t_sysfs_read(const char *rel, char *buf, size_t size);
/* a number from sysfs, @dflt if it cannot be read */
long long t_sysfs_num(const char *rel, long long dflt);
/* write a string to a sysfs file: 0 or -1 (errno) */
int t_sysfs_write(const char *rel, const char *val);

/* a register line of pmu_desc/mappings */
struct t_reg {
	bool pmc;
	unsigned int num;
	uint64_t dfl;
	uint64_t mask;		/* as perfmon2 prints it: reserved bits 0 */
	char name[32];
};
/* the mappings, in order; the number of registers, -1 on error */
int t_mappings(struct t_reg *regs, int max);
bool t_pmu_model(char *buf, size_t size);

/* contexts */
int t_create(uint32_t ctx_flags);
int t_load(int fd, uint32_t pid_or_cpu, uint16_t set);
/* write PMDs @nums (value 0) in @set */
int t_write_pmds(int fd, const uint16_t *nums, int n, uint16_t set);
/* *@pd: PMD @num of set 0 from -@period, reset to -@period, @flags */
void t_pmd_period(pfarg_pmd_t *pd, uint16_t num, uint64_t period,
		  uint32_t flags);
/* a context with the default sampling format, a buffer of @buf_size */
int t_smpl_create(uint32_t ctx_flags, uint64_t buf_size);
/* poll(@fd, POLLIN) for @timeout_ms: poll's return, *@revents */
int t_poll_in(int fd, int timeout_ms, short *revents);
/* a message of @fd within @ms: true if one was read into *@m */
bool t_wait_msg(int fd, pfarg_msg_t *m, int ms);
/* read PMD @num of @set, 0 or -1 */
int t_read_pmd(int fd, uint16_t num, uint16_t set, uint64_t *val);
/* one pfm_read_pmds of set 0's VCPU_RUN_NS and VM_EXITS: 0 or -1 */
int t_read_run_exits(int fd, uint64_t *run_ns, uint64_t *exits);
pid_t t_gettid(void);

/*
 * A child stopped for this process, its tracer (PTRACE_TRACEME, SIGSTOP),
 * as perfmon2 programs attach to one; once continued it busies itself for
 * @busy_ns, makes @exits VM exits and exits 0. Its pid once it has
 * stopped (PASS @name), else -1 (FAIL @name; a child that did not stop is
 * killed).
 */
pid_t t_stopped_child(uint64_t busy_ns, unsigned int exits, const char *name);
/* child @pid killed (SIGKILL) and reaped */
void t_kill_child(pid_t pid);
/* the next message read from @fd is PFM_MSG_END: PASS or FAIL @name */
bool t_check_end_msg(int fd, const char *name);

/*
 * The host's word: a serial port it writes lines to (a QEMU pipe chardev
 * on an isa-serial), opened raw. t_control_wait: PASS @name if the next
 * line is @want within @timeout_s.
 */
int t_control_open(const char *path);
bool t_control_wait(int ctl, const char *want, int timeout_s,
		    const char *name);
/*
 * The control port of @prog, a program run as "@prog CONTROL": opened
 * (check "@prog: open the control port"), or -1; exits 2 on another
 * command line.
 */
int t_control_arg(int argc, char **argv, const char *prog);

/*
 * Debian's kernel.unprivileged_userns_clone, for tests whose unprivileged
 * users make user namespaces: t_userns_allow() sets it to 1 and returns
 * what to give t_userns_restore() (0: nothing to restore).
 */
char t_userns_allow(void);
void t_userns_restore(char saved);

/* is the caller root (CAP_SYS_ADMIN for system-wide)? */
bool t_root(void);

#endif /* T_COMMON_H */
