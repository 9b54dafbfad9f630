/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * pv-perfmon: the guest <-> host device ABI, version 1.
 *
 * Each vCPU owns one command block in guest RAM. To make a perfmon2 call the
 * guest fills the block (header + the call's argument vector, as is) and
 * rings DOORBELL: one VM exit. The host copies the block once, runs the
 * engine on the copy, and writes the block back (status, count, and the
 * argument vector with its per-entry out fields) before the exit completes.
 *
 * Everything in a command block is untrusted input to the host.
 *
 * Versioning rule: PVPFM_ABI_VERSION changes only for incompatible changes.
 * Compatible additions use reserved fields (which must be zero today) and
 * new command numbers; the host answers an unknown command with -ENOSYS.
 *
 * The device: a PCI function with two BARs.
 *   BAR0  registers (4 KiB MMIO, little endian), see PVPFM_REG_*.
 *   BAR1  MSI-X table and PBA: vector i belongs to vCPU i and fires when
 *         a notification is due for a context served on vCPU i (a message
 *         was queued: the guest reads it with PVPFM_CMD_READ_MSG; or,
 *         with PFM_FL_NOTIFY_BLOCK, the context's thread must now wait:
 *         see PVPFM_CMD_CTX_STATE).
 * Writes to CMD_BLOCK and DOORBELL act for the vCPU that makes them.
 */
#ifndef _UAPI_PV_PERFMON_H
#define _UAPI_PV_PERFMON_H

#include <linux/types.h>
#include "perfmon2.h"

#define PVPFM_ABI_VERSION	1

/*
 * PCI ids: QEMU's vendor (Red Hat's donated range); 0x00f0 is this
 * project's device id, unused by QEMU 7.2.
 */
#define PVPFM_PCI_VENDOR_ID	0x1b36
#define PVPFM_PCI_DEVICE_ID	0x00f0
#define PVPFM_PCI_REVISION	PVPFM_ABI_VERSION

/* BAR0 registers */
#define PVPFM_REG_VERSION	0x00	/* RO u32: PVPFM_ABI_VERSION */
#define PVPFM_REG_FEATURES	0x04	/* RO u32: PVPFM_F_* */
#define PVPFM_REG_NR_VCPUS	0x08	/* RO u32: vCPUs = MSI-X vectors */
#define PVPFM_REG_PERSONALITY	0x0c	/* RO u32: PVPFM_PERS_* */
#define PVPFM_REG_COUNTERS	0x10	/* RO u32: generic counters */
#define PVPFM_REG_STATUS	0x14	/* RO u32: last CMD_BLOCK: 0 or errno */
#define PVPFM_REG_CMD_BLOCK	0x18	/* WO u64: this vCPU's block gpa */
#define PVPFM_REG_DOORBELL	0x20	/* WO u32: run this vCPU's block */
#define PVPFM_BAR0_SIZE		0x1000

/* features */
#define PVPFM_F_SAMPLING	0x1	/* default sampling format */
#define PVPFM_F_VIRTUAL_PMDS	0x2	/* hypervisor events 256.. */
#define PVPFM_F_EVENT_MAP	0x4	/* the host aliases some events */

/*
 * PMU personalities: the PMU model the guest is given, numbered here once
 * for every side (PVPFM_REG_PERSONALITY, KVMPFM_BIND_VM, the engine, the
 * QEMU property, pfmon). What varies per personality is a row of
 * pvpfm_pers_table(); the engine adds its register description
 * (kvm/engine/pfm_pmu.c). Adding a personality = an enum line, a row and
 * a register description.
 *
 * PVPFM_PERS_AUTO asks for the row marked auto_default of the host CPU's
 * vendor. Only the host module resolves it, at KVMPFM_BIND_VM, which
 * returns the result; the guest never sees AUTO.
 */
enum pvpfm_personality {
	PVPFM_PERS_AUTO,
	PVPFM_PERS_AMD64,	/* family 10h reserved masks */
	PVPFM_PERS_AMD64_K8,	/* K8 reserved masks */
	PVPFM_PERS_INTEL_ARCH,	/* Intel architectural perfmon */
	PVPFM_PERS_COUNT
};

#define PVPFM_VENDOR_AMD	0
#define PVPFM_VENDOR_INTEL	1

struct pvpfm_pers_desc {
	const char *name;	/* QEMU's personality= value */
	const char *model;	/* perfmon2's pmu_desc/model */
	const char *libpfm4_pmu; /* the libpfm4 PMU that names its events */
	__u8 vendor;		/* PVPFM_VENDOR_*: whose event encodings */
	__u8 auto_default;	/* PVPFM_PERS_AUTO picks it on its vendor */
	__u8 counters;		/* generic counters by default */
	__u8 counters_max;	/* counters= up to this; = counters: fixed */
	__u8 fixed_counters;	/* Intel fixed-function counters */
	__u8 arch_version;	/* Intel architectural perfmon version */
	__u8 ext_event;		/* AMD: event select 11:8 in PMC bits 35:32 */
	/*
	 * The hardware the registers stand for, as perfmon2's pmu_desc
	 * showed it: the width of its counters and the MSR of each
	 * register (pvpfm_reg_msr()); the guest reaches none of them
	 */
	__u8 counter_width;
	__u32 evtsel_msr;	/* PMC n: evtsel_msr + n */
	__u32 counter_msr;	/* PMD n: counter_msr + n */
	__u32 fixed_ctrl_msr;	/* PMC PVPFM_INTEL_FIXED_BASE */
	__u32 fixed_counter_msr; /* PMD PVPFM_INTEL_FIXED_BASE + n */
};

/* intel_arch: FIXED_CTR_CTRL is PMC 16, the fixed counters PMD 16 on */
#define PVPFM_INTEL_FIXED_BASE	16

static inline const struct pvpfm_pers_desc *pvpfm_pers_table(void)
{
	static const struct pvpfm_pers_desc table[PVPFM_PERS_COUNT] = {
		[PVPFM_PERS_AUTO] = { .name = "auto" },
		[PVPFM_PERS_AMD64] = {
			.name = "amd64", .model = "amd64",
			.libpfm4_pmu = "amd64_fam10h_barcelona",
			.vendor = PVPFM_VENDOR_AMD, .auto_default = 1,
			.counters = 4, .counters_max = 4, .ext_event = 1,
			.counter_width = 48,
			.evtsel_msr = 0xc0010000, .counter_msr = 0xc0010004,
		},
		[PVPFM_PERS_AMD64_K8] = {
			.name = "amd64-k8", .model = "amd64",
			.libpfm4_pmu = "amd64_k8_revg",
			.vendor = PVPFM_VENDOR_AMD,
			.counters = 4, .counters_max = 4, .ext_event = 1,
			.counter_width = 48,
			.evtsel_msr = 0xc0010000, .counter_msr = 0xc0010004,
		},
		[PVPFM_PERS_INTEL_ARCH] = {
			.name = "intel_arch", .model = "intel_arch",
			.libpfm4_pmu = "ix86arch",
			.vendor = PVPFM_VENDOR_INTEL, .auto_default = 1,
			.counters = 4, .counters_max = 16,
			.fixed_counters = 3, .arch_version = 2,
			.counter_width = 48,
			.evtsel_msr = 0x186, .counter_msr = 0xc1,
			.fixed_ctrl_msr = 0x38d, .fixed_counter_msr = 0x309,
		},
	};

	return table;
}

/* the row of personality @id, or NULL for AUTO and unknown numbers */
static inline const struct pvpfm_pers_desc *pvpfm_pers_desc(__u32 id)
{
	return id > PVPFM_PERS_AUTO && id < PVPFM_PERS_COUNT ?
	       &pvpfm_pers_table()[id] : (const struct pvpfm_pers_desc *)0;
}

/*
 * The MSR of PMC (@pmc) or PMD @num of personality @d, as perfmon2's x86
 * tables number them (PMC/PMD n: the n-th event select and counter; on
 * intel_arch PMC 16 FIXED_CTR_CTRL, PMD 16 + n fixed counter n); 0 for
 * a virtual PMD, which stands for no register
 */
static inline __u32 pvpfm_reg_msr(const struct pvpfm_pers_desc *d, int pmc,
				  __u32 num)
{
	if (num >= PVPFM_INTEL_FIXED_BASE && d->fixed_ctrl_msr &&
	    num < PVPFM_INTEL_FIXED_BASE + 16)
		return pmc ? d->fixed_ctrl_msr :
		       d->fixed_counter_msr + num - PVPFM_INTEL_FIXED_BASE;
	if (num >= PVPFM_INTEL_FIXED_BASE)
		return 0;
	return (pmc ? d->evtsel_msr : d->counter_msr) + num;
}

/*
 * May a VM of personality @d be given @counters generic counters (0: the
 * default)? Only where the number varies, as on Intel.
 */
static inline int pvpfm_pers_counters_ok(const struct pvpfm_pers_desc *d,
					 __u32 counters)
{
	return !counters ||
	       (d->counters_max > d->counters && counters <= d->counters_max);
}

/* one command block per vCPU: 4 pages, physically contiguous */
#define PVPFM_CMD_BLOCK_SIZE	16384

enum pvpfm_cmd {
	/* the twelve perfmon2 calls */
	PVPFM_CMD_CREATE_CONTEXT = 1,	/* struct pvpfm_create_arg */
	PVPFM_CMD_WRITE_PMCS,		/* pfarg_pmc_t[count] */
	PVPFM_CMD_WRITE_PMDS,		/* pfarg_pmd_t[count] */
	PVPFM_CMD_READ_PMDS,		/* pfarg_pmd_t[count] */
	PVPFM_CMD_LOAD_CONTEXT,		/* struct pvpfm_load_arg */
	PVPFM_CMD_START,		/* pfarg_start_t, or nothing */
	PVPFM_CMD_STOP,			/* nothing */
	PVPFM_CMD_RESTART,		/* nothing */
	PVPFM_CMD_CREATE_EVTSETS,	/* pfarg_setdesc_t[count] */
	PVPFM_CMD_GETINFO_EVTSETS,	/* pfarg_setinfo_t[count] */
	PVPFM_CMD_DELETE_EVTSETS,	/* pfarg_setdesc_t[count] */
	PVPFM_CMD_UNLOAD_CONTEXT,	/* struct pvpfm_unload_arg, or nothing */
	/* the rest of the guest's perfmon2 interface */
	PVPFM_CMD_DESTROY_CONTEXT,	/* close(fd): nothing */
	PVPFM_CMD_SWITCH,		/* struct pvpfm_switch_arg */
	PVPFM_CMD_SMPL_REGISTER,	/* struct pvpfm_smpl_register_arg */
	PVPFM_CMD_READ_MSG,		/* out: pfarg_msg_t */
	PVPFM_CMD_PMU_INFO,		/* out: struct pvpfm_pmu_info */
	PVPFM_CMD_REG_DESC,		/* out: struct pvpfm_reg_desc[count] */
	PVPFM_CMD_CTX_STATE,		/* out: struct pvpfm_ctx_state */
	PVPFM_CMD_MAX
};

/*
 * The header of a command block. @arg_size bytes of argument follow it.
 * For vector commands @count is the number of entries and @arg_size must
 * be exactly count * sizeof(entry).
 */
struct pvpfm_cmd_hdr {
	__u16 version;		/* in: PVPFM_ABI_VERSION */
	__u16 cmd;		/* in: enum pvpfm_cmd */
	__u32 ctx_id;		/* in: context; out: new context (CREATE) */
	__u32 count;		/* in: vector entries */
	__s32 status;		/* out: 0 or -errno */
	__u32 arg_size;		/* in: bytes of argument after the header */
	__u32 err_index;	/* out: first failing entry, if status < 0 */
	__u32 tid;		/* in: guest thread making the call */
	__u32 tgid;		/* in: its thread group */
};

#define PVPFM_CMD_ARGS_MAX	(PVPFM_CMD_BLOCK_SIZE - sizeof(struct pvpfm_cmd_hdr))

/* sampling format names, NUL padded */
#define PVPFM_SMPL_NAME_LEN	16

/*
 * pfarg_ctx_t.ctx_flags at CREATE, beside perfmon2's PFM_FL_*: the guest
 * kernel's policy for a context whose owner may not see guest kernel
 * addresses (perf_event_paranoid's rule for kernel samples). The host
 * zeroes the IP of every sample entry and overflow message of the
 * context taken while the guest ran in kernel mode. A host without it
 * refuses the flag (EINVAL): nothing leaks.
 */
#define PVPFM_FL_NO_KERNEL_IP	0x80000000U

struct pvpfm_create_arg {
	pfarg_ctx_t ctx;
	char smpl_name[PVPFM_SMPL_NAME_LEN];	/* "" or "default" */
	pfm_dfl_smpl_arg_t smpl_arg;		/* used with "default" */
};

/*
 * The guest thread being loaded is the one making the call. A context
 * created with PFM_FL_NOTIFY_BLOCK cannot be loaded so (EINVAL): a thread
 * blocked until pfm_restart could never call pfm_restart (perfmon2).
 */
#define PVPFM_LOAD_SELF		0x1

struct pvpfm_load_arg {
	pfarg_load_t load;
	__u32 flags;		/* PVPFM_LOAD_* */
	__u32 tgid;		/* thread group of load.load_pid */
};

/* the monitored thread exited: queue PFM_MSG_END */
#define PVPFM_UNLOAD_TASK_EXIT	0x1

struct pvpfm_unload_arg {
	__u32 flags;		/* PVPFM_UNLOAD_* */
	__u32 reserved;
};

/*
 * A monitored guest thread leaves (@out_ctx) and/or enters (@in_ctx) the
 * calling vCPU. 0 means none. Issued only when one of them is monitored.
 */
struct pvpfm_switch_arg {
	__u32 out_ctx;
	__u32 in_ctx;
	__u32 in_tid;		/* thread entering, for samples */
	__u32 in_tgid;
};

/*
 * The sampling buffer lives in guest RAM; the guest registers its pages,
 * possibly in several calls, before loading the context. Page i holds bytes
 * [i * 4096, (i + 1) * 4096) of the buffer (header included).
 */
#define PVPFM_PAGE_SIZE		4096
struct pvpfm_smpl_register_arg {
	__u32 first_page;	/* index of gpa[0] in the buffer */
	__u32 nr_pages;		/* entries in gpa[] */
	__u64 gpa[];		/* guest-physical page addresses */
};

/*
 * CTX_STATE: the context's state, which the guest cannot otherwise see.
 * PFM_FL_NOTIFY_BLOCK is the guest's to carry out (the host cannot stop a
 * guest thread): after a notification interrupt the guest asks, for its
 * loaded NOTIFY_BLOCK contexts only, whether the context is blocked, and
 * then keeps the monitored thread from returning to user mode until
 * pfm_restart, unload or close. Other contexts never need this command.
 */
#define PVPFM_CTX_MASKED	0x1	/* notified; masked until pfm_restart */
#define PVPFM_CTX_BLOCKED	0x2	/* ... and its thread must wait */

struct pvpfm_ctx_state {
	__u32 flags;		/* out: PVPFM_CTX_* */
	__u32 reserved;		/* out: 0 */
};

#define PVPFM_MODEL_LEN		32

struct pvpfm_pmu_info {
	char model[PVPFM_MODEL_LEN];	/* personality name, NUL padded */
	__u32 num_pmcs;			/* implemented PMCs */
	__u32 num_pmds;			/* implemented PMDs (virtual included) */
	__u32 max_pmc;			/* highest PMC index + 1 */
	__u32 max_pmd;			/* highest PMD index + 1 */
	__u32 max_contexts;		/* per VM limits set by the host */
	__u32 max_sets;
	__u32 max_vector;		/* entries per call */
	__u32 set_timeout_res_ns;	/* set timeouts: multiples of it */
	__u64 max_smpl_buf;		/* bytes per sampling buffer */
	__u64 impl_pmcs[PFM_PMC_BV];
	__u64 impl_pmds[PFM_PMD_BV];
};

/* register types in struct pvpfm_reg_desc */
#define PVPFM_REG_PMC		1
#define PVPFM_REG_PMD		2

/* register description flags */
#define PVPFM_REGF_VIRTUAL	0x1	/* hypervisor event, no PMU register */
#define PVPFM_REGF_COUNTER	0x2	/* PMD counts events */

#define PVPFM_REG_NAME_LEN	24

/*
 * REG_DESC: @count entries are filled starting with the implemented
 * register whose position in (PMCs in index order, then PMDs) is the
 * header's @ctx_id; out: @count = entries filled.
 */
struct pvpfm_reg_desc {
	__u16 type;			/* PVPFM_REG_PMC / PVPFM_REG_PMD */
	__u16 num;			/* register index */
	__u32 flags;			/* PVPFM_REGF_* */
	__u64 dfl_val;			/* default value */
	__u64 rsvd_msk;			/* reserved bits (kept at default) */
	char name[PVPFM_REG_NAME_LEN];
};

/*
 * Virtual PMDs: hypervisor events no PMU has, counted by the host for the
 * calling vCPU. They need no PMC: writing the PMD enables it. The enum
 * gives their numbers (ABI: appended to, never renumbered), and
 * pvpfm_vpmd_table() describes each; every side walks that table (the
 * host module's pmu_desc names, pfmon's event names, list, --help and
 * man page, the host tools' labels).
 */
enum pvpfm_virtual_pmd {
	PVPFM_VPMD_VCPU_RUN_NS = PFM_FIRST_SW_PMD,
	PVPFM_VPMD_VM_EXITS,
	PVPFM_VPMD_HALT_EXITS,
	PVPFM_VPMD_HOST_PREEMPT,
	PVPFM_VPMD_STEAL_NS,
	PVPFM_VPMD_HOST_PAGE_FAULTS,
	PVPFM_VPMD_END
};

#define PVPFM_VPMD_COUNT	(PVPFM_VPMD_END - PFM_FIRST_SW_PMD)

struct pvpfm_vpmd_desc {
	const char *label;	/* pmu_desc's register name, host tools' label */
	const char *name;	/* the event's name in guest tools (pfmon -e) */
	const char *unit;	/* "ns" or "events" */
	const char *what;	/* one line, for lists and manuals */
};

/* indexed by PMD number less PFM_FIRST_SW_PMD */
static inline const struct pvpfm_vpmd_desc *pvpfm_vpmd_table(void)
{
	static const struct pvpfm_vpmd_desc table[PVPFM_VPMD_COUNT] = {
		[PVPFM_VPMD_VCPU_RUN_NS - PFM_FIRST_SW_PMD] = {
			"VCPU_RUN_NS", "vcpu_run_ns", "ns",
			"time the vCPU ran (hypervisor)" },
		[PVPFM_VPMD_VM_EXITS - PFM_FIRST_SW_PMD] = {
			"VM_EXITS", "vm_exits", "events", "VM exits" },
		[PVPFM_VPMD_HALT_EXITS - PFM_FIRST_SW_PMD] = {
			"HALT_EXITS", "halt_exits", "events", "HLT exits" },
		[PVPFM_VPMD_HOST_PREEMPT - PFM_FIRST_SW_PMD] = {
			"HOST_PREEMPT", "host_preempt", "events",
			"vCPU preempted on the host" },
		[PVPFM_VPMD_STEAL_NS - PFM_FIRST_SW_PMD] = {
			"STEAL_NS", "steal_ns", "ns",
			"time runnable on the host, not running" },
		[PVPFM_VPMD_HOST_PAGE_FAULTS - PFM_FIRST_SW_PMD] = {
			"HOST_PAGE_FAULTS", "host_page_faults", "events",
			"host page faults on guest RAM" },
	};

	return table;
}

/* virtual PMD @num's row, or NULL for any other number */
static inline const struct pvpfm_vpmd_desc *pvpfm_vpmd_desc(unsigned int num)
{
	return num >= PFM_FIRST_SW_PMD && num < PVPFM_VPMD_END ?
	       &pvpfm_vpmd_table()[num - PFM_FIRST_SW_PMD] :
	       (const struct pvpfm_vpmd_desc *)0;
}

/* a virtual PMD's label (its pmu_desc name, the host tools'), or NULL */
static inline const char *pvpfm_vpmd_name(unsigned int num)
{
	const struct pvpfm_vpmd_desc *d = pvpfm_vpmd_desc(num);

	return d ? d->label : (const char *)0;
}

/*
 * The PMC of a generic counter: AMD's PERFSEL and Intel's PERFEVTSEL
 * agree on these fields; AMD holds event select bits 11:8 in 35:32.
 */
#define PVPFM_EVTSEL_EVENT		0xffULL		/* event select 7:0 */
#define PVPFM_EVTSEL_UMASK_SHIFT	8
#define PVPFM_EVTSEL_UMASK		(0xffULL << 8)	/* unit mask 15:8 */
#define PVPFM_EVTSEL_USR		(1ULL << 16)	/* count at CPL > 0 */
#define PVPFM_EVTSEL_OS			(1ULL << 17)	/* count at CPL 0 */
#define PVPFM_EVTSEL_EDGE		(1ULL << 18)
#define PVPFM_EVTSEL_INT		(1ULL << 20)	/* interrupt on overflow */
#define PVPFM_EVTSEL_EN			(1ULL << 22)
#define PVPFM_EVTSEL_INV		(1ULL << 23)
#define PVPFM_EVTSEL_CMASK_SHIFT	24
#define PVPFM_EVTSEL_CMASK		(0xffULL << 24)	/* counter mask 31:24 */
#define PVPFM_EVTSEL_AMD_EXT_SHIFT	32
#define PVPFM_EVTSEL_AMD_EXT		(0xfULL << 32)	/* AMD: event select 11:8 */
/* what is counted, without where (USR, OS) and whether (INT, EN) */
#define PVPFM_EVTSEL_ENCODING	(PVPFM_EVTSEL_EVENT | PVPFM_EVTSEL_UMASK | \
				 PVPFM_EVTSEL_EDGE | PVPFM_EVTSEL_INV | \
				 PVPFM_EVTSEL_CMASK | PVPFM_EVTSEL_AMD_EXT)
/* the bits a tool sets from a level and an on switch, not from an event */
#define PVPFM_EVTSEL_CONTROL	(PVPFM_EVTSEL_USR | PVPFM_EVTSEL_OS | \
				 PVPFM_EVTSEL_INT | PVPFM_EVTSEL_EN)

/*
 * Host contention, made visible: pfm_getinfo_evtsets() reports in
 * set_reserved3[] how long the set's backing host counters were enabled
 * and how long they actually ran (host perf multiplexing, other users'
 * pinned events). running < enabled means the host took counters away;
 * a count scaled by enabled / running estimates the full count.
 */
#define PVPFM_SETINFO_HOST_ENABLED	0	/* ns, summed over PMDs */
#define PVPFM_SETINFO_HOST_RUNNING	1	/* ns, summed over PMDs */
/*
 * Overflows of the set's PMDs the host did not deliver while it
 * throttled the VM (max_overflow_rate): samples not taken, notifications
 * not sent, resets not applied. A sampling context also finds them in
 * its buffer's header; this is where a counting or notifying one does.
 */
#define PVPFM_SETINFO_OVFLS_LOST	2
/*
 * Host perf's limits on the set's sampling. HOST_THROTTLES: interrupts
 * after which perf throttled a backing event
 * (kernel.perf_event_max_sample_rate): until perf's next tick on that
 * CPU a hardware event counts nothing, and a software event interrupts
 * no more (its late overflows count in OVFLS_LOST). PERIODS_RAISED:
 * periods the host's PMU driver refused as too short, armed longer: the
 * overflow came later than the PMD's value asked.
 */
#define PVPFM_SETINFO_HOST_THROTTLES	3
#define PVPFM_SETINFO_PERIODS_RAISED	4

/*
 * The default sampling format's header, pfm_dfl_smpl_hdr_t: its
 * hdr_reserved[] slot (one perfmon2's programs leave alone) of the
 * samples lost to the host (its throttling, perf's, or an overflow
 * found a period or more late): never silent.
 */
#define PVPFM_DFL_HDR_LOST		0

/*
 * Returned in reg_flags of an accepted pfarg_pmc_t whose event the host
 * backs with another event, by the admin's event map (an alias marked
 * emulated): the counts are not those of the event the guest asked for.
 * A return flag beside perfmon2's PFM_REG_RETFL_*: cleared on input.
 * Programs see bit 27; the command block carries bit 29, as it always
 * has, and perfmon2.ko moves it: bit 29 is perfmon2 v2.2's
 * PFM_REG_RETFL_NOSET, which a program may test.
 */
#define PVPFM_REG_RETFL_EMULATED	(1U << 27)
#define PVPFM_CMD_RETFL_EMULATED	(1U << 29)

/*
 * Returned beside PFM_REG_RETFL_NOTAVAIL in reg_flags of a refused
 * pfarg_pmc_t or pfarg_pmd_t: the host could count the event, but its
 * PMU belongs to KVM's mediated vPMU (kvm_intel or kvm_amd's
 * enable_mediated_pmu) while any VM that has one runs on the host, and
 * perf counts no guest for anyone else meanwhile. The host's operator
 * chooses between the two (doc/ADMIN.md, "Mediated vPMU"). Cleared on input.
 */
#define PVPFM_REG_RETFL_HOST_MEDIATED	(1U << 28)

PFM_ABI_SIZE(struct pvpfm_cmd_hdr, 32);
PFM_ABI_SIZE(struct pvpfm_create_arg, 144);
PFM_ABI_SIZE(struct pvpfm_load_arg, 40);
PFM_ABI_SIZE(struct pvpfm_unload_arg, 8);
PFM_ABI_SIZE(struct pvpfm_switch_arg, 16);
PFM_ABI_SIZE(struct pvpfm_smpl_register_arg, 8);
PFM_ABI_SIZE(struct pvpfm_ctx_state, 8);
PFM_ABI_SIZE(struct pvpfm_pmu_info, 152);
PFM_ABI_SIZE(struct pvpfm_reg_desc, 48);

#endif /* _UAPI_PV_PERFMON_H */
