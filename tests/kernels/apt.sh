#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# apt-get or apt-cache on one Debian suite's index from Debian's registry,
# with a configuration of its own: its own sources list, lists, cache,
# empty dpkg status and no preferences. The machine's /etc/apt is neither
# read for sources nor changed.
#
#   tests/kernels/apt.sh SUITE update           read the suite's index,
#                                               unless read in the last
#                                               KERNELS_APT_MAX_AGE seconds
#                                               (default 600)
#   tests/kernels/apt.sh SUITE apt-get|apt-cache ARGS...
#   tests/kernels/apt.sh SUITE version PKG      PKG's version in the index
#
# State in $XDG_CACHE_HOME/kvm-perfmon/kernels/apt/SUITE (default
# ~/.cache), one user at a time (a lock there). KERNELS_MIRROR: the
# registry (default http://deb.debian.org/debian).
set -euo pipefail

MIRROR=${KERNELS_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
MAX_AGE=${KERNELS_APT_MAX_AGE:-600}

[ $# -ge 2 ] || {
	echo "usage: apt.sh SUITE update|version PKG|apt-get ARGS...|apt-cache ARGS..." >&2
	exit 2
}
suite=$1
shift
dir=${XDG_CACHE_HOME:-${HOME:?set HOME or XDG_CACHE_HOME}/.cache}/kvm-perfmon/kernels/apt/$suite
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
exec 9>>"$dir/.lock"
flock 9
echo "deb [signed-by=$KEYRING] $MIRROR $suite main" >"$dir/sources.list"
: >"$dir/status"
opts=(-o "Dir::Etc::sourcelist=$dir/sources.list"
	-o Dir::Etc::sourceparts=/dev/null
	-o "Dir::State::Lists=$dir/lists"
	-o "Dir::Cache=$dir/cache"
	-o "Dir::State::status=$dir/status"
	-o Dir::Etc::preferencesparts=/dev/null)

case "$1" in
update)
	# the stamp is the sources line it was read for: another mirror
	# reads again
	if [ -n "$(find "$dir/updated" -newermt "$MAX_AGE seconds ago" 2>/dev/null)" ] &&
		cmp -s "$dir/sources.list" "$dir/updated"; then
		exit 0
	fi
	apt-get "${opts[@]}" -qq update >"$dir/update.log" 2>&1 ||
		{ cat "$dir/update.log" >&2; exit 1; }
	cp "$dir/sources.list" "$dir/updated"
	;;
version)
	apt-cache "${opts[@]}" show --no-all-versions "${2:?version PKG}" 2>/dev/null |
		sed -n 's/^Version: //p'
	;;
apt-get | apt-cache)
	cmd=$1
	shift
	"$cmd" "${opts[@]}" "$@"
	;;
*)
	echo "apt.sh: unknown command $1" >&2
	exit 2
	;;
esac
