#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A Debian suite's kernel build environment for the kernels stage: a
# chroot that debootstrap makes from Debian's registry with the suite's
# linux-headers-amd64 and what kbuild needs (kbuild's tools link against
# the suite's own libc, so the headers are used from inside it).
#
#   tests/kernels/chroot.sh SUITE     prints the chroot's directory last
#
# The chroot's directory holds root/ (the chroot) and headers (the
# headers package and its version, e.g. "linux-headers-7.2.13+deb14-amd64
# 7.2.13-1"), kdir (the build tree inside root/) and packages (dpkg's list).
#
# Cached by content outside the repository, in
# $XDG_CACHE_HOME/kvm-perfmon/kernels/SUITE/KEY (default ~/.cache). KEY
# hashes this script, the mirror and the version of linux-headers-amd64
# that the suite's index names now (tests/kernels/apt.sh: a private apt
# configuration, the machine's /etc/apt neither read for sources nor
# changed; read at most every 10 minutes): a new upload of the suite's
# kernel makes a new chroot, and the suite's older ones are removed. Without the registry (offline), the
# suite's newest cached chroot is used, saying so.
# Locking: kernels/SUITE/.lock, exclusive while a chroot is looked up or
# made, shared while one is used (run.sh): one is never replaced under a
# build. Cold: minutes per suite (debootstrap); warm: an apt index update.
# Needs root, debootstrap, flock.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MIRROR=${KERNELS_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# what building an out-of-tree module needs on top of minbase:
# the compiler and make, the headers (which pull in the kernel's gcc
# version and kbuild), libelf-dev (objtool), bc (kbuild's timeconst),
# kmod (modpost's depmod step)
PKGS=gcc,make,libc6-dev,linux-headers-amd64,libelf-dev,bc,kmod

die() {
	echo "kernels/chroot.sh: $*" >&2
	exit 2
}

[ $# -eq 1 ] || die "usage: chroot.sh SUITE"
suite=$1
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap missing (tests/rig/deps.sh)"

base=${XDG_CACHE_HOME:-${HOME:?set HOME or XDG_CACHE_HOME}/.cache}/kvm-perfmon/kernels
cache=$base/$suite
mkdir -p "$cache"
exec 8>>"$cache/.lock"
flock 8

# the version of linux-headers-amd64 in the suite's index now
version=
if "$here/apt.sh" "$suite" update; then
	version=$("$here/apt.sh" "$suite" version linux-headers-amd64)
fi
if [ -z "$version" ]; then
	# shellcheck disable=SC2012 # the cache's own names: hex keys
	newest=$(ls -td "$cache"/*/headers 2>/dev/null | head -n 1)
	[ -n "$newest" ] ||
		die "cannot read $suite's index from $MIRROR, and no chroot of it is cached"
	echo "kernels/chroot.sh: $suite: no index from $MIRROR (offline?);" \
		"using the cached chroot with $(cat "$newest")" >&2
	echo "${newest%/headers}"
	exit 0
fi

key=$({
	cat "${BASH_SOURCE[0]}"
	echo "$suite $MIRROR $PKGS linux-headers-amd64=$version"
} | sha256sum | cut -c1-16)
out=$cache/$key
if [ -s "$out/kdir" ]; then
	echo "$out"
	exit 0
fi

# a build that was killed left its directory (none runs: the lock)
rm -rf "$cache"/.build.* "$out.new"
work=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "kernels/chroot.sh: debootstrap $suite (linux-headers-amd64 $version)" \
	"from $MIRROR (cold: minutes)" >&2
t0=$SECONDS
# the downloaded .debs, checked against the suite's signed Release, are
# kept for the next cold build of the suite
debs=$base/archives/$suite
mkdir -p "$debs"
debootstrap --variant=minbase --cache-dir="$debs" --keyring="$KEYRING" \
	--include="$PKGS" "$suite" "$work/root" "$MIRROR" \
	>"$work/debootstrap.log" 2>&1 ||
	{ tail -n 30 "$work/debootstrap.log" >&2; die "debootstrap $suite failed"; }
root=$work/root
# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
chroot "$root" dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\n' \
	>"$work/packages"
got=$(awk '$2 == "linux-headers-amd64" { print $3 }' "$work/packages")
[ "$got" = "$version" ] || die "$suite: debootstrap installed" \
	"linux-headers-amd64 $got, its index said $version (an upload meanwhile?" \
	"run again)"
# the build tree: the flavour's headers package that the meta-package
# depends on (one per chroot)
kdir=$(cd "$root" && printf '%s\n' usr/src/linux-headers-*-amd64 | sort -V | tail -n 1)
[ -f "$root/$kdir/Makefile" ] || die "$suite: no kernel build tree in the chroot"
awk -v p="${kdir#usr/src/}" '$2 == p { print $2, $3 }' "$work/packages" \
	>"$work/headers"
[ -s "$work/headers" ] || die "$suite: ${kdir#usr/src/} is no installed package"
# where run.sh mounts the sources it builds
mkdir -p "$root/src"
rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*_Packages
echo "/$kdir" >"$work/kdir"
mkdir -p "$out.new"
mv "$root" "$work/headers" "$work/packages" "$out.new/"
mv "$work/kdir" "$out.new/kdir"
mv -T "$out.new" "$out"
# the suite's older chroots (no build holds them: this lock is exclusive)
for d in "$cache"/*/; do
	d=${d%/}
	[ "$d" = "$out" ] || rm -rf "$d"
done
echo "kernels/chroot.sh: $suite chroot ready in $((SECONDS - t0))s:" \
	"$(cat "$out/headers")" >&2
echo "$out"
