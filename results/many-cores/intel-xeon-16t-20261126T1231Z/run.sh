#!/bin/bash
# the native many-core experiments (sweeps/many-*.json) on the lent 16-core machine, one call
set -u
T0=$(date +%s)
{ date -u; lscpu; nproc; uptime; } > "$OUT/machine.txt" 2>&1
mkdir -p res
# the carried programs, packed from a clean tree by scripts/carry.sh pack --no-sim build/m16
timeout 470 scripts/carry.sh run build/m16 python3 scripts/experiments.py --schedbed build/m16/bin/schedbed \
    --out res/many many-capacity many-stealing many-sticky many-batch many-subtasks many-distribution many-workers \
    > res/many.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> res/many.log
uptime >> "$OUT/machine.txt"
tail -5 res/many.log
tar -cJf "$OUT/many.tar.xz" res
ls -la "$OUT"
