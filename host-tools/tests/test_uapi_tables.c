// SPDX-License-Identifier: GPL-2.0
/*
 * The device ABI's tables that the host tools, pfmon and the module all
 * walk (include/uapi/pv_perfmon.h): every virtual PMD number has a whole
 * row, no name twice, nothing past the end; the PERFEVTSEL fields are the
 * bits the hardware and the module's raw events use.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "include/uapi/pv_perfmon.h"

static void test_vpmd_rows(void **state)
{
	unsigned int n, m, i;

	(void)state;
	assert_int_equal(PVPFM_VPMD_COUNT, PVPFM_VPMD_END - PFM_FIRST_SW_PMD);
	assert_int_equal(PVPFM_VPMD_VCPU_RUN_NS, PFM_FIRST_SW_PMD);
	for (n = PFM_FIRST_SW_PMD; n < PVPFM_VPMD_END; n++) {
		const struct pvpfm_vpmd_desc *d = pvpfm_vpmd_desc(n);

		assert_non_null(d);
		assert_non_null(d->label);
		assert_non_null(d->name);
		assert_non_null(d->unit);
		assert_non_null(d->what);
		assert_true(!strcmp(d->unit, "ns") ||
			    !strcmp(d->unit, "events"));
		assert_true(d->what[0]);
		/* the guest tools' name is the label in lower case */
		assert_int_equal(strlen(d->name), strlen(d->label));
		for (i = 0; d->name[i]; i++)
			assert_int_equal(d->name[i], tolower(d->label[i]));
		assert_string_equal(pvpfm_vpmd_name(n), d->label);
		for (m = PFM_FIRST_SW_PMD; m < n; m++)
			assert_string_not_equal(pvpfm_vpmd_desc(m)->name,
						d->name);
	}
	assert_null(pvpfm_vpmd_desc(PFM_FIRST_SW_PMD - 1));
	assert_null(pvpfm_vpmd_desc(PVPFM_VPMD_END));
	assert_null(pvpfm_vpmd_name(PVPFM_VPMD_END));
}

/* as the Intel SDM and AMD's APM number them */
static void test_evtsel_fields(void **state)
{
	(void)state;
	assert_int_equal(PVPFM_EVTSEL_USR, 1ULL << 16);
	assert_int_equal(PVPFM_EVTSEL_OS, 1ULL << 17);
	assert_int_equal(PVPFM_EVTSEL_EDGE, 1ULL << 18);
	assert_int_equal(PVPFM_EVTSEL_INT, 1ULL << 20);
	assert_int_equal(PVPFM_EVTSEL_EN, 1ULL << 22);
	assert_int_equal(PVPFM_EVTSEL_INV, 1ULL << 23);
	assert_int_equal(PVPFM_EVTSEL_UMASK >> PVPFM_EVTSEL_UMASK_SHIFT, 0xff);
	assert_int_equal(PVPFM_EVTSEL_CMASK >> PVPFM_EVTSEL_CMASK_SHIFT, 0xff);
	assert_int_equal(PVPFM_EVTSEL_AMD_EXT >> PVPFM_EVTSEL_AMD_EXT_SHIFT,
			 0xf);
	/* a raw event: all but the levels, INT and EN; the two apart */
	assert_int_equal(PVPFM_EVTSEL_ENCODING, 0xfff84ffffULL);
	assert_int_equal(PVPFM_EVTSEL_CONTROL, 0x530000ULL);
	assert_int_equal(PVPFM_EVTSEL_ENCODING & PVPFM_EVTSEL_CONTROL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vpmd_rows),
		cmocka_unit_test(test_evtsel_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
