/* SPDX-License-Identifier: MIT */
/*
 * <perfmon/perfmon_dfl_smpl.h>: the default sampling format ("default",
 * version 1.0): pfm_dfl_smpl_arg_t (pfm_create_context's smpl_arg),
 * pfm_dfl_smpl_hdr_t (the start of the buffer mmap() maps) and
 * pfm_dfl_smpl_entry_t, each entry followed by one u64 per PMD in the
 * overflowed PMD's reg_smpl_pmds. The types are in perfmon2.h.
 */
#ifndef __PERFMON_DFL_SMPL_H__
#define __PERFMON_DFL_SMPL_H__

#include "perfmon.h"

#endif /* __PERFMON_DFL_SMPL_H__ */
