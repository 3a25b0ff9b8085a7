# The API server cannot be reached when wmap-webhook starts: /readyz turns 200 after
# --sync-timeout (2 s here) with the catalog, a log line and wmap_webhook_sync_timeouts_total
# saying so, and reviews are answered meanwhile; when the API server comes up, the webhook
# syncs by itself (wmap_webhook_cluster_synced 1) and the cluster's Karta comes into force.
source "$E2E_DIR/cluster-helpers.sh"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=sim" \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout "$E2E_TMP/sim.key" -out "$E2E_TMP/sim.crt" 2>/dev/null
SIM_FIXED_PORT=$(free_port)
cluster_setup --port "$SIM_FIXED_PORT" --tls-cert "$E2E_TMP/sim.crt" --tls-key "$E2E_TMP/sim.key" --token e2e-fixed-token
run_ok kc create -f "$CLUSTER_DATA/widget-karta.yaml"
kc get crd widgets.example.com kartas.run.ai -o json | jq '.items[] |= del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .status)' >"$E2E_TMP/crds.json"
kc get kartas -o json | jq '.items[] |= del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp)' >"$E2E_TMP/kartas.json"
kill -TERM "$apiserver_sim_PID"
wait "$apiserver_sim_PID" || true

t0=$(now_ms)
cluster_webhook_start --sync-timeout 2
assert_eq 503 "$(wh_get /readyz | tail -n1)" "not ready before the timeout"
wait_until 15 bash -c "curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/readyz | grep -qx ok" || fail "never ready"
took=$(($(now_ms) - t0))
echo "ready without the API server after ${took} ms"
((took >= 1500)) || fail "ready after ${took} ms, before --sync-timeout"
assert_eq 1 "$(wh_metric wmap_webhook_sync_timeouts_total)"
assert_eq 0 "$(wh_metric wmap_webhook_cluster_synced)"
grep -q '"not synced with the API server after 2 s' "$E2E_TMP/wmap-webhook.log" || fail "no log line for the timeout"
# Meanwhile the catalog serves: a JobSet is stamped, a Widget has no definition yet.
review_file "$E2E_DIR/data/jobset-sample.yaml" "$E2E_TMP/jobset-review.json"
ms=$(wh_review_ms "$E2E_TMP/jobset-review.json") || fail "review failed while the API server is away"
echo "review without the API server: ${ms} ms (curl wall time, process start included)"

# The API server comes up: the webhook syncs by itself.
start_bg apiserver-sim "cmd:curl -sk --noproxy '*' https://127.0.0.1:$SIM_FIXED_PORT/healthz" 10 \
    "$SIM" --port "$SIM_FIXED_PORT" --tls-cert "$E2E_TMP/sim.crt" --tls-key "$E2E_TMP/sim.key" \
    --token e2e-fixed-token --kubeconfig-out "$E2E_TMP/kubeconfig2" --log "$E2E_TMP/requests2.log" \
    --service-port "wmap-system/wmap-webhook=$WH_PORT" --load "$E2E_TMP/crds.json" --load "$E2E_TMP/kartas.json"
wait_until 40 metric_is wmap_webhook_cluster_synced 1 || fail "not synced after the API server came up"
assert_eq 1 "$(wh_metric 'wmap_webhook_cluster_objects{resource="kartas"}')"
assert_eq 200 "$(wh_get /readyz | tail -n1)"
