#!/usr/bin/env bash
# The image test (make image-test): containers cannot run on our machines, so the image's
# layers are unpacked into a root filesystem (tests/image/unpack.py) and the image's own
# entrypoint runs there with chroot as the image's user (65532:65532). It must:
#   - hold no shell and run as the user its config names;
#   - answer /readyz over TLS (curl --cacert checks the chain), which with --kubeconfig
#     happens only after its first sync with the API server simulator: the webhook's cluster
#     client reached the simulator through libcurl.so.4, which it opens with dlopen, so
#     libcurl and its libraries are in the image;
#   - stamp the 12-GPU JobSet (tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml),
#     once posted straight to /mutate and once created through the simulator's admission chain.
#   bash tests/image/run.sh IMAGE.oci.tar        (as root: chroot)
set -euo pipefail
IMAGE=${1:?usage: run.sh IMAGE.oci.tar}
[[ -f $IMAGE ]] || { echo "FAIL image-test: $IMAGE not found (make image)"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "FAIL image-test: chroot needs root"; exit 1; }
IMAGE=$(cd "$(dirname "$IMAGE")" && pwd)/$(basename "$IMAGE")

source "$(dirname "$0")/../e2e/lib.sh"
e2e_init
fail() { echo "FAIL image-test: $*" >&2; exit 1; }
pass() { echo "ok   $*"; }

ROOT=$E2E_TMP/rootfs
python3 "$(dirname "$0")/unpack.py" "$IMAGE" "$ROOT" >"$E2E_TMP/config.json"
entry=$(jq -r '.config.Entrypoint[0] // empty' "$E2E_TMP/config.json")
user=$(jq -r '.config.User // empty' "$E2E_TMP/config.json")
[[ $user == 65532:65532 ]] || fail "image user is '$user', expected 65532:65532"
[[ -n $entry && -x $ROOT$entry ]] || fail "entrypoint '$entry' is not an executable in the image"
for sh in /bin/sh /bin/bash /usr/bin/sh /bin/busybox; do
    [[ ! -e $ROOT$sh ]] || fail "the image holds a shell: $sh"
done
grep -q '^nonroot:x:65532:65532:' "$ROOT/etc/passwd" || fail "/etc/passwd has no entry for 65532"
[[ -s $ROOT/etc/ssl/certs/ca-certificates.crt ]] || fail "no CA certificates in the image"
pass "unpacked: entrypoint $entry, user $user, no shell, passwd entry, CA certificates"

# What a pod would mount: the serving certificate and a kubeconfig (the simulator's, with
# its CA inline), readable by 65532 as a Secret volume would be.
webhook_certs wmap-system wmap-webhook
WH_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"
mkdir -p "$ROOT/etc/wmap/tls"
cp "$CERT_DIR/tls.crt" "$CERT_DIR/tls.key" "$ROOT/etc/wmap/tls/"
cp "$KUBECONFIG" "$ROOT/etc/wmap/kubeconfig"
chmod 0644 "$ROOT/etc/wmap/tls/"* "$ROOT/etc/wmap/kubeconfig"

run_ok kc apply -f "$REPO_ROOT/deploy/base/01-crd-kartas.run.ai.yaml"
run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 kc get jobsets || fail "JobSet CRD not served"
run_ok kc apply -f "$REPO_ROOT/deploy/base/08-mutatingwebhookconfiguration.yaml"
run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json -p "[
    {\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},
    {\"op\":\"add\",\"path\":\"/webhooks/0/rules\",\"value\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"jobset.x-k8s.io\"],\"apiVersions\":[\"v1alpha2\"],\"resources\":[\"jobsets\"],\"scope\":\"Namespaced\"}]}]"

# The image's entrypoint, as the image's user, with nothing of the host's file system.
start_bg wmap-webhook "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/healthz" 30 \
    env -i "$(command -v chroot)" --userspec="$user" "$ROOT" "$entry" \
    --tls-cert /etc/wmap/tls/tls.crt --tls-key /etc/wmap/tls/tls.key --port "$WH_PORT" \
    --kubeconfig /etc/wmap/kubeconfig --gang-scheduler volcano --queue team-q
wh() { curl -sS --noproxy '*' --max-time 10 --cacert "$CERT_DIR/ca.crt" \
    --resolve "wmap-webhook.wmap-system.svc:$WH_PORT:127.0.0.1" -w '\n%{http_code}' "$@"; }
if ! wait_until 20 bash -c "curl -sf --noproxy '*' --cacert '$CERT_DIR/ca.crt' --resolve 'wmap-webhook.wmap-system.svc:$WH_PORT:127.0.0.1' https://wmap-webhook.wmap-system.svc:$WH_PORT/readyz"; then
    cat "$E2E_TMP/wmap-webhook.log" >&2
    fail "/readyz did not answer 200 within 20 s"
fi
pass "/readyz 200 over TLS (chain checked against the test CA)"
# The webhook's own API requests in the simulator's log: its watch of Kartas went through
# libcurl, loaded inside the image.
grep -q '/apis/run.ai/v1alpha1/kartas' "$E2E_TMP/requests.log" || fail "no Karta list/watch from the webhook in the simulator's log"
if grep -qi 'libcurl.*could not be loaded' "$E2E_TMP/wmap-webhook.log"; then fail "libcurl did not load in the image"; fi
pass "the webhook listed and watched Kartas in the simulator (libcurl loaded from the image)"
# env and chroot exec the entrypoint: the process started is the webhook itself.
[[ $(ps -o uid= -p "$wmap_webhook_PID" | tr -d ' ') == 65532 && $(ps -o gid= -p "$wmap_webhook_PID" | tr -d ' ') == 65532 ]] \
    || fail "the webhook process is not running as 65532:65532"
pass "the webhook runs as 65532"

# A review of the 12-GPU JobSet, straight to /mutate.
python3 - "$REPO_ROOT/tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml" >"$E2E_TMP/review.json" <<'PY'
import json, sys, yaml
obj = yaml.safe_load(open(sys.argv[1]))
print(json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
    "uid": "image-test-1", "kind": {"group": "jobset.x-k8s.io", "version": "v1alpha2", "kind": "JobSet"},
    "resource": {"group": "jobset.x-k8s.io", "version": "v1alpha2", "resource": "jobsets"},
    "name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"], "operation": "CREATE",
    "userInfo": {"username": "image-test"}, "object": obj, "dryRun": False}}))
PY
out=$(wh -H 'Content-Type: application/json' --data-binary "@$E2E_TMP/review.json" \
    "https://wmap-webhook.wmap-system.svc:$WH_PORT/mutate")
[[ ${out##*$'\n'} == 200 ]] || fail "/mutate answered ${out##*$'\n'}: ${out%$'\n'*}"
resp=${out%$'\n'*}
[[ $(jq -r .response.uid <<<"$resp") == image-test-1 ]] || fail "review uid not echoed: $resp"
[[ $(jq -r .response.allowed <<<"$resp") == true ]] || fail "review not allowed: $resp"
patch=$(jq -r '.response.patch // empty' <<<"$resp" | base64 -d)
[[ -n $patch ]] || fail "no patch for the 12-GPU JobSet: $resp"
for i in 0 1; do
    t=/spec/replicatedJobs/$i/template/spec/template
    [[ $(jq -r --arg p "$t/metadata/labels/wmap.io~1workload-name" '.[] | select(.path == $p) | .value' <<<"$patch") == llama-train ]] \
        || fail "template $i: no workload-name label in the patch: $patch"
    [[ $(jq -r --arg p "$t/spec/schedulerName" '.[] | select(.path == $p) | .value' <<<"$patch") == volcano ]] \
        || fail "template $i: no schedulerName in the patch: $patch"
    # The gang: leader 1 pod + workers 2 pods.
    [[ $(jq -r --arg p "$t/metadata/annotations" '.[] | select(.path == $p) | .value["wmap.io/pod-group-min-member"]' <<<"$patch") == 3 ]] \
        || fail "template $i: pod-group-min-member is not 3: $patch"
done
pass "/mutate stamped the 12-GPU JobSet ($(jq length <<<"$patch") patch operations)"

# The same JobSet through the API server: kubectl create, the simulator calls the webhook
# through the wmap-webhook Service, the stored object carries the stamps.
jq '.request.object | .metadata.namespace = "default" | del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.generation, .status)' \
    "$E2E_TMP/review.json" >"$E2E_TMP/jobset.json"
run_ok kc create -f "$E2E_TMP/jobset.json"
run_ok kc get jobset llama-train -o json
for i in 0 1; do
    t=".spec.replicatedJobs[$i].template.spec.template"
    [[ $(jq -r "$t.metadata.labels[\"wmap.io/workload-name\"]" <<<"$OUT") == llama-train ]] || fail "template $i not stamped: $(jq -c "$t.metadata" <<<"$OUT")"
    [[ $(jq -r "$t.spec.schedulerName" <<<"$OUT") == volcano ]] || fail "template $i has no schedulerName volcano"
done
pass "kubectl create through the simulator: the stored JobSet is stamped"
echo "image-test: passed ($(basename "$IMAGE"))"
