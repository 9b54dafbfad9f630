# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# What the shell tests (t_*.sh) share, as t_common.c does for the C ones:
# the result lines (tests/rig/protocol.sh, which the rig puts at
# /etc/rig-protocol.sh, else the source tree's from build/guest/tests), a
# scratch directory $out removed at exit, and the device's personality
# in $model. Not executable, so `run` does not take it for a test.
#
#   here=$(cd "$(dirname "$0")" && pwd)
#   . "$here/t_common.sh"

# shellcheck disable=SC2154 # $here: the sourcing test's
for p in /etc/rig-protocol.sh "$here/../../../tests/rig/protocol.sh"; do
	if [ -f "$p" ]; then
		# shellcheck source=tests/rig/protocol.sh
		. "$p"
		break
	fi
done
command -v rig_check >/dev/null || {
	echo "$(basename "$0"): no tests/rig/protocol.sh" >&2
	exit 1
}
out=${TMPDIR:-/tmp}/$(basename "$0").$$
mkdir -p "$out" || exit 1
trap 'rm -rf "$out"' EXIT
# shellcheck disable=SC2034 # the tests'
model=$(cat /sys/kernel/perfmon/pmu_desc/model 2>/dev/null)
