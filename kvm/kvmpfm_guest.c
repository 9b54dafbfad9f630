// SPDX-License-Identifier: GPL-2.0
/*
 * Time and timers for the engine: the set-switch hrtimer of each vCPU.
 */
#include <linux/ktime.h>
#include "kvmpfm.h"

u64 kvmpfm_now_ns(void *be)
{
	return ktime_get_ns();
}

void kvmpfm_timer_arm(void *be, u32 vcpu, u64 delta_ns)
{
	struct kvmpfm_vm *vm = kvmpfm_be_vm(be);

	/* pinned: armed from the vCPU thread, it fires on the vCPU's CPU */
	hrtimer_start(&vm->vcpus[vcpu].timer, ns_to_ktime(delta_ns),
		      HRTIMER_MODE_REL_PINNED);
}

void kvmpfm_timer_cancel(void *be, u32 vcpu)
{
	struct kvmpfm_vm *vm = kvmpfm_be_vm(be);

	/* a callback already running only defers work, which rechecks */
	hrtimer_try_to_cancel(&vm->vcpus[vcpu].timer);
}

enum hrtimer_restart kvmpfm_timer_fn(struct hrtimer *t)
{
	struct kvmpfm_vcpu *vcpu = container_of(t, struct kvmpfm_vcpu, timer);

	atomic_set(&vcpu->pending_timer, 1);
	irq_work_queue(&vcpu->irq_work);
	return HRTIMER_NORESTART;
}
