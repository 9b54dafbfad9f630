// SPDX-License-Identifier: GPL-2.0
/*
 * Guest events by name (guest_events.h), from libpfm4's tables (Debian's
 * libpfm4): each personality's PMU (pvpfm_pers_desc()->libpfm4_pmu) is
 * copied once into a table of event codes, which every name walks.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib.h>

#include "guest_events.h"
#include "include/uapi/pv_perfmon.h"

/* one unit mask of an event: its bits and libpfm4's name */
struct pmu_umask {
	uint8_t code;
	const char *name;	/* libpfm4's, static in the library */
};

struct pmu_event {
	uint16_t code;		/* event select */
	uint8_t umask;		/* the unit mask the event's own code holds */
	const char *name;
	unsigned int first_umask, nr_umasks;	/* in pmu_table.umasks */
};

struct pmu_table {
	struct pmu_event *events;
	unsigned int nr_events;
	struct pmu_umask *umasks;
	unsigned int nr_umasks;
};

/* by personality; all empty until guest_events_init() */
static struct pmu_table tables[PVPFM_PERS_COUNT];

/*
 * Intel's fixed counters count architectural events (Intel SDM vol. 3,
 * "Fixed-Function Performance Counters"): by index, event and unit mask
 */
static const struct {
	uint16_t event;
	uint8_t umask;
} intel_fixed[] = {
	{ 0xc0, 0x00 },		/* instructions retired */
	{ 0x3c, 0x00 },		/* core cycles, unhalted */
	{ 0x3c, 0x01 },		/* reference cycles, unhalted */
};

static int find_pmu(const char *name, pfm_pmu_info_t *pi)
{
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		memset(pi, 0, sizeof(*pi));
		pi->size = sizeof(*pi);
		if (pfm_get_pmu_info(p, pi) == PFM_SUCCESS && pi->name &&
		    !strcmp(pi->name, name))
			return 0;
	}
	return -1;
}

/* the unit masks of event @idx into @t; 0, or -1 on no memory */
static int add_umasks(struct pmu_table *t, struct pmu_event *ev, int idx,
		      int nattrs)
{
	pfm_event_attr_info_t ai;
	struct pmu_umask *u;

	u = realloc(t->umasks, (t->nr_umasks + nattrs) * sizeof(*u));
	if (!u)
		return -1;
	t->umasks = u;
	ev->first_umask = t->nr_umasks;
	for (int a = 0; a < nattrs; a++) {
		memset(&ai, 0, sizeof(ai));
		ai.size = sizeof(ai);
		if (pfm_get_event_attr_info(idx, a, PFM_OS_NONE, &ai) !=
		    PFM_SUCCESS || ai.type != PFM_ATTR_UMASK ||
		    ai.code > 0xff)
			continue;
		u[t->nr_umasks].code = (uint8_t)ai.code;
		u[t->nr_umasks].name = ai.name;
		t->nr_umasks++;
		ev->nr_umasks++;
	}
	return 0;
}

/*
 * @pmu's events into @t. An Intel event's code holds its unit mask in
 * bits 15:8 (ix86arch: UNHALTED_REFERENCE_CYCLES is 0x13c); an AMD
 * event's code is its 12-bit event select, its unit masks attributes.
 */
static void load_pmu(struct pmu_table *t, const char *pmu, bool intel)
{
	pfm_event_info_t ei;
	pfm_pmu_info_t pi;
	struct pmu_event *ev;

	if (find_pmu(pmu, &pi) || pi.nevents <= 0)
		return;
	t->events = calloc(pi.nevents, sizeof(*t->events));
	if (!t->events)
		return;
	for (int i = pi.first_event; i != -1 && t->nr_events < (unsigned)pi.nevents;
	     i = pfm_get_event_next(i)) {
		memset(&ei, 0, sizeof(ei));
		ei.size = sizeof(ei);
		if (pfm_get_event_info(i, PFM_OS_NONE, &ei) != PFM_SUCCESS)
			continue;
		ev = &t->events[t->nr_events];
		ev->code = intel ? ei.code & 0xff : ei.code & 0xfff;
		ev->umask = intel ? (ei.code >> 8) & 0xff : 0;
		ev->name = ei.name;
		if (add_umasks(t, ev, i, ei.nattrs))
			return;
		t->nr_events++;
	}
}

void guest_events_init(void)
{
	static bool done;
	const char *old = getenv("LIBPFM_FORCE_PMU");
	char *saved = old ? strdup(old) : NULL;
	const struct pvpfm_pers_desc *d;
	int ret;

	if (done)
		return;
	done = true;
	/*
	 * ix86arch has events only where libpfm4 takes the CPU for an
	 * Intel one: forced, it lists Intel's architectural events on any
	 * host. The other PMUs' tables are there, present or not.
	 */
	setenv("LIBPFM_FORCE_PMU", "ix86arch", 1);
	ret = pfm_initialize();
	if (saved) {
		setenv("LIBPFM_FORCE_PMU", saved, 1);
		free(saved);
	} else {
		unsetenv("LIBPFM_FORCE_PMU");
	}
	if (ret != PFM_SUCCESS)
		return;
	for (uint32_t p = 0; p < PVPFM_PERS_COUNT; p++) {
		d = pvpfm_pers_desc(p);
		if (d && d->libpfm4_pmu)
			load_pmu(&tables[p], d->libpfm4_pmu,
				 d->vendor == PVPFM_VENDOR_INTEL);
	}
}

/* EVENT[:UMASK...] for an event of @t with unit masks, or NULL */
static const char *umask_name(const struct pmu_table *t,
			      const struct pmu_event *ev, uint8_t umask,
			      char *buf, size_t len)
{
	const struct pmu_umask *u = &t->umasks[ev->first_umask];
	unsigned int i, rest = umask;
	size_t n;

	n = snprintf(buf, len, "%s", ev->name);
	/* one unit mask with exactly these bits: its name */
	for (i = 0; i < ev->nr_umasks; i++)
		if (u[i].code == umask) {
			snprintf(buf + n, len > n ? len - n : 0, ":%s",
				 u[i].name);
			return buf;
		}
	/* else the masks that make them up, in libpfm4's order */
	for (i = 0; i < ev->nr_umasks && rest; i++)
		if (u[i].code && (u[i].code & rest) == u[i].code) {
			n += snprintf(buf + n, len > n ? len - n : 0, ":%s",
				      u[i].name);
			rest &= ~u[i].code;
		}
	if (rest || !umask)
		snprintf(buf, len, "%s:0x%02x", ev->name, umask);
	return buf;
}

static const char *pmu_event_name(uint32_t personality, uint16_t event,
				  uint8_t umask, char *buf, size_t len)
{
	const struct pmu_table *t;
	const struct pmu_event *ev;
	unsigned int i;

	if (personality >= PVPFM_PERS_COUNT)
		return NULL;
	t = &tables[personality];
	for (i = 0; i < t->nr_events; i++) {
		ev = &t->events[i];
		if (ev->code == event && ev->umask == umask && !ev->nr_umasks) {
			snprintf(buf, len, "%s", ev->name);
			return buf;
		}
	}
	for (i = 0; i < t->nr_events; i++) {
		ev = &t->events[i];
		if (ev->code == event && !ev->umask && ev->nr_umasks)
			return umask_name(t, ev, umask, buf, len);
	}
	return NULL;
}

const char *guest_event_name(uint32_t personality,
			     const struct kvmpfm_snap_event *e, char *buf,
			     size_t len)
{
	const struct pvpfm_vpmd_desc *v;

	switch (e->guest_kind) {
	case KVMPFM_EVK_GENERIC:
		if (pmu_event_name(personality, e->guest_event,
				   e->guest_umask, buf, len))
			return buf;
		snprintf(buf, len, "0x%x:0x%02x", e->guest_event,
			 e->guest_umask);
		return buf;
	case KVMPFM_EVK_FIXED:
		if (e->guest_event < sizeof(intel_fixed) / sizeof(intel_fixed[0]) &&
		    pmu_event_name(personality, intel_fixed[e->guest_event].event,
				   intel_fixed[e->guest_event].umask, buf, len))
			return buf;
		snprintf(buf, len, "fixed_%u", e->guest_event);
		return buf;
	case KVMPFM_EVK_VIRTUAL:
		v = pvpfm_vpmd_desc(e->guest_event);
		if (v)
			snprintf(buf, len, "%s", v->name);
		else
			snprintf(buf, len, "virtual_%u", e->guest_event);
		return buf;
	}
	snprintf(buf, len, "unknown");
	return buf;
}
