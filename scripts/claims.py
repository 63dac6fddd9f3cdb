#!/usr/bin/python3
"""claims.py - PAPER.md's claims table (§8) checked against the committed data (make claims).

    claims.py [--claims results/paper/claims.json] [--paper results/paper] [--table PAPER.md]

Every row of the claims table has an entry in claims.json: the numbers it states and the
comparisons it makes, each as a check that recomputes its figure from the committed data:

  {"get": REF, "is": "16.6k"}          a figure, quoted as PAPER.md quotes it: it must round to
                                       the quoted digits (16.6k: 16,550 to 16,650; 42.2us;
                                       3.7ms; 5.9x; 31%)
  {"range": [REF, ...], "is": "14.8k..15.4k"}   the least and the most of several figures
  {"ratio": [REF_A, REF_B], "is": "5.9x"}       A / B
  {"more": [REF_A, REF_B], "is": "31%"}         A / B - 1 (A is 31% more than B)
  {"less": [REF_A, REF_B], "is": "18%"}         1 - A / B (A is 18% less than B)
  {"order": [REF_A, OP, REF_B]}                 OP is <, > or ~ (no difference measured), by the
                                                interval rule (sbstats.order): < and > need
                                                the 95% intervals apart, ~ needs them to overlap;
                                                <= and >= (not measured above, below) allow
                                                either; REF_B may be a list, each against A

A REF is "EXPERIMENT/CONFIGURATION/METRIC" (the table's row label and column title): the median
and 95% interval of that cell recomputed from results/paper/EXPERIMENT/runs.csv.xz by the same code
that writes the table (sbexp.py), refused when the runs come from two machines. A REF of the
form "csv:PATH?COL=VAL&COL=VAL#COLUMN" is a cell of a committed CSV that a script derived (METG,
bench-core, validate-sim, capacity): the one row that matches; "#VALUE|LOW|HIGH|RUNS" names the
columns of a figure with its interval, for the interval rule. "costs:NAME" is a line of the
simulator's cost table PAPER.md quotes (COSTS), in ns. "REF /N" is REF's figure and interval divided by N
(a capacity per worker). An entry's "mixed_machines"
({experiment: why}) lets those rows name more than one machine, and the run says so. Rows with no committed data to
check carry "unchecked" and the reason, and are listed as such.

Prints one line per row; a failing check names the row, the check and the recomputed figure, and
the exit status is 1. A row of PAPER.md's table with no entry, or an entry with no row, fails too.
"""
import argparse
import csv
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sbcli import die  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COSTS = os.path.join("sim", "costs-oxide-virtual-turin-like-2t.txt")  # the 2-core machine's table, §4.11
UNITS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "k": 1e3, "M": 1e6, "x": 1, "%": 0.01, "": 1}
NUMBER = re.compile(r"^\s*(-?[0-9][0-9,]*(?:\.([0-9]+))?)\s*(ns|us|µs|ms|s|k|M|x|%)?\s*$")


class Failed(Exception):
    pass


def quoted(text):
    """(value, half a unit of its last digit): "16.6k" -> (16600, 50)."""
    m = NUMBER.match(text)
    if not m:
        die(f"claims: '{text}' is not a quoted number (digits and one of {', '.join(k for k in UNITS if k)})")
    scale = UNITS[m.group(3) or ""]
    places = len(m.group(2) or "")
    return float(m.group(1).replace(",", "")) * scale, 0.5 * 10 ** -places * scale


def rounds_to(value, text):
    v, half = quoted(text)
    return abs(value - v) <= half * (1 + 1e-9)


class Data:
    """The committed figures, each computed once."""

    def __init__(self, paper):
        import machines
        import sbexp
        self.sbexp, self.machines, self.paper = sbexp, machines, paper
        self.descs, self.rows, self.cells, self.csvs = sbexp.descriptions(), {}, {}, {}
        self.allow_mixed = {}  # experiment: why its rows may name more than one machine
        self.costs = None

    def experiment_rows(self, name):
        if name not in self.rows:
            allow = self.allow_mixed.get(name)
            path = os.path.join(self.paper, name, "runs.csv")
            import sbcollect
            if name not in self.descs or not os.path.exists(sbcollect.rows_path(path)):
                raise Failed(f"no experiment {name} with a committed runs.csv")
            rows = [r for r in sbcollect.read_rows(path) if r.get("experiment") in (name, None)]
            self.machines.one_machine(rows, f"claims: {name}", allow_mixed=bool(allow))
            self.rows[name] = rows
        return self.rows[name]

    def cell(self, ref):
        """(median, low, high, runs) of one table cell."""
        if ref in self.cells:
            return self.cells[ref]
        base, per, n = ref.rpartition(" /")[0], *ref.rpartition(" /")[1:]
        if per and n.isdigit() and int(n) > 0:  # "REF /N": the figure per one of N (per worker)
            m, lo, hi, runs = self.cell(base)
            out = (m / int(n), lo / int(n), hi / int(n), runs)
        elif ref.startswith("csv:"):
            out = self.csv_cell(ref[4:])
        elif ref.startswith("costs:"):
            out = self.cost(ref[6:])
        else:
            # titles may hold a slash (jobs/s): the metric is the longest title the reference ends with
            name, _, rest = ref.partition("/")
            d, rows = self.descs.get(name), self.experiment_rows(name)
            title = max((m["title"] for m in self.sbexp.metrics_of(d) if rest.endswith("/" + m["title"])),
                        key=len, default="")
            label = rest[:-len(title) - 1] if title else rest
            keys = {lab: key for key, lab in self.sbexp.configs_of(d)}
            metric = next((m for m in self.sbexp.metrics_of(d) if m["title"] == title), None)
            if label not in keys or metric is None:
                raise Failed(f"{ref}: no configuration '{label}' or metric '{title}' in {name}")
            mine = [r for r in rows if self.sbexp.row_config(d, r) == keys[label]]
            vals = self.sbexp.metric_values(mine, metric)
            if not vals:
                raise Failed(f"{ref}: no run has the figure")
            import sbstats
            out = sbstats.median_ci(vals) + (len(vals),)
        self.cells[ref] = out
        return out

    def csv_cell(self, spec):
        path, _, rest = spec.partition("?")
        where, _, column = rest.partition("#")
        if path not in self.csvs:
            full = os.path.join(self.paper, path)
            if not os.path.exists(full):
                raise Failed(f"csv:{spec}: {full} is missing")
            with open(full, newline="") as f:
                self.csvs[path] = list(csv.DictReader(f))
        conds = [c.split("=", 1) for c in where.split("&") if c]
        hits = [r for r in self.csvs[path] if all(r.get(k) == v for k, v in conds)]
        cols = column.split("|")  # VALUE or VALUE|LOW|HIGH|RUNS: a figure with its interval
        if len(hits) != 1 or any(hits[0].get(c) in (None, "") for c in cols) or len(cols) not in (1, 4):
            raise Failed(f"csv:{spec}: {len(hits)} rows match, or a column is missing or empty")
        v = [float(hits[0][c]) for c in cols]
        return (v[0], v[0], v[0], 1) if len(v) == 1 else (v[0], v[1], v[2], int(v[3]))

    def cost(self, name):
        """A line of the simulator's cost table (COSTS: "NAME NS"), as (ns, ns, ns, 1)."""
        if self.costs is None:
            with open(os.path.join(ROOT, COSTS)) as f:
                self.costs = dict(ln.split()[:2] for ln in f if ln.strip() and not ln.startswith("#"))
        if name not in self.costs:
            raise Failed(f"costs:{name}: no such line in {COSTS}")
        v = float(self.costs[name])
        return v, v, v, 1

    def value(self, ref):
        return self.cell(ref)[0]


def short(ref):
    """A reference as the ok line names it: the configuration, or a CSV row's key values."""
    if ref.startswith("csv:"):
        return ",".join(kv.split("=", 1)[1] for kv in ref.split("?", 1)[1].split("#")[0].split("&")) + \
            (" " + ref.rpartition(" ")[2] if " /" in ref else "")
    return ref.split("/")[1] if "/" in ref else ref


def check_one(data, c):
    """Raise Failed with what differs, or return a short text of what held."""
    if "get" in c:
        v = data.value(c["get"])
        if not rounds_to(v, c["is"]):
            raise Failed(f"{c['get']} is {v:.4g}, not {c['is']}")
        return c["is"]
    if "range" in c:
        vals = [data.value(r) for r in c["range"]]
        lo, _, hi = c["is"].partition("..")
        if not (rounds_to(min(vals), lo) and rounds_to(max(vals), hi or lo)):
            raise Failed(f"{', '.join(c['range'])}: {min(vals):.4g} to {max(vals):.4g}, not {c['is']}")
        return c["is"]
    for kind, f in (("ratio", lambda a, b: a / b), ("more", lambda a, b: a / b - 1), ("less", lambda a, b: 1 - a / b)):
        if kind in c:
            a, b = (data.value(r) for r in c[kind])
            v = f(a, b)
            if not rounds_to(v, c["is"]):
                raise Failed(f"{kind} of {c[kind][0]} ({a:.4g}) and {c[kind][1]} ({b:.4g}) is {v:.4g}, not {c['is']}")
            return c["is"]
    if "order" in c:
        import sbstats
        a, op, bs = c["order"][0], c["order"][1], c["order"][2]
        said = []
        for b in bs if isinstance(bs, list) else [bs]:
            ca, cb = data.cell(a), data.cell(b)
            verdict = sbstats.order("A", ca[:3], "B", cb[:3], ca[3], cb[3])
            # <= and >=: not measured above (below); the intervals may overlap
            want = {"<": {"A < B"}, ">": {"A > B"}, "~": {sbstats.NO_DIFFERENCE},
                    "<=": {"A < B", sbstats.NO_DIFFERENCE}, ">=": {"A > B", sbstats.NO_DIFFERENCE}}.get(op)
            if want is None:
                raise Failed(f"order: {op} is not one of <, >, ~, <=, >=")
            if verdict not in want:
                raise Failed(f"{a} [{ca[1]:.4g}..{ca[2]:.4g}] {op} {b} [{cb[1]:.4g}..{cb[2]:.4g}] does not hold "
                             f"by the interval rule ({verdict.replace('A', 'first').replace('B', 'second')})")
            said.append(short(b))
        return f"{short(a)} {op} {', '.join(said)}"
    raise Failed(f"unknown check {json.dumps(c)}")


def table_rows(paper_md):
    """The row numbers of PAPER.md's claims table (§8)."""
    with open(paper_md) as f:
        text = f.read()
    sec = text.split("## 8. Claims", 1)[-1].split("\n## ", 1)[0]
    return [int(m.group(1)) for m in re.finditer(r"^\| (\d+) \|", sec, flags=re.M)]


def main():
    ap = argparse.ArgumentParser(description="PAPER.md's claims checked against the committed data")
    ap.add_argument("--claims", default=os.path.join(ROOT, "results", "paper", "claims.json"))
    ap.add_argument("--paper", default=os.path.join(ROOT, "results", "paper"), help="the committed results")
    ap.add_argument("--table", default=os.path.join(ROOT, "PAPER.md"), help="the paper whose §8 rows must all "
                                                                          "have an entry")
    a = ap.parse_args()
    try:
        with open(a.claims) as f:
            claims = json.load(f)
    except (OSError, ValueError) as e:
        die(f"{a.claims}: {e}")
    data = Data(a.paper)
    failed, unchecked, checks = [], [], 0
    have = [c["row"] for c in claims]
    rows = table_rows(a.table)
    for r in sorted(set(rows) - set(have)):
        failed.append(f"FAIL row {r}: in PAPER.md's claims table, no entry in {os.path.relpath(a.claims, ROOT)}")
    for r in sorted(set(have) - set(rows)):
        failed.append(f"FAIL row {r}: an entry with no row in PAPER.md's claims table")
    for entry in claims:
        row = entry["row"]
        if "unchecked" in entry:
            unchecked.append(f"  -   row {row}: unchecked: {entry['unchecked']}")
            continue
        ok = []
        for name in entry.get("mixed_machines", {}):
            data.allow_mixed[name] = entry["mixed_machines"][name]
        for c in entry["checks"]:
            checks += 1
            try:
                ok.append(check_one(data, c))
            except Failed as e:
                failed.append(f"FAIL row {row}: {e}")
        if len(ok) == len(entry["checks"]):
            print(f"  ok  row {row}: {'; '.join(ok)}")
    for line in unchecked:
        print(line)
    for line in failed:
        print(line)
    print(f"claims: {len(claims) - len(unchecked)} rows, {checks} checks against {os.path.relpath(a.paper, ROOT)}/; "
          f"{len(unchecked)} rows with nothing committed to check; {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
