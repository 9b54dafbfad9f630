#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One stage of `make test`, timed and logged.
#
#   scripts/stage.sh NAME CMD...   run CMD, output to the terminal and to
#                                  build/logs/NAME.log; record its time
#   scripts/stage.sh --alongside NAME CMD...
#                                  the same, for a stage that runs while
#                                  another one does (make test starts it
#                                  in the background): what it prints goes
#                                  to build/logs/NAME.out, not to the
#                                  terminal, so as not to interleave
#   scripts/stage.sh --show NAME   print that, once the stage ended
#   scripts/stage.sh --reset       forget the recorded times; the wall
#                                  clock of the whole run starts
#   scripts/stage.sh --summary     print the recorded times and rig
#                                  retries, and the wall time since --reset
#   scripts/stage.sh --why NAME    a failed stage's failing lines and its
#                                  log's last lines: make test prints them
#                                  last, where a CI log's tail shows them
#
# A stage fails when CMD fails, and also when CMD's output has a compiler
# warning about project code ("FILE:LINE[:COL]: warning:" with FILE not under
# /usr), or a modpost WARNING: warnings are errors in this project even where
# a sub-Makefile forgot -Werror.
# A stage that boots the nested rig passes even when a hung L2 made the
# rig boot again (tests/rig/boot-l1.sh, as often as tests/stages allows
# the stage), but says how many
# times: in its last line and in the summary, so that an intermittent hang
# of our own code never passes unseen.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/rig/protocol.sh
. "$TOP/tests/rig/protocol.sh"
LOGS=$TOP/build/logs
TIMES=$LOGS/times.tsv
mkdir -p "$LOGS"

# ", N rig retries" for a stage whose rig runs were booted again after
# a hung L2, else nothing
retries_text() {
	case "$1" in
	0) ;;
	1) echo ", 1 rig retry (a hung L2)" ;;
	*) echo ", $1 rig retries (a hung L2)" ;;
	esac
}

case "${1:-}" in
--reset)
	rm -f "$TIMES"
	date +%s >"$LOGS/start"
	exit 0
	;;
--show)
	cat "$LOGS/${2:?}.out"
	exit 0
	;;
--summary)
	echo "== stage times"
	total=0
	all_retries=0
	while IFS=$'\t' read -r name secs status retries alongside; do
		printf '   %-12s %6ss  %s%s%s\n' "$name" "$secs" "$status" \
			"$(retries_text "${retries:-0}")" \
			"${alongside:+ (alongside others: not in the sum)}"
		[ -n "${alongside:-}" ] || total=$((total + secs))
		all_retries=$((all_retries + ${retries:-0}))
	done < "$TIMES"
	printf '   %-12s %6ss%s\n' total "$total" "$(retries_text "$all_retries")"
	[ ! -f "$LOGS/start" ] ||
		printf '   %-12s %6ss\n' wall $(($(date +%s) - $(cat "$LOGS/start")))
	exit 0
	;;
--why)
	log=$LOGS/${2:?}.log
	[ -f "$log" ] || log=$LOGS/$2.out
	echo "== why $2 failed ($log):"
	grep -E 'FAIL|not ok|rig: result|timed out|[Hh]ung|[a-z]: die' "$log" |
		grep -v -e '^PASS' -e '^== stage' -e ' 0 failed' |
		tail -n 12 | cut -c1-200
	echo "   ... its last lines:"
	tail -n 6 "$log" | cut -c1-200
	exit 0
	;;
"")
	echo "usage: $0 NAME CMD... | --reset | --summary | --why NAME" >&2
	exit 2
	;;
esac

alongside=
if [ "$1" = --alongside ]; then
	alongside=yes
	shift
	exec >"$LOGS/${1:?}.out" 2>&1
fi
name=$1
shift
log=$LOGS/$name.log
echo "== stage $name: $*"
start=$(date +%s)
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))

warn_re='^([^/ :][^ :]*|/[^u][^ :]*|/u[^s][^ :]*)\.(c|h|S|cc|cpp):[0-9]+(:[0-9]+)?: warning:|^WARNING: modpost:'
if [ "$rc" -eq 0 ] && grep -Eq "$warn_re" "$log"; then
	echo "== stage $name: warnings in project code (warnings are errors):"
	grep -E "$warn_re" "$log"
	rc=1
fi

status=ok
[ "$rc" -eq 0 ] || status="FAILED (exit $rc)"
retries=$(rig_retries "$log")
printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$secs" "$status" "$retries" \
	"$alongside" >> "$TIMES"
echo "== stage $name: $status in ${secs}s$(retries_text "$retries")"
exit "$rc"
