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

QEMU_SUITE=trixie
# the upstream release the series is for
QEMU_UPSTREAM=10.0
# a suite index older than this is read again (a stable update of qemu)
QEMU_INDEX_MAX_AGE=$((24 * 3600))

# apt options that read SUITE's index from $QEMU_CACHE/apt/SUITE only
qemu_apt_opts() {
	local d=$QEMU_CACHE/apt/$1
	echo "-q -o Dir::Etc::sourcelist=$d/sources.list" \
		"-o Dir::Etc::sourceparts=/dev/null -o Dir::State::Lists=$d/lists" \
		"-o Dir::Cache=$d/cache -o APT::Sandbox::User=root"
}

# qemu_apt SUITE LINE ARGS...: apt-get on SUITE's private index (LINE is
# its sources.list line), reading the index again when it is missing or
# older than a day; an index that cannot be refreshed is used as it is
qemu_apt() {
	local suite=$1 line=$2 d opts stamp
	shift 2
	d=$QEMU_CACHE/apt/$suite
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	echo "$line" >"$d/sources.list"
	read -ra opts <<<"$(qemu_apt_opts "$suite")"
	stamp=$d/lists/updated
	if ! [ -f "$stamp" ] ||
		[ $(($(date +%s) - $(stat -c %Y "$stamp"))) -gt $QEMU_INDEX_MAX_AGE ]; then
		say "reading $suite's index ($line)"
		if apt-get "${opts[@]}" update >&2; then
			touch "$stamp"
		elif ! [ -f "$stamp" ]; then
			die "cannot read $suite's index"
		else
			say "note: $suite's index could not be refreshed; using the old one"
		fi
	fi
	apt-get "${opts[@]}" "$@"
}

qemu_src_apt() {
	qemu_apt "$QEMU_SUITE-src" \
		"deb-src http://deb.debian.org/debian $QEMU_SUITE main" "$@"
}

# "NAME SHA256" of the qemu .dsc in trixie's index
qemu_src_dsc() {
	local out
	out=$(qemu_src_apt -qq source --print-uris qemu) ||
		die "apt-get source --print-uris qemu ($QEMU_SUITE) failed"
	awk '$2 ~ /\.dsc$/ { sub(/^SHA256:/, "", $4); print $2, $4; exit }' <<<"$out"
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
	if ! [ -f "$dl/fetched" ]; then
		rm -rf "$dl"
		mkdir -p "$dl"
		say "fetching the qemu $version source package ($QEMU_SUITE)"
		(cd "$dl" && qemu_src_apt source --download-only qemu >&2) ||
			die "apt-get source qemu ($QEMU_SUITE) failed"
		[ "$(sha256sum <"$dl/$name" | cut -d' ' -f1)" = "$sum" ] ||
			die "$dl/$name does not match $QEMU_SUITE's index"
		touch "$dl/fetched"
	fi
	echo "$dl/$name"
}

# qemu_src_unpack DSC DIR: Debian's tree, its patches applied
qemu_src_unpack() {
	rm -rf "$2"
	mkdir -p "$(dirname "$2")"
	dpkg-source -q -x "$1" "$2" >"$2.unpack.log" 2>&1 ||
		die "dpkg-source -x failed, see $2.unpack.log"
	rm -f "$2.unpack.log"
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
