#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Find the kernel build tree that kvm-perfmon.ko is built against.
#
# The running kernel of our machines is not a Debian kernel and has no headers,
# so `uname -r` is useless here: we take the newest Debian headers that are
# installed (package linux-headers-amd64, which `make deps` installs).
# Never hard-code a version: the meta-package moves with every Debian update.
#
#   scripts/kver.sh          print the kernel release, e.g. 6.1.0-56-amd64
#   scripts/kver.sh --kdir   print the build directory, e.g. /lib/modules/<v>/build
#
# KDIR=<dir> in the environment overrides the search.
set -eu

# release of a build tree (Debian's include/config/kernel.release holds the
# upstream version, 6.1.x; the module's vermagic uses UTS_RELEASE)
release() {
	sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$1/include/generated/utsrelease.h" 2>/dev/null
}

kdir=${KDIR:-}
if [ -z "$kdir" ]; then
	# Candidates: /lib/modules/*/build (the symlinks the headers packages
	# ship) first, then /usr/src/linux-headers-*-amd64 (the trees). A
	# usable tree has a Makefile and a release. Newest release wins.
	best=""
	bestrel=""
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
	kdir=$best
fi

if [ -z "$kdir" ] || [ -z "$(release "$kdir")" ]; then
	echo "kver.sh: no kernel build tree found (looked in /lib/modules/*/build" \
		"and /usr/src/linux-headers-*-amd64); run 'make deps'" >&2
	exit 1
fi

case "${1:-}" in
--kdir)	echo "$kdir" ;;
"")	release "$kdir" ;;
*)	echo "usage: $0 [--kdir]" >&2; exit 2 ;;
esac
