# Enforced policies: the ValidatingWebhookConfiguration of deploy/ denies a JobSet whose
# templates violate an enforced WorkloadPolicy, with a message naming policy, component and
# field; with the mutating webhook installed too, the same create is fixed by the mutation
# and passes validation.
: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
[[ -x $WEBHOOK ]] || fail "webhook not built: $WEBHOOK"

cat >"$E2E_TMP/policy.yaml" <<'Y'
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: prod-priority}
spec:
  match: {kinds: ["JobSet.jobset.x-k8s.io"], namespaces: [prod]}
  mode: override
  enforce: true
  podTemplate: {priorityClassName: high, labels: {tier: prod}}
Y
webhook_certs wmap-system wmap-webhook
start_bg wmap-webhook "$E2E_TMP/webhook.ready" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port 0 \
    --ready-file "$E2E_TMP/webhook.ready" --policy "$E2E_TMP/policy.yaml"
WH_PORT=$(head -n1 "$E2E_TMP/webhook.ready")
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"

run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 kc get jobsets
run_ok kc create -f - <<'Y'
apiVersion: v1
kind: Namespace
metadata: {name: prod}
Y
run_ok kc apply -f "$REPO_ROOT/deploy/base/09-validatingwebhookconfiguration.yaml"
# deploy/ ships no workload rules; add the JobSet rule the running webhook writes
# for an enforced policy that matches JobSets.
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},{\"op\":\"add\",\"path\":\"/webhooks/0/rules\",\"value\":[{\"operations\":[\"CREATE\",\"UPDATE\"],\"apiGroups\":[\"jobset.x-k8s.io\"],\"apiVersions\":[\"v1alpha2\"],\"resources\":[\"jobsets\"],\"scope\":\"Namespaced\"}]}]"

# Outside the policy's namespace: allowed.
run_ok kc create -f "$E2E_DIR/data/jobset-sample.yaml"
# In prod without the mutation: denied, and nothing stored.
assert_fails kc create -n prod -f "$E2E_DIR/data/jobset-sample.yaml"
assert_contains "$OUT" 'admission webhook "policies.wmap.io" denied the request'
assert_contains "$OUT" 'policy prod-priority: component replicatedjob (instance driver): priorityClassName must be "high"'
assert_contains "$OUT" 'label tier must be "prod"'
assert_fails kc get jobset train -n prod

# With the mutating webhook in front, the same manifest is made compliant and accepted.
run_ok kc apply -f "$REPO_ROOT/deploy/base/08-mutatingwebhookconfiguration.yaml"
# deploy/ ships no rules; add the JobSet rule the running webhook would write.
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},{\"op\":\"add\",\"path\":\"/webhooks/0/rules\",\"value\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"jobset.x-k8s.io\"],\"apiVersions\":[\"v1alpha2\"],\"resources\":[\"jobsets\"],\"scope\":\"Namespaced\"}]}]"
run_ok kc create -n prod -f "$E2E_DIR/data/jobset-sample.yaml"
run_ok kc get jobset train -n prod -o json
assert_eq high "$(jq -r '.spec.replicatedJobs[1].template.spec.template.spec.priorityClassName' <<<"$OUT")"
assert_eq prod "$(jq -r '.spec.replicatedJobs[1].template.spec.template.metadata.labels.tier' <<<"$OUT")"
grep -q '"endpoint":"validate".*"result":"denied"' "$E2E_TMP/wmap-webhook.log" || fail "no denied log line"
