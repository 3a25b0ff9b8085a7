# A webhook slower than timeoutSeconds: Fail rejects with the real message, Ignore admits the
# object unpatched.
testhook_start sim-system sim-testhook --sleep 6
sim_start --service-port "sim-system/sim-testhook=$HOOK_PORT"
mutating_webhook slow /sleep Fail 1 configmaps "" v1 | kc apply -f - >/dev/null
cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n' "$1"; }
start=$SECONDS
assert_fails kc create -f - < <(cm c1)
assert_contains "$OUT" 'Error from server (InternalError): error when creating "STDIN": Internal error occurred: failed calling webhook "slow.sim.example.com": failed to call webhook: Post "https://sim-testhook.sim-system.svc:443/sleep?timeout=1s": context deadline exceeded'
((SECONDS - start <= 4)) || fail "the call was not cut at timeoutSeconds (took $((SECONDS - start))s, the hook sleeps 6s)"
assert_fails kc get cm c1
mutating_webhook slow /sleep Ignore 1 configmaps "" v1 | kc apply -f - >/dev/null
run_ok kc create -f - < <(cm c2)
assert_contains "$OUT" "configmap/c2 created"
assert_eq null "$(kc get cm c2 -o json | jq -r '.metadata.labels["sim-testhook.example.com/injected"]')" "admitted unpatched"
grep -q 'FAILOPEN' "$E2E_TMP/requests.log" || fail "fail-open not logged"
