"""sbmetg.py - the analysis half of metg.py: METG(50%) of a curve (metg_of), points.csv read
back (read_points), the table (report: DIR/metg.csv, metg.md, peak.json) and its figures
(figures: DIR/metg-N.png/.pdf). metg.py's docstring describes the method.
"""
import csv
import math
import os
import sys

import numpy as np

import machines
import sbcollect
from sbresults import PROG, die, load_json, plt, save
from sbstats import compare

PATTERNS = ["trivial", "no_comm", "stencil_1d", "stencil_1d_periodic", "dom", "tree", "fft", "nearest", "spread",
            "random_nearest"]
PEERS = {"omp": ("patterns_omp", "OpenMP tasks (depend)"), "tbb": ("patterns_tbb", "oneTBB flow graph")}
CEILING_SUSPECT = 0.75  # own peak over the machine's below which a METG(50%) is not the system's overhead


# ---- analysis ----

def metg_of(curve):
    """(granularity_us, status) of one repetition's curve [(granularity, efficiency)], largest first:
    the finest point at or above 50%, interpolated towards the next finer one. A dip further up
    (a neighbour's burst) does not move it; the definition asks for the smallest granularity."""
    ok = [k for k, (_, e) in enumerate(curve) if e >= 0.5]
    if not ok:
        return math.inf, "not reached"
    k = ok[-1]
    if k + 1 == len(curve):
        return curve[k][0], "below"
    (g1, e1), (g2, e2) = curve[k], curve[k + 1]
    x = math.log(g1) + (0.5 - e1) * (math.log(g2) - math.log(g1)) / (e2 - e1)
    return math.exp(x), "ok"


def read_points(root):
    """points.csv, or points.csv.xz where results/paper/ keeps it compressed (sbcollect.rows_path)."""
    path = sbcollect.rows_path(os.path.join(root, "points.csv"))
    if not os.path.exists(path):
        die(f"{root} has no points.csv: not a metg.py output directory")
    with sbcollect.open_rows(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("iterations", "rep", "tasks", "wall_ns", "flop"):
            r[k] = int(r[k])
        for k in ("flops", "peak_flops", "efficiency", "efficiency_start", "granularity_us"):
            r[k] = float(r[k])
    return rows


def label_of(system, kind):
    return PEERS[system][1] if kind == "peer" else system


def fmt_us(v):
    return f"{v:.3g}"


def report(root):
    rows = read_points(root)
    probes = [r["flops"] for r in rows if r["pattern"] == "probe"]
    # cores the probes found free: a level's one-thread probe against the all-thread probe after it
    free, one = [], None
    for r in rows:
        if r["pattern"] == "probe-1":
            one = r
        elif r["pattern"] == "probe" and one:
            free.append(r["flops"] / one["flops"])
            one = None
    rows = [r for r in rows if r["pattern"] not in ("peak", "probe", "probe-1")]
    systems = list(dict.fromkeys((r["system"], r["kind"]) for r in rows))
    patterns = [p for p in PATTERNS if any(r["pattern"] == p for r in rows)]
    table, reps_of = [], {}
    for pattern in patterns:
        for system, kind in systems:
            mine = [r for r in rows if r["pattern"] == pattern and r["system"] == system]
            per_rep = []
            for rep in sorted({r["rep"] for r in mine}):
                # in sweep order (iterations down), not by granularity: overhead can make a system's
                # granularity grow again as its tasks shrink
                curve = [(r["granularity_us"], r["efficiency"])
                         for r in sorted((r for r in mine if r["rep"] == rep), key=lambda r: -r["iterations"])]
                per_rep.append(metg_of(curve))
            vals = [v for v, s in per_rep]
            statuses = {s for _, s in per_rep}
            status = "ok" if statuses == {"ok"} else "/".join(sorted(statuses))
            shares = [float(r["busiest_worker_share"]) for r in mine if r["busiest_worker_share"]]
            reps_of[(pattern, system)] = vals
            table.append({"pattern": pattern, "system": system, "kind": kind, "reps": len(per_rep),
                          "metg_us": float(np.median(vals)), "min_us": min(vals), "max_us": max(vals),
                          "best_efficiency": max(r["efficiency"] for r in mine), "status": status,
                          "busiest_worker_share": float(np.median(shares)) if shares else ""})
    with open(os.path.join(root, "metg.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    peak = load_json(os.path.join(root, "peak.json"))
    lines = [f"METG(50%) in µs, median (min..max) over {peak['reps']} repetitions; {peak['threads']} threads, width "
             f"{peak['width']}, {peak['steps']} steps, compute_bound; peak probed between every two runs with "
             f"{label_of(peak['peak_system'], 'peer' if peak['peak_system'] in PEERS else 'policy')}: median "
             f"{np.median(probes) / 1e9:.2f} GFLOP/s ({min(probes) / 1e9:.2f}..{max(probes) / 1e9:.2f}); cores the "
             f"probe found free: median {np.median(free):.2f} ({min(free):.2f}..{max(free):.2f}) of {peak['threads']}. "
             "\"n/r\": 50% not reached (best efficiency in brackets); \"<g\": still above 50% at the finest point.", "",
             "| system | " + " | ".join(patterns) + " | busiest worker's share of the tasks | own peak |",
             "|---|" + "---|" * (len(patterns) + 2)]
    capped = set()
    for system, kind in systems:
        # a system whose own peak is far below the machine's (serial: one thread of two) hovers
        # around 50% at every coarse granularity, so where it crosses 50% is noise, not overhead
        own = (peak.get("peak_medians") or {}).get(system)
        ceiling = own / peak["peak_flops"] if own else None
        cap = "†" if ceiling is not None and ceiling < CEILING_SUSPECT else ""
        if cap:
            capped.add(system)
        cells = []
        for pattern in patterns:
            t = next(x for x in table if x["pattern"] == pattern and x["system"] == system)
            if math.isinf(t["metg_us"]):
                cells.append(f"n/r ({t['best_efficiency']:.0%})")
            elif t["status"] == "below":
                cells.append(f"<{fmt_us(t['metg_us'])}")
            else:
                mark = ("" if t["status"] == "ok" else "*") + cap
                cells.append(f"{fmt_us(t['metg_us'])} ({fmt_us(t['min_us'])}..{fmt_us(t['max_us'])}){mark}")
        shares = [float(r["busiest_worker_share"]) for r in rows if r["system"] == system and r["busiest_worker_share"]]
        share = f"{np.median(shares):.0%} ({min(shares):.0%}..{max(shares):.0%})" if shares else "-"
        own_cell = f"{ceiling:.0%}" if ceiling is not None else "-"
        lines.append(f"| {label_of(system, kind)} | " + " | ".join(cells) + f" | {share} | {own_cell} |")
    lines += ["", "\\* some repetitions did not reach 50% or did not fall below it; the median counts those as "
              "infinite or as the finest granularity measured. The last column: the median over every run of the "
              "share of the tasks that the busiest worker ran (100%: the other workers never took part; \"-\": the peers, and serial, whose tasks run on "
              "the request thread). Own peak: the system's median FLOP/s with the largest tasks (the peak round) "
              "over the machine's."]
    if capped:
        lines += ["", f"† own peak below {CEILING_SUSPECT:.0%} of the machine's: the system cannot use every thread "
                  "(serial runs a job on its one request thread), so its efficiency stays near 1/threads at every coarse "
                  "granularity and where it crosses 50% measures the machine's noise, not the system's overhead."]
    lines += order_lines(patterns, systems, reps_of, capped)
    machine = peak.get("machine", machines.UNKNOWN)
    lines += ["", f"Machine: {machine}."]
    with open(os.path.join(root, "metg.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    figures(root, rows, systems, patterns, machine)


def order_lines(patterns, systems, reps_of, capped=()):
    """Per pattern, every system against the one with the lowest median and every policy against
    every peer, by the interval rule (sbstats): which comparisons the runs support. Systems in
    `capped` (own peak far below the machine's, †) are left out: their METG measures noise."""
    out = []
    for pattern in patterns:
        # an unreached 50% is infinite; a finite stand-in keeps the bootstrap's arithmetic defined
        vals = {s: [v if math.isfinite(v) else 1e30 for v in reps_of[(pattern, s)]]
                for s, _ in systems if (pattern, s) in reps_of and s not in capped}
        best = min(vals, key=lambda s: np.median(vals[s]))
        pairs = [(s, best) for s in vals if s != best]
        pairs += [(s, peer) for s, k in systems for peer, pk in systems
                  if k == "policy" and pk == "peer" and s != best and s in vals and peer in vals and peer != best]
        out += ["", f"{pattern}, by the interval rule (an unreached 50% counts as infinite):"]
        out += [f"- {label_of(a, dict(systems)[a])} against {label_of(b, dict(systems)[b])}: "
                f"{compare(a, vals[a], b, vals[b])}" for a, b in pairs]
    return out


def figures(root, rows, systems, patterns, machine):
    """Efficiency against granularity per pattern, four patterns to a figure drawn at page width:
    the median over the repetitions with their min..max as whiskers; policies solid in tab10's
    saturated colours, peers dashed in black and grey; the 50% line that defines METG drawn
    dark."""
    policies = [s for s in systems if s[1] != "peer"]
    peers = [s for s in systems if s[1] == "peer"]
    styles = {s: (plt.cm.tab10(i % 10), "-", "o") for i, s in enumerate(policies)}
    styles.update({s: (("black", "dimgrey", "grey")[i % 3], "--", "s") for i, s in enumerate(peers)})
    for n, start in enumerate(range(0, len(patterns), 4), 1):
        group = patterns[start:start + 4]
        ncols = min(2, len(group))  # one pattern (a focused sweep): one panel, not half a figure
        nrows = -(-len(group) // ncols)
        with plt.rc_context({"font.size": 8}):
            fig, axes = plt.subplots(nrows, ncols, figsize=(3.5 + 3.5 * (ncols - 1) + 1.0 * (2 - ncols),
                                                            2.9 * nrows + 0.9 + 0.4 * (2 - ncols)), squeeze=False)
            for ax, pattern in zip(axes.flat, group):
                for system, kind in systems:
                    mine = [r for r in rows if r["pattern"] == pattern and r["system"] == system]
                    its = sorted({r["iterations"] for r in mine}, reverse=True)
                    g = [np.median([r["granularity_us"] for r in mine if r["iterations"] == i]) for i in its]
                    e = [[r["efficiency"] for r in mine if r["iterations"] == i] for i in its]
                    med = np.array([np.median(x) for x in e])
                    err = [med - np.array([min(x) for x in e]), np.array([max(x) for x in e]) - med]
                    color, ls, mk = styles[(system, kind)]
                    ax.errorbar(g, med, yerr=err, ls=ls, marker=mk, ms=2.5, lw=1, elinewidth=0.6, capsize=1.5,
                                color=color, label=label_of(system, kind))
                ax.axhline(0.5, color="black", lw=1.2, ls="-.", zorder=0)
                ax.set_xscale("log")
                ax.set_yscale("log")
                top = max([1.2] + [r["efficiency"] * 1.15 for r in rows if r["pattern"] == pattern])
                ax.set_ylim(0.01, top)
                ax.set_title(pattern, fontsize=9)
                ax.set_xlabel("task granularity (µs, log scale)")
                ax.set_ylabel("efficiency (of peak FLOP/s, log)")
            for ax in list(axes.flat)[len(group):]:
                ax.set_visible(False)
            handles, labels = axes.flat[0].get_legend_handles_labels()
            fig.legend(handles, labels, loc="lower center", ncol=3 * ncols, fontsize=8, frameon=False)
            fig.suptitle("efficiency against task granularity: median of the repetitions, min..max "
                         f"whiskers;{' ' if ncols > 1 else chr(10)}dash-dot: 50%, the METG line\n{machine}", fontsize=8)
            fig.tight_layout(rect=(0, 0.1 if nrows > 1 else 0.16 + 0.1 * (2 - ncols), 1, 1))
            png = save(fig, root, f"metg-{n}")
        print(f"{PROG}: wrote {png}", file=sys.stderr)
