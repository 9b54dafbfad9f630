// SPDX-License-Identifier: GPL-2.0
/*
 * Event sets: create/delete/getinfo, time-based switching (effective
 * timeout, leftover timeout, active time only), round-robin in id order,
 * overflow-based switching and counter cascading, scaled estimates from
 * runs and set_act_duration, host contention in getinfo.
 */
#include "t_env.h"

#define MS			1000000ULL
#define US			1000ULL

/* sets 0 and 1 of @ctx switch every 1 ms */
static void two_time_sets(struct t_env *t, u32 ctx)
{
	t_set(t, ctx, 0, PFM_SETFL_TIME_SWITCH, 1 * MS);
	t_set(t, ctx, 1, PFM_SETFL_TIME_SWITCH, 1 * MS);
}

/* set @id of @ctx was active @act ns and has @left ns of its timeout left */
static void expect_time(struct t_env *t, u32 ctx, u16 id, u64 act, u64 left)
{
	pfarg_setinfo_t si;

	t_info(t, ctx, id, &si);
	assert_int_equal(si.set_act_duration, act);
	assert_int_equal(si.set_timeout, left);
}

static void desc_init(pfarg_setdesc_t *d, u16 id, u32 flags, u64 timeout)
{
	memset(d, 0, sizeof(*d));
	d->set_id = id;
	d->set_flags = flags;
	d->set_timeout = timeout;
}

T_CTX_TEST(test_sets_create_getinfo, 0)
{
	pfarg_setdesc_t d[2];
	pfarg_setinfo_t si[3];

	desc_init(&d[0], 5, PFM_SETFL_OVFL_SWITCH, 0);
	desc_init(&d[1], 1, PFM_SETFL_TIME_SWITCH, 20 * US);
	assert_int_equal(cb_create_sets(&t->cb, ctx, d, 2), 0);
	assert_int_equal(t_stats(t).sets, 3);
	memset(si, 0, sizeof(si));
	si[0].set_id = 5;
	si[1].set_id = 0;
	si[2].set_id = 1;
	assert_int_equal(cb_getinfo_sets(&t->cb, ctx, si, 3), 0);
	assert_int_equal(si[0].set_id, 5);
	assert_int_equal(si[0].set_flags, PFM_SETFL_OVFL_SWITCH);
	assert_int_equal(si[1].set_flags, 0);
	assert_int_equal(si[2].set_flags, PFM_SETFL_TIME_SWITCH);
	assert_int_equal(si[2].set_timeout, 20 * US);
	assert_int_equal(si[1].set_runs, 0);
	assert_int_equal(si[1].set_act_duration, 0);
	/* available registers: what the PMU implements */
	assert_int_equal(si[1].set_avail_pmcs[0], 0xf);
	assert_int_equal(si[1].set_avail_pmcs[4], 0);
	assert_int_equal(si[1].set_avail_pmds[0], 0xf);
	assert_int_equal(si[1].set_avail_pmds[4],
			 (1ULL << (PVPFM_VPMD_END - 256)) - 1);
}

/* getinfo on an unknown set: EINVAL, the entry's set_flags marked */
T_CTX_TEST(test_getinfo_unknown_set, 0)
{
	pfarg_setinfo_t si[2];

	memset(si, 0, sizeof(si));
	si[0].set_id = 0;
	si[1].set_id = 3;
	assert_int_equal(cb_getinfo_sets(&t->cb, ctx, si, 2), -EINVAL);
	t_assert_stopped_at(t, 1, si[1].set_flags, PFM_REG_RETFL_EINVAL);
	assert_false(si[0].set_flags & PFM_REG_RETFL_MASK);
}

/* sets are created and deleted only while the context is unloaded */
T_CTX_TEST(test_sets_busy_while_loaded, 0)
{
	pfarg_setdesc_t d;
	pfarg_setinfo_t si;

	t_set(t, ctx, 1, 0, 0);
	t_load_self(t, ctx);
	desc_init(&d, 2, 0, 0);
	assert_int_equal(cb_create_sets(&t->cb, ctx, &d, 1), -EBUSY);
	desc_init(&d, 1, PFM_SETFL_TIME_SWITCH, 1000);
	assert_int_equal(cb_create_sets(&t->cb, ctx, &d, 1), -EBUSY);
	desc_init(&d, 1, 0, 0);
	assert_int_equal(cb_delete_sets(&t->cb, ctx, &d, 1), -EBUSY);
	assert_int_equal(t_stats(t).sets, 2);
	t_info(t, ctx, 1, &si);
	assert_int_equal(si.set_flags, 0);
	memset(&si, 0, sizeof(si));
	si.set_id = 2;
	assert_int_equal(cb_getinfo_sets(&t->cb, ctx, &si, 1), -EINVAL);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	assert_int_equal(cb_create_sets(&t->cb, ctx, &d, 1), -EBUSY);
	assert_int_equal(cb_unload(&t->cb, ctx), 0);
	assert_int_equal(cb_delete_sets(&t->cb, ctx, &d, 1), 0);
	desc_init(&d, 2, 0, 0);
	assert_int_equal(cb_create_sets(&t->cb, ctx, &d, 1), 0);
}

T_CTX_TEST(test_delete_sets, 0)
{
	pfarg_setdesc_t d[2];
	pfarg_setinfo_t si;
	pfarg_pmc_t pmc;

	t_set(t, ctx, 1, 0, 0);
	t_set(t, ctx, 2, 0, 0);
	desc_init(&d[0], 7, 0, 0);
	assert_int_equal(cb_delete_sets(&t->cb, ctx, d, 1), -EINVAL);
	assert_int_equal(d[0].set_flags & PFM_REG_RETFL_MASK,
			 PFM_REG_RETFL_EINVAL);
	assert_int_equal(t_stats(t).sets, 3);

	/* the bad entry marked, the good one before it applied and clean */
	desc_init(&d[0], 2, 0, 0);
	d[0].set_flags = PFM_REG_RETFL_EINVAL;	/* stale, from a reused vector */
	desc_init(&d[1], 9, 0, 0);
	assert_int_equal(cb_delete_sets(&t->cb, ctx, d, 2), -EINVAL);
	assert_int_equal(t->cb.hdr.err_index, 1);
	assert_int_equal(d[0].set_flags, 0);
	assert_int_equal(d[1].set_flags & PFM_REG_RETFL_MASK,
			 PFM_REG_RETFL_EINVAL);
	t_info(t, ctx, 0, &si);

	desc_init(&d[0], 1, 0, 0);
	assert_int_equal(cb_delete_sets(&t->cb, ctx, d, 1), 0);
	memset(&si, 0, sizeof(si));
	si.set_id = 1;
	assert_int_equal(cb_getinfo_sets(&t->cb, ctx, &si, 1), -EINVAL);
	memset(&pmc, 0, sizeof(pmc));
	pmc.reg_set = 1;
	pmc.reg_value = T_EVTSEL(EV_A);
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &pmc, 1), -EINVAL);
	assert_int_equal(pmc.reg_flags & PFM_REG_RETFL_MASK, PFM_REG_RETFL_EINVAL);
	/* loading on a deleted set is refused */
	assert_int_equal(cb_load(&t->cb, ctx, t->tid[0], 1, PVPFM_LOAD_SELF,
				 t->tgid[0]), -EINVAL);
}

/*
 * perfmon2 deletes set 0 like any other; a context keeps one set at
 * least (its last is refused), and set 0 can be made again
 */
T_CTX_TEST(test_delete_set0, 0)
{
	pfarg_setdesc_t d;

	t_set(t, ctx, 3, 0, 0);
	t_pmc(t, ctx, 3, 0, T_EVTSEL(EV_A));
	desc_init(&d, 0, 0, 0);
	assert_int_equal(cb_delete_sets(&t->cb, ctx, &d, 1), 0);
	assert_int_equal(t_stats(t).sets, 1);
	desc_init(&d, 3, 0, 0);
	assert_int_equal(cb_delete_sets(&t->cb, ctx, &d, 1), -EINVAL);
	t_assert_stopped_at(t, 0, d.set_flags, PFM_REG_RETFL_EINVAL);
	/* set 3 alone: loaded on it, it counts */
	assert_int_equal(cb_load(&t->cb, ctx, t->tid[0], 0, PVPFM_LOAD_SELF,
				 t->tgid[0]), -EINVAL);
	assert_int_equal(cb_load(&t->cb, ctx, t->tid[0], 3, PVPFM_LOAD_SELF,
				 t->tgid[0]), 0);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	sim_events(t->sim, 0, KEY_A, 6);
	assert_int_equal(t_read(t, ctx, 3, 0), 6);
	assert_int_equal(cb_unload(&t->cb, ctx), 0);
	t_set(t, ctx, 0, 0, 0);
	assert_int_equal(t_stats(t).sets, 2);
}

/* create on an existing set modifies it */
T_CTX_TEST(test_create_modifies, 0)
{
	pfarg_setdesc_t d;
	pfarg_setinfo_t si;

	t_set(t, ctx, 1, PFM_SETFL_TIME_SWITCH, 7 * US);
	t_pmc(t, ctx, 1, 0, T_EVTSEL(EV_A));
	t_set(t, ctx, 1, PFM_SETFL_OVFL_SWITCH, 0);
	t_info(t, ctx, 1, &si);
	assert_int_equal(si.set_flags, PFM_SETFL_OVFL_SWITCH);
	assert_int_equal(t_stats(t).sets, 2);
	/* set 0 can be modified too */
	t_set(t, ctx, 0, PFM_SETFL_TIME_SWITCH, 3 * US);
	t_info(t, ctx, 0, &si);
	assert_int_equal(si.set_flags, PFM_SETFL_TIME_SWITCH);
	assert_int_equal(si.set_timeout, 3 * US);
	/* unknown set flags */
	desc_init(&d, 1, 0x100, 0);
	assert_int_equal(cb_create_sets(&t->cb, ctx, &d, 1), -EINVAL);
	/* perfmon2: a time switch needs a timeout */
	desc_init(&d, 1, PFM_SETFL_TIME_SWITCH, 0);
	assert_int_equal(cb_create_sets(&t->cb, ctx, &d, 1), -EINVAL);
	/* perfmon2: not both ways of switching */
	desc_init(&d, 1, PFM_SETFL_TIME_SWITCH | PFM_SETFL_OVFL_SWITCH, 5 * US);
	assert_int_equal(cb_create_sets(&t->cb, ctx, &d, 1), -EINVAL);
	t_info(t, ctx, 1, &si);
	assert_int_equal(si.set_flags, PFM_SETFL_OVFL_SWITCH);
}

/*
 * perfmon2: defining an existing set again starts it afresh: its runs and
 * active time at zero, its PMCs at their defaults (its PMDs stay)
 */
T_CTX_TEST(test_create_resets, 0)
{
	pfarg_setinfo_t si;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 5);
	sim_run(t->sim, 30 * US);
	assert_int_equal(cb_unload(&t->cb, ctx), 0);
	t_info(t, ctx, 0, &si);
	assert_int_equal(si.set_runs, 1);
	assert_true(si.set_act_duration > 0);
	t_set(t, ctx, 0, 0, 0);
	t_info(t, ctx, 0, &si);
	assert_int_equal(si.set_runs, 0);
	assert_int_equal(si.set_act_duration, 0);
	assert_int_equal(t_read(t, ctx, 0, 0), 5);
	/* PMC0 is back at its default: EN clear, nothing counts */
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 5);
	assert_int_equal(t_read(t, ctx, 0, 0), 5);
	assert_null(sim_counter_find(t->sim, 0, 0));
}

/* no more than limits.max_sets sets; nothing allocated beyond */
static void test_max_sets(void **state)
{
	const struct pfm_limits lim = { .max_sets = 4 };
	struct t_env *t;
	pfarg_setdesc_t d;
	pfarg_setinfo_t si;
	u32 ctx, i;

	(void)state;
	t = t_env_limits(&lim);
	ctx = t_ctx(t, 0);
	for (i = 1; i < 4; i++)
		t_set(t, ctx, i * 10, 0, 0);
	desc_init(&d, 99, 0, 0);
	assert_int_equal(cb_create_sets(&t->cb, ctx, &d, 1), -ENOSPC);
	assert_int_equal(t_stats(t).sets, 4);
	memset(&si, 0, sizeof(si));
	si.set_id = 99;
	assert_int_equal(cb_getinfo_sets(&t->cb, ctx, &si, 1), -EINVAL);
	/* modifying an existing set at the limit is fine */
	t_set(t, ctx, 20, PFM_SETFL_OVFL_SWITCH, 0);
	/* a second context has its own budget */
	i = t_ctx(t, 0);
	t_set(t, i, 1, 0, 0);
	t_env_free(t);
}

/*
 * perfmon2: a timeout is a multiple of the timer's resolution, else
 * EINVAL (not rounded); here the set timer's granularity
 */
static void test_timeout_rounding(void **state)
{
	struct t_opts o;
	struct t_env *t;
	pfarg_setdesc_t d[3];
	pfarg_setinfo_t si;
	u32 ctx;

	(void)state;
	t_opts_default(&o);
	o.timer_granularity_ns = 1 * MS;
	t = t_env_new(&o);
	ctx = t_ctx(t, 0);
	desc_init(&d[0], 1, PFM_SETFL_TIME_SWITCH, 2 * MS);
	desc_init(&d[1], 2, PFM_SETFL_TIME_SWITCH, 1500 * US);
	desc_init(&d[2], 3, PFM_SETFL_TIME_SWITCH, 1);
	assert_int_equal(cb_create_sets(&t->cb, ctx, d, 3), -EINVAL);
	t_assert_stopped_at(t, 1, d[1].set_flags, PFM_REG_RETFL_EINVAL);
	assert_int_equal(d[0].set_timeout, 2 * MS);
	assert_int_equal(d[1].set_timeout, 1500 * US);
	t_info(t, ctx, 1, &si);
	assert_int_equal(si.set_timeout, 2 * MS);
	assert_int_equal(cb_create_sets(&t->cb, ctx, &d[2], 1), -EINVAL);
	assert_int_equal(t_stats(t).sets, 2);

	/* and the switch happens after the timeout */
	t_set(t, ctx, 0, PFM_SETFL_TIME_SWITCH, 2 * MS);
	t_go(t, ctx);
	sim_run(t->sim, 2 * MS - 1);
	assert_int_equal(t_runs(t, ctx, 1), 0);
	sim_run(t->sim, 1);
	assert_int_equal(t_runs(t, ctx, 1), 1);
	t_env_free(t);
}

/*
 * Round-robin in id order (created out of order), after the last comes
 * set 0; every set counts only while active; runs and active time.
 */
T_CTX_TEST(test_time_switch_round_robin, 0)
{
	pfarg_setinfo_t si;
	const u64 runs[3] = { 4, 3, 3 };
	const u64 act[3] = { 3500 * US, 3 * MS, 3 * MS };
	u16 s;

	t_set(t, ctx, 2, PFM_SETFL_TIME_SWITCH, 1 * MS);
	two_time_sets(t, ctx);
	for (s = 0; s < 3; s++)
		t_pmc(t, ctx, s, 0, T_EVTSEL(EV_A));
	sim_set_rate(t->sim, KEY_A, 1000);	/* 1 per ns */
	t_go(t, ctx);
	sim_run(t->sim, 9500 * US);
	/* 0:[0,1) 1:[1,2) 2:[2,3) 0:[3,4) ... 0:[9,9.5) */
	for (s = 0; s < 3; s++) {
		t_info(t, ctx, s, &si);
		assert_int_equal(si.set_runs, runs[s]);
		assert_int_equal(si.set_act_duration, act[s]);
		assert_int_equal(t_read(t, ctx, s, 0), act[s]);
	}
	/* the active set's leftover timeout */
	t_info(t, ctx, 0, &si);
	assert_int_equal(si.set_timeout, 500 * US);
	assert_int_equal(t_stats(t).set_switches, 9);
}

/* timeouts run only while the context counts: stop keeps the leftover */
T_CTX_TEST(test_time_switch_leftover_stop, 0)
{
	pfarg_setinfo_t si;

	two_time_sets(t, ctx);
	t_go(t, ctx);
	sim_run(t->sim, 400 * US);
	expect_time(t, ctx, 0, 400 * US, 600 * US);
	assert_int_equal(cb_stop(&t->cb, ctx), 0);
	sim_run(t->sim, 5 * MS);
	expect_time(t, ctx, 0, 400 * US, 600 * US);
	assert_int_equal(t_runs(t, ctx, 1), 0);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	sim_run(t->sim, 600 * US - 1);
	assert_int_equal(t_runs(t, ctx, 1), 0);
	sim_run(t->sim, 1);
	t_info(t, ctx, 1, &si);
	assert_int_equal(si.set_runs, 1);
	assert_int_equal(si.set_timeout, 1 * MS);
	t_info(t, ctx, 0, &si);
	assert_int_equal(si.set_act_duration, 1 * MS);
}

/* a switched-out thread's context does not age */
T_CTX_TEST(test_time_switch_thread_out, 0)
{
	pfarg_setinfo_t si;

	two_time_sets(t, ctx);
	assert_int_equal(cb_load(&t->cb, ctx, 500, 0, 0, 50), 0);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	sim_run(t->sim, 3 * MS);	/* never switched in yet */
	t_info(t, ctx, 0, &si);
	assert_int_equal(si.set_act_duration, 0);
	t->vcpu = 1;
	assert_int_equal(cb_switch(&t->cb, 0, ctx, 500, 50), 0);
	sim_run(t->sim, 700 * US);
	assert_int_equal(cb_switch(&t->cb, ctx, 0, 0, 0), 0);
	sim_run(t->sim, 10 * MS);
	assert_int_equal(t_runs(t, ctx, 1), 0);
	expect_time(t, ctx, 0, 700 * US, 300 * US);
	/* in again, on the other vCPU: 300 us more */
	t->vcpu = 0;
	assert_int_equal(cb_switch(&t->cb, 0, ctx, 500, 50), 0);
	sim_run(t->sim, 300 * US);
	assert_int_equal(t_runs(t, ctx, 1), 1);
}

/*
 * Scaled estimates: two time-switched sets of unequal timeouts, each
 * counting one constant-rate event; count * total_time / act_duration
 * recovers each event's true count over the whole run within 0.5 %.
 */
T_CTX_TEST(test_scaled_estimates, 0)
{
	pfarg_setinfo_t si[2];
	const u64 rate_a = 2500, rate_b = 700;	/* per us */
	const u64 total = 101300 * US;
	double est_a, est_b, true_a, true_b;
	u64 cnt_a, cnt_b;

	t_set(t, ctx, 0, PFM_SETFL_TIME_SWITCH, 1 * MS);
	t_set(t, ctx, 1, PFM_SETFL_TIME_SWITCH, 3 * MS);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 1, 0, T_EVTSEL(EV_B));
	sim_set_rate(t->sim, KEY_A, rate_a);
	sim_set_rate(t->sim, KEY_B, rate_b);
	t_go(t, ctx);
	sim_run(t->sim, total);
	assert_int_equal(cb_stop(&t->cb, ctx), 0);

	memset(si, 0, sizeof(si));
	si[1].set_id = 1;
	assert_int_equal(cb_getinfo_sets(&t->cb, ctx, si, 2), 0);
	/* the time is shared, none lost, none counted twice */
	assert_int_equal(si[0].set_act_duration + si[1].set_act_duration, total);
	assert_true(si[0].set_act_duration > 0);
	assert_true(si[1].set_act_duration > 0);
	/* 4 ms per round: 25 rounds + 1.3 ms */
	assert_int_equal(si[0].set_runs, 26);
	assert_int_equal(si[1].set_runs, 26);
	assert_int_equal(si[0].set_act_duration, 26 * MS);
	cnt_a = t_read(t, ctx, 0, 0);
	cnt_b = t_read(t, ctx, 1, 0);
	est_a = (double)cnt_a * total / si[0].set_act_duration;
	est_b = (double)cnt_b * total / si[1].set_act_duration;
	true_a = (double)rate_a * total / 1000;
	true_b = (double)rate_b * total / 1000;
	assert_true(est_a > true_a * 0.995 && est_a < true_a * 1.005);
	assert_true(est_b > true_b * 0.995 && est_b < true_b * 1.005);
	/* the raw counts alone are far off: scaling mattered */
	assert_true((double)cnt_a < true_a * 0.5);
	assert_true((double)cnt_b < true_b * 0.8);
}

/*
 * Cascading: set 0 counts EV_A from -n with switch count 1; set 1 is
 * activated once EV_A occurred n times, and only then counts EV_B.
 */
T_CTX_TEST(test_ovfl_switch_cascade, 0)
{
	const u64 n = 1000;
	pfarg_setinfo_t si;
	pfarg_pmd_t d;
	pfarg_msg_t m;

	t_set(t, ctx, 0, PFM_SETFL_OVFL_SWITCH, 0);
	t_set(t, ctx, 1, 0, 0);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	memset(&d, 0, sizeof(d));
	d.reg_num = 0;
	d.reg_value = -n;
	d.reg_short_reset = -n;
	d.reg_long_reset = -n;
	d.reg_ovfl_switch_cnt = 1;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	t_pmc(t, ctx, 1, 1, T_EVTSEL(EV_B));
	t_go(t, ctx);

	sim_events(t->sim, 0, KEY_B, 50);
	sim_events(t->sim, 0, KEY_A, n - 1);
	assert_int_equal(t_runs(t, ctx, 1), 0);
	assert_int_equal(t_read(t, ctx, 1, 1), 0);
	sim_events(t->sim, 0, KEY_A, 1);
	assert_int_equal(t_runs(t, ctx, 1), 1);
	t_info(t, ctx, 0, &si);
	assert_int_equal(si.set_ovfl_pmds[0], 1);
	sim_events(t->sim, 0, KEY_B, 70);
	sim_events(t->sim, 0, KEY_A, 5 * n);	/* set 0 is not active */
	assert_int_equal(t_read(t, ctx, 1, 1), 70);
	assert_int_equal(t_runs(t, ctx, 0), 1);
	/* no notification was asked for */
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
}

/*
 * switch count 3: the set switches on the third overflow (sampling: the
 * overflows before it do not mask)
 */
T_CTX_TEST(test_ovfl_switch_count, 0)
{
	const u64 n = 100;
	pfarg_pmd_t d;

	ctx = t_smpl_ctx(t, 0, 16 * PVPFM_PAGE_SIZE);

	t_set(t, ctx, 0, PFM_SETFL_OVFL_SWITCH, 0);
	t_set(t, ctx, 1, PFM_SETFL_OVFL_SWITCH, 0);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 1, 0, T_EVTSEL(EV_A));
	memset(&d, 0, sizeof(d));
	d.reg_value = -n;
	d.reg_short_reset = -n;
	d.reg_ovfl_switch_cnt = 3;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	d.reg_set = 1;
	d.reg_ovfl_switch_cnt = 1;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	t_go(t, ctx);

	sim_events(t->sim, 0, KEY_A, 3 * n - 1);
	assert_int_equal(t_runs(t, ctx, 1), 0);
	sim_events(t->sim, 0, KEY_A, 1);
	assert_int_equal(t_runs(t, ctx, 1), 1);
	/* set 1 switches back after one overflow: round-robin to set 0 */
	sim_events(t->sim, 0, KEY_A, n);
	assert_int_equal(t_runs(t, ctx, 0), 2);
	/* and set 0 needs three overflows again */
	sim_events(t->sim, 0, KEY_A, 3 * n - 1);
	assert_int_equal(t_runs(t, ctx, 1), 1);
	sim_events(t->sim, 0, KEY_A, 1);
	assert_int_equal(t_runs(t, ctx, 1), 2);
}

/* without PFM_SETFL_OVFL_SWITCH the switch count does nothing */
T_CTX_TEST(test_ovfl_switch_needs_flag, 0)
{
	pfarg_setinfo_t si;
	pfarg_pmd_t d;

	ctx = t_smpl_ctx(t, 0, 16 * PVPFM_PAGE_SIZE);

	t_set(t, ctx, 1, 0, 0);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	memset(&d, 0, sizeof(d));
	d.reg_value = -10;
	d.reg_short_reset = -10;
	d.reg_ovfl_switch_cnt = 1;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 35);
	assert_int_equal(t_runs(t, ctx, 1), 0);
	assert_int_equal(t_read(t, ctx, 0, 0), (u64)-5);
	/* the overflows are recorded all the same */
	t_info(t, ctx, 0, &si);
	assert_int_equal(si.set_ovfl_pmds[0], 1);
}

/*
 * A switch due on an overflow that notifies: masked first, as perfmon2;
 * the switch happens at pfm_restart, after the long reset
 */
T_CTX_TEST(test_ovfl_switch_at_restart, 0)
{
	pfarg_pmd_t d;
	pfarg_msg_t m;

	t_set(t, ctx, 0, PFM_SETFL_OVFL_SWITCH, 0);
	t_set(t, ctx, 1, 0, 0);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	cb_pmd_init(&d, 0, 0, -10);
	d.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	d.reg_long_reset = -20;
	d.reg_ovfl_switch_cnt = 1;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	t_pmc(t, ctx, 1, 1, T_EVTSEL(EV_B));
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.pfm_ovfl_msg.msg_active_set, 0);
	assert_int_equal(t_runs(t, ctx, 1), 0);
	sim_events(t->sim, 0, KEY_B, 5);
	assert_int_equal(t_read(t, ctx, 1, 1), 0);
	assert_int_equal(cb_restart(&t->cb, ctx), 0);
	assert_int_equal(t_runs(t, ctx, 1), 1);
	assert_int_equal(t_read(t, ctx, 0, 0), (u64)-20);
	sim_events(t->sim, 0, KEY_B, 5);
	assert_int_equal(t_read(t, ctx, 1, 1), 5);
}

/* the same when the host cannot open the next set's counter on a switch */
T_CTX_TEST(test_time_switch_open_fails_not_silent, 0)
{
	pfarg_setinfo_t si;
	u64 v;

	two_time_sets(t, ctx);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 1, 0, T_EVTSEL(EV_B));
	sim_set_rate(t->sim, KEY_B, 1000);
	t_go(t, ctx);
	sim_run(t->sim, 500 * US);
	/* the first open from now is set 1's counter, at the switch */
	t->sim->fail_open_in = 1;
	sim_run(t->sim, 1 * MS);
	t->sim->fail_open_in = 0;
	t_info(t, ctx, 1, &si);
	assert_int_equal(si.set_runs, 1);
	v = t_read(t, ctx, 1, 0);
	assert_true(v == 500 * US ||
		    si.set_reserved3[PVPFM_SETINFO_HOST_RUNNING] <
		    si.set_reserved3[PVPFM_SETINFO_HOST_ENABLED]);
}

/*
 * Set switches take time (the backend opens counters) while the guest runs
 * on: the active time of all sets still adds up to the context's.
 */
T_CTX_TEST(test_switch_time_accounted, 0)
{
	pfarg_setinfo_t si;
	u64 sum = 0, start;
	u16 id;

	for (id = 0; id < 3; id++) {
		t_set(t, ctx, id, PFM_SETFL_TIME_SWITCH, 1 * MS);
		t_pmc(t, ctx, 0, id, T_EVTSEL(EV_A));
	}
	t_go(t, ctx);
	start = t->sim->now;
	t->sim->open_cost_ns = 300 * US;
	sim_run(t->sim, 20 * MS);
	t->sim->open_cost_ns = 0;
	for (id = 0; id < 3; id++) {
		t_info(t, ctx, id, &si);
		assert_true(si.set_runs >= 3);
		sum += si.set_act_duration;
	}
	assert_int_equal(sum, t->sim->now - start);
}

/* masked (notified, waiting for restart) is not active time */
T_CTX_TEST(test_masked_time_not_counted, 0)
{
	two_time_sets(t, ctx);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmd_period(t, ctx, 0, 0, 10, PFM_REGFL_OVFL_NOTIFY);
	t_go(t, ctx);
	sim_run(t->sim, 300 * US);
	sim_events(t->sim, 0, KEY_A, 10);	/* masked from now */
	sim_run(t->sim, 5 * MS);
	expect_time(t, ctx, 0, 300 * US, 700 * US);
	assert_int_equal(t_runs(t, ctx, 1), 0);
	assert_int_equal(cb_restart(&t->cb, ctx), 0);
	sim_run(t->sim, 700 * US);
	assert_int_equal(t_runs(t, ctx, 1), 1);
}

/*
 * perfmon2 (__pfm_create_evtsets) marks the failing entry's set_flags with
 * PFM_REG_RETFL_EINVAL, like the register calls mark theirs.
 */
T_CTX_TEST(test_create_sets_bad_entry_marked, 0)
{
	pfarg_setdesc_t d[2];

	desc_init(&d[0], 1, 0, 0);
	desc_init(&d[1], 2, PFM_SETFL_TIME_SWITCH, 0);
	assert_int_equal(cb_create_sets(&t->cb, ctx, d, 2), -EINVAL);
	t_assert_stopped_at(t, 1, d[1].set_flags, PFM_REG_RETFL_EINVAL);
	assert_false(d[0].set_flags & PFM_REG_RETFL_MASK);
}

/* host contention is visible: running < enabled in getinfo */
T_CTX_TEST(test_host_contention, 0)
{
	pfarg_setinfo_t si;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	sim_set_contention(t->sim, 0, 0, 50);
	t_go(t, ctx);
	sim_run(t->sim, 1 * MS);
	t_info(t, ctx, 0, &si);
	assert_int_equal(si.set_reserved3[PVPFM_SETINFO_HOST_ENABLED], 2 * MS);
	assert_int_equal(si.set_reserved3[PVPFM_SETINFO_HOST_RUNNING],
			 1 * MS + 500 * US);
	/* still there once the counters are folded back and closed */
	assert_int_equal(cb_unload(&t->cb, ctx), 0);
	t_info(t, ctx, 0, &si);
	assert_int_equal(si.set_reserved3[PVPFM_SETINFO_HOST_ENABLED], 2 * MS);
	assert_int_equal(si.set_reserved3[PVPFM_SETINFO_HOST_RUNNING],
			 1 * MS + 500 * US);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T_TEST(test_sets_create_getinfo),
		T_TEST(test_getinfo_unknown_set),
		T_TEST(test_sets_busy_while_loaded),
		T_TEST(test_delete_sets),
		T_TEST(test_delete_set0),
		T_TEST(test_create_modifies),
		T_TEST(test_create_resets),
		cmocka_unit_test(test_max_sets),
		cmocka_unit_test(test_timeout_rounding),
		T_TEST(test_time_switch_round_robin),
		T_TEST(test_time_switch_leftover_stop),
		T_TEST(test_time_switch_thread_out),
		T_TEST(test_scaled_estimates),
		T_TEST(test_ovfl_switch_cascade),
		T_TEST(test_ovfl_switch_count),
		T_TEST(test_ovfl_switch_needs_flag),
		T_TEST(test_ovfl_switch_at_restart),
		T_TEST(test_host_contention),
		T_TEST(test_time_switch_open_fails_not_silent),
		T_TEST(test_masked_time_not_counted),
		T_TEST(test_switch_time_accounted),
		T_TEST(test_create_sets_bad_entry_marked),
	};

	return cmocka_run_group_tests_name("sets", tests, NULL, NULL);
}
