# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Debian trixie's QEMU 10.0 source package, which qemu-patches/ applies to,
# and the tools to unpack and configure it on this host: sourced by
# scripts/qemu-deb-source.sh and scripts/qemu-series.sh.
#
# The machine's own apt configuration is never touched: trixie's source
# index (and bookworm-backports' binary index, for meson) are read with a
# private configuration under $QEMU_CACHE/apt/SUITE/ (sources.list, lists,
# cache). Downloads are kept under $QEMU_CACHE by content:
#   dl/SHA256/        the source package (.dsc and tarballs); SHA256 is
#                     the .dsc's, as trixie's index gives it
#   meson-SHA256/     bookworm-backports' meson .deb unpacked, and a Python
#                     venv that sees it (SHA256: the .deb's)
#
# The caller defines say() and die() and sets QEMU_CACHE.

# kvm-perfmon's files that QEMU's tree gets a copy of, "SOURCE DEST" (a
# path here, a path there): the ABI headers the series includes, and the
# eventmap and filter files' parser, which kvm-perfmon-stat shares
# shellcheck disable=SC2034  # the sourcing scripts' list
QEMU_SHARED=(
	"include/uapi/perfmon2.h include/standard-headers/kvm-perfmon/perfmon2.h"
	"include/uapi/pv_perfmon.h include/standard-headers/kvm-perfmon/pv_perfmon.h"
	"include/uapi/kvm_perfmon.h include/standard-headers/kvm-perfmon/kvm_perfmon.h"
	"lib/event_files.h hw/misc/event_files.h"
	"lib/event_files.c hw/misc/event_files.c"
)

QEMU_SUITE=trixie
# the upstream release the series is for
QEMU_UPSTREAM=10.0
# shellcheck source=scripts/deb-apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/deb-apt.sh"

# qemu_apt SUITE LINE ARGS...: apt-get on SUITE's private index
qemu_apt() {
	deb_apt "$QEMU_CACHE/apt/$1" "${@:2}"
}

QEMU_SRC_LINE="deb-src http://deb.debian.org/debian $QEMU_SUITE main"

# "NAME SHA256" of the qemu .dsc in trixie's index
qemu_src_dsc() {
	deb_src_dsc "$QEMU_CACHE/apt/$QEMU_SUITE-src" "$QEMU_SRC_LINE" qemu
}

# qemu_src_fetch NAME SHA256: the .dsc's path, downloaded once
qemu_src_fetch() {
	local name=$1 sum=$2 dl=$QEMU_CACHE/dl/$2 version
	version=${name#qemu_}
	version=${version%.dsc}
	case $version in
	"$QEMU_UPSTREAM".*) ;;
	*) die "$QEMU_SUITE's qemu is $version; qemu-patches/ is for $QEMU_UPSTREAM.x" ;;
	esac
	deb_src_fetch "$QEMU_CACHE/apt/$QEMU_SUITE-src" "$QEMU_SRC_LINE" qemu \
		"$name" "$sum" "$dl"
	echo "$dl/$name"
}

# QEMU 10.0's configure wants meson >= 1.5 as a Python package; Debian's
# +ds tarball drops the wheel upstream bundles. A trixie host has it;
# bookworm has 1.0, so take bookworm-backports' (as backports' own qemu
# build does) without installing it: unpack the .deb and give configure a
# venv that imports it. Prints the python for configure's --python.
qemu_python() {
	local out name sum m sp
	if /usr/bin/python3 -c '
import sys, importlib.metadata as md
v = tuple(int(x) for x in md.version("meson").split(".")[:2])
sys.exit(v < (1, 5))' 2>/dev/null; then
		echo /usr/bin/python3
		return
	fi
	out=$(qemu_apt bookworm-backports \
		"deb http://deb.debian.org/debian bookworm-backports main" \
		-qq download --print-uris meson/bookworm-backports) ||
		die "no meson in bookworm-backports' index"
	read -r name sum < <(awk '{ sub(/^SHA256:/, "", $4); print $2, $4; exit }' <<<"$out")
	m=$QEMU_CACHE/meson-$sum
	if ! [ -f "$m/done" ]; then
		say "meson for configure: $name (bookworm-backports), unpacked in $m"
		rm -rf "$m"
		mkdir -p "$m/deb"
		(cd "$m/deb" && qemu_apt bookworm-backports \
			"deb http://deb.debian.org/debian bookworm-backports main" \
			download meson/bookworm-backports >&2) ||
			die "apt-get download meson/bookworm-backports failed"
		[ "$(sha256sum <"$m/deb/$name" | cut -d' ' -f1)" = "$sum" ] ||
			die "$m/deb/$name does not match bookworm-backports' index"
		dpkg-deb -x "$m/deb/$name" "$m/root"
		/usr/bin/python3 -m venv --without-pip "$m/venv"
		sp=$(echo "$m"/venv/lib/python3*/site-packages)
		ln -s "$m"/root/usr/lib/python3/dist-packages/* "$sp/"
		"$m/venv/bin/python3" -c 'import mesonbuild' ||
			die "the venv in $m does not import meson"
		touch "$m/done"
	fi
	echo "$m/venv/bin/python3"
}
