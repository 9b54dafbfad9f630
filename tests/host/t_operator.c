// SPDX-License-Identifier: GPL-2.0
/*
 * t_operator: the operator's interface with real KVM VMs:
 * KVMPFM_SET_IDENTITY, KVMPFM_LIST_VMS, KVMPFM_GET_SNAPSHOT and
 * KVMPFM_SET_EVENT_FILTER, and host-tools/kvm-perfmon-stat reading them.
 *
 * Two VMs, named; each snapshot must say exactly what the calls made on
 * it did: contexts, events in use, calls by command, refusals by errno,
 * registers refused NOTAVAIL or by a filter. The VMM's filter and the
 * operator's each refuse what they name: an event passes only if both
 * allow it, the VMM can neither clear nor replace the operator's (on its
 * own binding, naming its own VM: EPERM without CAP_PERFMON), and an
 * alias of the VMM's event map is judged by the host event it counts too.
 * A counter already running goes on counting. Root or CAP_PERFMON only:
 * uid 65534 gets EPERM on a file opened as root. VM names are printable
 * UTF-8. A VM gone is gone from the list. The cost of one snapshot is
 * printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "hostlib.h"

#define SNAP_ROOM	(256 * 1024)

/* amd64 PERFSEL: the event with USR, OS, INT and EN set */
#define SEL(ev)		((uint64_t)(ev) | (1ULL << 16) | (1ULL << 17) | \
			 (1ULL << 20) | (1ULL << 22))

static struct hl_vm vm_a, vm_b;

static int set_name(struct hl_vm *vm, const char *name, uint8_t uuid_byte)
{
	struct kvmpfm_vm_identity id = { };

	snprintf(id.name, sizeof(id.name), "%s", name);
	memset(id.uuid, uuid_byte, sizeof(id.uuid));
	return HL_IOCTL(vm->pfm_fd, KVMPFM_SET_IDENTITY, &id);
}

/* the id of the VM named @name among those bound, 0 if none */
static uint64_t find_id(const char *name, void *buf)
{
	struct kvmpfm_snap_vm *s = buf;
	uint64_t ids[64];
	uint32_t size;
	int n, i;

	n = hl_list_vms(vm_a.pfm_fd, ids, 64);
	for (i = 0; i < n && i < 64; i++) {
		size = SNAP_ROOM;
		if (!hl_snapshot(vm_a.pfm_fd, ids[i], buf, &size) &&
		    !strcmp(s->identity.name, name))
			return ids[i];
	}
	return 0;
}

static const struct kvmpfm_snap_ctx *ctx_rec(const struct kvmpfm_snap_vm *s,
					     uint32_t i)
{
	return (const void *)((const char *)s + s->size +
			      s->nr_vcpus * s->vcpu_size + i * s->ctx_size);
}

static const struct kvmpfm_snap_event *ev_rec(const struct kvmpfm_snap_vm *s,
					      uint32_t i)
{
	return (const void *)((const char *)s + s->size +
			      s->nr_vcpus * s->vcpu_size +
			      s->nr_ctxs * s->ctx_size + i * s->event_size);
}

static const struct kvmpfm_snap_vcpu *vcpu_rec(const struct kvmpfm_snap_vm *s,
					       uint32_t i)
{
	return (const void *)((const char *)s + s->size + i * s->vcpu_size);
}

/* a filter of @kind events @ev[0..@nr) (exact event, any unit mask) */
static int filter_of(int fd, uint64_t vm_id, uint32_t action, uint32_t kind,
		     const uint16_t *ev, uint32_t nr)
{
	struct {
		struct kvmpfm_event_filter f;
		struct kvmpfm_filter_event e[4];
	} req = {
		.f = { .action = action, .nr = nr, .vm_id = vm_id },
	};
	uint32_t i;

	for (i = 0; i < nr && i < 4; i++) {
		req.e[i].guest_kind = kind;
		req.e[i].event = ev[i];
		req.e[i].event_mask = 0xffff;
	}
	return HL_IOCTL(fd, KVMPFM_SET_EVENT_FILTER, &req);
}

/* VM @vm_id's filter (@flags: KVMPFM_FILTER_OF_VMM) into @f, room @room */
static int get_filter(int fd, uint64_t vm_id, uint32_t flags,
		      struct kvmpfm_event_filter *f, uint32_t room)
{
	memset(f, 0, sizeof(*f) + room * sizeof(f->events[0]));
	f->vm_id = vm_id;
	f->flags = flags;
	f->nr = room;
	return HL_IOCTL(fd, KVMPFM_GET_EVENT_FILTER, f);
}

/* a filter of virtual PMD @vpmd (0: no entry) */
static int filter(int fd, uint64_t vm_id, uint32_t action, uint16_t vpmd)
{
	return filter_of(fd, vm_id, action, KVMPFM_EVK_VIRTUAL, &vpmd,
			 vpmd ? 1 : 0);
}

/* PMD @pmd written in set 0 of @ctx: the call's status and reg_flags */
static int write_vpmd(struct hl_vcpu *v, uint32_t ctx, uint16_t pmd,
		      uint32_t *flags)
{
	pfarg_pmd_t p;
	int ret;

	cb_pmd_init(&p, pmd, 0, 0);
	ret = cb_write_pmds(&v->cb, ctx, &p, 1);
	*flags = p.reg_flags;
	return ret;
}

/* names that are not printable UTF-8, each refused */
static const struct {
	const char *what, *name;
} bad_names[] = {
	{ "control_char", "bad\nname" },
	{ "invalid_byte_ff", "vm-\xff" },
	{ "truncated_sequence", "vm-\xc3" },
	{ "overlong_slash", "vm-\xc0\xaf" },
	{ "surrogate", "vm-\xed\xa0\x80" },
	{ "above_unicode", "vm-\xf4\x90\x80\x80" },
	{ "del", "vm-\x7f" },
	{ "c1_control", "vm-\xc2\x85" },
	{ "line_separator", "vm-\xe2\x80\xa8" },
	{ "bidi_override", "vm-\xe2\x80\xae" },
};

static void t_identity(void)
{
	struct kvmpfm_vm_identity id = { };
	char name[64];
	unsigned int i;

	for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		snprintf(name, sizeof(name), "identity_%s_einval",
			 bad_names[i].what);
		HL_EXPECT(name, set_name(&vm_b, bad_names[i].name, 0xbb),
			  -EINVAL);
	}
	/* UTF-8 beyond ASCII is a name like any other */
	HL_EXPECT("identity_utf8_accepted",
		  set_name(&vm_b, "vm-\xc3\xa9t\xc3\xa9-\xe2\x82\xac", 0xbb), 0);
	HL_EXPECT("identity_a", set_name(&vm_a, "vm-a", 0xaa), 0);
	HL_EXPECT("identity_b", set_name(&vm_b, "vm-b", 0xbb), 0);
	memset(id.name, 'x', sizeof(id.name));
	HL_EXPECT("identity_unterminated_einval",
		  HL_IOCTL(vm_b.pfm_fd, KVMPFM_SET_IDENTITY, &id), -EINVAL);
	memset(&id, 0, sizeof(id));
	id.reserved[1] = 1;
	HL_EXPECT("identity_reserved_einval",
		  HL_IOCTL(vm_b.pfm_fd, KVMPFM_SET_IDENTITY, &id), -EINVAL);
}

static void t_list_and_sizes(void *buf, uint64_t id_a, uint64_t id_b)
{
	struct kvmpfm_vm_list bad = { .reserved = 1 };
	struct kvmpfm_snapshot req = { .vm_id = id_a, .reserved = 1 };
	uint32_t size = 16;
	int n = hl_list_vms(vm_a.pfm_fd, NULL, 0);

	t_check(n == 2, "list_counts_two", "LIST_VMS with no room: %d", n);
	t_check(id_a && id_b && id_a != id_b, "list_names_found",
		"vm-a id %" PRIu64 ", vm-b id %" PRIu64, id_a, id_b);
	HL_EXPECT("list_reserved_einval",
		  HL_IOCTL(vm_a.pfm_fd, KVMPFM_LIST_VMS, &bad), -EINVAL);
	HL_EXPECT("snapshot_small_enospc",
		  hl_snapshot(vm_a.pfm_fd, id_a, buf, &size), -ENOSPC);
	t_check(size > sizeof(struct kvmpfm_snap_vm), "snapshot_size_needed",
		"size needed %u", size);
	size = SNAP_ROOM;
	HL_EXPECT("snapshot_unknown_enoent",
		  hl_snapshot(vm_a.pfm_fd, ~0ULL, buf, &size), -ENOENT);
	req.buf = (uintptr_t)buf;
	req.size = SNAP_ROOM;
	HL_EXPECT("snapshot_reserved_einval",
		  HL_IOCTL(vm_a.pfm_fd, KVMPFM_GET_SNAPSHOT, &req), -EINVAL);
}

/*
 * VM a, vCPU 0: a system-wide context counting VCPU_RUN_NS, then calls
 * that fail on purpose. The snapshot must count each.
 */
static uint32_t t_vm_a(void *buf, uint64_t id)
{
	struct hl_vcpu *v = &vm_a.vcpus[0];
	const struct kvmpfm_snap_vm *s = buf;
	const struct kvmpfm_snap_event *e;
	const struct kvmpfm_snap_ctx *c;
	uint32_t size = SNAP_ROOM, ctx = 0, flags;
	pfarg_pmc_t pmc;
	int ret;

	ret = cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &ctx);
	ret = ret ?: write_vpmd(v, ctx, PVPFM_VPMD_VCPU_RUN_NS, &flags);
	ret = ret ?: cb_load(&v->cb, ctx, v->index, 0, 0, v->guest_tgid);
	ret = ret ?: cb_start(&v->cb, ctx);
	if (!t_check(!ret, "vm_a_counting", "%s", hl_status_str(ret)))
		return 0;
	/* on purpose: EBADF (no such context), EINVAL (no such PMC) x2 */
	HL_EXPECT("vm_a_ebadf", cb_stop(&v->cb, 9999), -EBADF);
	cb_pmc_init(&pmc, 200, 0, 0);
	HL_EXPECT("vm_a_einval_1", cb_write_pmcs(&v->cb, ctx, &pmc, 1),
		  -EINVAL);
	cb_pmc_init(&pmc, 201, 0, 0);
	HL_EXPECT("vm_a_einval_2", cb_write_pmcs(&v->cb, ctx, &pmc, 1),
		  -EINVAL);

	HL_EXPECT("vm_a_snapshot", hl_snapshot(vm_a.pfm_fd, id, buf, &size), 0);
	t_check(s->size >= sizeof(*s) && s->nr_vcpus == 2 &&
		s->pid == getpid() && s->id == id &&
		s->personality == PVPFM_PERS_AMD64 && s->counters == 4,
		"vm_a_record", "size %u vcpus %u pid %d personality %u",
		s->size, s->nr_vcpus, s->pid, s->personality);
	t_check(s->identity.uuid[0] == 0xaa && s->identity.uuid[15] == 0xaa,
		"vm_a_uuid", "uuid[0] %#x", s->identity.uuid[0]);
	t_check(s->calls[PVPFM_CMD_CREATE_CONTEXT] == 1 &&
		s->calls[PVPFM_CMD_WRITE_PMDS] == 1 &&
		s->calls[PVPFM_CMD_LOAD_CONTEXT] == 1 &&
		s->calls[PVPFM_CMD_START] == 1 &&
		s->calls[PVPFM_CMD_STOP] == 1 &&
		s->calls[PVPFM_CMD_WRITE_PMCS] == 2,
		"vm_a_calls_by_command", "create %llu write_pmds %llu load "
		"%llu start %llu stop %llu write_pmcs %llu",
		(unsigned long long)s->calls[PVPFM_CMD_CREATE_CONTEXT],
		(unsigned long long)s->calls[PVPFM_CMD_WRITE_PMDS],
		(unsigned long long)s->calls[PVPFM_CMD_LOAD_CONTEXT],
		(unsigned long long)s->calls[PVPFM_CMD_START],
		(unsigned long long)s->calls[PVPFM_CMD_STOP],
		(unsigned long long)s->calls[PVPFM_CMD_WRITE_PMCS]);
	t_check(s->refusals[EBADF] == 1 && s->refusals[EINVAL] == 2 &&
		s->stats.command_errors == 3 && !s->notavail && !s->filtered,
		"vm_a_refusals_by_errno", "EBADF %llu EINVAL %llu errors %llu "
		"notavail %llu filtered %llu",
		(unsigned long long)s->refusals[EBADF],
		(unsigned long long)s->refusals[EINVAL],
		(unsigned long long)s->stats.command_errors,
		(unsigned long long)s->notavail,
		(unsigned long long)s->filtered);
	if (!t_check(s->nr_ctxs == 1 && s->nr_events == 1, "vm_a_records",
		     "contexts %u events %u", s->nr_ctxs, s->nr_events))
		return ctx;
	c = ctx_rec(s, 0);
	e = ev_rec(s, 0);
	t_check(c->id == ctx && c->state == KVMPFM_CTX_LOADED &&
		c->system_wide && c->vcpu == 0 && c->started &&
		c->nr_sets == 1, "vm_a_context", "id %u state %u sw %u "
		"vcpu %d started %u sets %u", c->id, c->state, c->system_wide,
		c->vcpu, c->started, c->nr_sets);
	t_check(e->vcpu == 0 && e->ctx_id == ctx &&
		e->pmd == PVPFM_VPMD_VCPU_RUN_NS &&
		e->guest_kind == KVMPFM_EVK_VIRTUAL &&
		e->guest_event == PVPFM_VPMD_VCPU_RUN_NS &&
		!(e->flags & KVMPFM_SNAP_EV_EMULATED), "vm_a_event",
		"vcpu %u ctx %u pmd %u kind %u event %u flags %#x", e->vcpu,
		e->ctx_id, e->pmd, e->guest_kind, e->guest_event, e->flags);
	t_check(vcpu_rec(s, 0)->ctx_id == ctx &&
		vcpu_rec(s, 0)->host_tid == v->tid &&
		vcpu_rec(s, 0)->counters_open == 1 &&
		vcpu_rec(s, 0)->doorbells == s->stats.doorbells &&
		s->stats.doorbells >= 7 && s->stats.doorbell_ns > 0 &&
		vcpu_rec(s, 1)->ctx_id == 0,
		"vm_a_vcpus", "vCPU 0: ctx %u tid %d (want %d) counters %u "
		"doorbells %llu; vCPU 1: ctx %u", vcpu_rec(s, 0)->ctx_id,
		vcpu_rec(s, 0)->host_tid, (int)v->tid,
		vcpu_rec(s, 0)->counters_open,
		(unsigned long long)vcpu_rec(s, 0)->doorbells,
		vcpu_rec(s, 1)->ctx_id);
	return ctx;
}

/*
 * VM b: the VMM's filter denies VCPU_RUN_NS; the operator's, from another
 * file, allows VCPU_RUN_NS and VM_EXITS only. Both must allow: the VMM's
 * refusal stands, HALT_EXITS is the operator's. The VMM clearing its own
 * filter leaves the operator's in force; the operator clears it.
 */
/*
 * KVMPFM_GET_EVENT_FILTER on VM b while the VMM denies VCPU_RUN_NS and the
 * operator allows @op_allow[0..2): each filter as it was set, ENOSPC with
 * the room needed, EINVAL for unknown flags, ENOENT for no VM.
 */
static void t_get_filters(int op_fd, uint64_t id_b, const uint16_t *op_allow)
{
	struct {
		struct kvmpfm_event_filter f;
		struct kvmpfm_filter_event e[4];
	} got;

	HL_EXPECT("filter_get_operator", get_filter(op_fd, id_b, 0, &got.f, 4),
		  0);
	t_check(got.f.action == KVMPFM_FILTER_ALLOW && got.f.nr == 2 &&
		got.e[0].guest_kind == KVMPFM_EVK_VIRTUAL &&
		got.e[0].event == op_allow[0] && got.e[1].event == op_allow[1] &&
		got.e[1].event_mask == 0xffff && got.f.vm_id == id_b,
		"filter_get_operator_as_set", "action %u nr %u events %u %u",
		got.f.action, got.f.nr, got.e[0].event, got.e[1].event);
	HL_EXPECT("filter_get_vmm", get_filter(op_fd, id_b,
					       KVMPFM_FILTER_OF_VMM, &got.f, 4),
		  0);
	t_check(got.f.action == KVMPFM_FILTER_DENY && got.f.nr == 1 &&
		got.e[0].event == PVPFM_VPMD_VCPU_RUN_NS,
		"filter_get_vmm_as_set", "action %u nr %u event %u",
		got.f.action, got.f.nr, got.e[0].event);
	HL_EXPECT("filter_get_no_room_enospc",
		  get_filter(op_fd, id_b, 0, &got.f, 1), -ENOSPC);
	t_check(got.f.nr == 2, "filter_get_no_room_says_room", "nr %u",
		got.f.nr);
	HL_EXPECT("filter_get_bad_flags_einval",
		  get_filter(op_fd, id_b, 2, &got.f, 4), -EINVAL);
	HL_EXPECT("filter_get_unknown_vm_enoent",
		  get_filter(op_fd, ~0ULL, 0, &got.f, 4), -ENOENT);
	got.f.flags = KVMPFM_FILTER_OF_VMM;
	HL_EXPECT("filter_set_flags_einval",
		  HL_IOCTL(op_fd, KVMPFM_SET_EVENT_FILTER, &got), -EINVAL);
}

static void t_filters(void *buf, uint64_t id_b)
{
	static const uint16_t op_allow[] = { PVPFM_VPMD_VCPU_RUN_NS,
					     PVPFM_VPMD_VM_EXITS };
	struct {
		struct kvmpfm_event_filter f;
		struct kvmpfm_filter_event e[4];
	} got;
	struct hl_vcpu *v = &vm_b.vcpus[0];
	const struct kvmpfm_snap_vm *s = buf;
	uint32_t size, ctx = 0, flags = 0;
	int op_fd, ret;

	HL_EXPECT("filter_deny_own", filter(vm_b.pfm_fd, 0,
					     KVMPFM_FILTER_DENY,
					     PVPFM_VPMD_VCPU_RUN_NS), 0);
	ret = cb_create(&v->cb, 0, &ctx);
	HL_EXPECT("filter_ctx", ret, 0);
	HL_EXPECT("filter_denied_einval",
		  write_vpmd(v, ctx, PVPFM_VPMD_VCPU_RUN_NS, &flags), -EINVAL);
	t_check(flags & PFM_REG_RETFL_NOTAVAIL, "filter_denied_notavail",
		"reg_flags %#x", flags);
	HL_EXPECT("filter_other_passes",
		  write_vpmd(v, ctx, PVPFM_VPMD_VM_EXITS, &flags), 0);

	op_fd = open(KVMPFM_DEVICE, O_RDWR);
	HL_EXPECT("filter_allow_operator",
		  filter_of(op_fd, id_b, KVMPFM_FILTER_ALLOW,
			    KVMPFM_EVK_VIRTUAL, op_allow, 2), 0);
	HL_EXPECT("filter_operator_unknown_vm_enoent",
		  filter(op_fd, ~0ULL, KVMPFM_FILTER_ALLOW, 0), -ENOENT);
	t_get_filters(op_fd, id_b, op_allow);
	HL_EXPECT("filter_both_allow_passes",
		  write_vpmd(v, ctx, PVPFM_VPMD_VM_EXITS, &flags), 0);
	HL_EXPECT("filter_vmm_denies_operator_allows_einval",
		  write_vpmd(v, ctx, PVPFM_VPMD_VCPU_RUN_NS, &flags), -EINVAL);
	HL_EXPECT("filter_not_allowed_einval",
		  write_vpmd(v, ctx, PVPFM_VPMD_HALT_EXITS, &flags), -EINVAL);
	t_check(flags & PFM_REG_RETFL_NOTAVAIL,
		"filter_not_allowed_notavail", "reg_flags %#x", flags);

	size = SNAP_ROOM;
	HL_EXPECT("filter_snapshot", hl_snapshot(op_fd, id_b, buf, &size), 0);
	t_check(s->filtered == 3 && s->notavail == 0 &&
		s->refusals[EINVAL] == 3 &&
		s->filter_action == KVMPFM_FILTER_ALLOW && s->filter_nr == 2 &&
		s->vmm_filter_action == KVMPFM_FILTER_DENY &&
		s->vmm_filter_nr == 1,
		"filter_counted", "filtered %llu notavail %llu EINVAL %llu "
		"operator's %u/%u VMM's %u/%u", (unsigned long long)s->filtered,
		(unsigned long long)s->notavail,
		(unsigned long long)s->refusals[EINVAL], s->filter_action,
		s->filter_nr, s->vmm_filter_action, s->vmm_filter_nr);
	/* deny of nothing: no filter, the VMM's own only */
	HL_EXPECT("filter_vmm_clears_own", filter(vm_b.pfm_fd, 0,
						  KVMPFM_FILTER_DENY, 0), 0);
	HL_EXPECT("filter_vmm_cleared_passes",
		  write_vpmd(v, ctx, PVPFM_VPMD_VCPU_RUN_NS, &flags), 0);
	HL_EXPECT("filter_operator_outlives_vmm_clear",
		  write_vpmd(v, ctx, PVPFM_VPMD_HALT_EXITS, &flags), -EINVAL);
	HL_EXPECT("filter_operator_clears", filter(op_fd, id_b,
						   KVMPFM_FILTER_DENY, 0), 0);
	HL_EXPECT("filter_get_cleared", get_filter(op_fd, id_b, 0, &got.f, 4),
		  0);
	t_check(got.f.action == KVMPFM_FILTER_DENY && got.f.nr == 0,
		"filter_get_cleared_is_deny_of_none", "action %u nr %u",
		got.f.action, got.f.nr);
	HL_EXPECT("filter_cleared_passes",
		  write_vpmd(v, ctx, PVPFM_VPMD_HALT_EXITS, &flags), 0);
	close(op_fd);
	cb_destroy(&v->cb, ctx);
}

/* PMC @pmc of @ctx programmed with @sel: the status and reg_flags */
static int write_pmc(struct hl_vcpu *v, uint32_t ctx, uint16_t pmc,
		     uint64_t sel, uint32_t *flags)
{
	pfarg_pmc_t p;
	int ret;

	cb_pmc_init(&p, pmc, 0, sel);
	ret = cb_write_pmcs(&v->cb, ctx, &p, 1);
	*flags = p.reg_flags;
	return ret;
}

/*
 * The VMM's event map may not carry a guest event the operator allows
 * onto a host event it denies. The operator denies cycles (0x76); the
 * map aliases instructions (0xc0) to the raw cycles event, branches
 * (0xc2) to perf's hardware cycles, branch misses (0xc3) to a cache
 * event (no encoding the filter can judge) and 0xc4 to task-clock (a
 * software event: its guest event alone is judged). Refused by the
 * filter (counted as filtered, not as NOTAVAIL) but the last.
 */
static void t_filter_alias(void)
{
	static const uint16_t deny[] = { 0x76 };
	struct kvmpfm_event_map_entry map[4] = {
		{ .guest_kind = KVMPFM_EVK_GENERIC, .guest_event = 0xc0,
		  .host_type = PERF_TYPE_RAW, .host_config = 0x76 },
		{ .guest_kind = KVMPFM_EVK_GENERIC, .guest_event = 0xc2,
		  .host_type = PERF_TYPE_HARDWARE,
		  .host_config = PERF_COUNT_HW_CPU_CYCLES },
		{ .guest_kind = KVMPFM_EVK_GENERIC, .guest_event = 0xc3,
		  .host_type = PERF_TYPE_HW_CACHE,
		  .host_config = PERF_COUNT_HW_CACHE_LL |
				 (PERF_COUNT_HW_CACHE_OP_READ << 8) |
				 (PERF_COUNT_HW_CACHE_RESULT_MISS << 16) },
		{ .guest_kind = KVMPFM_EVK_GENERIC, .guest_event = 0xc4,
		  .flags = KVMPFM_MAP_EMULATED, .host_type = PERF_TYPE_SOFTWARE,
		  .host_config = PERF_COUNT_SW_TASK_CLOCK },
	};
	static const struct {
		const char *name;
		uint16_t event;
	} refused[] = {
		{ "alias_raw_onto_denied_refused", 0xc0 },
		{ "alias_hardware_onto_denied_refused", 0xc2 },
		{ "alias_cache_event_refused", 0xc3 },
		{ "unaliased_denied_refused", 0x76 },
	};
	static char buf[SNAP_ROOM] __attribute__((aligned(8)));
	const struct kvmpfm_snap_vm *s = (const void *)buf;
	struct hl_vm_opts o = { .nr_vcpus = 1, .map = map, .map_nr = 4,
				.bind.personality = PVPFM_PERS_AMD64 };
	struct hl_vm vm_c;
	struct hl_vcpu *v = &vm_c.vcpus[0];
	uint32_t size = SNAP_ROOM, ctx = 0, flags = 0, i;
	uint64_t id;
	int ret;

	ret = hl_vm_create(&vm_c, &o);
	if (!t_check(!ret, "alias_vm", "%s", hl_status_str(ret)))
		return;
	id = set_name(&vm_c, "vm-c", 0xcc) ? 0 : find_id("vm-c", buf);
	ret = id ? filter_of(vm_a.pfm_fd, id, KVMPFM_FILTER_DENY,
			     KVMPFM_EVK_GENERIC, deny, 1) : -ENOENT;
	ret = ret ?: cb_create(&v->cb, 0, &ctx);
	if (!t_check(!ret, "alias_filter_set", "%s", hl_status_str(ret)))
		goto out;
	/* by a filter: counted as filtered, not as NOTAVAIL (no host PMU) */
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ret = write_pmc(v, ctx, 0, SEL(refused[i].event), &flags);
		size = SNAP_ROOM;
		if (hl_snapshot(vm_a.pfm_fd, id, buf, &size))
			memset(buf, 0, sizeof(*s));
		t_check(ret == -EINVAL && (flags & PFM_REG_RETFL_NOTAVAIL) &&
			s->filtered == i + 1 && !s->notavail,
			refused[i].name, "PMC0=%#llx: %s, reg_flags %#x, "
			"filtered %llu notavail %llu",
			(unsigned long long)SEL(refused[i].event),
			hl_status_str(ret), flags,
			(unsigned long long)s->filtered,
			(unsigned long long)s->notavail);
	}
	ret = write_pmc(v, ctx, 0, SEL(0xc4), &flags);
	t_check(!ret && flags == PVPFM_CMD_RETFL_EMULATED,
		"alias_software_passes", "%s, reg_flags %#x",
		hl_status_str(ret), flags);
	size = SNAP_ROOM;
	HL_EXPECT("alias_snapshot", hl_snapshot(vm_a.pfm_fd, id, buf, &size), 0);
	t_check(s->filtered == 4 && s->notavail == 0, "alias_counted_filtered",
		"filtered %llu notavail %llu", (unsigned long long)s->filtered,
		(unsigned long long)s->notavail);
	cb_destroy(&v->cb, ctx);
out:
	hl_vm_destroy(&vm_c);
}

static void t_filter_input(void)
{
	struct {
		struct kvmpfm_event_filter f;
		struct kvmpfm_filter_event e[1];
	} req = { .f = { .action = 2 } };

	HL_EXPECT("filter_bad_action_einval",
		  HL_IOCTL(vm_b.pfm_fd, KVMPFM_SET_EVENT_FILTER, &req), -EINVAL);
	req.f.action = KVMPFM_FILTER_DENY;
	req.f.nr = KVMPFM_MAX_FILTER + 1;
	HL_EXPECT("filter_too_long_einval",
		  HL_IOCTL(vm_b.pfm_fd, KVMPFM_SET_EVENT_FILTER, &req), -EINVAL);
	req.f.nr = 1;
	req.e[0].guest_kind = 3;
	HL_EXPECT("filter_bad_kind_einval",
		  HL_IOCTL(vm_b.pfm_fd, KVMPFM_SET_EVENT_FILTER, &req), -EINVAL);
	req.e[0].guest_kind = KVMPFM_EVK_GENERIC;
	req.e[0].reserved[5] = 1;
	HL_EXPECT("filter_reserved_einval",
		  HL_IOCTL(vm_b.pfm_fd, KVMPFM_SET_EVENT_FILTER, &req), -EINVAL);
}

static int busy_fn(struct hl_vcpu *v, void *ns)
{
	(void)v;
	hl_busy_ns(*(uint64_t *)ns);
	return 0;
}

/* a filter set on a running VM does not stop a counter already running */
static void t_filter_running(void *buf, uint64_t id_a, uint32_t ctx)
{
	struct hl_vcpu *v = &vm_a.vcpus[0];
	const struct kvmpfm_snap_vm *s = buf;
	uint64_t before = 0, after = 0, busy = 20000000;
	uint32_t size = SNAP_ROOM;

	HL_EXPECT("running_filter_set", filter(vm_a.pfm_fd, 0,
						KVMPFM_FILTER_DENY,
						PVPFM_VPMD_VCPU_RUN_NS), 0);
	cb_read_pmd(&v->cb, ctx, 0, PVPFM_VPMD_VCPU_RUN_NS, &before);
	hl_call(v, busy_fn, &busy);
	cb_read_pmd(&v->cb, ctx, 0, PVPFM_VPMD_VCPU_RUN_NS, &after);
	t_check(after >= before + busy / 2, "running_counter_goes_on",
		"VCPU_RUN_NS %" PRIu64 " -> %" PRIu64 " over %" PRIu64
		" ns busy", before, after, busy);
	HL_EXPECT("running_snapshot", hl_snapshot(vm_a.pfm_fd, id_a, buf, &size),
		  0);
	t_check(s->nr_events == 1, "running_event_kept", "events %u",
		s->nr_events);
	filter(vm_a.pfm_fd, 0, KVMPFM_FILTER_DENY, 0);
}

struct unpriv_result {
	int uid, list, snap, filter, get_filter, own_id, own_zero;
};

/*
 * uid 65534 on a file opened as root: EPERM for all of the operator's.
 * On VM a's own binding (inherited, as a VMM holds it): its own filter
 * (vm_id 0) yes, the operator's (naming VM a's id) no.
 */
static int unprivileged_child(void *arg, void *res)
{
	uint64_t id_a = *(const uint64_t *)arg;
	struct unpriv_result *r = res;
	static char buf[4096];
	uint32_t size = sizeof(buf);
	int fd = open(KVMPFM_DEVICE, O_RDWR);
	struct {
		struct kvmpfm_event_filter f;
		struct kvmpfm_filter_event e[4];
	} got;

	if (fd < 0 || hl_drop_to_nobody())
		return 2;
	r->uid = getuid();
	r->list = hl_list_vms(fd, NULL, 0);
	r->snap = hl_snapshot(fd, id_a, buf, &size);
	r->filter = filter(fd, id_a, KVMPFM_FILTER_DENY, 0);
	r->get_filter = get_filter(fd, id_a, 0, &got.f, 4);
	r->own_id = filter(vm_a.pfm_fd, id_a, KVMPFM_FILTER_DENY, 0);
	r->own_zero = filter(vm_a.pfm_fd, 0, KVMPFM_FILTER_DENY, 0);
	return 0;
}

static void t_unprivileged(uint64_t id_a)
{
	struct unpriv_result r = { .uid = -1 };
	int st = t_child(unprivileged_child, &id_a, &r, sizeof(r));

	if (st < 0)
		return;
	if (!t_check(r.uid == HL_NOBODY, "unpriv_child", "status %#x uid %d",
		     st, r.uid))
		return;
	HL_EXPECT("unpriv_list_eperm", r.list, -EPERM);
	HL_EXPECT("unpriv_snapshot_eperm", r.snap, -EPERM);
	HL_EXPECT("unpriv_filter_other_vm_eperm", r.filter, -EPERM);
	HL_EXPECT("unpriv_get_filter_eperm", r.get_filter, -EPERM);
	HL_EXPECT("unpriv_filter_own_vm_by_id_eperm", r.own_id, -EPERM);
	HL_EXPECT("unpriv_filter_own_vmm_filter", r.own_zero, 0);
}

/* host-tools/kvm-perfmon-stat on the same VMs, if it is in the payload */
static void t_stat_tool(void)
{
	char line[512];
	bool a = false, b = false, filtered = false;
	FILE *p;
	int st;

	if (access("./kvm-perfmon-stat", X_OK)) {
		t_check(false, "stat_tool_present", "no ./kvm-perfmon-stat");
		return;
	}
	p = popen("./kvm-perfmon-stat --json --vm vm-b", "r");
	while (p && fgets(line, sizeof(line), p)) {
		b |= !!strstr(line, "\"name\": \"vm-b\"");
		filtered |= !!strstr(line, "\"FILTERED\": 4");
	}
	st = p ? pclose(p) : -1;
	t_check(st == 0 && b && filtered, "stat_tool_json_vm_b",
		"status %#x, name %d, FILTERED 4 %d", st, b, filtered);
	p = popen("./kvm-perfmon-stat", "r");
	b = false;
	while (p && fgets(line, sizeof(line), p)) {
		fputs(line, stdout);
		a |= !strncmp(line, "vm-a ", 5);
		b |= !strncmp(line, "vm-b ", 5);
	}
	st = p ? pclose(p) : -1;
	t_check(st == 0 && a && b, "stat_tool_table", "status %#x, vm-a %d, "
		"vm-b %d", st, a, b);
	st = system("./kvm-perfmon-stat --vm no-such-vm >/dev/null 2>&1");
	t_check(WIFEXITED(st) && WEXITSTATUS(st) == 4, "stat_tool_no_vm_4",
		"status %#x", st);
}

/* what a scrape costs: one snapshot of VM a, many times */
static void t_cost(void *buf, uint64_t id_a)
{
	const struct kvmpfm_snap_vm *s = buf;
	uint64_t t0, t1;
	uint32_t size;
	int i, n = 2000, bad = 0;

	t0 = hl_mono_ns();
	for (i = 0; i < n; i++) {
		size = SNAP_ROOM;
		bad += !!hl_snapshot(vm_a.pfm_fd, id_a, buf, &size);
	}
	t1 = hl_mono_ns();
	t_check(!bad, "cost_snapshots_ok", "%d of %d failed", bad, n);
	t_note("operator: one snapshot of a VM (%u vCPUs, %u contexts, %u "
	       "events, %u bytes): %.1f us on the rig's L1 (TCG)",
	       s->nr_vcpus, s->nr_ctxs, s->nr_events, size,
	       (t1 - t0) / 1e3 / n);
}

int main(void)
{
	static char buf[SNAP_ROOM] __attribute__((aligned(8)));
	uint64_t id_a, id_b, ids[4];
	uint32_t ctx;
	int ret, n;

	hl_init();
	ret = hl_vm_simple(&vm_a, 2);
	ret = ret ?: hl_vm_simple(&vm_b, 1);
	if (!t_check(!ret, "operator_vms", "VMs: %s", hl_errname(ret)))
		return t_done();
	t_identity();
	id_a = find_id("vm-a", buf);
	id_b = find_id("vm-b", buf);
	t_list_and_sizes(buf, id_a, id_b);
	ctx = t_vm_a(buf, id_a);
	t_filters(buf, id_b);
	t_filter_alias();
	t_filter_input();
	if (ctx)
		t_filter_running(buf, id_a, ctx);
	t_unprivileged(id_a);
	t_stat_tool();
	t_cost(buf, id_a);

	hl_vm_destroy(&vm_b);
	n = hl_list_vms(vm_a.pfm_fd, ids, 4);
	t_check(n == 1 && ids[0] == id_a, "gone_from_list",
		"%d VMs listed, first %" PRIu64, n, ids[0]);
	n = SNAP_ROOM;
	HL_EXPECT("gone_snapshot_enoent",
		  hl_snapshot(vm_a.pfm_fd, id_b, buf, (uint32_t *)&n), -ENOENT);
	hl_vm_destroy(&vm_a);
	hl_check_module_idle("operator_module_idle");
	return t_done();
}
