#!/usr/bin/python3
"""test_claims.py - scripts/claims.py fails, naming the row, when a claim no longer holds.

    test_claims.py

Each test copies the committed claims (results/paper/claims.json), plants one error and runs
claims.py on the committed data: a number that the data does not round to, a comparison whose
95% intervals overlap, a PAPER.md row with no entry. The committed claims themselves must pass.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import PY, ROOT, run_tests  # noqa: E402

CLAIMS = os.path.join(ROOT, "scripts", "claims.py")
COMMITTED = os.path.join(ROOT, "results", "paper", "claims.json")


def claims(*args):
    p = subprocess.run([PY, CLAIMS, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


def planted(tmp, change):
    with open(COMMITTED) as f:
        entries = json.load(f)
    change(entries)
    path = os.path.join(tmp, "claims.json")
    with open(path, "w") as f:
        json.dump(entries, f)
    return path


def entry(entries, row):
    return next(e for e in entries if e["row"] == row)


def test_committed_claims_hold(tmp):
    code, out = claims()
    assert code == 0 and " 0 failed" in out and "  ok  row 5:" in out, out


def test_wrong_number_fails_naming_the_row(tmp):
    def plant(entries):  # §4.2's serial throughput is 16.6k; 16.8k is what a typo would say
        checks = entry(entries, 5)["checks"]
        c = next(c for c in checks if c.get("get") == "policies/serial/jobs/s")
        c["is"] = "16.8k"
    code, out = claims("--claims", planted(tmp, plant))
    assert code == 1 and "FAIL row 5: policies/serial/jobs/s is 1.661e+04, not 16.8k" in out, out
    assert " 1 failed" in out, out


def test_overlapping_comparison_fails_naming_the_row(tmp):
    def plant(entries):  # hybrid at level 0 against stealing: every interval overlaps; claim it faster
        entry(entries, 7)["checks"].append({"order": ["hybrid/hybrid level 0 (default)/jobs/s", ">",
                                                      "hybrid/stealing/jobs/s"]})
    code, out = claims("--claims", planted(tmp, plant))
    assert code == 1 and "FAIL row 7: hybrid/hybrid level 0 (default)/jobs/s [" in out, out
    assert "does not hold by the interval rule (no difference measured)" in out, out
    # and the reverse: "no difference" said where the intervals are apart
    def plant2(entries):
        entry(entries, 5)["checks"].append({"order": ["policies/serial/point p99", "~", "policies/stealing/point p99"]})
    code, out = claims("--claims", planted(tmp, plant2))
    assert code == 1 and "FAIL row 5: policies/serial/point p99" in out and "(first < second)" in out, out


def test_row_without_entry_fails(tmp):
    code, out = claims("--claims", planted(tmp, lambda entries: entries.remove(entry(entries, 12))))
    assert code == 1 and "FAIL row 12: in PAPER.md's claims table, no entry" in out, out


TESTS = [test_committed_claims_hold, test_wrong_number_fails_naming_the_row,
         test_overlapping_comparison_fails_naming_the_row, test_row_without_entry_fails]

if __name__ == "__main__":
    sys.exit(run_tests(TESTS, "claims tests (scripts/claims.py):"))
