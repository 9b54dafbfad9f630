// SPDX-License-Identifier: GPL-2.0
/*
 * Monitoring stops at an exec that changes credentials,
 * as perf's does: a per-thread context loaded on a thread that execs a
 * setuid-root program is unloaded there (PFM_MSG_END), so nothing of the
 * new program is counted or sampled.
 *
 * Run as root (it makes the setuid copy); the monitor runs as uid/gid
 * 65534. The monitor creates a context on VM_EXITS and forks a child that
 * loads it on itself, starts it and execs a copy of this program, which
 * makes SPIN_EXITS VM exits (CPUID) and exits. The monitor then reads
 * VM_EXITS, kept in the context after the child's end:
 *   - a plain copy (no credential change): all the exits are counted;
 *   - a setuid-root copy: none of them (only what the child did before
 *     its exec), and the copy did run as euid 0.
 *
 * The same for an attach whose link is still queued when the exec comes:
 * the monitor attaches to a child (nobody too) that is inside execve() of
 * the setuid copy, held there by a page fault on its argument string (a
 * userfaultfd page, the fd made while the child was root), and lets the
 * exec go on after the load; the child's thread links the context on its
 * first return to user mode, which is the new program's. Nothing of it
 * may be counted, and PFM_MSG_END comes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "t_common.h"

#define SPIN_EXITS	5000
#define NOBODY		65534

/* the copy's mode: make the exits, say by its status whether it is root */
static int spin(bool want_root)
{
	t_exits(SPIN_EXITS);
	if (want_root && geteuid() != 0)
		return 3;	/* the setuid bit did not take (nosuid?) */
	return 0;
}

static int copy_self(const char *dst, mode_t mode)
{
	struct stat sb;
	int in, out, ret = -1;
	off_t off = 0;

	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	if (out >= 0 && !fstat(in, &sb)) {
		while (off < sb.st_size)
			if (sendfile(out, in, &off, sb.st_size - off) <= 0)
				break;
		if (off == sb.st_size && !fchown(out, 0, 0) &&
		    !fchmod(out, mode))
			ret = 0;
	}
	if (out >= 0)
		close(out);
	close(in);
	return ret;
}

struct run {
	int setup;	/* 0, else the step that failed (errno in err) */
	int err;
	int status;	/* the exec'd child's wait status */
	uint64_t exits;	/* VM_EXITS of the context after the child */
	bool end_msg;	/* PFM_MSG_END queued */
};

/* once the child is done: what the context counted, whether it ended */
static void collect(int fd, struct run *r)
{
	pfarg_msg_t msg;

	if (t_read_pmd(fd, PVPFM_VPMD_VM_EXITS, 0, &r->exits)) {
		r->setup = 4;
		return;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (read(fd, &msg, sizeof(msg)) == sizeof(msg))
		if (msg.type == PFM_MSG_END)
			r->end_msg = true;
}

/* what a monitor runs: the program it execs, and that program's mode */
struct exec_job {
	const char *path;
	const char *mode;
};

/* @r, with errno, as the monitor's result @res (t_child) */
static int report(struct run *r, void *res)
{
	r->err = errno;
	memcpy(res, r, sizeof(*r));
	return 0;
}

/*
 * The monitor becomes uid 65534 and creates a context counting VM_EXITS:
 * its descriptor, or -1 with r->setup 1 (the uid) or 2 (the context).
 */
static int nobody_ctx(struct run *r)
{
	uint16_t vm_exits = PVPFM_VPMD_VM_EXITS;
	int fd;

	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)) {
		r->setup = 1;
		return -1;
	}
	fd = t_create(0);
	if (fd < 0 || t_write_pmds(fd, &vm_exits, 1, 0)) {
		r->setup = 2;
		return -1;
	}
	return fd;
}

/*
 * In a child of the test (t_child): as uid 65534, monitor a child that
 * execs @job's path (argv[1] = its mode); a struct run in @res.
 */
static int monitor(void *job, void *res)
{
	const char *path = ((struct exec_job *)job)->path;
	const char *mode = ((struct exec_job *)job)->mode;
	struct run r = { 0 };
	pid_t pid;
	int fd;

	fd = nobody_ctx(&r);
	if (fd < 0)
		goto out;
	pid = fork();
	if (pid == 0) {
		/* load on self, start, exec: the context is on this thread */
		if (t_load(fd, t_gettid(), 0) || pfm_start(fd, NULL))
			_exit(4);
		execl(path, path, mode, (char *)NULL);
		_exit(5);
	}
	if (pid < 0 || waitpid(pid, &r.status, 0) != pid) {
		r.setup = 3;
		goto out;
	}
	collect(fd, &r);
out:
	return report(&r, res);
}

/* the held exec: a thread that serves the userfaultfd of its process */
struct held {
	int uffd;
	int ready;	/* write end: the exec is held */
	int go;		/* read end: the monitor has attached */
	const char *mode;
};

static void *serve_fault(void *arg)
{
	struct held *hd = arg;
	long page = sysconf(_SC_PAGESIZE);
	struct uffdio_copy copy = { .len = page };
	struct uffd_msg msg;
	char *src, c;

	src = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED || read(hd->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		_exit(6);
	strcpy(src, hd->mode);
	if (write(hd->ready, "h", 1) != 1 || read(hd->go, &c, 1) != 1)
		_exit(7);
	copy.dst = msg.arg.pagefault.address & ~(page - 1);
	copy.src = (unsigned long)src;
	if (ioctl(hd->uffd, UFFDIO_COPY, &copy))
		_exit(8);
	return NULL;
}

/*
 * The monitored child of the held exec: a userfaultfd page while root,
 * then nobody (dumpable, as a process nobody started), then execve(@path)
 * with argv[1] on that page; serve_fault() lets it go on.
 */
static void held_child(const char *path, struct held *hd)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_api api = { .api = UFFD_API };
	long page = sysconf(_SC_PAGESIZE);
	char *argv[3] = { (char *)path, NULL, NULL };
	pthread_t th;

	hd->uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	argv[1] = mmap(NULL, page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hd->uffd < 0 || argv[1] == MAP_FAILED ||
	    ioctl(hd->uffd, UFFDIO_API, &api))
		_exit(9);
	reg.range.start = (unsigned long)argv[1];
	reg.range.len = page;
	if (ioctl(hd->uffd, UFFDIO_REGISTER, &reg))
		_exit(10);
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) ||
	    prctl(PR_SET_DUMPABLE, 1))
		_exit(11);
	if (pthread_create(&th, NULL, serve_fault, hd))
		_exit(12);
	execv(path, argv);
	_exit(5);
}

/* as monitor(), attaching to a child held inside its exec of @path */
static int monitor_held(void *job, void *res)
{
	const char *path = ((struct exec_job *)job)->path;
	struct held hd = { .mode = ((struct exec_job *)job)->mode };
	int ready[2], go[2], fd = -1;
	struct run r = { 0 };
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(go)) {
		r.setup = 1;
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		hd.ready = ready[1];
		hd.go = go[0];
		held_child(path, &hd);
	}
	close(ready[1]);
	close(go[0]);
	if (pid < 0) {
		r.setup = 1;
		goto out;
	}
	fd = nobody_ctx(&r);
	if (fd < 0)
		goto out;
	/* the child is inside execve(), before its new credentials */
	if (read(ready[0], &c, 1) != 1) {
		r.setup = 5;
		goto out;
	}
	if (t_load(fd, pid, 0) || pfm_start(fd, NULL)) {
		r.setup = 6;
		goto out;
	}
	if (write(go[1], "g", 1) != 1 || waitpid(pid, &r.status, 0) != pid) {
		r.setup = 3;
		goto out;
	}
	collect(fd, &r);
out:
	return report(&r, res);
}

typedef int (*monitor_fn)(void *job, void *res);

static bool run_one(monitor_fn fn, const char *path, const char *mode,
		    struct run *r)
{
	struct exec_job job = { .path = path, .mode = mode };

	memset(r, 0, sizeof(*r));
	r->setup = 9;	/* the step "no report came", until one does */
	t_child(fn, &job, r, sizeof(*r));
	return !r->setup;
}

/*
 * The setuid copy run under @fn: the copy ran as euid 0 (@exit_codes:
 * what its exit status means otherwise), the new program is not counted
 * and PFM_MSG_END is queued. The checks' names start with @monitored
 * (the monitor's set-up and the copy) and @exec (what came of the exec).
 */
struct setuid_case {
	monitor_fn fn;
	const char *monitored, *exec, *exit_codes;
};

static const struct setuid_case setuid_cases[] = {
	{ monitor, "exec: setuid", "exec: setuid exec",
	  "exit 3: not root, 4: load/start, 5: exec" },
	{ monitor_held, "exec: attach held in a setuid exec",
	  "exec: attach linked after a setuid exec",
	  "exit 3: not root, 5: exec, 6-12: the held exec" },
};

#define SETUID_CASES_END \
	(setuid_cases + sizeof(setuid_cases) / sizeof(setuid_cases[0]))

/* false if the copy did not run as root: the cases after it mean nothing */
static bool setuid_case(const struct setuid_case *c, const char *suid)
{
	char name[128];
	struct run r;
	bool ok;

	ok = run_one(c->fn, suid, "spin-root", &r);
	snprintf(name, sizeof(name), "%s: monitor as uid 65534", c->monitored);
	if (!t_check(ok, name, "step %d: %s", r.setup, strerrorname_np(r.err)))
		return true;
	snprintf(name, sizeof(name), "%s: the copy ran as euid 0", c->monitored);
	if (!t_check(WIFEXITED(r.status) && !WEXITSTATUS(r.status), name,
		     "status %#x (%s)", r.status, c->exit_codes))
		return false;
	printf("%s: VM_EXITS %llu for %d exits\n", c->monitored,
	       (unsigned long long)r.exits, SPIN_EXITS);
	snprintf(name, sizeof(name), "%s: the new program is not counted",
		 c->exec);
	t_check(r.exits < SPIN_EXITS / 2, name, "VM_EXITS %llu for its %d exits",
		(unsigned long long)r.exits, SPIN_EXITS);
	snprintf(name, sizeof(name), "%s: PFM_MSG_END queued", c->exec);
	t_check(r.end_msg, name, "no PFM_MSG_END message");
	return true;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/t_exec.XXXXXX", plain[64], suid[64];
	struct run r;
	bool ok;

	if (argc == 2 && !strcmp(argv[1], "spin-plain"))
		return spin(false);
	if (argc == 2 && !strcmp(argv[1], "spin-root"))
		return spin(true);

	if (!t_root()) {
		t_skip("exec: setuid exec stops monitoring", "not root: cannot make a setuid copy");
		return t_done();
	}
	if (!mkdtemp(dir) || chmod(dir, 0755)) {
		t_fail("exec: setup", "%s: %s", dir, strerrorname_np(errno));
		return t_done();
	}
	snprintf(plain, sizeof(plain), "%s/plain", dir);
	snprintf(suid, sizeof(suid), "%s/suid", dir);
	if (copy_self(plain, 0755) || copy_self(suid, 04755)) {
		t_fail("exec: setup", "copies in %s: %s", dir,
		       strerrorname_np(errno));
		goto out;
	}

	/* the control: an exec that keeps the credentials stays counted */
	ok = run_one(monitor, plain, "spin-plain", &r);
	if (t_check(ok, "exec: plain: monitor as uid 65534", "step %d: %s",
		    r.setup, strerrorname_np(r.err))) {
		t_check(WIFEXITED(r.status) && !WEXITSTATUS(r.status),
			"exec: plain: the child ran the copy", "status %#x",
			r.status);
		printf("exec: plain copy: VM_EXITS %llu for %d exits\n",
		       (unsigned long long)r.exits, SPIN_EXITS);
		t_check(r.exits >= SPIN_EXITS,
			"exec: plain exec: the new program is counted",
			"VM_EXITS %llu < %d", (unsigned long long)r.exits,
			SPIN_EXITS);
	}

	for (const struct setuid_case *c = setuid_cases; c < SETUID_CASES_END; c++)
		if (!setuid_case(c, suid))
			break;
out:
	unlink(plain);
	unlink(suid);
	rmdir(dir);
	return t_done();
}
