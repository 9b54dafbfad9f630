// SPDX-License-Identifier: GPL-2.0
/*
 * What the module takes from KVM, through what KVM keeps open to every
 * module, and nothing else.
 *
 * A bound vCPU is a thread of the VMM (BIND_VCPU from that thread): its
 * host events count it, DOORBELL comes from it, guest memory is reached
 * through the VMM's memory table (kvmpfm_mem.c). KVM's own vCPU object is
 * needed for one thing only, the guest's state at a sample: its RIP and
 * whether the interrupt that found the overflow came from guest mode.
 * The module learns it from KVM's tracepoints, found by name in the kvm
 * module (the tracepoint module notifier; no symbol, no kallsyms):
 *
 *   kvm_entry           the thread enters the guest with this vCPU: the
 *                       first time, the vCPU is adopted (a reference on
 *                       its VM keeps it alive for the binding's life);
 *                       each time, the thread is "in KVM_RUN"
 *   kvm_userspace_exit  KVM_RUN returns to the VMM: no longer in it
 *
 * From the adopted vCPU the module reads only what the headers a DKMS
 * build compiles against describe (asm/kvm_host.h, linux/kvm_host.h):
 * vcpu->arch.regs[] and regs_avail, filled by the exported
 * kvm_x86_cache_reg static call when the vCPU is loaded here;
 * kvm_arch_pmi_in_guest(); vcpu->arch.guest_state_protected; the
 * preemption counts in vcpu->stat; and kvm_make_request() of
 * KVM_REQ_UNBLOCK. kvm_get_kvm_safe()/kvm_put_kvm() hold the VM.
 * doc/ARCHITECTURE.md lists each with the kernels checked.
 *
 * Locking: the thread map is RCU (probes run with preemption disabled),
 * written under thread_lock; the probes' registration is counted under
 * probes_lock. A vCPU's @kvm_vcpu is written once, by its own thread in
 * kvm_entry, and read by that thread (overflow handlers, task work,
 * DOORBELL) or under vm->lock after it.
 */
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/tracepoint.h>
#include "kvmpfm.h"

static DEFINE_HASHTABLE(thread_vcpus, 8);
static DEFINE_SPINLOCK(thread_lock);

static struct tracepoint *tp_entry, *tp_userspace_exit;
static DEFINE_MUTEX(probes_lock);
static unsigned int probes_users;	/* bound vCPUs; under probes_lock */

/* the bound vCPU that is @task; RCU or preemption disabled */
static struct kvmpfm_vcpu *thread_vcpu(struct task_struct *task)
{
	struct kvmpfm_vcpu *v;

	hash_for_each_possible_rcu(thread_vcpus, v, thread_node,
				   (unsigned long)task)
		if (v->task == task)
			return v;
	return NULL;
}

/*
 * The first KVM vCPU this thread runs becomes the vCPU's, with a
 * reference on its VM. One binding per KVM VM: a vCPU of another VM than
 * the binding's first is never adopted, and a thread that later enters
 * another VM than its adopted vCPU's is foreign from then on (DOORBELL
 * refuses it).
 */
static void vcpu_adopt(struct kvmpfm_vcpu *v, struct kvm_vcpu *kv)
{
	struct kvmpfm_vm *vm = v->vm;
	struct kvm *first = READ_ONCE(vm->kvm);

	if (first && first != kv->kvm)
		goto foreign;
	if (!kvm_get_kvm_safe(kv->kvm))
		return;
	first = cmpxchg(&vm->kvm, NULL, kv->kvm);
	if (first && first != kv->kvm) {
		/* not the last reference: the vCPU being entered holds one */
		kvm_put_kvm(kv->kvm);
		goto foreign;
	}
	/* pairs with the readers' smp_load_acquire() */
	smp_store_release(&v->kvm_vcpu, kv);
	return;
foreign:
	set_bit(KVMPFM_VCPU_FOREIGN, &v->flags);
}

static KVMPFM_KVM_ENTRY_PROBE(probe_entry)
{
	struct kvm_vcpu *own;
	struct kvmpfm_vcpu *v;

	rcu_read_lock();
	v = thread_vcpu(current);
	if (v) {
		own = v->kvm_vcpu;
		if (!own && !test_bit(KVMPFM_VCPU_FOREIGN, &v->flags))
			vcpu_adopt(v, kv);
		else if (own && own->kvm != kv->kvm)
			set_bit(KVMPFM_VCPU_FOREIGN, &v->flags);
		WRITE_ONCE(v->in_run, true);
	}
	rcu_read_unlock();
}

static void probe_userspace_exit(void *data, u32 reason, int err)
{
	struct kvmpfm_vcpu *v;

	rcu_read_lock();
	v = thread_vcpu(current);
	if (v)
		WRITE_ONCE(v->in_run, false);
	rcu_read_unlock();
}

static void tp_find(struct tracepoint *tp, const char *name,
		    struct tracepoint **slot)
{
	if (!strcmp(tp->name, name))
		*slot = tp;
}

static int tp_module_event(struct notifier_block *nb, unsigned long val,
			   void *data)
{
	struct tp_module *tm = data;
	struct module *mod = tm->mod;
	struct tracepoint *tp;
	unsigned int i;

	if (strcmp(mod->name, "kvm"))
		return NOTIFY_OK;
	if (val == MODULE_STATE_GOING) {
		tp_entry = NULL;
		tp_userspace_exit = NULL;
		return NOTIFY_OK;
	}
	for (i = 0; i < mod->num_tracepoints; i++) {
		tp = tracepoint_ptr_deref(&mod->tracepoints_ptrs[i]);
		tp_find(tp, "kvm_entry", &tp_entry);
		tp_find(tp, "kvm_userspace_exit", &tp_userspace_exit);
	}
	return NOTIFY_OK;
}

static struct notifier_block tp_module_nb = {
	.notifier_call = tp_module_event,
};

/*
 * At load: both tracepoints must be there, or the module would record
 * samples without the guest's IP. kvm is loaded first (we import its
 * symbols), so its tracepoints are known once the notifier is in.
 */
int kvmpfm_kvm_init(void)
{
	int ret = register_tracepoint_module_notifier(&tp_module_nb);

	if (ret)
		return ret;
	if (!tp_entry || !tp_userspace_exit) {
		pr_err("kvm-perfmon: KVM's tracepoint %s not found\n",
		       tp_entry ? "kvm_userspace_exit" : "kvm_entry");
		unregister_tracepoint_module_notifier(&tp_module_nb);
		return -ENOENT;
	}
	return 0;
}

void kvmpfm_kvm_exit(void)
{
	unregister_tracepoint_module_notifier(&tp_module_nb);
}

static int probes_get(void)
{
	int ret = 0;

	mutex_lock(&probes_lock);
	if (!probes_users) {
		ret = tracepoint_probe_register(tp_entry, probe_entry, NULL);
		if (!ret) {
			ret = tracepoint_probe_register(tp_userspace_exit,
							probe_userspace_exit,
							NULL);
			if (ret)
				tracepoint_probe_unregister(tp_entry,
							    probe_entry, NULL);
		}
	}
	if (!ret)
		probes_users++;
	mutex_unlock(&probes_lock);
	return ret;
}

static void probes_put(void)
{
	mutex_lock(&probes_lock);
	if (!--probes_users) {
		tracepoint_probe_unregister(tp_userspace_exit,
					    probe_userspace_exit, NULL);
		tracepoint_probe_unregister(tp_entry, probe_entry, NULL);
	}
	mutex_unlock(&probes_lock);
}

/*
 * BIND_VCPU, from the vCPU's thread: @v->task is set. A thread is one
 * vCPU, of one binding: -EBUSY if it is bound already (the KVM vCPU it
 * runs could not be told apart).
 */
int kvmpfm_vcpu_thread_add(struct kvmpfm_vcpu *v)
{
	int ret = probes_get();

	if (ret)
		return ret;
	spin_lock(&thread_lock);
	if (thread_vcpu(v->task)) {
		ret = -EBUSY;
	} else {
		hash_add_rcu(thread_vcpus, &v->thread_node,
			     (unsigned long)v->task);
	}
	spin_unlock(&thread_lock);
	if (ret)
		probes_put();
	return ret;
}

/*
 * Teardown. The caller waits for an RCU grace period before it frees
 * @v (no probe still sees it) and then drops the VM (kvmpfm_vcpu_kvm_put).
 */
void kvmpfm_vcpu_thread_del(struct kvmpfm_vcpu *v)
{
	if (!v->task || hlist_unhashed(&v->thread_node))
		return;
	spin_lock(&thread_lock);
	hash_del_rcu(&v->thread_node);
	spin_unlock(&thread_lock);
	probes_put();
}

void kvmpfm_vcpu_kvm_put(struct kvmpfm_vcpu *v)
{
	if (v->kvm_vcpu)
		kvm_put_kvm(v->kvm_vcpu->kvm);
	v->kvm_vcpu = NULL;
}

/* the KVM vCPU this thread runs, once it entered the guest; else NULL */
struct kvm_vcpu *kvmpfm_kvm_vcpu(struct kvmpfm_vcpu *v)
{
	/* pairs with vcpu_adopt()'s smp_store_release(): its VM referenced */
	return smp_load_acquire(&v->kvm_vcpu);
}

/* @v's thread is current, inside KVM_RUN: its vCPU is loaded here */
bool kvmpfm_vcpu_loaded(struct kvmpfm_vcpu *v)
{
	return v->task == current && READ_ONCE(v->in_run) &&
	       kvmpfm_kvm_vcpu(v);
}

/*
 * The guest's RIP as kvm_rip_read() reads it (arch/x86/kvm/
 * kvm_cache_regs.h): SVM saves RIP into vcpu->arch.regs on every exit;
 * VMX leaves it in the VMCS until asked (regs_avail), and only a vCPU
 * loaded on this CPU can be asked (@loaded). False: not readable here.
 */
static bool guest_rip(struct kvm_vcpu *kv, bool loaded, u64 *ip)
{
	if (kv->arch.guest_state_protected) {
		*ip = 0;		/* SEV-ES: the host cannot see it */
		return true;
	}
	if (!test_bit(KVMPFM_REG_RIP, (unsigned long *)&kv->arch.regs_avail)) {
		if (!loaded)
			return false;
		static_call(kvm_x86_cache_reg)(kv, KVMPFM_REG_RIP);
	}
	*ip = kvmpfm_cached_rip(kv);
	return true;
}

/*
 * From an overflow handler (NMI or IRQ) in @v's thread: the guest's RIP
 * if the interrupt took the vCPU out of the guest (then it is loaded
 * here, as KVM's own perf callbacks require), or if it is readable
 * anyway. False: not now.
 */
bool kvmpfm_overflow_rip(struct kvmpfm_vcpu *v, u64 *ip)
{
	struct kvm_vcpu *kv = kvmpfm_kvm_vcpu(v);

	if (!kv || v->task != current)
		return false;
	return guest_rip(kv, kvm_arch_pmi_in_guest(kv), ip);
}

/* from @v's thread (its task work): the RIP now, 0 if not readable */
u64 kvmpfm_vcpu_rip(struct kvmpfm_vcpu *v)
{
	struct kvm_vcpu *kv = kvmpfm_kvm_vcpu(v);
	u64 ip = 0;

	if (!kv)
		return 0;
	preempt_disable();
	if (!guest_rip(kv, kvmpfm_vcpu_loaded(v), &ip))
		ip = 0;
	preempt_enable();
	return ip;
}

/* the host's preemptions of the vCPU, as KVM counts them */
u64 kvmpfm_vcpu_preemptions(struct kvmpfm_vcpu *v)
{
	struct kvm_vcpu *kv = kvmpfm_kvm_vcpu(v);

	if (!kv)
		return 0;
	return READ_ONCE(kv->stat.preemption_reported) +
	       READ_ONCE(kv->stat.preemption_other);
}

/*
 * Task work was queued for @v's thread while it is in KVM_RUN: should
 * the vCPU halt before it enters the guest again, have it run the work
 * and halt again (kvm_vcpu_check_block() sees the request).
 */
void kvmpfm_vcpu_unblock(struct kvmpfm_vcpu *v)
{
	struct kvm_vcpu *kv = kvmpfm_kvm_vcpu(v);

	if (kv)
		kvm_make_request(KVM_REQ_UNBLOCK, kv);
}

/* no bound vCPU of @vm is inside KVM_RUN now (migration's check) */
bool kvmpfm_vcpus_out_of_run(struct kvmpfm_vm *vm)
{
	u32 i;

	for (i = 0; i < vm->nr_vcpus; i++)
		if (READ_ONCE(vm->vcpus[i].in_run))
			return false;
	return true;
}
