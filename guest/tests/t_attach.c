// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching to a running thread, as perfmon2 v2.8x's task_attach_timeout
 * examples do with a pid from the command line: the monitor
 * loads a context on a thread it may ptrace without being its tracer and
 * without stopping it, reads the counts while the thread runs, and learns
 * from PFM_MSG_END that it ended. The permission check stays: a thread
 * of another user and a kernel thread are refused (EPERM), a thread of
 * the same user is not. The check is the kernel's ptrace rule, which no
 * mount can shadow: nobody in a user and mount namespace of its own, with
 * a file of its own bound over root's /proc/PID/task/TID/mem there, is
 * still refused root's thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

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
			t_busy_ns(MS);
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
	t_sleep_ns(20 * MS);
	if (!t_expect_ok("attach: load on a running thread, not traced, not stopped",
			 t_load(fd, child, 0)) ||
	    !t_expect_ok("attach: start", pfm_start(fd, NULL)))
		goto out;
	t_sleep_ns(100 * MS);
	t_read_pmd(fd, RUN_NS, 0, &v0);
	t_sleep_ns(100 * MS);
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

/* write @s to /proc/self/@file: 0 or -1 */
static int write_self(const char *file, const char *s)
{
	char path[64];
	int fd, ok;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

struct shadow_run {
	int step;	/* 0: loaded or refused; else the setup step that failed */
	int err;	/* that step's errno, or the load's (0: loaded) */
};

/*
 * In a child of the test, as nobody: a context first (the device node is
 * outside any namespace), then a user and a mount namespace (uid 0 there
 * is nobody), a file of its own bound over @root_pid's .../mem, then the
 * load on @root_pid.
 */
static void shadow_child(pid_t root_pid, const char *own, int wfd)
{
	struct shadow_run r = { 0 };
	struct stat a, b;
	char mem[64];
	int fd = -1;

	snprintf(mem, sizeof(mem), "/proc/%d/task/%d/mem", root_pid, root_pid);
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) ||
	    prctl(PR_SET_DUMPABLE, 1))
		r.step = 1;
	else if ((fd = t_create(0)) < 0)
		r.step = 2;
	else if (close(open(own, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)))
		r.step = 3;
	else if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		r.step = 4;
	else if (write_self("setgroups", "deny") ||
		 write_self("uid_map", "0 65534 1") ||
		 write_self("gid_map", "0 65534 1"))
		r.step = 5;
	else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		 mount(own, mem, NULL, MS_BIND, NULL))
		r.step = 6;
	else if (stat(own, &a) || stat(mem, &b) || a.st_ino != b.st_ino ||
		 a.st_dev != b.st_dev)
		r.step = 7;
	r.err = errno;
	if (!r.step)
		r.err = t_load(fd, root_pid, 0) ? errno : 0;
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

static void shadowed(void)
{
	char own[] = "/tmp/t_attach.mem.XXXXXX", saved;
	struct shadow_run r = { .step = 9 };
	int p[2], status, fd;
	pid_t pid;

	fd = mkstemp(own);
	if (fd < 0 || fchown(fd, NOBODY, NOBODY) || close(fd) || pipe(p)) {
		t_fail("attach: shadowed mem: setup", "%s", strerror(errno));
		return;
	}
	saved = t_userns_allow();
	fflush(stdout);
	pid = fork();
	if (!pid) {
		close(p[0]);
		shadow_child(getppid(), own, p[1]);
	}
	close(p[1]);
	if (pid > 0 && read(p[0], &r, sizeof(r)) != sizeof(r))
		r.step = 9;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	t_userns_restore(saved);
	unlink(own);
	if (!t_check(!r.step, "attach: nobody binds its file over root's mem in its namespaces",
		     "step %d (1 nobody, 2 create, 3 file, 4 unshare, 5 maps, 6 mount, 7 not bound): %s",
		     r.step, strerror(r.err)))
		return;
	t_check(r.err == EPERM, "attach: nobody on root's thread behind a shadowed mem: EPERM",
		"%s", r.err ? strerror(r.err) : "loaded");
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
	shadowed();
}

int main(void)
{
	running();
	permission();
	return t_done();
}
