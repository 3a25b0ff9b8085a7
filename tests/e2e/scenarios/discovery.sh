# Discovery as kubectl sees it: version, api-resources, short names, server-side Table printing.
sim_start
run_ok kc version -o json
assert_contains "$OUT" '"gitVersion": "v1.32.0-apiserver-sim"' "server version"
run_ok kc api-resources --no-headers
for r in "pods *po *v1 *true *Pod" "namespaces *ns *v1 *false" "deployments *deploy *apps/v1" \
         "statefulsets *sts *apps/v1" "jobs *batch/v1" "customresourcedefinitions *crd,crds" \
         "mutatingwebhookconfigurations" "validatingwebhookconfigurations"; do
    grep -Eq "^$r" <<<"$OUT" || fail "api-resources lacks /$r/: $OUT"
done
run_ok kc get ns
assert_contains "$OUT" "kube-system" "namespaces listed through a Table"
run_ok kc get ns default -o jsonpath='{.metadata.labels.kubernetes\.io/metadata\.name}'
assert_eq "default" "$OUT" "namespace name label"
# The discovery documents themselves.
body=$(sim_curl GET /apis/apps/v1)
assert_contains "$body" '"groupVersion":"apps/v1"'
assert_contains "$body" '"name":"deployments/status"'
assert_eq 200 "$(tail -n1 <<<"$body")" "GET /apis/apps/v1 code"
# Aggregated discovery (apidiscovery.k8s.io/v2) for clients that ask for it, as kubectl 1.32 does.
agg=$(curl -sS --max-time 10 --cacert "$SIM_PKI/ca.crt" -H "Authorization: Bearer $SIM_TOKEN" -D "$E2E_TMP/agg.h" \
    -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' "$SIM_URL/apis")
assert_contains "$(cat "$E2E_TMP/agg.h")" "Content-Type: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
assert_eq '{"resource":"deployments","scope":"Namespaced","kind":"Deployment","sub":["status","scale"]}' \
    "$(jq -c '.items[] | select(.metadata.name=="apps") | .versions[0].resources[] | select(.resource=="deployments") | {resource, scope, kind: .responseKind.kind, sub: [.subresources[].subresource]}' <<<"$agg")"
grep -q 'GET /apis/apps/v1?' "$E2E_TMP/requests.log" && fail "kubectl walked the groups instead of using aggregated discovery"
true
