// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed command blocks (bad version, unknown command, argument size
 * mismatches, vectors over the limit, blocks larger than a command block)
 * get the right errno and change nothing; per-VM limits; allocation and
 * counter failures leave nothing half done.
 */
#include "t_env.h"

#define SENTINEL	0x5a5a5a5a

/* raw access to the block: the header as the guest wrote it */
static struct pvpfm_cmd_hdr *raw_hdr(struct t_env *t, u16 version, u16 cmd,
				     u32 ctx, u32 count, u32 arg_size)
{
	struct pvpfm_cmd_hdr *h = (struct pvpfm_cmd_hdr *)t->block;

	memset(t->block, 0, sizeof(t->block));
	h->version = version;
	h->cmd = cmd;
	h->ctx_id = ctx;
	h->count = count;
	h->status = SENTINEL;
	h->arg_size = arg_size;
	h->tid = t->tid[t->vcpu];
	h->tgid = t->tgid[t->vcpu];
	return h;
}

/* a snapshot of what the engine holds, to show nothing changed */
struct snap {
	u32 contexts, sets, loaded, active;
	u64 overflows, messages;
	long allocs;
	u32 open;
};

static void snap_take(struct t_env *t, struct snap *s)
{
	struct pfm_engine_stats st = t_stats(t);

	memset(s, 0, sizeof(*s));
	s->contexts = st.contexts;
	s->sets = st.sets;
	s->loaded = st.loaded;
	s->active = st.active_counters;
	s->overflows = st.overflows;
	s->messages = st.messages;
	s->allocs = t->sim->live_allocs;
	s->open = t->sim->nr_open;
}

static void snap_same(struct t_env *t, const struct snap *a)
{
	struct snap b;

	snap_take(t, &b);
	assert_memory_equal(a, &b, sizeof(b));
}

static void test_bad_version(void **state)
{
	struct t_env *t = T_ENV(state);
	const u16 versions[] = { 0, PVPFM_ABI_VERSION + 1, 0xffff };
	struct pvpfm_create_arg a, *arg;
	struct pvpfm_cmd_hdr *h;
	struct snap s;
	unsigned int i;
	int ret;

	snap_take(t, &s);
	memset(&a, 0, sizeof(a));
	for (i = 0; i < 3; i++) {
		h = raw_hdr(t, versions[i], PVPFM_CMD_CREATE_CONTEXT, 0, 0,
			    sizeof(a));
		memcpy(h + 1, &a, sizeof(a));
		ret = pfm_engine_exec(t->e, 0, t->block, sizeof(*h) + sizeof(a));
		assert_int_equal(ret, sizeof(*h) + sizeof(a));
		/* refused (the errno is not pinned by the ABI: see report) */
		assert_true(h->status < 0);
		assert_int_not_equal(h->status, -ENOSYS);
		assert_int_equal(h->ctx_id, 0);
		arg = (void *)(h + 1);
		assert_memory_equal(arg, &a, sizeof(a));
		snap_same(t, &s);
	}
}

/* pv_perfmon.h: the host answers an unknown command with -ENOSYS */
static void test_unknown_cmd(void **state)
{
	struct t_env *t = T_ENV(state);
	const u16 cmds[] = { 0, PVPFM_CMD_MAX, PVPFM_CMD_MAX + 1, 100, 0xffff };
	u32 ctx = t_ctx(t, 0);
	struct snap s;
	unsigned int i;
	u64 arg[8];

	snap_take(t, &s);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		memset(arg, 0x11, sizeof(arg));
		assert_int_equal(cb_cmd(&t->cb, cmds[i], ctx, 0, NULL, 0),
				 -ENOSYS);
		assert_int_equal(cb_cmd(&t->cb, cmds[i], ctx, 1, arg,
					sizeof(arg)), -ENOSYS);
		assert_int_equal(arg[7], 0x1111111111111111ULL);
		snap_same(t, &s);
	}
}

/* vector commands: arg_size must be count * entry size */
T_CTX_TEST(test_vector_size_mismatch, 0)
{
	pfarg_pmc_t pmc[2];
	pfarg_pmd_t pmd[2];
	struct snap s;
	uint64_t v;

	memset(pmc, 0, sizeof(pmc));
	memset(pmd, 0, sizeof(pmd));
	pmc[0].reg_value = pmc[1].reg_value = T_EVTSEL(EV_A);
	pmc[1].reg_num = 1;
	pmd[0].reg_value = 1234;
	snap_take(t, &s);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_WRITE_PMCS, ctx, 2, pmc,
				sizeof(pmc[0])), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_WRITE_PMCS, ctx, 1, pmc,
				sizeof(pmc[0]) - 1), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_WRITE_PMCS, ctx, 1, pmc,
				sizeof(pmc[0]) + 8), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_WRITE_PMCS, ctx, 0, pmc,
				sizeof(pmc[0])), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_WRITE_PMDS, ctx, 1, pmd,
				sizeof(pmd)), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_WRITE_PMDS, ctx, 2, pmd,
				sizeof(pmc)), -EINVAL);
	/* no RETFL marking: the vector was never looked at */
	assert_int_equal(pmc[0].reg_flags, 0);
	assert_int_equal(pmd[0].reg_flags, 0);
	snap_same(t, &s);
	/* nothing applied: PMD0 not in use, and no PMC counts */
	assert_int_equal(cb_read_pmd(&t->cb, ctx, 0, 0, &v), -EINVAL);
	t_pmd(t, ctx, 0, 0, 0);
	t_pmd(t, ctx, 0, 1, 0);
	t_load_self(t, ctx);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	sim_events(t->sim, 0, KEY_A, 9);
	assert_int_equal(t_read(t, ctx, 0, 0), 0);
	assert_int_equal(t_read(t, ctx, 0, 1), 0);
}

/* fixed-size and argument-less commands */
T_CTX_TEST(test_fixed_size_mismatch, 0)
{
	u8 arg[256];
	struct snap s;

	memset(arg, 0, sizeof(arg));
	snap_take(t, &s);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_CREATE_CONTEXT, 0, 0, arg,
				sizeof(struct pvpfm_create_arg) - 1), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_CREATE_CONTEXT, 0, 0, arg,
				sizeof(struct pvpfm_create_arg) + 8), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_CREATE_CONTEXT, 0, 0, NULL,
				0), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_LOAD_CONTEXT, ctx, 0, arg,
				sizeof(pfarg_load_t)), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_SWITCH, 0, 0, arg, 8),
			 -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_PMU_INFO, 0, 0, NULL, 0),
			 -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_READ_MSG, ctx, 0, arg, 8),
			 -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_SMPL_REGISTER, ctx, 0, arg,
				4),
			 -EINVAL);
	snap_same(t, &s);

	/* the context, loaded and counting, is not disturbed */
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_load_self(t, ctx);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	sim_events(t->sim, 0, KEY_A, 10);
	snap_take(t, &s);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_STOP, ctx, 0, arg, 8),
			 -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_START, ctx, 0, arg,
				sizeof(pfarg_start_t) - 1), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_UNLOAD_CONTEXT, ctx, 0, arg,
				4), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_DESTROY_CONTEXT, ctx, 0, arg,
				8), -EINVAL);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_RESTART, ctx, 0, arg, 1),
			 -EINVAL);
	snap_same(t, &s);
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(t_read(t, ctx, 0, 0), 20);
}

/*
 * a vector longer than limits.max_vector: E2BIG (the default limit is
 * what the command block holds: a lower one here, so that a longer
 * vector fits in the block)
 */
static void test_count_over_limit(void **state)
{
	const struct pfm_limits lim = { .max_vector = 8 };
	const u32 n = 9;
	struct t_env *t = t_env_limits(&lim);
	u32 ctx = t_ctx(t, 0);
	pfarg_pmd_t pmd[9];
	struct pvpfm_reg_desc rd[9];
	struct snap s;
	uint64_t v;
	u32 i;

	(void)state;
	memset(pmd, 0, sizeof(pmd));
	for (i = 0; i < n; i++)
		pmd[i].reg_value = 55 + i;
	snap_take(t, &s);
	assert_int_equal(cb_write_pmds(&t->cb, ctx, pmd, n), -E2BIG);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_REG_DESC, 0, n, rd,
				sizeof(rd)), -E2BIG);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_READ_PMDS, ctx, 0xffffffff,
				NULL, 0), -E2BIG);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_CREATE_EVTSETS, ctx,
				0x80000000, NULL, 0), -E2BIG);
	snap_same(t, &s);
	/* nothing applied: PMD0 not in use */
	assert_int_equal(cb_read_pmd(&t->cb, ctx, 0, 0, &v), -EINVAL);
	assert_int_equal(cb_write_pmds(&t->cb, ctx, pmd, n - 1), 0);
	assert_int_equal(t_read(t, ctx, 0, 0), 55 + n - 2);
	t_env_free(t);
}

/*
 * arg_size beyond the block the host copied: refused; what goes back to
 * the guest never exceeds the block.
 */
static void test_arg_size_beyond_block(void **state)
{
	struct t_env *t = T_ENV(state);
	const u32 sizes[] = { 64, PVPFM_CMD_ARGS_MAX + 1, 0x7fffffff,
			      0xffffffff };
	struct pvpfm_cmd_hdr *h;
	struct snap s;
	unsigned int i;
	u32 len = sizeof(*h) + sizeof(pfarg_pmc_t);
	u32 ctx = t_ctx(t, 0);
	int ret;

	snap_take(t, &s);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		h = raw_hdr(t, PVPFM_ABI_VERSION, PVPFM_CMD_WRITE_PMCS, ctx, 1,
			    sizes[i]);
		ret = pfm_engine_exec(t->e, 0, t->block, len);
		assert_true(ret >= (int)sizeof(*h) && ret <= (int)len);
		assert_int_equal(h->status, -EINVAL);
		h = raw_hdr(t, PVPFM_ABI_VERSION, PVPFM_CMD_CREATE_CONTEXT, 0, 0,
			    sizes[i]);
		ret = pfm_engine_exec(t->e, 0, t->block, len);
		assert_true(ret >= (int)sizeof(*h) && ret <= (int)len);
		assert_int_equal(h->status, -EINVAL);
		snap_same(t, &s);
	}
	/* arg_size right for the command, but more than the block holds */
	h = raw_hdr(t, PVPFM_ABI_VERSION, PVPFM_CMD_CREATE_CONTEXT, 0, 0,
		    sizeof(struct pvpfm_create_arg));
	ret = pfm_engine_exec(t->e, 0, t->block, len);
	assert_true(ret >= (int)sizeof(*h) && ret <= (int)len);
	assert_int_equal(h->status, -EINVAL);
	h = raw_hdr(t, PVPFM_ABI_VERSION, PVPFM_CMD_WRITE_PMCS, ctx, 2,
		    2 * sizeof(pfarg_pmc_t));
	ret = pfm_engine_exec(t->e, 0, t->block, len);
	assert_true(ret >= (int)sizeof(*h) && ret <= (int)len);
	assert_int_equal(h->status, -EINVAL);
	h = raw_hdr(t, PVPFM_ABI_VERSION, PVPFM_CMD_PMU_INFO, 0, 0,
		    sizeof(struct pvpfm_pmu_info));
	ret = pfm_engine_exec(t->e, 0, t->block, len);
	assert_true(ret >= (int)sizeof(*h) && ret <= (int)len);
	assert_int_equal(h->status, -EINVAL);
	snap_same(t, &s);
}

/* the host's copy itself is unusable: a negative return, block untouched */
static void test_exec_bad_len(void **state)
{
	struct t_env *t = T_ENV(state);
	static u64 big[PVPFM_CMD_BLOCK_SIZE / 8 + 2];
	struct pvpfm_cmd_hdr *h;
	struct snap s;

	snap_take(t, &s);
	h = raw_hdr(t, PVPFM_ABI_VERSION, PVPFM_CMD_PMU_INFO, 0, 0,
		    sizeof(struct pvpfm_pmu_info));
	memcpy(big, t->block, sizeof(t->block));
	h = (void *)big;
	assert_true(pfm_engine_exec(t->e, 0, big, sizeof(big)) < 0);
	assert_int_equal(h->status, SENTINEL);
	assert_true(pfm_engine_exec(t->e, 0, big, PVPFM_CMD_BLOCK_SIZE + 1) < 0);
	assert_int_equal(h->status, SENTINEL);
	assert_true(pfm_engine_exec(t->e, 0, big, sizeof(*h) - 1) < 0);
	assert_true(pfm_engine_exec(t->e, 0, big, 0) < 0);
	assert_int_equal(h->status, SENTINEL);
	/* a vCPU the engine does not have */
	assert_true(pfm_engine_exec(t->e, 2, big, PVPFM_CMD_BLOCK_SIZE) < 0);
	assert_true(pfm_engine_exec(t->e, 0xffffffff, big, 64) < 0);
	assert_int_equal(h->status, SENTINEL);
	snap_same(t, &s);
	/* and the same block with a sane length works */
	assert_int_equal(pfm_engine_exec(t->e, 0, big, PVPFM_CMD_BLOCK_SIZE),
			 sizeof(*h) + sizeof(struct pvpfm_pmu_info));
	assert_int_equal(h->status, 0);
}

/* limits.max_contexts contexts at once */
static void test_max_contexts(void **state)
{
	struct t_opts o;
	struct t_env *t;
	struct pvpfm_pmu_info info;
	u32 ids[3], i;

	(void)state;
	t_opts_default(&o);
	o.limits.max_contexts = 3;
	o.limits.max_sets = 5;
	o.limits.max_vector = 7;
	o.limits.max_smpl_buf = 12345;
	t = t_env_new(&o);
	assert_int_equal(cb_pmu_info(&t->cb, &info), 0);
	assert_int_equal(info.max_contexts, 3);
	assert_int_equal(info.max_sets, 5);
	assert_int_equal(info.max_vector, 7);
	assert_int_equal(info.max_smpl_buf, 12345);
	for (i = 0; i < 3; i++)
		ids[i] = t_ctx(t, 0);
	assert_int_equal(t_create(t, 0), -EMFILE);
	assert_int_equal(t_create(t, PFM_FL_SYSTEM_WIDE), -EMFILE);
	assert_int_equal(t_stats(t).contexts, 3);
	assert_int_equal(cb_destroy(&t->cb, ids[1]), 0);
	assert_true(t_create(t, 0) > 0);
	assert_int_equal(t_create(t, 0), -EMFILE);
	t_env_free(t);
}

/* every allocation failure is clean: an error, and nothing left behind */
static void test_alloc_failures(void **state)
{
	struct t_env *t = T_ENV(state);
	long base;
	u32 n, ok = 0, ctx;
	int ret;

	for (n = 1; n < 16; n++) {
		base = t->sim->live_allocs;
		t->sim->fail_alloc_in = n;
		ret = t_create_smpl(t, 0, 3 * PVPFM_PAGE_SIZE);
		t->sim->fail_alloc_in = 0;
		if (ret > 0) {
			ok++;
			assert_int_equal(cb_destroy(&t->cb, ret), 0);
		} else {
			assert_int_equal(ret, -ENOMEM);
		}
		assert_int_equal(t->sim->live_allocs, base);
		assert_int_equal(t_stats(t).contexts, 0);
	}
	/* it succeeded once the failure came after its allocations */
	assert_true(ok > 0 && ok < 15);

	ctx = t_ctx(t, 0);
	for (n = 1; n < 4; n++) {
		pfarg_setdesc_t d;
		pfarg_setinfo_t si;

		memset(&d, 0, sizeof(d));
		d.set_id = 10 + n;
		t->sim->fail_alloc_in = n;
		ret = cb_create_sets(&t->cb, ctx, &d, 1);
		t->sim->fail_alloc_in = 0;
		memset(&si, 0, sizeof(si));
		si.set_id = 10 + n;
		if (ret) {
			assert_int_equal(ret, -ENOMEM);
			assert_int_equal(cb_getinfo_sets(&t->cb, ctx, &si, 1),
					 -EINVAL);
		} else {
			assert_int_equal(cb_getinfo_sets(&t->cb, ctx, &si, 1),
					 0);
		}
	}
}

/* a counter the host cannot open: the load is all or nothing */
T_CTX_TEST(test_counter_open_fails, 0)
{
	int ret;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	t->sim->fail_open_in = 2;
	ret = cb_load(&t->cb, ctx, t->tid[0], 0, PVPFM_LOAD_SELF, t->tgid[0]);
	t->sim->fail_open_in = 0;
	if (ret == 0) {
		assert_int_equal(t_stats(t).loaded, 1);
	} else {
		/* refused: nothing half loaded */
		assert_true(ret < 0);
		assert_int_equal(t_stats(t).loaded, 0);
		assert_int_equal(t->sim->nr_open, 0);
		/* and it can be loaded once the host can */
		t_load_self(t, ctx);
	}
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	/* either way, never a PMD silently stuck at zero (ARCHITECTURE.md) */
	sim_events(t->sim, 0, KEY_A, 2);
	sim_events(t->sim, 0, KEY_B, 3);
	assert_int_equal(t_read(t, ctx, 0, 0), 2);
	assert_int_equal(t_read(t, ctx, 0, 1), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T_TEST(test_bad_version),
		T_TEST(test_unknown_cmd),
		T_TEST(test_vector_size_mismatch),
		T_TEST(test_fixed_size_mismatch),
		cmocka_unit_test(test_count_over_limit),
		T_TEST(test_arg_size_beyond_block),
		T_TEST(test_exec_bad_len),
		cmocka_unit_test(test_max_contexts),
		T_TEST(test_alloc_failures),
		T_TEST(test_counter_open_fails),
	};

	return cmocka_run_group_tests_name("malformed+limits", tests, NULL, NULL);
}
