#!/bin/bash
# third call (2026-11-26): tiny at 4 and 16 workers with the idle workers' try count changed
# (stealing: worker_try_count 1000, the default, against 10 and 0; fifo beside), 5 repetitions
# alternated; then validate-sim's native forkjoin-lifo and wake cells at 1..16 workers, 3 seeds
set -u
export PYTHONUNBUFFERED=1
C="scripts/carry.sh run build/c16"; SB=build/c16/bin/schedbed
mkdir -p res/tiny
$C true || exit 2
for r in 1 2 3 4 5; do
  for w in 4 16; do
    for s in 1000 10 0 fifo; do
      p="--policy stealing --set worker_try_count=$s"; [ $s = fifo ] && p="--policy fifo"
      $C timeout 30 $SB run --quiet --rows 0 --out res/tiny/$s-w$w-r$r $p --workload tiny --threads $w --seed $r --duration 0.5 --warmup 0.1 > /dev/null 2>&1
      echo "$s-w$w-r$r $?" >> res/tiny/rc.txt
    done
  done
done
echo "tiny done at $SECONDS s"
tar -cJf $OUT/tiny.tar.xz -C res tiny
$C python3 scripts/validate_sim.py expand --out res/vs2 --cells forkjoin-lifo,wake --threads 1,2,4,8,16 --reps 3 --duration 0.2 --warmup 0.05 --executors native --schedbed $SB
$C timeout ${VT:-130} python3 scripts/sweep.py run res/vs2 --schedbed $SB > res/vs2.log 2>&1; echo "validate rc $?"; tail -2 res/vs2.log
tar -cJf $OUT/vs2.tar.xz -C res vs2 vs2.log; ls -la $OUT
