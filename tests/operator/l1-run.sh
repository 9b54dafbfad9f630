#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The operator test in the rig's L1 (busybox sh; /payload/run, from
# tests/operator/rig-operator.sh through pv-guest.sh --l1-run): two VMs at
# once, vm-a and vm-b (vm-b with an event filter), each running the guest
# program `operator`; while both are alive, kvm-perfmon-stat's table,
# --json and --vm, the tool as two kinds of non-root user, and the
# exporter on L1's network address (10.0.2.15:17995, which QEMU's hostfwd
# gives L0 as 127.0.0.1:17995) with TLS and basic authentication from
# L0's web.yml, server.crt and server.key. L0 drives the exporter half
# through port 17996: "go" (Prometheus scrapes: let the guests sample
# again), "stop" (done: end the guests).
#
# Lines for L0 (rig-operator.sh and check.py read them):
#   operator-l1: vm-a: <the guest's "operator: phase N: ..." line>
#   ===OP-BEGIN NAME=== ... ===OP-END NAME===   a tool's output
#   operator-l1: exporter up | go | stop        where the run is
#   PASS: ... / FAIL: ...                       checks made here
#   operator-l1: N passed, N failed             last
set -u
cd /payload || exit 1

PORT=17995		# the exporter's default
L1_ADDR=10.0.2.15	# QEMU's user network: hostfwd forwards here
CONTROL_PORT=17996	# L0's word
L2_LIMIT=420		# each guest's QEMU, s
WAIT_S=240		# for a guest's line or L0's word
VMS="vm-a vm-b"
# rig_check: PASS/FAIL lines, counted
# shellcheck source=tests/rig/protocol.sh
. /etc/rig-protocol.sh

uuid_of() {
	case "$1" in
	vm-a) echo 6c0d2a8e-1f0b-4c59-9d5e-00000000000a ;;
	vm-b) echo 6c0d2a8e-1f0b-4c59-9d5e-00000000000b ;;
	esac
}

# wait until the guest of VM $1 printed a line matching $2; print it
guest_line() {
	n=0
	while [ "$n" -lt "$WAIT_S" ]; do
		line=$(grep -a -m 1 "$2" "/tmp/$1/console.log" 2>/dev/null)
		if [ -n "$line" ]; then
			echo "operator-l1: $1: ${line%"$(printf '\r')"}"
			return 0
		fi
		if ! kill -0 "$(cat "/tmp/$1/run-l2.pid")" 2>/dev/null; then
			echo "operator-l1: $1: its QEMU ended before '$2'"
			return 1
		fi
		sleep 1
		n=$((n + 1))
	done
	echo "operator-l1: $1: no '$2' in ${WAIT_S}s"
	return 1
}

# wait for L0 to say $1 on CONTROL_PORT. L0 says it again until it sees
# that it was heard: a connection QEMU's user network took while nothing
# listened here may come in empty, or with the word before.
l0_says() {
	echo "operator-l1: waiting for '$1' from L0 on port $CONTROL_PORT"
	end=$(($(date +%s) + WAIT_S))
	while [ "$(date +%s)" -lt "$end" ]; do
		word=$(timeout $((end - $(date +%s))) nc -l -p "$CONTROL_PORT" \
			</dev/null | tr -d '\r\n')
		if [ "$word" = "$1" ]; then
			echo "operator-l1: L0 says '$word'"
			return 0
		fi
		echo "operator-l1: L0 said '$word', not '$1'"
	done
	return 1
}

# the guests' word: the control port of each (isa-serial on a pipe)
tell_guests() {
	for vm in $VMS; do
		# a fifo without its QEMU would block the writer's open
		kill -0 "$(cat "/tmp/$vm/run-l2.pid")" 2>/dev/null &&
			timeout 5 sh -c "echo $1 >/tmp/$vm/ctl"
	done
}

# a tool's output between markers, and its exit status in $rc
show() {
	name=$1
	shift
	echo "===OP-BEGIN $name==="
	"$@"
	rc=$?
	echo "===OP-END $name=== rc=$rc"
}

# vm-a's guest counts HOST_PAGE_FAULTS, which the host admin allows
insmod ./kvm-perfmon.ko allow_host_page_faults=Y ||
	{ echo "operator-l1: insmod kvm-perfmon.ko failed"; exit 1; }
# as Debian's udev rule makes it (kvm/99-kvm-perfmon.rules): root:kvm 0660
KVM_GID=36
chgrp "$KVM_GID" /dev/kvm-perfmon && chmod 0660 /dev/kvm-perfmon

# the guests; vm-b may not program HOST_PAGE_FAULTS (virtual PMD 261)
printf 'deny\nvirtual 261   # HOST_PAGE_FAULTS\n' >/tmp/filter-b
for vm in $VMS; do
	mkdir -p "/tmp/$vm"
	mkfifo "/tmp/$vm/ctl"
	dev=pv-perfmon
	[ "$vm" = vm-b ] && dev=pv-perfmon,filter=/tmp/filter-b
	# each L2's console in its own log (run-l2 judges it); the L1
	# console gets it at the end, its lines marked with the VM's name
	RUN_L2_LOG=/tmp/$vm RUN_L2_NAME=$vm /payload/qemu/run-l2 "$L2_LIMIT" \
		-uuid "$(uuid_of "$vm")" -device "$dev" \
		-chardev "pipe,id=ctl,path=/tmp/$vm/ctl" \
		-device isa-serial,chardev=ctl,index=1 \
		>"/tmp/$vm/run-l2.out" 2>&1 &
	echo $! >"/tmp/$vm/run-l2.pid"
done

ok=0
for vm in $VMS; do
	guest_line "$vm" "^operator: phase 1: samples=" || ok=1
done
rig_check "$ok" "both guests ran phase 1"

if [ "$ok" = 0 ]; then
	show table ./kvm-perfmon-stat
	rig_check "$rc" "kvm-perfmon-stat: exit 0"
	show json ./kvm-perfmon-stat --json
	rig_check "$rc" "kvm-perfmon-stat --json: exit 0"
	show detail-vm-b ./kvm-perfmon-stat --vm vm-b
	rig_check "$rc" "kvm-perfmon-stat --vm vm-b: exit 0"
	show columns ./kvm-perfmon-stat --raw --sort DOORBELLS \
		--output NAME,UUID,DOORBELLS,EXITS,DOORBELL%
	rig_check "$rc" "kvm-perfmon-stat --raw --sort DOORBELLS --output ...: exit 0"
	show watch ./kvm-perfmon-stat --interval 1 --count 2 --json
	rig_check "$rc" "kvm-perfmon-stat --interval 1 --count 2 --json: exit 0"
	show watch-table ./kvm-perfmon-stat --interval 1 --count 2 --raw \
		--output NAME,RUN%,SAMPLES,DOORBELLS
	rig_check "$rc" "kvm-perfmon-stat --interval 1 --count 2 --raw: exit 0"
	show no-vm ./kvm-perfmon-stat --vm vm-c
	[ "$rc" = 4 ]
	rig_check $? "kvm-perfmon-stat --vm vm-c (no such VM): exit 4" "exit $rc"

	# the operator's filter at run time: set from a file, shown as one,
	# refused malformed or from a non-operator, cleared (check.py judges)
	printf 'deny\ngeneric 0x41/0xff 0/0   # L1 D-cache fills\n' >/tmp/op-filter
	show filter-set ./kvm-perfmon-stat --vm vm-a --set-filter /tmp/op-filter
	show filter-show ./kvm-perfmon-stat --vm vm-a --show-filter
	printf 'deny\nfixed 99\n' >/tmp/op-filter-bad
	show filter-bad ./kvm-perfmon-stat --vm vm-a --set-filter /tmp/op-filter-bad
	show filter-nonroot ./setpriv --reuid=1000 --regid=1000 \
		--groups="$KVM_GID" --inh-caps=-all ./kvm-perfmon-stat --vm vm-a \
		--clear-filter
	show filter-still ./kvm-perfmon-stat --vm vm-a --show-filter
	show filter-clear ./kvm-perfmon-stat --vm vm-a --clear-filter
	show filter-cleared ./kvm-perfmon-stat --vm vm-a --show-filter

	# not an operator: a uid outside group kvm cannot open the node; one
	# in it (as QEMU's user is) can, but has no CAP_PERFMON
	show nonroot ./setpriv --reuid=1000 --regid=1000 --clear-groups \
		--inh-caps=-all ./kvm-perfmon-stat
	[ "$rc" = 3 ]
	rig_check $? "kvm-perfmon-stat as uid 1000: exit 3 (permission denied)" "exit $rc"
	show nonroot-kvm ./setpriv --reuid=1000 --regid=1000 \
		--groups="$KVM_GID" --inh-caps=-all ./kvm-perfmon-stat
	[ "$rc" = 3 ]
	rig_check $? "kvm-perfmon-stat as uid 1000 in group kvm: exit 3 (no CAP_PERFMON)" "exit $rc"
	show exporter-nonroot ./setpriv --reuid=1000 --regid=1000 \
		--groups="$KVM_GID" --inh-caps=-all ./kvm-perfmon-exporter --once
	[ "$rc" = 3 ]
	rig_check $? "kvm-perfmon-exporter as uid 1000 in group kvm: exit 3" "exit $rc"

	show metrics-l1 ./kvm-perfmon-exporter --once
	rig_check "$rc" "exporter --once: exit 0"

	# by default loopback alone; L0 reaches L1's network address: it is
	# named, with TLS and basic authentication (web.yml from L0)
	./kvm-perfmon-exporter --web.listen-address="$L1_ADDR:$PORT" \
		--web.config.file=/payload/web.yml 2>/tmp/exporter.log &
	exporter=$!
	n=0
	while ! grep -q "listening on" /tmp/exporter.log && [ "$n" -lt 30 ] &&
		kill -0 "$exporter" 2>/dev/null; do
		sleep 1
		n=$((n + 1))
	done
	grep -q "listening on $L1_ADDR:$PORT (https, basic authentication)" \
		/tmp/exporter.log
	rig_check $? "exporter: listens on $L1_ADDR:$PORT with TLS and basic auth" \
		"$(cat /tmp/exporter.log)"
	echo "operator-l1: exporter up on $L1_ADDR:$PORT"

	if l0_says go; then
		echo "operator-l1: go"
		tell_guests go
		ok=0
		for vm in $VMS; do
			guest_line "$vm" "^operator: phase 2: samples=" || ok=1
		done
		rig_check "$ok" "both guests ran phase 2"
		l0_says stop
		rig_check $? "L0 is done with the exporter"
	else
		rig_check 1 "L0 scraped the exporter and said go"
	fi
	echo "operator-l1: stop"
	kill "$exporter"
	wait "$exporter"
	rig_check $? "exporter: exit 0 on SIGTERM"
	echo "exporter's log:"
	sed 's/^/  /' /tmp/exporter.log
fi

# the guests end on "stop" (or are killed by their limit); then run-l2's
# verdict on each
tell_guests stop
for vm in $VMS; do
	wait "$(cat "/tmp/$vm/run-l2.pid")"
	rc=$?
	sed "s/^/$vm| /" "/tmp/$vm/run-l2.out"
	rig_check "$rc" "$vm: run-l2 (the guest's checks, its kernel log)" "exit $rc"
done

rig_summary operator-l1
[ "${rig_failed:-0}" = 0 ]
