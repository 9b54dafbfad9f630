#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build kvm-perfmon's Debian packages (debian/) from this tree:
#   scripts/deb-build.sh --suite SUITE OUTDIR   in a clean chroot of the
#                                               Debian suite SUITE, e.g.
#                                               trixie (`make deb`)
#   scripts/deb-build.sh [OUTDIR]               on this host (default
#                                               build/deb)
# Both copy the tree's files (git's tracked and untracked, not ignored) to
# OUTDIR/src/kvm-perfmon-VERSION and leave the .debs (with -dbgsym),
# .buildinfo and .changes in OUTDIR; the paths of the .debs are printed
# last. qemu-system-x86-pvperfmon is the qemu-pvperfmon source package's
# (`make qemu-deb`).
#
# In a suite's chroot: makes the tree a native source package (file times
# set to the changelog's, so the same tree gives the same .dsc) and builds
# it with scripts/deb-chroot.sh (no network, an unprivileged user, cached
# by the source package's content).
# On this host: installs the packaging tools and Build-Depends when
# missing (root) and runs dpkg-buildpackage -us -uc -b.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { echo "deb-build: $*" >&2; }

suite=
if [ "${1:-}" = --suite ]; then
	[ $# -eq 3 ] || {
		echo "usage: deb-build.sh [OUTDIR] | --suite SUITE OUTDIR" >&2
		exit 2
	}
	suite=$2
	shift 2
fi
out=$(mkdir -p "${1:-$TOP/build/deb}" && cd "${1:-$TOP/build/deb}" && pwd)

ver=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
src=$out/src/kvm-perfmon-$ver
rm -rf "$out/src"
mkdir -p "$src"
if git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$TOP" && git ls-files -z -c -o --exclude-standard) |
		(cd "$TOP" && while IFS= read -r -d '' f; do
			[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
		done) |
		tar -C "$TOP" --null -T - -cf - | tar -C "$src" -xf -
else
	tar -C "$TOP" --exclude=./build -cf - . | tar -C "$src" -xf -
fi

if [ -n "$suite" ]; then
	sde=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Timestamp)
	find "$src" -exec touch -h -d "@$sde" {} +
	(cd "$out/src" && SOURCE_DATE_EPOCH=$sde dpkg-source -b "kvm-perfmon-$ver") \
		>"$out/source.log" 2>&1 || {
		cat "$out/source.log" >&2
		say "dpkg-source -b failed"
		exit 1
	}
	say "building kvm-perfmon $ver in a $suite chroot (scripts/deb-chroot.sh)"
	rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
	"$TOP/scripts/deb-chroot.sh" "$suite" "$out/src/kvm-perfmon_$ver.dsc" "$out"
	exit
fi

# the tools and Build-Depends (the virtual dh-sequence-dkms is dh-dkms)
"$TOP/scripts/deps.sh" dpkg-dev debhelper dh-dkms fakeroot libdw-dev libiberty-dev \
	libjson-c-dev libmicrohttpd-dev libpfm4-dev libsmartcols-dev zlib1g-dev \
	python3 >&2

say "dpkg-buildpackage -us -uc -b in $src"
(cd "$src" && dpkg-buildpackage -us -uc -b) \
	>"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	say "failed, see $out/build.log"
	exit 1
}
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mv "$out"/src/*.deb "$out"/src/*.buildinfo "$out"/src/*.changes "$out/"
rm -rf "$out/src"
say "log: $out/build.log"
ls -1 "$out"/*.deb
