// SPDX-License-Identifier: GPL-2.0
/*
 * A per-thread context follows its thread across vCPUs: self-monitoring
 * with VCPU_RUN_NS while sched_setaffinity() forces the thread from one
 * vCPU to another. The guest's context-switch hook must switch the
 * context out on the old vCPU and in on the new one; if it did not, the
 * count would stop growing after the first migration.
 *
 * Tolerance: over each phase, VCPU_RUN_NS grows by at least half the
 * thread's CPU time and by at most the phase's wall time plus 10 ms.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "t_common.h"

#define SLACK_NS	(10 * NSEC_PER_MSEC)
#define HOPS		50

struct phase {
	uint64_t t, cpu, run;
};

static int sample(int fd, struct phase *p)
{
	p->t = t_now_ns();
	p->cpu = t_thread_cpu_ns();
	return t_read_pmd(fd, PVPFM_VPMD_VCPU_RUN_NS, 0, &p->run);
}

static void check_phase(const char *name, const struct phase *a,
			const struct phase *b)
{
	uint64_t run = b->run - a->run, cpu = b->cpu - a->cpu, wall = b->t - a->t;

	t_check(run >= cpu / 2 && run <= wall + SLACK_NS, name,
		"VCPU_RUN_NS +%llu ns; thread CPU time %llu ns, wall %llu ns",
		(unsigned long long)run, (unsigned long long)cpu,
		(unsigned long long)wall);
}

int main(void)
{
	long long sw0, sw1, err0, err1;
	struct phase p0, p1, p2, p3, p4;
	uint16_t run = PVPFM_VPMD_VCPU_RUN_NS;
	char name[128];
	int cpus[2], n, fd, a, b, i, moved = 0;

	n = t_online_cpus(cpus, 2);
	if (n < 2) {
		t_skip("migrate: per-thread context across vCPUs",
		       "%d vCPU: needs 2", n);
		return t_done();
	}
	a = cpus[0];
	b = cpus[1];
	if (!t_check(!t_pin(a), "migrate: pin to the first vCPU", "CPU %d: %s",
		     a, strerror(errno)))
		return t_done();

	fd = t_create(0);
	if (!t_expect_ok("migrate: create", fd) ||
	    !t_expect_ok("migrate: write VCPU_RUN_NS", t_write_pmds(fd, &run, 1, 0)) ||
	    !t_expect_ok("migrate: load on self", t_load(fd, t_gettid(), 0)) ||
	    !t_expect_ok("migrate: start", pfm_start(fd, NULL)))
		return t_done();
	sw0 = t_sysfs_num("device/switches", -1);
	err0 = t_sysfs_num("device/switch_errors", -1);

	sample(fd, &p0);
	t_busy_ns(100 * NSEC_PER_MSEC);
	sample(fd, &p1);
	snprintf(name, sizeof(name), "migrate: counts on vCPU %d", a);
	check_phase(name, &p0, &p1);

	if (!t_check(!t_pin(b), "migrate: forced to the second vCPU",
		     "CPU %d: %s", b, strerror(errno)))
		return t_done();
	t_busy_ns(100 * NSEC_PER_MSEC);
	sample(fd, &p2);
	snprintf(name, sizeof(name), "migrate: counts on vCPU %d after the move", b);
	check_phase(name, &p1, &p2);

	t_pin(a);
	t_busy_ns(100 * NSEC_PER_MSEC);
	sample(fd, &p3);
	snprintf(name, sizeof(name), "migrate: counts back on vCPU %d", a);
	check_phase(name, &p2, &p3);

	for (i = 0; i < HOPS; i++) {
		moved += !t_pin(i % 2 ? a : b);
		t_busy_ns(2 * NSEC_PER_MSEC);
	}
	sample(fd, &p4);
	snprintf(name, sizeof(name), "migrate: counts across %d forced moves", HOPS);
	check_phase(name, &p3, &p4);

	t_expect_ok("migrate: stop", pfm_stop(fd));
	sw1 = t_sysfs_num("device/switches", -1);
	err1 = t_sysfs_num("device/switch_errors", -1);
	/* each move: out on one vCPU, in on the other */
	t_check(sw1 - sw0 >= 2LL * (moved + 2), "migrate: a SWITCH out and in per move",
		"%lld SWITCH commands for %d moves", sw1 - sw0, moved + 2);
	t_check(err1 == err0, "migrate: no SWITCH refused by the host",
		"switch_errors %lld -> %lld (last %lld)", err0, err1,
		t_sysfs_num("device/last_switch_error", 0));
	t_expect_ok("migrate: unload", pfm_unload_context(fd));
	close(fd);
	return t_done();
}
