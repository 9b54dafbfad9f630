#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The libvirt stage: the rig's L1 as a real Debian trixie KVM
# host. Installs the project's Debian packages, as a user would (apt, in a
# chroot on L0), into a copy of a debootstrap-made L1 image (systemd,
# AppArmor, libvirt-daemon-system; tests/libvirt/mkimage.sh, cached by
# content) and the guest's into a copy of a debootstrap-made L2 image;
# such an installed disk is cached by content too (installed_disk). Each
# run takes a throw-away copy of both, adds the test's files, and puts
# L2's into L1's image as the disk file of a libvirt domain;
# boots L1 from its disk under L0's TCG (tests/rig/boot-l1.sh --disk), where
# tests/libvirt/l1-test.sh runs the domains with a real libvirtd; judges the
# run as every rig run is judged (rig_judge: markers, payload status, L1's
# kernel log against tests/rig/bad-patterns).
#
#   tests/libvirt/rig-libvirt.sh --debs DIR [LOGDIR]   (default build/logs/libvirt)
#
# DIR: the project's .deb files (dpkg-buildpackage's output). The guest's
# packages (L2_PKGS) go into L2, the others (but -dev, -dbgsym) into L1.
# Needs root (loop mounts, chroot), debootstrap, e2fsprogs, the rig's
# packages (tests/rig/deps.sh). Exit status 0 only if the rig run passed.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$top/tests/libvirt
# the guest's packages; the rest of DIR's are the host's
L2_PKGS="${L2_PKGS:-perfmon2-dkms libperfmon2-3 pfmon}"
# the patched QEMU's binary, which the domains name in <emulator>
EMULATOR=${LIBVIRT_EMULATOR:-/usr/bin/qemu-system-x86_64-pvperfmon}
# L1's time limit: a guard against a run that never ends, not a speed
# check (boot-l1.sh's heartbeat watchdog catches a silent L1 sooner). The
# checks take 6 to 9 minutes of L1's time on the project's 2-core
# machines beside another stage's rig, each L2 boot and pfmon run
# slowing with L0's load; a loaded CI machine needs more.
TIMEOUT_S=1800

die() {
	echo "rig-libvirt.sh: $*" >&2
	exit 2
}
step() {
	printf '[%4ss] %s\n' "$((SECONDS - t0))" "$*"
}

debs=
while [ $# -gt 0 ]; do
	case "$1" in
	--debs)
		[ $# -ge 2 ] || die "--debs needs a directory"
		debs=$(cd "$2" && pwd)
		shift 2
		;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ -n "$debs" ] || die "usage: rig-libvirt.sh --debs DIR [LOGDIR]"
logdir=${1:-$top/build/logs/libvirt}
[ "$(id -u)" = 0 ] || die "must run as root (loop mounts, chroot)"
t0=$SECONDS

# The packages by level, and what they need from Debian (into the images'
# package lists, so that the install here runs offline).
l1_debs=()
l2_debs=()
l1_names=
own=
for f in "$debs"/*.deb; do
	[ -e "$f" ] || die "no .deb in $debs"
	own+=" $(dpkg-deb -f "$f" Package) "
done
for f in "$debs"/*.deb; do
	name=$(dpkg-deb -f "$f" Package)
	case " $L2_PKGS " in
	*" $name "*) l2_debs+=("$f") ;;
	*)
		case "$name" in
		*-dev | *-dbgsym) ;;
		*)
			l1_debs+=("$f")
			l1_names+="$name "
			;;
		esac
		;;
	esac
done
for p in $L2_PKGS; do
	case " ${l2_debs[*]##*/} " in
	*" ${p}_"*) ;;
	*) die "no $p package in $debs" ;;
	esac
done
[ "${#l1_debs[@]}" -gt 0 ] || die "no host package in $debs"

# deps FILE...: the Debian packages FILEs depend on (the first of each
# alternative, versions dropped), the project's own left out
deps() {
	local f
	for f in "$@"; do
		dpkg-deb -f "$f" Depends Pre-Depends
	done | sed 's/^[A-Za-z-]*: //' | tr ',' '\n' | sed -e 's/|.*//' \
		-e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' | sort -u |
		while read -r p; do
			[ -z "$p" ] || case "$own" in *" $p "*) ;; *) echo "$p" ;; esac
		done
}

work=$(mktemp -d "${TMPDIR:-/var/tmp}/rig-libvirt.XXXXXX")
mounts=()
l2_job=
# unmount what open_image mounted (this process's)
unmount_all() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" || true
	done
}
cleanup() {
	# a failed run leaves no L2 job behind (an image build holds the
	# cache's lock; a chroot its mounts)
	if [ -n "$l2_job" ] && kill -0 "$l2_job" 2>/dev/null; then
		pkill -TERM -P "$l2_job" || true
		kill "$l2_job" 2>/dev/null || true
		wait "$l2_job" 2>/dev/null || true
	fi
	unmount_all
	rm -rf "$work"
}
trap cleanup EXIT

# image LEVEL OUT DEB...: writes to OUT the directory of LEVEL's image,
# made with the Debian packages DEB... depend on that it lacks, if any
image() {
	local level=$1 out=$2 dir p missing=()
	set -o pipefail
	shift 2
	# its last line (mke2fs says what it does on stdout)
	dir=$("$here/mkimage.sh" "$level" | tail -n 1)
	for p in $(deps "$@"); do
		grep -qE "^ii  $p(:[a-z0-9]+)? " "$dir/packages" || missing+=("$p")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		echo "rig-libvirt.sh: the $level image lacks ${missing[*]}: another image" >&2
		dir=$("$here/mkimage.sh" "$level" "${missing[@]}" | tail -n 1)
	fi
	echo "$dir" >"$out"
}

rm -rf "$logdir"
mkdir -p "$logdir"
# the leak check L1's test runs (tests/host's)
make -s -C "$top/tests/host" "$top/tests/host/out/bin/kvmpfm-stats"
step "images: L1 and L2 (debootstrap, cached by content; cold: both at once)"
image l2 "$logdir/l2-image" "${l2_debs[@]}" &
l2_job=$!
image l1 "$logdir/l1-image" "${l1_debs[@]}"
wait "$l2_job" || die "the L2 image failed"
l1_img=$(cat "$logdir/l1-image")
l2_img=$(cat "$logdir/l2-image")


# open_image IMG DIR: mount IMG (ext4) on DIR with /proc, /sys, /dev,
# for a chroot; close_image undoes the last open_image
open_image() {
	mkdir -p "$2"
	mount -o loop "$1" "$2"
	mounts+=("$2")
	for m in proc sys dev dev/pts; do
		mount --bind "/$m" "$2/$m"
		mounts+=("$2/$m")
	done
}
close_image() {
	local _
	for _ in proc sys dev dev/pts image; do
		[ "${#mounts[@]}" -gt 0 ] || return 0
		umount "${mounts[-1]}" || return 1
		unset 'mounts[-1]'
	done
}

# install_debs ROOT KVER LOG DEB...: apt installs DEB... into ROOT as a
# user would (offline: their dependencies are in the image), then checks
# that DKMS built the package's modules for the image's kernel KVER, not
# for the one this machine runs
install_debs() {
	local root=$1 kver=$2 log=$3 f paths=()
	shift 3
	mkdir -p "$root/tmp/debs"
	cp "$@" "$root/tmp/debs/"
	for f in "$@"; do
		paths+=("/tmp/debs/${f##*/}")
	done
	if ! chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y \
		--no-install-recommends "${paths[@]}" >"$log" 2>&1; then
		tail -n 40 "$log" | sed 's/^/    /'
		die "apt-get install in the chroot failed (whole log: $log)"
	fi
	rm -rf "$root/tmp/debs"
	grep -E '^(Setting up|Unpacking|Building|DKMS|depmod|Installing|Signing)|dkms|\.ko' "$log" |
		sed 's/^/    /' | head -n 40
	check_dkms "$root" "$kver" "log: $log"
}

# check_dkms ROOT KVER [WHERE]: DKMS in a chroot takes the running kernel's name,
# for which the image has no headers; it builds for the image's own
# kernel too (the newest with headers). Say which, and fail if KVER lacks
# one (WHERE: where to look then).
check_dkms() {
	chroot "$1" dkms status | sed 's/^/    dkms status: /'
	chroot "$1" dkms status -k "$2" | grep -q installed ||
		die "DKMS built nothing for the image's kernel $2${3:+ ($3)}"
}

# The installed disks, cached by content: the key is this script (how it
# installs), the image (its directory is named by its own key) and the
# packages' bytes. The cache keeps a level's newest KEEP_INSTALLED.
INSTALLED_CACHE=${XDG_CACHE_HOME:-${HOME:?set HOME or XDG_CACHE_HOME}/.cache}/kvm-perfmon/libvirt-installed
KEEP_INSTALLED=2

# installed_disk LEVEL IMG OUT DEB...: writes to OUT the path of a disk
# that is LEVEL's image IMG (mkimage.sh's directory) with DEB... installed
# by apt and their modules built by DKMS for the image's kernel
# (install_debs); made now if the cache lacks it
installed_disk() {
	local level=$1 img=$2 out=$3 key dir
	shift 3
	key=$({
		cat "${BASH_SOURCE[0]}"
		echo "$level ${img##*/}"
		sha256sum "$@" | cut -d' ' -f1 | sort
	} | sha256sum | cut -c1-16)
	dir=$INSTALLED_CACHE/$level/$key
	mkdir -p "$INSTALLED_CACHE/$level"
	(
		flock 9
		if [ -s "$dir/disk.img" ]; then
			step "$level: the image with the packages installed, from the cache ($key)"
			touch "$dir"
			exit 0
		fi
		step "$level: a copy of the image; the packages with apt (cached as $key)"
		tmp=$(mktemp -d "$INSTALLED_CACHE/$level/.build.XXXXXX")
		mounts=()
		trap 'unmount_all; rm -rf "$tmp"' EXIT
		# set -e does not hold in a subshell whose status || tests:
		# each step that must not fail is checked
		cp --sparse=always "$img/disk.img" "$tmp/disk.img" || exit 1
		open_image "$tmp/disk.img" "$tmp/root" || exit 1
		install_debs "$tmp/root" "$(cat "$img/kver")" \
			"$logdir/install-$level.log" "$@" || exit 1
		# a process apt or DKMS started may hold the chroot for a few
		# seconds: the disk is cached only once it is unmounted whole
		for _ in $(seq 60); do
			close_image 2>/dev/null && break
			sleep 1
		done
		[ "${#mounts[@]}" = 0 ] && rmdir "$tmp/root" || exit 1
		trap - EXIT
		rm -rf "$dir"
		mv "$tmp" "$dir"
		# shellcheck disable=SC2012 # the cache's own names: hex keys
		ls -td "$INSTALLED_CACHE/$level"/*/ | tail -n +"$((KEEP_INSTALLED + 1))" |
			xargs -r rm -rf
	) 9>>"$INSTALLED_CACHE/$level/.lock" || die "$level: installing the packages failed"
	echo "$dir/disk.img" >"$out"
}

# L2's disk, made beside L1's (two cores: the copies and DKMS builds
# overlap); its lines are shown once it is done
prepare_l2() {
	mounts=()
	trap unmount_all EXIT
	installed_disk l2 "$l2_img" "$work/l2.disk" "${l2_debs[@]}"
	step "L2: a copy of the installed image, with the test's init"
	cp --sparse=always "$(cat "$work/l2.disk")" "$work/l2.img"
	open_image "$work/l2.img" "$work/l2"
	install -m 755 "$here/l2-init.sh" "$work/l2/usr/local/sbin/l2-init"
	install -m 644 "$top/tests/rig/protocol.sh" "$work/l2/etc/rig-protocol.sh"
	install -m 644 "$top/tests/rig/bad-patterns" "$work/l2/etc/rig-bad-patterns"
	close_image
	step "L2: ready"
}
prepare_l2 >"$work/l2.out" 2>&1 &
l2_job=$!

l1_kver=$(cat "$l1_img/kver")
installed_disk l1 "$l1_img" "$work/l1.disk" "${l1_debs[@]}"
step "L1: a copy of the installed image, with the test"
mkdir -p "$work/l1"
cp --sparse=always "$(cat "$work/l1.disk")" "$work/l1/disk.img"
cp "$l1_img/vmlinuz" "$l1_img/initrd.img" "$l1_img/kver" "$work/l1/"
root=$work/l1/root
open_image "$work/l1/disk.img" "$root"
# what install_debs checked when it made the disk, again on this copy
check_dkms "$root" "$l1_kver"
# the test: its unit, scripts, the leak check of tests/host, the guest
T=$root/usr/local/lib/kvm-perfmon-test
mkdir -p "$T" "$root/var/lib/libvirt/boot" "$root/var/lib/libvirt/images"
install -m 755 "$here/l1-test.sh" "$top/tests/host/out/bin/kvmpfm-stats" "$T/"
install -m 644 "$here/domain.xml.in" "$T/"
# installed again in L1, as an upgrade is: the exporter's restart
for f in "${l1_debs[@]}"; do
	[ "$(dpkg-deb -f "$f" Package)" != kvm-perfmon-tools ] ||
		install -m 644 "$f" "$T/kvm-perfmon-tools.deb"
done
printf 'EMULATOR=%s\nHOST_PKGS="%s"\n' "$EMULATOR" "${l1_names% }" >"$T/test.conf"
install -m 644 "$top/tests/rig/protocol.sh" "$root/etc/rig-protocol.sh"
install -m 644 "$top/tests/rig/bad-patterns" "$root/etc/rig-bad-patterns"
install -m 644 "$here/kvm-perfmon-libvirt-test.service" "$root/etc/systemd/system/"
chroot "$root" systemctl enable kvm-perfmon-libvirt-test.service 2>&1 | sed 's/^/    /'
# as the initramfs rig loads it (nested=1 is kvm-amd's default already)
echo "options kvm_amd nested=1" >"$root/etc/modprobe.d/kvm-perfmon-rig.conf"
step "L1: waiting for L2's image"
wait "$l2_job" || { cat "$work/l2.out"; die "L2's image failed"; }
l2_job=
cat "$work/l2.out"
cp --sparse=always "$work/l2.img" "$root/var/lib/libvirt/images/l2.img"
cp "$l2_img/vmlinuz" "$root/var/lib/libvirt/boot/l2-vmlinuz"
cp "$l2_img/initrd.img" "$root/var/lib/libvirt/boot/l2-initrd.img"
close_image
rm -f "$work/l2.img"

step "booting L1 from its disk (systemd, libvirtd) under TCG"
set +e
# the steps above may run niced (make test: beside another stage's rig);
# L1's TCG runs at the normal priority, as every rig's does
nice -n "$((-$(nice)))" \
	"$top/tests/rig/boot-l1.sh" --timeout "$TIMEOUT_S" --disk "$work/l1" "$logdir"
rc=$?
set -e
step "done: rig-libvirt.sh exit $rc"
exit "$rc"
