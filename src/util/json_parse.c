/* wmap: a JSON reader into jansson values (see wmap/json_text.h).
 *
 * jansson's own reader pulls the text one byte at a time through a stream callback and a
 * UTF-8 check per character (about 110 instructions a byte); parsing was half of what a
 * 35 KB admission review cost. This reader scans runs of plain characters at once and
 * builds the same values with the same rules as json_loadb(text, len, 0, &error).
 *
 * wmap_json_parse_limited adds caps on members per container and values in all, and a
 * deadline read every 4096 values, so that a hostile body costs a bounded time before
 * anything else looks at it. In cut mode a value over a cap is left out of the tree: its
 * text is still checked by an iterative skimmer that builds nothing, so the envelope
 * around it (an AdmissionReview's uid, kind, operation) is read whole and a syntax error
 * anywhere still fails the parse. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wmap/error.h"
#include "wmap/json_text.h"

/* One step of the path from the root to the value being read: a member's key or an
 * array index. Lives on the stack of the reader's recursion; only read on a cut. */
typedef struct frame {
	const struct frame *up;
	const char *key; /* NULL for an array item */
	size_t key_len, index;
} frame;

typedef struct reader {
	const unsigned char *s, *end, *start;
	json_error_t *err;
	int failed;
	wmap_buf scratch; /* unescaped string text (never longer than the input) */
	/* Limits (wmap_json_parse_limited). */
	int max_depth, keep_depth, cut_mode;
	size_t max_members, max_nodes;
	size_t nodes, next_check; /* values read; where the slow check runs next */
	int64_t deadline_ns;
	const char *over; /* the node cap or the deadline was reached: why */
	size_t over_limit;
	size_t reserve; /* envelope values still built once over */
	int limit_code; /* strict mode: WMAP_ELIMIT when a limit failed the parse */
	int oom;
	wmap_json_cut *cut;
} reader;

/* Values at most this deep are still built once the node cap or the deadline is reached,
 * up to KEEP_RESERVE of them: an AdmissionReview's request members sit at depth 3, so the
 * uid, kind, namespace and operation are read even when they come after a cut object. */
#define KEEP_RESERVE 4096
#define CHECK_EVERY 4096

static json_t skipped_value; /* read_value's answer for a value left out (cut mode) */
#define SKIPPED (&skipped_value)

/* Line and column (1-based, columns in characters) of at; worked out only when needed. */
static void line_column(const reader *r, const unsigned char *at, int *line, int *column)
{
	int l = 1, c = 0;
	for (const unsigned char *p = r->start; p < at && p < r->end; p++) {
		if (*p == '\n') {
			l++;
			c = 0;
		} else if ((*p & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*column = c + 1;
}

static void fail_at(reader *r, const unsigned char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail_at(reader *r, const unsigned char *at, const char *fmt, ...)
{
	if (r->failed)
		return;
	r->failed = 1;
	r->oom = !strcmp(fmt, "out of memory");
	if (!r->err)
		return;
	int line, col;
	line_column(r, at, &line, &col);
	r->err->line = line;
	r->err->column = col;
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
	[0x80] = 1,
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
};

/* Reads the string at r->s (after its opening quote). Sets *text and *len to the characters:
 * the input itself when there was no escape, else r->scratch. */
static int read_string(reader *r, const char **text, size_t *len)
{
	const unsigned char *p = r->s, *run = p;
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
		if (!escaped)
			wmap_buf_clear(&r->scratch);
		if (wmap_buf_add(&r->scratch, run, (size_t)(p - run))) {
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
		if (wmap_buf_add(&r->scratch, out, on)) {
			fail_at(r, p, "out of memory");
			return -1;
		}
		p += 2;
		run = p;
	}
	if (escaped) {
		if (wmap_buf_add(&r->scratch, run, (size_t)(p - run))) {
			fail_at(r, p, "out of memory");
			return -1;
		}
		*text = r->scratch.data;
		*len = r->scratch.len;
	} else {
		*text = (const char *)r->s;
		*len = (size_t)(p - r->s);
	}
	r->s = p + 1;
	return 0;
}

/* Checks the number at p and returns where it ends (NULL and failed when it is not
 * one); *real says whether it has a fraction or an exponent. */
static const unsigned char *scan_number(reader *r, const unsigned char *p, int *real)
{
	const unsigned char *start = p;
	*real = 0;
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
		*real = 1;
		p++;
		if (p >= r->end || *p < '0' || *p > '9') {
			fail_at(r, p, "invalid token");
			return NULL;
		}
		while (p < r->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < r->end && (*p == 'e' || *p == 'E')) {
		*real = 1;
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
	return p;
}

static json_t *read_number(reader *r)
{
	const unsigned char *start = r->s, *p;
	int real;
	if (!(p = scan_number(r, start, &real)))
		return NULL;
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

/* After an item: 1 when a ',' says another follows, 0 when close ends the container, -1
 * (and failed) for anything else. */
static int next_item(reader *r, char close)
{
	skip_space(r);
	if (r->s < r->end && (*r->s == ',' || *r->s == close))
		return *r->s++ == ',';
	fail_at(r, r->s, r->s >= r->end ? "premature end of input" : close == '}' ? "',' or '}' expected"
										  : "',' or ']' expected");
	return -1;
}

/* ---- leaving values out (cut mode) ----------------------------------------------- */

/* Appends to buf (NUL-terminated, cap bytes) the path of f: .key, ["odd key"], [index]. */
static void path_append(char *buf, size_t cap, size_t *n, const frame *f)
{
	char part[96];
	int w;
	if (!f->key) {
		w = snprintf(part, sizeof(part), "[%zu]", f->index);
	} else {
		int plain = f->key_len > 0;
		for (size_t i = 0; plain && i < f->key_len; i++) {
			unsigned char c = (unsigned char)f->key[i];
			plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				(c >= '0' && c <= '9') || c == '_' || c == '-';
		}
		/* Keys are shown up to 64 bytes; odd ones quoted with '"' and '\' escaped. */
		size_t k = 0, shown = f->key_len < 64 ? f->key_len : 64;
		char key[140];
		for (size_t i = 0; i < shown; i++) {
			unsigned char c = (unsigned char)f->key[i];
			if (c == '"' || c == '\\')
				key[k++] = '\\';
			key[k++] = c < 0x20 ? '?' : (char)c;
		}
		key[k] = '\0';
		w = plain ? snprintf(part, sizeof(part), ".%s%s", key, shown < f->key_len ? "..." : "")
			  : snprintf(part, sizeof(part), "[\"%s%s\"]", key,
				     shown < f->key_len ? "..." : "");
	}
	if (w < 0)
		return;
	size_t len = strlen(part);
	if (*n + len + 4 >= cap) {
		if (*n + 4 < cap) {
			memcpy(buf + *n, "...", 4);
			*n += 3;
		}
		*n = cap; /* full: nothing more is appended */
		return;
	}
	memcpy(buf + *n, part, len + 1);
	*n += len;
}

static void path_of(const frame *leaf, char *buf, size_t cap)
{
	const frame *chain[WMAP_JSON_CUT_PATH_STEPS];
	size_t depth = 0, n = 0;
	for (const frame *f = leaf; f; f = f->up)
		depth++;
	/* The first steps from the root: those say where in the document the value is. */
	size_t skip = depth > WMAP_JSON_CUT_PATH_STEPS ? depth - WMAP_JSON_CUT_PATH_STEPS : 0;
	const frame *f = leaf;
	for (size_t i = 0; i < skip; i++)
		f = f->up;
	size_t k = 0;
	for (; f; f = f->up)
		chain[k++] = f;
	buf[0] = '\0';
	if (!k) {
		snprintf(buf, cap, ".");
		return;
	}
	while (k > 0 && n < cap)
		path_append(buf, cap, &n, chain[--k]);
	if (skip && n < cap && n + 4 < cap)
		memcpy(buf + n, "...", 4);
}

/* Records that the value at r->s (the path in f) is left out for reason. */
static void note_cut(reader *r, const char *reason, size_t limit, const frame *f)
{
	wmap_json_cut *c = r->cut;
	c->left_out++;
	if (c->reason)
		return;
	c->reason = reason;
	c->limit = limit;
	line_column(r, r->s, &c->line, &c->column);
	c->position = (size_t)(r->s - r->start);
	path_of(f, c->path, sizeof(c->path));
}

/* Checks the string that starts after the opening quote at p, without copying it: where
 * it ends (past the closing quote), or NULL (failed) with read_string's messages. */
static const unsigned char *string_end(reader *r, const unsigned char *p)
{
	for (;;) {
		while (p < r->end && !string_stop[*p])
			p++;
		if (p >= r->end) {
			fail_at(r, p, "premature end of input");
			return NULL;
		}
		unsigned c = *p;
		if (c == '"')
			return p + 1;
		if (c >= 0x80) {
			size_t k = utf8_len(p, r->end);
			if (!k) {
				fail_at(r, p, "invalid UTF-8 in a string");
				return NULL;
			}
			p += k;
			continue;
		}
		if (c < 0x20) {
			fail_at(r, p, "control character 0x%x in a string", c);
			return NULL;
		}
		if (p + 1 >= r->end) {
			fail_at(r, p, "premature end of input");
			return NULL;
		}
		if (p[1] != 'u') {
			if (!strchr("\"\\/bfnrt", p[1]) || !p[1]) {
				fail_at(r, p, "invalid escape");
				return NULL;
			}
			p += 2;
			continue;
		}
		uint32_t cp, lo;
		if (r->end - p < 6 || hex4(p + 2, &cp)) {
			fail_at(r, p, "invalid \\u escape");
			return NULL;
		}
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (r->end - p < 12 || p[6] != '\\' || p[7] != 'u' || hex4(p + 8, &lo) ||
			    lo < 0xDC00 || lo > 0xDFFF) {
				fail_at(r, p, "invalid Unicode '\\u%04X'", (unsigned)cp);
				return NULL;
			}
			p += 6;
		} else if ((cp >= 0xDC00 && cp <= 0xDFFF) || cp == 0) {
			fail_at(r, p, cp ? "invalid Unicode '\\u%04X'" : "\\u0000 is not allowed",
				(unsigned)cp);
			return NULL;
		}
		p += 6;
	}
}

/* 1 for JSON whitespace. */
static const unsigned char space[256] = { [' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1 };

/* Checks JSON text and moves past it without building anything: one value at r->s when
 * open is 0; else the rest of the container open ('{' or '[') that r->s is inside, just
 * after one of its items, up to and including its closing bracket. Iterative, with the
 * position in a local: the kinds of the open containers are one bit each, so any depth
 * costs len/8 bytes at most. About 5 instructions a byte on dense text ("0,0,0"). */
static int skim(reader *r, char open)
{
	unsigned char stack_bits[64], *bits = stack_bits;
	size_t cap = sizeof(stack_bits) * 8, depth = 0;
	const unsigned char *p = r->s, *end = r->end;
	int rc = -1, obj = 0;
	const char *expected;
	if (open) {
		bits[0] = open == '{';
		depth = 1;
		obj = open == '{';
		goto after_value;
	}
	for (;;) {
		/* A value. */
		while (p < end && space[*p])
			p++;
		if (p >= end) {
			fail_at(r, p, "premature end of input");
			goto done;
		}
		unsigned c = *p;
		if (c == '"') {
			if (!(p = string_end(r, p + 1)))
				goto done;
		} else if ((c >= '0' && c <= '9') || c == '-') {
			/* Plain integers inline; anything else through scan_number. */
			const unsigned char *q = p + (c == '-');
			if (q < end && *q >= '1' && *q <= '9') {
				while (++q < end && *q >= '0' && *q <= '9')
					;
			} else if (q < end && *q == '0') {
				q++;
			} else {
				q = p;
			}
			if (q == p || (q < end && (*q == '.' || *q == 'e' || *q == 'E' ||
						   (*q >= '0' && *q <= '9')))) {
				int real;
				if (!(q = scan_number(r, p, &real)))
					goto done;
			}
			p = q;
		} else if (c == '{' || c == '[') {
			if (depth == cap) {
				size_t ncap = cap * 2;
				unsigned char *nb = bits == stack_bits ? malloc(ncap / 8)
								       : realloc(bits, ncap / 8);
				if (!nb) {
					fail_at(r, p, "out of memory");
					goto done;
				}
				if (bits == stack_bits)
					memcpy(nb, stack_bits, sizeof(stack_bits));
				bits = nb;
				cap = ncap;
			}
			obj = c == '{';
			if (obj)
				bits[depth / 8] |= (unsigned char)(1u << (depth % 8));
			else
				bits[depth / 8] &= (unsigned char)~(1u << (depth % 8));
			depth++;
			p++;
			while (p < end && space[*p])
				p++;
			if (p < end && *p == (obj ? '}' : ']')) {
				p++;
				depth--;
				obj = depth && bits[(depth - 1) / 8] >> ((depth - 1) % 8) & 1;
			} else if (obj) {
				goto key;
			} else {
				continue;
			}
		} else {
			r->s = p;
			if (!literal(r, c == 't' ? "true" : c == 'f' ? "false"
								     : "null")) {
				fail_at(r, p, "invalid token");
				goto done;
			}
			p = r->s;
		}
	after_value:
		/* A value ended: close what it ends, or go on with the next item. */
		if (p < end && *p == ',' && depth) { /* the common case, first */
			p++;
			if (obj)
				goto key;
			continue;
		}
		for (;;) {
			if (depth == 0) {
				rc = 0;
				goto done;
			}
			while (p < end && space[*p])
				p++;
			if (p < end && *p == ',') {
				p++;
				break;
			}
			if (p < end && *p == (obj ? '}' : ']')) {
				p++;
				depth--;
				obj = depth && bits[(depth - 1) / 8] >> ((depth - 1) % 8) & 1;
				continue;
			}
			expected = obj ? "',' or '}' expected" : "',' or ']' expected";
			fail_at(r, p, "%s", p >= end ? "premature end of input" : expected);
			goto done;
		}
		if (!obj)
			continue;
	key:
		while (p < end && space[*p])
			p++;
		if (p >= end || *p != '"') {
			fail_at(r, p, p >= end ? "premature end of input" : "string or '}' expected");
			goto done;
		}
		if (!(p = string_end(r, p + 1)))
			goto done;
		while (p < end && space[*p])
			p++;
		if (p >= end || *p != ':') {
			fail_at(r, p, "':' expected");
			goto done;
		}
		p++;
	}
done:
	r->s = p ? p : r->s;
	if (bits != stack_bits)
		free(bits);
	return rc;
}

/* A limit was reached at the value at r->s (path f): cut mode leaves it out (SKIPPED, or
 * NULL when its text is broken), strict mode fails the parse. */
static json_t *over_limit(reader *r, const char *reason, size_t limit, const frame *f,
			  const char *what)
{
	if (!r->cut_mode) {
		fail_at(r, r->s, "%s", what);
		r->limit_code = WMAP_ELIMIT;
		return NULL;
	}
	note_cut(r, reason, limit, f);
	return skim(r, 0) ? NULL : SKIPPED;
}

static int64_t clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The slow half of the per-value count: the node cap and the deadline. 1 when this value
 * must be left out (r->over says why), 0 when it may be built. */
static int count_check(reader *r, int depth)
{
	if (!r->over) {
		if (r->nodes > r->max_nodes) {
			r->over = "too-many-nodes";
			r->over_limit = r->max_nodes;
		} else if (r->deadline_ns && clock_ns() > r->deadline_ns) {
			r->over = "budget";
			r->over_limit = 0;
		} else {
			size_t next = r->nodes + CHECK_EVERY;
			if (!r->deadline_ns || next > r->max_nodes)
				next = r->max_nodes;
			r->next_check = next;
			return 0;
		}
	}
	if (r->cut_mode && depth <= r->keep_depth && r->reserve > 0) {
		r->reserve--;
		return 0;
	}
	return 1;
}

static json_t *read_value(reader *r, int depth, const frame *f);

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

static json_t *read_object(reader *r, int depth, const frame *up)
{
	json_t *obj = json_object();
	if (!obj) {
		fail_at(r, r->s, "out of memory");
		return NULL;
	}
	if (open_container(r, '}'))
		return obj;
	frame f = { up, NULL, 0, 0 };
	for (size_t members = 0;; members++) {
		skip_space(r);
		if (r->s >= r->end || *r->s != '"') {
			fail_at(r, r->s, r->s >= r->end ? "premature end of input" : "string or '}' expected");
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
		memcpy(k, key, key_len); /* no NUL inside: read_string refuses \u0000 */
		k[key_len] = '\0';
		skip_space(r);
		if (r->s >= r->end || *r->s != ':') {
			fail_at(r, r->s, "':' expected");
			if (k != kbuf)
				free(k);
			goto bad;
		}
		r->s++;
		f.key = k;
		f.key_len = key_len;
		json_t *v;
		if (members >= r->max_members) {
			skip_space(r);
			v = over_limit(r, "too-many-members", r->max_members, &f,
				       "too many members in an object");
		} else {
			v = read_value(r, depth + 1, &f);
		}
		/* As jansson without JSON_REJECT_DUPLICATES: a repeated key keeps its last value. */
		int rc = v == SKIPPED ? 0 : v ? json_object_setn_new_nocheck(obj, k, key_len, v)
					      : -1;
		if (k != kbuf)
			free(k);
		if (rc) {
			if (v)
				fail_at(r, r->s, "out of memory");
			goto bad;
		}
		/* The members after a left-out one are over the same cap: skimmed in one go. */
		if (v == SKIPPED) {
			if (skim(r, '{'))
				goto bad;
			return obj;
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

static json_t *read_array(reader *r, int depth, const frame *up)
{
	json_t *arr = json_array();
	if (!arr) {
		fail_at(r, r->s, "out of memory");
		return NULL;
	}
	if (open_container(r, ']'))
		return arr;
	frame f = { up, NULL, 0, 0 };
	for (size_t items = 0;; items++) {
		json_t *v;
		f.index = items;
		if (items >= r->max_members) {
			skip_space(r);
			v = over_limit(r, "too-many-members", r->max_members, &f,
				       "too many items in an array");
		} else {
			v = read_value(r, depth + 1, &f);
		}
		if (!v)
			goto bad;
		if (v == SKIPPED) { /* the items after it are over the same cap */
			if (skim(r, '['))
				goto bad;
			return arr;
		}
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

static json_t *read_value(reader *r, int depth, const frame *f)
{
	skip_space(r);
	if (depth > r->max_depth)
		return over_limit(r, "too-deep", (size_t)r->max_depth, f,
				  "maximum parsing depth reached");
	if (r->nodes++ >= r->next_check && count_check(r, depth))
		return over_limit(r, r->over, r->over_limit, f,
				  r->over_limit ? "too many values" : "parse time budget exceeded");
	if (r->s >= r->end) {
		fail_at(r, r->s, "premature end of input");
		return NULL;
	}
	json_t *v;
	switch (*r->s) {
	case '{':
		return read_object(r, depth, f);
	case '[':
		return read_array(r, depth, f);
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

static json_t *parse(reader *r)
{
	if (r->err)
		memset(r->err, 0, sizeof(*r->err));
	skip_space(r);
	json_t *v = NULL;
	if (r->s < r->end && (*r->s == '{' || *r->s == '['))
		v = read_value(r, 1, NULL);
	else
		fail_at(r, r->s, "'[' or '{' expected");
	if (v == SKIPPED) { /* cannot happen: the root is always kept; refused all the same */
		fail_at(r, r->start, "nothing was kept");
		v = NULL;
	}
	if (v) {
		skip_space(r);
		if (r->s != r->end) {
			fail_at(r, r->s, "end of file expected");
			json_decref(v);
			v = NULL;
		}
	}
	wmap_buf_free(&r->scratch);
	return v;
}

json_t *wmap_json_parse(const char *text, size_t len, json_error_t *err)
{
	reader r = { 0 };
	r.s = r.start = (const unsigned char *)text;
	r.end = r.s + len;
	r.err = err;
	r.max_depth = WMAP_JSON_PARSE_MAX_DEPTH;
	r.max_members = r.max_nodes = r.next_check = SIZE_MAX;
	wmap_buf_init(&r.scratch, len, 256);
	return parse(&r);
}

int wmap_json_parse_limited(json_t **out, wmap_json_cut *cut, const char *text, size_t len,
			    const wmap_json_limits *lim, json_error_t *err)
{
	wmap_json_cut scratch;
	reader r = { 0 };
	*out = NULL;
	if (!cut)
		cut = &scratch;
	memset(cut, 0, sizeof(*cut));
	r.s = r.start = (const unsigned char *)text;
	r.end = r.s + len;
	r.err = err;
	r.cut = cut;
	r.cut_mode = lim->cut;
	r.max_depth = lim->max_depth > 0 && lim->max_depth < WMAP_JSON_PARSE_MAX_DEPTH
			      ? lim->max_depth
			      : WMAP_JSON_PARSE_MAX_DEPTH;
	r.keep_depth = lim->keep_depth;
	r.max_members = lim->max_members ? lim->max_members : SIZE_MAX;
	r.max_nodes = lim->max_nodes ? lim->max_nodes : SIZE_MAX;
	r.deadline_ns = lim->deadline_ns;
	r.next_check = r.deadline_ns && r.max_nodes > CHECK_EVERY ? CHECK_EVERY : r.max_nodes;
	r.reserve = KEEP_RESERVE;
	wmap_buf_init(&r.scratch, len, 256);
	*out = parse(&r);
	if (*out)
		return 0;
	if (r.limit_code)
		return r.limit_code;
	return r.oom ? WMAP_ENOMEM : WMAP_EINVAL;
}
