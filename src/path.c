/* wmap: plain jq path expressions evaluated natively, and JSON Pointers.
 *
 * Most expressions in definitions are plain paths (.spec.template,
 * .spec.replicatedJobs[].template.spec.template). Evaluating them on jansson costs
 * nanoseconds instead of a libjq round trip, and every result keeps its exact location,
 * which is what the webhook and `patch` write to. Semantics follow jq: indexing null gives
 * null, a missing key gives null, iterating null is an error unless the step ends in '?'.
 *
 * One filter is part of the plain form: an iteration followed by `| select(.K == "V")`,
 * which picks the entries of a keyed list (Kubernetes' list-map: containers by name,
 * Trainer's runtimePatches by manager). Such a path can also name an entry that is not
 * there yet, with what to add to create it (wmap__path_locate). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "wmap/arena.h"

typedef enum { STEP_KEY,
	       STEP_INDEX,
	       STEP_ITER } step_kind;

typedef struct step {
	step_kind kind;
	char *key;
	long index;
	int optional;
	char *sel_key, *sel_value; /* STEP_ITER: only entries whose sel_key is sel_value */
	size_t key_len;            /* STEP_KEY: strlen(key) */
	int key_plain;             /* STEP_KEY: nothing in key to escape in a pointer */
} step;

struct wmap_path {
	size_t n;
	step *steps;
	json_t *constant; /* a literal ("1", "\"x\"", true): the one result, no location */
	int keyed;        /* every iteration has a selector, and there is one */
	/* Flat: plain keys without a selector, at most one [] or []? (no selector), no index;
	 * iter is that step's place (n when there is none), suffix the pointer text of the
	 * keys after it. Read without recursion (run_flat). */
	int flat;
	size_t iter, suffix;
};

void wmap__path_free(wmap_path *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->steps[i].key);
		free(p->steps[i].sel_key);
		free(p->steps[i].sel_value);
	}
	free(p->steps);
	json_decref(p->constant);
	free(p);
}

static int add_step(wmap_path *p, step s)
{
	step *ns = realloc(p->steps, (p->n + 1) * sizeof(*ns));
	if (!ns) {
		free(s.key);
		free(s.sel_key);
		free(s.sel_value);
		return -1;
	}
	p->steps = ns;
	p->steps[p->n++] = s;
	return 0;
}

/* A jq string literal without escapes other than \" and \\ (enough for keys). NULL when it
 * is not one, or (with *oom set) when memory runs out. */
static char *parse_string(const char **pp, int *oom)
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
	char *d = strdup(buf);
	if (!d)
		*oom = 1;
	return d;
}

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* After an iteration: ` | select(.K == "V")`, then ` | ` before the rest of the path, or
 * the end. 0 when there is no filter (nothing consumed), 1 when one was read, -1 when the
 * text goes on in a way the plain form does not cover, or (with *oom set) when memory runs
 * out. */
static int parse_select(const char **pp, char **key, char **value, int *oom)
{
	const char *s = skip_space(*pp);
	if (*s != '|')
		return 0;
	s = skip_space(s + 1);
	if (strncmp(s, "select(.", 8) != 0)
		return -1;
	s += 8;
	const char *b = s;
	while (isalnum((unsigned char)*s) || *s == '_')
		s++;
	if (s == b || !isalpha((unsigned char)*b))
		return -1;
	if (!(*key = strndup(b, (size_t)(s - b)))) {
		*oom = 1;
		return -1;
	}
	s = skip_space(s);
	if (strncmp(s, "==", 2) != 0)
		goto fail;
	s = skip_space(s + 2);
	if (!(*value = parse_string(&s, oom)))
		goto fail;
	s = skip_space(s);
	if (*s != ')')
		goto fail;
	s = skip_space(s + 1);
	if (*s == '|') {
		s = skip_space(s + 1);
		if (*s != '.' || s[1] == '\0' || isspace((unsigned char)s[1]))
			goto fail; /* `| .` alone, or something that is not a path */
	} else if (*s) {
		goto fail;
	}
	*pp = s;
	return 1;
fail:
	free(*key);
	free(*value);
	*key = *value = NULL;
	return -1;
}

wmap_path *wmap__path_parse(const char *text)
{
	int oom = 0;
	return wmap__path_parse_oom(text, &oom);
}

/* A path that is a literal (replicasPath: "1" needs no jq either): a JSON scalar into
 * p->constant. 0, or -1 when s is not one (*oom set when memory ran out). */
static int parse_constant(wmap_path *p, const char *s, int *oom)
{
	json_error_t je;
	p->constant = json_loads(s, JSON_DECODE_ANY, &je);
	/* jansson names every syntax error: no message means memory ran out. */
	if (!p->constant && (json_error_code(&je) == json_error_out_of_memory || !je.text[0]))
		*oom = 1;
	if (p->constant && (json_is_object(p->constant) || json_is_array(p->constant))) {
		json_decref(p->constant);
		p->constant = NULL;
	}
	return p->constant ? 0 : -1;
}

/* A bracket step after its '[': [], ["key"] or [N]. 0, or -1 with nothing left in st. */
static int parse_bracket(const char **pp, step *st, int *oom)
{
	const char *s = *pp;
	if (*s == ']') {
		st->kind = STEP_ITER;
		s++;
	} else if (*s == '"') {
		st->kind = STEP_KEY;
		if (!(st->key = parse_string(&s, oom)) || *s != ']') {
			free(st->key);
			st->key = NULL;
			return -1;
		}
		s++;
	} else {
		char *end;
		if (!(isdigit((unsigned char)*s) || (*s == '-' && isdigit((unsigned char)s[1]))))
			return -1;
		st->index = strtol(s, &end, 10);
		if (*end != ']' || st->index > 1000000 || st->index < -1000000)
			return -1;
		st->kind = STEP_INDEX;
		s = end + 1;
	}
	*pp = s;
	return 0;
}

/* One step at *pp into st, *pp moved past it: .key, ."key" or a bracket step, then its `?`
 * and, for [], its select. 0, or -1 (malformed, or *oom) with nothing left in st. */
static int parse_step(const char **pp, step *st, int *oom)
{
	const char *s = *pp;
	if (*s == '.' && s[1] == '.')
		return -1;
	if (*s == '.' && (isalpha((unsigned char)s[1]) || s[1] == '_')) {
		const char *b = ++s;
		while (isalnum((unsigned char)*s) || *s == '_')
			s++;
		st->kind = STEP_KEY;
		if (!(st->key = strndup(b, (size_t)(s - b)))) {
			*oom = 1;
			return -1;
		}
	} else if (*s == '.' && s[1] == '"') {
		s++;
		st->kind = STEP_KEY;
		if (!(st->key = parse_string(&s, oom)))
			return -1;
	} else if (*s == '[' || (*s == '.' && s[1] == '[')) {
		s += *s == '.' ? 2 : 1;
		if (parse_bracket(&s, st, oom))
			return -1;
	} else {
		return -1;
	}
	if (*s == '?') {
		st->optional = 1;
		s++;
	}
	if (st->kind == STEP_ITER && parse_select(&s, &st->sel_key, &st->sel_value, oom) < 0)
		return -1;
	*pp = s;
	return 0;
}

/* keyed: every [] of the path selects its entry by a key. */
static void set_keyed(wmap_path *p)
{
	p->keyed = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (p->steps[i].kind == STEP_ITER && !p->steps[i].sel_key) {
			p->keyed = 0;
			break;
		}
		p->keyed |= p->steps[i].kind == STEP_ITER;
	}
}

static void set_flat(wmap_path *p)
{
	p->flat = 1;
	p->iter = p->n;
	p->suffix = 0;
	for (size_t i = 0; i < p->n && p->flat; i++) {
		const step *st = &p->steps[i];
		if (st->kind == STEP_ITER && !st->sel_key && p->iter == p->n)
			p->iter = i;
		else if (st->kind != STEP_KEY || !st->key_plain)
			p->flat = 0;
		else if (p->iter != p->n)
			p->suffix += 1 + st->key_len;
	}
}

wmap_path *wmap__path_parse_oom(const char *text, int *oom)
{
	wmap_path *p = calloc(1, sizeof(*p));
	const char *s = text;

	*oom = 0;
	if (!p) {
		*oom = 1;
		return NULL;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s != '.') {
		if (parse_constant(p, s, oom))
			goto fail;
		return p;
	}
	if (s[1] == '\0' || isspace((unsigned char)s[1]))
		s++; /* `.` alone: no steps */
	while (*s && !isspace((unsigned char)*s)) {
		step st = { 0 };
		if (parse_step(&s, &st, oom))
			goto fail;
		if (add_step(p, st)) {
			*oom = 1;
			goto fail;
		}
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		goto fail;
	set_keyed(p);
	for (size_t i = 0; i < p->n; i++)
		if (p->steps[i].kind == STEP_KEY) {
			p->steps[i].key_len = strlen(p->steps[i].key);
			p->steps[i].key_plain = strcspn(p->steps[i].key, "~/") == p->steps[i].key_len;
		}
	set_flat(p);
	return p;
fail:
	wmap__path_free(p);
	return NULL;
}

size_t wmap__path_n_steps(const wmap_path *p)
{
	return p && !p->constant ? p->n : 0;
}

wmap_path_step_kind wmap__path_step(const wmap_path *p, size_t i, const char **key)
{
	const step *st = &p->steps[i];
	*key = st->kind == STEP_KEY ? st->key : NULL;
	return st->kind == STEP_KEY ? WMAP_PATH_KEY : st->kind == STEP_INDEX ? WMAP_PATH_INDEX
									     : WMAP_PATH_ITER;
}

const char *wmap__json_type_name(const json_t *v)
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

/* One evaluation. In locate mode, when the branch being followed reached a node that does
 * not exist, missing_at is the step the creation starts with, anchor the length of the
 * node's pointer (a prefix of ptr) and elem whether that node is a new entry of an existing
 * list.
 *
 * The pointer of the node being visited is one buffer, a token appended on the way down and
 * cut off on the way back: a result copies it once, where joining a new string at every
 * step cost a malloc and a free per step and per list entry. */
typedef struct ev {
	const wmap_path *p;
	wmap_results *out;
	wmap_error *err;
	int locate;
	size_t missing_at; /* SIZE_MAX: everything so far exists */
	size_t anchor;
	int elem;
	char *ptr; /* the pointer, NUL-terminated: len bytes of cap */
	size_t len, cap;
	int heap;   /* ptr was malloc'ed (it outgrew the first buffer) */
	int values; /* values only (wmap__path_values): no pointer is kept */
} ev;

/* Room for n more bytes and the NUL; -1 when memory runs out. */
static int ptr_room(ev *e, size_t n)
{
	if (e->len + n + 1 <= e->cap)
		return 0;
	size_t cap = e->cap * 2;
	while (cap < e->len + n + 1)
		cap *= 2;
	char *np = e->heap ? realloc(e->ptr, cap) : malloc(cap);
	if (!np)
		return -1;
	if (!e->heap)
		memcpy(np, e->ptr, e->len + 1);
	e->ptr = np;
	e->cap = cap;
	e->heap = 1;
	return 0;
}

/* Appends "/" and key escaped (as wmap_pointer_join); -1 when memory runs out. */
static int ptr_key(ev *e, const char *key)
{
	if (e->values)
		return 0;
	size_t tl = strlen(key), plain = strcspn(key, "~/"), extra = 0;
	for (const char *s = key + plain; *s; s++)
		extra += (*s == '~' || *s == '/');
	if (ptr_room(e, 1 + tl + extra))
		return -1;
	char *o = e->ptr + e->len;
	*o++ = '/';
	memcpy(o, key, plain);
	o += plain;
	for (const char *s = key + plain; *s; s++) {
		if (*s == '~' || *s == '/') {
			*o++ = '~';
			*o++ = *s == '~' ? '0' : '1';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	e->len = (size_t)(o - e->ptr);
	return 0;
}

/* Appends "/" and index (as wmap_pointer_join_index); -1 when memory runs out. */
static int ptr_index(ev *e, size_t index)
{
	if (e->values)
		return 0;
	char digits[24];
	size_t nd = 0;
	do {
		digits[nd++] = (char)('0' + index % 10);
		index /= 10;
	} while (index);
	if (ptr_room(e, 1 + nd))
		return -1;
	char *o = e->ptr + e->len;
	*o++ = '/';
	while (nd)
		*o++ = digits[--nd];
	*o = '\0';
	e->len = (size_t)(o - e->ptr);
	return 0;
}

/* Back to the pointer of len bytes. */
static void ptr_cut(ev *e, size_t len)
{
	e->len = len;
	e->ptr[len] = '\0';
}

/* A result's pointer: review memory (wmap/arena.h), as the locations made from it. */
static char *ptr_dup(const ev *e, size_t len)
{
	char *d = wmap_arena_alloc(len + 1);
	if (d) {
		memcpy(d, e->ptr, len);
		d[len] = '\0';
	}
	return d;
}

/* Does the selector of st pick x? -1 (error set) when x cannot be indexed, as in jq. */
static int picks(ev *e, const step *st, const json_t *x)
{
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_object(x)) {
		wmap_error_set(e->err, WMAP_EEVAL, "Cannot index %s with \"%s\"", wmap__json_type_name(x),
			       st->sel_key);
		return -1;
	}
	const json_t *v = json_object_get(x, st->sel_key);
	return json_is_string(v) && strcmp(json_string_value(v), st->sel_value) == 0;
}

/* The value of the node that steps [i, n) apply to, when none of it exists, as far as the
 * last selector: objects for keys, one-entry lists for selected entries ({K: V} and what
 * follows). NULL when no selector is left (plain objects are made by whoever writes), or
 * when out of memory (*oom). */
static json_t *seed(const wmap_path *p, size_t i, int *oom)
{
	size_t last = SIZE_MAX;
	for (size_t k = i; k < p->n; k++)
		if (p->steps[k].sel_key)
			last = k;
	if (last == SIZE_MAX)
		return NULL;
	const step *st = &p->steps[i];
	json_t *below = seed(p, i + 1, oom), *v = NULL;
	if (*oom)
		return NULL;
	if (st->kind == STEP_KEY) {
		v = json_object();
		if (!v || json_object_set_new(v, st->key, below ? below : json_object()) != 0)
			goto fail;
		return v;
	}
	/* A selected entry, its key first: the list that holds it. */
	json_t *entry = json_object();
	v = json_array();
	if (!entry || !v || json_object_set_new(entry, st->sel_key, json_string(st->sel_value)) != 0 ||
	    (below && json_object_update(entry, below) != 0) || json_array_append_new(v, entry) != 0) {
		json_decref(entry);
		json_decref(below);
		goto fail;
	}
	json_decref(below);
	return v;
fail:
	*oom = 1;
	json_decref(v);
	return NULL;
}

static int push_result(ev *e, json_t *v)
{
	if (e->values) {
		if (e->out->n >= WMAP_MAX_RESULTS)
			return wmap_error_set(e->err, WMAP_ELIMIT, "more than %d results", WMAP_MAX_RESULTS);
		if (wmap__results_push(e->out, v ? json_incref(v) : NULL, NULL))
			return wmap_error_set(e->err, WMAP_ENOMEM, "out of memory");
		return 0;
	}
	char *dup = ptr_dup(e, e->len), *at = NULL;
	json_t *create = NULL;
	int oom = !dup;
	if (e->out->n >= WMAP_MAX_RESULTS) {
		wmap_arena_release(dup);
		return wmap_error_set(e->err, WMAP_ELIMIT, "more than %d results", WMAP_MAX_RESULTS);
	}
	if (!oom && e->missing_at != SIZE_MAX) {
		json_t *made = seed(e->p, e->missing_at, &oom);
		if (made && e->elem) {
			/* A new entry of a list that exists: the entry alone. */
			create = json_incref(json_array_get(made, 0));
			json_decref(made);
		} else {
			create = made;
		}
		if (create && !(at = ptr_dup(e, e->anchor)))
			oom = 1;
	}
	if (oom || wmap__results_push(e->out, v ? json_incref(v) : NULL, dup)) {
		if (oom)
			wmap_arena_release(dup);
		wmap_arena_release(at);
		json_decref(create);
		return wmap_error_set(e->err, WMAP_ENOMEM, "out of memory");
	}
	e->out->v[e->out->n - 1].create_at = at;
	e->out->v[e->out->n - 1].create = create;
	return 0;
}

static int eval_from(ev *e, size_t i, json_t *v);

/* Goes on from step next_step at the pointer with nothing there; when this is the first
 * missing node of the branch, creation starts at seed_step with the node at the pointer. */
static int on_missing(ev *e, size_t next_step, size_t seed_step, int elem)
{
	if (e->missing_at != SIZE_MAX)
		return eval_from(e, next_step, NULL);
	e->missing_at = seed_step;
	e->anchor = e->len;
	e->elem = elem;
	int rc = eval_from(e, next_step, NULL);
	e->missing_at = SIZE_MAX;
	e->anchor = 0;
	e->elem = 0;
	return rc;
}

/* One member of an iterated array (key NULL, at index idx) or object (at key): passed over
 * unless the step's selector picks it, else the path goes on from it. */
static int iterate_member(ev *e, size_t i, json_t *x, const char *key, size_t idx, int *found)
{
	const step *st = &e->p->steps[i];
	int pick = st->sel_key ? picks(e, st, x) : 1;
	if (pick < 0)
		return WMAP_EEVAL;
	if (!pick)
		return 0;
	*found = 1;
	size_t len = e->len;
	if (key ? ptr_key(e, key) : ptr_index(e, idx))
		return wmap_error_set(e->err, WMAP_ENOMEM, "out of memory");
	int rc = eval_from(e, i + 1, x);
	ptr_cut(e, len);
	return rc;
}

static int iterate(ev *e, size_t i, json_t *v)
{
	const step *st = &e->p->steps[i];
	int rc = 0, found = 0;
	if (json_is_array(v)) {
		size_t k;
		json_t *x;
		json_array_foreach(v, k, x)
			if ((rc = iterate_member(e, i, x, NULL, k, &found)))
				return rc;
	} else if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x)
			if ((rc = iterate_member(e, i, x, k, 0, &found)))
				return rc;
	} else if (!st->optional && !(e->locate && e->missing_at != SIZE_MAX)) {
		return wmap_error_set(e->err, WMAP_EEVAL, "Cannot iterate over %s",
				      (!v || json_is_null(v)) ? "null" : wmap__json_type_name(v));
	}
	/* Locating, no entry with the key: where a new one would go, after the list's last
	 * entry or first in a list still to be made. An object (a map, not a list) or any
	 * other value has no such place. */
	int absent = !v || json_is_null(v);
	if (found || !e->locate || !(json_is_array(v) || (absent && e->missing_at != SIZE_MAX)))
		return 0;
	size_t len = e->len;
	if (ptr_index(e, absent ? 0 : json_array_size(v)))
		return wmap_error_set(e->err, WMAP_ENOMEM, "out of memory");
	rc = on_missing(e, i + 1, i, 1);
	ptr_cut(e, len);
	return rc;
}

static int eval_from(ev *e, size_t i, json_t *v)
{
	if (i == e->p->n)
		return push_result(e, v);
	const step *st = &e->p->steps[i];
	int isnull = !v || json_is_null(v);
	int rc = 0;
	size_t len = e->len;

	switch (st->kind) {
	case STEP_KEY: {
		if (!isnull && !json_is_object(v)) {
			if (st->optional)
				return 0;
			return wmap_error_set(e->err, WMAP_EEVAL, "Cannot index %s with \"%s\"",
					      wmap__json_type_name(v), st->key);
		}
		if (e->values) {
		} else if (st->key_plain) { /* the key as it is, its length known */
			if (ptr_room(e, 1 + st->key_len))
				return wmap_error_set(e->err, WMAP_ENOMEM, "out of memory");
			e->ptr[e->len] = '/';
			memcpy(e->ptr + e->len + 1, st->key, st->key_len + 1);
			e->len += 1 + st->key_len;
		} else if (ptr_key(e, st->key)) {
			return wmap_error_set(e->err, WMAP_ENOMEM, "out of memory");
		}
		json_t *x = isnull ? NULL : json_object_getn(v, st->key, st->key_len);
		if (e->locate && !isnull && (!x || json_is_null(x)))
			rc = on_missing(e, i + 1, i + 1, 0); /* a member of an existing object */
		else
			rc = eval_from(e, i + 1, x);
		break;
	}
	case STEP_INDEX: {
		if (!isnull && !json_is_array(v)) {
			if (st->optional)
				return 0;
			return wmap_error_set(e->err, WMAP_EEVAL, "Cannot index %s with number",
					      wmap__json_type_name(v));
		}
		long idx = st->index;
		size_t size = isnull ? 0 : json_array_size(v);
		if (idx < 0)
			idx += (long)size;
		json_t *x = (!isnull && idx >= 0 && (size_t)idx < size) ? json_array_get(v, (size_t)idx) : NULL;
		if (ptr_index(e, idx < 0 ? 0 : (size_t)idx))
			return wmap_error_set(e->err, WMAP_ENOMEM, "out of memory");
		rc = eval_from(e, i + 1, x);
		break;
	}
	case STEP_ITER:
		return iterate(e, i, v);
	}
	ptr_cut(e, len);
	return rc;
}

/* Key steps from..to on v, a key of null reading null: 0, or -1 when v or a value on the
 * way is neither an object nor null (the general walk tells what that means). */
static int flat_keys(const wmap_path *p, size_t from, size_t to, json_t **v)
{
	json_t *x = *v;
	for (size_t i = from; i < to; i++) {
		if (!x || json_is_null(x)) {
			x = NULL;
			continue;
		}
		if (!json_is_object(x))
			return -1;
		x = json_object_getn(x, p->steps[i].key, p->steps[i].key_len);
	}
	*v = x;
	return 0;
}

/* A flat path (wmap_path.flat) without locating: the results eval_from would push, in its
 * order, with the same pointers. 1 when done (*rc its answer), 0 when the general walk must
 * run (nothing pushed): an error or a skip on the way, too many results. */
static int run_flat(const wmap_path *p, json_t *root, wmap_results *out, int values,
		    wmap_error *err, int *rc)
{
	char pre[256];
	size_t pl = 0;
	json_t *v = root;
	for (size_t i = 0; i < p->iter && !values; i++) {
		if (pl + 1 + p->steps[i].key_len >= sizeof(pre))
			return 0;
		pre[pl] = '/';
		memcpy(pre + pl + 1, p->steps[i].key, p->steps[i].key_len);
		pl += 1 + p->steps[i].key_len;
	}
	if (flat_keys(p, 0, p->iter, &v))
		return 0;
	int one = p->iter == p->n;
	if (!one && !json_is_array(v))
		return 0;
	size_t n = one ? 1 : json_array_size(v), n0 = out->n;
	if (n > WMAP_MAX_RESULTS - n0)
		return 0;
	if (wmap__results_reserve(out, n)) {
		*rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		return 1;
	}
	for (size_t k = 0; k < n; k++) {
		json_t *x = one ? v : json_array_get(v, k);
		if (!one && flat_keys(p, p->iter + 1, p->n, &x)) {
			while (out->n > n0) { /* undone: the general walk tells */
				out->n--;
				json_decref(out->v[out->n].value);
				wmap_arena_release(out->v[out->n].pointer);
			}
			return 0;
		}
		char *d = NULL;
		if (!values) {
			char digits[24];
			size_t nd = 0, idx = k;
			if (!one)
				do
					digits[nd++] = (char)('0' + idx % 10);
				while ((idx /= 10));
			if (!(d = wmap_arena_alloc(pl + (one ? 0 : 1 + nd) + p->suffix + 1))) {
				*rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				return 1;
			}
			char *o = d;
			memcpy(o, pre, pl);
			o += pl;
			if (!one) {
				*o++ = '/';
				while (nd)
					*o++ = digits[--nd];
				for (size_t i = p->iter + 1; i < p->n; i++) {
					*o++ = '/';
					memcpy(o, p->steps[i].key, p->steps[i].key_len);
					o += p->steps[i].key_len;
				}
			}
			*o = '\0';
		}
		wmap_result *r = &out->v[out->n++];
		r->value = x ? json_incref(x) : NULL;
		r->pointer = d;
		r->create_at = NULL;
		r->create = NULL;
		r->is_num = 0;
	}
	*rc = 0;
	return 1;
}

static int run(const wmap_path *p, json_t *root, wmap_results *out, int locate, int values,
	       wmap_error *err)
{
	if (p->constant) {
		if (wmap__results_push(out, json_incref(p->constant), NULL))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		return 0;
	}
	int rc;
	if (p->flat && !locate && run_flat(p, root, out, values, err, &rc))
		return rc;
	char first[256];
	first[0] = '\0';
	ev e = { p, out, err, locate, SIZE_MAX, 0, 0, first, 0, sizeof(first), 0, values };
	rc = eval_from(&e, 0, root);
	if (e.heap)
		free(e.ptr);
	return rc;
}

int wmap__path_eval(const wmap_path *p, json_t *root, wmap_results *out, wmap_error *err)
{
	return run(p, root, out, 0, 0, err);
}

int wmap__path_values(const wmap_path *p, json_t *root, wmap_results *out, wmap_error *err)
{
	return run(p, root, out, 0, 1, err);
}

int wmap__path_locate(const wmap_path *p, json_t *root, wmap_results *out, wmap_error *err)
{
	return run(p, root, out, p->keyed, 0, err);
}

/* ---- results ---- */

void wmap__results_clear(wmap_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].is_num) /* a plain number (WMAP_EVAL_NUMBERS): nothing owned */
			continue;
		json_decref(r->v[i].value);
		if (r->v[i].pointer) /* most are taken (resolve.c) or never made (values only) */
			wmap_arena_release(r->v[i].pointer);
		if (r->v[i].create_at)
			wmap_arena_release(r->v[i].create_at);
		json_decref(r->v[i].create);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

int wmap__results_reserve(wmap_results *r, size_t more)
{
	size_t want = r->n + (more < WMAP_MAX_RESULTS ? more : WMAP_MAX_RESULTS);
	if (want > WMAP_MAX_RESULTS)
		want = WMAP_MAX_RESULTS;
	if (want <= r->cap)
		return 0;
	wmap_result *nv = realloc(r->v, want * sizeof(*nv));
	if (!nv)
		return -1;
	r->v = nv;
	r->cap = want;
	return 0;
}

int wmap__results_push(wmap_results *r, json_t *value, char *pointer)
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
	r->v[r->n].create_at = NULL;
	r->v[r->n].create = NULL;
	r->v[r->n].is_num = 0;
	r->n++;
	return 0;
fail:
	json_decref(value);
	wmap_arena_release(pointer);
	return -1;
}
