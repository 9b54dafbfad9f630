// SPDX-License-Identifier: GPL-2.0
/*
 * Overflows without a sampling buffer: periods (-p), notification and
 * masking, short/long reset, reset_pmds, randomized periods, and the
 * message queue (PFM_MSG_OVFL, PFM_MSG_END, depth, PFM_FL_OVFL_NO_MSG),
 * PFM_FL_NOTIFY_BLOCK as the guest sees it (CTX_STATE).
 */
#include "t_env.h"
#include "kvm/engine/pfm_priv.h"

static void pmd_prog(struct t_env *t, u32 ctx, u16 num, u64 value,
		     u64 short_reset, u64 long_reset, u32 flags)
{
	pfarg_pmd_t d;

	memset(&d, 0, sizeof(d));
	d.reg_num = num;
	d.reg_flags = flags;
	d.reg_value = value;
	d.reg_short_reset = short_reset;
	d.reg_long_reset = long_reset;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
}

/* PMD0 of @ctx counts EV_A and notifies every @n events */
static void notify_every(struct t_env *t, u32 ctx, u64 n)
{
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmd_period(t, ctx, 0, 0, n, PFM_REGFL_OVFL_NOTIFY);
}

/*
 * PMD0 counts EV_A from -@n and notifies on overflow, reset to -@n (short)
 * or -2 * @n (long); PMD1 counts EV_B
 */
static void notify_a_count_b(struct t_env *t, u32 ctx, u64 n)
{
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	pmd_prog(t, ctx, 0, -n, -n, -2 * n, PFM_REGFL_OVFL_NOTIFY);
}

static u64 last_reset(struct t_env *t, u32 ctx, u16 num)
{
	pfarg_pmd_t d;

	memset(&d, 0, sizeof(d));
	d.reg_num = num;
	assert_int_equal(cb_read_pmds(&t->cb, ctx, &d, 1), 0);
	return d.reg_last_reset_val;
}

T_CTX_TEST(test_notify_msg_and_mask, 0)
{
	pfarg_msg_t m;
	u64 v0;

	notify_a_count_b(t, ctx, 100);
	t_go(t, ctx);
	t->sim->where[0].ip = 0x401234;

	sim_events(t->sim, 0, KEY_A, 99);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(t->sim->notifies, 0);
	sim_events(t->sim, 0, KEY_B, 5);
	sim_events(t->sim, 0, KEY_A, 1);

	assert_int_equal(t->sim->notifies, 1);
	assert_int_equal(t->sim->notify_log[0], ctx);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.type, PFM_MSG_OVFL);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_pmds[0], 1);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_pmds[1] |
			 m.pfm_ovfl_msg.msg_ovfl_pmds[4], 0);
	assert_int_equal(m.pfm_ovfl_msg.msg_active_set, 0);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_cpu, 0);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_tid, t->tid[0]);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_pid, t->tgid[0]);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_ip, 0x401234);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);

	/* masked: the whole context stops counting until restart */
	v0 = t_read(t, ctx, 0, 0);
	sim_events(t->sim, 0, KEY_A, 500);
	sim_events(t->sim, 0, KEY_B, 500);
	assert_int_equal(t_read(t, ctx, 0, 0), v0);
	assert_int_equal(t_read(t, ctx, 0, 1), 5);
	assert_int_equal(t->sim->notifies, 1);
	/* only pfm_restart unmasks: pfm_start is taken (perfmon2), no count */
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	sim_events(t->sim, 0, KEY_B, 7);
	assert_int_equal(t_read(t, ctx, 0, 1), 5);

	/* restart: long reset, counting again */
	assert_int_equal(cb_restart(&t->cb, ctx), 0);
	assert_int_equal(t_read(t, ctx, 0, 0), (u64)-200);
	assert_int_equal(last_reset(t, ctx, 0), (u64)-200);
	sim_events(t->sim, 0, KEY_B, 3);
	assert_int_equal(t_read(t, ctx, 0, 1), 8);
	sim_events(t->sim, 0, KEY_A, 199);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	sim_events(t->sim, 0, KEY_A, 1);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.type, PFM_MSG_OVFL);
	assert_int_equal(t->sim->notifies, 2);
}

/*
 * Sampling with no notification due yet: short reset at once, counting
 * goes on
 */
T_CTX_TEST(test_short_reset, 0)
{
	u32 s = t_smpl_ctx(t, 0, 16 * PVPFM_PAGE_SIZE);
	pfarg_msg_t m;

	(void)ctx;
	t_pmc(t, s, 0, 0, T_EVTSEL(EV_A));
	pmd_prog(t, s, 0, -100, -50, -70, 0);
	t_go(t, s);
	assert_int_equal(last_reset(t, s, 0), (u64)-100);
	sim_events(t->sim, 0, KEY_A, 100);
	assert_int_equal(t_read(t, s, 0, 0), (u64)-50);
	assert_int_equal(last_reset(t, s, 0), (u64)-50);
	sim_events(t->sim, 0, KEY_A, 49);
	assert_int_equal(t_read(t, s, 0, 0), (u64)-1);
	sim_events(t->sim, 0, KEY_A, 1);
	assert_int_equal(t_read(t, s, 0, 0), (u64)-50);
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(t_read(t, s, 0, 0), (u64)-40);
	assert_int_equal(t_stats(t).overflows, 2);
	assert_int_equal(cb_read_msg(&t->cb, s, &m), -EAGAIN);
	assert_int_equal(t->sim->notifies, 0);
	/* a period of 1 with short reset -1: every event overflows */
	pmd_prog(t, s, 0, -1, -1, -1, 0);
	sim_events(t->sim, 0, KEY_A, 1000);
	assert_int_equal(t_stats(t).overflows, 1002);
	assert_int_equal(t_read(t, s, 0, 0), (u64)-1);
}

/*
 * perfmon2 without a format: an overflow masks monitoring, notified or
 * not. With no PFM_REGFL_OVFL_NOTIFY the context saturates: no message,
 * no notification, the counts frozen, pfm_restart refused (nothing was
 * notified) until the context is unloaded.
 */
T_CTX_TEST(test_saturation, 0)
{
	pfarg_msg_t m;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	pmd_prog(t, ctx, 0, -100, -50, -70, 0);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_B, 3);
	sim_events(t->sim, 0, KEY_A, 100);
	assert_int_equal(t_stats(t).overflows, 1);
	assert_int_equal(t_read(t, ctx, 0, 0), 0);
	sim_events(t->sim, 0, KEY_A, 10);
	sim_events(t->sim, 0, KEY_B, 10);
	assert_int_equal(t_read(t, ctx, 0, 0), 0);
	assert_int_equal(t_read(t, ctx, 0, 1), 3);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(t->sim->notifies, 0);
	assert_int_equal(cb_restart(&t->cb, ctx), -EBUSY);
	/* loaded again, it counts from where it stopped */
	assert_int_equal(cb_unload(&t->cb, ctx), 0);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_B, 4);
	assert_int_equal(t_read(t, ctx, 0, 1), 7);
}

/* several PMDs overflowing at once: one message naming all of them */
T_CTX_TEST(test_simultaneous_one_msg, 0)
{
	pfarg_msg_t m;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 3, T_EVTSEL(EV_A));
	pmd_prog(t, ctx, 0, -100, -100, -100, PFM_REGFL_OVFL_NOTIFY);
	pmd_prog(t, ctx, 3, -100, -100, -100, PFM_REGFL_OVFL_NOTIFY);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 100);
	assert_int_equal(t->sim->overflow_calls, 1);
	assert_int_equal(t->sim->notifies, 1);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_pmds[0], 0x9);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(t_stats(t).overflows, 1);
}

/* reg_reset_pmds: the PMDs reset on this PMD's overflow */
static void reset_pmds_prog(struct t_env *t, u32 ctx, u32 flags)
{
	pfarg_pmd_t d;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	t_pmc(t, ctx, 0, 2, T_EVTSEL(EV_C));
	memset(&d, 0, sizeof(d));
	d.reg_num = 0;
	d.reg_flags = flags;
	d.reg_value = d.reg_short_reset = -100;
	d.reg_long_reset = -300;
	d.reg_reset_pmds[0] = 1ULL << 1;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	pmd_prog(t, ctx, 1, 0, 7, 9, 0);
	pmd_prog(t, ctx, 2, 0, 11, 13, 0);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_B, 50);
	sim_events(t->sim, 0, KEY_C, 50);
	sim_events(t->sim, 0, KEY_A, 100);
}

T_CTX_TEST(test_reset_pmds, 0)
{
	u32 s = t_smpl_ctx(t, 0, 16 * PVPFM_PAGE_SIZE);
	pfarg_msg_t m;

	/* sampling, the buffer not full: short resets at once */
	reset_pmds_prog(t, s, 0);
	assert_int_equal(t_read(t, s, 0, 1), 7);
	assert_int_equal(t_read(t, s, 0, 2), 50);	/* not in reset_pmds */
	assert_int_equal(t_read(t, s, 0, 0), (u64)-100);
	assert_int_equal(last_reset(t, s, 1), 7);
	sim_events(t->sim, 0, KEY_B, 3);
	assert_int_equal(t_read(t, s, 0, 1), 10);
	assert_int_equal(cb_destroy(&t->cb, s), 0);

	/* with a notification the resets wait for restart, then are long */
	reset_pmds_prog(t, ctx, PFM_REGFL_OVFL_NOTIFY);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(t_read(t, ctx, 0, 1), 50);
	assert_int_equal(cb_restart(&t->cb, ctx), 0);
	assert_int_equal(t_read(t, ctx, 0, 1), 9);
	assert_int_equal(t_read(t, ctx, 0, 0), (u64)-300);
	assert_int_equal(t_read(t, ctx, 0, 2), 50);
}

/*
 * The engine's own bitmaps are walked through the slot accessors: a PMD
 * the personality lacks (PFM_NO_SLOT) in a reset, overflow or read is
 * skipped, whatever let it in, and the others are handled as ever.
 */
T_CTX_TEST(test_unimplemented_pmds_skipped, 0)
{
	struct pfm_context *c;
	u64 bits[PFM_PMD_BV] = { 0 };
	struct pfm_where where = { 0 };

	pmd_prog(t, ctx, 1, 0, 7, 9, 0);
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	t_go(t, ctx);
	c = pfm_ctx_find(t->e, ctx);
	assert_non_null(c);
	bits[0] = 1ULL << 1 | 1ULL << 40;
	bits[3] = 1ULL << 63;			/* PMD 255 */
	bits[4] = 1ULL << 63;			/* PMD 319 */
	pfm_pmds_reset(t->e, c, c->active, bits, true);
	assert_int_equal(t_read(t, ctx, 0, 1), 9);
	assert_int_equal(pfm_pmd_read(t->e, c, c->active, 255), 0);
	pfm_pmd_write(t->e, c, c->active, 300, 5);
	/* a wrap of PMD 1's 32-bit counter carries; the others are skipped */
	pfm_engine_overflow(t->e, 0, bits, &where);
	assert_int_equal(t_read(t, ctx, 0, 1), 9 + (1ULL << 32));
}

/*
 * Overflows the host throttled away are never silent: a context that
 * counts or notifies, without a buffer's header to read them in, finds
 * them in its set's getinfo.
 */
T_CTX_TEST(test_throttled_overflows_reported, 0)
{
	u64 hw[PFM_PMD_BV] = { 1ULL << 1 };
	static u64 past[PFM_MAX_PMDS] = { [1] = 55 };
	struct pfm_where where = { .past = past };
	pfarg_setinfo_t info;

	pmd_prog(t, ctx, 1, -10, -10, -10, PFM_REGFL_OVFL_NOTIFY);
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_B, 5);
	/* the backend's next delivery: a wrap, 5 periods and 5 events late */
	assert_int_equal(pfm_engine_overflow(t->e, 0, hw, &where), 5);
	memset(&info, 0, sizeof(info));
	assert_int_equal(cb_getinfo_sets(&t->cb, ctx, &info, 1), 0);
	assert_int_equal(info.set_reserved3[PVPFM_SETINFO_OVFLS_LOST], 5);
}

/*
 * Host perf's limits reach the set active when the backend reports them,
 * not another set, and only while a context is in: one that is out has
 * no counter the host could have limited.
 */
T_CTX_TEST(test_host_limits_reported, 0)
{
	pfarg_setinfo_t info;

	t_set(t, ctx, 1, 0, 0);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	pfm_engine_host_limited(t->e, 0, 7, 7);
	t_go(t, ctx);
	pfm_engine_host_limited(t->e, 0, 3, 2);
	pfm_engine_host_limited(t->e, 0, 1, 0);
	/* a vCPU the engine does not have is ignored */
	pfm_engine_host_limited(t->e, 99, 1, 1);
	t_info(t, ctx, 0, &info);
	assert_int_equal(info.set_reserved3[PVPFM_SETINFO_HOST_THROTTLES], 4);
	assert_int_equal(info.set_reserved3[PVPFM_SETINFO_PERIODS_RAISED], 2);
	t_info(t, ctx, 1, &info);
	assert_int_equal(info.set_reserved3[PVPFM_SETINFO_HOST_THROTTLES], 0);
	assert_int_equal(info.set_reserved3[PVPFM_SETINFO_PERIODS_RAISED], 0);
}

/* perfmon2: restart with nothing notified (no sampling buffer): EBUSY */
T_CTX_TEST(test_restart_not_masked, 0)
{
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_go(t, ctx);
	assert_int_equal(cb_restart(&t->cb, ctx), -EBUSY);
	sim_events(t->sim, 0, KEY_A, 4);
	assert_int_equal(t_read(t, ctx, 0, 0), 4);
}

/*
 * Randomized periods: after each overflow the PMD restarts at its reset
 * value minus a pseudo-random number masked by reg_random_mask, i.e. the
 * period p becomes p + r, 0 <= r <= mask (perfmon2: counter values are
 * negative). Returns the periods seen after @n overflows.
 */
static void random_periods(u32 seed, u64 mask, u64 p, u64 *periods,
			   unsigned int n)
{
	struct t_env *t = t_env_new(NULL);
	u32 ctx = t_smpl_ctx(t, 0, 16 * PVPFM_PAGE_SIZE);
	pfarg_pmd_t d;
	u64 ovfl, lval, period = p;
	unsigned int i;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	memset(&d, 0, sizeof(d));
	d.reg_flags = PFM_REGFL_RANDOM;
	d.reg_value = d.reg_short_reset = d.reg_long_reset = -p;
	d.reg_random_mask = mask;
	d.reg_random_seed = seed;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	t_go(t, ctx);
	/* the first period is the programmed one */
	for (i = 0; i < n; i++) {
		ovfl = t_stats(t).overflows;
		sim_events(t->sim, 0, KEY_A, period - 1);
		assert_int_equal(t_stats(t).overflows, ovfl);
		sim_events(t->sim, 0, KEY_A, 1);
		assert_int_equal(t_stats(t).overflows, ovfl + 1);
		lval = last_reset(t, ctx, 0);
		assert_int_equal(t_read(t, ctx, 0, 0), lval);
		period = -lval;
		assert_true(period >= p && period <= p + mask);
		assert_int_equal((period - p) & ~mask, 0);
		periods[i] = period;
	}
	t_env_free(t);
}

static unsigned int distinct(const u64 *v, unsigned int n)
{
	unsigned int i, j, d = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i && v[j] != v[i]; j++)
			;
		d += j == i;
	}
	return d;
}

static void test_random_within_mask(void **state)
{
	u64 a[64], b[64], c[64], h[32];

	(void)state;
	random_periods(42, 0xff, 1000, a, 64);
	assert_true(distinct(a, 64) >= 16);
	/* deterministic for a seed */
	random_periods(42, 0xff, 1000, b, 64);
	assert_memory_equal(a, b, sizeof(a));
	/* another seed, another sequence */
	random_periods(4242, 0xff, 1000, c, 64);
	assert_memory_not_equal(a, c, sizeof(a));
	/* a mask with holes: only its bits vary */
	random_periods(7, 0xf0, 5000, h, 32);
	assert_true(distinct(h, 32) >= 4);
}

/* the long reset after a notification is randomized too */
T_CTX_TEST(test_random_long_reset, 0)
{
	u64 seen[16], lval;
	pfarg_pmd_t d;
	pfarg_msg_t m;
	unsigned int i;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	memset(&d, 0, sizeof(d));
	d.reg_flags = PFM_REGFL_RANDOM | PFM_REGFL_OVFL_NOTIFY;
	d.reg_value = -10;
	d.reg_short_reset = -10;
	d.reg_long_reset = -100000;
	d.reg_random_mask = 0x3ff;
	d.reg_random_seed = 99;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 10);
	for (i = 0; i < 16; i++) {
		assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
		assert_int_equal(cb_restart(&t->cb, ctx), 0);
		lval = last_reset(t, ctx, 0);
		assert_true(-lval >= 100000 && -lval <= 100000 + 0x3ff);
		seen[i] = lval;
		sim_events(t->sim, 0, KEY_A, -lval);
	}
	assert_true(distinct(seen, 16) >= 8);
}

/* the queue: FIFO, PFM_MSGQ_DEPTH deep; when full new ones are dropped */
T_CTX_TEST(test_msgq_fifo_depth, 0)
{
	pfarg_msg_t m[64];
	u32 i, n;

	notify_every(t, ctx, 10);
	t_go(t, ctx);
	for (i = 0; i < PFM_MSGQ_DEPTH + 8; i++) {
		t->sim->where[0].ip = 0x1000 + i;
		sim_events(t->sim, 0, KEY_A, 10);
		assert_int_equal(cb_restart(&t->cb, ctx), 0);
	}
	assert_int_equal(t_stats(t).messages, PFM_MSGQ_DEPTH);
	assert_int_equal(t_stats(t).messages_lost, 8);
	n = t_drain_msgs(t, ctx, m, 64);
	assert_int_equal(n, PFM_MSGQ_DEPTH);
	for (i = 0; i < n; i++) {
		assert_int_equal(m[i].type, PFM_MSG_OVFL);
		assert_int_equal(m[i].pfm_ovfl_msg.msg_ovfl_ip, 0x1000 + i);
	}
	/* room again */
	t->sim->where[0].ip = 0x2000;
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m[0]), 0);
	assert_int_equal(m[0].pfm_ovfl_msg.msg_ovfl_ip, 0x2000);
	assert_int_equal(t_stats(t).messages_lost, 8);
}

/* the state the guest asks for after an interrupt: flags, or -errno */
static int ctx_state(struct t_env *t, u32 ctx, u32 *flags)
{
	struct pvpfm_ctx_state st;
	int ret;

	memset(&st, 0xa5, sizeof(st));
	ret = cb_cmd(&t->cb, PVPFM_CMD_CTX_STATE, ctx, 0, &st, sizeof(st));
	if (!ret) {
		assert_int_equal(st.reserved, 0);
		*flags = st.flags;
	}
	return ret;
}

/*
 * PFM_FL_OVFL_NO_MSG: no message, but the guest is interrupted once per
 * notification (perfmon2 still sent SIGIO); masked until restart.
 */
T_CTX_TEST(test_no_msg_flag, PFM_FL_OVFL_NO_MSG)
{
	pfarg_msg_t m;
	u32 flags;

	notify_a_count_b(t, ctx, 10);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(t_stats(t).overflows, 1);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(t->sim->notifies, 1);
	assert_int_equal(t->sim->notify_log[0], ctx);
	assert_int_equal(ctx_state(t, ctx, &flags), 0);
	assert_int_equal(flags, PVPFM_CTX_MASKED);
	sim_events(t->sim, 0, KEY_B, 10);
	assert_int_equal(t_read(t, ctx, 0, 1), 0);
	/* masked: no further interrupt until restart */
	sim_events(t->sim, 0, KEY_A, 100);
	assert_int_equal(t->sim->notifies, 1);
	assert_int_equal(cb_restart(&t->cb, ctx), 0);
	assert_int_equal(t_read(t, ctx, 0, 0), (u64)-20);
	sim_events(t->sim, 0, KEY_B, 10);
	assert_int_equal(t_read(t, ctx, 0, 1), 10);
	/* the next notification interrupts again, still without a message */
	sim_events(t->sim, 0, KEY_A, 20);
	assert_int_equal(t->sim->notifies, 2);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(t_stats(t).messages, 0);
}

/* the monitored thread exited: PFM_MSG_END, after what was queued */
T_CTX_TEST(test_end_msg, 0)
{
	pfarg_msg_t m;

	notify_every(t, ctx, 10);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(cb_unload_flags(&t->cb, ctx, PVPFM_UNLOAD_TASK_EXIT),
			 0);
	assert_int_equal(t->sim->notifies, 2);
	assert_int_equal(t->sim->notify_log[1], ctx);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.type, PFM_MSG_OVFL);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.type, PFM_MSG_END);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	/* the context is unloaded; masked before, restart is EBUSY now */
	assert_int_equal(cb_start(&t->cb, ctx), -EINVAL);
	assert_int_equal(cb_restart(&t->cb, ctx), -EBUSY);
	assert_int_equal(t_stats(t).loaded, 0);
	assert_int_equal(t->sim->nr_open, 0);
}

T_CTX_TEST(test_plain_unload_no_end, 0)
{
	pfarg_msg_t m;

	t_load_self(t, ctx);
	assert_int_equal(cb_unload(&t->cb, ctx), 0);
	t_load_self(t, ctx);
	assert_int_equal(cb_unload_flags(&t->cb, ctx, 0), 0);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(t->sim->notifies, 0);
	/* unknown unload flags: refused, still loaded */
	t_load_self(t, ctx);
	assert_int_equal(cb_unload_flags(&t->cb, ctx, 0x2), -EINVAL);
	assert_int_equal(t_stats(t).loaded, 1);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
}

/* system-wide: the thread and CPU of the overflow, the active set */
T_CTX_TEST(test_msg_syswide_fields, PFM_FL_SYSTEM_WIDE)
{
	pfarg_msg_t m;

	t_set(t, ctx, 3, 0, 0);
	t_pmc(t, ctx, 3, 2, T_EVTSEL(EV_C));
	memset(&m, 0, sizeof(m));
	{
		pfarg_pmd_t d;

		memset(&d, 0, sizeof(d));
		d.reg_num = 2;
		d.reg_set = 3;
		d.reg_flags = PFM_REGFL_OVFL_NOTIFY;
		d.reg_value = d.reg_short_reset = d.reg_long_reset = -5;
		assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	}
	t->vcpu = 1;
	assert_int_equal(cb_load(&t->cb, ctx, 1, 3, 0, 0), 0);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	t->sim->where[1].ip = 0xffffffff81000000ULL;
	t->sim->where[1].tid = 77;
	t->sim->where[1].tgid = 70;
	sim_events(t->sim, 1, KEY_C, 5);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.type, PFM_MSG_OVFL);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_pmds[0], 1ULL << 2);
	assert_int_equal(m.pfm_ovfl_msg.msg_active_set, 3);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_cpu, 1);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_tid, 77);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_pid, 70);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_ip, 0xffffffff81000000ULL);
}

/* a read of an empty queue; a read with a malformed argument */
T_CTX_TEST(test_read_msg_empty, 0)
{
	pfarg_msg_t m;

	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(cb_read_msg(&t->cb, ctx + 1, &m), -EBADF);
}

/* interrupts for a vCPU where nothing is loaded change nothing */
T_CTX_TEST(test_stray_overflow, 0)
{
	u64 bv[PFM_PMD_BV] = { 0xf, 0, 0, 0, 0x3f };
	pfarg_msg_t m;

	notify_every(t, ctx, 10);
	t_go(t, ctx);
	sim_raise_overflow(t->sim, 1, bv);
	assert_int_equal(t_read(t, ctx, 0, 0), (u64)-10);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(t_stats(t).overflows, 0);
	/* a vCPU the engine does not have */
	pfm_engine_overflow(t->e, 1000, bv, &t->sim->where[0]);
	pfm_engine_timer(t->e, 1000);
	assert_int_equal(t_stats(t).overflows, 0);
}

/* loaded on another thread (as after an attach), switched in on vCPU 0 */
static void go_other(struct t_env *t, u32 ctx)
{
	t->vcpu = 0;
	assert_int_equal(cb_load(&t->cb, ctx, 4242, 0, 0, 4240), 0);
	assert_int_equal(cb_switch(&t->cb, 0, ctx, 4242, 4240), 0);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
}

/* perfmon2: "cannot load a blocking context on self" */
T_CTX_TEST(test_block_self_refused, PFM_FL_NOTIFY_BLOCK)
{
	t->vcpu = 0;
	assert_int_equal(cb_load(&t->cb, ctx, t->tid[0], 0, PVPFM_LOAD_SELF,
				 t->tgid[0]), -EINVAL);
	assert_int_equal(t_stats(t).loaded, 0);
	/* another thread: fine */
	assert_int_equal(cb_load(&t->cb, ctx, 4242, 0, 0, 4240), 0);
	assert_int_equal(t_stats(t).loaded, 1);
}

/* NOTIFY_BLOCK: blocked from the notification to restart, unload */
T_CTX_TEST(test_block_state, PFM_FL_NOTIFY_BLOCK)
{
	u32 other = t_ctx(t, 0);
	pfarg_msg_t m;
	u32 flags;

	notify_every(t, ctx, 10);
	/* unloaded, never notified: nothing */
	assert_int_equal(ctx_state(t, ctx, &flags), 0);
	assert_int_equal(flags, 0);
	go_other(t, ctx);
	sim_events(t->sim, 0, KEY_A, 9);
	assert_int_equal(ctx_state(t, ctx, &flags), 0);
	assert_int_equal(flags, 0);
	sim_events(t->sim, 0, KEY_A, 1);
	assert_int_equal(t->sim->notifies, 1);
	assert_int_equal(ctx_state(t, ctx, &flags), 0);
	assert_int_equal(flags, PVPFM_CTX_MASKED | PVPFM_CTX_BLOCKED);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.type, PFM_MSG_OVFL);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_tid, 4242);
	/* reading the message does not unblock; restart does */
	assert_int_equal(ctx_state(t, ctx, &flags), 0);
	assert_int_equal(flags, PVPFM_CTX_MASKED | PVPFM_CTX_BLOCKED);
	assert_int_equal(cb_restart(&t->cb, ctx), 0);
	assert_int_equal(ctx_state(t, ctx, &flags), 0);
	assert_int_equal(flags, 0);
	/* blocked again; unloading ends it too */
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(ctx_state(t, ctx, &flags), 0);
	assert_int_equal(flags, PVPFM_CTX_MASKED | PVPFM_CTX_BLOCKED);
	assert_int_equal(cb_unload(&t->cb, ctx), 0);
	assert_int_equal(ctx_state(t, ctx, &flags), 0);
	assert_int_equal(flags, 0);
	/* a context without NOTIFY_BLOCK is masked, never blocked */
	notify_every(t, other, 10);
	t_go(t, other);
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(ctx_state(t, other, &flags), 0);
	assert_int_equal(flags, PVPFM_CTX_MASKED);
	/* no such context; a malformed argument */
	assert_int_equal(ctx_state(t, other + ctx + 1, &flags), -EBADF);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_CTX_STATE, ctx, 0, &m, 4),
			 -EINVAL);
}

/* NOTIFY_BLOCK with OVFL_NO_MSG: no message, but the guest is interrupted */
T_CTX_TEST(test_block_no_msg, PFM_FL_NOTIFY_BLOCK | PFM_FL_OVFL_NO_MSG)
{
	pfarg_msg_t m;
	u32 flags;

	notify_every(t, ctx, 10);
	go_other(t, ctx);
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(t->sim->notifies, 1);
	assert_int_equal(t->sim->notify_log[0], ctx);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(ctx_state(t, ctx, &flags), 0);
	assert_int_equal(flags, PVPFM_CTX_MASKED | PVPFM_CTX_BLOCKED);
	/* masked: no further interrupt until restart */
	sim_events(t->sim, 0, KEY_A, 100);
	assert_int_equal(t->sim->notifies, 1);
	assert_int_equal(cb_restart(&t->cb, ctx), 0);
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(t->sim->notifies, 2);
}

/*
 * PVPFM_FL_NO_KERNEL_IP: the overflow message of a
 * kernel-mode sample shows IP 0; of a user-mode one, its IP.
 */
T_CTX_TEST(test_msg_no_kernel_ip, PVPFM_FL_NO_KERNEL_IP)
{
	struct pfm_where *w = &t->sim->where[0];
	pfarg_msg_t m;

	notify_every(t, ctx, 10);
	t_go(t, ctx);
	w->ip = 0xffffffff81001234ULL;
	w->kernel = true;
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.type, PFM_MSG_OVFL);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_ip, 0);
	assert_int_equal(cb_restart(&t->cb, ctx), 0);
	w->ip = 0x401234;
	w->kernel = false;
	sim_events(t->sim, 0, KEY_A, 10);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_ip, 0x401234);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T_TEST(test_notify_msg_and_mask),
		T_TEST(test_short_reset),
		T_TEST(test_saturation),
		T_TEST(test_simultaneous_one_msg),
		T_TEST(test_reset_pmds),
		T_TEST(test_unimplemented_pmds_skipped),
		T_TEST(test_throttled_overflows_reported),
		T_TEST(test_restart_not_masked),
		cmocka_unit_test(test_random_within_mask),
		T_TEST(test_random_long_reset),
		T_TEST(test_msgq_fifo_depth),
		T_TEST(test_no_msg_flag),
		T_TEST(test_end_msg),
		T_TEST(test_plain_unload_no_end),
		T_TEST(test_msg_syswide_fields),
		T_TEST(test_read_msg_empty),
		T_TEST(test_stray_overflow),
		T_TEST(test_host_limits_reported),
		T_TEST(test_block_self_refused),
		T_TEST(test_block_state),
		T_TEST(test_block_no_msg),
		T_TEST(test_msg_no_kernel_ip),
	};

	return cmocka_run_group_tests_name("overflows", tests, NULL, NULL);
}
