# kubectl wmap describe of a live JobSet: its Jobs and Pods (one unschedulable) attributed
# through controller owner references, placed by the definition's podSelector, checked
# against a golden file; then -o json, --pod-limit, and the TYPE spellings kubectl accepts.
source "$E2E_DIR/live-helpers.sh"
live_setup
kc create -f "$LIVE_DATA/jobset.yaml" >/dev/null
js_uid=$(live_uid jobset train)
jobs=()
for j in driver-0 workers-0 workers-1; do
    jobs+=("$(jq -cn --arg n "train-$j" --argjson r "$(live_ref jobset.x-k8s.io/v1alpha2 JobSet train "$js_uid")" \
        '{apiVersion:"batch/v1", kind:"Job", metadata:{name:$n, ownerReferences:[$r]},
          spec:{template:{spec:{restartPolicy:"Never", containers:[{name:"main", image:"busybox"}]}}}}')")
done
live_create "${jobs[@]}"
pods=()
pod_of() { # POD JOB RJOB INDEX NODE GPU
    local ref labels
    ref=$(live_ref batch/v1 Job "$2" "$(live_uid job "$2")")
    labels=$(jq -cn --arg r "$3" --arg i "$4" '{"jobset.sigs.k8s.io/jobset-name":"train",
        "jobset.sigs.k8s.io/replicatedjob-name":$r, "jobset.sigs.k8s.io/job-index":$i}')
    pods+=("$(live_pod "$1" "$ref" "$labels" '{}' "$5" "$6")")
}
pod_of train-driver-0-0-x7k2p train-driver-0 driver 0 node-a 0
pod_of train-workers-0-0-b5n8q train-workers-0 workers 0 node-b 1
pod_of train-workers-0-1-c9m4r train-workers-0 workers 0 node-b 1
pod_of train-workers-1-0-d2h6s train-workers-1 workers 1 node-c 1
pod_of train-workers-1-1-f4j8t train-workers-1 workers 1 "" 1
# A pod with the JobSet's labels that no controller of this JobSet owns: not shown.
pods+=("$(jq -cn '{apiVersion:"v1", kind:"Pod", metadata:{name:"impostor",
    labels:{"jobset.sigs.k8s.io/jobset-name":"train","jobset.sigs.k8s.io/replicatedjob-name":"workers"}},
    spec:{containers:[{name:"c", image:"busybox"}]}}')")
live_create "${pods[@]}"
live_status train-driver-0-0-x7k2p Running True
live_status train-workers-0-0-b5n8q Running True
live_status train-workers-0-1-c9m4r Running True
live_status train-workers-1-0-d2h6s Running True
live_status train-workers-1-1-f4j8t Pending False Unschedulable
sim_curl PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/train/status \
    -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"status":{"replicatedJobsStatus":[{"name":"driver","ready":1},{"name":"workers","ready":1}]}}' >/dev/null

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
run_ok kubectl wmap describe jobset/train -o yaml
assert_contains "$OUT" "definition:"

# --pod-limit keeps the unhealthy pod.
run_ok kubectl wmap describe jobset/train --pod-limit 1
assert_contains "$OUT" "train-workers-1-1-f4j8t"
assert_contains "$OUT" "and 3 more (1 unhealthy shown)"
