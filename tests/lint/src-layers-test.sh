#!/bin/sh
# The layer rules of tests/lint/src-layers.sh fail where they must: each violation is planted
# in a copy of src/ and include/, and the check must name it (and pass on the unchanged copy).
# Run from the repository root: sh tests/lint/src-layers-test.sh
fail=0
work=$(mktemp -d "${TMPDIR:-/tmp}/wmap-src-layers-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# plant NAME FILE LINE EXPECTED: appends LINE to FILE (a path under src/ or include/) in a
# fresh copy; the check must fail with EXPECTED (a fixed string) in its output.
plant() {
	rm -rf "$work/src" "$work/include"
	cp -r src include "$work/"
	[ -n "$2" ] && printf '%s\n' "$3" >>"$work/$2"
	out=$(SRC_DIR="$work/src" INCLUDE_DIR="$work/include" sh tests/lint/src-layers.sh 2>&1)
	rc=$?
	if [ -z "$2" ]; then
		[ $rc = 0 ] && echo "PASS $1" || { echo "FAIL $1: $out"; fail=1; }
	elif [ $rc != 0 ] && echo "$out" | grep -qF "$4"; then
		echo "PASS $1: $(echo "$out" | grep -F "$4" | head -1 | sed "s|$work/||g")"
	else
		echo "FAIL $1 (exit $rc, expected \"$4\"): $out"
		fail=1
	fi
}

plant "the unchanged tree passes" "" "" ""
plant "a utility includes a core header" src/util/buf.c \
	'#include "wmap/definition.h"' \
	'src/util/buf.c:'
plant "a utility includes the client" src/util/yaml.c \
	'#include "wmap/kube/client.h"' \
	'includes "wmap/kube/client.h": src/util/'
plant "a utility header includes a core header" include/wmap/pointer.h \
	'#include "wmap/registry.h"' \
	'include/wmap/pointer.h:'
plant "the core includes the client" src/resolve.c \
	'#include "wmap/kube/watch.h"' \
	'src/resolve.c:'
plant "the core includes wmap/kube.h" src/pods.c \
	'#include "wmap/kube.h"' \
	'includes "wmap/kube.h": the core never'
plant "the core includes a client internal" src/status.c \
	'#include "kube/kube_int.h"' \
	'includes "kube/kube_int.h": the core never'
plant "a core header includes the client" include/wmap/policy.h \
	'#include "wmap/kube/client.h"' \
	'include/wmap/policy.h:'
plant "the client includes a core header" src/kube/watch.c \
	'#include "wmap/registry.h"' \
	'src/kube/watch.c:'
plant "the client includes a core internal" src/kube/kube.c \
	'#include "../eval.h"' \
	'includes "../eval.h": src/kube/'
plant "a client header includes a core header" include/wmap/kube/crd.h \
	'#include "wmap/definition.h"' \
	'include/wmap/kube/crd.h:'

[ $fail = 0 ] && echo "src-layers-test: every rule fails on its planted violation"
exit $fail
