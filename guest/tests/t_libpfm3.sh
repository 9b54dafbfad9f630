#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# t_libpfm3: perfmon2 programs of libpfm-3.10 itself, unchanged: its
# examples_v2.x, dynamically linked against its libpfm.so.3
# (scripts/libpfm3.sh builds both from the public source, into libpfm3/
# beside this script), run as doc/PERFMON2-ABI.md documents them:
#
#   as is                      libpfm-3's wrappers issue perfmon2's system
#                              calls from /sys/kernel/perfmon/syscall's
#                              base: ENOSYS, which the program reports as
#                              "no performance monitoring support"
#   LD_PRELOAD=libperfmon2.so  the same binaries count, sample, switch
#                              sets and notify
#
# LIBPFM_FORCE_PMU: libpfm-3 picks its PMU tables from the guest's CPUID;
# the README's setting gives it the device's personality instead (16,
# AMD64 forced to family 10h, for "amd64"; 63, the architectural PMU, for
# "intel_arch"). The rig has no PMU: its event map aliases cycles to the
# vCPU's task clock (guest/tests/rig-run.sh), so the programs are given
# cycles (CPU_CLK_UNHALTED) where they take events; those that always add
# retired instructions (task, notify_self) cannot run here and are not
# built.
#
# POSIX sh (busybox ash). Result lines, $out, $model: t_common.sh.
# shellcheck disable=SC2119 # rig_summary: its WHAT is optional
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=guest/tests/t_common.sh
. "$here/t_common.sh"
ex=$here/libpfm3
preload=$here/libperfmon2.so

case $model in
amd64) force=16 cycles=CPU_CLK_UNHALTED ;;
intel_arch) force=63 cycles=UNHALTED_CORE_CYCLES ;;
*)
	rig_check 1 "libpfm3: a personality libpfm-3 knows" "model '$model'"
	rig_summary
	exit 1
	;;
esac

# ex NAME [--as-is] PROGRAM [ARG...]: PROGRAM of libpfm3/ with the preload
# (not with --as-is) and LIBPFM_FORCE_PMU, its output in $out/NAME, its
# exit status in $status (at most 120 s where timeout exists)
ex() {
	name=$1
	shift
	pre=$preload
	if [ "$1" = --as-is ]; then
		pre=
		shift
	fi
	prog=$ex/$1
	shift
	set -- env LIBPFM_FORCE_PMU=$force ${pre:+LD_PRELOAD=$pre} "$prog" "$@"
	if command -v timeout >/dev/null 2>&1; then
		set -- timeout 120 "$@"
	fi
	"$@" >"$out/$name" 2>&1
	status=$?
	echo "--- $name (exit $status)"
	head -n 40 "$out/$name"
}

# check_ok NAME WHAT: exit status 0
check_ok() {
	rig_check "$([ "$status" = 0 ] && echo 0 || echo 1)" "libpfm3: $2" \
		"exit status $status"
}

# lines NAME ERE: how many lines of NAME's output match ERE
lines() {
	grep -cE "$2" "$out/$1"
}

# --- the library alone: the PMU it takes, the personality's events
ex whichpmu whichpmu
check_ok whichpmu "whichpmu with LIBPFM_FORCE_PMU=$force"
case $force in
16) want='detected by pfmlib: AMD64 \(Family 10h' ;;
*) want='detected by pfmlib: Intel architectural PMU' ;;
esac
rig_check "$([ "$(lines whichpmu "$want")" -ge 1 ] && echo 0 || echo 1)" \
	"libpfm3: the forced PMU is the device's personality ($model)" \
	"$(head -n 1 "$out/whichpmu")"
ex check_events check_events "$cycles"
check_ok check_events "check_events $cycles encodes the personality's cycles"

# --- as is: ENOSYS from libpfm-3's own system calls, reported as such
ex self_as_is --as-is self "$cycles"
rig_check "$([ "$status" = 1 ] &&
	[ "$(lines self_as_is 'does not have performance monitoring support')" -ge 1 ] &&
	echo 0 || echo 1)" \
	"libpfm3: self without the preload gets ENOSYS and exits 1" \
	"exit status $status"

# --- with the preload: counting, system-wide, user-level multiplexing
ex self self "$cycles"
check_ok self "self $cycles"
rig_check "$(awk -v e="$cycles" '$1 ~ /^PMD/ && $3 == e && $2 > 0 { n++ }
	END { exit !n }' "$out/self" && echo 0 || echo 1)" \
	"libpfm3: self counts $cycles" "no PMD line with a count"

ex syst syst "$cycles"
check_ok syst "syst $cycles (system-wide, 10 x 2 s)"
rig_check "$(awk '$1 ~ /^CPU/ && $4 ~ /^delta=/ { n++; split($4, d, "=")
	if (d[2] > 0) c++ } END { exit !(n == 10 && c >= 1) }' "$out/syst" &&
	echo 0 || echo 1)" \
	"libpfm3: syst reads 10 intervals of its CPU, not all empty" \
	"$(lines syst '^CPU') interval lines"

# shellcheck disable=SC2016 # the command's own loop, run by its shell
ex multiplex multiplex --set="$cycles" --set="$cycles" -- \
	sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done'
check_ok multiplex "multiplex, two sets, around a command"
rig_check "$(awk '$1 ~ /^[0-9][0-9][0-9]$/ && $3 > 0 { n++ }
	END { exit !(n == 2) }' "$out/multiplex" && echo 0 || echo 1)" \
	"libpfm3: multiplex ran both sets" "$(lines multiplex '^  [0-9]') set lines"

# --- with the preload: sampling and notification
ex self_smpl self_smpl
check_ok self_smpl "self_smpl (the default sampling format)"
rig_check "$([ "$(lines self_smpl '^Entry [0-9]+ PID:[0-9]+ TID:[0-9]+ ')" -ge 1 ] &&
	echo 0 || echo 1)" \
	"libpfm3: self_smpl reads samples from its buffer" "no Entry line"

# v2.8x's per-CPU statistics (debugfs perfmon/cpuN/), zeroed, count
# what self_smpl_multi does: each of its overflow signals reads one
# message and calls pfm_restart once. Its own count covers its three
# threads: a signal its main thread takes is in no line it prints.
dbg=/sys/kernel/debug
[ -d $dbg/perfmon ] || mount -t debugfs none $dbg 2>/dev/null
stat_sum() {
	cat $dbg/perfmon/cpu*/"$1" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}
echo 1 >/sys/kernel/perfmon/reset_stats
ex self_smpl_multi self_smpl_multi -t 3 -n 3 -f -p 1000000
check_ok self_smpl_multi "self_smpl_multi: 3 threads, each monitoring itself"
rig_check "$(awk '/^myid = / { n++; gsub(",", "")
	if ($9 > 0 && $12 == 0 && $15 == 0 && $18 == 0) ok++ }
	END { exit !(n == 3 && ok == 3) }' "$out/self_smpl_multi" &&
	echo 0 || echo 1)" \
	"libpfm3: each thread's overflows reach it (F_SETOWN_EX), none mismatched, no other message" \
	"$(grep '^myid' "$out/self_smpl_multi" | tr '\n' '|')"

signals=$(awk '/^myid = / { gsub(",", ""); s += $9 } END { print s + 0 }' \
	"$out/self_smpl_multi")
# shellcheck disable=SC2012 # the names are the driver's own
names=$(ls $dbg/perfmon/cpu0 2>/dev/null | tr '\n' ' ')
rig_check "$([ "$names" = "ctxswin_count ctxswin_ns ctxswout_count ctxswout_ns handle_work_count ovfl_intr_all_count ovfl_intr_ns ovfl_notify_count pfm_restart_count " ] &&
	echo 0 || echo 1)" \
	"libpfm3: debugfs perfmon/cpu0/ has v2.8x's statistics of what the guest does" \
	"'$names'"
restarts=$(stat_sum pfm_restart_count)
notified=$(stat_sum ovfl_notify_count)
rig_check "$([ "$restarts" -ge "$signals" ] && [ "$restarts" -le "$notified" ] &&
	echo 0 || echo 1)" \
	"libpfm3: pfm_restart_count, summed over the CPUs, covers self_smpl_multi's $signals restarts, each after a message" \
	"$restarts restarts, $notified messages"
rig_check "$([ "$(stat_sum ovfl_intr_all_count)" -ge 1 ] &&
	[ "$(stat_sum ctxswin_count)" -ge 1 ] && echo 0 || echo 1)" \
	"libpfm3: interrupts and switches counted" \
	"intr $(stat_sum ovfl_intr_all_count), ctxswin $(stat_sum ctxswin_count)"
echo 1 >/sys/kernel/perfmon/reset_stats
rig_check "$([ "$(stat_sum pfm_restart_count)" = 0 ] && echo 0 || echo 1)" \
	"libpfm3: reset_stats zeroes them"

ex set_notify set_notify
check_ok set_notify "set_notify (time-switched sets, an overflow-switched end marker)"
rig_check "$([ "$(lines set_notify '^Notification 2: ')" -ge 1 ] &&
	echo 0 || echo 1)" \
	"libpfm3: set_notify gets its three notifications" \
	"$(lines set_notify '^Notification') notifications"

rig_summary
