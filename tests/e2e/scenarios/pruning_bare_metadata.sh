# kubernetes/kubernetes#103739: a CRD whose pod template `metadata` is a bare object. Labels a
# webhook adds there are pruned silently after mutation; the user's own are refused under
# Strict validation and dropped under --validate=false. Top-level metadata is always ObjectMeta.
testhook_start sim-system sim-testhook
sim_start --service-port "sim-system/sim-testhook=$HOOK_PORT"
run_ok kc apply -f "$E2E_DIR/data/bare-metadata-crd.yaml"
mutating_webhook tmpl /add-template-label Fail 5 barejobs bare.sim.example.com v1 | kc apply -f - >/dev/null
cat >"$E2E_TMP/bj.yaml" <<'Y'
apiVersion: bare.sim.example.com/v1
kind: BareJob
metadata: {name: bj1, labels: {top: kept}}
spec:
  replicas: 2
  template:
    spec:
      containers: [{name: c, image: busybox}]
Y
run_ok kc create -f "$E2E_TMP/bj.yaml"
assert_not_contains "$OUT" "Warning" "webhook-added fields are pruned without a word"
# The webhook did send the patch...
req=$(tail -n1 "$E2E_TMP/hook.requests")
assert_eq CREATE "$(jq -r .request.operation <<<"$req")"
# ...but the stored object has no template labels, while top-level labels are kept.
run_ok kc get bj bj1 -o json
assert_eq "{}" "$(jq -c .spec.template.metadata <<<"$OUT")" "template metadata kept, its labels pruned"
assert_eq kept "$(jq -r .metadata.labels.top <<<"$OUT")" "root metadata is ObjectMeta"
assert_eq busybox "$(jq -r '.spec.template.spec.containers[0].image' <<<"$OUT")" "preserve-unknown-fields subtree kept"
# The same labels written by the user: Strict refuses, Ignore drops.
awk '{print} /^  template:$/ {print "    metadata: {labels: {mine: \"yes\"}}"}' "$E2E_TMP/bj.yaml" | sed 's/name: bj1/name: bj2/' >"$E2E_TMP/bj2.yaml"
assert_fails kc create -f "$E2E_TMP/bj2.yaml"
assert_contains "$OUT" 'BareJob in version "v1" cannot be handled as a BareJob: strict decoding error: unknown field "spec.template.metadata.labels"'
run_ok kc create -f "$E2E_TMP/bj2.yaml" --validate=false
assert_eq '{}' "$(kc get bj bj2 -o json | jq -c .spec.template.metadata)" "user template labels dropped"
# With embedded ObjectMeta declared (as JobSet does) the same webhook's label survives.
kc get crd barejobs.bare.sim.example.com -o json |
    jq '.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.template.properties.metadata = {"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}}}}' >"$E2E_TMP/fixed.json"
run_ok kc replace -f "$E2E_TMP/fixed.json"
sed 's/name: bj1/name: bj3/' "$E2E_TMP/bj.yaml" >"$E2E_TMP/bj3.yaml"
run_ok kc create -f "$E2E_TMP/bj3.yaml"
assert_eq true "$(kc get bj bj3 -o json | jq -r '.spec.template.metadata.labels["sim-testhook.example.com/injected"]')" \
    "declared template labels survive"
