# kubectl wmap's cluster connection and exit codes: token, client certificate, exec credential
# plugins (v1 and v1beta1), tokenFile, KUBECONFIG merging, --context/-n, tls-server-name,
# in-cluster config; a wrong token (exit 1, kubectl's message, no secret printed), an unknown
# type (4), a type no definition covers (4), a missing object (3), a malformed kubeconfig
# (file:line, 1); the discovery cache; and cluster Karta definitions overriding the catalog.
source "$E2E_DIR/live-helpers.sh"
live_setup
kc create -f "$LIVE_DATA/jobset.yaml" >/dev/null
xc() { RC=0; "$@" >"$E2E_TMP/code.out" 2>&1 || RC=$?; OUT=$(cat "$E2E_TMP/code.out"); }

run_ok kubectl wmap describe jobset/train
assert_contains "$OUT" "JobSet/train   namespace: default"
# The discovery cache is written once and then used.
cache=$HOME/.kube/cache/wmap/discovery/127.0.0.1_$SIM_PORT/resources.json
[[ -s $cache ]] || fail "no discovery cache at $cache"
n=$(wc -l <"$E2E_TMP/requests.log")
run_ok kubectl wmap describe jobset/train
assert_eq 0 "$(tail -n +"$((n + 1))" "$E2E_TMP/requests.log" | grep -c 'GET /apis ' || true)" "cached discovery"

# Client certificate user.
run_ok kubectl wmap describe jobset/train --context sim-cert
assert_contains "$OUT" "JobSet/train"

# A wrong token: 401, kubectl's words, exit 1, and the token never printed.
sed "s/$SIM_TOKEN/wrong-token-0123456789/" "$KUBECONFIG" >"$E2E_TMP/bad-token.kc"
xc kubectl wmap describe jobset/train --kubeconfig "$E2E_TMP/bad-token.kc"
assert_eq 1 "$RC"
assert_contains "$OUT" "You must be logged in to the server (Unauthorized)"
assert_not_contains "$OUT" "wrong-token-0123456789"
xc kubectl wmap get jobsets --kubeconfig "$E2E_TMP/bad-token.kc"
assert_eq 1 "$RC"

# Exit codes.
xc kubectl wmap describe jobset/nope
assert_eq 3 "$RC"
assert_contains "$OUT" 'Error from server (NotFound): jobsets.jobset.x-k8s.io "nope" not found'
xc kubectl wmap describe frobnicators/x
assert_eq 4 "$RC"
assert_contains "$OUT" 'the server doesn'"'"'t have a resource type "frobnicators"'
xc kubectl wmap describe configmap/kube-root-ca
assert_eq 4 "$RC"
assert_contains "$OUT" "no Karta definition covers configmaps"
xc kubectl wmap describe pytorchjob/x
assert_eq 3 "$RC"
assert_contains "$OUT" "CRD is not installed"
xc kubectl wmap describe jobset
assert_eq 2 "$RC"
xc kubectl wmap describe jobset/train --request-timeout=soon
assert_eq 2 "$RC"
xc kubectl wmap patch jobset/nope --label a=b
assert_eq 3 "$RC"

# A malformed kubeconfig: file and line.
printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster: {server: "https://127.0.0.1:1"\n' >"$E2E_TMP/broken.kc"
xc kubectl wmap describe jobset/train --kubeconfig "$E2E_TMP/broken.kc"
assert_eq 1 "$RC"
assert_contains "$OUT" "$E2E_TMP/broken.kc:"
grep -qE "broken.kc:[0-9]+:[0-9]+" <<<"$OUT" || fail "no line:column in: $OUT"
printf 'apiVersion: v1\nkind: Config\nclusters: {a: b}\n' >"$E2E_TMP/shape.kc"
xc kubectl wmap describe jobset/train --kubeconfig "$E2E_TMP/shape.kc"
assert_eq 1 "$RC"
assert_contains "$OUT" "shape.kc:3:"
assert_contains "$OUT" "clusters must be a list"
xc kubectl wmap describe jobset/train --context nowhere
assert_eq 1 "$RC"
assert_contains "$OUT" 'context "nowhere" does not exist'

# KUBECONFIG with several files: the first to set a value wins, missing files are skipped.
ca=$(awk '/certificate-authority-data:/ {print $2; exit}' "$KUBECONFIG")
cat >"$E2E_TMP/first.kc" <<Y
apiVersion: v1
kind: Config
current-context: merged
contexts:
- name: merged
  context: {cluster: sim, user: sim-token, namespace: team-a}
Y
cp "$KUBECONFIG" "$E2E_TMP/second.kc"
kc create namespace team-a >/dev/null
sed 's/name: train/name: team-train/' "$LIVE_DATA/jobset.yaml" | kc create -n team-a -f - >/dev/null
KUBECONFIG="$E2E_TMP/missing.kc:$E2E_TMP/first.kc:$E2E_TMP/second.kc" run_ok kubectl wmap describe jobset/team-train
assert_contains "$OUT" "namespace: team-a" "namespace from the first file's context"
run_ok kubectl wmap describe jobset/team-train -n team-a
run_ok kubectl wmap get jobsets -A
assert_contains "$OUT" "team-train"

# Exec credential plugins (v1 and v1beta1): args, env and KUBERNETES_EXEC_INFO reach the plugin.
for api in v1 v1beta1; do
    cat >"$E2E_TMP/cred-$api.sh" <<Y
#!/bin/sh
[ "\$1" = "--flag" ] && [ "\$CRED_ENV" = "set" ] || exit 3
echo "\$KUBERNETES_EXEC_INFO" | grep -q '"kind":"ExecCredential"' || exit 4
printf '{"apiVersion":"client.authentication.k8s.io/$api","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"2099-01-01T00:00:00Z"}}' "$SIM_TOKEN"
Y
    chmod +x "$E2E_TMP/cred-$api.sh"
    cat >"$E2E_TMP/exec-$api.kc" <<Y
apiVersion: v1
kind: Config
current-context: x
clusters:
- name: c
  cluster: {server: "$SIM_URL", certificate-authority-data: $ca}
contexts:
- name: x
  context: {cluster: c, user: u}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/$api
      command: ./cred-$api.sh
      args: ["--flag"]
      env: [{name: CRED_ENV, value: set}]
      interactiveMode: Never
Y
    run_ok kubectl wmap describe jobset/train --kubeconfig "$E2E_TMP/exec-$api.kc"
    assert_contains "$OUT" "JobSet/train"
done
sed 's#command: ./cred-v1.sh#command: no-such-plugin\n      installHint: "install the no-such-plugin package"#' "$E2E_TMP/exec-v1.kc" >"$E2E_TMP/exec-missing.kc"
xc kubectl wmap describe jobset/train --kubeconfig "$E2E_TMP/exec-missing.kc"
assert_eq 1 "$RC"
assert_contains "$OUT" "install the no-such-plugin package"

# tokenFile, relative to the kubeconfig's folder; and tls-server-name (the serving
# certificate is for 127.0.0.1 and localhost).
printf '%s\n' "$SIM_TOKEN" >"$E2E_TMP/token"
sed -e "s#token: $SIM_TOKEN#tokenFile: token#" -e 's#^\(    server: .*\)$#\1\n    tls-server-name: localhost#' "$KUBECONFIG" >"$E2E_TMP/tokenfile.kc"
run_ok kubectl wmap describe jobset/train --kubeconfig "$E2E_TMP/tokenfile.kc"
sed -e 's#tls-server-name: localhost#tls-server-name: elsewhere.example#' "$E2E_TMP/tokenfile.kc" >"$E2E_TMP/badname.kc"
xc kubectl wmap describe jobset/train --kubeconfig "$E2E_TMP/badname.kc"
assert_eq 1 "$RC"
assert_contains "$OUT" "Unable to connect to the server"

# In-cluster config: no kubeconfig at all, a service account folder.
mkdir -p "$E2E_TMP/sa"
printf '%s' "$SIM_TOKEN" >"$E2E_TMP/sa/token"
cp "$SIM_PKI/ca.crt" "$E2E_TMP/sa/ca.crt"
printf 'team-a' >"$E2E_TMP/sa/namespace"
mkdir -p "$E2E_TMP/emptyhome"
(unset KUBECONFIG; HOME=$E2E_TMP/emptyhome KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$SIM_PORT \
    WMAP_SERVICEACCOUNT_DIR=$E2E_TMP/sa kubectl wmap describe jobset/team-train) >"$E2E_TMP/incluster.out" 2>&1 ||
    fail "in-cluster describe: $(cat "$E2E_TMP/incluster.out")"
assert_contains "$(cat "$E2E_TMP/incluster.out")" "namespace: team-a"
(unset KUBECONFIG; HOME=$E2E_TMP/emptyhome kubectl wmap describe jobset/train) >"$E2E_TMP/nocfg.out" 2>&1 && fail "no config succeeded"
assert_contains "$(cat "$E2E_TMP/nocfg.out")" "no cluster configuration"

# Cluster Karta definitions replace the catalog's for their kind.
run_ok kc apply -f "$REPO_ROOT/deploy/base/01-crd-kartas.run.ai.yaml"
sed 's/name: jobset-x-k8s-io-jobset-v1alpha2/name: team-jobset/' "$REPO_ROOT/catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml" |
    kc apply -f - >/dev/null || fail "cannot create the Karta"
run_ok kubectl wmap describe jobset/train
assert_contains "$OUT" "definition: team-jobset (cluster)"
assert_not_contains "$OUT" "CRD is not installed"
# Two cluster definitions for one kind: the first by name is used, with a warning.
sed 's/name: jobset-x-k8s-io-jobset-v1alpha2/name: zz-jobset/' "$REPO_ROOT/catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml" |
    kc apply -f - >/dev/null || fail "cannot create the second Karta"
run_ok kubectl wmap describe jobset/train
assert_contains "$OUT" "definition: team-jobset (cluster)"
assert_contains "$OUT" "2 cluster Karta definitions claim jobset.x-k8s.io/v1alpha2, Kind=JobSet: team-jobset, zz-jobset; using team-jobset"

# Proxies: HTTPS_PROXY is not used for a loopback server (as client-go); a kubeconfig
# proxy-url is (here a closed port, so the request fails).
HTTPS_PROXY=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 run_ok kubectl wmap get jobsets
sed 's#^\(    server: .*\)$#\1\n    proxy-url: http://127.0.0.1:9#' "$KUBECONFIG" >"$E2E_TMP/proxy.kc"
xc kubectl wmap get jobsets --kubeconfig "$E2E_TMP/proxy.kc"
assert_eq 1 "$RC"
assert_contains "$OUT" "Unable to connect to the server"

# -o json: the no-definition case as data on stdout as well.
rc=0; out=$(kubectl wmap describe configmap/x -o json 2>/dev/null) || rc=$?
assert_eq 4 "$rc"
assert_eq no_definition_for_type "$(jq -r .error <<<"$out")"
assert_eq "v1, Kind=ConfigMap" "$(jq -r .gvk <<<"$out")"
