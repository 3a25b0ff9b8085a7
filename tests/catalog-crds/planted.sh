#!/bin/sh
# Proves that `make catalog-crds` can fail (tests/catalog-crds/README.md).
#
#   sh tests/catalog-crds/planted.sh PLUGIN SHARED
#
# Copies three catalog definitions to a scratch folder, plants in each an error of the kind
# the check exists for, and expects check.py to exit 1 naming each one; then a stale
# exception row, which must fail too, and a missing SHARED, which must skip and pass.
set -u
if [ $# -ne 2 ]; then
	echo "usage: sh tests/catalog-crds/planted.sh PLUGIN SHARED" >&2
	exit 2
fi
plugin=$1
shared=$2
if [ ! -d "$shared/interop/crds/frameworks" ]; then
	echo "catalog-crds-planted: skipped: $shared/interop/crds/frameworks is absent (set SHARED=DIR)"
	exit 0
fi
here=$(dirname "$0")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wmap-catalog-crds.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
check() { python3 "$here/check.py" "$plugin" "$shared" "$@"; }

# expect NAME EXIT OUT-FILE TEXT...: OUT-FILE has every TEXT and the run exited EXIT.
expect() {
	name=$1 want=$2 rc=$3 out=$4
	shift 4
	ok=1
	[ "$rc" = "$want" ] || ok=0
	for t in "$@"; do grep -qF -- "$t" "$out" || ok=0; done
	if [ $ok = 1 ]; then
		echo "ok   $name"
	else
		echo "FAIL $name (exit $rc, expected $want and: $*)"
		sed 's/^/     /' "$out"
		fail=1
	fi
}

# 1. The InferenceService bug this test was written for, put back, and a typo in the JobSet's
#    pod template path (a built-in kind's definition rides along: not checked).
mkdir "$tmp/cat"
cp catalog/serving-kserve-io-inferenceservice-v1beta1.yaml catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml \
	catalog/apps-deployment-v1.yaml "$tmp/cat/"
sed -i 's|^            priorityClassNamePath: ".spec.predictor.workerSpec.priorityClassName"|            labelsPath: ".spec.predictor.workerSpec.labels"\n&|' \
	"$tmp/cat/serving-kserve-io-inferenceservice-v1beta1.yaml"
sed -i 's|"\.spec\.replicatedJobs\[\]\.template\.spec\.template"|".spec.replicatedJobs[].template.spec.templat"|' \
	"$tmp/cat/jobset-x-k8s-io-jobset-v1alpha2.yaml"
check --catalog "$tmp/cat" >"$tmp/out1" 2>&1
expect planted-paths 1 $? "$tmp/out1" \
	'no field "labels" under .spec.predictor.workerSpec' \
	'no field "templat" under .spec.replicatedJobs[].template.spec' \
	'2 definitions with a CRD kind' '2 failing'

# 1b. Typos in expressions that are more than a path (the full expression walk): the JobSet's
#     status expressions and its scale, and an enum value Dynamo's state cannot hold.
rm -f "$tmp/cat/"*
cp catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml catalog/nvidia-com-dynamographdeployment-v1beta1.yaml "$tmp/cat/"
sed -i 's|\.status\.replicatedJobsStatus|.status.replicatedJobStatus|g; s|\.template\.spec\.parallelism|.template.spec.paralelism|' \
	"$tmp/cat/jobset-x-k8s-io-jobset-v1alpha2.yaml"
sed -i 's|^            - byPhase: failed$|            - byPhase: ready|' "$tmp/cat/nvidia-com-dynamographdeployment-v1beta1.yaml"
check --catalog "$tmp/cat" >"$tmp/out1b" 2>&1
expect planted-expressions 1 $? "$tmp/out1b" \
	'reads .status.replicatedJobStatus, which is not in the schema' \
	'reads .spec.replicatedJobs[].template.spec.paralelism, which' \
	'can never be "ready"' '2 failing'
[ "$(grep -c 'replicatedJobStatus, which' "$tmp/out1b")" = 3 ] || {
	echo "FAIL planted-expressions: want the 3 status expressions that read .status.replicatedJobStatus"
	fail=1
}
rm -f "$tmp/cat/"*
cp catalog/apps-deployment-v1.yaml "$tmp/cat/"

# 2. An exception row that matches nothing is stale: it fails.
cp "$here/exceptions.txt" "$tmp/exc"
echo 'finding | apps-deployment-v1.yaml | .spec.nothing | planted stale row' >>"$tmp/exc"
check --catalog "$tmp/cat" --exceptions "$tmp/exc" >"$tmp/out2" 2>&1
expect stale-exception 1 $? "$tmp/out2" 'stale exception' '.spec.nothing'

# 2b. On the whole catalog: a stale no-definition row fails, and so does a CRD no definition
#     covers (the TrainingRuntime row taken out).
grep -v '^no-definition | trainer.kubeflow.org_trainingruntimes.yaml' "$here/exceptions.txt" >"$tmp/exc"
echo 'no-definition | nosuch.example.com_widgets.yaml | planted stale row' >>"$tmp/exc"
check --exceptions "$tmp/exc" >"$tmp/out2b" 2>&1
expect stale-and-uncovered 1 $? "$tmp/out2b" 'stale exception' 'nosuch.example.com_widgets.yaml' \
	'trainer.kubeflow.org_trainingruntimes.yaml: no catalog definition covers this CRD'

# 3. An exception row naming the finding lets it pass, and is then used.
cp catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml "$tmp/cat/"
sed -i 's|"\.spec\.replicatedJobs\[\]\.name"|".spec.replicatedJob[].name"|' "$tmp/cat/jobset-x-k8s-io-jobset-v1alpha2.yaml"
cp "$here/exceptions.txt" "$tmp/exc"
echo 'finding | jobset-x-k8s-io-jobset-v1alpha2.yaml | no field "replicatedJob" under .spec | planted' >>"$tmp/exc"
check --catalog "$tmp/cat" --exceptions "$tmp/exc" >"$tmp/out3" 2>&1
expect excepted-finding 0 $? "$tmp/out3" '1 with excepted findings'

# 4. Without the shared folder: one skip line, exit 0.
mkdir "$tmp/empty"
python3 "$here/check.py" "$plugin" "$tmp/empty" >"$tmp/out4" 2>&1
expect skipped 0 $? "$tmp/out4" 'catalog-crds: skipped: '

exit $fail
