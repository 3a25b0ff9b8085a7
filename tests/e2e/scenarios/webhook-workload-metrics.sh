# The leader's workload metrics (webhook/workloads.c) scraped by a real Prometheus (Debian's
# package, on loopback), with the webhook running as its service account under
# deploy/base/02-rbac.yaml against the API server simulator:
# - a JobSet (the sample fixture: 12 GPUs before any pod exists), a RayCluster and a
#   PyTorchJob, with the Jobs and pods the test creates as their controllers would, a pod of
#   a kind no definition covers and a bare pod;
# - /metrics/workloads passes `promtool check metrics`; the requests, replicas, phases and
#   every pod's component come out right; the uncovered and the bare pod are counted, not
#   attributed; a replica that does not lead serves no series;
# - Prometheus scrapes it (honor_labels) with a static file standing in for dcgm-exporter and
#   kube-state-metrics: every query of deploy/overlays/monitoring's dashboard returns data,
#   GPUs per workload and component, phase, pods ready and the GPU utilisation joined from
#   the dcgm series are the expected values; the recording rules load and evaluate;
# - a phase change, a scale-up and a delete show on /metrics/workloads within 5 s;
# - a LeaderWorkerSet's pods, three hops up through its leader pod, in leader and worker,
#   and none of its StatefulSets a workload;
# - past --workload-metrics-max-series, whole workloads are left out and counted;
#   --no-workload-metrics serves no /metrics/workloads.
source "$E2E_DIR/cluster-helpers.sh"
source "$E2E_DIR/prom-helpers.sh"
prom_require webhook-workload-metrics
D=$REPO_ROOT/deploy/base
MON=$REPO_ROOT/deploy/overlays/monitoring
DATA=$E2E_DIR/data/workloads
NS=ml-team

cluster_setup
run_ok kc apply -f "$D/00-namespace.yaml" -f "$D/02-rbac.yaml" -f "$E2E_DIR/data/jobset-crd.yaml" \
    -f "$E2E_DIR/data/live/raycluster-crd.yaml" -f "$E2E_DIR/data/rollout/pytorchjob-crd.yaml" \
    -f "$E2E_DIR/data/live/leaderworkerset-crd.yaml"
for r in jobsets rayclusters pytorchjobs leaderworkersets; do wait_until 10 kc get "$r" -A || fail "$r not served"; done
run_ok kc create namespace $NS

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

# Bad values of the cap are refused before anything starts.
out=$("$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --workload-metrics-max-series 0 2>&1) &&
    fail "accepted --workload-metrics-max-series 0"
assert_contains "$out" "bad value for --workload-metrics-max-series: 0"

start_bg wmap-webhook "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/readyz | grep -qx ok" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port "$WH_PORT" \
    --kubeconfig "$E2E_TMP/sa.kubeconfig" --sync-timeout 30
wait_until 10 metric_is wmap_webhook_leader 1 || fail "no Lease"
wait_until 10 metric_is wmap_exporter_synced 1 || fail "the exporter did not sync: $(wh_get /metrics | grep exporter)"

# ---- the workloads and their pods, as their controllers would make them ----
uid_of() { kc get "$1" "$2" -n $NS -o jsonpath='{.metadata.uid}'; }
ref() { jq -cn --arg a "$1" --arg k "$2" --arg n "$3" --arg u "$4" '{apiVersion:$a, kind:$k, name:$n, uid:$u, controller:true}'; }
pod() { # NAME OWNER-REF|"" LABELS GPU [ANNOTATIONS]
    jq -cn --arg n "$1" --arg r "$2" --argjson l "$3" --arg gpu "$4" --argjson a "${5:-{\}}" '
        {apiVersion:"v1", kind:"Pod", metadata:({name:$n, labels:$l, annotations:$a}
            + (if $r == "" then {} else {ownerReferences:[$r | fromjson]} end)),
         spec:{containers:[{name:"main", image:"busybox",
            resources:(if $gpu == "0" then {} else {limits:{"nvidia.com/gpu":$gpu}} end)}]}}'
}
create() { jq -cs '{apiVersion:"v1", kind:"List", items:.}' <<<"$(printf '%s\n' "$@")" | kc create -n $NS --validate=false -f - >/dev/null; }

# The sample JobSet of tests/fixtures (12 GPUs: a leader of 4, two workers of 4), as created.
kc create --dry-run=client -o json -f "$REPO_ROOT/tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/created.yaml" |
    jq 'del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.generation, .status)' |
    kc create -f - >/dev/null || fail "cannot create the JobSet"
kc create -n $NS -f "$E2E_DIR/data/live/raycluster.yaml" >/dev/null || fail "cannot create the RayCluster"
kc create -f "$DATA/pytorchjob.yaml" >/dev/null || fail "cannot create the PyTorchJob"

# Before any pod: the JobSet's 12 GPUs are already requested.
wl() { wh_get /metrics/workloads | sed '$d'; }
wl_value() { wl | awk -v k="$1" '$1 == k {print $2; found=1} END {if (!found) print ""}'; }
ID_JS="namespace=\"$NS\",workload=\"llama-train-new\",workload_kind=\"JobSet\",workload_group=\"jobset.x-k8s.io\""
gpus_js() { wl | awk -v id="$ID_JS" 'index($0, "wmap_workload_component_resource_requests{" id ",") == 1 && /resource="nvidia_com_gpu"/ {s += $2} END {print s + 0}'; }
gpus_js_are() { [[ $(gpus_js) == "$1" ]]; }
wait_until 5 gpus_js_are 12 || fail "the JobSet's 12 GPUs: $(gpus_js); $(wl | grep llama-train-new)"

js=$(uid_of jobset llama-train-new)
jobs=()
for j in leader-0 workers-0; do
    jobs+=("$(jq -cn --arg n "llama-train-new-$j" --argjson r "$(ref jobset.x-k8s.io/v1alpha2 JobSet llama-train-new "$js")" \
        '{apiVersion:"batch/v1", kind:"Job", metadata:{name:$n, ownerReferences:[$r]},
          spec:{template:{spec:{restartPolicy:"Never", containers:[{name:"main", image:"busybox"}]}}}}')")
done
create "${jobs[@]}"
jslabels() { jq -cn --arg r "$1" '{"jobset.sigs.k8s.io/jobset-name":"llama-train-new", "jobset.sigs.k8s.io/replicatedjob-name":$r}'; }
leader_ref=$(ref batch/v1 Job llama-train-new-leader-0 "$(uid_of job llama-train-new-leader-0)")
workers_ref=$(ref batch/v1 Job llama-train-new-workers-0 "$(uid_of job llama-train-new-workers-0)")
ray_ref=$(ref ray.io/v1 RayCluster demo "$(uid_of raycluster demo)")
pt_ref=$(ref kubeflow.org/v1 PyTorchJob ft "$(uid_of pytorchjob ft)")
run_ok kc apply -f "$CLUSTER_DATA/widget.yaml" -n $NS
widget_ref=$(ref example.com/v1 Widget w1 "$(uid_of widget w1)")
create "$(pod llama-train-new-leader-0-0 "$leader_ref" "$(jslabels leader)" 4)" \
    "$(pod llama-train-new-workers-0-0 "$workers_ref" "$(jslabels workers)" 4)" \
    "$(pod llama-train-new-workers-0-1 "$workers_ref" "$(jslabels workers)" 4)" \
    "$(pod demo-head "$ray_ref" '{"ray.io/cluster":"demo","ray.io/node-type":"head"}' 0)" \
    "$(pod demo-gpu-a-worker-1 "$ray_ref" '{"ray.io/cluster":"demo","ray.io/node-type":"worker","ray.io/group":"gpu-a"}' 2)" \
    "$(pod demo-gpu-a-worker-2 "$ray_ref" '{"ray.io/cluster":"demo","ray.io/node-type":"worker","ray.io/group":"gpu-a"}' 2)" \
    "$(pod ft-master-0 "$pt_ref" '{"training.kubeflow.org/replica-type":"master"}' 2)" \
    "$(pod ft-worker-0 "$pt_ref" '{"training.kubeflow.org/replica-type":"worker"}' 2)" \
    "$(pod ft-worker-1 "$pt_ref" '{"training.kubeflow.org/replica-type":"worker"}' 2)" \
    "$(pod widget-0 "$widget_ref" '{"app":"demo"}' 0)" \
    "$(pod bare-0 "" '{}' 0)"

pods_attributed() { wl | grep -c '^wmap_pod_workload_info{' || true; }
pods_attributed_are() { [[ $(pods_attributed) == "$1" ]]; }
wait_until 5 pods_attributed_are 9 || fail "9 pods attributed: $(pods_attributed); $(wl | grep pod_workload)"
wl >"$E2E_TMP/workloads.prom"
promtool check metrics <"$E2E_TMP/workloads.prom" >"$E2E_TMP/promtool.out" 2>&1 ||
    fail "promtool check metrics: $(cat "$E2E_TMP/promtool.out")"
echo "promtool check metrics: ok ($(grep -c '^wmap_' "$E2E_TMP/workloads.prom") series)"
pinfo() { grep "^wmap_pod_workload_info{namespace=\"$NS\",workload=\"$2\",workload_kind=\"$1\",[^}]*pod=\"$3\",.*component=\"$4\",component_instance=\"$5\"} 1$" "$E2E_TMP/workloads.prom" >/dev/null || fail "pod $3: not in $1/$2 $4/$5: $(grep "pod=\"$3\"" "$E2E_TMP/workloads.prom")"; }
pinfo JobSet llama-train-new llama-train-new-leader-0-0 replicatedjob leader
pinfo JobSet llama-train-new llama-train-new-workers-0-1 replicatedjob workers
pinfo RayCluster demo demo-head head ""
pinfo RayCluster demo demo-gpu-a-worker-2 worker gpu-a
pinfo PyTorchJob ft ft-master-0 master ""
pinfo PyTorchJob ft ft-worker-1 worker ""
assert_eq "" "$(grep -E 'pod="(widget-0|bare-0)"|workload_kind="Job"' "$E2E_TMP/workloads.prom")" "no series for the uncovered pods nor for the JobSet's Jobs"
assert_eq 1 "$(wh_metric 'wmap_exporter_unattributed_pods{reason="uncovered_owner"}')" "the Widget's pod is counted"
assert_eq 1 "$(wh_metric 'wmap_exporter_unattributed_pods{reason="no_owner"}')" "the bare pod is counted"
assert_eq 3 "$(wh_metric wmap_exporter_workloads)" "workloads with series"
assert_eq 1 "$(wl_value "wmap_workload_status{$ID_JS,phase=\"Initializing\"}")" "the new JobSet is Initializing"
assert_eq 0 "$(wl_value "wmap_workload_status{$ID_JS,phase=\"Running\"}")" "every phase is present"
assert_eq 2 "$(wl_value "wmap_workload_component_replicas{$ID_JS,component=\"replicatedjob\",component_instance=\"workers\"}")"
grep -q "^wmap_workload_info{$ID_JS,workload_version=\"v1alpha2\",definition=\"jobset-x-k8s-io-jobset-v1alpha2\",queue=\"ml-team-queue\"} 1$" \
    "$E2E_TMP/workloads.prom" || fail "the JobSet's info: $(grep '^wmap_workload_info' "$E2E_TMP/workloads.prom")"
if grep -E ' 403 ' "$E2E_TMP/requests.log" 2>/dev/null | grep -E 'pods|jobsets|rayclusters|pytorchjobs'; then
    fail "a list or watch of the exporter was refused"
fi

# A second replica that does not hold the Lease serves no workload series.
WH2=$(free_port)
start_bg wmap-webhook-2 "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH2/readyz | grep -qx ok" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port "$WH2" \
    --kubeconfig "$E2E_TMP/sa.kubeconfig" --sync-timeout 30
assert_eq "" "$(curl -sk --noproxy '*' "https://127.0.0.1:$WH2/metrics/workloads")" "a follower's /metrics/workloads"
kill "$wmap_webhook_2_PID"

# ---- Prometheus ----
mkdir -p "$E2E_TMP/standins"
prom_serve_file standins "$DATA/dcgm.prom"
cp "$DATA/ksm.prom" "$E2E_TMP/standins/ksm"
python3 -c 'import sys, yaml; yaml.safe_dump(yaml.safe_load(open(sys.argv[1]))["spec"], open(sys.argv[2], "w"))' \
    "$MON/prometheusrule.yaml" "$E2E_TMP/wmap-rules.yml"
promtool check rules "$E2E_TMP/wmap-rules.yml" >"$E2E_TMP/rules.out" 2>&1 || fail "promtool check rules: $(cat "$E2E_TMP/rules.out")"
sed -i 's/interval: 30s/interval: 1s/' "$E2E_TMP/wmap-rules.yml"
cat >"$E2E_TMP/prometheus.yml" <<Y
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$E2E_TMP/wmap-rules.yml"]
scrape_configs:
  - job_name: wmap-workloads
    metrics_path: /metrics/workloads
    scheme: https
    honor_labels: true
    tls_config: {ca_file: "$CERT_DIR/ca.crt", server_name: wmap-webhook.wmap-system.svc}
    static_configs: [{targets: ["127.0.0.1:$WH_PORT"]}]
  - job_name: dcgm-exporter
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:$PROM_FILE_PORT"]}]
  - job_name: kube-state-metrics
    metrics_path: /ksm
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:$PROM_FILE_PORT"]}]
Y
prom_start "$E2E_TMP/prometheus.yml"
wait_until 30 prom_targets_up 3 || fail "targets: $(curl -s --noproxy '*' "$PROM_URL/api/v1/targets" | jq -c '[.data.activeTargets[] | {job: .labels.job, health, lastError}]')"
has_data() { [[ $(prom_query "$1" | jq length) -gt 0 ]]; }
wait_until 20 has_data 'wmap:gpu_utilization:workload' || fail "the recording rules give nothing"

# Every query of the dashboard returns data (Grafana's label_values() as the query it stands for).
python3 - "$MON/wmap-workloads.json" >"$E2E_TMP/queries" <<'P'
import json, re, sys
d = json.load(open(sys.argv[1]))
for v in d["templating"]["list"]:
    m = re.fullmatch(r"label_values\((.+), *(\w+)\)", v.get("query", "") if isinstance(v.get("query"), str) else "")
    if v["type"] == "query" and m:
        print("group by (%s) (%s)" % (m.group(2), m.group(1)))
for p in d["panels"]:
    for t in p.get("targets", []):
        print(t["expr"].replace("$namespace", ".*"))
P
n=0
while IFS= read -r q; do
    wait_until 10 has_data "$q" || fail "dashboard query without data: $q -> $(prom_query "$q")"
    n=$((n + 1))
done <"$E2E_TMP/queries"
echo "$n dashboard queries answered"
((n >= 8)) || fail "only $n queries found in the dashboard"

pq() { prom_query "$1" | jq -r --arg w "$2" '[.[] | select(.metric.workload == $w)][0].value[1] // empty'; }
Q_GPU='sum by (namespace, workload_kind, workload) (wmap_workload_component_resource_requests{resource="nvidia_com_gpu"})'
assert_eq 12 "$(pq "$Q_GPU" llama-train-new)" "GPUs requested by the JobSet"
assert_eq 4 "$(pq "$Q_GPU" demo)" "GPUs requested by the RayCluster"
assert_eq 6 "$(pq "$Q_GPU" ft)" "GPUs requested by the PyTorchJob"
assert_eq 8 "$(prom_value 'sum(wmap_workload_component_resource_requests{resource="nvidia_com_gpu", workload="llama-train-new", component_instance="workers"})')" "the JobSet's workers"
assert_eq 22 "$(prom_value 'wmap:gpu_requests:namespace{namespace="ml-team"}')" "the namespace's GPUs (recording rule)"
# No controller wrote a status yet: all three are Initializing, their GPUs pending.
assert_eq 22 "$(prom_value 'wmap:gpu_requests_pending:namespace{namespace="ml-team"}')" "GPUs of the Initializing workloads"
assert_eq Initializing "$(prom_query 'max by (workload, phase) (wmap_workload_status{workload="llama-train-new"} == 1)' | jq -r '.[0].metric.phase')"
Q_UTIL='avg by (namespace, workload_kind, workload) (DCGM_FI_DEV_GPU_UTIL * on (namespace, pod) group_left (workload_kind, workload) max by (namespace, pod, workload_kind, workload) (wmap_pod_workload_info))'
assert_eq 60 "$(pq "$Q_UTIL" llama-train-new)" "GPU utilisation of the JobSet (90, 60, 30)"
assert_eq 30 "$(pq "$Q_UTIL" demo)" "GPU utilisation of the RayCluster (40, 20)"
assert_eq 50 "$(pq "$Q_UTIL" ft)" "GPU utilisation of the PyTorchJob (100, 50, 0)"
assert_eq 45 "$(prom_value 'wmap:gpu_utilization:component_instance{workload="llama-train-new", component_instance="workers"}')" "the JobSet's workers (60, 30)"
assert_eq 2 "$(pq 'sum by (namespace, workload_kind, workload) (max by (namespace, pod) (kube_pod_status_ready{condition="true"}) * on (namespace, pod) group_left (workload_kind, workload) max by (namespace, pod, workload_kind, workload) (wmap_pod_workload_info))' ft)" "pods ready of the PyTorchJob"
# 8 of the 9 dcgm series belong to a workload (other-0 does not).
assert_eq 0.889 "$(prom_value 'wmap:join_coverage:ratio' | xargs printf '%.3f')" "join coverage"

# ---- the series follow the objects within 5 s ----
follow_ms() { # DESCRIPTION CONDITION...
    local t0 what=$1
    shift
    t0=$(now_ms)
    wait_until 5 "$@" || fail "$what: not on /metrics/workloads within 5 s"
    echo "$what: $(($(now_ms) - t0)) ms"
}
running_js() { [[ $(wl_value "wmap_workload_status{$ID_JS,phase=\"Running\"}") == 1 ]]; }
sim_curl PATCH "/apis/jobset.x-k8s.io/v1alpha2/namespaces/$NS/jobsets/llama-train-new/status" \
    -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"status":{"replicatedJobsStatus":[{"name":"leader","ready":1,"active":1},{"name":"workers","ready":1,"active":1}]}}' >/dev/null
follow_ms "phase Initializing -> Running" running_js
assert_eq 0 "$(wl_value "wmap_workload_status{$ID_JS,phase=\"Initializing\"}")"
ray_replicas() { [[ $(wl_value "wmap_workload_component_replicas{namespace=\"$NS\",workload=\"demo\",workload_kind=\"RayCluster\",workload_group=\"ray.io\",component=\"worker\",component_instance=\"gpu-a\"}") == "$1" ]]; }
ray_replicas 2 || fail "the RayCluster's gpu-a replicas: $(wl | grep 'replicas.*demo')"
run_ok kc patch raycluster demo -n $NS --type=json -p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":3}]'
follow_ms "RayCluster gpu-a scaled 2 -> 3" ray_replicas 3
pt_gone() { local t; t=$(wl) && [[ -n $t && $t != *'workload="ft"'* ]]; }
run_ok kc delete pytorchjob ft -n $NS
follow_ms "PyTorchJob deleted" pt_gone
# (The gauges on /metrics are set with the text, never after it.)
assert_eq 2 "$(wh_metric wmap_exporter_workloads)" "workloads with series after the delete"
# Its pods go with it (the simulator collects garbage by owner references, as the API
# server's garbage collector does): the Widget's pod is the one of an uncovered owner left.
ft_pods_gone() {
    [[ -z $(kc get pods -n $NS -o name | grep '/ft-') &&
        $(wh_metric 'wmap_exporter_unattributed_pods{reason="uncovered_owner"}') == 1 ]]
}
wait_until 5 ft_pods_gone ||
    fail "ft's pods not collected: $(wh_metric 'wmap_exporter_unattributed_pods{reason="uncovered_owner"}') pods of an uncovered owner"

# A LeaderWorkerSet: worker pods belong to StatefulSets owned by their leader pod, which a
# StatefulSet of the LWS owns (three hops, through a pod); no StatefulSet is a workload.
kc create -n $NS -f "$E2E_DIR/data/live/leaderworkerset.yaml" >/dev/null || fail "cannot create the LeaderWorkerSet"
sts() { jq -cn --arg n "$1" --argjson r "$2" '{apiVersion:"apps/v1", kind:"StatefulSet", metadata:{name:$n, ownerReferences:[$r]},
    spec:{serviceName:$n, selector:{matchLabels:{app:$n}}, template:{metadata:{labels:{app:$n}}, spec:{containers:[{name:"c", image:"busybox"}]}}}}'; }
lws() { jq -cn --arg g "$1" --arg w "$2" '{"leaderworkerset.sigs.k8s.io/name":"serve", "leaderworkerset.sigs.k8s.io/group-index":$g, "leaderworkerset.sigs.k8s.io/worker-index":$w}'; }
create "$(sts serve "$(ref leaderworkerset.x-k8s.io/v1 LeaderWorkerSet serve "$(uid_of lws serve)")")"
sts_ref=$(ref apps/v1 StatefulSet serve "$(uid_of statefulset serve)")
create "$(pod serve-0 "$sts_ref" "$(lws 0 0)" 1)" "$(pod serve-1 "$sts_ref" "$(lws 1 0)" 1)"
create "$(sts serve-0 "$(ref v1 Pod serve-0 "$(uid_of pod serve-0)")")" "$(sts serve-1 "$(ref v1 Pod serve-1 "$(uid_of pod serve-1)")")"
# (The worker selector reads the leader-name annotation: the exporter keeps annotations.)
create "$(pod serve-0-1 "$(ref apps/v1 StatefulSet serve-0 "$(uid_of statefulset serve-0)")" "$(lws 0 1)" 1 \
    '{"leaderworkerset.sigs.k8s.io/leader-name":"serve-0"}')" \
    "$(pod serve-1-2 "$(ref apps/v1 StatefulSet serve-1 "$(uid_of statefulset serve-1)")" "$(lws 1 2)" 1 \
        '{"leaderworkerset.sigs.k8s.io/leader-name":"serve-1"}')"
lws_pods() { [[ $(wl | grep -c '^wmap_pod_workload_info{[^}]*workload="serve",workload_kind="LeaderWorkerSet"') == 4 ]]; }
wait_until 5 lws_pods || fail "the LeaderWorkerSet's 4 pods: $(wl | grep 'serve')"
wl >"$E2E_TMP/lws.prom"
pinfo2() { grep -q "^wmap_pod_workload_info{namespace=\"$NS\",workload=\"serve\",workload_kind=\"LeaderWorkerSet\",[^}]*pod=\"$1\",[^}]*component=\"$2\"" "$E2E_TMP/lws.prom" || fail "pod $1 not in $2: $(grep "pod=\"$1\"" "$E2E_TMP/lws.prom")"; }
pinfo2 serve-0 leader
pinfo2 serve-1 leader
pinfo2 serve-0-1 worker
pinfo2 serve-1-2 worker
assert_eq "" "$(grep 'workload_kind="StatefulSet"' "$E2E_TMP/lws.prom")" "no StatefulSet of the LWS is a workload"
assert_eq 3 "$(wh_metric wmap_exporter_workloads)" "JobSet, RayCluster, LeaderWorkerSet"

# Past --workload-metrics-max-series whole workloads (and pods) are left out and counted,
# never folded together. (SIGTERM gives the Lease up: the next replica leads at once.)
kill "$wmap_webhook_PID"
WH_PORT=$(free_port)
start_bg wmap-webhook-capped "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/readyz | grep -qx ok" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port "$WH_PORT" \
    --kubeconfig "$E2E_TMP/sa.kubeconfig" --sync-timeout 30 --workload-metrics-max-series 30
wait_until 20 metric_is wmap_exporter_synced 1 || fail "the capped exporter did not sync"
wait_until 5 metric_gt wmap_exporter_series_dropped 0 || fail "nothing dropped at a cap of 30: $(wh_get /metrics | grep exporter_series)"
wl >"$E2E_TMP/capped.prom"
n=$(grep -c '^wmap_' "$E2E_TMP/capped.prom")
assert_eq "$(wh_metric wmap_exporter_series)" "$n" "series served and counted"
((n <= 30)) || fail "$n series past a cap of 30"
assert_eq 1 "$(wh_metric wmap_exporter_workloads)" "one of the three workloads fits (18, 20 and 18 series)"
assert_eq 1 "$(grep -c '^wmap_workload_info{' "$E2E_TMP/capped.prom")" "the other is left out whole"
assert_eq "" "$(grep -E '"other"' "$E2E_TMP/capped.prom")" "nothing folded"
promtool check metrics <"$E2E_TMP/capped.prom" >/dev/null 2>&1 || fail "promtool check metrics on the capped text"
kill "$wmap_webhook_capped_PID"

# --no-workload-metrics: no path, no watch of pods.
WH3=$(free_port)
start_bg wmap-webhook-3 "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH3/readyz | grep -qx ok" 30 \
    "$WEBHOOK" --tls-cert "$CERT_DIR/tls.crt" --tls-key "$CERT_DIR/tls.key" --port "$WH3" \
    --kubeconfig "$E2E_TMP/sa.kubeconfig" --sync-timeout 30 --no-workload-metrics
code=$(curl -sk --noproxy '*' -o /dev/null -w '%{http_code}' "https://127.0.0.1:$WH3/metrics/workloads")
assert_eq 404 "$code" "/metrics/workloads with --no-workload-metrics"
