"""sbverdict.py - which runs may be pooled, and the verdict table of two sides (A/B, or a policy
against the first of a comparison).

Runs are pooled into one side only when they measured the same thing on the same machine: the
same program (commit and build), the same core, policy and workload parameters, run length and
executor (the seed may differ: each repetition has its own), and the same host, CPU model,
online cores and topology, as each run's meta.json records them. Anything else is refused with
the first key that differs, because a median over two settings answers neither.

A side's figure is the median over its runs with its 95% percentile-bootstrap interval
(sbstats.median_ci); B is called faster or slower than A only when the intervals do not overlap
(sbstats.order's rule), else "no difference measured".
"""
import json

import sbstats

# meta.json keys that make a run what it is; the seed is left out (each repetition has its own)
SETTING_KEYS = ("git", "compiler", "policy", "core", "workload", "duration_s", "warmup_s", "jobs", "executor")
MACHINE_KEYS = ("host", "cpu_model", "cpu_id", "cores_online", "topology")
# meta.json keys that are descriptions, not settings (a policy's text may be reworded between commits)
NOT_SETTINGS = ("description",)


class PoolError(Exception):
    """Runs that must not be pooled; the message names the key and the two values."""


def _strip(v):
    if isinstance(v, dict):
        return {k: _strip(x) for k, x in v.items() if k not in NOT_SETTINGS}
    return v


def settings_of(meta):
    return {k: _strip(meta.get(k)) for k in SETTING_KEYS}


def machine_of(meta):
    return {k: meta.get(k) for k in MACHINE_KEYS}


def first_difference(a, b, path=""):
    """(dotted key, value in a, value in b) of the first place two JSON values differ, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            d = first_difference(a.get(k), b.get(k), f"{path}.{k}" if path else k)
            if d:
                return d
        return None
    return None if a == b else (path, a, b)


def check_same(runs, what, of, label):
    """Raises PoolError unless of(meta) is the same for every run; runs: [{"meta": ..., "dir": ...}]."""
    if not runs:
        return
    ref = of(runs[0]["meta"])
    for r in runs[1:]:
        d = first_difference(ref, of(r["meta"]))
        if d:
            raise PoolError(f"{label}: {runs[0]['dir']} and {r['dir']} differ in {what} {d[0]} "
                            f"({json.dumps(d[1])} vs {json.dumps(d[2])}); runs with different {what} are not pooled")


def check_pool(sides, across=()):
    """sides: {name: [run, ...]}. Each side's runs share their settings, every run its machine, and
    the settings named in across (e.g. all but the policy, when policies are compared) hold for
    every side alike."""
    for name, runs in sides.items():
        check_same(runs, "settings", settings_of, name)
    every = [r for runs in sides.values() for r in runs]
    check_same(every, "machine", machine_of, "runs")
    check_same(every, "settings", lambda m: {k: v for k, v in settings_of(m).items() if k in across}, "sides")


LOCK_METRIC = "lock wait %"
CORES_METRIC = "cores used"
MEMORY_METRIC = "peak memory (MiB)"
# metrics that are a cost, not a speed: B uses fewer (less) or more of it, never "faster"
WORDS = {CORES_METRIC: {"faster": "fewer", "slower": "more"}, MEMORY_METRIC: {"faster": "less", "slower": "more"}}


def lock_share(run):
    """The workers' waits for the core's shared locks (the task depot) in the window, as a percentage
    of their busy time; None when the run has no such counters (or no busy time)."""
    w = run["summary"].get("counters", {}).get("window", {})
    busy, wait = w.get("busy_ns"), w.get("lock_wait_ns")
    return 100.0 * wait / busy if busy and wait is not None else None


def metrics(runs):
    """[(metric name, higher is better, values per run)]: throughput, then p50 and p99 of all jobs
    and of every class (in the workload's order) that each run finished jobs of, then the share of
    busy time spent waiting for the core's locks (a cause, not a result: it says why throughput
    moved) where the runs counted it, the cores the process used in the window (what a faster
    side may have paid for its speed, or an idle policy burns) and its peak resident memory (what
    it may have paid in memory: queues that grow, segments reclaimed late)."""
    out = [("throughput (jobs/s)", True, [r["summary"]["throughput"] for r in runs])]
    classes = ["all"] + [c for c in runs[0]["meta"].get("workload", {}).get("classes", [])
                         if all(r["summary"]["classes"].get(c, {}).get("count") for r in runs)]
    for c in classes:
        for q in ("p50", "p99"):
            vals = [(r["summary"]["all"] if c == "all" else r["summary"]["classes"][c])[q] for r in runs]
            out.append((f"{q} {c}", False, vals))
    locks = [lock_share(r) for r in runs]
    if any(x is not None for x in locks):
        out.append((LOCK_METRIC, False, locks))
    cores = [r["summary"].get("cpu", {}).get("window_cores") for r in runs]
    if any(x is not None for x in cores):
        out.append((CORES_METRIC, False, cores))
    rss = [r["summary"].get("cpu", {}).get("peak_rss_kib") for r in runs]
    if any(x is not None for x in rss):
        out.append((MEMORY_METRIC, False, [x / 1024 if x is not None else None for x in rss]))
    return out


def verdict(a, b, higher_is_better):
    """B against A from their per-run values: "faster", "slower" or sbstats.NO_DIFFERENCE. A run
    that finished no job in its window has no percentile (None) and counts for nothing."""
    a, b = [x for x in a if x is not None], [x for x in b if x is not None]
    ca, cb = sbstats.median_ci(a), sbstats.median_ci(b)
    said = sbstats.order("A", ca, "B", cb, len(a), len(b))
    if said == sbstats.NO_DIFFERENCE:
        return said, ca, cb
    b_higher = said == "A < B"
    return ("faster" if b_higher == higher_is_better else "slower"), ca, cb


def fmt(v, higher_is_better, name=""):
    if name in (LOCK_METRIC, CORES_METRIC):
        return f"{v:.2f}"
    if name == MEMORY_METRIC:
        return f"{v:.1f}"
    if higher_is_better:
        return f"{v:,.0f}"
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if v >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.0f} ns"


def rows(runs_a, runs_b, only=None):
    """One dict per metric present on both sides (or named in only): the metric, each side's median,
    interval and run count, and B's verdict against A (a file a script can read: ab.py's verdict.csv)."""
    ma = {m: (hib, v) for m, hib, v in metrics(runs_a) if only is None or m in only}
    out = []
    for m, hib, vb in metrics(runs_b):
        if m not in ma or all(x is None for x in ma[m][1]) or all(x is None for x in vb):
            continue
        said, ca, cb = verdict(ma[m][1], vb, hib)
        said = WORDS.get(m, {}).get(said, said)
        out.append({"metric": m, "higher_is_better": hib,
                    "a_median": ca[0], "a_low": ca[1], "a_high": ca[2], "a_runs": sum(x is not None for x in ma[m][1]),
                    "b_median": cb[0], "b_low": cb[1], "b_high": cb[2], "b_runs": sum(x is not None for x in vb),
                    "verdict": said})
    return out


def table(name_a, runs_a, name_b, runs_b, only=None):
    """The verdict lines of B against A, one per metric of rows(), after a header line."""
    lines = [f"{'metric':<20} {name_a + ' median [95% CI]':>30}  {name_b + ' median [95% CI]':>30}  "
             f"{name_b} against {name_a}"]
    for r in rows(runs_a, runs_b, only):
        m, hib, said = r["metric"], r["higher_is_better"], r["verdict"]
        ca, cb = (r["a_median"], r["a_low"], r["a_high"]), (r["b_median"], r["b_low"], r["b_high"])
        ratio = f" (B/A {cb[0] / ca[0]:.2f})" if ca[0] and said != sbstats.NO_DIFFERENCE else ""
        cell = [f"{fmt(c[0], hib, m)} [{fmt(c[1], hib, m)}, {fmt(c[2], hib, m)}]" for c in (ca, cb)]
        lines.append(f"{m:<20} {cell[0]:>30}  {cell[1]:>30}  {said}{ratio}")
    return lines
