#!/usr/bin/python3
"""scale.py - how each policy scales with the workers on this machine: 1, 2, 4 ... up to its
hardware threads, natively, on every workload shape the study uses, beside the oneTBB and OpenMP
peers where they run the same computation.

    scale.py expand --out DIR [--workers 1,2,4,...] [--policies a,b] [--cases a,b] [--peers omp,tbb]
                    [--reps 5] [--duration 0.4] [--warmup 0.1] [--schedbed BIN]
    sweep.py run DIR            (or sweep.py slurm DIR --exclusive: the manifest runner runs the lines)
    scale.py report DIR [--allow-mixed-machines]

Cases (--cases; each a workload at fixed settings, run at every worker count):
  oltp-500, oltp-1000, oltp-1500   open loop, that many transactions/s per worker, 16 clients per
                                   worker (256 at 16 workers); achieved commits/s, per-class p99
  fib, fib-lifo, uts, uts-lifo     forkjoin; -lifo: the stealing family's local_order=lifo (the
                                   others run only the plain case); fib in fib calls/s (the peers
                                   run fib(30), one task per call), uts in tasks/s
  tiny                             tiny one-task jobs, 4 producers, closed loop; jobs/s
  wake                             one client per worker, 1 ms mean gaps: cores used while sparse
  mixed                            8 light and 2 heavy clients (a fixed load): heavy jobs/s, light p99
  stencil                          patterns stencil_1d, width 16, 1024 iterations a task; tasks/s,
                                   beside the peers' own runs of the same graph
Each repetition runs every worker count, case and system, the systems' order rotating per cell.

`report` collects the runs (sweep.py collect: it refuses an unfinished sweep), refuses runs from
two machines unless told (--allow-mixed-machines, then said in every output), and writes
DIR/scale.csv (one row per case, system and worker count: median and 95% interval of the
throughput, the speedup over the system's own 1-worker median, the p99 of each main class, cores
used, the mean wake-up latency, the workers' shares of time in steal sweeps, waiting for the
core's locks and suspended), DIR/scale.md (the tables and the checks), DIR/scale-CASE.png/.pdf (speedup against
workers with the ideal line, throughput, p99 and cores used). The checks are the targets the
study sets itself, judged by the interval rule (scripts/sbstats.py) at the largest worker count.
"""
import argparse
import csv
import os
import sys

import machines
from sbresults import PROG, die, plt, policy_names, save, split_list
from sbstats import median_ci, order
from sbcollect import collect, read_rows
from sbdesc import write_manifest
from sbrun import DEFAULT_SCHEDBED

PEERS = {"omp": "OpenMP tasks", "tbb": "oneTBB"}
FAMILY_LIFO = ("stealing", "hybrid")  # the policies with local_order
PEER_FIB_N = 30
STENCIL = {"pattern": "stencil_1d", "width": 16, "steps": 100, "iterations": 1024, "kernel": "compute_bound"}


def fib_calls(n):
    """Calls of the recursive fib(n) other than the root: a peer's task count for fib(n)."""
    a, b = 1, 1  # calls(0), calls(1), each counting itself
    for _ in range(2, n + 1):
        a, b = b, 1 + a + b
    return (b if n >= 1 else a) - 1


def case_table():
    """name -> (workload, sets per worker count, throughput column, its unit, main classes, peer kind)."""
    def oltp(rate):
        return ("oltp", lambda w: [f"clients={16 * w}", f"rate={rate * w}"], "classes.commit.throughput",
                "commits/s", ["commit", "point", "insert", "begin"], None)
    return {
        "oltp-500": oltp(500), "oltp-1000": oltp(1000), "oltp-1500": oltp(1500),
        "fib": ("forkjoin", lambda w: ["which=fib"], "fib_calls_per_s", "fib calls/s", ["fib"], "fib"),
        "fib-lifo": ("forkjoin", lambda w: ["which=fib", "local_order=lifo"], "fib_calls_per_s", "fib calls/s",
                     ["fib"], None),
        "uts": ("forkjoin", lambda w: ["which=uts"], "tasks_per_s", "tasks/s", ["uts"], None),
        "uts-lifo": ("forkjoin", lambda w: ["which=uts", "local_order=lifo"], "tasks_per_s", "tasks/s", ["uts"], None),
        "tiny": ("tiny", lambda w: [], "throughput", "jobs/s", ["tiny"], None),
        "wake": ("wake", lambda w: [f"clients={w}", "gap_us=1000"], "throughput", "jobs/s", ["from_request", "from_task"],
                 None),
        "mixed": ("mixed", lambda w: [], "classes.heavy.throughput", "heavy jobs/s", ["light", "heavy"], None),
        "stencil": ("patterns", lambda w: [f"{k}={v}" for k, v in STENCIL.items()], "tasks_per_s", "tasks/s",
                    ["stencil_1d"], "stencil"),
    }


CASES = case_table()


def default_workers():
    n = os.cpu_count() or 1
    ws = [1 << k for k in range(n.bit_length()) if 1 << k <= n]
    return ws + ([n] if ws[-1] != n else [])


def systems(a, case):
    workload, _, _, _, _, peer = CASES[case]
    out = [("policy", p) for p in a.pols if not case.endswith("-lifo") or p in FAMILY_LIFO]
    if peer:
        out += [("peer", p) for p in a.peer_list]
    return out


def line(a, case, kind, name, w, rep):
    workload, sets, _, _, _, peer = CASES[case]
    ident = f"scale.{case}.{name}.w{w}.r{rep}"
    tags = {"experiment": "scale", "case": case, "config": f"{case}/{name}", "label": name, "rep": rep, "workers": w,
            "kind": kind, "policy": name if kind == "policy" else "", "workload": workload, "seed": rep,
            "sets": " ".join(sets(w))}
    if kind == "peer":
        if peer == "fib":
            prog, args = f"peers_{name}", ["fib", str(PEER_FIB_N), str(w)]
        else:
            prog = f"patterns_{name}"
            args = ["--threads", str(w), "--reps", "6", "--seed", str(rep)]
            args += [x for k, v in STENCIL.items() for x in (f"--{k}", str(v))]
        return {"id": ident, "out": f"runs/{ident}", "timing": True, "slim": True, "program": prog, "args": args,
                "env": {"OMP_NUM_THREADS": str(w)}, "tags": tags}
    args = ["--policy", name, "--workload", workload, "--threads", str(w), "--seed", str(rep),
            "--duration", f"{a.duration:g}", "--warmup", f"{a.warmup:g}", "--drain", "2"]
    args += [x for s in sets(w) for x in ("--set", s)]
    # an open-loop point past a policy's capacity is a result here (exit 3), as in the load sweep
    return {"id": ident, "out": f"runs/{ident}", "timing": True, "slim": True, "program": "schedbed", "args": args,
            "overload_ok": True, "tags": tags}


def cmd_expand(a):
    a.pols = split_list(a.policies, "--policies") if a.policies else policy_names(a.schedbed)
    known = policy_names(a.schedbed)
    for p in a.pols:
        if p not in known:
            die(f"--policies: unknown policy '{p}'; valid: {', '.join(known)}")
    cases = split_list(a.cases, "--cases") if a.cases else list(CASES)
    for c in cases:
        if c not in CASES:
            die(f"--cases: unknown case '{c}'; valid: {', '.join(CASES)}")
    a.peer_list = list(PEERS) if a.peers is None else split_list(a.peers, "--peers") if a.peers.strip() else []
    for p in a.peer_list:
        if p not in PEERS:
            die(f"--peers: unknown peer '{p}'; valid: {', '.join(PEERS)}")
    try:
        workers = [int(x) for x in split_list(a.workers, "--workers")] if a.workers else default_workers()
    except ValueError:
        die(f"--workers: '{a.workers}' is not a list of worker counts (example: 1,2,4,8,16)")
    if not workers or min(workers) < 1 or max(workers) > 1024:
        die("--workers: counts from 1 to 1024")
    if a.reps < 1 or a.duration <= 0 or a.warmup < 0:
        die("--reps must be at least 1, --duration above 0 and --warmup at least 0")
    lines, turn = [], 0
    for rep in range(1, a.reps + 1):
        for w in workers:
            for c in cases:
                sy = systems(a, c)
                turn += 1
                k = turn % len(sy)
                for kind, name in sy[k:] + sy[:k]:
                    lines.append(line(a, c, kind, name, w, rep))
    write_manifest(a.out, lines)
    est = sum(a.duration + a.warmup + 0.4 if ln["program"] == "schedbed" else 0.5 for ln in lines)
    print(f"{PROG}: {len(lines)} runs ({len(cases)} cases, workers {','.join(map(str, workers))}, {a.reps} "
          f"repetitions) in {a.out}/manifest.jsonl, about {est / 60:.0f} min of runs one at a time; "
          f"next: scripts/sweep.py run {a.out}")


# ---- report ------------------------------------------------------------------------------------

def value(row, case):
    """The case's throughput of one run, or None."""
    col = CASES[case][2]
    if row.get("kind") == "peer":
        ns = row.get("ns_per_task")
        return 1e9 / ns if ns else None
    if col == "fib_calls_per_s":
        done, tasks, n = row.get("reconciliation.jobs_done"), row.get("reconciliation.tasks_created"), 24
        for s in str(row.get("sets", "")).split():
            if s.startswith("n="):
                n = int(s[2:])
        if not done or not tasks or not row.get("tasks_per_s"):
            return None
        return row["tasks_per_s"] * fib_calls(n) / (tasks / done)
    return row.get(col)


def _share(col):
    """A worker time counter of the window as a share of the workers' window time."""
    def f(r):
        v, win, n = r.get(f"counters.window.{col}"), r.get("window_s"), r.get("threads")
        return v / (win * 1e9 * n) if v is not None and win and n else None
    return f


# Why a curve bends, per run (medians per cell): the mean wake-up latency (a waker's claim to the
# sleeper running), the workers' time in steal sweeps, waits for the core's locks, peak memory.
DIAGNOSTICS = {
    "wake_us": lambda r: (r["counters.window.wake_ns"] / r["counters.window.woken"] / 1e3
                          if r.get("counters.window.woken") and r.get("counters.window.wake_ns") is not None else None),
    "sweep_share": _share("sweep_ns"),
    "lock_wait_share": _share("lock_wait_ns"),
    "suspended_share": _share("suspended_ns"),
    "rss_mib": lambda r: r["cpu.peak_rss_kib"] / 1024 if r.get("cpu.peak_rss_kib") else None,  # FIFO's frontier
}


def cells(rows):
    """(case, system, workers) -> rows."""
    out = {}
    for r in rows:
        out.setdefault((r["case"], r["label"], int(r["workers"])), []).append(r)
    return out


def summarise(rows):
    out = []
    by = cells(rows)
    base = {}
    for (case, sysname, w), rs in sorted(by.items(), key=lambda kv: (list(CASES).index(kv[0][0]), kv[0][1], kv[0][2])):
        vals = [v for v in (value(r, case) for r in rs) if v is not None]
        if not vals:
            continue
        med, lo, hi = median_ci(vals)
        if w == 1:
            base[(case, sysname)] = med
        b = base.get((case, sysname))
        row = {"case": case, "system": sysname, "workers": w, "runs": len(vals), "throughput": med, "lo": lo, "hi": hi,
               "unit": CASES[case][3], "speedup": med / b if b else None, "values": vals}
        cores = [r.get("cpu.window_cores") for r in rs if r.get("cpu.window_cores") is not None]
        row["cores"] = median_ci(cores)[0] if cores else None
        for cls in CASES[case][4]:
            p99 = [r.get(f"classes.{cls}.p99") for r in rs if r.get(f"classes.{cls}.p99") is not None]
            row[f"p99_{cls}_us"] = median_ci(p99)[0] / 1e3 if p99 else None
            row[f"p99_{cls}_samples"] = [x / 1e3 for x in p99]
        for key, fn in DIAGNOSTICS.items():
            xs = [x for x in (fn(r) for r in rs) if x is not None]
            row[key] = median_ci(xs)[0] if xs else None
        row["overloaded"] = sum(int(r.get("overloaded") or 0) for r in rs)
        out.append(row)
    return out


def fmt(v, digits=3):
    if v is None:
        return "-"
    elif abs(v) >= 1e6:
        return f"{v / 1e6:.{digits}g}M"
    if abs(v) >= 1e3:
        return f"{v / 1e3:.{digits}g}k"
    return f"{v:.{digits}g}"


def pct(v):
    return "-" if v is None else f"{100 * v:.1f}%"

def find(summary, case, system, w):
    for s in summary:
        if (s["case"], s["system"], s["workers"]) == (case, system, w):
            return s
    return None


def checks(summary, wmax):
    """The targets, each judged by the interval rule at the largest worker count measured:
    (what, verdict, evidence). A target whose cells were not run is 'not run'."""
    out = []

    lifo1, lifom = find(summary, "fib-lifo", "stealing", 1), find(summary, "fib-lifo", "stealing", wmax)
    if lifo1 and lifom and wmax > 1:
        need = min(14.0, 0.875 * wmax)
        lo = lifom["lo"] / lifo1["hi"]
        verdict = "met" if lo >= need else "not met" if lifom["hi"] / lifo1["lo"] < need else "undecided"
        out.append((f"fib, stealing local_order=lifo: at least {need:g}x at {wmax} workers over 1", verdict,
                    f"{lifom['speedup']:.1f}x, {lo:.1f}x to {lifom['hi'] / lifo1['lo']:.1f}x from the intervals"))
    tiny4, tinym = find(summary, "tiny", "stealing", min(4, wmax)), find(summary, "tiny", "stealing", wmax)
    if tiny4 and tinym and wmax > 4:
        o = order(f"{wmax}w", median_ci(tinym["values"]), "4w", median_ci(tiny4["values"]), tinym["runs"], tiny4["runs"])
        out.append((f"tiny, stealing: no lower at {wmax} workers than at 4", "not met" if "<" in o else "met",
                    f"{fmt(tinym['throughput'])} against {fmt(tiny4['throughput'])} jobs/s: {o}"))
    for case in ("oltp-1500", "oltp-1000", "oltp-500"):
        st, se = find(summary, case, "stealing", wmax), find(summary, case, "serial", wmax)
        if st and se and st.get("p99_commit_samples") and se.get("p99_commit_samples"):
            tri = [3 * x for x in se["p99_commit_samples"]]
            o = order("stealing", median_ci(st["p99_commit_samples"]), "3x serial", median_ci(tri), st["runs"],
                      se["runs"])
            verdict = "met" if "<" in o else "not met" if ">" in o else "undecided"
            out.append((f"{case}: stealing's commit p99 within 3x serial's at {wmax} workers", verdict,
                        f"{st['p99_commit_us']:.0f} us against {se['p99_commit_us']:.0f} us: {o}"))
            break
    return out


def draw(summary, case, machine, root):
    rows = [s for s in summary if s["case"] == case]
    if not rows:
        return
    names = sorted({s["system"] for s in rows})
    ws = sorted({s["workers"] for s in rows})
    fig, ax = plt.subplots(2, 2, figsize=(11, 8))
    (sp, tp), (pp, cp) = ax
    main = CASES[case][4][0]
    for n in names:
        rs = sorted((s for s in rows if s["system"] == n), key=lambda s: s["workers"])
        x = [s["workers"] for s in rs]
        line_, = sp.plot(x, [s["speedup"] for s in rs], marker="o", label=n)
        c = line_.get_color()
        tp.errorbar(x, [s["throughput"] for s in rs], yerr=[[s["throughput"] - s["lo"] for s in rs],
                    [s["hi"] - s["throughput"] for s in rs]], marker="o", color=c, capsize=3)
        if any(s.get(f"p99_{main}_us") for s in rs):
            pp.plot(x, [s.get(f"p99_{main}_us") for s in rs], marker="o", color=c)
        if any(s.get("cores") for s in rs):
            cp.plot(x, [s.get("cores") for s in rs], marker="o", color=c)
    for a_ in (sp, cp):
        a_.plot(ws, ws, color="grey", linestyle="--", label="ideal" if a_ is sp else None)
    for a_, title in ((sp, "speedup over its own 1-worker median"), (tp, f"{CASES[case][3]} (median, 95% interval)"),
                      (pp, f"{main} p99 (us)"), (cp, "cores used in the window")):
        a_.set_xscale("log", base=2)
        a_.set_xticks(ws, [str(w) for w in ws])
        a_.set_xlabel("workers")
        a_.set_title(title, fontsize=10)
        a_.grid(True, alpha=0.3)
    sp.set_yscale("log", base=2)
    tp.set_yscale("log")
    pp.set_yscale("log")
    sp.legend(fontsize=8, ncol=2)
    fig.suptitle(f"scale: {case} ({machine})", fontsize=11)
    fig.tight_layout()
    save(fig, root, f"scale-{case}")


def cmd_report(a):
    root = a.dir
    # one machine per table: collect refuses runs of two unless told, and then the name says MIXED
    csv_path, _ = collect(root, allow_mixed=a.allow_mixed_machines)
    rows = [r for r in read_rows(csv_path) if r.get("experiment") == "scale"]
    machine = machines.one_machine(rows, f"scale {root}", a.allow_mixed_machines)
    for r in rows:
        r["label"] = str(r["label"])  # a label like "1" reads back as a number
    summary = summarise(rows)
    if not summary:
        die(f"{root}: no run with a throughput to report")
    wmax = max(s["workers"] for s in summary)
    for s in summary:
        s["machine"] = machine
    fields = ["machine", "case", "system", "workers", "runs", "throughput", "lo", "hi", "unit", "speedup", "cores",
              "overloaded"] + list(DIAGNOSTICS)
    extra = sorted({k for s in summary for k in s if k.startswith("p99_") and k.endswith("_us")})
    with open(os.path.join(root, "scale.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields + extra, extrasaction="ignore", restval="")
        w.writeheader()
        w.writerows(summary)
    md = [f"# Scaling on {machine}", "",
          f"{len(rows)} runs; median over repetitions with its 95% bootstrap interval; speedup over the system's "
          "own 1-worker median; p99 in us; cores: CPU time over the window's wall time.", ""]
    for case in CASES:
        rs = [s for s in summary if s["case"] == case]
        if not rs:
            continue
        main = CASES[case][4][0]
        md += [f"## {case}: {CASES[case][3]}", "", "| system | workers | throughput [95% interval] | speedup | "
               f"{main} p99 us | cores | wake-up us | in sweeps | suspended |", "|---|---|---|---|---|---|---|---|---|"]
        for s in rs:
            ov = f" ({s['overloaded']} overloaded)" if s["overloaded"] else ""
            md.append(f"| {s['system']} | {s['workers']} | {fmt(s['throughput'])} [{fmt(s['lo'])}, {fmt(s['hi'])}]{ov} | "
                      f"{fmt(s['speedup'])} | {fmt(s.get(f'p99_{main}_us'))} | {fmt(s['cores'])} | {fmt(s['wake_us'])} | "
                      f"{pct(s['sweep_share'])} | {pct(s['suspended_share'])} |")
        md.append("")
        draw(summary, case, machine, root)
    chk = checks(summary, wmax)
    md += ["## Targets at the largest worker count", ""]
    md += [f"- {what}: **{verdict}** ({ev})" for what, verdict, ev in chk] or ["- none of the targets' cells ran"]
    with open(os.path.join(root, "scale.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


def main():
    ap = argparse.ArgumentParser(prog="scale.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("expand", help="write the sweep's manifest")
    e.add_argument("--out", required=True)
    e.add_argument("--workers", help="worker counts, e.g. 1,2,4,8,16 (default: powers of two up to this machine's "
                   "hardware threads, and their count)")
    e.add_argument("--policies")
    e.add_argument("--cases", help=f"default: all of {','.join(CASES)}")
    e.add_argument("--peers", help="omp,tbb (default both; '' for none)")
    e.add_argument("--reps", type=int, default=5)
    e.add_argument("--duration", type=float, default=0.4)
    e.add_argument("--warmup", type=float, default=0.1)
    e.add_argument("--schedbed", default=DEFAULT_SCHEDBED)
    r = sub.add_parser("report", help="tables, checks and figures of a finished sweep")
    r.add_argument("dir")
    r.add_argument("--allow-mixed-machines", action="store_true")
    a = ap.parse_args()
    if a.cmd == "expand":
        if not os.path.exists(a.schedbed):
            die(f"{a.schedbed} not found: make schedbed first")
        cmd_expand(a)
    else:
        cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
