#!/bin/bash
# ab16.sh OUT REPS: old (the carried build, 50c09ea) against new (build/cnew/schedbed, NEW_SHA)
# alternated in every repetition, on the rows the searching-count change can move; tags as
# scripts/targets.sh's, so scripts/targets.py reads them
set -u
root=$PWD; out=$1; reps=$2; D=${AB_DURATION:-0.3}; W=${AB_WIDE:-16}
export LD_LIBRARY_PATH=$root/build/carry/lib
. build/carry/SOURCE
OLD_SHA=$SCHEDBED_SOURCE_SHA
mkdir -p "$out"
one() { # tag version args...
	local tag=$1 v=$2; shift 2
	local bin=$root/build/carry/bin/schedbed sha=$OLD_SHA
	[ "$v" = new ] && bin=$root/build/cnew/schedbed && sha=$NEW_SHA
	local d=$out/$v/$tag; mkdir -p "$(dirname "$d")"
	SCHEDBED_SOURCE_SHA=$sha SCHEDBED_SOURCE_DIRTY=0 timeout 60 "$bin" run --quiet --rows 0 --out "$d" "$@" >"$d.log" 2>&1
	echo "$v/$tag $?" >>"$out/rc.txt"
	find "$d" -type f ! -name summary.json ! -name meta.json ! -name workers.csv -delete
}
for r in $(seq 1 "$reps"); do
	order="new old"; [ $((r % 2)) = 0 ] && order="old new"
	echo "ab16: repetition $r ($SECONDS s)"
	c="--seed $r --duration $D --warmup 0.1 --drain 5"
	for v in $order; do
		one fjlifo-w1-r$r $v --policy stealing --workload forkjoin --set local_order=lifo --threads 1 $c
		one fjlifo-w$W-r$r $v --policy stealing --workload forkjoin --set local_order=lifo --threads $W $c
		one fj-w$W-r$r $v --policy stealing --workload forkjoin --threads $W $c
		one tiny-w4-r$r $v --policy stealing --workload tiny --threads 4 $c
		one tiny-w$W-r$r $v --policy stealing --workload tiny --threads $W $c
		one wake-suspend-r$r $v --policy stealing --workload wake --threads $W --set clients=$W --set gap_us=1000 $c
		one oltp24k-stealing-r$r $v --policy stealing --workload oltp --threads $W --set clients=$((16 * W)) --set rate=$((1500 * W)) $c
	done
done
echo "ab16: done ($SECONDS s)"
