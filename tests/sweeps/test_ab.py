#!/usr/bin/python3
"""test_ab.py - the A/B verdict (scripts/ab.py, sbverdict.py) and the pooling rule compare.py shares.

    test_ab.py [--schedbed BIN]

A planted clear difference must come out faster or slower, planted overlapping samples "no
difference measured", and runs whose settings or machines differ must be refused, never pooled:
both on made-up runs (exact, no timing) and through the command a user runs on real runs.
"""
import argparse
import copy
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import PY, ROOT, run_tests  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import sbstats  # noqa: E402
import sbverdict  # noqa: E402

SCHEDBED = os.path.join(ROOT, "build", "release", "schedbed")
AB = os.path.join(ROOT, "scripts", "ab.py")
COMPARE = os.path.join(ROOT, "scripts", "compare.py")
META = {"git": {"sha": "abc", "dirty": False}, "compiler": {"version": "12"}, "host": "h", "cpu_model": "cpu X",
        "cores_online": 2, "topology": {"pus": 2}, "duration_s": 1, "warmup_s": 0, "jobs": None,
        "executor": {"name": "native"}, "core": {"thread_count": 2},
        "policy": {"name": "hybrid", "params": {"lightweight_job_level": 0}, "description": "d"},
        "workload": {"name": "w", "classes": ["x"], "params": {"rate": 0}}}


def run(name, thr, p99, **meta):
    """A made-up run: throughput thr, every latency percentile p99 (ns), meta.json changed by meta."""
    m = copy.deepcopy(META)
    for path, v in meta.items():
        node = m
        keys = path.split("__")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = v
    lat = {"count": 10, "p50": p99 / 2, "p99": p99}
    return {"dir": name, "meta": m, "summary": {"throughput": thr, "all": lat, "classes": {"x": lat}}}


def side(prefix, thr, p99, **meta):
    return [run(f"{prefix}{i}", t, p, **meta) for i, (t, p) in enumerate(zip(thr, p99))]


def lines_by_metric(lines):
    return {ln[:20].strip(): ln for ln in lines[1:]}


def test_clear_difference_is_faster_or_slower(tmp):
    a = side("a", [1000, 1010, 990, 1005, 995], [5e6, 5.1e6, 4.9e6, 5e6, 5.2e6])
    b = side("b", [2000, 2020, 1980, 2010, 1990], [1e6, 1.1e6, 0.9e6, 1e6, 1.05e6])
    got = lines_by_metric(sbverdict.table("A", a, "B", b))
    assert set(got) == {"throughput (jobs/s)", "p50 all", "p99 all", "p50 x", "p99 x"}, got
    for m, ln in got.items():
        assert ln.split("  ")[-1].startswith("faster"), ln  # more jobs/s and lower latencies: B is faster
    back = lines_by_metric(sbverdict.table("B", b, "A", a))
    for m, ln in back.items():
        assert ln.split("  ")[-1].startswith("slower"), ln


def test_overlapping_samples_are_no_difference(tmp):
    a = side("a", [1000, 1200, 900, 1100, 1050], [5e6, 6e6, 4e6, 5.5e6, 4.5e6])
    b = side("b", [1050, 950, 1150, 1000, 1100], [4.8e6, 5.2e6, 5.9e6, 4.2e6, 5e6])
    for m, ln in lines_by_metric(sbverdict.table("A", a, "B", b)).items():
        assert ln.endswith(sbstats.NO_DIFFERENCE), ln
    # a run that finished no job in its window has no percentile: it is left out, not a zero
    b[0]["summary"]["all"] = {"count": 0, "p50": None, "p99": None}
    got = lines_by_metric(sbverdict.table("A", a, "B", b))
    assert got["p99 all"].endswith(sbstats.NO_DIFFERENCE), got
    # two runs each cannot be ordered however far apart: too few for an interval
    said, _, _ = sbverdict.verdict([1, 1.1], [100, 101], True)
    assert said == sbstats.NO_DIFFERENCE, said


def test_lock_waits_are_a_metric_where_counted(tmp):
    """The depot lock's waits, as a share of busy time, get a line of their own (lower is better),
    only when the runs counted them, so that an A/B of the core shows the cause beside the result."""
    a = side("a", [1000] * 5, [5e6] * 5)
    b = side("b", [1000] * 5, [5e6] * 5)
    assert "lock wait %" not in lines_by_metric(sbverdict.table("A", a, "B", b))
    for r, wait in zip(a + b, [480, 500, 450, 520, 470, 1, 0, 2, 1, 0]):
        r["summary"]["counters"] = {"window": {"busy_ns": 1000, "lock_wait_ns": wait}}
    got = lines_by_metric(sbverdict.table("A", a, "B", b))
    assert got["lock wait %"].split("  ")[-1].startswith("faster"), got["lock wait %"]
    assert "48.00 [" in got["lock wait %"], got["lock wait %"]


def test_cores_used_is_a_metric_with_its_own_words(tmp):
    """The cores the process used in the window get a line where the runs recorded them: a cost, so
    B uses "fewer" or "more", never "faster"; overlapping samples stay no difference."""
    a = side("a", [1000] * 5, [5e6] * 5)
    b = side("b", [1000] * 5, [5e6] * 5)
    assert "cores used" not in lines_by_metric(sbverdict.table("A", a, "B", b))
    for r, c in zip(a + b, [1.9, 1.95, 1.85, 1.92, 1.88, 0.2, 0.25, 0.22, 0.21, 0.24]):
        r["summary"]["cpu"] = {"window_cores": c}
    got = lines_by_metric(sbverdict.table("A", a, "B", b))
    assert got["cores used"].split("  ")[-1].startswith("fewer"), got["cores used"]
    assert "1.90 [" in got["cores used"], got["cores used"]
    assert lines_by_metric(sbverdict.table("B", b, "A", a))["cores used"].split("  ")[-1].startswith("more")
    assert [r["verdict"] for r in sbverdict.rows(a, b) if r["metric"] == "cores used"] == ["fewer"]
    for r, c in zip(b, [1.9, 1.8, 2.0, 1.85, 1.95]):
        r["summary"]["cpu"] = {"window_cores": c}
    assert lines_by_metric(sbverdict.table("A", a, "B", b))["cores used"].endswith(sbstats.NO_DIFFERENCE)


def test_peak_memory_is_a_metric_with_its_own_words(tmp):
    """The process's peak resident memory gets a line where the runs recorded it, in MiB: a cost, so
    B uses "less" or "more", never "faster" or "fewer"; overlapping samples stay no difference."""
    a = side("a", [1000] * 5, [5e6] * 5)
    b = side("b", [1000] * 5, [5e6] * 5)
    assert "peak memory (MiB)" not in lines_by_metric(sbverdict.table("A", a, "B", b))
    for r, k in zip(a + b, [41000, 42000, 40000, 43000, 41500, 66000, 70000, 64000, 72000, 68000]):
        r["summary"]["cpu"] = {"peak_rss_kib": k}
    rows = {r["metric"]: r for r in sbverdict.rows(a, b)}
    assert rows["peak memory (MiB)"]["verdict"] == "more", rows
    assert abs(rows["peak memory (MiB)"]["a_median"] - 41500 / 1024) < 1e-9, rows
    got = lines_by_metric(sbverdict.table("A", a, "B", b))
    line = [ln for m, ln in got.items() if m.startswith("peak memory")][0]
    assert line.split("  ")[-1].startswith("more") and "40.5 [" in line, line
    assert [r["verdict"] for r in sbverdict.rows(b, a) if r["metric"] == "peak memory (MiB)"] == ["less"]
    for r, k in zip(b, [40500, 42500, 41000, 43500, 40000]):
        r["summary"]["cpu"] = {"peak_rss_kib": k}
    assert [r["verdict"] for r in sbverdict.rows(a, b) if r["metric"] == "peak memory (MiB)"] == [sbstats.NO_DIFFERENCE]


def refused(sides, want, across=()):
    try:
        sbverdict.check_pool(sides, across)
    except sbverdict.PoolError as e:
        assert all(w in str(e) for w in want), str(e)
        return
    raise AssertionError(f"pooled, wanted a refusal naming {want}")


def test_mismatched_settings_and_machines_are_refused(tmp):
    ok = side("a", [1] * 5, [1] * 5)
    sbverdict.check_pool({"A": ok, "B": side("b", [1] * 5, [1] * 5, policy__params={"lightweight_job_level": 20})})
    # one side with two settings of one parameter
    mixed = ok[:3] + side("c", [1] * 2, [1] * 2, policy__params={"lightweight_job_level": 20})
    refused({"A": mixed}, ["policy.params.lightweight_job_level", "0 vs 20", "not pooled"])
    refused({"A": ok[:3] + side("d", [1] * 2, [1] * 2, duration_s=5)}, ["duration_s"])
    refused({"A": ok[:3] + side("e", [1] * 2, [1] * 2, git={"sha": "def", "dirty": False})}, ["git.sha"])
    # the sides agree within themselves but were measured on two machines
    refused({"A": ok, "B": side("b", [1] * 5, [1] * 5, cpu_model="cpu Y")}, ["machine", "cpu_model", "cpu Y"])
    refused({"A": ok, "B": side("b", [1] * 5, [1] * 5, cores_online=4)}, ["cores_online"])
    # what compare asks: every policy on the same workload settings
    refused({"A": ok, "B": side("b", [1] * 5, [1] * 5, workload__params={"rate": 5})}, ["workload.params.rate"],
            across=("workload",))
    # a policy's reworded description is not a setting; the seed is not compared
    sbverdict.check_pool({"A": ok[:3] + side("f", [1] * 2, [1] * 2, policy__description="other", seed=7)})


MICRO = "--workload micro --threads 2 --set pattern=chain --set length=50 --jobs 20"


def ab(*args):
    return subprocess.run([PY, AB, "--schedbed", SCHEDBED, "--allow-dirty"] + list(args), capture_output=True,
                          text=True, timeout=300)


def test_ab_command_alternates_and_gives_the_verdict(tmp):
    d = os.path.join(tmp, "ab")
    a = "--policy stealing " + MICRO
    p = ab("--a", a, "--b", a + " --set work_ns=200000", d)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ab: 10 runs, A B A B" in p.stdout, p.stdout
    with open(os.path.join(d, "manifest.jsonl")) as f:
        lines = [json.loads(x) for x in f]
    assert [ln["tags"]["side"] for ln in lines] == ["A", "B"] * 5
    assert [ln["args"][-1] for ln in lines] == [str(k) for k in (1, 1, 2, 2, 3, 3, 4, 4, 5, 5)]  # seed per rep
    got = {ln.split()[0] + " " + ln.split()[1]: ln for ln in p.stdout.splitlines() if ln.startswith(("throughput", "p"))}
    # 200 µs of work in each of a job's 50 tasks: B far slower, in throughput and in latency
    assert got["throughput (jobs/s)"].rstrip().split("  ")[-1].startswith("slower"), p.stdout
    assert got["p50 all"].split("  ")[-1].startswith("slower"), p.stdout
    # the same verdicts, for scripts, in verdict.csv
    import csv
    with open(os.path.join(d, "verdict.csv"), newline="") as f:
        rows = {r["metric"]: r for r in csv.DictReader(f)}
    assert rows["throughput (jobs/s)"]["verdict"] == "slower" and int(rows["throughput (jobs/s)"]["b_runs"]) == 5, rows
    assert float(rows["p50 all"]["b_low"]) > float(rows["p50 all"]["a_high"]), rows
    again = subprocess.run([PY, AB, d], capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout == p.stdout[p.stdout.index("A: "):], again.stdout + again.stderr
    assert ab("--a", a, "--b", a, "--reps", "3", os.path.join(tmp, "few")).returncode == 2
    assert "--seed" in ab("--a", a + " --seed 3", "--b", a, os.path.join(tmp, "s")).stderr
    # bad input is refused before any run, naming the side
    bad = ab("--a", a, "--b", a + " --set no_such=1", os.path.join(tmp, "bad"))
    assert bad.returncode == 2 and "ab.B.r1: " in bad.stderr and "no_such" in bad.stderr, bad.stderr
    assert not os.path.exists(os.path.join(tmp, "bad")), "a refused A/B left a directory"


OTHER_SHA = "0123456789abcdef0123456789abcdef01234567"


def test_two_builds_each_with_its_own_commit(tmp):
    """--b-build runs side B with another program; its runs record their own commit (here a wrapper
    that names another one, as a carried build does), which the runner accepts for that side only
    and the table prints beside it. A manifest line naming a build nobody gave fails, saying how."""
    other = os.path.join(tmp, "other-schedbed")
    with open(other, "w") as f:
        f.write(f"#!/bin/sh\nSCHEDBED_SOURCE_SHA={OTHER_SHA} SCHEDBED_SOURCE_DIRTY=0 exec {SCHEDBED} \"$@\"\n")
    os.chmod(other, 0o755)
    d = os.path.join(tmp, "ab")
    a = "--policy stealing " + MICRO
    p = ab("--a", a, "--b", a, "--b-build", other, d)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(os.path.join(d, "manifest.jsonl")) as f:
        lines = [json.loads(x) for x in f]
    assert [ln.get("build") for ln in lines] == [None, "B"] * 5, lines
    b = next(x for x in p.stdout.splitlines() if x.startswith("B: "))
    a_line = next(x for x in p.stdout.splitlines() if x.startswith("A: "))
    assert f"commit {OTHER_SHA[:12]})" in b and OTHER_SHA[:12] not in a_line, p.stdout
    # the same manifest run again without the other program: B's lines cannot run, and say so
    sweep = os.path.join(ROOT, "scripts", "sweep.py")
    r = subprocess.run([PY, sweep, "run", d, "--schedbed", SCHEDBED, "--allow-dirty", "--retry-failed"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr  # all done before: nothing to rerun
    os.remove(os.path.join(d, "status", "ab.B.r1.json"))
    r = subprocess.run([PY, sweep, "run", d, "--schedbed", SCHEDBED, "--allow-dirty"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1 and "--build B=PATH" in r.stderr, r.stderr
    r = subprocess.run([PY, sweep, "run", d, "--schedbed", SCHEDBED, "--allow-dirty", "--retry-failed", "--build",
                        f"B={other}"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert ab("--a", a, "--b", a, "--b-build", os.path.join(tmp, "none"), os.path.join(tmp, "x")).returncode == 2


def test_compare_refuses_one_policy_with_two_settings(tmp):
    d = os.path.join(tmp, "cmp")
    for k, level in enumerate((0, 20)):
        out = os.path.join(d, "hybrid", f"r{k + 1}")
        subprocess.run([SCHEDBED, "run", "--quiet", "--policy", "hybrid", "--out", out, "--set",
                        f"lightweight_job_level={level}"] + MICRO.split(), check=True, capture_output=True)
    p = subprocess.run([PY, COMPARE, d], capture_output=True, text=True)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "policy.params.lightweight_job_level (0 vs 20)" in p.stderr and "not pooled" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(d, "compare.csv")), "a refused comparison wrote its table"


TESTS = [test_clear_difference_is_faster_or_slower, test_overlapping_samples_are_no_difference,
         test_lock_waits_are_a_metric_where_counted, test_cores_used_is_a_metric_with_its_own_words,
         test_peak_memory_is_a_metric_with_its_own_words,
         test_mismatched_settings_and_machines_are_refused, test_ab_command_alternates_and_gives_the_verdict,
         test_two_builds_each_with_its_own_commit, test_compare_refuses_one_policy_with_two_settings]

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--schedbed", default=SCHEDBED)
    a = ap.parse_args()
    SCHEDBED = os.path.abspath(a.schedbed)
    if not os.access(SCHEDBED, os.X_OK):
        print(f"test_ab.py: {SCHEDBED} is missing (make schedbed)", file=sys.stderr)
        sys.exit(2)
    sys.exit(run_tests(TESTS, "A/B tests (scripts/ab.py, sbverdict.py):"))
