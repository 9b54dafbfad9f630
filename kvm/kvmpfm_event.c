// SPDX-License-Identifier: GPL-2.0
/*
 * Event translation: which host event counts a guest's event.
 *
 * The engine decodes a guest's PMC value into a struct pfm_event; this
 * file makes it a perf_event_attr. A PMU event is the admin's alias for
 * it if the VM's event map has one, else an architectural event as
 * perf's generic event, an Intel fixed counter, or the raw encoding when
 * guest and host are the same vendor; it counts the guest only, at the
 * PMC's USR/OS levels. A virtual PMD is a software event, a host
 * tracepoint (kvmpfm_tracepoints.c) or a value polled from KVM. Before
 * any of that, event_check asks the VM's event filters (kvmpfm_filter.c)
 * and the admin's host page-fault policy whether the event may be
 * counted at all; the filters name an aliased event by its host event
 * (kvmpfm_alias_encoding()).
 *
 * Locking: the tables here are constant. The VM's aliases and
 * tracepoints are read with vm->lock held (engine calls, the operator's
 * snapshot): the aliases are replaced under it (kvmpfm_vm.c), the
 * tracepoints set before the engine exists and cleared after it is gone.
 */
#include "kvmpfm.h"

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

/* how each virtual PMD (pvpfm_vpmd_table()) is backed */
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
/* every virtual PMD of the device ABI has its source here */
static_assert(ARRAY_SIZE(virtual_events) == PVPFM_VPMD_COUNT);

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
	attr->config = ev->pmc_value & PVPFM_EVTSEL_ENCODING;
	return 0;
}

/* perf attributes for @ev, or a polled source in *@poll */
int kvmpfm_event_translate(struct kvmpfm_vm *vm, const struct pfm_event *ev,
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
			return kvmpfm_tracepoint_attr(vm->tp_exit, attr);
		case VSRC_TP_WAKEUP:
			return kvmpfm_tracepoint_attr(vm->tp_wakeup, attr);
		case VSRC_TP_PAGE_FAULT:
			return kvmpfm_tracepoint_attr(vm->tp_page_fault, attr);
		case VSRC_POLL:
			*poll = virtual_events[i].config;
			return 0;
		}
	}
	return -ENOENT;
}

bool kvmpfm_attr_is_hw(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_HARDWARE || attr->type == PERF_TYPE_RAW;
}

/*
 * perf's error @err opening @attr for @task, as the engine takes it
 * (pfm_backend_ops): -EOPNOTSUPP when KVM's mediated vPMU holds the
 * host's PMU, any other EOPNOTSUPP -ENOENT, the rest as they are.
 *
 * While any VM with a mediated vPMU exists (KVM calls
 * perf_create_mediated_pmu() at the VM's first KVM_CREATE_VCPU), perf
 * refuses with EOPNOTSUPP every event that counts guests (exclude_guest
 * clear) on a PMU that can be mediated: each PMU event of ours, which
 * counts the guest only (exclude_host). EOPNOTSUPP has other causes, so
 * the refusal is the mediated vPMU's only if the same event counting
 * the host only opens (perf lets those through). The other way round,
 * our live PMU events make KVM's perf_create_mediated_pmu() fail with
 * EBUSY, and the VM's KVM_CREATE_VCPU with it: KVM's choice, which the
 * module cannot soften (doc/ADMIN.md, "Mediated vPMU").
 */
int kvmpfm_event_open_error(const struct perf_event_attr *attr,
			    struct task_struct *task, int err)
{
	struct perf_event_attr host_only;
	struct perf_event *probe;

	if (err != -EOPNOTSUPP)
		return err;
	if (!KVMPFM_PERF_MEDIATED_VPMU || !attr->exclude_host)
		return -ENOENT;
	host_only = *attr;
	host_only.exclude_host = 0;
	host_only.exclude_guest = 1;
	host_only.disabled = 1;
	host_only.sample_period = 0;
	probe = perf_event_create_kernel_counter(&host_only, -1, task, NULL,
						 NULL);
	if (IS_ERR(probe))
		return -ENOENT;
	perf_event_release_kernel(probe);
	atomic64_inc(&kvmpfm_total_host_mediated);
	return -EOPNOTSUPP;
}

/*
 * Whether the host can count @ev: translated, and for hardware events
 * accepted by the host PMU (probed on the calling thread, never counted).
 * Returns 1 for an event the admin's map marks emulated.
 */
int kvmpfm_event_check(void *be, const struct pfm_event *ev)
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
	ret = kvmpfm_event_translate(vm, ev, &attr, &poll);
	if (ret)
		return ret;
	if (poll || !kvmpfm_attr_is_hw(&attr))
		goto out;
	attr.disabled = 1;
	probe = perf_event_create_kernel_counter(&attr, -1, current, NULL, NULL);
	if (IS_ERR(probe)) {
		ret = kvmpfm_event_open_error(&attr, current, PTR_ERR(probe));
		return ret == -EOPNOTSUPP ? ret : -ENOENT;
	}
	perf_event_release_kernel(probe);
out:
	return alias && (alias->flags & KVMPFM_MAP_EMULATED) ? 1 : 0;
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
