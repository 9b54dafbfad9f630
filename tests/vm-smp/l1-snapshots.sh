#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# shellcheck disable=SC3043 # local: busybox ash has it
#
# Runs in the rig's L1 (busybox sh) around make test-vm-smp's L2, whose
# guest tests run on both of L1's CPUs: the operator's detailed view of
# the VM (kvm-perfmon-stat --json --vm, which walks its vCPUs, contexts
# and events) taken back to back for the whole run, racing every bind,
# switch, sample and teardown. pv-guest.sh --l1-around calls it:
#
#   l1-snapshots.sh start   before L2 starts: the snapshots, in the
#                           background
#   l1-snapshots.sh end     after L2 is gone: stop them and judge them;
#                           exits 1 if any failed or none saw the
#                           guest's contexts loaded
#
# A snapshot taken while no VM is open (before L2's QEMU opens
# /dev/kvm-perfmon, after it closes it) is no failure: kvm-perfmon-stat
# exits 4 then.
set -u
# shellcheck source=tests/rig/protocol.sh
. /etc/rig-protocol.sh
state=/tmp/l1-snapshots
stat=/payload/kvm-perfmon-stat

# snapshot: one detailed view of L2's VM (the first VM the host view
# lists) into $state/last; its exit status, 4 while no VM is open
snapshot() {
	local pid
	"$stat" --json >"$state/list" 2>"$state/err" || return
	pid=$(sed -n 's/^ *"pid": *\([0-9][0-9]*\).*/\1/p' "$state/list" |
		head -n 1)
	[ -n "$pid" ] || return 4
	"$stat" --json --vm="$pid" >"$state/last" 2>"$state/err"
}

case "${1:-}" in
start)
	mkdir -p "$state"
	(ok=0 novm=0 bad=0 loaded=0 syswide=0
	while [ ! -f "$state/stop" ]; do
		snapshot
		case $? in
		0)
			ok=$((ok + 1))
			grep -q '"state": "loaded"' "$state/last" &&
				loaded=$((loaded + 1))
			grep -q '"kind": "system-wide"' "$state/last" &&
				syswide=$((syswide + 1))
			;;
		4) novm=$((novm + 1)) ;;
		*)
			bad=$((bad + 1))
			[ "$bad" -gt 1 ] || cp "$state/err" "$state/first-err"
			;;
		esac
		echo "$ok $novm $bad $loaded $syswide" >"$state/counts"
	done) &
	echo $! >"$state/pid"
	;;
end)
	: >"$state/stop"
	wait "$(cat "$state/pid")" 2>/dev/null
	read -r ok novm bad loaded syswide <"$state/counts"
	echo "l1-snapshots: $ok snapshots of the VM ($loaded with a loaded" \
		"context, $syswide with a system-wide one), $novm with no VM," \
		"$bad failed"
	[ ! -f "$state/first-err" ] || sed 's/^/    /' "$state/first-err"
	rig_check "$bad" "l1: kvm-perfmon-stat --json --vm while the guest ran: none failed" \
		"$bad of $((ok + novm + bad))"
	[ "$loaded" -gt 0 ]
	rig_check $? "l1: some snapshots saw the guest's contexts loaded" \
		"$loaded of $ok"
	[ "${rig_failed:-0}" -eq 0 ]
	;;
*)
	echo "usage: l1-snapshots.sh start|end" >&2
	exit 2
	;;
esac
