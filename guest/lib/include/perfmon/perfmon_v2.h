/* SPDX-License-Identifier: MIT */
/*
 * The perfmon2 v2.x calls (libpfm-3.x prototypes). The types they take are
 * in perfmon2.h; include <perfmon/perfmon.h>, not this file.
 */
#ifndef __PERFMON_V2_H__
#define __PERFMON_V2_H__

#ifndef __PERFMON_H__
#error "this file should never be included directly, use perfmon.h instead"
#endif

extern os_err_t pfm_create_context(pfarg_ctx_t *ctx, char *smpl_name,
				   void *smpl_arg, size_t smpl_size);
extern os_err_t pfm_write_pmcs(int fd, pfarg_pmc_t *pmcs, int count);
extern os_err_t pfm_write_pmds(int fd, pfarg_pmd_t *pmds, int count);
extern os_err_t pfm_read_pmds(int fd, pfarg_pmd_t *pmds, int count);
extern os_err_t pfm_load_context(int fd, pfarg_load_t *load);
extern os_err_t pfm_start(int fd, pfarg_start_t *start);
extern os_err_t pfm_stop(int fd);
extern os_err_t pfm_restart(int fd);
extern os_err_t pfm_create_evtsets(int fd, pfarg_setdesc_t *setd, int count);
extern os_err_t pfm_getinfo_evtsets(int fd, pfarg_setinfo_t *info, int count);
extern os_err_t pfm_delete_evtsets(int fd, pfarg_setdesc_t *setd, int count);
extern os_err_t pfm_unload_context(int fd);

#endif /* __PERFMON_V2_H__ */
