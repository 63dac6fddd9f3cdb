"""sbvalidate.py - the rows half of validate_sim.py: a validation's runs read back (from its
directory or a committed runs.csv[.xz]), their medians per cell and the simulator's errors, and
the host's speed beside each native run (the probes of --probes)."""
import csv
import json
import os
import statistics
import sys

import machines
import sbcollect
import sbdesc
import sbrun
from sbcli import die

METRICS = [("throughput", "throughput", "jobs/s"), ("p50", "all.p50", "µs"), ("p99", "all.p99", "µs"),
           ("cores", "cpu.window_cores", "cores"), ("steals", "per_job.stolen", "steals/job"),
           ("preempted", "preempted_per_s.workers", "worker preemptions/s")]
OLTP_CLASSES = ["begin", "insert", "point", "filter", "multi", "join", "aggregate", "scan", "commit"]


def medians(rows):
    """{(executor, cell, policy, threads): {metric: median over seeds}} from runs.csv's rows."""
    groups = {}
    for r in rows:
        groups.setdefault((r["executor"], r["cell"], r["policy"], int(r["threads"])), []).append(r)
    cols = [c for _, c, _ in METRICS] + [f"classes.{k}.p99" for k in OLTP_CLASSES]
    out = {}
    for key, rs in groups.items():
        m = {}
        for c in cols:
            vals = [float(r[c]) for r in rs if r.get(c) not in (None, "")]
            if vals:
                m[c] = statistics.median(vals)
        m["seeds"] = len(rs)
        m["overloaded"] = sum(int(r.get("overloaded") or 0) for r in rs)
        out[key] = m
    return out


def err(sim, nat):
    """Signed percent; None where the native figure is 0 (0 against 0 is no error)."""
    if sim is None or nat is None:
        return None
    if nat == 0:
        return 0.0 if sim == 0 else None
    return 100.0 * (sim - nat) / nat


def fmt_err(e):
    return "-" if e is None else f"{e:+.0f}"


def load_rows(d, partial=False):
    """runs.csv's rows (collect refuses an unfinished sweep); with partial, the finished runs alone,
    read from their result directories, and a line saying how many are left out. d may be a
    runs.csv or runs.csv.xz itself (a committed validation's rows), with ?COLUMN=VALUE to keep the
    rows that have it."""
    path, _, query = d.partition("?")
    if os.path.isfile(path):
        col, _, val = query.partition("=")
        with sbcollect.open_rows(path) as f:
            rows = list(csv.DictReader(f))
        if query and (not rows or col not in rows[0]):
            die(f"{d}: no column {col} in {path}")
        return [r for r in rows if not query or r[col] == val]
    if not partial:
        path, _ = sbcollect.collect(d)
        with open(path) as f:
            return list(csv.DictReader(f))
    rows, lines = [], sbdesc.read_manifest(d)
    for ln in lines:
        if sbrun.line_state(d, ln)[0] != "done":
            continue
        row, nums = sbcollect.run_row(d, ln)
        rows.append({**row, **nums})
    print(f"validate_sim: {d}: {len(rows)} of {len(lines)} runs finished; the rest left out (--partial)", file=sys.stderr)
    return rows


def load_summary(d):
    # a committed validation keeps its native half's samples as load-native.json beside runs.csv.xz
    d = d.partition("?")[0]
    path = os.path.join(os.path.dirname(d), "load-native.json") if os.path.isfile(d) else os.path.join(d, "load.json")
    try:
        with open(path) as f:
            s = [x[1] for x in json.load(f)["samples"]]
        return f"load average (1 min) while it ran: min {min(s):.1f}, median {statistics.median(s):.1f}, max {max(s):.1f}"
    except (OSError, ValueError, KeyError):
        return "load average not recorded (runs not started by validate_sim.py run)"


def with_probes(lines):
    """The native lines with a cross-thread probe before the first and after each, every native line
    tagged with the probes on either side of it (the sweep runner keeps manifest order)."""
    out, k = [], 0

    def probe():
        return {"id": f"probe.p{k}", "out": f"probe/p{k}", "program": "schedbed", "timing": True, "slim": True,
                "tags": {"executor": "probe", "probe": k},
                "args": machines.PROBE_ARGS}
    for ln in lines:
        if ln["tags"]["executor"] == "native":
            if k == 0:
                out.append(probe())
            ln["tags"].update({"probe_before": k, "probe_after": k + 1})
            k += 1
            out += [ln, probe()]
        else:
            out.append(ln)
    return out


def native_speeds(rows):
    """Each native row's host speed (machines.speed_of) from the probe rows among rows, the split
    rate (None: one speed) and the probe rates; the probe rows are taken out of rows."""
    probes = {int(float(r["probe"])): float(r["throughput"]) for r in rows if r["executor"] == "probe"}
    split = machines.two_levels(probes.values())
    for r in rows:
        if r["executor"] == "native" and r.get("probe_before") not in (None, ""):
            r["speed"] = machines.speed_of(probes.get(int(float(r["probe_before"]))),
                                           probes.get(int(float(r["probe_after"]))), split)
    return [r for r in rows if r["executor"] != "probe"], split, sorted(probes.values())


def table_speed_line(rows, counts, speed):
    """A line for the report where the simulated half's cost table (its version names the speed
    it was calibrated at, calibrate.py --speed) is not the speed of the native runs it is compared
    with, else None: on a host with two speeds a table of the other speed moves every cell that
    ends jobs on another thread than made them (tiny most), which is the table's minute, not the
    model (PAPER.md §4.11, row 81)."""
    tables = {(r.get("costs_version") or "").rsplit("-", 1)[-1] for r in rows if r["executor"] == "sim"}
    if len(tables) != 1 or not tables <= {"slow", "fast"}:
        return None
    table = tables.pop()
    other = "fast" if table == "slow" else "slow"
    if speed and speed != table:
        return f"The cost table is the {table} host's and the native runs compared are the {speed} ones: the speeds differ."
    if not speed and counts[other] > counts[table]:
        n = sum(counts.values())
        return (f"The cost table is the {table} host's, but {counts[other]} of {n} native runs had the {other} one: "
                f"compare with --speed {table}, or simulate with the {other} speed's table (calibrate.py --runs DIR "
                f"--speed {other}).")
    return None
