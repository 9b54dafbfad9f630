#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the patched QEMU (x86_64-softmmu only, Debian's feature set: see
# DEBIAN_OPTS) that provides -device pv-perfmon:
# Debian bookworm's QEMU 7.2 source (`apt-get source qemu`, Debian's patches
# applied) + the series in qemu-patches/ + the project's uapi headers.
#
#   scripts/qemu-build.sh               build if needed; progress, then the
#                                       path of qemu-system-x86_64 on the
#                                       last line
#   scripts/qemu-build.sh --print-path  the same, but stdout is only the path
#                                       (progress goes to stderr)
#
# Everything lives in ${XDG_CACHE_HOME:-~/.cache}/kvm-perfmon/qemu/, outside
# the repository:
#   dl/VERSION/          the source package (.dsc and tarballs) as fetched
#   build-KEY/src/       the unpacked, patched tree; its build/ directory
#                        holds qemu-system-x86_64 and build.log the output
#   build-KEY/done       written last: the build is complete
# KEY hashes what the binary is made of: the .dsc apt would fetch (name and
# SHA256), qemu-patches/*, include/uapi/{perfmon2,pv_perfmon,kvm_perfmon}.h
# and the configure line (and this script). An unchanged KEY with a done build
# is a no-op that asks apt nothing but the local index; anything else
# builds from scratch (about 20 minutes on 2 cores), under a lock, so two
# runs never build at once. The three newest builds are kept.
#
# Setup done on the way, each only when missing (needs root or sudo):
# a deb-src line for bookworm main (/etc/apt/sources.list.d/
# kvm-perfmon-src.list, unless /etc/apt/sources.list* already has one),
# `apt-get update` after adding it, and the build dependencies.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PATCHES=$TOP/qemu-patches
UAPI=(perfmon2.h pv_perfmon.h kvm_perfmon.h)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/kvm-perfmon/qemu
SRC_LIST=/etc/apt/sources.list.d/kvm-perfmon-src.list
KEEP_BUILDS=3

# The x86_64 system emulator with Debian's own feature set, so that libvirt
# sees the same domain capabilities as with Debian's qemu-system-x86: the
# options are those debian/rules passes for its system build, i.e. the
# "# --enable-..." comments of debian/control that debian/extract-config-opts
# picks for linux-amd64, plus the auto features Debian gets from its
# build dependencies on amd64 (seccomp, NUMA). Differences, on purpose:
#   - x86_64-softmmu only; no docs (sphinx); no GTK/VTE/SDL front-ends
#     (Debian ships them as modules in qemu-system-gui; a libvirt host
#     uses VNC, SPICE or egl-headless); audio without SDL
#   - no --enable-modules: everything is built in, so this binary never
#     loads Debian's modules (which are stamped for Debian's own build)
#   - no rbd/glusterfs (qemu-block-extra's heavy block drivers) and no Xen
# Firmware, keymaps and ROMs come from Debian's packages at run time
# (--firmwarepath as Debian's; qemu-system-data, seabios, ipxe-qemu).
# The build prints where Debian's current list differs from this one.
# shellcheck disable=SC2054 # the commas are one option's value
DEBIAN_OPTS=(--enable-capstone --enable-linux-aio
	--audio-drv-list=pa,alsa,jack,oss --enable-attr --enable-bpf
	--enable-brlapi --enable-virtfs --enable-cap-ng --enable-curl
	--enable-fdt=system --enable-fuse --enable-gnutls --enable-libiscsi
	--enable-curses --enable-virglrenderer --enable-opengl --enable-libnfs
	--enable-smartcard --enable-vnc-sasl --enable-slirp --enable-spice
	--enable-rdma --enable-linux-io-uring --enable-libusb --enable-usb-redir
	--enable-libssh --enable-zstd --enable-vde --enable-nettle
	--enable-libudev --enable-vnc --enable-vnc-jpeg --enable-png
	--enable-libpmem --enable-kvm --enable-vhost-net --enable-seccomp
	--enable-numa)
# Debian's options that are left out on purpose (see above)
# shellcheck disable=SC2054
DEBIAN_OPTS_OMITTED=(--enable-docs --enable-gtk --enable-vte --enable-sdl
	--audio-drv-list=pa,alsa,jack,oss,sdl)

CONFIGURE=(--target-list=x86_64-softmmu --disable-user --disable-linux-user
	--disable-xen --disable-docs --disable-install-blobs --enable-tcg
	--prefix=/usr --sysconfdir=/etc --localstatedir=/var
	--libexecdir=/usr/lib/qemu
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
	--with-git-submodules=ignore "${DEBIAN_OPTS[@]}")

# The build tools (dpkg-dev for dpkg-source, xz-utils for the tarballs),
# then the libraries of each option above, as debian/control names them
# (gnutls-dev is libgnutls28-dev; libjack-jackd2-dev, not JACK 1, which
# would replace a host's jackd2 runtime).
BUILD_DEPS=(ninja-build meson pkg-config python3 gcc make dpkg-dev xz-utils
	flex bison libglib2.0-dev libpixman-1-dev zlib1g-dev uuid-dev
	libcapstone-dev libaio-dev libpulse-dev libasound2-dev
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

# --- deb-src for bookworm main --------------------------------------------

# Is there an enabled deb-src entry for bookworm with component main, in the
# one-line format (*.list) or deb822 (*.sources)?
have_deb_src() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		grep -Eq '^[[:space:]]*deb-src[[:space:]]+(\[[^]]*\][[:space:]]+)?[^[:space:]]+[[:space:]]+bookworm[[:space:]]+([^#]*[[:space:]])?main([[:space:]]|$)' "$f" &&
			return 0
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk '
			function flush() {
				if (types ~ /(^| )deb-src( |$)/ && suites ~ /(^| )bookworm( |$)/ &&
				    comps ~ /(^| )main( |$)/ && enabled != "no")
					found = 1
				types = suites = comps = enabled = ""
			}
			/^[[:space:]]*$/ { flush(); next }
			/^#/ { next }
			{
				key = tolower($1); $1 = ""; val = " " $0 " "
				gsub(/[[:space:]]+/, " ", val)
				if (key == "types:") types = val
				else if (key == "suites:") suites = val
				else if (key == "components:") comps = val
				else if (key == "enabled:") enabled = tolower($2)
			}
			END { flush(); exit !found }
		' "$f" && return 0
	done
	return 1
}

# The Signed-By of the deb822 stanza that already names deb.debian.org/debian
# bookworm: apt refuses a second entry for the same source with another
# Signed-By ("Conflicting values set for option Signed-By").
debian_signed_by() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk '
			function flush() {
				if (uris ~ /deb\.debian\.org\/debian\/? / && suites ~ /(^| )bookworm( |$)/ && sb != "")
					{ print sb; exit }
				uris = suites = sb = ""
			}
			/^[[:space:]]*$/ { flush(); next }
			/^#/ { next }
			{
				key = tolower($1)
				if (key == "uris:") { $1 = ""; uris = $0 " " }
				else if (key == "suites:") { $1 = ""; suites = $0 " " }
				else if (key == "signed-by:") sb = $2
			}
			END { flush() }
		' "$f"
	done | head -n1
}

ensure_deb_src() {
	local sb candidates=() c
	have_deb_src && return 0
	need_root "add $SRC_LIST"
	sb=$(debian_signed_by)
	# the matching Signed-By first; without one, no option at all
	[ -n "$sb" ] && [ "${sb#/}" != "$sb" ] && candidates+=("[signed-by=$sb] ")
	candidates+=("")
	for c in "${candidates[@]}"; do
		echo "deb-src ${c}http://deb.debian.org/debian bookworm main" |
			$SUDO tee "$SRC_LIST" >/dev/null
		if apt-cache policy >/dev/null 2>&1; then
			say "added $SRC_LIST: $(cat "$SRC_LIST")"
			$SUDO apt-get "${APT_OPTS[@]}" update >&3
			return 0
		fi
	done
	$SUDO rm -f "$SRC_LIST"
	die "apt rejects every deb-src line tried for bookworm main; add one by hand"
}

# The .dsc `apt-get source qemu` would fetch: "NAME SHA256:..." (from the
# local index; `apt-get update` once if the index has no qemu source).
dsc_line() {
	local out
	if ! out=$(apt-get -qq source --print-uris qemu 2>/dev/null) ||
		! grep -q '\.dsc' <<<"$out"; then
		need_root "run apt-get update"
		$SUDO apt-get "${APT_OPTS[@]}" update >&3
		out=$(apt-get -qq source --print-uris qemu) ||
			die "apt-get source --print-uris qemu failed"
	fi
	awk '$2 ~ /\.dsc$/ { print $2, $4; exit }' <<<"$out"
}

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
	local dsc=$1 p h
	{
		echo "dsc $dsc"
		for p in "$PATCHES"/*; do
			[ -f "$p" ] || continue
			echo "patch $(basename "$p") $(sha256sum <"$p" | cut -d' ' -f1)"
		done
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

ensure_deb_src
dsc=$(dsc_line)
read -r dsc_name dsc_sum <<<"$dsc"
if [ -z "${dsc_name:-}" ] || [ -z "${dsc_sum:-}" ]; then
	die "no qemu source package in the apt index"
fi
version=${dsc_name#qemu_}
version=${version%.dsc}
key=$(build_key "$dsc_name $dsc_sum")
bdir=$CACHE/build-$key
qemu=$bdir/src/build/qemu-system-x86_64

mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
if ! flock -n 9; then
	say "another qemu-build.sh holds $CACHE/lock; waiting"
	flock 9
fi

if [ -f "$bdir/done" ] && [ -x "$qemu" ]; then
	say "up to date: QEMU $version + $(series | wc -l) patches (key $key)"
	echo "$qemu"
	exit 0
fi

say "building QEMU $version + qemu-patches/ (key $key) in $bdir"
install_deps

# 1. the source package, fetched once per version
dl=$CACHE/dl/$version
if [ ! -f "$dl/$dsc_name" ] || [ ! -f "$dl/fetched" ]; then
	t0=$(now)
	rm -rf "$dl"
	mkdir -p "$dl"
	say "fetching the qemu $version source package"
	(cd "$dl" && apt-get -q -o APT::Sandbox::User=root source --download-only \
		qemu >&3) ||
		die "apt-get source qemu failed (index out of date? run apt-get update)"
	if ! [ -f "$dl/$dsc_name" ] ||
		[ "$(sha256sum <"$dl/$dsc_name" | cut -d' ' -f1)" != "${dsc_sum#SHA256:}" ]; then
		die "$dl/$dsc_name is missing or does not match the index"
	fi
	touch "$dl/fetched"
	say "fetched in $(($(now) - t0)) s"
fi

# 2. unpack (Debian's patches applied), the series, the headers
t0=$(now)
rm -rf "$bdir"
mkdir -p "$bdir"
dpkg-source -q -x "$dl/$dsc_name" "$bdir/src" >"$bdir/unpack.log" 2>&1 ||
	die "dpkg-source -x failed, see $bdir/unpack.log"
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

# The dfsg tarball has no edk2 firmware, which pc-bios/meson.build unpacks
# when bzip2 is installed. Debian's own skip-meson-pc-bios.diff drops the
# pc-bios subdirectory; should a tree still build it, do the same (the rig
# passes -L with the firmware it needs).
if grep -q "^subdir('pc-bios')" meson.build &&
	! [ -f pc-bios/edk2-x86_64-code.fd.bz2 ]; then
	say "pc-bios/ lacks the edk2 blobs: not building pc-bios/"
	sed -i "s|^subdir('pc-bios')|#subdir('pc-bios')|" meson.build
fi

# 3. configure and build; first, where Debian's option list (debian/control
# as debian/rules reads it) has moved away from DEBIAN_OPTS
if [ -f debian/extract-config-opts ]; then
	sh debian/extract-config-opts linux-amd64 debian/control | tr ' ' '\n' |
		while read -r o; do
			case " ${DEBIAN_OPTS[*]} ${DEBIAN_OPTS_OMITTED[*]} --enable-fdt " in
			*" $o "*) ;;
			*) say "note: Debian's build also passes $o (not here)" ;;
			esac
		done
fi
say "configure ${CONFIGURE[*]}"
mkdir -p build
cd build
../configure "${CONFIGURE[@]}" \
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
