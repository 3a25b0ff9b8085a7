# kubectl's generator commands send protobuf (typed clients). The simulator decodes the kinds
# they make; what it stores must equal what kubectl meant (its own --dry-run=client output).
sim_start
norm_client='del(.metadata.creationTimestamp, .spec.template.metadata.creationTimestamp, .status)'
norm_server='del(.metadata.uid, .metadata.creationTimestamp, .metadata.generation, .metadata.namespace, .metadata.resourceVersion, .spec.template.metadata.creationTimestamp, .status, .metadata.labels["kubernetes.io/metadata.name"], .spec.finalizers) | if .metadata.labels == {} then del(.metadata.labels) else . end | if .spec == {} then del(.spec) else . end'
check() {
    local want got
    # Flags go first: arguments after `--` belong to the container command.
    want=$(kc --dry-run=client -o json "$@" | jq -cS "$norm_client | if .spec == {} then del(.spec) else . end")
    run_ok kc -o json "$@"
    got=$(jq -cS "$norm_server" <<<"$OUT")
    assert_eq "$want" "$got" "kubectl $*"
}
check create namespace gen-ns
check create configmap gen-cm --from-literal=a=b --from-literal=x=y
check create secret generic gen-secret --from-literal=password=s3cr3t
check create deployment gen-deploy --image=nginx --replicas=3 --port=8080
check create deployment gen-zero --image=nginx --replicas=0
check create job gen-job --image=busybox -- echo hi
check create service clusterip gen-svc --tcp=80:8080
check run gen-pod --image=nginx --labels=app=gen --env=K=V --port=90
# And they are really stored.
assert_eq 3 "$(jp '{.spec.replicas}' deploy gen-deploy)"
assert_eq 0 "$(jp '{.spec.replicas}' deploy gen-zero)" "a pointer zero survives"
assert_eq "s3cr3t" "$(jp '{.data.password}' secret gen-secret | base64 -d)"
assert_eq 8080 "$(jp '{.spec.ports[0].targetPort}' svc gen-svc)"
# A protobuf body the simulator cannot decode is refused loudly, never half-read.
r=$(printf 'k8s\0\x0a\x0b\x0a\x02v1\x12\x05Bogus' | sim_curl POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/vnd.kubernetes.protobuf' --data-binary @-)
assert_eq 415 "$(tail -n1 <<<"$r")"
assert_contains "$(head -n1 <<<"$r")" "protobuf bodies of v1 Bogus are not understood"
