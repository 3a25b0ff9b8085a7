/* wmap: JSON Pointers (RFC 6901), strict (see wmap/pointer.h). The one place that escapes,
 * unescapes and follows pointers: the resolver's locations, the patch builder and applier
 * and the messages all go through it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wmap/pointer.h"

size_t wmap_pointer_escape(char *buf, size_t len, const char *token)
{
	size_t n = 0, written = 0;

	/* RFC 6901: `~` first, then `/`, so "a/~b" becomes "a~1~0b" and never "a~01b". */
	for (const char *s = token; *s; s++) {
		const char *rep = *s == '~' ? "~0" : *s == '/' ? "~1"
							       : NULL;
		size_t need = rep ? 2 : 1;

		if (n == written && n + need < len) {
			memcpy(buf + n, rep ? rep : s, need);
			written += need;
		}
		n += need;
	}
	if (len)
		buf[written] = '\0';
	return n;
}

char *wmap_pointer_join(const char *base, const char *token)
{
	return wmap_pointer_join_with(malloc, base, token);
}

char *wmap_pointer_join_with(void *(*alloc)(size_t), const char *base, const char *token)
{
	/* Written out rather than through wmap_pointer_escape: every location the resolver
	 * reports is built here. Most tokens need no escape: they are copied whole. */
	size_t bl = strlen(base), tl = strlen(token), plain = strcspn(token, "~/"), extra = 0;
	for (const char *s = token + plain; *s; s++)
		extra += (*s == '~' || *s == '/');
	char *out = alloc(bl + 1 + tl + extra + 1);
	if (!out)
		return NULL;
	memcpy(out, base, bl);
	char *o = out + bl;
	*o++ = '/';
	memcpy(o, token, plain);
	o += plain;
	for (const char *s = token + plain; *s; s++) {
		if (*s == '~') {
			*o++ = '~';
			*o++ = '0';
		} else if (*s == '/') {
			*o++ = '~';
			*o++ = '1';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

char *wmap_pointer_join_index(const char *base, size_t index)
{
	/* Digits by hand: snprintf cost more than the join (one per array element walked). */
	char digits[24];
	size_t nd = 0;
	do {
		digits[nd++] = (char)('0' + index % 10);
		index /= 10;
	} while (index);
	size_t bl = strlen(base);
	char *out = malloc(bl + 1 + nd + 1);
	if (!out)
		return NULL;
	memcpy(out, base, bl);
	char *o = out + bl;
	*o++ = '/';
	while (nd)
		*o++ = digits[--nd];
	*o = '\0';
	return out;
}

int wmap_pointer_token_valid(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] == '~' && !(i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')))
			return 0;
	return 1;
}

char *wmap_pointer_token_dup(const char *p, size_t n)
{
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '~') {
			*o++ = p[i];
			continue;
		}
		if (i + 1 < n && p[i + 1] == '0')
			*o++ = '~';
		else if (i + 1 < n && p[i + 1] == '1')
			*o++ = '/';
		else {
			free(out);
			return NULL;
		}
		i++;
	}
	*o = '\0';
	return out;
}

int wmap_pointer_index(size_t *out, const char *tok)
{
	if (!*tok || (tok[0] == '0' && tok[1]) || strlen(tok) > 9)
		return -1;
	size_t v = 0;
	for (const char *s = tok; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (size_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static json_t *child(const json_t *cur, const char *tok)
{
	if (json_is_object(cur))
		return json_object_get(cur, tok);
	size_t i;
	if (json_is_array(cur) && wmap_pointer_index(&i, tok) == 0)
		return json_array_get(cur, i);
	return NULL;
}

json_t *wmap_pointer_child(const json_t *cur, const char *p, size_t n, int *bad, int *oom)
{
	if (!memchr(p, '~', n)) {
		if (json_is_object(cur))
			return json_object_getn(cur, p, n);
		char idx[16];
		size_t i;
		if (!json_is_array(cur) || n >= sizeof(idx))
			return NULL;
		memcpy(idx, p, n);
		idx[n] = '\0';
		return wmap_pointer_index(&i, idx) == 0 ? json_array_get(cur, i) : NULL;
	}
	if (!wmap_pointer_token_valid(p, n)) {
		*bad = 1;
		return NULL;
	}
	char *tok = wmap_pointer_token_dup(p, n);
	if (!tok) {
		*oom = 1;
		return NULL;
	}
	json_t *c = child(cur, tok);
	free(tok);
	return c;
}

json_t *wmap_pointer_lookup(const json_t *doc, const char *pointer)
{
	json_t *cur = (json_t *)doc;
	const char *p = pointer;
	if (!p || (*p && *p != '/'))
		return NULL;
	while (cur && *p == '/') {
		const char *end = strchr(p + 1, '/');
		size_t n = end ? (size_t)(end - p - 1) : strlen(p + 1);
		int bad = 0, oom = 0;
		cur = wmap_pointer_child(cur, p + 1, n, &bad, &oom);
		p += n + 1;
	}
	return cur;
}

/* Unescapes the token at *pp (its '/') into buf; -1 when malformed or longer than buf. */
static int next_token(const char **pp, char *buf, size_t len)
{
	const char *p = *pp + 1;
	size_t n = strcspn(p, "/");

	if (n >= len || !wmap_pointer_token_valid(p, n))
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == '~')
			c = p[++i] == '0' ? '~' : '/';
		buf[o++] = c;
	}
	buf[o] = '\0';
	*pp = p + n;
	return 0;
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
