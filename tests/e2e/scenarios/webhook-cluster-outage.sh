# wmap-webhook watching the simulator through an API server outage, with AdmissionReviews
# sent to the webhook all along (review-load.py, one every 20 ms): every one must be answered
# 200 with the Widget's patch (the last good definitions; past its 250 ms budget the webhook
# would fail open without a patch, which counts as a failure), and the webhook must take up a
# change to the Karta afterwards by itself:
#   - the API server hung (SIGSTOP) for 12 s: "down for a minute", shortened for CI;
#   - the API server killed and started again 10 s later on the same port.
# Latencies are printed per phase (p50/p99/max in ms). The bursts and the cut watch are in
# webhook-cluster-faults.
source "$E2E_DIR/cluster-helpers.sh"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=sim" \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout "$E2E_TMP/sim.key" -out "$E2E_TMP/sim.crt" 2>/dev/null
SIM_FIXED_PORT=$(free_port)
SIM_ARGS=(--port "$SIM_FIXED_PORT" --tls-cert "$E2E_TMP/sim.crt" --tls-key "$E2E_TMP/sim.key" --token e2e-fixed-token)
cluster_setup "${SIM_ARGS[@]}"
run_ok kc create -f "$CLUSTER_DATA/widget-karta.yaml"
cluster_webhook_start --sync-timeout 30
wait_until 10 metric_is 'wmap_webhook_cluster_objects{resource="kartas"}' 1 || fail "not synced"
review_file "$CLUSTER_DATA/widget.yaml" "$E2E_TMP/review.json"

swaps() { wh_metric 'wmap_webhook_definition_swaps_total{result="success"}'; }
# karta_touch N: changes the Karta (a label) and waits until the webhook has swapped it in.
karta_touch() {
    local before
    before=$(swaps)
    run_ok kc label karta example-com-widget-v1 "touch=$1" --overwrite
    wait_until "${2:-20}" metric_gt 'wmap_webhook_definition_swaps_total{result="success"}' "$before" || fail "change $1 not taken up after the fault"
}
phase() {
    local name=$1 res
    load_stop
    res=$LOAD_RESULT
    echo "$name: $res"
    [[ $(jq -r .failures <<<"$res") == 0 ]] || fail "$name: reviews failed: $res"
    (($(jq -r .count <<<"$res") > 0)) || fail "$name: no review was sent"
}

# The API server hangs for 12 s (connections stay open, nothing answers).
load_start "$E2E_TMP/review.json" --expect-patch
kill -STOP "$apiserver_sim_PID"
sleep 12
kill -CONT "$apiserver_sim_PID"
karta_touch after-hang 40
phase "API server hung 12 s"

# The API server goes away for 10 s and comes back on the same port (same certificate and
# token); its objects are loaded again.
kc get crd widgets.example.com kartas.run.ai -o json | jq '.items[] |= del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .status)' >"$E2E_TMP/crds.json"
kc get kartas -o json | jq '.items[] |= del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp)' >"$E2E_TMP/kartas.json"
kc get mutatingwebhookconfiguration wmap-webhook -o json | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp)' >"$E2E_TMP/mwc.json"
load_start "$E2E_TMP/review.json" --expect-patch
kill -KILL "$apiserver_sim_PID"
wait "$apiserver_sim_PID" 2>/dev/null || true
sleep 10
start_bg apiserver-sim "cmd:curl -sk --noproxy '*' https://127.0.0.1:$SIM_FIXED_PORT/healthz" 10 \
    "$SIM" "${SIM_ARGS[@]}" --kubeconfig-out "$E2E_TMP/kubeconfig2" --log "$E2E_TMP/requests2.log" \
    --service-port "wmap-system/wmap-webhook=$WH_PORT" --load "$E2E_TMP/crds.json" \
    --load "$E2E_TMP/kartas.json" --load "$E2E_TMP/mwc.json"
wait_until 40 grep -q 'kartas?watch=1.* 200 ' "$E2E_TMP/requests2.log" \
    || fail "the webhook did not watch again after the API server came back"
phase "API server down 10 s"
# Through the restarted API server, a Widget is still stamped.
sed 's/name: w1$/name: after-restart/' "$CLUSTER_DATA/widget.yaml" >"$E2E_TMP/w.yaml"
run_ok kc create -f "$E2E_TMP/w.yaml"
assert_eq role "$(kc get widget after-restart -o json | jq -r '.spec.roles[0].template.metadata.labels["wmap.io/component"]')"
