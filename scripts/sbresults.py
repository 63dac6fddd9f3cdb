"""sbresults.py - what the plotting and experiment scripts share.

Owns what the figures need from a run directory beyond sbread's reader (the latencies per class,
from jobs.csv.gz or latency-hist.json.gz, as numpy arrays) and the look of every figure (units,
log axes, saving PNG and PDF side by side); running is sbrun's (run_manifest). It knows no policy and no workload by name: everything
it shows comes from the files. Does not own any figure's content;
plot_run.py, compare.py, sbcollect.py and sbexpreport.py do.

Run with /usr/bin/python3 (Debian's matplotlib and numpy) and MPLBACKEND=Agg.
"""
import os
import subprocess
import sys

from sbcli import PROG, die, fmt_ns, fmt_rate, split_list  # noqa: F401 (the scripts import them from here too)
from sbread import job_rows, load_json, read_run  # noqa: F401 (the one reader, for the plotting scripts)

os.environ.setdefault("MPLBACKEND", "Agg")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
except ImportError as e:  # a python3 earlier on PATH may not see Debian's packages
    print(f"{PROG}: Python module {e.name} is missing: run with /usr/bin/python3 (Debian's python3-matplotlib, "
          f"python3-numpy; make deps installs them)", file=sys.stderr)
    sys.exit(2)

plt.rcParams.update({
    "figure.dpi": 110,
    "savefig.dpi": 130,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": "small",
})


def eng_axis(axis):
    """Tick labels like 640k and 15M on a matplotlib axis (ax.xaxis): six-digit rates side by side
    run into each other, and a 1e7 in the corner is easy to miss."""
    from matplotlib.ticker import EngFormatter
    axis.set_major_formatter(EngFormatter(sep=""))


def log_ticks(axis):
    """Tick labels on a log axis (ax.xaxis) that do not run into each other: 1, 2 and 5 times each
    power of ten where the data span little more than a decade (matplotlib's own minor labels,
    2x10^1 3x10^1 4x10^1, then overlap), 1 and 3 times up to two decades (1, 2 and 5 there put
    "100200" on a half-page panel), the powers alone beyond, as plain numbers (20, 5k)."""
    from matplotlib.ticker import EngFormatter, FuncFormatter, LogLocator, NullFormatter
    axis.axes.autoscale_view()
    lo, hi = sorted(axis.get_view_interval())
    eng = EngFormatter(sep="")
    span = hi / lo if lo > 0 else float("inf")
    subs = (1.0, 2.0, 5.0) if span < 20 else (1.0, 3.0) if span < 100 else (1.0,)
    axis.set_major_locator(LogLocator(subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}" if v < 1000 else eng(v)))
    axis.set_minor_formatter(NullFormatter())


def pct(values, q):
    """Percentile q (0..100) by nearest rank, the one method schedbed's table and summary.json use:
    the smallest value with at least q% of the values at or below it (no interpolation)."""
    return float(np.percentile(values, q, method="inverted_cdf"))


def latency_hist(run_dir):
    """The run's latency-hist.json.gz as (classes, finished); None when the run has no such file
    (runs older than it). classes: {class name: (latencies in ns, jobs)}, every bucket that holds
    jobs that ended ok, at its upper bound (at most 1/64 above the jobs in it), ascending.
    finished: (bin starts in s from run start, jobs that ended ok in each bin, the bin's length in
    s), the bins from the one the window opens in; None when the file has no finished_ok."""
    from sbhist import HIST_FILE, bucket_low, bucket_width, hist_pairs, read_histogram
    if not os.path.exists(os.path.join(run_dir, HIST_FILE)):
        return None
    doc = read_histogram(run_dir)
    out = {}
    for cls in doc["classes"]:
        pairs = hist_pairs(doc, cls)
        if cls != "all" and pairs:
            out[cls] = (np.array([bucket_low(i) + bucket_width(i) - 1 for i, _ in pairs], dtype=np.float64),
                        np.array([n for _, n in pairs], dtype=np.float64))
    fin = doc.get("finished_ok")
    finished = None
    if fin:
        counts = np.array(fin["counts"], dtype=np.float64)
        finished = (fin["first_bin_s"] + fin["bin_s"] * np.arange(len(counts)), counts, float(fin["bin_s"]))
    return out, finished


def job_latencies(run_dir):
    """{class name: numpy array of latencies in ns}: the exact ones from the run's per-job rows,
    or, for a run that wrote none (past schedbed's --rows), each job at its histogram bucket's
    upper bound."""
    rows = job_rows(run_dir)
    if not rows:
        hist = latency_hist(run_dir)
        return {c: np.repeat(x, n.astype(np.int64)) for c, (x, n) in (hist[0] if hist else {}).items()}
    out = {}
    for row in rows:
        if "class" not in row or "latency_ns" not in row:
            die(f"{run_dir}: per-job rows lack class/latency_ns: {sorted(row)}")
        out.setdefault(row["class"], []).append(int(row["latency_ns"]))
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


def weighted_pct(x, n, q):
    """Percentile q (0..100) by nearest rank of values x (ascending) held by n[i] jobs each."""
    cum = np.cumsum(n)
    return float(x[min(int(np.searchsorted(cum, max(1.0, np.ceil(q / 100 * cum[-1] - 1e-9)))), len(x) - 1)])


def _steps(lat_ns, counts):
    """x in µs (ascending), jobs at each x, and the running total: from raw latencies, or from
    (value, count) pairs such as latency_hist's."""
    if counts is None:
        x = np.sort(np.asarray(lat_ns, dtype=np.float64))
        c = np.ones(len(x))
    else:
        x, c = np.asarray(lat_ns, dtype=np.float64), np.asarray(counts, dtype=np.float64)
    return x / 1e3, c, np.cumsum(c)


def cdf(ax, lat_ns, label, counts=None, **kw):
    """Empirical CDF of latencies (or of values held by `counts` jobs each), x in µs on a log axis."""
    x, _, cum = _steps(lat_ns, counts)
    ax.step(x, cum / cum[-1], where="post", label=label, **kw)
    ax.set_xscale("log")
    ax.set_xlabel("job latency (µs, log scale)")
    ax.set_ylabel("fraction of jobs at or below")
    ax.set_ylim(0, 1.01)


def tail(ax, lat_ns, label, counts=None, **kw):
    """Complementary CDF on log-log axes: where p99 and p99.9 live."""
    x, c, cum = _steps(lat_ns, counts)
    n = cum[-1]
    y = 1.0 - (cum - c) / n
    ax.step(x, y, where="post", label=label, **kw)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("job latency (µs, log scale)")
    ax.set_ylabel("fraction of jobs slower (log scale)")
    low = max(0.5 / n, 1e-6)
    if len(ax.lines) > 1:  # the class with the most jobs reaches deepest into the tail
        low = min(low, ax.get_ylim()[0])
    ax.set_ylim(low, 1.1)
    for q in (1e-2, 1e-3):
        ax.axhline(q, color="grey", lw=0.6, ls=":")


# The committed results keep the PNG, which PAPER.md shows, and no PDF: the clone and the 16-core
# machine's carry have a size budget, and a PDF is one `experiments.py --report` away.
COMMITTED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results", "paper")


def save(fig, out_dir, stem):
    """stem.png and stem.pdf in out_dir (the PNG alone under results/paper/); returns the PNG path."""
    png = os.path.join(out_dir, stem + ".png")
    fig.savefig(png, bbox_inches="tight")
    if not os.path.realpath(out_dir).startswith(os.path.realpath(COMMITTED) + os.sep):
        fig.savefig(os.path.join(out_dir, stem + ".pdf"), bbox_inches="tight")
    plt.close(fig)
    return png


def title_of(summary):
    return f"{summary['workload']} under {summary['policy']}"


def main_classes(runs, most=3):
    """The classes with the most jobs over the given runs, most first."""
    counts = {}
    for run in runs:
        for c, v in run["summary"].get("classes", {}).items():
            counts[c] = counts.get(c, 0) + v["count"]
    return [c for c, _ in sorted(counts.items(), key=lambda kv: -kv[1])][:most]


def policy_names(schedbed):
    """Every registered policy, from the program itself."""
    try:
        out = subprocess.run([schedbed, "list", "--policies"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        die(f"cannot ask {schedbed} for its policies: {e}")
    return out.split()


def parse_with_passthrough(ap):
    """Parse sys.argv up to "--"; what follows goes to every `schedbed run` unchanged."""
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    return ap.parse_args(argv[:cut]), argv[cut + 1:]
