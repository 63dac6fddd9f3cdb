#!/usr/bin/python3
"""ab.py - two configurations A and B, alternated, and a verdict per metric.

    ab.py --a "RUN ARGS" --b "RUN ARGS" [--a-build BIN] [--b-build BIN] [--reps N] [--seed N] [--schedbed BIN]
          [--allow-dirty] DIR [-- COMMON ARGS]
    ab.py DIR
        the verdict table of the finished runs in DIR again

Writes a manifest of 2 x REPS runs (A B A B ..., repetition k of both with seed base + k - 1, so
that the machine's drift hits both alike and both see the same jobs) into DIR and runs it with
the sweep runner (scripts/sweep.py: resumable, one run at a time, each run's status and log).
Then one line per metric: throughput, p50 and p99 of all jobs and of every class, the share of
the workers' busy time spent waiting for the core's locks (the task depot), the cores used in
the window and the peak resident memory, each side's median with its 95% bootstrap interval, and
B "faster", "slower" (for cores: "fewer", "more"; for memory: "less", "more") or "no difference measured" against A by the study's rule (sbstats.py: an ordering only when the intervals do not overlap);
the same figures go to DIR/verdict.csv for scripts.
Runs whose settings or machines differ are never pooled (sbverdict.py).

--a-build / --b-build run that side with another schedbed, an earlier commit's build say (make
it in a worktree of that commit): an A/B of two builds, same arguments or not, alternated like
any other. Such a side's runs record their own commit, which the table prints beside its side;
the other side's must be this tree's, as always.
"""
import argparse
import csv
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbverdict  # noqa: E402
import sbdesc  # noqa: E402
import sbrun  # noqa: E402
import machines  # noqa: E402
from sbread import read_run  # noqa: E402
from sbcli import die, fmt_ns, run_seconds  # noqa: E402

MIN_REPS = 5  # the study's rule: fewer repetitions give a median no interval worth stating
SIDES = ("A", "B")


def manifest_lines(sides, reps, seed, common, builds=()):
    """A B A B ...: repetition k of each side with seed + k - 1; a side in builds runs its own
    program (the line names the build, the runner is given its path)."""
    lines = []
    for k in range(1, reps + 1):
        for name, args in sides:
            lines.append({"id": f"ab.{name}.r{k}", "out": f"{name}/r{k}", "timing": True, "slim": True,
                          "program": "schedbed", "args": args + common + ["--seed", str(seed + k - 1)],
                          "tags": {"side": name, "rep": k, "args": " ".join(args)},
                          **({"build": name} if name in builds else {})})
    return lines


def announce(lines):
    per = [run_seconds(ln["args"]) for ln in lines]
    if None in per:
        return f"ab: {len(lines)} runs, A B A B ...; bounded runs (--jobs): their length is not known before"
    return (f"ab: {len(lines)} runs, A B A B ..., about {max(per):.0f} s each: about {sum(per) / 60:.1f} min "
            f"in all; slim results (summary, meta, workers, latency histogram), tens of KB a run")


def load(root):
    """{side: [run]} from the manifest's finished lines; dies naming any line that is not."""
    lines = sbdesc.read_manifest(root)
    sides = {}
    for ln in lines:
        state, why = sbrun.line_state(root, ln)
        if state != "done":
            builds = "".join(f" --build {b}=PATH" for b in sorted({x["build"] for x in lines if x.get("build")}))
            die(f"{ln['id']} is {state}: {why} (resume with: scripts/sweep.py run {root} --retry-failed{builds})", 1)
        run = read_run(os.path.join(root, ln["out"]))
        sides.setdefault(ln["tags"]["side"], []).append(run)
    return lines, sides


def report(root):
    lines, sides = load(root)
    if set(sides) != set(SIDES):
        die(f"{root}: needs runs of both A and B", 1)
    try:
        sbverdict.check_pool(sides)
    except sbverdict.PoolError as e:
        die(str(e), 1)
    args = {ln["tags"]["side"]: ln["tags"]["args"] for ln in lines}
    a, b = sides["A"], sides["B"]
    def commit(runs):
        return ", ".join(sorted({r["provenance"]["sha"][:12] + (" (dirty)" if r["provenance"]["dirty"] else "")
                                 for r in runs}))
    print(f"A: {args['A']}  ({len(a)} runs, commit {commit(a)})\nB: {args['B']}  ({len(b)} runs, commit {commit(b)})")
    print(f"on {machines.name(machines.key(a[0]['provenance']))}")
    for text in sbverdict.table("A", a, "B", b):
        print(text)
    # the same figures for scripts: written whole, then renamed, so a half-written file never stands
    path = os.path.join(root, "verdict.csv")
    with open(path + ".tmp", "w", newline="") as f:
        got = sbverdict.rows(a, b)
        w = csv.DictWriter(f, fieldnames=["metric", "higher_is_better", "a_median", "a_low", "a_high", "a_runs",
                                          "b_median", "b_low", "b_high", "b_runs", "verdict"])
        w.writeheader()
        w.writerows(got)
    os.replace(path + ".tmp", path)
    worst = max((r["summary"]["all"]["p99"] or 0) for r in a + b)
    print(f"(medians over runs with 95% bootstrap intervals; an ordering only where the intervals do not "
          f"overlap; worst p99 of any run {fmt_ns(worst)})")
    return 0


def main():
    ap = argparse.ArgumentParser(description="A/B: two configurations alternated, a verdict per metric.",
                                 epilog="Arguments after -- go to every run of both sides, e.g. -- --workload oltp "
                                        "--duration 3")
    ap.add_argument("dir", help="a new directory for the runs (or, alone, a finished one to tabulate again)")
    ap.add_argument("--a", help="schedbed run arguments of A, one string, e.g. \"--policy stealing\"")
    ap.add_argument("--b", help="schedbed run arguments of B")
    ap.add_argument("--reps", type=int, default=MIN_REPS, help="runs of each side (default %(default)s, at least 5)")
    ap.add_argument("--seed", type=int, default=1, help="repetition k runs with seed + k - 1 (default %(default)s)")
    ap.add_argument("--schedbed", default=sbrun.DEFAULT_SCHEDBED, help="the program (default %(default)s)")
    ap.add_argument("--a-build", metavar="BIN", help="run side A with this schedbed (an earlier commit's build)")
    ap.add_argument("--b-build", metavar="BIN", help="run side B with this schedbed")
    ap.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes (marked)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a, common = ap.parse_args(argv[:cut]), argv[cut + 1:]
    if a.a is None and a.b is None and not common:
        return report(a.dir)
    if not (a.a and a.b):
        die("give both --a and --b (the run arguments of each side)")
    if a.reps < MIN_REPS:
        die(f"--reps {a.reps}: at least {MIN_REPS} runs of each side (fewer give no interval worth stating)")
    for flag in ("--seed", "--out", "-o"):
        if flag in shlex.split(a.a) + shlex.split(a.b) + common:
            die(f"{flag} is ab.py's to set (each repetition its own seed, each run its own directory)")
    if os.path.exists(a.dir) and os.listdir(a.dir):
        die(f"{a.dir} exists and is not empty; give a new directory (or only the directory, to tabulate it)")
    sides = [("A", shlex.split(a.a)), ("B", shlex.split(a.b))]
    builds = sbrun.parse_builds([f"{n}={p}" for n, p in (("A", a.a_build), ("B", a.b_build)) if p])
    lines = manifest_lines(sides, a.reps, a.seed, common, builds)
    print(announce(lines), flush=True)
    rc = sbrun.run_manifest(a.dir, lines, a.schedbed, allow_dirty=a.allow_dirty, builds=builds)
    if rc != 0:
        return rc
    return report(a.dir)


if __name__ == "__main__":
    sys.exit(main())
