#!/bin/sh
# The offline demo: `make demo` builds the plugin and runs this.
#
#   sh tests/demo.sh PLUGIN        (PLUGIN: build/kubectl-wmap, or an installed kubectl-wmap)
#
# Describes bundled sample workloads from tests/fixtures/ with no cluster: each resolved
# through its catalog definition into components, instances, replicas, GPUs and phase.
set -eu

plugin=${1:-build/kubectl-wmap}
cd "$(dirname "$0")/.."
fx=tests/fixtures

show() {
	# $1: one-line heading, $2: the sample object
	printf '\n==> %s\n$ kubectl wmap describe -f %s\n\n' "$1" "$2"
	$plugin describe -f "$2"
}

$plugin version
show "JobSet: one leader and two workers, 4 GPUs each (12 GPUs)" \
	$fx/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml
show "PyTorchJob: a master and three workers, 8 GPUs each" \
	$fx/kubeflow-org-pytorchjob-v1/running.yaml
show "LeaderWorkerSet: two groups, each a leader and three workers" \
	$fx/leaderworkerset-x-k8s-io-leaderworkerset-v1/running.yaml
show "RayCluster: a head, a GPU worker group and a CPU worker group" \
	$fx/ray-io-raycluster-v1/running.yaml
show "Deployment: the root itself describes the pods (3 replicas, 2 GPUs each)" \
	$fx/apps-deployment-v1/running.yaml
printf '\n==> The definitions built in (kubectl wmap definitions)\n\n'
$plugin definitions
printf '\nMore: kubectl wmap describe -f FILE -o json, kubectl wmap validate FILE, kubectl wmap --help\n'
