// SPDX-License-Identifier: GPL-2.0
/*
 * Contexts: creation and destruction, their states and transitions.
 *
 *   UNLOADED --load--> LOADED --overflow (pfm_ovfl.c)--> MASKED
 *      ^                 |  ^                              |
 *      +-----unload------+  +----------restart-------------+
 *
 * A context masked without a notification (saturated) is not restarted:
 * it stays masked until unloaded.
 *
 * Orthogonal to the state: started (pfm_start/pfm_stop) and where the
 * context is in (its vCPU, or none while its thread is switched out).
 * A context counts only when LOADED, started and in.
 *
 * Exclusion, as perfmon2: one context per thread; one system-wide context
 * per vCPU; per-thread and system-wide contexts never coexist in a VM
 * (detected at load).
 */
#include "pfm_priv.h"

static bool is_system(const struct pfm_context *ctx)
{
	return ctx->flags & PFM_FL_SYSTEM_WIDE;
}

/* start or stop counting to match state, started and in */
static void update_counting(struct pfm_engine *e, struct pfm_context *ctx)
{
	bool should = ctx->vcpu >= 0 && ctx->started &&
		      ctx->state == PFM_CTX_LOADED;

	if (should && !ctx->counting)
		pfm_counting_begin(e, ctx);
	else if (!should && ctx->counting)
		pfm_counting_end(e, ctx);
}

int pfm_ctx_in(struct pfm_engine *e, struct pfm_context *ctx, u32 vcpu)
{
	int ret;

	ctx->vcpu = vcpu;
	e->vcpus[vcpu].cur = ctx;
	ret = pfm_set_load(e, ctx);
	update_counting(e, ctx);
	return ret;
}

void pfm_ctx_out(struct pfm_engine *e, struct pfm_context *ctx)
{
	if (ctx->counting)
		pfm_counting_end(e, ctx);
	pfm_set_unload(e, ctx);
	e->vcpus[ctx->vcpu].cur = NULL;
	ctx->vcpu = -1;
}

static void ctx_unload(struct pfm_engine *e, struct pfm_context *ctx)
{
	if (ctx->state == PFM_CTX_UNLOADED)
		return;
	if (ctx->vcpu >= 0)
		pfm_ctx_out(e, ctx);
	if (is_system(ctx))
		e->nr_sys_loaded--;
	else
		e->nr_thread_loaded--;
	ctx->state = PFM_CTX_UNLOADED;
	ctx->started = false;
	ctx->blocked = false;
	ctx->saturated = false;
	ctx->switch_pending = false;
	pfm_ctx_reset_forget(ctx);
}

void pfm_ctx_destroy(struct pfm_engine *e, struct pfm_context *ctx)
{
	u32 i;

	ctx_unload(e, ctx);
	for (i = 0; i < e->lim.max_contexts; i++)
		if (e->ctxs[i] == ctx)
			e->ctxs[i] = NULL;
	e->nr_ctxs--;
	for (i = 0; ctx->sets && i < ctx->nr_sets; i++)
		pfm_set_free(e, ctx->sets[i]);
	pfm_smpl_free(e, ctx);
	pfm_free(e, ctx->sets);
	pfm_free(e, ctx->ctrs);
	pfm_free(e, ctx->ctr_open);
	pfm_free(e, ctx->ctr_failed);
	pfm_free(e, ctx);
}

static int smpl_format(const char *name)
{
	static const char dfl[] = PFM_DFL_SMPL_NAME;
	unsigned int i;

	if (!name[0])
		return PFM_SMPL_NONE;
	for (i = 0; i < sizeof(dfl); i++)
		if (name[i] != dfl[i])
			return -EINVAL;
	/* the rest of the field must be padding */
	for (; i < PVPFM_SMPL_NAME_LEN; i++)
		if (name[i])
			return -EINVAL;
	return PFM_SMPL_DFL;
}

u32 pfm_ctx_new_id(struct pfm_engine *e)
{
	u32 id;

	do {
		id = e->next_ctx_id++;
	} while (!id || pfm_ctx_find(e, id));
	return id;
}

/*
 * A new unloaded context with set 0, its id not yet given: the slot and
 * every table it needs. NULL when out of memory; the caller checked
 * max_contexts.
 */
struct pfm_context *pfm_ctx_alloc(struct pfm_engine *e, u32 flags)
{
	struct pfm_context *ctx;
	struct pfm_set *set0;
	int slot;

	for (slot = 0; e->ctxs[slot]; slot++)
		;
	ctx = pfm_zalloc(e, sizeof(*ctx));
	if (!ctx)
		return NULL;
	e->ctxs[slot] = ctx;
	e->nr_ctxs++;
	ctx->flags = flags;
	ctx->vcpu = -1;
	ctx->sets = pfm_zalloc(e, pfm_size_mul(e->lim.max_sets,
					       sizeof(*ctx->sets)));
	ctx->ctrs = pfm_zalloc(e, pfm_size_mul(e->pmu.nr_pmds,
					       sizeof(*ctx->ctrs)));
	ctx->ctr_open = pfm_zalloc(e, pfm_size_mul(e->pmu.nr_pmds,
						   sizeof(*ctx->ctr_open)));
	ctx->ctr_failed = pfm_zalloc(e, pfm_size_mul(e->pmu.nr_pmds,
						     sizeof(*ctx->ctr_failed)));
	if (!ctx->sets || !ctx->ctrs || !ctx->ctr_open || !ctx->ctr_failed)
		goto fail;
	set0 = pfm_set_alloc(e, 0);
	if (!set0)
		goto fail;
	pfm_set_insert(e, ctx, set0);
	ctx->active = set0;
	return ctx;
fail:
	pfm_ctx_destroy(e, ctx);
	return NULL;
}

int pfm_cmd_create_context(struct pfm_cmd_args *a)
{
	struct pvpfm_create_arg *arg = a->arg;
	struct pfm_engine *e = a->e;
	struct pfm_context *ctx;
	u32 flags = arg->ctx.ctx_flags;
	int fmt, ret;

	if (flags & ~PFM_CTX_FLAGS_KNOWN)
		return -EINVAL;
	/* a system-wide context has no thread of its own to block */
	if ((flags & PFM_FL_SYSTEM_WIDE) && (flags & PFM_FL_NOTIFY_BLOCK))
		return -EINVAL;
	fmt = smpl_format(arg->smpl_name);
	if (fmt < 0)
		return fmt;
	if (e->nr_ctxs >= e->lim.max_contexts)
		return -EMFILE;
	ctx = pfm_ctx_alloc(e, flags);
	if (!ctx)
		return -ENOMEM;
	if (fmt == PFM_SMPL_DFL) {
		ret = pfm_smpl_init(e, ctx, &arg->smpl_arg);
		if (ret) {
			pfm_ctx_destroy(e, ctx);
			return ret;
		}
	}
	ctx->id = pfm_ctx_new_id(e);
	a->hdr->ctx_id = ctx->id;
	return 0;
}

int pfm_cmd_destroy_context(struct pfm_cmd_args *a)
{
	pfm_ctx_destroy(a->e, a->ctx);
	return 0;
}

static int load_check_system(struct pfm_engine *e, const pfarg_load_t *load,
			     const struct pfm_caller *who)
{
	/* system-wide: loaded on the calling CPU, as perfmon2 requires */
	if (load->load_pid != who->vcpu)
		return -EINVAL;
	if (e->nr_thread_loaded || e->vcpus[who->vcpu].cur)
		return -EBUSY;
	return 0;
}

static int load_check_thread(struct pfm_engine *e,
			     const struct pfm_context *ctx,
			     const struct pvpfm_load_arg *arg,
			     const struct pfm_caller *who)
{
	u32 i;

	if (e->nr_sys_loaded)
		return -EBUSY;
	/* one context per thread: perfmon2's EEXIST */
	for (i = 0; i < e->lim.max_contexts; i++)
		if (e->ctxs[i] && e->ctxs[i]->state != PFM_CTX_UNLOADED &&
		    e->ctxs[i]->load_pid == arg->load.load_pid)
			return -EEXIST;
	if (arg->flags & PVPFM_LOAD_SELF) {
		if (arg->load.load_pid != who->tid)
			return -EINVAL;
		/* blocked until pfm_restart, it could never call pfm_restart */
		if (ctx->flags & PFM_FL_NOTIFY_BLOCK)
			return -EINVAL;
		/* the guest did not switch the previous thread out */
		if (e->vcpus[who->vcpu].cur)
			return -EBUSY;
	}
	return 0;
}

int pfm_cmd_load_context(struct pfm_cmd_args *a)
{
	struct pvpfm_load_arg *arg = a->arg;
	struct pfm_engine *e = a->e;
	struct pfm_context *ctx = a->ctx;
	struct pfm_set *set;
	int ret;

	if (ctx->state != PFM_CTX_UNLOADED)
		return -EBUSY;
	if (arg->flags & ~PVPFM_LOAD_SELF)
		return -EINVAL;
	set = pfm_set_find(ctx, arg->load.load_set);
	if (!set)
		return -EINVAL;
	/* samples need the whole buffer registered first */
	if (ctx->smpl.fmt && !pfm_smpl_ready(ctx))
		return -ENOBUFS;
	ret = is_system(ctx) ? load_check_system(e, &arg->load, &a->who) :
			       load_check_thread(e, ctx, arg, &a->who);
	if (ret)
		return ret;

	ctx->load_pid = arg->load.load_pid;
	ctx->tid = is_system(ctx) ? 0 : arg->load.load_pid;
	ctx->tgid = is_system(ctx) ? 0 : arg->tgid;
	ctx->state = PFM_CTX_LOADED;
	ctx->started = false;
	ctx->active = set;
	set->runs++;
	set->timeout_left = set->timeout;
	if (is_system(ctx))
		e->nr_sys_loaded++;
	else
		e->nr_thread_loaded++;

	if (is_system(ctx) || (arg->flags & PVPFM_LOAD_SELF)) {
		ret = pfm_ctx_in(e, ctx, a->who.vcpu);
		if (ret)
			ctx_unload(e, ctx);
	}
	return ret;
}

int pfm_cmd_unload_context(struct pfm_cmd_args *a)
{
	struct pvpfm_unload_arg *arg = a->hdr->arg_size ? a->arg : NULL;
	struct pfm_context *ctx = a->ctx;
	pfarg_msg_t msg;

	if (arg && (arg->flags & ~PVPFM_UNLOAD_TASK_EXIT))
		return -EINVAL;
	/* nothing to do, as perfmon2's __pfm_unload_context */
	if (ctx->state == PFM_CTX_UNLOADED)
		return 0;
	ctx_unload(a->e, ctx);
	if (arg && (arg->flags & PVPFM_UNLOAD_TASK_EXIT)) {
		pfm_memset(&msg, 0, sizeof(msg));
		msg.type = PFM_MSG_END;
		pfm_msg_post(a->e, ctx, &msg);
	}
	return 0;
}

int pfm_cmd_start(struct pfm_cmd_args *a)
{
	pfarg_start_t *start = a->hdr->arg_size ? a->arg : NULL;
	struct pfm_context *ctx = a->ctx;
	struct pfm_set *set;
	int ret = 0;

	if (ctx->state == PFM_CTX_UNLOADED)
		return -EINVAL;
	/*
	 * Masked, as perfmon2: started, and the set it names is the one
	 * that counts once restarted (a switch that was due is dropped)
	 */
	if (start) {
		set = pfm_set_find(ctx, start->start_set);
		if (!set)
			return -EINVAL;
		if (set != ctx->active) {
			ret = pfm_set_activate(a->e, ctx, set);
			ctx->switch_pending = false;
		}
	}
	ctx->started = true;
	update_counting(a->e, ctx);
	return ret;
}

int pfm_cmd_stop(struct pfm_cmd_args *a)
{
	struct pfm_context *ctx = a->ctx;

	if (ctx->state == PFM_CTX_UNLOADED)
		return -EINVAL;
	ctx->started = false;
	update_counting(a->e, ctx);
	return 0;
}

int pfm_cmd_restart(struct pfm_cmd_args *a)
{
	struct pfm_engine *e = a->e;
	struct pfm_context *ctx = a->ctx;

	/*
	 * perfmon2's __pfm_restart: EBUSY unless masked by a notification,
	 * unloaded too (its thread gone, perfmon2's ZOMBIE): nothing was
	 * notified, nothing to resume, and programs read EBUSY as "the task
	 * terminated"
	 */
	if (ctx->state != PFM_CTX_MASKED || ctx->saturated)
		return -EBUSY;
	if (ctx->smpl.fmt)
		pfm_smpl_reset(e, ctx);
	if (ctx->reset_set)
		pfm_pmds_reset(e, ctx, ctx->reset_set, ctx->reset_pending, true);
	pfm_ctx_reset_forget(ctx);
	ctx->state = PFM_CTX_LOADED;
	ctx->blocked = false;
	if (ctx->switch_pending) {
		ctx->switch_pending = false;
		pfm_set_switch_next(e, ctx);
	}
	update_counting(e, ctx);
	return 0;
}

/*
 * The guest carries out PFM_FL_NOTIFY_BLOCK (the host cannot stop a guest
 * thread): after a notification it asks whether its thread must wait.
 */
int pfm_cmd_ctx_state(struct pfm_cmd_args *a)
{
	struct pvpfm_ctx_state *st = a->arg;
	struct pfm_context *ctx = a->ctx;

	pfm_memset(st, 0, sizeof(*st));
	if (ctx->state == PFM_CTX_MASKED)
		st->flags |= PVPFM_CTX_MASKED;
	if (ctx->blocked)
		st->flags |= PVPFM_CTX_BLOCKED;
	return 0;
}

static int switch_check(struct pfm_engine *e, u32 vcpu,
			struct pfm_context *out, struct pfm_context *in)
{
	if (out && (is_system(out) || out->state == PFM_CTX_UNLOADED ||
		    e->vcpus[vcpu].cur != out))
		return -EINVAL;
	if (in && (is_system(in) || in->state == PFM_CTX_UNLOADED))
		return -EINVAL;
	if (in && e->vcpus[vcpu].cur && e->vcpus[vcpu].cur != out)
		return -EBUSY;
	return 0;
}

int pfm_cmd_switch(struct pfm_cmd_args *a)
{
	struct pvpfm_switch_arg *arg = a->arg;
	struct pfm_engine *e = a->e;
	struct pfm_context *out = NULL, *in = NULL;
	u32 vcpu = a->who.vcpu;
	int ret;

	if (arg->out_ctx) {
		out = pfm_ctx_find(e, arg->out_ctx);
		if (!out)
			return -EBADF;
	}
	if (arg->in_ctx) {
		in = pfm_ctx_find(e, arg->in_ctx);
		if (!in)
			return -EBADF;
	}
	ret = switch_check(e, vcpu, out, in);
	if (ret)
		return ret;

	if (out)
		pfm_ctx_out(e, out);
	if (!in)
		return 0;
	/* it moved here from another vCPU without being switched out there */
	if (in->vcpu >= 0)
		pfm_ctx_out(e, in);
	in->tid = arg->in_tid;
	in->tgid = arg->in_tgid;
	/*
	 * The context is in whatever counters could open: those that could
	 * not count as enabled, not running (getinfo). The status says only
	 * whether it is in, which the guest's hook must know to switch it
	 * out again.
	 */
	pfm_ctx_in(e, in, vcpu);
	return 0;
}
