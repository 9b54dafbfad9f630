/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The migration stream's layout: what pfm_engine_save() writes and
 * pfm_engine_restore() reads (pfm_stream.c), and what the tests forge.
 *
 * Format, little-endian, every field naturally aligned, every record a
 * multiple of 8 bytes:
 *
 *   struct pfm_stream_hdr
 *   records: struct pfm_stream_rec, then @size bytes of payload
 *     CTX    a context: struct pfm_stream_ctx, then its queued messages
 *            (pfarg_msg_t[msg_count], oldest first)
 *     SET    one of the preceding context's sets: struct pfm_stream_set,
 *            then nr_pmcs struct pfm_stream_pmc, nr_pmds
 *            struct pfm_stream_pmd (registers by number, not by slot)
 *     PAGES  the preceding context's sampling buffer: struct
 *            pfm_stream_pages, then u64 gpa[nr] (0: not registered)
 *     END    nothing; the last record
 *
 * Version rules: the header's version changes when a record's layout or
 * meaning does; a reader refuses a version it does not know. A record
 * type added later that an older reader may skip carries
 * PFM_STREAM_REC_OPTIONAL; any other unknown type is refused. Fields
 * named reserved are written as zero and must be read as zero.
 */
#ifndef _PFM_STREAM_H
#define _PFM_STREAM_H

#include "pfm_priv.h"

#define PFM_STREAM_MAGIC	0x4d52545332464d50ULL	/* bytes "PMF2STRM" */
#define PFM_STREAM_FORMAT	1

#define PFM_STREAM_REC_CTX	1
#define PFM_STREAM_REC_SET	2
#define PFM_STREAM_REC_PAGES	3
#define PFM_STREAM_REC_END	4
#define PFM_STREAM_REC_OPTIONAL	0x1	/* pfm_stream_rec.flags */

struct pfm_stream_hdr {
	u64 magic;
	u32 version;
	u32 hdr_size;
	u32 personality;
	u8 gp_counters, fixed_counters, arch_version, reserved0;
	u32 nr_vcpus;
	u32 nr_ctxs;
	u32 next_ctx_id;
	u32 reserved1;
};

struct pfm_stream_rec {
	u16 type;
	u16 flags;
	u32 size;		/* of the payload that follows */
};

struct pfm_stream_ctx {
	u32 id;
	u32 flags;		/* PFM_FL_* */
	u32 state;		/* enum pfm_ctx_state */
	s32 vcpu;		/* in on it, or -1 */
	u32 load_pid, tid, tgid;
	u32 nr_sets;		/* SET records that follow */
	u16 active_set;
	u16 reset_set;
	u8 started, blocked, has_reset;
	u8 saturated;		/* masked without notification */
	u32 smpl_fmt;		/* PFM_SMPL_* */
	u32 msg_count;
	u32 switch_pending;	/* masked: restart switches set */
	u64 smpl_buf_size;
	u64 reset_pending[PFM_PMD_BV];
	pfm_dfl_smpl_hdr_t smpl_hdr;
};

struct pfm_stream_set {
	u32 ctx_id;
	u16 id;
	u16 nr_pmcs;
	u32 flags;		/* PFM_SETFL_* */
	u16 nr_pmds;
	u16 reserved;
	u64 timeout, timeout_left, runs, act_duration;
	u64 host_enabled_ns, host_running_ns;
	u64 ovfl_pmds[PFM_PMD_BV];
	u64 used_pmcs[PFM_PMC_BV];
	u64 used_pmds[PFM_PMD_BV];
};

struct pfm_stream_pmc {
	u64 num;
	u64 value;
};

struct pfm_stream_pmd {
	u16 num;
	u16 reserved0;
	u32 flags;		/* PFM_REGFL_* */
	u32 seed;
	u32 reserved1;
	u64 value, lval, long_reset, short_reset;
	u64 eventid, random_mask, ovflsw_thres, ovflsw_ref;
	u64 reset_pmds[PFM_PMD_BV];
	u64 smpl_pmds[PFM_PMD_BV];
};

struct pfm_stream_pages {
	u32 ctx_id;
	u32 nr;
};

#endif /* _PFM_STREAM_H */
