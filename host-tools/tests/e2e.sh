#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The exporter end to end on this machine, without the module: built with
# fake_host_view.c (two VMs, one named "evil\xff\"vm\\\n"), in a network
# namespace of its own (unshare -rn: a loopback with 127.0.0.1 and
# 10.99.0.1, which stands for the host's network address; no port of the
# machine's is taken). Checks:
#   - by default it listens on 127.0.0.1:17995 and nowhere else;
#   - the scrape passes promtool check metrics, the bad name as U+FFFD;
#   - a malformed --web.config.file ends it at start with file:line, exit 1;
#   - with TLS and basic_auth_users: 401 and WWW-Authenticate without or
#     with wrong credentials, 200 with the right ones over curl --cacert,
#     nothing over plain HTTP;
#   - requests within a second share one read (kvmperfmon_snapshots_total);
#   - 20 silent connections from 127.0.0.2 hold 4 (the per-address limit)
#     while a real Prometheus on 127.0.0.1, scraping over TLS with basic
#     auth, still gets up == 1.
#
#   e2e.sh EXPORTER MKBCRYPT      (host-tools: make check)
#
# Needs curl, openssl, promtool, prometheus, python3, ss, ip, unshare.
# Prints PASS/FAIL lines and "e2e: N passed, N failed" last.
set -uo pipefail

if [ -z "${E2E_IN_NETNS:-}" ]; then
	[ $# = 2 ] || { echo "usage: e2e.sh EXPORTER MKBCRYPT" >&2; exit 2; }
	exec unshare -rn env E2E_IN_NETNS=1 "$0" "$(readlink -f "$1")" \
		"$(readlink -f "$2")"
fi
exporter=$1
mkbcrypt=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PORT=17995		# the exporter's default
PROM_PORT=17997
PROM_WAIT_S=60
OTHER_ADDR=10.99.0.1	# not loopback's 127.0.0.0/8
PER_IP_LIMIT=4		# kvm-perfmon-exporter.c's PER_IP_CONNECTION_LIMIT
SLOW_CLIENTS=20		# more than the old global limit of 16

if ! ip link set lo up || ! ip addr add "$OTHER_ADDR/32" dev lo; then
	echo "e2e: cannot set up the namespace's loopback" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/exporter-e2e.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT

# rig_check: the PASS/FAIL lines and their counts
# shellcheck source=tests/rig/protocol.sh
. "$here/../../tests/rig/protocol.sh"
# prom_start, promql, prom_sees
# shellcheck source=tests/common/prometheus.sh
. "$here/../../tests/common/prometheus.sh"

# start the exporter with "$@", its log in $work/$name.log; its pid in
# $exp. False if it did not say it listens within 10 s.
start_exporter() {
	local name=$1 n=0
	shift
	"$exporter" "$@" 2>"$work/$name.log" &
	exp=$!
	pids+=("$exp")
	while ! grep -q "listening on" "$work/$name.log"; do
		kill -0 "$exp" 2>/dev/null || return 1
		[ "$n" -lt 100 ] || return 1
		sleep 0.1
		n=$((n + 1))
	done
}

stop_exporter() {
	kill "$exp" && wait "$exp"
}

# the HTTP status of a request: curl's %{http_code} (000: no answer)
status() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@"
}

# expect_status CODE NAME CURL_ARG...: a check that the request answers CODE
expect_status() {
	local want=$1 name=$2 code
	shift 2
	code=$(status "$@")
	[ "$code" = "$want" ]
	rig_check $? "$name" "$code"
}

# ---- the default: loopback only ----------------------------------------
r=0
start_exporter default || r=1
rig_check "$r" "exporter starts without options" "$(cat "$work/default.log")"
out=$(ss -ltnH "sport = :$PORT" | awk '{ print $4 }')
[ "$out" = "127.0.0.1:$PORT" ]
rig_check $? "by default it listens on 127.0.0.1:$PORT alone" "ss: $out"
expect_status 200 "by default: 200 on 127.0.0.1" "http://127.0.0.1:$PORT/metrics"
expect_status 000 "by default: nothing on $OTHER_ADDR (another address of the host)" "http://$OTHER_ADDR:$PORT/metrics"
curl -s "http://127.0.0.1:$PORT/metrics" >"$work/metrics.txt"
out=$(promtool check metrics <"$work/metrics.txt" 2>&1)
rig_check $? "promtool check metrics on a scrape with a VM named 'evil\\xff\"vm\\\\\\n'" "$out"
grep -q 'vm="evil'$'\xef\xbf\xbd''\\"vm\\\\\\n"' "$work/metrics.txt"
rig_check $? "the bad name as evil<U+FFFD>\\\"vm\\\\\\n" \
	"$(grep -a -m1 evil "$work/metrics.txt")"
grep -q '^kvmperfmon_vm_info{vm="vm-a (id 1)",uuid="6c0d2a8e-[^"]*a",pid="1000",personality="amd64"} 1$' "$work/metrics.txt" &&
	grep -q '^kvmperfmon_vm_vcpus{vm="vm-a (id 3)"} 2$' "$work/metrics.txt" &&
	! grep -a 'uuid=' "$work/metrics.txt" | grep -qv '^kvmperfmon_vm_info{'
rig_check $? "one identity label, vm (two VMs of one name told apart by id); uuid in vm_info only" \
	"$(grep -a '^kvmperfmon_vm_\(info\|vcpus\)' "$work/metrics.txt")"
grep -q '^kvmperfmon_event_enabled_seconds_total{vm="vm-a (id 1)",event="vcpu_run_ns"} 3.000000000$' "$work/metrics.txt" &&
	grep -q '^kvmperfmon_event_running_seconds_total{vm="vm-a (id 1)",event="CPU_CLK_UNHALTED"} 1.000000000$' "$work/metrics.txt" &&
	[ "$(grep -c '^kvmperfmon_event_' "$work/metrics.txt")" = 4 ] &&
	! grep -q '^kvmperfmon_vcpu_doorbells_total' "$work/metrics.txt"
rig_check $? "event times per VM by libpfm4's names, summed over the vCPUs; nothing per vCPU" \
	"$(grep '^kvmperfmon_\(event\|vcpu\)_' "$work/metrics.txt")"
grep -q '^kvmperfmon_build_info{version="[0-9][^"]*",api_version="[0-9][0-9]*"} 1$' "$work/metrics.txt" &&
	grep -q '^kvmperfmon_refused_total{vm="vm-a (id 1)",cause="MEDIATED"} 0$' "$work/metrics.txt" &&
	! grep -q '^kvmperfmon_refused_total{.*cause="EINVAL"' "$work/metrics.txt" &&
	! grep -q '^kvmperfmon_calls_total{' "$work/metrics.txt"
rig_check $? "build_info; the operator's refusal causes always, errnos and calls once not zero" \
	"$(grep '^kvmperfmon_\(build_info\|refused\|calls\)' "$work/metrics.txt")"
grep -q '^kvmperfmon_doorbells_total{vm="vm-a (id 1)"} 10$' "$work/metrics.txt" &&
	grep -q '^kvmperfmon_doorbell_seconds_total{vm="vm-a (id 1)"} 0.001500000$' "$work/metrics.txt"
rig_check $? "doorbells and the module's time in them, per VM, in seconds" \
	"$(grep '^kvmperfmon_doorbell' "$work/metrics.txt")"
stop_exporter
rig_check $? "exit 0 on SIGTERM"
# ---- gzip, the telemetry path, --version ---------------------------------
r=0
start_exporter path --web.telemetry-path=/probe/kvm-perfmon || r=1
rig_check "$r" "exporter starts with --web.telemetry-path=/probe/kvm-perfmon" "$(cat "$work/path.log")"
url=http://127.0.0.1:$PORT/probe/kvm-perfmon
expect_status 200 "--web.telemetry-path: 200 there" "$url"
expect_status 404 "--web.telemetry-path: 404 at /metrics" "http://127.0.0.1:$PORT/metrics"
curl -s "http://127.0.0.1:$PORT/" | grep -q 'href="/probe/kvm-perfmon"'
rig_check $? "--web.telemetry-path: the index page links it"
curl -s -D "$work/gz.hdr" -H 'Accept-Encoding: gzip' -o "$work/metrics.gz" "$url"
gz_ok=$?
grep -qi '^Content-Encoding: gzip' "$work/gz.hdr" && [ "$gz_ok" = 0 ] &&
	gzip -dc "$work/metrics.gz" >"$work/metrics-gz.txt" &&
	promtool check metrics <"$work/metrics-gz.txt" >/dev/null 2>&1 &&
	grep -q '^kvmperfmon_up 1$' "$work/metrics-gz.txt"
rig_check $? "Accept-Encoding: gzip: a gzip'ed scrape ($(stat -c %s "$work/metrics.gz") bytes) that promtool reads" \
	"$(cat "$work/gz.hdr")"
for ae in "" "gzip;q=0" "identity" "deflate, gzip;q=0.000"; do
	curl -s -D "$work/plain.hdr" ${ae:+-H "Accept-Encoding: $ae"} -o "$work/plain.txt" "$url"
	! grep -qi '^Content-Encoding' "$work/plain.hdr" &&
		grep -q '^kvmperfmon_up 1$' "$work/plain.txt"
	rig_check $? "Accept-Encoding: '${ae:-(none)}': the text as it is" "$(cat "$work/plain.hdr")"
done
stop_exporter
rig_check $? "exit 0 on SIGTERM"
out=$("$exporter" --web.telemetry-path=metrics --once 2>&1 >/dev/null)
[ $? = 1 ] && grep -q "^kvm-perfmon-exporter: --web.telemetry-path 'metrics': want /" <<<"$out"
rig_check $? "--web.telemetry-path without its leading /: exit 1, said why" "$out"
out=$("$exporter" --version)
[[ $out =~ ^kvm-perfmon-exporter\ [0-9][^\ ]*$ ]]
rig_check $? "--version: kvm-perfmon-exporter VERSION" "$out"

"$exporter" --collector.vcpu --once >"$work/vcpu.txt" 2>&1 &&
	promtool check metrics <"$work/vcpu.txt" >/dev/null 2>&1 &&
	grep -q '^kvmperfmon_event_enabled_seconds_total{vm="vm-a (id 1)",vcpu="1",event="vcpu_run_ns"} 2.000000000$' "$work/vcpu.txt" &&
	[ "$(grep -c '^kvmperfmon_event_' "$work/vcpu.txt")" = 8 ] &&
	grep -q '^kvmperfmon_vcpu_doorbells_total{vm="vm-a (id 3)",vcpu="1"} 15$' "$work/vcpu.txt"
rig_check $? "--collector.vcpu: event times and calls by vCPU as well" \
	"$(grep '^kvmperfmon_\(event\|vcpu\)_' "$work/vcpu.txt")"

# ---- malformed web configs: refused at start ---------------------------
hash=$("$mkbcrypt" s3cret 4)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$work/server.key" -out "$work/server.crt" -days 1 \
	-subj /CN=localhost \
	-addext "subjectAltName=IP:127.0.0.1,IP:$OTHER_ADDR,DNS:localhost" \
	2>"$work/openssl.log" ||
	{ echo "e2e: openssl: $(cat "$work/openssl.log")" >&2; exit 2; }
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n' \
	>"$work/web-client-ca.yml"
printf 'basic_auth_users:\n  prometheus: s3cret\n' >"$work/web-plain-password.yml"
printf 'tls_server_config:\n  cert_file: server.crt\n' >"$work/web-no-key.yml"
printf 'basic_auth_users: [prometheus]\n' >"$work/web-list.yml"
for bad in client-ca:4 plain-password:2 no-key:1 list:1; do
	f=$work/web-${bad%:*}.yml
	r=0
	"$exporter" --web.config.file="$f" --once >/dev/null 2>"$work/bad.log" || r=$?
	[ "$r" = 1 ] && grep -q "^kvm-perfmon-exporter: --web.config.file: $f:${bad#*:}: " "$work/bad.log"
	rig_check $? "web config $(basename "$f") refused at start: exit 1, $(basename "$f"):${bad#*:}" \
		"exit $r: $(cat "$work/bad.log")"
done
r=0
"$exporter" --web.config.file="$work/nosuch.yml" --once >/dev/null 2>"$work/bad.log" || r=$?
[ "$r" = 1 ]
rig_check $? "a missing web config: exit 1" "exit $r: $(cat "$work/bad.log")"

# ---- TLS and basic auth, every address ---------------------------------
cat >"$work/web.yml" <<EOF2
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  prometheus: $hash
EOF2
r=0
start_exporter tls --web.listen-address=":$PORT" \
	--web.config.file="$work/web.yml" || r=1
rig_check "$r" "exporter starts with TLS and basic auth on :$PORT" "$(cat "$work/tls.log")"
url=https://127.0.0.1:$PORT/metrics
tls=(--cacert "$work/server.crt")
hdrs=$(curl -s -D - -o /dev/null --max-time 10 "${tls[@]}" "$url")
code=$(head -1 <<<"$hdrs" | awk '{ print $2 }')
[ "$code" = 401 ] && grep -qi '^WWW-Authenticate: Basic realm="kvm-perfmon-exporter"' <<<"$hdrs"
rig_check $? "TLS, no credentials: 401 with WWW-Authenticate: Basic" "$hdrs"
expect_status 401 "TLS, wrong password: 401" "${tls[@]}" -u prometheus:wrong "$url"
expect_status 401 "TLS, unknown user: 401" "${tls[@]}" -u nobody:s3cret "$url"
expect_status 200 "TLS, right password: 200" "${tls[@]}" -u prometheus:s3cret "$url"
expect_status 200 "TLS on :$PORT (every address, as asked): 200 on $OTHER_ADDR" "${tls[@]}" -u prometheus:s3cret "https://$OTHER_ADDR:$PORT/metrics"
code=$(status -u prometheus:s3cret "http://127.0.0.1:$PORT/metrics")
[ "$code" != 200 ]
rig_check $? "plain HTTP to the TLS port: no answer" "$code"
curl -s "${tls[@]}" -u prometheus:s3cret "$url" >"$work/metrics-tls.txt"
out=$(promtool check metrics <"$work/metrics-tls.txt" 2>&1) &&
	grep -q '^kvmperfmon_up 1$' "$work/metrics-tls.txt"
rig_check $? "promtool check metrics on the TLS scrape, kvmperfmon_up 1" "$out"

# ---- one read of the module per second ---------------------------------
snapshots() {
	curl -s "${tls[@]}" -u prometheus:s3cret "$url" |
		sed -n 's/^kvmperfmon_snapshots_total //p'
}
sleep 1.1
start=$(date +%s%N)
seen=$(for _ in 1 2 3 4 5 6 7 8 9 10; do snapshots; done | sort -u)
ms=$((($(date +%s%N) - start) / 1000000))
n=$(wc -l <<<"$seen")
# the first of them reads (the last read is over a second old), the next
# read comes a second after it at the earliest
! grep -qv '^[0-9][0-9]*$' <<<"$seen" && [ "$n" -le $((ms / 1000 + 1)) ]
rig_check $? "10 requests in $ms ms share one read per second: snapshots_total $(tr '\n' ' ' <<<"$seen")"
last=$(tail -1 <<<"$seen")
sleep 1.1
next=$(snapshots)
[ "${next:-0}" -gt "${last:-0}" ]
rig_check $? "a request a second later reads again: snapshots_total $last -> $next"

# ---- slow clients from one address, Prometheus from another ------------
python3 "$here/slow_clients.py" 127.0.0.2 127.0.0.1 "$PORT" "$SLOW_CLIENTS" \
	"$work/alive" &
pids+=("$!")
n=0
while [ ! -s "$work/alive" ] && [ "$n" -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
alive=$(cat "$work/alive" 2>/dev/null)
[ "$alive" = "$PER_IP_LIMIT" ]
rig_check $? "$SLOW_CLIENTS silent connections from 127.0.0.2: $PER_IP_LIMIT kept, the rest closed" "kept ${alive:-?}"
expect_status 200 "while they hold: curl from 127.0.0.1 gets 200" "${tls[@]}" -u prometheus:s3cret "$url"
prom_start "$work" "$work/prometheus.log" "127.0.0.1:$PORT" \
	"$work/server.crt" prometheus s3cret
pids+=("$prom_pid")
prom_sees 'up{job="kvm-perfmon"} + on() kvmperfmon_vms' 4
rig_check $? "Prometheus scrapes over TLS with basic auth while they hold: up 1, kvmperfmon_vms 3" \
	"up + vms = $(promql 'up{job="kvm-perfmon"} + on() kvmperfmon_vms' || echo nothing); $(tail -3 "$work/prometheus.log")"
stop_exporter
rig_check $? "exit 0 on SIGTERM with connections held"

rig_summary e2e
[ "${rig_failed:-0}" = 0 ]
