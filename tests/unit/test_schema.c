/* The schema check (src/schema.c): a definition's expressions against a CRD's structural
 * schema, plain paths and the rest of the jq subset. Each case is a Karta with one
 * expression in a known field and a CRD schema; the finding (or none) is what a user reads. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/schema.h"

/* A Widget Karta whose child component reads its pod template at tpl and replicas at reps. */
static wmap_definition *widget_def(const char *version, const char *tpl, const char *reps)
{
	char text[2048], msg[2048];
	snprintf(text, sizeof(text),
		 "apiVersion: run.ai/v1alpha1\n"
		 "kind: Karta\n"
		 "metadata: {name: w}\n"
		 "spec:\n"
		 "  structureDefinition:\n"
		 "    rootComponent:\n"
		 "      name: widget\n"
		 "      kind: {group: example.com, version: %s, kind: Widget}\n"
		 "      statusDefinition:\n"
		 "        conditionsDefinition: {path: '[]'}\n"  /* a literal: reads nothing of the object */
		 "        statusMappings: {running: [{byConditions: [{type: Ready, status: 'True'}]}]}\n"
		 "    childComponents:\n"
		 "      - name: role\n"
		 "        kind: {group: \"\", version: v1, kind: Pod}\n"
		 "        ownerRef: widget\n"
		 "        specDefinition: {podTemplateSpecPath: '%s'}\n"
		 "        scaleDefinition: {replicasPath: '%s'}\n",
		 version, tpl, reps);
	wmap_definition *d = t_definition(text, msg, sizeof(msg));
	cr_assert_not_null(d, "%s", msg);
	return d;
}

/* A CRD for Widget with one version per (name, schema YAML) pair. */
static json_t *widget_crd(const char *v1_schema, const char *v2_schema)
{
	char text[8192];
	int n = snprintf(text, sizeof(text),
			 "apiVersion: apiextensions.k8s.io/v1\n"
			 "kind: CustomResourceDefinition\n"
			 "metadata: {name: widgets.example.com}\n"
			 "spec:\n"
			 "  group: example.com\n"
			 "  names: {kind: Widget, plural: widgets}\n"
			 "  versions:\n"
			 "  - name: v1\n"
			 "    schema:\n"
			 "      openAPIV3Schema: %s\n",
			 v1_schema);
	if (v2_schema)
		snprintf(text + n, sizeof(text) - (size_t)n,
			 "  - name: v2\n"
			 "    schema:\n"
			 "      openAPIV3Schema: %s\n",
			 v2_schema);
	return t_yaml(text);
}

/* The findings of def against crd, as one string ("" when none), into buf. */
static size_t check(char *buf, size_t len, wmap_definition *d, json_t *crd)
{
	json_t *f = NULL, *v;
	wmap_error err = { 0 };
	size_t i, n = 0;
	cr_assert_eq(wmap_schema_check(&f, d, crd, &err), 0, "%s", err.message);
	buf[0] = '\0';
	json_array_foreach(f, i, v) {
		n += (size_t)snprintf(buf + strlen(buf), len - strlen(buf), "%s\n",
				      json_string_value(json_object_get(v, "message")));
	}
	n = json_array_size(f);
	json_decref(f);
	wmap_definition_free(d);
	json_decref(crd);
	return n;
}

/* The templates keep unknown fields: what wmap writes under them (labels, schedulerName) is
 * kept. */
#define TPL "{type: object, x-kubernetes-preserve-unknown-fields: true}"
#define ROLES "{type: object, properties: {spec: {type: object, properties: {roles: {type: array, " \
	      "items: {type: object, properties: {name: {type: string}, replicas: {type: integer}, template: " TPL "}}}}}}}"

Test(schema, paths_present_in_properties_and_items)
{
	char f[4096];
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].template", ".spec.roles[0].replicas"),
			   widget_crd(ROLES, NULL)), 0, "%s", f);
}

Test(schema, missing_field_names_path_field_and_step)
{
	char f[4096];
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].templates", ".spec.roles[].replicas"),
			   widget_crd(ROLES, NULL)), 1);
	cr_assert(strstr(f, "def.yaml:16:") && strstr(f, ": .spec.structureDefinition.childComponents[0]."
								  "specDefinition.podTemplateSpecPath: "), "%s", f);
	cr_assert(strstr(f, "path \".spec.roles[].templates\" is not in the schema of example.com/v1 Widget: "
			    "no field \"templates\" under .spec.roles[]"), "%s", f);
}

Test(schema, each_version_has_its_own_schema)
{
	char f[4096];
	const char *v2 = "{type: object, properties: {spec: {type: object, properties: {workers: {type: array, "
			 "items: {type: object, properties: {replicas: {type: integer}, template: " TPL "}}}}}}}";
	/* Written for v1, declared as v2: both paths went away. */
	cr_assert_eq(check(f, sizeof(f), widget_def("v2", ".spec.roles[].template", ".spec.roles[].replicas"),
			   widget_crd(ROLES, v2)), 2, "%s", f);
	cr_assert(strstr(f, "no field \"roles\" under .spec"), "%s", f);
	cr_assert_eq(check(f, sizeof(f), widget_def("v2", ".spec.workers[].template", ".spec.workers[].replicas"),
			   widget_crd(ROLES, v2)), 0, "%s", f);
	/* A version the CRD lacks is one finding. */
	cr_assert_eq(check(f, sizeof(f), widget_def("v3", ".spec.workers[].template", ".spec.x"),
			   widget_crd(ROLES, v2)), 1);
	cr_assert(strstr(f, "has no schema for version v3"), "%s", f);
}

Test(schema, preserve_unknown_fields_keeps_everything_below)
{
	char f[4096];
	const char *s = "{type: object, properties: {spec: {type: object, properties: {"
			"extra: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}}";
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.extra.a[].b.template", ".spec.extra.n"),
			   widget_crd(s, NULL)), 0, "%s", f);
	/* A preserve-unknown-fields object with properties still keeps unknown keys. */
	s = "{type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true, "
	    "properties: {known: {type: string}}}}}";
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.other.template", ".spec.known"),
			   widget_crd(s, NULL)), 0, "%s", f);
	/* The whole object preserved: nothing to check. */
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".any.thing", ".x[]"),
			   widget_crd("{type: object, x-kubernetes-preserve-unknown-fields: true}", NULL)), 0, "%s", f);
}

Test(schema, additional_properties_maps)
{
	char f[4096];
	const char *s = "{type: object, properties: {spec: {type: object, properties: {groups: {type: object, "
			"additionalProperties: {type: object, properties: {size: {type: integer}, "
			"template: " TPL "}}}}}}}";
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.groups[].template", ".spec.groups.main.size"),
			   widget_crd(s, NULL)), 0, "%s", f);
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.groups[].tmpl", ".spec.groups.main.size"),
			   widget_crd(s, NULL)), 1, "%s", f);
	cr_assert(strstr(f, "no field \"tmpl\" under .spec.groups[]"), "%s", f);
}

Test(schema, wrong_kind_of_node)
{
	char f[4096];
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].replicas.template", ".spec.roles.replicas"),
			   widget_crd(ROLES, NULL)), 2, "%s", f);
	cr_assert(strstr(f, ".spec.roles[].replicas is of type integer, with no field \"template\""), "%s", f);
	cr_assert(strstr(f, ".spec.roles is of type array, with no field \"replicas\""), "%s", f);
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].template", ".spec.roles[].replicas[]"),
			   widget_crd(ROLES, NULL)), 1, "%s", f);
	cr_assert(strstr(f, ".spec.roles[].replicas is of type integer, not a list"), "%s", f);
}

Test(schema, object_meta_at_the_root_and_in_embedded_resources)
{
	char f[4096];
	const char *s = "{type: object, properties: {spec: {type: object, properties: {job: {type: object, "
			"x-kubernetes-embedded-resource: true, properties: {spec: " TPL "}}, "
			"bare: {type: object, properties: {metadata: {type: object}}}}}}}";
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.job", ".metadata.labels[\"a/b\"]"),
			   widget_crd(s, NULL)), 0, "%s", f);
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".metadata.lables", ".metadata.annotations.a.b"),
			   widget_crd(s, NULL)), 2, "%s", f);
	cr_assert(strstr(f, ".metadata is ObjectMeta, which has no field \"lables\""), "%s", f);
	cr_assert(strstr(f, ".metadata.annotations.a is a string, with no field \"b\""), "%s", f);
	/* A nested metadata declared as a bare object keeps nothing (pruned). */
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.bare.metadata.labels", ".spec.job.apiVersion"),
			   widget_crd(s, NULL)), 1, "%s", f);
	cr_assert(strstr(f, "no field \"labels\" under .spec.bare.metadata"), "%s", f);
}

/* Expressions beyond plain paths are walked too: each planted typo is found, with the place
 * the expression reads. */
Test(schema, expressions_are_walked)
{
	char f[4096];
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.nothing // .spec.roles[].template", "3"),
			   widget_crd(ROLES, NULL)), 1, "%s", f);
	cr_assert(strstr(f, "replicasPath") == NULL && strstr(f, "podTemplateSpecPath: expression \".spec.nothing // "
								  ".spec.roles[].template\" reads .spec.nothing, which is not in "
								  "the schema of example.com/v1 Widget: no field \"nothing\" under .spec"),
		  "%s", f);
	static const struct {
		const char *reps, *reads;
	} typo[] = {
		{ ".spec.roles | map(.replica) | add", ".spec.roles[].replica" },
		{ ".spec.roles[0] as $r | $r.replcas", ".spec.roles[N].replcas" },
		{ "[.spec.roles[] | select(.nmae == \"a\")] | length", ".spec.roles[].nmae" },
		{ "if any(.spec.roles[]?; .replicas > 1) then .spec.rols else 0 end", ".spec.rols" },
		{ "{n: (.spec.roles | length), m: .spec.max} | .n", ".spec.max" },
		{ ".spec.roles[0].replicas | to_entries | length", ".spec.roles[N].replicas | to_entries" },
		{ "(.spec.roles // []) | all(.[]; .replica != null)", ".spec.roles[].replica" },
		{ ".spec.roles | length as $n | .[$n - 1].replics", ".spec.roles[N].replics" },
	};
	for (size_t i = 0; i < sizeof(typo) / sizeof(typo[0]); i++) {
		cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].template", typo[i].reps),
				   widget_crd(ROLES, NULL)), 1, "%s: %s", typo[i].reps, f);
		char want[256];
		snprintf(want, sizeof(want), "reads %s, which", typo[i].reads);
		cr_assert(strstr(f, want), "%s: want \"%s\" in %s", typo[i].reps, want, f);
	}
	/* The same expressions spelled right: nothing. */
	static const char *const good[] = {
		".spec.roles | map(.replicas) | add",
		".spec.roles[0] as $r | $r.replicas",
		"[.spec.roles[] | select(.name == \"a\")] | length",
		"if any(.spec.roles[]?; .replicas > 1) then .spec.roles[0].replicas else 0 end",
		"(.spec.roles // []) | all(.[]; .replicas != null)",
		".spec.roles | length as $n | .[$n - 1].replicas",
		".spec.roles | map({key: .name, value: .replicas}) | from_entries | to_entries | map(.value) | add",
		".metadata | to_entries | length",
		".metadata.labels | to_entries | map(.value | length) | add",
		"[.metadata[]] | length",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].template", good[i]),
				   widget_crd(ROLES, NULL)), 0, "%s: %s", good[i], f);
}

/* The key of a plain path's select(...) is checked. */
Test(schema, the_key_inside_select_is_checked)
{
	char f[4096];
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[] | select(.nme == \"a\") | .template", "1"),
			   widget_crd(ROLES, NULL)), 1, "%s", f);
	cr_assert(strstr(f, "reads .spec.roles[].nme, which"), "%s", f);
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[] | select(.name == \"a\") | .template", "1"),
			   widget_crd(ROLES, NULL)), 0, "%s", f);
}

/* Three imprecisions of the plain walk, now findings: iterating an int-or-string, [N] on a
 * map, and (above) the select key. */
Test(schema, int_or_string_and_index_on_a_map)
{
	char f[4096];
	const char *s = "{type: object, properties: {spec: {type: object, properties: {"
			"port: {x-kubernetes-int-or-string: true}, "
			"groups: {type: object, additionalProperties: {type: object, properties: {size: {type: integer}}}}, "
			"roles: {type: array, items: {type: object, properties: {template: " TPL "}}}}}}}";
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].template", ".spec.port[]"), widget_crd(s, NULL)),
		     1, "%s", f);
	cr_assert(strstr(f, ".spec.port is an int-or-string, not a list"), "%s", f);
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].template", ".spec.groups[0].size"),
			   widget_crd(s, NULL)), 1, "%s", f);
	cr_assert(strstr(f, ".spec.groups is a map, not a list: [N] needs a list"), "%s", f);
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].template", ".spec.groups.main.size"),
			   widget_crd(s, NULL)), 0, "%s", f);
	/* to_entries of a map: the entries' values have the map's value schema. */
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].template", ".spec.groups | to_entries | map(.value.sise) | add"),
			   widget_crd(s, NULL)), 1, "%s", f);
	cr_assert(strstr(f, "no field \"sise\" under .spec.groups[].value"), "%s", f);
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].template", ".spec.groups | to_entries | map(.value.size) | add"),
			   widget_crd(s, NULL)), 0, "%s", f);
}

/* Where wmap writes labels, annotations, schedulerName and priorityClassName under a pod
 * template must be in the schema: a template declared as a bare object prunes them. */
Test(schema, what_wmap_writes_under_a_pod_template)
{
	char f[4096];
	const char *s = "{type: object, properties: {spec: {type: object, properties: {roles: {type: array, "
			"items: {type: object, properties: {replicas: {type: integer}, template: {type: object, properties: {"
			"metadata: {type: object}, spec: {type: object, properties: {schedulerName: {type: string}}}}}}}}}}}}";
	cr_assert_eq(check(f, sizeof(f), widget_def("v1", ".spec.roles[].template", "1"), widget_crd(s, NULL)), 3,
		     "%s", f);
	cr_assert(strstr(f, "wmap writes or reads .spec.roles[].template.metadata.labels under \".spec.roles[].template\""),
		  "%s", f);
	cr_assert(strstr(f, ".spec.roles[].template.metadata.annotations"), "%s", f);
	cr_assert(strstr(f, "no field \"priorityClassName\" under .spec.roles[].template.spec"), "%s", f);
}

/* Literals compared with == or != and byPhase values must be in the field's enum. */
Test(schema, enum_values)
{
	char msg[2048], f[4096];
	wmap_definition *d = t_definition(
		"apiVersion: run.ai/v1alpha1\n"
		"kind: Karta\n"
		"metadata: {name: w}\n"
		"spec:\n"
		"  structureDefinition:\n"
		"    rootComponent:\n"
		"      name: widget\n"
		"      kind: {group: example.com, version: v1, kind: Widget}\n"
		"      statusDefinition:\n"
		"        phaseDefinition: {path: .status.state}\n"
		"        statusMappings:\n"
		"          running: [{byPhase: ready}, {byPhase: successful}]\n"
		"          initializing:\n"
		"            - byExpression: {expression: '(.status.state // \"\") | . != \"failed\" and . != \"done\"', "
		"expectedResult: 'true'}\n",
		msg, sizeof(msg));
	cr_assert_not_null(d, "%s", msg);
	const char *s = "{type: object, properties: {status: {type: object, properties: {state: {type: string, "
			"enum: [pending, successful, failed]}}}}}";
	cr_assert_eq(check(f, sizeof(f), d, widget_crd(s, NULL)), 2, "%s", f);
	cr_assert(strstr(f, "statusMappings.running[0].byPhase: the phase (.status.state, phaseDefinition.path "
			    "\".status.state\") can never be \"ready\": the schema of example.com/v1 Widget allows only "
			    "pending, successful, failed"), "%s", f);
	cr_assert(strstr(f, "compares .status.state with \"done\", which the schema of example.com/v1 Widget does not "
			    "allow there (enum: pending, successful, failed)"), "%s", f);
}

Test(schema, status_paths_and_actions_are_checked)
{
	char msg[2048], f[4096];
	wmap_definition *d = t_definition(
		"apiVersion: run.ai/v1alpha1\n"
		"kind: Karta\n"
		"metadata: {name: w}\n"
		"spec:\n"
		"  structureDefinition:\n"
		"    rootComponent:\n"
		"      name: widget\n"
		"      kind: {group: example.com, version: v1, kind: Widget}\n"
		"      statusDefinition:\n"
		"        phaseDefinition: {path: .status.phse}\n"
		"        statusMappings:\n"
		"          running: [{byPhase: Running}]\n"
		"      suspendDefinition:\n"
		"        suspendActions: [{path: .spec.paused, value: 'true'}]\n"
		"        resumeActions: [{path: .spec.suspend, value: 'false'}]\n",
		msg, sizeof(msg));
	cr_assert_not_null(d, "%s", msg);
	const char *s = "{type: object, properties: {spec: {type: object, properties: {suspend: {type: boolean}}}, "
			"status: {type: object, properties: {phase: {type: string}}}}}";
	cr_assert_eq(check(f, sizeof(f), d, widget_crd(s, NULL)), 2, "%s", f);
	cr_assert(strstr(f, "phaseDefinition.path: path \".status.phse\""), "%s", f);
	cr_assert(strstr(f, "suspendActions[0].path: path \".spec.paused\""), "%s", f);
}

Test(schema, a_crd_for_another_kind_is_an_error)
{
	json_t *f = NULL;
	wmap_error err = { 0 };
	wmap_definition *d = widget_def("v1", ".spec.roles[].template", ".spec.roles[].replicas");
	json_t *crd = t_yaml("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
			     "metadata: {name: gadgets.example.com}\n"
			     "spec: {group: example.com, names: {kind: Gadget}, versions: []}\n");
	cr_assert_eq(wmap_schema_check(&f, d, crd, &err), WMAP_EINVAL);
	cr_assert_null(f);
	cr_assert_str_eq(err.message, "the CustomResourceDefinition defines Gadget.example.com, not the "
				      "definition's kind Widget.example.com");
	cr_assert_eq(wmap_schema_check(&f, d, NULL, &err), WMAP_EINVAL);
	json_t *cm = t_yaml("{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}");
	cr_assert_eq(wmap_schema_check(&f, d, cm, &err), WMAP_EINVAL);
	cr_assert_eq(wmap_schema_crd_matches(crd, "example.com", "Gadget"), 1);
	cr_assert_eq(wmap_schema_crd_matches(cm, "example.com", "Gadget"), 0);
	json_decref(cm);
	json_decref(crd);
	wmap_definition_free(d);
}

/* Every catalog definition against the e2e suite's JobSet CRD (published schema, trimmed):
 * the shipped JobSet definition's paths are all in it. */
Test(schema, catalog_jobset_against_its_crd)
{
	char err[512], msg[2048], f[4096];
	json_t *crd = t_load_file("tests/e2e/data/jobset-crd.yaml", err, sizeof(err));
	cr_assert_not_null(crd, "%s", err);
	json_t *doc = t_load_file("catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml", err, sizeof(err));
	cr_assert_not_null(doc, "%s", err);
	char *text = json_dumps(doc, 0);
	wmap_definition *d = t_definition(text, msg, sizeof(msg));
	free(text);
	json_decref(doc);
	cr_assert_not_null(d, "%s", msg);
	cr_assert_eq(check(f, sizeof(f), d, crd), 0, "%s", f);
}
