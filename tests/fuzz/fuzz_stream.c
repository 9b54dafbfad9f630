// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: arbitrary bytes as a migration stream into
 * pfm_engine_restore() (issue 11), the stream being a file an attacker may
 * forge. Seeds: streams fuzz_cmd saved from the states its corpus reaches
 * (make corpus).
 *
 * Findings: any sanitizer report, and abort() on a broken invariant: a
 * refused stream leaves the engine empty (no context, counter or pinned
 * page); an accepted one runs, saves again and restores again (what was
 * taken in can move on); nothing left behind after destroy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	struct sim *s, *s2;
	void *buf, *again;
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
