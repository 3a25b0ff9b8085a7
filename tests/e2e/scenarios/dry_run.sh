# --dry-run=server: the response looks real, nothing is stored, on every verb.
sim_start
cat >"$E2E_TMP/web.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
Y
run_ok kc create -f "$E2E_TMP/web.yaml" --dry-run=server -o json
assert_eq web "$(jq -r .metadata.name <<<"$OUT")" "dry-run create answers with the object"
assert_fails kc get deployment web
assert_contains "$OUT" "NotFound" "dry-run create stored nothing"
grep -q 'POST /apis/apps/v1/namespaces/default/deployments?dryRun=All' "$E2E_TMP/requests.log" || fail "no dryRun=All request"
run_ok kc create -f "$E2E_TMP/web.yaml"
rv=$(jp '{.metadata.resourceVersion}' deploy web)
run_ok kc label deploy web x=y --dry-run=server
run_ok kc patch deploy web -p '{"spec":{"replicas":5}}' --dry-run=server
run_ok kc get deploy web -o json
assert_eq "$rv" "$(jq -r .metadata.resourceVersion <<<"$OUT")" "dry-run patch stored nothing"
assert_eq null "$(jq -r .metadata.labels.x <<<"$OUT")"
run_ok kc delete deploy web --dry-run=server
assert_contains "$OUT" "(server dry run)"
run_ok kc get deploy web
