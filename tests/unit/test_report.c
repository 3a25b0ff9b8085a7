/* Policy reports (src/report.c): the documents Policy Reporter reads, one per namespace,
 * the same bytes for the same input, and a clear error naming each malformed entry. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/report.h"

static const char *WORKLOADS =
	"- workload: {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: train-b, uid: u-b}\n"
	"  pass: [labels]\n"
	"  fail:\n"
	"    - {policy: prio, actions: [Audit], message: 'component replicatedjob (instance workers): priorityClassName must be \"high\"'}\n"
	"    - {policy: prio, actions: [Deny, Audit], message: 'component replicatedjob (instance leader): priorityClassName must be \"high\"'}\n"
	"- workload: {apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: pt, uid: u-p}\n"
	"  pass: [prio, labels]\n"
	"- workload: {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: train-a, uid: u-a}\n"
	"  pass: [prio]\n"
	"  fail: [{policy: labels, actions: [Warn], message: 'component replicatedjob: label team must be present'}]\n";

static json_t *build(wmap_report_api api, const json_t *ws, const json_t *prev, long long now)
{
	json_t *rep = NULL;
	wmap_error err = { 0 };
	int rc = wmap_report_build(&rep, api, "ml", ws, prev, now, &err);
	cr_assert_eq(rc, 0, "build: %s", err.message);
	cr_assert_not_null(rep);
	return rep;
}

static char *text(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT);
	cr_assert_not_null(s);
	return s;
}

Test(report, openreports_document_with_one_result_per_workload_and_policy)
{
	json_t *ws = t_yaml(WORKLOADS);
	json_t *rep = build(WMAP_REPORT_OPENREPORTS, ws, NULL, 1700000000);
	cr_expect_str_eq(json_string_value(json_object_get(rep, "apiVersion")), "openreports.io/v1alpha1");
	cr_expect_str_eq(json_string_value(json_object_get(rep, "kind")), "Report");
	cr_expect_str_eq(json_string_value(json_object_get(rep, "source")), "wmap");
	json_t *md = json_object_get(rep, "metadata");
	cr_expect_str_eq(json_string_value(json_object_get(md, "name")), "wmap-policy");
	cr_expect_str_eq(json_string_value(json_object_get(md, "namespace")), "ml");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(md, "labels"), "app.kubernetes.io/managed-by")),
			 "wmap-webhook");
	json_t *sum = json_object_get(rep, "summary");
	cr_expect_eq(json_integer_value(json_object_get(sum, "pass")), 4);
	cr_expect_eq(json_integer_value(json_object_get(sum, "fail")), 2);
	cr_expect_eq(json_integer_value(json_object_get(sum, "warn")), 0);
	json_t *res = json_object_get(rep, "results");
	cr_assert_eq(json_array_size(res), 6);
	/* kind, name, policy order */
	static const char *const want[][3] = {
		{ "JobSet", "train-a", "labels" }, { "JobSet", "train-a", "prio" },
		{ "JobSet", "train-b", "labels" }, { "JobSet", "train-b", "prio" },
		{ "PyTorchJob", "pt", "labels" },  { "PyTorchJob", "pt", "prio" },
	};
	for (size_t i = 0; i < 6; i++) {
		json_t *r = json_array_get(res, i), *ref = json_array_get(json_object_get(r, "resources"), 0);
		cr_expect_str_eq(json_string_value(json_object_get(ref, "kind")), want[i][0], "result %zu", i);
		cr_expect_str_eq(json_string_value(json_object_get(ref, "name")), want[i][1], "result %zu", i);
		cr_expect_str_eq(json_string_value(json_object_get(ref, "namespace")), "ml");
		cr_expect_str_eq(json_string_value(json_object_get(r, "policy")), want[i][2], "result %zu", i);
		cr_expect_str_eq(json_string_value(json_object_get(r, "source")), "wmap");
		cr_expect_eq(json_integer_value(json_object_get(json_object_get(r, "timestamp"), "seconds")), 1700000000);
	}
	json_t *warn = json_array_get(res, 0);
	cr_expect_str_eq(json_string_value(json_object_get(warn, "result")), "fail");
	cr_expect_str_eq(json_string_value(json_object_get(warn, "severity")), "medium");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(warn, "properties"), "actions")), "Warn");
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(warn, "resources"), 0), "uid")), "u-a");
	json_t *pass = json_array_get(res, 1);
	cr_expect_str_eq(json_string_value(json_object_get(pass, "result")), "pass");
	cr_expect_null(json_object_get(pass, "severity"));
	cr_expect_null(json_object_get(pass, "message"));
	/* Two failures of one policy: one result, messages sorted and joined, actions merged. */
	json_t *deny = json_array_get(res, 3);
	cr_expect_str_eq(json_string_value(json_object_get(deny, "result")), "fail");
	cr_expect_str_eq(json_string_value(json_object_get(deny, "severity")), "high");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(deny, "properties"), "actions")), "Deny,Audit");
	cr_expect_str_eq(json_string_value(json_object_get(deny, "message")),
			 "component replicatedjob (instance leader): priorityClassName must be \"high\"; "
			 "component replicatedjob (instance workers): priorityClassName must be \"high\"");
	json_decref(rep);
	json_decref(ws);
}

Test(report, a_workload_that_could_not_be_evaluated_gets_error_results)
{
	json_t *ws = t_yaml("- workload: {apiVersion: v1, kind: Pod, name: a}\n"
			    "  pass: [p]\n"
			    "- workload: {apiVersion: v1, kind: Pod, name: b}\n"
			    "  pass: [q]\n"
			    "  error: [{policy: p, message: '.spec.containers: not an array'}, {policy: q, message: '.spec.containers: not an array'}]\n");
	json_t *rep = build(WMAP_REPORT_OPENREPORTS, ws, NULL, 1);
	json_t *sum = json_object_get(rep, "summary"), *res = json_object_get(rep, "results");
	cr_expect_eq(json_integer_value(json_object_get(sum, "error")), 2);
	cr_expect_eq(json_integer_value(json_object_get(sum, "pass")), 1, "b's pass list is not believed");
	cr_assert_eq(json_array_size(res), 3);
	json_t *e = json_array_get(res, 1);
	cr_expect_str_eq(json_string_value(json_object_get(e, "result")), "error");
	cr_expect_str_eq(json_string_value(json_object_get(e, "policy")), "p");
	cr_expect_str_eq(json_string_value(json_object_get(e, "message")), ".spec.containers: not an array");
	cr_expect_null(json_object_get(e, "severity"));
	json_decref(rep);
	json_decref(ws);
	ws = t_yaml("[{workload: {apiVersion: v1, kind: Pod, name: a}, error: [{policy: p}]}]");
	wmap_error err = { 0 };
	rep = NULL;
	cr_expect_eq(wmap_report_build(&rep, WMAP_REPORT_OPENREPORTS, "ml", ws, NULL, 1, &err), WMAP_EINVAL);
	cr_expect_str_eq(err.message, ".[0].error[0].message: missing");
	json_decref(ws);
}

Test(report, wgpolicyk8s_policy_report)
{
	json_t *ws = t_yaml(WORKLOADS);
	json_t *rep = build(WMAP_REPORT_WGPOLICY, ws, NULL, 5);
	cr_expect_str_eq(json_string_value(json_object_get(rep, "apiVersion")), "wgpolicyk8s.io/v1alpha2");
	cr_expect_str_eq(json_string_value(json_object_get(rep, "kind")), "PolicyReport");
	cr_expect_null(json_object_get(rep, "source"), "PolicyReport has no report-level source");
	cr_expect_eq(json_array_size(json_object_get(rep, "results")), 6);
	cr_expect_str_eq(wmap_report_plural(WMAP_REPORT_WGPOLICY), "policyreports");
	cr_expect_str_eq(wmap_report_plural(WMAP_REPORT_OPENREPORTS), "reports");
	json_decref(rep);
	json_decref(ws);
}

Test(report, same_input_in_any_order_gives_the_same_bytes)
{
	json_t *ws = t_yaml(WORKLOADS), *rev = json_array();
	for (size_t i = json_array_size(ws); i-- > 0;)
		json_array_append(rev, json_array_get(ws, i));
	json_t *a = build(WMAP_REPORT_OPENREPORTS, ws, NULL, 100);
	json_t *b = build(WMAP_REPORT_OPENREPORTS, rev, NULL, 100);
	char *ta = text(a), *tb = text(b);
	cr_expect_str_eq(ta, tb);
	free(ta);
	free(tb);
	json_decref(a);
	json_decref(b);
	json_decref(rev);
	json_decref(ws);
}

Test(report, unchanged_results_keep_their_timestamp_changed_ones_get_now)
{
	json_t *ws = t_yaml(WORKLOADS);
	json_t *first = build(WMAP_REPORT_OPENREPORTS, ws, NULL, 100);
	/* The stored report carries server fields; they do not matter. */
	json_t *stored = json_deep_copy(first);
	json_object_set_new(json_object_get(stored, "metadata"), "resourceVersion", json_string("42"));
	json_t *again = build(WMAP_REPORT_OPENREPORTS, ws, stored, 999);
	char *t1 = text(first), *t2 = text(again);
	cr_expect_str_eq(t1, t2, "an unchanged namespace gives the same report");
	cr_expect(wmap_report_same(stored, again));
	free(t1);
	free(t2);
	/* train-a fixed: its labels result turns pass with a new timestamp; the rest stay. */
	json_t *fixed = json_deep_copy(ws);
	json_t *a = json_array_get(fixed, 2);
	json_object_del(a, "fail");
	json_array_append_new(json_object_get(a, "pass"), json_string("labels"));
	json_t *next = build(WMAP_REPORT_OPENREPORTS, fixed, stored, 999);
	cr_expect_not(wmap_report_same(stored, next));
	json_t *res = json_object_get(next, "results");
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(res, 0), "result")), "pass");
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(json_array_get(res, 0), "timestamp"), "seconds")), 999);
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(json_array_get(res, 3), "timestamp"), "seconds")), 100);
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(next, "summary"), "fail")), 1);
	json_decref(next);
	json_decref(fixed);
	json_decref(again);
	json_decref(stored);
	json_decref(first);
	json_decref(ws);
}

Test(report, over_the_cap_failures_are_kept_and_the_rest_counted)
{
	json_t *ws = json_array();
	size_t n = WMAP_REPORT_MAX_RESULTS + 100;
	for (size_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "w%05zu", i);
		json_t *e = json_pack("{s:{s:s, s:s, s:s}}", "workload", "apiVersion", "v1", "kind", "Pod", "name", name);
		if (i % 500 == 499)
			json_object_set_new(e, "fail", json_pack("[{s:s, s:[s], s:s}]", "policy", "p", "actions", "Audit", "message", "m"));
		else
			json_object_set_new(e, "pass", json_pack("[s]", "p"));
		json_array_append_new(ws, e);
	}
	json_t *rep = build(WMAP_REPORT_OPENREPORTS, ws, NULL, 1);
	json_t *res = json_object_get(rep, "results");
	cr_expect_eq(json_array_size(res), WMAP_REPORT_MAX_RESULTS);
	size_t fails = 0, i;
	json_t *r;
	json_array_foreach(res, i, r) fails += strcmp(json_string_value(json_object_get(r, "result")), "fail") == 0;
	cr_expect_eq(fails, 4, "every failure is kept");
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(rep, "summary"), "pass")), (json_int_t)n - 4);
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(rep, "metadata"), "annotations"),
							   WMAP_REPORT_OMITTED_ANNOTATION)),
			 "100");
	json_decref(rep);
	json_decref(ws);
}

Test(report, malformed_entries_are_named)
{
	static const struct {
		const char *yaml, *want;
	} cases[] = {
		{ "[1]", ".[0]: not an object" },
		{ "[{pass: [p]}]", ".[0].workload: not an object" },
		{ "[{workload: {apiVersion: v1, kind: Pod}}]", ".[0].workload.name: missing" },
		{ "[{workload: {apiVersion: v1, kind: Pod, name: ''}}]", ".[0].workload.name: not a non-empty string" },
		{ "[{workload: {apiVersion: v1, kind: Pod, name: a}, pass: p}]", ".[0].pass: not an array" },
		{ "[{workload: {apiVersion: v1, kind: Pod, name: a}, pass: [3]}]", ".[0].pass[0]: not a non-empty string" },
		{ "[{workload: {apiVersion: v1, kind: Pod, name: a}}, {workload: {apiVersion: v1, kind: Pod, name: b}, fail: [{policy: p, message: m}]}]",
		  ".[1].fail[0].actions: not a non-empty array" },
		{ "[{workload: {apiVersion: v1, kind: Pod, name: a}, fail: [{policy: p, message: m, actions: [Enforce]}]}]",
		  ".[0].fail[0].actions[0]: not Deny, Warn or Audit" },
		{ "[{workload: {apiVersion: v1, kind: Pod, name: a}, fail: [{actions: [Deny], message: m}]}]",
		  ".[0].fail[0].policy: missing" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *ws = t_yaml(cases[i].yaml), *rep = (json_t *)1;
		wmap_error err = { 0 };
		int rc = wmap_report_build(&rep, WMAP_REPORT_OPENREPORTS, "ml", ws, NULL, 1, &err);
		cr_expect_eq(rc, WMAP_EINVAL, "case %zu", i);
		cr_expect_null(rep, "case %zu", i);
		cr_expect_str_eq(err.message, cases[i].want, "case %zu", i);
		json_decref(ws);
	}
	json_t *rep = NULL, *none = json_array();
	wmap_error err = { 0 };
	cr_expect_eq(wmap_report_build(&rep, WMAP_REPORT_OPENREPORTS, "", none, NULL, 1, &err), WMAP_EINVAL);
	json_decref(none);
}

Test(report, api_names)
{
	wmap_report_api api = WMAP_REPORT_WGPOLICY;
	wmap_error err = { 0 };
	cr_expect_eq(wmap_report_api_parse(&api, "openreports", &err), 0);
	cr_expect_eq(api, WMAP_REPORT_OPENREPORTS);
	cr_expect_eq(wmap_report_api_parse(&api, "wgpolicyk8s", &err), 0);
	cr_expect_eq(api, WMAP_REPORT_WGPOLICY);
	cr_expect_eq(wmap_report_api_parse(&api, "kyverno", &err), WMAP_EINVAL);
	cr_expect_str_eq(err.message, "unknown report API \"kyverno\" (openreports or wgpolicyk8s)");
}
