# shellcheck shell=sh
# shellcheck disable=SC3043 # local: busybox ash, bash and dash have it
# The rig's protocol in one place: the marker lines a rig level prints on
# its console, how a run of a level is judged from them, and the lines L0
# prints about a run (its result, its retries). Sourced, never run, by
# every script that prints or reads them: init.sh (/init of L1 and L2,
# which finds this file at /etc/rig-protocol.sh), run-l2.sh (in L1, same
# path), the payload runners (tests/host/l1-run.sh, guest/tests/run,
# tests/rig/smoke/run), boot-l1.sh, pv-guest.sh, scripts/run.sh,
# scripts/stage.sh and the judges tests/bench/check.sh and
# tests/run/check.sh (L0).
# POSIX sh plus `local`: busybox ash in L1 and L2, bash in L0. Defines
# functions only, all named rig_* (rig_check and rig_tally count in the
# variables rig_passed and rig_failed; rig_fail is the function
# rig_judge calls).
#
# Markers: /init (init.sh) of level L (L1 or L2) prints, in this order,
#   ===L-INIT uptime=S===            /init starts (S: the kernel's uptime)
#   ===L-KVM ok===                   L1 only: /dev/kvm is there, or
#   ===L-KVM missing===              it is not (/payload/run not started)
#   ===L-PAYLOAD-BEGIN timeout=Ns=== /payload/run's output follows...
#   ===L-PAYLOAD-END===              ...up to here, or
#   ===L-PAYLOAD-NONE===             there is no /payload/run
#   ===L-DMESG-BEGIN===              the kernel log (and kmemleak's report)
#   ===L-DMESG-END===
#   ===L-RESULT rc=N===              /payload/run's exit status; last line
# run-l2 (L1) frames a running L2 for L0's watchdog (boot-l1.sh):
#   ===L2-BOOT===                    run-l2 starts L2's QEMU...
#   run-l2: total Ns                 ...and has judged it: its last line
# An L2's lines come through L1's console as they are: a level's markers
# never clash with another's.

# rig_mark LEVEL NAME [WORDS]: print the marker ===LEVEL-NAME[ WORDS]===
rig_mark() {
	local level="$1" name="$2"
	shift 2
	echo "===$level-$name${*:+ $*}==="
}

# rig_tag LEVEL NAME: the start of that marker, which every form of it
# contains (for `case` and grep; computed once, not per line read)
rig_tag() {
	printf '===%s-%s' "$1" "$2"
}

# rig_l2_done: the start of run-l2's last line (see above)
rig_l2_done() {
	printf 'run-l2: total'
}

# rig_value FILE LEVEL NAME KEY: VALUE of the last ===LEVEL-NAME KEY=VALUE===
# in FILE (empty if there is none)
rig_value() {
	sed -n "s/.*===$2-$3 $4=\([^ =]*\)===.*/\1/p" "$1" | tail -n 1
}

# rig_section FILE LEVEL NAME: the lines between ===LEVEL-NAME-BEGIN...===
# and ===LEVEL-NAME-END===
rig_section() {
	sed -n "/$(rig_tag "$2" "$3")-BEGIN/,/$(rig_tag "$2" "$3")-END===/p" "$1" |
		sed '1d;$d'
}

# rig_judge LEVEL CONSOLE DIR BAD_PATTERNS INIT_RAN
# The verdict on one boot of LEVEL (L1: boot-l1.sh; L2: run-l2 in L1,
# pv-guest.sh --direct), from its console log CONSOLE. INIT_RAN is 1 if
# the caller saw LEVEL's /init start. Writes DIR/payload.log (what
# /payload/run printed), DIR/dmesg.log (LEVEL's kernel log) and
# DIR/bad.log (its lines that match BAD_PATTERNS, tests/rig/bad-patterns),
# shows the bad lines, and calls rig_fail REASON, which the caller
# defines, once for each reason the run failed: /init never ran, no
# /dev/kvm, no payload, no kernel log dump, no result line, a payload
# exit status other than 0, a bad kernel log line. QEMU's own exit status
# and time-outs are the caller's to judge.
rig_judge() {
	local level="$1" con="$2" dir="$3" patterns="$4" init_ran="$5" rc scan
	[ "$init_ran" = 1 ] || rig_fail "$level never ran /init"
	grep -q "$(rig_mark "$level" KVM missing)" "$con" &&
		rig_fail "/dev/kvm missing in $level"
	grep -q "$(rig_mark "$level" PAYLOAD-NONE)" "$con" &&
		rig_fail "no /payload/run in $level (initramfs unpacking?)"
	rig_section "$con" "$level" PAYLOAD >"$dir/payload.log"
	if grep -q "$(rig_mark "$level" DMESG-END)" "$con"; then
		rig_section "$con" "$level" DMESG >"$dir/dmesg.log"
		scan=$dir/dmesg.log
	else
		# no dump (the level died): what reached the console is all
		# the log there is
		: >"$dir/dmesg.log"
		scan=$con
		[ "$init_ran" = 1 ] && rig_fail "no dmesg dump from $level"
	fi
	rc=$(rig_value "$con" "$level" RESULT rc)
	if [ -z "$rc" ]; then
		rig_fail "no result line from $level"
	elif [ "$rc" != 0 ]; then
		rig_fail "$level payload exited with rc=$rc"
	fi
	grep -v -e '^#' -e '^$' "$patterns" >"$dir/patterns" || true
	if grep -a -E -f "$dir/patterns" "$scan" >"$dir/bad.log"; then
		rig_fail "$level kernel log has $(wc -l <"$dir/bad.log") bad line(s)"
		echo "$level kernel log: bad lines (from $scan):"
		head -n 40 "$dir/bad.log" | sed 's/^/  /'
	fi
	return 0
}

# Test lines: every check prints "PASS: NAME" or "FAIL: NAME (WHY)", and
# each program "N passed, N failed" last (the summaries grep them); a
# runner of programs adds their counts up and ends with
# "WHAT: N passed, N failed". The C programs print them with
# tests/common/result.c; the shell scripts with these functions, which
# count in rig_passed and rig_failed (unset: none yet).
# rig_check STATUS NAME [WHY]: one check's line, PASS if STATUS is 0
rig_check() {
	if [ "$1" = 0 ]; then
		echo "PASS: $2"
		rig_passed=$((${rig_passed:-0} + 1))
	else
		echo "FAIL: $2${3:+ ($3)}"
		rig_failed=$((${rig_failed:-0} + 1))
	fi
}

# rig_summary [WHAT]: the closing line, "[WHAT: ]N passed, N failed"
rig_summary() {
	echo "${1:+$1: }${rig_passed:-0} passed, ${rig_failed:-0} failed"
}

# rig_tally FILE: a program's closing line in its output FILE (the last
# "N passed, N failed") added to rig_passed and rig_failed, its failed
# count in rig_tally_failed; status 1, nothing added, if FILE has none
rig_tally() {
	local line p f
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -n 1)
	[ -n "$line" ] || return 1
	p=${line%% passed*}
	f=${line#*passed, }
	f=${f%% failed*}
	rig_passed=$((${rig_passed:-0} + p))
	rig_failed=$((${rig_failed:-0} + f))
	# shellcheck disable=SC2034 # the caller's
	rig_tally_failed=$f
}

# rig_awk_judge: awk functions for a judge of a run's output (run with
# awk -v what=WHAT): judge(OK, NAME, WHY) prints PASS: WHAT: NAME or
# FAIL: WHAT: NAME (WHY); verdict() prints "WHAT checks: N failed" and
# exits 1 if one failed
rig_awk_judge() {
	cat <<'AWK'
function judge(ok, name, why) {
	if (ok) {
		print "PASS: " what ": " name
	} else {
		print "FAIL: " what ": " name " (" why ")"
		failed++
	}
}
function verdict() {
	printf "%s checks: %d failed\n", what, failed
	exit failed ? 1 : 0
}
AWK
}

# L0 boots the whole rig again when a running L2 hung (boot-l1.sh; as
# often as RIG_L2_HANG_RETRIES allows): a retried run passes only if its last boot passes, and
# says so in these lines, so that an intermittent hang of our own code
# never passes unseen. One line per retry, as it starts:
#   rig: retry N of MAX: WHY
# and the run's result, boot-l1.sh's last line and its result file's first:
#   rig: result ok|FAILED, retries=N[ (NOTE)]
rig_retry_line() {
	echo "rig: retry $1 of $2: $3"
}

rig_result_line() {
	echo "rig: result $1, retries=$2${3:+ ($3)}"
}

# rig_retries FILE...: how many retries the runs logged in FILE made (the
# retry lines may be indented)
rig_retries() {
	cat "$@" 2>/dev/null | grep -c 'rig: retry [0-9]* of [0-9]*:' || true
}
