"""sbslurm.py - a manifest submitted as one Slurm job array (sweep.py slurm): DIR/slurm/batch.sh,
whose array task id is the manifest line, each task running `sweep.py task` (sbrun.cmd_task).
"""
import os
import shlex
import shutil
import subprocess
import sys
import time

from sbcli import PROG, die, fmt_time
from sbdesc import MANIFEST, read_manifest
from sbrun import parse_builds, pending, report_status
from sbtree import require_clean

HERE = os.path.dirname(os.path.abspath(__file__))  # where sweep.py is


def threads_of(ln):
    args = ln["args"]
    for flag in ("--threads", "-t"):
        if flag in args and args.index(flag) + 1 < len(args):
            try:
                return int(args[args.index(flag) + 1])
            except ValueError:
                pass
    return 1


def compress_ranges(idx):
    """[0,1,2,5,7,8] -> "0-2,5,7-8", the form --array takes."""
    out, i = [], 0
    while i < len(idx):
        j = i
        while j + 1 < len(idx) and idx[j + 1] == idx[j] + 1:
            j += 1
        out.append(str(idx[i]) if i == j else f"{idx[i]}-{idx[j]}")
        i = j + 1
    return ",".join(out)


def cmd_slurm(a):
    lines = read_manifest(a.dir)
    if not shutil.which(a.sbatch):
        die(f"{a.sbatch} not found: Slurm's client is not installed here (Debian: slurm-client), or give --sbatch")
    root = os.path.abspath(a.dir)
    require_clean(a.allow_dirty)
    todo, skipped = pending(root, lines, a.retry_failed)
    for ln, why in skipped:
        print(f"{PROG}: {ln['id']} not resubmitted without --retry-failed: {why}", file=sys.stderr)
    if not todo:
        print(f"{PROG}: nothing to submit: every line of {a.dir} is finished or failed", file=sys.stderr)
        return 1 if skipped else 0
    timing = any(lines[i].get("timing", True) for i in todo)
    k = a.max_parallel
    if k is None and timing and not a.exclusive:
        k = 1  # timing runs that share a node measure each other; --exclusive gives each its own node
    cpus = a.cpus_per_task or max(threads_of(lines[i]) for i in todo)
    sdir = os.path.join(root, "slurm")
    os.makedirs(sdir, exist_ok=True)
    heads = [f"#SBATCH --job-name={a.job_name}", f"#SBATCH --cpus-per-task={cpus}",
             f"#SBATCH --output={sdir}/%A_%a.out"]
    if a.partition:
        heads.append(f"#SBATCH --partition={a.partition}")
    if a.time:
        heads.append(f"#SBATCH --time={a.time}")
    if a.exclusive:
        heads.append("#SBATCH --exclusive")
    script = os.path.join(sdir, "batch.sh")
    body = (["#!/bin/bash", f"# One array task per line of {root}/{MANIFEST}; the task id is the line (from 0).",
             "# Written by sweep.py slurm; paths are this cluster's (the manifest has none)."] + heads +
            [f"exec {shlex.quote(a.python)} {shlex.quote(os.path.join(HERE, 'sweep.py'))} task {shlex.quote(root)} "
             f"--schedbed {shlex.quote(os.path.abspath(a.schedbed))}" + (" --retry-failed" if a.retry_failed else "") +
             "".join(f" --build {shlex.quote(n)}={shlex.quote(p)}" for n, p in parse_builds(a.build).items()) +
             (" --allow-dirty" if a.allow_dirty else "")])
    with open(script, "w") as f:
        f.write("\n".join(body) + "\n")
    os.chmod(script, 0o755)
    array = compress_ranges(todo) + (f"%{k}" if k else "")
    cmd = [a.sbatch, "--parsable", f"--array={array}"] + (["--wait"] if a.wait else []) + a.sbatch_arg + [script]
    print(f"{PROG}: submitting {len(todo)} runs: {' '.join(shlex.quote(c) for c in cmd)}", file=sys.stderr)
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    job = (p.stdout.strip().split(";") or [""])[0]
    if not a.wait:
        if p.returncode != 0:
            die(f"sbatch failed (exit {p.returncode})", 1)
        print(f"{PROG}: submitted job {job}; follow with `squeue -j {job}` and `sweep.py status {a.dir}`, "
              f"then `sweep.py collect {a.dir}`", file=sys.stderr)
        return 0
    print(f"{PROG}: job {job} ended after {fmt_time(time.monotonic() - t0)} (sbatch exit {p.returncode})",
          file=sys.stderr)
    return report_status(root, lines)
