# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# A cache of what a script makes from one Debian suite's packages, one
# entry a content key, outside the repository: sourced by l1-kernel.sh
# (the suite's kernel), debug-kernel.sh (a kernel built from its source)
# and l0-qemu.sh (its QEMU), whose one argument is the suite.
#
#   die MESSAGE                  the script's name and MESSAGE on stderr,
#                                exit 2
#   suite_cache_open WHAT ARGS   $suite: the script's one argument;
#                                $cache: $XDG_CACHE_HOME/kvm-perfmon/WHAT/SUITE
#                                (default ~/.cache), locked until the
#                                script exits: one maker at a time;
#                                $apt: tests/kernels/apt.sh, the suite's
#                                index
#   suite_cache_depends META PATTERN
#                                $pkg: NAME=VERSION of the package
#                                matching PATTERN (a sed BRE) that META
#                                depends on in the suite's index; without
#                                the index, the newest entry
#                                (suite_cache_newest kver), and exit
#   suite_cache_newest MARKER    without the suite's index (offline?): the
#                                newest entry, the directory MARKER is in,
#                                saying so; dies if there is none
#   suite_cache_entry MARKER TEXT
#                                $out: the entry TEXT's hash names; if
#                                it is made (MARKER in it, not empty),
#                                prints it and exits
#   suite_cache_work             $work: a new build directory in $cache,
#                                removed at exit (and any left by a killed
#                                maker)
#   suite_cache_keep ENTRY       removes the suite's other entries

die() {
	echo "${0##*/}: $*" >&2
	exit 2
}

suite_cache_open() {
	[ $# -eq 2 ] || die "usage: ${0##*/} SUITE"
	suite=$2
	# shellcheck disable=SC2034 # for the sourcing script
	apt=$(cd "$(dirname "${BASH_SOURCE[0]}")/../kernels" && pwd)/apt.sh
	cache=${XDG_CACHE_HOME:-${HOME:?set HOME or XDG_CACHE_HOME}/.cache}/kvm-perfmon/$1/$2
	mkdir -p "$cache"
	exec 8>>"$cache/.lock"
	flock 8
}

suite_cache_depends() {
	pkg=
	if "$apt" "$suite" update; then
		pkg=$("$apt" "$suite" apt-cache show --no-all-versions "$1" 2>/dev/null |
			sed -n "s/^Depends: .*\\($2\\) (= \\([^)]*\\)).*/\\1=\\2/p") ||
			pkg=
	fi
	if [ -z "$pkg" ]; then
		suite_cache_newest kver
		exit 0
	fi
}

suite_cache_newest() {
	local newest
	# shellcheck disable=SC2012 # the cache's own names: hex keys
	newest=$(ls -td "$cache"/*/"$1" 2>/dev/null | head -n 1)
	[ -n "$newest" ] || die "cannot read $suite's index, and nothing of it is cached"
	echo "${0##*/}: $suite: no index (offline?); using the cached $(cat "$newest")" >&2
	echo "${newest%/"$1"}"
}

suite_cache_entry() {
	out=$cache/$(printf '%s\n' "$2" | sha256sum | cut -c1-16)
	if [ -s "$out/$1" ]; then
		echo "$out"
		exit 0
	fi
}

suite_cache_work() {
	rm -rf "$cache"/.build.*
	work=$(mktemp -d "$cache/.build.XXXXXX")
	trap 'rm -rf "$work"' EXIT
}

suite_cache_keep() {
	local d
	for d in "$cache"/*/; do
		d=${d%/}
		[ "$d" = "$1" ] || rm -rf "$d"
	done
}
