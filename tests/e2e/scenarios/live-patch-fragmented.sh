# kubectl wmap patch of a workload whose definition spreads the pod spec over several fields
# (a fragmented pod spec: LLMInferenceService v1alpha2): labels go to the labels path,
# schedulerName to its own path, and optional parts the object does not have (worker,
# prefill) are not created.
source "$E2E_DIR/live-helpers.sh"
live_setup
grep -v -e '^  uid:' -e '^  resourceVersion:' -e '^  namespace:' -e '^  generation:' -e '^  creationTimestamp:' \
    "$REPO_ROOT/tests/fixtures/serving-kserve-io-llminferenceservice-v1alpha2/running.yaml" |
    sed '/^status:/,$d' | kc create -f - >/dev/null
run_ok kubectl wmap patch llmisvc/qwen2-7b --label wmap.io/team=llm --scheduler-name kai-scheduler --priority-class gold
run_ok kc get llminferenceservice qwen2-7b -o json
obj=$OUT
assert_eq llm "$(jq -r '.spec.labels["wmap.io/team"]' <<<"$obj")" "labels path"
assert_eq llm "$(jq -r '.spec.labels.team' <<<"$obj")" "existing labels kept"
assert_eq kai-scheduler "$(jq -r '.spec.template.schedulerName' <<<"$obj")" "schedulerName path"
assert_eq gold "$(jq -r '.spec.template.priorityClassName' <<<"$obj")"
assert_eq null "$(jq -r '.spec.worker' <<<"$obj")" "absent parts are not created"
assert_eq null "$(jq -r '.spec.prefill' <<<"$obj")"
run_ok kubectl wmap describe llmisvc qwen2-7b
assert_contains "$OUT" "LLMInferenceService/qwen2-7b"
