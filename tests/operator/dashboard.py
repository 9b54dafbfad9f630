#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The shipped Grafana dashboard against a real Prometheus.

  dashboard.py DASHBOARD.json PROMETHEUS_URL TIME VM...

Every panel reads the dashboard's Prometheus data source variable; every
query, with the dashboard's variables as Grafana fills them when "All" is
chosen ($__rate_interval as one minute), is evaluated by Prometheus at
TIME and must give a series for each VM named (a per-VM panel) or at least
one (a host panel); the variables' label_values() queries must list the
VMs. Prints one line per query, exits 1 on the first kind of failure
found in any.
"""
import json
import re
import sys
import urllib.parse
import urllib.request

DATASOURCE = "${datasource}"
FILLED = {"$instance": ".+", "$vm": ".+", "$__rate_interval": "1m"}


def fill(expr):
    for var, value in FILLED.items():
        expr = expr.replace(var, value)
    return expr


def get(url, path, params):
    q = urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen("%s%s?%s" % (url, path, q), timeout=10) as r:
        return json.load(r)


def label_values(url, t, query):
    m = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", query)
    if not m:
        return None
    ans = get(url, "/api/v1/series",
              {"match[]": fill(m.group(1)), "start": t, "end": t})
    return sorted({s.get(m.group(2)) for s in ans["data"]} - {None})


def main():
    path, url, t, vms = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    dash = json.load(open(path))
    failed = 0
    for var in dash["templating"]["list"]:
        if var["type"] != "query":
            continue
        got = label_values(url, t, var["query"]["query"])
        want = vms if var["name"] == "vm" else None
        ok = got is not None and got and (want is None or set(want) <= set(got))
        failed += not ok
        print("%s: variable %s = %s" % ("ok" if ok else "FAIL", var["name"], got))
    for panel in dash["panels"]:
        if panel["datasource"]["uid"] != DATASOURCE:
            failed += 1
            print("FAIL: panel %r: data source %r, not the variable"
                  % (panel["title"], panel["datasource"]))
        for target in panel["targets"]:
            expr = fill(target["expr"])
            ans = get(url, "/api/v1/query", {"query": expr, "time": t})
            res = ans["data"]["result"] if ans["status"] == "success" else []
            per_vm = "{{vm}}" in target.get("legendFormat", "")
            seen = {r["metric"].get("vm") for r in res
                    if r["value"][1] not in ("NaN", "+Inf", "-Inf")}
            ok = bool(seen) and (not per_vm or set(vms) <= seen)
            failed += not ok
            print("%s: %s [%s]: %s" % (
                "ok" if ok else "FAIL", panel["title"], target["refId"],
                ", ".join("%s=%s" % (r["metric"].get("vm", "-"), r["value"][1])
                          for r in res) or "no series"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
