#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# doc/ARCHITECTURE.md's layout (the block under "## Sides and rooms")
# against the tree:
#
#   tests/docs/layout.sh [ARCHITECTURE.md]
#
# A line of the block that starts at column 0 names a path from the top
# ("kvm/", "include/uapi/", "Makefile, README.md, .ci/run"); one at
# column 2 names paths inside the last such ("  engine/", "  deps/ vm/"),
# or a part that is no path ("  (module glue)"); deeper lines describe. Holds:
# - every path the block names exists;
# - every top-level directory is named (dot-directories: where a path in
#   them is);
# - a directory whose directories the block lists lists them all, and
#   one whose files it lists lists them all.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
doc=${1:-$top/doc/ARCHITECTURE.md}
# shellcheck source=tests/rig/protocol.sh
. "$top/tests/rig/protocol.sh"

# the files of the tree, relative to its top
tree_files() {
	if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$top" ls-files
	else
		(cd "$top" && find . -path ./build -prune -o -type f -print | sed 's|^\./||')
	fi
}

# the paths the block names, one a line
named_paths() {
	awk '
		/^## Sides and rooms/ { in_section = 1; next }
		in_section && /^```/ { if (in_block) exit; in_block = 1; next }
		!in_block { next }
		/^[^ ]/ {
			# the name column: up to the first run of two blanks
			name = $0
			sub(/  .*/, "", name)
			n = split(name, parts, /, /)
			parent = n > 1 ? "" : parts[1]
			for (i = 1; i <= n; i++) print parts[i]
			next
		}
		/^  [^ ]/ {
			if ($0 ~ /^  \(/ || parent == "") next
			name = substr($0, 3)
			sub(/  .*/, "", name)
			n = split(name, parts, / /)
			for (i = 1; i <= n; i++) print parent parts[i]
		}
	' "$doc"
}

# fail WHAT: a FAIL line (rig_check), counted in rig_failed
fail() {
	rig_check 1 "$doc: $*"
}

files=$(tree_files)
named=$(named_paths)
[ -n "$named" ] || { echo "layout.sh: no layout block under '## Sides and rooms' in $doc"; exit 1; }

# exists: a file, or a directory (a prefix of a file)
while read -r path; do
	case "$path" in
	*/) grep -q "^${path//./\\.}" <<<"$files" || fail "names $path: no such directory" ;;
	*) grep -qx "${path//./\\.}" <<<"$files" || fail "names $path: no such file" ;;
	esac
done <<<"$named"

# every top-level directory is named, or one inside it is
while read -r d; do
	grep -q "^${d//./\\.}" <<<"$named" || fail "does not name $d"
done < <(awk -F/ 'NF > 1 { print $1 "/" }' <<<"$files" | sort -u)

# a parent whose directories (files) the block lists lists them all
while read -r parent; do
	listed=$(grep "^${parent//./\\.}" <<<"$named" | sed "s|^${parent//./\\.}||")
	have=$(grep "^${parent//./\\.}" <<<"$files" | sed "s|^${parent//./\\.}||" |
		sed -E 's|/.*|/|' | sort -u)
	if grep -q '/$' <<<"$listed"; then
		while read -r d; do
			grep -qx "${d//./\\.}" <<<"$listed" || fail "lists directories of $parent but not $parent$d"
		done < <(grep '/$' <<<"$have")
	fi
	if grep -q '[^/]$' <<<"$listed"; then
		while read -r f; do
			grep -qx "${f//./\\.}" <<<"$listed" || fail "lists files of $parent but not $parent$f"
		done < <(grep '[^/]$' <<<"$have")
	fi
done < <(grep -E '^[^/]+(/[^/]+)*/.+' <<<"$named" | sed -E 's|[^/]+/?$||' | sort -u)

if [ "${rig_failed:-0}" -gt 0 ]; then
	echo "layout: $rig_failed difference(s) between $doc's layout and the tree"
	exit 1
fi
echo "layout: $doc's layout names $(wc -l <<<"$named") paths, all there, none missing"
