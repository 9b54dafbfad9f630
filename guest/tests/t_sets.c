// SPDX-License-Identifier: GPL-2.0
/*
 * Time-switched event sets: three sets (0, 1, 2) each with
 * PFM_SETFL_TIME_SWITCH and a 10 ms timeout, each counting VCPU_RUN_NS and
 * STEAL_NS, on a self-monitoring context that busy-loops for 600 ms.
 * Every set must run (several activations, a share of the time, a count
 * of its own) and the sets' act_duration must add up to the context's
 * active time.
 *
 * A self-monitoring context is active while it is started and its thread
 * runs: its active time is the thread's CPU time between pfm_start and
 * pfm_stop. Tolerance: the sum of act_duration within 20 % + 2 ms of it.
 *
 * The host measures in its clock, the guest in its own. A control runs
 * first: a one-set context (no switching) over the same busy loop, whose
 * act_duration must match the thread's CPU time within the same
 * tolerance. If it does not, the clocks of this machine disagree (it
 * happens on a loaded nested TCG rig) and the comparison is skipped, not
 * failed: the control, unlike the sets, has no switching to blame.
 * VCPU_RUN_NS + STEAL_NS per set (the host's run-time clock) is printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "t_common.h"

#define NSETS		3
#define TIMEOUT_NS	(10 * MS)

/*
 * perfmon2: a timeout is a multiple of the timer's resolution, which the
 * device publishes; another is refused (EINVAL), not rounded
 */
static void timeout_resolution(int fd)
{
	long long res = t_sysfs_num("device/set_timeout_res_ns", -1);
	pfarg_setdesc_t sd;

	if (!t_check(res > 0 && TIMEOUT_NS % res == 0,
		     "sets: device/set_timeout_res_ns divides 10 ms", "%lld",
		     res))
		return;
	memset(&sd, 0, sizeof(sd));
	sd.set_id = 9;
	sd.set_flags = PFM_SETFL_TIME_SWITCH;
	sd.set_timeout = TIMEOUT_NS + res / 2;
	t_expect_err("sets: a timeout between two multiples: EINVAL",
		     pfm_create_evtsets(fd, &sd, 1), EINVAL);
	t_check(sd.set_timeout == TIMEOUT_NS + res / 2,
		"sets: a refused timeout is not rewritten", "%llu",
		(unsigned long long)sd.set_timeout);
}
#define BUSY_NS		(600 * MS)
#define SLACK_NS	(2 * MS)

static int getinfo(int fd, pfarg_setinfo_t *si)
{
	memset(si, 0, NSETS * sizeof(*si));
	for (int i = 0; i < NSETS; i++)
		si[i].set_id = i;
	return pfm_getinfo_evtsets(fd, si, NSETS);
}

/* VCPU_RUN_NS + STEAL_NS of @set */
static uint64_t host_time(int fd, uint16_t set)
{
	uint64_t run = 0, steal = 0;

	t_read_pmd(fd, PVPFM_VPMD_VCPU_RUN_NS, set, &run);
	t_read_pmd(fd, PVPFM_VPMD_STEAL_NS, set, &steal);
	return run + steal;
}

static bool within(uint64_t val, uint64_t ref)
{
	uint64_t diff = val > ref ? val - ref : ref - val;

	return diff <= ref / 5 + SLACK_NS;
}

/*
 * The control: a context with set 0 only. Its act_duration and the
 * thread's CPU time agree, or the clocks do not.
 */
static bool clocks_agree(const uint16_t *pmds, char *why, size_t size)
{
	pfarg_setinfo_t si;
	uint64_t c0, c1;
	int fd = t_create(0);

	if (fd < 0 || t_write_pmds(fd, pmds, 2, 0) ||
	    t_load(fd, t_gettid(), 0)) {
		snprintf(why, size, "control context: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	c0 = t_thread_cpu_ns();
	pfm_start(fd, NULL);
	t_busy_ns(BUSY_NS / 2);
	pfm_stop(fd);
	c1 = t_thread_cpu_ns();
	memset(&si, 0, sizeof(si));
	pfm_getinfo_evtsets(fd, &si, 1);
	printf("sets: control, one set: act_duration %llu ns, VCPU_RUN_NS + STEAL_NS %llu ns, thread CPU time %llu ns\n",
	       (unsigned long long)si.set_act_duration,
	       (unsigned long long)host_time(fd, 0),
	       (unsigned long long)(c1 - c0));
	close(fd);
	snprintf(why, size,
		 "the host's and the guest's clocks disagree here: a one-set context's act_duration is %llu ns for %llu ns of thread CPU time",
		 (unsigned long long)si.set_act_duration,
		 (unsigned long long)(c1 - c0));
	return within(si.set_act_duration, c1 - c0);
}

/* v2.8x: defining a set that ran again starts it afresh */
static void redefine(int fd)
{
	pfarg_setdesc_t sd;
	pfarg_setinfo_t si;

	memset(&sd, 0, sizeof(sd));
	sd.set_id = 1;
	sd.set_flags = PFM_SETFL_TIME_SWITCH;
	sd.set_timeout = TIMEOUT_NS;
	if (!t_expect_ok("sets: define set 1 again",
			 pfm_create_evtsets(fd, &sd, 1)))
		return;
	memset(&si, 0, sizeof(si));
	si.set_id = 1;
	if (t_expect_ok("sets: getinfo set 1", pfm_getinfo_evtsets(fd, &si, 1)))
		t_check(si.set_runs == 0 && si.set_act_duration == 0,
			"sets: set 1 defined again: no runs, no active time",
			"runs %llu, act_duration %llu ns",
			(unsigned long long)si.set_runs,
			(unsigned long long)si.set_act_duration);
}

int main(void)
{
	const uint16_t pmds[] = { PVPFM_VPMD_VCPU_RUN_NS, PVPFM_VPMD_STEAL_NS };
	pfarg_setinfo_t si[NSETS], si2[NSETS];
	uint64_t t0, t1, c0, c1, sum = 0, host;
	pfarg_setdesc_t sd[NSETS];
	char name[128], why[256];
	bool ok, agree;
	int fd, i;

	agree = clocks_agree(pmds, why, sizeof(why));
	fd = t_create(0);
	if (!t_expect_ok("sets: create", fd))
		return t_done();

	memset(sd, 0, sizeof(sd));
	for (i = 0; i < NSETS; i++) {
		sd[i].set_id = i;
		sd[i].set_flags = PFM_SETFL_TIME_SWITCH;
		sd[i].set_timeout = TIMEOUT_NS;
	}
	if (!t_expect_ok("sets: create sets 0, 1, 2 with a 10 ms timeout",
			 pfm_create_evtsets(fd, sd, NSETS)))
		return t_done();
	ok = true;
	for (i = 0; i < NSETS; i++)
		ok &= sd[i].set_timeout == TIMEOUT_NS;
	t_check(ok, "sets: the timeouts are taken as they are",
		"%llu, %llu, %llu ns for 10 ms requested",
		(unsigned long long)sd[0].set_timeout,
		(unsigned long long)sd[1].set_timeout,
		(unsigned long long)sd[2].set_timeout);
	timeout_resolution(fd);

	for (i = 0; i < NSETS; i++) {
		snprintf(name, sizeof(name), "sets: VCPU_RUN_NS, STEAL_NS in set %d", i);
		t_expect_ok(name, t_write_pmds(fd, pmds, 2, i));
	}
	if (!t_expect_ok("sets: load on self", t_load(fd, t_gettid(), 0)))
		return t_done();

	t0 = t_now_ns();
	c0 = t_thread_cpu_ns();
	t_expect_ok("sets: start", pfm_start(fd, NULL));
	t_busy_ns(BUSY_NS);
	t_expect_ok("sets: stop", pfm_stop(fd));
	c1 = t_thread_cpu_ns();
	t1 = t_now_ns();

	if (!t_expect_ok("sets: getinfo", getinfo(fd, si)))
		return t_done();
	for (i = 0; i < NSETS; i++)
		sum += si[i].set_act_duration;
	for (i = 0; i < NSETS; i++) {
		host = host_time(fd, i);
		printf("sets: set %d: runs %llu, act_duration %llu ns, VCPU_RUN_NS + STEAL_NS %llu ns\n",
		       i, (unsigned long long)si[i].set_runs,
		       (unsigned long long)si[i].set_act_duration,
		       (unsigned long long)host);
		snprintf(name, sizeof(name), "sets: set %d ran", i);
		t_check(si[i].set_runs >= 2 && si[i].set_act_duration >= sum / 10 &&
			host > 0, name,
			"runs %llu, act_duration %llu ns of %llu, VCPU_RUN_NS + STEAL_NS %llu",
			(unsigned long long)si[i].set_runs,
			(unsigned long long)si[i].set_act_duration,
			(unsigned long long)sum, (unsigned long long)host);
	}
	printf("sets: act_duration sum %llu ns; thread CPU time %llu ns, wall %llu ns (guest clocks)\n",
	       (unsigned long long)sum, (unsigned long long)(c1 - c0),
	       (unsigned long long)(t1 - t0));
	if (!agree)
		t_skip("sets: act_duration adds up to the active time", "%s", why);
	else
		t_check(within(sum, c1 - c0),
			"sets: act_duration adds up to the active time",
			"sum %llu ns for %llu ns of thread CPU time between start and stop; want within 20 %% + 2 ms",
			(unsigned long long)sum, (unsigned long long)(c1 - c0));

	/* stopped: no set is active, nothing adds up */
	t_busy_ns(30 * MS);
	getinfo(fd, si2);
	ok = true;
	for (i = 0; i < NSETS; i++)
		ok &= si2[i].set_act_duration == si[i].set_act_duration &&
		      si2[i].set_runs == si[i].set_runs;
	t_check(ok, "sets: no active time while stopped",
		"set 0: %llu -> %llu ns",
		(unsigned long long)si[0].set_act_duration,
		(unsigned long long)si2[0].set_act_duration);

	t_expect_ok("sets: unload", pfm_unload_context(fd));
	sd[0].set_id = 2;
	t_expect_ok("sets: delete set 2", pfm_delete_evtsets(fd, sd, 1));
	sd[0].set_id = 2;
	t_expect_err("sets: delete set 2 again: EINVAL",
		     pfm_delete_evtsets(fd, sd, 1), EINVAL);
	redefine(fd);
	close(fd);
	return t_done();
}
