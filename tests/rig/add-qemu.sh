#!/bin/bash
# Make an L1 payload able to boot an L2 guest: copy the Debian QEMU into it
# with what it needs, the L2 kernel and an L2 initramfs.
#
#   add-qemu.sh [--l2-payload DIR] PAYLOAD_DIR
#
# Adds PAYLOAD_DIR/qemu/:
#   bin/qemu-system-x86_64    the qemu-system-x86_64 first in PATH: Debian's
#                             QEMU (its shared libraries are added by
#                             mkinitramfs.sh's ldd pass, like any payload ELF;
#                             checked here so a missing one fails now), or a
#                             bundle's launcher (scripts/qemu-bundle.sh),
#                             with the bundle's sysroot/ beside bin/
#   share/                    the firmware it loads for -M q35 -kernel:
#                             bios-256k.bin, linuxboot_dma.bin, kvmvapic.bin
#   vmlinuz                   the L2 kernel: the machine's Debian kernel, or
#                             RIG_L2_KERNEL's (scripts/kver.sh l2-vmlinuz)
#   l2-initramfs.cpio.gz      mkinitramfs.sh --l2 with DIR as L2's /payload
#                             (default: one that prints a line and exits 0)
#   run-l2, bad-patterns      the L2 runner (run-l2.sh) and its log patterns
#   boot-guest                scripts/boot-guest.sh, which run-l2 boots L2 with
# The L1 payload's run then calls /payload/qemu/run-l2.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() {
	echo "add-qemu.sh: $*" >&2
	exit 1
}
l2payload=
if [ "${1:-}" = --l2-payload ]; then
	[ $# -ge 2 ] || die "--l2-payload needs a directory"
	l2payload=$2
	shift 2
fi
[ $# -eq 1 ] || die "usage: add-qemu.sh [--l2-payload DIR] PAYLOAD_DIR"
payload=$1
[ -d "$payload" ] || die "payload directory $payload does not exist"
[ -z "$l2payload" ] || [ -d "$l2payload" ] ||
	die "L2 payload directory $l2payload does not exist"

qemu=$(command -v qemu-system-x86_64) ||
	die "qemu-system-x86_64 missing: run tests/rig/deps.sh"
# a bundle's launcher brings its libraries (scripts/qemu-bundle.sh)
sysroot=$(dirname "$(readlink -f "$qemu")")/../sysroot
if [ ! -d "$sysroot" ] && ldd "$qemu" | grep -q 'not found'; then
	die "$qemu has unresolved libraries: $(ldd "$qemu" | grep 'not found')"
fi
kver=$("$here/../../scripts/kver.sh" l2-boot)
vmlinuz=$("$here/../../scripts/kver.sh" l2-vmlinuz)

dst=$payload/qemu
mkdir -p "$dst/bin" "$dst/share"
cp "$qemu" "$dst/bin/qemu-system-x86_64"
[ ! -d "$sysroot" ] || cp -a "$sysroot" "$dst/sysroot"

# Debian puts SeaBIOS in /usr/share/seabios and QEMU's own ROMs in
# /usr/share/qemu (where bios-256k.bin may be a link to the former).
for fw in bios-256k.bin linuxboot_dma.bin kvmvapic.bin; do
	src=
	for d in /usr/share/qemu /usr/share/seabios; do
		if [ -e "$d/$fw" ]; then
			src=$d/$fw
			break
		fi
	done
	[ -n "$src" ] || die "firmware $fw not found (qemu-system-x86, seabios installed?)"
	cp -L "$src" "$dst/share/$fw"
done

cp "$vmlinuz" "$dst/vmlinuz"
if [ -z "$l2payload" ]; then
	l2payload=$(mktemp -d "${TMPDIR:-/tmp}/rig-l2payload.XXXXXX")
	trap 'rm -rf "$l2payload"' EXIT
	printf '#!/bin/sh\necho "L2: hello from the L2 guest"\n' >"$l2payload/run"
	chmod +x "$l2payload/run"
fi
"$here/mkinitramfs.sh" --l2 "$dst/l2-initramfs.cpio.gz" "$l2payload"
install -m 0755 "$here/run-l2.sh" "$dst/run-l2"
install -m 0755 "$here/../../scripts/boot-guest.sh" "$dst/boot-guest"
cp "$here/bad-patterns" "$dst/bad-patterns"
echo "add-qemu.sh: QEMU and L2 kernel/initramfs ($kver) in $dst ($(du -sh "$dst" | cut -f1))"
