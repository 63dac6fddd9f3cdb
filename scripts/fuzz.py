#!/usr/bin/python3
"""Configuration fuzz: random valid runs of schedbed, drawn from its own listing.

Every parameter comes from `schedbed list --params` (scope, name, type, default, range), so a
parameter added to any table is fuzzed without touching this script. Each configuration picks a
policy and a workload, sets a random subset of the core's, the policy's and the workload's
parameters to values inside their listed ranges, and runs briefly, with or without --check and
--chaos. Sizes and times are bounded so that a run stays small: counts at most SIZE_CAP, costs
in ns at most NS_CAP, times in us at most US_CAP, powers of two at most 2^LOG2_CAP, threads at
most --max-threads (4; more where the machine has the cores: the bugs that need many workers
racing need them running at once).

A run passes when it exits 0, or 3 (overloaded: its pending jobs outlasted the drain time and
were cancelled, which is the run ending as it should); a run refused at start because two
drawn values do not go together (exit 2, "cannot start ...") is counted apart. It fails on a crash (a signal), a hang
(no exit within warm-up + duration + drain + --margin seconds), a failed run (exit 1: an
invariant, a starvation or stall report, accounting that does not add up) or bad input (exit 2:
a value the listing offers that the program refuses). Each failure is printed, and appended to
--failures, as one line: the command that reproduces it.

A starvation report (check mode's watchdog: a class's queued work not started for its 1 s limit
while younger work starts) is the one verdict that a machine's speed can bring about: near
capacity, a slower or loaded machine leaves a backlog that a policy serving some class last
takes longer than the limit to reach, where a quicker one ends the same run with exit 0 or 3.
Such a run is run again with a limit of CONFIRM_LIMIT_MS and a drain twice that: if the starved
work starts within it, it was a backlog: the configuration's verdict, as an overload is (passed,
counted apart); work that still does not start (a livelock, a lost lane: the fuzz has found both)
fails it, as does any other failure of the second run.

The draw is seeded (--seed): the same seed and count give the same configurations.
"""
import argparse
import concurrent.futures
import math
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SIZE_CAP = 64
NS_CAP = 2_000_000
US_CAP = 20_000
DOUBLE_CAP = 20_000.0
LOG2_CAP = 12  # queue sizes given as a power of two (priority allocates one per job)
# Set through their own options (check, chaos), or not at all: trace files are large, the
# watchdog's limit is check mode's default so that a drawn limit below a drawn task cost does
# not report what it is meant to report, and a workload's planted fault (patterns' `fault`)
# fails the run on purpose.
SKIP = {("core", "check"), ("core", "chaos"), ("core", "trace"), ("core", "stall_limit"),
        ("core", "preempt_threshold"), ("workload", "fault")}
TOPOLOGIES = ["", "package:2 core:2 pu:1", "core:4 pu:1", "pu:2"]
# The stall limit (ms) of a starved run's second run: 5 times check mode's default (1 s)
CONFIRM_LIMIT_MS = 5000


def listing(schedbed):
    out = subprocess.run([schedbed, "list", "--params"], check=True, capture_output=True, text=True).stdout
    params = []
    for line in out.splitlines():
        scope, name, typ, default, lo, hi, choices = line.split("\t")
        params.append(dict(scope=scope, name=name, type=typ, default=default, min=lo, max=hi,
                           choices=choices.split("|") if choices else []))
    return params


def cap_for(name, hi, max_threads):
    if name == "thread_count":
        return min(hi, max_threads)
    if name.endswith("_log2"):
        return min(hi, LOG2_CAP)
    if name.endswith("_ns"):
        return min(hi, NS_CAP)
    if name.endswith("_us") or "timeout" in name or "interval" in name or name == "task_polling_wait":
        return min(hi, US_CAP)
    return min(hi, SIZE_CAP)


def draw_number(rng, lo, top, integer):
    """lo or top a fifth of the time each, else log-uniform in between (uniform near zero)."""
    r = rng.random()
    if r < 0.2 or top <= lo:
        return lo if r < 0.2 else top
    if r < 0.4:
        return top
    if top <= 1 or lo < 0:
        v = rng.uniform(lo, top)
    else:
        v = math.exp(rng.uniform(math.log(max(lo, 1e-3 if not integer else 1)), math.log(top)))
    return min(top, max(lo, int(round(v)))) if integer else v


def draw_value(rng, p, max_threads):
    if p["name"] == "topology":
        return rng.choice(TOPOLOGIES)
    t = p["type"]
    if t == "int":
        lo = int(p["min"])
        return str(draw_number(rng, lo, max(lo, cap_for(p["name"], int(p["max"]), max_threads)), True))
    if t == "double":
        lo = float(p["min"])
        return repr(draw_number(rng, lo, max(lo, min(float(p["max"]), DOUBLE_CAP)), False))
    if t in ("bool", "enum"):
        return rng.choice(p["choices"])
    return p["default"]


def draw(rng, params, policies, workloads, args):
    pol = rng.choice(policies)
    wl = rng.choice(workloads)
    cmd = [args.schedbed, "run", "--policy", pol, "--workload", wl, "-q",
           "--duration", "%.2f" % rng.uniform(0.1, args.duration), "--warmup", "0",
           "--drain", str(args.drain), "--seed", str(rng.randrange(1, 1 << 31))]
    if rng.random() < 0.5:
        cmd.append("--check")
    if rng.random() < 1 / 3:
        cmd += ["--chaos", str(rng.randrange(1, 1 << 31))]
    threads = rng.random() < 0.5
    if threads:
        cmd += ["--threads", str(rng.randint(1, args.max_threads))]
    for p in params:
        scope = p["scope"]
        if scope == "run" or (scope.split(":")[0], p["name"]) in SKIP:
            continue
        if threads and (scope, p["name"]) == ("core", "thread_count"):
            continue  # --threads is that parameter: giving both is refused as two values
        if scope.startswith("policy:") and scope != "policy:" + pol:
            continue
        if scope.startswith("workload:") and scope != "workload:" + wl:
            continue
        if rng.random() < args.share:
            prefix = scope.split(":")[0]
            cmd += ["--set", "%s.%s=%s" % (prefix, p["name"], draw_value(rng, p, args.max_threads))]
    return cmd


def execute(cmd, limit):
    """cmd's exit status (None: killed after limit s) and its stderr."""
    out = tempfile.mkdtemp(prefix="schedbed-fuzz-")
    full = cmd + ["--out", os.path.join(out, "run")]
    p = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        _, err = p.communicate(timeout=limit)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        rc, err = None, ""
    shutil.rmtree(out, ignore_errors=True)
    return rc, err


def starved(rc, err):
    return rc == 1 and "schedbed: run failed: STARVATION" in err


def confirm_cmd(cmd):
    """The same run with a CONFIRM_LIMIT_MS stall limit and a drain twice as long, so that the
    watchdog can still judge the window's work during the drain."""
    again = list(cmd)
    again[again.index("--drain") + 1] = "%g" % (2 * CONFIRM_LIMIT_MS / 1000)
    return again + ["--set", "core.stall_limit=%d" % CONFIRM_LIMIT_MS]


def run_one(cmd, limit, margin):
    """(exit status, verdict: None when the run passes, whether it passed as a backlog's
    starvation, seconds taken)."""
    t0 = time.monotonic()
    rc, err = execute(cmd, limit)
    again = ""
    if starved(rc, err):
        cmd2 = confirm_cmd(cmd)
        dur = float(cmd2[cmd2.index("--duration") + 1])
        limit = dur + 2 * CONFIRM_LIMIT_MS / 1000 + margin
        rc2, err2 = execute(cmd2, limit)
        if rc2 in (0, 3):  # the starved work started within CONFIRM_LIMIT_MS: a backlog
            return rc, None, True, time.monotonic() - t0
        rc, err = rc2, err2  # the command that reproduces it stays the first one
        again = "again with core.stall_limit=%d and --drain %g: " % (CONFIRM_LIMIT_MS, 2 * CONFIRM_LIMIT_MS / 1000)
    took = time.monotonic() - t0
    if rc is None:
        verdict = "hang: no exit after %.0f s" % limit
    elif rc < 0:
        verdict = "crash: signal %d" % -rc
    elif rc in (0, 3):
        verdict = None
    elif rc == 2 and "schedbed: cannot start " in err:
        # a combination the policy or workload refuses at start (statements_max below
        # statements, say): each value is valid, the pair is not; one line said so
        verdict = None
    else:
        lines = [l for l in err.splitlines() if l.startswith("schedbed:") and "note:" not in l]
        verdict = "exit %d: %s" % (rc, (lines[-1] if lines else err.strip())[:300])
    return rc, (again + verdict if again and verdict else verdict), False, took


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--schedbed", default="build/release/schedbed")
    ap.add_argument("--count", type=int, default=500, help="configurations to run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (the machine has 2 cores)")
    ap.add_argument("--duration", type=float, default=0.5, help="longest measurement window, s")
    ap.add_argument("--drain", type=float, default=1.0, help="drain time given to every run, s")
    ap.add_argument("--margin", type=float, default=20.0, help="s past warm-up + duration + drain that make a hang")
    ap.add_argument("--max-threads", type=int, default=4, help="most worker threads a configuration draws")
    ap.add_argument("--share", type=float, default=0.3, help="chance that each parameter is drawn")
    ap.add_argument("--failures", default=None, help="append each failing command here, one a line")
    args = ap.parse_args()

    params = listing(args.schedbed)
    policies = subprocess.run([args.schedbed, "list", "--policies"], check=True, capture_output=True,
                              text=True).stdout.split()
    workloads = subprocess.run([args.schedbed, "list", "--workloads"], check=True, capture_output=True,
                               text=True).stdout.split()
    rng = random.Random(args.seed)
    cmds = [draw(rng, params, policies, workloads, args) for _ in range(args.count)]
    t0 = time.monotonic()
    tally = {"ok": 0, "overloaded": 0, "refused": 0, "backlog": 0}
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {}
        for i, cmd in enumerate(cmds):
            dur = float(cmd[cmd.index("--duration") + 1])
            futs[ex.submit(run_one, cmd, dur + args.drain + args.margin, args.margin)] = (i, cmd)
        for done, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            i, cmd = futs[fut]
            rc, verdict, backlog, took = fut.result()
            if verdict is None:
                tally["backlog" if backlog else "overloaded" if rc == 3 else "refused" if rc == 2 else "ok"] += 1
            else:
                repro = shlex.join(cmd)
                failures.append((i, verdict, repro))
                print("FAIL #%d (%s) %s" % (i, verdict, repro), flush=True)
                if args.failures:
                    with open(args.failures, "a") as f:
                        f.write(repro + "\n")
            if done % 50 == 0:
                print("fuzz: %d/%d runs, %d failures, %.0f s" % (done, len(cmds), len(failures),
                                                                time.monotonic() - t0), file=sys.stderr, flush=True)
    wall = time.monotonic() - t0
    print("fuzz: seed %d, %d runs: %d passed (%d of them overloaded, exit 3; %d starved a class for 1 s but "
          "not %g s, a backlog), %d refused at start as a combination (exit 2), %d failed; %.0f s wall"
          % (args.seed, len(cmds), tally["ok"] + tally["overloaded"] + tally["backlog"], tally["overloaded"],
             tally["backlog"], CONFIRM_LIMIT_MS / 1000, tally["refused"], len(failures), wall))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
