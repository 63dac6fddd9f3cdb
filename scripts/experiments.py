#!/usr/bin/python3
"""experiments.py - the experiments behind PAPER.md, one definition each.

    experiments.py --list
    experiments.py [--schedbed BIN] [--reps N] [--duration S] [--out DIR] [EXPERIMENT ...]

Every experiment is a list of configurations (a label, a policy, a workload, settings) run REPS
times, alternating the configurations (A B C A B C ...) so that the machine's drift hits all of
them alike; results are reported as the median with min and max over the repetitions, never a
single run. Each experiment writes into OUT/<experiment>/: the runs' summary.json and meta.json
(the bulky jobs.csv and workers.csv are dropped once read), table.md and table.csv, and its
figures (PNG and PDF). Peers (OpenMP, oneTBB) are run where an experiment names them.

Run with /usr/bin/python3 (Debian's matplotlib); `make reproduce` builds what is needed first.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import time

from sbresults import np, Runner, die, fmt_ns, fmt_rate, load_json, plt, save

PEERS = {"omp": "peers_omp", "tbb": "peers_tbb"}


def cfg(label, policy, workload, *sets, args=()):
    return {"label": label, "policy": policy, "workload": workload, "sets": list(sets), "args": list(args)}


# ---- the experiments ------------------------------------------------------------------------
# `metrics`: what the table shows, as (column, function(summary) -> number, format).

def cls(name, q):
    return lambda s: s["classes"].get(name, {}).get(q)


def all_q(q):
    return lambda s: s["all"].get(q)


def throughput(s):
    return s["throughput"]


def cores(s):
    return s["cpu"].get("window_cores")


def pstat(name):
    return lambda s: s["policy_stats"].get(name)


def ns_per_task(s):
    return 1e9 / s["tasks_per_s"] if s.get("tasks_per_s") else None


def imbalance(s):
    """Busiest worker's tasks over the idlest's (1 = perfectly even)."""
    t = [w["tasks"] for w in s["counters"]["workers"]]
    return max(t) / min(t) if t and min(t) > 0 else None


RATE, LAT, NUM, RATIO = "rate", "lat", "num", "ratio"

EXPERIMENTS = {
    "spawn": {
        "question": "What does a spawn and a run cost per task on one worker, next to OpenMP and oneTBB?",
        "common": ["--threads", "1"],
        "bounded": True,
        "configs": [
            cfg("chain, stealing lifo", "stealing", "micro", "pattern=chain", "length=200000", "local_order=lifo",
                args=["--jobs", "10"]),
            cfg("chain, stealing fifo", "stealing", "micro", "pattern=chain", "length=200000",
                args=["--jobs", "10"]),
            cfg("chain, serial", "serial", "micro", "pattern=chain", "length=200000", args=["--jobs", "10"]),
            cfg("fib(27), stealing lifo", "stealing", "forkjoin", "which=fib", "n=27", "work_ns=0",
                "local_order=lifo", args=["--jobs", "2"]),
            {"label": "chain, OpenMP", "peer": "omp", "peer_args": ["chain", "2000000"]},
            {"label": "chain, oneTBB", "peer": "tbb", "peer_args": ["chain", "2000000"]},
            {"label": "fib(27), OpenMP", "peer": "omp", "peer_args": ["fib", "27"]},
            {"label": "fib(27), oneTBB", "peer": "tbb", "peer_args": ["fib", "27"]},
        ],
        "metrics": [("ns per task", ns_per_task, NUM)],
        "reps": 9,
    },
    "policies": {
        "question": "How do all the policies compare on the OLTP workload, one worker per core?",
        "common": ["--threads", "2"],
        "configs": [cfg(p, p, "oltp") for p in
                    ("serial", "stealing", "hybrid", "distribution", "lanes", "txslot", "fifo", "global", "priority")],
        "metrics": [("jobs/s", throughput, RATE), ("point p99", cls("point", "p99"), LAT),
                    ("insert p99", cls("insert", "p99"), LAT), ("join p99", cls("join", "p99"), LAT),
                    ("commit p99", cls("commit", "p99"), LAT), ("cores", cores, NUM)],
    },
    "hybrid": {
        "question": "What do lightweight_job_level thresholds other than the shipped 0 do (memo 000)?",
        "common": ["--threads", "2"],
        "configs": [cfg("stealing", "stealing", "mixed"),
                    cfg("hybrid level 0 (default)", "hybrid", "mixed"),
                    cfg("hybrid level 20", "hybrid", "mixed", "lightweight_job_level=20"),
                    cfg("hybrid level 60", "hybrid", "mixed", "lightweight_job_level=60"),
                    cfg("serial", "serial", "mixed")],
        "metrics": [("jobs/s", throughput, RATE), ("light p50", cls("light", "p50"), LAT),
                    ("light p99", cls("light", "p99"), LAT), ("heavy p50", cls("heavy", "p50"), LAT),
                    ("heavy p99", cls("heavy", "p99"), LAT), ("cores", cores, NUM)],
    },
    "hybrid-oltp": {
        "question": "The same thresholds on the OLTP mix (levels 10..60 and 999).",
        "common": ["--threads", "2"],
        "configs": [cfg("stealing", "stealing", "oltp"),
                    cfg("hybrid level 0 (default)", "hybrid", "oltp"),
                    cfg("hybrid level 20", "hybrid", "oltp", "lightweight_job_level=20"),
                    cfg("hybrid level 40", "hybrid", "oltp", "lightweight_job_level=40"),
                    cfg("hybrid level 60", "hybrid", "oltp", "lightweight_job_level=60")],
        "metrics": [("jobs/s", throughput, RATE), ("insert p99", cls("insert", "p99"), LAT),
                    ("point p99", cls("point", "p99"), LAT), ("join p99", cls("join", "p99"), LAT),
                    ("scan p99", cls("scan", "p99"), LAT), ("cores", cores, NUM)],
    },
    "wake": {
        "question": "What does waking an idle worker cost, and what does spinning before suspending buy (memo 000)?",
        "common": ["--threads", "2"],
        "configs": [cfg("try_count 0", "stealing", "wake", "worker_try_count=0"),
                    cfg("try_count 1000 (default)", "stealing", "wake"),
                    cfg("try_count 100000", "stealing", "wake", "worker_try_count=100000"),
                    cfg("try_count 1000, pinned", "stealing", "wake", "core_affinity=true"),
                    cfg("try_count 1000, in-place teardown", "stealing", "wake", "inplace_teardown=true"),
                    cfg("busy_worker", "stealing", "wake", "busy_worker=true"),
                    cfg("polling_wait yield", "stealing", "wake", "task_polling_wait=1"),
                    cfg("distribution", "distribution", "wake"),
                    cfg("global", "global", "wake")],
        "metrics": [("request p50", cls("from_request", "p50"), LAT),
                    ("request p99", cls("from_request", "p99"), LAT),
                    ("from-task p50", cls("from_task", "p50"), LAT),
                    ("from-task p99", cls("from_task", "p99"), LAT), ("cores", cores, NUM),
                    ("suspends/s", lambda s: s["counters"]["window"]["suspends"] / s["window_s"], RATE)],
    },
    "sticky": {
        "question": "Sticky queues, lanes or slots for a transaction's storage work (memo 001)?",
        "common": ["--threads", "2"],
        "configs": [cfg(p, p, "oltp", "mix_insert=60", "mix_point=30", "mix_join=10", "mix_filter=0", "mix_multi=0",
                        "mix_aggregate=0", "mix_scan=0")
                    for p in ("stealing", "lanes", "txslot", "global")],
        "metrics": [("jobs/s", throughput, RATE), ("insert p50", cls("insert", "p50"), LAT),
                    ("insert p99", cls("insert", "p99"), LAT), ("join p99", cls("join", "p99"), LAT),
                    ("commit p99", cls("commit", "p99"), LAT), ("imbalance", imbalance, RATIO)],
    },
    "batch": {
        "question": "Does taking N tasks per claim (Quartz) pay off for many tiny jobs (memos 002, 003)?",
        "common": ["--threads", "2"],
        "configs": [cfg("global batch 1", "global", "tiny"),
                    cfg("global batch 4", "global", "tiny", "batch=4"),
                    cfg("global batch 16", "global", "tiny", "batch=16"),
                    cfg("global batch 64", "global", "tiny", "batch=64"),
                    cfg("global tokens", "global", "tiny", "producer_tokens=true"),
                    cfg("fifo", "fifo", "tiny"),
                    cfg("stealing", "stealing", "tiny")],
        "metrics": [("jobs/s", throughput, RATE), ("p50", all_q("p50"), LAT), ("p99", all_q("p99"), LAT),
                    ("tasks/claim", pstat("tasks_per_claim"), NUM), ("imbalance", imbalance, RATIO),
                    ("cores", cores, NUM)],
    },
    "priority": {
        "question": "Do VIP jobs jump the queue, and what does a per-job worker limit do (memo 004)?",
        "common": ["--threads", "2"],
        "configs": [cfg("stealing", "stealing", "mixed"),
                    cfg("priority, equal", "priority", "mixed"),
                    cfg("priority, light first", "priority", "mixed", "light_priority=1"),
                    cfg("priority, light first, heavy on 1 worker", "priority", "mixed", "light_priority=1",
                        "heavy_concurrency=1")],
        "metrics": [("jobs/s", throughput, RATE), ("light p50", cls("light", "p50"), LAT),
                    ("light p99", cls("light", "p99"), LAT), ("heavy p50", cls("heavy", "p50"), LAT),
                    ("heavy p99", cls("heavy", "p99"), LAT)],
    },
    "steal": {
        "question": "Steal one or half, which victim first, FIFO or LIFO at home (memo 001's ideas)?",
        "common": ["--threads", "2"],
        "configs": [cfg(f"{o} {h} {v}", "stealing", "forkjoin", "which=uts", f"local_order={o}",
                        f"steal_half={'true' if h == 'half' else 'false'}", f"victim_order={v}")
                    for o in ("fifo", "lifo") for h in ("one", "half") for v in ("next", "random")],
        "metrics": [("jobs/s", throughput, RATE), ("tasks/s", lambda s: s["tasks_per_s"], RATE),
                    ("steals/s", lambda s: s["counters"]["window"]["stolen"] / s["window_s"], RATE),
                    ("imbalance", imbalance, RATIO)],
    },
    "preempt": {
        "question": "Does asking long scan tasks to yield protect short statements (memo 001's idea)?",
        "common": ["--threads", "2"],
        "configs": [cfg(f"threshold {t} us" if t else "no preemption", "stealing", "oltp", "mix_scan=20",
                        "scan_yield_us=0", f"preempt_threshold={t}") for t in (0, 1000, 200)],
        "metrics": [("jobs/s", throughput, RATE), ("point p99", cls("point", "p99"), LAT),
                    ("insert p99", cls("insert", "p99"), LAT), ("scan p50", cls("scan", "p50"), LAT),
                    ("yield requests/s", lambda s: s["counters"]["window"]["preempt_requests"] / s["window_s"], RATE)],
    },
    "placement": {
        "question": "Does placing on the least-loaded worker help, now that queues know their length (memo 000)?",
        "common": ["--threads", "2"],
        "configs": [cfg("preferred worker (jogasaki)", "stealing", "oltp"),
                    cfg("round robin per call", "stealing", "oltp", "use_preferred_worker_for_current_thread=false"),
                    cfg("least loaded", "stealing", "oltp", "least_loaded=true")],
        "metrics": [("jobs/s", throughput, RATE), ("point p99", cls("point", "p99"), LAT),
                    ("insert p99", cls("insert", "p99"), LAT), ("join p99", cls("join", "p99"), LAT),
                    ("imbalance", imbalance, RATIO)],
    },
    "check-order": {
        "question": "Sticky first nine times in ten: what does dev_thousandths_ratio_check_local_first change?",
        "common": ["--threads", "2"],
        "configs": [cfg(f"ratio {r}", "stealing", "oltp", f"dev_thousandths_ratio_check_local_first={r}")
                    for r in (0, 100, 500, 1000)],
        "metrics": [("jobs/s", throughput, RATE), ("insert p99", cls("insert", "p99"), LAT),
                    ("point p99", cls("point", "p99"), LAT), ("join p99", cls("join", "p99"), LAT),
                    ("commit p99", cls("commit", "p99"), LAT)],
    },
    "trace-cost": {
        "question": "Does recording distort what it measures? Throughput with tracing off and on.",
        "common": ["--threads", "2"],
        "configs": [cfg("micro chain, 1 worker, trace off", "stealing", "micro", "pattern=chain", "length=2000",
                        args=["--threads", "1"]),
                    cfg("micro chain, 1 worker, trace on", "stealing", "micro", "pattern=chain", "length=2000",
                        args=["--threads", "1", "--trace"]),
                    cfg("oltp, trace off", "stealing", "oltp"),
                    cfg("oltp, trace on", "stealing", "oltp", args=["--trace"])],
        "metrics": [("jobs/s", throughput, RATE), ("tasks/s", lambda s: s["tasks_per_s"], RATE),
                    ("p99", all_q("p99"), LAT)],
    },
}


# ---- running --------------------------------------------------------------------------------

def run_peer(bindir, peer, args):
    exe = os.path.join(bindir, PEERS[peer])
    if not os.access(exe, os.X_OK):
        die(f"{exe} is missing (make peers builds it)")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run([exe] + args, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return None
    ns, tasks, _ = p.stdout.split()
    return {"ns_per_task": float(ns), "tasks": float(tasks)}


def run_experiment(name, exp, a, out_root):
    out = os.path.join(out_root, name)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    reps = exp.get("reps", a.reps)
    configs = exp["configs"]
    print(f"\n== {name}: {exp['question']}", file=sys.stderr)
    runner = Runner(a.schedbed, sum(1 for c in configs if "peer" not in c) * reps)
    results = {c["label"]: [] for c in configs}
    for k in range(reps):
        for i, c in enumerate(configs):
            if "peer" in c:
                r = run_peer(os.path.dirname(a.schedbed), c["peer"], c["peer_args"])
                print(f"      {c['label']}: {r['ns_per_task']:.1f} ns/task" if r else f"      {c['label']}: failed",
                      file=sys.stderr)
                results[c["label"]].append({"peer": r} if r else None)
                continue
            args = ["--policy", c["policy"], "--workload", c["workload"], "--seed", str(a.seed)] + exp["common"]
            if not exp.get("bounded"):
                args += ["--duration", str(a.duration), "--warmup", str(a.warmup)]
            for s in c["sets"]:
                args += ["--set", s]
            args += c["args"]
            d = os.path.join(out, f"c{i}", f"r{k + 1}")
            s = runner.run(f"{name} round {k + 1}/{reps} {c['label']}", args, d)
            for bulky in ("jobs.csv", "jobs.csv.gz", "workers.csv", "trace.json", "plot.gp"):
                if os.path.exists(os.path.join(d, bulky)):
                    os.remove(os.path.join(d, bulky))
            results[c["label"]].append(s)
    runner.report()
    return results


def metric_values(exp, label, results, fn):
    vals = []
    for s in results[label]:
        if s is None:
            continue
        if "peer" in s:
            vals.append(s["peer"]["ns_per_task"] if fn is ns_per_task else None)
        else:
            v = fn(s)
            vals.append(v)
    return [v for v in vals if v is not None]


def fmt(kind, v):
    if kind == RATE:
        return fmt_rate(v)
    if kind == LAT:
        return fmt_ns(v)
    if kind == RATIO:
        return f"{v:.2f}"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"


def write_tables(name, exp, results, out_root):
    out = os.path.join(out_root, name)
    cols = exp["metrics"]
    rows_md = ["| configuration | " + " | ".join(c[0] for c in cols) + " |",
               "|---|" + "---|" * len(cols)]
    with open(os.path.join(out, "table.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["configuration"] + [f"{c[0]} {x}" for c in cols for x in ("median", "min", "max")] + ["runs"])
        for c in exp["configs"]:
            label = c["label"]
            cells, raw = [], []
            n = 0
            for col, fn, kind in cols:
                v = metric_values(exp, label, results, fn)
                n = max(n, len(v))
                if v:
                    med, lo, hi = float(np.median(v)), min(v), max(v)
                    cells.append(f"{fmt(kind, med)} ({fmt(kind, lo)}..{fmt(kind, hi)})")
                    raw += [med, lo, hi]
                else:
                    cells.append("-")
                    raw += ["", "", ""]
            rows_md.append(f"| {label} | " + " | ".join(cells) + " |")
            w.writerow([label] + raw + [n])
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(f"{exp['question']}\n\nMedian (min..max) of each configuration's runs.\n\n")
        f.write("\n".join(rows_md) + "\n")
    return "\n".join(rows_md)


def plot(name, exp, results, out_root):
    """One panel per metric: median bars with min..max whiskers, configurations on the y axis."""
    cols = exp["metrics"]
    labels = [c["label"] for c in exp["configs"]]
    fig, axes = plt.subplots(1, len(cols), figsize=(3.2 * len(cols) + 1.5, 0.42 * len(labels) + 1.4), sharey=True)
    axes = np.atleast_1d(axes)
    y = np.arange(len(labels))
    for ax, (col, fn, kind) in zip(axes, cols):
        med, lo, hi = [], [], []
        for lab in labels:
            v = metric_values(exp, lab, results, fn)
            m = float(np.median(v)) if v else np.nan
            med.append(m)
            lo.append(m - min(v) if v else 0)
            hi.append(max(v) - m if v else 0)
        scale, unit = (1e3, "µs") if kind == LAT else (1, "")
        med = np.asarray(med) / scale
        err = np.asarray([lo, hi]) / scale
        ax.barh(y, med, xerr=err, color="#4c72b0", alpha=0.85, ecolor="black", capsize=2)
        ax.set_title(col + (f" ({unit})" if unit else ""), fontsize="medium")
        if kind == LAT and np.nanmax(med) / max(np.nanmin(med[med > 0]) if np.any(med > 0) else 1, 1e-9) > 50:
            ax.set_xscale("log")
        ax.grid(axis="y", visible=False)
    axes[0].set_yticks(y)
    axes[0].set_yticklabels(labels)
    axes[0].invert_yaxis()
    fig.suptitle(f"{name}: {exp['question']}", fontsize="medium")
    fig.tight_layout()
    return save(fig, os.path.join(out_root, name), name)


def main():
    ap = argparse.ArgumentParser(description="the experiments behind PAPER.md")
    ap.add_argument("experiments", nargs="*")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--schedbed", default="build/release/schedbed")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=4)
    ap.add_argument("--warmup", type=float, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="results/paper")
    a = ap.parse_args()
    if a.list:
        for n, e in EXPERIMENTS.items():
            print(f"{n:<12} {e['question']}")
        return 0
    names = a.experiments or list(EXPERIMENTS)
    bad = [n for n in names if n not in EXPERIMENTS]
    if bad:
        die(f"unknown experiment(s) {', '.join(bad)}; valid: {', '.join(EXPERIMENTS)}")
    t0 = time.monotonic()
    for n in names:
        res = run_experiment(n, EXPERIMENTS[n], a, a.out)
        print(write_tables(n, EXPERIMENTS[n], res, a.out))
        plot(n, EXPERIMENTS[n], res, a.out)
    print(f"experiments: {len(names)} done in {(time.monotonic() - t0) / 60:.1f} min, under {a.out}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
