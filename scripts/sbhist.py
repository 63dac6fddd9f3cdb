"""sbhist.py - the reader of a run's latency-hist.json.gz (every job's latency as a log-bucket
histogram per class, written by schedbed: harness/hist.c): the bucket numbering and percentiles.

Needs nothing beyond Python's standard library.
"""
import json
import os

HIST_FILE = "latency-hist.json.gz"

# ---- per-job latencies as a log-bucket histogram ----------------------------------------------
# schedbed writes latency-hist.json.gz itself (harness/hist.c); this is its reader.
# Exact below 2**SUB_BITS ns; above, each power of two is cut into 2**(SUB_BITS-1) buckets, so a
# bucket is at most 1/64 of its lower bound wide: any percentile comes back within 1.6%. Bucket
# i holds [bucket_low(i), bucket_low(i) + bucket_width(i)); with SUB_BITS 7, i = 64 * shift +
# (v >> shift), shift = max(bit_length(v) - 7, 0), so consecutive buckets have consecutive numbers
# and the stored gaps between occupied ones are mostly 0, which compresses to almost nothing.
SUB_BITS = 7
HALF = 1 << (SUB_BITS - 1)


def bucket_index(v):
    """The bucket of a latency v (ns, >= 0)."""
    shift = max(v.bit_length() - SUB_BITS, 0)
    return HALF * shift + (v >> shift)


def bucket_low(i):
    if i < 2 * HALF:
        return i
    shift = i // HALF - 1
    return (i - HALF * shift) << shift


def bucket_width(i):
    return 1 if i < 2 * HALF else 1 << (i // HALF - 1)


def read_histogram(run_dir):
    import gzip
    with gzip.open(os.path.join(run_dir, HIST_FILE), "rt") as f:
        return json.load(f)


def hist_pairs(doc, cls):
    """[(bucket index, jobs)] of one class of a latency-hist document, ascending."""
    h = doc["classes"][cls]
    out, i = [], h["first"]
    for k, n in enumerate(h["counts"]):
        if k:
            i += h["gaps"][k - 1] + 1
        out.append((i, n))
    return out


def hist_percentile(pairs, q):
    """Percentile q (0..100) of hist_pairs() by nearest rank, as the highest value of the bucket the
    rank falls in (never below the exact percentile, at most 1/64 above it)."""
    n = sum(c for _, c in pairs)
    if n == 0:
        return None
    rank = max(1, -(-q * n // 100))  # ceil(q% of n), at least the first job
    seen = 0
    for i, c in pairs:
        seen += c
        if seen >= rank:
            break
    return bucket_low(i) + bucket_width(i) - 1
