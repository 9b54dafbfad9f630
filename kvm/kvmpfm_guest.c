// SPDX-License-Identifier: GPL-2.0
/*
 * Guest memory, time and timers for the engine.
 *
 * Sampling buffers: the engine writes samples from the vCPU thread's
 * deferred overflow work, and from DOORBELL of any vCPU, for any vCPU's
 * context. Each registered page is pinned when the guest registers it
 * (DOORBELL runs in the vCPU thread, in the VM's mm) and written through
 * the kernel mapping: no fault, no sleep per sample.
 */
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/uaccess.h>
#include "kvmpfm.h"

static struct kvmpfm_vm *to_vm(void *be)
{
	return be;
}

int kvmpfm_guest_pin(void *be, u64 gpa, u64 len)
{
	struct kvmpfm_vm *vm = to_vm(be);
	gfn_t gfn = gpa_to_gfn(gpa);
	struct kvmpfm_pin *pin;
	unsigned long hva;
	struct page *page;
	int ret;

	/* the engine registers one page at a time */
	if (len != PAGE_SIZE || offset_in_page(gpa) || current->mm != vm->kvm->mm)
		return -EFAULT;
	pin = xa_load(&vm->pinned, gfn);
	if (pin) {
		pin->refs++;
		return 0;
	}
	hva = gfn_to_hva(vm->kvm, gfn);
	if (kvm_is_error_hva(hva))
		return -EFAULT;
	ret = pin_user_pages_fast(hva, 1, FOLL_WRITE | FOLL_LONGTERM, &page);
	if (ret != 1)
		return ret < 0 ? ret : -EFAULT;
	pin = kvmpfm_zalloc(sizeof(*pin));
	if (!pin)
		goto unpin;
	pin->page = page;
	pin->refs = 1;
	if (xa_err(xa_store(&vm->pinned, gfn, pin, GFP_KERNEL)))
		goto free;
	kvmpfm_account(&kvmpfm_nr_pinned, 1);
	return 0;
free:
	kvmpfm_free(pin);
unpin:
	unpin_user_page(page);
	return -ENOMEM;
}

static void pin_drop(struct kvmpfm_vm *vm, unsigned long gfn,
		     struct kvmpfm_pin *pin)
{
	xa_erase(&vm->pinned, gfn);
	unpin_user_pages_dirty_lock(&pin->page, 1, true);
	kvmpfm_free(pin);
	kvmpfm_account(&kvmpfm_nr_pinned, -1);
}

void kvmpfm_guest_unpin(void *be, u64 gpa, u64 len)
{
	struct kvmpfm_vm *vm = to_vm(be);
	struct kvmpfm_pin *pin = xa_load(&vm->pinned, gpa_to_gfn(gpa));

	if (pin && !--pin->refs)
		pin_drop(vm, gpa_to_gfn(gpa), pin);
}

/* teardown: the engine released its pages already; this is the backstop */
void kvmpfm_guest_unpin_all(struct kvmpfm_vm *vm)
{
	struct kvmpfm_pin *pin;
	unsigned long gfn;

	xa_for_each(&vm->pinned, gfn, pin)
		pin_drop(vm, gfn, pin);
}

/*
 * What mark_page_dirty() does for a VM that logs dirty pages in bitmaps.
 * mark_page_dirty() itself wants a running vCPU (it WARNs without one in
 * 6.1), and the module writes from DOORBELL, outside KVM_RUN, and from
 * work items. A VM using dirty rings gets nothing here: rings belong to
 * vCPUs, and the pv-perfmon device blocks migration anyway.
 */
static void mark_dirty(struct kvm *kvm, gfn_t gfn)
{
	struct kvm_memory_slot *slot;
	int idx;

	if (kvm->dirty_ring_size)
		return;
	idx = srcu_read_lock(&kvm->srcu);
	slot = gfn_to_memslot(kvm, gfn);
	if (slot && kvm_slot_dirty_track_enabled(slot))
		set_bit_le(gfn - slot->base_gfn, slot->dirty_bitmap);
	srcu_read_unlock(&kvm->srcu, idx);
}

int kvmpfm_guest_write(void *be, u64 gpa, const void *src, u32 len)
{
	struct kvmpfm_vm *vm = to_vm(be);
	struct kvmpfm_pin *pin = xa_load(&vm->pinned, gpa_to_gfn(gpa));
	void *kaddr;

	if (!pin || offset_in_page(gpa) + len > PAGE_SIZE)
		return -EFAULT;
	kaddr = kmap_local_page(pin->page);
	memcpy(kaddr + offset_in_page(gpa), src, len);
	kunmap_local(kaddr);
	mark_dirty(vm->kvm, gpa_to_gfn(gpa));
	return 0;
}

/*
 * kvm_write_guest() for the command block, from the vCPU thread (the
 * VM's mm) but outside KVM_RUN: through the user mapping, page by page.
 */
int kvmpfm_guest_copy_out(struct kvmpfm_vm *vm, u64 gpa, const void *src,
			  u32 len)
{
	unsigned long hva;
	u32 n;

	while (len) {
		n = min_t(u32, len, PAGE_SIZE - offset_in_page(gpa));
		hva = gfn_to_hva(vm->kvm, gpa_to_gfn(gpa));
		if (kvm_is_error_hva(hva) ||
		    copy_to_user((void __user *)hva + offset_in_page(gpa), src, n))
			return -EFAULT;
		mark_dirty(vm->kvm, gpa_to_gfn(gpa));
		gpa += n;
		src += n;
		len -= n;
	}
	return 0;
}

u64 kvmpfm_now_ns(void *be)
{
	return ktime_get_ns();
}

void kvmpfm_timer_arm(void *be, u32 vcpu, u64 delta_ns)
{
	struct kvmpfm_vm *vm = to_vm(be);

	/* pinned: armed from the vCPU thread, it fires on the vCPU's CPU */
	hrtimer_start(&vm->vcpus[vcpu].timer, ns_to_ktime(delta_ns),
		      HRTIMER_MODE_REL_PINNED);
}

void kvmpfm_timer_cancel(void *be, u32 vcpu)
{
	struct kvmpfm_vm *vm = to_vm(be);

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
