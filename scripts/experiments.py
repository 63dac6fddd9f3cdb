#!/usr/bin/python3
"""experiments.py - the experiments behind PAPER.md: expand, run, collect, plot, compare.

    experiments.py --list
    experiments.py [--out DIR] [--reps N] [--duration S] [--warmup S] [--jobs N] [--update-paper] [EXPERIMENT ...]
    experiments.py --report DIR [--update-paper]

Every experiment is one sweep description in sweeps/ (sweeps/<experiment>.json): its question,
its configurations (a label, a policy, a workload, settings), how many repetitions, and the
metrics its table shows. The selected descriptions are expanded into one manifest (sweep.py),
run here one run at a time (timing runs), collected into DIR/runs.csv, and each experiment gets
DIR/<experiment>/: its rows (runs.csv), table.md and table.csv (median with min and max over the
repetitions, never a single run) and its figures. Results are then compared with the committed
ones under results/paper/ (DIR/vs-paper.md, also printed).

DIR defaults to a new results/reproduce-<time>/: the committed results change only with
--update-paper, which replaces results/paper/<experiment>/ by the new one once everything ran.
--report DIR does the collect, tables, figures and comparison for runs made elsewhere (a Slurm
job array: sweep.py slurm DIR). The run arguments are the descriptions', so the runs are the ones
PAPER.md reports; --duration, --warmup and --reps shorten a trial.

Run with /usr/bin/python3 (Debian's matplotlib); `make reproduce` builds what is needed first.
"""
import argparse
import csv
import glob
import os
import shutil
import sys
import time

import sweep
from sbresults import die, fmt_ns, fmt_rate, plt, save  # first: it says so in one line when matplotlib is missing

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEPS = os.path.join(ROOT, "sweeps")
PAPER = os.path.join(ROOT, "results", "paper")
RATE, LAT, NUM, RATIO = "rate", "lat", "num", "ratio"


def descriptions():
    out = {}
    for path in sorted(glob.glob(os.path.join(SWEEPS, "*.json"))):
        d = sweep.load_description(path)
        out[d["name"]] = d
    if not out:
        die(f"no sweep descriptions in {SWEEPS}")
    return out


# ---- tables and figures from runs.csv ---------------------------------------------------------

def configs_of(d):
    """The table's rows: (key in runs.csv's config column, label)."""
    if "load" in d:
        ld = d["load"]
        return [(f"{p} {float(r):g}", f"{p}, {ld['param']}={float(r):g}") for p in ld["policies"] for r in ld["rates"]]
    return [(i, c["label"]) for i, c in enumerate(d["configs"])]


def row_config(d, r):
    return f"{r['policy']} {r['rate']:g}" if "load" in d else int(r["config"])


def metrics_of(d):
    if "load" in d:
        return [{"title": "jobs/s", "column": "throughput", "format": RATE},
                {"title": "p50", "column": "all.p50", "format": LAT},
                {"title": "p99", "column": "all.p99", "format": LAT},
                {"title": "p99.9", "column": "all.p999", "format": LAT}]
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
    """{label: {metric title: (median, min, max, n)}} of one experiment's rows."""
    by = {}
    for r in rows:
        by.setdefault(row_config(d, r), []).append(r)
    out = {}
    for key, label in configs_of(d):
        out[label] = {}
        for m in metrics_of(d):
            v = metric_values(by.get(key, []), m)
            out[label][m["title"]] = (float(np.median(v)), min(v), max(v), len(v)) if v else None
    return out


def write_tables(name, d, rows, out):
    ms = metrics_of(d)
    st = medians(d, rows)
    md = ["| configuration | " + " | ".join(m["title"] for m in ms) + " |", "|---|" + "---|" * len(ms)]
    with open(os.path.join(out, "table.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["configuration"] + [f"{m['title']} {x}" for m in ms for x in ("median", "min", "max")] + ["runs"])
        for label, cells in st.items():
            shown, raw, n = [], [], 0
            for m in ms:
                c = cells[m["title"]]
                if c:
                    shown.append(f"{fmt(m['format'], c[0])} ({fmt(m['format'], c[1])}..{fmt(m['format'], c[2])})")
                    raw += list(c[:3])
                    n = max(n, c[3])
                else:
                    shown.append("-")
                    raw += ["", "", ""]
            md.append(f"| {label} | " + " | ".join(shown) + " |")
            w.writerow([label] + raw + [n])
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(f"{d['question']}\n\nMedian (min..max) of each configuration's runs.\n\n" + "\n".join(md) + "\n")
    return "\n".join(md)


def plot(name, d, rows, out):
    """One panel per metric: median bars with min..max whiskers, configurations on the y axis."""
    ms = metrics_of(d)
    st = medians(d, rows)
    labels = list(st)
    fig, axes = plt.subplots(1, len(ms), figsize=(3.2 * len(ms) + 1.5, 0.42 * len(labels) + 1.4), sharey=True)
    axes = np.atleast_1d(axes)
    y = np.arange(len(labels))
    for ax, m in zip(axes, ms):
        c = [st[lab][m["title"]] for lab in labels]
        med = np.array([x[0] if x else np.nan for x in c])
        lo = np.array([x[0] - x[1] if x else 0 for x in c])
        hi = np.array([x[2] - x[0] if x else 0 for x in c])
        scale, unit = (1e3, "µs") if m["format"] == LAT else (1, "")
        med, err = med / scale, np.array([lo, hi]) / scale
        ax.barh(y, med, xerr=err, color="#4c72b0", alpha=0.85, ecolor="black", capsize=2)
        ax.set_title(m["title"] + (f" ({unit})" if unit else ""), fontsize="medium")
        pos = med[med > 0]
        if m["format"] == LAT and len(pos) and np.nanmax(med) / max(np.nanmin(pos), 1e-9) > 50:
            ax.set_xscale("log")
        ax.grid(axis="y", visible=False)
    axes[0].set_yticks(y)
    axes[0].set_yticklabels(labels)
    axes[0].invert_yaxis()
    fig.suptitle(f"{name}: {d['question']}", fontsize="medium")
    fig.tight_layout()
    return save(fig, out, name)


# ---- comparison with the committed numbers ----------------------------------------------------

def committed_medians(name, d):
    """{label: {metric title: median}} from results/paper/<name>/table.csv (or the load sweep's
    older sweep.csv); None when nothing is committed."""
    table = os.path.join(PAPER, name, "table.csv")
    if os.path.exists(table):
        out = {}
        with open(table, newline="") as f:
            for r in csv.DictReader(f):
                out[r["configuration"]] = {m["title"]: float(r[f"{m['title']} median"])
                                           for m in metrics_of(d) if r.get(f"{m['title']} median")}
        return out
    old = os.path.join(PAPER, name, "sweep.csv")
    if "load" in d and os.path.exists(old):
        by = {}
        with open(old, newline="") as f:
            for r in csv.DictReader(f):
                by.setdefault(f"{r['policy']}, {d['load']['param']}={float(r['rate']):g}", []).append(r)
        cols = {"jobs/s": ("throughput", 1), "p50": ("p50_us", 1e3), "p99": ("p99_us", 1e3), "p99.9": ("p999_us", 1e3)}
        return {lab: {t: float(np.median([float(r[c]) * k for r in rs])) for t, (c, k) in cols.items()}
                for lab, rs in by.items()}
    return None


def compare_with_paper(name, d, rows):
    """Markdown: each new median next to the committed one, and their ratio."""
    old = committed_medians(name, d)
    if old is None:
        return f"### {name}\n\nnothing committed under {os.path.relpath(PAPER, ROOT)}/{name}/ to compare with.\n"
    ms = metrics_of(d)
    new = medians(d, rows)
    lines = [f"### {name}", "", "new median / committed median (ratio)", "",
             "| configuration | " + " | ".join(m["title"] for m in ms) + " |", "|---|" + "---|" * len(ms)]
    ratios = []
    for label, cells in new.items():
        shown = []
        for m in ms:
            c, o = cells[m["title"]], old.get(label, {}).get(m["title"])
            if c is None or o is None:
                shown.append("-")
                continue
            ratio = c[0] / o if o else float("nan")
            if np.isfinite(ratio):
                ratios.append(ratio)
            shown.append(f"{fmt(m['format'], c[0])} / {fmt(m['format'], o)} ({ratio:.2f})")
        lines.append(f"| {label} | " + " | ".join(shown) + " |")
    if ratios:
        lines += ["", f"ratios: median {np.median(ratios):.2f}, {min(ratios):.2f}..{max(ratios):.2f} "
                      f"over {len(ratios)} figures"]
    return "\n".join(lines) + "\n"


# ---- the whole thing --------------------------------------------------------------------------

def report(out, names, descs, update):
    csv_path, _ = sweep.collect(out)
    rows = sweep.read_rows(csv_path)
    present = list(dict.fromkeys(r["experiment"] for r in rows))
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
        print(write_tables(n, d, mine, exp_dir))
        plot(n, d, mine, exp_dir)
        if "load" in d:
            print(sweep.plot_load(exp_dir, os.path.join(exp_dir, "runs.csv"), "all"))
        vs.append(compare_with_paper(n, d, mine))
    with open(os.path.join(out, "vs-paper.md"), "w") as f:
        f.write("# These runs against the committed results\n\n" + "\n".join(vs))
    print("\n" + "\n".join(vs))
    print(f"experiments: compared with {os.path.relpath(PAPER, ROOT)}/ in {os.path.join(out, 'vs-paper.md')}",
          file=sys.stderr)
    if update:
        update_paper(out, names)
    else:
        print(f"experiments: {os.path.relpath(PAPER, ROOT)}/ is unchanged (--update-paper, or make reproduce "
              f"UPDATE=1, replaces it)", file=sys.stderr)


def update_paper(out, names):
    """Replace results/paper/<name>/ by the new one, one experiment at a time: the new directory is
    copied beside the old one first, so an interruption leaves the old or the new, never a mix."""
    for n in names:
        src, dst = os.path.join(out, n), os.path.join(PAPER, n)
        tmp, old = dst + ".new", dst + ".old"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(src, tmp)
        if os.path.exists(dst):
            os.rename(dst, old)
        os.rename(tmp, dst)
        shutil.rmtree(old, ignore_errors=True)
        print(f"experiments: {os.path.relpath(dst, ROOT)}/ updated from {src}/", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description="the experiments behind PAPER.md")
    ap.add_argument("experiments", nargs="*")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--schedbed", default="build/release/schedbed")
    ap.add_argument("--reps", type=int, help="repetitions (default: each description's)")
    ap.add_argument("--duration", type=float, help="measurement seconds (default: each description's)")
    ap.add_argument("--warmup", type=float, help="warm-up seconds (default: each description's)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, help="runs at once (default: one, they are timing runs)")
    ap.add_argument("--out", help="where the runs go (default: a new results/reproduce-<time>/)")
    ap.add_argument("--report", metavar="DIR", help="only collect, tabulate, plot and compare the runs in DIR")
    ap.add_argument("--update-paper", action="store_true", help="replace results/paper/<experiment>/ by the new runs")
    a = ap.parse_args()
    descs = descriptions()
    if a.list:
        for n, d in descs.items():
            print(f"{n:<12} {d['question']}")
        return 0
    bad = [n for n in a.experiments if n not in descs]
    if bad:
        die(f"unknown experiment(s) {', '.join(bad)}; valid: {', '.join(descs)}")
    if a.report:
        report(a.report, a.experiments, descs, a.update_paper)
        return 0
    names = a.experiments or list(descs)
    out = a.out or os.path.join("results", "reproduce-" + time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
    if os.path.abspath(out).startswith(os.path.abspath(PAPER)):
        die(f"--out {out} is inside {PAPER}: reproduce elsewhere and use --update-paper")
    t0 = time.monotonic()
    opts = {"reps": a.reps, "seed": a.seed, "duration": a.duration, "warmup": a.warmup}
    print(sweep.write_manifest(out, sweep.expand([descs[n] for n in names], opts)), file=sys.stderr)
    ra = argparse.Namespace(dir=out, schedbed=a.schedbed, jobs=a.jobs, retry_failed=False)
    status = sweep.cmd_run(ra)
    if status != 0:
        die(f"not every run finished; fix and resume with: scripts/sweep.py run {out} --retry-failed, "
            f"then scripts/experiments.py --report {out}", status)
    report(out, names, descs, a.update_paper)
    print(f"experiments: {len(names)} done in {(time.monotonic() - t0) / 60:.1f} min, under {out}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
