// SPDX-License-Identifier: GPL-2.0
/*
 * A hardware event on a real PMC: cycles with USR, OS, INT and EN
 * (amd64 PERFSEL0 = 0x76; intel_arch IA32_PERFEVTSEL0 = 0x3c, unhalted
 * core cycles). A host that cannot back it (no PMU, as in the nested CI
 * rig) refuses the entry with PFM_REG_RETFL_NOTAVAIL and EINVAL, never
 * counting it as zero; a host that can (a PMU, or an admin event map
 * aliasing it) accepts it and the counter counts.
 *
 * Which one to expect: PVPFM_EXPECT_HW=notavail|accepted in the
 * environment; unset or "auto", either outcome passes if it is
 * consistent (and the line says which was seen).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t_common.h"

#define EVTSEL_USR	(1ULL << 16)
#define EVTSEL_OS	(1ULL << 17)
#define EVTSEL_INT	(1ULL << 20)
#define EVTSEL_EN	(1ULL << 22)

int main(void)
{
	const char *expect = getenv("PVPFM_EXPECT_HW");
	uint64_t event, count = 0;
	pfarg_pmc_t pc[1];
	pfarg_pmd_t pd;
	char model[64];
	int fd, ret, err;

	if (!expect || !*expect)
		expect = "auto";
	if (strcmp(expect, "auto") && strcmp(expect, "notavail") &&
	    strcmp(expect, "accepted")) {
		t_fail("hwevent: PVPFM_EXPECT_HW", "'%s': want notavail, accepted or auto",
		       expect);
		return t_done();
	}
	if (!t_pmu_model(model, sizeof(model))) {
		t_fail("hwevent: pmu_desc/model", "%s", strerror(errno));
		return t_done();
	}
	if (!strncmp(model, "amd64", 5)) {
		event = 0x76;
	} else if (!strcmp(model, "intel_arch")) {
		event = 0x3c;
	} else {
		t_skip("hwevent: cycles on PMC0", "no cycles encoding for model %s",
		       model);
		return t_done();
	}
	event |= EVTSEL_USR | EVTSEL_OS | EVTSEL_INT | EVTSEL_EN;

	fd = t_create(0);
	if (!t_expect_ok("hwevent: create", fd))
		return t_done();
	memset(pc, 0, sizeof(pc));
	pc[0].reg_num = 0;
	pc[0].reg_value = event;
	ret = pfm_write_pmcs(fd, pc, 1);
	err = errno;

	if (ret) {
		printf("hwevent: %s PMC0 = %#llx refused: errno %s, flags %#x\n",
		       model, (unsigned long long)event, strerrorname_np(err),
		       pc[0].reg_flags);
		if (!strcmp(expect, "accepted")) {
			t_fail("hwevent: cycles accepted (host event map or PMU)",
			       "refused: errno %s, flags %#x",
			       strerrorname_np(err), pc[0].reg_flags);
		} else {
			t_check(err == EINVAL &&
				(pc[0].reg_flags & PFM_REG_RETFL_MASK) ==
				PFM_REG_RETFL_NOTAVAIL,
				"hwevent: cycles refused with PFM_REG_RETFL_NOTAVAIL",
				"errno %s, flags %#x", strerrorname_np(err),
				pc[0].reg_flags);
		}
		close(fd);
		return t_done();
	}

	printf("hwevent: %s PMC0 = %#llx accepted (features %s)\n", model,
	       (unsigned long long)event,
	       t_sysfs_num("device/features", 0) & PVPFM_F_EVENT_MAP ?
	       "with an event map" : "without an event map");
	if (!strcmp(expect, "notavail")) {
		t_fail("hwevent: cycles refused with PFM_REG_RETFL_NOTAVAIL",
		       "accepted");
		close(fd);
		return t_done();
	}
	memset(&pd, 0, sizeof(pd));
	pd.reg_num = 0;
	if (!t_expect_ok("hwevent: write PMD0", pfm_write_pmds(fd, &pd, 1)) ||
	    !t_expect_ok("hwevent: load on self", t_load(fd, t_gettid(), 0)) ||
	    !t_expect_ok("hwevent: start", pfm_start(fd, NULL))) {
		close(fd);
		return t_done();
	}
	t_busy_ns(50 * NSEC_PER_MSEC);
	pfm_stop(fd);
	t_read_pmd(fd, 0, 0, &count);
	t_check(count > 0, "hwevent: cycles accepted and counting",
		"PMD0 = %llu after 50 ms busy", (unsigned long long)count);
	close(fd);
	return t_done();
}
