#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Another Debian suite's QEMU as the rig's L0 (RIG_L0_QEMU): the suite's
# qemu-system-x86 as Debian builds it, with every library it needs down
# to the suite's glibc, unpacked with dpkg -x (no chroot, no maintainer
# scripts), and a wrapper that runs it with the suite's own dynamic
# loader, libraries, firmware and QEMU modules.
#
#   tests/rig/l0-qemu.sh SUITE      prints the wrapper's path last
#   RIG_L0_QEMU=$(tests/rig/l0-qemu.sh trixie) make -C tests/host check
#
# Cached by content outside the repository, in
# $XDG_CACHE_HOME/kvm-perfmon/l0-qemu/SUITE/KEY (default ~/.cache); KEY
# hashes this script and the name and version of every package, read
# from the suite's index with tests/kernels/apt.sh (the machine's
# /etc/apt is neither read nor changed). One maker at a time (a lock per
# suite); the suite's older builds are removed. Without the registry,
# the newest cached one is used, saying so.
set -euo pipefail

# shellcheck source=tests/rig/suite-cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/suite-cache.sh"
suite_cache_open l0-qemu "$@"

# The closure as apt resolves it against an empty dpkg status: every
# package from the suite, glibc included. Recommends (display, audio,
# block back ends) are left out: L0 needs none of them.
debs=
if "$apt" "$suite" update; then
	debs=$("$apt" "$suite" apt-get -qq -o Debug::NoLocking=1 install \
		--print-uris --no-install-recommends qemu-system-x86 2>/dev/null |
		awk '{ print $2 }' | sort) || debs=
fi
if [ -z "$debs" ]; then
	newest=$(suite_cache_newest version)
	echo "$newest/qemu-system-x86_64"
	exit 0
fi

key=$({
	cat "${BASH_SOURCE[0]}"
	echo "$suite"
	echo "$debs"
} | sha256sum | cut -c1-16)
out=$cache/$key
if [ -x "$out/qemu-system-x86_64" ] && [ -s "$out/version" ]; then
	echo "$out/qemu-system-x86_64"
	exit 0
fi

suite_cache_work
echo "l0-qemu.sh: fetching $suite's qemu-system-x86 and its $(echo "$debs" | wc -l) packages" >&2
mkdir "$work/debs"
# root downloads into a directory the _apt user cannot write: no sandbox
(cd "$work/debs" && "$apt" "$suite" apt-get -qq -o Debug::NoLocking=1 \
	-o APT::Sandbox::User=root -o "Dir::Cache::archives=$work/debs" \
	install --download-only --no-install-recommends qemu-system-x86 >/dev/null) ||
	die "apt-get install --download-only qemu-system-x86 failed"
for deb in "$work"/debs/*.deb; do
	dpkg -x "$deb" "$work/root"
done
root=$work/root
# merged /usr or not, wherever the suite's libc6 puts it
ldso=$(find "$root" -name 'ld-linux-x86-64.so.2' \( -type f -o -type l \) |
	sort | head -n 1)
[ -n "$ldso" ] || die "$suite: no dynamic loader in its libc6"
[ -x "$root/usr/bin/qemu-system-x86_64" ] || die "$suite: no qemu-system-x86_64"
ldso=${ldso#"$root"/}

# The wrapper names the final directory; it is written before the move,
# which is atomic: a concurrent reader sees all or nothing.
cat >"$work/qemu-system-x86_64" <<EOF
#!/bin/sh
# $suite's QEMU, run with its own libraries (tests/rig/l0-qemu.sh)
r=$out/root
QEMU_MODULE_DIR=\$r/usr/lib/x86_64-linux-gnu/qemu
export QEMU_MODULE_DIR
exec "\$r/$ldso" --library-path "\$r/usr/lib/x86_64-linux-gnu:\$r/lib/x86_64-linux-gnu" \\
	"\$r/usr/bin/qemu-system-x86_64" -L "\$r/usr/share/qemu" -L "\$r/usr/share/seabios" "\$@"
EOF
chmod +x "$work/qemu-system-x86_64"
mkdir "$work/out"
mv "$root" "$work/out/root"
mv "$work/qemu-system-x86_64" "$work/out/"
mv -T "$work/out" "$out"
ver=$("$out/qemu-system-x86_64" --version | head -n 1) || {
	rm -rf "$out"
	die "$suite's QEMU does not run here"
}
echo "$ver" >"$out/version"
suite_cache_keep "$out"
echo "l0-qemu.sh: $suite: $ver in $out" >&2
echo "$out/qemu-system-x86_64"
