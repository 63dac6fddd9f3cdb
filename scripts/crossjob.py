"""crossjob.py - what a job costs when it is created on one thread and ended on another: the
cross-thread probe's rounds (machines.PROBE_ARGS) in the calibration's manifest, and the cost
table's job_create and job_end from them (calibrate.py writes the table).

fifo's probe runs in REMOTE_ROUNDS rounds spread over the calibration; its medians are the
table's job_create and job_end. Every POLICY_EVERY-th round also runs the probe under each other
policy, right after fifo's: a policy's per-job state and hand-over (the `priority` policy's
handle and subtask queue, a shared queue's claim) is paid where the job starts and where it ends,
which a chain of tasks in one job (push@POLICY) never shows. Such a policy gets job_create@POLICY
and job_end@POLICY: fifo's figure plus the median difference between its round and fifo's beside
it (pairs, because what a job crossing threads costs moves from one second to the next on some
hosts). A policy whose worker does not end the probe's jobs (serial runs them on the request
thread) gets none.
"""
import statistics

import machines

REMOTE_ROUNDS = 27  # spread over the calibration: what a job crossing threads costs changes from one second to the next
POLICY_EVERY = 3  # every third round runs the probe under each policy too


def probe_args(pol):
    args = list(machines.PROBE_ARGS)
    args[args.index("--policy") + 1] = pol
    return args


def round_id(pol, rep):
    return f"remote.r{rep}" if pol == "fifo" else f"remote.{pol}.r{rep}"


def remote_lines(reps, pols=()):
    """The cross-thread probe: every job is created on one thread and ended on another, with no
    wake-up and no park between them: what per_remote reads. fifo's, then each of pols' in the
    rounds POLICY_EVERY picks."""
    return [{"id": round_id(pol, rep), "out": f"remote/{pol}/r{rep}" if pol != "fifo" else f"remote/r{rep}",
             "program": "schedbed", "timing": True, "slim": True, "tags": {"policy": pol, "rep": rep},
             "args": probe_args(pol)}
            for rep in reps for pol in ["fifo"] + [p for p in pols if p != "fifo" and rep % POLICY_EVERY == 1]]


def per_remote(runs, cost, task, pol="fifo", reps=None):
    """Each round's (rate in jobs/s, job_create, job_end) under pol. The worker never sleeps, so of
    the window's CPU one core is its and the rest the request thread's (the harness's threads
    sleep); the worker's share is its busy time. Each less what the simulator charges that thread
    for the same job there: the creator its root task's push and a transfer of the queue's line;
    the finisher the root's pop, the teardown task's push and pop, and a transfer of the line.
    None for a policy whose worker did not end the jobs."""
    rounds = []
    for rep in reps or range(1, REMOTE_ROUNDS + 1):
        s = runs[round_id(pol, rep)]["summary"]
        w = s["counters"]["window"]
        jobs = w["teardowns"]
        if not jobs or sum(x["teardowns"] for x in s["counters"]["workers"]) < jobs / 2:
            return None
        cpu = s["cpu"]["window_user_s"] + s["cpu"]["window_sys_s"]
        rounds.append((s["throughput"],
                       (cpu - s["window_s"]) * 1e9 / jobs - (task[pol] - cost["pop"]) - cost["line"],
                       w["busy_ns"] / jobs - task[pol] - cost["pop"] - cost["line"]))
    return rounds


def remote_costs(rounds, speed):
    """(job_create, job_end, split, header lines) from per_remote's rounds: the medians of the
    rounds of the chosen speed where the host has two (machines.two_levels), else of all of them."""
    split = machines.two_levels([r[0] for r in rounds])
    levels = {"one": rounds} if split is None else {
        "slow": [r for r in rounds if r[0] < split], "fast": [r for r in rounds if r[0] >= split]}
    pick = levels.get(speed, rounds)

    def level(rs):
        med = [max(statistics.median(r[k] for r in rs), 0.0) for k in (1, 2)]
        return med, (f"{len(rs)} rounds at {min(r[0] for r in rs) / 1e6:.2f}M to {max(r[0] for r in rs) / 1e6:.2f}M "
                     f"jobs/s: job_create {min(r[1] for r in rs):.0f} to {max(r[1] for r in rs):.0f} ns "
                     f"(median {med[0]:.0f}), job_end {min(r[2] for r in rs):.0f} to {max(r[2] for r in rs):.0f} "
                     f"ns (median {med[1]:.0f})")
    (create, end), _ = level(pick)
    if split is None:
        head = ["One speed: " + level(rounds)[1] + "."]
    else:
        head = [f"Two speeds (two groups of rates whose medians are {machines.SPEEDS_APART}x or more apart; split at "
                f"{split / 1e6:.2f}M jobs/s); this table has the {speed} one's medians.",
                f"slow: {level(levels['slow'])[1]};", f"fast: {level(levels['fast'])[1]}.",
                f"The other speed's table: calibrate.py --runs DIR --speed {'fast' if speed == 'slow' else 'slow'} "
                "--out FILE (the same runs, not run again)."]
    return create, end, split, head


def policy_costs(runs, cost, task, pols, split, speed):
    """{POLICY: (job_create, job_end)} for each policy but fifo whose worker ends the probe's jobs:
    fifo's figures (cost) plus the median of the paired rounds' differences, over the rounds
    whose fifo probe ran at the table's speed where the host has two (all of them where none
    did)."""
    reps = [r for r in range(1, REMOTE_ROUNDS + 1) if r % POLICY_EVERY == 1]
    base = dict(zip(reps, per_remote(runs, cost, task, "fifo", reps)))
    if split is not None:
        same = [r for r in reps if (base[r][0] >= split) == (speed == "fast")]
        reps = same or reps
    out = {}
    for pol in pols:
        mine = per_remote(runs, cost, task, pol, reps) if pol != "fifo" else None
        if mine is None:
            continue
        out[pol] = tuple(max(cost[k] + statistics.median(m[i] - base[r][i] for r, m in zip(reps, mine)), 0.0)
                         for i, k in ((1, "job_create"), (2, "job_end")))
    return out
