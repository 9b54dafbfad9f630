// SPDX-License-Identifier: GPL-2.0
/*
 * Event filters (KVMPFM_SET_EVENT_FILTER): which guest events a VM may
 * program, as KVM's own KVM_SET_PMU_EVENT_FILTER does for its emulated
 * vPMU. Operators deny shared-cache and similar events against
 * cross-tenant side channels.
 *
 * A VM has two: the VMM's, which it sets on its own binding (QEMU's
 * filter=FILE), and the operator's, which only root or CAP_PERFMON sets
 * or clears, naming the VM by id. An event must pass both: the VMM can
 * narrow what the operator allows, never widen it.
 *
 * Each judges the event as the guest programs it and, when the VMM's
 * event map aliases it, the host event the alias counts, put in the
 * filter's terms: a generic event select and unit mask in the guest's
 * encoding (kvmpfm_alias_encoding()). A host event that has none (a
 * cache event, a raw event of the other vendor, a generic one with no
 * architectural encoding) is refused while a filter is in force: the
 * filter cannot say what it counts. A software event counts the vCPU
 * thread, not the shared hardware, and only CAP_PERFMON may map one: its
 * guest event alone is judged.
 *
 * The engine asks at each PMC write (and a virtual PMD's write) through
 * event_check; a refused event is NOTAVAIL to the guest and counted as
 * "filtered". Counters already programmed are not reopened against a new
 * filter: they keep counting, set switches included, until the guest
 * writes their PMC again.
 */
#include <linux/uaccess.h>
#include "kvmpfm.h"

static bool entry_valid(const struct kvmpfm_filter_event *f)
{
	return f->guest_kind <= KVMPFM_EVK_VIRTUAL &&
	       !memchr_inv(f->reserved, 0, sizeof(f->reserved));
}

/* a validated copy of the filter at @argp, and the VM it names */
struct kvmpfm_filter *kvmpfm_filter_copy(const void __user *argp, u64 *vm_id)
{
	struct kvmpfm_event_filter hdr;
	struct kvmpfm_filter *f;
	u32 i;

	if (copy_from_user(&hdr, argp, sizeof(hdr)))
		return ERR_PTR(-EFAULT);
	if (hdr.action > KVMPFM_FILTER_DENY || hdr.nr > KVMPFM_MAX_FILTER ||
	    hdr.flags || hdr.reserved)
		return ERR_PTR(-EINVAL);
	*vm_id = hdr.vm_id;
	/* DENY of nothing: no filter */
	if (hdr.action == KVMPFM_FILTER_DENY && !hdr.nr)
		return NULL;
	f = kvmpfm_zalloc(struct_size(f, ev, hdr.nr));
	if (!f)
		return ERR_PTR(-ENOMEM);
	f->action = hdr.action;
	f->nr = hdr.nr;
	if (copy_from_user(f->ev, argp + sizeof(hdr),
			   array_size(hdr.nr, sizeof(f->ev[0])))) {
		kvmpfm_free(f);
		return ERR_PTR(-EFAULT);
	}
	for (i = 0; i < f->nr; i++) {
		if (!entry_valid(&f->ev[i])) {
			kvmpfm_free(f);
			return ERR_PTR(-EINVAL);
		}
	}
	return f;
}

/* under vm->lock; @f (may be NULL: none) is @vm's filter @slot from now on */
void kvmpfm_filter_install(struct kvmpfm_vm *vm, struct kvmpfm_filter **slot,
			   struct kvmpfm_filter *f)
{
	lockdep_assert_held(&vm->lock);
	kvmpfm_free(*slot);
	*slot = f;
}

static bool entry_matches(const struct kvmpfm_filter_event *f, u32 kind,
			  u16 event, u8 umask)
{
	return f->guest_kind == kind &&
	       !((f->event ^ event) & f->event_mask) &&
	       (kind != KVMPFM_EVK_GENERIC ||
		!((f->umask ^ umask) & f->umask_mask));
}

/* whether @f (NULL: no filter) allows the event named so */
static bool filter_allows(const struct kvmpfm_filter *f, u32 kind, u16 event,
			  u8 umask)
{
	u32 i;

	if (!f)
		return true;
	for (i = 0; i < f->nr; i++)
		if (entry_matches(&f->ev[i], kind, event, umask))
			return f->action == KVMPFM_FILTER_ALLOW;
	return f->action == KVMPFM_FILTER_DENY;
}

static bool both_allow(const struct kvmpfm_vm *vm, u32 kind, u16 event,
		       u8 umask)
{
	return filter_allows(vm->vmm_filter, kind, event, umask) &&
	       filter_allows(vm->operator_filter, kind, event, umask);
}

/* under vm->lock; @alias: the event map's entry for @ev, if any */
bool kvmpfm_filters_allow(const struct kvmpfm_vm *vm,
			  const struct pfm_event *ev,
			  const struct kvmpfm_event_map_entry *alias)
{
	u16 event = ev->kind == PFM_EVK_GENERIC ? ev->event_select : ev->code;
	u8 umask = ev->kind == PFM_EVK_GENERIC ? ev->unit_mask : 0;
	u32 kind;
	int ret;

	if (!vm->vmm_filter && !vm->operator_filter)
		return true;
	switch (ev->kind) {
	case PFM_EVK_FIXED:
		kind = KVMPFM_EVK_FIXED;
		break;
	case PFM_EVK_VIRTUAL:
		kind = KVMPFM_EVK_VIRTUAL;
		break;
	default:
		kind = KVMPFM_EVK_GENERIC;
	}
	if (!both_allow(vm, kind, event, umask))
		return false;
	if (!alias)
		return true;
	ret = kvmpfm_alias_encoding(ev, alias, &event, &umask);
	if (ret)
		return ret > 0;
	return both_allow(vm, KVMPFM_EVK_GENERIC, event, umask);
}
