/* wmap: root status evaluation, upstream's rules (reference 5.4).
 *
 * Statuses are tried in a fixed order (Resuming, Suspending, Suspended, Running, Failed,
 * Completed, Initializing, Degraded) and every one that matches is reported, so a workload
 * can be Running and Degraded at once; none matching is Undefined. */
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "wmap/json_text.h"

static char *dup_string(const json_t *v)
{
	if (!v || json_is_null(v))
		return NULL;
	if (json_is_string(v))
		return strdup(json_string_value(v));
	return wmap_json_text(v, NULL);
}

static int add_condition(wmap_status_result *r, const wmap_status_def *sd, const json_t *el)
{
	const char *type = json_string_value(json_object_get(el, sd->type_field));
	if (!json_is_object(el) || !type)
		return 0;
	wmap_condition *c = NULL;
	for (size_t i = 0; i < r->n_conditions; i++)
		if (strcmp(r->conditions[i].type, type) == 0) {
			c = &r->conditions[i]; /* last one wins, as upstream's map */
			free(c->status);
			free(c->reason);
			free(c->message);
			c->status = c->reason = c->message = NULL;
			break;
		}
	if (!c) {
		wmap_condition *nc = realloc(r->conditions, (r->n_conditions + 1) * sizeof(*nc));
		if (!nc)
			return -1;
		r->conditions = nc;
		c = &r->conditions[r->n_conditions++];
		memset(c, 0, sizeof(*c));
		if (!(c->type = strdup(type)))
			return -1;
	}
	const char *s;
	if ((s = json_string_value(json_object_get(el, sd->status_field))) && !(c->status = strdup(s)))
		return -1;
	if (sd->reason_field && (s = json_string_value(json_object_get(el, sd->reason_field))) &&
	    !(c->reason = strdup(s)))
		return -1;
	if (sd->message_field && (s = json_string_value(json_object_get(el, sd->message_field))) &&
	    !(c->message = strdup(s)))
		return -1;
	return 0;
}

static const wmap_condition *find_condition(const wmap_status_result *r, const char *type)
{
	for (size_t i = 0; i < r->n_conditions; i++)
		if (strcmp(r->conditions[i].type, type) == 0)
			return &r->conditions[i];
	return NULL;
}

static int matcher_matches(int *match, const wmap_matcher *m, const wmap_status_result *r,
			   wmap_engine *eng, const wmap_definition *def, wmap_input *in,
			   wmap_error *err)
{
	*match = 0;
	if (m->by_phase && (!r->phase || strcmp(m->by_phase, r->phase) != 0))
		return 0;
	for (size_t i = 0; i < m->n_conditions; i++) {
		const struct wmap_cond_match *cm = &m->conditions[i];
		const wmap_condition *c = cm->type ? find_condition(r, cm->type) : NULL;
		if (!c)
			return 0;
		if (cm->status && (!c->status || strcmp(cm->status, c->status) != 0))
			return 0;
		if (cm->reason && (!c->reason || strcmp(cm->reason, c->reason) != 0))
			return 0;
	}
	if (m->expression) {
		wmap_results res = { 0 };
		int rc = wmap__eval(&res, eng, def, m->expression, in, 0, err);
		if (rc)
			return rc;
		/* `(<expr>) | tostring` of the first output: "true" matches true and "true". */
		const json_t *first = res.n ? res.v[0].value : NULL;
		char *got = dup_string(first);
		if (!got && first && !json_is_null(first)) {
			wmap__results_clear(&res); /* out of memory, not "no match" */
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
		int ok = got && m->expected && strcmp(got, m->expected) == 0;
		free(got);
		wmap__results_clear(&res);
		if (!ok)
			return 0;
	}
	*match = 1;
	return 0;
}

void wmap__status_result_clear(wmap_status_result *r)
{
	for (size_t i = 0; i < r->n_conditions; i++) {
		free(r->conditions[i].type);
		free(r->conditions[i].status);
		free(r->conditions[i].reason);
		free(r->conditions[i].message);
	}
	free(r->conditions);
	free(r->phase);
	memset(r, 0, sizeof(*r));
}

int wmap__status_eval(wmap_status_result *r, wmap_engine *eng, const wmap_definition *def,
		      wmap_input *in, wmap_error *err)
{
	const wmap_status_def *sd = def->components[0].status;
	wmap_results res = { 0 };
	int rc = 0;

	memset(r, 0, sizeof(*r));
	if (!sd)
		return 0;
	if (sd->phase_path) {
		if ((rc = wmap__eval(&res, eng, def, sd->phase_path, in, 0, err)))
			goto out;
		if (res.n && res.v[0].value && !json_is_null(res.v[0].value) &&
		    !(r->phase = dup_string(res.v[0].value)))
			goto oom;
		wmap__results_clear(&res);
	}
	if (sd->conditions_path) {
		if ((rc = wmap__eval(&res, eng, def, sd->conditions_path, in, 0, err)))
			goto out;
		for (size_t i = 0; i < res.n; i++) {
			const json_t *v = res.v[i].value;
			if (json_is_array(v)) {
				size_t k;
				json_t *el;
				json_array_foreach(v, k, el)
					if (add_condition(r, sd, el))
						goto oom;
			} else if (v && add_condition(r, sd, v)) {
				goto oom;
			}
		}
		wmap__results_clear(&res);
	}
	for (int s = 0; s < WMAP_STATUS_COUNT; s++)
		for (size_t i = 0; i < sd->n_matchers[s]; i++) {
			int match;
			if ((rc = matcher_matches(&match, &sd->matchers[s][i], r, eng, def, in, err)))
				goto out;
			if (match) {
				r->statuses |= 1u << s;
				break;
			}
		}
	goto out;
oom:
	rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
out:
	wmap__results_clear(&res);
	if (rc)
		wmap__status_result_clear(r);
	return rc;
}

int wmap_status_evaluate(unsigned *statuses, wmap_engine *eng, const wmap_definition *def,
			 json_t *object, wmap_error *err)
{
	wmap_input in = { object, NULL, NULL };
	wmap_status_result r;
	int rc = wmap__status_eval(&r, eng, def, &in, err);
	wmap__input_release(&in);
	if (rc)
		return rc;
	*statuses = r.statuses;
	wmap__status_result_clear(&r);
	return 0;
}
