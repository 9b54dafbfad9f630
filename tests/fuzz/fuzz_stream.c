// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: arbitrary bytes as a migration stream into
 * pfm_engine_restore(), the stream being a file an attacker may
 * forge. Seeds: streams fuzz_cmd saved from the states its corpus reaches
 * (make corpus).
 *
 * Every context an accepted stream brings in then takes every call a
 * guest can make on it (drive_ctx): what the reader lets through is what
 * those calls index with, and RESTART, READ_PMDS, SWITCH and the rest
 * must be as safe on a restored context as on one the guest built.
 *
 * Findings: any sanitizer report, and abort() on a broken invariant: a
 * refused stream leaves the engine empty (no context, counter or pinned
 * page); an accepted one runs, saves again and restores again (what was
 * taken in can move on); nothing left behind after destroy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/cmdblock.h"
#include "tests/sim/pfm_sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the hosts fuzz_cmd's streams come from (its engine and sim settings) */
#define GUEST_BASE	0x100000ULL
#define GUEST_PAGES	16

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_stream: %s\n", what);
	abort();
}

static struct pfm_engine *engine(struct sim **s, u32 personality, u32 vcpus)
{
	struct sim_cfg sc = {
		.nr_vcpus = vcpus, .counter_width = 16,
		.guest_base = GUEST_BASE,
		.guest_size = GUEST_PAGES * PVPFM_PAGE_SIZE,
	};
	struct pfm_engine_cfg cfg = {
		.personality = personality,
		.gp_counters = 4, .fixed_counters = 3, .arch_version = 3,
		.timer_granularity_ns = 1000,
		.limits = { .max_contexts = 4, .max_sets = 4, .max_vector = 8,
			    .max_smpl_buf = 4 * PVPFM_PAGE_SIZE },
	};
	struct pfm_engine *e;

	*s = sim_create(&sc);
	if (!*s)
		fail("sim_create");
	(*s)->budget = 20000;
	sim_refuse(*s, SIM_EV_GENERIC(0xff));
	if (sim_engine_create(*s, &cfg, &e))
		fail("pfm_engine_create");
	return e;
}

static void done(struct sim *s, struct pfm_engine *e)
{
	pfm_engine_destroy(e);
	if (sim_leaks(s) || sim_violations(s))
		fail("the engine left something behind or misbehaved");
	sim_destroy(s);
}

/* the guest's calls, delivered as DOORBELL does, from one vCPU and thread */
struct guest {
	struct cb_caller cb;
	struct pfm_engine *e;
	u32 vcpu, tid, tgid;
	u64 block[PVPFM_CMD_BLOCK_SIZE / 8];
};

static int deliver(struct cb_caller *c, struct cb_cmd *cmd)
{
	struct guest *g = CB_CONTAINER(c, struct guest, cb);
	u32 len;
	int ret;

	memset(g->block, 0, sizeof(g->block));
	len = cb_fill(g->block, cmd, g->tid, g->tgid);
	if (!len)
		fail("a call the harness makes does not fit a block");
	ret = pfm_engine_exec(g->e, g->vcpu, g->block, len);
	if (ret < 0)
		fail("exec refused a well-formed block");
	return cb_unfill(g->block, c, cmd);
}

#define MAX_CTXS	4	/* engine()'s max_contexts */

struct ctx_list {
	struct pfm_ctx_view c[MAX_CTXS];
	u32 n;
};

static void list_ctx(void *arg, const struct pfm_ctx_view *c)
{
	struct ctx_list *l = arg;

	if (l->n >= MAX_CTXS)
		fail("more contexts than the limit");
	l->c[l->n++] = *c;
}

static void skip_counter(void *arg, const struct pfm_ctx_view *c, u16 set,
			 const struct pfm_counter *ctr)
{
	(void)arg, (void)c, (void)set, (void)ctr;
}

static const struct pfm_view_ops list_ops = {
	.context = list_ctx, .counter = skip_counter,
};

/* every PMD number either personality has, and some it does not */
static const u16 pmd_nums[] = { 0, 1, 2, 3, 4, 16, 17, 18, 19, 255,
				256, 257, 258, 259, 260, 261, 262 };
static const u32 event_keys[] = {
	SIM_EV_GENERIC(0x76), SIM_EV_GENERIC(0xc0), SIM_EV_FIXED(0),
	SIM_EV_FIXED(1), SIM_EV_VIRTUAL(PVPFM_VPMD_VM_EXITS),
};

static void events(struct sim *s, u32 vcpu)
{
	size_t i;

	for (i = 0; i < sizeof(event_keys) / sizeof(event_keys[0]); i++)
		sim_events(s, vcpu, event_keys[i], 70000);
	sim_run(s, 3000);
}

static void read_everything(struct guest *g, const struct pfm_ctx_view *c)
{
	pfarg_setinfo_t info[3];
	pfarg_msg_t msg;
	uint64_t v;
	size_t i;
	int n;

	for (i = 0; i < sizeof(pmd_nums) / sizeof(pmd_nums[0]); i++) {
		cb_read_pmd(&g->cb, c->id, c->active_set, pmd_nums[i], &v);
		cb_read_pmd(&g->cb, c->id, 0, pmd_nums[i], &v);
	}
	memset(info, 0, sizeof(info));
	info[0].set_id = 0;
	info[1].set_id = c->active_set;
	info[2].set_id = 1;
	cb_getinfo_sets(&g->cb, c->id, info, 3);
	for (n = 0; n < 40 && !cb_read_msg(&g->cb, c->id, &msg); n++)
		;
}

/*
 * The calls of a guest that owns @c, in the order a program makes them,
 * with events between: restart it, read it, stop and start it, switch it
 * out and in, unload and load it again.
 */
static void drive_ctx(struct sim *s, struct pfm_engine *e,
		      const struct pfm_ctx_view *c)
{
	bool system = c->flags & PFM_FL_SYSTEM_WIDE;
	struct guest g = {
		.cb.deliver = deliver, .e = e,
		.vcpu = c->vcpu >= 0 ? (u32)c->vcpu : 0,
		.tid = c->tid ? c->tid : 100, .tgid = 100,
	};
	u32 load_pid = system ? g.vcpu : g.tid;

	if (g.vcpu >= pfm_engine_cfg(e)->nr_vcpus)
		fail("a context in on a vCPU the VM does not have");
	cb_restart(&g.cb, c->id);
	read_everything(&g, c);
	events(s, g.vcpu);
	cb_restart(&g.cb, c->id);
	cb_stop(&g.cb, c->id);
	cb_start(&g.cb, c->id);
	events(s, g.vcpu);
	if (!system) {
		cb_switch(&g.cb, c->id, 0, 0, 0);
		cb_switch(&g.cb, 0, c->id, g.tid, g.tgid);
	}
	read_everything(&g, c);
	cb_unload(&g.cb, c->id);
	cb_load(&g.cb, c->id, load_pid, c->active_set,
		system ? 0 : PVPFM_LOAD_SELF, g.tgid);
	cb_start(&g.cb, c->id);
	events(s, g.vcpu);
	cb_restart(&g.cb, c->id);
	read_everything(&g, c);
}

static void check_empty(struct sim *s, struct pfm_engine *e)
{
	struct pfm_engine_stats st;

	pfm_engine_stats(e, &st);
	if (st.contexts || s->nr_open || s->pinned)
		fail("a refused stream left state behind");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfm_engine *e, *e2;
	struct ctx_list ctxs = { .n = 0 };
	struct sim *s, *s2;
	void *buf, *again;
	u32 i;
	u32 pers = 1, vcpus = 1;
	long n;

	/*
	 * A destination like the source the stream names (header bytes 16,
	 * personality, and 24, vCPUs), within what fuzz_cmd makes: else
	 * nearly every mutation stops at the first check
	 */
	if (size >= 28) {
		pers = data[16] > PVPFM_PERS_AUTO && data[16] < PVPFM_PERS_COUNT ?
		       data[16] :
		       PVPFM_PERS_AUTO + 1 + data[16] % (PVPFM_PERS_COUNT - 1);
		vcpus = 1 + (data[24] + 3u) % 4;
	}

	/* a heap copy of exactly @size bytes: ASan sees any overrun */
	buf = malloc(size ? size : 1);
	if (!buf)
		fail("malloc");
	memcpy(buf, data, size);
	e = engine(&s, pers, vcpus);
	if (pfm_engine_restore(e, buf, size, NULL)) {
		check_empty(s, e);
		done(s, e);
		free(buf);
		return 0;
	}
	sim_events(s, 0, SIM_EV_GENERIC(0x76), 1000);
	sim_run(s, 5000);
	pfm_engine_view(e, &list_ops, &ctxs);
	for (i = 0; i < ctxs.n; i++)
		drive_ctx(s, e, &ctxs.c[i]);
	n = pfm_engine_save(e, NULL, 0);
	again = n > 0 ? malloc(n) : NULL;
	if (!again || pfm_engine_save(e, again, n) != n)
		fail("pfm_engine_save");
	e2 = engine(&s2, pers, vcpus);
	if (pfm_engine_restore(e2, again, n, NULL))
		fail("an accepted stream, saved again, did not restore");
	done(s2, e2);
	done(s, e);
	free(again);
	free(buf);
	return 0;
}
