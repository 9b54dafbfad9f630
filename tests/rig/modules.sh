#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's module for a level of the rig, built for the kernel that
# level boots (scripts/kver.sh):
#
#   tests/rig/modules.sh host    kvm-perfmon.ko for L1's kernel
#   tests/rig/modules.sh guest   perfmon2.ko for L2's kernel
#
# Prints the module's path last. For the machine's kernel it is the
# tree's own build (kvm/, guest/kernel/); for RIG_L1_KERNEL's or
# RIG_L2_KERNEL's suite, the kernels stage's build of that cell in the
# suite's chroot (tests/kernels/run.sh --module, in build/kernels/);
# for RIG_L1_KERNEL=debug, a build of the module's DKMS tree in
# build/kernels/debug-host/ with this machine's gcc against the debug
# kernel's own tree (tests/rig/debug-kernel.sh), warnings fatal as in
# the kernels stage (the debug kernel is L1's: RIG_L2_KERNEL=debug has
# no module). Either copied to build/kernels/modules/SUM/ so that no
# other stage's build of the cell changes it under its user.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

die() {
	echo "modules.sh: $*" >&2
	exit 2
}

case "${1:-}" in
host)
	suite=${RIG_L1_KERNEL:-}
	tree=kvm
	ko=kvm-perfmon.ko
	;;
guest)
	suite=${RIG_L2_KERNEL:-}
	tree=guest/kernel
	ko=perfmon2.ko
	;;
*) die "usage: modules.sh host|guest" ;;
esac

if [ -z "$suite" ]; then
	make -s -C "$top/$tree" >&2
	echo "$top/$tree/$ko"
	exit 0
fi
build=${KERNELS_BUILD:-$top/build/kernels}
if [ "$suite" = debug ]; then
	[ "$1" = host ] || die "RIG_L2_KERNEL=debug: the debug kernel is L1's only"
	kdir=$("$top/scripts/kver.sh" boot-root)/build
	mkdir -p "$build"
	exec {cell_lock}>"$build/$suite-$1.lock"
	flock "$cell_lock"
	"$top/scripts/dkms-tree.sh" "$build/$suite-$1" >/dev/null
	# clean as the kernels stage's cells (tests/kernels/clean-build.sh);
	# none of the calling make's variables (MAKEFLAGS: tests/host's O=
	# would be Kbuild's output directory)
	# shellcheck source=tests/kernels/clean-build.sh
	. "$top/tests/kernels/clean-build.sh"
	if ! MAKEFLAGS='' make -C "$build/$suite-$1/$tree" KDIR="$kdir" \
		KCFLAGS="$CLEAN_KCFLAGS" >"$build/$suite-$1.log" 2>&1 ||
		grep -qE "$CLEAN_WARN_RE" "$build/$suite-$1.log"; then
		cat "$build/$suite-$1.log" >&2
		die "$ko does not build cleanly for the debug kernel (log: $build/$suite-$1.log)"
	fi
else
	KERNELS_BUILD=$build "$top/tests/kernels/run.sh" --module "$1" "$suite" >&2 ||
		die "$ko does not build for $suite's kernel (log: $build/$suite-$1.log)"
	# the cell's tree is made anew by every stage that builds it: the
	# caller gets a copy of its own, named by content, taken under the
	# cell's lock (tests/kernels/run.sh)
	exec {cell_lock}>"$build/$suite-$1.lock"
	flock "$cell_lock"
fi
[ -f "$build/$suite-$1/$tree/$ko" ] || die "no $build/$suite-$1/$tree/$ko"
sum=$(sha256sum "$build/$suite-$1/$tree/$ko" | cut -c1-16)
kept=$build/modules/$sum
if [ ! -f "$kept/$ko" ]; then
	mkdir -p "$kept.$$"
	cp "$build/$suite-$1/$tree/$ko" "$kept.$$/"
	mv -T "$kept.$$" "$kept" 2>/dev/null || rm -rf "$kept.$$"
fi
exec {cell_lock}>&-
echo "$kept/$ko"
