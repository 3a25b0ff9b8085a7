/* Root status (wmap_status_evaluate): what the definition's status matchers say of an
 * object, in upstream's fixed order, for every sample object with an expect-status header,
 * and errors rather than guesses for objects that are not workloads. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "wmap/workload.h"

Test(status, every_fixture_has_the_status_its_header_says)
{
	wmap_registry *reg;
	wmap_engine *eng;
	size_t n, checked = 0;
	char **files = t_glob("tests/fixtures/*/*.yaml", &n);

	t_catalog_engine(&reg, &eng);
	for (size_t i = 0; i < n; i++) {
		char want[256], msg[512];
		const wmap_definition *def = NULL;
		wmap_error err = {0};
		unsigned got = 0;

		if (strstr(files[i], "/bad/") || t_header(files[i], "expect-status", want, sizeof(want)))
			continue;
		json_t *obj = t_load_file(files[i], msg, sizeof(msg));
		cr_assert_not_null(obj, "%s", msg);
		if (wmap_registry_find_object(&def, reg, obj, &err) != 0) {
			json_decref(obj);
			continue;   /* test_resolve covers objects without a definition */
		}
		cr_expect_eq(wmap_status_evaluate(&got, eng, def, obj, &err), 0, "%s: %s", files[i],
			     err.message);
		cr_expect_eq(got, t_parse_statuses(want), "%s: bits %#x, want %s", files[i], got, want);
		json_decref(obj);
		checked++;
	}
	cr_expect_gt(checked, 50);
	t_free_list(files, n);
	t_catalog_engine_free(reg, eng);
}

Test(status, names_and_keys_are_upstreams)
{
	static const struct {
		wmap_status s;
		const char *name;
	} rows[] = {
		{ WMAP_STATUS_RUNNING, "Running" },   { WMAP_STATUS_FAILED, "Failed" },
		{ WMAP_STATUS_COMPLETED, "Completed" }, { WMAP_STATUS_SUSPENDED, "Suspended" },
		{ WMAP_STATUS_INITIALIZING, "Initializing" }, { WMAP_STATUS_DEGRADED, "Degraded" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		cr_expect_str_eq(wmap_status_name(rows[i].s), rows[i].name);
	for (int k = 0; k < WMAP_STATUS_COUNT; k++) {
		cr_expect_not_null(wmap_status_name(k));
		cr_expect_not_null(wmap_status_key(k));
	}
}

Test(status, a_status_of_the_wrong_type_is_an_error_or_no_match)
{
	wmap_registry *reg;
	wmap_engine *eng;
	wmap_error err = {0};
	const wmap_definition *def;
	unsigned got = 0;

	t_catalog_engine(&reg, &eng);
	def = wmap_registry_find(reg, "jobset.x-k8s.io", "v1alpha2", "JobSet", NULL);
	cr_assert_not_null(def);
	json_t *obj = t_yaml("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
			     "metadata: {name: x}\nstatus: [1, 2]\n");
	int rc = wmap_status_evaluate(&got, eng, def, obj, &err);
	/* Never a crash or a made-up phase: either an error naming the place, or no status. */
	if (rc)
		cr_expect(err.message[0] != '\0', "an error says why");
	else
		cr_expect_eq(got & (1u << WMAP_STATUS_RUNNING), 0, "a list is not a running status");
	json_decref(obj);
	t_catalog_engine_free(reg, eng);
}
