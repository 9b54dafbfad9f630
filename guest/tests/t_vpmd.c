// SPDX-License-Identifier: GPL-2.0
/*
 * Self-monitoring on the virtual PMDs (PVPFM_VPMD_*): a per-thread context
 * loaded on the calling thread counts the hypervisor events of the vCPU
 * while, and only while, that thread runs and the context is started.
 *
 * Exact checks use counts, not clocks: the thread makes N VM exits (CPUID)
 * and VM_EXITS must grow by at least N; no HALT_EXITS while it is in;
 * nothing moves after pfm_stop. Times are checked loosely (VCPU_RUN_NS
 * grows while the thread runs, by no more than the wall time plus 10 ms)
 * and printed against the thread's CPU time: host and guest clocks can
 * disagree badly on a loaded nested rig.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "t_common.h"

#define NR_VPMDS	(PVPFM_VPMD_END - PVPFM_VPMD_VCPU_RUN_NS)
#define NR_EXITS	1000

static const char *const vpmd_names[NR_VPMDS] = {
	"VCPU_RUN_NS", "VM_EXITS", "HALT_EXITS", "HOST_PREEMPT", "STEAL_NS",
	"HOST_PAGE_FAULTS",
};

static int read_all(int fd, uint64_t *val)
{
	pfarg_pmd_t pd[NR_VPMDS];
	int i;

	memset(pd, 0, sizeof(pd));
	for (i = 0; i < NR_VPMDS; i++)
		pd[i].reg_num = PVPFM_VPMD_VCPU_RUN_NS + i;
	if (pfm_read_pmds(fd, pd, NR_VPMDS))
		return -1;
	for (i = 0; i < NR_VPMDS; i++)
		val[i] = pd[i].reg_value;
	return 0;
}

#define V(x)	(PVPFM_VPMD_##x - PVPFM_VPMD_VCPU_RUN_NS)

int main(void)
{
	uint64_t before[NR_VPMDS], after[NR_VPMDS], later[NR_VPMDS];
	uint64_t t0, t1, cpu0, cpu1, wall, cpu, mid[NR_VPMDS];
	pfarg_pmd_t pd[NR_VPMDS];
	long long swerr0, swerr1;
	int fd, i, bad = -1;

	fd = t_create(0);
	if (!t_expect_ok("vpmd: create a per-thread context", fd))
		return t_done();

	memset(pd, 0, sizeof(pd));
	for (i = 0; i < NR_VPMDS; i++)
		pd[i].reg_num = PVPFM_VPMD_VCPU_RUN_NS + i;
	if (pfm_write_pmds(fd, pd, NR_VPMDS)) {
		for (i = 0; i < NR_VPMDS && bad < 0; i++)
			if (PFM_REG_HAS_ERROR(pd[i].reg_flags))
				bad = i;
		t_fail("vpmd: write the six virtual PMDs", "errno %s, entry %d (%s) flags %#x",
		       strerrorname_np(errno), bad,
		       bad >= 0 ? vpmd_names[bad] : "?",
		       bad >= 0 ? pd[bad].reg_flags : 0);
		return t_done();
	}
	t_pass("vpmd: write the six virtual PMDs");

	swerr0 = t_sysfs_num("device/switch_errors", -1);
	if (!t_expect_ok("vpmd: load on self", t_load(fd, t_gettid(), 0)))
		return t_done();
	if (!t_expect_ok("vpmd: start", pfm_start(fd, NULL)))
		return t_done();

	t0 = t_now_ns();
	cpu0 = t_thread_cpu_ns();
	t_busy_ns(100 * MS);
	/* some sleeps: the context goes out and in again */
	for (i = 0; i < 5; i++)
		t_sleep_ns(2 * MS);
	if (read_all(fd, before)) {
		t_fail("vpmd: read while counting", "errno %s",
		       strerrorname_np(errno));
		return t_done();
	}
	/* VM exits of this thread, counted while started */
	t_exits(NR_EXITS);
	if (read_all(fd, mid)) {
		t_fail("vpmd: read while counting", "errno %s",
		       strerrorname_np(errno));
		return t_done();
	}
	t_busy_ns(100 * MS);
	t_expect_ok("vpmd: stop", pfm_stop(fd));
	cpu1 = t_thread_cpu_ns();
	t1 = t_now_ns();
	read_all(fd, after);
	swerr1 = t_sysfs_num("device/switch_errors", -1);
	wall = t1 - t0;
	cpu = cpu1 - cpu0;

	printf("vpmd: VCPU_RUN_NS %llu ns; thread CPU time %llu ns, wall %llu ns\n",
	       (unsigned long long)after[V(VCPU_RUN_NS)],
	       (unsigned long long)cpu, (unsigned long long)wall);
	t_check(after[V(VCPU_RUN_NS)] > mid[V(VCPU_RUN_NS)] &&
		after[V(VCPU_RUN_NS)] <= wall + 10 * MS,
		"vpmd: VCPU_RUN_NS grows while the thread runs",
		"%llu ns, %llu ns before a 100 ms busy loop; wall %llu ns",
		(unsigned long long)after[V(VCPU_RUN_NS)],
		(unsigned long long)mid[V(VCPU_RUN_NS)],
		(unsigned long long)wall);
	t_check(mid[V(VM_EXITS)] - before[V(VM_EXITS)] >= NR_EXITS,
		"vpmd: VM_EXITS counts the thread's exits",
		"+%llu for %d exits (CPUID) made",
		(unsigned long long)(mid[V(VM_EXITS)] - before[V(VM_EXITS)]),
		NR_EXITS);
	/* a refused SWITCH leaves the guest's idea of in or out wrong */
	t_check(swerr1 == swerr0, "vpmd: no SWITCH refused",
		"switch_errors %lld -> %lld, the last %lld", swerr0, swerr1,
		t_sysfs_num("device/last_switch_error", 0));
	t_check(after[V(HALT_EXITS)] == 0,
		"vpmd: no halt exits while the thread runs",
		"%llu: the vCPU halts only in the idle task, never with this thread in",
		(unsigned long long)after[V(HALT_EXITS)]);
	t_check(after[V(STEAL_NS)] <= wall,
		"vpmd: STEAL_NS within the wall time", "%llu ns, wall %llu ns",
		(unsigned long long)after[V(STEAL_NS)],
		(unsigned long long)wall);

	/* stopped: nothing moves, whatever the thread does */
	t_busy_ns(50 * MS);
	read_all(fd, later);
	t_check(!memcmp(after, later, sizeof(after)),
		"vpmd: counting stops at pfm_stop",
		"RUN_NS %llu -> %llu, VM_EXITS %llu -> %llu",
		(unsigned long long)after[V(VCPU_RUN_NS)],
		(unsigned long long)later[V(VCPU_RUN_NS)],
		(unsigned long long)after[V(VM_EXITS)],
		(unsigned long long)later[V(VM_EXITS)]);

	/* 64-bit values: counting goes on from the written value */
	memset(pd, 0, sizeof(pd));
	pd[0].reg_num = PVPFM_VPMD_VCPU_RUN_NS;
	pd[0].reg_value = 1ULL << 40;
	if (t_expect_ok("vpmd: write a 64-bit value while loaded",
			pfm_write_pmds(fd, pd, 1))) {
		pfm_start(fd, NULL);
		t_busy_ns(20 * MS);
		pfm_stop(fd);
		read_all(fd, later);
		t_check(later[V(VCPU_RUN_NS)] > (1ULL << 40) &&
			later[V(VCPU_RUN_NS)] < (1ULL << 40) + 10 * SEC,
			"vpmd: counts on from the written value",
			"%#llx, want a little above 1 << 40",
			(unsigned long long)later[V(VCPU_RUN_NS)]);
	}

	t_expect_ok("vpmd: unload", pfm_unload_context(fd));
	t_expect_ok("vpmd: close", close(fd));
	return t_done();
}
