# kubectl wmap logs: the logs of a JobSet's pods, of one replicated job (only its lines,
# prefixed with the pod), of a multi-container pod (the container in the prefix), --tail,
# --since, --previous, -c, colours on a terminal only; -f follows every pod at once, shows a
# line appended after it started and the logs of a pod that starts later; --max-pods
# refuses a flood; an unknown component exits 3. The simulator serves the pod log
# subresource from the annotations apiserver-sim.test/log.CONTAINER; the real kubectl logs
# reads the same text, as a witness.
source "$E2E_DIR/live-helpers.sh"
live_setup
kc apply -f "$REPO_ROOT/deploy/base/01-crd-kartas.run.ai.yaml" >/dev/null   # no warning about it
live_jobset_fixture
LOG=$E2E_TMP/requests.log
setlog() { # POD CONTAINER TEXT
    kc annotate --overwrite pod "$1" "apiserver-sim.test/log.$2=$3" >/dev/null
}
setlog train-driver-0-0-x7k2p main $'2026-01-01T00:00:00Z driver starting\ndriver step 1\ndriver step 2'
setlog train-workers-0-0-b5n8q main $'worker 0-0 ready'
setlog train-workers-0-1-c9m4r main $'worker 0-1 ready'
setlog train-workers-1-0-d2h6s main $'worker 1-0 ready'
setlog impostor c 'not ours'

# The driver only, each line prefixed with its pod; the same text as kubectl logs reads.
run_ok kubectl wmap logs jobset/train replicatedjob/driver
assert_eq $'train-driver-0-0-x7k2p driver starting\ntrain-driver-0-0-x7k2p driver step 1\ntrain-driver-0-0-x7k2p driver step 2' "$OUT"
assert_eq $'driver starting\ndriver step 1\ndriver step 2' "$(kc logs train-driver-0-0-x7k2p)" "kubectl logs reads the same"

# The whole JobSet: every pod in name order, the impostor (not owned) never; the pod that
# has not started is named on stderr.
kubectl wmap logs jobset train >"$E2E_TMP/all.out" 2>"$E2E_TMP/all.err" || fail "logs: $(cat "$E2E_TMP/all.err")"
assert_eq 6 "$(wc -l <"$E2E_TMP/all.out")"
assert_eq "train-driver-0-0-x7k2p train-driver-0-0-x7k2p train-driver-0-0-x7k2p train-workers-0-0-b5n8q train-workers-0-1-c9m4r train-workers-1-0-d2h6s" \
    "$(awk '{print $1}' "$E2E_TMP/all.out" | tr '\n' ' ' | sed 's/ $//')"
assert_not_contains "$(cat "$E2E_TMP/all.out")" "not ours"
assert_contains "$(cat "$E2E_TMP/all.err")" "train-workers-1-1-f4j8t/main: no log yet (Pending)"

# One instance of the workers, --tail, --since (the first driver line is from 2026-01-01).
out=$(kubectl wmap logs jobset/train replicatedjob/workers 2>/dev/null) || fail "logs of the workers"
assert_eq 3 "$(wc -l <<<"$out")"
run_ok kubectl wmap logs jobset/train replicatedjob/driver --tail 1
assert_eq "train-driver-0-0-x7k2p driver step 2" "$OUT"
run_ok kubectl wmap logs jobset/train replicatedjob/driver --since 1h
assert_eq $'train-driver-0-0-x7k2p driver step 1\ntrain-driver-0-0-x7k2p driver step 2' "$OUT"
assert_contains "$(grep '/log?' "$LOG" | tail -n1)" "sinceSeconds=3600"
run_ok kubectl wmap logs jobset/train replicatedjob/driver --timestamps --tail 1
[[ $OUT =~ ^train-driver-0-0-x7k2p\ 20[0-9-]+T[0-9:.]+Z\ driver\ step\ 2$ ]] || fail "timestamps: $OUT"

# --previous: the last run of a restarted container.
kc annotate --overwrite pod train-driver-0-0-x7k2p 'apiserver-sim.test/previous-log.main=driver crashed: OOM' >/dev/null
run_ok kubectl wmap logs jobset/train replicatedjob/driver --previous
assert_eq "train-driver-0-0-x7k2p driver crashed: OOM" "$OUT"

# A pod with two containers: the container is named too; -c picks one.
ref=$(live_ref batch/v1 Job train-workers-1 "$(live_uid job train-workers-1)")
pod=$(live_pod train-workers-1-2-side "$ref" '{"jobset.sigs.k8s.io/jobset-name":"train","jobset.sigs.k8s.io/replicatedjob-name":"workers","jobset.sigs.k8s.io/job-index":"1"}' \
    '{"apiserver-sim.test/log.main":"main says hi","apiserver-sim.test/log.sidecar":"sidecar says hi"}' node-c 0 |
    jq -c '.spec.containers += [{name:"sidecar", image:"busybox"}]')
live_create "$pod"
live_status train-workers-1-2-side Running True
run_ok kubectl wmap logs jobset/train replicatedjob/workers
assert_contains "$OUT" "train-workers-1-2-side main main says hi"
assert_contains "$OUT" "train-workers-1-2-side sidecar sidecar says hi"
assert_contains "$OUT" "train-workers-0-0-b5n8q worker 0-0 ready" "single-container pods: no container in the prefix"
out=$(kubectl wmap logs jobset/train replicatedjob/workers -c sidecar 2>/dev/null) || fail "-c sidecar"
assert_eq "train-workers-1-2-side sidecar says hi" "$out"
rc=0; kubectl wmap logs jobset/train -c nosuch >/dev/null 2>"$E2E_TMP/err" || rc=$?
assert_eq 1 "$rc" "-c with a container no pod has"
assert_contains "$(cat "$E2E_TMP/err")" "no pod of jobsets.jobset.x-k8s.io/train has a container nosuch"

# Colours on a terminal only (a pty from script(1)); NO_COLOR turns them off.
out=$(script -qec "kubectl wmap logs jobset/train replicatedjob/driver --tail 1" /dev/null)
[[ $out == *$'\e['3[0-9]m* ]] || fail "no colour on a terminal: $(cat -v <<<"$out")"
out=$(NO_COLOR=1 script -qec "kubectl wmap logs jobset/train replicatedjob/driver --tail 1" /dev/null)
[[ $out != *$'\e['* ]] || fail "colour with NO_COLOR: $(cat -v <<<"$out")"
out=$(kubectl wmap logs jobset/train replicatedjob/driver --tail 1 | cat)
[[ $out != *$'\e['* ]] || fail "colour when piped"

# Bad input: an unknown component (exit 3, the components listed), too many pods (exit 5,
# no log read), bad flags (exit 2).
rc=0; kubectl wmap logs jobset/train replicatedjob/leader >/dev/null 2>"$E2E_TMP/err" || rc=$?
assert_eq 3 "$rc"
assert_contains "$(cat "$E2E_TMP/err")" "has no component replicatedjob/leader (its components: replicatedjob/driver, replicatedjob/workers)"
n=$(grep -c '/log?' "$LOG" || true)
rc=0; kubectl wmap logs jobset/train --max-pods 3 >"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
assert_eq 5 "$rc" "more pods than --max-pods"
assert_contains "$(cat "$E2E_TMP/err")" "has 6 pods, more than --max-pods 3"
assert_eq "" "$(cat "$E2E_TMP/out")"
assert_eq "$n" "$(grep -c '/log?' "$LOG" || true)" "no log was read"
for bad in "--tail x" "--since soon" "--max-pods 0" "-f --previous"; do
    rc=0
    # shellcheck disable=SC2086
    kubectl wmap logs jobset/train $bad >/dev/null 2>&1 || rc=$?
    assert_eq 2 "$rc" "logs $bad"
done
rc=0; kubectl wmap logs jobset/nope >/dev/null 2>&1 || rc=$?
assert_eq 3 "$rc" "a missing workload"

# Completion through kubectl: the command, workloads, then the components and instances.
run_ok "$KUBECTL" __complete wmap lo
assert_contains "$OUT" "logs"
run_ok "$KUBECTL" __complete wmap logs jobset/tr
assert_contains "$OUT" "jobset/train"
run_ok "$KUBECTL" __complete wmap logs jobset/train ""
assert_contains "$OUT" $'replicatedjob\nreplicatedjob/driver\nreplicatedjob/workers'
out=$("$KUBECTL" __complete wmap logs jobset/train replicatedjob/w 2>/dev/null)
assert_eq $'replicatedjob/workers\n:4' "$out"

# -f: every worker followed at once (one request per container), a line appended later is
# shown, and the pod that starts later is followed too.
start=$(wc -l <"$LOG")
kubectl wmap logs jobset/train replicatedjob/workers -f >"$E2E_TMP/f.out" 2>"$E2E_TMP/f.err" &
fpid=$!
E2E_PIDS+=("$fpid")
wait_until 30 grep -q 'sidecar says hi' "$E2E_TMP/f.out" || fail "no logs with -f: $(cat "$E2E_TMP/f.err")"
setlog train-workers-0-1-c9m4r main $'worker 0-1 ready\nworker 0-1 step 100'
wait_until 30 grep -q '^train-workers-0-1-c9m4r worker 0-1 step 100$' "$E2E_TMP/f.out" || fail "the appended line was not shown: $(cat "$E2E_TMP/f.out")"
setlog train-workers-1-1-f4j8t main 'late worker here'
live_status train-workers-1-1-f4j8t Running True
wait_until 30 grep -q '^train-workers-1-1-f4j8t late worker here$' "$E2E_TMP/f.out" || fail "the pod that started later was not followed: $(cat "$E2E_TMP/f.out")"
assert_eq 1 "$(grep -c 'worker 0-1 ready' "$E2E_TMP/f.out")" "lines are not repeated"
reqs=$(tail -n +"$((start + 1))" "$LOG")
assert_eq 6 "$(grep -c '/log?.*follow=true' <<<"$reqs")" "one follow request per container (5 + the late pod)"
assert_contains "$reqs" "/api/v1/namespaces/default/pods?watch=true&allowWatchBookmarks=true"
# A container that restarts while followed: its log ends when it terminates, and the log of
# its next run (restartCount 1) is followed from the start. The sim keeps the current run's
# text in the annotation; the shorter new text is not mistaken for an append.
cstatus() { # POD JSON-OF-ONE-CONTAINER-STATUS
    local r
    r=$(sim_curl PATCH "/api/v1/namespaces/default/pods/$1/status" \
        -H 'Content-Type: application/merge-patch+json' --data-binary "{\"status\":{\"containerStatuses\":[$2]}}")
    [[ $(tail -n1 <<<"$r") == 200 ]] || fail "container status of $1: $r"
}
setlog train-workers-0-0-b5n8q main 'w0 again'
cstatus train-workers-0-0-b5n8q '{"name":"main","restartCount":0,"state":{"terminated":{"exitCode":1,"reason":"Error"}}}'
cstatus train-workers-0-0-b5n8q '{"name":"main","restartCount":1,"state":{"running":{}}}'
wait_until 30 grep -q '^train-workers-0-0-b5n8q w0 again$' "$E2E_TMP/f.out" || fail "the restarted container was not followed again: $(cat "$E2E_TMP/f.out")"
assert_eq 1 "$(grep -c 'worker 0-0 ready' "$E2E_TMP/f.out")" "the first run's lines are not repeated"
kill -INT "$fpid"
rc=0; wait "$fpid" || rc=$?
assert_eq 130 "$rc" "Ctrl-C"
