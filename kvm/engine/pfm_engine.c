// SPDX-License-Identifier: GPL-2.0
/*
 * Engine life cycle: one per VM, created by the host with the personality,
 * vCPU count and limits the admin chose; destroyed with the VM.
 */
#include "pfm_priv.h"

/* the most vCPUs one engine serves (KVM's own bound is lower) */
#define PFM_MAX_VCPUS		4096

/*
 * @size 0 is refused: every engine object has a size, so 0 is a size
 * computation gone wrong, and an allocator's answer to it (a unique or
 * poisoned pointer) must not look like memory. SIZE_MAX is an overflow
 * (pfm_size_mul and friends saturate).
 */
void *pfm_zalloc(struct pfm_engine *e, size_t size)
{
	if (!size || size == SIZE_MAX)
		return NULL;
	return e->ops->zalloc(e->be, size);
}

void pfm_free(struct pfm_engine *e, void *p)
{
	if (p)
		e->ops->free(e->be, p);
}

struct pfm_context *pfm_ctx_find(struct pfm_engine *e, u32 id)
{
	u32 i;

	if (!id)
		return NULL;
	for (i = 0; i < e->lim.max_contexts; i++)
		if (e->ctxs[i] && e->ctxs[i]->id == id)
			return e->ctxs[i];
	return NULL;
}

/* zero fields take the defaults; -E2BIG if a limit is above the engine's */
static int limits_resolve(struct pfm_limits *lim, const struct pfm_limits *in)
{
	*lim = *in;
	if (!lim->max_contexts)
		lim->max_contexts = PFM_DFL_MAX_CONTEXTS;
	if (!lim->max_sets)
		lim->max_sets = PFM_DFL_MAX_SETS;
	if (!lim->max_vector)
		lim->max_vector = PFM_DFL_MAX_VECTOR;
	if (!lim->max_smpl_buf)
		lim->max_smpl_buf = PFM_DFL_MAX_SMPL_BUF;
	if (lim->max_contexts > PFM_LIMIT_MAX_CONTEXTS ||
	    lim->max_sets > PFM_LIMIT_MAX_SETS ||
	    lim->max_vector > PFM_LIMIT_MAX_VECTOR ||
	    lim->max_smpl_buf > PFM_LIMIT_MAX_SMPL_BUF)
		return -E2BIG;
	return 0;
}

static bool ops_complete(const struct pfm_backend_ops *ops)
{
	return ops->event_check && ops->counter_open && ops->counter_close &&
	       ops->counter_write && ops->counter_read &&
	       ops->counter_enable && ops->counter_disable && ops->now_ns &&
	       ops->timer_arm && ops->timer_cancel && ops->guest_check &&
	       ops->guest_write && ops->notify && ops->zalloc && ops->free;
}

int pfm_engine_create(const struct pfm_engine_cfg *cfg,
		      const struct pfm_backend_ops *ops, void *be,
		      struct pfm_engine **out)
{
	struct pfm_limits lim;
	struct pfm_engine *e;
	int ret;

	*out = NULL;
	if (!ops || !ops_complete(ops) || !cfg->nr_vcpus ||
	    cfg->nr_vcpus > PFM_MAX_VCPUS ||
	    cfg->counter_width < 8 || cfg->counter_width > 64)
		return -EINVAL;
	ret = limits_resolve(&lim, &cfg->limits);
	if (ret)
		return ret;

	e = ops->zalloc(be, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->ops = ops;
	e->be = be;
	e->cfg = *cfg;
	if (!e->cfg.timer_granularity_ns)
		e->cfg.timer_granularity_ns = 1;
	e->lim = lim;
	e->cfg.limits = lim;
	e->wmask = cfg->counter_width == 64 ? ~0ULL :
		   (1ULL << cfg->counter_width) - 1;
	e->next_ctx_id = 1;

	ret = pfm_pmu_init(&e->pmu, cfg);
	if (ret)
		goto fail;
	ret = -ENOMEM;
	e->ctxs = pfm_zalloc(e, pfm_size_mul(e->lim.max_contexts,
					     sizeof(*e->ctxs)));
	e->vcpus = pfm_zalloc(e, pfm_size_mul(cfg->nr_vcpus,
					      sizeof(*e->vcpus)));
	if (!e->ctxs || !e->vcpus)
		goto fail;
	*out = e;
	return 0;
fail:
	pfm_free(e, e->ctxs);
	pfm_free(e, e->vcpus);
	ops->free(be, e);
	return ret;
}

void pfm_engine_destroy(struct pfm_engine *e)
{
	u32 i;

	if (!e)
		return;
	for (i = 0; i < e->lim.max_contexts; i++)
		if (e->ctxs[i])
			pfm_ctx_destroy(e, e->ctxs[i]);
	pfm_free(e, e->ctxs);
	pfm_free(e, e->vcpus);
	e->ops->free(e->be, e);
}

void pfm_engine_stats(struct pfm_engine *e, struct pfm_engine_stats *st)
{
	struct pfm_context *ctx;
	u32 i, s;

	*st = e->stats;
	st->contexts = 0;
	st->sets = 0;
	st->loaded = 0;
	st->active_counters = 0;
	for (i = 0; i < e->lim.max_contexts; i++) {
		ctx = e->ctxs[i];
		if (!ctx)
			continue;
		st->contexts++;
		st->sets += ctx->nr_sets;
		if (ctx->state != PFM_CTX_UNLOADED)
			st->loaded++;
		for (s = 0; ctx->ctr_open && s < e->pmu.nr_pmds; s++)
			st->active_counters += ctx->ctr_open[s];
	}
}

const struct pfm_engine_cfg *pfm_engine_cfg(const struct pfm_engine *e)
{
	return &e->cfg;
}

static void ctx_view(const struct pfm_context *ctx, struct pfm_ctx_view *v)
{
	u32 s;

	*v = (struct pfm_ctx_view) {
		.id = ctx->id,
		.flags = ctx->flags,
		.loaded = ctx->state != PFM_CTX_UNLOADED,
		.masked = ctx->state == PFM_CTX_MASKED,
		.started = ctx->started,
		.vcpu = ctx->vcpu,
		.load_pid = ctx->load_pid,
		.tid = ctx->tid,
		.nr_sets = ctx->nr_sets,
		.active_set = ctx->active ? ctx->active->id : 0,
		.samples = ctx->smpl.fmt ? ctx->smpl.hdr.hdr_count : 0,
		.msgs_queued = ctx->msg_count,
	};
	for (s = 0; s < ctx->nr_sets; s++)
		v->set_runs += ctx->sets[s]->runs;
}

void pfm_engine_view(struct pfm_engine *e, const struct pfm_view_ops *ops,
		     void *arg)
{
	struct pfm_context *ctx;
	struct pfm_ctx_view v;
	u32 i, s;

	for (i = 0; i < e->lim.max_contexts; i++) {
		ctx = e->ctxs[i];
		if (!ctx)
			continue;
		ctx_view(ctx, &v);
		ops->context(arg, &v);
		for (s = 0; ctx->ctr_open && s < e->pmu.nr_pmds; s++)
			if (ctx->ctr_open[s])
				ops->counter(arg, &v, v.active_set,
					     &ctx->ctrs[s]);
	}
}
