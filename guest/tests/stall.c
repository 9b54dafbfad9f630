// SPDX-License-Identifier: GPL-2.0
/*
 * A context busy in a call holds up no other context and no other user:
 * the notification work takes no global lock while it visits contexts,
 * and waits for none of their locks.
 *
 * A context's lock is held for seconds by root's system-wide load for
 * vCPU 1 made from vCPU 0: the driver has the load made by a work item
 * bound to vCPU 1, which a SCHED_FIFO spinner there (RT throttling off)
 * keeps from running for SPIN_NS. The context has PFM_FL_OVFL_NO_MSG, so
 * the notification work visits it. A notification then comes on vCPU 0
 * (an OVFL_NOTIFY PMD of a context of this thread), and a child creates
 * and closes a context on vCPU 0: that must take a small part of the
 * spinner's hold, not last until it lets go. Root only; two vCPUs at
 * least.
 *
 * Not a t_* program, so `run` leaves it out unless named (`run stall`):
 * starving a vCPU with RT throttling off starved the L2 kernel's RCU
 * grace-period kthread too under the rig's nested TCG (a stall report
 * with a call trace, which fails the rig's log check, in one of three
 * clean-clone runs). Run it on a real guest, or in the rig by hand.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

#define RT_RUNTIME	"/proc/sys/kernel/sched_rt_runtime_us"
/*
 * The spinner starves vCPU 1 on purpose: RCU's stall report (with a call
 * trace, which fails the rig's log check) is not about the code under
 * test, so it is suppressed while the spinner may run, as RT throttling
 * is turned off
 */
#define RCU_STALL_SUPPRESS \
	"/sys/module/rcupdate/parameters/rcu_cpu_stall_suppress"
#define SPIN_NS		(3 * SEC)
/* under nested TCG beside other L1s, vCPU 1 may wait seconds for L0 */
#define SPIN_START_MS	20000
#define PERIOD_NS	(2 * MS)
/*
 * Well before the spinner lets go: a create and close took 16-18 ms on an
 * idle rig and 538 ms beside two other L1s under TCG; held up, it lasts
 * until the spinner's end (5.7 s of a 6 s hold measured)
 */
#define CREATE_MAX_NS	(SPIN_NS / 2)

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

/* a SCHED_FIFO thread on @cpu for SPIN_NS; a byte on @ready once it runs */
static pid_t spinner(int cpu, int ready)
{
	struct sched_param sp = { .sched_priority = 50 };
	uint64_t end;
	pid_t pid;

	pid = fork();
	if (pid)
		return pid;
	if (t_pin(cpu) || sched_setscheduler(0, SCHED_FIFO, &sp))
		_exit(1);
	end = t_now_ns() + SPIN_NS;
	if (write(ready, "s", 1) != 1)
		_exit(1);
	while (t_now_ns() < end)
		;
	_exit(0);
}

/* a child on vCPU 0: a system-wide NO_MSG context, loaded for @cpu */
static pid_t loader(int cpu, int ready)
{
	pid_t pid;
	int fd;

	pid = fork();
	if (pid)
		return pid;
	fd = t_create(PFM_FL_SYSTEM_WIDE | PFM_FL_OVFL_NO_MSG);
	if (fd < 0 || write(ready, "l", 1) != 1)
		_exit(1);
	/* held here until the spinner lets vCPU @cpu's work items run */
	_exit(t_load(fd, cpu, 0) ? 2 : 0);
}

/* a notification on this vCPU: an OVFL_NOTIFY PMD of a context on itself */
static int notify_here(void)
{
	pfarg_pmd_t pd;
	int fd;

	t_pmd_period(&pd, RUN_NS, PERIOD_NS, PFM_REGFL_OVFL_NOTIFY);
	fd = t_create(0);
	if (fd < 0)
		return -1;
	if (pfm_write_pmds(fd, &pd, 1) || t_load(fd, t_gettid(), 0) ||
	    pfm_start(fd, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* a byte on @fd within @ms */
static bool wait_byte(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&pfd, 1, ms) == 1 && read(fd, &c, 1) == 1;
}

/* how long a child takes to create and close a context, -1 on failure */
static int64_t create_time(void)
{
	uint64_t t0 = t_now_ns();
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = t_create(0);

		_exit(fd < 0 || close(fd));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		return -1;
	return t_now_ns() - t0;
}

int main(void)
{
	int p[2], cpus[256], fd = -1, rt, n, status;
	struct pollfd pfd = { .events = POLLIN };
	pid_t spin = -1, load = -1;
	char saved[32] = "", rcu_saved[8] = "";
	int64_t took = -1;
	uint64_t end, spin_end;
	ssize_t len;

	if (!t_root()) {
		t_skip("stall: a context held in a call", "not root");
		return t_done();
	}
	n = t_online_cpus(cpus, 256);
	if (n < 2) {
		t_skip("stall: a context held in a call", "one vCPU");
		return t_done();
	}
	rt = open(RT_RUNTIME, O_RDONLY | O_CLOEXEC);
	len = rt >= 0 ? read(rt, saved, sizeof(saved) - 1) : -1;
	if (rt >= 0)
		close(rt);
	if (!t_check(len > 0 && !t_pin(cpus[0]) && !pipe(p),
		     "stall: setup (vCPU 0)", "%s", strerror(errno)))
		return t_done();
	saved[len] = '\0';
	rt = open(RCU_STALL_SUPPRESS, O_RDONLY | O_CLOEXEC);
	len = rt >= 0 ? read(rt, rcu_saved, sizeof(rcu_saved) - 1) : -1;
	if (rt >= 0)
		close(rt);
	if (!t_expect_ok("stall: RCU stall reports off meanwhile",
			 len > 0 ? write_str(RCU_STALL_SUPPRESS, "1") : -1))
		return t_done();
	rcu_saved[len] = '\0';
	if (!t_expect_ok("stall: RT throttling off", write_str(RT_RUNTIME, "-1"))) {
		write_str(RCU_STALL_SUPPRESS, rcu_saved);
		return t_done();
	}

	spin = spinner(cpus[1], p[1]);
	if (!t_check(spin > 0 && wait_byte(p[0], SPIN_START_MS),
		     "stall: a SCHED_FIFO spinner on vCPU 1", "did not start"))
		goto out;
	spin_end = t_now_ns() + SPIN_NS;
	load = loader(cpus[1], p[1]);
	if (!t_check(load > 0 && wait_byte(p[0], 5000),
		     "stall: a system-wide NO_MSG context", "not created"))
		goto out;
	/* the loader is inside its load, holding its context's lock */
	t_sleep_ns(200 * MS);
	fd = notify_here();
	if (!t_check(fd >= 0, "stall: a notifying context on vCPU 0", "%s",
		     strerror(errno)))
		goto out;
	/* run here until the notification (its message) is there */
	pfd.fd = fd;
	end = t_now_ns() + SEC;
	while (poll(&pfd, 1, 0) == 0 && t_now_ns() < end)
		t_busy_ns(MS);
	t_check(pfd.revents & POLLIN, "stall: a notification on vCPU 0",
		"no message within 1 s");
	/* the notification work has run, or is running, on this vCPU */
	t_sleep_ns(50 * MS);
	/* a create held up to the spinner's end must take CREATE_MAX_NS */
	if (t_now_ns() + CREATE_MAX_NS > spin_end) {
		t_skip("stall: another context is created and closed at once",
		       "the setup ended %lld ms before the spinner's end: "
		       "too late to tell a held create from a quick one",
		       (long long)((int64_t)(spin_end - t_now_ns()) /
				   (int64_t)MS));
		goto out;
	}
	took = create_time();
	/* a per-thread context loaded would make the held load EBUSY */
	close(fd);
	fd = -1;
	printf("stall: a create and close took %lld ms beside a context held in its load\n",
	       (long long)(took / (int64_t)MS));
	t_check(took >= 0 && took < (int64_t)CREATE_MAX_NS,
		"stall: another context is created and closed at once",
		"%lld ms (the spinner holds vCPU %d for %llu ms)",
		(long long)(took / (int64_t)MS), cpus[1],
		(unsigned long long)(SPIN_NS / MS));
out:
	if (fd >= 0)
		close(fd);
	close(p[0]);
	close(p[1]);
	if (spin > 0)
		waitpid(spin, &status, 0);
	if (load > 0) {
		waitpid(load, &status, 0);
		t_check(WIFEXITED(status) && !WEXITSTATUS(status),
			"stall: the held load completes once vCPU 1 runs again",
			"status %#x", status);
	}
	write_str(RT_RUNTIME, saved);
	write_str(RCU_STALL_SUPPRESS, rcu_saved);
	return t_done();
}
