# kubectl wmap get -o wide: ORIGIN, PODS (ready/desired), GPU and COMPONENTS on every covered
# type of tests/fixtures (each sample object preloaded under a permissive CRD, compared with
# a golden file), PODS counted through a JobSet's Jobs to its pods, and the requests: one
# paged list per type, one list per kind between workloads and pods, one pod list, never a
# request per workload.
source "$E2E_DIR/live-helpers.sh"
python3 "$E2E_DIR/data/wide/fixtures-to-cluster.py" >"$E2E_TMP/fx.json"
# Many workloads (checked at the end): 300 JobSets with 2 Jobs and 6 pods each, preloaded.
python3 - "$E2E_TMP/many.json" <<'PY'
import json, sys
items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "many"}}]
for i in range(300):
    js = f"js-{i:04d}"
    items.append({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                  "metadata": {"name": js, "namespace": "many", "uid": f"uid-{js}"},
                  "spec": {"replicatedJobs": [{"name": "w", "replicas": 2, "template": {"spec": {"parallelism": 3,
                      "template": {"spec": {"containers": [{"name": "m", "image": "x",
                          "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}}]}})
    for j in range(2):
        job = f"{js}-w-{j}"
        items.append({"apiVersion": "batch/v1", "kind": "Job",
                      "metadata": {"name": job, "namespace": "many", "uid": f"uid-{job}",
                                   "ownerReferences": [{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                                        "name": js, "uid": f"uid-{js}", "controller": True}]},
                      "spec": {"template": {"spec": {"containers": [{"name": "m", "image": "x"}]}}}})
        for p in range(3):
            items.append({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"{job}-{p}", "namespace": "many", "uid": f"uid-{job}-{p}",
                                       "labels": {"jobset.sigs.k8s.io/jobset-name": js,
                                                  "jobset.sigs.k8s.io/replicatedjob-name": "w"},
                                       "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job,
                                                            "uid": f"uid-{job}", "controller": True}]},
                          "spec": {"containers": [{"name": "m", "image": "x"}]},
                          "status": {"phase": "Running",
                                     "conditions": [{"type": "Ready", "status": "True" if p < 2 else "False"}]}})
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[1], "w"))
PY
sim_start --load "$E2E_TMP/fx.json" --load "$E2E_TMP/many.json"
plugin_on_path || fail "plugin not built: $PLUGIN"
kc apply -f "$REPO_ROOT/deploy/base/01-crd-kartas.run.ai.yaml" >/dev/null
LOG=$E2E_TMP/requests.log
# AGE varies, and so does the order (newest first: a slow --load spreads the creation times):
# the golden file has <age>, rows sorted, spaces squeezed.
norm() {
    local all
    all=$(cat)
    head -n1 <<<"$all" | tr -s ' '
    tail -n +2 <<<"$all" | awk '{ $5 = "<age>"; print }' | LC_ALL=C sort
}

kubectl wmap get --all-types -n fx -o wide >"$E2E_TMP/out" 2>"$E2E_TMP/err" || fail "get -o wide: $(cat "$E2E_TMP/err")"
norm <"$E2E_TMP/out" >"$E2E_TMP/out.norm"
# The fixtures that do not fit their definition (bad on purpose) are named on stderr.
assert_contains "$(cat "$E2E_TMP/err")" "Warning: JobSet.jobset.x-k8s.io jobset-replicas-abc: not resolved: component 'replicatedjob': .spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath: replicas value \"abc\" at index 0 is not a number"
if [[ -n ${UPDATE:-} ]]; then cp "$E2E_TMP/out.norm" "$E2E_DIR/golden/live-get-wide.out"; fi
diff -u "$E2E_DIR/golden/live-get-wide.out" "$E2E_TMP/out.norm" || fail "get -o wide differs from the golden file"
assert_eq "NAME NAMESPACE TYPE PHASE AGE ORIGIN PODS GPU COMPONENTS" "$(head -n1 "$E2E_TMP/out" | tr -s ' ')"
# Every kind of the fixtures the simulator serves is there.
for k in $(jq -r '.items[] | select(.kind != "Namespace" and .kind != "CustomResourceDefinition") | .kind' "$E2E_TMP/fx.json" | sort -u); do
    grep -Eq " $k(\.[a-z0-9.-]+)? " "$E2E_TMP/out" || fail "no $k row"
done

# A JobSet with its Jobs and 5 pods (4 ready): PODS through the Jobs, GPU of the desired pods.
live_jobset_fixture
start=$(wc -l <"$LOG")
run_ok kubectl wmap get jobsets -o wide
assert_eq "train default Initializing <age> catalog 4/5 4 replicatedjob[driver,workers]" \
    "$(grep '^train ' <<<"$OUT" | awk '{ $4 = "<age>"; print }')"
reqs=$(tail -n +"$((start + 1))" "$LOG" | awk '{print $2, $3}')
assert_eq 1 "$(grep -c '^GET /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets?limit=' <<<"$reqs")" "one JobSet list"
assert_eq 1 "$(grep -c '^GET /apis/batch/v1/namespaces/default/jobs?limit=' <<<"$reqs")" "one Job list"
assert_eq 1 "$(grep -c '^GET /api/v1/namespaces/default/pods?limit=' <<<"$reqs")" "one pod list"
assert_eq 0 "$(grep -c 'jobsets/train\|/jobs/\|/pods/' <<<"$reqs" || true)" "no request per object"

# In pages of 100: the requests grow with the pages, not with the workloads.
start=$(wc -l <"$LOG")
kubectl wmap get jobsets -n many -o wide --chunk-size 100 >"$E2E_TMP/many.out" 2>&1 || fail "get -o wide: $(cat "$E2E_TMP/many.out")"
assert_eq 301 "$(wc -l <"$E2E_TMP/many.out")"
assert_eq 300 "$(awk '$6 == "4/6" && $7 == "6" && $8 == "replicatedjob[w]"' "$E2E_TMP/many.out" | wc -l)" "4 of 6 pods ready, 6 GPUs, each JobSet: $(sed -n 2p "$E2E_TMP/many.out")"
reqs=$(tail -n +"$((start + 1))" "$LOG" | awk '{print $2, $3}')
assert_eq 3 "$(grep -c '^GET /apis/jobset.x-k8s.io/v1alpha2/namespaces/many/jobsets?limit=100' <<<"$reqs")" "300 JobSets in 3 pages"
assert_eq 6 "$(grep -c '^GET /apis/batch/v1/namespaces/many/jobs?limit=100' <<<"$reqs")" "600 Jobs in 6 pages"
assert_eq 18 "$(grep -c '^GET /api/v1/namespaces/many/pods?limit=100' <<<"$reqs")" "1800 pods in 18 pages"
assert_eq 0 "$(grep -c '/jobsets/\|/jobs/\|/pods/' <<<"$reqs" || true)" "no request per object"

# --all-types lists the pods as a type of its own: -o wide counts those, no second pod list.
start=$(wc -l <"$LOG")
kubectl wmap get --all-types -n many -o wide --chunk-size 1000 >"$E2E_TMP/all.out" 2>&1 || fail "get --all-types -o wide: $(cat "$E2E_TMP/all.out")"
assert_eq 300 "$(awk '$3 == "JobSet.jobset.x-k8s.io" && $7 == "4/6" && $8 == "6"' "$E2E_TMP/all.out" | wc -l)" "PODS from the pods listed as a type"
reqs=$(tail -n +"$((start + 1))" "$LOG" | awk '{print $2, $3}')
assert_eq 2 "$(grep -c '^GET /api/v1/namespaces/many/pods?limit=1000' <<<"$reqs")" "1800 pods in 2 pages, listed once"
assert_eq 0 "$(grep -c '/jobsets/\|/jobs/\|/pods/' <<<"$reqs" || true)" "no request per object"
