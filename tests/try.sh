#!/usr/bin/env bash
# `make try`: the whole add-on on this machine, no cluster needed. Starts the API server
# simulator (tests/apiserver-sim, a stand-in for a Kubernetes API server that runs no
# controllers), installs wmap into it with `kubectl wmap install`, runs wmap-webhook as a
# local process that the simulator calls through the wmap-webhook Service, and tours it: a
# Karta for a new CRD, a workload stamped at creation, a policy's warning, describe and audit.
# Then it stops everything it started (also on Ctrl-C or a failure) and leaves nothing
# running. The real kubectl is used throughout, on a kubeconfig of its own: your own
# clusters and ~/.kube are never touched.
#
#   bash tests/try.sh        (make try builds what it needs first)
#
# Environment: SIM, WEBHOOK, PLUGIN (the binaries; default build/...), KUBECTL (kubectl),
# TRY_PIDS (a file to write the pids of the started processes to, for the test).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
: "${SIM:=$REPO/build/apiserver-sim}"
: "${WEBHOOK:=$REPO/build/wmap-webhook}"
: "${PLUGIN:=$REPO/build/kubectl-wmap}"
: "${KUBECTL:=kubectl}"
export SIM PLUGIN KUBECTL

if ! command -v "$KUBECTL" >/dev/null 2>&1; then
    echo "make try drives the real kubectl, which is not on PATH; install it first:" >&2
    echo "  https://kubernetes.io/docs/tasks/tools/#kubectl" >&2
    exit 1
fi
for b in "$SIM" "$WEBHOOK" "$PLUGIN"; do
    [[ -x $b ]] || { echo "not built: $b (run make try, which builds it)" >&2; exit 1; }
done

# The harness of the end-to-end tests: start_bg, sim_start, wait_until, free_port, and the
# EXIT trap that stops every process started here and removes the temporary folder.
source "$REPO/tests/e2e/lib.sh"
source "$REPO/tests/e2e/cluster-helpers.sh" # free_port
e2e_init
bin=$E2E_TMP/bin
mkdir -p "$bin"
ln -s "$PLUGIN" "$bin/kubectl-wmap" # kubectl runs plugins found on PATH
export PATH=$bin:$PATH

step() { printf '\n==> %s\n' "$*"; }
show() { # show CMD...: print the command as one would type it, then run it
    local a line='$'
    for a in "$@"; do
        if [[ $a =~ ^[A-Za-z0-9_./:=,@+-]+$ ]]; then line+=" $a"; else line+=" '$a'"; fi
    done
    printf '%s\n' "$line"
    "$@"
}
note() { printf '    (%s)\n' "$*"; }
pids() { [[ -z ${TRY_PIDS:-} ]] || printf '%s\n' "${E2E_PIDS[@]}" >"$TRY_PIDS"; }

step "Start the API server simulator"
WH_PORT=$(free_port)
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"
pids
echo "simulator at $SIM_URL; kubectl uses $KUBECONFIG"

step "Install wmap, as in a real cluster"
printf '$ kubectl wmap install > install.yaml\n'
kubectl wmap install >"$E2E_TMP/install.yaml"
show kubectl apply -f "$E2E_TMP/install.yaml"
note "install printed the manifests with certificates made on the spot; no policy is among them"
# The simulator runs no pods: the Deployment's webhook runs here instead, with the serving
# certificate install put in the Secret, and the simulator reaches it through the Service.
kubectl -n wmap-system get secret wmap-webhook-tls -o jsonpath='{.data.tls\.crt}' | base64 -d >"$E2E_TMP/tls.crt"
kubectl -n wmap-system get secret wmap-webhook-tls -o jsonpath='{.data.tls\.key}' | base64 -d >"$E2E_TMP/tls.key"
start_bg wmap-webhook "cmd:curl -sk --noproxy '*' https://127.0.0.1:$WH_PORT/readyz | grep -qx ok" 60 \
    "$WEBHOOK" --tls-cert "$E2E_TMP/tls.crt" --tls-key "$E2E_TMP/tls.key" --port "$WH_PORT" \
    --kubeconfig "$KUBECONFIG"
pids
echo "wmap-webhook is ready (log: $E2E_TMP/wmap-webhook.log while the tour runs)"

step "A Karta for a new CRD (docs/karta-guide.md builds it step by step)"
show kubectl apply -f docs/examples/trainingrun-crd.yaml
wait_until 20 kubectl get trainingruns || { echo "the TrainingRun CRD was not served" >&2; exit 1; }
show kubectl wmap validate docs/examples/trainingrun-karta.yaml --from-cluster
show kubectl apply -f docs/examples/trainingrun-karta.yaml
ready() { [[ $(kubectl get karta ml-example-com-trainingrun-v1 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]; }
wait_until 30 ready || { echo "the Karta did not become Ready" >&2; exit 1; }
show kubectl get kartas ml-example-com-trainingrun-v1
stamping() { kubectl get mutatingwebhookconfiguration wmap-webhook -o json | grep -q '"trainingruns"'; }
wait_until 30 stamping || { echo "the webhook did not add TrainingRuns to its rules" >&2; exit 1; }
note "the webhook now stamps TrainingRuns: it added them to its MutatingWebhookConfiguration"

step "Two policies that disagree: the organisation's (Warn) and a team's"
cat >"$E2E_TMP/policies.yaml" <<'Y'
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: org-priority}
spec:
  match: {kinds: ["TrainingRun.ml.example.com"]}
  mode: override
  validationActions: [Warn]
  podTemplate: {priorityClassName: training-high}
---
apiVersion: wmap.io/v1alpha1
kind: WorkloadPolicy
metadata: {name: team-a-priority}
spec:
  match: {namespaces: [team-a]}
  mode: override
  podTemplate: {priorityClassName: team-a-low}
Y
sed 's/^/    /' "$E2E_TMP/policies.yaml"
show kubectl apply -f "$E2E_TMP/policies.yaml"
checking() { kubectl get validatingwebhookconfiguration wmap-webhook -o json | grep -q '"trainingruns"'; }
wait_until 30 checking || { echo "the webhook did not add TrainingRuns to its checks" >&2; exit 1; }
note "a policy with validationActions sends TrainingRuns to the webhook's /validate as well"

step "Create a TrainingRun: stamped by the webhook, and warned about"
show kubectl create namespace team-a
show kubectl apply -f docs/examples/trainingrun.yaml
note "the team's policy, applied after the organisation's, set team-a-low; org-priority wants training-high"
show kubectl -n team-a get trainingrun llama-ft \
    -o jsonpath='{.spec.workerGroups[0].template.metadata.labels}{"\n"}{.spec.workerGroups[0].template.spec.priorityClassName}{"\n"}'

step "describe: the workload through its Karta, live"
show kubectl wmap describe trainingrun/llama-ft -n team-a
note "no controller runs in the simulator, so no pod exists: 0 ready of each desired"

step "audit: the policies' violations in the cluster"
set +e
show kubectl wmap audit -A
rc=$?
set -e
note "exit code $rc: a Warn policy is violated (0 when none is; a CI gate)"

step "Stop"
e2e_cleanup
trap - EXIT
echo "the webhook and the simulator are stopped; nothing is left running."
echo "Next: a real cluster (README.md, Quick start, step 3); writing a Karta: docs/karta-guide.md"
