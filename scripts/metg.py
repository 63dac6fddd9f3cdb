#!/usr/bin/python3
"""metg.py - METG(50%) of every policy and of the OpenMP and oneTBB peers on the task graphs of
the `patterns` workload: the smallest task granularity at which a system still reaches half of
the machine's peak FLOP/s (TaskBench, Slaughter et al., SC 2020).

    metg.py expand --out DIR [--patterns a,b] [--policies a,b] [--peers omp,tbb] [--threads 2]
                   [--width 4] [--steps 100] [--graphs 1] [--reps 5] [--max-iterations 32768]
                   [--min-iterations 1]
    sweep.py run DIR            (or sweep.py slurm DIR: the manifest runner runs the lines)
    metg.py report DIR [--again]

The sweep is a manifest of the manifest runner (scripts/sweep.py), so it resumes after an
interruption, names failed runs, and refuses to report on an unfinished directory; `make metg`
runs the three steps.

Method. Peak: every system runs the trivial graph with the compute_bound kernel at 4 x
--max-iterations per task, --reps times. On a shared machine the FLOP/s one core delivers moves
several times over from minute to minute (neighbours' load), so one peak measured at the start
would make the curves measure the neighbours: a probe (oneTBB when it is in the sweep, else
OpenMP, else the first system: a peer keeps every thread busy whatever the scheduler under test
does wrong) runs that peak configuration again between every two runs of the sweep, and each run
is compared with the mean of the two probes around it (the row's peak_flops; efficiency_start
keeps the comparison with the probe's median peak). Once per level the probe also runs on one
thread; the table states how many cores the probes found free (all threads' FLOP/s over one
thread's), because on a machine that leaves fewer cores free than there are threads even serial
work can look parallel. The probes are next to their runs in time only when the lines run in
order on one machine, as `sweep.py run` does; on a cluster give `sweep.py slurm --max-parallel 1
--exclusive`.

A system may be a policy with parameters, `--policies stealing,stealing+steal_half=true+local_order=lifo`:
it is run with those --set values and reported under the name as written.

Sweep: for each repetition (seed = rep number), pattern and iteration count (from
--max-iterations down by powers of two to --min-iterations), every system runs, in an order that
rotates from level to level, a bounded run of several executions of the graph; the first
execution is a warm-up and is dropped. From the run's median execution: FLOP/s = FLOP of an
execution / its wall time, efficiency = FLOP/s / peak, granularity = wall time x threads / tasks
(TaskBench's definition: the average task's share of the machine).

METG(50%) of one repetition: the finest point at or above 50%, interpolated linearly in
log(granularity) towards the next finer point; reported as the median over repetitions with
min..max. "not reached" when no point reaches 50%, "< g" when none falls below it.

`report` writes DIR/points.csv (one row per run), DIR/metg.csv and DIR/metg.md (the table),
DIR/peak.json, DIR/metg-N.png/.pdf (efficiency against granularity, log-log, one line per system,
at most four patterns per figure); `--again` redraws them from points.csv alone. Peers:
build/release/patterns_omp and patterns_tbb next to schedbed (make peers).
"""
import argparse
import csv
import json
import math
import os
import platform
import sys
import time

import numpy as np

from sbresults import PROG, die, job_latencies, load_json, policy_names, split_list
from sbmetg import PATTERNS, PEERS, report
from sbdesc import read_manifest, write_manifest
from sbread import read_run
from sbrun import DEFAULT_SCHEDBED, line_state, read_status
import machines

HERE = os.path.dirname(os.path.abspath(__file__))

FLOP_PER_ITER = 16  # workloads/taskgraph.h TG_FLOP_PER_ITER
TARGET_S = 0.03     # measured wall time aimed at per run
FIELDS = ["system", "kind", "pattern", "iterations", "rep", "executions", "tasks", "wall_ns", "wall_min_ns",
          "wall_max_ns", "flop", "flops", "peak_flops", "efficiency", "efficiency_start", "granularity_us",
          "busiest_worker_share"]


NOMINAL_NS_PER_ITER = 2.0  # a budget for the number of executions per run, not a measurement
PROBE_ORDER = ("tbb", "omp")  # the probe: the first of these peers in the sweep, else the first system


def systems_of(a):
    pols = split_list(a.policies, "--policies") if a.policies else policy_names(a.schedbed)
    known = policy_names(a.schedbed)
    for p in pols:
        base, sets = policy_sets(p)
        if base not in known:
            die(f"--policies: unknown policy '{base}'; valid: {', '.join(known)}")
        if any("=" not in kv or kv.startswith("=") for kv in sets):
            die(f"--policies: '{p}': write a configured policy as POLICY+NAME=VALUE[+NAME=VALUE...]")
    peers = split_list(a.peers, "--peers") if a.peers else []
    for p in peers:
        if p not in PEERS:
            die(f"--peers: unknown peer '{p}'; valid: {', '.join(PEERS)}")
    return [("policy", p) for p in pols] + [("peer", p) for p in peers]


def policy_sets(system_name):
    """'stealing+steal_half=true+local_order=lifo' -> ('stealing', ['steal_half=true', 'local_order=lifo']):
    a policy with parameters is a system of its own, named as written."""
    base, *sets = system_name.split("+")
    return base, sets


def executions(a, iterations, steps):
    """Executions per run: about TARGET_S of work at a nominal speed per iteration, 6..50, the
    first a warm-up. Fixed at expansion, so that the manifest does not depend on the machine."""
    est = max(iterations, 1) * NOMINAL_NS_PER_ITER * a.width * steps * a.graphs / a.threads
    return int(min(50, max(6, math.ceil(TARGET_S / (est * 1e-9)) + 1)))


def line_of(a, system, role, pattern, iterations, steps, rep, threads, n):
    """One manifest line (sweep.py's format): a schedbed run of the patterns workload or a peer."""
    kind, name = system
    shape = {"pattern": pattern if pattern in PATTERNS else "trivial", "kernel": "compute_bound",
             "width": a.width, "steps": steps, "graphs": a.graphs, "iterations": iterations}
    execs = executions(a, iterations, steps)
    ident = f"metg.{n:06d}.{role}.{name}.{pattern}.{iterations}.r{rep}"
    base, sets = policy_sets(name) if kind == "policy" else (name, [])
    tags = {"experiment": "metg", "config": name, "label": name, "rep": rep, "policy": base if kind == "policy" else "",
            "workload": "patterns", "seed": rep, "sets": " ".join(sets), "kind": kind, "role": role, "pattern": pattern,
            "iterations": iterations, "threads": threads, "executions": execs}
    if kind == "peer":
        args = ["--threads", str(threads), "--reps", str(execs), "--seed", str(rep)]
        args += [x for k, v in shape.items() for x in (f"--{k}", str(v))]
        return {"id": ident, "out": f"runs/{ident}", "timing": True, "slim": ["peer.csv"], "program": PEERS[name][0],
                "args": args, "env": {"OMP_NUM_THREADS": str(threads)}, "tags": tags}
    args = ["--policy", base, "--workload", "patterns", "--threads", str(threads), "--warmup", "0",
            "--jobs", str(execs), "--seed", str(rep)]
    args += [x for k, v in shape.items() for x in ("--set", f"{k}={v}")]
    args += [x for kv in sets for x in ("--set", kv)]
    # the per-job latencies and the per-worker counts are what the analysis reads
    return {"id": ident, "out": f"runs/{ident}", "timing": True, "slim": ["jobs.csv.gz", "workers.csv"],
            "program": "schedbed", "args": args, "tags": tags}


def expand_metg(a):
    """The whole sweep as a manifest, in the order it must run: the peak round, then per repetition,
    pattern and level a one-thread probe, a probe, and every system followed by a probe, the systems
    in an order that rotates from level to level. On one machine `sweep.py run` keeps this order
    (timing runs run one at a time), so every run has a probe just before and just after it."""
    patterns = split_list(a.patterns, "--patterns") if a.patterns else PATTERNS
    for p in patterns:
        if p not in PATTERNS:
            die(f"--patterns: unknown pattern '{p}'; valid: {', '.join(PATTERNS)}")
    if a.min_iterations < 1 or a.max_iterations < a.min_iterations:
        die("--min-iterations must be >= 1 and <= --max-iterations")
    systems = systems_of(a)
    prober = next((("peer", p) for p in PROBE_ORDER if ("peer", p) in systems), systems[0])
    peak_it, peak_steps = 4 * a.max_iterations, 8
    its = []
    i = a.max_iterations
    while i >= a.min_iterations:
        its.append(i)
        i //= 2
    lines = []

    def add(system, role, pattern, it, steps, rep, threads=None):
        lines.append(line_of(a, system, role, pattern, it, steps, rep, threads or a.threads, len(lines)))

    # peak: large tasks, no dependences, few steps; every system, for the table's peak medians
    for rep in range(1, a.reps + 1):
        for system in systems[rep % len(systems):] + systems[:rep % len(systems)]:
            add(system, "peak", "peak", peak_it, peak_steps, rep)
    turn = 0
    for rep in range(1, a.reps + 1):
        for pattern in patterns:
            for it in its:
                add(prober, "probe-1", "probe-1", peak_it, peak_steps, rep, threads=1)
                add(prober, "probe", "probe", peak_it, peak_steps, rep)
                turn += 1
                for system in systems[turn % len(systems):] + systems[:turn % len(systems)]:
                    add(system, "sweep", pattern, it, a.steps, rep)
                    add(prober, "probe", "probe", peak_it, peak_steps, rep)
    params = {k: getattr(a, k) for k in ("threads", "width", "steps", "graphs", "reps", "max_iterations",
                                         "min_iterations")}
    params.update(patterns=patterns, systems=[list(s) for s in systems], probe=list(prober),
                  peak_iterations=peak_it, command=sys.argv)
    return lines, params


def cmd_expand(a):
    if min(a.threads, a.width, a.steps, a.graphs, a.reps) < 1:
        die("--threads, --width, --steps, --graphs and --reps must be at least 1")
    lines, params = expand_metg(a)
    path = write_manifest(a.out, lines)
    with open(os.path.join(a.out, "metg.json"), "w") as f:
        json.dump(params, f, indent=2)
        f.write("\n")
    print(f"{PROG}: {len(lines)} runs; run them with: scripts/sweep.py run {a.out}", file=sys.stderr)
    print(path)


# ---- gathering: the finished manifest -> points.csv ----

def run_figures(run, ln):
    """(execution times in ns without the warm-up, tasks per execution, busiest worker's share)."""
    out = run["dir"]
    t = ln["tags"]
    if t["kind"] == "peer":
        with open(os.path.join(out, "peer.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        return [int(r["wall_ns"]) for r in rows[1:]], int(rows[0]["tasks"]), ""
    s = run["summary"]
    lat = np.concatenate(list(job_latencies(out).values()))
    if len(lat) != t["executions"]:
        die(f"{out}: {len(lat)} jobs recorded of {t['executions']}", 1)
    # tasks per execution: the workload's tasks less the one launcher task of each job
    per_exec = s["reconciliation"]["tasks_created"] // t["executions"] - 1
    # how much of the work one worker did: 1.0 means the other threads never took part
    with open(os.path.join(out, "workers.csv"), newline="") as f:
        ran = [int(w["tasks"]) for w in csv.DictReader(f) if w["worker"].isdigit()]
    share = max(ran) / sum(ran) if sum(ran) else ""
    return [int(x) for x in lat[1:]], per_exec, share


def gather(root):
    """points.csv and peak.json from a finished sweep directory; refuses an unfinished one."""
    params = load_json(os.path.join(root, "metg.json"))
    lines = read_manifest(root)
    bad = [f"{ln['id']} ({st})" for ln in lines for st in [line_state(root, ln)[0]] if st != "done"]
    if bad:
        die(f"{len(bad)} of {len(lines)} runs are not finished: {', '.join(bad[:4])}"
            f"{' ...' if len(bad) > 4 else ''} (scripts/sweep.py run {root} finishes them)", 1)
    # one METG table is one machine's: schedbed and the peers record it in every run's meta.json
    runs = {ln["id"]: read_run(os.path.join(root, ln["out"]), read_status(root, ln)) for ln in lines}
    made = [r["provenance"] for r in runs.values()]
    machine = machines.one_machine(made, f"metg {root}")
    # the commit every run recorded (the runner checked each against the tree it ran from)
    commits = sorted({m["sha"][:12] + (" (dirty)" if m["dirty"] else "") for m in made})
    rows = []
    for ln in lines:
        t = ln["tags"]
        walls, tasks, share = run_figures(runs[ln["id"]], ln)
        # the median execution: a neighbour's burst on the shared machine moves it less than a sum
        wall = float(np.median(walls))
        flop = tasks * t["iterations"] * FLOP_PER_ITER
        rows.append({"system": t["config"], "kind": t["kind"], "pattern": t["pattern"], "iterations": t["iterations"],
                     "rep": t["rep"], "executions": len(walls), "tasks": tasks, "wall_ns": round(wall),
                     "wall_min_ns": min(walls), "wall_max_ns": max(walls), "flop": flop,
                     "flops": flop / (wall * 1e-9), "peak_flops": None, "efficiency": None, "efficiency_start": None,
                     "granularity_us": wall * 1e-3 * t["threads"] / tasks, "busiest_worker_share": share})
    peaks = [r for r in rows if r["pattern"] == "peak"]
    medians = {s: float(np.median([r["flops"] for r in peaks if r["system"] == s]))
               for s in dict.fromkeys(r["system"] for r in peaks)}
    peak = medians[params["probe"][1]]
    # each sweep run against the mean of the probes just before and after it: the machine's
    # capacity at that moment (the manifest puts a probe on either side of every run)
    for k, r in enumerate(rows):
        if r["pattern"] in PATTERNS:
            before, after = rows[k - 1], rows[k + 1]
            assert before["pattern"] == after["pattern"] == "probe", "a sweep run without probes around it"
            r["peak_flops"] = (before["flops"] + after["flops"]) / 2
        else:
            r["peak_flops"] = r["flops"] if r["pattern"] == "probe" else peak
        r["efficiency"] = r["flops"] / r["peak_flops"]
        r["efficiency_start"] = r["flops"] / peak
    with open(os.path.join(root, "points.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        # four significant digits: the machine's noise is far larger, and the file stays small
        w.writerows({k: f"{v:.4g}" if isinstance(v, float) else v for k, v in r.items()} for r in rows)
    with open(os.path.join(root, "peak.json"), "w") as f:
        json.dump({"peak_flops": peak, "peak_system": params["probe"][1], "peak_medians": medians,
                   "peak_iterations": params["peak_iterations"], "threads": params["threads"],
                   "width": params["width"], "steps": params["steps"], "graphs": params["graphs"],
                   "reps": params["reps"], "host": platform.node(), "cpus": os.cpu_count(), "machine": machine,
                   "git": ", ".join(commits),
                   "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": params["command"]},
                  f, indent=2)
    print(f"{PROG}: {len(rows)} runs gathered; peak {peak / 1e9:.2f} GFLOP/s", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    e = sub.add_parser("expand", help="write the sweep as DIR/manifest.jsonl (run it with sweep.py run or slurm)")
    e.add_argument("--out", required=True, help="the sweep directory (new)")
    e.add_argument("--schedbed", default=DEFAULT_SCHEDBED, help="asked for its policies (default %(default)s)")
    e.add_argument("--patterns", help=f"comma-separated (default: all): {', '.join(PATTERNS)}")
    e.add_argument("--policies", help="comma-separated (default: every registered policy); a policy with "
                   "parameters is a system of its own: POLICY+NAME=VALUE[+NAME=VALUE...]")
    e.add_argument("--peers", default="omp,tbb", help="comma-separated, of: omp, tbb (default %(default)s)")
    e.add_argument("--threads", type=int, default=2)
    e.add_argument("--width", type=int, default=4)
    e.add_argument("--steps", type=int, default=100)
    e.add_argument("--graphs", type=int, default=1)
    e.add_argument("--reps", type=int, default=5, help="repetitions of every point, each its own seed "
                   "(default %(default)s: fewer give no interval worth stating)")
    e.add_argument("--max-iterations", type=int, default=32768)
    e.add_argument("--min-iterations", type=int, default=1)
    r = sub.add_parser("report", help="points.csv, the METG table and the figures from a finished sweep directory")
    r.add_argument("dir")
    r.add_argument("--again", action="store_true", help="only the table and figures, from DIR/points.csv "
                                                         "(a committed result without its runs)")
    a = ap.parse_args()
    if a.cmd == "expand":
        if os.path.exists(a.out) and os.listdir(a.out):
            die(f"{a.out} exists and is not empty; give a new directory")
        cmd_expand(a)
        return
    if not a.again:
        gather(a.dir)
    report(a.dir)


if __name__ == "__main__":
    main()
