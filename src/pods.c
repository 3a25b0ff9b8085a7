/* wmap: pod-side queries and suspend/resume actions (see pods.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "wmap/json_text.h"
#include "wmap/patch.h"
#include "wmap/pods.h"

static int eval_on(wmap_results *r, wmap_engine *eng, const wmap_definition *def,
		   const wmap_expr *e, json_t *object, int pointers, wmap_error *err)
{
	wmap_input in = { object, NULL, NULL };
	int rc = wmap__eval(r, eng, def, e, &in, pointers, err);

	wmap__input_release(&in);
	return rc;
}

int wmap_pod_matches_component(int *out, wmap_engine *eng, const wmap_definition *def,
			       int ci, json_t *pod, wmap_error *err)
{
	const wmap_component *c;
	wmap_results r = { 0 };
	int rc = 0, match = 1;

	*out = -1;
	if (ci < 0 || (size_t)ci >= def->n_components)
		return wmap_error_set(err, WMAP_EINVAL, "no component %d", ci);
	c = &def->components[ci];
	if (!c->type_key_path && !c->match_labels)
		return 0;
	if (c->match_labels) {
		const json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
		const char *k;
		json_t *v;

		json_object_foreach(c->match_labels, k, v) {
			const json_t *have = json_object_get(labels, k);

			if (!json_is_string(have) || !json_equal(have, v))
				match = 0;
		}
	}
	if (match && c->type_key_path) {
		int any = 0;

		if ((rc = eval_on(&r, eng, def, c->type_key_path, pod, 0, err)) != 0)
			goto cleanup;
		for (size_t i = 0; i < r.n && !any; i++) {
			const json_t *v = r.v[i].value;

			if (!v || json_is_null(v))
				continue;
			/* Upstream compares `<keyPath> == "<value>"`: a string comparison. */
			any = !c->type_value ||
			      (json_is_string(v) && strcmp(json_string_value(v), c->type_value) == 0);
		}
		match = any;
	}
	*out = match;
cleanup:
	wmap__results_clear(&r);
	return rc;
}

int wmap_pod_key(char **out, wmap_engine *eng, const wmap_definition *def, int ci,
		 json_t *pod, int replica, wmap_error *err)
{
	const wmap_expr *e;
	wmap_results r = { 0 };
	size_t n = 0, at = 0;
	int rc;

	*out = NULL;
	if (ci < 0 || (size_t)ci >= def->n_components)
		return wmap_error_set(err, WMAP_EINVAL, "no component %d", ci);
	e = replica ? def->components[ci].replica_key_path : def->components[ci].pod_instance_id_path;
	if (!e)
		return 0;
	if ((rc = eval_on(&r, eng, def, e, pod, 0, err)) != 0)
		goto cleanup;
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i].value && !json_is_null(r.v[i].value)) {
			n++;
			at = i;
		}
	if (n != 1) {
		rc = wmap_error_set(err, WMAP_EEVAL, "%s: expected single query result, got %zu",
				    wmap_expr_text(e), n);
		goto cleanup;
	}
	{
		const json_t *v = r.v[at].value;
		char buf[128];

		if (json_is_string(v))
			*out = strdup(json_string_value(v));
		else if (json_is_integer(v))
			snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v)),
				*out = strdup(buf);
		else
			*out = wmap_json_text(v, NULL);
		if (!*out) {
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			goto cleanup;
		}
		if (!(*out)[0]) {
			free(*out);
			*out = NULL;
			rc = wmap_error_set(err, WMAP_EEVAL, "%s: query result is empty",
					    wmap_expr_text(e));
		}
	}
cleanup:
	wmap__results_clear(&r);
	return rc;
}

/* Components in the order their actions run: suspend goes leaves first, resume root
 * first. A component's depth is its number of ancestors. */
static int depth_of(const wmap_definition *def, int i)
{
	int d = 0;

	while (i >= 0 && (size_t)i < def->n_components && def->components[i].parent >= 0 && d < 64) {
		i = def->components[i].parent;
		d++;
	}
	return d;
}

static int apply_actions(wmap_patch *pb, wmap_engine *eng, const wmap_definition *def,
			 const wmap_component *c, json_t *object, int resume, wmap_error *err)
{
	size_t n = resume ? c->n_resume : c->n_suspend;
	const wmap_action *acts = resume ? c->resume : c->suspend;
	wmap_results r = { 0 };
	int rc = 0;

	for (size_t a = 0; a < n && rc == 0; a++) {
		wmap__results_clear(&r);
		if ((rc = eval_on(&r, eng, def, acts[a].path, object, 1, err)) != 0)
			break;
		if (r.n == 0) {
			rc = wmap_error_set(err, WMAP_EEVAL,
					    "component %s: %s action path %s selects nothing",
					    c->name, resume ? "resume" : "suspend",
					    wmap_expr_text(acts[a].path));
			break;
		}
		for (size_t i = 0; i < r.n && rc == 0; i++) {
			if (!r.v[i].pointer || !r.v[i].pointer[0]) {
				rc = wmap_error_set(err, WMAP_EEVAL,
						    "component %s: %s action path %s is not a "
						    "writable location",
						    c->name,
						    resume ? "resume" : "suspend",
						    wmap_expr_text(acts[a].path));
				break;
			}
			rc = wmap_patch_set_at(pb, r.v[i].pointer, json_deep_copy(acts[a].value),
					       WMAP_PATCH_OVERRIDE, NULL, err);
		}
	}
	wmap__results_clear(&r);
	return rc;
}

int wmap_actions_patch(json_t **out, wmap_engine *eng, const wmap_definition *def,
		       json_t *object, int resume, wmap_error *err)
{
	wmap_patch *pb = NULL;
	size_t total = 0;
	int rc, maxd = 0;

	*out = NULL;
	for (size_t i = 0; i < def->n_components; i++) {
		total += resume ? def->components[i].n_resume : def->components[i].n_suspend;
		if (depth_of(def, (int)i) > maxd)
			maxd = depth_of(def, (int)i);
	}
	if (total == 0)
		return wmap_error_set(err, WMAP_ENOTFOUND,
				      "definition %s has no %s actions", def->name,
				      resume ? "resume" : "suspend");
	if ((rc = wmap_patch_new(&pb, object, err)) != 0)
		return rc;
	for (int d = 0; d <= maxd && rc == 0; d++) {
		int depth = resume ? d : maxd - d;

		for (size_t i = 0; i < def->n_components && rc == 0; i++)
			if (depth_of(def, (int)i) == depth)
				rc = apply_actions(pb, eng, def, &def->components[i], object, resume,
						   err);
	}
	if (rc == 0 && (*out = json_deep_copy(wmap_patch_ops(pb))) == NULL)
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	wmap_patch_free(pb);
	return rc;
}
