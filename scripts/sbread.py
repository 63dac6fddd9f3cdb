"""sbread.py - a result directory (what `schedbed run` writes): the one reader, read_run (summary.json
and meta.json, with the run's provenance), provenance (the commit, whether its tree was dirty,
and the machine, all from the run's own meta.json), check_result (is a directory a complete,
successful result) and job_rows (the per-job rows); and, so that the format lives in one file,
the writer of the same two files for a program other than schedbed (write_peer_result).

Every script that reads a run reads it here, so that "which commit and which machine made this"
has one answer. Needs nothing beyond Python's standard library (an array task runs it on a bare
cluster node).
"""
import csv
import gzip
import json
import os
import shutil
import socket

import machines
from sbcli import die

# the numbers a result directory must hold; whatever else a run wrote may be dropped ("slim")
RESULT_FILES = ("summary.json", "meta.json")


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        die(f"{path} is not valid JSON: {e}")


def provenance(meta, status=None):
    """{sha, dirty, cpu_model, cores} of one run from its meta.json (a dict). dirty is True when
    the program said its tree was dirty, when it recorded no flag (it cannot vouch for its tree),
    or when the runner's status file says it was allowed to run from a changed tree: one meaning,
    "this result may not be its commit's"."""
    git = meta.get("git") or {}
    dirty = git.get("dirty") is not False
    if status is not None and (status.get("git") or {"dirty": True}).get("dirty"):
        dirty = True
    sha = git.get("sha") or ""
    return {"sha": "" if sha == "unknown" else sha, "dirty": dirty, **machines.of_meta(meta)}


def read_run(run_dir, status=None):
    """{dir, summary, meta, provenance} of one result directory; dies naming what is missing.
    status: the sweep runner's status of the line that made it, when there is one."""
    if not os.path.isdir(run_dir):
        die(f"{run_dir} is not a directory (give a run directory such as results/<run-id>)")
    s = os.path.join(run_dir, "summary.json")
    if not os.path.exists(s):
        die(f"{run_dir} has no summary.json: not a schedbed run directory")
    m = os.path.join(run_dir, "meta.json")
    meta = load_json(m) if os.path.exists(m) else {}
    return {"dir": run_dir, "summary": load_json(s), "meta": meta, "provenance": provenance(meta, status)}


def check_result(d):
    """None when d is a complete, successful result directory, else what is wrong with it."""
    if not os.path.isdir(d):
        return "no result directory"
    docs = {}
    for name in RESULT_FILES:
        p = os.path.join(d, name)
        try:
            with open(p) as f:
                docs[name] = json.load(f)
        except FileNotFoundError:
            return f"{name} is missing (half-written result directory)"
        except (OSError, json.JSONDecodeError) as e:
            return f"{name} is unreadable (half-written result directory?): {e}"
    s = docs["summary.json"]
    if s.get("failure"):
        return f"the run recorded a failure: {s['failure']}"
    if "reconciliation" in s and not s["reconciliation"].get("ok"):
        return "the run's counts do not reconcile"
    return None


def job_rows(run_dir):
    """The rows of a run's jobs.csv.gz (or an older run's plain jobs.csv) as dicts; empty when
    neither is there."""
    path = os.path.join(run_dir, "jobs.csv.gz")
    if os.path.exists(path):
        opener = gzip.open
    else:
        path, opener = os.path.join(run_dir, "jobs.csv"), open
        if not os.path.exists(path):
            return []
    with opener(path, "rt", newline="") as f:
        return list(csv.DictReader(f))


def write_peer_result(out, cmd, stdout, tree, machine, keep=None):
    """A peer's result directory gets the same two files as a schedbed run, under a temporary name
    renamed into place when complete. A peer prints either "ns_per_task tasks checksum" (peers_*)
    or a CSV with a header, one row per execution (patterns_*: rep,wall_ns,tasks,flop), kept as
    peer.csv. A line with "stdout": NAME keeps whatever the program printed as NAME instead, for
    its script to read (calibrate's primitive costs)."""
    text = stdout.strip()
    first = text.splitlines()[0] if text else ""
    if keep:
        if not text:
            raise ValueError("no output")
        ns, tasks, extra = None, None, {keep: text + "\n"}
    elif "," in first:
        rows = text.splitlines()[1:]
        cols = first.split(",")
        if not rows or "tasks" not in cols or "wall_ns" not in cols:
            raise ValueError(f"a CSV without rows, or without tasks and wall_ns: '{first}'")
        vals = [dict(zip(cols, r.split(","))) for r in rows]
        walls = sorted(float(v["wall_ns"]) for v in vals)
        tasks = float(vals[0]["tasks"])
        ns = walls[len(walls) // 2] / tasks if tasks else 0.0
        extra = {"peer.csv": text + "\n"}
    else:
        fields = text.split()
        if len(fields) < 2:
            raise ValueError(f"'{text}'")
        ns, tasks = float(fields[0]), float(fields[1])
        extra = {}
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with open(os.path.join(tmp, "summary.json"), "w") as f:
        json.dump({"peer": os.path.basename(cmd[0]), "failure": None,
                   **({} if keep else {"ns_per_task": ns, "tasks": tasks})}, f)
    with open(os.path.join(tmp, "meta.json"), "w") as f:
        json.dump({"command": cmd, "host": socket.gethostname(), "git": tree, **machine}, f)
    for name, body in extra.items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(body)
    os.rename(tmp, out)
