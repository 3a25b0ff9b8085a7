# kubectl wmap fit against two clusters: two simulator instances as the kubeconfig contexts
# west and east, driven with the real kubectl. The simulator runs no scheduler and no
# kubelet, so the scenario writes what they would: Nodes with their status (allocatable,
# Ready) and Pods bound to them (spec.nodeName, status.phase).
#   west: node-a, node-b, node-c with 2 GPUs each; the live JobSet "train" (1 driver, 4
#         one-GPU workers) has 4 pods bound there (2 GPUs on node-b, 1 on node-c, the driver
#         on node-a) and a foreign pod holds node-c's other GPU.
#   east: gpu-0, gpu-1 with 4 GPUs each, nothing running.
source "$E2E_DIR/live-helpers.sh"
live_setup
WEST_URL=$SIM_URL WEST_TOKEN=$SIM_TOKEN WEST_PKI=$SIM_PKI

mkdir -p "$E2E_TMP/east/pki"
start_bg apiserver-sim-east "$E2E_TMP/east/sim.ready" "${SIM_READY_SECS:-30}" \
    "$SIM" --port 0 --kubeconfig-out "$E2E_TMP/east/kubeconfig" --ready-file "$E2E_TMP/east/sim.ready" \
    --log "$E2E_TMP/east/requests.log" --pki-dir "$E2E_TMP/east/pki"
EAST_URL=https://127.0.0.1:$(head -n1 "$E2E_TMP/east/sim.ready")
EAST_TOKEN=$(awk '/token:/ {print $2; exit}' "$E2E_TMP/east/kubeconfig")

# One kubeconfig with both clusters, as a user with two clusters has it.
two=$E2E_TMP/two.kubeconfig
for c in west east; do
    url_var=${c^^}_URL tok_var=${c^^}_TOKEN
    pki=$WEST_PKI
    [[ $c == east ]] && pki=$E2E_TMP/east/pki
    kc config --kubeconfig "$two" set-cluster "$c" --server "${!url_var}" --certificate-authority "$pki/ca.crt" >/dev/null
    kc config --kubeconfig "$two" set-credentials "$c" --token "${!tok_var}" >/dev/null
    kc config --kubeconfig "$two" set-context "$c" --cluster "$c" --user "$c" --namespace default >/dev/null
done
kc config --kubeconfig "$two" use-context west >/dev/null
export KUBECONFIG=$two

# curl_status CONTEXT PATH BODY: a merge patch of /status (the simulator keeps status out of
# creates, as kube-apiserver does for these kinds).
curl_status() {
    local url_var=${1^^}_URL tok_var=${1^^}_TOKEN pki=$WEST_PKI code
    [[ $1 == east ]] && pki=$E2E_TMP/east/pki
    code=$(curl -sS --max-time 30 --noproxy "*" --cacert "$pki/ca.crt" -H "Authorization: Bearer ${!tok_var}" \
        -X PATCH -H 'Content-Type: application/merge-patch+json' --data-binary "$3" \
        -o "$E2E_TMP/curl.out" -w '%{http_code}' "${!url_var}$2")
    [[ $code == 200 ]] || fail "PATCH $1 $2: $code $(cat "$E2E_TMP/curl.out")"
}

# make_node CONTEXT NAME GPUS
make_node() {
    jq -cn --arg n "$2" '{apiVersion:"v1", kind:"Node", metadata:{name:$n, labels:{"kubernetes.io/hostname":$n}}}' |
        kc --context "$1" create -f - >/dev/null
    curl_status "$1" "/api/v1/nodes/$2/status" "$(jq -cn --arg g "$3" '{status:{
        capacity:{cpu:"8", memory:"32Gi", pods:"110", "nvidia.com/gpu":$g},
        allocatable:{cpu:"8", memory:"32Gi", pods:"110", "nvidia.com/gpu":$g},
        conditions:[{type:"Ready", status:"True"}]}}')"
}
for n in node-a node-b node-c; do make_node west "$n" 2; done
for n in gpu-0 gpu-1; do make_node east "$n" 4; done

live_jobset_fixture # in west (the current context): the JobSet, its Jobs and 5 Pods
live_create "$(jq -cn '{apiVersion:"v1", kind:"Pod", metadata:{name:"foreign"},
    spec:{nodeName:"node-c", containers:[{name:"c", image:"busybox", resources:{limits:{"nvidia.com/gpu":"1"}}}]}}')"
live_status foreign Running True

# A new copy of the JobSet (-f): west counts every bound pod, the JobSet's own included, so
# only node-a has room (2 GPUs free for 4); east has 8 free GPUs on 2 nodes.
rc=0
kubectl wmap fit -f "$LIVE_DATA/jobset.yaml" --context west --context east >"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
assert_eq 0 "$rc" "fits in east: exit 0 ($(cat "$E2E_TMP/err"))"
out=$(cat "$E2E_TMP/out")
assert_contains "$out" "Fits: east."
assert_contains "$(grep "^east" <<<"$out")" "5 pods on 1 node"
assert_eq "west no 3/3 2/4" "$(awk '$1 == "west" {print $1, $2, $3, $4}' <<<"$out")" "west's row"
assert_contains "$(grep '^west' <<<"$out")" "nvidia.com/gpu: 2 free on the eligible nodes < 4 needed"
assert_eq "east yes 2/2 8/4" "$(awk '$1 == "east" {print $1, $2, $3, $4}' <<<"$out")" "east's row"
assert_contains "$out" "Not checked: pod affinity/anti-affinity"

# The same as JSON, both contexts by --all-contexts; best fit puts all 5 pods on gpu-0 in
# east (the 4 one-GPU workers fill its GPUs; the driver asks for none).
run_ok kubectl wmap fit -f "$LIVE_DATA/jobset.yaml" --all-contexts -o json
assert_eq '"no" "yes"' "$(jq -c '.contexts.west.verdict, .contexts.east.verdict' <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"
assert_eq 5 "$(jq '[.contexts.east.placement[] | select(.node == "gpu-0")] | length' <<<"$OUT")" "5 pods on gpu-0"
assert_eq 5 "$(jq '.workload.pods' <<<"$OUT")"

# Only west: exit 6 (no). With a context that does not exist: exit 7 (unknown, none fits).
rc=0; kubectl wmap fit -f "$LIVE_DATA/jobset.yaml" --context west >/dev/null 2>&1 || rc=$?
assert_eq 6 "$rc" "does not fit anywhere"
rc=0; kubectl wmap fit -f "$LIVE_DATA/jobset.yaml" --context west --context nowhere -o json >"$E2E_TMP/out" 2>/dev/null || rc=$?
assert_eq 7 "$rc" "one context could not be evaluated"
assert_eq unknown "$(jq -r '.contexts.nowhere.verdict' "$E2E_TMP/out")"
assert_contains "$(jq -r '.contexts.nowhere.error' "$E2E_TMP/out")" "nowhere"

# A context whose identity may list nodes but not pods at cluster scope: free capacity cannot
# be known there, so the answer is unknown (the API server's refusal as the reason), never yes.
kc --context east create --validate=false -f - >/dev/null <<'EOF'
apiVersion: v1
kind: List
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: node-reader}
  rules: [{apiGroups: [""], resources: [nodes], verbs: [get, list]}]
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata: {name: reader-nodes}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-reader}
  subjects: [{kind: ServiceAccount, name: reader, namespace: team}]
EOF
kc config --kubeconfig "$two" set-credentials east-reader --token "$EAST_TOKEN" >/dev/null
# `kubectl config` has no flag for a user's impersonation (as:): written into the file.
python3 - "$two" <<'EOF'
import sys, yaml
path = sys.argv[1]
cfg = yaml.safe_load(open(path))
for u in cfg["users"]:
    if u["name"] == "east-reader":
        u["user"]["as"] = "system:serviceaccount:team:reader"
yaml.safe_dump(cfg, open(path, "w"))
EOF
kc config --kubeconfig "$two" set-context east-reader --cluster east --user east-reader >/dev/null
rc=0; kubectl wmap fit -f "$LIVE_DATA/jobset.yaml" --context west --context east-reader >"$E2E_TMP/out" 2>&1 || rc=$?
assert_eq 7 "$rc" "no fit, one context unknown: $(cat "$E2E_TMP/out")"
assert_contains "$(grep '^east-reader' "$E2E_TMP/out")" 'unknown'
assert_contains "$(grep '^east-reader' "$E2E_TMP/out")" 'cannot list resource "pods"'

# The live JobSet, Pending (one worker unschedulable): its own pods are not counted, so west
# could hold it as it is (node-a and node-b free, node-c's foreign pod stays).
run_ok kubectl wmap fit jobset/train -o wide
assert_eq "west yes" "$(awk '$1 == "west" {print $1, $2}' <<<"$OUT")" "the live JobSet fits as a fresh copy"
assert_contains "$OUT" "Fits: west."
# Best fit: the first worker takes node-c's last GPU, two go to node-a, one to node-b; the
# driver (no GPU) to the node left with the least CPU, node-a.
assert_contains "$OUT" "placement: replicatedjob/driver[0] -> node-a, replicatedjob/workers[0] -> node-c, replicatedjob/workers[1] -> node-a, replicatedjob/workers[2] -> node-a, replicatedjob/workers[3] -> node-b"
# The gang's describe points there.
run_ok kubectl wmap describe jobset/train
assert_contains "$OUT" "would it fit at all? kubectl wmap fit jobsets.jobset.x-k8s.io/train -n default"
# Both clusters were asked for their nodes and their non-terminal pods at cluster scope.
grep -q 'GET /api/v1/pods?fieldSelector=status.phase' "$E2E_TMP/east/requests.log" || fail "east: no pod list"
