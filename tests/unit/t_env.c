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
	return t;
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

int t_cmd(struct t_env *t, u16 cmd, u32 ctx_id, u32 count, void *arg,
	  u32 arg_size)
{
	struct pvpfm_cmd_hdr *hdr = (struct pvpfm_cmd_hdr *)t->block;

	assert_true(arg_size <= PVPFM_CMD_ARGS_MAX);
	memset(t->block, 0, sizeof(t->block));
	hdr->version = PVPFM_ABI_VERSION;
	hdr->cmd = cmd;
	hdr->ctx_id = ctx_id;
	hdr->count = count;
	hdr->status = 0x5a5a5a5a;	/* must be overwritten */
	hdr->arg_size = arg_size;
	hdr->err_index = 0xdeadbeef;
	hdr->tid = t->tid[t->vcpu];
	hdr->tgid = t->tgid[t->vcpu];
	if (arg_size)
		memcpy(hdr + 1, arg, arg_size);
	t->exec_ret = pfm_engine_exec(t->e, t->vcpu, t->block,
				      sizeof(*hdr) + arg_size);
	/* the whole block goes back to the guest */
	assert_int_equal(t->exec_ret, sizeof(*hdr) + arg_size);
	t->hdr = *hdr;
	if (arg_size)
		memcpy(arg, hdr + 1, arg_size);
	assert_true(hdr->status <= 0);
	return hdr->status;
}

int t_create(struct t_env *t, u32 flags)
{
	struct pvpfm_create_arg a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.ctx.ctx_flags = flags;
	ret = t_cmd(t, PVPFM_CMD_CREATE_CONTEXT, 0, 0, &a, sizeof(a));
	return ret ? ret : (int)t->hdr.ctx_id;
}

int t_create_smpl(struct t_env *t, u32 flags, u64 buf_size)
{
	struct pvpfm_create_arg a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.ctx.ctx_flags = flags;
	strcpy(a.smpl_name, PFM_DFL_SMPL_NAME);
	a.smpl_arg.buf_size = buf_size;
	ret = t_cmd(t, PVPFM_CMD_CREATE_CONTEXT, 0, 0, &a, sizeof(a));
	return ret ? ret : (int)t->hdr.ctx_id;
}

int t_write_pmcs(struct t_env *t, u32 ctx, pfarg_pmc_t *v, u32 n)
{
	return t_cmd(t, PVPFM_CMD_WRITE_PMCS, ctx, n, v, n * sizeof(*v));
}

int t_write_pmds(struct t_env *t, u32 ctx, pfarg_pmd_t *v, u32 n)
{
	return t_cmd(t, PVPFM_CMD_WRITE_PMDS, ctx, n, v, n * sizeof(*v));
}

int t_read_pmds(struct t_env *t, u32 ctx, pfarg_pmd_t *v, u32 n)
{
	return t_cmd(t, PVPFM_CMD_READ_PMDS, ctx, n, v, n * sizeof(*v));
}

int t_load(struct t_env *t, u32 ctx, u32 pid, u16 set, u32 flags, u32 tgid)
{
	struct pvpfm_load_arg a;

	memset(&a, 0, sizeof(a));
	a.load.load_pid = pid;
	a.load.load_set = set;
	a.flags = flags;
	a.tgid = tgid;
	return t_cmd(t, PVPFM_CMD_LOAD_CONTEXT, ctx, 0, &a, sizeof(a));
}

int t_start(struct t_env *t, u32 ctx)
{
	return t_cmd(t, PVPFM_CMD_START, ctx, 0, NULL, 0);
}

int t_start_set(struct t_env *t, u32 ctx, u16 set)
{
	pfarg_start_t a;

	memset(&a, 0, sizeof(a));
	a.start_set = set;
	return t_cmd(t, PVPFM_CMD_START, ctx, 0, &a, sizeof(a));
}

int t_stop(struct t_env *t, u32 ctx)
{
	return t_cmd(t, PVPFM_CMD_STOP, ctx, 0, NULL, 0);
}

int t_restart(struct t_env *t, u32 ctx)
{
	return t_cmd(t, PVPFM_CMD_RESTART, ctx, 0, NULL, 0);
}

int t_create_sets(struct t_env *t, u32 ctx, pfarg_setdesc_t *v, u32 n)
{
	return t_cmd(t, PVPFM_CMD_CREATE_EVTSETS, ctx, n, v, n * sizeof(*v));
}

int t_getinfo(struct t_env *t, u32 ctx, pfarg_setinfo_t *v, u32 n)
{
	return t_cmd(t, PVPFM_CMD_GETINFO_EVTSETS, ctx, n, v, n * sizeof(*v));
}

int t_delete_sets(struct t_env *t, u32 ctx, pfarg_setdesc_t *v, u32 n)
{
	return t_cmd(t, PVPFM_CMD_DELETE_EVTSETS, ctx, n, v, n * sizeof(*v));
}

int t_unload(struct t_env *t, u32 ctx)
{
	return t_cmd(t, PVPFM_CMD_UNLOAD_CONTEXT, ctx, 0, NULL, 0);
}

int t_unload_flags(struct t_env *t, u32 ctx, u32 flags)
{
	struct pvpfm_unload_arg a = { .flags = flags, .reserved = 0 };

	return t_cmd(t, PVPFM_CMD_UNLOAD_CONTEXT, ctx, 0, &a, sizeof(a));
}

int t_destroy(struct t_env *t, u32 ctx)
{
	return t_cmd(t, PVPFM_CMD_DESTROY_CONTEXT, ctx, 0, NULL, 0);
}

int t_switch(struct t_env *t, u32 out, u32 in, u32 in_tid, u32 in_tgid)
{
	struct pvpfm_switch_arg a = {
		.out_ctx = out, .in_ctx = in, .in_tid = in_tid, .in_tgid = in_tgid,
	};

	return t_cmd(t, PVPFM_CMD_SWITCH, 0, 0, &a, sizeof(a));
}

int t_smpl_register(struct t_env *t, u32 ctx, u32 first, u32 n,
		    const u64 *gpa)
{
	u64 buf[1 + 512];
	struct pvpfm_smpl_register_arg *a = (void *)buf;

	assert_true(n <= 512);
	a->first_page = first;
	a->nr_pages = n;
	memcpy(a->gpa, gpa, n * sizeof(u64));
	return t_cmd(t, PVPFM_CMD_SMPL_REGISTER, ctx, 0, a,
		     sizeof(*a) + n * sizeof(u64));
}

int t_read_msg(struct t_env *t, u32 ctx, pfarg_msg_t *msg)
{
	memset(msg, 0, sizeof(*msg));
	return t_cmd(t, PVPFM_CMD_READ_MSG, ctx, 0, msg, sizeof(*msg));
}

int t_pmu_info(struct t_env *t, struct pvpfm_pmu_info *info)
{
	memset(info, 0, sizeof(*info));
	return t_cmd(t, PVPFM_CMD_PMU_INFO, 0, 0, info, sizeof(*info));
}

u32 t_ctx(struct t_env *t, u32 flags)
{
	int id = t_create(t, flags);

	assert_true(id > 0);
	return (u32)id;
}

void t_pmc(struct t_env *t, u32 ctx, u16 set, u16 num, u64 value)
{
	pfarg_pmc_t pmc;

	memset(&pmc, 0, sizeof(pmc));
	pmc.reg_num = num;
	pmc.reg_set = set;
	pmc.reg_value = value;
	assert_int_equal(t_write_pmcs(t, ctx, &pmc, 1), 0);
}

void t_pmd(struct t_env *t, u32 ctx, u16 set, u16 num, u64 value)
{
	pfarg_pmd_t pmd;

	memset(&pmd, 0, sizeof(pmd));
	pmd.reg_num = num;
	pmd.reg_set = set;
	pmd.reg_value = value;
	assert_int_equal(t_write_pmds(t, ctx, &pmd, 1), 0);
}

void t_pmd_period(struct t_env *t, u32 ctx, u16 set, u16 num, u64 period,
		  u32 flags)
{
	pfarg_pmd_t pmd;

	memset(&pmd, 0, sizeof(pmd));
	pmd.reg_num = num;
	pmd.reg_set = set;
	pmd.reg_flags = flags;
	pmd.reg_value = -period;
	pmd.reg_short_reset = -period;
	pmd.reg_long_reset = -period;
	assert_int_equal(t_write_pmds(t, ctx, &pmd, 1), 0);
}

u64 t_read(struct t_env *t, u32 ctx, u16 set, u16 num)
{
	pfarg_pmd_t pmd;

	memset(&pmd, 0, sizeof(pmd));
	pmd.reg_num = num;
	pmd.reg_set = set;
	assert_int_equal(t_read_pmds(t, ctx, &pmd, 1), 0);
	return pmd.reg_value;
}

void t_load_self(struct t_env *t, u32 ctx)
{
	assert_int_equal(t_load(t, ctx, t->tid[t->vcpu], 0, PVPFM_LOAD_SELF,
				t->tgid[t->vcpu]), 0);
}

void t_load_sys(struct t_env *t, u32 ctx)
{
	assert_int_equal(t_load(t, ctx, t->vcpu, 0, 0, 0), 0);
}

u64 t_set(struct t_env *t, u32 ctx, u16 id, u32 flags, u64 timeout)
{
	pfarg_setdesc_t d;

	memset(&d, 0, sizeof(d));
	d.set_id = id;
	d.set_flags = flags;
	d.set_timeout = timeout;
	assert_int_equal(t_create_sets(t, ctx, &d, 1), 0);
	return d.set_timeout;
}

void t_info(struct t_env *t, u32 ctx, u16 id, pfarg_setinfo_t *info)
{
	memset(info, 0, sizeof(*info));
	info->set_id = id;
	assert_int_equal(t_getinfo(t, ctx, info, 1), 0);
}

u32 t_drain_msgs(struct t_env *t, u32 ctx, pfarg_msg_t *out, u32 max)
{
	pfarg_msg_t m;
	u32 n = 0;

	while (t_read_msg(t, ctx, &m) == 0) {
		if (n < max)
			out[n] = m;
		n++;
		assert_true(n <= 4 * PFM_MSGQ_DEPTH);
	}
	return n;
}

struct pfm_engine_stats t_stats(struct t_env *t)
{
	struct pfm_engine_stats st;

	pfm_engine_stats(t->e, &st);
	return st;
}
