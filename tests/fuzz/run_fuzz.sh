#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_fuzz.sh FUZZER SECONDS BUILDDIR CORPUS: fuzz for SECONDS from the seed
# corpus (CORPUS, read only) plus a scratch corpus in BUILDDIR; print the
# throughput; exit non-zero on any finding (libFuzzer exits non-zero on a
# crash, leak, sanitizer report, timeout or out-of-memory).
set -uo pipefail

fuzzer=$1
secs=$2
b=$3
here=$(cd "$(dirname "$0")" && pwd)
seeds=$here/$4
name=$(basename "$fuzzer")
log=$b/fuzz.log

mkdir -p "$b/corpus" "$b/artifacts"
"$fuzzer" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
	-rss_limit_mb=2048 -max_len=4096 -artifact_prefix="$b/artifacts/" \
	"$b/corpus" "$seeds" > "$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
if [ "$rc" -ne 0 ]; then
	tail -n 60 "$log"
	echo "$name: FAILED (exit $rc) after ${execs:-?} executions; input in $b/artifacts/"
	exit 1
fi
echo "$name: ${secs}s, ${execs:-?} executions, ${rate:-?} exec/s, $cov, no findings"
