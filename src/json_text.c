/* wmap: compact JSON text that is never partial (see wmap/json_text.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wmap/json_text.h"

typedef struct text {
	char *p;
	size_t n, cap;
	int failed;   /* an allocation failed (or too deep): the text is dropped */
} text;

static int reserve(text *t, size_t more)
{
	if (t->failed)
		return -1;
	if (more <= t->cap - t->n)
		return 0;
	/* One allocation for a small review's answer; glibc consolidates its free lists on
	 * every request of 1 KiB or more, so growing 256, 512, 1024, ... costs more than this. */
	size_t cap = t->cap ? t->cap : 4096;
	while (cap - t->n < more) {
		if (cap > SIZE_MAX / 2) {
			t->failed = 1;
			return -1;
		}
		cap *= 2;
	}
	char *p = realloc(t->p, cap);
	if (!p) {
		t->failed = 1;
		return -1;
	}
	t->p = p;
	t->cap = cap;
	return 0;
}

static void put(text *t, const char *s, size_t n)
{
	if (reserve(t, n) == 0) {
		memcpy(t->p + t->n, s, n);
		t->n += n;
	}
}

static void put_c(text *t, char c)
{
	if (reserve(t, 1) == 0)
		t->p[t->n++] = c;
}

/* 1 for the bytes a JSON string cannot hold as they are: controls, '"' and '\\'. Bytes of
 * UTF-8 sequences are copied (jansson's strings are valid UTF-8, and jansson does the same
 * without JSON_ENSURE_ASCII). */
static const unsigned char must_escape[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['"'] = 1, ['\\'] = 1,
};

static void put_string(text *t, const char *s, size_t n)
{
	put_c(t, '"');
	size_t i = 0;
	while (i < n && !t->failed) {
		size_t run = i;
		while (run < n && !must_escape[(unsigned char)s[run]])
			run++;
		put(t, s + i, run - i);
		if (run == n)
			break;
		unsigned char c = (unsigned char)s[run];
		char esc[8];
		const char *e = esc;
		size_t en = 2;
		switch (c) {
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\b': e = "\\b"; break;
		case '\f': e = "\\f"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04X", c);   /* as jansson: upper-case hex */
			en = 6;
		}
		put(t, e, en);
		i = run + 1;
	}
	put_c(t, '"');
}

static void put_value(text *t, const json_t *v, int depth)
{
	char num[64];
	if (t->failed)
		return;
	if (depth > WMAP_JSON_TEXT_MAX_DEPTH) {
		t->failed = 1;
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		size_t kn;
		json_t *c;
		int first = 1;
		put_c(t, '{');
		json_object_keylen_foreach((json_t *)v, k, kn, c) {
			if (!first)
				put_c(t, ',');
			first = 0;
			put_string(t, k, kn);
			put_c(t, ':');
			put_value(t, c, depth + 1);
		}
		put_c(t, '}');
		break;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *c;
		put_c(t, '[');
		json_array_foreach(v, i, c) {
			if (i)
				put_c(t, ',');
			put_value(t, c, depth + 1);
		}
		put_c(t, ']');
		break;
	}
	case JSON_STRING:
		put_string(t, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER: {
		int n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		put(t, num, (size_t)n);
		break;
	}
	case JSON_REAL: {
		/* jansson's own formatting (shortest round-trip digits, ".0" added), into a
		 * buffer of ours: nothing is allocated. */
		size_t n = json_dumpb(v, num, sizeof(num), JSON_ENCODE_ANY);
		if (n == 0 || n > sizeof(num))
			t->failed = 1;
		else
			put(t, num, n);
		break;
	}
	case JSON_TRUE:
		put(t, "true", 4);
		break;
	case JSON_FALSE:
		put(t, "false", 5);
		break;
	case JSON_NULL:
		put(t, "null", 4);
		break;
	}
}

char *wmap_json_text(const json_t *v, size_t *len)
{
	text t = { 0 };
	if (len)
		*len = 0;
	if (!v)
		return NULL;
	put_value(&t, v, 0);
	put_c(&t, '\0');
	if (t.failed) {
		free(t.p);
		return NULL;
	}
	if (len)
		*len = t.n - 1;
	return t.p;
}
