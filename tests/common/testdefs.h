/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names the test programs share (tests/host, guest/tests, tests/bench):
 * time in nanoseconds, and the virtual PMDs by short name. Include it
 * after pv_perfmon.h (include/uapi/ on the host, perfmon/ in a guest),
 * which defines the PVPFM_VPMD_* numbers.
 */
#ifndef TESTS_COMMON_TESTDEFS_H
#define TESTS_COMMON_TESTDEFS_H

#define US			1000ULL
#define MS			1000000ULL
#define SEC			1000000000ULL

#define RUN_NS			PVPFM_VPMD_VCPU_RUN_NS
#define VM_EXITS		PVPFM_VPMD_VM_EXITS
#define HALT_EXITS		PVPFM_VPMD_HALT_EXITS
#define HOST_PAGE_FAULTS	PVPFM_VPMD_HOST_PAGE_FAULTS

#endif /* TESTS_COMMON_TESTDEFS_H */
