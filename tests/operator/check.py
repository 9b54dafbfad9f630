#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The operator test's judge (tests/operator/rig-operator.sh).

    check.py CONSOLE_LOG METRICS

CONSOLE_LOG is the rig's console (boot-l1.sh's console.log) with what
tests/operator/l1-run.sh printed in L1: each guest's "operator: phase 1:"
line (what it did), then kvm-perfmon-stat's table, --json and --vm vm-b
between ===OP-BEGIN NAME=== and ===OP-END NAME=== markers, all taken
while both guests held their contexts after phase 1. METRICS is the
exporter's /metrics as L0 scraped it at that time too.

Each tool must show both VMs by name and UUID, with exactly the samples
and the refusals by cause their guests report: the hardware event as
NOTAVAIL, the virtual PMD vm-b's filter denies as FILTERED (vm-a's guest
had it accepted), the bad set as EINVAL, the restart as EBUSY, and no
other cause. Prints PASS/FAIL lines; exit status 1 on a failure.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from judge import Judge  # noqa: E402

UUIDS = {
    "vm-a": "6c0d2a8e-1f0b-4c59-9d5e-00000000000a",
    "vm-b": "6c0d2a8e-1f0b-4c59-9d5e-00000000000b",
}
FILTERED_VM = "vm-b"    # its filter denies HOST_PAGE_FAULTS

JUDGE = Judge()
check = JUDGE.check


def blocks(lines):
    """{name: (lines, rc)} of the ===OP-BEGIN/END=== blocks"""
    out, cur, buf = {}, None, []
    for line in lines:
        m = re.match(r"===OP-BEGIN (\S+)===$", line)
        if m:
            cur, buf = m.group(1), []
            continue
        m = re.match(r"===OP-END (\S+)=== rc=(\d+)$", line)
        if m and m.group(1) == cur:
            out[cur] = (buf, int(m.group(2)))
            cur = None
            continue
        if cur:
            buf.append(line)
    return out


def guests(lines):
    """{vm: {samples, hw_notavail, ...}} from the phase 1 lines"""
    out = {}
    for line in lines:
        m = re.match(r"operator-l1: (vm-\w): operator: phase 1: (.*)", line)
        if m:
            out[m.group(1)] = {k: int(v) for k, v in
                               re.findall(r"(\w+)=(\d+)", m.group(2))}
    return out


def expected_causes(vm, g):
    """the refusal causes the module must show for what guest @g did"""
    causes = {"NOTAVAIL": g["hw_notavail"], "EINVAL": g["einval"],
              "EBUSY": g["ebusy"]}
    if vm == FILTERED_VM:
        causes["FILTERED"] = g["vpmd_notavail"]
    else:
        causes["NOTAVAIL"] += g["vpmd_notavail"]
    return {k: v for k, v in causes.items() if v}


def metrics(text):
    """{(name, frozenset(labels)): value} of the exposition"""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'(\w+)(?:\{(.*)\})? (\S+)$', line)
        if not m:
            continue
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"',
                                      m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def series(ms, name, **labels):
    """the values of metric @name whose labels include @labels"""
    want = set(labels.items())
    return {lab: v for (n, lab), v in ms.items()
            if n == name and want <= set(lab)}


def main():
    lines = [ln.rstrip("\r\n") for ln in
             open(sys.argv[1], errors="replace")]
    ms = metrics(open(sys.argv[2]).read())
    g = guests(lines)
    b = blocks(lines)
    if not check(set(g) == set(UUIDS), "both guests reported phase 1",
                 f"got {sorted(g)}"):
        return 1
    # the guests did what the test is about
    check(g["vm-a"]["vpmd_notavail"] == 0 and
          g[FILTERED_VM]["vpmd_notavail"] == 1,
          "guests: HOST_PAGE_FAULTS accepted on vm-a, refused on vm-b",
          f"vm-a {g['vm-a']}, vm-b {g['vm-b']}")
    for vm, gv in g.items():
        check(gv["hw_notavail"] == 1 and gv["einval"] == 1 and
              gv["ebusy"] == 1 and gv["samples"] > 0,
              f"{vm}'s guest: 1 NOTAVAIL, 1 EINVAL, 1 EBUSY, samples",
              str(gv))

    # --json
    doc = None
    if "json" in b and b["json"][1] == 0:
        try:
            doc = json.loads("\n".join(b["json"][0]))
        except ValueError as e:
            check(False, "kvm-perfmon-stat --json parses", str(e))
    if check(doc is not None, "kvm-perfmon-stat --json: a document",
             "no block or exit status not 0"):
        vms = {v["name"]: v for v in doc["vms"]}
        check(set(vms) == set(UUIDS), "--json: vm-a and vm-b by name",
              f"names {sorted(vms)}")
        for vm, gv in g.items():
            v = vms.get(vm)
            if not v:
                continue
            want = expected_causes(vm, gv)
            check(v["uuid"] == UUIDS[vm], f"--json: {vm}'s uuid",
                  v["uuid"])
            check(v["refused_by_cause"] == want,
                  f"--json: {vm} refused by cause = {want}",
                  f"got {v['refused_by_cause']}")
            check(v["refused"] == sum(want.values()),
                  f"--json: {vm} refused = {sum(want.values())}",
                  f"got {v['refused']}")
            check(v["samples"] == gv["samples"],
                  f"--json: {vm} samples = the guest's {gv['samples']}",
                  f"got {v['samples']}")
            check(v["vcpus"] == 1 and v["contexts"] >= 1,
                  f"--json: {vm} has 1 vCPU and its guest's context",
                  f"vcpus {v['vcpus']}, contexts {v['contexts']}")

    # the table: NAME PID VCPUS CTX EVENTS RUN% SAMPLES CALLS REFUSED
    rows = {}
    if "table" in b:
        for line in b["table"][0][1:]:
            w = line.split()
            if len(w) == 9:
                rows[w[0]] = w
    for vm, gv in g.items():
        w = rows.get(vm)
        want = sum(expected_causes(vm, gv).values())
        check(w is not None and int(w[6]) == gv["samples"] and
              int(w[8]) == want,
              f"table: {vm} with {gv['samples']} samples, {want} refused",
              f"row {w}")

    # --raw --sort DOORBELLS --output NAME,UUID,DOORBELLS,EXITS,DOORBELL%:
    # KVM's exits from debugfs, the doorbells a share of them
    if "columns" in b:
        lines = b["columns"][0]
        check(lines and lines[0].split() ==
              ["NAME", "UUID", "DOORBELLS", "EXITS", "DOORBELL%"],
              "--output: the columns asked for, in order",
              lines[0] if lines else "nothing")
        rows = [ln.split() for ln in lines[1:]]
        check(len(rows) == 2 and
              int(rows[0][2]) >= int(rows[1][2]),
              "--sort DOORBELLS: the busier VM first", str(rows))
        for w in rows:
            ok = (len(w) == 5 and w[0] in UUIDS and w[1] == UUIDS[w[0]] and
                  0 < int(w[2]) <= int(w[3]) and
                  abs(float(w[4]) - 100.0 * int(w[2]) / int(w[3])) < 0.5)
            check(ok, f"--output: {w[0]}'s doorbells, a share of its "
                  f"exits (KVM's debugfs)", str(w))
            if ok:
                print(f"    {w[0]}: {w[2]} doorbells of {w[3]} exits "
                      f"({w[4]}%)")
    else:
        check(False, "--output: a block", "none")

    # --interval 1 --count 2 --json: two NDJSON lines with timestamps
    docs = []
    for line in b.get("watch", ([], 1))[0]:
        try:
            docs.append(json.loads(line))
        except ValueError:
            pass
    check(len(docs) == 2 and len(b["watch"][0]) == 2 and
          all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$",
                       d.get("timestamp", "")) for d in docs) and
          docs[0]["timestamp"] < docs[1]["timestamp"],
          "--interval --json: one document per line and refresh, each "
          "with a later timestamp", str(b.get("watch")))

    # --interval 1 --count 2 --raw: lifetime figures, then per second
    wt = b.get("watch-table", ([], 1))[0]
    # (L1's console is a terminal: each refresh clears it first)
    heads = [re.sub(r"^\x1b\[H\x1b\[2J", "", ln) for ln in wt]
    heads = [ln for ln in heads if ln.startswith("NAME ")]
    check(heads == ["NAME RUN% SAMPLES DOORBELLS",
                    "NAME RUN% SAMPLES/s DOORBELLS/s"],
          "--interval: the first table counts, the next per second",
          str(wt))

    # --vm vm-b: refusals by cause, FILTERED among them
    if "detail-vm-b" in b:
        text = b["detail-vm-b"][0]
        want = expected_causes(FILTERED_VM, g[FILTERED_VM])
        got = {}
        if "refused calls by cause:" in text:
            for line in text[text.index("refused calls by cause:") + 1:]:
                w = line.split()
                if len(w) != 2:
                    break
                got[w[0]] = int(w[1])
        check(got == want, f"--vm {FILTERED_VM}: refused by cause {want}",
              f"got {got}")
    else:
        check(False, f"--vm {FILTERED_VM}: output", "no block")

    # --vm vm-b: both filters as files, and pv-perfmon's share
    text = b.get("detail-vm-b", ([], 1))[0]
    check("the VMM's filter:" in text and
          text[text.index("the VMM's filter:") + 1:][:2] ==
          ["deny", "virtual 0x105/0xffff"] and
          "the operator's filter: none" in text,
          f"--vm {FILTERED_VM}: the VMM's filter= (deny virtual 261) as "
          "its file says it, no operator's filter", str(text))
    share = [m for m in (re.match(
        r"pv-perfmon's share: (\d+) doorbells, ([\d.]+)% of (\d+) exits, "
        r"([\d.]+)% of (\d+) MMIO exits to the VMM; ([\d.]+) ms in the "
        r"module, ([\d.]+)% of ([\d.]+) s vCPU time$", ln)
        for ln in text) if m]
    if share:
        db, exits, mmio = (int(share[0].group(i)) for i in (1, 3, 5))
        ms_in, vcpu_s = float(share[0].group(6)), float(share[0].group(8))
        check(0 < db <= mmio <= exits and 0 < ms_in and
              ms_in / 1e3 < vcpu_s,
              f"--vm {FILTERED_VM}: pv-perfmon's share: 0 < doorbells <= "
              "MMIO exits <= exits, 0 < time in the module < vCPU time",
              share[0].group(0))
    else:
        check(False, f"--vm {FILTERED_VM}: pv-perfmon's share", str(text))

    # the operator's filter of vm-a: set, shown, refused, cleared
    def block(name):
        return b.get(name, ([], None))

    check(block("filter-set")[1] == 0, "--set-filter: exit 0",
          str(block("filter-set")))
    check(block("filter-show") == (["deny", "generic 0x41/0xff 0x00/0x00"],
                                   0),
          "--show-filter: the filter as a file, comments dropped",
          str(block("filter-show")))
    bad = block("filter-bad")
    check(bad[1] == 1 and any(
        "/tmp/op-filter-bad:2: the fixed counter index '99' is not a "
        "number" in ln for ln in bad[0]),
          "--set-filter of a bad file: exit 1, its file, line and field "
          "named", str(bad))
    check(block("filter-nonroot")[1] == 3 and
          block("filter-still") == (["deny", "generic 0x41/0xff 0x00/0x00"],
                                    0),
          "--clear-filter without CAP_PERFMON: exit 3, the filter stays",
          str(block("filter-nonroot")) + str(block("filter-still")))
    check(block("filter-clear")[1] == 0 and
          block("filter-cleared") == (["deny"], 0),
          "--clear-filter: exit 0, no filter (deny of nothing) after",
          str(block("filter-clear")) + str(block("filter-cleared")))

    # the scrape
    for vm, gv in g.items():
        info = series(ms, "kvmperfmon_vm_info", vm=vm, uuid=UUIDS[vm])
        check(len(info) == 1, f"metrics: kvmperfmon_vm_info of {vm}",
              f"{len(info)} series")
        db = list(series(ms, "kvmperfmon_doorbells_total", vm=vm).values())
        dbs = list(series(ms, "kvmperfmon_doorbell_seconds_total",
                          vm=vm).values())
        check(len(db) == 1 and len(dbs) == 1 and db[0] > 0 and
              0 < dbs[0] < 60, f"metrics: {vm}'s doorbells and the "
              "module's seconds in them", f"{db} doorbells, {dbs} s")
        limits = {n: list(series(ms, f"kvmperfmon_{n}_total",
                                 vm=vm).values())
                  for n in ("host_throttles", "periods_raised",
                            "late_overflows")}
        check(all(len(v) == 1 for v in limits.values()),
              f"metrics: {vm}'s host perf limits, a series each", str(limits))
        s = series(ms, "kvmperfmon_samples_total", vm=vm)
        check(list(s.values()) == [gv["samples"]],
              f"metrics: kvmperfmon_samples_total{{vm=\"{vm}\"}} = "
              f"{gv['samples']}", f"got {list(s.values())}")
        want = expected_causes(vm, gv)
        got = {dict(lab)["cause"]: int(v) for lab, v in
               series(ms, "kvmperfmon_refused_total", vm=vm).items() if v}
        check(got == want, f"metrics: {vm} refused_total by cause {want}",
              f"got {got}")
        en = series(ms, "kvmperfmon_event_enabled_seconds_total", vm=vm,
                    event="vcpu_run_ns")
        run = series(ms, "kvmperfmon_event_running_seconds_total", vm=vm,
                     event="vcpu_run_ns")
        check(len(en) == 1 and len(run) == 1 and
              0 < list(run.values())[0] <= list(en.values())[0],
              f"metrics: {vm}'s vcpu_run_ns, one series per VM: 0 < "
              f"running <= enabled seconds", f"enabled {en}, running {run}")
        # 1 vCPU, a few events: with zero calls and causes and per-vCPU
        # series (the exporter before) it would be 52 and 2 per event
        n = len([k for k in ms if ("vm", vm) in set(k[1])])
        check(0 < n <= 45, f"metrics: {vm} has {n} series, at most 45",
              "")
    check(series(ms, "kvmperfmon_up") and
          list(series(ms, "kvmperfmon_up").values()) == [1.0],
          "metrics: kvmperfmon_up 1", "")

    return JUDGE.verdict("check.py")


if __name__ == "__main__":
    sys.exit(main())
