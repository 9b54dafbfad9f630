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
 *                    sets gives 3 overflows per 2 switches. Both sample
 *                    (the default format), whose overflows short-reset and
 *                    go on: without a format (perfmon2 v2.8x) an overflow
 *                    that does not switch sets masks monitoring. Without
 *                    a format: each overflow that switches, nothing
 *                    notified, goes on (one switch per overflow); one
 *                    that asks for a notification masks, and the switch
 *                    it was due waits for RESTART
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
#include <pthread.h>
#include <time.h>

#include "hostlib.h"

/*
 * Set switches happen in the host's deferred work (timer -> irq_work ->
 * workqueue -> the VM's lock): an activation may outlast its timeout by
 * that latency, which on the TCG rig under load reaches tens of ms.
 */
#define SWITCH_LATENCY	(100 * MS)
/*
 * task-clock runs ahead of the thread's CPU time by 30-70 us per context
 * switch of the thread, measured on the one-CPU TCG rig
 */
#define CSW_SKEW	(100 * US)

static struct hl_vm vm;
static struct hl_vcpu *v0, *v1;

/*
 * A system-wide context on @v with @n sets (0..n-1), RUN_NS in each;
 * with @smpl_pages (0: none) a sampling buffer of as many pages
 */
static uint32_t sets_ctx(struct hl_vcpu *v, int n, const uint32_t *flags,
			 const uint64_t *timeout, uint32_t smpl_pages)
{
	uint64_t buf = smpl_pages ? hl_gpa_alloc(v->vm, smpl_pages * HL_PAGE) :
				    0;
	pfarg_setdesc_t d[4];
	pfarg_pmd_t p[4];
	int i;

	memset(d, 0, sizeof(d));
	for (i = 0; i < n; i++) {
		d[i].set_id = i;
		d[i].set_flags = flags[i];
		d[i].set_timeout = timeout ? timeout[i] : 0;
		cb_pmd_init(&p[i], RUN_NS, i, 0);
	}
	return hl_sets_ctx(v, __func__, d, n, p, n, buf, smpl_pages);
}

struct timed_busy {
	uint32_t ctx;
	uint64_t ns, cpu, wall, csw;
	/* optional: go on (up to max_ns) until this many set switches */
	uint64_t want_switches, max_ns;
	/* optional: go on (up to max_ns) until the eventfd is signalled */
	bool want_note;
	uint64_t notes;
	int ret;
};

static uint64_t switches_now(struct hl_vm *m)
{
	struct kvmpfm_vm_stats st;

	return hl_vm_stats(m, &st) ? 0 : st.set_switches;
}

/* START, burn, STOP on the vCPU thread; wall time around START..STOP */
static int timed_busy_fn(struct hl_vcpu *v, void *p)
{
	struct timed_busy *r = p;
	struct hl_thread_span span;
	uint64_t w0, w1, c0;
	int ret, ret2;

	uint64_t sw0 = r->want_switches ? switches_now(v->vm) : 0;
	uint64_t csw0 = hl_thread_csw();

	w0 = hl_mono_ns();
	hl_thread_span_start(&span);
	c0 = hl_thread_ns();
	ret = cb_start(&v->cb, r->ctx);
	hl_busy_ns(r->ns);
	/* switching happens in host work: on a loaded rig give it time */
	while (r->want_switches && hl_thread_ns() - c0 < r->max_ns &&
	       switches_now(v->vm) - sw0 < r->want_switches)
		hl_busy_ns(10 * MS);
	r->notes = r->want_note ? hl_eventfd_read(v) : 0;
	while (r->want_note && !r->notes && hl_thread_ns() - c0 < r->max_ns) {
		hl_busy_ns(200 * US);
		r->notes = hl_eventfd_read(v);
	}
	ret2 = cb_stop(&v->cb, r->ctx);
	r->cpu = hl_thread_span_end(&span);
	w1 = hl_mono_ns();
	r->wall = w1 - w0;
	r->csw = hl_thread_csw() - csw0;
	return ret ? ret : ret2;
}

static void time_switch(const char *name, uint64_t t0, uint64_t t1,
			uint64_t busy)
{
	const uint32_t flags[2] = { PFM_SETFL_TIME_SWITCH, PFM_SETFL_TIME_SWITCH };
	const uint64_t timeout[2] = { t0, t1 };
	struct kvmpfm_vm_stats s0, s1;
	struct timed_busy r = { .ns = busy, .want_switches = 3,
				.max_ns = 5000 * MS };
	pfarg_setinfo_t in[2];
	uint64_t run0 = 0, run1 = 0, act, sw, done0, done1;
	char n[96];
	int ret;

	r.ctx = sets_ctx(v0, 2, flags, timeout, 0);
	snprintf(n, sizeof(n), "%s_setup", name);
	if (!t_check(r.ctx, n, "no context"))
		return;
	hl_vm_stats(&vm, &s0);
	ret = hl_call(v0, timed_busy_fn, &r);
	hl_vm_stats(&vm, &s1);
	memset(in, 0, sizeof(in));
	in[1].set_id = 1;
	ret = ret ? ret : cb_getinfo_sets(&v0->cb, r.ctx, in, 2);
	cb_read_pmd(&v0->cb, r.ctx, 0, RUN_NS, &run0);
	cb_read_pmd(&v0->cb, r.ctx, 1, RUN_NS, &run1);
	sw = s1.set_switches - s0.set_switches;
	act = in[0].set_act_duration + in[1].set_act_duration;

	snprintf(n, sizeof(n), "%s_both_sets_run", name);
	t_check(!ret && in[0].set_runs >= 2 && in[1].set_runs >= 1 &&
		sw >= 2 && sw + 1 == in[0].set_runs + in[1].set_runs, n,
		"status %s runs %" PRIu64 "/%" PRIu64 " switches %" PRIu64
		" in %" PRIu64 " ns (want >= 2, runs = switches + 1)",
		hl_status_str(ret), (uint64_t)in[0].set_runs,
		(uint64_t)in[1].set_runs, sw, r.wall);
	/* the set active at STOP has one activation not completed */
	done0 = in[0].set_runs - (in[0].set_runs > in[1].set_runs);
	done1 = in[1].set_runs - (in[0].set_runs == in[1].set_runs);
	snprintf(n, sizeof(n), "%s_timeouts_respected", name);
	t_check(in[0].set_act_duration + HL_BRACKET_ABS >= done0 * t0 &&
		in[1].set_act_duration + HL_BRACKET_ABS >= done1 * t1 &&
		in[0].set_act_duration <= in[0].set_runs * (t0 + SWITCH_LATENCY) &&
		in[1].set_act_duration <= in[1].set_runs * (t1 + SWITCH_LATENCY),
		n, "set 0: %" PRIu64 " ns active in %" PRIu64 " runs (%" PRIu64
		" completed, timeout %" PRIu64 "), set 1: %" PRIu64 " ns in %"
		PRIu64 " (%" PRIu64 ", %" PRIu64 "); want timeout <= "
		"activation <= timeout + %llu ms", (uint64_t)in[0].set_act_duration,
		(uint64_t)in[0].set_runs, done0, t0,
		(uint64_t)in[1].set_act_duration, (uint64_t)in[1].set_runs,
		done1, t1, SWITCH_LATENCY / MS);
	snprintf(n, sizeof(n), "%s_active_time_within_wall_time", name);
	/*
	 * A switch stops the clock while the host closes and opens counters
	 * (IPIs from its work): the sets' active time is at most the wall
	 * time; how much less is printed below.
	 */
	t_check(act <= r.wall + HL_BRACKET_ABS && act > 0, n,
		"act_duration %" PRIu64 " + %" PRIu64 " ns, wall time %" PRIu64
		" ns (want 0 < active <= wall)",
		(uint64_t)in[0].set_act_duration,
		(uint64_t)in[1].set_act_duration, r.wall);
	snprintf(n, sizeof(n), "%s_run_ns_within_cpu_time", name);
	/*
	 * Each set counts only while active, the two never overlap: their
	 * sum is at most the thread's CPU time. (Per set, VCPU_RUN_NS is not
	 * bounded by act_duration here: the host enables and disables the
	 * counters by IPI from its switch work and reads the clock after, so
	 * on the loaded TCG rig a set's clock can start ms after its
	 * counters did.) task-clock stops at perf's sched-out, the thread's
	 * CPU time at the scheduler's clock update before it: each context
	 * switch of the thread (the host's switch work preempts it on a
	 * one-CPU L1) may add up to CSW_SKEW to the sets' sum.
	 */
	t_check(run0 + run1 <= r.cpu + HL_BRACKET_ABS + r.csw * CSW_SKEW &&
		run0 && run1, n,
		"VCPU_RUN_NS set0 %" PRIu64 " + set1 %" PRIu64
		" ns, thread CPU %" PRIu64 " ns, %" PRIu64 " context switches",
		run0, run1, r.cpu, r.csw);
	snprintf(n, sizeof(n), "%s_timeout_left", name);
	t_check(in[0].set_timeout <= t0 && in[1].set_timeout <= t1, n,
		"left %" PRIu64 "/%" PRIu64 " of %" PRIu64 "/%" PRIu64,
		(uint64_t)in[0].set_timeout, (uint64_t)in[1].set_timeout,
		t0, t1);
	snprintf(n, sizeof(n), "%s_host_times", name);
	t_check(in[0].set_reserved3[PVPFM_SETINFO_HOST_ENABLED] > 0 &&
		in[0].set_reserved3[PVPFM_SETINFO_HOST_RUNNING] ==
		in[0].set_reserved3[PVPFM_SETINFO_HOST_ENABLED], n,
		"set 0 host enabled %" PRIu64 " running %" PRIu64
		" (software events: never multiplexed)",
		(uint64_t)in[0].set_reserved3[PVPFM_SETINFO_HOST_ENABLED],
		(uint64_t)in[0].set_reserved3[PVPFM_SETINFO_HOST_RUNNING]);
	t_note("%s: %" PRIu64 " switches, runs %" PRIu64 "/%" PRIu64
	       ", active %" PRIu64 "/%" PRIu64 " ns, RUN_NS %" PRIu64 "/%"
	       PRIu64 " ns, CPU %" PRIu64 " ns, wall %" PRIu64 " ns, %" PRIu64
	       " context switches", name, sw,
	       (uint64_t)in[0].set_runs, (uint64_t)in[1].set_runs,
	       (uint64_t)in[0].set_act_duration,
	       (uint64_t)in[1].set_act_duration, run0, run1, r.cpu, r.wall,
	       r.csw);
	cb_unload(&v0->cb, r.ctx);
	cb_destroy(&v0->cb, r.ctx);
}

/*
 * set 0's RUN_NS overflows every 5 ms: switch to set 1 after 2 of them.
 * Sampling (one page), nothing notified: the first overflow short-resets
 * and counting goes on in set 0. The vCPU runs on (up to 2 s) until the
 * switch: task-clock's overflows come on its hrtimer, which a loaded
 * two-CPU rig delays.
 */
static void t_ovfl_switch(void)
{
	const uint32_t flags[2] = { PFM_SETFL_OVFL_SWITCH, 0 };
	struct kvmpfm_vm_stats s0, s1;
	struct timed_busy r = { .ns = 40 * MS, .want_switches = 1,
				.max_ns = 2000 * MS };
	pfarg_setinfo_t in[2];
	pfarg_pmd_t p;
	uint64_t run1 = 0;
	int ret;

	r.ctx = sets_ctx(v0, 2, flags, NULL, 1);
	if (!t_check(r.ctx, "ovfl_switch_setup", "no context"))
		return;
	cb_unload(&v0->cb, r.ctx);
	cb_pmd_init(&p, RUN_NS, 0, -(5 * MS));
	p.reg_short_reset = -(5 * MS);
	p.reg_ovfl_switch_cnt = 2;
	ret = cb_write_pmds(&v0->cb, r.ctx, &p, 1);
	ret = ret ? ret : cb_load(&v0->cb, r.ctx, 0, 0, 0, v0->guest_tgid);
	hl_vm_stats(&vm, &s0);
	ret = ret ? ret : hl_call(v0, timed_busy_fn, &r);
	hl_vm_stats(&vm, &s1);
	memset(in, 0, sizeof(in));
	in[1].set_id = 1;
	ret = ret ? ret : cb_getinfo_sets(&v0->cb, r.ctx, in, 2);
	cb_read_pmd(&v0->cb, r.ctx, 1, RUN_NS, &run1);
	/* two loads made two activations of set 0 */
	t_check(!ret && s1.set_switches - s0.set_switches == 1 &&
		s1.overflows - s0.overflows == 2 && in[0].set_runs == 2 &&
		in[1].set_runs == 1 && in[0].set_ovfl_pmds[4] == 1,
		"ovfl_switch_after_threshold",
		"status %s switches +%" PRIu64 " overflows +%" PRIu64
		" runs %" PRIu64 "/%" PRIu64 " (want 2/1) set 0 ovfl_pmds[4] %#"
		PRIx64, hl_status_str(ret),
		(uint64_t)(s1.set_switches - s0.set_switches),
		(uint64_t)(s1.overflows - s0.overflows),
		(uint64_t)in[0].set_runs, (uint64_t)in[1].set_runs,
		(uint64_t)in[0].set_ovfl_pmds[4]);
	/* set 1 counts from the switch on: at most what is left after 10 ms */
	t_check(run1 > 0 && run1 <= r.cpu - 10 * MS + HL_BRACKET_ABS,
		"ovfl_switch_next_set_counts",
		"set 1 VCPU_RUN_NS %" PRIu64 " ns, want 0 < it <= CPU %" PRIu64
		" ns - 10 ms", run1, r.cpu);
	t_note("overflow switch: set 1 counted %" PRIu64 " of %" PRIu64
	       " ns left after set 0's 10 ms", run1, (uint64_t)(r.cpu - 10 * MS));
	cb_unload(&v0->cb, r.ctx);
	cb_destroy(&v0->cb, r.ctx);
}

/*
 * two sets switching each other on overflow: set 0 after 2, set 1 after 1;
 * sampling (two pages, room for all of them), nothing notified
 */
static void t_ovfl_pingpong(void)
{
	const uint32_t flags[2] = { PFM_SETFL_OVFL_SWITCH, PFM_SETFL_OVFL_SWITCH };
	struct kvmpfm_vm_stats s0, s1;
	struct timed_busy r = { .ns = 100 * MS };
	pfarg_pmd_t p[2];
	uint64_t sw, ov;
	int ret, i;

	r.ctx = sets_ctx(v0, 2, flags, NULL, 2);
	if (!t_check(r.ctx, "ovfl_pingpong_setup", "no context"))
		return;
	cb_unload(&v0->cb, r.ctx);
	for (i = 0; i < 2; i++) {
		cb_pmd_init(&p[i], RUN_NS, i, -(3 * MS));
		p[i].reg_short_reset = -(3 * MS);
		p[i].reg_ovfl_switch_cnt = 2 - i;
	}
	ret = cb_write_pmds(&v0->cb, r.ctx, p, 2);
	ret = ret ? ret : cb_load(&v0->cb, r.ctx, 0, 0, 0, v0->guest_tgid);
	hl_vm_stats(&vm, &s0);
	ret = ret ? ret : hl_call(v0, timed_busy_fn, &r);
	hl_vm_stats(&vm, &s1);
	sw = s1.set_switches - s0.set_switches;
	ov = s1.overflows - s0.overflows;
	/*
	 * Set 0 switches after 2 overflows, set 1 after 1: after 2k
	 * switches, 3k or 3k + 1 overflows; after 2k + 1, 3k + 2.
	 */
	t_check(!ret && sw >= 1 &&
		(sw % 2 ? ov == 3 * (sw / 2) + 2 :
			   ov == 3 * (sw / 2) || ov == 3 * (sw / 2) + 1),
		"ovfl_pingpong_3_overflows_per_2_switches",
		"status %s: %" PRIu64 " overflows, %" PRIu64 " switches in %"
		PRIu64 " ns of CPU", hl_status_str(ret), ov, sw, r.cpu);
	t_note("ping-pong: %" PRIu64 " overflows, %" PRIu64 " switches", ov, sw);
	cb_unload(&v0->cb, r.ctx);
	cb_destroy(&v0->cb, r.ctx);
}

/*
 * No format, nothing notified, both sets switching on each overflow of
 * their RUN_NS (reg_ovfl_switch_cnt 1): every overflow short-resets and
 * switches, monitoring never masked
 */
static void t_ovfl_switch_no_format(void)
{
	const uint32_t flags[2] = { PFM_SETFL_OVFL_SWITCH, PFM_SETFL_OVFL_SWITCH };
	struct kvmpfm_vm_stats s0, s1;
	struct timed_busy r = { .ns = 50 * MS };
	uint64_t sw = 0, ov = 0;
	uint32_t st = 0;
	pfarg_pmd_t p[2];
	int ret, i;

	r.ctx = sets_ctx(v0, 2, flags, NULL, 0);
	if (!t_check(r.ctx, "ovfl_switch_no_format_setup", "no context"))
		return;
	cb_unload(&v0->cb, r.ctx);
	for (i = 0; i < 2; i++) {
		cb_pmd_init(&p[i], RUN_NS, i, -(3 * MS));
		p[i].reg_short_reset = -(3 * MS);
		p[i].reg_ovfl_switch_cnt = 1;
	}
	ret = cb_write_pmds(&v0->cb, r.ctx, p, 2);
	ret = ret ? ret : cb_load(&v0->cb, r.ctx, 0, 0, 0, v0->guest_tgid);
	hl_vm_stats(&vm, &s0);
	ret = ret ? ret : hl_call(v0, timed_busy_fn, &r);
	hl_vm_stats(&vm, &s1);
	ret = ret ? ret : hl_ctx_state(&v0->cb, r.ctx, &st);
	sw = s1.set_switches - s0.set_switches;
	ov = s1.overflows - s0.overflows;
	t_check(!ret && ov >= 2 && sw == ov && !(st & PVPFM_CTX_MASKED),
		"ovfl_switch_no_format_goes_on",
		"status %s: %" PRIu64 " overflows, %" PRIu64 " switches in %"
		PRIu64 " ns of CPU, CTX_STATE %#x (want >= 2 overflows, one "
		"switch each, not masked)", hl_status_str(ret), ov, sw, r.cpu,
		st);
	cb_unload(&v0->cb, r.ctx);
	cb_destroy(&v0->cb, r.ctx);
}

/*
 * No format: set 0's RUN_NS overflows after 5 ms, due to switch (count
 * 1) and asking for a notification: monitoring is masked with set 0
 * still active (no switch yet), a message names set 0; RESTART applies
 * the long reset and then makes the switch to set 1.
 */
static void t_ovfl_switch_notify(void)
{
	const uint32_t flags[2] = { PFM_SETFL_OVFL_SWITCH, 0 };
	struct kvmpfm_vm_stats s0, s1, s2;
	struct timed_busy r = { .ns = 1 * MS, .want_note = true,
				.max_ns = 20000 * MS };
	pfarg_setinfo_t in[2];
	uint32_t st = 0;
	pfarg_pmd_t p;
	pfarg_msg_t m;
	int ret, rs;

	r.ctx = sets_ctx(v0, 2, flags, NULL, 0);
	if (!t_check(r.ctx, "ovfl_switch_notify_setup", "no context"))
		return;
	cb_unload(&v0->cb, r.ctx);
	cb_pmd_init(&p, RUN_NS, 0, -(5 * MS));
	p.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	p.reg_short_reset = -(5 * MS);
	p.reg_long_reset = -(7 * MS);
	p.reg_ovfl_switch_cnt = 1;
	ret = cb_write_pmds(&v0->cb, r.ctx, &p, 1);
	ret = ret ? ret : cb_load(&v0->cb, r.ctx, 0, 0, 0, v0->guest_tgid);
	hl_eventfd_read(v0);
	hl_vm_stats(&vm, &s0);
	ret = ret ? ret : hl_call(v0, timed_busy_fn, &r);
	hl_vm_stats(&vm, &s1);
	rs = hl_ctx_state(&v0->cb, r.ctx, &st);
	memset(in, 0, sizeof(in));
	in[1].set_id = 1;
	ret = ret ? ret : cb_getinfo_sets(&v0->cb, r.ctx, in, 2);
	t_check(!ret && !rs && r.notes == 1 && (st & PVPFM_CTX_MASKED) &&
		s1.overflows - s0.overflows == 1 &&
		s1.set_switches == s0.set_switches &&
		in[0].set_runs == 2 && in[1].set_runs == 0,
		"ovfl_switch_notify_masked_no_switch",
		"status %s eventfd %" PRIu64 " CTX_STATE %s %#x, overflows +%"
		PRIu64 " switches +%" PRIu64 " runs %" PRIu64 "/%" PRIu64
		" (want 2/0: two loads, no switch)", hl_status_str(ret),
		r.notes, hl_status_str2(rs), st,
		(uint64_t)(s1.overflows - s0.overflows),
		(uint64_t)(s1.set_switches - s0.set_switches),
		(uint64_t)in[0].set_runs, (uint64_t)in[1].set_runs);
	ret = cb_read_msg(&v0->cb, r.ctx, &m);
	t_check(!ret && m.type == PFM_MSG_OVFL &&
		m.pfm_ovfl_msg.msg_active_set == 0,
		"ovfl_switch_notify_message", "status %s type %u set %u",
		hl_status_str(ret), m.type, m.pfm_ovfl_msg.msg_active_set);
	ret = cb_restart(&v0->cb, r.ctx);
	hl_vm_stats(&vm, &s2);
	memset(in, 0, sizeof(in));
	in[1].set_id = 1;
	ret = ret ? ret : cb_getinfo_sets(&v0->cb, r.ctx, in, 2);
	memset(&p, 0, sizeof(p));
	p.reg_num = RUN_NS;
	ret = ret ? ret : cb_read_pmds(&v0->cb, r.ctx, &p, 1);
	t_check(!ret && s2.set_switches == s1.set_switches + 1 &&
		in[1].set_runs == 1 && p.reg_last_reset_val == -(7 * MS) &&
		p.reg_ovfl_switch_cnt == 1,
		"ovfl_switch_notify_switches_at_restart",
		"status %s switches +%" PRIu64 " set 1 runs %" PRIu64
		" (want 1), set 0 RUN_NS last reset %#" PRIx64
		" (want the long reset -7 ms), switch count %" PRIu64
		" (want 1 again)", hl_status_str(ret),
		(uint64_t)(s2.set_switches - s1.set_switches),
		(uint64_t)in[1].set_runs, (uint64_t)p.reg_last_reset_val,
		(uint64_t)p.reg_ovfl_switch_cnt);
	cb_unload(&v0->cb, r.ctx);
	cb_destroy(&v0->cb, r.ctx);
	hl_eventfd_read(v0);
}

/* ---- SWITCH ---------------------------------------------------------------- */

struct sw_step {
	uint32_t out_ctx, in_ctx, in_tid;
	uint32_t start_ctx;	/* START after the switch */
	uint64_t busy;		/* then burn this long */
	uint32_t after_out;	/* then SWITCH this one out */
	uint64_t cpu;		/* out: time from before the switch to after
				 * (hl_thread_span_end()) */
	uint64_t burnt;		/* out: CPU of the burning alone */
	int ret;
};

static int sw_fn(struct hl_vcpu *v, void *p)
{
	struct sw_step *s = p;
	struct hl_thread_span span;
	int ret = 0;

	hl_thread_span_start(&span);

	if (s->out_ctx || s->in_ctx)
		ret = cb_switch(&v->cb, s->out_ctx, s->in_ctx, s->in_tid,
				v->guest_tgid);
	if (!ret && s->start_ctx)
		ret = cb_start(&v->cb, s->start_ctx);
	s->burnt = hl_thread_ns();
	hl_busy_ns(s->busy);
	s->burnt = hl_thread_ns() - s->burnt;
	if (!ret && s->after_out)
		ret = cb_switch(&v->cb, s->after_out, 0, 0, v->guest_tgid);
	s->cpu = hl_thread_span_end(&span);
	s->ret = ret;
	return ret;
}

static uint32_t thread_ctx(uint32_t tid)
{
	uint32_t id = 0;
	pfarg_pmd_t p;
	int ret;

	cb_pmd_init(&p, RUN_NS, 0, 0);
	ret = cb_create(&v0->cb, 0, &id);
	ret = ret ? ret : cb_write_pmds(&v0->cb, id, &p, 1);
	ret = ret ? ret : cb_load(&v0->cb, id, tid, 0, 0, v0->guest_tgid);
	if (ret)
		t_note("%s: %s", __func__, hl_status_str(ret));
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

	if (!t_check(id, "switch_setup", "no context"))
		return;
	ret = hl_call(v0, sw_fn, &a);
	ret = ret ? ret : hl_call(v0, sw_fn, &idle);
	ret = ret ? ret : hl_call(v1, sw_fn, &b);
	HL_EXPECT("switch_in_out_two_vcpus_ok", ret, 0);
	cb_read_pmd(&v0->cb, id, 0, RUN_NS, &val);
	t_check(hl_bracket(val, a.burnt + b.burnt, a.cpu + b.cpu),
		"switch_counts_only_while_in",
		"VCPU_RUN_NS %" PRIu64 " ns, thread in for %" PRIu64 "..%"
		PRIu64 " ns of CPU on vCPUs 0 and 1, out for %" PRIu64 " ns",
		val, a.burnt + b.burnt, a.cpu + b.cpu, idle.cpu);

	/* in on vCPU 0, then in on vCPU 1 without a switch-out on vCPU 0 */
	ret = hl_call(v0, sw_fn, &c);
	ret = ret ? ret : hl_call(v1, sw_fn, &d);
	HL_EXPECT("switch_in_elsewhere_without_out_ok", ret, 0);
	cb_read_pmd(&v0->cb, id, 0, RUN_NS, &val2);
	t_check(hl_bracket(val2 - val, c.burnt + d.burnt, c.cpu + d.cpu),
		"switch_moved_thread_counts",
		"+%" PRIu64 " ns for %" PRIu64 "..%" PRIu64 " ns of CPU on "
		"vCPU 0 then 1", val2 - val, c.burnt + d.burnt, c.cpu + d.cpu);
	/* vCPU 0 has nothing in any more: a context can come in there */
	HL_EXPECT("switch_old_vcpu_free",
		  cb_switch(&v0->cb, 0, id, 555, v0->guest_tgid), 0);
	HL_EXPECT("switch_out_again",
		  cb_switch(&v0->cb, id, 0, 0, v0->guest_tgid), 0);
	cb_unload(&v0->cb, id);
	cb_destroy(&v0->cb, id);
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

	if (!t_check(a && b, "switch_two_setup", "no contexts"))
		return;
	ret = hl_call(v0, sw_fn, &s1);
	ret = ret ? ret : hl_call(v0, sw_fn, &s2);
	HL_EXPECT("switch_out_in_one_call_ok", ret, 0);
	cb_read_pmd(&v0->cb, a, 0, RUN_NS, &va);
	cb_read_pmd(&v0->cb, b, 0, RUN_NS, &vb);
	/* a: from its START in s1 to the switch in s2; b: s2 after it */
	t_check(hl_bracket(va, s1.burnt, s1.cpu + s2.cpu - s2.burnt) &&
		hl_bracket(vb, s2.burnt, s2.cpu),
		"switch_two_threads_own_share",
		"thread 11: %" PRIu64 " ns (want %" PRIu64 "..%" PRIu64
		"), thread 22: %" PRIu64 " ns (want %" PRIu64 "..%" PRIu64 ")",
		va, s1.burnt, s1.cpu + s2.cpu - s2.burnt, vb, s2.burnt, s2.cpu);
	cb_unload(&v0->cb, a);
	cb_unload(&v0->cb, b);
	cb_destroy(&v0->cb, a);
	cb_destroy(&v0->cb, b);
}

static void t_switch_errors(void)
{
	uint32_t a = thread_ctx(31), b = thread_ctx(32), u = 0, s = 0;

	cb_create(&v0->cb, 0, &u);
	cb_create(&v1->cb, PFM_FL_SYSTEM_WIDE, &s);
	HL_EXPECT("switch_nothing_ok",
		  cb_switch(&v0->cb, 0, 0, 0, v0->guest_tgid), 0);
	HL_EXPECT("switch_unknown_in_ebadf",
		  cb_switch(&v0->cb, 0, 9999, 1, v0->guest_tgid), -EBADF);
	HL_EXPECT("switch_unknown_out_ebadf",
		  cb_switch(&v0->cb, 9999, 0, 0, v0->guest_tgid), -EBADF);
	HL_EXPECT("switch_out_not_in_einval",
		  cb_switch(&v0->cb, a, 0, 0, v0->guest_tgid), -EINVAL);
	HL_EXPECT("switch_in_unloaded_einval",
		  cb_switch(&v0->cb, 0, u, 1, v0->guest_tgid), -EINVAL);
	HL_EXPECT("switch_in_system_wide_einval",
		  cb_switch(&v0->cb, 0, s, 1, v0->guest_tgid), -EINVAL);
	HL_EXPECT("switch_in_a", cb_switch(&v0->cb, 0, a, 31, v0->guest_tgid),
		  0);
	HL_EXPECT("switch_in_second_ebusy",
		  cb_switch(&v0->cb, 0, b, 32, v0->guest_tgid), -EBUSY);
	HL_EXPECT("switch_out_from_other_vcpu_einval",
		  cb_switch(&v1->cb, a, 0, 0, v1->guest_tgid), -EINVAL);
	HL_EXPECT("switch_out_a_in_b",
		  cb_switch(&v0->cb, a, b, 32, v0->guest_tgid), 0);
	HL_EXPECT("switch_b_in_on_other_vcpu_moves",
		  cb_switch(&v1->cb, 0, b, 32, v1->guest_tgid), 0);
	HL_EXPECT("switch_out_b", cb_switch(&v1->cb, b, 0, 0, v1->guest_tgid),
		  0);
	{
		struct pvpfm_switch_arg arg = { 0 };

		HL_EXPECT("switch_short_arg_einval",
			  cb_cmd(&v0->cb, PVPFM_CMD_SWITCH, 0, 0, &arg, 8),
			  -EINVAL);
	}
	cb_unload(&v0->cb, a);
	cb_unload(&v0->cb, b);
	hl_destroy_ctxs(v0, (uint32_t[]){ a, b, u, s }, 4);
}

/*
 * The fastest switching a guest can ask for (timeouts of the host's timer
 * granularity, PMU_INFO's set_timeout_res_ns: 1 ms; shorter ones are
 * refused) must not stop the guest: the host does each switch in its work
 * with IPIs to the vCPU's CPU, and if switches cost more than the timeout
 * they follow each other without end. The vCPU must still make progress:
 * 1000 OUTs that take a few ms alone must complete within 10 s.
 */
static void t_fast_switch_progress(void)
{
	const uint32_t flags[2] = { PFM_SETFL_TIME_SWITCH, PFM_SETFL_TIME_SWITCH };
	struct pvpfm_pmu_info info;
	uint64_t timeout[2], base, loaded, sw;
	int done_base = 0, done = 0;
	uint32_t id = 0;

	memset(&info, 0, sizeof(info));
	cb_pmu_info(&v0->cb, &info);
	timeout[0] = timeout[1] = info.set_timeout_res_ns;
	base = hl_run_io_timed(v0, 1000, 10000 * MS, &done_base);
	if (timeout[0])
		id = sets_ctx(v0, 2, flags, timeout, 0);
	if (!t_check(id && done_base, "fast_switch_setup",
		     "timeout %" PRIu64 " ns, context %u, 1000 OUTs alone %s",
		     timeout[0], id, done_base ? "done" : "not done"))
		return;
	cb_start(&v0->cb, id);
	sw = switches_now(&vm);
	loaded = hl_run_io_timed(v0, 1000, 10000 * MS, &done);
	sw = switches_now(&vm) - sw;
	cb_stop(&v0->cb, id);
	t_check(done, "fast_switch_guest_progress",
		"1000 OUTs: %.1f ms alone; with two sets switching at the floor "
		"%s after %.1f s (%" PRIu64 " set switches meanwhile)",
		base / 1e6, done ? "done" : "NOT done", loaded / 1e9, sw);
	t_note("1000 OUTs: %.1f ms alone, %.1f ms with fastest set switching "
	       "(%" PRIu64 " switches)", base / 1e6, loaded / 1e6, sw);
	cb_unload(&v0->cb, id);
	cb_destroy(&v0->cb, id);
}

int main(void)
{
	hl_init();
	if (!hl_check_vm("sets_vm_setup", hl_vm_simple(&vm, 2)))
		return t_done();
	v0 = &vm.vcpus[0];
	v1 = &vm.vcpus[1];
	time_switch("time_switch_equal", 10 * MS, 10 * MS, 200 * MS);
	time_switch("time_switch_1_to_3", 10 * MS, 30 * MS, 300 * MS);
	t_ovfl_switch();
	t_ovfl_pingpong();
	t_ovfl_switch_no_format();
	t_ovfl_switch_notify();
	t_switch_follow();
	t_switch_two_threads();
	t_switch_errors();
	t_fast_switch_progress();
	hl_vm_destroy(&vm);
	hl_check_module_idle("sets_module_idle");
	return t_done();
}
