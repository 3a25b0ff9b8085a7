# create / get / list / label / patch (strategic, merge, json) / apply / delete of built-ins.
sim_start
cat >"$E2E_TMP/objs.yaml" <<'Y'
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: team-a, labels: {app: web}}
spec:
  containers: [{name: c, image: nginx}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: team-a}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: c, image: busybox, args: ["sleep", "1"]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: team-a}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: team-a}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: postgres}]
Y
run_ok kc create -f "$E2E_TMP/objs.yaml"
assert_contains "$OUT" "namespace/team-a created"
assert_contains "$OUT" "deployment.apps/api created"
assert_contains "$OUT" "statefulset.apps/db created"
run_ok kc -n team-a get deploy api -o json
uid=$(jq -r .metadata.uid <<<"$OUT"); gen=$(jq -r .metadata.generation <<<"$OUT")
rv1=$(jq -r .metadata.resourceVersion <<<"$OUT"); ts=$(jq -r .metadata.creationTimestamp <<<"$OUT")
[[ $uid =~ ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]] || fail "uid shape: $uid"
[[ $ts =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]] || fail "creationTimestamp shape: $ts"
assert_eq 1 "$gen" "generation on create"
# Creating again: AlreadyExists.
assert_fails kc create -f "$E2E_TMP/objs.yaml"
assert_contains "$OUT" 'Error from server (AlreadyExists): error when creating' "second create"
assert_contains "$OUT" 'deployments.apps "api" already exists'
# Spec change bumps generation and resourceVersion; a label change bumps only the latter.
run_ok kc -n team-a patch deploy api -p '{"spec":{"replicas":3}}'
assert_contains "$OUT" "deployment.apps/api patched"
run_ok kc -n team-a get deploy api -o json
assert_eq 2 "$(jq -r .metadata.generation <<<"$OUT")" "generation after spec patch"
rv2=$(jq -r .metadata.resourceVersion <<<"$OUT")
((rv2 > rv1)) || fail "resourceVersion did not increase: $rv1 -> $rv2"
run_ok kc -n team-a label deploy api tier=backend
run_ok kc -n team-a get deploy api -o json
assert_eq 2 "$(jq -r .metadata.generation <<<"$OUT")" "generation after label"
assert_eq backend "$(jq -r .metadata.labels.tier <<<"$OUT")"
# Strategic merge on a keyed list keeps the other container fields.
run_ok kc -n team-a patch deploy api -p '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:2"}]}}}}'
run_ok kc -n team-a get deploy api -o json
assert_eq "busybox:2" "$(jq -r '.spec.template.spec.containers[0].image' <<<"$OUT")"
assert_eq "sleep" "$(jq -r '.spec.template.spec.containers[0].args[0]' <<<"$OUT")" "args kept by strategic merge"
run_ok kc -n team-a patch deploy api --type=merge -p '{"metadata":{"annotations":{"a":"1"}}}'
run_ok kc -n team-a patch deploy api --type=json -p '[{"op":"add","path":"/metadata/labels/json","value":"yes"}]'
assert_eq yes "$(jp '{.metadata.labels.json}' -n team-a deploy api)"
# Client-side apply: create, then change, with the last-applied annotation.
cat >"$E2E_TMP/cm.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-a}
data: {a: "1", b: "2"}
Y
run_ok kc apply -f "$E2E_TMP/cm.yaml"
assert_contains "$OUT" "configmap/settings created"
sed -i 's/b: "2"/c: "3"/' "$E2E_TMP/cm.yaml"
run_ok kc apply -f "$E2E_TMP/cm.yaml"
assert_contains "$OUT" "configmap/settings configured"
run_ok kc -n team-a get cm settings -o json
assert_eq '{"a":"1","c":"3"}' "$(jq -c .data <<<"$OUT")" "apply removed b and added c"
assert_contains "$(jq -r '.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]' <<<"$OUT")" '"c":"3"'
# Lists across namespaces.
run_ok kc get pods -A --no-headers
assert_contains "$OUT" "team-a" && assert_contains "$OUT" "web-1"
# Delete and confirm.
run_ok kc -n team-a delete pod web-1
assert_contains "$OUT" 'pod "web-1" deleted'
assert_fails kc -n team-a get pod web-1
assert_contains "$OUT" 'Error from server (NotFound): pods "web-1" not found'
run_ok kc delete ns team-a
assert_fails kc -n team-a get deploy api
