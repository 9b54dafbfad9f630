#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# qemu-patches/ is what `git format-patch` gives from a real branch on
# Debian trixie's QEMU 10.0 source package; this script keeps it so.
#
#   scripts/qemu-series.sh branch DIR   DIR becomes a git tree: its first
#                                       commit (tag debian-base) is Debian's
#                                       unpacked tree, patches applied, then
#                                       `git am` of the series; the files
#                                       of QEMU_SHARED are copied in,
#                                       untracked
#   scripts/qemu-series.sh export DIR   qemu-patches/*.patch and series
#                                       from DIR's commits after debian-base
#   scripts/qemu-series.sh check        branch in a temporary directory,
#                                       then export there and compare with
#                                       qemu-patches/ byte for byte
#                                       (make test's qemu stage)
#
# The base commit has a fixed author, committer and date, and git runs
# without the user's or the system's configuration, so that the same
# source and series give the same files anywhere. The patches keep their
# author and date through `git am`.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PATCHES=$TOP/qemu-patches
QEMU_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/kvm-perfmon/qemu
BASE_TAG=debian-base

say() { echo "qemu-series: $*" >&2; }
die() {
	echo "qemu-series: $*" >&2
	exit 1
}

# shellcheck source=scripts/qemu-source.sh
. "$TOP/scripts/qemu-source.sh"

# git as format-patch and am behave with no configuration at all (and no
# background gc, which would race the removal of a temporary tree)
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_COMMITTER_NAME="kvm-perfmon qemu-series.sh"
export GIT_COMMITTER_EMAIL=dev@kvm-perfmon.invalid
g() {
	git -C "$dir" -c core.abbrev=12 -c init.defaultBranch=pvperfmon \
		-c gc.auto=0 -c maintenance.auto=false "$@"
}

series() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$PATCHES/series"
}

make_branch() {
	local dsc_name dsc_sum dsc p f
	read -r dsc_name dsc_sum < <(qemu_src_dsc)
	[ -n "${dsc_sum:-}" ] || die "no qemu source package in $QEMU_SUITE's index"
	dsc=$(qemu_src_fetch "$dsc_name" "$dsc_sum")
	deb_src_unpack "$dsc" "$dir"
	g init -q
	# dpkg-source's quilt state, the build directory, the shared files
	printf '%s\n' /.pc/ /build/ >>"$dir/.git/info/exclude"
	for f in "${QEMU_SHARED[@]}"; do
		echo "/${f#* }" >>"$dir/.git/info/exclude"
	done
	g add -A
	GIT_AUTHOR_NAME=Debian GIT_AUTHOR_EMAIL=debian-qemu@lists.debian.org \
		GIT_AUTHOR_DATE='2000-01-01T00:00:00+0000' \
		GIT_COMMITTER_DATE='2000-01-01T00:00:00+0000' \
		g commit -q -m "qemu ${dsc_name#qemu_}: Debian's tree, its patches applied"
	g tag "$BASE_TAG"
	while read -r p; do
		g am -q "$PATCHES/$p" >&2 ||
			die "$p does not apply to ${dsc_name#qemu_} (git am)$am_hint"
	done < <(series)
	for f in "${QEMU_SHARED[@]}"; do
		mkdir -p "$(dirname "$dir/${f#* }")"
		cp "$TOP/${f%% *}" "$dir/${f#* }"
	done
}

# format-patch DIR's commits after the base into $1
format() {
	g format-patch -q --zero-commit --no-signature -o "$1" "$BASE_TAG"..HEAD
	(cd "$1" && ls -- *.patch >series)
}

case "${1:-}" in
branch)
	[ $# -eq 2 ] || die "usage: qemu-series.sh branch DIR"
	dir=$(realpath -m "$2")
	[ -e "$dir" ] && die "$dir exists"
	am_hint="; the branch so far is in $dir"
	make_branch
	say "$dir: $(g rev-list --count "$BASE_TAG"..HEAD) commits on $BASE_TAG"
	;;
export)
	[ $# -eq 2 ] || die "usage: qemu-series.sh export DIR"
	dir=$(realpath "$2")
	g rev-parse -q --verify "$BASE_TAG" >/dev/null || die "$dir has no $BASE_TAG"
	rm -f "$PATCHES"/*.patch
	format "$PATCHES"
	say "qemu-patches/: $(series | wc -l) patches"
	;;
check)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	dir=$tmp/qemu
	am_hint=
	make_branch
	format "$tmp/out"
	(cd "$PATCHES" && ls -- *.patch series) >"$tmp/have"
	(cd "$tmp/out" && ls -- *.patch series) >"$tmp/want"
	diff -u "$tmp/have" "$tmp/want" >&2 ||
		die "qemu-patches/ has other files than format-patch gives"
	while read -r f; do
		cmp -s "$PATCHES/$f" "$tmp/out/$f" || {
			diff -u "$PATCHES/$f" "$tmp/out/$f" | head -n 40 >&2
			die "qemu-patches/$f is not what format-patch gives"
		}
	done <"$tmp/want"
	echo "qemu-series: ok: $(series | wc -l) patches are format-patch's from" \
		"$BASE_TAG ($(basename "$(qemu_src_dsc | cut -d' ' -f1)" .dsc))"
	;;
*)
	die "usage: qemu-series.sh branch DIR | export DIR | check"
	;;
esac
