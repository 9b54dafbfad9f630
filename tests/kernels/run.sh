#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernels stage of `make test`: both modules compiled against the
# Debian kernels they are for, as tests/kernels/matrix says (compile and
# link only; nothing is loaded).
#
#   tests/kernels/run.sh [--module host|guest] [SUITE...]
#                  every line of the matrix, or those of the suites and
#                  the module given (tests/host builds kvm-perfmon.ko for
#                  RIG_L1_KERNEL's L1 so)
#
# Each cell builds the module's DKMS tree (scripts/dkms-tree.sh, in
# build/kernels/SUITE-MODULE/) with the command its dkms.conf gives DKMS,
# inside the suite's chroot (tests/kernels/chroot.sh, cached), with
# KCFLAGS=-Werror: a warning in project code or in a kernel header it
# includes fails the cell, and so does any other line of the build that
# says warning, as modpost's do. The shipped Kbuild files stay without
# -Werror (a user's newer kernel must not break a DKMS build over a new
# warning). Logs: build/kernels/SUITE-MODULE.log (KERNELS_BUILD=DIR:
# in DIR). A clean cell's module and log are kept by content (cell_key)
# in $XDG_CACHE_HOME/kvm-perfmon/kernel-cells (default ~/.cache): the
# same sources on the same chroot are not built again. Prints one line per cell and fails if a cell did not come out
# as the matrix expects.
# JOBS=N: make's jobs per cell (default 1: the stage runs beside others).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
MATRIX=${KERNELS_MATRIX:-$TOP/tests/kernels/matrix}
B=${KERNELS_BUILD:-$TOP/build/kernels}
JOBS=${JOBS:-1}
CACHE=${XDG_CACHE_HOME:-${HOME:?set HOME or XDG_CACHE_HOME}/.cache}/kvm-perfmon/kernel-cells
mkdir -p "$B" "$CACHE"
# results not used for two weeks go
find "$CACHE" -mindepth 1 -maxdepth 1 -mtime +14 -exec rm -rf {} +
only_module=
if [ "${1:-}" = --module ]; then
	only_module=${2:?--module host|guest}
	shift 2
fi

# lines of a build that fail a cell: warnings (CLEAN_WARN_RE,
# clean-build.sh), errors of every tool
# shellcheck source=tests/kernels/clean-build.sh
. "$TOP/tests/kernels/clean-build.sh"
ERROR_RE='error|ERROR'
# what a cell expecting restricted:... may fail with, and nothing else:
# modpost refusing a symbol KVM exports to its vendor modules only
# (EXPORT_SYMBOL_FOR_MODULES, a "module:" namespace), and make passing
# that failure up (-k: what it did not make), but no failed compile step
RESTRICTED_RE="^ERROR: modpost: module kvm-perfmon uses symbol ([a-z0-9_]+) from namespace module:kvm-amd,kvm-intel, but does not import it\.\$"
MAKE_FAIL_RE="^make(\[[0-9]+\])?: (\*\*\* \[[^]]*\] Error [0-9]+|Target '[^']*' not remade because of errors\.)\$"
COMPILE_FAIL_RE='\*\*\* \[[^]]*Makefile\.build'

declare -A root_of
fails=0
gaps=()
summary=()

# the suite's chroot directory, made once per run
suite_root() {
	local s=$1
	if [ -z "${root_of[$s]:-}" ]; then
		root_of[$s]=$("$TOP/tests/kernels/chroot.sh" "$s" | tail -n 1) ||
			root_of[$s]=
	fi
	[ -n "${root_of[$s]}" ] && echo "${root_of[$s]}"
}

# where a module's sources lie in its DKMS tree, and the module
module_path() {
	case "$1" in
	host) echo kvm/kvm-perfmon.ko ;;
	guest) echo guest/kernel/perfmon2.ko ;;
	esac
}

# MODULE's DKMS tree into TREE, as DKMS gets it
make_tree() {
	local module=$1 tree=$2 dkms_flag=
	[ "$module" = guest ] && dkms_flag=--guest
	rm -rf "$tree"
	"$TOP/scripts/dkms-tree.sh" $dkms_flag "$tree" >/dev/null
}

# A clean cell's result is kept by content: the tree's files, the chroot
# (its directory is named by its own content key), this script and the
# cell's expectation. A run over unchanged sources builds nothing again.
cell_key() {
	local tree=$1 dir=$2 expect=$3
	{
		(cd "$tree" && find . -type f -print0 | LC_ALL=C sort -z |
			xargs -0 sha256sum)
		echo "$dir $expect"
		sha256sum <"${BASH_SOURCE[0]}"
	} | sha256sum | cut -c1-16
}

# a kept result into TREE and LOG; fails if there is none
cell_from_cache() {
	local key=$1 tree=$2 log=$3 module=$4 ko
	ko=$(module_path "$module")
	[ -s "$CACHE/$key/${ko##*/}" ] || return 1
	cp "$CACHE/$key/${ko##*/}" "$tree/$ko"
	cp "$CACHE/$key/log" "$log"
	touch "$CACHE/$key"
}

cell_to_cache() {
	local key=$1 tree=$2 log=$3 module=$4 ko
	ko=$(module_path "$module")
	mkdir -p "$CACHE/$key.tmp"
	cp "$tree/$ko" "$log" "$CACHE/$key.tmp/" &&
		mv "$CACHE/$key.tmp/${log##*/}" "$CACHE/$key.tmp/log" &&
		rm -rf "${CACHE:?}/$key" && mv "$CACHE/$key.tmp" "$CACHE/$key"
}

# one cell: build the DKMS tree TREE of MODULE in the chroot of DIR; its
# output in LOG; returns make's exit code
build_cell() {
	local dir=$1 module=$2 tree=$3 log=$4 lock rc modpath
	modpath=$(module_path "$module")
	modpath=${modpath%/*}
	# shared: chroot.sh replaces a suite's chroot only under an
	# exclusive lock
	exec {lock}>>"${dir%/*}/.lock"
	flock -s "$lock"
	if [ ! -s "$dir/kdir" ]; then
		echo "kernels: $dir vanished (a new chroot of the suite meanwhile)" >"$log"
		exec {lock}>&-
		return 1
	fi
	# a private mount namespace: the binds vanish with the build
	# shellcheck disable=SC2016 # the inner script's own $1...
	unshare --mount --propagation private bash -c '
		set -e
		root=$1/root
		mount --bind "$2" "$root/src"
		mount --bind /dev "$root/dev"
		mount -t proc proc "$root/proc"
		exec chroot "$root" make -k -C "/src/$3" KDIR="$4" \
			KCFLAGS="$6" -j"$5"' _ \
		"$dir" "$tree" "$modpath" "$(cat "$dir/kdir")" "$JOBS" "$CLEAN_KCFLAGS" \
		>"$log" 2>&1
	rc=$?
	exec {lock}>&-
	return "$rc"
}

cell_failed() {
	echo "kernels: FAILED $1: $2"
	grep -E "$CLEAN_WARN_RE|$ERROR_RE" "$3" | head -n 40
	echo "   (whole log: $3)"
	summary+=("$(printf '%-9s %-6s %-44s FAILED' "$suite" "$module" "$headers")")
	fails=$((fails + 1))
}

# one line of the matrix; the caller holds the cell's lock
check_cell() {
	cell="$suite $module"
	headers="(no chroot)"
	[ -z "$rest" ] || { cell_failed "$cell" "matrix line has extra fields: $rest" /dev/null; return 0; }
	case "$module" in host | guest) ;; *)
		cell_failed "$cell" "module must be host or guest" /dev/null
		return 0 ;;
	esac
	dir=$(suite_root "$suite") || { cell_failed "$cell" "no chroot" /dev/null; return 0; }
	headers=$(cat "$dir/headers")
	upstream=$(echo "$headers" | sed -n 's/^linux-headers-\([0-9][0-9.]*[0-9]\).*/\1/p')
	case "$upstream" in "$kernel".*) ;; *)
		cell_failed "$cell" "$headers is not the matrix's $kernel" /dev/null
		return 0 ;;
	esac
	log=$B/$suite-$module.log
	tree=$B/$suite-$module
	if ! make_tree "$module" "$tree"; then
		cell_failed "$cell" "no DKMS tree" /dev/null
		return 0
	fi
	key=$(cell_key "$tree" "$dir" "$expect")
	if [ "$expect" = clean ] && cell_from_cache "$key" "$tree" "$log" "$module"; then
		echo "kernels: ok $cell ($headers), built so before (kept result $key)"
		summary+=("$(printf '%-9s %-6s %-44s ok (kept)' "$suite" "$module" "$headers")")
		return 0
	fi
	t1=$SECONDS
	build_cell "$dir" "$module" "$tree" "$log"
	rc=$?
	secs=$((SECONDS - t1))
	build_secs=$((build_secs + secs))
	warnings=$(grep -E "$CLEAN_WARN_RE" "$log")

	case "$expect" in
	clean)
		if [ "$rc" -ne 0 ] || [ -n "$warnings" ]; then
			cell_failed "$cell" "exit $rc, $(grep -cE "$CLEAN_WARN_RE" "$log") warning lines" "$log"
			return 0
		fi
		echo "kernels: ok $cell ($headers) in ${secs}s"
		cell_to_cache "$key" "$tree" "$log" "$module" ||
			echo "kernels: $cell: its result could not be kept in $CACHE"
		summary+=("$(printf '%-9s %-6s %-44s ok' "$suite" "$module" "$headers")")
		;;
	restricted:*)
		allowed=",${expect#restricted:},"
		# every compile step ran (the module's objects are linked
		# into kvm-perfmon.o before modpost), and what failed is
		# modpost over allowed symbols only
		unexpected=$({
			grep -E "$ERROR_RE" "$log" | grep -vE "$RESTRICTED_RE|$MAKE_FAIL_RE"
			grep -E "$COMPILE_FAIL_RE" "$log"
		})
		symbols=$(sed -nE "s/$RESTRICTED_RE/\\1/p" "$log" | sort -u)
		outside=
		for s in $symbols; do
			case "$allowed" in *",$s,"*) ;; *) outside="$outside $s" ;; esac
		done
		if [ "$rc" -eq 0 ]; then
			cell_failed "$cell" "links now: make its matrix line 'clean'" "$log"
		elif [ -n "$warnings" ] || [ -n "$unexpected" ] || [ -n "$outside" ] ||
			[ -z "$symbols" ] || [ ! -s "$B/$suite-$module/kvm/kvm-perfmon.o" ]; then
			cell_failed "$cell" "exit $rc; expected to fail only at modpost over${outside:+ (not in the matrix:$outside)} ${expect#restricted:}" "$log"
		else
			list=$(printf '%s\n' "$symbols" | paste -sd, -)
			gaps+=("KNOWN GAP: host module on $upstream ($suite): links only once it no longer imports KVM's restricted symbols: $list")
			echo "kernels: known gap $cell ($headers) in ${secs}s: compiles clean; modpost refuses only $list"
			summary+=("$(printf '%-9s %-6s %-44s KNOWN GAP (modpost: restricted symbols)' "$suite" "$module" "$headers")")
		fi
		;;
	*)
		cell_failed "$cell" "expect must be clean or restricted:SYMS, not $expect" /dev/null
		;;
	esac
}

build_secs=0
while read -r suite kernel module expect rest; do
	case "$suite" in "" | "#"*) continue ;; esac
	if [ $# -gt 0 ]; then
		case " $* " in *" $suite "*) ;; *) continue ;; esac
	fi
	[ -z "$only_module" ] || [ "$module" = "$only_module" ] || continue
	# one builder per cell at a time: stages beside each other build
	# the same cells, and a tree is removed and made anew by each
	exec {cell_lock}>"$B/$suite-$module.lock"
	flock "$cell_lock"
	check_cell
	exec {cell_lock}>&-
done <"$MATRIX"

echo "== kernels: the matrix (${SECONDS}s in all, ${build_secs}s of it building)"
printf '   %s\n' "${summary[@]}"
for g in "${gaps[@]}"; do
	echo "kernels: $g"
done
if [ "$fails" -gt 0 ]; then
	echo "kernels: $fails cell(s) FAILED"
	exit 1
fi
[ "${#summary[@]}" -gt 0 ] || { echo "kernels: no cell matched: $*"; exit 1; }
echo "kernels: all cells as expected"
