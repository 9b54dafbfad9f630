// SPDX-License-Identifier: MIT
// The headers compile as C++ and give C linkage to the calls.
#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>

int (*const create)(pfarg_ctx_t *, char *, void *, size_t) = pfm_create_context;
static_assert(sizeof(pfarg_pmd_t) == 176, "pfarg_pmd_t");
