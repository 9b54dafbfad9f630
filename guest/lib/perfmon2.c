// SPDX-License-Identifier: MIT
/*
 * libperfmon2: the twelve perfmon2 calls over perfmon2.ko.
 *
 * pfm_create_context() opens /dev/perfmon2 for the one ioctl that creates
 * a context and closes it again (a cached fd would be broken by programs
 * that close every descriptor, e.g. daemons), so the library keeps no
 * state and is thread-safe. The other calls are one ioctl on the context
 * fd each (include/uapi/perfmon2_ioctl.h); the driver does the checks and
 * sets perfmon2's errno values. Two translations are made here:
 *   - /dev/perfmon2 missing (module not loaded): ENOSYS, what a kernel
 *     without the perfmon2 system calls answered;
 *   - ENOTTY from a context call: the fd is not a perfmon2 context, which
 *     the perfmon2 system calls reported as EBADF.
 * A context fd is close-on-exec (doc/PERFMON2-ABI.md says why); a program
 * that hands one to the program it execs clears FD_CLOEXEC itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <perfmon/perfmon.h>
#include "../../include/uapi/perfmon2_ioctl.h"

#define PFM_API __attribute__((visibility("default")))

static int pfm_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	if (ret < 0 && errno == ENOTTY)
		errno = EBADF;
	return ret;
}

static int pfm_vector(int fd, unsigned long cmd, void *req, int count)
{
	struct pfm2_vec_arg v = {
		.req = (uintptr_t)req,
		.count = count,
	};

	return pfm_ioctl(fd, cmd, &v);
}

PFM_API int pfm_create_context(pfarg_ctx_t *ctx, char *smpl_name,
			       void *smpl_arg, size_t smpl_size)
{
	struct pfm2_create_arg c = {
		.ctx = (uintptr_t)ctx,
		.smpl_name = (uintptr_t)smpl_name,
		.smpl_arg = (uintptr_t)smpl_arg,
		.smpl_size = smpl_size,
		.flags = PFM2_CREATE_CLOEXEC,
	};
	int dev, fd, err;

	dev = open(PFM2_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		if (errno == ENOENT || errno == ENODEV || errno == ENXIO)
			errno = ENOSYS;
		return -1;
	}
	fd = ioctl(dev, PFM2_IOC_CREATE_CONTEXT, &c);
	err = errno;
	close(dev);
	errno = err;
	return fd;
}

PFM_API int pfm_write_pmcs(int fd, pfarg_pmc_t *pmcs, int count)
{
	return pfm_vector(fd, PFM2_IOC_WRITE_PMCS, pmcs, count);
}

PFM_API int pfm_write_pmds(int fd, pfarg_pmd_t *pmds, int count)
{
	return pfm_vector(fd, PFM2_IOC_WRITE_PMDS, pmds, count);
}

PFM_API int pfm_read_pmds(int fd, pfarg_pmd_t *pmds, int count)
{
	return pfm_vector(fd, PFM2_IOC_READ_PMDS, pmds, count);
}

PFM_API int pfm_load_context(int fd, pfarg_load_t *load)
{
	return pfm_ioctl(fd, PFM2_IOC_LOAD_CONTEXT, load);
}

PFM_API int pfm_start(int fd, pfarg_start_t *start)
{
	return pfm_ioctl(fd, PFM2_IOC_START, start);
}

PFM_API int pfm_stop(int fd)
{
	return pfm_ioctl(fd, PFM2_IOC_STOP, NULL);
}

PFM_API int pfm_restart(int fd)
{
	return pfm_ioctl(fd, PFM2_IOC_RESTART, NULL);
}

PFM_API int pfm_create_evtsets(int fd, pfarg_setdesc_t *setd, int count)
{
	return pfm_vector(fd, PFM2_IOC_CREATE_EVTSETS, setd, count);
}

PFM_API int pfm_getinfo_evtsets(int fd, pfarg_setinfo_t *info, int count)
{
	return pfm_vector(fd, PFM2_IOC_GETINFO_EVTSETS, info, count);
}

PFM_API int pfm_delete_evtsets(int fd, pfarg_setdesc_t *setd, int count)
{
	return pfm_vector(fd, PFM2_IOC_DELETE_EVTSETS, setd, count);
}

PFM_API int pfm_unload_context(int fd)
{
	return pfm_ioctl(fd, PFM2_IOC_UNLOAD_CONTEXT, NULL);
}
