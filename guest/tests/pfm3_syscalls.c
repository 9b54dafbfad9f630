// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for libpfm-3.x's shared library as far as t_preload needs
 * it: the twelve perfmon2 calls made the libpfm-3 way, as system calls
 * numbered from the base that /sys/kernel/perfmon/syscall gives
 * (pfm_create_context is base + 0, ..., pfm_unload_context base + 11).
 * Built as libpfm.so.3, libpfm-3's soname, for a dynamically linked
 * program to be bound to, as an old binary is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <perfmon/perfmon.h>

#define PFM3_API __attribute__((visibility("default")))

enum pfm3_call { CREATE, WRITE_PMCS, WRITE_PMDS, READ_PMDS, LOAD, START,
		 STOP, RESTART, CREATE_SETS, GETINFO_SETS, DELETE_SETS,
		 UNLOAD };

/* the number of @call: base + call, the base read once */
static long pfm3_nr(enum pfm3_call call)
{
	static long base = -1;
	FILE *f;

	if (base < 0) {
		f = fopen("/sys/kernel/perfmon/syscall", "r");
		if (!f || fscanf(f, "%ld", &base) != 1)
			base = -1;
		if (f)
			fclose(f);
	}
	return base < 0 ? -1 : base + call;
}

static int pfm3_call(enum pfm3_call call, long a, long b, long c, long d)
{
	long nr = pfm3_nr(call);

	if (nr < 0) {
		errno = ENOSYS;
		return -1;
	}
	return (int)syscall(nr, a, b, c, d);
}

PFM3_API int pfm_create_context(pfarg_ctx_t *ctx, char *smpl_name,
				void *smpl_arg, size_t smpl_size)
{
	return pfm3_call(CREATE, (long)ctx, (long)smpl_name, (long)smpl_arg,
			 (long)smpl_size);
}

PFM3_API int pfm_write_pmcs(int fd, pfarg_pmc_t *pmcs, int count)
{
	return pfm3_call(WRITE_PMCS, fd, (long)pmcs, count, 0);
}

PFM3_API int pfm_write_pmds(int fd, pfarg_pmd_t *pmds, int count)
{
	return pfm3_call(WRITE_PMDS, fd, (long)pmds, count, 0);
}

PFM3_API int pfm_read_pmds(int fd, pfarg_pmd_t *pmds, int count)
{
	return pfm3_call(READ_PMDS, fd, (long)pmds, count, 0);
}

PFM3_API int pfm_load_context(int fd, pfarg_load_t *load)
{
	return pfm3_call(LOAD, fd, (long)load, 0, 0);
}

PFM3_API int pfm_start(int fd, pfarg_start_t *start)
{
	return pfm3_call(START, fd, (long)start, 0, 0);
}

PFM3_API int pfm_stop(int fd)
{
	return pfm3_call(STOP, fd, 0, 0, 0);
}

PFM3_API int pfm_restart(int fd)
{
	return pfm3_call(RESTART, fd, 0, 0, 0);
}

PFM3_API int pfm_create_evtsets(int fd, pfarg_setdesc_t *sets, int count)
{
	return pfm3_call(CREATE_SETS, fd, (long)sets, count, 0);
}

PFM3_API int pfm_getinfo_evtsets(int fd, pfarg_setinfo_t *sets, int count)
{
	return pfm3_call(GETINFO_SETS, fd, (long)sets, count, 0);
}

PFM3_API int pfm_delete_evtsets(int fd, pfarg_setdesc_t *sets, int count)
{
	return pfm3_call(DELETE_SETS, fd, (long)sets, count, 0);
}

PFM3_API int pfm_unload_context(int fd)
{
	return pfm3_call(UNLOAD, fd, 0, 0, 0);
}
