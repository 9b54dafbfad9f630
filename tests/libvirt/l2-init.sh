#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest's init in the libvirt stage (/usr/local/sbin/l2-init in the L2
# image, init= on the domain's <cmdline>): not systemd, to save the boot
# time under nested virtualization; the root filesystem stays read-only.
# perfmon2.ko (the perfmon2-dkms package, built by DKMS for this kernel),
# libperfmon2 and pfmon are the Debian packages installed in the image.
#
# l2.mode=pv     the domain has the pv-perfmon device: pfmon counts, then
#                samples a short command, then counts (printing the counts
#                of every INTERVAL_MS) and samples commands that never end
#                until L1 destroys the domain ("sampling until destroyed"
#                first)
# l2.mode=plain  the domain has no pv-perfmon device: perfmon2.ko does not
#                load, pfmon says so; the guest powers off by itself
# Its lines go to the serial console (a file in L1, tests/libvirt/l1-test.sh
# reads it), in the rig's protocol (/etc/rig-protocol.sh).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
. /etc/rig-protocol.sh

INTERVAL_MS=2000
mode=$(sed -n 's/.*l2\.mode=\([a-z]*\).*/\1/p' /proc/cmdline)
rig_mark L2 INIT "uptime=$(cut -d' ' -f1 /proc/uptime)"
rig_mark L2 PAYLOAD-BEGIN "timeout=0s"
rc=0
run() {
	echo "\$ $*"
	"$@"
	r=$?
	echo "(exit $r)"
	return $r
}

echo "l2: kernel $(uname -r), mode $mode"
echo "l2: packages: $(dpkg-query -W -f '${Package} ${Version} ${Status}, ' \
	perfmon2-dkms libperfmon2-3 pfmon 2>&1)"
ko=$(modinfo -n perfmon2 2>&1)
echo "l2: modinfo -n perfmon2: $ko"
case "$mode" in
pv)
	run modprobe perfmon2 || rc=1
	run pfmon --version || rc=1
	# CPU-bound commands from coreutils for pfmon to count and sample
	run pfmon -x , -e vcpu_run_ns,vm_exits -- dd if=/dev/zero \
		of=/dev/null bs=4k count=200000 || rc=1
	run pfmon -e vcpu_run_ns --smpl-period 1000000 -- dd if=/dev/zero \
		of=/dev/null bs=4k count=200000 || rc=1
	echo "l2: counting and sampling done rc=$rc"
	# never return: L1 saves and restores the domain, migrates it to
	# another libvirtd and destroys it there while it counts and samples;
	# the counts of every INTERVAL_MS go to the console as CSV rows
	# (time first), by which L1 sees that they go on after each move
	pfmon -x , -I "$INTERVAL_MS" -e vcpu_run_ns,vm_exits -- \
		sh -c 'while :; do :; done' &
	echo "l2: sampling until destroyed"
	pfmon -e vcpu_run_ns --smpl-period 100000 -- sh -c 'while :; do :; done'
	echo "l2: the endless sampling ended (exit $?)"
	rc=1
	;;
plain)
	# no device: the module refuses to load, pfmon says why
	if run modprobe perfmon2; then
		echo "l2: perfmon2.ko loaded without the pv-perfmon device"
		rc=1
	fi
	if run pfmon -e vcpu_run_ns -- true; then
		echo "l2: pfmon counted without the device"
		rc=1
	fi
	run dd if=/dev/zero of=/dev/null bs=4k count=20000 || rc=1
	echo "l2: plain guest done rc=$rc"
	;;
*)
	echo "l2: unknown l2.mode '$mode'"
	rc=1
	;;
esac
rig_mark L2 PAYLOAD-END
# The kernel log, which L1 judges against tests/rig/bad-patterns
# (rig_judge): whole when a line of it matches one (or the patterns are
# missing), else its length only. It crosses a serial port of a nested
# guest, at about a kilobyte a second.
grep -v -e '^#' -e '^$' /etc/rig-bad-patterns >/tmp/patterns 2>/dev/null
rig_mark L2 DMESG-BEGIN
if [ ! -s /tmp/patterns ] || dmesg | grep -q -E -f /tmp/patterns; then
	dmesg
else
	echo "l2: kernel log: $(dmesg | wc -l) lines, none of them in tests/rig/bad-patterns"
fi
rig_mark L2 DMESG-END
rig_mark L2 RESULT "rc=$rc"
echo o >/proc/sysrq-trigger
sleep 60
