/* libFuzzer target: Karta definitions. The input is YAML: document 0 is read as a definition
 * (wmap_definition_load); when every expression of it runs natively (no libjq compile), it
 * is also registered and used to resolve document 1 (or an empty object) into a workload,
 * its status and its gang plan. Small definitions that need libjq get
 * wmap_definition_check_jq (a libjq compile costs ~25 ms with 1.6, so only below 1 KiB).
 * Every loaded definition is also walked through a CRD schema (wmap_schema_check): document
 * 2 as the openAPIV3Schema of its root version, else document 1.
 * Properties: no crash, leak or UB; every failure carries a code and a message; every schema
 * finding has a message, field, path and reason. */
#include <jansson.h>
#include "fuzz.h"
#include "wmap/definition.h"
#include "wmap/gang.h"
#include "wmap/registry.h"
#include "wmap/schema.h"
#include "wmap/workload.h"
#include "wmap/yaml.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	json_object_seed(1);
	return 0;
}

/* libjq 1.6 leaks the string buffer when its lexer meets an unterminated string literal
 * ("abc, .\"x): a library leak (jq_parse -> jv_string_sized), reported upstream as fixed
 * after 1.6. Such programs only fail to compile; they are skipped so the target keeps
 * finding wmap's leaks. An odd count of unescaped quotes is the sign. */
static int unterminated_string(const wmap_definition *def)
{
	for (size_t i = 0; i < def->n_jq; i++) {
		int quotes = 0;
		for (const char *p = def->jq_texts[i]; *p; p++) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				quotes++;
		}
		if (quotes % 2)
			return 1;
	}
	return 0;
}

/* The schema walk of every expression (src/schema.c) against a CRD for def's root kind. */
static void schema(const wmap_definition *def, const json_t *docs)
{
	const wmap_gvk *k = def->components[0].kind;
	const json_t *s = json_array_get(docs, json_array_size(docs) > 2 ? 2 : 1);
	json_t *crd, *findings = NULL, *f;
	wmap_error err = { 0 };
	size_t i;
	if (!k || !json_is_object(s))
		return;
	crd = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:s}, s:[{s:s, s:{s:O}}]}}", "apiVersion",
			"apiextensions.k8s.io/v1", "kind", "CustomResourceDefinition", "metadata", "name", "fuzz",
			"spec", "group", k->group, "names", "kind", k->kind, "versions", "name", k->version,
			"schema", "openAPIV3Schema", s);
	if (!crd)
		return;
	int rc = wmap_schema_check(&findings, def, crd, &err);
	FZ_CHECK(rc == 0 || rc == WMAP_ENOMEM, "schema check returned %d: %s", rc, err.message);
	json_array_foreach(findings, i, f) {
		FZ_CHECK(json_is_string(json_object_get(f, "message")) && json_is_string(json_object_get(f, "field")) &&
				 json_is_string(json_object_get(f, "path")) && json_is_string(json_object_get(f, "reason")),
			 "schema finding %zu without message, field, path or reason", i);
	}
	json_decref(findings);
	json_decref(crd);
}

static void resolve(const json_t *docs)
{
	wmap_registry *reg = NULL;
	wmap_engine *eng = NULL;
	wmap_workload *w = NULL;
	wmap_gang_plan *plan = NULL;
	wmap_definition *def = NULL;
	wmap_error err;
	json_t *pos = NULL;

	if (wmap_definition_load(&def, json_array_get(docs, 0), "fuzz.yaml", WMAP_ORIGIN_FILE,
				 pos, 0, &err) != 0) {
		FZ_CHECK(def == NULL && err.code < 0 && err.message[0], "failed load left state");
		return;
	}
	FZ_CHECK(def && def->n_components > 0, "loaded definition without components");
	schema(def, docs);
	if (def->n_jq > 0) {
		if (json_dumpb(json_array_get(docs, 0), NULL, 0, JSON_COMPACT) <= 1024 &&
		    !unterminated_string(def)) {
			int rc = wmap_definition_check_jq(def, &err);
			FZ_CHECK(rc == 0 || (rc == WMAP_EJQ && err.message[0]) || rc == WMAP_ENOMEM,
				 "check_jq returned %d", rc);
		}
		wmap_definition_free(def);
		return;
	}
	if (wmap_registry_new(&reg, &err) != 0)
		goto out;
	if (wmap_registry_add(reg, def, &err) != 0) /* takes def, also on failure */
		goto out;
	const wmap_definition *d = wmap_registry_get(reg, 0);
	if (wmap_engine_new(&eng, reg, &err) != 0)
		goto out;
	json_t *obj = json_array_size(docs) > 1 ? json_deep_copy(json_array_get(docs, 1))
						: json_object();
	int rc = wmap_workload_resolve(&w, eng, obj, d, &err);
	if (rc == 0) {
		char buf[256];
		wmap_workload_status_string(w, buf, sizeof(buf), ",");
		const char *name = json_string_value(
			json_object_get(json_object_get(obj, "metadata"), "name"));
		if (wmap_gang_plan_build(&plan, w, name, &err) == 0)
			wmap_gang_plan_free(plan);
	} else {
		FZ_CHECK(w == NULL && err.message[0], "failed resolve left state (rc %d)", rc);
	}
	unsigned st = 0;
	wmap_status_evaluate(&st, eng, d, obj, &err);
	json_decref(obj);
out:
	wmap_workload_free(w);
	wmap_engine_free(eng);
	wmap_registry_free(reg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 32 * 1024)
		return -1;
	json_t *docs = NULL;
	wmap_error err;
	wmap_yaml_opts o = {0};
	o.max_nodes = 100000;
	if (wmap_yaml_parse(&docs, (const char *)data, size, "fuzz.yaml", &o, &err) == 0 &&
	    json_array_size(docs) > 0)
		resolve(docs);
	json_decref(docs);
	return 0;
}
