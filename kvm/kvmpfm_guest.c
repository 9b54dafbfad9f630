// SPDX-License-Identifier: GPL-2.0
/*
 * Guest memory, time and timers for the engine.
 *
 * Sampling buffers: the engine writes samples from the vCPU thread (its
 * deferred overflow work, DOORBELL of any vCPU, for any vCPU's context)
 * and from the VMM's threads (migration): always in the VM's mm, with
 * vm->lock held. A registered page is remembered by its guest frame,
 * not by the host page behind it: the guest (or the VMM) may delete,
 * move or write-protect the memslot under it at any time, and then a
 * sample must not land in memory the guest no longer maps at that
 * address. So each write resolves the frame through the VM's current
 * memslots, as kvm_write_guest_cached() does: a gfn_to_hva_cache per
 * page, re-resolved when the memslots' generation changes, the write and
 * the dirty bit under kvm->srcu. A frame with no writable memslot loses
 * its samples (counted by the engine), nothing else is written.
 */
#include <linux/mm.h>
#include <linux/ktime.h>
#include <linux/uaccess.h>
#include "kvmpfm.h"

static struct kvmpfm_vm *to_vm(void *be)
{
	return be;
}

/*
 * The engine's guest_check: @gpa becomes a sampling buffer page. It must
 * be writable guest RAM now (else the registration fails); later memslot
 * changes are followed by each write. The page is not pinned: the name
 * is kept for callers (migration re-registers through it).
 */
int kvmpfm_guest_pin(void *be, u64 gpa, u64 len)
{
	struct kvmpfm_vm *vm = to_vm(be);
	gfn_t gfn = gpa_to_gfn(gpa);
	struct kvmpfm_smpl_page *pg;
	int idx, ret;

	/* the engine registers one page at a time */
	if (len != PAGE_SIZE || offset_in_page(gpa) || current->mm != vm->kvm->mm)
		return -EFAULT;
	pg = xa_load(&vm->smpl_pages, gfn);
	if (pg) {
		pg->refs++;
		return 0;
	}
	pg = kvmpfm_zalloc(sizeof(*pg));
	if (!pg)
		return -ENOMEM;
	idx = srcu_read_lock(&vm->kvm->srcu);
	ret = kvm_gfn_to_hva_cache_init(vm->kvm, &pg->ghc, gpa, PAGE_SIZE);
	srcu_read_unlock(&vm->kvm->srcu, idx);
	if (ret) {
		kvmpfm_free(pg);
		return -EFAULT;
	}
	pg->refs = 1;
	if (xa_err(xa_store(&vm->smpl_pages, gfn, pg, GFP_KERNEL))) {
		kvmpfm_free(pg);
		return -ENOMEM;
	}
	kvmpfm_account(&kvmpfm_nr_pinned, 1);
	return 0;
}

static void smpl_page_drop(struct kvmpfm_vm *vm, unsigned long gfn,
			   struct kvmpfm_smpl_page *pg)
{
	xa_erase(&vm->smpl_pages, gfn);
	kvmpfm_free(pg);
	kvmpfm_account(&kvmpfm_nr_pinned, -1);
}

void kvmpfm_guest_unpin(void *be, u64 gpa, u64 len)
{
	struct kvmpfm_vm *vm = to_vm(be);
	struct kvmpfm_smpl_page *pg = xa_load(&vm->smpl_pages,
					       gpa_to_gfn(gpa));

	if (pg && !--pg->refs)
		smpl_page_drop(vm, gpa_to_gfn(gpa), pg);
}

/* teardown: the engine released its pages already; this is the backstop */
void kvmpfm_guest_unpin_all(struct kvmpfm_vm *vm)
{
	struct kvmpfm_smpl_page *pg;
	unsigned long gfn;

	xa_for_each(&vm->smpl_pages, gfn, pg)
		smpl_page_drop(vm, gfn, pg);
}

/*
 * mark_page_dirty_in_slot() for a write that may come from outside
 * KVM_RUN; kvm->srcu held, @slot from the current memslots. KVM's own
 * wants a running vCPU of the VM (it WARNs without one, and a dirty ring
 * belongs to a vCPU): DOORBELL, the deferred work run on a return to
 * user mode and migration have none. Without one, a VM logging into
 * bitmaps gets the bit set as KVM sets it; a VM using dirty rings gets
 * nothing (the pv-perfmon device does not use them: QEMU's default).
 */
static void mark_dirty(struct kvm *kvm, const struct kvm_memory_slot *slot,
		       gfn_t gfn)
{
	struct kvm_vcpu *running = kvm_get_running_vcpu();

	if (running && running->kvm == kvm) {
		mark_page_dirty_in_slot(kvm, slot, gfn);
		return;
	}
	if (!kvm->dirty_ring_size && kvm_slot_dirty_track_enabled(slot))
		set_bit_le(gfn - slot->base_gfn, slot->dirty_bitmap);
}

int kvmpfm_guest_write(void *be, u64 gpa, const void *src, u32 len)
{
	struct kvmpfm_vm *vm = to_vm(be);
	struct kvm *kvm = vm->kvm;
	gfn_t gfn = gpa_to_gfn(gpa);
	struct kvmpfm_smpl_page *pg = xa_load(&vm->smpl_pages, gfn);
	struct gfn_to_hva_cache *ghc;
	int idx, ret = -EFAULT;

	if (!pg || offset_in_page(gpa) + len > PAGE_SIZE ||
	    current->mm != kvm->mm)
		return -EFAULT;
	ghc = &pg->ghc;
	idx = srcu_read_lock(&kvm->srcu);
	/*
	 * A changed generation: a memslot was added, deleted, moved or its
	 * flags changed since the page was resolved. Re-resolve it for a
	 * write: a frame in no memslot or in a read-only one gets an error
	 * hva (and the cache the new generation: no retry per sample).
	 */
	if (ghc->generation != kvm_memslots(kvm)->generation &&
	    kvm_gfn_to_hva_cache_init(kvm, ghc, gfn_to_gpa(gfn), PAGE_SIZE))
		goto out;
	if (kvm_is_error_hva(ghc->hva) || !ghc->memslot)
		goto out;
	if (copy_to_user((void __user *)ghc->hva + offset_in_page(gpa), src,
			 len))
		goto out;
	mark_dirty(kvm, ghc->memslot, gfn);
	ret = 0;
out:
	srcu_read_unlock(&kvm->srcu, idx);
	return ret;
}

/*
 * kvm_write_guest() for the command block, from the vCPU thread (the
 * VM's mm) but outside KVM_RUN: through the user mapping, page by page.
 * kvm->srcu held (DOORBELL).
 */
int kvmpfm_guest_copy_out(struct kvmpfm_vm *vm, u64 gpa, const void *src,
			  u32 len)
{
	struct kvm_memory_slot *slot;
	unsigned long hva;
	u32 n;

	while (len) {
		n = min_t(u32, len, PAGE_SIZE - offset_in_page(gpa));
		slot = gfn_to_memslot(vm->kvm, gpa_to_gfn(gpa));
		hva = gfn_to_hva_memslot(slot, gpa_to_gfn(gpa));
		if (kvm_is_error_hva(hva) ||
		    copy_to_user((void __user *)hva + offset_in_page(gpa), src, n))
			return -EFAULT;
		mark_dirty(vm->kvm, slot, gpa_to_gfn(gpa));
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
