// SPDX-License-Identifier: GPL-2.0
/*
 * A context fd is close-on-exec (doc/PERFMON2-ABI.md): pfm_create_context
 * gives one with FD_CLOEXEC, a program it execs does not have it, and the
 * driver makes one only when asked (PFM2_CREATE_CLOEXEC) and refuses
 * flags it does not know.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"
#include "../../include/uapi/perfmon2_ioctl.h"

/* a raw PFM2_IOC_CREATE_CONTEXT with @flags: the fd, or -1 (errno) */
static int create_raw(uint32_t flags)
{
	pfarg_ctx_t ctx = { 0 };
	struct pfm2_create_arg c = {
		.ctx = (uintptr_t)&ctx,
		.flags = flags,
	};
	int dev, fd, err;

	dev = open(PFM2_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -1;
	fd = ioctl(dev, PFM2_IOC_CREATE_CONTEXT, &c);
	err = errno;
	close(dev);
	errno = err;
	return fd;
}

static bool cloexec(int fd)
{
	int f = fcntl(fd, F_GETFD);

	return f >= 0 && (f & FD_CLOEXEC);
}

/* the status of this program exec'd to look at fd @fd: 0 if it is closed */
static int exec_probe(int fd)
{
	char num[16];
	int status;
	pid_t pid;

	snprintf(num, sizeof(num), "%d", fd);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "t_cloexec", "probe", num, (char *)NULL);
		_exit(3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
	int fd, st;

	/* exec'd by exec_probe(): 0 if the fd is closed here, 2 if open */
	if (argc == 3 && !strcmp(argv[1], "probe"))
		return fcntl(atoi(argv[2]), F_GETFD) < 0 && errno == EBADF ? 0 : 2;

	fd = t_create(0);
	if (t_expect_ok("cloexec: pfm_create_context", fd)) {
		t_check(cloexec(fd), "cloexec: pfm_create_context's fd is close-on-exec",
			"FD_CLOEXEC clear");
		st = exec_probe(fd);
		t_check(st == 0, "cloexec: an exec'd program does not get the context",
			"probe status %d (2: the fd is open in it)", st);
		close(fd);
	}
	fd = create_raw(PFM2_CREATE_CLOEXEC);
	if (t_expect_ok("cloexec: create with PFM2_CREATE_CLOEXEC", fd)) {
		t_check(cloexec(fd), "cloexec: PFM2_CREATE_CLOEXEC: close-on-exec",
			"FD_CLOEXEC clear");
		close(fd);
	}
	fd = create_raw(0);
	if (t_expect_ok("cloexec: create without flags", fd)) {
		t_check(!cloexec(fd), "cloexec: no flag: an inheritable fd",
			"FD_CLOEXEC set");
		close(fd);
	}
	fd = create_raw(0x80000000u);
	t_expect_err("cloexec: an unknown flag: EINVAL", fd, EINVAL);
	if (fd >= 0)
		close(fd);
	return t_done();
}
