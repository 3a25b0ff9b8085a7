/* wmap: /validate of the webhook's own objects (see wmap_admission_check_own_object).
 *
 * Karta and WorkloadPolicy objects are checked with the very code that loads them from
 * files and from the cluster, so what admission lets in is what the webhook can use: no
 * second validator to keep in step. Findings name the field path inside the object (there
 * are no line numbers in an API request); the schema path check adds warnings, never a
 * denial, because a CRD may be installed or upgraded after the Karta that describes it. */
#include <stdio.h>
#include <string.h>

#include "wmap/admission.h"
#include "wmap/definition.h"
#include "wmap/policy.h"
#include "wmap/schema.h"

#define MAX_FINDINGS 16 /* the denial message has room for a few; the rest are counted */

static int is_kind(const json_t *object, const char *api, const char *kind)
{
	const char *a = json_string_value(json_object_get(object, "apiVersion"));
	const char *k = json_string_value(json_object_get(object, "kind"));
	return a && k && strcmp(a, api) == 0 && strcmp(k, kind) == 0;
}

/* Appends every line of message (findings are one per line) to out. */
static int add_lines(json_t *out, const char *message)
{
	const char *m = message, *nl;
	size_t n = 0;
	for (; *m; m = nl ? nl + 1 : m + strlen(m)) {
		nl = strchr(m, '\n');
		size_t len = nl ? (size_t)(nl - m) : strlen(m);
		if (len == 0)
			continue;
		if (n++ == MAX_FINDINGS) {
			char more[64];
			snprintf(more, sizeof(more), "and more findings");
			return json_array_append_new(out, json_string(more)) ? -1 : 0;
		}
		if (json_array_append_new(out, json_stringn(m, len)))
			return -1;
	}
	return 0;
}

/* The schema check as admission warnings, short enough for the API server's limit. */
static int schema_warnings(json_t *warnings, const wmap_crd_lookup *crds, const wmap_definition *def)
{
	const wmap_gvk *gvk = def->n_components ? def->components[0].kind : NULL;
	json_t *crd, *findings = NULL, *f;
	wmap_error e = { 0 };
	size_t i;
	int rc = 0;
	if (!crds || !crds->find || !gvk || !gvk->group[0])
		return 0;
	if (!(crd = crds->find(crds->ctx, gvk->group, gvk->kind)))
		return 0; /* the CRD is not installed (yet): nothing to check against */
	if (wmap_schema_check(&findings, def, crd, &e) != 0) {
		json_decref(crd);
		return e.code == WMAP_ENOMEM ? -1 : 0;
	}
	json_array_foreach(findings, i, f) {
		const char *field = json_string_value(json_object_get(f, "field"));
		const char *path = json_string_value(json_object_get(f, "path"));
		const char *reason = json_string_value(json_object_get(f, "reason"));
		static const char prefix[] = ".spec.structureDefinition.";
		char msg[640];
		if (field && strncmp(field, prefix, sizeof(prefix) - 1) == 0)
			field += sizeof(prefix) - 1;
		if (path && *path)
			snprintf(msg, sizeof(msg), "wmap: %s: path \"%s\" is not in the schema of %s/%s %s: %s",
				 field, path, gvk->group, gvk->version, gvk->kind, reason);
		else
			snprintf(msg, sizeof(msg), "wmap: %s", reason);
		if (json_array_append_new(warnings, json_string(msg))) {
			rc = -1;
			break;
		}
	}
	json_decref(findings);
	json_decref(crd);
	return rc;
}

static int check_karta(json_t *violations, json_t *warnings, const wmap_admission_config *cfg,
		       const json_t *object, const char *name, wmap_error *err)
{
	wmap_definition *def = NULL;
	wmap_error e = { 0 };
	int rc = wmap_definition_load(&def, object, name, WMAP_ORIGIN_CLUSTER, NULL, 0, &e);
	if (rc == 0)
		rc = wmap_definition_check_jq(def, &e);
	if (rc == WMAP_ENOMEM || (rc == 0 && schema_warnings(warnings, cfg->crds, def) < 0)) {
		wmap_definition_free(def);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	wmap_definition_free(def);
	if (rc && add_lines(violations, e.message[0] ? e.message : wmap_error_name(rc)) < 0)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	return 0;
}

static int check_policy(json_t *violations, const json_t *object, const char *name, wmap_error *err)
{
	/* The status written by the webhook is not part of the document format. */
	json_t *copy = json_deep_copy(object), *docs = json_array();
	wmap_policy_set *set = NULL;
	wmap_error e = { 0 };
	int rc = 0;
	if (copy)
		json_object_del(copy, "status"); /* absent is fine */
	if (!copy || !docs || json_array_append(docs, copy)) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	int prc = wmap_policy_set_parse(&set, docs, name, NULL, &e);
	if (prc == WMAP_ENOMEM)
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	else if (prc && add_lines(violations, e.message) < 0)
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
cleanup:
	wmap_policy_set_free(set);
	json_decref(copy);
	json_decref(docs);
	return rc;
}

int wmap_admission_check_own_object(json_t **violations, json_t **warnings,
				    const wmap_admission_config *cfg, const json_t *object,
				    const char *operation, wmap_error *err)
{
	int karta = is_kind(object, "run.ai/v1alpha1", "Karta");
	int policy = is_kind(object, "wmap.io/v1alpha1", "WorkloadPolicy");
	const char *name;
	int rc;
	*violations = *warnings = NULL;
	if (!karta && !policy)
		return 0;
	if (!(*violations = json_array()) || !(*warnings = json_array()))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if (!wmap_policy_operation(operation))
		return 1; /* DELETE (and CONNECT) need no check */
	name = json_string_value(json_object_get(json_object_get(object, "metadata"), "name"));
	if (!name || !*name)
		name = karta ? "Karta" : "WorkloadPolicy";
	rc = karta ? check_karta(*violations, *warnings, cfg, object, name, err)
		   : check_policy(*violations, object, name, err);
	return rc ? rc : 1;
}
