#!/bin/bash
# causes.sh OUT REPS: the experiments that each change one suspected cause of a many-core row
# (the rows of scripts/targets.sh), on a machine with at least 16 cores, REPS repetitions with the
# configurations of a group alternated (the order reversed every other repetition). A benchmark:
# run it on an idle machine, then
#     scripts/causes.py OUT           (the table: medians, min..max, the interval rule)
# Run from the checkout's root after build/carry.tar.xz is unpacked (scripts/carry.sh).
#   lifo   forkjoin fib(24) with local_order=lifo: one 1-worker process alone, 16 such processes at
#          once (nothing shared between them but the machine), one 16-worker process. If the
#          independent processes lose what the 16 workers lose per worker, the loss is the
#          machine's (clock, shared cache), not the scheduler's.
#   fifo   the same with FIFO own queues (the default): each process holds its breadth-first
#          frontier, so 16 at once share the last-level cache and the memory bus as 16 workers do,
#          with no queue, line or steal between them.
#   tiny   stealing and fifo at 4, 12 and 16 workers: with 4 producers, 12 workers fill the 16
#          cores exactly; 16 workers put 20 threads on them.
#   tinytry  tiny at 4 and 16 workers with the idle workers' try count changed: stealing with
#          worker_try_count 1000 (default), 10 and 0, and fifo. If stealing's fall from 4 to 16
#          workers were its idle workers sweeping the producers' queues, fewer tries would undo it.
#   wake   16 workers, one client each, 1 ms gaps: stealing with worker_try_count 1000 (default),
#          100, 10 and 0, busy_worker=true, and fifo: the cores each setting burns.
#   oltp   16 workers, 256 clients, 24,000 tx/s: serial and stealing with the statement mix as
#          shipped and without the long statements (scan, join, aggregate, multi).
# CAUSES_NEW (default build/carry/bin/schedbed), CAUSES_WIDE (16), CAUSES_TINY ("4 12 16": tiny's
# worker counts), CAUSES_TINYTRY ("4 16": tinytry's), CAUSES_DURATION (0.5 s) and CAUSES_GROUPS
# ("lifo fifo tiny tinytry wake oltp") make a smaller slice.
set -u
[ $# -eq 2 ] || { echo "usage: causes.sh OUT REPS" >&2; exit 2; }
root=$PWD
SB=${CAUSES_NEW:-$root/build/carry/bin/schedbed}
export LD_LIBRARY_PATH=$root/build/carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
W=${CAUSES_WIDE:-16}; TINY=${CAUSES_TINY:-4 12 16}; TINYTRY=${CAUSES_TINYTRY:-4 16}; D=${CAUSES_DURATION:-0.5}
GROUPS_=${CAUSES_GROUPS:-lifo fifo tiny tinytry wake oltp}
[ -x "$SB" ] || { echo "causes.sh: $SB is missing (scripts/carry.sh pack)" >&2; exit 2; }
out=$1; reps=$2
for g in $GROUPS_; do
	case $g in lifo | fifo | tiny | tinytry | wake | oltp) ;; *) echo "causes.sh: unknown group $g; valid groups are: lifo fifo tiny tinytry wake oltp" >&2; exit 2 ;; esac
done
mkdir -p "$out"
start() { # tag args...: one run in the background; its exit status and seconds go to rc.txt
	local tag=$1; shift
	local d=$out/$tag
	( t0=$SECONDS
	  timeout 60 "$SB" run --quiet --rows 0 --out "$d" "$@" >"$d.log" 2>&1
	  echo "$tag $? $((SECONDS - t0))s" >>"$out/rc.txt"
	  find "$d" -type f ! -name summary.json ! -name meta.json ! -name workers.csv -delete ) &
}
one() { start "$@"; wait; }
alternate() { # rep config...: the configurations in order, reversed on even repetitions
	local r=$1; shift
	if [ $((r % 2)) = 0 ]; then
		local i; for ((i = $#; i >= 1; i--)); do echo "${!i}"; done
	else printf '%s\n' "$@"; fi
}
common() { echo "--seed $1 --duration $D --warmup 0.1 --drain 5"; }
for r in $(seq 1 "$reps"); do
	echo "causes: repetition $r of $reps ($SECONDS s)"
	for g in $GROUPS_; do
		case $g in
		lifo | fifo)
			for c in $(alternate "$r" alone together wide); do
				fj="--policy stealing --workload forkjoin --set local_order=$g $(common "$r")"
				case $c in
				alone) one $g-alone-r$r $fj --threads 1 ;;
				together)
					for k in $(seq 1 "$W"); do start $g-together$k-r$r $fj --threads 1; done
					wait ;;
				wide) one $g-wide-r$r $fj --threads "$W" ;;
				esac
			done ;;
		tiny)
			cs=(); for n in $TINY; do cs+=(stealing-$n fifo-$n); done
			for c in $(alternate "$r" "${cs[@]}"); do
				one "tiny-$c-r$r" --policy "${c%-*}" --workload tiny --threads "${c#*-}" $(common "$r")
			done ;;
		tinytry)
			cs=(); for n in $TINYTRY; do cs+=(try1000-$n try10-$n try0-$n fifo-$n); done
			for c in $(alternate "$r" "${cs[@]}"); do
				case $c in
				try*) one "tinytry-$c-r$r" --policy stealing --workload tiny --threads "${c#*-}" \
					--set worker_try_count="$(t=${c%-*}; echo "${t#try}")" $(common "$r") ;;
				fifo-*) one "tinytry-$c-r$r" --policy fifo --workload tiny --threads "${c#*-}" $(common "$r") ;;
				esac
			done ;;
		wake)
			for c in $(alternate "$r" try1000 try100 try10 try0 busy fifo); do
				w="--workload wake --threads $W --set clients=$W --set gap_us=1000 $(common "$r")"
				case $c in
				try*) one "wake-$c-r$r" --policy stealing $w --set worker_try_count=${c#try} ;;
				busy) one "wake-$c-r$r" --policy stealing $w --set busy_worker=true ;;
				fifo) one "wake-$c-r$r" --policy fifo $w ;;
				esac
			done ;;
		oltp)
			for c in $(alternate "$r" serial-mix stealing-mix serial-short stealing-short); do
				o="--workload oltp --threads $W --set clients=$((16 * W)) --set rate=$((1500 * W)) $(common "$r")"
				[ "${c#*-}" = short ] && o="$o --set mix_scan=0 --set mix_join=0 --set mix_aggregate=0 --set mix_multi=0"
				one "oltp-$c-r$r" --policy "${c%-*}" $o
			done ;;
		esac
	done
done
echo "causes: done ($SECONDS s)"
