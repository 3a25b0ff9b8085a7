#!/bin/sh
# Golden tests of the kubectl-wmap plugin.
#
#   sh tests/golden/run.sh PLUGIN_CMD [CASE...]
#   UPDATE=1 sh tests/golden/run.sh PLUGIN_CMD     regenerate the expected files, on purpose
#
# PLUGIN_CMD is the plugin, possibly behind a wrapper ("valgrind -q ... build/kubectl-wmap"),
# as a path from the repository root. Every case tests/golden/cases/NAME.args holds one
# argument line (shell words), run from the repository root with NAME.stdin (or nothing) on
# standard input. Its stdout must equal NAME.out and its exit code NAME.code; its stderr
# must equal NAME.stderr when that file exists (UPDATE=1 writes it when stderr is not
# empty). CASE names run only those cases.
set -u

if [ $# -lt 1 ] || [ -z "$1" ]; then
	echo "usage: sh tests/golden/run.sh PLUGIN_CMD [CASE...]" >&2
	exit 2
fi
plugin=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
cd "$root" || exit 2
cases=tests/golden/cases
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wmap-golden.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# Fixed environment: messages and sorting must not depend on the caller's locale, and
# the live commands must find no cluster of the caller's (no kubeconfig, not in a pod).
LC_ALL=C
HOME=/nonexistent
export LC_ALL HOME
unset KUBECONFIG KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT

if [ $# -gt 0 ]; then
	list=""
	for c in "$@"; do list="$list $cases/$c.args"; done
else
	list=$(ls "$cases"/*.args 2>/dev/null | LC_ALL=C sort)
fi

pass=0
fail=0
for argsfile in $list; do
	name=$(basename "$argsfile" .args)
	base=$cases/$name
	if [ ! -f "$argsfile" ]; then
		echo "FAIL $name: no such case"
		fail=$((fail + 1))
		continue
	fi
	# The first line that is not a comment holds the arguments.
	args=$(grep -v '^#' "$argsfile" | head -n 1)
	input=/dev/null
	[ -f "$base.stdin" ] && input=$base.stdin
	eval "set -- $args"
	# $plugin is split on purpose: it may be a wrapper command with its own arguments.
	$plugin "$@" <"$input" >"$tmp/out" 2>"$tmp/err"
	code=$?

	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$tmp/out" "$base.out"
		echo "$code" >"$base.code"
		if [ -s "$tmp/err" ]; then cp "$tmp/err" "$base.stderr"; else rm -f "$base.stderr"; fi
		echo "updated $name (exit $code)"
		pass=$((pass + 1))
		continue
	fi

	why=""
	want=$(cat "$base.code" 2>/dev/null || echo missing)
	[ "$code" = "$want" ] || why="exit $code, want $want"
	if ! cmp -s "$tmp/out" "$base.out"; then
		why="${why:+$why; }stdout differs"
	fi
	if [ -f "$base.stderr" ] && ! cmp -s "$tmp/err" "$base.stderr"; then
		why="${why:+$why; }stderr differs"
	fi
	if [ -z "$why" ]; then
		echo "ok   $name"
		pass=$((pass + 1))
		continue
	fi
	echo "FAIL $name: $why"
	[ -f "$base.out" ] && diff -u "$base.out" "$tmp/out" | head -n 40 | sed 's/^/    /'
	if [ -f "$base.stderr" ]; then
		diff -u "$base.stderr" "$tmp/err" | head -n 20 | sed 's/^/    /'
	else
		head -n 20 "$tmp/err" | sed 's/^/    stderr: /'
	fi
	fail=$((fail + 1))
done

echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
