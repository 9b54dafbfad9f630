#!/bin/bash
# Build the rig's initramfs (gzip'd newc cpio) for L1, or for L2 with --l2.
#
#   mkinitramfs.sh [--l2] OUT.cpio.gz PAYLOAD_DIR   base + payload, one file
#   mkinitramfs.sh [--l2] --base-only OUT.cpio.gz   busybox, /init, modules
#   mkinitramfs.sh --payload-only OUT.cpio.gz PAYLOAD_DIR
#                                                   /payload + its shared libs
#   mkinitramfs.sh [--l2] --base-key                print the base's cache key
#   --no-gzip: write a plain cpio. The kernel takes it as well, and unpacks
#   it much faster under TCG: boot-l1.sh uses it for big payloads (QEMU).
#
# The kernel unpacks concatenated cpio archives in order, so a base and a
# payload archive can be built apart and joined with cat: boot-l1.sh caches
# the base (the slow, unchanging part) under its --base-key.
#
# Base: /bin/busybox (static) and its applet links; /init (init.sh) and
# /etc/rig-protocol.sh (protocol.sh, which init.sh and run-l2 source); for L1
# the modules irqbypass, ccp, kvm, kvm-amd, e1000 and their dependencies from
# modules.dep, decompressed (busybox insmod cannot read .ko.xz/.ko.zst), and
# /etc/rig-modules listing them in load order with their parameters.
# Payload: PAYLOAD_DIR's contents at /payload, plus the shared libraries
# (found with ldd) of every dynamically linked ELF file in it, at their usual
# paths, so that programs built with plain gcc (and the Debian QEMU) run.
#
# KVER selects the kernel (default: scripts/kver.sh boot's choice; its
# modules are under scripts/kver.sh boot-root's lib/modules).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUSYBOX=/bin/busybox

die() {
	echo "mkinitramfs.sh: $*" >&2
	exit 1
}
# shellcheck source=scripts/ldd-libs.sh
. "$here/../../scripts/ldd-libs.sh"

usage() {
	sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

level=1
mode=full
compress="gzip -6 -n" # -n: no name or mtime in the header: reproducible
while [ $# -gt 0 ]; do
	case "$1" in
	--l2) level=2 ;;
	--base-only) mode=base ;;
	--payload-only) mode=payload ;;
	--base-key) mode=key ;;
	--no-gzip) compress="cat" ;;
	-h | --help) usage ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done

case "$mode" in
key) [ $# -eq 0 ] || usage ;;
base) [ $# -eq 1 ] || usage ;;
*) [ $# -eq 2 ] || usage ;;
esac
out=${1:-}
payload=${2:-}
if [ -n "$payload" ] && [ ! -d "$payload" ]; then
	die "payload directory $payload does not exist"
fi

for tool in cpio gzip; do
	command -v "$tool" >/dev/null || die "$tool missing: run tests/rig/deps.sh"
done

# Modules L1 needs, with their insmod parameters. Dependencies not named here
# are added from modules.dep. kvm_amd nested=1: L1 must run L2 guests.
# e1000: the NIC of boot-l1.sh --hostfwd (one module, no dependencies;
# without a NIC it only registers its driver).
L1_MODULES=("irqbypass" "ccp" "kvm" "kvm_amd nested=1" "e1000")

kver=
kroot= # where lib/modules/$kver is: / or RIG_L1_KERNEL's directory
modlist=() # "path params" in load order (absolute host paths)

# Depth-first over modinfo's "depends", dependencies first, each module once.
declare -A seen=()
add_module() {
	local name=$1 params=${2:-} path deps d
	path=$(modinfo -b "$kroot" -k "$kver" -n "$name" 2>/dev/null) ||
		die "module $name not found for kernel $kver in $kroot (linux-image-$kver installed?)"
	# -b / answers //lib/...: one slash, symlinks kept
	path=$(realpath -s "$path")
	[ -n "${seen[$path]:-}" ] && return 0
	seen[$path]=1
	deps=$(modinfo -b "$kroot" -k "$kver" -F depends "$name")
	for d in ${deps//,/ }; do
		add_module "$d"
	done
	modlist+=("$path${params:+ $params}")
}

resolve_modules() {
	command -v modinfo >/dev/null || die "modinfo missing: run tests/rig/deps.sh"
	kver=$("$here/../../scripts/kver.sh" boot)
	kroot=$("$here/../../scripts/kver.sh" boot-root)
	local m
	for m in "${L1_MODULES[@]}"; do
		# $m is "name [params]": split it into its words.
		# shellcheck disable=SC2086
		add_module $m
	done
}

base_key() {
	# Everything the base is made of: this script, init.sh, protocol.sh,
	# busybox, the level, the kernel version and each module's content.
	{
		echo "level=$level"
		sha256sum "${BASH_SOURCE[0]}" "$here/init.sh" "$here/protocol.sh" "$BUSYBOX" | cut -d' ' -f1
		if [ "$level" = 1 ]; then
			echo "kver=$kver"
			local e
			for e in "${modlist[@]}"; do
				echo "$e $(sha256sum <"${e%% *}" | cut -d' ' -f1)"
			done
		fi
	} | sha256sum | cut -c1-16
}

# Pack directory $1 into gzip'd newc cpio $2 (written atomically).
pack() {
	local dir=$1 dst=$2
	# Owner root, sorted names: same input, same bytes.
	# $compress unquoted: a command and its options.
	# shellcheck disable=SC2086
	(cd "$dir" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --reproducible --quiet) | $compress >"$dst.tmp"
	mv "$dst.tmp" "$dst"
}

build_base() {
	local root=$1 a e ko dst rel
	[ -x "$BUSYBOX" ] || die "$BUSYBOX missing: run tests/rig/deps.sh (busybox-static)"
	# A dynamic busybox would need libraries we do not copy.
	if ldd "$BUSYBOX" >/dev/null 2>&1; then
		die "$BUSYBOX is dynamically linked: install busybox-static"
	fi
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,etc,payload}
	chmod 1777 "$root/tmp"
	cp "$BUSYBOX" "$root/bin/busybox"
	# Applet links, each where busybox says it lives (bin/ls, sbin/insmod...).
	while read -r a; do
		[ "$a" = bin/busybox ] && continue
		mkdir -p "$root/$(dirname "$a")"
		ln -sf /bin/busybox "$root/$a"
	done < <("$BUSYBOX" --list-full)
	install -m 0755 "$here/init.sh" "$root/init"
	install -m 0644 "$here/protocol.sh" "$root/etc/rig-protocol.sh"
	# Initial console for /init; init.sh reopens it after mounting devtmpfs,
	# so a build that cannot mknod (not root) still works.
	mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true

	: >"$root/etc/rig-modules"
	[ "$level" = 1 ] || return 0
	for e in "${modlist[@]}"; do
		ko=${e%% *}
		rel=${ko#"${kroot%/}"}
		rel=${rel#/lib/modules/}
		rel=${rel#/usr/lib/modules/}
		rel=/lib/modules/${rel%.xz}
		rel=${rel%.zst}
		rel=${rel%.gz}
		dst=$root$rel
		mkdir -p "$(dirname "$dst")"
		case "$ko" in
		*.ko) cp "$ko" "$dst" ;;
		*.ko.xz) xz -dc "$ko" >"$dst" ;;
		*.ko.zst) zstd -qdc "$ko" >"$dst" ;;
		*.ko.gz) gzip -dc "$ko" >"$dst" ;;
		*) die "unknown module file type: $ko" ;;
		esac
		if [ "$e" = "$ko" ]; then
			echo "$rel" >>"$root/etc/rig-modules"
		else
			echo "$rel ${e#* }" >>"$root/etc/rig-modules"
		fi
	done
}

# Copy $1 (a host file) to the same path under $2, following symlinks.
copy_lib() {
	local lib=$1 root=$2
	[ -e "$root$lib" ] && return 0
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
}

build_payload() {
	local root=$1 src=$2 f magic line lib
	mkdir -p "$root/payload"
	cp -a "$src/." "$root/payload/"
	[ -e "$root/payload/run" ] && [ ! -x "$root/payload/run" ] &&
		echo "mkinitramfs.sh: warning: $src/run is not executable: init will skip it" >&2
	# Shared libraries of every dynamically linked ELF file of the payload,
	# but a QEMU bundle's sysroot/, which holds its own (add-qemu.sh).
	while IFS= read -r -d '' f; do
		magic=$(head -c4 "$f" | od -An -c | tr -d ' ')
		[ "$magic" = '177ELF' ] || continue
		# ldd fails on static binaries ("not a dynamic executable"): skip.
		line=$(ldd "$f" 2>/dev/null) || continue
		ldd_check "$line" "$f"
		while read -r lib; do
			copy_lib "$lib" "$root"
		done < <(ldd_libraries "$line"; ldd_loader "$line")
	done < <(find "$root/payload" -path '*/sysroot' -prune -o -type f -print0)
}

[ "$level" = 1 ] && [ "$mode" != payload ] && resolve_modules
if [ "$mode" = key ]; then
	base_key
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rig-initramfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$(dirname "$out")"

case "$mode" in
base)
	build_base "$work/root"
	pack "$work/root" "$out"
	;;
payload)
	build_payload "$work/root" "$payload"
	pack "$work/root" "$out"
	;;
full)
	build_base "$work/base"
	build_payload "$work/pl" "$payload"
	pack "$work/base" "$work/base.cpio.gz"
	pack "$work/pl" "$work/pl.cpio.gz"
	# Both gzip'd: no alignment needed between them (see boot-l1.sh).
	cat "$work/base.cpio.gz" "$work/pl.cpio.gz" >"$out.tmp"
	mv "$out.tmp" "$out"
	;;
esac
echo "mkinitramfs.sh: wrote $out ($(du -h "$out" | cut -f1))" >&2
