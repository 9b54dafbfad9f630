#!/bin/sh
# shellcheck shell=sh
# The host tests, in the rig's L1 (busybox sh; boot-l1.sh runs it as
# /payload/run): load kvm-perfmon.ko, run every test program of tests.list,
# check that the module holds nothing any more, unload it.
# Each program prints "PASS: name" / "FAIL: name (why)" lines and
# "N passed, N failed"; this script adds its own checks and prints the
# combined "host: N passed, N failed" last (tests/rig/protocol.sh).
# Exit status 0 only if all passed.
cd "$(dirname "$0")" || exit 1
# shellcheck source=tests/rig/protocol.sh
. /etc/rig-protocol.sh
# the programs' environment as make chose it (tests/host/Makefile: RUN_ENV)
if [ -f ./env ]; then
	. ./env
fi
# a program's own limit; the rig's limit for the whole run is larger
PROG_TIMEOUT=${PROG_TIMEOUT:-300}

# check NAME COMMAND...: PASS if COMMAND succeeds
check() {
	name=$1
	shift
	"$@"
	rig_check $? "$name"
}

uptime_s() {
	read -r up _ </proc/uptime
	echo "$up"
}

check insmod_kvm_perfmon insmod ./kvm-perfmon.ko
# off unless the host admin turns it on; the programs that count it do
check host_page_faults_off_by_default \
	grep -qx N /sys/module/kvm_perfmon/parameters/allow_host_page_faults
if [ ! -c /dev/kvm-perfmon ]; then
	rig_check 1 dev_kvm_perfmon "no /dev/kvm-perfmon"
	rig_summary host
	exit 1
fi
./kvmpfm-stats

while read -r t; do
	[ -n "$t" ] || continue
	echo "=== $t"
	t0=$(uptime_s)
	# live to the console (a hung or crashed L1 still shows how far it
	# got), and to a file for the summary line
	{
		timeout "$PROG_TIMEOUT" "./$t" </dev/null 2>&1
		echo $? >"/tmp/$t.rc"
	} | tee "/tmp/$t.out"
	rc=$(cat "/tmp/$t.rc")
	t1=$(uptime_s)
	rig_tally_failed=0
	rig_tally "/tmp/$t.out"
	if [ "$rc" != 0 ] && [ "$rig_tally_failed" = 0 ]; then
		rig_check 1 "$t" "exit status $rc"
	fi
	echo "=== $t: rc=$rc, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')s"
done <tests.list

./kvmpfm-stats
# prints its own PASS/FAIL line: counted here
if ./kvmpfm-stats --zero; then
	rig_passed=$((${rig_passed:-0} + 1))
else
	rig_failed=$((${rig_failed:-0} + 1))
fi
check rmmod_kvm_perfmon rmmod kvm_perfmon
# a kernel with lockdep (tests/rig/debug-kernel.sh's): still validating
# at the end; off, the locking since it went off was not checked
if [ -r /proc/lockdep_stats ]; then
	check lockdep_still_on grep -Eq '^ *debug_locks: *1$' /proc/lockdep_stats
fi
echo "kvm-perfmon kernel log lines:"
dmesg | grep -i -e kvm.perfmon -e kvmpfm | sed 's/^/  /'

rig_summary host
[ "${rig_failed:-0}" -eq 0 ]
