# kubectl wmap describe of a bigger JobSet, preloaded from tests/bench/bigjob.py (the inputs
# of `make bench BENCH_ONLY=big`, scaled down): 30 Jobs of 2 pods. The Jobs are listed once
# instead of fetched one by one, the pods in pages, the events in one request among 600
# events of other objects; nodes beyond six are counted, not listed.
source "$E2E_DIR/live-helpers.sh"
python3 "$REPO_ROOT/tests/bench/bigjob.py" "$E2E_TMP/big" --pods 60 --per-job 2 --events 600
live_setup --load "$E2E_DIR/data/jobset-crd.yaml" --load "$E2E_TMP/big/big.json" --load "$E2E_TMP/big/events.json"

: >"$E2E_TMP/requests.log"
run_ok kubectl wmap describe jobset/big -n big
assert_contains "$OUT" "\`-- replicatedjob                    60/60 ready   gpu: 480   8 nodes
    \`-- workers                      60/60 ready   gpu: 480   8 nodes"
assert_contains "$OUT" "Gang: 60/60 scheduled, 60/60 ready (min 60), admitted"
assert_not_contains "$OUT" "Problems:"
assert_eq 60 "$(grep -c ' big-workers-[0-9]*-[01]-' <<<"$OUT")" "pod rows"
log=$(cat "$E2E_TMP/requests.log")
assert_eq 1 "$(grep -c 'GET /apis/batch/v1/namespaces/big/jobs?limit=500' <<<"$log")" "one list of the Jobs"
assert_eq 0 "$(grep -c 'GET /apis/batch/v1/namespaces/big/jobs/' <<<"$log")" "no Job fetched on its own"
assert_eq 1 "$(grep -c '/api/v1/namespaces/big/events' <<<"$log")" "one events request"

# -o json has every node, the table counts them.
assert_eq 8 "$(kubectl wmap describe jobset/big -n big -o json 2>/dev/null | jq '.components[0].nodes | length')"

# Among 600 events of other pods, the JobSet's unschedulable pod's six FailedScheduling
# events (3 each) are one line.
run_ok kubectl wmap describe jobset/train -n noisy
assert_contains "$OUT" "  replicatedjob/workers: 1 of 4 pods not ready"
assert_contains "$OUT" "  FailedScheduling x18  Pod/train-workers-1-1-"
assert_eq 1 "$(grep -c 'FailedScheduling' <<<"$OUT")" "deduplicated"
