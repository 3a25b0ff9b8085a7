#!/bin/sh
# Instructions per in-process admission review and per resolved component, counted with
# valgrind callgrind (exact, whatever the load of the machine), against ceilings: the guard
# that makes a change which doubles the cost of a review fail `make bench-guard` (part of
# `make check`). `make bench` prints the same figures with its whole table.
#
#   sh tests/bench/instructions.sh BUILD [OUT_DIR]
#
# BUILD holds bench/wmap-bench (an -O2 build: the ceilings are for it). Each ceiling is about
# twice the figure measured when it was set (tests/bench/README.md, "The guard"), so
# ordinary drift passes and a doubling does not. Without valgrind, or in a sanitizer build,
# it says so and skips.
set -eu
BIN=${1:-build}
OUT=${2:-$BIN/bench/guard}
TOOL=$BIN/bench/wmap-bench
SMALL=file:tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml
if ! command -v valgrind >/dev/null 2>&1; then
	echo "bench-guard: skipped: valgrind is not installed (apt-get install valgrind)"
	exit 0
fi
case $BIN in *-san*)
	echo "bench-guard: skipped: $BIN is a sanitizer build (valgrind cannot run it)"
	exit 0 ;;
esac
[ -x "$TOOL" ] || { echo "bench-guard: $TOOL is missing (make $TOOL)"; exit 1; }
mkdir -p "$OUT"

# Instructions per call inside function $2 of the command after it, $1 calls.
count() {
	calls=$1 toggle=$2
	shift 2
	if ! valgrind --tool=callgrind --callgrind-out-file="$OUT/last.cg" --toggle-collect="$toggle" \
		"$@" >"$OUT/last.out" 2>"$OUT/last.vg"; then
		echo "bench-guard: failed: $*" >&2
		cat "$OUT/last.vg" >&2
		exit 1
	fi
	total=$(sed -n 's/.*Collected : *//p' "$OUT/last.vg" | tr -d ' ')
	echo $((total / calls))
}

fail=0
# name, spec, calls, ceiling per review (wmap), ceiling of wmap / floor (x100)
review() {
	name=$1 spec=$2 calls=$3 ceil=$4 ratio_ceil=$5
	w=$(count "$calls" run_admit "$TOOL" admit "$spec" --calls "$calls")
	f=$(count "$calls" run_admit "$TOOL" admit "$spec" --null --calls "$calls")
	r=$((w * 100 / f))
	verdict=ok
	if [ "$w" -gt "$ceil" ] || [ "$r" -gt "$ratio_ceil" ]; then
		verdict="OVER (ceiling $ceil, ratio $((ratio_ceil / 100)).$((ratio_ceil % 100))x)"
		fail=1
	fi
	printf '%-9s review: %10d instructions, floor %10d, wmap/floor %d.%02dx  %s\n' \
		"$name" "$w" "$f" $((r / 100)) $((r % 100)) "$verdict"
}
# family, unit, small size, big size, ceiling per component
component() {
	fam=$1 unit=$2 n1=$3 n2=$4 ceil=$5
	a=$(count 50 run_resolve "$TOOL" resolve "$fam:$n1" --no-status --calls 50)
	b=$(count 2 run_resolve "$TOOL" resolve "$fam:$n2" --no-status --calls 2)
	per=$(((b - a) / (n2 - n1)))
	verdict=ok
	if [ "$per" -gt "$ceil" ]; then
		verdict="OVER (ceiling $ceil)"
		fail=1
	fi
	printf 'resolve without status, per %s (%s:%d - %s:%d): %d instructions  %s\n' \
		"$unit" "$fam" "$n2" "$fam" "$n1" "$per" "$verdict"
}

# Ceilings: twice the figures of tests/bench/README.md ("The guard"); the ratio's is what it
# would be if wmap's own work (wmap - floor) doubled, which a doubled total can hide where
# the parse dominates (large).
review small "$SMALL" 50 250000 171
review jobset64 jobset:64 5 4000000 191
review ray128 raycluster:128 3 5600000 199
review large large:450000 1 15100000 105
component jobset "replicated job" 1 100 15500
component raycluster "worker group" 1 50 16500
if [ $fail = 1 ]; then
	echo "bench-guard: FAILED: a figure is over its ceiling (callgrind files: $OUT)"
	exit 1
fi
echo "bench-guard: ok"
