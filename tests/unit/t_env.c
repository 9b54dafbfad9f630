// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test environment and command helpers: see t_env.h.
 */
#include <stdlib.h>

#include "t_env.h"

void t_opts_default(struct t_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->personality = PVPFM_PERS_AMD64;
	o->counter_width = 32;
	o->nr_vcpus = 2;
	o->timer_granularity_ns = 1000;
	o->gp_counters = 4;
	o->fixed_counters = 3;
	o->arch_version = 3;
}

/* the engine's entry point, as the guest's DOORBELL reaches it */
static int t_deliver(struct cb_caller *c, struct cb_cmd *cmd)
{
	struct t_env *t = CB_CONTAINER(c, struct t_env, cb);
	int status;
	u32 len;

	memset(t->block, 0, sizeof(t->block));
	len = cb_fill(t->block, cmd, t->tid[t->vcpu], t->tgid[t->vcpu]);
	assert_true(len);
	t->exec_ret = pfm_engine_exec(t->e, t->vcpu, t->block, len);
	/* the whole block goes back to the guest */
	assert_int_equal(t->exec_ret, len);
	status = cb_unfill(t->block, c, cmd);
	assert_true(status <= 0);
	return status;
}

struct t_env *t_env_new(const struct t_opts *o)
{
	struct t_opts dfl;
	struct sim_cfg sc;
	struct t_env *t;
	u32 v;

	if (!o) {
		t_opts_default(&dfl);
		o = &dfl;
	}
	t = calloc(1, sizeof(*t));
	assert_non_null(t);
	memset(&sc, 0, sizeof(sc));
	sc.nr_vcpus = o->nr_vcpus;
	sc.counter_width = o->counter_width;
	sc.guest_base = T_GUEST_BASE;
	sc.guest_size = T_GUEST_SIZE;
	t->sim = sim_create(&sc);
	assert_non_null(t->sim);
	sim_refuse(t->sim, SIM_EV_GENERIC(EV_REFUSED));

	memset(&t->cfg, 0, sizeof(t->cfg));
	t->cfg.personality = o->personality;
	t->cfg.gp_counters = o->gp_counters;
	t->cfg.fixed_counters = o->fixed_counters;
	t->cfg.arch_version = o->arch_version;
	t->cfg.timer_granularity_ns = o->timer_granularity_ns;
	t->cfg.limits = o->limits;
	assert_int_equal(sim_engine_create(t->sim, &t->cfg, &t->e), 0);
	assert_non_null(t->e);
	for (v = 0; v < SIM_MAX_VCPUS; v++) {
		t->tid[v] = 1000 + v;
		t->tgid[v] = 900;
	}
	t->cb.deliver = t_deliver;
	return t;
}

struct t_env *t_env_limits(const struct pfm_limits *lim)
{
	struct t_opts o;

	t_opts_default(&o);
	o.limits = *lim;
	return t_env_new(&o);
}

void t_env_free(struct t_env *t)
{
	struct sim *s = t->sim;

	pfm_engine_destroy(t->e);
	/* what the engine left behind or did wrong fails the test */
	assert_int_equal(s->live_allocs, 0);
	assert_int_equal(s->nr_open, 0);
	assert_int_equal(s->pinned, 0);
	assert_int_equal(sim_leaks(s), 0);
	assert_int_equal(s->bad_opens, 0);
	assert_int_equal(s->bad_frees, 0);
	assert_int_equal(s->bad_ops, 0);
	assert_int_equal(s->guest_write_errors, 0);
	assert_false(s->runaway);
	sim_destroy(s);
	free(t);
}

int t_setup(void **state)
{
	*state = t_env_new(NULL);
	return 0;
}

int t_teardown(void **state)
{
	t_env_free(T_ENV(state));
	return 0;
}

int t_create(struct t_env *t, u32 flags)
{
	u32 id;
	int ret = cb_create(&t->cb, flags, &id);

	return ret ? ret : (int)id;
}

int t_create_smpl(struct t_env *t, u32 flags, u64 buf_size)
{
	u32 id;
	int ret = cb_create_smpl(&t->cb, flags, buf_size, &id);

	return ret ? ret : (int)id;
}

u32 t_ctx(struct t_env *t, u32 flags)
{
	int id = t_create(t, flags);

	assert_true(id > 0);
	return (u32)id;
}

/* intel_arch's FIXED_CTR_CTRL, which controls PMDs 16 and up */
#define T_FIXED_CTRL_PMC	16

void t_pmc(struct t_env *t, u32 ctx, u16 set, u16 num, u64 value)
{
	u16 n, last = num < T_FIXED_CTRL_PMC ? num : PFM_FIRST_SW_PMD - 1;
	pfarg_pmc_t pmc;
	pfarg_pmd_t pmd;
	uint64_t v;

	cb_pmc_init(&pmc, num, set, value);
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &pmc, 1), 0);
	/*
	 * its PMDs, at 0 unless the test programmed them already (only a
	 * PMD in use can be read); one not implemented is refused
	 */
	for (n = num; n <= last; n++) {
		if (cb_read_pmd(&t->cb, ctx, set, n, &v) != -EINVAL)
			continue;
		cb_pmd_init(&pmd, n, set, 0);
		cb_write_pmds(&t->cb, ctx, &pmd, 1);
	}
}

void t_pmd(struct t_env *t, u32 ctx, u16 set, u16 num, u64 value)
{
	pfarg_pmd_t pmd;

	cb_pmd_init(&pmd, num, set, value);
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &pmd, 1), 0);
}

void t_pmd_period(struct t_env *t, u32 ctx, u16 set, u16 num, u64 period,
		  u32 flags)
{
	pfarg_pmd_t pmd;

	cb_pmd_init(&pmd, num, set, -period);
	pmd.reg_flags = flags;
	pmd.reg_short_reset = -period;
	pmd.reg_long_reset = -period;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &pmd, 1), 0);
}

u64 t_read(struct t_env *t, u32 ctx, u16 set, u16 num)
{
	uint64_t value;

	assert_int_equal(cb_read_pmd(&t->cb, ctx, set, num, &value), 0);
	return value;
}

void t_load_self(struct t_env *t, u32 ctx)
{
	assert_int_equal(cb_load(&t->cb, ctx, t->tid[t->vcpu], 0,
				 PVPFM_LOAD_SELF, t->tgid[t->vcpu]), 0);
}

void t_load_sys(struct t_env *t, u32 ctx)
{
	assert_int_equal(cb_load(&t->cb, ctx, t->vcpu, 0, 0, 0), 0);
}

void t_go(struct t_env *t, u32 ctx)
{
	t->vcpu = 0;
	t_load_self(t, ctx);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
}

u64 t_set(struct t_env *t, u32 ctx, u16 id, u32 flags, u64 timeout)
{
	pfarg_setdesc_t d;

	memset(&d, 0, sizeof(d));
	d.set_id = id;
	d.set_flags = flags;
	d.set_timeout = timeout;
	assert_int_equal(cb_create_sets(&t->cb, ctx, &d, 1), 0);
	return d.set_timeout;
}

void t_info(struct t_env *t, u32 ctx, u16 id, pfarg_setinfo_t *info)
{
	memset(info, 0, sizeof(*info));
	info->set_id = id;
	assert_int_equal(cb_getinfo_sets(&t->cb, ctx, info, 1), 0);
}

u64 t_runs(struct t_env *t, u32 ctx, u16 id)
{
	pfarg_setinfo_t info;

	t_info(t, ctx, id, &info);
	return info.set_runs;
}

u32 t_drain_msgs(struct t_env *t, u32 ctx, pfarg_msg_t *out, u32 max)
{
	pfarg_msg_t m;
	u32 n = 0;

	while (cb_read_msg(&t->cb, ctx, &m) == 0) {
		if (n < max)
			out[n] = m;
		n++;
		assert_true(n <= 4 * PFM_MSGQ_DEPTH);
	}
	return n;
}

u64 t_smpl_page_gpa(unsigned int i)
{
	return T_SMPL_GPA + (u64)i * PVPFM_PAGE_SIZE;
}

void t_smpl_fill(struct t_env *t, unsigned int first, unsigned int n)
{
	memset(sim_guest_ptr(t->sim, t_smpl_page_gpa(first),
			     n * PVPFM_PAGE_SIZE),
	       T_SMPL_FILL, n * PVPFM_PAGE_SIZE);
}

u32 t_smpl_ctx(struct t_env *t, u32 flags, u64 buf_size)
{
	u64 gpa[16];
	unsigned int i, n = (buf_size + PVPFM_PAGE_SIZE - 1) / PVPFM_PAGE_SIZE;
	int ctx;

	assert_true(n <= 16);
	t_smpl_fill(t, 0, 16);
	ctx = t_create_smpl(t, flags, buf_size);
	assert_true(ctx > 0);
	for (i = 0; i < n; i++)
		gpa[i] = t_smpl_page_gpa(i);
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 0, n, gpa), 0);
	return ctx;
}

struct pfm_engine_stats t_stats(struct t_env *t)
{
	struct pfm_engine_stats st;

	pfm_engine_stats(t->e, &st);
	return st;
}

void t_assert_stopped_at(struct t_env *t, u32 index, u32 flags, u32 retfl)
{
	assert_int_equal(t->cb.hdr.err_index, index);
	assert_int_equal(flags & PFM_REG_RETFL_MASK, retfl);
}
