// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon's counting sessions: a command (its first thread, the totals at
 * its end or every -I interval's deltas), CPUs (--system-wide: a context
 * each, until the command ends, -t or a signal; per CPU and in total) and
 * a task that exists (--attach-task: until it exits, -t or a signal).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfmon/perfmon.h>

#include "pfmon.h"

/* the command: with -I, every interval's deltas, then the last part's */
int count_cmd(char **argv, int fd)
{
	struct reading prev, cur;
	uint64_t tick = 0;
	pid_t pid;
	int rc = -1;

	session_start();
	pid = spawn(argv, fd, false);
	if (!opts.interval_ms) {
		rc = wait_cmd(pid);
		final_report(fd, NULL, NULL);
		return rc;
	}
	memset(&prev, 0, sizeof(prev));
	print_interval_header();
	while (rc < 0) {
		double next;

		tick++;
		next = (double)(tick * opts.interval_ms) / 1000;
		/* sleep to the next tick, or until the command ends */
		while ((rc = cmd_reap(pid)) < 0 && since_start() < next)
			session_wait(NULL, 0,
				     (int)((next - since_start()) * 1000) + 1);
		ctx_read(fd, &cur);
		print_counts(NULL, &cur, &prev);
		prev = cur;
	}
	warn_host_limits(NULL, &cur);
	return rc;
}

/* --cpu-list's CPUs (N,N-M,...), each once, in order */
static int parse_cpus(const char *l, int **cpus, int max_cpu)
{
	char *copy = strdup(l), *tok, *save = NULL;
	cpu_set_t *seen = CPU_ALLOC(max_cpu + 1);
	size_t setsize = CPU_ALLOC_SIZE(max_cpu + 1), cap = 0;
	int n = 0;

	if (!copy || !seen)
		die("out of memory");
	CPU_ZERO_S(setsize, seen);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int a, b;
		char c;

		if (sscanf(tok, "%d-%d%c", &a, &b, &c) == 2) {
		} else if (sscanf(tok, "%d%c", &a, &c) == 1) {
			b = a;
		} else {
			die("--cpu-list: bad element '%s' in '%s' (want N or N-M, comma-separated)",
			    tok, l);
		}
		if (a < 0 || b < a || b > max_cpu)
			die("--cpu-list: bad range '%s' (CPUs 0-%d)", tok,
			    max_cpu);
		for (int cpu = a; cpu <= b; cpu++) {
			if (CPU_ISSET_S(cpu, setsize, seen))
				die("--cpu-list: CPU %d given twice", cpu);
			CPU_SET_S(cpu, setsize, seen);
			*cpus = grow(*cpus, &cap, n, sizeof(**cpus), 64);
			(*cpus)[n++] = cpu;
		}
	}
	CPU_FREE(seen);
	free(copy);
	return n;
}

/* the CPUs pfmon may run on, in order */
static int allowed_cpus(int **cpus, int max_cpu)
{
	cpu_set_t *set = CPU_ALLOC(max_cpu + 1);
	size_t setsize = CPU_ALLOC_SIZE(max_cpu + 1), cap = 0;
	int n = 0;

	if (!set)
		die("out of memory");
	if (sched_getaffinity(0, setsize, set))
		die("sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c <= max_cpu; c++) {
		if (!CPU_ISSET_S(c, setsize, set))
			continue;
		*cpus = grow(*cpus, &cap, n, sizeof(**cpus), 64);
		(*cpus)[n++] = c;
	}
	CPU_FREE(set);
	return n;
}

static int pin(int cpu, int max_cpu)
{
	cpu_set_t *set = CPU_ALLOC(max_cpu + 1);
	size_t setsize = CPU_ALLOC_SIZE(max_cpu + 1);
	int rc;

	if (!set)
		die("out of memory");
	CPU_ZERO_S(setsize, set);
	CPU_SET_S(cpu, setsize, set);
	rc = sched_setaffinity(0, setsize, set);
	CPU_FREE(set);
	return rc;
}

/* why the session ended, for a line on stderr */
static void say_session_end(const char *what)
{
	int sig = session_stop_signal();

	if (sig)
		fprintf(stderr, "pfmon: %s: stopped by SIG%s after %.1f s\n",
			what, sigabbrev_np(sig), since_start());
	else if (opts.session_s && !session_ms_left())
		fprintf(stderr, "pfmon: %s: session timeout (%llu s) reached\n",
			what, (unsigned long long)opts.session_s);
}

/*
 * Every CPU pfmon may run on, or --cpu-list's: a system-wide context
 * each, loaded and started from its CPU; printed per CPU, then their
 * total (cpusN), or only the total with --aggregate-results. With
 * --smpl-period each samples, one profile of them all.
 */
int count_syswide(const char *cpulist, char **argv)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	int max_cpu = (int)(conf > CPU_SETSIZE ? conf : CPU_SETSIZE) - 1;
	int *cpus = NULL, n, rc = -1;
	struct smpl_ctx *sc = NULL;
	struct pollfd *pfd;
	struct reading r, sum;
	char title[64];
	pid_t pid = 0;

	n = cpulist ? parse_cpus(cpulist, &cpus, max_cpu) :
		      allowed_cpus(&cpus, max_cpu);
	pfd = calloc((size_t)n, sizeof(*pfd));
	sc = calloc((size_t)n, sizeof(*sc));
	if (!pfd || !sc)
		die("out of memory");
	session_start();
	for (int i = 0; i < n; i++) {
		int fd = ctx_create(PFM_FL_SYSTEM_WIDE);

		ctx_program(fd);
		if (pin(cpus[i], max_cpu))
			die("CPU %d: cannot run there: %s", cpus[i], strerror(errno));
		if (ctx_load(fd, cpus[i]))
			die("CPU %d: loading a system-wide context: %s%s", cpus[i],
			    load_strerror(errno), errno == EBUSY ?
			    " (a per-thread or system-wide context is in use there)" : "");
		if (pfm_start(fd, NULL))
			die("CPU %d: start: %s", cpus[i], strerror(errno));
		pfd[i] = (struct pollfd){ .fd = fd, .events = POLLIN };
		sc[i].fd = fd;
		if (opts.smpl_period)
			smpl_map(&sc[i], fd);
	}
	if (opts.smpl_period) {
		snprintf(title, sizeof(title), "%d CPUs (system-wide)", n);
		smpl_begin(title);
	}
	if (argv[0]) {
		pid = spawn(argv, -1, false);
		if (opts.smpl_period)
			syms_watch(pid);
	} else if (opts.session_s) {
		fprintf(stderr, "pfmon: monitoring system-wide for %llu s, or until SIGINT or SIGTERM\n",
			(unsigned long long)opts.session_s);
	} else {
		fprintf(stderr, "pfmon: monitoring system-wide until SIGINT or SIGTERM\n");
	}
	for (;;) {
		if (pid ? (rc = cmd_reap(pid)) >= 0 : session_over())
			break;
		if (!opts.smpl_period) {
			session_wait(NULL, 0, -1);
			continue;
		}
		if (session_wait(pfd, n, SMPL_POLL_MS) > 0)
			for (int i = 0; i < n; i++)
				if (pfd[i].revents)
					smpl_msg(&sc[i]);
		for (int i = 0; i < n; i++)
			smpl_poll(&sc[i]);
		syms_snapshot();
	}
	if (!pid)
		say_session_end("system-wide");
	memset(&sum, 0, sizeof(sum));
	for (int i = 0; i < n; i++) {
		pin(cpus[i], max_cpu);
		pfm_stop(sc[i].fd);
		smpl_unmap(&sc[i]);
		smpl_read(sc[i].fd, opts.smpl_period ? &sc[i] : NULL, &r);
		reading_add(&sum, &r);
		close(sc[i].fd);
		if (opts.aggregate)
			continue;
		snprintf(title, sizeof(title), "cpu%d", cpus[i]);
		print_counts(title, &r, NULL);
		warn_host_limits(title, &r);
	}
	if (n > 1 || opts.aggregate) {
		sum.t = since_start();
		snprintf(title, sizeof(title), "cpus%d", n);
		print_counts(title, &sum, NULL);
		warn_host_limits(title, &sum);
	}
	if (opts.smpl_period)
		smpl_end();
	free(sc);
	free(pfd);
	free(cpus);
	return pid ? rc : 0;
}

/*
 * A task that exists, its context @fd programmed: attached (ptrace
 * rights), loaded and started while pfmon holds it stopped, then let go;
 * monitored until it exits (PFM_MSG_END), -t passes or a signal comes,
 * then stopped, read and unloaded. Its exit status is 0: pfmon did not
 * start the task.
 */
int count_attached(pid_t pid, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct smpl_ctx sc = { .fd = fd };
	char title[4200];
	bool ended = false;
	pfarg_msg_t msg;
	int st;

	if (ptrace(PTRACE_ATTACH, pid, 0, 0))
		die("attaching to %d: %s%s", pid, strerror(errno),
		    errno == EPERM ?
		    " (need the right to ptrace it: same user and ptrace_scope, or CAP_SYS_PTRACE)" : "");
	if (waitpid(pid, &st, __WALL) < 0)
		die("waitpid %d: %s", pid, strerror(errno));
	session_start();
	if (ctx_load(fd, pid))
		die("loading the context on %d: %s", pid, load_strerror(errno));
	if (pfm_start(fd, NULL))
		die("start: %s", strerror(errno));
	if (opts.smpl_period) {
		char path[64], exe[4096];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		n = readlink(path, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		snprintf(title, sizeof(title), "task %d (%s)", pid,
			 n > 0 ? exe : "?");
		smpl_begin(title);
		if (!opts.follow) {
			smpl_map(&sc, fd);
			syms_watch(tgid_of(pid));
		}
	}
	if (opts.session_s)
		fprintf(stderr, "pfmon: monitoring task %d for %llu s, or until it exits, SIGINT or SIGTERM\n",
			pid, (unsigned long long)opts.session_s);
	else
		fprintf(stderr, "pfmon: monitoring task %d until it exits, SIGINT or SIGTERM\n",
			pid);
	if (opts.follow) {
		follow_attached(pid, fd);
		snprintf(title, sizeof(title), "task%d", pid);
		if (session_over())
			say_session_end(title);
		return 0;
	}
	ptrace(PTRACE_DETACH, pid, 0, 0);
	while (!ended && !session_over()) {
		int ready = session_wait(&pfd, 1, opts.smpl_period ?
					 SMPL_POLL_MS : -1);

		if (opts.smpl_period) {
			if (ready > 0)
				ended = smpl_msg(&sc);
			smpl_poll(&sc);
			syms_snapshot();
		} else if (ready > 0 &&
			   read(fd, &msg, sizeof(msg)) == sizeof(msg)) {
			ended = msg.type == PFM_MSG_END;
		}
	}
	snprintf(title, sizeof(title), "task%d", pid);
	if (!ended) {
		say_session_end(title);
		pfm_stop(fd);
	}
	smpl_unmap(&sc);
	final_report(fd, opts.smpl_period ? &sc : NULL, title);
	if (!ended && pfm_unload_context(fd))
		fprintf(stderr, "pfmon: unloading the context from %d: %s\n",
			pid, strerror(errno));
	if (opts.smpl_period)
		smpl_end();
	return 0;
}
