#!/usr/bin/python3
"""sweep.py - p99 latency against offered load, one curve per policy.

    sweep.py --workload W --param NAME --rates r1,r2,... [--policies a,b] [--reps N] --out DIR [-- RUN ARGS]
    sweep.py --plot DIR

For each open-loop arrival rate, runs `schedbed run` with `--set NAME=rate` under every policy,
alternating the order from one rate to the next (A B C, then C B A) so that the machine's drift
does not favour one policy, one progress line per run. NAME is the workload's own open-loop
rate parameter, given on the command line: the script knows no workload's parameters. Runs go
to DIR/<policy>/rate-<r>-r<k>/; DIR/sweep.csv holds one row per run and DIR/sweep_p99.png/.pdf
the figure: p99 latency (median over reps, min..max bars) and achieved job throughput against
the offered rate (in the parameter's own unit). A run that fails (a stall at overload, say) is reported and left out.
"""
import argparse
import csv
import glob
import os

from sbresults import (np, Runner, die, load_json, parse_with_passthrough, plt, policy_names, save, split_list)


def do_runs(a, extra):
    policies = split_list(a.policies, "--policies") if a.policies else policy_names(a.schedbed)
    try:
        rates = [float(r) for r in split_list(a.rates, "--rates")]
    except ValueError:
        die(f"--rates: '{a.rates}' is not a comma-separated list of numbers")
    if any(r < 0 for r in rates):
        die("--rates: rates cannot be negative")
    if os.path.exists(a.out) and os.listdir(a.out):
        die(f"{a.out} exists and is not empty; give a new directory")
    base = ["--workload", a.workload, "--seed", str(a.seed)] + (["--threads", str(a.threads)] if a.threads else [])
    runner = Runner(a.schedbed, len(rates) * len(policies) * a.reps)
    for i, rate in enumerate(rates):
        order = policies if i % 2 == 0 else policies[::-1]
        text = f"{rate:g}"
        for k in range(1, a.reps + 1):
            for p in order:
                runner.run(f"{a.param}={text:<8} {p:<14} rep {k}/{a.reps}",
                           base + ["--policy", p, "--set", f"{a.param}={text}"] + extra,
                           os.path.join(a.out, p, f"rate-{text}-r{k}"))
    runner.report()


def collect(root, param, cls):
    rows = []
    for path in sorted(glob.glob(os.path.join(root, "*", "rate-*", "summary.json"))):
        s = load_json(path)
        if s.get("failure") or not s["reconciliation"]["ok"]:
            continue
        meta = load_json(os.path.join(os.path.dirname(path), "meta.json"))
        name = param.split(".")[-1]
        rate = meta["workload"]["params"].get(name)
        if rate is None:
            die(f"{path}: the workload has no parameter '{name}'")
        lat = s["all"] if cls == "all" else s["classes"].get(cls)
        if lat is None:
            continue
        rows.append({"policy": s["policy"], "rate": float(rate), "throughput": s["throughput"],
                     "p50_us": lat["p50"] / 1e3, "p99_us": lat["p99"] / 1e3, "p999_us": lat["p999"] / 1e3,
                     "workload": s["workload"], "threads": s["threads"], "run_id": s["run_id"]})
    if not rows:
        die(f"{root}: no successful sweep runs below it")
    return rows


def plot(root, param, cls):
    rows = collect(root, param, cls)
    with open(os.path.join(root, "sweep.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.6))
    for i, p in enumerate(policies):
        mine = [r for r in rows if r["policy"] == p]
        rates = sorted({r["rate"] for r in mine})
        for ax, key in ((a1, "p99_us"), (a2, "throughput")):
            v = [np.array([r[key] for r in mine if r["rate"] == x]) for x in rates]
            med = np.array([np.median(x) for x in v])
            err = [med - np.array([x.min() for x in v]), np.array([x.max() for x in v]) - med]
            ax.errorbar(rates, med, yerr=err, marker="o", ms=4, capsize=3, label=p, color=plt.cm.tab10(i % 10))
    a1.set_yscale("log")
    a1.set_ylabel(f"p99 latency of {'all jobs' if cls == 'all' else 'class ' + cls} (µs, log scale)")
    a2.set_ylabel("achieved throughput (jobs/s)")
    for ax in (a1, a2):
        ax.set_xlabel(f"offered load: workload parameter {param}")
        ax.legend(title="policy")
    a1.set_title("p99 latency against offered load")
    a2.set_title("throughput against offered load")
    first = rows[0]
    fig.suptitle(f"{first['workload']}: open-loop sweep over {param}, {first['threads']} workers")
    fig.tight_layout()
    print(save(fig, root, "sweep_p99"))
    print(os.path.join(root, "sweep.csv"))


def main():
    ap = argparse.ArgumentParser(description="p99 latency against offered load, per policy.",
                                 epilog="Arguments after -- go to every schedbed run, e.g. -- --duration 3")
    ap.add_argument("--schedbed", default="build/release/schedbed", help="the program (default %(default)s)")
    ap.add_argument("--workload", help="workload to run")
    ap.add_argument("--param", help="the workload's open-loop arrival rate parameter (e.g. workload.rate)")
    ap.add_argument("--rates", help="comma-separated values of that parameter")
    ap.add_argument("--policies", help="comma-separated policies (default: every registered one)")
    ap.add_argument("--reps", type=int, default=1, help="runs per policy and rate (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="one seed for every run (default %(default)s)")
    ap.add_argument("--threads", type=int, help="worker threads")
    ap.add_argument("--class", dest="cls", default="all", help="job class whose p99 is plotted (default: all jobs)")
    ap.add_argument("--out", help="directory for the runs and the figure (new or empty)")
    ap.add_argument("--plot", metavar="DIR", help="only plot the runs already in DIR")
    a, extra = parse_with_passthrough(ap)
    if a.plot:
        if not a.param:
            die("--plot needs --param (the parameter the sweep varied)")
        plot(a.plot, a.param, a.cls)
        return
    missing = [o for o in ("workload", "param", "rates", "out") if not getattr(a, o)]
    if missing:
        die("missing " + ", ".join("--" + m for m in missing) + " (see --help)")
    if a.reps < 1:
        die("--reps must be at least 1")
    do_runs(a, extra)
    plot(a.out, a.param, a.cls)


if __name__ == "__main__":
    main()
