// SPDX-License-Identifier: GPL-2.0
/*
 * The operator's interface: every bound VM, seen without its fd
 * (KVMPFM_LIST_VMS, KVMPFM_GET_SNAPSHOT), for host tools such as
 * kvm-perfmon-stat and the Prometheus exporter.
 *
 * Shape: ioctls on /dev/kvm-perfmon returning one VM's snapshot as fixed
 * records (VM, vCPUs, contexts, events, event map), each sized in the VM
 * record so a newer module may grow them. KVM's own per-VM views were
 * the models: debugfs directories are root-only, not an ABI and torn
 * across files; the binary stats fd is a fixed set of numbers with no
 * room for per-context and per-event records or names. One snapshot is
 * taken under one hold of the VM's lock, so its figures agree.
 *
 * Locking: bound_vms_lock (mutex) orders the list of bound VMs and the
 * ids. Release unlinks the VM under it before anything else, so a VM
 * found on the list is alive while the lock is held: long enough to take
 * a reference on its binding file (vm_get()), which keeps it alive after.
 * Nothing waits for a VM's lock with bound_vms_lock held, and the wait is
 * killable: one VM whose lock is held long (its VMM's calls, samples
 * written into its guest's memory) stalls no other VM's bind, release or
 * snapshot, and no caller beyond a fatal signal.
 * Buffers are allocated with neither lock held: a scrape holds a VM's
 * lock only to copy figures, never across an allocation or a user copy.
 */
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/nls.h>
#include <linux/uaccess.h>
#include "kvmpfm.h"

static LIST_HEAD(bound_vms);
static DEFINE_MUTEX(bound_vms_lock);
static u64 vm_next_id = 1;		/* under bound_vms_lock */

/* named for the operator from the start: an id never reused */
int kvmpfm_vm_register(struct kvmpfm_vm *vm)
{
	vm->pid = task_tgid_nr(current);
	vm->bound_ns = ktime_get_real_ns();
	mutex_lock(&bound_vms_lock);
	vm->id = vm_next_id++;
	list_add_tail(&vm->node, &bound_vms);
	mutex_unlock(&bound_vms_lock);
	return 0;
}

/*
 * One binding per KVM VM: a second one would double what the VM may make
 * the host allocate and hold, and the VMM has no use for it. The KVM VM
 * is known once a vCPU thread of the binding entered the guest
 * (kvmpfm_kvm.c); from then on, the first binding to make a call for it
 * has it, and a call from a vCPU of another binding of the same KVM VM,
 * or from a thread that ran another VM's vCPU, is -EBUSY.
 */
int kvmpfm_vm_claim_kvm(struct kvmpfm_vm *vm, struct kvmpfm_vcpu *vcpu)
{
	struct kvm *kvm = READ_ONCE(vm->kvm);
	struct kvmpfm_vm *other;
	int ret = 0;

	if (test_bit(KVMPFM_VCPU_FOREIGN, &vcpu->flags))
		return -EBUSY;
	/* pairs with the release below: claimed once, for the binding's life */
	if (!kvm || smp_load_acquire(&vm->kvm_claimed))
		return 0;
	mutex_lock(&bound_vms_lock);
	list_for_each_entry(other, &bound_vms, node) {
		if (other != vm && other->kvm_claimed && other->kvm == kvm) {
			ret = -EBUSY;
			break;
		}
	}
	if (!ret) {
		/* after the other bindings were checked, under their lock */
		smp_store_release(&vm->kvm_claimed, true);
	}
	mutex_unlock(&bound_vms_lock);
	return ret;
}

/* before anything of @vm is torn down; a no-op if never registered */
void kvmpfm_vm_unregister(struct kvmpfm_vm *vm)
{
	if (!vm->id)
		return;
	mutex_lock(&bound_vms_lock);
	list_del(&vm->node);
	mutex_unlock(&bound_vms_lock);
}

/* under bound_vms_lock */
static struct kvmpfm_vm *vm_find(u64 id)
{
	struct kvmpfm_vm *vm;

	list_for_each_entry(vm, &bound_vms, node)
		if (vm->id == id)
			return vm;
	return NULL;
}

/*
 * The VM of @id, alive until vm_put() (its binding file referenced), or
 * NULL: none, or being released.
 */
static struct kvmpfm_vm *vm_get(u64 id)
{
	struct kvmpfm_vm *vm;

	mutex_lock(&bound_vms_lock);
	vm = vm_find(id);
	if (vm && !kvmpfm_file_get_live(&vm->file))
		vm = NULL;
	mutex_unlock(&bound_vms_lock);
	return vm;
}

/* the last reference releases the VM, at the caller's return to user mode */
static void vm_put(struct kvmpfm_vm *vm)
{
	fput(vm->file);
}

/*
 * Whether code point @c may be shown in a name: not a control character
 * (C0, DEL, C1), nor one that breaks or reorders the lines the name is
 * printed in (line and paragraph separators, bidirectional overrides and
 * isolates).
 */
static bool name_char_ok(unicode_t c)
{
	return c >= 0x20 && !(c >= 0x7f && c <= 0x9f) &&
	       c != 0x2028 && c != 0x2029 &&
	       !(c >= 0x202a && c <= 0x202e) && !(c >= 0x2066 && c <= 0x2069);
}

/* @len bytes of well-formed UTF-8 (no overlong form, no surrogate) */
static bool name_valid(const char *name, size_t len)
{
	unicode_t c;
	int n;

	while (len) {
		n = utf8_to_utf32(name, len, &c);
		if (n <= 0 || !name_char_ok(c))
			return false;
		name += n;
		len -= n;
	}
	return true;
}

/*
 * From the VMM, on its binding: a name for the operator's eyes only. It
 * ends up in tables and metric labels, whose readers reject what is not
 * UTF-8. The UUID is 16 bytes, any 16: the tools print it in hex.
 */
int kvmpfm_set_identity(struct kvmpfm_vm *vm, void __user *argp)
{
	struct kvmpfm_vm_identity id;
	size_t len;
	int ret;

	if (copy_from_user(&id, argp, sizeof(id)))
		return -EFAULT;
	len = strnlen(id.name, sizeof(id.name));
	if (len == sizeof(id.name) ||
	    memchr_inv(id.reserved, 0, sizeof(id.reserved)) ||
	    !name_valid(id.name, len))
		return -EINVAL;
	memset(id.name + len, 0, sizeof(id.name) - len);
	ret = mutex_lock_killable(&vm->lock);
	if (ret)
		return ret;
	vm->identity = id;
	mutex_unlock(&vm->lock);
	return 0;
}

static long list_vms(void __user *argp)
{
	struct kvmpfm_vm_list req;
	struct kvmpfm_vm *vm;
	u64 __user *ids;
	u64 *buf;
	u32 n = 0;
	long ret = 0;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	/* the room asked for, bounded by what could ever be bound */
	req.nr = min_t(u32, req.nr, atomic64_read(&kvmpfm_nr_vms) + 16);
	buf = req.nr ? kvmalloc_array(req.nr, sizeof(*buf), GFP_KERNEL) : NULL;
	if (req.nr && !buf)
		return -ENOMEM;
	mutex_lock(&bound_vms_lock);
	list_for_each_entry(vm, &bound_vms, node) {
		if (n < req.nr)
			buf[n] = vm->id;
		n++;
	}
	mutex_unlock(&bound_vms_lock);
	ids = u64_to_user_ptr(req.ids);
	if (copy_to_user(ids, buf, array_size(min(n, req.nr), sizeof(*buf))))
		ret = -EFAULT;
	kvfree(buf);
	req.nr = n;
	if (!ret && copy_to_user(argp, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

/* a snapshot in the making: records go where the layout put them */
struct snap {
	struct kvmpfm_snap_vm *vm;
	struct kvmpfm_snap_vcpu *vcpus;
	struct kvmpfm_snap_ctx *ctxs;
	struct kvmpfm_snap_event *events;
	struct kvmpfm_event_map_entry *map;
	/* counted, then the room the buffer has */
	u32 nr_vcpus, nr_ctxs, nr_events, nr_map;
	struct kvmpfm_vm *kvm_vm;
	bool overflow;			/* more than the room: count again */
};

static size_t snap_size(const struct snap *s)
{
	size_t n = sizeof(*s->vm);

	n = size_add(n, array_size(s->nr_vcpus, sizeof(*s->vcpus)));
	n = size_add(n, array_size(s->nr_ctxs, sizeof(*s->ctxs)));
	n = size_add(n, array_size(s->nr_events, sizeof(*s->events)));
	return size_add(n, array_size(s->nr_map, sizeof(*s->map)));
}

static void snap_layout(struct snap *s, void *buf)
{
	s->vm = buf;
	s->vcpus = (void *)(s->vm + 1);
	s->ctxs = (void *)(s->vcpus + s->nr_vcpus);
	s->events = (void *)(s->ctxs + s->nr_ctxs);
	s->map = (void *)(s->events + s->nr_events);
}

static void snap_context(void *arg, const struct pfm_ctx_view *c)
{
	struct snap *s = arg;
	struct kvmpfm_snap_ctx *out;

	if (s->vm->nr_ctxs == s->nr_ctxs) {
		s->overflow = true;
		return;
	}
	out = &s->ctxs[s->vm->nr_ctxs++];
	out->id = c->id;
	out->flags = c->flags;
	out->state = c->masked ? KVMPFM_CTX_MASKED :
		     c->loaded ? KVMPFM_CTX_LOADED : KVMPFM_CTX_UNLOADED;
	out->vcpu = c->vcpu;
	out->load_pid = c->load_pid;
	out->tid = c->tid;
	out->nr_sets = c->nr_sets;
	out->active_set = c->active_set;
	out->system_wide = !!(c->flags & PFM_FL_SYSTEM_WIDE);
	out->started = c->started;
	out->set_runs = c->set_runs;
	out->samples = c->samples;
	out->msgs_queued = c->msgs_queued;
	if (c->vcpu >= 0 && (u32)c->vcpu < s->nr_vcpus)
		s->vcpus[c->vcpu].ctx_id = c->id;
}

static void snap_counter(void *arg, const struct pfm_ctx_view *c, u16 set,
			 const struct pfm_counter *ctr)
{
	struct snap *s = arg;
	struct kvmpfm_snap_event *out;

	if (s->vm->nr_events == s->nr_events) {
		s->overflow = true;
		return;
	}
	out = &s->events[s->vm->nr_events++];
	out->vcpu = ctr->vcpu;
	out->ctx_id = c->id;
	out->set = set;
	kvmpfm_counter_describe(s->kvm_vm, ctr, out);
}

static const struct pfm_view_ops snap_view_ops = {
	.context = snap_context,
	.counter = snap_counter,
};

/* under vm->lock: everything but the per-context and per-event records */
static void snap_vm(struct snap *s, struct kvmpfm_vm *vm,
		    const struct pfm_engine_stats *st)
{
	const struct pfm_engine_cfg *cfg = pfm_engine_cfg(vm->engine);
	struct kvmpfm_snap_vm *out = s->vm;
	u32 i;

	BUILD_BUG_ON(PFM_STAT_ERRNOS != KVMPFM_SNAP_ERRNOS);
	BUILD_BUG_ON(PVPFM_CMD_MAX > KVMPFM_SNAP_CALLS);
	out->size = sizeof(*out);
	out->vcpu_size = sizeof(*s->vcpus);
	out->ctx_size = sizeof(*s->ctxs);
	out->event_size = sizeof(*s->events);
	out->map_size = sizeof(*s->map);
	out->nr_vcpus = vm->nr_vcpus;
	out->nr_map = vm->nr_aliases;
	out->pid = vm->pid;
	out->id = vm->id;
	out->bound_ns = vm->bound_ns;
	out->identity = vm->identity;
	out->personality = cfg->personality;
	out->counters = cfg->gp_counters;
	out->max_contexts = cfg->limits.max_contexts;
	out->max_sets = cfg->limits.max_sets;
	out->max_vector = cfg->limits.max_vector;
	out->max_smpl_buf = cfg->limits.max_smpl_buf;
	out->filter_action = vm->operator_filter ?
			     vm->operator_filter->action : KVMPFM_FILTER_DENY;
	out->filter_nr = vm->operator_filter ? vm->operator_filter->nr : 0;
	out->vmm_filter_action = vm->vmm_filter ? vm->vmm_filter->action :
						  KVMPFM_FILTER_DENY;
	out->vmm_filter_nr = vm->vmm_filter ? vm->vmm_filter->nr : 0;
	kvmpfm_vm_stats_fill(vm, st, &out->stats);
	memcpy(out->calls, st->calls, sizeof(st->calls));
	memcpy(out->refusals, st->refusals, sizeof(st->refusals));
	out->notavail = st->notavail;
	out->filtered = st->filtered;
	out->host_mediated = st->host_mediated;
	out->host_throttles = vm->host_throttles;
	out->periods_raised = vm->periods_raised;
	out->late_overflows = vm->late_overflows;

	for (i = 0; i < vm->nr_vcpus; i++) {
		const struct kvmpfm_vcpu *v = &vm->vcpus[i];

		s->vcpus[i].index = i;
		s->vcpus[i].host_tid = v->task ? task_pid_nr(v->task) : 0;
		s->vcpus[i].counters_open = v->nr_open;
		s->vcpus[i].doorbells = v->doorbells;
	}
	memcpy(s->map, vm->aliases,
	       array_size(vm->nr_aliases, sizeof(*vm->aliases)));
}

/*
 * One VM's snapshot, under one hold of its lock: counted (@s->vm NULL)
 * into @s's counts, or filled into the room they gave. -ENOENT once the
 * VM is gone, -EINTR if a fatal signal came first.
 */
static long snap_take(u64 id, struct snap *s)
{
	struct pfm_engine_stats st;
	struct kvmpfm_vm *vm;
	long ret;

	vm = vm_get(id);
	if (!vm)
		return -ENOENT;
	ret = mutex_lock_killable(&vm->lock);
	if (ret) {
		vm_put(vm);
		return ret;
	}
	pfm_engine_stats(vm->engine, &st);
	if (!s->vm) {
		s->nr_vcpus = vm->nr_vcpus;
		s->nr_ctxs = st.contexts;
		s->nr_events = st.active_counters;
		s->nr_map = vm->nr_aliases;
	} else if (s->nr_ctxs < st.contexts ||
		   s->nr_events < st.active_counters ||
		   s->nr_map < vm->nr_aliases) {
		s->overflow = true;
	} else {
		s->kvm_vm = vm;
		snap_vm(s, vm, &st);
		pfm_engine_view(vm->engine, &snap_view_ops, s);
	}
	mutex_unlock(&vm->lock);
	vm_put(vm);
	return 0;
}

/* the records packed at their counts, after the room they were given */
static size_t snap_pack(struct snap *s)
{
	const struct kvmpfm_snap_vm *vm = s->vm;
	void *to = s->vcpus + vm->nr_vcpus;

	to += array_size(vm->nr_ctxs, sizeof(*s->ctxs));
	memmove(to, s->events, array_size(vm->nr_events, sizeof(*s->events)));
	to += array_size(vm->nr_events, sizeof(*s->events));
	memmove(to, s->map, array_size(vm->nr_map, sizeof(*s->map)));
	to += array_size(vm->nr_map, sizeof(*s->map));
	return to - (void *)vm;
}

/* contexts and events may come and go between counting and filling */
#define SNAP_TRIES	4
#define SNAP_SLACK	8

static long get_snapshot(void __user *argp)
{
	struct kvmpfm_snapshot req;
	void *buf = NULL;
	struct snap s;
	size_t len;
	long ret;
	int tries;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	for (tries = 0; !buf && tries < SNAP_TRIES; tries++) {
		memset(&s, 0, sizeof(s));
		ret = snap_take(req.vm_id, &s);
		if (ret)
			return ret;
		len = snap_size(&s);
		if (len > req.size) {
			req.size = min_t(size_t, len, U32_MAX);
			ret = -ENOSPC;
			goto out;
		}
		s.nr_ctxs += SNAP_SLACK;
		s.nr_events += SNAP_SLACK;
		s.nr_map = KVMPFM_MAX_EVENT_MAP;
		buf = kvzalloc(snap_size(&s), GFP_KERNEL_ACCOUNT);
		if (!buf)
			return -ENOMEM;
		snap_layout(&s, buf);
		ret = snap_take(req.vm_id, &s);
		if (ret || s.overflow) {
			kvfree(buf);
			buf = NULL;
			if (ret)
				return ret;
		}
	}
	if (!buf)
		return -EAGAIN;
	len = snap_pack(&s);
	if (len > req.size) {
		req.size = len;
		ret = -ENOSPC;
	} else if (copy_to_user(u64_to_user_ptr(req.buf), buf, len)) {
		ret = -EFAULT;
	} else {
		req.size = len;
	}
	kvfree(buf);
out:
	if (copy_to_user(argp, &req, sizeof(req)))
		return -EFAULT;
	return ret;
}

/*
 * KVMPFM_SET_EVENT_FILTER: vm_id 0 on a binding file, the VMM's filter of
 * its own VM (@own); any other vm_id, on any file, the operator's filter
 * of the VM of that id, for root or CAP_PERFMON only: the VMM may not
 * replace or clear it, not even by naming its own VM.
 */
long kvmpfm_set_filter(struct kvmpfm_vm *own, const void __user *argp)
{
	struct kvmpfm_filter *f;
	struct kvmpfm_vm *vm;
	long ret;
	u64 id;

	f = kvmpfm_filter_copy(argp, &id);
	if (IS_ERR(f))
		return PTR_ERR(f);
	if (!id) {
		ret = own ? mutex_lock_killable(&own->lock) : -ENOTCONN;
		if (!ret) {
			kvmpfm_filter_install(own, &own->vmm_filter, f);
			mutex_unlock(&own->lock);
			return 0;
		}
		kvmpfm_free(f);
		return ret;
	}
	if (!perfmon_capable()) {
		kvmpfm_free(f);
		return -EPERM;
	}
	vm = vm_get(id);
	if (!vm) {
		kvmpfm_free(f);
		return -ENOENT;
	}
	ret = mutex_lock_killable(&vm->lock);
	if (!ret) {
		kvmpfm_filter_install(vm, &vm->operator_filter, f);
		f = NULL;
		mutex_unlock(&vm->lock);
	}
	vm_put(vm);
	kvmpfm_free(f);
	return ret;
}

/*
 * KVMPFM_GET_EVENT_FILTER: a copy taken under vm->lock, copied out after
 * (at most KVMPFM_MAX_FILTER entries, as SET_EVENT_FILTER took them).
 */
static long get_filter(void __user *argp)
{
	struct kvmpfm_event_filter req;
	struct kvmpfm_filter *copy = NULL;
	const struct kvmpfm_filter *f;
	struct kvmpfm_vm *vm;
	long ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags & ~KVMPFM_FILTER_OF_VMM || req.reserved)
		return -EINVAL;
	vm = vm_get(req.vm_id);
	if (!vm)
		return -ENOENT;
	ret = mutex_lock_killable(&vm->lock);
	if (ret)
		goto out_put;
	f = req.flags & KVMPFM_FILTER_OF_VMM ? vm->vmm_filter :
					       vm->operator_filter;
	if (f) {
		copy = kvmpfm_zalloc(struct_size(copy, ev, f->nr));
		if (copy)
			memcpy(copy, f, struct_size(copy, ev, f->nr));
		else
			ret = -ENOMEM;
	}
	mutex_unlock(&vm->lock);
	if (ret)
		goto out_put;
	req.action = copy ? copy->action : KVMPFM_FILTER_DENY;
	if (copy && copy->nr > req.nr)
		ret = -ENOSPC;
	else if (copy && copy_to_user(argp + sizeof(req), copy->ev,
				      array_size(copy->nr, sizeof(copy->ev[0]))))
		ret = -EFAULT;
	req.nr = copy ? copy->nr : 0;
	if (copy_to_user(argp, &req, sizeof(req)))
		ret = -EFAULT;
	kvmpfm_free(copy);
out_put:
	vm_put(vm);
	return ret;
}

/*
 * On any open file. Every VM of every user: root or CAP_PERFMON, the
 * caller's own privilege (a file handed to another process gives nothing).
 */
long kvmpfm_operator_ioctl(unsigned int cmd, void __user *argp)
{
	if (!perfmon_capable())
		return -EPERM;
	switch (cmd) {
	case KVMPFM_LIST_VMS:
		return list_vms(argp);
	case KVMPFM_GET_SNAPSHOT:
		return get_snapshot(argp);
	case KVMPFM_GET_EVENT_FILTER:
		return get_filter(argp);
	}
	return -ENOTTY;
}
