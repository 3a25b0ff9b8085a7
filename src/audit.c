/* wmap: policy evaluation with structured results (see wmap/audit.h). The check itself
 * lives in admission.c beside the mutation it mirrors (wmap__audit_object): a policy is
 * checked by building its patch against the object and recording each write it would
 * make, so that what /validate, the audit and the mutation call a difference is one rule. */
#include <stdlib.h>
#include <string.h>
#include "audit_int.h"
#include "wmap/audit.h"
#include "wmap/patch.h"

void wmap_audit_result_free(wmap_audit_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_policies; i++)
		free(r->policies[i]);
	free(r->policies);
	for (size_t i = 0; i < r->n; i++) {
		wmap_violation *v = &r->violations[i];
		free(v->policy);
		free(v->component);
		free(v->instance);
		free(v->field);
		free(v->want);
		free(v->have);
		free(v->message);
	}
	free(r->violations);
	for (size_t i = 0; i < r->n_warnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	memset(r, 0, sizeof(*r));
}

wmap_violation *wmap__audit_push(wmap_audit_result *r)
{
	wmap_violation *nv = realloc(r->violations, (r->n + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	r->violations = nv;
	memset(&nv[r->n], 0, sizeof(nv[r->n]));
	return &nv[r->n++];
}

/* The notes of the check (a JSON array of strings) as r->warnings. */
static int take_warnings(wmap_audit_result *r, const json_t *notes, wmap_error *err)
{
	size_t n = json_array_size(notes);
	if (n == 0)
		return 0;
	if (!(r->warnings = calloc(n, sizeof(*r->warnings))))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (!(r->warnings[i] = strdup(json_string_value(json_array_get(notes, i)))))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		r->n_warnings++;
	}
	return 0;
}

int wmap_audit_object(wmap_audit_result *out, wmap_engine *eng, const wmap_admission_config *cfg,
		      const json_t *object, unsigned op, wmap_error *err)
{
	json_t *notes = json_array();
	int rc;
	if (!notes) {
		memset(out, 0, sizeof(*out));
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	rc = wmap__audit_object(out, notes, NULL, eng, cfg, object, op, NULL, err);
	if (rc == 0 && out->n_policies == 0 && !out->owned && op && json_is_object(object)) {
		/* No policy matched, so nothing was resolved: an object of a kind no definition
		 * covers (a ConfigMap in a manifest) is still skipped, not counted as checked,
		 * whatever the policies match. */
		const wmap_definition *def;
		rc = wmap_registry_find_object(&def, wmap_engine_registry(eng), object, err);
	}
	if (rc == 0)
		rc = take_warnings(out, notes, err);
	json_decref(notes);
	return rc;
}

int wmap_audit_admitted(json_t **out, wmap_engine *eng, const wmap_admission_config *cfg,
			const json_t *object, unsigned op, wmap_error *err)
{
	json_t *patch = NULL, *warnings = NULL, *copy = NULL;
	const char *opname = op == WMAP_POLICY_OP_UPDATE ? "UPDATE" : "CREATE";
	int rc;
	*out = NULL;
	/* The mutation reads the object only; the copy is what the patch is applied to. */
	rc = wmap_admission_mutate(&patch, &warnings, NULL, eng, cfg, (json_t *)object, opname,
				   NULL, err);
	if (rc)
		goto done;
	if (!(copy = json_deep_copy(object))) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto done;
	}
	if ((rc = wmap_patch_apply(&copy, patch, err)))
		goto done;
	*out = copy;
	copy = NULL;
done:
	json_decref(copy);
	json_decref(patch);
	json_decref(warnings);
	return rc;
}

unsigned wmap_audit_worst(const wmap_audit_result *r)
{
	unsigned all = 0;
	for (size_t i = 0; r && i < r->n; i++)
		all |= r->violations[i].actions;
	if (all & WMAP_ACTION_DENY)
		return WMAP_ACTION_DENY;
	if (all & WMAP_ACTION_WARN)
		return WMAP_ACTION_WARN;
	return all & WMAP_ACTION_AUDIT;
}
