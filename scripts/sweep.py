#!/usr/bin/python3
"""sweep.py - sweeps as manifests: expand, run (here or as a Slurm job array), collect.

    sweep.py expand DESC.json [...] --out DIR [--reps N] [--duration S] [--warmup S] [--seed N]
    sweep.py run DIR [--schedbed BIN] [--jobs N] [--retry-failed]
    sweep.py slurm DIR [--schedbed BIN] [--partition P] [--time T] [--cpus-per-task N] [--exclusive]
                       [--max-parallel K] [--wait] [--retry-failed] [--python PY] [--sbatch-arg ARG ...]
    sweep.py status DIR
    sweep.py collect DIR [--csv FILE]
    sweep.py load --workload W --param NAME --rates r1,r2,.. [--policies a,b] [--reps N] --out DIR [-- RUN ARGS]
    sweep.py plot-load DIR [--class C]

A sweep description (sweeps/*.json, one per experiment of PAPER.md) is a grid of runs: either a
list of configurations (a label, a policy, a workload, --set values, extra arguments) repeated
REPS times, alternating A B C A B C so that the machine's drift hits all of them alike, or an
open-loop load sweep (policies x rates of one workload parameter). `expand` turns descriptions
into DIR/manifest.jsonl: one JSON line per run with a stable id, the full argument list of the
program it runs, its output directory relative to DIR and its tags (experiment, configuration,
repetition, ...). Nothing in it depends on the machine: the program's path is given when the
manifest is run.

`run` runs the lines here: one at a time when they are timing runs (the default for native
runs: two runs side by side on a small machine measure each other), up to --jobs (default: all
cores) when the description says "timing": false. `slurm` writes DIR/slurm/batch.sh and submits
the same lines as one job array, `sbatch --array=<lines>%K`, where the array task id is the
manifest line; each task runs `sweep.py task`, the very code the local runner uses. Both runners
record each line's state in DIR/status/<id>.json (running, done or failed, with the exit status,
the last message and the host) and its output in DIR/logs/<id>.log, so both are resumable: a line
is finished only when its status says done *and* its result directory is complete (schedbed
renames a finished result directory into place, so a complete one has summary.json and meta.json
that parse, no recorded failure and reconciled counts); failed lines are rerun only with
--retry-failed. `collect` merges the result directories into one CSV (DIR/runs.csv: one row per
run, its tags and every number of its summary.json) and refuses, naming them, when any line is
missing, failed, killed or half-written. Plots read that CSV.

Run with /usr/bin/python3 (Debian's matplotlib and numpy).
"""
import argparse
import csv
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sbcli import PROG, die, fmt_ns, fmt_rate, split_list, write_csv  # noqa: E402
import machines  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(HERE)  # the source tree whose state every result records
DEFAULT_SCHEDBED = "build/release/schedbed"
# the numbers a run directory must hold; whatever else a run wrote may be dropped ("slim")
RESULT_FILES = ("summary.json", "meta.json")
# what a slim run keeps besides them: per-worker counters and every job's latency as a histogram
KEEP_FILES = RESULT_FILES + ("workers.csv", "latency-hist.json.gz")
HIST_FILE = "latency-hist.json.gz"
MANIFEST = "manifest.jsonl"
PEER_NAME = re.compile(r"[A-Za-z0-9_.-]+")  # a program beside schedbed (peers_omp), never a path
DESC_KEYS = {"name", "question", "memo", "configs", "load", "reps", "noise_reps", "timing", "slim", "bounded", "common",
             "args", "duration", "warmup", "metrics", "figure", "part_of", "overload_ok"}
LAT_UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}  # a latency metric's units, and ns in each
DEFAULT_REPS = 5  # each repetition its own seed: fewer cannot give a median an interval worth stating


def fmt_time(s):
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


# ---- the source tree: results come from a commit, or are marked --------------------------------

def tree_state(tree=TREE):
    """(sha, changed): HEAD of the tree and the files that differ from it (tracked changes and
    untracked files git does not ignore: either can change what is built). sha is None when the
    tree is not a git checkout."""
    sha = os.environ.get("SCHEDBED_SOURCE_SHA")
    if sha:
        # programs carried from a checkout (scripts/carry.sh run) name the commit they were built from,
        # and a carried tree is clean only if it was packed clean: that is the code that runs, whatever
        # copy of a checkout (a stale .git, say) lies beside it
        return sha, [] if os.environ.get("SCHEDBED_SOURCE_DIRTY") == "0" else ["(packed from a dirty tree)"]
    try:
        head = subprocess.run(["git", "-C", tree, "rev-parse", "HEAD"], capture_output=True, text=True)
        st = subprocess.run(["git", "--no-optional-locks", "-C", tree, "status", "--porcelain"],
                            capture_output=True, text=True)
    except OSError:
        head = st = None
    if head is None or head.returncode != 0 or st.returncode != 0:
        return None, []
    return head.stdout.strip(), [ln[3:] for ln in st.stdout.splitlines() if ln.strip()]


def require_clean(allow_dirty, tree=TREE):
    """The tree's state for the runs: dies when the tree has uncommitted changes (or is not a git
    checkout) unless allow_dirty, in which case every run is marked dirty."""
    sha, changed = tree_state(tree)
    if allow_dirty:
        return {"sha": sha, "dirty": bool(changed) or sha is None}
    if sha is None:
        die(f"{tree} is not a git checkout: results must name the commit they come from "
            f"(--allow-dirty runs anyway and marks every result as dirty)", 1)
    if changed:
        shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
        die(f"the source tree has uncommitted changes ({shown}): commit or stash them first "
            f"(--allow-dirty runs anyway and marks every result as dirty)", 1)
    return {"sha": sha, "dirty": False}


# ---- descriptions -> manifest -----------------------------------------------------------------

def load_description(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        die(f"{path} is not valid JSON: {e}")
    if not isinstance(d, dict) or ("configs" in d) == ("load" in d):
        die(f"{path}: a description has either \"configs\" (a list of configurations) or \"load\" (a load sweep)")
    unknown = sorted(set(d) - DESC_KEYS)
    if unknown:
        die(f"{path}: unknown key {unknown[0]}; valid: {', '.join(sorted(DESC_KEYS))}")
    for i, c in enumerate(d.get("configs", [])):
        need = ("label", "peer", "peer_args") if "peer" in c else ("label", "policy", "workload")
        miss = [k for k in need if k not in c]
        if miss:
            die(f"{path}: configuration {i} lacks {', '.join(miss)} (a run needs label, policy, workload; "
                f"a peer needs label, peer, peer_args)")
    if "load" in d:
        miss = [k for k in ("workload", "param", "rates", "policies") if k not in d["load"]]
        if miss:
            die(f"{path}: \"load\" lacks {', '.join(miss)}")
    for m in d.get("metrics", []):
        # a latency's unit is checked here, before any run, not when the finished runs are tabulated
        if m.get("format") == "lat" and m.get("unit", "µs") not in LAT_UNITS:
            die(f"{path}: metric {m.get('title')}: unit {m['unit']} is not a latency unit; valid: {', '.join(LAT_UNITS)}")
    if "part_of" in d and not os.path.exists(os.path.join(os.path.dirname(path), d["part_of"] + ".json")):
        die(f"{path}: part_of names {d['part_of']}, which has no description beside it")
    d.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    return d


def run_length(d, o, duration):
    """--duration and --warmup: the command line's, else the description's, else the default;
    none for a bounded description (its runs end after --jobs N, or it gives its own)."""
    if d.get("bounded"):
        return []
    return ["--duration", fmt_num(o["duration"] or d.get("duration", duration)),
            "--warmup", fmt_num(o["warmup"] if o["warmup"] is not None else d.get("warmup", 1))]


def repetitions(d, o, default=DEFAULT_REPS):
    """[(rep, noise, seed, suffix)]: REPS repetitions, each its own seed (the base seed + rep - 1,
    so repetitions sample the workload's randomness), each run NOISE times with that same seed
    (what differs between those is the machine). The suffix keeps a run's id when NOISE is 1."""
    reps = o["reps"] or d.get("reps", default)
    noise = o.get("noise_reps") or d.get("noise_reps", 1)
    return [(k, j, o["seed"] + k - 1, f"r{k}" + (f".n{j}" if noise > 1 else ""))
            for k in range(1, reps + 1) for j in range(1, noise + 1)]


def expand_configs(d, o):
    """The experiment grid: rounds over the configurations, A B C A B C, one round per repetition
    (and per noise repetition). Arguments in the order every experiment of PAPER.md was run with,
    so that old and new runs are the same runs."""
    name = d["name"]
    lines = []
    for k, j, seed, suffix in repetitions(d, o):
        for i, c in enumerate(d["configs"]):
            tags = {"experiment": name, "config": i, "label": c["label"], "rep": k, "noise": j}
            line = {"id": f"{name}.c{i}.{suffix}", "out": f"{name}/c{i}/{suffix}", "timing": d.get("timing", True),
                    "slim": d.get("slim", True)}
            if "peer" in c:
                line.update(program=c["peer"], args=list(c["peer_args"]), env=c.get("env", {}))
                tags.update(policy="", workload=c["peer"], seed="", sets=" ".join(c["peer_args"]))
            else:
                args = ["--policy", c["policy"], "--workload", c["workload"], "--seed", str(seed)]
                args += d.get("common", []) + run_length(d, o, 4)
                for s in c.get("set", []):
                    args += ["--set", s]
                args += c.get("args", [])
                line.update(program="schedbed", args=args)
                if d.get("overload_ok"):  # jobs cancelled at the end are the point (a shutdown experiment)
                    line["overload_ok"] = True
                tags.update(policy=c["policy"], workload=c["workload"], seed=seed, sets=" ".join(c.get("set", [])))
            line["tags"] = tags
            lines.append(line)
    return lines


def expand_load(d, o):
    """Open-loop sweep: for each variant (a named set of --set values, e.g. one durability epoch)
    and each rate, every policy REPS times, the policy order reversed from one rate to the next
    (A B C, then C B A) so that drift does not favour one policy. A run that ends overloaded
    (exit 3: jobs cancelled after the drain) is a result here, the point past the knee. A variant
    may give its own "rates" and run "args" (e.g. --threads 16 with rates scaled to 16 workers),
    so one description can sweep the load at several machine sizes, and its own "duration" and
    "warmup" (a simulated second of 256 workers takes far longer to compute than one of 5)."""
    ld, name = d["load"], d["name"]
    variants = ld.get("variants") or [{"name": "", "label": "", "set": []}]
    lines = []
    for v in variants:
        extra = run_length({**d, **{k: v[k] for k in ("duration", "warmup") if k in v}}, o, 3) + d.get("args", [])
        vid = f"{v['name']}." if v["name"] else ""
        vdir = f"{v['name']}/" if v["name"] else ""
        vset = [x for s in v.get("set", []) for x in ("--set", s)] + v.get("args", [])
        for i, rate in enumerate(v.get("rates", ld["rates"])):
            order = ld["policies"] if i % 2 == 0 else ld["policies"][::-1]
            text = f"{float(rate):g}"
            for k, j, seed, suffix in repetitions(d, o):
                for p in order:
                    base = ["--workload", ld["workload"], "--seed", str(seed)] + d.get("common", [])
                    lines.append({
                        "id": f"{name}.{vid}{p}.rate-{text}.{suffix}", "out": f"{name}/{vdir}{p}/rate-{text}-{suffix}",
                        "timing": d.get("timing", True), "slim": d.get("slim", True), "program": "schedbed",
                        "overload_ok": True,
                        "args": base + ["--policy", p, "--set", f"{ld['param']}={text}"] + vset + extra,
                        "tags": {"experiment": name, "config": p, "label": p, "rep": k, "noise": j, "policy": p,
                                 "workload": ld["workload"], "seed": seed,
                                 "sets": " ".join([f"{ld['param']}={text}"] + v.get("set", [])),
                                 "param": ld["param"], "rate": float(rate), "variant": v["name"]}})
    return lines


def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def fmt_num(v):
    return f"{float(v):g}"


def expand(descs, o):
    lines = []
    for d in descs:
        lines += expand_load(d, o) if "load" in d else expand_configs(d, o)
    seen = set()
    for ln in lines:
        if ln["id"] in seen:
            die(f"two runs share the id {ln['id']}: give every experiment its own name")
        seen.add(ln["id"])
    return lines


def write_manifest(root, lines):
    """DIR/manifest.jsonl. An existing manifest is kept when it is the same (so expand, run, expand,
    run resumes) and refused when it differs: its results belong to other runs."""
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, MANIFEST)
    text = "".join(json.dumps(ln, sort_keys=True) + "\n" for ln in lines)
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return path
        die(f"{path} exists and describes other runs; give a new directory")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)
    return path


def read_manifest(root):
    path = os.path.join(root, MANIFEST)
    if not os.path.exists(path):
        die(f"{root} has no {MANIFEST} (make one with: sweep.py expand DESC.json --out {root})")
    lines = []
    with open(path) as f:
        for n, text in enumerate(f, 1):
            try:
                ln = json.loads(text)
            except json.JSONDecodeError as e:
                die(f"{path}:{n}: not a JSON line: {e}")
            bad = [k for k in ("id", "out", "args", "program") if k not in ln]
            if bad:
                die(f"{path}:{n}: the line lacks {', '.join(bad)}")
            if ln["program"] != "schedbed" and not PEER_NAME.fullmatch(ln["program"]):
                die(f"{path}:{n}: program '{ln['program']}' is neither schedbed nor a program beside it")
            out = os.path.normpath(ln["out"])
            if os.path.isabs(out) or out.startswith("..") or out in (".", "status", "logs", "slurm"):
                die(f"{path}:{n}: output directory '{ln['out']}' must be a new path inside {root}")
            lines.append(ln)
    return lines


# ---- one line: the same code for the local runner and an array task ----------------------------

def line_key(ln):
    """What a status file is checked against: a line whose arguments changed is not done."""
    return hashlib.sha256(json.dumps([ln["program"], ln["args"], ln["out"]]).encode()).hexdigest()[:16]


def status_path(root, ln):
    return os.path.join(root, "status", ln["id"] + ".json")


def write_status(root, ln, st):
    path = status_path(root, ln)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(st, f, sort_keys=True)
        f.write("\n")
    os.rename(tmp, path)  # a reader sees the old status or the new one, never half of one


def read_status(root, ln):
    try:
        with open(status_path(root, ln)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError) as e:
        return {"state": "failed", "message": f"unreadable status file: {e}"}


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


def run_line(root, ln, schedbed, tree):
    """Run one manifest line to its end and record it; returns the final status dict. tree is
    require_clean()'s answer: the commit the run must come from, and whether it is dirty."""
    t0 = time.time()
    st = {"id": ln["id"], "key": line_key(ln), "state": "running", "host": socket.gethostname(), "pid": os.getpid(),
          "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)), "t0": t0, "git": tree}
    if os.environ.get("SLURM_ARRAY_JOB_ID"):
        st["slurm"] = f"{os.environ['SLURM_ARRAY_JOB_ID']}_{os.environ.get('SLURM_ARRAY_TASK_ID', '?')}"
    write_status(root, ln, st)
    out = os.path.join(root, ln["out"])
    log = os.path.join(root, "logs", ln["id"] + ".log")
    os.makedirs(os.path.dirname(log), exist_ok=True)

    def finish(ok, message, exit_status=None):
        st.update(state="done" if ok else "failed", message=message, exit=exit_status,
                  elapsed_s=round(time.time() - t0, 3))
        write_status(root, ln, st)
        return st

    # what an earlier attempt left (a failed run's partial files) is not a result of this one
    if os.path.lexists(out):
        shutil.rmtree(out) if os.path.isdir(out) and not os.path.islink(out) else os.remove(out)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    exe = schedbed if ln["program"] == "schedbed" else os.path.join(os.path.dirname(schedbed), ln["program"])
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        return finish(False, f"{exe} is missing or not executable on {st['host']}")
    cmd = [exe, "run", "--quiet", "--out", out] + ln["args"] if ln["program"] == "schedbed" else [exe] + ln["args"]
    slim = ln.get("slim")
    if ln["program"] == "schedbed" and slim and "--rows" not in ln["args"] and \
            not (isinstance(slim, list) and "jobs.csv.gz" in slim):
        cmd += ["--rows", "0"]  # a slim run drops the per-job rows: not writing them saves a second a run of tiny jobs
    env = dict(os.environ, **ln.get("env", {}))
    with open(log, "w") as f:
        f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        f.flush()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        except OSError as e:
            return finish(False, f"cannot start {exe}: {e.strerror}")
        f.write(p.stdout + p.stderr)
    overloaded = p.returncode == 3 and ln.get("overload_ok") and ln["program"] == "schedbed"
    if p.returncode != 0 and not overloaded:
        why = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or ["no message"])[-1]
        kind = "bad input" if p.returncode == 2 and ln["program"] == "schedbed" else f"exit {p.returncode}"
        return finish(False, f"{kind}: {why}", p.returncode)
    if ln["program"] != "schedbed":
        try:
            write_peer_result(out, cmd, p.stdout, tree, machines.of_program(schedbed))
        except (ValueError, OSError) as e:
            return finish(False, f"unexpected output from {exe}: {e}", p.returncode)
    bad = check_result(out)
    if bad:
        return finish(False, f"exit {p.returncode} but {bad}", p.returncode)
    bad = check_commit(out, tree)
    if bad:
        return finish(False, bad, p.returncode)
    if slim:  # the per-job rows are big; their latencies stay, as a histogram per class; a list names what else to keep
        keep = set(KEEP_FILES) | (set(slim) if isinstance(slim, list) else set())
        for name in os.listdir(out):
            if name not in keep:
                os.remove(os.path.join(out, name))
    st["overloaded"] = bool(overloaded)
    return finish(True, "overloaded: jobs cancelled after the drain" if overloaded else "", p.returncode)


def check_commit(out, tree):
    """None when the run's meta.json names the commit the runner checked, else what is wrong: a
    result must say which source it measured, and a program built from another tree measures
    other code. A run allowed on a dirty tree only has to record some sha."""
    try:
        with open(os.path.join(out, "meta.json")) as f:
            git = json.load(f).get("git") or {}
    except (OSError, json.JSONDecodeError) as e:
        return f"meta.json is unreadable: {e}"
    sha = git.get("sha")
    if not sha or sha == "unknown":
        return "meta.json records no git sha: the result cannot name the source it measured"
    if not tree["dirty"] and sha != tree["sha"]:
        return (f"meta.json records commit {sha[:12]}, the tree is at {tree['sha'][:12]}: "
                f"the program was built from another tree")
    if not tree["dirty"] and git.get("dirty"):
        return "meta.json says the program's tree was dirty when it ran; the runner found it clean"
    return None


# ---- per-job latencies as a log-bucket histogram ----------------------------------------------
# schedbed writes latency-hist.json.gz itself (harness/hist.c); this is its reader.
# Exact below 2**SUB_BITS ns; above, each power of two is cut into 2**(SUB_BITS-1) buckets, so a
# bucket is at most 1/64 of its lower bound wide: any percentile comes back within 1.6%. Bucket
# i holds [bucket_low(i), bucket_low(i) + bucket_width(i)); with SUB_BITS 7, i = 64 * shift +
# (v >> shift), shift = max(bit_length(v) - 7, 0), so consecutive buckets have consecutive numbers
# and the stored gaps between occupied ones are mostly 0, which compresses to almost nothing.
SUB_BITS = 7
HALF = 1 << (SUB_BITS - 1)


def bucket_index(v):
    """The bucket of a latency v (ns, >= 0)."""
    shift = max(v.bit_length() - SUB_BITS, 0)
    return HALF * shift + (v >> shift)


def bucket_low(i):
    if i < 2 * HALF:
        return i
    shift = i // HALF - 1
    return (i - HALF * shift) << shift


def bucket_width(i):
    return 1 if i < 2 * HALF else 1 << (i // HALF - 1)


def read_histogram(run_dir):
    import gzip
    with gzip.open(os.path.join(run_dir, HIST_FILE), "rt") as f:
        return json.load(f)


def hist_pairs(doc, cls):
    """[(bucket index, jobs)] of one class of a latency-hist document, ascending."""
    h = doc["classes"][cls]
    out, i = [], h["first"]
    for k, n in enumerate(h["counts"]):
        if k:
            i += h["gaps"][k - 1] + 1
        out.append((i, n))
    return out


def hist_percentile(pairs, q):
    """Percentile q (0..100) of hist_pairs() by nearest rank, as the highest value of the bucket the
    rank falls in (never below the exact percentile, at most 1/64 above it)."""
    n = sum(c for _, c in pairs)
    if n == 0:
        return None
    rank = max(1, -(-q * n // 100))  # ceil(q% of n), at least the first job
    seen = 0
    for i, c in pairs:
        seen += c
        if seen >= rank:
            break
    return bucket_low(i) + bucket_width(i) - 1


def write_peer_result(out, cmd, stdout, tree, machine):
    """A peer's result directory gets the same two files as a schedbed run, under a temporary name
    renamed into place when complete. A peer prints either "ns_per_task tasks checksum" (peers_*)
    or a CSV with a header, one row per execution (patterns_*: rep,wall_ns,tasks,flop), kept as
    peer.csv."""
    text = stdout.strip()
    first = text.splitlines()[0] if text else ""
    if "," in first:
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
        json.dump({"peer": os.path.basename(cmd[0]), "ns_per_task": ns, "tasks": tasks, "failure": None}, f)
    with open(os.path.join(tmp, "meta.json"), "w") as f:
        json.dump({"command": cmd, "host": socket.gethostname(), "git": tree, **machine}, f)
    for name, body in extra.items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(body)
    os.rename(tmp, out)


def line_state(root, ln):
    """(state, why): done, failed, killed, stale, running or missing."""
    st = read_status(root, ln)
    if st is None:
        return "missing", "never ran"
    if st.get("key") not in (None, line_key(ln)):
        return "stale", "its result was made by a different manifest line"
    where = f"on {st.get('host', '?')}" + (f", Slurm task {st['slurm']}" if st.get("slurm") else "")
    if st["state"] == "running":
        return "running", f"started {st.get('started', '?')} {where} and never finished (still running, or killed)"
    if st["state"] == "failed":
        return "failed", f"{st.get('message', '?')} ({where})"
    bad = check_result(os.path.join(root, ln["out"]))
    if bad:
        return "failed", f"recorded as done but {bad}"
    return "done", ""


def cmd_task(a):
    """One array task: the manifest line the task id picks."""
    lines = read_manifest(a.dir)
    idx = a.index if a.index is not None else os.environ.get("SLURM_ARRAY_TASK_ID")
    if idx is None:
        die("task: give --index or run as a Slurm array task (SLURM_ARRAY_TASK_ID)")
    try:
        ln = lines[int(idx)]
    except (ValueError, IndexError):
        die(f"task: index {idx} is not a line of {a.dir}/{MANIFEST} (0..{len(lines) - 1})")
    state, _ = line_state(a.dir, ln)
    if state == "done" or (state == "failed" and not a.retry_failed):
        print(f"{ln['id']}: already {state}, not rerun")
        return 0 if state == "done" else 1
    st = run_line(a.dir, ln, a.schedbed, require_clean(a.allow_dirty))
    print(f"{ln['id']}: {st['state']}" + (f": {st['message']}" if st["message"] else ""))
    return 0 if st["state"] == "done" else 1


# ---- local runner -----------------------------------------------------------------------------

def pending(root, lines, retry_failed):
    """The lines still to run, and the failed ones left alone (without --retry-failed). A line
    that started and never ended was killed, or is running right now in a job array: it is left
    alone too, so that one run never has two writers."""
    todo, skipped = [], []
    for i, ln in enumerate(lines):
        state, why = line_state(root, ln)
        if state == "done":
            continue
        if state in ("failed", "running") and not retry_failed:
            skipped.append((ln, why))
        else:
            todo.append(i)
    return todo, skipped


def brief(root, ln):
    """A short result for the progress line."""
    try:
        with open(os.path.join(root, ln["out"], "summary.json")) as f:
            s = json.load(f)
    except (OSError, json.JSONDecodeError):
        return ""
    if "ns_per_task" in s:
        return f"{s['ns_per_task']:.1f} ns/task"
    return f"{fmt_rate(s['throughput'])} jobs/s, p99 {fmt_ns(s['all']['p99'])}"


def cmd_run(a):
    import concurrent.futures as cf
    lines = read_manifest(a.dir)
    if not (os.path.isfile(a.schedbed) and os.access(a.schedbed, os.X_OK)):
        die(f"{a.schedbed} is not an executable (build it with make schedbed)")
    a.schedbed = os.path.abspath(a.schedbed)
    tree = require_clean(a.allow_dirty)
    todo, skipped = pending(a.dir, lines, a.retry_failed)
    for ln, why in skipped:
        print(f"{PROG}: {ln['id']} not rerun without --retry-failed: {why}", file=sys.stderr)
    width = a.jobs or os.cpu_count() or 1
    done_before = len(lines) - len(todo) - len(skipped)
    print(f"{PROG}: {len(lines)} runs in {a.dir}: {done_before} finished before, {len(todo)} to run, "
          f"{'one at a time (timing runs)' if all(lines[i].get('timing', True) for i in todo) and not a.jobs else f'up to {width} at once'}",
          file=sys.stderr)
    t0 = time.monotonic()
    finished, failed = 0, []
    running = {}  # future -> line index
    queue = list(todo)
    stop = []

    def on_signal(sig, _frame):
        # Ctrl-C reaches the running schedbed too (one process group): it removes its unfinished
        # directory and its line is recorded as failed. Start nothing new; a second Ctrl-C ends
        # this loop at once.
        stop.append(sig)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with cf.ThreadPoolExecutor(max_workers=width) as pool:
            while (queue and not stop) or running:
                # A timing run runs alone (unless --jobs says otherwise): two runs side by side on a
                # small machine would measure each other. Manifest order is kept: A B C stays A B C.
                while queue and not stop:
                    ln = lines[queue[0]]
                    alone = ln.get("timing", True) and not a.jobs
                    busy_timing = any(lines[i].get("timing", True) for i in running.values()) and not a.jobs
                    if running and (alone or busy_timing or len(running) >= width):
                        break
                    i = queue.pop(0)
                    running[pool.submit(run_line, a.dir, lines[i], a.schedbed, tree)] = i
                fin, _ = cf.wait(running, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for fu in fin:
                    ln = lines[running.pop(fu)]
                    st = fu.result()
                    finished += 1
                    el = time.monotonic() - t0
                    left = el / finished * (len(todo) - finished)
                    if st["state"] == "done":
                        what = brief(a.dir, ln)
                    else:
                        failed.append(ln["id"])
                        what = f"FAILED: {st['message']}"
                    print(f"[{done_before + finished:>4}/{len(lines)}] {ln['id']}: {what}  "
                          f"({finished - len(failed)} done, {len(failed)} failed, {fmt_time(el)} elapsed, "
                          f"~{fmt_time(left)} left)", file=sys.stderr)
    except KeyboardInterrupt:
        stop.append(signal.SIGINT)
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
    if stop:
        print(f"{PROG}: interrupted with {len(queue)} runs not started; {a.dir} resumes with "
              f"`sweep.py run {a.dir} --retry-failed`", file=sys.stderr)
        return 130
    bad = failed + [ln["id"] for ln, _ in skipped]
    if bad:
        print(f"{PROG}: {len(bad)} of {len(lines)} runs failed: {', '.join(bad[:8])}"
              f"{' ...' if len(bad) > 8 else ''} (logs in {a.dir}/logs/; rerun with --retry-failed)", file=sys.stderr)
        return 1
    print(f"{PROG}: all {len(lines)} runs finished ({fmt_time(time.monotonic() - t0)})", file=sys.stderr)
    return 0


# ---- Slurm ------------------------------------------------------------------------------------

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


# ---- status and collect -----------------------------------------------------------------------

def report_status(root, lines):
    counts, bad = {}, []
    for ln in lines:
        state, why = line_state(root, ln)
        counts[state] = counts.get(state, 0) + 1
        if state != "done":
            bad.append(f"  {ln['id']}: {state}: {why}")
    print(f"{PROG}: {len(lines)} runs: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())), file=sys.stderr)
    for b in bad[:20]:
        print(b, file=sys.stderr)
    if len(bad) > 20:
        print(f"  ... and {len(bad) - 20} more", file=sys.stderr)
    return 0 if not bad else 1


def flatten(d, prefix=""):
    """Numbers of a summary.json as dotted columns; lists (per-worker rows) are left out."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        elif isinstance(v, bool):
            out[prefix + k] = int(v)
        elif isinstance(v, (int, float)):
            out[prefix + k] = v
    return out


def derived(s):
    """Figures the tables need that are not a single summary number: per job of the window,
    what the workers did for it (steals, hand-offs, time suspended), which often explains a
    latency or a throughput."""
    out = {}
    if s.get("tasks_per_s"):
        out["ns_per_task"] = 1e9 / s["tasks_per_s"]
    win, jobs = s.get("counters", {}).get("window", {}), s.get("jobs")
    if win and jobs:
        out["per_job.stolen"] = win.get("stolen", 0) / jobs
        out["per_job.suspends"] = win.get("suspends", 0) / jobs
        out["per_job.suspended_us"] = win.get("suspended_ns", 0) / jobs / 1e3
    if win and s.get("window_s") and s.get("threads"):
        # share of the workers' window time spent suspended: 1 means every worker slept throughout
        out["suspended_share"] = win.get("suspended_ns", 0) / (s["window_s"] * 1e9 * s["threads"])
    ps, submitted = s.get("policy_stats", {}), s.get("reconciliation", {}).get("jobs_submitted")
    if "handoffs" in ps and submitted:
        out["per_job.handoffs"] = ps["handoffs"] / submitted  # policy stats cover the whole run
    t = [w["tasks"] for w in s.get("counters", {}).get("workers", [])]
    if t and min(t) > 0:
        out["imbalance"] = max(t) / min(t)  # busiest worker's tasks over the idlest's
    return out


TAG_COLUMNS = ["id", "experiment", "config", "label", "rep", "policy", "workload", "seed", "sets", "git_sha", "dirty",
               "overloaded", *machines.COLUMNS]


def collect(root, csv_path=None, leave_out_failed=False, allow_mixed=False):
    """Every line's result as one row; dies naming the lines that are not finished. With
    leave_out_failed, a line that ran and failed is named and left out instead (a load sweep's
    runs past saturation); a line that never ran or never ended still stops it. Runs of more than
    one machine (meta.json's CPU model and cores) are refused unless allow_mixed (machines.py)."""
    lines = read_manifest(root)
    bad, left_out = [], []
    for ln in lines:
        state, why = line_state(root, ln)
        if state == "failed" and leave_out_failed:
            left_out.append(ln)
            print(f"{PROG}: left out {ln['id']}: {why}", file=sys.stderr)
        elif state != "done":
            bad.append(f"{ln['id']} ({state}: {why})")
    lines = [ln for ln in lines if ln not in left_out]
    if not lines:
        die(f"{root}: no run finished", 1)
    if bad:
        die(f"{len(bad)} of {len(lines)} runs are not finished, nothing collected: " + "; ".join(bad[:6]) +
            (f"; and {len(bad) - 6} more" if len(bad) > 6 else "") + f" (see sweep.py status {root})", 1)
    rows, columns = [], list(TAG_COLUMNS)
    extra_tags = []
    for ln in lines:
        with open(os.path.join(root, ln["out"], "summary.json")) as f:
            s = json.load(f)
        with open(status_path(root, ln)) as f:
            st = json.load(f)
        with open(os.path.join(root, ln["out"], "meta.json")) as f:
            meta = json.load(f)
        git = meta.get("git") or {}
        # dirty: the program said so, or the runner was allowed to run from a changed tree
        dirty = bool(git.get("dirty")) or git.get("dirty") is None or bool((st.get("git") or {"dirty": True})["dirty"])
        row = {"id": ln["id"], **ln.get("tags", {}), "args": " ".join(ln["args"]), "elapsed_s": st.get("elapsed_s"),
               "git_sha": git.get("sha", ""), "dirty": int(dirty), "overloaded": int(bool(st.get("overloaded"))), **machines.of_meta(meta)}
        for k in ln.get("tags", {}):
            if k not in columns and k not in extra_tags:
                extra_tags.append(k)
        nums = {**flatten(s), **derived(s)}
        for k in nums:
            if k not in columns:
                columns.append(k)
        row.update(nums)
        rows.append(row)
    machines.one_machine(rows, f"collect {root}", allow_mixed)  # before anything is written
    columns = columns[:len(TAG_COLUMNS)] + extra_tags + ["args", "elapsed_s"] + columns[len(TAG_COLUMNS):]
    csv_path = csv_path or os.path.join(root, "runs.csv")
    write_csv(csv_path, columns, rows)
    return csv_path, rows


def read_rows(csv_path):
    """runs.csv back as dicts, numbers as floats (empty cells as None)."""
    def num(v):
        if v == "":
            return None
        try:
            return float(v)
        except ValueError:
            return v
    with open(csv_path, newline="") as f:
        return [{k: num(v) for k, v in r.items()} for r in csv.DictReader(f)]


# ---- the load sweep (make sweep) --------------------------------------------------------------

def plot_load(root, csv_path, cls, ld=None, variant=None, allow_mixed=False):
    """p99 of one class (or of all jobs) and the achieved rate against the offered rate, one curve
    per policy: medians with min..max whiskers. ld is the description's "load" (its offered_unit
    names the rate parameter's unit, its achieved the column of the achieved rate in that unit);
    without one, the axes say what the parameter is and the achieved rate is jobs/s. Overloaded
    runs (cancelled jobs) are drawn hollow."""
    import numpy as np
    from sbresults import eng_axis, plt, save
    ld = ld or {}
    rows = read_rows(csv_path)
    if variant is not None:
        rows = [r for r in rows if (r.get("variant") or "") == variant]
    key = "all.p99" if cls == "all" else f"classes.{cls}.p99"
    rows = [r for r in rows if r.get(key) is not None]
    if not rows:
        die(f"{csv_path}: no run has a p99 for {'all jobs' if cls == 'all' else 'class ' + cls}")
    param = rows[0]["param"]
    machine = machines.one_machine(rows, csv_path, allow_mixed)
    offered = f"offered load ({ld['offered_unit']})" if ld.get("offered_unit") else f"offered load: workload parameter {param}"
    achieved = ld.get("achieved") or {"title": "achieved throughput (jobs/s)", "column": "throughput"}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.0, 3.4))
    present = set(r["policy"] for r in rows)
    # colours by the description's policy order, so that every figure of a sweep agrees
    for i, p in ((i, p) for i, p in enumerate(ld.get("policies", sorted(present))) if p in present):
        mine = [r for r in rows if r["policy"] == p]
        rates = sorted({r["rate"] for r in mine})
        for ax, col, scale in ((a1, key, 1e6), (a2, achieved["column"], 1)):
            v = [np.array([r[col] / scale for r in mine if r["rate"] == x and r.get(col) is not None]) for x in rates]
            ok = [len(x) > 0 for x in v]
            xs = np.array(rates)[ok]
            v = [x for x in v if len(x)]
            med = np.array([np.median(x) for x in v])
            err = [med - np.array([x.min() for x in v]), np.array([x.max() for x in v]) - med]
            ax.errorbar(xs, med, yerr=err, marker="o", ms=3, capsize=2, lw=1, label=p, color=plt.cm.tab10(i % 10))
            over = [x for x in rates if any(r.get("overloaded") for r in mine if r["rate"] == x)]
            if over and ax is a1:
                ax.plot(over, [np.median([r[col] / scale for r in mine if r["rate"] == x]) for x in over], "o",
                        mfc="white", color=plt.cm.tab10(i % 10), ms=5)
    a1.set_yscale("log")  # latencies past the knee grow by orders of magnitude: read the axis, not bar lengths
    a1.set_ylabel(f"p99 latency, {'all jobs' if cls == 'all' else 'class ' + cls} (ms, log scale)")
    a2.set_ylabel(achieved["title"])
    for ax in (a1, a2):
        ax.set_xlabel(offered)
        eng_axis(ax.xaxis)
    eng_axis(a2.yaxis)
    a2.legend(title="policy", fontsize=7)
    fig.suptitle(f"{rows[0]['workload']}: open-loop sweep over {param}, {int(rows[0]['threads'])} workers"
                 + (f", {variant}" if variant else "") + f"; {plural(len({r['rep'] for r in rows}), 'repetition')}, "
                 f"medians with min..max; hollow: overloaded\n{machine}", fontsize=9)
    fig.tight_layout()
    stem = "sweep_p99" + (f"-{variant}" if variant else "") + ("" if cls == "all" else f"-{cls}")
    return save(fig, root, stem)


def cmd_load(a, extra):
    missing = [o for o in ("workload", "param", "rates", "out") if not getattr(a, o)]
    if missing:
        die("missing " + ", ".join("--" + m for m in missing) + " (see sweep.py load --help)")
    if a.reps < 1:
        die("--reps must be at least 1")
    try:
        rates = [float(r) for r in split_list(a.rates, "--rates")]
    except ValueError:
        die(f"--rates: '{a.rates}' is not a comma-separated list of numbers")
    if any(r < 0 for r in rates):
        die("--rates: rates cannot be negative")
    if os.path.exists(a.out) and os.listdir(a.out):
        die(f"{a.out} exists and is not empty; give a new directory")
    if a.policies:
        policies = split_list(a.policies, "--policies")
    else:
        from sbresults import policy_names
        policies = policy_names(a.schedbed)
    # "bounded": the run length is whatever follows -- (make sweep passes --duration 3)
    desc = {"name": "load", "load": {"workload": a.workload, "param": a.param, "rates": rates, "policies": policies},
            "common": ["--threads", str(a.threads)] if a.threads else [], "args": extra, "bounded": True,
            "slim": False}
    write_manifest(a.out, expand_load(desc, {"reps": a.reps, "seed": a.seed, "duration": None, "warmup": None}))
    a.dir, a.retry_failed = a.out, False
    if cmd_run(a) == 130:
        return 130
    # a run past saturation may fail (an overload): the curve shows the others, the failures are named
    path, _ = collect(a.out, leave_out_failed=True)
    print(plot_load(a.out, path, a.cls))
    print(path)
    return 0


# ---- command line -----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description="Sweeps as manifests: expand, run here or on Slurm, collect.")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    e = sub.add_parser("expand", help="descriptions -> DIR/manifest.jsonl")
    e.add_argument("descriptions", nargs="+", metavar="DESC.json")
    e.add_argument("--out", required=True, help="the sweep directory")
    e.add_argument("--reps", type=int, help="repetitions (default: each description's own)")
    e.add_argument("--duration", type=float, help="measurement seconds (default: each description's own)")
    e.add_argument("--warmup", type=float, help="warm-up seconds (default: each description's own)")
    e.add_argument("--seed", type=int, default=1, help="base seed: repetition k runs with seed + k - 1 (default %(default)s)")
    e.add_argument("--noise-reps", type=int, help="runs of each repetition with its same seed, to measure the "
                                                   "machine's noise (default: each description's own, else 1)")
    for name, hlp in (("run", "run the manifest here"), ("slurm", "submit the manifest as a Slurm job array"),
                      ("task", "run one line (what an array task runs)")):
        p = sub.add_parser(name, help=hlp)
        p.add_argument("dir")
        p.add_argument("--schedbed", default=DEFAULT_SCHEDBED, help="the program (default %(default)s)")
        p.add_argument("--retry-failed", action="store_true", help="rerun lines that failed or were killed")
        p.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes "
                       "(for development: every result is marked dirty)")
        if name == "run":
            p.add_argument("--jobs", type=int, help="runs at once, timing runs included (default: timing runs one "
                                                     "at a time, others one per core)")
        if name == "task":
            p.add_argument("--index", type=int, help="the line, from 0 (default: $SLURM_ARRAY_TASK_ID)")
        if name == "slurm":
            p.add_argument("--partition")
            p.add_argument("--time", help="time limit per task, as sbatch takes it (e.g. 10:00)")
            p.add_argument("--cpus-per-task", type=int, help="default: the most --threads of any line")
            p.add_argument("--exclusive", action="store_true", help="a node per task (for timing runs)")
            p.add_argument("--max-parallel", type=int, help="the K of --array=..%%K (default: 1 for timing runs "
                                                            "without --exclusive, else no limit)")
            p.add_argument("--wait", action="store_true", help="wait for the array to end (sbatch --wait)")
            p.add_argument("--job-name", default="schedbed-sweep")
            p.add_argument("--python", default="/usr/bin/python3", help="python on the nodes (default %(default)s)")
            p.add_argument("--sbatch", default="sbatch")
            p.add_argument("--sbatch-arg", action="append", default=[], help="one more sbatch option (repeatable)")
    s = sub.add_parser("status", help="how many lines are done, failed, killed, missing")
    s.add_argument("dir")
    c = sub.add_parser("collect", help="merge the results into one CSV (DIR/runs.csv)")
    c.add_argument("dir")
    c.add_argument("--csv", help="where to write it (default DIR/runs.csv)")
    c.add_argument("--leave-out-failed", action="store_true",
                   help="name failed runs and leave them out (missing or killed runs still refuse)")
    c.add_argument(machines.FLAG, dest="allow_mixed", action="store_true",
                   help="collect runs of different machines into one CSV (every report then says MIXED)")
    ld = sub.add_parser("load", help="p99 against offered load, one curve per policy (make sweep)",
                        epilog="Arguments after -- go to every schedbed run, e.g. -- --duration 3")
    ld.add_argument("--schedbed", default=DEFAULT_SCHEDBED)
    ld.add_argument("--workload")
    ld.add_argument("--param", help="the workload's open-loop arrival rate parameter (e.g. rate)")
    ld.add_argument("--rates", help="comma-separated values of that parameter")
    ld.add_argument("--policies", help="comma-separated policies (default: every registered one)")
    ld.add_argument("--reps", type=int, default=1)
    ld.add_argument("--seed", type=int, default=1)
    ld.add_argument("--threads", type=int)
    ld.add_argument("--jobs", type=int)
    ld.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes (marked dirty)")
    ld.add_argument("--class", dest="cls", default="all", help="job class whose p99 is plotted (default: all jobs)")
    ld.add_argument("--out")
    pl = sub.add_parser("plot-load", help="redraw a load sweep's figure from its runs.csv")
    pl.add_argument("dir")
    pl.add_argument("--class", dest="cls", default="all")

    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a, extra = ap.parse_args(argv[:cut]), argv[cut + 1:]
    if extra and a.cmd != "load":
        die(f"arguments after -- are for `load` only: {extra}")
    if a.cmd == "expand":
        for flag, v in (("--reps", a.reps), ("--noise-reps", a.noise_reps)):
            if v is not None and v < 1:
                die(f"{flag} must be at least 1")
        descs = [load_description(p) for p in a.descriptions]
        path = write_manifest(a.out, expand(descs, {"reps": a.reps, "seed": a.seed, "duration": a.duration,
                                                    "warmup": a.warmup, "noise_reps": a.noise_reps}))
        print(path)
        return 0
    if a.cmd == "run":
        return cmd_run(a)
    if a.cmd == "task":
        return cmd_task(a)
    if a.cmd == "slurm":
        return cmd_slurm(a)
    if a.cmd == "status":
        return report_status(a.dir, read_manifest(a.dir))
    if a.cmd == "collect":
        path, rows = collect(a.dir, a.csv, a.leave_out_failed, a.allow_mixed)
        print(f"{PROG}: {len(rows)} runs -> {path}", file=sys.stderr)
        print(path)
        return 0
    if a.cmd == "load":
        return cmd_load(a, extra)
    if a.cmd == "plot-load":
        print(plot_load(a.dir, os.path.join(a.dir, "runs.csv"), a.cls))
        return 0


if __name__ == "__main__":
    sys.exit(main())
