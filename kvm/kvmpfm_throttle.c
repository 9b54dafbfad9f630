// SPDX-License-Identifier: GPL-2.0
/*
 * Throttling: the bound on the overflows the host handles per VM.
 *
 * A VM's overflows are counted per KVMPFM_THROTTLE_WINDOW_NS against
 * max_overflow_rate. Once a window's budget is used up, every counter of
 * the VM its vCPU thread arms is held until the window ends: armed with
 * no period to speak of, so that it counts without interrupting (as perf
 * stops a throttled event, but the count goes on). The vCPU's
 * throttle_timer then has its thread re-arm them; a held counter that
 * passed its wrap meanwhile delivers that one overflow, and the periods
 * it skipped go to the engine as lost samples (the guest's buffer header
 * counts them). Overflow set switching is throttled with the rest: a
 * switch happens only on a delivered overflow.
 *
 * Locking: the window, the bound and a vCPU's held state under vm->lock.
 * The throttle timer, on the vCPU's CPU, takes no lock: it only raises
 * the vCPU's irq_work, and the vCPU thread re-arms its counters.
 */
#include "kvmpfm.h"

/* whether the VM is over its overflow budget; vm->lock held */
bool kvmpfm_vm_throttled(struct kvmpfm_vm *vm)
{
	return vm->throttle_until && ktime_get_ns() < vm->throttle_until;
}

enum hrtimer_restart kvmpfm_throttle_timer_fn(struct hrtimer *t)
{
	struct kvmpfm_vcpu *vcpu = container_of(t, struct kvmpfm_vcpu,
						throttle_timer);

	/* the task work finds the VM no longer throttled: see vcpu_deliver() */
	irq_work_queue(&vcpu->irq_work);
	return HRTIMER_NORESTART;
}

/*
 * @vcpu holds a counter: its thread must re-arm it when the throttling
 * ends. Armed from the vCPU thread, the timer fires on the vCPU's CPU.
 */
void kvmpfm_throttle_timer_arm(struct kvmpfm_vcpu *vcpu)
{
	vcpu->held = true;
	if (!hrtimer_active(&vcpu->throttle_timer))
		hrtimer_start(&vcpu->throttle_timer,
			      ns_to_ktime(vcpu->vm->throttle_until),
			      HRTIMER_MODE_ABS_PINNED);
}

/* one overflow handled for @vm: against its window's budget */
void kvmpfm_ovfl_count(struct kvmpfm_vm *vm)
{
	u32 rate = READ_ONCE(kvmpfm_max_overflow_rate);
	u64 now = ktime_get_ns(), end;
	u32 budget;

	if (!rate)
		return;
	if (now - vm->ovfl_window_start >= KVMPFM_THROTTLE_WINDOW_NS) {
		vm->ovfl_window_start = now;
		vm->ovfl_window_count = 0;
	}
	budget = DIV_ROUND_UP(rate, NSEC_PER_SEC / KVMPFM_THROTTLE_WINDOW_NS);
	end = vm->ovfl_window_start + KVMPFM_THROTTLE_WINDOW_NS;
	/* >=: the admin may lower the rate within a window */
	if (++vm->ovfl_window_count >= budget && vm->throttle_until != end) {
		vm->throttle_until = end;
		vm->throttles++;
		atomic64_inc(&kvmpfm_total_throttles);
	}
}

/*
 * While the VM is throttled the vCPU thread delivers nothing: it only
 * holds the counters that interrupted (they stay past their wrap, read as
 * all-ones, until the throttling ends).
 */
void kvmpfm_hold_interrupted(struct kvmpfm_vcpu *vcpu)
{
	struct kvmpfm_counter *kc;
	unsigned int pmd;

	for_each_set_bit(pmd, vcpu->pending_pmds, PFM_MAX_PMDS) {
		clear_bit(pmd, vcpu->pending_pmds);
		kc = vcpu->ctr_by_pmd[pmd];
		if (kc && !kc->held)
			kvmpfm_counter_period_arm(kc,
				kvmpfm_counter_raw_read(kc, NULL, NULL));
	}
}
