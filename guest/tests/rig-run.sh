#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the guest tests for real in the nested rig (tests/rig, TEST-RIG.md):
# L0 boots L1 under TCG; L1 loads kvm-perfmon.ko and starts an L2 with
# `-device pv-perfmon`; L2 loads perfmon2.ko and runs build/guest/tests/run.
#
#   guest/tests/rig-run.sh [--smp N] [--timeout S] [LOGDIR]
#
# Environment (both needed until the project builds them itself):
#   QEMU_PV          a qemu-system-x86_64 that has -device pv-perfmon
#   KVM_PERFMON_KO   the host module (default kvm/kvm-perfmon.ko)
# Builds guest/kernel and guest/tests first. LOGDIR (default
# build/guest/rig) gets boot-l1.sh's logs; the L2 lines are in console.log.
# Exit status: boot-l1.sh's (0 only if L1, L2 and every test passed).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
smp=2
timeout_s=900
while [ $# -gt 0 ]; do
	case "$1" in
	--smp) smp=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	-*) echo "rig-run.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
logdir=${1:-$top/build/guest/rig}
qemu=${QEMU_PV:?rig-run.sh: set QEMU_PV to a qemu-system-x86_64 with -device pv-perfmon}
ko=${KVM_PERFMON_KO:-$top/kvm/kvm-perfmon.ko}
[ -x "$qemu" ] || { echo "rig-run.sh: $qemu is not executable" >&2; exit 2; }
[ -f "$ko" ] || { echo "rig-run.sh: no $ko (make -C kvm)" >&2; exit 2; }
"$qemu" -device help 2>/dev/null | grep -q '"pv-perfmon"' ||
	{ echo "rig-run.sh: $qemu has no pv-perfmon device" >&2; exit 2; }

make -s -C "$top/guest/kernel"
make -s -C "$top/guest/tests"

work=$(mktemp -d "${TMPDIR:-/tmp}/guest-rig.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/l1" "$work/l2/tests" "$work/bin"
cp "$top/guest/kernel/perfmon2.ko" "$top/build/guest/tests/run" "$work/l2/tests/"
find "$top/build/guest/tests" -maxdepth 1 -name 't_*' -type f -perm -u+x \
	-exec cp {} "$work/l2/tests/" \;
# The rig has no PMU: the admin's event map aliases cycles (both
# personalities' encodings) to the vCPU thread's task clock, marked
# emulated; any other hardware event stays refused (t_hwevent checks both).
cat >"$work/l2/run" <<'L2'
#!/bin/sh
echo "L2: $(grep -c ^processor /proc/cpuinfo) vCPUs"
cd /payload/tests && PVPFM_EXPECT_HW=aliased ./run
L2
cat >"$work/l1/eventmap" <<'MAP'
# no PMU in the rig: count the vCPU's run time instead of cycles
generic 0x76 0x00 -> software task-clock emulated   # amd64 cycles
generic 0x3c 0x00 -> software task-clock emulated   # intel_arch cycles
MAP
cp "$ko" "$work/l1/kvm-perfmon.ko"
cp "$top/tests/rig/qemu-errors.sh" "$work/l1/"
# first, without the module: the device's refusals (tests/rig/qemu-errors.sh)
cat >"$work/l1/run" <<L1
#!/bin/sh
/payload/qemu-errors.sh /payload/qemu/bin/qemu-system-x86_64 /payload/qemu/share
errors=\$?
insmod /payload/kvm-perfmon.ko || { echo "L1: insmod kvm-perfmon.ko failed"; exit 1; }
/payload/qemu/run-l2 $((timeout_s - 120)) -smp $smp -device pv-perfmon,eventmap=/payload/eventmap
rc=\$?
[ "\$rc" -ne 0 ] && exit "\$rc"
exit "\$errors"
L1
chmod +x "$work/l1/run" "$work/l2/run"
# add-qemu.sh copies the qemu-system-x86_64 it finds first in PATH
ln -s "$qemu" "$work/bin/qemu-system-x86_64"
PATH=$work/bin:$PATH "$top/tests/rig/add-qemu.sh" --l2-payload "$work/l2" "$work/l1"
rc=0
# L1 with one CPU: see tests/rig/README.md (L2 on a 2-CPU L1 resets now and then)
"$top/tests/rig/boot-l1.sh" --timeout "$timeout_s" --smp 1 "$work/l1" "$logdir" || rc=$?
# the summary last, where a reader of a long log looks: the test lines,
# then why the rig failed if it did (L2's verdict, then L1's)
grep -E '^(PASS|FAIL|SKIP): |^[0-9]+ passed, [0-9]+ failed$|^guest tests: |^run-l2: ' \
	"$logdir/console.log" | sed 's/\r$//' || true
sed -n 's/^fail: /rig-run.sh: FAIL: /p' "$logdir/result" 2>/dev/null || true
exit "$rc"
