// SPDX-License-Identifier: GPL-2.0
/*
 * hostlib, clocks: the thread's CPU time and perf's task clock of it,
 * busy loops, schedstat, the brackets a count of them is judged by
 * (hostlib.h, "clocks").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "hostlib.h"

struct busy_req {
	uint32_t ctx;
	uint64_t ns, cpu_ns, busy_ns;
};

static int busy_fn(struct hl_vcpu *v, void *p)
{
	struct busy_req *r = p;
	struct hl_thread_span span;
	uint64_t t1, t2;
	int ret, ret2;

	hl_thread_span_start(&span);
	ret = cb_start(&v->cb, r->ctx);
	t1 = hl_thread_ns();
	hl_busy_ns(r->ns);
	t2 = hl_thread_ns();
	ret2 = cb_stop(&v->cb, r->ctx);
	r->cpu_ns = hl_thread_span_end(&span);
	r->busy_ns = t2 - t1;
	return ret ? ret : ret2;
}

int hl_start_busy_stop(struct hl_vcpu *v, uint32_t ctx, uint64_t ns,
		       uint64_t *cpu_ns, uint64_t *busy_ns)
{
	struct busy_req r = { .ctx = ctx, .ns = ns };
	int ret = hl_call(v, busy_fn, &r);

	if (cpu_ns)
		*cpu_ns = r.cpu_ns;
	if (busy_ns)
		*busy_ns = r.busy_ns;
	return ret;
}

bool hl_bracket(uint64_t val, uint64_t lower, uint64_t upper)
{
	double lo = (double)lower * (1 - HL_BRACKET_REL) - (double)HL_BRACKET_ABS;
	double hi = (double)upper * (1 + HL_BRACKET_REL) + (double)HL_BRACKET_ABS;

	return (double)val >= lo && (double)val <= hi;
}

bool hl_within(uint64_t got, uint64_t want, double rel, uint64_t abs)
{
	uint64_t diff = got > want ? got - want : want - got;

	return (double)diff <= rel * (double)want + (double)abs;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t hl_thread_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static uint64_t task_clock_read(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

void hl_thread_span_start(struct hl_thread_span *t)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	t->fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	t->task0 = task_clock_read(t->fd);
	t->cpu0 = hl_thread_ns();
}

uint64_t hl_thread_span_end(struct hl_thread_span *t)
{
	uint64_t cpu = hl_thread_ns() - t->cpu0;
	uint64_t task = task_clock_read(t->fd) - t->task0;

	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	return task > cpu ? task : cpu;
}

uint64_t hl_thread_csw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

uint64_t hl_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

void hl_busy_ns(uint64_t ns)
{
	uint64_t end = hl_thread_ns() + ns;
	volatile uint64_t x = 0;
	int i;

	while (hl_thread_ns() < end)
		for (i = 0; i < 1000; i++)
			x += i;
}

static int schedstat(pid_t tid, unsigned long long *run,
		     unsigned long long *delay)
{
	char path[64];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu %llu", run, delay);
	fclose(f);
	return n == 2 ? 0 : -EIO;
}

int hl_thread_cpu_of(pid_t tid, uint64_t *ns)
{
	unsigned long long run, delay;
	int ret = schedstat(tid, &run, &delay);

	*ns = ret ? 0 : run;
	return ret;
}

int hl_run_delay_ns(pid_t tid, uint64_t *ns)
{
	unsigned long long run, delay;
	int ret = schedstat(tid, &run, &delay);

	*ns = ret ? 0 : delay;
	return ret;
}

int hl_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}
