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

passed=0
failed=0
judge() {
	if [ "$1" = 0 ]; then
		echo "PASS: $2"
		passed=$((passed + 1))
	else
		echo "FAIL: $2${3:+ ($3)}"
		failed=$((failed + 1))
	fi
}

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
	judge $? "$name: groff -man -ww, no warning" "$warn"

	order=$(sed -n 's/^\.SH //p' "$page" | tr '\n' ',')
	missing=
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" FILES \
		"SEE ALSO"; do
		case ",$order" in *",$s,"*) ;; *) missing="$missing $s" ;; esac
	done
	[ -z "$missing" ]
	judge $? "$name: its sections" "missing:$missing; has: $order"
	case "$order" in
	NAME,SYNOPSIS,DESCRIPTION,*OPTIONS,*EXIT\ STATUS,*FILES,*SEE\ ALSO,) r=0 ;;
	*) r=1 ;;
	esac
	judge $r "$name: in man-pages(7)'s order" "$order"

	"$prog" --man | cmp -s - "$page"
	judge $? "$name: what ${prog##*/} --man prints"

	text=$(groff -man -Tascii -P-cbou -rLL=300n "$page" 2>/dev/null)
	missing=
	for o in $("$prog" --help | grep -o -- '--[a-z][a-z0-9.-]*[a-z0-9]' |
		sort -u); do
		printf '%s\n' "$text" | grep -q -e "$o" || missing="$missing $o"
	done
	[ -z "$missing" ]
	judge $? "$name: every option of --help" "missing:$missing"
done
echo "check-man: $passed passed, $failed failed"
[ "$failed" = 0 ]
