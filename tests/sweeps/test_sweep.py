#!/usr/bin/python3
"""test_sweep.py - manifests, the local runner, collect, and make reproduce's directory rules.

    test_sweep.py [--schedbed BIN]

Every test runs scripts/sweep.py (or experiments.py) on real, tiny schedbed runs and checks what
a user relies on: the PAPER.md descriptions expand to stable, machine-free manifests; a finished
run is not repeated; timing runs never overlap; a failing line, a missing program, a killed run
and a half-written result directory each end in a message naming the run and are never
collected; reproduce leaves results/paper/ alone unless told to update it.
"""
import csv
import glob
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (PY, ROOT, SWEEP, cli, config, description, manifest, run_tests, status, sweep)  # noqa: E402

SCHEDBED = os.path.join(ROOT, "build", "release", "schedbed")


def four_runs(tmp, timing=True, name="t"):
    """2 configurations x 2 repetitions, expanded into tmp/<name>-sweep."""
    desc = description(tmp, name, [config("stealing"), config("serial", policy="serial")], timing=timing)
    d = os.path.join(tmp, name + "-sweep")
    sweep("expand", desc, "--out", d, check=0)
    return d


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_paper_descriptions_expand_stable_and_machine_free(tmp):
    descs = sorted(glob.glob(os.path.join(ROOT, "sweeps", "*.json")))
    assert len(descs) >= 14, descs
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    sweep("expand", *descs, "--out", a, check=0)
    sweep("expand", *descs, "--out", b, check=0)
    ta, tb = open(os.path.join(a, "manifest.jsonl")).read(), open(os.path.join(b, "manifest.jsonl")).read()
    assert ta == tb, "the same descriptions expanded twice gave different manifests"
    lines = manifest(a)
    ids = [ln["id"] for ln in lines]
    assert len(ids) == len(set(ids)), "ids are not unique"
    # the committed results stay small enough to clone (runs are packed: sbexpreport.pack_runs); a
    # packed load-sweep run is about 9 KB, so the whole capacity sweep (1,755 runs) takes some 16 MB.
    # The whole tracked tree (about 66 MB, most of it this) travels to a lent many-core machine,
    # whose calls take 64 MiB (67.1 MB) with the programs they carry (about 1 MB): this bound keeps
    # it so, with half a megabyte to spare; the next result must make room, not raise it.
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(os.path.join(ROOT, "results", "paper"))
               for f in fs)
    assert size < 47e6, f"results/paper holds {size / 1e6:.1f} MB"
    # every experiment of PAPER.md is there, with its repetitions
    exps = {ln["tags"]["experiment"] for ln in lines}
    for e in ("spawn", "policies", "hybrid", "wake", "batch", "sweep", "trace-cost"):
        assert e in exps, e
    assert sum(1 for ln in lines if ln["tags"]["experiment"] == "spawn") == 8 * 9
    # at least five repetitions of every configuration, each its own seed
    for e in exps:
        runs = {}
        for ln in (x for x in lines if x["tags"]["experiment"] == e):
            runs.setdefault((ln["tags"]["config"], ln["tags"].get("variant"), ln["tags"].get("rate")), []).append(ln)
        for key, rs in runs.items():
            assert len({r["tags"]["rep"] for r in rs}) >= 5, (e, key, len(rs))
            seeds = {r["tags"]["rep"]: r["tags"]["seed"] for r in rs if r["tags"]["seed"] != ""}
            assert len(set(seeds.values())) == len(seeds), (e, key, seeds)
    host = socket.gethostname()
    for ln in lines:
        text = json.dumps(ln)
        assert host not in text and ROOT not in text and tmp not in text, f"machine-specific: {text}"
        assert not os.path.isabs(ln["out"])
    # same directory, same manifest: kept (resume); other runs: refused, naming the file
    sweep("expand", *descs, "--out", a, check=0)
    code, _, err = sweep("expand", descs[0], "--out", a)
    assert code == 2 and "describes other runs" in err, err
    # a trial with shorter runs changes the arguments, not the runs
    c = os.path.join(tmp, "c")
    sweep("expand", *descs, "--out", c, "--duration", "0.5", "--reps", "1", check=0)
    short = manifest(c)
    assert {ln["id"] for ln in short} <= set(ids)
    timed = [ln for ln in short if "--duration" in ln["args"]]
    assert timed and all(ln["args"][ln["args"].index("--duration") + 1] == "0.5" for ln in timed)


def test_run_collect_and_resume(tmp):
    d = four_runs(tmp, timing=False)
    code, _, err = sweep("run", d, "--schedbed", SCHEDBED)
    assert code == 0, err
    assert "[   4/4]" in err and "left)" in err, f"no progress lines: {err}"
    _, out, _ = sweep("collect", d, check=0)
    rows = read_csv(out.strip())
    assert [r["id"] for r in rows] == [ln["id"] for ln in manifest(d)]
    assert {(r["label"], r["rep"]) for r in rows} == {(lab, k) for lab in ("stealing", "serial") for k in "12"}
    for r in rows:  # the summary's figures, with the run's own accounting
        assert r["reconciliation.ok"] == "1" and r["reconciliation.jobs_done"] == "20"
        assert r["reconciliation.tasks_run"] == "1000" and float(r["throughput"]) > 0
        assert r["policy"] == r["label"]
    # resumable: a second run repeats nothing
    before = {ln["id"]: os.stat(os.path.join(d, ln["out"], "summary.json")).st_ino for ln in manifest(d)}
    code, _, err = sweep("run", d, "--schedbed", SCHEDBED)
    assert code == 0 and "4 finished before, 0 to run" in err, err
    after = {ln["id"]: os.stat(os.path.join(d, ln["out"], "summary.json")).st_ino for ln in manifest(d)}
    assert before == after, "a finished run was run again"


def intervals(d):
    out = []
    for ln in manifest(d):
        st = status(d, ln["id"])
        out.append((st["t0"], st["t0"] + st["elapsed_s"]))
    return sorted(out)


def test_timing_runs_alone_others_in_parallel(tmp):
    timed = ["--duration", "0.6", "--warmup", "0"]  # long enough that two runs started together overlap
    cfgs = [dict(config("a"), args=timed), dict(config("b"), args=timed)]
    timing = os.path.join(tmp, "timing")
    sweep("expand", description(tmp, "timing", cfgs, timing=True), "--out", timing, check=0)
    sweep("run", timing, "--schedbed", SCHEDBED, check=0)
    iv = intervals(timing)
    for (s0, e0), (s1, _) in zip(iv, iv[1:]):
        assert s1 >= e0 - 0.05, f"timing runs overlapped: {iv}"
    free = os.path.join(tmp, "free")
    sweep("expand", description(tmp, "free", cfgs, timing=False), "--out", free, check=0)
    sweep("run", free, "--schedbed", SCHEDBED, "--jobs", "2", check=0)
    iv = intervals(free)
    assert iv[1][0] < iv[0][1], f"runs marked not timing-sensitive did not run side by side with --jobs 2: {iv}"
    # a width for the other runs (validate_sim.py's --jobs, for its simulated half) leaves timing runs alone
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import sbrun
    wide = os.path.join(tmp, "wide")
    sweep("expand", description(tmp, "wide", cfgs, timing=True), "--out", wide, check=0)
    assert sbrun.run_dir(wide, SCHEDBED, width=2) == 0
    iv = intervals(wide)
    for (s0, e0), (s1, _) in zip(iv, iv[1:]):
        assert s1 >= e0 - 0.05, f"timing runs overlapped under a width of 2: {iv}"


def test_failing_line_is_named_and_never_collected(tmp):
    desc = description(tmp, "bad", [config("good"), config("bad", sets=("pattern=chain", "no_such_param=1"))],
                       reps=1)
    d = os.path.join(tmp, "bad-sweep")
    sweep("expand", desc, "--out", d, check=0)
    code, _, err = sweep("run", d, "--schedbed", SCHEDBED)
    assert code == 1 and "bad.c1.r1" in err and "1 of 2 runs failed" in err, err
    st = status(d, "bad.c1.r1")
    assert st["state"] == "failed" and st["exit"] == 2 and "bad input" in st["message"], st
    assert "no_such_param" in st["message"], st
    code, _, err = sweep("collect", d)
    assert code == 1 and "bad.c1.r1 (failed: bad input" in err, err
    assert not os.path.exists(os.path.join(d, "runs.csv")), "collect wrote a CSV despite a failed run"
    # not retried unless asked; retried (and failing again) when asked
    log = os.path.join(d, "logs", "bad.c1.r1.log")
    m0 = os.stat(log).st_mtime_ns
    code, _, err = sweep("run", d, "--schedbed", SCHEDBED)
    assert code == 1 and "not rerun without --retry-failed" in err and os.stat(log).st_mtime_ns == m0, err
    code, _, err = sweep("run", d, "--schedbed", SCHEDBED, "--retry-failed")
    assert code == 1 and os.stat(log).st_mtime_ns != m0, err
    # a load sweep may leave out what failed, by name; the good run is collected
    code, out, err = sweep("collect", d, "--leave-out-failed")
    assert code == 0 and "left out bad.c1.r1" in err, err
    assert [r["id"] for r in read_csv(out.strip())] == ["bad.c0.r1"]


def test_missing_program_on_the_node(tmp):
    d = four_runs(tmp)
    code, _, err = sweep("run", d, "--schedbed", os.path.join(tmp, "nowhere", "schedbed"))
    assert code == 2 and "not an executable" in err, err
    # what an array task does on a node without the program
    code, out, _ = sweep("task", d, "--index", "1", "--schedbed", os.path.join(tmp, "nowhere", "schedbed"))
    assert code == 1, out
    st = status(d, manifest(d)[1]["id"])
    assert st["state"] == "failed" and "missing or not executable on " + socket.gethostname() in st["message"], st
    code, _, err = sweep("collect", d)
    assert code == 1 and "missing or not executable" in err and "4 of 4 runs are not finished" in err, err


def test_killed_run_is_named_and_never_collected(tmp):
    cfgs = [dict(config("long"), args=["--duration", "30", "--warmup", "0"])]
    d = os.path.join(tmp, "kill")
    sweep("expand", description(tmp, "kill", cfgs, reps=1), "--out", d, check=0)
    p = subprocess.Popen([PY, SWEEP, "task", d, "--index", "0", "--schedbed", SCHEDBED, "--allow-dirty"], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        out = os.path.join(d, manifest(d)[0]["out"])
        # killed once schedbed is measuring: its temporary directory exists beside the final place
        while not glob.glob(os.path.join(os.path.dirname(out), ".r1.tmp-*")):
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.05)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    code, _, err = sweep("collect", d)
    assert code == 1 and "kill.c0.r1 (running: started" in err and "never finished" in err, err
    code, _, err = sweep("status", d)
    assert code == 1 and "1 running" in err, err
    assert not os.path.exists(out), "a killed run left a result directory in place"


def test_interrupt_starts_nothing_new(tmp):
    cfgs = [dict(config(x), args=["--duration", "5", "--warmup", "0"]) for x in "ab"]
    d = os.path.join(tmp, "int")
    sweep("expand", description(tmp, "int", cfgs, reps=1), "--out", d, check=0)
    p = subprocess.Popen([PY, SWEEP, "run", d, "--schedbed", SCHEDBED, "--allow-dirty"], start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not glob.glob(os.path.join(d, "int", "c0", ".r1.tmp-*")):
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.05)
        os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C does: the runner and its schedbed
        _, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 130 and "interrupted with 1 runs not started" in err, err
    assert status(d, "int.c0.r1")["exit"] == 130 and not os.path.exists(os.path.join(d, "int", "c0", "r1"))
    assert not os.path.exists(os.path.join(d, "status", "int.c1.r1.json")), "a run started after Ctrl-C"


def test_half_written_result_is_never_collected(tmp):
    d = four_runs(tmp, timing=False)
    sweep("run", d, "--schedbed", SCHEDBED, "--jobs", "2", check=0)
    lines = manifest(d)
    os.remove(os.path.join(d, lines[0]["out"], "summary.json"))
    with open(os.path.join(d, lines[3]["out"], "meta.json"), "w") as f:
        f.write('{"git": ')  # cut short
    code, _, err = sweep("collect", d)
    assert code == 1 and "2 of 4 runs are not finished" in err, err
    assert f"{lines[0]['id']} (failed: recorded as done but summary.json is missing" in err, err
    assert f"{lines[3]['id']} (failed: recorded as done but meta.json is unreadable" in err, err
    # on request they are run again, from a clean directory, and then collected
    sweep("run", d, "--schedbed", SCHEDBED, "--retry-failed", check=0)
    _, out, _ = sweep("collect", d, check=0)
    assert len(read_csv(out.strip())) == 4


def test_slurm_batch_script_and_array(tmp):
    """The submission itself, with a stand-in sbatch that records its arguments (the real Slurm
    is in slurm_test.py): one array task per unfinished line, K from the timing rule."""
    d = four_runs(tmp)
    fake = os.path.join(tmp, "sbatch")
    with open(fake, "w") as f:
        f.write(f'#!/bin/sh\necho "$@" > {tmp}/sbatch.args\necho 42\n')
    os.chmod(fake, 0o755)
    # line 1 is finished already: it is not submitted again
    sweep("task", d, "--index", "1", "--schedbed", SCHEDBED, check=0)
    sweep("slurm", d, "--schedbed", SCHEDBED, "--sbatch", fake, "--partition", "short", "--time", "5:00", check=0)
    args = open(os.path.join(tmp, "sbatch.args")).read().split()
    assert "--array=0,2-3%1" in args, args
    script = open(os.path.join(d, "slurm", "batch.sh")).read()
    for want in ("#SBATCH --partition=short", "#SBATCH --time=5:00", "#SBATCH --cpus-per-task=2",
                 f"task {os.path.abspath(d)} --schedbed {SCHEDBED}"):
        assert want in script, (want, script)
    sweep("slurm", d, "--schedbed", SCHEDBED, "--sbatch", fake, "--exclusive", "--max-parallel", "3", check=0)
    args = open(os.path.join(tmp, "sbatch.args")).read().split()
    assert "--array=0,2-3%3" in args and "#SBATCH --exclusive" in open(os.path.join(d, "slurm", "batch.sh")).read()


def tree_digest(path, skip=()):
    """The files under path, names and bytes (a .gz file's once decompressed: runs.tar.xz stores
    them at gzip level 0, sbexpreport.pack_runs); names ending in one of skip are left out."""
    h = hashlib.sha256()
    for dirpath, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for name in sorted(f for f in files if not f.endswith(tuple(skip))):
            p = os.path.join(dirpath, name)
            h.update(os.path.relpath(p, path).encode())
            with (gzip.open if name.endswith(".gz") else open)(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def test_reproduce_leaves_paper_alone_and_compares(tmp):
    paper = os.path.join(ROOT, "results", "paper")
    before = tree_digest(paper)
    out = os.path.join(tmp, "repro")
    p = subprocess.run([PY, os.path.join(ROOT, "scripts", "experiments.py"), "--schedbed", SCHEDBED, "--allow-dirty", "--reps", "3",
                        "--duration", "0.2", "--warmup", "0", "--out", out, "placement"],
                       capture_output=True, text=True, timeout=300, cwd=tmp)
    assert p.returncode == 0, p.stdout + p.stderr
    assert tree_digest(paper) == before, "make reproduce changed results/paper/ without --update-paper"
    vs = open(os.path.join(out, "vs-paper.md")).read()
    # each configuration's new median next to the committed one, with the ratio
    for label in ("preferred worker (jogasaki)", "round robin per call", "least loaded"):
        line = next(x for x in vs.splitlines() if x.startswith(f"| {label} |"))
        assert line.count(" / ") == 5 and "(" in line, line
    assert os.path.exists(os.path.join(out, "placement", "table.md"))
    assert os.path.exists(os.path.join(out, "placement", "placement.png"))
    # into results/paper directly: refused
    p = subprocess.run([PY, os.path.join(ROOT, "scripts", "experiments.py"), "--out", os.path.join(paper, "x"),
                        "placement"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--update-paper" in p.stderr, p.stderr
    # --update-paper replaces the experiment's directory, and only it (on a copy of results/paper)
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import sbexpreport
    fake = os.path.join(tmp, "paper")
    shutil.copytree(paper, fake)
    sbexpreport.PAPER = fake
    other = tree_digest(os.path.join(fake, "batch"))
    import sbexp
    sbexpreport.update_paper(out, ["placement"], {"placement": sbexp.descriptions()["placement"]})
    # the same files, the runs packed into one archive that holds each run's files unchanged
    import tarfile
    packed = os.path.join(fake, "placement")
    with tarfile.open(os.path.join(packed, "runs.tar.xz")) as tar:
        tar.extractall(packed)
    os.remove(os.path.join(packed, "runs.tar.xz"))
    # its gzip files stored, not compressed twice: xz compresses them across runs
    gz = glob.glob(os.path.join(packed, "**", "*.gz"), recursive=True)
    assert gz, "no gzip file was packed"
    for p in gz:
        with gzip.open(p, "rb") as f:
            assert os.path.getsize(p) > len(f.read()), f"{p} is compressed inside runs.tar.xz"
    # and its rows compressed, the same bytes once unpacked (sbcollect.compress_rows)
    import lzma
    assert not os.path.exists(os.path.join(packed, "runs.csv"))
    with lzma.open(os.path.join(packed, "runs.csv.xz")) as f, open(os.path.join(packed, "runs.csv"), "wb") as g:
        shutil.copyfileobj(f, g)
    os.remove(os.path.join(packed, "runs.csv.xz"))
    # (but the PDFs: results/paper/ keeps the PNGs only, sbresults.COMMITTED)
    assert tree_digest(packed) == tree_digest(os.path.join(out, "placement"), skip=(".pdf",))
    assert not glob.glob(os.path.join(packed, "*.pdf")) and glob.glob(os.path.join(out, "placement", "*.pdf"))
    assert tree_digest(os.path.join(fake, "batch")) == other
    assert not os.path.exists(os.path.join(fake, "placement.old"))
    # the interval rule against the committed table: every figure compared, the count said; a
    # committed median planted 100 times too high (interval and all) is the one that DIFFERS
    assert re.search(r"^interval rule: \d+ of \d+ figures differ", vs, re.M), vs
    assert "these runs: " in vs and "; committed: " in vs, vs
    import sbdesc
    d = sbdesc.load_description(os.path.join(ROOT, "sweeps", "placement.json"))
    rows = sbexpreport.sbcollect.read_rows(os.path.join(out, "placement", "runs.csv"))
    new = sbexpreport.medians(d, rows)["least loaded"]["jobs/s"]
    table = os.path.join(fake, "placement", "table.csv")
    with open(table, newline="") as f:
        got = list(csv.DictReader(f))
    for r in got:
        if r["configuration"] == "least loaded":
            for i, k in enumerate(("median", "ci_low", "ci_high")):
                r[f"jobs/s {k}"] = str(new[i] * 100)
    with open(table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(got[0]))
        w.writeheader()
        w.writerows(got)
    import sbcompare
    sbcompare.PAPER = fake
    text = sbcompare.compare_with_paper("placement", d, rows, "some machine")
    assert text.splitlines()[-1].endswith("1 of 15 figures differ from the committed ones: least loaded jobs/s"), text
    assert "(0.01, DIFFERS)" in text, text
    assert "not the same machine" in text, text


def test_vs_build_alternates_two_builds_and_compares(tmp):
    """--vs-build: every run twice, this build then the other, and vs-build.md with each side's
    commit (the other's its own: a wrapper naming another one, as a carried build does) and the
    interval rule's count over every figure."""
    sha = "0123456789abcdef0123456789abcdef01234567"
    other = os.path.join(tmp, "other-schedbed")
    with open(other, "w") as f:
        f.write(f"#!/bin/sh\nSCHEDBED_SOURCE_SHA={sha} SCHEDBED_SOURCE_DIRTY=0 exec {SCHEDBED} \"$@\"\n")
    os.chmod(other, 0o755)
    out = os.path.join(tmp, "vs")
    p = subprocess.run([PY, os.path.join(ROOT, "scripts", "experiments.py"), "--schedbed", SCHEDBED, "--allow-dirty",
                        "--reps", "3", "--duration", "0.2", "--warmup", "0", "--out", out, "--vs-build", other,
                        "placement"], capture_output=True, text=True, timeout=300, cwd=tmp)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = [json.loads(x) for x in open(os.path.join(out, "manifest.jsonl"))]
    assert [ln["id"] for ln in lines[:4]] == ["placement.c0.r1", "placement@vs.c0.r1", "placement.c1.r1",
                                               "placement@vs.c1.r1"], lines[:4]
    assert [ln.get("build") for ln in lines] == [None, "vs"] * 9
    vs = open(os.path.join(out, "vs-build.md")).read()
    assert f"the other build: commit {sha[:12]};" in vs and "alternated run by run on " in vs, vs
    assert re.search(r"^interval rule: \d+ of 15 figures differ from the other build's", vs, re.M), vs
    # the experiment's own table holds this build's runs only
    assert "| 3 |" in open(os.path.join(out, "placement", "table.md")).read()


def git(tree, *args):
    subprocess.run(["git", "-C", tree, "-c", "user.name=test", "-c", "user.email=test@example.org"] + list(args),
                   check=True, capture_output=True)


def test_vs_build_runs_the_other_builds_peers(tmp):
    """--vs-build on an experiment with peers (spawn): the peers beside the other build's schedbed
    run too, and each names the commit of the checkout that holds them (a peer writes no meta.json
    of its own; before, every such run failed for want of a commit)."""
    old = os.path.join(tmp, "old")
    os.makedirs(os.path.join(old, "bin"))
    for prog in ("schedbed", "peers_omp", "peers_tbb"):
        shutil.copy(os.path.join(os.path.dirname(SCHEDBED), prog), os.path.join(old, "bin", prog))
    git(old, "init", "-q")
    git(old, "add", "-A")
    git(old, "commit", "-q", "-m", "the other build")
    sha = subprocess.run(["git", "-C", old, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    out = os.path.join(tmp, "vs")
    p = subprocess.run([PY, os.path.join(ROOT, "scripts", "experiments.py"), "--schedbed", SCHEDBED, "--allow-dirty",
                        "--reps", "3", "--out", out, "--vs-build", os.path.join(old, "bin", "schedbed"), "spawn"],
                       capture_output=True, text=True, timeout=600, cwd=tmp)
    assert p.returncode == 0, p.stdout + p.stderr
    peers = [ln for ln in manifest(out) if ln.get("build") == "vs" and ln["program"] != "schedbed"]
    assert len(peers) == 4 * 3, len(peers)
    for ln in peers:
        git_ = json.load(open(os.path.join(out, ln["out"], "meta.json")))["git"]
        assert git_["sha"] == sha and git_["dirty"] is False, git_


def test_dirty_tree_is_refused(tmp):
    """run refuses a tree with uncommitted changes, naming them, and runs nothing; --allow-dirty
    runs and marks every row dirty. On a tree of its own: a copy of the scripts, committed."""
    tree = os.path.join(tmp, "tree")
    shutil.copytree(os.path.join(ROOT, "scripts"), os.path.join(tree, "scripts"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    git(tree, "init", "-q")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "scripts")
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import sbtree
    head = subprocess.run(["git", "-C", tree, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert sbtree.require_clean(False, tree=tree) == {"sha": head, "dirty": False}
    d = four_runs(tmp)
    copied = os.path.join(tree, "scripts", "sweep.py")
    with open(os.path.join(tree, "scripts", "sbcli.py"), "a") as f:
        f.write("# changed\n")
    with open(os.path.join(tree, "new-file.c"), "w") as f:
        f.write("int x;\n")
    for cmd in (["run", d], ["task", d, "--index", "0"]):
        p = subprocess.run([PY, copied] + cmd + ["--schedbed", SCHEDBED], capture_output=True, text=True, timeout=60)
        assert p.returncode == 1, (cmd, p.stdout + p.stderr)
        err = p.stderr.strip()
        assert len(err.splitlines()) == 1 and "uncommitted changes" in err and "--allow-dirty" in err, err
        assert "scripts/sbcli.py" in err and "new-file.c" in err, err
        assert not os.path.exists(os.path.join(d, "status")), "a run started from a dirty tree"
    # allowed: it runs, and every row says dirty
    p = subprocess.run([PY, copied, "run", d, "--schedbed", SCHEDBED, "--allow-dirty"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    _, out, _ = sweep("collect", d, check=0)
    rows = read_csv(out.strip())
    assert len(rows) == 4 and all(r["dirty"] == "1" and len(r["git_sha"]) == 40 for r in rows), rows
    # a clean runner accepts only a result naming its own commit, from a clean tree
    fake = os.path.join(tmp, "fake-run")
    os.makedirs(fake)
    with open(os.path.join(fake, "meta.json"), "w") as f:
        json.dump({"git": {"sha": "a" * 40, "dirty": False}}, f)
    assert sbtree.check_commit(fake, {"sha": "a" * 40, "dirty": False}) is None
    assert "another commit" in sbtree.check_commit(fake, {"sha": "b" * 40, "dirty": False})
    with open(os.path.join(fake, "meta.json"), "w") as f:
        json.dump({"git": {"sha": "unknown", "dirty": None}}, f)
    assert "no git sha" in sbtree.check_commit(fake, {"sha": None, "dirty": True})


def test_repetitions_have_their_own_seeds(tmp):
    cfgs = [config("a"), config("b")]
    path = os.path.join(tmp, "r.json")
    with open(path, "w") as f:
        json.dump({"question": "q", "bounded": True, "configs": cfgs, "metrics": []}, f)
    d = os.path.join(tmp, "five")
    sweep("expand", path, "--out", d, "--seed", "10", check=0)
    lines = manifest(d)
    assert [(ln["tags"]["label"], ln["tags"]["rep"], ln["tags"]["seed"]) for ln in lines] == \
        [(lab, k, 9 + k) for k in range(1, 6) for lab in "ab"], lines  # A B A B ..., seed = base + rep - 1
    for ln in lines:
        assert ln["args"][ln["args"].index("--seed") + 1] == str(ln["tags"]["seed"])
    # machine-noise repetitions: the same seed again, ids of their own
    n = os.path.join(tmp, "noise")
    sweep("expand", path, "--out", n, "--reps", "2", "--noise-reps", "3", check=0)
    lines = manifest(n)
    assert len(lines) == 2 * 3 * 2 and len({ln["id"] for ln in lines}) == 12
    for k in (1, 2):
        mine = [ln for ln in lines if ln["tags"]["rep"] == k and ln["tags"]["label"] == "a"]
        assert {ln["tags"]["seed"] for ln in mine} == {k} and {ln["tags"]["noise"] for ln in mine} == {1, 2, 3}
    code, _, err = sweep("expand", path, "--out", os.path.join(tmp, "x"), "--noise-reps", "0")
    assert code == 2 and "--noise-reps must be at least 1" in err, err


def test_intervals_and_no_difference(tmp):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import sbexpreport
    import sbstats
    low, high, mid = [10, 11, 12, 13, 14], [20, 21, 22, 23, 24], [12, 13, 14, 15, 16]
    ci = sbstats.median_ci(low)
    assert ci == sbstats.median_ci(low), "the bootstrap is not deterministic"
    assert ci[0] == 12 and 10 <= ci[1] < 12 < ci[2] <= 14, ci
    assert sbstats.compare("A", low, "B", high) == "A < B"
    assert sbstats.compare("A", high, "B", low) == "A > B"
    assert sbstats.compare("A", low, "B", mid) == sbstats.NO_DIFFERENCE == "no difference measured"
    assert sbstats.compare("A", [5.0], "B", [5.0]) == sbstats.NO_DIFFERENCE
    # one or two runs a side order nothing, however far apart
    assert sbstats.compare("A", [1.0], "B", [9.0]) == sbstats.NO_DIFFERENCE
    assert sbstats.compare("A", [1.0, 1.1], "B", [9.0, 9.1]) == sbstats.NO_DIFFERENCE
    assert sbstats.compare("A", [1.0, 1.1, 1.2], "B", [9.0, 9.1, 9.2]) == "A < B"
    # the table states orderings by the same rule
    d = {"question": "q?", "configs": [{"label": x} for x in ("ref", "same", "slower")],
         "metrics": [{"title": "p99", "column": "p99", "format": "lat"}]}
    rows = [{"config": float(i), "rep": float(k + 1), "seed": float(k + 1), "p99": v, "git_sha": "c" * 40, "dirty": 0}
            for i, vals in enumerate((low, mid, high)) for k, v in enumerate(vals)]
    sbexpreport.write_tables("t", d, rows, tmp, "test machine")
    text = open(os.path.join(tmp, "table.md")).read()
    assert "- p99: same: no difference measured; slower > ref" in text, text
    assert "[" in text and "5 repetitions, seeds 1..5" in text and "DIRTY" not in text, text
    table = read_csv(os.path.join(tmp, "table.csv"))
    assert float(table[0]["p99 ci_low"]) < float(table[0]["p99 median"]) < float(table[0]["p99 ci_high"])


def test_latency_histogram_recomputes_tails(tmp):
    """A slim run keeps every job's latency as a histogram per class: counts equal the summary's,
    and every percentile comes back within a bucket (1/64) of the summary's exact one."""
    cfg = {"label": "oltp", "policy": "stealing", "workload": "oltp", "args": ["--duration", "0.4", "--warmup", "0"]}
    d = os.path.join(tmp, "h")
    sweep("expand", description(tmp, "h", [cfg], reps=1), "--out", d, check=0)
    sweep("run", d, "--schedbed", SCHEDBED, check=0)
    out = os.path.join(d, manifest(d)[0]["out"])
    assert sorted(os.listdir(out)) == ["latency-hist.json.gz", "meta.json", "summary.json", "workers.csv"], \
        os.listdir(out)
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import sbhist
    doc = sbhist.read_histogram(out)
    s = json.load(open(os.path.join(out, "summary.json")))
    assert set(doc["classes"]) == set(s["classes"]) | {"all"}, (sorted(doc["classes"]), sorted(s["classes"]))
    # the bucket numbering: contiguous, each value in its own bucket, widths at most 1/64
    for v in list(range(0, 2000)) + [2 ** k + d for k in range(11, 40) for d in (-1, 0, 1)]:
        i = sbhist.bucket_index(v)
        assert sbhist.bucket_low(i) <= v < sbhist.bucket_low(i) + sbhist.bucket_width(i), v
        assert sbhist.bucket_low(i + 1) == sbhist.bucket_low(i) + sbhist.bucket_width(i), v
        assert sbhist.bucket_width(i) == 1 or sbhist.bucket_width(i) * 64 <= sbhist.bucket_low(i), v
    for cls in doc["classes"]:
        pairs = sbhist.hist_pairs(doc, cls)
        want = s["all"] if cls == "all" else s["classes"][cls]
        assert sum(n for _, n in pairs) == want["count"], cls
        for q, key in ((50, "p50"), (90, "p90"), (99, "p99"), (99.9, "p999")):
            got = sbhist.hist_percentile(pairs, q)
            assert want[key] * (1 - 1 / 64) - 1 <= got <= want[key] * (1 + 1 / 64) + 1, (cls, key, got, want[key])


def test_capacity_rule(tmp):
    """Capacity: the highest rate up to which the median repetition keeps every class within
    2x the unloaded p99; an overloaded repetition fails; orderings only when intervals part."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import capacity
    ld = {"param": "rate", "policies": ["fast", "slow"], "slo_classes": ["a"], "slo_factor": 2}
    rows = []
    for p, knee in (("fast", 3000), ("slow", 1000)):
        for rate in (100, 1000, 2000, 3000, 4000):
            for k in range(5):
                p99 = 1000 + k if rate <= knee else 10000 + k  # 2x the unloaded ~1000 ns is the bar
                rows.append({"policy": p, "rate": float(rate), "rep": k + 1, "variant": "", "classes.a.p99": p99,
                             "overloaded": 0, "throughput": rate})
    res = {x["policy"]: x for x in capacity.analyse(rows, ld)}
    assert (res["fast"]["capacity"], res["slow"]["capacity"]) == (3000, 1000), res
    assert res["fast"]["low"] == res["fast"]["high"] == 3000
    text = capacity.write(tmp, list(res.values()), ld)
    assert "Against fast: slow < fast" in text, text
    # an overloaded run at 2000 fails fast's repetitions there: its capacity drops to 1000
    for r in rows:
        if r["policy"] == "fast" and r["rate"] == 2000:
            r["overloaded"] = 1
    res = {x["policy"]: x for x in capacity.analyse(rows, ld)}
    assert res["fast"]["capacity"] == 1000, res
    assert "slow: no difference measured" in capacity.write(tmp, list(res.values()), ld)
    # at the top rate: cores used, and sessions busy by Little's law over in_flight_classes
    ld["in_flight_classes"] = ["a", "b"]
    for r in rows:
        r.update({"cpu.window_cores": 1.5, "classes.a.throughput": 1000.0, "classes.a.mean": 2e6})  # 2 busy
        if r["rep"] != 1:
            r.update({"classes.b.throughput": 500.0, "classes.b.mean": 4e6})  # 2 more; rep 1 has no b job
    res = {x["policy"]: x for x in capacity.analyse(rows, ld)}
    assert (res["slow"]["top_rate"], res["slow"]["cores_top"], res["slow"]["busy_top"]) == (4000, 1.5, 4.0), res
    assert "| slow | 1000 [1000..1000] | 1000 | 5 | 4000, 4000, 1.50, 4.0 |" in capacity.write(tmp, list(res.values()), ld)
    # the parts of one sweep run apart (capacity-5ms-all, -short-epochs, -more) are read together: one
    # bar for all their policies, the same capacities as from one runs.csv
    for part, pol in (("part-a", "fast"), ("part-b", "slow")):
        os.makedirs(os.path.join(tmp, part))
        mine = [r for r in rows if r["policy"] == pol]
        with open(os.path.join(tmp, part, "runs.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=sorted({k for r in mine for k in r}))
            w.writeheader()
            w.writerows(mine)
    pooled = os.path.join(tmp, "pooled")
    text, _ = capacity.run(pooled, ld, [os.path.join(tmp, "part-a"), os.path.join(tmp, "part-b")])
    assert "| fast | 1000 [1000..1000]" in text and "| slow | 1000 [1000..1000]" in text, text
    with open(os.path.join(pooled, "capacity.md")) as f:
        assert "Runs pooled from `../part-a/runs.csv`, `../part-b/runs.csv`" in f.read()


def test_load_variant_sizes(tmp):
    """A load variant with its own rates, run arguments (a machine size) and run length expands to
    exactly those rates with those arguments and that length, and the other variant keeps the
    description's."""
    path = os.path.join(tmp, "sizes.json")
    with open(path, "w") as f:
        json.dump({"question": "test sizes", "reps": 1, "load": {
            "workload": "oltp", "param": "rate", "rates": [100, 200], "policies": ["stealing"],
            "variants": [{"name": "small", "label": "2 workers", "set": []},
                         {"name": "big", "label": "16 workers", "args": ["--threads", "16"],
                          "set": ["clients=64"], "rates": [800, 1600, 2400], "duration": 0.25}]}}, f)
    d = os.path.join(tmp, "sizes-sweep")
    sweep("expand", path, "--out", d, check=0)
    lines = manifest(d)
    got = {v: sorted(ln["tags"]["rate"] for ln in lines if ln["tags"]["variant"] == v) for v in ("small", "big")}
    assert got == {"small": [100.0, 200.0], "big": [800.0, 1600.0, 2400.0]}, got
    for ln in lines:
        a = ln["args"]
        big = ln["tags"]["variant"] == "big"
        assert ("--threads" in a and a[a.index("--threads") + 1] == "16") == big, a
        assert ("clients=64" in a) == big, a
        assert a.count("--duration") == 1 and a[a.index("--duration") + 1] == ("0.25" if big else "3"), a


def test_bad_latency_unit_is_refused_before_running(tmp):
    """A latency metric whose unit the tables cannot use is refused when the description is read,
    naming the valid units, not after every run has finished."""
    path = os.path.join(tmp, "unit.json")
    with open(path, "w") as f:
        json.dump({"question": "test unit", "reps": 1, "configs": [{"label": "a", "policy": "serial", "workload": "tiny"}],
                   "metrics": [{"title": "p99", "column": "all.p99", "format": "lat", "unit": "us"}]}, f)
    status, _, err = sweep("expand", path, "--out", os.path.join(tmp, "unit-sweep"))
    assert status != 0 and "unit us is not a latency unit; valid: ns, µs, ms, s" in err, err
    assert not os.path.exists(os.path.join(tmp, "unit-sweep", "manifest.jsonl"))


def test_part_of_runs_only_when_named(tmp):
    """A description that is part of another (capacity-5ms-all of capacity) is left out of what runs
    when no experiment is named, and one whose part_of names no description is refused."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import sbexp
    descs = sbexp.descriptions()
    default = sbexp.default_experiments(descs)
    assert "capacity" in default and not {"capacity-5ms-all", "capacity-short-epochs", "capacity-more"} & set(default), default
    assert descs["capacity-5ms-all"]["part_of"] == "capacity"
    path = os.path.join(tmp, "orphan.json")
    with open(path, "w") as f:
        json.dump({"question": "test orphan", "part_of": "nothing-here", "reps": 1,
                   "configs": [config("a")]}, f)
    rc, _, err = sweep("expand", path, "--out", os.path.join(tmp, "orphan-sweep"))
    assert rc != 0 and "part_of names nothing-here" in err, (rc, err)


def test_log_axis_labels_do_not_crowd(tmp):
    """An experiment figure's log axis over less than two decades is labelled at 1, 2 and 5 times
    each power of ten as plain numbers, with no minor labels (matplotlib's own, 2x10^1 3x10^1
    4x10^1, ran into each other); over more decades at the powers alone."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from sbresults import log_ticks, plt
    for values, allowed in (((12, 47, 79), {"10", "20", "50", "100"}), ((900, 35000, 420000), {"100", "1k", "10k", "100k", "1M"})):
        fig, ax = plt.subplots()
        ax.barh(range(len(values)), values)
        ax.set_xscale("log")
        log_ticks(ax.xaxis)
        fig.canvas.draw()
        lo, hi = ax.get_xlim()
        shown = [t.get_text() for t in ax.get_xticklabels() if lo <= t.get_position()[0] <= hi]
        minor = [t.get_text() for t in ax.xaxis.get_minorticklabels() if t.get_text()]
        plt.close(fig)
        assert len(shown) >= 2 and set(shown) <= allowed, (shown, allowed)
        assert not minor, minor


def test_many_core_experiments_need_their_cores(tmp):
    """An experiment whose description asks for N hardware threads ("cores", the many-* ones) is
    left out of the default set on a smaller machine and refused there when named, naming what it
    needs and what the machine has; on a machine with N it runs like any other. A "cores" that is
    not a whole number >= 1 is refused when the description is read."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import sbexp
    descs = sbexp.descriptions()
    many = sorted(n for n, d in descs.items() if d.get("cores", 1) > 2)
    assert "many-stealing" in many and "many-capacity" in many, many
    assert not set(many) & set(sbexp.default_experiments(descs, cores=2))
    assert set(many) <= set(sbexp.default_experiments(descs, cores=16))
    assert sbexp.too_few_cores(descs, ["capacity", "many-stealing"], cores=2) == [
        "many-stealing needs 16 hardware threads and this machine has 2"]
    assert sbexp.too_few_cores(descs, many, cores=16) == []
    if (os.cpu_count() or 1) < 16:
        p = subprocess.run([PY, os.path.join(ROOT, "scripts", "experiments.py"), "--allow-dirty", "--out",
                            os.path.join(tmp, "many"), "many-stealing"], capture_output=True, text=True, timeout=120)
        assert p.returncode != 0 and "many-stealing needs 16 hardware threads" in p.stderr, (p.returncode, p.stderr)
        assert not os.path.exists(os.path.join(tmp, "many")), "a refused experiment left a directory behind"
    for bad in (0, "16", 2.5, True):
        path = os.path.join(tmp, "cores.json")
        with open(path, "w") as f:
            json.dump({"question": "test cores", "cores": bad, "reps": 1, "configs": [config("a")]}, f)
        rc, _, err = sweep("expand", path, "--out", os.path.join(tmp, "cores-sweep"))
        assert rc != 0 and '"cores" is the hardware threads' in err, (bad, rc, err)


def test_overload_ok_keeps_cancelled_runs(tmp):
    """A run that ends overloaded (exit 3: here an open loop far past capacity, its clients behind
    by more than --max-lag) is a failed line, unless its description says "overload_ok" (a load
    sweep goes past the knee on purpose): then it is a result, marked overloaded."""
    cut = {"label": "cut", "policy": "stealing", "workload": "tiny",
           "set": ["work_ns=100000", "rate=1000000", "producers=2"],
           "args": ["--duration", "0.3", "--warmup", "0", "--max-lag", "0.05"]}
    for ok in (False, True):
        desc = description(tmp, f"cut{int(ok)}", [cut], reps=1, timing=False, **({"overload_ok": True} if ok else {}))
        d = os.path.join(tmp, f"cut{int(ok)}-sweep")
        sweep("expand", desc, "--out", d, check=0)
        code, _, err = sweep("run", d, "--schedbed", SCHEDBED)
        if not ok:
            assert code != 0 and "1 failed" in err, (code, err)
            continue
        assert code == 0, err
        _, out, _ = sweep("collect", d, check=0)
        rows = read_csv(out.strip())
        assert rows[0]["overloaded"] == "1", rows


TESTS = [test_log_axis_labels_do_not_crowd, test_many_core_experiments_need_their_cores, test_overload_ok_keeps_cancelled_runs, test_bad_latency_unit_is_refused_before_running, test_part_of_runs_only_when_named, test_load_variant_sizes, test_capacity_rule, test_dirty_tree_is_refused, test_repetitions_have_their_own_seeds, test_intervals_and_no_difference,
         test_latency_histogram_recomputes_tails, test_paper_descriptions_expand_stable_and_machine_free, test_run_collect_and_resume,
         test_timing_runs_alone_others_in_parallel, test_failing_line_is_named_and_never_collected,
         test_missing_program_on_the_node, test_killed_run_is_named_and_never_collected,
         test_interrupt_starts_nothing_new, test_half_written_result_is_never_collected, test_slurm_batch_script_and_array,
         test_reproduce_leaves_paper_alone_and_compares, test_vs_build_alternates_two_builds_and_compares,
         test_vs_build_runs_the_other_builds_peers]

if __name__ == "__main__":
    SCHEDBED, chosen = cli(TESTS, SCHEDBED, "test_sweep.py")
    sys.exit(run_tests(chosen, "sweep tests (scripts/sweep.py):"))
