/* wmap: compact JSON text that is never partial (see wmap/json_text.h). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include "wmap/base64.h"
#include "wmap/error.h"
#include "wmap/json_text.h"

typedef wmap_json_writer text;

static inline void put(text *t, const char *s, size_t n)
{
	wmap_buf_add(&t->buf, s, n);
}

static inline void put_c(text *t, char c)
{
	wmap_buf_addc(&t->buf, c);
}

/* 1 for the bytes a JSON string cannot hold as they are: controls, '"' and '\\'. Bytes of
 * UTF-8 sequences are copied (jansson's strings are valid UTF-8, and jansson does the same
 * without JSON_ENSURE_ASCII). */
static const unsigned char must_escape[256] = {
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	['"'] = 1,
	['\\'] = 1,
};

#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WORDS 1
/* The bytes of w (eight of a string, in memory order) that need an escape, as the high bit
 * of each: the lowest one set is exact (a borrow may flag bytes above it too). */
static inline uint64_t escapes8(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
	return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & high;
}
#endif

/* The length of the run at the start of s[0..n) that needs no escape: 16 bytes at a time
 * (SSE2, every x86-64), then 8, the last few as the 8 bytes that end the string (those
 * before are known plain), so that no byte is looked at alone unless the string is shorter
 * than 8. A patch's values are mostly short strings; a base64 patch is 50 KB of plain. */
static size_t plain_run(const char *s, size_t n)
{
	size_t i = 0;
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i ctl = _mm_set1_epi8(0x1f);
	for (; i + 16 <= n; i += 16) {
		__m128i c = _mm_loadu_si128((const __m128i *)(s + i));
		__m128i bad = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(c, quote), _mm_cmpeq_epi8(c, bslash)),
					   _mm_cmpeq_epi8(_mm_max_epu8(c, ctl), ctl));
		int m = _mm_movemask_epi8(bad);
		if (m)
			return i + (size_t)__builtin_ctz((unsigned)m);
	}
#endif
#ifdef WORDS
	uint64_t w, m;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		if ((m = escapes8(w)))
			return i + (size_t)__builtin_ctzll(m) / 8;
	}
	if (i < n && n >= 8) {
		memcpy(&w, s + n - 8, 8);
		m = escapes8(w);
		return m ? n - 8 + (size_t)__builtin_ctzll(m) / 8 : n;
	}
#endif
	while (i < n && !must_escape[(unsigned char)s[i]])
		i++;
	return i;
}

/* n bytes from s to d, the short ones (most keys and values) without a call. */
static inline void copy_bytes(char *d, const char *s, size_t n)
{
	uint64_t a, b;
	if (n >= 8 && n <= 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		uint32_t x, y;
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	} else {
		memcpy(d, s, n);
	}
}

static void put_string(text *t, const char *s, size_t n)
{
	wmap_buf *b = &t->buf;
	size_t i = plain_run(s, n);
	if (i == n && b->data && n + 2 < b->alloc - b->len) {
		/* Nothing to escape and room for it all: straight into the buffer. */
		char *d = b->data + b->len;
		d[0] = '"';
		copy_bytes(d + 1, s, n);
		d[n + 1] = '"';
		b->len += n + 2;
		return;
	}
	put_c(t, '"');
	put(t, s, i);
	if (i == n) {
		put_c(t, '"');
		return;
	}
	while (i < n && !t->buf.error) {
		size_t run = i + plain_run(s + i, n - i);
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
			snprintf(esc, sizeof(esc), "\\u%04X", c); /* as jansson: upper-case hex */
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
	if (t->buf.error)
		return;
	if (depth > WMAP_JSON_TEXT_MAX_DEPTH) {
		wmap_buf_fail(&t->buf, WMAP_ELIMIT);
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		/* jansson's iterator calls, once each per member (its foreach macro makes five). */
		int first = 1;
		put_c(t, '{');
		for (void *it = json_object_iter((json_t *)v); it;
		     it = json_object_iter_next((json_t *)v, it)) {
			if (!first)
				put_c(t, ',');
			first = 0;
			put_string(t, json_object_iter_key(it), json_object_iter_key_len(it));
			put_c(t, ':');
			put_value(t, json_object_iter_value(it), depth + 1);
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
			wmap_buf_fail(&t->buf, WMAP_EINVAL);
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

void wmap_json_write_raw(wmap_json_writer *w, const char *s, size_t n)
{
	put(w, s, n);
}

void wmap_json_write_string(wmap_json_writer *w, const char *s, size_t n)
{
	put_string(w, s, n);
}

void wmap_json_write_base64(wmap_json_writer *w, const void *data, size_t n)
{
	wmap_buf *b = &w->buf;
	const unsigned char *d = data;
	size_t need = WMAP_BASE64_LEN(n) + 2;
	if (b->error)
		return;
	if (b->data && need < b->alloc - b->len) {
		/* Room for it all (a review's answer is sized for its patch): no copy. */
		b->data[b->len++] = '"';
		b->len += wmap_base64_encode(b->data + b->len, d, n);
		b->data[b->len++] = '"';
		return;
	}
	char chunk[4096]; /* 3072 bytes' worth */
	put_c(w, '"');
	for (size_t i = 0; i < n; i += 3072) {
		size_t k = n - i < 3072 ? n - i : 3072;
		put(w, chunk, wmap_base64_encode(chunk, d + i, k));
	}
	put_c(w, '"');
}

void wmap_json_write_value(wmap_json_writer *w, const json_t *v)
{
	if (!v)
		wmap_buf_fail(&w->buf, WMAP_EINVAL);
	else
		put_value(w, v, 0);
}

char *wmap_json_writer_finish(wmap_json_writer *w, size_t *len)
{
	char *out = wmap_buf_take(&w->buf, len);

	wmap_buf_free(&w->buf);
	return out;
}

char *wmap_json_text(const json_t *v, size_t *len)
{
	wmap_json_writer w = WMAP_JSON_WRITER_INIT;
	wmap_json_write_value(&w, v);
	return wmap_json_writer_finish(&w, len);
}
