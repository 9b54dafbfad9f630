#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The operator's view, for real: in the rig's L1, two VMs at
# once (vm-a; vm-b with an event filter) run guest/tests/operator, which
# counts, samples and has calls refused on purpose and prints what it did;
# tests/operator/l1-run.sh runs kvm-perfmon-stat (table, --json, --vm, as
# non-root) and the exporter there. Here in L0:
#   - the exporter through QEMU's user network (127.0.0.1:17995, hostfwd)
#     over TLS with basic authentication (a self-signed certificate and a
#     bcrypt hash made here, L1's web.yml): 401 without credentials, its
#     scrape with them checked by `promtool check metrics`;
#   - a real Prometheus on L0's loopback scraping it every second, over
#     TLS with basic auth, while the guests sample again, and its HTTP
#     API's increase() of vm-a's samples checked against what vm-a's
#     guest reported;
#   - a second Prometheus federating the first, as a fleet's global one;
#   - dashboard.py: every query of the shipped Grafana dashboard, as
#     Grafana fills its variables, evaluated by that Prometheus, and its
#     panels drawn from what it answers (build/logs/operator/dashboard.svg);
#   - check.py: the stat tool's table and JSON, and the scrape, against
#     the guests' lines (exact counts, exact refusal causes).
#
#   tests/operator/rig-operator.sh [LOGDIR]     (default build/logs/operator)
#
# Environment: QEMU_PV (scripts/qemu-build.sh --print-path), and
# pv-guest.sh's KVM_PERFMON_KO, PERFMON2_KO. Needs prometheus, promtool,
# curl, openssl, python3 (scripts/deps.sh). Prints PASS/FAIL lines and
# "operator: N passed, N failed" last; exit status 0 only if all passed
# and the rig's run was clean.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$top/tests/operator
logdir=${1:-$top/build/logs/operator}
: "${QEMU_PV:?rig-operator.sh: set QEMU_PV (scripts/qemu-build.sh --print-path)}"

PORT=17995		# the exporter's, forwarded from L0's loopback
CONTROL_PORT=17996	# L0's word to L1 (l1-run.sh)
PROM_PORT=17997		# the Prometheus server's, on L0's loopback
FED_PORT=17998		# a second one's, federating the first
BOOT_WAIT_S=3600	# for the rig lock: other rigs may run first
STEP_WAIT_S=300		# for one step of L1
PROM_WAIT_S=60		# for Prometheus to see a value

for tool in prometheus promtool curl openssl python3; do
	command -v "$tool" >/dev/null ||
		{ echo "rig-operator.sh: $tool missing (scripts/deps.sh)" >&2; exit 2; }
done
make -s -C "$top/host-tools"
make -s -C "$top/host-tools/tests" "$top/build/host-tools/tests/mkbcrypt"
make -s -C "$top/guest/kernel"
make -s -C "$top/guest/tests"

# rig_check: PASS/FAIL lines, counted
# shellcheck source=tests/rig/protocol.sh
. "$top/tests/rig/protocol.sh"
# prom_start, promql, prom_ready, prom_sees
# shellcheck source=tests/common/prometheus.sh
. "$top/tests/common/prometheus.sh"

rm -rf "$logdir"
mkdir -p "$logdir"
work=$(mktemp -d "${TMPDIR:-/tmp}/rig-operator.XXXXXX")
rig=
prom=
fed=
cleanup() {
	# L1 waits for our word: never leave it waiting out its time limit
	[ -z "$rig" ] || ! kill -0 "$rig" 2>/dev/null || say stop 10 || true
	[ -z "$prom" ] || { kill "$prom" 2>/dev/null; wait "$prom" 2>/dev/null; } || true
	[ -z "$fed" ] || { kill "$fed" 2>/dev/null; wait "$fed" 2>/dev/null; } || true
	rm -rf "$work"
}
trap cleanup EXIT

# the exporter's TLS and basic auth in L1: web.yml names its files
# relative to itself (/payload). Cost 4, bcrypt's least: L1 runs on TCG.
EXPORTER_USER=prometheus
PASSWORD=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$work/server.key" -out "$work/server.crt" -days 1 \
	-subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1" \
	2>"$logdir/openssl.log"
cat >"$work/web.yml" <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  $EXPORTER_USER: $("$top/build/host-tools/tests/mkbcrypt" "$PASSWORD" 4)
EOF
tls=(--cacert "$work/server.crt")

console=$logdir/console.log
# wait up to $2 s for a console line matching ERE $1, print it; false if
# the rig ended or the time ran out
wait_line() {
	local n=0 line
	while [ "$n" -lt "$2" ]; do
		line=$(grep -a -m 1 -E "$1" "$console" 2>/dev/null || true)
		if [ -n "$line" ]; then
			printf '%s\n' "$line"
			return 0
		fi
		kill -0 "$rig" 2>/dev/null || return 1
		sleep 1
		n=$((n + 1))
	done
	return 1
}

# tell L1 $1 on CONTROL_PORT until it says it heard it (within $2 s):
# QEMU's user network takes the connection even before L1 listens
say() {
	local n=0
	while [ "$n" -lt "$2" ]; do
		if grep -aq "^operator-l1: L0 says '$1'" "$console" 2>/dev/null; then
			return 0
		fi
		{ exec 3<>"/dev/tcp/127.0.0.1/$CONTROL_PORT" &&
			echo "$1" >&3 && exec 3>&-; } 2>/dev/null || true
		sleep 2
		n=$((n + 2))
	done
	return 1
}

# wait until Prometheus holds $2 more scrapes of series $1 than it did
more_scrapes() {
	local n=0 have want
	have=$(promql "count_over_time(${1}[10m])" || true)
	want=$((${have:-0} + $2))
	while [ "$n" -lt "$PROM_WAIT_S" ]; do
		have=$(promql "count_over_time(${1}[10m])" || true)
		[ "${have:-0}" -ge "$want" ] && return 0
		sleep 1
		n=$((n + 1))
	done
	return 1
}

# samples=N of a guest line
samples_of() {
	sed -n 's/.*samples=\([0-9]*\).*/\1/p' <<<"$1"
}

echo "rig-operator.sh: L1 with vm-a and vm-b; logs in $logdir"
"$top/tests/rig/pv-guest.sh" --timeout 900 \
	--l1-run "$here/l1-run.sh" \
	--l1-file "$top/build/host-tools/kvm-perfmon-stat" \
	--l1-file "$top/build/host-tools/kvm-perfmon-exporter" \
	--l1-file "$(command -v setpriv)" \
	--l1-file "$work/web.yml" --l1-file "$work/server.crt" \
	--l1-file "$work/server.key" \
	--hostfwd "$PORT" --hostfwd "$CONTROL_PORT" \
	--summary '^(PASS|FAIL): |^operator-l1: |^run-l2: ' \
	"$logdir" "$top/build/guest/tests/operator" -- ./operator /dev/ttyS1 &
rig=$!

# the rig lock first, then L1's boot, the guests and the stat tool
if ! wait_line '^operator-l1: exporter up' "$BOOT_WAIT_S" >/dev/null; then
	rig_check 1 "L1: the guests ran and the exporter is up" "see $console"
else
	phase1=$(wait_line '^operator-l1: vm-a: operator: phase 1: samples=' 1 || true)
	want1=$(samples_of "$phase1")
	url=https://127.0.0.1:$PORT/metrics
	code=$(curl -s -o /dev/null -w '%{http_code}' "${tls[@]}" "$url" || true)
	[ "$code" = 401 ]
	rig_check $? "L0 without credentials: 401 over TLS through 127.0.0.1:$PORT" "HTTP $code"
	# A context's counters are open only while it is in: the guests'
	# counting threads are switched out and in a few times a second, so
	# one scrape may find a guest's out. Scrape again (after the
	# exporter's one-second shared read) until both are in, and say how
	# often it took.
	tries=0
	while :; do
		tries=$((tries + 1))
		r=0
		curl -sf "${tls[@]}" -u "$EXPORTER_USER:$PASSWORD" "$url" \
			>"$logdir/metrics.txt" || r=$?
		[ "$r" = 0 ] || break
		[ "$(grep -c '^kvmperfmon_event_enabled_seconds_total{.*event="vcpu_run_ns"}' \
			"$logdir/metrics.txt")" -ge 2 ] && break
		[ "$tries" -lt 10 ] || break
		sleep 1.2
	done
	echo "L0: scraped $tries time(s) until both guests' counting contexts were in"
	rig_check "$r" "L0 scrapes the exporter in L1 over TLS with basic auth through 127.0.0.1:$PORT" "curl exit $r"
	r=0
	out=$(promtool check metrics <"$logdir/metrics.txt" 2>&1) || r=$?
	rig_check "$r" "promtool check metrics on the scrape" "$out"

	# the shipped alerting rules, loaded as an operator would
	cp "$top/host-tools/kvm-perfmon.rules.yml" "$work/rules.yml"
	r=0
	out=$(promtool check rules "$work/rules.yml" 2>&1) || r=$?
	# promtool passes an empty file: the file must still hold the rules
	case $out in *"SUCCESS: 0 rules"*) r=1 ;; esac
	rig_check "$r" "promtool check rules on host-tools/kvm-perfmon.rules.yml" "$out"
	prom_start "$work" "$logdir/prometheus.log" "127.0.0.1:$PORT" \
		"$work/server.crt" "$EXPORTER_USER" "$PASSWORD" "$work/rules.yml"
	prom=$prom_pid
	r=0
	prom_ready || r=$?
	rig_check "$r" "Prometheus is ready on 127.0.0.1:$PROM_PORT" \
		"not in $PROM_WAIT_S s; see $logdir/prometheus.log"
	prom_t0=$(date +%s)
	vm_a='kvmperfmon_samples_total{vm="vm-a"}'
	r=0
	prom_sees "$vm_a" "$want1" || r=$?
	rig_check "$r" "Prometheus scrapes vm-a's phase 1: $vm_a = $want1" \
		"$(promql "$vm_a" || true)"
	# ten scrapes on either side of phase 2: increase() extrapolates to
	# the start of its window by half a scrape interval, 5% of ten
	more_scrapes "$vm_a" 10 || true
	if say go 60; then
		phase2=$(wait_line '^operator-l1: vm-a: operator: phase 2: samples=' "$STEP_WAIT_S" || true)
		want2=$(samples_of "$phase2")
		r=0
		prom_sees "$vm_a" "$want2" || r=$?
		rig_check "$r" "Prometheus scrapes vm-a's phase 2: $vm_a = $want2" \
			"$(promql "$vm_a" || true)"
		more_scrapes "$vm_a" 10 || true
		# at the last scrape: the sampling of phase 2, as the guest
		# counted it; Prometheus extrapolates to the window's start by
		# half a scrape interval (the first scrape is 20 s before)
		t=$(promql "timestamp($vm_a)" || true)
		q="increase(${vm_a}[10m])"
		inc=
		[ -z "$t" ] || inc=$(promql "$q" "$t" || true)
		echo "rig-operator.sh: Prometheus: $q at $t = $inc; rate(${vm_a}[10m]) = $(promql "rate(${vm_a}[10m])" "$t")"
		r=0
		python3 -c 'import sys
inc, d = float(sys.argv[1]), int(sys.argv[2])
sys.exit(not 0 < d <= inc <= d * 1.1)' "${inc:-nan}" "$((${want2:-0} - ${want1:-0}))" || r=$?
		rig_check "$r" "Prometheus: increase of vm-a's samples = phase 2's $((${want2:-0} - ${want1:-0})) (up to 10% extrapolation)" "got ${inc:-nothing}"
		r=0
		out=$(curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/rules" |
			python3 -c 'import json, sys
rs = [r for g in json.load(sys.stdin)["data"]["groups"] for r in g["rules"]]
print(" ".join("%s: %s %s" % (r["name"], r["health"], r.get("lastError", ""))
               for r in rs))
sys.exit(not rs or any(r["health"] != "ok" for r in rs))') || r=$?
		rig_check "$r" "Prometheus evaluates host-tools/kvm-perfmon.rules.yml on the scraped series" "$out"
		r=0
		out=$(python3 "$here/dashboard.py" "$top/host-tools/kvm-perfmon.dashboard.json" \
			"http://127.0.0.1:$PROM_PORT" "${t:-0}" vm-a vm-b 2>&1) || r=$?
		while read -r line; do echo "dashboard.py: $line"; done <<<"$out"
		rig_check "$r" "every query of host-tools/kvm-perfmon.dashboard.json gives both VMs' series in Prometheus" "$out"
		r=0
		out=$(python3 "$here/dashboard.py" --svg "$logdir/dashboard.svg" \
			"$top/host-tools/kvm-perfmon.dashboard.json" \
			"http://127.0.0.1:$PROM_PORT" "$prom_t0" "$(date +%s)" 2>&1) || r=$?
		rig_check "$r" "the dashboard's panels drawn from Prometheus: $logdir/dashboard.svg" "$out"
		# a fleet's global Prometheus federating this one
		prom_start_federating "$work/federate" "$logdir/prometheus-federate.log" \
			"$FED_PORT" "127.0.0.1:$PROM_PORT"
		fed=$prom_fed_pid
		q="kvmperfmon_samples_total{job=\"kvm-perfmon\",instance=\"127.0.0.1:$PORT\",vm=\"vm-a\"}"
		r=0
		PROM_PORT=$FED_PORT prom_ready || r=$?
		[ "$r" != 0 ] || PROM_PORT=$FED_PORT prom_sees "$q" "$want2" || r=$?
		rig_check "$r" "a second Prometheus federating the first: $q = $want2" \
			"$(PROM_PORT=$FED_PORT promql "$q" || true); see $logdir/prometheus-federate.log"
		r=0
		out=$(PROM_PORT=$FED_PORT promql \
			"count(kvmperfmon_vm_info{job=\"kvm-perfmon\",uuid=~\".+\"})" || true)
		[ "$out" = 2 ] || r=1
		rig_check "$r" "federated: both VMs' kvmperfmon_vm_info with their uuid" "count ${out:-none}"
		r=0
		say stop 60 || r=$?
		rig_check "$r" "L1 heard stop"
	else
		rig_check 1 "L1 heard go"
	fi
fi

rc=0
wait "$rig" || rc=$?
rig=
rig_check "$rc" "the rig's run (L1, both guests, their kernel logs)" "pv-guest.sh exit $rc"
if [ -f "$logdir/metrics.txt" ]; then
	r=0
	python3 "$here/check.py" "$console" "$logdir/metrics.txt" || r=$?
	rig_check "$r" "check.py: the stat tool and the scrape against the guests"
fi
rig_summary operator
[ "${rig_failed:-0}" = 0 ]
