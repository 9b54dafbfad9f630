// SPDX-License-Identifier: GPL-2.0
/*
 * What the engine tells the host's operator: calls by command,
 * failed calls by errno, registers refused because the host cannot count
 * them (NOTAVAIL) apart from those the operator's filter refused, and the
 * walk over contexts and open counters (pfm_engine_view).
 */
#include "t_env.h"

T_CTX_TEST(test_calls_and_refusals, 0)
{
	pfarg_pmc_t pmc;
	struct pfm_engine_stats st;

	assert_int_equal(cb_stop(&t->cb, ctx + 100), -EBADF);
	cb_pmc_init(&pmc, 200, 0, 0);
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &pmc, 1), -EINVAL);
	assert_int_equal(cb_restart(&t->cb, ctx), -EBUSY);
	st = t_stats(t);
	assert_int_equal(st.calls[PVPFM_CMD_CREATE_CONTEXT], 1);
	assert_int_equal(st.calls[PVPFM_CMD_STOP], 1);
	assert_int_equal(st.calls[PVPFM_CMD_WRITE_PMCS], 1);
	assert_int_equal(st.calls[PVPFM_CMD_RESTART], 1);
	assert_int_equal(st.refusals[EBADF], 1);
	assert_int_equal(st.refusals[EINVAL], 1);
	assert_int_equal(st.refusals[EBUSY], 1);
	assert_int_equal(st.command_errors, 3);
	assert_int_equal(st.notavail, 0);
	assert_int_equal(st.filtered, 0);
}

T_CTX_TEST(test_notavail_apart_from_filtered, 0)
{
	pfarg_pmc_t pmc;
	struct pfm_engine_stats st;

	sim_refuse(t->sim, KEY_A);
	sim_forbid(t->sim, KEY_B);
	cb_pmc_init(&pmc, 0, 0, T_EVTSEL(EV_A));
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &pmc, 1), -EINVAL);
	assert_true(pmc.reg_flags & PFM_REG_RETFL_NOTAVAIL);
	cb_pmc_init(&pmc, 0, 0, T_EVTSEL(EV_B));
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &pmc, 1), -EINVAL);
	assert_true(pmc.reg_flags & PFM_REG_RETFL_NOTAVAIL);
	cb_pmc_init(&pmc, 0, 0, T_EVTSEL(EV_C));
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &pmc, 1), 0);
	st = t_stats(t);
	assert_int_equal(st.notavail, 1);
	assert_int_equal(st.filtered, 1);
	assert_int_equal(st.refusals[EINVAL], 2);
}

/* a virtual PMD refused by the filter is counted as filtered too */
T_CTX_TEST(test_virtual_pmd_filtered, 0)
{
	pfarg_pmd_t pmd;

	sim_forbid(t->sim, SIM_EV_VIRTUAL(PVPFM_VPMD_VM_EXITS));
	cb_pmd_init(&pmd, PVPFM_VPMD_VM_EXITS, 0, 0);
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &pmd, 1), -EINVAL);
	assert_true(pmd.reg_flags & PFM_REG_RETFL_NOTAVAIL);
	assert_int_equal(t_stats(t).filtered, 1);
	assert_int_equal(t_stats(t).notavail, 0);
}

/*
 * While a VM with KVM's mediated vPMU runs on the host, perf refuses
 * every event that counts a guest on the host's PMU. The guest's entry
 * says why (PVPFM_REG_RETFL_HOST_MEDIATED beside NOTAVAIL), the host's
 * operator sees it counted apart from NOTAVAIL, and virtual PMDs (no PMU)
 * still count.
 */
T_CTX_TEST(test_host_mediated_refused, 0)
{
	pfarg_pmc_t pmc;
	pfarg_pmd_t pmd;
	struct pfm_engine_stats st;

	t->sim->pmu_mediated = true;
	cb_pmc_init(&pmc, 0, 0, T_EVTSEL(EV_A));
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &pmc, 1), -EINVAL);
	assert_int_equal(pmc.reg_flags, PFM_REG_RETFL_NOTAVAIL |
					PVPFM_REG_RETFL_HOST_MEDIATED);
	cb_pmd_init(&pmd, PVPFM_VPMD_VM_EXITS, 0, 0);
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &pmd, 1), 0);
	assert_int_equal(pmd.reg_flags, 0);
	st = t_stats(t);
	assert_int_equal(st.host_mediated, 1);
	assert_int_equal(st.notavail, 0);
	assert_int_equal(st.filtered, 0);

	/* the same event once the mediated VM is gone: no flag left over */
	t->sim->pmu_mediated = false;
	pmc.reg_flags = PVPFM_REG_RETFL_HOST_MEDIATED;
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &pmc, 1), 0);
	assert_int_equal(pmc.reg_flags, 0);
}

/*
 * A mediated VM that starts between the PMC write and the load: the
 * counter does not open and the load fails with EOPNOTSUPP, which the
 * host's tools show as the mediated vPMU's (no other cause gives it).
 */
T_CTX_TEST(test_host_mediated_at_load, PFM_FL_SYSTEM_WIDE)
{
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmd(t, ctx, 0, 0, 0);
	t->sim->pmu_mediated = true;
	assert_int_equal(cb_load(&t->cb, ctx, t->vcpu, 0, 0, 0), -EOPNOTSUPP);
	assert_int_equal(t_stats(t).refusals[EOPNOTSUPP], 1);
	assert_int_equal(t_stats(t).host_mediated, 0);
	assert_int_equal(t->sim->nr_open, 0);
}

struct seen {
	u32 ctxs, counters;
	struct pfm_ctx_view ctx[4];
	u16 pmd[8], set[8];
	u32 counter_ctx[8], counter_vcpu[8];
};

static void see_context(void *arg, const struct pfm_ctx_view *c)
{
	struct seen *s = arg;

	assert_true(s->ctxs < ARRAY_SIZE(s->ctx));
	s->ctx[s->ctxs++] = *c;
}

static void see_counter(void *arg, const struct pfm_ctx_view *c, u16 set,
			const struct pfm_counter *ctr)
{
	struct seen *s = arg;

	assert_true(s->counters < ARRAY_SIZE(s->pmd));
	s->pmd[s->counters] = ctr->ev.pmd;
	s->set[s->counters] = set;
	s->counter_ctx[s->counters] = c->id;
	s->counter_vcpu[s->counters++] = ctr->vcpu;
}

static const struct pfm_view_ops see_ops = {
	.context = see_context,
	.counter = see_counter,
};

static const struct pfm_ctx_view *seen_ctx(const struct seen *s, u32 id)
{
	u32 i;

	for (i = 0; i < s->ctxs; i++)
		if (s->ctx[i].id == id)
			return &s->ctx[i];
	return NULL;
}

static void test_view_walk(void **state)
{
	struct t_env *t = T_ENV(state);
	u32 counting = t_ctx(t, PFM_FL_SYSTEM_WIDE), idle = t_ctx(t, 0);
	const struct pfm_ctx_view *c;
	struct seen s = { 0 };

	t->vcpu = 1;
	t_pmc(t, counting, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, counting, 0, 1, T_EVTSEL(EV_B));
	t_pmd(t, counting, 0, 0, 0);
	t_pmd(t, counting, 0, 1, 0);
	t_load_sys(t, counting);
	assert_int_equal(cb_start(&t->cb, counting), 0);
	t_set(t, idle, 3, 0, 0);

	pfm_engine_view(t->e, &see_ops, &s);
	assert_int_equal(s.ctxs, 2);
	c = seen_ctx(&s, counting);
	assert_non_null(c);
	assert_true(c->loaded && c->started && !c->masked);
	assert_int_equal(c->vcpu, 1);
	assert_int_equal(c->load_pid, 1);
	assert_int_equal(c->nr_sets, 1);
	assert_int_equal(c->set_runs, 1);
	c = seen_ctx(&s, idle);
	assert_non_null(c);
	assert_false(c->loaded);
	assert_int_equal(c->vcpu, -1);
	assert_int_equal(c->nr_sets, 2);
	assert_int_equal(s.counters, 2);
	assert_int_equal(s.counter_ctx[0], counting);
	assert_int_equal(s.counter_vcpu[0], 1);
	assert_int_equal(s.set[1], 0);
	assert_true((s.pmd[0] == 0 && s.pmd[1] == 1) ||
		    (s.pmd[0] == 1 && s.pmd[1] == 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T_TEST(test_calls_and_refusals),
		T_TEST(test_notavail_apart_from_filtered),
		T_TEST(test_virtual_pmd_filtered),
		T_TEST(test_host_mediated_refused),
		T_TEST(test_host_mediated_at_load),
		T_TEST(test_view_walk),
	};

	return cmocka_run_group_tests_name("view", tests, NULL, NULL);
}
