/* wmap: plain jq path expressions evaluated natively, and JSON Pointers.
 *
 * Most expressions in definitions are plain paths (.spec.template,
 * .spec.replicatedJobs[].template.spec.template). Evaluating them on jansson costs
 * nanoseconds instead of a libjq round trip, and every result keeps its exact location,
 * which is what the webhook and `patch` write to. Semantics follow jq: indexing null gives
 * null, a missing key gives null, iterating null is an error unless the step ends in '?'. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"

typedef enum { STEP_KEY, STEP_INDEX, STEP_ITER } step_kind;

typedef struct step {
	step_kind kind;
	char *key;
	long index;
	int optional;
} step;

struct wmap_path {
	size_t n;
	step *steps;
	json_t *constant;   /* a literal ("1", "\"x\"", true): the one result, no location */
};

void wmap_path_free(wmap_path *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->steps[i].key);
	free(p->steps);
	json_decref(p->constant);
	free(p);
}

static int add_step(wmap_path *p, step s)
{
	step *ns = realloc(p->steps, (p->n + 1) * sizeof(*ns));
	if (!ns) {
		free(s.key);
		return -1;
	}
	p->steps = ns;
	p->steps[p->n++] = s;
	return 0;
}

/* A jq string literal without escapes other than \" and \\ (enough for keys). */
static char *parse_string(const char **pp)
{
	const char *p = *pp;
	char buf[256];
	size_t n = 0;

	if (*p != '"')
		return NULL;
	p++;
	while (*p && *p != '"') {
		if (*p == '\\') {
			if (p[1] != '"' && p[1] != '\\')
				return NULL;
			p++;
		}
		if (*p == '(' && p > *pp && p[-1] == '\\')
			return NULL;
		if (n + 1 >= sizeof(buf))
			return NULL;
		buf[n++] = *p++;
	}
	if (*p != '"')
		return NULL;
	buf[n] = '\0';
	*pp = p + 1;
	return strdup(buf);
}

wmap_path *wmap_path_parse(const char *text)
{
	wmap_path *p = calloc(1, sizeof(*p));
	const char *s = text;

	if (!p)
		return NULL;
	while (isspace((unsigned char)*s))
		s++;
	if (*s != '.') {
		/* Literals such as replicasPath: "1" need no jq either. */
		json_error_t je;
		p->constant = json_loads(s, JSON_DECODE_ANY, &je);
		if (p->constant && (json_is_object(p->constant) || json_is_array(p->constant))) {
			json_decref(p->constant);
			p->constant = NULL;
		}
		if (!p->constant)
			goto fail;
		return p;
	}
	if (s[1] == '\0' || isspace((unsigned char)s[1])) {
		s++;
		goto end;
	}
	while (*s && !isspace((unsigned char)*s)) {
		step st = {0};
		if (*s == '.' && s[1] == '.')
			goto fail;
		if (*s == '.' && (isalpha((unsigned char)s[1]) || s[1] == '_')) {
			const char *b = ++s;
			while (isalnum((unsigned char)*s) || *s == '_')
				s++;
			st.kind = STEP_KEY;
			st.key = strndup(b, (size_t)(s - b));
			if (!st.key)
				goto fail;
		} else if (*s == '.' && s[1] == '"') {
			s++;
			st.kind = STEP_KEY;
			if (!(st.key = parse_string(&s)))
				goto fail;
		} else if (*s == '[' || (*s == '.' && s[1] == '[')) {
			if (*s == '.')
				s++;
			s++;
			if (*s == ']') {
				st.kind = STEP_ITER;
				s++;
			} else if (*s == '"') {
				st.kind = STEP_KEY;
				if (!(st.key = parse_string(&s)) || *s != ']') {
					free(st.key);
					goto fail;
				}
				s++;
			} else {
				char *end;
				if (!(isdigit((unsigned char)*s) || (*s == '-' && isdigit((unsigned char)s[1]))))
					goto fail;
				st.index = strtol(s, &end, 10);
				if (*end != ']' || st.index > 1000000 || st.index < -1000000)
					goto fail;
				st.kind = STEP_INDEX;
				s = end + 1;
			}
		} else {
			goto fail;
		}
		if (*s == '?') {
			st.optional = 1;
			s++;
		}
		if (add_step(p, st))
			goto fail;
	}
end:
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		goto fail;
	return p;
fail:
	wmap_path_free(p);
	return NULL;
}

size_t wmap_path_n_steps(const wmap_path *p)
{
	return p && !p->constant ? p->n : 0;
}

wmap_path_step_kind wmap_path_step(const wmap_path *p, size_t i, const char **key)
{
	const step *st = &p->steps[i];
	*key = st->kind == STEP_KEY ? st->key : NULL;
	return st->kind == STEP_KEY ? WMAP_PATH_KEY : st->kind == STEP_INDEX ? WMAP_PATH_INDEX : WMAP_PATH_ITER;
}

const char *wmap_json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER:
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

static int eval_from(const wmap_path *p, size_t i, json_t *v, const char *ptr, wmap_results *out,
		     wmap_error *err)
{
	if (i == p->n) {
		char *dup = strdup(ptr);
		if (!dup)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		if (out->n >= WMAP_MAX_RESULTS) {
			free(dup);
			return wmap_error_set(err, WMAP_ELIMIT, "more than %d results", WMAP_MAX_RESULTS);
		}
		if (wmap_results_push(out, v ? json_incref(v) : NULL, dup))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		return 0;
	}
	const step *st = &p->steps[i];
	int isnull = !v || json_is_null(v);
	int rc = 0;
	char *next = NULL;

	switch (st->kind) {
	case STEP_KEY:
		if (!isnull && !json_is_object(v)) {
			if (st->optional)
				return 0;
			return wmap_error_set(err, WMAP_EEVAL, "Cannot index %s with \"%s\"", wmap_json_type_name(v),
					      st->key);
		}
		next = wmap_pointer_append(ptr, st->key);
		if (!next)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		rc = eval_from(p, i + 1, isnull ? NULL : json_object_get(v, st->key), next, out, err);
		break;
	case STEP_INDEX: {
		if (!isnull && !json_is_array(v)) {
			if (st->optional)
				return 0;
			return wmap_error_set(err, WMAP_EEVAL, "Cannot index %s with number", wmap_json_type_name(v));
		}
		long idx = st->index;
		size_t size = isnull ? 0 : json_array_size(v);
		if (idx < 0)
			idx += (long)size;
		json_t *x = (!isnull && idx >= 0 && (size_t)idx < size) ? json_array_get(v, (size_t)idx) : NULL;
		next = wmap_pointer_append_index(ptr, idx < 0 ? 0 : (size_t)idx);
		if (!next)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		rc = eval_from(p, i + 1, x, next, out, err);
		break;
	}
	case STEP_ITER:
		if (json_is_array(v)) {
			size_t k;
			json_t *x;
			json_array_foreach(v, k, x) {
				next = wmap_pointer_append_index(ptr, k);
				if (!next)
					return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				rc = eval_from(p, i + 1, x, next, out, err);
				free(next);
				next = NULL;
				if (rc)
					return rc;
			}
		} else if (json_is_object(v)) {
			const char *k;
			json_t *x;
			json_object_foreach(v, k, x) {
				next = wmap_pointer_append(ptr, k);
				if (!next)
					return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				rc = eval_from(p, i + 1, x, next, out, err);
				free(next);
				next = NULL;
				if (rc)
					return rc;
			}
		} else if (!st->optional) {
			return wmap_error_set(err, WMAP_EEVAL, "Cannot iterate over %s",
					      isnull ? "null" : wmap_json_type_name(v));
		}
		break;
	}
	free(next);
	return rc;
}

int wmap_path_eval(const wmap_path *p, json_t *root, wmap_results *out, wmap_error *err)
{
	if (p->constant) {
		if (wmap_results_push(out, json_incref(p->constant), NULL))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		return 0;
	}
	return eval_from(p, 0, root, "", out, err);
}

/* ---- results ---- */

void wmap_results_clear(wmap_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		json_decref(r->v[i].value);
		free(r->v[i].pointer);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

int wmap_results_push(wmap_results *r, json_t *value, char *pointer)
{
	if (r->n >= WMAP_MAX_RESULTS)
		goto fail;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;
		wmap_result *nv = realloc(r->v, cap * sizeof(*nv));
		if (!nv)
			goto fail;
		r->v = nv;
		r->cap = cap;
	}
	r->v[r->n].value = value;
	r->v[r->n].pointer = pointer;
	r->n++;
	return 0;
fail:
	json_decref(value);
	free(pointer);
	return -1;
}

/* ---- JSON Pointer (RFC 6901) ---- */

char *wmap_pointer_append(const char *base, const char *token)
{
	size_t bl = strlen(base), extra = 0;
	for (const char *p = token; *p; p++)
		extra += (*p == '~' || *p == '/');
	size_t tl = strlen(token);
	char *out = malloc(bl + 1 + tl + extra + 1);
	if (!out)
		return NULL;
	memcpy(out, base, bl);
	char *w = out + bl;
	*w++ = '/';
	/* '~' and '/' inside a key would otherwise split or corrupt the path. */
	for (const char *p = token; *p; p++) {
		if (*p == '~') {
			*w++ = '~';
			*w++ = '0';
		} else if (*p == '/') {
			*w++ = '~';
			*w++ = '1';
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
	return out;
}

char *wmap_pointer_append_index(const char *base, size_t index)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%zu", index);
	return wmap_pointer_append(base, buf);
}

/* Decodes one token of pointer starting at *pp into buf; returns 0, or -1 when too long. */
static int next_token(const char **pp, char *buf, size_t len)
{
	const char *p = *pp + 1; /* skip '/' */
	size_t n = 0;
	while (*p && *p != '/') {
		char c = *p++;
		if (c == '~' && (*p == '0' || *p == '1'))
			c = *p++ == '0' ? '~' : '/';
		if (n + 1 >= len)
			return -1;
		buf[n++] = c;
	}
	buf[n] = '\0';
	*pp = p;
	return 0;
}

json_t *wmap_pointer_get(json_t *root, const char *pointer)
{
	const char *p = pointer;
	char tok[1024];
	json_t *v = root;

	while (v && *p == '/') {
		if (next_token(&p, tok, sizeof(tok)))
			return NULL;
		if (json_is_object(v)) {
			v = json_object_get(v, tok);
		} else if (json_is_array(v)) {
			char *end;
			unsigned long idx = strtoul(tok, &end, 10);
			if (*end || !*tok)
				return NULL;
			v = json_array_get(v, idx);
		} else {
			return NULL;
		}
	}
	return *p ? NULL : v;
}

void wmap_pointer_to_path(char *buf, size_t len, const char *pointer)
{
	const char *p = pointer;
	char tok[1024];
	size_t n = 0;

	buf[0] = '\0';
	if (!*p) {
		snprintf(buf, len, ".");
		return;
	}
	while (*p == '/' && n < len) {
		if (next_token(&p, tok, sizeof(tok)))
			break;
		int numeric = *tok != '\0', ident = isalpha((unsigned char)*tok) || *tok == '_';
		for (const char *t = tok; *t; t++) {
			numeric &= isdigit((unsigned char)*t) != 0;
			ident &= isalnum((unsigned char)*t) || *t == '_';
		}
		int w = numeric ? snprintf(buf + n, len - n, "[%s]", tok)
			: ident ? snprintf(buf + n, len - n, ".%s", tok)
				: snprintf(buf + n, len - n, "[\"%s\"]", tok);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}
