# Validation actions through the real kubectl: a Warn policy's violation is admitted and
# kubectl apply prints one warning per violation; a Deny policy's is refused with the message;
# an Audit policy's is admitted silently and counted in wmap_policy_violations. Then
# `kubectl wmap audit` lists what is stored, live (-A, -n, --kind) with the cluster's
# WorkloadPolicy objects and with --policy FILE. Only the validating webhook is registered,
# so nothing fixes the objects first.
: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
[[ -x $WEBHOOK ]] || fail "webhook not built: $WEBHOOK"
source "$E2E_DIR/cluster-helpers.sh"

cat >"$E2E_TMP/policy.yaml" <<'Y'
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: staging-team}
spec:
  match: {kinds: ["JobSet.jobset.x-k8s.io"], namespaces: [staging]}
  mode: override
  validationActions: [Warn]
  podTemplate: {labels: {team: platform}}
---
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: prod-priority}
spec:
  match: {kinds: ["JobSet.jobset.x-k8s.io"], namespaces: [prod]}
  mode: override
  validationActions: [Deny]
  podTemplate: {priorityClassName: high}
---
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: gpu-runtime}
spec:
  match: {namespaces: [staging]}
  validationActions: [Audit]
  podTemplate: {runtimeClassName: nvidia}
Y
webhook_certs wmap-system wmap-webhook
start_bg wmap-webhook "$E2E_TMP/webhook.ready" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port 0 \
    --ready-file "$E2E_TMP/webhook.ready" --policy "$E2E_TMP/policy.yaml"
WH_PORT=$(head -n1 "$E2E_TMP/webhook.ready")
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"
plugin_on_path || fail "plugin not built: $PLUGIN"

run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 kc get jobsets
for ns in staging prod; do run_ok kc create namespace "$ns"; done
run_ok kc apply -f "$REPO_ROOT/deploy/base/09-validatingwebhookconfiguration.yaml"
# deploy/ ships no workload rules; add the JobSet rule the running webhook writes.
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},{\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},{\"op\":\"add\",\"path\":\"/webhooks/0/rules\",\"value\":[{\"operations\":[\"CREATE\",\"UPDATE\"],\"apiGroups\":[\"jobset.x-k8s.io\"],\"apiVersions\":[\"v1alpha2\"],\"resources\":[\"jobsets\"],\"scope\":\"Namespaced\"}]}]"

# Warn: stored, and kubectl prints a warning per violation (label team on both templates;
# the JobSet's own team: ml label is not its templates').
run_ok kc apply -n staging -f "$E2E_DIR/data/jobset-sample.yaml"
assert_contains "$OUT" 'Warning: policy staging-team: component replicatedjob (instance driver): label team must be "platform" (not set)'
assert_contains "$OUT" 'Warning: policy staging-team: component replicatedjob (instance workers): label team must be "platform" (not set)'
assert_not_contains "$OUT" "gpu-runtime"
assert_contains "$OUT" "jobset.jobset.x-k8s.io/train created"
run_ok kc get jobset train -n staging
# Audit (gpu-runtime on the same JobSet): admitted silently, counted.
[[ "$(wh_metric 'wmap_policy_violations{policy="gpu-runtime",action="audit",namespace="staging"}')" == 1 ]] ||
    fail "the Audit violation is not counted: $(wh_get /metrics | grep wmap_policy_violations)"
[[ "$(wh_metric 'wmap_policy_violations{policy="staging-team",action="warn",namespace="staging"}')" == 1 ]] ||
    fail "the Warn violation is not counted"

# Deny: refused with the message, nothing stored.
assert_fails kc apply -n prod -f "$E2E_DIR/data/jobset-sample.yaml"
assert_contains "$OUT" 'admission webhook "policies.wmap.io" denied the request: policy prod-priority: component replicatedjob (instance driver): priorityClassName must be "high" (not set)'
assert_fails kc get jobset train -n prod
# ... and a compliant one is admitted without a warning.
sed 's/restartPolicy: Never/restartPolicy: Never\n            priorityClassName: high/' "$E2E_DIR/data/jobset-sample.yaml" >"$E2E_TMP/prod.yaml"
run_ok kc apply -n prod -f "$E2E_TMP/prod.yaml"
assert_not_contains "$OUT" "Warning"

# The live audit with the policy file: the stored staging JobSet's violations, Warn and Audit.
rc=0
OUT=$(kubectl wmap audit -A --policy "$E2E_TMP/policy.yaml" 2>"$E2E_TMP/audit.err") || rc=$?
assert_eq 1 "$rc" "a Warn policy is violated: exit 1"
assert_eq "WORKLOAD COMPONENT POLICY ACTIONS FIELD WANT HAVE" "$(head -n1 <<<"$OUT" | tr -s ' ')"
assert_contains "$OUT" "JobSet/staging/train"
assert_eq 2 "$(grep -c 'staging-team *Warn *labels\[team\] *platform' <<<"$OUT")" "one row per template"
assert_eq 2 "$(grep -c 'gpu-runtime *Audit *runtimeClassName *nvidia *<none>' <<<"$OUT")"
assert_not_contains "$OUT" "JobSet/prod/"
assert_contains "$(cat "$E2E_TMP/audit.err")" "4 violations in 2 workloads checked"

# The same from the cluster's WorkloadPolicy objects (no --policy).
run_ok kc apply -f "$REPO_ROOT/deploy/base/01-crd-workloadpolicies.wmap.io.yaml"
wait_until 10 kc get workloadpolicies
run_ok kc apply -f "$E2E_TMP/policy.yaml"
# A WorkloadPolicy with Deny and Warn is refused at apply (definitions.wmap.io), with the path.
assert_fails kc apply -f - <<'Y'
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: both}
spec:
  validationActions: [Deny, Warn]
  podTemplate: {priorityClassName: high}
Y
assert_contains "$OUT" 'admission webhook "definitions.wmap.io" denied the request: both: document 1: .spec.validationActions.1: Deny and Warn may not be combined'
rc=0
n=$(wc -l <"$E2E_TMP/requests.log")
OUT=$(kubectl wmap audit -A -o json 2>"$E2E_TMP/audit.err") || rc=$?
assert_eq 1 "$rc"
# Lists only: no request names one workload.
assert_eq 0 "$(tail -n +"$((n + 1))" "$E2E_TMP/requests.log" | grep -c '/jobsets/train' || true)" "no GET per workload"
assert_eq 1 "$(tail -n +"$((n + 1))" "$E2E_TMP/requests.log" | grep -c '/apis/wmap.io/v1alpha1/workloadpolicies' || true)" "one list of the policies"
assert_eq 4 "$(jq '.violations | length' <<<"$OUT")"
assert_eq 2 "$(jq '.checked' <<<"$OUT")"
assert_eq '["Warn"]' "$(jq -c '[.violations[] | select(.policy == "staging-team") | .actions[]] | unique' <<<"$OUT")"
assert_eq "train staging driver null" "$(jq -r '.violations[] | select(.policy == "staging-team" and .instance == "driver") | "\(.workload.name) \(.workload.namespace) \(.instance) \(.have)"' <<<"$OUT")"
# -n and --kind narrow it; in prod nothing is violated: exit 0.
OUT=$(kubectl wmap audit -n prod --kind JobSet 2>"$E2E_TMP/audit.err") || fail "audit of prod: exit $?"
assert_eq "" "$OUT" "no table without violations"
assert_contains "$(cat "$E2E_TMP/audit.err")" "0 violations in 1 workload checked"
# Audit-only violations pass unless --fail-on audit.
kc delete workloadpolicy staging-team >/dev/null
run_ok kubectl wmap audit -n staging
assert_contains "$OUT" "gpu-runtime"
assert_fails kubectl wmap audit -n staging --fail-on audit
