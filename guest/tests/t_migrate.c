// SPDX-License-Identifier: GPL-2.0
/*
 * A per-thread context follows its thread across vCPUs: self-monitoring
 * with VM_EXITS and VCPU_RUN_NS while sched_setaffinity() forces the
 * thread from one vCPU to another. The guest's context-switch hook must
 * switch the context out on the old vCPU and in on the new one; if it did
 * not, the counts would stop at the first move.
 *
 * The exact check needs no clock: in each phase the thread makes N VM
 * exits (CPUID) on its vCPU, and VM_EXITS must grow by at least N. Times
 * are checked loosely (VCPU_RUN_NS grows, and by no more than the wall
 * time plus 10 ms) and printed against the thread's CPU time: host and
 * guest clocks can disagree badly on a loaded nested rig.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "t_common.h"

#define SLACK_NS	(10 * MS)
#define EXITS		200
#define HOPS		50
#define HOP_EXITS	10

struct phase {
	uint64_t t, cpu, run, exits;
};

static int sample(int fd, struct phase *p)
{
	p->t = t_now_ns();
	p->cpu = t_thread_cpu_ns();
	return t_read_run_exits(fd, &p->run, &p->exits);
}

static void check_phase(const char *name, const struct phase *a,
			const struct phase *b, unsigned int exits)
{
	uint64_t run = b->run - a->run, cpu = b->cpu - a->cpu, wall = b->t - a->t;

	t_check(b->exits - a->exits >= exits && run > 0 && run <= wall + SLACK_NS,
		name,
		"VM_EXITS +%llu for %u exits made; VCPU_RUN_NS +%llu ns, wall %llu ns (thread CPU %llu ns)",
		(unsigned long long)(b->exits - a->exits), exits,
		(unsigned long long)run, (unsigned long long)wall,
		(unsigned long long)cpu);
}

/* a phase: busy, and EXITS exits, where the thread is now */
static void work(void)
{
	t_busy_ns(50 * MS);
	t_exits(EXITS);
}

int main(void)
{
	const uint16_t pmds[] = { PVPFM_VPMD_VCPU_RUN_NS, PVPFM_VPMD_VM_EXITS };
	struct phase p0, p1, p2, p3, p4;
	long long sw0, sw1, err0, err1;
	int cpus[2], n, fd, a, b, i, moved = 0;
	char name[128];

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
	    !t_expect_ok("migrate: write VCPU_RUN_NS and VM_EXITS",
			 t_write_pmds(fd, pmds, 2, 0)) ||
	    !t_expect_ok("migrate: load on self", t_load(fd, t_gettid(), 0)) ||
	    !t_expect_ok("migrate: start", pfm_start(fd, NULL)))
		return t_done();
	sw0 = t_sysfs_num("device/switches", -1);
	err0 = t_sysfs_num("device/switch_errors", -1);

	sample(fd, &p0);
	work();
	sample(fd, &p1);
	snprintf(name, sizeof(name), "migrate: counts on vCPU %d", a);
	check_phase(name, &p0, &p1, EXITS);

	if (!t_check(!t_pin(b), "migrate: forced to the second vCPU",
		     "CPU %d: %s", b, strerror(errno)))
		return t_done();
	work();
	sample(fd, &p2);
	snprintf(name, sizeof(name), "migrate: counts on vCPU %d after the move", b);
	check_phase(name, &p1, &p2, EXITS);

	t_pin(a);
	work();
	sample(fd, &p3);
	snprintf(name, sizeof(name), "migrate: counts back on vCPU %d", a);
	check_phase(name, &p2, &p3, EXITS);

	for (i = 0; i < HOPS; i++) {
		moved += !t_pin(i % 2 ? a : b);
		t_exits(HOP_EXITS);
		t_busy_ns(MS);
	}
	sample(fd, &p4);
	snprintf(name, sizeof(name), "migrate: counts across %d forced moves", HOPS);
	check_phase(name, &p3, &p4, HOPS * HOP_EXITS);

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
