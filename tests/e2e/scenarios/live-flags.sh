# kubectl's connection flags on kubectl wmap (kubectl-wmap/LIVE.md, "Connecting"): --server
# and --token with no kubeconfig at all; a wrong --token (kubectl's words, exit 1, never
# printed); --insecure-skip-tls-verify, alone and with --certificate-authority (refused, as
# kubectl refuses it); --client-certificate/--client-key; flags over the kubeconfig's values
# (--token, --server, --tls-server-name, --insecure-skip-tls-verify over its CA); --as,
# --as-group, --as-uid as Impersonate-* headers, which the simulator logs and authorizes as
# the impersonated user; bad values (exit 1, the file or the URL named). Where kubectl 1.32
# behaves the same, it is run next to the plugin.
source "$E2E_DIR/live-helpers.sh"
live_setup
kc create -f "$LIVE_DATA/jobset.yaml" >/dev/null
xc() { RC=0; "$@" >"$E2E_TMP/code.out" 2>&1 || RC=$?; OUT=$(cat "$E2E_TMP/code.out"); }
log_lines() { wc -l <"$E2E_TMP/requests.log"; }
log_since() { tail -n +"$(($1 + 1))" "$E2E_TMP/requests.log"; }
KC=$KUBECONFIG
CA=$SIM_PKI/ca.crt
BAD=wrong-token-0123456789

# ---- No kubeconfig at all: KUBECONFIG names a missing file and HOME has no ~/.kube/config.
export KUBECONFIG=$E2E_TMP/none.kc
[[ ! -e $HOME/.kube/config ]] || fail "HOME has a kubeconfig"
run_ok kubectl wmap describe jobset/train --server "$SIM_URL" --token "$SIM_TOKEN" --certificate-authority "$CA"
assert_contains "$OUT" "JobSet/train   namespace: default"
run_ok kubectl wmap get jobsets -s "$SIM_URL" --token="$SIM_TOKEN" --certificate-authority="$CA"
assert_contains "$OUT" "train"
# host:port without a scheme is https when TLS settings are given (client-go's DefaultServerURL).
run_ok kubectl wmap get jobsets -s "127.0.0.1:$SIM_PORT" --token "$SIM_TOKEN" --certificate-authority "$CA"
run_ok kubectl get jobsets --server "$SIM_URL" --token "$SIM_TOKEN" --certificate-authority "$CA" -o name
assert_eq "jobset.jobset.x-k8s.io/train" "$OUT" "kubectl on the same flags"

# A wrong --token: 401 in kubectl's words, exit 1, the token nowhere in the output.
xc kubectl wmap describe jobset/train --server "$SIM_URL" --token "$BAD" --certificate-authority "$CA"
assert_eq 1 "$RC"
assert_contains "$OUT" "error: You must be logged in to the server (Unauthorized)"
assert_not_contains "$OUT" "$BAD"
xc kubectl get jobsets --server "$SIM_URL" --token "$BAD" --certificate-authority "$CA"
assert_eq 1 "$RC"
assert_contains "$OUT" "error: You must be logged in to the server (Unauthorized)" "kubectl's message"

# Without a CA the simulator's certificate is not trusted; --insecure-skip-tls-verify skips the check.
xc kubectl wmap get jobsets --server "$SIM_URL" --token "$SIM_TOKEN"
assert_eq 1 "$RC"
assert_contains "$OUT" "Unable to connect to the server"
run_ok kubectl wmap get jobsets --server "$SIM_URL" --token "$SIM_TOKEN" --insecure-skip-tls-verify
assert_contains "$OUT" "train"
# Both: refused before anything is sent, with kubectl's message.
n=$(log_lines)
xc kubectl wmap get jobsets --server "$SIM_URL" --token "$SIM_TOKEN" --insecure-skip-tls-verify --certificate-authority "$CA"
assert_eq 1 "$RC"
assert_contains "$OUT" "error: specifying a root certificates file with the insecure flag is not allowed"
assert_eq "$n" "$(log_lines)" "no request was sent"
xc kubectl get jobsets --server "$SIM_URL" --token "$SIM_TOKEN" --insecure-skip-tls-verify --certificate-authority "$CA"
assert_eq 1 "$RC"
assert_contains "$OUT" "error: specifying a root certificates file with the insecure flag is not allowed" "kubectl's message"
# --insecure-skip-tls-verify=false is the same as not giving it.
run_ok kubectl wmap get jobsets --server "$SIM_URL" --token "$SIM_TOKEN" --certificate-authority "$CA" --insecure-skip-tls-verify=false

# The simulator's client certificate (the sim-cert user: CN=sim-cert-user, O=system:masters).
run_ok kubectl wmap describe jobset/train --server "$SIM_URL" --certificate-authority "$CA" \
    --client-certificate "$SIM_PKI/client.crt" --client-key "$SIM_PKI/client.key"
assert_contains "$OUT" "JobSet/train"

# Bad values: exit 1, the file or the URL named; no request sent.
n=$(log_lines)
xc kubectl wmap get jobsets --server "$SIM_URL" --certificate-authority "$CA" \
    --client-certificate "$SIM_PKI/client.crt" --client-key "$E2E_TMP/missing.key"
assert_eq 1 "$RC"
assert_contains "$OUT" "error: unable to read client-key $E2E_TMP/missing.key: No such file or directory"
xc kubectl wmap get jobsets --server "$SIM_URL" --certificate-authority "$CA" \
    --client-certificate "$SIM_PKI/client.crt" --client-key "$SIM_PKI/client.crt"
assert_eq 1 "$RC"
assert_contains "$OUT" "error: client-key $SIM_PKI/client.crt holds no PEM private key"
mkdir -p "$E2E_TMP/a-directory.key"
xc kubectl wmap get jobsets --server "$SIM_URL" --certificate-authority "$CA" \
    --client-certificate "$SIM_PKI/client.crt" --client-key "$E2E_TMP/a-directory.key"
assert_eq 1 "$RC"
assert_contains "$OUT" "error: unable to read client-key $E2E_TMP/a-directory.key"
xc kubectl wmap get jobsets --server "$SIM_URL" --certificate-authority "$CA" --client-certificate "$SIM_PKI/client.crt"
assert_eq 1 "$RC"
assert_contains "$OUT" "error: --client-certificate needs --client-key"
xc kubectl wmap get jobsets --server "$SIM_URL" --token "$SIM_TOKEN" --certificate-authority "$E2E_TMP/nope.crt"
assert_eq 1 "$RC"
assert_contains "$OUT" "error: unable to read certificate-authority $E2E_TMP/nope.crt"
xc kubectl wmap get jobsets --server "ftp://127.0.0.1:$SIM_PORT" --token "$SIM_TOKEN"
assert_eq 1 "$RC"
assert_contains "$OUT" "error: invalid --server \"ftp://127.0.0.1:$SIM_PORT\": unsupported scheme \"ftp\""
xc kubectl wmap get jobsets --server "https://" --token "$SIM_TOKEN"
assert_eq 1 "$RC"
assert_contains "$OUT" "host must be a URL or a host:port pair"
xc kubectl wmap get jobsets --server "https://127.0.0.1:99999" --token "$SIM_TOKEN"
assert_eq 1 "$RC"
assert_contains "$OUT" "invalid port \"99999\""
xc kubectl wmap get jobsets --server "$SIM_URL" --token "$SIM_TOKEN" --certificate-authority "$CA" --as-group ml
assert_eq 1 "$RC"
assert_contains "$OUT" "--as-uid and --as-group need --as"
assert_eq "$n" "$(log_lines)" "no request was sent for bad values"
xc kubectl wmap get jobsets --server
assert_eq 2 "$RC" "a flag without its value is a usage error"

# ---- With the kubeconfig: the flags win over its values.
export KUBECONFIG=$KC
xc kubectl wmap get jobsets --token "$BAD"
assert_eq 1 "$RC"
assert_contains "$OUT" "You must be logged in to the server (Unauthorized)"
assert_not_contains "$OUT" "$BAD"
# The viewer's context with the admin's --token: the write is the admin's.
run_ok kubectl wmap patch jobset/train --label flags=token --context sim-viewer --token "$SIM_TOKEN"
assert_eq "token" "$(jp '{.spec.replicatedJobs[0].template.spec.template.metadata.labels.flags}' jobset train)"
# --insecure-skip-tls-verify replaces the kubeconfig's CA data (no conflict), as in kubectl.
run_ok kubectl wmap get jobsets --insecure-skip-tls-verify
run_ok kubectl get jobsets --insecure-skip-tls-verify -o name
# --server keeps the cluster's CA and the user's token (localhost is in the serving certificate).
run_ok kubectl wmap get jobsets --server "https://localhost:$SIM_PORT"
assert_contains "$OUT" "train"
run_ok kubectl wmap get jobsets --tls-server-name localhost
xc kubectl wmap get jobsets --tls-server-name elsewhere.example
assert_eq 1 "$RC"
assert_contains "$OUT" "Unable to connect to the server"
# --client-certificate/--client-key replace the sim-cert user's *-data (newer client-go; kubectl
# 1.32 still calls that a conflict).
run_ok kubectl wmap get jobsets --context sim-cert --client-certificate "$SIM_PKI/client.crt" --client-key "$SIM_PKI/client.key"

# ---- Impersonation: every request carries Impersonate-User, -Group (each) and -Uid; the
# simulator's log shows whom a request acted as.
n=$(log_lines)
run_ok kubectl wmap describe jobset/train --as jane --as-group ml --as-group ops --as-uid 1234
assert_contains "$OUT" "JobSet/train"
total=$(log_since "$n" | grep -c ' GET ' || true)
as=$(log_since "$n" | grep -cE ' GET .* [0-9]+ [0-9.]+ms as=jane groups=ml,ops,system:authenticated uid=1234$' || true)
((total > 0)) || fail "no request logged"
assert_eq "$total" "$as" "every request impersonates jane: $(log_since "$n")"
# kubectl sends the same headers.
n=$(log_lines)
run_ok kubectl get jobset train --as jane --as-group ml --as-group ops --as-uid 1234 -o name
log_since "$n" | grep -q ' GET /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/train .* as=jane groups=ml,ops,system:authenticated uid=1234$' ||
    fail "kubectl's request not impersonated: $(log_since "$n")"
# Without --as nothing is impersonated.
n=$(log_lines)
run_ok kubectl wmap get jobsets
assert_eq 0 "$(log_since "$n" | grep -c ' as=' || true)" "no impersonation without --as"
# Acting as the read-only viewer: reads work, writes get RBAC's 403 naming the impersonated user.
run_ok kubectl wmap get jobsets --as sim-viewer
xc kubectl wmap patch jobset/train --label flags=viewer --as sim-viewer
assert_eq 1 "$RC"
assert_contains "$OUT" 'jobsets.jobset.x-k8s.io "train" is forbidden: User "sim-viewer" cannot patch resource "jobsets" in API group "jobset.x-k8s.io" in the namespace "default"'
xc kubectl wmap patch jobset/train --label flags=viewer --as someone --as-group sim:viewers
assert_eq 1 "$RC"
assert_contains "$OUT" 'User "someone" cannot patch resource "jobsets"'
assert_eq "token" "$(jp '{.spec.replicatedJobs[0].template.spec.template.metadata.labels.flags}' jobset train)" "nothing written"
# The viewer may not impersonate anyone.
xc kubectl wmap get jobsets --context sim-viewer --as jane
assert_eq 1 "$RC"
assert_contains "$OUT" 'users "jane" is forbidden: User "sim-viewer" cannot impersonate resource "users" in API group "" at the cluster scope'
