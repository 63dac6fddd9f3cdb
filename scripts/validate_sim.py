#!/usr/bin/python3
"""validate_sim.py - the simulator against this machine, as a manifest of the sweep runner.

    validate_sim.py expand --out DIR [--threads 1,2,..] [--policies a,b] [--cells a,b] [--reps N]
                           [--duration S] [--warmup S] [--seed N] [--executors native,sim] [--sim-costs FILE]
                           [--sim-cores N] [--probes]
    validate_sim.py run [expand's options] [--jobs N] [--allow-dirty] [--retry-failed] [--native DIR2] [--speed S]
    validate_sim.py report DIR [--native DIR2[,DIR3..]|RUNS.csv[.xz]] [--partial] [--sim-seeds N] [--out DIR]
                           [--speed slow|fast]
                           (run: make validate-sim)

The cells are sweeps/validate/sim.json: each workload configuration (oltp closed and open loop
at three rates per worker, forkjoin with the own queue FIFO and LIFO, tiny, wake, mixed,
patterns) under every policy (a cell that "needs" a parameter, every policy that has it), at
each worker count (default: the powers of two up to this machine's hardware threads), REPS
seeds, once natively and once under `--executor sim` with the same seed. `expand` writes
DIR/manifest.jsonl: the native runs first (timing runs, one at a time), then the simulated ones
(deterministic, any number at once), each sim line naming the cost table of the machine that
expands it, so the simulated half can run anywhere (`sweep.py run`, `sweep.py slurm`) and
gives the same numbers. `run` is expand, the sweep runner (sbrun.run_dir), collect and report,
sampling the load average meanwhile (DIR/load.json): a native run on a busy machine reads slow.

`report` writes DIR/table.md and DIR/cells.csv (the medians per cell, compact enough to commit):
per workload cell and worker count the simulator's error (signed, percent; positive: the
simulator says more) of throughput, p50, p99, cores used and steals per job (medians over the
seeds, then the median over policies of each error's size), the cells within target
(throughput 15%, p99 25%), then every cell, and oltp's p99 per job class. --native takes the
native half from other validation directories (a second simulated half against the same
native runs: a model change compared on equal terms; or a native half made in two calls of a
lent machine, several directories, comma-separated, one machine; or a committed runs.csv[.xz],
whose native rows are taken). DIR itself may be a committed runs.csv[.xz]?COLUMN=VALUE (its rows
with that value, e.g. one simulated half of several: table=over), reported into --out; --sim-seeds
N keeps the simulated runs of the first N seeds, to compare halves made with different counts on
equal terms. --sim-cores N gives the simulated runs N cores that every thread
shares (schedbed's --sim-cores), as the native machine's threads share its cores.

--probes puts machines.py's cross-thread probe (0.1 s of jobs) before the first native run and after
each: a host that places its vCPUs near or far, a placement that can change from one second to
the next, has two speeds, and a native run's figures are those of the speed it had. The report
then says how many native runs had the fast host, the slow one, or a change between their two
probes, and --speed slow|fast compares the simulated half against the native runs of that speed
alone (the table the simulated half charged, calibrated at that speed: calibrate.py --speed).
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import machines
import sbdesc
import sbrun
from sbcli import die, split_list
from sbvalidate import (METRICS, OLTP_CLASSES, err, fmt_err, load_rows, load_summary, medians, native_speeds,
                        table_speed_line, with_probes)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DESC = os.path.join(ROOT, "sweeps", "validate", "sim.json")


def program_facts(sb):
    """(policies, {policy: its parameter names}, this machine's name) from the program itself."""
    def ask(*args):
        p = subprocess.run([sb, "list", *args], capture_output=True, text=True)
        if p.returncode:
            die(f"{sb} list {' '.join(args)} failed: {p.stderr.strip()}")
        return p.stdout
    params = {}
    for line in ask("--params").splitlines():
        scope, name = line.split("\t")[:2]
        if scope.startswith("policy:"):
            params.setdefault(scope[7:], set()).add(name)
    return ask("--policies").split(), params, ask("--machine").strip()


def powers_of_two(n):
    out, t = [], 1
    while t <= n:
        out.append(t)
        t *= 2
    return out


def expand(a):
    with open(DESC) as f:
        desc = json.load(f)
    pols, params, machine = program_facts(a.schedbed)
    if a.policies:
        bad = [p for p in split_list(a.policies, "--policies") if p not in pols]
        if bad:
            die(f"--policies: unknown policy {bad[0]}; valid policies are: {', '.join(pols)}")
        pols = split_list(a.policies, "--policies")
    cells = desc["cells"]
    if a.cells:
        names = [c["name"] for c in cells]
        want = split_list(a.cells, "--cells")
        bad = [c for c in want if c not in names]
        if bad:
            die(f"--cells: unknown cell {bad[0]}; valid cells are: {', '.join(names)}")
        cells = [c for c in cells if c["name"] in want]
    try:
        threads = [int(t) for t in split_list(a.threads, "--threads")] if a.threads else powers_of_two(os.cpu_count())
    except ValueError:
        die(f"--threads {a.threads}: give worker counts such as 1,2,4")
    if any(t < 1 for t in threads):
        die("--threads: worker counts start at 1")
    execs = split_list(a.executors, "--executors")
    if any(e not in ("native", "sim") for e in execs):
        die(f"--executors {a.executors}: valid executors are: native, sim")
    costs = a.sim_costs or os.path.join("sim", f"costs-{machine}.txt")
    if "sim" in execs and not os.path.exists(os.path.join(ROOT, costs) if not os.path.isabs(costs) else costs):
        die(f"no cost table {costs} for the simulated runs: measure this machine's with `make calibrate`, "
            "or name one with --sim-costs FILE")
    o = {"reps": a.reps or desc.get("reps", 3), "noise_reps": None, "seed": a.seed,
         "duration": a.duration or desc.get("duration"), "warmup": a.warmup if a.warmup is not None else desc.get("warmup")}
    if a.sim_cores is not None and a.sim_cores < 1:
        die(f"--sim-cores {a.sim_cores}: give the simulated machine's core count, 1 or more")
    if o["reps"] < 3:
        die(f"--reps {o['reps']}: a cell needs at least 3 seeds")
    lines = []
    for ex in execs:
        configs, tags = [], []
        for c in cells:
            for t in threads:
                for p in pols:
                    if c.get("needs") and c["needs"] not in params.get(p, ()):
                        continue
                    sets = list(c.get("set", []))
                    if "rate_per_worker" in c:
                        sets.append(f"rate={c['rate_per_worker'] * t:g}")
                    args = ["--threads", str(t)]
                    if ex == "sim":
                        args += ["--executor", "sim", "--sim-costs", costs] + \
                            (["--sim-cores", str(a.sim_cores)] if a.sim_cores else [])
                    configs.append({"label": f"{c['name']} {p} {t}w {ex}", "policy": p, "workload": c["workload"],
                                    "set": sets, "args": args})
                    tags.append({"cell": c["name"], "threads": t, "executor": ex})
        d = {"name": ex, "configs": configs, "timing": ex == "native"}
        for ln in sbdesc.expand_configs(d, o):
            ln["tags"].update(tags[ln["tags"]["config"]])
            ln["overload_ok"] = True  # an open-loop rate past a policy's capacity is a result too
            lines.append(ln)
    if a.probes:
        lines = with_probes(lines)
    path = sbdesc.write_manifest(a.out, lines)
    print(f"validate_sim: {len(lines)} runs ({', '.join(execs)}; {len(pols)} policies, {len(cells)} cells, "
          f"workers {','.join(map(str, threads))}, {o['reps']} seeds) in {path}", file=sys.stderr)
    return lines


def sample_load(out, stop):
    """The one-minute load average every 5 s while the runs go: what the native half ran beside."""
    samples = []
    t0 = time.time()
    while True:
        samples.append([round(time.time() - t0, 1), os.getloadavg()[0]])
        with open(os.path.join(out, "load.json.tmp"), "w") as f:
            json.dump({"samples": samples, "cpus": os.cpu_count()}, f)
        os.replace(os.path.join(out, "load.json.tmp"), os.path.join(out, "load.json"))
        if stop.wait(5):
            return


def run(a):
    expand(a)
    stop = threading.Event()
    th = threading.Thread(target=sample_load, args=(a.out, stop), daemon=True)
    th.start()
    # --jobs widens the simulated half only: the native half's timing runs stay one at a time
    rc = sbrun.run_dir(a.out, a.schedbed, width=a.jobs or 0, retry_failed=a.retry_failed, allow_dirty=a.allow_dirty,
                       resume=f"validate_sim.py run --out {a.out} --retry-failed (with the same options)")
    stop.set()
    th.join()
    if rc:
        return rc
    return report(a.out, a.native, speed=a.speed)


def speedup_lines(med, cells, target):
    """The fork-join speedup curves: per cell and policy, throughput at t workers over throughput
    at 1, natively and simulated, and the simulator's error on it (the shape of the curve,
    whatever the error of the 1-worker point)."""
    out = ["", "## Fork-join speedup over 1 worker (native / simulated, error %)", "",
           "| cell | policy | " + " | ".join(f"{t}w" for t in sorted({k[3] for k in med if k[3] > 1})) + " | within |",
           "|---|---|" + "---|" * (len({k[3] for k in med if k[3] > 1}) + 1)]
    threads = sorted({k[3] for k in med if k[3] > 1})
    ok = n = 0
    for c in cells:
        for p in sorted({k[2] for k in med if k[1] == c}):
            base = [med.get((ex, c, p, 1), {}).get("throughput") for ex in ("native", "sim")]
            if not all(base):
                continue
            row, inside = [], 0
            for t in threads:
                nat, sim = (med.get((ex, c, p, t), {}).get("throughput") for ex in ("native", "sim"))
                if nat is None or sim is None:
                    row.append("-")
                    continue
                sn, ss = nat / base[0], sim / base[1]
                e = err(ss, sn)
                inside += abs(e) <= target
                n += 1
                row.append(f"{sn:.1f} / {ss:.1f} ({fmt_err(e)})")
            ok += inside
            out.append(f"| {c} | {p} | " + " | ".join(row) + f" | {inside}/{sum(1 for x in row if x != '-')} |")
    out.append(f"\nfork-join speedup points within {target}%: {ok} of {n}")
    return out


def report(d, native_dir, partial=False, sim_seeds=None, out=None, speed=None):
    with open(DESC) as f:
        desc = json.load(f)
    tt, tp = desc["targets"]["throughput"], desc["targets"]["p99"]
    out = out or d
    if not os.path.isdir(out):
        die(f"{out}: not a directory to write the report into" + (" (give --out DIR)" if out == d else ""))
    rows = load_rows(d, partial)
    natives = split_list(native_dir, "--native") if native_dir else []
    if natives:
        rows = [r for r in rows if r["executor"] == "sim"] + [r for nd in natives for r in load_rows(nd, partial)
                                                               if r["executor"] in ("native", "probe")]
    rows, split, probes = native_speeds(rows)
    nat = [r for r in rows if r["executor"] == "native"]
    counts = {k: sum(1 for r in nat if r.get("speed") == k) for k in ("fast", "slow", "between")}
    if speed:
        if split is None:
            die(f"--speed {speed}: " + ("the host had one speed in this validation's probes"
                                        if probes else "the native runs had no probes (validate_sim.py expand --probes)"))
        rows = [r for r in rows if r["executor"] != "native" or r.get("speed") == speed]
    speed_line = ("" if not probes else
                  "Host speed (a cross-thread probe beside every native run, scripts/machines.py): "
                  + (f"one speed, {probes[0] / 1e6:.2f}M to {probes[-1] / 1e6:.2f}M jobs/s." if split is None else
                     f"two, split at {split / 1e6:.2f}M jobs/s (probes {probes[0] / 1e6:.2f}M to {probes[-1] / 1e6:.2f}M); "
                     f"native runs with the fast host {counts['fast']}, the slow one {counts['slow']}, a change "
                     f"between their probes {counts['between']}; "
                     + (f"compared: the {speed} runs alone." if speed else "compared: all of them.")))
    mismatch = table_speed_line(rows, counts, speed)
    if mismatch:
        speed_line += " " + mismatch
        print(f"validate_sim: {mismatch}", file=sys.stderr)
    if sim_seeds:
        seeds = sorted({int(float(r["seed"])) for r in rows if r["executor"] == "sim"})[:sim_seeds]
        rows = [r for r in rows if r["executor"] != "sim" or int(float(r["seed"])) in seeds]
    med = medians(rows)
    cells = sorted({(c, p, t) for (ex, c, p, t) in med if ex == "sim" and ("native", c, p, t) in med},
                   key=lambda k: ([x["name"] for x in desc["cells"]].index(k[0]), k[2], k[1]))
    if not cells:
        die(f"{d}: no cell has both a native and a simulated run")
    metas = [r for r in rows if r["executor"] == "sim"][:1]
    costs = metas[0]["args"].split("--sim-costs ")[1].split()[0] if metas else "?"
    shared = metas[0]["args"].split("--sim-cores ")[1].split()[0] if metas and "--sim-cores " in metas[0]["args"] else None
    shas = sorted({r["git_sha"] for r in rows})
    machine = machines.one_machine([r for r in rows if r["executor"] == "native"], f"validate-sim {d}")
    seeds = sorted({m["seeds"] for m in med.values()})
    lines = [f"# Simulator validation: {d}" + (" (partial: unfinished runs left out)" if partial else ""), "",
             f"Native runs on {machine}; cost table {costs}; "
             f"{f'{shared} simulated cores shared by every thread' if shared else 'a simulated core per thread'}; commits {', '.join(shas)}; native runs: "
             f"{'; '.join(load_summary(nd) for nd in natives or [d])}.",
             f"Errors are the simulator's, signed, in percent of the native figure (median over "
             f"{'-'.join(map(str, seeds[::max(1, len(seeds) - 1)]))} seeds per cell); a cell is within target at "
             f"|throughput| <= {tt}% and |p99| <= {tp}%.", *([speed_line] if speed_line else []), "",
             "## Per workload and worker count", "",
             "| cell | workers | policies | throughput within | p99 within | median abs err: throughput | p50 | p99 "
             "| cores | steals | worker preemptions |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    per_cell = []
    for c, p, t in cells:
        nat, sim = med[("native", c, p, t)], med[("sim", c, p, t)]
        e = {name: err(sim.get(col), nat.get(col)) for name, col, _ in METRICS}
        per_cell.append((c, p, t, nat, sim, e))
    groups = {}
    for c, p, t, nat, sim, e in per_cell:
        groups.setdefault((c, t), []).append(e)
    for (c, t), es in groups.items():
        ok_t = sum(1 for e in es if e["throughput"] is not None and abs(e["throughput"]) <= tt)
        ok_p = sum(1 for e in es if e["p99"] is not None and abs(e["p99"]) <= tp)
        med_abs = []
        for name, _, _ in METRICS:
            v = [abs(e[name]) for e in es if e[name] is not None]
            med_abs.append(f"{statistics.median(v):.0f}%" if v else "-")
        lines.append(f"| {c} | {t} | {len(es)} | {ok_t}/{len(es)} | {ok_p}/{len(es)} | " + " | ".join(med_abs) + " |")

    def spread(vals):
        v = sorted(x for x in vals if x is not None)
        return f"{v[0]:+.0f} / {statistics.median(v):+.0f} / {v[-1]:+.0f} %" if v else "-"
    lines += ["", "## Per workload cell, all worker counts (errors min / median / max)", "",
              "| cell | cells | throughput within | throughput error | p99 within | p99 error |",
              "|---|---|---|---|---|---|"]
    names = list(dict.fromkeys(c for c, _, _, _, _, _ in per_cell))
    for c in names + ["all"]:
        es = [e for cc, _, _, _, _, e in per_cell if c in (cc, "all")]
        n = len(es)
        a = sum(1 for e in es if e["throughput"] is not None and abs(e["throughput"]) <= tt)
        b = sum(1 for e in es if e["p99"] is not None and abs(e["p99"]) <= tp)
        lines.append(f"| {c} | {n} | {a} ({100 * a / n:.0f}%) | {spread(e['throughput'] for e in es)} "
                     f"| {b} ({100 * b / n:.0f}%) | {spread(e['p99'] for e in es)} |")
    lines += speedup_lines(med, [x["name"] for x in desc["cells"] if x["workload"] == "forkjoin"], tt)
    lines += ["", "## Every cell (native / simulated, error %)", "",
              "| cell | policy | workers | jobs/s | err | p50 µs | err | p99 µs | err | cores | err | steals/job | err "
              "| worker preemptions/s | err |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    compact = []
    for c, p, t, nat, sim, e in per_cell:
        f = []
        for name, col, _ in METRICS:
            n, s = nat.get(col), sim.get(col)
            scale = 1e3 if name in ("p50", "p99") else 1
            prec = ".2f" if name in ("cores", "steals") else ".0f" if name == "throughput" else ".1f"
            f.append("-" if n is None else f"{n / scale:{prec}} / {s / scale:{prec}}" if s is not None else "-")
            f.append(fmt_err(e[name]))
        flag = " (overloaded runs: native %d, sim %d)" % (nat["overloaded"], sim["overloaded"]) \
            if nat["overloaded"] or sim["overloaded"] else ""
        lines.append(f"| {c} | {p}{flag} | {t} | " + " | ".join(f) + " |")
        compact.append({"cell": c, "policy": p, "threads": t, "seeds": nat["seeds"],
                        **{f"native_{k}": nat.get(col) for k, col, _ in METRICS},
                        **{f"sim_{k}": sim.get(col) for k, col, _ in METRICS},
                        **{f"err_{k}": e[k] for k, _, _ in METRICS}})
    lines += ["", "## oltp: p99 per job class, error %", "", "| cell | policy | workers | " +
              " | ".join(OLTP_CLASSES) + " |", "|---|---|---|" + "---|" * len(OLTP_CLASSES)]
    ok = n = 0
    for c, p, t, nat, sim, _ in per_cell:
        if not any(x["name"] == c and x.get("classes") for x in desc["cells"]):
            continue
        es = [err(sim.get(f"classes.{k}.p99"), nat.get(f"classes.{k}.p99")) for k in OLTP_CLASSES]
        n += sum(1 for x in es if x is not None)
        ok += sum(1 for x in es if x is not None and abs(x) <= tp)
        lines.append(f"| {c} | {p} | {t} | " + " | ".join(fmt_err(x) for x in es) + " |")
    lines.append(f"\noltp class p99 within {tp}%: {ok} of {n}")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "cells.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(compact[0]))
        w.writeheader()
        for r in compact:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    cut = lines.index("## Every cell (native / simulated, error %)")
    print("\n".join(lines[:cut]))
    print(f"validate_sim: {out}/table.md (every cell, oltp's classes), {out}/cells.csv")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("expand", "run"):
        p = sub.add_parser(name)
        p.add_argument("--out", default=None)
        p.add_argument("--schedbed", default=os.path.join(ROOT, "build", "release", "schedbed"))
        p.add_argument("--threads", help="worker counts (default: powers of two up to the hardware threads)")
        p.add_argument("--policies", help="default: every registered policy")
        p.add_argument("--cells", help="default: every cell of sweeps/validate/sim.json")
        p.add_argument("--reps", type=int, help="seeds per cell (at least 3; default: the description's)")
        p.add_argument("--duration", type=float)
        p.add_argument("--warmup", type=float)
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--executors", default="native,sim")
        p.add_argument("--sim-costs", help="default: sim/costs-MACHINE.txt of the machine that expands")
        p.add_argument("--sim-cores", type=int, help="simulated cores every thread shares (default: a core per thread)")
        p.add_argument("--probes", action="store_true",
                       help="a cross-thread probe beside every native run: which speed the host had (see --speed)")
        if name == "run":
            p.add_argument("--jobs", type=int, help="runs at once for the simulated half; the native runs (timing runs) stay one at a time")
            p.add_argument("--allow-dirty", action="store_true", help="run from a changed tree, every result marked")
            p.add_argument("--retry-failed", action="store_true", help="rerun the runs that failed or were cut off")
            p.add_argument("--native", help="report against this directory's (or runs.csv[.xz]'s) native runs "
                           "(with --executors sim)")
    r = sub.add_parser("report")
    for p in (sub.choices["run"], r):
        p.add_argument("--speed", choices=("slow", "fast"),
                       help="compare against the native runs that had this host speed alone (needs --probes)")
    r.add_argument("dir")
    r.add_argument("--native", help="take the native runs from these validation directories, or a committed "
                   "runs.csv[.xz] (comma-separated)")
    r.add_argument("--partial", action="store_true", help="the finished runs alone (collect refuses an unfinished sweep)")
    r.add_argument("--sim-seeds", type=int, help="the simulated runs of the first N seeds only")
    r.add_argument("--out", help="where table.md and cells.csv go (default: DIR; required when DIR is a file)")
    a = ap.parse_args()
    if a.cmd == "report":
        if a.sim_seeds is not None and a.sim_seeds < 1:
            die(f"--sim-seeds {a.sim_seeds}: keep 1 or more seeds")
        return report(a.dir, a.native, a.partial, a.sim_seeds, a.out, a.speed)
    if a.cmd == "run" and a.speed and not (a.probes or a.native):
        die(f"--speed {a.speed}: the native runs need --probes (or --native a validation made with them)")
    a.schedbed = os.path.abspath(a.schedbed)
    if not a.out:
        machine = program_facts(a.schedbed)[2]
        a.out = os.path.join(ROOT, "results", "validate-sim", f"{machine}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    return run(a) if a.cmd == "run" else (expand(a) and 0)


if __name__ == "__main__":
    sys.exit(main())
