/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * perfmon2.ko's user interface: the ioctls behind the twelve perfmon2 calls.
 *
 * Guest side only: the guest driver (guest/kernel) implements it and
 * libperfmon2 (guest/lib) is its one user; programs use the library and
 * never include this.
 *
 *   fd = open("/dev/perfmon2", O_RDWR);
 *   ctx_fd = ioctl(fd, PFM2_IOC_CREATE_CONTEXT, &create);  (new fd, or -1)
 *   ioctl(ctx_fd, PFM2_IOC_WRITE_PMCS, &vec); ...           (0, or -1)
 *   close(ctx_fd);                                          (destroys it)
 *
 * Each ioctl number's nr is the pv-perfmon command it forwards
 * (enum pvpfm_cmd). Vector calls take a struct pfm2_vec_arg; the vector
 * is copied back to the caller after the host ran the call, also when it
 * failed, so that the per-entry out flags (PFM_REG_RETFL_*) and values
 * reach the program. Errors are perfmon2's errno values; ENOTTY on a
 * context call means the fd is not a perfmon2 context (the library turns
 * it into EBADF, as the perfmon2 system calls returned).
 *
 * A context fd also supports read() (one pfarg_msg_t per call), poll(),
 * O_ASYNC (SIGIO) and mmap() of the sampling buffer (read-only, offset 0).
 */
#ifndef _UAPI_PERFMON2_IOCTL_H
#define _UAPI_PERFMON2_IOCTL_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include "perfmon2.h"

#define PFM2_DEVICE		"/dev/perfmon2"
#define PFM2_IOC_MAGIC		0xF2	/* free in ioctl-number.rst (6.1) */

/* PFM2_IOC_CREATE_CONTEXT, on /dev/perfmon2 only */
struct pfm2_create_arg {
	__u64 ctx;		/* pfarg_ctx_t * */
	__u64 smpl_name;	/* const char *: NULL or "default" */
	__u64 smpl_arg;		/* the format's argument, or NULL */
	__u64 smpl_size;	/* bytes at smpl_arg */
	__u32 flags;		/* PFM2_CREATE_*, others EINVAL */
	__u32 reserved;		/* must be 0 */
};

/* the new fd is close-on-exec (libperfmon2's pfm_create_context sets it) */
#define PFM2_CREATE_CLOEXEC	0x1

/* the vector calls, on a context fd */
struct pfm2_vec_arg {
	__u64 req;		/* pfarg_pmc_t *, pfarg_pmd_t *, ... */
	__s32 count;		/* entries; < 0 is EINVAL */
	__u32 reserved;		/* must be 0 */
};

#define PFM2_IOC_CREATE_CONTEXT	_IOW(PFM2_IOC_MAGIC, 0x01, struct pfm2_create_arg)
#define PFM2_IOC_WRITE_PMCS	_IOW(PFM2_IOC_MAGIC, 0x02, struct pfm2_vec_arg)
#define PFM2_IOC_WRITE_PMDS	_IOW(PFM2_IOC_MAGIC, 0x03, struct pfm2_vec_arg)
#define PFM2_IOC_READ_PMDS	_IOW(PFM2_IOC_MAGIC, 0x04, struct pfm2_vec_arg)
/* the argument is the pfarg_load_t itself */
#define PFM2_IOC_LOAD_CONTEXT	_IOW(PFM2_IOC_MAGIC, 0x05, pfarg_load_t)
/* the argument is a pfarg_start_t *, or NULL */
#define PFM2_IOC_START		_IOW(PFM2_IOC_MAGIC, 0x06, pfarg_start_t)
#define PFM2_IOC_STOP		_IO(PFM2_IOC_MAGIC, 0x07)
#define PFM2_IOC_RESTART	_IO(PFM2_IOC_MAGIC, 0x08)
#define PFM2_IOC_CREATE_EVTSETS	_IOW(PFM2_IOC_MAGIC, 0x09, struct pfm2_vec_arg)
#define PFM2_IOC_GETINFO_EVTSETS _IOW(PFM2_IOC_MAGIC, 0x0a, struct pfm2_vec_arg)
#define PFM2_IOC_DELETE_EVTSETS	_IOW(PFM2_IOC_MAGIC, 0x0b, struct pfm2_vec_arg)
#define PFM2_IOC_UNLOAD_CONTEXT	_IO(PFM2_IOC_MAGIC, 0x0c)

#endif /* _UAPI_PERFMON2_IOCTL_H */
