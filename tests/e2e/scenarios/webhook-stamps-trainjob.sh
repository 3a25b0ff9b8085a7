# wmap-webhook and a TrainJob, which holds no pod template: `kubectl create` stores it with a
# .spec.runtimePatches entry of manager wmap.io/webhook whose node job's pod template carries
# the identity labels (what the Trainer controller merges into the JobSet it builds). The
# entry survives the CRD's pruning; another manager's entry (Kueue's) stays first and
# unchanged; the stored object is stamped already (kubectl wmap mutate on it writes nothing).
: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
[[ -x $WEBHOOK ]] || fail "webhook not built: $WEBHOOK"

webhook_certs wmap-system wmap-webhook
start_bg wmap-webhook "$E2E_TMP/webhook.ready" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port 0 \
    --ready-file "$E2E_TMP/webhook.ready"
WH_PORT=$(head -n1 "$E2E_TMP/webhook.ready")
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"

run_ok kc apply -f "$E2E_DIR/data/trainjob-crd.yaml"
wait_until 10 kc get trainjobs
run_ok kc apply -f "$REPO_ROOT/deploy/base/08-mutatingwebhookconfiguration.yaml"
# deploy/ ships no rules; add the TrainJob rule the running webhook would write.
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},{\"op\":\"add\",\"path\":\"/webhooks/0/rules\",\"value\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"trainer.kubeflow.org\"],\"apiVersions\":[\"v1alpha1\"],\"resources\":[\"trainjobs\"],\"scope\":\"Namespaced\"}]}]"

mine='.spec.runtimePatches[] | select(.manager == "wmap.io/webhook")'
node='.trainingRuntimeSpec.template.spec.replicatedJobs[] | select(.name == "node") | .template.spec.template.metadata.labels'

run_ok kc create -f "$E2E_DIR/data/trainjob-sample.yaml"
assert_contains "$OUT" "trainjob.trainer.kubeflow.org/sft created"
run_ok kc get trainjob sft -o json
stored=$OUT
assert_eq 1 "$(jq '.spec.runtimePatches | length' <<<"$stored")" "one runtime patch"
assert_eq TrainJob.trainer.kubeflow.org "$(jq -r "$mine | $node | .[\"wmap.io/workload-kind\"]" <<<"$stored")" "kind label"
assert_eq sft "$(jq -r "$mine | $node | .[\"wmap.io/workload-name\"]" <<<"$stored")" "name label"
assert_eq node "$(jq -r "$mine | $node | .[\"wmap.io/component\"]" <<<"$stored")" "component label"
assert_eq ml "$(jq -r .metadata.labels.team <<<"$stored")" "user label kept"
grep -q '"kind":"TrainJob.trainer.kubeflow.org".*"result":"patched"' "$E2E_TMP/wmap-webhook.log" || fail "no patched log line"
# Stamped already: the offline mutate of the stored object writes nothing.
printf '%s\n' "$stored" >"$E2E_TMP/stored.json"
run_ok "$PLUGIN" mutate -f "$E2E_TMP/stored.json"
assert_eq "[]" "$(jq -c . <<<"$OUT")" "second pass is empty"

# Kueue's webhook seeds an entry of its own on create: wmap's goes after it.
jq '.metadata.name = "sft-queued" | .spec.suspend = true | .spec.runtimePatches = [{"manager": "kueue.x-k8s.io/manager", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {"nodeSelector": {"instance-type": "on-demand"}}}}}}]}}}}]' \
    <(kc create -f "$E2E_DIR/data/trainjob-sample.yaml" --dry-run=client -o json) >"$E2E_TMP/queued.json"
run_ok kc create -f "$E2E_TMP/queued.json"
run_ok kc get trainjob sft-queued -o json
assert_eq 2 "$(jq '.spec.runtimePatches | length' <<<"$OUT")" "two runtime patches"
assert_eq kueue.x-k8s.io/manager "$(jq -r '.spec.runtimePatches[0].manager' <<<"$OUT")" "Kueue's entry first"
assert_eq on-demand "$(jq -r '.spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec.nodeSelector["instance-type"]' <<<"$OUT")" "Kueue's entry unchanged"
assert_eq sft-queued "$(jq -r ".spec.runtimePatches[1] | $node | .[\"wmap.io/workload-name\"]" <<<"$OUT")" "wmap's entry second"
