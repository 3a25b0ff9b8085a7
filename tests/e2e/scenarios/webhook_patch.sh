# A mutating webhook that patches: the label lands on the stored object; the AdmissionReview
# carries what the real server sends (kind, resource, name, namespace, operation, userInfo,
# dryRun, options); warnings reach kubectl; denials use the real message.
testhook_start sim-system sim-testhook
sim_start --service-port "sim-system/sim-testhook=$HOOK_PORT"
mutating_webhook add-label /add-label Fail 5 pods "" v1 >"$E2E_TMP/mwc.yaml"
run_ok kc apply -f "$E2E_TMP/mwc.yaml"
cat >"$E2E_TMP/pod.yaml" <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec: {containers: [{name: c, image: nginx}]}
Y
run_ok kc create -f "$E2E_TMP/pod.yaml"
run_ok kc get pod web -o json
assert_eq true "$(jq -r '.metadata.labels["sim-testhook.example.com/injected"]' <<<"$OUT")" "webhook label stored"
assert_eq web "$(jq -r .metadata.labels.app <<<"$OUT")" "user label kept"
req=$(tail -n1 "$E2E_TMP/hook.requests")
assert_eq '{"group":"","version":"v1","kind":"Pod"}' "$(jq -c .request.kind <<<"$req")"
assert_eq '{"group":"","version":"v1","resource":"pods"}' "$(jq -c .request.resource <<<"$req")"
assert_eq '"web" "default" "CREATE" false null' "$(jq -r '[.request.name, .request.namespace, .request.operation, .request.dryRun, .request.oldObject] | map(tojson) | join(" ")' <<<"$req")"
assert_eq sim-admin "$(jq -r .request.userInfo.username <<<"$req")"
assert_eq '{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"kubectl-create"}' "$(jq -c .request.options <<<"$req")"
# UPDATE carries the old object; a no-op webhook patch keeps the label idempotent.
run_ok kc label pod web tier=fe
req=$(tail -n1 "$E2E_TMP/hook.requests")
assert_eq UPDATE "$(jq -r .request.operation <<<"$req")"
assert_eq web "$(jq -r .request.oldObject.metadata.name <<<"$req")"
# Dry run: the webhook is told, nothing is stored.
sed 's/name: web/name: web-dry/' "$E2E_TMP/pod.yaml" >"$E2E_TMP/dry.yaml"
run_ok kc create -f "$E2E_TMP/dry.yaml" --dry-run=server -o json
assert_eq true "$(jq -r '.metadata.labels["sim-testhook.example.com/injected"]' <<<"$OUT")" "dry-run response is patched"
assert_eq true "$(tail -n1 "$E2E_TMP/hook.requests" | jq -r .request.dryRun)" "webhook saw dryRun"
assert_fails kc get pod web-dry
# generateName: the webhook sees an empty name.
run_ok kc create -f - <<'Y'
apiVersion: v1
kind: Pod
metadata: {generateName: gen-}
spec: {containers: [{name: c, image: nginx}]}
Y
[[ $OUT =~ pod/gen-[a-z0-9]{5}\ created ]] || fail "generateName: $OUT"
assert_eq '""' "$(tail -n1 "$E2E_TMP/hook.requests" | jq -c .request.name)" "name is empty on CREATE with generateName"
# Warnings from webhooks become Warning headers that kubectl prints.
mutating_webhook warn /warn Fail 5 configmaps "" v1 | kc apply -f - >/dev/null
run_ok kc create -f - <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: warned}
Y
assert_contains "$OUT" "Warning: sim-testhook saw this request"
# On the wire: an RFC 7234 Warning header with code 299.
sim_curl POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' \
    -d '{"metadata":{"name":"warned-2"}}' -D "$E2E_TMP/warn.h" >/dev/null
assert_contains "$(cat "$E2E_TMP/warn.h")" 'Warning: 299 - "sim-testhook saw this request"'
# The client-certificate user reaches webhooks as itself.
run_ok kc --context sim-cert create -f - <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: by-cert}
Y
assert_eq '{"username":"sim-cert-user","groups":["system:masters","system:authenticated"]}' \
    "$(tail -n1 "$E2E_TMP/hook.requests" | jq -c .request.userInfo)"
# A denial: the webhook's message with the real prefix, the webhook's code and reason.
mutating_webhook deny /deny Ignore 5 services "" v1 | kc apply -f - >/dev/null
assert_fails kc create -f - <<'Y'
apiVersion: v1
kind: Service
metadata: {name: svc}
spec: {ports: [{port: 80}]}
Y
assert_contains "$OUT" 'Error from server (Forbidden): error when creating "STDIN": admission webhook "deny.sim.example.com" denied the request: denied by sim-testhook'
assert_fails kc get svc svc
