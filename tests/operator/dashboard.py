#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The shipped Grafana dashboard against a real Prometheus.

  dashboard.py DASHBOARD.json PROMETHEUS_URL TIME VM...
  dashboard.py --svg OUT.svg DASHBOARD.json PROMETHEUS_URL START END

Every panel reads the dashboard's Prometheus data source variable; every
query, with the dashboard's variables as Grafana fills them when "All" is
chosen ($__rate_interval as one minute), is evaluated by Prometheus at
TIME and must give a series for each VM named (a per-VM panel) or at least
one (a host panel); the variables' label_values() queries must list the
VMs. Prints one line per query and variable, "ok" or "wrong"; exits 1
if any is wrong.

With --svg, draws the panels in the dashboard's layout from Prometheus's
answers between START and END (the README's picture): what the
dashboard's queries show, drawn here, not by Grafana.
"""
import json
import re
import sys
import html
import urllib.parse
import urllib.request

DATASOURCE = "${datasource}"
FILLED = {"$instance": ".+", "$vm": ".+", "$__rate_interval": "1m"}


def fill(expr, filled=FILLED):
    for var, value in filled.items():
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


COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
COL, ROW = 50, 30		# pixels per grid unit: Grafana's 24 columns


def legend(fmt, metric):
    return re.sub(r"{{\s*(\w+)\s*}}", lambda m: metric.get(m.group(1), ""), fmt)


def svg_panel(out, url, panel, start, end):
    g = panel["gridPos"]
    x, y, w, h = g["x"] * COL, g["y"] * ROW, g["w"] * COL, g["h"] * ROW
    unit = panel["fieldConfig"]["defaults"].get("unit", "")
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fff" '
               'stroke="#ccc"/>' % (x + 2, y + 2, w - 4, h - 4))
    out.append('<text x="%d" y="%d" font-weight="bold">%s</text>'
               % (x + 10, y + 20, html.escape(panel["title"])))
    filled = dict(FILLED, **{"$__rate_interval": "10s"})
    if panel["type"] == "stat":
        t = panel["targets"][0]
        ans = get(url, "/api/v1/query", {"query": fill(t["expr"], filled),
                                         "time": end})
        res = ans["data"]["result"]
        val = res[0]["value"][1] if res else "-"
        for m in panel["fieldConfig"]["defaults"].get("mappings", []):
            val = m["options"].get(val, {}).get("text", val)
        if unit == "bytes" and val.isdigit():
            val = "%d KiB" % (int(val) // 1024)
        out.append('<text x="%d" y="%d" font-size="28">%s</text>'
                   % (x + 10, y + h - 25, html.escape(val)))
        return
    series = []
    step = max(1, (end - start) // 120)
    for t in panel["targets"]:
        ans = get(url, "/api/v1/query_range",
                  {"query": fill(t["expr"], filled), "start": start,
                   "end": end, "step": step})
        for r in ans["data"]["result"]:
            pts = [(float(a), float(b)) for a, b in r["values"]
                   if b not in ("NaN", "+Inf", "-Inf")]
            series.append((legend(t["legendFormat"], r["metric"]), pts))
    top = max([v for _, pts in series for _, v in pts] + [0]) or 1
    if unit == "percentunit":
        top = max(top, 1)
    px, py, pw, ph = x + 60, y + 35, w * 0.62 - 60, h - 60
    out.append('<text x="%d" y="%d" font-size="10" text-anchor="end">%s</text>'
               % (px - 4, py + 8, "%.0f%%" % (top * 100)
                  if unit == "percentunit" else "%.3g/s" % top
                  if unit == "ops" else "%.3g" % top))
    out.append('<text x="%d" y="%d" font-size="10" text-anchor="end">0</text>'
               % (px - 4, py + ph))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>'
               % (px, py + ph, px + pw, py + ph))
    for i, (name, pts) in enumerate(series):
        c = COLOURS[i % len(COLOURS)]
        line = " ".join("%.1f,%.1f" % (px + (a - start) / (end - start) * pw,
                                       py + ph - v / top * ph) for a, v in pts)
        out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" '
                   'points="%s"/>' % (c, line))
        if i < 8:
            out.append('<text x="%d" y="%d" font-size="11" fill="%s">%s</text>'
                       % (px + pw + 10, py + 10 + 14 * i, c,
                          html.escape(name)))


def svg(out_path, path, url, start, end):
    dash = json.load(open(path))
    bottom = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in dash["panels"])
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="13">' % (24 * COL, bottom * ROW),
           '<rect width="100%" height="100%" fill="#f4f5f5"/>']
    for panel in dash["panels"]:
        svg_panel(out, url, panel, start, end)
    out.append("</svg>")
    open(out_path, "w").write("\n".join(out) + "\n")


def main():
    if sys.argv[1] == "--svg":
        svg(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]),
            int(sys.argv[6]))
        return
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
        print("%s: variable %s = %s" % ("ok" if ok else "wrong", var["name"], got))
    for panel in dash["panels"]:
        if panel["datasource"]["uid"] != DATASOURCE:
            failed += 1
            print("wrong: panel %r: data source %r, not the variable"
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
                "ok" if ok else "wrong", panel["title"], target["refId"],
                ", ".join("%s=%s" % (r["metric"].get("vm", "-"), r["value"][1])
                          for r in res) or "no series"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
