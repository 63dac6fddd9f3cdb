"""common.py - what the sweep tests share: small manifests of real schedbed runs, the sweep.py
command line, and a runner that prints one line per test and the closing "N passed, M failed"
that .ci/run adds up.

A test here runs scripts/sweep.py as a user would (a subprocess) on manifests of tiny bounded
runs (tens of jobs, a fraction of a second each), so that what is checked is the program's
behaviour, not a model of it.
"""
import json
import os
import subprocess
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWEEP = os.path.join(ROOT, "scripts", "sweep.py")
PY = sys.executable


def config(label, policy="stealing", sets=("pattern=chain", "length=50"), jobs=20, args=()):
    """A bounded micro run: its job and task counts depend on the seed only, not on timing."""
    return {"label": label, "policy": policy, "workload": "micro", "set": list(sets),
            "args": ["--jobs", str(jobs)] + list(args)}


def description(tmp, name, configs, reps=2, timing=True, **more):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump({"question": f"test sweep {name}", "bounded": True, "timing": timing, "reps": reps,
                   "common": ["--threads", "2"], "configs": configs, "metrics": [], **more}, f)
    return path


# The commands that refuse a tree with uncommitted changes; the tests run them on whatever tree
# they are in (a developer's is seldom clean), so they say --allow-dirty. test_sweep.py's
# test_dirty_tree_is_refused checks the refusal itself on a tree of its own.
RUNNERS = ("run", "task", "slurm")


def sweep(*args, timeout=300, check=None):
    """sweep.py ARGS; returns (exit status, stdout, stderr). check=N asserts the exit status."""
    args = [str(a) for a in args] + (["--allow-dirty"] if args and args[0] in RUNNERS else [])
    p = subprocess.run([PY, SWEEP] + args, capture_output=True, text=True, timeout=timeout)
    if check is not None and p.returncode != check:
        raise AssertionError(f"sweep.py {' '.join(map(str, args))}: exit {p.returncode}, wanted {check}\n"
                             f"{p.stdout}{p.stderr}")
    return p.returncode, p.stdout, p.stderr


def script(name):
    """A function running scripts/NAME ARGS as a user would; returns (exit status, stdout, stderr),
    and with check=N asserts the exit status."""
    path = os.path.join(ROOT, "scripts", name)

    def run(*args, check=None, timeout=600):
        p = subprocess.run([PY, path] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout)
        if check is not None and p.returncode != check:
            raise AssertionError(f"{name} {' '.join(map(str, args))}: exit {p.returncode}, wanted {check}\n"
                                 f"{p.stdout}{p.stderr}")
        return p.returncode, p.stdout, p.stderr
    return run


def manifest(d):
    with open(os.path.join(d, "manifest.jsonl")) as f:
        return [json.loads(x) for x in f]


def status(d, run_id):
    with open(os.path.join(d, "status", run_id + ".json")) as f:
        return json.load(f)


def cli(tests, schedbed, prog):
    """The command line of a test file that runs the program: --schedbed BIN, --only PART.
    Returns (the program's absolute path, the tests chosen); exits 2 when the program is missing."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--schedbed", default=schedbed)
    ap.add_argument("--only", help="run the tests whose name contains this")
    a = ap.parse_args()
    path = os.path.abspath(a.schedbed)
    if not os.access(path, os.X_OK):
        print(f"{prog}: {path} is missing (make schedbed)", file=sys.stderr)
        sys.exit(2)
    return path, [t for t in tests if not a.only or a.only in t.__name__]


def run_tests(tests, header):
    """Each test gets a fresh temporary directory; prints one line each and the tally. A test_
    function of the calling module that the list leaves out is a failure: written and never run."""
    print(header, flush=True)
    passed = failed = 0
    module = sys.modules[tests[0].__module__] if tests else None
    listed = {t.__name__ for t in tests}
    for name in sorted(n for n, f in vars(module).items() if n.startswith("test_") and callable(f)) if module else ():
        if name not in listed:
            failed += 1
            print(f"  FAILED {name}: defined but not in the module's list of tests, so never run", flush=True)
    for t in tests:
        with tempfile.TemporaryDirectory(prefix="sweeptest-") as tmp:
            try:
                t(tmp)
                passed += 1
                print(f"  pass  {t.__name__}", flush=True)
            except Exception:
                failed += 1
                print(f"  FAILED {t.__name__}:\n" + traceback.format_exc(), flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
