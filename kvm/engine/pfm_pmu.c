// SPDX-License-Identifier: GPL-2.0
/*
 * PMU description tables: the personalities the guest can be given, with
 * perfmon2's x86 register numbering, defaults and reserved bits, so that
 * libpfm-3.x computes valid PMC values unmodified.
 *
 * Tables describe each personality as groups of registers; pfm_pmu_init()
 * walks them to instantiate one PMU per engine. What a personality is
 * beyond its registers (model, vendor, counter counts) is the one table
 * in include/uapi/pv_perfmon.h; the engine configuration may ask for
 * another number of counters where that table allows it.
 */
#include "pfm_priv.h"

#define UPPER32			(~((1ULL << 32) - 1))

/* perfmon2's perfmon_amd64.c: K8 and family 10h reserved bits */
#define AMD64_K8_RSVD		(UPPER32 | PVPFM_EVTSEL_INT | (1ULL << 21))
#define AMD64_FAM10H_RSVD	((0x3fffffULL << 42) | (0xfULL << 36) | \
				 PVPFM_EVTSEL_INT | (1ULL << 21))
/* perfmon2's perfmon_intel_arch.c; bit 21 (AnyThread) is free from v3 */
#define INTEL_EVTSEL_RSVD	(UPPER32 | PVPFM_EVTSEL_INT | (1ULL << 21))
#define INTEL_EVTSEL_RSVD_V3	(UPPER32 | PVPFM_EVTSEL_INT)
#define INTEL_FIXED_CTRL_DFL	0x8888888888888888ULL	/* PMI on every counter */
#define INTEL_FIXED_CTRL_PMC	PVPFM_INTEL_FIXED_BASE
#define INTEL_FIXED_PMD_BASE	PVPFM_INTEL_FIXED_BASE

/* FIXED_CTR_CTRL, 4 bits per fixed counter */
#define FIXED_FIELD_OS		0x1
#define FIXED_FIELD_USR		0x2
#define FIXED_FIELD_ANY		0x4
#define FIXED_FIELD_PMI		0x8
#define FIXED_FIELD_BITS	4
#define FIXED_FIELD_MASK	((1ULL << FIXED_FIELD_BITS) - 1)

/* how many registers a group has */
enum pfm_group_count {
	PFM_N_GP,		/* generic counters */
	PFM_N_FIXED,		/* cfg->fixed_counters */
	PFM_N_FIXED_CTRL,	/* 1 if there are fixed counters */
};

struct pfm_reg_group {
	enum pfm_reg_type type;
	enum pfm_group_count count;
	u16 first;		/* index of the first register */
	const char *name;	/* prefix; the number in the group follows */
	u64 dfl_val;
	u64 rsvd_msk;
};

/* a personality's registers; the rest of it is pvpfm_pers_table()'s */
struct pfm_personality {
	const struct pfm_reg_group *groups;
	unsigned int nr_groups;
};

static const struct pfm_reg_group amd64_k8_groups[] = {
	{ PFM_RT_PMC_EVTSEL, PFM_N_GP, 0, "PERFSEL", PVPFM_EVTSEL_INT, AMD64_K8_RSVD },
	{ PFM_RT_PMD_GENERIC, PFM_N_GP, 0, "PERFCTR", 0, 0 },
};

static const struct pfm_reg_group amd64_fam10h_groups[] = {
	{ PFM_RT_PMC_EVTSEL, PFM_N_GP, 0, "PERFSEL", PVPFM_EVTSEL_INT, AMD64_FAM10H_RSVD },
	{ PFM_RT_PMD_GENERIC, PFM_N_GP, 0, "PERFCTR", 0, 0 },
};

/* rsvd_msk of the EVTSELs and FIXED_CTRL depend on the version: see below */
static const struct pfm_reg_group intel_arch_groups[] = {
	{ PFM_RT_PMC_EVTSEL, PFM_N_GP, 0, "PERFEVTSEL", PVPFM_EVTSEL_INT, INTEL_EVTSEL_RSVD },
	{ PFM_RT_PMC_FIXED_CTRL, PFM_N_FIXED_CTRL, INTEL_FIXED_CTRL_PMC,
	  "FIXED_CTRL", INTEL_FIXED_CTRL_DFL, 0 },
	{ PFM_RT_PMD_GENERIC, PFM_N_GP, 0, "PMC", 0, 0 },
	{ PFM_RT_PMD_FIXED, PFM_N_FIXED, INTEL_FIXED_PMD_BASE, "FIXED_CTR", 0, 0 },
};

static const struct pfm_personality personalities[PVPFM_PERS_COUNT] = {
	[PVPFM_PERS_AMD64] = {
		amd64_fam10h_groups, PFM_ARRAY_SIZE(amd64_fam10h_groups) },
	[PVPFM_PERS_AMD64_K8] = {
		amd64_k8_groups, PFM_ARRAY_SIZE(amd64_k8_groups) },
	[PVPFM_PERS_INTEL_ARCH] = {
		intel_arch_groups, PFM_ARRAY_SIZE(intel_arch_groups) },
};

static void name_format(char *dst, const char *prefix, unsigned int n,
			bool numbered)
{
	char digits[8];
	unsigned int i = 0, d = 0;

	while (prefix[i] && i < PFM_REG_NAME_LEN - 4) {
		dst[i] = prefix[i];
		i++;
	}
	if (numbered) {
		do {
			digits[d++] = '0' + n % 10;
			n /= 10;
		} while (n && d < sizeof(digits));
		while (d)
			dst[i++] = digits[--d];
	}
	dst[i] = '\0';
}

static unsigned int group_count(const struct pfm_reg_group *g,
				const struct pfm_engine_cfg *cfg)
{
	switch (g->count) {
	case PFM_N_GP:
		return cfg->gp_counters;
	case PFM_N_FIXED:
		return cfg->fixed_counters;
	case PFM_N_FIXED_CTRL:
		return cfg->fixed_counters ? 1 : 0;
	}
	return 0;
}

/* perfmon2's rule: PMI (and AnyThread before v3) of used fields reserved,
 * unused fields wholly reserved and cleared in the default value
 */
static void fixed_ctrl_masks(struct pfm_reg_desc *d,
			     const struct pfm_engine_cfg *cfg)
{
	u64 field_rsvd = cfg->arch_version >= 3 ? FIXED_FIELD_PMI :
			 FIXED_FIELD_PMI | FIXED_FIELD_ANY;
	unsigned int i, shift;

	d->rsvd_msk = 0;
	for (i = 0; i < 64 / FIXED_FIELD_BITS; i++) {
		shift = i * FIXED_FIELD_BITS;
		if (i < cfg->fixed_counters) {
			d->rsvd_msk |= field_rsvd << shift;
		} else {
			d->rsvd_msk |= FIXED_FIELD_MASK << shift;
			d->dfl_val &= ~(FIXED_FIELD_MASK << shift);
		}
	}
}

static int add_reg(struct pfm_pmu *pmu, const struct pfm_reg_group *g,
		   unsigned int i, const struct pfm_engine_cfg *cfg)
{
	bool is_pmc = g->type == PFM_RT_PMC_EVTSEL ||
		      g->type == PFM_RT_PMC_FIXED_CTRL;
	u16 num = g->first + i;
	struct pfm_reg_desc *d;

	if (is_pmc) {
		if (pmu->nr_pmcs >= PFM_PMU_MAX_PMCS || num >= PFM_MAX_HW_PMCS)
			return -EINVAL;
		pmu->pmc_slot[num] = pmu->nr_pmcs;
		pfm_bit_set(pmu->impl_pmcs, num);
		if (num + 1 > pmu->max_pmc)
			pmu->max_pmc = num + 1;
		d = &pmu->pmc[pmu->nr_pmcs++];
	} else {
		if (pmu->nr_pmds >= PFM_PMU_MAX_PMDS || num >= PFM_MAX_HW_PMDS)
			return -EINVAL;
		pmu->pmd_slot[num] = pmu->nr_pmds;
		pfm_bit_set(pmu->impl_pmds, num);
		if (num + 1 > pmu->max_pmd)
			pmu->max_pmd = num + 1;
		d = &pmu->pmd[pmu->nr_pmds++];
	}
	d->type = g->type;
	d->num = num;
	d->index = i;
	d->dfl_val = g->dfl_val;
	d->rsvd_msk = g->rsvd_msk;
	d->dep_pmc = g->type == PFM_RT_PMD_GENERIC ? i : INTEL_FIXED_CTRL_PMC;
	name_format(d->name, g->name, i, g->type != PFM_RT_PMC_FIXED_CTRL);

	if (g->type == PFM_RT_PMC_EVTSEL && cfg->personality == PVPFM_PERS_INTEL_ARCH &&
	    cfg->arch_version >= 3)
		d->rsvd_msk = INTEL_EVTSEL_RSVD_V3;
	if (g->type == PFM_RT_PMC_FIXED_CTRL)
		fixed_ctrl_masks(d, cfg);
	return 0;
}

/* hypervisor events, the same for every personality */
static int add_virtual_pmds(struct pfm_pmu *pmu)
{
	struct pfm_reg_desc *d;
	unsigned int num;

	for (num = PFM_FIRST_SW_PMD; num < PVPFM_VPMD_END; num++) {
		if (pmu->nr_pmds >= PFM_PMU_MAX_PMDS)
			return -EINVAL;
		d = &pmu->pmd[pmu->nr_pmds];
		d->type = PFM_RT_PMD_VIRTUAL;
		d->num = num;
		d->index = num;
		d->dep_pmc = PFM_NO_SLOT;
		name_format(d->name, pvpfm_vpmd_name(num), 0, false);
		pmu->pmd_slot[d->num] = pmu->nr_pmds++;
		pfm_bit_set(pmu->impl_pmds, d->num);
		pmu->max_pmd = d->num + 1;
	}
	return 0;
}

int pfm_pmu_init(struct pfm_pmu *pmu, const struct pfm_engine_cfg *cfg)
{
	const struct pvpfm_pers_desc *d = pvpfm_pers_desc(cfg->personality);
	const struct pfm_personality *p;
	struct pfm_engine_cfg c = *cfg;
	unsigned int g, i, n;
	int ret;

	if (!d || !personalities[cfg->personality].groups)
		return -EINVAL;
	if (!c.gp_counters)
		c.gp_counters = d->counters;
	if (c.gp_counters > d->counters_max)
		return -EINVAL;
	if (cfg->personality == PVPFM_PERS_INTEL_ARCH &&
	    (c.fixed_counters > 64 / FIXED_FIELD_BITS ||
	     c.arch_version < 1 || c.arch_version > 3 ||
	     (c.arch_version < 2 && c.fixed_counters)))
		return -EINVAL;

	p = &personalities[cfg->personality];
	pfm_memset(pmu, 0, sizeof(*pmu));
	pfm_memset(pmu->pmc_slot, 0xff, sizeof(pmu->pmc_slot));
	pfm_memset(pmu->pmd_slot, 0xff, sizeof(pmu->pmd_slot));
	pmu->id = cfg->personality;
	pmu->model = d->model;
	pmu->ext_event = d->ext_event;

	for (g = 0; g < p->nr_groups; g++) {
		n = group_count(&p->groups[g], &c);
		for (i = 0; i < n; i++) {
			ret = add_reg(pmu, &p->groups[g], i, &c);
			if (ret)
				return ret;
		}
	}
	return add_virtual_pmds(pmu);
}

/* decode a PERFSEL/PERFEVTSEL value; false if it does not count */
static bool decode_evtsel(const struct pfm_pmu *pmu, u64 v,
			  struct pfm_event *ev)
{
	ev->kind = PFM_EVK_GENERIC;
	ev->event_select = v & PVPFM_EVTSEL_EVENT;
	if (pmu->ext_event)
		ev->event_select |= ((v & PVPFM_EVTSEL_AMD_EXT) >>
				     PVPFM_EVTSEL_AMD_EXT_SHIFT) << 8;
	ev->unit_mask = (v & PVPFM_EVTSEL_UMASK) >> PVPFM_EVTSEL_UMASK_SHIFT;
	ev->counter_mask = (v & PVPFM_EVTSEL_CMASK) >> PVPFM_EVTSEL_CMASK_SHIFT;
	ev->usr = v & PVPFM_EVTSEL_USR;
	ev->os = v & PVPFM_EVTSEL_OS;
	ev->edge = v & PVPFM_EVTSEL_EDGE;
	ev->invert = v & PVPFM_EVTSEL_INV;
	ev->pmc_value = v;
	return v & PVPFM_EVTSEL_EN;
}

/* decode fixed counter @idx's field of FIXED_CTR_CTRL */
static bool decode_fixed(u64 ctrl, u16 idx, struct pfm_event *ev)
{
	u64 field = (ctrl >> (idx * FIXED_FIELD_BITS)) & FIXED_FIELD_MASK;

	ev->kind = PFM_EVK_FIXED;
	ev->code = idx;
	ev->os = field & FIXED_FIELD_OS;
	ev->usr = field & FIXED_FIELD_USR;
	ev->pmc_value = ctrl;
	return ev->os || ev->usr;
}

/*
 * The event PMD @pmd counts under PMC value @pmc_value (ignored for
 * virtual PMDs). False if that configuration counts nothing.
 */
bool pfm_pmd_event_for(const struct pfm_engine *e, u16 pmd, u64 pmc_value,
		       struct pfm_event *ev)
{
	const struct pfm_reg_desc *d = pfm_pmd_desc(&e->pmu, pmd);

	pfm_memset(ev, 0, sizeof(*ev));
	ev->personality = e->pmu.id;
	ev->pmd = pmd;
	if (!d)
		return false;
	switch (d->type) {
	case PFM_RT_PMD_GENERIC:
		return decode_evtsel(&e->pmu, pmc_value, ev);
	case PFM_RT_PMD_FIXED:
		return decode_fixed(pmc_value, d->index, ev);
	case PFM_RT_PMD_VIRTUAL:
		ev->kind = PFM_EVK_VIRTUAL;
		ev->code = d->index;
		ev->usr = true;
		ev->os = true;
		return true;
	default:
		return false;
	}
}

/* the event PMD @pmd counts in @set, false if it counts nothing there */
bool pfm_pmd_event(const struct pfm_engine *e, const struct pfm_set *set,
		   u16 pmd, struct pfm_event *ev)
{
	const struct pfm_reg_desc *d = pfm_pmd_desc(&e->pmu, pmd);
	const u64 *pmc;

	if (!d)
		return false;
	if (d->type == PFM_RT_PMD_VIRTUAL)
		return pfm_bit_test(set->used_pmds, pmd) &&
		       pfm_pmd_event_for(e, pmd, 0, ev);
	pmc = pfm_set_pmc(&e->pmu, set, d->dep_pmc);
	if (!pmc || !pfm_bit_test(set->used_pmcs, d->dep_pmc))
		return false;
	return pfm_pmd_event_for(e, pmd, *pmc, ev);
}

/* the PMDs whose event PMC @pmc programs, as a PFM_PMD_BV bitmap */
void pfm_pmc_pmds(const struct pfm_pmu *pmu, u16 pmc, u64 *pmds)
{
	unsigned int i;

	pfm_memset(pmds, 0, PFM_PMD_BV * sizeof(u64));
	for (i = 0; i < pmu->nr_pmds; i++)
		if (pmu->pmd[i].type != PFM_RT_PMD_VIRTUAL &&
		    pmu->pmd[i].dep_pmc == pmc)
			pfm_bit_set(pmds, pmu->pmd[i].num);
}

/* the largest default-format entry: every PMD recorded */
u32 pfm_max_entry_size(const struct pfm_pmu *pmu)
{
	return sizeof(pfm_dfl_smpl_entry_t) + pmu->nr_pmds * sizeof(u64);
}

int pfm_cmd_pmu_info(struct pfm_cmd_args *a)
{
	struct pvpfm_pmu_info *info = a->arg;
	struct pfm_engine *e = a->e;
	unsigned int i;

	pfm_memset(info, 0, sizeof(*info));
	for (i = 0; e->pmu.model[i] && i < PVPFM_MODEL_LEN - 1; i++)
		info->model[i] = e->pmu.model[i];
	info->num_pmcs = e->pmu.nr_pmcs;
	info->num_pmds = e->pmu.nr_pmds;
	info->max_pmc = e->pmu.max_pmc;
	info->max_pmd = e->pmu.max_pmd;
	info->max_contexts = e->lim.max_contexts;
	info->max_sets = e->lim.max_sets;
	info->max_vector = e->lim.max_vector;
	info->set_timeout_res_ns = e->cfg.timer_granularity_ns;
	info->max_smpl_buf = e->lim.max_smpl_buf;
	pfm_memcpy(info->impl_pmcs, e->pmu.impl_pmcs, sizeof(info->impl_pmcs));
	pfm_memcpy(info->impl_pmds, e->pmu.impl_pmds, sizeof(info->impl_pmds));
	return 0;
}

static void reg_desc_fill(struct pvpfm_reg_desc *out,
			  const struct pfm_reg_desc *d, bool is_pmc)
{
	pfm_memset(out, 0, sizeof(*out));
	out->type = is_pmc ? PVPFM_REG_PMC : PVPFM_REG_PMD;
	out->num = d->num;
	if (d->type == PFM_RT_PMD_VIRTUAL)
		out->flags |= PVPFM_REGF_VIRTUAL;
	if (!is_pmc)
		out->flags |= PVPFM_REGF_COUNTER;
	out->dfl_val = d->dfl_val;
	out->rsvd_msk = d->rsvd_msk;
	pfm_memcpy(out->name, d->name, sizeof(out->name));
}

/* registers from position ctx_id on: PMCs then PMDs, each in slot order */
int pfm_cmd_reg_desc(struct pfm_cmd_args *a)
{
	const struct pfm_pmu *pmu = &a->e->pmu;
	struct pvpfm_reg_desc *out = a->arg;
	u32 pos = a->hdr->ctx_id, n, i;

	/* @pos is the guest's: clamped before each table load (nospec) */
	for (n = 0; n < a->hdr->count; n++, pos++) {
		if (pos < pmu->nr_pmcs) {
			i = pfm_index_nospec(pos, (u32)pmu->nr_pmcs);
			reg_desc_fill(&out[n], &pmu->pmc[i], true);
		} else if (pos < (u32)pmu->nr_pmcs + pmu->nr_pmds) {
			i = pfm_index_nospec(pos - pmu->nr_pmcs,
					     (u32)pmu->nr_pmds);
			reg_desc_fill(&out[n], &pmu->pmd[i], false);
		} else {
			break;
		}
	}
	a->hdr->count = n;
	return 0;
}
