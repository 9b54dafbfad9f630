#!/bin/sh
# shellcheck shell=sh
# /init of the rig's initramfs (busybox ash), for L1 and L2 alike.
# Installed by mkinitramfs.sh; reads its settings from the kernel command line:
#   rig.level=N      1 (default): load kvm, kvm-amd nested=1, require /dev/kvm
#                    2: a guest of L1; no kvm
#   rig.timeout=S    time limit for /payload/run in seconds (default 600)
#   rig.hold=S       after the result line, wait S seconds before powering
#                    off: the host that reads the result stops the guest
#                    itself (run-l2 does: a two-vCPU L2's shutdown can
#                    hang the rig's one-CPU L1)
#   rig.net=1        bring up lo and eth0 as QEMU's user network wants
#                    it (10.0.2.15/24): boot-l1.sh --hostfwd
#   rig.heartbeat=1  write L1's uptime to ttyS1 every 5 s while it runs:
#                    L0 (boot-l1.sh) tells a stuck L1 from a quiet one by it
# Everything goes to /dev/console (ttyS0), so L0 (or L1, for an L2) sees it
# all. The markers (rig_mark) are the rig's protocol, defined and read in
# protocol.sh (installed at /etc/rig-protocol.sh by mkinitramfs.sh).
# No `set -e`: whatever fails, we still want the log dump and the poweroff.
set -u

export PATH=/bin:/sbin:/usr/bin:/usr/sbin
# shellcheck source=tests/rig/protocol.sh
. /etc/rig-protocol.sh
# The dynamic loader's default search path covers /lib/x86_64-linux-gnu, where
# mkinitramfs.sh puts the payload's shared libraries.

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# Reopen stdio on the console: the initial one may be missing if the
# archive's /dev/console node could not be created (non-root build).
exec </dev/console >/dev/console 2>&1
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
# debugfs/tracefs: for kvm tracepoints and kmemleak, when the kernel has them.
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
if [ -d /sys/kernel/tracing ]; then
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fi

level=1
ptimeout=600
hold=0
net=0
heartbeat=0
read -r cmdline </proc/cmdline
# Unquoted: split the command line into its words.
for arg in $cmdline; do
	case "$arg" in
	rig.level=*) level=${arg#rig.level=} ;;
	rig.timeout=*) ptimeout=${arg#rig.timeout=} ;;
	rig.hold=*) hold=${arg#rig.hold=} ;;
	rig.net=*) net=${arg#rig.net=} ;;
	rig.heartbeat=*) heartbeat=${arg#rig.heartbeat=} ;;
	esac
done
L="L$level"
read -r up _ </proc/uptime
rig_mark "$L" INIT "uptime=$up"
# where the kernel's text lies (KASLR): the RIPs of a lost L2's last VM
# exits, which L1 prints (run-l2.sh), are read against it
[ "$level" = 1 ] || echo "init: $L kernel text at $(sed -n 's/ [Tt] _text$//p' /proc/kallsyms)"

# Modules listed by mkinitramfs.sh, in dependency order, with parameters:
# "path [param=value ...]" per line.
if [ -f /etc/rig-modules ]; then
	while read -r ko params; do
		[ -n "$ko" ] || continue
		# $params unquoted on purpose: one word per module parameter.
		# shellcheck disable=SC2086
		if insmod "$ko" $params; then
			echo "$L: insmod ${ko##*/}${params:+ $params}: ok"
		else
			echo "$L: insmod ${ko##*/}${params:+ $params}: FAILED"
		fi
	done </etc/rig-modules
fi

# QEMU's user network: the guest is 10.0.2.15, the host forwards ports
# to it (there is no DHCP client to wait for in the initramfs)
if [ "$net" = 1 ]; then
	ip link set lo up
	if ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0; then
		echo "$L: eth0 10.0.2.15/24 up"
	else
		echo "$L: eth0 could not be brought up"
	fi
fi

# a timer-driven loop: it stops only when the whole kernel does (the
# two-vCPU L2 hang of tests/rig/README.md takes L1's one CPU with it)
if [ "$heartbeat" = 1 ] && [ -c /dev/ttyS1 ]; then
	while read -r up _ </proc/uptime; do
		echo "$up"
		sleep 5
	done >/dev/ttyS1 2>/dev/null &
fi

kvm_ok=1
if [ "$level" = 1 ]; then
	if [ -c /dev/kvm ]; then
		rig_mark "$L" KVM ok
	else
		kvm_ok=0
		rig_mark "$L" KVM missing
	fi
fi

rc=0
if [ "$kvm_ok" = 0 ]; then
	echo "$L: /dev/kvm missing: /payload/run not started"
	rc=255
elif [ -x /payload/run ]; then
	rig_mark "$L" PAYLOAD-BEGIN "timeout=${ptimeout}s"
	# busybox timeout sends SIGTERM at the limit (rc 143) and has no -k: the
	# outer one SIGKILLs (rc 137) a run that ignores SIGTERM, 5 s later.
	(cd /payload &&
		timeout -s KILL $((ptimeout + 5)) timeout "$ptimeout" ./run </dev/null)
	rc=$?
	rig_mark "$L" PAYLOAD-END
	case "$rc" in
	143 | 137)
		echo "$L: /payload/run killed at its time limit, ${ptimeout}s (rc=$rc)"
		# what is stuck, and where: the blocked tasks' stacks go to the log
		echo w >/proc/sysrq-trigger
		;;
	esac
else
	rig_mark "$L" PAYLOAD-NONE
fi

# kmemleak (only if the kernel has it: Debian's does not) reports leaks in
# its debugfs file, not in dmesg: scan, then append the report to the dump.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
fi
rig_mark "$L" DMESG-BEGIN
dmesg
[ -r /sys/kernel/debug/kmemleak ] && cat /sys/kernel/debug/kmemleak
rig_mark "$L" DMESG-END
rig_mark "$L" RESULT "rc=$rc"
sync
# poweroff -f does not wait for the console's output queue: setting the
# console's own modes again waits (TCSADRAIN) until the lines above are out
stty "$(stty -g)" 2>/dev/null
[ "$hold" -gt 0 ] 2>/dev/null && sleep "$hold"
poweroff -f
