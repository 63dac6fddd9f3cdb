"""sbrun.py - running a manifest's lines: one line to its end (run_line: the same code for the
local runner and a Slurm array task, cmd_task), its status file and log, whether it is finished
(line_state: its status says done and its result directory is complete), the lines still to run
(pending), the local runner (run_dir, cmd_run), what every experiment script calls (run_manifest:
bad input and a changed tree refused first; builds other than the tree's, parse_builds) and the
summary of a sweep's state (report_status).

Needs nothing beyond Python's standard library (an array task runs it on a bare cluster node).
"""
import hashlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

import machines
from sbcli import PROG, die, fmt_ns, fmt_rate, fmt_time
from sbdesc import MANIFEST, read_manifest, write_manifest
from sbread import RESULT_FILES, check_result, read_run, write_peer_result
from sbtree import check_commit, require_clean, tree_state

DEFAULT_SCHEDBED = "build/release/schedbed"
# what a slim run keeps besides them: per-worker counters and every job's latency as a histogram
KEEP_FILES = RESULT_FILES + ("workers.csv", "latency-hist.json.gz")


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


def build_program(ln, schedbed, builds):
    """The schedbed a line runs: the run's own (its tree's), or, for a line naming a build, the
    program given for it (builds: {name: path}); None when that was not given."""
    if ln.get("build"):
        return (builds or {}).get(ln["build"])
    return schedbed


def run_line(root, ln, schedbed, tree, builds=None):
    """Run one manifest line to its end and record it; returns the final status dict. tree is
    require_clean()'s answer: the commit the run must come from, and whether it is dirty. A line
    naming a build (an earlier commit's schedbed, say, for an A/B of two builds) runs the program
    builds gives for it and must record some commit, its own: not the tree's."""
    if ln.get("build"):
        tree = {"sha": None, "dirty": False, "build": ln["build"]}  # dirty: the run's own meta.json says
        schedbed = build_program(ln, schedbed, builds)
        if schedbed and ln["program"] != "schedbed":
            # a peer beside another build's schedbed was built with that build, and it has no
            # meta.json of its own: its commit is that of the checkout holding it (None outside one,
            # which check_result then refuses)
            sha, changed = tree_state(os.path.dirname(os.path.realpath(schedbed)), carried=False)
            tree.update(sha=sha, dirty=bool(changed))
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

    if schedbed is None:
        return finish(False, f"the line runs build {ln['build']}: give its program (--build {ln['build']}=PATH)")
    # what an earlier attempt left (a failed run's partial files) is not a result of this one
    if os.path.lexists(out):
        shutil.rmtree(out) if os.path.isdir(out) and not os.path.islink(out) else os.remove(out)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    exe = schedbed if ln["program"] == "schedbed" else os.path.join(os.path.dirname(schedbed), ln["program"])
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        return finish(False, f"{exe} is missing or not executable on {st['host']}")
    cmd = [exe, "run", "--quiet", "--out", out] + ln["args"] if ln["program"] == "schedbed" else [exe] + ln["args"]
    slim = ln.get("slim")
    if ln["program"] == "schedbed" and slim and "--rows" not in ln["args"] and not ln.get("build") and \
            not (isinstance(slim, list) and "jobs.csv.gz" in slim):
        # a slim run drops the per-job rows: not writing them saves a second a run of tiny jobs (not
        # asked of another build, which may predate --rows; its rows are dropped after the run)
        cmd += ["--rows", "0"]
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
            write_peer_result(out, cmd, p.stdout, tree, machines.of_program(schedbed), ln.get("stdout"))
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
    st = run_line(a.dir, ln, a.schedbed, require_clean(a.allow_dirty), parse_builds(a.build))
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
    s = read_run(os.path.join(root, ln["out"]))["summary"]
    if "ns_per_task" in s:
        return f"{s['ns_per_task']:.1f} ns/task"
    if "throughput" not in s:  # a program whose output its script reads ("stdout" lines)
        return f"{ln.get('stdout', 'output')} kept"
    return f"{fmt_rate(s['throughput'])} jobs/s, p99 {fmt_ns(s['all']['p99'])}"


def cmd_run(a):
    return run_dir(a.dir, a.schedbed, jobs=a.jobs, retry_failed=a.retry_failed, allow_dirty=a.allow_dirty,
                   builds=parse_builds(a.build))


def parse_builds(specs):
    """--build NAME=PATH (repeatable) as {name: absolute path}; dies on a malformed one or a path
    that is not a program."""
    builds = {}
    for spec in specs or []:
        name, eq, path = spec.partition("=")
        if not (eq and name and path):
            die(f"--build {spec}: give NAME=PATH, the program that runs the lines naming build NAME")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            die(f"--build {spec}: {path} is not an executable")
        builds[name] = os.path.abspath(path)
    return builds


def run_manifest(root, lines, schedbed, allow_dirty=False, **kw):
    """What every experiment script calls: refuse bad input and a changed tree before anything is
    written, then write root's manifest (or find the same one there, so a second call resumes) and
    run what is not yet done. Returns run_dir's exit status."""
    check_args(schedbed, lines, kw.get("builds"))
    require_clean(allow_dirty)
    if os.path.isdir(root) and os.listdir(root) and not os.path.exists(os.path.join(root, MANIFEST)):
        die(f"{root} exists, is not empty and holds no manifest; give a new directory")
    write_manifest(root, lines)
    return run_dir(root, schedbed, allow_dirty=allow_dirty, **kw)


def check_args(schedbed, lines, builds=None):
    """Bad input stops everything before the first run (exit 2 with schedbed's own one-line error),
    rather than failing every line of the manifest the same way: each distinct argument list of a
    schedbed line is tried once with --dry-run (a seed is never bad input: lines differing only in
    their seed are one list)."""
    if not (os.path.isfile(schedbed) and os.access(schedbed, os.X_OK)):
        die(f"{schedbed} is not an executable (build it with make schedbed)")
    seen = set()
    for ln in lines:
        args = ln["args"]
        key = tuple("SEED" if i and args[i - 1] == "--seed" else x for i, x in enumerate(args))
        key += (ln.get("build"),)
        if ln["program"] != "schedbed" or key in seen:
            continue
        seen.add(key)
        exe = build_program(ln, schedbed, builds)
        if exe is None:
            die(f"{ln['id']}: the line runs build {ln['build']}, and no program was given for it")
        p = subprocess.run([exe, "run", "--dry-run", "--quiet"] + ln["args"], capture_output=True, text=True)
        if p.returncode != 0:
            die(f"{ln['id']}: " + (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1], p.returncode)


def run_dir(root, schedbed, jobs=0, retry_failed=False, allow_dirty=False, resume=None, builds=None, width=0):
    """The local runner: the manifest's pending lines, in manifest order, with a progress line per
    run. 0 when every line is done, 1 when some failed, 130 when interrupted. resume: the command
    that picks up an interrupted run, for the message (default: sweep.py run). jobs: runs at once,
    timing runs included (sweep.py's --jobs, for a machine whose runs do not disturb each other);
    width: runs at once for the lines that are not timing runs, while timing runs still run alone
    (default: the machine's CPUs)."""
    import concurrent.futures as cf
    lines = read_manifest(root)
    if not (os.path.isfile(schedbed) and os.access(schedbed, os.X_OK)):
        die(f"{schedbed} is not an executable (build it with make schedbed)")
    schedbed = os.path.abspath(schedbed)
    tree = require_clean(allow_dirty)
    todo, skipped = pending(root, lines, retry_failed)
    for ln, why in skipped:
        print(f"{PROG}: {ln['id']} not rerun without --retry-failed: {why}", file=sys.stderr)
    width = jobs or width or os.cpu_count() or 1
    done_before = len(lines) - len(todo) - len(skipped)
    print(f"{PROG}: {len(lines)} runs in {root}: {done_before} finished before, {len(todo)} to run, "
          f"{'one at a time (timing runs)' if all(lines[i].get('timing', True) for i in todo) and not jobs else f'up to {width} at once'}",
          file=sys.stderr)
    t0 = time.monotonic()
    finished, failed, sized = 0, [], []
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
                    alone = ln.get("timing", True) and not jobs
                    busy_timing = any(lines[i].get("timing", True) for i in running.values()) and not jobs
                    if running and (alone or busy_timing or len(running) >= width):
                        break
                    i = queue.pop(0)
                    running[pool.submit(run_line, root, lines[i], schedbed, tree, builds)] = i
                fin, _ = cf.wait(running, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for fu in fin:
                    ln = lines[running.pop(fu)]
                    st = fu.result()
                    finished += 1
                    el = time.monotonic() - t0
                    left = el / finished * (len(todo) - finished)
                    if st["state"] == "done":
                        what = brief(root, ln)
                    else:
                        failed.append(ln["id"])
                        what = f"FAILED: {st['message']}"
                    print(f"[{done_before + finished:>4}/{len(lines)}] {ln['id']}: {what}  "
                          f"({finished - len(failed)} done, {len(failed)} failed, {fmt_time(el)} elapsed, "
                          f"~{fmt_time(left)} left)", file=sys.stderr)
                    if st["state"] == "done" and not sized and len(todo) > 1:
                        sized.append(ln["id"])  # what the whole run will write, known once one run has
                        out = os.path.join(root, ln["out"])
                        size = sum(os.path.getsize(os.path.join(out, n)) for n in os.listdir(out))
                        print(f"      size: {ln['id']} wrote {size / 1e6:.1f} MB; all {len(todo)} runs will write "
                              f"about {size * len(todo) / 1e6:.1f} MB", file=sys.stderr)
    except KeyboardInterrupt:
        stop.append(signal.SIGINT)
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
    if stop:
        print(f"{PROG}: interrupted with {len(queue)} runs not started; {root} resumes with "
              f"`{resume or f'sweep.py run {root} --retry-failed'}`", file=sys.stderr)
        return 130
    bad = failed + [ln["id"] for ln, _ in skipped]
    if bad:
        print(f"{PROG}: {len(bad)} of {len(lines)} runs failed: {', '.join(bad[:8])}"
              f"{' ...' if len(bad) > 8 else ''} (logs in {root}/logs/; rerun with --retry-failed)", file=sys.stderr)
        return 1
    print(f"{PROG}: all {len(lines)} runs finished ({fmt_time(time.monotonic() - t0)})", file=sys.stderr)
    return 0


# ---- status -----------------------------------------------------------------------------------

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
