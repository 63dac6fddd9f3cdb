"""sbcli.py - what every script shares that needs nothing beyond Python's standard library.

Kept apart from sbresults.py (which loads matplotlib and numpy) so that sweep.py can run a
manifest line on a cluster node that has a bare python3.
"""
import os
import sys

PROG = os.path.basename(sys.argv[0])


def die(msg, status=2):
    """One line naming the problem, then exit (2: bad input, as schedbed itself)."""
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(status)


def split_list(text, what):
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        die(f"{what}: give a comma-separated list")
    return items
