#!/usr/bin/python3
"""matrix.py - every policy (with its defaults and with non-default settings) crossed with every
workload, at small size and several thread counts, through a sanitizer build of schedbed.

Each run is a bounded run with check mode, the stall watchdog and chaos injection on; it passes
when schedbed exits 0, which it only does when the runtime reported no violation or stall, the
workload's and the core's counts reconcile, and the sanitizer stayed silent (the sanitizers are
set to exit non-zero on any report). Thread counts go from 1 to 8 on a 2-core machine, so most
runs are oversubscribed on purpose. The last line is "N passed, M failed"; the line before it
counts the runs and the tasks executed.

Usage: matrix.py --schedbed PATH [--chaos SEED] [--threads 1,2,4,8] [--only POLICY] [--scale K] [--jobs N]
                 [--executor native|sim] [--timeout S]

--jobs runs N cases side by side (default 2): most runs are oversubscribed and spend much of their
time suspended or sanitizer-bound on one thread, so two at a time keep both cores busy.
--executor sim runs the same cases on the simulator (virtual workers: any thread count is cheap);
--timeout fails a run that has not ended after S seconds of wall time, as a hang (the simulator's
typical defect: a loop that never lets the virtual clock move).
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

# Non-default settings worth their own runs: the options each policy adds to the base case.
POLICY_VARIANTS = {
    "stealing": [[], ["local_order=lifo", "steal_half=true", "victim_order=random", "conditional=ptl", "ptl_requeue=2"]],
    "hybrid": [["lightweight_job_level=40"]],
    "distribution": [[], ["distributor=dedicated"]],
    "lanes": [["lane_budget=2"]],
    "txslot": [[]],
    "global": [[], ["producer_tokens=true", "batch=8"], ["producer_tokens=true", "external_threads=true"],
               ["producer_tokens=true", "token_scope=job", "external_threads=true"], ["batch=4", "claim_lock_ns=2000"], ["threads_low=1", "resize_every=100"]],
    "priority": [[], ["concurrency=1"]],
}

# Small bounded runs: --jobs and the workload settings that keep each run to a fraction of a
# second under a sanitizer. Two cases for the workloads with two modes.
WORKLOAD_CASES = {
    "oltp": [["--jobs", "10", "--set", "clients=3", "--set", "epoch_us=1000", "--set", "ltx_ratio=0.3"]],
    "mixed": [["--jobs", "24", "--set", "light_clients=3", "--set", "heavy_clients=1", "--set", "partitions=6",
               "--set", "process_ns=20000"],
              ["--jobs", "24", "--set", "light_clients=2", "--set", "heavy_clients=2", "--set", "partitions=6",
               "--set", "process_ns=20000", "--set", "heavy_cancel=50", "--set", "cancel_after_us=30"]],
    "forkjoin": [["--jobs", "2", "--set", "which=fib", "--set", "n=13", "--set", "clients=2"],
                 ["--jobs", "2", "--set", "which=uts", "--set", "uts_b0=30", "--set", "uts_q=0.18", "--set", "clients=2"]],
    "wake": [["--jobs", "16", "--set", "gap_us=300", "--set", "from_task_pct=50"]],
    "tiny": [["--jobs", "300", "--set", "producers=3"]],
    "load": [["--jobs", "1", "--set", "rows=400", "--set", "bulk_size=32"],
             ["--jobs", "1", "--set", "rows=400", "--set", "bulk_size=32", "--set", "wait=block"],
             ["--jobs", "1", "--set", "mode=nontransactional", "--set", "files=2", "--set", "blocks=2",
              "--set", "block_rows=8"]],
    "micro": [["--jobs", "3", "--set", "length=200", "--set", "pattern=pingpong"],
              ["--jobs", "3", "--set", "length=200", "--set", "pattern=spawn_many"],
              ["--jobs", "3", "--set", "length=200", "--set", "pattern=yield_many"]],
    "patterns": [["--jobs", "3", "--set", "pattern=stencil_1d", "--set", "steps=20", "--set", "iterations=16",
                  "--set", "graphs=2"],
                 ["--jobs", "3", "--set", "pattern=random_nearest", "--set", "radix=5", "--set", "width=8",
                  "--set", "steps=10", "--set", "kernel=memory_bound", "--set", "scratch_bytes=256",
                  "--set", "iterations=2"]],
}


def names(schedbed, what):
    out = subprocess.run([schedbed, "list", f"--{what}"], check=True, capture_output=True, text=True).stdout
    return out.split()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schedbed", required=True)
    ap.add_argument("--chaos", type=int, default=1)
    ap.add_argument("--threads", default="1,2,4,8")
    ap.add_argument("--only", help="one policy")
    ap.add_argument("--scale", type=int, default=1, help="multiply every case's --jobs by this")
    ap.add_argument("--jobs", type=int, default=2, help="cases run side by side")
    ap.add_argument("--executor", choices=["native", "sim"], default="native")
    ap.add_argument("--timeout", type=float, help="seconds of wall time before a run counts as hung")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    policies = names(a.schedbed, "policies")
    workloads = names(a.schedbed, "workloads")
    unknown = [w for w in workloads if w not in WORKLOAD_CASES]
    if unknown:
        sys.exit(f"matrix.py: no small case for workload(s) {', '.join(unknown)}: add one to WORKLOAD_CASES")
    runs = []
    for p in policies:
        if a.only and p != a.only:
            continue
        for sets in POLICY_VARIANTS.get(p, [[]]):
            for w in workloads:
                for case in WORKLOAD_CASES[w]:
                    runs.append((p, sets, w, case))
    work = tempfile.mkdtemp(prefix="schedbed-matrix-")
    passed = failed = tasks = 0
    t0 = time.monotonic()
    env = dict(os.environ)

    def one(i):
        p, sets, w, case = runs[i]
        n = threads[i % len(threads)]
        if any(s.startswith("threads_low=") for s in sets):
            n = max(n, 2)  # the lowered count must be below thread_count
        seed = a.chaos * 1000 + i
        out = os.path.join(work, f"r{i}")
        args = [a.schedbed, "run", "--quiet", "--check", "--policy", p, "--workload", w, "--threads", str(n),
                "--seed", str(i + 1), "--out", out, "--chaos", str(seed), "--set", "stall_limit=20000",
                "--executor", a.executor]
        for s in sets:
            args += ["--set", s]
        case = [str(int(x) * a.scale) if k > 0 and case[k - 1] == "--jobs" else x for k, x in enumerate(case)]
        args += case
        try:
            r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=a.timeout)
        except subprocess.TimeoutExpired:
            r = subprocess.CompletedProcess(args, -1, "", f"no end after {a.timeout:g} s: hung")
        label = f"{p}{'[' + ','.join(sets) + ']' if sets else ''} x {w} {' '.join(case[2:])} threads={n}"
        return i, out, label, r

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs))
    for done, (i, out, label, r) in enumerate(pool.map(one, range(len(runs)))):
        if r.returncode == 0:
            passed += 1
            try:
                with open(os.path.join(out, "summary.json")) as f:
                    tasks += int(json.load(f)["counters"]["total"]["tasks"])
            except (OSError, KeyError, ValueError):
                pass
        else:
            failed += 1
            tail = "\n    ".join((r.stderr or r.stdout).strip().splitlines()[-12:])
            print(f"matrix: FAIL {label} (exit {r.returncode}):\n    {tail}", file=sys.stderr)
        shutil.rmtree(out, ignore_errors=True)
        if (done + 1) % 20 == 0 or done + 1 == len(runs):
            print(f"matrix: {done + 1}/{len(runs)} runs, {failed} failed, {time.monotonic() - t0:.0f} s",
                  file=sys.stderr, flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print(f"matrix ({os.path.basename(os.path.dirname(a.schedbed))}): {len(runs)} runs, {tasks} tasks executed, "
          f"{failed} failed runs")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
