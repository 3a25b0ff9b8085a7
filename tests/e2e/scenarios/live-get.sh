# kubectl wmap get: a type's workloads with their phase (newest first), -A, -l, --phase,
# paging with limit/continue (--chunk-size), -o json, and --all-types (top-level objects of
# every covered type: a Job owned by a JobSet is not listed on its own).
source "$E2E_DIR/live-helpers.sh"
live_setup
# With the Karta CRD installed (no cluster definitions) nothing is warned about.
kc apply -f "$REPO_ROOT/deploy/base/01-crd-kartas.run.ai.yaml" >/dev/null
kc create namespace team-b >/dev/null
for n in a b c; do
    sed -e "s/name: train/name: js-$n/" -e "s/team: ml/team: $n/" "$LIVE_DATA/jobset.yaml" | kc create -f - >/dev/null
    sleep 1   # distinct creation times, to check the order
done
sed 's/name: train/name: js-other/' "$LIVE_DATA/jobset.yaml" | kc create -n team-b -f - >/dev/null
sim_curl PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/js-b/status \
    -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"status":{"conditions":[{"type":"Completed","status":"True"}]}}' >/dev/null

run_ok kubectl wmap get jobsets
assert_eq "NAME NAMESPACE PHASE AGE" "$(head -n1 <<<"$OUT" | tr -s ' ')"
assert_eq "js-c js-b js-a" "$(sed -n '2,4p' <<<"$OUT" | awk '{print $1}' | tr '\n' ' ' | sed 's/ $//')" "newest first"
assert_contains "$(grep js-b <<<"$OUT")" "Completed"
assert_contains "$(grep js-a <<<"$OUT")" "Initializing"
assert_not_contains "$OUT" "js-other"

run_ok kubectl wmap get jobset -A
assert_contains "$OUT" "js-other"
run_ok kubectl wmap get JobSet -l team=b
assert_eq 2 "$(wc -l <<<"$OUT")" "one row under the header"
assert_contains "$OUT" "js-b"
run_ok kubectl wmap get jobsets --phase completed
assert_eq 2 "$(wc -l <<<"$OUT")"
run_ok kubectl wmap get jobsets --phase Running
assert_contains "$OUT" "No workloads found in namespace default."
rc=0; kubectl wmap get jobsets --phase Sleeping >/dev/null 2>&1 || rc=$?
assert_eq 2 "$rc" "unknown phase"

# Paging: one object per request, every page followed.
n=$(wc -l <"$E2E_TMP/requests.log")
run_ok kubectl wmap get jobsets --chunk-size 1 -A
assert_eq 4 "$(grep -c '^js-' <<<"$OUT")"
assert_eq 3 "$(tail -n +"$((n + 1))" "$E2E_TMP/requests.log" | grep -c 'continue=' || true)" "three continued pages"

out=$(kubectl wmap get jobsets -o json 2>/dev/null) || fail "get -o json"
assert_eq 3 "$(jq .count <<<"$out")"
assert_eq '["Completed"]' "$(jq -c '.items[] | select(.name == "js-b") | .phases' <<<"$out")"
assert_eq jobset-x-k8s-io-jobset-v1alpha2 "$(jq -r '.items[0].definition' <<<"$out")"
out=$(kubectl wmap get jobset js-a -o json 2>/dev/null) || fail "get NAME -o json"
assert_eq js-a "$(jq -r .name <<<"$out")" "a single named workload is emitted bare"

# --all-types: JobSets and a RayCluster; the JobSet's Job is not top level.
kc create -f "$LIVE_DATA/raycluster.yaml" >/dev/null
ref=$(live_ref jobset.x-k8s.io/v1alpha2 JobSet js-a "$(live_uid jobset js-a)")
live_create "$(jq -cn --argjson r "$ref" '{apiVersion:"batch/v1", kind:"Job", metadata:{name:"js-a-driver-0", ownerReferences:[$r]},
    spec:{template:{spec:{restartPolicy:"Never", containers:[{name:"main", image:"busybox"}]}}}}')"
run_ok kubectl wmap get --all-types
assert_eq "NAME NAMESPACE TYPE PHASE AGE" "$(head -n1 <<<"$OUT" | tr -s ' ')"
assert_contains "$OUT" "RayCluster.ray.io"
assert_contains "$OUT" "JobSet.jobset.x-k8s.io"
assert_not_contains "$OUT" "js-a-driver-0"

# Shell completion through kubectl (1.26+ runs kubectl_complete-wmap from PATH).
run_ok "$KUBECTL" __complete wmap describe ""
assert_contains "$OUT" "jobsets"
assert_contains "$OUT" "rayclusters"
run_ok "$KUBECTL" __complete wmap describe jobset/js-
assert_contains "$OUT" "jobset/js-a"
assert_not_contains "$OUT" "js-other" "other namespace"
run_ok "$KUBECTL" __complete wmap get jobsets js -n team-b
run_ok "$KUBECTL" __complete wmap get jobsets -n team-b ""
assert_contains "$OUT" "js-other"
run_ok "$KUBECTL" __complete wmap describe -n ""
assert_contains "$OUT" "team-b"

# A covered type whose CRD is not installed answers the same (exit 3) in every spelling
# kubectl accepts; a type nothing covers exits 4.
for t in PyTorchJob pytorchjob pytorchjobs pytorchjobs.kubeflow.org PyTorchJob.v1.kubeflow.org; do
    set +e
    out=$(kubectl wmap get "$t" 2>&1)
    rc=$?
    set -e
    assert_eq 3 "$rc" "get $t: exit code"
    assert_contains "$out" "its CRD is not installed in this cluster" "get $t"
done
set +e
out=$(kubectl wmap get gizmos 2>&1)
rc=$?
set -e
assert_eq 4 "$rc" "get gizmos: no definition covers it"
assert_contains "$out" "no Karta definition covers it"
