/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine's private data structures. Nothing outside kvm/engine/
 * includes this file.
 *
 * Object model, per VM (struct pfm_engine):
 *   - a register description (struct pfm_pmu) instantiated from the
 *     personality tables: which PMC/PMD indexes exist, their defaults,
 *     reserved bits and what each PMD counts;
 *   - up to limits.max_contexts contexts, each with 1..limits.max_sets
 *     event sets kept in id order (set 0 at creation);
 *   - per vCPU, the context currently active there (in), if any.
 *
 * A context is "in" on a vCPU when it is loaded and its thread (per-thread)
 * runs there, or always for a system-wide context. While in, the PMDs of
 * its active set that count are backed by open backend counters. It is
 * "counting" while in, started and not masked: counters enabled, active
 * time and set timeouts running.
 *
 * Register state is kept per set in "slots": the n-th implemented PMC or
 * PMD of the personality, so sets cost what the PMU has, not 320 entries.
 */
#ifndef _PFM_PRIV_H
#define _PFM_PRIV_H

#include "pfm_engine.h"

#define PFM_NO_SLOT		0xffff

/* slots: the most registers a personality instantiates */
#define PFM_PMU_MAX_PMCS	24	/* intel_arch: 16 EVTSEL + FIXED_CTRL */
#define PFM_PMU_MAX_PMDS	48	/* 16 generic + 16 fixed + virtual */

/* what a register is, in the description tables */
enum pfm_reg_type {
	PFM_RT_NONE,
	PFM_RT_PMC_EVTSEL,	/* PERFSEL/PERFEVTSEL: controls one PMD */
	PFM_RT_PMC_FIXED_CTRL,	/* FIXED_CTR_CTRL: 4 bits per fixed PMD */
	PFM_RT_PMD_GENERIC,	/* counter programmed by an EVTSEL PMC */
	PFM_RT_PMD_FIXED,	/* fixed counter, enabled by FIXED_CTRL */
	PFM_RT_PMD_VIRTUAL,	/* hypervisor event, always enabled */
};

#define PFM_REG_NAME_LEN	PVPFM_REG_NAME_LEN

struct pfm_reg_desc {
	enum pfm_reg_type type;
	u16 num;		/* register index */
	u16 dep_pmc;		/* PMD: index of its controlling PMC */
	u16 index;		/* FIXED: counter number; VIRTUAL: event */
	u64 dfl_val;
	u64 rsvd_msk;		/* reserved bits: must keep dfl_val's value */
	char name[PFM_REG_NAME_LEN];
};

struct pfm_pmu {
	u32 id;			/* enum pvpfm_personality */
	const char *model;
	bool ext_event;		/* AMD: event select bits 11:8 in PMC 35:32 */
	u16 nr_pmcs, nr_pmds;	/* slots */
	u16 max_pmc, max_pmd;	/* highest index + 1 */
	struct pfm_reg_desc pmc[PFM_PMU_MAX_PMCS];	/* by slot */
	struct pfm_reg_desc pmd[PFM_PMU_MAX_PMDS];
	u16 pmc_slot[PFM_MAX_PMCS];	/* index -> slot or PFM_NO_SLOT */
	u16 pmd_slot[PFM_MAX_PMDS];
	u64 impl_pmcs[PFM_PMC_BV];
	u64 impl_pmds[PFM_PMD_BV];
};

/*
 * Slot lookups. Every PMC/PMD number goes through these, whoever chose
 * it: one the personality does not implement, or past the tables, has
 * no slot (PFM_NO_SLOT) and the callers skip it, so a check missed
 * upstream (a guest's vector, a restored stream, a backend's bitmap)
 * cannot index 0xffff entries past a set's registers. A number may be a
 * guest's: the table load it selects and the slot are clamped under
 * speculation (Spectre v1), so a mispredicted check never loads past
 * the tables either.
 */
static inline u16 pfm_slot_lookup(const u16 *table, unsigned int max,
				  u16 nr, unsigned int num)
{
	u16 slot;

	if (num >= max)
		return PFM_NO_SLOT;
	slot = table[pfm_index_nospec(num, max)];
	if (slot >= nr)
		return PFM_NO_SLOT;
	return pfm_index_nospec(slot, nr);
}

/* the slot of PMC/PMD @num, or PFM_NO_SLOT */
static inline u16 pfm_pmc_slot(const struct pfm_pmu *pmu, unsigned int num)
{
	return pfm_slot_lookup(pmu->pmc_slot, PFM_MAX_PMCS, pmu->nr_pmcs, num);
}

static inline u16 pfm_pmd_slot(const struct pfm_pmu *pmu, unsigned int num)
{
	return pfm_slot_lookup(pmu->pmd_slot, PFM_MAX_PMDS, pmu->nr_pmds, num);
}

/*
 * The element of slot @slot of an array of @nr, or NULL for
 * PFM_NO_SLOT; clamped again, as the caller's test of NULL may be
 * mispredicted
 */
#define pfm_slot_elem(array, slot, nr) ({				\
	u16 pfm_s_ = (slot);						\
	pfm_s_ == PFM_NO_SLOT ? NULL :					\
		&(array)[pfm_index_nospec(pfm_s_, (nr))];		\
})

/* the description of PMC/PMD @num, NULL if the personality has none */
static inline const struct pfm_reg_desc *
pfm_pmc_desc(const struct pfm_pmu *pmu, unsigned int num)
{
	return pfm_slot_elem(pmu->pmc, pfm_pmc_slot(pmu, num), pmu->nr_pmcs);
}

static inline const struct pfm_reg_desc *
pfm_pmd_desc(const struct pfm_pmu *pmu, unsigned int num)
{
	return pfm_slot_elem(pmu->pmd, pfm_pmd_slot(pmu, num), pmu->nr_pmds);
}

/* PMD state in a set */
struct pfm_pmd {
	u64 value;		/* 64-bit value, or its upper bits while live */
	u64 lval;		/* last value it was reset to */
	u64 long_reset;
	u64 short_reset;
	u64 reset_pmds[PFM_PMD_BV];
	u64 smpl_pmds[PFM_PMD_BV];
	u64 eventid;
	u64 random_mask;
	u32 seed;		/* randomization generator state */
	u32 flags;		/* PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_RANDOM */
	u64 ovflsw_thres;	/* overflows left before the set switches */
	u64 ovflsw_ref;		/* as programmed */
};

struct pfm_set {
	u16 id;
	u32 flags;		/* PFM_SETFL_* */
	u64 timeout;		/* effective timeout (ns) */
	u64 timeout_left;	/* of the current activation */
	u64 runs;		/* activations */
	u64 act_duration;	/* ns counted while active */
	u64 host_enabled_ns;	/* backing counters: enabled vs running */
	u64 host_running_ns;
	u64 ovfls_lost;		/* not delivered: throttled, or found late */
	u64 host_throttles;	/* perf throttled a backing event */
	u64 periods_raised;	/* perf refused a period as too short */
	u64 ovfl_pmds[PFM_PMD_BV];	/* last overflowed PMDs */
	u64 used_pmcs[PFM_PMC_BV];
	u64 used_pmds[PFM_PMD_BV];
	u64 *pmcs;		/* [pmu.nr_pmcs] */
	struct pfm_pmd *pmds;	/* [pmu.nr_pmds] */
};

/* the value of PMC @num in @set, NULL if the personality has no such PMC */
static inline u64 *pfm_set_pmc(const struct pfm_pmu *pmu,
			       const struct pfm_set *set, unsigned int num)
{
	return pfm_slot_elem(set->pmcs, pfm_pmc_slot(pmu, num), pmu->nr_pmcs);
}

/* the state of PMD @num in @set, NULL if the personality has no such PMD */
static inline struct pfm_pmd *pfm_set_pmd(const struct pfm_pmu *pmu,
					  const struct pfm_set *set,
					  unsigned int num)
{
	return pfm_slot_elem(set->pmds, pfm_pmd_slot(pmu, num), pmu->nr_pmds);
}

/* what a guest may set: in a context's flags, a PMD's, a set's */
#define PFM_CTX_FLAGS_KNOWN \
	(PFM_FL_NOTIFY_BLOCK | PFM_FL_SYSTEM_WIDE | PFM_FL_OVFL_NO_MSG | \
	 PVPFM_FL_NO_KERNEL_IP)
#define PFM_REGFL_PMD_KNOWN	(PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_RANDOM)
#define PFM_SETFL_KNOWN		(PFM_SETFL_OVFL_SWITCH | PFM_SETFL_TIME_SWITCH)

enum pfm_ctx_state {
	PFM_CTX_UNLOADED,
	PFM_CTX_LOADED,
	PFM_CTX_MASKED,		/* after an overflow; waits for restart */
};

#define PFM_SMPL_NONE		0
#define PFM_SMPL_DFL		1

/* the default format's buffer, in guest pages */
struct pfm_smpl {
	int fmt;		/* PFM_SMPL_* */
	u64 buf_size;
	u32 buf_flags;
	u32 nr_pages;
	u32 nr_registered;
	u64 *pages;		/* gpa | PFM_SMPL_PAGE_PRESENT */
	pfm_dfl_smpl_hdr_t hdr;	/* authoritative copy of the header */
};

#define PFM_SMPL_PAGE_PRESENT	1ULL

struct pfm_context {
	u32 id;
	u32 flags;		/* PFM_FL_* */
	enum pfm_ctx_state state;
	bool started;
	bool counting;
	bool blocked;		/* NOTIFY_BLOCK: thread waits for restart */
	bool saturated;		/* MASKED, nothing notified: no restart */
	bool switch_pending;	/* MASKED: restart switches to the next set */
	u32 load_pid;		/* thread, or CPU for system-wide */
	u32 tid, tgid;		/* monitored thread, for samples/messages */
	s32 vcpu;		/* where it is in, or -1 */
	u64 act_start;		/* now_ns() when counting began */

	u32 nr_sets;
	struct pfm_set **sets;	/* [limits.max_sets], sorted by id */
	struct pfm_set *active;

	/* backing counters of the active set while in, by PMD slot */
	struct pfm_counter *ctrs;
	bool *ctr_open;
	/* counting PMDs whose counter the backend failed to open */
	bool *ctr_failed;

	/*
	 * overflow waiting for restart: long reset of these, in this set;
	 * reset_pending is empty while reset_set is NULL
	 */
	struct pfm_set *reset_set;
	u64 reset_pending[PFM_PMD_BV];

	struct pfm_smpl smpl;

	pfarg_msg_t msgq[PFM_MSGQ_DEPTH];
	u32 msg_head, msg_count;
};

/*
 * The open backing counter of PMD @num in @ctx's active set, NULL if
 * there is none (not in, not counting, or no such PMD)
 */
static inline struct pfm_counter *pfm_ctx_counter(const struct pfm_pmu *pmu,
						  struct pfm_context *ctx,
						  unsigned int num)
{
	u16 slot = pfm_pmd_slot(pmu, num);

	if (slot == PFM_NO_SLOT || !ctx->ctr_open)
		return NULL;
	slot = pfm_index_nospec(slot, pmu->nr_pmds);
	return ctx->ctr_open[slot] ? &ctx->ctrs[slot] : NULL;
}

struct pfm_vcpu {
	struct pfm_context *cur;	/* context in on this vCPU */
};

struct pfm_engine {
	const struct pfm_backend_ops *ops;
	void *be;
	struct pfm_engine_cfg cfg;
	struct pfm_limits lim;
	u64 wmask;		/* backing counter value mask */
	struct pfm_pmu pmu;

	struct pfm_context **ctxs;	/* [lim.max_contexts] */
	u32 nr_ctxs;
	u32 next_ctx_id;
	u32 nr_thread_loaded;
	u32 nr_sys_loaded;

	struct pfm_vcpu *vcpus;		/* [cfg.nr_vcpus] */
	struct pfm_engine_stats stats;
};

/* the calling vCPU and guest thread of one command */
struct pfm_caller {
	u32 vcpu;
	u32 tid, tgid;
};

/* pfm_engine.c */
void *pfm_zalloc(struct pfm_engine *e, size_t size);
void pfm_free(struct pfm_engine *e, void *p);
struct pfm_context *pfm_ctx_find(struct pfm_engine *e, u32 id);
static inline u64 pfm_now(struct pfm_engine *e)
{
	return e->ops->now_ns(e->be);
}

/*
 * The IP a sample entry or overflow message of @ctx shows: none for one
 * taken in guest kernel mode if the guest kernel said the context's owner
 * may not see kernel addresses (PVPFM_FL_NO_KERNEL_IP).
 */
static inline u64 pfm_where_ip(const struct pfm_context *ctx,
			       const struct pfm_where *where)
{
	if (where->kernel && (ctx->flags & PVPFM_FL_NO_KERNEL_IP))
		return 0;
	return where->ip;
}

/* pfm_pmu.c */
int pfm_pmu_init(struct pfm_pmu *pmu, const struct pfm_engine_cfg *cfg);
bool pfm_pmd_event(const struct pfm_engine *e, const struct pfm_set *set,
		   u16 pmd, struct pfm_event *ev);
bool pfm_pmd_event_for(const struct pfm_engine *e, u16 pmd, u64 pmc_value,
		       struct pfm_event *ev);
void pfm_pmc_pmds(const struct pfm_pmu *pmu, u16 pmc, u64 *pmds);
u32 pfm_max_entry_size(const struct pfm_pmu *pmu);

/* pfm_sets.c */
struct pfm_set *pfm_set_find(struct pfm_context *ctx, u16 id);
struct pfm_set *pfm_set_alloc(struct pfm_engine *e, u16 id);
int pfm_set_insert(struct pfm_engine *e, struct pfm_context *ctx,
		   struct pfm_set *set);
void pfm_set_free(struct pfm_engine *e, struct pfm_set *set);
int pfm_set_load(struct pfm_engine *e, struct pfm_context *ctx);
void pfm_set_unload(struct pfm_engine *e, struct pfm_context *ctx);
u64 pfm_pmd_read(struct pfm_engine *e, struct pfm_context *ctx,
		 struct pfm_set *set, u16 pmd);
void pfm_pmd_write(struct pfm_engine *e, struct pfm_context *ctx,
		   struct pfm_set *set, u16 pmd, u64 value);
void pfm_counting_begin(struct pfm_engine *e, struct pfm_context *ctx);
u64 pfm_counting_end(struct pfm_engine *e, struct pfm_context *ctx);
int pfm_set_activate(struct pfm_engine *e, struct pfm_context *ctx,
		     struct pfm_set *set);
int pfm_set_switch_next(struct pfm_engine *e, struct pfm_context *ctx);
u64 pfm_set_timeout_left(struct pfm_engine *e, struct pfm_context *ctx,
			 struct pfm_set *set);
u64 pfm_set_act_duration(struct pfm_engine *e, struct pfm_context *ctx,
			 struct pfm_set *set);
bool pfm_set_timeout_valid(const struct pfm_engine *e, u64 ns);

/* pfm_ctx.c */
struct pfm_context *pfm_ctx_alloc(struct pfm_engine *e, u32 flags);
u32 pfm_ctx_new_id(struct pfm_engine *e);
int pfm_ctx_in(struct pfm_engine *e, struct pfm_context *ctx, u32 vcpu);
void pfm_ctx_out(struct pfm_engine *e, struct pfm_context *ctx);
void pfm_ctx_destroy(struct pfm_engine *e, struct pfm_context *ctx);

/* no long reset pending any more */
static inline void pfm_ctx_reset_forget(struct pfm_context *ctx)
{
	ctx->reset_set = NULL;
	pfm_memset(ctx->reset_pending, 0, sizeof(ctx->reset_pending));
}

/* pfm_ovfl.c */
void pfm_pmds_reset(struct pfm_engine *e, struct pfm_context *ctx,
		    struct pfm_set *set, const u64 *ovfl, bool long_reset);
u32 pfm_random_next(u32 seed);

/* pfm_smpl.c */
int pfm_smpl_init(struct pfm_engine *e, struct pfm_context *ctx,
		  const pfm_dfl_smpl_arg_t *arg);
void pfm_smpl_free(struct pfm_engine *e, struct pfm_context *ctx);
bool pfm_smpl_ready(const struct pfm_context *ctx);
void pfm_smpl_reset(struct pfm_engine *e, struct pfm_context *ctx);
bool pfm_smpl_record(struct pfm_engine *e, struct pfm_context *ctx,
		     u16 pmd, const struct pfm_where *where, u32 vcpu);
void pfm_smpl_flush_hdr(struct pfm_engine *e, struct pfm_context *ctx);
void pfm_smpl_lost(struct pfm_engine *e, struct pfm_context *ctx, u64 n);

/* pfm_msg.c */
void pfm_msg_post(struct pfm_engine *e, struct pfm_context *ctx,
		  const pfarg_msg_t *msg);
bool pfm_msg_pop(struct pfm_context *ctx, pfarg_msg_t *msg);

/* command handlers: pfm_cmd.c dispatches, each file implements its own */
struct pfm_cmd_args {
	struct pfm_engine *e;
	struct pfm_context *ctx;	/* NULL for context-less commands */
	struct pvpfm_cmd_hdr *hdr;
	void *arg;			/* hdr->arg_size bytes */
	struct pfm_caller who;
};

int pfm_cmd_create_context(struct pfm_cmd_args *a);
int pfm_cmd_destroy_context(struct pfm_cmd_args *a);
int pfm_cmd_load_context(struct pfm_cmd_args *a);
int pfm_cmd_unload_context(struct pfm_cmd_args *a);
int pfm_cmd_start(struct pfm_cmd_args *a);
int pfm_cmd_stop(struct pfm_cmd_args *a);
int pfm_cmd_restart(struct pfm_cmd_args *a);
int pfm_cmd_switch(struct pfm_cmd_args *a);
int pfm_cmd_write_pmcs(struct pfm_cmd_args *a);
int pfm_cmd_write_pmds(struct pfm_cmd_args *a);
int pfm_cmd_read_pmds(struct pfm_cmd_args *a);
int pfm_cmd_create_evtsets(struct pfm_cmd_args *a);
int pfm_cmd_getinfo_evtsets(struct pfm_cmd_args *a);
int pfm_cmd_delete_evtsets(struct pfm_cmd_args *a);
int pfm_cmd_smpl_register(struct pfm_cmd_args *a);
int pfm_cmd_read_msg(struct pfm_cmd_args *a);
int pfm_cmd_pmu_info(struct pfm_cmd_args *a);
int pfm_cmd_reg_desc(struct pfm_cmd_args *a);
int pfm_cmd_ctx_state(struct pfm_cmd_args *a);

#endif /* _PFM_PRIV_H */
