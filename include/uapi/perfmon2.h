/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * perfmon2 v2.x user ABI, as seen by programs in the guest.
 *
 * Byte-identical on x86_64 to libpfm-3.x <perfmon/perfmon_v2.h> and
 * <perfmon/perfmon_dfl_smpl.h>: existing perfmon2 programs were compiled
 * against these layouts, so every size and offset is pinned below.
 *
 * Shared by all sides (guest kernel, guest library, host module, engine);
 * fixed-width types only.
 */
#ifndef _UAPI_PERFMON2_H
#define _UAPI_PERFMON2_H

#include <linux/types.h>

/* 256 hardware registers + 64 software (virtual) registers */
#define PFM_MAX_HW_PMCS		256
#define PFM_MAX_HW_PMDS		256
#define PFM_MAX_PMCS		320
#define PFM_MAX_PMDS		320

#define PFM_BV_WORDS(n)		(((n) + 63) / 64)
#define PFM_PMC_BV		PFM_BV_WORDS(PFM_MAX_PMCS)	/* 5 */
#define PFM_PMD_BV		PFM_BV_WORDS(PFM_MAX_PMDS)	/* 5 */

/* first software register: this project's virtual PMDs start here */
#define PFM_FIRST_SW_PMD	256

/* version: major in the upper 16 bits, minor in the lower 16 */
#define PFM_VERSION_MAJOR(x)	(((x) >> 16) & 0xffff)
#define PFM_VERSION_MINOR(x)	((x) & 0xffff)
#define PFM_VERSION_MK(ma, mi)	(((ma) << 16) | (mi))
#define PFM_VERSION		PFM_VERSION_MK(2, 81)

/* context flags (pfarg_ctx_t.ctx_flags) */
#define PFM_FL_NOTIFY_BLOCK	0x01	/* block monitored thread on notify */
#define PFM_FL_SYSTEM_WIDE	0x02	/* system-wide (per-CPU) context */
#define PFM_FL_OVFL_NO_MSG	0x80	/* no overflow message on notify */
#define PFM_FL_ARCH_MASK	0xffff0000U	/* arch-specific: none on x86 */

/* register flags, in (pfarg_pmc_t / pfarg_pmd_t reg_flags) */
#define PFM_REGFL_OVFL_NOTIFY	0x1	/* PMD: notify on overflow */
#define PFM_REGFL_RANDOM	0x2	/* PMD: randomize reset value */
#define PFM_REGFL_NO_EMUL64	0x4	/* PMC: no 64-bit emulation */

/* register flags, out: the entry that made the call fail */
#define PFM_REG_RETFL_NOTAVAIL	(1U << 31) /* implemented, not available */
#define PFM_REG_RETFL_EINVAL	(1U << 30) /* invalid entry */
#define PFM_REG_RETFL_MASK	(PFM_REG_RETFL_NOTAVAIL | PFM_REG_RETFL_EINVAL)

/* event set flags (pfarg_setdesc_t / pfarg_setinfo_t set_flags) */
#define PFM_SETFL_OVFL_SWITCH	0x01	/* switch set on counter overflow */
#define PFM_SETFL_TIME_SWITCH	0x02	/* switch set on timeout */

/* message types */
#define PFM_MSG_OVFL		1	/* an overflow notification */
#define PFM_MSG_END		2	/* the monitored thread ended */

typedef struct {
	__u32 ctx_flags;		/* noblock/block, system-wide */
	__u32 ctx_reserved1;
	__u64 ctx_reserved3[7];
} pfarg_ctx_t;

typedef struct {
	__u16 reg_num;			/* which register */
	__u16 reg_set;			/* event set for this register */
	__u32 reg_flags;		/* in/out: flags */
	__u64 reg_value;		/* PMC value */
	__u64 reg_reserved2[4];
} pfarg_pmc_t;

typedef struct {
	__u16 reg_num;			/* which register */
	__u16 reg_set;			/* event set for this register */
	__u32 reg_flags;		/* in/out: flags */
	__u64 reg_value;		/* 64-bit initial or read value */
	__u64 reg_long_reset;		/* reset after notification */
	__u64 reg_short_reset;		/* reset after overflow, no notify */
	__u64 reg_last_reset_val;	/* out: last reset value */
	__u64 reg_ovfl_switch_cnt;	/* overflows before set switch */
	__u64 reg_reset_pmds[PFM_PMD_BV]; /* PMDs reset on overflow */
	__u64 reg_smpl_pmds[PFM_PMD_BV];  /* PMDs recorded on overflow */
	__u64 reg_smpl_eventid;		/* opaque sampling event id */
	__u64 reg_random_mask;		/* bitmask of randomized bits */
	__u32 reg_random_seed;		/* seed of the generator */
	__u32 reg_reserved2[7];
} pfarg_pmd_t;

typedef struct {
	__u16 start_set;		/* event set to start with */
	__u16 start_reserved1;
	__u32 start_reserved2;
	__u64 reserved3[3];
} pfarg_start_t;

typedef struct {
	__u32 load_pid;			/* thread id, or CPU (system-wide) */
	__u16 load_set;			/* first event set to activate */
	__u16 load_reserved1;
	__u64 load_reserved2[3];
} pfarg_load_t;

typedef struct {
	__u16 set_id;			/* which set */
	__u16 set_reserved1;
	__u32 set_flags;		/* PFM_SETFL_* */
	__u64 set_timeout;		/* ns; in: requested, out: effective */
	__u64 reserved[6];
} pfarg_setdesc_t;

typedef struct {
	__u16 set_id;			/* which set */
	__u16 set_reserved1;
	__u32 set_flags;		/* out: flags or error */
	__u64 set_ovfl_pmds[PFM_PMD_BV]; /* out: last overflowed PMDs */
	__u64 set_runs;			/* out: times the set was activated */
	__u64 set_timeout;		/* out: leftover timeout (ns) */
	__u64 set_act_duration;		/* out: time the set was active (ns) */
	__u64 set_avail_pmcs[PFM_PMC_BV]; /* out: available PMCs */
	__u64 set_avail_pmds[PFM_PMD_BV]; /* out: available PMDs */
	__u64 set_reserved3[6];
} pfarg_setinfo_t;

typedef struct {
	__u32 msg_type;			/* PFM_MSG_OVFL */
	__u32 msg_ovfl_pid;		/* process id */
	__u16 msg_active_set;		/* set active at the overflow */
	__u16 msg_ovfl_cpu;		/* CPU of the overflow */
	__u32 msg_ovfl_tid;		/* thread id */
	__u64 msg_ovfl_ip;		/* instruction pointer */
	__u64 msg_ovfl_pmds[PFM_PMD_BV]; /* PMDs that overflowed */
} pfarg_ovfl_msg_t;

typedef union {
	__u32 type;
	pfarg_ovfl_msg_t pfm_ovfl_msg;
} pfarg_msg_t;

/*
 * Default sampling format ("default", version 1.0)
 */
#define PFM_DFL_SMPL_NAME	"default"
#define PFM_DFL_SMPL_VERSION_MAJ 1U
#define PFM_DFL_SMPL_VERSION_MIN 0U
#define PFM_DFL_SMPL_VERSION	(((PFM_DFL_SMPL_VERSION_MAJ & 0xffff) << 16) | \
				 (PFM_DFL_SMPL_VERSION_MIN & 0xffff))

typedef struct {
	__u64 buf_size;			/* size of the buffer in bytes */
	__u32 buf_flags;		/* must be 0 */
	__u32 res1;
	__u64 reserved[6];
} pfm_dfl_smpl_arg_t;

typedef struct {
	__u64 hdr_count;		/* valid entries */
	__u64 hdr_cur_offs;		/* offset of the next free byte */
	__u64 hdr_overflows;		/* times the buffer filled */
	__u64 hdr_buf_size;		/* bytes in the buffer */
	__u64 hdr_min_buf_space;	/* smallest useful buffer */
	__u32 hdr_version;		/* PFM_DFL_SMPL_VERSION */
	__u32 hdr_buf_flags;		/* copy of buf_flags */
	__u64 hdr_reserved[10];
} pfm_dfl_smpl_hdr_t;

typedef struct {
	__u32 pid;			/* thread id (tid) */
	__u16 ovfl_pmd;			/* PMD that overflowed */
	__u16 reserved;
	__u64 last_reset_val;		/* reset value of that PMD */
	__u64 ip;			/* where the overflow occurred */
	__u64 tstamp;			/* ns */
	__u16 cpu;			/* CPU of the overflow */
	__u16 set;			/* active set */
	__u32 tgid;			/* thread group id */
} pfm_dfl_smpl_entry_t;

/* The layouts existing binaries use; any change here breaks them. */
#ifdef __cplusplus
#define PFM_ABI_ASSERT(c, m) static_assert(c, m)
#else
#define PFM_ABI_ASSERT(c, m) _Static_assert(c, m)
#endif
#define PFM_ABI_SIZE(t, n) PFM_ABI_ASSERT(sizeof(t) == (n), #t " size")
#define PFM_ABI_OFF(t, f, n) \
	PFM_ABI_ASSERT(__builtin_offsetof(t, f) == (n), #t "." #f " offset")

PFM_ABI_SIZE(pfarg_ctx_t, 64);
PFM_ABI_OFF(pfarg_ctx_t, ctx_flags, 0);
PFM_ABI_OFF(pfarg_ctx_t, ctx_reserved1, 4);
PFM_ABI_OFF(pfarg_ctx_t, ctx_reserved3, 8);

PFM_ABI_SIZE(pfarg_pmc_t, 48);
PFM_ABI_OFF(pfarg_pmc_t, reg_num, 0);
PFM_ABI_OFF(pfarg_pmc_t, reg_set, 2);
PFM_ABI_OFF(pfarg_pmc_t, reg_flags, 4);
PFM_ABI_OFF(pfarg_pmc_t, reg_value, 8);
PFM_ABI_OFF(pfarg_pmc_t, reg_reserved2, 16);

PFM_ABI_SIZE(pfarg_pmd_t, 176);
PFM_ABI_OFF(pfarg_pmd_t, reg_num, 0);
PFM_ABI_OFF(pfarg_pmd_t, reg_set, 2);
PFM_ABI_OFF(pfarg_pmd_t, reg_flags, 4);
PFM_ABI_OFF(pfarg_pmd_t, reg_value, 8);
PFM_ABI_OFF(pfarg_pmd_t, reg_long_reset, 16);
PFM_ABI_OFF(pfarg_pmd_t, reg_short_reset, 24);
PFM_ABI_OFF(pfarg_pmd_t, reg_last_reset_val, 32);
PFM_ABI_OFF(pfarg_pmd_t, reg_ovfl_switch_cnt, 40);
PFM_ABI_OFF(pfarg_pmd_t, reg_reset_pmds, 48);
PFM_ABI_OFF(pfarg_pmd_t, reg_smpl_pmds, 88);
PFM_ABI_OFF(pfarg_pmd_t, reg_smpl_eventid, 128);
PFM_ABI_OFF(pfarg_pmd_t, reg_random_mask, 136);
PFM_ABI_OFF(pfarg_pmd_t, reg_random_seed, 144);
PFM_ABI_OFF(pfarg_pmd_t, reg_reserved2, 148);

PFM_ABI_SIZE(pfarg_start_t, 32);
PFM_ABI_OFF(pfarg_start_t, start_set, 0);
PFM_ABI_OFF(pfarg_start_t, start_reserved1, 2);
PFM_ABI_OFF(pfarg_start_t, start_reserved2, 4);
PFM_ABI_OFF(pfarg_start_t, reserved3, 8);

PFM_ABI_SIZE(pfarg_load_t, 32);
PFM_ABI_OFF(pfarg_load_t, load_pid, 0);
PFM_ABI_OFF(pfarg_load_t, load_set, 4);
PFM_ABI_OFF(pfarg_load_t, load_reserved1, 6);
PFM_ABI_OFF(pfarg_load_t, load_reserved2, 8);

PFM_ABI_SIZE(pfarg_setdesc_t, 64);
PFM_ABI_OFF(pfarg_setdesc_t, set_id, 0);
PFM_ABI_OFF(pfarg_setdesc_t, set_reserved1, 2);
PFM_ABI_OFF(pfarg_setdesc_t, set_flags, 4);
PFM_ABI_OFF(pfarg_setdesc_t, set_timeout, 8);
PFM_ABI_OFF(pfarg_setdesc_t, reserved, 16);

PFM_ABI_SIZE(pfarg_setinfo_t, 200);
PFM_ABI_OFF(pfarg_setinfo_t, set_id, 0);
PFM_ABI_OFF(pfarg_setinfo_t, set_reserved1, 2);
PFM_ABI_OFF(pfarg_setinfo_t, set_flags, 4);
PFM_ABI_OFF(pfarg_setinfo_t, set_ovfl_pmds, 8);
PFM_ABI_OFF(pfarg_setinfo_t, set_runs, 48);
PFM_ABI_OFF(pfarg_setinfo_t, set_timeout, 56);
PFM_ABI_OFF(pfarg_setinfo_t, set_act_duration, 64);
PFM_ABI_OFF(pfarg_setinfo_t, set_avail_pmcs, 72);
PFM_ABI_OFF(pfarg_setinfo_t, set_avail_pmds, 112);
PFM_ABI_OFF(pfarg_setinfo_t, set_reserved3, 152);

PFM_ABI_SIZE(pfarg_ovfl_msg_t, 64);
PFM_ABI_OFF(pfarg_ovfl_msg_t, msg_type, 0);
PFM_ABI_OFF(pfarg_ovfl_msg_t, msg_ovfl_pid, 4);
PFM_ABI_OFF(pfarg_ovfl_msg_t, msg_active_set, 8);
PFM_ABI_OFF(pfarg_ovfl_msg_t, msg_ovfl_cpu, 10);
PFM_ABI_OFF(pfarg_ovfl_msg_t, msg_ovfl_tid, 12);
PFM_ABI_OFF(pfarg_ovfl_msg_t, msg_ovfl_ip, 16);
PFM_ABI_OFF(pfarg_ovfl_msg_t, msg_ovfl_pmds, 24);

PFM_ABI_SIZE(pfarg_msg_t, 64);
PFM_ABI_OFF(pfarg_msg_t, type, 0);

PFM_ABI_SIZE(pfm_dfl_smpl_arg_t, 64);
PFM_ABI_OFF(pfm_dfl_smpl_arg_t, buf_size, 0);
PFM_ABI_OFF(pfm_dfl_smpl_arg_t, buf_flags, 8);
PFM_ABI_OFF(pfm_dfl_smpl_arg_t, res1, 12);
PFM_ABI_OFF(pfm_dfl_smpl_arg_t, reserved, 16);

PFM_ABI_SIZE(pfm_dfl_smpl_hdr_t, 128);
PFM_ABI_OFF(pfm_dfl_smpl_hdr_t, hdr_count, 0);
PFM_ABI_OFF(pfm_dfl_smpl_hdr_t, hdr_cur_offs, 8);
PFM_ABI_OFF(pfm_dfl_smpl_hdr_t, hdr_overflows, 16);
PFM_ABI_OFF(pfm_dfl_smpl_hdr_t, hdr_buf_size, 24);
PFM_ABI_OFF(pfm_dfl_smpl_hdr_t, hdr_min_buf_space, 32);
PFM_ABI_OFF(pfm_dfl_smpl_hdr_t, hdr_version, 40);
PFM_ABI_OFF(pfm_dfl_smpl_hdr_t, hdr_buf_flags, 44);
PFM_ABI_OFF(pfm_dfl_smpl_hdr_t, hdr_reserved, 48);

PFM_ABI_SIZE(pfm_dfl_smpl_entry_t, 40);
PFM_ABI_OFF(pfm_dfl_smpl_entry_t, pid, 0);
PFM_ABI_OFF(pfm_dfl_smpl_entry_t, ovfl_pmd, 4);
PFM_ABI_OFF(pfm_dfl_smpl_entry_t, reserved, 6);
PFM_ABI_OFF(pfm_dfl_smpl_entry_t, last_reset_val, 8);
PFM_ABI_OFF(pfm_dfl_smpl_entry_t, ip, 16);
PFM_ABI_OFF(pfm_dfl_smpl_entry_t, tstamp, 24);
PFM_ABI_OFF(pfm_dfl_smpl_entry_t, cpu, 32);
PFM_ABI_OFF(pfm_dfl_smpl_entry_t, set, 34);
PFM_ABI_OFF(pfm_dfl_smpl_entry_t, tgid, 36);

#endif /* _UAPI_PERFMON2_H */
