#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The patched QEMU with -device pv-perfmon, as the rig and `make run` use
# it: the qemu-system-x86-pvperfmon package for Debian trixie, built from
# the qemu-pvperfmon source package (scripts/qemu-deb-source.sh: Debian
# trixie's QEMU 10.0 source with qemu-patches/ and qemu-deb/debian/) in a
# clean trixie chroot without network (scripts/deb-chroot.sh), then
# bundled with the trixie libraries it was built against
# (scripts/qemu-bundle.sh), so that it runs on this bookworm machine and
# in the rig's L1. One QEMU build serves the packages and the rig.
#
#   scripts/qemu-build.sh               build if needed; progress, then the
#                                       launcher's path on the last line
#   scripts/qemu-build.sh --print-path  the same, but stdout is only the path
#                                       (progress goes to stderr)
#
# Cached by content outside the repository, under
# ${XDG_CACHE_HOME:-~/.cache}/kvm-perfmon/: the source package
# (qemu-deb/), its .debs and build chroot (deb-chroot/), and
#   qemu-bundle/KEY/   the bundle; KEY hashes the package's .deb,
#                      qemu-bundle.sh and ldd-libs.sh. The two newest are kept.
# Warm: each step only checks its key (under a second). Cold: a QEMU build,
# 20 to 40 minutes on 2 cores, and the chroot's Build-Depends (see
# debian/README.source). Needs root (chroot, debootstrap).
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUITE=trixie
PKG=qemu-system-x86-pvperfmon
LAUNCHER=bin/qemu-system-x86_64-pvperfmon
KEEP=2

print_path=
case "${1:-}" in
--print-path) print_path=1 ;;
"") ;;
*)
	echo "usage: scripts/qemu-build.sh [--print-path]" >&2
	exit 2
	;;
esac
# progress: stdout normally, stderr with --print-path
if [ -n "$print_path" ]; then
	exec 3>&2
else
	exec 3>&1
fi
say() { echo "qemu-build: $*" >&3; }
die() {
	echo "qemu-build: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "must run as root (the chroot build)"

cache=${XDG_CACHE_HOME:-${HOME:?set HOME or XDG_CACHE_HOME}/.cache}/kvm-perfmon
mkdir -p "$cache/qemu-bundle"
exec 8>>"$cache/qemu-bundle/.lock"
flock 8
work=$(mktemp -d "$cache/qemu-bundle/.work.XXXXXX")
trap 'rm -rf "$work"' EXIT

dsc=$("$TOP/scripts/qemu-deb-source.sh" "$work/source" 2>&3 | tail -n 1)
deb=$("$TOP/scripts/deb-chroot.sh" "$SUITE" "$dsc" "$work/debs" 2>&3 |
	grep "/${PKG}_[^/]*\.deb$") || die "the build gave no $PKG .deb"

key=$({
	sha256sum <"$deb"
	cat "$TOP/scripts/qemu-bundle.sh" "$TOP/scripts/ldd-libs.sh" | sha256sum
} | sha256sum | cut -c1-16)
out=$cache/qemu-bundle/$key
if [ ! -x "$out/$LAUNCHER" ]; then
	root=$("$TOP/scripts/deb-chroot.sh" --root "$SUITE" "$dsc" 2>&3)
	rm -rf "$out.new"
	"$TOP/scripts/qemu-bundle.sh" "$deb" "$root" "$out.new" 2>&3
	mv "$out.new" "$out"
	# shellcheck disable=SC2012 # the cache's own names: hex keys
	ls -1dt "$cache"/qemu-bundle/*/ | tail -n +$((KEEP + 1)) | xargs -r rm -rf
fi
touch "$out"
say "up to date: $(basename "$deb") (bundle $key)"
echo "$out/$LAUNCHER"
