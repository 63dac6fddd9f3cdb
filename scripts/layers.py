#!/usr/bin/python3
"""layers.py - the floors of the tree and the cycles of core/, checked from the sources.

Floors (a file may use its own floor and the floors below it, never one above):

    0  core/        the runtime every policy shares
    1  policies/    scheduling policies (they see core/policy.h and core/queue.h, never the
                    core's private headers: core/rt.h and any core/*_impl.h)
    1  workloads/   workload generators (the public API, core/sb.h and its helpers)
    1  sim/         the SimGrid executor behind core/exec.h's seam, and its calibration
    2  harness/     the schedbed program

policies/, workloads/ and sim/ are peers: none includes another. tests/, peers/ and scripts/
stand outside the floors.

Inside core/ each file is a node. A file uses another when it includes it or calls a function
defined there (a .c file's non-static functions, a header's inline ones): calls count too,
because core/sb.h and core/policy.h declare many files' functions, so includes alone would hide
a call back up. A header and the source of the same name are one module (a header's inline
fast path may call its source's cold path); the queues' headers (deque.h, fifo.h, queue.h) and
queue.c are one module, as are the executor seam and its native implementation. The only cycle
allowed is task.c <-> job.c: a task's end counts down its job, and a job's teardown runs as a
task.

Usage: scripts/layers.py [--graph]   (from the repository's root; exits 1 naming every
violation, 0 with a one-line summary when there is none).
"""
import os
import re
import sys

FLOORS = {"core": 0, "policies": 1, "workloads": 1, "sim": 1, "harness": 2}
PEERS = {(a, b) for a in ("policies", "workloads", "sim") for b in ("policies", "workloads", "sim") if a != b}
# Headers of core/ that only the core may include (the policy contract: policy.h and queue.h
# are what a policy sees; the rest of the core's state is not its business).
CORE_PRIVATE = re.compile(r"^core/(rt\.h|.*_impl\.h)$")
ALLOWED_CYCLES = [{"core/task.c", "core/job.c"}]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def strip(text):
    """Comments, string and character literals and preprocessor lines blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * max(0, min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    lines = "".join(out).split("\n")
    # preprocessor lines (and their continuations) say nothing about calls
    res, cont = [], False
    for line in lines:
        is_pp = cont or line.lstrip().startswith("#")
        cont = is_pp and line.endswith("\\")
        res.append("" if is_pp else line)
    return "\n".join(res)


def def_names(code, header):
    """Functions defined at file scope: 'type name(args) {' with the name's '(' on the head.
    A .c file's static functions are its own business; a header's static inlines are not."""
    names = set()
    depth, stmt = 0, []
    for ch in code:
        if depth == 0:
            if ch == "{":
                head = "".join(stmt).strip()
                if "=" not in head and head.endswith(")"):
                    # the name is the identifier before the first '(' at parenthesis depth 0
                    d = 0
                    for k, c in enumerate(head):
                        if c == "(":
                            if d == 0:
                                m = re.search(r"([A-Za-z_]\w*)\s*$", head[:k])
                                static = re.search(r"\bstatic\b", head[:k])
                                if m and m.group(1) not in ("__attribute__", "_Alignas") and \
                                        (header or not static):
                                    names.add(m.group(1))
                                    break
                            d += 1
                        elif c == ")":
                            d -= 1
                depth, stmt = 1, []
            elif ch == ";":
                stmt = []
            else:
                stmt.append(ch)
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
    return names


def uses(code):
    """Identifiers used inside bodies and initialisers (not in prototypes or declarations)."""
    used = []
    depth, stmt, body = 0, [], []
    for ch in code:
        if depth == 0:
            if ch == "{":
                head = "".join(stmt)
                if "=" in head:
                    used.append(head.split("=", 1)[1])
                depth, stmt, body = 1, [], []
            elif ch == ";":
                head = "".join(stmt)
                if "=" in head:
                    used.append(head.split("=", 1)[1])
                stmt = []
            else:
                stmt.append(ch)
        else:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    used.append("".join(body))
                    continue
            body.append(ch)
    return set(IDENT.findall(" ".join(used)))


def sources(root):
    out = []
    for top in sorted(FLOORS):
        d = os.path.join(root, top)
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h", ".cpp")):
                out.append(f"{top}/{name}")
    return out


# Files that are one node: the queues' headers have their cold paths in queue.c; the executor
# seam is one module with its native implementation.
GROUPS = {f"core/{f}": "core/queue.*" for f in ("deque.h", "fifo.h", "queue.h", "queue.c")}
GROUPS.update({f"core/{f}": "core/exec.*" for f in ("exec.h", "exec.c")})


def node(path):
    return GROUPS.get(path, path)


def one_module(a, b):
    """A header and the source of the same name (or one group)."""
    return a == b or os.path.splitext(a)[0] == os.path.splitext(b)[0]


def main(argv):
    root = os.getcwd()
    files = sources(root)
    problems = []
    core_edges = {}   # module -> {module: why}
    code = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            text = fh.read()
        code[f] = strip(text)
        top = f.split("/")[0]
        for lineno, line in enumerate(text.split("\n"), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
            ttop = target.split("/")[0]
            where = f"{f}:{lineno}: #include \"{m.group(1)}\""
            if ttop not in FLOORS:
                problems.append(f"{where}: outside the floors ({ttop}/)")
                continue
            if (top, ttop) in PEERS:
                problems.append(f"{where}: {top}/ and {ttop}/ are peers; neither includes the other")
            elif FLOORS[ttop] > FLOORS[top]:
                problems.append(f"{where}: upward include ({top}/ is below {ttop}/)")
            if top != "core" and CORE_PRIVATE.match(target):
                problems.append(f"{where}: {target} is the core's private header; "
                                "use core/policy.h's accessors")
            if top == "core" and ttop == "core" and not one_module(node(f), node(target)):
                core_edges.setdefault(node(f), {}).setdefault(node(target), where)

    # calls between core modules
    owner = {}
    for f in files:
        if f.startswith("core/"):
            for name in def_names(code[f], f.endswith(".h")):
                owner.setdefault(name, node(f))
    for f in files:
        if not f.startswith("core/"):
            continue
        me = node(f)
        for name in sorted(uses(code[f])):
            other = owner.get(name)
            if other and not one_module(me, other):
                core_edges.setdefault(me, {}).setdefault(other, f"{f}: calls {name} ({other})")

    # cycles: strongly connected components (Tarjan), then each must be an allowed one
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(core_edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(core_edges):
        if v not in index:
            visit(v)
    for comp in sccs:
        if comp in ALLOWED_CYCLES:
            continue
        edges = [core_edges[a][b] for a in sorted(comp) for b in sorted(core_edges.get(a, {}))
                 if b in comp and {a, b} not in ALLOWED_CYCLES]
        problems.append(f"core/ cycle among {', '.join(sorted(comp))} (only task <-> job may "
                        "use each other):\n    " + "\n    ".join(edges))

    if "--graph" in argv:
        for a in sorted(core_edges):
            print(f"{a} -> {' '.join(sorted(core_edges[a]))}")
    if problems:
        for p in problems:
            print(f"layers: {p}", file=sys.stderr)
        return 1
    print(f"layers: {len(files)} files, floors respected, core/ has no cycle but task <-> job")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
