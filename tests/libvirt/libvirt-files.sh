#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's own libvirt files that kvm-perfmon-libvirt-config works with,
# for a test on a machine without libvirt: libvirt's Augeas lens for
# qemu.conf (libvirtd_qemu.aug, in libvirt-daemon-driver-qemu) and the
# qemu.conf the same libvirt installs (libvirt-daemon-system on bookworm,
# libvirt-daemon-driver-qemu from 10.6 on), taken from the suite's .debs.
#
#   tests/libvirt/libvirt-files.sh SUITE     (bookworm: 9.0, trixie: 11.3)
#
# Prints a directory holding libvirtd_qemu.aug, qemu.conf and version (the
# packages' version). Cached by that version outside the repository, in
# $XDG_CACHE_HOME/kvm-perfmon/libvirt-files/SUITE-VERSION (default
# ~/.cache): cold, reading the suite's index and two downloads (seconds);
# warm, the index only (tests/kernels/apt.sh reads it at most every ten
# minutes). The suite's index is read with a configuration of its own
# (tests/kernels/apt.sh), never the machine's.
set -euo pipefail

die() {
	echo "libvirt-files.sh: $*" >&2
	exit 2
}
[ $# = 1 ] || die "usage: libvirt-files.sh SUITE"
suite=$1
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
apt=$top/tests/kernels/apt.sh

"$apt" "$suite" update || die "cannot read $suite's index"
ver=$("$apt" "$suite" version libvirt-daemon-driver-qemu)
[ -n "$ver" ] || die "no libvirt-daemon-driver-qemu in $suite's index"
cache=${XDG_CACHE_HOME:-${HOME:?set HOME or XDG_CACHE_HOME}/.cache}/kvm-perfmon/libvirt-files
out=$cache/$suite-$ver
if [ -s "$out/version" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/.get.XXXXXX")
trap 'rm -rf "$work"' EXIT
# both packages at the driver's version: libvirt's binary packages of one
# source share it
(cd "$work" && "$apt" "$suite" apt-get -q download \
	"libvirt-daemon-driver-qemu=$ver" "libvirt-daemon-system=$ver") \
	>"$work/download.log" 2>&1 ||
	{ cat "$work/download.log" >&2; die "download from $suite failed"; }
for deb in "$work"/*.deb; do
	dpkg-deb -x "$deb" "$work/root"
done
mkdir "$work/out"
cp "$work/root/usr/share/augeas/lenses/libvirtd_qemu.aug" \
	"$work/root/etc/libvirt/qemu.conf" "$work/out/" ||
	die "the $suite packages lack the lens or qemu.conf"
echo "$ver" >"$work/out/version"
# a finished directory is complete (renamed in); a concurrent run's wins
mv -T "$work/out" "$out" 2>/dev/null || true
echo "$out"
