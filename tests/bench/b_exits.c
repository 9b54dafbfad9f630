// SPDX-License-Identifier: GPL-2.0
/*
 * Exits per operation, measured in one run inside a guest with perfmon2.ko
 * (L2 of the nested rig). The VM exits are counted by the host on the
 * vCPU thread (virtual PMD PVPFM_VPMD_VM_EXITS, kvm:kvm_exit) and read
 * through the perfmon2 interface by a self-monitoring context.
 *
 *   b_exits [N]     N calls per batch (default 20000)
 *
 * Prints one line per figure
 *
 *   BENCH name value unit
 *
 * and RATIO lines; check.sh judges them. No figure is a time: wall time
 * on a TCG-emulated L1 means nothing. Times only scale the background.
 *
 * 1. perfmon2 calls, each followed by a reading of VM_EXITS: N
 *    pfm_read_pmds of 1 entry, N/10 of the largest vector the guest takes
 *    (max_vector, arg_mem_max raised for it) on an unloaded context,
 *    N pfm_write_pmds of 1 entry (unloaded context), N
 *    pfm_getinfo_evtsets of 1 set, and last N/10 of the largest vector
 *    on the loaded, counting context; each batch against a busy loop of
 *    the same length without calls (timer ticks, host interrupts: the
 *    background exit rate).
 *      exits_per_call = (exits_batch - rate * vcpu_run_batch) / N
 *      exits_per_call_mode: the most common count between two readings
 *    The design (ARCHITECTURE.md): one perfmon2 call = one VM exit.
 * 2. guest context switches: a monitored and an unmonitored thread
 *    pinned to one vCPU play ping-pong over pipes; SWITCH commands
 *    (sysfs device/switches) per context switch (the threads' own
 *    counts, /proc/.../status voluntary + nonvoluntary), against the
 *    same ping-pong with neither monitored (design: 1 and 0).
 * 3. sampling: the "default" format on VCPU_RUN_NS every 200 us with a
 *    buffer that does not fill; exits per sample over the background
 *    (design: 0, the host writes samples into guest memory), samples,
 *    buffer-full notifications (0). The background of a run this short
 *    is the median of several busy loops as long.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>
#include <perfmon/pv_perfmon.h>

#include "t_common.h"

#define MAX_VEC		1024

static int failures;

static void fail(const char *what)
{
	printf("BENCH-ERROR %s: %s\n", what, strerror(errno));
	fflush(stdout);
	failures++;
}

static void bench(const char *name, double val, const char *unit)
{
	printf("BENCH %s %.2f %s\n", name, val, unit);
	fflush(stdout);
}

static void busy_until(uint64_t end)
{
	volatile uint64_t x = 0;

	while (t_now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x += i;
}

static int sysfs_write_num(const char *rel, long long val)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", val);
	return t_sysfs_write(rel, buf);
}

/*
 * A context with VCPU_RUN_NS, VM_EXITS and HALT_EXITS (the target of the
 * write batch): @self, loaded on this thread and started (it counts), else
 * unloaded (PMDs to read and write: no host counter). -1 on failure.
 */
static int pmds_ctx(bool self)
{
	static const uint16_t pmds[3] = { RUN_NS, VM_EXITS, HALT_EXITS };
	int fd = t_create(0);

	if (fd < 0)
		return -1;
	if (t_write_pmds(fd, pmds, 3, 0) ||
	    (self && (t_load(fd, t_gettid(), 0) || pfm_start(fd, NULL)))) {
		close(fd);
		return -1;
	}
	return fd;
}

struct snap {
	uint64_t run_ns, exits, wall;
};

/* one pfm_read_pmds call: its own exit falls inside the interval it ends */
static int snap(int fd, struct snap *s)
{
	s->wall = t_now_ns();
	return t_read_run_exits(fd, &s->run_ns, &s->exits);
}

struct delta {
	double exits, run_ns, wall;
};

static struct delta diff(const struct snap *a, const struct snap *b)
{
	struct delta d = {
		/* less the exit of the read that took snapshot b */
		.exits = (double)(b->exits - a->exits) - 1,
		.run_ns = (double)(b->run_ns - a->run_ns),
		.wall = (double)(b->wall - a->wall),
	};
	return d;
}

/*
 * Exits of a busy loop of @wall ns: the background over that time. With
 * @windows > 1, the median of that many such loops: a burst of host
 * activity (L1's interrupts, its other vCPU's work) in one short window
 * is not the background, and a sampling run of a few hundred ms is
 * compared with windows as short.
 */
#define BG_WINDOWS_MAX	7
static int background(int fd, double wall, int windows, struct delta *bg)
{
	struct delta w[BG_WINDOWS_MAX], t;
	struct snap a, b;
	int i, j;

	if (windows < 1 || windows > BG_WINDOWS_MAX)
		return -1;
	for (i = 0; i < windows; i++) {
		if (snap(fd, &a))
			return -1;
		busy_until(a.wall + (uint64_t)wall);
		if (snap(fd, &b))
			return -1;
		w[i] = diff(&a, &b);
		for (j = i; j > 0 && w[j].exits < w[j - 1].exits; j--) {
			t = w[j];
			w[j] = w[j - 1];
			w[j - 1] = t;
		}
	}
	*bg = w[windows / 2];
	return 0;
}

/* the sampling comparisons' background: short windows, their median */
#define BG_WINDOWS_SAMPLING	5

enum op { OP_READ1, OP_READV, OP_READV_UNLOADED, OP_WRITE1_UNLOADED,
	  OP_GETINFO };

#define HIST	8	/* per-call exits 0..HIST-2, and HIST-1 for more */

/*
 * One call of @op; *exits gets the VM_EXITS value read right after it
 * (by the call itself when it reads VM_EXITS of the measuring context
 * @fd, else by one more 1-entry read: *extra = 1).
 */
static int one_call(int fd, int other, enum op op, pfarg_pmd_t *vec, int nvec,
		    uint64_t *exits, int *extra)
{
	pfarg_setinfo_t si;
	pfarg_pmd_t pd;
	int ret;

	*extra = 0;
	switch (op) {
	case OP_READ1:
		return t_read_pmd(fd, VM_EXITS, 0, exits);
	case OP_READV:
	case OP_READV_UNLOADED:
		for (int i = 0; i < nvec; i++) {
			vec[i].reg_num = (i & 1) ? VM_EXITS : RUN_NS;
			vec[i].reg_flags = 0;
		}
		if (op == OP_READV_UNLOADED) {
			ret = pfm_read_pmds(other, vec, nvec);
			break;
		}
		ret = pfm_read_pmds(fd, vec, nvec);
		*exits = vec[1].reg_value;
		return ret;
	case OP_WRITE1_UNLOADED:
		memset(&pd, 0, sizeof(pd));
		pd.reg_num = HALT_EXITS;
		ret = pfm_write_pmds(other, &pd, 1);
		break;
	case OP_GETINFO:
		memset(&si, 0, sizeof(si));
		ret = pfm_getinfo_evtsets(fd, &si, 1);
		break;
	default:
		return -1;
	}
	if (ret)
		return ret;
	*extra = 1;
	return t_read_pmd(fd, VM_EXITS, 0, exits);
}

/*
 * N calls, each followed by a reading of VM_EXITS, then a busy loop as
 * long as the batch. Two figures:
 *  - exits_per_call: (batch exits - background rate * batch time) / N,
 *    the rate from the busy loop, per ns of vCPU run time (VCPU_RUN_NS;
 *    exits_per_call_wallbase: per ns of the guest's wall time);
 *  - the distribution of the exits between consecutive readings: the
 *    most common value (mode) is the exits of a call with nothing else
 *    in between; noise (timer ticks, host interrupts) only adds to
 *    some calls. On the TCG rig a slow call (many entries on a loaded
 *    context) gathers a timer tick almost every time, and the mean
 *    then says more about the rig than the call.
 */
static double calls(int fd, int other, const char *name, enum op op, int n,
		    pfarg_pmd_t *vec, int nvec)
{
	uint64_t prev, cur, hist[HIST] = { 0 }, best = 0;
	struct delta d, bg;
	struct snap a, b;
	double rate, wrate, per;
	int extra, mode = 0, min = -1;
	char key[96];

	if (snap(fd, &a))
		goto err;
	prev = a.exits;
	for (int i = 0; i < n; i++) {
		int64_t e;

		if (one_call(fd, other, op, vec, nvec, &cur, &extra))
			goto err;
		e = (int64_t)(cur - prev) - extra;
		prev = cur;
		if (e < 0)
			e = 0;
		hist[e < HIST - 1 ? e : HIST - 1]++;
	}
	if (snap(fd, &b))
		goto err;
	d = diff(&a, &b);
	/* the readings after each call are not the calls measured */
	d.exits -= extra * (double)n;
	if (background(fd, d.wall, 1, &bg))
		goto err;
	/*
	 * The background per ns of vCPU run time (VCPU_RUN_NS): a batch of
	 * calls keeps the vCPU out of the guest for much of its wall time,
	 * and what makes background exits (guest timer ticks, host
	 * interrupts landing in guest mode) scales with the time the vCPU
	 * runs, not with the wall time. Both are printed.
	 */
	rate = bg.run_ns > 0 ? bg.exits / bg.run_ns : 0;
	per = (d.exits - rate * d.run_ns) / n;
	wrate = bg.wall > 0 ? bg.exits / bg.wall : 0;
	for (int i = 0; i < HIST; i++) {
		if (hist[i] > best) {
			best = hist[i];
			mode = i;
		}
		if (min < 0 && hist[i])
			min = i;
	}
	snprintf(key, sizeof(key), "%s.calls", name);
	bench(key, n, "calls");
	snprintf(key, sizeof(key), "%s.entries", name);
	bench(key, op == OP_READV || op == OP_READV_UNLOADED ? nvec : 1,
	      "entries");
	snprintf(key, sizeof(key), "%s.exits_raw", name);
	bench(key, d.exits, "exits");
	snprintf(key, sizeof(key), "%s.batch_wall", name);
	bench(key, d.wall / 1e6, "ms");
	snprintf(key, sizeof(key), "%s.batch_vcpu_run", name);
	bench(key, d.run_ns / 1e6, "ms");
	snprintf(key, sizeof(key), "%s.background_exits", name);
	bench(key, bg.exits, "exits");
	snprintf(key, sizeof(key), "%s.background_rate", name);
	bench(key, rate * 1e9, "exits/s_of_vcpu_run");
	snprintf(key, sizeof(key), "%s.background_rate_wall", name);
	bench(key, wrate * 1e9, "exits/s");
	snprintf(key, sizeof(key), "%s.exits_per_call", name);
	bench(key, per, "exits/call");
	snprintf(key, sizeof(key), "%s.exits_per_call_wallbase", name);
	bench(key, (d.exits - wrate * d.wall) / n, "exits/call");
	snprintf(key, sizeof(key), "%s.exits_per_call_mode", name);
	bench(key, mode, "exits/call");
	snprintf(key, sizeof(key), "%s.exits_per_call_min", name);
	bench(key, min, "exits/call");
	printf("BENCH-HIST %s exits-per-call:calls", name);
	for (int i = 0; i < HIST; i++)
		printf(" %d%s:%llu", i, i == HIST - 1 ? "+" : "",
		       (unsigned long long)hist[i]);
	printf("\n");
	fflush(stdout);
	return mode;
err:
	fail(name);
	return -1;
}

static int nvec_max(long long *raised)
{
	long long max_vec = t_sysfs_num("device/max_vector", 0);
	long long arg_mem = t_sysfs_num("controls/arg_mem_max", 0);
	int nvec;

	/* the largest vector: the host's max_vector, arg_mem_max permitting */
	*raised = -1;
	if (max_vec > MAX_VEC)
		max_vec = MAX_VEC;
	if ((long long)(max_vec * sizeof(pfarg_pmd_t)) > arg_mem &&
	    !sysfs_write_num("controls/arg_mem_max", 16352))
		*raised = arg_mem;
	arg_mem = t_sysfs_num("controls/arg_mem_max", 0);
	nvec = (int)max_vec;
	if ((long long)(nvec * sizeof(pfarg_pmd_t)) > arg_mem)
		nvec = (int)(arg_mem / sizeof(pfarg_pmd_t));
	return nvec;
}

static pfarg_pmd_t vec[MAX_VEC];

static void bench_calls(int n)
{
	double one, many;
	long long raised;
	int fd, other, nvec = nvec_max(&raised);

	bench("calls.vector_entries", nvec, "entries");
	fd = pmds_ctx(true);
	other = pmds_ctx(false);
	if (fd < 0 || other < 0) {
		fail("calls: contexts");
		goto out;
	}
	one = calls(fd, other, "read_pmds_1", OP_READ1, n, vec, 1);
	/*
	 * N/10 vector calls: on the TCG rig one takes milliseconds with
	 * preemption disabled in the guest, and the guest's ticks land in
	 * that section on re-entry; a batch of tens of seconds made L2's RCU
	 * report a stall (no quiescent state seen on this CPU).
	 */
	many = calls(fd, other, "read_pmds_max_unloaded", OP_READV_UNLOADED,
		     n / 10 > 0 ? n / 10 : 1, vec, nvec);
	calls(fd, other, "write_pmds_1_unloaded", OP_WRITE1_UNLOADED, n, vec, 1);
	calls(fd, other, "getinfo_evtsets_1", OP_GETINFO, n, vec, 1);
	if (one > 0 && many >= 0)
		printf("RATIO read_pmds_max_unloaded/read_pmds_1 exits_per_call_mode %.2f (%d entries vs 1; design 1.00)\n",
		       many / one, nvec);
out:
	if (fd >= 0) {
		pfm_stop(fd);
		close(fd);
	}
	if (other >= 0)
		close(other);
	if (raised >= 0)
		sysfs_write_num("controls/arg_mem_max", raised);
}

/*
 * The largest vector on the loaded, counting context: every entry reads
 * a host counter; on the TCG rig that makes the call take milliseconds,
 * so fewer calls (and it runs last).
 */
static void bench_calls_loaded_vector(int n)
{
	double one, many;
	long long raised;
	int fd, nvec = nvec_max(&raised);

	fd = pmds_ctx(true);
	if (fd < 0) {
		fail("calls: self-monitoring context");
		goto out;
	}
	one = calls(fd, -1, "read_pmds_1_again", OP_READ1, n, vec, 1);
	many = calls(fd, -1, "read_pmds_max", OP_READV, n, vec, nvec);
	if (one > 0 && many >= 0)
		printf("RATIO read_pmds_max/read_pmds_1 exits_per_call_mode %.2f (%d entries vs 1 on a loaded context; design 1.00)\n",
		       many / one, nvec);
	pfm_stop(fd);
	close(fd);
out:
	if (raised >= 0)
		sysfs_write_num("controls/arg_mem_max", raised);
}

/* ---- context switches ---- */

struct pong {
	int in, out, cpu, rounds;
	pid_t tid;
	volatile int ready;
};

static long ctxsw(pid_t tid)
{
	char path[96], line[128];
	long n = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			n += v;
	fclose(f);
	return n;
}

static void *ponger(void *p)
{
	struct pong *pg = p;
	char c;

	pg->tid = t_gettid();
	if (t_pin(pg->cpu))
		pg->tid = -1;
	pg->ready = 1;
	while (read(pg->in, &c, 1) == 1 && write(pg->out, &c, 1) == 1)
		;
	return NULL;
}

/*
 * @rounds round trips between this thread and an unmonitored thread on
 * @cpu; this thread monitored when @monitored. SWITCH commands and the
 * threads' context switches during the rounds.
 */
static int ping_pong(int cpu, int rounds, int monitored, long long *sw,
		     long *csw, double *exits)
{
	int ab[2], ba[2], fd = -1, ret = -1;
	struct snap a, b;
	struct pong pg;
	long c0, c1, d0, d1;
	long long s0, s1;
	pthread_t th;
	char c = 0;

	if (t_pin(cpu) || pipe(ab) || pipe(ba))
		return -1;
	memset(&pg, 0, sizeof(pg));
	pg.in = ab[0];
	pg.out = ba[1];
	pg.cpu = cpu;
	if (pthread_create(&th, NULL, ponger, &pg))
		goto out_pipes;
	while (!pg.ready)
		sched_yield();
	if (pg.tid < 0)
		goto out_thread;
	if (monitored) {
		fd = pmds_ctx(true);
		if (fd < 0)
			goto out_thread;
	}
	/* warm up: both threads have run and blocked once */
	for (int i = 0; i < 10; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			goto out_thread;
	if (fd >= 0 && snap(fd, &a))
		goto out_thread;
	c0 = ctxsw(t_gettid());
	d0 = ctxsw(pg.tid);
	s0 = t_sysfs_num("device/switches", -1);
	for (int i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			goto out_thread;
	s1 = t_sysfs_num("device/switches", -1);
	c1 = ctxsw(t_gettid());
	d1 = ctxsw(pg.tid);
	if (fd >= 0 && snap(fd, &b))
		goto out_thread;
	*sw = s1 - s0;
	*csw = (c1 - c0) + (d1 - d0);
	*exits = fd >= 0 ? diff(&a, &b).exits : 0;
	ret = 0;
out_thread:
	close(ab[1]);
	pthread_join(th, NULL);
	if (fd >= 0)
		close(fd);
out_pipes:
	close(ab[0]);
	close(ba[0]);
	close(ba[1]);
	return ret;
}

static void bench_switch(int rounds)
{
	long csw_m = 0, csw_u = 0;
	long long sw_m = 0, sw_u = 0;
	double ex_m = 0, ex_u = 0;
	int cpu = sched_getcpu();

	if (ping_pong(cpu, rounds, 0, &sw_u, &csw_u, &ex_u)) {
		fail("switch: unmonitored ping-pong");
		return;
	}
	if (ping_pong(cpu, rounds, 1, &sw_m, &csw_m, &ex_m)) {
		fail("switch: monitored ping-pong");
		return;
	}
	bench("switch.round_trips", rounds, "round_trips");
	bench("switch.unmonitored.ctx_switches", csw_u, "switches");
	bench("switch.unmonitored.switch_cmds", sw_u, "cmds");
	bench("switch.unmonitored.switch_cmds_per_ctx_switch",
	      csw_u ? (double)sw_u / csw_u : 0, "cmds/switch");
	bench("switch.monitored.ctx_switches", csw_m, "switches");
	bench("switch.monitored.switch_cmds", sw_m, "cmds");
	bench("switch.monitored.switch_cmds_per_ctx_switch",
	      csw_m ? (double)sw_m / csw_m : 0, "cmds/switch");
	bench("switch.monitored.switch_cmds_per_round_trip",
	      (double)sw_m / rounds, "cmds/round_trip");
	/*
	 * The monitored thread's own exits while it is in (its SWITCH in
	 * exits before the counter runs, its SWITCH out after: neither is
	 * in here): the exits of one write and one read of a pipe.
	 */
	bench("switch.monitored.thread_exits_per_round_trip", ex_m / rounds,
	      "exits/round_trip");
	printf("RATIO switch_cmds_per_ctx_switch monitored %.2f unmonitored %.2f (design 1.00 and 0.00)\n",
	       csw_m ? (double)sw_m / csw_m : 0,
	       csw_u ? (double)sw_u / csw_u : 0);
	fflush(stdout);
}

/* ---- sampling ---- */

#define SMPL_PERIOD_NS	200000ULL	/* 200 us of vCPU run time */
#define SMPL_WANT	300
#define SMPL_BUF	(64 * 1024)
#define SMPL_CAP	((SMPL_BUF - sizeof(pfm_dfl_smpl_hdr_t)) / \
			 (sizeof(pfm_dfl_smpl_entry_t) + sizeof(uint64_t)))

/*
 * Interrupts the guest took on @cpu so far: the sum of its column of
 * /proc/interrupts (reading it makes no VM exit).
 */
static long long guest_irqs(int cpu)
{
	static char line[4096];
	long long sum = 0;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {	/* the CPU0 CPU1 ... header */
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *q = strchr(line, ':'), *e;
		long long v = 0;

		if (!q)
			continue;
		q++;
		for (int c = 0; c <= cpu; c++) {
			v = strtoll(q, &e, 10);
			if (e == q) {
				v = 0;
				break;
			}
			q = e;
		}
		sum += v;
	}
	fclose(f);
	return sum;
}

/*
 * The samples recorded VM_EXITS: the exits between two consecutive
 * samples, as a histogram; its mode is the exits one sample costs in an
 * interval where nothing else happened (no tick, no host interrupt).
 */
static int sample_exits_mode(const void *buf, uint64_t from, uint64_t to,
			     uint64_t *hist, int nhist)
{
	const size_t esz = sizeof(pfm_dfl_smpl_entry_t) + sizeof(uint64_t);
	const char *base = (const char *)buf + sizeof(pfm_dfl_smpl_hdr_t);
	uint64_t prev = 0, cur, best = 0;
	int mode = -1;

	for (uint64_t i = from; i < to; i++) {
		memcpy(&cur, base + i * esz + sizeof(pfm_dfl_smpl_entry_t),
		       sizeof(cur));
		if (i > from) {
			uint64_t e = cur - prev;

			hist[e < (uint64_t)nhist - 1 ? e : (uint64_t)nhist - 1]++;
		}
		prev = cur;
	}
	for (int i = 0; i < nhist; i++)
		if (hist[i] > best) {
			best = hist[i];
			mode = i;
		}
	return mode;
}

/* bench_sampling's exits per sample, for the comparison with perf */
static double pv_exits_per_sample = -1;

static void bench_sampling(int timeout_s)
{
	const size_t entry = sizeof(pfm_dfl_smpl_entry_t) + sizeof(uint64_t);
	volatile pfm_dfl_smpl_hdr_t *hdr;
	pfm_dfl_smpl_arg_t arg;
	uint64_t count0, count1, end, ovfl0, ovfl1;
	struct delta d, bg;
	struct snap a, b;
	pfarg_load_t load;
	pfarg_pmd_t pd[2];
	pfarg_ctx_t ctx;
	pfarg_msg_t msg;
	int fd, msgs = 0, cpu = sched_getcpu(), mode;
	long long irq0, irq1, birq0, birq1;
	uint64_t hist[HIST] = { 0 };
	double rate, per, irq_rate, bg_span;
	void *p;

	if (!(t_sysfs_num("device/features", 0) & PVPFM_F_SAMPLING)) {
		printf("BENCH-SKIP sampling: the host does not sample\n");
		return;
	}
	memset(&ctx, 0, sizeof(ctx));
	memset(&arg, 0, sizeof(arg));
	arg.buf_size = SMPL_BUF;
	fd = pfm_create_context(&ctx, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
	if (fd < 0) {
		fail("sampling: create with the default format");
		return;
	}
	p = mmap(NULL, SMPL_BUF, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		fail("sampling: mmap");
		close(fd);
		return;
	}
	hdr = p;
	memset(pd, 0, sizeof(pd));
	/* OVFL_NOTIFY: a message when the buffer is full */
	t_pmd_period(&pd[0], RUN_NS, SMPL_PERIOD_NS, PFM_REGFL_OVFL_NOTIFY);
	pd[0].reg_smpl_pmds[VM_EXITS / 64] = 1ULL << (VM_EXITS % 64);
	pd[1].reg_num = VM_EXITS;
	memset(&load, 0, sizeof(load));
	load.load_pid = t_gettid();
	if (pfm_write_pmds(fd, pd, 2) || pfm_load_context(fd, &load) ||
	    pfm_start(fd, NULL)) {
		fail("sampling: set up");
		goto out;
	}
	/* buffer room for 3 * SMPL_WANT samples: it does not fill */
	bench("sampling.buffer_capacity",
	      (double)(SMPL_BUF - sizeof(pfm_dfl_smpl_hdr_t)) / entry, "samples");
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	irq0 = guest_irqs(cpu);
	if (snap(fd, &a))
		goto err;
	count0 = hdr->hdr_count;
	ovfl0 = hdr->hdr_overflows;
	end = a.wall + (uint64_t)timeout_s * SEC;
	/* reading the header is a load from guest memory: no exit */
	while (hdr->hdr_count - count0 < SMPL_WANT && t_now_ns() < end)
		busy_until(t_now_ns() + 100000);
	if (snap(fd, &b))
		goto err;
	count1 = hdr->hdr_count;
	ovfl1 = hdr->hdr_overflows;
	irq1 = guest_irqs(cpu);
	while (read(fd, &msg, sizeof(msg)) == sizeof(msg))
		msgs++;
	d = diff(&a, &b);
	/* the background: the same busy loop, in a context that does not sample */
	pfm_stop(fd);
	pfm_unload_context(fd);
	{
		int cfd = pmds_ctx(true);

		if (cfd < 0)
			goto err;
		birq0 = guest_irqs(cpu);
		bg_span = (double)t_now_ns();
		if (background(cfd, d.wall, BG_WINDOWS_SAMPLING, &bg)) {
			close(cfd);
			goto err;
		}
		birq1 = guest_irqs(cpu);
		bg_span = (double)t_now_ns() - bg_span;
		close(cfd);
	}
	rate = bg.wall > 0 ? bg.exits / bg.wall : 0;
	per = count1 > count0 ?
		(d.exits - rate * d.wall) / (double)(count1 - count0) : -1;
	bench("sampling.period", SMPL_PERIOD_NS / 1e3, "us");
	bench("sampling.samples", (double)(count1 - count0), "samples");
	bench("sampling.exits_raw", d.exits, "exits");
	bench("sampling.wall", d.wall / 1e6, "ms");
	bench("sampling.background_exits", bg.exits, "exits");
	bench("sampling.background_rate", rate * 1e9, "exits/s");
	bench("sampling.buffer_full", (double)(ovfl1 - ovfl0), "overflows");
	bench("sampling.notifications", msgs, "msgs");
	bench("sampling.exits_per_sample", per, "exits/sample");
	pv_exits_per_sample = per;
	if (count1 > count0)
		bench("sampling.raw_exits_per_sample",
		      d.exits / (double)(count1 - count0), "exits/sample");
	mode = sample_exits_mode(p, count0, count1 < SMPL_CAP ? count1 : SMPL_CAP,
				 hist, HIST);
	bench("sampling.exits_per_sample_mode", mode, "exits/sample");
	printf("BENCH-HIST sampling exits-between-samples:intervals");
	for (int i = 0; i < HIST; i++)
		printf(" %d%s:%llu", i, i == HIST - 1 ? "+" : "",
		       (unsigned long long)hist[i]);
	printf("\n");
	/*
	 * Interrupts the guest took: a sample that needed no notification
	 * must not interrupt the guest (ARCHITECTURE.md: irqfd only when a
	 * notification is due, never per sample). The background's rate is
	 * every background window's interrupts over all their time.
	 */
	irq_rate = bg_span > 0 ? (double)(birq1 - birq0) / bg_span : 0;
	bench("sampling.guest_irqs_raw", (double)(irq1 - irq0), "irqs");
	bench("sampling.background_guest_irqs", (double)(birq1 - birq0), "irqs");
	if (count1 > count0)
		bench("sampling.guest_irqs_per_sample",
		      ((double)(irq1 - irq0) - irq_rate * d.wall) /
		      (double)(count1 - count0), "irqs/sample");
	printf("RATIO sampling exits_per_sample %.2f guest_irqs_per_sample %.2f (design 0.00 and 0.00)\n",
	       per, count1 > count0 ? ((double)(irq1 - irq0) - irq_rate * d.wall) /
	       (double)(count1 - count0) : -1);
	fflush(stdout);
	goto out;
err:
	fail("sampling");
out:
	munmap(p, SMPL_BUF);
	close(fd);
}

/* PERF_RECORD_SAMPLE records in a perf ring buffer, up to data_head */
static uint64_t perf_samples(const struct perf_event_mmap_page *pg,
			     size_t data_size)
{
	const uint8_t *data = (const uint8_t *)pg + pg->data_offset;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t off = head > data_size ? head - data_size : 0, n = 0;
	struct perf_event_header h;

	/* records do not straddle the start when the buffer never wrapped */
	while (off + sizeof(h) <= head) {
		memcpy(&h, data + off % data_size, sizeof(h));
		if (!h.size)
			break;
		n += h.type == PERF_RECORD_SAMPLE;
		off += h.size;
	}
	return n;
}

/*
 * For comparison: the guest samples itself with its own kernel's perf,
 * cpu-clock at the same period (what `perf record -e cpu-clock -c PERIOD`
 * sets up). Each sample is a guest hrtimer interrupt: the guest's timer
 * is programmed and fires through the hypervisor.
 */
static void bench_perf_cpu_clock(int timeout_s)
{
	const size_t data_size = 64 * 4096;
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	uint64_t samples, end;
	struct delta d, bg;
	struct snap a, b;
	double rate, per;
	int pfd, fd;
	void *p;

	fd = pmds_ctx(true);
	if (fd < 0) {
		fail("perf cpu-clock: counting context");
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = SMPL_PERIOD_NS;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.disabled = 1;
	pfd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (pfd < 0) {
		fail("perf cpu-clock: perf_event_open");
		close(fd);
		return;
	}
	p = mmap(NULL, 4096 + data_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 pfd, 0);
	if (p == MAP_FAILED) {
		fail("perf cpu-clock: mmap");
		goto out;
	}
	pg = p;
	if (snap(fd, &a))
		goto err;
	ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0);
	end = a.wall + (uint64_t)timeout_s * SEC;
	while (perf_samples(pg, data_size) < SMPL_WANT && t_now_ns() < end)
		busy_until(t_now_ns() + 100000);
	ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0);
	if (snap(fd, &b))
		goto err;
	samples = perf_samples(pg, data_size);
	d = diff(&a, &b);
	if (background(fd, d.wall, BG_WINDOWS_SAMPLING, &bg))
		goto err;
	rate = bg.wall > 0 ? bg.exits / bg.wall : 0;
	/* the two ioctls are system calls, not exits: nothing to subtract */
	per = samples ? (d.exits - rate * d.wall) / (double)samples : -1;
	bench("perf_cpu_clock.period", SMPL_PERIOD_NS / 1e3, "us");
	bench("perf_cpu_clock.samples", (double)samples, "samples");
	bench("perf_cpu_clock.exits_raw", d.exits, "exits");
	bench("perf_cpu_clock.background_exits", bg.exits, "exits");
	bench("perf_cpu_clock.exits_per_sample", per, "exits/sample");
	printf("RATIO sampling exits_per_sample pv-perfmon %.2f, guest perf cpu-clock %.2f, at %llu us (design 0 and at least 1)\n",
	       pv_exits_per_sample, per, SMPL_PERIOD_NS / 1000);
	fflush(stdout);
	goto unmap;
err:
	fail("perf cpu-clock");
unmap:
	munmap(p, 4096 + data_size);
out:
	close(pfd);
	close(fd);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);

	if (n <= 0)
		n = 20000;
	/* one vCPU for everything: no migrations, no SWITCH on the way */
	if (t_pin(cpus > 1 ? 1 : 0)) {
		fail("pin");
		return 1;
	}
	printf("BENCH-INFO b_exits: N=%d, vCPU %d of %d, personality %lld, max_vector %lld\n",
	       n, sched_getcpu(), cpus, t_sysfs_num("device/personality", -1),
	       t_sysfs_num("device/max_vector", -1));
	fflush(stdout);
	bench_calls(n);
	bench_sampling(60);
	bench_perf_cpu_clock(60);
	bench_switch(n / 10 > 0 ? n / 10 : 1);
	bench_calls_loaded_vector(n / 10 > 0 ? n / 10 : 1);
	printf("BENCH-DONE failures %d\n", failures);
	return failures ? 1 : 0;
}
