// SPDX-License-Identifier: GPL-2.0
/*
 * The guest of the operator test (tests/operator): it counts, samples and
 * has calls refused on purpose, prints exactly what it did, and holds its
 * context open while the host's operator tools look at the VM. Not a t_*
 * program: it waits for the host, so guest/tests/run does not run it.
 *
 *   operator CONTROL
 *
 * CONTROL is a serial port the host writes to (a QEMU pipe chardev on an
 * isa-serial, /dev/ttyS1): "go" makes it sample again, "stop" ends it.
 *
 * Phase 1, each of its calls counted by the host:
 *   - a context sampling VCPU_RUN_NS (VM_EXITS counted alongside) into a
 *     one-page buffer until the buffer is full: monitoring is masked from
 *     then on, so the host's samples are the buffer's entries exactly;
 *   - on a second, unloaded context, calls refused on purpose: cycles on
 *     PMC0 (NOTAVAIL where the host has no PMU and no event map), the
 *     HOST_PAGE_FAULTS virtual PMD (accepted, unless the operator's
 *     filter denies it: NOTAVAIL too, "FILTERED" on the host), a PMD in
 *     a set that does not exist (EINVAL), pfm_restart of an unloaded
 *     context (EBUSY);
 * then one line the host test compares with the module's view:
 *
 *   operator: phase 1: samples=N hw_notavail=N vpmd_notavail=N einval=N
 *             ebusy=N (one line)
 *
 * From then on until "stop", a second thread spins with a context of its
 * own counting VCPU_RUN_NS and VM_EXITS: a masked context has no host
 * counters open, a spinning thread's context has them, so the host's
 * view shows events with their enabled and running time.
 *
 * Phase 2 (on "go"): pfm_restart; the buffer fills again:
 *
 *   operator: phase 2: samples=N (the total of both phases)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include "t_common.h"

#define PAGE_FAULTS	PVPFM_VPMD_HOST_PAGE_FAULTS
#define SMPL_PERIOD	(500 * 1000ULL)	/* ns of vCPU run time */
#define BUF_SIZE	4096
#define FILL_TIMEOUT_S	30
/* the host test's whole run is bounded by the rig; this is a backstop */
#define CONTROL_TIMEOUT_S	600

#define EVTSEL_ON	((1ULL << 16) | (1ULL << 17) | (1ULL << 20) | \
			 (1ULL << 22))	/* USR, OS, INT, EN */

static volatile sig_atomic_t fill_timeout;

static void on_alarm(int sig)
{
	(void)sig;
	fill_timeout = 1;
}

/* spin until the buffer is full (masked) or FILL_TIMEOUT_S */
static bool fill(const volatile pfm_dfl_smpl_hdr_t *h, uint64_t overflows)
{
	struct itimerval it = { .it_value = { .tv_sec = FILL_TIMEOUT_S } };
	struct itimerval off = { 0 };

	fill_timeout = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	while (h->hdr_overflows < overflows && !fill_timeout)
		;
	setitimer(ITIMER_REAL, &off, NULL);
	return h->hdr_overflows >= overflows;
}

/* the sampling context, loaded on this thread and started */
static int sampling(pfm_dfl_smpl_hdr_t **hp)
{
	pfm_dfl_smpl_arg_t arg = { .buf_size = BUF_SIZE };
	pfarg_ctx_t ctx = { 0 };
	pfarg_pmd_t pd[2];
	void *p;
	int fd;

	fd = pfm_create_context(&ctx, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
	if (!t_expect_ok("operator: create a sampling context", fd))
		return -1;
	p = mmap(NULL, BUF_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	memset(pd, 0, sizeof(pd));
	/* OVFL_NOTIFY: a message when the buffer is full */
	t_pmd_period(&pd[0], RUN_NS, SMPL_PERIOD, PFM_REGFL_OVFL_NOTIFY);
	pd[1].reg_num = VM_EXITS;
	if (!t_check(p != MAP_FAILED && !pfm_write_pmds(fd, pd, 2) &&
		     !t_load(fd, t_gettid(), 0) && !pfm_start(fd, NULL),
		     "operator: sample VCPU_RUN_NS, count VM_EXITS", "%s",
		     strerror(errno))) {
		close(fd);
		return -1;
	}
	*hp = p;
	return fd;
}

/* the counting thread: up once its context counts, runs until stop */
static volatile bool counting_up, counting_stop;

static void *counting_fn(void *arg)
{
	uint64_t *counts = arg;
	pfarg_pmd_t pd[2];
	int fd = t_create(0);

	memset(pd, 0, sizeof(pd));
	pd[0].reg_num = RUN_NS;
	pd[1].reg_num = VM_EXITS;
	if (!t_check(fd >= 0 && !pfm_write_pmds(fd, pd, 2) &&
		     !t_load(fd, t_gettid(), 0) && !pfm_start(fd, NULL),
		     "operator: a thread counts VCPU_RUN_NS and VM_EXITS",
		     "%s", strerror(errno))) {
		counting_up = true;
		return NULL;
	}
	counting_up = true;
	while (!counting_stop)
		;
	pfm_stop(fd);
	t_read_pmd(fd, RUN_NS, 0, &counts[0]);
	t_read_pmd(fd, VM_EXITS, 0, &counts[1]);
	close(fd);
	return NULL;
}

struct refused {
	unsigned int hw_notavail, vpmd_notavail, einval, ebusy;
};

/* PMC0 = cycles of this PMU; false if the model has no known encoding */
static bool cycles(int fd, struct refused *r)
{
	char model[64];
	pfarg_pmc_t pc;
	int ret;

	if (!t_pmu_model(model, sizeof(model)))
		return false;
	memset(&pc, 0, sizeof(pc));
	if (!strncmp(model, "amd64", 5))
		pc.reg_value = 0x76 | EVTSEL_ON;
	else if (!strncmp(model, "intel_arch", 10))
		pc.reg_value = 0x3c | EVTSEL_ON;
	else
		return false;
	ret = pfm_write_pmcs(fd, &pc, 1);
	if (ret && errno == EINVAL &&
	    (pc.reg_flags & PFM_REG_RETFL_MASK) == PFM_REG_RETFL_NOTAVAIL)
		r->hw_notavail++;
	printf("operator: cycles on PMC0 (%s): %s, flags %#x\n", model,
	       ret ? strerrorname_np(errno) : "accepted", pc.reg_flags);
	return true;
}

static void refusals(struct refused *r)
{
	pfarg_pmd_t pd;
	int fd, ret;

	fd = t_create(0);
	if (!t_expect_ok("operator: create a context to refuse calls on", fd))
		return;
	t_check(cycles(fd, r), "operator: a cycles encoding for this PMU",
		"pmu_desc/model unknown");

	memset(&pd, 0, sizeof(pd));
	pd.reg_num = PAGE_FAULTS;
	ret = pfm_write_pmds(fd, &pd, 1);
	if (ret && errno == EINVAL &&
	    (pd.reg_flags & PFM_REG_RETFL_MASK) == PFM_REG_RETFL_NOTAVAIL)
		r->vpmd_notavail++;
	printf("operator: HOST_PAGE_FAULTS (PMD%u): %s, flags %#x\n",
	       PAGE_FAULTS, ret ? strerrorname_np(errno) : "accepted",
	       pd.reg_flags);
	t_check(!ret || r->vpmd_notavail, "operator: HOST_PAGE_FAULTS "
		"accepted or refused NOTAVAIL", "%s, flags %#x",
		ret ? strerrorname_np(errno) : "accepted", pd.reg_flags);

	memset(&pd, 0, sizeof(pd));
	pd.reg_num = RUN_NS;
	pd.reg_set = 42;
	if (t_expect_err("operator: a PMD in set 42: EINVAL",
			 pfm_write_pmds(fd, &pd, 1), EINVAL))
		r->einval++;
	if (t_expect_err("operator: pfm_restart unloaded: EBUSY",
			 pfm_restart(fd), EBUSY))
		r->ebusy++;
	close(fd);
}

static bool wait_for(int ctl, const char *want)
{
	return t_control_wait(ctl, want, CONTROL_TIMEOUT_S,
			      "operator: the host says go on");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct refused r = { 0 };
	pfm_dfl_smpl_hdr_t *h;
	uint64_t exits = 0, samples, counts[2] = { 0 };
	pthread_t counting;
	int ctl, fd;

	ctl = t_control_arg(argc, argv, "operator");
	if (ctl < 0)
		return t_done();
	sigaction(SIGALRM, &sa, NULL);
	if (t_pin(0))
		printf("operator: cannot pin to CPU 0 (%s)\n", strerror(errno));

	fd = sampling(&h);
	if (fd < 0)
		return t_done();
	t_check(fill(h, 1), "operator: phase 1: the buffer fills",
		"count %llu in %d s", (unsigned long long)h->hdr_count,
		FILL_TIMEOUT_S);
	samples = h->hdr_count;
	refusals(&r);
	t_read_pmd(fd, VM_EXITS, 0, &exits);
	if (!t_check(!pthread_create(&counting, NULL, counting_fn, counts),
		     "operator: start the counting thread", "pthread_create"))
		return t_done();
	while (!counting_up)
		;
	printf("operator: phase 1: samples=%llu hw_notavail=%u "
	       "vpmd_notavail=%u einval=%u ebusy=%u (VM exits counted: %llu)\n",
	       (unsigned long long)samples, r.hw_notavail, r.vpmd_notavail,
	       r.einval, r.ebusy, (unsigned long long)exits);
	fflush(stdout);

	if (wait_for(ctl, "go")) {
		t_expect_ok("operator: pfm_restart", pfm_restart(fd));
		t_check(fill(h, 2), "operator: phase 2: the buffer fills again",
			"count %llu in %d s", (unsigned long long)h->hdr_count,
			FILL_TIMEOUT_S);
		samples += h->hdr_count;
		printf("operator: phase 2: samples=%llu\n",
		       (unsigned long long)samples);
		fflush(stdout);
		wait_for(ctl, "stop");
	}
	counting_stop = true;
	pthread_join(counting, NULL);
	printf("operator: the thread counted VCPU_RUN_NS=%llu VM_EXITS=%llu\n",
	       (unsigned long long)counts[0], (unsigned long long)counts[1]);
	munmap(h, BUF_SIZE);
	close(fd);
	close(ctl);
	return t_done();
}
