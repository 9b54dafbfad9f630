#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Runs in the rig's L1 (busybox sh) around the bench's L2: what the host
# spent for the guest, and where. pv-guest.sh --l1-around calls it:
#
#   l1-cost.sh start   before L2 starts: snapshot, and a sampler of the
#                      vCPU threads' CPU time in the background
#   l1-cost.sh end     after L2 is gone: print BENCH-HOST lines
#
# Printed (all over the whole L2 run, boot included):
#   BENCH-HOST overflows N           counter wraps the module delivered
#   BENCH-HOST deferred_runs N       task works the vCPU threads ran
#   BENCH-HOST remote_counter_ops N  counter operations from outside the
#                                    counter's vCPU thread (each a
#                                    possible cross-CPU call)
#   BENCH-HOST kworker_ms N          CPU time of kworker threads (where a
#                                    work item per sample would show)
#   BENCH-HOST busy_ms N             all CPUs' busy time (/proc/stat)
#   BENCH-HOST vcpu_ms N             the vCPU threads' CPU time
#   BENCH-HOST outside_vcpu_ms N     busy_ms - vcpu_ms: QEMU's other
#                                    threads, kworkers, interrupts...
#   BENCH-HOST operator_scrapes N    kvm-perfmon-exporter --once runs,
#   BENCH-HOST operator_scrape_failures N   one a second meanwhile (when
#                                    the exporter is in /payload)
# kvmpfm-stats (tests/host) must be in /payload; the module's released-VM
# totals are read after QEMU exited.
set -u
state=/tmp/l1-cost
tck=100		# USER_HZ: /proc's clock ticks on x86, whatever HZ is

# CPU ms (utime + stime, fields 14 and 15) of the threads whose comm
# matches the ERE $1; the comm may hold spaces, so split after its ')'
threads_ms() {
	for f in /proc/[0-9]*/task/[0-9]*/stat; do
		cat "$f" 2>/dev/null
	done | awk -v re="$1" -v tck="$tck" '{
		l = index($0, "("); r = 0
		for (i = length($0); i > 0; i--) if (substr($0, i, 1) == ")") { r = i; break }
		comm = substr($0, l + 1, r - l - 1)
		if (comm !~ re) next
		n = split(substr($0, r + 2), f, " ")
		t += f[12] + f[13]
	} END { printf "%d\n", t * 1000 / tck }'
}

busy_ms() {
	awk -v tck="$tck" '$1 == "cpu" {
		printf "%d\n", ($2 + $3 + $4 + $7 + $8) * 1000 / tck }' /proc/stat
}

case "${1:-}" in
start)
	mkdir -p "$state"
	threads_ms '^kworker' >"$state/kworker0"
	busy_ms >"$state/busy0"
	# the vCPU threads end with QEMU: keep their last reading
	(while :; do
		v=$(threads_ms '^CPU [0-9]+/KVM$')
		[ "$v" -gt 0 ] && echo "$v" >"$state/vcpu"
		sleep 1
	done) &
	echo $! >"$state/sampler"
	# the operator's view, as Prometheus would take it: one scrape (a
	# snapshot of every VM) a second for the whole run, which the guest's
	# figures must not notice
	if [ -x /payload/kvm-perfmon-exporter ]; then
		(ok=0; bad=0; while :; do
			if /payload/kvm-perfmon-exporter --once >/dev/null 2>&1; then
				ok=$((ok + 1))
			else
				bad=$((bad + 1))
			fi
			echo "$ok $bad" >"$state/scrapes"
			sleep 1
		done) &
		echo $! >"$state/scraper"
	fi
	;;
end)
	kill "$(cat "$state/sampler")" 2>/dev/null
	[ -f "$state/scraper" ] && kill "$(cat "$state/scraper")" 2>/dev/null
	k0=$(cat "$state/kworker0")
	b0=$(cat "$state/busy0")
	k1=$(threads_ms '^kworker')
	b1=$(busy_ms)
	v=$(cat "$state/vcpu" 2>/dev/null || echo 0)
	stats=$(/payload/kvmpfm-stats) || { echo "BENCH-HOST-FAIL kvmpfm-stats"; exit 1; }
	for k in overflows deferred_runs remote_counter_ops; do
		echo "BENCH-HOST $k $(echo "$stats" | tr ' ' '\n' | sed -n "s/^$k=//p")"
	done
	echo "BENCH-HOST kworker_ms $((k1 - k0))"
	echo "BENCH-HOST busy_ms $((b1 - b0))"
	echo "BENCH-HOST vcpu_ms $v"
	echo "BENCH-HOST outside_vcpu_ms $((b1 - b0 - v))"
	if [ -f "$state/scrapes" ]; then
		read -r ok bad <"$state/scrapes"
		echo "BENCH-HOST operator_scrapes $ok"
		echo "BENCH-HOST operator_scrape_failures $bad"
	fi
	;;
*)
	echo "usage: l1-cost.sh start|end" >&2
	exit 2
	;;
esac
