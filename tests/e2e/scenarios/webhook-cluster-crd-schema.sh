# The schema path check at admission follows the cluster's CRDs (issue 13, item 4). The
# webhook watches customresourcedefinitions; a CRD installed after it started is used for
# the next Karta: a Karta naming paths the Widget CRD's v2 schema lacks is admitted with a
# warning naming each path, the v1 Karta (every path in the schema) without one. Before the
# CRD exists there is nothing to check against and no warning; once it is deleted, none again.
source "$E2E_DIR/cluster-helpers.sh"

webhook_certs wmap-system wmap-webhook
WH_PORT=$(free_port)
export WH_PORT
sim_start --service-port "wmap-system/wmap-webhook=$WH_PORT"
D=$REPO_ROOT/deploy/base
run_ok kc apply -f "$D/00-namespace.yaml" -f "$D/01-crd-kartas.run.ai.yaml" -f "$D/09-validatingwebhookconfiguration.yaml"
run_ok kc patch validatingwebhookconfiguration wmap-webhook --type=json \
    -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"},
         {\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"$CA_BUNDLE\"}]"
wait_until 10 kc get kartas
cluster_webhook_start --sync-timeout 30
wait_until 20 metric_is wmap_webhook_cluster_synced 1 || fail "not synced"
wait_until 10 metric_gt 'wmap_webhook_lists_total{resource="customresourcedefinitions"}' 0 || fail "CRDs not listed"
crds0=$(wh_metric 'wmap_webhook_cluster_objects{resource="customresourcedefinitions"}')

# No Widget CRD yet: the v2 Karta goes in without a warning (nothing to check against).
run_ok kc create -f "$REPO_ROOT/tests/golden/defs/widget-paths-v2.yaml"
assert_not_contains "$OUT" "is not in the schema"
run_ok kc delete karta example-com-widget-v2

# The CRD comes after the webhook started: the watch takes it up.
run_ok kc apply -f "$REPO_ROOT/tests/golden/crds/widget-crd.yaml"
wait_until 10 metric_is 'wmap_webhook_cluster_objects{resource="customresourcedefinitions"}' $((crds0 + 1)) ||
    fail "the new CRD was not taken up"
run_ok kc create -f "$REPO_ROOT/tests/golden/defs/widget-paths-v2.yaml"
echo "$OUT"
assert_contains "$OUT" 'Warning: wmap: childComponents[0].specDefinition.podTemplateSpecPath: path ".spec.roles[].template" is not in the schema of example.com/v2 Widget: no field "roles" under .spec'
assert_contains "$OUT" "karta.run.ai/example-com-widget-v2 created"
run_ok kc create -f "$REPO_ROOT/tests/golden/defs/widget-paths.yaml"
assert_not_contains "$OUT" "Warning" "the v1 Karta matches its schema"

# The CRD deleted: no schema to check against, no warning on the next update.
run_ok kc delete crd widgets.example.com
wait_until 10 metric_is 'wmap_webhook_cluster_objects{resource="customresourcedefinitions"}' "$crds0" ||
    fail "the deletion was not taken up"
run_ok kc label karta example-com-widget-v2 touched=yes
assert_not_contains "$OUT" "is not in the schema"
