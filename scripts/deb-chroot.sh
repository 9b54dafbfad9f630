#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a Debian source package's binary packages as sbuild would: in a
# clean chroot of SUITE (debootstrap --variant=buildd from Debian's
# registry: essential, build-essential, apt) that holds only the source
# package's Build-Depends, installed by apt inside the chroot (the only
# step with network), then dpkg-source -x and dpkg-buildpackage -us -uc -b
# as an unprivileged user (builder, uid 2000) in namespaces of its own:
# no network (unshare --net: only a down loopback; the build log shows
# the check), its own /proc.
#
#   scripts/deb-chroot.sh SUITE DSC OUTDIR   the .debs (with -dbgsym),
#                                            .buildinfo and .changes in
#                                            OUTDIR; prints the .debs'
#                                            paths last
#   scripts/deb-chroot.sh --root SUITE DSC   only the chroot with DSC's
#                                            Build-Depends (the libraries
#                                            its binaries were built
#                                            against); prints its root
#
# Cached by content in ${XDG_CACHE_HOME:-~/.cache}/kvm-perfmon/deb-chroot/:
#   debs/KEY/      the build's results and build.log; KEY hashes SUITE, the
#                  mirror and the .dsc (which names its files' SHA256): the
#                  source package's content. A done KEY is a warm run:
#                  nothing but this check, no apt, no chroot.
#   chroot/SUITE-SOURCE-KEY/  root/ with the Build-Depends of the source
#                  package SOURCE installed, packages
#                  (dpkg's list). KEY hashes SUITE, the mirror, the code
#                  that makes it (make_chroot, chroot_run) and the
#                  Build-Depends as apt resolves them in SUITE's index now
#                  (tests/kernels/apt.sh: a private apt configuration; the
#                  machine's /etc/apt is not touched), package by package
#                  with versions: a new upload of one makes a new chroot,
#                  which replaces the source package's older one.
#                  The build writes only /build, as builder, so a chroot
#                  serves many builds.
#   archives/SUITE/  the .debs debootstrap and apt fetched, for the next
#                  chroot.
# One run at a time (deb-chroot/.lock, held throughout); the four newest
# builds are kept.
# KERNELS_MIRROR: the registry (default http://deb.debian.org/debian).
# Needs root, debootstrap, unshare (util-linux), flock.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
APT=$TOP/tests/kernels/apt.sh
export KERNELS_MIRROR=${KERNELS_MIRROR:-http://deb.debian.org/debian}
MIRROR=$KERNELS_MIRROR
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
BUILDER_UID=2000
KEEP_BUILDS=4

say() { echo "deb-chroot: $*" >&2; }
die() {
	echo "deb-chroot: $*" >&2
	exit 1
}

root_only=
if [ "${1:-}" = --root ]; then
	root_only=1
	shift
	[ $# -eq 2 ] || die "usage: deb-chroot.sh --root SUITE DSC"
else
	[ $# -eq 3 ] || die "usage: deb-chroot.sh SUITE DSC OUTDIR"
fi
suite=$1
dsc=$(realpath "$2")
[ -f "$dsc" ] || die "$2: no such file"
if [ -z "$root_only" ]; then
	mkdir -p "$3"
	out=$(cd "$3" && pwd)
fi
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot, unshare)"
command -v debootstrap >/dev/null || die "debootstrap missing (tests/rig/deps.sh)"
command -v unshare >/dev/null || die "unshare missing (util-linux)"

base=${XDG_CACHE_HOME:-${HOME:?set HOME or XDG_CACHE_HOME}/.cache}/kvm-perfmon/deb-chroot
mkdir -p "$base/debs" "$base/chroot" "$base/archives/$suite/partial"
exec 9>>"$base/.lock"
if ! flock -n 9; then
	say "another deb-chroot.sh holds $base/.lock; waiting"
	flock 9
fi

# the files the .dsc names, beside it
dsc_files() {
	awk '/^Checksums-Sha256:/ { on = 1; next } /^[^ ]/ { on = 0 }
		on && NF == 3 { print $3 }' "$dsc"
}

deliver() {
	local f
	for f in "$1"/*.deb "$1"/*.buildinfo "$1"/*.changes; do
		ln -f "$f" "$out/" 2>/dev/null || cp -f "$f" "$out/"
	done
	for f in "$1"/*.deb; do
		echo "$out/$(basename "$f")"
	done
}

debkey=$(echo "$suite $MIRROR $(sha256sum <"$dsc" | cut -d' ' -f1)" |
	sha256sum | cut -c1-16)
result=$base/debs/$debkey
if [ -z "$root_only" ] && [ -f "$result/done" ]; then
	say "up to date: $(basename "$dsc" .dsc) for $suite (key $debkey)"
	touch "$result"
	deliver "$result"
	exit 0
fi
while read -r f; do
	[ -f "$(dirname "$dsc")/$f" ] || die "$f, which $(basename "$dsc") names, is missing"
done < <(dsc_files)

# --- the chroot with the Build-Depends ----------------------------------

"$APT" "$suite" update || die "cannot read $suite's index from $MIRROR"
resolved=$("$APT" "$suite" apt-get -s -q --no-install-recommends build-dep "$dsc" 2>&1 |
	awk '$1 == "Inst" { print $2, substr($3, 2) }' | LC_ALL=C sort) ||
	die "apt cannot resolve $(basename "$dsc")'s Build-Depends in $suite"
[ -n "$resolved" ] || die "apt resolves no Build-Depends of $(basename "$dsc") in $suite"
# chroot_run ARGS...: ARGS in the chroot as root, with its own /proc and
# the apt archive cache mounted
chroot_run() {
	# shellcheck disable=SC2016 # for sh -c
	unshare --mount --pid --fork --mount-proc="$root/proc" -- sh -c '
		mount --bind "$1" "$2/var/cache/apt/archives" && shift 2 &&
		exec chroot "$@"' - "$base/archives/$suite" "$root" "$root" \
		/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"
}

# make_chroot: $root from debootstrap, the Build-Depends of $dsc installed
# by apt inside it (checked against $resolved), the user builder
make_chroot() {
	local t0 p v
	rm -rf "$cdir"
	mkdir -p "$cdir"
	t0=$SECONDS
	say "debootstrap --variant=buildd $suite from $MIRROR (cold: minutes)"
	debootstrap --variant=buildd --cache-dir="$base/archives/$suite" \
		--keyring="$KEYRING" "$suite" "$root" "$MIRROR" \
		>"$cdir/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$cdir/debootstrap.log" >&2; die "debootstrap $suite failed"; }
	say "chroot made in $((SECONDS - t0)) s"
	t0=$SECONDS
	cat /etc/resolv.conf >"$root/etc/resolv.conf"
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	cp "$dsc" "$root/tmp/build-depends.dsc"
	say "installing $(wc -l <<<"$resolved") packages: the Build-Depends and build-essential"
	{ chroot_run apt-get -q update &&
		chroot_run apt-get -q -y --no-install-recommends \
			build-dep /tmp/build-depends.dsc; } >"$cdir/install.log" 2>&1 ||
		{ tail -n 30 "$cdir/install.log" >&2; die "apt-get build-dep in the chroot failed"; }
	# the .debs stay in archives/SUITE (apt-get clean would empty it)
	rm -f "$root/tmp/build-depends.dsc" "$root/var/lib/apt/lists/"*_Packages
	# shellcheck disable=SC2016 # dpkg-query's format
	chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' >"$cdir/packages"
	while read -r p v; do
		grep -qxF "$p $v" "$cdir/packages" || die "$suite: the chroot has" \
			"$(grep "^$p " "$cdir/packages" || echo "no $p"), the index" \
			"resolved $p $v (an upload meanwhile? run again)"
	done <<<"$resolved"
	echo "builder:x:$BUILDER_UID:$BUILDER_UID:package builder:/build:/bin/sh" \
		>>"$root/etc/passwd"
	echo "builder:x:$BUILDER_UID:" >>"$root/etc/group"
	touch "$cdir/done"
	say "Build-Depends installed in $((SECONDS - t0)) s"
}

ckey=$({
	echo "$suite $MIRROR"
	declare -f make_chroot chroot_run
	echo "$resolved"
} | sha256sum | cut -c1-16)
source=$(sed -n 's/^Source: //p' "$dsc")
[ -n "$source" ] || die "$(basename "$dsc") names no Source"
cdir=$base/chroot/$suite-$source-$ckey
root=$cdir/root
if ! [ -f "$cdir/done" ]; then
	make_chroot
	# the source package's older chroots in this suite (no build holds
	# them: the lock)
	for d in "$base/chroot/$suite-$source"-*; do
		[ "$d" = "$cdir" ] || rm -rf "$d"
	done
fi

if [ -n "$root_only" ]; then
	echo "$root"
	exit 0
fi

# --- the build ----------------------------------------------------------

rm -rf "$root/build"
mkdir -p "$root/build"
cp "$dsc" "$root/build/"
while read -r f; do
	cp "$(dirname "$dsc")/$f" "$root/build/"
done < <(dsc_files)
chown -R "$BUILDER_UID:$BUILDER_UID" "$root/build"

# runs in the chroot as builder: first that only the loopback exists and
# a connection to the mirror fails, then the build
# shellcheck disable=SC2016 # for the chroot's shell
inner='set -e
ifs=$(awk "NR > 2 { sub(\":\", \"\", \$1); print \$1 }" /proc/net/dev | tr "\n" " ")
echo "deb-chroot: build network: interfaces: $ifs(unshare --net)"
[ "$ifs" = "lo " ] || { echo "deb-chroot: the build sees a network"; exit 1; }
if (exec 3<>/dev/tcp/151.101.2.132/80) 2>/dev/null; then
	echo "deb-chroot: the build can connect out"; exit 1
fi
echo "deb-chroot: build network: a connection out fails"
echo "deb-chroot: building as $(id -un) (uid $(id -u))"
cd /build
dpkg-source -x ./*.dsc src
cd src
dpkg-buildpackage -us -uc -b'

say "building $(basename "$dsc" .dsc) for $suite (key $debkey) as builder, network unshared"
t0=$SECONDS
log=$base/debs/build-$debkey.log
if ! unshare --net --mount --pid --fork --mount-proc="$root/proc" -- \
	nice -n 10 chroot --userspec="$BUILDER_UID:$BUILDER_UID" "$root" \
	/usr/bin/env -i HOME=/build PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	LC_ALL=C.UTF-8 DEB_BUILD_OPTIONS="parallel=$(nproc)" \
	/bin/bash -c "$inner" >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	die "the build failed, see $log"
fi
rm -rf "$result"
mkdir -p "$result"
mv "$root"/build/*.deb "$root"/build/*.buildinfo "$root"/build/*.changes "$result/"
mv "$log" "$result/build.log"
chown -R "$(id -u):$(id -g)" "$result"
rm -rf "$root/build"
touch "$result/done"
say "built in $((SECONDS - t0)) s: $result"
# shellcheck disable=SC2012 # the cache's own names: HEX
ls -1dt "$base"/debs/*/ | tail -n +$((KEEP_BUILDS + 1)) | xargs -r rm -rf
deliver "$result"
