# Every file option takes several files and folders, through the real kubectl: --policy
# repeated and given a folder (offline and live audit, mutate), --definitions given a folder,
# validate given files and a folder; a policy defined twice is an error naming both places.
plugin_on_path || fail "plugin not built: $PLUGIN"
G=$REPO_ROOT/tests/golden
A=$G/audit/split/a.yaml
MORE=$G/audit/split/more

# Offline: the three files of split/ find what the one policies.yaml finds.
set +e
many=$(kubectl wmap audit -f "$G/audit/tree" --policy "$A" --policy "$MORE" 2>/dev/null)
rc=$?
one=$(kubectl wmap audit -f "$G/audit/tree" --policy "$G/audit/policies.yaml" 2>/dev/null)
set -e
assert_eq 1 "$rc" "Deny violations fail the run"
assert_eq "$one" "$many" "split in three files and a folder, the same violations"
for p in org-priority gpu-runtime cost-center; do assert_contains "$many" " $p "; done

assert_fails kubectl wmap audit -f "$G/audit/tree" --policy "$G/audit/policies.yaml" --policy "$MORE"
assert_contains "$OUT" 'policy "gpu-runtime" is defined twice'
assert_contains "$OUT" "split/more/b.yaml:2:1"
assert_contains "$OUT" "audit/policies.yaml:22:1"

# mutate: the policies apply in command-line order (team-b-priority, in a.yaml, sets low).
run_ok kubectl wmap mutate -f "$G/audit/tree/jobset-team-b.yaml" -n team-b --policy "$MORE" --policy "$A" -o json
assert_eq low "$(jq -r '.spec.replicatedJobs[0].template.spec.template.spec.priorityClassName' <<<"$OUT")"

# Live: the cluster's JobSet judged against policies of a file and a folder.
sim_start
run_ok kc apply -f "$E2E_DIR/data/jobset-crd.yaml"
wait_until 10 kc get jobsets || fail "JobSet CRD not served"
run_ok kc create namespace team-b
run_ok kc -n team-b create -f "$E2E_DIR/data/jobset-sample.yaml"
set +e
live=$(kubectl wmap audit -n team-b --policy "$A" --policy "$G/audit/split/more/nested" -o json 2>"$E2E_TMP/live.err")
rc=$?
set -e
assert_eq 1 "$rc" "live audit: the Deny policy of the file is violated"
assert_eq "cost-center org-priority" "$(jq -r '[.violations[].policy] | unique | join(" ")' <<<"$live")" \
    "violations of both sources"

# --definitions takes a folder (read recursively); validate takes files and folders, with
# the failing file's verdict last.
run_ok kubectl wmap definitions --definitions "$G/defs/folder"
for d in example-com-gadget-v1 example-com-gizmo-v1 example-com-widget-v1; do assert_contains "$OUT" "$d"; done
assert_fails kubectl wmap definitions --definitions "$G/defs/valid.yaml" --definitions "$G/defs/same-name.yaml"
assert_contains "$OUT" "definition example-com-widget-v1 is also defined in"
set +e
out=$(kubectl wmap validate "$G/defs/cycle.yaml" "$G/defs/folder" 2>&1)
rc=$?
set -e
assert_eq 1 "$rc" "validate: one file invalid"
assert_eq "OK: OK: INVALID: error:" "$(awk '{print $1}' <<<"$out" | grep -v '^tests\|^/' | tr '\n' ' ' | sed 's/ $//')" \
    "one verdict per file, the failure last"
