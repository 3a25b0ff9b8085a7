# Hostile and malformed input never takes the server down: garbage bodies, bad JSON patches,
# odd paths and selectors, truncated TLS, and bursts of parallel clients.
sim_start
code() { tail -n1 <<<"$1"; }
post() { sim_curl POST "$1" -H 'Content-Type: application/json' --data-binary "$2"; }
for body in '' 'null' '[]' '"str"' '{"metadata":null}' '{"metadata":{"name":7}}' '{"kind":"Pod","metadata":{"name":"x"}}' \
            '{"metadata":{"name":"a","labels":[1,2]}}' "$(printf '{"a":%.0s' $(seq 1 70))"; do
    r=$(post /api/v1/namespaces/default/configmaps "$body")
    [[ $(code "$r") =~ ^(201|400|409|422)$ ]] || fail "body $body gave $(code "$r")"
done
run_ok kc create -f - <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: target}
Y
for p in '[{"op":"add"}]' '[{"op":"move","from":"/nope","path":"/x"}]' '[{"op":"add","path":"/metadata/labels/a~2b","value":"x"}]' \
         '[{"op":"remove","path":"/data/99"}]' '{}' '[{"op":"copy","from":"","path":"/data/self"}]' '[{"op":"replace","path":"","value":{}}]'; do
    r=$(sim_curl PATCH /api/v1/namespaces/default/configmaps/target -H 'Content-Type: application/json-patch+json' --data-binary "$p")
    [[ $(code "$r") =~ ^(200|400|422)$ ]] || fail "patch $p gave $(code "$r")"
done
for path in /api/v1/namespaces/default/configmaps/target/status /apis /apis/nope /apis/nope/v1/x '/api/v1/namespaces/a/b/c/d/e/f/g/h' \
            "/api/v1/$(printf 'x%.0s' $(seq 1 3000))" '/api/v1/pods?labelSelector=a%20in%20(' '/api/v1/pods?limit=-1' '/api/v1/pods?continue=%%%' \
            '/api/v1/pods?fieldSelector=spec.nodeName%3Dx' '/api/v1/pods?watch=true&timeoutSeconds=1'; do
    r=$(sim_curl GET "$path" 2>/dev/null || true)
    [[ $(code "$r") =~ ^(200|400|404|405|414)$ ]] || fail "GET $path gave $(code "$r")"
done
# A client that hangs up in the middle of a TLS handshake, and one that speaks plain HTTP.
head -c 100 /dev/urandom | timeout 2 bash -c "cat >/dev/tcp/127.0.0.1/$SIM_PORT" 2>/dev/null || true
curl -s --max-time 2 "http://127.0.0.1:$SIM_PORT/version" >/dev/null 2>&1 || true
# Parallel writers and readers.
for i in $(seq 1 20); do
    post /api/v1/namespaces/default/configmaps "{\"metadata\":{\"name\":\"par-$i\"}}" >/dev/null &
    sim_curl GET /api/v1/namespaces/default/configmaps >/dev/null &
done
wait_jobs=$(jobs -p | grep -v -F -x -e "${E2E_PIDS[@]}" || true)
for j in $wait_jobs; do wait "$j" || true; done
assert_eq 20 "$(kc get cm -o name | grep -c par-)" "all parallel creates stored"
kill -0 "$apiserver_sim_PID" || fail "the simulator died"
run_ok kc get ns default
