# deploy/'s kustomize overlays with the real kubectl (its built-in kustomize, offline):
# - every kustomization renders; deploy/ renders exactly deploy/base/;
# - the cert-manager overlay: refused while cert-manager's CRDs are absent, accepted by the
#   simulator once they are loaded (stand-ins), its Issuers and Certificate stored;
# - the labelled-namespaces overlay, applied, then wmap-webhook running behind the simulator:
#   a JobSet created in a namespace labelled wmap.io/enabled=true is stamped, one in an
#   unlabelled namespace is stored as written.
: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
[[ -x $WEBHOOK ]] || fail "webhook not built: $WEBHOOK"
D=$REPO_ROOT/deploy

for k in "$D" "$D/base" "$D/overlays/cert-manager" "$D/overlays/labelled-namespaces" "$D/overlays/monitoring"; do
    run_ok kc kustomize "$k"
    printf '%s\n' "$OUT" >"$E2E_TMP/$(basename "$k").yaml"
done
assert_eq "$(cat "$E2E_TMP/base.yaml")" "$(cat "$E2E_TMP/deploy.yaml")" "deploy/ renders deploy/base/"
kinds() { python3 -c 'import sys, yaml; print(" ".join(sorted(d["kind"] + "/" + d["metadata"]["name"] for d in yaml.safe_load_all(open(sys.argv[1])) if d)))' "$1"; }
base_kinds=$(kinds "$E2E_TMP/base.yaml")
assert_eq 20 "$(wc -w <<<"$base_kinds")" "objects in the base (with the audit's, the gangs controller's and the workload metrics' ClusterRoles and bindings; no policy ConfigMap)"
assert_eq 24 "$(kinds "$E2E_TMP/cert-manager.yaml" | wc -w)" "objects in the cert-manager overlay"
# The monitoring overlay: the base, a ServiceMonitor for /metrics/workloads with honorLabels,
# the recording rules and the Grafana dashboard (a ConfigMap the sidecar picks up).
assert_eq 23 "$(kinds "$E2E_TMP/monitoring.yaml" | wc -w)" "objects in the monitoring overlay"
python3 - "$E2E_TMP/monitoring.yaml" <<'P' || fail "the monitoring overlay"
import json, sys, yaml
docs = {d["kind"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
ep = docs["ServiceMonitor"]["spec"]["endpoints"][0]
assert ep["path"] == "/metrics/workloads" and ep["honorLabels"] is True, ep
cm = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ConfigMap"][0]
assert cm["metadata"]["labels"]["grafana_dashboard"] == "1", cm["metadata"]
dash = json.loads(cm["data"]["wmap-workloads.json"])
assert dash["uid"] == "wmap-workloads" and len(dash["panels"]) >= 5, dash.get("uid")
assert [g["name"] for g in docs["PrometheusRule"]["spec"]["groups"]] == ["wmap-workloads"]
P
for o in Issuer/wmap-selfsigned Issuer/wmap-ca Certificate/wmap-webhook-ca Certificate/wmap-webhook-serving; do
    assert_contains "$(kinds "$E2E_TMP/cert-manager.yaml")" "$o"
done
# The image is set in one place (deploy/base/kustomization.yaml images:).
assert_contains "$(grep 'image:' "$E2E_TMP/base.yaml")" "ghcr.io/wmap-project/wmap-webhook:0.1.0"

WH_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"

# cert-manager overlay: without cert-manager's CRDs kubectl names the missing kinds (with
# validation off: the simulator serves no OpenAPI documents for kubectl's own check).
assert_fails kc apply --validate=false -k "$D/overlays/cert-manager"
assert_contains "$OUT" 'no matches for kind "Certificate" in version "cert-manager.io/v1"'
assert_contains "$OUT" 'no matches for kind "Issuer" in version "cert-manager.io/v1"'
run_ok kc apply -f "$E2E_DIR/data/cert-manager-crds.yaml"
wait_until 10 kc get certificates.cert-manager.io -A || fail "Certificate CRD not served"
run_ok kc apply -k "$D/overlays/cert-manager"
for o in issuer.cert-manager.io/wmap-selfsigned issuer.cert-manager.io/wmap-ca \
    certificate.cert-manager.io/wmap-webhook-ca certificate.cert-manager.io/wmap-webhook-serving \
    deployment.apps/wmap-webhook mutatingwebhookconfiguration.admissionregistration.k8s.io/wmap-webhook; do
    assert_contains "$OUT" "$o"
done
run_ok kc -n wmap-system get certificate wmap-webhook-serving -o json
assert_eq wmap-webhook-tls "$(jq -r .spec.secretName <<<"$OUT")" "the serving Certificate fills the Secret the Deployment mounts"
assert_eq "$(jq -r '.spec.template.spec.volumes[] | select(.name == "tls") | .secret.secretName' <<<"$(kc -n wmap-system get deployment wmap-webhook -o json)")" \
    "$(jq -r .spec.secretName <<<"$OUT")"
run_ok kc get validatingwebhookconfiguration wmap-webhook -o json
assert_eq wmap-system/wmap-webhook-serving "$(jq -r '.metadata.annotations["cert-manager.io/inject-ca-from"]' <<<"$OUT")"

# labelled-namespaces overlay applied over it: both workload webhooks get the label selector.
run_ok kc apply -k "$D/overlays/labelled-namespaces"
run_ok kc get mutatingwebhookconfiguration wmap-webhook -o json
assert_eq true "$(jq -r '.webhooks[0].namespaceSelector.matchLabels["wmap.io/enabled"]' <<<"$OUT")"
assert_contains "$(jq -c '.webhooks[0].namespaceSelector.matchExpressions' <<<"$OUT")" '"kube-system"'
run_ok kc get validatingwebhookconfiguration wmap-webhook -o json
assert_eq true "$(jq -r '.webhooks[0].namespaceSelector.matchLabels["wmap.io/enabled"]' <<<"$OUT")" "policies.wmap.io"
assert_eq true "$(jq -r '.webhooks[2].namespaceSelector.matchLabels["wmap.io/enabled"]' <<<"$OUT")" "advisories.wmap.io"
assert_eq null "$(jq -r '.webhooks[1].namespaceSelector.matchLabels' <<<"$OUT")" "definitions.wmap.io left alone"

# The webhook behind it: only the labelled namespace's JobSet is stamped.
webhook_certs wmap-system wmap-webhook
run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 kc get jobsets || fail "JobSet CRD not served"
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json -p "[
    {\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},
    {\"op\":\"add\",\"path\":\"/webhooks/0/rules\",\"value\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"jobset.x-k8s.io\"],\"apiVersions\":[\"v1alpha2\"],\"resources\":[\"jobsets\"],\"scope\":\"Namespaced\"}]}]"
start_bg wmap-webhook "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/readyz" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port "$WH_PORT" --no-cluster
run_ok kc create namespace team-on
run_ok kc label namespace team-on wmap.io/enabled=true
run_ok kc create namespace team-off
run_ok kc -n team-on create -f "$E2E_DIR/data/jobset-sample.yaml"
run_ok kc -n team-off create -f "$E2E_DIR/data/jobset-sample.yaml"
label='.spec.replicatedJobs[0].template.spec.template.metadata.labels["wmap.io/workload-name"]'
assert_eq train "$(kc -n team-on get jobset train -o json | jq -r "$label")" "stamped in the labelled namespace"
assert_eq null "$(kc -n team-off get jobset train -o json | jq -r "$label")" "not stamped in the unlabelled namespace"
assert_eq 1 "$(grep -c '"object":"team-on/train"' "$E2E_TMP/wmap-webhook.log")" "one review, from team-on"
assert_eq 0 "$(grep -c '"object":"team-off/train"' "$E2E_TMP/wmap-webhook.log" || true)" "no review from team-off"
