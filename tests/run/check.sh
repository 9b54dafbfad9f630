#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Judge what `make run` (scripts/run.sh) printed, and pfmon's cases it
# ran in the guest (tests/run/pfmon-cases.sh, in the run's console log).
#
#   tests/run/check.sh OUTPUT [CONSOLE_LOG]
#
# CONSOLE_LOG defaults to console.log beside OUTPUT (run.sh's LOGDIR);
# tests/run/check_pfmon.py judges the cases there (python3: csv, json).
#
# What must be there, and why each bound is what it is:
# - `pfmon -l` lists the six virtual PMDs the host backs everywhere
# - counting with two time-switched sets (two -e): both sets ran (runs >
#   0), their active shares add up to the run (90-101%: the 1 ms switch
#   floor and the start/stop edges take a little), and every scaled count
#   is its raw count times run time / active time, and times enabled /
#   running where the host took counters away (within 2%: pfmon rounds)
# - the CSV every 250 ms of a 1 s run: 4 to 6 intervals of both events
# - vcpu_run_ns scaled lies within the run's time: the vCPU cannot run
#   longer than the run (plus 5% for the clocks' granularity), and the
#   workload keeps it busy at least half of it
# - the sampling profile has >= 100 samples of the workload and its three
#   busy functions (crunch_primes, hash_buffer, trap_cpuid: a quarter of the
#   time each, see guest/tools/workload.c) each get >= 5% of the samples:
#   the samples' IPs are the guest's, resolved against the workload's ELF;
#   some resolve into libc (the workload's system calls go through it)
#   and into guest kernel functions, and no unresolved kernel line is
#   above 2%
# Prints PASS/FAIL lines; exit status 1 on a failure.
set -u
# rig_awk_judge: the PASS/FAIL lines
# shellcheck source=tests/rig/protocol.sh
. "$(dirname "$0")/../rig/protocol.sh"
awk -v what=run "$(rig_awk_judge)"'
function num(s) { gsub(/,/, "", s); return s + 0 }
/^  (vcpu_run_ns|vm_exits|halt_exits|host_preempt|steal_ns|host_page_faults) +PMD2[0-9][0-9]/ { listed++ }
# which command printed what follows
/^\$ pfmon / { sets_run = / --switch-timeout /; csv_run = / -I 250 -x , / }
sets_run && /^set [0-9]+: [0-9]+ runs, active / {
	cur = $2 + 0
	runs[cur] = $3 + 0
	active[cur] = num($6)
	total = num($9)
	nsets++
}
sets_run && /^ +[0-9,]+ [A-Za-z_:0-9]+ +\(raw [0-9,]+; set [0-9.]+%; host ([0-9.]+%|-)\)( \[emulated\])?$/ {
	v = num($1); r = $4; sub(/;$/, "", r); r = num(r)
	host = $8; sub(/%\)$/, "", host); sub(/\)$/, "", host)
	nscaled++
	want = active[cur] > 0 ? r * total / active[cur] : -1
	if (host != "-" && host + 0 > 0 && host + 0 < 100)
		want = want * 100 / host
	if (want < 0 || v < want * 0.98 - 1 || v > want * 1.02 + 1)
		badscale = badscale " " $2 "(set " cur ": " v " for raw " r ")"
	if ($2 == "vcpu_run_ns")
		run_ns = v
}
csv_run && /^[0-9.]+,task,0,vcpu_run_ns,[0-9]+,/ { csv_ivals++ }
csv_run && /^[0-9.]+,task,0,vm_exits,[0-9]+,/ { csv_exits++ }
/^sampling profile of .*workload: [0-9]+ samples/ {
	for (i = 1; i <= NF; i++)
		if ($i == "samples,")
			samples = $(i - 1) + 0
}
samples && /^ +[0-9]+ +[0-9.]+% +[a-z_]+$/ {
	pct[$3] = $2 + 0
}
samples && /^ +[0-9]+ +[0-9.]+% +[^ ]+ \[libc\.so\.6\]$/ { libc += $1 }
samples && /^ +[0-9]+ +[0-9.]+% +[^ ]+ \[kernel\]$/ { kern += $1 }
samples && /^ +[0-9]+ +[0-9.]+% +\[guest kernel: no symbols\]$/ { unres = $2 + 0 }
/===PFMON-END rc=0===|^==> .*done/ { done = 1 }
END {
	judge(listed == 6, "pfmon -l lists the 6 virtual PMDs", listed + 0 " listed")
	judge(nsets == 2 && runs[0] > 0 && runs[1] > 0, "two sets, both ran",
	      nsets + 0 " sets, runs " runs[0] + 0 "/" runs[1] + 0)
	share = total > 0 ? (active[0] + active[1]) / total : 0
	judge(share >= 0.90 && share <= 1.01,
	      sprintf("active time of the sets adds up (%.1f%% of the run)", share * 100),
	      sprintf("%.1f%% of %s ms", share * 100, total))
	judge(nscaled >= 4 && badscale == "", "counts scaled by run/active time (" nscaled + 0 " counts)",
	      nscaled + 0 " counts;" badscale)
	judge(run_ns >= total * 1e6 * 0.5 && run_ns <= total * 1e6 * 1.05,
	      sprintf("vcpu_run_ns %.0f ms within the run of %s ms", run_ns / 1e6, total),
	      sprintf("%.0f ms for a run of %s ms", run_ns / 1e6, total))
	judge(csv_ivals >= 4 && csv_ivals <= 6 && csv_exits == csv_ivals,
	      "-I 250 -x , on a 1 s run: " csv_ivals + 0 " CSV intervals",
	      csv_ivals + 0 " vcpu_run_ns rows, " csv_exits + 0 " vm_exits rows")
	judge(samples >= 100, "sampling profile: " samples + 0 " samples", samples + 0 " samples")
	judge(libc > 0, "profile: " libc + 0 " samples resolved into libc functions (libdwfl, the task map)",
	      "no libc.so.6 line")
	judge(kern > 0, "profile: " kern + 0 " samples resolved into guest kernel functions (kallsyms)",
	      "no [kernel] line")
	judge(unres <= 2, "profile: unresolved guest kernel " unres + 0 "% <= 2%", unres "%")
	n = split("crunch_primes hash_buffer trap_cpuid", f, " ")
	for (i = 1; i <= n; i++)
		judge(pct[f[i]] >= 5, "profile: " f[i] " " pct[f[i]] + 0 "% >= 5%",
		      pct[f[i]] + 0 "% of the samples")
	verdict()
}' "${1:--}"
rc=$?
here=$(cd "$(dirname "$0")" && pwd)
console=${2:-$(dirname "${1:-.}")/console.log}
if [ ! -f "$console" ]; then
	rig_check 1 "pfmon: no console log $console" "the cases' output"
	exit 1
fi
python3 "$here/check_pfmon.py" "$console" "$here/../../guest/tools/pfmon_cli.c" || rc=1

# The profile as other tools read it (run.sh keeps them beside the log):
# flamegraph.pl drew the folded stacks, every sample in them and the hot
# functions named; speedscope imported the perf script text.
logdir=$(dirname "$console")
samples=$(sed -n 's/^sampling profile of .*workload: \([0-9]*\) samples.*/\1/p' "${1:--}" | tail -n1)
folded=$(awk '{ n += $NF } END { print n + 0 }' "$logdir/workload.folded" 2>/dev/null)
[ -n "$samples" ] && [ "$folded" = "$samples" ]
rig_check $? "folded stacks: $folded samples, the profile's $samples" "$logdir/workload.folded"
svg_ok=1
for f in crunch_primes hash_buffer trap_cpuid; do
	grep -q "<title>$f ([0-9,]* samples, " "$logdir/workload.svg" 2>/dev/null || svg_ok=0
done
rig_check $((1 - svg_ok)) "flame graph (flamegraph.pl): $logdir/workload.svg names crunch_primes, hash_buffer, trap_cpuid" \
	"$(ls -l "$logdir/workload.svg" 2>&1)"
title=$("$here/speedscope.sh" "$logdir/workload.perf-script" 2>&1)
case "$title" in
*" - speedscope") imported=0 ;;
*) imported=1 ;;
esac
rig_check $imported "perf script text imported by speedscope (page title '$title')" \
	"speedscope names the page after a profile it read"
rig_summary "profile formats"
[ "${rig_failed:-0}" = 0 ] || rc=1
exit "$rc"
