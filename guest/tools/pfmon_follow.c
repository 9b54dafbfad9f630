// SPDX-License-Identifier: GPL-2.0
/*
 * --follow-*: pfmon traces the command (ptrace), or the task it attached
 * to, and gives every task it creates, of the kinds asked for, a context
 * of its own: loaded by pfmon on the new task while it is stopped at its
 * start, then started. Each task's counts are read at its exit; printed
 * per task, or summed (--aggregate-results). A context follows its task
 * through exec in any case. With --smpl-period every task's context
 * samples, one profile of them all, which says what each thread took.
 *
 * There is no limit on the tasks of a run but the guest's contexts: a
 * task that gets none runs on, unmonitored, and is said. Nothing pfmon
 * does ends the user's tasks: when the session ends before they do (an
 * attached task's -t or signal, a failure of pfmon's), pfmon reads their
 * contexts and lets every traced task go as it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfmon/perfmon.h>

#include "pfmon.h"

/* a task pfmon traces */
struct ftask {
	pid_t tid;
	int fd;			/* its context; -1: none (yet, or none to have) */
	bool started;		/* its first stop seen: it runs as its own */
	struct smpl_ctx sc;	/* --smpl-period: its buffer */
};

/* a counted task's figures, to print at the end */
struct fresult {
	pid_t tid;
	struct reading r;
};

static struct ftask *live;
static size_t nlive, live_cap;
static struct fresult *results;		/* none with --aggregate-results */
static size_t nresults, results_cap;
static struct reading sum;
static size_t ncounted, nunmonitored;
static struct pollfd *pfds;		/* the sampling contexts', to poll */
static size_t *pfd_task;		/* each one's task in live[] */
static size_t pfds_cap, pfd_task_cap;

static struct ftask *ftask_find(pid_t tid)
{
	for (size_t i = 0; i < nlive; i++)
		if (live[i].tid == tid)
			return &live[i];
	return NULL;
}

static struct ftask *ftask_add(pid_t tid, int fd, bool started)
{
	struct ftask *t;

	live = grow(live, &live_cap, nlive, sizeof(*live), 64);
	t = &live[nlive++];
	*t = (struct ftask){ .tid = tid, .fd = fd, .started = started };
	if (fd >= 0 && opts.smpl_period) {
		smpl_map(&t->sc, fd);
		syms_watch(tgid_of(tid));
	}
	return t;
}

/* @t's counts taken (if it has a context), its entry gone */
static void ftask_done(struct ftask *t)
{
	if (t->fd >= 0) {
		struct reading r;

		smpl_unmap(&t->sc);
		smpl_read(t->fd, opts.smpl_period ? &t->sc : NULL, &r);
		close(t->fd);
		reading_add(&sum, &r);
		ncounted++;
		if (!opts.aggregate) {
			results = grow(results, &results_cap, nresults,
				       sizeof(*results), 64);
			results[nresults].tid = t->tid;
			results[nresults++].r = r;
		}
	}
	*t = live[--nlive];
}

/* a new task stopped at its start: its own context, loaded and started */
static void ftask_attach(struct ftask *t)
{
	char why[256];
	int fd = ctx_create_or_why(0, why, sizeof(why));

	t->started = true;
	if (fd < 0) {
		fprintf(stderr, "pfmon: task %d: not monitored: %s\n", t->tid, why);
		nunmonitored++;
		return;
	}
	ctx_program(fd);
	if (ctx_load(fd, t->tid) || pfm_start(fd, NULL)) {
		fprintf(stderr, "pfmon: task %d: not monitored: %s\n", t->tid,
			load_strerror(errno));
		close(fd);
		nunmonitored++;
		return;
	}
	t->fd = fd;
	if (opts.smpl_period) {
		smpl_map(&t->sc, fd);
		syms_watch(tgid_of(t->tid));
	}
}

static unsigned long ptrace_opts(void)
{
	/* exec always: else a traced exec stops with a plain SIGTRAP */
	unsigned long o = PTRACE_O_TRACEEXEC;

	if (opts.follow & FOLLOW_FORK)
		o |= PTRACE_O_TRACEFORK;
	if (opts.follow & FOLLOW_VFORK)
		o |= PTRACE_O_TRACEVFORK;
	if (opts.follow & FOLLOW_PTHREAD)
		o |= PTRACE_O_TRACECLONE;
	return o;
}

/*
 * An exec by a thread other than its process's leader: the kernel gave
 * the thread the leader's id, and the leader is gone without a word.
 */
static void ftask_exec(pid_t tid)
{
	unsigned long former;
	struct ftask *t;

	if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &former) || (pid_t)former == tid)
		return;
	t = ftask_find(tid);
	if (t)
		ftask_done(t);
	t = ftask_find((pid_t)former);
	if (t)
		t->tid = tid;
}

/*
 * One wait status of a traced task: its end, a creation, its first stop,
 * or a signal of its own (delivered). @main's status into *@rc.
 */
static void follow_status(pid_t w, int st, pid_t main_tid, int *rc)
{
	struct ftask *t = ftask_find(w);
	int sig, ev;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (w == main_tid)
			*rc = cmd_status(w, st);
		if (t)
			ftask_done(t);
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	sig = WSTOPSIG(st);
	ev = st >> 16;
	if (sig == SIGTRAP && ev) {
		unsigned long nt;

		if ((ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK ||
		     ev == PTRACE_EVENT_CLONE) &&
		    !ptrace(PTRACE_GETEVENTMSG, w, 0, &nt) &&
		    !ftask_find((pid_t)nt))
			ftask_add((pid_t)nt, -1, false);
		if (ev == PTRACE_EVENT_EXEC)
			ftask_exec(w);
		ptrace(PTRACE_CONT, w, 0, 0);
		return;
	}
	/* a new task's first stop can come before its creator's event */
	if (!t)
		t = ftask_add(w, -1, false);
	if (!t->started && sig == SIGSTOP) {
		ftask_attach(t);
		ptrace(PTRACE_CONT, w, 0, 0);
		return;
	}
	/* any other signal is the task's own: deliver it */
	ptrace(PTRACE_CONT, w, 0, sig);
}

static void reap_all(pid_t main_tid, int *rc)
{
	pid_t w;
	int st;

	while ((w = waitpid(-1, &st, __WALL | WNOHANG)) > 0)
		follow_status(w, st, main_tid, rc);
	if (w < 0 && errno != ECHILD && errno != EINTR)
		die("waitpid: %s", strerror(errno));
}

/*
 * Let @t go as it was: stopped by a SIGSTOP of pfmon's (ptrace can let
 * a task go only from a stop), detached with that SIGSTOP taken back.
 * Signals of its own that come first are delivered, tasks it creates
 * meanwhile join the list; its context is read.
 */
static void ftask_let_go(struct ftask *t)
{
	pid_t tid = t->tid;
	int st, unused;

	if (t->started && syscall(SYS_tkill, tid, SIGSTOP))
		goto gone;
	for (;;) {
		if (waitpid(tid, &st, __WALL) != tid)
			goto gone;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			goto gone;
		if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP && !(st >> 16))
			break;
		follow_status(tid, st, 0, &unused);
		if (!ftask_find(tid))
			return;
	}
	ptrace(PTRACE_DETACH, tid, 0, 0);
gone:
	t = ftask_find(tid);
	if (t)
		ftask_done(t);
}

/* until a task's state changes or a sampling context has a message */
static void follow_wait(void)
{
	size_t n = 0;

	if (!opts.smpl_period) {
		session_wait(NULL, 0, -1);
		return;
	}
	for (size_t i = 0; i < nlive; i++) {
		if (live[i].fd < 0)
			continue;
		pfds = grow(pfds, &pfds_cap, n, sizeof(*pfds), 64);
		pfd_task = grow(pfd_task, &pfd_task_cap, n, sizeof(*pfd_task), 64);
		pfds[n] = (struct pollfd){ .fd = live[i].fd, .events = POLLIN };
		pfd_task[n++] = i;
	}
	if (session_wait(pfds, (int)n, SMPL_POLL_MS) > 0)
		for (size_t i = 0; i < n; i++)
			if (pfds[i].revents)
				smpl_msg(&live[pfd_task[i]].sc);
	for (size_t i = 0; i < nlive; i++)
		smpl_poll(&live[i].sc);
	/* their libraries may have been mapped since */
	syms_snapshot();
}

/* the session ends before the tasks: read and let go every one */
static void let_all_go(void)
{
	while (nlive)
		ftask_let_go(&live[nlive - 1]);
}

/*
 * Trace until every followed task is gone, or the session ends: for an
 * attached task when -t passes or a signal comes; for a command, when a
 * signal came and the command ended (what it left behind is let go).
 * @main's status.
 */
static int follow_loop(pid_t main_tid, bool attached)
{
	int rc = 0;

	die_cleanup(let_all_go);
	while (nlive) {
		reap_all(main_tid, &rc);
		if (!nlive)
			break;
		if (session_over() &&
		    (attached || !ftask_find(main_tid))) {
			let_all_go();
			break;
		}
		follow_wait();
	}
	die_cleanup(NULL);
	return rc;
}

static void follow_report(void)
{
	char title[32];

	for (size_t i = 0; i < nresults; i++) {
		snprintf(title, sizeof(title), "task%d", results[i].tid);
		print_counts(title, &results[i].r, NULL);
		warn_host_limits(title, &results[i].r);
	}
	if (opts.aggregate) {
		sum.t = since_start();
		snprintf(title, sizeof(title), "tasks%zu", ncounted);
		print_counts(title, &sum, NULL);
		warn_host_limits(title, &sum);
	}
	if (nunmonitored)
		fprintf(stderr, "pfmon: %zu of %zu tasks not monitored (no context for them: see above)\n",
			nunmonitored, nunmonitored + ncounted);
	if (opts.smpl_period)
		smpl_end();
}

/* a context a task: as many as the hard limit on open files allows */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * The first followed task, stopped, its context @fd loaded: trace what it
 * creates, let it run.
 */
void ftask_traced(pid_t pid, int fd)
{
	raise_nofile();
	if (ptrace(PTRACE_SETOPTIONS, pid, 0, ptrace_opts()))
		die("ptrace: %s", strerror(errno));
	ftask_add(pid, fd, true);
	ptrace(PTRACE_CONT, pid, 0, 0);
}

/* the command and what it creates, each task counted apart */
int follow_cmd(char **argv, int fd)
{
	int rc;

	if (opts.smpl_period)
		smpl_begin(cmd_path(argv[0]));
	session_start();
	rc = follow_loop(spawn(argv, fd, true), false);
	follow_report();
	return rc;
}

/* an attached task, stopped by pfmon, its context @fd loaded and started */
int follow_attached(pid_t pid, int fd)
{
	ftask_traced(pid, fd);
	follow_loop(pid, true);
	follow_report();
	return 0;
}
