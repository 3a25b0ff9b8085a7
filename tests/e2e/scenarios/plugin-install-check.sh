# kubectl wmap install --check against the simulator: after `kubectl wmap install | kubectl
# apply -f -`, with wmap-webhook running on the Secret's certificate behind the simulator's
# Service, every check passes (exit 0); then each fault is named and exits 1: a webhook
# without caBundle, a caBundle of another CA, the webhook stopped.
# The simulator runs no controllers: the Deployment's status and the Service's Endpoints are
# written here as the Deployment controller and the endpoints controller would, and the JobSet
# rule is added by hand (the webhook's rule reconciler is not built yet).
plugin_on_path || fail "plugin not built: $PLUGIN"
: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
[[ -x $WEBHOOK ]] || fail "webhook not built: $WEBHOOK"
WH_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"

run_ok bash -c "kubectl wmap install | kubectl --request-timeout=60s apply -f -"
run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 kc get jobsets || fail "JobSet CRD not served"
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json -p '[{"op":"add","path":"/webhooks/0/rules","value":[{"operations":["CREATE"],"apiGroups":["jobset.x-k8s.io"],"apiVersions":["v1alpha2"],"resources":["jobsets"],"scope":"Namespaced"}]}]'
run_ok kc -n wmap-system patch deployment wmap-webhook --subresource=status --type=merge \
    -p '{"status":{"replicas":2,"readyReplicas":2,"availableReplicas":2,"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}]}}'
run_ok kc apply -f - <<Y
apiVersion: v1
kind: Endpoints
metadata: {name: wmap-webhook, namespace: wmap-system}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{name: https, port: $WH_PORT, protocol: TCP}]
Y

# Before the webhook runs: the dry run comes back unstamped (failurePolicy Ignore).
set +e
out=$(kubectl wmap install --check 2>&1)
rc=$?
set -e
assert_eq 1 "$rc" "exit code with the webhook not running"
assert_contains "$(grep '^webhook-answers' <<<"$out")" "FAIL"

run_ok kc -n wmap-system get secret wmap-webhook-tls -o json
jq -r '.data["tls.crt"]' <<<"$OUT" | base64 -d >"$E2E_TMP/tls.crt"
jq -r '.data["tls.key"]' <<<"$OUT" | base64 -d >"$E2E_TMP/tls.key"
start_bg wmap-webhook "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/readyz" 30 \
    "$WEBHOOK" --tls-cert "$E2E_TMP/tls.crt" --tls-key "$E2E_TMP/tls.key" --port "$WH_PORT" --no-cluster

run_ok kubectl wmap install --check
for c in crds deployment webhook-configurations service-endpoints webhook-answers; do
    assert_contains "$(grep "^$c " <<<"$OUT")" " ok " "check $c"
done
assert_contains "$OUT" "4 webhooks; every caBundle verifies the serving certificate for wmap-webhook.wmap-system.svc"

check_fails() {  # check_fails CHECK TEXT: install --check exits 1 and CHECK's line says TEXT
    set +e
    out=$(kubectl wmap install --check 2>&1)
    rc=$?
    set -e
    assert_eq 1 "$rc" "exit code of install --check ($2)"
    assert_contains "$(grep "^$1 " <<<"$out")" "FAIL"
    assert_contains "$(grep "^$1 " <<<"$out")" "$2"
}

# Fault 1: a webhook without caBundle.
bundle=$(kc get validatingwebhookconfiguration wmap-webhook -o jsonpath='{.webhooks[1].clientConfig.caBundle}')
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json -p '[{"op":"remove","path":"/webhooks/1/clientConfig/caBundle"}]'
check_fails webhook-configurations "webhook definitions.wmap.io has no caBundle"
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json -p "[{\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"$bundle\"}]"

# Fault 2: the mutating webhook's caBundle is another CA: named, and the API server cannot
# reach the webhook either.
webhook_certs other-ns other
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json -p "[{\"op\":\"replace\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"}]"
check_fails webhook-configurations "the caBundle of webhook pod-templates.wmap.io does not verify the serving certificate"
assert_contains "$(grep '^webhook-answers' <<<"$out")" "FAIL"
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json -p "[{\"op\":\"replace\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$bundle\"}]"
run_ok kubectl wmap install --check

# Fault 3: the webhook stopped.
kill -TERM "$wmap_webhook_PID"
wait_until 30 bash -c "! kill -0 $wmap_webhook_PID 2>/dev/null" || fail "webhook did not stop"
check_fails webhook-answers "came back without wmap's labels"
assert_contains "$(grep '^webhook-configurations' <<<"$out")" " ok "
