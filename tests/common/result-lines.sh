#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The result-line protocol, checked: every test prints "PASS: NAME" or
# "FAIL: NAME (WHY)" per check and "N passed, N failed" last, and a runner
# adds its programs' counts up. Each language has one implementation:
#   C       tests/common/result.c (host tests, guest tests, lib_check)
#   shell   rig_check, rig_summary, rig_tally in tests/rig/protocol.sh
#   Python  tests/common/judge.py (the judges that parse CSV and JSON)
# This script runs each against the lines it must print, and fails if a
# test prints such a line by itself instead. Needs cc and python3.
# Prints PASS/FAIL lines and "result-lines: N passed, N failed"; exit
# status 1 on a failure.
# shellcheck disable=SC2030,SC2031 # the subshells count apart, on purpose
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/rig/protocol.sh
. "$top/tests/rig/protocol.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/result-lines.XXXXXX")
trap 'rm -rf "$work"' EXIT

# same NAME WANT GOT: PASS if the files WANT and GOT are equal
same() {
	if cmp -s "$2" "$3"; then
		rig_check 0 "$1"
	else
		rig_check 1 "$1" "$(diff "$2" "$3" | head -n 6 | tr '\n' '|')"
	fi
}

# what each implementation must print for: a pass, a failure with a
# reason, and the closing count
cat >"$work/want" <<'EOF'
PASS: one
FAIL: two (why 2)
1 passed, 1 failed
EOF

# C
cat >"$work/t.c" <<'EOF'
#include "tests/common/result.h"

int main(void)
{
	t_check(1, "one", "unused");
	t_check(0, "two", "why %d", 2);
	return t_done() == 1 ? 0 : 2;
}
EOF
if ${CC:-cc} -std=gnu11 -Wall -Werror -I"$top" -o "$work/t" "$work/t.c" \
	"$top/tests/common/result.c" 2>"$work/cc.err"; then
	"$work/t" >"$work/c.out"
	rig_check $? "c: t_done's exit status is 1 after a failure"
	same "c: result.c's lines" "$work/want" "$work/c.out"
else
	rig_check 1 "c: result.c builds" "$(head -n 3 "$work/cc.err")"
fi

# shell: the lines, and a runner adding a program's count up
(
	rig_passed=0 rig_failed=0
	rig_check 0 one
	rig_check 1 two "why 2"
	rig_summary ""
) >"$work/sh.out"
same "sh: rig_check and rig_summary's lines" "$work/want" "$work/sh.out"
(
	printf 'PASS: x\n3 passed, 2 failed\nnoise\n' >"$work/prog.out"
	printf 'PASS: y\n' >"$work/none.out"
	rig_passed=1 rig_failed=0
	rig_tally "$work/prog.out" || echo "no count"
	echo "failed there: $rig_tally_failed"
	rig_tally "$work/none.out" || echo "no count"
	rig_summary host
) >"$work/tally.out"
printf 'failed there: 2\nno count\nhost: 4 passed, 2 failed\n' >"$work/tally.want"
same "sh: rig_tally adds up a program's closing count" "$work/tally.want" \
	"$work/tally.out"

# Python: as tests/operator/check.py and tests/run/check_pfmon.py use it
PYTHONPATH="$top/tests/common" python3 -c '
import sys
from judge import Judge
j = Judge()
j.check(True, "one")
j.check(False, "two", "why 2")
print("1 passed, 1 failed")
sys.exit(0 if j.verdict("x") == 1 else 2)
' >"$work/py.all"
rig_check $? "py: verdict's exit status is 1 after a failure"
sed '$d' "$work/py.all" >"$work/py.out"
same "py: judge.py's lines" "$work/want" "$work/py.out"

# one implementation per language: nothing else prints the lines itself
git -C "$top" grep -n -E \
	'(printf|puts)\("(PASS|FAIL|SKIP): |echo "(PASS|FAIL): |print\(f?"(PASS|FAIL): |"%d passed, %d failed' \
	-- '*.c' '*.sh' '*.py' '*/run' ':!tests/common/*' \
	':!tests/rig/protocol.sh' >"$work/others" || true
rig_check "$([ -s "$work/others" ] && echo 1 || echo 0)" \
	"no result lines printed outside the three implementations" \
	"$(head -n 5 "$work/others" | tr '\n' '|')"

rig_summary result-lines
[ "${rig_failed:-0}" -eq 0 ]
