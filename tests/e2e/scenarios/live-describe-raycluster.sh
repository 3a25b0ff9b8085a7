# kubectl wmap describe of a live RayCluster: head and worker Pods owned by the RayCluster
# itself, split into worker groups by the ray.io/group label; one worker unschedulable.
# The hand-written CRD declares pod template metadata as a bare object (as KubeRay's does),
# so describe warns that labels written there would be pruned.
source "$E2E_DIR/live-helpers.sh"
live_setup
kc create -f "$LIVE_DATA/raycluster.yaml" >/dev/null
ref=$(live_ref ray.io/v1 RayCluster demo "$(live_uid raycluster demo)")
rpod() { # NAME TYPE GROUP NODE GPU
    local labels
    labels=$(jq -cn --arg t "$2" --arg g "$3" '{"ray.io/cluster":"demo", "ray.io/node-type":$t}
        + (if $g == "" then {} else {"ray.io/group":$g} end)')
    live_pod "$1" "$ref" "$labels" '{}' "$4" "$5"
}
live_create "$(rpod demo-head-x2v9k head '' node-1 0)" \
    "$(rpod demo-gpu-a-worker-4kq7w worker gpu-a node-2 2)" \
    "$(rpod demo-gpu-a-worker-9z8xm worker gpu-a '' 2)" \
    "$(rpod demo-cpu-worker-m3p5d worker cpu node-1 0)"
live_status demo-head-x2v9k Running True
live_status demo-gpu-a-worker-4kq7w Running True
live_status demo-gpu-a-worker-9z8xm Pending False Unschedulable
live_status demo-cpu-worker-m3p5d Running False
sim_curl PATCH /apis/ray.io/v1/namespaces/default/rayclusters/demo/status \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"status":{"state":"ready"}}' >/dev/null

kubectl wmap describe raycluster demo >"$E2E_TMP/out" 2>"$E2E_TMP/err" || fail "describe failed: $(cat "$E2E_TMP/err")"
live_norm <"$E2E_TMP/out" >"$E2E_TMP/out.norm"
diff -u "$E2E_DIR/golden/live-describe-raycluster.out" "$E2E_TMP/out.norm" || fail "describe output differs from the golden file"
assert_contains "$(cat "$E2E_TMP/err")" "the CRD rayclusters.ray.io declares pod template metadata (.spec.headGroupSpec.template.metadata) without properties"
assert_contains "$(cat "$E2E_TMP/err")" "kubernetes/kubernetes#103739"

# --component-limit keeps the unhealthy components first.
run_ok kubectl wmap describe raycluster/demo --component-limit 1
assert_contains "$OUT" "worker"
assert_contains "$OUT" "and 1 more component"
assert_not_contains "$OUT" "demo-head-x2v9k"
