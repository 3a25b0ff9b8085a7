/* Pod-side queries (podSelector on Pod objects) and suspend/resume actions as JSON Patch. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/patch.h"
#include "wmap/pods.h"

static wmap_registry *reg;
static wmap_engine *eng;

static const wmap_definition *def_of(const char *group, const char *version, const char *kind)
{
	wmap_error err = { 0 };
	int exact;

	if (!reg) {
		cr_assert_eq(wmap_registry_new(&reg, &err), 0);
		cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0, "%s", err.message);
		cr_assert_eq(wmap_engine_new(&eng, reg, &err), 0);
	}
	const wmap_definition *d = wmap_registry_find(reg, group, version, kind, &exact);
	cr_assert_not_null(d);
	return d;
}

static void fini(void)
{
	wmap_engine_free(eng);
	wmap_registry_free(reg);
	eng = NULL;
	reg = NULL;
}

TestSuite(pods, .fini = fini);

static int matches(const wmap_definition *d, const char *comp, json_t *pod)
{
	wmap_error err = { 0 };
	int m = 9;

	cr_assert_eq(wmap_pod_matches_component(&m, eng, d, wmap_definition_component(d, comp), pod, &err),
		     0, "%s", err.message);
	return m;
}

Test(pods, type_selector_with_value_and_existence)
{
	const wmap_definition *ray = def_of("ray.io", "v1", "RayCluster");
	json_t *head = t_yaml("metadata: {labels: {ray.io/node-type: head, ray.io/cluster: demo}}");
	json_t *worker = t_yaml("metadata: {labels: {ray.io/node-type: worker, ray.io/group: gpu}}");
	char *id = NULL;
	wmap_error err = { 0 };

	cr_expect_eq(matches(ray, "head", head), 1);
	cr_expect_eq(matches(ray, "worker", head), 0);
	cr_expect_eq(matches(ray, "worker", worker), 1);
	cr_expect_eq(matches(ray, "raycluster", head), -1, "no selector: the caller decides");
	cr_expect_eq(wmap_pod_key(&id, eng, ray, wmap_definition_component(ray, "worker"), worker, 0, &err), 0);
	cr_expect_str_eq(id, "gpu");
	free(id);
	cr_expect_eq(wmap_pod_key(&id, eng, ray, wmap_definition_component(ray, "worker"), head, 0, &err),
		     WMAP_EEVAL, "no group label");
	cr_expect(strstr(err.message, "expected single query result, got 0") != NULL, "%s", err.message);
	cr_expect_eq(wmap_pod_key(&id, eng, ray, wmap_definition_component(ray, "head"), head, 0, &err), 0);
	cr_expect_null(id, "no instance selector");
	json_decref(head);
	json_decref(worker);
}

Test(pods, string_comparison_and_annotations)
{
	const wmap_definition *lws = def_of("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet");
	json_t *leader = t_yaml("metadata: {labels: {leaderworkerset.sigs.k8s.io/worker-index: \"0\", leaderworkerset.sigs.k8s.io/group-index: \"1\"}}");
	json_t *worker = t_yaml("metadata: {labels: {leaderworkerset.sigs.k8s.io/worker-index: \"2\"}, annotations: {leaderworkerset.sigs.k8s.io/leader-name: s-0}}");
	char *key = NULL;
	wmap_error err = { 0 };

	cr_expect_eq(matches(lws, "leader", leader), 1);
	cr_expect_eq(matches(lws, "leader", worker), 0);
	cr_expect_eq(matches(lws, "worker", worker), 1);
	cr_expect_eq(matches(lws, "worker", leader), 0);
	cr_expect_eq(wmap_pod_key(&key, eng, lws, wmap_definition_component(lws, "group"), leader, 1, &err), 0,
		     "%s", err.message);
	cr_expect_str_eq(key, "1", "replica key");
	free(key);
	json_decref(leader);
	json_decref(worker);
}

Test(pods, suspend_and_resume_actions)
{
	const wmap_definition *js = def_of("jobset.x-k8s.io", "v1alpha2", "JobSet");
	json_t *obj = t_yaml("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: a}\nspec: {replicatedJobs: []}");
	json_t *ops = NULL;
	wmap_error err = { 0 };

	cr_assert_eq(wmap_actions_patch(&ops, eng, js, obj, 0, &err), 0, "%s", err.message);
	cr_expect_eq(json_array_size(ops), 1);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(ops, 0), "path")), "/spec/suspend");
	cr_expect(json_is_true(json_object_get(json_array_get(ops, 0), "value")));
	cr_assert_eq(wmap_patch_apply(&obj, ops, &err), 0, "%s", err.message);
	json_decref(ops);
	/* Suspended already: nothing to do. */
	cr_assert_eq(wmap_actions_patch(&ops, eng, js, obj, 0, &err), 0);
	cr_expect_eq(json_array_size(ops), 0);
	json_decref(ops);
	cr_assert_eq(wmap_actions_patch(&ops, eng, js, obj, 1, &err), 0);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(ops, 0), "path")), "/spec/suspend");
	cr_expect(json_is_false(json_object_get(json_array_get(ops, 0), "value")));
	json_decref(ops);
	json_decref(obj);
}

Test(pods, definitions_without_actions)
{
	const wmap_definition *lws = def_of("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet");
	json_t *obj = t_yaml("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: a}");
	json_t *ops = NULL;
	wmap_error err = { 0 };

	cr_expect_eq(wmap_actions_patch(&ops, eng, lws, obj, 0, &err), WMAP_ENOTFOUND);
	cr_expect_null(ops);
	json_decref(obj);
}
