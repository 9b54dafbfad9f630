#!/bin/bash
# Install the Debian packages the nested test rig needs (see
# doc/TEST-RIG.md), with the project's (scripts/deps.sh). Idempotent:
# packages already installed are not touched and apt is not even asked.
# Run as root (or with sudo) on Debian bookworm.
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

# scripts/deps.sh installs them with the project's own (one installer:
# apt is asked only for what is missing)
exec "$(dirname "${BASH_SOURCE[0]}")/../../scripts/deps.sh" "${PKGS[@]}"
