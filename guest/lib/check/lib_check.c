// SPDX-License-Identifier: MIT
/*
 * libperfmon2 checks that need no device: run on the build machine by
 * `make -C guest/lib check`.
 *
 * At compile time: the headers give the libpfm-3.x prototypes exactly
 * (each is declared again here as libpfm-3.x wrote it; any difference is
 * a compile error), and every ioctl's nr is the pv-perfmon command it
 * forwards. At run time: the library's errno conventions without a
 * device (ENOSYS) and on descriptors that are not contexts (EBADF).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>
#include <perfmon/pv_perfmon.h>
#include "../../../include/uapi/perfmon2_ioctl.h"
#include "../../../tests/common/result.h"

/* libpfm-3.x's declarations, verbatim in substance */
extern int pfm_create_context(pfarg_ctx_t *ctx, char *smpl_name,
			      void *smpl_arg, size_t smpl_size);
extern int pfm_write_pmcs(int fd, pfarg_pmc_t *pmcs, int count);
extern int pfm_write_pmds(int fd, pfarg_pmd_t *pmds, int count);
extern int pfm_read_pmds(int fd, pfarg_pmd_t *pmds, int count);
extern int pfm_load_context(int fd, pfarg_load_t *load);
extern int pfm_start(int fd, pfarg_start_t *start);
extern int pfm_stop(int fd);
extern int pfm_restart(int fd);
extern int pfm_create_evtsets(int fd, pfarg_setdesc_t *setd, int count);
extern int pfm_getinfo_evtsets(int fd, pfarg_setinfo_t *info, int count);
extern int pfm_delete_evtsets(int fd, pfarg_setdesc_t *setd, int count);
extern int pfm_unload_context(int fd);

#define NR_IS(ioc, cmd) _Static_assert(_IOC_NR(ioc) == (cmd), #ioc " nr")
NR_IS(PFM2_IOC_CREATE_CONTEXT, PVPFM_CMD_CREATE_CONTEXT);
NR_IS(PFM2_IOC_WRITE_PMCS, PVPFM_CMD_WRITE_PMCS);
NR_IS(PFM2_IOC_WRITE_PMDS, PVPFM_CMD_WRITE_PMDS);
NR_IS(PFM2_IOC_READ_PMDS, PVPFM_CMD_READ_PMDS);
NR_IS(PFM2_IOC_LOAD_CONTEXT, PVPFM_CMD_LOAD_CONTEXT);
NR_IS(PFM2_IOC_START, PVPFM_CMD_START);
NR_IS(PFM2_IOC_STOP, PVPFM_CMD_STOP);
NR_IS(PFM2_IOC_RESTART, PVPFM_CMD_RESTART);
NR_IS(PFM2_IOC_CREATE_EVTSETS, PVPFM_CMD_CREATE_EVTSETS);
NR_IS(PFM2_IOC_GETINFO_EVTSETS, PVPFM_CMD_GETINFO_EVTSETS);
NR_IS(PFM2_IOC_DELETE_EVTSETS, PVPFM_CMD_DELETE_EVTSETS);
NR_IS(PFM2_IOC_UNLOAD_CONTEXT, PVPFM_CMD_UNLOAD_CONTEXT);
_Static_assert(sizeof(struct pfm2_create_arg) == 40, "pfm2_create_arg");
_Static_assert(sizeof(struct pfm2_vec_arg) == 16, "pfm2_vec_arg");
_Static_assert(PFM_PMD_BV == 5 && PFM_HW_PMD_BV == 4, "bit vectors");

static void expect_errno(const char *name, int ret, int want)
{
	char why[128];

	snprintf(why, sizeof(why), "returned %d, errno %s; want -1, %s",
		 ret, strerror(errno), strerror(want));
	t_check(ret == -1 && errno == want, name, "%s", why);
}

/* @call, @what on a descriptor that is no context, fails with EBADF */
#define EXPECT_EBADF(what, call) \
	expect_errno(what " on a non-context: EBADF", (call), EBADF)

int main(void)
{
	pfarg_pmc_t pmc;
	pfarg_pmd_t pmd;
	pfarg_setdesc_t sd;
	pfarg_setinfo_t si;
	pfarg_load_t load;
	pfarg_ctx_t ctx;
	int fd;

	memset(&pmc, 0, sizeof(pmc));
	memset(&pmd, 0, sizeof(pmd));
	memset(&sd, 0, sizeof(sd));
	memset(&si, 0, sizeof(si));
	memset(&load, 0, sizeof(load));
	memset(&ctx, 0, sizeof(ctx));

	if (access(PFM2_DEVICE, F_OK)) {
		errno = 0;
		expect_errno("no /dev/perfmon2: create gives ENOSYS",
			     pfm_create_context(&ctx, NULL, NULL, 0), ENOSYS);
	} else {
		t_skip("no /dev/perfmon2: create gives ENOSYS", "%s exists",
		       PFM2_DEVICE);
	}

	expect_errno("closed fd: EBADF", pfm_write_pmcs(-1, &pmc, 1), EBADF);

	fd = open("/dev/null", O_RDWR);
	if (fd < 0) {
		t_fail("open /dev/null", "%s", strerror(errno));
	} else {
		EXPECT_EBADF("write_pmcs", pfm_write_pmcs(fd, &pmc, 1));
		EXPECT_EBADF("write_pmds", pfm_write_pmds(fd, &pmd, 1));
		EXPECT_EBADF("read_pmds", pfm_read_pmds(fd, &pmd, 1));
		EXPECT_EBADF("load", pfm_load_context(fd, &load));
		EXPECT_EBADF("start", pfm_start(fd, NULL));
		EXPECT_EBADF("stop", pfm_stop(fd));
		EXPECT_EBADF("restart", pfm_restart(fd));
		EXPECT_EBADF("create_evtsets", pfm_create_evtsets(fd, &sd, 1));
		EXPECT_EBADF("getinfo_evtsets", pfm_getinfo_evtsets(fd, &si, 1));
		EXPECT_EBADF("delete_evtsets", pfm_delete_evtsets(fd, &sd, 1));
		EXPECT_EBADF("unload", pfm_unload_context(fd));
		close(fd);
	}
	return t_done();
}
