# WorkloadPolicy objects from the cluster merge with the --policy file: the file's policies in
# file order, a cluster object replacing the file policy of the same name in place, then the
# cluster's other policies by name. A policy that does not parse is skipped (logged, counted);
# the others stay in force. Deleting the cluster object brings the file's policy back; an
# enforced cluster policy is enforced at /validate. Checked with AdmissionReviews of the
# JobSet sample sent to the webhook.
source "$E2E_DIR/cluster-helpers.sh"

cluster_setup
run_ok kc apply -f "$CLUSTER_DATA/workloadpolicy-crd.yaml"
wait_until 10 kc get workloadpolicies
cp "$CLUSTER_DATA/policies-file.yaml" "$E2E_TMP/policies.yaml"
cluster_webhook_start --policy "$E2E_TMP/policies.yaml" --sync-timeout 30
wait_until 10 metric_is wmap_webhook_cluster_synced 1 || fail "not synced"
review_file "$E2E_DIR/data/jobset-sample.yaml" "$E2E_TMP/review.json"
label() { jq -r --arg k "$1" '[.[] | select(.path | test("/labels(/" + $k + ")?$")) | (if (.value | type) == "object" then .value[$k] else .value end)] | map(select(. != null)) | first // "none"' <<<"$patch"; }

patch=$(wh_patch mutate "$E2E_TMP/review.json")
assert_eq from-file "$(label team)" "file policy before any cluster policy"
assert_eq file "$(label source)"

policies=$(wh_metric wmap_webhook_policy_swaps_total)
run_ok kc apply -f "$CLUSTER_DATA/policies-cluster.yaml"
wait_until 10 metric_is 'wmap_webhook_cluster_objects{resource="workloadpolicies"}' 2 || fail "cluster policies not taken up"
assert_eq 1 "$(wh_metric 'wmap_webhook_invalid_objects{resource="workloadpolicies",reason="invalid"}')" "the typo counted"
grep -q '"name":"typo".*podTemplates' "$E2E_TMP/wmap-webhook.log" || fail "the typo was not logged with the parser's message"
patch=$(wh_patch mutate "$E2E_TMP/review.json")
assert_eq from-cluster "$(label team)" "the cluster object replaces the file policy of the same name"
assert_eq file "$(label source)" "the file's other policy stays"
assert_eq cluster "$(label origin)" "the cluster's own policy applies"

# The policy file changes: merged again with the cluster's.
sed 's/source: file/source: file-v2/' "$CLUSTER_DATA/policies-file.yaml" >"$E2E_TMP/policies.new"
mv "$E2E_TMP/policies.new" "$E2E_TMP/policies.yaml"
wait_until 10 bash -c "curl -sk --noproxy '*' --data-binary @$E2E_TMP/review.json https://127.0.0.1:$WH_PORT/mutate | jq -r .response.patch | base64 -d | grep -q file-v2" \
    || fail "the changed file was not merged"
patch=$(wh_patch mutate "$E2E_TMP/review.json")
assert_eq from-cluster "$(label team)" "still the cluster's after the file changed"

run_ok kc delete workloadpolicy team-labels
wait_until 10 metric_is 'wmap_webhook_cluster_objects{resource="workloadpolicies"}' 1 || fail "deletion not taken up"
patch=$(wh_patch mutate "$E2E_TMP/review.json")
assert_eq from-file "$(label team)" "the file's policy is back"

# An enforced policy from the cluster: /validate denies a JobSet without the priority class.
run_ok kc apply -f "$CLUSTER_DATA/policy-enforced.yaml"
wait_until 10 metric_is 'wmap_webhook_cluster_objects{resource="workloadpolicies"}' 2 || fail "enforced policy not taken up"
out=$(wh_patch validate "$E2E_TMP/review.json")
assert_eq false "$(jq -r .response.allowed <<<"$out")" "denied by the cluster's enforced policy"
assert_contains "$(jq -r .response.status.message <<<"$out")" "policy jobsets-need-priority"
