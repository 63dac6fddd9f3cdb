#!/usr/bin/python3
"""plot_run.py RUN_DIR - the figures of one `schedbed run`, written into RUN_DIR.

latency_cdf.png/.pdf: the latency distribution of each job class (CDF on a log axis, and the
tail as a complementary CDF, where p99 and p99.9 can be read off), from the run's
latency-hist.json.gz: each job at its bucket's upper bound, within 1/64 of its latency.
throughput.png/.pdf: jobs finished (ended ok, all classes) per second over the measurement window
in 100 ms bins, from latency-hist.json.gz's finished_ok. timeline.png/.pdf, when the
run was traced (trace.json): what each worker did over the first stretch of the measurement
window, one lane per worker, tasks coloured by job class, stolen ones darker, suspensions grey
and wake-ups marked.

The only writer of a run's figure files (the run's plot.gp draws in the terminal). Reads only the
run's own files; knows no policy or workload by name.
"""
import argparse
import json
import os
import re

from sbresults import (np, cdf, die, fmt_ns, fmt_rate, job_latencies, latency_hist, read_run, plt, save, tail,
                       title_of, weighted_pct)

TS = re.compile(r'"ts":([0-9.eE+-]+)')


def latency_figure(run, hist):
    """From latency-hist.json.gz's classes (`hist`: a few KB whatever the run's size: seconds and
    little memory for millions of jobs), or, when None, from the per-job rows of a run older than it."""
    s = run["summary"]
    if hist is None:
        hist = {c: (np.sort(v), np.ones(len(v))) for c, v in job_latencies(run["dir"]).items()}
    if not hist:
        return None
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.6))
    for i, cls in enumerate(sorted(hist, key=lambda c: -hist[c][1].sum())):
        x, n = hist[cls]
        label = (f"{cls} (n={int(n.sum())}, p50 {fmt_ns(weighted_pct(x, n, 50))}, "
                 f"p99 {fmt_ns(weighted_pct(x, n, 99))})")
        colour = plt.cm.tab10(i % 10) if len(hist) <= 10 else plt.cm.tab20(i % 20)
        cdf(a1, x, label, counts=n, color=colour)
        tail(a2, x, None, counts=n, color=colour)
    a1.set_title("CDF of job latency per class")
    a2.set_title("tail: fraction slower than x (dotted: p99, p99.9)")
    # one legend for both panels, below them: with many classes it would hide the curves
    fig.legend(*a1.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(3, len(hist)), title="job class (jobs in the window, p50, p99)")
    fig.suptitle(f"{title_of(s)}: job latency (arrival to teardown), {s['threads']} workers, "
                 f"{s['window_s']:.2f} s window\n{s['run_id']}")
    fig.tight_layout()
    return save(fig, run["dir"], "latency_cdf")


def throughput_figure(run, finished):
    """Jobs finished per second in each 100 ms bin the window touches (it opens inside the first),
    from latency-hist.json.gz's finished_ok (`finished`, as latency_hist gives it); None without it."""
    if finished is None or not finished[1].sum():
        return None
    s = run["summary"]
    start, counts, bin_s = finished
    n = min(len(counts), int(np.ceil(s["window_s"] / bin_s - 1e-9)) + 1)
    start, rate = start[:n], counts[:n] / bin_s
    fig, ax = plt.subplots(figsize=(12, 4.6))
    ax.stairs(rate, np.append(start, start[-1] + bin_s), label=f"all classes ({int(counts[:n].sum())} jobs)")
    if s.get("throughput") is not None:
        ax.axhline(s["throughput"], color="grey", lw=0.8, ls=":",
                   label=f"over the window: {fmt_rate(s['throughput'])} jobs/s")
    ax.set_xlim(start[0], start[-1] + bin_s)
    ax.set_ylim(0, None)
    ax.set_xlabel("time from run start (s)")
    ax.set_ylabel(f"jobs finished per second ({bin_s * 1e3:.0f} ms bins)")
    ax.legend(loc="lower right")
    fig.suptitle(f"{title_of(s)}: jobs finished per second over the window, {s['threads']} workers, "
                 f"{s['window_s']:.2f} s window\n{s['run_id']}")
    fig.tight_layout()
    return save(fig, run["dir"], "throughput")


def read_trace(path, limit):
    """The trace's metadata, the window start (µs) and the first `limit` task events of the
    window. The file has one event per line, so a first pass reads only timestamps."""
    with open(path) as f:
        lines = f.readlines()
    events, meta, win = [], {}, 0.0

    def parse(line):
        line = line.strip().rstrip(",")
        return json.loads(line) if line.startswith("{\"ph\"") else None

    for line in lines:
        if '"ph":"M"' in line or '"cat":"window"' in line:
            e = parse(line)
            if e and e["ph"] == "M" and e["name"] == "thread_name":
                meta[e["tid"]] = e["args"]["name"]
            elif e and e.get("name") == "window start":
                win = e["ts"]
    ts = []
    for i, line in enumerate(lines):
        if '"ph":"X"' in line and '"cat":"suspend"' not in line:
            m = TS.search(line)
            if m and float(m.group(1)) >= win:
                ts.append((float(m.group(1)), i))
    if not ts:
        if not meta:  # not written by schedbed: read it whole
            doc = json.loads("".join(lines))
            ts = [(e["ts"], e) for e in doc.get("traceEvents", []) if e.get("ph") == "X"]
        if not ts:
            return meta, win, [], None
    ts.sort(key=lambda x: x[0])
    chosen = ts[:limit]
    t_end = chosen[-1][0]
    for t, ref in chosen:
        events.append(ref if isinstance(ref, dict) else parse(lines[ref]))
    # suspensions and wake-ups in the same stretch
    for line in lines:
        if '"cat":"suspend"' in line or '"cat":"wake"' in line:
            m = TS.search(line)
            if m and win <= float(m.group(1)) <= t_end:
                events.append(parse(line))
    return meta, win, events, t_end


def timeline_figure(run, limit):
    path = os.path.join(run["dir"], "trace.json")
    if not os.path.exists(path):
        return None
    meta, win, events, t_end = read_trace(path, limit)
    if not events:
        return None
    s = run["summary"]
    tids = sorted(set(meta) | {e["tid"] for e in events})
    lane = {t: i for i, t in enumerate(tids)}
    classes = sorted({e["name"].replace(" (stolen)", "") for e in events if e.get("cat") in ("task", "steal")})
    base = {c: np.array(plt.cm.tab10(i % 10)) for i, c in enumerate(classes)}

    def colour(cls, stolen):
        # a stolen run keeps its class's hue, darkened: tiny tasks leave no room for outlines
        return tuple(base[cls][:3] * 0.45) + (1.0,) if stolen else tuple(base[cls])

    height = max(2.5, 0.45 * len(tids) + 1.6)
    fig, ax = plt.subplots(figsize=(13, height))
    to_ms = 1e-3
    bars = {}
    for e in events:
        y = lane[e["tid"]]
        x = (e["ts"] - win) * to_ms
        if e.get("cat") == "suspend":
            ax.broken_barh([(x, e["dur"] * to_ms)], (y - 0.15, 0.3), facecolors="0.8", edgecolors="none")
        elif e.get("cat") == "wake":
            ax.plot([x], [y + 0.42], marker="v", ms=4, color="black", ls="none")
        else:
            key = (e["name"].replace(" (stolen)", ""), e.get("cat") == "steal")
            bars.setdefault(key, {}).setdefault(y, []).append((x, max(e["dur"] * to_ms, 1e-6)))
    handles, labels = [], []
    for (cls, stolen), lanes in sorted(bars.items()):
        for y, spans in lanes.items():
            ax.broken_barh(spans, (y - 0.35, 0.7), facecolors=colour(cls, stolen), edgecolors="none")
        handles.append(plt.Rectangle((0, 0), 1, 1, color=colour(cls, stolen)))
        labels.append(f"{cls}, stolen" if stolen else cls)
    handles.append(plt.Rectangle((0, 0), 1, 1, color="0.8"))
    labels.append("suspended")
    handles.append(plt.Line2D([], [], marker="v", color="black", ls="none"))
    labels.append("wake-up")
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_yticks(range(len(tids)))
    ax.set_yticklabels([meta.get(t, f"tid {t}") for t in tids])
    ax.set_ylim(-0.6, len(tids) - 0.4)
    ax.invert_yaxis()
    ax.set_xlim(0, (t_end - win) * to_ms)
    ax.set_xlabel("time since the measurement window opened (ms)")
    ax.grid(axis="y", alpha=0)
    span = (t_end - win) * to_ms
    ax.set_title(f"{title_of(s)}: per-worker timeline, the first {span:.3g} ms of the measurement window "
                 f"({sum(1 for e in events if e.get('cat') in ('task', 'steal'))} task runs)")
    fig.tight_layout()
    return save(fig, run["dir"], "timeline")


def main():
    ap = argparse.ArgumentParser(description="Plot one schedbed run (PNG and PDF into the run directory).")
    ap.add_argument("run_dir", help="a directory written by schedbed run, e.g. results/<run-id>")
    ap.add_argument("--events", type=int, default=3000,
                    help="task runs shown in the timeline, from the window's start (default 3000)")
    a = ap.parse_args()
    if a.events < 1:
        die("--events must be at least 1")
    run = read_run(a.run_dir)
    classes, finished = latency_hist(run["dir"]) or (None, None)
    written = [p for p in (latency_figure(run, classes), throughput_figure(run, finished),
                           timeline_figure(run, a.events)) if p]
    if not written:
        die(f"{a.run_dir}: no jobs recorded and no trace; nothing to plot", 1)
    for p in written:
        print(p)


if __name__ == "__main__":
    main()
