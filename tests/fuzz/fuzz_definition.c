/* libFuzzer target: Karta definitions. The input is YAML: document 0 is read as a definition
 * (wmap_definition_load); when every expression of it runs natively (no libjq compile), it
 * is also registered and used to resolve document 1 (or an empty object) into a workload,
 * its status and its gang plan. Small definitions that need libjq get
 * wmap_definition_check_jq (a libjq compile costs ~25 ms with 1.6, so only below 1 KiB).
 * Properties: no crash, leak or UB; every failure carries a code and a message. */
#include <jansson.h>
#include "fuzz.h"
#include "wmap/definition.h"
#include "wmap/gang.h"
#include "wmap/registry.h"
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
