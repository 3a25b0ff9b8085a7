# shellcheck shell=bash
# Helpers of the live-*.sh scenarios (kubectl wmap against the simulator). Sourced after
# lib.sh. Controllers do not run in the simulator, so the scenarios create what they would:
# the Jobs, StatefulSets and Pods with their controller owner references and pod statuses.
#
#   live_setup                   simulator + plugin on PATH + the CRDs of tests/e2e/data/live
#   live_uid TYPE NAME           the object's uid
#   live_ref APIVERSION KIND NAME UID   a controller ownerReference (JSON)
#   live_pod NAME REF LABELS ANNOTATIONS NODE GPU   a Pod (JSON) owned through REF
#   live_create JSON...          kubectl create of a List of the given objects
#   live_status NAME PHASE READY [REASON]   sets a Pod's status (READY True|False; REASON
#                                 makes it unschedulable: PodScheduled=False with that reason)
#   live_norm                    filter: replaces the age in describe's header by <age>
#   live_jobset_fixture          JobSet "train" with its 3 Jobs and 5 Pods (one unschedulable)
#                                and an impostor Pod carrying its labels without an owner

LIVE_DATA=$E2E_DIR/data/live

live_setup() {
    sim_start "$@"
    plugin_on_path || fail "plugin not built: $PLUGIN"
    ln -sf "$REPO_ROOT/kubectl-wmap/kubectl_complete-wmap" "$E2E_TMP/bin/kubectl_complete-wmap"
    # wmap's discovery cache lives under $HOME (isolated per scenario by e2e_init).
    local f
    for f in "$LIVE_DATA"/*-crd.yaml "$E2E_DIR/data/jobset-crd.yaml"; do
        kc apply -f "$f" >/dev/null || fail "cannot create $f"
    done
}

live_uid() {
    kc get "$1" "$2" -o jsonpath='{.metadata.uid}'
}

live_ref() {
    jq -cn --arg a "$1" --arg k "$2" --arg n "$3" --arg u "$4" \
        '{apiVersion:$a, kind:$k, name:$n, uid:$u, controller:true, blockOwnerDeletion:true}'
}

live_pod() {
    local name=$1 ref=$2 labels=$3 annotations=$4 node=$5 gpu=$6
    jq -cn --arg n "$name" --argjson r "$ref" --argjson l "$labels" --argjson a "$annotations" \
        --arg node "$node" --arg gpu "$gpu" '
        {apiVersion:"v1", kind:"Pod",
         metadata:{name:$n, labels:$l, annotations:$a, ownerReferences:[$r]},
         spec:({containers:[{name:"main", image:"busybox",
                 resources:({requests:{cpu:"500m", memory:"1Gi"}} +
                            (if $gpu == "0" then {} else {limits:{"nvidia.com/gpu":$gpu}} end))}]}
               + (if $node == "" then {} else {nodeName:$node} end))}'
}

live_create() {
    jq -cs '{apiVersion:"v1", kind:"List", items:.}' <<<"$(printf '%s\n' "$@")" | kc create --validate=false -f - >/dev/null
}

live_status() {
    local name=$1 phase=$2 ready=$3 reason=${4:-} body
    if [[ -n $reason ]]; then
        body=$(jq -cn --arg p "$phase" --arg r "$reason" '{status:{phase:$p, conditions:[
            {type:"PodScheduled", status:"False", reason:$r, message:"0/3 nodes are available"},
            {type:"Ready", status:"False"}]}}')
    else
        body=$(jq -cn --arg p "$phase" --arg rd "$ready" '{status:{phase:$p, conditions:[
            {type:"PodScheduled", status:"True"},
            ({type:"Ready", status:$rd} + (if $rd == "True" then {} else {reason:"ContainersNotReady"} end))]}}')
    fi
    local r
    r=$(sim_curl PATCH "/api/v1/namespaces/${LIVE_NS:-default}/pods/$name/status" \
        -H 'Content-Type: application/merge-patch+json' --data-binary "$body")
    [[ $(tail -n1 <<<"$r") == 200 ]] || fail "status of pod $name: $r"
}

live_norm() {
    sed -E 's/   age: [0-9a-z]+$/   age: <age>/'
}

live_jobset_fixture() {
    kc create -f "$LIVE_DATA/jobset.yaml" >/dev/null
    js_uid=$(live_uid jobset train)
    jobs=()
    for j in driver-0 workers-0 workers-1; do
        jobs+=("$(jq -cn --arg n "train-$j" --argjson r "$(live_ref jobset.x-k8s.io/v1alpha2 JobSet train "$js_uid")" \
            '{apiVersion:"batch/v1", kind:"Job", metadata:{name:$n, ownerReferences:[$r]},
              spec:{template:{spec:{restartPolicy:"Never", containers:[{name:"main", image:"busybox"}]}}}}')")
    done
    live_create "${jobs[@]}"
    pods=()
    pod_of() { # POD JOB RJOB INDEX NODE GPU
        local ref labels
        ref=$(live_ref batch/v1 Job "$2" "$(live_uid job "$2")")
        labels=$(jq -cn --arg r "$3" --arg i "$4" '{"jobset.sigs.k8s.io/jobset-name":"train",
            "jobset.sigs.k8s.io/replicatedjob-name":$r, "jobset.sigs.k8s.io/job-index":$i}')
        pods+=("$(live_pod "$1" "$ref" "$labels" '{}' "$5" "$6")")
    }
    pod_of train-driver-0-0-x7k2p train-driver-0 driver 0 node-a 0
    pod_of train-workers-0-0-b5n8q train-workers-0 workers 0 node-b 1
    pod_of train-workers-0-1-c9m4r train-workers-0 workers 0 node-b 1
    pod_of train-workers-1-0-d2h6s train-workers-1 workers 1 node-c 1
    pod_of train-workers-1-1-f4j8t train-workers-1 workers 1 "" 1
    # A pod with the JobSet's labels that no controller of this JobSet owns: not shown.
    pods+=("$(jq -cn '{apiVersion:"v1", kind:"Pod", metadata:{name:"impostor",
        labels:{"jobset.sigs.k8s.io/jobset-name":"train","jobset.sigs.k8s.io/replicatedjob-name":"workers"}},
        spec:{containers:[{name:"c", image:"busybox"}]}}')")
    live_create "${pods[@]}"
    live_status train-driver-0-0-x7k2p Running True
    live_status train-workers-0-0-b5n8q Running True
    live_status train-workers-0-1-c9m4r Running True
    live_status train-workers-1-0-d2h6s Running True
    live_status train-workers-1-1-f4j8t Pending False Unschedulable
    sim_curl PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/train/status \
        -H 'Content-Type: application/merge-patch+json' \
        --data-binary '{"status":{"replicatedJobsStatus":[{"name":"driver","ready":1},{"name":"workers","ready":1}]}}' >/dev/null
}
