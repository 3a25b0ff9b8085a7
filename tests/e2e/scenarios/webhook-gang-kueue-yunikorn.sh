# Kueue and YuniKorn need no group object; what they need is on the templates, stamped at
# admission (real kubectl, the simulator calling the webhook):
# - Kueue, a kind it has no integration for (a Trainer): every template carries the queue,
#   the pod group's name and its total count (the pods that will exist: 1 + 3), so Kueue's
#   pod integration admits the pods as one group; a JobSet (integrated) only the root's queue
#   label;
# - YuniKorn: two Trainers of one name in two namespaces get different application IDs, the
#   same on all their templates, the same full task-groups on every template, and the
#   policy's Hard style.
source "$E2E_DIR/cluster-helpers.sh"
source "$E2E_DIR/gang-helpers.sh"

gang_setup "$GANG_DATA/policy-kueue-yunikorn.yaml"
run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 mwc_has jobset.x-k8s.io jobsets || fail "jobsets not in the webhook's rules"
run_ok kc create namespace kueue
run_ok kc create namespace team-b

sed 's/namespace: team-a$/namespace: kueue/' "$GANG_DATA/trainer.yaml" >"$E2E_TMP/tk.yaml"
run_ok kc create -f "$E2E_TMP/tk.yaml"
tr=$(kc get trainer t1 -n kueue -o json)
for c in launcher worker; do
    m=".spec.$c.template.metadata"
    assert_eq lq-a "$(jq -r "$m.labels[\"kueue.x-k8s.io/queue-name\"]" <<<"$tr")" "$c queue"
    assert_eq t1 "$(jq -r "$m.labels[\"kueue.x-k8s.io/pod-group-name\"]" <<<"$tr")" "$c pod group"
    assert_eq 4 "$(jq -r "$m.annotations[\"kueue.x-k8s.io/pod-group-total-count\"]" <<<"$tr")" "$c total count: the pods that will exist"
done
sed 's/^  name: train$/  name: train\n  namespace: kueue/' "$E2E_DIR/data/jobset-sample.yaml" >"$E2E_TMP/js.yaml"
run_ok kc create -f "$E2E_TMP/js.yaml"
js=$(kc get jobset train -n kueue -o json)
assert_eq lq-a "$(jq -r '.metadata.labels["kueue.x-k8s.io/queue-name"]' <<<"$js")" "JobSet: the root's queue label"
assert_eq null "$(jq -r '.spec.replicatedJobs[0].template.spec.template.metadata.labels["kueue.x-k8s.io/pod-group-name"]' <<<"$js")" "JobSet: no pod-group keys (Kueue integrates JobSet)"

run_ok kc create -f "$GANG_DATA/trainer.yaml"
sed 's/namespace: team-a$/namespace: team-b/' "$GANG_DATA/trainer.yaml" >"$E2E_TMP/tb.yaml"
run_ok kc create -f "$E2E_TMP/tb.yaml"
ids=()
for ns in team-a team-b; do
    tr=$(kc get trainer t1 -n "$ns" -o json)
    a=$(jq -r '.spec.launcher.template.metadata.labels["yunikorn.apache.org/app-id"]' <<<"$tr")
    assert_eq "$a" "$(jq -r '.spec.worker.template.metadata.labels["yunikorn.apache.org/app-id"]' <<<"$tr")" "$ns: one app ID on every template"
    assert_eq "$(jq -r '.spec.launcher.template.metadata.annotations["yunikorn.apache.org/task-groups"]' <<<"$tr")" \
        "$(jq -r '.spec.worker.template.metadata.annotations["yunikorn.apache.org/task-groups"]' <<<"$tr")" "$ns: the same task-groups everywhere"
    assert_eq '[{"name":"launcher","minMember":1,"minResource":{"cpu":"1","memory":"1Gi"}},{"name":"worker","minMember":3,"minResource":{"cpu":"2","memory":"4Gi","nvidia.com/gpu":"1"}}]' \
        "$(jq -c '.spec.worker.template.metadata.annotations["yunikorn.apache.org/task-groups"] | fromjson' <<<"$tr")" "$ns: task groups with each member's requests"
    assert_eq gangSchedulingStyle=Hard "$(jq -r '.spec.worker.template.metadata.annotations["yunikorn.apache.org/schedulingPolicyParameters"]' <<<"$tr")"
    ids+=("$a")
done
assert_eq "team-a-t1 team-b-t1" "${ids[*]}" "one application per workload, not per name"
