// SPDX-License-Identifier: GPL-2.0
/*
 * The perf_event backend of the engine.
 *
 * Each open engine counter is one host perf event bound to the vCPU
 * thread (or, for two hypervisor events KVM already counts, a polled
 * value). The engine sees a KVMPFM_COUNTER_WIDTH-bit counter:
 *
 *   value = written + (raw - base) - wraps * 2^width
 *
 * where raw is perf's 64-bit count, (written, base) the last write and
 * wraps the wraps delivered to the engine since.
 * The perf sample period is set so that perf interrupts when value wraps;
 * perf may interrupt earlier (hardware periods are clamped), so the
 * deferred work checks raw against next_wrap before reporting a wrap.
 * Until a wrap is reported the value holds at all-ones: the engine never
 * sees a counter wrap without its overflow.
 *
 * Overflow path: perf handler (NMI/IRQ) -> pending bit + irq_work ->
 * the vCPU thread's task work (vm->lock) -> pfm_engine_overflow().
 *
 * Throttling: a VM's overflows are counted per KVMPFM_THROTTLE_WINDOW_NS
 * against max_overflow_rate. Once a window's budget is used up, every
 * counter of the VM its vCPU thread arms is held until the window ends:
 * armed with no period to speak of, so that it counts without
 * interrupting (as perf stops a throttled event, but the count goes on).
 * The vCPU's throttle_timer then has its thread re-arm them; a held
 * counter that passed its wrap meanwhile delivers that one overflow, and
 * the periods it skipped go to the engine as lost samples (the guest's
 * buffer header counts them). Overflow set switching is throttled with
 * the rest: a switch happens only on a delivered overflow.
 */
#include <linux/trace_events.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include "kvmpfm.h"

#define WRAP		(1ULL << KVMPFM_COUNTER_WIDTH)
#define WMASK		(WRAP - 1)
/* x86 hardware counters take at most 47-bit periods */
#define MAX_HW_PERIOD	((1ULL << 47) - 1)


/* architectural events the guest can program, as perf generic events */
static const struct {
	u8 vendor;		/* PVPFM_VENDOR_* */
	u16 event_select;
	u8 unit_mask;
	u32 hw_id;
} arch_events[] = {
	{ PVPFM_VENDOR_AMD, 0x76, 0x00, PERF_COUNT_HW_CPU_CYCLES },
	{ PVPFM_VENDOR_AMD, 0xc0, 0x00, PERF_COUNT_HW_INSTRUCTIONS },
	{ PVPFM_VENDOR_AMD, 0xc2, 0x00, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ PVPFM_VENDOR_AMD, 0xc3, 0x00, PERF_COUNT_HW_BRANCH_MISSES },
	{ PVPFM_VENDOR_INTEL, 0x3c, 0x00, PERF_COUNT_HW_CPU_CYCLES },
	{ PVPFM_VENDOR_INTEL, 0xc0, 0x00, PERF_COUNT_HW_INSTRUCTIONS },
	{ PVPFM_VENDOR_INTEL, 0x3c, 0x01, PERF_COUNT_HW_BUS_CYCLES },
	{ PVPFM_VENDOR_INTEL, 0x2e, 0x4f, PERF_COUNT_HW_CACHE_REFERENCES },
	{ PVPFM_VENDOR_INTEL, 0x2e, 0x41, PERF_COUNT_HW_CACHE_MISSES },
	{ PVPFM_VENDOR_INTEL, 0xc4, 0x00, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ PVPFM_VENDOR_INTEL, 0xc5, 0x00, PERF_COUNT_HW_BRANCH_MISSES },
};

/* Intel fixed counters 0, 1, 2 */
static const u32 fixed_events[] = {
	PERF_COUNT_HW_INSTRUCTIONS,
	PERF_COUNT_HW_CPU_CYCLES,
	PERF_COUNT_HW_REF_CPU_CYCLES,
};

/* how each virtual PMD is backed */
enum kvmpfm_vsrc { VSRC_SOFTWARE, VSRC_TP_EXIT, VSRC_TP_WAKEUP,
		   VSRC_TP_PAGE_FAULT, VSRC_POLL };

static const struct {
	u16 pmd;
	enum kvmpfm_vsrc src;
	u64 config;		/* SOFTWARE: event; POLL: KVMPFM_POLL_* */
} virtual_events[] = {
	{ PVPFM_VPMD_VCPU_RUN_NS, VSRC_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ PVPFM_VPMD_VM_EXITS, VSRC_TP_EXIT, 0 },
	{ PVPFM_VPMD_HALT_EXITS, VSRC_TP_WAKEUP, 0 },
	{ PVPFM_VPMD_HOST_PREEMPT, VSRC_POLL, KVMPFM_POLL_PREEMPT },
	{ PVPFM_VPMD_STEAL_NS, VSRC_POLL, KVMPFM_POLL_STEAL },
	{ PVPFM_VPMD_HOST_PAGE_FAULTS, VSRC_TP_PAGE_FAULT, 0 },
};

static int tracepoint_attr(struct trace_event_file *file,
			   struct perf_event_attr *attr);

/*
 * The host tracepoints backing virtual PMDs, and one disabled event per
 * tracepoint that keeps its probe registered, so that set switches and
 * context switches that close the last counting event do not unregister
 * it (code patching and an RCU grace period each time). One set for the
 * host, held while any VM is bound: not one per binding.
 */
static struct {
	struct mutex lock;
	unsigned int users;		/* bound VMs; the rest under @lock */
	struct trace_event_file *exit, *wakeup, *page_fault;
	struct perf_event *keepers[3];
} tracepoints = { .lock = __MUTEX_INITIALIZER(tracepoints.lock) };

static struct perf_event *tracepoint_keeper(struct trace_event_file *file)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .disabled = 1 };
	struct perf_event *event;

	if (tracepoint_attr(file, &attr))
		return NULL;
	/* the module's, not a VM's: not in the counter count */
	event = perf_event_create_kernel_counter(&attr, 0, NULL, NULL, NULL);
	return IS_ERR(event) ? NULL : event;
}

static void tracepoint_put(struct trace_event_file **file)
{
	if (!IS_ERR_OR_NULL(*file))
		trace_put_event_file(*file);
	*file = NULL;
}

/* at bind: the host's tracepoints, looked up by the first VM bound */
void kvmpfm_tracepoints_get(struct kvmpfm_vm *vm)
{
	mutex_lock(&tracepoints.lock);
	if (!tracepoints.users++) {
		/* missing ones only make their virtual PMDs unavailable */
		tracepoints.exit = trace_get_event_file(NULL, "kvm", "kvm_exit");
		tracepoints.wakeup = trace_get_event_file(NULL, "kvm",
							  "kvm_vcpu_wakeup");
		tracepoints.page_fault = trace_get_event_file(NULL, "kvm",
							      "kvm_page_fault");
		tracepoints.keepers[0] = tracepoint_keeper(tracepoints.exit);
		tracepoints.keepers[1] = tracepoint_keeper(tracepoints.wakeup);
		tracepoints.keepers[2] =
			tracepoint_keeper(tracepoints.page_fault);
	}
	vm->tp_exit = tracepoints.exit;
	vm->tp_wakeup = tracepoints.wakeup;
	vm->tp_page_fault = tracepoints.page_fault;
	vm->tracepoints_held = true;
	mutex_unlock(&tracepoints.lock);
}

/* at release, once @vm's counters are closed; released with the last VM */
void kvmpfm_tracepoints_put(struct kvmpfm_vm *vm)
{
	unsigned int i;

	if (!vm->tracepoints_held)
		return;
	vm->tracepoints_held = false;
	vm->tp_exit = NULL;
	vm->tp_wakeup = NULL;
	vm->tp_page_fault = NULL;
	mutex_lock(&tracepoints.lock);
	if (!--tracepoints.users) {
		for (i = 0; i < ARRAY_SIZE(tracepoints.keepers); i++) {
			if (tracepoints.keepers[i])
				perf_event_release_kernel(tracepoints.keepers[i]);
			tracepoints.keepers[i] = NULL;
		}
		tracepoint_put(&tracepoints.exit);
		tracepoint_put(&tracepoints.wakeup);
		tracepoint_put(&tracepoints.page_fault);
	}
	mutex_unlock(&tracepoints.lock);
}

u8 kvmpfm_host_vendor(void)
{
	return boot_cpu_data.x86_vendor == X86_VENDOR_INTEL ?
	       PVPFM_VENDOR_INTEL : PVPFM_VENDOR_AMD;
}

/* whose encoding the guest's PMC value is */
static u8 guest_vendor(const struct pfm_event *ev)
{
	return pvpfm_pers_desc(ev->personality)->vendor;
}

/* the admin's alias for @ev, if any */
static const struct kvmpfm_event_map_entry *
alias_find(struct kvmpfm_vm *vm, const struct pfm_event *ev)
{
	u32 kind = ev->kind == PFM_EVK_FIXED ? KVMPFM_EVK_FIXED :
					       KVMPFM_EVK_GENERIC;
	u16 event = ev->kind == PFM_EVK_FIXED ? ev->code : ev->event_select;
	u8 umask = ev->kind == PFM_EVK_FIXED ? 0 : ev->unit_mask;
	u32 i;

	for (i = 0; i < vm->nr_aliases; i++)
		if (vm->aliases[i].guest_kind == kind &&
		    vm->aliases[i].guest_event == event &&
		    vm->aliases[i].guest_umask == umask)
			return &vm->aliases[i];
	return NULL;
}

/*
 * The host event @alias counts, as an event filter names events: a
 * generic event select and unit mask in @ev's (the guest's) encoding.
 * 0: *@event and *@umask set; 1: a software event, no PMU event at all;
 * -ENOENT: a PMU event with no such encoding (a cache event, a raw event
 * of the other vendor, a generic event with no architectural encoding).
 */
int kvmpfm_alias_encoding(const struct pfm_event *ev,
			  const struct kvmpfm_event_map_entry *alias,
			  u16 *event, u8 *umask)
{
	u8 vendor = guest_vendor(ev);
	unsigned int i;

	switch (alias->host_type) {
	case PERF_TYPE_SOFTWARE:
		return 1;
	case PERF_TYPE_HARDWARE:
		for (i = 0; i < ARRAY_SIZE(arch_events); i++) {
			if (arch_events[i].vendor == vendor &&
			    arch_events[i].hw_id == alias->host_config) {
				*event = arch_events[i].event_select;
				*umask = arch_events[i].unit_mask;
				return 0;
			}
		}
		return -ENOENT;
	case PERF_TYPE_RAW:
		if (vendor != kvmpfm_host_vendor())
			return -ENOENT;
		*event = alias->host_config & 0xff;
		/* AMD's event select goes on in bits 32-35 */
		if (vendor == PVPFM_VENDOR_AMD)
			*event |= (alias->host_config >> 24) & 0xf00;
		*umask = (alias->host_config >> 8) & 0xff;
		return 0;
	}
	return -ENOENT;
}

/* a PMU event for @ev counts the guest only, at the PMC's USR/OS levels */
static void guest_levels(const struct pfm_event *ev,
			 struct perf_event_attr *attr)
{
	attr->exclude_host = 1;
	attr->exclude_user = !ev->usr;
	attr->exclude_kernel = !ev->os;
}

static int translate_hw(struct kvmpfm_vm *vm, const struct pfm_event *ev,
			struct perf_event_attr *attr)
{
	const struct kvmpfm_event_map_entry *alias = alias_find(vm, ev);
	unsigned int i;

	if (alias) {
		attr->type = alias->host_type;
		attr->config = alias->host_config;
		/*
		 * A PMU event (hardware, cache, raw) counts the guest only, in
		 * the guest's privilege levels: the PMU filters on the CPL the
		 * guest runs at, as for an event that is not aliased. A
		 * software event has no host/guest split (only a privileged
		 * caller may map one, set_event_map()) and no guest CPL: the
		 * vCPU thread is in host kernel mode whatever the guest runs,
		 * so it counts both levels and the PMC's USR/OS bits are moot.
		 */
		if (alias->host_type == PERF_TYPE_HARDWARE ||
		    alias->host_type == PERF_TYPE_HW_CACHE ||
		    alias->host_type == PERF_TYPE_RAW)
			guest_levels(ev, attr);
		return 0;
	}
	guest_levels(ev, attr);
	if (ev->kind == PFM_EVK_FIXED) {
		if (ev->code >= ARRAY_SIZE(fixed_events))
			return -ENOENT;
		attr->type = PERF_TYPE_HARDWARE;
		attr->config = fixed_events[ev->code];
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(arch_events); i++) {
		if (arch_events[i].vendor == guest_vendor(ev) &&
		    arch_events[i].event_select == ev->event_select &&
		    arch_events[i].unit_mask == ev->unit_mask &&
		    !ev->edge && !ev->invert && !ev->counter_mask) {
			attr->type = PERF_TYPE_HARDWARE;
			attr->config = arch_events[i].hw_id;
			return 0;
		}
	}
	/* raw encodings only mean the same thing on the same vendor */
	if (guest_vendor(ev) != kvmpfm_host_vendor())
		return -ENOENT;
	attr->type = PERF_TYPE_RAW;
	attr->config = ev->pmc_value & (0xffffULL | BIT_ULL(18) | BIT_ULL(23) |
					(0xffULL << 24) | (0xfULL << 32));
	return 0;
}

static int tracepoint_attr(struct trace_event_file *file,
			   struct perf_event_attr *attr)
{
	if (IS_ERR_OR_NULL(file))
		return -ENOENT;
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = file->event_call->event.type;
	return 0;
}

/* perf attributes for @ev, or a polled source in *@poll */
static int translate(struct kvmpfm_vm *vm, const struct pfm_event *ev,
		     struct perf_event_attr *attr, int *poll)
{
	unsigned int i;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	*poll = KVMPFM_POLL_NONE;
	if (ev->kind != PFM_EVK_VIRTUAL)
		return translate_hw(vm, ev, attr);

	for (i = 0; i < ARRAY_SIZE(virtual_events); i++) {
		if (virtual_events[i].pmd != ev->code)
			continue;
		switch (virtual_events[i].src) {
		case VSRC_SOFTWARE:
			attr->type = PERF_TYPE_SOFTWARE;
			attr->config = virtual_events[i].config;
			return 0;
		case VSRC_TP_EXIT:
			return tracepoint_attr(vm->tp_exit, attr);
		case VSRC_TP_WAKEUP:
			return tracepoint_attr(vm->tp_wakeup, attr);
		case VSRC_TP_PAGE_FAULT:
			return tracepoint_attr(vm->tp_page_fault, attr);
		case VSRC_POLL:
			*poll = virtual_events[i].config;
			return 0;
		}
	}
	return -ENOENT;
}

static bool is_hw(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_HARDWARE || attr->type == PERF_TYPE_RAW;
}

/*
 * Whether the host can count @ev: translated, and for hardware events
 * accepted by the host PMU (probed on the calling thread, never counted).
 * Returns 1 for an event the admin's map marks emulated.
 */
static int kvmpfm_event_check(void *be, const struct pfm_event *ev)
{
	const struct kvmpfm_event_map_entry *alias = NULL;
	struct kvmpfm_vm *vm = kvmpfm_be_vm(be);
	struct perf_event_attr attr;
	struct perf_event *probe;
	int poll, ret;

	if (ev->kind != PFM_EVK_VIRTUAL)
		alias = alias_find(vm, ev);
	if (!kvmpfm_filters_allow(vm, ev, alias))
		return -EACCES;
	/* the host admin's policy (kvmpfm_main.c), not a filter of the VM's */
	if (ev->kind == PFM_EVK_VIRTUAL &&
	    ev->code == PVPFM_VPMD_HOST_PAGE_FAULTS &&
	    !READ_ONCE(kvmpfm_allow_host_page_faults))
		return -ENOENT;
	ret = translate(vm, ev, &attr, &poll);
	if (ret)
		return ret;
	if (poll || !is_hw(&attr))
		goto out;
	attr.disabled = 1;
	probe = perf_event_create_kernel_counter(&attr, -1, current, NULL, NULL);
	if (IS_ERR(probe))
		return -ENOENT;
	perf_event_release_kernel(probe);
out:
	return alias && (alias->flags & KVMPFM_MAP_EMULATED) ? 1 : 0;
}

static u64 poll_read(struct kvmpfm_counter *kc)
{
	struct kvmpfm_vcpu *vcpu = kc->vcpu;

	switch (kc->poll) {
	case KVMPFM_POLL_PREEMPT:
		return kvmpfm_vcpu_preemptions(vcpu);
	case KVMPFM_POLL_STEAL:
		return vcpu->task->sched_info.run_delay;
	}
	return 0;
}

/*
 * Counter operations from outside the vCPU thread (DOORBELL of another
 * vCPU, teardown) reach an event that may be active on another CPU: perf
 * then makes a cross-CPU call, which takes that vCPU out of the guest.
 * Counted, so that the per-sample path can be shown to make none.
 */
static bool remote_op(struct kvmpfm_counter *kc)
{
	if (kc->vcpu->task == current)
		return false;
	kc->vcpu->vm->remote_counter_ops++;
	return true;
}

/* perf's 64-bit count (or the polled value) and its times */
static u64 raw_read(struct kvmpfm_counter *kc, u64 *enabled, u64 *running)
{
	u64 en = 0, run = 0, raw;

	if (kc->event) {
		/* from the vCPU thread, perf reads it on this CPU */
		remote_op(kc);
		raw = perf_event_read_value(kc->event, &en, &run);
	} else {
		raw = kc->poll_acc;
		if (kc->poll_enabled)
			raw += poll_read(kc) - kc->poll_start;
	}
	/* times since the counter was opened (a kept event has a past) */
	if (enabled)
		*enabled = en - kc->enabled_base;
	if (running)
		*running = run - kc->running_base;
	return raw;
}

/* whether the VM is over its overflow budget; vm->lock held */
static bool vm_throttled(struct kvmpfm_vm *vm)
{
	return vm->throttle_until && ktime_get_ns() < vm->throttle_until;
}

static enum hrtimer_restart throttle_timer_fn(struct hrtimer *t)
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
static void throttle_timer_arm(struct kvmpfm_vcpu *vcpu)
{
	vcpu->held = true;
	if (!hrtimer_active(&vcpu->throttle_timer))
		hrtimer_start(&vcpu->throttle_timer,
			      ns_to_ktime(vcpu->vm->throttle_until),
			      HRTIMER_MODE_ABS_PINNED);
}

static void period_arm(struct kvmpfm_counter *kc, u64 raw)
{
	u64 period = kc->next_wrap - raw;

	if (!kc->event)
		return;
	kc->held = vm_throttled(kc->vcpu->vm);
	if (kc->held) {
		/* no interrupt before the throttling ends (see the top) */
		period = WRAP;
		throttle_timer_arm(kc->vcpu);
	}
	if (is_hw(&kc->event->attr) && period > MAX_HW_PERIOD)
		period = MAX_HW_PERIOD;
	/* from the vCPU thread, perf changes it on this CPU */
	remote_op(kc);
	perf_event_period(kc->event, period ? period : 1);
}

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

static void kvmpfm_overflow(struct perf_event *event,
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
	set_bit(kc->pmd, vcpu->pending_pmds);
	irq_work_queue(&vcpu->irq_work);
}

/*
 * Set switches close one set's counters and open the next's, every few
 * ms. Creating a host perf event costs far more than enabling one, and
 * it would be paid in the vCPU thread each time: so a closed counter's
 * event is kept, disabled, on its vCPU (at most KVMPFM_KEPT_MAX, the
 * oldest released first), and the next open of the same event takes it
 * back. vm->lock held.
 */
static struct kvmpfm_counter *kept_take(struct kvmpfm_vcpu *vcpu,
					const struct perf_event_attr *attr)
{
	struct kvmpfm_counter *kc;
	u32 i;

	for (i = 0; i < vcpu->nr_kept; i++) {
		kc = vcpu->kept[i];
		if (memcmp(&kc->attr, attr, sizeof(*attr)))
			continue;
		memmove(&vcpu->kept[i], &vcpu->kept[i + 1],
			(vcpu->nr_kept - i - 1) * sizeof(vcpu->kept[0]));
		vcpu->nr_kept--;
		return kc;
	}
	return NULL;
}

static void counter_release(struct kvmpfm_counter *kc)
{
	if (kc->event) {
		perf_event_release_kernel(kc->event);
		kvmpfm_account(&kvmpfm_nr_events, -1);
	}
	/* a handler on the vCPU's CPU may still hold it: see the struct */
	kvmpfm_free_rcu(kc, rcu);
}

static void kept_put(struct kvmpfm_vcpu *vcpu, struct kvmpfm_counter *kc)
{
	remote_op(kc);
	perf_event_disable(kc->event);
	if (vcpu->nr_kept == KVMPFM_KEPT_MAX) {
		counter_release(vcpu->kept[0]);
		memmove(&vcpu->kept[0], &vcpu->kept[1],
			(KVMPFM_KEPT_MAX - 1) * sizeof(vcpu->kept[0]));
		vcpu->nr_kept--;
	}
	vcpu->kept[vcpu->nr_kept++] = kc;
}

/*
 * After an engine call: a vCPU with no counter open has no set to switch
 * back to, so it keeps nothing (nothing is held for a context that is
 * gone or out). Also at teardown, once the engine closed everything.
 */
void kvmpfm_vcpu_release_kept(struct kvmpfm_vcpu *vcpu)
{
	if (vcpu->nr_open)
		return;
	while (vcpu->nr_kept)
		counter_release(vcpu->kept[--vcpu->nr_kept]);
	/*
	 * Teardown: nothing arms the throttle timer once the VM is dying,
	 * and the irq_work it may have raised is synced after this.
	 */
	if (vcpu->vm->dying && vcpu->throttle_timer_ready)
		hrtimer_cancel(&vcpu->throttle_timer);
}

static int kvmpfm_counter_open(void *be, struct pfm_counter *c)
{
	struct kvmpfm_vm *vm = kvmpfm_be_vm(be);
	struct kvmpfm_vcpu *vcpu = &vm->vcpus[c->vcpu];
	struct perf_event_attr attr;
	struct kvmpfm_counter *kc;
	int ret, poll;

	if (!vcpu->task)
		return -ENODEV;
	/* here, not at bind: no counter, nothing to hold (vm->lock held) */
	if (!vcpu->throttle_timer_ready) {
		hrtimer_setup(&vcpu->throttle_timer, throttle_timer_fn,
			      CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED);
		vcpu->throttle_timer_ready = true;
	}
	ret = translate(vm, &c->ev, &attr, &poll);
	if (ret)
		return ret;
	if (!poll) {
		attr.disabled = 1;
		attr.sample_period = is_hw(&attr) ? MAX_HW_PERIOD : WRAP;
	}
	kc = poll ? NULL : kept_take(vcpu, &attr);
	if (kc) {
		/* counts and times go on from where the event is now */
		kc->enabled_base = 0;
		kc->running_base = 0;
		kc->base = raw_read(kc, &kc->enabled_base, &kc->running_base);
		kc->written = 0;
		kc->wraps = 0;
		goto out;
	}
	kc = kvmpfm_zalloc(sizeof(*kc));
	if (!kc)
		return -ENOMEM;
	kc->vcpu = vcpu;
	kc->poll = poll;
	kc->attr = attr;
	if (!kc->poll) {
		kc->event = perf_event_create_kernel_counter(&attr, -1,
					vcpu->task, kvmpfm_overflow, kc);
		if (IS_ERR(kc->event)) {
			ret = PTR_ERR(kc->event);
			kvmpfm_free(kc);
			return ret;
		}
		kvmpfm_account(&kvmpfm_nr_events, 1);
	}
out:
	kc->pmd = c->ev.pmd;
	kc->next_wrap = kc->base + WRAP;
	c->priv = kc;
	vcpu->ctr_by_pmd[c->ev.pmd] = kc;
	vcpu->nr_open++;
	return 0;
}

static void kvmpfm_counter_close(void *be, struct pfm_counter *c)
{
	struct kvmpfm_counter *kc = c->priv;
	struct kvmpfm_vcpu *vcpu = kc->vcpu;

	/* an overflow of this counter still pending finds no counter */
	vcpu->ctr_by_pmd[c->ev.pmd] = NULL;
	clear_bit(c->ev.pmd, vcpu->pending_pmds);
	c->priv = NULL;
	/* a set switch opens the next set before the engine call ends */
	if (!--vcpu->nr_open)
		vcpu->vm->kept_trim_due = true;
	if (kc->event && !vcpu->vm->dying)
		kept_put(vcpu, kc);
	else
		counter_release(kc);
}

static void kvmpfm_counter_write(void *be, struct pfm_counter *c, u64 value)
{
	struct kvmpfm_counter *kc = c->priv;
	u64 raw = raw_read(kc, NULL, NULL);

	kc->written = value & WMASK;
	kc->base = raw;
	kc->wraps = 0;
	kc->next_wrap = raw + (WRAP - kc->written);
	period_arm(kc, raw);
}

/*
 * When the host ran the event only part of the time it was enabled (perf
 * multiplexing, other users' pinned events), the count is scaled up by
 * enabled/running, and the times go to the engine (getinfo shows them).
 */
static u64 kvmpfm_counter_read(void *be, struct pfm_counter *c,
			       struct pfm_counter_time *t)
{
	struct kvmpfm_counter *kc = c->priv;
	u64 enabled, running, raw, delta, value;

	raw = raw_read(kc, &enabled, &running);
	if (t) {
		t->enabled_ns = enabled;
		t->running_ns = running;
	}
	if (raw >= kc->next_wrap)
		return WMASK;	/* the wrap is being delivered */
	delta = raw - kc->base;
	if (running && running < enabled)
		delta = mul_u64_u64_div_u64(delta, enabled, running);
	value = kc->written + delta - kc->wraps * WRAP;
	/* scaling must not run ahead of a wrap not yet delivered */
	return min(value, WMASK);
}

static void kvmpfm_counter_enable(void *be, struct pfm_counter *c)
{
	struct kvmpfm_counter *kc = c->priv;

	if (kc->event) {
		remote_op(kc);
		perf_event_enable(kc->event);
	} else if (!kc->poll_enabled) {
		kc->poll_start = poll_read(kc);
		kc->poll_enabled = true;
	}
}

static void kvmpfm_counter_disable(void *be, struct pfm_counter *c)
{
	struct kvmpfm_counter *kc = c->priv;

	if (kc->event) {
		remote_op(kc);
		perf_event_disable(kc->event);
	} else if (kc->poll_enabled) {
		kc->poll_acc += poll_read(kc) - kc->poll_start;
		kc->poll_enabled = false;
	}
}

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

/*
 * Which of the vCPU's open counters wrapped. Every open counter is read,
 * not only those whose interrupt arrived: perf may interrupt late (e.g.
 * task-clock on its hrtimer tick) and a wrap must reach the engine before
 * any command reads the PMD. Early interrupts just re-arm the period, as
 * does the end of a throttling for the counters it held. *@lost: the
 * periods held counters went past their wrap (the engine resets the PMD
 * on its overflow, so each whole period more is a sample not taken).
 */
static bool collect_wraps(struct kvmpfm_vcpu *vcpu, u64 *wraps, u64 *lost)
{
	struct kvmpfm_counter *kc;
	bool interrupted;
	unsigned int pmd;
	u64 raw;

	memset(wraps, 0, PFM_PMD_BV * sizeof(u64));
	*lost = 0;
	for (pmd = 0; pmd < PFM_MAX_PMDS; pmd++) {
		interrupted = test_and_clear_bit(pmd, vcpu->pending_pmds);
		kc = vcpu->ctr_by_pmd[pmd];
		if (!kc)
			continue;
		raw = raw_read(kc, NULL, NULL);
		if (raw >= kc->next_wrap) {
			if (kc->held)
				*lost += div64_u64(raw - kc->next_wrap,
						   WRAP - kc->written);
			kc->next_wrap += WRAP;
			kc->wraps++;
			wraps[pmd / 64] |= BIT_ULL(pmd % 64);
		} else if (!interrupted && !kc->held) {
			continue;
		}
		period_arm(kc, raw);
	}
	return memchr_inv(wraps, 0, PFM_PMD_BV * sizeof(u64));
}

/* one overflow handled for @vm: against its window's budget */
static void ovfl_count(struct kvmpfm_vm *vm)
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
static void hold_interrupted(struct kvmpfm_vcpu *vcpu)
{
	struct kvmpfm_counter *kc;
	unsigned int pmd;

	for_each_set_bit(pmd, vcpu->pending_pmds, PFM_MAX_PMDS) {
		clear_bit(pmd, vcpu->pending_pmds);
		kc = vcpu->ctr_by_pmd[pmd];
		if (kc && !kc->held)
			period_arm(kc, raw_read(kc, NULL, NULL));
	}
}

/*
 * Deliver what the vCPU's interrupts and timer left pending; vm->lock
 * held. @throttle: from the vCPU's own interrupts, which the VM's budget
 * bounds; a guest call (DOORBELL) delivers whatever is pending, as it must
 * see every wrap its counters made, and costs the guest an exit of its own.
 */
static void vcpu_deliver(struct kvmpfm_vcpu *vcpu, bool throttle)
{
	struct kvmpfm_vm *vm = vcpu->vm;
	struct pfm_where where = { 0 };
	u32 notify_vcpu = vm->notify_vcpu;
	u64 wraps[PFM_PMD_BV];

	vm->notify_vcpu = vcpu->index;
	if (throttle && vm_throttled(vm)) {
		hold_interrupted(vcpu);
		/* a timer of an earlier throttling brought us here */
		if (vcpu->held)
			throttle_timer_arm(vcpu);
	} else {
		vcpu->held = false;
		if (collect_wraps(vcpu, wraps, &where.lost)) {
			ovfl_count(vm);
			vm->throttled_overflows += where.lost;
			where.ip = vcpu_sample_ip(vcpu);
			where.kernel = guest_ip_kernel(where.ip);
			pfm_engine_overflow(vm->engine, vcpu->index, wraps,
					    &where);
		}
	}
	if (atomic_xchg(&vcpu->pending_timer, 0))
		pfm_engine_timer(vm->engine, vcpu->index);
	vm->notify_vcpu = notify_vcpu;
}

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

/* what @c counts, guest and host side, for the operator's snapshot */
void kvmpfm_counter_describe(struct kvmpfm_vm *vm, const struct pfm_counter *c,
			     struct kvmpfm_snap_event *out)
{
	const struct kvmpfm_counter *kc = c->priv;
	const struct kvmpfm_event_map_entry *alias;

	out->pmd = c->ev.pmd;
	switch (c->ev.kind) {
	case PFM_EVK_GENERIC:
		out->guest_kind = KVMPFM_EVK_GENERIC;
		out->guest_event = c->ev.event_select;
		out->guest_umask = c->ev.unit_mask;
		break;
	case PFM_EVK_FIXED:
		out->guest_kind = KVMPFM_EVK_FIXED;
		out->guest_event = c->ev.code;
		break;
	case PFM_EVK_VIRTUAL:
		out->guest_kind = KVMPFM_EVK_VIRTUAL;
		out->guest_event = c->ev.code;
		break;
	}
	if (c->ev.kind != PFM_EVK_VIRTUAL) {
		alias = alias_find(vm, &c->ev);
		if (alias && (alias->flags & KVMPFM_MAP_EMULATED))
			out->flags |= KVMPFM_SNAP_EV_EMULATED;
	}
	if (!kc)
		return;
	if (!kc->event) {
		out->flags |= KVMPFM_SNAP_EV_POLLED;
		return;
	}
	out->host_type = kc->attr.type;
	out->host_config = kc->attr.config;
	/*
	 * perf's times as of the event's last update (its last schedule in
	 * or out, or read): reading them fresh would be a cross-CPU call
	 * into the running vCPU, once per scrape.
	 */
	out->time_enabled = READ_ONCE(kc->event->total_time_enabled) -
			    kc->enabled_base;
	out->time_running = READ_ONCE(kc->event->total_time_running) -
			    kc->running_base;
}
