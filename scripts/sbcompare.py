"""sbcompare.py - an experiment's medians next to other medians of the same experiment, by the
interval rule: the committed results under results/paper/ (compare_with_paper, for make
reproduce's vs-paper.md) or another build's runs alternated with these (compare_builds, for
experiments.py --vs-build's vs-build.md). compare_table is the one table both print: each
median, its ratio to the other, DIFFERS where the two 95% intervals are apart (sbstats.order), and
the count of figures that differ.
"""
import csv
import os

import numpy as np

import machines
import sbcollect
import sbstats
from sbexp import ROOT, fmt, medians, metrics_of

PAPER = os.path.join(ROOT, "results", "paper")


def committed_medians(name, d):
    """{label: {metric title: (median, ci low, ci high, runs)}} from results/paper/<name>/table.csv
    (or the load sweep's older sweep.csv, whose medians have no interval and no run count: runs 0,
    so no verdict); None when nothing is committed."""
    table = os.path.join(PAPER, name, "table.csv")
    if os.path.exists(table):
        out = {}
        with open(table, newline="") as f:
            for r in csv.DictReader(f):
                out[r["configuration"]] = {
                    m["title"]: tuple(float(r.get(f"{m['title']} {k}") or r[f"{m['title']} median"])
                                      for k in ("median", "ci_low", "ci_high")) + (int(r.get("runs") or 0),)
                    for m in metrics_of(d) if r.get(f"{m['title']} median")}
        return out
    old = os.path.join(PAPER, name, "sweep.csv")
    if "load" in d and os.path.exists(old):
        by = {}
        with open(old, newline="") as f:
            for r in csv.DictReader(f):
                by.setdefault(f"{r['policy']}, {d['load']['param']}={float(r['rate']):g}", []).append(r)
        cols = {"jobs/s": ("throughput", 1), "p50": ("p50_us", 1e3), "p99": ("p99_us", 1e3), "p99.9": ("p999_us", 1e3)}
        return {lab: {t: (float(np.median([float(r[c]) * k for r in rs])),) * 3 + (0,) for t, (c, k) in cols.items()}
                for lab, rs in by.items()}
    return None


def committed_machine(name):
    """The machine of the committed runs (their runs.csv), or None when it does not say."""
    path = os.path.join(PAPER, name, "runs.csv")
    if not os.path.exists(sbcollect.rows_path(path)):
        return None
    rows = sbcollect.read_rows(path)
    names = list(machines.machines(rows))
    return machines.name(names[0]) if len(names) == 1 else None


def compare_with_paper(name, d, rows, machine):
    """Markdown: each new median next to the committed one (compare_table). The committed table is
    reproduced when no figure differs; runs of another machine than the committed ones are compared
    too, and the header says that a difference is then no failure to reproduce."""
    old = committed_medians(name, d)
    if old is None:
        return f"### {name}\n\nnothing committed under {os.path.relpath(PAPER, ROOT)}/{name}/ to compare with.\n"
    theirs = committed_machine(name)
    return compare_table(name, d, rows, old, "committed",
                         f"these runs: {machine}; committed: {theirs or 'machine not recorded'}"
                         + ("" if theirs == machine else " (not the same machine: a difference here is no failure "
                                                         "to reproduce)"))


def compare_builds(name, d, rows, other):
    """Markdown: this build's medians next to the other build's, from runs alternated with it on
    one machine (experiments.py --vs-build): a behaviour change is a figure that DIFFERS."""
    sha = lambda rs: ", ".join(sorted({r["git_sha"][:12] + (" (dirty)" if int(r["dirty"]) else "") for r in rs}))
    old = {lab: {t: c[:3] + (c[5],) if c else None for t, c in cells.items()} for lab, cells in medians(d, other).items()}
    return compare_table(name, d, rows, old, "other build",
                         f"this build: commit {sha(rows)}; the other build: commit {sha(other)}; alternated run "
                         f"by run on {machines.one_machine(rows + other, name)}")


def compare_table(name, d, rows, old, what, header):
    """Each median of rows next to old's ({label: {metric: (median, ci low, ci high, runs)}}), their
    ratio, and by the interval rule (sbstats.order: 95% intervals apart, at least 3 runs a side)
    whether the two differ (marked DIFFERS), counted at the end."""
    ms = metrics_of(d)
    new = medians(d, rows)
    lines = [f"### {name}", "", header, "",
             f"new median / {what} median (ratio; DIFFERS where the two 95% intervals are apart)", "",
             "| configuration | " + " | ".join(m["title"] for m in ms) + " |", "|---|" + "---|" * len(ms)]
    ratios, differ, compared = [], [], 0
    for label, cells in new.items():
        shown = []
        for m in ms:
            c, o = cells[m["title"]], old.get(label, {}).get(m["title"])
            if c is None or o is None:
                shown.append("-")
                continue
            ratio = c[0] / o[0] if o[0] else float("nan")
            if np.isfinite(ratio):
                ratios.append(ratio)
            compared += 1
            apart = sbstats.order("new", c[:3], what, o[:3], c[5], o[3]) != sbstats.NO_DIFFERENCE
            if apart:
                differ.append(f"{label} {m['title']}")
            shown.append(f"{fmt(m['format'], c[0])} / {fmt(m['format'], o[0])} ({ratio:.2f}{', DIFFERS' if apart else ''})")
        lines.append(f"| {label} | " + " | ".join(shown) + " |")
    if ratios:
        lines += ["", f"ratios: median {np.median(ratios):.2f}, {min(ratios):.2f}..{max(ratios):.2f} "
                      f"over {len(ratios)} figures"]
    against = "the committed ones" if what == "committed" else f"the {what}'s"
    lines += ["", f"interval rule: {len(differ)} of {compared} figures differ from {against}"
              + (f": {', '.join(differ)}" if differ else "")]
    return "\n".join(lines) + "\n"
