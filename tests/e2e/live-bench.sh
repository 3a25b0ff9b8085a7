#!/usr/bin/env bash
# Wall time of a live `kubectl wmap describe` against the simulator, next to `kubectl get -o
# json` of the same object in the same run (perf-reliability target 7: describe <= 100 ms p50,
# patch <= 150 ms; a server dry run, so every run sends its PATCH).
#   bash tests/e2e/live-bench.sh            (needs build/kubectl-wmap, build/apiserver-sim;
#                                            uses hyperfine when installed, else a loop of 20)
#   BIG=1 bash tests/e2e/live-bench.sh      also the 2,000-pod JobSet of tests/bench/bigjob.py
#                                            next to kubectl get pods -l <its selector> -o json
set -euo pipefail
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$E2E_DIR/lib.sh"
e2e_init
source "$E2E_DIR/live-helpers.sh"
big_args=()
if [[ -n ${BIG:-} ]]; then
    python3 "$E2E_DIR/../bench/bigjob.py" "$E2E_TMP/big"
    big_args=(--load "$E2E_DIR/data/jobset-crd.yaml" --load "$E2E_TMP/big/big.json")
    export SIM_READY_SECS=120   # libyaml reads the 3 MB file in seconds on a busy machine
fi
live_setup "${big_args[@]}"
live_jobset_fixture
kubectl wmap describe jobset/train >/dev/null 2>&1   # warm the discovery cache, as a second run would be
runs=${RUNS:-20}
if command -v hyperfine >/dev/null 2>&1; then
    hyperfine -N --warmup 3 --runs "$runs" --export-json "$E2E_TMP/bench.json" \
        'kubectl get jobset train -o json' \
        'kubectl wmap describe jobset/train' \
        "$PLUGIN describe jobset/train" \
        "$PLUGIN describe jobset/train -o json" \
        "$PLUGIN patch jobset/train --label bench=yes --dry-run=server" \
        'kubectl wmap get jobsets' >&2
    jq -r '.results[] | "\(.command)\tmedian \(.median * 1000 | floor) ms\tmean \(.mean * 1000 | floor) ms\tmin \(.min * 1000 | floor) ms\tcpu (user+sys) \((.user + .system) * 1000 | floor) ms"' "$E2E_TMP/bench.json"
else
    for cmd in 'kubectl get jobset train -o json' 'kubectl wmap describe jobset/train'; do
        total=0
        for _ in $(seq "$runs"); do
            s=$(date +%s%N); $cmd >/dev/null 2>&1; e=$(date +%s%N)
            total=$((total + (e - s) / 1000))
        done
        echo "$cmd	mean $((total / runs / 1000)) ms"
    done
fi
if [[ -n ${BIG:-} ]]; then
    # Issue 16: describe of a 2,000-pod JobSet <= 1.5x kubectl get pods of the same pods.
    kubectl wmap describe jobset/big -n big >/dev/null
    hyperfine -N --warmup 1 --runs "${BIG_RUNS:-5}" \
        'kubectl get pods -n big -l jobset.sigs.k8s.io/jobset-name=big -o json' \
        "$PLUGIN describe jobset/big -n big" >&2
fi
# Peak RSS of one describe (target 7: <= 20 MB).
/usr/bin/time -f 'describe peak RSS %M KB' "$PLUGIN" describe jobset/train >/dev/null 2>"$E2E_TMP/rss" || true
grep 'peak RSS' "$E2E_TMP/rss"
