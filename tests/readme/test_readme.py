#!/usr/bin/python3
"""test_readme.py - every command README.md shows, run (with short durations), so that the README
cannot drift from the program again.

    test_readme.py [--build DIR]

The commands are read from README.md itself: every line of a plain code block and every inline
`...` whose first word is make, scripts/, schedbed, build/release/schedbed, gnuplot or bash. Each must
be in RUN (how this test runs it: the same command, made short, with what it must print) or in
SKIP (why not here, and which test does run it). A command the README shows that is in neither, or
an entry in either that the README no longer shows, fails the test. Every script under scripts/
that runs as a program must be executable with the interpreter that has matplotlib.

What the commands write under results/ is removed afterwards; results/paper/ is never touched.
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMAND = re.compile(r"(make|scripts/\S+|schedbed|build/release/schedbed|gnuplot|bash)( |$)")
SHORT = "--duration 0.2 --warmup 0.1"
DIRTY = "ALLOW_DIRTY=1"  # a developer's tree is seldom clean; test_sweep.py checks the refusal itself
# the README's sweep expands two descriptions with one repetition: a run per configuration
MINE_RUNS = sum(len(json.load(open(os.path.join(ROOT, "sweeps", f + ".json")))["configs"]) for f in ("hybrid", "wake"))

# README command -> (the command this test runs, in bash from the tree's root; what its output must hold).
# {tmp} is a fresh directory, {run} a run directory made by the first bench.
RUN = {
    "make": ("make -s", ""),
    "make deps": ("make -s deps", ""),
    "make schedbed": ("make -s schedbed", ""),
    "make help": ("make -s help", "ab "),
    "make layers": ("make -s layers", ""),
    'make bench ARGS="--set lightweight_job_level=20"':
        (f'make -s bench ARGS="--set lightweight_job_level=20 {SHORT}" THREADS=2', "serial"),
    "make bench": (f'make -s bench ARGS="{SHORT}"', "latency CDF"),
    "make bench POLICY=stealing WORKLOAD=mixed THREADS=4": (f'make -s bench POLICY=stealing WORKLOAD=mixed THREADS=4 '
                                                            f'ARGS="{SHORT}"', "stealing"),
    "make plot RUN=results/<run-id>": ("make -s plot RUN={run}", ".png"),
    "make compare WORKLOAD=oltp": (f'make -s compare WORKLOAD=oltp POLICIES=hybrid,fifo REPS=1 ARGS="{SHORT}" {DIRTY}',
                                   ("against hybrid", "not shown (fewer jobs)")),
    "make ab A='--policy stealing' VS='--policy serial'":
        (f"make -s ab A='--policy stealing' VS='--policy serial' ARGS='{SHORT}' {DIRTY}", "B against A"),
    "make sweep": (f'make -s sweep POLICIES=stealing RATES=500,1000 ARGS="{SHORT}" {DIRTY}', "runs.csv"),
    "make metg": (f"make -s metg METG_ARGS='--patterns trivial --policies stealing --peers omp --reps 1 --steps 2 "
                  f"--width 2 --max-iterations 2' {DIRTY}", "METG"),
    "make reproduce": (f"make -s reproduce EXPERIMENTS=hybrid REPRODUCE_ARGS='--reps 1 {SHORT} --out {{tmp}}/rep' "
                       f"{DIRTY}", "vs-paper"),
    "make validate-sim": ("make -s validate-sim VALIDATE_ARGS=\"--policies stealing --cells tiny --threads 1 --reps 3 "
                          "--duration 0.05 --warmup 0.01 --sim-costs $(ls sim/costs-*.txt | head -n 1) "
                          f"--out {{tmp}}/vs\" {DIRTY}", "cells.csv"),
    "make bench-core": ("make -s bench-core BENCH_CORE_ARGS='--reps 5 --fib 16 --chain 1000 --no-callgrind "
                        f"--out {{tmp}}/bc' {DIRTY}", "fib"),
    "make fuzz": ("make -s fuzz FUZZ_COUNT=3", ""),
    "make ab": ("make -s ab; test $? = 2", "give both sides"),
    "build/release/schedbed": ("build/release/schedbed; test $? = 2", "valid commands are"),
    "schedbed list": ("build/release/schedbed list", "policies"),
    "schedbed": ("build/release/schedbed; test $? = 2", "valid commands are"),
    "schedbed host": ("build/release/schedbed host", lambda out: "\t" in out),
    "schedbed list --machine": ("build/release/schedbed list --machine", ""),
    "schedbed run --policy stealing --workload oltp --set rate=60000 --duration 2":
        ("build/release/schedbed run --policy stealing --workload oltp --set rate=60000 --duration 2 --out {tmp}/ov; "
         "test $? = 3", "fell behind"),
    "make scale": ("make -s scale SCALE_ARGS='--workers 1 --cases tiny --policies serial --peers \"\" --reps 1 "
                   f"--duration 0.05 --warmup 0.01' {DIRTY}", "Scaling on"),
    "scripts/scale.py expand --help": ("scripts/scale.py expand --help", "--workers"),
    "schedbed list --params": ("build/release/schedbed list --params", "core\tthread_count"),
    "schedbed outputs": ("build/release/schedbed outputs", "summary.json"),
    "schedbed run": ("build/release/schedbed run; test $? = 2", "missing --policy"),
    "schedbed run --help": ("build/release/schedbed run --help", "--dry-run"),
    # a committed cost table, this machine's or another's: the test is of the executor, and CI's machine
    # may be one no table was measured on (a run there without --sim-costs is refused, as it should be)
    "schedbed run --executor sim ...": ("build/release/schedbed run --executor sim --threads 64 --policy stealing "
                                        "--workload micro --jobs 8 --set length=100 --out {tmp}/sim "
                                        "--sim-costs $(ls sim/costs-*.txt | head -n 1)", "results:"),
    # in the terminal, writing no file (the run's figure files are plot_run.py's)
    "gnuplot plot.gp": ("cd {run} && ls >{tmp}/before && gnuplot plot.gp && ls | diff {tmp}/before - && "
                        "grep '^classes = ' plot.gp",
                        lambda out: "s from run start" in out and one_mark_per_class(out)),
    "gnuplot -e \"only='cdf'\" plot.gp": ("gnuplot -e \"only='cdf'\" {run}/plot.gp",
                                          lambda out: "latency CDF" in out and "s from run start" not in out),
    "scripts/sweep.py expand sweeps/hybrid.json sweeps/wake.json --out results/mine":
        (f"scripts/sweep.py expand sweeps/hybrid.json sweeps/wake.json --out {{tmp}}/mine --reps 1 {SHORT}",
         "manifest.jsonl"),
    "scripts/sweep.py run results/mine": ("scripts/sweep.py run {tmp}/mine --allow-dirty",
                                          f"all {MINE_RUNS} runs finished"),
    "scripts/sweep.py status results/mine": ("scripts/sweep.py status {tmp}/mine", f"{MINE_RUNS} done"),
    "scripts/sweep.py collect results/mine": ("scripts/sweep.py collect {tmp}/mine", "runs.csv"),
    "scripts/experiments.py --report results/mine": ("scripts/experiments.py --report {tmp}/mine", "hybrid"),
    "scripts/ab.py": ("scripts/ab.py --help", "--a"),
    "scripts/compare.py": ("scripts/compare.py --help", "--run"),
    "scripts/sweep.py": ("scripts/sweep.py --help", "expand"),
}
# Commands that must run in this order: the first bench makes the run the plots read, the two
# hybrid-on-oltp benches would share a run id within one second, the sweep commands follow the
# manifest they read.
CHAINS = [
    ["make bench", "make plot RUN=results/<run-id>", "gnuplot plot.gp", "gnuplot -e \"only='cdf'\" plot.gp",
     'make bench ARGS="--set lightweight_job_level=20"'],
    ["scripts/sweep.py expand sweeps/hybrid.json sweeps/wake.json --out results/mine",
     "scripts/sweep.py run results/mine", "scripts/sweep.py status results/mine",
     "scripts/sweep.py collect results/mine", "scripts/experiments.py --report results/mine"],
]
SKIP = {
    "scripts/scale.py report DIR": "make scale runs it on the sweep it makes; tests/sweeps/test_scale.py too",
    "make carry": "packs 40 MB of libraries (a minute of xz); test_scale.py's carry test runs carry.sh run",
    "scripts/carry.sh pack --no-sim build/carry": "test_scale.py's test_pack_without_the_simulator runs it "
                                                  "(into a temporary directory, not over build/carry)",
    "make NOSIM=1": "carry.sh pack --no-sim runs it, in test_pack_without_the_simulator",
    "scripts/carry.sh run build/carry CMD...": "test_scale.py's test_carried_programs_name_their_commit runs it",
    "scripts/carry.sh run build/carry /usr/bin/python3 scripts/scale.py expand --schedbed build/carry/bin/schedbed "
    "--out results/scale-16": "the recipe for a machine make carry packed for; test_scale.py runs expand, sweep.py "
                              "run and report on a slice, and carry.sh run",
    "scripts/carry.sh run build/carry /usr/bin/python3 scripts/sweep.py run results/scale-16 --schedbed "
    "build/carry/bin/schedbed": "as above",
    "scripts/carry.sh run build/carry /usr/bin/python3 scripts/scale.py report results/scale-16": "as above",
    "scripts/claims.py": "make claims, a step of make test, runs it",
    "scripts/targets.sh OUT REPS OLD_SCHEDBED": "a many-core benchmark of two builds (minutes on 16 cores); "
                                               "tests/sweeps/test_targets.py runs it on a slice",
    "scripts/targets.py OUT": "tests/sweeps/test_targets.py runs it on the slice's runs",
    "scripts/machines.py": "a module and a backfill tool: tests/sweeps/test_machines.py runs both",
    "scripts/plot_run.py": "make bench and make plot run it; cli's plot tests too",
    "schedbed run --policy serial --workload tiny --threads 2 --jobs 6000000 --warmup 0":
        "the 6M-job measurement (20 s, 670 MiB); cli's past_rows_the_histogram_is_plotted runs the path at --rows 10",
    "make compare": "make compare WORKLOAD=oltp is the same command (oltp is the default workload)",
    "make test": "this test is one of its steps",
    "bash .ci/run": "runs make test, of which this test is a step",
    "make check": "the unit step of make test runs the same suite whole, and the canaries",
    "make sim-test": "a step of make test",
    "make reproduce UPDATE=1": "replaces results/paper/; test_sweep.py's reproduce test covers --update-paper",
    "make calibrate": "rewrites sim/costs.txt; tests/sim/test_sim.py reads the cost table it writes",
    "scripts/sweep.py slurm results/mine --partition batch --time 10:00 --exclusive --wait":
        "needs a Slurm cluster; tests/sweeps/slurm_test.py starts one and runs a manifest as an array",
    "scripts/sweep.py slurm results/mine --max-parallel 20": "as above",
    "scripts/capacity.py DIR/capacity": "needs a load sweep's runs; test_sweep.py's test_capacity_rule runs it",
    "scripts/sbstats.py": "a module, not a program: test_sweep.py's test_intervals_and_no_difference uses it",
}


def readme_commands():
    text = open(os.path.join(ROOT, "README.md")).read()
    found = []
    for block in re.findall(r"^```\n(.*?)^```", text, re.S | re.M):
        found += [ln.split("  #")[0] for ln in block.splitlines()]
    found += re.findall(r"`([^`]+)`", re.sub(r"^```.*$", "", text, flags=re.M))
    out = []
    for c in found:
        c = " ".join(c.split())
        if COMMAND.match(c) and c not in out:
            out.append(c)
    return out


def one_mark_per_class(out):
    """The terminal CDF's key gives every class (plot.gp's classes line) a mark of its own."""
    classes = re.search(r'^classes = "(.*)"$', out, re.M).group(1).split()
    marks = [m.group(1) for c in classes for m in [re.search(rf"{c} +(\S)", out)] if m]
    return len(classes) > 7 and len(marks) == len(classes) and len(set(marks)) == len(classes)


def check_scripts():
    bad = []
    for name in sorted(os.listdir(os.path.join(ROOT, "scripts"))):
        path = os.path.join(ROOT, "scripts", name)
        if not name.endswith(".py"):
            continue
        text = open(path).read()
        if "__main__" not in text:
            continue
        first = text.splitlines()[0]
        if first != "#!/usr/bin/python3" or not os.access(path, os.X_OK):
            bad.append(f"scripts/{name} ({first!r}, {'executable' if os.access(path, os.X_OK) else 'not executable'})")
    assert not bad, "programs under scripts/ must start with #!/usr/bin/python3 and be executable: " + ", ".join(bad)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="run the README commands containing this")
    a = ap.parse_args()
    t0 = time.monotonic()
    failed = []
    shown = readme_commands()
    unknown = [c for c in shown if c not in RUN and c not in SKIP]
    stale = [c for c in list(RUN) + list(SKIP) if c not in shown]
    if unknown:
        failed.append(f"the README shows commands this test does not know (add each to RUN or SKIP): {unknown}")
    if stale:
        failed.append(f"this test knows commands the README no longer shows: {stale}")
    try:
        check_scripts()
    except AssertionError as e:
        failed.append(str(e))
    results = os.path.join(ROOT, "results")
    before = set(os.listdir(results)) if os.path.isdir(results) else set()
    env = dict(os.environ, MAKEFLAGS="", MAKELEVEL="")
    tmp = tempfile.mkdtemp(prefix="readmetest-")
    state = {"run": None, "passed": 0}
    lock = threading.Lock()

    def one(c):
        cmd, want = RUN[c]
        cmd = cmd.format(tmp=tmp, run=state["run"])
        t = time.monotonic()
        p = subprocess.run(["bash", "-c", cmd], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
        out = p.stdout + p.stderr
        ok = want(out) if callable(want) else all(w in out for w in ((want,) if isinstance(want, str) else want))
        with lock:
            if p.returncode != 0 or not ok:
                failed.append(f"{c}\n    ran: {cmd}\n    exit {p.returncode}, wanted 0 and {want!r} in:\n"
                              + "\n".join("      " + ln for ln in out.splitlines()[-15:]))
                print(f"  FAILED {c}", flush=True)
                return False
            state["passed"] += 1
            print(f"  pass  {c}  ({time.monotonic() - t:.1f} s)", flush=True)
        if c == "make bench":
            state["run"] = re.search(r"^results: (.*)$", out, re.M).group(1)
        return True

    def chain(cs):
        for c in cs:
            if not one(c):
                return  # what follows reads what this one made

    # Chains run two at a time (the commands are not timed here): a chain's commands in order
    # because each reads what the one before made, or because two would share a result name.
    chained = [c for ch in CHAINS for c in ch]
    chains = [list(ch) for ch in CHAINS] + [[c] for c in shown if c in RUN and c not in chained]
    if a.only:
        chains = [[c for c in ch if a.only in c or (c == ch[0] and ch[0] in chained)] for ch in chains]
    try:
        with cf.ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(chain, [ch for ch in chains if ch]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for name in (set(os.listdir(results)) if os.path.isdir(results) else set()) - before:
            path = os.path.join(results, name)
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)
    passed = state["passed"]
    for f in failed:
        print("FAILED: " + f)
    print(f"README commands: {len(shown)} shown, {passed} run, {len(SKIP)} run elsewhere "
          f"({time.monotonic() - t0:.0f} s)")
    print(f"{passed} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
