#!/bin/bash
# one call on the lent 16-core machine: machine description, cost table, cause experiments,
# the native half of validate-sim at 1, 4, 16 workers, then METG at 16 workers with what is left
set -u
T0=$SECONDS; END=${DEV_END:-575}
left() { echo $((END - (SECONDS - T0))); }
export PYTHONUNBUFFERED=1; PY=${PY:-python3}
C="scripts/carry.sh run build/carry"
mkdir -p res
lscpu > $OUT/machine.txt; nproc >> $OUT/machine.txt; free -g >> $OUT/machine.txt
$C true || exit 2
SB=build/carry/bin/schedbed
$C $SB list --machine | tee -a $OUT/machine.txt
cat build/carry/SOURCE >> $OUT/machine.txt
echo "== calibrate ($(left) s left)"
$C timeout 90 $PY scripts/calibrate.py --schedbed $SB --out $OUT/costs.txt --runs res/calibrate > $OUT/calibrate.log 2>&1
echo "calibrate rc $?"; tail -2 $OUT/calibrate.log
tar -cJf $OUT/calibrate-runs.tar.xz -C res calibrate 2>/dev/null
echo "== causes ($(left) s left)"; uptime
$C timeout 150 env CAUSES_DURATION=${CAUSES_DURATION:-0.4} scripts/causes.sh res/causes ${CAUSES_REPS:-5} > res/causes.log 2>&1; echo "causes rc $?"; tail -2 res/causes.log
$C $PY scripts/causes.py res/causes >/dev/null 2>&1; tar -cJf $OUT/causes.tar.xz -C res causes causes.log
echo "== validate native ($(left) s left)"; uptime
$C $PY scripts/validate_sim.py expand --out res/vs16 --threads ${VS_THREADS:-1,4,16} --reps 3 --duration 0.2 --warmup 0.05 --executors native --schedbed $SB
t=$(( $(left) - 110 )); [ $t -lt 30 ] && t=30
$C timeout $t $PY scripts/sweep.py run res/vs16 --schedbed $SB > res/vs16.log 2>&1; echo "validate rc $?"; tail -2 res/vs16.log
tar -cJf $OUT/vs16.tar.xz -C res vs16 vs16.log
echo "== metg ($(left) s left)"; uptime
if [ "$(left)" -gt 60 ]; then
  $C $PY scripts/metg.py expand --out res/metg16 --schedbed $SB --patterns stencil_1d --policies global,stealing,stealing+local_order=lifo --threads 16 --width 16 --reps 3 --max-iterations 8192 --min-iterations 64
  $C timeout $(( $(left) - 15 )) $PY scripts/sweep.py run res/metg16 --schedbed $SB > res/metg16.log 2>&1; echo "metg rc $?"; tail -2 res/metg16.log
  tar -cJf $OUT/metg16.tar.xz -C res metg16 metg16.log
fi
echo "== done at $((SECONDS - T0)) s"; ls -la $OUT
