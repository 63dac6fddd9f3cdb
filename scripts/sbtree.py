"""sbtree.py - the source tree every result comes from: its commit and whether it has uncommitted
changes (tree_state), the refusal to run from a changed tree (require_clean), and the check that a
finished run's meta.json names that commit (check_commit).

Needs nothing beyond Python's standard library (an array task runs it on a bare cluster node).
"""
import json
import os
import subprocess

from sbcli import die
from sbread import provenance

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(HERE)  # the source tree whose state every result records


# ---- the source tree: results come from a commit, or are marked --------------------------------

def tree_state(tree=TREE, carried=True):
    """(sha, changed): HEAD of the tree and the files that differ from it (tracked changes and
    untracked files git does not ignore: either can change what is built). sha is None when the
    tree is not a git checkout. carried=False asks git alone (another build's checkout), not the
    commit that programs carried here were packed from."""
    sha = os.environ.get("SCHEDBED_SOURCE_SHA") if carried else None
    if sha:
        # programs carried from a checkout (scripts/carry.sh run) name the commit they were built from,
        # and a carried tree is clean only if it was packed clean: that is the code that runs, whatever
        # copy of a checkout (a stale .git, say) lies beside it
        return sha, [] if os.environ.get("SCHEDBED_SOURCE_DIRTY") == "0" else ["(packed from a dirty tree)"]
    try:
        head = subprocess.run(["git", "-C", tree, "rev-parse", "HEAD"], capture_output=True, text=True)
        st = subprocess.run(["git", "--no-optional-locks", "-C", tree, "status", "--porcelain"],
                            capture_output=True, text=True)
    except OSError:
        head = st = None
    if head is None or head.returncode != 0 or st.returncode != 0:
        return None, []
    return head.stdout.strip(), [ln[3:] for ln in st.stdout.splitlines() if ln.strip()]


def require_clean(allow_dirty, tree=TREE):
    """The tree's state for the runs: dies when the tree has uncommitted changes (or is not a git
    checkout) unless allow_dirty, in which case every run is marked dirty."""
    sha, changed = tree_state(tree)
    if allow_dirty:
        return {"sha": sha, "dirty": bool(changed) or sha is None}
    if sha is None:
        die(f"{tree} is not a git checkout: results must name the commit they come from "
            f"(--allow-dirty runs anyway and marks every result as dirty)", 1)
    if changed:
        shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
        die(f"the source tree has uncommitted changes ({shown}): commit or stash them first "
            f"(--allow-dirty runs anyway and marks every result as dirty)", 1)
    return {"sha": sha, "dirty": False}


def check_commit(out, tree):
    """None when the run's meta.json names the commit the runner checked, else what is wrong: a
    result must say which source it measured, and a program built from another tree measures
    other code. A run allowed on a dirty tree, or of a named build (tree["build"]), only has to
    record some sha."""
    try:
        with open(os.path.join(out, "meta.json")) as f:
            made = provenance(json.load(f))
    except (OSError, json.JSONDecodeError) as e:
        return f"meta.json is unreadable: {e}"
    sha = made["sha"]
    if not sha:
        return "meta.json records no git sha: the result cannot name the source it measured"
    if tree.get("build"):  # another build than the tree's: its own commit, whichever it is
        return None
    if not tree["dirty"] and sha != tree["sha"]:
        return (f"meta.json records commit {sha[:12]}, the tree is at {tree['sha'][:12]}: "
                f"the program was built from another commit (build it again: make schedbed)")
    if not tree["dirty"] and made["dirty"]:
        return ("meta.json says the program was built from a tree with changes (or does not say); the runner "
                "found it clean (build it again: make schedbed)")
    return None
