# kubectl wmap describe on the day a JobSet misbehaves: a worker that cannot be scheduled
# (FailedScheduling, deduplicated with its count), a worker crash-looping after an OOM kill
# (CrashLoopBackOff and its restarts), a Job whose pods the quota refuses (FailedCreate on a
# controller with no pods), the JobSet's own Warning event, and the gang state against the
# definition, a Volcano PodGroup and then a Kueue Workload. Events cost one request per
# describe; --events 0 makes none; -o json carries the same facts; a scheduler CRD that is
# not installed costs no request.
source "$E2E_DIR/live-helpers.sh"
live_setup
GANG=$E2E_DIR/data/gang
# Volcano, KAI and Kueue are installed; scheduler-plugins' coscheduling is not.
for f in volcano-podgroup kai-podgroup kueue-workload; do
    kc apply -f "$GANG/$f-crd.yaml" >/dev/null || fail "cannot create the $f CRD"
done
live_jobset_fixture
js_uid=$(live_uid jobset train)

# Three replicas of workers now: the third Job exists, but the quota refuses its pods.
kc patch jobset train --type=json -p '[{"op":"replace","path":"/spec/replicatedJobs/1/replicas","value":3}]' >/dev/null
live_create "$(jq -cn --argjson r "$(live_ref jobset.x-k8s.io/v1alpha2 JobSet train "$js_uid")" \
    '{apiVersion:"batch/v1", kind:"Job", metadata:{name:"train-workers-2", ownerReferences:[$r],
      labels:{"jobset.sigs.k8s.io/jobset-name":"train", "jobset.sigs.k8s.io/replicatedjob-name":"workers"}},
      spec:{template:{spec:{restartPolicy:"Never", containers:[{name:"main", image:"busybox"}]}}}}')"

# train-workers-0-1-c9m4r crash-loops: OOM-killed last time, 7 restarts.
r=$(sim_curl PATCH /api/v1/namespaces/default/pods/train-workers-0-1-c9m4r/status \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"status":{"phase":"Running",
    "conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"False","reason":"ContainersNotReady"}],
    "containerStatuses":[{"name":"main","ready":false,"restartCount":7,"image":"python:3.12",
      "state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 5m0s restarting failed container=main pod=train-workers-0-1-c9m4r_default"}},
      "lastState":{"terminated":{"reason":"OOMKilled","exitCode":137}}}]}}')
[[ $(tail -n1 <<<"$r") == 200 ]] || fail "crash-loop status: $r"

ago() { date -u -d "-$1" +%Y-%m-%dT%H:%M:%SZ; }
uid_of() { kc get "$1" "$2" -o jsonpath='{.metadata.uid}'; }
ev() { # NAME KIND APIVERSION OBJECT UID TYPE REASON COUNT AGO MESSAGE
    jq -cn --arg n "$1" --arg k "$2" --arg a "$3" --arg o "$4" --arg u "$5" --arg t "$6" \
        --arg r "$7" --arg c "$8" --arg ts "$(ago "$9")" --arg m "${10}" '
        {apiVersion:"v1", kind:"Event", metadata:{name:$n},
         involvedObject:{kind:$k, apiVersion:$a, name:$o, namespace:"default", uid:$u},
         type:$t, reason:$r, count:($c|tonumber), firstTimestamp:$ts, lastTimestamp:$ts,
         message:$m, source:{component:"test"}}'
}
unsched=$(uid_of pod train-workers-1-1-f4j8t)
crash=$(uid_of pod train-workers-0-1-c9m4r)
job2=$(uid_of job train-workers-2)
impostor=$(uid_of pod impostor)
msg_gpu='0/8 nodes are available: 8 Insufficient nvidia.com/gpu. preemption: 0/8 nodes are available: 8 No preemption victims found for incoming pod.'
events=(
    "$(ev unsched.1 Pod v1 train-workers-1-1-f4j8t "$unsched" Warning FailedScheduling 3 '2 minutes' "$msg_gpu")"
    "$(ev unsched.2 Pod v1 train-workers-1-1-f4j8t "$unsched" Warning FailedScheduling 2 '9 minutes' "$msg_gpu")"
    "$(ev unsched.3 Pod v1 train-workers-1-1-f4j8t "$unsched" Warning FailedScheduling 1 '30 minutes' '0/8 nodes are available: 8 node(s) had untolerated taint {nvidia.com/gpu: present}.')"
    "$(ev crash.1 Pod v1 train-workers-0-1-c9m4r "$crash" Warning BackOff 12 '1 minute' 'Back-off restarting failed container main in pod train-workers-0-1-c9m4r_default')"
    "$(ev crash.2 Pod v1 train-workers-0-1-c9m4r "$crash" Normal Pulled 8 '1 minute' 'Container image "python:3.12" already present on machine')"
    "$(ev job2.1 Job batch/v1 train-workers-2 "$job2" Warning FailedCreate 4 '3 minutes' 'Error creating: pods "train-workers-2-0-x2x9z" is forbidden: exceeded quota: gpu-quota, requested: nvidia.com/gpu=1, used: nvidia.com/gpu=4, limited: nvidia.com/gpu=4')"
    "$(ev js.1 JobSet jobset.x-k8s.io/v1alpha2 train "$js_uid" Warning JobCreationFailed 2 '4 minutes' 'jobs.batch "train-workers-2" is forbidden: exceeded quota: gpu-quota')"
    "$(ev imp.1 Pod v1 impostor "$impostor" Warning FailedScheduling 9 '1 minute' 'not ours: must not show')"
)
live_create "${events[@]}"

# A Volcano PodGroup named as the pods' annotation says, still waiting for its gang.
kc annotate pod train-driver-0-0-x7k2p train-workers-0-0-b5n8q train-workers-0-1-c9m4r \
    train-workers-1-0-d2h6s train-workers-1-1-f4j8t scheduling.k8s.io/group-name=train >/dev/null
kc create -f - >/dev/null <<'EOF' || fail "cannot create the Volcano PodGroup"
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: train}
spec: {minMember: 7, queue: default}
EOF
r=$(sim_curl PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/train/status \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"status":{"phase":"Pending","running":3,
    "conditions":[{"type":"Unschedulable","status":"True","reason":"NotEnoughResources",
      "message":"3/7 tasks in gang unschedulable: pod group is not ready, 4 Running, 7 minAvailable"}]}}')
[[ $(tail -n1 <<<"$r") == 200 ]] || fail "PodGroup status: $r"
# Another group that is not this workload's.
kc create -f - >/dev/null <<'EOF'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: someone-else}
spec: {minMember: 2}
EOF

: >"$E2E_TMP/requests.log"
kubectl wmap describe jobset/train >"$E2E_TMP/out" 2>"$E2E_TMP/err" || fail "describe failed: $(cat "$E2E_TMP/err")"
out=$(sed -E 's/   age: [0-9a-z]+$/   age: <age>/; s/^(    )[0-9a-z]+ ago  /\1<ago>  /' "$E2E_TMP/out")
# What a person reads, exactly (ages of events replaced by <ago>).
expected=$(cat <<'EOF'
Phase: Initializing
Gang: 4/7 scheduled, 3/7 ready (min 7), not admitted
  Volcano PodGroup train: Pending, min 7: NotEnoughResources: 3/7 tasks in gang unschedulable: pod group is not ready, 4 Running, 7 minAvailable
  would it fit at all? kubectl wmap fit jobsets.jobset.x-k8s.io/train -n default

Problems:
  JobSet/train
    <ago>  JobCreationFailed x2  JobSet/train: jobs.batch "train-workers-2" is forbidden: exceeded quota: gpu-quota
  replicatedjob/workers: 2 of 4 pods not ready
    train-workers-0-1-c9m4r: Running (CrashLoopBackOff, 7 restarts)
      main: CrashLoopBackOff, 7 restarts, last terminated OOMKilled (exit 137): back-off 5m0s restarting failed container=main pod=train-workers-0-1-c9m4r_default
    train-workers-1-1-f4j8t: Pending (Unschedulable)
    <ago>  BackOff x12  Pod/train-workers-0-1-c9m4r: Back-off restarting failed container main in pod train-workers-0-1-c9m4r_default
    <ago>  FailedScheduling x5  Pod/train-workers-1-1-f4j8t: 0/8 nodes are available: 8 Insufficient nvidia.com/gpu. preemption: 0/8 nodes are available: 8 No preemption victims found for incoming pod.
    <ago>  FailedCreate x4  Job/train-workers-2: Error creating: pods "train-workers-2-0-x2x9z" is forbidden: exceeded quota: gpu-quota, requested: nvidia.com/gpu=1, used: nvidia.com/gpu=4, limited: nvidia.com/gpu=4
    (1 more not shown; --events 3 shows 3 per section)
EOF
)
diff -u <(echo "$expected") <(sed -n '/^Phase:/,/^Resources:/p' <<<"$out" | sed '$d' | sed '${/^$/d}') \
    || fail "the phase, gang and problems sections differ"
assert_contains "$out" "train-workers-0-1-c9m4r   Running (CrashLoopBackOff, 7 restarts)" "the tree row says why"
assert_not_contains "$out" "must not show" "events of pods that are not the workload's"
assert_not_contains "$out" "Pulled" "Normal events are not shown"
assert_not_contains "$out" "someone-else" "another workload's PodGroup"
# The ages are the events' own lastTimestamp (kubectl's short form, 2m7s).
assert_contains "$(grep FailedScheduling "$E2E_TMP/out")" "    2m" "age of the merged FailedScheduling: its newest"
assert_contains "$(grep FailedCreate "$E2E_TMP/out")" "    3m" "age of FailedCreate"
# One events request per describe, type=Warning on the server; none for coscheduling, whose
# CRD is not installed.
assert_eq 1 "$(grep -c '/api/v1/namespaces/default/events' "$E2E_TMP/requests.log")" "events requests"
assert_contains "$(grep /events "$E2E_TMP/requests.log")" "fieldSelector=type%3DWarning"
assert_eq 0 "$(grep -c 'scheduling.x-k8s.io' "$E2E_TMP/requests.log")" "requests for a CRD that is not installed"
assert_eq 1 "$(grep -c '/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups' "$E2E_TMP/requests.log")" "one PodGroup list"

# --events 1 keeps the newest of each section; --events 0 asks for none.
run_ok kubectl wmap describe jobset/train --events 1
assert_contains "$OUT" "(3 more not shown; --events 1 shows 1 per section)"
assert_not_contains "$OUT" "FailedScheduling"
: >"$E2E_TMP/requests.log"
run_ok kubectl wmap describe jobset/train --events 0
assert_not_contains "$OUT" " ago  " "no event lines with --events 0"
assert_contains "$OUT" "main: CrashLoopBackOff, 7 restarts, last terminated OOMKilled (exit 137)" "container issues without events"
assert_eq 0 "$(grep -c '/events' "$E2E_TMP/requests.log")" "no events request with --events 0"
assert_fails kubectl wmap describe jobset/train --events -1
assert_contains "$OUT" "--events needs a number >= 0"

# -o json carries the same facts.
json=$(kubectl wmap describe jobset/train -o json 2>/dev/null) || fail "describe -o json"
assert_eq '{"minMember":7,"minFrom":"Volcano","desired":7,"scheduled":4,"ready":3,"admitted":false}' \
    "$(jq -c '.gang | del(.groups)' <<<"$json")" "gang"
assert_eq '[{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","name":"train","scheduler":"Volcano","minMember":7,"phase":"Pending","message":"NotEnoughResources: 3/7 tasks in gang unschedulable: pod group is not ready, 4 Running, 7 minAvailable"}]' \
    "$(jq -c '.gang.groups' <<<"$json")" "gang groups"
assert_eq 'JobCreationFailed 2 JobSet/train' "$(jq -r '.events[] | "\(.reason) \(.count) \(.object)"' <<<"$json")" "workload events"
workers='.components[0].instances[] | select(.id == "workers")'
assert_eq 'BackOff FailedScheduling FailedCreate' "$(jq -r "[$workers | .events[].reason] | join(\" \")" <<<"$json")" "instance events, newest first"
assert_eq '5 1' "$(jq -r "$workers | .pods[] | select(.name == \"train-workers-1-1-f4j8t\") | .events | map(.count) | join(\" \")" <<<"$json" | tr -d '\n')" "pod events: merged x5, then the older message"
assert_eq '{"container":"main","init":false,"reason":"CrashLoopBackOff","restarts":7,"message":"back-off 5m0s restarting failed container=main pod=train-workers-0-1-c9m4r_default","lastTermination":{"reason":"OOMKilled","exitCode":137}}' \
    "$(jq -c "$workers | .pods[] | select(.name == \"train-workers-0-1-c9m4r\") | .containerIssues[0]" <<<"$json")" "container issue"
assert_eq 'CrashLoopBackOff 7' "$(jq -r "$workers | .pods[] | select(.name == \"train-workers-0-1-c9m4r\") | \"\(.reason) \(.restarts)\"" <<<"$json")"
assert_eq null "$(kubectl wmap describe jobset/train -o json --events 0 2>/dev/null | jq -c .events)" "events: null when not asked"

# Kueue instead of Volcano: the Workload owned by the JobSet says why it is not admitted.
kc delete podgroups.scheduling.volcano.sh train >/dev/null
kc create -f - >/dev/null <<EOF || fail "cannot create the Kueue Workload"
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: jobset-train-5f2c1
  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: train, uid: $js_uid, controller: true}]
spec:
  queueName: team-a
  podSets: [{name: driver, count: 1}, {name: workers, count: 6}]
EOF
r=$(sim_curl PATCH /apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/jobset-train-5f2c1/status \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"status":{"conditions":[
    {"type":"QuotaReserved","status":"False","reason":"Pending","lastTransitionTime":"2026-01-01T00:00:00Z",
     "message":"couldn'"'"'t assign flavors to pod set workers: insufficient quota for nvidia.com/gpu in flavor default-flavor, 2 more needed"}]}}')
[[ $(tail -n1 <<<"$r") == 200 ]] || fail "Workload status: $r"
run_ok kubectl wmap describe jobset/train --events 0
assert_contains "$OUT" "Gang: 4/7 scheduled, 3/7 ready (min 7), not admitted
  Kueue Workload jobset-train-5f2c1: Pending, min 7: Pending: couldn't assign flavors to pod set workers: insufficient quota for nvidia.com/gpu in flavor default-flavor, 2 more needed"
# Admitted: Kueue's word decides, though fewer pods than the minimum are scheduled yet.
r=$(sim_curl PATCH /apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/jobset-train-5f2c1/status \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"status":{"conditions":[
    {"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"Quota reserved in ClusterQueue team-a-cq","lastTransitionTime":"2026-01-01T00:00:00Z"},
    {"type":"Admitted","status":"True","reason":"Admitted","message":"The workload is admitted","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}')
[[ $(tail -n1 <<<"$r") == 200 ]] || fail "Workload status: $r"
run_ok kubectl wmap describe jobset/train --events 0
assert_contains "$OUT" "Gang: 4/7 scheduled, 3/7 ready (min 7), admitted
  Kueue Workload jobset-train-5f2c1: Admitted, min 7"

# scheduler-plugins' coscheduling installed since the plugin cached discovery: seen once the
# cache is cleared. Its PodGroup is named by the pods' label; KAI's is found by its owner
# reference. The minimum is the first scheduler's (coscheduling); Kueue still decides admission.
kc apply -f "$GANG/coscheduling-podgroup-crd.yaml" >/dev/null
rm -rf "$HOME/.kube/cache/wmap"
kc label pod train-driver-0-0-x7k2p train-workers-0-0-b5n8q train-workers-0-1-c9m4r \
    train-workers-1-0-d2h6s train-workers-1-1-f4j8t scheduling.x-k8s.io/pod-group=train-cos >/dev/null
kc create -f - >/dev/null <<'EOF2' || fail "cannot create the coscheduling PodGroup"
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train-cos}
spec: {minMember: 7, scheduleTimeoutSeconds: 60}
EOF2
r=$(sim_curl PATCH /apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/train-cos/status \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"status":{"phase":"Scheduling","running":3}}')
[[ $(tail -n1 <<<"$r") == 200 ]] || fail "coscheduling status: $r"
kc create -f - >/dev/null <<EOF2 || fail "cannot create the KAI PodGroup"
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata:
  name: pg-train-$js_uid
  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: train, uid: $js_uid, controller: true}]
spec:
  queue: team-a
  subGroups: [{name: driver, minMember: 1}, {name: workers, minMember: 6}]
EOF2
r=$(sim_curl PATCH "/apis/scheduling.run.ai/v2alpha2/namespaces/default/podgroups/pg-train-$js_uid/status" \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"status":{"phase":"Pending",
    "schedulingConditions":[{"type":"UnschedulableOnNodePool","nodePool":"default","status":"True",
      "reasons":[{"reason":"OverLimit","message":"queue team-a would exceed its GPU limit of 4"}]}]}}')
[[ $(tail -n1 <<<"$r") == 200 ]] || fail "KAI status: $r"
run_ok kubectl wmap describe jobset/train --events 0
assert_contains "$OUT" "Gang: 4/7 scheduled, 3/7 ready (min 7), admitted
  coscheduling PodGroup train-cos: Scheduling, min 7
  KAI PodGroup pg-train-$js_uid: Pending, min 7: OverLimit: queue team-a would exceed its GPU limit of 4
  Kueue Workload jobset-train-5f2c1: Admitted, min 7"
json=$(kubectl wmap describe jobset/train -o json --events 0 2>/dev/null)
assert_eq 'coscheduling 7' "$(jq -r '.gang | "\(.minFrom) \(.minMember)"' <<<"$json")"

# A failing init container and an image that cannot be pulled.
r=$(sim_curl PATCH /api/v1/namespaces/default/pods/train-workers-1-0-d2h6s/status \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"status":{"phase":"Pending",
    "conditions":[{"type":"PodScheduled","status":"True"},{"type":"Initialized","status":"False","reason":"ContainersNotInitialized"},{"type":"Ready","status":"False","reason":"ContainersNotReady"}],
    "initContainerStatuses":[{"name":"fetch-data","ready":false,"restartCount":3,
      "state":{"terminated":{"reason":"Error","exitCode":2,"message":"s3://bucket/shard-7: access denied"}}}],
    "containerStatuses":[{"name":"main","ready":false,"restartCount":0,"state":{"waiting":{"reason":"PodInitializing"}}}]}}')
[[ $(tail -n1 <<<"$r") == 200 ]] || fail "init status: $r"
r=$(sim_curl PATCH /api/v1/namespaces/default/pods/train-driver-0-0-x7k2p/status \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"status":{"phase":"Pending",
    "conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"False","reason":"ContainersNotReady"}],
    "containerStatuses":[{"name":"main","ready":false,"restartCount":0,"image":"python:3.12-typo",
      "state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image \"python:3.12-typo\""}}}]}}')
[[ $(tail -n1 <<<"$r") == 200 ]] || fail "image status: $r"
run_ok kubectl wmap describe jobset/train --events 0
assert_contains "$OUT" "train-driver-0-0-x7k2p    Pending (ImagePullBackOff)" "tree row"
assert_contains "$OUT" "train-workers-1-0-d2h6s   Pending (Init:Error)" "tree row"
assert_contains "$OUT" "  replicatedjob/driver: 1 of 1 pod not ready
    train-driver-0-0-x7k2p: Pending (ImagePullBackOff)
      main: ImagePullBackOff: Back-off pulling image \"python:3.12-typo\""
assert_contains "$OUT" "    train-workers-1-0-d2h6s: Pending (Init:Error)
      init container fetch-data: Error (exit 2), 3 restarts: s3://bucket/shard-7: access denied"
assert_not_contains "$OUT" "PodInitializing" "a container waiting for its init containers is not a problem of its own"

# The simulator selects events by the fields the real server offers, and refuses others.
run_ok kubectl get events --field-selector involvedObject.name=train-workers-1-1-f4j8t,type=Warning -o name
assert_eq 3 "$(wc -l <<<"$OUT")" "events of one pod by field selector"
assert_fails kubectl get events --field-selector message=x
assert_contains "$OUT" "field label not supported: message"

# Events as a careless controller writes them: a count that is not a number, no timestamps,
# no message, an involvedObject without uid. Describe still answers, and says what it can.
live_create "$(jq -cn --arg u "$unsched" '{apiVersion:"v1", kind:"Event", metadata:{name:"odd.1"},
    involvedObject:{kind:"Pod", name:"train-workers-1-1-f4j8t", namespace:"default", uid:$u},
    type:"Warning", reason:"OddOne", count:"many"}')" \
    "$(jq -cn '{apiVersion:"v1", kind:"Event", metadata:{name:"odd.2"},
    involvedObject:{kind:"Pod", name:"train-workers-1-1-f4j8t", namespace:"default"},
    type:"Warning", reason:"NoUid", message:"not matched without a uid"}')"
run_ok kubectl wmap describe jobset/train --events 10
assert_contains "$OUT" "OddOne x1  Pod/train-workers-1-1-f4j8t: "
assert_not_contains "$OUT" "NoUid"
