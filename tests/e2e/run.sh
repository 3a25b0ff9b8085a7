#!/usr/bin/env bash
# Runs every tests/e2e/scenarios/*.sh, each in its own bash process with its own simulator,
# prints PASS/FAIL per scenario and, last, "e2e: N passed, N failed".
#   SIM=path/to/apiserver-sim SIM_TESTHOOK=path/to/sim-testhook bash tests/e2e/run.sh [NAME...]
# E2E_VERBOSE=1 prints every scenario's output; E2E_KEEP=1 keeps the temporary directories.
set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$E2E_DIR/../.." && pwd)
export SIM=${SIM:-$REPO_ROOT/build/apiserver-sim}
export SIM_TESTHOOK=${SIM_TESTHOOK:-$REPO_ROOT/build/sim-testhook}
export PLUGIN=${PLUGIN:-$REPO_ROOT/build/kubectl-wmap}
export KUBECTL=${KUBECTL:-kubectl}
SCENARIO_TIMEOUT=${E2E_TIMEOUT:-180}

scenarios=()
if (($# > 0)); then
    for n in "$@"; do scenarios+=("$E2E_DIR/scenarios/${n%.sh}.sh"); done
else
    for f in "$E2E_DIR"/scenarios/*.sh; do [[ -e $f ]] && scenarios+=("$f"); done
fi

if ! command -v "$KUBECTL" >/dev/null 2>&1; then
    for f in "${scenarios[@]}"; do echo "SKIP $(basename "$f" .sh) (kubectl not found on PATH)"; done
    echo "every scenario was skipped: the end-to-end tests drive the real kubectl, which is not installed"
    echo "e2e: 0 passed, 0 failed, ${#scenarios[@]} skipped"
    exit 0
fi

passed=0
failed=0
skipped=0
logdir=$(mktemp -d "${TMPDIR:-/tmp}/wmap-e2e-logs.XXXXXX")
for f in "${scenarios[@]}"; do
    name=$(basename "$f" .sh)
    log=$logdir/$name.log
    start=$SECONDS
    # Each scenario gets its own process (and so its own EXIT trap and simulator).
    timeout --kill-after=10 "$SCENARIO_TIMEOUT" bash -c '
        set -euo pipefail
        source "$1"
        e2e_init
        source "$2"
    ' e2e "$E2E_DIR/lib.sh" "$f" >"$log" 2>&1
    rc=$?
    # A scenario that cannot run here (no ../shared, no Prometheus) says so on a line of its
    # own, "<name>: skipped: why", and exits 0: that line is shown instead of PASS.
    skip=$(grep -m 1 -o ': skipped: .*' "$log" || true)
    if ((rc == 0)) && [[ -n $skip ]]; then
        skipped=$((skipped + 1))
        echo "$name$skip"
    elif ((rc == 0)); then
        passed=$((passed + 1))
        echo "PASS $name ($((SECONDS - start))s)"
        [[ -n ${E2E_VERBOSE:-} ]] && sed 's/^/    /' "$log"
    else
        failed=$((failed + 1))
        ((rc == 124)) && echo "    (timed out after ${SCENARIO_TIMEOUT}s)" >>"$log"
        echo "FAIL $name ($((SECONDS - start))s)"
        tail -n 40 "$log" | sed 's/^/    /'
    fi
done
rm -rf "$logdir"
echo "e2e: $passed passed, $failed failed, $skipped skipped"
((failed == 0))
