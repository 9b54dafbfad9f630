// SPDX-License-Identifier: GPL-2.0
/*
 * t_throttle: a guest cannot make the host handle overflows without
 * bound. Period-1 sampling of VM_EXITS into a guest
 * buffer, in two sets that switch on every overflow
 * (PFM_SETFL_OVFL_SWITCH, reg_ovfl_switch_cnt 1: each overflow makes the
 * host close one set's counter and open the other's, which perf's own
 * throttling, per event, never sees). The PMDs ask for a notification
 * (PFM_REGFL_OVFL_NOTIFY): a full buffer is notified and restarted;
 * without one it would saturate the context (perfmon2 v2.8x: masked,
 * RESTART refused) and the overflows would stop.
 *
 *   idle      the guest halts in the kernel (irqchip VM) for IDLE_NS:
 *             the sampling does not sustain itself (each overflow's work
 *             runs in the vCPU thread and makes no exit of its own)
 *   exiting   the guest does nothing but halt, and its halts exit to this
 *             VMM (no irqchip), which enters it again at once: the most
 *             VM exits one vCPU can make, each an overflow, for EXITING_NS.
 *             With the module's max_overflow_rate set to RATE, the
 *             overflows the host handles stay within RATE per second
 *             (+ SLACK), and the ones it skipped are counted: in the
 *             guest's buffer header (hdr_reserved[PVPFM_DFL_HDR_LOST]), in
 *             the VM's samples_lost, samples + lost covering at least half
 *             of the exits the VMM saw
 *
 * Both print the host CPU spent outside the vCPU thread (all CPUs' busy
 * time from /proc/stat less the vCPU thread's own) per second of wall
 * time, held to OUTSIDE_MAX: the per-sample work must not land on
 * kworkers or other CPUs.
 *
 * The test sets /sys/module/kvm_perfmon/parameters/max_overflow_rate
 * (the admin's bound) and puts the old value back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "hostlib.h"

#define RATE_PARAM	"/sys/module/kvm_perfmon/parameters/max_overflow_rate"
/* the bound the test sets: overflows per second per VM */
#define RATE		1000
/*
 * The host counts against the bound in 10 ms windows, and delivers the
 * overflow that ends a throttled window late by up to the window: allow
 * a window's worth per second and one per vCPU per window on top.
 */
#define SLACK(secs)	((RATE / 100 + 100) * (secs))
#define EXITING_NS	(30 * SEC)
#define IDLE_NS		(5 * SEC)
/*
 * Host CPU outside the vCPU thread, ms per s of wall time. L1's own
 * background (timer ticks, the console, this program's main thread)
 * is a few ms per s on the TCG rig; a kworker or another CPU doing a
 * share of each overflow's work at thousands per second would be
 * hundreds.
 */
#define OUTSIDE_MAX	100
#define BUF_PAGES	16

struct phase {
	const char *name;
	uint32_t ctx;
	uint64_t buf;		/* gpa */
	uint64_t ns;
	bool exiting;
	/* out */
	uint64_t wall, vcpu_cpu, busy, exits, restarts;
	int ret;
};

static long rate_old = -1;

/* all CPUs' busy time (/proc/stat: user nice system irq softirq), ns */
static uint64_t busy_ns(void)
{
	unsigned long long u, n, s, idle, io, irq, sirq;
	FILE *f = fopen("/proc/stat", "r");
	int k;

	if (!f)
		return 0;
	k = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &u, &n, &s,
		   &idle, &io, &irq, &sirq);
	fclose(f);
	if (k != 7)
		return 0;
	return (u + n + s + irq + sirq) * SEC / sysconf(_SC_CLK_TCK);
}

/*
 * CPU time of host thread @tid in the same ticks as busy_ns() (utime and
 * stime of /proc/self/task/TID/stat), so that the two subtract cleanly
 */
static uint64_t thread_ticks_ns(pid_t tid)
{
	unsigned long long ut = 0, st = 0;
	char path[64], buf[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* the comm may hold spaces: the fields after its ')' */
	p = p ? strrchr(buf, ')') : NULL;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu", &ut, &st) != 2)
		return 0;
	return (ut + st) * SEC / sysconf(_SC_CLK_TCK);
}

/*
 * A system-wide context on @v: VM_EXITS at period 1 in sets 0 and 1,
 * each switching to the other on every overflow, sampled into a buffer
 * of BUF_PAGES at @buf, a full buffer notified.
 */
static uint32_t throttle_ctx(struct hl_vcpu *v, uint64_t buf)
{
	pfarg_setdesc_t d[2];
	pfarg_pmd_t p[2];
	int i;

	memset(d, 0, sizeof(d));
	for (i = 0; i < 2; i++) {
		d[i].set_id = i;
		d[i].set_flags = PFM_SETFL_OVFL_SWITCH;
		cb_pmd_init(&p[i], VM_EXITS, i, -1ULL);
		p[i].reg_flags = PFM_REGFL_OVFL_NOTIFY;
		p[i].reg_short_reset = -1ULL;
		p[i].reg_long_reset = -1ULL;
		p[i].reg_ovfl_switch_cnt = 1;
	}
	return hl_sets_ctx(v, __func__, d, 2, p, 2, buf, BUF_PAGES);
}

/*
 * On the vCPU thread: START, run the guest for ph->ns (halting in the
 * kernel until kicked, or re-entering it after every halt exit, a full
 * buffer restarted as a guest's sampler would), STOP.
 */
static int phase_fn(struct hl_vcpu *v, void *p)
{
	struct phase *ph = p;
	uint64_t c0, t0, end;
	pfarg_msg_t msg;
	int ret;

	ret = hl_vcpu_setup(v, HL_CODE_HLT, 0, 0);
	ret = ret ? ret : cb_start(&v->cb, ph->ctx);
	if (ret)
		return ph->ret = ret;
	c0 = thread_ticks_ns(v->tid);
	ph->busy = busy_ns();
	t0 = hl_mono_ns();
	end = t0 + ph->ns;
	if (!ph->exiting) {
		/* the main thread kicks it out after ph->ns */
		ret = hl_run_until_kicked(v);
		ph->exits = v->exits_hlt + v->exits_io;
	}
	while (ph->exiting && !ret && hl_mono_ns() < end) {
		if (ioctl(v->fd, KVM_RUN, 0) && errno != EINTR) {
			ret = -errno;
			break;
		}
		ph->exits++;
		if (hl_eventfd_read(v)) {
			/* its message read, or the queue fills and stays mute */
			while (!cb_read_msg(&v->cb, ph->ctx, &msg))
				;
			ret = cb_restart(&v->cb, ph->ctx);
			ph->restarts++;
		}
	}
	ph->wall = hl_mono_ns() - t0;
	ph->busy = busy_ns() - ph->busy;
	ph->vcpu_cpu = thread_ticks_ns(v->tid) - c0;
	if (!ret)
		ret = cb_stop(&v->cb, ph->ctx);
	return ph->ret = ret;
}

static void run_phase(struct hl_vm *vm, struct phase *ph)
{
	struct hl_vcpu *v = &vm->vcpus[0];
	struct timespec ts = { ph->ns / SEC, ph->ns % SEC };
	struct kvmpfm_vm_stats s0, s1;
	const pfm_dfl_smpl_hdr_t *hdr;
	uint64_t ovfl, lost, guest_lost, secs, outside;
	char n[96];

	ph->buf = hl_gpa_alloc(vm, BUF_PAGES * HL_PAGE);
	ph->ctx = throttle_ctx(v, ph->buf);
	snprintf(n, sizeof(n), "throttle_%s_setup", ph->name);
	if (!t_check(ph->ctx, n, "no context"))
		return;
	hdr = hl_hva(vm, ph->buf);
	hl_vm_stats(vm, &s0);
	if (ph->exiting) {
		hl_call(v, phase_fn, ph);
	} else {
		hl_call_async(v, phase_fn, ph);
		nanosleep(&ts, NULL);
		hl_kick_and_wait(v);
	}
	hl_vm_stats(vm, &s1);
	snprintf(n, sizeof(n), "throttle_%s_ran", ph->name);
	t_check(!ph->ret && ph->wall, n, "status %s", hl_status_str(ph->ret));

	secs = (ph->wall + SEC / 2) / SEC;
	if (!secs)
		secs = 1;
	ovfl = (uint64_t)(s1.overflows - s0.overflows);
	lost = (uint64_t)(s1.samples_lost - s0.samples_lost);
	guest_lost = (uint64_t)hdr->hdr_reserved[PVPFM_DFL_HDR_LOST];
	outside = ph->busy > ph->vcpu_cpu ? ph->busy - ph->vcpu_cpu : 0;
	outside = outside * 1000 / ph->wall;	/* ms per s */
	t_note("throttle %s: %" PRIu64 " ms, %" PRIu64 " exits seen by the "
	       "VMM, %" PRIu64 " overflows (%" PRIu64 "/s), %" PRIu64
	       " samples, %" PRIu64 " lost (guest header %" PRIu64 "), %"
	       PRIu64 " set switches, %" PRIu64 " restarts; vCPU thread CPU %"
	       PRIu64 " ms, host CPU outside the vCPU thread %" PRIu64
	       " ms per s", ph->name, (uint64_t)(ph->wall / MS), ph->exits, ovfl,
	       ovfl / secs, (uint64_t)(s1.samples - s0.samples), lost,
	       guest_lost, (uint64_t)(s1.set_switches - s0.set_switches), ph->restarts,
	       (uint64_t)(ph->vcpu_cpu / MS), outside);
	snprintf(n, sizeof(n), "throttle_%s_host_cpu_outside_vcpu", ph->name);
	t_check(outside <= OUTSIDE_MAX, n,
		"%" PRIu64 " ms per s of host CPU outside the vCPU thread, "
		"want <= %d", outside, OUTSIDE_MAX);
	snprintf(n, sizeof(n), "throttle_%s_overflow_rate", ph->name);
	t_check(ovfl <= RATE * secs + SLACK(secs), n,
		"%" PRIu64 " overflows handled in %" PRIu64 " s, want <= %"
		PRIu64 " (max_overflow_rate %d/s)", ovfl, secs,
		(uint64_t)(RATE * secs + SLACK(secs)), RATE);
	if (ph->exiting) {
		snprintf(n, sizeof(n), "throttle_%s_lost_visible_in_guest",
			 ph->name);
		t_check(guest_lost > 0 && guest_lost == lost, n,
			"guest buffer header counts %" PRIu64 " lost samples, "
			"the VM's stats %" PRIu64 ": the throttling must show "
			"in both, alike", guest_lost, lost);
		snprintf(n, sizeof(n), "throttle_%s_never_silent", ph->name);
		t_check(2 * (s1.samples - s0.samples + lost) >= ph->exits, n,
			"%" PRIu64 " samples + %" PRIu64 " lost for %" PRIu64
			" exits: overflows went uncounted",
			(uint64_t)(s1.samples - s0.samples), lost, ph->exits);
		snprintf(n, sizeof(n), "throttle_%s_guest_exited", ph->name);
		t_check(ph->exits > 10 * RATE, n,
			"%" PRIu64 " exits: too few to need throttling",
			ph->exits);
	}
	cb_unload(&v->cb, ph->ctx);
	cb_destroy(&v->cb, ph->ctx);
}

int main(void)
{
	struct phase idle = { .name = "idle", .ns = IDLE_NS };
	struct phase exiting = { .name = "exiting", .ns = EXITING_NS,
				 .exiting = true };
	struct hl_vm_opts o;
	struct hl_vm vm;
	int ret;

	hl_init();
	rate_old = hl_param_read(RATE_PARAM);
	ret = rate_old >= 0 ? hl_param_write(RATE_PARAM, RATE) : -ENOENT;
	/* without it, the phases still run: their figures show what it costs */
	t_check(!ret, "throttle_param", "%s: read %ld, write %s", RATE_PARAM,
		rate_old, hl_errname(ret));

	o = hl_vm_opts_simple(1);
	o.irqchip = true;
	ret = hl_vm_create(&vm, &o);
	if (t_check(!ret, "throttle_idle_vm", "irqchip VM: %s",
		    hl_errname(ret))) {
		run_phase(&vm, &idle);
		hl_vm_destroy(&vm);
	}

	ret = hl_vm_simple(&vm, 1);
	if (hl_check_vm("throttle_exiting_vm", ret)) {
		run_phase(&vm, &exiting);
		hl_vm_destroy(&vm);
	}
	if (rate_old >= 0)
		hl_param_write(RATE_PARAM, rate_old);
	hl_check_module_idle("throttle_module_idle");
	return t_done();
}
