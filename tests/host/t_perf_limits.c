// SPDX-License-Identifier: GPL-2.0
/*
 * t_perf_limits: host perf's own throttling is never silent. With
 * kernel.perf_event_max_sample_rate at 1 (perf allows one interrupt per
 * event per tick, then throttles the event until its next tick), a guest
 * spins for RUN_S seconds while VCPU_RUN_NS (the vCPU thread's
 * task-clock, an hrtimer software event) samples it every PERIOD_NS into
 * a buffer with room for RUN_S s of what perf allows. perf throttles the
 * event after its second interrupt in each tick: its hrtimer stops while
 * its count goes on, and the next overflow comes whole periods late.
 *
 *   throttles seen   getinfo's PVPFM_SETINFO_HOST_THROTTLES > 0, the
 *                    same in the VM's snapshot (host_throttles)
 *   lost counted     the periods not sampled: in the buffer header
 *                    (PVPFM_DFL_HDR_LOST), getinfo's OVFLS_LOST and the
 *                    snapshot's late_overflows, alike and > 0
 *   never silent     samples + lost cover the vCPU thread's CPU time in
 *                    periods: at least COVER_MIN of it (a late overflow
 *                    loses its partial period), and no more than the
 *                    wall time it ran (HL_BRACKET_REL above): the task
 *                    clock counts the thread's interrupts, which its CPU
 *                    time leaves out, up to a quarter more on a loaded
 *                    TCG rig
 *   not undone       perf's bound holds: samples taken stay below half
 *                    of what the period would give (the module does not
 *                    restart an event perf throttled)
 *
 * The test sets the sysctl and puts the old value back. A host where
 * it cannot be written (perf_cpu_time_max_percent 0 or 100: perf
 * refuses) fails the first check.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hostlib.h"

#define RATE_SYSCTL	"/proc/sys/kernel/perf_event_max_sample_rate"
#define PERIOD_NS	(200 * 1000ULL)
#define RUN_S		5
/* 6,500 entries: with one tick of 4 ms, perf allows 2,500 in RUN_S */
#define BUF_PAGES	64
/* of the periods the vCPU thread ran, sampled or counted lost */
#define COVER_MIN	0.5

struct run {
	uint32_t ctx;
	uint64_t cpu_ns;	/* the vCPU thread's, START to STOP */
	uint64_t wall_ns;
	uint64_t samples;
	int ret;
};

/* On the vCPU thread: START, spin in the guest until kicked, STOP */
static int run_fn(struct hl_vcpu *v, void *p)
{
	struct run *r = p;
	uint64_t c0, t0;
	int ret;

	ret = hl_vcpu_setup(v, HL_CODE_SPIN, 0, 0);
	c0 = hl_thread_ns();
	t0 = hl_mono_ns();
	ret = ret ? ret : cb_start(&v->cb, r->ctx);
	ret = ret ? ret : hl_run_until_kicked(v);
	ret = ret ? ret : cb_stop(&v->cb, r->ctx);
	r->cpu_ns = hl_thread_ns() - c0;
	r->wall_ns = hl_mono_ns() - t0;
	return r->ret = ret;
}

static void check_limits(struct hl_vm *vm, struct run *r, uint64_t buf)
{
	const pfm_dfl_smpl_hdr_t *hdr = hl_hva(vm, buf);
	struct kvmpfm_snap_vm snap, *s = &snap;
	uint64_t hdr_lost, throttles, lost, periods, wall_periods;
	pfarg_setinfo_t si;
	int ret, sret;

	memset(&si, 0, sizeof(si));
	ret = cb_getinfo_sets(&vm->vcpus[0].cb, r->ctx, &si, 1);
	sret = hl_only_vm_snap(vm->pfm_fd, &snap);
	if (!t_check(!ret && !sret, "perf_limits_read",
		     "getinfo %s, snapshot %s", hl_status_str(ret),
		     hl_status_str2(sret)))
		return;
	hdr_lost = hdr->hdr_reserved[PVPFM_DFL_HDR_LOST];
	throttles = si.set_reserved3[PVPFM_SETINFO_HOST_THROTTLES];
	lost = si.set_reserved3[PVPFM_SETINFO_OVFLS_LOST];
	periods = r->cpu_ns / PERIOD_NS;
	wall_periods = r->wall_ns / PERIOD_NS;
	t_note("perf limits: vCPU thread CPU %" PRIu64 " ms (%" PRIu64
	       " periods of %" PRIu64 " us) in %" PRIu64 " ms, %" PRIu64
	       " samples, %" PRIu64
	       " lost (header %" PRIu64 ", late_overflows %" PRIu64
	       "), %" PRIu64 " host throttles (snapshot %" PRIu64
	       "), %" PRIu64 " periods raised",
	       (uint64_t)(r->cpu_ns / MS), periods,
	       (uint64_t)(PERIOD_NS / 1000), (uint64_t)(r->wall_ns / MS),
	       r->samples, lost,
	       hdr_lost, (uint64_t)s->late_overflows, throttles,
	       (uint64_t)s->host_throttles,
	       (uint64_t)si.set_reserved3[PVPFM_SETINFO_PERIODS_RAISED]);
	t_check(throttles > 0 && throttles == s->host_throttles,
		"perf_limits_throttles_seen",
		"getinfo %" PRIu64 ", snapshot %" PRIu64 ": want > 0, alike",
		throttles, (uint64_t)s->host_throttles);
	t_check(lost > 0 && lost == hdr_lost && lost == s->late_overflows,
		"perf_limits_lost_counted",
		"getinfo %" PRIu64 ", header %" PRIu64 ", late_overflows %"
		PRIu64 ": want > 0, alike", lost, hdr_lost,
		(uint64_t)s->late_overflows);
	t_check(r->samples + lost >= COVER_MIN * periods &&
		r->samples + lost <= (1 + HL_BRACKET_REL) * wall_periods + 1,
		"perf_limits_never_silent",
		"%" PRIu64 " samples + %" PRIu64 " lost for %" PRIu64
		" periods run, %" PRIu64 " of wall time: want %.0f%% of the "
		"first to %.0f%% of the second", r->samples, lost, periods,
		wall_periods, 100 * COVER_MIN, 100 * (1 + HL_BRACKET_REL));
	t_check(2 * r->samples < periods, "perf_limits_not_undone",
		"%" PRIu64 " samples for %" PRIu64 " periods: perf's bound "
		"did not hold", r->samples, periods);
}

int main(void)
{
	const struct timespec run_time = { RUN_S, 0 };
	struct hl_vm vm;
	struct run r = { 0 };
	pfarg_setdesc_t d;
	pfarg_pmd_t p;
	long old;
	uint64_t buf;
	int ret;

	hl_init();
	old = hl_param_read(RATE_SYSCTL);
	ret = old > 0 ? hl_param_write(RATE_SYSCTL, 1) : -ENOENT;
	if (!t_check(!ret, "perf_limits_sysctl", "%s: read %ld, write 1: %s",
		     RATE_SYSCTL, old, hl_errname(ret)))
		return t_done();
	ret = hl_vm_simple(&vm, 1);
	if (!hl_check_vm("perf_limits_vm", ret))
		goto restore;
	buf = hl_gpa_alloc(&vm, BUF_PAGES * HL_PAGE);
	memset(&d, 0, sizeof(d));
	cb_pmd_init(&p, RUN_NS, 0, -PERIOD_NS);
	p.reg_short_reset = -PERIOD_NS;
	p.reg_long_reset = -PERIOD_NS;
	r.ctx = hl_sets_ctx(&vm.vcpus[0], "perf_limits", &d, 1, &p, 1, buf,
			    BUF_PAGES);
	if (t_check(r.ctx, "perf_limits_setup", "no context")) {
		struct kvmpfm_vm_stats s0, s1;

		hl_vm_stats(&vm, &s0);
		hl_call_async(&vm.vcpus[0], run_fn, &r);
		nanosleep(&run_time, NULL);
		hl_kick_and_wait(&vm.vcpus[0]);
		hl_vm_stats(&vm, &s1);
		r.samples = s1.samples - s0.samples;
		t_check(!r.ret, "perf_limits_ran", "status %s",
			hl_status_str(r.ret));
		check_limits(&vm, &r, buf);
	}
	hl_vm_destroy(&vm);
restore:
	hl_param_write(RATE_SYSCTL, old);
	hl_check_module_idle("perf_limits_module_idle");
	return t_done();
}
