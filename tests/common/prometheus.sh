# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# A real Prometheus server on this machine's loopback that scrapes the
# exporter, for the tests that judge the exporter by what Prometheus makes
# of it (host-tools/tests/e2e.sh, tests/operator/rig-operator.sh).
# Sourced. The caller sets PROM_PORT (the server's port on 127.0.0.1) and
# PROM_WAIT_S (how long the waits below wait, in seconds); the queries
# ask the server on PROM_PORT.

# prom_run WORK LOG PORT: Prometheus in the background on 127.0.0.1:PORT,
# with WORK's prometheus.yml and its database in WORK, its log in LOG
prom_run() {
	prometheus --config.file="$1/prometheus.yml" \
		--storage.tsdb.path="$1/tsdb" \
		--web.listen-address="127.0.0.1:$3" \
		--log.level=warn >"$2" 2>&1 &
}

# prom_start WORK LOG TARGET CA USER PASSWORD [RULES]: Prometheus scraping
# the exporter at TARGET (host:port) every second over TLS, trusting the
# certificate file CA, with basic auth USER:PASSWORD, and evaluating the
# rules file RULES every second if given; its configuration and database
# in WORK, its log in LOG. Sets prom_pid.
prom_start() {
	local work=$1 log=$2 target=$3 ca=$4 user=$5 password=$6 rules=${7:-}

	# shellcheck disable=SC2016 # YAML's quotes: the heredoc expands $rules
	cat >"$work/prometheus.yml" <<EOF2
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
${rules:+rule_files: ['$rules']}
scrape_configs:
  - job_name: kvm-perfmon
    scheme: https
    tls_config:
      ca_file: $ca
    basic_auth:
      username: $user
      password: $password
    static_configs:
      - targets: ['$target']
EOF2
	prom_run "$work" "$log" "$PROM_PORT"
	# shellcheck disable=SC2034 # the caller's
	prom_pid=$!
}

# prom_start_federating WORK LOG PORT SOURCE: a second Prometheus on
# 127.0.0.1:PORT collecting every series of job kvm-perfmon from the
# server at SOURCE (host:port) through its /federate every second, labels
# as they are, as a fleet's global Prometheus collects its hosts';
# configuration and database in WORK, its log in LOG. Sets prom_fed_pid.
prom_start_federating() {
	local work=$1 log=$2 port=$3 source=$4

	mkdir -p "$work"
	cat >"$work/prometheus.yml" <<EOF2
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: federate
    honor_labels: true
    metrics_path: /federate
    params:
      'match[]': ['{job="kvm-perfmon"}']
    static_configs:
      - targets: ['$source']
EOF2
	prom_run "$work" "$log" "$port"
	# shellcheck disable=SC2034 # the caller's
	prom_fed_pid=$!
}

# a PromQL instant query, at time $2 (default now): its first value.
# False, saying nothing, while Prometheus does not answer (it is still
# starting: the callers poll); an answer that is not a query result says
# why on stderr
promql() {
	local out
	out=$(curl -sfG "http://127.0.0.1:$PROM_PORT/api/v1/query" \
		--data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"}) ||
		return 1
	python3 -c 'import json, sys
try:
    r = json.loads(sys.argv[1])["data"]["result"]
except (ValueError, KeyError, TypeError) as e:
    sys.exit("promql: Prometheus answered %r: %s" % (sys.argv[1][:200], e))
print(r[0]["value"][1] if r else "")' "$out"
}

# wait until Prometheus answers queries
prom_ready() {
	local n=0
	while [ "$n" -lt "$PROM_WAIT_S" ]; do
		curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null && return 0
		sleep 1
		n=$((n + 1))
	done
	return 1
}

# wait until PromQL $1 gives $2 (a value)
prom_sees() {
	local n=0
	[ -n "$2" ] || return 1
	while [ "$n" -lt "$PROM_WAIT_S" ]; do
		[ "$(promql "$1" || true)" = "$2" ] && return 0
		sleep 1
		n=$((n + 1))
	done
	return 1
}
