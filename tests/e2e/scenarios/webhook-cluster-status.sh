# Status conditions (issue 13, item 5). Two wmap-webhook processes run with the wmap-webhook
# service account of deploy/base/02-rbac.yaml; the one holding the Lease writes the Ready
# condition (status, reason, message, observedGeneration, lastTransitionTime) of every Karta
# and WorkloadPolicy through the status subresource. Kartas: one in force (InForce), one that
# upstream's rules refuse, admitted while the webhook was down (Invalid, with the finding), a
# second claim on the same kind (Superseded) and one whose CRD is not installed
# (KindNotServed, until the CRD comes, and again once it is deleted). Policies: one in force, one that does not parse. The
# status PUTs are counted in the simulator's request log: one per change, none on resyncs,
# none from the second replica, none when the other replica takes over. `kubectl get kartas`
# and `kubectl get workloadpolicies` show READY and REASON.
source "$E2E_DIR/cluster-helpers.sh"

cluster_setup
run_ok kc apply -f "$REPO_ROOT/deploy/base/00-namespace.yaml"
run_ok kc apply -f "$REPO_ROOT/deploy/base/01-crd-workloadpolicies.wmap.io.yaml"
run_ok kc apply -f "$REPO_ROOT/deploy/base/02-rbac.yaml"
run_ok kc apply -f "$REPO_ROOT/deploy/base/09-validatingwebhookconfiguration.yaml"
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json -p "[
    {\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},
    {\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"}]"
wait_until 10 kc get workloadpolicies

# Before any webhook runs: definitions.wmap.io fails open (Ignore), so the invalid Karta is
# stored; the webhooks report it.
run_ok kc create -f "$CLUSTER_DATA/widget-karta.yaml"
run_ok kc create -f "$CLUSTER_DATA/widget-karta-invalid.yaml"
sed 's/name: example-com-widget-v1/name: widget-copy/' "$CLUSTER_DATA/widget-karta.yaml" >"$E2E_TMP/copy.yaml"
run_ok kc create -f "$E2E_TMP/copy.yaml"
sed -e 's/example-com-widget-v1/example-com-gizmo-v1/' -e 's/Widget/Gizmo/' -e 's/name: widget$/name: gizmo/' \
    -e 's/ownerRef: widget/ownerRef: gizmo/' "$CLUSTER_DATA/widget-karta.yaml" >"$E2E_TMP/gizmo-karta.yaml"
run_ok kc create -f "$E2E_TMP/gizmo-karta.yaml"
cat >"$E2E_TMP/policies.yaml" <<'Y'
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: team-labels}
spec:
  match: {namespaces: ["team-*"]}
  podTemplate: {labels: {team: a}}
---
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: slurm-gang}
spec:
  gang: {scheduler: slurm}
Y
run_ok kc create -f "$E2E_TMP/policies.yaml"

run_ok kc create token wmap-webhook -n wmap-system --duration=3600s
cat >"$E2E_TMP/sa.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: sim, cluster: {server: "$SIM_URL", certificate-authority: "$SIM_PKI/ca.crt"}}]
users: [{name: wmap-webhook, user: {token: "$OUT"}}]
contexts: [{name: sa, context: {cluster: sim, user: wmap-webhook, namespace: wmap-system}}]
current-context: sa
KC
WH2_PORT=$(free_port)
start_wh() {
    start_bg "$1" "cmd:curl -sk --noproxy '*' https://127.0.0.1:$2/healthz" 40 \
        "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port "$2" \
        --kubeconfig "$E2E_TMP/sa.kubeconfig" --sync-timeout 30
}
start_wh wh-a "$WH_PORT"
start_wh wh-b "$WH2_PORT"
metric_at() { curl -sk --noproxy '*' "https://127.0.0.1:$1/metrics" | awk -v k="$2" '$1 == k {print $2; exit}'; }
leaders() { echo $(($(metric_at "$WH_PORT" wmap_webhook_leader) + $(metric_at "$WH2_PORT" wmap_webhook_leader))); }
one_leader() { [[ $(leaders) == 1 ]]; }
wait_until 20 one_leader || fail "not exactly one leader: $(leaders)"

# Status PUTs the simulator answered with 200, from its request log.
status_puts() { grep -cE ' PUT /apis/(run\.ai|wmap\.io)/v1alpha1/(kartas|workloadpolicies)/[^ /]+/status(\?[^ ]*)? 200 ' "$E2E_TMP/requests.log" || true; }
ready_of() { kc get "$1" "$2" -o json | jq -r '[.status.conditions[]? | select(.type == "Ready") | .status, .reason] | join("/")'; }
ready_is() { [[ $(ready_of "$1" "$2") == "$3" ]]; }
wait_until 20 ready_is karta example-com-widget-v1 True/InForce || fail "widget Karta: $(ready_of karta example-com-widget-v1)"
wait_until 10 ready_is karta broken-gadget False/Invalid || fail "invalid Karta: $(ready_of karta broken-gadget)"
wait_until 10 ready_is karta widget-copy False/Superseded || fail "second claim: $(ready_of karta widget-copy)"
wait_until 10 ready_is karta example-com-gizmo-v1 False/KindNotServed || fail "no CRD: $(ready_of karta example-com-gizmo-v1)"
wait_until 10 ready_is workloadpolicy team-labels True/InForce || fail "policy: $(ready_of workloadpolicy team-labels)"
wait_until 10 ready_is workloadpolicy slurm-gang False/Invalid || fail "invalid policy: $(ready_of workloadpolicy slurm-gang)"

run_ok kc get karta broken-gadget -o json
assert_contains "$(jq -r '.status.conditions[0].message' <<<"$OUT")" "nowhere" "the finding is the message"
assert_eq "$(jq -r .metadata.generation <<<"$OUT")" "$(jq -r '.status.conditions[0].observedGeneration' <<<"$OUT")" "observedGeneration"
run_ok kc get karta widget-copy -o json
assert_contains "$(jq -r '.status.conditions[0].message' <<<"$OUT")" "using example-com-widget-v1" "who wins the kind"
run_ok kc get workloadpolicy slurm-gang -o json
assert_contains "$(jq -r '.status.conditions[0].message' <<<"$OUT")" "slurm" "the parser's message"

# The printer columns.
run_ok kc get kartas
echo "$OUT"
read -r -a header <<<"$(head -n1 <<<"$OUT")"
assert_eq "NAME KIND GROUP READY REASON AGE" "${header[*]}" "kubectl get kartas columns"
assert_eq "False Invalid" "$(awk '$1 == "broken-gadget" {print $4, $5}' <<<"$OUT")" "broken-gadget row"
assert_eq "True InForce" "$(awk '$1 == "example-com-widget-v1" {print $4, $5}' <<<"$OUT")" "widget row"
run_ok kc get kartas -o wide
assert_contains "$(grep "^broken-gadget" <<<"$OUT")" "root component must have status definition" "-o wide shows the message"
run_ok kc get workloadpolicies
echo "$OUT"
read -r -a header <<<"$(head -n1 <<<"$OUT")"
assert_eq "NAME MODE ACTIONS READY REASON AGE" "${header[*]}" "kubectl get workloadpolicies columns"
assert_eq "False Invalid" "$(awk '$1 == "slurm-gang" {print $(NF-2), $(NF-1)}' <<<"$OUT")" "slurm-gang row"

# One write per object, none on the resync rounds (every 10 s) nor from the other replica.
assert_eq 6 "$(status_puts)" "status writes for 4 Kartas and 2 policies"
sleep 11
assert_eq 6 "$(status_puts)" "no status write on resync"
assert_eq 0 "$(($(metric_at "$WH_PORT" wmap_webhook_status_writes_total) * $(metric_at "$WH2_PORT" wmap_webhook_status_writes_total)))" \
    "only one replica wrote statuses"

# A change of the spec: one write (observedGeneration), lastTransitionTime kept (still True).
since=$(kc get karta example-com-widget-v1 -o jsonpath='{.status.conditions[0].lastTransitionTime}')
run_ok kc patch karta example-com-widget-v1 --type=json -p '[{"op":"replace","path":"/spec/structureDefinition/childComponents/0/name","value":"worker"}]'
gen=$(kc get karta example-com-widget-v1 -o jsonpath='{.metadata.generation}')
obs() { [[ $(kc get karta example-com-widget-v1 -o jsonpath='{.status.conditions[0].observedGeneration}') == "$gen" ]]; }
wait_until 10 obs || fail "observedGeneration not $gen"
sleep 1
assert_eq 7 "$(status_puts)" "one write for the edit"
assert_eq "$since" "$(kc get karta example-com-widget-v1 -o jsonpath='{.status.conditions[0].lastTransitionTime}')" "lastTransitionTime kept"

# The Gizmo CRD comes: the Karta turns InForce (at the latest on the next 10 s round).
sed -e 's/widgets.example.com/gizmos.example.com/' -e 's/Widget/Gizmo/g' -e 's/widgets/gizmos/' -e 's/widget}/gizmo}/' \
    "$CLUSTER_DATA/widget-crd.yaml" >"$E2E_TMP/gizmo-crd.yaml"
run_ok kc apply -f "$E2E_TMP/gizmo-crd.yaml"
wait_until 15 ready_is karta example-com-gizmo-v1 True/InForce || fail "gizmo: $(ready_of karta example-com-gizmo-v1)"
sleep 1
assert_eq 8 "$(status_puts)" "one write for the CRD"

# The CRD deleted again: the Karta is no longer in force for a served kind (the CRD watch
# starts a round at once).
t0=$(now_ms)
run_ok kc delete crd gizmos.example.com
wait_until 10 ready_is karta example-com-gizmo-v1 False/KindNotServed || fail "gizmo after the CRD went: $(ready_of karta example-com-gizmo-v1)"
echo "KindNotServed $(($(now_ms) - t0)) ms after the CRD was deleted"
sleep 1
assert_eq 9 "$(status_puts)" "one write for the CRD deletion"

# The leader stops; the other takes over and finds nothing to write.
if [[ $(metric_at "$WH_PORT" wmap_webhook_leader) == 1 ]]; then lpid=$wh_a_PID other=$WH2_PORT; else lpid=$wh_b_PID other=$WH_PORT; fi
kill -TERM "$lpid"
wait "$lpid" || fail "the leader did not exit cleanly"
wait_until 20 bash -c "curl -sk --noproxy '*' https://127.0.0.1:$other/metrics | grep -qx 'wmap_webhook_leader 1'" ||
    fail "the other replica did not take over"
sleep 3
assert_eq 9 "$(status_puts)" "no status write after the takeover"
assert_eq 0 "$(metric_at "$other" wmap_webhook_status_errors_total)" "no status error"
