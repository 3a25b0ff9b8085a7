# kubectl wmap describe of a live JobSet: its Jobs and Pods (one unschedulable) attributed
# through controller owner references, placed by the definition's podSelector, checked
# against a golden file; then -o json, --pod-limit, and the TYPE spellings kubectl accepts.
source "$E2E_DIR/live-helpers.sh"
live_setup
live_jobset_fixture

kubectl wmap describe jobset/train >"$E2E_TMP/out" 2>"$E2E_TMP/err" || fail "describe failed: $(cat "$E2E_TMP/err")"
live_norm <"$E2E_TMP/out" >"$E2E_TMP/out.norm"
diff -u "$E2E_DIR/golden/live-describe-jobset.out" "$E2E_TMP/out.norm" || fail "describe output differs from the golden file"
assert_contains "$(cat "$E2E_TMP/err")" "the kartas.run.ai CRD is not installed; showing built-in definitions only"
assert_not_contains "$(cat "$E2E_TMP/out")" "impostor" "pods are attributed by owner references, not labels"

# Every spelling kubectl accepts resolves to the same object.
for t in "jobset train" "JobSet/train" "jobsets.jobset.x-k8s.io/train" "jobset.v1alpha2.jobset.x-k8s.io train" "JobSet.v1alpha2.jobset.x-k8s.io/train"; do
    # shellcheck disable=SC2086
    run_ok kubectl wmap describe $t
    assert_contains "$OUT" "JobSet/train   namespace: default" "describe $t"
done

# -o json: the same tree as data.
json=$(kubectl wmap describe jobset/train -o json 2>/dev/null) || fail "describe -o json"
assert_eq '{"desired":5,"current":5,"ready":4}' "$(jq -c .replicas <<<"$json")" "workload replicas"
assert_eq "Pending Unschedulable" "$(jq -r '.components[0].instances[1].pods[] | select(.ready|not) | "\(.phase) \(.reason)"' <<<"$json")"
assert_eq null "$(jq -r '.components[0].instances[1].pods[] | select(.ready|not) | .node' <<<"$json")"
run_ok kubectl wmap describe jobset/train -o json
# One shape for the file and the live form: the same keys at every level (README.md,
# "describe -o json"), a file filling what it cannot know with null.
keys='[paths | map(if type == "number" then "[]" else . end) | join(".")] | map(select(test("events|gang\\.|nodes\\.|pods\\.|\\.kind\\.|^definition\\.|resources\\.|replicas\\.") | not)) | unique'
run_ok kubectl get jobset train -o json
file_json=$(kubectl wmap describe -f - -o json <<<"$OUT" 2>/dev/null) || fail "describe -f -o json"
assert_eq "$(jq -c "$keys" <<<"$json")" "$(jq -c "$keys" <<<"$file_json")" "describe -f and describe TYPE/NAME: one shape"
assert_eq '{"desired":5,"current":null,"ready":null}' "$(jq -c .replicas <<<"$file_json")" "file mode: counts it cannot know are null"
run_ok kubectl wmap describe jobset/train -o yaml
assert_contains "$OUT" "definition:"

# --pod-limit keeps the unhealthy pod.
run_ok kubectl wmap describe jobset/train --pod-limit 1
assert_contains "$OUT" "train-workers-1-1-f4j8t"
assert_contains "$OUT" "and 3 more (1 unhealthy shown)"
