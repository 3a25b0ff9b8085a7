/* apiVersion into group and version: the one split every caller uses. */
#include <criterion/criterion.h>
#include <string.h>

#include "wmap/apiversion.h"

static const struct {
	const char *api, *group, *version;
} rows[] = {
	{ "apps/v1", "apps", "v1" },
	{ "v1", "", "v1" },
	{ "jobset.x-k8s.io/v1alpha2", "jobset.x-k8s.io", "v1alpha2" },
	{ "", "", "" },
	{ NULL, "", "" },
	{ "/v1", "", "v1" },
	{ "a/b/c", "a", "b/c" },   /* at the first '/' */
	{ "apps/", "apps", "" },
};

Test(apiversion, splits_at_the_first_slash)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		wmap_api_version av;
		char g[64], v[64];

		wmap_api_version_split(&av, rows[i].api);
		cr_expect_eq(av.group_len, strlen(rows[i].group), "%s", rows[i].api);
		cr_expect_eq(strncmp(av.group, rows[i].group, av.group_len), 0, "%s", rows[i].api);
		cr_expect_str_eq(av.version, rows[i].version, "%s", rows[i].api);
		cr_assert_eq(wmap_api_version_parse(g, sizeof(g), v, sizeof(v), rows[i].api), 0);
		cr_expect_str_eq(g, rows[i].group, "%s", rows[i].api);
		cr_expect_str_eq(v, rows[i].version, "%s", rows[i].api);
	}
}

Test(apiversion, parts_that_do_not_fit_are_refused_whole)
{
	char g[5], v[3];

	cr_expect_eq(wmap_api_version_parse(g, sizeof(g), v, sizeof(v), "apps/v1"), 0);
	cr_expect_eq(wmap_api_version_parse(g, sizeof(g), v, sizeof(v), "batch/v1"), -1);
	cr_expect_str_eq(g, "", "never a cut group");
	cr_expect_str_eq(v, "");
	cr_expect_eq(wmap_api_version_parse(g, sizeof(g), v, sizeof(v), "apps/v1beta1"), -1);
	cr_expect_str_eq(g, "");
}
