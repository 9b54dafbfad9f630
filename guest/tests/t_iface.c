// SPDX-License-Identifier: GPL-2.0
/*
 * The rest of the perfmon2 interface: /sys/kernel/perfmon, close()
 * destroying contexts, the sampling buffer mapped read-only, messages
 * (read, poll), attaching to a ptrace-stopped thread and PFM_MSG_END when
 * it exits, and the cost rule of the context-switch hook: SWITCH commands
 * only when a monitored thread leaves or enters a vCPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

#define CHILD_EXITS	500

static void sysfs(void)
{
	char buf[256], want[32], path[64];
	struct t_reg regs[128];
	int n, i, vpmds = 0;
	bool ok = true;
	long long old;

	snprintf(want, sizeof(want), "%u.%u", PFM_VERSION_MAJOR(PFM_VERSION),
		 PFM_VERSION_MINOR(PFM_VERSION));
	t_check(!t_sysfs_read("version", buf, sizeof(buf)) && !strcmp(buf, want),
		"iface: sysfs version", "'%s', want '%s'", buf, want);
	t_check(t_pmu_model(buf, sizeof(buf)), "iface: sysfs pmu_desc/model",
		"%s", strerror(errno));
	n = t_mappings(regs, 128);
	for (i = 0; i < n; i++) {
		if (!regs[i].pmc && regs[i].num >= PVPFM_VPMD_VCPU_RUN_NS &&
		    regs[i].num < PVPFM_VPMD_END)
			vpmds++;
		if (i && regs[i].pmc && !regs[i - 1].pmc)
			ok = false;	/* PMCs first */
	}
	t_check(n > 0 && ok && vpmds == PVPFM_VPMD_END - PVPFM_VPMD_VCPU_RUN_NS,
		"iface: sysfs pmu_desc/mappings", "%d lines, %d virtual PMDs, order %s",
		n, vpmds, ok ? "ok" : "PMC after PMD");

	if (t_sysfs_num("device/features", 0) & PVPFM_F_SAMPLING)
		t_check(!t_sysfs_read("formats/default/version", buf, sizeof(buf)) &&
			!strcmp(buf, "1.0"), "iface: sysfs formats/default/version",
			"'%s'", buf);

	ok = true;
	for (i = 0; i < 4; i++) {
		static const char *const c[] = {
			"task_group", "sys_group", "arg_mem_max",
			"smpl_buffer_mem_max",
		};
		snprintf(path, sizeof(path), "controls/%s", c[i]);
		ok &= !t_sysfs_read(path, buf, sizeof(buf));
	}
	t_check(ok, "iface: sysfs controls readable", "%s", strerror(errno));
	if (!t_root())
		return;
	old = t_sysfs_num("controls/arg_mem_max", -1);
	t_expect_err("iface: arg_mem_max below one entry refused",
		     t_sysfs_write("controls/arg_mem_max", "8"), EINVAL);
	t_expect_err("iface: arg_mem_max above a command block refused",
		     t_sysfs_write("controls/arg_mem_max", "1000000"), EINVAL);
	t_expect_ok("iface: arg_mem_max set to 8192",
		    t_sysfs_write("controls/arg_mem_max", "8192"));
	t_check(t_sysfs_num("controls/arg_mem_max", -1) == 8192,
		"iface: arg_mem_max reads back", "%lld",
		t_sysfs_num("controls/arg_mem_max", -1));
	snprintf(buf, sizeof(buf), "%lld", old);
	t_sysfs_write("controls/arg_mem_max", buf);
	t_expect_err("iface: task_group garbage refused",
		     t_sysfs_write("controls/task_group", "wheel"), EINVAL);
}

static void close_destroys(void)
{
	long long max = t_sysfs_num("device/max_contexts", -1);
	struct rlimit nofile;
	static int fds[4096];
	int i, n = 0, fd;
	bool ok = true;

	if (max <= 0 || max > 4096) {
		t_skip("iface: close() destroys", "max_contexts %lld", max);
		return;
	}
	/* every context an fd: room for them beside stdio */
	nofile.rlim_cur = nofile.rlim_max = max + 64;
	if (!t_expect_ok("iface: RLIMIT_NOFILE for max_contexts fds",
			 setrlimit(RLIMIT_NOFILE, &nofile)))
		return;
	for (i = 0; i < max + 5 && ok; i++) {
		fd = t_create(0);
		ok = fd >= 0;
		if (ok)
			close(fd);
	}
	t_check(ok, "iface: close() destroys (more creates than max_contexts)",
		"create %d of %lld: %s", i, max + 5, strerror(errno));
	while (n < max && (fds[n] = t_create(0)) >= 0)
		n++;
	t_check(n == max, "iface: max_contexts open at once", "%d of %lld: %s",
		n, max, strerror(errno));
	t_expect_err("iface: one more: EMFILE", t_create(0), EMFILE);
	while (n > 0)
		close(fds[--n]);
	fd = t_create(0);
	t_expect_ok("iface: creatable again after close()", fd);
	if (fd >= 0)
		close(fd);
}

static void sampling_buffer(void)
{
	const size_t size = 3 * 4096 + 100;
	long long cur0, cur1, cur2;
	pfm_dfl_smpl_hdr_t *hdr;
	void *p;
	int fd;

	if (!(t_sysfs_num("device/features", 0) & PVPFM_F_SAMPLING)) {
		t_skip("iface: sampling buffer", "the host has no sampling");
		return;
	}
	cur0 = t_sysfs_num("controls/smpl_buffer_mem_cur", -1);
	fd = t_smpl_create(0, size);
	if (!t_expect_ok("iface: create with the default format", fd))
		return;
	cur1 = t_sysfs_num("controls/smpl_buffer_mem_cur", -1);
	t_check(cur1 - cur0 == 4 * 4096, "iface: buffer charged",
		"smpl_buffer_mem_cur %lld -> %lld", cur0, cur1);

	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (!t_check(p != MAP_FAILED, "iface: mmap the buffer read-only", "%s",
		     strerror(errno))) {
		close(fd);
		return;
	}
	hdr = p;
	t_check(hdr->hdr_buf_size == size && hdr->hdr_version == PFM_DFL_SMPL_VERSION &&
		hdr->hdr_count == 0 && hdr->hdr_cur_offs == sizeof(*hdr),
		"iface: the host wrote the header into the registered pages",
		"buf_size %llu, version %#x, count %llu, cur_offs %llu",
		(unsigned long long)hdr->hdr_buf_size, hdr->hdr_version,
		(unsigned long long)hdr->hdr_count,
		(unsigned long long)hdr->hdr_cur_offs);
	t_check(mprotect(p, 4096, PROT_READ | PROT_WRITE) == -1,
		"iface: the mapping cannot be made writable", "mprotect succeeded");
	munmap(p, size);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	t_check(p == MAP_FAILED && errno == EINVAL,
		"iface: writable mmap: EINVAL (perfmon2)",
		"%s", p == MAP_FAILED ? strerror(errno) : "mapped");
	if (p != MAP_FAILED)
		munmap(p, size);
	close(fd);
	cur2 = t_sysfs_num("controls/smpl_buffer_mem_cur", -1);
	t_check(cur2 == cur0, "iface: buffer released at close()",
		"smpl_buffer_mem_cur %lld -> %lld", cur0, cur2);
	fd = t_create(0);
	if (fd >= 0) {
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		t_check(p == MAP_FAILED && errno == EINVAL,
			"iface: mmap without a buffer: EINVAL", "%s",
			p == MAP_FAILED ? strerror(errno) : "mapped");
		close(fd);
	}
}

static void messages_empty(void)
{
	short revents;
	pfarg_msg_t msg;
	int fd = t_create(0), flags;

	if (fd < 0)
		return;
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	t_expect_err("iface: read without a message, O_NONBLOCK: EAGAIN",
		     (int)read(fd, &msg, sizeof(msg)), EAGAIN);
	t_expect_err("iface: read with a short buffer: EINVAL",
		     (int)read(fd, &msg, 8), EINVAL);
	t_check(t_poll_in(fd, 0, &revents) == 0, "iface: poll without a message",
		"revents %#x", revents);
	close(fd);
}

/* attach to a ptrace-stopped child; it runs, exits: PFM_MSG_END */
static void attach(void)
{
	const uint16_t pmds[] = { PVPFM_VPMD_VCPU_RUN_NS, PVPFM_VPMD_VM_EXITS };
	uint64_t run = 0, exits = 0;
	short revents;
	int fd, status, n;
	pid_t child;

	child = t_stopped_child(50 * MS, CHILD_EXITS,
				"iface: child ptrace-stopped");
	if (child < 0)
		return;
	fd = t_create(0);
	if (fd < 0)
		goto kill;
	t_write_pmds(fd, pmds, 2, 0);
	if (!t_expect_ok("iface: attach to a ptrace-stopped thread",
			 t_load(fd, child, 0)))
		goto kill;
	t_expect_ok("iface: start the attached context", pfm_start(fd, NULL));
	ptrace(PTRACE_CONT, child, NULL, NULL);
	waitpid(child, &status, 0);
	t_read_pmd(fd, PVPFM_VPMD_VCPU_RUN_NS, 0, &run);
	t_read_pmd(fd, PVPFM_VPMD_VM_EXITS, 0, &exits);
	t_check(run > 0 && exits >= CHILD_EXITS,
		"iface: the attached thread was counted",
		"VCPU_RUN_NS %llu after a 50 ms busy loop, VM_EXITS %llu for its %d exits",
		(unsigned long long)run, (unsigned long long)exits, CHILD_EXITS);
	n = t_poll_in(fd, 2000, &revents);
	t_check(n == 1 && (revents & POLLIN), "iface: poll sees the end message",
		"poll %d, revents %#x", n, revents);
	t_check_end_msg(fd, "iface: PFM_MSG_END when the thread exits");
	/* unloaded by the exit: perfmon2's unload of it does nothing, 0 */
	t_expect_ok("iface: unload after the thread ended: 0",
		    pfm_unload_context(fd));
	t_expect_err("iface: stop after the thread ended: EINVAL (unloaded)",
		     pfm_stop(fd), EINVAL);
	close(fd);
	return;
kill:
	t_kill_child(child);
	if (fd >= 0)
		close(fd);
}

/*
 * A context attached to another process follows it: the child (stopped
 * under ptrace, as perfmon2 programs attach) and this unmonitored parent play
 * ping-pong on one vCPU, each making its own exits in its turn; then the
 * child moves to another vCPU for a last turn. VM_EXITS must hold all
 * of the child's exits and none of the parent's.
 */
#define PP_ROUNDS	20
#define PP_CHILD_EXITS	100
#define PP_PARENT_EXITS	200

static void pp_child(int cpu, int other_cpu, int in, int out)
{
	char c;

	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	raise(SIGSTOP);
	if (t_pin(cpu))
		_exit(2);
	for (int i = 0; i < PP_ROUNDS; i++) {
		if (read(in, &c, 1) != 1)
			_exit(3);
		t_exits(PP_CHILD_EXITS);
		if (write(out, &c, 1) != 1)
			_exit(3);
	}
	if (t_pin(other_cpu))
		_exit(2);
	t_exits(PP_CHILD_EXITS);
	_exit(0);
}

static void attach_follows(void)
{
	const uint16_t exits_pmd = PVPFM_VPMD_VM_EXITS;
	const uint64_t child_exits = (PP_ROUNDS + 1) * PP_CHILD_EXITS;
	const uint64_t parent_exits = PP_ROUNDS * PP_PARENT_EXITS;
	int cpus[64], ncpus = t_online_cpus(cpus, 64);
	int to_child[2], to_parent[2], fd = -1, status, i;
	long long sw0, sw1;
	uint64_t exits = 0;
	cpu_set_t affinity;
	pid_t child;
	char c = 0;

	if (ncpus < 1 || sched_getaffinity(0, sizeof(affinity), &affinity) ||
	    pipe(to_child) || pipe(to_parent))
		return;
	child = fork();
	if (child < 0)
		return;
	if (!child)
		pp_child(cpus[0], cpus[ncpus - 1], to_child[0], to_parent[1]);
	waitpid(child, &status, 0);
	if (!t_check(WIFSTOPPED(status), "iface: ping-pong child ptrace-stopped",
		     "status %#x", status))
		goto kill;
	fd = t_create(0);
	if (fd < 0 || t_write_pmds(fd, &exits_pmd, 1, 0) ||
	    !t_expect_ok("iface: attach to the ping-pong child",
			 t_load(fd, child, 0)) ||
	    !t_expect_ok("iface: start on the ping-pong child",
			 pfm_start(fd, NULL)) ||
	    !t_check(!t_pin(cpus[0]), "iface: ping-pong on one vCPU", "CPU %d",
		     cpus[0]))
		goto kill;
	sw0 = t_sysfs_num("device/switches", -1);
	ptrace(PTRACE_CONT, child, NULL, NULL);
	for (i = 0; i < PP_ROUNDS; i++) {
		if (write(to_child[1], &c, 1) != 1 ||
		    read(to_parent[0], &c, 1) != 1)
			break;
		t_exits(PP_PARENT_EXITS);
	}
	waitpid(child, &status, 0);
	sw1 = t_sysfs_num("device/switches", -1);
	t_read_pmd(fd, exits_pmd, 0, &exits);
	t_check(i == PP_ROUNDS && WIFEXITED(status) && !WEXITSTATUS(status),
		"iface: ping-pong played", "%d rounds, child status %#x", i,
		status);
	/* the child's context switches: in and out of its vCPU each round */
	t_check(sw1 - sw0 >= 2 * PP_ROUNDS, "iface: the child switched in and out",
		"%lld SWITCH commands in %d rounds", sw1 - sw0, PP_ROUNDS);
	/* background exits of the child's own run time: far below half */
	t_check(exits >= child_exits && exits < child_exits + parent_exits / 2,
		"iface: only the monitored side of a ping-pong pair counted",
		"VM_EXITS %llu: the child made %llu (the last %d on CPU %d), "
		"its unmonitored parent %llu on the same vCPU",
		(unsigned long long)exits, (unsigned long long)child_exits,
		PP_CHILD_EXITS, cpus[ncpus - 1],
		(unsigned long long)parent_exits);
	if (ncpus < 2)
		t_skip("iface: counts follow the child to another vCPU",
		       "one vCPU");
	goto out;
kill:
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
out:
	sched_setaffinity(0, sizeof(affinity), &affinity);
	if (fd >= 0)
		close(fd);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
}

/* pipe ping-pong between two processes: @rounds round trips */
static void ping_pong(int rounds)
{
	int ab[2], ba[2], status;
	char c = 0;
	pid_t pid;

	if (pipe(ab) || pipe(ba))
		return;
	pid = fork();
	if (!pid) {
		close(ab[1]);
		close(ba[0]);
		while (read(ab[0], &c, 1) == 1 && write(ba[1], &c, 1) == 1)
			;
		_exit(0);
	}
	close(ab[0]);
	close(ba[1]);
	for (int i = 0; pid > 0 && i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			break;
	close(ab[1]);
	close(ba[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
}

static void switch_cost(void)
{
	uint16_t run = PVPFM_VPMD_VCPU_RUN_NS;
	long long s0, s1, e0, e1;
	const int sleeps = 100;
	struct rusage r0, r1;
	long csw;
	int fd;

	s0 = t_sysfs_num("device/switches", -1);
	ping_pong(500);
	s1 = t_sysfs_num("device/switches", -1);
	t_check(s0 >= 0 && s1 == s0, "iface: unmonitored switches issue no SWITCH",
		"%lld SWITCH commands over 1000 unmonitored context switches",
		s1 - s0);

	fd = t_create(0);
	if (fd < 0 || t_write_pmds(fd, &run, 1, 0) ||
	    t_load(fd, t_gettid(), 0) || pfm_start(fd, NULL)) {
		t_fail("iface: monitored thread set up", "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	e0 = t_sysfs_num("device/switch_errors", -1);
	getrusage(RUSAGE_THREAD, &r0);
	s0 = t_sysfs_num("device/switches", -1);
	for (int i = 0; i < sleeps; i++)
		t_sleep_ns(2 * MS);
	s1 = t_sysfs_num("device/switches", -1);
	getrusage(RUSAGE_THREAD, &r1);
	e1 = t_sysfs_num("device/switch_errors", -1);
	/*
	 * Each time this thread leaves its vCPU: one SWITCH out, then one in.
	 * A sleep whose timer expires before the thread blocks (a slow
	 * guest) switches nothing, so count the thread's context switches;
	 * the two around the reads of the counter may fall outside.
	 */
	csw = (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw);
	t_check(csw >= sleeps / 2 && s1 - s0 <= 2 * csw && s1 - s0 >= 2 * csw - 4,
		"iface: a monitored thread's switches: one SWITCH out, one in",
		"%lld SWITCH commands for %ld context switches (%d sleeps)",
		s1 - s0, csw, sleeps);
	t_check(e1 == e0, "iface: no SWITCH refused", "switch_errors %lld -> %lld",
		e0, e1);
	pfm_stop(fd);
	close(fd);
}

int main(void)
{
	sysfs();
	close_destroys();
	sampling_buffer();
	messages_empty();
	attach();
	attach_follows();
	switch_cost();
	return t_done();
}
