// SPDX-License-Identifier: GPL-2.0
/* A call made in a child process (child.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "child.h"

int t_child(int (*fn)(void *arg, void *res), void *arg, void *res,
	    size_t len)
{
	int fds[2], st = 0, code;
	void *got;
	pid_t pid;

	got = malloc(len);
	if (!got)
		return -ENOMEM;
	if (pipe(fds)) {
		code = -errno;
		free(got);
		return code;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		code = -errno;
		close(fds[0]);
		close(fds[1]);
		free(got);
		return code;
	}
	if (pid == 0) {
		close(fds[0]);
		code = fn(arg, res);
		if (!code && write(fds[1], res, len) != (ssize_t)len)
			code = 3;
		_exit(code);
	}
	close(fds[1]);
	if (read(fds[0], got, len) == (ssize_t)len)
		memcpy(res, got, len);
	close(fds[0]);
	free(got);
	waitpid(pid, &st, 0);
	return st;
}
