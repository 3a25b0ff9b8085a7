# kubectl wmap describe TYPE/NAME -w: piped, a changed view is printed after a blank line and
# an unchanged one is not; in tmux (as a person sees it) the view is redrawn in place when a
# pod becomes ready; both end when the JobSet is deleted (exit 0); Ctrl-C ends with 130 and
# gives the cursor back; --until-done ends on Completed. The simulator ends every watch with
# 410 Expired after 3 s, so the new list and the new watch after 410 are exercised all along;
# the request log shows watches (fieldSelector, labelSelector, bookmarks), no polling.
source "$E2E_DIR/live-helpers.sh"
live_setup --watch-expire-seconds 3
live_jobset_fixture
LOG=$E2E_TMP/requests.log
views() { grep -c '^JobSet/train ' "$1" || true; }
# For wait_until: the count is taken on every try (an argument "$(views F)" would be taken
# once, before the wait).
views_at_least() { (( $(views "$1") >= $2 )); }
# No garbage collector in the simulator: the JobSet's Jobs and Pods go by hand.
refixture() { kc delete jobs,pods --all >/dev/null; live_jobset_fixture; }

# ---- piped ----
start=$(wc -l <"$LOG")
kubectl wmap describe jobset/train -w >"$E2E_TMP/w.out" 2>"$E2E_TMP/w.err" &
wpid=$!
E2E_PIDS+=("$wpid")
wait_until 30 grep -q '^TOTAL' "$E2E_TMP/w.out" || fail "no first view: $(cat "$E2E_TMP/w.err")"
assert_eq 1 "$(views "$E2E_TMP/w.out")"
assert_contains "$(cat "$E2E_TMP/w.out")" "train-workers-1-1-f4j8t   Pending (Unschedulable)"

# The unschedulable pod is scheduled and becomes ready: one new view, after a blank line.
live_status train-workers-1-1-f4j8t Running True
wait_until 30 views_at_least "$E2E_TMP/w.out" 2 || fail "no second view after the pod became ready: $(cat "$E2E_TMP/w.err"; tail -n 20 "$E2E_TMP/requests.log")"
sleep 1
assert_eq 2 "$(views "$E2E_TMP/w.out")" "one redraw for one change"
second=$(awk '/^JobSet\/train /{n++} n==2' "$E2E_TMP/w.out")
assert_contains "$second" "train-workers-1-1-f4j8t   Running"
assert_contains "$second" "5/5 ready"
assert_eq "" "$(awk '/^JobSet\/train /{n++; if (n==2) print prev} {prev=$0}' "$E2E_TMP/w.out")" "a blank line before the new view"

# A change that does not change the view (a label on a pod), and 410 Expired every 3 s:
# the watch lists again, and nothing new is printed.
kc label pod train-driver-0-0-x7k2p touched=yes >/dev/null
sleep 4
assert_eq 2 "$(views "$E2E_TMP/w.out")" "an unchanged view is not printed again"
kill -0 "$wpid" 2>/dev/null || fail "describe -w ended early: $(cat "$E2E_TMP/w.err")"

# After relisting, changes are still seen: a pod fails.
live_status train-workers-0-0-b5n8q Failed False
wait_until 30 views_at_least "$E2E_TMP/w.out" 3 || fail "no view after the pod failed (after 410)"
assert_contains "$(awk '/^JobSet\/train /{n++} n==3' "$E2E_TMP/w.out")" "train-workers-0-0-b5n8q   Failed"

# Watches, not polling: the JobSet by name and its pods by the JobSet's label, with
# bookmarks, and a list with limit=1 for each start (and after every 410).
# The simulator ends each watch after 3 s: wait for the third list rather than race it.
lists() { tail -n +"$((start + 1))" "$LOG" | grep -c 'jobsets?fieldSelector=metadata.name%3Dtrain&limit=1' || true; }
lists_at_least() { (( $(lists) >= $1 )); }
wait_until 15 lists_at_least 3 || true
reqs=$(tail -n +"$((start + 1))" "$LOG")
assert_contains "$reqs" "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets?fieldSelector=metadata.name%3Dtrain&watch=true&allowWatchBookmarks=true"
assert_contains "$reqs" "/api/v1/namespaces/default/pods?labelSelector=jobset.sigs.k8s.io%2Fjobset-name%3Dtrain&watch=true&allowWatchBookmarks=true"
assert_contains "$reqs" "resourceVersion="
relists=$(grep -c 'jobsets?fieldSelector=metadata.name%3Dtrain&limit=1' <<<"$reqs" || true)
(( relists >= 3 )) || fail "expected a new list after each 410 (got $relists lists)"
# Between changes nothing is fetched: the object GETs are one per view (plus the first load).
gets=$(grep -c 'GET /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/train ' <<<"$reqs" || true)
(( gets <= relists + 6 )) || fail "too many GETs of the JobSet ($gets for $relists relists): polling?"

# Deleting the JobSet ends the watch with exit 0.
kc delete jobset train >/dev/null
rc=0; wait_until 30 bash -c "! kill -0 $wpid 2>/dev/null" || fail "describe -w did not end after the delete"
wait "$wpid" || rc=$?
assert_eq 0 "$rc" "exit code after the delete"
assert_contains "$(cat "$E2E_TMP/w.err")" "jobsets.jobset.x-k8s.io/train deleted"

# ---- in tmux, as a person sees it ----
refixture
TMUX_SOCK=$E2E_TMP/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
trap 'tmux -S "$TMUX_SOCK" kill-server 2>/dev/null || true; e2e_cleanup' EXIT
cat >"$E2E_TMP/run-watch.sh" <<EOS
export KUBECONFIG='$KUBECONFIG' HOME='$HOME' PATH='$PATH' TERM=xterm
kubectl wmap describe jobset/train -w "\$@"
echo "EXIT=\$?"
sleep 600
EOS
tm new-session -d -s w -x 150 -y 40 "bash $E2E_TMP/run-watch.sh"
screen() { tm capture-pane -p -t w; }
wait_until 30 bash -c "tmux -S '$TMUX_SOCK' capture-pane -p -t w | grep -q '^TOTAL'" || fail "no view in tmux: $(screen)"
assert_contains "$(screen)" "train-workers-1-1-f4j8t   Pending (Unschedulable)"
assert_eq 1 "$(screen | grep -c '^JobSet/train ')" "one view on the screen"
assert_eq 0 "$(tm display -p -t w '#{cursor_flag}')" "the cursor is hidden while watching"
live_status train-workers-1-1-f4j8t Running True
wait_until 30 bash -c "tmux -S '$TMUX_SOCK' capture-pane -p -t w | grep -q 'train-workers-1-1-f4j8t   Running'" \
    || fail "the view was not redrawn: $(screen)"
assert_eq 1 "$(screen | grep -c '^JobSet/train ')" "redrawn in place, not appended"
assert_eq 1 "$(screen | grep -c '^JobSet/train ')"
assert_not_contains "$(screen)" "Pending (Unschedulable)"
assert_eq "JobSet/train" "$(screen | head -n1 | awk '{print $1}')" "the view starts at the top"
kc delete jobset train >/dev/null
wait_until 30 bash -c "tmux -S '$TMUX_SOCK' capture-pane -p -t w | grep -q '^EXIT='" || fail "no exit in tmux: $(screen)"
assert_contains "$(screen)" "EXIT=0"
assert_eq 1 "$(tm display -p -t w '#{cursor_flag}')" "the cursor is back"
tm kill-session -t w

# Ctrl-C: exit 130, the cursor is back.
refixture
tm new-session -d -s c -x 150 -y 40 "bash $E2E_TMP/run-watch.sh"
wait_until 30 bash -c "tmux -S '$TMUX_SOCK' capture-pane -p -t c | grep -q '^TOTAL'" || fail "no view in tmux"
tm send-keys -t c C-c
wait_until 10 bash -c "tmux -S '$TMUX_SOCK' capture-pane -p -t c | grep -q '^EXIT='" || fail "Ctrl-C did not end it"
assert_contains "$(tm capture-pane -p -t c)" "EXIT=130"
assert_eq 1 "$(tm display -p -t c '#{cursor_flag}')" "the cursor is back after Ctrl-C"
tm kill-server

# --until-done: the JobSet completes, the watch ends with 0; usage errors.
kubectl wmap describe jobset/train -w --until-done >"$E2E_TMP/u.out" 2>&1 &
upid=$!
E2E_PIDS+=("$upid")
wait_until 30 grep -q '^TOTAL' "$E2E_TMP/u.out" || fail "no view with --until-done"
sim_curl PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/train/status \
    -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"status":{"conditions":[{"type":"Completed","status":"True"}]}}' >/dev/null
rc=0; wait_until 30 bash -c "! kill -0 $upid 2>/dev/null" || fail "--until-done did not end on Completed"
wait "$upid" || rc=$?
assert_eq 0 "$rc"
assert_contains "$(tail -n 20 "$E2E_TMP/u.out")" "Phase: Completed"
rc=0; kubectl wmap describe jobset/train --until-done >/dev/null 2>&1 || rc=$?
assert_eq 2 "$rc" "--until-done without -w"
rc=0; kubectl wmap describe -f "$LIVE_DATA/jobset.yaml" -w >/dev/null 2>&1 || rc=$?
assert_eq 2 "$rc" "-w with a file"
