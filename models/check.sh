#!/usr/bin/env bash
# check.sh - runs every spin verification of models/ and compares each outcome with the
# expected one: the protocol models must verify clean; the deliberately broken variants and
# the recorded defect of the C code must be refuted with the expected kind of error. Prints
# one line per check; exits 1 if any outcome differs from its expectation or a search was
# incomplete, 2 if the tools are missing, 0 otherwise.
#
# Usage: models/check.sh WORKDIR     (make model-check passes $(B)/models)
# Environment: CC (pan's compiler, default cc); MODEL_JOBS (verifications run side by side,
# default the number of cores, at most 2: the largest search holds about 1.1 GB).
#
# Each verifier is generated and built in WORKDIR/<build>/ from a copy of the models, so
# models/ is never written to, and a counterexample stays there for replay (the failure line
# prints the command).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=${1:?usage: models/check.sh WORKDIR}
cc=${CC:-cc}
par=${MODEL_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$par" -gt 2 ] && par=2

command -v spin >/dev/null || { echo "model-check: spin is not installed (run make deps)" >&2; exit 2; }
command -v "$cc" >/dev/null || { echo "model-check: no C compiler '$cc'" >&2; exit 2; }
# WORKDIR is emptied first, but only if it is new, empty, or one of ours (marked)
if [ -d "$work" ] && [ -n "$(ls -A "$work")" ] && [ ! -f "$work/.model-check" ]; then
	echo "model-check: $work is not empty and not a model-check directory; give another" >&2
	exit 2
fi
rm -rf "$work"
mkdir -p "$work" || exit 2
work=$(cd "$work" && pwd)
touch "$work/.model-check"

# One verifier per line: build | model | spin -D options | kind | pan's -O level | checks.
# kind: safety (assertions and invalid end states) or ltl (acceptance cycles under weak
# fairness). checks: name:claim:expect, space separated; claim is empty for safety; expect is
# pass (no error) or the kind of error spin must report, with '_' for spaces. The largest
# searches come first so that two cores finish together; -O2 only where the search, not the
# compiler, takes the time.
builds=(
	"dist-n3|distribution.pml|-DN=3 -DFAST_POP -DREQ=1 -DSPAWN=1 -DSPAWN_OWN|safety|-O2|dist-n3::pass"
	"dist-n3-ltl|distribution.pml|-DN=3 -DFAST_POP -DREQ=1 -DSPAWN=0|ltl|-O2|dist-n3-all-run:all_run:pass"
	"dist-n2-fin|distribution.pml|-DN=2 -DFINITE_HANDOFFS|ltl|-O2|dist-n2-all-run-fin:all_run_fin:pass"
	"wake-ltl|wake.pml|-DSPAWN=1|ltl|-O2|wake-all-run:all_run:pass wake-stops:stops:pass"
	"wake-par-req2|wake.pml|-DPAR -DREQ=2 -DSPAWN=1|safety|-O2|wake-par-req2::pass"
	"wake-par|wake.pml|-DPAR|safety|-O2|wake-par::pass"
	"wake-par-fence|wake.pml|-DPAR -DFENCE|safety|-O2|wake-par-fence::pass"
	"wake-par-timeouts|wake.pml|-DPAR -DTIMEOUTS|safety|-O2|wake-par-timeouts::pass"
	"wake-broken-no-barrier|wake.pml|-DBROKEN_NO_BARRIER|safety|-O0|wake-broken-no-barrier::assertion_violated_0"
	"wake-broken-old-rule|wake.pml|-DPAR -DBROKEN_OLD_RULE|safety|-O0|wake-broken-old-rule::assertion_violated_0"
	"wake-broken-no-undo-recheck|wake.pml|-DPAR -DBROKEN_NO_UNDO_RECHECK|safety|-O0|wake-broken-no-undo-recheck::assertion_violated_0"
	"idle-n3-spawn|idle.pml|-DN=3 -DFAST_POP -DREQ=1 -DSPAWN=1|safety|-O2|idle-n3-spawn::pass"
	"idle-n3|idle.pml|-DN=3 -DFAST_POP -DREQ=2 -DSPAWN=0|safety|-O2|idle-n3::pass"
	"idle-n2-ltl|idle.pml|-DN=2|ltl|-O2|idle-n2-all-run:all_run:pass idle-n2-stops:stops:pass"
	"idle-n2|idle.pml|-DN=2|safety|-O1|idle-n2::pass"
	"idle-n2-timeouts|idle.pml|-DN=2 -DTIMEOUTS|safety|-O1|idle-n2-timeouts::pass"
	"idle-n3-ltl|idle.pml|-DN=3 -DFAST_POP -DREQ=1 -DSPAWN=0|ltl|-O2|idle-n3-all-run:all_run:pass"
	"broken-no-recheck|idle.pml|-DN=2 -DBROKEN_NO_RECHECK|safety|-O0|broken-no-recheck::invalid_end_state"
	"broken-no-recheck-ltl|idle.pml|-DN=2 -DBROKEN_NO_RECHECK|ltl|-O0|broken-no-recheck-ltl:all_run:acceptance_cycle"
	"broken-early-read|idle.pml|-DN=2 -DBROKEN_EARLY_READ|safety|-O0|broken-early-read::invalid_end_state"
	"broken-early-read-ltl|idle.pml|-DN=2 -DBROKEN_EARLY_READ|ltl|-O0|broken-early-read-ltl:all_run:acceptance_cycle"
	"broken-wake-before-link|idle.pml|-DN=2 -DBROKEN_WAKE_BEFORE_LINK|safety|-O0|broken-wake-before-link::invalid_end_state"
	"broken-wake-before-link-ltl|idle.pml|-DN=2 -DBROKEN_WAKE_BEFORE_LINK|ltl|-O0|broken-wake-before-link-ltl:all_run:acceptance_cycle"
	"defect-ptl-recheck|idle.pml|-DN=2 -DSPAWN=0 -DPTL|safety|-O0|defect-ptl-recheck::invalid_end_state"
	"defect-ptl-recheck-ltl|idle.pml|-DN=2 -DSPAWN=0 -DPTL|ltl|-O0|defect-ptl-recheck-ltl:all_run:acceptance_cycle"
	"ptl-fixed|idle.pml|-DN=2 -DSPAWN=0 -DPTL -DPTL_FIX|safety|-O1|ptl-fixed::pass"
	"ptl-fixed-ltl|idle.pml|-DN=2 -DSPAWN=0 -DPTL -DPTL_FIX|ltl|-O1|ptl-fixed-all-run:all_run:pass ptl-fixed-stops:stops:pass"
	"ptl-fix-cap-only|idle.pml|-DN=2 -DSPAWN=0 -DPTL -DPTL_FIX_CAP|safety|-O1|ptl-fix-cap-only::pass"
	"ptl-fix-pop-only|idle.pml|-DN=2 -DSPAWN=0 -DPTL -DPTL_FIX_POP|safety|-O0|ptl-fix-pop-only::invalid_end_state"
	"live|live.pml||safety|-O0|live::pass"
	"live-broken-flag-first|live.pml|-DBROKEN_FLAG_FIRST|safety|-O0|live-broken-flag-first::invalid_end_state"
	"live-broken-in-first|live.pml|-DBROKEN_IN_FIRST|safety|-O0|live-broken-in-first::assertion_violated_(ended==2)"
	"live-broken-kick-early|live.pml|-DBROKEN_KICK_BEFORE_SNAPSHOT|safety|-O0|live-broken-kick-early::invalid_end_state"
	"watcher|watcher.pml||safety|-O0|watcher::pass"
	"watcher-timeouts|watcher.pml|-DTIMEOUTS|safety|-O0|watcher-timeouts::pass"
	"watcher-ltl|watcher.pml||ltl|-O0|watcher-all-run:all_run:pass watcher-stops:stops:pass"
	"watcher-broken-seq-late|watcher.pml|-DBROKEN_SEQ_AFTER_DRAIN|safety|-O0|watcher-broken-seq-late::invalid_end_state"
	"watcher-broken-bump-early|watcher.pml|-DBROKEN_BUMP_BEFORE_LINK|safety|-O0|watcher-broken-bump-early::invalid_end_state"
	"watcher-broken-stop-early|watcher.pml|-DBROKEN_STOP_BEFORE_SNAPSHOT|safety|-O0|watcher-broken-stop-early::invalid_end_state"
	"dist-n2|distribution.pml|-DN=2|safety|-O1|dist-n2::pass"
	"dist-n2-timeouts|distribution.pml|-DN=2 -DTIMEOUTS|safety|-O1|dist-n2-timeouts::pass"
	"dist-n2-ltl|distribution.pml|-DN=2|ltl|-O1|dist-n2-stop-ends:stop_ends:pass defect-dist-bounce:all_run:acceptance_cycle"
	"dist-handed-on-take|distribution.pml|-DN=2 -DHANDED_ON_TAKE|ltl|-O2|dist-handed-on-take-all-run:all_run:pass dist-handed-on-take-stops:stops:pass"
	"dist-ded-n3|distribution.pml|-DN=3 -DDEDICATED -DFAST_POP -DREQ=1 -DSPAWN=1 -DSPAWN_OWN|safety|-O2|dist-ded-n3::pass"
	"dist-ded-n2|distribution.pml|-DN=2 -DDEDICATED|safety|-O1|dist-ded-n2::pass"
	"dist-ded-n2-ltl|distribution.pml|-DN=2 -DDEDICATED -DFINITE_HANDOFFS|ltl|-O1|dist-ded-n2-all-run-fin:all_run_fin:pass dist-ded-n2-stop-ends:stop_ends:pass defect-dist-ded-bounce:all_run:acceptance_cycle"
	"dist-broken-plain-enter|distribution.pml|-DN=2 -DBROKEN_PLAIN_ENTER|safety|-O0|dist-broken-plain-enter::assertion_violated_(nmode==0)"
	"dist-broken-no-wake|distribution.pml|-DN=2 -DBROKEN_HANDOFF_NO_WAKE|safety|-O0|dist-broken-no-wake::invalid_end_state"
	"dist-broken-no-wake-ltl|distribution.pml|-DN=2 -DREQ=1 -DSPAWN=0 -DBROKEN_HANDOFF_NO_WAKE -DFINITE_HANDOFFS|ltl|-O0|dist-broken-no-wake-ltl:all_run_fin:acceptance_cycle"
	"dist-race-i3|distribution.pml|-DN=2 -DOBSERVE_I3|safety|-O0|dist-race-i3::assertion_violated_i3_alone"
	"dist-race-ii2|distribution.pml|-DN=2 -DOBSERVE_II2|safety|-O0|dist-race-ii2::assertion_violated_ii2_covered"
	"dist-n2-quiet|distribution.pml|-DN=2 -DQUIET|ltl|-O2|dist-n2-quiet:quiet:pass"
	"defect-dist-trade|distribution.pml|-DN=2 -DQUIET -DBROKEN_RECHECK_ENTER|ltl|-O0|defect-dist-trade:quiet:acceptance_cycle"
)

# Append one result line for check $1 to $d/result; mark $d/bad when it is unexpected.
report() {
	local d=$1 name=$2 what=$3 defs=$4 expect=$5 out=$6 secs=$7 model=$8
	local errors states kind incomplete="" outcome ok=1
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | head -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$out" | head -n 1)
	kind=$(sed -n 's/^pan:[0-9]*: \(.*\) (at depth.*/\1/p' "$out" | head -n 1)
	grep -qE 'max search depth too small|out of memory|reached -DMEMLIM' "$out" && incomplete=", search incomplete"
	if [ -z "$errors" ]; then
		outcome="no result"
		ok=0
	elif [ "$errors" = 0 ]; then
		outcome="no error"
		[ "$expect" = pass ] && [ -z "$incomplete" ] || ok=0
	else
		outcome="refuted: $kind"
		[ "$expect" = "${kind// /_}" ] || ok=0
	fi
	[ "$ok" = 1 ] && [ "$expect" != pass ] && outcome="$outcome (expected)"
	outcome="$outcome$incomplete"
	local verdict=ok
	[ "$ok" = 1 ] || verdict=UNEXPECTED
	printf '%-10s %-27s %-11s %-38s %10s states %4ss  %s\n' "$verdict" "$name" "$what" "$outcome" \
		"${states:-?}" "$secs" "$defs" >>"$d/result"
	if [ "$ok" != 1 ]; then
		local want=${expect//_/ }
		[ "$want" = pass ] && want="no error" || want="refuted: $want"
		echo "           expected: $want; pan's output: $out" >>"$d/result"
		[ -f "$d/$model.trail" ] && echo "           replay: cd $d && spin -t -p $defs $model" >>"$d/result"
		touch "$d/bad"
	fi
}

# Generate, build and run one verifier with all of its checks; ends by creating $d/done.
run_build() {
	local build=$1 model=$2 defs=$3 kind=$4 opt=$5 checks=$6
	local d="$work/$build"
	mkdir -p "$d"
	cp "$here"/*.pml "$d"/
	local panflags=("$opt" -DCOLLAPSE -DMEMLIM=2048)
	[ "$kind" = safety ] && panflags+=(-DSAFETY -DNOCLAIM)
	[ "$kind" = ltl ] && panflags+=(-DNFAIR=3) # wake.pml runs six processes
	local t0=$SECONDS
	# shellcheck disable=SC2086  # defs is a list of -D words
	if ! (cd "$d" && spin -a $defs "$model" >spin.out 2>&1); then
		printf 'ERROR      %-27s spin -a failed: %s\n' "$build" "$(grep -m 1 -i error "$d/spin.out")" >>"$d/result"
		touch "$d/bad" "$d/done"
		return
	fi
	if ! (cd "$d" && "$cc" "${panflags[@]}" -o pan pan.c >cc.out 2>&1); then
		printf 'ERROR      %-27s cannot build pan: %s\n' "$build" "$(head -n 1 "$d/cc.out")" >>"$d/result"
		touch "$d/bad" "$d/done"
		return
	fi
	local c name claim expect out what
	for c in $checks; do
		IFS=: read -r name claim expect <<<"$c"
		out="$d/$name.out"
		if [ "$kind" = safety ]; then
			(cd "$d" && ./pan -m200000 >"$out" 2>&1)
			what=safety
		else
			(cd "$d" && ./pan -m200000 -a -f -N "$claim" >"$out" 2>&1)
			what="ltl $claim"
		fi
		report "$d" "$name" "$what" "$defs" "$expect" "$out" "$((SECONDS - t0))" "$model"
		t0=$SECONDS
	done
	touch "$d/done"
}

echo "model-check: ${#builds[@]} verifiers, $par at a time; each line appears as its verifier finishes (the two largest take the longest)"
printf '%-10s %-27s %-11s %-38s %17s %5s  %s\n' "verdict" "check" "property" "outcome" "" "time" "spin options"
last=$SECONDS
flush() {
	# print every finished build's lines once, as soon as it is finished: progress, not list order
	local line b ndone=0 running=""
	for line in "${builds[@]}"; do
		b=${line%%|*}
		if [ -f "$work/$b/done" ]; then
			ndone=$((ndone + 1))
			if [ ! -f "$work/$b/printed" ]; then
				cat "$work/$b/result"
				touch "$work/$b/printed"
				last=$SECONDS
			fi
		elif [ -d "$work/$b" ]; then
			running="$running $b"
		fi
	done
	# and a heartbeat while the large searches run without finishing anything
	if [ $((SECONDS - last)) -ge 20 ]; then
		echo "model-check: $ndone of ${#builds[@]} verifiers done after $((SECONDS - start)) s; running:$running"
		last=$SECONDS
	fi
}
# wait until fewer than $1 verifiers run, printing as they finish
wait_below() {
	while [ "$(jobs -rp | wc -l)" -ge "$1" ]; do
		sleep 1
		flush
	done
}
start=$SECONDS
for line in "${builds[@]}"; do
	wait_below "$par"
	IFS='|' read -r build model defs kind opt checks <<<"$line"
	run_build "$build" "$model" "$defs" "$kind" "$opt" "$checks" &
	flush
done
wait_below 1
wait
flush

nchecks=0
for line in "${builds[@]}"; do
	nchecks=$((nchecks + $(wc -w <<<"${line##*|}")))
done
nbad=$(cat "$work"/*/result | grep -c '^UNEXPECTED\|^ERROR')
if [ "$nbad" -ne 0 ]; then
	echo "model-check: $nbad of $nchecks checks did not give the expected outcome ($((SECONDS - start)) s; files in $work)"
	exit 1
fi
echo "model-check: all $nchecks checks gave the expected outcome ($((SECONDS - start)) s)"
