/* Native evaluation of plain jq paths, with the location of every result. */
#include <criterion/criterion.h>
#include <string.h>

#include "../../src/eval.h"
#include "helpers.h"

static void eval_ok(const char *expr, json_t *obj, size_t n, const char *const *pointers)
{
	wmap_path *p = wmap__path_parse(expr);
	wmap_results r = {0};
	wmap_error err = {0};
	cr_assert_not_null(p, "%s should be a plain path", expr);
	cr_assert_eq(wmap__path_eval(p, obj, &r, &err), 0, "%s: %s", expr, err.message);
	cr_expect_eq(r.n, n, "%s: %zu results", expr, r.n);
	for (size_t i = 0; i < r.n && i < n; i++)
		cr_expect_str_eq(r.v[i].pointer, pointers[i], "%s result %zu", expr, i);
	wmap__results_clear(&r);
	wmap__path_free(p);
}

Test(path, evaluates_paths_with_their_pointers)
{
	json_t *o = t_yaml("spec:\n  jobs:\n  - name: a\n    t: {x: 1}\n  - name: b\n    t: {x: 2}\n"
			   "metadata:\n  labels: {\"app/name\": x, \"a~b\": y}\n");
	eval_ok(".", o, 1, (const char *[]){""});
	eval_ok(".spec.jobs[].t", o, 2, (const char *[]){"/spec/jobs/0/t", "/spec/jobs/1/t"});
	eval_ok(".spec.jobs[1].name", o, 1, (const char *[]){"/spec/jobs/1/name"});
	eval_ok(".spec.jobs[-1].name", o, 1, (const char *[]){"/spec/jobs/1/name"});
	eval_ok(".metadata.labels[\"app/name\"]", o, 1, (const char *[]){"/metadata/labels/app~1name"});
	eval_ok(".metadata.labels.\"a~b\"", o, 1, (const char *[]){"/metadata/labels/a~0b"});
	eval_ok(".missing.deeper", o, 1, (const char *[]){"/missing/deeper"});
	eval_ok(".missing[]?", o, 0, NULL);
	eval_ok(".spec.jobs[].name[]?", o, 0, NULL);
	json_decref(o);
}

Test(path, reports_what_jq_reports)
{
	json_t *o = t_yaml("spec: {jobs: \"text\"}\n");
	wmap_results r = {0};
	wmap_error err = {0};
	wmap_path *p = wmap__path_parse(".spec.jobs[]");
	cr_assert_eq(wmap__path_eval(p, o, &r, &err), WMAP_EEVAL);
	cr_expect_str_eq(err.message, "Cannot iterate over string");
	wmap__path_free(p);
	p = wmap__path_parse(".spec.other[]");
	cr_assert_eq(wmap__path_eval(p, o, &r, &err), WMAP_EEVAL);
	cr_expect_str_eq(err.message, "Cannot iterate over null");
	wmap__path_free(p);
	p = wmap__path_parse(".spec.jobs.x");
	cr_assert_eq(wmap__path_eval(p, o, &r, &err), WMAP_EEVAL);
	cr_expect_str_eq(err.message, "Cannot index string with \"x\"");
	wmap__path_free(p);
	wmap__results_clear(&r);
	json_decref(o);
}

Test(path, leaves_real_expressions_to_jq)
{
	const char *const jq[] = {".a // 1", ".a | .b", "select(.a)", ".a[] | .b", "..", ".a.b == 1",
				  "[.a]", "{a: .b}", ".a[1:2]", "$x", ".a as $x | $x"};
	for (size_t i = 0; i < sizeof(jq) / sizeof(jq[0]); i++) {
		wmap_path *p = wmap__path_parse(jq[i]);
		cr_expect_null(p, "%s is not a plain path", jq[i]);
		wmap__path_free(p);
	}
}

Test(path, reads_literals_without_jq)
{
	json_t *o = json_object();
	wmap_results r = {0};
	wmap_path *p = wmap__path_parse("1");
	cr_assert_not_null(p);
	cr_assert_eq(wmap__path_eval(p, o, &r, NULL), 0);
	cr_expect_eq(json_integer_value(r.v[0].value), 1);
	cr_expect_null(r.v[0].pointer);
	wmap__results_clear(&r);
	wmap__path_free(p);
	json_decref(o);
}

Test(path, escapes_and_reads_pointers)
{
	char *p = wmap_pointer_join("/metadata/labels", "wmap.io/a~b");
	cr_expect_str_eq(p, "/metadata/labels/wmap.io~1a~0b");
	json_t *o = t_yaml("metadata:\n  labels:\n    \"wmap.io/a~b\": v\n");
	cr_expect_str_eq(json_string_value(wmap_pointer_lookup(o, p)), "v");
	char path[256];
	wmap_pointer_to_path(path, sizeof(path), "/spec/jobs/1/resources/limits/nvidia.com~1gpu");
	cr_expect_str_eq(path, ".spec.jobs[1].resources.limits[\"nvidia.com/gpu\"]");
	free(p);
	json_decref(o);
}
