// SPDX-License-Identifier: GPL-2.0
/*
 * snap_for_each_cause: failed calls by cause, as kvm-perfmon-stat and
 * the exporter's refused_total show them. Calls that failed because a VM
 * with KVM's mediated vPMU held the host's PMU (registers refused, and
 * EOPNOTSUPP when a counter could not open) are MEDIATED, not EINVAL or
 * EOPNOTSUPP, and every cause still adds up to the failed calls.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "snapshot.h"

struct causes {
	uint64_t notavail, filtered, mediated, einval, eopnotsupp, ebusy;
	uint64_t sum;
};

static void see_cause(const char *cause, uint64_t n, void *arg)
{
	struct causes *c = arg;

	c->sum += n;
	if (!strcmp(cause, "NOTAVAIL"))
		c->notavail += n;
	else if (!strcmp(cause, "FILTERED"))
		c->filtered += n;
	else if (!strcmp(cause, "MEDIATED"))
		c->mediated += n;
	else if (!strcmp(cause, "EINVAL"))
		c->einval += n;
	else if (!strcmp(cause, "EOPNOTSUPP"))
		c->eopnotsupp += n;
	else if (!strcmp(cause, "EBUSY"))
		c->ebusy += n;
	else
		fail_msg("unexpected cause %s", cause);
}

/* every cause snap_for_each_cause reports for @s, and their sum, as @want */
static void assert_causes(const struct snap *s, struct causes want)
{
	struct causes c = { 0 };

	snap_for_each_cause(s, see_cause, &c);
	assert_int_equal(c.notavail, want.notavail);
	assert_int_equal(c.filtered, want.filtered);
	assert_int_equal(c.mediated, want.mediated);
	assert_int_equal(c.einval, want.einval);
	assert_int_equal(c.eopnotsupp, want.eopnotsupp);
	assert_int_equal(c.ebusy, want.ebusy);
	assert_int_equal(c.sum, want.sum);
}

static void test_mediated_apart(void **state)
{
	/* 1 NOTAVAIL, 1 FILTERED, 2 MEDIATED registers, 1 plain EINVAL */
	static const struct snap s = { .vm = {
		.notavail = 1,
		.filtered = 1,
		.host_mediated = 2,
		.refusals = {
			[EINVAL] = 5,
			/* a counter that could not open: mediated vPMU */
			[EOPNOTSUPP] = 1,
			[EBUSY] = 1,
		},
		.stats.command_errors = 7,
	} };

	(void)state;
	assert_causes(&s, (struct causes){
		.notavail = 1, .filtered = 1, .mediated = 3, .einval = 1,
		.eopnotsupp = 0, .ebusy = 1, .sum = snap_refusals(&s) });
}

/* a module before the field (zero there): no MEDIATED line at all */
static void test_no_mediated_no_line(void **state)
{
	static const struct snap s = { .vm = {
		.notavail = 1,
		.refusals = { [EINVAL] = 1 },
		.stats.command_errors = 1,
	} };

	(void)state;
	assert_causes(&s, (struct causes){ .notavail = 1, .sum = 1 });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mediated_apart),
		cmocka_unit_test(test_no_mediated_no_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
