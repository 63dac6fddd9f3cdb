"""sbdesc.py - sweep descriptions (sweeps/*.json) and manifests: reading and checking a
description, expanding descriptions into manifest lines (expand, expand_configs, expand_load), and
writing and reading DIR/manifest.jsonl.

Nothing here runs anything or depends on the machine; needs nothing beyond Python's standard
library.
"""
import json
import os
import re

from sbcli import die

MANIFEST = "manifest.jsonl"
PEER_NAME = re.compile(r"[A-Za-z0-9_.-]+")  # a program beside schedbed (peers_omp), never a path
DESC_KEYS = {"name", "question", "memo", "configs", "load", "reps", "noise_reps", "timing", "slim", "bounded", "common",
             "args", "duration", "warmup", "metrics", "figure", "part_of", "overload_ok", "cores"}
LAT_UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}  # a latency metric's units, and ns in each
DEFAULT_REPS = 5  # each repetition its own seed: fewer cannot give a median an interval worth stating


# ---- descriptions -> manifest -----------------------------------------------------------------

def load_description(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        die(f"{path} is not valid JSON: {e}")
    if not isinstance(d, dict) or ("configs" in d) == ("load" in d):
        die(f"{path}: a description has either \"configs\" (a list of configurations) or \"load\" (a load sweep)")
    unknown = sorted(set(d) - DESC_KEYS)
    if unknown:
        die(f"{path}: unknown key {unknown[0]}; valid: {', '.join(sorted(DESC_KEYS))}")
    for i, c in enumerate(d.get("configs", [])):
        need = ("label", "peer", "peer_args") if "peer" in c else ("label", "policy", "workload")
        miss = [k for k in need if k not in c]
        if miss:
            die(f"{path}: configuration {i} lacks {', '.join(miss)} (a run needs label, policy, workload; "
                f"a peer needs label, peer, peer_args)")
    if "load" in d:
        miss = [k for k in ("workload", "param", "rates", "policies") if k not in d["load"]]
        if miss:
            die(f"{path}: \"load\" lacks {', '.join(miss)}")
    for m in d.get("metrics", []):
        # a latency's unit is checked here, before any run, not when the finished runs are tabulated
        if m.get("format") == "lat" and m.get("unit", "µs") not in LAT_UNITS:
            die(f"{path}: metric {m.get('title')}: unit {m['unit']} is not a latency unit; valid: {', '.join(LAT_UNITS)}")
    if "cores" in d and not (isinstance(d["cores"], int) and not isinstance(d["cores"], bool) and d["cores"] >= 1):
        die(f"{path}: \"cores\" is the hardware threads the experiment's questions need, a whole number >= 1; got {d['cores']!r}")
    if "part_of" in d and not os.path.exists(os.path.join(os.path.dirname(path), d["part_of"] + ".json")):
        die(f"{path}: part_of names {d['part_of']}, which has no description beside it")
    d.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    return d


def run_length(d, o, duration):
    """--duration and --warmup: the command line's, else the description's, else the default;
    none for a bounded description (its runs end after --jobs N, or it gives its own)."""
    if d.get("bounded"):
        return []
    return ["--duration", fmt_num(o["duration"] or d.get("duration", duration)),
            "--warmup", fmt_num(o["warmup"] if o["warmup"] is not None else d.get("warmup", 1))]


def repetitions(d, o, default=DEFAULT_REPS):
    """[(rep, noise, seed, suffix)]: REPS repetitions, each its own seed (the base seed + rep - 1,
    so repetitions sample the workload's randomness), each run NOISE times with that same seed
    (what differs between those is the machine). The suffix keeps a run's id when NOISE is 1."""
    reps = o["reps"] or d.get("reps", default)
    noise = o.get("noise_reps") or d.get("noise_reps", 1)
    return [(k, j, o["seed"] + k - 1, f"r{k}" + (f".n{j}" if noise > 1 else ""))
            for k in range(1, reps + 1) for j in range(1, noise + 1)]


def expand_configs(d, o):
    """The experiment grid: rounds over the configurations, A B C A B C, one round per repetition
    (and per noise repetition). Arguments in the order every experiment of PAPER.md was run with,
    so that old and new runs are the same runs."""
    name = d["name"]
    lines = []
    for k, j, seed, suffix in repetitions(d, o):
        for i, c in enumerate(d["configs"]):
            tags = {"experiment": name, "config": i, "label": c["label"], "rep": k, "noise": j}
            line = {"id": f"{name}.c{i}.{suffix}", "out": f"{name}/c{i}/{suffix}", "timing": d.get("timing", True),
                    "slim": d.get("slim", True)}
            if "peer" in c:
                line.update(program=c["peer"], args=list(c["peer_args"]), env=c.get("env", {}))
                tags.update(policy="", workload=c["peer"], seed="", sets=" ".join(c["peer_args"]))
            else:
                args = ["--policy", c["policy"], "--workload", c["workload"], "--seed", str(seed)]
                args += d.get("common", []) + run_length(d, o, 4)
                for s in c.get("set", []):
                    args += ["--set", s]
                args += c.get("args", [])
                line.update(program="schedbed", args=args)
                if d.get("overload_ok"):  # jobs cancelled at the end are the point (a shutdown experiment)
                    line["overload_ok"] = True
                tags.update(policy=c["policy"], workload=c["workload"], seed=seed, sets=" ".join(c.get("set", [])))
            line["tags"] = tags
            lines.append(line)
    return lines


def expand_load(d, o):
    """Open-loop sweep: for each variant (a named set of --set values, e.g. one durability epoch)
    and each rate, every policy REPS times, the policy order reversed from one rate to the next
    (A B C, then C B A) so that drift does not favour one policy. A run that ends overloaded
    (exit 3: jobs cancelled after the drain) is a result here, the point past the knee. A variant
    may give its own "rates" and run "args" (e.g. --threads 16 with rates scaled to 16 workers),
    so one description can sweep the load at several machine sizes, and its own "duration" and
    "warmup" (a simulated second of 256 workers takes far longer to compute than one of 5)."""
    ld, name = d["load"], d["name"]
    variants = ld.get("variants") or [{"name": "", "label": "", "set": []}]
    lines = []
    for v in variants:
        extra = run_length({**d, **{k: v[k] for k in ("duration", "warmup") if k in v}}, o, 3) + d.get("args", [])
        vid = f"{v['name']}." if v["name"] else ""
        vdir = f"{v['name']}/" if v["name"] else ""
        vset = [x for s in v.get("set", []) for x in ("--set", s)] + v.get("args", [])
        for i, rate in enumerate(v.get("rates", ld["rates"])):
            order = ld["policies"] if i % 2 == 0 else ld["policies"][::-1]
            text = f"{float(rate):g}"
            for k, j, seed, suffix in repetitions(d, o):
                for p in order:
                    base = ["--workload", ld["workload"], "--seed", str(seed)] + d.get("common", [])
                    lines.append({
                        "id": f"{name}.{vid}{p}.rate-{text}.{suffix}", "out": f"{name}/{vdir}{p}/rate-{text}-{suffix}",
                        "timing": d.get("timing", True), "slim": d.get("slim", True), "program": "schedbed",
                        "overload_ok": True,
                        "args": base + ["--policy", p, "--set", f"{ld['param']}={text}"] + vset + extra,
                        "tags": {"experiment": name, "config": p, "label": p, "rep": k, "noise": j, "policy": p,
                                 "workload": ld["workload"], "seed": seed,
                                 "sets": " ".join([f"{ld['param']}={text}"] + v.get("set", [])),
                                 "param": ld["param"], "rate": float(rate), "variant": v["name"]}})
    return lines


def fmt_num(v):
    return f"{float(v):g}"


def expand(descs, o):
    lines = []
    for d in descs:
        lines += expand_load(d, o) if "load" in d else expand_configs(d, o)
    seen = set()
    for ln in lines:
        if ln["id"] in seen:
            die(f"two runs share the id {ln['id']}: give every experiment its own name")
        seen.add(ln["id"])
    return lines


def write_manifest(root, lines):
    """DIR/manifest.jsonl. An existing manifest is kept when it is the same (so expand, run, expand,
    run resumes) and refused when it differs: its results belong to other runs."""
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, MANIFEST)
    text = "".join(json.dumps(ln, sort_keys=True) + "\n" for ln in lines)
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return path
        die(f"{path} exists and describes other runs; give a new directory")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)
    return path


def read_manifest(root):
    path = os.path.join(root, MANIFEST)
    if not os.path.exists(path):
        die(f"{root} has no {MANIFEST} (make one with: sweep.py expand DESC.json --out {root})")
    lines = []
    with open(path) as f:
        for n, text in enumerate(f, 1):
            try:
                ln = json.loads(text)
            except json.JSONDecodeError as e:
                die(f"{path}:{n}: not a JSON line: {e}")
            bad = [k for k in ("id", "out", "args", "program") if k not in ln]
            if bad:
                die(f"{path}:{n}: the line lacks {', '.join(bad)}")
            if ln["program"] != "schedbed" and not PEER_NAME.fullmatch(ln["program"]):
                die(f"{path}:{n}: program '{ln['program']}' is neither schedbed nor a program beside it")
            out = os.path.normpath(ln["out"])
            if os.path.isabs(out) or out.startswith("..") or out in (".", "status", "logs", "slurm"):
                die(f"{path}:{n}: output directory '{ln['out']}' must be a new path inside {root}")
            lines.append(ln)
    return lines
