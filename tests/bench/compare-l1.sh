#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bench's per-call, per-switch and per-sample figures of two rig runs
# side by side: the bench stage's one-CPU L1 and its two-CPU L1, where a
# kworker or a cross-CPU call per call or sample would show as exits of
# its own.
#
#   tests/bench/compare-l1.sh ONE_CPU_BENCH_TXT TWO_CPU_BENCH_TXT
#
# Prints a line a figure, "L1-SMP name: 1 CPU X, 2 CPUs Y unit", and
# what L1 did over each whole L2 run (host.*, from l1-cost.sh: deferred
# runs per overflow delivered, counter operations from outside their
# vCPU thread); each run is judged by check.sh, not here.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: compare-l1.sh ONE_CPU_BENCH_TXT TWO_CPU_BENCH_TXT" >&2; exit 2; }
awk '
FNR == 1 { run++ }
$1 == "BENCH" && ($2 ~ /\.exits_per_call$/ || $2 ~ /\.exits_per_sample$/ ||
		  $2 ~ /switch_cmds_per_ctx_switch$/ ||
		  $2 ~ /guest_irqs_per_sample$/) {
	if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 }
	v[run, $2] = $3; unit[$2] = $4
}
$1 == "BENCH-HOST" && $2 ~ /^(overflows|deferred_runs|remote_counter_ops)$/ {
	h[run, $2] = $3
}
END {
	for (r = 1; r <= 2; r++) {
		if ((r, "overflows") in h && h[r, "overflows"] > 0)
			v[r, "host.deferred_runs_per_overflow"] = sprintf("%.2f",
				h[r, "deferred_runs"] / h[r, "overflows"])
		if ((r, "remote_counter_ops") in h)
			v[r, "host.remote_counter_ops"] = h[r, "remote_counter_ops"]
	}
	order[++n] = "host.deferred_runs_per_overflow"; unit[order[n]] = "runs/overflow"
	order[++n] = "host.remote_counter_ops"; unit[order[n]] = "ops"
	for (i = 1; i <= n; i++) {
		k = order[i]
		printf "L1-SMP %s: 1 CPU %s, 2 CPUs %s %s\n", k,
		       ((1, k) in v) ? v[1, k] : "-", ((2, k) in v) ? v[2, k] : "-",
		       unit[k]
	}
}' "$1" "$2"
