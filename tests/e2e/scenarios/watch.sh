# Watch: kubectl wait for a deletion and for a field, kubectl get -w, and the raw event stream
# (ADDED/MODIFIED/DELETED with resourceVersions, resume from a resourceVersion).
sim_start
cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n' "$1"; }
run_ok kc create -f - < <(cm w1)
# (Background helpers are waited for by pid: a bare `wait` would wait for the simulator too.)
# The deletion waits for kubectl's watch request: on a loaded machine kubectl can take longer
# than any fixed sleep to start, and `wait --for=delete` of an object already gone prints nothing.
(wait_until 10 grep -q 'configmaps?.*fieldSelector=metadata.name%3Dw1.*watch=true' "$E2E_TMP/requests.log"
 kc delete cm w1 >/dev/null) &
bg=$!
run_ok kc wait --for=delete cm/w1 --timeout=10s
wait "$bg"
assert_contains "$OUT" "condition met"
run_ok kc create -f - < <(cm w2)
(sleep 0.5; kc label cm w2 ready=yes >/dev/null) &
bg=$!
run_ok kc wait --for=jsonpath='{.metadata.labels.ready}'=yes cm/w2 --timeout=10s
wait "$bg"
# kubectl get -w prints the initial rows, then one per change.
"$KUBECTL" get cm -w --no-headers >"$E2E_TMP/getw.out" 2>&1 &
watcher=$!
wait_until 10 grep -q '^w2 ' "$E2E_TMP/getw.out" || fail "no initial row: $(cat "$E2E_TMP/getw.out")"
kc create -f - < <(cm w3) >/dev/null
kc label cm w3 a=b >/dev/null
kc delete cm w3 >/dev/null
rows() { [[ $(grep -c '^w3 ' "$E2E_TMP/getw.out") -ge 3 ]]; }
wait_until 10 rows || true
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
assert_eq 4 "$(grep -c '^w[23] ' "$E2E_TMP/getw.out")" "rows: w2 initially, then w3 added, modified, deleted"
# The wire format, resumed from a known resourceVersion.
rv=$(jp '{.metadata.resourceVersion}' cm w2)
(sleep 0.3; kc label cm w2 step=two >/dev/null; kc delete cm w2 >/dev/null) &
bg=$!
stream=$(curl -sS -N --max-time 6 --cacert "$SIM_PKI/ca.crt" -H "Authorization: Bearer $SIM_TOKEN" \
    "$SIM_URL/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=$rv&timeoutSeconds=3" || true)
wait "$bg"
# w3's three events come first (they happened after $rv too), then w2's.
assert_eq "w3:ADDED w3:MODIFIED w3:DELETED w2:MODIFIED w2:DELETED" \
    "$(jq -r '.object.metadata.name + ":" + .type' <<<"$stream" | tr '\n' ' ' | sed 's/ $//')" "events after rv $rv"
rv_mod=$(jq -r 'select(.type=="MODIFIED" and .object.metadata.name=="w2") | .object.metadata.resourceVersion' <<<"$stream")
rv_del=$(jq -r 'select(.type=="DELETED" and .object.metadata.name=="w2") | .object.metadata.resourceVersion' <<<"$stream")
((rv < rv_mod && rv_mod < rv_del)) || fail "resourceVersions not increasing: $rv $rv_mod $rv_del"
