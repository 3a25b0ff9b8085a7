# Faults of the API server against wmap-webhook watching the simulator, with AdmissionReviews
# sent to the webhook all along (review-load.py, one every 20 ms): every one must be answered
# 200 with the Widget's patch (the last good definitions; past its 250 ms budget the webhook
# would fail open without a patch, which counts as a failure), and the webhook must take up
# a change to the Karta after each fault by itself:
#   - a burst of 429 (Retry-After: 1) and one of 500 on the Karta list/watch;
#   - a watch cut in the middle of an event (half a line, then the connection drops).
# Latencies are printed per phase (p50/p99/max in ms). The outages are in
# webhook-cluster-outage.
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

load_start "$E2E_TMP/review.json" --expect-patch
karta_touch 0
phase "no fault"

# 429 and 500 bursts: the watch is cut so that the webhook's next requests meet them.
for st in 429 500; do
    load_start "$E2E_TMP/review.json" --expect-patch
    restarts=$(wh_metric 'wmap_webhook_watch_restarts_total{resource="kartas"}')
    sim_fault "{\"status\":$st,\"count\":3,\"retryAfter\":1,\"path\":\"/apis/run.ai/v1alpha1/kartas\"}"
    sim_fault "{\"cutWatch\":1,\"path\":\"/apis/run.ai/v1alpha1/kartas\"}"
    karta_touch "burst-$st" 40
    phase "burst of $st"
    (($(wh_metric 'wmap_webhook_watch_restarts_total{resource="kartas"}') > restarts)) || fail "no watch restart after $st"
    grep -q "\"status\":$st" "$E2E_TMP/wmap-webhook.log" || fail "the $st answers were not logged"
done
sim_curl GET /sim/faults | grep -q '"count": *0\|"count":0' || fail "the bursts were not used up"

# A watch cut in the middle of an event: the half line is never read; the event comes again.
load_start "$E2E_TMP/review.json" --expect-patch
sim_fault '{"cutWatch":1,"path":"/apis/run.ai/v1alpha1/kartas"}'
karta_touch cut
phase "watch cut mid-event"
assert_eq 0 "$(wh_metric 'wmap_webhook_watch_bad_events_total{resource="kartas"}')" "a half event was read"

