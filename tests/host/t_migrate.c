// SPDX-License-Identifier: GPL-2.0
/*
 * t_migrate: KVMPFM_GET_STATE on one VM, KVMPFM_SET_STATE into another in
 * the same L1, as QEMU does across a migration.
 *
 *   counts go on    a system-wide context with two time-switched sets
 *                   (VM_EXITS in each, cycles aliased to task-clock in set
 *                   0) and one with a sampling buffer: after the import
 *                   the PMDs read what the source read last, grow with
 *                   the destination's exits, sets go on switching, and the
 *                   time between export and import (300 ms) is not active
 *                   time; the sampling pages are registered again
 *   vCPUs held      GET_STATE while a bound vCPU thread is in KVM_RUN:
 *                   EBUSY (a size query is allowed), still EBUSY while
 *                   one of two is, taken once both returned; SET_STATE
 *                   while a destination vCPU is in KVM_RUN: EBUSY, taken
 *                   once it returned; SET_STATE into a VM whose vCPU
 *                   threads are not bound: refused (COUNTER)
 *   refusals        missing event (destination without the event map):
 *                   ENOENT naming context, set and PMD; a second import:
 *                   EBUSY (NOT_EMPTY); a truncated, oversized (E2BIG
 *                   before any copy) or empty stream, reserved fields;
 *                   500 streams with a byte flipped: each taken or refused
 *                   with a reason, never a WARN in L1's log
 *   teardown        the module holds nothing once both VMs are gone
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "hostlib.h"

#define EXITS		1000
#define TIMEOUT_NS	(10 * MS)
#define PAUSE_NS	(300 * MS)
#define FLIPS		500
#define SMPL_PAGES	4
/* AMD PERFSEL: cycles, counting user and kernel, enabled */
#define SEL_CYCLES	(0x76ULL | 1ULL << 16 | 1ULL << 17 | 1ULL << 20 | \
			 1ULL << 22)

static const struct kvmpfm_event_map_entry cycles_map = {
	.guest_kind = KVMPFM_EVK_GENERIC,
	.guest_event = 0x76,
	.flags = KVMPFM_MAP_EMULATED,
	.host_type = PERF_TYPE_SOFTWARE,
	.host_config = PERF_COUNT_SW_TASK_CLOCK,
};

struct stream {
	uint8_t *buf;
	uint32_t size, max;
};

static int vm_up(struct hl_vm *vm, bool map, bool bind_vcpus)
{
	struct hl_vm_opts o;

	o = hl_vm_opts_simple(2);
	o.no_bind_vcpus = !bind_vcpus;
	if (map) {
		o.map = &cycles_map;
		o.map_nr = 1;
	}
	return hl_vm_create(vm, &o);
}

static int state_ioctl(struct hl_vm *vm, unsigned long req,
		       struct kvmpfm_state *st)
{
	return HL_IOCTL(vm->pfm_fd, req, st);
}

static int import(struct hl_vm *vm, const void *buf, uint32_t size,
		  struct kvmpfm_state *st)
{
	memset(st, 0, sizeof(*st));
	st->buf = (uintptr_t)buf;
	st->size = size;
	return state_ioctl(vm, KVMPFM_SET_STATE, st);
}

/* system-wide on vCPU 0: sets 0 and 1 switched every 10 ms */
static uint32_t count_ctx(struct hl_vcpu *v)
{
	pfarg_setdesc_t d[2];
	pfarg_pmc_t pmc;
	pfarg_pmd_t p[3];
	uint32_t id = 0;
	int ret, i;

	memset(d, 0, sizeof(d));
	for (i = 0; i < 2; i++) {
		d[i].set_id = i;
		d[i].set_flags = PFM_SETFL_TIME_SWITCH;
		d[i].set_timeout = TIMEOUT_NS;
	}
	cb_pmc_init(&pmc, 0, 0, SEL_CYCLES);
	cb_pmd_init(&p[0], 0, 0, 0);
	cb_pmd_init(&p[1], PVPFM_VPMD_VM_EXITS, 0, 0);
	cb_pmd_init(&p[2], PVPFM_VPMD_VM_EXITS, 1, 0);
	ret = cb_create(&v->cb, PFM_FL_SYSTEM_WIDE, &id);
	ret = ret ? ret : cb_create_sets(&v->cb, id, d, 2);
	ret = ret ? ret : cb_write_pmcs(&v->cb, id, &pmc, 1);
	ret = ret ? ret : cb_write_pmds(&v->cb, id, p, 3);
	ret = ret ? ret : cb_load(&v->cb, id, v->index, 0, 0, v->guest_tgid);
	ret = ret ? ret : cb_start(&v->cb, id);
	if (ret) {
		t_note("%s: %s (err_index %u)", __func__, hl_status_str(ret),
		       v->cb.hdr.err_index);
		return 0;
	}
	return id;
}

/* system-wide on vCPU 1 with a registered sampling buffer */
static uint32_t smpl_ctx(struct hl_vm *vm, struct hl_vcpu *v)
{
	uint64_t base = hl_gpa_alloc(vm, SMPL_PAGES * HL_PAGE), gpa[SMPL_PAGES];
	pfarg_pmd_t p;
	uint32_t id = 0;
	int ret, i;

	for (i = 0; i < SMPL_PAGES; i++)
		gpa[i] = base + i * HL_PAGE;
	cb_pmd_init(&p, PVPFM_VPMD_VM_EXITS, 0, 0);
	ret = cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE,
			     SMPL_PAGES * HL_PAGE, &id);
	ret = ret ? ret : cb_smpl_register(&v->cb, id, 0, SMPL_PAGES, gpa);
	ret = ret ? ret : cb_write_pmds(&v->cb, id, &p, 1);
	ret = ret ? ret : cb_load(&v->cb, id, v->index, 0, 0, v->guest_tgid);
	if (ret) {
		t_note("%s: %s", __func__, hl_status_str(ret));
		return 0;
	}
	return id;
}

static int io_fn(struct hl_vcpu *v, void *arg)
{
	(void)arg;
	return hl_run_io(v, EXITS);
}

static int spin_fn(struct hl_vcpu *v, void *arg)
{
	(void)arg;
	if (hl_vcpu_setup(v, HL_CODE_SPIN, 0, 0))
		return -1;
	return hl_run_until_kicked(v) < 0 ? -1 : 0;
}

struct reading {
	uint64_t exits0, exits1, act, runs;
};

static void read_counts(struct hl_vcpu *v, uint32_t id, struct reading *r)
{
	pfarg_setinfo_t si[2];

	memset(r, 0, sizeof(*r));
	cb_read_pmd(&v->cb, id, 0, PVPFM_VPMD_VM_EXITS, &r->exits0);
	cb_read_pmd(&v->cb, id, 1, PVPFM_VPMD_VM_EXITS, &r->exits1);
	memset(si, 0, sizeof(si));
	si[0].set_id = 0;
	si[1].set_id = 1;
	if (!cb_getinfo_sets(&v->cb, id, si, 2)) {
		r->act = si[0].set_act_duration + si[1].set_act_duration;
		r->runs = si[0].set_runs + si[1].set_runs;
	}
}

static bool export(struct hl_vm *vm, struct stream *s)
{
	struct kvmpfm_state st;
	int ret;

	memset(&st, 0, sizeof(st));
	ret = state_ioctl(vm, KVMPFM_GET_STATE, &st);
	if (!t_check(!ret && st.size && st.size <= st.max_size,
		     "export_size", "size query: %s, %u bytes, max %u",
		     hl_status_str(ret), st.size, st.max_size))
		return false;
	s->size = st.size;
	s->max = st.max_size;
	s->buf = calloc(1, s->size);
	st.buf = (uintptr_t)s->buf;
	st.size = s->size - 8;
	HL_EXPECT("export_short_enospc", state_ioctl(vm, KVMPFM_GET_STATE, &st),
		  -ENOSPC);
	st.size = s->size;
	ret = state_ioctl(vm, KVMPFM_GET_STATE, &st);
	t_note("stream: %u bytes (2 contexts, 3 sets), at most %u for this "
	       "VM's limits", st.size, st.max_size);
	return t_check(!ret && st.size == s->size, "export", "%s, %u bytes",
		       hl_status_str(ret), st.size);
}

/*
 * GET_STATE needs every bound vCPU thread out of KVM_RUN (between its
 * entry into the guest and the return of KVM_RUN); a size query does not
 */
static void t_busy(struct hl_vm *vm, const struct stream *s)
{
	struct kvmpfm_state st;
	uint8_t *buf = calloc(1, s->size);

	hl_call_async(&vm->vcpus[0], spin_fn, NULL);
	hl_call_async(&vm->vcpus[1], spin_fn, NULL);
	usleep(50000);
	memset(&st, 0, sizeof(st));
	HL_EXPECT("size_query_while_running",
		  state_ioctl(vm, KVMPFM_GET_STATE, &st), 0);
	st.buf = (uintptr_t)buf;
	st.size = s->size;
	HL_EXPECT("export_while_running_ebusy",
		  state_ioctl(vm, KVMPFM_GET_STATE, &st), -EBUSY);
	hl_kick_and_wait(&vm->vcpus[0]);
	st.size = s->size;
	HL_EXPECT("export_while_one_runs_ebusy",
		  state_ioctl(vm, KVMPFM_GET_STATE, &st), -EBUSY);
	hl_kick_and_wait(&vm->vcpus[1]);
	st.size = s->size;
	HL_EXPECT("export_once_all_returned_ok",
		  state_ioctl(vm, KVMPFM_GET_STATE, &st), 0);
	free(buf);
}

static void t_counts(struct hl_vm *src, struct hl_vm *dst,
		     const struct stream *s, uint32_t id, uint32_t sid,
		     const struct reading *before)
{
	struct kvmpfm_module_stats ms0, ms1;
	struct hl_vcpu *v = &dst->vcpus[0];
	struct reading after, later;
	struct kvmpfm_state st;
	int ret;

	/* not while a destination vCPU is inside KVM_RUN */
	hl_call_async(&dst->vcpus[1], spin_fn, NULL);
	usleep(50000);
	HL_EXPECT("import_while_running_ebusy",
		  import(dst, s->buf, s->size, &st), -EBUSY);
	hl_kick_and_wait(&dst->vcpus[1]);
	hl_module_stats(&ms0);
	ret = import(dst, s->buf, s->size, &st);
	hl_module_stats(&ms1);
	if (!t_check(!ret, "import", "%s, reason %u ctx %u set %u pmd %u "
		     "at %llu", hl_status_str(ret), st.reason, st.ctx_id,
		     st.set, st.pmd, (unsigned long long)st.offset))
		return;
	t_check(ms1.pinned_pages - ms0.pinned_pages == SMPL_PAGES,
		"import_pins_sampling_pages", "%lld pages pinned by the import",
		(long long)(ms1.pinned_pages - ms0.pinned_pages));
	t_check(ms1.perf_events > ms0.perf_events, "import_opens_counters",
		"host perf events %lld -> %lld", (long long)ms0.perf_events,
		(long long)ms1.perf_events);
	read_counts(v, id, &after);
	t_note("before export: VM_EXITS set0 %" PRIu64 " set1 %" PRIu64
	       ", act %" PRIu64 " ns, runs %" PRIu64, before->exits0,
	       before->exits1, before->act, before->runs);
	t_note("after import:  VM_EXITS set0 %" PRIu64 " set1 %" PRIu64
	       ", act %" PRIu64 " ns, runs %" PRIu64, after.exits0,
	       after.exits1, after.act, after.runs);
	t_check(after.exits0 == before->exits0 &&
		after.exits1 == before->exits1, "counts_continue",
		"VM_EXITS %" PRIu64 "/%" PRIu64 " after, %" PRIu64 "/%"
		PRIu64 " before", after.exits0, after.exits1, before->exits0,
		before->exits1);
	/* 300 ms between export and import, not active time */
	t_check(after.act >= before->act &&
		after.act < before->act + PAUSE_NS / 2, "pause_not_active",
		"active %" PRIu64 " ns after, %" PRIu64 " ns before, %llu ms "
		"paused", after.act, before->act, PAUSE_NS / MS);
	hl_call(v, io_fn, NULL);
	usleep(100000);
	read_counts(v, id, &later);
	t_check(later.exits0 + later.exits1 >=
		after.exits0 + after.exits1 + EXITS, "counts_grow_on_destination",
		"VM_EXITS %" PRIu64 " -> %" PRIu64 " for %d exits",
		after.exits0 + after.exits1, later.exits0 + later.exits1,
		EXITS);
	t_check(later.runs > after.runs, "sets_switch_on_destination",
		"set runs %" PRIu64 " -> %" PRIu64, after.runs, later.runs);
	HL_EXPECT("smpl_ctx_usable_on_destination",
		  cb_start(&dst->vcpus[1].cb, sid), 0);
	HL_EXPECT("second_import_not_empty", import(dst, s->buf, s->size, &st),
		  -EBUSY);
	t_check(st.reason == KVMPFM_STATE_NOT_EMPTY, "second_import_reason",
		"reason %u", st.reason);
	(void)src;
}

static void t_missing_event(const struct stream *s, uint32_t id)
{
	struct kvmpfm_state st;
	struct hl_vm vm;

	if (!t_check(!vm_up(&vm, false, true), "nomap_vm", "setup"))
		return;
	HL_EXPECT("missing_event_refused", import(&vm, s->buf, s->size, &st),
		  -ENOENT);
	t_check(st.reason == KVMPFM_STATE_EVENT && st.ctx_id == id &&
		st.set == 0 && st.pmd == 0, "missing_event_named",
		"reason %u, context %u (want %u), set %u, PMD %u", st.reason,
		st.ctx_id, id, st.set, st.pmd);
	hl_vm_destroy(&vm);
}

static void t_unbound(const struct stream *s)
{
	struct kvmpfm_state st;
	struct hl_vm vm;
	int ret;

	if (!t_check(!vm_up(&vm, true, false), "unbound_vm", "setup"))
		return;
	ret = import(&vm, s->buf, s->size, &st);
	t_check(ret && st.reason == KVMPFM_STATE_COUNTER,
		"unbound_vcpus_refused", "%s, reason %u",
		hl_status_str(ret), st.reason);
	hl_vm_destroy(&vm);
}

static void t_malformed(const struct stream *s)
{
	struct kvmpfm_state st;
	struct hl_vm vm;
	unsigned int taken = 0, refused = 0, noreason = 0, i;
	uint8_t *b = malloc(s->size);
	int ret;

	if (!t_check(!vm_up(&vm, true, true), "malformed_vm", "setup"))
		return;
	HL_EXPECT("truncated_refused", import(&vm, s->buf, s->size - 8, &st),
		  -EINVAL);
	HL_EXPECT("empty_refused", import(&vm, s->buf, 0, &st), -EINVAL);
	/* refused on its size alone: the buffer is never read */
	HL_EXPECT("oversized_refused_e2big",
		  import(&vm, s->buf, s->max + 1, &st), -E2BIG);
	t_check(st.reason == KVMPFM_STATE_LIMIT, "oversized_reason",
		"reason %u", st.reason);
	memset(&st, 0, sizeof(st));
	st.buf = (uintptr_t)s->buf;
	st.size = s->size;
	st.reserved[1] = 1;
	HL_EXPECT("reserved_refused", state_ioctl(&vm, KVMPFM_SET_STATE, &st),
		  -EINVAL);
	HL_EXPECT("bad_pointer_efault", import(&vm, (void *)8, s->size, &st),
		  -EFAULT);
	srand(11);
	for (i = 0; i < FLIPS; i++) {
		memcpy(b, s->buf, s->size);
		b[rand() % s->size] ^= 1 << (rand() % 8);
		ret = import(&vm, b, s->size, &st);
		if (!ret) {
			taken++;
			/* a flip in a value: a fresh VM for the next */
			hl_vm_destroy(&vm);
			if (vm_up(&vm, true, true))
				break;
			continue;
		}
		refused++;
		noreason += ret != -ENOMEM && st.reason == KVMPFM_STATE_OK;
	}
	t_note("%u flipped streams: %u taken, %u refused", i, taken, refused);
	t_check(i == FLIPS && refused && !noreason, "flipped_streams",
		"%u of %d tried, %u refused without a reason", i, FLIPS,
		noreason);
	free(b);
	hl_vm_destroy(&vm);
}

int main(void)
{
	struct hl_vm src, dst;
	struct reading before;
	struct stream s = { 0 };
	uint32_t id, sid;
	int kfd;

	hl_init();
	kfd = hl_klog_start();
	if (!t_check(!vm_up(&src, true, true) && !vm_up(&dst, true, true),
		     "setup", "two VMs"))
		return t_done();
	id = count_ctx(&src.vcpus[0]);
	sid = smpl_ctx(&src, &src.vcpus[1]);
	if (!t_check(id && sid, "contexts", "count %u smpl %u", id, sid))
		return t_done();
	hl_call(&src.vcpus[0], io_fn, NULL);
	usleep(50000);
	read_counts(&src.vcpus[0], id, &before);
	if (export(&src, &s)) {
		t_busy(&src, &s);
		usleep(PAUSE_NS / 1000);
		t_counts(&src, &dst, &s, id, sid, &before);
		t_missing_event(&s, id);
		t_unbound(&s);
		t_malformed(&s);
	}
	hl_vm_destroy(&src);
	hl_vm_destroy(&dst);
	free(s.buf);
	hl_check_module_idle("module_idle");
	t_check(kfd >= 0 && hl_klog_concerns(kfd, 20, "migrate: L1 log: ") == 0,
		"l1_log_clean", "WARN/BUG/oops in L1's log (or unreadable)");
	return t_done();
}
