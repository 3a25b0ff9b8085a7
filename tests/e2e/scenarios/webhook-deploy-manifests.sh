# deploy/ is accepted by the real kubectl: `kubectl apply --dry-run=client -f deploy/`, then a
# real apply (server-side field validation) and a server dry run. The simulator does not serve
# RBAC, PodDisruptionBudget and NetworkPolicy, so stand-in CRDs for those three groups are
# loaded first (schemaless: kubectl's own decoding is what is checked for them).
stub_crd() {
    local group=$1 version=$2 kind=$3 plural=$4 scope=$5
    cat <<Y
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: $plural.$group
  annotations: {api-approved.kubernetes.io: "stand-in for a built-in the simulator lacks"}
spec:
  group: $group
  scope: $scope
  names: {kind: $kind, plural: $plural, singular: $(tr '[:upper:]' '[:lower:]' <<<"$kind")}
  versions:
  - name: $version
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
Y
}
{
    stub_crd rbac.authorization.k8s.io v1 ClusterRole clusterroles Cluster
    stub_crd rbac.authorization.k8s.io v1 ClusterRoleBinding clusterrolebindings Cluster
    stub_crd policy v1 PodDisruptionBudget poddisruptionbudgets Namespaced
    stub_crd networking.k8s.io v1 NetworkPolicy networkpolicies Namespaced
} >"$E2E_TMP/stubs.yaml"
sim_start --load "$E2E_TMP/stubs.yaml"

run_ok kc apply --dry-run=client -f "$REPO_ROOT/deploy/"
for what in namespace/wmap-system customresourcedefinition.apiextensions.k8s.io/kartas.run.ai \
    serviceaccount/wmap-webhook clusterrole.rbac.authorization.k8s.io/wmap-webhook \
    configmap/wmap-policies deployment.apps/wmap-webhook service/wmap-webhook \
    poddisruptionbudget.policy/wmap-webhook networkpolicy.networking.k8s.io/wmap-webhook \
    mutatingwebhookconfiguration.admissionregistration.k8s.io/wmap-webhook \
    validatingwebhookconfiguration.admissionregistration.k8s.io/wmap-webhook; do
    assert_contains "$OUT" "$what created (dry run)"
done

# For real, in file order (the namespace first), with strict server-side field validation.
run_ok kc apply --validate=strict -f "$REPO_ROOT/deploy/"
run_ok kc get deployment wmap-webhook -n wmap-system -o json
assert_eq 2 "$(jq -r .spec.replicas <<<"$OUT")"
assert_eq true "$(jq -r '.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem' <<<"$OUT")"
assert_eq true "$(jq -r '.spec.template.spec.securityContext.runAsNonRoot' <<<"$OUT")"
run_ok kc get mutatingwebhookconfiguration wmap-webhook -o json
assert_eq Ignore "$(jq -r '.webhooks[0].failurePolicy' <<<"$OUT")"
assert_eq None "$(jq -r '.webhooks[0].sideEffects' <<<"$OUT")"
assert_eq IfNeeded "$(jq -r '.webhooks[0].reinvocationPolicy' <<<"$OUT")"
assert_contains "$(jq -c '.webhooks[0].namespaceSelector' <<<"$OUT")" '"kube-system"'
assert_contains "$(jq -c '.webhooks[0].namespaceSelector' <<<"$OUT")" '"wmap-system"'
assert_contains "$(jq -c '.webhooks[0].rules' <<<"$OUT")" '"jobsets"'

# The Karta CRD serves the catalog: every definition applies under strict validation and
# reads back unchanged (nothing pruned).
wait_until 10 kc get kartas
for f in "$REPO_ROOT"/catalog/*.yaml; do
    run_ok kc apply --validate=strict -f "$f"
done
name=jobset-x-k8s-io-jobset-v1alpha2
run_ok kc get karta "$name" -o json
got=$(jq -S .spec <<<"$OUT")
want=$(kc create --dry-run=client -f "$REPO_ROOT/catalog/$name.yaml" -o json | jq -S .spec)
assert_eq "$want" "$got" "Karta spec read back unchanged"
run_ok kc get kartas
assert_contains "$OUT" "JobSet"
