#!/bin/sh
# The wake cell's miss, isolated: how wake's from_request latency follows worker_try_count (the
# spin a woken searcher does before it sleeps again) natively and simulated, and where the
# kernel puts a woken thread (perf's sched tracepoints). Run from the repository root:
#   sh results/paper/wake-placement/run.sh OUTDIR [sim]
# Writes OUTDIR/tries.csv (one row per run) and OUTDIR/placement-<n>w.txt (placement.py's report);
# with `sim`, only the simulated rows of tries.csv (the native ones and the trace left out).
set -eu
out=${1:?usage: run.sh OUTDIR [sim]}
only=${2:-}
executors="native sim"
[ "$only" = sim ] && executors=sim
sb=build/release/schedbed
mkdir -p "$out"
echo "executor,workers,worker_try_count,rep,from_request_p50_ns,from_request_p99_ns,from_task_p50_ns,from_task_p99_ns" > "$out/tries.csv"
for rep in 1 2 3; do
	for tries in 10 100 1000 5000; do
		for ex in $executors; do
			for w in 1 2; do
				d=$(mktemp -d)
				extra=""
				[ "$ex" = sim ] && extra="--executor sim --sim-cores 2"
				$sb run -p stealing -w wake -t $w -d 2 --warmup 0.3 --seed $rep -q \
					--set worker_try_count=$tries $extra -o "$d/r" > /dev/null
				python3 - "$d/r/summary.json" "$ex,$w,$tries,$rep" >> "$out/tries.csv" <<'P'
import json, sys
c = json.load(open(sys.argv[1]))["classes"]
print(sys.argv[2] + "," + ",".join(str(c[k][q]) for k in ("from_request", "from_task") for q in ("p50", "p99")))
P
				rm -rf "$d"
			done
		done
	done
done
[ "$only" = sim ] && exit 0
for w in 1 2; do
	d=$(mktemp -d)
	perf record -q -a -e sched:sched_switch,sched:sched_waking -o "$d/perf.data" -- \
		$sb run -p stealing -w wake -t $w -d 2 --warmup 0.3 -q -o "$d/r" > /dev/null 2>&1
	perf script -i "$d/perf.data" -F comm,tid,cpu,time,event,trace 2> /dev/null |
		python3 results/paper/wake-placement/placement.py > "$out/placement-${w}w.txt"
	rm -rf "$d"
done
