#!/usr/bin/python3
"""bench_core.py - the hot path of the work-stealing family next to oneTBB and libgomp.

    bench_core.py [--schedbed BIN] [--reps N] [--fib N] [--chain N] [--out DIR] [--allow-dirty]
                  [--retry-failed] [--no-callgrind]

Contenders, each run REPS times (at least 5), alternating A B C ... A B C so that the machine's
drift hits all alike:
  chain   a chain of --chain tasks (each spawns the next) on 1 worker: stealing lifo, stealing fifo
  fib     fib(--fib), no work per task, on 1 and on 2 workers: stealing lifo, stealing fifo,
          oneTBB task_group, libgomp tasks (peers/, built from the Debian packages)
Each run is one process that computes twice and times the second round, so that first-touch
page faults and pool start-up are left out alike: schedbed runs two jobs (`schedbed run -n 2`)
and the time is the second job's latency from the per-job rows (submit to completion), its task count
half the tasks the workers ran; a peer (peers/*.c) times its own second round. Reported per task:
median and min..max over the runs, the 2-worker speedup (median time at 1 worker over median at
2), and instructions per task from callgrind on a 1-worker run (the difference between two
problem sizes, so start-up is left out), where valgrind is installed.

The spawned-task count differs by design: schedbed's fib is in continuation style (a node task
spawns its two children; the last child to finish spawns the join task), the peers' is one task
per call that waits for its children. So the table also gives ns per fib call, the time of the
whole computation over the calls, which compares like with like.

The runs are a manifest of the sweep runner (OUT/manifest.jsonl; the peers beside schedbed, as
make builds them): each run's result directory under OUT/runs/ keeps its summary.json and
meta.json, so the table names the commit and the machine the runs themselves recorded, a changed
tree is refused unless --allow-dirty marks the results, and the same command resumes an
interrupted run. The callgrind counts are not timings and run outside it, once each.

Writes OUT/bench.csv (one row per run), OUT/table.csv, OUT/table.md and OUT/machine.txt, and
prints the table. This is a benchmark, never a test: on a shared machine the numbers are
indicative, ratios from one run are what to compare.
"""
import argparse
import csv
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import machines
from sbread import job_rows, read_run
from sbresults import die
from sbrun import read_status, run_manifest

HERE = os.path.dirname(os.path.abspath(__file__))


def fib_calls(n):
    """Calls of the recursive fib(n) other than the root: the peers' task count."""
    calls = [1, 1]  # fib(0) and fib(1) make no further call
    for i in range(2, n + 1):
        calls.append(1 + calls[i - 1] + calls[i - 2])
    return calls[n] - 1


def kernel_and_load():
    """What meta.json does not record and a reader of the table needs: the kernel, and the load
    the runs started under (a busy machine reads slow)."""
    return {"kernel": platform.release(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def schedbed_args(c, size, threads):
    if c["kind"] == "chain":
        wl = ["--workload", "micro", "--set", "pattern=chain", "--set", f"length={size}"]
    else:
        wl = ["--workload", "forkjoin", "--set", "which=fib", "--set", f"n={size}", "--set", "work_ns=0"]
    return ["--policy", "stealing", "--set", f"local_order={c['order']}", "--threads", str(threads),
            "-n", "2", "--warmup", "0"] + wl


def schedbed_argv(sb, c, size, threads):
    return [sb, "run", "-q"] + schedbed_args(c, size, threads)


def timed(run):
    """(ns, tasks) of one finished run: schedbed's second job, submit to completion, and its
    tasks; a peer's own second round."""
    s = run["summary"]
    if "ns_per_task" in s:
        return s["ns_per_task"] * s["tasks"], int(s["tasks"])
    rows = job_rows(run["dir"])
    if len(rows) != 2 or any(r["status"] != "ok" for r in rows):
        die(f"{run['dir']}: the run did not end with two good jobs: {rows}", 1)
    last = max(rows, key=lambda r: int(r["submit_ns"]))
    return int(last["end_ns"]) - int(last["submit_ns"]), job_tasks(s)


def job_tasks(summary):
    """Tasks of one of the run's two jobs (the jobs are identical): what the workers ran, less
    the teardowns, halved."""
    w = summary["counters"]["window"]
    return (w["tasks"] - w["teardowns"]) // 2


def callgrind_ir(argv):
    """Instructions executed by argv under callgrind (all threads), or None."""
    with tempfile.TemporaryDirectory(prefix="bench-core-cg-") as d:
        out = os.path.join(d, "cg.out")
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + argv,
                           capture_output=True, text=True, cwd=d)
        if r.returncode != 0 or not os.path.exists(out):
            return None
        with open(out) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    return int(line.split()[1])
    return None


def instructions_per_task(c, sb, peers, small, large):
    """(Ir(large) - Ir(small)) / (tasks(large) - tasks(small)) on 1 worker."""
    irs, tasks = [], []
    for size in (small, large):
        with tempfile.TemporaryDirectory(prefix="bench-core-ir-") as d:
            if c["peer"]:
                argv = [os.path.join(peers, c["peer"]), c["kind"], str(size), "1"]
                n = 2 * (fib_calls(size) if c["kind"] == "fib" else size)  # both rounds
            else:
                argv = schedbed_argv(sb, c, size, 1) + ["--out", os.path.join(d, "run")]
                n = None
            ir = callgrind_ir(argv)
            if ir is None:
                return None
            if n is None:
                n = 2 * job_tasks(read_run(os.path.join(d, "run"))["summary"])  # callgrind counts both rounds
        irs.append(ir)
        tasks.append(n)
    return (irs[1] - irs[0]) / (tasks[1] - tasks[0])


def speedup_text(v):
    return "" if v is None else f"{v:.2f}x"


def fmt(v):
    return "-" if v is None else (f"{v:.1f}" if v < 100 else f"{v:.0f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--schedbed", default="build/release/schedbed")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--fib", type=int, default=32)
    ap.add_argument("--chain", type=int, default=1000000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes (marked)")
    ap.add_argument("--retry-failed", action="store_true", help="rerun the failed runs of an interrupted OUT")
    a = ap.parse_args()
    if a.reps < 5:
        die(f"--reps {a.reps}: at least 5 runs per contender (medians with min..max need them)")
    if not 2 <= a.fib <= 35:
        die(f"--fib {a.fib}: valid range is 2..35")
    if a.chain < 1000:
        die(f"--chain {a.chain}: at least 1000 tasks")
    a.schedbed = os.path.abspath(a.schedbed)  # callgrind runs in a scratch directory
    peers = os.path.dirname(a.schedbed)  # the sweep runner finds a program beside schedbed
    for exe in (a.schedbed, os.path.join(peers, "peers_tbb"), os.path.join(peers, "peers_omp")):
        if not os.access(exe, os.X_OK):
            die(f"{exe} is missing (make bench-core builds it)")
    out = a.out or os.path.join("results", "bench-core", time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))

    S = lambda kind, order: {"kind": kind, "order": order, "peer": None}
    P = lambda kind, peer: {"kind": kind, "order": None, "peer": peer}
    names = {"lifo": "stealing lifo", "fifo": "stealing fifo", "peers_tbb": "oneTBB task_group",
             "peers_omp": "libgomp tasks"}
    contenders = []
    for order in ("lifo", "fifo"):
        contenders.append(("chain", 1, S("chain", order)))
    for threads in (1, 2):
        for c in (S("fib", "lifo"), S("fib", "fifo"), P("fib", "peers_tbb"), P("fib", "peers_omp")):
            contenders.append(("fib", threads, c))
    label = lambda kind, threads, c: (f"{'chain' if kind == 'chain' else f'fib({a.fib})'} {threads}w "
                                      f"{names[c['order'] or c['peer']]}")
    slug = lambda kind, threads, c: f"{kind}-{threads}w-{c['order'] or c['peer']}"
    lines = []
    for rep in range(1, a.reps + 1):
        for kind, threads, c in contenders:
            size = a.chain if kind == "chain" else a.fib
            ln = {"id": f"{slug(kind, threads, c)}.r{rep}", "out": f"runs/{slug(kind, threads, c)}/r{rep}",
                  "timing": True, "tags": {"contender": label(kind, threads, c), "rep": rep, "threads": threads}}
            if c["peer"]:
                ln.update(program=c["peer"], args=[kind, str(size), str(threads)], slim=True)
            else:  # the two jobs' rows are the timing: kept
                ln.update(program="schedbed", args=schedbed_args(c, size, threads), slim=["jobs.csv.gz"])
            lines.append(ln)
    m = kernel_and_load()
    print(f"bench-core: {len(contenders)} contenders x {a.reps} runs, alternating; writing {out}", flush=True)
    rc = run_manifest(out, lines, a.schedbed, allow_dirty=a.allow_dirty, retry_failed=a.retry_failed,
                      resume=f"bench_core.py --out {out} --retry-failed (with the same options)")
    if rc:
        return rc

    runs = {label(*x): [] for x in contenders}
    rows, made = [], []
    for ln in lines:
        run = read_run(os.path.join(out, ln["out"]), read_status(out, ln))
        made.append(run["provenance"])
        lb, kind = ln["tags"]["contender"], ln["id"].split("-")[0]
        ns, tasks = timed(run)
        calls = fib_calls(a.fib) if kind == "fib" else a.chain
        runs[lb].append((ns, tasks, calls))
        rows.append({"contender": lb, "rep": ln["tags"]["rep"], "threads": ln["tags"]["threads"], "ns": round(ns),
                     "tasks": tasks, "ns_per_task": ns / tasks, "ns_per_call": ns / calls})
    # the machine and the commit the runs recorded themselves: one table is one machine's
    m["machine"] = machines.one_machine(made, f"bench-core {out}")
    m["commit"] = ", ".join(sorted({p["sha"][:12] + (" (dirty)" if p["dirty"] else "") for p in made}))
    m["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with open(os.path.join(out, "machine.txt"), "w") as f:
        for k, v in m.items():
            f.write(f"{k}: {v}\n")
    with open(os.path.join(out, "bench.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    ir = {}
    if not a.no_callgrind and shutil.which("valgrind"):
        print("instructions per task (callgrind, 1 worker)...", flush=True)
        for kind, threads, c in contenders:
            if threads != 1:
                continue
            small, large = ((a.chain // 10, a.chain // 5) if kind == "chain" else (max(a.fib - 12, 2), max(a.fib - 10, 3)))
            ir[label(kind, 1, c)] = instructions_per_task(c, a.schedbed, peers, small, large)
            print(f"  {label(kind, 1, c)}: {fmt(ir[label(kind, 1, c)])}", flush=True)

    def stat(lb, i):
        v = [r[0] / r[i] for r in runs[lb]]
        return statistics.median(v), min(v), max(v)

    table = []
    for kind, threads, c in contenders:
        lb = label(kind, threads, c)
        med, lo, hi = stat(lb, 1)
        cmed, clo, chi = stat(lb, 2)
        speedup = None
        if threads == 2:
            one = label(kind, 1, c)
            speedup = statistics.median(r[0] for r in runs[one]) / statistics.median(r[0] for r in runs[lb])
        table.append({"contender": lb, "tasks": runs[lb][0][1], "ns_per_task_median": med, "ns_per_task_min": lo,
                      "ns_per_task_max": hi, "ns_per_call_median": cmed, "ns_per_call_min": clo,
                      "ns_per_call_max": chi, "speedup_2w": speedup, "instructions_per_task": ir.get(lb)})
    with open(os.path.join(out, "table.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0].keys()))
        w.writeheader()
        w.writerows(table)
    md = [f"# bench-core, {m['date']}", "",
          f"Machine: {m['machine']}, Linux {m['kernel']}; commit {m['commit']}. {a.reps} runs per contender, "
          f"alternating; median (min..max). Command: `make bench-core` "
          f"(scripts/bench_core.py --reps {a.reps} --fib {a.fib} --chain {a.chain}).", "",
          "| contender | tasks | ns per task | ns per fib call | 2-worker speedup | instructions per task |",
          "|---|---:|---:|---:|---:|---:|"]
    for t in table:
        call = (f"{fmt(t['ns_per_call_median'])} ({fmt(t['ns_per_call_min'])}..{fmt(t['ns_per_call_max'])})"
                if t["contender"].startswith("fib") else "")
        md.append(f"| {t['contender']} | {t['tasks']} | {fmt(t['ns_per_task_median'])} "
                  f"({fmt(t['ns_per_task_min'])}..{fmt(t['ns_per_task_max'])}) | {call} | "
                  f"{speedup_text(t['speedup_2w'])} | "
                  f"{fmt(t['instructions_per_task'])} |")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md[4:]))
    print(f"bench-core: {out}")


if __name__ == "__main__":
    sys.exit(main())
