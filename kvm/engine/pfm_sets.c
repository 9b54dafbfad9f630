// SPDX-License-Identifier: GPL-2.0
/*
 * Event sets: their list (kept in id order, never empty), the
 * backing counters of the active set, 64-bit PMD values over narrower
 * counters, active time, time-based switching, and the three set calls.
 *
 * 64-bit PMDs: while a set is live, the low counter_width bits of a PMD
 * are in its backing counter and the upper bits in pfm_pmd.value; each
 * wrap of the backing counter carries one into the upper bits (pfm_ovfl.c).
 *
 * A counting PMD whose counter the backend could not open is never silent:
 * while its set counts, its time is added to the set's host enabled time
 * and not to its running time, so getinfo shows the shortfall.
 */
#include "pfm_priv.h"

struct pfm_set *pfm_set_find(struct pfm_context *ctx, u16 id)
{
	u32 i;

	for (i = 0; i < ctx->nr_sets; i++)
		if (ctx->sets[i]->id == id)
			return ctx->sets[i];
	return NULL;
}

/* every PMC of @set at the personality's default */
static void set_pmcs_default(const struct pfm_engine *e, struct pfm_set *set)
{
	u16 s;

	for (s = 0; s < e->pmu.nr_pmcs; s++)
		set->pmcs[s] = e->pmu.pmc[s].dfl_val;
}

struct pfm_set *pfm_set_alloc(struct pfm_engine *e, u16 id)
{
	size_t pmcs = pfm_size_mul(e->pmu.nr_pmcs, sizeof(u64));
	size_t pmds = pfm_size_mul(e->pmu.nr_pmds, sizeof(struct pfm_pmd));
	struct pfm_set *set;

	set = pfm_zalloc(e, pfm_size_add(pfm_size_add(sizeof(*set), pmcs),
					 pmds));
	if (!set)
		return NULL;
	set->id = id;
	set->pmcs = (u64 *)(set + 1);
	set->pmds = (struct pfm_pmd *)((char *)set->pmcs + pmcs);
	set_pmcs_default(e, set);
	return set;
}

void pfm_set_free(struct pfm_engine *e, struct pfm_set *set)
{
	pfm_free(e, set);
}

int pfm_set_insert(struct pfm_engine *e, struct pfm_context *ctx,
		   struct pfm_set *set)
{
	u32 i;

	if (ctx->nr_sets >= e->lim.max_sets)
		return -ENOSPC;
	for (i = ctx->nr_sets; i > 0 && ctx->sets[i - 1]->id > set->id; i--)
		ctx->sets[i] = ctx->sets[i - 1];
	ctx->sets[i] = set;
	ctx->nr_sets++;
	return 0;
}

static void set_remove(struct pfm_context *ctx, struct pfm_set *set)
{
	u32 i;

	for (i = 0; i < ctx->nr_sets && ctx->sets[i] != set; i++)
		;
	for (; i + 1 < ctx->nr_sets; i++)
		ctx->sets[i] = ctx->sets[i + 1];
	ctx->nr_sets--;
}

static u64 live_value(struct pfm_engine *e, u64 upper, u64 raw)
{
	return (upper & ~e->wmask) | (raw & e->wmask);
}

/*
 * A PMD's value: its state in @set, and while it counts, the low bits
 * its backing counter holds. @pmd may be a guest's (read_pmds) or a
 * bitmap's: one the personality lacks reads as 0 and takes no write.
 */
u64 pfm_pmd_read(struct pfm_engine *e, struct pfm_context *ctx,
		 struct pfm_set *set, u16 pmd)
{
	struct pfm_pmd *p = pfm_set_pmd(&e->pmu, set, pmd);
	struct pfm_counter *c;

	if (!p)
		return 0;
	c = set == ctx->active ? pfm_ctx_counter(&e->pmu, ctx, pmd) : NULL;
	if (!c)
		return p->value;
	return live_value(e, p->value, e->ops->counter_read(e->be, c, NULL));
}

void pfm_pmd_write(struct pfm_engine *e, struct pfm_context *ctx,
		   struct pfm_set *set, u16 pmd, u64 value)
{
	struct pfm_pmd *p = pfm_set_pmd(&e->pmu, set, pmd);
	struct pfm_counter *c;

	if (!p)
		return;
	p->value = value;
	c = set == ctx->active ? pfm_ctx_counter(&e->pmu, ctx, pmd) : NULL;
	if (c)
		e->ops->counter_write(e->be, c, value & e->wmask);
}

/*
 * Open the backing counters of the active set's counting PMDs on the
 * vCPU the context is in. A counter the backend fails to open leaves its
 * PMD frozen at its value; the first error is returned.
 */
int pfm_set_load(struct pfm_engine *e, struct pfm_context *ctx)
{
	struct pfm_set *set = ctx->active;
	struct pfm_counter *c;
	int ret, err = 0;
	u16 s;

	for (s = 0; s < e->pmu.nr_pmds; s++) {
		c = &ctx->ctrs[s];
		pfm_memset(c, 0, sizeof(*c));
		if (!pfm_pmd_event(e, set, e->pmu.pmd[s].num, &c->ev))
			continue;
		c->vcpu = ctx->vcpu;
		c->want_irq = true;
		ret = e->ops->counter_open(e->be, c);
		if (ret) {
			ctx->ctr_failed[s] = true;
			err = err ? err : ret;
			continue;
		}
		ctx->ctr_open[s] = true;
		e->ops->counter_write(e->be, c, set->pmds[s].value & e->wmask);
	}
	return err;
}

/* fold the counters back into the set's PMDs and close them */
void pfm_set_unload(struct pfm_engine *e, struct pfm_context *ctx)
{
	struct pfm_set *set = ctx->active;
	struct pfm_counter_time t;
	struct pfm_counter *c;
	u64 raw;
	u16 s;

	for (s = 0; s < e->pmu.nr_pmds; s++) {
		ctx->ctr_failed[s] = false;
		if (!ctx->ctr_open[s])
			continue;
		c = &ctx->ctrs[s];
		pfm_memset(&t, 0, sizeof(t));
		raw = e->ops->counter_read(e->be, c, &t);
		set->pmds[s].value = live_value(e, set->pmds[s].value, raw);
		set->host_enabled_ns += t.enabled_ns;
		set->host_running_ns += t.running_ns;
		e->ops->counter_close(e->be, c);
		ctx->ctr_open[s] = false;
	}
}

/*
 * Counting (re)starts; active time runs from @start. The timeout is armed
 * in full from now: when swapping counters takes longer than a timeout,
 * the host must not switch again at once, or switches follow each other
 * without end and starve the vCPU.
 */
static void counting_begin_at(struct pfm_engine *e, struct pfm_context *ctx,
			      u64 start)
{
	struct pfm_set *set = ctx->active;
	u16 s;

	for (s = 0; s < e->pmu.nr_pmds; s++)
		if (ctx->ctr_open[s])
			e->ops->counter_enable(e->be, &ctx->ctrs[s]);
	ctx->act_start = start;
	ctx->counting = true;
	if (set->flags & PFM_SETFL_TIME_SWITCH) {
		set->timeout_left += pfm_now(e) - start;
		e->ops->timer_arm(e->be, ctx->vcpu, set->timeout_left);
	}
}

void pfm_counting_begin(struct pfm_engine *e, struct pfm_context *ctx)
{
	counting_begin_at(e, ctx, pfm_now(e));
}

/* returns when counting ended */
u64 pfm_counting_end(struct pfm_engine *e, struct pfm_context *ctx)
{
	struct pfm_set *set = ctx->active;
	u64 now = pfm_now(e);
	u64 elapsed = now - ctx->act_start;
	u16 s;

	for (s = 0; s < e->pmu.nr_pmds; s++) {
		if (ctx->ctr_open[s])
			e->ops->counter_disable(e->be, &ctx->ctrs[s]);
		if (ctx->ctr_failed[s])
			set->host_enabled_ns += elapsed;
	}
	set->act_duration += elapsed;
	if (set->flags & PFM_SETFL_TIME_SWITCH) {
		e->ops->timer_cancel(e->be, ctx->vcpu);
		set->timeout_left -= elapsed < set->timeout_left ?
				     elapsed : set->timeout_left;
	}
	ctx->counting = false;
	return now;
}

/*
 * Make @set the active set: a new activation, with a fresh timeout. The
 * guest runs on while the backend swaps counters (that can be slow), so
 * the new set's active time starts where the old one's ended: the
 * context's active time is all accounted to one set or the other.
 */
int pfm_set_activate(struct pfm_engine *e, struct pfm_context *ctx,
		     struct pfm_set *set)
{
	bool was_counting = ctx->counting;
	bool in = ctx->vcpu >= 0;
	u64 switched_at = 0;
	int ret = 0;

	if (was_counting)
		switched_at = pfm_counting_end(e, ctx);
	if (in && set != ctx->active)
		pfm_set_unload(e, ctx);
	if (set != ctx->active) {
		ctx->active = set;
		if (in)
			ret = pfm_set_load(e, ctx);
	}
	set->runs++;
	set->timeout_left = set->timeout;
	if (was_counting)
		counting_begin_at(e, ctx, switched_at);
	return ret;
}

/* round-robin in id order; after the last comes the first */
int pfm_set_switch_next(struct pfm_engine *e, struct pfm_context *ctx)
{
	u32 i;

	for (i = 0; i < ctx->nr_sets && ctx->sets[i] != ctx->active; i++)
		;
	e->stats.set_switches++;
	return pfm_set_activate(e, ctx, ctx->sets[(i + 1) % ctx->nr_sets]);
}

u64 pfm_set_timeout_left(struct pfm_engine *e, struct pfm_context *ctx,
			 struct pfm_set *set)
{
	u64 elapsed;

	if (!ctx->counting || set != ctx->active)
		return set->timeout_left;
	elapsed = pfm_now(e) - ctx->act_start;
	return elapsed < set->timeout_left ? set->timeout_left - elapsed : 0;
}

u64 pfm_set_act_duration(struct pfm_engine *e, struct pfm_context *ctx,
			 struct pfm_set *set)
{
	if (!ctx->counting || set != ctx->active)
		return set->act_duration;
	return set->act_duration + pfm_now(e) - ctx->act_start;
}

void pfm_engine_timer(struct pfm_engine *e, u32 vcpu)
{
	struct pfm_context *ctx;
	u64 left;

	if (vcpu >= e->cfg.nr_vcpus)
		return;
	ctx = e->vcpus[vcpu].cur;
	/* a timer that raced with a stop or a switch-out finds nothing */
	if (!ctx || !ctx->counting ||
	    !(ctx->active->flags & PFM_SETFL_TIME_SWITCH))
		return;
	left = pfm_set_timeout_left(e, ctx, ctx->active);
	if (left) {
		e->ops->timer_arm(e->be, vcpu, left);
		return;
	}
	pfm_set_switch_next(e, ctx);
}

/*
 * Whether @ns is a timeout the set timer honours exactly: a multiple of
 * its granularity, so that no guest (nor a stream) makes the host switch
 * sets more often than that. perfmon2 asked the same of the clock's
 * resolution (EINVAL otherwise); the guest reads this one in
 * /sys/kernel/perfmon/device/set_timeout_res_ns.
 */
bool pfm_set_timeout_valid(const struct pfm_engine *e, u64 ns)
{
	return ns && !(ns % e->cfg.timer_granularity_ns);
}

/* the set calls: sets change only while the context is unloaded */

/*
 * Create a set, or define an existing one anew, as perfmon2: with its
 * PMCs back at their defaults and its runs and active time at zero
 * (its PMDs stay as written).
 */
static void set_define(struct pfm_engine *e, struct pfm_set *set,
		       const pfarg_setdesc_t *d)
{
	set->flags = d->set_flags;
	set->timeout = d->set_flags & PFM_SETFL_TIME_SWITCH ? d->set_timeout : 0;
	set->timeout_left = set->timeout;
	set->runs = 0;
	set->act_duration = 0;
	set->host_enabled_ns = 0;
	set->host_running_ns = 0;
	set->ovfls_lost = 0;
	set->host_throttles = 0;
	set->periods_raised = 0;
	set_pmcs_default(e, set);
}

#define PFM_SETFL_BOTH_SWITCH	(PFM_SETFL_OVFL_SWITCH | PFM_SETFL_TIME_SWITCH)

int pfm_cmd_create_evtsets(struct pfm_cmd_args *a)
{
	const u32 known = PFM_SETFL_KNOWN;
	struct pfm_engine *e = a->e;
	pfarg_setdesc_t *d = a->arg;
	struct pfm_set *set;
	u32 i;
	int ret;

	if (a->ctx->state != PFM_CTX_UNLOADED)
		return -EBUSY;
	for (i = 0; i < a->hdr->count; i++, d++) {
		a->hdr->err_index = i;
		d->set_flags &= ~PFM_REG_RETFL_MASK;	/* a reused vector */
		if ((d->set_flags & ~known) ||
		    (d->set_flags & PFM_SETFL_BOTH_SWITCH) ==
		    PFM_SETFL_BOTH_SWITCH)
			goto bad_entry;
		if ((d->set_flags & PFM_SETFL_TIME_SWITCH) &&
		    !pfm_set_timeout_valid(e, d->set_timeout))
			goto bad_entry;
		set = pfm_set_find(a->ctx, d->set_id);
		if (!set) {
			set = pfm_set_alloc(e, d->set_id);
			if (!set)
				return -ENOMEM;
			ret = pfm_set_insert(e, a->ctx, set);
			if (ret) {
				pfm_set_free(e, set);
				return ret;
			}
		}
		set_define(e, set, d);
	}
	a->hdr->err_index = 0;
	return 0;
bad_entry:
	d->set_flags |= PFM_REG_RETFL_EINVAL;
	return -EINVAL;
}

/*
 * Any set may go, set 0 too (perfmon2), but not the context's last:
 * a context always has a set to load.
 */
int pfm_cmd_delete_evtsets(struct pfm_cmd_args *a)
{
	struct pfm_context *ctx = a->ctx;
	pfarg_setdesc_t *d = a->arg;
	struct pfm_set *set;
	u32 i;

	if (ctx->state != PFM_CTX_UNLOADED)
		return -EBUSY;
	for (i = 0; i < a->hdr->count; i++, d++) {
		a->hdr->err_index = i;
		d->set_flags &= ~PFM_REG_RETFL_MASK;	/* a reused vector */
		set = pfm_set_find(ctx, d->set_id);
		if (!set || ctx->nr_sets == 1) {
			d->set_flags |= PFM_REG_RETFL_EINVAL;
			return -EINVAL;
		}
		set_remove(ctx, set);
		if (ctx->active == set)
			ctx->active = ctx->sets[0];
		if (ctx->reset_set == set)
			pfm_ctx_reset_forget(ctx);
		pfm_set_free(a->e, set);
	}
	a->hdr->err_index = 0;
	return 0;
}

/* backing counter times of the live set, not yet folded into it */
static void live_host_times(struct pfm_engine *e, struct pfm_context *ctx,
			    u64 *enabled, u64 *running)
{
	u64 elapsed = ctx->counting ? pfm_now(e) - ctx->act_start : 0;
	struct pfm_counter_time t;
	u16 s;

	for (s = 0; ctx->ctr_open && s < e->pmu.nr_pmds; s++) {
		if (ctx->ctr_failed[s])
			*enabled += elapsed;
		if (!ctx->ctr_open[s])
			continue;
		pfm_memset(&t, 0, sizeof(t));
		e->ops->counter_read(e->be, &ctx->ctrs[s], &t);
		*enabled += t.enabled_ns;
		*running += t.running_ns;
	}
}

int pfm_cmd_getinfo_evtsets(struct pfm_cmd_args *a)
{
	struct pfm_engine *e = a->e;
	struct pfm_context *ctx = a->ctx;
	pfarg_setinfo_t *info = a->arg;
	struct pfm_set *set;
	u64 enabled, running;
	u32 i;

	for (i = 0; i < a->hdr->count; i++, info++) {
		set = pfm_set_find(ctx, info->set_id);
		if (!set) {
			a->hdr->err_index = i;
			info->set_flags |= PFM_REG_RETFL_EINVAL;
			return -EINVAL;
		}
		info->set_flags = set->flags;
		pfm_memcpy(info->set_ovfl_pmds, set->ovfl_pmds,
			   sizeof(set->ovfl_pmds));
		info->set_runs = set->runs;
		info->set_timeout = pfm_set_timeout_left(e, ctx, set);
		info->set_act_duration = pfm_set_act_duration(e, ctx, set);
		pfm_memcpy(info->set_avail_pmcs, e->pmu.impl_pmcs,
			   sizeof(info->set_avail_pmcs));
		pfm_memcpy(info->set_avail_pmds, e->pmu.impl_pmds,
			   sizeof(info->set_avail_pmds));
		enabled = set->host_enabled_ns;
		running = set->host_running_ns;
		if (set == ctx->active)
			live_host_times(e, ctx, &enabled, &running);
		info->set_reserved3[PVPFM_SETINFO_HOST_ENABLED] = enabled;
		info->set_reserved3[PVPFM_SETINFO_HOST_RUNNING] = running;
		info->set_reserved3[PVPFM_SETINFO_OVFLS_LOST] = set->ovfls_lost;
		info->set_reserved3[PVPFM_SETINFO_HOST_THROTTLES] =
			set->host_throttles;
		info->set_reserved3[PVPFM_SETINFO_PERIODS_RAISED] =
			set->periods_raised;
	}
	return 0;
}
