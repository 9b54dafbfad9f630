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

static void test_mediated_apart(void **state)
{
	struct snap s;
	struct causes c = { 0 };

	(void)state;
	memset(&s, 0, sizeof(s));
	/* 1 NOTAVAIL, 1 FILTERED, 2 MEDIATED registers, 1 plain EINVAL */
	s.vm.notavail = 1;
	s.vm.filtered = 1;
	s.vm.host_mediated = 2;
	s.vm.refusals[EINVAL] = 5;
	/* a load whose counter could not open for the mediated vPMU */
	s.vm.refusals[EOPNOTSUPP] = 1;
	s.vm.refusals[EBUSY] = 1;
	s.vm.stats.command_errors = 7;
	snap_for_each_cause(&s, see_cause, &c);
	assert_int_equal(c.notavail, 1);
	assert_int_equal(c.filtered, 1);
	assert_int_equal(c.mediated, 3);
	assert_int_equal(c.einval, 1);
	assert_int_equal(c.eopnotsupp, 0);
	assert_int_equal(c.ebusy, 1);
	assert_int_equal(c.sum, snap_refusals(&s));
}

/* a module before the field (zero there): no MEDIATED line at all */
static void test_no_mediated_no_line(void **state)
{
	struct snap s;
	struct causes c = { 0 };

	(void)state;
	memset(&s, 0, sizeof(s));
	s.vm.notavail = 1;
	s.vm.refusals[EINVAL] = 1;
	s.vm.stats.command_errors = 1;
	snap_for_each_cause(&s, see_cause, &c);
	assert_int_equal(c.mediated, 0);
	assert_int_equal(c.notavail, 1);
	assert_int_equal(c.sum, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mediated_apart),
		cmocka_unit_test(test_no_mediated_no_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
