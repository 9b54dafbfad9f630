// SPDX-License-Identifier: GPL-2.0
/*
 * Threads that monitor themselves and exit, as perfmon2 v2.8x has it
 * (__pfm_exit_thread(): PFM_MSG_END only for a thread another one
 * monitored):
 *
 *   self     a process whose worker threads each load a context on
 *            themselves, ask for SIGIO as SIGRTMIN (O_ASYNC, F_SETSIG,
 *            F_SETOWN to the process; a realtime signal, so that each
 *            notification is one signal naming its fd, where a standard
 *            one would merge those of several workers) and sample with
 *            OVFL_NOTIFY through a handler that reads the message and
 *            calls pfm_restart. The handler is
 *            removed once sampling is over, then the workers exit with
 *            their contexts loaded. Their exit queues no PFM_MSG_END and
 *            raises no signal: the process is not killed by SIGRTMIN's
 *            default action (termination), and its fds hold no message.
 *   another  a thread monitored by another thread of its process: its
 *            exit queues PFM_MSG_END for the monitor.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

#define WORKERS		4
#define RUN_NS		PVPFM_VPMD_VCPU_RUN_NS
#define PERIOD_NS	(2 * MS)	/* a notification every 2 ms of vCPU */
#define SAMPLING_NS	(40 * MS)

/* what the process of the "self" case tells the test */
struct self_result {
	int setup_err;		/* errno of the first worker that failed */
	int signals;		/* SIGRTMIN handled while sampling */
	int restart_err;	/* a pfm_restart in the handler failed */
	int messages;		/* messages on the fds after the exits */
	int still_loaded;	/* contexts pfm_stop did not find unloaded */
};

static volatile sig_atomic_t sig_count, sig_restart_err;
static pthread_barrier_t sampled, handler_gone;
static int worker_fd[WORKERS], worker_err[WORKERS];

/* a libpfm-3 self-sampler's handler: the message, then pfm_restart */
static void on_notify(int sig, siginfo_t *si, void *uc)
{
	pfarg_msg_t m;

	(void)sig;
	(void)uc;
	sig_count++;
	while (read(si->si_fd, &m, sizeof(m)) == sizeof(m))
		;
	if (pfm_restart(si->si_fd) && errno != EBUSY)
		sig_restart_err = errno;
}

/* a libpfm-3 self-sampler's thread: set up, sample, stop, exit loaded */
static void *self_worker(void *arg)
{
	int i = (int)(intptr_t)arg, fd;
	pfarg_pmd_t pd;

	fd = t_create(0);
	worker_fd[i] = fd;
	t_pmd_period(&pd, RUN_NS, PERIOD_NS, PFM_REGFL_OVFL_NOTIFY);
	if (fd < 0 || fcntl(fd, F_SETOWN, getpid()) ||
	    fcntl(fd, F_SETSIG, SIGRTMIN) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC | O_NONBLOCK) ||
	    pfm_write_pmds(fd, &pd, 1) || t_load(fd, t_gettid(), 0) ||
	    pfm_start(fd, NULL))
		worker_err[i] = errno ? errno : EIO;
	t_busy_ns(SAMPLING_NS);
	if (fd >= 0)
		pfm_stop(fd);
	/* a notification in flight still finds the handler */
	t_sleep_ns(50 * MS);
	pthread_barrier_wait(&sampled);
	pthread_barrier_wait(&handler_gone);
	return NULL;
}

/* the process of the "self" case; its exit status 0 once it reported */
static int self_process(int out)
{
	struct self_result r = { 0 };
	pthread_t th[WORKERS];
	struct sigaction sa;
	pfarg_msg_t m;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_notify;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN, &sa, NULL);
	pthread_barrier_init(&sampled, NULL, WORKERS + 1);
	pthread_barrier_init(&handler_gone, NULL, WORKERS + 1);
	for (i = 0; i < WORKERS; i++)
		pthread_create(&th[i], NULL, self_worker, (void *)(intptr_t)i);
	pthread_barrier_wait(&sampled);
	/* sampling is over: no handler any more, SIGRTMIN would kill */
	signal(SIGRTMIN, SIG_DFL);
	pthread_barrier_wait(&handler_gone);
	for (i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	/* what an END would raise has time to come */
	t_sleep_ns(500 * MS);
	r.signals = sig_count;
	r.restart_err = sig_restart_err;
	for (i = 0; i < WORKERS; i++) {
		if (worker_err[i] && !r.setup_err)
			r.setup_err = worker_err[i];
		if (worker_fd[i] < 0)
			continue;
		/* reading a message would raise SIGIO for the next one */
		fcntl(worker_fd[i], F_SETFL,
		      fcntl(worker_fd[i], F_GETFL) & ~O_ASYNC);
		while (read(worker_fd[i], &m, sizeof(m)) == sizeof(m))
			r.messages += m.type == PFM_MSG_END;
		r.still_loaded += !pfm_stop(worker_fd[i]);
	}
	return write(out, &r, sizeof(r)) == sizeof(r) ? 0 : 1;
}

static void self_case(void)
{
	struct self_result r;
	int p[2], status;
	pid_t pid;

	if (pipe(p)) {
		t_fail("selfmon: pipe", "%s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(self_process(p[1]));
	}
	close(p[1]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		t_fail("selfmon: the process of self-monitoring threads", "%s",
		       strerror(errno));
		close(p[0]);
		return;
	}
	t_check(WIFEXITED(status) && !WEXITSTATUS(status),
		"selfmon: self: the process outlives its monitoring threads",
		WIFSIGNALED(status) ? "killed by signal %d" : "status %#x",
		WIFSIGNALED(status) ? WTERMSIG(status) : status);
	if (read(p[0], &r, sizeof(r)) != sizeof(r)) {
		t_fail("selfmon: self: the process's report", "none");
		close(p[0]);
		return;
	}
	close(p[0]);
	t_check(!r.setup_err, "selfmon: self: every worker sampled itself",
		"%s", strerror(r.setup_err));
	t_check(r.signals >= WORKERS && !r.restart_err,
		"selfmon: self: SIGRTMIN per notification while sampling",
		"%d signals, pfm_restart: %s", r.signals,
		r.restart_err ? strerror(r.restart_err) : "ok");
	t_check(!r.messages,
		"selfmon: self: no PFM_MSG_END for a thread that monitored itself",
		"%d END messages", r.messages);
	t_check(!r.still_loaded,
		"selfmon: self: the exits unloaded the contexts",
		"%d still loaded", r.still_loaded);
}

static pthread_barrier_t watched;

static void *watched_thread(void *arg)
{
	*(pid_t *)arg = t_gettid();
	pthread_barrier_wait(&watched);		/* its tid is known */
	pthread_barrier_wait(&watched);		/* it is monitored */
	t_busy_ns(5 * MS);
	return NULL;
}

static void another_case(void)
{
	pid_t tid = 0;
	pthread_t th;
	pfarg_msg_t m;
	int fd;

	fd = t_create(0);
	if (!t_expect_ok("selfmon: another: create", fd))
		return;
	pthread_barrier_init(&watched, NULL, 2);
	pthread_create(&th, NULL, watched_thread, &tid);
	pthread_barrier_wait(&watched);
	t_expect_ok("selfmon: another: load on a thread of this process",
		    t_load(fd, tid, 0));
	pthread_barrier_wait(&watched);
	pthread_join(th, NULL);
	t_check(t_wait_msg(fd, &m, 2000) && m.type == PFM_MSG_END,
		"selfmon: another: PFM_MSG_END when the monitored thread exits",
		"no END within 2 s");
	close(fd);
}

int main(void)
{
	self_case();
	another_case();
	return t_done();
}
