/* wmap: JSON Patch builder and applier, label values (see wmap/patch.h). */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include "wmap/arena.h"
#include "wmap/json_text.h"
#include "wmap/patch.h"

/* An operation's path and the remembered walk's pointer are review memory (wmap/arena.h):
 * a malloc and a free each were a tenth of a 64-job review's mutation. They never leave the
 * patch, and a patch made in a review's scope is freed in it (its values are the scope's
 * jansson values too). */
static char *pdup(const char *s, size_t n)
{
	char *d = wmap_arena_alloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

#define KEY_TOKENS 8

/* Where a pointer leads through the overlay (patch over document). */
typedef struct walk {
	int rc;        /* 0, or WMAP_EINVAL for a malformed pointer, WMAP_ENOMEM */
	int found;     /* the whole pointer resolved to a non-null value */
	int in_patch;  /* value (or, when !found, parent) belongs to an op's value */
	json_t *value; /* found: the value; else the deepest existing ancestor */
	size_t miss;   /* !found: offset in the pointer of the first missing token's '/' */
	uint64_t hash; /* found and !in_patch: path_hash of the pointer */
	size_t depth;  /* the tokens hashed (found: the pointer's; else up to the missing one) */
	int plain;     /* walk_cached: the pointer is plain ASCII (plain_ascii) */
} walk;

/* A string member of a map the builder made (wmap_patch_set_str): key and value are copies
 * in review memory, plain ASCII. */
typedef struct str_pair {
	size_t key, value; /* offsets into the op's text */
	size_t key_len, value_len;
} str_pair;

/* What an op's value is. The builder's own string values are kept as text until something
 * reads them as JSON (a later walk through the op, wmap_patch_ops): a jansson string, or a
 * map of them, per label was most of a 128-group review's patch. */
enum { OP_JSON,
       OP_STR,
       OP_MAP };

/* One `add` operation. */
typedef struct patch_op {
	char *path; /* escaped JSON pointer */
	size_t path_len;
	json_t *value; /* OP_JSON: a reference */
	/* OP_STR: the string. OP_MAP: {t1: {t2: ... {pairs}}} with the escaped tokens "/t1/t2"
	 * (no '~' in them) in str, "" for the map itself. */
	char *str;
	size_t str_len;
	str_pair *pairs; /* OP_MAP, in the order they were set */
	size_t n_pairs, cap_pairs;
	char *text; /* OP_MAP: the pairs' keys and values, each NUL-terminated */
	size_t text_len, text_cap;
	unsigned char kind;
	unsigned char live;        /* 0 once the op is dropped */
	unsigned char plain;       /* path, and str and pairs, need no JSON escape */
	unsigned char str_in_path; /* OP_STR: str lies in path's block, after its NUL */
	/* OP_MAP made whole by one wmap_patch_set_strs call: pairs, text lie in path's block */
	unsigned char pairs_in_path, text_in_path;
} patch_op;

#define NO_OP SIZE_MAX

/* A slot of the path index: open addressing, linear probing, never deleted from (a dropped
 * op stays until the next rehash and is skipped). */
typedef struct slot {
	uint64_t hash;
	size_t op; /* index into ops, NO_OP when the slot is free */
} slot;

/* Operations are kept as plain records and written as text directly (wmap_patch_dump): a
 * jansson object per operation was a third of a 64-job review's mutation. */
struct wmap_patch {
	const json_t *doc;
	patch_op *ops; /* in order; dropped ones are skipped */
	size_t n_ops, cap_ops, n_live;
	slot *slots; /* path -> the op that owns the whole value at that path */
	size_t n_slots, n_used;
	/* Bit d (63: 63 or more) when an owning op's path has d tokens: a walk looks up only
	 * the prefixes that may have one (a template's labels are 8 tokens, its ops 9). */
	uint64_t owned_depths;
	/* Keys escaped as pointer tokens lately (every template gets the same few keys): the
	 * raw key, NUL, then the token. */
	struct key_token {
		char *text;
		size_t key_len, token_len;
	} tokens[KEY_TOKENS];
	size_t next_token, token_hint;
	json_t *appends;  /* array pointer -> values appended to it with "/-" so far */
	json_t *ops_json; /* wmap_patch_ops' array, built on demand, dropped on change */
	/* The last successful walk: callers set several keys of one map in a row (a
	 * template's labels), and each walk is one lookup per token of an 8-token pointer. */
	char *last_ptr; /* the remembered walk's pointer when have_last (the buffer is kept) */
	size_t last_len, last_cap;
	int have_last;
	walk last;
	int last_valid; /* 0: only the steps below are (a container past them was created) */
	/* The state after each token of that walk (up to WALK_STEPS): the next walk resumes
	 * after the tokens it shares with it (the templates of one list differ in one index
	 * and the last token or two). Valid under the same rule as last. */
	struct step {
		size_t stop; /* the token ends here in last_ptr */
		json_t *value;
		int in_patch;
		uint64_t hash;
	} steps[16];
	size_t n_steps;
	/* walk_known's: the hash after each token before the node it was given (up to
	 * WALK_STEPS), for the pointer in last_ptr; the next one rehashes only past the tokens
	 * it shares with it. Forgotten with the remembered walk. */
	struct hstep {
		size_t stop;
		uint64_t hash;
	} hsteps[16];
	size_t n_hsteps;
};

#define WALK_STEPS 16

/* ---- builder ----------------------------------------------------------------------- */

int wmap_patch_new(wmap_patch **out, const json_t *doc, wmap_error *err)
{
	*out = NULL;
	wmap_patch *p = wmap_arena_alloc(sizeof(*p)); /* review memory, as its ops */
	if (!p)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	memset(p, 0, sizeof(*p));
	p->doc = doc; /* appends is made on the first append */
	*out = p;
	return 0;
}

/* The text of an op's value (OP_STR, OP_MAP) is given back. */
static void lazy_release(patch_op *o)
{
	if (o->str && !o->str_in_path)
		wmap_arena_release(o->str);
	o->str_in_path = 0;
	if (o->pairs) { /* an OP_MAP: its text too */
		if (!o->text_in_path)
			wmap_arena_release(o->text);
		if (!o->pairs_in_path)
			wmap_arena_release(o->pairs);
	}
	o->pairs_in_path = o->text_in_path = 0;
	o->text = NULL;
	o->text_len = o->text_cap = 0;
	o->str = NULL;
	o->str_len = 0;
	o->pairs = NULL;
	o->n_pairs = o->cap_pairs = 0;
}

/* The op's value goes (it is about to get another, or the op is dropped). */
static void op_clear_value(patch_op *o)
{
	json_decref(o->value);
	o->value = NULL;
	lazy_release(o);
	o->kind = OP_JSON;
}

void wmap_patch_free(wmap_patch *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_ops; i++) {
		patch_op *o = &p->ops[i];
		wmap_arena_release(o->path);
		if (o->value || o->str || o->pairs || o->text) /* a dropped op has none */
			op_clear_value(o);
	}
	wmap_arena_release(p->ops);
	wmap_arena_release(p->slots);
	json_decref(p->appends);
	json_decref(p->ops_json);
	wmap_arena_release(p->last_ptr);
	for (size_t i = 0; i < KEY_TOKENS; i++)
		wmap_arena_release(p->tokens[i].text);
	wmap_arena_release(p);
}

/* The hash of an escaped pointer, folded one token at a time ("/a", "/b~1c", each with its
 * slash) so that a walk extends its prefix's hash by one token at each step instead of
 * hashing every prefix again; a token is read 8 bytes at a time. HASH_START for "". */
#define HASH_START 14695981039346656037u
#define HASH_MUL 0x9E3779B97F4A7C15u

static uint64_t hash_more(uint64_t h, const char *s, size_t n)
{
	uint64_t w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * HASH_MUL;
		h ^= h >> 29;
	}
	/* n < 8 bytes, read in at most two loads (which may overlap) and tagged with n: the
	 * same n and bytes give the same word, different bytes of one n different ones */
	if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		w = a | (uint64_t)b << 32;
	} else if (n) {
		w = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 |
		    (uint64_t)(unsigned char)s[n - 1] << 16;
	} else {
		w = 0;
	}
	w ^= (uint64_t)n << 56;
	h = (h ^ w) * HASH_MUL;
	return h ^ (h >> 29);
}

static uint64_t path_hash(const char *s, size_t n)
{
	uint64_t h = HASH_START;
	size_t pos = 0;
	while (pos < n) {
		const char *end = memchr(s + pos + 1, '/', n - pos - 1);
		size_t stop = end ? (size_t)(end - s) : n;
		h = hash_more(h, s + pos, stop - pos);
		pos = stop;
	}
	return h;
}

/* The live op that owns the whole value at path[0..n), whose hash is h, or NULL. */
static patch_op *owner_hashed(const wmap_patch *p, const char *path, size_t n, uint64_t h)
{
	if (!p->n_slots)
		return NULL;
	for (size_t i = h & (p->n_slots - 1);; i = (i + 1) & (p->n_slots - 1)) {
		const slot *sl = &p->slots[i];
		if (sl->op == NO_OP)
			return NULL;
		patch_op *o = &p->ops[sl->op];
		if (sl->hash == h && o->live && o->path_len == n && memcmp(o->path, path, n) == 0)
			return o;
	}
}

static patch_op *owner(const wmap_patch *p, const char *path, size_t n)
{
	return p->n_slots ? owner_hashed(p, path, n, path_hash(path, n)) : NULL;
}

static void slot_put(slot *slots, size_t n_slots, uint64_t h, size_t op_index)
{
	size_t i = h & (n_slots - 1);
	while (slots[i].op != NO_OP)
		i = (i + 1) & (n_slots - 1);
	slots[i].hash = h;
	slots[i].op = op_index;
}

static uint64_t depth_bit(size_t depth)
{
	return (uint64_t)1 << (depth < 63 ? depth : 63);
}

/* The tokens of a pointer. */
static size_t depth_of(const char *path, size_t n)
{
	size_t d = 0;
	for (const char *s = path; (s = memchr(s, '/', n - (size_t)(s - path))) != NULL; s++)
		d++;
	return d;
}

/* Makes ops[op_index] (depth tokens) the owner of its path, which no live op owns when
 * fresh; -1 on ENOMEM. */
/* The path index gets room for more owners than it holds (at most half full after
 * them); -1 on ENOMEM (p unchanged). */
static int grow_slots(wmap_patch *p, size_t more)
{
	if ((p->n_used + more) * 2 > p->n_slots) {
		size_t n = p->n_slots ? p->n_slots * 2 : 64;
		while ((p->n_used + more) * 2 > n)
			n *= 2;
		slot *ns = wmap_arena_alloc(n * sizeof(*ns));
		if (!ns)
			return -1;
		for (size_t i = 0; i < n; i++)
			ns[i].op = NO_OP;
		size_t used = 0;
		for (size_t i = 0; i < p->n_slots; i++) {
			const slot *sl = &p->slots[i];
			if (sl->op != NO_OP && p->ops[sl->op].live) { /* dropped ops go */
				slot_put(ns, n, sl->hash, sl->op);
				used++;
			}
		}
		wmap_arena_release(p->slots);
		p->slots = ns;
		p->n_slots = n;
		p->n_used = used;
	}
	return 0;
}

static int own_as(wmap_patch *p, size_t op_index, uint64_t h, size_t depth, int fresh)
{
	p->owned_depths |= depth_bit(depth);
	if (grow_slots(p, 1) != 0)
		return -1;
	const patch_op *o = &p->ops[op_index];
	/* A later op at the same path (a whole value set over a null one) takes over. */
	size_t mask = p->n_slots - 1;
	for (size_t i = h & mask; !fresh && p->slots[i].op != NO_OP; i = (i + 1) & mask) {
		slot *sl = &p->slots[i];
		const patch_op *x = &p->ops[sl->op];
		if (sl->hash == h && x->live && x->path_len == o->path_len &&
		    memcmp(x->path, o->path, o->path_len) == 0) {
			sl->op = op_index;
			return 0;
		}
	}
	slot_put(p->slots, p->n_slots, h, op_index);
	p->n_used++;
	return 0;
}

static int own(wmap_patch *p, size_t op_index, uint64_t h, size_t depth)
{
	return own_as(p, op_index, h, depth, 0);
}

/* The operations changed: the JSON array handed out by wmap_patch_ops is out of date. */
static void ops_changed(wmap_patch *p)
{
	json_decref(p->ops_json);
	p->ops_json = NULL;
}

/* The value of o as jansson, made from its text on first use (then kept: o becomes OP_JSON);
 * NULL when memory runs out (o is left as it was). */
static json_t *op_value(patch_op *o)
{
	if (o->kind == OP_JSON)
		return o->value;
	json_t *v;
	if (o->kind == OP_STR) {
		v = json_stringn_nocheck(o->str, o->str_len);
	} else {
		v = json_object();
		for (size_t i = 0; v && i < o->n_pairs; i++) {
			const str_pair *e = &o->pairs[i];
			json_t *sv = json_stringn_nocheck(o->text + e->value, e->value_len);
			if (!sv ||
			    json_object_setn_new_nocheck(v, o->text + e->key, e->key_len, sv) != 0) {
				json_decref(v);
				v = NULL;
			}
		}
		/* Wrapped from the innermost token outwards (they hold no '~': as they are). */
		for (size_t len = o->str_len; v && len > 0;) {
			size_t start = len;
			while (start > 0 && o->str[start - 1] != '/')
				start--;
			json_t *wrap = json_object();
			if (!wrap) {
				json_decref(v);
				v = NULL;
			} else if (json_object_setn_new_nocheck(wrap, o->str + start, len - start, v) != 0) {
				json_decref(wrap); /* v went with the failed set */
				v = NULL;
			} else {
				v = wrap;
			}
			len = start ? start - 1 : 0;
		}
	}
	if (!v)
		return NULL;
	lazy_release(o);
	o->kind = OP_JSON;
	o->value = v;
	return v;
}

static json_t *op_json(patch_op *o)
{
	json_t *j = json_object(), *v = op_value(o);
	if (!j || !v || json_object_set_new_nocheck(j, "op", json_string_nocheck("add")) ||
	    json_object_set_new_nocheck(j, "path", json_stringn_nocheck(o->path, o->path_len)) ||
	    json_object_set_nocheck(j, "value", v)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

const json_t *wmap_patch_ops(wmap_patch *p)
{
	if (p->ops_json)
		return p->ops_json;
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < p->n_ops; i++) {
		if (p->ops[i].live && json_array_append_new(arr, op_json(&p->ops[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	p->ops_json = arr;
	return arr;
}

json_t *wmap_patch_take_ops(wmap_patch *p)
{
	return json_incref((json_t *)wmap_patch_ops(p));
}

size_t wmap_patch_len(const wmap_patch *p)
{
	return p->n_live;
}

/* A string of the builder's, quoted: as it is when known plain (no escape, no UTF-8 to
 * check), else through the JSON writer. */
static void dump_string(wmap_json_writer *w, const char *s, size_t n, int plain)
{
	if (!plain) {
		wmap_json_write_string(w, s, n);
		return;
	}
	wmap_buf *b = &w->buf;
	if (n + 2 < b->alloc - b->len) {
		char *d = b->data + b->len;
		d[0] = '"';
		memcpy(d + 1, s, n);
		d[n + 1] = '"';
		b->len += n + 2;
		return;
	}
	wmap_buf_addc(b, '"');
	wmap_buf_add(b, s, n);
	wmap_buf_addc(b, '"');
}

/* The text of an OP_MAP value: {"t1":{"t2":{"k":"v",...}}} (every part plain). */
static void dump_map(wmap_json_writer *w, const patch_op *o)
{
	wmap_buf *b = &w->buf;
	size_t depth = 0;
	for (size_t pos = 0; pos < o->str_len; depth++) {
		const char *end = memchr(o->str + pos + 1, '/', o->str_len - pos - 1);
		size_t stop = end ? (size_t)(end - o->str) : o->str_len;
		wmap_buf_addc(b, '{');
		dump_string(w, o->str + pos + 1, stop - pos - 1, 1);
		wmap_buf_addc(b, ':');
		pos = stop;
	}
	wmap_buf_addc(b, '{');
	for (size_t i = 0; i < o->n_pairs; i++) {
		if (i)
			wmap_buf_addc(b, ',');
		dump_string(w, o->text + o->pairs[i].key, o->pairs[i].key_len, 1);
		wmap_buf_addc(b, ':');
		dump_string(w, o->text + o->pairs[i].value, o->pairs[i].value_len, 1);
	}
	for (size_t i = 0; i <= depth; i++)
		wmap_buf_addc(b, '}');
}

static char *put_bytes(char *d, const char *s, size_t n)
{
	memcpy(d, s, n);
	return d + n;
}

/* d + the quoted plain string s[0..n). */
static char *put_quoted(char *d, const char *s, size_t n)
{
	*d++ = '"';
	memcpy(d, s, n);
	d[n] = '"';
	return d + n + 1;
}

/* A bound on the text of a kept-as-text op's value (dump_map's, or a quoted string). */
static size_t text_bound(const patch_op *o)
{
	return o->kind == OP_STR ? o->str_len + 2 : 5 * o->str_len + o->text_len + 4 * o->n_pairs + 3;
}

/* Writes an op kept as text whose path is plain at d (text_bound's room and the op's
 * frame); the end. The text of dump_string and dump_map, without a check per piece. */
static char *put_text_op(char *d, const patch_op *o, const char *head, size_t head_len,
			 const char *mid, size_t mid_len)
{
	d = put_bytes(d, head, head_len);
	d = put_quoted(d, o->path, o->path_len);
	d = put_bytes(d, mid, mid_len);
	if (o->kind == OP_STR) {
		d = put_quoted(d, o->str, o->str_len);
	} else {
		size_t depth = 0;
		for (size_t pos = 0; pos < o->str_len; depth++) {
			const char *end = memchr(o->str + pos + 1, '/', o->str_len - pos - 1);
			size_t stop = end ? (size_t)(end - o->str) : o->str_len;
			*d++ = '{';
			d = put_quoted(d, o->str + pos + 1, stop - pos - 1);
			*d++ = ':';
			pos = stop;
		}
		*d++ = '{';
		for (size_t i = 0; i < o->n_pairs; i++) {
			if (i)
				*d++ = ',';
			d = put_quoted(d, o->text + o->pairs[i].key, o->pairs[i].key_len);
			*d++ = ':';
			d = put_quoted(d, o->text + o->pairs[i].value, o->pairs[i].value_len);
		}
		memset(d, '}', depth + 1);
		d += depth + 1;
	}
	*d++ = '}';
	return d;
}

int wmap_patch_dump(char **out, size_t *out_len, const wmap_patch *p, wmap_error *err)
{
	static const char head[] = "{\"op\":\"add\",\"path\":", mid[] = ",\"value\":";
	wmap_json_writer w = WMAP_JSON_WRITER_INIT;
	/* One allocation: the text's size, near enough (a JSON value is guessed at). */
	size_t size = 3;
	for (size_t i = 0; i < p->n_ops; i++) {
		const patch_op *o = &p->ops[i];
		size += sizeof(head) + sizeof(mid) + o->path_len + 8;
		if (o->kind == OP_JSON)
			size += 64;
		else
			size += 2 * o->str_len + 8;
		size += o->text_len + 6 * o->n_pairs; /* the pairs' text and quotes */
	}
	if (size > w.buf.first)
		w.buf.first = size;
	int first = 1;
	wmap_buf_addc(&w.buf, '[');
	for (size_t i = 0; i < p->n_ops; i++) {
		const patch_op *o = &p->ops[i];
		if (!o->live)
			continue;
		wmap_buf *b = &w.buf;
		if (o->kind != OP_JSON && o->plain && b->data &&
		    2 + sizeof(head) + sizeof(mid) + o->path_len + text_bound(o) < b->alloc - b->len) {
			char *d = b->data + b->len;
			if (!first)
				*d++ = ',';
			first = 0;
			d = put_text_op(d, o, head, sizeof(head) - 1, mid, sizeof(mid) - 1);
			b->len = (size_t)(d - b->data);
			continue;
		}
		if (!first)
			wmap_buf_addc(&w.buf, ',');
		first = 0;
		wmap_buf_add(&w.buf, head, sizeof(head) - 1);
		dump_string(&w, o->path, o->path_len, o->plain);
		wmap_buf_add(&w.buf, mid, sizeof(mid) - 1);
		if (o->kind == OP_STR)
			dump_string(&w, o->str, o->str_len, 1);
		else if (o->kind == OP_MAP)
			dump_map(&w, o);
		else
			wmap_json_write_value(&w, o->value);
		wmap_buf_addc(&w.buf, '}');
	}
	wmap_buf_addc(&w.buf, ']');
	*out = wmap_json_writer_finish(&w, out_len);
	return *out ? 0 : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
}

#define ONES 0x0101010101010101u
#define HIGH 0x8080808080808080u

/* 1 when s[0..n) is ASCII with no byte JSON must escape (controls, '"', '\\'): written as
 * it is. Sixteen bytes at a time (SSE2), else eight. */
static int plain_ascii(const char *s, size_t n)
{
#ifdef __SSE2__
	/* Sixteen at a time, the last sixteen overlapping the ones before: a byte below 0x20 as
	 * a signed char is a control or not ASCII. */
	if (n >= 16) {
		const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
		const __m128i space = _mm_set1_epi8(0x20);
		__m128i c, any = _mm_setzero_si128();
		for (size_t i = 0;; i += 16) {
			c = _mm_loadu_si128((const __m128i *)(s + (i + 16 <= n ? i : n - 16)));
			any = _mm_or_si128(any, _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(c, quote),
									  _mm_cmpeq_epi8(c, bslash)),
							     _mm_cmplt_epi8(c, space)));
			if (i + 16 >= n)
				break;
		}
		return _mm_movemask_epi8(any) == 0;
	}
#endif
	uint64_t w, bad = 0;
	if (n >= 8) {
		/* The first eight and the last eight (they may overlap). */
		for (int k = 0; k < 2; k++) {
			memcpy(&w, s + (k ? n - 8 : 0), 8);
			uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
			bad |= w | ((w - ONES * 0x20) & ~w) | ((q - ONES) & ~q) | ((b - ONES) & ~b);
		}
		if (n <= 16)
			return !(bad & HIGH);
	}
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
		bad |= w | ((w - ONES * 0x20) & ~w) | ((q - ONES) & ~q) | ((b - ONES) & ~b);
	}
	for (; n; s++, n--) {
		unsigned char c = (unsigned char)*s;
		bad |= (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) ? HIGH : 0;
	}
	return !(bad & HIGH);
}

/* Walks pointer from offset pos in state w (the document's root at 0); with rec, the state
 * after each token is recorded there (*n_rec of at most WALK_STEPS). */
static walk walk_from(const wmap_patch *p, const char *ptr, size_t pos, walk w,
		      struct step *rec, size_t *n_rec)
{
	size_t len = pos + strlen(ptr + pos);
	/* the recorded steps are the walk's tokens from the root on; without them, w's depth
	 * is that of the tokens before pos */
	if (rec)
		w.depth = *n_rec;
	while (pos < len) {
		const char *end = memchr(ptr + pos + 1, '/', len - pos - 1);
		size_t stop = end ? (size_t)(end - ptr) : len;
		json_t *next = NULL;
		int from_op = 0;
		w.depth++;
		if (!w.in_patch) {
			/* An op that owns the whole value at this prefix shadows the document. */
			w.hash = hash_more(w.hash, ptr + pos, stop - pos);
			patch_op *o = (p->owned_depths & depth_bit(w.depth))
					      ? (patch_op *)owner_hashed(p, ptr, stop, w.hash)
					      : NULL;
			if (o) {
				/* a value kept as text is made JSON here (the patch is the same) */
				if (!(next = op_value(o))) {
					w.rc = WMAP_ENOMEM;
					return w;
				}
				from_op = 1;
			}
		}
		if (!from_op) {
			int bad = 0, oom = 0;
			next = wmap_pointer_child(w.value, ptr + pos + 1, stop - pos - 1, &bad, &oom);
			if (bad || oom) {
				w.rc = bad ? WMAP_EINVAL : WMAP_ENOMEM;
				return w;
			}
		}
		/* null counts as absent: an `add` there replaces it with the container. */
		if (!next || json_is_null(next)) {
			w.miss = pos;
			return w;
		}
		w.in_patch |= from_op;
		w.value = next;
		pos = stop;
		if (rec && *n_rec < WALK_STEPS)
			rec[(*n_rec)++] = (struct step){ stop, w.value, w.in_patch, w.hash };
	}
	w.found = 1;
	return w;
}

static walk walk_pointer(const wmap_patch *p, const char *pointer)
{
	walk w = { 0, 0, 0, (json_t *)p->doc, 0, HASH_START, 0, 0 };
	if (*pointer && *pointer != '/') {
		w.rc = WMAP_EINVAL;
		return w;
	}
	return walk_from(p, pointer, 0, w, NULL, NULL);
}

static void forget_walk(wmap_patch *p)
{
	p->have_last = 0;
	p->n_steps = 0;
	p->n_hsteps = 0;
}

/* walk_pointer, remembered for the next call. Afterwards the remembered walk is this one or
 * none, so a change made at pointer + "/" + key (which leaves the node at pointer and at
 * each of its prefixes the same node) keeps it valid; every other change forgets it. A
 * pointer that shares leading tokens with the remembered one resumes after them. */
static walk walk_cached(wmap_patch *p, const char *pointer)
{
	size_t len = strlen(pointer);
	if (p->have_last && p->last_valid && p->last_len == len &&
	    memcmp(p->last_ptr, pointer, len) == 0)
		return p->last;
	walk w = { 0, 0, 0, (json_t *)p->doc, 0, HASH_START, 0, 0 };
	if (*pointer && *pointer != '/') {
		w.rc = WMAP_EINVAL;
		forget_walk(p);
		return w;
	}
	size_t n_rec = 0, pos = 0, common = 0;
	if (p->have_last) {
		size_t most = len < p->last_len ? len : p->last_len;
		uint64_t a, b;
		for (; common + 8 <= most; common += 8) { /* eight bytes at a time */
			memcpy(&a, p->last_ptr + common, 8);
			memcpy(&b, pointer + common, 8);
			if (a != b)
				break;
		}
		while (common < most && p->last_ptr[common] == pointer[common])
			common++;
		/* The deepest remembered token that ends where pointer's does too. */
		for (size_t i = p->n_steps; i-- > 0;) {
			size_t stop = p->steps[i].stop;
			if (stop <= common && (pointer[stop] == '/' || pointer[stop] == '\0')) {
				n_rec = i + 1; /* steps[0..i] stay where they are */
				pos = stop;
				w.value = p->steps[i].value;
				w.in_patch = p->steps[i].in_patch;
				w.hash = p->steps[i].hash;
				break;
			}
		}
	}
	forget_walk(p);
	/* the walk records its steps after the ones it resumes from */
	w = walk_from(p, pointer, pos, w, p->steps, &n_rec);
	/* a prefix of a plain pointer is plain: only the rest is looked at */
	if (!(p->last.plain && common))
		common = 0;
	w.plain = plain_ascii(pointer + common, len - common);
	if (w.rc == 0 && len + 1 > p->last_cap) {
		char *buf = wmap_arena_alloc(len + 1 > 128 ? len + 1 : 128);
		if (buf) {
			wmap_arena_release(p->last_ptr);
			p->last_ptr = buf;
			p->last_cap = len + 1 > 128 ? len + 1 : 128;
		}
	}
	if (w.rc == 0 && len + 1 <= p->last_cap) { /* no memory: no shortcut */
		memcpy(p->last_ptr, pointer, len + 1);
		p->last_len = len;
		p->last = w;
		p->last_valid = 1;
		p->have_last = 1;
		p->n_steps = n_rec;
	}
	return w;
}

const json_t *wmap_patch_get(const wmap_patch *p, const char *pointer)
{
	walk w = walk_pointer(p, pointer);
	return (w.rc == 0 && w.found) ? w.value : NULL;
}

static int is_ascii(const char *s, size_t n)
{
	uint64_t w, any = 0;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		any |= w;
	}
	for (; n; s++, n--)
		any |= (unsigned char)*s;
	return !(any & 0x8080808080808080u);
}

/* json_object_set_new, without jansson's UTF-8 check of a key that is plain ASCII (every
 * label and annotation key wmap writes; a check per key was a sixth of a 128-group
 * review's patch). Any other key is checked as before. */
static int set_key(json_t *obj, const char *key, json_t *value)
{
	size_t n = key ? strlen(key) : 0;
	if (key && is_ascii(key, n))
		return json_object_setn_new_nocheck(obj, key, n, value);
	return json_object_set_new(obj, key, value);
}

/* Room for more ops than p holds; -1 on ENOMEM (p unchanged). */
static int grow_ops(wmap_patch *p, size_t more)
{
	if (p->cap_ops - p->n_ops >= more)
		return 0;
	size_t cap = p->cap_ops ? p->cap_ops * 2 : 16;
	while (cap - p->n_ops < more)
		cap *= 2;
	patch_op *v = wmap_arena_alloc(cap * sizeof(*v));
	if (!v)
		return -1;
	if (p->n_ops)
		memcpy(v, p->ops, p->n_ops * sizeof(*v));
	wmap_arena_release(p->ops);
	p->ops = v;
	p->cap_ops = cap;
	return 0;
}

void wmap_patch_reserve(wmap_patch *p, size_t n_ops)
{
	/* best effort: without the room, each op grows the arrays as it comes */
	if (n_ops <= ((size_t)1 << 20) && grow_ops(p, n_ops) == 0)
		(void)grow_slots(p, n_ops);
}

/* Appends a live op at path (taken: malloc'ed or wmap_arena_alloc'ed, also on failure) with
 * no value yet into *out; WMAP_EINVAL when path is not UTF-8, WMAP_ENOMEM. */
static int push_op_known(wmap_patch *p, char *path, size_t path_len, int plain,
			 patch_op **out, wmap_error *err)
{
	*out = NULL;
	/* A path that is not plain ASCII may come from a command line: it must be UTF-8, or
	 * the patch would not be JSON. */
	if (!plain && !is_ascii(path, path_len)) {
		json_t *check = json_string(path);
		if (!check) {
			wmap_arena_release(path);
			return wmap_error_set(err, WMAP_EINVAL, "JSON pointer is not valid UTF-8");
		}
		json_decref(check);
	}
	if (p->n_ops == p->cap_ops && grow_ops(p, 1) != 0) {
		wmap_arena_release(path);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	patch_op *o = &p->ops[p->n_ops++];
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->path_len = path_len;
	o->kind = OP_JSON;
	o->live = 1;
	o->plain = (unsigned char)plain;
	p->n_live++;
	ops_changed(p);
	*out = o;
	return 0;
}

static int push_op(wmap_patch *p, char *path, size_t path_len, patch_op **out, wmap_error *err)
{
	return push_op_known(p, path, path_len, plain_ascii(path, path_len), out, err);
}

/* Appends `add` path value; takes path (malloc'ed or wmap_arena_alloc'ed) and value, also on failure. With
 * own_path, the op owns the whole value at path (later walks go through it). */
static int add_op_hashed(wmap_patch *p, char *path, size_t path_len, uint64_t hash,
			 json_t *value, int own_path, wmap_error *err)
{
	patch_op *o;
	int rc = push_op(p, path, path_len, &o, err);
	if (rc) {
		json_decref(value);
		return rc;
	}
	o->value = value;
	if (own_path && own(p, p->n_ops - 1, hash, depth_of(path, path_len)) != 0)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	return 0;
}

static int add_op(wmap_patch *p, char *path, json_t *value, int own_path, wmap_error *err)
{
	size_t n = strlen(path);
	return add_op_hashed(p, path, n, own_path ? path_hash(path, n) : 0, value, own_path, err);
}

static void drop_op(wmap_patch *p, patch_op *o)
{
	op_clear_value(o);
	o->live = 0;
	p->n_live--;
	ops_changed(p);
}

/* Builds {t1: {t2: ... {key: value}}} from the escaped tokens in rest ("/t1/t2" or "").
 * Steals value. */
static json_t *nest(const char *rest, const char *key, json_t *value)
{
	json_t *leaf = json_object();
	if (!leaf) {
		json_decref(value);
		return NULL;
	}
	if (set_key(leaf, key, value) != 0) {
		json_decref(leaf);
		return NULL;
	}
	/* Wrap from the innermost token outwards. */
	size_t len = strlen(rest);
	while (len > 0) {
		size_t start = len;
		while (start > 0 && rest[start - 1] != '/')
			start--;
		char *tok = wmap_pointer_token_dup(rest + start, len - start);
		json_t *wrap = json_object();
		if (!tok || !wrap || set_key(wrap, tok, leaf) != 0) {
			free(tok);
			json_decref(wrap);
			return NULL;
		}
		free(tok);
		leaf = wrap;
		len = start - 1;
	}
	return leaf;
}

int wmap_patch_set(wmap_patch *p, const char *parent, const char *key, json_t *value,
		   wmap_patch_mode mode, int *changed, wmap_error *err)
{
	int rc = 0;
	char *full = NULL;
	if (changed)
		*changed = 0;
	if (!value)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	walk w = walk_cached(p, parent);
	if (w.rc) {
		rc = w.rc == WMAP_ENOMEM ? wmap_error_set(err, w.rc, "out of memory")
					 : wmap_error_set(err, w.rc, "malformed JSON pointer \"%s\"", parent);
		goto done;
	}
	if (w.found) {
		if (!json_is_object(w.value)) {
			rc = wmap_error_set(err, WMAP_EEVAL, "%s is not an object", parent);
			goto done;
		}
		json_t *existing = json_object_get(w.value, key);
		patch_op *o = NULL;
		size_t full_len = 0, parent_len = strlen(parent);
		uint64_t full_hash = 0;
		if (!w.in_patch) {
			if (!(full = wmap_pointer_join_with(wmap_arena_alloc, parent, key))) {
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				goto done;
			}
			/* The walk hashed parent: full is one token more. */
			full_len = parent_len + strlen(full + parent_len);
			full_hash = hash_more(w.hash, full + parent_len, full_len - parent_len);
			if ((p->owned_depths & depth_bit(w.depth + 1)) &&
			    (o = (patch_op *)owner_hashed(p, full, full_len, full_hash)) &&
			    !(existing = op_value(o))) {
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				goto done;
			}
		}
		/* An equal value is already in force, null included: no operation. */
		if (existing && (json_equal(existing, value) ||
				 (!json_is_null(existing) && mode == WMAP_PATCH_DEFAULT)))
			goto done;
		if (changed)
			*changed = 1;
		if (w.in_patch) {
			ops_changed(p); /* an op's value changes in place */
			rc = set_key(w.value, key, value) ? WMAP_ENOMEM : 0;
			value = NULL;
		} else if (o) {
			json_t *orig = json_object_get(w.value, key);
			if (orig && json_equal(orig, value)) {
				/* Back to what the document holds: the op is dropped, not kept as a
				 * no-op, so a second pass stays empty. */
				drop_op(p, o);
			} else {
				op_clear_value(o);
				o->value = value;
				value = NULL;
				ops_changed(p);
			}
		} else {
			/* `add` on an existing member replaces it; on a new one it creates it. */
			rc = add_op_hashed(p, full, full_len, full_hash, value, 1, err);
			full = NULL;
			value = NULL;
		}
		if (rc == WMAP_ENOMEM)
			wmap_error_set(err, rc, "out of memory");
		goto done;
	}
	/* A container on the way is missing: create it whole at the first missing level. */
	if (!json_is_object(w.value)) {
		rc = wmap_error_set(err, WMAP_EEVAL, "%.*s is not an object", (int)w.miss,
				    parent);
		goto done;
	}
	const char *tok_start = parent + w.miss + 1;
	const char *tok_end = strchr(tok_start, '/');
	size_t tok_len = tok_end ? (size_t)(tok_end - tok_start) : strlen(tok_start);
	json_t *nested = nest(tok_start + tok_len, key, value);
	value = NULL;
	if (!nested) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory (or bad pointer %s)", parent);
		goto done;
	}
	if (changed)
		*changed = 1;
	/* A container on the way to parent is created past the last token the walk found:
	 * the walk's result is out of date, the steps before it are not. */
	p->last_valid = 0;
	if (w.in_patch) {
		char *tok = wmap_pointer_token_dup(tok_start, tok_len);
		ops_changed(p); /* an op's value changes in place */
		if (!tok || set_key(w.value, tok, nested) != 0)
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		free(tok);
	} else {
		if (!(full = pdup(parent, (size_t)(tok_start - parent) + tok_len))) {
			json_decref(nested);
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			goto done;
		}
		rc = add_op(p, full, nested, 1, err);
		full = NULL;
	}
done:
	json_decref(value);
	wmap_arena_release(full);
	return rc;
}

/* ---- string members, kept as text --------------------------------------------------- */

/* v is the string s[0..n). */
static int str_equal(const json_t *v, const char *s, size_t n)
{
	return json_is_string(v) && json_string_length(v) == n &&
	       memcmp(json_string_value(v), s, n) == 0;
}

/* key escaped as a pointer token ('~' as "~0", '/' as "~1") into d; its length. */
static size_t escape_key(char *d, const char *key, size_t kn)
{
	size_t j = 0;
	for (size_t i = 0; i < kn; i++) {
		char c = key[i];
		if (c == '~' || c == '/') {
			d[j++] = '~';
			d[j++] = c == '~' ? '0' : '1';
		} else {
			d[j++] = c;
		}
	}
	return j;
}

/* parent + "/" + key escaped as a pointer token, in review memory, with room for extra
 * bytes after its NUL; NULL out of memory. The token comes from the patch's recent keys
 * when it is one of them. */
static char *join_key(wmap_patch *p, const char *parent, size_t pn, const char *key, size_t kn,
		      size_t extra, size_t *len)
{
	const struct key_token *t = NULL;
	/* callers set the same keys in the same order: the one after the last hit first */
	for (size_t i = 0; i < KEY_TOKENS && !t; i++) {
		size_t j = (p->token_hint + i) % KEY_TOKENS;
		const struct key_token *c = &p->tokens[j];
		if (c->text && c->key_len == kn && memcmp(c->text, key, kn) == 0) {
			t = c;
			p->token_hint = (j + 1) % KEY_TOKENS;
		}
	}
	if (!t) { /* remembered when there is memory for it */
		struct key_token *c = &p->tokens[p->next_token];
		char *text = wmap_arena_alloc(3 * kn + 2);
		if (text) {
			memcpy(text, key, kn);
			text[kn] = '\0';
			wmap_arena_release(c->text);
			*c = (struct key_token){ text, kn, escape_key(text + kn + 1, key, kn) };
			p->next_token = (p->next_token + 1) % KEY_TOKENS;
			t = c;
		}
	}
	size_t tn = t ? t->token_len : 2 * kn;
	char *d = wmap_arena_alloc(pn + tn + 2 + extra);
	if (!d)
		return NULL;
	memcpy(d, parent, pn);
	d[pn] = '/';
	if (t)
		memcpy(d + pn + 1, t->text + kn + 1, tn);
	else
		tn = escape_key(d + pn + 1, key, kn);
	d[pn + 1 + tn] = '\0';
	*len = pn + 1 + tn;
	return d;
}

/* o's value becomes the string s[0..n) (copied); -1 out of memory (o unchanged). */
static int op_set_str(patch_op *o, const char *s, size_t n)
{
	char *c = pdup(s, n);
	if (!c)
		return -1;
	if (o->value || o->str || o->pairs || o->text)
		op_clear_value(o);
	o->kind = OP_STR;
	o->str = c;
	o->str_len = n;
	return 0;
}

/* Sets key of o's map (OP_MAP) to value under mode, as wmap_patch_set into the object it
 * stands for would; 1 when it changed, 0 when not, -1 out of memory. */
static int map_set(patch_op *o, const char *key, size_t kn, const char *value, size_t vn,
		   wmap_patch_mode mode)
{
	str_pair *e = NULL;
	for (size_t i = 0; i < o->n_pairs && !e; i++) {
		if (o->pairs[i].key_len == kn && memcmp(o->text + o->pairs[i].key, key, kn) == 0)
			e = &o->pairs[i];
	}
	if (e && (mode == WMAP_PATCH_DEFAULT ||
		  (e->value_len == vn && memcmp(o->text + e->value, value, vn) == 0)))
		return 0;
	if (!e && o->n_pairs == o->cap_pairs) {
		size_t cap = o->cap_pairs ? o->cap_pairs * 2 : 8;
		str_pair *v = wmap_arena_alloc(cap * sizeof(*v));
		if (!v)
			return -1;
		if (o->n_pairs)
			memcpy(v, o->pairs, o->n_pairs * sizeof(*v));
		if (!o->pairs_in_path)
			wmap_arena_release(o->pairs);
		o->pairs_in_path = 0;
		o->pairs = v;
		o->cap_pairs = cap;
	}
	/* the text grows in one block (a value set again is appended, the old one stays) */
	size_t need = kn + vn + 2;
	if (o->text_cap - o->text_len < need) {
		size_t cap = o->text_cap ? o->text_cap * 2 : 256;
		while (cap - o->text_len < need)
			cap *= 2;
		char *t = wmap_arena_alloc(cap);
		if (!t)
			return -1;
		if (o->text_len)
			memcpy(t, o->text, o->text_len);
		if (!o->text_in_path)
			wmap_arena_release(o->text);
		o->text_in_path = 0;
		o->text = t;
		o->text_cap = cap;
	}
	char *d = o->text + o->text_len;
	memcpy(d, key, kn);
	d[kn] = '\0';
	memcpy(d + kn + 1, value, vn);
	d[kn + 1 + vn] = '\0';
	if (!e) /* a new key goes last; a key set again keeps its place, as in jansson */
		e = &o->pairs[o->n_pairs++];
	*e = (str_pair){ o->text_len, o->text_len + kn + 1, kn, vn };
	o->text_len += need;
	return 1;
}

/* One member by the general path (a jansson string): anything not plain ASCII. */
static int set_str_json(wmap_patch *p, const char *parent, wmap_patch_str *e, wmap_error *err)
{
	return wmap_patch_set(p, parent, e->key, json_string(e->value), e->mode, &e->changed, err);
}

/* The walk to pointer when the document's value at its first at bytes (a whole number of
 * tokens) is known to be node (not NULL, not null; short of pointer, an object without the
 * next token's member, or with null there): no op may own that prefix or a shorter one,
 * which the owner lookups at the depths that have an owning op tell; otherwise, or for a
 * pointer with escapes, walk_cached. It is remembered as walk_cached remembers its walk
 * (without the steps before it). */
static walk walk_known(wmap_patch *p, const char *pointer, size_t len, const json_t *node,
		       size_t at)
{
	if (!node || json_is_null(node) || at > len || (pointer[at] && pointer[at] != '/') ||
	    (at < len && !json_is_object(node)) ||
	    (*pointer && *pointer != '/') || memchr(pointer, '~', len))
		return walk_cached(p, pointer);
	if (p->have_last && p->last_valid && p->last_len == len &&
	    memcmp(p->last_ptr, pointer, len) == 0)
		return p->last;
	/* the bytes shared with the remembered pointer */
	size_t common = 0;
	if (p->have_last) {
		size_t most = len < p->last_len ? len : p->last_len;
		uint64_t a, b;
		for (; common + 8 <= most; common += 8) {
			memcpy(&a, p->last_ptr + common, 8);
			memcpy(&b, pointer + common, 8);
			if (a != b)
				break;
		}
		while (common < most && p->last_ptr[common] == pointer[common])
			common++;
	}
	walk w = { 0, 0, 0, (json_t *)node, 0, HASH_START, 0, 0 };
	/* the leading tokens shared with it keep their hashes (the owner lookups are made
	 * again: ops may have come since) */
	size_t n_h = 0, pos = 0;
	for (size_t i = p->n_hsteps; i-- > 0;) {
		size_t stop = p->hsteps[i].stop;
		if (stop <= common && stop <= at && (stop == at || pointer[stop] == '/')) {
			n_h = i + 1;
			break;
		}
	}
	for (size_t i = 0; i < n_h; i++) {
		w.hash = p->hsteps[i].hash;
		w.depth++;
		if ((p->owned_depths & depth_bit(w.depth)) &&
		    owner_hashed(p, pointer, p->hsteps[i].stop, w.hash))
			return walk_cached(p, pointer);
		pos = p->hsteps[i].stop;
	}
	while (pos < at) {
		const char *end = memchr(pointer + pos + 1, '/', at - pos - 1);
		size_t stop = end ? (size_t)(end - pointer) : at;
		w.hash = hash_more(w.hash, pointer + pos, stop - pos);
		w.depth++;
		if ((p->owned_depths & depth_bit(w.depth)) &&
		    owner_hashed(p, pointer, stop, w.hash))
			return walk_cached(p, pointer);
		if (n_h < WALK_STEPS) /* p->hsteps[0..n_h) are this pointer's already */
			p->hsteps[n_h++] = (struct hstep){ stop, w.hash };
		pos = stop;
	}
	if (at < len) {
		/* node lacks the next token (the caller says so): a miss there, unless an op
		 * made it */
		const char *end = memchr(pointer + at + 1, '/', len - at - 1);
		size_t stop = end ? (size_t)(end - pointer) : len;
		uint64_t h = hash_more(w.hash, pointer + at, stop - at);
		if ((p->owned_depths & depth_bit(w.depth + 1)) && owner_hashed(p, pointer, stop, h)) {
			w = walk_from(p, pointer, at, w, NULL, NULL);
		} else {
			w.hash = h;
			w.depth++;
			w.miss = at;
		}
	} else {
		w.found = 1;
	}
	/* a prefix of a plain pointer is plain: only the rest is looked at */
	if (!(p->have_last && p->last.plain))
		common = 0;
	/* The changes this walk's caller makes lie below pointer (or create a container on
	 * the way to it): a walk remembered for another pointer may run through them. */
	forget_walk(p);
	if (w.rc)
		return w;
	w.plain = plain_ascii(pointer + common, len - common);
	if (len + 1 > p->last_cap) {
		size_t cap = len + 1 > 128 ? len + 1 : 128;
		char *buf = wmap_arena_alloc(cap);
		if (buf) {
			wmap_arena_release(p->last_ptr);
			p->last_ptr = buf;
			p->last_cap = cap;
		}
	}
	if (len + 1 <= p->last_cap) { /* no memory: no shortcut */
		memcpy(p->last_ptr, pointer, len + 1);
		p->last_len = len;
		p->last = w;
		p->last_valid = 1;
		p->have_last = 1;
		p->n_hsteps = n_h;
	}
	return w;
}

int wmap_patch_set_strs(wmap_patch *p, const char *parent, wmap_patch_str *m, size_t n,
			wmap_error *err)
{
	return wmap_patch_set_strs_in(p, parent, strlen(parent), NULL, 0, m, n, err);
}

/* A member's key or value length: as the caller gives it (with known_plain), else measured. */
static size_t given_len(int known_plain, size_t len, const char *s)
{
	return known_plain && len ? len : strlen(s);
}

/* The most members a created map is written with at once. */
#define BATCH 8

int wmap_patch_set_strs_in(wmap_patch *p, const char *parent, size_t parent_len, const json_t *node,
			   size_t at, wmap_patch_str *m, size_t n, wmap_error *err)
{
	for (size_t i = 0; i < n; i++)
		m[i].changed = 0;
	if (n == 0)
		return 0;
	walk w = walk_known(p, parent, parent_len, node, at);
	int parent_plain = w.plain;
	patch_op *made = NULL; /* the map this call created for a missing container */
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		wmap_patch_str *e = &m[i];
		size_t kn = given_len(e->known_plain, e->key_len, e->key);
		size_t vn = given_len(e->known_plain, e->value_len, e->value);
		if (!parent_plain ||
		    (!e->known_plain && (!plain_ascii(e->key, kn) || !plain_ascii(e->value, vn)))) {
			if ((rc = set_str_json(p, parent, e, err)) == 0) {
				made = NULL; /* a walk through it made it JSON */
				w = walk_cached(p, parent);
			}
			continue;
		}
		if (made) {
			int r = map_set(made, e->key, kn, e->value, vn, e->mode);
			if (r < 0)
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			e->changed = r > 0;
			if (r > 0)
				ops_changed(p);
			continue;
		}
		if (w.rc) {
			rc = w.rc == WMAP_ENOMEM
				     ? wmap_error_set(err, w.rc, "out of memory")
				     : wmap_error_set(err, w.rc, "malformed JSON pointer \"%s\"", parent);
			continue;
		}
		if (w.found) {
			if (!json_is_object(w.value)) {
				rc = wmap_error_set(err, WMAP_EEVAL, "%s is not an object", parent);
				continue;
			}
			json_t *orig = json_object_getn(w.value, e->key, kn);
			if (w.in_patch) {
				if (orig && (str_equal(orig, e->value, vn) ||
					     (!json_is_null(orig) && e->mode == WMAP_PATCH_DEFAULT)))
					continue;
				e->changed = 1;
				ops_changed(p); /* an op's value changes in place */
				json_t *sv = json_stringn_nocheck(e->value, vn);
				if (!sv || json_object_setn_new_nocheck(w.value, e->key, kn, sv) != 0)
					rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				continue;
			}
			size_t full_len;
			/* room for the value after the path: a new op keeps it there */
			char *full = join_key(p, parent, parent_len, e->key, kn, vn + 1, &full_len);
			if (!full) {
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				continue;
			}
			/* The walk hashed parent: full is one token more. */
			uint64_t h = hash_more(w.hash, full + parent_len, full_len - parent_len);
			patch_op *o = (p->owned_depths & depth_bit(w.depth + 1))
					      ? (patch_op *)owner_hashed(p, full, full_len, h)
					      : NULL;
			int has = o || orig, same = 0, null = 0;
			if (o && o->kind == OP_STR) {
				same = o->str_len == vn && memcmp(o->str, e->value, vn) == 0;
			} else if (o) {
				const json_t *x = op_value(o);
				if (!x) {
					wmap_arena_release(full);
					rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
					continue;
				}
				same = str_equal(x, e->value, vn);
				null = json_is_null(x);
			} else if (orig) {
				same = str_equal(orig, e->value, vn);
				null = json_is_null(orig);
			}
			/* An equal value is already in force, null included: no operation. */
			if (has && (same || (!null && e->mode == WMAP_PATCH_DEFAULT))) {
				wmap_arena_release(full);
				continue;
			}
			e->changed = 1;
			if (o) {
				wmap_arena_release(full);
				if (orig && str_equal(orig, e->value, vn))
					drop_op(p, o); /* back to what the document holds */
				else if (op_set_str(o, e->value, vn) != 0)
					rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				else
					ops_changed(p);
				continue;
			}
			/* `add` on an existing member replaces it; on a new one it creates it. */
			/* parent, key and value are plain here: so is full */
			if ((rc = push_op_known(p, full, full_len, 1, &o, err)) == 0) {
				o->kind = OP_STR;
				o->str = memcpy(full + full_len + 1, e->value, vn);
				o->str[vn] = '\0';
				o->str_len = vn;
				o->str_in_path = 1;
				if (own_as(p, p->n_ops - 1, h, w.depth + 1, 1) != 0) /* o was NULL */
					rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			}
			continue;
		}
		/* A container on the way is missing: create it whole at the first missing level. */
		if (!json_is_object(w.value)) {
			rc = wmap_error_set(err, WMAP_EEVAL, "%.*s is not an object", (int)w.miss,
					    parent);
			continue;
		}
		const char *tok_start = parent + w.miss + 1;
		const char *rest = strchr(tok_start, '/');
		if (!rest)
			rest = parent + parent_len;
		if (w.in_patch || memchr(rest, '~', (size_t)(parent + parent_len - rest))) {
			/* inside an op's value, or tokens to unescape: the general path */
			if ((rc = set_str_json(p, parent, e, err)) == 0)
				w = walk_cached(p, parent);
			continue;
		}
		e->changed = 1;
		/* A container on the way to parent is created past the last token the walk
		 * found: the walk's result is out of date, the steps before it are not. */
		p->last_valid = 0;
		/* When this member and every later one are plain with distinct keys (at most
		 * BATCH), the map is written whole: its path, the tokens below it, its pairs and
		 * their text in one block, with no per-key map_set. */
		size_t kl[BATCH], vl[BATCH], k = n - i, text_len = 0;
		int whole = k <= BATCH, distinct = 1;
		for (size_t j = 0; whole && j < k; j++) {
			const wmap_patch_str *x = &m[i + j];
			kl[j] = j ? given_len(x->known_plain, x->key_len, x->key) : kn;
			vl[j] = j ? given_len(x->known_plain, x->value_len, x->value) : vn;
			whole = x->known_plain ||
				(plain_ascii(x->key, kl[j]) && plain_ascii(x->value, vl[j]));
			distinct &= x->known_distinct;
			text_len += kl[j] + vl[j] + 2;
		}
		for (size_t j = 1; whole && !distinct && j < k; j++) {
			for (size_t q = 0; q < j; q++) {
				if (kl[q] == kl[j] && memcmp(m[i + q].key, m[i + j].key, kl[j]) == 0) {
					whole = 0;
					break;
				}
			}
		}
		/* the op's path, then the tokens below it, in one block */
		size_t full_len = (size_t)(rest - parent), rest_len = parent_len - full_len;
		size_t pairs_at = (parent_len + 2 + _Alignof(str_pair) - 1) &
				  ~(size_t)(_Alignof(str_pair) - 1);
		size_t text_at = pairs_at + k * sizeof(str_pair);
		char *full = wmap_arena_alloc(whole ? text_at + text_len : parent_len + 2);
		patch_op *o = NULL;
		if (full) {
			memcpy(full, parent, full_len);
			full[full_len] = '\0';
			memcpy(full + full_len + 1, rest, rest_len + 1);
		}
		if (!full || (rc = push_op_known(p, full, full_len, 1, &o, err)) != 0) {
			if (!rc)
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			continue;
		}
		o->kind = OP_MAP;
		o->str = full + full_len + 1;
		o->str_len = rest_len;
		o->str_in_path = 1;
		if (whole) {
			o->pairs = (str_pair *)(void *)(full + pairs_at);
			o->text = full + text_at;
			o->n_pairs = o->cap_pairs = k;
			o->text_len = o->text_cap = text_len;
			o->pairs_in_path = o->text_in_path = 1;
			char *d = o->text;
			for (size_t j = 0; j < k; j++) {
				size_t at_key = (size_t)(d - o->text);
				memcpy(d, m[i + j].key, kl[j]);
				d[kl[j]] = '\0';
				memcpy(d + kl[j] + 1, m[i + j].value, vl[j]);
				d[kl[j] + 1 + vl[j]] = '\0';
				o->pairs[j] = (str_pair){ at_key, at_key + kl[j] + 1, kl[j], vl[j] };
				d += kl[j] + vl[j] + 2;
			}
		}
		/* the walk hashed the pointer up to the missing token: full's hash */
		if ((!whole && map_set(o, e->key, kn, e->value, vn, e->mode) < 0) ||
		    own(p, p->n_ops - 1, w.hash, w.depth) != 0) {
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			continue;
		}
		for (size_t j = 1; whole && j < k; j++)
			m[i + j].changed = 1;
		if (whole)
			break;
		made = o;
	}
	return rc;
}

int wmap_patch_set_str(wmap_patch *p, const char *parent, const char *key, const char *value,
		       wmap_patch_mode mode, int *changed, wmap_error *err)
{
	wmap_patch_str e = { key, value, mode, 0, 0, 0, 0, 0 };
	int rc = wmap_patch_set_strs(p, parent, &e, 1, err);
	if (changed)
		*changed = e.changed;
	return rc;
}

/* Splits pointer into a new parent string and an unescaped last token. */
static int split_last(const char *pointer, char **parent, char **last)
{
	const char *slash = strrchr(pointer, '/');
	*parent = *last = NULL;
	if (!slash)
		return WMAP_EINVAL;
	*parent = strndup(pointer, (size_t)(slash - pointer));
	*last = wmap_pointer_token_dup(slash + 1, strlen(slash + 1));
	if (!*parent || !*last) {
		int bad = *parent && !wmap_pointer_token_valid(slash + 1, strlen(slash + 1));
		free(*parent);
		free(*last);
		*parent = *last = NULL;
		return bad ? WMAP_EINVAL : WMAP_ENOMEM;
	}
	return 0;
}

int wmap_patch_set_at(wmap_patch *p, const char *pointer, json_t *value, wmap_patch_mode mode,
		      int *changed, wmap_error *err)
{
	char *parent, *last;
	int rc = split_last(pointer, &parent, &last);
	if (rc == WMAP_ENOMEM) {
		json_decref(value);
		return wmap_error_set(err, rc, "out of memory");
	} else if (rc) {
		json_decref(value);
		return wmap_error_set(err, rc, "malformed JSON pointer \"%s\"", pointer);
	}
	rc = wmap_patch_set(p, parent, last, value, mode, changed, err);
	free(parent);
	free(last);
	return rc;
}

int wmap_patch_set_str_at(wmap_patch *p, const char *pointer, const char *value,
			  wmap_patch_mode mode, int *changed, wmap_error *err)
{
	char *parent, *last;
	int rc = split_last(pointer, &parent, &last);
	if (changed)
		*changed = 0;
	if (rc == WMAP_ENOMEM)
		return wmap_error_set(err, rc, "out of memory");
	else if (rc)
		return wmap_error_set(err, rc, "malformed JSON pointer \"%s\"", pointer);
	rc = wmap_patch_set_str(p, parent, last, value, mode, changed, err);
	free(parent);
	free(last);
	return rc;
}

/* Does entry hold every string member of keys, with the same value? */
static int has_keys(const json_t *entry, const json_t *keys)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)keys, k, v) {
		if (json_is_string(v) && !json_equal(json_object_get(entry, k), v))
			return 0;
	}
	return json_is_object(entry) || !json_is_object(keys);
}

int wmap_patch_create(wmap_patch *p, const char *pointer, json_t *value, char **actual,
		      wmap_error *err)
{
	char *parent = NULL, *last = NULL, *got = NULL;
	int rc = 0;
	if (actual)
		*actual = NULL;
	if (!value)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	walk w = walk_pointer(p, pointer);
	if ((rc = split_last(pointer, &parent, &last))) {
		rc = rc == WMAP_ENOMEM ? wmap_error_set(err, rc, "out of memory")
				       : wmap_error_set(err, rc, "malformed JSON pointer \"%s\"", pointer);
		goto done;
	}
	walk pw = walk_pointer(p, parent);
	if (pw.rc || !pw.found) {
		rc = pw.rc == WMAP_ENOMEM ? wmap_error_set(err, WMAP_ENOMEM, "out of memory")
					  : wmap_error_set(err, WMAP_EEVAL, "%s does not exist", parent);
		goto done;
	}
	/* Already there (made by an earlier write of this patch): for a list entry, only when
	 * it has value's keys (the entry another write made for another key is not this one). */
	if (w.rc == 0 && w.found && !(json_is_array(pw.value) && !has_keys(w.value, value))) {
		got = strdup(pointer);
		rc = got ? 0 : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto done;
	}
	if (json_is_object(pw.value)) {
		rc = wmap_patch_set(p, parent, last, value, WMAP_PATCH_DEFAULT, NULL, err);
		value = NULL;
		got = rc ? NULL : strdup(pointer);
	} else if (json_is_array(pw.value)) {
		/* The end of the list as this patch leaves it: entries added before this one own
		 * the indexes after the document's last entry. */
		size_t at = json_array_size(pw.value);
		char idx[24];
		forget_walk(p);
		if (pw.in_patch) {
			ops_changed(p); /* an op's value changes in place */
			rc = json_array_append_new(pw.value, value) ? WMAP_ENOMEM : 0;
			value = NULL;
		} else {
			for (;; at++) {
				free(got);
				snprintf(idx, sizeof(idx), "%zu", at);
				if (!(got = wmap_pointer_join(parent, idx)) || !owner(p, got, strlen(got)))
					break;
			}
			if (!got) {
				rc = WMAP_ENOMEM;
			} else {
				char *path = strdup(got);
				rc = path ? add_op(p, path, value, 1, err) : WMAP_ENOMEM;
				if (!path)
					json_decref(value);
				value = NULL;
			}
		}
		if (rc == 0 && !got) {
			snprintf(idx, sizeof(idx), "%zu", at);
			got = wmap_pointer_join(parent, idx);
		}
		if (rc == WMAP_ENOMEM)
			wmap_error_set(err, rc, "out of memory");
	} else {
		rc = wmap_error_set(err, WMAP_EEVAL, "%s is neither an object nor a list", parent);
	}
	if (rc == 0 && !got)
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
done:
	json_decref(value);
	free(parent);
	free(last);
	if (rc == 0 && actual)
		*actual = got;
	else
		free(got);
	return rc;
}

static int array_has(const json_t *arr, const json_t *value)
{
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e) {
		if (json_equal(e, value))
			return 1;
	}
	return 0;
}

int wmap_patch_append_unique(wmap_patch *p, const char *pointer, json_t *value, int *changed,
			     wmap_error *err)
{
	if (changed)
		*changed = 0;
	if (!value)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	walk w = walk_pointer(p, pointer);
	if (w.rc) {
		json_decref(value);
		return w.rc == WMAP_ENOMEM
			       ? wmap_error_set(err, w.rc, "out of memory")
			       : wmap_error_set(err, w.rc, "malformed JSON pointer \"%s\"", pointer);
	}
	if (!w.found) {
		json_t *arr = json_array();
		if (!arr)
			json_decref(value);
		if (!arr || json_array_append_new(arr, value) != 0) {
			json_decref(arr);
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
		return wmap_patch_set_at(p, pointer, arr, WMAP_PATCH_DEFAULT, changed, err);
	}
	if (!json_is_array(w.value)) {
		json_decref(value);
		return wmap_error_set(err, WMAP_EEVAL, "%s is not an array", pointer);
	}
	json_t *pending = w.in_patch ? NULL : json_object_get(p->appends, pointer);
	if (array_has(w.value, value) || (pending && array_has(pending, value))) {
		json_decref(value);
		return 0;
	}
	if (changed)
		*changed = 1;
	forget_walk(p); /* the array at pointer grows */
	if (w.in_patch) {
		ops_changed(p); /* an op's value changes in place */
		return json_array_append_new(w.value, value)
			       ? wmap_error_set(err, WMAP_ENOMEM, "out of memory")
			       : 0;
	}
	if (!pending) {
		pending = json_array();
		if (!p->appends && !(p->appends = json_object()))
			json_decref(pending), pending = NULL;
		if (!pending || json_object_set_new(p->appends, pointer, pending) != 0) {
			json_decref(value);
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
	}
	if (json_array_append(pending, value) != 0) {
		json_decref(value);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	char *path = wmap_pointer_join(pointer, "-");
	if (!path) {
		json_decref(value);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	/* "/-" appends after whatever the document holds: no index is guessed. */
	return add_op(p, path, value, 0, err);
}

/* ---- applier ----------------------------------------------------------------------- */

/* Finds the parent container of pointer in doc and the last token (new string). */
static int locate(json_t *doc, const char *pointer, json_t **parent, char **last)
{
	char *pp;
	if (split_last(pointer, &pp, last) != 0)
		return -1;
	*parent = wmap_pointer_lookup(doc, pp);
	free(pp);
	if (!*parent) {
		free(*last);
		*last = NULL;
		return -1;
	}
	return 0;
}

static int do_add(json_t **doc, const char *path, json_t *value)
{
	if (!*path) {
		json_decref(*doc);
		*doc = json_incref(value);
		return 0;
	}
	json_t *parent;
	char *last;
	if (locate(*doc, path, &parent, &last) != 0)
		return -1;
	int rc = -1;
	size_t i;
	if (json_is_object(parent))
		rc = json_object_set(parent, last, value);
	else if (json_is_array(parent)) {
		if (strcmp(last, "-") == 0)
			rc = json_array_append(parent, value);
		else if (wmap_pointer_index(&i, last) == 0 && i <= json_array_size(parent))
			rc = json_array_insert(parent, i, value);
	}
	free(last);
	return rc;
}

static int do_remove(json_t *doc, const char *path)
{
	json_t *parent;
	char *last;
	if (!*path || locate(doc, path, &parent, &last) != 0)
		return -1;
	int rc = -1;
	size_t i;
	if (json_is_object(parent))
		rc = json_object_del(parent, last);
	else if (json_is_array(parent) && wmap_pointer_index(&i, last) == 0)
		rc = json_array_remove(parent, i);
	free(last);
	return rc;
}

int wmap_patch_apply(json_t **doc, const json_t *ops, wmap_error *err)
{
	if (!json_is_array(ops))
		return wmap_error_set(err, WMAP_EINVAL, "a JSON Patch must be an array");
	size_t i;
	json_t *op;
	json_array_foreach(ops, i, op) {
		const char *name = json_string_value(json_object_get(op, "op"));
		const char *path = json_string_value(json_object_get(op, "path"));
		const char *from = json_string_value(json_object_get(op, "from"));
		json_t *value = json_object_get(op, "value");
		int rc = -1;
		if (!name || !path || (*path && *path != '/'))
			return wmap_error_set(err, WMAP_EINVAL, "patch[%zu]: needs op and path", i);
		if (strcmp(name, "add") == 0 && value) {
			rc = do_add(doc, path, value);
		} else if (strcmp(name, "remove") == 0) {
			rc = do_remove(*doc, path);
		} else if (strcmp(name, "replace") == 0 && value) {
			if (wmap_pointer_lookup(*doc, path))
				rc = *path ? (do_remove(*doc, path) == 0 ? do_add(doc, path, value)
									 : -1)
					   : do_add(doc, path, value);
		} else if (strcmp(name, "test") == 0 && value) {
			json_t *cur = wmap_pointer_lookup(*doc, path);
			rc = (cur && json_equal(cur, value)) ? 0 : -1;
		} else if ((strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) && from) {
			json_t *src = wmap_pointer_lookup(*doc, from);
			if (src) {
				json_t *v = json_deep_copy(src);
				if (name[0] == 'm' && do_remove(*doc, from) != 0) {
					json_decref(v);
					v = NULL;
				}
				rc = v ? do_add(doc, path, v) : -1;
				json_decref(v);
			}
		}
		if (rc != 0)
			return wmap_error_set(err, WMAP_EINVAL, "patch[%zu]: %s %s failed", i,
					      name, path);
	}
	return 0;
}

/* ---- label values and keys ---------------------------------------------------------- */

/* ASCII letters and digits (2), and '-', '_', '.' (1): a table, not the locale's isalnum. */
static const unsigned char label_class[256] = {
	['-'] = 1,
	['_'] = 1,
	['.'] = 1,
	['0'] = 2,
	['1'] = 2,
	['2'] = 2,
	['3'] = 2,
	['4'] = 2,
	['5'] = 2,
	['6'] = 2,
	['7'] = 2,
	['8'] = 2,
	['9'] = 2,
	['A'] = 2,
	['B'] = 2,
	['C'] = 2,
	['D'] = 2,
	['E'] = 2,
	['F'] = 2,
	['G'] = 2,
	['H'] = 2,
	['I'] = 2,
	['J'] = 2,
	['K'] = 2,
	['L'] = 2,
	['M'] = 2,
	['N'] = 2,
	['O'] = 2,
	['P'] = 2,
	['Q'] = 2,
	['R'] = 2,
	['S'] = 2,
	['T'] = 2,
	['U'] = 2,
	['V'] = 2,
	['W'] = 2,
	['X'] = 2,
	['Y'] = 2,
	['Z'] = 2,
	['a'] = 2,
	['b'] = 2,
	['c'] = 2,
	['d'] = 2,
	['e'] = 2,
	['f'] = 2,
	['g'] = 2,
	['h'] = 2,
	['i'] = 2,
	['j'] = 2,
	['k'] = 2,
	['l'] = 2,
	['m'] = 2,
	['n'] = 2,
	['o'] = 2,
	['p'] = 2,
	['q'] = 2,
	['r'] = 2,
	['s'] = 2,
	['t'] = 2,
	['u'] = 2,
	['v'] = 2,
	['w'] = 2,
	['x'] = 2,
	['y'] = 2,
	['z'] = 2,
};

static int is_label_char(int c)
{
	return label_class[(unsigned char)c] != 0;
}

static int is_alnum(int c)
{
	return label_class[(unsigned char)c] == 2;
}

int wmap_label_value_valid(const char *v)
{
	size_t n = strlen(v);
	if (n == 0)
		return 1;
	if (n > 63 || !is_alnum(v[0]) || !is_alnum(v[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!label_class[(unsigned char)v[i]])
			return 0;
	}
	return 1;
}

size_t wmap_label_value(char *buf, size_t len, const char *value)
{
	if (len == 0)
		return 0;
	/* valid as it is (as wmap_label_value_valid): measured and checked in one pass */
	size_t vn = 0;
	while (vn < 64 && label_class[(unsigned char)value[vn]])
		vn++;
	if (!value[vn] && (vn == 0 || (vn <= 63 && is_alnum(value[0]) && is_alnum(value[vn - 1])))) {
		size_t n = vn; /* at most 63 */
		if (n < len) {
			memcpy(buf, value, n + 1);
			return n;
		}
		snprintf(buf, len, "%s", value);
		return len - 1;
	}
	uint32_t h = 2166136261u;
	for (const unsigned char *s = (const unsigned char *)value; *s; s++)
		h = (h ^ *s) * 16777619u;
	char clean[64];
	size_t n = 0;
	for (const unsigned char *s = (const unsigned char *)value; *s && n < 54; s++) {
		int c = is_label_char(*s) ? *s : '-';
		if (n == 0 && !is_alnum(c))
			continue;
		clean[n++] = (char)c;
	}
	while (n > 0 && !is_alnum(clean[n - 1]))
		n--;
	clean[n] = '\0';
	if (n)
		snprintf(buf, len, "%s-%08x", clean, (unsigned)h);
	else
		snprintf(buf, len, "%08x", (unsigned)h);
	return strlen(buf);
}

static int dns_subdomain_valid(const char *s, size_t n)
{
	if (n == 0 || n > 253)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (!(islower(c) || isdigit(c) || c == '-' || c == '.'))
			return 0;
		int edge = (i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.');
		if (edge && !(islower(c) || isdigit(c)))
			return 0;
	}
	return 1;
}

int wmap_label_key_valid(const char *key)
{
	const char *slash = strchr(key, '/');
	const char *name = key;
	if (slash) {
		if (strchr(slash + 1, '/') || !dns_subdomain_valid(key, (size_t)(slash - key)))
			return 0;
		name = slash + 1;
	}
	return *name && wmap_label_value_valid(name);
}
