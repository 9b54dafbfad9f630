// SPDX-License-Identifier: GPL-2.0
/*
 * t_smpl: sampling into a guest buffer, overflow notifications, messages.
 *
 *   default format   a 2-page buffer registered as scattered guest pages
 *                    (two SMPL_REGISTER calls); VCPU_RUN_NS sampled every
 *                    1 ms recording VM_EXITS and HOST_PAGE_FAULTS, with
 *                    PFM_REGFL_OVFL_NOTIFY: the buffer fills to exactly
 *                    the count the format's rules give, entries straddle
 *                    pages intact, then one notification (eventfd +
 *                    PFM_MSG_OVFL) and the context is masked (nothing
 *                    counts; START is taken, and still nothing counts)
 *                    until RESTART, which empties the buffer and resumes
 *   randomization    PFM_REGFL_RANDOM: reset values vary within the mask
 *   full, no notify  without OVFL_NOTIFY a full buffer saturates the
 *                    context (perfmon2 v2.8x): masked, no notification,
 *                    no message, the buffer kept, RESTART refused (EBUSY)
 *   notify, no format  OVFL_NOTIFY: message, mask, long reset on RESTART;
 *                    PFM_FL_OVFL_NO_MSG: masked without a message
 *   reset_pmds       an overflow resets the PMDs in reg_reset_pmds:
 *                    sampling, at once to their short reset; notified
 *                    without a format, at RESTART to their long reset
 *   per-thread       samples and messages name the thread switched in
 *   message queue    32 deep: the oldest kept, the rest counted as lost
 *   SMPL_REGISTER    errors; pages registered (module stats:
 *                    pinned_pages) once per guest page, released with the
 *                    context
 *   dirty log        the pages the host wrote (command block results,
 *                    samples) are reported by KVMPFM_GET_DIRTY_LOG, as
 *                    live migration needs
 *
 * Each vCPU thread enters the guest once before the tests, as a QEMU
 * vCPU has before its first DOORBELL: the module learns the KVM vCPU a
 * thread runs when it enters the guest, and a sample records that
 * vCPU's RIP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "hostlib.h"

/* the engine's message queue depth (ARCHITECTURE.md: fixed-depth FIFO) */
#define MSGQ_DEPTH	32
#define SMPL_PAGES	2
/*
 * Each overflow is handled in host work that reaches back to the vCPU's
 * CPU by IPI: on the TCG rig under load that takes up to tens of ms, so
 * the effective sampling period is that, not the programmed one. Wait up
 * to this much of the vCPU thread's CPU for a buffer to fill.
 */
#define MAX_WAIT	(20000 * MS)
#define BIT(n)		(1ULL << ((n) % 64))
#define WORD(n)		((n) / 64)

static struct hl_vm vm;
static struct hl_vcpu *v0, *v1;

/* a buffer of @n pages at scattered gpas */
struct buf {
	int n;
	uint64_t gpa[8];
	uint8_t copy[8 * HL_PAGE];
};

static void buf_alloc(struct buf *b, int n)
{
	uint64_t base = hl_gpa_alloc(&vm, (2 * n + 1) * HL_PAGE);
	int i;

	b->n = n;
	/* reversed and spaced: page i at base + 2 (n - i) pages */
	for (i = 0; i < n; i++)
		b->gpa[i] = base + 2 * (n - i) * HL_PAGE;
}

/* the guest's view of the buffer, gathered from its pages */
static void buf_read(struct buf *b)
{
	int i;

	for (i = 0; i < b->n; i++)
		memcpy(b->copy + i * HL_PAGE, hl_hva(&vm, b->gpa[i]), HL_PAGE);
}

static pfm_dfl_smpl_hdr_t *buf_hdr(struct buf *b)
{
	return (pfm_dfl_smpl_hdr_t *)b->copy;
}

struct restart_req {
	uint32_t ctx;
	struct buf *b;
	int ret;
};

/*
 * On the vCPU's thread: RESTART, and the buffer read as soon as it
 * returns. The context counts the thread's CPU time again from then:
 * read later (after the hand-over back to the test's thread, slow on a
 * loaded rig), a period may have passed and a new sample be in.
 */
static int restart_read_fn(struct hl_vcpu *v, void *p)
{
	struct restart_req *r = p;
	int (*deliver)(struct cb_caller *, struct cb_cmd *) = v->cb.deliver;

	v->cb.deliver = hl_deliver_here;
	r->ret = cb_restart(&v->cb, r->ctx);
	v->cb.deliver = deliver;
	buf_read(r->b);
	return 0;
}

struct until_req {
	uint32_t ctx;
	bool start;
	uint64_t max_ns;	/* give up after this much CPU */
	uint64_t cpu, notes;
	int ret;
};

/* (START), burn CPU until the eventfd says a notification came */
static int until_notified_fn(struct hl_vcpu *v, void *p)
{
	struct until_req *r = p;
	uint64_t c0 = hl_thread_ns();

	r->notes = 0;
	if (r->start) {
		r->ret = cb_start(&v->cb, r->ctx);
		if (r->ret)
			return r->ret;
	}
	while (hl_thread_ns() - c0 < r->max_ns) {
		hl_busy_ns(200 * US);
		r->notes = hl_eventfd_read(v);
		if (r->notes)
			break;
	}
	r->cpu = hl_thread_ns() - c0;
	return 0;
}

static int busy_fn(struct hl_vcpu *v, void *p)
{
	(void)v;
	hl_busy_ns(*(uint64_t *)p);
	return 0;
}

/* the number of entries of @size the default format fits before "full" */
static uint64_t dfl_capacity(uint64_t buf_size, uint64_t size,
			     uint64_t min_space)
{
	uint64_t off = sizeof(pfm_dfl_smpl_hdr_t), n = 0;

	while (off + size <= buf_size) {
		off += size;
		n++;
		if (buf_size - off < min_space)
			break;
	}
	return n;
}

static void check_entries(const char *pfx, struct buf *b, uint64_t count,
			  uint64_t rip, uint64_t reset, uint64_t rmask,
			  uint32_t tid, uint32_t tgid)
{
	const size_t esz = sizeof(pfm_dfl_smpl_entry_t) + 2 * 8;
	uint64_t last_ts = 0, last_exits = 0, distinct = 0, prev_reset = 0;
	bool ok = true, ip_ok = true, reset_ok = true, ids_ok = true;
	char name[96], why[200] = "";
	uint64_t i;

	for (i = 0; i < count; i++) {
		pfm_dfl_smpl_entry_t *e = (void *)(b->copy + sizeof(pfm_dfl_smpl_hdr_t) +
						   i * esz);
		uint64_t *vals = (uint64_t *)(e + 1);

		if (e->ovfl_pmd != RUN_NS || e->set != 0 || e->cpu != 0 ||
		    e->tstamp < last_ts || vals[0] < last_exits) {
			if (ok)
				snprintf(why, sizeof(why), "entry %" PRIu64
					 ": pmd %u set %u cpu %u tstamp %" PRIu64
					 " (prev %" PRIu64 ") VM_EXITS %" PRIu64
					 " (prev %" PRIu64 ")", i, e->ovfl_pmd,
					 e->set, e->cpu, (uint64_t)e->tstamp,
					 last_ts, vals[0], last_exits);
			ok = false;
		}
		if (e->ip != rip)
			ip_ok = false;
		if (e->pid != tid || e->tgid != tgid)
			ids_ok = false;
		/* entry 0: the value written; then short resets */
		if (i && (e->last_reset_val > reset ||
			  e->last_reset_val < reset - rmask))
			reset_ok = false;
		if (i && e->last_reset_val != prev_reset)
			distinct++;
		prev_reset = e->last_reset_val;
		last_ts = e->tstamp;
		last_exits = vals[0];
	}
	snprintf(name, sizeof(name), "%s_entries_valid", pfx);
	t_check(ok && count, name, "%s", count ? why : "no entries");
	snprintf(name, sizeof(name), "%s_entries_ip_is_guest_rip", pfx);
	t_check(ip_ok, name, "want ip %#" PRIx64, rip);
	snprintf(name, sizeof(name), "%s_entries_thread", pfx);
	t_check(ids_ok, name, "want pid %u tgid %u", tid, tgid);
	snprintf(name, sizeof(name), "%s_entries_reset_values", pfx);
	t_check(reset_ok && (rmask ? distinct >= count / 4 : !distinct), name,
		"reset %#" PRIx64 " mask %#" PRIx64 ": %s, %" PRIu64
		" changes in %" PRIu64 " entries", reset, rmask,
		reset_ok ? "in range" : "out of range", distinct, count);
}

static int run_once_fn(struct hl_vcpu *v, void *unused)
{
	(void)unused;
	return hl_run_io(v, 1);
}

static int get_rip(struct hl_vcpu *v, void *p)
{
	struct kvm_regs regs;

	if (ioctl(v->fd, KVM_GET_REGS, &regs))
		return -1;
	*(uint64_t *)p = regs.rip;
	return 0;
}

static void sample_run(const char *pfx, uint64_t rmask)
{
	const uint64_t period = 1 * MS, bufsz = SMPL_PAGES * HL_PAGE;
	const uint64_t esz = sizeof(pfm_dfl_smpl_entry_t) + 2 * 8;
	struct kvmpfm_vm_stats s0, s1;
	struct until_req r = { .start = true, .max_ns = MAX_WAIT };
	pfarg_setinfo_t si;
	struct restart_req rr;
	uint64_t cap, rip = 0, v1val = 0, v2val = 0, gone;
	struct buf b;
	pfarg_pmd_t p;
	pfarg_msg_t m;
	char name[96];
	int ret;

	ret = cb_create_smpl(&v0->cb, PFM_FL_SYSTEM_WIDE, bufsz, &r.ctx);
	snprintf(name, sizeof(name), "%s_create", pfx);
	if (!t_check(!ret, name, "%s", hl_status_str(ret)))
		return;
	buf_alloc(&b, SMPL_PAGES);
	/* pages 1.. first, then page 0 */
	ret = cb_smpl_register(&v0->cb, r.ctx, 1, SMPL_PAGES - 1, &b.gpa[1]);
	snprintf(name, sizeof(name), "%s_load_before_all_pages_enobufs", pfx);
	HL_EXPECT(name, cb_load(&v0->cb, r.ctx, 0, 0, 0, v0->guest_tgid),
		  -ENOBUFS);
	ret = ret ? ret : cb_smpl_register(&v0->cb, r.ctx, 0, 1, &b.gpa[0]);
	snprintf(name, sizeof(name), "%s_register_scattered_pages", pfx);
	HL_EXPECT(name, ret, 0);
	buf_read(&b);
	snprintf(name, sizeof(name), "%s_header_written_at_register", pfx);
	t_check(buf_hdr(&b)->hdr_version == PFM_DFL_SMPL_VERSION &&
		buf_hdr(&b)->hdr_buf_size == bufsz && !buf_hdr(&b)->hdr_count &&
		buf_hdr(&b)->hdr_cur_offs == sizeof(pfm_dfl_smpl_hdr_t) &&
		buf_hdr(&b)->hdr_min_buf_space == 40 + 10 * 8, name,
		"version %#x size %" PRIu64 " count %" PRIu64 " offs %" PRIu64
		" min_space %" PRIu64, buf_hdr(&b)->hdr_version,
		(uint64_t)buf_hdr(&b)->hdr_buf_size,
		(uint64_t)buf_hdr(&b)->hdr_count,
		(uint64_t)buf_hdr(&b)->hdr_cur_offs,
		(uint64_t)buf_hdr(&b)->hdr_min_buf_space);

	cb_pmd_init(&p, RUN_NS, 0, -period);
	p.reg_short_reset = -period;
	p.reg_long_reset = -period;
	p.reg_smpl_pmds[WORD(VM_EXITS)] = BIT(VM_EXITS) | BIT(HOST_PAGE_FAULTS);
	/* a full buffer notifies only a PMD that asks */
	p.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	if (rmask) {
		p.reg_flags |= PFM_REGFL_RANDOM;
		p.reg_random_mask = rmask;
		p.reg_random_seed = 1234;
	}
	ret = cb_write_pmds(&v0->cb, r.ctx, &p, 1);
	ret = ret ? ret : cb_load(&v0->cb, r.ctx, 0, 0, 0, v0->guest_tgid);
	snprintf(name, sizeof(name), "%s_load", pfx);
	if (!t_check(!ret, name, "%s", hl_status_str(ret)))
		goto out;
	hl_call(v0, get_rip, &rip);
	hl_eventfd_read(v0);
	hl_vm_stats(&vm, &s0);
	ret = hl_call(v0, until_notified_fn, &r);
	hl_vm_stats(&vm, &s1);
	memset(&si, 0, sizeof(si));
	cb_getinfo_sets(&v0->cb, r.ctx, &si, 1);
	buf_read(&b);
	cap = dfl_capacity(bufsz, esz, 40 + 10 * 8);
	/*
	 * No sample lost to a full buffer: the only ones lost are overflows
	 * found a period or more late (the vCPU thread's host work counts on
	 * the task clock too), which getinfo counts.
	 */
	snprintf(name, sizeof(name), "%s_notified_when_full", pfx);
	t_check(!ret && r.notes == 1 && buf_hdr(&b)->hdr_count == cap &&
		buf_hdr(&b)->hdr_cur_offs == sizeof(pfm_dfl_smpl_hdr_t) + cap * esz &&
		buf_hdr(&b)->hdr_overflows == 1 &&
		s1.samples - s0.samples == cap &&
		s1.samples_lost - s0.samples_lost ==
		si.set_reserved3[PVPFM_SETINFO_OVFLS_LOST],
		name, "status %s eventfd %" PRIu64 " after %" PRIu64
		" ns CPU: hdr_count %" PRIu64 " (want %" PRIu64 "), cur_offs %"
		PRIu64 ", hdr_overflows %" PRIu64 ", samples +%" PRIu64
		" lost +%" PRIu64 " (found late %" PRIu64 ")",
		hl_status_str(ret), r.notes, r.cpu,
		(uint64_t)buf_hdr(&b)->hdr_count, cap,
		(uint64_t)buf_hdr(&b)->hdr_cur_offs,
		(uint64_t)buf_hdr(&b)->hdr_overflows,
		(uint64_t)(s1.samples - s0.samples),
		(uint64_t)(s1.samples_lost - s0.samples_lost),
		(uint64_t)si.set_reserved3[PVPFM_SETINFO_OVFLS_LOST]);
	/* no faster than the period (randomized: period - mask) */
	snprintf(name, sizeof(name), "%s_not_faster_than_period", pfx);
	t_check(r.cpu + HL_BRACKET_ABS >= cap * (period - rmask), name,
		"%" PRIu64 " samples of %" PRIu64 " ns (mask %#" PRIx64
		") took only %" PRIu64 " ns of CPU", cap, period, rmask, r.cpu);
	t_note("%s: %" PRIu64 " samples of period %" PRIu64 " ns in %" PRIu64
	       " ns of CPU: %" PRIu64 " ns per sample", pfx, cap, period,
	       r.cpu, cap ? r.cpu / cap : 0);
	check_entries(pfx, &b, buf_hdr(&b)->hdr_count, rip, -period, rmask,
		      0, 0);

	memset(&m, 0, sizeof(m));
	ret = cb_read_msg(&v0->cb, r.ctx, &m);
	snprintf(name, sizeof(name), "%s_ovfl_message", pfx);
	t_check(!ret && m.type == PFM_MSG_OVFL &&
		(m.pfm_ovfl_msg.msg_ovfl_pmds[WORD(RUN_NS)] == BIT(RUN_NS)) &&
		m.pfm_ovfl_msg.msg_active_set == 0 &&
		m.pfm_ovfl_msg.msg_ovfl_cpu == 0 &&
		m.pfm_ovfl_msg.msg_ovfl_ip == rip, name,
		"status %s type %u pmds[4] %#" PRIx64 " set %u cpu %u ip %#"
		PRIx64, hl_status_str(ret), m.type,
		(uint64_t)m.pfm_ovfl_msg.msg_ovfl_pmds[4],
		m.pfm_ovfl_msg.msg_active_set, m.pfm_ovfl_msg.msg_ovfl_cpu,
		(uint64_t)m.pfm_ovfl_msg.msg_ovfl_ip);
	snprintf(name, sizeof(name), "%s_one_message", pfx);
	HL_EXPECT(name, cb_read_msg(&v0->cb, r.ctx, &m), -EAGAIN);

	/* masked: nothing counts; START is taken (perfmon2), no count still */
	cb_read_pmd(&v0->cb, r.ctx, 0, RUN_NS, &v1val);
	hl_call(v0, busy_fn, &(uint64_t){ 10 * MS });
	cb_read_pmd(&v0->cb, r.ctx, 0, RUN_NS, &v2val);
	snprintf(name, sizeof(name), "%s_masked_does_not_count", pfx);
	t_check(v1val == v2val, name, "RUN_NS %#" PRIx64 " then %#" PRIx64,
		v1val, v2val);
	snprintf(name, sizeof(name), "%s_start_masked_ok", pfx);
	HL_EXPECT(name, cb_start(&v0->cb, r.ctx), 0);
	hl_call(v0, busy_fn, &(uint64_t){ 10 * MS });
	cb_read_pmd(&v0->cb, r.ctx, 0, RUN_NS, &v2val);
	snprintf(name, sizeof(name), "%s_started_masked_does_not_count", pfx);
	t_check(v1val == v2val, name, "RUN_NS %#" PRIx64 " then %#" PRIx64
		" after START", v1val, v2val);

	/* RESTART: empty buffer, counting again, second notification */
	rr.ctx = r.ctx;
	rr.b = &b;
	hl_call(v0, restart_read_fn, &rr);
	snprintf(name, sizeof(name), "%s_restart", pfx);
	HL_EXPECT(name, rr.ret, 0);
	/*
	 * emptied, and counting again: a period of the vCPU's run time may
	 * pass before the read (a vCPU thread preempted in the guest), and
	 * its entry is then the first of a new fill
	 */
	snprintf(name, sizeof(name), "%s_restart_empties_buffer", pfx);
	t_check(buf_hdr(&b)->hdr_count < cap &&
		buf_hdr(&b)->hdr_cur_offs == sizeof(pfm_dfl_smpl_hdr_t) +
		buf_hdr(&b)->hdr_count * esz, name,
		"hdr_count %" PRIu64 " of %" PRIu64 ", cur_offs %" PRIu64,
		(uint64_t)buf_hdr(&b)->hdr_count, cap,
		(uint64_t)buf_hdr(&b)->hdr_cur_offs);
	r.start = false;
	ret = hl_call(v0, until_notified_fn, &r);
	buf_read(&b);
	snprintf(name, sizeof(name), "%s_second_fill_notified", pfx);
	t_check(!ret && r.notes == 1 && buf_hdr(&b)->hdr_count == cap &&
		buf_hdr(&b)->hdr_overflows == 2 &&
		!cb_read_msg(&v0->cb, r.ctx, &m) && m.type == PFM_MSG_OVFL,
		name,
		"eventfd %" PRIu64 " hdr_count %" PRIu64 " overflows %" PRIu64
		" msg type %u", r.notes, (uint64_t)buf_hdr(&b)->hdr_count,
		(uint64_t)buf_hdr(&b)->hdr_overflows, m.type);
	cb_restart(&v0->cb, r.ctx);
	cb_stop(&v0->cb, r.ctx);
out:
	/* the pages stay pinned while the context lives, then are released */
	cb_unload(&v0->cb, r.ctx);
	{
		struct kvmpfm_module_stats ms;

		hl_module_stats(&ms);
		snprintf(name, sizeof(name), "%s_pages_pinned", pfx);
		t_check(ms.pinned_pages == SMPL_PAGES, name, "pinned_pages %"
			PRId64 " with a %d-page buffer registered",
			(int64_t)ms.pinned_pages, SMPL_PAGES);
		cb_destroy(&v0->cb, r.ctx);
		hl_module_stats(&ms);
		gone = ms.pinned_pages;
		snprintf(name, sizeof(name), "%s_pages_released", pfx);
		t_check(!gone, name, "pinned_pages %" PRIu64
			" after the context was destroyed", gone);
	}
}

struct masked_req {
	uint32_t ctx;
	uint64_t max_ns;	/* give up after this much CPU */
	uint64_t cpu, notes;
	uint32_t state;		/* PVPFM_CTX_* */
	int ret;
};

/* START, burn CPU until CTX_STATE says masked; eventfd signals counted */
static int until_masked_fn(struct hl_vcpu *v, void *p)
{
	struct masked_req *r = p;
	uint64_t c0 = hl_thread_ns();

	r->state = 0;
	r->ret = cb_start(&v->cb, r->ctx);
	while (!r->ret && hl_thread_ns() - c0 < r->max_ns) {
		hl_busy_ns(200 * US);
		r->ret = hl_ctx_state(&v->cb, r->ctx, &r->state);
		if (r->state & PVPFM_CTX_MASKED)
			break;
	}
	r->cpu = hl_thread_ns() - c0;
	r->notes = hl_eventfd_read(v);
	return r->ret;
}

/*
 * A full buffer whose PMD asked for no notification: the context
 * saturates (perfmon2 v2.8x): masked, nothing notified (no eventfd
 * signal, no message), the samples kept, nothing counts, RESTART refused
 */
static void t_full_no_notify(void)
{
	const uint64_t esz = sizeof(pfm_dfl_smpl_entry_t);
	struct masked_req r = { .max_ns = MAX_WAIT };
	uint64_t cap = dfl_capacity(HL_PAGE, esz, 40 + 10 * 8), a = 0, b = 0;
	struct buf bf;
	pfarg_pmd_t p;
	pfarg_msg_t m;
	int ret;

	buf_alloc(&bf, 1);
	ret = cb_create_smpl(&v0->cb, PFM_FL_SYSTEM_WIDE, HL_PAGE, &r.ctx);
	ret = ret ? ret : cb_smpl_register(&v0->cb, r.ctx, 0, 1, bf.gpa);
	cb_pmd_init(&p, RUN_NS, 0, -(1 * MS));
	p.reg_short_reset = -(1 * MS);
	p.reg_long_reset = -(1 * MS);
	ret = ret ? ret : cb_write_pmds(&v0->cb, r.ctx, &p, 1);
	ret = ret ? ret : cb_load(&v0->cb, r.ctx, 0, 0, 0, v0->guest_tgid);
	hl_eventfd_read(v0);
	ret = ret ? ret : hl_call(v0, until_masked_fn, &r);
	buf_read(&bf);
	t_check(!ret && (r.state & PVPFM_CTX_MASKED) &&
		!(r.state & PVPFM_CTX_BLOCKED) && !r.notes &&
		buf_hdr(&bf)->hdr_count == cap &&
		buf_hdr(&bf)->hdr_overflows == 1,
		"smpl_full_no_notify_saturates",
		"status %s after %" PRIu64 " ns CPU: CTX_STATE %#x, eventfd %"
		PRIu64 " (want 0), hdr_count %" PRIu64 " (want %" PRIu64
		"), hdr_overflows %" PRIu64, hl_status_str(ret), r.cpu,
		r.state, r.notes, (uint64_t)buf_hdr(&bf)->hdr_count, cap,
		(uint64_t)buf_hdr(&bf)->hdr_overflows);
	HL_EXPECT("smpl_full_no_notify_no_message",
		  cb_read_msg(&v0->cb, r.ctx, &m), -EAGAIN);
	/* started, masked: nothing counts */
	cb_read_pmd(&v0->cb, r.ctx, 0, RUN_NS, &a);
	hl_call(v0, busy_fn, &(uint64_t){ 10 * MS });
	cb_read_pmd(&v0->cb, r.ctx, 0, RUN_NS, &b);
	t_check(a == b, "smpl_saturated_does_not_count",
		"RUN_NS %#" PRIx64 " then %#" PRIx64, a, b);
	/* nothing was notified: nothing to restart, the buffer stays full */
	ret = cb_restart(&v0->cb, r.ctx);
	buf_read(&bf);
	t_check(ret == -EBUSY && buf_hdr(&bf)->hdr_count == cap,
		"smpl_saturated_restart_ebusy", "status %s hdr_count %" PRIu64,
		hl_status_str(ret), (uint64_t)buf_hdr(&bf)->hdr_count);
	cb_unload(&v0->cb, r.ctx);
	cb_destroy(&v0->cb, r.ctx);
}

static void t_notify_no_format(void)
{
	struct until_req r = { .start = true, .max_ns = MAX_WAIT };
	uint64_t a = 0, b = 0;
	uint32_t st = 0;
	pfarg_pmd_t p;
	pfarg_msg_t m;
	int ret;

	ret = cb_create(&v0->cb, PFM_FL_SYSTEM_WIDE, &r.ctx);
	cb_pmd_init(&p, RUN_NS, 0, -(2 * MS));
	p.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	p.reg_long_reset = -(300 * MS);
	p.reg_short_reset = -(700 * MS);
	ret = ret ? ret : cb_write_pmds(&v0->cb, r.ctx, &p, 1);
	ret = ret ? ret : cb_load(&v0->cb, r.ctx, 0, 0, 0, v0->guest_tgid);
	hl_eventfd_read(v0);
	ret = ret ? ret : hl_call(v0, until_notified_fn, &r);
	t_check(!ret && r.notes == 1 && r.cpu + HL_BRACKET_ABS >= 2 * MS,
		"notify_eventfd_on_overflow",
		"status %s eventfd %" PRIu64 " after %" PRIu64
		" ns of CPU (period 2 ms)", hl_status_str(ret), r.notes, r.cpu);
	t_note("notification after %" PRIu64 " us of CPU for a 2 ms period",
	       r.cpu / 1000);
	ret = cb_read_msg(&v0->cb, r.ctx, &m);
	t_check(!ret && m.type == PFM_MSG_OVFL &&
		m.pfm_ovfl_msg.msg_ovfl_pmds[WORD(RUN_NS)] == BIT(RUN_NS),
		"notify_message", "status %s type %u pmds %#" PRIx64,
		hl_status_str(ret), m.type,
		(uint64_t)m.pfm_ovfl_msg.msg_ovfl_pmds[4]);
	cb_read_pmd(&v0->cb, r.ctx, 0, RUN_NS, &a);
	hl_call(v0, busy_fn, &(uint64_t){ 5 * MS });
	cb_read_pmd(&v0->cb, r.ctx, 0, RUN_NS, &b);
	t_check(a == b, "notify_masked_frozen", "%#" PRIx64 " then %#" PRIx64,
		a, b);
	HL_EXPECT("notify_restart", cb_restart(&v0->cb, r.ctx), 0);
	memset(&p, 0, sizeof(p));
	p.reg_num = RUN_NS;
	cb_read_pmds(&v0->cb, r.ctx, &p, 1);
	/*
	 * counting again from the long reset value; the reset is long enough
	 * that the vCPU time of the doorbells since cannot wrap it on a
	 * loaded rig
	 */
	t_check(p.reg_last_reset_val == -(300 * MS) &&
		p.reg_value >= -(300 * MS),
		"notify_restart_long_reset",
		"value %#" PRIx64 " last reset %#" PRIx64 " (long reset -300 ms)",
		(uint64_t)p.reg_value, (uint64_t)p.reg_last_reset_val);
	cb_stop(&v0->cb, r.ctx);
	cb_unload(&v0->cb, r.ctx);
	cb_destroy(&v0->cb, r.ctx);
	/*
	 * counting from the long reset until the stop, the context may have
	 * notified once more on a slow rig: not the next context's
	 */
	hl_eventfd_read(v0);

	/* no message: masked all the same, notified without one (SIGIO) */
	ret = cb_create(&v0->cb, PFM_FL_SYSTEM_WIDE | PFM_FL_OVFL_NO_MSG,
			&r.ctx);
	cb_pmd_init(&p, RUN_NS, 0, -(2 * MS));
	p.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	ret = ret ? ret : cb_write_pmds(&v0->cb, r.ctx, &p, 1);
	ret = ret ? ret : cb_load(&v0->cb, r.ctx, 0, 0, 0, v0->guest_tgid);
	r.max_ns = 20 * MS;
	r.start = true;
	ret = ret ? ret : hl_call(v0, until_notified_fn, &r);
	/* masked: START is taken (perfmon2), RESTART is what resumes */
	t_check(!ret && r.notes == 1 &&
		cb_read_msg(&v0->cb, r.ctx, &m) == -EAGAIN &&
		!hl_ctx_state(&v0->cb, r.ctx, &st) && (st & PVPFM_CTX_MASKED) &&
		!cb_start(&v0->cb, r.ctx),
		"notify_no_msg_masked_no_message",
		"status %s eventfd %" PRIu64 " CTX_STATE %#x",
		hl_status_str(ret), r.notes, st);
	HL_EXPECT("notify_no_msg_restart", cb_restart(&v0->cb, r.ctx), 0);
	cb_unload(&v0->cb, r.ctx);
	cb_destroy(&v0->cb, r.ctx);
}

/*
 * RUN_NS overflows after 2 ms and resets VM_EXITS (its reg_reset_pmds).
 * Sampling, nothing notified: VM_EXITS goes to its short reset at the
 * overflow. Notified, no format: the resets wait with the mask, then
 * VM_EXITS goes to its long reset at RESTART.
 */
static void t_reset_pmds(void)
{
	const uint64_t mark = 0x100000000ULL, long_mark = 0x200000000ULL;
	struct until_req r = { .start = true, .max_ns = MAX_WAIT };
	struct kvmpfm_vm_stats s0, s1;
	uint64_t val = 0, held = 0;
	uint32_t id = 0;
	pfarg_pmd_t p[2];
	struct buf b;
	int ret;

	buf_alloc(&b, 1);
	ret = cb_create_smpl(&v0->cb, PFM_FL_SYSTEM_WIDE, HL_PAGE, &id);
	ret = ret ? ret : cb_smpl_register(&v0->cb, id, 0, 1, b.gpa);
	cb_pmd_init(&p[0], RUN_NS, 0, -(2 * MS));
	p[0].reg_short_reset = -(100 * MS);
	p[0].reg_reset_pmds[WORD(VM_EXITS)] = BIT(VM_EXITS);
	cb_pmd_init(&p[1], VM_EXITS, 0, 77);
	p[1].reg_short_reset = mark;
	ret = ret ? ret : cb_write_pmds(&v0->cb, id, p, 2);
	ret = ret ? ret : cb_load(&v0->cb, id, 0, 0, 0, v0->guest_tgid);
	hl_vm_stats(&vm, &s0);
	ret = ret ? ret : hl_start_busy_stop(v0, id, 10 * MS, NULL, NULL);
	hl_vm_stats(&vm, &s1);
	cb_read_pmd(&v0->cb, id, 0, VM_EXITS, &val);
	buf_read(&b);
	t_check(!ret && s1.overflows - s0.overflows == 1 &&
		buf_hdr(&b)->hdr_count == 1 && val >= mark && val < mark + 100,
		"reset_pmds_reset_on_overflow",
		"status %s overflows +%" PRIu64 " samples %" PRIu64
		" VM_EXITS %#" PRIx64 " (want its short reset %#" PRIx64 ")",
		hl_status_str(ret), (uint64_t)(s1.overflows - s0.overflows),
		(uint64_t)buf_hdr(&b)->hdr_count, val, mark);
	cb_unload(&v0->cb, id);
	cb_destroy(&v0->cb, id);

	ret = cb_create(&v0->cb, PFM_FL_SYSTEM_WIDE, &r.ctx);
	cb_pmd_init(&p[0], RUN_NS, 0, -(2 * MS));
	p[0].reg_flags = PFM_REGFL_OVFL_NOTIFY;
	p[0].reg_long_reset = -(100 * MS);
	p[0].reg_reset_pmds[WORD(VM_EXITS)] = BIT(VM_EXITS);
	cb_pmd_init(&p[1], VM_EXITS, 0, 77);
	p[1].reg_short_reset = mark;
	p[1].reg_long_reset = long_mark;
	ret = ret ? ret : cb_write_pmds(&v0->cb, r.ctx, p, 2);
	ret = ret ? ret : cb_load(&v0->cb, r.ctx, 0, 0, 0, v0->guest_tgid);
	hl_eventfd_read(v0);
	ret = ret ? ret : hl_call(v0, until_notified_fn, &r);
	cb_read_pmd(&v0->cb, r.ctx, 0, VM_EXITS, &held);
	ret = ret ? ret : cb_restart(&v0->cb, r.ctx);
	cb_stop(&v0->cb, r.ctx);
	cb_read_pmd(&v0->cb, r.ctx, 0, VM_EXITS, &val);
	t_check(!ret && r.notes == 1 && held < mark && val >= long_mark &&
		val < long_mark + 100, "reset_pmds_long_reset_on_restart",
		"status %s eventfd %" PRIu64 ": VM_EXITS %#" PRIx64
		" while masked (want no reset yet), %#" PRIx64 " after RESTART"
		" (want its long reset %#" PRIx64 ")", hl_status_str(ret),
		r.notes, held, val, long_mark);
	cb_unload(&v0->cb, r.ctx);
	cb_destroy(&v0->cb, r.ctx);
}

struct thr_req {
	uint32_t ctx, tid;
	uint64_t cpu, notes;
	int ret;
};

/* switch the thread in, start, burn until notified, switch out */
static int thread_sample_fn(struct hl_vcpu *v, void *p)
{
	struct thr_req *r = p;
	struct until_req u = { .ctx = r->ctx, .start = true, .max_ns = MAX_WAIT };
	int ret = cb_switch(&v->cb, 0, r->ctx, r->tid, v->guest_tgid);

	if (!ret)
		ret = until_notified_fn(v, &u);
	if (!ret)
		ret = cb_switch(&v->cb, r->ctx, 0, 0, v->guest_tgid);
	r->cpu = u.cpu;
	r->notes = u.notes;
	return ret;
}

static void t_thread_samples(void)
{
	const uint64_t esz = sizeof(pfm_dfl_smpl_entry_t) + 2 * 8;
	struct thr_req r = { .tid = 777 };
	uint64_t rip = 0;
	struct buf b;
	pfarg_pmd_t p;
	pfarg_msg_t m;
	int ret;

	buf_alloc(&b, 2);
	ret = cb_create_smpl(&v1->cb, 0, 2 * HL_PAGE, &r.ctx);
	ret = ret ? ret : cb_smpl_register(&v1->cb, r.ctx, 0, 2, b.gpa);
	cb_pmd_init(&p, RUN_NS, 0, -(1 * MS));
	p.reg_flags = PFM_REGFL_OVFL_NOTIFY;	/* the full buffer notified */
	p.reg_short_reset = -(1 * MS);
	p.reg_smpl_pmds[WORD(VM_EXITS)] = BIT(VM_EXITS) | BIT(HOST_PAGE_FAULTS);
	ret = ret ? ret : cb_write_pmds(&v1->cb, r.ctx, &p, 1);
	ret = ret ? ret : cb_load(&v1->cb, r.ctx, 777, 0, 0, v1->guest_tgid);
	hl_call(v1, get_rip, &rip);
	hl_eventfd_read(v1);
	ret = ret ? ret : hl_call(v1, thread_sample_fn, &r);
	buf_read(&b);
	t_check(!ret && r.notes == 1 && buf_hdr(&b)->hdr_count ==
		dfl_capacity(2 * HL_PAGE, esz, 120), "thread_samples_filled",
		"status %s eventfd %" PRIu64 " count %" PRIu64,
		hl_status_str(ret), r.notes, (uint64_t)buf_hdr(&b)->hdr_count);
	{
		pfm_dfl_smpl_entry_t *e = (void *)(b.copy + sizeof(pfm_dfl_smpl_hdr_t));

		t_check(e->pid == 777 && e->tgid == v1->guest_tgid && e->cpu == 1 &&
			e->ip == rip, "thread_samples_name_thread",
			"entry 0: pid %u tgid %u cpu %u ip %#" PRIx64,
			e->pid, e->tgid, e->cpu, (uint64_t)e->ip);
	}
	ret = cb_read_msg(&v1->cb, r.ctx, &m);
	t_check(!ret && m.type == PFM_MSG_OVFL &&
		m.pfm_ovfl_msg.msg_ovfl_tid == 777 &&
		m.pfm_ovfl_msg.msg_ovfl_pid == v1->guest_tgid &&
		m.pfm_ovfl_msg.msg_ovfl_cpu == 1, "thread_message_names_thread",
		"status %s tid %u pid %u cpu %u", hl_status_str(ret),
		m.pfm_ovfl_msg.msg_ovfl_tid, m.pfm_ovfl_msg.msg_ovfl_pid,
		m.pfm_ovfl_msg.msg_ovfl_cpu);
	cb_unload(&v1->cb, r.ctx);
	cb_destroy(&v1->cb, r.ctx);
}

static void t_msg_queue(void)
{
	struct kvmpfm_vm_stats s0, s1;
	pfarg_msg_t m;
	uint32_t id = 0;
	int i, got = 0, ret = 0;

	cb_create(&v0->cb, 0, &id);
	hl_vm_stats(&vm, &s0);
	for (i = 0; i < 40 && !ret; i++) {
		ret = cb_load(&v0->cb, id, 4242, 0, 0, v0->guest_tgid);
		ret = ret ? ret : cb_unload_flags(&v0->cb, id,
						  PVPFM_UNLOAD_TASK_EXIT);
	}
	hl_vm_stats(&vm, &s1);
	while (!cb_read_msg(&v0->cb, id, &m) && m.type == PFM_MSG_END)
		got++;
	t_check(!ret && got == MSGQ_DEPTH &&
		s1.messages - s0.messages == MSGQ_DEPTH &&
		s1.messages_lost - s0.messages_lost == 40 - MSGQ_DEPTH,
		"msg_queue_depth_32",
		"status %s: read %d END messages of 40, messages +%" PRIu64
		" lost +%" PRIu64, hl_status_str(ret), got,
		(uint64_t)(s1.messages - s0.messages),
		(uint64_t)(s1.messages_lost - s0.messages_lost));
	cb_destroy(&v0->cb, id);
}

static void t_register(void)
{
	struct kvmpfm_module_stats ms;
	uint32_t plain = 0, id = 0;
	uint64_t g[4], base = hl_gpa_alloc(&vm, 4 * HL_PAGE);
	int ret;

	cb_create(&v0->cb, PFM_FL_SYSTEM_WIDE, &plain);
	g[0] = base;
	HL_EXPECT("register_no_format_einval",
		  cb_smpl_register(&v0->cb, plain, 0, 1, g), -EINVAL);
	cb_destroy(&v0->cb, plain);

	cb_create_smpl(&v0->cb, PFM_FL_SYSTEM_WIDE, 2 * HL_PAGE, &id);
	g[0] = base;
	g[1] = base + HL_PAGE;
	g[2] = base + 2 * HL_PAGE;
	HL_EXPECT("register_past_buffer_einval",
		  cb_smpl_register(&v0->cb, id, 1, 2, g), -EINVAL);
	HL_EXPECT("register_first_past_einval",
		  cb_smpl_register(&v0->cb, id, 3, 0, g), -EINVAL);
	g[1] = base + 100;
	ret = cb_smpl_register(&v0->cb, id, 0, 2, g);
	t_check(ret == -EFAULT && v0->cb.hdr.err_index == 1,
		"register_unaligned_efault", "status %s err_index %u",
		hl_status_str(ret), v0->cb.hdr.err_index);
	g[1] = HL_MEM_SIZE + 16 * HL_PAGE;
	ret = cb_smpl_register(&v0->cb, id, 0, 2, g);
	t_check(ret == -EFAULT && v0->cb.hdr.err_index == 1,
		"register_outside_ram_efault", "status %s err_index %u",
		hl_status_str(ret), v0->cb.hdr.err_index);
	{
		/* nr_pages says 2, the argument holds 1 */
		struct {
			struct pvpfm_smpl_register_arg a;
			uint64_t gpa[1];
		} arg = { { 0, 2 }, { base } };

		HL_EXPECT("register_size_mismatch_einval",
			  cb_cmd(&v0->cb, PVPFM_CMD_SMPL_REGISTER, id, 0, &arg,
				 sizeof(arg)), -EINVAL);
	}
	/* the same guest page for both buffer pages: pinned once */
	g[0] = g[1] = base + 3 * HL_PAGE;
	ret = cb_smpl_register(&v0->cb, id, 0, 2, g);
	hl_module_stats(&ms);
	t_check(!ret && ms.pinned_pages >= 1, "register_same_page_twice_ok",
		"status %s pinned %" PRId64, hl_status_str(ret),
		(int64_t)ms.pinned_pages);
	/* re-register page 1 elsewhere: the old pin goes */
	g[0] = base;
	HL_EXPECT("register_replace_page_ok",
		  cb_smpl_register(&v0->cb, id, 1, 1, g), 0);
	HL_EXPECT("register_load_ok",
		  cb_load(&v0->cb, id, 0, 0, 0, v0->guest_tgid), 0);
	HL_EXPECT("register_loaded_ebusy",
		  cb_smpl_register(&v0->cb, id, 0, 1, g), -EBUSY);
	cb_unload(&v0->cb, id);
	cb_destroy(&v0->cb, id);
	hl_module_stats(&ms);
	t_check(!ms.pinned_pages, "register_pins_released",
		"pinned_pages %" PRId64 " after destroy", (int64_t)ms.pinned_pages);
}

/*
 * Live migration copies the guest pages its dirty log reports; QEMU adds
 * the module's (KVMPFM_GET_DIRTY_LOG) to KVM's at each sync: what the
 * host writes into guest RAM (command block results, samples, the
 * buffer header) must be in it, or a migrated guest sees stale results
 * and loses samples.
 */
static void t_dirty_log(void)
{
	static uint8_t bm[HL_DIRTY_BYTES];
	struct until_req r = { .start = true, .max_ns = MAX_WAIT };
	struct pvpfm_pmu_info info;
	struct hl_vm dvm;
	struct hl_vcpu *v;
	struct hl_vm_opts o;
	pfarg_pmd_t p;
	uint64_t buf;
	int ret;

	o = hl_vm_opts_simple(1);
	o.dirty_log = true;
	if (!hl_check_vm("dirty_log_setup", hl_vm_create(&dvm, &o)))
		return;
	v = &dvm.vcpus[0];
	hl_dirty_log(&dvm, bm);		/* start clean */
	ret = cb_pmu_info(&v->cb, &info);
	hl_dirty_log(&dvm, bm);
	t_check(!ret && hl_dirty(bm, v->cmd_gpa), "dirty_log_command_block",
		"status %s: the command block page %#" PRIx64 " the host wrote "
		"results to is not in the module's dirty log",
		hl_status_str(ret),
		(uint64_t)v->cmd_gpa);

	buf = hl_gpa_alloc(&dvm, HL_PAGE);
	ret = cb_create_smpl(&v->cb, PFM_FL_SYSTEM_WIDE, HL_PAGE, &r.ctx);
	ret = ret ? ret : cb_smpl_register(&v->cb, r.ctx, 0, 1, &buf);
	cb_pmd_init(&p, RUN_NS, 0, -(1 * MS));
	p.reg_flags = PFM_REGFL_OVFL_NOTIFY;	/* the full buffer notified */
	p.reg_short_reset = -(1 * MS);
	ret = ret ? ret : cb_write_pmds(&v->cb, r.ctx, &p, 1);
	ret = ret ? ret : cb_load(&v->cb, r.ctx, 0, 0, 0, v->guest_tgid);
	hl_dirty_log(&dvm, bm);
	ret = ret ? ret : hl_call(v, until_notified_fn, &r);
	hl_dirty_log(&dvm, bm);
	t_check(!ret && r.notes && ((pfm_dfl_smpl_hdr_t *)hl_hva(&dvm, buf))->hdr_count &&
		hl_dirty(bm, buf), "dirty_log_sampling_buffer",
		"status %s, %" PRIu64 " samples: the buffer page %#" PRIx64
		" the host wrote them to is %sin the module's dirty log",
		hl_status_str(ret),
		(uint64_t)((pfm_dfl_smpl_hdr_t *)hl_hva(&dvm, buf))->hdr_count,
		buf, hl_dirty(bm, buf) ? "" : "not ");
	hl_vm_destroy(&dvm);
}

int main(void)
{
	int ret;

	hl_init();
	hl_check_allow_host_page_faults();
	if (!hl_check_vm("smpl_vm_setup", hl_vm_simple(&vm, 2)))
		return t_done();
	v0 = &vm.vcpus[0];
	v1 = &vm.vcpus[1];
	ret = hl_call(v0, run_once_fn, NULL);
	ret = ret ? ret : hl_call(v1, run_once_fn, NULL);
	if (!t_check(!ret, "smpl_vcpus_entered", "KVM_RUN: %s",
		     hl_errname(ret)))
		return t_done();
	sample_run("smpl", 0);
	sample_run("smpl_random", 0xffff);
	t_full_no_notify();
	t_notify_no_format();
	t_reset_pmds();
	t_thread_samples();
	t_msg_queue();
	t_register();
	t_dirty_log();
	hl_vm_destroy(&vm);
	hl_check_module_idle("smpl_module_idle");
	return t_done();
}
