// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's backend: the operations the engine calls (struct
 * pfm_backend_ops), each from the file that does that job: events
 * (kvmpfm_event.c), counters (kvmpfm_counter.c), time and timers
 * (kvmpfm_guest.c), guest memory (kvmpfm_mem.c); and the two that are
 * this file's own, notifying the guest and the engine's allocations.
 *
 * Locking: the engine calls every operation with vm->lock held.
 */
#include "kvmpfm.h"

static void kvmpfm_notify(void *be, u32 ctx_id)
{
	struct kvmpfm_vm *vm = kvmpfm_be_vm(be);
	struct kvmpfm_vcpu *vcpu = &vm->vcpus[vm->notify_vcpu];

	if (vcpu->eventfd) {
		kvmpfm_eventfd_signal(vcpu->eventfd);
		vm->notifications++;
	}
}

static void *kvmpfm_engine_zalloc(void *be, size_t size)
{
	return kvmpfm_zalloc(size);
}

static void kvmpfm_engine_free(void *be, void *p)
{
	kvmpfm_free(p);
}

const struct pfm_backend_ops kvmpfm_backend_ops = {
	.event_check = kvmpfm_event_check,
	.counter_open = kvmpfm_counter_open,
	.counter_close = kvmpfm_counter_close,
	.counter_write = kvmpfm_counter_write,
	.counter_read = kvmpfm_counter_read,
	.counter_enable = kvmpfm_counter_enable,
	.counter_disable = kvmpfm_counter_disable,
	.now_ns = kvmpfm_now_ns,
	.timer_arm = kvmpfm_timer_arm,
	.timer_cancel = kvmpfm_timer_cancel,
	.guest_check = kvmpfm_guest_check,
	.guest_release = kvmpfm_guest_release,
	.guest_write = kvmpfm_guest_write,
	.notify = kvmpfm_notify,
	.zalloc = kvmpfm_engine_zalloc,
	.free = kvmpfm_engine_free,
};
