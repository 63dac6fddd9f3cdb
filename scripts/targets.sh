#!/bin/bash
# targets.sh OUT REPS OLD: the many-core rows (fib(32) with local_order=lifo, the forkjoin workload
# FIFO and LIFO, tiny, oltp at 24,000 tx/s with 256 clients, wake's cores used, the oneTBB and
# OpenMP fib(32)) at 1, 4 and 16 workers, for two builds: the carried one (scripts/carry.sh pack,
# "new") and OLD, a schedbed built from an earlier commit ("old"), alternated within every
# repetition. A benchmark: run it on an idle machine with at least 16 cores, then
#     scripts/targets.py OUT          (the table: medians, min..max, the interval rule)
# Run from the checkout's root on the measuring machine, after build/carry.tar.xz is unpacked.
# A smaller slice (the tests' one): TARGETS_NEW (default build/carry/bin/schedbed, its peers beside
# it), TARGETS_WORKERS ("1 4 16"), TARGETS_WIDE (16: the workers of the oltp and wake rows, with 16
# clients and 1,500 tx/s per worker on oltp, one client per worker on wake), TARGETS_DURATION (0.6 s)
# and TARGETS_FIB_N (32; the rows keep their names, the table reads n from meta.json).
# TARGETS_PEERS ("tbb omp"; empty skips the peers, which neither build changes), TARGETS_FJ_POLICIES
# (more policies for the forkjoin defaults row at the widest worker count, tagged fj-POLICY-wN) and
# TARGETS_OLD_SHA (the commit OLD was built from: meta.json records it where the machine has no git,
# which would otherwise give both builds the carried one's).
set -u
[ $# -eq 3 ] || { echo "usage: targets.sh OUT REPS OLD_SCHEDBED" >&2; exit 2; }
root=$PWD
NEW=${TARGETS_NEW:-$root/build/carry/bin/schedbed}; OLD=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
export LD_LIBRARY_PATH=$root/build/carry/lib:$(dirname "$OLD")/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
WS=${TARGETS_WORKERS:-1 4 16}; WIDE=${TARGETS_WIDE:-16}; D=${TARGETS_DURATION:-0.6}; N=${TARGETS_FIB_N:-32}
[ -x "$NEW" ] && [ -x "$OLD" ] || { echo "targets.sh: $NEW or $OLD is missing" >&2; exit 2; }
out=$1; reps=$2
mkdir -p "$out"
one() { # tag version args...
	local tag=$1 v=$2; shift 2
	local bin=$NEW x="--rows 0" env=()
	[ "$v" = old ] && bin=$OLD && x=""
	[ "$v" = old ] && [ -n "${TARGETS_OLD_SHA:-}" ] && env=(SCHEDBED_SOURCE_SHA="$TARGETS_OLD_SHA" SCHEDBED_SOURCE_DIRTY=0)
	local d=$out/$v/$tag
	mkdir -p "$(dirname "$d")"
	local t0=$SECONDS
	env "${env[@]}" timeout 60 "$bin" run --quiet --out "$d" "$@" $x >"$d.log" 2>&1
	echo "$v/$tag $? $((SECONDS - t0))s" >>"$out/rc.txt"
	# keep the numbers only (the old program writes every job's row): results travel back compressed
	find "$d" -type f ! -name summary.json ! -name meta.json ! -name workers.csv ! -name latency-hist.json.gz -delete
}
for r in $(seq 1 "$reps"); do
	order="new old"; [ $((r % 2)) = 0 ] && order="old new"
	echo "targets: repetition $r of $reps ($SECONDS s)"
	for w in $WS; do
		for v in $order; do
			one fib32lifo-w$w-r$r $v --policy stealing --workload forkjoin --set which=fib --set n=$N --set local_order=lifo --threads $w --seed $r --duration $D --warmup 0.2 --drain 5
			one fj-w$w-r$r $v --policy stealing --workload forkjoin --threads $w --seed $r --duration $D --warmup 0.2 --drain 5
			one fjlifo-w$w-r$r $v --policy stealing --workload forkjoin --set local_order=lifo --threads $w --seed $r --duration $D --warmup 0.2 --drain 5
			one tiny-w$w-r$r $v --policy stealing --workload tiny --threads $w --seed $r --duration $D --warmup 0.1
		done
	done
	for p in stealing serial hybrid; do
		for v in $order; do
			one oltp24k-$p-r$r $v --policy $p --workload oltp --threads $WIDE --set clients=$((16 * WIDE)) --set rate=$((1500 * WIDE)) --seed $r --duration $D --warmup 0.2
		done
	done
	for v in $order; do
		one wake-suspend-r$r $v --policy stealing --workload wake --threads $WIDE --set clients=$WIDE --set gap_us=1000 --seed $r --duration $D --warmup 0.2
		one wake-busy-r$r $v --policy stealing --workload wake --threads $WIDE --set clients=$WIDE --set gap_us=1000 --set busy_worker=true --seed $r --duration $D --warmup 0.2
	done
	for p in ${TARGETS_FJ_POLICIES:-}; do
		for v in $order; do
			one fj-$p-w$WIDE-r$r $v --policy $p --workload forkjoin --threads $WIDE --seed $r --duration $D --warmup 0.2 --drain 5
		done
	done
	for w in 1 $WIDE; do
		for p in ${TARGETS_PEERS-tbb omp}; do
			mkdir -p "$out/peer"
			OMP_NUM_THREADS=$w timeout 60 "$(dirname "$NEW")/peers_$p" fib $N $w >"$out/peer/$p-fib32-w$w-r$r.txt" 2>&1
		done
	done
done
echo "targets: done ($SECONDS s)"
