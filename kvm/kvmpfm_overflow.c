// SPDX-License-Identifier: GPL-2.0
/*
 * The overflow path: from perf's overflow handler to the engine.
 *
 *   perf handler (NMI/IRQ) -> pending bit + irq_work -> the vCPU
 *   thread's task work (vm->lock) -> pfm_engine_overflow()
 *
 * The handler records which PMD interrupted and the guest's IP; the
 * irq_work, on the same CPU, adds the task work to the vCPU thread; the
 * thread, before it enters the guest again, reads its own counters,
 * finds the wraps and delivers them with the sample's IP (or, while the
 * VM is throttled, holds them: kvmpfm_throttle.c).
 *
 * A vCPU's wraps are its own thread's business: only that thread reads
 * and re-arms its counters to find them, so delivery never takes another
 * vCPU out of the guest. A guest call (DOORBELL) first delivers what its
 * own vCPU has pending (kvmpfm_vcpu_sync). A call about another vCPU's
 * context (system-wide contexts take calls from any vCPU; a monitor
 * reads a thread that runs elsewhere) does not deliver that vCPU's wraps:
 * it reads the counter through the engine, held at all-ones until the
 * wrap is delivered (kvmpfm_counter.c), and the owner delivers promptly,
 * kicked by its irq_work (below). Migration's save delivers for every
 * vCPU (kvmpfm_migrate.c): their threads are stopped then, outside
 * KVM_RUN, and cannot.
 *
 * Locking: the handler and the irq_work take no lock; they write the
 * vCPU's atomic pending state only (kvmpfm.h). Delivery runs with
 * vm->lock held. A queued task work holds a reference on the binding's
 * file.
 */
#include "kvmpfm.h"

/*
 * Guest kernel mode, told from the IP. KVM exports no CPL accessor to a
 * module (6.1: neither kvm_x86_get_cpl's static call nor perf's guest
 * callbacks), and the IP is what must not leak: an x86-64 guest runs code
 * at upper-half addresses in supervisor mode only (user space ends below
 * the non-canonical hole). 0, an IP not read, shows nothing.
 */
static bool guest_ip_kernel(u64 ip)
{
	return ip >> 63;
}

/*
 * The IP of the overflows delivered now: read at the overflow, or (VMX,
 * an overflow outside the guest) now, if this thread has the vCPU loaded
 * (in KVM_RUN); else unknown, 0.
 */
static u64 vcpu_sample_ip(struct kvmpfm_vcpu *vcpu)
{
	if (!atomic_xchg(&vcpu->pending_ip_unread, 0))
		return READ_ONCE(vcpu->pending_ip);
	return kvmpfm_vcpu_rip(vcpu);
}

void kvmpfm_overflow(struct perf_event *event,
			    struct perf_sample_data *data, struct pt_regs *regs)
{
	struct kvmpfm_counter *kc = event->overflow_handler_context;
	struct kvmpfm_vcpu *vcpu = kc->vcpu;
	u64 ip;

	/*
	 * The guest's IP now. An interrupt that took the vCPU out of the
	 * guest finds it loaded here; elsewhere VMX may not have RIP yet.
	 */
	if (kvmpfm_overflow_rip(vcpu, &ip)) {
		WRITE_ONCE(vcpu->pending_ip, ip);
		atomic_set(&vcpu->pending_ip_unread, 0);
	} else {
		atomic_set(&vcpu->pending_ip_unread, 1);
	}
	/* perf counted this interrupt against its bound before calling us */
	if (kvmpfm_perf_throttled(event))
		atomic_inc(&vcpu->pending_host_throttles);
	set_bit(kc->pmd, vcpu->pending_pmds);
	irq_work_queue(&vcpu->irq_work);
}

/*
 * Which of the vCPU's open counters wrapped. Every open counter is read,
 * not only those whose interrupt arrived: perf may interrupt late (e.g.
 * task-clock on its hrtimer tick) and a wrap must reach the engine before
 * any command reads the PMD. Early interrupts just re-arm the period, as
 * does the end of a throttling for the counters it held. vcpu->past[]:
 * what each wrapped counter went past its wrap (held by the VM's
 * throttling, throttled by perf, or interrupting late), from which the
 * engine counts the samples lost. *@held: a wrapped counter was held.
 */
static bool collect_wraps(struct kvmpfm_vcpu *vcpu, u64 *wraps, bool *held)
{
	struct kvmpfm_counter *kc;
	bool interrupted;
	unsigned int pmd;
	u64 raw;

	memset(wraps, 0, PFM_PMD_BV * sizeof(u64));
	*held = false;
	for (pmd = 0; pmd < PFM_MAX_PMDS; pmd++) {
		interrupted = test_and_clear_bit(pmd, vcpu->pending_pmds);
		kc = vcpu->ctr_by_pmd[pmd];
		if (!kc)
			continue;
		raw = kvmpfm_counter_raw_read(kc, NULL, NULL);
		if (raw >= kc->next_wrap) {
			vcpu->past[pmd] = raw - kc->next_wrap;
			*held |= kc->held;
			kc->next_wrap += KVMPFM_WRAP;
			kc->wraps++;
			wraps[pmd / 64] |= BIT_ULL(pmd % 64);
		} else if (!interrupted && !kc->held) {
			continue;
		}
		kvmpfm_counter_period_arm(kc, raw);
	}
	return memchr_inv(wraps, 0, PFM_PMD_BV * sizeof(u64));
}

/*
 * What perf's limits did to the vCPU's counters since the last delivery
 * (kvmpfm_counter.c): to the context in on it and the operator.
 */
static void host_limits_deliver(struct kvmpfm_vcpu *vcpu)
{
	struct kvmpfm_vm *vm = vcpu->vm;
	u32 throttles = atomic_xchg(&vcpu->pending_host_throttles, 0);
	u32 raised = vcpu->periods_raised;

	if (!throttles && !raised)
		return;
	vcpu->periods_raised = 0;
	vm->host_throttles += throttles;
	vm->periods_raised += raised;
	pfm_engine_host_limited(vm->engine, vcpu->index, throttles, raised);
}

/*
 * Deliver what the vCPU's interrupts and timer left pending; vm->lock
 * held. @throttle: from the vCPU's own interrupts, which the VM's budget
 * bounds; the vCPU's own guest call (DOORBELL) delivers whatever is
 * pending, as it must see every wrap its counters made, and costs the
 * guest an exit of its own.
 */
static void vcpu_deliver(struct kvmpfm_vcpu *vcpu, bool throttle)
{
	struct kvmpfm_vm *vm = vcpu->vm;
	struct pfm_where where = { .past = vcpu->past };
	u32 notify_vcpu = vm->notify_vcpu;
	u64 wraps[PFM_PMD_BV], lost;
	bool held;

	vm->notify_vcpu = vcpu->index;
	if (throttle && kvmpfm_vm_throttled(vm)) {
		kvmpfm_hold_interrupted(vcpu);
		/* a timer of an earlier throttling brought us here */
		if (vcpu->held)
			kvmpfm_throttle_timer_arm(vcpu);
	} else {
		vcpu->held = false;
		if (collect_wraps(vcpu, wraps, &held)) {
			kvmpfm_ovfl_count(vm);
			where.ip = vcpu_sample_ip(vcpu);
			where.kernel = guest_ip_kernel(where.ip);
			lost = pfm_engine_overflow(vm->engine, vcpu->index,
						   wraps, &where);
			if (held)
				vm->throttled_overflows += lost;
			else
				vm->late_overflows += lost;
		}
	}
	if (atomic_xchg(&vcpu->pending_timer, 0))
		pfm_engine_timer(vm->engine, vcpu->index);
	host_limits_deliver(vcpu);
	vm->notify_vcpu = notify_vcpu;
}

/*
 * From the vCPU's own thread (its DOORBELL), or with that thread stopped
 * outside KVM_RUN (migration's save): never from another running vCPU.
 */
void kvmpfm_vcpu_sync(struct kvmpfm_vcpu *vcpu)
{
	vcpu_deliver(vcpu, false);
}

/*
 * In the vCPU thread, before it enters the guest again (or returns to
 * user mode): deliver what its interrupts and timer left pending. The
 * file reference taken when this was queued keeps the VM alive.
 */
void kvmpfm_vcpu_task_work(struct callback_head *head)
{
	struct kvmpfm_vcpu *vcpu = container_of(head, struct kvmpfm_vcpu,
						task_work);
	struct kvmpfm_vm *vm = vcpu->vm;
	struct file *file = vm->file;

	/* before the delivery: a wrap during it queues the work again */
	atomic_set(&vcpu->task_work_queued, 0);
	mutex_lock(&vm->lock);
	if (!vm->dying && vm->engine) {
		vm->deferred_runs++;
		vcpu_deliver(vcpu, true);
		kvmpfm_vcpu_release_kept(vcpu);
	}
	mutex_unlock(&vm->lock);
	fput(file);
}

/*
 * From NMI or IRQ context, on the CPU that found the overflow or timer:
 * hand the rest to the vCPU thread (see kvmpfm.h). The file reference
 * fails only while the binding is being released, which syncs this
 * irq_work and delivers nothing more.
 */
void kvmpfm_vcpu_irq_work(struct irq_work *work)
{
	struct kvmpfm_vcpu *vcpu = container_of(work, struct kvmpfm_vcpu,
						irq_work);
	struct file *file = vcpu->vm->file;
	enum task_work_notify_mode mode;

	if (!vcpu->task || atomic_xchg(&vcpu->task_work_queued, 1))
		return;
	if (!kvmpfm_file_get_live(&file)) {
		atomic_set(&vcpu->task_work_queued, 0);
		return;
	}
	/*
	 * Inside KVM_RUN on this CPU (an overflow interrupted the guest, or
	 * the host on its behalf): KVM runs the task work before it enters
	 * the guest again, without leaving KVM_RUN; should the vCPU halt
	 * first, KVM_REQ_UNBLOCK has it run the work and halt again, so that
	 * a notification due is not held until the next guest interrupt.
	 * Anywhere else (a timer while the thread sleeps in QEMU, say) the
	 * thread must be woken, or the work and the file reference would
	 * wait for its next return to user mode: a signal-like kick, which
	 * restarts its syscall (or makes KVM_RUN return EINTR once).
	 */
	mode = TWA_SIGNAL;
	if (kvmpfm_vcpu_loaded(vcpu)) {
		mode = TWA_RESUME;
		kvmpfm_vcpu_unblock(vcpu);
	}
	if (task_work_add(vcpu->task, &vcpu->task_work, mode)) {
		/* the vCPU thread is exiting: it will not enter the guest */
		atomic_set(&vcpu->task_work_queued, 0);
		fput(file);
	}
}
