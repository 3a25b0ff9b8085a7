# The simulator's JSON Patch is the witness wmap's patches are judged by, so it is checked
# itself: RFC 6902 cases (appendix A and the edges webhooks trip on) applied to a custom
# resource whose spec keeps unknown fields; a failing patch changes nothing.
sim_start
run_ok kc create -f - <<'Y'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: docs.sim.example.com}
spec:
  group: sim.example.com
  names: {kind: Doc, plural: docs, singular: doc}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
Y
cases=$E2E_DIR/data/jsonpatch-cases.json
n=$(jq length "$cases")
base=/apis/sim.example.com/v1/namespaces/default/docs
for ((i = 0; i < n; i++)); do
    c=$(jq -c ".[$i]" "$cases")
    name=$(jq -r .name <<<"$c")
    body=$(jq -c "{apiVersion: \"sim.example.com/v1\", kind: \"Doc\", metadata: {name: \"d$i\"}, spec: .doc}" <<<"$c")
    r=$(sim_curl POST "$base" -H 'Content-Type: application/json' -d "$body")
    assert_eq 201 "$(tail -n1 <<<"$r")" "create for case '$name'"
    patch=$(jq -c '[.patch[] | .path = "/spec" + .path | if .from then .from = "/spec" + .from else . end]' <<<"$c")
    r=$(sim_curl PATCH "$base/d$i" -H 'Content-Type: application/json-patch+json' -d "$patch")
    got=$(sim_curl GET "$base/d$i" | head -n1 | jq -cS .spec)
    if [[ $(jq -r '.error // false' <<<"$c") == true ]]; then
        [[ $(tail -n1 <<<"$r") =~ ^(400|422)$ ]] || fail "case '$name': expected a rejection, got $(tail -n1 <<<"$r"): $(head -n1 <<<"$r")"
        assert_eq "$(jq -cS .doc <<<"$c")" "$got" "case '$name' left the object unchanged"
    else
        assert_eq 200 "$(tail -n1 <<<"$r")" "case '$name': $(head -n1 <<<"$r")"
        assert_eq "$(jq -cS .expected <<<"$c")" "$got" "case '$name'"
    fi
done
echo "$n JSON Patch cases"
