#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Runs inside the rig's L1 (busybox sh) before kvm-perfmon.ko is loaded:
# the pv-perfmon device must refuse to start, with a message that says
# why, when it cannot work (no module, no KVM, bad files, a node this
# uid may not open). Prints PASS/FAIL lines and "N passed, N
# failed"; exit status 0 only if all passed.
#
#   qemu-errors.sh QEMU_BINARY FIRMWARE_DIR
set -u
qemu=$1
fw=$2
# rig_check: PASS/FAIL lines, counted
# shellcheck source=tests/rig/protocol.sh
. /etc/rig-protocol.sh
out=/tmp/qemu-errors.out
badmap=/tmp/qemu-errors.map

# expect NAME MESSAGE QEMU_ARGS...: QEMU exits non-zero at once and its
# error output contains MESSAGE
expect() {
	name=$1
	msg=$2
	shift 2
	timeout 60 "$qemu" -L "$fw" -M q35 -nodefaults -display none \
		-S "$@" >"$out" 2>&1 </dev/null
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -qF "$msg" "$out"
	rig_check $? "qemu: $name" \
		"exit $rc, want an error with '$msg'; got: $(head -c 300 "$out")"
}

if [ -e /dev/kvm-perfmon ]; then
	rig_check 1 "qemu: these checks need kvm-perfmon.ko not loaded"
	rig_summary ""
	exit 1
fi
expect "no module: realize fails" \
	"cannot open /dev/kvm-perfmon" -accel kvm -device pv-perfmon
expect "no KVM: realize fails" \
	"pv-perfmon requires KVM (-accel kvm)" -accel tcg -device pv-perfmon
printf 'generic 0x76 0x00 -> software task-clock\nbogus line\n' >"$badmap"
expect "bad event map: file and line named" \
	"$badmap:2:" -accel kvm -device "pv-perfmon,eventmap=$badmap"
badfilter=/tmp/qemu-errors.filter
printf 'deny\ngeneric 0x41/0xff 0/0\nfixed 99\n' >"$badfilter"
expect "bad filter: file, line and field named" \
	"$badfilter:3: the fixed counter index '99' is not a number" \
	-accel kvm -device "pv-perfmon,filter=$badfilter"
printf 'generic 0x41 0\n' >"$badfilter"
expect "filter without allow or deny refused" \
	"$badfilter:1: the first line must be 'allow' or 'deny'" \
	-accel kvm -device "pv-perfmon,filter=$badfilter"
expect "counters= with an AMD personality refused" \
	"counters=8: personality amd64 has 4 generic counters" -accel kvm \
	-device pv-perfmon,personality=amd64,counters=8

# The node exists but this process may not open it (what libvirt's device
# cgroup or AppArmor does to QEMU, here a root-only node opened by uid
# 1000): the error must say so, not suggest loading the module. /dev/kvm
# is opened to everyone for the run and both are restored before the
# module is loaded.
if [ -x /payload/setpriv ]; then
	kvm_mode=$(stat -c %a /dev/kvm)
	mknod -m 0600 /dev/kvm-perfmon c 1 3
	chmod 0666 /dev/kvm
	timeout 60 /payload/setpriv --reuid=1000 --regid=1000 --clear-groups \
		"$qemu" -L "$fw" -M q35 -nodefaults -display none -S \
		-accel kvm -device pv-perfmon >"$out" 2>&1 </dev/null
	rc=$?
	chmod "$kvm_mode" /dev/kvm
	rm -f /dev/kvm-perfmon
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] &&
		grep -qF "Permission denied; the node exists but this process may not open it" "$out" &&
		! grep -qF "loaded?" "$out"
	rig_check $? "qemu: node not openable: says so, no module hint" \
		"exit $rc; got: $(head -c 300 "$out")"
else
	rig_check 1 "qemu: /payload/setpriv missing (pv-guest.sh --qemu-errors copies it)"
fi
rig_summary ""
[ "${rig_failed:-0}" -eq 0 ]
