#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The libvirt stage's test inside L1, a Debian bookworm KVM host booted
# with systemd, the project's packages installed with apt
# (tests/libvirt/rig-libvirt.sh). Run by kvm-perfmon-libvirt-test.service
# once the host is up; speaks the rig's protocol on the serial console as
# the initramfs rig's /init does (===L1-INIT=== ... ===L1-RESULT rc=N===,
# /etc/rig-protocol.sh), so that L0 judges it with rig_judge, then powers
# L1 off.
#
# With a real libvirtd: the host is what Debian boots (systemd, cgroup v2,
# AppArmor with libvirt's profiles) and the project's packages are in
# place (DKMS built kvm-perfmon.ko for this kernel, it loaded at boot, its
# node is root:kvm 0660), qemu.conf untouched by them; the operator runs
# kvm-perfmon-libvirt-config enable --restart, as README.Debian says (our
# entry added to libvirt's default list, the rest of qemu.conf kept,
# libvirtd restarted; again: nothing changed, no restart); a domain with
# pv-perfmon (domain.xml.in) is defined and started, its guest counts and
# samples with pfmon, and is destroyed while it samples: the module then
# holds nothing (kvmpfm-stats --zero, which must fail while the guest
# samples) and kvm-perfmon-stat shows no VM; a domain without the device starts, runs
# and powers off as before; disable gives qemu.conf back byte for byte.
# Every check prints PASS/FAIL, the last line is
# "libvirt: N passed, N failed".
set -u
T=/usr/local/lib/kvm-perfmon-test
. /etc/rig-protocol.sh
# EMULATOR (the patched QEMU's path), HOST_PKGS (the project's packages
# installed in L1), written by rig-libvirt.sh
. "$T/test.conf"

# the L2 guest's limits under nested TCG: boot + pfmon, and its shutdown
L2_WAIT_S=300
LOGS=/var/log/libvirt/qemu

# rig_check (protocol.sh) prints and counts the checks
# check_cmd NAME COMMAND...: PASS if COMMAND exits 0 (its output shown)
check_cmd() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/    /'
	rig_check "$rc" "$name" "exit $rc"
}
virsh() { command virsh -c qemu:///system "$@"; }

# wait_for SECONDS COMMAND...: until COMMAND succeeds (false when the
# time runs out)
wait_for() {
	local n=0 limit=$1
	shift
	until "$@"; do
		[ "$n" -lt "$limit" ] || return 1
		sleep 1
		n=$((n + 1))
	done
}
# in_console NAME ERE: NAME's console file has a line matching ERE
in_console() {
	grep -aqE "$2" "$LOGS/$1-console.log" 2>/dev/null
}
# is_state NAME STATE: virsh says NAME is in STATE
is_state() {
	[ "$(virsh domstate "$1" 2>/dev/null)" = "$2" ]
}
# console_or_off NAME ERE: the line is there, or the domain stopped
console_or_off() {
	in_console "$1" "$2" || ! is_state "$1" running
}

# show NAME's console as it comes, indented, until stop_console
show_console() {
	: >"$LOGS/$1-console.log"
	chmod 644 "$LOGS/$1-console.log"
	tail -n +1 -F "$LOGS/$1-console.log" 2>/dev/null | sed -u "s/^/  $1| /" &
	tailer=$!
}
stop_console() {
	sleep 1
	pkill -P "$tailer" 2>/dev/null
	kill "$tailer" 2>/dev/null
	wait "$tailer" 2>/dev/null
}

# define_domain NAME MODE: the domain from domain.xml.in; without the
# pv-perfmon lines for MODE=plain
define_domain() {
	local xml=/run/kvm-perfmon-test/$1.xml
	mkdir -p /run/kvm-perfmon-test
	sed -e "s|@NAME@|$1|g" -e "s|@EMULATOR@|$EMULATOR|g" -e "s|@MODE@|$2|g" \
		"$T/domain.xml.in" >"$xml"
	[ "$2" = pv ] || sed -i '/<!-- pv-perfmon -->/d' "$xml"
	check_cmd "virsh define $1 ($2)" virsh define "$xml"
}

QEMU_CONF=/etc/libvirt/qemu.conf
# acl: qemu.conf's cgroup_device_acl as libvirt's own lens reads it, one
# entry a line (none: not set)
acl() {
	augtool -A -L <<EOF | sed -n 's|^/files.*/cgroup_device_acl/[0-9]* = ||p'
set /augeas/load/L/lens Libvirtd_qemu.lns
set /augeas/load/L/incl $QEMU_CONF
load
match /files$QEMU_CONF/cgroup_device_acl/*
EOF
}
# libvirt's default list, as the installed qemu.conf shows it commented out
default_acl() {
	sed -n '/^#cgroup_device_acl = \[/,/^#\]/p' "$QEMU_CONF" |
		grep -o '"[^"]*"' | tr -d '"'
}
libvirtd_pid() { systemctl show -p MainPID --value libvirtd.service; }
# qemu.conf's lines the operator's commands took away (<) or added (>)
conf_diff() {
	diff /run/kvm-perfmon-test/qemu.conf.installed "$QEMU_CONF" | grep "^$1"
}

# What the operator does once on a libvirt host (README.Debian): the
# packages changed no file of libvirt's; enable adds /dev/kvm-perfmon to
# cgroup_device_acl, keeping libvirt's default list and every other line,
# and restarts libvirtd; enable again changes and restarts nothing.
operator_enable() {
	local md5 pid0 pid1 e missing aa mode

	echo "== the operator's command: kvm-perfmon-libvirt-config enable --restart"
	mkdir -p /run/kvm-perfmon-test
	# the md5 dpkg recorded for the conffile, in whichever package has it
	md5=$(dpkg-query -W -f '${Conffiles}\n' |
		awk -v f="$QEMU_CONF" '$1 == f && $3 != "obsolete" { print $2; exit }')
	[ -n "$md5" ] && [ "$(md5sum <"$QEMU_CONF" | cut -d' ' -f1)" = "$md5" ]
	rig_check $? "installing the packages left qemu.conf as libvirt's package has it" \
		"dpkg's md5 ${md5:-none}, the file's $(md5sum <"$QEMU_CONF")"
	[ -z "$(acl)" ]
	rig_check $? "qemu.conf does not set cgroup_device_acl (libvirt's default list)"
	cp -p "$QEMU_CONF" /run/kvm-perfmon-test/qemu.conf.installed
	mode=$(stat -c '%U:%G %a' "$QEMU_CONF")
	# libvirtd leaves when idle (--timeout): a connection starts it again
	virsh version >/dev/null 2>&1
	pid0=$(libvirtd_pid)
	check_cmd "kvm-perfmon-libvirt-config enable --restart" \
		kvm-perfmon-libvirt-config enable --restart
	pid1=$(libvirtd_pid)
	echo "    cgroup_device_acl: $(acl | paste -sd ' ')"
	missing=
	for e in $(default_acl) /dev/kvm-perfmon; do
		acl | grep -qxF "$e" || missing+=" $e"
	done
	[ -n "$(default_acl)" ] && [ -z "$missing" ]
	rig_check $? "cgroup_device_acl: libvirt's default list ($(default_acl | paste -sd ' ')) and /dev/kvm-perfmon" \
		"missing:$missing"
	conf_diff '[<>]' | sed 's/^/    /'
	[ "$(conf_diff '<' | wc -l)" = 0 ] && [ "$(conf_diff '>' | wc -l)" = 1 ]
	rig_check $? "qemu.conf: one line added, every other line kept"
	[ "$(stat -c '%U:%G %a' "$QEMU_CONF")" = "$mode" ]
	rig_check $? "qemu.conf keeps its owner and mode ($mode)"
	[ "$pid1" != "$pid0" ] && [ "$pid1" != 0 ]
	rig_check $? "libvirtd restarted (pid $pid0 -> $pid1)"
	check_cmd "kvm-perfmon-libvirt-config enable again: unchanged, no restart" \
		sh -c "kvm-perfmon-libvirt-config enable --restart |
			tee /dev/stderr | grep -q 'unchanged: libvirtd not restarted'"
	[ "$(libvirtd_pid)" = "$pid1" ]
	rig_check $? "libvirtd not restarted by the second enable (pid $(libvirtd_pid))"
	kvm-perfmon-libvirt-config status | sed 's/^/    /'
	if grep -q 'libvirt-qemu\.d>' /etc/apparmor.d/abstractions/libvirt-qemu; then
		aa="read from libvirt-qemu.d"
	else
		aa="included from /etc/apparmor.d/local/abstractions/libvirt-qemu"
	fi
	check_cmd "AppArmor: kvm-perfmon's drop-in in effect ($aa)" \
		sh -c "kvm-perfmon-libvirt-config status | grep -qF 'in effect ($aa)'"
}

# disable gives qemu.conf back as the package installed it
operator_disable() {
	echo "== kvm-perfmon-libvirt-config disable"
	check_cmd "kvm-perfmon-libvirt-config disable" kvm-perfmon-libvirt-config disable
	cmp /run/kvm-perfmon-test/qemu.conf.installed "$QEMU_CONF"
	rig_check $? "qemu.conf byte for byte as installed again"
	! grep -q kvm-perfmon /etc/apparmor.d/local/abstractions/libvirt-qemu 2>/dev/null
	rig_check $? "no kvm-perfmon line left in local/abstractions/libvirt-qemu"
}

checks() {
	local kver ko st out n

	echo "== the host: what Debian boots"
	kver=$(uname -r)
	echo "L1 kernel $kver; $(grep -m1 PRETTY_NAME /etc/os-release)"
	[ "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] ||
		[ "$(readlink /proc/1/exe)" = /lib/systemd/systemd ]
	rig_check $? "PID 1 is systemd ($(readlink /proc/1/exe))"
	st=$(stat -fc %T /sys/fs/cgroup)
	[ "$st" = cgroup2fs ]
	rig_check $? "cgroup v2 mounted on /sys/fs/cgroup ($st)"
	check_cmd "AppArmor enabled (aa-enabled)" aa-enabled
	aa-status 2>/dev/null | grep -qx '   libvirtd'
	rig_check $? "AppArmor enforces libvirtd's profile"
	echo "systemctl is-system-running: $(systemctl is-system-running)"
	systemctl --failed --no-legend | sed 's/^/    failed unit: /'

	echo "== the project's packages (installed with apt on L0, in this image)"
	# shellcheck disable=SC2086 # a list of names
	dpkg-query -W -f '    ${Package} ${Version} ${db:Status-Abbrev}\n' $HOST_PKGS
	for p in $HOST_PKGS; do
		[ "$(dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ]
		rig_check $? "package $p installed"
	done
	check_cmd "dkms status (kvm-perfmon built for $kver)" \
		sh -c "dkms status | grep -E 'kvm-perfmon.*$kver.*installed'"
	ko=$(modinfo -n kvm-perfmon 2>&1)
	case "$ko" in
	/lib/modules/"$kver"/updates/dkms/*) rig_check 0 "kvm-perfmon.ko from DKMS: $ko" ;;
	*) rig_check 1 "kvm-perfmon.ko from DKMS" "modinfo -n: $ko" ;;
	esac
	grep -q '^kvm_perfmon ' /proc/modules
	rig_check $? "kvm-perfmon.ko loaded at boot"
	st=$(stat -c '%F %U:%G %a' /dev/kvm-perfmon 2>&1)
	[ "$st" = "character special file root:kvm 660" ]
	rig_check $? "/dev/kvm-perfmon: $st"
	check_cmd "the patched QEMU has pv-perfmon ($EMULATOR)" \
		sh -c "'$EMULATOR' -device help | grep '\"pv-perfmon\"'"
	check_cmd "Debian's QEMU is still there" \
		sh -c "dpkg-query -W qemu-system-x86 && test -x /usr/bin/qemu-system-x86_64"
	check_cmd "libvirtd is active" systemctl is-active libvirtd.service
	check_cmd "virsh version" virsh version

	operator_enable

	echo "== a domain with pv-perfmon: count, sample, destroy while sampling"
	define_domain pv pv
	show_console pv
	check_cmd "virsh start pv" virsh start pv
	wait_for "$L2_WAIT_S" console_or_off pv '^l2: sampling until destroyed'
	in_console pv '^l2: sampling until destroyed'
	rig_check $? "pv: the guest counted and sampled, and samples on"
	stop_console
	out=$LOGS/pv-console.log
	n=$(awk -F, '$4 == "vcpu_run_ns" && $5 > 0' "$out" | wc -l)
	[ "$n" = 1 ]
	rig_check $? "pv: pfmon counted vcpu_run_ns (one CSV line, count > 0)"
	n=$(awk -F, '$4 == "vm_exits" && $5 > 0' "$out" | wc -l)
	[ "$n" = 1 ]
	rig_check $? "pv: pfmon counted vm_exits (one CSV line, count > 0)"
	grep -aqE '^sampling profile of .*: [1-9][0-9]* samples' "$out"
	rig_check $? "pv: pfmon printed a sampling profile with samples"
	grep -aq '^l2: counting and sampling done rc=0' "$out"
	rig_check $? "pv: every pfmon command in the guest exited 0"
	grep -v -e '^#' -e '^$' /etc/rig-bad-patterns >/run/kvm-perfmon-test/patterns
	! grep -a -E -f /run/kvm-perfmon-test/patterns "$out"
	rig_check $? "pv: no bad line (tests/rig/bad-patterns) in the guest's console"
	grep -aq -- '-device pv-perfmon' "$LOGS/pv.log"
	rig_check $? "pv: the QEMU command line libvirt logged has -device pv-perfmon ($LOGS/pv.log)"
	# the table: a header line, then a line per VM
	check_cmd "kvm-perfmon-stat while the guest samples (one VM)" \
		sh -c "kvm-perfmon-stat | tee /dev/stderr |
			awk 'NR > 1 && !/no VM is bound/ { n++ } END { exit n != 1 }'"
	echo "    kvmpfm-stats: $("$T/kvmpfm-stats" 2>&1)"
	# the leak check must see the sampling guest's counters: else it
	# could not fail after the destroy either
	! "$T/kvmpfm-stats" --zero >/dev/null 2>&1
	rig_check $? "kvmpfm-stats --zero fails while the guest samples"
	check_cmd "virsh destroy pv (while its guest samples)" virsh destroy pv
	wait_for 30 is_state pv "shut off"
	rig_check $? "pv: shut off after destroy"
	check_cmd "module stats at zero after destroy (kvmpfm-stats --zero)" \
		"$T/kvmpfm-stats" --zero
	echo "    kvmpfm-stats: $("$T/kvmpfm-stats" 2>&1)"
	check_cmd "kvm-perfmon-stat after destroy (no VM)" \
		sh -c "kvm-perfmon-stat | tee /dev/stderr | grep -q 'no VM is bound'"
	check_cmd "virsh undefine pv" virsh undefine pv

	echo "== a domain without the device runs as before"
	define_domain plain plain
	show_console plain
	check_cmd "virsh start plain" virsh start plain
	wait_for "$L2_WAIT_S" is_state plain "shut off"
	rig_check $? "plain: the guest ran and powered off by itself"
	stop_console
	grep -aq -- 'pv-perfmon' "$LOGS/plain.log"
	rig_check $((!$?)) "plain: no pv-perfmon on its QEMU command line"
	mkdir -p /run/kvm-perfmon-test/plain
	rig_fail() { rig_check 1 "plain: guest run" "$*"; }
	grep -aq "$(rig_tag L2 INIT)" "$LOGS/plain-console.log"
	rig_judge L2 "$LOGS/plain-console.log" /run/kvm-perfmon-test/plain \
		/etc/rig-bad-patterns "$((!$?))"
	check_cmd "plain: the guest's result line says rc=0" \
		grep -a "$(rig_mark L2 RESULT rc=0)" "$LOGS/plain-console.log"
	check_cmd "module stats still at zero" "$T/kvmpfm-stats" --zero
	check_cmd "virsh undefine plain" virsh undefine plain

	operator_disable

	echo "== the host's log"
	out=$(dmesg | grep -a 'apparmor="DENIED"')
	[ -z "$out" ]
	rig_check $? "no AppArmor denial" "$(printf '%s\n' "$out" | head -n 3)"
	echo "libvirtd's errors in the journal (for the record):"
	journalctl -b -u libvirtd.service -p err --no-pager -q | tail -n 10 | sed 's/^/    /'

	echo "libvirt: ${rig_passed:-0} passed, ${rig_failed:-0} failed"
	[ "${rig_failed:-0}" = 0 ]
}

if [ "${1:-}" = --checks ]; then
	checks
	exit
fi

rig_mark L1 INIT "uptime=$(cut -d' ' -f1 /proc/uptime)"
udevadm settle -t 30
if [ -c /dev/kvm ]; then
	rig_mark L1 KVM ok
	limit=$(sed -n 's/.*rig\.timeout=\([0-9]*\).*/\1/p' /proc/cmdline)
	rig_mark L1 PAYLOAD-BEGIN "timeout=${limit:=600}s"
	timeout -k 5 "$limit" "$0" --checks
	rc=$?
	rig_mark L1 PAYLOAD-END
else
	rig_mark L1 KVM missing
	rc=1
fi
rig_mark L1 DMESG-BEGIN
dmesg
rig_mark L1 DMESG-END
rig_mark L1 RESULT "rc=$rc"
systemctl --no-block --force poweroff
