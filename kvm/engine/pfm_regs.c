// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_write_pmcs, pfm_write_pmds, pfm_read_pmds.
 *
 * Vectors are processed in order; the first bad entry stops the call with
 * EINVAL, gets PFM_REG_RETFL_EINVAL (or PFM_REG_RETFL_NOTAVAIL for an
 * event the host cannot count) in its reg_flags and its index in the
 * header's err_index. Entries before it stay applied, as in perfmon2.
 *
 * Reserved PMC bits take their default value whatever the guest wrote,
 * as perfmon2 forced them: they select no event, and libpfm-3 writes
 * only the fields it uses (FIXED_CTR_CTRL's enable bits without the PMI
 * bits, say).
 */
#include "pfm_priv.h"

/*
 * Changing registers of the active set of a context that is in: fold its
 * counters back, apply the changes, then open them again with the new
 * configuration. Active time and timeouts are not lost on the way.
 */
struct pfm_live_edit {
	bool live;
	bool was_counting;
};

static void edit_begin(struct pfm_engine *e, struct pfm_context *ctx,
		       struct pfm_set *set, struct pfm_live_edit *ed)
{
	if (ed->live || set != ctx->active || ctx->vcpu < 0)
		return;
	ed->live = true;
	ed->was_counting = ctx->counting;
	if (ctx->counting)
		pfm_counting_end(e, ctx);
	pfm_set_unload(e, ctx);
}

static int edit_end(struct pfm_engine *e, struct pfm_context *ctx,
		    struct pfm_live_edit *ed)
{
	int ret;

	if (!ed->live)
		return 0;
	ret = pfm_set_load(e, ctx);
	if (ed->was_counting)
		pfm_counting_begin(e, ctx);
	return ret;
}

static int entry_error(u32 *reg_flags, u32 retfl)
{
	*reg_flags |= retfl;
	return -EINVAL;
}

/*
 * Why the backend refused an event (event_check's error): what the
 * guest's entry says and where the host's operator sees it counted.
 * Every refusal is NOTAVAIL to the guest; the host's tools tell the
 * causes apart, and the guest learns the one it can act on (ask the
 * host's operator) from its own flag. Any other error is the first
 * row's. (A counter that fails to open later, at load or at a set
 * switch, fails with the backend's error, not here.)
 */
static const struct pfm_refusal {
	int err;
	u32 retfl;
	size_t stat;		/* a u64 of struct pfm_engine_stats */
} pfm_refusals[] = {
	{ -ENOENT, PFM_REG_RETFL_NOTAVAIL,
	  offsetof(struct pfm_engine_stats, notavail) },
	{ -EACCES, PFM_REG_RETFL_NOTAVAIL,
	  offsetof(struct pfm_engine_stats, filtered) },
	{ -EOPNOTSUPP, PFM_REG_RETFL_NOTAVAIL | PVPFM_REG_RETFL_HOST_MEDIATED,
	  offsetof(struct pfm_engine_stats, host_mediated) },
};

static int entry_notavail(struct pfm_engine *e, u32 *reg_flags, int why)
{
	const struct pfm_refusal *r = &pfm_refusals[0];
	size_t i;

	for (i = 0; i < PFM_ARRAY_SIZE(pfm_refusals); i++)
		if (pfm_refusals[i].err == why)
			r = &pfm_refusals[i];
	(*(u64 *)((u8 *)&e->stats + r->stat))++;
	return entry_error(reg_flags, r->retfl);
}

/* PMC and PMD requests share their head: reg_num, reg_set, reg_flags */
#define PFM_REQ_FLAGS_OFF	offsetof(pfarg_pmc_t, reg_flags)
_Static_assert(offsetof(pfarg_pmd_t, reg_flags) == PFM_REQ_FLAGS_OFF,
	       "pfarg_pmc_t and pfarg_pmd_t differ in reg_flags");

/* every per-entry return flag a call may set */
#define PFM_RETFL_ALL	(PFM_REG_RETFL_MASK | PVPFM_CMD_RETFL_EMULATED | \
			 PVPFM_REG_RETFL_HOST_MEDIATED)

/* a call's per-entry return flags start clear, whatever the guest wrote */
static void clear_retfl(void *vec, u32 count, size_t size)
{
	u32 *flags;
	u32 i;

	for (i = 0; i < count; i++) {
		flags = (u32 *)((u8 *)vec + i * size + PFM_REQ_FLAGS_OFF);
		*flags &= ~PFM_RETFL_ALL;
	}
}

typedef int (*pfm_write_fn)(struct pfm_engine *e, struct pfm_context *ctx,
			    void *req, struct pfm_live_edit *ed);

/*
 * A vector of register writes, in order, up to the first bad entry (its
 * index in err_index; the entries before it stay applied, as perfmon2
 * does). A live active set is folded once and reopened once.
 */
static int write_vector(struct pfm_cmd_args *a, size_t size,
			pfm_write_fn write_one)
{
	struct pfm_live_edit ed = { false, false };
	int ret = 0, ret2;
	u32 i;

	clear_retfl(a->arg, a->hdr->count, size);
	for (i = 0; i < a->hdr->count && !ret; i++) {
		a->hdr->err_index = i;
		ret = write_one(a->e, a->ctx, (u8 *)a->arg + i * size, &ed);
	}
	if (!ret)
		a->hdr->err_index = 0;
	ret2 = edit_end(a->e, a->ctx, &ed);
	return ret ? ret : ret2;
}

/*
 * Whether the host can back every event @value would make PMC @pmc count:
 * event_check's error for the first it cannot, 1 if some event is backed
 * by an admin's alias (emulated), else 0.
 */
static int pmc_events_available(struct pfm_engine *e, u16 pmc, u64 value)
{
	u64 pmds[PFM_PMD_BV];
	struct pfm_event ev;
	unsigned int n;
	int ret, emulated = 0;

	pfm_pmc_pmds(&e->pmu, pmc, pmds);
	pfm_for_each_bit(n, pmds, PFM_MAX_PMDS) {
		if (!pfm_pmd_event_for(e, n, value, &ev))
			continue;
		ret = e->ops->event_check(e->be, &ev);
		if (ret < 0)
			return ret;
		emulated |= ret > 0;
	}
	return emulated;
}

static int write_pmc(struct pfm_engine *e, struct pfm_context *ctx,
		     void *entry, struct pfm_live_edit *ed)
{
	pfarg_pmc_t *req = entry;
	const struct pfm_reg_desc *d = pfm_pmc_desc(&e->pmu, req->reg_num);
	struct pfm_set *set;
	u64 value;
	u16 num;
	int avail;

	if (!d)
		return entry_error(&req->reg_flags, PFM_REG_RETFL_EINVAL);
	num = d->num;
	value = (req->reg_value & ~d->rsvd_msk) | (d->dfl_val & d->rsvd_msk);
	/* NO_EMUL64 is refused: every PMD is 64-bit, see doc/PERFMON2-ABI.md */
	if (req->reg_flags)
		return entry_error(&req->reg_flags, PFM_REG_RETFL_EINVAL);
	set = pfm_set_find(ctx, req->reg_set);
	if (!set)
		return entry_error(&req->reg_flags, PFM_REG_RETFL_EINVAL);
	avail = pmc_events_available(e, num, value);
	if (avail < 0)
		return entry_notavail(e, &req->reg_flags, avail);
	if (avail)
		req->reg_flags |= PVPFM_CMD_RETFL_EMULATED;

	edit_begin(e, ctx, set, ed);
	*pfm_set_pmc(&e->pmu, set, num) = value;
	pfm_bit_set(set->used_pmcs, num);
	return 0;
}

int pfm_cmd_write_pmcs(struct pfm_cmd_args *a)
{
	return write_vector(a, sizeof(pfarg_pmc_t), write_pmc);
}

/* a guest-chosen PMD number: every load it selects is clamped (nospec) */
static bool pmd_valid(const struct pfm_engine *e, u16 num)
{
	if (num >= PFM_MAX_PMDS)
		return false;
	return pfm_bit_test(e->pmu.impl_pmds, pfm_index_nospec(num, PFM_MAX_PMDS));
}

/* virtual PMDs count as soon as they are written: check them now */
static int pmd_event_available(struct pfm_engine *e, u16 num)
{
	const struct pfm_reg_desc *d = pfm_pmd_desc(&e->pmu, num);
	struct pfm_event ev;
	int ret;

	if (!d || d->type != PFM_RT_PMD_VIRTUAL)
		return 0;
	pfm_pmd_event_for(e, num, 0, &ev);
	ret = e->ops->event_check(e->be, &ev);
	return ret < 0 ? ret : 0;
}

static int write_pmd(struct pfm_engine *e, struct pfm_context *ctx,
		     void *entry, struct pfm_live_edit *ed)
{
	pfarg_pmd_t *req = entry;
	struct pfm_set *set;
	struct pfm_pmd *p;
	u16 num = req->reg_num;
	unsigned int w;
	int avail;

	if (!pmd_valid(e, num) || (req->reg_flags & ~PFM_REGFL_PMD_KNOWN) ||
	    !pfm_bv_subset(req->reg_smpl_pmds, e->pmu.impl_pmds, PFM_PMD_BV) ||
	    !pfm_bv_subset(req->reg_reset_pmds, e->pmu.impl_pmds, PFM_PMD_BV))
		return entry_error(&req->reg_flags, PFM_REG_RETFL_EINVAL);
	/* it indexes the set's bitmaps below */
	num = pfm_index_nospec(num, PFM_MAX_PMDS);
	set = pfm_set_find(ctx, req->reg_set);
	p = set ? pfm_set_pmd(&e->pmu, set, num) : NULL;
	if (!p)
		return entry_error(&req->reg_flags, PFM_REG_RETFL_EINVAL);
	avail = pmd_event_available(e, num);
	if (avail)
		return entry_notavail(e, &req->reg_flags, avail);

	edit_begin(e, ctx, set, ed);
	p->value = req->reg_value;
	p->lval = req->reg_value;
	p->long_reset = req->reg_long_reset;
	p->short_reset = req->reg_short_reset;
	pfm_memcpy(p->reset_pmds, req->reg_reset_pmds, sizeof(p->reset_pmds));
	pfm_memcpy(p->smpl_pmds, req->reg_smpl_pmds, sizeof(p->smpl_pmds));
	p->eventid = req->reg_smpl_eventid;
	p->random_mask = req->reg_random_mask;
	p->seed = req->reg_random_seed;
	p->flags = req->reg_flags;
	p->ovflsw_thres = req->reg_ovfl_switch_cnt;
	p->ovflsw_ref = req->reg_ovfl_switch_cnt;
	pfm_bit_set(set->used_pmds, num);
	pfm_bit_clear(set->ovfl_pmds, num);
	/* PMDs recorded or reset on its overflow are in use too */
	for (w = 0; w < PFM_PMD_BV; w++)
		set->used_pmds[w] |= p->smpl_pmds[w] | p->reset_pmds[w];
	return 0;
}

int pfm_cmd_write_pmds(struct pfm_cmd_args *a)
{
	return write_vector(a, sizeof(pfarg_pmd_t), write_pmd);
}

/*
 * As perfmon2, only a PMD in use can be read: one written, or named in
 * a written PMD's smpl_pmds or reset_pmds.
 */
int pfm_cmd_read_pmds(struct pfm_cmd_args *a)
{
	struct pfm_engine *e = a->e;
	pfarg_pmd_t *req = a->arg;
	const struct pfm_pmd *p;
	struct pfm_set *set;
	u16 num;
	u32 i;

	clear_retfl(req, a->hdr->count, sizeof(*req));
	for (i = 0; i < a->hdr->count; i++) {
		num = req[i].reg_num;
		set = pfm_set_find(a->ctx, req[i].reg_set);
		p = set ? pfm_set_pmd(&e->pmu, set, num) : NULL;
		/* a PMD with a slot has a number below PFM_MAX_PMDS */
		if (!p || !pfm_bit_test(set->used_pmds,
					pfm_index_nospec(num, PFM_MAX_PMDS))) {
			a->hdr->err_index = i;
			return entry_error(&req[i].reg_flags,
					   PFM_REG_RETFL_EINVAL);
		}
		req[i].reg_value = pfm_pmd_read(e, a->ctx, set, num);
		req[i].reg_last_reset_val = p->lval;
		req[i].reg_ovfl_switch_cnt = p->ovflsw_thres;
	}
	return 0;
}
