# shellcheck shell=bash
# Helpers of the webhook-cluster-*.sh scenarios: wmap-webhook running outside the cluster
# with --kubeconfig, watching the simulator's Kartas and WorkloadPolicies, and called back by
# the simulator through the wmap-webhook Service (--service-port). Sourced after lib.sh.
#
#   cluster_setup [SIM ARGS...]  serving certs, a port for the webhook, the simulator with
#                                --service-port, the Karta and Widget CRDs, and deploy/'s
#                                MutatingWebhookConfiguration with its caBundle (the webhook
#                                keeps its rules in step); sets WH_PORT
#   mwc_resources GROUP          the resources of the MutatingWebhookConfiguration's rules
#                                for GROUP, sorted, comma-separated
#   cluster_webhook_start [ARGS...]  wmap-webhook --kubeconfig $KUBECONFIG on $WH_PORT
#                                (waits until it listens, not until it is ready)
#   wh_get PATH                  GET on the webhook (healthz, readyz, metrics): body, then code
#   wh_metric NAME{LABELS}       the value of one metric line (empty when absent)
#   metric_is NAME VALUE, metric_gt NAME VALUE   conditions for wait_until (a $(...) in
#                                wait_until's arguments would be read once, not polled)
#   wh_review_ms FILE            POSTs an AdmissionReview to /mutate; prints the time in ms,
#                                fails unless the answer is a 200 AdmissionReview
#   now_ms                       milliseconds since the epoch

: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
CLUSTER_DATA=$E2E_DIR/data/cluster

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

now_ms() {
    date +%s%3N
}

cluster_setup() {
    [[ -x $WEBHOOK ]] || fail "webhook not built: $WEBHOOK"
    webhook_certs wmap-system wmap-webhook
    WH_PORT=$(free_port)
    export WH_PORT
    sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT" "$@"
    # (A CRD preloaded with --load is left alone: applying it again would replace it.)
    kc get crd kartas.run.ai >/dev/null 2>&1 || run_ok kc apply -f "$REPO_ROOT/deploy/base/01-crd-kartas.run.ai.yaml"
    run_ok kc apply -f "$CLUSTER_DATA/widget-crd.yaml"
    wait_until 10 kc get widgets
    wait_until 10 kc get kartas
    run_ok kc apply -f "$REPO_ROOT/deploy/base/08-mutatingwebhookconfiguration.yaml"
    run_ok kc patch mutatingwebhookconfiguration wmap-webhook --type=json -p "[
        {\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"}]"
}

# (curl rather than kubectl: a kubectl process costs ~0.5 s on a loaded machine, which would
# blur the 2 s measurements.)
mwc_resources() {
    curl -sS --max-time 10 --noproxy '*' --cacert "$SIM_PKI/ca.crt" -H "Authorization: Bearer $SIM_TOKEN" \
        "$SIM_URL/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/wmap-webhook" |
        jq -r --arg g "$1" '[.webhooks[0].rules[] | select(.apiGroups[0] == $g) | .resources[]] | sort | join(",")'
}

mwc_has() {
    [[ ",$(mwc_resources "$1")," == *",$2,"* ]]
}

cluster_webhook_start() {
    start_bg wmap-webhook "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/healthz" 30 \
        "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port "$WH_PORT" \
        --kubeconfig "$KUBECONFIG" "$@"
}

# (Retried: on a machine at load 15 a TLS handshake can time out now and then, and a failed
# $(...) would end the scenario without a word under set -e.)
wh_get() {
    local i
    for i in 1 2 3; do
        curl -sk --noproxy '*' --max-time 10 -w '\n%{http_code}\n' "https://127.0.0.1:$WH_PORT$1" && return 0
        sleep 0.2
    done
    echo "wh_get $1: no answer from the webhook after 3 tries" >&2
    return 1
}

wh_metric() {
    # (awk reads to the end: leaving early would cut curl off mid-answer, and wh_get would
    # take the write error for a webhook that does not answer)
    { wh_get /metrics || true; } | awk -v k="$1" '$1 == k && !found {print $2; found = 1}'
}

metric_is() {
    [[ "$(wh_metric "$1")" == "$2" ]]
}

metric_gt() {
    local v
    v=$(wh_metric "$1")
    [[ -n $v ]] && ((v > $2))
}

wh_review_ms() {
    local t0 t1 out
    t0=$(now_ms)
    out=$(curl -sk --noproxy '*' --max-time 10 -H 'Content-Type: application/json' \
        --data-binary "@$1" -w '\n%{http_code}' "https://127.0.0.1:$WH_PORT/mutate") || return 1
    t1=$(now_ms)
    [[ ${out##*$'\n'} == 200 ]] || return 1
    [[ $out == *'"kind":"AdmissionReview"'* ]] || return 1
    echo $((t1 - t0))
}

# review_file OBJECT.yaml OUT.json: an AdmissionReview (CREATE, namespace default) for the object.
review_file() {
    python3 - "$1" "$2" <<'PY'
import json, sys, yaml
obj = yaml.safe_load(open(sys.argv[1]))
group, _, version = obj["apiVersion"].rpartition("/")
kind = obj["kind"]
obj.setdefault("metadata", {})["namespace"] = "default"
review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
    "uid": "e2e-load-0001", "kind": {"group": group, "version": version, "kind": kind},
    "resource": {"group": group, "version": version, "resource": kind.lower() + "s"},
    "name": obj["metadata"]["name"], "namespace": "default", "operation": "CREATE",
    "userInfo": {"username": "e2e"}, "object": obj, "dryRun": False}}
json.dump(review, open(sys.argv[2], "w"))
PY
}

# load_start REVIEW [ARGS]: review-load.py in the background against the webhook; load_stop
# ends it and sets LOAD_RESULT to its result (JSON). Not in a $(...): wait needs this shell.
load_start() {
    rm -f "$E2E_TMP/load.stop" "$E2E_TMP/load.out" "$E2E_TMP/load.started"
    python3 "$E2E_DIR/review-load.py" --port "$WH_PORT" --review "$1" --stop "$E2E_TMP/load.stop" \
        --out "$E2E_TMP/load.out" --started "$E2E_TMP/load.started" "${@:2}" &
    LOAD_PID=$!
    E2E_PIDS+=("$LOAD_PID")
    wait_until 20 test -e "$E2E_TMP/load.started" || fail "the review load did not start"
}

load_stop() {
    touch "$E2E_TMP/load.stop"
    wait "$LOAD_PID" || fail "the review load failed"
    LOAD_RESULT=$(cat "$E2E_TMP/load.out")
}

# sim_fault JSON: arms a fault in the simulator (POST /sim/faults).
sim_fault() {
    local out
    out=$(sim_curl POST /sim/faults -H 'Content-Type: application/json' -d "$1")
    [[ ${out##*$'\n'} == 200 ]] || fail "cannot arm the fault $1: $out"
}

# wh_patch ENDPOINT REVIEW: POSTs the review; prints the response's JSON Patch (decoded; "[]"
# when none), or the whole AdmissionReview with ENDPOINT validate.
wh_patch() {
    local out
    out=$(curl -sk --noproxy '*' --max-time 10 -H 'Content-Type: application/json' \
        --data-binary "@$2" "https://127.0.0.1:$WH_PORT/$1") || return 1
    if [[ $1 == validate ]]; then
        echo "$out"
    else
        jq -r '.response.patch // empty' <<<"$out" | base64 -d 2>/dev/null || true
        jq -e '.response.patch' <<<"$out" >/dev/null || echo '[]'
    fi
}

# stub_builtins FILE: stand-in CRDs for the built-ins deploy/ uses that the simulator lacks
# (PodDisruptionBudget, NetworkPolicy), as webhook-deploy-manifests does; load with --load.
stub_builtins() {
    local g v k p
    for spec in "policy v1 PodDisruptionBudget poddisruptionbudgets" \
        "networking.k8s.io v1 NetworkPolicy networkpolicies"; do
        read -r g v k p <<<"$spec"
        cat <<Y
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: $p.$g
  annotations: {api-approved.kubernetes.io: "stand-in for a built-in the simulator lacks"}
spec:
  group: $g
  scope: Namespaced
  names: {kind: $k, plural: $p, singular: $(tr '[:upper:]' '[:lower:]' <<<"$k")}
  versions:
  - {name: $v, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
Y
    done >"$1"
}
