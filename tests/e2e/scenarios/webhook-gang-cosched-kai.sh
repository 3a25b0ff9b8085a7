# Gang scheduling that really happens, with coscheduling and KAI (external mode), against the
# simulator serving the schedulers' real CRDs. A Trainer (brand-new CRD with a Karta) under a
# coscheduling policy gets a scheduling.x-k8s.io PodGroup (minMember 4, minResources, owned by
# it) and templates with the pod-group label and the coscheduling profile's schedulerName. A
# JobSet under KAI external mode gets a scheduling.run.ai/v2alpha2 PodGroup with one subgroup
# per replicated job (driver 1, workers 8), minSubGroup 2 and the queue, and templates that
# opt out of KAI's own pod-grouper and name the group and their subgroup. Scaling follows;
# KAI's queue on the live group is KAI's and is kept; deletion collects both groups.
source "$E2E_DIR/cluster-helpers.sh"
source "$E2E_DIR/gang-helpers.sh"

kubectl_apply_jobset() { run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"; wait_until 10 kc get jobsets -n team-a; }
gang_setup "$GANG_DATA/policy-cosched-kai.yaml" --coscheduling-profile gang-profile
kubectl_apply_jobset
wait_until 10 mwc_has jobset.x-k8s.io jobsets || fail "jobsets not in the webhook's rules"
CPG=podgroups.scheduling.x-k8s.io
KPG=podgroups.scheduling.run.ai

# coscheduling
run_ok kc create -f "$GANG_DATA/trainer.yaml"
wait_until 10 group_is $CPG t1 '.spec.minMember == 4' || fail "no coscheduling PodGroup: $(kc get $CPG -A -o json)"
pg=$(group_json $CPG t1)
assert_eq "$(kc get trainer t1 -n team-a -o jsonpath='{.metadata.uid}') true true" \
    "$(jq -r '.metadata.ownerReferences[0] | "\(.uid) \(.controller) \(.blockOwnerDeletion)"' <<<"$pg")" "owned by the Trainer"
assert_eq '{"cpu":"7","memory":"13Gi","nvidia.com/gpu":"3"}' "$(jq -c .spec.minResources <<<"$pg")"
assert_eq null "$(jq -r .spec.queue <<<"$pg")" "coscheduling has no queue"
tr=$(kc get trainer t1 -n team-a -o json)
for c in launcher worker; do
    assert_eq t1 "$(jq -r ".spec.$c.template.metadata.labels[\"scheduling.x-k8s.io/pod-group\"]" <<<"$tr")" "$c label"
    assert_eq gang-profile "$(jq -r ".spec.$c.template.spec.schedulerName" <<<"$tr")" "$c schedulerName: the coscheduling profile"
done
pod_from_template t1 .spec.launcher.template t1-launcher-0
assert_eq t1 "$(kc get pod t1-launcher-0 -n team-a -o jsonpath='{.metadata.labels.scheduling\.x-k8s\.io/pod-group}')" "the pod names the PodGroup"
run_ok kc patch trainer t1 -n team-a --type=merge -p '{"spec":{"worker":{"replicas":1}}}'
wait_until 10 group_is $CPG t1 '.spec.minMember == 2' || fail "coscheduling minimum did not follow the scale"

# KAI external mode
sed 's/^  name: train$/  name: train\n  namespace: team-a/' "$E2E_DIR/data/jobset-sample.yaml" >"$E2E_TMP/js.yaml"
run_ok kc create -f "$E2E_TMP/js.yaml"
wait_until 10 group_is $KPG train '.spec.minSubGroup == 2' || fail "no KAI PodGroup: $(kc get $KPG -A -o json)"
pg=$(group_json $KPG train)
assert_eq '[{"minMember":1,"name":"replicatedjob-driver"},{"minMember":8,"name":"replicatedjob-workers"}]' \
    "$(jq -c '.spec.subGroups | map({minMember, name})' <<<"$pg")" "one subgroup per replicated job"
assert_eq null "$(jq -r .spec.minMember <<<"$pg")" "minMember and minSubGroup are exclusive"
assert_eq team-a-leaf "$(jq -r .spec.queue <<<"$pg")"
assert_eq JobSet "$(jq -r '.metadata.ownerReferences[0].kind' <<<"$pg")"
js=$(kc get jobset train -n team-a -o json)
for i in 0 1; do
    t=".spec.replicatedJobs[$i].template.spec.template"
    assert_eq true "$(jq -r "$t.metadata.annotations[\"kai.scheduler/skip-podgrouper\"]" <<<"$js")" "KAI's pod-grouper kept off"
    assert_eq train "$(jq -r "$t.metadata.annotations[\"pod-group-name\"]" <<<"$js")"
    assert_eq kai-scheduler "$(jq -r "$t.spec.schedulerName" <<<"$js")"
done
assert_eq replicatedjob-workers "$(jq -r '.spec.replicatedJobs[1].template.spec.template.metadata.labels["kai.scheduler/subgroup-name"]' <<<"$js")"
# KAI owns the queue once the group exists: an edit of it is kept; the minimum follows scale.
run_ok kc patch $KPG train -n team-a --type=merge -p '{"spec":{"queue":"moved-by-kai"}}'
run_ok kc patch jobset train -n team-a --type=json -p '[{"op":"replace","path":"/spec/replicatedJobs/1/replicas","value":3}]'
wait_until 10 group_is $KPG train '.spec.subGroups[1].minMember == 12' || fail "KAI subgroup minimum did not follow: $(group_json $KPG train | jq -c .spec)"
assert_eq moved-by-kai "$(group_json $KPG train | jq -r .spec.queue)" "KAI's queue kept"

# A gang that can never form (startupPolicy InOrder under one gang): an admission warning
# and a Warning Event on the JobSet.
sed 's/^  name: train$/  name: inorder\n  namespace: team-a/; s/^spec:$/spec:\n  startupPolicy: {startupPolicyOrder: InOrder}/' \
    "$E2E_DIR/data/jobset-sample.yaml" >"$E2E_TMP/inorder.yaml"
run_ok kc create -f "$E2E_TMP/inorder.yaml"
assert_contains "$OUT" "Warning: gang: group inorder can never form: startupPolicy InOrder"
has_event() { kc get events -n team-a -o json | jq -e '.items[] | select(.reason == "GangCannotForm" and .involvedObject.name == "inorder" and .type == "Warning")' >/dev/null; }
wait_until 10 has_event || fail "no GangCannotForm event: $(kc get events -n team-a -o json | jq -c '[.items[] | {reason, message}]')"

run_ok kc delete trainer t1 -n team-a
run_ok kc delete jobset train -n team-a
wait_until 10 group_gone $CPG t1 || fail "coscheduling group outlived its Trainer"
wait_until 10 group_gone $KPG train || fail "KAI group outlived its JobSet"

# KAI Karta mode: install --check --gang-scheduler kai says, per Karta kind, whether KAI can
# gang it. The Trainer's Karta carries the labels (the leader's), but KAI's pod-grouper may
# not list trainers yet; once a ClusterRole grants it, the verdict is ok; a second Karta for
# the same kind and version is a failure of both (KAI would take neither).
plugin_on_path || fail "plugin not built"
kai_line() { kubectl wmap install --check --gang-scheduler kai 2>&1 | grep '^kai Trainer.example.com/v1' || true; }
assert_contains "$(kai_line)" "FAIL  Karta example-com-trainer-v1: system:serviceaccount:kai-scheduler:pod-grouper may not list trainers.example.com"
run_ok kc create namespace kai-scheduler
run_ok kc apply -f - <<'Y'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kai-trainers}
rules:
  - {apiGroups: [example.com], resources: [trainers], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kai-trainers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kai-trainers}
subjects: [{kind: ServiceAccount, name: pod-grouper, namespace: kai-scheduler}]
Y
assert_contains "$(kai_line)" "ok    KAI can gang it from Karta example-com-trainer-v1"
sed 's/name: example-com-trainer-v1$/name: trainer-copy/' "$GANG_DATA/trainer-karta.yaml" >"$E2E_TMP/copy.yaml"
run_ok kc create -f "$E2E_TMP/copy.yaml"
wait_until 10 bash -c "kubectl wmap install --check --gang-scheduler kai 2>&1 | grep -q '2 Kartas claim v1 Trainer'" \
    || fail "two Kartas for one kind not reported: $(kai_line)"
