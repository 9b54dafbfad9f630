// SPDX-License-Identifier: GPL-2.0
/*
 * PFM_FL_OVFL_NO_MSG the way libpfm-3.x programs use it: no
 * message is queued, yet each notification raises SIGIO, as perfmon2's
 * pfm_notify_user() did, so a program whose SIGIO handler calls
 * pfm_restart keeps monitoring:
 *
 * smpl    a self-sampling program with the default format: its handler
 *         takes the full buffer and restarts; the buffer fills again and
 *         again, one SIGIO per fill
 * count   an OVFL_NOTIFY PMD without a format: one SIGIO per period,
 *         each restarted by the handler
 *
 * Either way read() finds no message (O_NONBLOCK: EAGAIN).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "t_common.h"

#define BUF_SIZE	4096
/* the rounds each program must see: more than the first fill */
#define ROUNDS		4
#define DEADLINE_NS	(20 * SEC)

/* what the SIGIO handler does, as in a libpfm-3 self-sampler */
static int sig_fd = -1;
static const volatile pfm_dfl_smpl_hdr_t *sig_hdr;
static volatile sig_atomic_t sig_count, sig_restart_err, sig_empty;
static volatile uint64_t sig_entries;

static void on_sigio(int sig)
{
	int saved = errno;

	(void)sig;
	sig_count++;
	if (sig_hdr) {
		/* a full buffer: take its entries */
		if (!sig_hdr->hdr_count)
			sig_empty++;
		sig_entries += sig_hdr->hdr_count;
	}
	if (pfm_restart(sig_fd))
		sig_restart_err = errno;
	errno = saved;
}

static void sigio_arm(int fd, const pfm_dfl_smpl_hdr_t *h)
{
	struct sigaction sa = { .sa_handler = on_sigio };

	sig_fd = fd;
	sig_hdr = h;
	sig_count = 0;
	sig_restart_err = 0;
	sig_empty = 0;
	sig_entries = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGIO, &sa, NULL);
	fcntl(fd, F_SETOWN, getpid());
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC | O_NONBLOCK);
}

static void sigio_disarm(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_ASYNC);
	signal(SIGIO, SIG_IGN);
	sig_hdr = NULL;
	sig_fd = -1;
}

/* run on this vCPU until the handler ran @rounds times or the deadline */
static void run_until(int rounds)
{
	uint64_t end = t_now_ns() + DEADLINE_NS;

	while (sig_count < rounds && t_now_ns() < end)
		t_busy_ns(MS);
}

/* RUN_NS from -@period, notifying (when no format), started on itself */
static int program(int fd, uint64_t period, uint32_t pmd_flags)
{
	pfarg_pmd_t pd;

	t_pmd_period(&pd, RUN_NS, period, pmd_flags);
	if (pfm_write_pmds(fd, &pd, 1) || t_load(fd, t_gettid(), 0))
		return -1;
	return pfm_start(fd, NULL);
}

static void no_message(int fd, const char *name)
{
	pfarg_msg_t m;

	t_expect_err(name, (int)read(fd, &m, sizeof(m)), EAGAIN);
}

static void smpl(void)
{
	pfm_dfl_smpl_hdr_t *h;
	int fd;

	fd = t_smpl_create(PFM_FL_OVFL_NO_MSG, BUF_SIZE);
	if (!t_expect_ok("nomsg: smpl: create, default format", fd))
		return;
	h = mmap(NULL, BUF_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	if (!t_check(h != MAP_FAILED, "nomsg: smpl: mmap the buffer", "%s",
		     strerror(errno))) {
		close(fd);
		return;
	}
	sigio_arm(fd, h);
	/* 200 us of vCPU time a sample: a fill every ~20 ms */
	if (!t_expect_ok("nomsg: smpl: program, load on itself, start",
			 program(fd, 200 * 1000ULL, PFM_REGFL_OVFL_NOTIFY)))
		goto out;
	run_until(ROUNDS);
	t_check(sig_count >= ROUNDS,
		"nomsg: smpl: one SIGIO per full buffer, sampling goes on after the first",
		"%d signals, %llu fills in %llu s", (int)sig_count,
		(unsigned long long)h->hdr_overflows,
		(unsigned long long)(DEADLINE_NS / SEC));
	t_check(h->hdr_overflows >= ROUNDS && !sig_empty && sig_entries > 0,
		"nomsg: smpl: the handler found a full buffer each time",
		"fills %llu, empty %d, entries %llu",
		(unsigned long long)h->hdr_overflows, (int)sig_empty,
		(unsigned long long)sig_entries);
	t_check(!sig_restart_err, "nomsg: smpl: pfm_restart in the handler",
		"%s", strerror(sig_restart_err));
	pfm_stop(fd);
	no_message(fd, "nomsg: smpl: no message queued (read EAGAIN)");
out:
	sigio_disarm(fd);
	munmap(h, BUF_SIZE);
	close(fd);
}

static void count(void)
{
	uint64_t v = 0;
	int fd;

	fd = t_create(PFM_FL_OVFL_NO_MSG);
	if (!t_expect_ok("nomsg: count: create", fd))
		return;
	sigio_arm(fd, NULL);
	/* a notification every 5 ms of vCPU time */
	if (!t_expect_ok("nomsg: count: program, load on itself, start",
			 program(fd, 5 * MS, PFM_REGFL_OVFL_NOTIFY)))
		goto out;
	run_until(ROUNDS);
	t_check(sig_count >= ROUNDS,
		"nomsg: count: one SIGIO per OVFL_NOTIFY overflow, restarted by the handler",
		"%d signals in %llu s", (int)sig_count,
		(unsigned long long)(DEADLINE_NS / SEC));
	t_check(!sig_restart_err, "nomsg: count: pfm_restart in the handler",
		"%s", strerror(sig_restart_err));
	pfm_stop(fd);
	t_check(!t_read_pmd(fd, RUN_NS, 0, &v) &&
		v >= (uint64_t)-(5 * MS),
		"nomsg: count: the PMD counts up from its reset value again",
		"RUN_NS %#llx", (unsigned long long)v);
	no_message(fd, "nomsg: count: no message queued (read EAGAIN)");
out:
	sigio_disarm(fd);
	close(fd);
}

int main(void)
{
	smpl();
	count();
	return t_done();
}
