# FIFO and LIFO fork-join at 1 and 2 workers over fib(n) sizes: native (3 runs, alternated) and simulated (1 seed)
import json, subprocess, sys, tempfile, shutil, statistics as st, csv, os
SB = "/tmp/vclone/build/release/schedbed"
mode = sys.argv[1]  # native or sim
out = sys.argv[2]
rows = []
reps = 3 if mode == "native" else 1
for rep in range(reps):
    for n in (18, 20, 22, 24, 26):
        for thr in ((1, 2) if mode == "native" else (1,)):
            for lo in ("fifo", "lifo"):
                d = tempfile.mkdtemp()
                args = [SB, "run", "-q", "--policy", "stealing", "--workload", "forkjoin", "--threads", str(thr),
                        "-d", "1", "--set", f"n={n}", "--set", f"local_order={lo}", "--seed", str(rep + 1), "-o", d + "/r"]
                if mode == "sim":
                    args += ["--executor", "sim", "--sim-cores", "2"]
                p = subprocess.run(args, cwd="/tmp/vclone", capture_output=True, text=True)
                if p.returncode:
                    print(p.stderr, file=sys.stderr); sys.exit(1)
                s = json.load(open(d + "/r/summary.json"))
                m = json.load(open(d + "/r/meta.json"))
                rows.append({"mode": mode, "rep": rep + 1, "n": n, "threads": thr, "local_order": lo,
                             "ns_per_task": 1e9 / s["tasks_per_s"], "jobs_per_s": s["throughput"],
                             "sha": m["git"]["sha"][:12], "dirty": m["git"].get("dirty"), "machine": m["machine"]})
                shutil.rmtree(d)
                print(mode, rep + 1, n, thr, lo, round(rows[-1]["ns_per_task"], 1), flush=True)
with open(out, "w") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0])); w.writeheader(); w.writerows(rows)
