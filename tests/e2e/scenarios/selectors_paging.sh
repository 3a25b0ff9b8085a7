# Label selectors with every operator, all-namespace lists, and paging with --chunk-size.
sim_start
{
  for i in $(seq 1 7); do
    env=prod; ((i % 2)) && env=dev
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p%s, labels: {app: web, env: %s, idx: "%s"}}\nspec: {containers: [{name: c, image: x}]}\n---\n' "$i" "$env" "$i"
  done
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec: {containers: [{name: c, image: x}]}\n'
} >"$E2E_TMP/pods.yaml"
run_ok kc create -f "$E2E_TMP/pods.yaml"
names() { kc get pods "$@" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{end}'; }
assert_eq "p2 p4 p6 " "$(names -l env=prod)" "="
assert_eq "p2 p4 p6 " "$(names -l env==prod)" "=="
assert_eq "p1 p3 p5 p7 plain " "$(names -l env!=prod)" "!= (missing key matches)"
assert_eq "p1 p2 " "$(names -l 'idx in (1,2)')" "in"
assert_eq "p3 p4 p5 p6 p7 " "$(names -l 'idx notin (1,2),app')" "notin + exists"
assert_eq "plain " "$(names -l '!app')" "does not exist"
assert_eq "p1 p3 " "$(names -l 'env=dev,idx in (1,3,4)')" "AND"
assert_fails kc get pods -l 'env in prod'
assert_contains "$OUT" "BadRequest"
# Paging: kubectl walks continue tokens; the request log shows the limit and continue.
run_ok kc get pods --chunk-size=3 -o name
assert_eq 8 "$(wc -l <<<"$OUT" | tr -d ' ')" "all pods over three pages"
assert_eq 3 "$(grep -c 'GET /api/v1/namespaces/default/pods?.*limit=3' "$E2E_TMP/requests.log")" "three page requests"
grep -q 'continue=' "$E2E_TMP/requests.log" || fail "no continue token was used"
run_ok kc get pods --chunk-size=3
assert_eq 9 "$(wc -l <<<"$OUT" | tr -d ' ')" "table over pages: header + 8 rows"
# Direct paging through the API: metadata.continue and the final page without it.
page1=$(sim_curl GET '/api/v1/namespaces/default/pods?limit=5' | head -n1)
tok=$(jq -r .metadata.continue <<<"$page1")
[[ -n $tok && $tok != null ]] || fail "no continue token in $page1"
page2=$(sim_curl GET "/api/v1/namespaces/default/pods?limit=5&continue=$tok" | head -n1)
assert_eq 3 "$(jq '.items | length' <<<"$page2")" "second page size"
assert_eq null "$(jq -r .metadata.continue <<<"$page2")" "last page has no continue"
# All-namespace list at the cluster path.
run_ok kc create -f - <<'Y'
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: v1
kind: Pod
metadata: {name: solo, namespace: other, labels: {run: solo}}
spec: {containers: [{name: c, image: x}]}
Y
assert_eq "solo" "$(kc get pods -A -l '!env,run' -o jsonpath='{.items[*].metadata.name}')"
