#!/usr/bin/python3
"""machines.py - which machine made a run, and the rule that one table or figure shows one machine.

    machines.py DIR/<experiment> ...            the machines of each directory's runs (runs.csv)
    machines.py --backfill DIR/<experiment> ... add the machine columns to a runs.csv from the
                                                meta.json of its runs (in runs.tar.xz)

A run's machine is its CPU model and the cores it had (meta.json's cpu_model and cores_online),
and, where the run recorded it, the CPU's family, model and stepping (cpu_id: a guest's model
name can be the same for two generations, "AMD EPYC" being family 23 on one day and 25 on
another): absolute rates and latencies are that machine's, so runs of two machines compared in one
table would show the machines' difference as the policies'. collect writes them as columns of
runs.csv (cpu_model, cores, cpu_id); a run without cpu_id (made before meta.json had it) is not
the same machine as one with it. Every report, table and figure asks one_machine() for the name it
prints, and one_machine() refuses rows of more than one machine unless the caller was told to
allow it (--allow-mixed-machines), in which case the name itself says MIXED and lists them.
Rows without the columns (results collected before they existed) are an unknown machine.
"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import sys

from sbcli import die, write_csv

COLUMNS = ("cpu_model", "cores", "cpu_id")
UNKNOWN = "machine not recorded"
FLAG = "--allow-mixed-machines"


# The host's cross-thread speed. A guest's vCPUs are placed by its host, near or far from each
# other, and a placement can change from one second to the next: on the AMD EPYC host a job made
# on one thread and ended on the other cost 2.3 times as much in some seconds as in others, while a
# one-thread rate stayed put (PAPER.md §4.11). The probe: one request thread keeping 64 one-task
# jobs with no work in flight for one fifo worker that never sleeps, every job crossing threads,
# for 0.1 s (a speed lasts seconds to a minute there). calibrate.py prices job_create and job_end
# from its rounds; validate_sim.py --probes runs one beside every native run, so that each run is
# known to have had the fast or the slow host.
PROBE_WINDOW = 64
PROBE_S = 0.1
PROBE_ARGS = ["--policy", "fifo", "--workload", "micro", "--threads", "1", "--set", "pattern=chain", "--set",
              "length=1", "--set", "work_ns=0", "--set", f"window={PROBE_WINDOW}", "--set", "busy_worker=true",
              "--duration", str(PROBE_S), "--warmup", "0.02"]
SPEEDS_APART = 1.5  # two groups of probe rates whose medians are this far apart are two speeds (one spreads 1.2x)


def two_levels(rates):
    """The value that splits positive measurements (probe rates in jobs/s; calibrate.py's park_cpu
    rounds too) into a low and a high level, or None where they have one. The cut is the one that
    best separates their logarithms into two groups (the largest between-group variance, Otsu's
    rule: a few probes caught mid-change fall on either side without moving it); the two levels
    are real where the groups' medians are SPEEDS_APART or more apart. The split is the geometric
    mean of the two values either side of the cut."""
    v = sorted(r for r in rates if r and r > 0)
    if len(v) < 2:
        return None
    logs = [math.log(r) for r in v]
    n, total, left = len(v), sum(logs), 0.0
    best, cut = -1.0, 1
    for k in range(1, n):
        left += logs[k - 1]
        score = k * (n - k) * (left / k - (total - left) / (n - k)) ** 2
        if score > best:
            best, cut = score, k
    apart = statistics.median(v[cut:]) / statistics.median(v[:cut])
    return (v[cut - 1] * v[cut]) ** 0.5 if apart >= SPEEDS_APART else None


def speed_of(before, after, split):
    """A run's speed from the probes on either side of it: "fast" or "slow" where both are on one
    side of split, "between" where the host changed speed around the run, "one" where it has one."""
    if split is None:
        return "one"
    if before is None or after is None:
        return "between"
    a, b = before >= split, after >= split
    return ("fast" if a else "slow") if a == b else "between"


def of_meta(meta):
    """{cpu_model, cores, cpu_id} of one run's meta.json (a dict)."""
    return {"cpu_model": meta.get("cpu_model") or "", "cores": meta.get("cores_online") or "",
            "cpu_id": meta.get("cpu_id") or ""}


def of_program(schedbed):
    """What meta.json records, for results that a script writes rather than schedbed (the peers'
    runs): `schedbed host` prints it, from the same source as meta.json, so that the runs of one
    sweep name their machine alike. Empty when the program cannot say."""
    import subprocess
    try:
        out = subprocess.run([schedbed, "host"], capture_output=True, text=True, timeout=60).stdout
        model, cores, cpu_id = (out.rstrip("\n").split("\t") + [""])[:3]
        return {"cpu_model": model, "cores_online": int(cores), "cpu_id": cpu_id or None}
    except (OSError, ValueError, subprocess.SubprocessError):
        return {"cpu_model": "", "cores_online": "", "cpu_id": None}


def key(row):
    """(cpu model, cores) of a runs.csv row, and its cpu_id third where it has one; cores as an int,
    whether read back as text or float."""
    model, cores, cpu_id = row.get("cpu_model") or "", row.get("cores"), row.get("cpu_id") or ""
    try:
        cores = int(float(cores))
    except (TypeError, ValueError):
        cores = None
    if not model:
        return None
    return (model, cores, str(cpu_id)) if cpu_id else (model, cores)


def name(k):
    """'Intel(R) Xeon(R) Processor, 2 cores', then ', CPU 6.207.2' where the runs recorded it; the
    unknown machine says so."""
    if k is None:
        return UNKNOWN
    text = f"{k[0]}, {k[1]} cores" if k[1] is not None else k[0]
    return text + (f", CPU {k[2]}" if len(k) > 2 else "")


def machines(rows):
    """{machine key: run count}, in the order the rows first name them."""
    out = {}
    for r in rows:
        k = key(r)
        out[k] = out.get(k, 0) + 1
    return out


def one_machine(rows, what, allow_mixed=False):
    """The name of the one machine rows were run on, for a table's or figure's header. Rows of
    several machines die naming them and the flag, or with allow_mixed give a name that says
    MIXED (and the same line goes to stderr, so that the terminal shows it too)."""
    ms = machines(rows)
    if len(ms) <= 1:
        return name(next(iter(ms), None))
    listed = "; ".join(f"{name(k)} ({n} runs)" for k, n in ms.items())
    if not allow_mixed:
        die(f"{what}: runs from {len(ms)} machines ({listed}); one table or figure shows one machine "
            f"(split them, or {FLAG} to put them together, marked)", 1)
    text = f"MIXED MACHINES ({FLAG}): {listed}"
    print(f"{what}: {text}", file=sys.stderr)
    return text


def split(rows, allow_mixed=False):
    """[(machine name, rows)] per machine, in first-seen order; with allow_mixed one group of all."""
    ms = machines(rows)
    if allow_mixed or len(ms) <= 1:
        return [(one_machine(rows, "", allow_mixed) if len(ms) > 1 else name(next(iter(ms), None)), rows)]
    return [(name(k), [r for r in rows if key(r) == k]) for k in ms]


def slug(machine_name):
    """A file-name part for a machine: 'intel-xeon-processor-2c'."""
    m = re.match(r"(.*), (\d+) cores(?:, CPU [0-9.]+)?$", machine_name)
    model, cores = (m.group(1), m.group(2)) if m else (machine_name, "")
    model = re.sub(r"\((r|tm)\)", "", model, flags=re.I)
    words = [w for w in re.split(r"[^a-z0-9]+", model.lower()) if w and w not in ("virtual", "like", "cpu")]
    return "-".join(words[:3]) + (f"-{cores}c" if cores else "")


def _run_key(path):
    """A run's place as both runs.csv's id (after the experiment) and its directory spell it:
    c0.r1 and c0/r1, epoch0.serial.rate-250.r1 and epoch0/serial/rate-250-r1."""
    return re.sub(r"[./-]", "", path)


def backfill(exp_dir):
    """Add cpu_model and cores to exp_dir/runs.csv from the meta.json of each run in its
    runs.tar.xz; every row must find its run, or nothing is written."""
    import tarfile
    csv_path, archive = os.path.join(exp_dir, "runs.csv"), os.path.join(exp_dir, "runs.tar.xz")
    if not (os.path.exists(csv_path) and os.path.exists(archive)):
        die(f"{exp_dir}: needs runs.csv and runs.tar.xz")
    metas = {}
    with tarfile.open(archive) as tar:
        for ti in tar:
            if ti.name.endswith("/meta.json"):
                metas[_run_key(os.path.dirname(ti.name))] = of_meta(json.load(tar.extractfile(ti)))
    with open(csv_path, newline="") as f:
        rd = csv.DictReader(f)
        fields, rows = list(rd.fieldnames), list(rd)
    for r in rows:
        k = _run_key(r["id"].split(".", 1)[1])
        if k not in metas:
            die(f"{exp_dir}: run {r['id']} has no meta.json in runs.tar.xz; runs.csv left as it was")
        r.update(metas[k])
    at = fields.index("git_sha") + 1 if "git_sha" in fields else len(fields)
    fields = fields[:at] + [c for c in COLUMNS if c not in fields] + [c for c in fields[at:] if c not in COLUMNS]
    write_csv(csv_path, fields, rows)
    return machines(rows)


def main():
    ap = argparse.ArgumentParser(description="the machines of an experiment's runs")
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    ap.add_argument("--backfill", action="store_true", help="add cpu_model and cores to runs.csv from runs.tar.xz")
    a = ap.parse_args()
    for d in a.dirs:
        if a.backfill:
            ms = backfill(d)
        else:
            import sbcollect  # here: sbcollect imports this module
            with sbcollect.open_rows(os.path.join(d, "runs.csv")) as f:
                ms = machines(list(csv.DictReader(f)))
        print(f"{d}: " + "; ".join(f"{name(k)} ({n} runs)" for k, n in ms.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
