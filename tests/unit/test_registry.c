/* The definitions in force: the embedded catalog, files, precedence file > catalog per
 * group/version/kind, lookup by object with errors that name the field. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "wmap/registry.h"

#define JOBSET_DEF "catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml"

Test(registry, the_catalog_answers_by_group_version_kind)
{
	wmap_registry *reg = NULL;
	wmap_error err = {0};
	int exact = -1;

	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0, "%s", err.message);
	cr_expect_gt(wmap_registry_count(reg), 20);
	const wmap_definition *d = wmap_registry_find(reg, "jobset.x-k8s.io", "v1alpha2", "JobSet",
						      &exact);
	cr_assert_not_null(d);
	cr_expect_eq(exact, 1);
	cr_expect_eq(d->origin, WMAP_ORIGIN_CATALOG);
	cr_expect_eq(wmap_registry_by_name(reg, d->name), d);
	/* another version of a covered kind is read through the one there is */
	d = wmap_registry_find(reg, "jobset.x-k8s.io", "v9", "JobSet", &exact);
	cr_expect_not_null(d);
	cr_expect_eq(exact, 0);
	cr_expect_null(wmap_registry_find(reg, "example.com", "v1", "Widget", NULL));
	cr_expect_null(wmap_registry_by_name(reg, "no-such-definition"));
	wmap_registry_free(reg);
	wmap_registry_free(NULL);
}

Test(registry, one_kind_of_the_catalog)
{
	wmap_registry *reg = NULL;
	wmap_error err = {0};

	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog_kind(reg, "jobset.x-k8s.io", "JobSet", &err), 0, "%s",
		     err.message);
	cr_assert_gt(wmap_registry_count(reg), 0);
	for (size_t i = 0; i < wmap_registry_count(reg); i++)
		cr_expect_not_null(strstr(wmap_registry_get(reg, i)->name, "jobset"), "%s",
				   wmap_registry_get(reg, i)->name);
	cr_expect_null(wmap_registry_find(reg, "ray.io", "v1", "RayCluster", NULL));
	wmap_registry_free(reg);
}

Test(registry, a_file_wins_over_the_catalog)
{
	wmap_registry *reg = NULL;
	wmap_error err = {0};

	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0, "%s", err.message);
	size_t before = wmap_registry_count(reg);
	cr_assert_eq(wmap_registry_add_path(reg, JOBSET_DEF, WMAP_ORIGIN_FILE, &err), 0, "%s",
		     err.message);
	cr_expect_eq(wmap_registry_count(reg), before, "replaced, not added");
	const wmap_definition *d = wmap_registry_find(reg, "jobset.x-k8s.io", "v1alpha2", "JobSet",
						      NULL);
	cr_assert_not_null(d);
	cr_expect_eq(d->origin, WMAP_ORIGIN_FILE);
	/* the catalog added again does not take it back */
	cr_assert_eq(wmap_registry_add_catalog_kind(reg, "jobset.x-k8s.io", "JobSet", &err), 0);
	d = wmap_registry_find(reg, "jobset.x-k8s.io", "v1alpha2", "JobSet", NULL);
	cr_expect_eq(d->origin, WMAP_ORIGIN_FILE);
	wmap_registry_free(reg);
}

Test(registry, a_bad_path_adds_nothing)
{
	wmap_registry *reg = NULL;
	wmap_error err = {0};
	char dir[128];

	t_temp_dir(dir, sizeof(dir), "wmap-registry");
	t_write_file(dir, "good.yaml", "");
	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_expect_eq(wmap_registry_add_path(reg, "tests/no-such-file.yaml", WMAP_ORIGIN_FILE, &err),
		     WMAP_ENOTFOUND);
	cr_expect_not_null(strstr(err.message, "no-such-file.yaml"), "%s", err.message);
	const char *bad = t_write_file(dir, "bad.yaml", "apiVersion: run.ai/v1alpha1\nkind: Karta\n"
				       "metadata: {name: x}\nspec: {nope: 1}\n");
	wmap_error_clear(&err);
	cr_expect_lt(wmap_registry_add_path(reg, bad, WMAP_ORIGIN_FILE, &err), 0);
	cr_expect(err.message[0] != '\0');
	cr_expect_eq(wmap_registry_count(reg), 0, "nothing added");
	wmap_registry_free(reg);
	t_remove_dir(dir);
}

Test(registry, slugs_name_catalog_files)
{
	static const struct {
		const char *group, *kind, *version, *slug;
	} rows[] = {
		{ "jobset.x-k8s.io", "JobSet", "v1alpha2", "jobset-x-k8s-io-jobset-v1alpha2" },
		{ "", "Pod", "v1", "core-pod-v1" },
		{ "ray.io", "RayCluster", "v1", "ray-io-raycluster-v1" },
	};
	char buf[128];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		wmap_definition_slug(buf, sizeof(buf), rows[i].group, rows[i].kind, rows[i].version);
		cr_expect_str_eq(buf, rows[i].slug);
	}
}

Test(registry, objects_without_a_type_get_errors_naming_the_field)
{
	static const struct {
		const char *yaml;
		int rc;
		const char *says;
	} rows[] = {
		{ "kind: JobSet\n", WMAP_EINVAL, ".apiVersion" },
		{ "apiVersion: 3\nkind: JobSet\n", WMAP_EINVAL, ".apiVersion: must be a string" },
		{ "apiVersion: jobset.x-k8s.io/v1alpha2\n", WMAP_EINVAL, ".kind" },
		{ "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: [1]\n", WMAP_EINVAL, ".kind: must be a string" },
		{ "apiVersion: example.com/v1\nkind: Widget\n", WMAP_ENODEF, "Widget" },
		{ "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n", 0, NULL },
	};
	wmap_registry *reg = NULL;
	wmap_error err = {0};

	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const wmap_definition *d = NULL;
		json_t *obj = t_yaml(rows[i].yaml);

		wmap_error_clear(&err);
		cr_expect_eq(wmap_registry_find_object(&d, reg, obj, &err), rows[i].rc, "%s: %s",
			     rows[i].yaml, err.message);
		if (rows[i].says)
			cr_expect_not_null(strstr(err.message, rows[i].says), "%s: %s", rows[i].yaml,
					   err.message);
		else
			cr_expect_not_null(d);
		json_decref(obj);
	}
	wmap_registry_free(reg);
}

Test(registry, an_objects_controller_and_whether_a_definition_covers_it)
{
	wmap_registry *reg = NULL;
	wmap_error err = {0};

	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0, "%s", err.message);
	json_t *job = t_yaml("{apiVersion: batch/v1, kind: Job, metadata: {name: w-0, ownerReferences: ["
			     "{apiVersion: v1, kind: ConfigMap, name: c, uid: u1},"
			     "{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: w, uid: u2, controller: true}]}}");
	json_t *stray = t_yaml("{apiVersion: batch/v1, kind: Job, metadata: {ownerReferences: ["
			       "{apiVersion: v1, kind: ConfigMap, name: c, uid: u1, controller: false}]}}");
	json_t *foreign = t_yaml("{metadata: {ownerReferences: ["
				 "{apiVersion: example.com/v1, kind: Widget, name: x, uid: u3, controller: true}]}}");
	json_t *broken = t_yaml("{metadata: {ownerReferences: [{kind: JobSet, controller: true}]}}");

	const json_t *ref = wmap_object_controller(job);
	cr_assert_not_null(ref, "the one with controller: true, not the first");
	cr_expect_str_eq(json_string_value(json_object_get(ref, "uid")), "u2");
	cr_expect_null(wmap_object_controller(stray));
	cr_expect_null(wmap_object_controller(NULL));
	const wmap_definition *d = wmap_registry_find_controller(reg, job);
	cr_assert_not_null(d);
	cr_expect_not_null(strstr(d->name, "jobset"), "%s", d->name);
	cr_expect_null(wmap_registry_find_controller(reg, stray), "no controller");
	cr_expect_null(wmap_registry_find_controller(reg, foreign), "a kind no definition covers");
	cr_expect_null(wmap_registry_find_controller(reg, broken), "a reference without apiVersion");
	json_decref(job);
	json_decref(stray);
	json_decref(foreign);
	json_decref(broken);
	wmap_registry_free(reg);
}
