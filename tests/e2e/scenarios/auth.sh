# Authentication: the token user, the client-certificate user, and what is refused.
sim_start
run_ok kc get ns default
run_ok kc --context sim-cert get ns default
run_ok kc --context sim-cert create -f - <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: by-cert}
Y
assert_contains "$OUT" "configmap/by-cert created"
# A wrong token: 401 and kubectl's own words for it.
assert_fails kc --token not-the-token get pods
assert_contains "$OUT" "error: You must be logged in to the server (Unauthorized)"
# No credentials at all.
resp=$(curl -sS --cacert "$SIM_PKI/ca.crt" -w '\n%{http_code}\n' "$SIM_URL/api/v1/namespaces")
assert_eq 401 "$(tail -n1 <<<"$resp")"
assert_eq '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}' \
    "$(head -n1 <<<"$resp" | jq -c '{kind,apiVersion,metadata,status,message,reason,code}')"
# A client certificate from another CA is not accepted.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=mallory" \
    -keyout "$E2E_TMP/rogue.key" -out "$E2E_TMP/rogue.crt" 2>/dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$SIM_PKI/ca.crt" --cert "$E2E_TMP/rogue.crt" \
    --key "$E2E_TMP/rogue.key" "$SIM_URL/api/v1/namespaces" || true)
[[ $code == 401 || $code == 000 ]] || fail "rogue client certificate got $code"
# The good client certificate through curl too.
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$SIM_PKI/ca.crt" --cert "$SIM_PKI/client.crt" \
    --key "$SIM_PKI/client.key" "$SIM_URL/api/v1/namespaces")
assert_eq 200 "$code" "client certificate via curl"
# A serving certificate given on the command line instead of the generated one.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=own" \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout "$E2E_TMP/own.key" -out "$E2E_TMP/own.crt" 2>/dev/null
start_bg sim-own-cert "$E2E_TMP/own.ready" 10 "$SIM" --port 0 --tls-cert "$E2E_TMP/own.crt" --tls-key "$E2E_TMP/own.key" \
    --kubeconfig-out "$E2E_TMP/own.kubeconfig" --ready-file "$E2E_TMP/own.ready" --token fixed-token
run_ok kc --kubeconfig "$E2E_TMP/own.kubeconfig" get ns default -o name
assert_eq "namespace/default" "$OUT"
run_ok kc --kubeconfig "$E2E_TMP/own.kubeconfig" --context sim-cert get ns default -o name
own_port=$(head -n1 "$E2E_TMP/own.ready")
echo | openssl s_client -connect "127.0.0.1:$own_port" 2>/dev/null | grep -q "subject=CN = own" || fail "the given certificate is not served"
assert_eq 200 "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$E2E_TMP/own.crt" -H 'Authorization: Bearer fixed-token' "https://127.0.0.1:$own_port/api")" "--token"
# The read-only viewer: reads work, writes are 403 with RBAC's message.
run_ok kc --context sim-viewer get configmap by-cert -o name
assert_fails kc --context sim-viewer delete configmap by-cert
assert_contains "$OUT" 'Error from server (Forbidden): configmaps "by-cert" is forbidden: User "sim-viewer" cannot delete resource "configmaps" in API group "" in the namespace "default"'
assert_fails kc --context sim-viewer create -f "$E2E_DIR/data/jobset-crd.yaml"
assert_contains "$OUT" 'customresourcedefinitions.apiextensions.k8s.io is forbidden: User "sim-viewer" cannot create resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope'
run_ok kc get configmap by-cert
