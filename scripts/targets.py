#!/usr/bin/python3
"""targets.py - the table of a scripts/targets.sh run: every row's median over its repetitions,
min..max and the 95% interval, the earlier build ("old") beside the carried one ("new") with the
interval rule's verdict between them, and the many-core targets judged by the same rule.

    targets.py DIR [--out FILE]      (default: DIR/targets.md)

It refuses runs from two machines (machines.one_machine), as every table of the study does.
"""
import argparse
import csv
import glob
import os
import re
import sys

import machines
from sbread import read_run
from sbresults import die
from sbstats import NO_DIFFERENCE, median_ci, order
from sbverdict import lock_share
from scale import fib_calls

VERSIONS = ("old", "new")


def per_call_ns(s, m):
    """ns of wall time per fib call: the window's task rate over the tasks a fib(n) job makes (n
    from the run's meta.json)."""
    n = int(m["workload"]["params"]["n"])
    r = s.get("reconciliation") or {}
    if not r.get("jobs_done") or not r.get("tasks_created") or not s.get("tasks_per_s"):
        return None
    return 1e9 / (s["tasks_per_s"] * fib_calls(n) / (r["tasks_created"] / r["jobs_done"]))


def p99_us(cls):
    return lambda s, m: s["classes"][cls]["p99"] / 1e3 if cls in s.get("classes", {}) else None


# row prefix -> (what, unit, value of one run's summary, higher is better)
ROWS = {
    "fib32lifo": ("fib(n), stealing local_order=lifo (n=32 unless TARGETS_FIB_N)", "ns per fib call", per_call_ns, False),
    "fj": ("forkjoin defaults (fib(24), FIFO), stealing unless the config names a policy", "ns per fib call", per_call_ns, False),
    "fj-lock": ("the same runs: the workers' waits for the core's locks", "% of busy time", lambda s, m: lock_share({"summary": s}), False),
    "fjlifo": ("forkjoin fib(24), stealing local_order=lifo", "ns per fib call", per_call_ns, False),
    "tiny": ("tiny, stealing", "M jobs/s", lambda s, m: s["throughput"] / 1e6, True),
    "oltp24k": ("oltp, 16 clients and 1,500 tx/s per worker (16 workers unless TARGETS_WIDE)", "commit p99 us", p99_us("commit"), False),
    "oltp24k-point": ("the same runs", "point p99 us", p99_us("point"), False),
    "oltp24k-insert": ("the same runs", "insert p99 us", p99_us("insert"), False),
    "wake": ("wake, one client per worker, 1 ms gaps (16 workers unless TARGETS_WIDE)", "cores used", lambda s, m: s["cpu"]["window_cores"], False),
}


def load(d):
    """{(row, config, version): [summary]} and the metas, from DIR/{old,new}/TAG-rN/."""
    runs, metas = {}, []
    for v in VERSIONS:
        for f in sorted(glob.glob(os.path.join(d, v, "*", "summary.json"))):
            tag = re.sub(r"-r\d+$", "", os.path.basename(os.path.dirname(f)))
            run = read_run(os.path.dirname(f))
            s, m = run["summary"], run["meta"]
            metas.append(m)
            prefix, _, config = tag.partition("-")
            rows = [prefix] + {"oltp24k": ["oltp24k-point", "oltp24k-insert"], "fj": ["fj-lock"]}.get(prefix, [])
            for r in rows:
                runs.setdefault((r, config, v), []).append((s, m))
    return runs, metas


def peers(d):
    """{(peer, workers): [ns per task]} from DIR/peer/PEER-fib32-wN-rK.txt (the peers' first number)."""
    out = {}
    for f in glob.glob(os.path.join(d, "peer", "*-fib32-w*-r*.txt")):
        m = re.match(r"(\w+)-fib32-w(\d+)-r\d+\.txt$", os.path.basename(f))
        with open(f) as fh:
            first = fh.read().split()
        if m and first:
            out.setdefault((m.group(1), int(m.group(2))), []).append(float(first[0]))
    return out


def fmt(x):
    return "-" if x is None else f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


def cell(values):
    if not values:
        return "-", None
    ci = median_ci(values)
    return f"{fmt(ci[0])} ({fmt(min(values))}..{fmt(max(values))}, n={len(values)})", ci


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--out")
    a = ap.parse_args()
    runs, metas = load(a.dir)
    if not runs:
        die(f"{a.dir}: no runs (DIR/old/TAG-rN/summary.json and DIR/new/...): run scripts/targets.sh first")
    name = machines.one_machine([machines.of_meta(m) for m in metas], "targets.py")
    vals = {k: [v for v in (ROWS[k[0]][2](s, m) for s, m in ss) if v is not None] for k, ss in runs.items()}
    lines = [f"# Many-core rows on {name}", "",
             "Medians over repetitions (min..max, n runs); old and new alternated in every repetition; "
             "verdict by the interval rule (95% bootstrap intervals of the medians apart).", "",
             "| row | config | unit | old | new | new against old |", "|---|---|---|---|---|---|"]
    def natural(c):
        return (0, int(c[1:]), "") if re.fullmatch(r"w\d+", c) else (1, 0, c)
    for (row, config, _v) in sorted({(r, c, "") for r, c, _ in vals}, key=lambda k: (list(ROWS).index(k[0]), natural(k[1]))):
        what, unit, _, higher = ROWS[row]
        o, n = vals.get((row, config, "old"), []), vals.get((row, config, "new"), [])
        (so, co), (sn, cn) = cell(o), cell(n)
        verdict = order("new", cn, "old", co, len(n), len(o)) if co and cn else NO_DIFFERENCE
        if verdict != NO_DIFFERENCE:
            better = (cn[0] > co[0]) == higher
            verdict += " (better)" if better else " (worse)"
        lines.append(f"| {what} | {config} | {unit} | {so} | {sn} | {verdict} |")
    pr = peers(a.dir)
    if pr:
        lines += ["", "| peer, fib(n) | workers | ns per task |", "|---|---|---|"]
        lines += [f"| {p} | {w} | {cell(v)[0]} |" for (p, w), v in sorted(pr.items())]
    lines += ["", "## Targets (new build)", ""]
    for row, goal in (("fib32lifo", 14), ("fjlifo", 10)):
        one, six = vals.get((row, "w1", "new"), []), vals.get((row, "w16", "new"), [])
        if one and six:
            c1, c16 = median_ci(one), median_ci(six)
            # speedup = 1-worker time / 16-worker time; its range from the intervals' ends
            lo, mid, hi = c1[1] / c16[2], c1[0] / c16[0], c1[2] / c16[1]
            met = "met" if lo >= goal else "not met" if hi < goal else "undecided"
            lines.append(f"- {ROWS[row][0]}: at least {goal}x at 16 workers over 1: **{met}** "
                         f"({mid:.1f}x, {lo:.1f}x to {hi:.1f}x from the intervals)")
    six = vals.get(("fib32lifo", "w16", "new"), [])
    if six:
        c = median_ci(six)
        met = "met" if c[2] <= 4 else "not met" if c[1] > 4 else "undecided"
        lines.append(f"- fib(32) LIFO at most 4 ns per call at 16 workers: **{met}** ({fmt(c[0])} ns, "
                     f"interval {fmt(c[1])}..{fmt(c[2])})")
    t4, t16 = vals.get(("tiny", "w4", "new"), []), vals.get(("tiny", "w16", "new"), [])
    if t4 and t16:
        v = order("16 workers", median_ci(t16), "4 workers", median_ci(t4), len(t16), len(t4))
        lines.append(f"- tiny no lower at 16 workers than at 4: **{'not met' if '<' in v else 'met'}** ({v})")
    st, se = vals.get(("oltp24k", "stealing", "new"), []), vals.get(("oltp24k", "serial", "new"), [])
    if st and se:
        cs, cr = median_ci(st), median_ci(se)
        met = "met" if cs[2] <= 3 * cr[1] else "not met" if cs[1] > 3 * cr[2] else "undecided"
        lines.append(f"- oltp 24,000 tx/s: stealing's commit p99 within 3x serial's: **{met}** "
                     f"({fmt(cs[0])} against {fmt(cr[0])} us)")
    text = "\n".join(lines) + "\n"
    out = a.out or os.path.join(a.dir, "targets.md")
    with open(out + ".tmp", "w") as f:
        f.write(text)
    os.replace(out + ".tmp", out)
    # beside it, every cell with its interval, for the claims table (scripts/claims.py reads csv:)
    csv_out = os.path.splitext(out)[0] + ".csv"
    with open(csv_out + ".tmp", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["row", "config", "version", "unit", "median", "low", "high", "runs"])
        for (row, config, v), xs in sorted(vals.items()):
            if xs:
                w.writerow([row, config, v, ROWS[row][1], *(f"{x:.6g}" for x in median_ci(xs)), len(xs)])
    os.replace(csv_out + ".tmp", csv_out)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
