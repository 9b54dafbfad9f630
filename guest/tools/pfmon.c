// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon: count events of a command (or of CPUs) with perfmon2 in a
 * kvm-perfmon guest, through libperfmon2's twelve calls. Its options and
 * manual are pfmon_cli.c's table (`pfmon --help`, pfmon(1)).
 *
 * Events (pfmon_events.c): the hypervisor's virtual PMDs (vcpu_run_ns,
 * vm_exits, ...) and every event of the personality's CPU model by its
 * libpfm4 name. Each -e is an event set; with more than one set the sets
 * are time-switched (--switch-timeout, default 10 ms) and each count is
 * printed scaled to the whole run (pfmon_output.c). --smpl-period N
 * samples the command every N occurrences of the first event of set 0
 * (default sampling format, the buffer mmap()ed) and prints the samples
 * by function of the command's ELF symbols.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>
#include <perfmon/pv_perfmon.h>

#include "pfmon.h"

#define PFMON_VERSION	"2.0"
#define MAX_CPUS	64
/*
 * --smpl-period's buffer: thousands of one-PMD entries between two
 * notifications, and a sixteenth of the host's default per-buffer limit
 */
#define DFL_SMPL_BUF_SIZE	(256 * 1024)

struct set sets[MAX_SETS];
int nsets;
FILE *out;
enum out_fmt out_fmt = OUT_TEXT;
const char *csv_sep;
static size_t smpl_buf_size;	/* 0: counting only */
static uint64_t smpl_period;
static uint64_t smpl_count;	/* samples taken */
static bool verbose;		/* -v: the registers each event takes */

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pfmon: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(PFMON_EXIT_FAIL);
}

void *grow(void *arr, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t want;

	if (n < *cap)
		return arr;
	want = *cap ? 2 * *cap : first;
	arr = reallocarray(arr, want, size);
	if (!arr)
		die("out of memory");
	*cap = want;
	return arr;
}

int sysfs_read(const char *rel, char *buf, size_t size)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), SYSFS "/%s", rel);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, size, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* a whole number in @arg for option @opt, or dies */
static uint64_t parse_u64(const char *opt, const char *arg, uint64_t min,
			  uint64_t max)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max)
		die("%s: want a whole number from %llu to %llu, not '%s'", opt,
		    (unsigned long long)min, (unsigned long long)max, arg);
	return v;
}

static void add_events(struct set *s, int setid, char *list,
		       unsigned int plm)
{
	char *tok, *save = NULL;

	if (!*list || list[strlen(list) - 1] == ',' || strstr(list, ",,"))
		die("set %d: empty event name in '%s'", setid, list);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct event *e;

		if (s->n == MAX_EVS)
			die("set %d: more than %d events", setid, MAX_EVS);
		e = &s->ev[s->n];
		event_parse(tok, plm, setid, e);
		for (int i = 0; i < s->n; i++)
			if (!strcmp(s->ev[i].name, e->name))
				die("set %d: event %s given twice", setid, tok);
		if (!e->vpmd)
			e->pmc = s->nhw++;
		s->n++;
	}
}

static void check_counters(void)
{
	for (int i = 0; i < nsets; i++) {
		if (sets[i].nhw <= counters)
			continue;
		if (nsets == 1)
			die("%d hardware events for %d counters: split them into event sets (one -e per set; the sets are time-switched)",
			    sets[i].nhw, counters);
		die("set %d: %d hardware events for %d counters: move some into another -e",
		    i, sets[i].nhw, counters);
	}
}

static const char *event_name(int set, int pmd, bool pmc)
{
	for (int i = 0; i < sets[set].n; i++) {
		const struct event *e = &sets[set].ev[i];

		if (pmc ? e->pmc == pmd : (e->vpmd ? e->vpmd == pmd : e->pmc == pmd))
			return e->name;
	}
	return "?";
}

/*
 * A call that opens the host's counters (a load, a start on another set)
 * fails with EOPNOTSUPP for one cause only: the host's PMU is KVM's
 * mediated vPMU's, as PVPFM_REG_RETFL_HOST_MEDIATED says of a register.
 */
#define HOST_MEDIATED_WHY \
	"the host's PMU belongs to a VM with KVM's mediated vPMU while that VM runs; the host's operator chooses between the two (kvm_intel or kvm_amd enable_mediated_pmu)"

static const char *load_strerror(int err)
{
	return err == EOPNOTSUPP ? HOST_MEDIATED_WHY : strerror(err);
}

static void explain(const char *what, int set, int reg, uint32_t flags,
		    bool pmc, int err)
{
	const char *ev = event_name(set, reg, pmc);

	if ((flags & PFM_REG_RETFL_NOTAVAIL) &&
	    (flags & PVPFM_REG_RETFL_HOST_MEDIATED))
		die("event %s (set %d, %s%d): the host cannot back it now (PFM_REG_RETFL_NOTAVAIL, PVPFM_REG_RETFL_HOST_MEDIATED): %s",
		    ev, set, pmc ? "PMC" : "PMD", reg, HOST_MEDIATED_WHY);
	if (flags & PFM_REG_RETFL_NOTAVAIL)
		die("event %s (set %d, %s%d): the host cannot back it (PFM_REG_RETFL_NOTAVAIL): no hardware PMU or event map entry for it on the host",
		    ev, set, pmc ? "PMC" : "PMD", reg);
	if (flags & PFM_REG_RETFL_EINVAL)
		die("event %s (set %d, %s%d): refused as invalid by the host",
		    ev, set, pmc ? "PMC" : "PMD", reg);
	die("%s: %s", what, strerror(err));
}

/*
 * The host takes set timeouts that are multiples of its timer's
 * resolution and refuses others (as perfmon2 did its clock's): round
 * up, and say so. A host that does not say rounds them itself.
 */
static uint64_t switch_timeout_round(uint64_t ns)
{
	uint64_t res, r;
	bool ok;

	res = sysfs_u64("device/set_timeout_res_ns", &ok);
	if (!ok || !res)
		return ns;
	r = (ns + res - 1) / res * res;
	if (r != ns)
		fprintf(stderr, "pfmon: --switch-timeout %llu ns rounded up to %llu ns, a multiple of the host's %llu ns\n",
			(unsigned long long)ns, (unsigned long long)r,
			(unsigned long long)res);
	return r;
}

/* program every set on @fd; 0 or dies */
static void program(int fd, uint64_t timeout)
{
	pfarg_setdesc_t sd[MAX_SETS];
	pfarg_pmc_t pc[MAX_EVS];
	pfarg_pmd_t pd[MAX_EVS];

	memset(sd, 0, sizeof(sd));
	for (int i = 0; i < nsets; i++) {
		sd[i].set_id = i;
		if (nsets > 1) {
			sd[i].set_flags = PFM_SETFL_TIME_SWITCH;
			sd[i].set_timeout = timeout;
		}
	}
	if (nsets > 1 && pfm_create_evtsets(fd, sd, nsets))
		die("creating %d event sets: %s%s", nsets, strerror(errno),
		    errno == EINVAL || errno == ENOSPC ?
		    " (over the host's max_sets?)" : "");
	for (int s = 0; s < nsets; s++) {
		int npc = 0, npd = 0, pc_ev[MAX_EVS];

		memset(pc, 0, sizeof(pc));
		memset(pd, 0, sizeof(pd));
		for (int i = 0; i < sets[s].n; i++) {
			const struct event *e = &sets[s].ev[i];

			if (!e->vpmd) {
				pc[npc].reg_num = e->pmc;
				pc[npc].reg_set = s;
				pc[npc].reg_value = e->pmc_value;
				pc_ev[npc++] = i;
			}
			pd[npd].reg_num = e->vpmd ? e->vpmd : e->pmc;
			pd[npd].reg_set = s;
			if (smpl_period && s == 0 && i == 0) {
				/*
				 * the sampling PMD: overflows every period,
				 * notifies when the buffer is full (pfmon
				 * drains it and restarts; without the flag
				 * the buffer would saturate)
				 */
				pd[npd].reg_flags = PFM_REGFL_OVFL_NOTIFY;
				pd[npd].reg_value = -smpl_period;
				pd[npd].reg_short_reset = -smpl_period;
				pd[npd].reg_long_reset = -smpl_period;
			}
			npd++;
		}
		for (int i = 0; verbose && i < sets[s].n; i++) {
			const struct event *e = &sets[s].ev[i];

			if (e->vpmd)
				fprintf(stderr, "pfmon: set %d: %s: PMD%d (virtual)\n",
					s, e->name, e->vpmd);
			else
				fprintf(stderr, "pfmon: set %d: %s: PMC%d=%#llx PMD%d\n",
					s, e->name, e->pmc,
					(unsigned long long)e->pmc_value, e->pmc);
		}
		if (npc && pfm_write_pmcs(fd, pc, npc)) {
			int err = errno;

			for (int i = 0; i < npc; i++)
				if (PFM_REG_HAS_ERROR(pc[i].reg_flags))
					explain("writing PMCs", s, pc[i].reg_num,
						pc[i].reg_flags, true, err);
			die("writing PMCs of set %d: %s", s, strerror(err));
		}
		for (int i = 0; i < npc; i++)
			sets[s].ev[pc_ev[i]].emulated =
				pc[i].reg_flags & PVPFM_REG_RETFL_EMULATED;
		if (npd && pfm_write_pmds(fd, pd, npd)) {
			int err = errno;

			for (int i = 0; i < npd; i++)
				if (PFM_REG_HAS_ERROR(pd[i].reg_flags))
					explain("writing PMDs", s, pd[i].reg_num,
						pd[i].reg_flags, false, err);
			die("writing PMDs of set %d: %s", s, strerror(err));
		}
	}
}

static int create(uint32_t flags)
{
	pfm_dfl_smpl_arg_t arg;
	pfarg_ctx_t ctx;
	char buf[32];
	int fd;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = flags;
	memset(&arg, 0, sizeof(arg));
	arg.buf_size = smpl_buf_size;
	if (smpl_buf_size)
		fd = pfm_create_context(&ctx, PFM_DFL_SMPL_NAME, &arg,
					sizeof(arg));
	else
		fd = pfm_create_context(&ctx, NULL, NULL, 0);
	if (fd >= 0) {
		/* the command never gets the context's fd */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		return fd;
	}
	if (smpl_buf_size && errno == ENOMEM)
		die("no room for a %zu-byte sampling buffer (controls/smpl_buffer_mem_max, RLIMIT_MEMLOCK, the host's max_smpl_buf)",
		    smpl_buf_size);
	if (smpl_buf_size && (errno == EINVAL || errno == EOPNOTSUPP))
		die("the host offers no \"default\" sampling format: %s",
		    strerror(errno));
	if (errno == ENOSYS || errno == ENOENT)
		die("no /dev/perfmon2: load perfmon2.ko in a guest with -device pv-perfmon");
	if (errno == EPERM || errno == EACCES) {
		const char *ctl = flags & PFM_FL_SYSTEM_WIDE ? "sys_group" :
				  "task_group";

		if (sysfs_read(flags & PFM_FL_SYSTEM_WIDE ?
			       "controls/sys_group" : "controls/task_group",
			       buf, sizeof(buf)))
			strcpy(buf, "?");
		die("permission denied: %s monitoring needs group %s (" SYSFS "/controls/%s) or CAP_SYS_ADMIN",
		    flags & PFM_FL_SYSTEM_WIDE ? "system-wide" : "per-thread",
		    buf, ctl);
	}
	die("creating a context: %s", strerror(errno));
}

static int load(int fd, uint32_t pid)
{
	pfarg_load_t ld;

	memset(&ld, 0, sizeof(ld));
	ld.load_pid = pid;
	return pfm_load_context(fd, &ld);
}

static struct timespec t_start;
static uint64_t follow_timeout;	/* --switch-timeout, for followed tasks */
static sigset_t orig_mask;	/* pfmon's signal mask at start */

static double since_start(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t_start.tv_sec) +
	       (now.tv_nsec - t_start.tv_nsec) / 1e9;
}

/* every set's PMDs and getinfo, into @r */
static void read_counts(int fd, struct reading *r)
{
	pfarg_setinfo_t si[MAX_SETS];
	pfarg_pmd_t pd[MAX_EVS];

	memset(r, 0, sizeof(*r));
	r->t = since_start();
	memset(si, 0, sizeof(si));
	for (int s = 0; s < nsets; s++)
		si[s].set_id = s;
	if (pfm_getinfo_evtsets(fd, si, nsets))
		die("getinfo: %s", strerror(errno));
	for (int s = 0; s < nsets; s++) {
		struct set_reading *c = &r->set[s];
		int n = sets[s].n;

		c->runs = si[s].set_runs;
		c->act_ns = si[s].set_act_duration;
		c->host_enabled_ns =
			si[s].set_reserved3[PVPFM_SETINFO_HOST_ENABLED];
		c->host_running_ns =
			si[s].set_reserved3[PVPFM_SETINFO_HOST_RUNNING];
		r->total_act_ns += c->act_ns;
		memset(pd, 0, sizeof(pd));
		for (int i = 0; i < n; i++) {
			const struct event *e = &sets[s].ev[i];

			pd[i].reg_num = e->vpmd ? e->vpmd : e->pmc;
			pd[i].reg_set = s;
		}
		if (n && pfm_read_pmds(fd, pd, n))
			die("reading set %d: %s", s, strerror(errno));
		for (int i = 0; i < n; i++)
			c->raw[i] = pd[i].reg_value;
		/* sampling PMD: periods done plus the last partial one */
		if (smpl_period && s == 0)
			c->raw[0] = smpl_count * smpl_period +
				    (c->raw[0] + smpl_period);
	}
}

static void final_report(int fd, const char *target)
{
	struct reading r;

	read_counts(fd, &r);
	print_counts(target, &r, NULL);
	warn_starved(target, &r);
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int parse_cpus(const char *l, int *cpus)
{
	int n = 0;
	char *copy = strdup(l), *tok, *save = NULL;

	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int a, b;
		char c;

		if (sscanf(tok, "%d-%d%c", &a, &b, &c) == 2) {
		} else if (sscanf(tok, "%d%c", &a, &c) == 1) {
			b = a;
		} else {
			die("--cpu-list: bad element '%s' in '%s' (want N or N-M, comma-separated)",
			    tok, l);
		}
		if (a < 0 || b < a || b >= CPU_SETSIZE)
			die("--cpu-list: bad range '%s'", tok);
		for (int cpu = a; cpu <= b; cpu++) {
			if (n == MAX_CPUS)
				die("--cpu-list: more than %d CPUs", MAX_CPUS);
			cpus[n++] = cpu;
		}
	}
	free(copy);
	return n;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* the command's status as a shell gives it */
static int status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	fprintf(stderr, "pfmon: command killed by signal %d\n", WTERMSIG(st));
	return 128 + WTERMSIG(st);
}

static int wait_cmd(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	return status_of(st);
}

static void ftask_traced(pid_t pid, int fd, bool ours);

/*
 * fork the command; with @fd, the child loads the context on itself and
 * starts it, then execs (self-monitoring: the context follows the thread
 * through exec). @traced (--follow-*): the child stops before its exec
 * for pfmon, its tracer, to set the tracing options. Its exec failure is
 * pfmon's 126 or 127, like a shell's.
 */
static pid_t spawn(char **argv, int fd, bool traced)
{
	int pfd[2], err, st;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		/* the command gets pfmon's signal mask of before -I's SIGCHLD */
		sigprocmask(SIG_SETMASK, &orig_mask, NULL);
		if (fd >= 0 && (load(fd, gettid_()) || pfm_start(fd, NULL))) {
			fprintf(stderr, "pfmon: loading and starting the context on the command: %s\n",
				load_strerror(errno));
			_exit(PFMON_EXIT_FAIL);
		}
		if (traced && (ptrace(PTRACE_TRACEME, 0, 0, 0) || raise(SIGSTOP))) {
			fprintf(stderr, "pfmon: ptrace: %s\n", strerror(errno));
			_exit(PFMON_EXIT_FAIL);
		}
		execvp(argv[0], argv);
		err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(PFMON_EXIT_FAIL);
		_exit(PFMON_EXIT_FAIL);
	}
	close(pfd[1]);
	if (traced) {
		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
			close(pfd[0]);
			exit(WIFEXITED(st) ? WEXITSTATUS(st) : PFMON_EXIT_FAIL);
		}
		ftask_traced(pid, fd, true);
	}
	/* exec done (the pipe closed) or failed (its errno) */
	if (read(pfd[0], &err, sizeof(err)) == sizeof(err)) {
		close(pfd[0]);
		waitpid(pid, NULL, 0);
		fprintf(stderr, "pfmon: cannot run %s: %s\n", argv[0],
			strerror(err));
		exit(err == ENOENT ? PFMON_EXIT_NOTFOUND : PFMON_EXIT_NOEXEC);
	}
	close(pfd[0]);
	return pid;
}

/*
 * Count the command: with -I, print the deltas every @interval_ms while
 * it runs, and the last partial interval when it ends (as perf stat -I,
 * no totals); else the totals at its end.
 */
static int count_cmd(char **argv, int fd, uint64_t interval_ms)
{
	struct reading prev, cur;
	struct timespec next;
	sigset_t chld;
	pid_t pid;
	int st;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (interval_ms)
		sigprocmask(SIG_BLOCK, &chld, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	pid = spawn(argv, fd, false);
	if (!interval_ms) {
		st = wait_cmd(pid);
		final_report(fd, NULL);
		return st;
	}
	memset(&prev, 0, sizeof(prev));
	print_interval_header();
	next = t_start;
	for (;;) {
		pid_t w;

		next.tv_nsec += (long)(interval_ms % 1000) * 1000000L;
		next.tv_sec += (time_t)(interval_ms / 1000);
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		/* sleep to the next tick, or until the command ends */
		for (;;) {
			struct timespec now, left;
			int64_t ns;

			w = waitpid(pid, &st, WNOHANG);
			if (w == pid)
				break;
			if (w < 0 && errno != EINTR)
				die("waitpid: %s", strerror(errno));
			clock_gettime(CLOCK_MONOTONIC, &now);
			ns = (int64_t)(next.tv_sec - now.tv_sec) * 1000000000LL +
			     (next.tv_nsec - now.tv_nsec);
			if (ns <= 0)
				break;
			left.tv_sec = (time_t)(ns / 1000000000LL);
			left.tv_nsec = (long)(ns % 1000000000LL);
			/* SIGCHLD is blocked: its arrival ends the wait */
			sigtimedwait(&chld, NULL, &left);
		}
		read_counts(fd, &cur);
		print_counts(NULL, &cur, &prev);
		prev = cur;
		if (w == pid)
			break;
	}
	warn_starved(NULL, &cur);
	return status_of(st);
}
/*
 * --follow-*: pfmon traces the command (ptrace) and gives every task it
 * creates, of the kinds asked for, a context of its own: loaded by
 * pfmon on the new task while it is stopped at its start (perfmon2's rule
 * for attaching: pfmon is its tracer), then started. Each task's counts
 * are read at its exit; printed per task, or summed (--aggregate-results).
 * A context follows its task through exec in any case.
 */
#define FOLLOW_FORK	0x1
#define FOLLOW_VFORK	0x2
#define FOLLOW_PTHREAD	0x4
#define FOLLOW_EXEC	0x8
#define FOLLOW_ALL	0xf
#define MAX_TASKS	256

struct ftask {
	pid_t tid;
	int fd;			/* -1: no context yet (or none could be had) */
	bool exited;
	bool counted;		/* r holds its counts, read at its exit */
	struct reading r;
};

static unsigned int follow;
static bool aggregate;
static struct ftask *ftasks;
static int nftasks;

static struct ftask *ftask_find(pid_t tid)
{
	for (int i = 0; i < nftasks; i++)
		if (ftasks[i].tid == tid && !ftasks[i].exited)
			return &ftasks[i];
	return NULL;
}

static struct ftask *ftask_add(pid_t tid, int fd)
{
	struct ftask *t;

	if (nftasks == MAX_TASKS)
		die("--follow: more than %d tasks", MAX_TASKS);
	if (!ftasks) {
		ftasks = calloc(MAX_TASKS, sizeof(*ftasks));
		if (!ftasks)
			die("out of memory");
	}
	t = &ftasks[nftasks++];
	t->tid = tid;
	t->fd = fd;
	return t;
}

/* a new task stopped at its start: its own context, loaded and started */
static void ftask_attach(struct ftask *t)
{
	int fd = create(0);

	program(fd, follow_timeout);
	if (load(fd, t->tid) || pfm_start(fd, NULL)) {
		fprintf(stderr, "pfmon: task %d: not monitored: %s\n", t->tid,
			load_strerror(errno));
		close(fd);
		return;
	}
	t->fd = fd;
}

/* @ours: pfmon started the task, which dies with pfmon */
static unsigned long ptrace_opts(bool ours)
{
	/* exec always: else a traced exec stops with a plain SIGTRAP */
	unsigned long o = PTRACE_O_TRACEEXEC | (ours ? PTRACE_O_EXITKILL : 0);

	if (follow & FOLLOW_FORK)
		o |= PTRACE_O_TRACEFORK;
	if (follow & FOLLOW_VFORK)
		o |= PTRACE_O_TRACEVFORK;
	if (follow & FOLLOW_PTHREAD)
		o |= PTRACE_O_TRACECLONE;
	return o;
}

/* trace until every followed task is gone; @main's status */
static int follow_loop(pid_t main_tid)
{
	int live = 1, rc = 0;

	while (live > 0) {
		struct ftask *t;
		int st, sig, ev;
		pid_t w = waitpid(-1, &st, __WALL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				break;
			die("waitpid: %s", strerror(errno));
		}
		t = ftask_find(w);
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (w == main_tid)
				rc = status_of(st);
			if (t) {
				if (t->fd >= 0) {
					read_counts(t->fd, &t->r);
					close(t->fd);
					t->fd = -1;
					t->counted = true;
				}
				t->exited = true;
				live--;
			}
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		ev = st >> 16;
		if (sig == SIGTRAP && ev) {
			unsigned long nt;

			if ((ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK ||
			     ev == PTRACE_EVENT_CLONE) &&
			    !ptrace(PTRACE_GETEVENTMSG, w, 0, &nt) &&
			    !ftask_find((pid_t)nt)) {
				ftask_add((pid_t)nt, -1);
				live++;
			}
			ptrace(PTRACE_CONT, w, 0, 0);
			continue;
		}
		if (!t) {
			/* a new task's first stop can come before its creator's event */
			t = ftask_add(w, -1);
			live++;
		}
		if (t->fd < 0 && sig == SIGSTOP && w != main_tid) {
			ftask_attach(t);
			ptrace(PTRACE_CONT, w, 0, 0);
			continue;
		}
		/* any other signal is the task's own: deliver it */
		ptrace(PTRACE_CONT, w, 0, sig);
	}
	return rc;
}

static void follow_report(void)
{
	struct reading sum;
	char title[32];
	int n = 0;

	memset(&sum, 0, sizeof(sum));
	for (int i = 0; i < nftasks; i++) {
		const struct ftask *t = &ftasks[i];

		if (!t->counted)
			continue;
		n++;
		if (aggregate) {
			sum.total_act_ns += t->r.total_act_ns;
			for (int s = 0; s < nsets; s++) {
				struct set_reading *a = &sum.set[s];
				const struct set_reading *b = &t->r.set[s];

				a->runs += b->runs;
				a->act_ns += b->act_ns;
				a->host_enabled_ns += b->host_enabled_ns;
				a->host_running_ns += b->host_running_ns;
				for (int e = 0; e < sets[s].n; e++)
					a->raw[e] += b->raw[e];
			}
			continue;
		}
		snprintf(title, sizeof(title), "task%d", t->tid);
		print_counts(title, &t->r, NULL);
		warn_starved(title, &t->r);
	}
	if (aggregate) {
		snprintf(title, sizeof(title), "tasks%d", n);
		print_counts(title, &sum, NULL);
		warn_starved(title, &sum);
	}
}

/*
 * The first followed task, stopped, its context @fd loaded: trace what it
 * creates, let it run. @ours: pfmon started it (it dies with pfmon).
 */
static void ftask_traced(pid_t pid, int fd, bool ours)
{
	if (ptrace(PTRACE_SETOPTIONS, pid, 0, ptrace_opts(ours)))
		die("ptrace: %s", strerror(errno));
	ftask_add(pid, fd);
	ptrace(PTRACE_CONT, pid, 0, 0);
}

/* the command and what it creates, each task counted apart */
static int follow_cmd(char **argv, int fd)
{
	int rc = follow_loop(spawn(argv, fd, true));

	follow_report();
	return rc;
}

/* --- the sampling profile (pfmon_syms.c resolves the IPs) --- */

static enum smpl_view smpl_view = VIEW_FUNCTION;

/*
 * --smpl-outfile: a text file, for pfmon --report to resolve later (the
 * files of the map must still be there; kernel IPs take the /proc/kallsyms
 * of where --report runs, so the same guest kernel):
 *
 *   pfmon-samples 1
 *   exe PATH / event NAME / period N
 *   entry tid=T pid=P ip=0x.. tstamp=N cpu=C set=S ovfl_pmd=D last_reset=0x..
 *   ...                        (every entry of the sampling buffer, raw)
 *   maps                       (then the command's last /proc/PID/maps)
 */
#define SMPL_FILE_MAGIC	"pfmon-samples 1"

static FILE *smpl_file;
static const char *smpl_file_path;

static void hit(const pfm_dfl_smpl_entry_t *ent)
{
	smpl_count++;
	syms_hit(ent->ip);
	if (smpl_file)
		fprintf(smpl_file, "entry tid=%u pid=%u ip=%#llx tstamp=%llu cpu=%u set=%u ovfl_pmd=%u last_reset=%#llx\n",
			ent->pid, ent->tgid, (unsigned long long)ent->ip,
			(unsigned long long)ent->tstamp, ent->cpu, ent->set,
			ent->ovfl_pmd, (unsigned long long)ent->last_reset_val);
}

static void smpl_file_open(const char *exe)
{
	smpl_file = fopen(smpl_file_path, "we");
	if (!smpl_file)
		die("--smpl-outfile %s: %s", smpl_file_path, strerror(errno));
	fprintf(smpl_file, SMPL_FILE_MAGIC "\nexe %s\nevent %s\nperiod %llu\n",
		exe, sets[0].ev[0].name, (unsigned long long)smpl_period);
}

static void smpl_file_close(void)
{
	if (!smpl_file)
		return;
	fprintf(smpl_file, "maps\n%s", syms_maps());
	if (fclose(smpl_file))
		die("--smpl-outfile %s: %s", smpl_file_path, strerror(errno));
	smpl_file = NULL;
}

/* pfmon --report FILE: the profile of a --smpl-outfile */
static int report_file(const char *path, enum smpl_view view)
{
	static char exe[4096], event[128];
	char line[512], *maps_text = NULL;
	unsigned long long period = 0, ip;
	size_t len = 0;
	FILE *f = fopen(path, "re");
	int lineno = 1;

	if (!f)
		die("--report %s: %s", path, strerror(errno));
	if (!fgets(line, sizeof(line), f) || strcmp(line, SMPL_FILE_MAGIC "\n"))
		die("--report %s: not a pfmon --smpl-outfile (no \"" SMPL_FILE_MAGIC "\" line first)",
		    path);
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strncmp(line, "entry ", 6)) {
			char *p = strstr(line, " ip=");

			if (!p || sscanf(p, " ip=%llx", &ip) != 1)
				die("--report %s:%d: an entry without ip=", path, lineno);
			smpl_count++;
			syms_hit(ip);
		} else if (sscanf(line, "exe %4095[^\n]", exe) == 1 ||
			   sscanf(line, "event %127s", event) == 1 ||
			   sscanf(line, "period %llu", &period) == 1) {
			continue;
		} else if (!strcmp(line, "maps\n")) {
			/* the rest of the file */
			maps_text = malloc(1 << 20);
			if (!maps_text)
				die("out of memory");
			len = fread(maps_text, 1, (1 << 20) - 1, f);
			maps_text[len] = '\0';
			break;
		} else {
			die("--report %s:%d: unknown line '%.40s'", path, lineno, line);
		}
	}
	fclose(f);
	if (!maps_text || !exe[0] || !event[0] || !period)
		die("--report %s: incomplete (no exe, event, period or maps: was pfmon stopped while writing it?)",
		    path);
	syms_set_maps(maps_text, exe);
	free(maps_text);
	fprintf(out, "sampling profile of %s (from %s): %llu samples, one every %llu %s\n",
		exe, path, (unsigned long long)smpl_count, period, event);
	if (smpl_count)
		syms_report(out, view);
	fflush(out);
	return 0;
}

/* every entry now in the buffer */
static void drain(const void *buf)
{
	const pfm_dfl_smpl_hdr_t *hdr = buf;
	const unsigned char *p = (const unsigned char *)buf + sizeof(*hdr);
	const unsigned char *end = (const unsigned char *)buf + hdr->hdr_buf_size;

	for (uint64_t i = 0; i < hdr->hdr_count; i++) {
		const pfm_dfl_smpl_entry_t *ent = (const void *)p;

		if (p + sizeof(*ent) > end)
			break;
		hit(ent);
		p += sizeof(*ent);	/* no PMDs recorded with the entry */
	}
}

static void profile_report(const char *exe, uint64_t overflows)
{
	fprintf(out, "\nsampling profile of %s: %llu samples, one every %llu %s",
		exe, (unsigned long long)smpl_count,
		(unsigned long long)smpl_period, sets[0].ev[0].name);
	if (overflows)
		fprintf(out, " (buffer filled %llu times)",
			(unsigned long long)overflows);
	fprintf(out, "\n");
	if (smpl_count)
		syms_report(out, smpl_view);
	fflush(out);
}

static char *which(const char *cmd)
{
	static char path[4096];
	const char *env = getenv("PATH");
	char *copy, *dir, *save = NULL;

	if (strchr(cmd, '/'))
		return realpath(cmd, path) ? path : (char *)cmd;
	copy = strdup(env ? env : "/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof(path), "%s/%s", dir, cmd);
		if (!access(path, X_OK)) {
			char *r = realpath(path, NULL);

			if (r) {
				snprintf(path, sizeof(path), "%s", r);
				free(r);
			}
			free(copy);
			return path;
		}
	}
	free(copy);
	return (char *)cmd;
}

/* run the command, sampling it; its status */
static int sample_cmd(char **argv, int fd)
{
	const char *exe = which(argv[0]);
	uint64_t overflows = 0;
	bool done = false;
	void *buf;
	pid_t pid;
	int st, rc = 0;

	buf = mmap(NULL, smpl_buf_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (buf == MAP_FAILED)
		die("mapping the sampling buffer: %s", strerror(errno));
	if (smpl_file_path)
		smpl_file_open(exe);
	pid = spawn(argv, fd, false);
	syms_begin(pid, exe);
	while (!done) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		pfarg_msg_t msg;

		if (poll(&pfd, 1, 200) > 0 &&
		    read(fd, &msg, sizeof(msg)) == sizeof(msg)) {
			if (msg.type == PFM_MSG_OVFL) {
				/* buffer full: take it, restart (empties it) */
				drain(buf);
				overflows++;
				if (pfm_restart(fd))
					fprintf(stderr, "pfmon: restart: %s\n",
						strerror(errno));
			}
		}
		/* its libraries may have been mapped since */
		syms_snapshot();
		if (waitpid(pid, &st, WNOHANG) == pid) {
			done = true;
			rc = status_of(st);
		}
	}
	drain(buf);
	smpl_file_close();
	final_report(fd, NULL);
	profile_report(exe, overflows);
	munmap(buf, smpl_buf_size);
	return rc;
}

static void version(void)
{
	char buf[64];

	printf("pfmon %s (kvm-perfmon), libpfm4 %s", PFMON_VERSION,
	       events_libpfm_version());
	if (!sysfs_read("version", buf, sizeof(buf)))
		printf(", perfmon2 interface %s", buf);
	printf("\n");
	exit(0);
}

static void usage_error(void)
{
	fprintf(stderr, "pfmon: see pfmon --help\n");
	exit(PFMON_EXIT_FAIL);
}

/* -x's separator: one character that no field can hold */
static const char *parse_sep(const char *arg)
{
	if (!strcmp(arg, "\\t"))
		return "\t";
	if (strlen(arg) != 1 || (!ispunct((unsigned char)arg[0]) &&
				 arg[0] != '\t') || strchr(":._-=+\"'%", arg[0]))
		die("-x: the separator is one punctuation character other than : . _ - = + \" ' %% (event names hold those), or \\t; not '%s'",
		    arg);
	return arg;
}

int main(int argc, char **argv)
{
	char *set_lists[MAX_SETS] = { NULL };
	uint64_t timeout = 0, interval_ms = 0;
	bool syswide = false, list = false, json = false, view_given = false;
	const char *cpulist = NULL, *outfile = NULL, *report_path = NULL;
	unsigned int plm = 0;
	pid_t attach = 0;
	int opt, rc = 0;

	out = stdout;
	sigprocmask(SIG_SETMASK, NULL, &orig_mask);
	while ((opt = cli_getopt(&pfmon_cli, argc, argv)) != -1) {
		switch (opt) {
		case 'e':
		case OPT_SET:
			if (nsets == MAX_SETS)
				die("at most %d event sets (-e)", MAX_SETS);
			set_lists[nsets++] = optarg;
			break;
		case 'u':
			plm |= PLM_USER;
			break;
		case 'k':
			plm |= PLM_KERNEL;
			break;
		case OPT_SWITCH_TIMEOUT:
			timeout = parse_u64("--switch-timeout", optarg, 1,
					    UINT64_MAX >> 1);
			break;
		case OPT_SMPL_PERIOD:
			smpl_period = parse_u64("--smpl-period", optarg, 1,
						(1ULL << 62) - 1);
			smpl_buf_size = DFL_SMPL_BUF_SIZE;
			break;
		case OPT_SYSTEM_WIDE:
			syswide = true;
			break;
		case OPT_CPU_LIST:
			cpulist = optarg;
			break;
		case OPT_ATTACH_TASK:
			attach = (pid_t)parse_u64("--attach-task", optarg, 1,
						  0x7fffffff);
			break;
		case 'l':
			list = true;
			break;
		case 'o':
			outfile = optarg;
			break;
		case 'x':
			csv_sep = parse_sep(optarg);
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'I':
			interval_ms = parse_u64("-I", optarg, PFMON_MIN_INTERVAL_MS,
						86400000);
			break;
		case 'v':
			verbose = true;
			break;
		case OPT_FOLLOW_FORK:
			follow |= FOLLOW_FORK;
			break;
		case OPT_FOLLOW_VFORK:
			follow |= FOLLOW_VFORK;
			break;
		case OPT_FOLLOW_PTHREAD:
			follow |= FOLLOW_PTHREAD;
			break;
		case OPT_FOLLOW_EXEC:
			follow |= FOLLOW_EXEC;
			break;
		case OPT_FOLLOW_ALL:
			follow |= FOLLOW_ALL;
			break;
		case OPT_AGGREGATE:
			aggregate = true;
			break;
		case OPT_SMPL_PER_FUNCTION:
			smpl_view = VIEW_FUNCTION;
			view_given = true;
			break;
		case OPT_SMPL_PER_ADDRESS:
			smpl_view = VIEW_ADDRESS;
			view_given = true;
			break;
		case OPT_SMPL_PER_LINE:
			smpl_view = VIEW_LINE;
			view_given = true;
			break;
		case OPT_SMPL_OUTFILE:
			smpl_file_path = optarg;
			break;
		case OPT_REPORT:
			report_path = optarg;
			break;
		case 'V':
			version();
			break;
		default:
			usage_error();
		}
	}
	if (!plm)
		plm = PLM_USER | PLM_KERNEL;
	if (csv_sep && json)
		die("-x (CSV) and --json exclude each other");
	out_fmt = json ? OUT_JSON : csv_sep ? OUT_CSV : OUT_TEXT;
	if (cpulist && !syswide)
		die("--cpu-list goes with --system-wide");
	if (attach && syswide)
		die("--attach-task and --system-wide exclude each other");
	if (smpl_period && (syswide || attach || optind >= argc))
		die("--smpl-period samples a command (pfmon --smpl-period N -- cmd)");
	if (follow && (syswide || smpl_period || interval_ms))
		die("--follow-* goes with a command or --attach-task, counting (not with --system-wide, --smpl-period or -I)");
	if (aggregate && !follow)
		die("--aggregate-results sums the tasks of --follow-*");
	if (smpl_file_path && !smpl_period)
		die("--smpl-outfile goes with --smpl-period");
	if (report_path) {
		if (optind < argc || nsets || smpl_period || syswide || attach ||
		    list || follow || interval_ms || csv_sep || json)
			die("--report FILE prints a profile: only -o and --smpl-per-* go with it");
		if (outfile) {
			out = fopen(outfile, "we");
			if (!out)
				die("-o %s: %s", outfile, strerror(errno));
		}
		return report_file(report_path, smpl_view);
	}
	if (view_given && !smpl_period)
		die("--smpl-per-function, --smpl-per-address and --smpl-per-line go with --smpl-period");
	if (smpl_period && out_fmt != OUT_TEXT)
		die("--smpl-period prints a text profile: -x and --json are for counting");
	if (interval_ms && (syswide || attach || smpl_period))
		die("-I prints the counts of a command counted per thread (not with --system-wide, --attach-task or --smpl-period)");
	if (list && optind < argc)
		die("-l lists the events; it runs no command");
	if (!list && !syswide && !attach && optind >= argc)
		die("no command to monitor (pfmon [options] -- cmd args; pfmon --help)");
	if (attach && optind < argc)
		die("--attach-task monitors a task that exists: no command");

	events_init();
	if (list) {
		int fd = create(0);

		list_events(fd);
		close(fd);
		return 0;
	}
	if (!nsets) {
		static char dfl[] = "vcpu_run_ns,vm_exits";

		set_lists[nsets++] = dfl;
	}
	for (int s = 0; s < nsets; s++)
		add_events(&sets[s], s, set_lists[s], plm);
	check_counters();
	if (nsets > 1 && !timeout)
		timeout = PFMON_DFL_SWITCH_TIMEOUT_NS;
	if (nsets > 1)
		timeout = switch_timeout_round(timeout);
	if (nsets == 1 && timeout)
		fprintf(stderr, "pfmon: --switch-timeout with one event set: nothing to switch\n");
	if (outfile) {
		out = fopen(outfile, "we");
		if (!out)
			die("-o %s: %s", outfile, strerror(errno));
	}

	if (syswide) {
		int cpus[MAX_CPUS], fds[MAX_CPUS], n;
		cpu_set_t orig;
		char title[64];

		sched_getaffinity(0, sizeof(orig), &orig);
		if (cpulist) {
			n = parse_cpus(cpulist, cpus);
		} else {
			n = 0;
			for (int c = 0; c < CPU_SETSIZE && n < MAX_CPUS; c++)
				if (CPU_ISSET(c, &orig))
					cpus[n++] = c;
		}
		clock_gettime(CLOCK_MONOTONIC, &t_start);
		for (int i = 0; i < n; i++) {
			fds[i] = create(PFM_FL_SYSTEM_WIDE);
			program(fds[i], timeout);
			if (pin(cpus[i]))
				die("CPU %d: cannot run there: %s", cpus[i], strerror(errno));
			if (load(fds[i], cpus[i]))
				die("CPU %d: loading a system-wide context: %s%s", cpus[i],
				    load_strerror(errno), errno == EBUSY ?
				    " (a per-thread or system-wide context is in use there)" : "");
			if (pfm_start(fds[i], NULL))
				die("CPU %d: start: %s", cpus[i], strerror(errno));
		}
		sched_setaffinity(0, sizeof(orig), &orig);
		if (optind < argc) {
			rc = wait_cmd(spawn(argv + optind, -1, false));
		} else {
			sigset_t ss;
			int sig;

			fprintf(stderr, "pfmon: counting system-wide until SIGINT\n");
			sigemptyset(&ss);
			sigaddset(&ss, SIGINT);
			sigaddset(&ss, SIGTERM);
			sigprocmask(SIG_BLOCK, &ss, NULL);
			sigwait(&ss, &sig);
		}
		for (int i = 0; i < n; i++) {
			pin(cpus[i]);
			pfm_stop(fds[i]);
			snprintf(title, sizeof(title), "cpu%d", cpus[i]);
			final_report(fds[i], title);
		}
		return rc;
	}

	int fd = create(0);

	follow_timeout = timeout;
	program(fd, timeout);
	if (attach) {
		pfarg_msg_t msg;
		char title[32];
		int st;

		if (ptrace(PTRACE_ATTACH, attach, 0, 0))
			die("attaching to %d: %s%s", attach, strerror(errno),
			    errno == EPERM ?
			    " (need the right to ptrace it: same user and ptrace_scope, or CAP_SYS_PTRACE)" : "");
		if (waitpid(attach, &st, __WALL) < 0)
			die("waitpid %d: %s", attach, strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &t_start);
		if (load(fd, attach))
			die("loading the context on %d: %s", attach,
			    load_strerror(errno));
		if (pfm_start(fd, NULL))
			die("start: %s", strerror(errno));
		fprintf(stderr, "pfmon: monitoring task %d until it exits\n", attach);
		if (follow) {
			ftask_traced(attach, fd, false);
			follow_loop(attach);
			follow_report();
			return 0;
		}
		ptrace(PTRACE_DETACH, attach, 0, 0);
		while (read(fd, &msg, sizeof(msg)) == sizeof(msg))
			if (msg.type == PFM_MSG_END)
				break;
		snprintf(title, sizeof(title), "task%d", attach);
		final_report(fd, title);
		return 0;
	}
	if (smpl_period) {
		clock_gettime(CLOCK_MONOTONIC, &t_start);
		rc = sample_cmd(argv + optind, fd);
	} else if (follow) {
		clock_gettime(CLOCK_MONOTONIC, &t_start);
		rc = follow_cmd(argv + optind, fd);
	} else {
		rc = count_cmd(argv + optind, fd, interval_ms);
	}
	close(fd);
	if (out != stdout && fclose(out))
		die("-o %s: %s", outfile, strerror(errno));
	return rc;
}
