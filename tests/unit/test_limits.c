// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's own bounds on the per-VM limits and its clamp of the
 * indexes a guest gives:
 *   - a limit above PFM_LIMIT_MAX_* is refused at pfm_engine_create
 *     (E2BIG) with nothing allocated; one at the maximum works;
 *   - a buffer size that would wrap the sampling buffer's u32 page count
 *     (2^44 bytes and more: 0 pages, a "ready" buffer of nothing) cannot
 *     be configured, nor asked for under the largest limit;
 *   - a buffer at the largest limit has every one of its pages;
 *   - pfm_index_nospec() (the userspace fallback of pfm_os.h) keeps an
 *     index below its bound and gives 0 for one at or above it.
 * The refusals call pfm_engine_create on the simulated PMU directly; the
 * rest are guest calls (tests/common/cmdblock) on a t_env, which fails a
 * test on any leak or misuse.
 */
#include "t_env.h"

/* pfm_engine_create with @lim refused (E2BIG) before allocating anything */
static void expect_refused(const struct pfm_limits *lim)
{
	struct pfm_engine_cfg cfg;
	struct pfm_engine *e = NULL;
	struct sim_cfg sc;
	struct sim *s;

	memset(&sc, 0, sizeof(sc));
	sc.nr_vcpus = 1;
	sc.counter_width = 48;
	sc.guest_base = T_GUEST_BASE;
	sc.guest_size = T_GUEST_SIZE;
	s = sim_create(&sc);
	assert_non_null(s);
	memset(&cfg, 0, sizeof(cfg));
	cfg.personality = PVPFM_PERS_AMD64;
	cfg.limits = *lim;
	assert_int_equal(sim_engine_create(s, &cfg, &e), -E2BIG);
	assert_null(e);
	assert_int_equal(s->allocs, 0);
	sim_destroy(s);
}

/* one limit (0: max_contexts .. 3: max_smpl_buf) at @v, the others 0 */
static void expect_refused_one(int which, u64 v)
{
	struct pfm_limits lim;

	memset(&lim, 0, sizeof(lim));
	if (which == 0)
		lim.max_contexts = v;
	else if (which == 1)
		lim.max_sets = v;
	else if (which == 2)
		lim.max_vector = v;
	else
		lim.max_smpl_buf = v;
	expect_refused(&lim);
}

/* the guest is told @lim (PMU_INFO) */
static void expect_info_limits(struct t_env *t, const struct pfm_limits *lim)
{
	struct pvpfm_pmu_info info;

	assert_int_equal(cb_pmu_info(&t->cb, &info), 0);
	assert_int_equal(info.max_contexts, lim->max_contexts);
	assert_int_equal(info.max_sets, lim->max_sets);
	assert_int_equal(info.max_vector, lim->max_vector);
	assert_int_equal(info.max_smpl_buf, lim->max_smpl_buf);
}

/* register one page of guest RAM as page @first of @ctx's buffer */
static int register_page(struct t_env *t, u32 ctx, u32 first)
{
	u64 gpa = T_SMPL_GPA;

	return cb_smpl_register(&t->cb, ctx, first, 1, &gpa);
}

static void test_limits_above_max_refused(void **state)
{
	static const u64 big32[] = { 1ULL << 28, 0xffffffffULL };
	static const u64 big64[] = { 1ULL << 40, 1ULL << 44, ~0ULL };
	static const u64 max[] = {
		PFM_LIMIT_MAX_CONTEXTS, PFM_LIMIT_MAX_SETS,
		PFM_LIMIT_MAX_VECTOR, PFM_LIMIT_MAX_SMPL_BUF,
	};
	unsigned int i;
	int l;

	(void)state;
	for (l = 0; l < 4; l++) {
		for (i = 0; i < ARRAY_SIZE(big32); i++)
			expect_refused_one(l, l < 3 ? big32[i] :
					   max[3] + big32[i]);
		/* one above each maximum */
		expect_refused_one(l, max[l] + 1);
	}
	for (i = 0; i < ARRAY_SIZE(big64); i++)
		expect_refused_one(3, big64[i]);
}

/* every limit at its maximum: accepted, reported, and usable */
static void test_limits_at_max(void **state)
{
	struct pfm_limits lim;
	struct t_env *t;
	u32 pages = PFM_LIMIT_MAX_SMPL_BUF / PVPFM_PAGE_SIZE;
	int ctx;

	(void)state;
	lim.max_contexts = PFM_LIMIT_MAX_CONTEXTS;
	lim.max_sets = PFM_LIMIT_MAX_SETS;
	lim.max_vector = PFM_LIMIT_MAX_VECTOR;
	lim.max_smpl_buf = PFM_LIMIT_MAX_SMPL_BUF;
	t = t_env_limits(&lim);
	expect_info_limits(t, &lim);
	/* the vector maximum is the command block's capacity in PMC entries */
	assert_true(PFM_LIMIT_MAX_VECTOR * sizeof(pfarg_pmc_t) <=
		    PVPFM_CMD_ARGS_MAX);
	assert_true((PFM_LIMIT_MAX_VECTOR + 1) * sizeof(pfarg_pmc_t) >
		    PVPFM_CMD_ARGS_MAX);

	/* a buffer of the largest size: 2^20 pages, each one there */
	ctx = t_create_smpl(t, 0, PFM_LIMIT_MAX_SMPL_BUF);
	assert_true(ctx > 0);
	assert_int_equal(register_page(t, ctx, 0), 0);
	assert_int_equal(register_page(t, ctx, pages - 1), 0);
	assert_int_equal(register_page(t, ctx, pages), -EINVAL);
	/* one byte more than the limit */
	assert_int_equal(t_create_smpl(t, 0, PFM_LIMIT_MAX_SMPL_BUF + 1),
			 -ENOMEM);
	t_env_free(t);
}

/*
 * A buffer of 2^44 bytes would count 0 pages in a u32: a zero-sized page
 * table that an empty SMPL_REGISTER makes ready and the first header
 * flush reads past. No limit allows such a size, and under the largest
 * limit the guest is refused (ENOMEM, over limit).
 */
static void test_smpl_buf_2p44(void **state)
{
	static const u64 sizes[] = {
		1ULL << 44, (1ULL << 44) + PVPFM_PAGE_SIZE, 1ULL << 45,
		~0ULL - PVPFM_PAGE_SIZE + 2, ~0ULL,
	};
	struct pfm_limits lim;
	struct t_env *t;
	unsigned int i;
	long live;

	(void)state;
	expect_refused_one(3, 1ULL << 44);

	memset(&lim, 0, sizeof(lim));
	lim.max_smpl_buf = PFM_LIMIT_MAX_SMPL_BUF;
	t = t_env_limits(&lim);
	live = t->sim->live_allocs;
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		assert_int_equal(t_create_smpl(t, 0, sizes[i]), -ENOMEM);
	/* nothing was left behind by the refusals */
	assert_int_equal(t->sim->live_allocs, live);
	assert_int_equal(t_stats(t).contexts, 0);
	t_env_free(t);
}

/* the default limits when none is given, as before */
static void test_limits_zero_default(void **state)
{
	struct pfm_limits lim;
	struct t_env *t;

	(void)state;
	memset(&lim, 0, sizeof(lim));
	t = t_env_limits(&lim);
	lim.max_contexts = PFM_DFL_MAX_CONTEXTS;
	lim.max_sets = PFM_DFL_MAX_SETS;
	lim.max_vector = PFM_DFL_MAX_VECTOR;
	lim.max_smpl_buf = PFM_DFL_MAX_SMPL_BUF;
	expect_info_limits(t, &lim);
	t_env_free(t);
}

static void test_index_nospec(void **state)
{
	u16 i16;
	u32 i32;
	u64 i64;
	unsigned int n;

	(void)state;
	for (n = 0; n < 400; n++) {
		i16 = n;
		assert_int_equal(pfm_index_nospec(i16, PFM_MAX_PMDS),
				 n < PFM_MAX_PMDS ? n : 0);
		i32 = n;
		assert_int_equal(pfm_index_nospec(i32, (u32)PVPFM_CMD_MAX),
				 n < PVPFM_CMD_MAX ? n : 0);
	}
	i16 = 0xffff;
	assert_int_equal(pfm_index_nospec(i16, (u16)PFM_MAX_PMCS), 0);
	i32 = 0xffffffff;
	assert_int_equal(pfm_index_nospec(i32, 1u << 20), 0);
	i32 = (1u << 20) - 1;
	assert_int_equal(pfm_index_nospec(i32, 1u << 20), (1u << 20) - 1);
	i64 = 0;
	assert_true(pfm_index_nospec(i64, 1UL) == 0);
	i64 = 1;
	assert_true(pfm_index_nospec(i64, 1UL) == 0);
	/* the type of the index is kept */
	assert_int_equal(sizeof(pfm_index_nospec(i16, 10u)), sizeof(u16));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits_above_max_refused),
		cmocka_unit_test(test_limits_at_max),
		cmocka_unit_test(test_smpl_buf_2p44),
		cmocka_unit_test(test_limits_zero_default),
		cmocka_unit_test(test_index_nospec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
