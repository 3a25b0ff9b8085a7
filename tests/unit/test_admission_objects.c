/* /validate of the webhook's own objects (src/admission_objects.c): Karta objects checked
 * with upstream's rules and denied with the finding and its field path, WorkloadPolicy
 * objects parsed as policy documents, DELETE allowed, and the schema path check as
 * warnings when a CRD lookup knows the Karta's kind. Whole AdmissionReviews in and out. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "wmap/admission.h"

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

TestSuite(admission_objects, .init = setup, .fini = teardown);

#define KARTA_OK                                                                          \
	"apiVersion: run.ai/v1alpha1\n"                                                       \
	"kind: Karta\n"                                                                       \
	"metadata: {name: widgets, uid: 1b2c, resourceVersion: '12', generation: 3}\n"      \
	"spec:\n"                                                                             \
	"  structureDefinition:\n"                                                            \
	"    rootComponent:\n"                                                                \
	"      name: widget\n"                                                                \
	"      kind: {group: example.com, version: v1, kind: Widget}\n"                       \
	"      statusDefinition:\n"                                                           \
	"        phaseDefinition: {path: .status.phase}\n"                                    \
	"        statusMappings: {running: [{byPhase: Running}]}\n"                           \
	"    childComponents:\n"                                                              \
	"      - name: role\n"                                                                \
	"        kind: {group: '', version: v1, kind: Pod}\n"                                 \
	"        ownerRef: %s\n"                                                              \
	"        specDefinition: {podTemplateSpecPath: '%s'}\n"                               \
	"status:\n"                                                                           \
	"  conditions: [{type: Ready, status: 'True', reason: InForce, message: ok,\n"        \
	"                lastTransitionTime: '2026-01-01T00:00:00Z'}]\n"

static json_t *karta(const char *owner, const char *tpl)
{
	char text[4096];
	snprintf(text, sizeof(text), KARTA_OK, owner, tpl);
	return t_yaml(text);
}

/* Runs /validate on object for op; returns the response (new reference). */
static json_t *validate(json_t *object, const char *op, const wmap_admission_config *cfg)
{
	json_t *review = json_pack("{s:s, s:s, s:{s:s, s:s, s:O}}", "apiVersion", "admission.k8s.io/v1",
				   "kind", "AdmissionReview", "request", "uid", "u-1", "operation", op,
				   strcmp(op, "DELETE") == 0 ? "oldObject" : "object", object);
	json_t *out = NULL;
	wmap_error err = { 0 };
	wmap_admission_config none = { 0 };
	wmap_admission_info info;
	cr_assert_eq(wmap_admission_review(&out, eng, cfg ? cfg : &none, WMAP_ADMISSION_VALIDATE, review,
					   &info, &err), 0, "%s", err.message);
	json_decref(review);
	json_t *resp = json_incref(json_object_get(out, "response"));
	cr_assert_str_eq(json_string_value(json_object_get(resp, "uid")), "u-1");
	json_decref(out);
	return resp;
}

static const char *message(const json_t *resp)
{
	const char *m = json_string_value(json_object_get(json_object_get(resp, "status"), "message"));
	return m ? m : "";
}

Test(admission_objects, a_valid_karta_is_allowed_on_create_and_update)
{
	json_t *k = karta("widget", ".spec.roles[].template");
	for (int i = 0; i < 2; i++) {
		json_t *r = validate(k, i ? "UPDATE" : "CREATE", NULL);
		cr_assert(json_is_true(json_object_get(r, "allowed")), "%s", message(r));
		cr_assert_null(json_object_get(r, "warnings"));
		json_decref(r);
	}
	json_decref(k);
}

Test(admission_objects, an_invalid_karta_is_denied_with_upstreams_message_and_the_path)
{
	json_t *k = karta("nobody", ".spec.roles[].template");
	for (int i = 0; i < 2; i++) {
		json_t *r = validate(k, i ? "UPDATE" : "CREATE", NULL);
		cr_assert(json_is_false(json_object_get(r, "allowed")));
		cr_assert_eq(json_integer_value(json_object_get(json_object_get(r, "status"), "code")), 403);
		cr_assert_str_eq(message(r), "widgets: .spec.structureDefinition.childComponents[0]: child component "
					     "'role' has owner ref to non-existing component 'nobody'");
		json_decref(r);
	}
	json_decref(k);
	/* Forbidden jq and an unknown field: every finding, each with its path. */
	k = karta("widget", ".spec.roles[] | del(.x)");
	json_object_set_new(json_object_get(k, "spec"), "colour", json_string("blue"));
	json_t *r = validate(k, "CREATE", NULL);
	cr_assert(json_is_false(json_object_get(r, "allowed")));
	cr_assert(strstr(message(r), "widgets: .spec.colour: unknown field \"colour\""), "%s", message(r));
	cr_assert(strstr(message(r), "widgets: .spec.structureDefinition.childComponents[0].specDefinition."
				     "podTemplateSpecPath: jq expression"), "%s", message(r));
	json_decref(r);
	json_decref(k);
}

Test(admission_objects, a_karta_whose_jq_does_not_compile_is_denied)
{
	json_t *k = karta("widget", ".spec.roles[] | test(\"(\")) |");
	json_t *r = validate(k, "CREATE", NULL);
	cr_assert(json_is_false(json_object_get(r, "allowed")));
	cr_assert(strstr(message(r), "podTemplateSpecPath") && strstr(message(r), "does not compile"), "%s",
		  message(r));
	json_decref(r);
	json_decref(k);
}

Test(admission_objects, delete_is_allowed)
{
	json_t *k = karta("nobody", ".x");
	json_t *r = validate(k, "DELETE", NULL);
	cr_assert(json_is_true(json_object_get(r, "allowed")));
	json_decref(r);
	json_decref(k);
}

#define POLICY                                                                            \
	"apiVersion: wmap.io/v1alpha1\n"                                                      \
	"kind: WorkloadPolicy\n"                                                              \
	"metadata: {name: prod, uid: 9f, generation: 2}\n"                                    \
	"spec:\n"                                                                             \
	"  match: {kinds: ['JobSet.jobset.x-k8s.io'], namespaces: [prod]}\n"                  \
	"  mode: %s\n"                                                                        \
	"  enforce: true\n"                                                                   \
	"  podTemplate: {priorityClassName: high}\n"                                          \
	"status: {observedGeneration: 2, conditions: []}\n"

Test(admission_objects, workload_policies_are_parsed_and_a_bad_one_denied)
{
	char text[1024];
	snprintf(text, sizeof(text), POLICY, "override");
	json_t *p = t_yaml(text), *r = validate(p, "CREATE", NULL);
	cr_assert(json_is_true(json_object_get(r, "allowed")), "%s", message(r));
	json_decref(r);
	json_decref(p);

	snprintf(text, sizeof(text), POLICY, "overwrite");
	p = t_yaml(text);
	for (int i = 0; i < 2; i++) {
		r = validate(p, i ? "UPDATE" : "CREATE", NULL);
		cr_assert(json_is_false(json_object_get(r, "allowed")));
		cr_assert(strstr(message(r), "prod: document 1: .spec.mode: must be default, override or require"), "%s",
			  message(r));
		json_decref(r);
	}
	r = validate(p, "DELETE", NULL);
	cr_assert(json_is_true(json_object_get(r, "allowed")));
	json_decref(r);
	json_decref(p);

	p = t_yaml("{apiVersion: wmap.io/v1alpha1, kind: WorkloadPolicy, metadata: {name: t},"
		   " spec: {podTemplate: {priorityClass: high}}}");
	r = validate(p, "CREATE", NULL);
	cr_assert(strstr(message(r), ".spec.podTemplate.priorityClass: unknown field \"priorityClass\""), "%s",
		  message(r));
	json_decref(r);
	json_decref(p);
}

/* A lookup that knows one CRD, and counts its calls. */
typedef struct one_crd {
	json_t *crd;
	int calls;
} one_crd;

static json_t *find_one(void *ctx, const char *group, const char *kind)
{
	one_crd *o = ctx;
	o->calls++;
	return wmap_schema_crd_matches(o->crd, group, kind) ? json_incref(o->crd) : NULL;
}

static json_t *widget_crd(void)
{
	return t_yaml("apiVersion: apiextensions.k8s.io/v1\n"
		      "kind: CustomResourceDefinition\n"
		      "metadata: {name: widgets.example.com}\n"
		      "spec:\n"
		      "  group: example.com\n"
		      "  names: {kind: Widget, plural: widgets}\n"
		      "  versions:\n"
		      "  - name: v1\n"
		      "    schema:\n"
		      "      openAPIV3Schema:\n"
		      "        type: object\n"
		      "        properties:\n"
		      "          spec: {type: object, properties: {roles: {type: array, items: {type: object,\n"
		      "                 properties: {template: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}}}\n"
		      "          status: {type: object, properties: {phase: {type: string}}}\n");
}

Test(admission_objects, schema_path_findings_are_warnings_when_the_crd_is_known)
{
	one_crd o = { widget_crd(), 0 };
	wmap_crd_lookup lookup = { find_one, &o };
	wmap_admission_config cfg = { 0 };
	cfg.crds = &lookup;
	json_t *k = karta("widget", ".spec.role[].template");
	json_t *r = validate(k, "CREATE", &cfg);
	cr_assert(json_is_true(json_object_get(r, "allowed")), "%s", message(r));
	json_t *w = json_object_get(r, "warnings");
	cr_assert_eq(json_array_size(w), 1);
	cr_assert_str_eq(json_string_value(json_array_get(w, 0)),
			 "wmap: childComponents[0].specDefinition.podTemplateSpecPath: path \".spec.role[].template\" "
			 "is not in the schema of example.com/v1 Widget: no field \"role\" under .spec");
	cr_assert_eq(o.calls, 1);
	json_decref(r);
	json_decref(k);

	/* The right path: no warning. */
	k = karta("widget", ".spec.roles[].template");
	r = validate(k, "UPDATE", &cfg);
	cr_assert(json_is_true(json_object_get(r, "allowed")));
	cr_assert_null(json_object_get(r, "warnings"));
	json_decref(r);
	json_decref(k);

	/* A CRD the lookup does not know: no check, no warning. */
	json_decref(o.crd);
	o.crd = t_yaml("{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition,"
		       " spec: {group: other.io, names: {kind: Other}}}");
	k = karta("widget", ".spec.role[].template");
	r = validate(k, "CREATE", &cfg);
	cr_assert(json_is_true(json_object_get(r, "allowed")));
	cr_assert_null(json_object_get(r, "warnings"));
	json_decref(r);
	/* An invalid Karta is denied before any schema check. */
	json_decref(k);
	k = karta("nobody", ".spec.role[].template");
	o.calls = 0;
	r = validate(k, "CREATE", &cfg);
	cr_assert(json_is_false(json_object_get(r, "allowed")));
	cr_assert_eq(o.calls, 0);
	json_decref(r);
	json_decref(k);
	json_decref(o.crd);
}

Test(admission_objects, other_kinds_still_go_through_workload_validation)
{
	/* A ConfigMap has no definition and no enforced policy: allowed, as before. */
	json_t *cm = t_yaml("{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: d}}");
	json_t *r = validate(cm, "CREATE", NULL);
	cr_assert(json_is_true(json_object_get(r, "allowed")));
	json_decref(r);
	json_decref(cm);
	/* A Karta of another apiVersion is not ours to check. */
	json_t *k = karta("nobody", ".x");
	json_object_set_new(k, "apiVersion", json_string("run.ai/v2"));
	r = validate(k, "CREATE", NULL);
	cr_assert(json_is_true(json_object_get(r, "allowed")));
	json_decref(r);
	json_decref(k);
}
