#!/usr/bin/python3
"""capacity.py - the capacity of each policy from an open-loop load sweep (memo 001's question:
how much load does a policy carry before its latencies break).

    capacity.py DIR/<experiment> [--description sweeps/<experiment>.json] [--pool DIR ...]

Reads the experiment's runs.csv (sweep.py collect, experiments.py --report) and its description's
"load": rates (offered, in load.offered_unit), policies, variants (e.g. one durability epoch each),
the job classes whose p99 is held to a service-level objective ("slo_classes") and the factor
("slo_factor", 2 by default), and optionally the classes whose jobs hold a session while they run
("in_flight_classes": for oltp every statement and the commit, not begin, whose latency includes the
wait for a busy session).

What limits a policy past its knee is read at the top offered rate: the cores its process used
(cpu.window_cores) and, by Little's law, the sessions busy (the sum over in_flight_classes of
throughput x mean latency). Sessions near their count with cores to spare: the load's own client
pool is the ceiling, not the scheduler.

The rule, per variant and class: the SLO is slo_factor times the unloaded p99, the median p99 of
every policy's runs at the lowest rate (one bar for all policies, so that a policy slow when idle
is not rewarded). A repetition at a rate passes when every class's p99 is within its SLO and no
job was cancelled (an overloaded run fails). A rate passes when the median repetition passes
(its worst p99/SLO ratio at most 1). A policy's capacity is the highest rate up to which every
rate passes (0: not even the lowest). Its 95% interval is the percentile bootstrap of that
capacity, resampling the repetitions at each rate (fixed seed). Two policies' capacities are
ordered only when their intervals do not overlap.

One table holds one machine (machines.py): a variant whose runs come from two machines (parts of
a sweep run on different hosts) gets a table, an SLO bar and a figure per machine, named after it,
unless --allow-mixed-machines.

Writes capacity.md, capacity.csv and capacity-<variant>[-<machine>].png (p99 over SLO per class against the
offered rate, at most six classes, two to a row) beside runs.csv.
"""
import argparse
import csv
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbcli  # noqa: E402
import sbcollect  # noqa: E402
import sbdesc  # noqa: E402
import machines  # noqa: E402
from sbresults import die, eng_axis, plt, save  # noqa: E402

import numpy as np  # noqa: E402
import sbstats  # noqa: E402

BOOT = 2000


def slos(rows, classes, factor):
    """{class: SLO in ns}: factor x the median p99 of all runs at the lowest rate."""
    low = min(r["rate"] for r in rows)
    out = {}
    for c in classes:
        v = [r[f"classes.{c}.p99"] for r in rows if r["rate"] == low and r.get(f"classes.{c}.p99") is not None]
        if not v:
            die(f"no run at the lowest rate {low:g} has a p99 for class {c}")
        out[c] = factor * float(np.median(v))
    return out


def worst_ratio(r, slo):
    """A repetition's worst p99/SLO over the classes; infinite when it was overloaded or a class
    finished no job."""
    if r.get("overloaded"):
        return float("inf")
    ratios = [r.get(f"classes.{c}.p99") for c in slo]
    if any(x is None for x in ratios):
        return float("inf")
    return max(x / slo[c] for x, c in zip(ratios, slo))


def capacity_of(by_rate):
    """by_rate: [(rate, [worst ratio of each repetition])], rates ascending."""
    cap = 0.0
    for rate, ratios in by_rate:
        if np.median(ratios) > 1:
            break
        cap = rate
    return cap


def capacity_ci(by_rate):
    """(capacity, low, high) with the percentile bootstrap over repetitions."""
    rng = np.random.default_rng(sbstats.RNG_SEED)
    draws = []
    for _ in range(BOOT):
        draws.append(capacity_of([(rate, rng.choice(v, size=len(v), replace=True)) for rate, v in by_rate]))
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return capacity_of(by_rate), float(lo), float(hi)


def saturation(rows, ld):
    """(cores used, sessions busy) at the top rate: medians over the repetitions (None where
    runs.csv lacks the columns or the description names no in_flight_classes)."""
    top = max(r["rate"] for r in rows)
    at = [r for r in rows if r["rate"] == top]
    cores = [r["cpu.window_cores"] for r in at if r.get("cpu.window_cores") is not None]
    busy = []
    for r in at:
        terms = [(r.get(f"classes.{c}.throughput"), r.get(f"classes.{c}.mean")) for c in ld.get("in_flight_classes", [])]
        terms = [(t, m) for t, m in terms if t is not None and m is not None]  # a class with no job adds 0
        if terms:
            busy.append(sum(t * m / 1e9 for t, m in terms))
    return (float(np.median(cores)) if cores else None, float(np.median(busy)) if busy else None)


def analyse(rows, ld, allow_mixed=False):
    """[{variant, group, machine, policy, capacity, low, high, achieved, slo}] per variant, machine
    and policy. A variant whose runs come from two machines is two groups, each with its own SLO bar
    (machines.py: one table shows one machine), unless allow_mixed."""
    out = []
    for v in ld.get("variants") or [{"name": "", "label": ""}]:
        groups = machines.split([r for r in rows if (r.get("variant") or "") == v["name"]], allow_mixed)
        for machine, mine in groups:
            group = v["name"] + (f"-{machines.slug(machine)}" if len(groups) > 1 else "")
            out += analyse_group(mine, ld, v, machine, group)
    return out


def analyse_group(mine, ld, v, machine, group):
    """analyse() for the runs of one variant on one machine."""
    classes = ld["slo_classes"]
    factor = ld.get("slo_factor", 2)
    achieved_col = (ld.get("achieved") or {}).get("column", "throughput")
    out = []
    if not mine:
        return out
    slo = slos(mine, classes, factor)
    for p in ld["policies"]:
        pr = [r for r in mine if r["policy"] == p]
        if not pr:
            continue
        rates = sorted({r["rate"] for r in pr})
        by_rate = [(x, np.array([worst_ratio(r, slo) for r in pr if r["rate"] == x])) for x in rates]
        cap, lo, hi = capacity_ci(by_rate)
        at = [r.get(achieved_col) for r in pr if r["rate"] == cap and r.get(achieved_col) is not None]
        top = [r.get(achieved_col) for r in pr if r["rate"] == rates[-1] and r.get(achieved_col) is not None]
        cores, busy = saturation(pr, ld)
        out.append({"group": group, "machine": machine, "top_rate": rates[-1],
                    "achieved_top": float(np.median(top)) if top else None, "cores_top": cores, "busy_top": busy,
                    "variant": v["name"], "variant_label": v.get("label", ""), "policy": p, "capacity": cap,
                    "low": lo, "high": hi, "achieved": float(np.median(at)) if at else None, "slo": slo,
                    "reps": max((len(x) for _, x in by_rate), default=0)})
    return out


def write(exp_dir, res, ld):
    unit = ld.get("offered_unit", ld["param"])
    with open(os.path.join(exp_dir, "capacity.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "machine", "policy", f"capacity ({unit})", "ci_low", "ci_high", "achieved at capacity", "reps",
                    "top rate", "achieved at the top rate", "cores used at the top rate",
                    "sessions busy at the top rate"] + [f"slo {c} (ns)" for c in ld["slo_classes"]])
        for x in res:
            w.writerow([x["variant"], x["machine"], x["policy"], x["capacity"], x["low"], x["high"], x["achieved"], x["reps"],
                        x["top_rate"], x["achieved_top"], x["cores_top"], x["busy_top"]] +
                       [round(x["slo"][c]) for c in ld["slo_classes"]])
    md = [f"Capacity: the highest offered rate ({unit}) up to which every rate keeps the p99 of "
          f"{', '.join(ld['slo_classes'])} within {ld.get('slo_factor', 2)}x the unloaded p99 and cancels no job; "
          f"median of the repetitions, [95% bootstrap interval].", ""]
    for g in dict.fromkeys(x["group"] for x in res):
        mine = [x for x in res if x["group"] == g]
        slo = mine[0]["slo"]
        md += [f"### {mine[0]['variant_label'] or mine[0]['variant'] or 'all runs'}; {mine[0]['machine']}", "",
               "SLO: " + ", ".join(f"{c} {sbcli.fmt_ns(t)}" for c, t in slo.items()), "",
               f"| policy | capacity ({unit}) | achieved at capacity | reps | at the top offered rate: "
               f"offered, achieved, cores used, sessions busy |", "|---|---|---|---|---|"]
        for x in mine:
            def num(v, f="{:.0f}"):
                return f.format(v) if v is not None else "-"
            md.append(f"| {x['policy']} | {x['capacity']:g} [{x['low']:g}..{x['high']:g}] | {num(x['achieved'])} | "
                      f"{x['reps']} | {x['top_rate']:g}, {num(x['achieved_top'])}, {num(x['cores_top'], '{:.2f}')}, "
                      f"{num(x['busy_top'], '{:.1f}')} |")
        ref = mine[0]
        said = [sbstats.order(x["policy"], (x["capacity"], x["low"], x["high"]), ref["policy"],
                              (ref["capacity"], ref["low"], ref["high"]), x["reps"], ref["reps"]) for x in mine[1:]]
        md += ["", f"Against {ref['policy']}: " + "; ".join(
            f"{x['policy']}: {s}" if s == sbstats.NO_DIFFERENCE else s for x, s in zip(mine[1:], said)), ""]
    with open(os.path.join(exp_dir, "capacity.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    return "\n".join(md)


def plot(exp_dir, rows, res, ld):
    """Per variant and machine: p99 / SLO against the offered rate, medians with their 95% interval,
    one panel per class (at most six, two to a row, the canvas growing with the rows so that labels
    keep their size)."""
    pngs = []
    unit = ld.get("offered_unit", ld["param"])
    classes = ld["slo_classes"][:6]
    for g in dict.fromkeys(x["group"] for x in res):
        first = next(x for x in res if x["group"] == g)
        v, machine = first["variant"], first["machine"]
        split = len({x["machine"] for x in res if x["variant"] == v}) > 1
        mine = [r for r in rows if (r.get("variant") or "") == v and
                (not split or machines.name(machines.key(r)) == machine)]
        slo = first["slo"]
        ncols = min(2, len(classes))
        nrows = -(-len(classes) // ncols)
        with plt.rc_context({"font.size": 9}):
            fig, axes = plt.subplots(nrows, ncols, squeeze=False, figsize=(7.0, 2.6 * nrows + 0.8))
            for ax, c in zip(axes.flat, classes):
                for i, p in enumerate(ld["policies"]):
                    pr = [r for r in mine if r["policy"] == p and r.get(f"classes.{c}.p99") is not None]
                    if not pr:
                        continue
                    rates = sorted({r["rate"] for r in pr})
                    ci = np.array([sbstats.median_ci([r[f"classes.{c}.p99"] / slo[c] for r in pr if r["rate"] == x])
                                   for x in rates])
                    ax.errorbar(rates, ci[:, 0], yerr=[ci[:, 0] - ci[:, 1], ci[:, 2] - ci[:, 0]], marker="o", ms=3,
                                lw=1, capsize=2, elinewidth=0.8, label=p, color=plt.cm.tab10(i % 10))
                ax.axhline(1.0, color="black", lw=0.8, ls="--")
                ax.set_yscale("log")  # past the knee p99 grows by orders of magnitude
                ax.set_xlabel(f"offered load ({unit})")
                eng_axis(ax.xaxis)
                ax.set_ylabel(f"{c} p99 / SLO ({sbcli.fmt_ns(slo[c])}), log scale")
            spare = list(axes.flat[len(classes):])
            for ax in spare:
                ax.set_visible(False)
            handles, names = axes.flat[0].get_legend_handles_labels()
            label = first["variant_label"] or v
            reps = max(x["reps"] for x in res if x["group"] == g)
            fig.suptitle("\n".join(textwrap.wrap(
                f"capacity sweep{', ' + label if label else ''}: p99 against {ld.get('slo_factor', 2)}x the unloaded "
                f"p99; medians of {sbcli.plural(reps, 'repetition')} with 95% intervals; dashed: the SLO", 100)) +
                f"\n{machine}", fontsize=9)
            if spare:  # an odd number of classes leaves a panel free: the legend goes there
                fig.tight_layout()
                spare[0].set_visible(True)
                spare[0].axis("off")
                spare[0].legend(handles, names, loc="center", fontsize=9, frameon=False)
            else:
                fig.tight_layout(rect=(0, 0.07, 1, 1))
                fig.legend(handles, names, loc="lower center", ncol=min(len(names), 9), fontsize=8, frameon=False)
            pngs.append(save(fig, exp_dir, f"capacity-{g}" if g else "capacity"))
    return pngs


def run(exp_dir, ld, pool=None, allow_mixed=False):
    """The capacity of the runs in exp_dir/runs.csv, or of the runs of every directory in pool
    together (parts of one sweep run apart: one SLO bar for all their policies on one machine)."""
    rows = []
    for d in pool or [exp_dir]:
        part = sbcollect.read_rows(os.path.join(d, "runs.csv"))
        if not part:
            die(f"{d}/runs.csv has no runs")
        rows += part
    os.makedirs(exp_dir, exist_ok=True)
    res = analyse(rows, ld, allow_mixed)
    text = write(exp_dir, res, ld)
    if pool:
        line = ("Runs pooled from " + ", ".join(f"`{os.path.relpath(d, exp_dir)}/runs.csv`" for d in pool) +
                " (their commits: runs.csv's git_sha).")
        text += "\n\n" + line
        with open(os.path.join(exp_dir, "capacity.md"), "a") as f:
            f.write("\n" + line + "\n")
    return text, plot(exp_dir, rows, res, ld)


def main():
    ap = argparse.ArgumentParser(description="capacity per policy from a collected load sweep")
    ap.add_argument("dir", help="the experiment's directory (holding runs.csv)")
    ap.add_argument("--description", help="its sweeps/*.json (default: sweeps/<directory name>.json)")
    ap.add_argument("--pool", nargs="+", metavar="DIR", help="read the runs of these experiment directories "
                    "together (the parts of one sweep, e.g. capacity-5ms-all capacity-short-epochs capacity-more) and "
                    "write into DIR")
    ap.add_argument(machines.FLAG, dest="allow_mixed", action="store_true", help="one SLO bar and one table for "
                    "runs of different machines (each table then says MIXED MACHINES)")
    a = ap.parse_args()
    desc = a.description or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sweeps",
                                         os.path.basename(os.path.normpath(a.dir)) + ".json")
    d = sbdesc.load_description(desc)
    if "load" not in d or "slo_classes" not in d["load"]:
        die(f"{desc} is not a load sweep with slo_classes")
    text, pngs = run(a.dir, d["load"], a.pool, a.allow_mixed)
    print(text)
    for p in pngs:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
