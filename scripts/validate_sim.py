#!/usr/bin/python3
"""validate_sim.py - the simulator against this machine: every policy on oltp, forkjoin, tiny and
wake at 1 and 2 workers, once natively and once under `--executor sim`, same seed.

    validate_sim.py [--schedbed BIN] [--duration S] [--policies a,b] [--workloads a,b] [--out DIR]

Writes OUT/runs.csv (one row per run: policy, workload, threads, executor, jobs/s, p50, p99)
and OUT/table.md (per cell: native and simulated throughput and p99, and the simulator's error
on throughput, p50 and p99 in percent, signed: positive means the simulator says more), and
prints the table and the share of cells within 15% on throughput and 25% on p99. Native runs
are timing runs: run it on an otherwise idle machine, and read it knowing the cost table's
version (meta.json).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

from sbresults import policy_names
import machines

WORKLOADS = ["oltp", "forkjoin", "tiny", "wake"]


def one(sb, pol, wl, threads, ex, duration, out):
    d = os.path.join(out, "runs", f"{pol}-{wl}-{threads}-{ex}")
    cmd = [sb, "run", "-q", "--executor", ex, "--policy", pol, "--workload", wl, "--threads", str(threads),
           "-d", str(duration), "--warmup", str(duration / 4), "--seed", "1", "--out", d]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}
    with open(os.path.join(d, "summary.json")) as f:
        s = json.load(f)
    a = s["all"]
    return {"tput": s["throughput"], "p50": a["p50"], "p99": a["p99"]}


def provenance(out):
    """(the cost table the simulated runs used, the commits and the machine of every run), from
    their meta.json files: the table is a comparison of two executors on one machine at one
    commit, and says so."""
    runs = os.path.join(out, "runs")
    version, shas, metas = "unknown", set(), []
    for d in sorted(os.listdir(runs)):
        try:
            with open(os.path.join(runs, d, "meta.json")) as f:
                meta = json.load(f)
        except (OSError, ValueError):
            continue
        git = meta.get("git") or {}
        shas.add(str(git.get("sha", "?"))[:12] + (" (dirty)" if git.get("dirty") is not False else ""))
        metas.append(machines.of_meta(meta))
        if (meta.get("executor") or {}).get("name") == "sim":
            version = f"version {meta['executor'].get('costs_version')}"
    return version, ", ".join(sorted(shas)) or "unknown", machines.one_machine(metas, f"validate-sim {out}")


def err(sim, nat):
    return 100.0 * (sim - nat) / nat if nat else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schedbed", default="build/release/schedbed")
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--policies", default="")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    sb = os.path.abspath(a.schedbed)
    pols = a.policies.split(",") if a.policies else policy_names(sb)
    wls = a.workloads.split(",")
    out = a.out or os.path.join("results", "validate-sim", time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
    os.makedirs(out, exist_ok=True)
    rows, cells = [], []
    load0 = os.getloadavg()[0]
    for wl in wls:
        for pol in pols:
            for threads in (1, 2):
                r = {ex: one(sb, pol, wl, threads, ex, a.duration, out) for ex in ("native", "sim")}
                for ex, v in r.items():
                    rows.append([pol, wl, threads, ex, v.get("tput", ""), v.get("p50", ""), v.get("p99", ""),
                                 v.get("error", "")])
                cells.append((pol, wl, threads, r))
                print(f"{wl:9} {pol:13} {threads}: " + "  ".join(
                    f"{ex} " + (v["error"] if "error" in v else f"{v['tput']:.0f}/s p99 {v['p99'] / 1e3:.0f}us")
                    for ex, v in r.items()), flush=True)
    with open(os.path.join(out, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["policy", "workload", "threads", "executor", "jobs_per_s", "p50_ns", "p99_ns", "error"])
        w.writerows(rows)
    load1 = os.getloadavg()[0]
    version, shas, machine = provenance(out)
    lines = [f"Cost table {version}; commit {shas}; machine: {machine}; load average {load0:.1f} when the runs "
             f"began, {load1:.1f} when they ended (native runs on a shared machine read slow).", "",
             "| workload | policy | workers | native jobs/s | sim jobs/s | err % | native p50 us | sim p50 us | err % | "
             "native p99 us | sim p99 us | err % |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ok_t = ok_p = n = 0
    for pol, wl, threads, r in cells:
        nat, sim = r["native"], r["sim"]
        if "error" in nat or "error" in sim:
            lines.append(f"| {wl} | {pol} | {threads} | failed: {nat.get('error', sim.get('error'))} |||||||||")
            continue
        et, e50, e99 = err(sim["tput"], nat["tput"]), err(sim["p50"], nat["p50"]), err(sim["p99"], nat["p99"])
        n += 1
        ok_t += abs(et) <= 15
        ok_p += abs(e99) <= 25
        lines.append(f"| {wl} | {pol} | {threads} | {nat['tput']:.0f} | {sim['tput']:.0f} | {et:+.0f} | "
                     f"{nat['p50'] / 1e3:.1f} | {sim['p50'] / 1e3:.1f} | {e50:+.0f} | "
                     f"{nat['p99'] / 1e3:.0f} | {sim['p99'] / 1e3:.0f} | {e99:+.0f} |")
    lines.append("")
    lines.append(f"cells: {n}; throughput within 15%: {ok_t}; p99 within 25%: {ok_p}")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"written: {out}/table.md, {out}/runs.csv")


if __name__ == "__main__":
    sys.exit(main())
