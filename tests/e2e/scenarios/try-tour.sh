# `make try` (tests/try.sh) as a new user runs it: the tour passes every step (a Karta for a
# new CRD in force, a TrainingRun stamped and warned about, describe, audit), ends with exit
# 0, and leaves none of the processes it started running.
: "${WEBHOOK:=$REPO_ROOT/build/wmap-webhook}"
start=$SECONDS
run_ok env SIM="$SIM" WEBHOOK="$WEBHOOK" PLUGIN="$PLUGIN" TRY_PIDS="$E2E_TMP/try.pids" \
    bash "$REPO_ROOT/tests/try.sh"
echo "the tour took $((SECONDS - start)) s"
tour=$OUT
assert_contains "$tour" "ml-example-com-trainingrun-v1   TrainingRun   ml.example.com   True"
assert_contains "$tour" 'Warning: policy org-priority: component worker (instance gpu): priorityClassName must be "training-high" (found "team-a-low")'
assert_contains "$tour" '"wmap.io/component":"worker","wmap.io/instance":"gpu"'
assert_contains "$tour" "TrainingRun/llama-ft   namespace: team-a   definition: ml-example-com-trainingrun-v1 (cluster)"
assert_contains "$tour" "TrainingRun/team-a/llama-ft   worker/gpu    org-priority   Warn"
assert_contains "$tour" "nothing is left running"
assert_eq 2 "$(wc -l <"$E2E_TMP/try.pids")" "the simulator and the webhook were started"
while read -r pid; do
    if kill -0 "$pid" 2>/dev/null; then fail "process $pid of the tour is still running"; fi
done <"$E2E_TMP/try.pids"
