// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon2 v2.8x's per-CPU statistics, where its last versions kept
 * them: debugfs perfmon/cpuN/NAME, one u64 a file, read-only, zeroed by
 * a write to /sys/kernel/perfmon/reset_stats.
 *
 * Only what this driver does on a vCPU is counted, under v2.8x's name
 * for it. What v2.8x counted in its overflow handler, sampling formats,
 * set switches and timeouts (ovfl_intr_regular_count, fmt_handler_*,
 * set_switch_*, handle_timeout_count, ...) is done by the host here and
 * counted there (doc/ADMIN.md); those files are absent rather than
 * always 0.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/percpu.h>
#include <linux/string.h>
#include "pfm_drv.h"

static const char *const pfm_stat_names[PFM_ST_NR] = {
	[PFM_ST_OVFL_INTR_ALL_COUNT]	= "ovfl_intr_all_count",
	[PFM_ST_OVFL_INTR_NS]		= "ovfl_intr_ns",
	[PFM_ST_HANDLE_WORK_COUNT]	= "handle_work_count",
	[PFM_ST_OVFL_NOTIFY_COUNT]	= "ovfl_notify_count",
	[PFM_ST_PFM_RESTART_COUNT]	= "pfm_restart_count",
	[PFM_ST_CTXSWIN_COUNT]		= "ctxswin_count",
	[PFM_ST_CTXSWIN_NS]		= "ctxswin_ns",
	[PFM_ST_CTXSWOUT_COUNT]		= "ctxswout_count",
	[PFM_ST_CTXSWOUT_NS]		= "ctxswout_ns",
};

DEFINE_PER_CPU(struct pfm_cpu_stats, pfm_cpu_stats);

static struct dentry *pfm_stats_dir;

void pfm_stats_reset(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(&pfm_cpu_stats, cpu), 0,
		       sizeof(struct pfm_cpu_stats));
}

/*
 * debugfs failures are not the driver's: without the files perfmon2
 * works as before (debugfs' own rule, as v2.8x had it).
 */
void pfm_stats_init(void)
{
	struct dentry *cpu_dir;
	char name[16];
	int cpu, i;

	pfm_stats_dir = debugfs_create_dir("perfmon", NULL);
	for_each_possible_cpu(cpu) {
		snprintf(name, sizeof(name), "cpu%d", cpu);
		cpu_dir = debugfs_create_dir(name, pfm_stats_dir);
		for (i = 0; i < PFM_ST_NR; i++)
			debugfs_create_u64(pfm_stat_names[i], 0444, cpu_dir,
					   &per_cpu_ptr(&pfm_cpu_stats, cpu)->v[i]);
	}
}

void pfm_stats_exit(void)
{
	debugfs_remove(pfm_stats_dir);
	pfm_stats_dir = NULL;
}
