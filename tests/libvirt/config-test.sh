#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-perfmon-libvirt-config against Debian's own qemu.conf and libvirt's
# own Augeas lens for it, of bookworm's libvirt 9.0 and trixie's 11.3
# (tests/libvirt/libvirt-files.sh takes both from the .debs, cached), in a
# scratch directory (KVMPFM_QEMU_CONF, KVMPFM_APPARMOR_DIR,
# KVMPFM_STATE_DIR, KVMPFM_LENS_DIR), with a systemctl on PATH that
# records what it is asked. For each libvirt:
# - qemu.conf as installed (the setting commented out): enable sets
#   libvirt's default list from its comment, plus /dev/kvm-perfmon
#   (/dev/userfaultfd on 11.3), every other byte kept; enable again
#   changes nothing and restarts nothing, even with --restart; disable
#   gives the installed file back byte for byte;
# - an admin's own list with /dev/userfaultfd: enable adds our entry and
#   keeps theirs, in their order; disable removes ours only;
# - a file the lens does not parse: refused, untouched;
# - AppArmor: the include line in local/ only where the abstraction does
#   not read libvirt-qemu.d, removed by disable and once it does.
# Runs in make test's unit stage; prints a line per check and
# "config-test: N passed, N failed".
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cfg=$TOP/libvirt/kvm-perfmon-libvirt-config
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
export KVMPFM_QEMU_CONF=$d/qemu.conf KVMPFM_APPARMOR_DIR=$d/apparmor.d
export KVMPFM_STATE_DIR=$d/state KVMPFM_SYSTEMD_RUN=$d
# rig_check: the PASS/FAIL lines and their counts
# shellcheck source=tests/rig/protocol.sh
. "$TOP/tests/rig/protocol.sh"

# systemctl: libvirtd runs; restarts are written to $d/restarts
mkdir "$d/bin"
cat >"$d/bin/systemctl" <<EOF
#!/bin/sh
case "\$*" in
"-q is-active libvirtd.service") exit 0 ;;
"-q is-active "*) exit 3 ;;
esac
echo "\$*" >>"$d/restarts"
EOF
chmod +x "$d/bin/systemctl"
PATH=$d/bin:$PATH

sum() { md5sum <"$1" | cut -d' ' -f1; }
run() { "$cfg" "$@" >"$d/out" 2>&1; }
restarts() { if [ -f "$d/restarts" ]; then wc -l <"$d/restarts"; else echo 0; fi; }
AA_LINE="include if exists <abstractions/libvirt-qemu.d/kvm-perfmon> # kvm-perfmon-libvirt-config: this libvirt's abstraction reads no libvirt-qemu.d"
AA_LOCAL=$d/apparmor.d/local/abstractions/libvirt-qemu

# acl: the list as libvirt's lens reads it, one entry a line
acl() {
	augtool -A -L -I "$KVMPFM_LENS_DIR" <<EOF | sed -n 's|^/files.*/cgroup_device_acl/[0-9]* = ||p'
set /augeas/load/L/lens Libvirtd_qemu.lns
set /augeas/load/L/incl $KVMPFM_QEMU_CONF
load
match /files$KVMPFM_QEMU_CONF/cgroup_device_acl/*
EOF
}
acl_line() { acl | paste -sd ' '; }

# fresh FILES ABSTRACTION: the libvirt's qemu.conf (0600), and an AppArmor
# abstraction that reads libvirt-qemu.d (dir) or not (no-dir)
fresh() {
	rm -rf "$d/apparmor.d" "$d/state" "$d/restarts"
	install -m 0600 "$1/qemu.conf" "$KVMPFM_QEMU_CONF"
	mkdir -p "$d/apparmor.d/abstractions/libvirt-qemu.d"
	: >"$d/apparmor.d/abstractions/libvirt-qemu.d/kvm-perfmon"
	if [ "$2" = dir ]; then
		echo '  include if exists <abstractions/libvirt-qemu.d>' \
			>"$d/apparmor.d/abstractions/libvirt-qemu"
	else
		echo '  #include <local/abstractions/libvirt-qemu>' \
			>"$d/apparmor.d/abstractions/libvirt-qemu"
	fi
}

for suite in bookworm trixie; do
	files=$("$TOP/tests/libvirt/libvirt-files.sh" "$suite")
	rig_check $? "$suite: libvirt's qemu.conf and lens (libvirt-files.sh)"
	[ -f "$files/libvirtd_qemu.aug" ] || continue
	export KVMPFM_LENS_DIR=$files
	v="$suite (libvirt $(cat "$files/version"))"
	if [ "$suite" = bookworm ]; then
		aa=no-dir default="/dev/null /dev/full /dev/zero /dev/random /dev/urandom /dev/ptmx /dev/kvm"
	else
		aa=dir default="/dev/null /dev/full /dev/zero /dev/random /dev/urandom /dev/ptmx /dev/kvm /dev/userfaultfd"
	fi

	echo "== $v: qemu.conf as installed (cgroup_device_acl commented out)"
	fresh "$files" "$aa"
	orig=$(sum "$KVMPFM_QEMU_CONF")
	[ -z "$(acl)" ]
	rig_check $? "$v: the installed qemu.conf does not set cgroup_device_acl"
	run status
	grep -q 'cgroup_device_acl not set' "$d/out"
	rig_check $? "$v: status says not set" "$(cat "$d/out")"
	ino=$(stat -c %i "$KVMPFM_QEMU_CONF")
	run enable --restart
	rig_check $? "$v: enable --restart exits 0" "$(cat "$d/out")"
	[ "$(acl_line)" = "$default /dev/kvm-perfmon" ]
	rig_check $? "$v: enable sets libvirt's default list and /dev/kvm-perfmon" \
		"list: $(acl_line)"
	diff "$files/qemu.conf" "$KVMPFM_QEMU_CONF" | grep '^[<>]' >"$d/diff"
	# shellcheck disable=SC2086 # the list's words
	[ "$(cat "$d/diff")" = "> cgroup_device_acl = [ $(printf '"%s", ' $default)\"/dev/kvm-perfmon\"]" ]
	rig_check $? "$v: enable adds that one line, every other line kept" \
		"$(cat "$d/diff")"
	[ "$(stat -c %a "$KVMPFM_QEMU_CONF")" = 600 ] &&
		[ "$(stat -c %i "$KVMPFM_QEMU_CONF")" != "$ino" ]
	rig_check $? "$v: qemu.conf keeps its mode (0600), replaced whole (rename)"
	[ "$(restarts)" = 1 ] && grep -qx 'try-restart libvirtd.service' "$d/restarts"
	rig_check $? "$v: enable --restart restarts libvirtd, once" \
		"$(cat "$d/restarts" 2>/dev/null)"
	once=$(sum "$KVMPFM_QEMU_CONF")
	run enable --restart
	rig_check $? "$v: enable again exits 0" "$(cat "$d/out")"
	[ "$(sum "$KVMPFM_QEMU_CONF")" = "$once" ]
	rig_check $? "$v: enable again: qemu.conf unchanged"
	[ "$(restarts)" = 1 ] && grep -q 'libvirtd not restarted' "$d/out"
	rig_check $? "$v: enable again: no restart, and says so" "$(cat "$d/out")"
	run status
	grep -q 'cgroup_device_acl lists /dev/kvm-perfmon' "$d/out"
	rig_check $? "$v: status says it lists /dev/kvm-perfmon" "$(cat "$d/out")"
	run disable --restart
	rig_check $? "$v: disable exits 0" "$(cat "$d/out")"
	[ "$(sum "$KVMPFM_QEMU_CONF")" = "$orig" ]
	rig_check $? "$v: disable: qemu.conf byte for byte as installed" \
		"$(diff "$files/qemu.conf" "$KVMPFM_QEMU_CONF" | head -n 4)"
	[ "$(restarts)" = 2 ]
	rig_check $? "$v: disable --restart restarts libvirtd"
	run disable --restart
	[ "$(sum "$KVMPFM_QEMU_CONF")" = "$orig" ] && [ "$(restarts)" = 2 ]
	rig_check $? "$v: disable again: unchanged, no restart"

	echo "== $v: the admin's own list, with /dev/userfaultfd"
	fresh "$files" "$aa"
	printf '%s\n' 'cgroup_device_acl = [' '    "/dev/kvm", "/dev/null",' \
		'    "/dev/userfaultfd", "/dev/vfio/vfio"' ']' >>"$KVMPFM_QEMU_CONF"
	before=$(sum "$KVMPFM_QEMU_CONF")
	run enable
	rig_check $? "$v: enable exits 0" "$(cat "$d/out")"
	[ "$(acl_line)" = "/dev/kvm /dev/null /dev/userfaultfd /dev/vfio/vfio /dev/kvm-perfmon" ]
	rig_check $? "$v: enable extends the admin's list, /dev/userfaultfd kept" \
		"list: $(acl_line)"
	[ "$(restarts)" = 0 ] && grep -q 'restart it' "$d/out"
	rig_check $? "$v: enable without --restart: no restart, says one is due" \
		"$(cat "$d/out")"
	run enable
	[ "$(acl | grep -c kvm-perfmon)" = 1 ]
	rig_check $? "$v: enable again: one /dev/kvm-perfmon"
	run disable
	[ "$(sum "$KVMPFM_QEMU_CONF")" = "$before" ]
	rig_check $? "$v: disable removes our entry only (the admin's list as it was)" \
		"list: $(acl_line)"
	# enable on the admin's list, then the admin drops an entry: disable
	# must not unset the list that is no longer the one enable set
	fresh "$files" "$aa"
	run enable
	augtool -A -L -I "$KVMPFM_LENS_DIR" >/dev/null <<EOF
set /augeas/load/L/lens Libvirtd_qemu.lns
set /augeas/load/L/incl $KVMPFM_QEMU_CONF
load
rm /files$KVMPFM_QEMU_CONF/cgroup_device_acl/*[. = "/dev/zero"]
save
EOF
	run disable
	[ "$(acl_line)" = "${default/ \/dev\/zero/}" ]
	rig_check $? "$v: a list edited after enable: disable removes our entry only" \
		"list: $(acl_line)"

	echo "== $v: a qemu.conf libvirt's lens does not parse"
	fresh "$files" "$aa"
	echo 'cgroup_device_acl = [ "/dev/null" ' >>"$KVMPFM_QEMU_CONF"
	before=$(sum "$KVMPFM_QEMU_CONF")
	run enable --restart
	rc=$?
	[ "$rc" = 1 ] && grep -q "line [0-9]*: .*nothing was changed" "$d/out" &&
		[ "$(sum "$KVMPFM_QEMU_CONF")" = "$before" ] && [ "$(restarts)" = 0 ]
	rig_check $? "$v: enable refuses, names the line, leaves the file" \
		"exit $rc: $(cat "$d/out")"

	echo "== $v: AppArmor"
	for a in dir no-dir; do
		fresh "$files" "$a"
		echo '#include <abstractions/site>' >"$d/site"
		mkdir -p "$(dirname "$AA_LOCAL")"
		cp "$d/site" "$AA_LOCAL"
		run enable
		if [ "$a" = dir ]; then
			cmp -s "$d/site" "$AA_LOCAL"
			rig_check $? "$v: abstraction reads libvirt-qemu.d: local/ untouched"
		else
			[ "$(tail -n 1 "$AA_LOCAL")" = "$AA_LINE" ] &&
				[ "$(grep -cxF "$AA_LINE" "$AA_LOCAL")" = 1 ]
			rig_check $? "$v: abstraction without libvirt-qemu.d: one include line in local/"
			run enable
			[ "$(grep -cxF "$AA_LINE" "$AA_LOCAL")" = 1 ]
			rig_check $? "$v: enable again: still one include line"
			run status
			grep -q 'in effect (included from' "$d/out"
			rig_check $? "$v: status: the drop-in included from local/" "$(cat "$d/out")"
			# libvirt upgraded to one that reads the directory
			echo '  include if exists <abstractions/libvirt-qemu.d>' \
				>>"$d/apparmor.d/abstractions/libvirt-qemu"
			run enable
			cmp -s "$d/site" "$AA_LOCAL"
			rig_check $? "$v: once the abstraction reads libvirt-qemu.d, enable drops the line"
			sed -i '$d' "$d/apparmor.d/abstractions/libvirt-qemu"
			run enable
		fi
		run disable
		cmp -s "$d/site" "$AA_LOCAL"
		rig_check $? "$v ($a): disable: the site's local/ as it was"
	done
done

rig_summary config-test
[ "${rig_failed:-0}" = 0 ]
