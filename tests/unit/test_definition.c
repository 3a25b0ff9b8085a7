/* Loading and validating definitions: every rule of reference section 4, with its message,
 * the jq rules, and every shipped and upstream definition. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/registry.h"
#include "wmap/yaml.h"

#define HEAD "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n  name: t\nspec:\n  structureDefinition:\n"
#define ROOT "    rootComponent:\n      name: root\n      kind: {group: example.com, version: v1, kind: Thing}\n" \
	     "      statusDefinition:\n        statusMappings:\n          running:\n          - byPhase: Running\n"

/* Expects the definition to fail with a finding containing want. */
static void invalid(const char *text, const char *want)
{
	char msg[WMAP_ERROR_MAX] = "";
	wmap_definition *d = t_definition(text, msg, sizeof(msg));
	cr_expect_null(d, "accepted, expected: %s", want);
	cr_expect(strstr(msg, want) != NULL, "expected \"%s\" in:\n%s", want, msg);
	wmap_definition_free(d);
}

Test(definition, loads_a_minimal_definition)
{
	char msg[WMAP_ERROR_MAX] = "";
	wmap_definition *d = t_definition(HEAD ROOT, msg, sizeof(msg));
	cr_assert_not_null(d, "%s", msg);
	cr_expect_str_eq(d->name, "t");
	cr_expect_eq(d->n_components, 1);
	cr_expect_eq(d->components[0].status->n_matchers[WMAP_STATUS_RUNNING], 1);
	wmap_definition_free(d);
}

Test(definition, applies_upstream_structural_rules)
{
	invalid(HEAD ROOT "    childComponents:\n    - name: root\n      ownerRef: root\n",
		"component name root is not unique");
	invalid(HEAD "    rootComponent:\n      name: r\n      kind: {version: v1, kind: Thing}\n"
		     "      statusDefinition: {statusMappings: {}}\n",
		"root component must have full kind (group, version, kind)");
	invalid(HEAD "    rootComponent:\n      name: r\n      statusDefinition: {statusMappings: {}}\n",
		"root component must have full kind (group, version, kind)");
	invalid(HEAD ROOT "      ownerRef: x\n", "root component cannot have owner ref");
	invalid(HEAD "    rootComponent:\n      name: r\n      kind: {group: a.b, version: v1, kind: T}\n",
		"root component must have status definition");
	invalid(HEAD ROOT "    childComponents:\n    - name: c\n", "child component 'c' has no owner ref");
	invalid(HEAD ROOT "    childComponents:\n    - name: c\n      ownerRef: nope\n",
		"child component 'c' has owner ref to non-existing component 'nope'");
	invalid(HEAD ROOT "    childComponents:\n    - name: a\n      ownerRef: b\n    - name: b\n      ownerRef: a\n",
		"ownership cycle detected involving component a");
	invalid(HEAD ROOT "    childComponents:\n    - name: \"\"\n      ownerRef: root\n",
		"component name must not be empty");
	invalid(HEAD ROOT "    childComponents:\n    - name: c\n      ownerRef: root\n      specDefinition:\n"
			  "        podTemplateSpecPath: .spec.template\n        podSpecPath: .spec.podSpec\n",
		"component 'c' has multiple pod spec definitions");
	invalid(HEAD ROOT "    childComponents:\n    - name: c\n      ownerRef: root\n      instanceIdPath: .spec.x[].name\n",
		"component 'c' has instanceIdPath but no podSelector.componentInstanceSelector");
	invalid(HEAD ROOT "    childComponents:\n    - name: c\n      ownerRef: root\n      podSelector:\n"
			  "        componentInstanceSelector: {idPath: .metadata.name}\n",
		"component 'c' has podSelector.componentInstanceSelector but no instanceIdPath");
	invalid(HEAD ROOT "  optimizationInstructions:\n    gangScheduling:\n      podGroups:\n      - name: g\n"
			  "        members:\n        - componentName: ghost\n",
		"pod-group member component 'ghost' is not defined (should be a root or child component)");
}

Test(definition, applies_crd_rules)
{
	invalid(HEAD ROOT "    childComponents:\n    - name: c\n      ownerRef: root\n      podSelector:\n"
			  "        componentTypeSelector: {value: x}\n",
		"at least one of keyPath or matchLabels must be set");
	invalid(HEAD ROOT "    childComponents:\n    - name: c\n      ownerRef: root\n      podSelector:\n"
			  "        componentTypeSelector: {value: x, matchLabels: {a: b}}\n",
		"value requires keyPath");
	invalid(HEAD ROOT "      suspendDefinition:\n        suspendActions: []\n        resumeActions:\n"
			  "        - {path: .spec.suspend, value: \"false\"}\n",
		"suspendActions must have at least 1 item");
	invalid(HEAD ROOT "      suspendDefinition:\n        suspendActions:\n        - {path: .spec.suspend, value: \"yes please\"}\n"
			  "        resumeActions:\n        - {path: .spec.suspend, value: \"false\"}\n",
		"is not JSON");
}

Test(definition, is_strict_about_fields_and_types)
{
	invalid(HEAD ROOT "      scaleDefinition:\n        replicaPath: .spec.replicas\n",
		"def.yaml:15:9: unknown field \"replicaPath\"");
	invalid(HEAD ROOT "      scaleDefinition:\n        replicasPath: 3\n", "replicasPath must be a string");
	invalid(HEAD ROOT "      statusDefinition2: {}\n", "unknown field \"statusDefinition2\"");
	invalid("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "not a Karta definition");
	invalid("- a\n- b\n", "a definition must be a mapping");
	invalid(HEAD, "structureDefinition is required");
	invalid(HEAD "    childComponents: []\n", "rootComponent is required");
}

Test(definition, refuses_unsafe_jq)
{
	const char *const bad[] = {"del(.a)", ".. | .a", ".a = 1", ".a |= 1", ".a += 1", ".a //= 1",
				   "[range(10)]", "[paths]", "recurse(.a)", "walk(.)", "repeat(.)",
				   "\"x\\(del(.a))\""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[2048];
		snprintf(text, sizeof(text), HEAD ROOT "      scaleDefinition:\n        replicasPath: '%s'\n", bad[i]);
		invalid(text, "which is not allowed");
	}
	const char *const fine[] = {".a == 1", ".a != 1", ".a <= 1", ".range", ". as $paths | $paths",
				    "\"del(.x)\"", "{range: 1} | .range", "select(.a >= 2)"};
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
		char text[2048], msg[WMAP_ERROR_MAX] = "";
		snprintf(text, sizeof(text), HEAD ROOT "      scaleDefinition:\n        replicasPath: '%s'\n", fine[i]);
		wmap_definition *d = t_definition(text, msg, sizeof(msg));
		cr_expect_not_null(d, "%s refused: %s", fine[i], msg);
		wmap_definition_free(d);
	}
}

Test(definition, names_broken_jq_and_where_it_is)
{
	char msg[WMAP_ERROR_MAX] = "";
	wmap_definition *d = t_definition(HEAD ROOT "      scaleDefinition:\n        replicasPath: '.spec.replicas // 1'\n"
						   "        minReplicasPath: '.spec | select(.a'\n", msg, sizeof(msg));
	cr_assert_not_null(d, "%s", msg);
	wmap_error err = {0};
	cr_assert_eq(wmap_definition_check_jq(d, &err), WMAP_EJQ);
	cr_expect(strstr(err.message, "def.yaml:16:9: jq expression \".spec | select(.a\"") != NULL, "%s", err.message);
	cr_expect(strstr(err.message, "syntax error, unexpected $end") != NULL, "%s", err.message);
	cr_expect(strstr(err.message, "does not compile") != NULL, "%s", err.message);
	cr_expect(strstr(err.message, "replicasPath: jq") == NULL, "the good expression is not blamed: %s",
		  err.message);
	wmap_definition_free(d);
}

Test(definition, reads_old_resource_interface_documents)
{
	char msg[WMAP_ERROR_MAX] = "";
	wmap_definition *d = t_definition("apiVersion: optimization.nvidia.com/v1alpha1\nkind: ResourceInterface\n"
					  "metadata:\n  name: t\nspec:\n  structureDefinition:\n" ROOT, msg, sizeof(msg));
	cr_assert_not_null(d, "%s", msg);
	cr_expect(d->legacy);
	wmap_definition_free(d);
}

Test(definition, every_shipped_definition_loads_and_compiles)
{
	wmap_registry *reg;
	wmap_error err = {0};
	size_t n;
	char **files = t_glob("catalog/*.yaml", &n);
	cr_assert_gt(n, 0, "no catalog files found (run from the repository root)");
	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0, "%s", err.message);
	cr_expect_eq(wmap_registry_count(reg), n, "each catalog file holds one definition for its own kind");
	for (size_t i = 0; i < wmap_registry_count(reg); i++) {
		const wmap_definition *d = wmap_registry_get(reg, i);
		char want[512];
		cr_expect_eq(wmap_definition_check_jq(d, &err), 0, "%s", err.message);
		snprintf(want, sizeof(want), "catalog/%s.yaml", d->name);
		cr_expect_str_eq(d->source, want, "a definition is named after its file");
		const wmap_gvk *g = d->components[0].kind;
		wmap_definition_slug(want, sizeof(want), g->group, g->kind, g->version);
		cr_expect_str_eq(d->name, want, "catalog names follow <group>-<kind>-<version>");
		/* and the lazy loader finds it by kind */
		wmap_registry *one;
		cr_assert_eq(wmap_registry_new(&one, &err), 0);
		cr_expect_eq(wmap_registry_add_catalog_kind(one, g->group, g->kind, &err), 0, "%s", err.message);
		cr_expect_not_null(wmap_registry_find(one, g->group, g->version, g->kind, NULL), "%s", d->name);
		wmap_registry_free(one);
	}
	/* One compile serves the whole catalog. */
	wmap_engine *eng;
	cr_assert_eq(wmap_engine_new(&eng, reg, &err), 0);
	cr_expect_eq(wmap_engine_prepare(eng, &err), 0, "%s", err.message);
	cr_expect_leq(wmap_engine_compiles(eng), 1);
	wmap_engine_free(eng);
	wmap_registry_free(reg);
	t_free_list(files, n);
}

Test(definition, file_definitions_override_the_catalog)
{
	wmap_registry *reg;
	wmap_error err = {0};
	char msg[WMAP_ERROR_MAX];
	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0);
	wmap_definition *d = t_definition(
		"apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: my-pods}\nspec:\n  structureDefinition:\n"
		"    rootComponent:\n      name: pod\n      kind: {group: \"\", version: v1, kind: Pod}\n"
		"      statusDefinition: {statusMappings: {running: [{byPhase: Running}]}}\n", msg, sizeof(msg));
	cr_assert_not_null(d, "%s", msg);
	cr_assert_eq(wmap_registry_add(reg, d, &err), 0, "%s", err.message);
	int exact;
	const wmap_definition *found = wmap_registry_find(reg, "", "v1", "Pod", &exact);
	cr_assert_not_null(found);
	cr_expect_str_eq(found->name, "my-pods");
	cr_expect_eq(found->origin, WMAP_ORIGIN_FILE);
	cr_expect_null(wmap_registry_by_name(reg, "core-pod-v1"), "the catalog's Pod definition is replaced");
	wmap_registry_free(reg);
}
