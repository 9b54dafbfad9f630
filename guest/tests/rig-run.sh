#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the guest tests for real in the nested rig (tests/rig, TEST-RIG.md):
# L0 boots L1 under TCG; L1 checks the device's refusals without
# kvm-perfmon.ko (tests/rig/qemu-errors.sh; not with --intel), loads it
# and starts an L2 with `-device pv-perfmon`; L2 loads perfmon2.ko and
# runs build/guest/tests/run. The payload is tests/rig/pv-guest.sh's.
#
#   guest/tests/rig-run.sh [--intel] [--smp N] [--timeout S] [LOGDIR]
#
# --smp: L2's vCPUs (default 2), --timeout: the rig's limit (default 900).
# --intel: an Intel guest (pv-guest.sh --intel: L2's CPU GenuineIntel, the
# intel_arch personality, fixed counter 1 aliased too) running the
# programs whose paths differ by personality (INTEL_PROGS). Not the
# 32-bit ones: on the rig's AMD CPUs an Intel guest's 32-bit system calls
# (SYSENTER, which AMD refuses in long mode and KVM emulates across
# vendors) double-fault L2's kernel before any perfmon2 call.
# Environment: QEMU_PV (a qemu-system-x86_64 with -device pv-perfmon),
# KVM_PERFMON_KO, PERFMON2_KO: see pv-guest.sh. Builds guest/kernel,
# guest/tests and guest/tools (pfmon, for t_pfmon) first. LOGDIR (default
# build/guest/rig) gets boot-l1.sh's logs; the L2 lines are in console.log. Prints the test lines, why the
# rig failed if it did, and the rig's result line last.
# Exit status: pv-guest.sh's (0 only if L1, L2 and every test passed).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
opts=(--smp 2 --timeout 900)
intel=0
while [[ "${1:-}" == -* ]]; do
	if [ "$1" = --intel ]; then
		intel=1
		shift
		continue
	fi
	opts+=("$1" "${2:?rig-run.sh: $1 needs a value}")
	shift 2
done
# the programs that meet the personality: its registers, events, fixed
# counters, pmu_desc, and libpfm-3's PMU tables
INTEL_PROGS="t_errors t_hwevent t_iface t_libpfm3 t_pfm3 t_pfmon t_sets t_smpl t_vpmd"
logdir=${1:-$top/build/guest/rig}

make -s -C "$top/guest/kernel"
make -s -C "$top/guest/tests"
make -s -C "$top/guest/tools"

work=$(mktemp -d "${TMPDIR:-/tmp}/guest-rig.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The rig has no PMU: the admin's event map aliases cycles (both
# personalities' encodings) to the vCPU thread's task clock, marked
# emulated; any other hardware event stays refused (t_hwevent checks both).
cat >"$work/eventmap" <<'MAP'
# no PMU in the rig: count the vCPU's run time instead of cycles
generic 0x76 0x00 -> software task-clock emulated   # amd64 cycles
generic 0x3c 0x00 -> software task-clock emulated   # intel_arch cycles
MAP
[ "$intel" = 0 ] ||
	echo 'fixed 1 -> software task-clock emulated             # intel_arch fixed cycles' \
		>>"$work/eventmap"
mapfile -t progs < <(find "$top/build/guest/tests" -maxdepth 1 -name 't_*' \
	-type f -perm -u+x | sort)
run=(./run)
if [ "$intel" = 0 ]; then
	opts+=(--qemu-errors)
else
	opts+=(--intel)
	read -ra names <<<"$INTEL_PROGS"
	run+=("${names[@]}")
fi
# what the shell tests source; t_libpfm3's programs of libpfm-3.10 and the
# libperfmon2.so it preloads; t_pfmon's pfmon
progs+=("$top/build/guest/tests/t_common.sh" "$top/build/guest/tests/libpfm3"
	"$top/build/guest/tests/libperfmon2.so" "$top/build/guest/tools/pfmon")
rc=0
"$top/tests/rig/pv-guest.sh" "${opts[@]}" \
	--eventmap "$work/eventmap" \
	--summary '^(PASS|FAIL|SKIP): |^[0-9]+ passed, [0-9]+ failed$|^guest tests: |^run-l2: ' \
	"$logdir" "$top/build/guest/tests/run" "${progs[@]}" -- \
	env PVPFM_EXPECT_HW=aliased "${run[@]}" || rc=$?
exit "$rc"
