# kubectl wmap install / uninstall with the real kubectl against the simulator:
# - `kubectl wmap install | kubectl apply -f -`: every object accepted; the Secret holds the
#   serving key and certificate, the caBundle of every webhook verifies that certificate for
#   wmap-webhook.NAMESPACE.svc, and the CA's key is printed nowhere;
# - the flags land where they should (namespace everywhere, image, replicas, scheduler, queue);
# - --cert-manager: cert-manager's objects instead of the Secret and caBundles;
# - bad flags are usage errors (exit 2) that print no manifests;
# - `kubectl wmap uninstall | kubectl delete -f -` leaves no webhook configuration behind.
plugin_on_path || fail "plugin not built: $PLUGIN"
sim_start

run_ok bash -c "kubectl wmap install -n ml-infra --image reg.example.com/wmap-webhook:9.9 --replicas 3 --gang-scheduler kai --queue gpu-q >'$E2E_TMP/install.yaml'"
run_ok kc apply -f "$E2E_TMP/install.yaml"
for o in namespace/ml-infra secret/wmap-webhook-tls customresourcedefinition.apiextensions.k8s.io/kartas.run.ai \
    serviceaccount/wmap-webhook deployment.apps/wmap-webhook service/wmap-webhook \
    poddisruptionbudget.policy/wmap-webhook networkpolicy.networking.k8s.io/wmap-webhook \
    mutatingwebhookconfiguration.admissionregistration.k8s.io/wmap-webhook \
    validatingwebhookconfiguration.admissionregistration.k8s.io/wmap-webhook; do
    assert_contains "$OUT" "$o created"
done
assert_not_contains "$(cat "$E2E_TMP/install.yaml")" "wmap-system" "the namespace replaced everywhere"
assert_not_contains "$(cat "$E2E_TMP/install.yaml")" "PRIVATE KEY" "keys only base64 in the Secret"
assert_fails kc get namespace wmap-system

run_ok kc -n ml-infra get deployment wmap-webhook -o json
assert_eq 3 "$(jq -r .spec.replicas <<<"$OUT")"
assert_eq reg.example.com/wmap-webhook:9.9 "$(jq -r '.spec.template.spec.containers[0].image' <<<"$OUT")"
args=$(jq -r '.spec.template.spec.containers[0].args | join(" ")' <<<"$OUT")
assert_contains "$args" "--gang-scheduler=kai"
assert_contains "$args" "--queue=gpu-q"
assert_eq 1 "$(jq '[.spec.template.spec.containers[0].args[] | select(startswith("--gang-scheduler"))] | length' <<<"$OUT")" "one --gang-scheduler"
run_ok kc get clusterrolebinding wmap-webhook -o json
assert_eq ml-infra "$(jq -r '.subjects[0].namespace' <<<"$OUT")"

# The certificates: the stored Secret against the stored caBundles.
run_ok kc -n ml-infra get secret wmap-webhook-tls -o json
assert_eq kubernetes.io/tls "$(jq -r .type <<<"$OUT")"
jq -r '.data["tls.crt"]' <<<"$OUT" | base64 -d >"$E2E_TMP/tls.crt"
jq -r '.data["tls.key"]' <<<"$OUT" | base64 -d >"$E2E_TMP/tls.key"
# The key matches the certificate.
assert_eq "$(openssl x509 -in "$E2E_TMP/tls.crt" -noout -pubkey)" "$(openssl pkey -in "$E2E_TMP/tls.key" -pubout)" "key pairs with the certificate"
for cfg in mutatingwebhookconfiguration validatingwebhookconfiguration; do
    run_ok kc get "$cfg" wmap-webhook -o json
    conf=$OUT
    n=$(jq '.webhooks | length' <<<"$conf")
    for ((i = 0; i < n; i++)); do
        jq -r ".webhooks[$i].clientConfig.caBundle" <<<"$conf" | base64 -d >"$E2E_TMP/ca.crt"
        assert_eq ml-infra "$(jq -r ".webhooks[$i].clientConfig.service.namespace" <<<"$conf")"
        run_ok openssl verify -CAfile "$E2E_TMP/ca.crt" -purpose sslserver \
            -verify_hostname wmap-webhook.ml-infra.svc "$E2E_TMP/tls.crt"
    done
done
assert_contains "$(kc get mutatingwebhookconfiguration wmap-webhook -o json | jq -c '.webhooks[0].namespaceSelector')" '"ml-infra"' "own namespace excluded"
assert_eq "$(jq -r '.data["ca.crt"]' <<<"$(kc -n ml-infra get secret wmap-webhook-tls -o json)")" \
    "$(jq -r '.webhooks[0].clientConfig.caBundle' <<<"$conf")" "the Secret's ca.crt is the caBundle"
# Install again, the Secret in place: the same CA and certificate (re-applying changes nothing).
run_ok bash -c "kubectl wmap install -n ml-infra --image reg.example.com/wmap-webhook:9.9 --replicas 3 --gang-scheduler kai --queue gpu-q 2>'$E2E_TMP/again.err' >'$E2E_TMP/again.yaml'"
assert_contains "$(cat "$E2E_TMP/again.err")" "keeping the CA and serving certificate of Secret ml-infra/wmap-webhook-tls"
assert_eq "$(cat "$E2E_TMP/install.yaml")" "$(cat "$E2E_TMP/again.yaml")" "a second install prints the same manifests"
run_ok kc apply -f "$E2E_TMP/again.yaml"
assert_not_contains "$OUT" "secret/wmap-webhook-tls configured" "the Secret changed on re-apply"
assert_not_contains "$OUT" "mutatingwebhookconfiguration.admissionregistration.k8s.io/wmap-webhook configured" "a caBundle changed on re-apply"
# --new-ca reads nothing and makes another CA; so does a namespace without the Secret.
run_ok bash -c "kubectl wmap install -n ml-infra --new-ca | grep -m1 caBundle"
assert_not_contains "$(grep -m1 caBundle "$E2E_TMP/install.yaml")" "${OUT#*caBundle: }"
run_ok bash -c "kubectl wmap install -n other-ns 2>&1 >/dev/null"
assert_contains "$OUT" "no Secret other-ns/wmap-webhook-tls in the cluster: a new CA"
# No cluster configuration: new certificates, said on stderr.
run_ok bash -c "KUBECONFIG=/nonexistent HOME=/nonexistent kubectl wmap install 2>&1 >/dev/null"
assert_contains "$OUT" "no cluster configuration"
# A configured cluster that cannot be read is an error, not a silent new CA.
assert_fails bash -c "kubectl wmap install --server https://127.0.0.1:1 --request-timeout 2s >/dev/null"

# An expiring serving certificate (10 days left): a rotation. The new CA and certificate, the
# old CA kept in every caBundle (the pods still serving the old certificate stay trusted).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 20 -subj /CN=old-ca \
    -keyout "$E2E_TMP/old-ca.key" -out "$E2E_TMP/old-ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=wmap-webhook.rot.svc \
    -keyout "$E2E_TMP/old.key" -out "$E2E_TMP/old.csr" 2>/dev/null
printf 'subjectAltName=DNS:wmap-webhook.rot.svc\nextendedKeyUsage=serverAuth\n' >"$E2E_TMP/old.ext"
run_ok openssl x509 -req -in "$E2E_TMP/old.csr" -CA "$E2E_TMP/old-ca.crt" -CAkey "$E2E_TMP/old-ca.key" \
    -CAcreateserial -days 10 -extfile "$E2E_TMP/old.ext" -out "$E2E_TMP/old.crt"
run_ok kc create namespace rot
run_ok kc -n rot create secret generic wmap-webhook-tls --type=kubernetes.io/tls --from-file=tls.crt="$E2E_TMP/old.crt" \
    --from-file=tls.key="$E2E_TMP/old.key" --from-file=ca.crt="$E2E_TMP/old-ca.crt"
run_ok bash -c "kubectl wmap install -n rot 2>'$E2E_TMP/rot.err' >'$E2E_TMP/rot.yaml'"
assert_contains "$(cat "$E2E_TMP/rot.err")" "expires within 90 days"
assert_contains "$(cat "$E2E_TMP/rot.err")" "the old CA stays in the caBundles until it expires"
run_ok python3 -c '
import sys, yaml, base64
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
s = [d for d in docs if d["kind"] == "Secret"][0]
open(sys.argv[2] + "/rot-bundle.crt", "wb").write(base64.b64decode(s["data"]["ca.crt"]))
open(sys.argv[2] + "/rot-new.crt", "wb").write(base64.b64decode(s["data"]["tls.crt"]))
for d in docs:
    for w in d.get("webhooks", []):
        assert w["clientConfig"]["caBundle"] == s["data"]["ca.crt"], d["metadata"]["name"]' "$E2E_TMP/rot.yaml" "$E2E_TMP"
assert_eq 2 "$(grep -c 'BEGIN CERTIFICATE' "$E2E_TMP/rot-bundle.crt")" "the new CA and the old one in the bundle"
run_ok openssl verify -CAfile "$E2E_TMP/rot-bundle.crt" -purpose sslserver -verify_hostname wmap-webhook.rot.svc "$E2E_TMP/old.crt"
run_ok openssl verify -CAfile "$E2E_TMP/rot-bundle.crt" -purpose sslserver -verify_hostname wmap-webhook.rot.svc "$E2E_TMP/rot-new.crt"
assert_not_contains "$(cat "$E2E_TMP/rot-new.crt")" "$(sed -n 2p "$E2E_TMP/old.crt")" "a new serving certificate"

# The served webhook answers with this Secret's certificate, checked with the caBundle.
: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
if [[ -x $WEBHOOK ]]; then
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    start_bg wmap-webhook "cmd:curl -sk --noproxy '*' https://127.0.0.1:$port/healthz" 30 \
        "$WEBHOOK" --tls-cert "$E2E_TMP/tls.crt" --tls-key "$E2E_TMP/tls.key" --port "$port" --no-cluster
    run_ok curl -sS --noproxy '*' --cacert "$E2E_TMP/ca.crt" --resolve "wmap-webhook.ml-infra.svc:$port:127.0.0.1" \
        "https://wmap-webhook.ml-infra.svc:$port/healthz"
fi

# One replica: no PodDisruptionBudget (it would block every drain).
run_ok bash -c "kubectl wmap install --replicas 1"
assert_not_contains "$OUT" "kind: PodDisruptionBudget"

# --cert-manager: Issuers and Certificate, no Secret, no caBundle, the injector annotation.
run_ok bash -c "kubectl wmap install --cert-manager"
cm=$OUT
assert_not_contains "$cm" "kind: Secret"
assert_not_contains "$cm" "caBundle"
assert_contains "$cm" "cert-manager.io/inject-ca-from: wmap-system/wmap-webhook-serving"
assert_eq 4 "$(grep -c '^kind: \(Issuer\|Certificate\)$' <<<"$cm")" "two Issuers, two Certificates"
run_ok kc apply -f "$E2E_DIR/data/cert-manager-crds.yaml"
wait_until 10 kc get certificates.cert-manager.io -A || fail "Certificate CRD not served"
run_ok bash -c "kubectl wmap install --cert-manager | kubectl --request-timeout=60s apply -f -"
assert_contains "$OUT" "certificate.cert-manager.io/wmap-webhook-serving created"

# Bad flags: exit 2, the flag named, nothing printed on stdout.
for bad in "--replicas 0" "--replicas 2x" "-n Bad_NS" "--gang-scheduler nosuch" "--image=" "extra-arg"; do
    set +e
    out=$(kubectl wmap install $bad 2>"$E2E_TMP/err")
    rc=$?
    set -e
    assert_eq 2 "$rc" "exit code of install $bad"
    assert_eq "" "$out" "no manifests for install $bad"
    assert_contains "$(cat "$E2E_TMP/err")" "error:"
done

# Uninstall: webhook configurations first, and none left behind afterwards.
run_ok bash -c "kubectl wmap uninstall -n ml-infra"
assert_eq "MutatingWebhookConfiguration ValidatingWebhookConfiguration" \
    "$(grep '^kind:' <<<"$OUT" | head -n2 | sed 's/kind: //' | tr '\n' ' ' | sed 's/ $//')"
assert_not_contains "$OUT" "CustomResourceDefinition" "CRDs kept unless --include-crds"
run_ok bash -c "kubectl wmap uninstall -n ml-infra | kubectl --request-timeout=60s delete --ignore-not-found -f -"
assert_eq 0 "$(kc get mutatingwebhookconfigurations -o json | jq '[.items[] | select(.metadata.name == "wmap-webhook")] | length')"
assert_eq 0 "$(kc get validatingwebhookconfigurations -o json | jq '[.items[] | select(.metadata.name == "wmap-webhook")] | length')"
run_ok kc get crd kartas.run.ai
run_ok bash -c "kubectl wmap uninstall --include-crds | grep -c 'kind: CustomResourceDefinition'"
assert_eq 2 "$OUT"
