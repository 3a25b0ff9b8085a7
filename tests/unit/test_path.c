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
	/* values only: the same values, no pointer */
	wmap_results v = {0};
	cr_assert_eq(wmap__path_values(p, obj, &v, &err), 0, "%s: %s", expr, err.message);
	cr_expect_eq(v.n, r.n, "%s: %zu values", expr, v.n);
	for (size_t i = 0; i < v.n && i < r.n; i++) {
		cr_expect_null(v.v[i].pointer, "%s value %zu has no pointer", expr, i);
		cr_expect(v.v[i].value == r.v[i].value, "%s value %zu is the same", expr, i);
	}
	wmap__results_clear(&v);
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

Test(path, picks_keyed_list_entries_as_jq_does)
{
	json_t *o = t_yaml("spec:\n  patches:\n  - {manager: kueue, jobs: [{name: node, x: 1}]}\n"
			   "  - {manager: wmap, jobs: [{name: launcher}, {name: node, x: 2}]}\n");
	const char *e = ".spec.patches[]? | select(.manager == \"wmap\") | .jobs[]? | select(.name == \"node\") | .x";
	eval_ok(e, o, 1, (const char *[]){"/spec/patches/1/jobs/1/x"});
	eval_ok(".spec.patches[] | select(.manager == \"none\") | .jobs", o, 0, NULL);
	json_decref(o);

	/* jq: `.manager` of a number is an error, even after `[]?`. */
	wmap_results r = {0};
	wmap_error err = {0};
	o = t_yaml("spec: {patches: [1]}\n");
	wmap_path *p = wmap__path_parse(".spec.patches[]? | select(.manager == \"wmap\") | .x");
	cr_assert_not_null(p);
	cr_expect_eq(wmap__path_eval(p, o, &r, &err), WMAP_EEVAL);
	cr_expect_str_eq(err.message, "Cannot index number with \"manager\"");
	wmap__results_clear(&r);
	wmap__path_free(p);
	json_decref(o);

	const char *const not_plain[] = {".a[] | select(.k != \"v\") | .b", ".a[] | select(.k == \"v\") |",
					 ".a[] | select(.k == 1)", ".a[] | select(.k == \"v\") | map(.x)",
					 ".a | select(.k == \"v\")"};
	for (size_t i = 0; i < sizeof(not_plain) / sizeof(not_plain[0]); i++) {
		wmap_path *q = wmap__path_parse(not_plain[i]);
		cr_expect_null(q, "%s is not a plain path", not_plain[i]);
		wmap__path_free(q);
	}
}

/* Locating: where an entry that is not there would go, and what makes it. */
static void locate_ok(const char *yaml, const char *pointer, const char *create_at, const char *create)
{
	const char *e = ".spec.patches[]? | select(.manager == \"wmap\") | .jobs[]? | select(.name == \"node\") | .labels";
	json_t *o = t_yaml(yaml);
	wmap_path *p = wmap__path_parse(e);
	wmap_results r = {0};
	wmap_error err = {0};
	cr_assert_not_null(p);
	cr_assert_eq(wmap__path_locate(p, o, &r, &err), 0, "%s", err.message);
	cr_assert_eq(r.n, 1, "%s: %zu results", yaml, r.n);
	cr_expect_null(r.v[0].value);
	cr_expect_str_eq(r.v[0].pointer, pointer, "%s", yaml);
	if (create_at) {
		json_t *want = json_loads(create, 0, NULL);
		char *got = json_dumps(r.v[0].create, JSON_SORT_KEYS | JSON_COMPACT);
		cr_expect_str_eq(r.v[0].create_at, create_at, "%s", yaml);
		cr_expect(json_equal(r.v[0].create, want), "%s: create is %s", yaml, got);
		free(got);
		json_decref(want);
	} else {
		cr_expect_null(r.v[0].create_at, "%s", yaml);
		cr_expect_null(r.v[0].create, "%s", yaml);
	}
	/* Evaluating (not locating) finds nothing where nothing is, as jq does. */
	wmap__results_clear(&r);
	cr_assert_eq(wmap__path_eval(p, o, &r, &err), 0);
	cr_expect_eq(r.n, create_at ? 0 : 1, "%s", yaml);
	wmap__results_clear(&r);
	wmap__path_free(p);
	json_decref(o);
}

Test(path, locates_keyed_entries_that_do_not_exist_yet)
{
	locate_ok("spec: {}\n", "/spec/patches/0/jobs/0/labels", "/spec/patches",
		  "[{\"manager\": \"wmap\", \"jobs\": [{\"name\": \"node\"}]}]");
	locate_ok("spec: {patches: null}\n", "/spec/patches/0/jobs/0/labels", "/spec/patches",
		  "[{\"manager\": \"wmap\", \"jobs\": [{\"name\": \"node\"}]}]");
	locate_ok("spec: {patches: [{manager: kueue}]}\n", "/spec/patches/1/jobs/0/labels", "/spec/patches/1",
		  "{\"manager\": \"wmap\", \"jobs\": [{\"name\": \"node\"}]}");
	locate_ok("spec: {patches: [{manager: wmap}]}\n", "/spec/patches/0/jobs/0/labels", "/spec/patches/0/jobs",
		  "[{\"name\": \"node\"}]");
	locate_ok("spec: {patches: [{manager: wmap, jobs: [{name: x}]}]}\n", "/spec/patches/0/jobs/1/labels",
		  "/spec/patches/0/jobs/1", "{\"name\": \"node\"}");
	/* The entries are there, only the map is missing: plain objects, nothing to make. */
	locate_ok("spec: {patches: [{manager: wmap, jobs: [{name: node}]}]}\n", "/spec/patches/0/jobs/0/labels",
		  NULL, NULL);
}

Test(path, results_room_made_at_once_is_bounded)
{
	wmap_results r = {0};
	cr_assert_eq(wmap__results_reserve(&r, 0), 0);
	cr_expect_eq(r.cap, 0, "no room asked, none made");
	cr_assert_eq(wmap__results_reserve(&r, 100), 0);
	cr_expect_eq(r.cap, 100);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(wmap__results_push(&r, json_integer(i), NULL), 0);
	cr_expect_eq(r.cap, 100, "the pushes needed no growth");
	cr_assert_eq(wmap__results_push(&r, json_integer(100), NULL), 0);
	cr_expect_eq(json_integer_value(r.v[100].value), 100);
	cr_assert_eq(wmap__results_reserve(&r, (size_t)-1), 0);
	cr_expect_eq(r.cap, WMAP_MAX_RESULTS, "never more room than results may be");
	cr_expect_eq(r.n, 101);
	cr_expect_eq(json_integer_value(r.v[42].value), 42, "what was pushed is kept");
	wmap__results_clear(&r);
}

/* Paths of keys and one [] read straight (path.c run_flat): what they cannot take on the way
 * (a list entry that is not an object, a map to iterate) is left to the general walk, with
 * its errors and pointers. */
Test(path, flat_paths_give_way_to_the_general_walk)
{
	json_t *o = t_yaml("spec:\n  jobs: [{t: 1}, s, {t: 2}]\n  map: {a: {t: 3}, b: null}\n"
			   "  many: [{t: 0}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {t: 10}]\n");
	eval_ok(".spec.map[].t", o, 2, (const char *[]){"/spec/map/a/t", "/spec/map/b/t"});
	eval_ok(".spec.many[].t", o, 11,
		(const char *[]){"/spec/many/0/t", "/spec/many/1/t", "/spec/many/2/t", "/spec/many/3/t",
				 "/spec/many/4/t", "/spec/many/5/t", "/spec/many/6/t", "/spec/many/7/t",
				 "/spec/many/8/t", "/spec/many/9/t", "/spec/many/10/t"});
	wmap_path *p = wmap__path_parse(".spec.jobs[].t");
	for (int values = 0; values < 2; values++) {
		wmap_results r = {0};
		wmap_error err = {0};
		int rc = values ? wmap__path_values(p, o, &r, &err) : wmap__path_eval(p, o, &r, &err);
		cr_expect_eq(rc, WMAP_EEVAL);
		cr_expect_str_eq(err.message, "Cannot index string with \"t\"");
		wmap__results_clear(&r);
	}
	wmap__path_free(p);
	json_decref(o);
}
