#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rig's debug L1 kernel (RIG_L1_KERNEL=debug, scripts/kver.sh): a
# Debian suite's kernel source as its linux-source package has it,
# Debian's patches applied, configured as x86_64_defconfig with
# debug-kernel.config on top (lockdep, KASAN and the other checkers;
# what the rig's L1 needs; the rest cut) and built with this machine's
# gcc, which then builds the modules for it too.
#
#   tests/rig/debug-kernel.sh [SUITE]   prints the kernel's directory
#                                       last (SUITE: default trixie)
#
# The directory is laid out as l1-kernel.sh's: boot/vmlinuz-<release>,
# lib/modules/<release>/ (depmod'd) and kver (the release); and build/,
# the tree to build out-of-tree modules against (what the kernel's
# scripts/package/install-extmod-build installs, as a headers package
# does, with the .config), which lib/modules/<release>/build points to.
# The release is the source's version with -rig-debug, e.g.
# 6.12.117-rig-debug. Also boot/config-<release>, boot/System.map-<release>
# and build.log (the build's output, its time last).
#
# Cached by content outside the repository, in
# $XDG_CACHE_HOME/kvm-perfmon/debug-kernel/SUITE/KEY (default ~/.cache);
# KEY hashes this script, debug-kernel.config, the source package's name
# and version (read from the suite's index with tests/kernels/apt.sh:
# the machine's /etc/apt is not used) and the compiler's version. One
# maker at a time (a lock per suite); the suite's older builds are
# removed. Without the registry, the newest cached one is used, saying
# so. A cold build runs make -j$JOBS (default 2) at nice 19; its log is
# SUITE/last-build.log, kept after a failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fragment=$here/debug-kernel.config
[ $# -gt 0 ] || set -- trixie
# shellcheck source=tests/rig/suite-cache.sh
. "$here/suite-cache.sh"
suite_cache_open debug-kernel "$@"
JOBS=${JOBS:-2}

# the version linux-source depends on, e.g. linux-source-6.12=6.12.117-1
suite_cache_depends linux-source 'linux-source-[0-9][^ ,]*'

suite_cache_entry kver "$(
	cat "${BASH_SOURCE[0]}" "$fragment"
	echo "$suite $pkg"
	gcc --version | head -n 1
)"

suite_cache_work
log=$cache/last-build.log
: >"$log"
t0=$SECONDS
echo "debug-kernel.sh: fetching $pkg from $suite" >&2
# root downloads into a directory the _apt user cannot write: no sandbox
(cd "$work" && "$apt" "$suite" apt-get -qq -o APT::Sandbox::User=root \
	download "$pkg" >&2) ||
	die "apt-get download $pkg failed"
# the package holds the source as one tarball, unpacked straight from it
mkdir "$work/src" "$work/obj"
dpkg-deb --fsys-tarfile "$work"/linux-source-*.deb |
	tar -xO -f - --wildcards './usr/src/linux-source-*.tar.xz' |
	tar -xJ -f - -C "$work/src" --strip-components=1
rm "$work"/linux-source-*.deb

# kmake ARGS...: the kernel's make, objects apart from the source, its
# output in the log
kmake() {
	nice -n 19 make -C "$work/src" O="$work/obj" "$@" >>"$log" 2>&1 ||
		die "make $* failed (log: $log): $(tail -n 20 "$log")"
}

kmake x86_64_defconfig
(cd "$work/src" && KCONFIG_CONFIG="$work/obj/.config" \
	scripts/kconfig/merge_config.sh -m -O "$work/obj" "$work/obj/.config" \
	"$fragment") >>"$log" 2>&1 ||
	die "merge_config.sh failed (log: $log)"
kmake olddefconfig
# every line of the fragment must hold: a dependency it lacks or a name
# the kernel changed would otherwise drop it silently
missing=$(grep -E '^CONFIG_|^# CONFIG_[A-Za-z0-9_]+ is not set$' "$fragment" |
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*) grep -qxF "$line" "$work/obj/.config" || echo "$line" ;;
		*)
			sym=${line#\# }
			sym=${sym%% *}
			! grep -q "^$sym=" "$work/obj/.config" || echo "$line"
			;;
		esac
	done)
[ -z "$missing" ] ||
	die "debug-kernel.config does not hold: $(echo "$missing" | tr '\n' ' ')"

echo "debug-kernel.sh: building $pkg (make -j$JOBS at nice 19; log: $log)" >&2
kmake -j"$JOBS" bzImage modules
rel=$(cat "$work/obj/include/config/kernel.release")
root=$work/root
mkdir -p "$root/boot"
kmake INSTALL_MOD_PATH="$root" modules_install
cp "$work/obj/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$rel"
cp "$work/obj/.config" "$root/boot/config-$rel"
cp "$work/obj/System.map" "$root/boot/System.map-$rel"
# the tree out-of-tree modules build against, relative to the entry:
# the entry is moved into place after
kmake run-command \
	KBUILD_RUN_COMMAND="$work/src/scripts/package/install-extmod-build $root/build"
cp "$work/obj/.config" "$root/build/.config"
rm -f "$root/lib/modules/$rel/build" "$root/lib/modules/$rel/source"
ln -s ../../../build "$root/lib/modules/$rel/build"
for f in Module.symvers scripts/mod/modpost include/generated/utsrelease.h; do
	[ -f "$root/build/$f" ] || die "$root/build: no $f (log: $log)"
done
echo "$rel" >"$root/kver"
echo "debug-kernel.sh: $suite's $pkg as $rel, built in $((SECONDS - t0)) s" |
	tee -a "$log" >&2
cp "$log" "$root/build.log"
mv -T "$root" "$out"
suite_cache_keep "$out"
echo "debug-kernel.sh: in $out" >&2
echo "$out"
