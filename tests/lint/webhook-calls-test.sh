#!/bin/sh
# The webhook direction rules of tests/lint/webhook-calls.sh fail where they must: each
# violation is planted in a copy of webhook/, and the check must name it (and pass on the
# unchanged copy). Run from the repository root: sh tests/lint/webhook-calls-test.sh
fail=0
work=$(mktemp -d "${TMPDIR:-/tmp}/wmap-webhook-calls-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# plant NAME FILE LINE EXPECTED: appends LINE to FILE in a fresh copy; the check must fail
# with EXPECTED (a fixed string) in its output.
plant() {
	rm -rf "$work/webhook"
	cp -r webhook "$work/webhook"
	[ -n "$2" ] && printf '%s\n' "$3" >>"$work/webhook/$2"
	out=$(WEBHOOK_DIR="$work/webhook" sh tests/lint/webhook-calls.sh 2>&1)
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
plant "the HTTP server calls a controller" server.c \
	'void wh_planted(void) { wh_reconcile_controller.kick(NULL, 0); }' \
	"server.c calls $work/webhook/reconcile.c (wh_reconcile_controller)"
plant "the HTTP server calls the watches" server.c \
	'void wh_planted(void) { wh_cluster_policy_file_changed(NULL); }' \
	"server.c calls $work/webhook/cluster.c (wh_cluster_policy_file_changed)"
plant "the watches start a controller" cluster.c \
	'int wh_planted(void **s, const wh_env *e, wmap_error *err) { return wh_audit_controller.start(s, e, err); }' \
	"cluster.c calls $work/webhook/audit.c (wh_audit_controller)"
plant "the watches start the leader election" cluster.c \
	'int wh_planted(wh_leader **l, const wmap_kube_config *c, wmap_error *e) { return wh_leader_start(l, c, "x", NULL, NULL, e); }' \
	"cluster.c calls $work/webhook/leader.c (wh_leader_start)"
plant "the status writer reads the watches" status.c \
	'void wh_planted(wh_cluster *cl) { wh_cluster_policy_file_changed(cl); }' \
	"status.c calls $work/webhook/cluster.c (wh_cluster_policy_file_changed)"
plant "a controller calls another controller" audit.c \
	'void wh_planted(void *r) { wh_reconcile_controller.kick(r, WH_STATE_DEFS); }' \
	"audit.c calls $work/webhook/reconcile.c (wh_reconcile_controller)"
plant "a call loop (tls.c already calls metrics.c)" metrics.c \
	'void wh_planted(void) { wh_tls_free_all(); }' \
	"the files call each other in a loop"
plant "an include of another webhook file" server.c \
	'#include "metrics.c"' \
	'#include "metrics.c"'

[ $fail = 0 ] && echo "webhook-calls-test: every rule fails on its planted violation"
exit $fail
