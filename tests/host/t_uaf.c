// SPDX-License-Identifier: GPL-2.0
/*
 * t_uaf: no use after free of a counter's backend state. perf runs the
 * overflow handler of the tracepoint-backed virtual PMDs (VM_EXITS:
 * kvm_exit, HALT_EXITS: kvm_vcpu_wakeup, HOST_PAGE_FAULTS:
 * kvm_page_fault) under RCU, the last two with interrupts on; a counter
 * closed by another thread must not be freed while a handler on the
 * vCPU's CPU can still read it (the module frees it with kvfree_rcu, and
 * VM release waits a grace period).
 *
 * Each iteration builds a VM (in-kernel irqchip, 2 vCPUs) whose vCPU 0
 * counts the three tracepoint PMDs at period 1 (value, short and long
 * reset -1: an overflow, so a handler call, on every event), in two event
 * sets switching on every overflow (PFM_SETFL_OVFL_SWITCH, each PMD's
 * reg_ovfl_switch_cnt 1: without a format an overflow that does not
 * switch sets masks monitoring, perfmon2 v2.8x; one that does, nothing
 * notified, short-resets and goes on, so the overflows never stop), some
 * iterations into a sampling buffer (the PMDs then ask for a
 * notification: a full buffer is notified, and vCPU 0 restarts it); its
 * thread runs the guest in a loop that makes all three events (OUT exits,
 * writes to guest pages the host has just zapped with MADV_DONTNEED,
 * in-kernel HLTs woken by a timer signal). Meanwhile vCPU 1's thread
 * switches vCPU 0's sets with START(set) and unloads the context now and
 * then, at most once per guest cycle of vCPU 0 (which loads it again):
 * counters closed and their events freed from another thread. Once
 * vCPU 0 has been through its guest code twice (and 0-50 ms more), the
 * iteration ends one of three ways, in turn:
 *   close    the main thread closes /dev/kvm-perfmon while all this runs
 *   kill     a child process doing all this is SIGKILLed
 *   destroy  vCPU 1 DESTROYs the running context, then everything closes
 * Checked after each: the VM's handlers ran (the module's overflow total
 * grew), the switches and the guest ran, and the module holds nothing
 * (KVMPFM_GET_MODULE_STATS: allocations, perf_events, pinned_pages, vms
 * back to zero); at the end, no line of concern in L1's kernel log since
 * the test started (the rig's bad-patterns: WARN, BUG, oops, GP fault,
 * call trace; and RCU stalls, hung tasks). A first part shows that each
 * of the three PMDs overflows at period 1 with this guest code (alone,
 * in the same two switching sets).
 *
 * Each teardown waits (at most 1 s) for vCPU 0 to be writing its pages,
 * when its handler calls, interrupts on, are densest.
 *
 * What it can catch, and where. The race needs the closing thread and the
 * handler on two CPUs: a tracepoint handler runs with preemption off, so
 * on a one-CPU L1 (make -C tests/host check) nothing can close the
 * counter in the middle of it; there this test covers the teardown paths
 * under period-1 sampling (oops, WARN, leaks: the log and the counters)
 * but cannot fail on that race. On a two-CPU L1 (make test's host stage)
 * vCPU 0 runs on CPU 0, vCPU 1 and the main thread on CPU 1, and a close
 * can land while a handler runs. The rig's kernel (Debian's) has no KASAN
 * and no KFENCE, and SLUB keeps a freed object's words (its free pointer
 * lies mid-object), so a stale read by a module that frees too early
 * would mostly see the old values; it shows (a GP fault in
 * kvmpfm_overflow, failing the log check) with slab poisoning
 * (slub_debug=P for kmalloc-cg-256, where the 240-byte struct lives) or
 * when the object was reused in between.
 * How often it has caught the freed-too-early module on this rig:
 * tests/host/README.
 *
 * T_UAF_ITERS (default 30) and T_UAF_SEED (1) in the environment;
 * T_UAF_VERBOSE prints each step of each iteration.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "hostlib.h"

#define SMPL_PAGES	2
#define BIT(n)		(1ULL << ((n) % 64))
#define WORD(n)		((n) / 64)

enum { M_CLOSE, M_KILL, M_DESTROY, M_N };
static const char *const mode_name[M_N] = { "close", "kill", "destroy" };

struct uaf_vm {
	struct hl_vm vm;
	uint32_t ctx;		/* vCPU 0's system-wide context */
	bool smpl;		/* with a sampling buffer */
	volatile int stop;
	volatile int reload;	/* vCPU 1 unloaded it: vCPU 0 loads it again */
	volatile int destroy;	/* vCPU 1: DESTROY it now */
	int ncpus;
	/* vCPU 0 */
	volatile uint64_t cycles;
	volatile uint64_t load_cycle;	/* cycles when it last loaded it */
	uint64_t halts, restarts;
	int run_err;
	/* vCPU 1 */
	uint64_t switches, switches_ok, unloads, destroyed;
};

static uint64_t seed = 1, seed0 = 1;
/*
 * 1 while a vCPU 0 (this process's or a kill child's) runs the page
 * writes, the densest run of handler calls with interrupts on: the
 * teardowns wait for it. A shared page, NULL in the probe.
 */
static volatile int *in_faults;
static int verbose;		/* T_UAF_VERBOSE: each step of each iteration */

#define STEP(...) do {					\
		if (verbose)					\
			printf("uaf: " __VA_ARGS__);		\
	} while (0)

static uint64_t rnd(void)
{
	seed ^= seed >> 12;
	seed ^= seed << 25;
	seed ^= seed >> 27;
	return seed * 0x2545f4914f6cdd1dULL;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000ULL, ns % 1000000000ULL };

	nanosleep(&ts, NULL);
}

/* PMD @num at period 1 in @set; in an OVFL_SWITCH set each overflow switches */
static void pmd_period1(pfarg_pmd_t *p, uint16_t num, uint16_t set)
{
	cb_pmd_init(p, num, set, (uint64_t)-1);
	p->reg_short_reset = (uint64_t)-1;
	p->reg_long_reset = (uint64_t)-1;
	p->reg_ovfl_switch_cnt = 1;
}

/*
 * Sets 0 and 1 of @ctx, each switching to the other on an overflow of
 * its PMDs at period 1: the overflows go on without a format
 */
static int ovfl_switch_sets(struct hl_vcpu *v, uint32_t ctx)
{
	pfarg_setdesc_t d[2];
	int i;

	memset(d, 0, sizeof(d));
	for (i = 0; i < 2; i++) {
		d[i].set_id = i;
		d[i].set_flags = PFM_SETFL_OVFL_SWITCH;
	}
	return cb_create_sets(&v->cb, ctx, d, 2);
}

/*
 * On vCPU 0: the context, maybe with a buffer, two sets switching on
 * every overflow, each with the three tracepoint PMDs at period 1 (set 1
 * also counts RUN_NS: the sets' events differ), loaded and started.
 */
static int uaf_ctx(struct uaf_vm *u)
{
	struct hl_vcpu *v = &u->vm.vcpus[0];
	pfarg_pmd_t p[7];
	uint64_t g[SMPL_PAGES];
	int ret, i, s;

	ret = u->smpl ? cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE,
				       SMPL_PAGES * HL_PAGE, &u->ctx) :
			cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &u->ctx);
	if (!ret && u->smpl) {
		for (i = 0; i < SMPL_PAGES; i++)
			g[i] = hl_gpa_alloc(&u->vm, HL_PAGE);
		ret = cb_smpl_register(&v->cb, u->ctx, 0, SMPL_PAGES, g);
	}
	ret = ret ? ret : ovfl_switch_sets(v, u->ctx);
	for (s = 0; s < 2; s++) {
		pmd_period1(&p[3 * s], VM_EXITS, s);
		pmd_period1(&p[3 * s + 1], HALT_EXITS, s);
		pmd_period1(&p[3 * s + 2], HOST_PAGE_FAULTS, s);
		if (u->smpl)
			p[3 * s].reg_smpl_pmds[WORD(HALT_EXITS)] =
				BIT(HALT_EXITS) | BIT(HOST_PAGE_FAULTS);
	}
	/* a full buffer is notified only to a PMD that asks: vCPU 0 restarts */
	for (i = 0; u->smpl && i < 6; i++)
		p[i].reg_flags = PFM_REGFL_OVFL_NOTIFY;
	cb_pmd_init(&p[6], RUN_NS, 1, 0);
	ret = ret ? ret : cb_write_pmds(&v->cb, u->ctx, p, 7);
	ret = ret ? ret : cb_load(&v->cb, u->ctx, 0, 0, 0, v->guest_tgid);
	ret = ret ? ret : cb_start(&v->cb, u->ctx);
	return ret;
}

/* a timer that sends SIGUSR1 to this thread every @ns (0: off) */
static int kick_timer(timer_t *tm, bool *made, uint64_t ns)
{
	struct itimerspec its;
	struct sigevent sev;

	if (!*made) {
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = SIGUSR1;
		sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (timer_create(CLOCK_MONOTONIC, &sev, tm))
			return -errno;
		*made = true;
	}
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = ns;
	its.it_interval.tv_nsec = ns;
	return timer_settime(*tm, 0, &its, NULL) ? -errno : 0;
}

/*
 * n in-kernel HLTs (irqchip), each woken by the timer's signal, which
 * fires every @period_ns to start with. A signal can also come before
 * the guest reached its HLT (entering L2 is slow on the TCG rig, slower
 * on a debug kernel, and the fuzzers share the cores): only a return
 * with the vCPU halted counts, within HALT_TRIES returns a halt, and the
 * period doubles (up to HALT_PERIOD_MAX_NS) each HALT_SLOWER returns in
 * a row that were not one.
 */
#define HALT_TRIES		50
#define HALT_SLOWER		5
#define HALT_PERIOD_MAX_NS	(20 * MS)
static int halts(struct uaf_vm *u, struct hl_vcpu *v, int n, timer_t *tm,
		 bool *made, uint64_t period_ns)
{
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
	struct kvm_mp_state now;
	int i, tries = 0, missed = 0, ret = hl_vcpu_setup(v, HL_CODE_HLT, 0, 0);

	ret = ret ? ret : kick_timer(tm, made, period_ns);
	for (i = 0; !ret && i < n && !u->stop; ) {
		if (tries++ == n * HALT_TRIES) {
			ret = -ETIME;
			break;
		}
		v->run->immediate_exit = 0;
		if (!ioctl(v->fd, KVM_RUN, 0))
			continue;	/* an exit to userspace: not expected */
		if (errno != EINTR)
			ret = -errno;
		else if (ioctl(v->fd, KVM_GET_MP_STATE, &now))
			ret = -errno;
		else if (now.mp_state == KVM_MP_STATE_HALTED) {
			u->halts++;
			i++;
			missed = 0;
		} else if (++missed == HALT_SLOWER &&
			   period_ns < HALT_PERIOD_MAX_NS) {
			missed = 0;
			period_ns *= 2;
			ret = kick_timer(tm, made, period_ns);
		}
	}
	kick_timer(tm, made, 0);
	/* the next guest code must run, not halt */
	if (ioctl(v->fd, KVM_SET_MP_STATE, &mp) && !ret)
		ret = -errno;
	v->run->immediate_exit = 0;
	return ret;
}

/* one round of guest code making all three events */
static int guest_cycle(struct uaf_vm *u, struct hl_vcpu *v, timer_t *tm,
		       bool *made)
{
	int ret;

	/* fresh host pages: each guest write is a nested page fault */
	madvise(hl_hva(&u->vm, HL_TOUCH_GPA), HL_TOUCH_PAGES * HL_PAGE,
		MADV_DONTNEED);
	ret = hl_vcpu_setup(v, HL_CODE_TOUCH, HL_TOUCH_PAGES,
			    HL_TOUCH_GPA >> 4);
	if (in_faults)
		*in_faults = 1;
	ret = ret ? ret : hl_run_to_done(v);
	if (in_faults)
		*in_faults = 0;
	ret = ret ? ret : hl_run_io(v, 100);
	ret = ret ? ret : halts(u, v, 4, tm, made, 200 * US);
	return ret;
}

/* vCPU 0: the guest, again and again; reload or restart when told */
static int work0(struct hl_vcpu *v, void *p)
{
	struct uaf_vm *u = p;
	bool made = false;
	pfarg_msg_t m;
	timer_t tm;
	int ret = 0;

	/* its handlers on CPU 0, whatever HL_PIN_VCPUS says; the closers on 1 */
	if (u->ncpus > 1)
		hl_pin_cpu(0);
	while (!u->stop) {
		if (u->reload) {
			/* errors after a close or destroy are expected */
			if (!cb_load(&v->cb, u->ctx, 0, 0, 0, v->guest_tgid))
				cb_start(&v->cb, u->ctx);
			u->load_cycle = u->cycles;
			u->reload = 0;
		}
		ret = guest_cycle(u, v, &tm, &made);
		if (ret)
			break;
		if (u->smpl && hl_eventfd_read(v)) {
			while (!cb_read_msg(&v->cb, u->ctx, &m))
				;
			u->restarts += !cb_restart(&v->cb, u->ctx);
		}
		u->cycles++;
	}
	if (made)
		timer_delete(tm);
	u->run_err = ret;
	return ret;
}

/* vCPU 1: vCPU 0's sets switched from here; an unload now and then */
static int work1(struct hl_vcpu *v, void *p)
{
	struct uaf_vm *u = p;
	uint64_t n = 0, next_unload = 64;
	int ret;

	if (u->ncpus > 1)
		hl_pin_cpu(1);
	while (!u->stop) {
		if (u->destroy == 1) {
			u->destroyed += !cb_destroy(&v->cb, u->ctx);
			u->destroy = 2;
		}
		if (u->destroy)
			break;
		if (u->reload) {
			/* unloaded: vCPU 0 loads it after its guest cycle */
			hl_busy_ns(50 * US);
			continue;
		}
		/*
		 * At most once per guest cycle of vCPU 0, so that the cycle
		 * after each load counts: vCPU 1's calls can outpace vCPU 0's
		 * guest entries many times over (a two-CPU L1 whose CPUs one
		 * TCG thread runs in turn), and the context would then be
		 * unloaded whenever the guest ran.
		 */
		if (++n >= next_unload && u->cycles > u->load_cycle) {
			next_unload = n + 64;
			ret = cb_unload(&v->cb, u->ctx);
			if (!ret) {
				u->unloads++;
				u->reload = 1;
			}
		} else {
			ret = cb_start_set(&v->cb, u->ctx, n % 2);
			u->switches++;
			u->switches_ok += !ret;
		}
		if (HL_IS_IOCTL_ERR(ret))
			break;		/* the binding is gone */
		hl_busy_ns(20 * US + rnd() % (100 * US));
	}
	return 0;
}

static int uaf_up(struct uaf_vm *u, bool smpl, int ncpus)
{
	struct hl_vm_opts o;
	int ret;

	memset(u, 0, sizeof(*u));
	u->smpl = smpl;
	u->ncpus = ncpus;
	o = hl_vm_opts_simple(2);
	o.irqchip = true;
	ret = hl_vm_create(&u->vm, &o);
	ret = ret ? ret : uaf_ctx(u);
	if (ret) {
		hl_vm_destroy(&u->vm);
		return ret;
	}
	hl_call_async(&u->vm.vcpus[0], work0, u);
	hl_call_async(&u->vm.vcpus[1], work1, u);
	return 0;
}

static void uaf_stop(struct uaf_vm *u)
{
	u->stop = 1;
	hl_call_wait(&u->vm.vcpus[1]);
	hl_call_wait(&u->vm.vcpus[0]);
}

/* ---- each PMD alone overflows at period 1 with this guest code ------------ */

static int probe_fn(struct hl_vcpu *v, void *p)
{
	struct uaf_vm *u = p;
	bool made = false;
	timer_t tm;
	int ret;

	ret = guest_cycle(u, v, &tm, &made);
	if (made)
		timer_delete(tm);
	return ret;
}

static void t_probe(void)
{
	static const uint16_t pmds[] = { VM_EXITS, HALT_EXITS, HOST_PAGE_FAULTS };
	static const char *const names[] = {
		"uaf_vm_exits_period1_overflows",
		"uaf_halt_exits_period1_overflows",
		"uaf_page_faults_period1_overflows",
	};
	static struct uaf_vm u;
	struct kvmpfm_vm_stats a, b;
	struct hl_vm_opts o;
	struct hl_vcpu *v;
	pfarg_pmd_t p[2];
	uint32_t id;
	unsigned int i;
	int ret;

	memset(&u, 0, sizeof(u));
	o = hl_vm_opts_simple(1);
	o.irqchip = true;
	if (!hl_check_vm("uaf_probe_setup", hl_vm_create(&u.vm, &o)))
		return;
	v = &u.vm.vcpus[0];
	for (i = 0; i < 3; i++) {
		id = 0;
		pmd_period1(&p[0], pmds[i], 0);
		pmd_period1(&p[1], pmds[i], 1);
		ret = cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &id);
		ret = ret ? ret : ovfl_switch_sets(v, id);
		ret = ret ? ret : cb_write_pmds(&v->cb, id, p, 2);
		ret = ret ? ret : cb_load(&v->cb, id, 0, 0, 0, v->guest_tgid);
		ret = ret ? ret : hl_vm_stats(&u.vm, &a);
		ret = ret ? ret : cb_start(&v->cb, id);
		ret = ret ? ret : hl_call(v, probe_fn, &u);
		ret = ret ? ret : cb_stop(&v->cb, id);
		ret = ret ? ret : hl_vm_stats(&u.vm, &b);
		t_check(!ret && b.overflows > a.overflows, names[i],
			"status %s; overflows %" PRIu64 " in one guest cycle "
			"(64 zapped pages written, 100 OUTs, %" PRIu64
			" halts so far)", hl_status_str(ret),
			ret ? 0 : (uint64_t)(b.overflows - a.overflows),
			u.halts);
		if (!ret)
			t_note("uaf: PMD %u alone at period 1: %" PRIu64
			       " overflows in one guest cycle", pmds[i],
			       (uint64_t)(b.overflows - a.overflows));
		if (id)
			cb_destroy(&v->cb, id);
	}
	hl_vm_destroy(&u.vm);
	hl_check_module_idle("uaf_probe_module_idle");
}

/* ---- the loop ----------------------------------------------------------------- */

struct totals {
	int iters[M_N], failed_setup, in_faults;
	uint64_t overflows, switches, switches_ok, unloads, cycles, halts;
	uint64_t restarts, destroyed;
};

static void add_totals(struct totals *t, const struct uaf_vm *u)
{
	t->switches += u->switches;
	t->switches_ok += u->switches_ok;
	t->unloads += u->unloads;
	t->cycles += u->cycles;
	t->halts += u->halts;
	t->restarts += u->restarts;
	t->destroyed += u->destroyed;
}

/*
 * Until vCPU 0 has run the guest through two cycles with its counters
 * (overflows happened), at most 20 s; false if it did not
 */
static bool busy_yet(struct uaf_vm *u)
{
	uint64_t t0 = hl_mono_ns();

	while (u->cycles < 2 && !u->run_err) {
		if (hl_mono_ns() - t0 > 20000 * MS)
			return false;
		sleep_ns(1 * MS);
	}
	return !u->run_err;
}

/*
 * until the VM has overflowed (at most 10 s): the teardown must find its
 * sampling under way. Two vCPU threads on a two-CPU L1 under TCG can take
 * long to be scheduled after the guest's first cycles.
 */
static bool sampling_yet(struct uaf_vm *u)
{
	struct kvmpfm_vm_stats vs = { 0 };
	uint64_t t0 = hl_mono_ns();

	while (!hl_vm_stats(&u->vm, &vs) && !vs.overflows && !u->run_err) {
		if (hl_mono_ns() - t0 > 10000 * MS)
			return false;
		sleep_ns(1 * MS);
	}
	return vs.overflows > 0;
}

/* the child of a kill iteration: the busy VM, until SIGKILL */
static void kill_child(int wfd, bool smpl, int ncpus)
{
	static struct uaf_vm u;
	char c = 1;

	t_passed = t_failed = 0;
	if (uaf_up(&u, smpl, ncpus))
		_exit(3);
	/* the parent counts on an overflow delivered before its kill */
	if (!busy_yet(&u) || !sampling_yet(&u))
		_exit(5);
	if (write(wfd, &c, 1) != 1)
		_exit(4);
	for (;;)
		pause();
}

/* until vCPU 0 writes its pages (at most 1 s): true if it does */
static bool wait_faults(void)
{
	uint64_t t0 = hl_mono_ns();

	while (!*in_faults && hl_mono_ns() - t0 < 1000 * MS)
		sleep_ns(20 * US);
	return *in_faults;
}

/* one iteration; true if all its checks passed */
static bool iteration(int i, int mode, bool smpl, int ncpus, struct totals *t)
{
	static struct uaf_vm u;
	struct kvmpfm_module_stats m0, m1;
	struct kvmpfm_vm_stats vs = { 0 };
	char name[96], why[256], vm_why[160] = "", c = 0;
	uint64_t live = rnd() % (50 * MS);
	bool ok = true, idle;
	int ret, pfd[2], st = 0;
	pid_t pid;

	*in_faults = 0;		/* a killed child may have left it set */
	hl_module_stats(&m0);
	STEP("%d %s%s: start\n", i, mode_name[mode], smpl ? " smpl" : "");
	if (mode == M_KILL) {
		if (pipe(pfd))
			return false;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			kill_child(pfd[1], smpl, ncpus);
		}
		close(pfd[1]);
		ret = pid > 0 && read(pfd[0], &c, 1) == 1 && c == 1;
		close(pfd[0]);
		STEP("%d: child ready %d\n", i, ret);
		if (ret) {
			sleep_ns(live);
			t->in_faults += wait_faults();
		}
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
		if (!ret || !WIFSIGNALED(st)) {
			snprintf(name, sizeof(name), "uaf_%d_kill_child", i);
			t_check(false, name, "the child did not get its VM "
				"busy (wait status %#x)", st);
			ok = false;
		}
	} else {
		ret = uaf_up(&u, smpl, ncpus);
		if (ret) {
			snprintf(name, sizeof(name), "uaf_%d_setup", i);
			t_check(false, name, "%s", hl_status_str(ret));
			t->failed_setup++;
			return false;
		}
		busy_yet(&u);
		sampling_yet(&u);
		STEP("%d: busy, %" PRIu64 " cycles\n", i, u.cycles);
		sleep_ns(live);
		t->in_faults += wait_faults();
		/* the VM as the teardown finds it: why a check below failed */
		if (!hl_vm_stats(&u.vm, &vs))
			snprintf(vm_why, sizeof(vm_why), "; before the %s: VM "
				 "overflows %llu, set switches %llu, loaded %u, "
				 "counters %u, deferred runs %llu, throttled %llu",
				 mode_name[mode],
				 (unsigned long long)vs.overflows,
				 (unsigned long long)vs.set_switches, vs.loaded,
				 vs.active_counters,
				 (unsigned long long)vs.deferred_runs,
				 (unsigned long long)vs.throttled);
		if (mode == M_CLOSE) {
			hl_vm_close_pfm(&u.vm);
		} else {
			u.destroy = 1;
			while (u.destroy == 1)
				sleep_ns(1 * MS);
		}
		STEP("%d: closed or destroyed\n", i);
		sleep_ns(20 * MS);
		uaf_stop(&u);
		STEP("%d: stopped\n", i);
		add_totals(t, &u);
		if (u.run_err || !u.cycles || !u.switches_ok ||
		    (mode == M_DESTROY && !u.destroyed)) {
			snprintf(name, sizeof(name), "uaf_%d_%s_ran", i,
				 mode_name[mode]);
			t_check(false, name, "guest cycles %" PRIu64 " (%s), "
				"set switches from vCPU 1 %" PRIu64 " of %"
				PRIu64 ", destroyed %" PRIu64, u.cycles,
				hl_errname(u.run_err), u.switches_ok,
				u.switches, u.destroyed);
			ok = false;
		}
		hl_vm_destroy(&u.vm);
	}
	t->iters[mode]++;
	STEP("%d: done\n", i);
	idle = hl_module_idle(2000, why, sizeof(why));
	hl_module_stats(&m1);
	t->overflows += m1.overflows - m0.overflows;
	if (!idle || m1.overflows <= m0.overflows) {
		snprintf(name, sizeof(name), "uaf_%d_%s", i, mode_name[mode]);
		t_check(false, name, "%s%s; overflows %" PRIu64 "%s",
			idle ? "" : "module not idle: ", idle ? "idle" : why,
			(uint64_t)(m1.overflows - m0.overflows), vm_why);
		ok = false;
	}
	return ok;
}

int main(void)
{
	struct totals t;
	const char *env;
	int i, iters, ncpus, kfd, concerns, bad = 0;

	hl_init();
	hl_check_allow_host_page_faults();
	env = getenv("T_UAF_ITERS");
	iters = env ? atoi(env) : 30;
	env = getenv("T_UAF_SEED");
	seed = env ? strtoull(env, NULL, 0) : 1;
	if (!seed)
		seed = 1;
	seed0 = seed;
	verbose = getenv("T_UAF_VERBOSE") != NULL;
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	kfd = hl_klog_start();
	t_check(kfd >= 0, "uaf_kernel_log_open", "/dev/kmsg: %s",
		hl_errname(kfd));
	/* vCPU 0's thread is on CPU 0 (work0); the closing thread elsewhere */
	if (ncpus > 1)
		hl_pin_cpu(1);
	else
		t_note("uaf: one L1 CPU: a close cannot land inside an "
		       "overflow handler here (see the header); "
		       "make test's host stage runs this on two");

	t_probe();
	in_faults = mmap(NULL, HL_PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!t_check(in_faults != MAP_FAILED, "uaf_shared_page", "mmap: %s",
		     hl_errname(errno)))
		return t_done();

	memset(&t, 0, sizeof(t));
	for (i = 0; i < iters; i++) {
		bad += !iteration(i, i % M_N, (i / M_N) % 2, ncpus, &t);
		if (i % 10 == 9)
			printf("uaf: progress: %d iterations, %d failed, "
			       "overflows %" PRIu64 "\n", i + 1, bad,
			       t.overflows);
	}
	t_check(!bad, "uaf_loop", "%d of %d iterations failed (see above)",
		bad, iters);
	printf("uaf: %d iterations on %d L1 CPU(s), seed %" PRIu64
	       ": close %d, kill %d, destroy %d (%d of them while vCPU 0 "
	       "wrote its pages); overflows %" PRIu64
	       "; set switches from vCPU 1 %" PRIu64 " of %" PRIu64
	       " tried, unloads %" PRIu64 "; vCPU 0: %" PRIu64 " guest cycles, %"
	       PRIu64 " halts, %" PRIu64 " restarts (close and destroy "
	       "iterations)\n", iters, ncpus, seed0, t.iters[M_CLOSE],
	       t.iters[M_KILL], t.iters[M_DESTROY], t.in_faults, t.overflows,
	       t.switches_ok, t.switches, t.unloads, t.cycles, t.halts,
	       t.restarts);
	hl_check_module_idle("uaf_module_idle");
	concerns = hl_klog_concerns(kfd, 20, "uaf: L1 log: ");
	printf("uaf: L1 kernel log lines of concern: %d\n", concerns);
	t_check(concerns == 0, "uaf_kernel_log_clean",
		"%d line(s) of concern in L1's kernel log%s", concerns,
		concerns < 0 ? " (could not read it)" : "");
	return t_done();
}
