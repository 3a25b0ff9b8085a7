# Upgrade and removal (issue 15, point 5). An older release is installed (deploy/ as
# `kubectl kustomize` renders it, made older here: the Karta CRD without the status fields
# and printer columns added since, no WorkloadPolicy CRD, image tag 0.0.9) with webhook A
# behind the wmap-webhook Service; the current release is applied over it with
# `kubectl apply -k deploy/` while three loops create JobSets through the real kubectl all
# along. Then the rolling update, done by hand as the Deployment, kubelet and endpoints
# controllers would: webhook B starts and joins the Service's Endpoints once ready; A gets
# SIGTERM while it is still an endpoint and leaves the Endpoints 2 s later (the propagation
# delay of a real cluster). Both run with the shutdown arguments of deploy/'s Deployment
# (--shutdown-delay: unready but still accepting for a while, then drain).
# JobSets go through the mutating webhook (failurePolicy Ignore: a lost review shows as an
# unstamped JobSet) and through policies.wmap.io (failurePolicy Fail: a lost review fails
# the create), where a Deny policy (at most 64 GPUs a JobSet) is in force in both webhooks. Every create must succeed and come back stamped, A must drain with no request
# left and exit 0, and both A and B must have answered mutating and validating reviews. The
# CRDs must be the new ones, with the objects made under the old ones kept, and apply must
# keep the caBundles and the rules written after the last apply; re-applying `kubectl wmap
# install`'s output three times under load (a CA rotation, then twice the same) must lose no
# review either. Last, `kubectl wmap
# uninstall | kubectl delete -f -` leaves no webhook configuration behind, and JobSets are
# created unstamped afterwards.
# Both webhooks are the same build (there is one binary here); they run with --no-cluster,
# so the JobSet rules are added by hand as the running webhook would write them.
source "$E2E_DIR/cluster-helpers.sh"
plugin_on_path || fail "plugin not built: $PLUGIN"

webhook_certs wmap-system wmap-webhook
PA=$(free_port)
PB=$(free_port)
sim_start --service-port "wmap-system/wmap-webhook=$PA"

# The older release.
run_ok kc kustomize "$REPO_ROOT/deploy/"
printf '%s\n' "$OUT" >"$E2E_TMP/new.yaml"
python3 - "$E2E_TMP/new.yaml" "$E2E_TMP/old.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
old = []
for d in docs:
    name = d["metadata"]["name"]
    if d["kind"] == "CustomResourceDefinition" and name == "workloadpolicies.wmap.io":
        continue
    if d["kind"] == "CustomResourceDefinition" and name == "kartas.run.ai":
        v = d["spec"]["versions"][0]
        del v["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["observedGeneration"]
        v["additionalPrinterColumns"] = [
            {"name": "Framework", "type": "string", "jsonPath": ".spec.structureDefinition.rootComponent.kind.kind"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
    if d["kind"] == "Deployment":
        c = d["spec"]["template"]["spec"]["containers"][0]
        c["image"] = c["image"].rsplit(":", 1)[0] + ":0.0.9"
    old.append(d)
yaml.safe_dump_all(old, open(sys.argv[2], "w"), sort_keys=False)
PY
# The webhooks run with the shutdown arguments of the new release's Deployment.
run_ok python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Deployment":
        print(" ".join(a for a in d["spec"]["template"]["spec"]["containers"][0]["args"]
                       if a.startswith(("--shutdown-delay=", "--drain-timeout="))))' "$E2E_TMP/new.yaml"
read -r -a SHUTDOWN_ARGS <<<"$OUT"
assert_contains "${SHUTDOWN_ARGS[*]}" "--shutdown-delay=" "deploy/ sets a shutdown delay"
run_ok kc apply -f "$E2E_TMP/old.yaml"
wait_until 10 kc get kartas || fail "the old Karta CRD is not served"
assert_fails kc get workloadpolicies
run_ok kc -n wmap-system create secret tls wmap-webhook-tls --cert "$CERT_DIR/tls.crt" --key "$CERT_DIR/tls.key"
# The caBundles patched in as certs/README.md says; the JobSet rule as the webhook writes it.
run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 kc get jobsets || fail "JobSet CRD not served"
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json -p "[
    {\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},
    {\"op\":\"add\",\"path\":\"/webhooks/0/rules\",\"value\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"jobset.x-k8s.io\"],\"apiVersions\":[\"v1alpha2\"],\"resources\":[\"jobsets\"],\"scope\":\"Namespaced\"}]}]"
# The JobSet rule of policies.wmap.io too, as the webhook writes it for an enforced policy:
# its failurePolicy is Fail, so a /validate call lost in the handover fails the create.
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json -p "[
    {\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},
    {\"op\":\"add\",\"path\":\"/webhooks/0/rules\",\"value\":[{\"operations\":[\"CREATE\",\"UPDATE\"],\"apiGroups\":[\"jobset.x-k8s.io\"],\"apiVersions\":[\"v1alpha2\"],\"resources\":[\"jobsets\"],\"scope\":\"Namespaced\"}]},
    {\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},
    {\"op\":\"add\",\"path\":\"/webhooks/2/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"}]"

# endpoints PORT...: the Service's ready endpoints, as the endpoints controller writes them.
endpoints() {
    local subsets="" p
    for p in "$@"; do subsets+="- addresses: [{ip: 127.0.0.1}]"$'\n'"  ports: [{name: https, port: $p, protocol: TCP}]"$'\n'; done
    run_ok kc apply -f - <<Y
apiVersion: v1
kind: Endpoints
metadata: {name: wmap-webhook, namespace: wmap-system}
subsets:
$subsets
Y
}
# A Deny policy in force in both webhooks: JobSets of more than 64 GPUs are refused; the
# loops' JobSets (8 GPUs) pass it, through policies.wmap.io (failurePolicy Fail).
cat >"$E2E_TMP/deny.yaml" <<'Y'
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: upgrade-gpu-limit}
spec:
  match: {kinds: ["JobSet.jobset.x-k8s.io"], operations: [CREATE, UPDATE]}
  validationActions: [Deny]
  limits:
    workload: {nvidia.com/gpu: 64}
Y
start_wh() {  # start_wh NAME PORT
    start_bg "$1" "cmd:curl -sk --noproxy '*' https://127.0.0.1:$2/readyz | grep -qx ok" 30 \
        "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port "$2" --no-cluster \
        --policy "$E2E_TMP/deny.yaml" "${SHUTDOWN_ARGS[@]}"
}
start_wh wh-a "$PA"
endpoints "$PA"
# A Karta made under the old release (admitted by A's /validate).
run_ok kc create -f "$CLUSTER_DATA/widget-karta.yaml"

# Three loops create JobSets until told to stop; each create's exit code and output is kept.
mkdir -p "$E2E_TMP/creates"
create_loop() {
    local n=0 f rc
    while [[ ! -e $E2E_TMP/stop ]]; do
        n=$((n + 1))
        f=$E2E_TMP/creates/$1-$n
        sed "s/name: train\$/name: up-$1-$n/" "$E2E_DIR/data/jobset-sample.yaml" >"$f.yaml"
        rc=0
        kc create -f "$f.yaml" >"$f.out" 2>&1 || rc=$?   # (errexit would end the loop)
        echo "$rc" >"$f.rc"
    done
}
create_loop l1 &
L1=$!
create_loop l2 &
L2=$!
create_loop l3 &
L3=$!
E2E_PIDS+=("$L1" "$L2" "$L3")
creates() { ls "$E2E_TMP/creates" | grep -c '\.rc$' || true; }
created_at_least() { (($(creates) >= $1)); }
wait_until 60 created_at_least 4 || fail "the create loops made nothing"

# The newer release over the older one.
run_ok kc apply -k "$REPO_ROOT/deploy/"
run_ok kc get crd kartas.run.ai -o json
assert_eq integer "$(jq -r '.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.observedGeneration.type' <<<"$OUT")" "Karta CRD updated (status.observedGeneration)"
assert_eq "Kind Group Ready Reason Root Component Message Age" "$(jq -r '[.spec.versions[0].additionalPrinterColumns[].name] | join(" ")' <<<"$OUT")" "Karta printer columns updated"
wait_until 10 kc get workloadpolicies || fail "the WorkloadPolicy CRD of the new release is not served"
run_ok kc get kartas
assert_contains "$OUT" "READY" "kubectl get kartas prints the new columns"
assert_contains "$OUT" "example-com-widget-v1" "the Karta made under the old release is kept"
run_ok kc get deployment wmap-webhook -n wmap-system -o jsonpath='{.spec.template.spec.containers[0].image}'
assert_eq ghcr.io/wmap-project/wmap-webhook:0.1.0 "$OUT" "the Deployment's image is the new one"
# apply keeps what was patched in after the last apply (caBundles, the webhook's rules).
run_ok kc get mutatingwebhookconfiguration wmap-webhook -o json
assert_eq "$CA_BUNDLE" "$(jq -r '.webhooks[0].clientConfig.caBundle' <<<"$OUT")" "mutating caBundle kept by apply"
assert_eq jobsets "$(jq -r '.webhooks[0].rules[0].resources[0]' <<<"$OUT")" "JobSet rule kept by apply"
run_ok kc get validatingwebhookconfiguration wmap-webhook -o json
assert_eq "$CA_BUNDLE $CA_BUNDLE $CA_BUNDLE" "$(jq -r '[.webhooks[].clientConfig.caBundle] | join(" ")' <<<"$OUT")" "validating caBundles kept by apply"
assert_eq jobsets "$(jq -r '.webhooks[0].rules[0].resources[0]' <<<"$OUT")" "policies.wmap.io's JobSet rule kept by apply"

# `kubectl wmap install`'s output re-applied three times under load (an upgrade, a GitOps
# re-sync), with policies.wmap.io failurePolicy Fail. The serving certificate in force (from
# webhook_certs) has 2 days left, so the first install rotates: a new CA and certificate in
# the Secret, the old CA kept in every caBundle beside the new one, so that A (and B, started
# later from the same files) still serving the old certificate stay trusted. The next two
# read that Secret back and keep it as it is. (A new CA alone, as install --new-ca prints,
# would fail creates until the pods served a certificate it signed.)
for i in 1 2 3; do
    run_ok bash -c "kubectl wmap install 2>'$E2E_TMP/install-$i.err' >'$E2E_TMP/install-$i.yaml'"
    if ((i == 1)); then
        assert_contains "$(cat "$E2E_TMP/install-$i.err")" "expires within 90 days"
        assert_contains "$(cat "$E2E_TMP/install-$i.err")" "the old CA stays in the caBundles until it expires"
    else
        assert_contains "$(cat "$E2E_TMP/install-$i.err")" "keeping the CA and serving certificate of Secret wmap-system/wmap-webhook-tls"
    fi
    run_ok kc apply -f "$E2E_TMP/install-$i.yaml"
    n=$(creates)
    wait_until 60 created_at_least $((n + 3)) || fail "the creates stalled after install's output was applied ($i)"
done
assert_eq "$(cat "$E2E_TMP/install-2.yaml")" "$(cat "$E2E_TMP/install-3.yaml")" "install prints the same manifests once the Secret is its own"
run_ok kc get validatingwebhookconfiguration wmap-webhook -o json
jq -r '.webhooks[0].clientConfig.caBundle' <<<"$OUT" | base64 -d >"$E2E_TMP/bundle-after.crt"
assert_eq 2 "$(grep -c 'BEGIN CERTIFICATE' "$E2E_TMP/bundle-after.crt")" "the new CA and the old one in the caBundle"
assert_eq jobsets "$(jq -r '.webhooks[0].rules[0].resources[0]' <<<"$OUT")" "policies.wmap.io's JobSet rule kept by install's apply"
run_ok openssl verify -CAfile "$E2E_TMP/bundle-after.crt" -purpose sslserver -verify_hostname wmap-webhook.wmap-system.svc "$CERT_DIR/tls.crt"
run_ok kc -n wmap-system get secret wmap-webhook-tls -o json
jq -r '.data["tls.crt"]' <<<"$OUT" | base64 -d >"$E2E_TMP/rotated.crt"
run_ok openssl verify -CAfile "$E2E_TMP/bundle-after.crt" -purpose sslserver -verify_hostname wmap-webhook.wmap-system.svc "$E2E_TMP/rotated.crt"
assert_not_contains "$(cat "$E2E_TMP/rotated.crt")" "$(sed -n 2p "$CERT_DIR/tls.crt")" "a new serving certificate in the Secret"

# The rolling update: B up and ready, then an endpoint.
start_wh wh-b "$PB"
endpoints "$PA" "$PB"
answered() { grep -c '"result":"patched"' "$E2E_TMP/$1.log" || true; }
validated() { grep -c '"endpoint":"validate".*JobSet' "$E2E_TMP/$1.log" || true; }
b_answered() { (($(answered wh-b) > 0)); }
wait_until 60 b_answered || fail "B answered no review through the Service"
# A is told to stop while still an endpoint; it leaves the Endpoints 2 s later (the lag of
# the endpoints controller and kube-proxy; the reviews sent to A meanwhile are the point).
before=$(creates)
kill -TERM "$wh_a_PID"
sleep 2
endpoints "$PB"
wait_until 40 bash -c "! kill -0 $wh_a_PID 2>/dev/null" || fail "A did not stop"
grep -q 'still accepting for' "$E2E_TMP/wh-a.log" || fail "A did not wait (--shutdown-delay)"
set +e
wait "$wh_a_PID"
a_rc=$?
set -e
assert_eq 0 "$a_rc" "A's exit code after SIGTERM"
grep -q 'drained in .*, 0 request(s) left' "$E2E_TMP/wh-a.log" || fail "A did not drain: $(grep -i drain "$E2E_TMP/wh-a.log")"
wait_until 60 created_at_least $((before + 6)) || fail "the creates stalled after A stopped"
touch "$E2E_TMP/stop"
wait "$L1" "$L2" "$L3" || true

total=$(creates)
failed=0
for rc in "$E2E_TMP"/creates/*.rc; do
    if [[ $(cat "$rc") != 0 ]]; then
        failed=$((failed + 1))
        echo "failed create: $(cat "${rc%.rc}.out")" >&2
    fi
done
echo "creates: $total, failed: $failed; mutating reviews answered by A: $(answered wh-a), by B: $(answered wh-b);" \
    "validating: A $(validated wh-a), B $(validated wh-b)"
assert_eq 0 "$failed" "failed creates"
(($(answered wh-a) > 0 && $(validated wh-a) > 0)) || fail "A answered no mutating or no validating review"
(($(answered wh-b) > 0 && $(validated wh-b) > 0)) || fail "B answered no mutating or no validating review"
run_ok kc get jobsets -o json
stored=$(jq '[.items[] | select(.metadata.name | startswith("up-"))] | length' <<<"$OUT")
unstamped=$(jq -r '[.items[] | select(.metadata.name | startswith("up-")) | select([.spec.replicatedJobs[].template.spec.template.metadata.labels["wmap.io/workload-name"]] | any(. == null)) | .metadata.name] | join(" ")' <<<"$OUT")
assert_eq "$total" "$stored" "every create stored"
assert_eq "" "$unstamped" "JobSets created without wmap's labels (a review lost in the handover)"

# The Deny policy was in force all along: a JobSet of 80 GPUs is refused by B.
sed "s/name: train\$/name: too-big/; s/    replicas: 2\$/    replicas: 20/" "$E2E_DIR/data/jobset-sample.yaml" >"$E2E_TMP/too-big.yaml"
assert_fails kc create -f "$E2E_TMP/too-big.yaml"
assert_contains "$OUT" "upgrade-gpu-limit"

# Removal.
run_ok kubectl wmap uninstall
printf '%s\n' "$OUT" >"$E2E_TMP/uninstall.yaml"
run_ok kc delete -f "$E2E_TMP/uninstall.yaml"
run_ok kc get mutatingwebhookconfigurations,validatingwebhookconfigurations -o name
assert_not_contains "$OUT" "wmap-webhook" "a webhook configuration left after uninstall"
run_ok kc get crd kartas.run.ai -o name   # CRDs stay unless --include-crds
sed "s/name: train\$/name: after-uninstall/" "$E2E_DIR/data/jobset-sample.yaml" >"$E2E_TMP/after.yaml"
run_ok kc create -f "$E2E_TMP/after.yaml"
run_ok kc get jobset after-uninstall -o json
assert_eq null "$(jq -r '.spec.replicatedJobs[0].template.spec.template.metadata.labels["wmap.io/workload-name"]' <<<"$OUT")" "stamped after uninstall"
