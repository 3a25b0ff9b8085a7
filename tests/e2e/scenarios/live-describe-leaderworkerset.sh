# kubectl wmap describe of a live LeaderWorkerSet: leader Pods owned by a StatefulSet owned by
# the LWS, worker Pods owned by per-group StatefulSets owned by their leader Pod (three hops
# up to the LWS), placed into leader/worker by the definition's pod selectors.
source "$E2E_DIR/live-helpers.sh"
live_setup
kc create -f "$LIVE_DATA/leaderworkerset.yaml" >/dev/null
lws_ref=$(live_ref leaderworkerset.x-k8s.io/v1 LeaderWorkerSet serve "$(live_uid lws serve)")
sts() { # NAME OWNER-REF
    jq -cn --arg n "$1" --argjson r "$2" '{apiVersion:"apps/v1", kind:"StatefulSet",
        metadata:{name:$n, ownerReferences:[$r]},
        spec:{serviceName:$n, selector:{matchLabels:{app:$n}},
              template:{metadata:{labels:{app:$n}}, spec:{containers:[{name:"c", image:"busybox"}]}}}}'
}
live_create "$(sts serve "$lws_ref")"
lbl() { # GROUP WORKER
    jq -cn --arg g "$1" --arg w "$2" '{"leaderworkerset.sigs.k8s.io/name":"serve",
        "leaderworkerset.sigs.k8s.io/group-index":$g, "leaderworkerset.sigs.k8s.io/worker-index":$w}'
}
leader_ref=$(live_ref apps/v1 StatefulSet serve "$(live_uid statefulset serve)")
live_create "$(live_pod serve-0 "$leader_ref" "$(lbl 0 0)" '{}' node-1 1)" \
    "$(live_pod serve-1 "$leader_ref" "$(lbl 1 0)" '{}' node-3 1)"
live_create "$(sts serve-0 "$(live_ref v1 Pod serve-0 "$(live_uid pod serve-0)")")" \
    "$(sts serve-1 "$(live_ref v1 Pod serve-1 "$(live_uid pod serve-1)")")"
wpod() { # NAME GROUP WORKER NODE
    live_pod "$1" "$(live_ref apps/v1 StatefulSet "serve-$2" "$(live_uid statefulset "serve-$2")")" \
        "$(lbl "$2" "$3")" "{\"leaderworkerset.sigs.k8s.io/leader-name\":\"serve-$2\"}" "$4" 1
}
live_create "$(wpod serve-0-1 0 1 node-1)" "$(wpod serve-0-2 0 2 node-2)" \
    "$(wpod serve-1-1 1 1 node-3)" "$(wpod serve-1-2 1 2 node-4)"
for p in serve-0 serve-0-1 serve-0-2 serve-1 serve-1-1; do live_status "$p" Running True; done
live_status serve-1-2 Running False
sim_curl PATCH /apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets/serve/status \
    -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"status":{"readyReplicas":1,"conditions":[{"type":"Progressing","status":"True"}]}}' >/dev/null

n=$(wc -l <"$E2E_TMP/requests.log")
kubectl wmap describe lws/serve >"$E2E_TMP/out" 2>"$E2E_TMP/err" || fail "describe failed: $(cat "$E2E_TMP/err")"
live_norm <"$E2E_TMP/out" >"$E2E_TMP/out.norm"
diff -u "$E2E_DIR/golden/live-describe-leaderworkerset.out" "$E2E_TMP/out.norm" || fail "describe output differs from the golden file"
assert_not_contains "$(cat "$E2E_TMP/err")" "103739" "declared template metadata: no pruning warning"
# Owners are fetched once each and cached: the three StatefulSets, nothing more.
assert_eq 3 "$(head -n "$(( $(wc -l <"$E2E_TMP/requests.log") ))" "$E2E_TMP/requests.log" | tail -n +"$((n + 1))" |
    grep -c 'GET /apis/apps/v1/namespaces/default/statefulsets/')"
