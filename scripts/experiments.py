#!/usr/bin/python3
"""experiments.py - the experiments behind PAPER.md: expand, run, collect, plot, compare.

    experiments.py --list
    experiments.py [--out DIR] [--reps N] [--duration S] [--warmup S] [--jobs N] [--update-paper] [EXPERIMENT ...]
    experiments.py --report DIR [--update-paper]
    experiments.py --vs-build OTHER_SCHEDBED [...] EXPERIMENT ...

Every experiment is one sweep description in sweeps/ (sweeps/<experiment>.json): its question,
its configurations (a label, a policy, a workload, settings), how many repetitions, and the
metrics its table shows. The selected descriptions are expanded into one manifest (sweep.py),
run here one run at a time (timing runs), collected into DIR/runs.csv, and each experiment gets
DIR/<experiment>/: its rows (runs.csv), table.md and table.csv (the median over the repetitions
with its 95% bootstrap interval, min and max; orderings only where intervals do not overlap:
sbstats.py) and its figures; a load sweep with slo_classes also gets its capacity table
(capacity.py). Results are then compared with the committed ones under results/paper/
(DIR/vs-paper.md, also printed). --replot redraws results/paper/'s tables and figures from the
runs committed there. Runs refuse a tree with uncommitted changes unless --allow-dirty.

DIR defaults to a new results/reproduce-<time>/: the committed results change only with
--update-paper, which replaces results/paper/<experiment>/ by the new one once everything ran.
--report DIR does the collect, tables, figures and comparison for runs made elsewhere (a Slurm
job array: sweep.py slurm DIR). The run arguments are the descriptions', so the runs are the ones
PAPER.md reports; --duration, --warmup and --reps shorten a trial. A description with "cores": N
(the many-* experiments, the memos' questions asked of 16 cores) runs only where there are at
least N hardware threads: left out of the default set on a smaller machine, refused when named.

--vs-build OTHER runs every run twice, with this tree's schedbed and with OTHER (an earlier
commit's build, say), alternated run by run, and adds DIR/vs-build.md: each figure of this build
next to the other's, DIFFERS where their 95% intervals are apart, and the count: whether a change
moved anything the experiment measures, on one machine at one time.

Run with /usr/bin/python3 (Debian's matplotlib); `make reproduce` builds what is needed first.
"""
import argparse
import os
import sys
import time

import sbdesc
import sbrun
from sbresults import die  # first: it says so in one line when matplotlib is missing

import machines  # noqa: E402
from sbexp import default_experiments, descriptions, too_few_cores  # noqa: E402
from sbexpreport import PAPER, VS, replot, report  # noqa: E402


def other_build(ln):
    """The twin of a manifest line that runs with the other build: experiment NAME@vs."""
    name = ln["tags"]["experiment"]
    return {**ln, "id": name + VS + ln["id"][len(name):], "out": name + VS + ln["out"][len(name):], "build": "vs",
            "tags": {**ln["tags"], "experiment": name + VS}}


def main():
    ap = argparse.ArgumentParser(description="the experiments behind PAPER.md")
    ap.add_argument("experiments", nargs="*")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--schedbed", default="build/release/schedbed")
    ap.add_argument("--reps", type=int, help="repetitions (default: each description's)")
    ap.add_argument("--duration", type=float, help="measurement seconds (default: each description's)")
    ap.add_argument("--warmup", type=float, help="warm-up seconds (default: each description's)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, help="runs at once (default: one, they are timing runs)")
    ap.add_argument("--out", help="where the runs go (default: a new results/reproduce-<time>/)")
    ap.add_argument("--report", metavar="DIR", help="only collect, tabulate, plot and compare the runs in DIR")
    ap.add_argument("--update-paper", action="store_true", help="replace results/paper/<experiment>/ by the new runs")
    ap.add_argument("--replot", action="store_true", help="redraw the tables and figures of results/paper/ from the "
                                                          "result directories committed there")
    ap.add_argument("--noise-reps", type=int, help="runs per seed, to measure the machine's noise (default: each "
                                                   "description's, else 1)")
    ap.add_argument("--vs-build", metavar="SCHEDBED", help="run every run with this other schedbed too, alternated, "
                    "and compare the two builds figure by figure (DIR/vs-build.md)")
    ap.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes (for "
                                                               "development: every result is marked dirty)")
    ap.add_argument(machines.FLAG, dest="allow_mixed", action="store_true", help="put runs of different machines "
                    "into one table or figure (each then says MIXED MACHINES)")
    a = ap.parse_args()
    descs = descriptions()
    if a.list:
        for n, d in descs.items():
            print(f"{n:<12} {d['question']}" + (f" [part of {d['part_of']}: runs only when named]" if "part_of" in d else "")
                  + (f" [needs {d['cores']} hardware threads]" if d.get("cores", 1) > 1 else ""))
        return 0
    bad = [n for n in a.experiments if n not in descs]
    if bad:
        die(f"unknown experiment(s) {', '.join(bad)}; valid: {', '.join(descs)}")
    if a.report:
        report(a.report, a.experiments, descs, a.update_paper, a.allow_mixed)
        return 0
    if a.replot:
        refused = replot(a.experiments or list(descs), descs, a.allow_mixed)
        if refused:
            die(f"not redrawn, runs from two machines: {', '.join(refused)} (the rest was redrawn)", 1)
        return 0
    names = a.experiments or default_experiments(descs)
    short = too_few_cores(descs, names)
    if short:
        die("; ".join(short) + " (its questions are about that many cores: run it on such a machine)")
    left = sorted(set(default_experiments(descs, cores=1 << 20)) - set(names)) if not a.experiments else []
    if left:
        print(f"experiments: left out for want of cores here: {', '.join(left)}", file=sys.stderr)
    out = a.out or os.path.join("results", "reproduce-" + time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
    if os.path.abspath(out).startswith(os.path.abspath(PAPER)):
        die(f"--out {out} is inside {PAPER}: reproduce elsewhere and use --update-paper")
    t0 = time.monotonic()
    opts = {"reps": a.reps, "seed": a.seed, "duration": a.duration, "warmup": a.warmup, "noise_reps": a.noise_reps}
    lines = sbdesc.expand([descs[n] for n in names], opts)
    builds = sbrun.parse_builds([f"vs={a.vs_build}"] if a.vs_build else [])
    if builds:
        lines = [x for ln in lines for x in (ln, other_build(ln))]
    status = sbrun.run_manifest(out, lines, a.schedbed, allow_dirty=a.allow_dirty, jobs=a.jobs, builds=builds,
                                resume=f"scripts/sweep.py run {out} --retry-failed"
                                       + (f" --build vs={builds['vs']}" if builds else ""))
    if status != 0:
        die(f"not every run finished; fix and resume with: scripts/sweep.py run {out} --retry-failed"
            + (f" --build vs={builds['vs']}" if builds else "") + f", then scripts/experiments.py --report {out}", status)
    report(out, names, descs, a.update_paper, a.allow_mixed)
    print(f"experiments: {len(names)} done in {(time.monotonic() - t0) / 60:.1f} min, under {out}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
