// SPDX-License-Identifier: GPL-2.0
/*
 * t_sets: event set switching in the host and SWITCH (guest context
 * switches of monitored threads), with real counting on VCPU_RUN_NS.
 *
 *   time switching   two sets, equal and unequal timeouts: both run, the
 *                    switches are counted, the sets' active durations add
 *                    up to the wall time counted (10% + 2 ms) and split as
 *                    the timeouts say; the sets' VCPU_RUN_NS add up to the
 *                    thread's CPU time (10% + 2 ms)
 *   overflow switch  a trigger PMD's overflows (reg_ovfl_switch_cnt) switch
 *                    to the next set: one switch per threshold, the
 *                    overflowed PMD reported by getinfo; a ping-pong of two
 *                    sets gives 3 overflows per 2 switches
 *   SWITCH           a per-thread context counts only while its thread is in
 *                    on some vCPU, follows it from vCPU to vCPU (also when
 *                    not switched out first), and two threads' contexts on
 *                    one vCPU each count their own share; misuse refused
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlib.h"

#define MS		1000000ULL
#define RUN_NS		PVPFM_VPMD_VCPU_RUN_NS

static struct hl_vm vm;
static struct hl_vcpu *v0, *v1;

/* a system-wide context on @v with @n sets (0..n-1), RUN_NS in each */
static uint32_t sets_ctx(struct hl_vcpu *v, int n, const uint32_t *flags,
			 const uint64_t *timeout)
{
	pfarg_setdesc_t d[4];
	pfarg_pmd_t p[4];
	uint32_t id = 0;
	int ret, i;

	memset(d, 0, sizeof(d));
	for (i = 0; i < n; i++) {
		d[i].set_id = i;
		d[i].set_flags = flags[i];
		d[i].set_timeout = timeout ? timeout[i] : 0;
		hl_pmd_init(&p[i], RUN_NS, i, 0);
	}
	ret = hl_create_ctx(v, PFM_FL_SYSTEM_WIDE, 0, &id);
	ret = ret ? ret : hl_create_sets(v, id, d, n);
	ret = ret ? ret : hl_write_pmds(v, id, p, n);
	ret = ret ? ret : hl_load(v, id, v->index, 0, 0);
	if (ret) {
		hl_note("sets_ctx: %s (err_index %u)", hl_status_str(ret),
			v->hdr.err_index);
		return 0;
	}
	return id;
}

struct timed_busy {
	uint32_t ctx;
	uint64_t ns, cpu, wall;
	int ret;
};

/* START, burn, STOP on the vCPU thread; wall time around START..STOP */
static int timed_busy_fn(struct hl_vcpu *v, void *p)
{
	struct timed_busy *r = p;
	uint64_t w0, w1, c0, c1;
	int ret, ret2;

	w0 = hl_mono_ns();
	c0 = hl_thread_ns();
	ret = hl_start(v, r->ctx);
	hl_busy_ns(r->ns);
	ret2 = hl_stop(v, r->ctx);
	c1 = hl_thread_ns();
	w1 = hl_mono_ns();
	r->cpu = c1 - c0;
	r->wall = w1 - w0;
	return ret ? ret : ret2;
}

static void time_switch(const char *name, uint64_t t0, uint64_t t1,
			uint64_t busy)
{
	const uint32_t flags[2] = { PFM_SETFL_TIME_SWITCH, PFM_SETFL_TIME_SWITCH };
	const uint64_t timeout[2] = { t0, t1 };
	struct kvmpfm_vm_stats s0, s1;
	struct timed_busy r = { .ns = busy };
	pfarg_setinfo_t in[2];
	uint64_t run0 = 0, run1 = 0, act, sw;
	double share, want;
	char n[96];
	int ret;

	r.ctx = sets_ctx(v0, 2, flags, timeout);
	snprintf(n, sizeof(n), "%s_setup", name);
	if (!hl_check(r.ctx, n, "no context"))
		return;
	hl_vm_stats(&vm, &s0);
	ret = hl_call(v0, timed_busy_fn, &r);
	hl_vm_stats(&vm, &s1);
	memset(in, 0, sizeof(in));
	in[1].set_id = 1;
	ret = ret ? ret : hl_getinfo_sets(v0, r.ctx, in, 2);
	hl_read_pmd(v0, r.ctx, 0, RUN_NS, &run0);
	hl_read_pmd(v0, r.ctx, 1, RUN_NS, &run1);
	sw = s1.set_switches - s0.set_switches;
	act = in[0].set_act_duration + in[1].set_act_duration;
	share = act ? (double)in[1].set_act_duration / (double)act : 0;
	want = (double)t1 / (double)(t0 + t1);

	snprintf(n, sizeof(n), "%s_both_sets_run", name);
	hl_check(!ret && in[0].set_runs >= 3 && in[1].set_runs >= 3 &&
		 sw + 1 == in[0].set_runs + in[1].set_runs &&
		 sw >= busy / (t0 + t1),
		 n, "status %s runs %" PRIu64 "/%" PRIu64 " switches %" PRIu64
		 " in %" PRIu64 " ns (want >= %" PRIu64 ", runs = switches + 1)",
		 hl_status_str(ret), (uint64_t)in[0].set_runs,
		 (uint64_t)in[1].set_runs, sw, r.wall, busy / (t0 + t1));
	snprintf(n, sizeof(n), "%s_active_time_is_wall_time", name);
	hl_check(hl_within(act, r.wall, 0.10, 2 * MS), n,
		 "act_duration %" PRIu64 " + %" PRIu64 " ns, wall time %" PRIu64
		 " ns (10%% + 2 ms)", (uint64_t)in[0].set_act_duration,
		 (uint64_t)in[1].set_act_duration, r.wall);
	snprintf(n, sizeof(n), "%s_split_as_timeouts", name);
	hl_check(share > want - 0.15 && share < want + 0.15, n,
		 "set 1 active %.2f of the time, timeouts say %.2f (+-0.15)",
		 share, want);
	snprintf(n, sizeof(n), "%s_run_ns_adds_up", name);
	hl_check(hl_within(run0 + run1, r.cpu, 0.10, 2 * MS) &&
		 run0 <= in[0].set_act_duration + 2 * MS &&
		 run1 <= in[1].set_act_duration + 2 * MS, n,
		 "VCPU_RUN_NS set0 %" PRIu64 " + set1 %" PRIu64
		 " ns, thread CPU %" PRIu64 " ns (10%% + 2 ms), each <= its "
		 "active time + 2 ms", run0, run1, r.cpu);
	snprintf(n, sizeof(n), "%s_timeout_left", name);
	hl_check(in[0].set_timeout <= t0 && in[1].set_timeout <= t1, n,
		 "left %" PRIu64 "/%" PRIu64 " of %" PRIu64 "/%" PRIu64,
		 (uint64_t)in[0].set_timeout, (uint64_t)in[1].set_timeout,
		 t0, t1);
	snprintf(n, sizeof(n), "%s_host_times", name);
	hl_check(in[0].set_reserved3[PVPFM_SETINFO_HOST_ENABLED] > 0 &&
		 in[0].set_reserved3[PVPFM_SETINFO_HOST_RUNNING] ==
		 in[0].set_reserved3[PVPFM_SETINFO_HOST_ENABLED], n,
		 "set 0 host enabled %" PRIu64 " running %" PRIu64
		 " (software events: never multiplexed)",
		 (uint64_t)in[0].set_reserved3[PVPFM_SETINFO_HOST_ENABLED],
		 (uint64_t)in[0].set_reserved3[PVPFM_SETINFO_HOST_RUNNING]);
	hl_note("%s: %" PRIu64 " switches, runs %" PRIu64 "/%" PRIu64
		", active %" PRIu64 "/%" PRIu64 " ns, RUN_NS %" PRIu64 "/%"
		PRIu64 " ns, CPU %" PRIu64 " ns, wall %" PRIu64 " ns", name, sw,
		(uint64_t)in[0].set_runs, (uint64_t)in[1].set_runs,
		(uint64_t)in[0].set_act_duration,
		(uint64_t)in[1].set_act_duration, run0, run1, r.cpu, r.wall);
	hl_unload(v0, r.ctx, 0);
	hl_destroy_ctx(v0, r.ctx);
}

/* set 0's RUN_NS overflows after @period: switch to set 1 after @cnt */
static void t_ovfl_switch(void)
{
	const uint32_t flags[2] = { PFM_SETFL_OVFL_SWITCH, 0 };
	struct kvmpfm_vm_stats s0, s1;
	struct timed_busy r = { .ns = 30 * MS };
	pfarg_setinfo_t in[2];
	pfarg_pmd_t p;
	uint64_t run1 = 0;
	int ret;

	r.ctx = sets_ctx(v0, 2, flags, NULL);
	if (!hl_check(r.ctx, "ovfl_switch_setup", "no context"))
		return;
	hl_unload(v0, r.ctx, 0);
	hl_pmd_init(&p, RUN_NS, 0, -(5 * MS));
	p.reg_short_reset = -(5 * MS);
	p.reg_ovfl_switch_cnt = 2;
	ret = hl_write_pmds(v0, r.ctx, &p, 1);
	ret = ret ? ret : hl_load(v0, r.ctx, 0, 0, 0);
	hl_vm_stats(&vm, &s0);
	ret = ret ? ret : hl_call(v0, timed_busy_fn, &r);
	hl_vm_stats(&vm, &s1);
	memset(in, 0, sizeof(in));
	in[1].set_id = 1;
	ret = ret ? ret : hl_getinfo_sets(v0, r.ctx, in, 2);
	hl_read_pmd(v0, r.ctx, 1, RUN_NS, &run1);
	hl_check(!ret && s1.set_switches - s0.set_switches == 1 &&
		 s1.overflows - s0.overflows == 2 && in[0].set_runs == 1 &&
		 in[1].set_runs == 1 && (in[0].set_ovfl_pmds[4] & 1),
		 "ovfl_switch_after_threshold",
		 "status %s switches +%" PRIu64 " overflows +%" PRIu64
		 " runs %" PRIu64 "/%" PRIu64 " set 0 ovfl_pmds[4] %#" PRIx64,
		 hl_status_str(ret), (uint64_t)(s1.set_switches - s0.set_switches),
		 (uint64_t)(s1.overflows - s0.overflows),
		 (uint64_t)in[0].set_runs, (uint64_t)in[1].set_runs,
		 (uint64_t)in[0].set_ovfl_pmds[4]);
	hl_check(hl_within(run1, r.cpu - 10 * MS, 0.10, 2 * MS),
		 "ovfl_switch_next_set_counts",
		 "set 1 VCPU_RUN_NS %" PRIu64 " ns, want CPU %" PRIu64
		 " ns - 10 ms (10%% + 2 ms)", run1, r.cpu);
	hl_unload(v0, r.ctx, 0);
	hl_destroy_ctx(v0, r.ctx);
}

/* two sets switching each other on overflow: set 0 after 2, set 1 after 1 */
static void t_ovfl_pingpong(void)
{
	const uint32_t flags[2] = { PFM_SETFL_OVFL_SWITCH, PFM_SETFL_OVFL_SWITCH };
	struct kvmpfm_vm_stats s0, s1;
	struct timed_busy r = { .ns = 100 * MS };
	pfarg_pmd_t p[2];
	uint64_t sw, ov;
	int ret, i;

	r.ctx = sets_ctx(v0, 2, flags, NULL);
	if (!hl_check(r.ctx, "ovfl_pingpong_setup", "no context"))
		return;
	hl_unload(v0, r.ctx, 0);
	for (i = 0; i < 2; i++) {
		hl_pmd_init(&p[i], RUN_NS, i, -(3 * MS));
		p[i].reg_short_reset = -(3 * MS);
		p[i].reg_ovfl_switch_cnt = 2 - i;
	}
	ret = hl_write_pmds(v0, r.ctx, p, 2);
	ret = ret ? ret : hl_load(v0, r.ctx, 0, 0, 0);
	hl_vm_stats(&vm, &s0);
	ret = ret ? ret : hl_call(v0, timed_busy_fn, &r);
	hl_vm_stats(&vm, &s1);
	sw = s1.set_switches - s0.set_switches;
	ov = s1.overflows - s0.overflows;
	/* a cycle: 2 overflows in set 0, 1 in set 1, 2 switches */
	hl_check(!ret && sw >= 6 && ov * 2 >= sw * 3 - 2 && ov * 2 <= sw * 3 + 4,
		 "ovfl_pingpong_3_overflows_per_2_switches",
		 "status %s: %" PRIu64 " overflows, %" PRIu64 " switches in %"
		 PRIu64 " ns of CPU", hl_status_str(ret), ov, sw, r.cpu);
	hl_note("ping-pong: %" PRIu64 " overflows, %" PRIu64 " switches", ov, sw);
	hl_unload(v0, r.ctx, 0);
	hl_destroy_ctx(v0, r.ctx);
}

/* ---- SWITCH ---------------------------------------------------------------- */

struct sw_step {
	uint32_t out_ctx, in_ctx, in_tid;
	uint32_t start_ctx;	/* START after the switch */
	uint64_t busy;		/* then burn this long */
	uint32_t after_out;	/* then SWITCH this one out */
	uint64_t cpu;		/* out: CPU from before the switch to after */
	int ret;
};

static int sw_fn(struct hl_vcpu *v, void *p)
{
	struct sw_step *s = p;
	uint64_t c0 = hl_thread_ns();
	int ret = 0;

	if (s->out_ctx || s->in_ctx)
		ret = hl_switch(v, s->out_ctx, s->in_ctx, s->in_tid);
	if (!ret && s->start_ctx)
		ret = hl_start(v, s->start_ctx);
	hl_busy_ns(s->busy);
	if (!ret && s->after_out)
		ret = hl_switch(v, s->after_out, 0, 0);
	s->cpu = hl_thread_ns() - c0;
	s->ret = ret;
	return ret;
}

static uint32_t thread_ctx(uint32_t tid)
{
	uint32_t id = 0;
	pfarg_pmd_t p;
	int ret;

	hl_pmd_init(&p, RUN_NS, 0, 0);
	ret = hl_create_ctx(v0, 0, 0, &id);
	ret = ret ? ret : hl_write_pmds(v0, id, &p, 1);
	ret = ret ? ret : hl_load(v0, id, tid, 0, 0);
	if (ret)
		hl_note("thread_ctx: %s", hl_status_str(ret));
	return ret ? 0 : id;
}

static void t_switch_follow(void)
{
	uint32_t id = thread_ctx(555);
	struct sw_step a = { .in_ctx = id, .in_tid = 555, .start_ctx = id,
			     .busy = 30 * MS, .after_out = id };
	struct sw_step idle = { .busy = 30 * MS };
	struct sw_step b = { .in_ctx = id, .in_tid = 555, .busy = 30 * MS,
			     .after_out = id };
	struct sw_step c = { .in_ctx = id, .in_tid = 555, .busy = 20 * MS };
	struct sw_step d = { .in_ctx = id, .in_tid = 555, .busy = 20 * MS,
			     .after_out = id };
	uint64_t val = 0, val2 = 0;
	int ret;

	if (!hl_check(id, "switch_setup", "no context"))
		return;
	ret = hl_call(v0, sw_fn, &a);
	ret = ret ? ret : hl_call(v0, sw_fn, &idle);
	ret = ret ? ret : hl_call(v1, sw_fn, &b);
	HL_EXPECT("switch_in_out_two_vcpus_ok", ret, 0);
	hl_read_pmd(v0, id, 0, RUN_NS, &val);
	hl_check(hl_within(val, a.cpu + b.cpu, 0.10, 3 * MS),
		 "switch_counts_only_while_in",
		 "VCPU_RUN_NS %" PRIu64 " ns, thread in for %" PRIu64 " + %"
		 PRIu64 " ns of CPU, out for %" PRIu64 " (10%% + 3 ms)", val,
		 a.cpu, b.cpu, idle.cpu);

	/* in on vCPU 0, then in on vCPU 1 without a switch-out on vCPU 0 */
	ret = hl_call(v0, sw_fn, &c);
	ret = ret ? ret : hl_call(v1, sw_fn, &d);
	HL_EXPECT("switch_in_elsewhere_without_out_ok", ret, 0);
	hl_read_pmd(v0, id, 0, RUN_NS, &val2);
	hl_check(hl_within(val2 - val, c.cpu + d.cpu, 0.10, 3 * MS),
		 "switch_moved_thread_counts",
		 "+%" PRIu64 " ns for %" PRIu64 " + %" PRIu64 " ns of CPU on "
		 "vCPU 0 then 1 (10%% + 3 ms)", val2 - val, c.cpu, d.cpu);
	/* vCPU 0 has nothing in any more: a context can come in there */
	HL_EXPECT("switch_old_vcpu_free", hl_switch(v0, 0, id, 555), 0);
	HL_EXPECT("switch_out_again", hl_switch(v0, id, 0, 0), 0);
	hl_unload(v0, id, 0);
	hl_destroy_ctx(v0, id);
}

static void t_switch_two_threads(void)
{
	uint32_t a = thread_ctx(11), b = thread_ctx(22);
	struct sw_step s1 = { .in_ctx = a, .in_tid = 11, .start_ctx = a,
			      .busy = 20 * MS };
	struct sw_step s2 = { .out_ctx = a, .in_ctx = b, .in_tid = 22,
			      .start_ctx = b, .busy = 40 * MS, .after_out = b };
	uint64_t va = 0, vb = 0;
	int ret;

	if (!hl_check(a && b, "switch_two_setup", "no contexts"))
		return;
	ret = hl_call(v0, sw_fn, &s1);
	ret = ret ? ret : hl_call(v0, sw_fn, &s2);
	HL_EXPECT("switch_out_in_one_call_ok", ret, 0);
	hl_read_pmd(v0, a, 0, RUN_NS, &va);
	hl_read_pmd(v0, b, 0, RUN_NS, &vb);
	hl_check(hl_within(va, 20 * MS, 0.10, 3 * MS) &&
		 hl_within(vb, 40 * MS, 0.10, 3 * MS),
		 "switch_two_threads_own_share",
		 "thread 11: %" PRIu64 " ns (want ~20 ms), thread 22: %" PRIu64
		 " ns (want ~40 ms), 10%% + 3 ms", va, vb);
	hl_unload(v0, a, 0);
	hl_unload(v0, b, 0);
	hl_destroy_ctx(v0, a);
	hl_destroy_ctx(v0, b);
}

static void t_switch_errors(void)
{
	uint32_t a = thread_ctx(31), b = thread_ctx(32), u = 0, s = 0;

	hl_create_ctx(v0, 0, 0, &u);
	hl_create_ctx(v1, PFM_FL_SYSTEM_WIDE, 0, &s);
	HL_EXPECT("switch_nothing_ok", hl_switch(v0, 0, 0, 0), 0);
	HL_EXPECT("switch_unknown_in_ebadf", hl_switch(v0, 0, 9999, 1), -EBADF);
	HL_EXPECT("switch_unknown_out_ebadf", hl_switch(v0, 9999, 0, 0), -EBADF);
	HL_EXPECT("switch_out_not_in_einval", hl_switch(v0, a, 0, 0), -EINVAL);
	HL_EXPECT("switch_in_unloaded_einval", hl_switch(v0, 0, u, 1), -EINVAL);
	HL_EXPECT("switch_in_system_wide_einval", hl_switch(v0, 0, s, 1),
		  -EINVAL);
	HL_EXPECT("switch_in_a", hl_switch(v0, 0, a, 31), 0);
	HL_EXPECT("switch_in_second_ebusy", hl_switch(v0, 0, b, 32), -EBUSY);
	HL_EXPECT("switch_out_from_other_vcpu_einval", hl_switch(v1, a, 0, 0),
		  -EINVAL);
	HL_EXPECT("switch_out_a_in_b", hl_switch(v0, a, b, 32), 0);
	HL_EXPECT("switch_b_in_on_other_vcpu_moves", hl_switch(v1, 0, b, 32), 0);
	HL_EXPECT("switch_out_b", hl_switch(v1, b, 0, 0), 0);
	{
		struct pvpfm_switch_arg arg = { 0 };

		HL_EXPECT("switch_short_arg_einval",
			  hl_cmd(v0, PVPFM_CMD_SWITCH, 0, 0, &arg, 8), -EINVAL);
	}
	hl_unload(v0, a, 0);
	hl_unload(v0, b, 0);
	hl_destroy_ctx(v0, a);
	hl_destroy_ctx(v0, b);
	hl_destroy_ctx(v0, u);
	hl_destroy_ctx(v0, s);
}

int main(void)
{
	int ret;

	hl_init();
	ret = hl_vm_simple(&vm, 2);
	if (!hl_check(!ret, "sets_vm_setup", "VM: %s", hl_errname(ret)))
		return hl_summary();
	v0 = &vm.vcpus[0];
	v1 = &vm.vcpus[1];
	time_switch("time_switch_equal", 10 * MS, 10 * MS, 200 * MS);
	time_switch("time_switch_1_to_3", 10 * MS, 30 * MS, 300 * MS);
	t_ovfl_switch();
	t_ovfl_pingpong();
	t_switch_follow();
	t_switch_two_threads();
	t_switch_errors();
	hl_vm_destroy(&vm);
	hl_check_module_idle("sets_module_idle");
	return hl_summary();
}
