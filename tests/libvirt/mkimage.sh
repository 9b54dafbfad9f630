#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian trixie root filesystems of the libvirt stage (a stock KVM
# host of today's Debian: kernel 6.12, libvirt 11.3, and its guest), made
# with debootstrap from Debian's registry (KERNELS_MIRROR, as for the
# kernels stage; the machine's apt configuration is not read), and cached
# by content outside the repository: the key is this script (its package
# lists and setup), the mirror and the extra packages given.
# They hold Debian's packages only, never the project's: those are
# installed per run into a copy (rig-libvirt.sh).
#
#   tests/libvirt/mkimage.sh l1|l2 [EXTRA_PKG...]
#
# EXTRA_PKG: Debian packages the project's .debs depend on that the image
# lacks (rig-libvirt.sh passes them, so that a run installs offline).
# Prints the image's directory last, which holds:
#   disk.img     ext4 root filesystem (sparse), the whole disk (no partition)
#   vmlinuz      the image's kernel, initrd.img its initramfs (virtio, ext4)
#   kver         that kernel's release (the one DKMS builds for)
#   packages     the image's packages: "ii  NAME VERSION" (dpkg-query)
# in $XDG_CACHE_HOME/kvm-perfmon/debian-LEVEL/KEY (default ~/.cache).
# Cold: debootstrap and the image take minutes (see tests/rig/README.md);
# warm: nothing. Needs root, debootstrap, e2fsprogs.
set -euo pipefail

die() {
	echo "mkimage.sh: $*" >&2
	exit 2
}

[ $# -ge 1 ] || die "usage: mkimage.sh l1|l2 [EXTRA_PKG...]"
level=$1
shift
extra=("$@")
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap missing (tests/rig/deps.sh)"

SUITE=trixie
MIRROR=${KERNELS_MIRROR:-http://deb.debian.org/debian}
# Why each package is here (on top of debootstrap's minbase):
#   linux-image-amd64 linux-headers-amd64 dkms gcc make libc6-dev
#                       the level's own kernel, and what DKMS needs to build
#                       the project's module for it
#   initramfs-tools kmod udev   the kernel's initramfs; modprobe, device
#                       nodes and their rules
# L1, a stock libvirt KVM host:
#   systemd systemd-sysv dbus   systemd as init (libvirtd talks D-Bus)
#   apparmor            Debian's LSM, enforcing libvirt's QEMU profiles
#   libvirt-daemon-system libvirt-clients   libvirtd, virsh
#   qemu-system-x86     Debian's QEMU (the patched one installs beside it)
#   qemu-system-data    QEMU's firmware and keymaps
#   procps iproute2     ps, ip for the logs
#   augeas-tools        kvm-perfmon-libvirt's dependency (augtool edits
#                       qemu.conf with libvirt's lens), in the image so
#                       that the project's .debs add nothing (as below)
#   libjson-c5 libmicrohttpd12t64 libyaml-0-2 libpfm4
#                       kvm-perfmon-tools' libraries (the exporter's web
#                       config is YAML, libpfm4 names guest events; the other
#                       packages' come with Debian's QEMU and libvirt):
#                       so that the project's .debs add nothing to the
#                       image, which then stays the same when they change
#   libiscsi7 libjack-jackd2-0 libnfs14 libpulse0 libvirglrenderer1
#   libpipewire-0.3-0t64 libspice-server1 libdw1t64
#                       the patched QEMU's libraries that Debian's
#                       qemu-system-x86 does not pull in (it has them in
#                       modules of its own: pipewire audio, libdw);
#                       without them a run would
#                       make a second L1 image (rig-libvirt.sh)
# L2, the guest: booted with a small init script (l2-init.sh), no systemd.
#   libpfm4 libdw1t64 libelf1t64   pfmon's libraries (as libjson-c5 for L1)
COMMON=(linux-image-amd64 linux-headers-amd64 dkms gcc make libc6-dev
	initramfs-tools kmod udev)
case "$level" in
l1)
	PKGS=("${COMMON[@]}" systemd systemd-sysv dbus apparmor
		libvirt-daemon-system libvirt-clients qemu-system-x86
		qemu-system-data procps iproute2 augeas-tools libjson-c5
		libmicrohttpd12t64 libyaml-0-2 libpfm4
		libiscsi7 libjack-jackd2-0 libnfs14 libpulse0 libvirglrenderer1
		libpipewire-0.3-0t64 libspice-server1 libdw1t64)
	SIZE=6G
	;;
l2)
	PKGS=("${COMMON[@]}" libpfm4 libdw1t64 libelf1t64)
	SIZE=2G
	;;
*) die "level must be l1 or l2" ;;
esac
PKGS+=("${extra[@]}")

key=$({
	cat "${BASH_SOURCE[0]}"
	echo "$level $SUITE $MIRROR"
	printf '%s\n' "${PKGS[@]}" | sort -u
} | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-${HOME:?mkimage.sh: set HOME or XDG_CACHE_HOME}/.cache}/kvm-perfmon/debian-$level
out=$cache/$key
mkdir -p "$cache"

# one builder at a time; a finished image is complete (it is renamed in)
exec 8>>"$cache/.lock"
flock 8
if [ -s "$out/kver" ]; then
	echo "mkimage.sh: $level image from cache" >&2
	echo "$out"
	exit 0
fi

work=$(mktemp -d "$cache/.build.XXXXXX")
root=$work/root
cleanup() {
	for m in var/cache/apt/archives dev proc sys; do
		mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
	done
	rm -rf "$work"
}
trap cleanup EXIT

echo "mkimage.sh: debootstrap $SUITE for $level from $MIRROR (cold: minutes)" >&2
t0=$SECONDS
# Debian's .debs as downloaded (checked against the suite's signed
# Release), kept for the next cold build; one directory a level, as both
# are built at once and apt locks its archive directory
debcache=${cache%/*}/debian-archives/$level
mkdir -p "$debcache"
# debootstrap makes a minimal system (with initramfs-tools, to configure
# it before a kernel is there); apt installs the rest in it: debootstrap's
# own configuration of a long --include list fails (polkitd, for
# libvirt-daemon-system, on bookworm), apt's ordering does not.
debootstrap --variant=minbase --cache-dir="$debcache" \
	--keyring=/usr/share/keyrings/debian-archive-keyring.gpg --include=initramfs-tools \
	"$SUITE" "$root" "$MIRROR" \
	>"$work/debootstrap.log" 2>&1 ||
	{ tail -n 30 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
echo "mkimage.sh: debootstrap took $((SECONDS - t0))s" >&2

# The disk is the whole of /dev/vda (virtio), ext4, no partition table.
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$root/etc/fstab"
echo "debian-$level" >"$root/etc/hostname"
# A small initramfs (unpacked under TCG at every boot, and made far
# faster here): only what mounts the root filesystem, not
# initramfs-tools' "most" (every storage driver; 10+ minutes here on a
# loaded machine). Set before the kernel is installed, which makes it.
sed -i 's/^MODULES=.*/MODULES=list/' "$root/etc/initramfs-tools/initramfs.conf"
printf '%s\n' virtio_pci virtio_blk ext4 >>"$root/etc/initramfs-tools/modules"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind "$debcache" "$root/var/cache/apt/archives"
t1=$SECONDS
# apt's lists are debootstrap's (the same suite and mirror)
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y \
	--no-install-recommends "${PKGS[@]}" >"$work/apt.log" 2>&1 ||
	{ tail -n 30 "$work/apt.log" >&2; die "apt-get install in the $level image failed"; }
umount "$root/var/cache/apt/archives"
echo "mkimage.sh: apt-get install of ${#PKGS[@]} packages took $((SECONDS - t1))s" >&2
kver=$(find "$root/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)
[ -n "$kver" ] && [ -f "$root/boot/vmlinuz-$kver" ] && [ -f "$root/boot/initrd.img-$kver" ] ||
	die "no kernel or initramfs in the $level root filesystem"

if [ "$level" = l1 ]; then
	# No login on the console: it is the test's (its unit writes there).
	chroot "$root" systemctl mask serial-getty@ttyS0.service getty@tty1.service \
		>/dev/null 2>&1
	# Not a first boot (which would apply the unit presets) every time.
	chroot "$root" systemd-machine-id-setup >/dev/null 2>&1
	# Units that only cost boot time in a throw-away test host.
	chroot "$root" systemctl mask e2scrub_reap.service apt-daily.timer \
		apt-daily-upgrade.timer >/dev/null 2>&1 || true
fi
chroot "$root" dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\n' \
	>"$work/packages"
rm -rf "$root/var/cache/apt/archives/"*.deb
cleanup_mounts() {
	for m in dev proc sys; do umount "$root/$m"; done
}
cleanup_mounts

echo "mkimage.sh: making the $level disk image ($SIZE, sparse)" >&2
mkdir -p "$work/out"
cp "$root/boot/vmlinuz-$kver" "$work/out/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/out/initrd.img"
mke2fs -q -t ext4 -L "debian-$level" -d "$root" "$work/out/disk.img" "$SIZE"
mv "$work/packages" "$work/out/packages"
echo "$kver" >"$work/out/kver"
rm -rf "$out"
mv "$work/out" "$out"
echo "mkimage.sh: $level image ready in $((SECONDS - t0))s: $out" >&2
echo "$out"
