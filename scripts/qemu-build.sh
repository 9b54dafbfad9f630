#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the patched QEMU (x86_64-softmmu only, Debian's feature set: see
# qemu-deb/debian/configure-options) that provides -device pv-perfmon:
# Debian trixie's QEMU 10.0 source package (Debian's patches applied) + the
# series in qemu-patches/ + the project's uapi headers, built on this host
# against its own libraries (on bookworm, as bookworm-backports builds the
# same source). This is the rig's build, a binary in a cache; the Debian
# package of the same emulator, qemu-system-x86-pvperfmon, is the source
# package qemu-pvperfmon (qemu-deb/, `make qemu-deb`).
#
#   scripts/qemu-build.sh               build if needed; progress, then the
#                                       path of qemu-system-x86_64 on the
#                                       last line
#   scripts/qemu-build.sh --print-path  the same, but stdout is only the path
#                                       (progress goes to stderr)
#
# Everything lives in ${XDG_CACHE_HOME:-~/.cache}/kvm-perfmon/qemu/, outside
# the repository (scripts/qemu-source.sh: the private apt indexes, the
# source package by the .dsc's SHA256, meson for configure), and:
#   build-KEY/src/       the unpacked, patched tree; its build/ directory
#                        holds qemu-system-x86_64 and build.log the output
#   build-KEY/done       written last: the build is complete
# KEY hashes what the binary is made of: the .dsc trixie's index names
# (name and SHA256), the patches qemu-patches/series names,
# include/uapi/{perfmon2,pv_perfmon,kvm_perfmon}.h, the configure line, the
# meson used and this script. An unchanged KEY with a done build is a no-op
# that asks apt nothing but the private index (read again once a day);
# anything else builds from scratch (20 to 30 minutes on 2 cores), under a
# lock, so two runs never build at once. The three newest builds are kept.
#
# The build dependencies are installed when missing (needs root or sudo);
# the machine's apt sources are not changed.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PATCHES=$TOP/qemu-patches
UAPI=(perfmon2.h pv_perfmon.h kvm_perfmon.h)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/kvm-perfmon/qemu
KEEP_BUILDS=3

# configure's options: qemu-deb/debian/configure-options, which the
# qemu-pvperfmon package's debian/rules reads too (Debian's feature set,
# x86_64-softmmu only, and why each of Debian's options left out is,
# configure-options-omitted); one option per line, '#' comments
opts_of() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$TOP/qemu-deb/debian/$1"
}
mapfile -t CONFIGURE < <(opts_of configure-options)
mapfile -t OMITTED < <(opts_of configure-options-omitted)
[ "${#CONFIGURE[@]}" -gt 0 ] || {
	echo "qemu-build: qemu-deb/debian/configure-options names no option" >&2
	exit 1
}

# The build tools (dpkg-dev for dpkg-source, xz-utils for the tarballs,
# python3-venv for configure's venv; meson comes from qemu-source.sh),
# then the libraries of each option above, as debian/control names them
# (gnutls-dev is libgnutls28-dev; libjack-jackd2-dev, not JACK 1, which
# would replace a host's jackd2 runtime).
BUILD_DEPS=(ninja-build pkg-config python3 python3-venv gcc make dpkg-dev
	xz-utils flex bison libglib2.0-dev libpixman-1-dev zlib1g-dev uuid-dev
	libcapstone-dev libaio-dev libpulse-dev libpipewire-0.3-dev
	libasound2-dev
	libjack-jackd2-dev libbpf-dev libbrlapi-dev libcap-ng-dev
	libcurl4-gnutls-dev libfdt-dev libfuse3-dev libgnutls28-dev
	libiscsi-dev libncurses-dev libvirglrenderer-dev libva-dev
	libepoxy-dev libdrm-dev libgbm-dev libnfs-dev libcacard-dev
	libsasl2-dev libslirp-dev libspice-server-dev librdmacm-dev
	libibverbs-dev libibumad-dev liburing-dev libusb-1.0-0-dev
	libusbredirparser-dev libssh-dev libzstd-dev libvdeplug-dev
	nettle-dev libudev-dev libjpeg-dev libpng-dev libpmem-dev
	libseccomp-dev libnuma-dev)

print_path=
case "${1:-}" in
--print-path) print_path=1 ;;
"") ;;
*)
	echo "usage: scripts/qemu-build.sh [--print-path]" >&2
	exit 2
	;;
esac

# progress: stdout normally, stderr with --print-path
if [ -n "$print_path" ]; then
	exec 3>&2
else
	exec 3>&1
fi
say() { echo "qemu-build: $*" >&3; }
die() {
	echo "qemu-build: $*" >&2
	exit 1
}

SUDO=
need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || die "must run as root to $1"
		SUDO=sudo
	fi
}

APT_OPTS=(-q -o DPkg::Lock::Timeout=900)

# shellcheck source=scripts/qemu-source.sh
. "$TOP/scripts/qemu-source.sh"

install_deps() {
	local p st missing=()
	for p in "${BUILD_DEPS[@]}"; do
		st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[ "$st" = "install ok installed" ] || missing+=("$p")
	done
	[ "${#missing[@]}" -eq 0 ] && return 0
	need_root "install ${missing[*]}"
	say "installing ${missing[*]}"
	t0=$(now)
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${APT_OPTS[@]}" install -y \
		--no-install-recommends "${missing[@]}" >&3
	say "build dependencies installed in $(($(now) - t0)) s"
}

# The series, in order: one file name per line, '#' comments.
series() {
	[ -f "$PATCHES/series" ] || die "$PATCHES/series is missing"
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$PATCHES/series"
}

build_key() {
	local dsc=$1 python=$2 p h
	{
		echo "dsc $dsc"
		echo "python $python"
		# what is applied, in order: not qemu-patches/README, whose
		# text builds nothing
		while read -r p; do
			echo "patch $p $(sha256sum <"$PATCHES/$p" | cut -d' ' -f1)"
		done < <(series)
		for h in "${UAPI[@]}"; do
			echo "uapi $h $(sha256sum <"$TOP/include/uapi/$h" | cut -d' ' -f1)"
		done
		echo "configure ${CONFIGURE[*]}"
		echo "script $(sha256sum <"${BASH_SOURCE[0]}" | cut -d' ' -f1)"
	} | sha256sum | cut -c1-16
}

now() { date +%s; }

# --- main -------------------------------------------------------------------

for h in "${UAPI[@]}"; do
	[ -f "$TOP/include/uapi/$h" ] || die "include/uapi/$h is missing"
done
series >/dev/null
while read -r p; do
	[ -f "$PATCHES/$p" ] || die "qemu-patches/series names $p, which is missing"
done < <(series)

QEMU_CACHE=$CACHE
mkdir -p "$CACHE"
# one run at a time: also for the private apt indexes and meson's unpacking
exec 9>"$CACHE/lock"
if ! flock -n 9; then
	say "another qemu-build.sh holds $CACHE/lock; waiting"
	flock 9
fi
read -r dsc_name dsc_sum < <(qemu_src_dsc)
if [ -z "${dsc_name:-}" ] || [ -z "${dsc_sum:-}" ]; then
	die "no qemu source package in $QEMU_SUITE's index"
fi
version=${dsc_name#qemu_}
version=${version%.dsc}
python=$(qemu_python)
key=$(build_key "$dsc_name $dsc_sum" "$python")
bdir=$CACHE/build-$key
qemu=$bdir/src/build/qemu-system-x86_64

if [ -f "$bdir/done" ] && [ -x "$qemu" ]; then
	say "up to date: QEMU $version + $(series | wc -l) patches (key $key)"
	echo "$qemu"
	exit 0
fi

say "building QEMU $version + qemu-patches/ (key $key) in $bdir"
install_deps

# 1. the source package, fetched once (by the .dsc's SHA256)
t0=$(now)
dsc=$(qemu_src_fetch "$dsc_name" "$dsc_sum")

# 2. unpack (Debian's patches applied), the series, the headers
rm -rf "$bdir"
mkdir -p "$bdir"
qemu_src_unpack "$dsc" "$bdir/src"
cd "$bdir/src"
while read -r p; do
	say "applying $p"
	patch -p1 --batch --forward --no-backup-if-mismatch -s <"$PATCHES/$p" ||
		die "$p does not apply to QEMU $version"
done < <(series)
mkdir -p include/standard-headers/kvm-perfmon
for h in "${UAPI[@]}"; do
	cp "$TOP/include/uapi/$h" include/standard-headers/kvm-perfmon/
done

# 3. configure and build; first, where Debian's option list (debian/control
# as debian/rules reads it) has moved away from configure-options
if [ -f debian/extract-config-opts ]; then
	sh debian/extract-config-opts linux-amd64 debian/control | tr ' ' '\n' |
		while read -r o; do
			case " ${CONFIGURE[*]} ${OMITTED[*]} " in
			*" $o "*) ;;
			*) say "note: Debian's build also passes $o (not here)" ;;
			esac
		done
fi
say "configure ${CONFIGURE[*]}"
mkdir -p build
cd build
../configure --python="$python" "${CONFIGURE[@]}" \
	--with-pkgversion="Debian $version, kvm-perfmon" >"$bdir/build.log" 2>&1 || {
	tail -n 30 "$bdir/build.log" >&2
	die "configure failed, see $bdir/build.log"
}
say "nice -n 10 ninja -j2 qemu-system-x86_64 (log: $bdir/build.log)"
nice -n 10 ninja -j2 qemu-system-x86_64 >>"$bdir/build.log" 2>&1 || {
	grep -E -A5 'error:|FAILED:' "$bdir/build.log" | head -n 40 >&2
	die "build failed, see $bdir/build.log"
}
"$qemu" -device help | grep -q '"pv-perfmon"' ||
	die "$qemu has no pv-perfmon device"
touch "$bdir/done"
say "built in $(($(now) - t0)) s"

# keep the newest builds only (names are build-HEX)
# shellcheck disable=SC2012
ls -1dt "$CACHE"/build-* 2>/dev/null | tail -n +$((KEEP_BUILDS + 1)) |
	while read -r old; do
		say "removing old build $old"
		rm -rf "$old"
	done

echo "$qemu"
