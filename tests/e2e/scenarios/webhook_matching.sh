# Which webhooks are called: rules (groups, versions, resources, operations, scope, wildcards),
# namespaceSelector and objectSelector, validating webhooks after mutating ones, and
# reinvocation under IfNeeded.
testhook_start sim-system sim-testhook
sim_start --service-port "sim-system/sim-testhook=$HOOK_PORT"
calls() { grep -c "\"path\":\"$1\"" "$E2E_TMP/hook.requests" 2>/dev/null || true; }
run_ok kc create -f - <<'Y'
apiVersion: v1
kind: Namespace
metadata: {name: opted-in, labels: {wmap-test: "on"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: plain}
Y
run_ok kc apply -f - <<Y
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: selective}
webhooks:
- name: selective.sim.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  clientConfig:
    service: {namespace: sim-system, name: sim-testhook, path: /add-label}
    caBundle: $HOOK_CA_BUNDLE
  rules:
  - {operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["configmaps"], scope: "*"}
  namespaceSelector:
    matchExpressions: [{key: wmap-test, operator: In, values: ["on"]}]
  objectSelector:
    matchExpressions: [{key: skip, operator: DoesNotExist}]
Y
cm() { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s, labels: {%s}}\n' "$1" "$2" "${3:-}"; }
run_ok kc create -f - < <(cm a opted-in)
run_ok kc create -f - < <(cm b plain)
run_ok kc create -f - < <(cm c opted-in "skip: 'yes'")
label() { kc -n "$1" get cm "$2" -o json | jq -r '.metadata.labels["sim-testhook.example.com/injected"]'; }
assert_eq true "$(label opted-in a)" "namespace selected"
assert_eq null "$(label plain b)" "namespaceSelector excludes"
assert_eq null "$(label opted-in c)" "objectSelector excludes"
assert_eq 1 "$(calls /add-label)" "one call in all"
# Subresources are not matched by a plain resource rule.
run_ok kc -n opted-in patch cm a --type=merge -p '{"data":{"x":"1"}}'
assert_eq 2 "$(calls /add-label)" "UPDATE matched by *"
# Reinvocation: the first webhook (IfNeeded) runs again after a later one changed the object.
run_ok kc apply -f - <<Y
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: a-first}
webhooks:
- name: first.sim.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  reinvocationPolicy: IfNeeded
  clientConfig: {service: {namespace: sim-system, name: sim-testhook, path: /add-label}, caBundle: $HOOK_CA_BUNDLE}
  rules: [{operations: ["CREATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments"]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: b-second}
webhooks:
- name: second.sim.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  clientConfig: {service: {namespace: sim-system, name: sim-testhook, path: /add-template-label}, caBundle: $HOOK_CA_BUNDLE}
  rules: [{operations: ["CREATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments"]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: check}
webhooks:
- name: check.sim.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  clientConfig: {service: {namespace: sim-system, name: sim-testhook, path: /allow}, caBundle: $HOOK_CA_BUNDLE}
  rules: [{operations: ["CREATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments"]}]
Y
before=$(calls /add-label)
run_ok kc create -f - <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec: {containers: [{name: c, image: x}]}
Y
assert_eq $((before + 2)) "$(calls /add-label)" "IfNeeded webhook reinvoked once"
assert_eq 1 "$(calls /add-template-label)"
assert_eq 1 "$(calls /allow)" "validating webhook called"
final=$(grep '"path":"/allow"' "$E2E_TMP/hook.requests" | jq -r '.request.object.spec.template.metadata.labels["sim-testhook.example.com/injected"]')
assert_eq true "$final" "validating webhook sees the mutated object"
run_ok kc get deploy d -o json
assert_eq true "$(jq -r '.metadata.labels["sim-testhook.example.com/injected"]' <<<"$OUT")"
assert_eq true "$(jq -r '.spec.template.metadata.labels["sim-testhook.example.com/injected"]' <<<"$OUT")"
# A validating webhook's denial.
run_ok kc apply -f - <<Y
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: check}
webhooks:
- name: check.sim.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  clientConfig: {service: {namespace: sim-system, name: sim-testhook, path: /deny}, caBundle: $HOOK_CA_BUNDLE}
  rules: [{operations: ["DELETE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments"]}]
Y
assert_fails kc delete deploy d
assert_contains "$OUT" 'admission webhook "check.sim.example.com" denied the request: denied by sim-testhook'
run_ok kc get deploy d
