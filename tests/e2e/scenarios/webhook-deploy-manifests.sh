# deploy/ is a kustomize base accepted by the real kubectl: `kubectl apply -k deploy/
# --dry-run=client`, then a real apply (server-side field validation) following
# certs/README.md (certificates from certs/gen-certs.sh, the TLS Secret, the caBundle patched
# into every webhook), and a server dry run. Every kind of deploy/ (RBAC, Leases, Services,
# Endpoints, PodDisruptionBudgets, NetworkPolicies, ...) is a built-in of the simulator.
sim_start

run_ok kc apply --dry-run=client -k "$REPO_ROOT/deploy/"
for what in namespace/wmap-system customresourcedefinition.apiextensions.k8s.io/kartas.run.ai \
    customresourcedefinition.apiextensions.k8s.io/workloadpolicies.wmap.io \
    serviceaccount/wmap-webhook clusterrole.rbac.authorization.k8s.io/wmap-webhook \
    clusterrolebinding.rbac.authorization.k8s.io/wmap-webhook role.rbac.authorization.k8s.io/wmap-webhook-leader \
    rolebinding.rbac.authorization.k8s.io/wmap-webhook-leader \
    deployment.apps/wmap-webhook service/wmap-webhook \
    poddisruptionbudget.policy/wmap-webhook networkpolicy.networking.k8s.io/wmap-webhook \
    mutatingwebhookconfiguration.admissionregistration.k8s.io/wmap-webhook \
    validatingwebhookconfiguration.admissionregistration.k8s.io/wmap-webhook; do
    assert_contains "$OUT" "$what created (dry run)"
done

# For real, as certs/README.md says: certificates, the namespace, the TLS Secret, deploy/,
# then the caBundle into every webhook.
run_ok sh "$REPO_ROOT/certs/gen-certs.sh" --service wmap-webhook --namespace wmap-system --out "$E2E_TMP/certs-out"
run_ok kc apply -f "$REPO_ROOT/deploy/base/00-namespace.yaml"
run_ok kc -n wmap-system create secret tls wmap-webhook-tls \
    --cert "$E2E_TMP/certs-out/tls.crt" --key "$E2E_TMP/certs-out/tls.key"
run_ok kc apply --validate=strict -k "$REPO_ROOT/deploy/"
CA=$(cat "$E2E_TMP/certs-out/cabundle.b64")
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA\"}]"
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA\"},
         {\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"$CA\"},
         {\"op\":\"add\",\"path\":\"/webhooks/2/clientConfig/caBundle\",\"value\":\"$CA\"}]"
run_ok kc get deployment wmap-webhook -n wmap-system -o json
assert_eq 2 "$(jq -r .spec.replicas <<<"$OUT")"
assert_eq true "$(jq -r '.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem' <<<"$OUT")"
assert_eq true "$(jq -r '.spec.template.spec.securityContext.runAsNonRoot' <<<"$OUT")"
run_ok kc get service wmap-webhook -n wmap-system -o jsonpath='{.spec.ports[0].port}'
assert_eq 443 "$OUT"

# The mutating configuration ships without rules (the running webhook writes them).
run_ok kc get mutatingwebhookconfiguration wmap-webhook -o json
assert_eq Ignore "$(jq -r '.webhooks[0].failurePolicy' <<<"$OUT")"
assert_eq None "$(jq -r '.webhooks[0].sideEffects' <<<"$OUT")"
assert_eq IfNeeded "$(jq -r '.webhooks[0].reinvocationPolicy' <<<"$OUT")"
assert_contains "$(jq -c '.webhooks[0].namespaceSelector' <<<"$OUT")" '"kube-system"'
assert_contains "$(jq -c '.webhooks[0].namespaceSelector' <<<"$OUT")" '"wmap-system"'
assert_eq 0 "$(jq '.webhooks[0].rules | length' <<<"$OUT")" "no workload rules shipped"
assert_eq "$CA" "$(jq -r '.webhooks[0].clientConfig.caBundle' <<<"$OUT")"
# The validating one: no workload rules, static rules for Kartas and WorkloadPolicies.
run_ok kc get validatingwebhookconfiguration wmap-webhook -o json
vwc=$OUT
assert_eq "policies.wmap.io definitions.wmap.io advisories.wmap.io" "$(jq -r '[.webhooks[].name] | join(" ")' <<<"$vwc")"
assert_eq 0 "$(jq '.webhooks[0].rules | length' <<<"$vwc")" "no workload rules shipped"
assert_eq 0 "$(jq '.webhooks[2].rules | length' <<<"$vwc")" "no advisory rules shipped"
assert_eq "Fail Ignore" "$(jq -r '"\(.webhooks[0].failurePolicy) \(.webhooks[2].failurePolicy)"' <<<"$vwc")" "Deny fails closed, Warn and Audit open"
assert_eq '[{"apiGroups":["run.ai"],"apiVersions":["v1alpha1"],"operations":["CREATE","UPDATE"],"resources":["kartas"],"scope":"Cluster"},{"apiGroups":["wmap.io"],"apiVersions":["v1alpha1"],"operations":["CREATE","UPDATE"],"resources":["workloadpolicies"],"scope":"Cluster"}]' \
    "$(jq -cS '.webhooks[1].rules' <<<"$vwc")"
assert_eq "$CA" "$(jq -r '.webhooks[1].clientConfig.caBundle' <<<"$vwc")"

# With no enforced policy and the webhook not running, pods are created as usual: nothing
# sends them to /validate.
run_ok kc run plain --image=busybox --restart=Never
assert_contains "$OUT" "pod/plain created"

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
assert_contains "$(head -n1 <<<"$OUT")" "READY"

# kubectl explain gives every Karta field a real description (docs/karta-guide.md is the
# long form): the simulator publishes the CRD's schema as the API server does.
run_ok kc explain karta.spec
assert_contains "$OUT" "docs/karta-guide.md"
run_ok kc explain karta.spec.structureDefinition.childComponents.podSelector
assert_contains "$OUT" "wmap.io/component"
run_ok kc explain karta.spec.optimizationInstructions.gangScheduling.podGroups.members.groupByKeyPaths
assert_contains "$OUT" "run on each Pod (not on the workload)"
run_ok python3 - "$REPO_ROOT/deploy/base/01-crd-kartas.run.ai.yaml" <<'PY'
import sys, yaml
missing = []
def walk(node, path):
    for k, v in (node.get("properties") or {}).items():
        if not v.get("description"):
            missing.append(".".join(path + [k]))
        walk(v, path + [k])
    if isinstance(node.get("items"), dict):
        walk(node["items"], path)
crd = yaml.safe_load(open(sys.argv[1]))
walk(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"], [])
sys.exit("fields without a description: " + ", ".join(missing) if missing else 0)
PY


# WorkloadPolicy objects: deploy/ ships none (nothing in force that the user did not ask
# for); the examples of docs/ apply as they are, a typo fails at apply.
wait_until 10 kc get workloadpolicies
assert_eq 0 "$(kc get workloadpolicies -o json | jq '.items | length')" "deploy/ puts no policy in force"
assert_fails kc -n wmap-system get configmap wmap-policies
run_ok kc apply --validate=strict -f "$REPO_ROOT/docs/examples/workloadpolicies.yaml"
assert_contains "$OUT" "workloadpolicy.wmap.io/gpu-training-defaults created"
run_ok kc get workloadpolicy prod-serving-priority -o json
assert_eq serving-high "$(jq -r .spec.podTemplate.priorityClassName <<<"$OUT")"
assert_eq Deny "$(jq -r '.spec.validationActions | join(",")' <<<"$OUT")"
# The CRD keeps mode: require and limits (an unknown field would fail --validate=strict).
run_ok kc apply --validate=strict -f "$REPO_ROOT/docs/examples/rollout-and-limits.yaml"
run_ok kc get workloadpolicy team-gpu-limits -o json
assert_eq '64 256 8' "$(jq -r '.spec.limits | "\(.workload["nvidia.com/gpu"]) \(.workload.pods) \(.pod["nvidia.com/gpu"])"' <<<"$OUT")"
assert_eq require "$(kc get workloadpolicy training-priority -o jsonpath='{.spec.mode}')"
run_ok kc get wpol
assert_contains "$(head -n1 <<<"$OUT")" "READY"
assert_fails kc apply -f - <<'Y'
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: typo}
spec:
  match: {kinds: ["JobSet.jobset.x-k8s.io"]}
  podTemplate: {priorityClass: high}
Y
assert_contains "$OUT" 'unknown field "spec.podTemplate.priorityClass"'
assert_fails kc get workloadpolicy typo
