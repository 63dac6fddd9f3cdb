#!/usr/bin/env bash
# run.sh VARIANT BINARY - proves a sanitizer build is live: every planted bug in canary.c that
# VARIANT's sanitizers should catch must end the program non-zero with the sanitizer's own report
# line. Run with the same *SAN_OPTIONS as the stress runs (the Makefile exports them).
set -uo pipefail
variant=$1 bin=$2
case $variant in
asan) cases=("overflow|runtime error: signed integer overflow"
	     "misaligned|runtime error: member access within misaligned address"
	     "heap|ERROR: AddressSanitizer: heap-buffer-overflow"
	     "leak|ERROR: LeakSanitizer: detected memory leaks") ;;
tsan) cases=("race|WARNING: ThreadSanitizer: data race") ;;
*) echo "run.sh: unknown variant '$variant'; valid variants are asan, tsan" >&2; exit 2 ;;
esac
fails=0
for c in "${cases[@]}"; do
	mode=${c%%|*} want=${c#*|}
	out=$("$bin" "$mode" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qF "$want" <<<"$out"; then
		echo "ok   canary $variant $mode: exit $rc, \"$want\""
	else
		echo "FAIL canary $variant $mode: exit $rc, no \"$want\" in:"
		sed 's/^/    /' <<<"$out" | head -5
		fails=$((fails + 1))
	fi
done
exit $((fails > 0))
