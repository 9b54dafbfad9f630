#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The patched QEMU of a Debian package, runnable on a host of an older
# Debian release and in the rig's L1 initramfs: the binary with the
# shared libraries it was built against, and its own dynamic loader.
#
#   scripts/qemu-bundle.sh DEB ROOT OUT
#
# DEB: qemu-system-x86-pvperfmon's .deb; ROOT: a root filesystem of the
# release DEB was built for, holding its libraries (the build's chroot).
# OUT (made anew):
#   bin/qemu-system-x86_64-pvperfmon   a launcher: runs the binary with the
#                                      loader and libraries below (argv[0]
#                                      kept); any path to it works, a
#                                      symbolic link too
#   sysroot/qemu-system-x86_64-pvperfmon   the binary from DEB
#   sysroot/ld.so, sysroot/lib/        the loader and libraries from ROOT
#                                      (as ldd in ROOT finds them)
# The rig copies OUT's bin/ and sysroot/ side by side (tests/rig/add-qemu.sh)
# and leaves sysroot/ out of its own library pass (mkinitramfs.sh).
# Needs root (chroot).
set -euo pipefail

die() {
	echo "qemu-bundle.sh: $*" >&2
	exit 1
}
# shellcheck source=scripts/ldd-libs.sh
. "$(dirname "${BASH_SOURCE[0]}")/ldd-libs.sh"
[ $# -eq 3 ] || die "usage: qemu-bundle.sh DEB ROOT OUT"
deb=$1 root=$2 out=$3
NAME=qemu-system-x86_64-pvperfmon

work=$(mktemp -d "$root/tmp/qemu-bundle.XXXXXX")
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work/x"
[ -x "$work/x/usr/bin/$NAME" ] || die "$deb has no /usr/bin/$NAME"

rm -rf "$out"
mkdir -p "$out/bin" "$out/sysroot/lib"
cp "$work/x/usr/bin/$NAME" "$out/sysroot/$NAME"
libs=$(chroot "$root" ldd "/${work#"$root"/}/x/usr/bin/$NAME") ||
	die "ldd in $root failed"
ldd_check "$libs" "$NAME in $root"
while read -r lib; do
	cp -L "$root$lib" "$out/sysroot/lib/"
done < <(ldd_libraries "$libs")
loader=$(ldd_loader "$libs")
[ -n "$loader" ] || die "ldd names no loader for $NAME"
cp -L "$root$loader" "$out/sysroot/ld.so"

cat >"$out/bin/$NAME" <<'EOF'
#!/bin/sh
# The patched QEMU with the libraries it was built against
# (scripts/qemu-bundle.sh): sysroot/ beside this directory.
s=$(dirname "$(readlink -f "$0")")/../sysroot
exec "$s/ld.so" --library-path "$s/lib" --argv0 "$0" \
	"$s/qemu-system-x86_64-pvperfmon" "$@"
EOF
chmod 755 "$out/bin/$NAME"
"$out/bin/$NAME" -device help | grep -q '"pv-perfmon"' ||
	die "the bundle's $NAME does not run here, or has no pv-perfmon"
echo "qemu-bundle.sh: $("$out/bin/$NAME" --version | head -n 1), $(find "$out/sysroot/lib" -type f | wc -l) libraries, $(du -sh "$out" | cut -f1)" >&2
