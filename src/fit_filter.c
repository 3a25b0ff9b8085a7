/* wmap: the scheduler's static node filters, for `fit` (include/wmap/fit.h).
 *
 * In the default scheduler's order, the first that fails names the node's reason, as the
 * scheduler stops at the first failing filter plugin: NodeUnschedulable (a cordoned node,
 * unless the pod tolerates node.kubernetes.io/unschedulable:NoSchedule), TaintToleration
 * (the first NoSchedule or NoExecute taint no toleration matches; PreferNoSchedule only
 * scores), NodeAffinity (spec.nodeSelector AND the required node affinity terms). Readiness
 * comes first: a preview counts Ready nodes only, as Kueue's topology-aware scheduling does,
 * since a node that just failed may not carry its not-ready taint yet. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_int.h"

int wmap__fit_node_ready(const json_t *node)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		if (t && strcmp(t, "Ready") == 0) {
			const char *s = json_string_value(json_object_get(c, "status"));
			return s && strcmp(s, "True") == 0;
		}
	}
	return 0;
}

static int str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* core/v1 Toleration.ToleratesTaint: an empty effect matches every effect, an empty key
 * every key; operator "" or Equal compares values, Exists does not; any other operator
 * (the feature-gated Lt/Gt) tolerates nothing here. */
static int tolerates(const json_t *tol, const char *key, const char *value, const char *effect)
{
	const char *te = json_string_value(json_object_get(tol, "effect"));
	const char *tk = json_string_value(json_object_get(tol, "key"));
	const char *op = json_string_value(json_object_get(tol, "operator"));
	if (te && *te && !str_eq(te, effect))
		return 0;
	if (tk && *tk && !str_eq(tk, key))
		return 0;
	if (!op || !*op || strcmp(op, "Equal") == 0)
		return str_eq(json_string_value(json_object_get(tol, "value")), value);
	return strcmp(op, "Exists") == 0;
}

static int tolerated(const json_t *tols, const char *key, const char *value, const char *effect)
{
	size_t i;
	json_t *t;
	json_array_foreach((json_t *)tols, i, t) {
		if (tolerates(t, key, value, effect))
			return 1;
	}
	return 0;
}

static int parse_int64(long long *out, const char *s)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int in_values(const json_t *values, const char *v)
{
	size_t i;
	json_t *x;
	json_array_foreach((json_t *)values, i, x) {
		if (str_eq(json_string_value(x), v))
			return 1;
	}
	return 0;
}

/* labels.Requirement.Matches: In needs the key; NotIn holds when it is absent; Gt and Lt
 * need the key and one value, both integers. Unknown operators match nothing. */
static int requirement_matches(const json_t *req, const json_t *labels)
{
	const char *key = json_string_value(json_object_get(req, "key"));
	const char *op = json_string_value(json_object_get(req, "operator"));
	const json_t *values = json_object_get(req, "values");
	const char *have = key ? json_string_value(json_object_get(labels, key)) : NULL;
	if (!key || !op)
		return 0;
	if (strcmp(op, "In") == 0)
		return have && in_values(values, have);
	if (strcmp(op, "NotIn") == 0)
		return !have || !in_values(values, have);
	if (strcmp(op, "Exists") == 0)
		return have != NULL;
	if (strcmp(op, "DoesNotExist") == 0)
		return have == NULL;
	if (strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) {
		long long a, b;
		if (!have || json_array_size(values) != 1 ||
		    parse_int64(&a, have) || parse_int64(&b, json_string_value(json_array_get(values, 0))))
			return 0;
		return op[0] == 'G' ? a > b : a < b;
	}
	return 0;
}

/* matchFields: only metadata.name, In or NotIn with exactly one value. */
static int field_matches(const json_t *req, const char *node_name)
{
	const char *key = json_string_value(json_object_get(req, "key"));
	const char *op = json_string_value(json_object_get(req, "operator"));
	const json_t *values = json_object_get(req, "values");
	if (!key || !op || strcmp(key, "metadata.name") != 0 || json_array_size(values) != 1)
		return 0;
	if (strcmp(op, "In") == 0)
		return in_values(values, node_name);
	if (strcmp(op, "NotIn") == 0)
		return !in_values(values, node_name);
	return 0;
}

/* A term ANDs its expressions and fields; a term with neither selects nothing. */
static int term_matches(const json_t *term, const json_t *labels, const char *node_name)
{
	const json_t *ex = json_object_get(term, "matchExpressions");
	const json_t *fs = json_object_get(term, "matchFields");
	size_t i;
	json_t *r;
	if (json_array_size(ex) == 0 && json_array_size(fs) == 0)
		return 0;
	json_array_foreach((json_t *)ex, i, r) {
		if (!requirement_matches(r, labels))
			return 0;
	}
	json_array_foreach((json_t *)fs, i, r) {
		if (!field_matches(r, node_name))
			return 0;
	}
	return 1;
}

int wmap__fit_affinity_matches(const json_t *spec, const json_t *node)
{
	const json_t *meta = json_object_get(node, "metadata");
	const json_t *labels = json_object_get(meta, "labels");
	const char *node_name = json_string_value(json_object_get(meta, "name"));
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)json_object_get(spec, "nodeSelector"), k, v) {
		if (!json_is_string(v) || !str_eq(json_string_value(json_object_get(labels, k)), json_string_value(v)))
			return 0;
	}
	const json_t *req = json_object_get(json_object_get(json_object_get(spec, "affinity"), "nodeAffinity"),
					    "requiredDuringSchedulingIgnoredDuringExecution");
	if (!req || json_is_null(req))
		return 1;
	size_t i;
	json_t *term;
	json_array_foreach(json_object_get(req, "nodeSelectorTerms"), i, term) {
		if (term_matches(term, labels, node_name))
			return 1;
	}
	return 0;
}

const char *wmap__fit_static_reason(char *buf, size_t len, const json_t *spec, const json_t *node)
{
	const json_t *tols = json_object_get(spec, "tolerations");
	const json_t *nspec = json_object_get(node, "spec");
	size_t i;
	json_t *t;

	if (json_is_true(json_object_get(nspec, "unschedulable")) &&
	    !tolerated(tols, "node.kubernetes.io/unschedulable", "", "NoSchedule"))
		return "node(s) were unschedulable";
	json_array_foreach(json_object_get(nspec, "taints"), i, t) {
		const char *key = json_string_value(json_object_get(t, "key"));
		const char *value = json_string_value(json_object_get(t, "value"));
		const char *effect = json_string_value(json_object_get(t, "effect"));
		if (!effect || (strcmp(effect, "NoSchedule") != 0 && strcmp(effect, "NoExecute") != 0))
			continue;
		if (tolerated(tols, key, value, effect))
			continue;
		snprintf(buf, len, "node(s) had untolerated taint {%s: %s}", key ? key : "", value ? value : "");
		return buf;
	}
	if (!wmap__fit_affinity_matches(spec, node))
		return "node(s) didn't match Pod's node affinity/selector";
	return NULL;
}
