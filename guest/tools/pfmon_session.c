// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon's session: its clock, the signals that end it, its length (-t)
 * and the command it runs.
 *
 * SIGINT, SIGTERM and SIGHUP do not kill pfmon: they end the session,
 * whose results pfmon then prints, as perf does. pfmon blocks them and
 * SIGCHLD from the start and reads them from a signalfd, so that one
 * poll waits for the contexts' messages, the command's end, the signals
 * and the session's timeout together. With a command the session ends
 * when the command does: a signal from the terminal (Ctrl-C, a hangup)
 * reached the command already, the two being in the foreground process
 * group; one a process sent pfmon, pfmon passes on to the command. The
 * command ends as it handles the signal, and pfmon exits with its status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pfmon.h"

static struct timespec t_start;
static sigset_t orig_mask;	/* pfmon's mask at start: the command's */
static sigset_t session_sigs;	/* blocked, read from sig_fd */
static int sig_fd = -1;
static int stop_sig;		/* the first signal that ended the session */
static pid_t cmd_pid;		/* the command while it runs, to pass them on */

void session_init(void)
{
	sigemptyset(&session_sigs);
	sigaddset(&session_sigs, SIGINT);
	sigaddset(&session_sigs, SIGTERM);
	sigaddset(&session_sigs, SIGHUP);
	sigaddset(&session_sigs, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &session_sigs, &orig_mask))
		die("sigprocmask: %s", strerror(errno));
	sig_fd = signalfd(-1, &session_sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sig_fd < 0)
		die("signalfd: %s", strerror(errno));
}

void session_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t_start);
}

double since_start(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t_start.tv_sec) +
	       (now.tv_nsec - t_start.tv_nsec) / 1e9;
}

int session_ms_left(void)
{
	double left;

	if (!opts.session_s)
		return -1;
	left = (double)opts.session_s - since_start();
	return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

int session_stop_signal(void)
{
	return stop_sig;
}

bool session_over(void)
{
	return stop_sig || !session_ms_left();
}

static void take_signals(void)
{
	struct signalfd_siginfo si;

	while (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (!stop_sig)
			stop_sig = (int)si.ssi_signo;
		if (cmd_pid > 0 && si.ssi_code != SI_KERNEL)
			kill(cmd_pid, (int)si.ssi_signo);
	}
}

int session_wait(struct pollfd *pfd, int n, int timeout_ms)
{
	static struct pollfd *all;
	static size_t cap;
	int left = session_ms_left(), ready;

	if (left >= 0 && (timeout_ms < 0 || left < timeout_ms))
		timeout_ms = left;
	all = grow(all, &cap, (size_t)n, sizeof(*all), 16);
	memcpy(all, pfd, (size_t)n * sizeof(*all));
	all[n] = (struct pollfd){ .fd = sig_fd, .events = POLLIN };
	ready = poll(all, (nfds_t)n + 1, timeout_ms);
	if (ready < 0) {
		if (errno != EINTR)
			die("poll: %s", strerror(errno));
		return 0;
	}
	if (all[n].revents) {
		take_signals();
		ready--;
	}
	memcpy(pfd, all, (size_t)n * sizeof(*all));
	return ready;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int cmd_status(pid_t pid, int st)
{
	if (pid == cmd_pid)
		cmd_pid = 0;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	fprintf(stderr, "pfmon: command killed by signal %d\n", WTERMSIG(st));
	return 128 + WTERMSIG(st);
}

int cmd_reap(pid_t pid)
{
	int st;
	pid_t w = waitpid(pid, &st, WNOHANG);

	if (w < 0 && errno != EINTR)
		die("waitpid: %s", strerror(errno));
	return w == pid ? cmd_status(pid, st) : -1;
}

int wait_cmd(pid_t pid)
{
	int rc;

	while ((rc = cmd_reap(pid)) < 0)
		session_wait(NULL, 0, -1);
	return rc;
}

pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/*
 * fork the command; with @fd, the child loads the context on itself and
 * starts it, then execs (self-monitoring: the context follows the thread
 * through exec). @traced (--follow-*): the child stops before its exec
 * for pfmon, its tracer, to set the tracing options. Its exec failure is
 * pfmon's 126 or 127, like a shell's.
 */
pid_t spawn(char **argv, int fd, bool traced)
{
	int pfd[2], err, st;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		/* the command gets pfmon's signal mask of before the session's */
		sigprocmask(SIG_SETMASK, &orig_mask, NULL);
		if (fd >= 0 && (ctx_load(fd, gettid_()) || pfm_start(fd, NULL))) {
			fprintf(stderr, "pfmon: loading and starting the context on the command: %s\n",
				load_strerror(errno));
			_exit(PFMON_EXIT_FAIL);
		}
		if (traced && (ptrace(PTRACE_TRACEME, 0, 0, 0) || raise(SIGSTOP))) {
			fprintf(stderr, "pfmon: ptrace: %s\n", strerror(errno));
			_exit(PFMON_EXIT_FAIL);
		}
		execvp(argv[0], argv);
		err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(PFMON_EXIT_FAIL);
		_exit(PFMON_EXIT_FAIL);
	}
	close(pfd[1]);
	cmd_pid = pid;
	if (traced) {
		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
			close(pfd[0]);
			exit(WIFEXITED(st) ? WEXITSTATUS(st) : PFMON_EXIT_FAIL);
		}
		ftask_traced(pid, fd);
	}
	/* exec done (the pipe closed) or failed (its errno) */
	if (read(pfd[0], &err, sizeof(err)) == sizeof(err)) {
		close(pfd[0]);
		waitpid(pid, NULL, 0);
		fprintf(stderr, "pfmon: cannot run %s: %s\n", argv[0],
			strerror(err));
		exit(err == ENOENT ? PFMON_EXIT_NOTFOUND : PFMON_EXIT_NOEXEC);
	}
	close(pfd[0]);
	return pid;
}
