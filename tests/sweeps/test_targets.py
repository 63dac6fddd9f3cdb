#!/usr/bin/python3
"""test_targets.py - the many-core rows of two builds (scripts/targets.sh, scripts/targets.py) on a
slice small enough for 2 cores: 1 and 2 workers, short windows, fib(16).

    test_targets.py [--schedbed BIN]

What a user relies on: every row runs for both builds in every repetition, their order alternating;
the table gives each row's median with min..max and the run count for both builds, reads fib's n
from the runs (a row's "ns per fib call" is per call of the fib the run computed), and orders the
builds only by the interval rule; runs from two machines are refused; a missing build is named.
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, run_tests, script  # noqa: E402

targets = script("targets.py")
SCHEDBED = os.path.join(ROOT, "build", "release", "schedbed")
SH = os.path.join(ROOT, "scripts", "targets.sh")


OLD_SHA = "0123456789abcdef0123456789abcdef01234567"


def run_slice(tmp, reps=2):
    """targets.sh over the slice, the same build standing in for the old one (a copy: another path)."""
    old = os.path.join(tmp, "old", "bin", "schedbed")
    os.makedirs(os.path.dirname(old))
    os.makedirs(os.path.join(tmp, "old", "lib"))
    shutil.copy(SCHEDBED, old)
    out = os.path.join(tmp, "t")
    env = dict(os.environ, TARGETS_NEW=SCHEDBED, TARGETS_WORKERS="1 2", TARGETS_WIDE="2", TARGETS_DURATION="0.05",
               TARGETS_FIB_N="16", TARGETS_FJ_POLICIES="global", TARGETS_OLD_SHA=OLD_SHA)
    p = subprocess.run(["bash", SH, out, str(reps), old], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def test_both_builds_every_row_alternated(tmp):
    out = run_slice(tmp)
    with open(os.path.join(out, "rc.txt")) as f:
        done = [ln.split() for ln in f if ln.strip()]
    # every run ended (an open-loop run past its capacity exits 3 with its summary written)
    assert all(st in ("0", "3") for _, st, _ in done), done
    tags = [t for t, _, _ in done]
    for rep in (1, 2):
        for w in (1, 2):
            for row in ("fib32lifo", "fj", "fjlifo", "tiny"):
                for v in ("old", "new"):
                    assert f"{v}/{row}-w{w}-r{rep}" in tags, (v, row, w, rep)
            for v in ("old", "new"):  # the other policies on the forkjoin row, at the widest count
                assert f"{v}/fj-global-w2-r{rep}" in tags, (v, rep)
    # the old build's runs name the commit they were given, the new one's their own
    assert json.load(open(os.path.join(out, "old", "fj-w1-r1", "meta.json")))["git"]["sha"] == OLD_SHA
    assert json.load(open(os.path.join(out, "new", "fj-w1-r1", "meta.json")))["git"]["sha"] != OLD_SHA
    # the first repetition runs new first, the second old first
    first = {rep: next(t for t in tags if t.endswith(f"-r{rep}")).split("/")[0] for rep in (1, 2)}
    assert first == {1: "new", 2: "old"}, first
    for v in ("old", "new"):
        for d in os.listdir(os.path.join(out, v)):
            if os.path.isdir(os.path.join(out, v, d)):  # only the numbers are kept
                assert set(os.listdir(os.path.join(out, v, d))) <= {"summary.json", "meta.json", "workers.csv",
                                                                     "latency-hist.json.gz"}, d
    assert len(os.listdir(os.path.join(out, "peer"))) == 2 * 2 * 2  # tbb and omp at 1 and 2 workers, 2 reps

    st, text, err = targets(out, check=0)
    meta = json.load(open(os.path.join(out, "new", "fj-w1-r1", "meta.json")))
    assert f"# Many-core rows on {meta['cpu_model']}" in text, text
    assert os.path.exists(os.path.join(out, "targets.md"))
    with open(os.path.join(out, "targets.csv")) as f:  # every cell, for the claims table
        cells_ = {(r["row"], r["config"], r["version"]): r for r in csv.DictReader(f)}
    fj = cells_[("fj", "w2", "new")]
    assert fj["runs"] == "2" and float(fj["low"]) <= float(fj["median"]) <= float(fj["high"]), fj
    assert ("fj-lock", "global-w2", "old") in cells_, sorted(cells_)
    row = next(ln for ln in text.splitlines() if ln.startswith("| fib(n), stealing local_order=lifo") and "| w2 |" in ln)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert re.fullmatch(r"[0-9.,]+ \([0-9.,]+\.\.[0-9.,]+, n=2\)", cells[3]) and cells[3].endswith("n=2)"), cells
    assert cells[5] == "no difference measured", cells  # 2 runs a side: the rule orders nothing
    # fib(16) per call: the runs' n, not 32 (fib(16) has 3,192 calls, fib(32) 7,049,154: n read as 32
    # makes the figure about 2,200 times smaller, below 1 ns for any call under 2 us). One call costs
    # tens of ns to a microsecond; the upper bound is only a sanity bound, wide enough (50 us) for a
    # short window on a loaded machine, since the figure is the window's wall time per call
    ns = float(cells[4].split()[0].replace(",", ""))
    assert 1 < ns < 50000, ns
    assert "| tbb | 2 |" in text and "| omp | 1 |" in text, text
    # the lock waits beside the forkjoin row, per config, the other policy's included
    locks = [ln for ln in text.splitlines() if ln.startswith("| the same runs: the workers' waits")]
    assert any("| w2 |" in ln for ln in locks) and any("| global-w2 |" in ln for ln in locks), text
    assert all(re.search(r"\| [0-9.,e-]+ \(", ln) for ln in locks), locks


def test_two_machines_refused_and_bad_input(tmp):
    out = run_slice(tmp, reps=1)
    mp = os.path.join(out, "old", "tiny-w1-r1", "meta.json")
    m = json.load(open(mp))
    m["cpu_model"] = "Another CPU"
    json.dump(m, open(mp, "w"))
    st, _, err = targets(out)
    assert st != 0 and "Another CPU" in err, err
    st, _, err = targets(os.path.join(tmp, "empty"))
    assert st != 0 and "no runs" in err, err
    p = subprocess.run(["bash", SH, os.path.join(tmp, "x"), "1", os.path.join(tmp, "nothing")], capture_output=True,
                       text=True, cwd=ROOT, env=dict(os.environ, TARGETS_NEW=SCHEDBED))
    assert p.returncode == 2 and "missing" in p.stderr, p.stderr
    p = subprocess.run(["bash", SH], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "usage" in p.stderr, p.stderr


def main():
    global SCHEDBED
    ap = argparse.ArgumentParser()
    ap.add_argument("--schedbed", default=SCHEDBED)
    SCHEDBED = os.path.abspath(ap.parse_args().schedbed)
    return run_tests([test_both_builds_every_row_alternated, test_two_machines_refused_and_bad_input],
                     "many-core rows of two builds (scripts/targets.sh, targets.py):")


if __name__ == "__main__":
    sys.exit(main())
