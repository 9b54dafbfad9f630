// SPDX-License-Identifier: GPL-2.0
/*
 * Time-switched event sets: three sets (0, 1, 2) each with
 * PFM_SETFL_TIME_SWITCH and a 10 ms timeout, each counting VCPU_RUN_NS,
 * on a self-monitoring context that busy-loops for 600 ms. Every set
 * must run (several activations, a share of the time, a count of its
 * own), and the sets' act_duration must add up to the context's active
 * time.
 *
 * The host measures active time in its own clock, which need not run at
 * the guest's rate (on the nested TCG rig L1's clocksource is the HPET
 * while the guests' clocks follow the TSC: they differ severalfold). So
 * the reference is a one-set context, which is active exactly as long as
 * the context: over the same kind of busy loop it gives the host's active
 * time per guest CPU second, r1. Tolerance:
 *   sum of act_duration / thread CPU time within 20 % of r1
 * and each set at least 10 % of the sum, with at least 2 runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "t_common.h"

#define NSETS		3
#define TIMEOUT_NS	(10 * NSEC_PER_MSEC)
#define RUN_NS		(600 * NSEC_PER_MSEC)

static int getinfo(int fd, pfarg_setinfo_t *si)
{
	memset(si, 0, NSETS * sizeof(*si));
	for (int i = 0; i < NSETS; i++)
		si[i].set_id = i;
	return pfm_getinfo_evtsets(fd, si, NSETS);
}

/* act_duration per guest CPU ns of a one-set context (no switching) */
static double reference_rate(void)
{
	pfarg_setinfo_t si;
	uint64_t c0, c1;
	int fd = t_create(0);

	if (fd < 0 || t_load(fd, t_gettid(), 0)) {
		t_fail("sets: one-set reference context", "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return 0;
	}
	c0 = t_thread_cpu_ns();
	pfm_start(fd, NULL);
	t_busy_ns(RUN_NS / 2);
	pfm_stop(fd);
	c1 = t_thread_cpu_ns();
	memset(&si, 0, sizeof(si));
	if (pfm_getinfo_evtsets(fd, &si, 1) || c1 == c0) {
		t_fail("sets: one-set reference context", "getinfo: %s",
		       strerror(errno));
		close(fd);
		return 0;
	}
	close(fd);
	printf("sets: reference: act_duration %llu ns over %llu ns of thread CPU time\n",
	       (unsigned long long)si.set_act_duration,
	       (unsigned long long)(c1 - c0));
	return (double)si.set_act_duration / (c1 - c0);
}

int main(void)
{
	pfarg_setdesc_t sd[NSETS];
	pfarg_setinfo_t si[NSETS], si2[NSETS];
	uint64_t t0, t1, c0, c1, sum = 0, run;
	uint16_t pmd = PVPFM_VPMD_VCPU_RUN_NS;
	double ref, rate;
	char name[128];
	int fd, i;
	bool ok;

	ref = reference_rate();
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
		ok &= sd[i].set_timeout >= TIMEOUT_NS &&
		      sd[i].set_timeout < TIMEOUT_NS + 10 * NSEC_PER_MSEC;
	t_check(ok, "sets: effective timeouts returned",
		"%llu, %llu, %llu ns for 10 ms requested",
		(unsigned long long)sd[0].set_timeout,
		(unsigned long long)sd[1].set_timeout,
		(unsigned long long)sd[2].set_timeout);

	for (i = 0; i < NSETS; i++) {
		snprintf(name, sizeof(name), "sets: VCPU_RUN_NS in set %d", i);
		t_expect_ok(name, t_write_pmds(fd, &pmd, 1, i));
	}
	if (!t_expect_ok("sets: load on self", t_load(fd, t_gettid(), 0)))
		return t_done();

	t0 = t_now_ns();
	c0 = t_thread_cpu_ns();
	t_expect_ok("sets: start", pfm_start(fd, NULL));
	t_busy_ns(RUN_NS);
	t_expect_ok("sets: stop", pfm_stop(fd));
	c1 = t_thread_cpu_ns();
	t1 = t_now_ns();

	if (!t_expect_ok("sets: getinfo", getinfo(fd, si)))
		return t_done();
	for (i = 0; i < NSETS; i++)
		sum += si[i].set_act_duration;
	for (i = 0; i < NSETS; i++) {
		run = 0;
		t_read_pmd(fd, pmd, i, &run);
		printf("sets: set %d: runs %llu, act_duration %llu ns, VCPU_RUN_NS %llu ns\n",
		       i, (unsigned long long)si[i].set_runs,
		       (unsigned long long)si[i].set_act_duration,
		       (unsigned long long)run);
		snprintf(name, sizeof(name), "sets: set %d ran", i);
		t_check(si[i].set_runs >= 2 && si[i].set_act_duration >= sum / 10 &&
			run > 0, name,
			"runs %llu, act_duration %llu ns of %llu, VCPU_RUN_NS %llu",
			(unsigned long long)si[i].set_runs,
			(unsigned long long)si[i].set_act_duration,
			(unsigned long long)sum, (unsigned long long)run);
	}
	rate = (double)sum / (c1 - c0);
	t_check(ref > 0 && rate >= ref * 0.8 && rate <= ref * 1.2,
		"sets: act_duration adds up to the active time",
		"sum %llu ns over %llu ns of thread CPU time (wall %llu ns): %.3f per CPU ns, one-set context %.3f; want within 20 %%",
		(unsigned long long)sum, (unsigned long long)(c1 - c0),
		(unsigned long long)(t1 - t0), rate, ref);

	/* stopped: no set is active, nothing adds up */
	t_busy_ns(30 * NSEC_PER_MSEC);
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
	close(fd);
	return t_done();
}
