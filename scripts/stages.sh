#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make test's stages, as tests/stages describes them.
#
#   scripts/stages.sh all          every stage, in the table's order and
#                                  lanes, each timed and logged by
#                                  scripts/stage.sh (make test); stops
#                                  starting stages at the first failure
#   scripts/stages.sh run STAGE    one stage, with its rig settings
#                                  (make test-STAGE)
#   scripts/stages.sh field STAGE FIELD
#                                  one field of a stage's line (start,
#                                  slot, l1, l2, retries, description)
#   scripts/stages.sh help         a line a stage, for make help
#   scripts/stages.sh table        doc/TESTING.md's table of the stages
#   scripts/stages.sh check-doc FILE
#                                  FILE's table (between its
#                                  "<!-- stages:begin -->" and
#                                  "<!-- stages:end -->" lines) is the
#                                  table's
#   scripts/stages.sh update-doc FILE
#                                  writes the table between those lines
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
TABLE=$TOP/tests/stages
STAGE=$TOP/scripts/stage.sh
BEGIN_MARK='<!-- stages:begin -->'
END_MARK='<!-- stages:end -->'

die() {
	echo "stages.sh: $*" >&2
	exit 2
}

# the table's lines a stage: "name start slot l1 l2 retries description"
rows() {
	grep -v -e '^#' -e '^[[:space:]]*$' "$TABLE"
}

# row STAGE: its fields into start slot l1 l2 retries description
row() {
	local name
	while read -r name start slot l1 l2 retries description; do
		[ "$name" = "$1" ] && return 0
	done < <(rows)
	die "no stage '$1' in $TABLE (stages: $(rows | cut -d' ' -f1 | paste -sd' '))"
}

# the environment of a stage's run: its rig slot, kernels and retries;
# RIG_L1_KERNEL and RIG_L2_KERNEL set by the caller win
run_stage() {
	local name=$1
	row "$name"
	[ -x "$TOP/tests/$name/run" ] || die "no tests/$name/run"
	case "$slot" in -) ;; *) export RIG_SLOT=$slot ;; esac
	case "$l1" in - | machine | image) ;; *) export RIG_L1_KERNEL=${RIG_L1_KERNEL-$l1} ;; esac
	case "$l2" in - | machine | image) ;; *) export RIG_L2_KERNEL=${RIG_L2_KERNEL-$l2} ;; esac
	export RIG_L2_HANG_RETRIES=$retries
	exec "$TOP/tests/$name/run"
}

# make test: serial stages in the foreground, background ones beside
# them; a background stage's output is printed when make test waits for
# it (stage.sh --show), and its failure fails make test as any other's
run_all() {
	local bg=() failed=() name start j pid
	# wait for the background stages, print their output
	join() {
		for j in "${bg[@]}"; do
			pid=${j%%:*}
			wait "$pid" || failed+=("${j#*:}")
			"$STAGE" --show "${j#*:}"
		done
		bg=()
	}
	"$STAGE" --reset
	# the table on fd 3: a stage's own stdin stays make's
	while read -r name start _ <&3; do
		case "$start" in
		background)
			echo "== stage $name: in the background, alongside the next ones"
			"$STAGE" --alongside "$name" "$0" run "$name" &
			bg+=("$!:$name")
			continue
			;;
		alone) join ;;
		serial) ;;
		*) die "$name: start must be serial, background or alone, not $start" ;;
		esac
		[ "${#failed[@]}" -eq 0 ] || break
		"$STAGE" "$name" "$0" run "$name" || { failed+=("$name"); break; }
	done 3< <(rows)
	join
	"$STAGE" --summary
	if [ "${#failed[@]}" -gt 0 ]; then
		for name in "${failed[@]}"; do
			"$STAGE" --why "$name"
		done
		for name in "${failed[@]}"; do
			echo "make test: FAILED at stage $name"
		done
		return 1
	fi
	echo "make test: all stages passed"
}

print_help() {
	local name start slot l1 l2 retries description
	while read -r name start slot l1 l2 retries description; do
		printf '  %-16s %s\n' "test-$name" "$description"
	done < <(rows)
}

print_table() {
	local name start slot l1 l2 retries description
	echo "| stage | starts | rig slot | L1 kernel | L2 kernel | L2 hang retries | what it does |"
	echo "|---|---|---|---|---|---|---|"
	while read -r name start slot l1 l2 retries description; do
		echo "| $name | $start | $slot | $l1 | $l2 | $retries | $description |"
	done < <(rows)
}

check_doc() {
	local file=$1 have
	have=$(sed -n "/^$BEGIN_MARK\$/,/^$END_MARK\$/p" "$file" | sed '1d;$d')
	if [ "$have" != "$(print_table)" ]; then
		echo "stages.sh: $file's stage table is not tests/stages' (scripts/stages.sh update-doc $file):"
		diff <(printf '%s\n' "$have") <(print_table)
		return 1
	fi
	echo "stages.sh: $file's stage table is tests/stages'"
}

update_doc() {
	local file=$1 table
	if ! grep -qx "$BEGIN_MARK" "$file" || ! grep -qx "$END_MARK" "$file"; then
		die "$file has no '$BEGIN_MARK' and '$END_MARK' lines"
	fi
	table=$(print_table)
	awk -v begin="$BEGIN_MARK" -v end="$END_MARK" -v table="$table" '
		$0 == begin { print; print table; skip = 1; next }
		$0 == end { skip = 0 }
		!skip
	' "$file" >"$file.new" && mv "$file.new" "$file"
}

case "${1:-}" in
all) run_all ;;
run) run_stage "${2:?usage: stages.sh run STAGE}" ;;
field)
	row "${2:?usage: stages.sh field STAGE FIELD}"
	case "${3:-}" in
	start | slot | l1 | l2 | retries | description) echo "${!3}" ;;
	*) die "no field '${3:-}': start, slot, l1, l2, retries or description" ;;
	esac
	;;
help) print_help ;;
table) print_table ;;
check-doc) check_doc "${2:?usage: stages.sh check-doc FILE}" ;;
update-doc) update_doc "${2:?usage: stages.sh update-doc FILE}" ;;
*) die "usage: stages.sh all | run STAGE | field STAGE FIELD | help | table | check-doc FILE | update-doc FILE" ;;
esac
