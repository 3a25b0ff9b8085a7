/* Tests of src/audit.c: structured violations (policy, component, instance, field, want,
 * have), which policies are evaluated, the object as admitted, and the failure classes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/audit.h"

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

TestSuite(audit, .init = setup, .fini = teardown);

#define JOBSET "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/created.yaml"

static json_t *load(const char *path)
{
	char msg[WMAP_ERROR_MAX];
	json_t *o = t_load_file(path, msg, sizeof(msg));
	cr_assert_not_null(o, "%s", msg);
	return o;
}


#define HEAD "apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\n"

/* One override policy per action, and one policy that only mutates. */
static const char *three =
	HEAD "metadata: {name: deny-priority}\n"
	"spec:\n"
	"  match: {kinds: [\"JobSet.jobset.x-k8s.io\"]}\n"
	"  mode: override\n"
	"  validationActions: [Deny]\n"
	"  podTemplate: {priorityClassName: high}\n"
	"---\n" HEAD "metadata: {name: warn-team}\n"
	"spec:\n"
	"  match: {components: [replicatedjob]}\n"
	"  mode: override\n"
	"  validationActions: [Warn, Audit]\n"
	"  podTemplate: {labels: {app.kubernetes.io/component: trainer}}\n"
	"---\n" HEAD "metadata: {name: audit-tolerations}\n"
	"spec:\n"
	"  validationActions: [Audit]\n"
	"  podTemplate:\n"
	"    tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
	"---\n" HEAD "metadata: {name: only-mutates}\n"
	"spec:\n"
	"  mode: override\n"
	"  podTemplate: {schedulerName: other}\n"
	"---\n" HEAD "metadata: {name: elsewhere}\n"
	"spec:\n"
	"  match: {namespaces: [prod]}\n"
	"  validationActions: [Deny]\n"
	"  podTemplate: {priorityClassName: high}\n";

static const wmap_violation *find(const wmap_audit_result *r, const char *policy,
				  const char *instance, const char *field)
{
	for (size_t i = 0; i < r->n; i++) {
		const wmap_violation *v = &r->violations[i];
		if (!strcmp(v->policy, policy) && !strcmp(v->field, field) &&
		    !strcmp(v->instance ? v->instance : "", instance))
			return v;
	}
	return NULL;
}

Test(audit, violations_name_policy_component_instance_field_want_and_have)
{
	json_t *obj = load(JOBSET);
	wmap_policy_set *set = t_policy_set(three);
	wmap_admission_config cfg = { 0 };
	wmap_audit_result r;
	wmap_error err = { 0 };
	cfg.policies = set;
	cr_assert_eq(wmap_audit_object(&r, eng, &cfg, obj, WMAP_POLICY_OP_CREATE, &err), 0, "%s",
		     err.message);
	/* only-mutates has no actions and elsewhere matches another namespace */
	cr_assert_eq(r.n_policies, 3);
	cr_expect_str_eq(r.policies[0], "deny-priority");
	cr_expect_str_eq(r.policies[1], "warn-team");
	cr_expect_str_eq(r.policies[2], "audit-tolerations");
	cr_expect_eq(r.n, 6, "3 policies x 2 instances, got %zu", r.n);
	cr_expect_eq(r.owned, 0);

	const wmap_violation *v = find(&r, "deny-priority", "leader", "priorityClassName");
	cr_assert_not_null(v);
	cr_expect_eq(v->actions, WMAP_ACTION_DENY);
	cr_expect_str_eq(v->component, "replicatedjob");
	cr_expect_str_eq(v->want, "high");
	cr_expect_null(v->have, "the template has no priorityClassName");
	cr_expect_str_eq(v->message, "policy deny-priority: component replicatedjob (instance "
				     "leader): priorityClassName must be \"high\" (not set)");

	v = find(&r, "warn-team", "workers", "labels[app.kubernetes.io/component]");
	cr_assert_not_null(v);
	cr_expect_eq(v->actions, WMAP_ACTION_WARN | WMAP_ACTION_AUDIT);
	cr_expect_str_eq(v->want, "trainer");
	cr_expect_str_eq(v->have, "worker", "the value the template carries");
	cr_expect_str_eq(v->message, "policy warn-team: component replicatedjob (instance "
				     "workers): label app.kubernetes.io/component must be "
				     "\"trainer\" (found \"worker\")");

	v = find(&r, "audit-tolerations", "leader", "tolerations");
	cr_assert_not_null(v);
	cr_expect_eq(v->actions, WMAP_ACTION_AUDIT);
	cr_expect_str_eq(v->want, "{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\"}");
	cr_expect_null(v->have);
	cr_expect_eq(wmap_audit_worst(&r), WMAP_ACTION_DENY);
	wmap_audit_result_free(&r);
	cr_expect_eq(r.n, 0, "free zeroes the result");
	wmap_audit_result_free(&r);
	wmap_audit_result_free(NULL);
	wmap_policy_set_free(set);
	json_decref(obj);
}

Test(audit, the_object_as_admitted_passes_a_default_policy_it_lacks)
{
	json_t *obj = load(JOBSET);
	wmap_policy_set *set = t_policy_set(HEAD "metadata: {name: team-default}\n"
					     "spec:\n"
					     "  validationActions: [Warn]\n"
					     "  podTemplate: {labels: {team: ml}}\n");
	wmap_admission_config cfg = { 0 };
	wmap_audit_result r;
	wmap_error err = { 0 };
	json_t *admitted = NULL;
	cfg.policies = set;
	/* as written: the label is absent in both templates */
	cr_assert_eq(wmap_audit_object(&r, eng, &cfg, obj, WMAP_POLICY_OP_CREATE, &err), 0);
	cr_expect_eq(r.n, 2);
	cr_expect_str_eq(r.violations[0].message, "policy team-default: component "
						  "replicatedjob (instance leader): label team "
						  "must be set (default \"ml\")");
	cr_expect_eq(wmap_audit_worst(&r), WMAP_ACTION_WARN);
	wmap_audit_result_free(&r);
	/* as admitted: wmap's mutation sets it, so nothing is violated */
	cr_assert_eq(wmap_audit_admitted(&admitted, eng, &cfg, obj, WMAP_POLICY_OP_CREATE, &err),
		     0, "%s", err.message);
	cr_assert_eq(wmap_audit_object(&r, eng, &cfg, admitted, WMAP_POLICY_OP_CREATE, &err), 0);
	cr_expect_eq(r.n, 0);
	cr_expect_eq(r.n_policies, 1);
	cr_expect_eq(wmap_audit_worst(&r), 0u);
	wmap_audit_result_free(&r);
	cr_expect_null(json_object_get(json_object_get(obj, "metadata"), "annotations"),
		       "the input object is not changed");
	json_decref(admitted);
	wmap_policy_set_free(set);
	json_decref(obj);
}

Test(audit, uncovered_kinds_owned_objects_and_bad_objects)
{
	wmap_policy_set *set = t_policy_set(HEAD "metadata: {name: p}\n"
					     "spec:\n"
					     "  validationActions: [Audit]\n"
					     "  podTemplate: {labels: {team: ml}}\n");
	wmap_admission_config cfg = { 0 };
	wmap_audit_result r;
	wmap_error err = { 0 };
	cfg.policies = set;

	json_t *cm = t_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n");
	cr_expect_eq(wmap_audit_object(&r, eng, &cfg, cm, WMAP_POLICY_OP_CREATE, &err),
		     WMAP_ENODEF);
	cr_expect(strstr(err.message, "ConfigMap") != NULL, "%s", err.message);
	wmap_audit_result_free(&r);
	json_decref(cm);

	json_t *job = t_yaml("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
			     "  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: "
			     "JobSet, name: x, uid: '1', controller: true}]\n"
			     "spec: {template: {spec: {containers: [{name: c}]}}}\n");
	cr_expect_eq(wmap_audit_object(&r, eng, &cfg, job, WMAP_POLICY_OP_CREATE, &err), 0);
	cr_expect_eq(r.owned, 1, "checked through its owner");
	cr_expect_eq(r.n, 0);
	wmap_audit_result_free(&r);
	json_decref(job);

	/* an object that does not fit its definition: an error, not a pass */
	json_t *bad = t_yaml("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
			     "metadata: {name: b}\nspec: {replicatedJobs: 7}\n");
	int rc = wmap_audit_object(&r, eng, &cfg, bad, WMAP_POLICY_OP_CREATE, &err);
	if (rc == 0)
		cr_expect_eq(r.n, 1, "either an error or the violation, never a silent pass");
	wmap_audit_result_free(&r);
	json_decref(bad);

	/* too deep for the configured limit */
	json_t *obj = load(JOBSET);
	cfg.max_depth = 3;
	cr_expect_eq(wmap_audit_object(&r, eng, &cfg, obj, WMAP_POLICY_OP_CREATE, &err),
		     WMAP_ELIMIT);
	wmap_audit_result_free(&r);
	cfg.max_depth = 0;
	/* operations: the policy is for CREATE only */
	cr_expect_eq(wmap_audit_object(&r, eng, &cfg, obj, WMAP_POLICY_OP_UPDATE, &err), 0);
	cr_expect_eq(r.n_policies, 0);
	wmap_audit_result_free(&r);
	json_decref(obj);
	wmap_policy_set_free(set);
}

Test(audit, warn_violations_past_the_cap_end_with_a_count)
{
	/* A JobSet of 10 replicated jobs: 10 violations of one Warn policy. */
	char text[4096];
	size_t n = (size_t)snprintf(text, sizeof(text),
				    "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
				    "metadata: {name: wide, namespace: a}\nspec:\n  replicatedJobs:\n");
	for (int i = 0; i < 10; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "  - {name: g%d, replicas: 1, template: {spec: {template: "
				      "{spec: {containers: [{name: c}]}}}}}\n",
				      i);
	json_t *obj = t_yaml(text);
	wmap_policy_set *set = t_policy_set(HEAD "metadata: {name: team}\n"
					     "spec:\n"
					     "  validationActions: [Warn]\n"
					     "  podTemplate: {labels: {team: ml}}\n");
	wmap_admission_config cfg = { 0 };
	cfg.policies = set;
	json_t *review = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:O}}", "apiVersion",
				   "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid",
				   "u1", "operation", "CREATE", "namespace", "a", "object", obj);
	json_t *out = NULL;
	wmap_admission_info info;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_admission_review(&out, eng, &cfg, WMAP_ADMISSION_VALIDATE, review, &info,
					   &err),
		     0, "%s", err.message);
	json_t *resp = json_object_get(out, "response");
	json_t *w = json_object_get(resp, "warnings");
	cr_expect(json_is_true(json_object_get(resp, "allowed")));
	cr_assert_eq(json_array_size(w), 8);
	cr_expect_str_eq(json_string_value(json_array_get(w, 0)),
			 "policy team: component replicatedjob (instance g0): label team must be set "
			 "(default \"ml\")");
	cr_expect_str_eq(json_string_value(json_array_get(w, 7)),
			 "wmap: 3 more violations of Warn policies not shown (kubectl wmap audit "
			 "lists them all)");
	cr_expect_eq(info.n_hits, 1, "one policy violated");
	cr_expect_str_eq(info.hits[0].policy, "team");
	cr_expect_eq(info.hits[0].actions, WMAP_ACTION_WARN);
	json_decref(out);
	json_decref(review);
	wmap_policy_set_free(set);
	json_decref(obj);
}
