#!/bin/bash
# Boot the rig's L1 (Debian kernel + kvm-amd nested=1) under QEMU/TCG on this
# machine (L0), run PAYLOAD_DIR/run in it, and judge the run.
#
#   boot-l1.sh [--timeout S] [--smp N] [--hostfwd PORT]... PAYLOAD_DIR LOGDIR
#   boot-l1.sh [--timeout S] [--smp N] --disk IMAGE_DIR LOGDIR
#
# --disk: boot a Debian root filesystem with systemd instead of the
# initramfs rig: IMAGE_DIR/disk.img (ext4, the whole of /dev/vda, written
# to), its kernel IMAGE_DIR/vmlinuz and initramfs IMAGE_DIR/initrd.img
# (tests/libvirt/mkimage.sh). Its test unit speaks the rig's protocol as
# /init does (tests/libvirt/l1-test.sh), and the run is judged the same.
#
# --hostfwd: an e1000 NIC on QEMU's user network, L0's 127.0.0.1:PORT
# forwarded to L1's PORT (loopback only: nothing else on L0's network
# reaches L1, and L1 reaches nothing: restrict=on); L1's /init brings up
# eth0 (rig.net=1).
# --smp: L1's CPUs (default 1). With more than one, L0 is trixie's QEMU
# (l0-qemu.sh) unless RIG_L0_QEMU names another: bookworm's 7.2 under
# multi-threaded TCG with nested SVM corrupts a two-CPU L1 in most
# boots, trixie's less often (tests/rig/README.md, the L0 comparison).
#
# A hung L1 (repeated soft lockup or RCU stall reports) is stopped early
# and fails the run.
#
# LOGDIR gets console.log (the whole serial output), payload.log (what
# /payload/run printed), dmesg.log (L1's kernel log at the end) and result.
# Exits 0 only if L1 booted and powered off in time, /dev/kvm was there, the
# payload's exit code was 0 and L1's kernel log matches none of bad-patterns
# (the verdict: rig_judge in protocol.sh). The last line says the result
# and how many times a hung L2 made the whole rig boot again (rig: result
# ..., retries=N); result holds the same line first.
# Needs the packages of deps.sh (it does not install them).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/rig/protocol.sh
. "$here/protocol.sh"

# Kernel log lines that fail a run: one commented list, shared with run-l2.
BAD_PATTERNS=$here/bad-patterns

die() {
	echo "boot-l1.sh: $*" >&2
	exit 2
}

usage() {
	echo "usage: boot-l1.sh [--timeout SECONDS] [--smp N] [--hostfwd PORT]... PAYLOAD_DIR LOGDIR" >&2
	echo "       boot-l1.sh [--timeout SECONDS] [--smp N] --disk IMAGE_DIR LOGDIR" >&2
	exit 2
}

timeout_s=600
smp=1
hostfwd=
disk=
while [ $# -gt 0 ]; do
	case "$1" in
	--hostfwd)
		[ $# -ge 2 ] || usage
		if ! [[ "$2" =~ ^[1-9][0-9]*$ ]] || [ "$2" -gt 65535 ]; then
			die "--hostfwd must be a TCP port"
		fi
		hostfwd+=",hostfwd=tcp:127.0.0.1:$2-:$2"
		shift 2
		;;
	--disk)
		[ $# -ge 2 ] || usage
		disk=$2
		shift 2
		;;
	--smp)
		[ $# -ge 2 ] || usage
		smp=$2
		shift 2
		;;
	--timeout)
		[ $# -ge 2 ] || usage
		timeout_s=$2
		shift 2
		;;
	--timeout=*)
		timeout_s=${1#--timeout=}
		shift
		;;
	-h | --help) usage ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
if [ -n "$disk" ]; then
	[ $# -eq 1 ] || usage
	payload=
	logdir=$1
	for f in disk.img vmlinuz initrd.img; do
		[ -r "$disk/$f" ] || die "--disk: $disk/$f is not readable"
	done
else
	[ $# -eq 2 ] || usage
	payload=$1
	logdir=$2
	[ -d "$payload" ] || die "payload directory $payload does not exist"
fi
[[ "$smp" =~ ^[1-9][0-9]*$ ]] || die "--smp must be a number of CPUs"
if ! [[ "$timeout_s" =~ ^[0-9]+$ ]] || [ "$timeout_s" -lt 60 ]; then
	die "--timeout must be a whole number of seconds, at least 60"
fi

# One rig at a time on this machine: L0's TCG takes a whole core, and two
# rigs sharing two cores turn every timing-sensitive check into noise.
# RIG_SLOT=2: a second rig beside the first, for make test's second lane
# of rig stages (migrate, operator, run, bench) beside its first (vm,
# libvirt), a core each.
case "${RIG_SLOT:-1}" in
1) lock=${XDG_RUNTIME_DIR:-/tmp}/kvm-perfmon-rig.lock ;;
2) lock=${XDG_RUNTIME_DIR:-/tmp}/kvm-perfmon-rig-2.lock ;;
*) die "RIG_SLOT must be 1 or 2" ;;
esac
exec 9>>"$lock"
if ! flock -n 9; then
	echo "boot-l1.sh: another rig run holds $lock: waiting for it"
	flock 9
fi

# RIG_L0_QEMU: another qemu-system-x86_64 as L0 (e.g. l0-qemu.sh's, to
# compare L0s: l0-controls.sh)
smp_l0_suite=trixie
if [ -z "${RIG_L0_QEMU:-}" ] && [ "$smp" -gt 1 ]; then
	RIG_L0_QEMU=$("$here/l0-qemu.sh" "$smp_l0_suite" | tail -n 1) ||
		die "no QEMU of $smp_l0_suite for a $smp-CPU L1"
fi
QEMU=${RIG_L0_QEMU:-qemu-system-x86_64}
# RIG_L0_ACCEL: L0's -accel (default tcg, a TCG thread per L1 CPU, the one
# that boots a two-vCPU L2 on a two-CPU L1; tcg,thread=single: one thread
# for all, the one that runs guests on both CPUs without a livelock but
# boots no two-vCPU L2: tests/rig/README.md)
ACCEL=${RIG_L0_ACCEL:-tcg}
command -v "$QEMU" >/dev/null || die "$QEMU missing: run tests/rig/deps.sh"
if [ -n "$disk" ]; then
	kver=$(cat "$disk/kver" 2>/dev/null || echo "the image's")
	kernel=$disk/vmlinuz
else
	kver=$("$here/../../scripts/kver.sh" boot) || die "no kernel to boot (see above)"
	kroot=$("$here/../../scripts/kver.sh" boot-root) || die "no kernel to boot (see above)"
	kernel=${kroot%/}/boot/vmlinuz-$kver
	[ -r "$kernel" ] || die "$kernel is not readable"
fi

# Wall-clock microseconds (bash 5).
now_us() { echo "${EPOCHREALTIME/./}"; }
secs() { awk -v us="$1" 'BEGIN { printf "%.1f", us / 1e6 }'; }
t0=$(now_us)

mkdir -p "$logdir"
work=$(mktemp -d "${TMPDIR:-/tmp}/rig-boot.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The initramfs: the cached base and the payload's layer (not with --disk).
build_initrd() {
	# The base initramfs (busybox, /init, modules) depends only on files outside
	# the payload: cache it under a hash of them, outside the repository.
	cache=${XDG_CACHE_HOME:-${HOME:?boot-l1.sh: set HOME or XDG_CACHE_HOME for the cache}/.cache}/kvm-perfmon/rig
	mkdir -p "$cache"
	key=$("$here/mkinitramfs.sh" --base-key)
	base=$cache/l1-base-$kver-$key.cpio.gz
	# gzip -t: a truncated or corrupt cache entry is rebuilt, not booted.
	if [ -s "$base" ] && gzip -t "$base" 2>/dev/null; then
		echo "boot-l1.sh: base initramfs from cache: $base"
	else
		echo "boot-l1.sh: building base initramfs: $base"
		tmp=$(mktemp "$cache/.l1-base.XXXXXX")
		"$here/mkinitramfs.sh" --base-only "$tmp"
		mv "$tmp" "$base" # atomic: a concurrent run sees all or nothing
	fi
	"$here/mkinitramfs.sh" --payload-only --no-gzip "$work/payload.cpio" "$payload"
	# The kernel unpacks concatenated archives one after the other, but takes an
	# uncompressed one only at a 4-byte aligned offset ("invalid magic" and the
	# payload silently missing otherwise): pad the base with NULs, which it skips.
	{
		cat "$base"
		head -c $(((4 - $(stat -c %s "$base") % 4) % 4)) /dev/zero
		cat "$work/payload.cpio"
	} >"$work/initrd.cpio"
}
[ -n "$disk" ] || build_initrd

# The payload's own limit (+5 s for a run that ignores SIGTERM, see init.sh)
# leaves time for boot (~8 s here, more on a loaded machine), the log dump and
# the poweroff, so that a hung payload still gives us L1's kernel log.
ptimeout=$((timeout_s - 60))

# Kernel command line:
#   console=ttyS0   all kernel and /init output on the serial port = our stdout
#   loglevel=5      warnings and worse go live to the console (seen even if L1
#                   dies); the full log comes from the dmesg dump at the end
#   panic=-1        reboot at once on a panic; with -no-reboot QEMU then exits,
#                   so a panic costs no time-out
#   rig.level=1     /init loads kvm, kvm-amd nested=1 and requires /dev/kvm
#   rig.timeout=S   /init's time limit for /payload/run
# Deliberately absent: panic_on_warn and oops=panic. A WARN or an oops must
# not stop the run: we want the payload's results and the whole log, and
# bad-patterns then fails the run.
#   rig.heartbeat=1 /init writes L1's uptime to ttyS1 every 5 s (below)
#   tsc=reliable    no clocksource watchdog on L1's TSC: on a loaded L0 the
#                   watchdog's HPET reads take long, and it marked the TSC
#                   unstable ("hpet read-back delay"), switching L1 to
#                   HPET under KVM's masterclock; the one run in which
#                   L0 lost L1's wakeup (tests/rig/README.md) had just done
#                   so. TCG's TSC follows L0's clock: it is reliable.
#   unknown_nmi_panic   an NMI from L0 (nothing else sends L1 one: no PMU
#                   under TCG) makes L1 panic with the stack it was
#                   running: how a stuck L1 says where it is (l1_where)
append="console=ttyS0 loglevel=5 panic=-1 rig.level=1 rig.timeout=$ptimeout"
append+=" rig.heartbeat=1 tsc=reliable unknown_nmi_panic"
[ -z "$hostfwd" ] || append+=" rig.net=1"
# --disk: Debian's initramfs mounts /dev/vda and runs systemd. quiet (and
# loglevel=5 again after it): systemd's status lines stay off the serial
# console, warnings and worse still reach it; no fsck of a fresh copy.
[ -z "$disk" ] || append="root=/dev/vda rw quiet $append fsck.mode=skip"

# QEMU options:
#   -accel tcg -cpu max   TCG's "max" CPU is an AMD one with SVM (nested
#                         virtualization) already on: no extra flag needed
#   -smp N -m 4G          L1 runs a QEMU for L2 beside its own work
#   -nographic            serial on stdio, no display
#   -no-reboot            L1's poweroff/panic ends QEMU
#   -nic none             no NIC: skips the iPXE option ROM (faster boot);
#                         with --hostfwd an e1000 without its ROM (romfile=)
#   -pidfile              for the reader to stop a hung L1
#   -serial ... -serial   ttyS0 on stdio with the monitor (-nographic's
#                         default, which any -serial replaces), ttyS1, L1's
#                         heartbeat, into a file here (an L1 booted from
#                         --disk writes none, and is not held to it)
#   --disk                the image as a virtio disk; cache=unsafe: it is
#                         this run's own copy, thrown away after it
qemu_cmd=("$QEMU" -accel "$ACCEL" -cpu max -smp "$smp" -m 4G -nographic -no-reboot
	-kernel "$kernel" -append "$append" -pidfile "$work/qemu.pid"
	-serial mon:stdio -chardev "file,id=heartbeat,path=$work/heartbeat"
	-serial chardev:heartbeat
	-chardev "pipe,id=rigmon,path=$work/mon" -mon chardev=rigmon,mode=readline)
mkfifo "$work/mon.in" "$work/mon.out"
if [ -n "$disk" ]; then
	qemu_cmd+=(-initrd "$disk/initrd.img"
		-drive "file=$disk/disk.img,format=raw,if=virtio,cache=unsafe")
else
	qemu_cmd+=(-initrd "$work/initrd.cpio")
fi
if [ -n "$hostfwd" ]; then
	qemu_cmd+=(-netdev "user,id=net0,restrict=on$hostfwd"
		-device "e1000,netdev=net0,romfile=")
else
	qemu_cmd+=(-nic none)
fi
# RIG_MONITOR=PATH: L0's QEMU monitor on a unix socket, to look into a
# stuck L1 (e.g. socat - UNIX-CONNECT:PATH, then info registers -a)
if [ -n "${RIG_MONITOR:-}" ]; then
	qemu_cmd+=(-monitor "unix:$RIG_MONITOR,server,nowait")
fi
# Soft lockups repeat every ~28 s on a hung CPU: three reports mean L1
# has been stuck for over a minute, far beyond any TCG hiccup.
HUNG_REPORTS_MAX=3
# While an L2 runs (===L2-BOOT=== to run-l2's last line), the console
# never stays silent long: L2 reaches /init 20-35 s after run-l2 starts
# it, and its test programs print as they go. A console silent for
# L2_SILENCE_LIMIT means L2 is stuck and has taken the one-CPU L1 with it
# (seen with two vCPUs in L2: in its boot before any code of this project
# ran, in the middle of a test, in its shutdown; tests/rig/README.md).
# Such a run is stopped and booted again from the start, at most
# RIG_L2_HANG_RETRIES times (make test sets it per stage from
# tests/stages; unset, none: a run by hand shows every hang), saying so.
# A hang our code causes every time still fails the run.
L2_SILENCE_LIMIT=120
# L1 stuck with it shows sooner: L1's heartbeat (its uptime on ttyS1 every
# 5 s, init.sh) stops. A heartbeat silent for L1_SILENCE_LIMIT while an
# L2 runs is the same hang, found 80 s sooner; it counts only once L1
# has beaten at all. The longest gap seen while the payload ran is
# printed at the end ("L1 heartbeat: longest gap"), to keep the limit
# honest.
# The heartbeat is watched through the whole payload, not only while an
# L2's console comes through L1's (the migrate stage's L2s write to
# files): L1 itself stuck, with no L2 on its console, is stopped too, and
# booted again only if l1_where finds L0's lost interrupt (L1's CPU with
# interrupts on and a vector pending in its local APIC, none in service,
# in every sample: L0's TCG did not deliver it; tests/rig/README.md
# tells where it was seen). Stuck any other way, the run fails, with the
# stack L1 printed for the NMI.
L1_SILENCE_LIMIT=40
L2_HANG_RETRIES=${RIG_L2_HANG_RETRIES:-0}
case "$L2_HANG_RETRIES" in
'' | *[!0-9]*) die "RIG_L2_HANG_RETRIES must be a count, not $L2_HANG_RETRIES" ;;
esac
printf '%q ' "${qemu_cmd[@]}" >"$logdir/qemu-cmdline"
echo >>"$logdir/qemu-cmdline"
echo "boot-l1.sh: booting L1 ($kver), timeout ${timeout_s}s"
t_qemu=$(now_us)

# QEMU, if it has not exited already (its pidfile goes with it)
qemu_stop() {
	local pid
	pid=$(cat "$work/qemu.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null || true
}

# l1_where WHY: before a stuck L1 is stopped, where its CPUs are: L0's
# monitor samples their registers three times and the local APIC (into
# l1-stuck.log). l1_nmi then sends an NMI, which L1 (unknown_nmi_panic)
# answers with a panic and the stack it was running, symbolized by its
# own kernel, on the console, if its CPU still takes NMIs from L0; QEMU
# then exits (panic=-1, -no-reboot). The caller kills it after.
# Writes $work/stuck-kind: lost-interrupt (IF set in every sample, a
# vector in IRR and none in ISR: a CPU takes such an interrupt at once,
# halted or not; L0's fault, not L1's) or stuck (anything else).
l1_where() {
	local i line flags n=0 open=0 irr=0 isr=0 out=$logdir/l1-stuck.log
	echo "boot-l1.sh: $1" >"$out"
	exec 7<>"$work/mon.out"
	for i in 1 2 3; do
		echo "info registers -a" >"$work/mon.in"
		sleep 1
	done
	echo "info lapic" >"$work/mon.in"
	sleep 1
	# what the monitor said so far, without waiting on a pipe that holds
	# nothing more
	timeout 2 cat <&7 | tr -d '\r' |
		grep -E '^(CPU#|RIP=|CS =|LVTT|Timer|ISR|IRR)' >>"$out" || true
	while read -r line; do
		case "$line" in
		RIP=*)
			n=$((n + 1))
			flags=${line#*RFL=}
			# RFL bit 9 is IF
			(((0x${flags%% *} & 0x200) == 0)) || open=$((open + 1))
			;;
		IRR*) [[ "$line" == *"(none)"* ]] || irr=1 ;;
		ISR*) [[ "$line" == *"(none)"* ]] || isr=1 ;;
		esac
	done <"$out"
	if [ "$n" -gt 0 ] && [ "$open" = "$n" ] && [ "$irr" = 1 ] && [ "$isr" = 0 ]; then
		echo lost-interrupt >"$work/stuck-kind"
	else
		echo stuck >"$work/stuck-kind"
	fi
	echo "boot-l1.sh: where L1 is: $(cat "$work/stuck-kind")" | tee -a "$out"
	exec 7<&-
	grep -E "^RIP=" "$out" | uniq | sed "s/^/boot-l1.sh: stuck L1: /" || true
}

# l1_nmi: the NMI (above), then up to 15 s for L1's panic to end QEMU
l1_nmi() {
	local i
	echo nmi >"$work/mon.in"
	for i in $(seq 15); do
		[ -s "$work/qemu.pid" ] && kill -0 "$(cat "$work/qemu.pid")" 2>/dev/null || break
		sleep 1
	done
}

# Read the serial output line by line: keep it all in console.log, stamp the
# moment /init starts, show everything but the dmesg dump live.
reader() {
	local line indump=0 hung_reports=0 inl2=0
	local init l2_boot l2_done dmesg_begin dmesg_end payload_begin
	init=$(rig_tag L1 INIT)
	payload_begin=$(rig_tag L1 PAYLOAD-BEGIN)
	l2_boot=$(rig_mark L2 BOOT)
	l2_done=$(rig_l2_done)
	dmesg_begin=$(rig_mark L1 DMESG-BEGIN)
	dmesg_end=$(rig_mark L1 DMESG-END)
	: >"$logdir/console.log"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$logdir/console.log"
		# the L2 watchdog's clock: when an L2's console last spoke
		[ "$inl2" = 1 ] && : >"$work/l2alive"
		case "$line" in
		*"$init"*) now_us >"$work/init.stamp" ;;
		# the heartbeat is watched from here to the dmesg dump
		*"$payload_begin"*) : >"$work/inpayload" ;;
		*"$l2_boot"*)
			inl2=1
			: >"$work/l2alive"
			;;
		"$l2_done"*)
			inl2=0
			rm -f "$work/l2alive"
			;;
		*"$dmesg_begin"*)
			indump=1
			rm -f "$work/inpayload"
			;;
		*"$dmesg_end"*) indump=0 ;;
		*"BUG: soft lockup"* | *"rcu_preempt detected stalls"*)
			# L2's console comes through L1's: its lines are L2's
			# to judge (run-l2), not a sign that L1 is stuck
			[ "$inl2" = 1 ] || hung_reports=$((hung_reports + 1))
			# A hung L1 never reaches its own time limit: stop QEMU
			# after a few reports instead of waiting out ours (the run
			# has failed anyway, bad-patterns holds these lines).
			if [ "$hung_reports" -eq "$HUNG_REPORTS_MAX" ]; then
				echo "boot-l1.sh: L1 is hung ($hung_reports lockup/stall reports): stopping QEMU" |
					tee "$work/hung"
				{
					l1_where "$(cat "$work/hung")"
					l1_nmi
					qemu_stop
				} &
			fi
			;;
		esac
		[ "$indump" = 1 ] || printf '%s\n' "$line"
	done
}

# Stop L1 when, while an L2 runs, the L2's console has been silent too
# long, or, while the payload runs, L1's heartbeat has. $work/l2hung:
# boot again (an L2 was running, or L0 lost L1's wakeup); $work/hung:
# the run fails.
l2_watchdog() {
	local spoke beat now why
	while sleep 5; do
		now=$(date +%s)
		why=
		if spoke=$(stat -c %Y "$work/l2alive" 2>/dev/null) &&
			[ $((now - spoke)) -gt "$L2_SILENCE_LIMIT" ]; then
			why="L2's console silent for ${L2_SILENCE_LIMIT}s"
		elif [ -f "$work/inpayload" ] && [ -s "$work/heartbeat" ]; then
			beat=$(stat -c %Y "$work/heartbeat")
			[ $((now - beat)) -le "$(cat "$work/beatgap" 2>/dev/null || echo 0)" ] ||
				echo $((now - beat)) >"$work/beatgap"
			[ $((now - beat)) -le "$L1_SILENCE_LIMIT" ] ||
				why="L1's heartbeat silent for ${L1_SILENCE_LIMIT}s"
		fi
		[ -n "$why" ] || continue
		l1_where "$why"
		if [ -f "$work/l2alive" ]; then
			echo "boot-l1.sh: $why while an L2 runs: L2 and L1 stuck; stopping L1" |
				tee "$work/l2hung"
		elif [ "$(cat "$work/stuck-kind")" = lost-interrupt ]; then
			echo "boot-l1.sh: $why: L0 did not deliver an interrupt pending on L1's CPU (l1-stuck.log); stopping L1" |
				tee "$work/l2hung"
		else
			echo "boot-l1.sh: $why, not L0's lost interrupt (l1-stuck.log); stopping L1" |
				tee "$work/hung"
		fi
		l1_nmi
		qemu_stop
		return
	done
}

boot_once() {
	rm -f "$work/l2alive" "$work/l2hung" "$work/qemu.pid" "$work/heartbeat" \
		"$work/inpayload" "$work/stuck-kind" \
		"$work/beatgap"
	l2_watchdog &
	watchdog=$!
	set +e
	# stdin from /dev/null: QEMU must not read (or put in raw mode) our
	# terminal.
	timeout -k 10 "$timeout_s" "${qemu_cmd[@]}" </dev/null 2>&1 | reader
	qemu_rc=${PIPESTATUS[0]}
	set -e
	kill "$watchdog" 2>/dev/null || true
	wait "$watchdog" 2>/dev/null || true
}

boot_once
retries=0
while [ -f "$work/l2hung" ] && [ "$retries" -lt "$L2_HANG_RETRIES" ]; do
	retries=$((retries + 1))
	mv "$logdir/console.log" "$logdir/console-l2-hung-$retries.log"
	[ ! -f "$logdir/l1-stuck.log" ] || mv "$logdir/l1-stuck.log" "$logdir/l1-stuck-$retries.log"
	rm -f "$work/init.stamp" "$work/hung"
	rig_retry_line "$retries" "$L2_HANG_RETRIES" "$(sed 's/^boot-l1.sh: //; s/; stopping L1$//' "$work/l2hung"), booting L1 again (the stuck run's log: console-l2-hung-$retries.log)"
	t_qemu=$(now_us)
	boot_once
done
t_end=$(now_us)

# Judge the run. Every reason to fail is collected, not just the first.
fail=()
case "$qemu_rc" in
0) ;;
124 | 137) fail+=("timed out after ${timeout_s}s") ;; # timeout(1): TERM, KILL
*) fail+=("QEMU exited with $qemu_rc") ;;
esac
[ -f "$work/hung" ] && fail+=("L1 hung (stopped early: $(cat "$work/hung"))")
[ -f "$work/l2hung" ] && fail+=("an L2 hung again after $retries retries")
con=$logdir/console.log

init_ran=0
if [ -f "$work/init.stamp" ]; then
	init_ran=1
	t_init=$(cat "$work/init.stamp")
	uptime=$(rig_value "$con" L1 INIT uptime)
	boot_msg="L1 /init ran $(secs $((t_init - t_qemu)))s after QEMU started (L1 uptime ${uptime}s)"
else
	boot_msg="L1 never ran /init"
fi
rig_fail() { fail+=("$*"); }
rig_judge L1 "$con" "$logdir" "$BAD_PATTERNS" "$init_ran"
rc=$(rig_value "$con" L1 RESULT rc)

echo "boot-l1.sh: $boot_msg"
echo "boot-l1.sh: total $(secs $((t_end - t0)))s (QEMU $(secs $((t_end - t_qemu)))s)"
[ ! -f "$work/beatgap" ] ||
	echo "boot-l1.sh: L1 heartbeat: longest gap $(cat "$work/beatgap")s while the payload ran (limit ${L1_SILENCE_LIMIT}s)"
if [ "${#fail[@]}" -gt 0 ]; then
	result=$(rig_result_line FAILED "$retries" "logs in $logdir")
else
	result=$(rig_result_line ok "$retries" "logs in $logdir")
fi
{
	echo "$result"
	echo "retries=$retries"
	echo "rc=${rc:-none}"
	echo "qemu_rc=$qemu_rc"
	echo "boot: $boot_msg"
	echo "total_s=$(secs $((t_end - t0)))"
	for f in "${fail[@]}"; do echo "fail: $f"; done
} >"$logdir/result"
for f in "${fail[@]}"; do echo "boot-l1.sh: FAIL: $f"; done
echo "$result"
[ "${#fail[@]}" -eq 0 ]
