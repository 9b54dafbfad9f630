#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's checkpatch.pl over the project's kernel code; fails on any
# ERROR or WARNING.   scripts/checkpatch.sh [FILE...]
#
# Where checkpatch.pl comes from: Debian bookworm has no checkpatch package.
# It ships the kernel source as a tarball in package linux-source
# (/usr/src/linux-source-6.1.tar.xz, installed by `make deps`); we extract
# scripts/checkpatch.pl with the two data files it reads beside itself
# (spelling.txt, const_structs.checkpatch) into build/checkpatch/<tarball>/
# once (~15 s), and reuse that. CHECKPATCH=/path/to/checkpatch.pl overrides.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"

cp_pl=${CHECKPATCH:-}
if [ -z "$cp_pl" ]; then
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$tarball" ]; then
		echo "checkpatch: no /usr/src/linux-source-*.tar.xz (package" \
			"linux-source); run 'make deps'" >&2
		exit 1
	fi
	cache=build/checkpatch/$(basename "$tarball" .tar.xz)
	cp_pl=$cache/scripts/checkpatch.pl
	if [ ! -f "$cp_pl" ]; then
		echo "checkpatch: extracting checkpatch.pl from $tarball"
		mkdir -p build/checkpatch
		tmp=$(mktemp -d build/checkpatch/tmp.XXXXXX)
		tar -xJf "$tarball" -C "$tmp" --strip-components=1 \
			--wildcards '*/scripts/checkpatch.pl' \
			'*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
		# a concurrent run may have won the race: keep its copy
		mv -T "$tmp" "$cache" 2>/dev/null || rm -rf "$tmp"
	fi
fi

# --no-tree: we are not inside a kernel tree; -f: check whole files, not
# patches; --quiet: print only problems; --show-types: print the type of each
# message, so an ignore can name it; --color=never: logs are files.
CP_FLAGS=(--no-tree -f --quiet --show-types --color=never)

# Ignores, each with its reason. Add one only with a reason a reviewer accepts.
#   ENOSYS (kernel code): the device ABI (include/uapi/pv_perfmon.h) says the
#     host answers an unknown command with -ENOSYS. A pv-perfmon command is
#     the forwarded perfmon2 system call, so "invalid syscall nr" is exactly
#     what it means there.
KERNEL_IGNORES=ENOSYS
#   NEW_TYPEDEFS (include/uapi only): perfmon2.h must be source-compatible
#     with libpfm-3.x's perfmon_v2.h, whose ABI is the pfarg_*_t typedefs.
UAPI_IGNORES=NEW_TYPEDEFS
#   LINUX_VERSION_CODE, CONSTANT_COMPARISON (*_compat.h only): out-of-tree
#     modules that DKMS builds for several kernels must test the version
#     somewhere; the compat header is that one place, and
#     "LINUX_VERSION_CODE >= KERNEL_VERSION(...)" is the kernel's own idiom.
COMPAT_IGNORES=ENOSYS,LINUX_VERSION_CODE,CONSTANT_COMPARISON

shopt -s nullglob
if [ "$#" -gt 0 ]; then
	kernel_files=()
	uapi_files=()
	for f in "$@"; do
		case "$f" in
		include/uapi/*)	uapi_files+=("$f") ;;
		*)		kernel_files+=("$f") ;;
		esac
	done
else
	# The kernel code: the host module's glue and engine, the guest
	# driver, and the uapi headers they include (perfmon2_ioctl.h too).
	kernel_files=(kvm/*.[ch] kvm/engine/*.[ch] guest/kernel/*.[ch])
	uapi_files=(include/uapi/*.h)
fi
# Kbuild generates *.mod.c (kvm/kvm-perfmon.mod.c): not ours, not checked.
files=()
compat_files=()
for f in "${kernel_files[@]}"; do
	case "$f" in
	*.mod.c) ;;
	*_compat.h) compat_files+=("$f") ;;
	*) files+=("$f") ;;
	esac
done
kernel_files=("${files[@]}")

rc=0
n=0
run() {
	local ignores=$1
	shift
	local f files=()
	for f in "$@"; do
		[ -n "$f" ] && files+=("$f")
	done
	[ "${#files[@]}" -gt 0 ] || return 0
	n=$((n + ${#files[@]}))
	perl "$cp_pl" "${CP_FLAGS[@]}" --ignore "$ignores" "${files[@]}" \
		> "$out" 2>&1 || { rc=1; cat "$out"; }
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run "$KERNEL_IGNORES" "${kernel_files[@]}"
run "$UAPI_IGNORES" "${uapi_files[@]}"
run "$COMPAT_IGNORES" "${compat_files[@]}"

if [ "$rc" -ne 0 ]; then
	echo "checkpatch: FAILED (see above); $n files checked"
else
	echo "checkpatch: $n files clean ($(basename "$(dirname "$(dirname "$cp_pl")")"))"
fi
exit "$rc"
