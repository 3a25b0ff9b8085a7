# The scale subresource: kubectl scale on a Deployment and on a custom resource whose CRD
# declares subresources.scale; the Scale object on the wire.
sim_start
run_ok kc create deployment web --image=nginx --replicas=2
run_ok kc scale deployment web --replicas=5
assert_contains "$OUT" "deployment.apps/web scaled"
assert_eq 5 "$(jp '{.spec.replicas}' deploy web)"
assert_eq 2 "$(jp '{.metadata.generation}' deploy web)" "scaling is a spec change"
r=$(sim_curl GET /apis/apps/v1/namespaces/default/deployments/web/scale)
assert_eq '{"kind":"Scale","apiVersion":"autoscaling/v1","spec":{"replicas":5},"status":{"replicas":0,"selector":"app=web"}}' \
    "$(head -n1 <<<"$r" | jq -c '{kind, apiVersion, spec, status}')"
assert_fails kc scale deployment web --replicas=-1
run_ok kc apply -f - <<'Y'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: groups.sim.example.com}
spec:
  group: sim.example.com
  names: {kind: Group, plural: groups, singular: group}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.ready, labelSelectorPath: .status.selector}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
          status: {type: object, properties: {ready: {type: integer}, selector: {type: string}}}
Y
run_ok kc create -f - <<'Y'
apiVersion: sim.example.com/v1
kind: Group
metadata: {name: g1}
spec: {size: 1}
Y
run_ok kc api-resources --api-group=sim.example.com -o wide
run_ok kc scale group g1 --replicas=4
assert_eq 4 "$(jp '{.spec.size}' group g1)"
run_ok kc patch group g1 --subresource=status --type=merge -p '{"status":{"ready":3,"selector":"app=g1"}}'
r=$(sim_curl GET /apis/sim.example.com/v1/namespaces/default/groups/g1/scale)
assert_eq '{"spec":{"replicas":4},"status":{"replicas":3,"selector":"app=g1"}}' "$(head -n1 <<<"$r" | jq -c '{spec, status}')"
# A stale resourceVersion in the Scale is a conflict.
stale=$(head -n1 <<<"$r" | jq -c '.metadata.resourceVersion = "1" | .spec.replicas = 9')
r=$(sim_curl PUT /apis/sim.example.com/v1/namespaces/default/groups/g1/scale -H 'Content-Type: application/json' -d "$stale")
assert_eq 409 "$(tail -n1 <<<"$r")"
