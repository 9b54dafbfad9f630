#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge pfmon's cases (tests/run/pfmon-cases.sh) as a guest printed them
into a console log: exit statuses, messages, the event list against
libpfm4's encodings for the amd64 personality (AMD family 10h), the
CSV (csv module) and JSON (json module) output, -I's intervals.

    tests/run/check_pfmon.py CONSOLE_LOG PFMON_CLI_C

PFMON_CLI_C (guest/tools/pfmon_cli.c, pfmon's option table) gives the
long options --help must name.
Prints PASS:/FAIL: lines like tests/run/check.sh and, last,
"pfmon cases: N failed"; exit status 1 if one failed.
"""
import csv
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from judge import Judge  # noqa: E402

WHAT = "pfmon"
JUDGE = Judge(WHAT)
judge = JUDGE.check


KLOG = re.compile(r"^\[\s*\d+\.\d+\] ")


def cases_of(path):
    """{name: {"rc": int, "out": [...], "err": [...], "file": [...]}} of
    the last ===PFMON-TESTS=== block (a retried boot prints it again)"""
    with open(path, errors="replace") as f:
        lines = [l.rstrip("\r\n") for l in f]
    starts = [i for i, l in enumerate(lines) if l.endswith("===PFMON-TESTS===")]
    if not starts:
        return None
    cases, cur, part = {}, None, None
    for l in lines[starts[-1] + 1:]:
        if l.startswith("guest: "):
            l = l[len("guest: "):]
        if l.endswith("===PFMON-TESTS-END==="):
            break
        if KLOG.match(l):
            continue
        m = re.match(r"^@@@ case (\S+) rc=(\d+)$", l)
        if m:
            cur = {"rc": int(m.group(2)), "out": [], "err": [], "file": []}
            cases[m.group(1)] = cur
            part = None
        elif l in ("@@@ out", "@@@ err", "@@@ file"):
            part = l[4:]
        elif l == "@@@ end":
            cur, part = None, None
        elif cur is not None and part:
            cur[part].append(l)
    return cases


def long_options(pfmon_cli_c):
    """the long options of pfmon's option table (CLI_OPT, CLI_ALIAS rows)"""
    with open(pfmon_cli_c) as f:
        src = f.read()
    return re.findall(r'CLI_(?:OPT|ALIAS)\("([a-z-]+)",', src)


def near(v, want, tol=0.02):
    return abs(v - want) <= want * tol + 1


def main():
    cases = cases_of(sys.argv[1])
    if cases is None:
        judge(False, "the guest ran pfmon's cases", "no ===PFMON-TESTS=== in " + sys.argv[1])
        return
    judge(len(cases) >= 20, f"{len(cases)} cases ran", "too few")

    def case(name):
        c = cases.get(name)
        if c is None:
            judge(False, name, "case missing")
        return c

    def err(c):
        return "\n".join(c["err"])

    def out(c):
        return "\n".join(c["out"])

    # conventions
    c = case("help")
    if c:
        opts = long_options(sys.argv[2])
        missing = [o for o in opts if "--" + o not in out(c)]
        judge(c["rc"] == 0 and not c["err"] and len(opts) >= 15 and not missing,
              f"--help: exit 0, stdout, names all {len(opts)} long options",
              f"rc {c['rc']}, stderr {c['err'][:1]}, missing {missing}")
    c = case("version")
    if c:
        judge(c["rc"] == 0 and re.search(r"^pfmon \d+\.\d+ .*libpfm4 .*perfmon2 interface 2\.\d+", out(c), re.M),
              "--version: pfmon, libpfm4 and perfmon2 versions", f"rc {c['rc']}: {out(c)!r}")
    for name, rc, what, msg in (
            ("status_cmd", 3, "the command's exit status (3)", ""),
            ("status_signal", 128 + 15, "128+15 for a command killed by SIGTERM", "signal 15"),
            ("status_notfound", 127, "127: command not found", "cannot run"),
            ("status_noexec", 126, "126: command not executable", "cannot run"),
            ("bad_option", 125, "125 and a pointer to --help for an unknown option", "pfmon --help"),
            ("bad_number", 125, "125: --switch-timeout 10x refused", "--switch-timeout: want a time"),
            ("bad_interval", 125, "125: -I 5 refused (below 10 ms)", "-I: want a whole number from 10"),
            ("bad_sep", 125, "125: -x : refused (event names hold ':')", "-x: the separator"),
            ("ev_unknown", 125, "unknown event refused", "unknown event 'NO_SUCH_EVENT'"),
            ("ev_bad_umask", 125, "unknown unit mask refused", "bad unit mask or modifier"),
            ("ev_reserved", 125, "raw value with a reserved bit: not expressible",
             "cannot express this event"),
            ("ev_vpmd_level", 125, ":u on a virtual PMD refused", "no user/kernel level"),
            ("smpl_view_alone", 125, "--smpl-per-line without --smpl-period refused",
             "go with --smpl-period"),
            ("report_bad", 125, "--report of a file that is not a --smpl-outfile refused",
             "not a pfmon --smpl-outfile"),
            ("follow_bad", 125, "--aggregate-results without --follow-* refused",
             "--aggregate-results sums the tasks of --follow-*"),
            ("timeout_cmd", 125, "-t with a command refused",
             "a command's session lasts as long as the command")):
        c = case(name)
        if c:
            judge(c["rc"] == rc and msg in err(c), what,
                  f"rc {c['rc']}, stderr {err(c)!r}")
    c = case("status_cmd")
    if c:
        judge(any(re.match(r"^ +[0-9,]+ vm_exits ", l) for l in c["out"]),
              "counts printed for a failing command", repr(out(c)))

    # the event list
    c = case("list")
    listed = {}
    if c:
        judge(c["rc"] == 0, "pfmon -l exits 0", f"rc {c['rc']}: {err(c)!r}")
        head = c["out"][0] if c["out"] else ""
        judge(head.startswith("PMU model: amd64 (amd64 personality)"),
              "the rig's guest has the amd64 personality (the cases name family 10h events)", head)
        vp = [l for l in c["out"] if re.match(r"^  [a-z_]+ +PMD2\d\d ", l)]
        judge(len(vp) == 6, "6 virtual PMDs listed", f"{len(vp)}")
        for l in c["out"]:
            m = re.match(r"^  ([A-Z0-9_:]+) +(0x[0-9a-f]+)  (.*)$", l)
            if m:
                st = "backed"
                for key, s in (("[emulated", "emulated"), ("[not available", "notavail"),
                               ("[not available now", "mediated"),
                               ("[refused as invalid", "invalid"), ("[not expressible", "reserved")):
                    if key in m.group(3):
                        st = s
                listed[m.group(1)] = (int(m.group(2), 16), st)
        summ = [l for l in c["out"] if re.match(r"^\d+ events and unit masks:", l)]
        nums = [int(x) for x in re.findall(r"\d+", summ[0])] if summ else []
        by = {s: sum(1 for v in listed.values() if v[1] == s)
              for s in ("backed", "emulated", "notavail", "mediated", "invalid", "reserved")}
        judge(len(listed) >= 300 and nums == [len(listed), by["backed"], by["emulated"],
                                               by["notavail"], by["mediated"], by["invalid"],
                                               by["reserved"]],
              f"{len(listed)} events and unit masks listed, the summary adds up",
              f"{len(listed)} listed; summary {summ}; by status {by}")
        # libpfm4's encodings, known from AMD's family 10h BKDG
        for name, val in (("CPU_CLK_UNHALTED", 0x530076), ("RETIRED_INSTRUCTIONS", 0x5300C0),
                          ("DISPATCHED_FPU:OPS_MULTIPLY", 0x530200),
                          ("L3_CACHE_MISSES:READ_BLOCK_EXCLUSIVE", 0x40053F1E1)):
            got = listed.get(name, (None,))[0]
            judge(got == val, f"-l: {name} = {val:#x}", f"{got}")
        judge(listed.get("CPU_CLK_UNHALTED", (0, ""))[1] == "emulated",
              "-l: CPU_CLK_UNHALTED emulated (the event map's alias)",
              f"{listed.get('CPU_CLK_UNHALTED')}")
        judge(listed.get("RETIRED_INSTRUCTIONS", (0, ""))[1] == "notavail",
              "-l: RETIRED_INSTRUCTIONS not available (no PMU, no alias)",
              f"{listed.get('RETIRED_INSTRUCTIONS')}")

    # events by name: the PMC value each got (-v), counted or refused
    for name, ev, val, counted in (
            ("ev_cycles", "cycles", 0x530076, True),
            ("ev_libpfm", "CPU_CLK_UNHALTED:u", 0x510076, True),
            ("ev_level_k", "CPU_CLK_UNHALTED:k", 0x520076, True),
            ("ev_dfl_u", "CPU_CLK_UNHALTED", 0x510076, True),
            ("ev_umask", "DISPATCHED_FPU:OPS_MULTIPLY", 0x530200, False),
            ("ev_ext", "L3_CACHE_MISSES:READ_BLOCK_EXCLUSIVE", 0x40053F1E1, False)):
        c = case(name)
        if not c:
            continue
        m = re.search(r"set 0: " + re.escape(ev) + r": PMC0=(0x[0-9a-f]+)", err(c))
        got = int(m.group(1), 16) if m else None
        judge(got == val, f"{ev} ({name}) encoded to PMC0={val:#x}", f"{got}; {err(c)!r}")
        if counted:
            cnt = [l for l in c["out"] if re.match(r"^ +[0-9,]+ " + re.escape(ev) + r" .*\[emulated\]$", l)]
            judge(c["rc"] == 0 and cnt, f"{ev} counted, marked emulated",
                  f"rc {c['rc']}: {out(c)!r} {err(c)!r}")
        else:
            judge(c["rc"] == 125 and "the host cannot back it" in err(c),
                  f"{ev} refused: the host cannot back it", f"rc {c['rc']}: {err(c)!r}")
    c = case("ev_hyphen")
    if c:
        m = re.search(r"set 0: branch-misses: PMC0=(0x[0-9a-f]+)", err(c))
        judge(m and int(m.group(1), 16) == 0x5300C3 and "unknown event" not in err(c),
              "perf's branch-misses: RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS (PMC0=0x5300c3)",
              f"rc {c['rc']}: {err(c)!r}")
    c = case("ev_notavail")
    if c:
        judge(c["rc"] == 125 and "RETIRED_INSTRUCTIONS (set 0, PMC0): the host cannot back it" in err(c),
              "RETIRED_INSTRUCTIONS refused by the host, as -l said", f"rc {c['rc']}: {err(c)!r}")

    # sets: each -e (and --set) a set, all of them run
    c = case("sets")
    if c:
        hdr = [re.match(r"^set (\d+): (\d+) runs, active ([\d.]+) ms of ([\d.]+) ms", l)
               for l in c["out"]]
        hdr = [m for m in hdr if m]
        share = sum(float(m.group(3)) for m in hdr) / float(hdr[0].group(4)) if hdr and float(hdr[0].group(4)) else 0
        judge(c["rc"] == 0 and [int(m.group(1)) for m in hdr] == [0, 1, 2]
              and all(int(m.group(2)) > 0 for m in hdr) and 0.9 <= share <= 1.01,
              f"-e -e --set: three sets, all ran, active {share * 100:.1f}% of the run",
              f"rc {c['rc']}: {out(c)!r}")

    cols = ["time", "target", "set", "event", "count", "raw", "set_runs", "set_active_ns",
            "set_pct", "host_enabled_ns", "host_running_ns", "host_pct", "emulated"]

    def scaled_ok(count, raw, set_pct, host_pct):
        want = raw * 100.0 / set_pct if set_pct > 0 else 0
        if host_pct is not None and 0 < host_pct < 100:
            want = want * 100.0 / host_pct
        return near(count, want)

    c = case("csv")
    if c:
        rows = list(csv.DictReader(io.StringIO("\n".join(c["file"]))))
        hdr_ok = c["file"] and c["file"][0].split(",") == cols
        names = [r["event"] for r in rows]
        bad = []
        pct = {}
        for r in rows:
            try:
                hp = float(r["host_pct"]) if r["host_pct"] else None
                pct[r["set"]] = float(r["set_pct"])
                if not scaled_ok(int(r["count"]), int(r["raw"]), float(r["set_pct"]), hp):
                    bad.append(r["event"])
                if hp is not None and not 0 < hp <= 100.5:
                    bad.append(r["event"] + " host_pct")
                if r["time"] != "" or r["target"] != "task" or int(r["set_runs"]) <= 0:
                    bad.append(r["event"] + " fields")
            except ValueError as e:
                bad.append(f"{r.get('event')}: {e}")
        emu = {r["event"]: r["emulated"] for r in rows}
        tot = sum(pct.values())
        judge(c["rc"] == 0 and hdr_ok and names == ["vcpu_run_ns", "vm_exits", "cycles", "halt_exits", "steal_ns"]
              and not bad and emu.get("cycles") == "1" and emu.get("vm_exits") == "0"
              and 90 <= tot <= 101,
              f"-x , -o FILE: CSV parsed, {len(rows)} rows, counts scaled, sets {tot:.1f}% of the run",
              f"rc {c['rc']}, header {c['file'][:1]}, events {names}, bad {bad}, emulated {emu}, {tot}%")
        judge(c["out"] and all(l.startswith("workload: ") for l in c["out"]),
              "-o FILE: nothing of pfmon's on stdout (the command's own line only)", repr(out(c)))
    c = case("json")
    if c:
        objs, bad = [], []
        for l in c["file"]:
            try:
                objs.append(json.loads(l))
            except ValueError as e:
                bad.append(f"{l!r}: {e}")
        for o in objs:
            if set(o) != set(cols) - {"time"}:
                bad.append(f"keys {sorted(o)}")
            elif not scaled_ok(o["count"], o["raw"], o["set_pct"], o["host_pct"]):
                bad.append(f"{o['event']} scale")
        names = [o.get("event") for o in objs]
        emu = {o.get("event"): o.get("emulated") for o in objs}
        judge(c["rc"] == 0 and not bad and names == ["vcpu_run_ns", "vm_exits", "halt_exits", "cycles:u"]
              and emu.get("cycles:u") is True and emu.get("vm_exits") is False,
              f"--json -o FILE: {len(objs)} objects parsed, counts scaled",
              f"rc {c['rc']}, events {names}, bad {bad}")
    c = case("interval")
    if c:
        rows = list(csv.DictReader(io.StringIO("\n".join(c["file"]))))
        run = [r for r in rows if r["event"] == "vcpu_run_ns"]
        ts = [float(r["time"]) for r in run]
        steps = [b - a for a, b in zip(ts, ts[1:])]
        ns = sum(int(r["count"]) for r in run)
        # L2's wall clock stalls under TCG when L0 is loaded (0.39 s once,
        # pfmon then printing the ticks it missed at once): the median
        # step tells the period, one stall must not fail the check
        mid = sorted(steps[:-1])[len(steps[:-1]) // 2] if len(steps) > 1 else 0
        # the command takes 1 s of its own clock, longer in wall time on a
        # loaded L0 (1.76 s once): an interval per 100 ms of the run, as
        # long as it took, the last one partial
        judge(c["rc"] == 0 and len(run) >= 10 and ts and abs(len(run) - ts[-1] / 0.1) <= 2
              and len(rows) == 2 * len(run)
              and all(s > 0 for s in steps) and 0.07 <= mid <= 0.2 and 0 < steps[-1] <= 0.2,
              f"-I 100 on a 1 s command: {len(run)} intervals in {ts[-1] if ts else 0:.2f} s, "
              f"median {mid:.3f} s apart",
              f"rc {c['rc']}, {len(run)} intervals at {ts}")
        judge(0.5e9 <= ns <= max(1.5, (ts[-1] if ts else 0) + 0.5) * 1e9,
              f"-I: vcpu_run_ns over the intervals {ns / 1e6:.0f} ms for a 1 s command",
              f"{ns}")
    c = case("interval_text")
    if c:
        ts = [float(m.group(1)) for m in (re.match(r"^ +(\d+\.\d{3}) +0 +[0-9,]+ vcpu_run_ns ", l)
                                          for l in c["out"]) if m]
        n = len(ts)
        judge(c["rc"] == 0 and n >= 2 and abs(n - ts[-1] / 0.2) <= 1.5,
              f"-I 200 on a 0.5 s command, text: {n} intervals in {ts[-1] if ts else 0:.2f} s",
              f"rc {c['rc']}: {out(c)!r}")

    # a profile's functions and threads
    def profile_of(c):
        """(title, {function: samples}, {(tid, pid, program): samples})"""
        title, funcs, threads, part = None, {}, {}, None
        for l in c["out"]:
            if l.startswith("sampling profile of "):
                title, part = l, "funcs"
                continue
            m = re.match(r"^ +samples +% +(\w[\w ]*)$", l)
            if m and title:
                part = "threads" if m.group(1) == "thread" else "funcs"
                continue
            m = re.match(r"^ +(\d+) +[\d.]+% +(.*)$", l)
            if m and part == "funcs":
                funcs[m.group(2)] = int(m.group(1))
            elif m and part == "threads":
                t = re.match(r"^tid (\d+) pid (\d+) \((.*)\)$", m.group(2))
                if t:
                    threads[(int(t.group(1)), int(t.group(2)), t.group(3))] = int(m.group(1))
        return title, funcs, threads

    # the profile by source line and by address (libdwfl)
    c = case("smpl_line")
    if c:
        hot = [l for l in c["out"] if re.match(r"^ +\d+ +[\d.]+% +workload\.c:\d+ (crunch_primes|hash_buffer|trap_cpuid)$", l)]
        judge(c["rc"] == 0 and len(hot) >= 3, f"--smpl-per-line: {len(hot)} lines of workload.c in the hot functions",
              f"rc {c['rc']}: {out(c)[-600:]!r}")
    c = case("smpl_addr")
    if c:
        hot = [l for l in c["out"] if re.match(r"^ +\d+ +[\d.]+% +0x[0-9a-f]+ (crunch_primes|hash_buffer|trap_cpuid) \[workload\]$", l)]
        judge(c["rc"] == 0 and len(hot) >= 3, f"--smpl-per-address: {len(hot)} addresses in the hot functions",
              f"rc {c['rc']}: {out(c)[-600:]!r}")

    # --smpl-outfile then --report: the same profile from the file
    c, e, r = case("smpl_outfile"), case("smpl_entries"), case("report")
    if c and e and r:
        def profile(lines):
            at = [i for i, l in enumerate(lines) if l.startswith("sampling profile of ")]
            return (re.search(r": (\d+) samples,", lines[at[0]]).group(1), lines[at[0] + 1:]) if at else (None, [])
        n1, p1 = profile(c["out"])
        n2, p2 = profile(r["out"])
        nent = int(e["out"][0]) if e["out"] and e["out"][0].isdigit() else -1
        judge(c["rc"] == 0 and r["rc"] == 0 and n1 is not None and int(n1) >= 50 and n1 == n2 == str(nent)
              and p1 == p2 and any(re.search(r"\bcrunch_primes$", l) for l in p2),
              f"--smpl-outfile: {nent} raw entries written; --report gives the same profile",
              f"rc {c['rc']}/{r['rc']}, samples {n1}/{n2}/{nent}, profiles equal {p1 == p2}; {err(r)!r}")

    c = case("sets_ms")
    if c:
        runs = [int(m.group(1)) for m in
                (re.match(r"^set \d+: (\d+) runs", l) for l in c["out"]) if m]
        judge(c["rc"] == 0 and len(runs) == 2 and all(r > 0 for r in runs),
              "--switch-timeout 20ms: pfmon 3.x's milliseconds, both sets ran", f"rc {c['rc']}: {out(c)!r} {err(c)!r}")
    c = case("smpl_random")
    if c:
        title, funcs, _ = profile_of(c)
        m = re.search(r": (\d+) samples, .* \(buffer filled (\d+) times\)", title or "")
        # 8192 bytes hold (8192 - 128) / 40 = 201 entries (the default
        # format's header and entry): more samples than that went on
        # after the buffer filled; how many more depends on TCG's speed
        room = (8192 - 128) // 40
        judge(c["rc"] == 0 and m and int(m.group(1)) > room and
              int(m.group(2)) >= max(1, int(m.group(1)) // room - 1) and
              "crunch_primes" in funcs,
              f"--smpl-buf-size 8192 --smpl-periods-random: {m.group(1) if m else 0} samples "
              f"(the buffer holds {room}), the small buffer filled {m.group(2) if m else 0} times",
              f"rc {c['rc']}, {title!r}; {err(c)!r}")
    c = case("smpl_buildids")
    if c:
        n = int(c["out"][0]) if c["out"] and c["out"][0].isdigit() else 0
        judge(n >= 2, f"--smpl-outfile: {n} build-ids recorded (the workload, its libraries)",
              repr(c["out"]))
    c, r = case("smpl_rebuilt_run"), case("smpl_rebuilt")
    if c and r:
        _, before, _ = profile_of(c)
        _, after, _ = profile_of(r)
        stale = [f for f in after if f.startswith("[/tmp/wl: rebuilt since the samples")]
        judge(c["rc"] == 0 and r["rc"] == 0 and "crunch_primes" in before
              and stale and "crunch_primes" not in after
              and "/tmp/wl: rebuilt since the samples" in err(r),
              "--report of a program rebuilt since: its samples resolved against nothing, and said",
              f"rc {c['rc']}/{r['rc']}, before {list(before)[:4]}, after {list(after)[:4]}; {err(r)!r}")

    # following: each task's vm_exits against the CPUIDs it did
    def did(c):
        return {int(m.group(2)): (m.group(1), int(m.group(3))) for m in
                (re.match(r"^workload: (\w+) tid (\d+) did (\d+) CPUIDs$", l) for l in c["out"]) if m}

    def per_task(c):
        res, cur = {}, None
        for l in c["out"]:
            m = re.match(r"^task(\d+):$", l)
            if m:
                cur = int(m.group(1))
                continue
            m = re.match(r"^ +([0-9,]+) vm_exits ", l)
            if m and cur is not None:
                res[cur] = int(m.group(1).replace(",", ""))
        return res

    def exits_ok(got, n):
        # one exit per CPUID, plus the task's own others (timer ticks,
        # first touches of memory, its start): at most n/2 + 3000 more
        return got is not None and n <= got <= n * 1.5 + 3000

    for name, want in (("follow_all", {"main", "thread", "child"}), ("follow_fork", {"main", "child"})):
        c = case(name)
        if not c:
            continue
        d, pt = did(c), per_task(c)
        kinds = {d[t][0] for t in pt if t in d}
        bad = [f"{d[t][0]} tid {t}: {pt.get(t)} exits for {d[t][1]}" for t in d
               if d[t][0] in want and not exits_ok(pt.get(t), d[t][1])]
        judge(c["rc"] == 0 and len(d) == 3 and kinds == want and len(pt) == len(want) and not bad,
              f"--{name.replace('_', '-')}: a result per task ({', '.join(sorted(want))}), "
              f"vm_exits of each within its CPUIDs", f"rc {c['rc']}, did {d}, counted {pt}, {bad}; {err(c)!r}")
    c = case("follow_none")
    if c:
        d = did(c)
        m = [int(x.group(1).replace(",", "")) for x in
             (re.match(r"^ +([0-9,]+) vm_exits ", l) for l in c["out"]) if x]
        mains = [v[1] for v in d.values() if v[0] == "main"]
        judge(c["rc"] == 0 and len(m) == 1 and mains and exits_ok(m[0], mains[0]),
              "without --follow-*: only the command's first thread counted",
              f"rc {c['rc']}, counted {m}, did {d}")
    c = case("follow_agg")
    if c:
        rows = list(csv.DictReader(io.StringIO("\n".join(l for l in c["out"] if not l.startswith("workload:")))))
        n = sum(v[1] for v in did(c).values())
        judge(c["rc"] == 0 and len(rows) == 1 and rows[0]["target"] == "tasks3"
              and exits_ok(int(rows[0]["count"]), n),
              f"--aggregate-results: one sum of 3 tasks, vm_exits within their {n} CPUIDs",
              f"rc {c['rc']}, rows {rows}")
    c = case("follow_many")
    if c:
        rows = list(csv.DictReader(io.StringIO("\n".join(l for l in c["out"] if not l.startswith("workload:")))))
        m = [re.match(r"^workload: (\d+) threads did (\d+) CPUIDs$", l) for l in c["out"]]
        m = [x for x in m if x]
        n = int(m[0].group(2)) if m else 0
        judge(c["rc"] == 0 and m and len(rows) == 1 and rows[0]["target"] == "tasks301"
              and exits_ok(int(rows[0]["count"]), n) and "not monitored" not in err(c),
              f"--follow-pthread over 300 threads: a context each, {rows[0]['target'] if rows else '?'}, "
              f"vm_exits within their {n} CPUIDs", f"rc {c['rc']}, rows {rows}; {err(c)[-300:]!r}")

    # signals and sessions of a length
    def counts(c):
        """{(target, event): count} of a text result"""
        res, target = {}, "task"
        for l in c["out"]:
            m = re.match(r"^((?:task|cpu|cpus|tasks)\d+):$", l)
            if m:
                target = m.group(1)
            m = re.match(r"^ +([0-9,]+) (\w+) ", l)
            if m:
                res[(target, m.group(2))] = int(m.group(1).replace(",", ""))
        return res

    def ran_for(cnt, target, lo, hi):
        """vcpu_run_ns of @target within [lo, hi] seconds"""
        v = cnt.get((target, "vcpu_run_ns"))
        return v is not None and lo * 1e9 <= v <= hi * 1e9

    c = case("sigint_count")
    if c:
        cnt = counts(c)
        judge(c["rc"] == 130 and "command killed by signal 2" in err(c)
              and cnt.get(("task", "vm_exits"), 0) > 0 and ran_for(cnt, "task", 0.1, 20),
              "SIGINT to pfmon: passed on to the command, its counts printed, exit 130",
              f"rc {c['rc']}, counts {cnt}; {err(c)!r}")
    c = case("sigterm_smpl")
    if c:
        m = [re.match(r"^sampling profile of .*: (\d+) samples", l) for l in c["out"]]
        m = [x for x in m if x]
        judge(c["rc"] == 143 and m and int(m[0].group(1)) > 0
              and any(re.search(r"\bcrunch_primes$", l) for l in c["out"]),
              f"SIGTERM while sampling: the profile printed ({m[0].group(1) if m else 0} samples), exit 143",
              f"rc {c['rc']}: {out(c)[-400:]!r}; {err(c)!r}")
    c, a = case("sigint_follow"), case("sigint_follow_after")
    if c and a:
        tasks = [l for l in c["out"] if re.match(r"^task\d+:$", l)]
        left = [l for l in a["out"] if re.match(r"^workload state [RSD]$", l)]
        judge(c["rc"] == 130 and len(tasks) >= 2 and len(left) == 1 and len(a["out"]) == 1,
              f"SIGINT with --follow-all: the command ends, {len(tasks)} tasks counted, "
              "its background child let go and running",
              f"rc {c['rc']}, tasks {tasks}, after {a['out']}; {err(c)!r}")
    for name, said, what in (
            ("attach_timeout", "session timeout (2 s) reached",
             "--attach-task -t 2: the task counted for the session, exit 0"),
            ("attach_sigint", "stopped by SIGINT",
             "--attach-task ended by SIGINT: the counts printed, exit 0")):
        c = case(name)
        if not c:
            continue
        cnt = counts(c)
        target = next((t for t, _ in cnt if t.startswith("task")), None)
        judge(c["rc"] == 0 and said in err(c) and target and ran_for(cnt, target, 0.2, 10),
              what, f"rc {c['rc']}, counts {cnt}; {err(c)!r}")
    c, a = case("attach_follow_timeout"), case("attach_after")
    if c and a:
        cnt = counts(c)
        judge(c["rc"] == 0 and "session timeout (2 s) reached" in err(c)
              and any(t.startswith("task") for t, _ in cnt)
              and len(a["out"]) == 1 and re.match(r"^workload state [RSD]$", a["out"][0]),
              "--attach-task --follow-all -t 2: counted, and the task runs on, let go (not stopped)",
              f"rc {c['rc']}, counts {cnt}, after {a['out']}; {err(c)!r}")
    c = case("syswide_timeout")
    if c:
        cnt = counts(c)
        cpus = sorted({t for t, _ in cnt if re.match(r"^cpu\d+$", t)})
        total = {t for t, _ in cnt if re.match(r"^cpus\d+$", t)}
        judge(c["rc"] == 0 and "session timeout (2 s) reached" in err(c) and cpus
              and all(ran_for(cnt, t, 0, 10) for t in cpus)
              and (len(cpus) == 1 or total == {f"cpus{len(cpus)}"}),
              f"--system-wide -t 2: {len(cpus)} CPUs counted{', and their sum' if len(cpus) > 1 else ''}, exit 0",
              f"rc {c['rc']}, counts {cnt}; {err(c)!r}")
    c = case("syswide_agg")
    if c:
        rows = list(csv.DictReader(io.StringIO("\n".join(c["out"]))))
        judge(c["rc"] == 0 and len(rows) == 1 and re.match(r"^cpus\d+$", rows[0]["target"])
              and 0 < int(rows[0]["count"]),
              f"--system-wide --aggregate-results: one sum ({rows[0]['target'] if rows else '?'})",
              f"rc {c['rc']}, rows {rows}; {err(c)!r}")
    c = case("smpl_cxx")
    if c:
        title, funcs, threads = profile_of(c)
        judge(c["rc"] == 0 and funcs.get("pfmon_test::Heavy<long>::crunch(long)", 0) > 0
              and not any(f.startswith("_Z") for f in funcs),
              "a C++ program's profile: pfmon_test::Heavy<long>::crunch(long), demangled",
              f"rc {c['rc']}, functions {list(funcs)[:6]}; {err(c)[-300:]!r}")
    c = case("smpl_jit")
    if c:
        title, funcs, threads = profile_of(c)
        jit = [f for f in funcs if re.match(r"^jitted_spin \[perf-\d+\.map\]$", f)]
        judge(c["rc"] == 0 and jit and funcs[jit[0]] > 0,
              "code made at run time named by its /tmp/perf-PID.map: jitted_spin",
              f"rc {c['rc']}, functions {list(funcs)[:6]}; {err(c)[-300:]!r}")
    c = case("smpl_follow")
    if c:
        title, funcs, threads = profile_of(c)
        d = did(c)
        wl = {k: v for k, v in threads.items() if k[2] == "workload"}
        covered = {d[tid][0] for tid, _, _ in wl if tid in d}
        judge(c["rc"] == 0 and title and covered == {"main", "thread", "child"}
              and len({pid for _, pid, _ in wl}) == 2
              and any(re.match(r"^(traps|cpuids)$", f) for f in funcs),
              "--follow-all --smpl-period: every task sampled (main, thread, child: two processes), "
              "their CPUID loop in the profile",
              f"rc {c['rc']}, threads {threads}, did {d}, functions {list(funcs)[:6]}; {err(c)[-300:]!r}")
    c = case("smpl_attach")
    if c:
        title, funcs, threads = profile_of(c)
        judge(c["rc"] == 0 and title and re.search(r"of task \d+ \(.*workload\)", title)
              and "crunch_primes" in funcs,
              "--attach-task --smpl-period -t 2: the attached task's profile",
              f"rc {c['rc']}, {title!r}, functions {list(funcs)[:6]}; {err(c)[-300:]!r}")
    c = case("smpl_syswide")
    if c:
        # the host writes a system-wide sample without the guest's thread:
        # its user IPs belong to no process pfmon can name, its kernel
        # IPs resolve
        title, funcs, threads = profile_of(c)
        user = funcs.get("[user: no process named (a system-wide sample records no guest thread)]", 0)
        kern = sum(v for f, v in funcs.items() if f.endswith(" [kernel]"))
        judge(c["rc"] == 0 and title and "(system-wide)" in title and user > 0 and kern > 0
              and "never read" not in out(c) + err(c),
              f"--system-wide --smpl-period: {kern} kernel samples resolved, {user} user samples "
              "said to name no process",
              f"rc {c['rc']}, {title!r}, functions {list(funcs)[:6]}; {err(c)[-300:]!r}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: check_pfmon.py CONSOLE_LOG PFMON_C")
    main()
    sys.exit(JUDGE.verdict(f"{WHAT} cases"))
