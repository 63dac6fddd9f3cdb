#!/usr/bin/python3
"""calibrate.py - measure the simulator's costs on this machine and write the cost file.

    calibrate.py [--schedbed BIN] [--out FILE] [--runs DIR] [--note TEXT] [--allow-dirty] [--retry-failed]
                 [--speed slow|fast]

It writes this machine's table, sim/costs-NAME.txt (NAME from `schedbed list --machine`: the CPU
model and the hardware thread count, as meta.json's `machine` has it), the table a simulated
run on this machine uses unless --sim-costs names another. Only micro-benchmarks feed it, never a
workload the validation (make validate-sim) compares.

Two sources. The primitives (push, pop and steal on the core's deque, a spin iteration, a yield,
a futex wake-up and the way back from a park, a cache-line transfer between two cores) come from
the calibrate program (sim/calibrate.c), the fastest of 31 rounds (a busy machine only adds). Each policy's per-task overhead
comes from whole native runs of schedbed: the micro workload's chain (each task spawns the next,
no work) at 1 worker, the CPU time a longer chain adds per task it adds, median of 3 pairs; that overhead minus the push becomes
the policy's `push@POLICY` (a submit with the core's per-task overhead, as the simulator charges
it: every task is submitted through the policy, while some are taken without a policy call, from
the caller's own list under serial and hybrid). patterns' kernels (`compute_iter`, `memory_double`:
the workload's own computation, which moves no simulated clock) come from patterns under serial at
1 worker, each kernel at 0 iterations and at many: the CPU the iterations add, per iteration. A job's own CPU beyond its task's (`job`) comes
from the same kind of runs: one request thread running one-task jobs back to back under serial.
What a job costs when it is created on one thread and ended on another (`job_create`, `job_end`:
its memory and its counters move between cores) comes from micro chains of one task too, 64 in
flight from one request thread to one fifo worker that never sleeps (machines.py's probe), and
the same probe under each other policy in a third of the rounds gives `job_create@POLICY` and
`job_end@POLICY` (crossjob.py: a policy's own per-job state and hand-over). On a
host whose cross-thread speed has two levels (the rounds' rates in two groups: machines.two_levels),
the table takes the slow level's rounds unless --speed fast says otherwise (the median of all
rounds would flip with which level had more of them), and the header gives both levels.
`calibrate.py --runs DIR --speed fast --out FILE` writes the other level's table from the same
runs without running them again. The calibrate program also gives what a park costs the parked
thread in CPU (`park_cpu`), every round's: the rounds whose two threads shared a CPU cost a tenth
as much, in a share that changes from one calibration to the next, so where the rounds fall on two
levels (machines.two_levels) the table has the high one's median, the two threads on two CPUs.
The transfer to another socket needs a machine with two; on one socket the file keeps the
previous value (never below the measured `line`) and says so. The header records the date, the machine, the git commit and the
load average: a measurement on a busy machine reads high.

The measurements are a manifest of the sweep runner (--runs DIR, default
results/calibrate/MACHINE-TIME/): the calibrate program (beside schedbed, as make builds it; its
output kept as primitives.txt) and the chains, alternating the policies, each a result directory
whose meta.json records the commit and the machine the header names. A changed tree is refused
unless --allow-dirty marks the table; the same command with the same --runs resumes.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

import machines
from sbread import read_run
from sbresults import policy_names
from sbdesc import MANIFEST
from sbrun import line_state, read_status, run_manifest
from crossjob import POLICY_EVERY, REMOTE_ROUNDS, remote_lines, per_remote, remote_costs, policy_costs

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORDER = ["push", "pop", "pop_empty", "steal", "steal_empty", "wake", "park", "park_cpu", "relax", "yield", "line", "line_remote",
         *[f"cold_{k}" for k in range(9, 23)], "park_p10", "park_p50", "park_p90", "park_p99", "park_p999", "park_long_after"]
ORDER += [f"{g}_{q}" for g in ("park_busy", "park_idle", "over_100us", "over_1ms")
          for q in ("p10", "p50", "p90", "p99", "p999")]
ORDER += ["noise_every"] + [f"noise_{q}" for q in ("p10", "p50", "p90", "p99", "p999")]
# measured, written as comments: each group is charged once a validation on its machine supports it
COMMENTED = {k for k in ORDER if k.startswith(("park_long_after", "park_busy_", "park_idle_", "noise_"))}
# the interrupted holder's price and the preemption shares (results/paper/wake-interrupt/): as comments
# until a validation on the table's machine supports them
PREEMPT_MARK = "# "
CHAINS = (200000, 2000000)  # two chain lengths: the difference cancels start-up and end
JOBS = (100000, 1000000)  # two counts of one-task jobs, for `job` alike
# patterns' kernels, each at 0 iterations and at this many (serial, 1 worker, KERNEL_JOBS jobs of the default
# 400-task stencil): the slope is the kernel's alone. memory_bound passes over the 8 KiB scratch (1,024 doubles).
KERNELS = {"compute_iter": ("compute_bound", 4096, 1), "memory_double": ("memory_bound", 64, 1024)}
KERNEL_JOBS = 50


def sockets():
    ids = set()
    base = "/sys/devices/system/cpu"
    for d in os.listdir(base):
        p = os.path.join(base, d, "topology", "physical_package_id")
        if os.path.exists(p):
            with open(p) as f:
                ids.add(f.read().strip())
    return max(1, len(ids))


def previous(path):
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and not line.startswith("#"):
                    old[parts[0]] = parts[1]
    return old


def chain_lines(pols):
    """1-worker chains with no work, a short and a long one per policy, 3 rounds alternating the
    policies: what per_task reads."""
    return [{"id": f"chain.{pol}.{n}.r{rep}", "out": f"chain/{pol}/{n}-r{rep}", "program": "schedbed",
             "timing": True, "slim": True, "tags": {"policy": pol, "tasks": n, "rep": rep},
             "args": ["--policy", pol, "--workload", "micro", "--threads", "1", "-n", "1", "--set", "pattern=chain",
                      "--set", f"length={n}", "--set", "work_ns=0"]}
            for rep in (1, 2, 3) for pol in pols for n in CHAINS]


def job_lines():
    """One request thread running one-task jobs with no work back to back under serial (every job
    created, run, torn down and reaped on that thread: no wake-up, no other thread's share), a
    short and a long run, 3 rounds: what per_job reads. The rows are recorded, as a validation's
    runs record them."""
    return [{"id": f"jobs.{n}.r{rep}", "out": f"jobs/{n}-r{rep}", "program": "schedbed", "timing": True,
             "tags": {"policy": "serial", "jobs": n, "rep": rep},
             "args": ["--policy", "serial", "--workload", "micro", "--threads", "1", "-n", str(n), "--set",
                      "pattern=chain", "--set", "length=1", "--set", "work_ns=0"]}
            for rep in (1, 2, 3) for n in JOBS]


def kernel_lines():
    """patterns under serial at 1 worker, each kernel at 0 iterations and at many, 3 rounds: what
    per_kernel reads. The validation's patterns cell runs 1,024 iterations under every policy; only
    the slope between these two counts, which no policy or worker count enters, feeds the table."""
    return [{"id": f"kernel.{cost}.{it}.r{rep}", "out": f"kernel/{cost}/{it}-r{rep}", "program": "schedbed",
             "timing": True, "slim": True, "tags": {"policy": "serial", "kernel": kern, "iterations": it, "rep": rep},
             "args": ["--policy", "serial", "--workload", "patterns", "--threads", "1", "-n", str(KERNEL_JOBS),
                      "--warmup", "0", "--set", f"kernel={kern}", "--set", f"iterations={it}"]}
            for rep in (1, 2, 3) for cost, (kern, n, _) in KERNELS.items() for it in (0, n)]


def per_kernel(runs, cost):
    """ns per unit of a kernel (a compute_bound iteration; a double of a memory_bound pass): the CPU
    the iterations add over their count in the kernel's tasks (every task but each job's launcher),
    median of 3 pairs."""
    _, n, units = KERNELS[cost]
    vals = []
    for rep in (1, 2, 3):
        (c0, _), (c1, k1) = ((s["cpu"]["user_s"] + s["cpu"]["sys_s"], s["tasks"] - s["jobs"])
                             for s in (runs[f"kernel.{cost}.{it}.r{rep}"]["summary"] for it in (0, n)))
        vals.append((c1 - c0) * 1e9 / (k1 * n * units))
    return statistics.median(vals)


def park_cpu_cost(rounds):
    """park_cpu and a header line from the calibrate program's rounds: they fall on two levels
    where the two threads of some rounds shared a CPU (a tenth of the others' cost on the AMD EPYC
    host) in proportions that change from one calibration to the next, so the median of all would
    flip between the levels. Where there are two (machines.two_levels), the high level's median:
    a park whose two threads ran on two CPUs, as a simulated thread with a core of its own parks."""
    split = machines.two_levels(rounds)
    high = [r for r in rounds if split is None or r >= split]
    value = statistics.median(high)

    def span(rs):
        return f"{len(rs)} rounds at {min(rs):.0f} to {max(rs):.0f} ns (median {statistics.median(rs):.0f})"
    if split is None:
        return value, [f"park_cpu: one level, {span(rounds)}."]
    low = [r for r in rounds if r < split]
    return value, [f"park_cpu: two levels, {span(low)} (the two threads on one CPU)",
                   f"and {span(high)} (on two); the table has the second's median."]


def per_job(runs):
    """CPU ns per one-task job in the measured window (writing the rows out after it is not a
    job's), the difference between a short and a long run over their difference in jobs, median
    of 3 pairs."""
    vals = []
    for rep in (1, 2, 3):
        (c0, n0), (c1, n1) = ((s["cpu"]["window_user_s"] + s["cpu"]["window_sys_s"], s["jobs"])
                              for s in (runs[f"jobs.{n}.r{rep}"]["summary"] for n in JOBS))
        vals.append((c1 - c0) * 1e9 / (n1 - n0))
    return statistics.median(vals)


def per_task(runs, pol):
    """CPU ns per task of a 1-worker chain with no work: the CPU difference between a short and a
    long chain over their difference in tasks (start-up, the other threads' and the end's CPU
    cancel), median of 3 pairs."""
    vals = []
    for rep in (1, 2, 3):
        (c0, n0), (c1, n1) = ((s["cpu"]["user_s"] + s["cpu"]["sys_s"], s["tasks"])
                              for s in (runs[f"chain.{pol}.{n}.r{rep}"]["summary"] for n in CHAINS))
        vals.append((c1 - c0) * 1e9 / (n1 - n0))
    return statistics.median(vals)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schedbed", default=os.path.join(ROOT, "build", "release", "schedbed"))
    ap.add_argument("--out", help="default: sim/costs-MACHINE.txt, this machine's table")
    ap.add_argument("--runs", help="the measurements' directory (default: results/calibrate/MACHINE-TIME)")
    ap.add_argument("--note", default="", help="a line for the header (e.g. what else ran meanwhile)")
    ap.add_argument("--allow-dirty", action="store_true", help="measure a tree with uncommitted changes (marked)")
    ap.add_argument("--retry-failed", action="store_true", help="rerun the failed runs of an interrupted --runs DIR")
    ap.add_argument("--speed", choices=("slow", "fast"), default="slow",
                    help="on a host whose cross-thread speed has two levels, the level job_create and job_end "
                         "are priced at (default: slow)")
    a = ap.parse_args()
    name = subprocess.run([a.schedbed, "list", "--machine"], capture_output=True, text=True)
    if name.returncode:
        sys.exit(f"calibrate.py: {a.schedbed} list --machine failed: {name.stderr.strip()}")
    name = name.stdout.strip()
    a.out = a.out or os.path.join(ROOT, "sim", f"costs-{name}.txt")
    runs_dir = a.runs or os.path.join(ROOT, "results", "calibrate",
                                      f"{name}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    pols = policy_names(a.schedbed)
    lines = [{"id": "primitives", "out": "primitives", "program": "calibrate", "args": [], "timing": True,
              "stdout": "primitives.txt", "tags": {}}]
    # the remote rounds spread evenly between the others: a job crossing threads costs 2.3 times as
    # much in some seconds as in others on the AMD EPYC host, and rounds back to back would see one
    rest = chain_lines(pols) + job_lines() + kernel_lines()
    n = len(rest)
    for i in range(REMOTE_ROUNDS):
        lines += remote_lines([i + 1], pols) + rest[i * n // REMOTE_ROUNDS:(i + 1) * n // REMOTE_ROUNDS]
    # a second table from the same runs (--speed) runs nothing: its header must not claim this minute's load
    fresh = not (os.path.exists(os.path.join(runs_dir, MANIFEST))
                 and all(line_state(runs_dir, ln)[0] == "done" for ln in lines))
    load0 = os.getloadavg()[0]
    rc = run_manifest(runs_dir, lines, a.schedbed, allow_dirty=a.allow_dirty, retry_failed=a.retry_failed,
                      resume=f"calibrate.py --runs {runs_dir} --retry-failed")
    if rc:
        return rc
    load1 = os.getloadavg()[0]
    runs = {ln["id"]: read_run(os.path.join(runs_dir, ln["out"]), read_status(runs_dir, ln)) for ln in lines}
    made = [r["provenance"] for r in runs.values()]
    machine = machines.one_machine(made, f"calibrate {runs_dir}")
    sha = ", ".join(sorted({p["sha"][:12] + ("+changes" if p["dirty"] else "") for p in made}))
    cost = {}
    park_rounds = []
    with open(os.path.join(runs["primitives"]["dir"], "primitives.txt")) as f:
        for line in f:
            k, v = line.split()
            if k == "park_cpu_round":
                park_rounds.append(float(v))
            else:
                cost[k] = float(v)
    cost["park_cpu"], park_head = park_cpu_cost(park_rounds)
    old = previous(a.out)
    nsock = sockets()
    remote_note = ("line_remote: this machine has one socket, so it cannot be measured here; kept from the "
                   "previous file (an estimate, not a measurement), at least `line`")
    cost["line_remote"] = max(float(old.get("line_remote", 150)), cost["line"])
    task = {}
    for pol in pols:
        task[pol] = per_task(runs, pol)
        print(f"calibrate: {pol:13} {task[pol]:.0f} ns per task", flush=True)
    # a job's own CPU: the serial one-task job's, less its task's (serial's submit and a pop)
    cost["job"] = max(per_job(runs) - task["serial"], 0.0)
    print(f"calibrate: a job costs {cost['job']:.0f} ns beyond its task", flush=True)
    cost["job_create"], cost["job_end"], split, remote_head = remote_costs(per_remote(runs, cost, task), a.speed)
    print(f"calibrate: a job ended on another thread costs its creator {cost['job_create']:.0f} ns and its "
          f"finisher {cost['job_end']:.0f} ns" + (f" (the host's {a.speed} speed of two)" if split else ""), flush=True)
    jobs_at = policy_costs(runs, cost, task, pols, split, a.speed)
    for pol, (create, end) in jobs_at.items():
        print(f"calibrate: {pol:13} a job ended on another thread: {create:.0f} and {end:.0f} ns", flush=True)
    for k in KERNELS:
        cost[k] = per_kernel(runs, k)
    print(f"calibrate: patterns' kernels: {cost['compute_iter']:.2f} ns per compute_bound iteration, "
          f"{cost['memory_double']:.3f} ns per double of a memory_bound pass", flush=True)
    # the simulator refuses a spin iteration or a yield that costs nothing
    cost["relax"] = max(cost["relax"], 1.0)
    cost["yield"] = max(cost["yield"], 1.0)
    stamp = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())
    lines = [
        "# schedbed simulator cost table: nanoseconds the SimGrid executor (sim/exec_sim.cpp) charges per",
        "# operation; the names are core/exec.h's enum sb_cost. Format: \"version V\", then \"NAME NS\" lines;",
        "# \"NAME@POLICY NS\" replaces NAME for that policy only.",
        "#",
        f"# Measured by `make calibrate` (scripts/calibrate.py, sim/calibrate.c) on {stamp} at commit {sha}",
        f"# (the runs: {os.path.relpath(runs_dir, ROOT) if os.path.abspath(runs_dir).startswith(ROOT + os.sep) else runs_dir}).",
        f"# Machine {name}: {machine}, Linux {platform.release()}; {nsock} socket"
        + ("s." if nsock > 1 else "."),
        (f"# Load average {load0:.1f} at the start, {load1:.1f} at the end"
         + (" (a busy machine: every figure reads high, the two-thread ones most)." if max(load0, load1) > 1.5 else ".")
         if fresh else "# Derived from runs already finished (nothing ran again): their load average is not recorded here."),
    ]
    if a.note:
        lines.append(f"# {a.note}")
    lines += [
        "# Primitives: the fastest of 31 rounds (other processes only add time). push, pop, pop_empty,",
        "# steal, steal_empty: the core's deque, owner's and thief's side, without a line transfer (`line`",
        "# prices that); steal_empty is one empty victim, charged per victim a sweep visits. wake: the",
        "# waker's futex call; park: from that call until the sleeper runs again; park_cpu: the CPU time the",
        "# two threads' parks cost themselves (their CPU less their wake calls, per park), the median of the",
        "# rounds where the two threads ran on two CPUs (those on one cost a tenth as much). relax: one pause;",
        "# yield: one sched_yield; line: half the round trip of a cache line bounced between two threads.",
        "# cold_K: a walk around a ring of 2^K tasks linked in a shuffled order, each step loading the task the",
        "# last named, less the walk around 2^6 (in L1); the median of 15 walks (5 sweeps over K, 3 each).",
        "# The simulator charges cold_K for loading a task (a pop, a free list's, a join's update) that more",
        "# than 2^(K-1) and at most 2^K other tasks were touched since it was (cold_22 beyond).",
        "# park_p10 .. park_p999: percentiles of park over every hand-off of all 31 rounds (nearest rank);",
        "# the simulator draws each park from them (linear between them), so wake-ups have the machine's tail.",
        "# park_long_after: the first of 25..1000 us of sleep at which a park woken by a running thread takes",
        "# twice its median at 25 us (200 parks each); park_busy_*: percentiles of 1000 parks of 1 ms woken by",
        "# a thread that kept running, park_idle_*: woken by one just back from a 1 ms timed sleep. A simulated",
        "# park that slept park_long_after or more would draw from one of the two by its waker; they are written",
        "# as comments (measured, not charged): with them the 2-core validation lost more than it gained.",
        "# over_100us_*, over_1ms_*: how late 1000 timed sleeps of 100 us and of 1 ms returned; a simulated",
        "# sleep or timed park's timeout returns that late (interpolated by its length).",
        "# noise_every, noise_p*: a pinned thread per CPU spins 1 s on the clock; a gap of 2 us or more is time the",
        "# machine took: the mean time between two, their lengths; a simulated thread loses them. As comments.",
        "# slice: the median turn of two threads spinning on one CPU (1 s): with it, a run that shares its",
        "# cores (--sim-cores) hands them out in slices, a woken thread taking a core at once.",
        "# wake_stack_<R>us: of 60 wake-ups by a thread that has run R us since its own wake-up, the share in",
        "# which the wakee ran on the waker's CPU before the waker's call returned (the waker then waits);",
        "# wake_stack_duty_<D>: the share of 80 such wake-ups (the waker at 20 us) by a wakee busy D% of the time",
        "# (30 rounds to settle first); a wake-up's share is wake_stack_<R>us times duty's over duty_5's. As comments.",
        "# wake_interrupt: the CPU a thread woken from another CPU onto one a spinning thread holds costs itself",
        "# (2000 wake-ups 200 us apart, median of 5 rounds): charged to a wakee that preempts a holder other than",
        "# its waker. wake_preempt_<R>: of 80 wake-ups a quarter into a 200 us burst of a holder busy 15% of the",
        "# time, the wakee busy R% as much, the share in which the wakee ran first (30 rounds to settle first).",
        "# job: CPU time per one-task job with no work of one request thread under serial, in the window (the",
        f"# CPU {JOBS[1]} jobs take beyond {JOBS[0]}, over the extra jobs; median of 3 pairs), less serial's per-task",
        "# time: creating, submitting, counting, recording and reaping a job; charged where the job ends if its",
        "# creator ends it. job_create, job_end: a job created on one thread and ended on another, from one",
        f"# request thread keeping {machines.PROBE_WINDOW} one-task jobs with no work in flight for one fifo worker that never sleeps",
        f"# ({machines.PROBE_S:g} s, median of {REMOTE_ROUNDS} rounds spread over the calibration): the request thread's CPU per job",
        "# (the window's CPU less the worker's core) less its push and a line, and the worker's busy time per job",
        "# less its pops, the teardown task's push and a line; charged to the creator as it lets go of the job",
        "# and to the finisher at the teardown. job_create@POLICY, job_end@POLICY: the same probe under that",
        f"# policy in one round of every {POLICY_EVERY}, right after fifo's: fifo's figure plus the median difference of the",
        "# pairs (a policy's per-job state and hand-over, which push@POLICY's one-job chain never shows).",
        *[f"# {x}" for x in remote_head],
        *[f"# {x}" for x in park_head],
        "# compute_iter, memory_double: patterns' kernels, per compute_bound iteration (16 FLOP) and per double",
        f"# of a memory_bound pass over the default 8 KiB scratch: the CPU {KERNELS['compute_iter'][1]} and "
        f"{KERNELS['memory_double'][1]} iterations add to {KERNEL_JOBS} jobs",
        "# of the default stencil under serial at 1 worker over 0 iterations (median of 3 pairs); charged to each",
        "# simulated task as work, since an actor's own computation moves no simulated clock.",
        f"# push@POLICY: CPU time per task of a 1-worker chain with no work (the CPU {CHAINS[1]} tasks take",
        f"# beyond {CHAINS[0]}, over the extra tasks; median of 3 pairs of native runs) minus pop: the policy's callbacks and the core's per-task path, charged on the",
        "# submit because every task passes there (the caller's own list is popped without a policy call).",
        f"# {remote_note}",
        "# Re-measure: make calibrate on this machine (rewrites this file; commit it).",
        f"version {stamp[:10]}-{sha}" + (f"-{a.speed}" if split else ""),
    ]
    # COMMENTED: uncomment to simulate with them (PAPER.md §4.11); noise_* is absent where no gap was seen
    lines += [("# " if k in COMMENTED else "") + (f"{k} {cost[k]:.0f}" if k in ("park_long_after", "noise_every")
                                                 else f"{k} {cost[k]:.1f}") for k in ORDER if k in cost]
    if "slice" in cost:  # not measured where two threads cannot share one CPU
        lines.append(f"slice {cost['slice']:.0f}")
    # as comments, as the long parks: charged, they cost the 2-core validation more than they gained
    lines += [f"# {k} {cost[k]:.3f}" for k in cost if k.startswith("wake_stack_")]
    lines += [f"{PREEMPT_MARK}{k} {cost[k]:.0f}" for k in cost if k == "wake_interrupt"]
    lines += [f"{PREEMPT_MARK}{k} {cost[k]:.3f}" for k in cost if k.startswith("wake_preempt_")]
    lines += [f"job {cost['job']:.1f}", f"job_create {cost['job_create']:.1f}", f"job_end {cost['job_end']:.1f}",
              f"compute_iter {cost['compute_iter']:.3f}", f"memory_double {cost['memory_double']:.4f}"]
    # a line serves one operation at a time, each in its turn (the model's, not a measurement); a
    # woken thread goes back to its last core when none is idle (Linux's choice, PAPER.md §4.11)
    lines += ["line_queue 1", "wake_last_core 1"] + [f"push@{pol} {max(task[pol] - cost['pop'], cost['push']):.1f}" for pol in pols]
    lines += [f"{k}@{pol} {v:.1f}" for pol, vs in jobs_at.items() for k, v in zip(("job_create", "job_end"), vs)]
    with open(a.out + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(a.out + ".tmp", a.out)
    print(f"calibrate: wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
