#!/bin/bash
# One call on a lent 16-core machine (2026-11-28): its cost table from the micro-benchmarks alone
# (scripts/calibrate.py: every cost the simulator now charges, the cold curve, the long parks and
# the wake-stacking shares included), then validate-sim's native half at the commit in
# build/v16/SOURCE (built without the simulator, scripts/carry.sh pack --no-sim build/v16): every
# policy, 3 seeds, 0.2 s windows, one manifest per cell and worker count, so that a run cut off by
# the call's end loses one (cell, workers) pair and never leaves a cell with fewer seeds.
# Cells in order of what the 16-core validation missed before (fork-join, tiny, wake), then the
# rest while time is left. V16_DEADLINE (s from the start, default 530), V16_THREADS
# ("16 1 2 4 8"), V16_CELLS and V16_CAL=0 (no calibration) make the slice the 2-core dry run uses.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:?OUT unset}
DEADLINE=${V16_DEADLINE:-530}
D=build/v16; C="scripts/carry.sh run $D"; SB=$D/bin/schedbed
$C true || exit 2
mkdir -p res
{ date -u; nproc; uname -a; cat /proc/loadavg; lscpu; $C $SB list --machine; cat $D/SOURCE; } >"$OUT/machine.txt" 2>&1
head -3 "$OUT/machine.txt"; grep -m1 "Model name" "$OUT/machine.txt"
if [ "${V16_CAL:-1}" = 1 ]; then
	$C timeout 170 python3 scripts/calibrate.py --schedbed $SB --out "$OUT/costs.txt" --runs res/calibrate >"$OUT/calibrate.log" 2>&1
	echo "calibrate rc $? at ${SECONDS}s"; tail -1 "$OUT/calibrate.log"
	tar -cJf "$OUT/calibrate-runs.tar.xz" -C res calibrate 2>/dev/null
fi
cells=${V16_CELLS:-forkjoin-fifo forkjoin-lifo tiny wake mixed patterns oltp-open-800 oltp-closed oltp-open-400 oltp-open-1200}
for cell in $cells; do
	for w in ${V16_THREADS:-16 1 2 4 8}; do
		left=$((DEADLINE - SECONDS))
		[ $left -lt 15 ] && break 2
		d=res/vs/$cell-w$w
		$C python3 scripts/validate_sim.py expand --out $d --cells $cell --threads $w --reps 3 --duration 0.2 --warmup 0.05 --executors native --schedbed $SB >/dev/null
		$C timeout $left python3 scripts/sweep.py run $d --schedbed $SB >$d.log 2>&1
		echo "$cell w$w rc $? at ${SECONDS}s: $(tail -1 $d.log)" | tee -a res/vs/progress.txt
	done
done
cat /proc/loadavg >>res/vs/progress.txt
tar -cJf "$OUT/native.tar.xz" -C res vs
ls -la "$OUT"
