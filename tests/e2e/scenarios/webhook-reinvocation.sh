# reinvocationPolicy: IfNeeded is safe because the webhook is idempotent: a webhook that
# runs after wmap's and changes the JobSet makes the server call wmap-webhook again, and
# that second call answers with no patch. Two webhooks, one JobSet, one stamp.
: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
[[ -x $WEBHOOK ]] || fail "webhook not built: $WEBHOOK"

testhook_start sim-system sim-testhook
webhook_certs wmap-system wmap-webhook
start_bg wmap-webhook "$E2E_TMP/webhook.ready" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port 0 \
    --ready-file "$E2E_TMP/webhook.ready" --gang-scheduler coscheduling
WH_PORT=$(head -n1 "$E2E_TMP/webhook.ready")
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT" \
    --service-port "sim-system/sim-testhook=$HOOK_PORT"

run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 kc get jobsets
run_ok kc apply -f "$REPO_ROOT/deploy/base/08-mutatingwebhookconfiguration.yaml"
# deploy/ ships no rules; add the JobSet rule the running webhook would write.
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},{\"op\":\"add\",\"path\":\"/webhooks/0/rules\",\"value\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"jobset.x-k8s.io\"],\"apiVersions\":[\"v1alpha2\"],\"resources\":[\"jobsets\"],\"scope\":\"Namespaced\"}]}]"
# Configurations run in name order: this one after wmap-webhook, and it changes the object.
mutating_webhook zz-add-label /add-label Fail 5 jobsets jobset.x-k8s.io v1alpha2 | kc apply -f - >/dev/null

run_ok kc create -f "$E2E_DIR/data/jobset-sample.yaml"
run_ok kc get jobset train -o json
assert_eq true "$(jq -r '.metadata.labels["sim-testhook.example.com/injected"]' <<<"$OUT")" "the later webhook ran"
assert_eq train "$(jq -r '.spec.replicatedJobs[0].template.spec.template.metadata.labels["scheduling.x-k8s.io/pod-group"]' <<<"$OUT")"
calls=$(grep -c '"object":"default/train"' "$E2E_TMP/wmap-webhook.log" || true)
assert_eq 2 "$calls" "wmap-webhook called twice (reinvoked)"
first=$(grep '"object":"default/train"' "$E2E_TMP/wmap-webhook.log" | head -n1)
second=$(grep '"object":"default/train"' "$E2E_TMP/wmap-webhook.log" | tail -n1)
assert_contains "$first" '"result":"patched"'
assert_contains "$second" '"result":"allowed"' "the reinvocation changes nothing"
assert_contains "$second" '"patchOps":0'
