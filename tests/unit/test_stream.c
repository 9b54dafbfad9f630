// SPDX-License-Identifier: GPL-2.0
/*
 * The migration stream: a VM's perfmon2 state saved from one
 * engine and restored into another goes on as if nothing happened, bar
 * the time in between, which is not active time; a stream the
 * destination cannot honour, or a damaged one, is refused, leaving the
 * destination as created and nothing leaked.
 */
#include <stdlib.h>

#include "t_env.h"
#include "kvm/engine/pfm_stream.h"

#define US		1000ULL
#define HDR_SIZE	sizeof(pfm_dfl_smpl_hdr_t)

struct stream {
	u64 *buf;		/* 8-byte aligned, as the engine reads it */
	size_t len;
};

static struct stream save(struct t_env *t)
{
	struct stream s;
	long n = pfm_engine_save(t->e, NULL, 0);

	assert_true(n > 0);
	/* what an importer bounds its copy by holds every stream saved */
	assert_true((size_t)n <= pfm_engine_stream_max(t->e));
	s.len = n;
	s.buf = calloc(1, s.len + 8);
	assert_non_null(s.buf);
	assert_int_equal(pfm_engine_save(t->e, s.buf, s.len - 1), -ENOSPC);
	assert_int_equal(pfm_engine_save(t->e, s.buf, s.len), (long)s.len);
	return s;
}

static int restore(struct t_env *t, const struct stream *s,
		   struct pfm_stream_error *err)
{
	return pfm_engine_restore(t->e, s->buf, s->len, err);
}

/* PMC @pmc counts @ev in @set, its PMD starting at @v */
static void count(struct t_env *t, u32 ctx, u16 set, u16 pmc, u32 ev, u64 v)
{
	t_pmc(t, ctx, set, pmc, T_EVTSEL(ev));
	t_pmd(t, ctx, set, pmc, v);
}

/*
 * A per-thread context on vCPU 0 counting EV_A in set 0 and EV_B in set
 * 1, time-switched every 1 ms, started; 300 us of active time.
 */
static u32 multiplexed(struct t_env *t)
{
	u32 ctx = t_ctx(t, 0);

	t_set(t, ctx, 0, PFM_SETFL_TIME_SWITCH, 1000 * US);
	t_set(t, ctx, 1, PFM_SETFL_TIME_SWITCH, 1000 * US);
	count(t, ctx, 0, 0, EV_A, 5);
	count(t, ctx, 1, 1, EV_B, 7);
	t->vcpu = 0;
	t_load_self(t, ctx);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	sim_events(t->sim, 0, KEY_A, 100);
	sim_run(t->sim, 300 * US);
	return ctx;
}

static void test_stream_counting_resumes(void **state)
{
	struct t_env *a = T_ENV(state), *b = t_env_new(NULL);
	u32 ctx = multiplexed(a);
	struct pfm_stream_error err;
	pfarg_setinfo_t info;
	struct stream s = save(a);

	/* the VM paused 5 ms: not active time */
	sim_run(b->sim, 5000 * US);
	assert_int_equal(restore(b, &s, &err), 0);
	assert_int_equal(err.reason, PFM_STREAM_OK);
	assert_int_equal(t_stats(b).contexts, 1);
	assert_int_equal(t_stats(b).loaded, 1);
	assert_int_equal(t_stats(b).active_counters, 1);
	b->vcpu = 0;
	assert_int_equal(t_read(b, ctx, 0, 0), 105);
	assert_int_equal(t_read(b, ctx, 1, 1), 7);
	sim_events(b->sim, 0, KEY_A, 10);
	assert_int_equal(t_read(b, ctx, 0, 0), 115);
	t_info(b, ctx, 0, &info);
	assert_int_equal(info.set_act_duration, 300 * US);
	assert_int_equal(info.set_runs, 1);

	/* 700 us of the 1 ms timeout were left: the switch comes then */
	sim_run(b->sim, 699 * US);
	assert_int_equal(t_runs(b, ctx, 1), 0);
	sim_run(b->sim, 2 * US);
	assert_int_equal(t_runs(b, ctx, 1), 1);
	sim_events(b->sim, 0, KEY_B, 3);
	assert_int_equal(t_read(b, ctx, 1, 1), 10);
	assert_int_equal(t_read(b, ctx, 0, 0), 115);
	/* the new ids go on after the old ones */
	assert_true(t_ctx(b, 0) > ctx);
	free(s.buf);
	t_env_free(b);
}

/*
 * A per-thread context on vCPU 1 whose PMD 0 notified its overflow of
 * EV_B: masked, PMD 0's long reset pending
 */
static u32 masked(struct t_env *t)
{
	u32 ctx;

	t->vcpu = 1;
	ctx = t_ctx(t, 0);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_B));
	t_pmd_period(t, ctx, 0, 0, 10, PFM_REGFL_OVFL_NOTIFY);
	t_load_self(t, ctx);
	assert_int_equal(cb_start(&t->cb, ctx), 0);
	sim_events(t->sim, 1, KEY_B, 10);
	return ctx;
}

/* a sampling context half-way through its buffer, and a masked one */
static void test_stream_sampling_and_messages(void **state)
{
	struct t_env *a = T_ENV(state), *b = t_env_new(NULL);
	const pfm_dfl_smpl_hdr_t *hdr;
	u64 gpa[2] = { T_SMPL_GPA, T_SMPL_GPA + PVPFM_PAGE_SIZE };
	pfarg_msg_t m;
	struct stream s;
	int smpl, note;

	a->vcpu = 0;
	smpl = t_create_smpl(a, 0, 8192);
	assert_true(smpl > 0);
	assert_int_equal(cb_smpl_register(&a->cb, smpl, 0, 2, gpa), 0);
	t_pmc(a, smpl, 0, 0, T_EVTSEL(EV_A));
	t_pmd_period(a, smpl, 0, 0, 100, 0);
	t_load_self(a, smpl);
	assert_int_equal(cb_start(&a->cb, smpl), 0);
	sim_events(a->sim, 0, KEY_A, 200);

	note = masked(a);

	s = save(a);
	assert_int_equal(restore(b, &s, NULL), 0);
	assert_int_equal(t_stats(b).contexts, 2);
	/* the masked context's message and state came along */
	b->vcpu = 1;
	assert_int_equal(cb_read_msg(&b->cb, note, &m), 0);
	assert_int_equal(m.type, PFM_MSG_OVFL);
	assert_int_equal(cb_read_msg(&b->cb, note, &m), -EAGAIN);
	assert_int_equal(cb_restart(&b->cb, note), 0);
	assert_int_equal(cb_restart(&b->cb, note), -EBUSY);
	/* the buffer goes on where it was: the third entry */
	b->vcpu = 0;
	sim_events(b->sim, 0, KEY_A, 100);
	hdr = sim_guest_ptr(b->sim, T_SMPL_GPA, HDR_SIZE);
	assert_int_equal(hdr->hdr_count, 3);
	assert_int_equal(hdr->hdr_cur_offs,
			 HDR_SIZE + 3 * sizeof(pfm_dfl_smpl_entry_t));
	assert_int_equal(b->sim->pinned, 2);
	free(s.buf);
	t_env_free(b);
}

static void expect_refused(struct t_env *b, const struct stream *s, int want,
			   enum pfm_stream_reason why)
{
	struct pfm_stream_error err;

	assert_int_equal(restore(b, s, &err), want);
	assert_int_equal(err.reason, why);
	assert_int_equal(t_stats(b).contexts, 0);
	assert_int_equal(b->sim->nr_open, 0);
	assert_int_equal(b->sim->pinned, 0);
}

static void test_stream_refusals(void **state)
{
	struct t_env *a = T_ENV(state), *b;
	struct pfm_stream_error err;
	struct t_opts o;
	u32 ctx;
	struct stream s;

	ctx = multiplexed(a);
	t_ctx(a, 0);
	s = save(a);

	/* another personality */
	t_opts_default(&o);
	o.personality = PVPFM_PERS_INTEL_ARCH;
	b = t_env_new(&o);
	expect_refused(b, &s, -EINVAL, PFM_STREAM_MISMATCH);
	t_env_free(b);
	/* fewer contexts allowed than the source had */
	t_opts_default(&o);
	o.limits.max_contexts = 1;
	b = t_env_new(&o);
	expect_refused(b, &s, -E2BIG, PFM_STREAM_LIMIT);
	t_env_free(b);
	/* an event this host cannot count: which one is said */
	b = t_env_new(NULL);
	sim_refuse(b->sim, KEY_B);
	assert_int_equal(restore(b, &s, &err), -ENOENT);
	assert_int_equal(err.reason, PFM_STREAM_EVENT);
	assert_int_equal(err.ctx_id, ctx);
	assert_int_equal(err.set, 1);
	assert_int_equal(err.pmd, 1);
	assert_int_equal(t_stats(b).contexts, 0);
	t_env_free(b);
	/* a VM that has contexts already */
	b = t_env_new(NULL);
	t_ctx(b, 0);
	assert_int_equal(restore(b, &s, &err), -EBUSY);
	assert_int_equal(err.reason, PFM_STREAM_NOT_EMPTY);
	t_env_free(b);
	/* a newer format */
	b = t_env_new(NULL);
	((u32 *)s.buf)[2]++;
	expect_refused(b, &s, -EPROTO, PFM_STREAM_VERSION);
	((u32 *)s.buf)[2]--;
	/* a record read at an odd address */
	assert_int_equal(pfm_engine_restore(b->e, (char *)s.buf + 1,
					    s.len - 1, NULL), -EINVAL);
	/* and the same engine takes the good stream after all that */
	assert_int_equal(restore(b, &s, NULL), 0);
	free(s.buf);
	t_env_free(b);
}

/* source -> destination -> source again */
static void test_stream_ping_pong(void **state)
{
	struct t_env *a = T_ENV(state), *b = t_env_new(NULL), *c;
	u32 ctx = multiplexed(a);
	struct stream s1, s2;

	s1 = save(a);
	assert_int_equal(restore(b, &s1, NULL), 0);
	b->vcpu = 0;
	sim_events(b->sim, 0, KEY_A, 1);
	s2 = save(b);
	c = t_env_new(NULL);
	assert_int_equal(restore(c, &s2, NULL), 0);
	c->vcpu = 0;
	assert_int_equal(t_read(c, ctx, 0, 0), 106);
	free(s1.buf);
	free(s2.buf);
	t_env_free(b);
	t_env_free(c);
}

/*
 * Every truncation and every byte flipped: refused or taken, never a
 * crash, a leak (t_env_free checks) or an engine left half restored.
 */
static void test_stream_damage(void **state)
{
	struct t_env *a = T_ENV(state), *b = t_env_new(NULL);
	struct stream s, d;
	size_t i;
	int ret;

	multiplexed(a);
	a->vcpu = 1;
	t_ctx(a, PFM_FL_OVFL_NO_MSG);
	s = save(a);
	d.buf = calloc(1, s.len + 8);
	assert_non_null(d.buf);
	for (d.len = 0; d.len < s.len; d.len += 8) {
		memcpy(d.buf, s.buf, d.len);
		assert_true(restore(b, &d, NULL) < 0);
		assert_int_equal(t_stats(b).contexts, 0);
	}
	for (i = 0; i < s.len; i++) {
		memcpy(d.buf, s.buf, s.len);
		d.len = s.len;
		((u8 *)d.buf)[i] ^= 0xff;
		ret = restore(b, &d, NULL);
		if (ret) {
			assert_int_equal(t_stats(b).contexts, 0);
			continue;
		}
		/* a flip the format cannot tell (a value): start again */
		t_env_free(b);
		b = t_env_new(NULL);
	}
	free(d.buf);
	free(s.buf);
	t_env_free(b);
}

/* the payload of the @nth record of @type in @s (0: the first) */
static void *record(const struct stream *s, u16 type, int nth)
{
	size_t off = sizeof(struct pfm_stream_hdr);
	struct pfm_stream_rec *r;

	while (off + sizeof(*r) <= s->len) {
		r = (struct pfm_stream_rec *)((u8 *)s->buf + off);
		if (r->type == type && nth-- == 0)
			return r + 1;
		off += sizeof(*r) + r->size;
	}
	fail_msg("no record %u in the stream", type);
	return NULL;
}

/*
 * A masked context's pending long resets name PMDs of its reset set: a
 * stream that names others (one the personality lacks: the reset would
 * index PFM_NO_SLOT, 0xffff entries past the set; one the set does not
 * use) is refused, and what was taken came through RESTART unharmed.
 */
static void test_stream_reset_pending(void **state)
{
	static const u16 forged[] = { 200, 2, 257 };
	struct t_env *a = T_ENV(state), *b = t_env_new(NULL);
	struct pfm_stream_error err;
	struct pfm_stream_ctx *c;
	struct stream s;
	size_t i;
	u32 note;

	note = masked(a);
	s = save(a);
	c = record(&s, PFM_STREAM_REC_CTX, 0);
	assert_int_equal(c->reset_pending[0], 1);
	for (i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		c->reset_pending[forged[i] / 64] |= 1ULL << (forged[i] % 64);
		assert_int_equal(restore(b, &s, &err), -EINVAL);
		assert_int_equal(err.reason, PFM_STREAM_MALFORMED);
		assert_int_equal(err.ctx_id, note);
		assert_int_equal(t_stats(b).contexts, 0);
		c->reset_pending[forged[i] / 64] &= ~(1ULL << (forged[i] % 64));
	}
	/* without a reset set, pending bits mean nothing: not taken */
	c->has_reset = 0;
	c->reset_pending[0] |= 1ULL << 3;
	c->state = PFM_CTX_LOADED;
	assert_int_equal(restore(b, &s, NULL), 0);
	b->vcpu = 1;
	assert_int_equal(cb_restart(&b->cb, note), -EBUSY);
	t_env_free(b);
	b = t_env_new(NULL);
	c->has_reset = 1;
	c->reset_pending[0] = 1;
	c->state = PFM_CTX_MASKED;
	assert_int_equal(restore(b, &s, NULL), 0);
	b->vcpu = 1;
	assert_int_equal(cb_restart(&b->cb, note), 0);
	assert_int_equal(t_read(b, note, 0, 0), -10ULL);
	free(s.buf);
	t_env_free(b);
}

/*
 * A context masked without notification (saturated) or with a set switch
 * waiting for its restart keeps that across a migration
 */
static void test_stream_saturated_and_switch_pending(void **state)
{
	struct t_env *a = T_ENV(state), *b = t_env_new(NULL);
	struct pfm_stream_error err;
	struct pfm_stream_ctx *c;
	struct stream s;
	pfarg_pmd_t d;
	u32 sat, sw;

	a->vcpu = 0;
	sat = t_ctx(a, 0);
	t_pmc(a, sat, 0, 0, T_EVTSEL(EV_A));
	t_pmd_period(a, sat, 0, 0, 10, 0);
	t_load_self(a, sat);
	assert_int_equal(cb_start(&a->cb, sat), 0);
	sim_events(a->sim, 0, KEY_A, 10);
	a->vcpu = 1;
	sw = t_ctx(a, 0);
	t_set(a, sw, 0, PFM_SETFL_OVFL_SWITCH, 0);
	t_set(a, sw, 1, 0, 0);
	t_pmc(a, sw, 0, 0, T_EVTSEL(EV_B));
	cb_pmd_init(&d, 0, 0, -10);
	d.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	d.reg_ovfl_switch_cnt = 1;
	assert_int_equal(cb_write_pmds(&a->cb, sw, &d, 1), 0);
	t_load_self(a, sw);
	assert_int_equal(cb_start(&a->cb, sw), 0);
	sim_events(a->sim, 1, KEY_B, 10);
	s = save(a);
	c = record(&s, PFM_STREAM_REC_CTX, 0);
	assert_int_equal(c->saturated, 1);
	assert_int_equal(c->switch_pending, 0);
	c = record(&s, PFM_STREAM_REC_CTX, 1);
	assert_int_equal(c->saturated, 0);
	assert_int_equal(c->switch_pending, 1);
	/* a context not masked cannot be either */
	c->state = PFM_CTX_LOADED;
	assert_int_equal(restore(b, &s, &err), -EINVAL);
	assert_int_equal(err.reason, PFM_STREAM_MALFORMED);
	c->state = PFM_CTX_MASKED;
	assert_int_equal(restore(b, &s, NULL), 0);
	b->vcpu = 0;
	assert_int_equal(cb_restart(&b->cb, sat), -EBUSY);
	b->vcpu = 1;
	assert_int_equal(cb_restart(&b->cb, sw), 0);
	assert_int_equal(t_runs(b, sw, 1), 1);
	free(s.buf);
	t_env_free(b);
}

/*
 * A set's timeout from a stream keeps this host's timer floor: one not a
 * multiple of the granularity (1 us here), as a 1 ns one, is refused.
 */
static void test_stream_timeout_floor(void **state)
{
	struct t_env *a = T_ENV(state), *b = t_env_new(NULL);
	struct pfm_stream_error err;
	struct pfm_stream_set *set;
	u32 ctx = multiplexed(a);
	struct stream s = save(a);
	int i;

	for (i = 0; i < 2; i++) {
		set = record(&s, PFM_STREAM_REC_SET, i);
		set->timeout = 1;
		set->timeout_left = 1;
	}
	assert_int_equal(restore(b, &s, &err), -EINVAL);
	assert_int_equal(err.reason, PFM_STREAM_MALFORMED);
	assert_int_equal(err.ctx_id, ctx);
	assert_int_equal(t_stats(b).contexts, 0);
	free(s.buf);
	t_env_free(b);
}

/*
 * pfm_engine_stream_max() bounds what an importer copies: a VM that uses
 * every context slot, every set and the largest sampling buffer saves no
 * more. Prints the bound for the module's default limits and for its
 * ceilings (kvm/kvmpfm_main.c), the stream's size for a maximal VM.
 */
static void test_stream_bound(void **state)
{
	struct t_opts o;
	struct t_env *t;
	struct stream s;
	u32 c, i;
	u16 set;

	(void)state;
	t_opts_default(&o);
	o.limits.max_contexts = 3;
	o.limits.max_sets = 4;
	o.limits.max_smpl_buf = 3 * PVPFM_PAGE_SIZE;
	t = t_env_new(&o);
	for (i = 0; i < o.limits.max_contexts; i++) {
		c = t_create_smpl(t, 0, o.limits.max_smpl_buf);
		assert_true((int)c > 0);
		for (set = 1; set < o.limits.max_sets; set++)
			t_set(t, c, set, 0, 0);
	}
	s = save(t);
	print_message("maximal VM at 3 contexts, 4 sets, 3 pages: %zu bytes, "
		      "bound %zu\n", s.len, pfm_engine_stream_max(t->e));
	free(s.buf);
	t_env_free(t);

	t_opts_default(&o);
	o.limits.max_contexts = PFM_DFL_MAX_CONTEXTS;
	o.limits.max_sets = PFM_DFL_MAX_SETS;
	o.limits.max_smpl_buf = PFM_DFL_MAX_SMPL_BUF;
	t = t_env_new(&o);
	print_message("bound, default limits (64 contexts, 32 sets, 4 MiB): "
		      "%zu bytes\n", pfm_engine_stream_max(t->e));
	t_env_free(t);
	o.limits.max_contexts = 1024;
	o.limits.max_sets = 64;
	o.limits.max_smpl_buf = 64ULL << 20;
	t = t_env_new(&o);
	print_message("bound, module ceilings (1024 contexts, 64 sets, 64 MiB): "
		      "%zu bytes\n", pfm_engine_stream_max(t->e));
	t_env_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T_TEST(test_stream_counting_resumes),
		T_TEST(test_stream_reset_pending),
		T_TEST(test_stream_timeout_floor),
		T_TEST(test_stream_saturated_and_switch_pending),
		T_TEST(test_stream_sampling_and_messages),
		T_TEST(test_stream_refusals),
		T_TEST(test_stream_ping_pong),
		T_TEST(test_stream_damage),
		T_TEST(test_stream_bound),
	};

	return cmocka_run_group_tests_name("stream", tests, NULL, NULL);
}
