#!/bin/bash
# make scale's fork-join, tiny and stencil cases at 5 repetitions on the lent 16-core machine
set -u
T0=$(date +%s)
{ date -u; lscpu; uptime; } > "$OUT/machine.txt" 2>&1
mkdir -p res
R="scripts/carry.sh run build/m16 python3"
$R scripts/scale.py expand --schedbed build/m16/bin/schedbed --out res/scale --cases fib,fib-lifo,tiny,stencil \
    --peers '' --reps 5 --duration 0.2 --warmup 0.05 > res/scale.log 2>&1
timeout 400 $R scripts/sweep.py run res/scale --schedbed build/m16/bin/schedbed >> res/scale.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> res/scale.log
uptime >> "$OUT/machine.txt"
tail -3 res/scale.log
tar -cJf "$OUT/scale.tar.xz" res

# second call, on the same boot a minute later: build/scale16b.sh
# make scale's fork-join, tiny and stencil cases at 5 repetitions on the lent 16-core machine
set -u
T0=$(date +%s)
{ date -u; lscpu; uptime; } > "$OUT/machine.txt" 2>&1
mkdir -p res
R="scripts/carry.sh run build/m16 python3"
$R scripts/scale.py expand --schedbed build/m16/bin/schedbed --out res/scale2 --cases uts,uts-lifo,wake \
    --peers '' --reps 5 --duration 0.2 --warmup 0.05 > res/scale2.log 2>&1
timeout 165 $R scripts/sweep.py run res/scale2 --schedbed build/m16/bin/schedbed >> res/scale2.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> res/scale2.log
uptime >> "$OUT/machine.txt"
tail -3 res/scale2.log
tar -cJf "$OUT/scale2.tar.xz" res
