/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perfmon2 engine: the only place that knows perfmon2 semantics.
 *
 * One engine per VM. It runs the twelve perfmon2 calls (plus the guest's
 * context switches and sampling-buffer registration) on command blocks,
 * keeps every context's event sets and 64-bit PMDs, switches sets, handles
 * overflows, writes samples and queues messages.
 *
 * It knows the world only through struct pfm_backend_ops: backing counters,
 * a clock and one timer per vCPU, guest memory writes, notification and
 * memory allocation. The host module (perf_events) and the unit tests
 * (a simulated PMU) are its two backends.
 *
 * Locking: the engine is not reentrant. Its caller serializes every entry
 * point of one engine (pfm_engine_exec, pfm_engine_overflow,
 * pfm_engine_timer, pfm_engine_stats, pfm_engine_destroy) with one lock,
 * and may hold it while the engine calls back into the backend. The engine
 * may call ops that sleep (counter_open, zalloc), so that lock is a mutex in
 * the host module.
 */
#ifndef _PFM_ENGINE_H
#define _PFM_ENGINE_H

#include "pfm_os.h"
#include "../../include/uapi/perfmon2.h"
#include "../../include/uapi/pv_perfmon.h"

struct pfm_engine;

/* what a backing counter counts */
enum pfm_event_kind {
	PFM_EVK_GENERIC,	/* a PERFSEL/PERFEVTSEL programmed event */
	PFM_EVK_FIXED,		/* Intel fixed counter @code (0, 1, 2, ...) */
	PFM_EVK_VIRTUAL,	/* hypervisor event @code (pvpfm_virtual_pmd) */
};

struct pfm_event {
	enum pfm_event_kind kind;
	u32 personality;	/* enum pvpfm_personality: the encoding */
	u16 pmd;		/* the PMD it backs */
	u16 event_select;	/* GENERIC: 12-bit event select */
	u8 unit_mask;		/* GENERIC */
	u8 counter_mask;	/* GENERIC */
	bool edge, invert;	/* GENERIC */
	bool usr, os;		/* count user / kernel mode of the guest */
	u64 code;		/* FIXED index or VIRTUAL event */
	u64 pmc_value;		/* GENERIC/FIXED: the PMC as programmed */
};

/*
 * A backing counter: @width bits (the backend's), counting up. When
 * @want_irq is set the backend calls pfm_engine_overflow() when it wraps
 * from all-ones to zero. The engine owns the struct; @priv is the backend's.
 */
struct pfm_counter {
	struct pfm_event ev;
	u32 vcpu;		/* vCPU whose execution it counts */
	bool want_irq;
	void *priv;
};

/* host contention: how long the backing counter ran vs was enabled */
struct pfm_counter_time {
	u64 enabled_ns;
	u64 running_ns;
};

/* where an overflow happened, as the backend saw it */
struct pfm_where {
	u64 ip;			/* guest instruction pointer */
	bool kernel;		/* taken in guest kernel mode */
	u32 tid, tgid;		/* guest thread; 0: the context's own */
	/*
	 * [PFM_MAX_PMDS], read where the overflow's @pmds has a bit: what
	 * the backing counter counted past its wrap before the backend
	 * found it (a late interrupt, the host's throttling); NULL: nothing
	 */
	const u64 *past;
};

struct pfm_backend_ops {
	/*
	 * 0 if @ev can be counted, 1 if it can through a host alias
	 * (emulated), -ENOENT if not, -EACCES if the host's operator
	 * forbids it, -EOPNOTSUPP if the host's PMU is KVM's mediated
	 * vPMU's for now (all PFM_REG_RETFL_NOTAVAIL to the guest; the
	 * last with PVPFM_REG_RETFL_HOST_MEDIATED too, see pfm_regs.c)
	 */
	int (*event_check)(void *be, const struct pfm_event *ev);
	/*
	 * set up a counter for c->ev on c->vcpu, disabled, value 0;
	 * -EOPNOTSUPP as event_check's, and never for another cause
	 */
	int (*counter_open)(void *be, struct pfm_counter *c);
	void (*counter_close)(void *be, struct pfm_counter *c);
	/* the counter's value (low width bits); wrap raises the overflow */
	void (*counter_write)(void *be, struct pfm_counter *c, u64 value);
	/* current value; @t (may be NULL) gets enabled/running times */
	u64 (*counter_read)(void *be, struct pfm_counter *c,
			    struct pfm_counter_time *t);
	void (*counter_enable)(void *be, struct pfm_counter *c);
	void (*counter_disable)(void *be, struct pfm_counter *c);

	/* monotonic ns */
	u64 (*now_ns)(void *be);
	/* one-shot per vCPU: pfm_engine_timer(@vcpu) after @delta_ns */
	void (*timer_arm)(void *be, u32 vcpu, u64 delta_ns);
	void (*timer_cancel)(void *be, u32 vcpu);

	/*
	 * 0 if [gpa, gpa + len) is guest RAM the engine may write from now
	 * on, from any context the overflow path runs in (the host pins it);
	 * guest_release (may be NULL if guest_check takes nothing) ends that.
	 */
	int (*guest_check)(void *be, u64 gpa, u64 len);
	void (*guest_release)(void *be, u64 gpa, u64 len);
	int (*guest_write)(void *be, u64 gpa, const void *src, u32 len);

	/* a message is queued on @ctx_id: interrupt the guest */
	void (*notify)(void *be, u32 ctx_id);

	void *(*zalloc)(void *be, size_t size);
	void (*free)(void *be, void *p);
};

/* per-VM limits, set by the host admin */
struct pfm_limits {
	u32 max_contexts;	/* contexts alive at once */
	u32 max_sets;		/* event sets per context */
	u32 max_vector;		/* entries per vector call */
	u64 max_smpl_buf;	/* bytes per sampling buffer */
};

/*
 * Defaults sized for real programs: a context per thread of a program of
 * hundreds of threads (pfmon --follow-all; a guest user has a quarter,
 * perfmon2.ko's max_ctx_per_user), and vectors as long as the command
 * block holds, which leaves the guest's arg_mem_max (a page) the bound,
 * as perfmon2's was.
 */
#define PFM_DFL_MAX_CONTEXTS	1024
#define PFM_DFL_MAX_SETS	32
#define PFM_DFL_MAX_VECTOR	PFM_LIMIT_MAX_VECTOR
#define PFM_DFL_MAX_SMPL_BUF	(4ULL << 20)

/*
 * The most any engine accepts, whatever its caller asks: pfm_engine_create()
 * refuses a limit above these (E2BIG). They keep every size the engine
 * computes from a limit small (the context table 512 KiB, a context's set
 * table 512 KiB, a buffer's page table 8 MiB) and its page count a u32.
 * A host sets lower ceilings of its own (the module's *_ceiling parameters).
 * Set ids are u16: no context has more sets than that. A vector never
 * outgrows the command block: its capacity in the smallest entry.
 */
#define PFM_LIMIT_MAX_CONTEXTS_N	65536	/* as numbers, for messages */
#define PFM_LIMIT_MAX_SETS_N		65536
#define PFM_LIMIT_MAX_SMPL_BUF_GIB	4
#define PFM_LIMIT_MAX_CONTEXTS	((u32)PFM_LIMIT_MAX_CONTEXTS_N)
#define PFM_LIMIT_MAX_SETS	((u32)PFM_LIMIT_MAX_SETS_N)
#define PFM_LIMIT_MAX_VECTOR	((u32)(PVPFM_CMD_ARGS_MAX / sizeof(pfarg_pmc_t)))
#define PFM_LIMIT_MAX_SMPL_BUF	((u64)PFM_LIMIT_MAX_SMPL_BUF_GIB << 30)

/* depth of each context's message queue */
#define PFM_MSGQ_DEPTH		32

struct pfm_engine_cfg {
	u32 personality;	/* enum pvpfm_personality, not AUTO */
	u8 gp_counters;		/* 0: the personality's default */
	u8 fixed_counters;	/* INTEL_ARCH: fixed counters (<= 16) */
	u8 arch_version;	/* INTEL_ARCH: perfmon version (1-3) */
	u8 counter_width;	/* backing counter width, 8..64 bits */
	u32 nr_vcpus;		/* vCPU indexes are 0..nr_vcpus-1 */
	u64 timer_granularity_ns; /* set timeouts are multiples of it */
	/* zero fields take the defaults; each at most PFM_LIMIT_MAX_* */
	struct pfm_limits limits;
};

/* failed commands are counted by errno below this */
#define PFM_STAT_ERRNOS		136

/* a view for host tools; see pfm_engine_stats() */
struct pfm_engine_stats {
	u32 contexts;
	u32 sets;
	u32 loaded;
	u32 active_counters;
	u64 commands;
	u64 command_errors;
	u64 overflows;
	u64 samples;
	u64 samples_lost;	/* buffer full or guest write failed */
	u64 messages;
	u64 messages_lost;	/* queue full */
	u64 set_switches;
	u64 calls[PVPFM_CMD_MAX];	/* by command */
	u64 refusals[PFM_STAT_ERRNOS];	/* failed commands, by errno */
	u64 notavail;		/* registers refused: host cannot count */
	u64 filtered;		/* registers refused: operator's filter */
	/*
	 * registers refused: the host's PMU is KVM's mediated vPMU's
	 * (event_check's -EOPNOTSUPP). A counter that fails to open so
	 * later fails its call with EOPNOTSUPP (refusals[EOPNOTSUPP]).
	 */
	u64 host_mediated;
};

/* one context, as host tools see it (pfm_engine_view()) */
struct pfm_ctx_view {
	u32 id;
	u32 flags;		/* PFM_FL_* */
	bool loaded, masked, started;
	s32 vcpu;		/* in on this vCPU, or -1 */
	u32 load_pid;		/* thread, or CPU when system-wide */
	u32 tid;
	u32 nr_sets;
	u16 active_set;
	u64 set_runs;		/* set activations: loads and switches */
	u64 samples;		/* entries in its sampling buffer */
	u32 msgs_queued;
};

struct pfm_view_ops {
	void (*context)(void *arg, const struct pfm_ctx_view *c);
	/* each open backing counter of a context that is in */
	void (*counter)(void *arg, const struct pfm_ctx_view *c, u16 set,
			const struct pfm_counter *ctr);
};

int pfm_engine_create(const struct pfm_engine_cfg *cfg,
		      const struct pfm_backend_ops *ops, void *be,
		      struct pfm_engine **out);

/* tears down every context, closes every counter, frees everything */
void pfm_engine_destroy(struct pfm_engine *e);

/*
 * Run the command block @block of @len bytes (the host's copy of the guest
 * block, PVPFM_CMD_BLOCK_SIZE at most) issued by vCPU @vcpu. The result is
 * in the block's header (status, count, err_index, ctx_id) and argument
 * vector. Returns the number of bytes to copy back to the guest, or a
 * negative errno when even the header is unusable.
 */
int pfm_engine_exec(struct pfm_engine *e, u32 vcpu, void *block, u32 len);

/*
 * The backing counters of the PMDs in @pmds (a PFM_PMD_BV bitmap) of the
 * context active on @vcpu wrapped. One call per interrupt: PMDs that
 * overflow together give one message and contiguous samples. A wrap that
 * happened while counting but is delivered after a stop still counts.
 * Returns the samples this lost: the whole periods (the overflowed PMDs'
 * short reset values) they counted past their wrap (pfm_where.past),
 * which getinfo (PVPFM_SETINFO_OVFLS_LOST) and the buffer's header show.
 */
u64 pfm_engine_overflow(struct pfm_engine *e, u32 vcpu, const u64 *pmds,
			const struct pfm_where *where);

/* the timer armed for @vcpu expired */
void pfm_engine_timer(struct pfm_engine *e, u32 vcpu);

/*
 * Host perf limited the backing counters of the context active on @vcpu:
 * it throttled them after @throttles interrupts, and armed @raised
 * periods longer than asked (getinfo's PVPFM_SETINFO_HOST_THROTTLES and
 * PVPFM_SETINFO_PERIODS_RAISED). The samples this lost come with the
 * overflows, in pfm_where.past.
 */
void pfm_engine_host_limited(struct pfm_engine *e, u32 vcpu, u64 throttles,
			     u64 raised);

void pfm_engine_stats(struct pfm_engine *e, struct pfm_engine_stats *st);

/* the configuration in force, limits resolved */
const struct pfm_engine_cfg *pfm_engine_cfg(const struct pfm_engine *e);

/*
 * Migration: a VM's whole perfmon2 state as a versioned, self-describing
 * byte stream (pfm_stream.c documents the format). Save reads, never
 * changes, the engine; the caller stops the vCPUs first so the counters
 * are final. Restore fills a freshly created engine of the same
 * personality, counters and vCPUs from a stream it treats as untrusted,
 * reopens the host counters of every context that was in on a vCPU and
 * resumes counting; active time and set timeouts go on from where they
 * stood at save (the time in between is not active time). On any error
 * the engine is left empty, as created, and @err says where and why.
 */
enum pfm_stream_reason {
	PFM_STREAM_OK,
	PFM_STREAM_MALFORMED,	/* a record or field out of bounds */
	PFM_STREAM_VERSION,	/* magic, version or a required record type */
	PFM_STREAM_MISMATCH,	/* personality, counters or vCPUs differ */
	PFM_STREAM_LIMIT,	/* more than this VM's limits allow */
	PFM_STREAM_NOT_EMPTY,	/* the engine already has contexts */
	PFM_STREAM_EVENT,	/* an event this host cannot count */
	PFM_STREAM_GUEST_MEM,	/* a sampling page not in guest memory */
	PFM_STREAM_COUNTER,	/* a host counter failed to open */
};

struct pfm_stream_error {
	enum pfm_stream_reason reason;
	u64 offset;		/* of the record at fault */
	u32 ctx_id;		/* the context, set and PMD concerned */
	u16 set;
	u16 pmd;
};

/*
 * Bytes the stream needs; with @buf and @len at least that, it is
 * written. Returns the size, or -ENOSPC without writing when @len is
 * short.
 */
long pfm_engine_save(struct pfm_engine *e, void *buf, size_t len);
/* the most bytes a stream within this engine's limits can take */
size_t pfm_engine_stream_max(const struct pfm_engine *e);
int pfm_engine_restore(struct pfm_engine *e, const void *buf, size_t len,
		       struct pfm_stream_error *err);
const char *pfm_stream_reason_name(enum pfm_stream_reason r);

/* walk every context and open counter; read-only, under the engine lock */
void pfm_engine_view(struct pfm_engine *e, const struct pfm_view_ops *ops,
		     void *arg);

#endif /* _PFM_ENGINE_H */
