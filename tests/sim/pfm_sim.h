/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A simulated PMU backend for the perfmon2 engine (struct pfm_backend_ops),
 * used by the unit tests and the fuzzer.
 *
 * Everything is deterministic:
 *   - the clock only moves when the test says so (sim_run);
 *   - events occur at fixed rates (a table: events per microsecond of
 *     simulated time, per event kind/code, the same on every vCPU) or are
 *     injected explicitly (sim_events);
 *   - backing counters are counter_width bits wide, count only while
 *     enabled, and when they wrap from all-ones to zero the wrapped PMDs of
 *     one vCPU are reported to pfm_engine_overflow() in one call (several
 *     counters wrapping at the same event = one interrupt);
 *   - each vCPU has one one-shot timer that fires pfm_engine_timer() when
 *     the clock reaches its deadline.
 *
 * The sim also checks the engine's manners: every allocation freed, every
 * counter closed, every guest page released, no guest write outside RAM,
 * no counter opened for an event event_check refused.
 */
#ifndef _PFM_SIM_H
#define _PFM_SIM_H

#include "kvm/engine/pfm_engine.h"

#define SIM_MAX_VCPUS		8
#define SIM_MAX_RATES		32
#define SIM_MAX_REFUSED		16
#define SIM_MAX_CONTENTION	8
#define SIM_NOTIFY_LOG		4096

/* an event, as the sim knows it: kind and code (GENERIC: event select) */
#define SIM_EV(kind, code)	(((u32)(kind) << 16) | ((u32)(code) & 0xffff))
#define SIM_EV_GENERIC(sel)	SIM_EV(PFM_EVK_GENERIC, (sel))
#define SIM_EV_FIXED(idx)	SIM_EV(PFM_EVK_FIXED, (idx))
#define SIM_EV_VIRTUAL(code)	SIM_EV(PFM_EVK_VIRTUAL, (code))
/* refuse every event of a kind */
#define SIM_EV_ANY		0xffff
#define SIM_EV_KIND_ANY(kind)	SIM_EV((kind), SIM_EV_ANY)

struct sim_cfg {
	u32 nr_vcpus;		/* <= SIM_MAX_VCPUS */
	u8 counter_width;	/* 8..64 */
	u64 guest_base;		/* guest-physical address of guest RAM */
	u64 guest_size;		/* bytes of guest RAM */
};

/* one backing counter the engine opened */
struct sim_counter {
	struct pfm_counter *c;	/* the engine's */
	u32 key;		/* SIM_EV() of c->ev */
	u64 value;		/* low counter_width bits */
	bool enabled;
	bool wrapped;		/* wrapped in the current step */
	u64 enabled_ns;
	u64 running_ns;
	u64 wraps;
	struct sim_counter *next;
};

struct sim_rate {
	u32 key;
	u64 per_us;		/* events per 1000 ns */
	u64 base_ns;		/* events_at(t) = base_n + (t-base_ns)*per_us/1000 */
	u64 base_n;
};

struct sim_timer {
	bool armed;
	u64 deadline;
	u64 arms;		/* timer_arm calls */
	u64 fired;
};

struct sim_contention {
	u32 vcpu;
	u16 pmd;
	u32 running_pct;	/* running = enabled * pct / 100 */
};

struct sim {
	struct sim_cfg cfg;
	struct pfm_engine *e;	/* set by sim_engine_create */
	u64 wmask;		/* counter value mask */

	u64 now;		/* ns */
	struct sim_timer timers[SIM_MAX_VCPUS];

	struct sim_counter *counters;	/* open counters */
	u32 nr_open;
	u64 opens, closes;

	struct sim_rate rates[SIM_MAX_RATES];
	u32 nr_rates;

	u32 refused[SIM_MAX_REFUSED];
	u32 nr_refused;
	u32 aliased[SIM_MAX_REFUSED];
	u32 nr_aliased;
	u32 forbidden[SIM_MAX_REFUSED];	/* the operator's filter refuses */
	u32 nr_forbidden;
	u64 event_checks;

	struct sim_contention contention[SIM_MAX_CONTENTION];
	u32 nr_contention;

	/* where overflows happen, per vCPU (what the host saw) */
	struct pfm_where where[SIM_MAX_VCPUS];

	/* guest RAM */
	u8 *mem;
	u64 pinned;		/* guest_check successes - guest_release */
	u64 guest_writes;
	u64 guest_write_errors;	/* writes outside guest RAM */
	bool fail_guest_writes;	/* injection: every write fails */

	/* notify() log */
	u32 notify_log[SIM_NOTIFY_LOG];
	u64 notifies;

	/* memory: live = zalloc - free; injection: fail the n-th from now */
	long live_allocs;
	u64 allocs;
	u64 fail_alloc_in;	/* 0: never; n: the n-th zalloc fails */
	u64 fail_open_in;	/* same for counter_open */
	/*
	 * injection: a VM with KVM's mediated vPMU runs on the host, and
	 * perf refuses every PMU event (not a virtual PMD's) that counts a
	 * guest: event_check and counter_open give -EOPNOTSUPP
	 */
	bool pmu_mediated;
	u64 open_cost_ns;	/* the clock moves this much per counter_open */

	/* overflow interrupts delivered */
	u64 overflow_calls;
	u64 timer_calls;
	/*
	 * 0: unbounded; else sim_run/sim_events stop early once
	 * overflow_calls + timer_calls reach it (the fuzzer's time bound)
	 */
	u64 budget;
	bool budget_hit;

	/* the engine misbehaved (see sim_violations) */
	u64 bad_opens;		/* opened an event event_check refuses */
	u64 bad_frees;		/* free of something not allocated */
	u64 bad_ops;		/* op on an unknown or closed counter */
	bool runaway;		/* sim_run gave up: timers re-armed forever */
};

struct sim *sim_create(const struct sim_cfg *cfg);
/* frees the sim; the engine must have been destroyed first */
void sim_destroy(struct sim *s);

extern const struct pfm_backend_ops sim_backend_ops;

/* pfm_engine_create on this sim: @cfg->counter_width/nr_vcpus are the sim's */
int sim_engine_create(struct sim *s, struct pfm_engine_cfg *cfg,
		      struct pfm_engine **out);

/* events of @key occur @per_us times per microsecond on every vCPU */
void sim_set_rate(struct sim *s, u32 key, u64 per_us);

/* @n events of @key occur on @vcpu now (the clock does not move) */
void sim_events(struct sim *s, u32 vcpu, u32 key, u64 n);

/* the clock moves by @ns: rate events, overflows and timers in order */
void sim_run(struct sim *s, u64 ns);

/*
 * An overflow interrupt for the PMDs of @pmds on @vcpu now, whether or not
 * a counter wrapped: a late or spurious interrupt, as a host may deliver.
 */
void sim_raise_overflow(struct sim *s, u32 vcpu, const u64 *pmds);

/* event_check refuses @key (-ENOENT) */
void sim_refuse(struct sim *s, u32 key);

/* event_check says @key is backed by an admin's alias (1: emulated) */
void sim_alias(struct sim *s, u32 key);

/* event_check refuses @key as the host operator's filter does (-EACCES) */
void sim_forbid(struct sim *s, u32 key);

/* backing counters of @pmd on @vcpu run only @pct % of the enabled time */
void sim_set_contention(struct sim *s, u32 vcpu, u16 pmd, u32 pct);

/* the open counter backing @pmd on @vcpu, or NULL */
struct sim_counter *sim_counter_find(struct sim *s, u32 vcpu, u16 pmd);

/* guest RAM access for tests */
void *sim_guest_ptr(struct sim *s, u64 gpa, u64 len);

/* the sim key of an engine event */
u32 sim_event_key(const struct pfm_event *ev);

/* count of everything the engine did wrong or left behind (0 = clean) */
u64 sim_violations(const struct sim *s);
/* after pfm_engine_destroy: leaks of memory, counters, pins, timers */
u64 sim_leaks(const struct sim *s);

#endif /* _PFM_SIM_H */
