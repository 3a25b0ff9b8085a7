/* wmap: policy reports, one per namespace (include/wmap/report.h). The entries are checked,
 * flattened into one row per workload and policy, sorted, capped and written out; a row
 * equal to one of the previous report keeps its timestamp, so an unchanged namespace gives
 * the same bytes and its writer has nothing to PUT. */
#include "wmap/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACT_DENY 1u
#define ACT_WARN 2u
#define ACT_AUDIT 4u
/* A joined failure message is cut here: the messages come from our own policies and name a
 * component and a field each, so this only bounds a pathological policy. */
#define MAX_MESSAGE 4096

typedef struct row {
	const json_t *ref; /* the entry's workload (borrowed) */
	const char *api_version, *kind, *name, *uid;
	const char *policy;
	int fail; /* 0 pass, 1 fail, 2 error (could not be evaluated) */
	unsigned actions;
	char *message; /* owned; NULL for pass */
} row;

typedef struct rows {
	row *v;
	size_t n, cap;
} rows;

int wmap_report_api_parse(wmap_report_api *out, const char *s, wmap_error *err)
{
	if (s && strcmp(s, "openreports") == 0)
		*out = WMAP_REPORT_OPENREPORTS;
	else if (s && strcmp(s, "wgpolicyk8s") == 0)
		*out = WMAP_REPORT_WGPOLICY;
	else
		return wmap_error_set(err, WMAP_EINVAL,
				      "unknown report API \"%s\" (openreports or wgpolicyk8s)",
				      s ? s : "");
	return 0;
}

const char *wmap_report_api_version(wmap_report_api api)
{
	return api == WMAP_REPORT_WGPOLICY ? "wgpolicyk8s.io/v1alpha2" : "openreports.io/v1alpha1";
}

const char *wmap_report_kind(wmap_report_api api)
{
	return api == WMAP_REPORT_WGPOLICY ? "PolicyReport" : "Report";
}

const char *wmap_report_plural(wmap_report_api api)
{
	return api == WMAP_REPORT_WGPOLICY ? "policyreports" : "reports";
}

static unsigned action_bit(const char *s)
{
	if (!s)
		return 0;
	if (strcmp(s, "Deny") == 0)
		return ACT_DENY;
	if (strcmp(s, "Warn") == 0)
		return ACT_WARN;
	if (strcmp(s, "Audit") == 0)
		return ACT_AUDIT;
	return 0;
}

static int push(rows *r, const row *x)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		row *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return WMAP_ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = *x;
	return 0;
}

static void rows_free(rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].message);
	free(r->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_row(const void *pa, const void *pb)
{
	const row *a = pa, *b = pb;
	int c = strcmp(a->kind, b->kind);
	if (!c)
		c = strcmp(a->name, b->name);
	if (!c)
		c = strcmp(a->api_version, b->api_version);
	if (!c)
		c = strcmp(a->policy, b->policy);
	return c;
}

/* The string at key of o, or NULL with err naming .[i]<where>.key. */
static const char *need_str(const json_t *o, const char *key, size_t i, const char *where,
			    wmap_error *err)
{
	const char *s = json_string_value(json_object_get(o, key));
	if (s && *s)
		return s;
	wmap_error_set(err, WMAP_EINVAL, ".[%zu]%s.%s: %s", i, where, key,
		       json_object_get(o, key) ? "not a non-empty string" : "missing");
	return NULL;
}

/* The messages of msgs (strings) sorted and joined with "; " into a new string. */
static char *join_sorted(const char **msgs, size_t n)
{
	qsort(msgs, n, sizeof(*msgs), cmp_str);
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(msgs[i]) + 2;
	if (len > MAX_MESSAGE)
		len = MAX_MESSAGE;
	char *s = malloc(len + 1), *p = s;
	if (!s)
		return NULL;
	size_t left = len + 1;
	for (size_t i = 0; i < n && left > 1; i++) {
		int w = snprintf(p, left, "%s%s", i ? "; " : "", msgs[i]);
		if (w < 0 || (size_t)w >= left) {
			p += left - 1;
			break;
		}
		p += w;
		left -= (size_t)w;
	}
	*p = '\0';
	return s;
}

/* The rows of entry i: one per policy of its fail list (merged), then its passes. */
static int entry_rows(rows *out, const json_t *e, size_t i, wmap_error *err)
{
	const json_t *w = json_object_get(e, "workload"), *fail = json_object_get(e, "fail");
	const json_t *pass = json_object_get(e, "pass"), *v;
	const char **msgs = NULL;
	int rc = WMAP_EINVAL;
	size_t j, k;
	row base = { .ref = w };
	if (!json_is_object(w))
		return wmap_error_set(err, WMAP_EINVAL, ".[%zu].workload: not an object", i);
	if (!(base.api_version = need_str(w, "apiVersion", i, ".workload", err)) ||
	    !(base.kind = need_str(w, "kind", i, ".workload", err)) ||
	    !(base.name = need_str(w, "name", i, ".workload", err)))
		return WMAP_EINVAL;
	base.uid = json_string_value(json_object_get(w, "uid"));
	const json_t *errs = json_object_get(e, "error");
	if (errs) {
		/* Not evaluated: one error result per policy that applies; passes and failures
		 * of the entry, if any, are not believed. */
		if (!json_is_array(errs))
			return wmap_error_set(err, WMAP_EINVAL, ".[%zu].error: not an array", i);
		json_array_foreach(errs, j, v) {
			char where[48];
			snprintf(where, sizeof(where), ".error[%zu]", j);
			if (!json_is_object(v))
				return wmap_error_set(err, WMAP_EINVAL, ".[%zu]%s: not an object", i, where);
			if (!need_str(v, "policy", i, where, err) || !need_str(v, "message", i, where, err))
				return WMAP_EINVAL;
		}
		json_array_foreach(errs, j, v) {
			row r = base;
			r.policy = json_string_value(json_object_get(v, "policy"));
			r.fail = 2;
			if (!(r.message = strdup(json_string_value(json_object_get(v, "message")))) || push(out, &r) != 0) {
				free(r.message);
				return wmap_error_set(err, WMAP_ENOMEM, "out of memory building a policy report");
			}
		}
		return 0;
	}
	if ((fail && !json_is_array(fail)) || (pass && !json_is_array(pass)))
		return wmap_error_set(err, WMAP_EINVAL, ".[%zu].%s: not an array", i,
				      fail && !json_is_array(fail) ? "fail" : "pass");
	json_array_foreach(fail, j, v) {
		char where[48];
		snprintf(where, sizeof(where), ".fail[%zu]", j);
		if (!json_is_object(v))
			return wmap_error_set(err, WMAP_EINVAL, ".[%zu]%s: not an object", i, where);
		if (!need_str(v, "policy", i, where, err) || !need_str(v, "message", i, where, err))
			return WMAP_EINVAL;
		const json_t *acts = json_object_get(v, "actions"), *a;
		size_t m;
		if (!json_is_array(acts) || json_array_size(acts) == 0)
			return wmap_error_set(err, WMAP_EINVAL, ".[%zu]%s.actions: not a non-empty array", i, where);
		json_array_foreach(acts, m, a)
			if (!action_bit(json_string_value(a)))
				return wmap_error_set(
					err, WMAP_EINVAL, ".[%zu]%s.actions[%zu]: not Deny, Warn or Audit", i, where, m);
	}
	json_array_foreach(pass, j, v)
		if (!json_string_value(v) || !*json_string_value(v))
			return wmap_error_set(
				err, WMAP_EINVAL, ".[%zu].pass[%zu]: not a non-empty string", i, j);
	if (json_array_size(fail) && !(msgs = calloc(json_array_size(fail), sizeof(*msgs))))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory building a policy report");
	/* Each policy's failures once, at its first appearance. */
	json_array_foreach(fail, j, v) {
		const char *pol = json_string_value(json_object_get(v, "policy"));
		int seen = 0;
		for (k = 0; k < j && !seen; k++)
			seen = strcmp(pol, json_string_value(json_object_get(json_array_get(fail, k), "policy"))) == 0;
		if (seen)
			continue;
		row r = base;
		size_t n = 0;
		r.policy = pol;
		r.fail = 1;
		for (k = j; k < json_array_size(fail); k++) {
			const json_t *f = json_array_get(fail, k), *a;
			size_t m;
			if (strcmp(pol, json_string_value(json_object_get(f, "policy"))) != 0)
				continue;
			msgs[n++] = json_string_value(json_object_get(f, "message"));
			json_array_foreach(json_object_get(f, "actions"), m, a)
				r.actions |= action_bit(json_string_value(a));
		}
		if (!(r.message = join_sorted(msgs, n)) || push(out, &r) != 0) {
			free(r.message);
			rc = WMAP_ENOMEM;
			goto done;
		}
	}
	json_array_foreach(pass, j, v) {
		const char *pol = json_string_value(v);
		int seen = 0;
		for (k = 0; k < json_array_size(fail) && !seen; k++)
			seen = strcmp(pol, json_string_value(json_object_get(json_array_get(fail, k), "policy"))) == 0;
		for (k = 0; k < j && !seen; k++)
			seen = strcmp(pol, json_string_value(json_array_get(pass, k))) == 0;
		if (seen)
			continue; /* failed, or listed twice */
		row r = base;
		r.policy = pol;
		if (push(out, &r) != 0) {
			rc = WMAP_ENOMEM;
			goto done;
		}
	}
	rc = 0;
done:
	free(msgs);
	if (rc == WMAP_ENOMEM)
		wmap_error_set(err, WMAP_ENOMEM, "out of memory building a policy report");
	return rc;
}

/* The key a result is recognised by across reports: resource, policy, result, message. */
static char *result_key(const char *av, const char *kind, const char *name, const char *policy,
			const char *result, const char *message)
{
	const char *parts[] = { av, kind, name, policy, result, message ? message : "" };
	size_t len = 1;
	for (size_t i = 0; i < 6; i++)
		len += strlen(parts[i] ? parts[i] : "") + 1;
	char *k = malloc(len), *p = k;
	if (!k)
		return NULL;
	for (size_t i = 0; i < 6; i++) {
		size_t n = strlen(parts[i] ? parts[i] : "");
		memcpy(p, parts[i] ? parts[i] : "", n);
		p += n;
		*p++ = '\x1f';
	}
	*p = '\0';
	return k;
}

/* previous's timestamps by result key; a new object, NULL on ENOMEM. */
static json_t *old_stamps(const json_t *previous)
{
	json_t *m = json_object(), *r;
	size_t i;
	if (!m)
		return NULL;
	json_array_foreach(json_object_get(previous, "results"), i, r) {
		const json_t *res = json_array_get(json_object_get(r, "resources"), 0);
		const json_t *ts = json_object_get(r, "timestamp");
		const char *av = json_string_value(json_object_get(res, "apiVersion"));
		const char *kind = json_string_value(json_object_get(res, "kind"));
		const char *name = json_string_value(json_object_get(res, "name"));
		const char *pol = json_string_value(json_object_get(r, "policy"));
		const char *result = json_string_value(json_object_get(r, "result"));
		if (!av || !kind || !name || !pol || !result || !json_is_object(ts))
			continue;
		char *k = result_key(av, kind, name, pol, result,
				     json_string_value(json_object_get(r, "message")));
		if (!k || json_object_set(m, k, (json_t *)ts) != 0) {
			free(k);
			json_decref(m);
			return NULL;
		}
		free(k);
	}
	return m;
}

static const char *severity(unsigned actions)
{
	return actions & ACT_DENY ? "high" : actions & ACT_WARN ? "medium"
								: "low";
}

/* "Deny,Warn,Audit" in that order, for the bits set. */
static void actions_text(char *buf, size_t len, unsigned actions)
{
	static const char *const names[] = { "Deny", "Warn", "Audit" };
	size_t at = 0;
	buf[0] = '\0';
	for (unsigned b = 0; b < 3; b++)
		if (actions & (1u << b)) {
			int w = snprintf(buf + at, len - at, "%s%s", at ? "," : "", names[b]);
			if (w > 0 && (size_t)w < len - at)
				at += (size_t)w;
		}
}

static json_t *result_json(const row *r, const char *ns, const json_t *stamps, long long now_s)
{
	const char *result = r->fail == 2 ? "error" : r->fail ? "fail"
							      : "pass";
	json_t *res = json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", r->api_version, "kind",
				r->kind, "namespace", ns, "name", r->name);
	if (res && r->uid && json_object_set_new(res, "uid", json_string(r->uid)) != 0) {
		json_decref(res);
		return NULL;
	}
	char *k = result_key(r->api_version, r->kind, r->name, r->policy, result, r->message);
	if (!k) {
		json_decref(res);
		return NULL; /* not "no previous timestamp": that would change the bytes */
	}
	json_t *ts = json_object_get(stamps, k);
	free(k);
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:b, s:O?, s:[o]}", "source", "wmap", "policy",
			      r->policy, "category", "WorkloadPolicy", "result", result, "scored", 1,
			      "timestamp", ts, "resources", res);
	if (o && !ts && json_object_set_new(o, "timestamp", json_pack("{s:I, s:i}", "seconds", (json_int_t)now_s, "nanos", 0)) != 0)
		goto fail;
	if (o && r->fail == 2 && json_object_set_new(o, "message", json_string(r->message)) != 0)
		goto fail;
	if (o && r->fail == 1) {
		char acts[32];
		actions_text(acts, sizeof(acts), r->actions);
		if (json_object_set_new(o, "severity", json_string(severity(r->actions))) != 0 ||
		    json_object_set_new(o, "message", json_string(r->message)) != 0 ||
		    json_object_set_new(o, "properties", json_pack("{s:s}", "actions", acts)) != 0)
			goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

int wmap_report_build(json_t **out, wmap_report_api api, const char *ns, const json_t *workloads,
		      const json_t *previous, long long now_s, wmap_error *err)
{
	rows rs = { 0 };
	json_t *stamps = NULL, *results = NULL, *rep = NULL, *e;
	size_t i, fails = 0, passes = 0, errors = 0;
	int rc;
	*out = NULL;
	if (!ns || !*ns)
		return wmap_error_set(err, WMAP_EINVAL, "a policy report needs a namespace");
	if (!json_is_array(workloads))
		return wmap_error_set(err, WMAP_EINVAL, ".: not an array of workloads");
	json_array_foreach(workloads, i, e) {
		if (!json_is_object(e)) {
			rc = wmap_error_set(err, WMAP_EINVAL, ".[%zu]: not an object", i);
			goto done;
		}
		if ((rc = entry_rows(&rs, e, i, err)) != 0)
			goto done;
	}
	qsort(rs.v, rs.n, sizeof(*rs.v), cmp_row);
	for (i = 0; i < rs.n; i++)
		rs.v[i].fail == 2 ? errors++ : rs.v[i].fail ? fails++
							    : passes++;
	/* Over the cap, failures and errors are kept first, then as many passes as fit, in
	 * sort order. */
	size_t keep_fail = fails + errors < WMAP_REPORT_MAX_RESULTS ? fails + errors : WMAP_REPORT_MAX_RESULTS;
	size_t keep_pass = WMAP_REPORT_MAX_RESULTS - keep_fail;
	if (keep_pass > passes)
		keep_pass = passes;
	rc = WMAP_ENOMEM;
	if (!(stamps = old_stamps(previous)) || !(results = json_array()))
		goto nomem;
	for (i = 0; i < rs.n; i++) {
		row *r = &rs.v[i];
		if (r->fail ? keep_fail == 0 : keep_pass == 0)
			continue;
		r->fail ? keep_fail-- : keep_pass--;
		if (json_array_append_new(results, result_json(r, ns, stamps, now_s)) != 0)
			goto nomem;
	}
	rep = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:I, s:I, s:i, s:I, s:i}, s:O}",
			"apiVersion", wmap_report_api_version(api), "kind", wmap_report_kind(api),
			"metadata", "name", WMAP_REPORT_NAME, "namespace", ns, "labels",
			"app.kubernetes.io/managed-by", WMAP_REPORT_MANAGED_BY, "summary", "pass",
			(json_int_t)passes, "fail", (json_int_t)fails, "warn", 0, "error", (json_int_t)errors, "skip", 0,
			"results", results);
	if (!rep)
		goto nomem;
	if (api == WMAP_REPORT_OPENREPORTS && json_object_set_new(rep, "source", json_string("wmap")) != 0)
		goto nomem;
	size_t omitted = rs.n - json_array_size(results);
	if (omitted) {
		char n[32];
		snprintf(n, sizeof(n), "%zu", omitted);
		if (json_object_set_new(json_object_get(rep, "metadata"), "annotations",
					json_pack("{s:s}", WMAP_REPORT_OMITTED_ANNOTATION, n)) != 0)
			goto nomem;
	}
	*out = rep;
	rep = NULL;
	rc = 0;
	goto done;
nomem:
	wmap_error_set(err, WMAP_ENOMEM, "out of memory building a policy report");
done:
	json_decref(rep);
	json_decref(results);
	json_decref(stamps);
	rows_free(&rs);
	return rc;
}

static int same_at(const json_t *a, const json_t *b, const char *key)
{
	const json_t *x = json_object_get(a, key), *y = json_object_get(b, key);
	return (!x && !y) || (x && y && json_equal((json_t *)x, (json_t *)y));
}

int wmap_report_same(const json_t *stored, const json_t *built)
{
	static const char *const keys[] = { "apiVersion", "kind", "source", "summary", "results" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!same_at(stored, built, keys[i]))
			return 0;
	const json_t *ms = json_object_get(stored, "metadata"), *mb = json_object_get(built, "metadata");
	const char *lk = "app.kubernetes.io/managed-by";
	const char *ls = json_string_value(json_object_get(json_object_get(ms, "labels"), lk));
	const char *oa = json_string_value(json_object_get(json_object_get(ms, "annotations"), WMAP_REPORT_OMITTED_ANNOTATION));
	const char *ob = json_string_value(json_object_get(json_object_get(mb, "annotations"), WMAP_REPORT_OMITTED_ANNOTATION));
	return ls && strcmp(ls, WMAP_REPORT_MANAGED_BY) == 0 && ((!oa && !ob) || (oa && ob && strcmp(oa, ob) == 0));
}
