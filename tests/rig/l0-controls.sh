#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Whether an L0 runs a two-CPU L1 cleanly: the controls of
# tests/rig/README.md ("L1 with two CPUs"), each booted again and again
# on each L0 asked for, and a table of the verdicts.
#
#   tests/rig/l0-controls.sh [--boots N] [--controls "host l2"] [--out DIR] L0...
#
# L0: `system` (this machine's qemu-system-x86_64, bookworm's 7.2) or a
# Debian suite, whose QEMU tests/rig/l0-qemu.sh unpacks (trixie: 10.0,
# unstable: 11.1); `SUITE,single` runs it with one TCG thread for all of
# L1's CPUs (RIG_L0_ACCEL=tcg,thread=single) instead of one a CPU.
# Controls (none uses kvm-perfmon; L1 has two CPUs, nothing is pinned):
#   host  t_stress's control without kvm-perfmon: plain KVM VMs whose
#         vCPU threads run guests on both of L1's CPUs
#         (T_STRESS_ONLY_RUNS=3 HL_PIN_VCPUS=none), 100,000 runs
#   l2    a two-vCPU L2 (perfmon2.ko loaded, never called) forking
#         processes on both vCPUs: page faults, copy-on-write, TLB
#         shootdown IPIs between its vCPUs, a fixed amount of work
# Each boot is judged as make test judges one (boot-l1.sh: corruption,
# lockups, stalls, a silent L1 or L2, a failed payload), and never booted
# again: RIG_L2_HANG_RETRIES=0. --boots: boots per L0 and control
# (default 10). --out: the logs (default build/l0-controls/L0/CONTROL/N: run.log,
# time, and the rig's in rig/).
# A clean boot takes about a minute (100,000 runs in ~55 s, 4000 forks in
# ~20 s, with L0 on 10.0); each is limited to 300 s, so that a livelock
# costs minutes, not the stage's limit. "L0 CPU" is L0's CPU time over
# the boot's wall time: near 2 when both of L1's CPUs ran, as they must
# for the control to say anything. The table's last column names the
# first failure of each failed boot.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

die() {
	echo "l0-controls.sh: $*" >&2
	exit 2
}
boots=10
controls="host l2"
out=$top/build/l0-controls
while [ $# -gt 0 ]; do
	case "$1" in
	--boots) boots=${2:?--boots needs a count} ;;
	--controls) controls=${2:?--controls needs a list} ;;
	--out) out=${2:?--out needs a directory} ;;
	-h | --help) sed -n '4,/^set -euo/{/^set/d;p}' "$0"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift 2
done
[ $# -ge 1 ] || die "usage: l0-controls.sh [--boots N] [--controls LIST] [--out DIR] L0..."
[[ "$boots" =~ ^[1-9][0-9]*$ ]] || die "--boots must be a count"
# absolute: the host control's make runs in tests/host
out=$(realpath -m "$out")
for c in $controls; do
	case "$c" in host | l2) ;; *) die "unknown control $c (host, l2)" ;; esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/l0-controls.XXXXXX")
trap 'rm -rf "$work"' EXIT

# l0_qemu L0: its qemu-system-x86_64, for RIG_L0_QEMU
l0_qemu() {
	local suite=${1%,single}
	if [ "$suite" = system ]; then
		command -v qemu-system-x86_64 || die "no qemu-system-x86_64 (tests/rig/deps.sh)"
	else
		"$here/l0-qemu.sh" "$suite" | tail -n 1 || die "no QEMU of $suite"
	fi
}

# the L2 control's guest program: both vCPUs fork a fixed number of
# short processes; prints its time in L2
cat >"$work/forks" <<'EOF'
#!/bin/sh
. /etc/rig-protocol.sh
t0=$(cut -d' ' -f1 /proc/uptime)
for v in 0 1; do
	(i=0; while [ $i -lt 2000 ]; do echo "$v $i" | md5sum >/dev/null; i=$((i + 1)); done) &
done
wait
t1=$(cut -d' ' -f1 /proc/uptime)
echo "forks: 2 x 2000 processes in $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s"
rig_check 0 "two vCPUs forked 4000 processes"
EOF
chmod +x "$work/forks"

# run_control CONTROL LOGDIR: one boot, boot-l1.sh's verdict in LOGDIR
run_control() {
	case "$1" in
	host)
		make -s -C "$top/tests/host" check SMP=2 RUN_TESTS=t_stress \
			TIMEOUT=300 P="$work/payload-host" LOGS="$2" \
			RUN_ENV="T_STRESS_ONLY_RUNS=3 HL_PIN_VCPUS=none T_STRESS_COMMANDS=100000 PROG_TIMEOUT=180"
		;;
	l2)
		QEMU_PV=${QEMU_PV:-$("$top/scripts/qemu-build.sh" --print-path)} \
			"$here/pv-guest.sh" --l1-smp 2 --smp 2 --l2-pin none \
			--timeout 300 "$2" "$work/forks" -- ./forks
		;;
	esac
}

# why LOGDIR: the first failed check of the payload's, else the first
# reason boot-l1.sh gave; and L1's first kernel log line of bad-patterns
# (boot-l1.sh's bad.log)
why() {
	local reason report
	reason=$(grep -a '^FAIL: ' "$1/console.log" 2>/dev/null | head -n 1 | tr -d '\r')
	[ -n "$reason" ] ||
		reason=$(sed -n 's/^fail: //p' "$1/result" 2>/dev/null | head -n 1)
	report=$(sed -n '1s/^\[ *[0-9.]*\] //p' "$1/bad.log" 2>/dev/null)
	echo "${reason:-no result}${report:+; $report}" | cut -c1-200
}

make -s -C "$top/kvm"
table=$work/table
echo "| L0 | QEMU | control | boots | clean | failed boots: first reason |" >"$table"
echo "|---|---|---|---|---|---|" >>"$table"
for l0 in "$@"; do
	q=$(l0_qemu "$l0")
	accel=tcg
	[ "$l0" = "${l0%,single}" ] || accel=tcg,thread=single
	ver=$("$q" --version | sed -n '1s/.*version \([^ ]*\).*/\1/p')
	for c in $controls; do
		clean=0
		whys=
		for n in $(seq 1 "$boots"); do
			# the rig's logs in rig/ (make check empties its LOGS)
			log=$out/$l0/$c/$n
			rm -rf "$log"
			mkdir -p "$log"
			echo "l0-controls.sh: $l0 (QEMU $ver), $c, boot $n of $boots"
			rc=0
			# bash's time counts the CPU of every process waited for:
			# L0's QEMU with the rest
			{ TIMEFORMAT='%R %U %S'; time RIG_L0_QEMU=$q RIG_L0_ACCEL=$accel \
				RIG_L2_HANG_RETRIES=0 run_control "$c" "$log/rig" >"$log/run.log" 2>&1 || rc=$?; } 2>"$log/time"
			cpu=$(awk '{ printf "%.2f", ($2 + $3) / $1 }' "$log/time")
			if [ "$rc" = 0 ]; then
				clean=$((clean + 1))
				echo "l0-controls.sh:   clean, L0 CPU $cpu ($(grep -aE '^forks: |^=== t_stress: ' "$log/rig/console.log" | tail -n 1 | tr -d '\r'))"
			else
				w=$(why "$log/rig")
				echo "l0-controls.sh:   FAILED, L0 CPU $cpu: $w"
				whys+="${whys:+<br>}$n: $w"
			fi
		done
		echo "| $l0 | $ver | $c | $boots | $clean | ${whys:--} |" >>"$table"
	done
done
cat "$table"
mkdir -p "$out"
cp "$table" "$out/table.md"
