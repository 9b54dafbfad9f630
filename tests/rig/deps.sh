#!/bin/bash
# Install the Debian packages the nested test rig needs (see
# doc/TEST-RIG.md). Idempotent: packages already installed are not
# touched and apt is not even asked. Run as root on Debian bookworm.
set -euo pipefail

# Why each package is here:
#   qemu-system-x86      L0 QEMU (TCG, emulated SVM); its binary, libraries and
#                        firmware (seabios, linuxboot_dma.bin, kvmvapic.bin) are
#                        also copied into L1 to run L2 (add-qemu.sh)
#   linux-image-amd64    the Debian kernel booted as L1/L2 and its kvm modules
#   linux-headers-amd64  /lib/modules/<v>/build, for out-of-tree modules (Kbuild)
#   busybox-static       /bin/busybox of the initramfs (static: no libs needed)
#   cpio gzip            pack the initramfs
#   kmod                 modinfo, to find module dependencies
#   xz-utils zstd        unpack .ko.xz / .ko.zst if the kernel ships them so
#   gcc make libc6-dev   build test payloads and out-of-tree modules
#   libc-bin             ldd, to collect shared libraries of payload binaries
#   debootstrap e2fsprogs  the libvirt stage's Debian images (tests/libvirt:
#                        debootstrap, mke2fs -d)
PKGS=(qemu-system-x86 linux-image-amd64 linux-headers-amd64 busybox-static
      cpio gzip kmod xz-utils zstd gcc make libc6-dev libc-bin
      debootstrap e2fsprogs)

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: must run as root (apt-get install)" >&2
	exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
	# dpkg-query prints "install ok installed" only for fully installed ones.
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "deps.sh: all rig packages installed"
	exit 0
fi

echo "deps.sh: installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# --no-install-recommends: recommends would pull in e.g. firmware and GUI bits
# the rig never uses; everything needed is named above or a hard dependency.
apt-get install -y -q --no-install-recommends "${missing[@]}"
