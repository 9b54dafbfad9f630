#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install every Debian (bookworm) package the project needs, idempotently.
# `make deps` runs this; on a machine without make, run it directly.
#
# Packages already installed are not touched and apt is not even asked;
# `apt-get update` runs only when something must be installed. Needs root
# (or sudo) only in that case. Extra package names may be given as arguments.
set -euo pipefail

# The one list. Why each group is here:
PKGS=(
	# C toolchain: gcc, make, libc6-dev (its linux-libc-dev gives
	# <linux/types.h> to the engine built as userspace C)
	build-essential
	# unit tests
	libcmocka-dev
	# fuzzing: clang and compiler-rt, which holds the libFuzzer, ASan and
	# UBSan runtimes (libclang_rt.fuzzer-x86_64.a is in libclang-rt-14-dev;
	# no separate libfuzzer package is needed)
	clang-14 libclang-rt-14-dev
	# kernel module: Debian's kernel headers (the machine's running kernel
	# may have none; the meta-package follows Debian's current kernel) and
	# the tools Kbuild may call
	linux-headers-amd64 kmod bc flex bison libelf-dev
	# 32-bit guest test programs (guest/tests' t_m32_*, the driver's
	# compat ioctls): gcc -m32 and i386 libc's static libraries
	gcc-multilib
	# pfmon's event tables: libpfm4 names and encodes every event of the
	# guest's CPU model (pfmon links Debian's shared libpfm.so.4)
	libpfm4-dev
	# pfmon's symbols: elfutils' libdwfl resolves sample IPs in the
	# command, its shared libraries and the vDSO (libdw.so.1, libelf.so.1;
	# the rig's initramfs carries them, as every ldd library of a payload)
	libdw-dev
	# pfmon's C++ and Rust names: libiberty's cplus_demangle, as binutils
	# and perf demangle them (libiberty.a is linked in)
	libiberty-dev
	# tests/run/check_pfmon.py parses pfmon's CSV and JSON with python3's
	# own csv and json modules
	python3
	# checkpatch: bookworm has no checkpatch package; the kernel source
	# tarball in linux-source carries scripts/checkpatch.pl (perl)
	linux-source xz-utils perl
	# host-tools: JSON output (json-c), kvm-perfmon-stat's table
	# (util-linux's libsmartcols) and the exporter's HTTP server
	# (libmicrohttpd, its TLS through GnuTLS), its web config's YAML
	# (libyaml), bcrypt for its basic authentication (libxcrypt's
	# crypt_r) and its gzip'ed scrapes (zlib); prometheus (promtool and
	# a server) checks and scrapes the
	# exporter in its tests; systemd-analyze verifies the exporter's unit;
	# curl for the tests' HTTP requests, openssl for their certificates,
	# util-linux's setpriv runs the tools as another uid in the rig and
	# its unshare gives the exporter's end-to-end test a network of its own
	libjson-c-dev libsmartcols-dev libmicrohttpd-dev libyaml-dev
	libcrypt-dev zlib1g-dev prometheus
	systemd curl openssl util-linux iproute2
	# tests/libvirt/config-test.sh: augtool runs kvm-perfmon-libvirt-config's
	# qemu.conf edits through libvirt's own Augeas lens (taken from
	# Debian's libvirt .debs by the test, cached; libvirt is not installed)
	augeas-tools
	# the installed programs' man pages: cli/check-man.sh reads each with
	# groff -man -ww (no warning allowed) as man(1) would show it
	groff-base
	# make run's flame graph: FlameGraph's flamegraph.pl, which bookworm
	# ships only inside plprofiler; tests/run/speedscope.sh loads pfmon's
	# perf-script text into speedscope (npm) in a headless chromium
	plprofiler chromium
)
set -- "${PKGS[@]}" "$@"

missing=()
for p in "$@"; do
	# dpkg-query prints "install ok installed" only for fully installed
	# (configured) packages; "unpacked" or "half-configured" is missing.
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "deps: all $# packages installed"
	exit 0
fi

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null ||
		{ echo "deps: must run as root to install: ${missing[*]}" >&2; exit 1; }
	SUDO=sudo
fi

echo "deps: installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Wait for a dpkg lock held by another apt run (e.g. another engineer's or
# tests/rig/deps.sh) instead of failing at once.
APT_OPTS=(-q -o DPkg::Lock::Timeout=900)
$SUDO apt-get "${APT_OPTS[@]}" update
# --no-install-recommends: linux-source alone would recommend a whole kernel
# build environment; everything we need is named in DEPS_PKGS.
$SUDO apt-get "${APT_OPTS[@]}" install -y --no-install-recommends "${missing[@]}" \
	</dev/null

for p in "${missing[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] ||
		{ echo "deps: $p is not installed after apt-get ($st)" >&2; exit 1; }
done
echo "deps: done"
