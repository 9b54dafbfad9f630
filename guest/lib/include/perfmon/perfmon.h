/* SPDX-License-Identifier: MIT */
/*
 * <perfmon/perfmon.h>: the perfmon2 v2.x interface for programs running in
 * a kvm-perfmon guest, as libpfm-3.x offered it on x86_64 (libperfmon2).
 *
 * The twelve calls keep libpfm-3.x's prototypes (perfmon_v2.h) and its
 * error convention: -1 with errno set (pfm_create_context returns the new
 * context's fd). The structures, flags and sizes are perfmon2.h, installed
 * beside this file: byte-identical to libpfm-3.x's, so perfmon2 programs
 * build against these headers unchanged and binaries keep their layouts.
 *
 * Differences a program can see:
 *   - there are no perfmon2 system calls (__NR_pfm_*): the calls go through
 *     /dev/perfmon2 (perfmon2.ko); without it pfm_create_context fails with
 *     ENOSYS, as a kernel without perfmon2 answered;
 *   - PMDs from 256 (PFM_FIRST_SW_PMD) are the hypervisor's virtual PMDs:
 *     vCPU run time, VM exits, ... (pvpfm_vpmd_table() in
 *     <perfmon/pv_perfmon.h> lists them, PVPFM_VPMD_* numbers them);
 *   - PFM_FL_MAP_SETS and PFM_REGFL_NO_EMUL64 are refused (EINVAL): every
 *     PMD is a 64-bit counter; an unknown set is reported with
 *     PFM_REG_RETFL_EINVAL, never PFM_REG_RETFL_NOSET.
 */
#ifndef __PERFMON_H__
#define __PERFMON_H__

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "perfmon2.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int os_err_t;

#define PFM_ARCH_MAX_PMCS	PFM_MAX_PMCS
#define PFM_ARCH_MAX_PMDS	PFM_MAX_PMDS

/* bit vectors of registers: u64 words */
#define PFM_BPL			(sizeof(uint64_t) << 3)
#define PFM_BVSIZE(x)		(((x) + PFM_BPL - 1) / PFM_BPL)
#define PFM_HW_PMD_BV		PFM_BVSIZE(PFM_MAX_HW_PMDS)

/* never reported here: an unknown set is PFM_REG_RETFL_EINVAL */
#define PFM_REG_RETFL_NOSET	(1U << 29)
#define PFM_REG_HAS_ERROR(flag)	(((flag) & PFM_REG_RETFL_MASK) != 0)

/* accepted by the headers, refused by the calls (EINVAL) */
#define PFM_FL_MAP_SETS		0x10

#define PFM_VERSION_MAJ		PFM_VERSION_MAJOR(PFM_VERSION)
#define PFM_VERSION_MIN		PFM_VERSION_MINOR(PFM_VERSION)

#include "perfmon_v2.h"

#ifdef __cplusplus
}
#endif

#endif /* __PERFMON_H__ */
