// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching to a running thread, as perfmon2 v2.8x's task_attach_timeout
 * examples do with a pid from the command line (issue 10): the monitor
 * loads a context on a thread it may ptrace without being its tracer and
 * without stopping it, reads the counts while the thread runs, and learns
 * from PFM_MSG_END that it ended. The permission check stays: a thread
 * of another user and a kernel thread are refused (EPERM), a thread of
 * the same user is not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

#define RUN_NS		PVPFM_VPMD_VCPU_RUN_NS
#define NOBODY		65534

/* a thread that runs (1 ms slices) until a byte comes on @fd */
static pid_t spawn_runner(int *stop_fd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		close(p[1]);
		fcntl(p[0], F_SETFL, O_NONBLOCK);
		while (read(p[0], &c, 1) < 0 && errno == EAGAIN)
			t_busy_ns(NSEC_PER_MSEC);
		_exit(0);
	}
	close(p[0]);
	*stop_fd = p[1];
	return pid;
}

/* the State letter of /proc/PID/stat */
static char proc_state(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : '?';
}

static bool wait_end(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	pfarg_msg_t m;

	if (poll(&pfd, 1, 5000) != 1)
		return false;
	return read(fd, &m, sizeof(m)) == sizeof(m) && m.type == PFM_MSG_END;
}

static void running(void)
{
	const uint16_t pmds[] = { RUN_NS };
	uint64_t v0 = 0, v1 = 0;
	int fd, stop = -1, status;
	char st;
	pid_t child;

	child = spawn_runner(&stop);
	if (!t_check(child > 0, "attach: fork a running thread", "%s",
		     strerror(errno)))
		return;
	fd = t_create(0);
	if (!t_expect_ok("attach: create", fd) ||
	    !t_expect_ok("attach: write PMDs", t_write_pmds(fd, pmds, 1, 0)))
		goto out;
	t_sleep_ns(20 * NSEC_PER_MSEC);
	if (!t_expect_ok("attach: load on a running thread, not traced, not stopped",
			 t_load(fd, child, 0)) ||
	    !t_expect_ok("attach: start", pfm_start(fd, NULL)))
		goto out;
	t_sleep_ns(100 * NSEC_PER_MSEC);
	t_read_pmd(fd, RUN_NS, 0, &v0);
	t_sleep_ns(100 * NSEC_PER_MSEC);
	t_read_pmd(fd, RUN_NS, 0, &v1);
	st = proc_state(child);
	t_check(st == 'R' || st == 'S', "attach: the thread was never stopped",
		"state %c", st);
	t_check(v0 > 0 && v1 > v0,
		"attach: its run time counts, read while it runs",
		"RUN_NS %llu then %llu", (unsigned long long)v0,
		(unsigned long long)v1);
	if (write(stop, "x", 1) == 1)
		t_check(wait_end(fd), "attach: PFM_MSG_END when it exits", "none");
out:
	if (stop >= 0)
		close(stop);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	if (fd >= 0)
		close(fd);
}

/*
 * As nobody: load on @root_pid (root's), then on a thread of its own.
 * The two errnos (0: loaded) come back in *@root_err, *@own_err.
 */
static bool as_nobody(pid_t root_pid, int *root_err, int *own_err)
{
	int p[2], e[2] = { -1, -1 }, status;
	pid_t pid;

	if (pipe(p))
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		int fd, stop = -1;
		pid_t mine;

		close(p[0]);
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(2);
		/*
		 * The uid change made this process (and so its children)
		 * not dumpable, which ptrace_may_access() refuses to nobody
		 * too: be what a process nobody started would be.
		 */
		if (prctl(PR_SET_DUMPABLE, 1))
			_exit(4);
		fd = t_create(0);
		e[0] = t_load(fd, root_pid, 0) ? errno : 0;
		pfm_unload_context(fd);
		mine = spawn_runner(&stop);
		e[1] = t_load(fd, mine, 0) ? errno : 0;
		if (write(p[1], e, sizeof(e)) != sizeof(e))
			_exit(3);
		kill(mine, SIGKILL);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], e, sizeof(e)) != sizeof(e))
		e[0] = e[1] = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	*root_err = e[0];
	*own_err = e[1];
	return e[0] >= 0 && e[1] >= 0;
}

static void permission(void)
{
	int root_err = -1, own_err = -1, fd;

	fd = t_create(0);
	if (fd >= 0) {
		/* kthreadd */
		t_expect_err("attach: a kernel thread: EPERM", t_load(fd, 2, 0),
			     EPERM);
		close(fd);
	}
	if (!t_root()) {
		t_skip("attach: another user's thread", "needs root to become nobody");
		return;
	}
	if (!t_check(as_nobody(getpid(), &root_err, &own_err),
		     "attach: as nobody", "the child could not tell"))
		return;
	t_check(root_err == EPERM, "attach: nobody on root's thread: EPERM",
		"%s", root_err ? strerror(root_err) : "loaded");
	t_check(own_err == 0, "attach: nobody on nobody's running thread",
		"%s", strerror(own_err));
}

int main(void)
{
	running();
	permission();
	return t_done();
}
