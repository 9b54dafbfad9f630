// SPDX-License-Identifier: GPL-2.0
/*
 * The migration stream: a VM's whole perfmon2 state out of one engine and
 * into another (pfm_engine_save, pfm_engine_restore).
 *
 * Not in the stream: the host's figures (engine stats: each host counts
 * its own), the backend's state (it reopens what the contexts need), and
 * the samples themselves (they are in guest memory, which migrates).
 *
 * The reader trusts nothing: every count, index, flag and offset is
 * checked before use, every allocation is bounded by this VM's limits,
 * and a stream that fails leaves the engine as created.
 */
#include "pfm_stream.h"

/* ---- writing ------------------------------------------------------------ */

/* appends to @buf while it has room; counts all the same */
struct writer {
	u8 *buf;
	size_t len, off;
};

static void put(struct writer *w, const void *p, size_t n)
{
	if (w->buf && w->off + n <= w->len)
		pfm_memcpy(w->buf + w->off, p, n);
	w->off += n;
}

static void put_rec(struct writer *w, u16 type, size_t size)
{
	struct pfm_stream_rec r = { .type = type, .size = size };

	put(w, &r, sizeof(r));
}

static void save_set(struct pfm_engine *e, struct writer *w,
		     struct pfm_context *ctx, struct pfm_set *set)
{
	struct pfm_stream_set s;
	struct pfm_stream_pmc pmc;
	struct pfm_stream_pmd pmd;
	const struct pfm_pmd *p;
	u16 i;

	pfm_memset(&s, 0, sizeof(s));
	s.ctx_id = ctx->id;
	s.id = set->id;
	s.nr_pmcs = e->pmu.nr_pmcs;
	s.nr_pmds = e->pmu.nr_pmds;
	s.flags = set->flags;
	s.timeout = set->timeout;
	s.timeout_left = pfm_set_timeout_left(e, ctx, set);
	s.runs = set->runs;
	s.act_duration = pfm_set_act_duration(e, ctx, set);
	s.host_enabled_ns = set->host_enabled_ns;
	s.host_running_ns = set->host_running_ns;
	pfm_memcpy(s.ovfl_pmds, set->ovfl_pmds, sizeof(s.ovfl_pmds));
	pfm_memcpy(s.used_pmcs, set->used_pmcs, sizeof(s.used_pmcs));
	pfm_memcpy(s.used_pmds, set->used_pmds, sizeof(s.used_pmds));
	put_rec(w, PFM_STREAM_REC_SET, sizeof(s) + s.nr_pmcs * sizeof(pmc) +
					s.nr_pmds * sizeof(pmd));
	put(w, &s, sizeof(s));
	for (i = 0; i < e->pmu.nr_pmcs; i++) {
		pmc.num = e->pmu.pmc[i].num;
		pmc.value = set->pmcs[i];
		put(w, &pmc, sizeof(pmc));
	}
	for (i = 0; i < e->pmu.nr_pmds; i++) {
		p = &set->pmds[i];
		pfm_memset(&pmd, 0, sizeof(pmd));
		pmd.num = e->pmu.pmd[i].num;
		pmd.flags = p->flags;
		pmd.seed = p->seed;
		/* a live counter's low bits are in the host: read them */
		pmd.value = pfm_pmd_read(e, ctx, set, pmd.num);
		pmd.lval = p->lval;
		pmd.long_reset = p->long_reset;
		pmd.short_reset = p->short_reset;
		pmd.eventid = p->eventid;
		pmd.random_mask = p->random_mask;
		pmd.ovflsw_thres = p->ovflsw_thres;
		pmd.ovflsw_ref = p->ovflsw_ref;
		pfm_memcpy(pmd.reset_pmds, p->reset_pmds, sizeof(pmd.reset_pmds));
		pfm_memcpy(pmd.smpl_pmds, p->smpl_pmds, sizeof(pmd.smpl_pmds));
		put(w, &pmd, sizeof(pmd));
	}
}

static void save_ctx(struct pfm_engine *e, struct writer *w,
		     struct pfm_context *ctx)
{
	struct pfm_stream_pages pg;
	struct pfm_stream_ctx c;
	u32 i;

	pfm_memset(&c, 0, sizeof(c));
	c.id = ctx->id;
	c.flags = ctx->flags;
	c.state = ctx->state;
	c.vcpu = ctx->vcpu;
	c.load_pid = ctx->load_pid;
	c.tid = ctx->tid;
	c.tgid = ctx->tgid;
	c.nr_sets = ctx->nr_sets;
	c.active_set = ctx->active->id;
	c.has_reset = !!ctx->reset_set;
	c.reset_set = ctx->reset_set ? ctx->reset_set->id : 0;
	c.started = ctx->started;
	c.blocked = ctx->blocked;
	c.saturated = ctx->saturated;
	c.switch_pending = ctx->switch_pending;
	c.smpl_fmt = ctx->smpl.fmt;
	c.msg_count = ctx->msg_count;
	c.smpl_buf_size = ctx->smpl.buf_size;
	pfm_memcpy(c.reset_pending, ctx->reset_pending,
		   sizeof(c.reset_pending));
	c.smpl_hdr = ctx->smpl.hdr;
	put_rec(w, PFM_STREAM_REC_CTX,
		sizeof(c) + c.msg_count * sizeof(pfarg_msg_t));
	put(w, &c, sizeof(c));
	for (i = 0; i < ctx->msg_count; i++)
		put(w, &ctx->msgq[(ctx->msg_head + i) % PFM_MSGQ_DEPTH],
		    sizeof(pfarg_msg_t));
	for (i = 0; i < ctx->nr_sets; i++)
		save_set(e, w, ctx, ctx->sets[i]);
	if (!ctx->smpl.fmt)
		return;
	pg.ctx_id = ctx->id;
	pg.nr = ctx->smpl.nr_pages;
	put_rec(w, PFM_STREAM_REC_PAGES,
		sizeof(pg) + (size_t)pg.nr * sizeof(u64));
	put(w, &pg, sizeof(pg));
	for (i = 0; i < pg.nr; i++) {
		u64 gpa = ctx->smpl.pages[i] & PFM_SMPL_PAGE_PRESENT ?
			  ctx->smpl.pages[i] & ~PFM_SMPL_PAGE_PRESENT : 0;

		put(w, &gpa, sizeof(gpa));
	}
}

long pfm_engine_save(struct pfm_engine *e, void *buf, size_t len)
{
	struct writer w = { .len = len };
	struct pfm_stream_hdr h;
	u32 i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		w.off = 0;
		pfm_memset(&h, 0, sizeof(h));
		h.magic = PFM_STREAM_MAGIC;
		h.version = PFM_STREAM_FORMAT;
		h.hdr_size = sizeof(h);
		h.personality = e->cfg.personality;
		h.gp_counters = e->cfg.gp_counters;
		h.fixed_counters = e->cfg.fixed_counters;
		h.arch_version = e->cfg.arch_version;
		h.nr_vcpus = e->cfg.nr_vcpus;
		h.nr_ctxs = e->nr_ctxs;
		h.next_ctx_id = e->next_ctx_id;
		put(&w, &h, sizeof(h));
		for (i = 0; i < e->lim.max_contexts; i++)
			if (e->ctxs[i])
				save_ctx(e, &w, e->ctxs[i]);
		put_rec(&w, PFM_STREAM_REC_END, 0);
		/* the first pass measures; write only if it all fits */
		if (pass == 0 && (!buf || w.off > len))
			return buf ? -ENOSPC : (long)w.off;
		w.buf = buf;
	}
	return w.off;
}

/*
 * The largest stream this engine's limits allow: every context slot
 * used, each with a full message queue, max_sets sets and the largest
 * sampling buffer. What an importer may accept at most, before reading.
 */
size_t pfm_engine_stream_max(const struct pfm_engine *e)
{
	size_t rec = sizeof(struct pfm_stream_rec), set, ctx, pages;

	set = rec + sizeof(struct pfm_stream_set) +
	      e->pmu.nr_pmcs * sizeof(struct pfm_stream_pmc) +
	      e->pmu.nr_pmds * sizeof(struct pfm_stream_pmd);
	pages = e->lim.max_smpl_buf / PVPFM_PAGE_SIZE + 1;
	ctx = pfm_size_add(rec + sizeof(struct pfm_stream_ctx) +
			   PFM_MSGQ_DEPTH * sizeof(pfarg_msg_t),
			   pfm_size_mul(e->lim.max_sets, set));
	ctx = pfm_size_add(ctx, pfm_size_add(rec + sizeof(struct pfm_stream_pages),
					     pfm_size_mul(pages, sizeof(u64))));
	return pfm_size_add(sizeof(struct pfm_stream_hdr) + rec,
			    pfm_size_mul(e->lim.max_contexts, ctx));
}

/* ---- reading ------------------------------------------------------------ */

struct reader {
	const u8 *buf;
	size_t len, off;
	struct pfm_stream_error *err;
	struct pfm_context *ctx;	/* of the last CTX record, */
	const struct pfm_stream_ctx *rec;	/* that record */
	u32 sets_left;			/* SET records it still expects */
	bool pages_due;
	s32 *resume;			/* by context slot: vCPU to go in on */
};

static int fail(struct reader *r, enum pfm_stream_reason why)
{
	if (r->err->reason == PFM_STREAM_OK)
		r->err->reason = why;
	switch (why) {
	case PFM_STREAM_VERSION:
		return -EPROTO;
	case PFM_STREAM_MISMATCH:
		return -EINVAL;
	case PFM_STREAM_LIMIT:
		return -E2BIG;
	case PFM_STREAM_NOT_EMPTY:
		return -EBUSY;
	case PFM_STREAM_EVENT:
		return -ENOENT;
	case PFM_STREAM_GUEST_MEM:
		return -EFAULT;
	default:
		return -EINVAL;
	}
}

/* @n bytes of the current record's payload, or NULL past its end */
static const void *take(const u8 **p, size_t *left, size_t n)
{
	const void *q = *p;

	if (n > *left)
		return NULL;
	*p += n;
	*left -= n;
	return q;
}

/*
 * Ids are unique: a comparison per context already read (an empty engine
 * fills slots 0..nr_ctxs-1), at most max_contexts^2 / 2 in all.
 */
static bool id_taken(const struct pfm_engine *e, u32 id)
{
	u32 i;

	for (i = 0; i < e->nr_ctxs; i++)
		if (e->ctxs[i]->id == id)
			return true;
	return false;
}

static int restore_ctx(struct pfm_engine *e, struct reader *r, const u8 *p,
		       size_t left)
{
	const struct pfm_stream_ctx *c = take(&p, &left, sizeof(*c));
	pfm_dfl_smpl_arg_t sarg;
	struct pfm_context *ctx;
	const pfarg_msg_t *m;
	u32 i;

	if (!c || !c->id ||
	    id_taken(e, c->id) || (c->flags & ~PFM_CTX_FLAGS_KNOWN) ||
	    ((c->flags & PFM_FL_SYSTEM_WIDE) &&
	     (c->flags & PFM_FL_NOTIFY_BLOCK)) ||
	    c->state > PFM_CTX_MASKED || c->started > 1 || c->blocked > 1 ||
	    c->has_reset > 1 || c->saturated > 1 || c->switch_pending > 1 ||
	    c->vcpu < -1 ||
	    (c->vcpu >= 0 && (u32)c->vcpu >= e->cfg.nr_vcpus) ||
	    (c->state == PFM_CTX_UNLOADED &&
	     (c->vcpu >= 0 || c->started || c->blocked || c->has_reset)) ||
	    /* only a masked context waits, and only a notified one blocks */
	    ((c->has_reset || c->blocked || c->saturated ||
	      c->switch_pending) && c->state != PFM_CTX_MASKED) ||
	    (c->blocked && (c->saturated ||
			    !(c->flags & PFM_FL_NOTIFY_BLOCK))) ||
	    ((c->flags & PFM_FL_SYSTEM_WIDE) && c->state != PFM_CTX_UNLOADED &&
	     (u32)c->vcpu != c->load_pid) ||
	    !c->nr_sets || c->msg_count > PFM_MSGQ_DEPTH ||
	    c->smpl_fmt > PFM_SMPL_DFL ||
	    left != c->msg_count * sizeof(pfarg_msg_t))
		return fail(r, PFM_STREAM_MALFORMED);
	if (c->nr_sets > e->lim.max_sets || e->nr_ctxs >= e->lim.max_contexts)
		return fail(r, PFM_STREAM_LIMIT);
	ctx = pfm_ctx_alloc(e, c->flags);
	if (!ctx)
		return -ENOMEM;
	/* an empty engine fills its slots in order */
	r->resume[e->nr_ctxs - 1] = -1;
	ctx->id = c->id;
	r->err->ctx_id = c->id;
	/* the state is taken up once its sets are in (finish_ctx) */
	ctx->load_pid = c->load_pid;
	ctx->tid = c->tid;
	ctx->tgid = c->tgid;
	for (i = 0; i < c->msg_count; i++) {
		m = take(&p, &left, sizeof(*m));
		if (m->type != PFM_MSG_OVFL && m->type != PFM_MSG_END)
			return fail(r, PFM_STREAM_MALFORMED);
		ctx->msgq[i] = *m;
	}
	ctx->msg_count = c->msg_count;
	if (c->smpl_fmt) {
		pfm_memset(&sarg, 0, sizeof(sarg));
		sarg.buf_size = c->smpl_buf_size;
		if (c->smpl_buf_size > e->lim.max_smpl_buf)
			return fail(r, PFM_STREAM_LIMIT);
		if (pfm_smpl_init(e, ctx, &sarg))
			return fail(r, PFM_STREAM_MALFORMED);
		/* the header's position, not its size or shape, may differ */
		if (c->smpl_hdr.hdr_buf_size != ctx->smpl.hdr.hdr_buf_size ||
		    c->smpl_hdr.hdr_min_buf_space !=
		    ctx->smpl.hdr.hdr_min_buf_space ||
		    c->smpl_hdr.hdr_version != ctx->smpl.hdr.hdr_version ||
		    c->smpl_hdr.hdr_buf_flags ||
		    c->smpl_hdr.hdr_cur_offs < sizeof(c->smpl_hdr) ||
		    c->smpl_hdr.hdr_cur_offs > c->smpl_hdr.hdr_buf_size ||
		    c->smpl_hdr.hdr_cur_offs % 8)
			return fail(r, PFM_STREAM_MALFORMED);
		ctx->smpl.hdr = c->smpl_hdr;
		r->pages_due = true;
	}
	/* set 0 is read from the stream like the others */
	pfm_set_free(e, ctx->sets[0]);
	ctx->sets[0] = NULL;
	ctx->nr_sets = 0;
	ctx->active = NULL;
	r->ctx = ctx;
	r->rec = c;
	r->sets_left = c->nr_sets;
	return 0;
}

static int restore_regs(struct pfm_engine *e, struct reader *r,
			struct pfm_set *set, const struct pfm_stream_set *s,
			const u8 *p, size_t left)
{
	const struct pfm_stream_pmc *pmc;
	const struct pfm_stream_pmd *sp;
	const struct pfm_reg_desc *d;
	struct pfm_pmd *pmd;
	u16 i;

	for (i = 0; i < s->nr_pmcs; i++) {
		pmc = take(&p, &left, sizeof(*pmc));
		d = pmc->num < PFM_MAX_PMCS ? pfm_pmc_desc(&e->pmu, pmc->num) :
					      NULL;
		/* what write_pmcs would refuse, a stream may not bring in */
		if (!d || ((pmc->value ^ d->dfl_val) & d->rsvd_msk))
			return fail(r, PFM_STREAM_MALFORMED);
		*pfm_set_pmc(&e->pmu, set, d->num) = pmc->value;
	}
	for (i = 0; i < s->nr_pmds; i++) {
		sp = take(&p, &left, sizeof(*sp));
		r->err->pmd = sp->num;
		pmd = pfm_set_pmd(&e->pmu, set, sp->num);
		if (!pmd || sp->reserved0 || sp->reserved1 ||
		    (sp->flags & ~PFM_REGFL_PMD_KNOWN) ||
		    sp->ovflsw_thres > sp->ovflsw_ref ||
		    !pfm_bv_subset(sp->reset_pmds, e->pmu.impl_pmds, PFM_PMD_BV) ||
		    !pfm_bv_subset(sp->smpl_pmds, e->pmu.impl_pmds, PFM_PMD_BV))
			return fail(r, PFM_STREAM_MALFORMED);
		pmd->value = sp->value;
		pmd->lval = sp->lval;
		pmd->long_reset = sp->long_reset;
		pmd->short_reset = sp->short_reset;
		pmd->eventid = sp->eventid;
		pmd->random_mask = sp->random_mask;
		pmd->seed = sp->seed;
		pmd->flags = sp->flags;
		pmd->ovflsw_thres = sp->ovflsw_thres;
		pmd->ovflsw_ref = sp->ovflsw_ref;
		pfm_memcpy(pmd->reset_pmds, sp->reset_pmds,
			   sizeof(pmd->reset_pmds));
		pfm_memcpy(pmd->smpl_pmds, sp->smpl_pmds,
			   sizeof(pmd->smpl_pmds));
	}
	r->err->pmd = 0;
	return 0;
}

/* every PMD the set counts, checked against this host, as write_pmcs does */
static int check_events(struct pfm_engine *e, struct reader *r,
			struct pfm_set *set)
{
	struct pfm_event ev;
	u16 s;

	for (s = 0; s < e->pmu.nr_pmds; s++) {
		if (!pfm_pmd_event(e, set, e->pmu.pmd[s].num, &ev))
			continue;
		if (e->ops->event_check(e->be, &ev) < 0) {
			r->err->pmd = e->pmu.pmd[s].num;
			return fail(r, PFM_STREAM_EVENT);
		}
	}
	return 0;
}

static int restore_set(struct pfm_engine *e, struct reader *r, const u8 *p,
		       size_t left)
{
	const struct pfm_stream_set *s = take(&p, &left, sizeof(*s));
	struct pfm_set *set;
	int ret;

	if (!s || !r->ctx || !r->sets_left || s->ctx_id != r->ctx->id ||
	    s->reserved || (s->flags & ~PFM_SETFL_KNOWN) ||
	    ((s->flags & PFM_SETFL_TIME_SWITCH) ?
	     !pfm_set_timeout_valid(e, s->timeout) : !!s->timeout) ||
	    s->nr_pmcs > e->pmu.nr_pmcs || s->nr_pmds > e->pmu.nr_pmds ||
	    left != s->nr_pmcs * sizeof(struct pfm_stream_pmc) +
		    s->nr_pmds * sizeof(struct pfm_stream_pmd) ||
	    pfm_set_find(r->ctx, s->id) ||
	    !pfm_bv_subset(s->ovfl_pmds, e->pmu.impl_pmds, PFM_PMD_BV) ||
	    !pfm_bv_subset(s->used_pmds, e->pmu.impl_pmds, PFM_PMD_BV) ||
	    !pfm_bv_subset(s->used_pmcs, e->pmu.impl_pmcs, PFM_PMC_BV))
		return fail(r, PFM_STREAM_MALFORMED);
	r->err->set = s->id;
	set = pfm_set_alloc(e, s->id);
	if (!set)
		return -ENOMEM;
	if (pfm_set_insert(e, r->ctx, set)) {
		pfm_set_free(e, set);
		return fail(r, PFM_STREAM_LIMIT);
	}
	set->flags = s->flags;
	/* a multiple of this host's timer granularity (checked above) */
	set->timeout = s->timeout;
	set->timeout_left = s->timeout_left < s->timeout ? s->timeout_left :
							   s->timeout;
	set->runs = s->runs;
	set->act_duration = s->act_duration;
	set->host_enabled_ns = s->host_enabled_ns;
	set->host_running_ns = s->host_running_ns;
	pfm_memcpy(set->ovfl_pmds, s->ovfl_pmds, sizeof(set->ovfl_pmds));
	pfm_memcpy(set->used_pmcs, s->used_pmcs, sizeof(set->used_pmcs));
	pfm_memcpy(set->used_pmds, s->used_pmds, sizeof(set->used_pmds));
	ret = restore_regs(e, r, set, s, p, left);
	if (!ret)
		ret = check_events(e, r, set);
	r->sets_left--;
	return ret;
}

static int restore_pages(struct pfm_engine *e, struct reader *r, const u8 *p,
			 size_t left)
{
	const struct pfm_stream_pages *pg = take(&p, &left, sizeof(*pg));
	struct pfm_smpl *smpl = r->ctx ? &r->ctx->smpl : NULL;
	const u64 *gpa;
	u32 i;

	if (!pg || !smpl || !r->pages_due || r->sets_left ||
	    pg->ctx_id != r->ctx->id || pg->nr != smpl->nr_pages ||
	    left != (size_t)pg->nr * sizeof(u64))
		return fail(r, PFM_STREAM_MALFORMED);
	for (i = 0; i < pg->nr; i++) {
		gpa = take(&p, &left, sizeof(*gpa));
		if (!*gpa)
			continue;
		if (*gpa % PVPFM_PAGE_SIZE)
			return fail(r, PFM_STREAM_MALFORMED);
		if (e->ops->guest_check(e->be, *gpa, PVPFM_PAGE_SIZE))
			return fail(r, PFM_STREAM_GUEST_MEM);
		smpl->pages[i] = *gpa | PFM_SMPL_PAGE_PRESENT;
		smpl->nr_registered++;
	}
	r->pages_due = false;
	return 0;
}

/*
 * Overflowed PMDs waiting for RESTART's long reset in @set: each one the
 * set uses, as a value it was written (used_pmds) or as the PMD of an
 * event its PMCs program. An older source may have left bits without a
 * reset set (unload did not clear them); without one they mean nothing
 * and are not taken.
 */
static bool reset_pending_valid(const struct pfm_engine *e,
				const struct pfm_set *set, const u64 *pending)
{
	u64 used[PFM_PMD_BV], pmds[PFM_PMD_BV];
	unsigned int n, w;

	pfm_memcpy(used, set->used_pmds, sizeof(used));
	pfm_for_each_bit(n, set->used_pmcs, PFM_MAX_PMCS) {
		pfm_pmc_pmds(&e->pmu, n, pmds);
		for (w = 0; w < PFM_PMD_BV; w++)
			used[w] |= pmds[w];
	}
	return pfm_bv_subset(pending, used, PFM_PMD_BV);
}

/* the last context's records are all in: take up its state */
static int finish_ctx(struct pfm_engine *e, struct reader *r)
{
	const struct pfm_stream_ctx *c = r->rec;
	struct pfm_context *ctx = r->ctx;

	if (!ctx)
		return 0;
	r->ctx = NULL;
	if (r->sets_left || r->pages_due)
		return fail(r, PFM_STREAM_MALFORMED);
	ctx->active = pfm_set_find(ctx, c->active_set);
	ctx->reset_set = c->has_reset ? pfm_set_find(ctx, c->reset_set) : NULL;
	if (!ctx->active ||
	    (c->has_reset && !ctx->reset_set) ||
	    (c->state != PFM_CTX_UNLOADED && ctx->smpl.fmt &&
	     !pfm_smpl_ready(ctx)) ||
	    !pfm_bv_subset(c->reset_pending, e->pmu.impl_pmds, PFM_PMD_BV))
		return fail(r, PFM_STREAM_MALFORMED);
	/* RESTART resets these in the reset set: PMDs it uses, no others */
	if (ctx->reset_set) {
		if (!reset_pending_valid(e, ctx->reset_set, c->reset_pending))
			return fail(r, PFM_STREAM_MALFORMED);
		pfm_memcpy(ctx->reset_pending, c->reset_pending,
			   sizeof(ctx->reset_pending));
	}
	if (c->state == PFM_CTX_UNLOADED)
		return 0;
	/* loaded, not yet in: undone by pfm_ctx_destroy() like any other */
	ctx->state = c->state;
	ctx->started = c->started;
	ctx->blocked = c->blocked;
	ctx->saturated = c->saturated;
	ctx->switch_pending = c->switch_pending;
	if (ctx->flags & PFM_FL_SYSTEM_WIDE)
		e->nr_sys_loaded++;
	else
		e->nr_thread_loaded++;
	r->resume[e->nr_ctxs - 1] = c->vcpu;
	return 0;
}

/*
 * The exclusion rules of pfm_cmd_load_context over the whole VM: one
 * context in per vCPU, one loaded context per thread, per-thread and
 * system-wide never both.
 */
static int check_loaded(struct pfm_engine *e, struct reader *r)
{
	struct pfm_context *c, *d;
	u32 i, j;

	if (e->nr_sys_loaded && e->nr_thread_loaded)
		return fail(r, PFM_STREAM_MALFORMED);
	for (i = 0; i < e->nr_ctxs; i++) {
		c = e->ctxs[i];
		if (c->state == PFM_CTX_UNLOADED)
			continue;
		for (j = i + 1; j < e->nr_ctxs; j++) {
			d = e->ctxs[j];
			if (d->state == PFM_CTX_UNLOADED)
				continue;
			if ((r->resume[i] >= 0 && r->resume[i] == r->resume[j]) ||
			    (!(c->flags & PFM_FL_SYSTEM_WIDE) &&
			     c->load_pid == d->load_pid)) {
				r->err->ctx_id = d->id;
				return fail(r, PFM_STREAM_MALFORMED);
			}
		}
	}
	return 0;
}

/* every record in and checked: the contexts that were in go in again */
static int restore_start(struct pfm_engine *e, struct reader *r)
{
	struct pfm_context *ctx;
	int ret;
	u32 i;

	ret = check_loaded(e, r);
	for (i = 0; !ret && i < e->nr_ctxs; i++) {
		ctx = e->ctxs[i];
		if (r->resume[i] < 0)
			continue;
		r->err->ctx_id = ctx->id;
		if (pfm_ctx_in(e, ctx, r->resume[i]))
			ret = fail(r, PFM_STREAM_COUNTER);
	}
	return ret;
}

static void restore_undo(struct pfm_engine *e)
{
	u32 i;

	for (i = 0; i < e->lim.max_contexts; i++)
		if (e->ctxs[i])
			pfm_ctx_destroy(e, e->ctxs[i]);
	e->next_ctx_id = 1;
}

static int restore_records(struct pfm_engine *e, struct reader *r)
{
	const struct pfm_stream_rec *rec;
	const u8 *payload;
	int ret;

	for (;;) {
		r->err->offset = r->off;
		if (r->len - r->off < sizeof(*rec))
			return fail(r, PFM_STREAM_MALFORMED);
		rec = (const void *)(r->buf + r->off);
		if (rec->size % 8 || rec->size > r->len - r->off - sizeof(*rec))
			return fail(r, PFM_STREAM_MALFORMED);
		payload = (const u8 *)(rec + 1);
		r->off += sizeof(*rec) + rec->size;
		switch (rec->type) {
		case PFM_STREAM_REC_CTX:
			ret = finish_ctx(e, r) ?:
			      restore_ctx(e, r, payload, rec->size);
			break;
		case PFM_STREAM_REC_SET:
			ret = restore_set(e, r, payload, rec->size);
			break;
		case PFM_STREAM_REC_PAGES:
			ret = restore_pages(e, r, payload, rec->size);
			break;
		case PFM_STREAM_REC_END:
			if (rec->size || r->off != r->len)
				return fail(r, PFM_STREAM_MALFORMED);
			return finish_ctx(e, r);
		default:
			ret = rec->flags & PFM_STREAM_REC_OPTIONAL ? 0 :
			      fail(r, PFM_STREAM_VERSION);
		}
		if (ret)
			return ret;
	}
}

int pfm_engine_restore(struct pfm_engine *e, const void *buf, size_t len,
		       struct pfm_stream_error *err)
{
	struct pfm_stream_error dummy;
	struct reader r = { .buf = buf, .len = len };
	const struct pfm_stream_hdr *h = buf;
	int ret;

	r.err = err ? err : &dummy;
	pfm_memset(r.err, 0, sizeof(*r.err));
	/* records are read in place: 8-byte aligned, as the stream's fields */
	if (len < sizeof(*h) || ((unsigned long)buf & 7))
		return fail(&r, PFM_STREAM_MALFORMED);
	if (h->magic != PFM_STREAM_MAGIC || h->version != PFM_STREAM_FORMAT)
		return fail(&r, PFM_STREAM_VERSION);
	if (h->hdr_size != sizeof(*h) || h->reserved0 || h->reserved1)
		return fail(&r, PFM_STREAM_MALFORMED);
	if (h->personality != e->cfg.personality ||
	    h->gp_counters != e->cfg.gp_counters ||
	    h->fixed_counters != e->cfg.fixed_counters ||
	    h->arch_version != e->cfg.arch_version ||
	    h->nr_vcpus != e->cfg.nr_vcpus)
		return fail(&r, PFM_STREAM_MISMATCH);
	if (h->nr_ctxs > e->lim.max_contexts)
		return fail(&r, PFM_STREAM_LIMIT);
	if (e->nr_ctxs)
		return fail(&r, PFM_STREAM_NOT_EMPTY);
	r.resume = pfm_zalloc(e, pfm_size_mul(e->lim.max_contexts,
					      sizeof(*r.resume)));
	if (!r.resume)
		return -ENOMEM;
	r.off = sizeof(*h);
	ret = restore_records(e, &r);
	if (!ret && e->nr_ctxs != h->nr_ctxs)
		ret = fail(&r, PFM_STREAM_MALFORMED);
	if (!ret)
		ret = restore_start(e, &r);
	pfm_free(e, r.resume);
	if (ret) {
		restore_undo(e);
		return ret;
	}
	e->next_ctx_id = h->next_ctx_id ? h->next_ctx_id : 1;
	return 0;
}

const char *pfm_stream_reason_name(enum pfm_stream_reason why)
{
	static const char *const names[] = {
		[PFM_STREAM_OK] = "ok",
		[PFM_STREAM_MALFORMED] = "malformed stream",
		[PFM_STREAM_VERSION] = "unknown stream version or record",
		[PFM_STREAM_MISMATCH] = "personality, counters or vCPUs differ",
		[PFM_STREAM_LIMIT] = "above this VM's limits",
		[PFM_STREAM_NOT_EMPTY] = "the VM already has contexts",
		[PFM_STREAM_EVENT] = "an event this host cannot count",
		[PFM_STREAM_GUEST_MEM] = "a sampling page outside guest memory",
		[PFM_STREAM_COUNTER] = "a host counter failed to open",
	};

	return (unsigned int)why < PFM_ARRAY_SIZE(names) ? names[why] :
							   "unknown";
}
