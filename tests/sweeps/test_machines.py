#!/usr/bin/python3
"""test_machines.py - one table or figure shows one machine (scripts/machines.py).

    test_machines.py [--schedbed BIN]

Runs of two machines (meta.json's CPU model and cores) are refused by collect, by the load
sweep's figure and by the capacity table, each naming the machines and the flag; with
--allow-mixed-machines they go through and every output says MIXED MACHINES. A capacity sweep
whose parts ran on two machines gets one table and SLO bar per machine. Committed runs.csv files
get their machine from the meta.json of their runs (--backfill), or are left as they were.
"""
import csv
import glob
import io
import json
import os
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import PY, ROOT, cli, config, description, run_tests, sweep  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "scripts"))
SCHEDBED = os.path.join(ROOT, "build", "release", "schedbed")
MACHINES = os.path.join(ROOT, "scripts", "machines.py")
OTHER = "Planted Other CPU"


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def two_machine_sweep(tmp, change=None):
    """Four real runs; the last one's meta.json then says it ran on another CPU (its cpu_model, or the
    keys of change)."""
    desc = description(tmp, "m", [config("stealing"), config("serial", policy="serial")], timing=False)
    d = os.path.join(tmp, "m-sweep")
    sweep("expand", desc, "--out", d, check=0)
    sweep("run", d, "--schedbed", SCHEDBED, check=0)
    with open(os.path.join(d, "manifest.jsonl")) as f:
        last = [json.loads(x) for x in f][-1]
    meta_path = os.path.join(d, last["out"], "meta.json")
    with open(meta_path) as f:
        meta = json.load(f)
    assert meta.get("cpu_model") and meta.get("cores_online"), "schedbed's meta.json names no CPU"
    # a peer's run, written by sweep.py, names the machine exactly as schedbed's meta.json does
    import machines
    assert machines.of_program(SCHEDBED) == {"cpu_model": meta["cpu_model"], "cores_online": meta["cores_online"],
                                             "cpu_id": meta.get("cpu_id")}
    meta.update(change or {"cpu_model": OTHER})
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    return d


def test_collect_refuses_two_cpus_of_one_name(tmp):
    """One model name, one core count, two CPUs (family.model.stepping): two machines, and a run
    that recorded no cpu_id is not taken for either."""
    for change, other in (({"cpu_id": "23.49.0"}, "CPU 23.49.0"), ({"cpu_id": None}, None)):
        sub = os.path.join(tmp, str(other).replace(' ', '-'))
        os.makedirs(sub)
        d = two_machine_sweep(sub, change)
        code, _, err = sweep("collect", d)
        assert code == 1 and "runs from 2 machines" in err and (other is None or other in err), err
        assert not os.path.exists(os.path.join(d, "runs.csv")), "collect wrote a CSV of two machines"


def test_collect_refuses_two_machines(tmp):
    d = two_machine_sweep(tmp)
    code, _, err = sweep("collect", d)
    assert code == 1 and "runs from 2 machines" in err and OTHER in err and "--allow-mixed-machines" in err, err
    assert not os.path.exists(os.path.join(d, "runs.csv")), "collect wrote a CSV of two machines"
    code, out, err = sweep("collect", d, "--allow-mixed-machines")
    assert code == 0 and "MIXED MACHINES" in err and OTHER in err, (code, err)
    rows = read_csv(out.strip())
    assert len({r["cpu_model"] for r in rows}) == 2 and all(r["cores"] for r in rows), rows
    # the figure of a load sweep refuses the same rows, and says MIXED when allowed
    import sbcollect
    for r in rows:
        r.update(param="rate", rate="1000", **{"all.p99": "1000"})
    mixed = os.path.join(tmp, "mixed.csv")
    with open(mixed, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    p = subprocess.run([PY, "-c", f"import sys; sys.path.insert(0, {os.path.join(ROOT, 'scripts')!r}); import sbcollect; "
                        f"sbcollect.plot_load({tmp!r}, {mixed!r}, 'all')"], capture_output=True, text=True)
    assert p.returncode == 1 and "runs from 2 machines" in p.stderr, p.stderr
    png = sbcollect.plot_load(tmp, mixed, "all", allow_mixed=True)[0]
    assert os.path.exists(png)


def capacity_rows(model, policies, knee):
    rows = []
    for p in policies:
        for rate in (100, 1000, 2000):
            for k in range(5):
                rows.append({"policy": p, "rate": float(rate), "rep": k + 1, "variant": "v", "overloaded": 0,
                             "classes.a.p99": (1000 + k) * (1 if rate <= knee else 10), "throughput": rate,
                             "cpu_model": model, "cores": 2})
    return rows


def test_capacity_splits_machines(tmp):
    import capacity
    ld = {"param": "rate", "policies": ["fast", "slow"], "slo_classes": ["a"],
          "variants": [{"name": "v", "label": "variant v", "set": []}]}
    # the second machine is 5 times slower when unloaded: pooled, its bar would fail the first's runs
    rows = capacity_rows("CPU A", ["fast"], 2000) + [
        {**r, "classes.a.p99": r["classes.a.p99"] * 5} for r in capacity_rows("CPU B", ["slow"], 1000)]
    res = capacity.analyse(rows, ld)
    assert [(x["policy"], x["machine"], x["capacity"]) for x in res] == [
        ("fast", "CPU A, 2 cores", 2000), ("slow", "CPU B, 2 cores", 1000)], res
    assert res[0]["slo"] != res[1]["slo"], "the two machines share one SLO bar"
    text = capacity.write(tmp, res, ld)
    assert "### variant v; CPU A, 2 cores" in text and "### variant v; CPU B, 2 cores" in text, text
    pngs = capacity.plot(tmp, rows, res, ld)
    assert sorted(os.path.basename(p) for p in pngs) == ["capacity-v-a-2c.png", "capacity-v-b-2c.png"], pngs
    # allowed: one table, one bar, and its header says MIXED
    res = capacity.analyse(rows, ld, allow_mixed=True)
    assert len({x["machine"] for x in res}) == 1 and res[0]["machine"].startswith("MIXED MACHINES"), res
    assert "MIXED MACHINES" in capacity.write(tmp, res, ld)


def test_tables_and_figures_name_their_machine(tmp):
    import machines
    import sbexpreport
    d = {"question": "q?", "configs": [{"label": "a"}, {"label": "b"}],
         "metrics": [{"title": "jobs/s", "column": "throughput", "format": "rate"}]}
    rows = [{"config": float(c), "rep": float(k), "seed": float(k), "throughput": 1000.0 + 10 * c + k,
             "git_sha": "abc", "dirty": 0, "threads": 2.0, "cpu_model": "CPU A", "cores": 2}
            for c in (0, 1) for k in range(1, 6)]
    machine = machines.one_machine(rows, "t")
    assert machine == "CPU A, 2 cores"
    sbexpreport.write_tables("t", d, rows, tmp, machine)
    with open(os.path.join(tmp, "table.md")) as f:
        assert "machine: CPU A, 2 cores." in f.read()
    rows[-1]["cpu_model"] = "CPU B"
    p = subprocess.run([PY, "-c", f"import sys; sys.path.insert(0, {os.path.join(ROOT, 'scripts')!r}); "
                        f"import machines; machines.one_machine({rows!r}, 'table t')"], capture_output=True, text=True)
    assert p.returncode == 1 and "table t: runs from 2 machines (CPU A, 2 cores (9 runs); CPU B, 2 cores (1 runs))" \
        in p.stderr, p.stderr


# a load sweep "ld" of one machine with one variant, as its committed rows and description
LD_ROWS = [{"id": f"ld.v.{p}.rate-{rate}.r{k}", "experiment": "ld", "policy": p, "rate": rate, "variant": "v",
            "rep": k, "seed": k, "param": "rate", "workload": "oltp", "threads": 2, "git_sha": "abc", "dirty": 0,
            "overloaded": 0, "throughput": rate * 0.99, "all.p50": 1000 + k, "all.p99": 5000 + rate + k,
            "all.p999": 9000 + rate, "cpu_model": "CPU A", "cores": 2}
           for p in ("stealing", "serial") for rate in (100, 200) for k in (1, 2, 3)]
LD = {"name": "ld", "question": "q?", "load": {"workload": "oltp", "param": "rate", "rates": [100, 200],
                                              "policies": ["stealing", "serial"],
                                              "variants": [{"name": "v", "label": "variant v", "set": []}]}}


def test_load_sweep_redrawn_from_its_runs_csv(tmp):
    """--replot redraws a committed load sweep (variants, no per-run directories it can read) from
    its runs.csv, and its table and figures name the machine."""
    import sbexpreport
    exp = os.path.join(tmp, "paper", "ld")
    os.makedirs(exp)
    rows = LD_ROWS
    with open(os.path.join(exp, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    d = LD
    sbexpreport.PAPER = os.path.join(tmp, "paper")
    sbexpreport.replot(["ld"], {"ld": d})
    with open(os.path.join(exp, "table.md")) as f:
        assert "machine: CPU A, 2 cores." in f.read()
    assert os.path.exists(os.path.join(exp, "sweep_p99-v.png"))
    assert len(read_csv(os.path.join(exp, "runs.csv"))) == len(rows), "the committed runs.csv was rewritten"


def test_committed_rows_are_compressed_and_read_back(tmp):
    """--update-paper keeps an experiment's runs.csv as runs.csv.xz (the committed results have a
    size budget), and every reader gets the same rows back from it: read_rows, the committed
    machine, and a load sweep's replot, which leaves it compressed and unchanged."""
    import sbcollect
    import sbcompare
    import sbexpreport
    out, paper = os.path.join(tmp, "out"), os.path.join(tmp, "paper")
    os.makedirs(os.path.join(out, "ld"))
    os.makedirs(paper)
    rows = LD_ROWS
    with open(os.path.join(out, "ld", "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    want = sbcollect.read_rows(os.path.join(out, "ld", "runs.csv"))
    sbexpreport.PAPER = sbcompare.PAPER = paper
    sbexpreport.update_paper(out, ["ld"], {"ld": LD})
    committed = os.path.join(paper, "ld", "runs.csv")
    assert not os.path.exists(committed) and os.path.exists(committed + ".xz"), os.listdir(os.path.join(paper, "ld"))
    assert sbcollect.read_rows(committed) == want
    assert sbcompare.committed_machine("ld") == "CPU A, 2 cores"
    with open(committed + ".xz", "rb") as f:
        before = f.read()
    d = LD
    assert sbexpreport.replot(["ld"], {"ld": d}) == []
    assert not os.path.exists(committed)
    with open(committed + ".xz", "rb") as f:
        assert f.read() == before, "the replot rewrote the committed rows"


def test_validate_sim_names_commit_and_machine(tmp):
    """validate-sim's table says which commit and which machine its native runs had."""
    out = os.path.join(tmp, "vs")
    costs = sorted(glob.glob(os.path.join(ROOT, "sim", "costs-*.txt")))[0]
    p = subprocess.run([PY, os.path.join(ROOT, "scripts", "validate_sim.py"), "run", "--schedbed", SCHEDBED,
                        "--threads", "1", "--policies", "fifo", "--cells", "tiny", "--reps", "3", "--duration", "0.05",
                        "--warmup", "0.01", "--allow-dirty", "--sim-costs", costs, "--out", out],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    host = subprocess.run([SCHEDBED, "host"], capture_output=True, text=True).stdout.split("\t")
    with open(os.path.join(out, "table.md")) as f:
        text = f.read()
    cpu = f", CPU {host[2].strip()}" if len(host) > 2 and host[2].strip() else ""
    assert f"Native runs on {host[0]}, {int(host[1])} cores{cpu};" in text and "; commits " in text, text[:400]


def test_backfill_from_the_runs_archive(tmp):
    exp = os.path.join(tmp, "exp")
    os.makedirs(exp)
    with open(os.path.join(exp, "runs.csv"), "w") as f:
        f.write("id,experiment,git_sha,throughput\nexp.c0.r1,exp,abc,1\nexp.c1.r1,exp,abc,2\n")
    with tarfile.open(os.path.join(exp, "runs.tar.xz"), "w:xz") as tar:
        for run, model in (("c0/r1", "CPU A"), ("c1/r1", "CPU B")):
            body = json.dumps({"cpu_model": model, "cores_online": 2}).encode()
            ti = tarfile.TarInfo(run + "/meta.json")
            ti.size = len(body)
            tar.addfile(ti, io.BytesIO(body))
    p = subprocess.run([PY, MACHINES, "--backfill", exp], capture_output=True, text=True)
    assert p.returncode == 0 and "CPU A, 2 cores (1 runs); CPU B, 2 cores (1 runs)" in p.stdout, p.stdout + p.stderr
    rows = read_csv(os.path.join(exp, "runs.csv"))
    assert [(r["id"], r["cpu_model"], r["cores"]) for r in rows] == [("exp.c0.r1", "CPU A", "2"),
                                                                     ("exp.c1.r1", "CPU B", "2")], rows
    assert list(rows[0])[:5] == ["id", "experiment", "git_sha", "cpu_model", "cores"]
    # a row whose run is not in the archive: named, and the CSV stays as it was
    with open(os.path.join(exp, "runs.csv"), "a") as f:
        f.write("exp.c2.r1,exp,abc,3,,\n")
    with open(os.path.join(exp, "runs.csv")) as f:
        before = f.read()
    p = subprocess.run([PY, MACHINES, "--backfill", exp], capture_output=True, text=True)
    assert p.returncode != 0 and "exp.c2.r1 has no meta.json" in p.stderr, p.stderr
    with open(os.path.join(exp, "runs.csv")) as f:
        assert f.read() == before


def test_simulated_load_sweep_keeps_its_rows_only(tmp):
    """--update-paper packs a load sweep's run directories into runs.tar.xz, except a simulated
    one's (its runs come back byte-identical from the same commit and cost table): that keeps
    runs.csv.xz alone, from which replot redraws it."""
    import sbcompare
    import sbexpreport
    paper = os.path.join(tmp, "paper")
    os.makedirs(paper)
    sbexpreport.PAPER = sbcompare.PAPER = paper
    for name, common in (("nat", []), ("sim", ["--executor", "sim", "--sim-costs", "t.txt"])):
        out = os.path.join(tmp, "out-" + name)
        run = os.path.join(out, name, "v", "stealing", "rate-100-r1")
        os.makedirs(run)
        with open(os.path.join(run, "summary.json"), "w") as f:
            f.write("{}")
        with open(os.path.join(out, name, "runs.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(LD_ROWS[0]))
            w.writeheader()
            w.writerows(LD_ROWS)
        sbexpreport.update_paper(out, [name], {name: {**LD, "name": name, "common": common}})
        kept = sorted(os.listdir(os.path.join(paper, name)))
        want = ["runs.csv.xz", "runs.tar.xz"] if name == "nat" else ["runs.csv.xz"]
        assert kept == want, (name, kept)
    assert sbexpreport.replot(["sim"], {"sim": {**LD, "name": "sim", "common": ["--executor", "sim"]}}) == []
    assert os.path.exists(os.path.join(paper, "sim", "sweep_p99-v.png"))
    # its table names the cost table before the host that ran it: the numbers are the table's
    with open(os.path.join(paper, "sim", "table.md")) as f:
        assert "machine: simulated with the host's own cost table; run on CPU A, 2 cores." in f.read()
    assert sbexpreport.made_on({"common": ["--executor", "sim", "--sim-costs", "r/t.txt"]}, "M") == \
        "simulated with t.txt; run on M"
    assert sbexpreport.made_on({"common": []}, "M") == "M"


TESTS = [test_collect_refuses_two_machines, test_collect_refuses_two_cpus_of_one_name, test_capacity_splits_machines, test_tables_and_figures_name_their_machine,
         test_load_sweep_redrawn_from_its_runs_csv, test_committed_rows_are_compressed_and_read_back,
         test_simulated_load_sweep_keeps_its_rows_only, test_validate_sim_names_commit_and_machine,
         test_backfill_from_the_runs_archive]

if __name__ == "__main__":
    SCHEDBED, chosen = cli(TESTS, SCHEDBED, "test_machines.py")
    sys.exit(run_tests(chosen, "machine tests (scripts/machines.py):"))
