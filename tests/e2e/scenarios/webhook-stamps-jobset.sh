# wmap-webhook behind the simulator's admission chain: the MutatingWebhookConfiguration of
# deploy/ (caBundle patched in as certs/README.md says), `kubectl create -f jobset.yaml`
# stores a JobSet whose every pod template carries the identity labels and the gang hints;
# user labels survive; a dry run is stamped and not stored; with the webhook stopped and
# failurePolicy Ignore the create still succeeds.
: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
[[ -x $WEBHOOK ]] || fail "webhook not built: $WEBHOOK"

webhook_certs wmap-system wmap-webhook
start_bg wmap-webhook "$E2E_TMP/webhook.ready" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port 0 \
    --ready-file "$E2E_TMP/webhook.ready" --gang-scheduler volcano --queue team-q
WH_PORT=$(head -n1 "$E2E_TMP/webhook.ready")
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"

run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 kc get jobsets
run_ok kc apply -f "$REPO_ROOT/deploy/base/08-mutatingwebhookconfiguration.yaml"
# deploy/ ships no rules; add the JobSet rule the running webhook would write.
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},{\"op\":\"add\",\"path\":\"/webhooks/0/rules\",\"value\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"jobset.x-k8s.io\"],\"apiVersions\":[\"v1alpha2\"],\"resources\":[\"jobsets\"],\"scope\":\"Namespaced\"}]}]"

run_ok kc create -f "$E2E_DIR/data/jobset-sample.yaml"
assert_contains "$OUT" "jobset.jobset.x-k8s.io/train created"
run_ok kc get jobset train -o json
stored=$OUT
for i in 0 1; do
    t=".spec.replicatedJobs[$i].template.spec.template"
    assert_eq JobSet.jobset.x-k8s.io "$(jq -r "$t.metadata.labels[\"wmap.io/workload-kind\"]" <<<"$stored")" "kind label on template $i"
    assert_eq train "$(jq -r "$t.metadata.labels[\"wmap.io/workload-name\"]" <<<"$stored")" "name label on template $i"
    assert_eq replicatedjob "$(jq -r "$t.metadata.labels[\"wmap.io/component\"]" <<<"$stored")" "component label on template $i"
    assert_eq volcano "$(jq -r "$t.spec.schedulerName" <<<"$stored")" "schedulerName on template $i"
    assert_eq train "$(jq -r "$t.metadata.annotations[\"scheduling.k8s.io/group-name\"]" <<<"$stored")" "volcano group on template $i"
    assert_eq team-q "$(jq -r "$t.metadata.annotations[\"scheduling.volcano.sh/queue-name\"]" <<<"$stored")" "volcano queue on template $i"
    assert_eq train "$(jq -r "$t.metadata.annotations[\"wmap.io/pod-group\"]" <<<"$stored")" "pod-group on template $i"
done
assert_eq driver "$(jq -r '.spec.replicatedJobs[0].template.spec.template.metadata.labels["wmap.io/instance"]' <<<"$stored")"
assert_eq workers "$(jq -r '.spec.replicatedJobs[1].template.spec.template.metadata.labels["wmap.io/instance"]' <<<"$stored")"
# min member: driver 1x1 + workers 2x4 pods
assert_eq 9 "$(jq -r '.spec.replicatedJobs[1].template.spec.template.metadata.annotations["wmap.io/pod-group-min-member"]' <<<"$stored")"
# what the user wrote survives
assert_eq driver "$(jq -r '.spec.replicatedJobs[0].template.spec.template.metadata.labels.role' <<<"$stored")" "user template label kept"
assert_eq ml "$(jq -r .metadata.labels.team <<<"$stored")" "user workload label kept"
assert_eq "python:3.12" "$(jq -r '.spec.replicatedJobs[0].template.spec.template.spec.containers[0].image' <<<"$stored")"
grep -q '"kind":"JobSet.jobset.x-k8s.io".*"result":"patched"' "$E2E_TMP/wmap-webhook.log" || fail "no patched log line"

# The same JobSet once more under another name: the webhook's patch applied to an already
# stamped object is empty (idempotent), and kubectl wmap mutate agrees offline.
jq '.metadata.name = "train-again" | del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.generation, .status)' <<<"$stored" \
    | jq '.spec.replicatedJobs[].template.spec.template.metadata.labels["wmap.io/workload-name"] = "train-again" | .spec.replicatedJobs[].template.spec.template.metadata.annotations["wmap.io/pod-group"] = "train-again" | .spec.replicatedJobs[].template.spec.template.metadata.annotations["scheduling.k8s.io/group-name"] = "train-again"' >"$E2E_TMP/again.json"
run_ok kc create -f "$E2E_TMP/again.json"
last=$(grep '"object":"default/train-again"' "$E2E_TMP/wmap-webhook.log" | tail -n1)
assert_contains "$last" '"result":"allowed"' "second admission of a stamped object"
assert_contains "$last" '"patchOps":0'

# Dry run: stamped in the answer, nothing stored, the webhook saw dryRun.
sed 's/name: train$/name: train-dry/' "$E2E_DIR/data/jobset-sample.yaml" >"$E2E_TMP/dry.yaml"
run_ok kc create -f "$E2E_TMP/dry.yaml" --dry-run=server -o json
assert_eq replicatedjob "$(jq -r '.spec.replicatedJobs[0].template.spec.template.metadata.labels["wmap.io/component"]' <<<"$OUT")"
assert_fails kc get jobset train-dry
grep -q '"object":"default/train-dry".*"dryRun":true' "$E2E_TMP/wmap-webhook.log" || fail "webhook did not see dryRun"

# The webhook stops (SIGTERM drains and exits 0); failurePolicy Ignore lets creates through.
kill -TERM "$wmap_webhook_PID"
wait "$wmap_webhook_PID" && rc=0 || rc=$?
assert_eq 0 "$rc" "webhook exit code after SIGTERM"
sed 's/name: train$/name: train-unstamped/' "$E2E_DIR/data/jobset-sample.yaml" >"$E2E_TMP/off.yaml"
run_ok kc create -f "$E2E_TMP/off.yaml"
run_ok kc get jobset train-unstamped -o json
assert_eq null "$(jq -r '.spec.replicatedJobs[0].template.spec.template.metadata.labels["wmap.io/component"]' <<<"$OUT")" "no stamp while the webhook is down"
