// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers for the guest test programs: see t_common.h.
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
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "t_common.h"

bool t_expect_err(const char *name, int ret, int want)
{
	int err = errno;

	if (ret == -1 && err == want) {
		t_pass(name);
		return true;
	}
	if (ret == -1)
		t_fail(name, "errno %s, want %s", strerrorname_np(err),
		       strerrorname_np(want));
	else
		t_fail(name, "returned %d, want -1 with %s", ret,
		       strerrorname_np(want));
	return false;
}

bool t_expect_ok(const char *name, int ret)
{
	if (ret != -1) {
		t_pass(name);
		return true;
	}
	t_fail(name, "-1, errno %s", strerrorname_np(errno));
	return false;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

uint64_t t_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t t_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void t_busy_ns(uint64_t ns)
{
	uint64_t end = t_now_ns() + ns;
	volatile uint64_t x = 0;

	while (t_now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x += i;
}

void t_exits(unsigned int n)
{
	unsigned int a, b, c, d;

	while (n--) {
		a = 0;
		c = 0;
		/* volatile: executed every time, its results unused */
		__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	}
}

void t_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / SEC,
		.tv_nsec = ns % SEC,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int t_online_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;

	/* the CPUs this process may run on: online ones, as a rule */
	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

unsigned long long t_irqs(const char *action, int *lines)
{
	unsigned long long sum = 0;
	char line[1024], *p, *end;
	FILE *f = fopen("/proc/interrupts", "r");

	*lines = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, action))
			continue;
		(*lines)++;
		/* "IRQ:  count count ...  chip  hwirq  type  action" */
		p = strchr(line, ':');
		if (!p)
			continue;
		for (p++;; p = end) {
			unsigned long long n = strtoull(p, &end, 10);

			if (end == p)
				break;
			sum += n;
		}
	}
	fclose(f);
	return sum;
}

int t_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -1;
	/* the migration happens before sched_setaffinity() returns */
	return sched_getcpu() == cpu ? 0 : -1;
}

static void sysfs_path(char *path, size_t size, const char *rel)
{
	snprintf(path, size, "%s/%s", T_SYSFS, rel);
}

int t_sysfs_read(const char *rel, char *buf, size_t size)
{
	char path[256];
	FILE *f;

	sysfs_path(path, sizeof(path), rel);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, size, f)) {
		fclose(f);
		errno = EIO;
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

long long t_sysfs_num(const char *rel, long long dflt)
{
	char buf[64];

	if (t_sysfs_read(rel, buf, sizeof(buf)))
		return dflt;
	return strtoll(buf, NULL, 0);
}

int t_sysfs_write(const char *rel, const char *val)
{
	char path[256];
	ssize_t n;
	int fd;

	sysfs_path(path, sizeof(path), rel);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	if (n < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	close(fd);
	return 0;
}

int t_mappings(struct t_reg *regs, int max)
{
	char path[256], line[256], kind[4];
	unsigned long long dfl, mask;
	unsigned int num;
	int n = 0;
	FILE *f;

	sysfs_path(path, sizeof(path), "pmu_desc/mappings");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		struct t_reg *r = &regs[n];

		if (sscanf(line, "PM%1[CD]%u:%llx:%llx:%31s", kind, &num, &dfl,
			   &mask, r->name) != 5) {
			fclose(f);
			errno = EPROTO;
			return -1;
		}
		r->pmc = kind[0] == 'C';
		r->num = num;
		r->dfl = dfl;
		r->mask = mask;
		n++;
	}
	fclose(f);
	return n;
}

bool t_pmu_model(char *buf, size_t size)
{
	return !t_sysfs_read("pmu_desc/model", buf, size) && buf[0];
}

int t_create(uint32_t ctx_flags)
{
	pfarg_ctx_t ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = ctx_flags;
	return pfm_create_context(&ctx, NULL, NULL, 0);
}

int t_load(int fd, uint32_t pid_or_cpu, uint16_t set)
{
	pfarg_load_t load;

	memset(&load, 0, sizeof(load));
	load.load_pid = pid_or_cpu;
	load.load_set = set;
	return pfm_load_context(fd, &load);
}

int t_write_pmds(int fd, const uint16_t *nums, int n, uint16_t set)
{
	pfarg_pmd_t pd[16];

	if (n > 16) {
		errno = E2BIG;
		return -1;
	}
	memset(pd, 0, sizeof(pd));
	for (int i = 0; i < n; i++) {
		pd[i].reg_num = nums[i];
		pd[i].reg_set = set;
	}
	return pfm_write_pmds(fd, pd, n);
}

void t_pmd_period(pfarg_pmd_t *pd, uint16_t num, uint64_t period,
		  uint32_t flags)
{
	memset(pd, 0, sizeof(*pd));
	pd->reg_num = num;
	pd->reg_flags = flags;
	pd->reg_value = -period;
	pd->reg_short_reset = -period;
	pd->reg_long_reset = -period;
}

int t_smpl_create(uint32_t ctx_flags, uint64_t buf_size)
{
	pfm_dfl_smpl_arg_t arg;
	pfarg_ctx_t ctx;

	memset(&ctx, 0, sizeof(ctx));
	memset(&arg, 0, sizeof(arg));
	ctx.ctx_flags = ctx_flags;
	arg.buf_size = buf_size;
	return pfm_create_context(&ctx, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
}

int t_poll_in(int fd, int timeout_ms, short *revents)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);

	*revents = p.revents;
	return n;
}

bool t_wait_msg(int fd, pfarg_msg_t *m, int ms)
{
	short revents;

	memset(m, 0, sizeof(*m));
	return t_poll_in(fd, ms, &revents) == 1 &&
	       read(fd, m, sizeof(*m)) == sizeof(*m);
}

int t_read_pmd(int fd, uint16_t num, uint16_t set, uint64_t *val)
{
	pfarg_pmd_t pd;

	memset(&pd, 0, sizeof(pd));
	pd.reg_num = num;
	pd.reg_set = set;
	if (pfm_read_pmds(fd, &pd, 1))
		return -1;
	*val = pd.reg_value;
	return 0;
}

int t_read_run_exits(int fd, uint64_t *run_ns, uint64_t *exits)
{
	pfarg_pmd_t pd[2];

	memset(pd, 0, sizeof(pd));
	pd[0].reg_num = PVPFM_VPMD_VCPU_RUN_NS;
	pd[1].reg_num = PVPFM_VPMD_VM_EXITS;
	if (pfm_read_pmds(fd, pd, 2))
		return -1;
	*run_ns = pd[0].reg_value;
	*exits = pd[1].reg_value;
	return 0;
}

pid_t t_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

pid_t t_stopped_child(uint64_t busy_ns, unsigned int exits, const char *name)
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		t_fail(name, "fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		t_busy_ns(busy_ns);
		t_exits(exits);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (t_check(WIFSTOPPED(status), name, "status %#x", status))
		return pid;
	t_kill_child(pid);
	return -1;
}

void t_kill_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

bool t_check_end_msg(int fd, const char *name)
{
	pfarg_msg_t msg;
	int n;

	memset(&msg, 0, sizeof(msg));
	n = read(fd, &msg, sizeof(msg));
	return t_check(n == sizeof(msg) && msg.type == PFM_MSG_END, name,
		       "read %d, type %u", n, msg.type);
}

bool t_root(void)
{
	return geteuid() == 0;
}

int t_control_open(const char *path)
{
	struct termios t;
	int fd = open(path, O_RDONLY | O_NOCTTY);

	/* raw: no echo back into the host's pipe, no line editing */
	if (fd < 0 || tcgetattr(fd, &t))
		return -1;
	cfmakeraw(&t);
	return tcsetattr(fd, TCSANOW, &t) ? -1 : fd;
}

int t_control_arg(int argc, char **argv, const char *prog)
{
	char name[64];
	int ctl;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CONTROL\n", prog);
		exit(2);
	}
	ctl = t_control_open(argv[1]);
	snprintf(name, sizeof(name), "%s: open the control port", prog);
	t_check(ctl >= 0, name, "%s: %s", argv[1], strerror(errno));
	return ctl;
}

bool t_control_wait(int ctl, const char *want, int timeout_s,
		    const char *name)
{
	char line[64];
	size_t n = 0;
	struct pollfd p = { .fd = ctl, .events = POLLIN };

	while (n < sizeof(line) - 1) {
		if (poll(&p, 1, timeout_s * 1000) != 1 ||
		    read(ctl, &line[n], 1) != 1)
			break;
		if (line[n] == '\n' || line[n] == '\r') {
			if (n)
				break;
			continue;
		}
		n++;
	}
	line[n] = '\0';
	return t_check(!strcmp(line, want), name,
		       "want '%s', got '%s' (nothing for %d s?)", want, line,
		       timeout_s);
}

#define T_USERNS_CLONE	"/proc/sys/kernel/unprivileged_userns_clone"

char t_userns_allow(void)
{
	char v = 0;
	int fd;

	fd = open(T_USERNS_CLONE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (read(fd, &v, 1) != 1 || v != '0' || pwrite(fd, "1", 1, 0) != 1)
		v = 0;
	close(fd);
	return v;
}

void t_userns_restore(char saved)
{
	int fd;

	if (!saved)
		return;
	fd = open(T_USERNS_CLONE, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, &saved, 1) != 1)
		t_fail("restore " T_USERNS_CLONE, "%s", strerrorname_np(errno));
	if (fd >= 0)
		close(fd);
}
