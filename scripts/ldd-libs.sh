# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by scripts/qemu-bundle.sh and tests/rig/mkinitramfs.sh: what a
# dynamically linked program needs, read from ldd's output. Its lines:
#   libx.so.N => /path/libx.so.N (0x...)     a library
#   /lib64/ld-linux-x86-64.so.2 (0x...)     the loader
#   linux-vdso.so.1 (0x...)                 in the kernel: nothing to copy
#   libx.so.N => not found                  unresolved
# The sourcing script defines die().

# die if ldd's output $1 (of program $2) has an unresolved library
ldd_check() {
	if grep -q 'not found' <<<"$1"; then
		die "ldd: $2: unresolved libraries: $(grep 'not found' <<<"$1" | tr -s ' \t' ' ')"
	fi
}

# the libraries' paths in ldd's output $1, one a line
ldd_libraries() {
	awk '$2 == "=>" && $3 ~ /^\// { print $3 }' <<<"$1"
}

# the loader's path in ldd's output $1 (none for a static program)
ldd_loader() {
	awk '$1 ~ /^\// { print $1; exit }' <<<"$1"
}
