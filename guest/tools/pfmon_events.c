// SPDX-License-Identifier: GPL-2.0
/*
 * Events by name: the hypervisor's virtual PMDs (pfmon's own names) and
 * every event and unit mask of the guest's CPU model, encoded by libpfm4
 * (Debian's libpfm4-dev) to the PMC value of the device's personality.
 *
 * The CPU model is the personality's, not the CPU's: the host runs the
 * guest's PMCs as the personality describes them (pmu_desc), whatever
 * CPUID says in the guest (in the rig L2 sees the L0 CPU, which has no
 * PMU at all). So libpfm4 is told which PMU to use (LIBPFM_FORCE_PMU) and
 * never detects one.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/pfmlib.h>
#include <perfmon/pv_perfmon.h>

#include "pfmon.h"

/*
 * perf's generic names, kept so that `pfmon -e cycles` works as `perf
 * stat -e cycles` does: each is a libpfm4 event name of the vendor's PMU,
 * which does the encoding. perf's hyphens (branch-misses) are taken for
 * the underscores.
 */
struct alias {
	const char *name, *amd, *intel;
};

static const struct alias aliases[] = {
	{ "cycles", "CPU_CLK_UNHALTED", "UNHALTED_CORE_CYCLES" },
	{ "instructions", "RETIRED_INSTRUCTIONS", "INSTRUCTION_RETIRED" },
	{ "branches", "RETIRED_BRANCH_INSTRUCTIONS", "BRANCH_INSTRUCTIONS_RETIRED" },
	{ "branch_misses", "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS",
	  "MISPREDICTED_BRANCH_RETIRED" },
	{ "ref_cycles", NULL, "UNHALTED_REFERENCE_CYCLES" },
	{ "llc_references", NULL, "LLC_REFERENCES" },
	{ "llc_misses", NULL, "LLC_MISSES" },
	{ "dcache_accesses", "DATA_CACHE_ACCESSES", NULL },
	{ "dcache_misses", "DATA_CACHE_MISSES", NULL },
	{ NULL, NULL, NULL }
};

char model[64];
int counters;
static const struct pvpfm_pers_desc *pers;
static const char *pmu_name;	/* NULL: no libpfm4 PMU (unknown personality) */
static char pmu_desc[128];
static bool rsvd_known;
static uint64_t pmc_rsvd, pmc_dfl;	/* pmu_desc/pmc0: reserved bits, default */

const char *events_libpfm_version(void)
{
	static char buf[32];
	int v = pfm_get_version();

	snprintf(buf, sizeof(buf), "API %d.%d", PFM_MAJ_VERSION(v),
		 PFM_MIN_VERSION(v));
	return buf;
}

uint64_t sysfs_u64(const char *rel, bool *ok)
{
	char buf[64], *end;
	uint64_t v;

	*ok = false;
	if (sysfs_read(rel, buf, sizeof(buf)))
		return 0;
	errno = 0;
	v = strtoull(buf, &end, 0);
	*ok = !errno && end != buf && !*end;
	return v;
}

static void libpfm_init(void)
{
	const char *old = getenv("LIBPFM_FORCE_PMU");
	char *saved = old ? strdup(old) : NULL;
	pfm_pmu_info_t pi;
	int ret;

	setenv("LIBPFM_FORCE_PMU", pmu_name, 1);
	ret = pfm_initialize();
	/* the command pfmon runs must not inherit our choice */
	if (saved) {
		setenv("LIBPFM_FORCE_PMU", saved, 1);
		free(saved);
	} else {
		unsetenv("LIBPFM_FORCE_PMU");
	}
	if (ret != PFM_SUCCESS)
		die("libpfm4 %s: cannot initialize for PMU %s: %s",
		    events_libpfm_version(), pmu_name, pfm_strerror(ret));
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(p, &pi) == PFM_SUCCESS && pi.is_present &&
		    !strcmp(pi.name, pmu_name)) {
			snprintf(pmu_desc, sizeof(pmu_desc), "%s", pi.desc);
			return;
		}
	}
	die("libpfm4 %s has no PMU %s (needed for the %s personality)",
	    events_libpfm_version(), pmu_name, pers->name);
}

void events_init(void)
{
	char buf[64];
	bool ok;
	uint64_t id;

	if (sysfs_read("version", buf, sizeof(buf)))
		die("no perfmon2 in this kernel (" SYSFS " missing): load perfmon2.ko (insmod perfmon2.ko) in a guest started with -device pv-perfmon");
	if (sysfs_read("pmu_desc/model", model, sizeof(model)))
		model[0] = '\0';
	id = sysfs_u64("device/personality", &ok);
	pers = ok ? pvpfm_pers_desc((uint32_t)id) : NULL;
	if (!pers)
		return;
	counters = pers->counters;
	id = sysfs_u64("device/counters", &ok);
	if (ok && id <= pers->counters_max)
		counters = (int)id;
	pmc_rsvd = sysfs_u64("pmu_desc/pmc0/rsvd_msk", &rsvd_known);
	pmc_dfl = sysfs_u64("pmu_desc/pmc0/dfl_val", &ok);
	rsvd_known = rsvd_known && ok;
	pmu_name = pers->libpfm4_pmu;
	if (pmu_name)
		libpfm_init();
}

/* dies unless the personality's PMC0..n-1 can hold @v */
static void check_expressible(const char *spec, uint64_t v)
{
	uint64_t bad = (v ^ pmc_dfl) & pmc_rsvd;

	if (rsvd_known && bad)
		die("event %s encodes to PMC value %#llx, whose bits %#llx are reserved in the %s personality (pmu_desc/pmc0/rsvd_msk %#llx): the guest's PMU cannot express this event",
		    spec, (unsigned long long)v, (unsigned long long)bad,
		    pers->name, (unsigned long long)pmc_rsvd);
}

/* perf spells its names with '-' (branch-misses), pfmon with '_' too */
static bool alias_is(const char *alias, const char *name)
{
	for (; *alias && (*alias == *name || (*alias == '_' && *name == '-'));
	     alias++, name++)
		;
	return !*alias && !*name;
}

static const char *alias_of(const char *name)
{
	for (const struct alias *a = aliases; a->name; a++)
		if (alias_is(a->name, name))
			return pers->vendor == PVPFM_VENDOR_AMD ? a->amd : a->intel;
	return NULL;
}

/* libpfm4's encoding of @name at @plm: 0, or a libpfm4 error */
static int encode(const char *name, unsigned int plm, uint64_t *v, int *ncodes)
{
	pfm_pmu_encode_arg_t arg;
	int ret;

	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(name, plm, PFM_OS_NONE, &arg);
	if (ret != PFM_SUCCESS)
		return ret;
	*v = arg.codes[0];
	*ncodes = arg.count;
	free(arg.codes);
	return 0;
}

void event_parse(const char *spec, unsigned int dfl_plm, int setid,
		 struct event *e)
{
	char name[sizeof(e->name)], *mod, *end;
	unsigned int plm = dfl_plm;
	const char *lname;
	bool plm_given = false;
	int ret, ncodes;
	uint64_t v;

	if (strlen(spec) >= sizeof(name))
		die("set %d: event name too long: '%.40s...'", setid, spec);
	if (!*spec)
		die("set %d: empty event name in an event list", setid);
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", spec);
	snprintf(name, sizeof(name), "%s", spec);
	/* pfmon's privilege levels, stripped: libpfm4 takes them as plm */
	mod = strrchr(name, ':');
	if (mod) {
		static const struct { const char *s; unsigned int plm; } lv[] = {
			{ "u", PLM_USER }, { "k", PLM_KERNEL },
			{ "uk", PLM_USER | PLM_KERNEL },
			{ "ku", PLM_USER | PLM_KERNEL },
		};

		for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++)
			if (!strcmp(mod + 1, lv[i].s)) {
				plm = lv[i].plm;
				plm_given = true;
				*mod = '\0';
			}
	}
	for (unsigned int n = PFM_FIRST_SW_PMD; n < PVPFM_VPMD_END; n++)
		if (!strcmp(pvpfm_vpmd_desc(n)->name, name)) {
			if (plm_given)
				die("%s: %s is a hypervisor event (virtual PMD): it has no user/kernel level, drop the :%s",
				    spec, name, mod + 1);
			e->vpmd = n;
			e->pmc = -1;
			return;
		}
	if (!pers)
		die("unknown event '%s': the device's personality is unknown here (pmu_desc/model '%s'), only the virtual PMDs are known (pfmon -l)",
		    spec, model);
	/* perf's raw form rHEX: PERFEVTSEL without the bits pfmon sets */
	if (name[0] == 'r' && name[1] && isxdigit((unsigned char)name[1])) {
		errno = 0;
		v = strtoull(name + 1, &end, 16);
		if (*end || errno)
			die("%s: a raw event is r and hex digits (PERFEVTSEL bits: event select 7:0, unit mask 15:8, edge 18, invert 23, counter mask 31:24%s)",
			    spec, pers->ext_event ? ", event select 11:8 in 35:32" : "");
		if (v & PVPFM_EVTSEL_CONTROL)
			die("%s: bits 16, 17, 20 and 22 (USR, OS, INT, EN) are pfmon's: use :u, :k or -u/-k for the levels",
			    spec);
		v |= PVPFM_EVTSEL_INT | PVPFM_EVTSEL_EN;
		v |= plm & PLM_USER ? PVPFM_EVTSEL_USR : 0;
		v |= plm & PLM_KERNEL ? PVPFM_EVTSEL_OS : 0;
		check_expressible(spec, v);
		e->pmc_value = v;
		return;
	}
	if (!pmu_name)
		die("unknown event '%s': no libpfm4 PMU for the %s personality; use rHEX or a virtual PMD",
		    spec, pers->name);
	lname = alias_of(name);
	if (!lname)
		lname = name;
	ret = encode(lname, plm, &v, &ncodes);
	switch (ret) {
	case 0:
		break;
	case PFM_ERR_NOTFOUND:
		die("unknown event '%s' (%s, libpfm4 PMU %s; pfmon -l lists the events)",
		    spec, pers->name, pmu_name);
	case PFM_ERR_UMASK:
		die("event %s needs a unit mask: EVENT:UMASK (pfmon -l lists them)",
		    spec);
	case PFM_ERR_ATTR:
	case PFM_ERR_ATTR_VAL:
	case PFM_ERR_ATTR_SET:
		die("event %s: bad unit mask or modifier (%s; pfmon -l lists the unit masks; levels are :u, :k, :uk)",
		    spec, pfm_strerror(ret));
	default:
		die("event %s: libpfm4 cannot encode it for %s: %s", spec,
		    pmu_name, pfm_strerror(ret));
	}
	if (ncodes != 1)
		die("event %s needs %d registers (libpfm4 %s): the %s personality has one PMC per counter and cannot express it",
		    spec, ncodes, pmu_name, pers->name);
	check_expressible(spec, v);
	e->pmc_value = v;
}

/* --- pfmon -l --- */

enum probe { P_BACKED, P_EMULATED, P_NOTAVAIL, P_MEDIATED, P_INVALID,
	     P_RESERVED };

struct listed {
	char name[160];
	const char *desc;
	uint64_t v;
	enum probe st;
};

static struct listed *lst;
static size_t nlst, lst_cap;

static void add_listed(const char *ev, const char *umask, const char *desc,
		       uint64_t v)
{
	struct listed *l;

	lst = grow(lst, &lst_cap, nlst, sizeof(*lst), 256);
	l = &lst[nlst++];
	snprintf(l->name, sizeof(l->name), "%s%s%s", ev, umask ? ":" : "",
		 umask ? umask : "");
	l->desc = desc;
	l->v = v;
	l->st = rsvd_known && ((v ^ pmc_dfl) & pmc_rsvd) ? P_RESERVED : P_BACKED;
}

/* every event and unit mask of the PMU, with its PMC value at :uk */
static void collect(void)
{
	pfm_pmu_info_t pi;
	int first = -1;

	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX && first < 0; p++) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(p, &pi) == PFM_SUCCESS && pi.is_present &&
		    !strcmp(pi.name, pmu_name))
			first = pi.first_event;
	}
	for (int i = first; i >= 0; i = pfm_get_event_next(i)) {
		pfm_event_info_t info;
		char full[256];
		uint64_t v;
		int n;

		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_event_info(i, PFM_OS_NONE, &info) != PFM_SUCCESS)
			continue;
		/* the event alone: its default unit masks, if it has any */
		if (!encode(info.name, PLM_USER | PLM_KERNEL, &v, &n) && n == 1)
			add_listed(info.name, NULL, info.desc, v);
		for (int a = 0; a < info.nattrs; a++) {
			pfm_event_attr_info_t ai;

			memset(&ai, 0, sizeof(ai));
			ai.size = sizeof(ai);
			if (pfm_get_event_attr_info(i, a, PFM_OS_NONE, &ai) !=
			    PFM_SUCCESS || ai.type != PFM_ATTR_UMASK)
				continue;
			snprintf(full, sizeof(full), "%s:%s", info.name, ai.name);
			if (!encode(full, PLM_USER | PLM_KERNEL, &v, &n) && n == 1)
				add_listed(info.name, ai.name, ai.desc, v);
		}
	}
}

/*
 * Ask the host about each value: PMC0 written with a vector of them, as
 * many per call as the host takes (max_vector) and the driver copies
 * (arg_mem_max bytes). A refused entry stops the call (the entries
 * before it were accepted): go on after it.
 */
static void probe(int fd)
{
	pfarg_pmc_t *pc;
	size_t *idx;
	bool ok, ok_mem;
	uint64_t maxv = sysfs_u64("device/max_vector", &ok);
	uint64_t mem = sysfs_u64("controls/arg_mem_max", &ok_mem);
	size_t per = ok && maxv ? (size_t)maxv : 16, i = 0;

	if (ok_mem && mem / sizeof(pfarg_pmc_t) < per)
		per = mem / sizeof(pfarg_pmc_t);
	if (!per)
		per = 1;
	pc = calloc(per, sizeof(*pc));
	idx = calloc(per, sizeof(*idx));

	if (!pc || !idx)
		die("out of memory");
	while (i < nlst) {
		size_t n = 0;

		for (size_t j = i; j < nlst && n < per; j++) {
			if (lst[j].st == P_RESERVED)
				continue;
			memset(&pc[n], 0, sizeof(pc[n]));
			pc[n].reg_value = lst[j].v;
			idx[n++] = j;
		}
		if (!n)
			break;
		if (!pfm_write_pmcs(fd, pc, (int)n)) {
			for (size_t k = 0; k < n; k++)
				lst[idx[k]].st = pc[k].reg_flags &
						 PVPFM_REG_RETFL_EMULATED ?
						 P_EMULATED : P_BACKED;
			i = idx[n - 1] + 1;
			continue;
		}
		for (size_t k = 0; k < n; k++) {
			uint32_t f = pc[k].reg_flags;

			if (!PFM_REG_HAS_ERROR(f)) {
				lst[idx[k]].st = f & PVPFM_REG_RETFL_EMULATED ?
						 P_EMULATED : P_BACKED;
				continue;
			}
			if (!(f & PFM_REG_RETFL_NOTAVAIL))
				lst[idx[k]].st = P_INVALID;
			else if (f & PVPFM_REG_RETFL_HOST_MEDIATED)
				lst[idx[k]].st = P_MEDIATED;
			else
				lst[idx[k]].st = P_NOTAVAIL;
			i = idx[k] + 1;
			break;
		}
		/* no entry marked: the whole call failed */
		if (i <= idx[0])
			die("probing events on the host: %s", strerror(errno));
	}
	free(pc);
	free(idx);
}

void list_events(int fd)
{
	static const char *const st_txt[] = {
		[P_BACKED] = "",
		[P_EMULATED] = " [emulated: the host backs it with another event]",
		[P_NOTAVAIL] = " [not available on this host]",
		[P_MEDIATED] = " [not available now: the host's PMU belongs to KVM's mediated vPMU]",
		[P_INVALID] = " [refused as invalid by the host]",
		[P_RESERVED] = " [not expressible: reserved bits of the personality]",
	};
	size_t cnt[P_RESERVED + 1] = { 0 };
	char buf[64];

	printf("PMU model: %s (%s personality), %d counters%s\n",
	       model[0] ? model : "?", pers ? pers->name : "unknown", counters,
	       !sysfs_read("device/features", buf, sizeof(buf)) &&
	       (strtoul(buf, NULL, 0) & PVPFM_F_EVENT_MAP) ?
	       "; the host aliases some events (event map)" : "");
	printf("virtual PMDs (hypervisor events; no :u/:k):\n");
	for (unsigned int n = PFM_FIRST_SW_PMD; n < PVPFM_VPMD_END; n++) {
		const struct pvpfm_vpmd_desc *d = pvpfm_vpmd_desc(n);
		pfarg_pmd_t pd;

		memset(&pd, 0, sizeof(pd));
		pd.reg_num = n;
		printf("  %-18s PMD%u  %s (%s)%s\n", d->name, n, d->what, d->unit,
		       pfm_write_pmds(fd, &pd, 1) ?
		       " [not available on this host]" : "");
	}
	if (!pmu_name) {
		printf("hardware events: no libpfm4 PMU for this personality; use rHEX\n");
		return;
	}
	collect();
	probe(fd);
	printf("hardware events of libpfm4 %s PMU %s (%s), PMC value at :uk, probed on the host:\n",
	       events_libpfm_version(), pmu_name, pmu_desc);
	for (size_t i = 0; i < nlst; i++) {
		printf("  %-48s %#12llx  %s%s\n", lst[i].name,
		       (unsigned long long)lst[i].v, lst[i].desc,
		       st_txt[lst[i].st]);
		cnt[lst[i].st]++;
	}
	printf("%zu events and unit masks: %zu backed by the host, %zu emulated, %zu not available on this host, %zu not available while KVM's mediated vPMU holds the host's PMU, %zu refused as invalid, %zu not expressible\n",
	       nlst, cnt[P_BACKED], cnt[P_EMULATED], cnt[P_NOTAVAIL],
	       cnt[P_MEDIATED], cnt[P_INVALID], cnt[P_RESERVED]);
	printf("perf's names:");
	for (const struct alias *a = aliases; a->name; a++) {
		const char *t = alias_of(a->name);

		if (t)
			printf(" %s=%s", a->name, t);
	}
	printf("\nlevels: EVENT:u (user), EVENT:k (kernel), EVENT:uk (default; -u/-k change it)\n");
	printf("raw: rHEX, PERFEVTSEL without USR/OS/INT/EN (event select 7:0, unit mask 15:8%s)\n",
	       pers->ext_event ? ", event select 11:8 in 35:32" : "");
	free(lst);
}
