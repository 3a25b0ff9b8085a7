# A rotated service-account token: wmap-webhook runs with a kubeconfig whose user reads a
# tokenFile (as a projected token in a pod is read), holding a token that expires after 6 s.
# The file is replaced with a fresh token only 3 s after that: meanwhile the API server
# answers 401; the webhook reads the file again (every request, and once more on a 401), keeps
# answering reviews from the last good set, keeps or regains the Lease, and takes up a Karta
# created after the rotation.
source "$E2E_DIR/cluster-helpers.sh"

webhook_certs wmap-system wmap-webhook
WH_PORT=$(free_port)
export WH_PORT
stub_builtins "$E2E_TMP/stubs.yaml"
sim_start --token-min-expiry 2 --service-port "wmap-system/wmap-webhook=$WH_PORT" --load "$E2E_TMP/stubs.yaml"
run_ok kc apply -k "$REPO_ROOT/deploy/"
run_ok kc apply -f "$CLUSTER_DATA/widget-crd.yaml"
wait_until 10 kc get widgets
run_ok kc create token wmap-webhook -n wmap-system --duration=6s
printf '%s\n' "$OUT" >"$E2E_TMP/token"
expires=$((SECONDS + 6))
cat >"$E2E_TMP/sa.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: sim, cluster: {server: "$SIM_URL", certificate-authority: "$SIM_PKI/ca.crt"}}]
users: [{name: wmap-webhook, user: {tokenFile: "$E2E_TMP/token"}}]
contexts: [{name: sa, context: {cluster: sim, user: wmap-webhook, namespace: wmap-system}}]
current-context: sa
KC
start_bg wmap-webhook "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/readyz | grep -qx ok" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port "$WH_PORT" \
    --kubeconfig "$E2E_TMP/sa.kubeconfig" --sync-timeout 30
wait_until 10 metric_is wmap_webhook_leader 1 || fail "no Lease"
review_file "$CLUSTER_DATA/widget.yaml" "$E2E_TMP/review.json"
load_start "$E2E_TMP/review.json"

# Let the token expire, then rotate it 3 s late.
while ((SECONDS < expires + 3)); do sleep 0.2; done
run_ok kc create token wmap-webhook -n wmap-system --duration=3600s
printf '%s\n' "$OUT" >"$E2E_TMP/token.new"
mv "$E2E_TMP/token.new" "$E2E_TMP/token"
grep -q ' 401 ' "$E2E_TMP/requests.log" || fail "the expired token was never refused (the test did not test anything)"
failures=$(wh_metric wmap_webhook_leader_renew_failures_total)
echo "renewals refused while the token was expired: $failures"
((failures > 0)) || fail "no renewal failed while the token was expired"

# With the fresh token: the Lease is held, and a new Karta is taken up.
wait_until 10 metric_is wmap_webhook_leader 1 || fail "the Lease was not kept or regained"
run_ok kc create -f "$CLUSTER_DATA/widget-karta.yaml"
wait_until 30 metric_is 'wmap_webhook_cluster_objects{resource="kartas"}' 1 || fail "the Karta was not taken up after the rotation"
wait_until 15 mwc_has example.com widgets || fail "widgets not in the rules after the rotation"
load_stop
echo "reviews through the rotation: $LOAD_RESULT"
[[ $(jq -r .failures <<<"$LOAD_RESULT") == 0 ]] || fail "reviews failed: $LOAD_RESULT"
