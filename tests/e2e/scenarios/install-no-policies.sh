# Nothing in force that the user did not ask for: `kubectl wmap install` and deploy/ ship no
# WorkloadPolicy and no policy file, and wmap-webhook run with exactly the Deployment's
# arguments (the TLS paths and port swapped for local ones, --kubeconfig added since it runs
# outside the cluster) stamps a JobSet in a team-* namespace and in prod with its identity
# labels only: no toleration, no priority class nobody wrote. The examples of
# docs/examples/workloadpolicies.yaml then act only once applied.
source "$E2E_DIR/cluster-helpers.sh"
plugin_on_path || fail "plugin not built: $PLUGIN"
[[ -x $WEBHOOK ]] || fail "webhook not built: $WEBHOOK"

run_ok bash -c "kubectl wmap install >'$E2E_TMP/install.yaml'"
kinds_of() { python3 -c 'import sys, yaml; print(" ".join(sorted({d["kind"] for d in yaml.safe_load_all(sys.stdin) if d})))'; }
kinds=$(kinds_of <"$E2E_TMP/install.yaml")
assert_not_contains "$kinds" "WorkloadPolicy" "install ships no policy"
assert_not_contains "$kinds" "ConfigMap" "install ships no policy file"
assert_not_contains "$(cat "$E2E_TMP/install.yaml")" "--policy" "the webhook reads no policy file"
run_ok kc kustomize "$REPO_ROOT/deploy/"
kinds=$(kinds_of <<<"$OUT")
assert_not_contains "$kinds" "WorkloadPolicy" "deploy/ ships no policy"
assert_not_contains "$kinds" "ConfigMap" "deploy/ ships no policy file"

WH_PORT=$(free_port)
export WH_PORT
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"
run_ok kc apply -f "$E2E_TMP/install.yaml"
run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 kc get jobsets || fail "JobSet CRD not served"
wait_until 10 kc get workloadpolicies || fail "WorkloadPolicy CRD not served"
assert_eq 0 "$(kc get workloadpolicies -o json | jq '.items | length')" "no policy in force"

run_ok kc -n wmap-system get secret wmap-webhook-tls -o json
jq -r '.data["tls.crt"]' <<<"$OUT" | base64 -d >"$E2E_TMP/tls.crt"
jq -r '.data["tls.key"]' <<<"$OUT" | base64 -d >"$E2E_TMP/tls.key"
run_ok kc -n wmap-system get deployment wmap-webhook -o json
mapfile -t args < <(jq -r '.spec.template.spec.containers[0].args[] | select(test("^--(tls-cert|tls-key|port)=") | not)' <<<"$OUT")
start_bg wmap-webhook "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/readyz | grep -qx ok" 40 \
    "$WEBHOOK" "${args[@]}" --tls-cert "$E2E_TMP/tls.crt" --tls-key "$E2E_TMP/tls.key" \
    --port "$WH_PORT" --kubeconfig "$KUBECONFIG"
wait_until 20 mwc_has jobset.x-k8s.io jobsets || fail "the webhook did not add JobSets to its rules"

tolerations='[.spec.replicatedJobs[].template.spec.template.spec.tolerations] | map(select(. != null)) | length'
priority='[.spec.replicatedJobs[].template.spec.template.spec.priorityClassName] | map(select(. != null)) | length'
label='.spec.replicatedJobs[0].template.spec.template.metadata.labels["wmap.io/workload-name"]'
for ns in team-a prod; do
    run_ok kc create namespace "$ns"
    run_ok kc -n "$ns" create -f "$E2E_DIR/data/jobset-sample.yaml"
    run_ok kc -n "$ns" get jobset train -o json
    assert_eq train "$(jq -r "$label" <<<"$OUT")" "stamped in $ns"
    assert_eq 0 "$(jq "$tolerations" <<<"$OUT")" "no toleration written in $ns"
    assert_eq 0 "$(jq "$priority" <<<"$OUT")" "no priority class written in $ns"
done

# The README's quick start, step 3: a Job made with kubectl create is stamped, and
# describe reads it live.
wait_until 20 mwc_has batch jobs || fail "the webhook did not add Jobs to its rules"
run_ok kc create job hello --image=busybox -- echo hi
assert_eq '"hello" "job"' "$(kc get job hello -o json | jq -c '.spec.template.metadata.labels | [."wmap.io/workload-name", ."wmap.io/component"]' | tr -d '[]' | tr ',' ' ')" "kubectl create job: stamped"
run_ok kubectl wmap describe job/hello
assert_contains "$OUT" "Job/hello   namespace: default   definition: batch-job-v1 (catalog)"

# The examples act once the user applies them: the team-* JobSet gets the toleration.
run_ok kc apply -f "$REPO_ROOT/docs/examples/workloadpolicies.yaml"
has_policies() { [[ $(wh_metric 'wmap_webhook_cluster_objects{resource="workloadpolicies"}') == 2 ]]; }
wait_until 20 has_policies || fail "the webhook did not take the applied policies"
run_ok kc -n team-a create -f - <<<"$(sed 's/name: train$/name: train2/' "$E2E_DIR/data/jobset-sample.yaml")"
run_ok kc -n team-a get jobset train2 -o json
assert_eq '{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"}' \
    "$(jq -cS '.spec.replicatedJobs[0].template.spec.template.spec.tolerations[0]' <<<"$OUT")" "the applied example acts"
