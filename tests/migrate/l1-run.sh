#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Live migration with monitoring active, in the rig's L1
# (busybox sh; /payload/run, from tests/migrate/rig-migrate.sh through
# pv-guest.sh --l1-run). The guest program livemig (guest/tests/livemig.c)
# counts with two time-switched sets, samples into a buffer that fills
# and notifies, and holds a child blocked on notify, while its VM moves:
#
#   a --unix--> b           live, return path on: counts before/after;
#                           both log dirty pages in KVM's dirty ring, so
#                           the pages the module wrote reach b only
#                           through pv-perfmon's own log (every sample
#                           the guest reads later is whole: livemig)
#   b --exec--> file        the second move, through a file
#   file --> d refused      d's event map has no alias for the guest's
#                           cycles encoding: cycles cannot be counted
#                           there; d says why
#   file(corrupt) --> e     a copy with the perfmon2 state corrupted is
#                           refused by e, saying why
#   file --> c              the good one goes on in c
#
# QEMUs are driven through HMP on pipe chardevs (/tmp/VM/mon.{in,out}),
# the guest through a control port (/tmp/VM/ctl, its /dev/ttyS1). Each
# QEMU runs under run-l2 (RUN_L2_MIGRATE says its part). Module stats:
# the source's VM gone once its QEMU quits, nothing left at the end.
#
# Lines: PASS/FAIL, "migrate-l1: ..." (counts before/after, times,
# stream bytes), each QEMU's output prefixed by its name at the end,
# "migrate-l1: N passed, N failed" last.
set -u
cd /payload || exit 1

L2_LIMIT=420		# each QEMU, s
WAIT_S=180		# for a guest line
MIG_WAIT=45		# polls of a migration's status, 2 s each
MAP=/payload/eventmap
VMS=

# rig_check (protocol.sh) prints and counts the checks
# shellcheck source=tests/rig/protocol.sh
. /etc/rig-protocol.sh

say() { echo "migrate-l1: $*"; }

# KVM's dirty ring instead of its bitmap, for the first move
RING=kvm,dirty-ring-size=4096

# start_vm NAME RUN_L2_MIGRATE EVENTMAP [QEMU ARGS...]; $ACCEL: -accel
start_vm() {
	vm=$1
	mode=$2
	dev=pv-perfmon${3:+,eventmap=$3}
	shift 3
	mkdir -p "/tmp/$vm"
	mkfifo "/tmp/$vm/ctl" "/tmp/$vm/mon.in" "/tmp/$vm/mon.out"
	RUN_L2_LOG=/tmp/$vm RUN_L2_NAME=$vm RUN_L2_MIGRATE=$mode \
		RUN_L2_ACCEL=${ACCEL:-kvm} \
		/payload/qemu/run-l2 "$L2_LIMIT" -device "$dev" \
		-chardev "pipe,id=ctl,path=/tmp/$vm/ctl" \
		-device isa-serial,chardev=ctl,index=1 \
		-chardev "pipe,id=mon,path=/tmp/$vm/mon" \
		-mon chardev=mon,mode=readline \
		-trace 'pv_perfmon_state*' "$@" >"/tmp/$vm/run-l2.out" 2>&1 &
	echo $! >"/tmp/$vm/run-l2.pid"
	cat "/tmp/$vm/mon.out" >>"/tmp/$vm/mon.log" &
	VMS="$VMS $vm"
}

alive() { kill -0 "$(cat "/tmp/$1/run-l2.pid")" 2>/dev/null; }

# wait for VM $1's run-l2, at most $2 s (then its QEMU is killed): its rc
finish() {
	n=0
	while alive "$1" && [ "$n" -lt "$2" ]; do
		sleep 1
		n=$((n + 1))
	done
	if alive "$1"; then
		say "$1: still running after $2 s: killed"
		kill "$(cat "/tmp/$1/qemu.pid")" 2>/dev/null
	fi
	wait "$(cat "/tmp/$1/run-l2.pid")"
}

# wait for the unix socket $1 an incoming QEMU listens on
wait_sock() {
	n=0
	while [ ! -S "$1" ] && [ "$n" -lt 60 ]; do
		sleep 1
		n=$((n + 1))
	done
	[ -S "$1" ]
}

# an HMP command to VM $1 (a fifo without its QEMU would block the open)
hmp() {
	alive "$1" && timeout 5 sh -c "echo '$2' >/tmp/$1/mon.in"
}

# the guest's word on its control port
tell() {
	alive "$1" && timeout 5 sh -c "echo $2 >/tmp/$1/ctl"
}

# wait until file $1 has a line matching ERE $2, print it
wait_line() {
	n=0
	while [ "$n" -lt "$WAIT_S" ]; do
		line=$(grep -a -m 1 -E "$2" "$1" 2>/dev/null)
		if [ -n "$line" ]; then
			echo "${line%"$(printf '\r')"}"
			return 0
		fi
		sleep 1
		n=$((n + 1))
	done
	return 1
}

# migrate VM $1 to URI $2; wait for the end; the status in $status
migrate() {
	: >"/tmp/$1/mon.log"
	hmp "$1" "migrate -d $2"
	n=0
	status=
	while [ "$n" -lt "$MIG_WAIT" ]; do
		sleep 1
		n=$((n + 1))
		: >"/tmp/$1/mon.log"
		hmp "$1" "info migrate" || break
		sleep 1
		status=$(sed -n 's/^Migration status: \([a-z-]*\).*/\1/p' \
			"/tmp/$1/mon.log" | tr -d '\r' | tail -n 1)
		case "$status" in
		completed | failed | cancelled) break ;;
		esac
	done
	case "$status" in
	completed | failed | cancelled) ;;
	*) hmp "$1" migrate_cancel ;;
	esac
	grep -a -E '^(total time|downtime|transferred ram)' "/tmp/$1/mon.log" |
		tr -d '\r' | sed "s/^/migrate-l1: $1: /"
	say "$1 -> $2: ${status:-no status}"
}

# the last whole tick line of VM $1's console, or the first when $2 is
# "first" (a line the move cut in two ends on the destination's console)
tick() {
	if [ "$2" = first ]; then
		grep -a -m 1 '^livemig: tick .* smpl=[0-9]' "/tmp/$1/console.log"
	else
		grep -a '^livemig: tick .* smpl=[0-9]' "/tmp/$1/console.log" |
			tail -n 1
	fi | tr -d '\r'
}

# field $2 of tick line $1
field() { echo "$1" | sed -n "s/.* $2=\([0-9.]*\).*/\1/p"; }

# the move between ticks $1 (before) and $2 (after): counts continue,
# the paused time (the guest's clock stood still) is not active time.
# act grew by no more than the guest's clock between the start of the
# first tick's reading of it and the end of the second's (act_t0, act_t1:
# the window that holds the moment of each reading), and 20 ms
check_move() {
	echo "migrate-l1: before: $1"
	echo "migrate-l1: after:  $2"
	awk -v t0="$(field "$1" t)" -v t1="$(field "$2" t)" \
		-v c0="$(field "$1" cycles)" -v c1="$(field "$2" cycles)" \
		-v a0="$(field "$1" act)" -v a1="$(field "$2" act)" \
		-v s0="$(field "$1" act_t0)" -v e1="$(field "$2" act_t1)" 'BEGIN {
		dt = (t1 - t0) * 1e9
		exit !(c1 >= c0 && a1 >= a0 && c1 - c0 <= 2 * dt + 1e8 &&
		       s0 > 0 && a1 - a0 <= (e1 - s0) * 1e9 + 2e7)
	}'
	rig_check $? "$3: counts continue, the pause is no active time" \
		"cycles, act_duration against the guest's clock"
}

insmod ./kvm-perfmon.ko || { say "insmod kvm-perfmon.ko failed"; exit 1; }

ACCEL=$RING
start_vm a out "$MAP"
wait_line /tmp/a/console.log '^livemig: ready'
rig_check $? "a: the guest counts, samples, its child is blocked"
# QEMU measures in dirty-ring mode only with KVM's dirty ring on
: >/tmp/a/mon.log
hmp a "calc_dirty_rate -r 1"
sleep 3
hmp a "info dirty_rate"
sleep 1
grep -aq 'Mode: dirty-ring' /tmp/a/mon.log
rig_check $? "a: KVM logs dirty pages in a dirty ring" \
	"$(grep -a -m 1 -i 'mode\|error' /tmp/a/mon.log | tr -d '\r')"

start_vm b "in out" "$MAP" -incoming unix:/tmp/b.sock
ACCEL=kvm
hmp a "migrate_set_capability return-path on"
wait_sock /tmp/b.sock
migrate a unix:/tmp/b.sock
[ "$status" = completed ]
rig_check $? "a -> b: migrated" "status $status"
wait_line /tmp/b/console.log '^livemig: tick .* smpl=' >/dev/null
check_move "$(tick a last)" "$(tick b first)" "a -> b"
hmp a quit
finish a 60
rig_check $? "a: QEMU quit after the move, its console clean"
./kvmpfm-stats
./kvmpfm-stats | grep -q ' vms=1 '
rig_check $? "a's VM gone from the module: only b's left"

tell b restart
wait_line /tmp/b/console.log '^livemig: blocked child resumed'
rig_check $? "b: the blocked child resumes after pfm_restart"

# the second move through a file: b stops, the stream is saved
hmp b "migrate_set_capability return-path off"
migrate b '"exec:cat >/tmp/b.img"'
[ "$status" = completed ]
rig_check $? "b -> file: saved" "status $status"
hmp b quit
finish b 60
rig_check $? "b: QEMU quit after the move, its console clean"

# refused VM MAP IMAGE WHAT REASON SAYS: VM, with event map MAP, loads
# the saved IMAGE and must refuse it (check WHAT), naming REASON (grep
# pattern after QEMU's "refused the guest's perfmon2 state: "; check SAYS)
refused() {
	start_vm "$1" "in refused" "$2" -incoming "exec:cat $3"
	finish "$1" 120
	rig_check $? "$1: $4"
	grep -a 'pv-perfmon\|load of migration' "/tmp/$1/run-l2.out" |
		sed "s/^/migrate-l1: $1: /"
	grep -aq "refused the guest.s perfmon2 state: .*$5" "/tmp/$1/run-l2.out"
	rig_check $? "$1: $6"
}

# refused: d's host cannot count the guest's cycles (no PMU in the rig,
# and its event map aliases only the other personality's encoding: a map
# all the same, so the device's features match and only the stream can
# refuse); e's stream is corrupted
grep -v 0x76 "$MAP" >/tmp/eventmap-d
refused d /tmp/eventmap-d /tmp/b.img "QEMU refused the incoming VM" \
	'an event this host cannot count' "says which event it cannot count"
dmesg | tail -n 5 | sed 's/^/migrate-l1: L1: /'

cp /tmp/b.img /tmp/b-bad.img
# the stream header's size field: a malformed stream
./stream-flip /tmp/b-bad.img 12
rig_check $? "the saved stream corrupted"
if cmp -s /tmp/b.img /tmp/b-bad.img; then
	rig_check 1 "e: no corrupted stream to refuse"
else
	refused e "$MAP" /tmp/b-bad.img "QEMU refused the corrupted stream" \
		'malformed' "says the stream is malformed"
fi

start_vm c in "$MAP" -incoming "exec:cat /tmp/b.img"
wait_line /tmp/c/console.log '^livemig: tick .* smpl=' >/dev/null
check_move "$(tick b last)" "$(tick c first)" "b -> c"
./kvmpfm-stats | grep -q ' vms=1 '
rig_check $? "b's, d's and e's VMs gone from the module: only c's left"

tell c stop
wait "$(cat /tmp/c/run-l2.pid)"
rig_check $? "c: the guest's checks passed, its kernel log clean"
./kvmpfm-stats --zero
rig_check $? "the module holds nothing once every QEMU is gone"

for vm in $VMS; do
	grep -a 'pv_perfmon_state' "/tmp/$vm/run-l2.out" |
		sed "s/^/migrate-l1: $vm: /"
done
for vm in $VMS; do
	sed "s/^/$vm| /" "/tmp/$vm/run-l2.out"
done
grep -a -E '^(PASS|FAIL): livemig|^livemig: (samples|blocked)' \
	/tmp/c/console.log | tr -d '\r' | sed 's/^/migrate-l1: guest: /'
say "$(rig_summary "")"
[ "${rig_failed:-0}" = 0 ]
