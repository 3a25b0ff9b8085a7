#!/bin/sh
# Writes one describe case per fixture object, so that a new fixture gets a golden case:
#
#   sh tests/golden/gen-cases.sh            then: UPDATE=1 sh tests/golden/run.sh build/kubectl-wmap fx-...
#
# tests/fixtures/<slug>/<state>.yaml -> cases/fx-<slug>-<state>.args (table form), and for
# the objects listed in JSON_YAML below also -json and -yaml cases. Cases of fixtures that
# no longer exist are removed. Hand-written cases have other names and are not touched.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cases=tests/golden/cases

# A few objects that also get -o json and -o yaml cases: multi-instance, virtual parent,
# pod-bearing root.
JSON_YAML="jobset-x-k8s-io-jobset-v1alpha2/leader-workers
leaderworkerset-x-k8s-io-leaderworkerset-v1/running
apps-deployment-v1/running
ray-io-raycluster-v1/running"

want=$(mktemp)
trap 'rm -f "$want"' EXIT

for f in tests/fixtures/*/*.yaml; do
	[ -f "$f" ] || continue
	rel=${f#tests/fixtures/}
	slug=${rel%%/*}
	state=$(basename "$rel" .yaml)
	name=fx-$slug-$state
	echo "describe -f $f" >"$cases/$name.args"
	echo "$name" >>"$want"
	for j in $JSON_YAML; do
		[ "$j" = "$slug/$state" ] || continue
		echo "describe -f $f -o json" >"$cases/$name-json.args"
		echo "describe -f $f -o yaml" >"$cases/$name-yaml.args"
		echo "$name-json" >>"$want"
		echo "$name-yaml" >>"$want"
	done
done

# Drop the cases of fixtures that went away.
for a in "$cases"/fx-*.args; do
	[ -f "$a" ] || continue
	n=$(basename "$a" .args)
	if ! grep -qx "$n" "$want"; then
		rm -f "$cases/$n.args" "$cases/$n.out" "$cases/$n.code" "$cases/$n.stderr"
		echo "removed $n"
	fi
done
echo "$(wc -l <"$want") fixture cases"
