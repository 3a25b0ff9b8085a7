/* wmap: WorkloadPolicy documents (see wmap/policy.h). */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wmap/patch.h"
#include "wmap/pointer.h"
#include "wmap/policy.h"
#include "wmap/quantity.h"
#include "wmap/yaml.h"

#define POLICY_API "wmap.io/v1alpha1"
#define POLICY_KIND "WorkloadPolicy"

typedef struct ctx {
	const char *name;
	const json_t *positions;
	int doc;
	wmap_error *err;
} ctx;

/* An error at the JSON pointer ptr of the current document: "file:line:col: ptr: msg". */
static int fail(const ctx *c, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(const ctx *c, const char *ptr, const char *fmt, ...)
{
	char where[512], key[1024], msg[1024], path[512];
	snprintf(key, sizeof(key), "%d%s", c->doc, ptr);
	wmap_yaml_position(where, sizeof(where), c->positions, c->name, key);
	/* ".spec.match.kinds" reads better in messages than the pointer; a key keeps its own
	 * slashes (".spec.limits.pod.nvidia.com/gpu"). */
	size_t n = 0;
	for (const char *s = ptr; *s && n + 1 < sizeof(path); s++) {
		if (s[0] == '~' && (s[1] == '0' || s[1] == '1'))
			path[n++] = *++s == '0' ? '~' : '/';
		else
			path[n++] = *s == '/' ? '.' : *s;
	}
	path[n] = '\0';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return wmap_error_set(c->err, WMAP_EINVAL, "%s: document %d: %s: %s", where, c->doc + 1,
			      n ? path : ".", msg);
}

/* The pointer of member key under ptr, escaped as the position table keys it. */
static void member(char *buf, size_t len, const char *ptr, const char *key)
{
	int n = snprintf(buf, len, "%s/", ptr);
	if (n > 0 && (size_t)n < len)
		wmap_pointer_escape(buf + n, len - (size_t)n, key);
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void limits_free(wmap_policy_limit *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].resource);
		free(v[i].text);
	}
	free(v);
}

static void policy_clear(wmap_policy *p)
{
	free(p->name);
	free(p->where);
	free_strv(p->kinds, p->n_kinds);
	free_strv(p->namespaces, p->n_namespaces);
	free_strv(p->exclude, p->n_exclude);
	free_strv(p->components, p->n_components);
	json_decref(p->selector);
	json_decref(p->labels);
	json_decref(p->annotations);
	json_decref(p->node_selector);
	json_decref(p->tolerations);
	free(p->priority_class_name);
	free(p->scheduler_name);
	free(p->runtime_class_name);
	free(p->queue);
	limits_free(p->workload_limits, p->n_workload_limits);
	limits_free(p->pod_limits, p->n_pod_limits);
}

void wmap_policy_set_free(wmap_policy_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		policy_clear(&set->policies[i]);
	free(set->policies);
	free(set->source);
	free(set);
}

/* Only the listed keys may appear in obj (typos are errors, not silent no-ops). */
static int only_keys(const ctx *c, const char *ptr, const json_t *obj, const char *const *keys)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v) {
		const char *const *kk = keys;
		while (*kk && strcmp(*kk, k) != 0)
			kk++;
		if (!*kk) {
			char sub[512];
			snprintf(sub, sizeof(sub), "%s/%s", ptr, k);
			return fail(c, sub, "unknown field \"%s\"", k);
		}
	}
	return 0;
}

static int get_strv(const ctx *c, const char *ptr, const json_t *v, char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return fail(c, ptr, "must be a list of strings");
	char **list = calloc(json_array_size(v) + 1, sizeof(*list));
	if (!list)
		return wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e) {
		if (!json_is_string(e) || !json_string_length(e)) {
			free_strv(list, i);
			char sub[512];
			snprintf(sub, sizeof(sub), "%s/%zu", ptr, i);
			return fail(c, sub, "must be a non-empty string");
		}
		if (!(list[i] = strdup(json_string_value(e)))) {
			free_strv(list, i);
			return wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
		}
	}
	*out = list;
	*n = json_array_size(v);
	return 0;
}

static int get_str(const ctx *c, const char *ptr, const json_t *v, char **out)
{
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || !json_string_length(v))
		return fail(c, ptr, "must be a non-empty string");
	if (!(*out = strdup(json_string_value(v))))
		return wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
	return 0;
}

/* A map of label or annotation keys to string values; label values checked when labels. */
static int get_map(const ctx *c, const char *ptr, const json_t *v, int label_values,
		   json_t **out)
{
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return fail(c, ptr, "must be a map of strings");
	const char *k;
	json_t *e;
	json_object_foreach((json_t *)v, k, e) {
		char sub[512];
		member(sub, sizeof(sub), ptr, k);
		if (!wmap_label_key_valid(k))
			return fail(c, sub, "\"%s\" is not a valid key ([prefix/]name)", k);
		if (!json_is_string(e))
			return fail(c, sub, "must be a string (quote numbers and booleans)");
		if (label_values && !wmap_label_value_valid(json_string_value(e)))
			return fail(c, sub, "\"%s\" is not a valid label value (63 characters of "
					    "[A-Za-z0-9_.-], alphanumeric at both ends)",
				    json_string_value(e));
	}
	*out = json_deep_copy(v);
	return *out ? 0 : wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
}

static int check_selector(const ctx *c, const char *ptr, const json_t *sel)
{
	static const char *const keys[] = { "matchLabels", "matchExpressions", NULL };
	if (!json_is_object(sel))
		return fail(c, ptr, "must be a label selector {matchLabels, matchExpressions}");
	int rc = only_keys(c, ptr, sel, keys);
	if (rc)
		return rc;
	char sub[512];
	json_t *ml = json_object_get(sel, "matchLabels");
	json_t *tmp = NULL;
	snprintf(sub, sizeof(sub), "%s/matchLabels", ptr);
	if ((rc = get_map(c, sub, ml, 1, &tmp)))
		return rc;
	json_decref(tmp);
	json_t *me = json_object_get(sel, "matchExpressions");
	if (!me)
		return 0;
	snprintf(sub, sizeof(sub), "%s/matchExpressions", ptr);
	if (!json_is_array(me))
		return fail(c, sub, "must be a list");
	size_t i;
	json_t *e;
	json_array_foreach(me, i, e) {
		static const char *const ekeys[] = { "key", "operator", "values", NULL };
		snprintf(sub, sizeof(sub), "%s/matchExpressions/%zu", ptr, i);
		if (!json_is_object(e))
			return fail(c, sub, "must be {key, operator, values}");
		if ((rc = only_keys(c, sub, e, ekeys)))
			return rc;
		const char *key = json_string_value(json_object_get(e, "key"));
		const char *op = json_string_value(json_object_get(e, "operator"));
		json_t *vals = json_object_get(e, "values");
		if (!key || !wmap_label_key_valid(key))
			return fail(c, sub, "needs a valid key");
		int set_op = op && (!strcmp(op, "In") || !strcmp(op, "NotIn"));
		int ex_op = op && (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist"));
		if (!set_op && !ex_op)
			return fail(c, sub, "operator must be In, NotIn, Exists or DoesNotExist");
		if (set_op && (!json_is_array(vals) || json_array_size(vals) == 0))
			return fail(c, sub, "%s needs a non-empty values list", op);
		if (ex_op && vals && json_array_size(vals) > 0)
			return fail(c, sub, "%s takes no values", op);
		size_t j;
		json_t *v;
		json_array_foreach(vals, j, v) {
			if (!json_is_string(v))
				return fail(c, sub, "values must be strings");
		}
	}
	return 0;
}

static int parse_match(const ctx *c, wmap_policy *p, const json_t *m)
{
	static const char *const keys[] = { "kinds", "namespaces", "excludeNamespaces",
					    "selector", "components", "operations", NULL };
	int rc;
	p->operations = WMAP_POLICY_OP_CREATE;
	if (!m || json_is_null(m))
		return 0;
	if (!json_is_object(m))
		return fail(c, "/spec/match", "must be a map");
	if ((rc = only_keys(c, "/spec/match", m, keys)) ||
	    (rc = get_strv(c, "/spec/match/kinds", json_object_get(m, "kinds"), &p->kinds,
			   &p->n_kinds)) ||
	    (rc = get_strv(c, "/spec/match/namespaces", json_object_get(m, "namespaces"),
			   &p->namespaces, &p->n_namespaces)) ||
	    (rc = get_strv(c, "/spec/match/excludeNamespaces",
			   json_object_get(m, "excludeNamespaces"), &p->exclude, &p->n_exclude)) ||
	    (rc = get_strv(c, "/spec/match/components", json_object_get(m, "components"),
			   &p->components, &p->n_components)))
		return rc;
	json_t *sel = json_object_get(m, "selector");
	if (sel && !json_is_null(sel)) {
		if ((rc = check_selector(c, "/spec/match/selector", sel)))
			return rc;
		p->selector = json_deep_copy(sel);
	}
	char **ops = NULL;
	size_t n_ops = 0;
	if ((rc = get_strv(c, "/spec/match/operations", json_object_get(m, "operations"), &ops,
			   &n_ops)))
		return rc;
	if (ops) {
		p->operations = 0;
		for (size_t i = 0; i < n_ops; i++) {
			unsigned bit = wmap_policy_operation(ops[i]);
			if (!bit) {
				char sub[64];
				snprintf(sub, sizeof(sub), "/spec/match/operations/%zu", i);
				rc = fail(c, sub, "\"%s\": operations are CREATE and UPDATE", ops[i]);
				break;
			}
			p->operations |= bit;
		}
		free_strv(ops, n_ops);
	}
	return rc;
}

static int parse_template(const ctx *c, wmap_policy *p, const json_t *t)
{
	static const char *const keys[] = { "labels", "annotations", "priorityClassName",
					    "schedulerName", "runtimeClassName", "nodeSelector",
					    "tolerations", NULL };
	int rc;
	if (!t || json_is_null(t))
		return 0;
	if (!json_is_object(t))
		return fail(c, "/spec/podTemplate", "must be a map");
	if ((rc = only_keys(c, "/spec/podTemplate", t, keys)) ||
	    (rc = get_map(c, "/spec/podTemplate/labels", json_object_get(t, "labels"), 1,
			  &p->labels)) ||
	    (rc = get_map(c, "/spec/podTemplate/annotations", json_object_get(t, "annotations"),
			  0, &p->annotations)) ||
	    (rc = get_map(c, "/spec/podTemplate/nodeSelector",
			  json_object_get(t, "nodeSelector"), 1, &p->node_selector)) ||
	    (rc = get_str(c, "/spec/podTemplate/priorityClassName",
			  json_object_get(t, "priorityClassName"), &p->priority_class_name)) ||
	    (rc = get_str(c, "/spec/podTemplate/schedulerName",
			  json_object_get(t, "schedulerName"), &p->scheduler_name)) ||
	    (rc = get_str(c, "/spec/podTemplate/runtimeClassName",
			  json_object_get(t, "runtimeClassName"), &p->runtime_class_name)))
		return rc;
	json_t *tol = json_object_get(t, "tolerations");
	if (tol && !json_is_null(tol)) {
		static const char *const tkeys[] = { "key", "operator", "value", "effect",
						     "tolerationSeconds", NULL };
		if (!json_is_array(tol))
			return fail(c, "/spec/podTemplate/tolerations", "must be a list");
		size_t i;
		json_t *e;
		json_array_foreach(tol, i, e) {
			char sub[64];
			snprintf(sub, sizeof(sub), "/spec/podTemplate/tolerations/%zu", i);
			if (!json_is_object(e))
				return fail(c, sub, "must be a toleration {key, operator, value, "
						    "effect}");
			if ((rc = only_keys(c, sub, e, tkeys)))
				return rc;
		}
		p->tolerations = json_deep_copy(tol);
	}
	return 0;
}

/* One map of spec.limits (workload or pod): resource name -> quantity, in ResourceQuota's
 * vocabulary. A number is read as kubectl would write it ("64", "0.5"). */
static int parse_limit_map(const ctx *c, const char *ptr, const json_t *m, int per_pod,
			   wmap_policy_limit **out, size_t *n_out)
{
	const char *k;
	json_t *v;
	if (!json_is_object(m))
		return fail(c, ptr, "must be a map of resource names to quantities "
				    "({nvidia.com/gpu: 8, memory: 1Ti})");
	if (json_object_size(m) == 0)
		return fail(c, ptr, "lists no resource (leave it out instead)");
	if (json_object_size(m) > WMAP_POLICY_MAX_LIMITS)
		return fail(c, ptr, "lists %zu resources; at most %d", json_object_size(m),
			    WMAP_POLICY_MAX_LIMITS);
	if (!(*out = calloc(json_object_size(m), sizeof(**out))))
		return wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
	json_object_foreach((json_t *)m, k, v) {
		char sub[512], num[64];
		const char *text = json_string_value(v);
		wmap_error qe;
		int64_t milli = 0;
		member(sub, sizeof(sub), ptr, k);
		if (!wmap_label_key_valid(k))
			return fail(c, sub, "\"%s\" is not a resource name ([prefix/]name, as "
					    "nvidia.com/gpu)",
				    k);
		if (per_pod && strcmp(k, "pods") == 0)
			return fail(c, sub, "pods counts a workload's pods: give it under "
					    "limits.workload");
		if (json_is_integer(v)) {
			snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
			text = num;
		} else if (json_is_real(v)) {
			wmap_quantity_format_number(num, sizeof(num), json_real_value(v));
			text = num;
		}
		if (!text)
			return fail(c, sub, "must be a quantity (\"64\", \"500m\", \"4Ti\")");
		if (wmap_quantity_parse_milli(&milli, text, &qe) != 0)
			return fail(c, sub, "%s", qe.message);
		if (milli < 0)
			return fail(c, sub, "\"%s\" is negative", text);
		wmap_policy_limit *l = &(*out)[*n_out];
		if (!(l->resource = strdup(k)) || !(l->text = strdup(text))) {
			free(l->resource); /* the entry is not counted yet */
			l->resource = NULL;
			return wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
		}
		l->milli = milli;
		(*n_out)++;
	}
	return 0;
}

static int parse_limits(const ctx *c, wmap_policy *p, const json_t *l)
{
	static const char *const keys[] = { "workload", "pod", NULL };
	json_t *w, *pod;
	int rc;
	if (!l || json_is_null(l))
		return 0;
	if (!json_is_object(l))
		return fail(c, "/spec/limits", "must be {workload, pod}");
	if ((rc = only_keys(c, "/spec/limits", l, keys)))
		return rc;
	w = json_object_get(l, "workload");
	pod = json_object_get(l, "pod");
	if ((!w || json_is_null(w)) && (!pod || json_is_null(pod)))
		return fail(c, "/spec/limits", "needs workload (totals) or pod (any one pod)");
	if (w && !json_is_null(w) &&
	    (rc = parse_limit_map(c, "/spec/limits/workload", w, 0, &p->workload_limits,
				  &p->n_workload_limits)))
		return rc;
	if (pod && !json_is_null(pod) &&
	    (rc = parse_limit_map(c, "/spec/limits/pod", pod, 1, &p->pod_limits,
				  &p->n_pod_limits)))
		return rc;
	return 0;
}

static const char *const action_names[] = { "Deny", "Warn", "Audit" };

/* spec.validationActions (Kubernetes' ValidatingAdmissionPolicy names and rules), or the
 * older spec.enforce (true = [Deny], false = none); *at gets the field's pointer. */
static int parse_actions(const ctx *c, wmap_policy *p, const json_t *spec, const char **at)
{
	json_t *enforce = json_object_get(spec, "enforce");
	json_t *va = json_object_get(spec, "validationActions");
	p->actions = 0;
	if (enforce && va)
		return fail(c, "/spec/enforce", "give validationActions or enforce, not both "
						"(enforce: true is validationActions: [Deny])");
	if (enforce) {
		*at = "/spec/enforce";
		if (!json_is_boolean(enforce))
			return fail(c, *at, "must be true or false");
		p->actions = json_is_true(enforce) ? WMAP_ACTION_DENY : 0;
		return 0;
	}
	*at = "/spec/validationActions";
	if (!va || json_is_null(va))
		return 0;
	if (!json_is_array(va) || json_array_size(va) == 0)
		return fail(c, *at, "must be a list of Deny, Warn and Audit (leave it out for a "
				    "policy that only mutates)");
	size_t i;
	json_t *e;
	json_array_foreach(va, i, e) {
		char sub[64];
		const char *s = json_string_value(e);
		unsigned bit = 0;
		snprintf(sub, sizeof(sub), "%s/%zu", *at, i);
		for (unsigned k = 0; s && k < 3; k++) {
			if (strcmp(s, action_names[k]) == 0)
				bit = 1u << k;
		}
		if (!bit)
			return fail(c, sub, "\"%s\" is not an action: Deny, Warn or Audit",
				    s ? s : "(not a string)");
		if (p->actions & bit)
			return fail(c, sub, "%s is given twice", s);
		p->actions |= bit;
		if ((p->actions & WMAP_ACTION_DENY) && (p->actions & WMAP_ACTION_WARN))
			return fail(c, sub, "Deny and Warn may not be combined (Audit combines "
					    "with either)");
	}
	return 0;
}

int wmap_policy_needs_validation(const wmap_policy *p)
{
	return p->actions != 0;
}

int wmap_policy_sets_template(const wmap_policy *p)
{
	return p->labels || p->annotations || p->node_selector || p->tolerations ||
	       p->priority_class_name || p->scheduler_name || p->runtime_class_name;
}

int wmap_policy_writes(const wmap_policy *p)
{
	return p->mode != WMAP_POLICY_REQUIRE && (wmap_policy_sets_template(p) || p->has_gang || p->queue);
}

size_t wmap_policy_actions_format(char *buf, size_t len, unsigned actions)
{
	size_t n = 0;
	if (len)
		buf[0] = '\0';
	for (unsigned k = 0; k < 3; k++) {
		if (!(actions & (1u << k)))
			continue;
		int w = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "%s%s",
				 n ? "," : "", action_names[k]);
		n += w > 0 ? (size_t)w : 0;
	}
	return n;
}

static int parse_one(const ctx *c, wmap_policy *p, const json_t *doc)
{
	static const char *const top[] = { "apiVersion", "kind", "metadata", "spec", NULL };
	static const char *const spec_keys[] = { "match", "mode", "enforce",
						 "validationActions", "podTemplate", "gang",
						 "limits", NULL };
	int rc;
	char where[512], key[32];
	snprintf(key, sizeof(key), "%d", c->doc);
	wmap_yaml_position(where, sizeof(where), c->positions, c->name, key);
	if (!(p->where = strdup(where)))
		return wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
	if (!json_is_object(doc))
		return fail(c, "", "a WorkloadPolicy must be a map");
	const char *api = json_string_value(json_object_get(doc, "apiVersion"));
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	if (!api || strcmp(api, POLICY_API) != 0 || !kind || strcmp(kind, POLICY_KIND) != 0)
		return fail(c, "", "expected apiVersion %s and kind %s", POLICY_API, POLICY_KIND);
	if ((rc = only_keys(c, "", doc, top)))
		return rc;
	const char *name = json_string_value(json_object_get(json_object_get(doc, "metadata"),
							     "name"));
	if (!name || !*name)
		return fail(c, "/metadata", "needs a name");
	if (!(p->name = strdup(name)))
		return wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
	json_t *spec = json_object_get(doc, "spec");
	if (!json_is_object(spec))
		return fail(c, "/spec", "needs a spec map");
	if ((rc = only_keys(c, "/spec", spec, spec_keys)) ||
	    (rc = parse_match(c, p, json_object_get(spec, "match"))) ||
	    (rc = parse_template(c, p, json_object_get(spec, "podTemplate"))) ||
	    (rc = parse_limits(c, p, json_object_get(spec, "limits"))))
		return rc;
	json_t *mode = json_object_get(spec, "mode");
	const char *m = json_string_value(mode);
	if (mode && !(m && (!strcmp(m, "default") || !strcmp(m, "override") ||
			    !strcmp(m, "require"))))
		return fail(c, "/spec/mode", "must be default, override or require");
	p->mode = !m || !strcmp(m, "default") ? WMAP_POLICY_DEFAULT
		  : !strcmp(m, "override")    ? WMAP_POLICY_OVERRIDE
					      : WMAP_POLICY_REQUIRE;
	const char *actions_at = NULL;
	if ((rc = parse_actions(c, p, spec, &actions_at)))
		return rc;
	json_t *gang = json_object_get(spec, "gang");
	if (gang && !json_is_null(gang)) {
		static const char *const gkeys[] = { "scheduler", "queue", NULL };
		if (!json_is_object(gang))
			return fail(c, "/spec/gang", "must be {scheduler, queue}");
		if ((rc = only_keys(c, "/spec/gang", gang, gkeys)) ||
		    (rc = get_str(c, "/spec/gang/queue", json_object_get(gang, "queue"),
				  &p->queue)))
			return rc;
		if (p->queue && !wmap_label_value_valid(p->queue))
			return fail(c, "/spec/gang/queue", "\"%s\" is not a valid label value",
				    p->queue);
		json_t *s = json_object_get(gang, "scheduler");
		if (s) {
			wmap_error e2;
			if (wmap_gang_scheduler_parse(&p->gang, json_string_value(s), &e2))
				return fail(c, "/spec/gang/scheduler", "%s", e2.message);
			p->has_gang = 1;
		}
	}
	if (p->mode == WMAP_POLICY_REQUIRE && !p->actions)
		return fail(c, "/spec/mode", "require writes nothing and only checks: give "
					     "validationActions (Deny, Warn or Audit)");
	if (p->mode == WMAP_POLICY_REQUIRE && (p->has_gang || p->queue))
		return fail(c, "/spec/gang", "a require policy writes nothing: gang hints need "
					     "mode default or override");
	if ((p->n_workload_limits || p->n_pod_limits) && !p->actions)
		return fail(c, "/spec/limits", "limits are checks: give validationActions (Deny, "
					       "Warn or Audit)");
	if (p->actions && !wmap_policy_sets_template(p) && !p->n_workload_limits && !p->n_pod_limits)
		return fail(c, actions_at, "a policy with validation actions needs podTemplate "
					   "settings or limits to check");
	return 0;
}

int wmap_policy_set_parse(wmap_policy_set **out, const json_t *docs, const char *name,
			  const json_t *positions, wmap_error *err)
{
	*out = NULL;
	if (!json_is_array(docs))
		return wmap_error_set(err, WMAP_EINVAL, "%s: expected YAML documents", name);
	wmap_policy_set *set = calloc(1, sizeof(*set));
	if (!set || !(set->source = strdup(name)) ||
	    !(set->policies = calloc(json_array_size(docs) + 1, sizeof(*set->policies)))) {
		wmap_policy_set_free(set);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	size_t i;
	json_t *doc;
	json_array_foreach(docs, i, doc) {
		ctx c = { name, positions, (int)i, err };
		int rc = parse_one(&c, &set->policies[set->n++], doc);
		if (rc) {
			wmap_policy_set_free(set);
			return rc;
		}
		for (size_t j = 0; j + 1 < set->n; j++) {
			if (strcmp(set->policies[j].name, set->policies[i].name) == 0) {
				fail(&c, "/metadata/name", "policy \"%s\" is defined twice (first at %s)",
				     set->policies[i].name, set->policies[j].where);
				wmap_policy_set_free(set);
				return WMAP_EINVAL;
			}
		}
	}
	*out = set;
	return 0;
}

int wmap_policy_set_load(wmap_policy_set **out, const char *path, wmap_error *err)
{
	json_t *docs = NULL, *positions = json_object();
	*out = NULL;
	if (!positions)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	wmap_yaml_opts opts = { 0 };
	opts.positions = positions;
	int rc = wmap_yaml_parse_file(&docs, path, &opts, err);
	if (rc == 0)
		rc = wmap_policy_set_parse(out, docs, path, positions, err);
	json_decref(docs);
	json_decref(positions);
	return rc;
}

/* ---- matching ---------------------------------------------------------------------- */

unsigned wmap_policy_operation(const char *operation)
{
	if (operation && strcmp(operation, "CREATE") == 0)
		return WMAP_POLICY_OP_CREATE;
	if (operation && strcmp(operation, "UPDATE") == 0)
		return WMAP_POLICY_OP_UPDATE;
	return 0;
}

static int any_match(char *const *patterns, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++) {
		if (fnmatch(patterns[i], s, 0) == 0)
			return 1;
	}
	return 0;
}

static int in_values(const json_t *values, const char *v)
{
	size_t i;
	json_t *e;
	json_array_foreach(values, i, e) {
		if (json_is_string(e) && strcmp(json_string_value(e), v) == 0)
			return 1;
	}
	return 0;
}

int wmap_selector_matches(const json_t *selector, const json_t *labels)
{
	if (!selector)
		return 1;
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(selector, "matchLabels"), k, v) {
		json_t *have = json_object_get(labels, k);
		if (!json_is_string(have) || strcmp(json_string_value(have),
						    json_string_value(v)) != 0)
			return 0;
	}
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(selector, "matchExpressions"), i, e) {
		const char *key = json_string_value(json_object_get(e, "key"));
		const char *op = json_string_value(json_object_get(e, "operator"));
		json_t *have = key ? json_object_get(labels, key) : NULL;
		const char *hv = json_string_value(have);
		if (!op)
			return 0;
		if (!strcmp(op, "Exists") && !have)
			return 0;
		if (!strcmp(op, "DoesNotExist") && have)
			return 0;
		if (!strcmp(op, "In") && !(hv && in_values(json_object_get(e, "values"), hv)))
			return 0;
		if (!strcmp(op, "NotIn") && hv && in_values(json_object_get(e, "values"), hv))
			return 0;
	}
	return 1;
}

int wmap_policy_matches_kind(const wmap_policy *p, const char *kind)
{
	return p->n_kinds == 0 || any_match(p->kinds, p->n_kinds, kind ? kind : "");
}

int wmap_policy_matches(const wmap_policy *p, const char *kind, const char *ns,
			const json_t *labels, unsigned op)
{
	if (!(p->operations & op))
		return 0;
	if (!wmap_policy_matches_kind(p, kind))
		return 0;
	if (!ns)
		ns = "";
	if (p->n_namespaces && !any_match(p->namespaces, p->n_namespaces, ns))
		return 0;
	if (p->n_exclude && any_match(p->exclude, p->n_exclude, ns))
		return 0;
	return wmap_selector_matches(p->selector, labels);
}

int wmap_policy_matches_component(const wmap_policy *p, const char *component)
{
	if (!p->n_components)
		return 1;
	for (size_t i = 0; i < p->n_components; i++) {
		if (strcmp(p->components[i], component) == 0)
			return 1;
	}
	return 0;
}
