# deploy/base/02-rbac.yaml grants the webhook's service account exactly what it needs, checked
# against the simulator's RBAC authorizer with the real kubectl:
# - `kubectl auth can-i --list` as the service account, in its namespace and in another one,
#   equals a golden file (any extra or missing rule changes it);
# - single permissions the webhook must have and must not have (`auth can-i --as`);
# - a service-account token from `kubectl create token`: allowed requests pass, a denied one
#   is 403 with the API server's message, the token expires, and a deleted service account
#   takes its tokens with it;
# - Leases: create, get, update guarded by resourceVersion (409 on a stale one);
# - the webhook configurations: updated by name with resourceVersion (409 when stale), the
#   next admission uses the new rules.
testhook_start sim-system sim-testhook
sim_start --token-min-expiry 2 --service-port "sim-system/sim-testhook=$HOOK_PORT"
D=$REPO_ROOT/deploy/base
run_ok kc apply -f "$D/00-namespace.yaml" -f "$D/01-crd-kartas.run.ai.yaml" \
    -f "$D/01-crd-workloadpolicies.wmap.io.yaml" -f "$D/02-rbac.yaml" \
    -f "$D/08-mutatingwebhookconfiguration.yaml" -f "$D/09-validatingwebhookconfiguration.yaml" \
    -f "$E2E_DIR/data/jobset-crd.yaml" -f "$E2E_DIR/data/audit/report-crds.yaml"
SA=system:serviceaccount:wmap-system:wmap-webhook
wait_until 10 kc get kartas
wait_until 10 kc get workloadpolicies
wait_until 10 kc get jobsets
wait_until 10 kc get reports.openreports.io
wait_until 10 kc get policyreports.wgpolicyk8s.io

# The whole grant, as the API server reports it.
for ns in wmap-system default; do
    run_ok kc auth can-i --list --as="$SA" -n "$ns"
    diff -u "$E2E_DIR/golden/rbac-webhook-$ns.out" <(printf '%s\n' "$OUT") ||
        fail "the service account's permissions in $ns differ from the golden file"
done

can() { kc auth can-i "$@" --as="$SA" 2>/dev/null || true; }
# What it needs.
for q in "list kartas.run.ai" "watch kartas.run.ai" "get kartas.run.ai/x" "update kartas.run.ai/x --subresource=status" \
    "watch workloadpolicies.wmap.io" "update workloadpolicies.wmap.io/p --subresource=status" \
    "watch customresourcedefinitions" \
    "get mutatingwebhookconfigurations/wmap-webhook" "update validatingwebhookconfigurations/wmap-webhook" \
    "watch mutatingwebhookconfigurations/wmap-webhook" \
    "create leases -n wmap-system" "update leases/wmap-webhook -n wmap-system" "get leases/wmap-webhook -n wmap-system" \
    "list jobsets.jobset.x-k8s.io" "list jobsets.jobset.x-k8s.io -n default" \
    "create reports.openreports.io -n default" "update reports.openreports.io/wmap-policy -n default" \
    "delete reports.openreports.io/wmap-policy -n default" "list reports.openreports.io" \
    "create policyreports.wgpolicyk8s.io -n default" \
    "list pods" "watch pods -n default" "watch jobsets.jobset.x-k8s.io" "watch jobsets.jobset.x-k8s.io -n default" \
    "watch jobs.batch" "watch replicasets.apps" \
    "update jobsets.jobset.x-k8s.io/x -n default --subresource=finalizers" \
    "create events -n default" "patch kartas.run.ai/x"; do
    # shellcheck disable=SC2086
    assert_eq yes "$(can $q)" "can-i $q"
done
# What it must not have.
for q in "create kartas.run.ai" "update kartas.run.ai/x" "delete kartas.run.ai/x" "patch kartas.run.ai/x --subresource=status" \
    "update workloadpolicies.wmap.io/p" "update customresourcedefinitions/kartas.run.ai" \
    "update mutatingwebhookconfigurations/other" "list mutatingwebhookconfigurations" \
    "delete validatingwebhookconfigurations/wmap-webhook" "create mutatingwebhookconfigurations" \
    "update leases/other -n wmap-system" "create leases -n default" "get leases/wmap-webhook -n default" \
    "get secrets -n wmap-system" "get pods/x -n default" "create pods -n default" "get pods/x --subresource=log -n default" \
    "create pods/x --subresource=exec -n default" "update pods/x --subresource=status -n default" \
    "get jobsets.jobset.x-k8s.io/x -n default" "update jobsets.jobset.x-k8s.io/x -n default" \
    "update pods/x -n default --subresource=finalizers" \
    "patch reports.openreports.io/wmap-policy -n default" "get clusterreports.openreports.io"; do
    # shellcheck disable=SC2086
    assert_eq no "$(can $q)" "can-i $q"
done

# SubjectAccessReview (what a webhook or an aggregated server would ask) agrees.
sar() {
    sim_curl POST /apis/authorization.k8s.io/v1/subjectaccessreviews -H 'Content-Type: application/json' \
        -d "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\",\"spec\":{\"user\":\"$SA\",
             \"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:wmap-system\",\"system:authenticated\"],
             \"resourceAttributes\":{\"group\":\"run.ai\",\"resource\":\"kartas\",\"verb\":\"$1\"}}}" | head -n1 | jq -r .status.allowed
}
assert_eq true "$(sar watch)" "SubjectAccessReview watch kartas"
# The gang schedulers' group objects (their CRDs are not served here, so not through kubectl's
# discovery): written by the gangs controller, never updated whole, status never.
gsar() { # VERB GROUP RESOURCE [SUBRESOURCE]
    sim_curl POST /apis/authorization.k8s.io/v1/subjectaccessreviews -H 'Content-Type: application/json' \
        -d "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\",\"spec\":{\"user\":\"$SA\",
             \"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:wmap-system\",\"system:authenticated\"],
             \"resourceAttributes\":{\"namespace\":\"default\",\"group\":\"$2\",\"resource\":\"$3\",\"subresource\":\"${4:-}\",\"verb\":\"$1\"}}}" |
        head -n1 | jq -r .status.allowed
}
for g in scheduling.volcano.sh scheduling.x-k8s.io scheduling.run.ai; do
    for v in get list watch create patch delete; do
        assert_eq true "$(gsar $v $g podgroups)" "SubjectAccessReview $v podgroups.$g"
    done
    assert_eq false "$(gsar update $g podgroups)" "SubjectAccessReview update podgroups.$g"
    assert_eq false "$(gsar patch $g podgroups status)" "SubjectAccessReview patch podgroups.$g/status"
done
assert_eq false "$(gsar create scheduling.k8s.io podgroups)" "no native groups"
assert_eq false "$(sar delete)" "SubjectAccessReview delete kartas"

# A real token for the service account.
run_ok kc create token wmap-webhook -n wmap-system --duration=600s
TOK=$OUT
[[ $TOK == sim-sa.* ]] || fail "unexpected token: $TOK"
run_ok kc --token="$TOK" get kartas
run_ok kc --token="$TOK" get mutatingwebhookconfiguration wmap-webhook -o name
# A watch of the one named configuration: list/watch with fieldSelector=metadata.name.
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$SIM_PKI/ca.crt" -H "Authorization: Bearer $TOK" \
    "$SIM_URL/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations?fieldSelector=metadata.name%3Dwmap-webhook")
assert_eq 200 "$code" "list of the named configuration"
assert_fails kc --token="$TOK" get mutatingwebhookconfigurations
assert_contains "$OUT" "Error from server (Forbidden): mutatingwebhookconfigurations.admissionregistration.k8s.io is forbidden: User \"$SA\" cannot list resource \"mutatingwebhookconfigurations\" in API group \"admissionregistration.k8s.io\" at the cluster scope"
assert_fails kc --token="$TOK" delete karta nothing
assert_contains "$OUT" "kartas.run.ai \"nothing\" is forbidden: User \"$SA\" cannot delete resource \"kartas\" in API group \"run.ai\" at the cluster scope"
resp=$(curl -sS --cacert "$SIM_PKI/ca.crt" -H "Authorization: Bearer $TOK" "$SIM_URL/apis/wmap.io/v1alpha1/workloadpolicies/x/status" -X PATCH \
    -H 'Content-Type: application/merge-patch+json' -d '{}')
assert_eq 'Forbidden 403 workloadpolicies.wmap.io "x" is forbidden: User "system:serviceaccount:wmap-system:wmap-webhook" cannot patch resource "workloadpolicies/status" in API group "wmap.io" at the cluster scope' \
    "$(jq -r '"\(.reason) \(.code) \(.message)"' <<<"$resp")"
assert_fails kc --token="$TOK" get secrets -n wmap-system
assert_contains "$OUT" "secrets is forbidden: User \"$SA\" cannot list resource \"secrets\" in API group \"\" in the namespace \"wmap-system\""

# Leases: create (any name), then only the named one, updates guarded by resourceVersion.
run_ok kc --token="$TOK" create -f - <<'Y'
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: wmap-webhook, namespace: wmap-system}
spec: {holderIdentity: replica-a, leaseDurationSeconds: 15, leaseTransitions: 0}
Y
run_ok kc --token="$TOK" get lease wmap-webhook -n wmap-system -o json
lease=$OUT
rv=$(jq -r .metadata.resourceVersion <<<"$lease")
jq '.spec.holderIdentity = "replica-b"' <<<"$lease" >"$E2E_TMP/lease-b.json"
run_ok kc --token="$TOK" replace -f "$E2E_TMP/lease-b.json"
# The same resourceVersion again is stale now: 409, and replica-b keeps the Lease.
jq '.spec.holderIdentity = "replica-c"' <<<"$lease" >"$E2E_TMP/lease-c.json"
assert_fails kc --token="$TOK" replace -f "$E2E_TMP/lease-c.json"
assert_contains "$OUT" 'Operation cannot be fulfilled on leases.coordination.k8s.io "wmap-webhook": the object has been modified'
assert_eq replica-b "$(kc get lease wmap-webhook -n wmap-system -o jsonpath='{.spec.holderIdentity}')"
[[ $(kc get lease wmap-webhook -n wmap-system -o jsonpath='{.metadata.resourceVersion}') != "$rv" ]] || fail "resourceVersion not bumped"
run_ok kc apply -f - <<'Y'
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: someone-else, namespace: wmap-system}
spec: {holderIdentity: x}
Y
assert_fails kc --token="$TOK" get lease someone-else -n wmap-system
assert_contains "$OUT" 'leases.coordination.k8s.io "someone-else" is forbidden'

# The webhook configurations: an update with the current resourceVersion works and the next
# admission uses the new rules; a stale one is 409.
kc get mutatingwebhookconfiguration wmap-webhook -o json >"$E2E_TMP/mwc.json"
jq --arg ca "$HOOK_CA_BUNDLE" '
  .webhooks[0].clientConfig = {service: {namespace: "sim-system", name: "sim-testhook", path: "/add-label"}, caBundle: $ca}
  | .webhooks[0].rules = [{operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"], scope: "Namespaced"}]
  | del(.webhooks[0].matchConditions)' "$E2E_TMP/mwc.json" >"$E2E_TMP/mwc-new.json"
run_ok kc --token="$TOK" replace -f "$E2E_TMP/mwc-new.json"
run_ok kc create configmap after-update
assert_eq true "$(kc get configmap after-update -o jsonpath='{.metadata.labels.sim-testhook\.example\.com/injected}')" \
    "the updated rules are used for the next request"
jq '.webhooks[0].rules = []' "$E2E_TMP/mwc.json" >"$E2E_TMP/mwc-stale.json"
assert_fails kc --token="$TOK" replace -f "$E2E_TMP/mwc-stale.json"
assert_contains "$OUT" 'Operation cannot be fulfilled on mutatingwebhookconfigurations.admissionregistration.k8s.io "wmap-webhook": the object has been modified'
# Rules emptied with the current resourceVersion: the next configmap is not sent.
kc get mutatingwebhookconfiguration wmap-webhook -o json | jq '.webhooks[0].rules = []' >"$E2E_TMP/mwc-empty.json"
run_ok kc --token="$TOK" replace -f "$E2E_TMP/mwc-empty.json"
run_ok kc create configmap after-empty
assert_eq "" "$(kc get configmap after-empty -o jsonpath='{.metadata.labels}')"

# Tokens expire, and die with their service account.
run_ok kc create token wmap-webhook -n wmap-system --duration=2s
SHORT=$OUT
run_ok kc --token="$SHORT" get kartas
sleep 2.2
assert_fails kc --token="$SHORT" get kartas
assert_contains "$OUT" "Unauthorized"
assert_fails kc create token wmap-webhook -n wmap-system --duration=1s
assert_contains "$OUT" "spec.expirationSeconds"
run_ok kc --token="$TOK" get kartas
run_ok kc delete serviceaccount wmap-webhook -n wmap-system
assert_fails kc --token="$TOK" get kartas
assert_contains "$OUT" "Unauthorized"
assert_fails kc create token wmap-webhook -n wmap-system
assert_contains "$OUT" 'serviceaccounts "wmap-webhook" not found'
# Recreated under the same name: a new object, the old token stays dead.
run_ok kc apply -f "$D/02-rbac.yaml"
assert_fails kc --token="$TOK" get kartas
run_ok kc create token wmap-webhook -n wmap-system
run_ok kc --token="$OUT" get kartas
