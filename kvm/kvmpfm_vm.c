// SPDX-License-Identifier: GPL-2.0
/*
 * VM and vCPU binding, DOORBELL, and teardown.
 *
 * Everything a binding ioctl receives comes from host userspace (QEMU),
 * everything in a command block from the guest: both are checked here or
 * in the engine before use, and neither can make the module allocate
 * without bound (vCPUs <= KVM_MAX_VCPUS, event map <= 64 entries, the
 * per-VM limits under the host-wide ceilings of kvmpfm_main.c).
 */
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/nospec.h>
#include <linux/uaccess.h>
#include <linux/sched/task.h>
#include "kvmpfm.h"

/* @index comes from the VMM: clamped under speculation too */
static struct kvmpfm_vcpu *vcpu_get(struct kvmpfm_vm *vm, unsigned long index)
{
	if (index >= vm->nr_vcpus)
		return NULL;
	return &vm->vcpus[array_index_nospec(index, vm->nr_vcpus)];
}

/*
 * "auto": the personality of the host's vendor, so that raw encodings
 * mean to the host what they mean to the guest. The one place that
 * resolves it: QEMU learns the result from BIND_VM.
 */
static u32 resolve_personality(u32 id)
{
	const struct pvpfm_pers_desc *d;
	u32 i;

	if (id != PVPFM_PERS_AUTO)
		return id;
	for (i = 0; i < PVPFM_PERS_COUNT; i++) {
		d = pvpfm_pers_desc(i);
		if (d && d->auto_default && d->vendor == kvmpfm_host_vendor())
			return i;
	}
	return PVPFM_PERS_AUTO;
}

/* the engine's configuration; @b's personality and counters resolved */
static int engine_cfg(struct kvmpfm_bind_vm *b, struct pfm_engine_cfg *cfg)
{
	const struct pvpfm_pers_desc *d;

	b->personality = resolve_personality(b->personality);
	d = pvpfm_pers_desc(b->personality);
	if (!d || !pvpfm_pers_counters_ok(d, b->counters))
		return -EINVAL;
	if (!b->counters)
		b->counters = d->counters;

	memset(cfg, 0, sizeof(*cfg));
	cfg->personality = b->personality;
	cfg->gp_counters = b->counters;
	cfg->fixed_counters = d->fixed_counters;
	cfg->arch_version = d->arch_version;
	cfg->counter_width = KVMPFM_COUNTER_WIDTH;
	cfg->nr_vcpus = b->nr_vcpus;
	cfg->timer_granularity_ns = KVMPFM_TIMER_GRANULARITY_NS;
	cfg->limits.max_contexts = b->max_contexts;
	cfg->limits.max_sets = b->max_sets;
	cfg->limits.max_vector = b->max_vector;
	cfg->limits.max_smpl_buf = b->max_smpl_buf;
	/* above a host-wide ceiling: E2BIG; 0 takes the module default */
	return kvmpfm_limits_resolve(&cfg->limits);
}

static void vcpu_init(struct kvmpfm_vm *vm, u32 index)
{
	struct kvmpfm_vcpu *vcpu = &vm->vcpus[index];

	vcpu->vm = vm;
	vcpu->index = index;
	init_irq_work(&vcpu->irq_work, kvmpfm_vcpu_irq_work);
	init_task_work(&vcpu->task_work, kvmpfm_vcpu_task_work);
	hrtimer_setup(&vcpu->timer, kvmpfm_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED);
}

/* after an RCU grace period since kvmpfm_vcpu_thread_del() */
static void vcpu_destroy(struct kvmpfm_vcpu *vcpu)
{
	/* no task work is queued: each holds a reference on our file */
	hrtimer_cancel(&vcpu->timer);
	irq_work_sync(&vcpu->irq_work);
	if (vcpu->eventfd)
		eventfd_ctx_put(vcpu->eventfd);
	kvmpfm_vcpu_kvm_put(vcpu);
	if (vcpu->task)
		put_task_struct(vcpu->task);
	kvmpfm_free(vcpu->cmd_buf);
}

void kvmpfm_vm_release(struct kvmpfm_vm *vm)
{
	struct pfm_engine_stats st;
	u32 i;

	kvmpfm_vm_unregister(vm);
	mutex_lock(&vm->lock);
	vm->dying = true;
	if (vm->engine) {
		pfm_engine_stats(vm->engine, &st);
		kvmpfm_account(&kvmpfm_total_overflows, st.overflows);
	}
	pfm_engine_destroy(vm->engine);
	vm->engine = NULL;
	for (i = 0; vm->vcpus && i < vm->nr_vcpus; i++)
		kvmpfm_vcpu_release_kept(&vm->vcpus[i]);
	mutex_unlock(&vm->lock);
	for (i = 0; vm->vcpus && i < vm->nr_vcpus; i++)
		kvmpfm_vcpu_thread_del(&vm->vcpus[i]);
	/*
	 * overflow handlers of the closed counters and KVM tracepoint
	 * probes are done with the vCPUs
	 */
	synchronize_rcu();

	for (i = 0; vm->vcpus && i < vm->nr_vcpus; i++)
		vcpu_destroy(&vm->vcpus[i]);
	kvmpfm_account(&kvmpfm_total_deferred_runs, vm->deferred_runs);
	kvmpfm_account(&kvmpfm_total_remote_ops, vm->remote_counter_ops);
	kvmpfm_mem_destroy(vm);
	kvmpfm_tracepoints_put(vm);
	if (vm->mm)
		mmdrop(vm->mm);
	kvmpfm_free(vm->aliases);
	kvmpfm_free(vm->vmm_filter);
	kvmpfm_free(vm->operator_filter);
	kvmpfm_free(vm->vcpus);
	kvmpfm_free(vm);
	kvmpfm_account(&kvmpfm_nr_vms, -1);
}

struct kvmpfm_vm *kvmpfm_vm_bind(struct file *file, void __user *argp)
{
	struct pfm_engine_cfg cfg;
	struct kvmpfm_bind_vm b;
	struct kvmpfm_vm *vm;
	int ret;
	u32 i;

	if (copy_from_user(&b, argp, sizeof(b)))
		return ERR_PTR(-EFAULT);
	if (b.reserved0 || b.reserved1 ||
	    memchr_inv(b.reserved, 0, sizeof(b.reserved)) ||
	    !b.nr_vcpus || b.nr_vcpus > KVM_MAX_VCPUS)
		return ERR_PTR(-EINVAL);
	/* a VMM's process: the memory its vCPU threads run in */
	if (!current->mm)
		return ERR_PTR(-EINVAL);
	ret = engine_cfg(&b, &cfg);
	if (ret)
		return ERR_PTR(ret);
	if (copy_to_user(argp, &b, sizeof(b)))
		return ERR_PTR(-EFAULT);

	vm = kvmpfm_zalloc(sizeof(*vm));
	if (!vm)
		return ERR_PTR(-ENOMEM);
	kvmpfm_account(&kvmpfm_nr_vms, 1);
	mutex_init(&vm->lock);
	vm->file = file;
	ret = kvmpfm_mem_init(vm);
	if (ret) {
		kvmpfm_free(vm);
		kvmpfm_account(&kvmpfm_nr_vms, -1);
		return ERR_PTR(ret);
	}
	mmgrab(current->mm);
	vm->mm = current->mm;
	vm->nr_vcpus = b.nr_vcpus;
	ret = -ENOMEM;
	vm->vcpus = kvmpfm_zalloc(array_size(b.nr_vcpus, sizeof(*vm->vcpus)));
	if (!vm->vcpus)
		goto fail;
	for (i = 0; i < vm->nr_vcpus; i++)
		vcpu_init(vm, i);
	kvmpfm_tracepoints_get(vm);
	ret = pfm_engine_create(&cfg, &kvmpfm_backend_ops, vm, &vm->engine);
	if (ret)
		goto fail;
	return vm;
fail:
	kvmpfm_vm_release(vm);
	return ERR_PTR(ret);
}

static bool map_entry_valid(const struct kvmpfm_event_map_entry *m)
{
	return m->guest_kind <= KVMPFM_EVK_FIXED &&
	       !(m->flags & ~KVMPFM_MAP_EMULATED) && !m->reserved &&
	       (m->host_type == PERF_TYPE_HARDWARE ||
		m->host_type == PERF_TYPE_SOFTWARE ||
		m->host_type == PERF_TYPE_RAW ||
		m->host_type == PERF_TYPE_HW_CACHE);
}

/*
 * Whether the host event of @m counts the guest only. PMU aliases
 * (HARDWARE, HW_CACHE, RAW) are opened with exclude_host
 * (translate_hw()): they count what the guest runs, as KVM's own vPMU
 * does for any guest. A SOFTWARE event cannot tell host from guest: it
 * counts the vCPU thread in host kernel mode too.
 */
static bool map_entry_guest_only(const struct kvmpfm_event_map_entry *m)
{
	return m->host_type != PERF_TYPE_SOFTWARE;
}

static int set_event_map(struct kvmpfm_vm *vm, void __user *argp)
{
	struct kvmpfm_event_map_entry *entries;
	struct pfm_engine_stats st;
	struct kvmpfm_event_map map;
	bool host = false;
	int ret;
	u32 i;

	if (copy_from_user(&map, argp, sizeof(map)))
		return -EFAULT;
	if (map.nr > KVMPFM_MAX_EVENT_MAP || map.reserved)
		return -EINVAL;
	/* an empty map clears the aliases: nothing to allocate */
	entries = NULL;
	if (map.nr) {
		entries = kvmpfm_zalloc(array_size(map.nr, sizeof(*entries)));
		if (!entries)
			return -ENOMEM;
		if (copy_from_user(entries, argp + sizeof(map),
				   array_size(map.nr, sizeof(*entries)))) {
			kvmpfm_free(entries);
			return -EFAULT;
		}
	}
	for (i = 0; i < map.nr; i++) {
		if (!map_entry_valid(&entries[i])) {
			kvmpfm_free(entries);
			return -EINVAL;
		}
		host |= !map_entry_guest_only(&entries[i]);
	}
	/*
	 * An alias that counts outside the guest needs what perf would
	 * demand to count the host kernel: CAP_PERFMON (or CAP_SYS_ADMIN).
	 * perf_event_paranoid and security_perf_event_open() are not
	 * exported to modules; the capability is the stricter test. The
	 * caller's, whoever opened the file.
	 */
	if (host && !perfmon_capable()) {
		kvmpfm_free(entries);
		return -EPERM;
	}
	ret = mutex_lock_killable(&vm->lock);
	if (ret) {
		kvmpfm_free(entries);
		return ret;
	}
	/* contexts already programmed would mix old and new meanings */
	pfm_engine_stats(vm->engine, &st);
	if (st.contexts) {
		ret = -EBUSY;
	} else {
		swap(vm->aliases, entries);
		vm->nr_aliases = map.nr;
	}
	mutex_unlock(&vm->lock);
	kvmpfm_free(entries);
	return ret;
}

/*
 * From the vCPU's own thread: the vCPU is that thread. Its perf events
 * will be bound to it, and the KVM vCPU it runs is learned when it next
 * enters the guest (kvmpfm_kvm.c), whatever the VMM's numbering.
 */
static int bind_vcpu_locked(struct kvmpfm_vm *vm, unsigned long index)
{
	struct kvmpfm_vcpu *vcpu = vcpu_get(vm, index);
	int ret;

	if (!vcpu || current->mm != vm->mm)
		return -EINVAL;
	if (vcpu->task)
		return vcpu->task == current ? 0 : -EBUSY;
	vcpu->cmd_buf = kvmpfm_zalloc(PVPFM_CMD_BLOCK_SIZE);
	if (!vcpu->cmd_buf)
		return -ENOMEM;
	get_task_struct(current);
	/*
	 * Set once. DOORBELL reads it without vm->lock and goes on only
	 * in the thread it names: this one, which stored the fields above.
	 */
	WRITE_ONCE(vcpu->task, current);
	ret = kvmpfm_vcpu_thread_add(vcpu);
	if (ret) {
		WRITE_ONCE(vcpu->task, NULL);
		put_task_struct(current);
		kvmpfm_free(vcpu->cmd_buf);
		vcpu->cmd_buf = NULL;
	}
	return ret;
}

static int bind_vcpu(struct kvmpfm_vm *vm, unsigned long index)
{
	int ret = mutex_lock_killable(&vm->lock);

	if (ret)
		return ret;
	ret = bind_vcpu_locked(vm, index);
	mutex_unlock(&vm->lock);
	return ret;
}

static int set_cmd_block_locked(struct kvmpfm_vm *vm,
				const struct kvmpfm_cmd_block *cb)
{
	struct kvmpfm_vcpu *vcpu = vcpu_get(vm, cb->vcpu);

	if (!vcpu || !vcpu->task || cb->reserved || offset_in_page(cb->gpa))
		return -EINVAL;
	if (!kvmpfm_guest_writable(vm, cb->gpa, PVPFM_CMD_BLOCK_SIZE))
		return -EFAULT;
	WRITE_ONCE(vcpu->cmd_block, cb->gpa | KVMPFM_CMD_BLOCK_SET);
	return 0;
}

static int set_cmd_block(struct kvmpfm_vm *vm, void __user *argp)
{
	struct kvmpfm_cmd_block cb;
	int ret;

	if (copy_from_user(&cb, argp, sizeof(cb)))
		return -EFAULT;
	ret = mutex_lock_killable(&vm->lock);
	if (ret)
		return ret;
	ret = set_cmd_block_locked(vm, &cb);
	mutex_unlock(&vm->lock);
	return ret;
}

static int set_eventfd(struct kvmpfm_vm *vm, void __user *argp)
{
	struct eventfd_ctx *ctx = NULL;
	struct kvmpfm_eventfd ef;
	struct kvmpfm_vcpu *vcpu;
	int ret;

	if (copy_from_user(&ef, argp, sizeof(ef)))
		return -EFAULT;
	vcpu = vcpu_get(vm, ef.vcpu);
	if (!vcpu)
		return -EINVAL;
	if (ef.fd >= 0) {
		ctx = eventfd_ctx_fdget(ef.fd);
		if (IS_ERR(ctx))
			return PTR_ERR(ctx);
	}
	ret = mutex_lock_killable(&vm->lock);
	if (!ret) {
		swap(vcpu->eventfd, ctx);
		mutex_unlock(&vm->lock);
	}
	/* the one replaced, or the new one if the wait was cut short */
	if (ctx)
		eventfd_ctx_put(ctx);
	return ret;
}

/* the command block at @gpa into @hdr: its header, then what it names */
static int cmd_block_read(struct kvmpfm_vm *vm, u64 gpa,
			  struct pvpfm_cmd_hdr *hdr, u32 *arg_size)
{
	int ret = kvmpfm_guest_read(vm, gpa, hdr, sizeof(*hdr));

	/* an oversized arg_size is the engine's to refuse, from the header */
	*arg_size = min_t(u32, hdr->arg_size, PVPFM_CMD_ARGS_MAX);
	if (!ret)
		ret = kvmpfm_guest_read(vm, gpa + sizeof(*hdr), hdr + 1,
					*arg_size);
	return ret;
}

/*
 * One guest call: copy the command block in once, run the engine on the
 * copy, copy the results out. The exit completes when this returns. The
 * copies are made without vm->lock (kvmpfm.h): the copy is the vCPU
 * thread's own, @vcpu->cmd_buf.
 */
static int doorbell(struct kvmpfm_vm *vm, unsigned long index)
{
	struct kvmpfm_vcpu *vcpu = vcpu_get(vm, index);
	u64 start = ktime_get_ns();
	struct pvpfm_cmd_hdr *hdr;
	u32 arg_size, i;
	int ret, len;
	u64 gpa;

	/* set once, by this thread itself (bind_vcpu()) */
	if (!vcpu || READ_ONCE(vcpu->task) != current ||
	    current->mm != vm->mm)
		return -EPERM;
	ret = kvmpfm_vm_claim_kvm(vm, vcpu);
	if (ret)
		return ret;
	gpa = READ_ONCE(vcpu->cmd_block);
	if (!(gpa & KVMPFM_CMD_BLOCK_SET))
		return -ENXIO;
	gpa &= ~KVMPFM_CMD_BLOCK_SET;
	hdr = vcpu->cmd_buf;
	if (cmd_block_read(vm, gpa, hdr, &arg_size))
		return -EFAULT;
	ret = mutex_lock_killable(&vm->lock);
	if (ret)
		return ret;
	/*
	 * The call sees every wrap this vCPU's counters made, delivered or
	 * not. Another vCPU's wraps are its own thread's to deliver
	 * (kvmpfm_overflow.c): a read from here sees them held.
	 */
	kvmpfm_vcpu_sync(vcpu);
	vm->notify_vcpu = vcpu->index;
	vm->doorbells++;
	vcpu->doorbells++;
	len = pfm_engine_exec(vm->engine, vcpu->index, hdr,
			      sizeof(*hdr) + arg_size);
	if (vm->kept_trim_due) {
		vm->kept_trim_due = false;
		for (i = 0; i < vm->nr_vcpus; i++)
			kvmpfm_vcpu_release_kept(&vm->vcpus[i]);
	}
	mutex_unlock(&vm->lock);
	ret = len < 0 || kvmpfm_guest_copy_out(vcpu, gpa, hdr, len) ?
	      -EFAULT : 0;
	atomic64_add(ktime_get_ns() - start, &vm->doorbell_ns);
	return ret;
}

void kvmpfm_vm_stats_fill(struct kvmpfm_vm *vm,
			  const struct pfm_engine_stats *st,
			  struct kvmpfm_vm_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->contexts = st->contexts;
	out->sets = st->sets;
	out->loaded = st->loaded;
	out->active_counters = st->active_counters;
	out->commands = st->commands;
	out->command_errors = st->command_errors;
	out->overflows = st->overflows;
	out->samples = st->samples;
	out->samples_lost = st->samples_lost;
	out->messages = st->messages;
	out->messages_lost = st->messages_lost;
	out->set_switches = st->set_switches;
	out->doorbells = vm->doorbells;
	out->notifications = vm->notifications;
	out->deferred_runs = vm->deferred_runs;
	out->remote_counter_ops = vm->remote_counter_ops;
	out->throttled = vm->throttled_overflows;
	out->doorbell_ns = atomic64_read(&vm->doorbell_ns);
}

static int get_stats(struct kvmpfm_vm *vm, void __user *argp)
{
	struct kvmpfm_vm_stats out;
	struct pfm_engine_stats st;
	int ret;

	ret = mutex_lock_killable(&vm->lock);
	if (ret)
		return ret;
	pfm_engine_stats(vm->engine, &st);
	kvmpfm_vm_stats_fill(vm, &st, &out);
	mutex_unlock(&vm->lock);
	return copy_to_user(argp, &out, sizeof(out)) ? -EFAULT : 0;
}

/*
 * Each takes vm->lock itself, killably, with its caller's memory copied
 * in before and out after (kvmpfm.h).
 */
long kvmpfm_vm_ioctl(struct kvmpfm_vm *vm, unsigned int cmd, unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case KVMPFM_SET_EVENT_MAP:
		return set_event_map(vm, argp);
	case KVMPFM_BIND_VCPU:
		return bind_vcpu(vm, arg);
	case KVMPFM_SET_CMD_BLOCK:
		return set_cmd_block(vm, argp);
	case KVMPFM_SET_EVENTFD:
		return set_eventfd(vm, argp);
	case KVMPFM_DOORBELL:
		return doorbell(vm, arg);
	case KVMPFM_GET_VM_STATS:
		return get_stats(vm, argp);
	case KVMPFM_SET_IDENTITY:
		return kvmpfm_set_identity(vm, argp);
	case KVMPFM_GET_STATE:
	case KVMPFM_SET_STATE:
		return kvmpfm_state_ioctl(vm, cmd, argp);
	case KVMPFM_SET_MEM_TABLE:
		return kvmpfm_set_mem_table(vm, argp);
	case KVMPFM_GET_DIRTY_LOG:
		return kvmpfm_get_dirty_log(vm, argp);
	}
	return -ENOTTY;
}
