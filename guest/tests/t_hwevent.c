// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware events on a real PMC: cycles with USR, OS, INT and EN
 * (amd64 PERFSEL0 = 0x76; intel_arch IA32_PERFEVTSEL0 = 0x3c, unhalted
 * core cycles). A host that cannot back it (no PMU, as in the nested CI
 * rig) refuses the entry with PFM_REG_RETFL_NOTAVAIL and EINVAL, never
 * counting it as zero; a host that can (a PMU, or an admin event map
 * aliasing it) accepts it and the counter counts. An alias the map marks
 * emulated comes back with PVPFM_REG_RETFL_EMULATED on its entry.
 *
 * What to expect: PVPFM_EXPECT_HW in the environment:
 *   notavail  cycles refused (a host without a PMU and without a map)
 *   accepted  cycles accepted, not emulated (a host with a PMU)
 *   aliased   cycles accepted and emulated (the rig's event map aliases
 *             cycles to task-clock), retired instructions still refused
 *   auto      (or unset) either outcome passes if it is consistent, and
 *             the line says which was seen
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
#define EVTSEL_ON	(EVTSEL_USR | EVTSEL_OS | EVTSEL_INT | EVTSEL_EN)

/* the two events, by personality: cycles, retired instructions */
static const struct {
	const char *model;
	unsigned int cycles, instructions;
} encodings[] = {
	{ "amd64", 0x76, 0xc0 },
	{ "intel_arch", 0x3c, 0xc0 },
};

/* PMC0 = @event on a new context: the call's errno (0) and the entry */
static int write_pmc0(int fd, uint64_t event, pfarg_pmc_t *pc)
{
	memset(pc, 0, sizeof(*pc));
	pc->reg_num = 0;
	pc->reg_value = event;
	return pfm_write_pmcs(fd, pc, 1) ? errno : 0;
}

static void expect_notavail(const char *name, int err, const pfarg_pmc_t *pc)
{
	t_check(err == EINVAL &&
		(pc->reg_flags & PFM_REG_RETFL_MASK) == PFM_REG_RETFL_NOTAVAIL,
		name, "errno %s, flags %#x", err ? strerrorname_np(err) : "0",
		pc->reg_flags);
}

/*
 * Cycles were accepted: they must count, and for @expect "aliased" or
 * "accepted" be marked emulated or not.
 */
static void cycles_count(int fd, const pfarg_pmc_t *pc, const char *expect)
{
	bool emulated = pc->reg_flags & PVPFM_REG_RETFL_EMULATED;
	uint64_t count = 0;
	pfarg_pmd_t pd;

	if (!strcmp(expect, "aliased"))
		t_check(emulated, "hwevent: cycles marked emulated",
			"flags %#x", pc->reg_flags);
	else if (!strcmp(expect, "accepted"))
		t_check(!emulated, "hwevent: cycles not marked emulated",
			"flags %#x", pc->reg_flags);
	memset(&pd, 0, sizeof(pd));
	pd.reg_num = 0;
	if (!t_expect_ok("hwevent: write PMD0", pfm_write_pmds(fd, &pd, 1)) ||
	    !t_expect_ok("hwevent: load on self", t_load(fd, t_gettid(), 0)) ||
	    !t_expect_ok("hwevent: start", pfm_start(fd, NULL)))
		return;
	t_busy_ns(50 * MS);
	pfm_stop(fd);
	t_read_pmd(fd, 0, 0, &count);
	t_check(count > 0, "hwevent: cycles accepted and counting",
		"PMD0 = %llu after 50 ms busy", (unsigned long long)count);
}

int main(void)
{
	const char *expect = getenv("PVPFM_EXPECT_HW");
	unsigned int i, n = sizeof(encodings) / sizeof(encodings[0]);
	uint64_t cycles, instructions;
	pfarg_pmc_t pc;
	char model[64];
	int fd, err;

	if (!expect || !*expect)
		expect = "auto";
	if (strcmp(expect, "auto") && strcmp(expect, "notavail") &&
	    strcmp(expect, "accepted") && strcmp(expect, "aliased")) {
		t_fail("hwevent: PVPFM_EXPECT_HW",
		       "'%s': want notavail, accepted, aliased or auto", expect);
		return t_done();
	}
	if (!t_pmu_model(model, sizeof(model))) {
		t_fail("hwevent: pmu_desc/model", "%s", strerror(errno));
		return t_done();
	}
	for (i = 0; i < n && strncmp(model, encodings[i].model,
				     strlen(encodings[i].model)); i++)
		;
	if (i == n) {
		t_skip("hwevent: cycles on PMC0", "no cycles encoding for model %s",
		       model);
		return t_done();
	}
	cycles = encodings[i].cycles | EVTSEL_ON;
	instructions = encodings[i].instructions | EVTSEL_ON;

	if (!strcmp(expect, "aliased")) {
		fd = t_create(0);
		if (!t_expect_ok("hwevent: create", fd))
			return t_done();
		err = write_pmc0(fd, instructions, &pc);
		expect_notavail("hwevent: unaliased instructions refused with "
				"PFM_REG_RETFL_NOTAVAIL", err, &pc);
		close(fd);
	}

	fd = t_create(0);
	if (!t_expect_ok("hwevent: create", fd))
		return t_done();
	err = write_pmc0(fd, cycles, &pc);
	if (err) {
		printf("hwevent: %s PMC0 = %#llx refused: errno %s, flags %#x\n",
		       model, (unsigned long long)cycles, strerrorname_np(err),
		       pc.reg_flags);
		if (!strcmp(expect, "accepted") || !strcmp(expect, "aliased"))
			t_fail("hwevent: cycles accepted (host event map or PMU)",
			       "refused: errno %s, flags %#x",
			       strerrorname_np(err), pc.reg_flags);
		else
			expect_notavail("hwevent: cycles refused with "
					"PFM_REG_RETFL_NOTAVAIL", err, &pc);
		close(fd);
		return t_done();
	}

	printf("hwevent: %s PMC0 = %#llx accepted (features %s, flags %#x)\n",
	       model, (unsigned long long)cycles,
	       t_sysfs_num("device/features", 0) & PVPFM_F_EVENT_MAP ?
	       "with an event map" : "without an event map", pc.reg_flags);
	if (!strcmp(expect, "notavail"))
		t_fail("hwevent: cycles refused with PFM_REG_RETFL_NOTAVAIL",
		       "accepted");
	else
		cycles_count(fd, &pc, expect);
	close(fd);
	return t_done();
}
