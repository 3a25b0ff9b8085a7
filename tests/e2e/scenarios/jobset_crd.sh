# A real framework CRD (JobSet v1alpha2, trimmed): served at once, then create/get/list/label/
# patch/delete of JobSets through kubectl, status subresource, and pruning that keeps the
# template labels JobSet's schema declares.
sim_start
run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
assert_contains "$OUT" "customresourcedefinition.apiextensions.k8s.io/jobsets.jobset.x-k8s.io created"
run_ok kc get crd jobsets.jobset.x-k8s.io -o jsonpath='{.status.conditions[?(@.type=="Established")].status}'
assert_eq True "$OUT" "CRD established"
run_ok kc api-resources --api-group=jobset.x-k8s.io --no-headers
assert_contains "$OUT" "jobsets" && assert_contains "$OUT" "jobset.x-k8s.io/v1alpha2"
# The published OpenAPI v3 schema shows the pod template metadata a client can check.
doc=$(sim_curl GET /openapi/v3/apis/jobset.x-k8s.io/v1alpha2 | head -n1)
assert_eq '{"type":"string"}' "$(jq -c '.components.schemas["io.x-k8s.jobset.v1alpha2.JobSet"].properties.spec.properties.replicatedJobs.items.properties.template.properties.spec.properties.template.properties.metadata.properties.labels.additionalProperties' <<<"$doc")" \
    "template labels in the published schema"
run_ok kc create -f "$E2E_DIR/data/jobset-sample.yaml"
assert_contains "$OUT" "jobset.jobset.x-k8s.io/train created"
run_ok kc get jobsets
assert_contains "$OUT" "train" "table lists the JobSet"
assert_contains "$(head -n1 <<<"$OUT")" "SUSPENDED" "CRD printer columns in the table"
run_ok kc get jobset train -o json
assert_eq driver "$(jq -r '.spec.replicatedJobs[0].template.spec.template.metadata.labels.role' <<<"$OUT")" \
    "template labels declared by the schema survive pruning"
assert_eq 1 "$(jq -r .metadata.generation <<<"$OUT")"
assert_eq "jobset.x-k8s.io/v1alpha2" "$(jq -r .apiVersion <<<"$OUT")"
# Structural defaults from the schema: filled in where the parent exists, not elsewhere.
run_ok kc create -f - <<'Y'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: defaults}
spec:
  failurePolicy: {maxRestarts: 2}
  replicatedJobs:
  - name: w
    template: {spec: {template: {spec: {containers: [{name: c, image: x, ports: [{containerPort: 80}]}]}}}}
Y
run_ok kc get jobset defaults -o json
assert_eq '{"maxRestarts":2,"restartStrategy":"Recreate"}' "$(jq -c .spec.failurePolicy <<<"$OUT")" "default inside a present object"
assert_eq 1 "$(jq -r '.spec.replicatedJobs[0].replicas' <<<"$OUT")" "replicas defaults to 1"
assert_eq TCP "$(jq -r '.spec.replicatedJobs[0].template.spec.template.spec.containers[0].ports[0].protocol' <<<"$OUT")"
assert_eq null "$(jq -c .spec.network <<<"$OUT")" "absent objects are not created"
run_ok kc delete jobset defaults
# Aliases kubectl resolves through discovery.
run_ok kc get jobsets.jobset.x-k8s.io/train -o name
assert_eq "jobset.jobset.x-k8s.io/train" "$OUT"
run_ok kc get JobSet train -o name
# Unknown fields: Strict (kubectl's default) refuses; --validate=false drops them silently.
sed 's/parallelism: 1/parallelism: 1\n        bogusField: 7/' "$E2E_DIR/data/jobset-sample.yaml" | sed 's/name: train/name: train-2/' >"$E2E_TMP/bogus.yaml"
assert_fails kc create -f "$E2E_TMP/bogus.yaml"
assert_contains "$OUT" 'strict decoding error: unknown field "spec.replicatedJobs[0].template.spec.bogusField"'
run_ok kc create -f "$E2E_TMP/bogus.yaml" --validate=false
assert_eq null "$(jp '{.spec.replicatedJobs[0].template.spec}' jobset train-2 | jq -r .bogusField)" "pruned"
sed 's/name: train-2/name: train-3/' "$E2E_TMP/bogus.yaml" >"$E2E_TMP/bogus3.yaml"
run_ok kc create -f "$E2E_TMP/bogus3.yaml" --validate=warn --dry-run=server
assert_contains "$OUT" 'Warning: unknown field "spec.replicatedJobs[0].template.spec.bogusField"' "Warn validation"
# Label, merge patch, JSON patch; strategic merge is refused for custom resources.
run_ok kc label jobset train queue=gpu
run_ok kc patch jobset train --type=merge -p '{"spec":{"suspend":true}}'
assert_eq 2 "$(jp '{.metadata.generation}' jobset train)" "spec change bumps generation"
run_ok kc patch jobset train --type=json -p '[{"op":"add","path":"/spec/replicatedJobs/1/template/spec/template/metadata","value":{"labels":{"kai.scheduler/queue":"q1"}}}]'
assert_eq q1 "$(jp '{.spec.replicatedJobs[1].template.spec.template.metadata.labels.kai\.scheduler/queue}' jobset train)"
assert_fails kc patch jobset train -p '{"spec":{"suspend":false}}'
assert_contains "$OUT" "application/strategic-merge-patch+json is not supported by jobset.x-k8s.io/v1alpha2, Kind=JobSet"
# Status goes through /status only.
run_ok kc patch jobset train --subresource=status --type=merge -p '{"status":{"restarts":2,"terminalState":"Completed"}}'
assert_eq 2 "$(jp '{.status.restarts}' jobset train)"
run_ok kc patch jobset train --type=merge -p '{"status":{"restarts":9}}'
assert_eq 2 "$(jp '{.status.restarts}' jobset train)" "main resource ignores status"
assert_eq 3 "$(jp "{.metadata.generation}" jobset train)" "status writes keep generation (3 after two spec patches)"
run_ok kc get jobsets -l queue=gpu -o name
assert_eq "jobset.jobset.x-k8s.io/train" "$OUT"
# Updates to CRs need a resourceVersion (no unconditional update).
run_ok kc get jobset train -o json
jq 'del(.metadata.resourceVersion)' <<<"$OUT" >"$E2E_TMP/norv.json"
# (kubectl replace fills it in from a GET, so ask the API directly.)
r=$(sim_curl PUT /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/train -H 'Content-Type: application/json' --data-binary @"$E2E_TMP/norv.json")
assert_eq 422 "$(tail -n1 <<<"$r")"
assert_contains "$(head -n1 <<<"$r" | jq -r .message)" 'JobSet.jobset.x-k8s.io "train" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update'
run_ok kc replace -f "$E2E_TMP/norv.json"
run_ok kc delete jobset train
assert_contains "$OUT" 'jobset.jobset.x-k8s.io "train" deleted'
# Deleting the CRD stops serving the resource.
run_ok kc delete crd jobsets.jobset.x-k8s.io
r=$(sim_curl GET /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets)
assert_eq 404 "$(tail -n1 <<<"$r")"
