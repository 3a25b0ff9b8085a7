# shellcheck shell=bash
# End-to-end helpers: sourced by every scenario (tests/e2e/scenarios/*.sh), which run.sh starts
# in its own bash process. Everything listens on 127.0.0.1 only and is stopped by the EXIT trap,
# also when an assertion fails half-way.
#
#   e2e_init                      temp dir, isolated HOME (kubectl's discovery cache), cleanup trap
#   start_bg NAME READY SECS CMD...  start CMD in the background, wait until READY (a file path,
#                                 or a shell condition prefixed with "cmd:") holds; logs in $E2E_TMP/NAME.log
#   wait_until SECS CONDITION...  poll a command until it succeeds
#   sim_start [ARGS...]           start apiserver-sim; sets SIM_PORT SIM_URL SIM_TOKEN SIM_PKI KUBECONFIG
#   webhook_certs NS NAME         CA + serving cert for NAME.NS.svc in $E2E_TMP/certs/NAME.NS/
#   testhook_start NS NAME        start sim-testhook with those certs; sets HOOK_PORT HOOK_CA_BUNDLE
#   mutating_webhook NAME PATH POLICY TIMEOUT RESOURCE GROUP VERSION [SVC_NS SVC_NAME]
#                                 print a MutatingWebhookConfiguration pointing at the test hook
#   plugin_on_path                put the kubectl-wmap plugin ($PLUGIN) on PATH if it was built
#   kc ARGS...                    kubectl with a request timeout
#   jp JSONPATH ARGS...           kubectl get ARGS -o jsonpath=JSONPATH
#   sim_curl METHOD PATH [ARGS]   authenticated curl to the simulator; body, then the code
#   run_ok CMD / assert_fails CMD run a command expecting success / failure; output in $OUT
#   assert_eq / assert_contains / assert_not_contains / fail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$E2E_DIR/../.." && pwd)
: "${SIM:=$REPO_ROOT/build/apiserver-sim}"
: "${SIM_TESTHOOK:=$REPO_ROOT/build/sim-testhook}"
: "${PLUGIN:=$REPO_ROOT/build/kubectl-wmap}"
: "${KUBECTL:=kubectl}"

E2E_PIDS=()

e2e_cleanup() {
    local i pid
    # Stop in reverse start order, each by its own pid.
    for ((i = ${#E2E_PIDS[@]} - 1; i >= 0; i--)); do
        pid=${E2E_PIDS[i]}
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${E2E_PIDS[@]}"; do
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    E2E_PIDS=()
    if [[ -n "${E2E_TMP:-}" && -d "$E2E_TMP" && -z "${E2E_KEEP:-}" ]]; then
        rm -rf "$E2E_TMP"
    fi
}

e2e_init() {
    E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/wmap-e2e.XXXXXX")
    export E2E_TMP
    mkdir -p "$E2E_TMP/home"
    # kubectl caches discovery under $HOME/.kube/cache; a fresh HOME keeps scenarios apart.
    export HOME=$E2E_TMP/home
    unset KUBECONFIG
    trap e2e_cleanup EXIT
    trap 'exit 143' TERM INT
}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# assert_eq EXPECTED ACTUAL [WHAT]
assert_eq() {
    if [[ "$1" != "$2" ]]; then
        printf 'assertion failed: %s\n  expected: %q\n  got:      %q\n' "${3:-values differ}" "$1" "$2" >&2
        exit 1
    fi
}

# assert_contains HAYSTACK NEEDLE [WHAT]
assert_contains() {
    if [[ "$1" != *"$2"* ]]; then
        printf 'assertion failed: %s\n  expected to contain: %s\n  got: %s\n' "${3:-missing text}" "$2" "$1" >&2
        exit 1
    fi
}

assert_not_contains() {
    if [[ "$1" == *"$2"* ]]; then
        printf 'assertion failed: %s\n  expected NOT to contain: %s\n  got: %s\n' "${3:-unexpected text}" "$2" "$1" >&2
        exit 1
    fi
}

# assert_fails CMD...: the command must exit non-zero; its output is left in $OUT.
assert_fails() {
    if OUT=$("$@" 2>&1); then
        printf 'assertion failed: expected failure from: %s\n  got success with output: %s\n' "$*" "$OUT" >&2
        exit 1
    fi
}

# run_ok CMD...: the command must succeed; its output is left in $OUT.
run_ok() {
    if ! OUT=$("$@" 2>&1); then
        printf 'command failed: %s\n  output: %s\n' "$*" "$OUT" >&2
        exit 1
    fi
}

kc() {
    "$KUBECTL" --request-timeout=60s "$@"
}

wait_until() {
    local secs=$1
    shift
    local deadline=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}

# start_bg NAME READY SECS CMD...: READY is a file that appears when the process is ready, or
# "cmd:SHELL-CONDITION". Fails (with the process log) if it dies or is not ready in time.
start_bg() {
    local name=$1 ready=$2 secs=$3
    shift 3
    local log=$E2E_TMP/$name.log
    "$@" >"$log" 2>&1 &
    local pid=$!
    E2E_PIDS+=("$pid")
    local deadline=$((SECONDS + secs))
    while :; do
        if [[ $ready == cmd:* ]]; then
            bash -c "${ready#cmd:}" >/dev/null 2>&1 && break
        elif [[ -s $ready ]]; then
            break
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "$name exited before it was ready; its log:" >&2
            cat "$log" >&2
            exit 1
        fi
        if ((SECONDS >= deadline)); then
            echo "$name not ready after ${secs}s; its log:" >&2
            cat "$log" >&2
            exit 1
        fi
        sleep 0.02
    done
    eval "${name//-/_}_PID=$pid"
}

sim_start() {
    [[ -x $SIM ]] || fail "simulator not built: $SIM"
    SIM_PKI=$E2E_TMP/pki
    mkdir -p "$SIM_PKI"
    start_bg apiserver-sim "$E2E_TMP/sim.ready" "${SIM_READY_SECS:-30}" \
        "$SIM" --port 0 --kubeconfig-out "$E2E_TMP/kubeconfig" --ready-file "$E2E_TMP/sim.ready" \
        --log "$E2E_TMP/requests.log" --pki-dir "$SIM_PKI" "$@"
    SIM_PORT=$(head -n1 "$E2E_TMP/sim.ready")
    SIM_URL=https://127.0.0.1:$SIM_PORT
    SIM_TOKEN=$(awk '/token:/ {print $2; exit}' "$E2E_TMP/kubeconfig")
    export KUBECONFIG=$E2E_TMP/kubeconfig SIM_PORT SIM_URL SIM_TOKEN SIM_PKI
}

# sim_curl METHOD PATH [CURL ARGS...]: authenticated request; prints the body, then the status
# code on its own last line.
sim_curl() {
    local method=$1 path=$2
    shift 2
    curl -sS --max-time 30 --noproxy "*" --cacert "$SIM_PKI/ca.crt" -H "Authorization: Bearer $SIM_TOKEN" \
        -X "$method" -w '\n%{http_code}\n' "$@" "$SIM_URL$path"
}

webhook_certs() {
    local ns=$1 name=$2 dir=$E2E_TMP/certs/$2.$1
    mkdir -p "$dir"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj "/CN=sim-test-ca" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$name.$ns.svc" \
        -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
    printf 'subjectAltName=DNS:%s,DNS:%s.%s,DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local\nextendedKeyUsage=serverAuth\n' \
        "$name" "$name" "$ns" "$name" "$ns" "$name" "$ns" >"$dir/ext.cnf"
    openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
        -extfile "$dir/ext.cnf" -out "$dir/tls.crt" 2>/dev/null
    CERT_DIR=$dir
    CA_BUNDLE=$(base64 -w0 <"$dir/ca.crt")
}

# testhook_start NS NAME [testhook args...]
testhook_start() {
    local ns=$1 name=$2
    shift 2
    [[ -x $SIM_TESTHOOK ]] || fail "test webhook not built: $SIM_TESTHOOK"
    webhook_certs "$ns" "$name"
    start_bg sim-testhook "$E2E_TMP/hook.ready" 10 \
        "$SIM_TESTHOOK" --port 0 --cert "$CERT_DIR/tls.crt" --key "$CERT_DIR/tls.key" \
        --ready-file "$E2E_TMP/hook.ready" --record "$E2E_TMP/hook.requests" "$@"
    HOOK_PORT=$(head -n1 "$E2E_TMP/hook.ready")
    HOOK_CA_BUNDLE=$CA_BUNDLE
    export HOOK_PORT HOOK_CA_BUNDLE
}

# mutating_webhook NAME PATH POLICY TIMEOUT RESOURCE GROUP VERSION [SERVICE_NS SERVICE_NAME]
# prints a MutatingWebhookConfiguration for the test hook.
mutating_webhook() {
    local name=$1 path=$2 policy=$3 timeout=$4 resource=$5 group=$6 version=$7
    local sns=${8:-sim-system} sname=${9:-sim-testhook}
    cat <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $name
webhooks:
- name: $name.sim.example.com
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: $policy
  timeoutSeconds: $timeout
  clientConfig:
    service: {namespace: $sns, name: $sname, path: $path, port: 443}
    caBundle: $HOOK_CA_BUNDLE
  rules:
  - {operations: ["CREATE","UPDATE"], apiGroups: ["$group"], apiVersions: ["$version"], resources: ["$resource"], scope: Namespaced}
EOF
}

plugin_on_path() {
    [[ -x $PLUGIN ]] || return 1
    mkdir -p "$E2E_TMP/bin"
    ln -sf "$PLUGIN" "$E2E_TMP/bin/kubectl-wmap"
    export PATH=$E2E_TMP/bin:$PATH
}

# jsonpath NAME-ARGS... : shorthand for kubectl get -o jsonpath
jp() {
    local expr=$1
    shift
    kc get "$@" -o "jsonpath=$expr"
}
