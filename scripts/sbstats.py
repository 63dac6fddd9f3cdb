"""sbstats.py - the statistics every table and figure of the study uses, and the one rule for
claiming a difference.

A configuration's figure is the median over its repetitions (each repetition its own seed), with
a 95% percentile-bootstrap interval of that median. Two configurations are ordered only when
their intervals do not overlap; otherwise the answer is "no difference measured". The bootstrap
draws from a generator with a fixed seed, so the same runs always give the same table.

Needs numpy (Debian's python3-numpy).
"""
import numpy as np

LEVEL = 0.95
RESAMPLES = 10000
RNG_SEED = 20261123  # fixed: a table regenerated from the same runs is byte-identical
NO_DIFFERENCE = "no difference measured"
MIN_RUNS = 3  # fewer repetitions give an interval of one or two points: nothing to order by


def median_ci(values, level=LEVEL, resamples=RESAMPLES):
    """(median, low, high): the median of values and the percentile-bootstrap interval of the
    median at the given level. One value gives a zero-width interval: one run says nothing about
    spread, and the tables show the run count beside it."""
    v = np.asarray([x for x in values if x is not None], dtype=np.float64)
    if v.size == 0:
        raise ValueError("no values")
    med = float(np.median(v))
    if v.size == 1:
        return med, med, med
    rng = np.random.default_rng(RNG_SEED)
    draws = rng.choice(v, size=(resamples, v.size), replace=True)
    meds = np.median(draws, axis=1)
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(meds, [tail, 100 - tail])
    return med, float(lo), float(hi)


def overlap(a, b):
    """Whether two (median, low, high) intervals share a point."""
    return not (a[2] < b[1] or b[2] < a[1])


def order(name_a, ci_a, name_b, ci_b, runs_a, runs_b):
    """"A < B", "A > B" (by median, and only when the intervals do not overlap and each side has
    at least MIN_RUNS repetitions), else "no difference measured"."""
    if min(runs_a, runs_b) < MIN_RUNS or overlap(ci_a, ci_b):
        return NO_DIFFERENCE
    return f"{name_a} < {name_b}" if ci_a[0] < ci_b[0] else f"{name_a} > {name_b}"


def compare(name_a, values_a, name_b, values_b):
    """order() from two lists of per-repetition values."""
    return order(name_a, median_ci(values_a), name_b, median_ci(values_b), len(values_a), len(values_b))
