# shellcheck shell=bash
# Helpers of the webhook-gang-*.sh scenarios (sourced after cluster-helpers.sh): the gang
# schedulers' real CRDs ($WMAP_SHARED, else ../shared: interop/crds/schedulers/), the Trainer CRD and its Karta
# (tests/e2e/data/gang/), and waiting for a group object.
#
#   gang_setup POLICY_FILE [WEBHOOK ARGS...]  the cluster, the CRDs, namespace team-a and the
#                                webhook with --policy POLICY_FILE (waits until synced)
#   group_json RESOURCE NAME     the group object in team-a as JSON ("" when missing)
#   pod_from_template TRAINER PATH NAME  creates a Pod from the stored template at PATH
GANG_DATA=$E2E_DIR/data/gang
SCHED_CRDS=${SCHED_CRDS:-${WMAP_SHARED:-$REPO_ROOT/../shared}/interop/crds/schedulers}

gang_setup() {
    local policy=$1
    shift
    if [[ ! -d $SCHED_CRDS ]]; then
        echo "gang: skipped: the schedulers' CRDs ($SCHED_CRDS) are not here"
        exit 0
    fi
    cluster_setup
    local f
    for f in "$SCHED_CRDS"/*.yaml; do
        run_ok kc apply -f "$f"
    done
    run_ok kc apply -f "$GANG_DATA/trainer-crd.yaml"
    run_ok kc apply -f "$GANG_DATA/trainer-karta.yaml"
    run_ok kc create namespace team-a
    wait_until 10 kc get trainers -n team-a
    cluster_webhook_start --policy "$policy" --sync-timeout 30 "$@"
    wait_until 10 metric_is wmap_webhook_cluster_synced 1 || fail "not synced"
    wait_until 10 metric_is 'wmap_webhook_cluster_objects{resource="kartas"}' 1 || fail "the Karta was not taken up"
    wait_until 10 mwc_has example.com trainers || fail "trainers not in the webhook's rules"
}

group_json() {
    kc get "$1" "$2" -n team-a -o json 2>/dev/null || true
}

group_is() { # RESOURCE NAME JQ: the jq expression is true of the group
    local j
    j=$(group_json "$1" "$2")
    [[ -n $j ]] && jq -e "$3" <<<"$j" >/dev/null
}

group_gone() {
    [[ -z $(group_json "$1" "$2") ]]
}

pod_from_template() {
    local tr=$1 path=$2 name=$3
    kc get trainer "$tr" -n team-a -o json |
        jq --arg n "$name" "$path | {apiVersion: \"v1\", kind: \"Pod\", metadata: (.metadata + {name: \$n, namespace: \"team-a\"}), spec: .spec}" \
            >"$E2E_TMP/pod-$name.json"
    run_ok kc create -f "$E2E_TMP/pod-$name.json"
}
