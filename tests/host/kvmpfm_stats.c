// SPDX-License-Identifier: GPL-2.0
/*
 * kvmpfm-stats: KVMPFM_GET_MODULE_STATS, for leak checks.
 *
 *   kvmpfm-stats            print the module-wide counters: what it holds
 *                           now, and the work of the VMs released so far
 *   kvmpfm-stats --zero     check that the module holds nothing (no
 *                           allocation, perf event, pinned page or VM left;
 *                           the reader's own open file excepted, see
 *                           lib/stats.c); waits up to 2 s for deferred
 *                           teardown; prints a PASS/FAIL line; exit 1 if not
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hostlib.h"

int main(int argc, char **argv)
{
	struct kvmpfm_module_stats st;
	int ret;

	hl_init();
	if (argc == 2 && !strcmp(argv[1], "--zero")) {
		hl_check_module_idle("module_stats_zero");
		return t_failed ? 1 : 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: kvmpfm-stats [--zero]\n");
		return 2;
	}
	ret = hl_module_stats(&st);
	if (ret) {
		fprintf(stderr, "kvmpfm-stats: %s: %s\n", KVMPFM_DEVICE,
			hl_errname(ret));
		return 1;
	}
	printf("allocations=%" PRId64 " perf_events=%" PRId64
	       " pinned_pages=%" PRId64 " vms=%" PRId64 " overflows=%" PRIu64
	       " deferred_runs=%" PRIu64 " remote_counter_ops=%" PRIu64 "\n",
	       (int64_t)st.allocations, (int64_t)st.perf_events,
	       (int64_t)st.pinned_pages, (int64_t)st.vms,
	       (uint64_t)st.overflows, (uint64_t)st.deferred_runs,
	       (uint64_t)st.remote_counter_ops);
	return 0;
}
