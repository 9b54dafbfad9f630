// SPDX-License-Identifier: GPL-2.0
/*
 * The default sampling format, byte for byte in guest memory: the header,
 * 40-byte entries followed by the smpl_pmds values in increasing index
 * order, contiguous entries for simultaneous overflows, never a partial
 * entry, buffer full -> notification and masking until restart, which
 * empties the buffer and applies the long reset; page registration.
 */
#include <stdlib.h>

#include "t_env.h"

#define HDR_SIZE	sizeof(pfm_dfl_smpl_hdr_t)
#define ENT_SIZE	sizeof(pfm_dfl_smpl_entry_t)
#define FILL		T_SMPL_FILL

static const pfm_dfl_smpl_hdr_t *hdr_of(struct t_env *t)
{
	return sim_guest_ptr(t->sim, T_SMPL_GPA, HDR_SIZE);
}

static const u8 *buf_of(struct t_env *t, u64 off, u64 len)
{
	return sim_guest_ptr(t->sim, T_SMPL_GPA + off, len);
}

static void check_hdr(struct t_env *t, u64 count, u64 cur, u64 ovfls,
		      u64 size)
{
	const pfm_dfl_smpl_hdr_t *h = hdr_of(t);
	pfm_dfl_smpl_hdr_t want;

	/* the minimum space: at least one entry */
	assert_true(h->hdr_min_buf_space >= ENT_SIZE);
	memset(&want, 0, sizeof(want));
	want.hdr_count = count;
	want.hdr_cur_offs = cur;
	want.hdr_overflows = ovfls;
	want.hdr_buf_size = size;
	want.hdr_min_buf_space = h->hdr_min_buf_space;
	want.hdr_version = PFM_DFL_SMPL_VERSION;
	want.hdr_buf_flags = 0;
	assert_memory_equal(h, &want, HDR_SIZE);
}

static bool untouched(struct t_env *t, u64 from, u64 to)
{
	const u8 *p = buf_of(t, from, to - from);
	u64 i;

	for (i = 0; i < to - from; i++)
		if (p[i] != FILL)
			return false;
	return true;
}

static void pmd_smpl(struct t_env *t, u32 ctx, u16 num, u64 period,
		     u64 long_period, u32 flags, const u16 *smpl, unsigned int n)
{
	pfarg_pmd_t d;
	unsigned int i;

	memset(&d, 0, sizeof(d));
	d.reg_num = num;
	d.reg_flags = flags;
	d.reg_value = d.reg_short_reset = -period;
	d.reg_long_reset = -long_period;
	d.reg_smpl_eventid = 0x55;
	for (i = 0; i < n; i++)
		d.reg_smpl_pmds[smpl[i] / 64] |= 1ULL << (smpl[i] % 64);
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
}

/*
 * PMDs 0 and 2 count EV_A and sample every 100 events, notifying when the
 * buffer is full; PMD 0's entries record PMD 1 (EV_B), PMD 2's the first
 * @n2 of @s2; PMD 3 counts EV_C
 */
static void two_samplers(struct t_env *t, u32 ctx, const u16 *s2,
			 unsigned int n2)
{
	const u16 s0[] = { 1 };

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 2, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	t_pmc(t, ctx, 0, 3, T_EVTSEL(EV_C));
	pmd_smpl(t, ctx, 0, 100, 100, PFM_REGFL_OVFL_NOTIFY, s0, 1);
	pmd_smpl(t, ctx, 2, 100, 100, PFM_REGFL_OVFL_NOTIFY, s2, n2);
}

/* PMD @num counts EV_A and takes a sample, with no other PMD, every 10 */
static void sample_a_every_10(struct t_env *t, u32 ctx, u16 num)
{
	t_pmc(t, ctx, 0, num, T_EVTSEL(EV_A));
	pmd_smpl(t, ctx, num, 10, 10, 0, NULL, 0);
}

/* one entry, byte for byte, as perfmon_dfl_smpl.h lays it out */
static void expect_entry(struct t_env *t, u64 off, u16 pmd, u64 lval, u64 ip,
			 u64 tstamp, u16 cpu, u16 set, const u64 *vals,
			 unsigned int n)
{
	u8 want[ENT_SIZE + 8 * 8];
	pfm_dfl_smpl_entry_t e;

	memset(&e, 0, sizeof(e));
	e.pid = t->tid[0];
	e.ovfl_pmd = pmd;
	e.last_reset_val = lval;
	e.ip = ip;
	e.tstamp = tstamp;
	e.cpu = cpu;
	e.set = set;
	e.tgid = t->tgid[0];
	memcpy(want, &e, ENT_SIZE);
	memcpy(want + ENT_SIZE, vals, n * 8);
	assert_memory_equal(buf_of(t, off, ENT_SIZE + n * 8), want,
			    ENT_SIZE + n * 8);
}

static void test_smpl_header_and_entries(void **state)
{
	struct t_env *t = T_ENV(state);
	const u16 smpl[] = { 257, 3, 1 };	/* recorded as 1, 3, 257 */
	u32 ctx = t_smpl_ctx(t, 0, 8192);
	u64 vals[3];
	pfarg_msg_t m;

	check_hdr(t, 0, HDR_SIZE, 0, 8192);
	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	t_pmc(t, ctx, 0, 3, T_EVTSEL(EV_C));
	pmd_smpl(t, ctx, 0, 1000, 1000, PFM_REGFL_OVFL_NOTIFY, smpl, 3);
	t_pmd(t, ctx, 0, 1, 0);
	t_pmd(t, ctx, 0, 3, 100);
	t_pmd(t, ctx, 0, PVPFM_VPMD_VM_EXITS, 0);
	t_go(t, ctx);
	t->sim->where[0].ip = 0x400abc;
	sim_run(t->sim, 5000);

	sim_events(t->sim, 0, KEY_B, 11);
	sim_events(t->sim, 0, KEY_C, 22);
	sim_events(t->sim, 0, SIM_EV_VIRTUAL(PVPFM_VPMD_VM_EXITS), 33);
	sim_events(t->sim, 0, KEY_A, 999);
	check_hdr(t, 0, HDR_SIZE, 0, 8192);
	assert_true(untouched(t, HDR_SIZE, 8192));
	sim_events(t->sim, 0, KEY_A, 1);

	vals[0] = 11;
	vals[1] = 122;
	vals[2] = 33;
	expect_entry(t, HDR_SIZE, 0, (u64)-1000, 0x400abc, 5000, 0, 0, vals, 3);
	check_hdr(t, 1, HDR_SIZE + ENT_SIZE + 24, 0, 8192);
	assert_true(untouched(t, HDR_SIZE + ENT_SIZE + 24, 8192));
	/* a sample is no notification */
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(t->sim->notifies, 0);
	/* short reset: sampling goes on */
	assert_int_equal(t_read(t, ctx, 0, 0), (u64)-1000);

	sim_run(t->sim, 1000);
	t->sim->where[0].ip = 0x400fff;
	sim_events(t->sim, 0, KEY_B, 1);
	sim_events(t->sim, 0, KEY_A, 1000);
	vals[0] = 12;
	expect_entry(t, HDR_SIZE + 64, 0, (u64)-1000, 0x400fff, 6000, 0, 0,
		     vals, 3);
	check_hdr(t, 2, HDR_SIZE + 2 * 64, 0, 8192);
	assert_true(untouched(t, HDR_SIZE + 2 * 64, 8192));
	assert_int_equal(t_stats(t).samples, 2);
	assert_int_equal(t->sim->notifies, 0);
}

/* an entry with no smpl_pmds is the 40-byte entry alone */
static void test_smpl_bare_entry(void **state)
{
	struct t_env *t = T_ENV(state);
	u32 ctx = t_smpl_ctx(t, 0, 4096);

	sample_a_every_10(t, ctx, 2);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 30);
	check_hdr(t, 3, HDR_SIZE + 3 * ENT_SIZE, 0, 4096);
	expect_entry(t, HDR_SIZE + 2 * ENT_SIZE, 2, (u64)-10, 0, 0, 0, 0,
		     NULL, 0);
	assert_true(untouched(t, HDR_SIZE + 3 * ENT_SIZE, 4096));
}

/*
 * An overflow the backend found late, its counter 75 events past the
 * wrap (pfm_where.past: the host throttled the VM, or perf the event):
 * whole periods of the PMD's short reset (10) are samples lost, counted
 * in the header's hdr_reserved[0] and the stats' samples_lost, the
 * overflow that carries them still sampled. The period is the reset's,
 * not the value written before (1 here): a PMD written close to its
 * wrap does not make every event past it a lost sample.
 */
static void test_smpl_throttled_lost(void **state)
{
	struct t_env *t = T_ENV(state);
	u32 ctx = t_smpl_ctx(t, 0, 4096);
	const pfm_dfl_smpl_hdr_t *h = hdr_of(t);
	static u64 past[PFM_MAX_PMDS];
	pfarg_pmd_t d;

	t_pmc(t, ctx, 0, 2, T_EVTSEL(EV_A));
	memset(&d, 0, sizeof(d));
	d.reg_num = 2;
	d.reg_value = -1ULL;
	d.reg_short_reset = d.reg_long_reset = -10ULL;
	assert_int_equal(cb_write_pmds(&t->cb, ctx, &d, 1), 0);
	t_go(t, ctx);
	past[2] = 75;
	t->sim->where[0].past = past;
	sim_events(t->sim, 0, KEY_A, 1);
	assert_int_equal(h->hdr_reserved[0], 7);
	assert_int_equal(h->hdr_count, 1);
	assert_int_equal(t_stats(t).samples_lost, 7);
	t->sim->where[0].past = NULL;
	sim_events(t->sim, 0, KEY_A, 20);
	assert_int_equal(h->hdr_reserved[0], 7);
	assert_int_equal(h->hdr_count, 3);
	assert_int_equal(t_stats(t).samples_lost, 7);
	assert_int_equal(t_stats(t).samples, 3);
}

/* walk the entries: returns the offset after @n of them */
static u64 walk(struct t_env *t, u64 off, unsigned int n, u16 *pmds)
{
	const pfm_dfl_smpl_entry_t *e;
	unsigned int i;

	for (i = 0; i < n; i++) {
		e = (const void *)buf_of(t, off, ENT_SIZE);
		pmds[i] = e->ovfl_pmd;
		/* PMD0 records PMD1; PMD2 records PMD1 and PMD3 */
		off += ENT_SIZE + (e->ovfl_pmd == 0 ? 8 : 16);
	}
	return off;
}

/* PMDs overflowing together: contiguous entries, one interrupt */
static void test_smpl_simultaneous(void **state)
{
	struct t_env *t = T_ENV(state);
	const u16 s2[] = { 1, 3 };
	u32 ctx = t_smpl_ctx(t, 0, 4096);
	const pfm_dfl_smpl_entry_t *e;
	u16 pmds[2];
	u64 end, off;

	two_samplers(t, ctx, s2, 2);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_B, 4);
	sim_events(t->sim, 0, KEY_C, 6);
	sim_events(t->sim, 0, KEY_A, 100);
	assert_int_equal(t->sim->overflow_calls, 1);
	end = walk(t, HDR_SIZE, 2, pmds);
	assert_int_equal(end, HDR_SIZE + 2 * ENT_SIZE + 24);
	check_hdr(t, 2, end, 0, 4096);
	assert_true(untouched(t, end, 4096));
	assert_true((pmds[0] == 0 && pmds[1] == 2) ||
		    (pmds[0] == 2 && pmds[1] == 0));
	/* both entries of the same interrupt and the same values */
	off = HDR_SIZE;
	while (off < end) {
		const u64 *v = (const void *)buf_of(t, off + ENT_SIZE, 8);

		e = (const void *)buf_of(t, off, ENT_SIZE);
		assert_int_equal(e->last_reset_val, (u64)-100);
		assert_int_equal(v[0], 4);
		if (e->ovfl_pmd == 2)
			assert_int_equal(v[1], 6);
		off += ENT_SIZE + (e->ovfl_pmd == 0 ? 8 : 16);
	}
	assert_int_equal(t->sim->notifies, 0);
}

/*
 * Simultaneous overflows when the first entry fills the buffer (leaves
 * less than hdr_min_buf_space): the second entry still goes in if it
 * fits, else it is counted lost; one buffer-full overflow, one message.
 * PMD0's entries record 1 PMD, PMD2's record 6.
 */
#define AT_FULL_E0	(ENT_SIZE + 8)
#define AT_FULL_E2	(ENT_SIZE + 6 * 8)

static void smpl_simultaneous_at_full(bool fits)
{
	const u16 s2[] = { 1, 3, 256, 257, 258, 259 };
	const pfm_dfl_smpl_hdr_t *h;
	struct t_opts o;
	struct t_env *t;
	const pfm_dfl_smpl_entry_t *e;
	u64 min, room, size, end;
	pfarg_msg_t m;
	u32 ctx;

	/* the largest entry, hdr_min_buf_space, from a first context */
	t_opts_default(&o);
	t = t_env_new(&o);
	t_smpl_ctx(t, 0, 4096);
	min = hdr_of(t)->hdr_min_buf_space;
	t_env_free(t);
	/* the buffer has room for PMD0's entry and then @room < min */
	room = fits ? (AT_FULL_E2 > min - AT_FULL_E0 ? AT_FULL_E2 :
		       min - AT_FULL_E0) : min - AT_FULL_E0;
	assert_true(room < min);
	assert_true(fits ? room >= AT_FULL_E2 : room < AT_FULL_E2);
	size = HDR_SIZE + AT_FULL_E0 + room;

	t = t_env_new(&o);
	ctx = t_smpl_ctx(t, 0, size);
	h = hdr_of(t);
	assert_int_equal(h->hdr_min_buf_space, min);
	two_samplers(t, ctx, s2, 6);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 100);
	assert_int_equal(t->sim->overflow_calls, 1);
	/* PMD0's entry, then PMD2's right after it (if it fit) */
	e = (const void *)buf_of(t, HDR_SIZE, ENT_SIZE);
	assert_int_equal(e->ovfl_pmd, 0);
	e = (const void *)buf_of(t, HDR_SIZE + AT_FULL_E0, ENT_SIZE);
	if (fits)
		assert_int_equal(e->ovfl_pmd, 2);
	end = HDR_SIZE + AT_FULL_E0 + (fits ? AT_FULL_E2 : 0);
	check_hdr(t, fits ? 2 : 1, end, 1, size);
	assert_int_equal(t_stats(t).samples_lost, fits ? 0 : 1);
	assert_true(untouched(t, end, size));
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.type, PFM_MSG_OVFL);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	t_env_free(t);
}

static void test_smpl_simultaneous_at_full(void **state)
{
	(void)state;
	smpl_simultaneous_at_full(true);
	smpl_simultaneous_at_full(false);
}

/*
 * perfmon2: a full buffer notifies only if the PMD asked for it. Without
 * PFM_REGFL_OVFL_NOTIFY the buffer saturates: monitoring is masked with
 * its samples kept, no message, no notification, no restart (pfmon's
 * "the buffer is what it holds at the end").
 */
static void test_smpl_full_saturates(void **state)
{
	struct t_env *t = T_ENV(state);
	const u16 s[] = { 1 };
	u32 ctx = t_smpl_ctx(t, 0, 4096);
	const pfm_dfl_smpl_hdr_t *h = hdr_of(t);
	pfarg_msg_t m;
	u64 count;

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	pmd_smpl(t, ctx, 0, 100, 500, 0, s, 1);
	t_go(t, ctx);
	sim_events(t->sim, 0, KEY_A, 100 * 4096);
	count = h->hdr_count;
	assert_true(count > 0 && count < 4096 / ENT_SIZE);
	assert_int_equal(h->hdr_overflows, 1);
	assert_int_equal(t_stats(t).samples, count);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
	assert_int_equal(t->sim->notifies, 0);
	assert_int_equal(cb_restart(&t->cb, ctx), -EBUSY);
	sim_events(t->sim, 0, KEY_A, 1000);
	assert_int_equal(h->hdr_count, count);
}

/*
 * Buffer full: the entry that leaves less than hdr_min_buf_space makes the
 * notification; no sample was lost, no entry is partial; monitoring is
 * masked until pfm_restart, which empties the buffer and applies the long
 * reset value.
 */
static void test_smpl_full_restart(void **state)
{
	struct t_env *t = T_ENV(state);
	const u16 s[] = { 1 };
	const u64 size = 4096, esz = ENT_SIZE + 8;
	u32 ctx = t_smpl_ctx(t, 0, size);
	const pfm_dfl_smpl_hdr_t *h = hdr_of(t);
	pfm_dfl_smpl_hdr_t snap;
	pfarg_msg_t m;
	u64 k, v0, cur = 0;
	u64 vals[1];

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	pmd_smpl(t, ctx, 0, 100, 500, PFM_REGFL_OVFL_NOTIFY, s, 1);
	t_go(t, ctx);
	for (k = 1; k <= size / ENT_SIZE; k++) {
		sim_events(t->sim, 0, KEY_A, 100);
		cur = HDR_SIZE + k * esz;
		assert_int_equal(h->hdr_count, k);
		assert_int_equal(h->hdr_cur_offs, cur);
		assert_true(cur <= size);
		if (size - cur < h->hdr_min_buf_space)
			break;
		/* not full yet: no notification */
		assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);
		assert_int_equal(h->hdr_overflows, 0);
	}
	assert_true(k <= size / ENT_SIZE);
	/* full: notified once, the previous entry still had room */
	assert_true(size - (cur - esz) >= h->hdr_min_buf_space);
	assert_int_equal(h->hdr_overflows, 1);
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), 0);
	assert_int_equal(m.type, PFM_MSG_OVFL);
	assert_int_equal(m.pfm_ovfl_msg.msg_ovfl_pmds[0], 1);
	assert_int_equal(t->sim->notifies, 1);
	assert_int_equal(t_stats(t).samples, k);
	assert_true(untouched(t, cur, size));

	/* masked: nothing more is recorded or counted */
	memcpy(&snap, h, sizeof(snap));
	v0 = t_read(t, ctx, 0, 1);
	sim_events(t->sim, 0, KEY_A, 100000);
	sim_events(t->sim, 0, KEY_B, 100);
	assert_memory_equal(h, &snap, sizeof(snap));
	assert_int_equal(t_read(t, ctx, 0, 1), v0);
	assert_true(untouched(t, cur, size));
	assert_int_equal(cb_read_msg(&t->cb, ctx, &m), -EAGAIN);

	/* restart: empty buffer, long reset */
	assert_int_equal(cb_restart(&t->cb, ctx), 0);
	check_hdr(t, 0, HDR_SIZE, 1, size);
	assert_int_equal(t_read(t, ctx, 0, 0), (u64)-500);
	sim_events(t->sim, 0, KEY_A, 499);
	check_hdr(t, 0, HDR_SIZE, 1, size);
	sim_events(t->sim, 0, KEY_B, 1);
	sim_events(t->sim, 0, KEY_A, 1);
	check_hdr(t, 1, HDR_SIZE + esz, 1, size);
	vals[0] = v0 + 1;
	expect_entry(t, HDR_SIZE, 0, (u64)-500, 0, 0, 0, 0, vals, 1);
	/* and then the short reset again */
	sim_events(t->sim, 0, KEY_A, 100);
	check_hdr(t, 2, HDR_SIZE + 2 * esz, 1, size);
}

/* the buffer in scattered guest pages, registered in several calls */
static void test_smpl_scattered_pages(void **state)
{
	struct t_env *t = T_ENV(state);
	const u16 s[] = { 1 };
	const u64 esz = ENT_SIZE + 8, size = 3 * PVPFM_PAGE_SIZE;
	const u64 gpa[3] = { t_smpl_page_gpa(2), t_smpl_page_gpa(0), t_smpl_page_gpa(5) };
	u8 *buf = calloc(1, size);
	pfm_dfl_smpl_entry_t e;
	unsigned int i;
	u64 v;
	int ctx;

	t_smpl_fill(t, 0, 8);
	ctx = t_create_smpl(t, 0, size);
	assert_true(ctx > 0);
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 1, 1, &gpa[1]), 0);
	/* not every page registered: no load */
	assert_true(cb_load(&t->cb, ctx, t->tid[0], 0, PVPFM_LOAD_SELF,
			    t->tgid[0]) < 0);
	assert_int_equal(t_stats(t).loaded, 0);
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 2, 1, &gpa[2]), 0);
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 0, 1, &gpa[0]), 0);
	assert_int_equal(t->sim->pinned, 3);

	t_pmc(t, ctx, 0, 0, T_EVTSEL(EV_A));
	t_pmc(t, ctx, 0, 1, T_EVTSEL(EV_B));
	pmd_smpl(t, ctx, 0, 10, 10, PFM_REGFL_OVFL_NOTIFY, s, 1);
	t_go(t, ctx);
	/* enough entries to cross the first page boundary */
	for (i = 0; i < 100; i++) {
		sim_events(t->sim, 0, KEY_B, 1);
		sim_events(t->sim, 0, KEY_A, 10);
	}
	for (i = 0; i < 3; i++)
		memcpy(buf + i * PVPFM_PAGE_SIZE,
		       sim_guest_ptr(t->sim, gpa[i], PVPFM_PAGE_SIZE),
		       PVPFM_PAGE_SIZE);
	assert_int_equal(((pfm_dfl_smpl_hdr_t *)buf)->hdr_count, 100);
	assert_int_equal(((pfm_dfl_smpl_hdr_t *)buf)->hdr_cur_offs,
			 HDR_SIZE + 100 * esz);
	for (i = 0; i < 100; i++) {
		memcpy(&e, buf + HDR_SIZE + i * esz, ENT_SIZE);
		memcpy(&v, buf + HDR_SIZE + i * esz + ENT_SIZE, 8);
		assert_int_equal(e.ovfl_pmd, 0);
		assert_int_equal(e.pid, t->tid[0]);
		assert_int_equal(e.tgid, t->tgid[0]);
		assert_int_equal(e.last_reset_val, (u64)-10);
		assert_int_equal(v, i + 1);
	}
	/* the pages in between were never written */
	assert_true(untouched(t, 1 * PVPFM_PAGE_SIZE, 2 * PVPFM_PAGE_SIZE));
	assert_true(untouched(t, 3 * PVPFM_PAGE_SIZE, 5 * PVPFM_PAGE_SIZE));
	free(buf);
}

static void test_smpl_register_errors(void **state)
{
	struct t_env *t = T_ENV(state);
	u32 plain = t_ctx(t, 0);
	u64 gpa[2] = { t_smpl_page_gpa(0), t_smpl_page_gpa(1) };
	u64 raw[3];
	struct pvpfm_smpl_register_arg *a = (void *)raw;
	int ctx;

	assert_int_equal(cb_smpl_register(&t->cb, plain, 0, 1, gpa), -EINVAL);
	ctx = t_create_smpl(t, 0, 2 * PVPFM_PAGE_SIZE);
	assert_true(ctx > 0);
	/* pages past the buffer */
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 2, 1, gpa), -EINVAL);
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 1, 2, gpa), -EINVAL);
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 0xffffffff, 2, gpa),
			 -EINVAL);
	/* not guest RAM, or not a page */
	gpa[0] = 0x1000;
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 0, 1, gpa), -EFAULT);
	gpa[0] = T_GUEST_BASE + T_GUEST_SIZE;
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 0, 1, gpa), -EFAULT);
	gpa[0] = t_smpl_page_gpa(0) + 8;
	assert_true(cb_smpl_register(&t->cb, ctx, 0, 1, gpa) < 0);
	assert_int_equal(t->sim->pinned, 0);
	/* nr_pages and arg_size disagree */
	a->first_page = 0;
	a->nr_pages = 2;
	raw[1] = t_smpl_page_gpa(0);
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_SMPL_REGISTER, ctx, 0, a, 16),
			 -EINVAL);
	assert_int_equal(t->sim->pinned, 0);
	/* registering a page again replaces it */
	gpa[0] = t_smpl_page_gpa(0);
	gpa[1] = t_smpl_page_gpa(1);
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 0, 2, gpa), 0);
	gpa[0] = t_smpl_page_gpa(3);
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 0, 1, gpa), 0);
	assert_int_equal(t->sim->pinned, 2);
	t_load_self(t, ctx);
	/* not while loaded */
	assert_int_equal(cb_smpl_register(&t->cb, ctx, 0, 1, gpa), -EBUSY);
	assert_int_equal(t->sim->pinned, 2);
	/* destroy releases the pages (teardown checks pinned == 0) */
	assert_int_equal(cb_destroy(&t->cb, ctx), 0);
	assert_int_equal(t->sim->pinned, 0);
}

static void test_smpl_create_checks(void **state)
{
	struct t_opts o;
	struct t_env *t;
	struct pvpfm_create_arg a;

	(void)state;
	t_opts_default(&o);
	o.limits.max_smpl_buf = 64 * 1024;
	t = t_env_new(&o);
	assert_true(t_create_smpl(t, 0, 64 * 1024) > 0);
	/* over the host's limit: ENOMEM, as perfmon2 over its buffer limit */
	assert_int_equal(t_create_smpl(t, 0, 64 * 1024 + 1), -ENOMEM);
	assert_int_equal(t_create_smpl(t, 0, ~0ULL), -ENOMEM);
	/* too small for the header and one entry */
	assert_int_equal(t_create_smpl(t, 0, 0), -EINVAL);
	assert_int_equal(t_create_smpl(t, 0, HDR_SIZE), -EINVAL);
	assert_int_equal(t_stats(t).contexts, 1);
	/* buf_flags must be 0 */
	memset(&a, 0, sizeof(a));
	strcpy(a.smpl_name, PFM_DFL_SMPL_NAME);
	a.smpl_arg.buf_size = 8192;
	a.smpl_arg.buf_flags = 1;
	assert_int_equal(cb_cmd(&t->cb, PVPFM_CMD_CREATE_CONTEXT, 0, 0, &a,
				sizeof(a)), -EINVAL);
	assert_int_equal(t_stats(t).contexts, 1);
	t_env_free(t);
}

/* a guest write that fails loses the sample, counted, nothing else */
static void test_smpl_guest_write_fails(void **state)
{
	struct t_env *t = T_ENV(state);
	u32 ctx = t_smpl_ctx(t, 0, 4096);

	sample_a_every_10(t, ctx, 0);
	t_go(t, ctx);
	t->sim->fail_guest_writes = true;
	sim_events(t->sim, 0, KEY_A, 10);
	t->sim->fail_guest_writes = false;
	assert_int_equal(t_stats(t).samples_lost, 1);
	sim_events(t->sim, 0, KEY_A, 10);
	check_hdr(t, 1, HDR_SIZE + ENT_SIZE, 0, 4096);
}

/*
 * PVPFM_FL_NO_KERNEL_IP: an entry of a sample taken
 * in guest kernel mode shows IP 0, one taken in user mode its IP; without
 * the flag, a kernel-mode sample keeps its IP.
 */
#define KERNEL_IP	0xffffffff81001234ULL

/* a context with @flags samples PMD 2 every 10 of EV_A; one sample at @ip */
static u32 kip_ctx(struct t_env *t, u32 flags, u64 ip, bool kernel)
{
	u32 ctx = t_smpl_ctx(t, flags, 4096);

	sample_a_every_10(t, ctx, 2);
	t_go(t, ctx);
	t->sim->where[0].ip = ip;
	t->sim->where[0].kernel = kernel;
	sim_events(t->sim, 0, KEY_A, 10);
	return ctx;
}

static void test_smpl_no_kernel_ip(void **state)
{
	struct t_env *t = T_ENV(state);
	u32 ctx = kip_ctx(t, PVPFM_FL_NO_KERNEL_IP, KERNEL_IP, true);

	t->sim->where[0].ip = 0x400abc;
	t->sim->where[0].kernel = false;
	sim_events(t->sim, 0, KEY_A, 10);
	expect_entry(t, HDR_SIZE, 2, (u64)-10, 0, 0, 0, 0, NULL, 0);
	expect_entry(t, HDR_SIZE + ENT_SIZE, 2, (u64)-10, 0x400abc, 0, 0, 0,
		     NULL, 0);
	assert_int_equal(cb_destroy(&t->cb, ctx), 0);

	kip_ctx(t, 0, KERNEL_IP, true);
	expect_entry(t, HDR_SIZE, 2, (u64)-10, KERNEL_IP, 0, 0, 0, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T_TEST(test_smpl_header_and_entries),
		T_TEST(test_smpl_bare_entry),
		T_TEST(test_smpl_throttled_lost),
		T_TEST(test_smpl_simultaneous),
		cmocka_unit_test(test_smpl_simultaneous_at_full),
		T_TEST(test_smpl_full_restart),
		T_TEST(test_smpl_full_saturates),
		T_TEST(test_smpl_scattered_pages),
		T_TEST(test_smpl_register_errors),
		cmocka_unit_test(test_smpl_create_checks),
		T_TEST(test_smpl_guest_write_fails),
		T_TEST(test_smpl_no_kernel_ip),
	};

	return cmocka_run_group_tests_name("sampling", tests, NULL, NULL);
}
