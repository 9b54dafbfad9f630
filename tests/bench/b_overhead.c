// SPDX-License-Identifier: GPL-2.0
/*
 * Overhead side by side, in one run inside a guest with perfmon2.ko (L2
 * of the nested rig, one vCPU): a CPU-bound workload run under each
 * configuration below for a fixed wall time, ROUNDS times, the
 * configurations interleaved (forward in even rounds, backward in odd
 * ones).
 *
 *   b_overhead [ROUNDS [SECONDS]]   default 8 rounds of 1 s each (5 s
 *                                   for the samplers at 1000/s)
 *
 *   alone                    the workload, nothing else: the control
 *   pv_sampling.RATE         pv-perfmon: a self-monitoring context with
 *                            the "default" format, VCPU_RUN_NS sampled
 *                            every 1e9/RATE ns of vCPU run time; buffer
 *                            full: its message read, the entries taken,
 *                            pfm_restart
 *   perf_sampling.RATE       the guest kernel's perf: cpu-clock every
 *                            1e9/RATE ns on this thread (what `perf
 *                            record -e cpu-clock -c PERIOD` sets up), its
 *                            ring taken as perf would, from data_tail to
 *                            data_head, when half full
 *   pv_counting.multiplexed  pv-perfmon counting 4 virtual PMDs in two
 *                            event sets switched every SWITCH_NS
 *   pv_counting.plain        the same 4 PMDs in one set, no switching
 *
 * RATE is 1000, 5000 and 20000 samples per second: of vCPU run time for
 * pv-perfmon, of the thread's CPU time for perf's cpu-clock. Both
 * samplers take their samples in this thread, between two pieces of
 * work, from memory: neither writes a file as perf record would.
 *
 * The measure is work done (pieces of work_piece()) per second of the
 * workload thread's own CPU time (CLOCK_THREAD_CPUTIME_ID). Why that
 * clock: it leaves out the time anything else runs in the guest (kernel
 * threads, an idle vCPU). What it does not leave out: the guest kernel
 * here has no CONFIG_PARAVIRT_TIME_ACCOUNTING, so time the host takes
 * the vCPU away while this thread is current (a VM exit, the host's
 * preemption of the vCPU thread, L0's of the TCG-emulated L1) counts as
 * this thread's CPU time. That is wanted for the samplers, whose cost is
 * partly in the host (pv-perfmon's overflow path, the exits of perf's
 * timer): it lands on the workload it slows.
 *
 * Paired within each run: the run is cut into slices of SLICE_NS of wall
 * time, the tool on in half of them and off (pfm_stop, perf's disable) in
 * the other half, on-off then off-on, and the run's slowdown is the work
 * per CPU-s off over on. Why: on the shared TCG rig the speed of the
 * emulated machine swings by 2-4x within seconds (other jobs on L0), and
 * a comparison between runs seconds apart (the earlier design: each
 * configuration against separate "alone" runs) is mostly that swing: one
 * run of 15 rounds read plain counting, which does nothing per unit of
 * time, as a 1.785 slowdown, and a pair of adjacent 1 kHz runs had
 * pv-perfmon's work 0.28 to 3.9 times perf's. Slices 20 ms apart see the
 * same machine. The toggling itself (a perfmon2 call, an ioctl) is left
 * out of both sums; "alone" is cut the same way with nothing to toggle,
 * and its slowdown reads how well the pairing cancels the rig's noise.
 *
 * Prints, per configuration K (BENCH name value unit):
 *   overhead.K               the median over the rounds of the runs'
 *                            slowdowns; .q1, .q3, .min, .max, .rounds;
 *                            .pooled: all rounds' slices summed
 *   overhead.K.work_on_per_cpu_s, .slices_per_run
 *   overhead.K.cpu_pct_of_wall, .steal_pct   the thread's CPU time and
 *                            the guest's steal time, % of the wall time
 *   samplers: .samples_per_cpu_s (of CPU time with the tool on),
 *            .rate_ratio (of the rate asked), .cpu_us_per_sample
 *            ((1 - 1 / slowdown) / samples per CPU-s: the workload's CPU
 *            time one sample costs), .buffer_fills (pv) or .lost (perf)
 *   pv_counting: .set_switches_per_cpu_s
 *   overhead.pv_vs_perf.RATE.*, overhead.mux_vs_plain.*: the first's
 *            work relative to the second's, round by round (the ratio of
 *            their slowdowns): median, q1, q3, min, max, rounds, ahead
 * and RATIO lines, then BENCH-DONE; each run's figures on the console
 * ("b_overhead: round ..."). check.sh judges them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>
#include <perfmon/pv_perfmon.h>

#include "t_common.h"

#define SWITCH_NS	(10 * MS)	/* set switch timeout */
#define SLICE_NS	(20 * MS)	/* the tool on or off, of wall time */
#define BUF_SIZE	(64 * 1024)	/* pv sampling buffer, perf ring data */
#define PAGE		4096
#define MAX_ROUNDS	64

enum kind { ALONE, PV_SMPL, PERF_SMPL, PV_MUX, PV_PLAIN };

/*
 * @runs: each round runs it this many times SECONDS. At 1000/s the two
 * samplers differ by 2-10% of the workload on the rig, next to a spread
 * of 7-11% (IQR) between one 1 s run and the next: their comparison needs
 * the data (a bootstrap over one run's rounds gave pv-perfmon below perf
 * 75-95% of the time with 1 s), 40 s of each over the 8 rounds, as 13
 * rounds of 3 s gave. At 5000 and 20000/s they differ by 2-6x and 1 s
 * decides; the control and the counting pair need rounds for their
 * medians and quartiles, 8 as reliably as 15 (tests/bench/README.md).
 */
static const struct config {
	const char *key;
	enum kind kind;
	unsigned int rate;
	unsigned int runs;
} configs[] = {
	{ "alone", ALONE, 0, 1 },
	{ "pv_sampling.1000", PV_SMPL, 1000, 5 },
	{ "perf_sampling.1000", PERF_SMPL, 1000, 5 },
	{ "pv_sampling.5000", PV_SMPL, 5000, 1 },
	{ "perf_sampling.5000", PERF_SMPL, 5000, 1 },
	{ "pv_sampling.20000", PV_SMPL, 20000, 1 },
	{ "perf_sampling.20000", PERF_SMPL, 20000, 1 },
	{ "pv_counting.multiplexed", PV_MUX, 0, 1 },
	{ "pv_counting.plain", PV_PLAIN, 0, 1 },
};
#define NCONF	(int)(sizeof(configs) / sizeof(configs[0]))

/* one timed run; [0]: slices with the tool off, [1]: on */
struct run {
	double work[2], cpu_ns[2], wall_ns, steal_ns, slices;
	double events;		/* samples, or set switches */
	double extra;		/* pv: buffer fills; perf: samples lost */
	double throttles;	/* perf: PERF_RECORD_THROTTLE */
	int ok;
};

static struct run results[NCONF][MAX_ROUNDS];
static int failures;
static volatile uint64_t sink;
static unsigned char piece_buf[4096];

static void fail(const char *what)
{
	printf("BENCH-ERROR %s: %s\n", what, strerror(errno));
	fflush(stdout);
	failures++;
}

static void bench(const char *key, const char *what, double val,
		  const char *unit)
{
	printf("BENCH overhead.%s%s%s %.3f %s\n", key, *what ? "." : "", what,
	       val, unit);
}

/* the guest's steal time (ns; /proc/stat's 8th column, in USER_HZ) */
static double steal_ns(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	return n == 8 ? (double)v[7] * 1e9 / (double)sysconf(_SC_CLK_TCK) : 0;
}

/*
 * One piece of work: the bundled workload's two CPU-bound kernels
 * (guest/tools/workload.c), trial division and FNV-1a, on a fixed range
 * and buffer so that every piece is the same work. noipa: the compiler
 * must not find it pure and hoist it out of the loop.
 */
__attribute__((noipa)) static uint64_t work_piece(uint32_t base)
{
	uint64_t h = 0xcbf29ce484222325ULL, found = 0;

	for (uint32_t n = base; n < base + 2 * 24; n += 2) {
		uint32_t d = 3;

		while (d * d <= n && n % d)
			d += 2;
		found += d * d > n;
	}
	for (size_t i = 0; i < sizeof(piece_buf); i++)
		h = (h ^ piece_buf[i]) * 0x100000001b3ULL;
	return h + found;
}

/* ---- pv-perfmon sampling ---- */

struct pv_smpl {
	int fd;
	void *buf;
	volatile pfm_dfl_smpl_hdr_t *hdr;
	uint64_t seen_ovfl, samples, restarts;
};

/* the entries of a full (or final) buffer, taken as pfmon does */
static void pv_drain(struct pv_smpl *s)
{
	const unsigned char *p = (const unsigned char *)s->buf +
				 sizeof(pfm_dfl_smpl_hdr_t);
	const unsigned char *end = (const unsigned char *)s->buf + BUF_SIZE;
	uint64_t n = s->hdr->hdr_count;

	for (uint64_t i = 0; i < n; i++) {
		const pfm_dfl_smpl_entry_t *e = (const void *)p;

		if (p + sizeof(*e) > end)
			break;
		sink += e->ip;
		p += sizeof(*e);
	}
	s->samples += n;
}

/* between two pieces: a full buffer (a load from guest memory) restarted */
static void pv_poll(struct pv_smpl *s)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	pfarg_msg_t msg;

	if (s->hdr->hdr_overflows == s->seen_ovfl)
		return;
	/* the message follows the notification interrupt */
	if (poll(&pfd, 1, 100) > 0)
		while (read(s->fd, &msg, sizeof(msg)) == sizeof(msg))
			;
	s->seen_ovfl = s->hdr->hdr_overflows;
	pv_drain(s);
	if (pfm_restart(s->fd))
		fail("pv sampling: pfm_restart");
	s->restarts++;
}

static int pv_smpl_start(struct pv_smpl *s, unsigned int rate)
{
	uint64_t period = SEC / rate;
	pfm_dfl_smpl_arg_t arg;
	pfarg_load_t load;
	pfarg_ctx_t ctx;
	pfarg_pmd_t pd;

	memset(s, 0, sizeof(*s));
	memset(&ctx, 0, sizeof(ctx));
	memset(&arg, 0, sizeof(arg));
	arg.buf_size = BUF_SIZE;
	s->fd = pfm_create_context(&ctx, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
	if (s->fd < 0)
		return -1;
	s->buf = mmap(NULL, BUF_SIZE, PROT_READ, MAP_PRIVATE, s->fd, 0);
	if (s->buf == MAP_FAILED) {
		close(s->fd);
		return -1;
	}
	s->hdr = s->buf;
	/* OVFL_NOTIFY: a message when the buffer is full */
	t_pmd_period(&pd, PVPFM_VPMD_VCPU_RUN_NS, period, PFM_REGFL_OVFL_NOTIFY);
	memset(&load, 0, sizeof(load));
	load.load_pid = t_gettid();
	fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
	if (pfm_write_pmds(s->fd, &pd, 1) || pfm_load_context(s->fd, &load) ||
	    pfm_start(s->fd, NULL)) {
		munmap(s->buf, BUF_SIZE);
		close(s->fd);
		return -1;
	}
	s->seen_ovfl = s->hdr->hdr_overflows;
	return 0;
}

static void pv_smpl_stop(struct pv_smpl *s, struct run *r)
{
	/* what is in the buffer, full or not, not yet taken */
	pfm_stop(s->fd);
	pv_drain(s);
	munmap(s->buf, BUF_SIZE);
	close(s->fd);
	r->events = (double)s->samples;
	r->extra = (double)s->restarts;
}

/* ---- the guest's perf, cpu-clock ---- */

struct perf_smpl {
	int fd;
	struct perf_event_mmap_page *pg;
	const unsigned char *data;
	uint64_t samples, lost, throttles;
};

static void ring_copy(const struct perf_smpl *s, uint64_t off, void *to,
		      size_t n)
{
	for (size_t i = 0; i < n; i++)
		((unsigned char *)to)[i] = s->data[(off + i) % BUF_SIZE];
}

/* the records from data_tail to data_head, as perf record takes them */
static void perf_drain(struct perf_smpl *s)
{
	uint64_t head = __atomic_load_n(&s->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = s->pg->data_tail, v;
	struct perf_event_header h;

	while (tail + sizeof(h) <= head) {
		ring_copy(s, tail, &h, sizeof(h));
		if (!h.size)
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			ring_copy(s, tail + sizeof(h), &v, sizeof(v)); /* ip */
			sink += v;
			s->samples++;
		} else if (h.type == PERF_RECORD_LOST) {
			ring_copy(s, tail + sizeof(h) + 8, &v, sizeof(v));
			s->lost += v;
		} else if (h.type == PERF_RECORD_THROTTLE) {
			s->throttles++;
		}
		tail += h.size;
	}
	__atomic_store_n(&s->pg->data_tail, tail, __ATOMIC_RELEASE);
}

/* between two pieces: the ring taken when half full (perf's watermark) */
static void perf_poll(struct perf_smpl *s)
{
	uint64_t head = __atomic_load_n(&s->pg->data_head, __ATOMIC_ACQUIRE);

	if (head - s->pg->data_tail >= BUF_SIZE / 2)
		perf_drain(s);
}

static int perf_smpl_start(struct perf_smpl *s, unsigned int rate)
{
	struct perf_event_attr attr;
	void *p;

	memset(s, 0, sizeof(*s));
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = SEC / rate;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.disabled = 1;
	s->fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (s->fd < 0)
		return -1;
	p = mmap(NULL, PAGE + BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, 0);
	if (p == MAP_FAILED) {
		close(s->fd);
		return -1;
	}
	s->pg = p;
	s->data = (const unsigned char *)p + PAGE;
	if (ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0)) {
		munmap(p, PAGE + BUF_SIZE);
		close(s->fd);
		return -1;
	}
	return 0;
}

static void perf_smpl_stop(struct perf_smpl *s, struct run *r)
{
	ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0);
	perf_drain(s);
	munmap(s->pg, PAGE + BUF_SIZE);
	close(s->fd);
	r->events = (double)s->samples;
	r->extra = (double)s->lost;
	r->throttles = (double)s->throttles;
}

/* ---- pv-perfmon counting: 4 virtual PMDs, 2 switched sets or 1 ---- */

static const uint16_t count_pmds[4] = {
	PVPFM_VPMD_VCPU_RUN_NS, PVPFM_VPMD_VM_EXITS,	/* set 0 */
	PVPFM_VPMD_HOST_PAGE_FAULTS, PVPFM_VPMD_STEAL_NS, /* set 1, or 0 */
};

static int count_start(int mux)
{
	pfarg_setdesc_t sd[2];
	pfarg_pmd_t pd[4];
	int fd = t_create(0);

	if (fd < 0)
		return -1;
	memset(sd, 0, sizeof(sd));
	for (int i = 0; i < 2; i++) {
		sd[i].set_id = i;
		sd[i].set_flags = PFM_SETFL_TIME_SWITCH;
		sd[i].set_timeout = SWITCH_NS;
	}
	memset(pd, 0, sizeof(pd));
	for (int i = 0; i < 4; i++) {
		pd[i].reg_num = count_pmds[i];
		pd[i].reg_set = mux && i >= 2;
	}
	if ((mux && pfm_create_evtsets(fd, sd, 2)) || pfm_write_pmds(fd, pd, 4) ||
	    t_load(fd, t_gettid(), 0) || pfm_start(fd, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* stop; the set activations after the first (the switches) */
static double count_stop(int fd, int mux)
{
	pfarg_setinfo_t si[2];
	pfarg_pmd_t pd[4];
	double runs = -1;

	memset(si, 0, sizeof(si));
	si[1].set_id = 1;
	memset(pd, 0, sizeof(pd));
	for (int i = 0; i < 4; i++) {
		pd[i].reg_num = count_pmds[i];
		pd[i].reg_set = mux && i >= 2;
	}
	if (pfm_stop(fd) || pfm_read_pmds(fd, pd, 4) ||
	    pfm_getinfo_evtsets(fd, si, mux ? 2 : 1)) {
		fail("pv counting: stop, read");
	} else if (!pd[0].reg_value) {
		errno = 0;
		fail("pv counting: VCPU_RUN_NS counted nothing");
	} else {
		runs = (double)si[0].set_runs - 1;
		if (mux)
			runs += (double)si[1].set_runs;
	}
	close(fd);
	return runs;
}

/* ---- a timed run ---- */

/* the tool on (sampling or counting) or off, between two slices */
static void tool_set(const struct config *c, int on, struct pv_smpl *pv,
		     struct perf_smpl *pf, int fd)
{
	switch (c->kind) {
	case PV_SMPL:
		if (!on) {
			if (pfm_stop(pv->fd))
				fail("pv sampling: pfm_stop");
			break;
		}
		/* a buffer that filled is restarted first (START is refused) */
		pv_poll(pv);
		if (pfm_start(pv->fd, NULL))
			fail("pv sampling: pfm_start");
		break;
	case PERF_SMPL:
		if (ioctl(pf->fd, on ? PERF_EVENT_IOC_ENABLE :
				       PERF_EVENT_IOC_DISABLE, 0))
			fail("perf sampling: enable/disable");
		break;
	case PV_MUX:
	case PV_PLAIN:
		if (on ? pfm_start(fd, NULL) : pfm_stop(fd))
			fail("pv counting: start/stop");
		break;
	default:
		break;
	}
}

/*
 * The workload for @secs of wall time in slices of SLICE_NS, the tool on
 * in every other one (on-off, then off-on: a drift within a pair cancels
 * too). Work and the thread's CPU time are summed per state, outside the
 * toggling.
 */
static void timed_run(const struct config *c, double secs, struct run *r)
{
	struct pv_smpl pv;
	struct perf_smpl pf;
	uint64_t c0, c1, w0, end, slice_end, work;
	double st0, st1;
	int fd = -1, on;
	const uint32_t base = 1000001;

	memset(r, 0, sizeof(*r));
	switch (c->kind) {
	case PV_SMPL:
		if (pv_smpl_start(&pv, c->rate))
			goto err;
		break;
	case PERF_SMPL:
		if (perf_smpl_start(&pf, c->rate))
			goto err;
		break;
	case PV_MUX:
	case PV_PLAIN:
		fd = count_start(c->kind == PV_MUX);
		if (fd < 0)
			goto err;
		break;
	default:
		break;
	}
	/* every tool starts on: the first slice of each pair is on */
	on = 1;
	st0 = steal_ns();
	w0 = t_now_ns();
	end = w0 + (uint64_t)(secs * 1e9);
	for (int slice = 0; t_now_ns() < end; slice++) {
		int want = (slice / 2) % 2 ? slice % 2 : !(slice % 2);

		if (want != on) {
			tool_set(c, want, &pv, &pf, fd);
			on = want;
		}
		work = 0;
		c0 = t_thread_cpu_ns();
		slice_end = t_now_ns() + SLICE_NS;
		do {
			sink += work_piece(base);
			work++;
			/* what the tool costs in this thread: its samples taken */
			if (on && c->kind == PV_SMPL)
				pv_poll(&pv);
			else if (on && c->kind == PERF_SMPL)
				perf_poll(&pf);
		} while (t_now_ns() < slice_end);
		c1 = t_thread_cpu_ns();
		r->work[on] += (double)work;
		r->cpu_ns[on] += (double)(c1 - c0);
		r->slices++;
	}
	r->wall_ns = (double)(t_now_ns() - w0);
	st1 = steal_ns();
	r->steal_ns = st1 - st0;
	switch (c->kind) {
	case PV_SMPL:
		pv_smpl_stop(&pv, r);
		break;
	case PERF_SMPL:
		perf_smpl_stop(&pf, r);
		break;
	case PV_MUX:
	case PV_PLAIN:
		r->events = count_stop(fd, c->kind == PV_MUX);
		if (r->events < 0)
			return;
		break;
	default:
		break;
	}
	r->ok = r->cpu_ns[0] > 0 && r->cpu_ns[1] > 0 && r->work[1] > 0;
	return;
err:
	fail(c->key);
}

/* the run's slowdown: work per CPU-s with the tool off over on */
static double slowdown_of(const struct run *x)
{
	return (x->work[0] / x->cpu_ns[0]) / (x->work[1] / x->cpu_ns[1]);
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the @p quantile of sorted @v[0..n-1], interpolated */
static double quantile(const double *v, int n, double p)
{
	double pos = p * (n - 1);
	int i = (int)pos;

	return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[n - 1];
}

struct stats {
	double med, q1, q3, min, max;
	int n;
};

static struct stats stats_of(double *v, int n)
{
	struct stats s = { 0 };

	if (!n)
		return s;
	qsort(v, n, sizeof(*v), cmp_double);
	s.n = n;
	s.med = quantile(v, n, 0.5);
	s.q1 = quantile(v, n, 0.25);
	s.q3 = quantile(v, n, 0.75);
	s.min = v[0];
	s.max = v[n - 1];
	return s;
}

/* the slowdowns of configuration @k over the rounds it ran */
static struct stats slowdown_stats(int k, int rounds)
{
	double v[MAX_ROUNDS];
	int n = 0;

	for (int r = 0; r < rounds; r++)
		if (results[k][r].ok)
			v[n++] = slowdown_of(&results[k][r]);
	return stats_of(v, n);
}

/*
 * @a's work relative to @b's, round by round: slowdown(b) / slowdown(a),
 * each measured against its own off slices (the two ran within seconds
 * of each other); *ahead: rounds where @a did more.
 */
static struct stats paired_stats(int a, int b, int rounds, int *ahead)
{
	double v[MAX_ROUNDS];
	int n = 0;

	*ahead = 0;
	for (int r = 0; r < rounds; r++) {
		const struct run *x = &results[a][r], *y = &results[b][r];

		if (!x->ok || !y->ok)
			continue;
		v[n] = slowdown_of(y) / slowdown_of(x);
		*ahead += v[n++] > 1;
	}
	return stats_of(v, n);
}

static void report_paired(const char *key, int a, int b, int rounds)
{
	int ahead;
	struct stats p = paired_stats(a, b, rounds, &ahead);

	if (!p.n)
		return;
	bench(key, "median", p.med, "ratio");
	bench(key, "q1", p.q1, "ratio");
	bench(key, "q3", p.q3, "ratio");
	bench(key, "min", p.min, "ratio");
	bench(key, "max", p.max, "ratio");
	bench(key, "rounds", p.n, "rounds");
	bench(key, "ahead", ahead, "rounds");
}

/* sums over the rounds of configuration @k */
struct sums {
	double work_on, work_off, cpu_on, cpu_off, wall, steal, slices, events,
	       extra, throttles;
};

static struct sums sums_of(int k, int rounds)
{
	struct sums t = { 0 };

	for (int r = 0; r < rounds; r++) {
		const struct run *x = &results[k][r];

		if (!x->ok)
			continue;
		t.work_on += x->work[1];
		t.work_off += x->work[0];
		t.cpu_on += x->cpu_ns[1];
		t.cpu_off += x->cpu_ns[0];
		t.wall += x->wall_ns;
		t.steal += x->steal_ns;
		t.slices += x->slices;
		t.events += x->events;
		t.extra += x->extra;
		t.throttles += x->throttles;
	}
	return t;
}

/*
 * The slowdown of all the rounds' slices together: work per CPU-s off
 * over on, each a sum over the rounds. Every slice of either state lies
 * within 20 ms of one of the other, so the rig's swings cancel in the
 * ratio as they do in each run's; it weighs the rounds by their CPU time
 * where the median counts each once, and it varies less from one run of
 * b_overhead to the next (what check.sh compares between the samplers).
 */
static double pooled_slowdown(const struct sums *t)
{
	return (t->work_off / t->cpu_off) / (t->work_on / t->cpu_on);
}

/* CPU time one sample costs the workload (us): its lost share per sample */
static double us_per_sample(double slowdown, const struct sums *t)
{
	double rate = t->events / t->cpu_on * 1e9;

	return rate > 0 ? (1 - 1 / slowdown) / rate * 1e6 : -1;
}

static void report_config(int k, int rounds)
{
	const struct config *c = &configs[k];
	struct stats s = slowdown_stats(k, rounds);
	struct sums t = sums_of(k, rounds);

	bench(c->key, "", s.med, "slowdown");
	bench(c->key, "q1", s.q1, "slowdown");
	bench(c->key, "q3", s.q3, "slowdown");
	bench(c->key, "min", s.min, "slowdown");
	bench(c->key, "max", s.max, "slowdown");
	bench(c->key, "rounds", s.n, "rounds");
	bench(c->key, "pooled", pooled_slowdown(&t), "slowdown");
	bench(c->key, "work_on_per_cpu_s", t.work_on / t.cpu_on * 1e9,
	      "work/cpu_s");
	bench(c->key, "slices_per_run", t.slices / s.n, "slices");
	bench(c->key, "cpu_pct_of_wall", (t.cpu_on + t.cpu_off) / t.wall * 100,
	      "%");
	bench(c->key, "steal_pct", t.steal / t.wall * 100, "%");
	if (c->kind == PV_SMPL || c->kind == PERF_SMPL) {
		bench(c->key, "samples_per_cpu_s", t.events / t.cpu_on * 1e9,
		      "samples/cpu_s");
		bench(c->key, "rate_ratio", t.events / t.cpu_on * 1e9 / c->rate,
		      "of_rate");
		bench(c->key, "cpu_us_per_sample", us_per_sample(s.med, &t),
		      "us/sample");
		if (c->kind == PV_SMPL) {
			bench(c->key, "buffer_fills", t.extra / s.n, "fills/run");
		} else {
			bench(c->key, "lost", t.extra / s.n, "samples/run");
			bench(c->key, "throttles", t.throttles / s.n,
			      "throttles/run");
		}
	} else if (c->kind == PV_MUX || c->kind == PV_PLAIN) {
		bench(c->key, "set_switches_per_cpu_s", t.events / t.cpu_on * 1e9,
		      "switches/cpu_s");
	}
}

/* the index of configuration @kind at @rate */
static int config_index(enum kind kind, unsigned int rate)
{
	for (int k = 0; k < NCONF; k++)
		if (configs[k].kind == kind && configs[k].rate == rate)
			return k;
	return -1;
}

static void report(int rounds)
{
	static const unsigned int rates[] = { 1000, 5000, 20000 };
	int mux = config_index(PV_MUX, 0), plain = config_index(PV_PLAIN, 0);
	struct stats s[NCONF];

	for (int k = 0; k < NCONF; k++) {
		s[k] = slowdown_stats(k, rounds);
		if (!s[k].n)
			printf("BENCH-INFO %s: no run\n", configs[k].key);
		else
			report_config(k, rounds);
	}
	for (int k = 0; k < NCONF; k++)
		if (s[k].n)
			printf("RATIO overhead %-24s %.3f slowdown (median of %d rounds, IQR %.3f-%.3f, range %.3f-%.3f)\n",
			       configs[k].key, s[k].med, s[k].n, s[k].q1,
			       s[k].q3, s[k].min, s[k].max);
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		int p = config_index(PV_SMPL, rates[i]);
		int f = config_index(PERF_SMPL, rates[i]);
		struct sums tp = sums_of(p, rounds), tf = sums_of(f, rounds);
		struct stats pp;
		char key[48];
		int ahead;

		if (!s[p].n || !s[f].n)
			continue;
		snprintf(key, sizeof(key), "pv_vs_perf.%u", rates[i]);
		report_paired(key, p, f, rounds);
		pp = paired_stats(p, f, rounds, &ahead);
		printf("RATIO overhead sampling %u/s: slowdown pooled pv-perfmon %.3f, guest perf %.3f; median pv-perfmon %.3f (IQR %.3f-%.3f), guest perf %.3f (IQR %.3f-%.3f); CPU per sample %.0f us vs %.0f us; samples per CPU-s %.0f vs %.0f; pv-perfmon's work over perf's %.3f (median of rounds, IQR %.3f-%.3f; ahead in %d of %d)\n",
		       rates[i], pooled_slowdown(&tp), pooled_slowdown(&tf),
		       s[p].med, s[p].q1, s[p].q3, s[f].med,
		       s[f].q1, s[f].q3, us_per_sample(s[p].med, &tp),
		       us_per_sample(s[f].med, &tf),
		       tp.events / tp.cpu_on * 1e9, tf.events / tf.cpu_on * 1e9,
		       pp.med, pp.q1, pp.q3, ahead, pp.n);
	}
	if (s[mux].n && s[plain].n) {
		int ahead;
		struct stats pm = paired_stats(mux, plain, rounds, &ahead);

		report_paired("mux_vs_plain", mux, plain, rounds);
		printf("RATIO overhead counting: slowdown multiplexed %.3f, plain %.3f; multiplexed's work over plain's %.3f (median of rounds, IQR %.3f-%.3f)\n",
		       s[mux].med, s[plain].med, pm.med, pm.q1, pm.q3);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 8;
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	struct run warm;

	if (rounds < 1 || rounds > MAX_ROUNDS || secs <= 0) {
		fprintf(stderr, "usage: b_overhead [ROUNDS (1-%d) [SECONDS]]\n",
			MAX_ROUNDS);
		return 2;
	}
	for (size_t i = 0; i < sizeof(piece_buf); i++)
		piece_buf[i] = (unsigned char)(i * 131);
	if (t_pin(0))
		fail("pin to CPU 0");
	printf("BENCH-INFO b_overhead: %d rounds of %d configurations, %.1f s each, vCPU %d of %ld, set switch %llu ms\n",
	       rounds, NCONF, secs, sched_getcpu(), sysconf(_SC_NPROCESSORS_ONLN),
	       SWITCH_NS / 1000000);
	fflush(stdout);
	timed_run(&configs[0], secs / 4, &warm);	/* faults, caches */
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < NCONF; i++) {
			int k = r & 1 ? NCONF - 1 - i : i;

			struct run *x = &results[k][r];

			timed_run(&configs[k], secs * configs[k].runs, x);
			printf("b_overhead: round %d %s: slowdown %.3f work on %.0f off %.0f cpu on %.1f off %.1f ms wall %.1f ms events %.0f extra %.0f throttles %.0f\n",
			       r + 1, configs[k].key,
			       x->ok ? slowdown_of(x) : 0, x->work[1],
			       x->work[0], x->cpu_ns[1] / 1e6,
			       x->cpu_ns[0] / 1e6, x->wall_ns / 1e6,
			       x->events, x->extra, x->throttles);
		}
		printf("b_overhead: round %d of %d done\n", r + 1, rounds);
		fflush(stdout);
	}
	bench("rounds", "", rounds, "rounds");
	bench("seconds", "", secs, "s");
	report(rounds);
	printf("BENCH-DONE failures %d\n", failures);
	return failures ? 1 : 0;
}
