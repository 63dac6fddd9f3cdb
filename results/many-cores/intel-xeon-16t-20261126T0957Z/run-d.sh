#!/bin/bash
# fourth call (2026-11-26): the rest of validate-sim's native half at 1..16 workers, 3 seeds,
# with the time left (tiny, mixed, patterns, then oltp's cells); the sweep keeps what finished
set -u
export PYTHONUNBUFFERED=1
C="scripts/carry.sh run build/c16"; SB=build/c16/bin/schedbed
mkdir -p res
$C python3 scripts/validate_sim.py expand --out res/vs3 --cells tiny,mixed,patterns,oltp-closed,oltp-open-400,oltp-open-800,oltp-open-1200 --threads 1,2,4,8,16 --reps 3 --duration 0.2 --warmup 0.05 --executors native --schedbed $SB
$C timeout ${VT:-125} python3 scripts/sweep.py run res/vs3 --schedbed $SB > res/vs3.log 2>&1; echo "validate rc $?"; tail -2 res/vs3.log
tar -cJf $OUT/vs3.tar.xz -C res vs3 vs3.log; ls -la $OUT
