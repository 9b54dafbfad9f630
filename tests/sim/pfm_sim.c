// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated PMU backend: see pfm_sim.h.
 */
#include <stdlib.h>
#include <string.h>

#include "pfm_sim.h"

/* sim_run gives up after this many steps in one call (engine re-arming) */
#define SIM_MAX_STEPS		(1u << 22)

#define u128 unsigned __int128

static struct sim *sim_of(void *be)
{
	return be;
}

u32 sim_event_key(const struct pfm_event *ev)
{
	switch (ev->kind) {
	case PFM_EVK_GENERIC:
		return SIM_EV_GENERIC(ev->event_select);
	case PFM_EVK_FIXED:
		return SIM_EV_FIXED(ev->code);
	case PFM_EVK_VIRTUAL:
		return SIM_EV_VIRTUAL(ev->code);
	}
	return SIM_EV(0xffff, 0xffff);
}

/* @key in @keys, exactly or through a SIM_EV_KIND_ANY entry */
static bool key_listed(const u32 *keys, u32 nr, u32 key)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		if (keys[i] == key)
			return true;
		if ((keys[i] & 0xffff) == SIM_EV_ANY &&
		    (keys[i] >> 16) == (key >> 16))
			return true;
	}
	return false;
}

static bool key_refused(const struct sim *s, u32 key)
{
	return key_listed(s->refused, s->nr_refused, key);
}

static struct sim_counter *counter_of(struct sim *s, struct pfm_counter *c)
{
	struct sim_counter *sc;

	for (sc = s->counters; sc; sc = sc->next)
		if (sc->c == c && c->priv == sc)
			return sc;
	s->bad_ops++;
	return NULL;
}

static u32 running_pct(const struct sim *s, const struct sim_counter *sc)
{
	u32 i;

	for (i = 0; i < s->nr_contention; i++)
		if (s->contention[i].vcpu == sc->c->vcpu &&
		    s->contention[i].pmd == sc->c->ev.pmd)
			return s->contention[i].running_pct;
	return 100;
}

/* --- the backend operations --- */

static int op_event_check(void *be, const struct pfm_event *ev)
{
	struct sim *s = sim_of(be);

	s->event_checks++;
	if (s->pmu_mediated && ev->kind != PFM_EVK_VIRTUAL)
		return -EOPNOTSUPP;
	if (key_refused(s, sim_event_key(ev)))
		return -ENOENT;
	if (key_listed(s->forbidden, s->nr_forbidden, sim_event_key(ev)))
		return -EACCES;
	return key_listed(s->aliased, s->nr_aliased, sim_event_key(ev));
}

static int op_counter_open(void *be, struct pfm_counter *c)
{
	struct sim *s = sim_of(be);
	struct sim_counter *sc;

	if (s->fail_open_in && !--s->fail_open_in)
		return -EBUSY;
	if (s->pmu_mediated && c->ev.kind != PFM_EVK_VIRTUAL)
		return -EOPNOTSUPP;
	/* opening is not free (a host perf event): time passes meanwhile */
	s->now += s->open_cost_ns;
	if (c->vcpu >= s->cfg.nr_vcpus) {
		s->bad_ops++;
		return -EINVAL;
	}
	if (key_refused(s, sim_event_key(&c->ev)))
		s->bad_opens++;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sc->c = c;
	sc->key = sim_event_key(&c->ev);
	sc->next = s->counters;
	s->counters = sc;
	c->priv = sc;
	s->nr_open++;
	s->opens++;
	return 0;
}

static void op_counter_close(void *be, struct pfm_counter *c)
{
	struct sim *s = sim_of(be);
	struct sim_counter **pp, *sc = counter_of(s, c);

	if (!sc)
		return;
	for (pp = &s->counters; *pp != sc; pp = &(*pp)->next)
		;
	*pp = sc->next;
	c->priv = NULL;
	free(sc);
	s->nr_open--;
	s->closes++;
}

static void op_counter_write(void *be, struct pfm_counter *c, u64 value)
{
	struct sim *s = sim_of(be);
	struct sim_counter *sc = counter_of(s, c);

	if (sc)
		sc->value = value & s->wmask;
}

static u64 op_counter_read(void *be, struct pfm_counter *c,
			   struct pfm_counter_time *t)
{
	struct sim *s = sim_of(be);
	struct sim_counter *sc = counter_of(s, c);

	if (!sc)
		return 0;
	if (t) {
		t->enabled_ns = sc->enabled_ns;
		t->running_ns = sc->running_ns;
	}
	return sc->value;
}

static void op_counter_enable(void *be, struct pfm_counter *c)
{
	struct sim *s = sim_of(be);
	struct sim_counter *sc = counter_of(s, c);

	if (sc)
		sc->enabled = true;
}

static void op_counter_disable(void *be, struct pfm_counter *c)
{
	struct sim *s = sim_of(be);
	struct sim_counter *sc = counter_of(s, c);

	if (sc)
		sc->enabled = false;
}

static u64 op_now_ns(void *be)
{
	return sim_of(be)->now;
}

static void op_timer_arm(void *be, u32 vcpu, u64 delta_ns)
{
	struct sim *s = sim_of(be);

	if (vcpu >= s->cfg.nr_vcpus) {
		s->bad_ops++;
		return;
	}
	s->timers[vcpu].armed = true;
	s->timers[vcpu].deadline = s->now + delta_ns < s->now ?
				   ~0ULL : s->now + delta_ns;
	s->timers[vcpu].arms++;
}

static void op_timer_cancel(void *be, u32 vcpu)
{
	struct sim *s = sim_of(be);

	if (vcpu >= s->cfg.nr_vcpus) {
		s->bad_ops++;
		return;
	}
	s->timers[vcpu].armed = false;
}

static bool guest_range_ok(const struct sim *s, u64 gpa, u64 len)
{
	return gpa >= s->cfg.guest_base &&
	       gpa - s->cfg.guest_base <= s->cfg.guest_size &&
	       len <= s->cfg.guest_size - (gpa - s->cfg.guest_base);
}

static int op_guest_check(void *be, u64 gpa, u64 len)
{
	struct sim *s = sim_of(be);

	if (!guest_range_ok(s, gpa, len))
		return -EFAULT;
	s->pinned++;
	return 0;
}

static void op_guest_release(void *be, u64 gpa, u64 len)
{
	struct sim *s = sim_of(be);

	if (!guest_range_ok(s, gpa, len) || !s->pinned) {
		s->bad_ops++;
		return;
	}
	s->pinned--;
}

static int op_guest_write(void *be, u64 gpa, const void *src, u32 len)
{
	struct sim *s = sim_of(be);

	if (!guest_range_ok(s, gpa, len)) {
		s->guest_write_errors++;
		return -EFAULT;
	}
	if (s->fail_guest_writes)
		return -EFAULT;
	memcpy(s->mem + (gpa - s->cfg.guest_base), src, len);
	s->guest_writes++;
	return 0;
}

static void op_notify(void *be, u32 ctx_id)
{
	struct sim *s = sim_of(be);

	if (s->notifies < SIM_NOTIFY_LOG)
		s->notify_log[s->notifies] = ctx_id;
	s->notifies++;
}

static void *op_zalloc(void *be, size_t size)
{
	struct sim *s = sim_of(be);
	void *p;

	if (s->fail_alloc_in && !--s->fail_alloc_in)
		return NULL;
	p = calloc(1, size ? size : 1);
	if (p) {
		s->live_allocs++;
		s->allocs++;
	}
	return p;
}

static void op_free(void *be, void *p)
{
	struct sim *s = sim_of(be);

	if (!p || s->live_allocs <= 0) {
		s->bad_frees++;
		return;
	}
	s->live_allocs--;
	free(p);
}

const struct pfm_backend_ops sim_backend_ops = {
	.event_check = op_event_check,
	.counter_open = op_counter_open,
	.counter_close = op_counter_close,
	.counter_write = op_counter_write,
	.counter_read = op_counter_read,
	.counter_enable = op_counter_enable,
	.counter_disable = op_counter_disable,
	.now_ns = op_now_ns,
	.timer_arm = op_timer_arm,
	.timer_cancel = op_timer_cancel,
	.guest_check = op_guest_check,
	.guest_release = op_guest_release,
	.guest_write = op_guest_write,
	.notify = op_notify,
	.zalloc = op_zalloc,
	.free = op_free,
};

/* --- life cycle and configuration --- */

struct sim *sim_create(const struct sim_cfg *cfg)
{
	struct sim *s;

	if (!cfg->nr_vcpus || cfg->nr_vcpus > SIM_MAX_VCPUS ||
	    cfg->counter_width < 8 || cfg->counter_width > 64)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->wmask = cfg->counter_width == 64 ? ~0ULL :
		   (1ULL << cfg->counter_width) - 1;
	if (cfg->guest_size) {
		s->mem = calloc(1, cfg->guest_size);
		if (!s->mem) {
			free(s);
			return NULL;
		}
	}
	return s;
}

void sim_destroy(struct sim *s)
{
	struct sim_counter *sc, *next;

	if (!s)
		return;
	for (sc = s->counters; sc; sc = next) {
		next = sc->next;
		free(sc);
	}
	free(s->mem);
	free(s);
}

int sim_engine_create(struct sim *s, struct pfm_engine_cfg *cfg,
		      struct pfm_engine **out)
{
	int ret;

	cfg->counter_width = s->cfg.counter_width;
	cfg->nr_vcpus = s->cfg.nr_vcpus;
	ret = pfm_engine_create(cfg, &sim_backend_ops, s, out);
	s->e = ret ? NULL : *out;
	return ret;
}

static struct sim_rate *rate_find(const struct sim *s, u32 key)
{
	u32 i;

	for (i = 0; i < s->nr_rates; i++)
		if (s->rates[i].key == key)
			return (struct sim_rate *)&s->rates[i];
	return NULL;
}

static u64 rate_events_at(const struct sim_rate *r, u64 t)
{
	return r->base_n + (u64)((u128)(t - r->base_ns) * r->per_us / 1000);
}

void sim_set_rate(struct sim *s, u32 key, u64 per_us)
{
	struct sim_rate *r = rate_find(s, key);

	if (!r) {
		if (s->nr_rates == SIM_MAX_RATES)
			abort();
		r = &s->rates[s->nr_rates++];
		r->key = key;
		r->base_ns = s->now;
		r->base_n = 0;
	} else {
		r->base_n = rate_events_at(r, s->now);
		r->base_ns = s->now;
	}
	r->per_us = per_us;
}

static void key_add(u32 *keys, u32 *nr, u32 key)
{
	if (*nr == SIM_MAX_REFUSED)
		abort();
	keys[(*nr)++] = key;
}

void sim_refuse(struct sim *s, u32 key)
{
	key_add(s->refused, &s->nr_refused, key);
}

void sim_alias(struct sim *s, u32 key)
{
	key_add(s->aliased, &s->nr_aliased, key);
}

void sim_forbid(struct sim *s, u32 key)
{
	key_add(s->forbidden, &s->nr_forbidden, key);
}

void sim_set_contention(struct sim *s, u32 vcpu, u16 pmd, u32 pct)
{
	if (s->nr_contention == SIM_MAX_CONTENTION)
		abort();
	s->contention[s->nr_contention].vcpu = vcpu;
	s->contention[s->nr_contention].pmd = pmd;
	s->contention[s->nr_contention].running_pct = pct;
	s->nr_contention++;
}

struct sim_counter *sim_counter_find(struct sim *s, u32 vcpu, u16 pmd)
{
	struct sim_counter *sc;

	for (sc = s->counters; sc; sc = sc->next)
		if (sc->c->vcpu == vcpu && sc->c->ev.pmd == pmd)
			return sc;
	return NULL;
}

void *sim_guest_ptr(struct sim *s, u64 gpa, u64 len)
{
	if (!guest_range_ok(s, gpa, len))
		return NULL;
	return s->mem + (gpa - s->cfg.guest_base);
}

u64 sim_violations(const struct sim *s)
{
	return s->bad_opens + s->bad_frees + s->bad_ops +
	       s->guest_write_errors + (s->runaway ? 1 : 0);
}

u64 sim_leaks(const struct sim *s)
{
	u64 armed = 0;
	u32 v;

	for (v = 0; v < s->cfg.nr_vcpus; v++)
		armed += s->timers[v].armed;
	return (u64)(s->live_allocs < 0 ? -s->live_allocs : s->live_allocs) +
	       s->nr_open + s->pinned + armed;
}

/* --- counting --- */

/* events until @sc wraps to zero */
static u128 to_wrap(const struct sim *s, const struct sim_counter *sc)
{
	return (u128)s->wmask + 1 - sc->value;
}

/* add @n events to @sc; true if it wrapped (n never exceeds to_wrap) */
static bool counter_add(struct sim *s, struct sim_counter *sc, u64 n)
{
	bool wrap = (u128)n >= to_wrap(s, sc);

	sc->value = (sc->value + n) & s->wmask;
	if (wrap) {
		sc->wrapped = true;
		sc->wraps++;
	}
	return wrap;
}

/*
 * Report the counters that wrapped in this step: one call per vCPU with
 * every wrapped PMD of that vCPU. The bitmaps are built before any call,
 * since the engine reprograms counters in its handler.
 */
static void deliver_overflows(struct sim *s)
{
	u64 bv[SIM_MAX_VCPUS][PFM_PMD_BV];
	bool any[SIM_MAX_VCPUS];
	struct sim_counter *sc;
	u32 v;

	memset(bv, 0, sizeof(bv));
	memset(any, 0, sizeof(any));
	for (sc = s->counters; sc; sc = sc->next) {
		if (!sc->wrapped)
			continue;
		sc->wrapped = false;
		if (!sc->c->want_irq || sc->c->ev.pmd >= PFM_MAX_PMDS)
			continue;
		v = sc->c->vcpu;
		pfm_bit_set(bv[v], sc->c->ev.pmd);
		any[v] = true;
	}
	for (v = 0; v < s->cfg.nr_vcpus; v++) {
		if (!any[v])
			continue;
		s->overflow_calls++;
		if (s->e)
			pfm_engine_overflow(s->e, v, bv[v], &s->where[v]);
	}
}

static bool over_budget(struct sim *s)
{
	if (!s->budget || s->overflow_calls + s->timer_calls < s->budget)
		return false;
	s->budget_hit = true;
	return true;
}

void sim_raise_overflow(struct sim *s, u32 vcpu, const u64 *pmds)
{
	s->overflow_calls++;
	if (s->e)
		pfm_engine_overflow(s->e, vcpu, pmds,
				    &s->where[vcpu % SIM_MAX_VCPUS]);
}

void sim_events(struct sim *s, u32 vcpu, u32 key, u64 n)
{
	struct sim_counter *sc;
	u128 step;
	u32 guard = 0;

	while (n && guard++ < SIM_MAX_STEPS) {
		if (over_budget(s))
			return;
		step = n;
		for (sc = s->counters; sc; sc = sc->next)
			if (sc->enabled && sc->c->vcpu == vcpu &&
			    sc->key == key && to_wrap(s, sc) < step)
				step = to_wrap(s, sc);
		for (sc = s->counters; sc; sc = sc->next)
			if (sc->enabled && sc->c->vcpu == vcpu && sc->key == key)
				counter_add(s, sc, (u64)step);
		n -= (u64)step;
		deliver_overflows(s);
	}
	if (n)
		s->runaway = true;
}

/* the first time after now at which @sc has wrapped at the rate of @r */
static u64 wrap_time(const struct sim *s, const struct sim_counter *sc,
		     const struct sim_rate *r)
{
	u128 need, k, t;

	/* events_at(t) >= events_at(now) + to_wrap */
	need = (u128)rate_events_at(r, s->now) - r->base_n + to_wrap(s, sc);
	/* smallest d with d * per_us / 1000 >= need */
	k = (need * 1000 + r->per_us - 1) / r->per_us;
	t = (u128)r->base_ns + k;
	return t > ~0ULL ? ~0ULL : (u64)t;
}

/* a timer armed to expire now (or earlier) */
static bool timer_due(const struct sim *s)
{
	u32 v;

	for (v = 0; v < s->cfg.nr_vcpus; v++)
		if (s->timers[v].armed && s->timers[v].deadline <= s->now)
			return true;
	return false;
}

void sim_run(struct sim *s, u64 ns)
{
	u64 end = s->now + ns < s->now ? ~0ULL : s->now + ns;
	struct sim_counter *sc;
	const struct sim_rate *r;
	u64 target, dt, n, t;
	u32 v, guard = 0;

	do {
		if (guard++ >= SIM_MAX_STEPS) {
			s->runaway = true;
			return;
		}
		if (over_budget(s))
			return;
		target = end;
		for (v = 0; v < s->cfg.nr_vcpus; v++)
			if (s->timers[v].armed && s->timers[v].deadline < target)
				target = s->timers[v].deadline < s->now ?
					 s->now : s->timers[v].deadline;
		for (sc = s->counters; sc; sc = sc->next) {
			r = sc->enabled ? rate_find(s, sc->key) : NULL;
			if (!r || !r->per_us)
				continue;
			t = wrap_time(s, sc, r);
			if (t < target)
				target = t;
		}

		dt = target - s->now;
		for (sc = s->counters; sc; sc = sc->next) {
			if (!sc->enabled)
				continue;
			sc->enabled_ns += dt;
			sc->running_ns += (u64)((u128)dt * running_pct(s, sc) / 100);
			r = rate_find(s, sc->key);
			if (!r)
				continue;
			n = rate_events_at(r, target) - rate_events_at(r, s->now);
			if (n)
				counter_add(s, sc, n);
		}
		s->now = target;
		deliver_overflows(s);

		for (v = 0; v < s->cfg.nr_vcpus; v++) {
			if (!s->timers[v].armed || s->timers[v].deadline > s->now)
				continue;
			s->timers[v].armed = false;
			s->timers[v].fired++;
			s->timer_calls++;
			if (s->e)
				pfm_engine_timer(s->e, v);
		}
	} while (s->now < end || timer_due(s));
}
