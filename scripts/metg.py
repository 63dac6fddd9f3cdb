#!/usr/bin/python3
"""metg.py - METG(50%) of every policy and of the OpenMP and oneTBB peers on the task graphs of
the `patterns` workload: the smallest task granularity at which a system still reaches half of
the machine's peak FLOP/s (TaskBench, Slaughter et al., SC 2020).

    metg.py --schedbed PATH --out DIR [--patterns a,b] [--policies a,b] [--peers omp,tbb]
            [--threads 2] [--width 4] [--steps 100] [--graphs 1] [--reps 3]
            [--max-iterations 32768] [--min-iterations 1]
    metg.py --report DIR        (tables and figures again from DIR/points.csv)

Method. Peak: every system runs the trivial graph with the compute_bound kernel at 4 x
--max-iterations per task, --reps times; the peer (or, without peers, the system) with the best
median FLOP/s there becomes the probe. On a shared machine the FLOP/s one core delivers moves
several times over from minute to minute (neighbours' load), so one peak measured at the start
would make the curves measure the neighbours: the probe runs that peak configuration again
between every two runs of the sweep, and each run is compared with the mean of the two probes
around it (the row's peak_flops; efficiency_start keeps the comparison with the first peak).
Once per level the probe also runs on one thread; the table states how many cores the probes
found free (all threads' FLOP/s over one thread's), because on a machine that leaves fewer cores
free than there are threads even serial work can look parallel.

Sweep: for each repetition (seed = rep number), pattern and iteration count (from
--max-iterations down by powers of two), every system runs, in an order that rotates from level
to level, a bounded run of several executions of the graph; the first execution is a warm-up
and is dropped. From the run's median execution: FLOP/s = FLOP of an execution / its wall time,
efficiency = FLOP/s / peak, granularity = wall time x threads / tasks (TaskBench's definition:
the average task's share of the machine). A system stops going down once its efficiency is
below --stop-below.

METG(50%) of one repetition: the finest point at or above 50%, interpolated linearly in
log(granularity) towards the next finer point; reported as the median over repetitions with
min..max. "not reached" when no point reaches 50%, "< g" when none falls below it.

Writes DIR/points.csv (one row per run), DIR/metg.csv and DIR/metg.md (the table),
DIR/peak.json, DIR/metg-N.png/.pdf (efficiency against granularity, log-log, one line per system,
at most four patterns per figure). Each schedbed run's directory is deleted once read unless
--keep-runs. Peers: build/release/patterns_omp and patterns_tbb next to schedbed (make peers).
"""
import argparse
import csv
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time

import numpy as np

from sbresults import PROG, die, job_latencies, load_json, plt, policy_names, save, split_list

PATTERNS = ["trivial", "no_comm", "stencil_1d", "stencil_1d_periodic", "dom", "tree", "fft", "nearest", "spread",
            "random_nearest"]
PEERS = {"omp": ("patterns_omp", "OpenMP tasks (depend)"), "tbb": ("patterns_tbb", "oneTBB flow graph")}
FLOP_PER_ITER = 16  # workloads/taskgraph.h TG_FLOP_PER_ITER
TARGET_S = 0.03     # measured wall time aimed at per run
FIELDS = ["system", "kind", "pattern", "iterations", "rep", "executions", "tasks", "wall_ns", "wall_min_ns",
          "wall_max_ns", "flop", "flops", "peak_flops", "efficiency", "efficiency_start", "granularity_us",
          "busiest_worker_share"]


class Sweep:
    def __init__(self, a):
        self.a = a
        self.bindir = os.path.dirname(os.path.abspath(a.schedbed))
        self.runs = 0
        self.t0 = time.monotonic()
        self.ns_per_iter = None  # per task-iteration on one core, from the peak runs

    def shape(self, pattern, iterations, steps):
        return {"pattern": pattern, "kernel": "compute_bound", "width": self.a.width, "steps": steps,
                "graphs": self.a.graphs, "iterations": iterations}

    def executions(self, iterations, steps):
        """Executions per run: enough for about TARGET_S of measurement, 6..50, one of them a warm-up."""
        if not self.ns_per_iter:
            return 6
        est = max(iterations, 1) * self.ns_per_iter * self.a.width * steps * self.a.graphs / self.a.threads
        return int(min(50, max(6, math.ceil(TARGET_S / (est * 1e-9)) + 1)))

    def run_policy(self, policy, shape, rep, execs, threads):
        out = os.path.join(self.a.out, "runs", f"{policy}-{shape['pattern']}-{shape['iterations']}-r{rep}")
        args = [self.a.schedbed, "run", "--quiet", "--out", out, "--policy", policy, "--workload", "patterns",
                "--threads", str(threads), "--warmup", "0", "--jobs", str(execs), "--seed", str(rep)]
        for k, v in shape.items():
            args += ["--set", f"{k}={v}"]
        p = subprocess.run(args, capture_output=True, text=True)
        if p.returncode == 2:
            die(p.stderr.strip() or f"schedbed exited 2 for {args}")
        if p.returncode != 0:
            die(f"{policy} failed on {shape['pattern']} (exit {p.returncode}): "
                f"{(p.stderr.strip().splitlines() or ['no message'])[-1]}", 1)
        s = load_json(os.path.join(out, "summary.json"))
        lat = np.concatenate(list(job_latencies(out).values()))
        if len(lat) != execs:
            die(f"{out}: {len(lat)} jobs recorded of {execs}", 1)
        # tasks per execution: the workload's tasks less the one launcher task of each job
        per_exec = s["reconciliation"]["tasks_created"] // execs - 1
        # how much of the work one worker did: 1.0 means the other threads never took part
        with open(os.path.join(out, "workers.csv"), newline="") as f:
            ran = [int(w["tasks"]) for w in csv.DictReader(f) if w["worker"].isdigit()]
        share = max(ran) / sum(ran) if sum(ran) else ""
        if not self.a.keep_runs:
            shutil.rmtree(out, ignore_errors=True)
        return [int(x) for x in lat[1:]], per_exec, share

    def run_peer(self, peer, shape, rep, execs, threads):
        exe = os.path.join(self.bindir, PEERS[peer][0])
        if not os.access(exe, os.X_OK):
            die(f"{exe} is missing (make peers builds it)")
        args = [exe, "--threads", str(threads), "--reps", str(execs), "--seed", str(rep)]
        for k, v in shape.items():
            args += [f"--{k}", str(v)]
        p = subprocess.run(args, capture_output=True, text=True)
        if p.returncode != 0:
            die(f"{PEERS[peer][0]} failed on {shape['pattern']} (exit {p.returncode}): {p.stderr.strip()}",
                p.returncode)
        rows = list(csv.DictReader(p.stdout.splitlines()))
        return [int(r["wall_ns"]) for r in rows[1:]], int(rows[0]["tasks"]), ""

    def point(self, system, shape, rep, label, threads=None):
        kind, name = system
        threads = threads or self.a.threads
        execs = self.executions(shape["iterations"], shape["steps"])
        fn = self.run_peer if kind == "peer" else self.run_policy
        walls, tasks, share = fn(name, shape, rep, execs, threads)
        self.runs += 1
        # the median execution: a neighbour's burst on the shared machine moves it less than a sum
        wall = float(np.median(walls))
        flop = tasks * shape["iterations"] * FLOP_PER_ITER
        row = {"system": name, "kind": kind, "pattern": shape["pattern"], "iterations": shape["iterations"], "rep": rep,
               "executions": len(walls), "tasks": tasks, "wall_ns": round(wall), "wall_min_ns": min(walls),
               "wall_max_ns": max(walls), "flop": flop, "flops": flop / (wall * 1e-9), "peak_flops": None,
               "efficiency": None, "efficiency_start": None,
               "granularity_us": wall * 1e-3 * threads / tasks, "busiest_worker_share": share}
        print(f"{PROG}: {time.monotonic() - self.t0:6.0f} s  {label:<10} {name:<13} {shape['pattern']:<20} "
              f"iter {shape['iterations']:>6}  rep {rep}  {row['granularity_us']:9.2f} us  "
              f"{row['flops'] / 1e9:6.2f} GFLOP/s", file=sys.stderr, flush=True)
        return row


def systems_of(a):
    pols = split_list(a.policies, "--policies") if a.policies else policy_names(a.schedbed)
    known = policy_names(a.schedbed)
    for p in pols:
        if p not in known:
            die(f"--policies: unknown policy '{p}'; valid: {', '.join(known)}")
    peers = split_list(a.peers, "--peers") if a.peers else []
    for p in peers:
        if p not in PEERS:
            die(f"--peers: unknown peer '{p}'; valid: {', '.join(PEERS)}")
    return [("policy", p) for p in pols] + [("peer", p) for p in peers]


def measure(a):
    patterns = split_list(a.patterns, "--patterns") if a.patterns else PATTERNS
    for p in patterns:
        if p not in PATTERNS:
            die(f"--patterns: unknown pattern '{p}'; valid: {', '.join(PATTERNS)}")
    if a.min_iterations < 1 or a.max_iterations < a.min_iterations:
        die("--min-iterations must be >= 1 and <= --max-iterations")
    systems = systems_of(a)
    if os.path.exists(a.out) and os.listdir(a.out):
        die(f"{a.out} exists and is not empty; give a new directory")
    os.makedirs(os.path.join(a.out, "runs"), exist_ok=True)
    sw = Sweep(a)
    rows = []
    # peak: large tasks, no dependences, few steps (each execution stays near TARGET_S)
    peak_shape = dict(sw.shape("trivial", 4 * a.max_iterations, 8))
    for rep in range(1, a.reps + 1):
        for system in systems[rep % len(systems):] + systems[:rep % len(systems)]:
            r = sw.point(system, peak_shape, rep, "peak")
            r["pattern"] = "peak"
            rows.append(r)
    medians = {s[1]: float(np.median([r["flops"] for r in rows if r["system"] == s[1]])) for s in systems}
    # the probe must keep every thread busy whatever the scheduler under test does wrong: a peer
    # when there is one (a policy that leaves a core idle would otherwise set the yardstick)
    candidates = [s[1] for s in systems if s[0] == "peer"] or list(medians)
    peak_system = max(candidates, key=medians.get)
    peak = medians[peak_system]
    sw.ns_per_iter = FLOP_PER_ITER * a.threads / peak * 1e9
    its = []
    i = a.max_iterations
    while i >= a.min_iterations:
        its.append(i)
        i //= 2
    turn = 0
    for rep in range(1, a.reps + 1):
        for pattern in patterns:
            live = list(systems)
            for it in its:
                shape = sw.shape(pattern, it, a.steps)
                prober = ("peer" if peak_system in PEERS else "policy", peak_system)
                one = sw.point(prober, peak_shape, rep, "probe-1", threads=1)
                one["pattern"] = "probe-1"
                rows.append(one)
                turn += 1
                order = live[turn % len(live):] + live[:turn % len(live)] if live else []

                def probe():
                    r = sw.point(prober, peak_shape, rep, "probe")
                    r["pattern"] = "probe"
                    rows.append(r)
                    return r

                # a probe between every two runs: each run is compared with the mean of the two
                # around it, the machine's capacity at that moment
                before = probe()
                for system in order:
                    r = sw.point(system, shape, rep, "sweep")
                    after = probe()
                    r["peak_flops"] = (before["flops"] + after["flops"]) / 2
                    rows.append(r)
                    before = after
                    if r["flops"] / r["peak_flops"] < a.stop_below:
                        live.remove(system)
                if not live:
                    break
    shutil.rmtree(os.path.join(a.out, "runs"), ignore_errors=True) if not a.keep_runs else None
    for r in rows:
        if not r["peak_flops"]:
            r["peak_flops"] = r["flops"] if r["pattern"] == "probe" else peak
        r["efficiency"] = r["flops"] / r["peak_flops"]
        r["efficiency_start"] = r["flops"] / peak
    with open(os.path.join(a.out, "points.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        # four significant digits: the machine's noise is far larger, and the file stays small
        w.writerows({k: f"{v:.4g}" if isinstance(v, float) else v for k, v in r.items()} for r in rows)
    git = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    with open(os.path.join(a.out, "peak.json"), "w") as f:
        json.dump({"peak_flops": peak, "peak_system": peak_system, "peak_medians": medians,
                   "peak_iterations": peak_shape["iterations"], "threads": a.threads, "width": a.width, "steps": a.steps,
                   "graphs": a.graphs, "reps": a.reps, "stop_below": a.stop_below, "host": platform.node(),
                   "cpus": os.cpu_count(), "git": git, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "command": sys.argv}, f, indent=2)
    print(f"{PROG}: {sw.runs} runs in {time.monotonic() - sw.t0:.0f} s; peak {peak / 1e9:.2f} GFLOP/s",
          file=sys.stderr)


# ---- analysis ----

def metg_of(curve):
    """(granularity_us, status) of one repetition's curve [(granularity, efficiency)], largest first:
    the finest point at or above 50%, interpolated towards the next finer one. A dip further up
    (a neighbour's burst) does not move it; the definition asks for the smallest granularity."""
    ok = [k for k, (_, e) in enumerate(curve) if e >= 0.5]
    if not ok:
        return math.inf, "not reached"
    k = ok[-1]
    if k + 1 == len(curve):
        return curve[k][0], "below"
    (g1, e1), (g2, e2) = curve[k], curve[k + 1]
    x = math.log(g1) + (0.5 - e1) * (math.log(g2) - math.log(g1)) / (e2 - e1)
    return math.exp(x), "ok"


def read_points(root):
    path = os.path.join(root, "points.csv")
    if not os.path.exists(path):
        die(f"{root} has no points.csv: not a metg.py output directory")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("iterations", "rep", "tasks", "wall_ns", "flop"):
            r[k] = int(r[k])
        for k in ("flops", "peak_flops", "efficiency", "efficiency_start", "granularity_us"):
            r[k] = float(r[k])
    return rows


def label_of(system, kind):
    return PEERS[system][1] if kind == "peer" else system


def fmt_us(v):
    return f"{v:.3g}"


def report(root):
    rows = read_points(root)
    probes = [r["flops"] for r in rows if r["pattern"] == "probe"]
    # cores the probes found free: a level's one-thread probe against the all-thread probe after it
    free, one = [], None
    for r in rows:
        if r["pattern"] == "probe-1":
            one = r
        elif r["pattern"] == "probe" and one:
            free.append(r["flops"] / one["flops"])
            one = None
    rows = [r for r in rows if r["pattern"] not in ("peak", "probe", "probe-1")]
    systems = list(dict.fromkeys((r["system"], r["kind"]) for r in rows))
    patterns = [p for p in PATTERNS if any(r["pattern"] == p for r in rows)]
    table = []
    for pattern in patterns:
        for system, kind in systems:
            mine = [r for r in rows if r["pattern"] == pattern and r["system"] == system]
            per_rep = []
            for rep in sorted({r["rep"] for r in mine}):
                # in sweep order (iterations down), not by granularity: overhead can make a system's
                # granularity grow again as its tasks shrink
                curve = [(r["granularity_us"], r["efficiency"])
                         for r in sorted((r for r in mine if r["rep"] == rep), key=lambda r: -r["iterations"])]
                per_rep.append(metg_of(curve))
            vals = [v for v, s in per_rep]
            statuses = {s for _, s in per_rep}
            status = "ok" if statuses == {"ok"} else "/".join(sorted(statuses))
            shares = [float(r["busiest_worker_share"]) for r in mine if r["busiest_worker_share"]]
            table.append({"pattern": pattern, "system": system, "kind": kind, "reps": len(per_rep),
                          "metg_us": float(np.median(vals)), "min_us": min(vals), "max_us": max(vals),
                          "best_efficiency": max(r["efficiency"] for r in mine), "status": status,
                          "busiest_worker_share": float(np.median(shares)) if shares else ""})
    with open(os.path.join(root, "metg.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    peak = load_json(os.path.join(root, "peak.json"))
    lines = [f"METG(50%) in µs, median (min..max) over {peak['reps']} repetitions; {peak['threads']} threads, width "
             f"{peak['width']}, {peak['steps']} steps, compute_bound; peak probed between every two runs with "
             f"{label_of(peak['peak_system'], 'peer' if peak['peak_system'] in PEERS else 'policy')}: median "
             f"{np.median(probes) / 1e9:.2f} GFLOP/s ({min(probes) / 1e9:.2f}..{max(probes) / 1e9:.2f}); cores the "
             f"probe found free: median {np.median(free):.2f} ({min(free):.2f}..{max(free):.2f}) of {peak['threads']}. "
             "\"n/r\": 50% not reached (best efficiency in brackets); \"<g\": still above 50% at the finest point.", "",
             "| system | " + " | ".join(patterns) + " | busiest worker's share of the tasks |",
             "|---|" + "---|" * (len(patterns) + 1)]
    for system, kind in systems:
        cells = []
        for pattern in patterns:
            t = next(x for x in table if x["pattern"] == pattern and x["system"] == system)
            if math.isinf(t["metg_us"]):
                cells.append(f"n/r ({t['best_efficiency']:.0%})")
            elif t["status"] == "below":
                cells.append(f"<{fmt_us(t['metg_us'])}")
            else:
                mark = "" if t["status"] == "ok" else "*"
                cells.append(f"{fmt_us(t['metg_us'])} ({fmt_us(t['min_us'])}..{fmt_us(t['max_us'])}){mark}")
        shares = [float(r["busiest_worker_share"]) for r in rows if r["system"] == system and r["busiest_worker_share"]]
        share = f"{np.median(shares):.0%} ({min(shares):.0%}..{max(shares):.0%})" if shares else "-"
        lines.append(f"| {label_of(system, kind)} | " + " | ".join(cells) + f" | {share} |")
    lines += ["", "\\* some repetitions did not reach 50% or did not fall below it; the median counts those as "
              "infinite or as the finest granularity measured. The last column: the median over every run of the "
              "share of the tasks that the busiest worker ran (100%: the other workers never took part; \"-\": the peers, and serial, whose tasks run on "
              "the request thread)."]
    with open(os.path.join(root, "metg.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    figures(root, rows, systems, patterns)


def figures(root, rows, systems, patterns):
    cmap = plt.get_cmap("tab20")
    styles = {s: (cmap(i % 20), "--" if s[1] == "peer" else "-") for i, s in enumerate(systems)}
    for n, start in enumerate(range(0, len(patterns), 4), 1):
        group = patterns[start:start + 4]
        nrows = (len(group) + 1) // 2
        fig, axes = plt.subplots(nrows, 2, figsize=(12, 4.5 * nrows), squeeze=False)
        for ax, pattern in zip(axes.flat, group):
            for system, kind in systems:
                mine = [r for r in rows if r["pattern"] == pattern and r["system"] == system]
                its = sorted({r["iterations"] for r in mine}, reverse=True)
                g = [np.median([r["granularity_us"] for r in mine if r["iterations"] == i]) for i in its]
                e = [np.median([r["efficiency"] for r in mine if r["iterations"] == i]) for i in its]
                color, ls = styles[(system, kind)]
                ax.plot(g, e, ls, marker=".", color=color, label=label_of(system, kind))
            ax.axhline(0.5, color="grey", lw=0.8, ls=":")
            ax.set_xscale("log")
            ax.set_yscale("log")
            top = max([1.2] + [r["efficiency"] * 1.15 for r in rows if r["pattern"] == pattern])
            ax.set_ylim(0.01, top)
            ax.set_title(pattern, fontsize=11)
            ax.set_xlabel("task granularity (µs, log scale)", fontsize=10)
            ax.set_ylabel("efficiency (fraction of peak FLOP/s, log)", fontsize=10)
            ax.tick_params(labelsize=9)
        for ax in list(axes.flat)[len(group):]:
            ax.set_visible(False)
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=6, fontsize=9, frameon=False)
        fig.tight_layout(rect=(0, 0.07 if nrows > 1 else 0.12, 1, 1))
        png = save(fig, root, f"metg-{n}")
        print(f"{PROG}: wrote {png}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schedbed")
    ap.add_argument("--out")
    ap.add_argument("--report", metavar="DIR", help="tables and figures again from DIR/points.csv")
    ap.add_argument("--patterns")
    ap.add_argument("--policies")
    ap.add_argument("--peers", default="omp,tbb")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--width", type=int, default=4)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--graphs", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-iterations", type=int, default=32768)
    ap.add_argument("--min-iterations", type=int, default=1)
    ap.add_argument("--stop-below", type=float, default=0.15)
    ap.add_argument("--keep-runs", action="store_true")
    a = ap.parse_args()
    if a.report:
        report(a.report)
        return
    if not a.schedbed or not a.out:
        die("give --schedbed PATH and --out DIR (or --report DIR)")
    if min(a.threads, a.width, a.steps, a.graphs, a.reps) < 1:
        die("--threads, --width, --steps, --graphs and --reps must be at least 1")
    measure(a)
    report(a.out)


if __name__ == "__main__":
    main()
