# Optimistic concurrency: PUT with a stale resourceVersion is 409 Conflict; JSON patch test
# ops; writes racing while a slow webhook holds one of them.
testhook_start sim-system sim-testhook --sleep 2
sim_start --service-port "sim-system/sim-testhook=$HOOK_PORT"
run_ok kc create -f - <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: c1}
data: {k: v}
Y
run_ok kc get cm c1 -o json
printf '%s' "$OUT" >"$E2E_TMP/stale.json"
run_ok kc label cm c1 touched=yes
assert_fails kc replace -f "$E2E_TMP/stale.json"
assert_contains "$OUT" 'Error from server (Conflict): error when replacing'
assert_contains "$OUT" 'Operation cannot be fulfilled on configmaps "c1": the object has been modified; please apply your changes to the latest version and try again'
# With the current resourceVersion the same replace works.
run_ok kc get cm c1 -o json
jq '.data.k = "v2"' <<<"$OUT" >"$E2E_TMP/fresh.json"
run_ok kc replace -f "$E2E_TMP/fresh.json"
assert_eq v2 "$(jp '{.data.k}' cm c1)"
# The Status body of the conflict, straight from the API.
stale_rv=$(jq -r .metadata.resourceVersion "$E2E_TMP/stale.json")
resp=$(sim_curl PUT /api/v1/namespaces/default/configmaps/c1 -H 'Content-Type: application/json' --data-binary @"$E2E_TMP/stale.json")
assert_eq 409 "$(tail -n1 <<<"$resp")"
body=$(head -n1 <<<"$resp")
assert_eq '{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409,"details":{"name":"c1","kind":"configmaps"}}' \
    "$(jq -c '{kind,apiVersion,status,reason,code,details}' <<<"$body")"
# A JSON patch guarded by a test of the resourceVersion.
rv=$(jp '{.metadata.resourceVersion}' cm c1)
run_ok kc patch cm c1 --type=json -p "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"$rv\"},{\"op\":\"replace\",\"path\":\"/data/k\",\"value\":\"v3\"}]"
assert_fails kc patch cm c1 --type=json -p "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"$stale_rv\"},{\"op\":\"replace\",\"path\":\"/data/k\",\"value\":\"v4\"}]"
assert_contains "$OUT" "test failed"
assert_eq v3 "$(jp '{.data.k}' cm c1)" "failed test op changed nothing"
# A merge patch that pins a stale resourceVersion is a conflict too.
assert_fails kc patch cm c1 --type=merge -p "{\"metadata\":{\"resourceVersion\":\"$stale_rv\"},\"data\":{\"k\":\"v5\"}}"
assert_contains "$OUT" "Conflict"

# Two writers at once: while a slow webhook holds one update, another commits. As in the API
# server (GuaranteedUpdate), a write without a resourceVersion of its own (kubectl label's
# merge patch) is applied again to the new object, through admission again, and succeeds; a
# PUT of the object as it was read is 409 Conflict.
run_ok kc get cm c1 -o json
jq '.data.k = "v6"' <<<"$OUT" >"$E2E_TMP/as-read.json"
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
assert_eq "yes yes v3" "$(jq -r '"\(.metadata.labels.first) \(.metadata.labels.second) \(.data.k)"' <<<"$OUT")" \
    "both labels kept, the stale PUT lost"
((SECONDS - start <= 20)) || fail "the writes took $((SECONDS - start)) s (two 2 s webhook calls each at most)"
