#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libpfm-3.10, the real one: libpfm.so.3 and programs of its own
# examples_v2.x, built unchanged from its public source, for the guest
# test that runs perfmon2 programs bound to libpfm-3's shared library
# (guest/tests/t_libpfm3).
#
#   scripts/libpfm3.sh OUT
#
# The source: Debian's papi source package carries libpfm-3.10
# (src/libpfm-3.y, MIT licensed, pfmlib version 3.10.0) beside libpfm4;
# it is taken from bookworm's source index through a private apt
# configuration (scripts/deb-apt.sh), the .dsc checked against the index,
# the rest by dpkg-source. Nothing of it is kept in the repository.
# The library is built as its own Makefile builds it (-Wall -Werror,
# which gcc 12 passes); the examples with their warnings off: they are
# 2009 code, not ours, and the build's log stays out of make test's
# warning check (their log is $cache/KEY.log on failure).
# The examples are linked against libpfm.so.3 (their Makefile links the
# static libpfm.a), with $ORIGIN as their run path, as a distribution
# would ship them: dynamically linked programs of libpfm-3.
#
# Cached by content under ${XDG_CACHE_HOME:-~/.cache}/kvm-perfmon/libpfm3/:
# apt/ the private index, dl/SHA256/ the source package (SHA256: its
# .dsc's), KEY/ the build (KEY, 16 hex digits, hashes the .dsc's SHA256
# and this script; the newest only). OUT gets libpfm.so.3 and the
# programs. Warm: under a second after the index check; cold: the 5.6 MB
# download and about 10 s of build.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUITE=bookworm
LINE="deb-src http://deb.debian.org/debian $SUITE main"
# the examples t_libpfm3 runs (examples_v2.x's targets)
EXAMPLES=(whichpmu check_events self syst multiplex self_smpl self_smpl_multi set_notify)

# the examples' libraries (their Makefile's), and libgcc_s as a needed
# one: glibc opens it by dlopen() at pthread_exit(), which a guest's
# initramfs made from ldd's list (tests/rig/mkinitramfs.sh) would not have
LIBS="-lm -lrt -Wl,--push-state,--no-as-needed -lgcc_s -Wl,--pop-state"

say() { echo "libpfm3: $*" >&2; }
die() {
	echo "libpfm3: $*" >&2
	exit 1
}
[ $# = 1 ] || die "usage: scripts/libpfm3.sh OUT"
out=$1

# shellcheck source=scripts/deb-apt.sh
. "$TOP/scripts/deb-apt.sh"

cache=${XDG_CACHE_HOME:-${HOME:?set HOME or XDG_CACHE_HOME}/.cache}/kvm-perfmon/libpfm3
mkdir -p "$cache"
exec 8>>"$cache/.lock"
flock 8

read -r dsc_name dsc_sum < <(deb_src_dsc "$cache/apt" "$LINE" papi)
[ -n "${dsc_sum:-}" ] || die "no papi source package in $SUITE's index"
key=$({
	echo "$dsc_sum"
	sha256sum <"${BASH_SOURCE[0]}"
} | sha256sum | cut -c1-16)
build=$cache/$key

if ! [ -f "$build/built" ]; then
	dl=$cache/dl/$dsc_sum
	deb_src_fetch "$cache/apt" "$LINE" papi "$dsc_name" "$dsc_sum" "$dl"
	rm -rf "$build" "$build.log"
	deb_src_unpack "$dl/$dsc_name" "$build/papi"
	src=$build/papi/src/libpfm-3.y
	grep -q '^REVISION=10$' "$src/config.mk" ||
		die "${dsc_name%.dsc} carries no libpfm-3.10 (src/libpfm-3.y)"
	say "building libpfm-3.10 from ${dsc_name%.dsc} (key $key)"
	if ! {
		make -C "$src/lib" &&
			make -C "$src/examples_v2.x" DBG="-g -w" \
				PFMLIB="$src/lib/libpfm.so" \
				LDFLAGS="-Wl,-rpath,\\\$\$ORIGIN" LIBS="$LIBS" \
				"${EXAMPLES[@]}"
	} >"$build.log" 2>&1; then
		tail -n 20 "$build.log" >&2
		die "the build failed; its log: $build.log"
	fi
	mkdir -p "$build/out"
	cp -L "$src/lib/libpfm.so.3" "$build/out/"
	for e in "${EXAMPLES[@]}"; do
		cp "$src/examples_v2.x/$e" "$build/out/"
	done
	cp "$src/COPYRIGHT" "$build/out/"
	rm -rf "$build/papi" "$build.log"
	touch "$build/built"
	# older builds and an older papi's source are no longer needed
	find "$cache/dl" -mindepth 1 -maxdepth 1 ! -name "$dsc_sum" \
		-exec rm -rf {} +
	find "$cache" -mindepth 1 -maxdepth 1 -regextype posix-extended \
		-regex '.*/[0-9a-f]{16}' ! -name "$key" -exec rm -rf {} +
fi
rm -rf "$out"
mkdir -p "$out"
cp -a "$build/out/." "$out/"
