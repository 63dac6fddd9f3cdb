#!/usr/bin/python3
"""test_metg.py - METG through the manifest runner: the expanded sweep, a tiny real run, report.

    test_metg.py [--schedbed BIN]

What a user relies on: every run of the sweep has a probe of the machine's capacity just before
and just after it (its efficiency is measured against them); the manifest is the same on every
machine; a peer's per-execution CSV survives the runner and is read back; `report` refuses a
sweep directory whose runs are not all finished instead of computing METG from part of it.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, manifest, run_tests, script, sweep  # noqa: E402

metg = script("metg.py")
SCHEDBED = os.path.join(ROOT, "build", "release", "schedbed")




def tiny(d, *more):
    """2 policies and the oneTBB peer, 2 patterns, 2 levels, 2 repetitions."""
    metg("expand", "--out", d, "--schedbed", SCHEDBED, "--policies", "stealing,fifo", "--peers", "tbb",
         "--patterns", "trivial,stencil_1d", "--reps", "2", "--max-iterations", "64", "--min-iterations", "32",
         "--steps", "10", *more, check=0)
    return manifest(d)


def test_every_run_has_a_probe_on_either_side(tmp):
    lines = tiny(os.path.join(tmp, "a"))
    roles = [ln["tags"]["role"] for ln in lines]
    sweep_at = [i for i, r in enumerate(roles) if r == "sweep"]
    # 2 reps x 2 patterns x 2 levels x 3 systems
    assert len(sweep_at) == 24, roles
    for i in sweep_at:
        assert roles[i - 1] == "probe" and roles[i + 1] == "probe", (i, roles[i - 1:i + 2])
        assert lines[i - 1]["program"] == lines[i + 1]["program"] == "patterns_tbb", "the probe is the peer"
    # the peak round: every system once per repetition
    assert roles.count("peak") == 3 * 2
    # a one-thread probe opens every level
    assert roles.count("probe-1") == 2 * 2 * 2
    one = [ln for ln in lines if ln["tags"]["role"] == "probe-1"]
    assert all(ln["args"][ln["args"].index("--threads") + 1] == "1" for ln in one)
    # the systems' order rotates from level to level, so that drift does not favour one
    orders = []
    for k in range(0, len(sweep_at), 3):
        orders.append(tuple(lines[i]["tags"]["config"] for i in sweep_at[k:k + 3]))
    assert len(set(orders)) > 1, orders
    # machine-free and stable: the same command gives the same manifest
    again = tiny(os.path.join(tmp, "b"))
    assert again == lines


def test_a_configured_policy_is_a_system_of_its_own(tmp):
    d = os.path.join(tmp, "c")
    metg("expand", "--out", d, "--schedbed", SCHEDBED, "--policies", "stealing,stealing+steal_half=true+local_order=lifo",
         "--peers", "tbb", "--patterns", "trivial", "--reps", "1", "--max-iterations", "64", "--min-iterations", "64",
         check=0)
    runs = {}
    for ln in manifest(d):
        if ln["tags"]["kind"] == "policy":
            runs.setdefault(ln["tags"]["config"], []).append(ln["args"])
    assert set(runs) == {"stealing", "stealing+steal_half=true+local_order=lifo"}, set(runs)
    for args in runs["stealing+steal_half=true+local_order=lifo"]:
        assert args[args.index("--policy") + 1] == "stealing", args
        assert "steal_half=true" in args and "local_order=lifo" in args, args
    for args in runs["stealing"]:
        assert "steal_half=true" not in args, args
    for bad, why in (("stealing+steal_half", "POLICY+NAME=VALUE"), ("stealng+a=b", "unknown policy 'stealng'")):
        st, _, err = metg("expand", "--out", os.path.join(tmp, "bad"), "--schedbed", SCHEDBED, "--policies", bad)
        assert st != 0 and why in err and err.count("\n") == 1, (bad, st, err)
        assert not os.path.exists(os.path.join(tmp, "bad")), "a manifest from bad input"


def test_report_refuses_an_unfinished_sweep(tmp):
    d = os.path.join(tmp, "s")
    tiny(d)
    st, out, err = metg("report", d)
    assert st == 1, (st, err)
    assert "not finished" in err and "sweep.py run" in err, err
    assert not os.path.exists(os.path.join(d, "metg.md")), "a table from part of the runs"


def test_tiny_sweep_end_to_end(tmp):
    d = os.path.join(tmp, "s")
    lines = tiny(d, "--reps", "1")
    sweep("run", d, "--schedbed", SCHEDBED, check=0, timeout=600)
    metg("report", d, check=0)
    with open(os.path.join(d, "points.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(lines), (len(rows), len(lines))
    # the peer's CSV came through the runner: its task count is the graph's (10 steps x width 4)
    peer = [r for r in rows if r["system"] == "tbb" and r["pattern"] == "trivial"]
    assert peer and all(int(r["tasks"]) == 40 for r in peer), peer
    for k, r in enumerate(rows):
        if r["pattern"] in ("trivial", "stencil_1d"):
            lo = min(float(rows[k - 1]["flops"]), float(rows[k + 1]["flops"]))
            hi = max(float(rows[k - 1]["flops"]), float(rows[k + 1]["flops"]))
            # the run's yardstick is the mean of its two neighbouring probes (4 significant digits)
            assert lo * 0.999 <= float(r["peak_flops"]) <= hi * 1.001, (k, r, lo, hi)
            assert int(r["executions"]) >= 5, r
    with open(os.path.join(d, "metg.md")) as f:
        table = f.read()
    for name in ("stealing", "fifo", "oneTBB flow graph"):
        assert f"| {name} |" in table, table
    peak = json.load(open(os.path.join(d, "peak.json")))
    assert peak["peak_system"] == "tbb" and peak["peak_flops"] > 0
    # schedbed's runs and the peers' name one machine, so the table has one and says which
    host = subprocess.run([SCHEDBED, "host"], capture_output=True, text=True).stdout.split("\t")[0]
    assert host and peak["machine"].startswith(host + ", ") and f"Machine: {peak['machine']}." in table, (peak, host)


def test_order_by_interval_rule(tmp):
    """The report orders two systems only when their repetitions' intervals are apart, and an
    unreached 50% (infinite) loses to any reached one."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from sbmetg import order_lines
    systems = [("stealing", "policy"), ("global", "policy"), ("fifo", "policy"), ("tbb", "peer")]
    reps = {("stencil_1d", "stealing"): [4.0, 4.2, 4.4], ("stencil_1d", "global"): [5.8, 6.0, 6.2],
            ("stencil_1d", "fifo"): [float("inf")] * 3, ("stencil_1d", "tbb"): [4.3, 5.0, 6.1]}
    lines = order_lines(["stencil_1d"], systems, reps)
    got = {ln.split(":")[0]: ln.split(": ", 1)[1] for ln in lines if ln.startswith("- ")}
    assert got["- global against stealing"] == "global > stealing", got
    assert got["- fifo against stealing"] == "fifo > stealing", got
    assert got["- oneTBB flow graph against stealing"] == "no difference measured", got
    assert got["- global against oneTBB flow graph"] == "no difference measured", got
    assert got["- fifo against oneTBB flow graph"] == "fifo > tbb", got


def main():
    global SCHEDBED
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schedbed", default=SCHEDBED)
    a = ap.parse_args()
    SCHEDBED = os.path.abspath(a.schedbed)
    for prog in (SCHEDBED, os.path.join(os.path.dirname(SCHEDBED), "patterns_tbb")):
        if not os.access(prog, os.X_OK):
            print(f"test_metg.py: {prog} is missing (make schedbed peers)", file=sys.stderr)
            return 2
    return run_tests([test_every_run_has_a_probe_on_either_side, test_a_configured_policy_is_a_system_of_its_own,
                      test_report_refuses_an_unfinished_sweep, test_order_by_interval_rule,
                      test_tiny_sweep_end_to_end], "METG through the manifest runner")


if __name__ == "__main__":
    sys.exit(main())
