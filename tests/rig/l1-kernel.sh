#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Another Debian suite's kernel for the rig's L1 (RIG_L1_KERNEL=SUITE,
# scripts/kver.sh): the suite's linux-image-amd64 as Debian's registry
# has it now, unpacked with dpkg -x, its modules indexed with depmod.
#
#   tests/rig/l1-kernel.sh SUITE    prints the kernel's directory last
#
# The directory holds boot/vmlinuz-<release>, lib/modules/<release>/ and
# kver (the release). Cached by content outside the repository, in
# $XDG_CACHE_HOME/kvm-perfmon/l1-kernels/SUITE/KEY (default ~/.cache);
# KEY hashes this script and the image package's name and version, read
# from the suite's index with tests/kernels/apt.sh (the machine's
# /etc/apt is not used). One maker at a time (a lock per suite); the
# suite's older kernels are removed. Without the registry, the newest
# cached one is used, saying so.
set -euo pipefail

# shellcheck source=tests/rig/suite-cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/suite-cache.sh"
suite_cache_open l1-kernels "$@"

# the flavour's image package the meta-package depends on, e.g.
# linux-image-6.12.117+deb13-amd64 (= 6.12.117-1)
suite_cache_depends linux-image-amd64 'linux-image-[0-9][^ ,]*-amd64'

suite_cache_entry kver "$(
	cat "${BASH_SOURCE[0]}"
	echo "$suite $pkg"
)"

suite_cache_work
echo "l1-kernel.sh: fetching $pkg from $suite" >&2
# root downloads into a directory the _apt user cannot write: no sandbox
(cd "$work" && "$apt" "$suite" apt-get -qq -o APT::Sandbox::User=root \
	download "$pkg") ||
	die "apt-get download $pkg failed"
# from 7.x the image package only depends on the kernel's binary and
# modules packages: those, at the same version, are taken too
parts=$(dpkg-deb -f "$work"/linux-image-*.deb Depends | tr ',' '\n' |
	sed -n 's/^ *\(linux-\(binary\|modules\)-[^ ]*\) (= \([^)]*\)).*/\1=\3/p')
for part in $parts; do
	(cd "$work" && "$apt" "$suite" apt-get -qq -o APT::Sandbox::User=root \
		download "$part") ||
		die "apt-get download $part failed"
done
for deb in "$work"/*.deb; do
	dpkg -x "$deb" "$work/root"
done
# since trixie the modules are under usr/ (merged /usr): where the
# machine's are, at lib/modules, for modinfo -b and depmod -b
if [ -d "$work/root/usr/lib/modules" ] && [ ! -e "$work/root/lib" ]; then
	ln -s usr/lib "$work/root/lib"
fi
rel=$(find "$work/root/lib/modules/" -mindepth 1 -maxdepth 1 -printf '%f\n')
# 7.x's binary package has the image beside the modules, not in /boot
if [ ! -e "$work/root/boot/vmlinuz-$rel" ] &&
	[ -f "$work/root/lib/modules/$rel/vmlinuz" ]; then
	mkdir -p "$work/root/boot"
	ln -s "../lib/modules/$rel/vmlinuz" "$work/root/boot/vmlinuz-$rel"
fi
if [ "$(echo "$rel" | wc -l)" != 1 ] || [ ! -f "$work/root/boot/vmlinuz-$rel" ]; then
	die "$pkg: not one release with its vmlinuz (found: $rel)"
fi
# modules.dep and friends, which the package leaves to its postinst
depmod -b "$work/root" "$rel"
echo "$rel" >"$work/root/kver"
mv -T "$work/root" "$out"
suite_cache_keep "$out"
echo "l1-kernel.sh: $suite's $rel in $out" >&2
echo "$out"
