#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build kvm-perfmon's Debian packages (debian/) from this tree:
#   scripts/deb-build.sh [OUTDIR]      (default build/deb; `make deb`)
# Installs the packaging tools and Build-Depends when missing (root), gets
# the patched QEMU from scripts/qemu-build.sh's cache (building it once if
# needed), copies the tree's files (git's tracked and untracked, not
# ignored) to OUTDIR/src/kvm-perfmon-VERSION, runs dpkg-buildpackage -us
# -uc -b there and leaves the .debs, .buildinfo and .changes in OUTDIR.
# Prints the .debs' paths last.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mkdir -p "${1:-$TOP/build/deb}" && cd "${1:-$TOP/build/deb}" && pwd)

say() { echo "deb-build: $*" >&2; }

# the tools and Build-Depends (the virtual dh-sequence-dkms is dh-dkms)
"$TOP/scripts/deps.sh" dpkg-dev debhelper dh-dkms fakeroot libdw-dev \
	libjson-c-dev libmicrohttpd-dev libpfm4-dev python3 >&2
qemu=$("$TOP/scripts/qemu-build.sh" --print-path)

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

say "dpkg-buildpackage -us -uc -b in $src (QEMU_PV=$qemu)"
(cd "$src" && QEMU_PV=$qemu dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	say "failed, see $out/build.log"
	exit 1
}
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mv "$out"/src/*.deb "$out"/src/*.buildinfo "$out"/src/*.changes "$out/"
rm -rf "$out/src"
say "log: $out/build.log"
ls -1 "$out"/*.deb
