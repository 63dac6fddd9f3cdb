#!/usr/bin/python3
"""test_causes.py - the cause experiments (scripts/causes.sh, scripts/causes.py) on a slice small
enough for 2 cores: 2 workers standing in for 16, tiny at 1 and 2 workers, short windows.

    test_causes.py [--schedbed BIN]

What a user relies on: every configuration of every group runs in every repetition, the order
reversed every other repetition; only the numbers are kept; the table and its CSV give medians over the repetitions (the processes at once: the median
process of each repetition), and comparisons only by the interval rule; runs of two machines and
an unknown group are refused.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, run_tests, script  # noqa: E402

causes = script("causes.py")
SCHEDBED = os.path.join(ROOT, "build", "release", "schedbed")
SH = os.path.join(ROOT, "scripts", "causes.sh")


def run_slice(tmp, reps=3, groups="lifo fifo tiny tinytry wake oltp"):
    out = os.path.join(tmp, "c")
    env = dict(os.environ, CAUSES_NEW=SCHEDBED, CAUSES_WIDE="2", CAUSES_TINY="1 2", CAUSES_TINYTRY="1 2",
               CAUSES_DURATION="0.05",
               CAUSES_GROUPS=groups)
    p = subprocess.run(["bash", SH, out, str(reps)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def test_every_configuration_alternated_and_the_table(tmp):
    out = run_slice(tmp)
    with open(os.path.join(out, "rc.txt")) as f:
        done = [ln.split() for ln in f if ln.strip()]
    assert all(st in ("0", "3") for _, st, _ in done), done
    tags = [t for t, _, _ in done]
    want = ["lifo-alone", "lifo-together1", "lifo-together2", "lifo-wide", "fifo-alone", "fifo-together1",
            "fifo-together2", "fifo-wide", "tiny-stealing-1", "tiny-fifo-1",
            "tiny-stealing-2", "tiny-fifo-2", "tinytry-try1000-1", "tinytry-try10-1", "tinytry-try0-1",
            "tinytry-fifo-1", "tinytry-try1000-2", "tinytry-try10-2", "tinytry-try0-2", "tinytry-fifo-2", "wake-try1000", "wake-try100", "wake-try10", "wake-try0", "wake-busy",
            "wake-fifo", "oltp-serial-mix", "oltp-stealing-mix", "oltp-serial-short", "oltp-stealing-short"]
    for r in (1, 2, 3):
        assert sorted(t for t in tags if t.endswith(f"-r{r}")) == sorted(f"{w}-r{r}" for w in want), (r, tags)
    # the order of a group reverses every other repetition
    def order(r, prefix):
        return [t for t in tags if t.startswith(prefix) and t.endswith(f"-r{r}")]
    assert order(1, "wake-") == [f"wake-{c}-r1" for c in ("try1000", "try100", "try10", "try0", "busy", "fifo")]
    assert order(2, "wake-") == [f"wake-{c}-r2" for c in ("fifo", "busy", "try0", "try10", "try100", "try1000")]
    assert order(1, "lifo-wide") and tags.index("lifo-alone-r1") < tags.index("lifo-wide-r1")
    assert tags.index("lifo-wide-r2") < tags.index("lifo-alone-r2")
    runs = {}
    for t in tags:
        d = os.path.join(out, t)
        assert set(os.listdir(d)) <= {"summary.json", "meta.json", "workers.csv"}, (t, os.listdir(d))
        runs[t] = json.load(open(os.path.join(d, "summary.json")))
    st, text, err = causes(out, check=0)
    meta = json.load(open(os.path.join(out, "lifo-alone-r1", "meta.json")))
    assert open(os.path.join(out, "causes.md")).read().startswith(f"# Cause experiments on {meta['cpu_model']}")
    with open(os.path.join(out, "causes.csv")) as f:
        rows = {(r["config"], r["metric"]): r for r in csv.DictReader(f)}
    # tiny's figure is the median of its runs' throughput
    tiny = [runs[f"tiny-fifo-2-r{r}"]["throughput"] / 1e6 for r in (1, 2, 3)]
    got = rows[("tiny-fifo-2", "M jobs/s")]
    assert abs(float(got["median"]) - statistics.median(tiny)) < 1e-4 * max(tiny) and got["runs"] == "3", (got, tiny)
    # the try count reaches the run, and each setting is compared with the default at its worker count
    m = json.load(open(os.path.join(out, "tinytry-try10-2-r1", "meta.json")))
    assert m["core"]["worker_try_count"] == 10 and m["policy"]["name"] == "stealing", m["core"]
    assert ("tinytry-try0-2", "M jobs/s") in rows
    md_ = open(os.path.join(out, "causes.md")).read()
    assert "- 2 workers, try0 against try1000: " in md_ and "- fifo: " in md_, md_
    # the processes at once: one value per repetition (the median process), not one per process
    assert rows[("lifo-together", "ns per call")]["runs"] == "3", rows[("lifo-together", "ns per call")]
    # the FIFO group is its own table: its processes ran FIFO own queues
    assert rows[("fifo-together", "ns per call")]["runs"] == "3" and ("fifo-wide", "ns per call") in rows
    assert json.load(open(os.path.join(out, "fifo-together1-r1", "meta.json")))["policy"]["params"]["local_order"] == "fifo"
    assert "## forkjoin fib(24), stealing local_order=fifo" in open(os.path.join(out, "causes.md")).read()
    md = open(os.path.join(out, "causes.md")).read()
    verdicts = [ln.split(": ", 1)[1] for ln in md.splitlines() if ln.startswith("- ") and ": " in ln]
    assert verdicts and all(v == "no difference measured" or " < " in v or " > " in v or v == "not run"
                            for v in verdicts), verdicts


def test_two_machines_and_bad_input_refused(tmp):
    out = run_slice(tmp, reps=1, groups="tiny")
    mp = os.path.join(out, "tiny-fifo-1-r1", "meta.json")
    m = json.load(open(mp))
    m["cpu_model"] = "Another CPU"
    json.dump(m, open(mp, "w"))
    st, _, err = causes(out)
    assert st != 0 and "Another CPU" in err, err
    st, _, err = causes(os.path.join(tmp, "empty"))
    assert st != 0 and "no runs" in err, err
    p = subprocess.run(["bash", SH, os.path.join(tmp, "x"), "1"], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, CAUSES_NEW=SCHEDBED, CAUSES_GROUPS="tiny nonsense", CAUSES_TINY="1",
                                CAUSES_DURATION="0.05"))
    assert p.returncode == 2 and "valid groups are: lifo fifo tiny tinytry wake oltp" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(tmp, "x")), os.listdir(os.path.join(tmp, "x"))  # nothing run
    p = subprocess.run(["bash", SH, os.path.join(tmp, "y"), "1"], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, CAUSES_NEW=os.path.join(tmp, "nothing")))
    assert p.returncode == 2 and "missing" in p.stderr, p.stderr


def main():
    global SCHEDBED
    ap = argparse.ArgumentParser()
    ap.add_argument("--schedbed", default=SCHEDBED)
    SCHEDBED = os.path.abspath(ap.parse_args().schedbed)
    return run_tests([test_every_configuration_alternated_and_the_table, test_two_machines_and_bad_input_refused],
                     "cause experiments (scripts/causes.sh, causes.py):")


if __name__ == "__main__":
    sys.exit(main())
