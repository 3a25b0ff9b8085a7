# Status error bodies for each failure class, checked with curl against the wire.
sim_start
status_of() { head -n1 <<<"$1" | jq -c '{kind,apiVersion,status,reason,code}'; }
expect() { # expect CODE REASON RESPONSE
    assert_eq "$1" "$(tail -n1 <<<"$3")" "HTTP code for $2"
    assert_eq "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"$2\",\"code\":$1}" "$(status_of "$3")"
}
r=$(sim_curl GET /api/v1/namespaces/default/pods/nope); expect 404 NotFound "$r"
assert_eq 'pods "nope" not found' "$(head -n1 <<<"$r" | jq -r .message)"
assert_eq '{"name":"nope","kind":"pods"}' "$(head -n1 <<<"$r" | jq -c .details)"
r=$(sim_curl POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' -d '{"metadata":{"name":"a"}}')
assert_eq 201 "$(tail -n1 <<<"$r")"
r=$(sim_curl POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' -d '{"metadata":{"name":"a"}}'); expect 409 AlreadyExists "$r"
r=$(sim_curl POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' -d '{"metadata":{"name":"Bad_Name"}}'); expect 422 Invalid "$r"
assert_contains "$(head -n1 <<<"$r" | jq -r .message)" 'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"'
r=$(sim_curl POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' -d '{"metadata":'); expect 400 BadRequest "$r"
r=$(sim_curl PATCH /api/v1/namespaces/default/configmaps/a -H 'Content-Type: application/apply-patch+yaml' -d '{}'); expect 415 UnsupportedMediaType "$r"
r=$(sim_curl PUT /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' -d '{}'); expect 405 MethodNotAllowed "$r"
r=$(sim_curl POST /api/v1/namespaces/nowhere/configmaps -H 'Content-Type: application/json' -d '{"metadata":{"name":"b"}}'); expect 404 NotFound "$r"
assert_eq 'namespaces "nowhere" not found' "$(head -n1 <<<"$r" | jq -r .message)"
r=$(curl -sS --cacert "$SIM_PKI/ca.crt" -H 'Authorization: Bearer wrong' -w '\n%{http_code}\n' "$SIM_URL/api"); expect 401 Unauthorized "$r"
# Oversized and over-deep bodies are refused without harm.
head -c 4000000 /dev/zero | tr '\0' 'x' >"$E2E_TMP/big"
r=$(sim_curl POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' --data-binary @"$E2E_TMP/big")
assert_eq 413 "$(tail -n1 <<<"$r")" "body over the cap"
printf '%*s' 100000 '' | tr ' ' '[' >"$E2E_TMP/deep"
r=$(sim_curl POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' --data-binary @"$E2E_TMP/deep"); expect 400 BadRequest "$r"
# Still serving after all that.
r=$(sim_curl GET /api/v1/namespaces/default/configmaps/a); assert_eq 200 "$(tail -n1 <<<"$r")"
