#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-perfmon-libvirt-config against copies of qemu.conf and AppArmor's
# local abstraction in a scratch directory (its KVMPFM_QEMU_CONF and
# KVMPFM_APPARMOR_DIR): what enable adds, disable takes away exactly;
# both are idempotent, keep the file's mode and replace it whole (a new
# inode, by rename); a block whose markers do not pair (an edit by hand)
# is refused with the file left as it was, never deleted to its end.
# Runs in make test's unit stage; prints a line per check and
# "config-test: N passed, N failed".
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cfg=$TOP/libvirt/kvm-perfmon-libvirt-config
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
export KVMPFM_QEMU_CONF=$d/qemu.conf KVMPFM_APPARMOR_DIR=$d/apparmor.d
# rig_check: the PASS/FAIL lines and their counts
# shellcheck source=tests/rig/protocol.sh
. "$TOP/tests/rig/protocol.sh"
sum() { md5sum <"$1" | cut -d' ' -f1; }
run() { "$cfg" "$@" >"$d/out" 2>&1; }

fresh() {
	rm -rf "$d/apparmor.d"
	mkdir -p "$d/apparmor.d/abstractions"
	: >"$d/apparmor.d/abstractions/libvirt-qemu"
	printf '%s\n' '# qemu.conf' '#cgroup_device_acl = [ "/dev/null" ]' \
		'user = "libvirt-qemu"' >"$KVMPFM_QEMU_CONF"
	chmod 0600 "$KVMPFM_QEMU_CONF"
}

# enable, again, disable: back to the same bytes
fresh
orig=$(sum "$KVMPFM_QEMU_CONF")
ino=$(stat -c %i "$KVMPFM_QEMU_CONF")
run enable
rig_check $? "enable exits 0" "$(cat "$d/out")"
grep -q '"/dev/kvm-perfmon"' "$KVMPFM_QEMU_CONF"
rig_check $? "enable: qemu.conf lists /dev/kvm-perfmon"
[ "$(head -n 3 "$KVMPFM_QEMU_CONF" | md5sum | cut -d' ' -f1)" = "$orig" ]
rig_check $? "enable: what qemu.conf had comes first, unchanged"
[ "$(stat -c %a "$KVMPFM_QEMU_CONF")" = 600 ]
rig_check $? "enable: qemu.conf keeps its mode (0600)"
[ "$(stat -c %i "$KVMPFM_QEMU_CONF")" != "$ino" ]
rig_check $? "enable: qemu.conf replaced whole (renamed into place)"
grep -qx 'include <abstractions/kvm-perfmon> # kvm-perfmon-libvirt-config' \
	"$d/apparmor.d/local/abstractions/libvirt-qemu"
rig_check $? "enable: the local AppArmor abstraction includes kvm-perfmon's"
once=$(sum "$KVMPFM_QEMU_CONF")
run enable
[ "$(sum "$KVMPFM_QEMU_CONF")" = "$once" ]
rig_check $? "enable twice: qemu.conf unchanged"
[ "$(grep -c kvm-perfmon "$d/apparmor.d/local/abstractions/libvirt-qemu")" = 1 ]
rig_check $? "enable twice: one include line"
echo '#include <abstractions/site>' >>"$d/apparmor.d/local/abstractions/libvirt-qemu"
run disable
rig_check $? "disable exits 0" "$(cat "$d/out")"
[ "$(sum "$KVMPFM_QEMU_CONF")" = "$orig" ]
rig_check $? "disable: qemu.conf byte for byte as before enable"
[ "$(cat "$d/apparmor.d/local/abstractions/libvirt-qemu")" = '#include <abstractions/site>' ]
rig_check $? "disable: the site's own AppArmor line stays, ours is gone"
run disable
rig_check $? "disable twice exits 0"
[ "$(sum "$KVMPFM_QEMU_CONF")" = "$orig" ]
rig_check $? "disable twice: qemu.conf unchanged"

# a BEGIN marker without its END, settings after it: refused, untouched
for cmd in disable enable; do
	fresh
	run enable
	sed -i '/^# END kvm-perfmon$/d' "$KVMPFM_QEMU_CONF"
	echo 'max_processes = 42' >>"$KVMPFM_QEMU_CONF"
	before=$(sum "$KVMPFM_QEMU_CONF")
	run "$cmd"
	rc=$?
	[ "$rc" = 1 ] && grep -q 'markers of kvm-perfmon.s block do not pair' "$d/out"
	rig_check $? "$cmd with an END marker missing: refused, saying why" \
		"exit $rc: $(cat "$d/out")"
	[ "$(sum "$KVMPFM_QEMU_CONF")" = "$before" ]
	rig_check $? "$cmd with an END marker missing: qemu.conf untouched" \
		"$(tail -n 2 "$KVMPFM_QEMU_CONF" | tr '\n' ' ')"
done
run status
grep -q 'unpaired markers' "$d/out"
rig_check $? "status names the unpaired markers" "$(cat "$d/out")"

# an END before its BEGIN, and a doubled BEGIN
for edit in 's/^# BEGIN kvm-perfmon/# END kvm-perfmon\n&/' \
	's/^# BEGIN kvm-perfmon.*/&\n&/'; do
	fresh
	run enable
	sed -i "$edit" "$KVMPFM_QEMU_CONF"
	before=$(sum "$KVMPFM_QEMU_CONF")
	run disable
	[ $? = 1 ] && [ "$(sum "$KVMPFM_QEMU_CONF")" = "$before" ]
	rig_check $? "disable with markers out of order ($edit): refused, untouched"
done

# the admin's own list is left alone
fresh
echo 'cgroup_device_acl = [ "/dev/null", "/dev/kvm" ]' >>"$KVMPFM_QEMU_CONF"
before=$(sum "$KVMPFM_QEMU_CONF")
run enable
grep -q 'add "/dev/kvm-perfmon" to it by hand' "$d/out" &&
	[ "$(sum "$KVMPFM_QEMU_CONF")" = "$before" ]
rig_check $? "enable with the admin's own cgroup_device_acl: says so, untouched"

echo "config-test: ${rig_passed:-0} passed, ${rig_failed:-0} failed"
[ "${rig_failed:-0}" = 0 ]
