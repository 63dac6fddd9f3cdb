#!/usr/bin/python3
"""test_sim.py - the SimGrid executor from the outside (`schedbed run --executor sim`).

    test_sim.py --schedbed BIN [--only NAME]

What is asserted:
  determinism   the same seed twice gives byte-identical jobs (decompressed) and workers.csv, and a
                summary.json that differs only in the run id; another seed gives other jobs
                (so the comparison is not vacuous); meta.json names the executor, the platform
                and every cost of the table
  accounting    every registered policy at 64 simulated workers: exit 0, every job torn down
                once and every task run once (the run's own reconciliation and the counts), 64
                worker rows, and work spread over more than one worker for every policy that
                runs jobs on workers
  agreement     one cheap case where the answer is known (1 worker, a chain of 200 us tasks):
                native and simulated runs do the same jobs and tasks; the simulation spends the
                work's 0.8 s of CPU within 2%, the native run at least a quarter of that (CPU,
                not wall time: this machine is shared; a floor only, the core's speed may change)
  progress      every registered policy on oltp at 2 simulated workers for 0.2 simulated seconds
                ends within 60 s of wall time and exits 0 (a loop that calls only the policy, such as a
                conditional task popped before its time and queued again, must still move the
                virtual clock, or the simulation never ends)
  costs         a "push@POLICY" line of the cost file prices that policy's submits alone: with
                push@stealing at 100 us, a 1-worker chain of 2000 tasks with no work spends at least
                0.19 s of simulated CPU under stealing, and fifo (no such line) stays below 0.05 s;
                meta.json records the cost each run used
  cold          a task loaded far from its last touch pays for it: with the table's cold curve set to
                100 us from cold_12 on (a reuse distance over 2^11 tasks), fib(18) at 1 worker under
                stealing with its own queue FIFO (the whole frontier queued, joins waiting long)
                spends at least 100 us more simulated CPU than with the curve at 0, and with LIFO (a
                worker reuses the same few tasks) under a fiftieth of FIFO's extra; without the
                curve a table's `cold` beyond cold_after does the same; a curve with some of its
                fourteen and not all is refused (exit 2, one line); meta.json gives the curve, and
                null for cold and cold_after where the table leaves them out
  park_spread   with park's percentiles in the table each park draws its cost from them: a table
                whose 99th percentile is 1 ms gives the wake workload (1 worker, sleeping between
                jobs) a job p99 over ten times the one without percentiles, and two runs of one seed
                the same jobs; a table with some of the five and not all, or with percentiles that
                fall, is refused (exit 2, one line); without them meta.json records them as null
  long_parks    a long park's way back depends on its waker, and a timed sleep returns late: with a
                lateness of 1 ms in the table a request thread pausing 100 us submits under a third of
                the jobs it does without; a worker woken by the request thread back from its pause
                pays park_idle_* (job p50 at least 1 ms with it at 1 ms, under 100 us with park_busy_*
                there instead), a worker woken by another worker pays park_busy_* (its mean wake-up
                at least 0.5 ms); the draws replay; a table with part of a group, park_busy_*
                without park_long_after, one lateness group without the other, or percentiles that
                fall is refused (exit 2, one line); meta.json records the groups, null when absent
  noise         the machine's losses: with noise_every 1 ms and every loss 50 us, one worker on
                patterns has a job p99 at least 40 us above its median (without them the two are
                within 5%) and 90% to 99% of the jobs/s; the losses replay; meta.json records the
                group (null without it); a table with noise_every alone, or 0, is refused (exit 2,
                one line)
  busy_pause    the distribution mode's busy loop pays its extra pauses: busy_pause=10000 leaves
                under a hundredth of the rounds it makes without (oltp, 2 simulated workers, 0.1 s),
                for the same jobs within 10%
  bad input     an unknown executor, an unusable cost file, a cost for a policy that does not
                exist (push@stealng) and a table without the run's policy's per-task cost (no
                push@stealing: it would be charged the bare deque push): exit 2, one line naming
                the valid choices or the problem (and for the missing cost, the command that
                measures it), nothing written
  table         without --sim-costs a run uses this machine's table, sim/costs-NAME.txt with NAME
                from `schedbed list --machine`, and meta.json names both; a machine without one
                gets exit 2 and a line naming the file and make calibrate
  validate      a slice of make validate-sim (1 worker, fifo, tiny and wake, 3 seeds, 0.1 s)
                through the sweep runner: the manifest holds every native run before every
                simulated one, each simulated one naming the cost table; every run finishes; the
                report's errors are the simulator's medians against the native ones, recomputed
                here from runs.csv; table.md counts each cell within target or not
  host_speeds   a host with two cross-thread speeds (scripts/machines.py): probe rates split in
                in two groups whose medians are 1.5x apart (probes caught mid-change between them
                too) and not at all on one speed; a run is fast or slow
                where the probes either side agree, "between" where they do not; calibrate.py prices
                job_create and job_end from one speed's rounds (slow, or fast with --speed), not the
                median of both, and park_cpu from the rounds on two CPUs where some shared one;
                job_create@POLICY and job_end@POLICY are fifo's plus the median difference of the
                policy's rounds paired with fifo's at the table's speed (planted rounds), none for
                a policy whose worker ends no job; validate_sim.py --probes puts a probe before the first native run
                and after each, and report --speed keeps the runs of that speed alone (planted
                probe rates: one fast, one between, one slow run), counted in table.md; runs.csv
                names each simulated run's table (costs_version), and the report says so where the
                table's speed is not that of most native runs compared; --speed where the probes
                show one speed is a one-line error
  kernel_cost   patterns' kernels take simulated time as the table prices them: serial at 1
                worker, 100 iterations, a compute_bound task costs 100 x compute_iter more and a
                memory_bound one 100 x 1,024 doubles x memory_double more than with neither in the
                table (then a task costs its scheduling alone); meta.json: null without them
  wake_last_core  with the table's wake_last_core 1 a thread woken while no core is idle takes back
                the core it held last: tiny at 1 worker with 4 request threads on 2 sliced cores,
                the worker is preempted several times less, the request threads more
                (summary.json's window_preempted_*); shared evenly nothing is preempted; 2 is refused;
                natively, every thread on one CPU (taskset), the kernel's count of the worker's
                preemptions is more than 0
  wake_preempt  with the table's wake_preempt_* a woken thread preempts its last core's holder in
                the share for its duty as a part of the holder's, none if busier: tiny at 1 worker,
                4 request threads, 2 sliced cores: shares of 1 preempt request threads less than
                always preempting (they are about as busy), shares of 0 nothing but a slice's end;
                wake_interrupt prices a wake-up that interrupts a holder other than its waker:
                dearer runs slower, and with nothing preempted it changes no figure; meta.json
                names both; a partial group, or one without wake_last_core 1, is refused in a line
Every other run names a table (this machine's when there is one, else a committed one): the
checks are about behaviour, and a fresh machine has no table of its own. The checks that plant a
contrast on a base table (the optional groups left out, each test adding its own) take one
committed table whatever the machine: a simulated run's numbers depend on its table alone, so
the verdict is then the same on every machine (the Intel 2-core host's own table once made two
of them fail, their contrasts not appearing on its costs: PAPER.md §4.11, row 106).
Each failure prints what differed; the exit status is the number of failed checks.
"""
import argparse
import csv
import glob
import gzip
import json
import lzma
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from sbresults import policy_names  # noqa: E402

FAILS = []
SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sim")


def machine(sb):
    return subprocess.run([sb, "list", "--machine"], capture_output=True, text=True, check=True).stdout.strip()


def table(sb):
    own = os.path.join(SIM, f"costs-{machine(sb)}.txt")
    return own if os.path.exists(own) else sorted(glob.glob(os.path.join(SIM, "costs-*.txt")))[0]


def cost_names():
    # The core's own list (sb_cost_names in core/exec.c), so a cost added there is expected here
    # without a count to keep in step.
    with open(os.path.join(SIM, "..", "core", "exec.c")) as f:
        src = f.read()
    body = src[src.index("sb_cost_names[SB_NR_COSTS] = {"):]
    return re.findall(r'\]\s*=\s*"([a-z0-9_]+)"', body[:body.index("};")])


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        FAILS.append(what)


def run(sb, args, out, executor="sim", timeout=600, costs=True):
    if executor == "sim" and costs and "--sim-costs" not in args:
        args = args + ["--sim-costs", table(sb)]
    cmd = [sb, "run", "-q", "--executor", executor] + args + ["--out", out]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, -1, "", f"no end after {timeout} s of wall time: hung")


def read(path):
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        with gzip.open(path + ".gz", "rb") as f:  # the per-job rows are written compressed
            return f.read()
    with open(path, "rb") as f:
        return f.read()


def summary(d):
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f)


def determinism(sb, tmp):
    args = ["--policy", "stealing", "--workload", "oltp", "--threads", "8", "-d", "0.2", "--warmup", "0.05"]
    dirs = [os.path.join(tmp, n) for n in ("a", "b", "c")]
    for d, seed in zip(dirs, ("1", "1", "2")):
        p = run(sb, args + ["--seed", seed], d)
        check(p.returncode == 0, f"determinism: run seed {seed} exits 0 ({p.returncode}: {p.stderr.strip()})")
        if p.returncode:
            return
    a, b, c = dirs
    for f in ("jobs.csv", "workers.csv"):
        check(read(os.path.join(a, f)) == read(os.path.join(b, f)), f"determinism: {f} byte-identical for one seed")
    sa = [l for l in read(os.path.join(a, "summary.json")).splitlines() if b'"run_id"' not in l]
    sb_ = [l for l in read(os.path.join(b, "summary.json")).splitlines() if b'"run_id"' not in l]
    check(sa == sb_, "determinism: summary.json identical but for the run id")
    check(read(os.path.join(a, "jobs.csv")) != read(os.path.join(c, "jobs.csv")), "determinism: another seed gives other jobs")
    check(summary(a)["jobs"] > 100, f"determinism: the run did work ({summary(a)['jobs']} jobs)")
    with open(os.path.join(a, "meta.json")) as f:
        ex = json.load(f)["executor"]
    names = ex.get("costs_ns", {})
    want = cost_names()
    check(ex.get("name") == "sim" and "workers" in ex.get("platform", "") and len(want) > 70
          and sorted(names) == sorted(want),
          f"determinism: meta.json records executor, platform and every cost the core names "
          f"(missing {sorted(set(want) - set(names))}, extra {sorted(set(names) - set(want))})")


def accounting(sb, tmp):
    for pol in policy_names(sb):
        d = os.path.join(tmp, "acc-" + pol)
        args = ["--policy", pol, "--workload", "forkjoin", "--threads", "64", "-n", "64", "--check",
                "--set", "workload.clients=8", "--set", "n=12", "--set", "work_ns=2000"]
        p = run(sb, args, d)
        check(p.returncode == 0, f"accounting {pol}: 64 workers exit 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            continue
        s = summary(d)
        r = s["reconciliation"]
        check(r["ok"] and r["jobs_submitted"] == 64 and r["jobs_done"] == 64 and r["teardowns"] == 64
              and r["tasks_created"] == r["tasks_run"] and r["tasks_run"] > 64 * 100,
              f"accounting {pol}: every job torn down once, every task run once ({r})")
        ws = s["counters"]["workers"]
        used = sum(1 for w in ws if w["tasks"] > 0)
        check(len(ws) == 64, f"accounting {pol}: 64 worker rows ({len(ws)})")
        if pol != "serial":  # serial runs each job on the thread that submits it, by design
            check(used > 1, f"accounting {pol}: more than one worker ran tasks ({used})")


def agreement(sb, tmp):
    # Not a timing test: wall-clock throughput on a shared machine says more about the
    # neighbours than about the simulator. What must agree is the work done (same jobs, same
    # tasks, from the same seed) and the CPU time it took, which load does not stretch.
    args = ["--policy", "stealing", "--workload", "micro", "--threads", "1", "-n", "2", "--set", "pattern=chain",
            "--set", "length=2000", "--set", "work_ns=200000"]
    res = {}
    for ex in ("native", "sim"):
        d = os.path.join(tmp, "agree-" + ex)
        p = run(sb, args, d, ex)
        check(p.returncode == 0, f"agreement: {ex} exits 0 ({p.stderr.strip()})")
        if p.returncode:
            return
        s = summary(d)
        res[ex] = (s["jobs"], s["tasks"], s["cpu"]["user_s"] + s["cpu"]["sys_s"])
    check(res["sim"][:2] == res["native"][:2], f"agreement: same jobs and tasks ({res})")
    ideal = 4000 * 200e-6
    cpu = res["sim"][2]
    check(abs(cpu - ideal) / ideal < 0.02, f"agreement: sim CPU {cpu:.3f} s within 2% of the work's {ideal:.3f} s")
    # native: a floor that shows the work was spent as CPU (without it the run costs start-up
    # and 4,000 empty tasks, tens of ms). Only a floor, and a loose one: sb_work_ns's speed is
    # measured once at the process's start, so a core that runs faster or slower later (turbo,
    # frequency scaling, a busy hyperthread sibling on a shared CI host) moves the CPU time either
    # way by a factor that has nothing to do with the simulator; idle spinning adds on top.
    cpu = res["native"][2]
    check(cpu >= 0.25 * ideal, f"agreement: native CPU {cpu:.3f} s, at least a quarter of the work's {ideal:.3f} s")


def progress(sb, tmp):
    for pol in policy_names(sb):
        d = os.path.join(tmp, "prog-" + pol)
        p = run(sb, ["--policy", pol, "--workload", "oltp", "--threads", "2", "-d", "0.2", "--warmup", "0.05"], d,
                timeout=60)
        check(p.returncode == 0, f"progress {pol}: oltp at 2 workers ends and exits 0 ({p.returncode}: "
              f"{p.stderr.strip()[:300]})")
        if p.returncode == 0:
            check(summary(d)["jobs"] > 0, f"progress {pol}: jobs finished ({summary(d)['jobs']})")


def costs(sb, tmp):
    base = table(sb)
    path = os.path.join(tmp, "costs-pop.txt")
    with open(base) as f, open(path, "w") as g:
        # a comment longer than any buffer (calibrate.py's run past 256 characters) is a comment
        g.write("# " + "a long comment, " * 80 + "push 1\n" + f.read() + "push@stealing 100000\n")
    for pol, lo, hi in (("stealing", 0.19, 1.0), ("fifo", 0.0, 0.05)):
        d = os.path.join(tmp, "costs-" + pol)
        p = run(sb, ["--policy", pol, "--workload", "micro", "--threads", "1", "-n", "1", "--set", "pattern=chain",
                     "--set", "length=2000", "--sim-costs", path], d)
        check(p.returncode == 0, f"costs {pol}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            continue
        cpu = summary(d)["cpu"]["user_s"]
        with open(os.path.join(d, "meta.json")) as f:
            push = json.load(f)["executor"]["costs_ns"]["push"]
        check(lo <= cpu < hi and (push == 100000) == (pol == "stealing"),
              f"costs {pol}: simulated CPU {cpu:.3f} s in [{lo}, {hi}), push charged {push} ns")


def job_cost(sb, tmp):
    """`job` is charged once per job, on the thread that ends it: one request thread running
    one-task jobs under serial spends `job` more per job (its simulated CPU, over the jobs), and
    meta.json says null where the table has none."""
    base = base_table()
    cpu, meta = {}, {}
    for name, extra in (("none", ""), ("job", "job 20000\n")):
        path = os.path.join(tmp, f"job-{name}.txt")
        with open(path, "w") as f:
            f.write(base + extra)
        d = os.path.join(tmp, "job-" + name)
        p = run(sb, ["--policy", "serial", "--workload", "micro", "--threads", "1", "-n", "500", "--set", "pattern=chain",
                     "--set", "length=1", "--sim-costs", path], d)
        check(p.returncode == 0, f"job {name}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        cpu[name] = summary(d)["cpu"]["user_s"]
        with open(os.path.join(d, "meta.json")) as f:
            meta[name] = json.load(f)["executor"]["costs_ns"].get("job", "absent")
    extra = (cpu["job"] - cpu["none"]) * 1e9 / 500
    check(abs(extra / 20000 - 1) < 0.02, f"job: 500 jobs cost 20000 ns more each ({extra:.0f} ns)")
    check(meta == {"none": None, "job": 20000}, f"job: meta.json records the cost, null without it ({meta})")


def kernel_cost(sb, tmp):
    """patterns' kernels take simulated time only as the table prices them: a compute_bound task
    costs iterations x compute_iter more, a memory_bound one iterations x doubles x memory_double,
    and a table without them prices the kernel at nothing (meta.json: null)."""
    base = base_table()
    cpu, meta = {}, {}
    runs = (("none", "", "compute_bound"), ("compute", "compute_iter 10\n", "compute_bound"),
            ("memory", "memory_double 0.25\n", "memory_bound"))
    for name, extra, kernel in runs:
        path = os.path.join(tmp, f"kernel-{name}.txt")
        with open(path, "w") as f:
            f.write(base + extra)
        d = os.path.join(tmp, "kernel-" + name)
        p = run(sb, ["--policy", "serial", "--workload", "patterns", "--threads", "1", "-n", "5", "--warmup", "0",
                     "--set", f"kernel={kernel}", "--set", "iterations=100", "--sim-costs", path], d)
        check(p.returncode == 0, f"kernel {name}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        s = summary(d)
        cpu[name] = (s["cpu"]["user_s"], s["tasks"] - s["jobs"])  # every task but each job's launcher
        with open(os.path.join(d, "meta.json")) as f:
            costs_ns = json.load(f)["executor"]["costs_ns"]
        meta[name] = (costs_ns.get("compute_iter", "absent"), costs_ns.get("memory_double", "absent"))
    for name, each in (("compute", 100 * 10), ("memory", 100 * 1024 * 0.25)):
        (c0, n0), (c1, n1) = cpu["none"], cpu[name]
        extra = (c1 - c0) * 1e9 / n1 if n0 == n1 else float("nan")
        check(abs(extra / each - 1) < 0.02, f"kernel: a {name} task costs {each:.0f} ns more ({extra:.0f} ns, {n1} tasks)")
    check(cpu["none"][0] * 1e9 / cpu["none"][1] < 500, f"kernel: unpriced, a task costs its scheduling alone ({cpu['none']})")
    check(meta == {"none": (None, None), "compute": (10, None), "memory": (None, 0.25)},
          f"kernel: meta.json records the costs, null without them ({meta})")


def apart_table(sb, tmp, name, extra):
    """The base table with wake-ups free (their count moves with the timing) and `extra` added."""
    path = os.path.join(tmp, f"{name}.txt")
    with open(path, "w") as f:
        f.write("".join(ln for ln in base_table().splitlines(True) if not ln.startswith("wake ")) + "wake 0\n" + extra)
    return path


# one request thread, one job at a time, one worker that suspends at once when it runs dry: every
# job is made on the request thread and ended on the worker, and each side parks once per job
ONE_BY_ONE = ["--workload", "micro", "--threads", "1", "-n", "300", "--set", "pattern=chain", "--set", "length=1",
              "--set", "worker_try_count=0"]


def job_apart(sb, tmp):
    """A job ended on another thread than its creator's costs the creator job_create and the
    finisher job_end instead of `job`; without job_end it costs `job`, as before the two were
    measured apart; a job its creator ends (serial's) costs `job` alone."""
    cpu = {}
    for name, pol, extra in (("none", "fifo", ""), ("job", "fifo", "job 20000\n"),
                             ("apart", "fifo", "job 20000\njob_create 30000\njob_end 40000\n"),
                             ("serial-none", "serial", ""), ("serial-apart", "serial", "job 20000\njob_create 30000\njob_end 40000\n")):
        d = os.path.join(tmp, "apart-" + name)
        p = run(sb, ["--policy", pol] + ONE_BY_ONE + ["--sim-costs", apart_table(sb, tmp, "apart-" + name, extra)], d)
        check(p.returncode == 0, f"job apart {name}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        cpu[name] = summary(d)["cpu"]["user_s"]
    for name, base, want in (("job", "none", 20000), ("apart", "none", 70000), ("serial-apart", "serial-none", 20000)):
        extra = (cpu[name] - cpu[base]) * 1e9 / 300
        check(abs(extra / want - 1) < 0.02, f"job apart: {name} costs {want} ns more a job ({extra:.0f} ns)")


def park_cpu(sb, tmp):
    """park_cpu is CPU time the parked thread pays once per park: the extra CPU is park_cpu times
    the parks the counters show (the worker's suspensions and the request thread's job waits, one
    each a job)."""
    got = {}
    for name, extra in (("none", ""), ("cpu", "park_cpu 50000\n")):
        d = os.path.join(tmp, "park-cpu-" + name)
        p = run(sb, ["--policy", "fifo"] + ONE_BY_ONE + ["--sim-costs", apart_table(sb, tmp, "park-cpu-" + name, extra)], d)
        check(p.returncode == 0, f"park_cpu {name}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        s = summary(d)
        got[name] = (s["cpu"]["user_s"], s["counters"]["total"]["suspends"] + s["counters"]["total"]["job_waits"])
    parks = got["cpu"][1]
    paid = (got["cpu"][0] - got["none"][0]) * 1e9 / 50000
    # a counted park whose word changed before it slept costs nothing, and one left owed at the
    # end of the run is never paid
    check(parks >= 600 and parks - 2 <= paid + 0.01 and paid <= parks + 0.01,
          f"park_cpu: paid once per park ({paid:.2f} parks' worth for {parks} counted)")


def park_way_back(sb, tmp):
    """The way back from a park is a wait, not a debt: the woken thread acts when it runs again,
    so it sees what happened meanwhile. One producer keeping 16 one-task jobs in flight, parked
    on the oldest, comes back from a 200 us park to find all 16 done and refills its window, which
    wakes the worker from its own 200 us park: 16 jobs per two parks, 40,000 a second. (As a debt
    it acted at once, found one job done, and paid a park per job: 5,000 a second.)"""
    path = os.path.join(tmp, "park-way-back.txt")
    with open(path, "w") as f:
        f.write("".join(ln for ln in base_table().splitlines(True) if not ln.startswith("park ")) + "park 200000\n")
    d = os.path.join(tmp, "park-way-back")
    p = run(sb, ["--policy", "stealing", "--workload", "tiny", "--threads", "1", "--set", "producers=1", "--set",
                 "window=16", "--duration", "0.05", "--warmup", "0.01", "--sim-costs", path], d)
    check(p.returncode == 0, f"park way back: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
    if p.returncode == 0:
        thr = summary(d)["throughput"]
        check(thr > 4 / 200e-6, f"park way back: more than 4 jobs per park ({thr:.0f} jobs/s; 5000 is one per park)")


COLD_CURVE = [f"cold_{k}" for k in range(9, 23)]


def cold(sb, tmp):
    with open(table(sb)) as f:
        base = "".join(ln for ln in f if not ln.startswith("cold"))
    tables = {"curve-0": "".join(f"{k} 0\n" for k in COLD_CURVE),
              "curve-100us": "".join(f"{k} {0 if int(k[5:]) < 12 else 100000}\n" for k in COLD_CURVE),
              "step-0": "cold 0\ncold_after 2048\n", "step-100us": "cold 100000\ncold_after 2048\n"}
    cpu = {}
    for name, extra in tables.items():
        path = os.path.join(tmp, f"costs-{name}.txt")
        with open(path, "w") as g:
            g.write(base + extra)
        for order in ("fifo", "lifo"):
            d = os.path.join(tmp, f"{name}-{order}")
            p = run(sb, ["--policy", "stealing", "--workload", "forkjoin", "--threads", "1", "-n", "1", "--set", "n=18",
                         "--set", f"local_order={order}", "--sim-costs", path], d)
            check(p.returncode == 0, f"cold {name} {order}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
            cpu[name, order] = summary(d)["cpu"]["user_s"] if p.returncode == 0 else float("nan")
            if name == "curve-100us" and order == "fifo" and p.returncode == 0:
                with open(os.path.join(d, "meta.json")) as f:
                    c = json.load(f)["executor"]["costs_ns"]
                check(c.get("cold_22") == 100000 and c.get("cold_9") == 0 and "cold" in c and c["cold"] is None
                      and c.get("cold_after", 0) is None, f"cold: meta.json gives the curve, null for cold ({c})")
    for kind in ("curve", "step"):
        fifo = cpu[f"{kind}-100us", "fifo"] - cpu[f"{kind}-0", "fifo"]
        lifo = cpu[f"{kind}-100us", "lifo"] - cpu[f"{kind}-0", "lifo"]
        check(fifo >= 100e-6, f"cold {kind}: FIFO fork-join pays for its old tasks (extra {fifo:.6f} s)")
        # LIFO's far tasks are the few at the bottom of the stack, the root's first children
        check(0 <= lifo < fifo / 50, f"cold {kind}: LIFO fork-join has few tasks that far (extra {lifo:.6f} s against FIFO's {fifo:.6f} s)")
    path = os.path.join(tmp, "costs-curve-some.txt")
    with open(path, "w") as g:
        g.write(base + "cold_9 0\ncold_10 5\n")
    p = run(sb, ["--policy", "stealing", "--workload", "forkjoin", "-n", "1", "--sim-costs", path],
            os.path.join(tmp, "curve-some"))
    err = p.stderr.strip()
    check(p.returncode == 2 and len(err.splitlines()) == 1 and "cold_9 .. cold_22" in err,
          f"cold: a curve with two of fourteen is refused in one line ({p.returncode}: {err[:300]})")


OPTIONAL = ("park_p", "park_long_after", "park_busy_", "park_idle_", "over_100us_", "over_1ms_", "slice", "job",
            "park_cpu", "compute_iter", "memory_double", "wake_stack_", "line_queue", "wake_last_core", "noise_",
            "wake_interrupt", "wake_preempt_")
STACK_US = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)  # core/exec.h's SB_WAKE_STACK_US


BASE = os.path.join(SIM, "costs-amd-epyc-2t.txt")  # the table the planted contrasts were sized on


def base_table():
    """BASE without the optional groups, which each test adds as it needs: the same on every
    machine."""
    with open(BASE) as f:
        return "".join(ln for ln in f if not ln.startswith(OPTIONAL))


def write_tables(tmp, tag, base, extras):
    """{key: path} of base plus each extra, as costs-TAG-KEY.txt in tmp."""
    paths = {}
    for k, extra in extras.items():
        paths[k] = os.path.join(tmp, f"costs-{tag}-{k}.txt")
        with open(paths[k], "w") as g:
            g.write(base + extra)
    return paths


def group(name, ns):
    return "".join(f"{name}_{q} {ns}\n" for q in ("p10", "p50", "p90", "p99", "p999"))


def park_spread(sb, tmp):
    base = base_table()
    tables = {"none": "", "tail": "park_p10 1000\npark_p50 1000\npark_p90 1000\npark_p99 1000000\npark_p999 1000000\n",
              "some": "park_p10 1000\npark_p50 1000\n",
              "falls": "park_p10 1000\npark_p50 1000\npark_p90 900\npark_p99 1000000\npark_p999 1000000\n"}
    paths = write_tables(tmp, "park", base, tables)
    args = ["--policy", "stealing", "--workload", "wake", "--threads", "1", "-d", "0.3", "--warmup", "0.05"]
    p99, jobs = {}, {}
    for k, d in (("none", "park-none"), ("tail", "park-tail"), ("tail", "park-tail2")):
        out = os.path.join(tmp, d)
        p = run(sb, args + ["--sim-costs", paths[k]], out)
        check(p.returncode == 0, f"park_spread {d}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        p99[d], jobs[d] = summary(out)["all"]["p99"], read(os.path.join(out, "jobs.csv"))
        with open(os.path.join(out, "meta.json")) as f:
            c = json.load(f)["executor"]["costs_ns"]
        want = None if k == "none" else 1000000
        check(c.get("park_p99", "absent") == want, f"park_spread {d}: meta.json's park_p99 is {want} ({c.get('park_p99', 'absent')})")
    check(p99["park-tail"] > 10 * p99["park-none"],
          f"park_spread: a 1 ms park tail shows in the job p99 ({p99['park-none']:.0f} -> {p99['park-tail']:.0f} ns)")
    check(jobs["park-tail"] == jobs["park-tail2"], "park_spread: the draws replay: one seed, the same jobs")
    for k, want in (("some", "go together"), ("falls", "cannot fall")):
        out = os.path.join(tmp, f"park-{k}")
        p = run(sb, args + ["--sim-costs", paths[k]], out)
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and want in p.stderr and not os.path.exists(out),
              f"park_spread: a table whose percentiles {k} is refused ({p.returncode}: {p.stderr.strip()})")


def long_parks(sb, tmp):
    base = base_table()
    # every percentile one value, so a run's figure shows which group each park or sleep drew from
    tables = {"none": "",
              "over": group("over_100us", 1000000) + group("over_1ms", 1000000),
              "idle-slow": "park_long_after 1000\n" + group("park_busy", 1000) + group("park_idle", 1000000),
              "busy-slow": "park_long_after 1000\n" + group("park_busy", 1000000) + group("park_idle", 1000),
              "some": "park_long_after 1000\n" + group("park_busy", 1000) + "park_idle_p10 1000\n",
              "no-after": group("park_busy", 1000) + group("park_idle", 1000),
              "one-over": group("over_100us", 1000),
              "falls": "park_long_after 1000\n" + group("park_busy", 1000)
              + "park_idle_p10 1000\npark_idle_p50 900\npark_idle_p90 1000\npark_idle_p99 1000\npark_idle_p999 1000\n"}
    paths = write_tables(tmp, "long", base, tables)
    # one request thread pausing 100 us (exponential) before each job: a 1 ms lateness per pause
    # is most of a job's cycle. The memo's plain spin: its 1000 rounds end before most pauses do
    # (with a yield every 32 rounds the spin is longer by their price, and outlasts many)
    one = ["--policy", "stealing", "--workload", "wake", "--set", "clients=1", "--set", "gap_us=100",
           "--set", "from_task_pct=0", "--set", "worker_spin_yield=0", "-d", "0.3", "--warmup", "0.05"]
    res = {}
    for k, threads, d in (("none", 1, "none"), ("over", 1, "over"), ("over", 1, "over2"),
                          ("idle-slow", 1, "idle-slow"), ("busy-slow", 1, "busy-slow"),
                          ("idle-slow", 2, "idle-slow-2"), ("busy-slow", 2, "busy-slow-2")):
        out = os.path.join(tmp, "long-" + d)
        p = run(sb, one + ["--threads", str(threads), "--sim-costs", paths[k]], out)
        check(p.returncode == 0, f"long_parks {d}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        s = summary(out)
        w = s["counters"]["workers"]
        res[d] = {"jobs": s["jobs"], "p50": s["all"]["p50"], "rows": read(os.path.join(out, "jobs.csv")),
                  "wake": [x["wake_ns"] / x["woken"] if x["woken"] else None for x in w]}
        with open(os.path.join(out, "meta.json")) as f:
            c = json.load(f)["executor"]["costs_ns"]
        want = {"none": (None, None), "over": (1000000, None), "idle-slow": (None, 1000000),
                "busy-slow": (None, 1000)}[k]
        check((c.get("over_1ms_p50", "absent"), c.get("park_idle_p50", "absent")) == want,
              f"long_parks {d}: meta.json's over_1ms_p50 and park_idle_p50 are {want}")
    check(res["over"]["jobs"] * 3 < res["none"]["jobs"],
          f"long_parks: a timed sleep returning 1 ms late cuts the jobs of 100 us pauses ({res['none']['jobs']} -> "
          f"{res['over']['jobs']})")
    check(res["over"]["rows"] == res["over2"]["rows"], "long_parks: the lateness draws replay: one seed, the same jobs")
    # the request thread is back from its pause (a timer) when it wakes the worker: park_idle_*
    check(res["idle-slow"]["p50"] >= 1000000 > 100000 > res["busy-slow"]["p50"],
          f"long_parks: a worker woken by a thread back from a timer pays park_idle (job p50 "
          f"{res['idle-slow']['p50']} ns with it at 1 ms, {res['busy-slow']['p50']} ns with park_busy at 1 ms)")
    # at 2 workers the woken worker wakes the other one before it runs the task: a waker back from a
    # park, so that wake-up pays park_busy (the per-worker wake_ns says which)
    most = {d: max(x for x in res[d]["wake"] if x is not None) for d in ("idle-slow-2", "busy-slow-2")}
    check(most["busy-slow-2"] >= 500000 and res["busy-slow-2"]["p50"] < 100000,
          f"long_parks: a worker woken by a worker pays park_busy (largest mean wake {most['busy-slow-2']:.0f} ns), "
          f"the request's own wake-up park_idle (job p50 {res['busy-slow-2']['p50']} ns)")
    for k, want in (("some", "go together"), ("no-after", "all eleven"), ("one-over", "all ten"), ("falls", "cannot fall")):
        out = os.path.join(tmp, f"long-{k}")
        p = run(sb, one + ["--threads", "1", "--sim-costs", paths[k]], out)
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and want in p.stderr and not os.path.exists(out),
              f"long_parks: a table whose groups are '{k}' is refused ({p.returncode}: {p.stderr.strip()})")


def noise(sb, tmp):
    """The machine's losses (noise_every, noise_p*): a task stopped in the middle holds its job back."""
    base = base_table() + "compute_iter 1.0\n"
    tables = {"none": "", "lossy": "noise_every 1000000\n" + group("noise", 50000),
              "some": "noise_every 1000000\n", "zero": "noise_every 0\n" + group("noise", 50000)}
    paths = write_tables(tmp, "noise", base, tables)
    # one worker on patterns: each job 400 tasks of 1024 iterations (about 0.4 ms of CPU at 1 ns an
    # iteration), one after another, so a job's latency is its CPU time plus what it lost
    args = ["--policy", "fifo", "--workload", "patterns", "--threads", "1", "-d", "0.5", "--warmup", "0.05"]
    res = {}
    for k, d in (("none", "none"), ("lossy", "lossy"), ("lossy", "lossy2")):
        out = os.path.join(tmp, "noise-" + d)
        p = run(sb, args + ["--sim-costs", paths[k]], out)
        check(p.returncode == 0, f"noise {d}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        s = summary(out)
        with open(os.path.join(out, "meta.json")) as f:
            c = json.load(f)["executor"]["costs_ns"]
        res[d] = {"thr": s["throughput"], "p50": s["all"]["p50"], "p99": s["all"]["p99"],
                  "rows": read(os.path.join(out, "jobs.csv")), "every": c.get("noise_every", "absent"),
                  "p50c": c.get("noise_p50", "absent")}
    n, l = res["none"], res["lossy"]
    check(n["p99"] - n["p50"] < 0.05 * n["p50"], f"noise: without it a job's p99 is its median ({n['p50']} / {n['p99']} ns)")
    check(l["p99"] - l["p50"] >= 40000, f"noise: with a 50 us loss every 1 ms of CPU the p99 job lost more than the "
          f"median one ({l['p50']} / {l['p99']} ns)")
    ratio = l["thr"] / n["thr"]
    check(0.90 <= ratio <= 0.99, f"noise: about 5% of the CPU lost, about 5% fewer jobs ({ratio:.3f} of the jobs/s)")
    check(l["rows"] == res["lossy2"]["rows"], "noise: the losses replay: one seed, the same jobs")
    check((n["every"], n["p50c"], l["every"], l["p50c"]) == (None, None, 1000000, 50000),
          f"noise: meta.json gives noise_every and noise_p50, null without them ({n['every']}, {n['p50c']}, "
          f"{l['every']}, {l['p50c']})")
    for k in ("some", "zero"):
        out = os.path.join(tmp, f"noise-{k}")
        p = run(sb, args + ["--sim-costs", paths[k]], out)
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and "go together" in p.stderr and not os.path.exists(out),
              f"noise: a table whose noise is '{k}' is refused in one line ({p.returncode}: {p.stderr.strip()})")


def busy_pause(sb, tmp):
    # the distribution mode's busy loop (memo 001's mm_pause): each extra pause is a spin iteration
    # the virtual clock pays, so 10,000 of them per round leave far fewer rounds in the same
    # simulated time, for the same work done; with no pause added the loop does run
    rounds, jobs = {}, {}
    for bp in ("0", "10000"):
        out = os.path.join(tmp, f"busy-pause-{bp}")
        p = run(sb, ["--policy", "distribution", "--workload", "oltp", "--threads", "2", "--set", f"busy_pause={bp}",
                     "-d", "0.1", "--warmup", "0.02"], out)
        check(p.returncode == 0, f"busy_pause {bp}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        s = summary(out)
        rounds[bp], jobs[bp] = s["policy_stats"].get("busy_rounds", 0), s["jobs"]
    check(rounds["0"] > 1000 and rounds["10000"] * 100 < rounds["0"],
          f"busy_pause: 10,000 pauses per round cut the busy loop's rounds over 100-fold ({rounds['0']} -> {rounds['10000']})")
    check(abs(jobs["10000"] - jobs["0"]) < 0.1 * jobs["0"],
          f"busy_pause: the same work gets done ({jobs['0']} and {jobs['10000']} jobs)")


def external_threads(sb, tmp):
    # DuckDB's external threads (global's help op): in virtual time too the waiting request
    # thread runs its own job, so a sparse arrival pays no worker's wake-up; a helper's pops are
    # charged and replay like everything else; with job tokens the waiter also runs tasks that
    # workers spawned (fork-join), and every task still runs once
    res = {}
    for name, sets in (("sleeps", []), ("helps", ["external_threads=true"]), ("helps2", ["external_threads=true"])):
        out = os.path.join(tmp, "external-" + name)
        args = ["--policy", "global", "--workload", "wake", "--threads", "2", "-d", "0.5", "--warmup", "0.05",
                "--set", "producer_tokens=true"]
        for x in sets:
            args += ["--set", x]
        p = run(sb, args, out)
        check(p.returncode == 0, f"external {name}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        s = summary(out)
        res[name] = {"p50": s["classes"]["from_request"]["p50"], "other": s["counters"]["other"]["tasks"],
                     "tasks": s["counters"]["total"]["tasks"], "rows": read(os.path.join(out, "jobs.csv"))}
    h, z = res["helps"], res["sleeps"]
    check(z["other"] == 0 and h["other"] > 0.5 * h["tasks"],
          f"external: the waiting thread runs most tasks ({h['other']} of {h['tasks']}; without: {z['other']})")
    check(h["p50"] < z["p50"], f"external: a request's median without a worker's wake-up ({z['p50']} -> {h['p50']} ns)")
    check(h["rows"] == res["helps2"]["rows"], "external: one seed, the same jobs")
    out = os.path.join(tmp, "external-fj")
    p = run(sb, ["--policy", "global", "--workload", "forkjoin", "--threads", "2", "-n", "8", "--check",
                 "--set", "n=14", "--set", "producer_tokens=true", "--set", "token_scope=job",
                 "--set", "external_threads=true"], out)
    check(p.returncode == 0, f"external fork-join: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
    if p.returncode:
        return
    s = summary(out)
    r = s["reconciliation"]
    check(r["ok"] and r["tasks_created"] == r["tasks_run"] and s["counters"]["other"]["tasks"] > 0.1 * r["tasks_run"],
          f"external fork-join: job tokens let the waiter run workers' spawns, once each "
          f"({s['counters']['other']['tasks']} of {r['tasks_run']})")


def bad_input(sb, tmp):
    base = ["--policy", "stealing", "--workload", "micro", "-n", "2"]
    d = os.path.join(tmp, "bad1")
    p = run(sb, base, d, "warp")
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "valid executors are: native, sim" in p.stderr
          and not os.path.exists(d), f"bad input: unknown executor ({p.returncode}: {p.stderr.strip()})")
    costs = os.path.join(tmp, "costs.txt")
    with open(costs, "w") as f:
        f.write("version x\npush 10\n")
    d = os.path.join(tmp, "bad2")
    p = run(sb, base + ["--sim-costs", costs], d)
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "is missing" in p.stderr and not os.path.exists(d),
          f"bad input: incomplete cost file ({p.returncode}: {p.stderr.strip()})")
    # a misspelt policy after '@' would be a cost that is never charged
    base_costs = table(sb)
    with open(base_costs) as f, open(costs, "w") as g:
        g.write(f.read() + "push@stealng 100000\n")
    d = os.path.join(tmp, "bad3")
    p = run(sb, base + ["--sim-costs", costs], d)
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "unknown policy 'stealng'" in p.stderr
          and "valid policies are: serial, stealing" in p.stderr and not os.path.exists(d),
          f"bad input: unknown policy in NAME@POLICY ({p.returncode}: {p.stderr.strip()})")
    # without its own line a policy would be charged the deque's bare push (0.6 ns, not 8 to 46)
    with open(base_costs) as f, open(costs, "w") as g:
        g.write("".join(ln for ln in f if not ln.startswith("push@stealing ")))
    d = os.path.join(tmp, "bad4")
    p = run(sb, base + ["--sim-costs", costs], d)
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "push@stealing" in p.stderr
          and "make calibrate" in p.stderr and not os.path.exists(d),
          f"bad input: no push@stealing for a stealing run ({p.returncode}: {p.stderr.strip()})")


def own_table(sb, tmp):
    name = machine(sb)
    path = os.path.realpath(os.path.join(SIM, f"costs-{name}.txt"))
    d = os.path.join(tmp, "own")
    p = run(sb, ["--policy", "fifo", "--workload", "micro", "-n", "1", "--set", "length=100"], d, costs=False)
    if os.path.exists(path):
        meta = json.load(open(os.path.join(d, "meta.json"))) if p.returncode == 0 else {}
        used = os.path.realpath(meta.get("executor", {}).get("costs_file", ""))
        check(p.returncode == 0 and used == path and meta.get("machine") == name,
              f"table: this machine's {path} used and named ({p.returncode}: {used}, machine {meta.get('machine')})")
    else:
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and f"costs-{name}.txt" in p.stderr
              and "make calibrate" in p.stderr and not os.path.exists(d),
              f"table: no table for {name} is an error naming it ({p.returncode}: {p.stderr.strip()})")


def validate(sb, tmp):
    here = os.path.dirname(os.path.abspath(__file__))
    script = os.path.join(here, "..", "..", "scripts", "validate_sim.py")
    costs = os.path.relpath(table(sb), os.path.join(here, "..", ".."))
    shared = [sys.executable, script, "expand", "--schedbed", sb, "--threads", "1", "--policies", "fifo", "--cells",
              "wake", "--reps", "3", "--executors", "sim", "--sim-costs", costs]
    d = os.path.join(tmp, "validate-cores")
    p = subprocess.run(shared + ["--out", d, "--sim-cores", "2"], capture_output=True, text=True,
                       cwd=os.path.join(here, "..", ".."))
    lines = []
    if p.returncode == 0:
        with open(os.path.join(d, "manifest.jsonl")) as f:
            lines = [json.loads(x) for x in f]
    check(len(lines) == 3 and all(" ".join(ln["args"]).endswith("--sim-cores 2") for ln in lines),
          f"validate: --sim-cores 2 reaches every simulated run ({p.returncode}: {[ln['args'][-2:] for ln in lines]})")
    p = subprocess.run(shared + ["--out", d + "-0", "--sim-cores", "0"], capture_output=True, text=True,
                       cwd=os.path.join(here, "..", ".."))
    check(p.returncode != 0 and "--sim-cores 0" in p.stderr and not os.path.exists(d + "-0"),
          f"validate: --sim-cores 0 is refused ({p.returncode}: {p.stderr.strip()})")
    d = os.path.join(tmp, "validate")
    cmd = [sys.executable, script, "run", "--schedbed", sb, "--out", d, "--threads", "1", "--policies", "fifo",
           "--cells", "tiny,wake", "--reps", "3", "--duration", "0.1", "--warmup", "0.02", "--allow-dirty",
           "--sim-costs", os.path.relpath(table(sb), os.path.join(here, "..", ".."))]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.join(here, "..", ".."))
    check(p.returncode == 0, f"validate: the slice runs and reports ({p.returncode}"
          + (f": {p.stderr.strip()[-400:]})" if p.returncode else ")"))
    if p.returncode:
        return
    with open(os.path.join(d, "manifest.jsonl")) as f:
        lines = [json.loads(x) for x in f]
    ex = [ln["tags"]["executor"] for ln in lines]
    check(ex == ["native"] * 6 + ["sim"] * 6 and all(("--sim-costs" in ln["args"]) == (e == "sim")
                                                     for ln, e in zip(lines, ex)),
          f"validate: 6 native runs, then 6 simulated ones naming the cost table ({ex})")
    with open(os.path.join(d, "runs.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(d, "cells.csv")) as f:
        cells = {r["cell"]: r for r in csv.DictReader(f)}
    for cell in ("tiny", "wake"):
        med = {e: statistics.median(float(r["throughput"]) for r in rows if r["cell"] == cell and r["executor"] == e)
               for e in ("native", "sim")}
        want = 100 * (med["sim"] - med["native"]) / med["native"]
        got = float(cells[cell]["err_throughput"]) if cell in cells else float("nan")
        check(abs(got - want) < 0.01, f"validate: {cell}'s throughput error is the medians' ({got:.3f} against {want:.3f})")
        ok = abs(want) <= 15
        with open(os.path.join(d, "table.md")) as f:
            row = [x for x in f if x.startswith(f"| {cell} | 1 | 1 |")]
        check(len(row) == 1 and row[0].split("|")[4].strip() == ("1/1" if ok else "0/1"),
              f"validate: table.md counts {cell} {'within' if ok else 'outside'} 15% ({row})")


FORKJOIN_LIFO = ["--policy", "stealing", "--workload", "forkjoin", "--set", "local_order=lifo", "--duration", "0.01",
                 "--warmup", "0.002", "--rows", "0"]


def run_dir(tmp, tag, name):
    return os.path.join(tmp, tag.replace(" ", "-") + "-" + name)


def plat_of(tmp, tag):
    try:
        with open(os.path.join(run_dir(tmp, tag, "8w-2c"), "meta.json")) as f:
            return json.load(f)["executor"]["platform"]
    except (OSError, ValueError, KeyError):
        return ""


def forkjoin_on_cores(sb, tmp, tag, base, names, platform):
    """Fork-join LIFO tasks/s of each named run (2w, 8w: workers with a core each; 8w-2c: 8 workers on
    2 shared cores, twice), checking that the shared runs say so and use at most 2 cores."""
    rate = {}
    for name in names:
        extra = ["--threads", name[0]] + (["--sim-cores", "2"] if "-2c" in name else [])
        d = run_dir(tmp, tag, name)
        p = run(sb, base + extra, d)
        check(p.returncode == 0, f"{tag} {name}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        rate[name] = summary(d)["tasks_per_s"] if p.returncode == 0 else float("nan")
        if name == "8w-2c" and p.returncode == 0:
            check(platform in plat_of(tmp, tag), f"{tag}: the platform says so ({plat_of(tmp, tag)})")
            check(summary(d)["cpu"]["window_cores"] <= 2.05, f"{tag}: at most 2 cores used "
                  f"({summary(d)['cpu']['window_cores']:.2f})")
    return rate


def shared_cores(sb, tmp):
    """--sim-cores N: every actor's work shares N cores, so 8 workers on 2 shared cores do what 2
    workers do (fork-join LIFO keeps every worker busy), while without it they do 4 times as much;
    the platform says which; a native run refuses the option."""
    even = os.path.join(tmp, "shared-even.txt")
    with open(even, "w") as f:
        f.write(base_table())  # without `slice`: SimGrid's even sharing
    base = FORKJOIN_LIFO + ["--sim-costs", even]
    rate = forkjoin_on_cores(sb, tmp, "shared cores", base, ("2w", "8w", "8w-2c", "8w-2c-again"),
                             "2 cores shared by every actor")
    check(" in time slices" not in plat_of(tmp, "shared cores"), "shared cores: evenly, not in slices")
    check(abs(rate["8w-2c"] / rate["2w"] - 1) < 0.15,
          f"shared cores: 8 workers on 2 cores run as 2 workers do ({rate['8w-2c']:.3g} against {rate['2w']:.3g} tasks/s)")
    check(rate["8w"] > 3 * rate["2w"], f"shared cores: without the option 8 workers run 4 times as much "
          f"({rate['8w']:.3g} against {rate['2w']:.3g})")
    check(rate["8w-2c"] == rate["8w-2c-again"], "shared cores: deterministic")
    d = os.path.join(tmp, "shared-native")
    p = run(sb, FORKJOIN_LIFO + ["--threads", "2", "--sim-cores", "2"], d, executor="native")
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "--executor sim" in p.stderr and not os.path.exists(d),
          f"shared cores: a native run refuses --sim-cores ({p.returncode}: {p.stderr.strip()})")
    p = run(sb, FORKJOIN_LIFO + ["--threads", "2", "--sim-cores", "-1"], d)
    check(p.returncode == 2 and "0..4096" in p.stderr and not os.path.exists(d),
          f"shared cores: a count out of range names the range ({p.returncode}: {p.stderr.strip()})")


def slices(sb, tmp):
    """With the table's `slice`, shared cores are handed out in turns: 8 fork-join workers on 2 cores
    use 2 cores and do no more than 2 workers do (they do less: a worker preempted inside a task
    holds up its join until its next turn); a run that never has more busy threads than cores gives the same
    jobs as a core per thread; a thread woken from a sleep takes a spinning worker's core at once
    (wake's request thread keeps its rate on 1 core beside a worker that never parks; made to wait
    for the spinner's turn, it issues a third less); `slice 0` is refused."""
    base = base_table()
    paths = write_tables(tmp, "slices", base, {"sliced": "slice 4000000\n", "zero": "slice 0\n"})
    rate = forkjoin_on_cores(sb, tmp, "slices", FORKJOIN_LIFO + ["--sim-costs", paths["sliced"]],
                             ("2w", "8w-2c", "8w-2c-again"), "2 cores shared by every actor in time slices")
    check(rate["8w-2c"] <= 1.05 * rate["2w"],
          f"slices: 8 workers on 2 cores do no more than 2 workers ({rate['8w-2c']:.3g} against {rate['2w']:.3g} tasks/s)")
    check(rate["8w-2c"] == rate["8w-2c-again"], "slices: deterministic")
    chain = ["--policy", "fifo", "--workload", "micro", "--set", "length=50", "--set", "work_ns=20000", "--threads", "1",
             "--duration", "0.05", "--warmup", "0.01", "--sim-costs", paths["sliced"]]
    jobs = {}
    for name, extra in (("own", []), ("2c", ["--sim-cores", "2"])):
        d = os.path.join(tmp, "slices-chain-" + name)
        p = run(sb, chain + extra, d)
        jobs[name] = read(os.path.join(d, "jobs.csv")) if p.returncode == 0 else name.encode()
    check(jobs["own"] == jobs["2c"] and len(jobs["own"]) > 100,
          "slices: one client and one worker on 2 cores: the same jobs.csv as a core per thread")
    wake = ["--policy", "stealing", "--workload", "wake", "--set", "worker_try_count=100000000", "--threads", "1",
            "--duration", "0.2", "--warmup", "0.05", "--rows", "0", "--sim-costs", paths["sliced"]]
    thr = {}
    for name, extra in (("own", []), ("1c", ["--sim-cores", "1"])):
        d = os.path.join(tmp, "slices-wake-" + name)
        p = run(sb, wake + extra, d)
        thr[name] = summary(d)["throughput"] if p.returncode == 0 else float("nan")
        if name == "1c" and p.returncode == 0:
            check(summary(d)["cpu"]["window_cores"] > 0.95, f"slices: the worker spins through the run "
                  f"({summary(d)['cpu']['window_cores']:.2f} cores)")
    check(abs(thr["1c"] / thr["own"] - 1) < 0.05, f"slices: a woken thread takes the spinner's core at once "
          f"(wake on 1 core: {thr['1c']:.0f} requests/s against {thr['own']:.0f} with a core each)")
    d = os.path.join(tmp, "slices-zero")
    p = run(sb, FORKJOIN_LIFO + ["--threads", "2", "--sim-cores", "2", "--sim-costs", paths["zero"]], d)
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "slice must be more than 0" in p.stderr
          and not os.path.exists(d), f"slices: slice 0 is refused ({p.returncode}: {p.stderr.strip()})")


def wake_stacking(sb, tmp):
    """With the table's wake_stack_*, a worker woken by one just back from a park runs on its waker's
    core ahead of it while the other core idles, and the waker waits for its own core: under wake at
    2 workers on 2 cores the request's worker, which wakes the next searcher before it runs the task,
    starts the task only after that searcher's round (one: a woken worker that finds nothing sleeps
    again at once, core/worker.c), where without stacking it starts at once. A share of 0 draws
    nothing (the same jobs as no stacking); a partial group, a share above 1 or stacking without
    slices is refused."""
    base = base_table() + "slice 4000000\n"
    stack = lambda v: "".join(f"wake_stack_{r}us {v}\n" for r in STACK_US)
    tables = {"none": "", "zero": stack(0), "one": stack(1), "some": "wake_stack_0us 1\n", "over": stack(1.5)}
    paths = write_tables(tmp, "stack", base, tables)
    paths["noslice"] = os.path.join(tmp, "costs-stack-noslice.txt")
    with open(paths["noslice"], "w") as g:
        g.write(base_table() + stack(1))
    # the memo's plain spin, which holds a core it is stacked on (a yield every worker_spin_yield
    # rounds hands it back, and so hides what stacking costs)
    args = ["--policy", "stealing", "--workload", "wake", "--threads", "2", "--sim-cores", "2",
            "--set", "worker_try_count=1000", "--set", "worker_spin_yield=0", "-d", "0.3", "--warmup", "0.05"]
    p50, jobs = {}, {}
    for k, d in (("none", "none"), ("zero", "zero"), ("one", "one"), ("one", "one2")):
        out = os.path.join(tmp, "stack-" + d)
        p = run(sb, args + ["--sim-costs", paths[k]], out)
        check(p.returncode == 0, f"wake_stacking {d}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        p50[d], jobs[d] = summary(out)["classes"]["from_request"]["p50"], read(os.path.join(out, "jobs.csv"))
        with open(os.path.join(out, "meta.json")) as f:
            c = json.load(f)["executor"]["costs_ns"]
        want = {"none": None, "zero": 0, "one": 1}[k]
        check(c.get("wake_stack_20us", "absent") == want, f"wake_stacking {d}: meta.json's wake_stack_20us is {want}")
    check(jobs["zero"] == jobs["none"], "wake_stacking: shares of 0 simulate as no stacking (the same jobs)")
    check(jobs["one"] == jobs["one2"], "wake_stacking: deterministic")
    check(p50["one"] > 1.5 * p50["none"], f"wake_stacking: the request's worker waits behind the searcher it woke "
          f"(from_request p50 {p50['none']} ns without stacking, {p50['one']} ns with every wake-up stacked)")
    wake_stacking_duty(sb, tmp, base + stack(1), args)
    for k, want in (("some", "all thirteen"), ("over", "is a share"), ("noslice", "with slice")):
        out = os.path.join(tmp, f"stack-{k}")
        p = run(sb, args + ["--sim-costs", paths[k]], out)
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and want in p.stderr and not os.path.exists(out),
              f"wake_stacking: a table '{k}' is refused ({p.returncode}: {p.stderr.strip()})")


DUTY_PC = (5, 10, 15, 30, 60)  # core/exec.h's SB_WAKE_DUTY_PC


def wake_stacking_duty(sb, tmp, stacked, args):
    """With wake_stack_duty_*, a wakee that has lately been busy is stacked in the share its duty
    gives over the 5% one's: shares all equal change nothing (the same jobs as without the group);
    with 0 from 10% on, workers that run 1 ms tasks every 3 ms are no longer put ahead of their
    waker and the request's job starts as it does without stacking. A partial group, a share above
    1 or the group without wake_stack_* is refused."""
    duty = lambda *v: "".join(f"wake_stack_duty_{d} {x}\n" for d, x in zip(DUTY_PC, v))
    tables = {"none": base_table() + "slice 4000000\n", "one": stacked, "flat": stacked + duty(1, 1, 1, 1, 1),
              "cut": stacked + duty(1, 0, 0, 0, 0), "some": stacked + "wake_stack_duty_5 1\n",
              "over": stacked + duty(1, 1, 1, 1, 2), "alone": base_table() + "slice 4000000\n" + duty(1, 1, 1, 1, 1)}
    paths = write_tables(tmp, "duty", "", tables)
    busy = ["--set", "workload.work_ns=1000000", "--set", "workload.gap_us=3000"]
    p50, jobs = {}, {}
    for k, extra in (("one", []), ("flat", []), ("none", busy), ("one", busy), ("cut", busy)):
        d = k + ("-busy" if extra else "")
        out = os.path.join(tmp, "duty-" + d)
        p = run(sb, args + extra + ["--sim-costs", paths[k]], out)
        check(p.returncode == 0, f"wake_stacking_duty {d}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        p50[d], jobs[d] = summary(out)["classes"]["from_request"]["p50"], read(os.path.join(out, "jobs.csv"))
    check(jobs["flat"] == jobs["one"], "wake_stacking_duty: equal shares at every duty simulate as no duty group")
    check(p50["one-busy"] > 1.2 * p50["none-busy"] and p50["cut-busy"] < 1.05 * p50["none-busy"],
          f"wake_stacking_duty: busy wakees are not stacked (from_request p50 {p50['none-busy']} ns without "
          f"stacking, {p50['one-busy']} with every wake-up stacked, {p50['cut-busy']} with the duty group)")
    for k, want in (("some", "all five"), ("over", "is a share"), ("alone", "with wake_stack_*")):
        out = os.path.join(tmp, f"duty-{k}")
        p = run(sb, args + ["--sim-costs", paths[k]], out)
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and want in p.stderr and not os.path.exists(out),
              f"wake_stacking_duty: a table '{k}' is refused ({p.returncode}: {p.stderr.strip()})")


def speedup_split(sb, tmp):
    """A native half made in two directories (one per worker count, as two calls of a lent
    machine make it) is reported against one simulated half, and the fork-join speedup curve is
    native and simulated throughput at 2 workers over their own 1-worker figure."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.join(here, "..", "..")
    script = os.path.join(root, "scripts", "validate_sim.py")
    sweep = os.path.join(root, "scripts", "sweep.py")
    costs = os.path.relpath(table(sb), root)
    base = ["--schedbed", sb, "--policies", "stealing", "--cells", "forkjoin-lifo", "--reps", "3",
            "--duration", "0.1", "--warmup", "0.02", "--sim-costs", costs]
    dirs = {"n1": ("native", "1"), "n2": ("native", "2"), "s": ("sim", "1,2")}
    for name, (ex, threads) in dirs.items():
        d = os.path.join(tmp, "split-" + name)
        for cmd in ([script, "expand", "--out", d, "--executors", ex, "--threads", threads] + base,
                    [sweep, "run", d, "--schedbed", sb, "--jobs", "2", "--allow-dirty"]):
            p = subprocess.run([sys.executable] + cmd, capture_output=True, text=True, cwd=root)
            if p.returncode:
                check(False, f"speedup: {' '.join(cmd[:2])} {name} failed: {p.stderr.strip()[-300:]}")
                return
    d = os.path.join(tmp, "split-s")
    p = subprocess.run([sys.executable, script, "report", d, "--native",
                        os.path.join(tmp, "split-n1") + "," + os.path.join(tmp, "split-n2")],
                       capture_output=True, text=True, cwd=root)
    check(p.returncode == 0, f"speedup: report with two native directories ({p.returncode}: {p.stderr.strip()[-300:]})")
    if p.returncode:
        return
    thr = {}
    for name in dirs:
        with open(os.path.join(tmp, "split-" + name, "runs.csv")) as f:
            for r in csv.DictReader(f):
                thr.setdefault((r["executor"], int(r["threads"])), []).append(float(r["throughput"]))
    med = {k: statistics.median(v) for k, v in thr.items()}
    with open(os.path.join(d, "table.md")) as f:
        row = [x for x in f if x.startswith("| forkjoin-lifo | stealing | ") and " / " in x and "(" in x]
    if not all(med[(e, 1)] for e in ("native", "sim")):
        # a 0.1 s window on a loaded machine can end no native job: no curve, and none drawn
        check(not row, f"speedup: a side with no 1-worker throughput gets no speedup row ({med}, {row})")
    else:
        want = [med[(e, 2)] / med[(e, 1)] for e in ("native", "sim")]
        got = row[0].split("|")[3].split("(")[0].split("/") if row else []
        check(len(got) == 2 and all(abs(float(g) - w) < 0.051 for g, w in zip(got, want)),
              f"speedup: the 2-worker point is each side's own ratio ({got} against {want})")
    # the native half as a committed validation keeps it: a compressed runs.csv, sim rows beside
    with open(os.path.join(d, "table.md")) as f:
        before = f.read().split("\n", 3)[3]
    rows = []
    for name in ("n1", "s"):
        with open(os.path.join(tmp, "split-" + name, "runs.csv")) as f:
            rows += list(csv.DictReader(f))
    packed = os.path.join(tmp, "split-packed.csv.xz")
    with lzma.open(packed, "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=sorted({k for r in rows for k in r}))
        w.writeheader()
        w.writerows(rows)
    p = subprocess.run([sys.executable, script, "report", d, "--native", packed + "," + os.path.join(tmp, "split-n2")],
                       capture_output=True, text=True, cwd=root)
    with open(os.path.join(d, "table.md")) as f:
        after = f.read().split("\n", 3)[3]
    check(p.returncode == 0 and after == before, "speedup: a packed runs.csv.xz (its native rows) reports as the "
          f"directory did ({p.returncode}: {p.stderr.strip()[-300:]})")
    # ... and its simulated half too, picked by a column, into another directory
    out = os.path.join(tmp, "split-packed-report")
    os.makedirs(out)
    for seeds, same in (("3", True), ("1", False)):
        p = subprocess.run([sys.executable, script, "report", packed + "?executor=sim", "--native",
                            packed + "," + os.path.join(tmp, "split-n2"), "--out", out, "--sim-seeds", seeds],
                           capture_output=True, text=True, cwd=root)
        with open(os.path.join(out, "table.md")) as f:
            text = f.read()
        check(p.returncode == 0 and (text.split("\n", 3)[3] == before) == same and
              f"median over {'3' if seeds == '3' else '1-3'} seeds per cell" in text, f"speedup: packed?executor=sim with --sim-seeds {seeds} "
              f"reports {'as the directory did' if same else 'one seed'} ({p.returncode}: {p.stderr.strip()[-300:]})")


def host_speeds(sb, tmp):
    """A host with two cross-thread speeds (scripts/machines.py): the split falls in the widest gap
    of 1.5x or more and nowhere on one speed; a run between two probes of one side has that speed,
    one between the two sides has neither. calibrate.py prices job_create and job_end from one
    speed's rounds (slow unless --speed fast), never the median of both. validate_sim.py --probes
    puts a probe before the first native run and after each, and report --speed keeps the native
    runs of that speed alone: here, planted probe rates make the three runs fast, between and slow."""
    import calibrate
    import machines
    one = [1.80e6, 1.95e6, 2.05e6]
    split = machines.two_levels(one + [0.72e6, 0.85e6])
    caught = machines.two_levels(one * 6 + [0.72e6, 0.85e6] * 3 + [1.05e6, 1.3e6])
    check(machines.two_levels(one) is None and split is not None and 0.85e6 < split < 1.80e6
          and caught is not None and 0.85e6 < caught < 1.80e6,
          f"speeds: one speed has no split, two split between 0.85M and 1.80M, probes caught mid-change "
          f"included ({split}, {caught})")
    got = [machines.speed_of(b, a, split) for b, a in ((2e6, 1.9e6), (0.8e6, 0.7e6), (2e6, 0.8e6), (None, 2e6))]
    check(got == ["fast", "slow", "between", "between"] and machines.speed_of(1, 1, None) == "one",
          f"speeds: a run's speed from the probes either side ({got})")
    rounds = [(2.0e6, 500.0, 400.0)] * 5 + [(0.8e6, 1200.0, 1000.0)] * 4
    slow, fast = (calibrate.remote_costs(rounds, sp) for sp in ("slow", "fast"))
    flat = calibrate.remote_costs([(2.0e6, 500.0, 400.0), (1.9e6, 600.0, 300.0), (2.1e6, 550.0, 350.0)], "slow")
    check(slow[:2] == (1200.0, 1000.0) and fast[:2] == (500.0, 400.0) and "Two speeds" in slow[3][0]
          and flat[:2] == (550.0, 350.0) and flat[2] is None and flat[3][0].startswith("One speed"),
          f"speeds: calibrate prices one speed's rounds (slow {slow[:2]}, fast {fast[:2]}, one speed {flat[:2]})")
    # job_create@POLICY, job_end@POLICY: a policy's probe rounds against fifo's beside them. Planted:
    # the rounds drift (+100 ns a round on both sides); priority's own per-job cost is 300 ns on the
    # creator and 200 on the finisher in the fast rounds, 900 and 600 in the slow ones; serial's
    # worker ends no job. Expected: fifo's figure plus the pairs' difference at the table's speed.
    import crossjob
    cost, task = {"pop": 10.0, "line": 50.0, "job_create": 1000.0, "job_end": 800.0}, {"fifo": 40.0, "priority": 90.0, "serial": 9.0}

    def probe(rate, create, end, worker_ends=True):
        jobs = 100000
        return {"summary": {"throughput": rate, "window_s": 0.1,
                            "cpu": {"window_user_s": 0.1 + jobs * create / 1e9, "window_sys_s": 0.0},
                            "counters": {"window": {"teardowns": jobs, "busy_ns": jobs * end},
                                         "workers": [{"teardowns": jobs if worker_ends else 0}]}}}
    runs, reps = {}, [r for r in range(1, crossjob.REMOTE_ROUNDS + 1) if r % crossjob.POLICY_EVERY == 1]
    for k, r in enumerate(reps):
        fast = k % 3 != 0
        c, e = 1080.0 + 100 * r, 850.0 + 100 * r  # fifo: task 40, pop 10, line 50 on top of 1000 + drift, 800 + drift
        runs[crossjob.round_id("fifo", r)] = probe(2e6 if fast else 0.8e6, c, e)
        runs[crossjob.round_id("priority", r)] = probe(1.5e6, c + 50 + (300 if fast else 900), e + 50 + (200 if fast else 600))
        runs[crossjob.round_id("serial", r)] = probe(3e6, c, 0.0, worker_ends=False)
    def priced(pols, split, speed):  # rounded: the medians of differences carry float noise
        return {k: tuple(round(x, 6) for x in v) for k, v in crossjob.policy_costs(runs, cost, task, pols, split, speed).items()}
    got = {sp: priced(["fifo", "priority", "serial"], 1.2e6, sp) for sp in ("fast", "slow")}
    one = priced(["priority"], None, "slow")
    lines = crossjob.remote_lines([1, 2], ["fifo", "priority"])
    check(got["fast"] == {"priority": (1300.0, 1000.0)} and got["slow"] == {"priority": (1900.0, 1400.0)}
          and one == {"priority": (1300.0, 1000.0)}
          and [ln["id"] for ln in lines] == ["remote.r1", "remote.priority.r1", "remote.r2"]
          and lines[1]["args"][lines[1]["args"].index("--policy") + 1] == "priority",
          f"speeds: job_create@POLICY and job_end@POLICY are fifo's plus the paired rounds' difference at the "
          f"table's speed, none for a policy whose worker ends no job ({got}, all rounds {one})")
    on_one, on_two = [220.0, 240.0, 260.0] * 3, [1800.0, 2000.0, 2200.0, 2400.0] * 5
    mixed, both = calibrate.park_cpu_cost(on_one + on_two), calibrate.park_cpu_cost(on_two[:4])
    check(mixed[0] == 2100.0 and both[0] == 2100.0 and "two levels" in mixed[1][0] and "one level" in both[1][0],
          f"speeds: park_cpu is the median of the rounds on two CPUs, however many shared one ({mixed[0]}, {both[0]})")
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    script = os.path.join(root, "scripts", "validate_sim.py")
    d = os.path.join(tmp, "speeds")
    p = subprocess.run([sys.executable, script, "run", "--schedbed", sb, "--out", d, "--threads", "1", "--policies", "fifo",
                        "--cells", "wake", "--reps", "3", "--duration", "0.1", "--warmup", "0.02", "--probes",
                        "--allow-dirty", "--sim-costs", os.path.relpath(table(sb), root)],
                       capture_output=True, text=True, cwd=root)
    check(p.returncode == 0, f"speeds: a validation with probes runs ({p.returncode}: {p.stderr.strip()[-300:]})")
    if p.returncode:
        return
    with open(os.path.join(d, "manifest.jsonl")) as f:
        lines = [json.loads(x) for x in f]
    order = [ln["tags"]["executor"] for ln in lines]
    around = [(ln["tags"]["probe_before"], ln["tags"]["probe_after"]) for ln in lines if ln["tags"]["executor"] == "native"]
    check(order == ["probe", "native"] * 3 + ["probe"] + ["sim"] * 3 and around == [(0, 1), (1, 2), (2, 3)]
          and all(ln["args"] == machines.PROBE_ARGS for ln in lines if ln["tags"]["executor"] == "probe"),
          f"speeds: a probe before the first native run and after each ({order}, {around})")
    with open(os.path.join(d, "runs.csv")) as f:
        rows = list(csv.DictReader(f))
    planted = os.path.join(tmp, "speeds-planted.csv")

    def plant(rates, version=None):
        for r in rows:
            if r["executor"] == "probe":
                r["throughput"] = str(rates[int(r["probe"])])
            elif r["executor"] == "sim" and version:
                r["costs_version"] = version
        with open(planted, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    check(all(r.get("costs_version") for r in rows if r["executor"] == "sim"),
          "speeds: runs.csv names each simulated run's cost table (costs_version)")
    plant([2.0e6, 1.9e6, 0.8e6, 0.75e6])
    slow_run = [float(r["throughput"]) for r in rows if r["executor"] == "native" and r["probe_before"] == "2"]
    out = os.path.join(tmp, "speeds-report")
    os.makedirs(out)
    for sp in ("", "slow"):
        p = subprocess.run([sys.executable, script, "report", planted, "--out", out] + (["--speed", sp] if sp else []),
                           capture_output=True, text=True, cwd=root)
        with open(os.path.join(out, "table.md")) as f:
            text = f.read()
        with open(os.path.join(out, "cells.csv")) as f:
            cell = list(csv.DictReader(f))
        want = ("with the fast host 1, the slow one 1, a change between their probes 1; "
                + (f"compared: the {sp} runs alone." if sp else "compared: all of them."))
        check(p.returncode == 0 and want in text and len(cell) == 1
              and int(cell[0]["seeds"]) == (1 if sp else 3)
              and (not sp or abs(float(cell[0]["native_throughput"]) - slow_run[0]) < 1e-6 * slow_run[0]),
              f"speeds: report {('--speed ' + sp) if sp else 'without --speed'} counts the speeds and compares "
              f"{'the slow run alone' if sp else 'every run'} ({p.returncode}: {[c.get('seeds') for c in cell]}, "
              f"{p.stderr.strip()[-200:]})")
    for version in ("2026-01-01-abc-slow", "2026-01-01-abc-fast"):
        plant([2.0e6, 1.9e6, 1.95e6, 0.8e6], version)  # two fast runs and one between
        p = subprocess.run([sys.executable, script, "report", planted, "--out", out], capture_output=True, text=True, cwd=root)
        with open(os.path.join(out, "table.md")) as f:
            said = "The cost table is the slow host's, but 2 of 3 native runs had the fast one" in f.read()
        check(p.returncode == 0 and said == version.endswith("slow") and ("--speed slow" in p.stderr) == said,
              f"speeds: the report says when the table's speed is not the native runs' ({version}: "
              f"{p.returncode}, said {said}, {p.stderr.strip()[-200:]})")
    plant([1.9e6] * 4)
    p = subprocess.run([sys.executable, script, "report", planted, "--out", out, "--speed", "fast"],
                       capture_output=True, text=True, cwd=root)
    check(p.returncode != 0 and p.stderr.count("\n") == 1 and "--speed fast" in p.stderr,
          f"speeds: --speed where the probes show one speed is a one-line error ({p.returncode}: {p.stderr.strip()})")


def shared_line(sb, tmp):
    """meta.json's shared_line accounts for the queue every worker shares: fifo at 1 worker puts
    every task on it and off it in order (no operation out of order, the line held at most the
    time it spanned); at 4 workers on 4 cores its counts stay consistent; a policy with no shared
    queue (stealing, its clients pushing to workers) has none."""
    args = ["--workload", "forkjoin", "--set", "n=14", "-d", "0.05", "--warmup", "0.01", "--sim-cores", "4"]
    got = {}
    for pol, w in (("fifo", 1), ("fifo", 4), ("stealing", 4)):
        out = os.path.join(tmp, f"line-{pol}-{w}")
        p = run(sb, args + ["--policy", pol, "--threads", str(w)], out)
        check(p.returncode == 0, f"shared_line {pol} {w}w: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        with open(os.path.join(out, "meta.json")) as f:
            got[pol, w] = json.load(f)["executor"]["shared_line"]
    one, four, steal = got["fifo", 1], got["fifo", 4], got["stealing", 4]
    check(one["ops"] > 1000 and one["out_of_order"] == 0 and one["busy_ns"] <= one["span_ns"],
          f"shared_line: one fifo worker uses the line in order, at most all of its span ({one})")
    check(four["ops"] > 1000 and 0 <= four["out_of_order"] <= four["ops"] and four["busy_ns"] > 0,
          f"shared_line: four fifo workers' counts are consistent ({four})")
    check(steal == {"ops": 0, "out_of_order": 0, "busy_ns": 0, "span_ns": 0},
          f"shared_line: stealing's workload never touches a shared queue ({steal})")
    # line_queue 1: every operation waits its turn, so four workers hold the line at most its span
    # and go slower than without (the same seed); a value other than 0 or 1 is refused
    for v in ("1", "2"):
        path = os.path.join(tmp, f"costs-line-queue-{v}.txt")
        with open(path, "w") as g:
            g.write(base_table() + f"line_queue {v}\n")
        out = os.path.join(tmp, f"line-queue-{v}")
        p = run(sb, args + ["--policy", "fifo", "--threads", "4", "--sim-costs", path], out)
        if v == "2":
            check(p.returncode == 2 and p.stderr.count("\n") == 1 and "0 or 1" in p.stderr and not os.path.exists(out),
                  f"shared_line: line_queue 2 is refused ({p.returncode}: {p.stderr.strip()})")
            continue
        check(p.returncode == 0, f"shared_line line_queue: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return
        with open(os.path.join(out, "meta.json")) as f:
            q = json.load(f)["executor"]["shared_line"]
        check(q["ops"] > 1000 and q["out_of_order"] == 0 and q["busy_ns"] <= q["span_ns"],
              f"shared_line: with line_queue four fifo workers wait their turns ({q})")



def run_tables(sb, tmp, tag, paths, args, refused):
    """Each table of paths ({key: path}) run with args: {key: (summary.json, meta.json)}; a key of
    refused must instead exit 2 with one line holding refused[key] and write nothing. None where a
    run failed."""
    got = {}
    for k, path in paths.items():
        out = os.path.join(tmp, f"{tag}-{k}")
        p = run(sb, args + ["--sim-costs", path], out)
        if k in refused:
            check(p.returncode == 2 and p.stderr.count("\n") == 1 and refused[k] in p.stderr and not os.path.exists(out),
                  f"{tag} {k}: refused in one line ({p.returncode}: {p.stderr.strip()})")
            continue
        check(p.returncode == 0, f"{tag} {k}: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
        if p.returncode:
            return None
        with open(os.path.join(out, "meta.json")) as f:
            got[k] = (summary(out), json.load(f))
    return got


def preemptions(s):
    """summary.json's (workers preempted, request threads preempted, jobs/s) in the window"""
    return s["cpu"]["window_preempted_workers"], s["cpu"]["window_preempted_clients"], s["throughput"]


def wake_last_core(sb, tmp):
    """With cores shared in slices, a thread woken while no core is idle preempts a holder: with
    the table's wake_last_core 1 the holder of the core it held last (Linux's choice), else the
    one whose slice began first, which beside a busy worker is the worker. tiny at 1 worker, 4
    request threads on 2 cores: the worker is preempted several times less with it
    (summary.json's window_preempted_workers), the request threads more (they now take each
    other's core); with no slices nothing is preempted; wake_last_core 2 is refused in one line."""
    base = base_table()
    paths = write_tables(tmp, "lastcore", base, {"oldest": "slice 4000000\n", "last": "slice 4000000\nwake_last_core 1\n",
                                                 "even": "wake_last_core 1\n", "two": "slice 4000000\nwake_last_core 2\n"})
    args = ["--policy", "fifo", "--workload", "tiny", "--threads", "1", "-d", "0.05", "--warmup", "0.01", "--sim-cores", "2"]
    runs = run_tables(sb, tmp, "wake_last_core", paths, args, {"two": "wake_last_core is a switch: 0 or 1"})
    if runs is None:
        return
    got = {k: preemptions(s) for k, (s, _) in runs.items()}
    (wo, co, _), (wl, cl, _) = got["oldest"], got["last"]
    check(wo > 100 and wl * 3 < wo and cl > co, f"wake_last_core: the worker keeps its core, the request threads "
          f"give theirs up (worker, clients preempted: oldest {wo}, {co}; last {wl}, {cl})")
    check(got["even"][:2] == (0, 0), f"wake_last_core: cores shared evenly preempt nothing ({got['even']})")
    # the native count: every thread on one CPU, so the busy worker loses it to its request
    # threads (a woken one, or a slice's end) within the window
    out = os.path.join(tmp, "lastcore-native")
    p = subprocess.run(["taskset", "-c", "0", sb, "run", "-q"] + args[:-2] + ["--out", out], capture_output=True, text=True,
                       timeout=120)
    cpu = summary(out)["cpu"] if p.returncode == 0 else {}
    check(cpu.get("window_preempted_workers", 0) > 0 and isinstance(cpu.get("window_preempted_clients"), int),
          f"wake_last_core: natively on one CPU the kernel's count of the worker's preemptions is kept "
          f"({p.returncode}: {cpu.get('window_preempted_workers')}, {cpu.get('window_preempted_clients')})")


def wake_preempt(sb, tmp):
    """A thread woken while no core is idle goes back to its last core (wake_last_core 1). With the
    table's wake_preempt_* it preempts the holder there in the share the table gives for how busy
    it has lately been as a part of the holder (never if busier), else waits for that core; wake_interrupt is the CPU a wake-up costs
    when it interrupts a holder other than its waker. tiny at 1 worker, 4 request threads, 2
    sliced cores (summary.json's window_preempted_*): shares of 1 preempt the request threads, as
    busy as each other, less than a table without the group; shares of 0 leave only the slices'
    ends; an interrupt's price slows the run, and changes nothing where nothing is preempted."""
    shares = lambda v, rs=(0, 25, 50, 75, 100): "".join(f"wake_preempt_{r} {v}\n" for r in rs)
    sliced = "slice 4000000\nwake_last_core 1\n"
    paths = write_tables(tmp, "preempt", base_table(), {
        "always": sliced, "one": sliced + shares(1), "zero": sliced + shares(0),
        "dear": sliced + "wake_interrupt 50000\n", "zero_dear": sliced + shares(0) + "wake_interrupt 50000\n",
        "four": sliced + shares(1, (0, 25, 50, 75)), "unplaced": "slice 4000000\n" + shares(1)})
    args = ["--policy", "fifo", "--workload", "tiny", "--threads", "1", "-d", "0.05", "--warmup", "0.01", "--sim-cores", "2"]
    group = "wake_preempt_0 .. wake_preempt_100"
    runs = run_tables(sb, tmp, "wake_preempt", paths, args, {"four": group, "unplaced": group})
    if runs is None:
        return
    got = {k: preemptions(s) for k, (s, _) in runs.items()}
    costs = {k: meta["executor"]["costs_ns"] for k, (_, meta) in runs.items()}
    check(got["one"][1] * 2 < got["always"][1], f"wake_preempt: request threads as busy as each other preempt each "
          f"other less with shares of 1 (clients preempted {got['one'][1]} against {got['always'][1]})")
    # 0.05 s of 4 ms slices on 2 cores: a slice's end preempts at most about 25 times
    check(sum(got["zero"][:2]) <= 30, f"wake_preempt: shares of 0, no wake-up preempts ({got['zero'][:2]})")
    check(got["dear"][2] < 0.8 * got["always"][2], f"wake_preempt: wake_interrupt 50 us slows the run "
          f"({got['dear'][2]:.0f} against {got['always'][2]:.0f} jobs/s)")
    check(got["zero_dear"] == got["zero"], f"wake_preempt: with nothing preempted wake_interrupt changes nothing "
          f"({got['zero_dear']} against {got['zero']})")
    check(costs["dear"].get("wake_interrupt") == 50000 and costs["always"].get("wake_interrupt") is None
          and costs["one"].get("wake_preempt_100") == 1, f"wake_preempt: meta.json names the costs "
          f"({costs['dear'].get('wake_interrupt')}, {costs['always'].get('wake_interrupt')}, {costs['one'].get('wake_preempt_100')})")


def job_lines(sb, tmp):
    """priority queues a job's subtasks in the job's own queue, which every worker serving the
    job takes from (SB_POLICY_JOB_QUEUES): with line_queue its operations wait their turn on the
    job's line, so one fork-join job's tasks/s at 4 workers stays below twice its 1-worker rate
    (natively on 16 cores, 2.7 to 3.6M tasks/s at every worker count), while stealing, whose
    workers each pop their own queue, passes twice its own."""
    path = os.path.join(tmp, "costs-job-lines.txt")
    with open(path, "w") as g:
        g.write(base_table() + "line_queue 1\n")
    args = ["--workload", "forkjoin", "--set", "n=16", "-d", "0.05", "--warmup", "0.01", "--sim-cores", "4",
            "--sim-costs", path]
    got = {}
    for pol in ("priority", "stealing"):
        for w in (1, 4):
            out = os.path.join(tmp, f"job-lines-{pol}-{w}")
            p = run(sb, args + ["--policy", pol, "--threads", str(w)], out)
            check(p.returncode == 0, f"job_lines {pol} {w}w: exits 0 ({p.returncode}: {p.stderr.strip()[:300]})")
            if p.returncode:
                return
            got[pol, w] = summary(out)["tasks_per_s"]
    pr, st = got["priority", 4] / got["priority", 1], got["stealing", 4] / got["stealing", 1]
    check(pr < 2, f"job_lines: priority's four workers wait on their job's line ({pr:.2f}x its one worker)")
    check(st > 2, f"job_lines: stealing's four workers do not ({st:.2f}x its one worker)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schedbed", required=True)
    ap.add_argument("--only", choices=["determinism", "accounting", "agreement", "progress", "costs",
                                           "bad_input", "table", "validate", "speedup_split", "cold", "shared_cores",
                                           "slices", "park_spread", "long_parks", "busy_pause", "job_cost",
                                           "park_way_back", "job_apart", "park_cpu", "host_speeds", "kernel_cost",
                                           "wake_stacking", "shared_line", "wake_last_core", "wake_preempt", "job_lines", "external_threads",
                                           "noise"])
    a = ap.parse_args()
    sb = os.path.abspath(a.schedbed)
    tmp = tempfile.mkdtemp(prefix="schedbed-sim-")
    try:
        for name, fn in (("determinism", determinism), ("accounting", accounting), ("agreement", agreement),
                         ("progress", progress), ("costs", costs), ("bad_input", bad_input), ("table", own_table),
                         ("validate", validate), ("speedup_split", speedup_split), ("cold", cold), ("shared_cores", shared_cores),
                         ("slices", slices), ("park_spread", park_spread), ("long_parks", long_parks), ("busy_pause", busy_pause),
                         ("job_cost", job_cost), ("park_way_back", park_way_back), ("job_apart", job_apart),
                         ("park_cpu", park_cpu), ("host_speeds", host_speeds), ("kernel_cost", kernel_cost),
                         ("wake_stacking", wake_stacking), ("shared_line", shared_line), ("wake_last_core", wake_last_core),
                         ("wake_preempt", wake_preempt), ("job_lines", job_lines),
                         ("external_threads", external_threads), ("noise", noise)):
            if not a.only or a.only == name:
                fn(sb, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(FAILS)} failed" if FAILS else "all sim checks passed")
    sys.exit(min(len(FAILS), 100))


if __name__ == "__main__":
    main()
