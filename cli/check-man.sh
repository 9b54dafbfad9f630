#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# cli/check-man.sh PROGRAM PAGE...: each man page of an installed program
# is as a man page should be, and says what the program's --help says:
# - groff -man -ww reads it without a warning;
# - it has NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, FILES and
#   SEE ALSO, as man-pages(7) orders them;
# - it is what PROGRAM --man prints now (the build's page is not stale);
# - every long option PROGRAM --help names is in it.
# PAGE is PROGRAM's own page; several PROGRAM PAGE pairs may follow.
# Prints a PASS/FAIL line per check, "check-man: N passed, N failed"
# last; exit status 1 if one failed.
set -u
# rig_check, rig_summary: the result lines
# shellcheck source=tests/rig/protocol.sh
. "$(dirname "$0")/../tests/rig/protocol.sh"

while [ $# -ge 2 ]; do
	prog=$1 page=$2
	shift 2
	name=${page##*/}
	if [ -s "$page" ]; then
		warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	else
		warn="no page"
	fi
	[ -z "$warn" ]
	rig_check $? "$name: groff -man -ww, no warning" "$warn"

	order=$(sed -n 's/^\.SH //p' "$page" | tr '\n' ',')
	missing=
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" FILES \
		"SEE ALSO"; do
		case ",$order" in *",$s,"*) ;; *) missing="$missing $s" ;; esac
	done
	[ -z "$missing" ]
	rig_check $? "$name: its sections" "missing:$missing; has: $order"
	case "$order" in
	NAME,SYNOPSIS,DESCRIPTION,*OPTIONS,*EXIT\ STATUS,*FILES,*SEE\ ALSO,) r=0 ;;
	*) r=1 ;;
	esac
	rig_check $r "$name: in man-pages(7)'s order" "$order"

	"$prog" --man | cmp -s - "$page"
	rig_check $? "$name: what ${prog##*/} --man prints"

	text=$(groff -man -Tascii -P-cbou -rLL=300n "$page" 2>/dev/null)
	missing=
	for o in $("$prog" --help | grep -o -- '--[a-z][a-z0-9.-]*[a-z0-9]' |
		sort -u); do
		printf '%s\n' "$text" | grep -q -e "$o" || missing="$missing $o"
	done
	[ -z "$missing" ]
	rig_check $? "$name: every option of --help" "missing:$missing"
done
rig_summary check-man
[ "${rig_failed:-0}" = 0 ]
