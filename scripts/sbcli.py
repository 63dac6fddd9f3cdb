"""sbcli.py - what every script shares that needs nothing beyond Python's standard library: the
one-line error, comma-separated lists, latencies, rates, durations and plurals for labels.

Kept apart from sbresults.py (which loads matplotlib and numpy) so that sweep.py can run a
manifest line on a cluster node that has a bare python3.
"""
import math
import os
import sys

PROG = os.path.basename(sys.argv[0])


def die(msg, status=2):
    """One line naming the problem, then exit (2: bad input, as schedbed itself)."""
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(status)


def write_csv(path, fields, rows):
    """rows (dicts) as a CSV with these columns, under a temporary name renamed into place: a
    reader never sees half a file."""
    import csv
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="")
        w.writeheader()
        w.writerows(rows)
    os.rename(tmp, path)


def split_list(text, what):
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        die(f"{what}: give a comma-separated list")
    return items


def fmt_ns(v):
    """A latency for a label: 850 ns, 12.3 µs, 4.56 ms, 1.20 s."""
    if v is None or not math.isfinite(v):
        return "-"
    if v < 1e3:
        return f"{v:.0f} ns"
    if v < 1e6:
        return f"{v / 1e3:.1f} µs"
    if v < 1e9:
        return f"{v / 1e6:.2f} ms"
    return f"{v / 1e9:.2f} s"


def fmt_time(s):
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def fmt_rate(v):
    if v is None or not math.isfinite(v):
        return "-"
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{unit}"
    return f"{v:.3g}"


START_S = 0.5  # a run's own start and stop beyond its window and warm-up, on a small machine


def run_seconds(args):
    """How long `schedbed run ARGS` should take, from its --duration and --warmup (the program's
    defaults 10 and 1 otherwise), or None for a bounded run (--jobs N), whose length is unknown."""
    def value(flags, default):
        for f in flags:
            if f in args and args.index(f) + 1 < len(args):
                return float(args[args.index(f) + 1])
        return default
    if "--jobs" in args or "-n" in args:
        return None
    return value(("--duration", "-d"), 10.0) + value(("--warmup",), 1.0) + START_S
