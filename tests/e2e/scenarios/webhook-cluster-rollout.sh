# A rule rolled out in stages, and a GPU limit per team (issue 24), with the real kubectl,
# deploy/'s WorkloadPolicy CRD and webhook configurations, and the webhook as leader:
# - a `require` policy with [Audit] over workloads that exist: the namespace's Report lists
#   the violator, nothing is changed (same resourceVersion), and a new violator is admitted
#   silently and unchanged; its kinds go to advisories.wmap.io (failurePolicy Ignore);
# - switched to [Warn] with kubectl patch: kubectl apply prints the warning; with the
#   webhook stopped, such a JobSet is still created;
# - switched to [Deny]: refused with the message; its kinds move to policies.wmap.io
#   (failurePolicy Fail), so with the webhook stopped it is refused too;
# - limits: a PyTorchJob of 12 x 8 GPUs under a 64-GPU limit is denied with the figure, the
#   limit and the components; a JobSet of 48 GPUs passes; scaling it to 72 with kubectl
#   patch is refused; the same three, made before the policy, in kubectl wmap audit -A and
#   the namespace's Report.
source "$E2E_DIR/cluster-helpers.sh"
D=$REPO_ROOT/deploy/base
R=$E2E_DIR/data/rollout

cluster_setup
run_ok kc apply -f "$D/00-namespace.yaml" -f "$D/01-crd-workloadpolicies.wmap.io.yaml" \
    -f "$E2E_DIR/data/audit/report-crds.yaml" -f "$E2E_DIR/data/jobset-crd.yaml" -f "$R/pytorchjob-crd.yaml"
for r in jobsets pytorchjobs workloadpolicies reports; do wait_until 10 kc get "$r" -A; done
run_ok kc apply -f "$D/09-validatingwebhookconfiguration.yaml"
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json -p "[
    {\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},
    {\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},
    {\"op\":\"add\",\"path\":\"/webhooks/2/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"}]"
for ns in team-a team-b; do run_ok kc create namespace "$ns"; done
run_ok kc apply -f "$R/existing.yaml"
plugin_on_path || fail "plugin not built: $PLUGIN"

# "resources:OPS" of one webhook of the validating configuration, sorted.
hook_rules() {
    curl -sS --max-time 10 --noproxy '*' --cacert "$SIM_PKI/ca.crt" -H "Authorization: Bearer $SIM_TOKEN" \
        "$SIM_URL/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/wmap-webhook" |
        jq -r --arg h "$1" '[.webhooks[] | select(.name == $h) | (.rules // [])[] | . as $r |
                            .resources[] | "\(.):\($r.operations | join("+"))"] | sort | join(",")'
}
hook_is() { [[ "$(hook_rules "$1")" == "$2" ]]; }
export -f hook_rules
report() { kc get reports.openreports.io wmap-policy -n "$1" -o json; }
report_has() { report "$1" 2>/dev/null | jq -se "length == 1 and (.[0] | $2)" >/dev/null; }
result_of() {  # result_of NS NAME POLICY: "result message" of that workload's result
    report "$1" | jq -r --arg n "$2" --arg p "$3" '.results[] | select(.resources[0].name == $n and .policy == $p) | "\(.result) \(.message)"'
}
start_webhook() {
    cluster_webhook_start --sync-timeout 30 --audit-interval 2s
    wait_until 20 metric_is wmap_webhook_leader 1 || fail "the webhook did not take the Lease"
}
stop_webhook() {
    kill -TERM "$wmap_webhook_PID"
    wait "$wmap_webhook_PID" || fail "the webhook did not exit cleanly"
}
jobset_named() { sed "s/name: NAME/name: $1/" "$R/jobset-low.yaml" >"$E2E_TMP/$1.yaml"; echo "$E2E_TMP/$1.yaml"; }
WARNING='policy training-priority: component replicatedjob (instance workers): priorityClassName must be "training-high" (found "low")'

start_webhook
rv_low=$(kc get jobset low -n team-b -o jsonpath='{.metadata.resourceVersion}')

# Stage 1, [Audit]: the Report lists the violator; nothing is changed or refused.
run_ok kc apply -f "$R/training-priority.yaml"
wait_until 15 report_has team-b '.summary.fail == 1 and .summary.pass == 3' ||
    fail "the Report does not list the violator: $(report team-b 2>&1 | head -c 600)"
assert_eq "fail $WARNING" "$(result_of team-b low training-priority)" "the violator, as the policy words it"
assert_eq "pass null" "$(result_of team-b ok training-priority)"
assert_eq "low $rv_low" "$(kc get jobset low -n team-b -o jsonpath='{.spec.replicatedJobs[0].template.spec.template.spec.priorityClassName} {.metadata.resourceVersion}')" \
    "the existing workload is not changed"
wait_until 10 hook_is advisories.wmap.io "jobsets:CREATE" || fail "an Audit policy's kinds are not advisory: $(hook_rules advisories.wmap.io)"
assert_eq "" "$(hook_rules policies.wmap.io)" "no Deny policy: nothing fails closed"
run_ok kc apply -f "$(jobset_named audit-1)"
assert_not_contains "$OUT" "Warning"
assert_eq low "$(kc get jobset audit-1 -n team-a -o jsonpath='{.spec.replicatedJobs[0].template.spec.template.spec.priorityClassName}')" \
    "a require policy writes nothing"
assert_eq JobSet.jobset.x-k8s.io "$(kc get jobset audit-1 -n team-a -o jsonpath='{.spec.replicatedJobs[0].template.spec.template.metadata.labels.wmap\.io/workload-kind}')" \
    "(the mutating webhook did run)"

# Stage 2, [Warn]: kubectl apply prints the warning.
run_ok kc patch workloadpolicy training-priority --type=merge -p '{"spec":{"validationActions":["Warn"]}}'
wait_until 10 bash -c "kubectl --kubeconfig '$KUBECONFIG' apply --dry-run=server -f '$(jobset_named warn-1)' 2>&1 | grep -q Warning" ||
    fail "the Warn stage is not in force"
run_ok kc apply -f "$(jobset_named warn-1)"
assert_contains "$OUT" "Warning: $WARNING"
assert_contains "$OUT" "jobset.jobset.x-k8s.io/warn-1 created"
assert_eq "jobsets:CREATE" "$(hook_rules advisories.wmap.io)" "Warn stays advisory"
# ... and with the webhook stopped a Warn-only kind is still created (failurePolicy Ignore).
stop_webhook
run_ok kc apply -f "$(jobset_named warn-down)"
assert_contains "$OUT" "jobset.jobset.x-k8s.io/warn-down created"

# Stage 3, [Deny]: refused with the message; the kinds fail closed now.
start_webhook
run_ok kc patch workloadpolicy training-priority --type=merge -p '{"spec":{"validationActions":["Deny"]}}'
wait_until 10 hook_is policies.wmap.io "jobsets:CREATE" || fail "the Deny policy's kinds are not enforced: $(hook_rules policies.wmap.io)"
assert_eq "" "$(hook_rules advisories.wmap.io)" "moved, not copied"
assert_fails kc apply -f "$(jobset_named deny-1)"
assert_contains "$OUT" "admission webhook \"policies.wmap.io\" denied the request: $WARNING"
assert_fails kc get jobset deny-1 -n team-a
stop_webhook
assert_fails kc apply -f "$(jobset_named deny-down)"
assert_contains "$OUT" "policies.wmap.io"
assert_fails kc get jobset deny-down -n team-a

# Limits: denied with the figure, the limit and the components; within it passes; scaling
# past it is refused.
start_webhook
run_ok kc delete workloadpolicy training-priority
run_ok kc apply -f "$R/team-gpu-limits.yaml"
# A limit without validationActions checks nothing: refused at apply, with the field.
sed 's/^  validationActions: \[Deny\]$//; s/name: team-gpu-limits/name: no-actions/' "$R/team-gpu-limits.yaml" >"$E2E_TMP/no-actions.yaml"
assert_fails kc apply -f "$E2E_TMP/no-actions.yaml"
assert_contains "$OUT" 'admission webhook "definitions.wmap.io" denied the request: no-actions: document 1: .spec.limits: limits are checks: give validationActions'
# (No match.kinds: every covered kind the simulator serves, pods and Deployments too.)
wait_until 10 bash -c "[[ ,\$(hook_rules policies.wmap.io), == *,jobsets:CREATE+UPDATE,*pytorchjobs:CREATE+UPDATE,* ]]" ||
    fail "the limits policy's kinds are not enforced: $(hook_rules policies.wmap.io)"
assert_fails kc apply -f "$R/pytorchjob-96.yaml"
assert_contains "$OUT" 'admission webhook "policies.wmap.io" denied the request: policy team-gpu-limits: PyTorchJob team-a/llama: 96 nvidia.com/gpu requested (limit 64): master 1 x 8 + worker 11 x 8'
run_ok kc apply -f "$R/jobset-48.yaml"
assert_contains "$OUT" "jobset.jobset.x-k8s.io/js48 created"
assert_fails kc patch jobset js48 -n team-a --type=json -p '[{"op":"replace","path":"/spec/replicatedJobs/0/replicas","value":9}]'
assert_contains "$OUT" 'policy team-gpu-limits: JobSet team-a/js48: 72 nvidia.com/gpu requested (limit 64): replicatedjob/workers 9 x 8'
assert_eq 6 "$(kc get jobset js48 -n team-a -o jsonpath='{.spec.replicatedJobs[0].replicas}')" "not scaled"

# The same three made before the policy (team-b): kubectl wmap audit -A and the Report.
rc=0
out=$(kubectl wmap audit -A -o json 2>"$E2E_TMP/audit.err") || rc=$?
assert_eq 1 "$rc" "a Deny policy is violated: exit 1"
assert_eq "9 0" "$(jq -r '"\(.checked) \(.errors | length)"' <<<"$out")" "every workload of both namespaces checked"
assert_eq "team-b/js72 72 limits.workload[nvidia.com/gpu],team-b/llama 96 limits.workload[nvidia.com/gpu]" \
    "$(jq -r '[.violations[] | select(.policy == "team-gpu-limits") | "\(.workload.namespace)/\(.workload.name) \(.have) \(.field)"] | sort | join(",")' <<<"$out")" \
    "the violators, with their figures"
wait_until 15 bash -c "kubectl --kubeconfig '$KUBECONFIG' get reports.openreports.io wmap-policy -n team-b -o json 2>/dev/null |
    jq -e '[.results[] | select(.policy == \"team-gpu-limits\")] | length == 5' >/dev/null" ||
    fail "the Report does not judge the limits: $(report team-b 2>&1 | head -c 800)"
assert_eq "fail policy team-gpu-limits: PyTorchJob team-b/llama: 96 nvidia.com/gpu requested (limit 64): master 1 x 8 + worker 11 x 8" \
    "$(result_of team-b llama team-gpu-limits)"
assert_eq "fail policy team-gpu-limits: JobSet team-b/js72: 72 nvidia.com/gpu requested (limit 64): replicatedjob/workers 9 x 8" \
    "$(result_of team-b js72 team-gpu-limits)"
assert_eq "pass null" "$(result_of team-b js48 team-gpu-limits)"
assert_eq "high" "$(report team-b | jq -r '.results[] | select(.resources[0].name == "llama") | .severity')" "Deny: severity high"
[[ "$(wh_metric 'wmap_audit_violations{policy="team-gpu-limits",action="deny",namespace="team-b"}')" == 2 ]] ||
    fail "the audit gauge does not count the limits: $(wh_get /metrics | grep wmap_audit_violations)"

# deploy/ of an older release, without advisories.wmap.io: the Warn policy's kinds go to
# policies.wmap.io as before, rather than to no webhook at all.
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json -p '[
    {"op":"test","path":"/webhooks/2/name","value":"advisories.wmap.io"},{"op":"remove","path":"/webhooks/2"}]'
run_ok kc delete workloadpolicy team-gpu-limits
sed 's/\[Audit\]/[Warn]/' "$R/training-priority.yaml" >"$E2E_TMP/warn.yaml"
run_ok kc apply -f "$E2E_TMP/warn.yaml"
wait_until 10 hook_is policies.wmap.io "jobsets:CREATE" ||
    fail "without advisories.wmap.io the Warn kinds are not validated: $(hook_rules policies.wmap.io)"

