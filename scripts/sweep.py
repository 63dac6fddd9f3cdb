#!/usr/bin/python3
"""sweep.py - sweeps as manifests: expand, run (here or as a Slurm job array), collect.

    sweep.py expand DESC.json [...] --out DIR [--reps N] [--duration S] [--warmup S] [--seed N]
    sweep.py run DIR [--schedbed BIN] [--jobs N] [--retry-failed]
    sweep.py slurm DIR [--schedbed BIN] [--partition P] [--time T] [--cpus-per-task N] [--exclusive]
                       [--max-parallel K] [--wait] [--retry-failed] [--python PY] [--sbatch-arg ARG ...]
    sweep.py status DIR
    sweep.py collect DIR [--csv FILE]
    sweep.py load --workload W --param NAME --rates r1,r2,.. [--policies a,b] [--reps N] --out DIR [-- RUN ARGS]
    sweep.py plot-load DIR [--class C]

A sweep description (sweeps/*.json, one per experiment of PAPER.md) is a grid of runs: either a
list of configurations (a label, a policy, a workload, --set values, extra arguments) repeated
REPS times, alternating A B C A B C so that the machine's drift hits all of them alike, or an
open-loop load sweep (policies x rates of one workload parameter). `expand` turns descriptions
into DIR/manifest.jsonl: one JSON line per run with a stable id, the full argument list of the
program it runs, its output directory relative to DIR and its tags (experiment, configuration,
repetition, ...). Nothing in it depends on the machine: the program's path is given when the
manifest is run.

`run` runs the lines here: one at a time when they are timing runs (the default for native
runs: two runs side by side on a small machine measure each other), up to --jobs (default: all
cores) when the description says "timing": false. `slurm` writes DIR/slurm/batch.sh and submits
the same lines as one job array, `sbatch --array=<lines>%K`, where the array task id is the
manifest line; each task runs `sweep.py task`, the very code the local runner uses. Both runners
record each line's state in DIR/status/<id>.json (running, done or failed, with the exit status,
the last message and the host) and its output in DIR/logs/<id>.log, so both are resumable: a line
is finished only when its status says done *and* its result directory is complete (schedbed
renames a finished result directory into place, so a complete one has summary.json and meta.json
that parse, no recorded failure and reconciled counts); failed lines are rerun only with
--retry-failed. `collect` merges the result directories into one CSV (DIR/runs.csv: one row per
run, its tags and every number of its summary.json) and refuses, naming them, when any line is
missing, failed, killed or half-written. Plots read that CSV.

Run with /usr/bin/python3 (Debian's matplotlib and numpy).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machines  # noqa: E402
from sbcli import PROG, die, split_list  # noqa: E402
from sbcollect import collect, plot_load  # noqa: E402
from sbdesc import expand, expand_load, load_description, read_manifest, write_manifest  # noqa: E402
from sbrun import DEFAULT_SCHEDBED, cmd_run, cmd_task, report_status, run_manifest  # noqa: E402
from sbslurm import cmd_slurm  # noqa: E402


def cmd_load(a, extra):
    missing = [o for o in ("workload", "param", "rates", "out") if not getattr(a, o)]
    if missing:
        die("missing " + ", ".join("--" + m for m in missing) + " (see sweep.py load --help)")
    if a.reps < 1:
        die("--reps must be at least 1")
    try:
        rates = [float(r) for r in split_list(a.rates, "--rates")]
    except ValueError:
        die(f"--rates: '{a.rates}' is not a comma-separated list of numbers")
    if any(r < 0 for r in rates):
        die("--rates: rates cannot be negative")
    if os.path.exists(a.out) and os.listdir(a.out):
        die(f"{a.out} exists and is not empty; give a new directory")
    if a.policies:
        policies = split_list(a.policies, "--policies")
    else:
        from sbresults import policy_names
        policies = policy_names(a.schedbed)
    # "bounded": the run length is whatever follows -- (make sweep passes --duration 3)
    desc = {"name": "load", "load": {"workload": a.workload, "param": a.param, "rates": rates, "policies": policies},
            "common": ["--threads", str(a.threads)] if a.threads else [], "args": extra, "bounded": True,
            "slim": False}
    lines = expand_load(desc, {"reps": a.reps, "seed": a.seed, "duration": None, "warmup": None})
    if run_manifest(a.out, lines, a.schedbed, allow_dirty=a.allow_dirty, jobs=a.jobs) == 130:
        return 130
    # a run past saturation may fail (an overload): the curve shows the others, the failures are named
    path, _ = collect(a.out, leave_out_failed=True)
    print(plot_load(a.out, path, a.cls))
    print(path)
    return 0


# ---- command line -----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description="Sweeps as manifests: expand, run here or on Slurm, collect.")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    e = sub.add_parser("expand", help="descriptions -> DIR/manifest.jsonl")
    e.add_argument("descriptions", nargs="+", metavar="DESC.json")
    e.add_argument("--out", required=True, help="the sweep directory")
    e.add_argument("--reps", type=int, help="repetitions (default: each description's own)")
    e.add_argument("--duration", type=float, help="measurement seconds (default: each description's own)")
    e.add_argument("--warmup", type=float, help="warm-up seconds (default: each description's own)")
    e.add_argument("--seed", type=int, default=1, help="base seed: repetition k runs with seed + k - 1 (default %(default)s)")
    e.add_argument("--noise-reps", type=int, help="runs of each repetition with its same seed, to measure the "
                                                   "machine's noise (default: each description's own, else 1)")
    for name, hlp in (("run", "run the manifest here"), ("slurm", "submit the manifest as a Slurm job array"),
                      ("task", "run one line (what an array task runs)")):
        p = sub.add_parser(name, help=hlp)
        p.add_argument("dir")
        p.add_argument("--schedbed", default=DEFAULT_SCHEDBED, help="the program (default %(default)s)")
        p.add_argument("--retry-failed", action="store_true", help="rerun lines that failed or were killed")
        p.add_argument("--build", action="append", default=[], metavar="NAME=PATH",
                       help="the program of the lines that name build NAME (an earlier commit's schedbed, for an "
                            "A/B of two builds; repeatable)")
        p.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes "
                       "(for development: every result is marked dirty)")
        if name == "run":
            p.add_argument("--jobs", type=int, help="runs at once, timing runs included (default: timing runs one "
                                                     "at a time, others one per core)")
        if name == "task":
            p.add_argument("--index", type=int, help="the line, from 0 (default: $SLURM_ARRAY_TASK_ID)")
        if name == "slurm":
            p.add_argument("--partition")
            p.add_argument("--time", help="time limit per task, as sbatch takes it (e.g. 10:00)")
            p.add_argument("--cpus-per-task", type=int, help="default: the most --threads of any line")
            p.add_argument("--exclusive", action="store_true", help="a node per task (for timing runs)")
            p.add_argument("--max-parallel", type=int, help="the K of --array=..%%K (default: 1 for timing runs "
                                                            "without --exclusive, else no limit)")
            p.add_argument("--wait", action="store_true", help="wait for the array to end (sbatch --wait)")
            p.add_argument("--job-name", default="schedbed-sweep")
            p.add_argument("--python", default="/usr/bin/python3", help="python on the nodes (default %(default)s)")
            p.add_argument("--sbatch", default="sbatch")
            p.add_argument("--sbatch-arg", action="append", default=[], help="one more sbatch option (repeatable)")
    s = sub.add_parser("status", help="how many lines are done, failed, killed, missing")
    s.add_argument("dir")
    c = sub.add_parser("collect", help="merge the results into one CSV (DIR/runs.csv)")
    c.add_argument("dir")
    c.add_argument("--csv", help="where to write it (default DIR/runs.csv)")
    c.add_argument("--leave-out-failed", action="store_true",
                   help="name failed runs and leave them out (missing or killed runs still refuse)")
    c.add_argument(machines.FLAG, dest="allow_mixed", action="store_true",
                   help="collect runs of different machines into one CSV (every report then says MIXED)")
    ld = sub.add_parser("load", help="p99 against offered load, one curve per policy (make sweep)",
                        epilog="Arguments after -- go to every schedbed run, e.g. -- --duration 3")
    ld.add_argument("--schedbed", default=DEFAULT_SCHEDBED)
    ld.add_argument("--workload")
    ld.add_argument("--param", help="the workload's open-loop arrival rate parameter (e.g. rate)")
    ld.add_argument("--rates", help="comma-separated values of that parameter")
    ld.add_argument("--policies", help="comma-separated policies (default: every registered one)")
    ld.add_argument("--reps", type=int, default=1)
    ld.add_argument("--seed", type=int, default=1)
    ld.add_argument("--threads", type=int)
    ld.add_argument("--jobs", type=int)
    ld.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes (marked dirty)")
    ld.add_argument("--class", dest="cls", default="all", help="job class whose p99 is plotted (default: all jobs)")
    ld.add_argument("--out")
    pl = sub.add_parser("plot-load", help="redraw a load sweep's figure from its runs.csv")
    pl.add_argument("dir")
    pl.add_argument("--class", dest="cls", default="all")

    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a, extra = ap.parse_args(argv[:cut]), argv[cut + 1:]
    if extra and a.cmd != "load":
        die(f"arguments after -- are for `load` only: {extra}")
    if a.cmd == "expand":
        for flag, v in (("--reps", a.reps), ("--noise-reps", a.noise_reps)):
            if v is not None and v < 1:
                die(f"{flag} must be at least 1")
        descs = [load_description(p) for p in a.descriptions]
        path = write_manifest(a.out, expand(descs, {"reps": a.reps, "seed": a.seed, "duration": a.duration,
                                                    "warmup": a.warmup, "noise_reps": a.noise_reps}))
        print(path)
        return 0
    if a.cmd == "run":
        return cmd_run(a)
    if a.cmd == "task":
        return cmd_task(a)
    if a.cmd == "slurm":
        return cmd_slurm(a)
    if a.cmd == "status":
        return report_status(a.dir, read_manifest(a.dir))
    if a.cmd == "collect":
        path, rows = collect(a.dir, a.csv, a.leave_out_failed, a.allow_mixed)
        print(f"{PROG}: {len(rows)} runs -> {path}", file=sys.stderr)
        print(path)
        return 0
    if a.cmd == "load":
        return cmd_load(a, extra)
    if a.cmd == "plot-load":
        print(plot_load(a.dir, os.path.join(a.dir, "runs.csv"), a.cls))
        return 0


if __name__ == "__main__":
    sys.exit(main())
