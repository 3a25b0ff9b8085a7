# Two writers at once: while a slow webhook holds one update, another commits. As in the API
# server (GuaranteedUpdate), a write without a resourceVersion of its own (kubectl label's
# merge patch) is applied again to the new object, through admission again, and succeeds; a
# PUT of the object as it was read is 409 Conflict.
testhook_start sim-system sim-testhook --sleep 2
sim_start --service-port "sim-system/sim-testhook=$HOOK_PORT"
run_ok kc create -f - <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: c1}
data: {k: v}
Y
run_ok kc get cm c1 -o json
jq '.data.k = "v2"' <<<"$OUT" >"$E2E_TMP/as-read.json"
mutating_webhook slow /sleep Fail 10 configmaps "" v1 | kc apply -f - >/dev/null

start=$SECONDS
kc label cm c1 first=yes >"$E2E_TMP/first.out" 2>&1 &
first=$!
sleep 0.5
kc label cm c1 second=yes >"$E2E_TMP/second.out" 2>&1 &
second=$!
sleep 0.5
assert_fails kc replace -f "$E2E_TMP/as-read.json"
assert_contains "$OUT" 'Operation cannot be fulfilled on configmaps "c1": the object has been modified'
wait "$first" || fail "the first label failed: $(cat "$E2E_TMP/first.out")"
wait "$second" || fail "the second label, raced by the first, failed: $(cat "$E2E_TMP/second.out")"
assert_contains "$(cat "$E2E_TMP/second.out")" "configmap/c1 labeled"
run_ok kc get cm c1 -o json
assert_eq "yes yes v" "$(jq -r '"\(.metadata.labels.first) \(.metadata.labels.second) \(.data.k)"' <<<"$OUT")" \
    "both labels kept, the stale PUT lost"
((SECONDS - start <= 20)) || fail "the writes took $((SECONDS - start)) s (two 2 s webhook calls each at most)"
