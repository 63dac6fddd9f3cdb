#!/bin/bash
# one call on the lent 16-core machine (2026-11-26, second visit): the many-core rows of the
# task depot's commit against 1c89b57 before it, 5 repetitions alternated, with the forkjoin
# row for hybrid, global and fifo too; then the sanitizer matrix at 16 workers and fuzzing up to
# 32 threads with the time left. Timing runs first and alone.
set -u
T0=$SECONDS; END=${DEV_END:-540}
left() { echo $((END - (SECONDS - T0))); }
export PYTHONUNBUFFERED=1
mkdir -p res
tar -xJf build/d16.tar.xz -C build || exit 2
set -a; . build/d16/SOURCE; set +a
export LD_LIBRARY_PATH=$PWD/build/d16/lib
D=build/d16/bin
# as make stress sets them
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/stress/tsan.supp"
export ASAN_OPTIONS="detect_leaks=1 abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1"
{ lscpu; nproc; free -g; $D/schedbed list --machine; cat build/d16/SOURCE; uptime; } > $OUT/machine.txt 2>&1
tail -4 $OUT/machine.txt
echo "== targets ($(left) s left)"
( while sleep 20; do tar -cJf $OUT/targets.tar.xz -C res targets targets.log 2>/dev/null; done ) &
snap=$!
TARGETS_NEW=$PWD/$D/schedbed TARGETS_PEERS= TARGETS_FJ_POLICIES="hybrid global fifo" \
TARGETS_OLD_SHA=1c89b57afe63dd34e2e569bf35f340d1eec23359 \
	timeout ${TARGETS_T:-300} bash scripts/targets.sh res/targets ${REPS:-5} $D/schedbed-old > res/targets.log 2>&1
echo "targets rc $?"; tail -2 res/targets.log
kill $snap 2>/dev/null; wait $snap 2>/dev/null
tar -cJf $OUT/targets.tar.xz -C res targets targets.log
echo "== tsan matrix, 16 workers ($(left) s left)"; uptime
timeout ${TSAN_T:-130} python3 tests/stress/matrix.py --schedbed build/d16/tsan.sh --chaos 21 --scale 4 --threads 16 --jobs 4 > $OUT/tsan16.log 2>&1
echo "tsan rc $?"; tail -2 $OUT/tsan16.log
echo "== asan matrix, 16 workers ($(left) s left)"
timeout ${ASAN_T:-45} python3 tests/stress/matrix.py --schedbed build/d16/asan.sh --chaos 22 --scale 4 --threads 16 --jobs 6 > $OUT/asan16.log 2>&1
echo "asan rc $?"; tail -2 $OUT/asan16.log
t=$(( $(left) - 10 ))
echo "== fuzz up to 32 threads, $t s ($(left) s left)"
if [ $t -gt 20 ]; then
	timeout $t python3 scripts/fuzz.py --schedbed $D/schedbed --count 2000 --seed 8 --max-threads 32 --jobs 10 \
		--failures $OUT/fuzz-failures.txt > $OUT/fuzz.log 2>&1
	echo "fuzz rc $?"; tail -3 $OUT/fuzz.log
fi
echo "== done at $((SECONDS - T0)) s"; ls -la $OUT
