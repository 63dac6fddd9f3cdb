"""sbexp.py - what an experiment's description means: the descriptions under sweeps/
(descriptions, default_experiments), its table's rows and metrics (variants_of, configs_of,
row_config, metrics_of, metric_values), their medians with 95% intervals and the orderings they
support (medians, orderings, fmt), and where and how the rows were run (provenance, run_shape).
experiments.py's docstring describes the experiments; claims.py reads the committed rows with it.
"""
import glob
import os

import sbcli
import sbdesc
from sbresults import die, fmt_ns, fmt_rate  # first: it says so in one line when matplotlib is missing

import numpy as np  # noqa: E402
import sbstats  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEPS = os.path.join(ROOT, "sweeps")
RATE, LAT, NUM, RATIO = "rate", "lat", "num", "ratio"


def descriptions():
    out = {}
    for path in sorted(glob.glob(os.path.join(SWEEPS, "*.json"))):
        d = sbdesc.load_description(path)
        out[d["name"]] = d
    if not out:
        die(f"no sweep descriptions in {SWEEPS}")
    return out


def default_experiments(descs, cores=None):
    """What runs when none is named: all but a description that is part of another (a quicker
    subset of its runs, such as capacity-5ms-all of capacity), which runs only when named, and
    one whose questions need more hardware threads than CORES (this machine's when None)."""
    cores = cores or os.cpu_count() or 1
    return [n for n, d in descs.items() if "part_of" not in d and d.get("cores", 1) <= cores]


def too_few_cores(descs, names, cores=None):
    """Why NAMES cannot run here, one line each, for those that need more hardware threads than
    CORES (this machine's when None): a many-core answer measured on fewer cores answers nothing."""
    cores = cores or os.cpu_count() or 1
    return [f"{n} needs {descs[n]['cores']} hardware threads and this machine has {cores}"
            for n in names if descs[n].get("cores", 1) > cores]


# ---- tables and figures from runs.csv ---------------------------------------------------------

def variants_of(d):
    return d["load"].get("variants") or [{"name": "", "label": "", "set": []}]


def configs_of(d):
    """The table's rows: (key in runs.csv's config column, label)."""
    if "load" in d:
        ld = d["load"]
        return [(f"{v['name']} {p} {float(r):g}", (f"{v['label']}, " if v["label"] else "") +
                 f"{p}, {ld['param']}={float(r):g}")
                for v in variants_of(d) for p in ld["policies"] for r in v.get("rates", ld["rates"])]
    return [(i, c["label"]) for i, c in enumerate(d["configs"])]


def row_config(d, r):
    if "load" in d:
        v = r.get("variant")
        return f"{'' if v is None else v} {r['policy']} {r['rate']:g}"
    return int(r["config"])


def metrics_of(d):
    """The table's columns: a load sweep's are fixed, then any the description adds ("metrics",
    e.g. one job class's p99, so that a claim can name it)."""
    if "load" in d:
        return [{"title": "jobs/s", "column": "throughput", "format": RATE},
                {"title": "p50", "column": "all.p50", "format": LAT},
                {"title": "p99", "column": "all.p99", "format": LAT},
                {"title": "p99.9", "column": "all.p999", "format": LAT}] + d.get("metrics", [])
    return d["metrics"]


def metric_values(rows, m):
    vals = []
    for r in rows:
        v = r.get(m["column"])
        if v is None:
            continue
        if m.get("per"):
            per = r.get(m["per"])
            if not per:
                continue
            v = v / per
        vals.append(v)
    return vals


def fmt(kind, v):
    if kind == RATE:
        return fmt_rate(v)
    if kind == LAT:
        return fmt_ns(v)
    if kind == RATIO:
        return f"{v:.2f}"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"


def medians(d, rows):
    """{label: {metric title: (median, ci low, ci high, min, max, n)}} of one experiment's rows:
    the median over the repetitions with its 95% bootstrap interval (sbstats)."""
    by = {}
    for r in rows:
        by.setdefault(row_config(d, r), []).append(r)
    out = {}
    for key, label in configs_of(d):
        out[label] = {}
        for m in metrics_of(d):
            v = metric_values(by.get(key, []), m)
            out[label][m["title"]] = sbstats.median_ci(v) + (min(v), max(v), len(v)) if v else None
    return out


def orderings(st, ms):
    """Markdown lines: every configuration against the first (the reference) on every metric,
    ordered only when the 95% intervals do not overlap."""
    labels = list(st)
    if len(labels) < 2:
        return []
    ref = labels[0]
    out = [f"Against \"{ref}\" (a difference is stated only when the 95% intervals do not overlap, with at least "
           f"{sbstats.MIN_RUNS} runs each):", ""]
    for m in ms:
        said = []
        for lab in labels[1:]:
            a, b = st[lab][m["title"]], st[ref][m["title"]]
            if a and b:
                verdict = sbstats.order(lab, a[:3], ref, b[:3], a[5], b[5])
                said.append(f"{lab}: {verdict}" if verdict == sbstats.NO_DIFFERENCE else verdict)
        if said:
            out.append(f"- {m['title']}: " + "; ".join(said))
    return out


def provenance(rows):
    """One line: the commits the rows come from, and whether any is dirty."""
    shas = sorted({str(r.get("git_sha") or "?")[:12] for r in rows})
    dirty = sum(1 for r in rows if r.get("dirty"))
    text = f"commit {', '.join(shas)}"
    if dirty:
        text += f"; DIRTY: {dirty} of {len(rows)} runs come from a tree with uncommitted changes"
    return text


def run_shape(rows):
    """What was run, from the rows themselves: repetitions, seeds, noise runs, length, workers."""
    reps = sorted({int(r["rep"]) for r in rows if r.get("rep") is not None})
    # a seed is a float when read back from runs.csv and an int from a run's meta.json (--replot)
    seeds = sorted({int(r["seed"]) for r in rows if isinstance(r.get("seed"), (int, float))})
    noise = max([int(r.get("noise") or 1) for r in rows] or [1])
    threads = sorted({int(r["threads"]) for r in rows if r.get("threads")})
    windows = [r["window_s"] for r in rows if r.get("window_s")]
    parts = [sbcli.plural(len(reps), "repetition")]
    if seeds:
        parts.append(f"seeds {seeds[0]}..{seeds[-1]}" if len(seeds) > 1 else f"seed {seeds[0]}")
    if noise > 1:
        parts.append(f"{noise} runs per seed")  # machine-noise repetitions
    if windows:
        parts.append(f"{np.median(windows):.2g} s windows")
    if threads:
        parts.append("/".join(map(str, threads)) + (" workers" if threads[-1] > 1 else " worker"))
    return ", ".join(parts)
