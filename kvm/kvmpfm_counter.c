// SPDX-License-Identifier: GPL-2.0
/*
 * Counter lifecycle: the engine's counters on host perf events. Open,
 * close, read, write, enable and disable, and the events kept across set
 * switches.
 *
 * Each open engine counter is one host perf event bound to the vCPU
 * thread (or, for two hypervisor events KVM already counts, a polled
 * value). The engine sees a KVMPFM_COUNTER_WIDTH-bit counter:
 *
 *   value = written + (raw - base) - wraps * 2^width
 *
 * where raw is perf's 64-bit count, (written, base) the last write and
 * wraps the wraps delivered to the engine since.
 * The perf sample period is set so that perf interrupts when value wraps;
 * perf may interrupt earlier (hardware periods are clamped), so the
 * deferred work checks raw against next_wrap before reporting a wrap.
 * Until a wrap is reported the value holds at all-ones: the engine never
 * sees a counter wrap without its overflow, whichever thread reads it.
 * Finding and delivering the wraps is the overflow path's, in the
 * counter's own vCPU thread (kvmpfm_overflow.c); a call from another vCPU
 * reads the held value until then. Should such a call take the context
 * out first (unload, close, a SWITCH in elsewhere), the PMD keeps the held
 * value: its overflow comes with the first event once the context is in
 * again, and what it counted from the wrap to the unload is lost (what
 * the owner counts before its next guest entry, when it delivers). A
 * counter armed while the VM is throttled is held (kvmpfm_throttle.c).
 *
 * Locking: every operation here runs with vm->lock held (engine calls,
 * the vCPU's task work, teardown), and so do the vCPU's counter fields
 * (ctr_by_pmd, kept, nr_open). The overflow handler reads a counter
 * under RCU, with no lock: a counter is freed after a grace period.
 * Operations from outside the counter's vCPU thread are counted as
 * remote (each may be a cross-CPU call).
 */
#include <linux/sched.h>
#include "kvmpfm.h"

static u64 poll_read(struct kvmpfm_counter *kc)
{
	struct kvmpfm_vcpu *vcpu = kc->vcpu;

	switch (kc->poll) {
	case KVMPFM_POLL_PREEMPT:
		return kvmpfm_vcpu_preemptions(vcpu);
	case KVMPFM_POLL_STEAL:
		return vcpu->task->sched_info.run_delay;
	}
	return 0;
}

/*
 * Counter operations from outside the vCPU thread (a guest call on
 * another vCPU about this vCPU's context, migration's save, teardown)
 * reach an event that may be active on another CPU: perf then makes a
 * cross-CPU call, which takes that vCPU out of the guest. Counted, so
 * that the per-sample path, and delivery altogether, can be shown to make
 * none (kvmpfm_overflow.c).
 */
static bool remote_op(struct kvmpfm_counter *kc)
{
	if (kc->vcpu->task == current)
		return false;
	kc->vcpu->vm->remote_counter_ops++;
	return true;
}

/* perf's 64-bit count (or the polled value) and its times */
u64 kvmpfm_counter_raw_read(struct kvmpfm_counter *kc, u64 *enabled,
			    u64 *running)
{
	u64 en = 0, run = 0, raw;

	if (kc->event) {
		/* from the vCPU thread, perf reads it on this CPU */
		remote_op(kc);
		raw = perf_event_read_value(kc->event, &en, &run);
	} else {
		raw = kc->poll_acc;
		if (kc->poll_enabled)
			raw += poll_read(kc) - kc->poll_start;
	}
	/* times since the counter was opened (a kept event has a past) */
	if (enabled)
		*enabled = en - kc->enabled_base;
	if (running)
		*running = run - kc->running_base;
	return raw;
}

/*
 * perf's mark of an event it throttled (MAX_INTERRUPTS, private to
 * kernel/events/core.c): hw.interrupts holds it from the interrupt that
 * went over kernel.perf_event_max_sample_rate's share of a tick until
 * perf restarts the event, at its next tick on that CPU or the event's
 * next schedule-in. Meanwhile a hardware event counts nothing and a
 * software event's hrtimer is stopped (its count goes on).
 */
#define KVMPFM_PERF_THROTTLED	(~0ULL)

bool kvmpfm_perf_throttled(struct perf_event *event)
{
	return READ_ONCE(event->hw.interrupts) == KVMPFM_PERF_THROTTLED;
}

/*
 * Arm the period that ends at the counter's next wrap. Not while perf
 * has the event throttled: perf_event_period() would restart it at
 * once, past the host's bound. perf restarts it on the period it had,
 * and the interrupt that follows arms this one (the overflow path
 * re-arms whatever interrupted). A period the PMU driver refuses as too
 * short (x86's limit_period, an erratum's minimum) is doubled until it
 * takes one: the wrap then comes late, found on the overflow path, and
 * the raise is counted.
 */
void kvmpfm_counter_period_arm(struct kvmpfm_counter *kc, u64 raw)
{
	u64 period = kc->next_wrap - raw;
	u64 max = KVMPFM_WRAP;
	int ret;

	if (!kc->event)
		return;
	kc->held = kvmpfm_vm_throttled(kc->vcpu->vm);
	if (kc->held) {
		/* no interrupt before the throttling ends (kvmpfm_throttle.c) */
		period = KVMPFM_WRAP;
		kvmpfm_throttle_timer_arm(kc->vcpu);
	}
	if (kvmpfm_attr_is_hw(&kc->event->attr))
		max = KVMPFM_MAX_HW_PERIOD;
	period = clamp(period, 1ULL, max);
	if (kvmpfm_perf_throttled(kc->event))
		return;
	/* from the vCPU thread, perf changes it on this CPU */
	remote_op(kc);
	ret = perf_event_period(kc->event, period);
	if (ret != -EINVAL)
		return;
	while (ret == -EINVAL && period < max) {
		period = min(period * 2, max);
		ret = perf_event_period(kc->event, period);
	}
	kc->vcpu->periods_raised++;
}

/*
 * Set switches close one set's counters and open the next's, every few
 * ms. Creating a host perf event costs far more than enabling one, and
 * it would be paid in the vCPU thread each time: so a closed counter's
 * event is kept, disabled, on its vCPU (at most KVMPFM_KEPT_MAX, the
 * oldest released first), and the next open of the same event takes it
 * back. vm->lock held.
 */
static struct kvmpfm_counter *kept_take(struct kvmpfm_vcpu *vcpu,
					const struct perf_event_attr *attr)
{
	struct kvmpfm_counter *kc;
	u32 i;

	for (i = 0; i < vcpu->nr_kept; i++) {
		kc = vcpu->kept[i];
		if (memcmp(&kc->attr, attr, sizeof(*attr)))
			continue;
		memmove(&vcpu->kept[i], &vcpu->kept[i + 1],
			(vcpu->nr_kept - i - 1) * sizeof(vcpu->kept[0]));
		vcpu->nr_kept--;
		return kc;
	}
	return NULL;
}

static void counter_release(struct kvmpfm_counter *kc)
{
	if (kc->event) {
		perf_event_release_kernel(kc->event);
		kvmpfm_account(&kvmpfm_nr_events, -1);
	}
	/* a handler on the vCPU's CPU may still hold it: see the struct */
	kvmpfm_free_rcu(kc, rcu);
}

static void kept_put(struct kvmpfm_vcpu *vcpu, struct kvmpfm_counter *kc)
{
	remote_op(kc);
	perf_event_disable(kc->event);
	if (vcpu->nr_kept == KVMPFM_KEPT_MAX) {
		counter_release(vcpu->kept[0]);
		memmove(&vcpu->kept[0], &vcpu->kept[1],
			(KVMPFM_KEPT_MAX - 1) * sizeof(vcpu->kept[0]));
		vcpu->nr_kept--;
	}
	vcpu->kept[vcpu->nr_kept++] = kc;
}

/*
 * After an engine call: a vCPU with no counter open has no set to switch
 * back to, so it keeps nothing (nothing is held for a context that is
 * gone or out). Also at teardown, once the engine closed everything.
 */
void kvmpfm_vcpu_release_kept(struct kvmpfm_vcpu *vcpu)
{
	if (vcpu->nr_open)
		return;
	while (vcpu->nr_kept)
		counter_release(vcpu->kept[--vcpu->nr_kept]);
	/*
	 * Teardown: nothing arms the throttle timer once the VM is dying,
	 * and the irq_work it may have raised is synced after this.
	 */
	if (vcpu->vm->dying && vcpu->throttle_timer_ready)
		hrtimer_cancel(&vcpu->throttle_timer);
}

int kvmpfm_counter_open(void *be, struct pfm_counter *c)
{
	struct kvmpfm_vm *vm = kvmpfm_be_vm(be);
	struct kvmpfm_vcpu *vcpu = &vm->vcpus[c->vcpu];
	struct perf_event_attr attr;
	struct kvmpfm_counter *kc;
	int ret, poll;

	if (!vcpu->task)
		return -ENODEV;
	/* here, not at bind: no counter, nothing to hold (vm->lock held) */
	if (!vcpu->throttle_timer_ready) {
		hrtimer_setup(&vcpu->throttle_timer, kvmpfm_throttle_timer_fn,
			      CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED);
		vcpu->throttle_timer_ready = true;
	}
	ret = kvmpfm_event_translate(vm, &c->ev, &attr, &poll);
	if (ret)
		return ret;
	if (!poll) {
		attr.disabled = 1;
		attr.sample_period = kvmpfm_attr_is_hw(&attr) ?
				     KVMPFM_MAX_HW_PERIOD : KVMPFM_WRAP;
	}
	kc = poll ? NULL : kept_take(vcpu, &attr);
	if (kc) {
		/* counts and times go on from where the event is now */
		kc->enabled_base = 0;
		kc->running_base = 0;
		kc->base = kvmpfm_counter_raw_read(kc, &kc->enabled_base,
						   &kc->running_base);
		kc->written = 0;
		kc->wraps = 0;
		goto out;
	}
	kc = kvmpfm_zalloc(sizeof(*kc));
	if (!kc)
		return -ENOMEM;
	kc->vcpu = vcpu;
	kc->poll = poll;
	kc->attr = attr;
	if (!kc->poll) {
		kc->event = perf_event_create_kernel_counter(&attr, -1,
					vcpu->task, kvmpfm_overflow, kc);
		if (IS_ERR(kc->event)) {
			ret = kvmpfm_event_open_error(&attr, vcpu->task,
						      PTR_ERR(kc->event));
			kvmpfm_free(kc);
			return ret;
		}
		kvmpfm_account(&kvmpfm_nr_events, 1);
	}
out:
	kc->pmd = c->ev.pmd;
	kc->next_wrap = kc->base + KVMPFM_WRAP;
	c->priv = kc;
	vcpu->ctr_by_pmd[c->ev.pmd] = kc;
	vcpu->nr_open++;
	return 0;
}

void kvmpfm_counter_close(void *be, struct pfm_counter *c)
{
	struct kvmpfm_counter *kc = c->priv;
	struct kvmpfm_vcpu *vcpu = kc->vcpu;

	/* an overflow of this counter still pending finds no counter */
	vcpu->ctr_by_pmd[c->ev.pmd] = NULL;
	clear_bit(c->ev.pmd, vcpu->pending_pmds);
	c->priv = NULL;
	/* a set switch opens the next set before the engine call ends */
	if (!--vcpu->nr_open)
		vcpu->vm->kept_trim_due = true;
	if (kc->event && !vcpu->vm->dying)
		kept_put(vcpu, kc);
	else
		counter_release(kc);
}

void kvmpfm_counter_write(void *be, struct pfm_counter *c, u64 value)
{
	struct kvmpfm_counter *kc = c->priv;
	u64 raw = kvmpfm_counter_raw_read(kc, NULL, NULL);

	kc->written = value & KVMPFM_WMASK;
	kc->base = raw;
	kc->wraps = 0;
	kc->next_wrap = raw + (KVMPFM_WRAP - kc->written);
	kvmpfm_counter_period_arm(kc, raw);
}

/*
 * What the host counted, never scaled: when it ran the event only part
 * of the time it was enabled (perf multiplexing, other users' pinned
 * events), the times go to the engine (getinfo shows them) and the tool
 * scales, as perf's do. A scaled value would run ahead of the wraps,
 * which perf finds in the count it made.
 */
u64 kvmpfm_counter_read(void *be, struct pfm_counter *c,
			       struct pfm_counter_time *t)
{
	struct kvmpfm_counter *kc = c->priv;
	u64 enabled, running, raw;

	raw = kvmpfm_counter_raw_read(kc, &enabled, &running);
	if (t) {
		t->enabled_ns = enabled;
		t->running_ns = running;
	}
	if (raw >= kc->next_wrap)
		return KVMPFM_WMASK;	/* the wrap is being delivered */
	return kc->written + (raw - kc->base) - kc->wraps * KVMPFM_WRAP;
}

void kvmpfm_counter_enable(void *be, struct pfm_counter *c)
{
	struct kvmpfm_counter *kc = c->priv;

	if (kc->event) {
		remote_op(kc);
		perf_event_enable(kc->event);
	} else if (!kc->poll_enabled) {
		kc->poll_start = poll_read(kc);
		kc->poll_enabled = true;
	}
}

void kvmpfm_counter_disable(void *be, struct pfm_counter *c)
{
	struct kvmpfm_counter *kc = c->priv;

	if (kc->event) {
		remote_op(kc);
		perf_event_disable(kc->event);
	} else if (kc->poll_enabled) {
		kc->poll_acc += poll_read(kc) - kc->poll_start;
		kc->poll_enabled = false;
	}
}
