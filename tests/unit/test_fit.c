/* fit: the scheduler's filters on one Pod against small node lists (tolerations, node
 * affinity, readiness, allocatable), the snapshot fed a node and a pod at a time, and the
 * messages of a malformed snapshot. The golden cases (tests/golden/fit/) cover whole
 * workloads and gangs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "wmap/fit.h"
#include "wmap/registry.h"
#include "wmap/workload.h"

static wmap_registry *reg;
static wmap_engine *eng;

static void setup(void)
{
	t_catalog_engine(&reg, &eng);
}

static void teardown(void)
{
	t_catalog_engine_free(reg, eng);
}

/* A Pod asking for 1 GPU, with extra spec YAML (indented two spaces under spec:). */
static wmap_workload *pod_with(const char *extra)
{
	char text[4096];
	wmap_workload *w = NULL;
	wmap_error err = { 0 };
	snprintf(text, sizeof(text),
		 "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\nspec:\n"
		 "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n%s",
		 extra);
	json_t *o = t_yaml(text);
	cr_assert_eq(wmap_workload_resolve(&w, eng, o, NULL, &err), 0, "%s", err.message);
	json_decref(o);
	return w;
}

/* A Ready node with 1 GPU; extra members of spec and of metadata as JSON text. */
static json_t *node(const char *name, const char *spec, const char *labels)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"metadata\": {\"name\": \"%s\", \"labels\": {%s}}, \"spec\": {%s}, \"status\": {"
		 "\"allocatable\": {\"nvidia.com/gpu\": \"1\", \"pods\": \"10\"},"
		 "\"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}}",
		 name, labels ? labels : "", spec ? spec : "");
	json_t *n = json_loads(text, 0, NULL);
	cr_assert(n, "%s", text);
	return n;
}

/* The verdict of w on the given nodes (stolen) and no pods; *why (may be NULL) the reason. */
static char verdict_of(const wmap_workload *w, json_t *nodes, char *why, size_t len)
{
	json_t *out = NULL, *pods = json_array();
	wmap_error err = { 0 };
	cr_assert_eq(wmap_fit_evaluate(&out, w, NULL, nodes, pods, NULL, &err), 0, "%s", err.message);
	const char *v = json_string_value(json_object_get(out, "verdict"));
	if (why)
		snprintf(why, len, "%s", json_string_value(json_object_get(out, "why")));
	char c = v[0] == 'y' ? 'y' : v[2] == '?' ? '?'
						 : 'n';
	json_decref(out);
	json_decref(nodes);
	json_decref(pods);
	return c;
}

TestSuite(fit, .init = setup, .fini = teardown);

Test(fit, tolerations_as_core_v1_matches_them)
{
	static const struct {
		const char *tolerations, *want;
	} rows[] = {
		{ "", "n" },
		/* an empty effect matches every effect; Exists ignores the value */
		{ "  tolerations: [{key: k, operator: Exists}]\n", "y" },
		/* an empty key with Equal matches any key of that value */
		{ "  tolerations: [{value: v, effect: NoExecute}]\n", "y" },
		{ "  tolerations: [{key: k, value: other}]\n", "n" },
		{ "  tolerations: [{key: k, value: v, effect: NoSchedule}]\n", "n" }, /* the taint is NoExecute */
		/* the feature-gated numeric operators tolerate nothing here */
		{ "  tolerations: [{key: k, operator: Lt, value: '9'}]\n", "n" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		wmap_workload *w = pod_with(rows[i].tolerations);
		json_t *nodes = json_pack("[o]", node("n1", "\"taints\": [{\"key\": \"k\", \"value\": \"v\", "
							    "\"effect\": \"NoExecute\"}]",
						      NULL));
		char why[512];
		cr_expect_eq(verdict_of(w, nodes, why, sizeof(why)), rows[i].want[0], "row %zu: %s", i, why);
		if (rows[i].want[0] == 'n')
			cr_expect(strstr(why, "1 node(s) had untolerated taint {k: v}"), "row %zu: %s", i, why);
		wmap_workload_free(w);
	}
}

Test(fit, node_affinity_operators)
{
	static const struct {
		const char *terms, *want;
	} rows[] = {
		{ "[{matchExpressions: [{key: rack, operator: Gt, values: ['9']}]}]", "y" },  /* 10 > 9 as integers */
		{ "[{matchExpressions: [{key: rack, operator: Gt, values: ['x']}]}]", "n" },  /* not an integer */
		{ "[{matchExpressions: [{key: zone, operator: NotIn, values: [a]}]}]", "y" }, /* absent key */
		{ "[{matchExpressions: [{key: zone, operator: In, values: [a]}]}]", "n" },
		{ "[{}]", "n" }, /* a term with neither selects nothing */
		{ "[{}, {matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]", "y" },
		{ "[{matchFields: [{key: metadata.name, operator: In, values: [n1, n2]}]}]", "n" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char extra[512], why[512];
		snprintf(extra, sizeof(extra),
			 "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
			 "{nodeSelectorTerms: %s}}}\n",
			 rows[i].terms);
		wmap_workload *w = pod_with(extra);
		char c = verdict_of(w, json_pack("[o]", node("n1", NULL, "\"rack\": \"10\"")), why, sizeof(why));
		cr_expect_eq(c, rows[i].want[0], "row %zu: %s", i, why);
		wmap_workload_free(w);
	}
}

Test(fit, only_ready_nodes_and_capacity_when_no_allocatable)
{
	wmap_workload *w = pod_with("");
	json_t *down = node("n1", NULL, NULL), *cap = node("n2", NULL, NULL);
	char why[512];
	json_object_set_new(json_array_get(json_object_get(json_object_get(down, "status"), "conditions"), 0), "status",
			    json_string("Unknown"));
	cr_expect_eq(verdict_of(w, json_pack("[O]", down), why, sizeof(why)), 'n');
	cr_expect_str_eq(why, "pod: 0/1 nodes are available: 1 node(s) were not ready.");
	json_t *st = json_object_get(cap, "status");
	json_object_set(st, "capacity", json_object_get(st, "allocatable"));
	json_object_del(st, "allocatable");
	cr_expect_eq(verdict_of(w, json_pack("[o, o]", down, cap), why, sizeof(why)), 'y', "%s", why);
	wmap_workload_free(w);
}

Test(fit, snapshot_a_pod_at_a_time)
{
	wmap_workload *w = pod_with("");
	wmap_fit_snapshot *s = NULL;
	wmap_error err = { 0 };
	json_t *out = NULL, *n = node("n1", NULL, NULL);
	json_t *p = t_yaml("metadata: {uid: u1}\nspec: {nodeName: n1, containers: [{resources: {requests: "
			   "{nvidia.com/gpu: 1}}}]}\nstatus: {phase: Running}\n");
	cr_assert_eq(wmap_fit_snapshot_new(&s, w, NULL, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_fit_snapshot_add_node(s, n, &err), 0, "%s", err.message);
	cr_expect_eq(wmap_fit_snapshot_add_node(s, n, &err), WMAP_EINVAL);
	cr_expect_str_eq(err.message, "nodes: .items[1]: node \"n1\" is listed twice");
	cr_assert_eq(wmap_fit_snapshot_verdict(&out, s, &err), 0, "%s", err.message);
	cr_expect_str_eq(json_string_value(json_object_get(out, "verdict")), "yes");
	json_decref(out);
	/* the GPU is taken by a running pod: asked again, the answer changes */
	cr_assert_eq(wmap_fit_snapshot_add_pod(s, p, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_fit_snapshot_verdict(&out, s, &err), 0, "%s", err.message);
	cr_expect_str_eq(json_string_value(json_object_get(out, "why")),
			 "pod: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
	json_decref(out);
	/* a malformed quantity names the pod list, the item and the path */
	json_t *bad = t_yaml("spec: {nodeName: n1, containers: [{resources: {requests: {nvidia.com/gpu: lots}}}]}\n");
	cr_expect_eq(wmap_fit_snapshot_add_pod(s, bad, &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "pods: .items[1].spec.containers[0].resources.requests[\"nvidia.com/gpu\"]"),
		  "%s", err.message);
	json_decref(bad);
	json_decref(p);
	json_decref(n);
	wmap_fit_snapshot_free(s);
	wmap_workload_free(w);
}
