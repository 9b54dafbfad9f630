#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The libvirt stage's test inside L1, a Debian trixie KVM host booted
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
# node is root:kvm 0660), qemu.conf untouched by them; the exporter's unit
# installed disabled, enabled bound to the node (stopped with the module,
# started again with it, never failed), restarted by an upgrade (the
# tools package installed again); the operator runs
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
# the guest's counting interval (l2-init.sh's INTERVAL_MS)
INTERVAL_S=2
LOGS=/var/log/libvirt/qemu

# section TITLE: a heading, with L1's uptime (where the stage's time goes)
section() { echo "== [$(cut -d' ' -f1 /proc/uptime)s] $*"; }
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
# the exporter's scrape on loopback (bash's /dev/tcp: no curl in L1)
scrape() {
	(
		exec 3<>/dev/tcp/127.0.0.1/17995 || exit 1
		printf 'GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
		timeout 10 cat <&3 | tr -d '\r'
	) 2>/dev/null
}
exporter_state() { systemctl show -p ActiveState --value kvm-perfmon-exporter.service; }
exporter_pid() { systemctl show -p MainPID --value kvm-perfmon-exporter.service; }
is_exporter() { [ "$(exporter_state)" = "$1" ]; }
scrape_up() { scrape | grep -q '^kvmperfmon_up 1'; }

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

# The counts the guest prints every INTERVAL_MS while it samples (l2-init.sh:
# pfmon -I, CSV rows with the time first): vcpu_run_ns's, one a line
intervals() {
	awk -F, '$1 > 0 && $4 == "vcpu_run_ns" { print $5 }' "$LOGS/$1-console.log"
}
# counted_rows NAME N: NAME's guest printed two rows after its first N
# in which vcpu_run_ns grew
counted_rows() {
	[ "$(intervals "$1" | awk -v n="$2" 'NR > n && $1 + 0 > 0' | wc -l)" -ge 2 ]
}
# counts_go_on NAME N0 WHAT: called once WHAT is done, with N0 the rows
# before it began; since, the guest printed two rows in which its counts
# grew, and no row is a counter that went back (pfmon's delta of a reset
# counter wraps to more than 2^63): the guest's context and its counts
# came through WHAT. A row may be 0: after a long pause (managedsave),
# the guest's scheduler charges the pause to the task that ran when it
# began, and runs the other busy loop alone until it catches up.
counts_go_on() {
	local n0=$2 n1 rows
	n1=$(intervals "$1" | wc -l)
	wait_for "$L2_WAIT_S" counted_rows "$1" "$n1"
	rows=$(intervals "$1" | tail -n +"$((n0 + 1))" | paste -sd ' ')
	echo "    vcpu_run_ns every ${INTERVAL_S}s since $3 began: $rows"
	intervals "$1" | awk -v n0="$n0" -v n1="$n1" -v max="$((INTERVAL_S * 4))e9" '
		NR > n0 && ($1 + 0 < 0 || $1 + 0 > max) { bad++ }
		NR > n1 && $1 + 0 > 0 { grew++ }
		END { exit !(grew >= 2 && !bad) }'
	rig_check $? "$1: the guest's counts go on after $3 (two rows since in which vcpu_run_ns grew; each row >= 0 and < ${INTERVAL_S}s x 4)"
}

# why_stopped NAME: when NAME is not running, what says why, for the
# record: libvirt's reason, the end of QEMU's log and of the guest's
# console (neither leaves L1 otherwise)
why_stopped() {
	is_state "$1" running && return 0
	echo "    $1 is not running: $(virsh domstate --reason "$1" 2>&1)"
	tail -n 20 "/var/log/libvirt/qemu/$1.log" 2>/dev/null | sed "s/^/    qemu $1| /"
	tail -n 40 "$LOGS/$1-console.log" 2>/dev/null | sed "s/^/  $1| /"
}

# managedsave, then start: the pv-perfmon device's state (the guest's
# contexts, their counts and sampling) goes to the save file and back; the
# module holds nothing while the domain is saved
save_restore() {
	local n0
	section "virsh managedsave $1 while its guest samples, then virsh start"
	n0=$(intervals "$1" | wc -l)
	check_cmd "virsh managedsave $1" virsh managedsave "$1"
	check_cmd "$1: saved (virsh dominfo: Managed save: yes)" \
		sh -c "virsh dominfo '$1' | grep -E '^Managed save: +yes'"
	check_cmd "module stats at zero while $1 is saved (kvmpfm-stats --zero)" \
		"$T/kvmpfm-stats" --zero
	check_cmd "virsh start $1 (restores the saved state)" virsh start "$1"
	counts_go_on "$1" "$n0" "managedsave and start"
	check_cmd "kvm-perfmon-stat after the restore (one VM, $1)" \
		sh -c "kvm-perfmon-stat | tee /dev/stderr | grep -qw '$1'"
}

# The migration's destination: a second libvirtd on this host, as another
# host's would be. Its own configuration, state and sockets (bind mounts in
# a mount namespace of its own over /etc/libvirt, /run/libvirt,
# /var/lib/libvirt/qemu, /var/cache/libvirt and virt-aa-helper's
# /etc/apparmor.d/libvirt), its own host UUID (libvirt refuses to migrate
# to the host itself), QEMU's output in files (virtlogd is the source's).
# The domain's files (kernel, initramfs, read-only disk) are the same
# paths, as shared storage would give.
DST=/run/kvm-perfmon-test/dst
DST_URI="qemu+unix:///system?socket=$DST/run/libvirt-sock"
dst_virsh() { command virsh -c "$DST_URI" "$@"; }
dst_is_state() { [ "$(dst_virsh domstate "$1" 2>/dev/null)" = "$2" ]; }
dst_gone() { ! dst_virsh domstate "$1" >/dev/null 2>&1; }
# dst_start QEMU_CONF: the destination's libvirtd with qemu.conf QEMU_CONF
dst_start() {
	mkdir -p "$DST"
	if [ ! -d "$DST/etc" ]; then
		cp -a /etc/libvirt "$DST/etc"
		rm -rf "$DST/etc/qemu/"*.xml "$DST/etc/qemu/autostart"
		printf 'host_uuid = "%s"\n' "$(cat /proc/sys/kernel/random/uuid)" \
			>>"$DST/etc/libvirtd.conf"
		mkdir -p "$DST/run" "$DST/lib" "$DST/cache" "$DST/apparmor"
		cp -a /etc/apparmor.d/libvirt/TEMPLATE.* "$DST/apparmor/"
	fi
	cp "$1" "$DST/etc/qemu.conf"
	grep -q '^stdio_handler' "$DST/etc/qemu.conf" ||
		echo 'stdio_handler = "file"' >>"$DST/etc/qemu.conf"
	unshare --mount --propagation private sh -c "
		mount --bind $DST/etc /etc/libvirt &&
		mount --bind $DST/run /run/libvirt &&
		mount --bind $DST/lib /var/lib/libvirt/qemu &&
		mount --bind $DST/cache /var/cache/libvirt &&
		mount --bind $DST/apparmor /etc/apparmor.d/libvirt &&
		exec /usr/sbin/libvirtd -p /run/libvirt/libvirtd.pid" \
		>>"$DST/libvirtd.log" 2>&1 &
	dst_pid=$!
	wait_for 60 dst_virsh version >/dev/null 2>&1
	rig_check $? "the destination's libvirtd answers ($DST_URI)" \
		"$(tail -n 5 "$DST/libvirtd.log")"
}
dst_stop() {
	kill "$dst_pid" 2>/dev/null
	wait "$dst_pid" 2>/dev/null
}
# in_dst COMMAND...: COMMAND in the destination's mount namespace
in_dst() {
	nsenter --mount --target "$(cat "$DST/run/libvirtd.pid")" -- "$@"
}
# migrate NAME OUT: virsh migrate --live NAME to the destination, as
# NAME-dst there, its output in OUT. The destination's XML (--xml) says
# <seclabel type='none' model='apparmor'/>: AppArmor profiles are named
# by the domain's UUID, and both libvirtd load theirs into one kernel,
# where the source's is loaded already ("cannot load AppArmor profile").
# Two hosts have a kernel each; the drop-in is checked on the source.
migrate() {
	local xml=/run/kvm-perfmon-test/$1-dst.xml
	virsh dumpxml --migratable "$1" |
		sed -e "/<seclabel [^>]*model='apparmor'/d" \
			-e "s|</devices>|&\n  <seclabel type='none' model='apparmor'/>|" >"$xml"
	virsh migrate --live --verbose --dname "$1-dst" --xml "$xml" "$1" \
		"$DST_URI" tcp://127.0.0.1 >"$2" 2>&1
}

# A destination without /dev/kvm-perfmon in its cgroup_device_acl (the
# operator forgot kvm-perfmon-libvirt-config enable there) refuses the
# guest: virsh says why, and the source goes on as if nothing happened.
# Once enabled there, the live migration moves the guest, its counts go on.
migrations() {
	local n0 rc out=/run/kvm-perfmon-test/migrate.out
	section "virsh migrate --live $1 to another libvirtd while its guest samples"
	dst_start /run/kvm-perfmon-test/qemu.conf.installed
	why_stopped "$1"
	n0=$(intervals "$1" | wc -l)
	migrate "$1" "$out"
	rc=$?
	sed 's/^/    virsh: /' "$out"
	[ "$rc" != 0 ] && grep -q 'kvm-perfmon' "$out"
	rig_check $? "a destination without kvm-perfmon-libvirt-config enable: virsh migrate fails and names /dev/kvm-perfmon" \
		"exit $rc"
	is_state "$1" running
	rig_check $? "$1: still running on the source after the refusal"
	counts_go_on "$1" "$n0" "the refused migration"

	section "the destination's operator runs kvm-perfmon-libvirt-config enable"
	check_cmd "kvm-perfmon-libvirt-config enable (the destination's qemu.conf)" \
		in_dst kvm-perfmon-libvirt-config enable
	cp "$DST/etc/qemu.conf" /run/kvm-perfmon-test/dst-qemu.conf
	dst_stop
	dst_start /run/kvm-perfmon-test/dst-qemu.conf
	n0=$(intervals "$1" | wc -l)
	migrate "$1" "$out"
	rc=$?
	sed 's/^/    virsh: /' "$out"
	rig_check "$rc" "virsh migrate --live $1 (--dname $1-dst)" "exit $rc"
	wait_for 30 dst_is_state "$1-dst" running
	rig_check $? "$1-dst: running on the destination"
	is_state "$1" "shut off"
	rig_check $? "$1: shut off on the source"
	counts_go_on "$1" "$n0" "the live migration"
	check_cmd "kvm-perfmon-stat after the migration (one VM, $1-dst)" \
		sh -c "kvm-perfmon-stat | tee /dev/stderr | grep -qw '$1-dst'"
	grep -aq -- '-device pv-perfmon' /var/log/libvirt/qemu/"$1"-dst.log
	rig_check $? "$1-dst: the destination's QEMU has -device pv-perfmon"
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

	section "the operator's command: kvm-perfmon-libvirt-config enable --restart"
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
	section "kvm-perfmon-libvirt-config disable"
	check_cmd "kvm-perfmon-libvirt-config disable" kvm-perfmon-libvirt-config disable
	cmp /run/kvm-perfmon-test/qemu.conf.installed "$QEMU_CONF"
	rig_check $? "qemu.conf byte for byte as installed again"
	! grep -q kvm-perfmon /etc/apparmor.d/local/abstractions/libvirt-qemu 2>/dev/null
	rig_check $? "no kvm-perfmon line left in local/abstractions/libvirt-qemu"
}

# the exporter's unit as Debian runs it: not enabled by the package;
# enabled, bound to the module's node (down with the module, up again
# with it, never failed); restarted by an upgrade; its documentation there
exporter_unit() {
	local pid0 pid1 doc out sec

	section "kvm-perfmon-exporter.service"
	[ "$(systemctl is-enabled kvm-perfmon-exporter.service)" = disabled ] &&
		is_exporter inactive
	rig_check $? "the package installs the exporter disabled and stopped" \
		"$(systemctl is-enabled kvm-perfmon-exporter.service) $(exporter_state)"
	for doc in $(systemctl show -p Documentation --value kvm-perfmon-exporter.service |
		tr -d '"'); do
		case $doc in
		file://*) test -f "${doc#file://}" ;;
		man:*)
			out=${doc#man:}
			sec=${out#*(}
			compgen -G "/usr/share/man/man${sec%)}/${out%(*}.${sec%)}*" >/dev/null
			;;
		*) false ;;
		esac
		rig_check $? "Documentation= $doc is there"
	done
	check_cmd "systemctl enable --now kvm-perfmon-exporter" \
		systemctl enable --now kvm-perfmon-exporter.service
	wait_for 20 scrape_up
	rig_check $? "enabled: active, and its scrape says kvmperfmon_up 1" \
		"$(exporter_state); $(scrape | head -n 20)"
	scrape | grep -q '^kvmperfmon_build_info{version="[^"]*",api_version="[0-9]*"} 1' &&
		scrape | grep -q '^Content-Type: text/plain; version=0.0.4'
	rig_check $? "its scrape: build_info, the text format's Content-Type"
	check_cmd "modprobe -r kvm_perfmon (no VM bound)" modprobe -r kvm_perfmon
	wait_for 20 is_exporter inactive
	rig_check $? "without the module: the exporter stopped, not failed ($(exporter_state))"
	! systemctl is-failed --quiet kvm-perfmon-exporter.service
	rig_check $? "systemctl is-failed: no"
	check_cmd "modprobe kvm_perfmon" modprobe kvm_perfmon
	wait_for 30 scrape_up
	rig_check $? "the module back: the exporter started again, kvmperfmon_up 1" \
		"$(exporter_state)"
	pid0=$(exporter_pid)
	check_cmd "dpkg -i kvm-perfmon-tools.deb (an upgrade: the same package again)" \
		env DEBIAN_FRONTEND=noninteractive dpkg -i "$T/kvm-perfmon-tools.deb"
	wait_for 20 scrape_up
	pid1=$(exporter_pid)
	[ "$pid1" != "$pid0" ] && [ "$pid1" != 0 ]
	rig_check $? "the upgrade restarted the running exporter (pid $pid0 -> $pid1)"
	check_cmd "systemctl disable --now kvm-perfmon-exporter" \
		systemctl disable --now kvm-perfmon-exporter.service
	systemctl --failed --no-legend | grep -q kvm-perfmon
	rig_check $((!$?)) "no kvm-perfmon unit failed"
}

checks() {
	local kver ko st out n

	section "the host: what Debian boots"
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

	section "the project's packages (installed with apt on L0, in this image)"
	# shellcheck disable=SC2086 # a list of names
	dpkg-query -W -f '    ${Package} ${Version} ${db:Status-Abbrev}\n' $HOST_PKGS
	for p in $HOST_PKGS; do
		[ "$(dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ]
		rig_check $? "package $p installed"
	done
	check_cmd "dkms status (kvm-perfmon built for $kver)" \
		sh -c "dkms status -k '$kver' | grep -F kvm-perfmon | grep -q installed"
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

	exporter_unit

	operator_enable

	section "a domain with pv-perfmon: count, sample, destroy while sampling"
	define_domain pv pv
	show_console pv
	check_cmd "virsh start pv" virsh start pv
	wait_for "$L2_WAIT_S" console_or_off pv '^l2: sampling until destroyed'
	in_console pv '^l2: sampling until destroyed'
	rig_check $? "pv: the guest counted and sampled, and samples on"
	stop_console
	out=$LOGS/pv-console.log
	n=$(awk -F, '$1 == "" && $4 == "vcpu_run_ns" && $5 > 0' "$out" | wc -l)
	[ "$n" = 1 ]
	rig_check $? "pv: pfmon counted vcpu_run_ns (one CSV line, count > 0)"
	n=$(awk -F, '$1 == "" && $4 == "vm_exits" && $5 > 0' "$out" | wc -l)
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
	save_restore pv
	migrations pv
	check_cmd "virsh destroy pv-dst (while its guest samples)" dst_virsh destroy pv-dst
	wait_for 30 dst_gone pv-dst
	rig_check $? "pv-dst: gone from the destination after destroy"
	dst_stop
	check_cmd "module stats at zero after destroy (kvmpfm-stats --zero)" \
		"$T/kvmpfm-stats" --zero
	echo "    kvmpfm-stats: $("$T/kvmpfm-stats" 2>&1)"
	check_cmd "kvm-perfmon-stat after destroy (no VM)" \
		sh -c "kvm-perfmon-stat | tee /dev/stderr | grep -q 'no VM is bound'"
	check_cmd "virsh undefine pv" virsh undefine pv

	section "a domain without the device runs as before"
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

	section "the host's log"
	out=$(dmesg | grep -a 'apparmor="DENIED"')
	[ -z "$out" ]
	rig_check $? "no AppArmor denial" "$(printf '%s\n' "$out" | head -n 3)"
	echo "libvirtd's errors in the journal (for the record):"
	journalctl -b -u libvirtd.service -p err --no-pager -q | tail -n 10 | sed 's/^/    /'

	rig_summary libvirt
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
