/* A tiny RFC 6902 / RFC 6901 implementation for the fuzz targets (see jsonpatch.h).
 * Deliberately written from the RFCs and nothing else: tokens are split first, then
 * unescaped ("~1" before "~0" per RFC 6901 section 4), arrays take "-" only for add. */
#include <stdlib.h>
#include <string.h>
#include "jsonpatch.h"

/* Splits pointer into unescaped tokens; returns the count, -1 when malformed.
 * toks[i] are malloc'ed; the caller frees them. */
static int split(const char *pointer, char ***toks)
{
	*toks = NULL;
	if (!pointer)
		return -1;
	if (!*pointer)
		return 0;
	if (*pointer != '/')
		return -1;
	int n = 0;
	for (const char *s = pointer; *s; s++)
		n += *s == '/';
	char **t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return -1;
	const char *p = pointer + 1;
	for (int i = 0; i < n; i++) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *tok = malloc(len + 1), *o = tok;
		if (!tok)
			goto bad;
		t[i] = tok;
		for (size_t j = 0; j < len; j++) {
			if (p[j] != '~') {
				*o++ = p[j];
			} else if (j + 1 < len && (p[j + 1] == '0' || p[j + 1] == '1')) {
				*o++ = p[j + 1] == '0' ? '~' : '/';
				j++;
			} else {
				goto bad;
			}
		}
		*o = '\0';
		p += len + 1;
	}
	*toks = t;
	return n;
bad:
	for (int i = 0; i < n; i++)
		free(t[i]);
	free(t);
	return -1;
}

static void free_toks(char **t, int n)
{
	for (int i = 0; i < n; i++)
		free(t[i]);
	free(t);
}

/* RFC 6901 array index: "0" or a non-zero digit followed by digits. */
static int index_of(const char *tok, size_t *out)
{
	size_t n = strlen(tok);
	if (n == 0 || n > 9 || (n > 1 && tok[0] == '0'))
		return -1;
	size_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (tok[i] < '0' || tok[i] > '9')
			return -1;
		v = v * 10 + (size_t)(tok[i] - '0');
	}
	*out = v;
	return 0;
}

static json_t *step(json_t *cur, const char *tok)
{
	size_t i;
	if (json_is_object(cur))
		return json_object_get(cur, tok);
	if (json_is_array(cur) && index_of(tok, &i) == 0)
		return json_array_get(cur, i);
	return NULL;
}

static json_t *walk(json_t *doc, char **t, int n)
{
	json_t *cur = doc;
	for (int i = 0; i < n && cur; i++)
		cur = step(cur, t[i]);
	return cur;
}

json_t *fz_pointer_get(json_t *doc, const char *pointer)
{
	char **t;
	int n = split(pointer, &t);
	if (n < 0)
		return NULL;
	json_t *v = walk(doc, t, n);
	free_toks(t, n);
	return v;
}

/* add: value is borrowed. */
static int op_add(json_t **doc, const char *path, json_t *value)
{
	char **t;
	int n = split(path, &t), rc = -1;
	if (n < 0)
		return -1;
	if (n == 0) {
		json_decref(*doc);
		*doc = json_deep_copy(value);
		return *doc ? 0 : -1;
	}
	json_t *parent = walk(*doc, t, n - 1);
	const char *last = t[n - 1];
	size_t i;
	if (json_is_object(parent)) {
		rc = json_object_set_new(parent, last, json_deep_copy(value));
	} else if (json_is_array(parent)) {
		if (strcmp(last, "-") == 0)
			rc = json_array_append_new(parent, json_deep_copy(value));
		else if (index_of(last, &i) == 0 && i <= json_array_size(parent))
			rc = json_array_insert_new(parent, i, json_deep_copy(value));
	}
	free_toks(t, n);
	return rc ? -1 : 0;
}

static int op_remove(json_t *doc, const char *path)
{
	char **t;
	int n = split(path, &t), rc = -1;
	if (n <= 0) {
		if (n == 0)
			free_toks(t, n);
		return -1;
	}
	json_t *parent = walk(doc, t, n - 1);
	size_t i;
	if (json_is_object(parent) && json_object_get(parent, t[n - 1]))
		rc = json_object_del(parent, t[n - 1]);
	else if (json_is_array(parent) && index_of(t[n - 1], &i) == 0 &&
		 i < json_array_size(parent))
		rc = json_array_remove(parent, i);
	free_toks(t, n);
	return rc ? -1 : 0;
}

int fz_patch_apply(json_t **doc, const json_t *ops)
{
	if (!json_is_array(ops))
		return 1;
	for (size_t k = 0; k < json_array_size(ops); k++) {
		json_t *op = json_array_get(ops, k);
		const char *name = json_string_value(json_object_get(op, "op"));
		const char *path = json_string_value(json_object_get(op, "path"));
		const char *from = json_string_value(json_object_get(op, "from"));
		json_t *value = json_object_get(op, "value");
		int rc = -1;
		if (!name || !path)
			return (int)k + 1;
		if (strcmp(name, "add") == 0 && value) {
			rc = op_add(doc, path, value);
		} else if (strcmp(name, "remove") == 0) {
			rc = op_remove(*doc, path);
		} else if (strcmp(name, "replace") == 0 && value) {
			json_t *v = json_deep_copy(value);
			rc = fz_pointer_get(*doc, path) ? 0 : -1;
			if (rc == 0 && *path)
				rc = op_remove(*doc, path);
			if (rc == 0)
				rc = op_add(doc, path, v);
			json_decref(v);
		} else if (strcmp(name, "test") == 0 && value) {
			json_t *cur = fz_pointer_get(*doc, path);
			rc = cur && json_equal(cur, value) ? 0 : -1;
		} else if ((strcmp(name, "copy") == 0 || strcmp(name, "move") == 0) && from) {
			json_t *src = fz_pointer_get(*doc, from);
			json_t *v = src ? json_deep_copy(src) : NULL;
			rc = v ? 0 : -1;
			if (rc == 0 && name[0] == 'm')
				rc = op_remove(*doc, from);
			if (rc == 0)
				rc = op_add(doc, path, v);
			json_decref(v);
		}
		if (rc != 0)
			return (int)k + 1;
	}
	return 0;
}
