// SPDX-License-Identifier: GPL-2.0
/*
 * Overflow handling: the carry of narrow backing counters into 64-bit
 * PMDs, 64-bit overflows (samples, notification and masking, short and
 * long resets, randomized periods) and overflow-triggered set switching.
 *
 * A PMD programmed to -p overflows after p events: its 64-bit value wraps
 * to zero. What follows is perfmon2 v2.8x's (pfm_overflow_handler()):
 *   - with the default sampling format, each overflow is recorded and the
 *     PMD restarts from its short reset value until the buffer is full;
 *   - without a format, every overflow masks monitoring, unless it makes
 *     the set switch and no overflowed PMD asked for a notification;
 *   - masked, the PMDs wait for pfm_restart, which applies their long
 *     reset values (and a set switch that was due);
 *   - a notification (a message, and SIGIO for an fd that asks) is sent
 *     only if an overflowed PMD has PFM_REGFL_OVFL_NOTIFY. Masked without
 *     one, the context saturates: its counts stay as they are and
 *     pfm_restart refuses (EBUSY), as nothing was notified.
 */
#include "pfm_priv.h"

/*
 * Carta's implementation of the Park-Miller minimal standard generator:
 * period 2^31 - 2, no division. A zero state would stay zero: use 1.
 */
u32 pfm_random_next(u32 seed)
{
	u32 lo, hi;

	if (!seed)
		seed = 1;
	lo = 16807 * (seed & 0xffff);
	hi = 16807 * (seed >> 16);
	lo += (hi & 0x7fff) << 16;
	lo += hi >> 15;
	return (lo & 0x7fffffff) + (lo >> 31);
}

/* one PMD to its reset value; a random period adds up to random_mask */
static void pmd_reset_one(struct pfm_engine *e, struct pfm_context *ctx,
			  struct pfm_set *set, u16 num, bool long_reset)
{
	struct pfm_pmd *p = pfm_set_pmd(&e->pmu, set, num);
	u64 val;

	if (!p)
		return;
	val = long_reset ? p->long_reset : p->short_reset;
	if (p->flags & PFM_REGFL_RANDOM) {
		p->seed = pfm_random_next(p->seed);
		val -= p->seed & p->random_mask;
	}
	p->lval = val;
	pfm_pmd_write(e, ctx, set, num, val);
}

/* reset the PMDs of @ovfl and every PMD in their reset_pmds, once each */
void pfm_pmds_reset(struct pfm_engine *e, struct pfm_context *ctx,
		    struct pfm_set *set, const u64 *ovfl, bool long_reset)
{
	const struct pfm_pmd *p;
	u64 mask[PFM_PMD_BV];
	unsigned int n, w;

	pfm_memcpy(mask, ovfl, sizeof(mask));
	pfm_for_each_bit(n, ovfl, PFM_MAX_PMDS) {
		p = pfm_set_pmd(&e->pmu, set, n);
		for (w = 0; p && w < PFM_PMD_BV; w++)
			mask[w] |= p->reset_pmds[w];
	}
	pfm_for_each_bit(n, mask, PFM_MAX_PMDS)
		pmd_reset_one(e, ctx, set, n, long_reset);
}

/*
 * Carry the backing counters' wraps into the PMDs of @hw; the PMDs whose
 * 64-bit value wrapped go to @ovfl.
 */
static bool carry_wraps(struct pfm_engine *e, struct pfm_context *ctx,
			const u64 *hw, u64 *ovfl)
{
	struct pfm_set *set = ctx->active;
	struct pfm_pmd *p;
	unsigned int n;
	u64 upper;

	pfm_memset(ovfl, 0, PFM_PMD_BV * sizeof(u64));
	pfm_for_each_bit(n, hw, PFM_MAX_PMDS) {
		p = pfm_set_pmd(&e->pmu, set, n);
		if (!p || !pfm_ctx_counter(&e->pmu, ctx, n))
			continue;
		if (e->wmask != ~0ULL) {
			upper = (p->value & ~e->wmask) + e->wmask + 1;
			p->value = upper | (p->value & e->wmask);
			if (upper)
				continue;
		}
		pfm_bit_set(ovfl, n);
	}
	return !pfm_bv_empty(ovfl, PFM_PMD_BV);
}

/* count down overflow-switch thresholds; true when the set must switch */
static bool ovfl_switch_due(struct pfm_engine *e, struct pfm_set *set,
			    const u64 *ovfl)
{
	struct pfm_pmd *p;
	bool due = false;
	unsigned int n;
	u16 s;

	if (!(set->flags & PFM_SETFL_OVFL_SWITCH))
		return false;
	pfm_for_each_bit(n, ovfl, PFM_MAX_PMDS) {
		p = pfm_set_pmd(&e->pmu, set, n);
		if (p && p->ovflsw_ref && p->ovflsw_thres && !--p->ovflsw_thres)
			due = true;
	}
	if (due)
		for (s = 0; s < e->pmu.nr_pmds; s++)
			set->pmds[s].ovflsw_thres = set->pmds[s].ovflsw_ref;
	return due;
}

/* whether an overflowed PMD asked for a notification */
static bool notify_asked(struct pfm_engine *e, struct pfm_set *set,
			 const u64 *ovfl)
{
	const struct pfm_pmd *p;
	unsigned int n;

	pfm_for_each_bit(n, ovfl, PFM_MAX_PMDS) {
		p = pfm_set_pmd(&e->pmu, set, n);
		if (p && (p->flags & PFM_REGFL_OVFL_NOTIFY))
			return true;
	}
	return false;
}

/*
 * Record every overflowed PMD in the sampling buffer; true once it is
 * full. Samples of one interrupt are contiguous: once an entry fills
 * the buffer the rest of the interrupt's samples still go in where they
 * fit, and are counted lost where not.
 */
static bool smpl_record_full(struct pfm_engine *e, struct pfm_context *ctx,
			     const u64 *ovfl, const struct pfm_where *where,
			     u32 vcpu)
{
	unsigned int n;
	bool full = false;

	pfm_for_each_bit(n, ovfl, PFM_MAX_PMDS)
		if (!pfm_smpl_record(e, ctx, n, where, vcpu))
			full = true;
	pfm_smpl_flush_hdr(e, ctx);
	return full;
}

static void post_ovfl_msg(struct pfm_engine *e, struct pfm_context *ctx,
			  const u64 *ovfl, const struct pfm_where *where,
			  u32 vcpu)
{
	pfarg_msg_t msg;

	pfm_memset(&msg, 0, sizeof(msg));
	msg.pfm_ovfl_msg.msg_type = PFM_MSG_OVFL;
	msg.pfm_ovfl_msg.msg_ovfl_tid = where->tid ? where->tid : ctx->tid;
	msg.pfm_ovfl_msg.msg_ovfl_pid = where->tid ? where->tgid : ctx->tgid;
	msg.pfm_ovfl_msg.msg_active_set = ctx->active->id;
	msg.pfm_ovfl_msg.msg_ovfl_cpu = vcpu;
	msg.pfm_ovfl_msg.msg_ovfl_ip = pfm_where_ip(ctx, where);
	pfm_memcpy(msg.pfm_ovfl_msg.msg_ovfl_pmds, ovfl,
		   sizeof(msg.pfm_ovfl_msg.msg_ovfl_pmds));
	pfm_msg_post(e, ctx, &msg);
}

/*
 * Mask monitoring until pfm_restart, which applies the long resets (and
 * the set switch, if one was due), and notify if @notify.
 * PFM_FL_OVFL_NO_MSG only leaves the message out: perfmon2's
 * pfm_notify_user() still woke the reader and sent SIGIO, which is what
 * a sampler whose SIGIO handler calls pfm_restart waits for. So the guest
 * is interrupted either way; it finds the context masked (CTX_STATE).
 */
static void mask_monitoring(struct pfm_engine *e, struct pfm_context *ctx,
			    const u64 *ovfl, const struct pfm_where *where,
			    u32 vcpu, bool notify, bool switch_due)
{
	ctx->state = PFM_CTX_MASKED;
	if (ctx->counting)
		pfm_counting_end(e, ctx);
	ctx->reset_set = ctx->active;
	pfm_memcpy(ctx->reset_pending, ovfl, sizeof(ctx->reset_pending));
	ctx->switch_pending = switch_due;
	ctx->saturated = !notify;
	if (!notify)
		return;
	ctx->blocked = ctx->flags & PFM_FL_NOTIFY_BLOCK;
	if (!(ctx->flags & PFM_FL_OVFL_NO_MSG))
		post_ovfl_msg(e, ctx, ovfl, where, vcpu);
	else
		e->ops->notify(e->be, ctx->id);
}

/*
 * The periods the PMDs of @ovfl counted past their overflow before it was
 * found: each a sample not taken, as the PMD is reset to its short reset
 * value now and counts on from there.
 */
static u64 lost_periods(struct pfm_engine *e, struct pfm_set *set,
			const u64 *ovfl, const struct pfm_where *where)
{
	const struct pfm_pmd *p;
	u64 lost = 0, period;
	unsigned int n;

	if (!where->past)
		return 0;
	pfm_for_each_bit(n, ovfl, PFM_MAX_PMDS) {
		p = pfm_set_pmd(&e->pmu, set, n);
		period = p ? -p->short_reset : 0;
		if (period)
			lost += pfm_div64(where->past[n], period);
	}
	return lost;
}

u64 pfm_engine_overflow(struct pfm_engine *e, u32 vcpu, const u64 *pmds,
			const struct pfm_where *where)
{
	u64 ovfl[PFM_PMD_BV], lost;
	struct pfm_context *ctx;
	struct pfm_set *set;
	bool notify, switch_due, mask;
	unsigned int w;

	if (vcpu >= e->cfg.nr_vcpus)
		return 0;
	ctx = e->vcpus[vcpu].cur;
	/* nothing is in there any more: its counters were folded back */
	if (!ctx)
		return 0;
	set = ctx->active;
	/* a wrap counted before a stop or a mask still carries */
	if (!carry_wraps(e, ctx, pmds, ovfl))
		return 0;

	e->stats.overflows++;
	lost = lost_periods(e, set, ovfl, where);
	if (lost) {
		set->ovfls_lost += lost;
		pfm_smpl_lost(e, ctx, lost);
	}
	pfm_memcpy(set->ovfl_pmds, ovfl, sizeof(set->ovfl_pmds));
	if (ctx->state == PFM_CTX_MASKED) {
		/* already masked: these wait for the same restart */
		ctx->reset_set = set;
		for (w = 0; w < PFM_PMD_BV; w++)
			ctx->reset_pending[w] |= ovfl[w];
		return lost;
	}
	notify = notify_asked(e, set, ovfl);
	switch_due = ovfl_switch_due(e, set, ovfl);
	if (ctx->smpl.fmt)
		mask = smpl_record_full(e, ctx, ovfl, where, vcpu);
	else
		mask = notify || !switch_due;
	if (mask) {
		mask_monitoring(e, ctx, ovfl, where, vcpu, notify, switch_due);
		return lost;
	}
	pfm_pmds_reset(e, ctx, set, ovfl, false);
	if (switch_due)
		pfm_set_switch_next(e, ctx);
	return lost;
}

void pfm_engine_host_limited(struct pfm_engine *e, u32 vcpu, u64 throttles,
			     u64 raised)
{
	struct pfm_context *ctx;

	if (vcpu >= e->cfg.nr_vcpus)
		return;
	ctx = e->vcpus[vcpu].cur;
	/* its counters were folded back: nothing of theirs is left to limit */
	if (!ctx)
		return;
	ctx->active->host_throttles += throttles;
	ctx->active->periods_raised += raised;
}
