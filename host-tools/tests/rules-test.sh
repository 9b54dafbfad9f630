#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The shipped alerting rules (../kvm-perfmon.rules.yml): promtool reads
# them, and promtool's rule tests (rules-test.yml: input series, the
# alerts each must raise or not) pass. Run by make check.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# rig_check: the PASS/FAIL lines and their counts
# shellcheck source=tests/rig/protocol.sh
. "$here/../../tests/rig/protocol.sh"

out=$(promtool check rules "$here/../kvm-perfmon.rules.yml" 2>&1)
r=$?
# promtool passes a file with no rules: the file must hold them
case $out in *"SUCCESS: 0 rules"*) r=1 ;; esac
rig_check "$r" "promtool check rules kvm-perfmon.rules.yml" "$out"
out=$(cd "$here" && promtool test rules rules-test.yml 2>&1)
r=$?
rig_check "$r" "promtool test rules rules-test.yml (each alert on its input series)" "$out"

rig_summary rules
[ "${rig_failed:-0}" = 0 ]
