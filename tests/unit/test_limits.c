// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's own bounds on the per-VM limits (issue 9, item 1) and its
 * index clamp (item 5):
 *   - a limit above PFM_LIMIT_MAX_* is refused at pfm_engine_create
 *     (E2BIG) with nothing allocated; one at the maximum works;
 *   - the buffer size that wrapped the sampling buffer's u32 page count
 *     (2^44 bytes and more: 0 pages, a "ready" buffer of nothing) cannot
 *     be configured, nor asked for under the largest limit;
 *   - a buffer at the largest limit has every one of its pages;
 *   - pfm_index_nospec() (the userspace fallback of pfm_os.h) keeps an
 *     index below its bound and gives 0 for one at or above it.
 * The engine is driven through pfm_engine_exec() with hand-built command
 * blocks, on the simulated PMU, which reports leaks and bad frees.
 */
#include <stdlib.h>

#include "t_env.h"

struct l_env {
	struct sim *sim;
	struct pfm_engine *e;
	u64 block[PVPFM_CMD_BLOCK_SIZE / 8];
};

static struct sim *l_sim(void)
{
	struct sim_cfg sc;
	struct sim *s;

	memset(&sc, 0, sizeof(sc));
	sc.nr_vcpus = 1;
	sc.counter_width = 48;
	sc.guest_base = T_GUEST_BASE;
	sc.guest_size = T_GUEST_SIZE;
	s = sim_create(&sc);
	assert_non_null(s);
	return s;
}

/* pfm_engine_create with @lim on a fresh sim; the engine (if any) in @l */
static int l_create(struct l_env *l, const struct pfm_limits *lim)
{
	struct pfm_engine_cfg cfg;

	memset(l, 0, sizeof(*l));
	l->sim = l_sim();
	memset(&cfg, 0, sizeof(cfg));
	cfg.personality = PVPFM_PERS_AMD64;
	cfg.limits = *lim;
	return sim_engine_create(l->sim, &cfg, &l->e);
}

/* engine destroyed; the sim saw every allocation freed, nothing misused */
static void l_free(struct l_env *l)
{
	pfm_engine_destroy(l->e);
	assert_int_equal(l->sim->live_allocs, 0);
	assert_int_equal(l->sim->bad_frees, 0);
	assert_int_equal(l->sim->pinned, 0);
	sim_destroy(l->sim);
}

/* one command from vCPU 0: its status; the argument comes back in @arg */
static int l_cmd(struct l_env *l, u16 cmd, u32 ctx, u32 count, void *arg,
		 u32 size, u32 *ctx_out)
{
	struct pvpfm_cmd_hdr *h = (struct pvpfm_cmd_hdr *)l->block;
	int len;

	assert_true(size <= PVPFM_CMD_ARGS_MAX);
	memset(l->block, 0, sizeof(l->block));
	h->version = PVPFM_ABI_VERSION;
	h->cmd = cmd;
	h->ctx_id = ctx;
	h->count = count;
	h->arg_size = size;
	h->status = 0x7fffffff;
	h->tid = h->tgid = 1000;
	memcpy(h + 1, arg, size);
	len = pfm_engine_exec(l->e, 0, l->block, sizeof(*h) + size);
	assert_int_equal(len, sizeof(*h) + size);
	memcpy(arg, h + 1, size);
	if (ctx_out)
		*ctx_out = h->ctx_id;
	return h->status;
}

static int l_create_smpl(struct l_env *l, u64 buf_size, u32 *ctx)
{
	struct pvpfm_create_arg a;

	memset(&a, 0, sizeof(a));
	strcpy(a.smpl_name, PFM_DFL_SMPL_NAME);
	a.smpl_arg.buf_size = buf_size;
	return l_cmd(l, PVPFM_CMD_CREATE_CONTEXT, 0, 0, &a, sizeof(a), ctx);
}

/* register one page (the first of guest RAM) as page @first of @ctx */
static int l_register(struct l_env *l, u32 ctx, u32 first)
{
	struct {
		struct pvpfm_smpl_register_arg r;
		u64 gpa;
	} a;

	memset(&a, 0, sizeof(a));
	a.r.first_page = first;
	a.r.nr_pages = 1;
	a.gpa = T_SMPL_GPA;
	return l_cmd(l, PVPFM_CMD_SMPL_REGISTER, ctx, 0, &a, sizeof(a), NULL);
}

static void l_info(struct l_env *l, struct pvpfm_pmu_info *info)
{
	memset(info, 0, sizeof(*info));
	assert_int_equal(l_cmd(l, PVPFM_CMD_PMU_INFO, 0, 0, info,
			       sizeof(*info), NULL), 0);
}

/* @lim refused with E2BIG before anything is allocated */
static void expect_refused(const struct pfm_limits *lim)
{
	struct l_env l;

	assert_int_equal(l_create(&l, lim), -E2BIG);
	assert_null(l.e);
	assert_int_equal(l.sim->allocs, 0);
	l_free(&l);
}

static void test_limits_above_max_refused(void **state)
{
	static const u64 big32[] = { 1ULL << 28, 0xffffffffULL };
	static const u64 big64[] = { 1ULL << 40, 1ULL << 44, ~0ULL };
	struct pfm_limits lim;
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(big32); i++) {
		memset(&lim, 0, sizeof(lim));
		lim.max_contexts = big32[i];
		expect_refused(&lim);
		memset(&lim, 0, sizeof(lim));
		lim.max_sets = big32[i];
		expect_refused(&lim);
		memset(&lim, 0, sizeof(lim));
		lim.max_vector = big32[i];
		expect_refused(&lim);
		memset(&lim, 0, sizeof(lim));
		lim.max_smpl_buf = big32[i] + PFM_LIMIT_MAX_SMPL_BUF;
		expect_refused(&lim);
	}
	for (i = 0; i < ARRAY_SIZE(big64); i++) {
		memset(&lim, 0, sizeof(lim));
		lim.max_smpl_buf = big64[i];
		expect_refused(&lim);
	}
	/* one above each maximum */
	memset(&lim, 0, sizeof(lim));
	lim.max_contexts = PFM_LIMIT_MAX_CONTEXTS + 1;
	expect_refused(&lim);
	memset(&lim, 0, sizeof(lim));
	lim.max_sets = PFM_LIMIT_MAX_SETS + 1;
	expect_refused(&lim);
	memset(&lim, 0, sizeof(lim));
	lim.max_vector = PFM_LIMIT_MAX_VECTOR + 1;
	expect_refused(&lim);
	memset(&lim, 0, sizeof(lim));
	lim.max_smpl_buf = PFM_LIMIT_MAX_SMPL_BUF + 1;
	expect_refused(&lim);
}

/* every limit at its maximum: accepted, reported, and usable */
static void test_limits_at_max(void **state)
{
	struct pvpfm_pmu_info info;
	struct pfm_limits lim;
	struct l_env l;
	u32 ctx = 0;

	(void)state;
	lim.max_contexts = PFM_LIMIT_MAX_CONTEXTS;
	lim.max_sets = PFM_LIMIT_MAX_SETS;
	lim.max_vector = PFM_LIMIT_MAX_VECTOR;
	lim.max_smpl_buf = PFM_LIMIT_MAX_SMPL_BUF;
	assert_int_equal(l_create(&l, &lim), 0);
	l_info(&l, &info);
	assert_int_equal(info.max_contexts, PFM_LIMIT_MAX_CONTEXTS);
	assert_int_equal(info.max_sets, PFM_LIMIT_MAX_SETS);
	assert_int_equal(info.max_vector, PFM_LIMIT_MAX_VECTOR);
	assert_int_equal(info.max_smpl_buf, PFM_LIMIT_MAX_SMPL_BUF);
	/* the vector maximum is the command block's capacity in PMC entries */
	assert_true(PFM_LIMIT_MAX_VECTOR * sizeof(pfarg_pmc_t) <=
		    PVPFM_CMD_ARGS_MAX);
	assert_true((PFM_LIMIT_MAX_VECTOR + 1) * sizeof(pfarg_pmc_t) >
		    PVPFM_CMD_ARGS_MAX);

	/* a buffer of the largest size: 2^20 pages, each one there */
	assert_int_equal(l_create_smpl(&l, PFM_LIMIT_MAX_SMPL_BUF, &ctx), 0);
	assert_int_equal(l_register(&l, ctx, 0), 0);
	assert_int_equal(l_register(&l, ctx,
				    PFM_LIMIT_MAX_SMPL_BUF / PVPFM_PAGE_SIZE - 1),
			 0);
	assert_int_equal(l_register(&l, ctx,
				    PFM_LIMIT_MAX_SMPL_BUF / PVPFM_PAGE_SIZE),
			 -EINVAL);
	/* one byte more than the limit */
	assert_int_equal(l_create_smpl(&l, PFM_LIMIT_MAX_SMPL_BUF + 1, NULL),
			 -ENOMEM);
	l_free(&l);
}

/*
 * The crash of issue 9: a buffer of 2^44 bytes had 0 pages, its page
 * table was a zero-sized allocation, an empty SMPL_REGISTER made it
 * ready and the first header flush read past it. No limit allows it now,
 * and under the largest limit the guest is refused (ENOMEM, over limit).
 */
static void test_smpl_buf_2p44(void **state)
{
	static const u64 sizes[] = {
		1ULL << 44, (1ULL << 44) + PVPFM_PAGE_SIZE, 1ULL << 45,
		~0ULL - PVPFM_PAGE_SIZE + 2, ~0ULL,
	};
	struct pfm_limits lim;
	struct l_env l;
	unsigned int i;
	long live;
	u32 ctx = 0;

	(void)state;
	memset(&lim, 0, sizeof(lim));
	lim.max_smpl_buf = 1ULL << 44;
	expect_refused(&lim);

	lim.max_smpl_buf = PFM_LIMIT_MAX_SMPL_BUF;
	assert_int_equal(l_create(&l, &lim), 0);
	live = l.sim->live_allocs;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		ctx = 0;
		assert_int_equal(l_create_smpl(&l, sizes[i], &ctx), -ENOMEM);
		assert_int_equal(ctx, 0);
	}
	/* nothing was left behind by the refusals */
	assert_int_equal(l.sim->live_allocs, live);
	l_free(&l);
}

/* the default limits when none is given, as before */
static void test_limits_zero_default(void **state)
{
	struct pvpfm_pmu_info info;
	struct pfm_limits lim;
	struct l_env l;

	(void)state;
	memset(&lim, 0, sizeof(lim));
	assert_int_equal(l_create(&l, &lim), 0);
	l_info(&l, &info);
	assert_int_equal(info.max_contexts, PFM_DFL_MAX_CONTEXTS);
	assert_int_equal(info.max_sets, PFM_DFL_MAX_SETS);
	assert_int_equal(info.max_vector, PFM_DFL_MAX_VECTOR);
	assert_int_equal(info.max_smpl_buf, PFM_DFL_MAX_SMPL_BUF);
	l_free(&l);
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
