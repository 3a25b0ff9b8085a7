# kubectl wmap patch / suspend / resume against the simulator: every pod template labelled
# in one guarded JSON Patch, removals, spec fields, --component, --policy, dry runs that
# change nothing, --diff, and a concurrent writer whose change (made between our GET and our
# PATCH) survives because the resourceVersion test fails and the plugin recomputes.
source "$E2E_DIR/live-helpers.sh"
live_setup
kc create -f "$LIVE_DATA/jobset.yaml" >/dev/null
tmpl() { # TEMPLATE-INDEX JSONPATH-TAIL
    jp "{.spec.replicatedJobs[$1].template.spec.template$2}" jobset train
}

run_ok kubectl wmap patch jobset/train --label wmap.io/team=ml --annotation wmap.io/owner=alice
assert_contains "$OUT" "jobset.jobset.x-k8s.io/train patched"
assert_contains "$OUT" "2 pod templates"
assert_eq ml "$(tmpl 0 '.metadata.labels.wmap\.io/team')" "driver template labelled"
assert_eq driver "$(tmpl 0 '.metadata.labels.role')" "existing labels kept"
assert_eq ml "$(tmpl 1 '.metadata.labels.wmap\.io/team')" "workers template (no metadata before) labelled"
assert_eq alice "$(tmpl 1 '.metadata.annotations.wmap\.io/owner')"
# One PATCH, guarded by the resourceVersion test.
assert_eq 1 "$(grep -c 'PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/train' "$E2E_TMP/requests.log")"

# Again: nothing to do, nothing sent.
run_ok kubectl wmap patch jobset/train --label wmap.io/team=ml
assert_contains "$OUT" "patched (no change)"
assert_eq 1 "$(grep -c 'PATCH /apis/jobset' "$E2E_TMP/requests.log")"

# Removal, spec fields, --component.
run_ok kubectl wmap patch jobset train --annotation wmap.io/owner- --scheduler-name kai-scheduler \
    --priority-class high --node-selector gpu=a100 --toleration nvidia.com/gpu:NoSchedule --toleration dedicated=ml:NoExecute
assert_eq "" "$(tmpl 1 '.metadata.annotations.wmap\.io/owner')" "annotation removed"
assert_eq kai-scheduler "$(tmpl 0 '.spec.schedulerName')"
assert_eq high "$(tmpl 1 '.spec.priorityClassName')"
assert_eq a100 "$(tmpl 1 '.spec.nodeSelector.gpu')"
assert_eq '[{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"},{"effect":"NoExecute","key":"dedicated","operator":"Equal","value":"ml"}]' \
    "$(kc get jobset train -o json | jq -c '.spec.replicatedJobs[1].template.spec.template.spec.tolerations')"

# --dry-run=server: admission runs, nothing is stored; -o json prints what would be stored.
rv=$(jp '{.metadata.resourceVersion}' jobset train)
out=$(kubectl wmap patch jobset/train --label wmap.io/dry=server --dry-run=server -o json 2>/dev/null) || fail "server dry run"
assert_eq server "$(jq -r '.spec.replicatedJobs[0].template.spec.template.metadata.labels["wmap.io/dry"]' <<<"$out")"
assert_eq "$rv" "$(jp '{.metadata.resourceVersion}' jobset train)" "server dry run stored nothing"
assert_eq "" "$(tmpl 0 '.metadata.labels.wmap\.io/dry')"
grep -q 'PATCH .*dryRun=All' "$E2E_TMP/requests.log" || fail "no dryRun=All request"
# --dry-run=client sends nothing at all.
n=$(wc -l <"$E2E_TMP/requests.log")
run_ok kubectl wmap patch jobset/train --label wmap.io/dry=client --dry-run=client
assert_contains "$OUT" "patched (dry run)"
assert_eq 0 "$(tail -n +"$((n + 1))" "$E2E_TMP/requests.log" | grep -c PATCH || true)"
# --diff shows the change.
run_ok kubectl wmap patch jobset/train --label wmap.io/diff=yes --dry-run=client --diff
grep -qE '^\+ +wmap.io/diff: "yes"$' <<<"$OUT" || fail "no diff line: $OUT"

# A concurrent writer between our read and our write: the plugin waits after its GET (test
# hook), another client changes the object, our first PATCH is refused (resourceVersion
# test), the plugin reads again and patches on top. Both changes are there.
WMAP_TEST_PATCH_PAUSE=$E2E_TMP/pause kubectl wmap patch jobset/train --label wmap.io/ours=1 >"$E2E_TMP/conc.out" 2>&1 &
pid=$!
wait_until 20 test -e "$E2E_TMP/pause.waiting" || fail "plugin never reached the pause"
run_ok kc patch jobset train --type=json -p '[{"op":"add","path":"/spec/replicatedJobs/0/template/spec/template/metadata/labels/theirs","value":"2"}]'
touch "$E2E_TMP/pause.go"
wait "$pid" || fail "concurrent patch failed: $(cat "$E2E_TMP/conc.out")"
assert_eq 1 "$(tmpl 0 '.metadata.labels.wmap\.io/ours')" "our label"
assert_eq 2 "$(tmpl 0 '.metadata.labels.theirs')" "their label survived"
assert_eq 1 "$(tmpl 1 '.metadata.labels.wmap\.io/ours')"
grep -E 'PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/train\?fieldManager=kubectl-wmap .*(409|422)' \
    "$E2E_TMP/requests.log" >/dev/null || fail "the first, stale patch was not refused: $(grep PATCH "$E2E_TMP/requests.log")"

# --policy: the webhook's WorkloadPolicy code applied now.
cat >"$E2E_TMP/policy.yaml" <<'Y'
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: team-ml}
spec:
  match: {kinds: ["JobSet.jobset.x-k8s.io"]}
  mode: override
  podTemplate:
    labels: {wmap.io/policy: team-ml}
    priorityClassName: policy-high
    runtimeClassName: nvidia
Y
run_ok kubectl wmap patch jobset/train --policy "$E2E_TMP/policy.yaml" --component replicatedjob
assert_eq team-ml "$(tmpl 1 '.metadata.labels.wmap\.io/policy')"
assert_eq policy-high "$(tmpl 0 '.spec.priorityClassName')"
# The trimmed JobSet CRD does not declare runtimeClassName: the server's warning is shown.
assert_contains "$OUT" 'Warning: unknown field "spec.replicatedJobs[0].template.spec.template.spec.runtimeClassName"'
assert_eq "" "$(tmpl 0 '.spec.runtimeClassName')"

# Bad input.
assert_fails kubectl wmap patch jobset/train --label 'bad key=x'
assert_contains "$OUT" "--label"
assert_fails kubectl wmap patch jobset/train
assert_contains "$OUT" "nothing to change"
rc=0; kubectl wmap patch jobset/train --label a=b --component nope >/dev/null 2>&1 || rc=$?
assert_eq 2 "$rc" "unknown component"

# suspend / resume through the definition's actions.
run_ok kubectl wmap suspend jobset/train
assert_contains "$OUT" "jobset.jobset.x-k8s.io/train suspended"
assert_eq true "$(jp '{.spec.suspend}' jobset train)"
run_ok kubectl wmap suspend jobset/train
assert_contains "$OUT" "suspended (no change)"
out=$(kubectl wmap resume jobset/train --dry-run=server -o json 2>/dev/null) || fail "resume dry run"
assert_eq false "$(jq -r .spec.suspend <<<"$out")"
assert_eq true "$(jp '{.spec.suspend}' jobset train)" "server dry run"
run_ok kubectl wmap resume jobset/train
assert_eq false "$(jp '{.spec.suspend}' jobset train)"
