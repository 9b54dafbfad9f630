#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC3043 # local: dash and bash have it
#
# Which Debian kernel: the one place that answers it, for the two
# questions the project asks.
#
#   scripts/kver.sh build      the release kvm-perfmon.ko and perfmon2.ko
#                              are built against, e.g. 6.1.0-56-amd64
#   scripts/kver.sh build-dir  that kernel's build tree, e.g.
#                              /lib/modules/<v>/build
#                              (KDIR=<dir> picks the tree for both)
#   scripts/kver.sh boot       the release the nested rig boots as L1 and
#                              L2 (tests/rig), and `make run` as its guest
#                              (KVER=<v> picks it; it is still checked)
#   scripts/kver.sh boot-root  the directory whose boot/vmlinuz-<v> and
#                              lib/modules/<v>/ are that kernel's: / for
#                              the machine's
#   scripts/kver.sh l2-boot    the release the rig's L2 boots
#   scripts/kver.sh l2-vmlinuz its image
#
# RIG_L1_KERNEL=SUITE (e.g. trixie): the rig's L1 boots that Debian
# suite's kernel instead of the machine's, as tests/rig/l1-kernel.sh
# fetches and caches it (boot and boot-root answer for it); the host
# module is then built for it in the suite's chroot (tests/kernels).
# RIG_L1_KERNEL=debug: L1 boots the kernel tests/rig/debug-kernel.sh
# builds (Debian's source with lockdep and KASAN, cached), and the host
# module is built for it against its own tree (tests/rig/modules.sh).
# RIG_L2_KERNEL=SUITE: the same for L2 (l2-boot, l2-vmlinuz) and the
# guest module. L2's initramfs holds no kernel modules but perfmon2.ko,
# so L1 and L2 may boot different kernels (tests/rig/modules.sh gives
# each level its module).
#
# The running kernel of our machines is not a Debian kernel, has no headers
# and cannot load modules, so `uname -r` answers neither question.
# build: the newest installed Debian headers (package linux-headers-amd64,
# which `make deps` installs). boot: the newest /boot/vmlinuz-<v> that has
# kvm-amd among its modules and headers to build modules against. With
# Debian's meta-packages both are the same release, and must be: a module
# loads only into the kernel it was built against. Never hard-code a
# version: the meta-packages move with every Debian update.
set -eu

die() {
	echo "kver.sh: $*" >&2
	exit 1
}

# release of a build tree (Debian's include/config/kernel.release holds the
# upstream version, 6.1.x; the module's vermagic uses UTS_RELEASE)
release() {
	sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$1/include/generated/utsrelease.h" 2>/dev/null
}

# the build tree: $KDIR, else the one with the newest release
build_dir() {
	local d rel best="" bestrel=""
	if [ -n "${KDIR:-}" ]; then
		[ -n "$(release "$KDIR")" ] || die "KDIR=$KDIR is no kernel build tree"
		echo "$KDIR"
		return
	fi
	# Candidates: /lib/modules/*/build (the symlinks the headers packages
	# ship) first, then /usr/src/linux-headers-*-amd64 (the trees). A
	# usable tree has a Makefile and a release.
	for d in /lib/modules/*/build /usr/src/linux-headers-*-amd64; do
		[ -f "$d/Makefile" ] || continue
		rel=$(release "$d")
		[ -n "$rel" ] || continue
		if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$bestrel" "$rel" |
			sort -V | tail -n 1)" != "$bestrel" ]; then
			best=$d
			bestrel=$rel
		fi
	done
	[ -n "$best" ] || die "no kernel build tree found (looked in" \
		"/lib/modules/*/build and /usr/src/linux-headers-*-amd64); run 'make deps'"
	echo "$best"
}

# a kernel the rig can boot: image, kvm-amd (maybe compressed), headers
bootable() {
	local m
	[ -f "/boot/vmlinuz-$1" ] || return 1
	for m in "/lib/modules/$1/kernel/arch/x86/kvm/kvm-amd.ko"*; do
		[ -e "$m" ] || return 1
		break
	done
	[ -d "/usr/src/linux-headers-$1" ] || [ -e "/lib/modules/$1/build" ]
}

boot_release() {
	local f v best=""
	if [ -n "${KVER:-}" ]; then
		bootable "$KVER" || die "KVER=$KVER: needs /boot/vmlinuz-$KVER," \
			"kvm-amd.ko in /lib/modules/$KVER and its headers"
		echo "$KVER"
		return
	fi
	# sort -V orders 6.1.0-9 before 6.1.0-10, as the kernel ABI numbers go
	for v in $(for f in /boot/vmlinuz-*; do
		[ -e "$f" ] && echo "${f#/boot/vmlinuz-}"
	done | sort -V); do
		bootable "$v" && best=$v
	done
	[ -n "$best" ] || die "no kernel the rig can boot: need" \
		"/boot/vmlinuz-<v> with /lib/modules/<v>/kernel/arch/x86/kvm/kvm-amd.ko" \
		"and linux-headers-<v>; run 'make deps'"
	echo "$best"
}

# the directory of suite $1's kernel (fetched if need be), or of the
# debug kernel (built if need be); $2 names the setting that asked
suite_root() {
	if [ "$1" = debug ]; then
		"$(dirname "$0")/../tests/rig/debug-kernel.sh" ||
			die "$2=$1: no debug kernel (see above)"
	else
		"$(dirname "$0")/../tests/rig/l1-kernel.sh" "$1" ||
			die "$2=$1: no kernel (see above)"
	fi
}

l1_root() {
	suite_root "$RIG_L1_KERNEL" RIG_L1_KERNEL
}

case "${1:-}" in
build)
	kdir=$(build_dir)
	release "$kdir"
	;;
build-dir) build_dir ;;
boot)
	if [ -n "${RIG_L1_KERNEL:-}" ]; then
		root=$(l1_root)
		cat "$root/kver"
	else
		boot_release
	fi
	;;
boot-root)
	if [ -n "${RIG_L1_KERNEL:-}" ]; then
		l1_root
	else
		echo /
	fi
	;;
l2-boot | l2-vmlinuz)
	if [ -n "${RIG_L2_KERNEL:-}" ]; then
		root=$(suite_root "$RIG_L2_KERNEL" RIG_L2_KERNEL)
		v=$(cat "$root/kver")
	else
		root=
		v=$(boot_release)
	fi
	if [ "$1" = l2-boot ]; then
		echo "$v"
	else
		echo "$root/boot/vmlinuz-$v"
	fi
	;;
*)
	echo "usage: scripts/kver.sh build|build-dir|boot|boot-root|l2-boot|l2-vmlinuz" >&2
	exit 2
	;;
esac
