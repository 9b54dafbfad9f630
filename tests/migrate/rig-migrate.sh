#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Live migration with monitoring active, for real: in the rig's
# L1, an L2 guest running guest/tests/livemig moves from QEMU to QEMU
# (tests/migrate/l1-run.sh says how, and what is checked there).
#
#   tests/migrate/rig-migrate.sh [LOGDIR]     (default build/logs/migrate)
#
# Environment: QEMU_PV (scripts/qemu-build.sh --print-path), and
# pv-guest.sh's KVM_PERFMON_KO, PERFMON2_KO. Prints L1's PASS/FAIL and
# migrate-l1 lines; exit status 0 only if all passed and the rig's run
# was clean.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$top/tests/migrate
logdir=${1:-$top/build/logs/migrate}
: "${QEMU_PV:?rig-migrate.sh: set QEMU_PV (scripts/qemu-build.sh --print-path)}"

make -s -C "$top/guest/kernel"
make -s -C "$top/guest/tests"
make -s -C "$top/tests/host" "$top/tests/host/out/bin/kvmpfm-stats"

work=$(mktemp -d "${TMPDIR:-/tmp}/rig-migrate.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$work/stream-flip" \
	"$here/stream-flip.c"
# the rig has no PMU: cycles are the vCPU thread's task clock (as the
# guest tests' map); the refused destination has no map at all
cat >"$work/eventmap" <<'MAP'
generic 0x76 0x00 -> software task-clock emulated   # amd64 cycles
generic 0x3c 0x00 -> software task-clock emulated   # intel_arch cycles
MAP

rm -rf "$logdir"
"$top/tests/rig/pv-guest.sh" --timeout 900 \
	--l1-run "$here/l1-run.sh" --eventmap "$work/eventmap" \
	--l1-file "$top/tests/host/out/bin/kvmpfm-stats" \
	--l1-file "$work/stream-flip" \
	--summary '^(PASS|FAIL): |^migrate-l1: |^run-l2: ' \
	"$logdir" "$top/build/guest/tests/livemig" -- ./livemig /dev/ttyS1
