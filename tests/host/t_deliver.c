// SPDX-License-Identifier: GPL-2.0
/*
 * t_deliver: each vCPU thread delivers its own counters' wraps; a guest
 * call on another vCPU neither delivers them nor touches the counters
 * to find them (kvm/kvmpfm_overflow.c).
 *
 * A system-wide context is in on vCPU b and counts b's thread's context
 * switches (the admin's event map aliases cycles to the host's
 * context-switches software event), its PMD at -1 with a short reset of
 * 0: the next switch of b's thread wraps it, once. The context samples
 * into a one-page buffer (the default format), asking for no
 * notification: each overflow is recorded and short-resets the PMD, and
 * counting goes on (without a format, perfmon2 v2.8x masks monitoring at
 * such an overflow). Then:
 *
 *   kicked     b's thread goes to sleep (its own switch wraps the counter):
 *              it is woken and delivers the wrap on its own, no guest call
 *              anywhere, no counter operation from another thread
 *   parked     b's thread vforks and waits for the child (a killable wait,
 *              which the kick does not end): the wrap of that switch waits
 *              for b. A DOORBELL on vCPU a (PMU_INFO) leaves it there: no
 *              counter operation from outside b's thread (remote_counter_
 *              ops), no overflow. A READ_PMDS of b's context from a reads
 *              the PMD held at all-ones, never a wrapped value without
 *              its overflow, with one counter operation from outside (the
 *              read). Once the child exits, b's thread runs its task work
 *              (deferred_runs) and delivers the one overflow; the PMD then
 *              counts from its short reset.
 *
 * The parked case needs the wrap to happen at the switch into the wait:
 * should b's thread be preempted between its START and the vfork and
 * deliver then, the round is retried (a note says so).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "hostlib.h"

/* amd64 PERFSEL: cycles, user and kernel, enabled */
#define SEL_CYCLES	(0x76ULL | (1ULL << 16) | (1ULL << 17) | \
			 (1ULL << 20) | (1ULL << 22))
#define WAIT_NS		(5000 * MS)
#define PARK_TRIES	5

static struct hl_vm vm;
static struct hl_vcpu *va, *vb;
static uint32_t ctx;

static int stats(struct kvmpfm_vm_stats *st)
{
	memset(st, 0, sizeof(*st));
	return hl_vm_stats(&vm, st);
}

/* a: vCPU 0, b: vCPU 1; b's context counts its thread's switches */
static bool setup(void)
{
	struct kvmpfm_event_map_entry map;
	struct hl_vm_opts o;
	pfarg_pmc_t pmc;
	pfarg_pmd_t pmd;
	uint64_t buf;
	int ret;

	memset(&map, 0, sizeof(map));
	map.guest_kind = KVMPFM_EVK_GENERIC;
	map.guest_event = 0x76;
	map.host_type = PERF_TYPE_SOFTWARE;
	map.host_config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	o = hl_vm_opts_simple(2);
	o.map = &map;
	o.map_nr = 1;
	if (!hl_check_vm("deliver_setup_vm", hl_vm_create(&vm, &o)))
		return false;
	va = &vm.vcpus[0];
	vb = &vm.vcpus[1];
	buf = hl_gpa_alloc(&vm, HL_PAGE);
	ret = cb_create_smpl(&vb->cb, PFM_FL_SYSTEM_WIDE, HL_PAGE, &ctx);
	ret = ret ? ret : cb_smpl_register(&vb->cb, ctx, 0, 1, &buf);
	cb_pmc_init(&pmc, 0, 0, SEL_CYCLES);
	ret = ret ? ret : cb_write_pmcs(&vb->cb, ctx, &pmc, 1);
	cb_pmd_init(&pmd, 0, 0, 0);
	ret = ret ? ret : cb_write_pmds(&vb->cb, ctx, &pmd, 1);
	ret = ret ? ret : cb_load(&vb->cb, ctx, vb->index, 0, 0,
				  vb->guest_tgid);
	return t_check(!ret, "deliver_setup_context",
		       "context on vCPU b: %s (err_index %u)",
		       hl_status_str(ret), vb->cb.hdr.err_index);
}

/* on b's thread: PMD0 at -1 (its next switch wraps it), counting */
static int arm_here(struct hl_vcpu *v)
{
	pfarg_pmd_t pmd;
	int ret;

	ret = cb_stop(&v->cb, ctx);
	cb_pmd_init(&pmd, 0, 0, ~0ULL);
	pmd.reg_short_reset = 0;
	ret = ret ? ret : cb_write_pmds(&v->cb, ctx, &pmd, 1);
	return ret ? ret : cb_start(&v->cb, ctx);
}

static int arm_fn(struct hl_vcpu *v, void *unused)
{
	(void)unused;
	return arm_here(v);
}

/* until the VM's stats show more than @overflows overflows, or 5 s */
static bool wait_overflows(uint64_t overflows, struct kvmpfm_vm_stats *st)
{
	struct timespec tick = { 0, 1000000 };
	uint64_t t0 = hl_mono_ns();

	do {
		if (!stats(st) && st->overflows > overflows)
			return true;
		nanosleep(&tick, NULL);
	} while (hl_mono_ns() - t0 < WAIT_NS);
	return false;
}

static void t_kicked(void)
{
	struct kvmpfm_vm_stats s0, s1;
	bool ok;
	int ret;

	stats(&s0);
	/* b returns from the call and sleeps: that switch wraps the PMD */
	ret = hl_call(vb, arm_fn, NULL);
	ok = !ret && wait_overflows(s0.overflows, &s1);
	t_check(ok && s1.overflows == s0.overflows + 1 &&
		s1.deferred_runs > s0.deferred_runs &&
		s1.remote_counter_ops == s0.remote_counter_ops &&
		s1.doorbells == s0.doorbells + 3,
		"asleep_vcpu_kicked_delivers_own_wrap",
		"status %s; no call since: overflows +%" PRIu64
		" deferred_runs +%" PRIu64 " remote_counter_ops +%" PRIu64
		" doorbells +%" PRIu64 " (want 1, >0, 0, 3: stop, write, start)",
		hl_status_str(ret), (uint64_t)(s1.overflows - s0.overflows),
		(uint64_t)(s1.deferred_runs - s0.deferred_runs),
		(uint64_t)(s1.remote_counter_ops - s0.remote_counter_ops),
		(uint64_t)(s1.doorbells - s0.doorbells));
}

struct park {
	int ready[2], go[2];
	int ret;
};

/*
 * On b's thread: arm, then vfork. The parent waits for the child in a
 * killable sleep that a task work's kick does not end; the child tells
 * the test it is there and waits for its word.
 */
static int park_fn(struct hl_vcpu *v, void *p)
{
	struct park *k = p;
	pid_t pid;
	char c = 0;
	int ret;

	ret = arm_here(v);
	if (ret)
		return ret;
	pid = vfork();
	if (pid == 0) {
		if (write(k->ready[1], &c, 1) != 1 ||
		    read(k->go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	if (pid < 0)
		return -errno;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* b's thread state (/proc/self/task/TID/stat), '?' if unreadable */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *e;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	e = strrchr(buf, ')');
	return e && e[1] == ' ' ? e[2] : '?';
}

/* b in its killable wait for the vfork child: 'D' */
static bool parked(pid_t tid)
{
	struct timespec tick = { 0, 1000000 };
	uint64_t t0 = hl_mono_ns();

	do {
		if (thread_state(tid) == 'D')
			return true;
		nanosleep(&tick, NULL);
	} while (hl_mono_ns() - t0 < WAIT_NS);
	return false;
}

static void unpark(struct park *k)
{
	char c = 0;

	if (write(k->go[1], &c, 1) != 1)
		t_note("park: cannot release the child: %s", strerror(errno));
	k->ret = hl_call_wait(vb);
	close(k->ready[0]);
	close(k->ready[1]);
	close(k->go[0]);
	close(k->go[1]);
}

/*
 * b parked with its wrap not delivered: 1; delivered before the park
 * (b preempted between START and vfork): 0, b released; trouble: -1
 */
static int park(struct park *k, struct kvmpfm_vm_stats *s1)
{
	struct kvmpfm_vm_stats s0;
	char c;

	if (pipe(k->ready) || pipe(k->go)) {
		t_check(false, "park_setup", "pipe: %s", strerror(errno));
		return -1;
	}
	stats(&s0);
	hl_call_async(vb, park_fn, k);
	if (read(k->ready[0], &c, 1) != 1 || !parked(vb->tid)) {
		t_check(false, "park_setup",
			"vCPU b's thread not in its wait for the child (%c)",
			thread_state(vb->tid));
		unpark(k);
		return -1;
	}
	stats(s1);
	if (s1->overflows == s0.overflows)
		return 1;
	unpark(k);
	return 0;
}

static void t_parked(void)
{
	struct kvmpfm_vm_stats s1, s2, s3, s4;
	uint64_t held = 0, after = 0;
	struct pvpfm_pmu_info info;
	struct park k;
	int ret, ret2, tries, r = 0;

	for (tries = 1; tries <= PARK_TRIES; tries++) {
		r = park(&k, &s1);
		if (r)
			break;
		t_note("park: vCPU b delivered before its wait, try %d",
		       tries);
	}
	if (r <= 0) {
		t_check(false, "park_setup", "vCPU b never parked with its "
			"wrap pending in %d tries", PARK_TRIES);
		return;
	}
	/* a call on a about nothing of b's */
	ret = cb_pmu_info(&va->cb, &info);
	stats(&s2);
	t_check(!ret && s2.remote_counter_ops == s1.remote_counter_ops &&
		s2.overflows == s1.overflows,
		"doorbell_leaves_other_vcpu_wrap",
		"status %s; while vCPU b waits with its wrap: a DOORBELL on "
		"a made remote_counter_ops +%" PRIu64 ", overflows +%" PRIu64
		" (want 0, 0: b delivers its own)", hl_status_str(ret),
		(uint64_t)(s2.remote_counter_ops - s1.remote_counter_ops),
		(uint64_t)(s2.overflows - s1.overflows));
	/* a reads b's PMD: the engine's own read, held short of the wrap */
	ret = cb_read_pmd(&va->cb, ctx, 0, 0, &held);
	stats(&s3);
	t_check(!ret && held == ~0ULL &&
		s3.remote_counter_ops == s2.remote_counter_ops + 1 &&
		s3.overflows == s2.overflows,
		"read_from_other_vcpu_held_at_all_ones",
		"status %s: PMD %#" PRIx64 " (want all-ones until b delivers)"
		", remote_counter_ops +%" PRIu64 " (want 1: the read)"
		", overflows +%" PRIu64, hl_status_str(ret), held,
		(uint64_t)(s3.remote_counter_ops - s2.remote_counter_ops),
		(uint64_t)(s3.overflows - s2.overflows));
	t_check(s3.deferred_runs == s1.deferred_runs,
		"parked_vcpu_ran_no_task_work",
		"deferred_runs +%" PRIu64 " while vCPU b waited",
		(uint64_t)(s3.deferred_runs - s1.deferred_runs));
	unpark(&k);
	stats(&s4);
	ret = cb_read_pmd(&va->cb, ctx, 0, 0, &after);
	t_check(!k.ret && s4.overflows == s3.overflows + 1 &&
		s4.deferred_runs > s3.deferred_runs,
		"released_vcpu_delivers_own_wrap",
		"park %s; once b ran: overflows +%" PRIu64
		", deferred_runs +%" PRIu64 " (want 1, >0)",
		hl_status_str(k.ret), (uint64_t)(s4.overflows - s3.overflows),
		(uint64_t)(s4.deferred_runs - s3.deferred_runs));
	t_note("parked in try %d: a's DOORBELL remote_counter_ops +%" PRIu64
	       " overflows +%" PRIu64 "; a's read %#" PRIx64
	       " remote_counter_ops +%" PRIu64 "; b released: overflows +%"
	       PRIu64 " deferred_runs +%" PRIu64 ", PMD then %" PRIu64, tries,
	       (uint64_t)(s2.remote_counter_ops - s1.remote_counter_ops),
	       (uint64_t)(s2.overflows - s1.overflows), held,
	       (uint64_t)(s3.remote_counter_ops - s2.remote_counter_ops),
	       (uint64_t)(s4.overflows - s3.overflows),
	       (uint64_t)(s4.deferred_runs - s3.deferred_runs), after);
	t_check(!ret && after < 1000,
		"read_after_delivery_counts_from_reset",
		"status %s: PMD %#" PRIx64 " (want the switches since the "
		"short reset, 0)", hl_status_str(ret), after);
	ret = cb_stop(&vb->cb, ctx);
	ret2 = cb_unload(&vb->cb, ctx);
	HL_EXPECT("deliver_unload", ret ? ret : ret2, 0);
}

int main(void)
{
	hl_init();
	if (setup()) {
		t_kicked();
		t_parked();
		cb_destroy(&vb->cb, ctx);
	}
	hl_vm_destroy(&vm);
	hl_check_module_idle("deliver_module_idle");
	return t_done();
}
