#!/bin/sh
# Instruction profiles (valgrind callgrind: exact counts, unaffected by a busy machine) of
# the paths behind the benchmark figures. `make bench-profile`, or
#   sh tests/bench/profile.sh BENCH_BUILD OUT_DIR
# For each case: OUT_DIR/NAME.cg (open with callgrind_annotate or kcachegrind) and NAME.txt
# (instructions per call, then the top functions inclusive and exclusive).
# perf is used instead when hardware counters work (`perf stat -e instructions true`); on
# most VMs they do not, hence callgrind.
set -eu
BIN=${1:-build-bench}
OUT=${2:-build/bench/profile}
TOOL=$BIN/bench/wmap-bench
SMALL=file:tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml
mkdir -p "$OUT"
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)"; exit 1; }

# name | calls | toggle function | command...
profile() {
	name=$1 calls=$2 toggle=$3
	shift 3
	cg="$OUT/$name.cg"
	if [ "$toggle" = - ]; then
		valgrind --tool=callgrind --callgrind-out-file="$cg" "$@" >/dev/null 2>"$OUT/$name.vg"
	else
		valgrind --tool=callgrind --callgrind-out-file="$cg" --toggle-collect="$toggle" \
			"$@" >/dev/null 2>"$OUT/$name.vg"
	fi
	total=$(sed -n 's/.*Collected : *//p' "$OUT/$name.vg" | tr -d ' ')
	{
		echo "# $name: $*"
		echo "instructions: $total in $calls call(s) = $((total / calls)) per call"
		echo
		echo "## inclusive (wmap functions and the libraries they call)"
		callgrind_annotate --inclusive=yes "$cg" 2>/dev/null | sed -n '/file:function/,$p' |
			grep -v -e '???:0x' -e 'libc-start' -e 'below main' -e 'dl-trampoline' | sed -n 3,40p
		echo
		echo "## exclusive"
		callgrind_annotate "$cg" 2>/dev/null | sed -n '/file:function/,$p' | sed -n 3,25p
	} >"$OUT/$name.txt"
	echo "$name: $((total / calls)) instructions per call ($OUT/$name.txt)"
}

profile admit-small 200 run_admit "$TOOL" admit "$SMALL" --calls 200
profile admit-small-floor 200 run_admit "$TOOL" admit "$SMALL" --null --calls 200
profile admit-jobset64 20 run_admit "$TOOL" admit jobset:64 --calls 20
profile admit-jobset64-floor 20 run_admit "$TOOL" admit jobset:64 --null --calls 20
profile admit-ray128 10 run_admit "$TOOL" admit raycluster:128 --calls 10
profile admit-ray128-floor 10 run_admit "$TOOL" admit raycluster:128 --null --calls 10
profile resolve-jobset100-nostatus 20 run_resolve "$TOOL" resolve jobset:100 --no-status --calls 20
profile resolve-jobset1000-nostatus 2 run_resolve "$TOOL" resolve jobset:1000 --no-status --calls 2
profile resolve-jobset100-status 5 run_resolve "$TOOL" resolve jobset:100 --calls 5
profile resolve-jobset1000-status 1 run_resolve "$TOOL" resolve jobset:1000 --calls 1
profile describe-f 1 - "$BIN/kubectl-wmap" describe -f tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml
