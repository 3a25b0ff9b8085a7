# The leader's background audit and its policy reports (webhook/audit.c), with the webhook
# running as its service account under deploy/base/02-rbac.yaml (the simulator enforces RBAC, so a
# missing rule shows as a 403): two JobSets exist before an Audit-only WorkloadPolicy is
# created; within one audit round (--audit-interval 2s) the namespace's openreports.io Report
# lists the violating one as fail and the other as pass, with the summary, the workload's uid
# and the wmap_audit_violations gauge; an unchanged namespace is not rewritten; fixing the
# JobSet (kubectl patch) turns its result to pass; one that cannot be evaluated is an error result; deleting the JobSets removes their results
# and then the Report. Then the same with --report-api wgpolicyk8s, and bad flag values.
source "$E2E_DIR/cluster-helpers.sh"
D=$REPO_ROOT/deploy/base
AUDIT=$E2E_DIR/data/audit
POLICY=jobsets-high-priority

cluster_setup
run_ok kc apply -f "$D/00-namespace.yaml" -f "$D/02-rbac.yaml" -f "$CLUSTER_DATA/workloadpolicy-crd.yaml" \
    -f "$AUDIT/report-crds.yaml" -f "$E2E_DIR/data/jobset-crd.yaml"
for r in jobsets workloadpolicies reports policyreports; do wait_until 10 kc get "$r" -A; done
run_ok kc create namespace ml-a
# Made before the webhook runs: nothing mutates them, so "bad" keeps its priority "low".
run_ok kc apply -f "$AUDIT/jobsets.yaml"

run_ok kc create token wmap-webhook -n wmap-system --duration=3600s
printf '%s\n' "$OUT" >"$E2E_TMP/token"
cat >"$E2E_TMP/sa.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: sim, cluster: {server: "$SIM_URL", certificate-authority: "$SIM_PKI/ca.crt"}}]
users: [{name: wmap-webhook, user: {tokenFile: "$E2E_TMP/token"}}]
contexts: [{name: sa, context: {cluster: sim, user: wmap-webhook, namespace: wmap-system}}]
current-context: sa
KC

# Bad flag values are refused before anything starts.
for bad in "--audit-interval 500ms" "--audit-interval soon" "--audit-qps 0" "--report-api kyverno"; do
    # shellcheck disable=SC2086
    out=$("$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" $bad 2>&1) && fail "accepted $bad"
    assert_contains "$out" "bad value for ${bad%% *}: ${bad#* }"
done

start_audit_webhook() {
    start_bg "${WH_NAME:-wmap-webhook}" "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/readyz | grep -qx ok" 30 \
        "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port "$WH_PORT" \
        --kubeconfig "$E2E_TMP/sa.kubeconfig" --sync-timeout 30 --audit-interval 2s "$@"
    wait_until 10 metric_is wmap_webhook_leader 1 || fail "no Lease"
}
rounds_gt() { metric_gt wmap_audit_rounds_total "$1"; }
report() { kc get reports.openreports.io wmap-policy -n ml-a -o json; }
# (jq 1.6 -e exits 0 on empty input, so a missing report must not be read as a match: -s.)
report_has() { report 2>/dev/null | jq -se "length == 1 and (.[0] | $1)" >/dev/null; }

start_audit_webhook
wait_until 10 rounds_gt 0 || fail "no audit round"
assert_eq "" "$(kc get reports -A -o name)" "no policy with actions: no report"

run_ok kc apply -f "$AUDIT/policy-audit.yaml"
t0=$(now_ms)
wait_until 15 report_has '.summary.fail == 1' || fail "the violation was not reported: $(report 2>&1)"
echo "reported $(($(now_ms) - t0)) ms after the policy was created"
r=$(report)
assert_eq "1 1" "$(jq -r '"\(.summary.pass) \(.summary.fail)"' <<<"$r")" "summary pass, fail"
assert_eq "wmap-webhook" "$(jq -r '.metadata.labels["app.kubernetes.io/managed-by"]' <<<"$r")"
assert_eq "wmap" "$(jq -r .source <<<"$r")"
bad=$(jq -c '.results[] | select(.resources[0].name == "bad")' <<<"$r")
good=$(jq -c '.results[] | select(.resources[0].name == "good")' <<<"$r")
assert_eq "$POLICY fail low Audit true" "$(jq -r '"\(.policy) \(.result) \(.severity) \(.properties.actions) \(.scored)"' <<<"$bad")"
assert_contains "$(jq -r .message <<<"$bad")" "priorityClassName"
assert_contains "$(jq -r .message <<<"$bad")" '"high"'
assert_eq "$(kc get jobset bad -n ml-a -o jsonpath='{.metadata.uid}')" "$(jq -r '.resources[0].uid' <<<"$bad")" "the workload's uid"
assert_eq "jobset.x-k8s.io/v1alpha2 JobSet ml-a" "$(jq -r '.resources[0] | "\(.apiVersion) \(.kind) \(.namespace)"' <<<"$bad")"
assert_eq "$POLICY pass null" "$(jq -r '"\(.policy) \(.result) \(.message)"' <<<"$good")"
assert_eq 1 "$(wh_metric "wmap_audit_violations{policy=\"$POLICY\",action=\"audit\",namespace=\"ml-a\"}")" "violations gauge"
# kubectl wmap audit -A (the same check, run by hand) lists what the report lists.
plugin_on_path || fail "plugin not built: $PLUGIN"
out=$(kubectl wmap audit -A -o json 2>"$E2E_TMP/audit.err") || fail "kubectl wmap audit -A: $(cat "$E2E_TMP/audit.err")"
assert_eq "$(jq -r '[.results[] | select(.result == "fail") | "\(.resources[0].namespace)/\(.resources[0].name) \(.policy)"] | unique | join(",")' <<<"$r")" \
    "$(jq -r '[.violations[] | "\(.workload.namespace)/\(.workload.name) \(.policy)"] | unique | join(",")' <<<"$out")" \
    "kubectl wmap audit -A and the report"
metric_gt wmap_audit_last_requests 0 || fail "the audit made no requests?"
assert_eq 0 "$(wh_metric wmap_audit_skipped_kinds_total)" "every listed kind was allowed by deploy/base/02-rbac.yaml"
if grep -E ' 403 ' "$E2E_TMP/requests.log" | grep -E 'reports|jobsets'; then fail "a request of the audit was refused"; fi

# Unchanged: the next rounds find nothing to write (same resourceVersion).
rv=$(jq -r .metadata.resourceVersion <<<"$r")
n=$(wh_metric wmap_audit_rounds_total)
wait_until 15 rounds_gt $((n + 2)) || fail "the audit stopped running"
assert_eq "$rv" "$(report | jq -r .metadata.resourceVersion)" "an unchanged report is not rewritten"

# A hand edit is put right in the next round, and so is a deleted report.
run_ok kc patch reports.openreports.io wmap-policy -n ml-a --type=merge -p '{"summary":{"fail":0,"pass":7}}'
wait_until 15 report_has '.summary.fail == 1 and .summary.pass == 1' || fail "the edited report was not rewritten: $(report 2>&1)"
run_ok kc delete reports.openreports.io wmap-policy -n ml-a
wait_until 15 report_has '.summary.fail == 1' || fail "the deleted report was not written again"

# A JobSet that cannot be evaluated: an error result for the policy, then gone with it.
run_ok kc create --validate=false -f "$AUDIT/jobset-broken.yaml"
wait_until 15 report_has '.summary.error == 1' || fail "no error result: $(report 2>&1)"
e=$(report | jq -c '.results[] | select(.resources[0].name == "broken")')
assert_eq "$POLICY error" "$(jq -r '"\(.policy) \(.result)"' <<<"$e")"
assert_contains "$(jq -r .message <<<"$e")" "Cannot iterate over string"
assert_eq "1 1" "$(report | jq -r '"\(.summary.pass) \(.summary.fail)"')" "the other results stay"
run_ok kc delete jobset broken -n ml-a
wait_until 15 report_has '.summary.error == 0' || fail "the error result stayed"

# Fixed with kubectl patch: the result turns to pass.
run_ok kc patch jobset bad -n ml-a --type=json -p '[
    {"op":"replace","path":"/spec/replicatedJobs/0/template/spec/template/spec/priorityClassName","value":"high"},
    {"op":"replace","path":"/spec/replicatedJobs/1/template/spec/template/spec/priorityClassName","value":"high"}]'
wait_until 15 report_has '.summary.fail == 0 and .summary.pass == 2' || fail "the fix was not reported: $(report 2>&1)"
assert_eq "pass" "$(report | jq -r '.results[] | select(.resources[0].name == "bad") | .result')"
wait_until 10 bash -c "[[ -z \$(curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/metrics | grep '^wmap_audit_violations{') ]]" ||
    fail "the gauge still counts the fixed JobSet"

# Deleted: its result goes; the last one gone, the Report goes.
run_ok kc delete jobset bad -n ml-a
wait_until 15 report_has '(.results | length) == 1 and .results[0].resources[0].name == "good"' ||
    fail "the deleted JobSet stayed in the report: $(report 2>&1)"
run_ok kc delete jobset good -n ml-a
wait_until 15 bash -c "! kubectl --kubeconfig '$KUBECONFIG' get reports.openreports.io wmap-policy -n ml-a >/dev/null 2>&1" ||
    fail "the empty report was not deleted"
assert_eq "" "$(kc get reports -A -o name)" "no report left"

# The older format: wgpolicyk8s.io/v1alpha2 PolicyReport.
kill "$wmap_webhook_PID"
wait "$wmap_webhook_PID" || fail "the webhook did not stop cleanly: $(tail -n 5 "$E2E_TMP/wmap-webhook.log")"
run_ok kc apply -f "$AUDIT/jobsets.yaml"
WH_NAME=wmap-webhook-wg start_audit_webhook --report-api wgpolicyk8s
polr() { kc get policyreports.wgpolicyk8s.io wmap-policy -n ml-a -o json; }
wait_until 30 bash -c "kubectl --kubeconfig '$KUBECONFIG' get policyreports.wgpolicyk8s.io wmap-policy -n ml-a -o json 2>/dev/null | jq -se 'length == 1 and .[0].summary.fail == 1' >/dev/null" ||
    { grep -E 'audit|leader|swapped|synced' "$E2E_TMP/wmap-webhook-wg.log" | cut -c1-300 >&2; fail "no PolicyReport: $(polr 2>&1)"; }
r=$(polr)
assert_eq "wgpolicyk8s.io/v1alpha2 PolicyReport 1 1" "$(jq -r '"\(.apiVersion) \(.kind) \(.summary.pass) \(.summary.fail)"' <<<"$r")"
assert_eq "fail" "$(jq -r '.results[] | select(.resources[0].name == "bad") | .result' <<<"$r")"
assert_eq "" "$(kc get reports -A -o name)" "nothing written in the other format"
