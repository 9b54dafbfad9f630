// SPDX-License-Identifier: GPL-2.0
/*
 * A dynamically linked perfmon2 program bound to libpfm-3's shared
 * library (here libpfm.so.3, pfm3_syscalls.c: the twelve calls as
 * system calls from /sys/kernel/perfmon/syscall's base), run the way
 * doc/PERFMON2-ABI.md documents:
 *
 * as is                 its calls fail with ENOSYS, never landing on
 *                       another system call
 * LD_PRELOAD=libperfmon2.so
 *                       the same binary, unchanged, counts: libperfmon2's
 *                       twelve symbols come first
 *
 * The preloaded run is this program again (re-executed with T_PRELOAD
 * set); it reports through its exit status: 0, or the step that failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"


/* the steps of the preloaded run, as its exit status */
enum { P_OK, P_CREATE, P_PROGRAM, P_LOAD, P_START, P_READ, P_COUNT };

static const char *const p_step[] = {
	"ok", "pfm_create_context", "pfm_write_pmds", "pfm_load_context",
	"pfm_start", "pfm_read_pmds", "a count of 0",
};

/* the preloaded run: count this thread's run time for 20 ms */
static int preloaded(void)
{
	pfarg_ctx_t ctx;
	pfarg_pmd_t pd;
	pfarg_load_t load;
	int fd;

	memset(&ctx, 0, sizeof(ctx));
	fd = pfm_create_context(&ctx, NULL, NULL, 0);
	if (fd < 0)
		return P_CREATE;
	memset(&pd, 0, sizeof(pd));
	pd.reg_num = RUN_NS;
	if (pfm_write_pmds(fd, &pd, 1))
		return P_PROGRAM;
	memset(&load, 0, sizeof(load));
	load.load_pid = t_gettid();
	if (pfm_load_context(fd, &load))
		return P_LOAD;
	if (pfm_start(fd, NULL))
		return P_START;
	t_busy_ns(20 * MS);
	pfm_stop(fd);
	if (pfm_read_pmds(fd, &pd, 1))
		return P_READ;
	return pd.reg_value ? P_OK : P_COUNT;
}

/* libperfmon2.so beside this program, or in the build tree's lib/ */
static bool find_lib(char *path, size_t size)
{
	char self[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return false;
	self[n] = 0;
	dir = dirname(self);
	snprintf(path, size, "%s/libperfmon2.so", dir);
	if (!access(path, R_OK))
		return true;
	snprintf(path, size, "%s/../lib/libperfmon2.so", dir);
	return !access(path, R_OK);
}

static void as_is(void)
{
	pfarg_ctx_t ctx;

	memset(&ctx, 0, sizeof(ctx));
	t_expect_err("preload: as is, libpfm.so.3's pfm_create_context: ENOSYS",
		     pfm_create_context(&ctx, NULL, NULL, 0), ENOSYS);
	t_expect_err("preload: as is, libpfm.so.3's pfm_stop: ENOSYS",
		     pfm_stop(0), ENOSYS);
}

static void with_preload(const char *argv0)
{
	char lib[PATH_MAX + 32];
	int status = -1, code;
	pid_t pid;

	if (!t_check(find_lib(lib, sizeof(lib)), "preload: find libperfmon2.so",
		     "not beside %s", argv0))
		return;
	pid = fork();
	if (!pid) {
		setenv("LD_PRELOAD", lib, 1);
		setenv("T_PRELOAD", "1", 1);
		execl("/proc/self/exe", argv0, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	t_check(code == P_OK,
		"preload: LD_PRELOAD=libperfmon2.so, the same binary counts",
		"%s (status %#x)",
		code >= 0 && code <= P_COUNT ? p_step[code] : "did not run",
		status);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (getenv("T_PRELOAD"))
		return preloaded();
	as_is();
	with_preload(argv[0]);
	return t_done();
}
