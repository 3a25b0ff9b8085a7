/* wmap: a JSON reader into jansson values (see wmap/json_text.h).
 *
 * jansson's own reader pulls the text one byte at a time through a stream callback and a
 * UTF-8 check per character (about 110 instructions a byte); parsing was half of what a
 * 35 KB admission review cost. This reader scans runs of plain characters at once and
 * builds the same values with the same rules as json_loadb(text, len, 0, &error). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wmap/json_text.h"

typedef struct reader {
	const unsigned char *s, *end, *start;
	json_error_t *err;
	int failed;
	char *scratch;   /* unescaped string text */
	size_t scratch_cap;
} reader;

static void fail_at(reader *r, const unsigned char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail_at(reader *r, const unsigned char *at, const char *fmt, ...)
{
	if (r->failed)
		return;
	r->failed = 1;
	if (!r->err)
		return;
	/* Line and column (1-based, columns in characters) are worked out only on failure. */
	int line = 1, col = 0;
	for (const unsigned char *p = r->start; p < at && p < r->end; p++) {
		if (*p == '\n') {
			line++;
			col = 0;
		} else if ((*p & 0xC0) != 0x80) {
			col++;
		}
	}
	r->err->line = line;
	r->err->column = col + 1;
	r->err->position = (int)(at - r->start);
	snprintf(r->err->source, sizeof(r->err->source), "<buffer>");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err->text, sizeof(r->err->text), fmt, ap);
	va_end(ap);
}

static void skip_space(reader *r)
{
	while (r->s < r->end && (*r->s == ' ' || *r->s == '\n' || *r->s == '\r' || *r->s == '\t'))
		r->s++;
}

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF), 0 when invalid. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	size_t n;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
		cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		cp = c & 0x0F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

static int scratch_put(reader *r, size_t *n, const void *src, size_t len)
{
	if (len == 0)
		return 0;   /* also keeps NULL + 0 out of memcpy before the first allocation */
	if (r->scratch_cap - *n < len) {
		size_t cap = r->scratch_cap ? r->scratch_cap : 256;
		while (cap - *n < len)
			cap *= 2;
		char *p = realloc(r->scratch, cap);
		if (!p)
			return -1;
		r->scratch = p;
		r->scratch_cap = cap;
	}
	memcpy(r->scratch + *n, src, len);
	*n += len;
	return 0;
}

static int hex4(const unsigned char *p, uint32_t *out)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t utf8_encode(uint32_t cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xC0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xE0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (unsigned char)(0xF0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

/* 1 for the bytes that end a plain run inside a string: '"', '\\', controls, non-ASCII. */
static const unsigned char string_stop[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['"'] = 1, ['\\'] = 1,
	[0x80] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* Reads the string at r->s (after its opening quote). Sets *text and *len to the characters:
 * the input itself when there was no escape, else r->scratch. */
static int read_string(reader *r, const char **text, size_t *len)
{
	const unsigned char *p = r->s, *run = p;
	size_t n = 0;
	int escaped = 0;
	for (;;) {
		while (p < r->end && !string_stop[*p])
			p++;
		if (p >= r->end) {
			fail_at(r, p, "premature end of input");
			return -1;
		}
		unsigned c = *p;
		if (c == '"')
			break;
		if (c >= 0x80) {
			size_t k = utf8_len(p, r->end);
			if (!k) {
				fail_at(r, p, "invalid UTF-8 in a string");
				return -1;
			}
			p += k;
			continue;
		}
		if (c < 0x20) {
			fail_at(r, p, "control character 0x%x in a string", c);
			return -1;
		}
		/* A backslash: what came before goes to the scratch buffer, then the escape. */
		if (scratch_put(r, &n, run, (size_t)(p - run))) {
			fail_at(r, p, "out of memory");
			return -1;
		}
		escaped = 1;
		if (p + 1 >= r->end) {
			fail_at(r, p, "premature end of input");
			return -1;
		}
		unsigned char out[4];
		size_t on = 1;
		const unsigned char *esc = p;
		switch (p[1]) {
		case '"': out[0] = '"'; break;
		case '\\': out[0] = '\\'; break;
		case '/': out[0] = '/'; break;
		case 'b': out[0] = '\b'; break;
		case 'f': out[0] = '\f'; break;
		case 'n': out[0] = '\n'; break;
		case 'r': out[0] = '\r'; break;
		case 't': out[0] = '\t'; break;
		case 'u': {
			uint32_t cp, lo;
			if (r->end - p < 6 || hex4(p + 2, &cp)) {
				fail_at(r, esc, "invalid \\u escape");
				return -1;
			}
			p += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (r->end - p < 8 || p[2] != '\\' || p[3] != 'u' || hex4(p + 4, &lo) ||
				    lo < 0xDC00 || lo > 0xDFFF) {
					fail_at(r, esc, "invalid Unicode '\\u%04X'", (unsigned)cp);
					return -1;
				}
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				p += 6;
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				fail_at(r, esc, "invalid Unicode '\\u%04X'", (unsigned)cp);
				return -1;
			} else if (cp == 0) {
				fail_at(r, esc, "\\u0000 is not allowed");
				return -1;
			}
			on = utf8_encode(cp, out);
			break;
		}
		default:
			fail_at(r, p, "invalid escape");
			return -1;
		}
		if (scratch_put(r, &n, out, on)) {
			fail_at(r, p, "out of memory");
			return -1;
		}
		p += 2;
		run = p;
	}
	if (escaped) {
		if (scratch_put(r, &n, run, (size_t)(p - run))) {
			fail_at(r, p, "out of memory");
			return -1;
		}
		*text = r->scratch;
		*len = n;
	} else {
		*text = (const char *)r->s;
		*len = (size_t)(p - r->s);
	}
	r->s = p + 1;
	return 0;
}

static json_t *read_number(reader *r)
{
	const unsigned char *p = r->s, *start = p;
	int real = 0;
	if (p < r->end && *p == '-')
		p++;
	if (p < r->end && *p == '0') {
		p++;
	} else if (p < r->end && *p >= '1' && *p <= '9') {
		while (p < r->end && *p >= '0' && *p <= '9')
			p++;
	} else {
		fail_at(r, start, "invalid token");
		return NULL;
	}
	if (p < r->end && *p == '.') {
		real = 1;
		p++;
		if (p >= r->end || *p < '0' || *p > '9') {
			fail_at(r, p, "invalid token");
			return NULL;
		}
		while (p < r->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < r->end && (*p == 'e' || *p == 'E')) {
		real = 1;
		p++;
		if (p < r->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= r->end || *p < '0' || *p > '9') {
			fail_at(r, p, "invalid token");
			return NULL;
		}
		while (p < r->end && *p >= '0' && *p <= '9')
			p++;
	}
	/* strtoll and strtod need a terminated copy; numbers in objects are short. */
	size_t n = (size_t)(p - start);
	char small[64], *buf = n < sizeof(small) ? small : malloc(n + 1);
	if (!buf) {
		fail_at(r, start, "out of memory");
		return NULL;
	}
	memcpy(buf, start, n);
	buf[n] = '\0';
	json_t *v = NULL;
	errno = 0;
	if (!real) {
		long long i = strtoll(buf, NULL, 10);
		if (errno == ERANGE)
			fail_at(r, start, i < 0 ? "too big negative integer" : "too big integer");
		else if (!(v = json_integer((json_int_t)i)))
			fail_at(r, start, "out of memory");
	} else {
		/* wmap never calls setlocale: strtod reads '.' as the decimal point. */
		double d = strtod(buf, NULL);
		if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL))
			fail_at(r, start, "real number overflow");
		else if (!(v = json_real(d)))
			fail_at(r, start, "out of memory");
	}
	if (buf != small)
		free(buf);
	r->s = p;
	return v;
}

static int literal(reader *r, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(r->end - r->s) < n || memcmp(r->s, word, n) != 0)
		return 0;
	r->s += n;
	return 1;
}

static json_t *read_value(reader *r, int depth);

/* The opening bracket at r->s is consumed: 1 when the container is empty (its closing
 * bracket consumed too), 0 when items follow. */
static int open_container(reader *r, char close)
{
	r->s++;
	skip_space(r);
	if (r->s < r->end && *r->s == close) {
		r->s++;
		return 1;
	}
	return 0;
}

/* After an item: 1 when a ',' says another follows, 0 when close ends the container, -1
 * (and failed) for anything else. */
static int next_item(reader *r, char close)
{
	skip_space(r);
	if (r->s < r->end && (*r->s == ',' || *r->s == close))
		return *r->s++ == ',';
	fail_at(r, r->s, r->s >= r->end ? "premature end of input"
			: close == '}' ? "',' or '}' expected" : "',' or ']' expected");
	return -1;
}

static json_t *read_object(reader *r, int depth)
{
	json_t *obj = json_object();
	if (!obj) {
		fail_at(r, r->s, "out of memory");
		return NULL;
	}
	if (open_container(r, '}'))
		return obj;
	for (;;) {
		skip_space(r);
		if (r->s >= r->end || *r->s != '"') {
			fail_at(r, r->s, r->s >= r->end ? "premature end of input"
							: "string or '}' expected");
			goto bad;
		}
		r->s++;
		const char *key;
		size_t key_len;
		if (read_string(r, &key, &key_len))
			goto bad;
		/* The key may live in the scratch buffer, which the value's strings reuse. */
		char kbuf[128], *k = key_len < sizeof(kbuf) ? kbuf : malloc(key_len + 1);
		if (!k) {
			fail_at(r, r->s, "out of memory");
			goto bad;
		}
		memcpy(k, key, key_len);   /* no NUL inside: read_string refuses \u0000 */
		k[key_len] = '\0';
		skip_space(r);
		if (r->s >= r->end || *r->s != ':') {
			fail_at(r, r->s, "':' expected");
			if (k != kbuf)
				free(k);
			goto bad;
		}
		r->s++;
		json_t *v = read_value(r, depth + 1);
		/* As jansson without JSON_REJECT_DUPLICATES: a repeated key keeps its last value. */
		int rc = v ? json_object_setn_new_nocheck(obj, k, key_len, v) : -1;
		if (k != kbuf)
			free(k);
		if (rc) {
			if (v)
				fail_at(r, r->s, "out of memory");
			goto bad;
		}
		int more = next_item(r, '}');
		if (more < 0)
			goto bad;
		if (!more)
			return obj;
	}
bad:
	json_decref(obj);
	return NULL;
}

static json_t *read_array(reader *r, int depth)
{
	json_t *arr = json_array();
	if (!arr) {
		fail_at(r, r->s, "out of memory");
		return NULL;
	}
	if (open_container(r, ']'))
		return arr;
	for (;;) {
		json_t *v = read_value(r, depth + 1);
		if (!v)
			goto bad;
		if (json_array_append_new(arr, v)) {
			fail_at(r, r->s, "out of memory");
			goto bad;
		}
		int more = next_item(r, ']');
		if (more < 0)
			goto bad;
		if (!more)
			return arr;
	}
bad:
	json_decref(arr);
	return NULL;
}

static json_t *read_value(reader *r, int depth)
{
	skip_space(r);
	if (depth > WMAP_JSON_PARSE_MAX_DEPTH) {
		fail_at(r, r->s, "maximum parsing depth reached");
		return NULL;
	}
	if (r->s >= r->end) {
		fail_at(r, r->s, "premature end of input");
		return NULL;
	}
	json_t *v;
	switch (*r->s) {
	case '{':
		return read_object(r, depth);
	case '[':
		return read_array(r, depth);
	case '"': {
		const char *text;
		size_t len;
		r->s++;
		if (read_string(r, &text, &len))
			return NULL;
		/* Checked above: valid UTF-8; a NUL can only come from \u0000, refused. */
		if (!(v = json_stringn_nocheck(text, len)))
			fail_at(r, r->s, "out of memory");
		return v;
	}
	case 't':
		if (literal(r, "true"))
			return json_true();
		break;
	case 'f':
		if (literal(r, "false"))
			return json_false();
		break;
	case 'n':
		if (literal(r, "null"))
			return json_null();
		break;
	default:
		if (*r->s == '-' || (*r->s >= '0' && *r->s <= '9'))
			return read_number(r);
	}
	fail_at(r, r->s, "invalid token");
	return NULL;
}

json_t *wmap_json_parse(const char *text, size_t len, json_error_t *err)
{
	reader r = { (const unsigned char *)text, (const unsigned char *)text + len,
		     (const unsigned char *)text, err, 0, NULL, 0 };
	if (err)
		memset(err, 0, sizeof(*err));
	skip_space(&r);
	json_t *v = NULL;
	if (r.s < r.end && (*r.s == '{' || *r.s == '['))
		v = read_value(&r, 1);
	else
		fail_at(&r, r.s, "'[' or '{' expected");
	if (v) {
		skip_space(&r);
		if (r.s != r.end) {
			fail_at(&r, r.s, "end of file expected");
			json_decref(v);
			v = NULL;
		}
	}
	free(r.scratch);
	return v;
}
