#!/usr/bin/python3
"""compare.py - policies side by side on one workload.

    compare.py COMPARE_DIR
        plot the runs of COMPARE_DIR: its manifest's, or any */summary.json below it
    compare.py --run --schedbed BIN --workload W [--policies a,b] [--reps N] [--allow-dirty] COMPARE_DIR [-- RUN ARGS]
        first run every policy (default: every registered one) REPS times with the same seed,
        alternating A B C A B C so that the machine's drift hits every policy alike, into
        COMPARE_DIR/<policy>/r<k>/, then plot

The runs are a manifest of the sweep runner (COMPARE_DIR/manifest.jsonl, status/, logs/): bad
input is refused before the first run, a run from a tree with uncommitted changes is refused
unless --allow-dirty marks it, every result must name the commit it measured, and the same
command again on the same directory resumes where it stopped (--retry-failed reruns the failed).

Writes into COMPARE_DIR: compare_throughput, compare_p99 and compare_cdf (PNG and PDF), and
compare.csv (one row per policy: median, min and max of throughput and of p99 over the runs), for
scripts. Medians with min..max, never a single run: this machine is shared and noisy. Knows no
policy or workload by name.
"""
import argparse
import csv
import glob
import os
import sys

import sbverdict
from sbrun import line_state, run_manifest
from sbdesc import MANIFEST, read_manifest
from sbresults import (np, cdf, die, fmt_rate, job_latencies, read_run, main_classes, parse_with_passthrough, plt,
                       policy_names, save, split_list)

VERDICT_METRICS = ("throughput (jobs/s)", "p50 all", "p99 all")


# a jobs.csv.gz row takes about 23 bytes compressed (an oltp run); schedbed writes rows only for
# windows of up to --rows jobs, beyond that only latency-hist.json.gz (a few KB)
ROW_BYTES, DEFAULT_ROWS = 23, 1000000


def plan(npol, reps, extra):
    """One line before the first run: how many runs, how long, and the most they can write."""
    def opt(names, default):
        for i, x in enumerate(extra[:-1]):
            if x in names:
                return float(extra[i + 1])
        return default
    n = npol * reps
    if opt(("--jobs", "-n"), 0):
        each, length = None, "bounded by --jobs"
    else:
        each = opt(("--warmup",), 1.0) + opt(("--duration", "-d"), 10.0)
        length = f"about {each:g} s each"
    drain = opt(("--drain",), 5.0)
    most = (ROW_BYTES * opt(("--rows",), DEFAULT_ROWS) + 100e3) * n
    when = (f": at least {n * each / 60:.1f} min, at most {n * (each + drain + 1) / 60:.1f} min with the drain"
            if each else "")
    return (f"compare: {npol} policies x {reps} rounds = {n} runs, {length}{when}; at most about "
            f"{most / 1e6:.0f} MB in all (per-job rows only for windows of up to --rows jobs)")


def manifest_lines(policies, reps, base, extra):
    """Round k runs every policy once, A B C A B C, so that the machine's drift hits every policy
    alike; every run keeps its per-job files (the CDF figure reads them)."""
    return [{"id": f"{p}.r{k}", "out": f"{p}/r{k}", "program": "schedbed", "timing": True, "slim": False,
             "args": base + ["--policy", p] + extra, "tags": {"policy": p, "rep": k}}
            for k in range(1, reps + 1) for p in policies]


def do_runs(a, extra):
    policies = split_list(a.policies, "--policies") if a.policies else policy_names(a.schedbed)
    base = ["--workload", a.workload, "--seed", str(a.seed)] + (["--threads", str(a.threads)] if a.threads else [])
    lines = manifest_lines(policies, a.reps, base, extra)
    print(plan(len(policies), a.reps, extra), file=sys.stderr)
    resume = f"{os.path.basename(sys.argv[0])} {' '.join(sys.argv[1:])} --retry-failed"
    return run_manifest(a.dir, lines, a.schedbed, allow_dirty=a.allow_dirty, retry_failed=a.retry_failed,
                        resume=resume)


def collect(root):
    """The runs of a comparison in the order they ran (the first policy is the reference): its
    manifest's lines, or, for a directory without one, every summary.json below it by time."""
    if os.path.exists(os.path.join(root, MANIFEST)):
        lines = read_manifest(root)
        bad = [f"{ln['id']} ({why})" for ln in lines for state, why in [line_state(root, ln)] if state != "done"]
        if bad:
            die(f"{root}: {len(bad)} of {len(lines)} runs are not done: {', '.join(bad[:4])}"
                f"{' ...' if len(bad) > 4 else ''} (compare.py --run resumes them)", 1)
        runs = [read_run(os.path.join(root, ln["out"])) for ln in lines]
    else:
        found = glob.glob(os.path.join(root, "**", "summary.json"), recursive=True)
        runs = [read_run(os.path.dirname(s)) for s in sorted(found, key=os.path.getmtime)]
        runs = [r for r in runs if not r["summary"].get("failure") and r["summary"]["reconciliation"]["ok"]]
    if not runs:
        die(f"{root}: no successful runs (summary.json) below it")
    workloads = {r["summary"]["workload"] for r in runs}
    if len(workloads) > 1:
        die(f"{root}: runs of several workloads ({', '.join(sorted(workloads))}); compare one at a time")
    by = {}
    for r in runs:
        by.setdefault(r["summary"]["policy"], []).append(r)
    try:  # one policy's runs with two settings, or runs of two machines, answer no question
        sbverdict.check_pool(by, across=[k for k in sbverdict.SETTING_KEYS if k != "policy"])
    except sbverdict.PoolError as e:
        die(f"{root}: {e}", 1)
    return workloads.pop(), by


def left_out(runs, shown):
    """The classes a figure leaves out (it shows those with the most jobs), said in its title."""
    rest = [c for c in main_classes(runs, most=10 ** 6) if c not in shown]
    return f"; not shown (fewer jobs): {', '.join(rest)}" if rest else ""


def verdicts(by):
    """Every policy against the first, by the study's rule: printed at the end of make compare."""
    names = list(by)
    ref = names[0]
    print(f"against {ref} ({len(by[ref])} runs), medians with 95% bootstrap intervals; an ordering only where "
          f"the intervals do not overlap:")
    for p in names[1:]:
        lines = sbverdict.table(ref, by[ref], p, by[p], only=VERDICT_METRICS)
        print(f"{p} ({len(by[p])} runs):")
        for text in lines:
            print("  " + text)


def spread(values):
    v = np.asarray([x for x in values if x is not None], dtype=float)
    if not len(v):
        return (np.nan, np.nan, np.nan)
    return (float(np.median(v)), float(v.min()), float(v.max()))


def bars(ax, names, stats, colour):
    med = np.array([s[0] for s in stats])
    lo = med - np.array([s[1] for s in stats])
    hi = np.array([s[2] for s in stats]) - med
    x = np.arange(len(names))
    ax.bar(x, med, color=colour, yerr=[lo, hi], capsize=4, ecolor="black")
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=20, ha="right")
    return x, med


def subtitle(by):
    n = sorted({len(v) for v in by.values()})
    first = next(iter(by.values()))[0]["summary"]
    reps = f"{n[0]}" if len(n) == 1 else f"{n[0]}-{n[-1]}"
    return f"{first['threads']} workers, {first['window_s']:.0f} s windows, median of {reps} runs, bars: min..max"


def plot(root):
    workload, by = collect(root)
    names = list(by)
    runs = [r for v in by.values() for r in v]
    thr = [spread([r["summary"]["throughput"] for r in by[p]]) for p in names]
    p99 = [spread([r["summary"]["all"]["p99"] for r in by[p]]) for p in names]

    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(names) + 2), 4.4))
    x, med = bars(ax, names, thr, "tab:blue")
    for xi, m in zip(x, med):
        ax.annotate(fmt_rate(m), (xi, m), ha="center", va="bottom", fontsize="small", xytext=(0, 3),
                    textcoords="offset points")
    if np.nanmax(med) > 30 * max(np.nanmin(med), 1e-9):
        ax.set_yscale("log")  # one slow policy would flatten the others to nothing
        ax.set_ylabel("throughput (jobs/s, log scale)")
    else:
        ax.set_ylabel("throughput (jobs/s)")
    ax.set_title(f"{workload}: throughput per policy\n{subtitle(by)}")
    fig.tight_layout()
    out = [save(fig, root, "compare_throughput")]

    classes = main_classes(runs, most=6)
    fig, ax = plt.subplots(figsize=(min(15, max(7, 0.25 * len(classes) * len(names) + 3)), 4.8))
    width = 0.8 / len(names)
    for i, p in enumerate(names):
        st = [spread([r["summary"]["classes"].get(c, {}).get("p99") for r in by[p]]) for c in classes]
        med = np.array([s[0] for s in st]) / 1e3
        err = [med - np.array([s[1] for s in st]) / 1e3, np.array([s[2] for s in st]) / 1e3 - med]
        ax.bar(np.arange(len(classes)) + (i - (len(names) - 1) / 2) * width, med, width, yerr=err, capsize=2,
               label=p, color=plt.cm.tab10(i % 10))
    ax.set_xticks(np.arange(len(classes)))
    ax.set_xticklabels(classes)
    ax.set_yscale("log")
    ax.set_xlabel("job class")
    ax.set_ylabel("p99 latency (µs, log scale)")
    ax.set_title(f"{workload}: p99 latency per job class and policy{left_out(runs, classes)}\n{subtitle(by)}")
    ax.legend(title="policy", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    out.append(save(fig, root, "compare_p99"))

    main = main_classes(runs, most=3)
    fig, axes = plt.subplots(1, len(main), figsize=(5.2 * len(main), 4.4), squeeze=False)
    for ax, c in zip(axes[0], main):
        for i, p in enumerate(names):
            lat = [job_latencies(r["dir"]).get(c) for r in by[p]]
            lat = [v for v in lat if v is not None and len(v)]
            if lat:
                cdf(ax, np.concatenate(lat), p, color=plt.cm.tab10(i % 10))
        ax.set_title(f"class {c}")
        ax.legend(title="policy", loc="lower right")
    fig.suptitle(f"{workload}: job latency CDF per policy (all runs pooled){left_out(runs, main)}")
    fig.tight_layout()
    out.append(save(fig, root, "compare_cdf"))

    with open(os.path.join(root, "compare.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["policy", "runs", "throughput_median", "throughput_min", "throughput_max", "p99_us_median",
                    "p99_us_min", "p99_us_max"])
        for p, t, q in zip(names, thr, p99):
            w.writerow([p, len(by[p])] + [f"{v:.6g}" for v in t] + [f"{v / 1e3:.6g}" for v in q])
    out.append(os.path.join(root, "compare.csv"))
    for p in out:
        print(p)
    for stem, shown in (("compare_p99", classes), ("compare_cdf", main)):
        if left_out(runs, shown):
            print(f"{stem}: the {len(shown)} classes with the most jobs{left_out(runs, shown)}")
    verdicts(by)


def main():
    ap = argparse.ArgumentParser(description="Compare policies on one workload (runs them first with --run).",
                                 epilog="Arguments after -- go to every schedbed run, e.g. -- --duration 5 --set k=v")
    ap.add_argument("dir", help="the comparison directory")
    ap.add_argument("--run", action="store_true", help="run the policies first")
    ap.add_argument("--schedbed", default="build/release/schedbed", help="the program (default %(default)s)")
    ap.add_argument("--workload", help="workload to run (with --run)")
    ap.add_argument("--policies", help="comma-separated policies (default: every registered one)")
    ap.add_argument("--reps", type=int, default=3, help="rounds over all policies (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="one seed for every run (default %(default)s)")
    ap.add_argument("--threads", type=int, help="worker threads")
    ap.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes "
                    "(every result is marked dirty)")
    ap.add_argument("--retry-failed", action="store_true", help="with --run on a directory that has this "
                    "comparison's manifest: rerun the runs that failed or were interrupted")
    a, extra = parse_with_passthrough(ap)
    if a.run:
        if not a.workload:
            die("--run needs --workload")
        if a.reps < 1:
            die("--reps must be at least 1")
        rc = do_runs(a, extra)
        if rc:
            return rc
    elif extra:
        die(f"unexpected arguments {extra} (run arguments go with --run)")
    plot(a.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
