#!/usr/bin/env bash
# carry.sh - run the testbed on a machine that has neither this one's packages nor git (a lent
# many-core machine, a cluster's compute nodes): pack the programs here, run them there.
#
#   scripts/carry.sh pack [--no-sim] [DIR]
#                                      here: build the programs, copy them into DIR/bin (default
#                                      build/carry) with every shared library they load beyond
#                                      glibc and the C++ runtime into DIR/lib, and record in
#                                      DIR/SOURCE the commit they were built from (and whether the
#                                      tree was clean; a dirty tree is recorded as dirty and every
#                                      result then says so), and DIR.tar.xz of all that; --no-sim
#                                      builds them without the SimGrid executor (make NOSIM=1, in
#                                      build/nosim), which leaves out SimGrid's dozen libraries
#                                      (about 1 MB packed instead of 11), for machines that only
#                                      run natively
#   scripts/carry.sh run DIR CMD...    there (DIR.tar.xz is unpacked when DIR is missing): CMD with the carried libraries and the recorded
#                                      commit (SCHEDBED_SOURCE_SHA/_DIRTY, which schedbed's meta.json
#                                      and the sweep runner read when git is missing), e.g.
#     scripts/carry.sh run build/carry /usr/bin/python3 scripts/scale.py expand --schedbed build/carry/bin/schedbed --out results/scale-16
#     scripts/carry.sh run build/carry /usr/bin/python3 scripts/sweep.py run results/scale-16 --schedbed build/carry/bin/schedbed
#
# The sweep runner finds the peers beside schedbed (DIR/bin), so a manifest runs unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
PROGRAMS=(schedbed calibrate peers_omp peers_tbb patterns_omp patterns_tbb)

pack() {
	local b=build nosim=0
	if [ "${1:-}" = --no-sim ]; then
		b=build/nosim nosim=1
		shift
	fi
	local dir=${1:-build/carry}
	make --no-print-directory -s B=$b NOSIM=$nosim schedbed peers $b/release/calibrate >/dev/null
	rm -rf "$dir"
	mkdir -p "$dir/bin" "$dir/lib"
	local bins=()
	for p in "${PROGRAMS[@]}"; do
		cp $b/release/"$p" "$dir/bin/"
		bins+=("$dir/bin/$p")
	done
	# every library ldd resolves to a file, but the C library, the loader and the C++ runtime,
	# which any Linux machine of the same generation has
	for b in "${bins[@]}"; do ldd "$b"; done | awk '/=>/ && $3 ~ /^\// { print $3 }' | sort -u |
		grep -v -E '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s)\.so|/ld-linux' |
		while read -r lib; do cp -L "$lib" "$dir/lib/"; done
	local sha dirty=1
	sha=$(git rev-parse HEAD)
	[ -z "$(git status --porcelain)" ] && dirty=0
	printf 'SCHEDBED_SOURCE_SHA=%s\nSCHEDBED_SOURCE_DIRTY=%s\n' "$sha" "$dirty" >"$dir/SOURCE"
	# one compressed file travels better than 40 MB of libraries (run unpacks it when DIR is missing)
	tar -cJf "$dir.tar.xz" -C "$(dirname "$dir")" "$(basename "$dir")"
	echo "carry: $dir and $dir.tar.xz ($(du -sh "$dir.tar.xz" | cut -f1)), commit ${sha:0:12}$([ "$dirty" = 1 ] && echo ', DIRTY tree')"
}

run() {
	[ $# -ge 2 ] || { echo "usage: carry.sh run DIR CMD..." >&2; exit 2; }
	local dir=$1; shift
	[ -d "$dir" ] || [ ! -f "$dir.tar.xz" ] || tar -xJf "$dir.tar.xz" -C "$(dirname "$dir")"
	[ -f "$dir/SOURCE" ] || { echo "carry.sh: $dir/SOURCE missing: pack it with carry.sh pack $dir" >&2; exit 2; }
	set -a
	# shellcheck disable=SC1091
	. "$dir/SOURCE"
	set +a
	LD_LIBRARY_PATH="$(cd "$dir/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$@"
}

case "${1:-}" in
pack) shift; pack "$@" ;;
run) shift; run "$@" ;;
*) echo "usage: carry.sh pack [DIR] | carry.sh run DIR CMD..." >&2; exit 2 ;;
esac
