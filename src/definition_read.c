/* wmap: reading definition documents strictly (see definition_int.h).
 *
 * Every getter reports what is wrong at its place and goes on, so that one load lists every
 * finding of a document rather than the first one. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "definition_int.h"
#include "jq.h"
#include "jqnative.h"
#include "wmap/yaml.h"

void wmap__def_place_of(ctx *c, const char *ptr, char *place, size_t len)
{
	char key[1100];
	snprintf(key, sizeof(key), "%d%s", c->doc, ptr ? ptr : "");
	wmap_yaml_position(place, len, c->positions, c->def->source, key);
	if (ptr && *ptr && !strchr(place + strlen(c->def->source), ':')) {
		char path[1024];
		wmap_pointer_to_path(path, sizeof(path), ptr);
		size_t n = strlen(place);
		snprintf(place + n, len - n, ": %s", path);
	}
}

/* ptr is a JSON pointer inside the document, or NULL for the document as a whole. */
void wmap__def_finding(ctx *c, const char *ptr, const char *fmt, ...)
{
	char place[1024], msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wmap__def_place_of(c, ptr, place, sizeof(place));
	if (c->flen < sizeof(c->findings) - 1) {
		int w = snprintf(c->findings + c->flen, sizeof(c->findings) - c->flen, "%s%s: %s",
				 c->n_findings ? "\n" : "", place, msg);
		if (w > 0)
			c->flen += (size_t)w;
		if (c->flen >= sizeof(c->findings))
			c->flen = sizeof(c->findings) - 1;
	}
	c->n_findings++;
}

char *wmap__def_xstrdup(ctx *c, const char *s)
{
	char *d = strdup(s);
	if (!d)
		c->oom = 1;
	return d;
}

char *wmap__def_child_ptr(ctx *c, const char *base, const char *key)
{
	char *p = wmap_pointer_join(base, key);
	if (!p)
		c->oom = 1;
	return p;
}

/* Reports every key of obj not in allowed. */
void wmap__def_check_keys(ctx *c, const json_t *obj, const char *ptr, const char *const *allowed)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v) {
		const char *const *a = allowed;
		while (*a && strcmp(*a, k) != 0)
			a++;
		if (!*a) {
			char *p = wmap__def_child_ptr(c, ptr, k);
			wmap__def_finding(c, p ? p : ptr, "unknown field \"%s\"", k);
			free(p);
		}
	}
}

/* The object at key, or NULL (a finding when present but not an object). */
const json_t *wmap__def_get_object(ctx *c, const json_t *obj, const char *ptr, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_object(v)) {
		char *p = wmap__def_child_ptr(c, ptr, key);
		wmap__def_finding(c, p ? p : ptr, "%s must be an object", key);
		free(p);
		return NULL;
	}
	return v;
}

const json_t *wmap__def_get_array(ctx *c, const json_t *obj, const char *ptr, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_array(v)) {
		char *p = wmap__def_child_ptr(c, ptr, key);
		wmap__def_finding(c, p ? p : ptr, "%s must be a list", key);
		free(p);
		return NULL;
	}
	return v;
}

char *wmap__def_get_string(ctx *c, const json_t *obj, const char *ptr, const char *key, int required)
{
	const json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v)) {
		if (required)
			wmap__def_finding(c, ptr, "%s is required", key);
		return NULL;
	}
	if (!json_is_string(v)) {
		char *p = wmap__def_child_ptr(c, ptr, key);
		wmap__def_finding(c, p ? p : ptr, "%s must be a string", key);
		free(p);
		return NULL;
	}
	return wmap__def_xstrdup(c, json_string_value(v));
}

void wmap__def_expr_free(wmap_expr *e)
{
	if (!e)
		return;
	free(e->text);
	free(e->where);
	free(e->place);
	wmap__path_free(e->path);
	wmap__jn_free(e->jn);
	free(e);
}

int wmap__def_add_jq_text(ctx *c, const char *fmt, const char *text)
{
	wmap_definition *d = c->def;
	size_t n = strlen(text) + strlen(fmt) + 1;
	char *s = malloc(n), **nt;
	if (!s || !(nt = realloc(d->jq_texts, (d->n_jq + 1) * sizeof(*nt)))) {
		free(s);
		c->oom = 1;
		return -1;
	}
	snprintf(s, n, fmt, text);
	d->jq_texts = nt;
	d->jq_texts[d->n_jq] = s;
	return (int)d->n_jq++;
}

/* Reads a jq expression at obj[key]. writable: the engine should also trace its location. */
wmap_expr *wmap__def_get_expr(ctx *c, const json_t *obj, const char *ptr, const char *key,
			      int required, int writable)
{
	char *text = wmap__def_get_string(c, obj, ptr, key, required);
	char *p = NULL;
	wmap_expr *e = NULL, **ne;
	char msg[512];

	if (!text)
		return NULL;
	p = wmap__def_child_ptr(c, ptr, key);
	if (!p)
		goto fail;
	if (*text == '\0') {
		wmap__def_finding(c, p, "%s must not be empty", key);
		goto fail;
	}
	if (wmap__jq_safety(text, msg, sizeof(msg))) {
		wmap__def_finding(c, p, "jq expression \"%s\" %s", text, msg);
		goto fail;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		c->oom = 1;
		goto fail;
	}
	char where[1024];
	wmap_pointer_to_path(where, sizeof(where), p);
	e->text = text;
	text = NULL;
	e->where = wmap__def_xstrdup(c, where);
	char place[1024];
	wmap__def_place_of(c, p, place, sizeof(place));
	e->place = wmap__def_xstrdup(c, place);
	e->jq_slot = e->jq_path_slot = -1;
	int path_oom = 0;
	e->path = wmap__path_parse_oom(e->text, &path_oom);
	if (path_oom)
		c->oom = 1; /* a plain path must stay one: the schema check and locations rely on it */
	if (!e->path)
		e->jn = wmap__jn_parse(e->text);
	if (!e->path && !e->jn) {
		e->jq_slot = wmap__def_add_jq_text(c, "%s", e->text);
		if (writable)
			e->jq_path_slot = wmap__def_add_jq_text(c, "path(%s)", e->text);
	}
	ne = realloc(c->def->exprs, (c->def->n_exprs + 1) * sizeof(*ne));
	if (!ne) {
		c->oom = 1;
		goto fail;
	}
	c->def->exprs = ne;
	c->def->exprs[c->def->n_exprs++] = e;
	free(p);
	return e;
fail:
	wmap__def_expr_free(e);
	free(text);
	free(p);
	return NULL;
}

void wmap__def_for_each_item(ctx *c, const json_t *list, const char *ptr, const char *key, const char *what,
			     item_fn each, void *ud)
{
	char *lp = wmap__def_child_ptr(c, ptr, key);
	size_t i;
	json_t *x;

	if (!lp)
		return;
	json_array_foreach(list, i, x) {
		char *ip = wmap_pointer_join_index(lp, i);
		if (!ip) {
			c->oom = 1;
			break;
		}
		if (!json_is_object(x))
			wmap__def_finding(c, ip, "%s must be an object", what);
		else
			each(c, x, ip, ud);
		free(ip);
	}
	free(lp);
}
