"""sbcollect.py - a finished sweep's results: collect (every line's summary.json, tags and
machine as one row of DIR/runs.csv; refused while any line is unfinished), read_rows (runs.csv
back, or runs.csv.xz where only that exists: rows_path, compress_rows), and the load sweep's
figure (plot_load: p99 and achieved rate against offered load).

plot_load needs matplotlib and numpy (loaded when it is called); the rest needs only Python's
standard library.
"""
import csv
import lzma
import os
import shutil
import sys

import machines
from sbcli import PROG, die, plural, write_csv
from sbdesc import read_manifest
from sbread import read_run
from sbrun import line_state, read_status


def flatten(d, prefix=""):
    """Numbers of a summary.json as dotted columns; lists (per-worker rows) are left out."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        elif isinstance(v, bool):
            out[prefix + k] = int(v)
        elif isinstance(v, (int, float)):
            out[prefix + k] = v
    return out


def derived(s):
    """Figures the tables need that are not a single summary number: per job of the window,
    what the workers did for it (steals, hand-offs, time suspended), which often explains a
    latency or a throughput."""
    out = {}
    if s.get("tasks_per_s"):
        out["ns_per_task"] = 1e9 / s["tasks_per_s"]
    win, jobs = s.get("counters", {}).get("window", {}), s.get("jobs")
    if win and jobs:
        out["per_job.stolen"] = win.get("stolen", 0) / jobs
        out["per_job.suspends"] = win.get("suspends", 0) / jobs
        out["per_job.suspended_us"] = win.get("suspended_ns", 0) / jobs / 1e3
    if win and s.get("window_s") and s.get("threads"):
        # share of the workers' window time spent suspended: 1 means every worker slept throughout
        out["suspended_share"] = win.get("suspended_ns", 0) / (s["window_s"] * 1e9 * s["threads"])
    cpu = s.get("cpu", {})
    for who in ("workers", "clients"):  # how often the OS took a runnable one's core (null: not taken)
        if cpu.get(f"window_preempted_{who}") is not None and s.get("window_s"):
            out[f"preempted_per_s.{who}"] = cpu[f"window_preempted_{who}"] / s["window_s"]
    ps, submitted = s.get("policy_stats", {}), s.get("reconciliation", {}).get("jobs_submitted")
    if "handoffs" in ps and submitted:
        out["per_job.handoffs"] = ps["handoffs"] / submitted  # policy stats cover the whole run
    t = [w["tasks"] for w in s.get("counters", {}).get("workers", [])]
    if t and min(t) > 0:
        out["imbalance"] = max(t) / min(t)  # busiest worker's tasks over the idlest's
    return out


TAG_COLUMNS = ["id", "experiment", "config", "label", "rep", "policy", "workload", "seed", "sets", "git_sha", "dirty",
               "overloaded", *machines.COLUMNS]


def run_row(root, ln):
    """One finished line's row (its tags, arguments, commit, machine, and a simulated run's cost
    table, which validate_sim's report checks against its runs' host speed) and, apart, its
    summary's figures."""
    st = read_status(root, ln) or {}
    run = read_run(os.path.join(root, ln["out"]), st)
    made = run["provenance"]
    row = {"id": ln["id"], **ln.get("tags", {}), "args": " ".join(ln["args"]), "elapsed_s": st.get("elapsed_s"),
           "git_sha": made["sha"], "dirty": int(made["dirty"]), "overloaded": int(bool(st.get("overloaded"))),
           **{k: made[k] for k in machines.COLUMNS}}
    costs = (run["meta"].get("executor") or {}).get("costs_version")
    if costs:
        row["costs_version"] = costs
    return row, {**flatten(run["summary"]), **derived(run["summary"])}


def collect(root, csv_path=None, leave_out_failed=False, allow_mixed=False):
    """Every line's result as one row; dies naming the lines that are not finished. With
    leave_out_failed, a line that ran and failed is named and left out instead (a load sweep's
    runs past saturation); a line that never ran or never ended still stops it. Runs of more than
    one machine (meta.json's CPU model and cores) are refused unless allow_mixed (machines.py)."""
    lines = read_manifest(root)
    bad, left_out = [], []
    for ln in lines:
        state, why = line_state(root, ln)
        if state == "failed" and leave_out_failed:
            left_out.append(ln)
            print(f"{PROG}: left out {ln['id']}: {why}", file=sys.stderr)
        elif state != "done":
            bad.append(f"{ln['id']} ({state}: {why})")
    lines = [ln for ln in lines if ln not in left_out]
    if not lines:
        die(f"{root}: no run finished", 1)
    if bad:
        die(f"{len(bad)} of {len(lines)} runs are not finished, nothing collected: " + "; ".join(bad[:6]) +
            (f"; and {len(bad) - 6} more" if len(bad) > 6 else "") + f" (see sweep.py status {root})", 1)
    rows, columns = [], list(TAG_COLUMNS)
    extra_tags = []
    for ln in lines:
        row, nums = run_row(root, ln)
        for k in [*ln.get("tags", {}), *(["costs_version"] if "costs_version" in row else [])]:
            if k not in columns and k not in extra_tags:
                extra_tags.append(k)
        for k in nums:
            if k not in columns:
                columns.append(k)
        row.update(nums)
        rows.append(row)
    machines.one_machine(rows, f"collect {root}", allow_mixed)  # before anything is written
    columns = columns[:len(TAG_COLUMNS)] + extra_tags + ["args", "elapsed_s"] + columns[len(TAG_COLUMNS):]
    csv_path = csv_path or os.path.join(root, "runs.csv")
    write_csv(csv_path, columns, rows)
    return csv_path, rows


def rows_path(csv_path):
    """csv_path, or csv_path.xz where only that exists: results/paper/ keeps its runs.csv files
    compressed (compress_rows), a third of the size, because the clone and the 16-core machine's
    carry have a size budget; every reader of a runs.csv goes through here."""
    return csv_path + ".xz" if not os.path.exists(csv_path) and os.path.exists(csv_path + ".xz") else csv_path


def open_rows(csv_path):
    p = rows_path(csv_path)
    return lzma.open(p, "rt", newline="") if p.endswith(".xz") else open(p, newline="")


def compress_rows(exp_dir):
    """exp_dir/runs.csv replaced by runs.csv.xz (written beside it first, so an interruption
    leaves one whole file), for a directory that is committed."""
    src = os.path.join(exp_dir, "runs.csv")
    if not os.path.exists(src):
        return
    with open(src, "rb") as f, lzma.open(src + ".xz.tmp", "wb", preset=9) as g:
        shutil.copyfileobj(f, g)
    os.replace(src + ".xz.tmp", src + ".xz")
    os.remove(src)


def read_rows(csv_path):
    """runs.csv (or runs.csv.xz: rows_path) back as dicts, numbers as floats (empty cells as None)."""
    def num(v):
        if v == "":
            return None
        try:
            return float(v)
        except ValueError:
            return v
    with open_rows(csv_path) as f:
        return [{k: num(v) for k, v in r.items()} for r in csv.DictReader(f)]


# ---- the load sweep (make sweep) --------------------------------------------------------------

def plot_load(root, csv_path, cls, ld=None, variant=None, allow_mixed=False):
    """p99 of one class (or of all jobs) and the achieved rate against the offered rate, one curve
    per policy: medians with min..max whiskers. ld is the description's "load" (its offered_unit
    names the rate parameter's unit, its achieved the column of the achieved rate in that unit);
    without one, the axes say what the parameter is and the achieved rate is jobs/s. Overloaded
    runs (cancelled jobs) are drawn hollow."""
    import numpy as np
    from sbresults import eng_axis, plt, save
    ld = ld or {}
    rows = read_rows(csv_path)
    if variant is not None:
        rows = [r for r in rows if (r.get("variant") or "") == variant]
    key = "all.p99" if cls == "all" else f"classes.{cls}.p99"
    rows = [r for r in rows if r.get(key) is not None]
    if not rows:
        die(f"{csv_path}: no run has a p99 for {'all jobs' if cls == 'all' else 'class ' + cls}")
    param = rows[0]["param"]
    machine = machines.one_machine(rows, csv_path, allow_mixed)
    offered = f"offered load ({ld['offered_unit']})" if ld.get("offered_unit") else f"offered load: workload parameter {param}"
    achieved = ld.get("achieved") or {"title": "achieved throughput (jobs/s)", "column": "throughput"}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.0, 3.4))
    present = set(r["policy"] for r in rows)
    # colours by the description's policy order, so that every figure of a sweep agrees
    for i, p in ((i, p) for i, p in enumerate(ld.get("policies", sorted(present))) if p in present):
        mine = [r for r in rows if r["policy"] == p]
        rates = sorted({r["rate"] for r in mine})
        for ax, col, scale in ((a1, key, 1e6), (a2, achieved["column"], 1)):
            v = [np.array([r[col] / scale for r in mine if r["rate"] == x and r.get(col) is not None]) for x in rates]
            ok = [len(x) > 0 for x in v]
            xs = np.array(rates)[ok]
            v = [x for x in v if len(x)]
            med = np.array([np.median(x) for x in v])
            err = [med - np.array([x.min() for x in v]), np.array([x.max() for x in v]) - med]
            ax.errorbar(xs, med, yerr=err, marker="o", ms=3, capsize=2, lw=1, label=p, color=plt.cm.tab10(i % 10))
            over = [x for x in rates if any(r.get("overloaded") for r in mine if r["rate"] == x)]
            if over and ax is a1:
                ax.plot(over, [np.median([r[col] / scale for r in mine if r["rate"] == x]) for x in over], "o",
                        mfc="white", color=plt.cm.tab10(i % 10), ms=5)
    a1.set_yscale("log")  # latencies past the knee grow by orders of magnitude: read the axis, not bar lengths
    a1.set_ylabel(f"p99 latency, {'all jobs' if cls == 'all' else 'class ' + cls} (ms, log scale)")
    a2.set_ylabel(achieved["title"])
    for ax in (a1, a2):
        ax.set_xlabel(offered)
        eng_axis(ax.xaxis)
    eng_axis(a2.yaxis)
    a2.legend(title="policy", fontsize=7)
    fig.suptitle(f"{rows[0]['workload']}: open-loop sweep over {param}, {int(rows[0]['threads'])} workers"
                 + (f", {variant}" if variant else "") + f"; {plural(len({r['rep'] for r in rows}), 'repetition')}, "
                 f"medians with min..max; hollow: overloaded\n{machine}", fontsize=9)
    fig.tight_layout()
    stem = "sweep_p99" + (f"-{variant}" if variant else "") + ("" if cls == "all" else f"-{cls}")
    return save(fig, root, stem)
