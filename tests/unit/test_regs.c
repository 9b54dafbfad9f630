// SPDX-License-Identifier: GPL-2.0
/*
 * PMC/PMD writes and reads: per-entry PFM_REG_RETFL_* marking and
 * err_index, reserved bits forced to the personality tables' defaults,
 * reads of PMDs in use only, unimplemented
 * registers, events the host refuses, the EN bit, virtual PMDs, vector
 * limits, and 64-bit PMDs over narrower backing counters.
 */
#include "t_env.h"

/*
 * An environment whose counters are @width bits wide and in it *@ctx, a
 * context whose PMC0 counts EV_A
 */
static struct t_env *width_ctx(u8 width, u32 *ctx)
{
	struct t_opts o;
	struct t_env *t;

	t_opts_default(&o);
	o.counter_width = width;
	t = t_env_new(&o);
	*ctx = t_ctx(t, 0);
	t_pmc(t, *ctx, 0, 0, T_EVTSEL(EV_A));
	return t;
}

/*
 * The bad entry is marked and named by err_index; the call fails with
 * EINVAL; the entries before it are applied (perfmon2 processes vectors
 * in order), the ones after it are not.
 */
T_CTX_TEST(test_pmcs_bad_entry_marked, 0)
{
	pfarg_pmc_t v[3];
	u16 n;

	cb_pmc_init(&v[0], 0, 0, T_EVTSEL(EV_A));
	cb_pmc_init(&v[1], 1, 0, T_EVTSEL(EV_B));
	v[1].reg_flags = PFM_REGFL_NO_EMUL64;
	cb_pmc_init(&v[2], 2, 0, T_EVTSEL(EV_C));
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, v, 3), -EINVAL);
	t_assert_stopped_at(t, 1, v[1].reg_flags, PFM_REG_RETFL_EINVAL);
	assert_int_equal(v[0].reg_flags & PFM_REG_RETFL_MASK, 0);
	assert_int_equal(v[2].reg_flags & PFM_REG_RETFL_MASK, 0);
	/* the other fields come back unchanged */
	assert_int_equal(v[1].reg_num, 1);
	assert_int_equal(v[1].reg_value, T_EVTSEL(EV_B));

	for (n = 0; n < 3; n++)
		t_pmd(t, ctx, 0, n, 0);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 5);
	sim_events(t->sim, 0, KEY_B, 6);
	sim_events(t->sim, 0, KEY_C, 7);
	assert_int_equal(t_read(t, ctx, 0, 0), 5);
	assert_int_equal(t_read(t, ctx, 0, 1), 0);
	assert_int_equal(t_read(t, ctx, 0, 2), 0);
}

/* a successful call: err_index 0, no RETFL bits */
T_CTX_TEST(test_pmcs_success_clean, 0)
{
	pfarg_pmc_t v[4];
	u32 i;

	for (i = 0; i < 4; i++)
		cb_pmc_init(&v[i], i, 0, T_EVTSEL(EV_A + i));
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, v, 4), 0);
	assert_int_equal(t->cb.hdr.err_index, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(v[i].reg_flags, 0);
	/* an empty vector is fine too */
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, v, 0), 0);
}

/* a PMC value, and what it counts once its reserved bits are forced */
struct rsvd_case {
	u64 value;
	u64 effective;
};

/*
 * Reserved bits take their default, whatever the guest wrote (perfmon2's
 * (value & ~rsvd_msk) | (dfl_val & rsvd_msk)): each value is accepted and
 * the host is asked to count exactly what the effective value says.
 */
static void check_rsvd(enum pvpfm_personality pers,
		       const struct rsvd_case *c, unsigned int n)
{
	const struct sim_counter *sc;
	struct t_opts o;
	struct t_env *t;
	pfarg_pmc_t v;
	unsigned int i;
	u32 ctx;

	t_opts_default(&o);
	o.personality = pers;
	t = t_env_new(&o);
	for (i = 0; i < n; i++) {
		ctx = t_ctx(t, 0);
		cb_pmc_init(&v, 3, 0, c[i].value);
		assert_int_equal(cb_write_pmcs(&t->cb, ctx, &v, 1), 0);
		assert_int_equal(v.reg_flags, 0);
		t_pmd(t, ctx, 0, 3, 0);
		t_go(t, ctx);
		sc = sim_counter_find(t->sim, 0, 3);
		assert_non_null(sc);
		assert_int_equal(sc->c->ev.pmc_value, c[i].effective);
		assert_int_equal(cb_destroy(&t->cb, ctx), 0);
	}
	t_env_free(t);
}

/* fam10h: reserved bits 20, 21, 36-39, 42-63 take the default (INT=1) */
static void test_pmc_reserved_fam10h(void **state)
{
	const u64 a = T_EVTSEL(EV_A);
	const struct rsvd_case c[] = {
		{ a, a },
		{ a | (1ULL << 21), a },
		{ a & ~PVPFM_EVTSEL_INT, a },		/* INT is reserved, =1 */
		{ T_EVTSEL(0x1d6), T_EVTSEL(0x1d6) },	/* event bits 35:32 */
		{ a | (3ULL << 40), a | (3ULL << 40) },	/* guest/host only */
		{ a | (1ULL << 36), a },
		{ a | (1ULL << 39), a },
		{ a | (1ULL << 42), a },
		{ a | (1ULL << 63), a },
	};

	(void)state;
	check_rsvd(PVPFM_PERS_AMD64, c, ARRAY_SIZE(c));
}

/* K8: the upper 32 bits are reserved too */
static void test_pmc_reserved_k8(void **state)
{
	const u64 a = T_EVTSEL(EV_A);
	const u64 edge = a | PVPFM_EVTSEL_EDGE | (0xffULL << 24);
	const struct rsvd_case c[] = {
		{ a, a },
		{ edge, edge },
		{ T_EVTSEL(0x1d6), T_EVTSEL(0xd6) },	/* bit 32 */
		{ a | (1ULL << 40), a },
		{ a | (1ULL << 21), a },
		{ a & ~PVPFM_EVTSEL_INT, a },
	};

	(void)state;
	check_rsvd(PVPFM_PERS_AMD64_K8, c, ARRAY_SIZE(c));
}

/*
 * perfmon2 reads only a PMD in use: one written, or named in a written
 * PMD's smpl_pmds or reset_pmds; its switch count comes back too
 */
T_CTX_TEST(test_read_pmds_in_use, 0)
{
	pfarg_pmd_t d;
	uint64_t v;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	assert_int_equal(cb_read_pmd(&t->cb, ctx, 0, 1, &v), -EINVAL);
	assert_int_equal(t->cb.hdr.err_index, 0);
	assert_int_equal(cb_read_pmd(&t->cb, ctx, 0, PVPFM_VPMD_VM_EXITS, &v),
			 -EINVAL);
	cb_pmd_init(&d, 0, 0, 0);
	d.reg_smpl_pmds[0] = 1ULL << 1;
	d.reg_reset_pmds[0] = 1ULL << 2;
	d.reg_ovfl_switch_cnt = 7;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	assert_int_equal(cb_read_pmd(&t->cb, ctx, 0, 1, &v), 0);
	assert_int_equal(cb_read_pmd(&t->cb, ctx, 0, 2, &v), 0);
	assert_int_equal(cb_read_pmd(&t->cb, ctx, 0, 3, &v), -EINVAL);
	memset(&d, 0, sizeof(d));
	d.reg_num = 0;
	assert_int_equal(cb_read_pmds(&t->cb, ctx, &d, 1), 0);
	assert_int_equal(d.reg_ovfl_switch_cnt, 7);
}

static void test_pmc_unimplemented(void **state)
{
	struct t_env *t = T_ENV(state);
	const u16 bad[] = { 4, 16, 255, 256, 300, 319, 320, 0xffff };
	u32 ctx = t_ctx(t, 0);
	pfarg_pmc_t v[2];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cb_pmc_init(&v[0], 1, 0, T_EVTSEL(EV_A));
		cb_pmc_init(&v[1], bad[i], 0, 1ULL << 20);
		assert_int_equal(cb_write_pmcs(&t->cb, ctx, v, 2), -EINVAL);
		t_assert_stopped_at(t, 1, v[1].reg_flags, PFM_REG_RETFL_EINVAL);
	}
}

/* an event the host cannot count: NOTAVAIL on the entry, EINVAL the call */
T_CTX_TEST(test_pmc_event_refused, 0)
{
	pfarg_pmc_t v[3];

	cb_pmc_init(&v[0], 0, 0, T_EVTSEL(EV_A));
	cb_pmc_init(&v[1], 1, 0, T_EVTSEL(EV_B));
	cb_pmc_init(&v[2], 2, 0, T_EVTSEL(EV_REFUSED));
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, v, 3), -EINVAL);
	t_assert_stopped_at(t, 2, v[2].reg_flags, PFM_REG_RETFL_NOTAVAIL);
	assert_int_equal(v[0].reg_flags & PFM_REG_RETFL_MASK, 0);
	assert_int_equal(v[1].reg_flags & PFM_REG_RETFL_MASK, 0);
	/* never counted as zero: nothing was opened for it */
	t_go(t, ctx);
	assert_null(sim_counter_find(t->sim, 0, 2));
	assert_non_null(sim_counter_find(t->sim, 0, 0));
	assert_int_equal(t->sim->bad_opens, 0);
}

/*
 * An event the host backs with an admin's alias: accepted, counted, and
 * marked PVPFM_CMD_RETFL_EMULATED on its entry (the guest sees it is not
 * the real event); the mark is cleared when the entry is written again.
 */
T_CTX_TEST(test_pmc_event_emulated, 0)
{
	pfarg_pmc_t v[2];

	sim_alias(t->sim, KEY_B);
	cb_pmc_init(&v[0], 0, 0, T_EVTSEL(EV_A));
	cb_pmc_init(&v[1], 1, 0, T_EVTSEL(EV_B));
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, v, 2), 0);
	assert_int_equal(v[0].reg_flags, 0);
	assert_int_equal(v[1].reg_flags, PVPFM_CMD_RETFL_EMULATED);
	/* the same vector again (flags as returned): same outcome */
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, v, 2), 0);
	assert_int_equal(v[1].reg_flags, PVPFM_CMD_RETFL_EMULATED);
	/* an unaliased event in the same PMC: the mark goes */
	cb_pmc_init(&v[1], 1, 0, T_EVTSEL(EV_C));
	v[1].reg_flags = PVPFM_CMD_RETFL_EMULATED;
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &v[1], 1), 0);
	assert_int_equal(v[1].reg_flags, 0);
	cb_pmc_init(&v[1], 1, 0, T_EVTSEL(EV_B));
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &v[1], 1), 0);
	t_go(t, ctx);
	assert_non_null(sim_counter_find(t->sim, 0, 1));
	assert_int_equal(t->sim->bad_opens, 0);
}

T_CTX_TEST(test_pmc_unknown_set, 0)
{
	pfarg_pmc_t v;

	cb_pmc_init(&v, 0, 0, T_EVTSEL(EV_A));
	v.reg_set = 4;
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &v, 1), -EINVAL);
	t_assert_stopped_at(t, 0, v.reg_flags, PFM_REG_RETFL_EINVAL);
	t_set(t, ctx, 4, 0, 0);
	v.reg_flags = 0;
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &v, 1), 0);
}

/* EN (bit 22) clear: the counter is not enabled */
T_CTX_TEST(test_pmc_en_clear, 0)
{
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A) & ~PVPFM_EVTSEL_EN);
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_A));
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 25);
	assert_int_equal(t_read(t, ctx, 0, 0), 0);
	assert_int_equal(t_read(t, ctx, 0, 1), 25);
	/* setting EN live enables it */
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	sim_events(t->sim, 0, KEY_A, 5);
	assert_int_equal(t_read(t, ctx, 0, 0), 5);
	assert_int_equal(t_read(t, ctx, 0, 1), 30);
	/* and clearing it stops it, keeping the value */
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A) & ~PVPFM_EVTSEL_EN);
	sim_events(t->sim, 0, KEY_A, 5);
	assert_int_equal(t_read(t, ctx, 0, 0), 5);
}

static void test_pmd_unimplemented(void **state)
{
	struct t_env *t = T_ENV(state);
	const u16 bad[] = { 4, 16, 255, PVPFM_VPMD_END, 319, 320, 0xffff };
	u32 ctx = t_ctx(t, 0);
	pfarg_pmd_t v[2];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cb_pmd_init(&v[0], 0, 0, 1);
		cb_pmd_init(&v[1], bad[i], 0, 1);
		assert_int_equal(cb_write_pmds(&t->cb, ctx, v, 2), -EINVAL);
		t_assert_stopped_at(t, 1, v[1].reg_flags, PFM_REG_RETFL_EINVAL);
		assert_int_equal(v[0].reg_flags & PFM_REG_RETFL_MASK, 0);

		cb_pmd_init(&v[0], 0, 0, 0);
		cb_pmd_init(&v[1], bad[i], 0, 0);
		assert_int_equal(cb_read_pmds(&t->cb, ctx, v, 2), -EINVAL);
		t_assert_stopped_at(t, 1, v[1].reg_flags, PFM_REG_RETFL_EINVAL);
	}
	/* a PMD on a set that does not exist */
	cb_pmd_init(&v[0], 0, 0, 0);
	v[0].reg_set = 9;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, v, 1), -EINVAL);
	assert_int_equal(v[0].reg_flags & PFM_REG_RETFL_MASK,
			 PFM_REG_RETFL_EINVAL);
	v[0].reg_flags = 0;
	assert_int_equal(cb_read_pmds(&t->cb, ctx, v, 1), -EINVAL);
	assert_int_equal(v[0].reg_flags & PFM_REG_RETFL_MASK,
			 PFM_REG_RETFL_EINVAL);
}

/* reg_smpl_pmds / reg_reset_pmds may only name implemented PMDs */
T_CTX_TEST(test_pmd_bitmasks_checked, 0)
{
	pfarg_pmd_t v;

	cb_pmd_init(&v, 0, 0, 0);
	v.reg_smpl_pmds[0] = 1ULL << 5;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &v, 1), -EINVAL);
	assert_int_equal(v.reg_flags & PFM_REG_RETFL_MASK, PFM_REG_RETFL_EINVAL);
	cb_pmd_init(&v, 0, 0, 0);
	v.reg_reset_pmds[2] = 1;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &v, 1), -EINVAL);
	assert_int_equal(v.reg_flags & PFM_REG_RETFL_MASK, PFM_REG_RETFL_EINVAL);
	cb_pmd_init(&v, 0, 0, 0);
	v.reg_smpl_pmds[0] = 0xe;
	v.reg_reset_pmds[4] = 1ULL << (PVPFM_VPMD_VM_EXITS - 256);
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &v, 1), 0);
}

/* virtual PMDs need no PMC: writing them enables them */
T_CTX_TEST(test_virtual_pmd_counts, 0)
{
	uint64_t v;

	t_pmd(t, ctx, 0, PVPFM_VPMD_VM_EXITS, 1000);
	t_go(t, ctx);
	sim_events(t->sim, 0, SIM_EV_VIRTUAL(PVPFM_VPMD_VM_EXITS), 42);
	sim_events(t->sim, 0, SIM_EV_VIRTUAL(PVPFM_VPMD_HALT_EXITS), 9);
	sim_events(t->sim, 1, SIM_EV_VIRTUAL(PVPFM_VPMD_VM_EXITS), 100);
	assert_int_equal(t_read(t, ctx, 0, PVPFM_VPMD_VM_EXITS), 1042);
	assert_int_equal(cb_read_pmd(&t->cb, ctx, 0, PVPFM_VPMD_HALT_EXITS,
				     &v), -EINVAL);
	assert_null(sim_counter_find(t->sim, 0, PVPFM_VPMD_HALT_EXITS));
	/* written while counting: it starts counting at once */
	t_pmd(t, ctx, 0, PVPFM_VPMD_HALT_EXITS, 0);
	sim_events(t->sim, 0, SIM_EV_VIRTUAL(PVPFM_VPMD_HALT_EXITS), 9);
	assert_int_equal(t_read(t, ctx, 0, PVPFM_VPMD_HALT_EXITS), 9);
	/* time-based virtual PMD under the clock */
	t_pmd(t, ctx, 0, PVPFM_VPMD_VCPU_RUN_NS, 0);
	sim_set_rate(t->sim, SIM_EV_VIRTUAL(PVPFM_VPMD_VCPU_RUN_NS), 1000);
	sim_run(t->sim, 12345);
	assert_int_equal(t_read(t, ctx, 0, PVPFM_VPMD_VCPU_RUN_NS), 12345);
}

T_CTX_TEST(test_virtual_pmd_refused, 0)
{
	pfarg_pmd_t v[2];

	sim_refuse(t->sim, SIM_EV_VIRTUAL(PVPFM_VPMD_STEAL_NS));
	cb_pmd_init(&v[0], PVPFM_VPMD_VM_EXITS, 0, 0);
	cb_pmd_init(&v[1], PVPFM_VPMD_STEAL_NS, 0, 0);
	assert_int_equal(cb_write_pmds(&t->cb, ctx, v, 2), -EINVAL);
	t_assert_stopped_at(t, 1, v[1].reg_flags, PFM_REG_RETFL_NOTAVAIL);
	t_go(t, ctx);
	assert_null(sim_counter_find(t->sim, 0, PVPFM_VPMD_STEAL_NS));
	assert_int_equal(t->sim->bad_opens, 0);
}

/* intel_arch: fixed counters through FIXED_CTR_CTRL (PMC16, PMD16..) */
static void test_intel_fixed_counters(void **state)
{
	struct t_opts o;
	struct t_env *t;
	pfarg_pmc_t v;
	u32 ctx;

	(void)state;
	t_opts_default(&o);
	o.personality = PVPFM_PERS_INTEL_ARCH;
	o.gp_counters = 4;
	o.fixed_counters = 3;
	o.arch_version = 3;
	t = t_env_new(&o);
	ctx = t_ctx(t, 0);
	/* fixed counter 1 counts usr+os, PMI bits at their default */
	t_pmc(t, ctx, 0, 16, 0x8b8);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_B) & 0xffffffffULL);
	t_load_self(t, ctx);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	sim_events(t->sim, 0, SIM_EV_FIXED(0), 10);
	sim_events(t->sim, 0, SIM_EV_FIXED(1), 11);
	sim_events(t->sim, 0, KEY_B, 12);
	assert_int_equal(t_read(t, ctx, 0, 16), 0);
	assert_int_equal(t_read(t, ctx, 0, 17), 11);
	assert_int_equal(t_read(t, ctx, 0, 0), 12);
	/* a field of a counter that does not exist is reserved: dropped */
	cb_pmc_init(&v, 16, 0, 0x3888);
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &v, 1), 0);
	assert_null(sim_counter_find(t->sim, 0, 19));
	/*
	 * libpfm-3 writes only the enable bits it uses (0x00a: fixed
	 * counter 0, user mode, PMI): the PMI bits take their default
	 */
	cb_pmc_init(&v, 16, 0, 0x00a);
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &v, 1), 0);
	assert_non_null(sim_counter_find(t->sim, 0, 16));
	assert_int_equal(sim_counter_find(t->sim, 0, 16)->c->ev.pmc_value, 0x88a);
	assert_null(sim_counter_find(t->sim, 0, 17));
	t_env_free(t);

	/* a host that cannot back fixed counters: NOTAVAIL */
	t = t_env_new(&o);
	sim_refuse(t->sim, SIM_EV_KIND_ANY(PFM_EVK_FIXED));
	ctx = t_ctx(t, 0);
	cb_pmc_init(&v, 16, 0, 0x88b);
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &v, 1), -EINVAL);
	assert_int_equal(v.reg_flags & PFM_REG_RETFL_MASK, PFM_REG_RETFL_NOTAVAIL);
	/* all fields off: nothing to back, accepted */
	cb_pmc_init(&v, 16, 0, 0x888);
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, &v, 1), 0);
	t_env_free(t);
}

/* more entries than limits.max_vector: E2BIG and nothing applied */
static void test_vector_over_limit(void **state)
{
	const struct pfm_limits lim = { .max_vector = 4 };
	struct t_env *t;
	pfarg_pmc_t v[5];
	pfarg_pmd_t d[5];
	pfarg_setinfo_t si[5];
	uint64_t pmd0;
	u32 ctx, i;

	(void)state;
	t = t_env_limits(&lim);
	ctx = t_ctx(t, 0);
	for (i = 0; i < 5; i++) {
		cb_pmc_init(&v[i], i % 4, 0, T_EVTSEL(EV_A));
		cb_pmd_init(&d[i], i % 4, 0, 1000);
		memset(&si[i], 0, sizeof(si[i]));
	}
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, v, 5), -E2BIG);
	assert_int_equal(cb_write_pmds(&t->cb, ctx, d, 5), -E2BIG);
	assert_int_equal(cb_read_pmds(&t->cb, ctx, d, 5), -E2BIG);
	assert_int_equal(cb_getinfo_sets(&t->cb, ctx, si, 5), -E2BIG);
	assert_int_equal(d[0].reg_value, 1000);
	assert_int_equal(si[0].set_runs, 0);
	/* nothing applied: PMD0 is not in use */
	assert_int_equal(cb_read_pmd(&t->cb, ctx, 0, 0, &pmd0), -EINVAL);
	t_pmd(t, ctx, 0, 0, 0);
	t_load_self(t, ctx);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(t_read(t, ctx, 0, 0), 0);
	assert_null(sim_counter_find(t->sim, 0, 0));
	/* exactly the limit is fine */
	assert_int_equal(cb_write_pmcs(&t->cb, ctx, v, 4), 0);
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(t_read(t, ctx, 0, 0), 10);
	t_env_free(t);
}

/* 64-bit PMDs over 32-bit counters: a carry is not an overflow */
T_CTX_TEST(test_pmd_64bit_carry, 0)
{
	pfarg_pmd_t d;
	pfarg_msg_t m;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	cb_pmd_init(&d, 0, 0, 0xfffffff0ULL);
	d.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 0x20);
	assert_int_equal(t_read(t, ctx, 0, 0), 0x100000010ULL);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(t->sim->notifies, 0);
	assert_int_equal(t_stats(t).overflows, 0);
	/* the backing counter did wrap: the engine absorbed it */
	assert_int_equal(sim_counter_find(t->sim, 0, 0)->wraps, 1);
	sim_events(t->sim, 0, KEY_A, 3ULL << 32);
	assert_int_equal(t_read(t, ctx, 0, 0), 0x400000010ULL);
	assert_int_equal(cb_stop(&t->cb, ctx), 0);
	assert_int_equal(cb_unload(&t->cb, ctx), 0);
	assert_int_equal(t_read(t, ctx, 0, 0), 0x400000010ULL);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
}

/*
 * Overflow is the wrap of the 64-bit value, whatever the backing width:
 * a period longer than the backing counter overflows exactly once, after
 * exactly that many events.
 */
static void test_pmd_64bit_overflow_any_width(void **state)
{
	const u8 widths[] = { 16, 32, 47, 48, 64 };
	const u64 period = (1ULL << 32) + 100;
	struct t_env *t;
	pfarg_msg_t m;
	unsigned int i;
	u32 ctx;

	(void)state;
	for (i = 0; i < sizeof(widths); i++) {
		t = width_ctx(widths[i], &ctx);
		t_pmd_period(t, ctx, 0, 0, period, PFM_REGFL_OVFL_NOTIFY);
		t_go(t, ctx);
		sim_events(t->sim, 0, KEY_A, period - 1);
		assert_int_equal(t_read(t, ctx, 0, 0), ~0ULL);
		assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
		assert_int_equal(t_stats(t).overflows, 0);
		sim_events(t->sim, 0, KEY_A, 1);
		assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
		assert_int_equal(m.type, PFM_MSG_OVFL);
		assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_pmds[0], 1);
		assert_int_equal(t_stats(t).overflows, 1);
		t_env_free(t);
	}
}

/* large counts are exact at every width */
static void test_pmd_64bit_large_counts(void **state)
{
	const u8 widths[] = { 8, 32, 48, 64 };
	const u64 n = 5 * (1ULL << 32) + 7;
	struct t_env *t;
	unsigned int i;
	u32 ctx;

	(void)state;
	for (i = 0; i < sizeof(widths); i++) {
		t = width_ctx(widths[i], &ctx);
		t_pmd(t, ctx, 0, 0, 3);
		t_go(t, ctx);
		if (widths[i] == 8) {
			/* every 256 events is an interrupt: keep it small */
			sim_events(t->sim, 0, KEY_A, 100000);
			assert_int_equal(t_read(t, ctx, 0, 0), 100003);
		} else {
			sim_events(t->sim, 0, KEY_A, n);
			assert_int_equal(t_read(t, ctx, 0, 0), n + 3);
		}
		t_env_free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T_TEST(test_pmcs_bad_entry_marked),
		T_TEST(test_pmcs_success_clean),
		cmocka_unit_test(test_pmc_reserved_fam10h),
		cmocka_unit_test(test_pmc_reserved_k8),
		T_TEST(test_read_pmds_in_use),
		T_TEST(test_pmc_unimplemented),
		T_TEST(test_pmc_event_refused),
		T_TEST(test_pmc_event_emulated),
		T_TEST(test_pmc_unknown_set),
		T_TEST(test_pmc_en_clear),
		T_TEST(test_pmd_unimplemented),
		T_TEST(test_pmd_bitmasks_checked),
		T_TEST(test_virtual_pmd_counts),
		T_TEST(test_virtual_pmd_refused),
		cmocka_unit_test(test_intel_fixed_counters),
		cmocka_unit_test(test_vector_over_limit),
		T_TEST(test_pmd_64bit_carry),
		cmocka_unit_test(test_pmd_64bit_overflow_any_width),
		cmocka_unit_test(test_pmd_64bit_large_counts),
	};

	return cmocka_run_group_tests_name("registers", tests, NULL, NULL);
}
