// SPDX-License-Identifier: GPL-2.0
/*
 * t_count: counting on the virtual PMDs (256..261) against truths the test
 * measures itself, with the vCPU really running guest code where the event
 * needs it.
 *
 *   VCPU_RUN_NS      task clock of the vCPU thread: equals the thread's own
 *                    CLOCK_THREAD_CPUTIME_ID between START and STOP,
 *                    within 10% + 2 ms; other vCPUs' threads do not count
 *   VM_EXITS         >= the KVM_EXIT_IO exits userspace saw (each OUT is
 *                    one), and not wildly more (<= 2 x + 1000)
 *   HALT_EXITS       >= the in-kernel halts the vCPU made (irqchip VM, HLT
 *                    with interrupts off, woken by a signal each time)
 *   HOST_PAGE_FAULTS >= the fresh guest pages the guest touched
 *   HOST_PREEMPT     >= 1 while a hog on the same host CPU competes
 *   STEAL_NS         the thread's run_delay (schedstat), measured by the
 *                    thread itself around START/STOP: never above it (+1
 *                    ms), and within 10% + 10 ms of it
 * Also: no counting while stopped; 64-bit PMDs across the 48-bit backing
 * counter's wrap; a 64-bit overflow without notification: sampling (the
 * default format), it restarts from the short reset value; without a
 * format it saturates the context (perfmon2 v2.8x: masked, its counts
 * frozen, no message, RESTART refused until unloaded); the shortest
 * periods (1), overflowing without end in two sets that switch on every
 * overflow, leave the guest running.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <sys/ioctl.h>

#include "hostlib.h"

static struct hl_vm vm;

static uint32_t sys_ctx(struct hl_vcpu *v, uint16_t pmd, uint64_t value)
{
	pfarg_pmd_t p;
	uint32_t id = 0;
	int ret;

	ret = cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &id);
	if (!ret) {
		cb_pmd_init(&p, pmd, 0, value);
		ret = cb_write_pmds(&v->cb, id, &p, 1);
	}
	if (!ret)
		ret = cb_load(&v->cb, id, v->index, 0, 0, v->guest_tgid);
	if (ret) {
		t_note("%s(vCPU %d, PMD %u): %s", __func__, v->index, pmd,
		       hl_status_str(ret));
		return 0;
	}
	return id;
}

static int busy_fn(struct hl_vcpu *v, void *p)
{
	(void)v;
	hl_busy_ns(*(uint64_t *)p);
	return 0;
}

static void ctx_done(struct hl_vcpu *v, uint32_t id)
{
	cb_unload(&v->cb, id);
	cb_destroy(&v->cb, id);
}

static void t_run_ns(void)
{
	struct hl_vcpu *v0 = &vm.vcpus[0], *v1 = &vm.vcpus[1];
	uint64_t val = 0, val2 = 0, cpu = 0, busy = 0, other = 0;
	uint64_t other_cpu = 0, other_cpu2 = 0;
	uint32_t id = sys_ctx(v0, PVPFM_VPMD_VCPU_RUN_NS, 0);
	uint32_t id1 = sys_ctx(v1, PVPFM_VPMD_VCPU_RUN_NS, 0);
	int ret;

	if (!t_check(id && id1, "run_ns_setup", "no context"))
		return;
	hl_thread_cpu_of(v1->tid, &other_cpu);
	HL_EXPECT("run_ns_start_other_vcpu", cb_start(&v1->cb, id1), 0);
	ret = hl_start_busy_stop(v0, id, 100 * MS, &cpu, &busy);
	HL_EXPECT("run_ns_start_busy_stop", ret, 0);
	HL_EXPECT("run_ns_stop_other_vcpu", cb_stop(&v1->cb, id1), 0);
	hl_thread_cpu_of(v1->tid, &other_cpu2);
	other_cpu = other_cpu2 - other_cpu;
	cb_read_pmd(&v0->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &val);
	t_check(hl_bracket(val, busy, cpu), "run_ns_equals_thread_cpu_time",
		"VCPU_RUN_NS %" PRIu64 " ns, thread CPU %" PRIu64
		" ns between START and STOP, %" PRIu64 " ns around them "
		"(10%% + 1 ms)", val, busy, cpu);
	t_check(hl_within(val, busy, 0.10, 2 * MS), "run_ns_within_10pct_2ms",
		"VCPU_RUN_NS %" PRIu64 " ns, busy loop %" PRIu64
		" ns of thread CPU: more than 10%% + 2 ms apart", val, busy);
	t_note("VCPU_RUN_NS %" PRIu64 " ns; thread CPU %" PRIu64 " ns in the "
	       "busy loop, %" PRIu64 " ns from before START to after STOP",
	       val, busy, cpu);
	cb_read_pmd(&v1->cb, id1, 0, PVPFM_VPMD_VCPU_RUN_NS, &other);
	/* vCPU 1's thread only served its two doorbells meanwhile */
	t_check(hl_bracket(other, 0, other_cpu) && other < busy / 10,
		"run_ns_other_vcpu_counts_own_thread",
		"idle vCPU 1 counted %" PRIu64 " ns, its thread used %" PRIu64
		" ns of CPU, while vCPU 0 burnt %" PRIu64 " ns", other,
		other_cpu, busy);

	/* stopped: nothing counts, however much the thread runs */
	cb_read_pmd(&v0->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &val);
	hl_call(v0, busy_fn, &(uint64_t){ 30 * MS });
	cb_read_pmd(&v0->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &val2);
	t_check(val == val2, "run_ns_stopped_does_not_count",
		"%" PRIu64 " then %" PRIu64 " after 30 ms of CPU", val, val2);
	ctx_done(v0, id);
	ctx_done(v1, id1);
}

struct run_req {
	uint32_t ctx;
	unsigned int n;
	uint64_t io;
	int run_ret;
};

static int io_fn(struct hl_vcpu *v, void *p)
{
	struct run_req *r = p;
	int ret = cb_start(&v->cb, r->ctx), ret2;

	if (ret)
		return ret;
	r->run_ret = hl_run_io(v, r->n);
	r->io = v->exits_io;
	ret2 = cb_stop(&v->cb, r->ctx);
	return ret2;
}

static int io_stopped_fn(struct hl_vcpu *v, void *p)
{
	(void)p;
	return hl_run_io(v, 500);
}

static void t_vm_exits(void)
{
	struct hl_vcpu *v = &vm.vcpus[0];
	struct run_req r = { .n = 3000 };
	uint64_t val = 0;
	int ret;

	r.ctx = sys_ctx(v, PVPFM_VPMD_VM_EXITS, 0);
	if (!t_check(r.ctx, "vm_exits_setup", "no context"))
		return;
	ret = hl_call(v, io_fn, &r);
	t_check(!ret && !r.run_ret && r.io == r.n, "vm_exits_guest_ran",
		"start/stop %s, KVM_RUN %s, %" PRIu64 " IO exits of %u",
		hl_status_str(ret), hl_errname(r.run_ret), r.io, r.n);
	cb_read_pmd(&v->cb, r.ctx, 0, PVPFM_VPMD_VM_EXITS, &val);
	t_check(val >= r.io && val <= 2 * r.io + 1000, "vm_exits_vs_io_exits",
		"VM_EXITS %" PRIu64 ", userspace saw %" PRIu64
		" IO exits (want io <= VM_EXITS <= 2 io + 1000)", val, r.io);
	t_note("VM_EXITS %" PRIu64 " for %" PRIu64 " KVM_EXIT_IO", val, r.io);

	/* a second run adds to it; stopped runs do not */
	r.n = 500;
	hl_call(v, io_fn, &r);
	{
		uint64_t val2 = 0, val3 = 0;

		cb_read_pmd(&v->cb, r.ctx, 0, PVPFM_VPMD_VM_EXITS, &val2);
		t_check(val2 - val >= 500, "vm_exits_accumulate",
			"%" PRIu64 " then %" PRIu64 " after 500 more OUTs",
			val, val2);
		hl_call(v, io_stopped_fn, NULL);
		cb_read_pmd(&v->cb, r.ctx, 0, PVPFM_VPMD_VM_EXITS, &val3);
		t_check(val3 == val2, "vm_exits_stopped_not_counted",
			"%" PRIu64 " then %" PRIu64 " after 500 OUTs while "
			"stopped", val2, val3);
	}
	ctx_done(v, r.ctx);
}

struct halt_req {
	uint32_t ctx;
	bool setup;
	int ret;
};

static int halt_fn(struct hl_vcpu *v, void *p)
{
	struct halt_req *r = p;

	if (r->setup) {
		r->ret = hl_vcpu_setup(v, HL_CODE_HLT, 0, 0);
		if (r->ret)
			return r->ret;
	}
	return hl_run_until_kicked(v);
}

static void t_halt_exits(void)
{
	struct timespec ts = { 0, 50 * MS };
	struct kvm_mp_state mp;
	struct hl_vm_opts o;
	struct hl_vm hvm;
	struct hl_vcpu *v;
	struct halt_req r = { 0 };
	uint64_t val = 0;
	int ret, i, halted = 0, runs = 5;

	o = hl_vm_opts_simple(1);
	o.irqchip = true;
	ret = hl_vm_create(&hvm, &o);
	if (!t_check(!ret, "halt_exits_setup", "irqchip VM: %s",
		     hl_errname(ret)))
		return;
	v = &hvm.vcpus[0];
	r.ctx = sys_ctx(v, PVPFM_VPMD_HALT_EXITS, 0);
	HL_EXPECT("halt_exits_start", cb_start(&v->cb, r.ctx), 0);
	for (i = 0; i < runs; i++) {
		r.setup = i == 0;
		hl_call_async(v, halt_fn, &r);
		nanosleep(&ts, NULL);
		ret = hl_kick_and_wait(v);
		if (ret)
			break;
		memset(&mp, 0, sizeof(mp));
		if (!ioctl(v->fd, KVM_GET_MP_STATE, &mp) &&
		    mp.mp_state == KVM_MP_STATE_HALTED)
			halted++;
	}
	HL_EXPECT("halt_exits_guest_ran", ret, 0);
	HL_EXPECT("halt_exits_stop", cb_stop(&v->cb, r.ctx), 0);
	cb_read_pmd(&v->cb, r.ctx, 0, PVPFM_VPMD_HALT_EXITS, &val);
	t_check(halted >= 1 && val >= (uint64_t)halted && val <= 10ULL * runs,
		"halt_exits_vs_halts",
		"HALT_EXITS %" PRIu64 ", the vCPU halted in the kernel in %d "
		"of %d runs (want halts <= HALT_EXITS <= %d)", val, halted,
		runs, 10 * runs);
	t_note("HALT_EXITS %" PRIu64 " for %d in-kernel halts", val, halted);
	ctx_done(v, r.ctx);
	hl_vm_destroy(&hvm);
}

struct touch_req {
	uint32_t ctx;
	int run_ret;
};

static int touch_fn(struct hl_vcpu *v, void *p)
{
	struct touch_req *r = p;
	int ret = cb_start(&v->cb, r->ctx);

	if (ret)
		return ret;
	r->run_ret = hl_vcpu_setup(v, HL_CODE_TOUCH, HL_TOUCH_PAGES,
				   HL_TOUCH_GPA >> 4);
	if (!r->run_ret)
		r->run_ret = hl_run_to_done(v);
	return cb_stop(&v->cb, r->ctx);
}

static void t_page_faults(void)
{
	struct touch_req r = { 0 };
	struct hl_vm fvm;
	struct hl_vcpu *v;
	uint64_t val = 0;
	uint8_t *page;
	int ret, i, touched = 0;

	/* a fresh VM: none of its touch pages is mapped yet */
	if (!hl_check_vm("page_faults_setup", hl_vm_simple(&fvm, 1)))
		return;
	v = &fvm.vcpus[0];
	r.ctx = sys_ctx(v, PVPFM_VPMD_HOST_PAGE_FAULTS, 0);
	ret = hl_call(v, touch_fn, &r);
	for (i = 0; i < HL_TOUCH_PAGES; i++) {
		page = hl_hva(&fvm, HL_TOUCH_GPA + i * HL_PAGE);
		touched += page[0] == 1;
	}
	t_check(!ret && !r.run_ret && touched == HL_TOUCH_PAGES,
		"page_faults_guest_ran", "start/stop %s, run %s, %d pages written",
		hl_status_str(ret), hl_errname(r.run_ret), touched);
	cb_read_pmd(&v->cb, r.ctx, 0, PVPFM_VPMD_HOST_PAGE_FAULTS, &val);
	t_check(val >= HL_TOUCH_PAGES && val <= 4 * HL_TOUCH_PAGES + 100,
		"page_faults_vs_fresh_pages",
		"HOST_PAGE_FAULTS %" PRIu64 " for %d fresh guest pages "
		"(want pages <= faults <= 4 pages + 100)", val, HL_TOUCH_PAGES);
	t_note("HOST_PAGE_FAULTS %" PRIu64 " for %d fresh pages", val,
	       HL_TOUCH_PAGES);
	ctx_done(v, r.ctx);
	hl_vm_destroy(&fvm);
}

static volatile int hog_stop;

static void *hog(void *p)
{
	(void)p;
	hl_pin_cpu(0);
	while (!hog_stop)
		hl_busy_ns(1 * MS);
	return NULL;
}

struct steal_req {
	uint32_t ctx;
	uint64_t d0, d1;
	int ret, run_ret;
};

static int steal_fn(struct hl_vcpu *v, void *p)
{
	struct steal_req *r = p;
	int ret;

	hl_pin_cpu(0);
	r->run_ret = hl_vcpu_setup(v, HL_CODE_SPIN, 0, 0);
	hl_run_delay_ns(v->tid, &r->d0);
	ret = cb_start(&v->cb, r->ctx);
	if (!ret && !r->run_ret)
		r->run_ret = hl_run_until_kicked(v);
	ret = ret ? ret : cb_stop(&v->cb, r->ctx);
	hl_run_delay_ns(v->tid, &r->d1);
	return ret;
}

static void t_preempt_steal(void)
{
	struct timespec ts = { 0, 300 * MS };
	struct hl_vcpu *v = &vm.vcpus[0];
	struct steal_req r = { 0 };
	uint64_t preempt = 0, steal = 0, delay;
	pfarg_pmd_t p[2];
	pthread_t h;
	int ret;

	ret = cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &r.ctx);
	cb_pmd_init(&p[0], PVPFM_VPMD_HOST_PREEMPT, 0, 0);
	cb_pmd_init(&p[1], PVPFM_VPMD_STEAL_NS, 0, 0);
	ret = ret ? ret : cb_write_pmds(&v->cb, r.ctx, p, 2);
	ret = ret ? ret : cb_load(&v->cb, r.ctx, 0, 0, 0, v->guest_tgid);
	if (!t_check(!ret, "preempt_steal_setup", "%s", hl_status_str(ret)))
		return;
	hl_pin_cpu(1);
	hog_stop = 0;
	pthread_create(&h, NULL, hog, NULL);
	hl_call_async(v, steal_fn, &r);
	nanosleep(&ts, NULL);
	ret = hl_kick_and_wait(v);
	hog_stop = 1;
	pthread_join(h, NULL);
	t_check(!ret && !r.run_ret, "preempt_steal_guest_ran",
		"start/stop %s, run %s", hl_status_str(ret),
		hl_errname(r.run_ret));
	cb_read_pmd(&v->cb, r.ctx, 0, PVPFM_VPMD_HOST_PREEMPT, &preempt);
	cb_read_pmd(&v->cb, r.ctx, 0, PVPFM_VPMD_STEAL_NS, &steal);
	delay = r.d1 - r.d0;
	t_check(preempt >= 1, "host_preempt_counts",
		"HOST_PREEMPT %" PRIu64 " with a hog on the vCPU's host CPU "
		"for 300 ms (run_delay grew %" PRIu64 " ns)", preempt, delay);
	t_check(steal > 0 && steal <= delay + 1 * MS &&
		hl_within(steal, delay, 0.10, 10 * MS), "steal_ns_vs_run_delay",
		"STEAL_NS %" PRIu64 " ns, schedstat run_delay %" PRIu64
		" ns (want <= run_delay + 1 ms, within 10%% + 10 ms)",
		steal, delay);
	t_note("HOST_PREEMPT %" PRIu64 ", STEAL_NS %" PRIu64
	       " ns, run_delay %" PRIu64 " ns", preempt, steal, delay);
	ctx_done(v, r.ctx);
	{
		cpu_set_t all;

		CPU_ZERO(&all);
		CPU_SET(0, &all);
		CPU_SET(1, &all);
		sched_setaffinity(0, sizeof(all), &all);
	}
}

/* 64-bit PMDs over the 48-bit backing counter */
static void t_wide(void)
{
	const uint64_t start = 0x5a5a000000000000ULL + (1ULL << 48) - 2 * MS;
	struct hl_vcpu *v = &vm.vcpus[0];
	struct kvmpfm_vm_stats s0, s1;
	uint64_t val = 0, cpu = 0, busy = 0;
	uint32_t id = sys_ctx(v, PVPFM_VPMD_VCPU_RUN_NS, start);
	int ret;

	hl_vm_stats(&vm, &s0);
	ret = hl_start_busy_stop(v, id, 10 * MS, &cpu, &busy);
	cb_read_pmd(&v->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &val);
	hl_vm_stats(&vm, &s1);
	t_check(!ret && (val >> 48) == 0x5a5b &&
		hl_bracket(val - start, busy, cpu) &&
		s1.overflows == s0.overflows,
		"pmd_64bit_carry_across_48bit_wrap",
		"start %#" PRIx64 " now %#" PRIx64 " (+%" PRIu64 " ns, CPU %"
		PRIu64 "..%" PRIu64 " ns), overflows +%" PRIu64, start, val,
		val - start, busy, cpu, (uint64_t)(s1.overflows - s0.overflows));
	ctx_done(v, id);
}

/*
 * The backing counter wraps (48 bits) or the PMD overflows (64 bits) just
 * before STOP: the host handles wraps in deferred work, which may run
 * after the STOP. Right after STOP (what a guest reads next) and once the
 * host had time to settle (50 ms later) the PMD must be right: the CPU
 * time counted, upper bits carried.
 */
struct wrap_result {
	int bad, bad_settled;
	uint64_t lead, val, val_settled, lo, hi;
};

static void wrap_note(struct wrap_result *w, uint64_t lead, uint64_t val,
		      uint64_t settled, uint64_t lo, uint64_t hi, bool now_ok,
		      bool settled_ok)
{
	if ((!now_ok || !settled_ok) && !w->bad && !w->bad_settled) {
		w->lead = lead;
		w->val = val;
		w->val_settled = settled;
		w->lo = lo;
		w->hi = hi;
	}
	w->bad += !now_ok;
	w->bad_settled += !settled_ok;
}

static void t_wrap_at_stop(void)
{
	const uint64_t upper = 0x1230000000000000ULL;
	const struct timespec settle = { 0, 50 * MS };
	struct hl_vcpu *v = &vm.vcpus[0];
	struct wrap_result w48 = { 0 }, w64 = { 0 };
	uint64_t val, val2, cpu, busy, lead, start;
	const char *env = getenv("T_COUNT_WRAP_TRIES");
	int i, ret, tries = env ? atoi(env) : 12;
	uint32_t id;

	for (i = 0; i < tries; i++) {
		/* wrap 0.1 .. 1.2 ms into a 1.5 ms busy loop */
		lead = (100 + 100 * (i % 12)) * 1000ULL;
		start = upper + (1ULL << 48) - lead;
		id = sys_ctx(v, PVPFM_VPMD_VCPU_RUN_NS, start);
		ret = hl_start_busy_stop(v, id, 1500 * 1000ULL, &cpu, &busy);
		cb_read_pmd(&v->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &val);
		nanosleep(&settle, NULL);
		cb_read_pmd(&v->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &val2);
		wrap_note(&w48, lead, val, val2, busy, cpu,
			  !ret && hl_bracket(val - start, busy, cpu),
			  !ret && hl_bracket(val2 - start, busy, cpu));
		ctx_done(v, id);

		/*
		 * 64-bit: -lead, no notification, no format: the overflow
		 * saturates the context (masked, no reset); afterwards a
		 * small count (what ran until the mask), never negative
		 */
		id = sys_ctx(v, PVPFM_VPMD_VCPU_RUN_NS, -lead);
		ret = hl_start_busy_stop(v, id, 1500 * 1000ULL, &cpu, &busy);
		cb_read_pmd(&v->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &val);
		nanosleep(&settle, NULL);
		cb_read_pmd(&v->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &val2);
		wrap_note(&w64, lead, val, val2, busy, cpu,
			  !ret && val <= cpu + HL_BRACKET_ABS,
			  !ret && val2 <= cpu + HL_BRACKET_ABS);
		ctx_done(v, id);
	}
	t_check(!w48.bad, "wrap_48bit_read_right_after_stop",
		"%d of %d runs: the PMD read after STOP is not the start "
		"plus the time counted, carried; e.g. wrap %" PRIu64 " ns "
		"before: counted %#" PRIx64 " for thread time %" PRIu64 "..%"
		PRIu64 " ns", w48.bad, tries, w48.lead,
		(uint64_t)(w48.val - (upper + (1ULL << 48) - w48.lead)), w48.lo,
		w48.hi);
	t_check(!w48.bad_settled, "wrap_48bit_kept_after_settling",
		"%d of %d runs: 50 ms after STOP the carry is lost; e.g. wrap %"
		PRIu64 " ns before STOP: PMD %#" PRIx64 " then %#" PRIx64
		" (start %#" PRIx64 ", CPU %" PRIu64 "..%" PRIu64 " ns)",
		w48.bad_settled, tries, w48.lead, w48.val, w48.val_settled,
		(uint64_t)(upper + (1ULL << 48) - w48.lead), w48.lo, w48.hi);
	t_check(!w64.bad, "overflow_64bit_read_right_after_stop",
		"%d of %d runs: the PMD read after STOP is not the small count "
		"it wrapped to; e.g. -%" PRIu64 " ns: PMD %#" PRIx64 " (CPU %"
		PRIu64 "..%" PRIu64 " ns)", w64.bad, tries, w64.lead, w64.val,
		w64.lo, w64.hi);
	t_check(!w64.bad_settled, "overflow_64bit_kept_after_settling",
		"%d of %d runs: 50 ms after STOP the PMD is negative; e.g. -%"
		PRIu64 " ns: PMD %#" PRIx64 " then %#" PRIx64 " (CPU %" PRIu64
		"..%" PRIu64 " ns)", w64.bad_settled, tries, w64.lead, w64.val,
		w64.val_settled, w64.lo, w64.hi);
}

/*
 * -5 ms, sampling, no notification asked: the overflow is recorded (the
 * buffer far from full) and the PMD goes on from its short reset (0)
 */
static void t_short_reset(void)
{
	struct hl_vcpu *v = &vm.vcpus[0];
	uint64_t buf = hl_gpa_alloc(&vm, HL_PAGE);
	const pfm_dfl_smpl_hdr_t *hdr = hl_hva(&vm, buf);
	struct kvmpfm_vm_stats s0, s1;
	uint64_t cpu = 0, busy = 0;
	uint32_t id = 0;
	pfarg_pmd_t p;
	pfarg_msg_t m;
	int64_t skid;
	int ret;

	ret = cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE, HL_PAGE, &id);
	ret = ret ? ret : cb_smpl_register(&v->cb, id, 0, 1, &buf);
	cb_pmd_init(&p, PVPFM_VPMD_VCPU_RUN_NS, 0, -(5 * MS));
	p.reg_short_reset = 0;
	p.reg_long_reset = 12345;
	ret = ret ? ret : cb_write_pmds(&v->cb, id, &p, 1);
	ret = ret ? ret : cb_load(&v->cb, id, 0, 0, 0, v->guest_tgid);
	hl_vm_stats(&vm, &s0);
	ret = ret ? ret : hl_start_busy_stop(v, id, 30 * MS, &cpu, &busy);
	memset(&p, 0, sizeof(p));
	p.reg_num = PVPFM_VPMD_VCPU_RUN_NS;
	cb_read_pmds(&v->cb, id, &p, 1);
	hl_vm_stats(&vm, &s1);
	/*
	 * The count restarts from the short reset value when the host
	 * handles the overflow: what ran between the overflow and then (the
	 * skid) is not counted, as perfmon2 resets in its PMI handler.
	 */
	skid = (int64_t)(busy - 5 * MS) - (int64_t)p.reg_value;
	t_check(!ret && s1.overflows - s0.overflows == 1 &&
		hdr->hdr_count == 1 &&
		p.reg_last_reset_val == 0 && p.reg_value < (1ULL << 63) &&
		p.reg_value <= cpu - 5 * MS + HL_BRACKET_ABS,
		"overflow_short_reset_continues",
		"status %s overflows +%" PRIu64 " samples %" PRIu64
		" value %" PRId64 " ns (want <= CPU %" PRIu64
		" - 5 ms) last reset %#" PRIx64, hl_status_str(ret),
		(uint64_t)(s1.overflows - s0.overflows),
		(uint64_t)hdr->hdr_count, (int64_t)p.reg_value, cpu,
		(uint64_t)p.reg_last_reset_val);
	t_note("overflow skid (counted neither before nor after the reset): "
	       "%" PRId64 " us", skid / 1000);
	HL_EXPECT("overflow_without_notify_no_message",
		  cb_read_msg(&v->cb, id, &m), -EAGAIN);
	ctx_done(v, id);
}

/*
 * -5 ms, no format, no notification: the overflow masks the context and,
 * nothing notified, saturates it: the PMD stays where the mask left it
 * (started or not), no message, no eventfd signal, RESTART refused
 * (EBUSY); unloaded and loaded again, it counts on.
 */
static void t_saturate(void)
{
	struct hl_vcpu *v = &vm.vcpus[0];
	struct kvmpfm_vm_stats s0, s1;
	uint64_t cpu = 0, busy = 0, a = 0, b = 0, c = 0;
	uint32_t id = 0, st = 0;
	pfarg_pmd_t p;
	pfarg_msg_t m;
	int ret, rs;

	ret = cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &id);
	cb_pmd_init(&p, PVPFM_VPMD_VCPU_RUN_NS, 0, -(5 * MS));
	p.reg_short_reset = 0;
	p.reg_long_reset = 12345;
	ret = ret ? ret : cb_write_pmds(&v->cb, id, &p, 1);
	ret = ret ? ret : cb_load(&v->cb, id, 0, 0, 0, v->guest_tgid);
	hl_eventfd_read(v);
	hl_vm_stats(&vm, &s0);
	ret = ret ? ret : hl_start_busy_stop(v, id, 30 * MS, &cpu, &busy);
	cb_read_pmd(&v->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &a);
	hl_vm_stats(&vm, &s1);
	rs = hl_ctx_state(&v->cb, id, &st);
	t_check(!ret && !rs && s1.overflows - s0.overflows == 1 &&
		(st & PVPFM_CTX_MASKED) && !(st & PVPFM_CTX_BLOCKED) &&
		a <= cpu - 5 * MS + HL_BRACKET_ABS,
		"overflow_no_format_saturates",
		"status %s overflows +%" PRIu64 " CTX_STATE %s flags %#x, "
		"value %" PRIu64 " ns (want <= CPU %" PRIu64 " - 5 ms)",
		hl_status_str(ret), (uint64_t)(s1.overflows - s0.overflows),
		hl_status_str2(rs), st, a, cpu);
	HL_EXPECT("saturated_no_message", cb_read_msg(&v->cb, id, &m),
		  -EAGAIN);
	t_check(!hl_eventfd_read(v), "saturated_no_eventfd",
		"the eventfd was signalled for a saturation");
	/* START is taken while masked, and nothing counts */
	ret = hl_start_busy_stop(v, id, 10 * MS, NULL, NULL);
	cb_read_pmd(&v->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &b);
	t_check(!ret && a == b, "saturated_started_does_not_count",
		"START/STOP %s, PMD %" PRIu64 " then %" PRIu64 " after 10 ms",
		hl_status_str(ret), a, b);
	HL_EXPECT("saturated_restart_ebusy", cb_restart(&v->cb, id), -EBUSY);
	ret = cb_unload(&v->cb, id);
	ret = ret ? ret : cb_load(&v->cb, id, 0, 0, 0, v->guest_tgid);
	ret = ret ? ret : hl_start_busy_stop(v, id, 10 * MS, NULL, NULL);
	cb_read_pmd(&v->cb, id, 0, PVPFM_VPMD_VCPU_RUN_NS, &c);
	t_check(!ret && c > b, "saturated_reload_counts_on",
		"unload, load, START/STOP %s: PMD %" PRIu64 " then %" PRIu64,
		hl_status_str(ret), b, c);
	ctx_done(v, id);
}

/*
 * A guest may sample with the shortest periods (1 VM exit, 1 ns of run
 * time). The host must still let the vCPU run: handling an overflow must
 * not itself cause the exits (IPIs, irq_work) that overflow again without
 * end. 1000 OUTs must complete within 10 s. Without a format an overflow
 * masks monitoring unless it switches sets: the PMD is at period 1 in
 * two sets that switch on each of its overflows (PFM_SETFL_OVFL_SWITCH,
 * reg_ovfl_switch_cnt 1), each short-resetting it, so that the overflows
 * go on without end.
 */
/* host perf's throttles since the VM's bind, from its snapshot */
static uint64_t host_throttles(void)
{
	struct kvmpfm_snap_vm s;

	return hl_only_vm_snap(vm.pfm_fd, &s) ? 0 : s.host_throttles;
}

static void tiny_period(const char *name, uint16_t pmd)
{
	struct hl_vcpu *v = &vm.vcpus[0];
	struct kvmpfm_vm_stats s0, s1;
	pfarg_setdesc_t d[2];
	pfarg_pmd_t p[2];
	uint64_t base, t, ovfl, sw;
	int done_base = 0, done = 0, ret, i;
	uint32_t id;
	char n[96];

	base = hl_run_io_timed(v, 1000, 10000 * MS, &done_base);
	memset(d, 0, sizeof(d));
	for (i = 0; i < 2; i++) {
		d[i].set_id = i;
		d[i].set_flags = PFM_SETFL_OVFL_SWITCH;
		cb_pmd_init(&p[i], pmd, i, -1ULL);
		p[i].reg_short_reset = -1ULL;
		p[i].reg_ovfl_switch_cnt = 1;
	}
	id = hl_sets_ctx(v, name, d, 2, p, 2, 0, 0);
	ret = id ? cb_start(&v->cb, id) : -EINVAL;
	snprintf(n, sizeof(n), "%s_setup", name);
	if (!t_check(!ret && done_base, n, "status %s, 1000 OUTs alone %s",
		     hl_status_str(ret), done_base ? "done" : "not done")) {
		if (id)
			ctx_done(v, id);
		return;
	}
	hl_vm_stats(&vm, &s0);
	t = hl_run_io_timed(v, 1000, 10000 * MS, &done);
	hl_vm_stats(&vm, &s1);
	cb_stop(&v->cb, id);
	ovfl = s1.overflows - s0.overflows;
	sw = s1.set_switches - s0.set_switches;
	snprintf(n, sizeof(n), "%s_guest_progress", name);
	t_check(done, n, "1000 OUTs: %.1f ms alone; with PMD %u overflowing "
		"on every event (period 1) %s after %.1f s, %" PRIu64
		" overflows and %" PRIu64 " set switches meanwhile",
		base / 1e6, pmd, done ? "done" : "NOT done", t / 1e9, ovfl, sw);
	/* not masked after the first: each overflow switched sets */
	snprintf(n, sizeof(n), "%s_overflows_go_on", name);
	t_check(ovfl > 1 && sw >= 1, n, "%" PRIu64 " overflows, %" PRIu64
		" set switches during the 1000 OUTs", ovfl, sw);
	t_note("%s: 1000 OUTs %.1f ms alone, %.1f ms with period 1 (%" PRIu64
	       " overflows, %" PRIu64 " set switches; host perf throttled "
	       "%" PRIu64 " times)", name, base / 1e6, t / 1e6, ovfl, sw,
	       host_throttles());
	ctx_done(v, id);
}

int main(void)
{
	hl_init();
	hl_check_allow_host_page_faults();
	if (!hl_check_vm("count_vm_setup", hl_vm_simple(&vm, 2)))
		return t_done();
	t_run_ns();
	t_vm_exits();
	t_halt_exits();
	t_page_faults();
	t_preempt_steal();
	t_wide();
	t_wrap_at_stop();
	t_short_reset();
	t_saturate();
	tiny_period("tiny_period_vm_exits", PVPFM_VPMD_VM_EXITS);
	tiny_period("tiny_period_run_ns", PVPFM_VPMD_VCPU_RUN_NS);
	hl_vm_destroy(&vm);
	hl_check_module_idle("count_module_idle");
	return t_done();
}
