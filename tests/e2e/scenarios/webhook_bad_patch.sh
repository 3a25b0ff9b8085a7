# A patch that decodes but does not apply rejects the request under both failure policies,
# as the real dispatcher does; a webhook that cannot be reached obeys failurePolicy.
testhook_start sim-system sim-testhook
sim_start --service-port "sim-system/sim-testhook=$HOOK_PORT"
cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n' "$1"; }
for policy in Fail Ignore; do
    mutating_webhook broken /bad-patch "$policy" 5 configmaps "" v1 | kc apply -f - >/dev/null
    assert_fails kc create -f - < <(cm "c-$policy")
    assert_contains "$OUT" 'Error from server (InternalError): error when creating "STDIN": Internal error occurred: replace operation does not apply: doc is missing path: /spec/doesNotExist/field: missing value' "policy $policy"
    assert_fails kc get cm "c-$policy"
done
run_ok kc delete mutatingwebhookconfiguration broken
# The wrong CA in caBundle: a TLS failure is a call error.
good=$HOOK_CA_BUNDLE
webhook_certs sim-system other-ca
HOOK_CA_BUNDLE=$CA_BUNDLE
mutating_webhook badca /add-label Fail 5 configmaps "" v1 | kc apply -f - >/dev/null
assert_fails kc create -f - < <(cm c-ca)
assert_contains "$OUT" 'failed calling webhook "badca.sim.example.com": failed to call webhook: Post "https://sim-testhook.sim-system.svc:443/add-label?timeout=5s": tls: failed to verify certificate: x509: certificate signed by unknown authority'
mutating_webhook badca /add-label Ignore 5 configmaps "" v1 | kc apply -f - >/dev/null
run_ok kc create -f - < <(cm c-ca)
run_ok kc delete mutatingwebhookconfiguration badca
# A service the simulator has no port for.
HOOK_CA_BUNDLE=$good
mutating_webhook nosvc /add-label Fail 5 configmaps "" v1 sim-system missing | kc apply -f - >/dev/null
assert_fails kc create -f - < <(cm c-svc)
assert_contains "$OUT" 'failed calling webhook "nosvc.sim.example.com": failed to call webhook: Post "https://missing.sim-system.svc:443/add-label?timeout=5s": service "missing" not found'
