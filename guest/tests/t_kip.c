// SPDX-License-Identifier: GPL-2.0
/*
 * Guest kernel IPs: the sample entries and overflow
 * messages of a context created by a user without CAP_PERFMON show no
 * guest kernel IP (zeroed by the host, which knows the guest's mode at
 * each sample) unless the guest admin sets controls/user_kernel_ip to 1;
 * root's show them. The decision is the guest kernel's, at
 * pfm_create_context (pfm_create.c: PVPFM_FL_NO_KERNEL_IP).
 *
 * Each run is a child (root, or uid 65534) that samples itself:
 * VCPU_RUN_NS every SMPL_PERIOD ns of vCPU time while it read()s
 * /dev/zero, so that most samples are taken in the guest kernel, until
 * its buffer (BUF_SIZE) is full; then it reads the overflow message. Its
 * entries' IPs are tallied as kernel (upper half), zero and user.
 * Run as root (it switches uids).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "t_common.h"

#define CTL		"controls/user_kernel_ip"
#define SMPL_PERIOD	(200 * 1000ULL)
#define BUF_SIZE	1024	/* about 20 entries: each costs an exit */
#define KERNEL_START	0xffff800000000000ULL
#define TIMEOUT_NS	(20 * SEC)
#define NOBODY		65534

struct kip_run {
	int err;		/* 0, or errno of the step that failed */
	char step[32];		/* which */
	uint64_t n, kernel, zero, user;
	uint64_t msg_ip;
	int msg_type;
};

static void run_fail(struct kip_run *r, const char *step)
{
	r->err = errno ? errno : EIO;
	snprintf(r->step, sizeof(r->step), "%s", step);
}

/* in the child, as whoever it is now */
static void kip_sample(struct kip_run *r)
{
	const pfm_dfl_smpl_entry_t *e;
	volatile pfm_dfl_smpl_hdr_t *h;
	static char buf[64 * 1024];
	pfarg_pmd_t pd;
	pfarg_msg_t msg;
	uint64_t i, t0;
	int fd, zero;

	fd = t_smpl_create(0, BUF_SIZE);
	if (fd < 0)
		return run_fail(r, "create");
	h = mmap(NULL, BUF_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	if (h == MAP_FAILED)
		return run_fail(r, "mmap");
	t_pmd_period(&pd, RUN_NS, SMPL_PERIOD, PFM_REGFL_OVFL_NOTIFY);
	if (pfm_write_pmds(fd, &pd, 1))
		return run_fail(r, "write_pmds");
	if (t_load(fd, t_gettid(), 0))
		return run_fail(r, "load");
	zero = open("/dev/zero", O_RDONLY);
	if (zero < 0)
		return run_fail(r, "open /dev/zero");
	if (pfm_start(fd, NULL))
		return run_fail(r, "start");
	/* in the kernel most of the time, until the buffer is full */
	t0 = t_now_ns();
	while (!h->hdr_overflows && t_now_ns() - t0 < TIMEOUT_NS)
		if (read(zero, buf, sizeof(buf)) < 0)
			return run_fail(r, "read /dev/zero");
	pfm_stop(fd);
	if (!h->hdr_overflows) {
		errno = ETIMEDOUT;
		return run_fail(r, "fill the buffer");
	}
	if (read(fd, &msg, sizeof(msg)) != sizeof(msg))
		return run_fail(r, "read the message");
	r->msg_type = msg.pfm_ovfl_msg.msg_type;
	r->msg_ip = msg.pfm_ovfl_msg.msg_ovfl_ip;
	r->n = h->hdr_count;
	for (i = 0; i < r->n; i++) {
		e = (const void *)((const char *)h + sizeof(*h) +
				   i * sizeof(*e));
		if (e->ip >= KERNEL_START)
			r->kernel++;
		else if (!e->ip)
			r->zero++;
		else
			r->user++;
	}
	close(zero);
	munmap((void *)h, BUF_SIZE);
	close(fd);
}

/* in the child (t_child): as uid *@uid (0: stays root), a kip_run in @res */
static int kip_child_run(void *uid, void *res)
{
	uid_t id = *(uid_t *)uid;

	if (id && (setgroups(0, NULL) || setgid(id) || setuid(id)))
		run_fail(res, "drop to the uid");
	else
		kip_sample(res);
	return 0;
}

/* a child samples as @uid (0: stays root); false if it could not report */
static bool kip_child(uid_t uid, struct kip_run *r)
{
	memset(r, 0, sizeof(*r));
	return t_child(kip_child_run, &uid, r, sizeof(*r)) == 0;
}

/* the child's run, as "who": its samples' IPs; true if it sampled */
static bool kip_report(const char *who, uid_t uid, struct kip_run *r)
{
	char name[96];

	snprintf(name, sizeof(name), "kip: %s samples itself", who);
	if (!kip_child(uid, r))
		return t_check(false, name, "no report from the child");
	if (!t_check(!r->err && r->msg_type == PFM_MSG_OVFL, name,
		     "%s: %s, message type %d", r->step[0] ? r->step : "-",
		     strerror(r->err), r->msg_type))
		return false;
	printf("kip: %s: %llu samples: %llu kernel IPs, %llu zero, %llu user; message IP %#llx\n",
	       who, (unsigned long long)r->n, (unsigned long long)r->kernel,
	       (unsigned long long)r->zero, (unsigned long long)r->user,
	       (unsigned long long)r->msg_ip);
	return true;
}

int main(void)
{
	struct kip_run r;
	char saved[16];
	bool have_ctl;

	if (!t_root()) {
		t_skip("kip: kernel IPs", "not root: cannot switch uids");
		return t_done();
	}
	/* without the control, the default's checks still run */
	have_ctl = !t_sysfs_read(CTL, saved, sizeof(saved));
	if (!t_check(have_ctl, "kip: " CTL " exists", "%s", strerror(errno)))
		snprintf(saved, sizeof(saved), "none");
	t_check(!strcmp(saved, "0"), "kip: " CTL " is 0 by default", "%s",
		saved);
	if (have_ctl)
		t_expect_err("kip: " CTL " takes 0 or 1",
			     t_sysfs_write(CTL, "2"), EINVAL);

	if (kip_report("root", 0, &r))
		t_check(r.kernel > 0, "kip: root sees kernel IPs",
			"none in %llu samples", (unsigned long long)r.n);

	if (kip_report("uid 65534", NOBODY, &r)) {
		t_check(!r.kernel && r.msg_ip < KERNEL_START,
			"kip: an unprivileged user sees no kernel IP",
			"%llu kernel IPs in samples, message IP %#llx",
			(unsigned long long)r.kernel,
			(unsigned long long)r.msg_ip);
		/* not idle: kernel-mode samples were taken, and zeroed */
		t_check(r.zero > 0, "kip: its kernel-mode samples have IP 0",
			"no zero IP in %llu samples", (unsigned long long)r.n);
	}

	if (!have_ctl)
		return t_done();
	if (t_expect_ok("kip: set " CTL " to 1", t_sysfs_write(CTL, "1")) &&
	    kip_report("uid 65534 allowed", NOBODY, &r))
		t_check(r.kernel > 0,
			"kip: with " CTL " 1, an unprivileged user sees kernel IPs",
			"none in %llu samples", (unsigned long long)r.n);
	t_expect_ok("kip: restore " CTL, t_sysfs_write(CTL, saved));
	return t_done();
}
