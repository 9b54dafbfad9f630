// SPDX-License-Identifier: GPL-2.0
/*
 * System-wide contexts, one per vCPU in turn: loaded from the vCPU they
 * monitor, they count whatever runs there, idle included: VCPU_RUN_NS
 * grows while this thread sleeps elsewhere in the guest and HALT_EXITS
 * counts the idle vCPU's halts. Then, as a perfmon2 program that does not
 * pin itself: loaded for another vCPU from here, the context
 * counts what runs there, not here. The rules: per-thread next to
 * system-wide (EBUSY), a second context for a vCPU (EBUSY), no such CPU
 * (EINVAL), who may create one (sys_group, CAP_SYS_ADMIN: EPERM). The
 * exclusion does not let a user outside sys_group keep the admin out: a
 * system-wide load unloads that user's loaded per-thread context (it gets
 * PFM_MSG_END); root's own per-thread context still makes it EBUSY.
 *
 * VM_EXITS must count the N exits (CPUID) this thread makes on the vCPU;
 * VCPU_RUN_NS must grow, by no more than the wall time plus 10 ms.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

#define NOBODY		65534
#define SYS_EXITS	500

static void one_cpu(int cpu)
{
	const uint16_t pmds[] = {
		PVPFM_VPMD_VCPU_RUN_NS, PVPFM_VPMD_VM_EXITS,
		PVPFM_VPMD_HALT_EXITS,
	};
	uint64_t run = 0, exits = 0, halts = 0, t0, wall;
	char name[128];
	int fd, tfd;

	snprintf(name, sizeof(name), "syswide: vCPU %d: pin", cpu);
	if (!t_check(!t_pin(cpu), name, "%s", strerror(errno)))
		return;
	fd = t_create(PFM_FL_SYSTEM_WIDE);
	snprintf(name, sizeof(name), "syswide: vCPU %d: create", cpu);
	if (!t_expect_ok(name, fd))
		return;
	snprintf(name, sizeof(name), "syswide: vCPU %d: write PMDs", cpu);
	t_expect_ok(name, t_write_pmds(fd, pmds, 3, 0));

	snprintf(name, sizeof(name), "syswide: vCPU %d: load for no such CPU: EINVAL",
		 cpu);
	t_expect_err(name, t_load(fd, 100000, 0), EINVAL);

	snprintf(name, sizeof(name), "syswide: vCPU %d: load", cpu);
	if (!t_expect_ok(name, t_load(fd, cpu, 0)))
		goto out;
	snprintf(name, sizeof(name), "syswide: vCPU %d: load twice: EBUSY", cpu);
	t_expect_err(name, t_load(fd, cpu, 0), EBUSY);

	tfd = t_create(0);
	if (tfd >= 0) {
		snprintf(name, sizeof(name),
			 "syswide: vCPU %d: per-thread load next to it: EBUSY", cpu);
		t_expect_err(name, t_load(tfd, t_gettid(), 0), EBUSY);
		close(tfd);
	}

	snprintf(name, sizeof(name), "syswide: vCPU %d: start", cpu);
	t_expect_ok(name, pfm_start(fd, NULL));
	t0 = t_now_ns();
	t_busy_ns(50 * MS);
	t_exits(SYS_EXITS);
	/* idle: the vCPU halts, the context keeps counting */
	t_sleep_ns(100 * MS);
	t_busy_ns(10 * MS);
	snprintf(name, sizeof(name), "syswide: vCPU %d: stop", cpu);
	t_expect_ok(name, pfm_stop(fd));
	wall = t_now_ns() - t0;
	t_read_pmd(fd, PVPFM_VPMD_VCPU_RUN_NS, 0, &run);
	t_read_pmd(fd, PVPFM_VPMD_VM_EXITS, 0, &exits);
	t_read_pmd(fd, PVPFM_VPMD_HALT_EXITS, 0, &halts);

	snprintf(name, sizeof(name), "syswide: vCPU %d: VCPU_RUN_NS", cpu);
	t_check(run > 0 && run <= wall + 10 * MS,
		name, "%llu ns over %llu ns wall, 60 ms of it busy",
		(unsigned long long)run, (unsigned long long)wall);
	snprintf(name, sizeof(name), "syswide: vCPU %d: VM_EXITS", cpu);
	t_check(exits >= SYS_EXITS, name, "%llu for the %d exits made here",
		(unsigned long long)exits, SYS_EXITS);
	snprintf(name, sizeof(name),
		 "syswide: vCPU %d: HALT_EXITS while the vCPU idles", cpu);
	t_check(halts > 0, name, "%llu over a 100 ms sleep",
		(unsigned long long)halts);

	snprintf(name, sizeof(name), "syswide: vCPU %d: unload", cpu);
	t_expect_ok(name, pfm_unload_context(fd));
out:
	close(fd);
}

/* a child on @cpu makes @n exits there */
static pid_t exits_on(int cpu, unsigned int n)
{
	pid_t pid = fork();

	if (!pid) {
		if (t_pin(cpu))
			_exit(1);
		t_exits(n);
		_exit(0);
	}
	return pid;
}

/*
 * From vCPU @cpu, a context for vCPU @other: loaded there, it counts the
 * exits a child makes on @other and none of the ones made here.
 */
static void remote(int cpu, int other)
{
	const uint16_t pmds[] = { PVPFM_VPMD_VM_EXITS };
	uint64_t exits = 0;
	char name[128];
	int fd, fd2, status = -1;
	pid_t child;

	if (t_pin(cpu))
		return;
	fd = t_create(PFM_FL_SYSTEM_WIDE);
	snprintf(name, sizeof(name), "syswide: from vCPU %d for vCPU %d: create",
		 cpu, other);
	if (!t_expect_ok(name, fd) || t_write_pmds(fd, pmds, 1, 0))
		goto out;
	snprintf(name, sizeof(name), "syswide: from vCPU %d: load for vCPU %d",
		 cpu, other);
	if (!t_expect_ok(name, t_load(fd, other, 0)))
		goto out;
	snprintf(name, sizeof(name),
		 "syswide: from vCPU %d: the caller stays on its vCPU", cpu);
	t_check(sched_getcpu() == cpu, name, "on vCPU %d", sched_getcpu());
	fd2 = t_create(PFM_FL_SYSTEM_WIDE);
	if (fd2 >= 0) {
		snprintf(name, sizeof(name),
			 "syswide: from vCPU %d: a second context for vCPU %d: EBUSY",
			 cpu, other);
		t_expect_err(name, t_load(fd2, other, 0), EBUSY);
		close(fd2);
	}
	snprintf(name, sizeof(name), "syswide: from vCPU %d: start", cpu);
	t_expect_ok(name, pfm_start(fd, NULL));
	/* here: not counted; there: counted */
	t_exits(10 * SYS_EXITS);
	child = exits_on(other, SYS_EXITS);
	if (child > 0)
		waitpid(child, &status, 0);
	pfm_stop(fd);
	t_read_pmd(fd, PVPFM_VPMD_VM_EXITS, 0, &exits);
	snprintf(name, sizeof(name),
		 "syswide: from vCPU %d: VM_EXITS counts vCPU %d's exits, not these",
		 cpu, other);
	t_check(status == 0 && exits >= SYS_EXITS && exits < 10 * SYS_EXITS,
		name, "%llu; %d exits there, %d here (child status %#x)",
		(unsigned long long)exits, SYS_EXITS, 10 * SYS_EXITS, status);
	snprintf(name, sizeof(name), "syswide: from vCPU %d: unload", cpu);
	t_expect_ok(name, pfm_unload_context(fd));
out:
	if (fd >= 0)
		close(fd);
}

/* in a child that is nobody: 0 if it could create a system-wide context */
static int create_as_nobody(int *err)
{
	int status, pipefd[2], e = 0;
	pid_t pid;

	*err = -1;	/* the child could not tell */
	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int fd;

		close(pipefd[0]);
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(2);
		fd = t_create(PFM_FL_SYSTEM_WIDE);
		e = fd < 0 ? errno : 0;
		if (write(pipefd[1], &e, sizeof(e)) != sizeof(e))
			_exit(3);
		_exit(fd < 0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &e, sizeof(e)) != sizeof(e))
		e = -1;
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	*err = e;
	return e ? -1 : 0;
}

static void permissions(void)
{
	char old[32];
	int err = 0;

	if (t_sysfs_read("controls/sys_group", old, sizeof(old))) {
		t_fail("syswide: controls/sys_group", "%s", strerror(errno));
		return;
	}
	if (!strcmp(old, "-1")) {
		t_skip("syswide: nobody may not create one",
		       "sys_group is -1: anyone may");
	} else {
		t_check(create_as_nobody(&err) && err == EPERM,
			"syswide: nobody may not create one: EPERM",
			"errno %s", err > 0 ? strerrorname_np(err) :
			err ? "(child failed)" : "none: created");
	}
	t_expect_err("syswide: sys_group -2 refused",
		     t_sysfs_write("controls/sys_group", "-2"), EINVAL);
	if (!t_expect_ok("syswide: sys_group set to nobody's group",
			 t_sysfs_write("controls/sys_group", "65534")))
		return;
	t_check(!create_as_nobody(&err),
		"syswide: a member of sys_group may create one",
		"errno %s", err > 0 ? strerrorname_np(err) : "(child failed)");
	t_sysfs_write("controls/sys_group", old);
}

struct evict_run {
	int step;	/* 0, else the setup step that failed (errno in err) */
	int err;
	bool end_msg;	/* PFM_MSG_END came */
	int stop_err;	/* pfm_stop after it: errno, 0 if still loaded */
};

/*
 * nobody, outside sys_group: a per-thread context loaded on itself; tell
 * the parent (a byte on @ready), wait up to 10 s for PFM_MSG_END, report.
 */
static void evict_child(int ready, int wfd)
{
	struct pollfd pfd = { .events = POLLIN };
	struct evict_run r = { 0 };
	pfarg_msg_t msg;
	int fd = -1;

	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		r.step = 1;
	else if ((fd = t_create(0)) < 0)
		r.step = 2;
	else if (t_load(fd, t_gettid(), 0))
		r.step = 3;
	r.err = errno;
	if (write(ready, "r", 1) != 1)
		_exit(1);
	if (!r.step) {
		pfd.fd = fd;
		if (poll(&pfd, 1, 10000) == 1 &&
		    read(fd, &msg, sizeof(msg)) == sizeof(msg))
			r.end_msg = msg.type == PFM_MSG_END;
		r.stop_err = pfm_stop(fd) ? errno : 0;
	}
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

static void evict(int cpu)
{
	int ready[2], res[2], fd, tfd, status, err;
	struct evict_run r = { .step = 9 };
	char old[32], c;
	pid_t pid;

	if (t_sysfs_read("controls/sys_group", old, sizeof(old)) ||
	    !t_expect_ok("syswide: sys_group set to root's group only",
			 t_sysfs_write("controls/sys_group", "0")))
		return;
	if (pipe(ready) || pipe(res)) {
		t_fail("syswide: evict: setup", "%s", strerror(errno));
		goto restore;
	}
	fflush(stdout);
	pid = fork();
	if (!pid) {
		close(ready[0]);
		close(res[0]);
		evict_child(ready[1], res[1]);
	}
	close(ready[1]);
	close(res[1]);
	if (pid < 0 || read(ready[0], &c, 1) != 1) {
		t_fail("syswide: evict: nobody's child", "did not start");
		goto out;
	}
	if (t_pin(cpu))
		t_fail("syswide: evict: pin", "%s", strerror(errno));
	fd = t_create(PFM_FL_SYSTEM_WIDE);
	if (t_expect_ok("syswide: evict: create", fd)) {
		err = t_load(fd, cpu, 0) ? errno : 0;
		t_check(!err,
			"syswide: a load next to nobody's loaded per-thread context",
			"%s", strerror(err));
		if (!err)
			pfm_unload_context(fd);
		close(fd);
	}
	if (read(res[0], &r, sizeof(r)) != sizeof(r))
		r.step = 9;
	if (t_check(!r.step, "syswide: evict: nobody's per-thread context loaded",
		    "step %d (1 nobody, 2 create, 3 load): %s", r.step,
		    strerror(r.err))) {
		t_check(r.end_msg,
			"syswide: nobody's context unloaded: PFM_MSG_END",
			"no PFM_MSG_END within 10 s");
		t_check(r.stop_err == EINVAL,
			"syswide: nobody's context is unloaded (stop: EINVAL)",
			"%s", r.stop_err ? strerror(r.stop_err) : "still loaded");
	}

	/* root's own per-thread context: perfmon2's rule, EBUSY */
	tfd = t_create(0);
	fd = t_create(PFM_FL_SYSTEM_WIDE);
	if (t_expect_ok("syswide: evict: root's per-thread context",
			tfd >= 0 && fd >= 0 ? 0 : -1) &&
	    t_expect_ok("syswide: evict: root loads it on itself",
			t_load(tfd, t_gettid(), 0)))
		t_expect_err("syswide: a load next to root's own per-thread context: EBUSY",
			     t_load(fd, cpu, 0), EBUSY);
	if (tfd >= 0)
		close(tfd);
	if (fd >= 0)
		close(fd);
out:
	close(ready[0]);
	close(res[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
restore:
	t_sysfs_write("controls/sys_group", old);
}

int main(void)
{
	int cpus[256], n, i;

	if (!t_root()) {
		t_skip("syswide: all", "needs root (CAP_SYS_ADMIN)");
		return t_done();
	}
	n = t_online_cpus(cpus, 256);
	for (i = 0; i < n; i++)
		one_cpu(cpus[i]);
	if (n > 1)
		remote(cpus[0], cpus[1]);
	else
		t_skip("syswide: load for another vCPU", "one vCPU");
	permissions();
	evict(cpus[0]);
	return t_done();
}
