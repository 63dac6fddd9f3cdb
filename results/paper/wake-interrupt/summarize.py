#!/usr/bin/python3
"""Summaries of the wake-interrupt experiment (README.md).

  summarize.py interrupt             interrupt.csv -> interrupt-summary.csv (median, low, high, runs
                                     per mode and period) and the verdicts the README quotes
  summarize.py traces DIR            DIR/trace-<workers>-<seed>.txt.xz (`perf script -F
                                     comm,tid,cpu,time,event,trace` of `perf sched record`) ->
                                     trace.csv, one row per traced run
  summarize.py validation           base/, interrupt/, preempt/, both/ (validate_sim.py report's
                                     cells.csv each) -> validation.csv: per variant and cell (and
                                     all), the cells within 15% on throughput and 25% on p99
  summarize.py native FILE           the validation's native half: ../validate-sim-jobcost's runs
                                     but its tiny cell, which ../live-counts/validate-tiny made again
                                     after 52b1574, and that one's -> FILE (csv)
"""
import collections
import csv
import lzma
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SWITCH = re.compile(r"prev_comm=(\S+) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(\S+) next_pid=(\d+)")
WAKING = re.compile(r"sched_waking: comm=(\S+) pid=(\d+) prio=\d+ target_cpu=(\d+)")
MIGRATE = re.compile(r"sched_migrate_task: comm=(\S+) pid=\d+")


def kind(comm):
    return "worker" if comm.startswith("worker") else "client" if comm.startswith("client") else "other"


def interrupt():
    rows = list(csv.DictReader(open(os.path.join(HERE, "interrupt.csv"))))
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["mode"], int(r["period_us"]))].append(r)
    out = []
    for (mode, period), rs in sorted(groups.items()):
        for metric in ("b_cpu_ns_per_wake", "cpu0_lost_ns_per_wake"):
            v = [float(r[metric]) for r in rs]
            out.append({"mode": mode, "period_us": period, "metric": metric, "median": round(statistics.median(v)),
                        "low": round(min(v)), "high": round(max(v)), "runs": len(v)})
    with open(os.path.join(HERE, "interrupt-summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    by = {(o["mode"], o["period_us"], o["metric"]): o for o in out}
    # the verdict is the program's: a woken thread's CPU with an interrupt against without one
    for period in sorted({o["period_us"] for o in out}):
        local = by[("local", period, "b_cpu_ns_per_wake")]
        for mode in ("remote", "timer", "idle"):
            o = by[(mode, period, "b_cpu_ns_per_wake")]
            apart = o["low"] > local["high"]
            print(f"{period} us: {mode} {o['median']} [{o['low']}..{o['high']}] against local {local['median']} "
                  f"[{local['low']}..{local['high']}] ns of the woken thread's CPU: "
                  f"{'more (intervals apart)' if apart else 'no difference measured'}, {o['median'] / local['median']:.1f}x")


def trace(path):
    cur, lastcpu, pending, oncpu = {}, {}, {}, {}
    c = collections.Counter()
    worker_runs = []
    for line in lzma.open(path, "rt"):
        p = line.split()
        if len(p) < 5:
            continue
        cpu, t = int(p[2].strip("[]")), float(p[3].rstrip(":"))
        m = SWITCH.search(line)
        if m:
            pc, pp, st, nc, np_ = m.groups()
            lastcpu[pp] = cpu
            cur[cpu] = nc
            if pp in oncpu:
                start = oncpu.pop(pp)
                if kind(pc) == "worker" and st.startswith("R"):
                    worker_runs.append(t - start)
            oncpu[np_] = t
            if st.startswith("R"):
                c[f"preempted_{kind(pc)}"] += 1
            if np_ in pending:
                where, holder = pending.pop(np_)
                how = "preempting" if st.startswith("R") and kind(pc) == holder else "after"
                c[f"{where}_{holder}_{how}"] += 1
            continue
        m = WAKING.search(line)
        if m and kind(m.group(1)) == "client" and kind(p[0]) == "worker":
            pid, target = m.group(2), int(m.group(3))
            holder = cur.get(target, "swapper")
            holder = "idle" if holder.startswith("swapper") else kind(holder)
            c["wakes"] += 1
            c["target_prev_cpu"] += lastcpu.get(pid) == target
            where = "waker_cpu" if target == cpu else "other_cpu"
            c[f"{where}_{holder}"] += 1
            pending[pid] = (where, holder)
            continue
        m = MIGRATE.search(line)
        if m and kind(m.group(1)) != "other":
            c["migrations"] += 1
    c["worker_run_p50_ns"] = round(statistics.median(worker_runs) * 1e9) if worker_runs else 0
    return c


def traces(d):
    cols = ["workers", "seed", "wakes", "target_prev_cpu", "migrations", "preempted_worker", "preempted_client",
            "worker_run_p50_ns", "waker_cpu_worker", "waker_cpu_worker_preempting", "other_cpu_worker",
            "other_cpu_worker_preempting", "other_cpu_client", "other_cpu_client_preempting", "other_cpu_client_after",
            "other_cpu_idle"]
    rows = []
    for name in sorted(os.listdir(d)):
        m = re.fullmatch(r"trace-(\d+)-(\d+)\.txt\.xz", name)
        if m:
            c = trace(os.path.join(d, name))
            rows.append({"workers": int(m.group(1)), "seed": int(m.group(2)), **{k: c.get(k, 0) for k in cols[2:]}})
    if not rows:
        sys.exit(f"summarize.py: no trace-<workers>-<seed>.txt.xz in {d}")
    with open(os.path.join(HERE, "trace.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    for r in rows:
        print(r)


VARIANTS = ("base", "interrupt", "preempt", "both")


def validation():
    out = []
    for v in VARIANTS:
        rows = list(csv.DictReader(open(os.path.join(HERE, v, "cells.csv"))))
        for cell in sorted({r["cell"] for r in rows}) + ["all"]:
            for workers in ("1", "2", "all"):
                rs = [r for r in rows if cell in ("all", r["cell"]) and workers in ("all", r["threads"])]
                thr = [float(r["err_throughput"]) for r in rs]
                p99 = [float(r["err_p99"]) for r in rs]
                out.append({"variant": v, "cell": cell, "workers": workers, "cells": len(rs),
                            "throughput_within": sum(abs(e) <= 15 for e in thr), "p99_within": sum(abs(e) <= 25 for e in p99),
                            "err_throughput_median": round(statistics.median(thr)), "err_p99_median": round(statistics.median(p99))})
    with open(os.path.join(HERE, "validation.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    for o in out:
        if o["workers"] == "all":
            print(o)


def native(path):
    def rows(rel):
        return list(csv.DictReader(lzma.open(os.path.join(HERE, "..", rel), "rt")))
    old, tiny = rows("validate-sim-jobcost/runs-native.csv.xz"), rows("live-counts/validate-tiny/runs-native.csv.xz")
    fields = list(old[0]) + [k for k in tiny[0] if k not in old[0]]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows([r for r in old if r["cell"] != "tiny"] + tiny)


if __name__ == "__main__":
    if sys.argv[1:] == ["interrupt"]:
        interrupt()
    elif len(sys.argv) == 3 and sys.argv[1] == "traces":
        traces(sys.argv[2])
    elif sys.argv[1:] == ["validation"]:
        validation()
    elif len(sys.argv) == 3 and sys.argv[1] == "native":
        native(sys.argv[2])

    else:
        sys.exit("usage: summarize.py interrupt | traces DIR | validation | native FILE")
