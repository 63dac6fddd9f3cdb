#!/usr/bin/python3
"""test_scale.py - the scaling sweep (make scale) through the manifest runner: a small slice at 1
and 2 workers, run for real, reported, and the report's refusals.

    test_scale.py [--schedbed BIN]

What a user relies on: every case runs at every worker count for every system it names (the
LIFO cases only for the policies that have local_order, the peers only where they run the same
computation); the systems' order rotates so drift favours nobody; the report gives each system a
speedup over its own 1-worker median and names the machine; runs from two machines are refused
unless pooling is asked for, and then the output says so; bad input names the valid choices and
leaves no manifest.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, manifest, run_tests, script, sweep  # noqa: E402

scale = script("scale.py")
SCHEDBED = os.path.join(ROOT, "build", "release", "schedbed")




def slice_(d, cases="fib,fib-lifo,tiny,oltp-500,stencil", reps=2):
    scale("expand", "--out", d, "--schedbed", SCHEDBED, "--workers", "1,2", "--policies", "stealing,global",
          "--cases", cases, "--peers", "tbb", "--reps", reps, "--duration", "0.05", "--warmup", "0.02", check=0)
    return manifest(d)


def test_every_cell_is_in_the_manifest(tmp):
    lines = slice_(os.path.join(tmp, "m"), reps=3)
    cellset = {(ln["tags"]["case"], ln["tags"]["label"], ln["tags"]["workers"], ln["tags"]["rep"]) for ln in lines}
    for rep in (1, 2, 3):
        for w in (1, 2):
            for p in ("stealing", "global"):
                for c in ("fib", "tiny", "oltp-500", "stencil"):
                    assert (c, p, w, rep) in cellset, (c, p, w, rep)
            assert ("fib-lifo", "stealing", w, rep) in cellset
            assert ("fib-lifo", "global", w, rep) not in cellset, "global has no local_order"
            assert ("fib", "tbb", w, rep) in cellset and ("stencil", "tbb", w, rep) in cellset
            assert ("tiny", "tbb", w, rep) not in cellset, "no peer runs the tiny jobs"
    assert len(lines) == len(cellset), "one run per cell and repetition"
    # the workers come from the line itself: --threads for schedbed, the thread count for a peer
    for ln in lines:
        w = str(ln["tags"]["workers"])
        assert (ln["args"][ln["args"].index("--threads") + 1] == w if "--threads" in ln["args"]
                else ln["args"][-1] == w), ln
    # open loop scales with the workers: 500 transactions/s and 16 clients per worker
    o2 = [ln for ln in lines if ln["tags"]["case"] == "oltp-500" and ln["tags"]["workers"] == 2][0]
    assert "rate=1000" in o2["args"] and "clients=32" in o2["args"], o2["args"]
    # the order of the systems in a cell rotates from one cell to the next
    firsts = {ln["tags"]["label"] for ln in lines if ln["tags"]["case"] == "fib"}
    starts = set()
    for i, ln in enumerate(lines):
        if ln["tags"]["case"] == "fib" and (i == 0 or lines[i - 1]["tags"]["case"] != "fib"):
            starts.add(ln["tags"]["label"])
    assert len(starts) > 1 and starts <= firsts, starts


def test_bad_input_names_the_choices(tmp):
    for args, want in ((["--cases", "fob"], "valid: oltp-500"), (["--policies", "stealin"], "valid:"),
                       (["--peers", "cilk"], "valid: omp, tbb"), (["--workers", "one"], "--workers")):
        d = os.path.join(tmp, "bad")
        st, _, err = scale("expand", "--out", d, "--schedbed", SCHEDBED, *args)
        assert st != 0 and want in err, (args, st, err)
        assert not os.path.exists(os.path.join(d, "manifest.jsonl")), "a manifest from bad input"


def test_slice_end_to_end(tmp):
    d = os.path.join(tmp, "s")
    lines = slice_(d)
    st, _, err = scale("report", d)
    assert st != 0 and "not finished" in err, "a report of a sweep that never ran"
    sweep("run", d, "--schedbed", SCHEDBED, check=0)
    _, out, _ = scale("report", d, check=0)
    with open(os.path.join(d, "scale.csv")) as f:
        rows = list(csv.DictReader(f))
    got = {(r["case"], r["system"], int(r["workers"])) for r in rows}
    want = {(ln["tags"]["case"], ln["tags"]["label"], ln["tags"]["workers"]) for ln in lines}
    assert got == want, want ^ got
    meta = json.load(open(os.path.join(d, lines[0]["out"], "meta.json")))
    for r in rows:
        assert meta["cpu_model"] in r["machine"], r["machine"]
        assert float(r["throughput"]) > 0 and float(r["lo"]) <= float(r["throughput"]) <= float(r["hi"]), r
        if r["workers"] == "1":
            assert abs(float(r["speedup"]) - 1) < 1e-9, r
        if r["system"] != "tbb":
            assert float(r["cores"]) > 0, r
    for c in ("fib", "fib-lifo", "tiny", "oltp-500", "stencil"):
        assert os.path.exists(os.path.join(d, f"scale-{c}.png")), c
    assert f"# Scaling on {meta['cpu_model']}" in out
    # a run from another machine: refused, or pooled and said so
    other = next(ln for ln in lines if ln["program"] == "schedbed")
    mp = os.path.join(d, other["out"], "meta.json")
    m = json.load(open(mp))
    m["cpu_model"] = "Another CPU"
    json.dump(m, open(mp, "w"))
    st, _, err = scale("report", d)
    assert st != 0 and "Another CPU" in err and "--allow-mixed-machines" in err, err
    _, out, _ = scale("report", d, "--allow-mixed-machines", check=0)
    assert "MIXED MACHINES" in out


def test_carried_programs_name_their_commit(tmp):
    """Programs carried to another machine: schedbed's meta.json and the sweep runner take the
    commit carry.sh recorded, clean or dirty as it was packed, where git is missing and also where
    git answers for a checkout beside them (a copy of one can be stale: the packed commit is the
    code that runs); with no record the program names the commit it was built from, asking no git
    when it runs, not even one pointed at another repository."""
    carry = os.path.join(tmp, "carry")
    os.makedirs(os.path.join(carry, "lib"))
    for dirty, path in (("0", ["PATH=/nonexistent"]), ("1", ["PATH=/nonexistent"]), ("0", [])):
        with open(os.path.join(carry, "SOURCE"), "w") as f:
            f.write(f"SCHEDBED_SOURCE_SHA=0123456789abcdef0123456789abcdef01234567\nSCHEDBED_SOURCE_DIRTY={dirty}\n")
        out = os.path.join(tmp, "run" + dirty + str(len(path)))
        p = subprocess.run([os.path.join(ROOT, "scripts", "carry.sh"), "run", carry, "/usr/bin/env", *path,
                            SCHEDBED, "run", "--policy", "serial", "--workload", "tiny", "--threads", "1", "--jobs", "20",
                            "-q", "-o", out], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        git = json.load(open(os.path.join(out, "meta.json")))["git"]
        assert git == {"sha": "0123456789abcdef0123456789abcdef01234567", "dirty": dirty == "1"}, git
        tree = "'/nonexistent-tree'" if path else "sbtree.TREE"  # no checkout, or this one (at another commit)
        probe = f"import sys; sys.path.insert(0, 'scripts'); import sbtree; print(sbtree.tree_state({tree}))"
        p = subprocess.run([os.path.join(ROOT, "scripts", "carry.sh"), "run", carry, "/usr/bin/python3", "-c", probe],
                           capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert p.returncode == 0 and "0123456789abcdef" in p.stdout and ("[]" in p.stdout) == (dirty == "0"), p.stdout
    # the build's own state, as the Makefile compiled it in
    with open(os.path.join(os.path.dirname(os.path.dirname(SCHEDBED)), "source-state.h")) as f:
        built = re.search(r'SB_SOURCE_SHA "([0-9a-f]{40})"', f.read()).group(1)
    other = os.path.join(tmp, "other")
    os.makedirs(other)
    for args in (["git", "init", "-q", other], ["git", "-C", other, "-c", "user.name=t", "-c", "user.email=t@e",
                                                 "commit", "-q", "--allow-empty", "-m", "another repository"]):
        subprocess.run(args, check=True, capture_output=True)
    for env in (["PATH=/nonexistent"], [f"GIT_DIR={os.path.join(other, '.git')}"]):
        out = os.path.join(tmp, "bare" + str(len(env[0])))
        subprocess.run(["/usr/bin/env", *env, SCHEDBED, "run", "--policy", "serial", "--workload", "tiny", "--threads",
                        "1", "--jobs", "20", "-q", "-o", out], capture_output=True, timeout=60, check=True)
        assert json.load(open(os.path.join(out, "meta.json")))["git"]["sha"] == built, env


def test_pack_without_the_simulator(tmp):
    """carry.sh pack --no-sim: programs built without SimGrid (make NOSIM=1) carry none of its
    libraries, refuse --executor sim with a usage error that says why, and run natively as ever."""
    carry = os.path.join(tmp, "nosim")
    p = subprocess.run([os.path.join(ROOT, "scripts", "carry.sh"), "pack", "--no-sim", carry], capture_output=True,
                       text=True, timeout=900, cwd=ROOT)
    assert p.returncode == 0 and os.path.exists(carry + ".tar.xz"), p.stdout + p.stderr
    libs = os.listdir(os.path.join(carry, "lib"))
    assert "libhwloc.so.15" in libs and not any("simgrid" in x or "ns3" in x for x in libs), libs
    sb = os.path.join(carry, "bin", "schedbed")
    run = [os.path.join(ROOT, "scripts", "carry.sh"), "run", carry, sb, "run", "--policy", "serial", "--workload",
           "tiny", "--threads", "1", "--jobs", "20", "-q"]
    p = subprocess.run(run + ["--executor", "sim", "-o", os.path.join(tmp, "sim")], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and "without the SimGrid executor" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(tmp, "sim", "summary.json"))
    p = subprocess.run(run + ["-o", os.path.join(tmp, "native")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and json.load(open(os.path.join(tmp, "native", "summary.json")))["jobs"] == 20, p.stderr


def main():
    global SCHEDBED
    ap = argparse.ArgumentParser()
    ap.add_argument("--schedbed", default=SCHEDBED)
    SCHEDBED = os.path.abspath(ap.parse_args().schedbed)
    return run_tests([test_every_cell_is_in_the_manifest, test_bad_input_names_the_choices, test_slice_end_to_end,
                      test_carried_programs_name_their_commit, test_pack_without_the_simulator],
                     "scale sweep (scripts/scale.py):")


if __name__ == "__main__":
    sys.exit(main())
