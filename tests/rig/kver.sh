#!/bin/bash
# Print the Debian kernel version the rig boots: the newest /boot/vmlinuz-<v>
# that has kvm-amd among its modules and headers to build modules against.
# The machine's running kernel (uname -r) is not used: it cannot load
# modules; the rig boots Debian's kernel under QEMU/TCG instead.
# $KVER overrides the choice (it is still checked).
set -euo pipefail

usable() {
	local v=$1
	[ -f "/boot/vmlinuz-$v" ] || return 1
	# The package may ship modules compressed (.ko.xz, .ko.zst).
	compgen -G "/lib/modules/$v/kernel/arch/x86/kvm/kvm-amd.ko*" >/dev/null ||
		return 1
	[ -d "/usr/src/linux-headers-$v" ] || [ -e "/lib/modules/$v/build" ]
}

if [ -n "${KVER:-}" ]; then
	if usable "$KVER"; then
		echo "$KVER"
		exit 0
	fi
	echo "kver.sh: KVER=$KVER: needs /boot/vmlinuz-$KVER, kvm-amd.ko in" \
		"/lib/modules/$KVER and its headers" >&2
	exit 1
fi

best=
# sort -V orders 6.1.0-9 before 6.1.0-10, as the kernel ABI numbers go.
while read -r v; do
	usable "$v" && best=$v
done < <(for f in /boot/vmlinuz-*; do
	[ -e "$f" ] && echo "${f#/boot/vmlinuz-}"
done | sort -V)

if [ -z "$best" ]; then
	echo "kver.sh: no usable Debian kernel: need /boot/vmlinuz-<v> with" \
		"/lib/modules/<v>/kernel/arch/x86/kvm/kvm-amd.ko and" \
		"linux-headers-<v>; run tests/rig/deps.sh" >&2
	exit 1
fi
echo "$best"
