#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the benchmarks in L2 of the nested rig (tests/rig, TEST-RIG.md), as
# guest/tests/rig-run.sh runs the guest tests: L0 boots L1 under TCG; L1
# loads kvm-perfmon.ko and starts an L2 with `-device pv-perfmon`; L2 loads
# perfmon2.ko and runs b_exits. Prints the BENCH/RATIO lines from the
# console log and judges them with check.sh.
#
#   tests/bench/rig-bench.sh [--smp N] [--timeout S] [LOGDIR]
#
# Environment:
#   QEMU_PV          a qemu-system-x86_64 with -device pv-perfmon
#                    (scripts/qemu-build.sh --print-path)
#   KVM_PERFMON_KO   the host module (default kvm/kvm-perfmon.ko)
#   BENCH_N          calls per batch (default 20000)
# LOGDIR (default build/bench/rig) gets boot-l1.sh's logs and bench.txt
# (the BENCH lines). Exit status: 0 only if the rig run and check.sh pass.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
smp=1
timeout_s=1500
while [ $# -gt 0 ]; do
	case "$1" in
	--smp) smp=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	-*) echo "rig-bench.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
logdir=${1:-$top/build/bench/rig}
qemu=${QEMU_PV:?rig-bench.sh: set QEMU_PV to a qemu-system-x86_64 with -device pv-perfmon}
ko=${KVM_PERFMON_KO:-$top/kvm/kvm-perfmon.ko}
n=${BENCH_N:-20000}
[ -x "$qemu" ] || { echo "rig-bench.sh: $qemu is not executable" >&2; exit 2; }
[ -f "$ko" ] || { echo "rig-bench.sh: no $ko (make -C kvm)" >&2; exit 2; }
"$qemu" -device help 2>/dev/null | grep -q '"pv-perfmon"' ||
	{ echo "rig-bench.sh: $qemu has no pv-perfmon device" >&2; exit 2; }

make -s -C "$top/guest/kernel"
make -s -C "$here"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-rig.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/l1" "$work/l2/bench" "$work/bin"
cp "$top/guest/kernel/perfmon2.ko" "$top/build/bench/b_exits" "$work/l2/bench/"
cat >"$work/l2/run" <<L2
#!/bin/sh
echo "L2: \$(grep -c ^processor /proc/cpuinfo) vCPUs"
cd /payload/bench || exit 1
[ -d /sys/module/perfmon2 ] || insmod ./perfmon2.ko || exit 1
if [ ! -e /dev/perfmon2 ] && [ -r /sys/class/misc/perfmon2/dev ]; then
	IFS=: read -r major minor </sys/class/misc/perfmon2/dev
	mknod -m 666 /dev/perfmon2 c "\$major" "\$minor"
fi
./b_exits $n
L2
cp "$ko" "$work/l1/kvm-perfmon.ko"
cat >"$work/l1/run" <<L1
#!/bin/sh
insmod /payload/kvm-perfmon.ko || { echo "L1: insmod kvm-perfmon.ko failed"; exit 1; }
/payload/qemu/run-l2 $((timeout_s - 120)) -smp $smp -device pv-perfmon
L1
chmod +x "$work/l1/run" "$work/l2/run"
# add-qemu.sh copies the qemu-system-x86_64 it finds first in PATH
ln -s "$qemu" "$work/bin/qemu-system-x86_64"
PATH=$work/bin:$PATH "$top/tests/rig/add-qemu.sh" --l2-payload "$work/l2" "$work/l1"
rc=0
# L1 with one CPU: see tests/rig/README.md (L2 on a 2-CPU L1 resets now and then)
"$top/tests/rig/boot-l1.sh" --timeout "$timeout_s" --smp 1 "$work/l1" "$logdir" || rc=$?
grep -aE '^(BENCH|RATIO)' "$logdir/console.log" | sed 's/\r$//' \
	>"$logdir/bench.txt" || true
cat "$logdir/bench.txt"
crc=0
"$here/check.sh" "$logdir/bench.txt" || crc=$?
[ "$rc" -eq 0 ] || echo "rig-bench.sh: the rig run failed (boot-l1.sh status $rc; logs in $logdir)"
[ "$rc" -eq 0 ] && exit "$crc"
exit "$rc"
