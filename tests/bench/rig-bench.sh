#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the benchmarks in L2 of the nested rig (tests/rig, TEST-RIG.md), as
# guest/tests/rig-run.sh runs the guest tests (both with the payload of
# tests/rig/pv-guest.sh): L0 boots L1 under TCG; L1 loads kvm-perfmon.ko
# and starts an L2 with `-device pv-perfmon`; L2 loads perfmon2.ko and
# runs b_exits; around it, L1 measures what the host spent for it
# (l1-cost.sh: BENCH-HOST lines). Prints the BENCH/RATIO lines from the
# console log and judges them with check.sh.
#
#   tests/bench/rig-bench.sh [--overhead|--all] [--smp N] [--l1-smp N] [--timeout S] [LOGDIR]
#
# --overhead: run b_overhead instead of b_exits; --all: both, one after
# the other in the same L2 (make test's bench stage); --smp: L2's vCPUs
# (default 1), --l1-smp: L1's CPUs (default 1), --timeout: the rig's
# limit (default 1500).
# Environment: QEMU_PV, KVM_PERFMON_KO, PERFMON2_KO (see pv-guest.sh), and
#   BENCH_N          calls per batch (default 5000: `make test` runs this;
#                    the figures are modes and means of 5000 calls, the
#                    held ones 0.5 or more from their bounds)
# LOGDIR (default build/bench/rig) gets boot-l1.sh's logs and bench.txt
# (the BENCH lines). Exit status: 0 only if the rig run and check.sh pass.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
opts=(--timeout 1500)
prog=b_exits
while [[ "${1:-}" == -* ]]; do
	if [ "$1" = --overhead ] || [ "$1" = --all ]; then
		prog=${1#--}
		shift
		continue
	fi
	opts+=("$1" "${2:?rig-bench.sh: $1 needs a value}")
	shift 2
done
logdir=${1:-$top/build/bench/rig}
n=${BENCH_N:-5000}
case $prog in
b_exits) files=("$top/build/bench/b_exits"); cmd=(./b_exits "$n") ;;
overhead) files=("$top/build/bench/b_overhead"); cmd=(./b_overhead) ;;
all)
	files=("$top/build/bench/b_exits" "$top/build/bench/b_overhead")
	# both run whatever the first's status; check.sh judges each
	cmd=(sh -c "./b_exits $n; r=\$?; ./b_overhead || r=1; exit \$r")
	;;
esac

make -s -C "$top/guest/kernel"
make -s -C "$here"
make -s -C "$top/host-tools"

rc=0
"$top/tests/rig/pv-guest.sh" "${opts[@]}" --summary '^(BENCH|RATIO)' \
	--l1-around "$here/l1-cost.sh" \
	--l1-file "$top/build/host-tools/kvm-perfmon-exporter" \
	"$logdir" "${files[@]}" -- "${cmd[@]}" || rc=$?
grep -aE '^(BENCH|RATIO)' "$logdir/console.log" | sed 's/\r$//' \
	>"$logdir/bench.txt" || true
crc=0
"$here/check.sh" "$logdir/bench.txt" || crc=$?
[ "$rc" -eq 0 ] || echo "rig-bench.sh: the rig run failed (pv-guest.sh status $rc; logs in $logdir)"
[ "$rc" -eq 0 ] && exit "$crc"
exit "$rc"
