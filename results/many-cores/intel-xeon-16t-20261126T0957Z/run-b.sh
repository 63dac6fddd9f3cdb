#!/bin/bash
# second call (2026-11-26): this machine's cost table, then the native half of validate-sim's
# forkjoin-fifo cell at 1, 2, 4, 8, 16 workers, every policy, 3 seeds (programs of the commit
# in build/c16/SOURCE, built without the simulator)
set -u
export PYTHONUNBUFFERED=1
C="scripts/carry.sh run build/c16"; SB=build/c16/bin/schedbed
mkdir -p res
$C true || exit 2
{ lscpu; $C $SB list --machine; cat build/c16/SOURCE; } > $OUT/machine-b.txt 2>&1
$C timeout 95 python3 scripts/calibrate.py --schedbed $SB --out $OUT/costs.txt --runs res/calibrate > $OUT/calibrate.log 2>&1
echo "calibrate rc $?"; tail -2 $OUT/calibrate.log
tar -cJf $OUT/calibrate-runs.tar.xz -C res calibrate 2>/dev/null
$C python3 scripts/validate_sim.py expand --out res/vsfifo --cells forkjoin-fifo --threads 1,2,4,8,16 --reps 3 --duration 0.2 --warmup 0.05 --executors native --schedbed $SB
$C timeout ${VT:-120} python3 scripts/sweep.py run res/vsfifo --schedbed $SB > res/vsfifo.log 2>&1; echo "validate rc $?"; tail -2 res/vsfifo.log
tar -cJf $OUT/vsfifo.tar.xz -C res vsfifo vsfifo.log; ls -la $OUT
