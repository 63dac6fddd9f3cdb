"""sbexpreport.py - an experiment's results written out: its tables (write_tables: table.md,
table.csv) and figures (plot, load_figures), the whole report of a run directory (report, with
sbcompare's comparisons with the committed results and with another build), and the committed
results themselves: replacing them (update_paper, pack_runs: runs.tar.xz) and redrawing them
from their runs (replot, rows_from_dirs).
"""
import csv
import glob
import os
import shutil
import sys
import textwrap

import sbcli
import sbcollect
import sbdesc
from sbresults import die, eng_axis, log_ticks, plt, save  # first: it says so in one line when matplotlib is missing

import numpy as np  # noqa: E402
import capacity  # noqa: E402
import machines  # noqa: E402
from sbread import read_run  # noqa: E402
from sbcompare import PAPER, compare_builds, compare_with_paper  # noqa: E402
from sbexp import (LAT, RATE, RATIO, ROOT, configs_of, fmt, medians, metrics_of, orderings,  # noqa: E402
                   provenance, row_config, run_shape, variants_of)

CSV_STATS = ("median", "ci_low", "ci_high", "min", "max")


def write_tables(name, d, rows, out, machine):
    ms = metrics_of(d)
    st = medians(d, rows)
    md = ["| configuration | " + " | ".join(m["title"] for m in ms) + " | runs |",
          "|---|" + "---|" * (len(ms) + 1)]
    with open(os.path.join(out, "table.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["configuration"] + [f"{m['title']} {x}" for m in ms for x in CSV_STATS] + ["runs"])
        for label, cells in st.items():
            shown, raw, n = [], [], 0
            for m in ms:
                c = cells[m["title"]]
                if c:
                    shown.append(f"{fmt(m['format'], c[0])} [{fmt(m['format'], c[1])}..{fmt(m['format'], c[2])}]")
                    raw += list(c[:5])
                    n = max(n, c[5])
                else:
                    shown.append("-")
                    raw += [""] * len(CSV_STATS)
            md.append(f"| {label} | " + " | ".join(shown) + f" | {n} |")
            w.writerow([label] + raw + [n])
    memo = f" (memo {d['memo']})" if d.get("memo") else ""
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(f"{d['question']}{memo}\n\nMedian [95% bootstrap interval of the median] over each configuration's "
                f"runs; {run_shape(rows)}; {provenance(rows)}; machine: {machine}.\n\n" + "\n".join(md) + "\n\n" +
                ("" if "load" in d else "\n".join(orderings(st, ms)) + "\n"))
    return "\n".join(md)


PAGE_WIDTH_IN = 7.0  # the figure is drawn at the width it is printed at, so 9 pt stays 9 pt
PANELS = 4           # at most this many panels per figure (two rows of two)


def axis_of(m):
    """(divisor, axis label with its unit) of a metric; latencies in the unit the description
    chooses (µs unless it says otherwise)."""
    if m["format"] == LAT:
        unit = m.get("unit", "µs")
        if unit not in sbdesc.LAT_UNITS:
            die(f"metric {m['title']}: unit {unit} is not a latency unit; valid: {', '.join(sbdesc.LAT_UNITS)}")
        return sbdesc.LAT_UNITS[unit], f"{m['title']} ({unit})"
    if m["format"] == RATE and "/s" in m["title"]:
        return 1, m["title"]
    unit = m.get("unit") or {RATE: "per second", RATIO: "ratio"}.get(m["format"], "count")
    return 1, f"{m['title']} ({unit})"


def plot(name, d, rows, out, machine):
    """Median bars with their 95% interval as whiskers, configurations on the y axis, at most four
    panels (metrics) per figure: <name>.png, then <name>-2.png, ... Each panel's scale is the
    metric's "scale" in the description (linear unless it says log), never chosen by the data.
    Returns the PNG paths."""
    ms = metrics_of(d)
    st = medians(d, rows)
    labels = list(st)
    y = np.arange(len(labels))
    pngs = []
    # many configurations make tall panels: then two side by side per figure, so that a figure
    # printed at page width stays readable
    per = PANELS if len(labels) <= 12 else 2
    chunks = [ms[i:i + per] for i in range(0, len(ms), per)]
    for n, chunk in enumerate(chunks, 1):
        ncols = min(2, len(chunk))
        nrows = -(-len(chunk) // ncols)
        with plt.rc_context({"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "xtick.labelsize": 9,
                             "ytick.labelsize": 9}):
            fig, axes = plt.subplots(nrows, ncols, squeeze=False, sharey=True,
                                     figsize=(PAGE_WIDTH_IN, nrows * (0.2 * len(labels) + 1.1) + 0.7))
            for ax, m in zip(axes.flat, chunk):
                c = [st[lab][m["title"]] for lab in labels]
                div, xlabel = axis_of(m)
                med = np.array([x[0] if x else np.nan for x in c]) / div
                err = np.array([[x[0] - x[1] if x else 0 for x in c], [x[2] - x[0] if x else 0 for x in c]]) / div
                ax.barh(y, med, xerr=err, color="#4c72b0", alpha=0.85, ecolor="black", capsize=2)
                scale = m.get("scale", "linear")
                ax.set_xscale(scale)
                # wrapped, "log scale" on a line of its own: half-page panels side by side would
                # run their labels together
                ax.set_xlabel(textwrap.fill(xlabel, 32) + ("\nlog scale" if scale == "log" else ""))
                if m["format"] == RATE and scale == "linear":
                    eng_axis(ax.xaxis)
                elif scale == "log":
                    log_ticks(ax.xaxis)
                ax.grid(axis="y", visible=False)
            for ax in axes.flat[len(chunk):]:
                ax.set_visible(False)
            for row in axes:
                row[0].set_yticks(y)
                row[0].set_yticklabels(labels)
            axes[0][0].invert_yaxis()
            part = f" ({n}/{len(chunks)})" if len(chunks) > 1 else ""
            memo = f" (memo {d['memo']})" if d.get("memo") else ""
            fig.suptitle("\n".join(textwrap.wrap(f"{name}{part}: {d['question']}{memo}", 95)) +
                         f"\nmedian and 95% interval; {run_shape(rows)}; {provenance(rows)}\n{machine}", fontsize=9)
            fig.tight_layout()
            pngs.append(save(fig, out, name if n == 1 else f"{name}-{n}"))
    return pngs


# ---- the whole thing --------------------------------------------------------------------------

VS = "@vs"  # an experiment's runs of the other build (experiments.py --vs-build) are the experiment NAME@vs


def report(out, names, descs, update, allow_mixed=False):
    csv_path, _ = sbcollect.collect(out, allow_mixed=allow_mixed)
    rows = sbcollect.read_rows(csv_path)
    present = [e for e in dict.fromkeys(r["experiment"] for r in rows) if not e.endswith(VS)]
    builds = []
    names = [n for n in (names or present) if n in present]
    vs = []
    for n in names:
        d = descs[n]
        mine = [r for r in rows if r["experiment"] == n]
        exp_dir = os.path.join(out, n)
        os.makedirs(exp_dir, exist_ok=True)
        with open(csv_path, newline="") as f, open(os.path.join(exp_dir, "runs.csv"), "w", newline="") as g:
            rd = csv.DictReader(f)
            w = csv.DictWriter(g, fieldnames=rd.fieldnames)
            w.writeheader()
            w.writerows(r for r in rd if r["experiment"] == n)
        print(f"\n== {n}: {d['question']}")
        machine = machines.one_machine(mine, n, allow_mixed)
        print(write_tables(n, d, mine, exp_dir, made_on(d, machine)))
        if "load" in d:
            load_figures(exp_dir, d, mine, allow_mixed)
        else:
            plot(n, d, mine, exp_dir, made_on(d, machine))
        vs.append(compare_with_paper(n, d, mine, machine))
        other = [r for r in rows if r["experiment"] == n + VS]
        if other:
            builds.append(compare_builds(n, d, mine, other))
    with open(os.path.join(out, "vs-paper.md"), "w") as f:
        f.write("# These runs against the committed results\n\n" + "\n".join(vs))
    print("\n" + "\n".join(vs))
    if builds:
        with open(os.path.join(out, "vs-build.md"), "w") as f:
            f.write("# This build against the other, alternated run by run\n\n" + "\n".join(builds))
        print("\n" + "\n".join(builds))
        print(f"experiments: this build against the other in {os.path.join(out, 'vs-build.md')}", file=sys.stderr)
    print(f"experiments: compared with {os.path.relpath(PAPER, ROOT)}/ in {os.path.join(out, 'vs-paper.md')}",
          file=sys.stderr)
    if update:
        update_paper(out, names, descs)
    else:
        print(f"experiments: {os.path.relpath(PAPER, ROOT)}/ is unchanged (--update-paper, or make reproduce "
              f"UPDATE=1, replaces it)", file=sys.stderr)


def load_figures(exp_dir, d, rows, allow_mixed):
    """A load sweep's figures from exp_dir/runs.csv: p99 against the offered rate per variant, and
    the capacity table and figures when the description holds the p99 to an SLO."""
    ran = {r.get("variant") or "" for r in rows}
    for v in (v for v in variants_of(d) if v["name"] in ran):
        print(sbcollect.plot_load(exp_dir, os.path.join(exp_dir, "runs.csv"), "all", d["load"], v["name"], allow_mixed))
    if "slo_classes" in d["load"]:
        text, pngs = capacity.run(exp_dir, d["load"], allow_mixed=allow_mixed)
        print(text + "\n" + "\n".join(pngs))


RUNS_ARCHIVE = "runs.tar.xz"


def pack_runs(exp_dir):
    """Every run directory under exp_dir into exp_dir/runs.tar.xz, then removed: results/paper/
    keeps each run's files (its tails included) at a fraction of their size, since the summaries
    of one experiment's runs are alike. Owners, times and order are fixed, so the same runs give
    the same archive. A gzip file goes in stored (gzip level 0, the same name and content): the
    archive's xz then compresses across runs what each gzip compressed alone, a quarter less
    for a load sweep's latency histograms, and every reader still opens it as gzip."""
    import gzip
    import io
    import tarfile
    runs = sorted(os.path.relpath(dp, exp_dir) for dp, _, files in os.walk(exp_dir) if "summary.json" in files)
    if not runs:
        return

    def plain(ti):
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        ti.mtime = 0
        return ti
    tmp = os.path.join(exp_dir, RUNS_ARCHIVE + ".tmp")
    with tarfile.open(tmp, "w:xz", preset=9) as tar:
        for r in runs:
            for name in sorted(os.listdir(os.path.join(exp_dir, r))):
                path, arc = os.path.join(exp_dir, r, name), os.path.join(r, name)
                if not name.endswith(".gz"):
                    tar.add(path, arcname=arc, filter=plain)
                    continue
                with gzip.open(path, "rb") as f:
                    data = gzip.compress(f.read(), compresslevel=0, mtime=0)
                ti = plain(tar.gettarinfo(path, arcname=arc))
                ti.size = len(data)
                tar.addfile(ti, io.BytesIO(data))
    os.rename(tmp, os.path.join(exp_dir, RUNS_ARCHIVE))
    for r in runs:
        shutil.rmtree(os.path.join(exp_dir, r))
    for dp, _, _ in os.walk(exp_dir, topdown=False):  # the emptied parents (c0/, <policy>/, <variant>/)
        if dp != exp_dir and not os.listdir(dp):
            os.rmdir(dp)


def rows_from_dirs(name, d, exp_dir):
    """The rows collect would give, rebuilt from the result directories under exp_dir
    (<exp_dir>/c<i>/r<k>[.n<j>]/, or the same packed in runs.tar.xz): for tables and figures of
    runs whose runs.csv is gone."""
    archive = os.path.join(exp_dir, RUNS_ARCHIVE)
    if os.path.exists(archive):
        import tarfile
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(archive) as tar:
                tar.extractall(tmp, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
            return rows_from_dirs(name, d, tmp)
    rows = []
    pattern = ("*", "rate-*") if "load" in d else ("c*", "r*")
    for run in sorted(glob.glob(os.path.join(exp_dir, *pattern))):
        ci, rk = os.path.basename(os.path.dirname(run)), os.path.basename(run)
        if not os.path.exists(os.path.join(run, "summary.json")):
            continue
        r = read_run(run)
        s, made = r["summary"], r["provenance"]
        row = {"experiment": name, **{k: made[k] for k in machines.COLUMNS}, "git_sha": made["sha"],
               "dirty": int(made["dirty"]),
               "seed": float(s["seed"]) if "seed" in s else None, "policy": s.get("policy", ""),
               "workload": s.get("workload", s.get("peer", ""))}
        if "load" in d:  # <policy>/rate-<rate>-r<k>: the variant-less layout of a load sweep
            rate, _, rk = rk[len("rate-"):].partition("-")
            row.update(config=ci, label=ci, policy=ci, rate=float(rate), variant="", param=d["load"]["param"],
                       overloaded=0)
        elif ci[1:].isdigit():
            row.update(config=float(ci[1:]), label=d["configs"][int(ci[1:])]["label"])
        else:
            continue
        rep_, _, noise = rk[1:].partition(".n")
        row.update(rep=float(rep_), noise=float(noise or 1))
        row.update({**sbcollect.flatten(s), **sbcollect.derived(s)})
        rows.append(row)
    return rows


def replot(names, descs, allow_mixed=False):
    """Tables and figures of results/paper/<name>/ again, from the result directories committed
    there (what --update-paper copied), with today's statistics and figure rules. A load sweep's
    rows come from its committed runs.csv where there is one (its variants' layout is not one
    rows_from_dirs reads). An experiment whose runs come from two machines is left as it is and
    named (each table shows one machine unless allow_mixed), and the others are redrawn: the
    return value is the list of those left, for the exit status."""
    refused = []
    for n in names:
        d, exp_dir = descs[n], os.path.join(PAPER, n)
        runs_csv = os.path.join(exp_dir, "runs.csv")
        from_csv = "load" in d and os.path.exists(sbcollect.rows_path(runs_csv))
        rows = sbcollect.read_rows(runs_csv) if from_csv else rows_from_dirs(n, d, exp_dir)
        if not rows:
            print(f"experiments: {os.path.relpath(exp_dir, ROOT)}/ holds no per-run results of this description; "
                  f"not redrawn", file=sys.stderr)
            continue
        missing = [lab for key, lab in configs_of(d) if "configs" in d and not any(row_config(d, r) == key for r in rows)]
        if missing:
            print(f"experiments: {os.path.relpath(exp_dir, ROOT)}/ holds no runs of {', '.join(missing)}; not redrawn",
                  file=sys.stderr)
            continue
        if len(machines.machines(rows)) > 1 and not allow_mixed:
            listed = "; ".join(f"{machines.name(k)} ({c} runs)" for k, c in machines.machines(rows).items())
            print(f"experiments: {os.path.relpath(exp_dir, ROOT)}/: runs from two machines ({listed}); not redrawn "
                  f"({machines.FLAG} draws it, marked MIXED)", file=sys.stderr)
            refused.append(n)
            continue
        machine = made_on(d, machines.one_machine(rows, os.path.relpath(exp_dir, ROOT), allow_mixed))
        for old in {*glob.glob(os.path.join(exp_dir, n + "*.png")), *glob.glob(os.path.join(exp_dir, n + "*.pdf")),
                    *glob.glob(os.path.join(exp_dir, "sweep_p99*"))}:
            os.remove(old)
        write_tables(n, d, rows, exp_dir, machine)
        if "load" in d:
            if not from_csv:
                sbcli.write_csv(runs_csv, list(dict.fromkeys(k for r in rows for k in r)), rows)
                sbcollect.compress_rows(exp_dir)
            load_figures(exp_dir, d, rows, allow_mixed)
            continue
        for png in plot(n, d, rows, exp_dir, machine):
            print(png)
    return refused


def simulated(d):
    """The cost table a simulated experiment's runs charge ("" for a native one)."""
    args = d.get("common", [])
    if not any(a == "--executor" and b == "sim" for a, b in zip(args, args[1:])):
        return ""
    return next((b for a, b in zip(args, args[1:]) if a == "--sim-costs"), "the host's own cost table")


def made_on(d, machine):
    """A table's or figure's machine line: a simulated experiment's numbers are its cost table's
    machine's, whatever host ran the simulator, so the line names the table first."""
    costs = simulated(d)
    return f"simulated with {os.path.basename(costs)}; run on {machine}" if costs else machine


def simulated_sweep(d):
    """A load sweep run under the simulator: its runs are deterministic (the same commit,
    description and cost table give them back byte-identical, §4.11) and its tables and figures
    are redrawn from runs.csv alone (replot), so results/paper/ keeps no run directories of it."""
    return "load" in d and bool(simulated(d))


def update_paper(out, names, descs):
    """Replace results/paper/<name>/ by the new one, one experiment at a time: the new directory is
    copied beside the old one first, so an interruption leaves the old or the new, never a mix."""
    for n in names:
        src, dst = os.path.join(out, n), os.path.join(PAPER, n)
        tmp, old = dst + ".new", dst + ".old"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(src, tmp, ignore=shutil.ignore_patterns("*.pdf"))  # sbresults.COMMITTED says why
        pack_runs(tmp)
        if simulated_sweep(descs[n]) and os.path.exists(os.path.join(tmp, RUNS_ARCHIVE)):
            os.remove(os.path.join(tmp, RUNS_ARCHIVE))
        sbcollect.compress_rows(tmp)
        if os.path.exists(dst):
            os.rename(dst, old)
        os.rename(tmp, dst)
        shutil.rmtree(old, ignore_errors=True)
        print(f"experiments: {os.path.relpath(dst, ROOT)}/ updated from {src}/", file=sys.stderr)
