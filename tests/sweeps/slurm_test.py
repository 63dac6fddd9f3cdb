#!/usr/bin/python3
"""slurm_test.py - a real single-node Slurm runs a manifest as a job array.

    slurm_test.py [--schedbed BIN]

Brings up slurmctld and slurmd (Debian's slurm-wlm) as root without systemd: process tracking by
/proc (proctrack/linuxproc), no task plugin, cons_tres selection, the CPUs nproc reports, state,
spool and logs in a temporary directory, loopback addresses and ports chosen free, auth/none (no
munge daemon to start). Then:

  1. a 4-run manifest is submitted with `sweep.py slurm --wait` and the same manifest is run
     with the local runner; both are collected, and the two CSVs must have the same runs in the
     same order with the same parameters and the same accounting (bounded runs: their job and
     task counts depend on the seed only), and every status must name the array task that ran it;
  2. a manifest with a failing line: the array ends, the line is named and not collected;
  3. a missing schedbed on the node: named with the host, not collected;
  4. an array task killed with scancel while it measures: named as never finished, no result.

Slurm is stopped by the process ids this test started, whatever happens. When the machine cannot
run it (not root, slurm-wlm missing) the test says why and is skipped: it never passes without
running. Every wait has a timeout.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, config, description, manifest, status, sweep  # noqa: E402

SLURM_BINS = ("slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scancel")
# the accounting columns that depend on the seed only (timing columns differ from run to run)
ACCOUNTING = ("id", "experiment", "config", "label", "rep", "policy", "workload", "seed", "sets", "args", "jobs",
              "reconciliation.jobs_submitted", "reconciliation.jobs_done", "reconciliation.jobs_failed",
              "reconciliation.teardowns", "reconciliation.tasks_created", "reconciliation.tasks_run",
              "reconciliation.ok")


def skip_reason():
    if os.geteuid() != 0:
        return "not root: slurmd must start as root to run jobs as this user"
    missing = [b for b in SLURM_BINS if not shutil.which(b) and not os.path.exists(f"/usr/sbin/{b}")]
    if missing:
        return f"{', '.join(missing)} not installed (Debian package slurm-wlm; make deps installs it)"
    plugdir = "/usr/lib/x86_64-linux-gnu/slurm-wlm"
    if os.path.isdir(plugdir) and not os.path.exists(os.path.join(plugdir, "auth_none.so")):
        return f"this Slurm build has no auth/none plugin ({plugdir})"
    return None


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class Slurm:
    """slurmctld + slurmd under a temporary directory; stop() kills exactly what start() started."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []
        self.node = socket.gethostname().split(".")[0]
        ctl_port, d_port = free_ports(2)
        for sub in ("state", "spool", "log"):
            os.makedirs(os.path.join(tmp, sub))
        self.conf = os.path.join(tmp, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=schedbedtest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={ctl_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/log/slurmctld.log
SlurmdLogFile={tmp}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=2
# a scheduling pass every second: an array throttled to %1 starts its next task at once, not a minute later
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
MessageTimeout=10
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def start(self):
        for prog, args in (("slurmctld", ["-D", "-i"]), ("slurmd", ["-D"])):
            log = open(os.path.join(self.tmp, "log", prog + ".out"), "w")
            self.procs.append(subprocess.Popen([prog] + args + ["-f", self.conf], env=self.env, stdout=log,
                                               stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + 60
        while True:
            p = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True, timeout=20)
            if p.returncode == 0 and p.stdout.strip() == "idle":
                return
            for q in self.procs:
                if q.poll() is not None:
                    raise RuntimeError(f"{q.args[0]} exited ({q.returncode}); see {self.tmp}/log/")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the node did not become idle in 60 s (sinfo: {p.stdout.strip()} {p.stderr.strip()})")
            time.sleep(0.5)

    def stop(self):
        for q in self.procs:  # each started in its own session: the group is what it spawned
            if q.poll() is None:
                os.killpg(q.pid, signal.SIGTERM)
        for q in self.procs:
            try:
                q.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(q.pid, signal.SIGKILL)
                q.wait(timeout=10)

    def run(self, *args, timeout=60):
        return subprocess.run(list(args), env=self.env, capture_output=True, text=True, timeout=timeout)


def read_csv(path):
    import csv
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def check_array_equals_local(slurm, tmp, schedbed):
    desc = description(tmp, "four", [config("stealing"), config("serial", policy="serial")])
    on_slurm, local = os.path.join(tmp, "on-slurm"), os.path.join(tmp, "local")
    for d in (on_slurm, local):
        sweep("expand", desc, "--out", d, check=0)
    t0 = time.monotonic()
    code, out, err = run_sweep(slurm, "slurm", on_slurm, "--schedbed", schedbed, "--wait", "--time", "5:00")
    print(err.strip())
    expect(code == 0, f"the array did not finish: {err}")
    print(f"slurm: 4-run array done in {time.monotonic() - t0:.1f} s")
    sweep("run", local, "--schedbed", schedbed, check=0)
    a = read_csv(sweep("collect", on_slurm, check=0)[1].strip())
    b = read_csv(sweep("collect", local, check=0)[1].strip())
    expect(len(a) == 4 and len(b) == 4, f"{len(a)} and {len(b)} rows, wanted 4")
    for ra, rb in zip(a, b):
        for col in ACCOUNTING:
            expect(ra[col] == rb[col], f"{ra['id']}: {col} is {ra[col]!r} on Slurm and {rb[col]!r} here")
    expect(all(r["reconciliation.ok"] == "1" and r["reconciliation.tasks_run"] == "1000" for r in a), a)
    for i, ln in enumerate(manifest(on_slurm)):  # each line ran as the array task with its index
        st = status(on_slurm, ln["id"])
        expect(st.get("slurm", "").endswith(f"_{i}"), f"{ln['id']} did not run as array task {i}: {st}")
    print(f"slurm: collected CSVs agree on {len(ACCOUNTING)} accounting columns of all 4 runs: "
          + ", ".join(f"{r['id']} jobs_done={r['reconciliation.jobs_done']} tasks_run={r['reconciliation.tasks_run']}"
                      for r in a))


def check_failing_line(slurm, tmp, schedbed):
    desc = description(tmp, "bad", [config("good"), config("bad", sets=("pattern=chain", "no_such_param=1"))], reps=1)
    d = os.path.join(tmp, "bad")
    sweep("expand", desc, "--out", d, check=0)
    code, _, err = run_sweep(slurm, "slurm", d, "--schedbed", schedbed, "--wait")
    expect(code == 1 and "bad.c1.r1: failed: bad input" in err and "1 done" in err, err)
    code, _, err = sweep("collect", d)
    expect(code == 1 and "bad.c1.r1 (failed: bad input" in err and "Slurm task" in err, err)
    print("slurm: failing line named: " + err.strip().split(": ", 1)[1][:160])


def check_missing_program(slurm, tmp):
    desc = description(tmp, "nobin", [config("x")], reps=1)
    d = os.path.join(tmp, "nobin")
    sweep("expand", desc, "--out", d, check=0)
    code, _, err = run_sweep(slurm, "slurm", d, "--schedbed", os.path.join(tmp, "not-built", "schedbed"), "--wait")
    expect(code == 1 and "missing or not executable on" in err, err)
    code, _, err = sweep("collect", d)
    expect(code == 1 and "not-built/schedbed is missing or not executable" in err, err)
    print("slurm: missing program named: " + err.strip().split(": ", 1)[1][:160])


def check_killed_task(slurm, tmp, schedbed):
    cfg = dict(config("long"), args=["--duration", "60", "--warmup", "0"])
    d = os.path.join(tmp, "killed")
    sweep("expand", description(tmp, "killed", [cfg], reps=1), "--out", d, check=0)
    code, _, err = run_sweep(slurm, "slurm", d, "--schedbed", schedbed)
    expect(code == 0 and "submitted job" in err, err)
    job = err.split("submitted job ")[1].split(";")[0]
    out = os.path.join(d, manifest(d)[0]["out"])
    parent = os.path.dirname(out)

    def measuring():  # schedbed's temporary result directory exists beside the final place
        return os.path.isdir(parent) and any(n.startswith(".r1.tmp-") for n in os.listdir(parent))
    deadline = time.monotonic() + 60
    while not measuring():
        expect(time.monotonic() < deadline, "the array task never started measuring")
        time.sleep(0.2)
    slurm.run("scancel", job)
    deadline = time.monotonic() + 60
    while slurm.run("squeue", "-h", "-j", job).stdout.strip():
        expect(time.monotonic() < deadline, f"job {job} still queued 60 s after scancel")
        time.sleep(0.5)
    code, _, err = sweep("collect", d)
    expect(code == 1 and "killed.c0.r1 (running: started" in err and "never finished" in err, err)
    expect(not os.path.exists(out), "the killed task left a result directory")
    print("slurm: killed task named: " + err.strip().split(": ", 1)[1][:160])


def run_sweep(slurm, *args):
    """sweep.py with this test's Slurm (SLURM_CONF) and a timeout on every wait."""
    from common import PY, SWEEP
    p = subprocess.run([PY, SWEEP] + list(args) + ["--allow-dirty"], env=slurm.env, capture_output=True, text=True, timeout=240)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schedbed", default=os.path.join(ROOT, "build", "release", "schedbed"))
    a = ap.parse_args()
    schedbed = os.path.abspath(a.schedbed)
    print("slurm test: a single-node Slurm runs a manifest as a job array", flush=True)
    why = skip_reason()
    if why:
        print(f"slurm test: SKIPPED: {why}")
        return 0
    if not os.access(schedbed, os.X_OK):
        print(f"slurm_test.py: {schedbed} is missing (make schedbed)", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="slurmtest-")
    slurm = Slurm(tmp)
    checks = [("array equals local", lambda: check_array_equals_local(slurm, tmp, schedbed)),
              ("failing line", lambda: check_failing_line(slurm, tmp, schedbed)),
              ("missing program", lambda: check_missing_program(slurm, tmp)),
              ("killed task", lambda: check_killed_task(slurm, tmp, schedbed))]
    passed = failed = 0
    try:
        slurm.start()
        print(f"slurm: slurmctld pid {slurm.procs[0].pid}, slurmd pid {slurm.procs[1].pid}, node {slurm.node}, "
              f"{os.cpu_count()} CPUs, config {slurm.conf}", flush=True)
        for name, check in checks:
            try:
                check()
                passed += 1
                print(f"  pass  slurm: {name}", flush=True)
            except Exception as e:  # noqa: BLE001 - every failure is reported with its message
                failed += 1
                print(f"  FAILED slurm: {name}: {e}", flush=True)
    except Exception as e:  # noqa: BLE001
        failed += 1
        print(f"  FAILED slurm: bring-up: {e}", flush=True)
    finally:
        slurm.stop()
        left = [q.pid for q in slurm.procs if q.poll() is None]
        print(f"slurm: stopped slurmctld and slurmd ({'all gone' if not left else f'still running: {left}'})")
    if failed:
        print(f"slurm: logs kept in {tmp}/log/")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
