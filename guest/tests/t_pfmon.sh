#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# t_pfmon: pfmon (guest/tools, beside this script) on the device's
# personality, whichever it is: the events it lists and counts are the
# personality's libpfm4 tables' (amd64: CPU_CLK_UNHALTED; intel_arch:
# UNHALTED_CORE_CYCLES), perf's generic name cycles means the same event,
# one the rig cannot back (retired instructions) is refused with a line
# that says so, and sampling works on the personality's cycles. tests/run
# judges pfmon's options and output at length on the amd64 guest of
# `make run`; this is what differs by personality.
#
# The rig has no PMU: its event map aliases cycles to the vCPU's task
# clock, marked emulated (guest/tests/rig-run.sh).
#
# POSIX sh (busybox ash). Result lines, $out, $model: t_common.sh.
# shellcheck disable=SC2119 # rig_summary: its WHAT is optional
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=guest/tests/t_common.sh
. "$here/t_common.sh"
pfmon=$here/pfmon
# shellcheck disable=SC2016 # the loop runs in the command's shell
loop='i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done'

case $model in
amd64) cycles=CPU_CLK_UNHALTED instructions=RETIRED_INSTRUCTIONS ;;
intel_arch) cycles=UNHALTED_CORE_CYCLES instructions=INSTRUCTION_RETIRED ;;
*)
	rig_check 1 "pfmon: a personality with libpfm4 tables" "model '$model'"
	rig_summary
	exit 1
	;;
esac

# run NAME ARG...: pfmon ARG..., its output in $out/NAME, status in $status
run() {
	name=$1
	shift
	"$pfmon" "$@" >"$out/$name" 2>&1
	status=$?
	echo "--- pfmon $* (exit $status)"
	head -n 20 "$out/$name"
}

# counted NAME EVENT: a CSV line (-x ,) of EVENT with a count above 0,
# marked emulated (the rig's alias)
counted() {
	awk -F, -v e="$2" '$4 == e && $5 > 0 && $NF == 1 { n++ } END { exit !n }' \
		"$out/$1"
}

run list -l
rig_check "$([ "$status" = 0 ] && head -n 1 "$out/list" | grep -q "^PMU model: $model " &&
	echo 0 || echo 1)" \
	"pfmon: -l names the $model personality" "$(head -n 1 "$out/list")"
rig_check "$(grep -Eq "^  $cycles +0x[0-9a-f]+ .*\[emulated" "$out/list" &&
	grep -Eq "^  $instructions +0x[0-9a-f]+ .*\[not available" "$out/list" &&
	echo 0 || echo 1)" \
	"pfmon: -l has its tables: $cycles emulated (the event map), $instructions not available" \
	"$(grep -E "^  ($cycles|$instructions) " "$out/list" | tr '\n' '|')"

run count -x , -e "$cycles" -- sh -c "$loop"
rig_check "$([ "$status" = 0 ] && counted count "$cycles" && echo 0 || echo 1)" \
	"pfmon: -e $cycles counts, marked emulated" "exit $status"

run generic -x , -e cycles -- sh -c "$loop"
rig_check "$([ "$status" = 0 ] && { counted generic cycles || counted generic "$cycles"; } &&
	echo 0 || echo 1)" \
	"pfmon: -e cycles (perf's name) counts the same event" "exit $status"

run refused -e "$instructions" -- true
rig_check "$([ "$status" = 125 ] && grep -q "$instructions .*the host cannot back it" "$out/refused" &&
	echo 0 || echo 1)" \
	"pfmon: -e $instructions, which the rig cannot back, is refused and says so" \
	"exit $status: $(head -n 1 "$out/refused")"

run smpl --smpl-period 1000000 -e "$cycles" -- sh -c "$loop"
rig_check "$([ "$status" = 0 ] && grep -Eq "^sampling profile of .*: [1-9][0-9]* samples" "$out/smpl" &&
	echo 0 || echo 1)" \
	"pfmon: sampling on $cycles gives a profile" "exit $status"

rig_summary
