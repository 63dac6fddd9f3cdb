#!/usr/bin/python3
"""causes.py - the table of a scripts/causes.sh run: per configuration the median over the
repetitions, min..max and n, and for each question the comparison by the interval rule (95%
bootstrap intervals of the medians apart, sbstats.order), so that no reader has to judge it.

    causes.py DIR [--out FILE]      (default: DIR/causes.md, and beside it causes.csv: every
                                    figure with its interval, for the claims table)

It refuses runs from two machines (machines.one_machine), as every table of the study does.
"""
import argparse
import csv
import glob
import os
import re

import machines
from sbread import read_run
from sbresults import die
from sbstats import median_ci, order
from targets import per_call_ns


def p99_us(cls):
    return lambda s, m: s["classes"][cls]["p99"] / 1e3 if cls in s.get("classes", {}) else None


def load(d):
    """{tag without -rN: {rep: (summary, meta)}} and the metas; lifo-togetherK-rN is kept per K."""
    runs, metas = {}, []
    for f in sorted(glob.glob(os.path.join(d, "*", "summary.json"))):
        m = re.fullmatch(r"(.+)-r(\d+)", os.path.basename(os.path.dirname(f)))
        if not m:
            continue
        run = read_run(os.path.dirname(f))
        metas.append(run["meta"])
        runs.setdefault(m.group(1), {})[int(m.group(2))] = (run["summary"], run["meta"])
    return runs, metas


def values(runs, tag, fn):
    return [v for v in (fn(s, m) for s, m in runs.get(tag, {}).values()) if v is not None]


def together(runs, fn, order="lifo"):
    """Per repetition, the median over the processes that ran at once (<order>-together1..K)."""
    reps = {}
    for tag, by_rep in runs.items():
        if re.fullmatch(order + r"-together\d+", tag):
            for r, (s, m) in by_rep.items():
                v = fn(s, m)
                if v is not None:
                    reps.setdefault(r, []).append(v)
    return [sorted(v)[len(v) // 2] for _, v in sorted(reps.items())], max((len(v) for v in reps.values()), default=0)


def fmt(x):
    return "-" if x is None else f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


CSV = []  # (configuration, metric, median, low, high, runs): causes.csv, for the claims table


def cell(vals, config=None, metric=None):
    if not vals:
        return "-"
    if config:
        CSV.append((config, metric) + median_ci(vals) + (len(vals),))
    return f"{fmt(median_ci(vals)[0])} ({fmt(min(vals))}..{fmt(max(vals))}, n={len(vals)})"


def verdict(name_a, a, name_b, b):
    if not a or not b:
        return "not run"
    return order(name_a, median_ci(a), name_b, median_ci(b), len(a), len(b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--out")
    a = ap.parse_args()
    runs, metas = load(a.dir)
    if not runs:
        die(f"{a.dir}: no runs (DIR/TAG-rN/summary.json): run scripts/causes.sh first")
    name = machines.one_machine([machines.of_meta(m) for m in metas], "causes.py")
    L = [f"# Cause experiments on {name}", "",
         "Medians over repetitions (min..max, n); the configurations of a group alternated in every "
         "repetition; comparisons by the interval rule (95% bootstrap intervals of the medians apart).", ""]

    for order_ in ("lifo", "fifo"):
        alone, wide = values(runs, f"{order_}-alone", per_call_ns), values(runs, f"{order_}-wide", per_call_ns)
        tog, k = together(runs, per_call_ns, order_)
        if not (alone or tog or wide):
            continue
        W = next((s["threads"] for s, m in runs.get(f"{order_}-wide", {}).values()), k)
        L += [f"## forkjoin fib(24), stealing local_order={order_}: ns per fib call", "",
              "| configuration | ns per fib call | a worker's rate against one alone |", "|---|---|---|"]
        base = median_ci(alone)[0] if alone else None
        for label, v, workers, tag in (("one 1-worker process alone", alone, 1, f"{order_}-alone"),
                                       (f"{k} 1-worker processes at once (median process)", tog, 1, f"{order_}-together"),
                                       (f"one {W}-worker process (wall time per call)", wide, W, f"{order_}-wide")):
            eff = f"{base / (median_ci(v)[0] * workers):.2f}" if v and base else "-"
            L.append(f"| {label} | {cell(v, tag, 'ns per call')} | {eff} |")
        L += ["", f"- processes at once against alone: {verdict('together', tog, 'alone', alone)}",
              f"- {W} workers x ns per call against the processes at once: "
              f"{verdict('wide', [x * W for x in wide], 'together', tog)}", ""]

    tiny = sorted({int(t.split("-")[2]) for t in runs if t.startswith("tiny-")})
    if tiny:
        thr = lambda s, m: s["throughput"] / 1e6
        L += ["## tiny (4 producers): M jobs/s", "", "| workers | " + " | ".join(("stealing", "fifo")) + " |",
              "|---|---|---|"]
        for w in tiny:
            L.append(f"| {w} | " + " | ".join(cell(values(runs, f"tiny-{p}-{w}", thr), f"tiny-{p}-{w}", "M jobs/s")
                                         for p in ("stealing", "fifo")) + " |")
        L.append("")
        for p in ("stealing", "fifo"):
            for x, y in zip(tiny, tiny[1:]):
                L.append(f"- {p}: {verdict(f'{y} workers', values(runs, f'tiny-{p}-{y}', thr), f'{x} workers', values(runs, f'tiny-{p}-{x}', thr))}")
        L.append("")

    counts = sorted({int(t.split("-")[2]) for t in runs if t.startswith("tinytry-")})
    if counts:
        thr = lambda s, m: s["throughput"] / 1e6
        sets = ("try1000", "try10", "try0", "fifo")
        L += ["## tiny (4 producers) with the idle workers' try count changed: M jobs/s", "",
              "| workers | stealing, worker_try_count 1000 | 10 | 0 | fifo |", "|---|---|---|---|---|"]
        for w in counts:
            L.append(f"| {w} | " + " | ".join(cell(values(runs, f"tinytry-{c}-{w}", thr), f"tinytry-{c}-{w}", "M jobs/s")
                                         for c in sets) + " |")
        L.append("")
        for w in counts:
            for c in sets[1:]:
                L.append(f"- {w} workers, {c} against try1000: "
                         f"{verdict(c, values(runs, f'tinytry-{c}-{w}', thr), 'try1000', values(runs, f'tinytry-try1000-{w}', thr))}")
        if len(counts) > 1:
            lo, hi = counts[0], counts[-1]
            for c in sets:
                L.append(f"- {c}: {verdict(f'{hi} workers', values(runs, f'tinytry-{c}-{hi}', thr), f'{lo} workers', values(runs, f'tinytry-{c}-{lo}', thr))}")
        L.append("")

    wake = [t for t in ("wake-try1000", "wake-try100", "wake-try10", "wake-try0", "wake-busy", "wake-fifo") if t in runs]
    if wake:
        cores = lambda s, m: s["cpu"]["window_cores"]
        p50 = lambda s, m: s["all"]["p50"] / 1e3
        p99 = lambda s, m: s["all"]["p99"] / 1e3
        L += ["## wake (one client per worker, 1 ms gaps)", "",
              "| setting | cores used | job p50 us | job p99 us |", "|---|---|---|---|"]
        for t in wake:
            L.append(f"| {t[5:]} | {cell(values(runs, t, cores), t, 'cores')} | {cell(values(runs, t, p50), t, 'p50 us')} "
                     f"| {cell(values(runs, t, p99), t, 'p99 us')} |")
        L.append("")
        for t in wake[1:]:
            for what, fn in (("cores", cores), ("p99", p99)):
                L.append(f"- {what}, {t[5:]} against try1000: "
                         f"{verdict(t[5:], values(runs, t, fn), 'try1000', values(runs, 'wake-try1000', fn))}")
        L.append("")

    oltp = [t for t in ("oltp-serial-mix", "oltp-stealing-mix", "oltp-serial-short", "oltp-stealing-short") if t in runs]
    if oltp:
        classes = ("point", "insert", "commit")
        L += ["## oltp (16 clients and 1,500 tx/s per worker): p99 us per statement class", "",
              "| policy, mix | " + " | ".join(classes) + " |", "|---|---|---|---|"]
        for t in oltp:
            L.append(f"| {t[5:]} | " + " | ".join(cell(values(runs, t, p99_us(c)), t, f"{c} p99 us") for c in classes) + " |")
        L.append("")
        for c in ("point", "insert"):
            for mix in ("mix", "short"):
                L.append(f"- {c}, {mix}: " + verdict("stealing", values(runs, f"oltp-stealing-{mix}", p99_us(c)),
                                                      "serial", values(runs, f"oltp-serial-{mix}", p99_us(c))))
            L.append(f"- {c}, stealing: " + verdict("short", values(runs, "oltp-stealing-short", p99_us(c)),
                                                     "mix", values(runs, "oltp-stealing-mix", p99_us(c))))
        L.append("")
    out = a.out or os.path.join(a.dir, "causes.md")
    with open(out, "w") as f:
        f.write("\n".join(L) + "\n")
    with open(os.path.splitext(out)[0] + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["config", "metric", "median", "low", "high", "runs"])
        w.writerows((c, m, f"{v:.6g}", f"{lo:.6g}", f"{hi:.6g}", n) for c, m, v, lo, hi, n in CSV)
    print(f"causes: {out} and its .csv")


if __name__ == "__main__":
    main()
