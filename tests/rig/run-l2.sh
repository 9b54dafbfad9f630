#!/bin/sh
# shellcheck shell=sh
# Runs inside L1 (busybox sh), installed by add-qemu.sh as
# /payload/qemu/run-l2: boot an L2 guest with KVM, show its serial output
# live, and judge it as boot-l1.sh judges L1 (rig_judge, protocol.sh).
#
#   /payload/qemu/run-l2 [SECONDS [EXTRA_QEMU_ARGS...]]
#
# Exit 0 only if L2 powered off in time, its payload's rc was 0 and its
# kernel log matches none of bad-patterns. Logs: /tmp/l2/console.log,
# payload.log, dmesg.log.
# Environment, for more than one L2 at a time (tests/operator):
#   RUN_L2_LOG    the log directory (default /tmp/l2)
#   RUN_L2_NAME   the guest's -name (default l2)
#   RUN_L2_ACCEL  QEMU's -accel (default kvm; e.g. kvm,dirty-ring-size=4096)
#   RUN_L2_PIN    L1's CPUs for L2's threads (taskset -c), or none
#                 (default 0, below)
#   RUN_L2_TRACE_EXITS=1  L1 traces its VM exits while L2 runs; L2's
#                 last exits are printed if it is lost (below)
# and for live migration (tests/migrate), RUN_L2_MIGRATE, words of:
#   in            QEMU takes L2 with -incoming: its /init ran elsewhere
#   out           L2 leaves this QEMU by migration, which then quits: no
#                 result line or dmesg dump here, only bad lines are judged
#   refused       QEMU must refuse the incoming L2 and exit non-zero
set -u
# L1's /init sources the same file (mkinitramfs.sh installs it)
# shellcheck source=tests/rig/protocol.sh
. /etc/rig-protocol.sh
# busybox ash has pipefail: QEMU's exit status must not be lost in the pipe.
# shellcheck disable=SC3040
set -o pipefail

q=$(cd "$(dirname "$0")" && pwd)
limit=${1:-300}
[ $# -gt 0 ] && shift
log=${RUN_L2_LOG:-/tmp/l2}
mkdir -p "$log"

up() { cut -d' ' -f1 /proc/uptime; }
t0=$(up)
cr=$(printf '\r')

# The guest boots as `make run` boots it on a KVM host (boot-guest, i.e.
# scripts/boot-guest.sh), with the rig's firmware copy (L1 has no
# /usr/share/qemu) and two workarounds for L0:
# --cpu host,-xsave: with XSAVE, L2 logs an XSAVE consistency WARNING
#   (L0's TCG CPU model and kvm-amd disagree on the XSAVE area);
#   RUN_L2_CPU replaces it (pv-guest.sh --intel: vendor=GenuineIntel)
# --pin 0 (RUN_L2_PIN): every thread of L2 on L1's CPU 0. L0 (QEMU 7.2, multi-threaded
#   TCG) corrupts L1 when nested guests run on both of L1's CPUs: L2 resets
#   mid-run (3 of 6 runs of guest/tests/rig-run.sh), L1 panics or livelocks
#   (tests/host/README). -accel tcg,thread=single in L0 is no way out: an
#   L2 with two vCPUs then does not reach /init in 280 s.
# ===L2-BOOT=== tells boot-l1.sh in L0 that an L2 runs from here to the
# "run-l2: total" line (protocol.sh): a stuck L2 takes a one-CPU L1 down
# with it, so only L0 can see it and stop the rig (boot-l1.sh's
# L2_SILENCE_LIMIT).
# tsc=reliable: no TSC sync check while L2 brings up its second vCPU (the
# two vCPUs spin in lock-step there, with interrupts off, on L1's one
# CPU; L2 boots hung less often without it, tests/rig/README.md).
# rig.hold: L2 waits that long after its result line, and this script
# stops it as soon as the line is in: a two-vCPU L2's own shutdown
# (stopping the other CPU: both spin) hung the one-CPU L1 at times.
# watchdog_thresh, rcu_cpu_stall_timeout: L2's clock is L0's wall clock,
# and L1's one CPU runs both of L2's vCPUs and QEMU's I/O: on a loaded
# L0 a vCPU waits tens of seconds for it (L2's kernel log dump, a serial
# port write per byte, starved the other vCPU's RCU kthread for 21 s and
# then 75 s; tests/rig/README.md). The defaults (a 20 s soft lockup, a
# 21 s RCU stall) would report the rig's scheduling as a hang; at 120 s
# and 180 s they still report one of L2's own, and the tests' time
# limits and boot-l1.sh's silence limit stop it in any case.
HOLD=60
L2_APPEND="tsc=reliable rig.hold=$HOLD watchdog_thresh=60"
L2_APPEND="$L2_APPEND rcupdate.rcu_cpu_stall_timeout=180"
pin=${RUN_L2_PIN:-0}
[ "$pin" != none ] || pin=
rm -f "$log/stopped" "$log/qemu.pid" "$log/init.stamp"
# RUN_L2_TRACE_EXITS=1: L1's kvm:kvm_exit events into its trace buffer,
# so that an L2 lost without its result line (a reset: QEMU exits 0 with
# -no-reboot) leaves its last VM exits and the RIP of each
tracing=/sys/kernel/tracing
trace_exits=
if [ "${RUN_L2_TRACE_EXITS:-}" = 1 ] && [ -d "$tracing/events/kvm/kvm_exit" ]; then
	trace_exits=1
	echo 0 >"$tracing/tracing_on"
	: >"$tracing/trace"
	echo 2048 >"$tracing/buffer_size_kb"
	echo 1 >"$tracing/events/kvm/kvm_exit/enable"
	echo 1 >"$tracing/tracing_on"
fi
init=$(rig_tag L2 INIT)
result=$(rig_tag L2 RESULT)
rig_mark L2 BOOT
# debug-threads: the vCPU thread is "CPU 0/KVM", for tests/bench/l1-cost.sh
"$q/boot-guest" --limit "$limit" --firmware "$q/share" \
	--accel "${RUN_L2_ACCEL:-kvm}" --cpu "${RUN_L2_CPU:-host,-xsave}" \
	${pin:+--pin "$pin"} --smp 1 --mem 512M --append "$L2_APPEND" \
	"$q/bin/qemu-system-x86_64" "$q/vmlinuz" "$q/l2-initramfs.cpio.gz" \
	-- -pidfile "$log/qemu.pid" -name "${RUN_L2_NAME:-l2}",debug-threads=on "$@" |
	while IFS= read -r line; do
		line=${line%"$cr"} # serial lines end in CR LF; no fork per line
		case "$line" in
		*"$init"*) up >"$log/init.stamp" ;;
		*"$result"*)
			# all is out: stop L2 rather than have it shut down
			: >"$log/stopped"
			kill -9 "$(cat "$log/qemu.pid")" 2>/dev/null
			;;
		esac
		printf '%s\n' "$line"
	done | tee "$log/console.log"
qrc=$?
# stopped by us after its result line: as good as its own poweroff
[ -f "$log/stopped" ] && [ "$qrc" = 137 ] && qrc=0
t_end=$(up)

fails=0
rig_fail() {
	echo "run-l2: FAIL: $*"
	fails=$((fails + 1))
}
migrate=" ${RUN_L2_MIGRATE:-} "
case "$migrate" in
*" refused "*)
	# the refusal is the test's to check (QEMU's message); never a kill
	if [ "$qrc" = 0 ] || [ "$qrc" = 137 ]; then
		rig_fail "QEMU took the incoming L2 (exit $qrc), it had to refuse it"
	fi
	echo "$(rig_l2_done) $(awk -v a="$t0" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }')s"
	[ "$fails" = 0 ]
	exit
	;;
esac
[ "$qrc" = 0 ] || rig_fail "QEMU exited with $qrc (137: killed after ${limit}s)"
if [ -n "$trace_exits" ]; then
	echo 0 >"$tracing/tracing_on"
	echo 0 >"$tracing/events/kvm/kvm_exit/enable"
	if ! grep -aq "$result" "$log/console.log"; then
		echo "run-l2: L2 lost: its last VM exits (L1's kvm:kvm_exit):"
		grep -a 'kvm_exit:' "$tracing/trace" | tail -n 24 | sed 's/^/  /'
		echo "run-l2: exits with reason shutdown (a triple fault):"
		grep -a 'kvm_exit:.*reason shutdown' "$tracing/trace" | sed 's/^/  /'
	fi
fi
init_ran=0
case "$migrate" in
*" in "*) init_ran=1 ;;
esac
case "$migrate" in
*" out "*)
	grep -v -e '^#' -e '^$' "$q/bad-patterns" >"$log/patterns" || true
	if grep -a -E -f "$log/patterns" "$log/console.log" >"$log/bad.log"; then
		rig_fail "L2 kernel log has $(wc -l <"$log/bad.log") bad line(s)"
		head -n 40 "$log/bad.log" | sed 's/^/  /'
	fi
	echo "run-l2: L2 migrated out"
	echo "$(rig_l2_done) $(awk -v a="$t0" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }')s"
	[ "$fails" = 0 ]
	exit
	;;
esac
if [ -f "$log/init.stamp" ]; then
	init_ran=1
	echo "run-l2: L2 /init ran $(awk -v a="$t0" -v b="$(cat "$log/init.stamp")" \
		'BEGIN { printf "%.1f", b - a }')s after QEMU started"
fi
rig_judge L2 "$log/console.log" "$log" "$q/bad-patterns" "$init_ran"
echo "$(rig_l2_done) $(awk -v a="$t0" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }')s"
[ "$fails" = 0 ]
