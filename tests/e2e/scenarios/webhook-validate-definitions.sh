# Karta and WorkloadPolicy objects at admission, with deploy/base/09's static rules
# (definitions.wmap.io): an invalid Karta is denied with upstream's message and its field
# path, an unparseable WorkloadPolicy with the parser's; valid ones and the catalog apply;
# workloads are not sent to /validate (no workload rules shipped); with the webhook down a
# Karta still applies (failurePolicy Ignore). Then the schema path check from the cluster:
# `kubectl wmap validate FILE --from-cluster` against a Widget CRD with two versions.
: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
[[ -x $WEBHOOK ]] || fail "webhook not built: $WEBHOOK"
[[ -x $PLUGIN ]] || fail "plugin not built: $PLUGIN"

webhook_certs wmap-system wmap-webhook
start_bg wmap-webhook "$E2E_TMP/webhook.ready" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port 0 \
    --ready-file "$E2E_TMP/webhook.ready"
WH_PORT=$(head -n1 "$E2E_TMP/webhook.ready")
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"
D=$REPO_ROOT/deploy/base
run_ok kc apply -f "$D/00-namespace.yaml" -f "$D/01-crd-kartas.run.ai.yaml" \
    -f "$D/01-crd-workloadpolicies.wmap.io.yaml" -f "$D/09-validatingwebhookconfiguration.yaml"
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},
         {\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"}]"
wait_until 10 kc get kartas
wait_until 10 kc get workloadpolicies

# The catalog applies through the webhook.
for f in "$REPO_ROOT"/catalog/jobset-*.yaml "$REPO_ROOT"/catalog/ray-io-raycluster-v1.yaml; do
    run_ok kc apply -f "$f"
done
grep -q '"kind":"Karta.run.ai".*"result":"allowed"' "$E2E_TMP/wmap-webhook.log" || fail "the webhook saw no Karta"

# An invalid Karta: denied with upstream's message and the path, nothing stored.
sed -e 's/name: example-com-widget-v1/name: broken-widget/' -e 's/ownerRef: widget/ownerRef: nobody/' \
    "$REPO_ROOT/tests/golden/defs/widget-paths.yaml" >"$E2E_TMP/broken.yaml"
assert_fails kc apply -f "$E2E_TMP/broken.yaml"
assert_contains "$OUT" 'admission webhook "definitions.wmap.io" denied the request: broken-widget: .spec.structureDefinition.childComponents[0]: child component '"'"'role'"'"' has owner ref to non-existing component '"'"'nobody'"'"''
assert_fails kc get karta broken-widget
# An update that breaks a stored Karta is denied too, and the stored one stays.
run_ok kc get karta jobset-x-k8s-io-jobset-v1alpha2 -o json
jq '.spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath = ".spec.replicatedJobs[] | del(.x)"' \
    <<<"$OUT" >"$E2E_TMP/jobset-bad.json"
assert_fails kc replace -f "$E2E_TMP/jobset-bad.json"
assert_contains "$OUT" 'denied the request: jobset-x-k8s-io-jobset-v1alpha2: .spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath: jq expression'
assert_eq ".spec.replicatedJobs[].template.spec.template" \
    "$(kc get karta jobset-x-k8s-io-jobset-v1alpha2 -o jsonpath='{.spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath}')"

# WorkloadPolicy: a good one applies, one that the parser refuses (a value the CRD's enum
# would also refuse on a real server; the simulator checks no enums) is denied by the webhook.
run_ok kc apply -f - <<'Y'
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: team-a}
spec:
  match: {namespaces: [team-a]}
  gang: {scheduler: volcano, queue: team-a}
Y
assert_fails kc apply -f - <<'Y'
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: team-b}
spec:
  match: {namespaces: [team-b]}
  gang: {scheduler: slurm}
Y
assert_contains "$OUT" 'admission webhook "definitions.wmap.io" denied the request: team-b: document 1: .spec.gang.scheduler: unknown gang scheduler "slurm"'
assert_fails kc get workloadpolicy team-b
run_ok kc delete workloadpolicy team-a

# No workload goes to /validate: a pod is created without a call.
before=$(grep -c '"endpoint":"validate"' "$E2E_TMP/wmap-webhook.log" || true)
run_ok kc run plain --image=busybox --restart=Never
assert_eq "$before" "$(grep -c '"endpoint":"validate"' "$E2E_TMP/wmap-webhook.log" || true)" "no review for a pod"

# The schema path check against the cluster's CRD.
run_ok kc apply -f "$REPO_ROOT/tests/golden/crds/widget-crd.yaml"
wait_until 10 kc get widgets
run_ok "$PLUGIN" validate "$REPO_ROOT/tests/golden/defs/widget-paths.yaml" --from-cluster
assert_contains "$OUT" "every field it reads or writes is in the schema of v1 (CRD widgets.example.com)"
assert_fails "$PLUGIN" validate "$REPO_ROOT/tests/golden/defs/widget-paths-v2.yaml" --from-cluster
assert_contains "$OUT" "SCHEMA: 9 findings against the CRD widgets.example.com, version v2:"
assert_contains "$OUT" 'widget-paths-v2.yaml:37:11: .spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath: path ".spec.roles[].template" is not in the schema of example.com/v2 Widget: no field "roles" under .spec'
# The offline form with the same CRD says the same.
assert_fails "$PLUGIN" validate "$REPO_ROOT/tests/golden/defs/widget-paths-v2.yaml" --crd "$REPO_ROOT/tests/golden/crds/widget-crd.yaml"
offline=$OUT
assert_fails "$PLUGIN" validate "$REPO_ROOT/tests/golden/defs/widget-paths-v2.yaml" --from-cluster
assert_eq "$offline" "$OUT" "offline and --from-cluster agree"
# A kind the cluster does not serve, and a built-in kind: nothing to check, said so.
run_ok "$PLUGIN" validate "$REPO_ROOT/catalog/leaderworkerset-x-k8s-io-leaderworkerset-v1.yaml" --from-cluster
assert_contains "$OUT" "schema not checked: the cluster serves no LeaderWorkerSet.leaderworkerset.x-k8s.io: no CRD to check against"
run_ok "$PLUGIN" validate "$REPO_ROOT/catalog/batch-job-v1.yaml" --from-cluster
assert_contains "$OUT" "schema not checked: Job is a built-in kind: no CRD to check against"
# As a service account bound by deploy/base/02-rbac.yaml (may read CRDs).
run_ok kc apply -f "$D/02-rbac.yaml"
run_ok kc create token wmap-webhook -n wmap-system
assert_fails "$PLUGIN" validate "$REPO_ROOT/tests/golden/defs/widget-paths-v2.yaml" --from-cluster --token "$OUT"
assert_contains "$OUT" "SCHEMA: 9 findings"
# No cluster at all: a connection error, exit 1.
assert_fails "$PLUGIN" validate "$REPO_ROOT/tests/golden/defs/widget-paths.yaml" --from-cluster --server https://127.0.0.1:1
assert_contains "$OUT" "error:"

# The webhook down: definitions still apply (failurePolicy Ignore on definitions.wmap.io).
kill -TERM "$wmap_webhook_PID"
wait "$wmap_webhook_PID" 2>/dev/null || true
run_ok kc apply -f "$REPO_ROOT/tests/golden/defs/widget-paths.yaml"
run_ok kc get karta example-com-widget-v1 -o name
