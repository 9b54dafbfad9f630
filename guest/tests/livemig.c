// SPDX-License-Identifier: GPL-2.0
/*
 * The guest of the live migration test (tests/migrate): perfmon2 at work
 * while the host migrates the VM from QEMU to QEMU, and the checks that
 * it noticed nothing but the pause. Not a t_* program: it waits for the
 * host, so guest/tests/run does not run it.
 *
 *   livemig CONTROL
 *
 * CONTROL is a serial port the host writes to (a QEMU pipe chardev on an
 * isa-serial, /dev/ttyS1): "restart" once the VM has moved, "stop" at the
 * end. Three monitored threads, each with a per-thread context:
 *
 *   counting  spins; two sets switched every 20 ms (PFM_SETFL_TIME_SWITCH),
 *             each counting cycles (PMC0, the event map's task-clock in
 *             the rig) and VCPU_RUN_NS. Every 500 ms it prints a tick:
 *               livemig: tick N t=S cycles=C run=R act=A act_t0=S0
 *                        act_t1=S1 runs=N smpl=S
 *             (its own counts, the sets' act_duration and runs, summed;
 *             t is the guest's monotonic clock, which stands still while
 *             the VM is paused, when the tick begins; act_t0 and act_t1
 *             the same clock just before and after the call that reads
 *             act, which took a VM exit of its own: a window of a few
 *             to tens of milliseconds under nested TCG, which holds the
 *             moment act was taken). At the end: every count monotonic, and
 *             from tick to tick no more than the time allows (no reset,
 *             no double count). The host compares the ticks around each
 *             move: act_duration no further ahead than the guest's clock
 *             (the downtime is not active time; a pause without a move,
 *             as a refused one, is: doc/ADMIN.md, "Live migration").
 *   sampling  samples VCPU_RUN_NS every 1 ms of vCPU time into a one-page
 *             buffer; when full (a PFM_MSG_OVFL) it checks every entry
 *             (its thread, its PMD, its reset value, host timestamps in
 *             order, an overshoot under 10 s: no torn entry) and that
 *             every fill holds as many (none lost), and restarts. The
 *             longest host time between two entries is printed: the
 *             paused time, at most.
 *   blocked   a ptrace-attached child with a PFM_FL_NOTIFY_BLOCK sampling
 *             context: its buffer fills before the migration and it sleeps
 *             until pfm_restart, which comes after the move ("restart");
 *             it must run again and fill its buffer once more.
 *
 * The sampling thread and the child run at nice 10, so that the counting
 * thread's context is most likely the one in when the VM stops.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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

#define EVTSEL_ON	((1ULL << 16) | (1ULL << 17) | (1ULL << 20) | \
			 (1ULL << 22))	/* USR, OS, INT, EN */
#define SET_TIMEOUT	(20 * MS)
#define TICK_NS		(500 * MS)
#define MAX_TICKS	2000
#define SMPL_PERIOD	MS
/*
 * The recorded PMD is the vCPU run time past the overflow until the host
 * handled it; how late that is, L0's scheduling of the rig decides
 * (seconds, with two rigs on two cores). It is not bounded by the host
 * time since the entry before: one run recorded 3.5 ms past the overflow
 * 1.1 ms after the entry before. SMPL_OVER_MAX is far below a whole
 * counter value once the guest has run that long, and any garbage.
 */
#define SMPL_OVER_MAX	(10 * SEC)
#define BUF_SIZE	4096
#define ENT_SIZE	(sizeof(pfm_dfl_smpl_entry_t) + 8)
#define CONTROL_TIMEOUT_S	600
#define MSG_TIMEOUT_MS	60000

struct tick {
	uint64_t t, cycles, run, act, runs;
	uint64_t act_t0, act_t1;	/* the clock around act's reading */
};

static struct tick ticks[MAX_TICKS];
static unsigned int nr_ticks;
static volatile bool stop;
static volatile uint64_t samples, fills, torn;
static uint64_t max_gap, first_count, odd_fills;
static bool setup_failed;

/* the cycles encoding of this PMU (amd64 or intel_arch), 0 if unknown */
static uint64_t cycles_sel(void)
{
	char model[64];

	if (!t_pmu_model(model, sizeof(model)))
		return 0;
	if (!strncmp(model, "amd64", 5))
		return 0x76 | EVTSEL_ON;
	if (!strncmp(model, "intel_arch", 10))
		return 0x3c | EVTSEL_ON;
	return 0;
}

static void read_tick(int fd, struct tick *k)
{
	pfarg_setinfo_t si[2];
	uint64_t v;
	int s;

	memset(k, 0, sizeof(*k));
	memset(si, 0, sizeof(si));
	k->t = t_now_ns();
	for (s = 0; s < 2; s++) {
		si[s].set_id = s;
		t_read_pmd(fd, 0, s, &v);
		k->cycles += v;
		t_read_pmd(fd, RUN_NS, s, &v);
		k->run += v;
	}
	k->act_t0 = t_now_ns();
	if (!pfm_getinfo_evtsets(fd, si, 2)) {
		k->act = si[0].set_act_duration + si[1].set_act_duration;
		k->runs = si[0].set_runs + si[1].set_runs;
	}
	k->act_t1 = t_now_ns();
}

static void *counting_fn(void *arg)
{
	pfarg_setdesc_t sd[2];
	pfarg_pmc_t pc[2];
	pfarg_pmd_t pd[4];
	uint64_t next;
	int fd, s;

	(void)arg;
	memset(sd, 0, sizeof(sd));
	memset(pc, 0, sizeof(pc));
	memset(pd, 0, sizeof(pd));
	for (s = 0; s < 2; s++) {
		sd[s].set_id = s;
		sd[s].set_flags = PFM_SETFL_TIME_SWITCH;
		sd[s].set_timeout = SET_TIMEOUT;
		pc[s].reg_set = s;
		pc[s].reg_value = cycles_sel();
		pd[2 * s].reg_set = s;
		pd[2 * s + 1].reg_set = s;
		pd[2 * s + 1].reg_num = RUN_NS;
	}
	fd = t_create(0);
	if (!t_check(fd >= 0 && pc[0].reg_value &&
		     !pfm_create_evtsets(fd, sd, 2) &&
		     !pfm_write_pmcs(fd, pc, 2) && !pfm_write_pmds(fd, pd, 4) &&
		     !t_load(fd, t_gettid(), 0) && !pfm_start(fd, NULL),
		     "livemig: counting: two time-switched sets, cycles and "
		     "VCPU_RUN_NS", "%s", strerror(errno))) {
		setup_failed = true;
		return NULL;
	}
	next = t_now_ns();
	while (!stop && nr_ticks < MAX_TICKS) {
		if (t_now_ns() < next)
			continue;
		next += TICK_NS;
		read_tick(fd, &ticks[nr_ticks]);
		printf("livemig: tick %u t=%.3f cycles=%llu run=%llu act=%llu "
		       "act_t0=%.6f act_t1=%.6f runs=%llu smpl=%llu\n",
		       nr_ticks, ticks[nr_ticks].t / 1e9,
		       (unsigned long long)ticks[nr_ticks].cycles,
		       (unsigned long long)ticks[nr_ticks].run,
		       (unsigned long long)ticks[nr_ticks].act,
		       ticks[nr_ticks].act_t0 / 1e9,
		       ticks[nr_ticks].act_t1 / 1e9,
		       (unsigned long long)ticks[nr_ticks].runs,
		       (unsigned long long)samples);
		fflush(stdout);
		nr_ticks++;
	}
	pfm_stop(fd);
	close(fd);
	return NULL;
}

/* a sampling context: VCPU_RUN_NS every 1 ms of vCPU time, recorded */
static int smpl_ctx(uint32_t flags, pfm_dfl_smpl_hdr_t **h)
{
	pfm_dfl_smpl_arg_t arg = { .buf_size = BUF_SIZE };
	pfarg_ctx_t ctx = { .ctx_flags = flags };
	pfarg_pmd_t pd;
	void *p;
	int fd;

	fd = pfm_create_context(&ctx, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
	if (fd < 0)
		return -1;
	p = mmap(NULL, BUF_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	/* OVFL_NOTIFY: a message when the buffer is full */
	t_pmd_period(&pd, RUN_NS, SMPL_PERIOD, PFM_REGFL_OVFL_NOTIFY);
	pd.reg_smpl_pmds[RUN_NS / 64] = 1ULL << (RUN_NS % 64);
	if (p == MAP_FAILED || pfm_write_pmds(fd, &pd, 1)) {
		close(fd);
		return -1;
	}
	*h = p;
	return fd;
}


/*
 * A full buffer's entries: whole (this thread, this PMD, its reset value;
 * the recorded PMD is its own overshoot past the overflow, under
 * SMPL_OVER_MAX) and in the host's time order; every fill as many.
 */
static void check_entries(const pfm_dfl_smpl_hdr_t *h, pid_t tid)
{
	const pfm_dfl_smpl_entry_t *e;
	uint64_t i, over, gap = 0, prev = 0;
	bool bad;

	if (!first_count)
		first_count = h->hdr_count;
	if (h->hdr_count != first_count)
		odd_fills++;
	for (i = 0; i < h->hdr_count; i++) {
		e = (const void *)((const char *)(h + 1) + i * ENT_SIZE);
		over = *(const uint64_t *)(e + 1);
		if (i)
			gap = e->tstamp - prev;
		bad = e->tgid != (uint32_t)getpid() ||
		      e->pid != (uint32_t)tid || e->ovfl_pmd != RUN_NS ||
		      e->last_reset_val != (uint64_t)-SMPL_PERIOD ||
		      (i && e->tstamp < prev) || over >= SMPL_OVER_MAX;
		if (bad && !torn++)
			printf("livemig: bad entry %llu of fill %llu: tgid %u pid %u "
			       "PMD %u reset %lld, %llu ns past the overflow, "
			       "%llu ns after the entry before\n",
			       (unsigned long long)i,
			       (unsigned long long)fills + 1, e->tgid, e->pid,
			       e->ovfl_pmd, (long long)e->last_reset_val,
			       (unsigned long long)over,
			       (unsigned long long)gap);
		if (i && gap > max_gap)
			max_gap = gap;
		prev = e->tstamp;
	}
}

static void *sampling_fn(void *arg)
{
	pfm_dfl_smpl_hdr_t *h = NULL;
	pfarg_msg_t m;
	pid_t tid = t_gettid();
	int fd;

	(void)arg;
	setpriority(PRIO_PROCESS, tid, 10);
	fd = smpl_ctx(0, &h);
	if (!t_check(fd >= 0 && !t_load(fd, tid, 0) && !pfm_start(fd, NULL),
		     "livemig: sampling: VCPU_RUN_NS every 1 ms, one page",
		     "%s", strerror(errno))) {
		setup_failed = true;
		return NULL;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (!stop) {
		/* spin until the buffer is full: the message says so */
		while (!stop && read(fd, &m, sizeof(m)) != sizeof(m))
			;
		if (stop)
			break;
		check_entries(h, tid);
		samples += h->hdr_count;
		fills++;
		if (pfm_restart(fd)) {
			t_fail("livemig: sampling: pfm_restart", "%s",
			       strerror(errno));
			break;
		}
	}
	pfm_stop(fd);
	munmap(h, BUF_SIZE);
	close(fd);
	return NULL;
}

/* the blocked child: its CPU time (utime + stime, ticks) */
static unsigned long long child_cpu(pid_t pid)
{
	unsigned long long ut = 0, st = 0;
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
		       "%llu %llu", &ut, &st);
	fclose(f);
	return ut + st;
}

struct blocked {
	pid_t pid;
	int fd;
	pfm_dfl_smpl_hdr_t *h;
};

static bool spawn_blocked(struct blocked *b)
{
	pfarg_msg_t m;
	int status;

	b->pid = fork();
	if (b->pid < 0)
		return false;
	if (!b->pid) {
		setpriority(PRIO_PROCESS, 0, 10);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (;;)
			;
	}
	waitpid(b->pid, &status, 0);
	b->fd = smpl_ctx(PFM_FL_NOTIFY_BLOCK, &b->h);
	if (!WIFSTOPPED(status) || b->fd < 0 || t_load(b->fd, b->pid, 0) ||
	    pfm_start(b->fd, NULL))
		return false;
	ptrace(PTRACE_CONT, b->pid, NULL, NULL);
	return t_wait_msg(b->fd, &m, MSG_TIMEOUT_MS) && m.type == PFM_MSG_OVFL;
}

static bool wait_for(int ctl, const char *want)
{
	return t_control_wait(ctl, want, CONTROL_TIMEOUT_S,
			      "livemig: the host says go on");
}

static void check_ticks(void)
{
	const struct tick *a, *b;
	unsigned int i, bad_mono = 0, bad_rate = 0;
	uint64_t dt;

	for (i = 1; i < nr_ticks; i++) {
		a = &ticks[i - 1];
		b = &ticks[i];
		dt = b->t - a->t;
		if (b->cycles < a->cycles || b->run < a->run ||
		    b->act < a->act || b->runs < a->runs) {
			bad_mono++;
			printf("livemig: not monotonic at tick %u\n", i);
			continue;
		}
		/* at most all the time there was, and then some slack */
		if (b->cycles - a->cycles > 2 * dt + 100 * MS ||
		    b->run - a->run > 2 * dt + 100 * MS) {
			bad_rate++;
			printf("livemig: too much counted at tick %u\n", i);
		}
	}
	t_check(nr_ticks >= 10 && ticks[nr_ticks - 1].cycles &&
		ticks[nr_ticks - 1].runs > ticks[0].runs, "livemig: counted",
		"%u ticks, last cycles %llu, set runs %llu -> %llu", nr_ticks,
		nr_ticks ? (unsigned long long)ticks[nr_ticks - 1].cycles : 0,
		nr_ticks ? (unsigned long long)ticks[0].runs : 0,
		nr_ticks ? (unsigned long long)ticks[nr_ticks - 1].runs : 0);
	t_check(!bad_mono, "livemig: counts monotonic (no reset)",
		"%u ticks went back", bad_mono);
	t_check(!bad_rate, "livemig: counts continuous (no double count)",
		"%u ticks counted more than their time", bad_rate);
}

int main(int argc, char **argv)
{
	pthread_t counting, sampling;
	unsigned long long c0, c1;
	struct blocked b = { 0 };
	pfarg_msg_t m;
	int ctl;

	ctl = t_control_arg(argc, argv, "livemig");
	if (ctl < 0)
		return t_done();
	if (!t_check(spawn_blocked(&b), "livemig: the child's buffer fills: "
		     "PFM_MSG_OVFL, it blocks", "%s", strerror(errno)))
		return t_done();
	if (pthread_create(&counting, NULL, counting_fn, NULL) ||
	    pthread_create(&sampling, NULL, sampling_fn, NULL))
		return t_done();
	while (!setup_failed && (nr_ticks < 4 || !fills))
		t_sleep_ns(100 * MS);
	c0 = child_cpu(b.pid);
	printf("livemig: ready: blocked child %d, %llu samples in %llu "
	       "fills\n", b.pid, (unsigned long long)samples,
	       (unsigned long long)fills);
	fflush(stdout);

	if (!setup_failed && wait_for(ctl, "restart")) {
		c1 = child_cpu(b.pid);
		t_check(c1 == c0, "livemig: the child stayed blocked "
			"through the migration", "CPU ticks %llu -> %llu", c0, c1);
		t_expect_ok("livemig: pfm_restart of the blocked child",
			    pfm_restart(b.fd));
		t_check(t_wait_msg(b.fd, &m, MSG_TIMEOUT_MS) &&
			m.type == PFM_MSG_OVFL && b.h->hdr_overflows == 2,
			"livemig: the child resumed and filled its buffer again",
			"overflows %llu, CPU ticks %llu -> %llu",
			(unsigned long long)b.h->hdr_overflows, c1,
			child_cpu(b.pid));
		printf("livemig: blocked child resumed after pfm_restart: "
		       "CPU ticks %llu -> %llu, overflows %llu\n", c1,
		       child_cpu(b.pid),
		       (unsigned long long)b.h->hdr_overflows);
		fflush(stdout);
		wait_for(ctl, "stop");
	}
	stop = true;
	pthread_join(counting, NULL);
	pthread_join(sampling, NULL);
	kill(b.pid, SIGKILL);
	waitpid(b.pid, NULL, 0);
	check_ticks();
	t_check(fills >= 2 && !torn && !odd_fills,
		"livemig: sampling: whole entries, full fills",
		"%llu fills (%llu of another count), %llu bad entries",
		(unsigned long long)fills, (unsigned long long)odd_fills,
		(unsigned long long)torn);
	printf("livemig: samples=%llu fills=%llu (%llu entries each) "
	       "torn=%llu longest host time between entries=%llu ns "
	       "ticks=%u\n", (unsigned long long)samples,
	       (unsigned long long)fills, (unsigned long long)first_count,
	       (unsigned long long)torn, (unsigned long long)max_gap,
	       nr_ticks);
	return t_done();
}
