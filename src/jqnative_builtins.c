/* wmap: the jq builtins the native evaluator knows (see jqnative.h).
 *
 * Each follows jq 1.6's definition, including its quirks (index on strings counts bytes,
 * join turns numbers into JSON, add of nothing is null). The table at the end binds each
 * name/arity to its function once, when an expression is parsed (as jq's function_list does):
 * a call runs through the node's pointer and compares no names. A name or arity missing from
 * the table makes the parser refuse the expression, so libjq evaluates it instead. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jqnative_int.h"

/* Emits a new value and drops it. */
static int give(ectx *c, emit_fn k, void *ud, json_t *v)
{
	if (!v)
		return wmap__jn_oom(c);
	int rc = k(c, ud, v, NULL);
	json_decref(v);
	return rc;
}

/* ---- generator consumers ---- */

typedef struct first_ud {
	json_t *v;
	char *ptr;
	int stop;  /* stop at the first output (first, isempty, any, all) */
	int want;  /* any: stop at a truthy one; all: at a falsy one; -1: any output */
	long left; /* limit */
	emit_fn k;
	void *ud;
} first_ud;

static int first_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	first_ud *f = ud;
	json_decref(f->v);
	free(f->ptr);
	f->v = json_incref(v);
	f->ptr = ptr ? strdup(ptr) : NULL;
	if (ptr && !f->ptr)
		return wmap__jn_oom(c);
	if (f->want == -1 || wmap__jn_truthy(v) == f->want) {
		f->stop = 1;
		return JN_STOP;
	}
	return 0;
}

static int limit_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	first_ud *f = ud;
	int rc = f->k(c, f->ud, v, ptr);
	if (rc)
		return rc;
	return --f->left <= 0 ? (f->stop = 1, JN_STOP) : 0;
}

/* Runs x on in, stopping early as f says; a JN_STOP we caused is not passed on. */
static int run_until(ectx *c, const node *x, json_t *in, const char *ptr, const env *e,
		     emit_fn k, first_ud *f)
{
	int rc = wmap__jn_ev(c, x, in, ptr, e, k, f);
	if (rc == JN_STOP && f->stop)
		rc = 0;
	return rc;
}

/* any(gen; cond) and all(gen; cond): short-circuit on the first deciding output. */
typedef struct anyall_ud {
	const node *cond;
	const env *e;
	first_ud f;
} anyall_ud;

static int anyall_gen(ectx *c, void *ud, json_t *v, const char *ptr)
{
	anyall_ud *a = ud;
	(void)ptr;
	if (!a->cond) /* any and all without a condition test the elements themselves */
		return first_emit(c, &a->f, v, NULL);
	return wmap__jn_ev(c, a->cond, v, NULL, a->e, first_emit, &a->f);
}

static int anyall(ectx *c, const node *gen, const node *cond, json_t *in, const env *e, int is_any,
		  emit_fn k, void *ud)
{
	anyall_ud a = { cond, e, { NULL, NULL, 0, is_any ? 1 : 0, 0, NULL, NULL } };
	int rc;
	if (gen)
		rc = wmap__jn_ev(c, gen, in, NULL, e, anyall_gen, &a);
	else
		rc = wmap__jn_iterate(c, in, NULL, 0, anyall_gen, &a);
	if (rc == JN_STOP && a.f.stop)
		rc = 0;
	json_decref(a.f.v);
	free(a.f.ptr);
	if (rc)
		return rc;
	return k(c, ud, json_boolean(is_any ? a.f.stop : !a.f.stop), NULL);
}

static int select_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	cont *s = ud;
	(void)ptr;
	return wmap__jn_truthy(v) ? s->k(c, s->ud, s->in, s->ptr) : 0;
}

typedef struct map_ud {
	const node *f;
	const env *e;
	json_t *arr;
} map_ud;

static int map_add(ectx *c, void *ud, json_t *v, const char *ptr)
{
	(void)ptr;
	return json_array_append(((map_ud *)ud)->arr, v) ? wmap__jn_oom(c) : 0;
}

static int map_elem(ectx *c, void *ud, json_t *v, const char *ptr)
{
	map_ud *m = ud;
	(void)ptr;
	return wmap__jn_ev(c, m->f, v, NULL, m->e, map_add, m);
}

static int map(ectx *c, const node *f, json_t *in, const env *e, json_t **out)
{
	map_ud m = { f, e, json_array() };
	if (!m.arr)
		return wmap__jn_oom(c);
	int rc = wmap__jn_iterate(c, in, NULL, 0, map_elem, &m);
	if (rc) {
		json_decref(m.arr);
		return rc;
	}
	*out = m.arr;
	return 0;
}

/* ---- value helpers ---- */

static json_t *to_entries(const json_t *in)
{
	json_t *out = json_array();
	if (!out)
		return NULL;
	if (json_is_object(in)) {
		const char *key;
		json_t *v;
		json_object_foreach((json_t *)in, key, v)
			json_array_append_new(out, json_pack("{s:s, s:O}", "key", key, "value", v));
	} else {
		size_t i;
		json_t *v;
		json_array_foreach(in, i, v)
			json_array_append_new(out, json_pack("{s:I, s:O}", "key", (json_int_t)i, "value", v));
	}
	return out;
}

static int from_entries(ectx *c, json_t *in, json_t **out)
{
	static const char *const key_names[] = { "key", "k", "name", "Name", "K", "Key" };
	size_t i;
	json_t *entry;
	if (!json_is_array(in))
		return wmap__jn_err(c, "Cannot iterate over %s", wmap__jn_type_name(in));
	*out = json_object();
	if (!*out)
		return wmap__jn_oom(c);
	json_array_foreach(in, i, entry) {
		json_t *key = NULL, *val;
		if (!json_is_object(entry) && !json_is_null(entry)) {
			json_decref(*out);
			return wmap__jn_err(c, "Cannot index %s with \"key\"", wmap__jn_type_name(entry));
		}
		for (size_t k = 0; k < 6 && !wmap__jn_truthy(key); k++)
			key = json_object_get(entry, key_names[k]);
		val = json_object_get(entry, "value") ? json_object_get(entry, "value") : json_object_get(entry, "v");
		char *kbuf = key && json_is_string(key) ? strdup(json_string_value(key)) : wmap__jn_dump(key ? key : json_null());
		if (!kbuf || json_object_set(*out, kbuf, val ? val : json_null())) {
			free(kbuf);
			json_decref(*out);
			return wmap__jn_oom(c);
		}
		free(kbuf);
	}
	return 0;
}

static json_t *utf8_length(const json_t *s)
{
	const unsigned char *p = (const unsigned char *)json_string_value(s);
	size_t n = json_string_length(s), cps = 0;
	for (size_t i = 0; i < n; i++)
		cps += (p[i] & 0xC0) != 0x80;
	return json_integer((json_int_t)cps);
}

static int cmp_values(const void *a, const void *b)
{
	return wmap__jn_compare(*(json_t *const *)a, *(json_t *const *)b);
}

static int sorted(ectx *c, json_t *in, int unique, json_t **out)
{
	size_t n = json_array_size(in);
	json_t **items;
	if (!json_is_array(in))
		return wmap__jn_err(c, "%s cannot be sorted, as it is not an array", wmap__jn_type_name(in));
	items = malloc((n + 1) * sizeof(*items));
	*out = json_array();
	if (!items || !*out) {
		free(items);
		json_decref(*out);
		return wmap__jn_oom(c);
	}
	for (size_t i = 0; i < n; i++)
		items[i] = json_array_get(in, i);
	qsort(items, n, sizeof(*items), cmp_values);
	for (size_t i = 0; i < n; i++)
		if (!unique || i == 0 || wmap__jn_compare(items[i - 1], items[i]) != 0)
			json_array_append(*out, items[i]);
	free(items);
	return 0;
}

static int contains(ectx *c, const json_t *a, const json_t *b)
{
	if (json_is_object(a) && json_is_object(b)) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)b, k, v) {
			json_t *av = json_object_get(a, k);
			int r = av ? contains(c, av, v) : 0;
			if (r <= 0)
				return r;
		}
		return 1;
	}
	if (json_is_array(a) && json_is_array(b)) {
		size_t i, j;
		json_t *bv, *av;
		json_array_foreach(b, i, bv) {
			int found = 0;
			json_array_foreach(a, j, av) {
				int r = contains(c, av, bv);
				if (r < 0)
					return r;
				if (r) {
					found = 1;
					break;
				}
			}
			if (!found)
				return 0;
		}
		return 1;
	}
	if (json_is_string(a) && json_is_string(b))
		return strstr(json_string_value(a), json_string_value(b)) != NULL;
	if (wmap__jn_compare(a, b) == 0 || (json_typeof(a) == json_typeof(b)) ||
	    (json_is_number(a) && json_is_number(b)) || (json_is_boolean(a) && json_is_boolean(b)))
		return wmap__jn_compare(a, b) == 0;
	char da[64], db[64];
	wmap__jn_describe(da, sizeof(da), a);
	wmap__jn_describe(db, sizeof(db), b);
	return wmap__jn_err(c, "%s and %s cannot have their containment checked", da, db), -1;
}

/* jq 1.6's indices: sub-array positions, element positions, or byte offsets in strings. */
static int indices(ectx *c, json_t *in, json_t *i, json_t **out)
{
	char *p;
	if (json_is_string(in) && json_is_string(i)) {
		const char *s = json_string_value(in), *needle = json_string_value(i);
		size_t ls = json_string_length(in), ln = json_string_length(i);
		*out = json_array();
		for (size_t k = 0; *out && ln > 0 && k + ln <= ls; k++)
			if (memcmp(s + k, needle, ln) == 0)
				json_array_append_new(*out, json_integer((json_int_t)k));
		return *out ? 0 : wmap__jn_oom(c);
	}
	if (json_is_array(in) && !json_is_array(i)) {
		json_t *wrap = json_pack("[O]", i);
		if (!wrap)
			return wmap__jn_oom(c);
		int rc = wmap__jn_index_value(c, in, NULL, wrap, out, &p);
		json_decref(wrap);
		free(p);
		return rc;
	}
	int rc = wmap__jn_index_value(c, in, NULL, i, out, &p);
	free(p);
	return rc;
}

static int string_test(ectx *c, const char *fn, json_t *in, json_t *arg)
{
	if (!json_is_string(in) || !json_is_string(arg))
		return wmap__jn_err(c, "%s() requires string inputs", fn);
	return 0;
}

/* One builtin: its name and arity, and either the function that runs it (it sees the argument
 * expressions) or, for jq's $-parameter builtins, the function called once per output of the
 * one argument. variant tells the members of a family apart (keys and keys_unsorted, ...). */
struct jn_builtin {
	const char *name;
	size_t arity;
	int (*call)(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud);
	int (*value)(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud);
	int variant;
};

static int variant(const node *x)
{
	return x->fn->variant;
}

/* ---- builtins of one value argument ($-parameters): fn(in, arg) per argument output ---- */

typedef int (*value_fn)(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg,
			emit_fn k, void *ud);

typedef struct value_ud {
	const node *x;
	json_t *in;
	const char *ptr;
	value_fn fn;
	emit_fn k;
	void *ud;
} value_ud;

static int value_emit(ectx *c, void *ud, json_t *arg, const char *ptr)
{
	value_ud *v = ud;
	(void)ptr;
	return v->fn(c, v->x, v->in, v->ptr, arg, v->k, v->ud);
}

static int with_arg(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, value_fn fn,
		    emit_fn k, void *ud)
{
	value_ud v = { x, in, ptr, fn, k, ud };
	return wmap__jn_ev(c, x->args[0], in, NULL, e, value_emit, &v);
}

/* has(key) on container, and in(container) on key: the same test, and the same message. */
static int has_key(ectx *c, json_t *container, json_t *key, emit_fn k, void *ud)
{
	if (json_is_object(container) && json_is_string(key))
		return k(c, ud, json_boolean(json_object_get(container, json_string_value(key)) != NULL), NULL);
	if (json_is_array(container) && json_is_number(key))
		return k(c, ud, json_boolean(wmap__jn_num(key) >= 0 && wmap__jn_num(key) < (double)json_array_size(container)), NULL);
	return wmap__jn_err(c, "Cannot check whether %s has a %s key", wmap__jn_type_name(container), wmap__jn_type_name(key));
}

static int v_has(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	return has_key(c, in, arg, k, ud);
}

static int v_in(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	return has_key(c, arg, in, k, ud);
}

enum { CONTAINS,
       INSIDE };

static int v_contains(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	int r = variant(x) == CONTAINS ? contains(c, in, arg) : contains(c, arg, in);
	return r < 0 ? WMAP_EEVAL : k(c, ud, json_boolean(r), NULL);
}

enum { INDEX_FIRST,
       INDEX_LAST,
       INDEX_ALL };

static int v_indices(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	json_t *out = NULL;
	int rc;
	if ((rc = indices(c, in, arg, &out)))
		return rc;
	if (variant(x) != INDEX_ALL && json_is_array(out)) {
		size_t sz = json_array_size(out);
		json_t *pick = sz ? json_incref(json_array_get(out, variant(x) == INDEX_FIRST ? 0 : sz - 1)) : json_null();
		json_decref(out);
		out = pick;
	}
	return give(c, k, ud, out);
}

enum { AT_START,
       AT_END };

static int v_startswith(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	int rc;
	if ((rc = string_test(c, x->name, in, arg)))
		return rc;
	size_t ls = json_string_length(in), la = json_string_length(arg);
	const char *s = json_string_value(in);
	int r = la <= ls && memcmp(variant(x) == AT_START ? s : s + ls - la, json_string_value(arg), la) == 0;
	return k(c, ud, json_boolean(r), NULL);
}

static int v_trimstr(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	if (json_is_string(in) && json_is_string(arg)) {
		size_t ls = json_string_length(in), la = json_string_length(arg);
		const char *s = json_string_value(in);
		if (variant(x) == AT_START && la <= ls && memcmp(s, json_string_value(arg), la) == 0)
			return give(c, k, ud, json_stringn(s + la, ls - la));
		if (variant(x) == AT_END && la <= ls && memcmp(s + ls - la, json_string_value(arg), la) == 0)
			return give(c, k, ud, json_stringn(s, ls - la));
	}
	return k(c, ud, in, ptr);
}

static int v_split(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	if (string_test(c, "split input and separator", in, arg))
		return wmap__jn_err(c, "split input and separator must be strings");
	return give(c, k, ud, wmap__jn_split(in, arg));
}

/* join's piece for one element: null is "", booleans and numbers their JSON text. */
static json_t *join_piece(json_t *v)
{
	if (json_is_null(v))
		return json_string("");
	if (json_is_boolean(v) || json_is_number(v)) {
		char *d = wmap__jn_dump(v);
		json_t *piece = d ? json_string(d) : NULL;
		free(d);
		return piece;
	}
	return json_incref(v);
}

static int v_join(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	json_t *acc = NULL;
	size_t i;
	json_t *v;
	int rc;
	if (!json_is_array(in) && !json_is_object(in))
		return wmap__jn_err(c, "Cannot iterate over %s", wmap__jn_type_name(in));
	if (json_is_object(in))
		return wmap__jn_err(c, "join input must be an array");
	json_array_foreach(in, i, v) {
		json_t *piece = join_piece(v), *next;
		json_t *prefix = acc ? NULL : json_string("");
		if (acc && (rc = wmap__jn_arith(c, T_PLUS, acc, arg, &prefix))) {
			json_decref(piece);
			json_decref(acc);
			return rc;
		}
		rc = wmap__jn_arith(c, T_PLUS, prefix, piece, &next);
		json_decref(prefix);
		json_decref(piece);
		json_decref(acc);
		if (rc)
			return rc;
		acc = next;
	}
	return give(c, k, ud, acc ? acc : json_string(""));
}

static int v_getpath(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	json_t *cur = json_incref(in);
	char *p = ptr ? strdup(ptr) : NULL;
	size_t i;
	json_t *key;
	int rc;
	if (!json_is_array(arg)) {
		json_decref(cur);
		free(p);
		return wmap__jn_err(c, "Path must be specified as an array");
	}
	json_array_foreach(arg, i, key) {
		json_t *next;
		char *np;
		if (json_is_null(cur)) {
			/* null below null, with a location as long as keys are plain */
			next = json_null();
			np = NULL;
			if (p && json_is_string(key))
				np = wmap_pointer_join(p, json_string_value(key));
			else if (p && json_is_integer(key) && json_integer_value(key) >= 0)
				np = wmap_pointer_join_index(p, (size_t)json_integer_value(key));
		} else if ((rc = wmap__jn_index_value(c, cur, p, key, &next, &np))) {
			json_decref(cur);
			free(p);
			return rc;
		}
		json_decref(cur);
		free(p);
		cur = next;
		p = np;
	}
	rc = k(c, ud, cur, p);
	json_decref(cur);
	free(p);
	return rc;
}

/* error(message) and error/0 (the message is the input): a string as it is, else its JSON. */
static int raise_error(ectx *c, const json_t *msg)
{
	char *d = json_is_string(msg) ? NULL : wmap__jn_dump(msg);
	int rc = wmap__jn_err(c, "%s", d ? d : json_string_value(msg));
	free(d);
	return rc;
}

static int v_error(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	return raise_error(c, arg);
}

/* ---- builtins of no argument ---- */

enum { F_VALUES,
       F_NULLS,
       F_BOOLEANS,
       F_NUMBERS,
       F_STRINGS,
       F_ARRAYS,
       F_OBJECTS,
       F_ITERABLES,
       F_SCALARS };

static int bi_type_filter(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	int keep = 0;
	switch (variant(x)) {
	case F_VALUES: keep = !json_is_null(in); break;
	case F_NULLS: keep = json_is_null(in); break;
	case F_BOOLEANS: keep = json_is_boolean(in); break;
	case F_NUMBERS: keep = json_is_number(in); break;
	case F_STRINGS: keep = json_is_string(in); break;
	case F_ARRAYS: keep = json_is_array(in); break;
	case F_OBJECTS: keep = json_is_object(in); break;
	case F_ITERABLES: keep = json_is_array(in) || json_is_object(in); break;
	case F_SCALARS: keep = !json_is_array(in) && !json_is_object(in); break;
	}
	return keep ? k(c, ud, in, ptr) : 0;
}

static int bi_empty(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	return 0;
}

static int bi_not(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	return k(c, ud, json_boolean(!wmap__jn_truthy(in)), NULL);
}

static int bi_length(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	switch (json_typeof(in)) {
	case JSON_NULL: return give(c, k, ud, json_integer(0));
	case JSON_TRUE:
	case JSON_FALSE: return wmap__jn_err(c, "boolean (%s) has no length", json_is_true(in) ? "true" : "false");
	case JSON_INTEGER:
	case JSON_REAL: return give(c, k, ud, wmap__jn_mknum(fabs(wmap__jn_num(in))));
	case JSON_STRING: return give(c, k, ud, utf8_length(in));
	case JSON_ARRAY: return give(c, k, ud, json_integer((json_int_t)json_array_size(in)));
	default: return give(c, k, ud, json_integer((json_int_t)json_object_size(in)));
	}
}

static int bi_utf8bytelength(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	if (!json_is_string(in))
		return wmap__jn_err(c, "%s only strings have UTF-8 byte length", wmap__jn_type_name(in));
	return give(c, k, ud, json_integer((json_int_t)json_string_length(in)));
}

enum { KEYS_SORTED,
       KEYS_UNSORTED };

static int bi_keys(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	json_t *out;
	int rc;
	if (json_is_array(in)) {
		out = json_array();
		for (size_t i = 0; out && i < json_array_size(in); i++)
			json_array_append_new(out, json_integer((json_int_t)i));
		return give(c, k, ud, out);
	}
	if (!json_is_object(in))
		return wmap__jn_err(c, "%s has no keys", wmap__jn_type_name(in));
	out = json_array();
	const char *key;
	json_t *v;
	json_object_foreach(in, key, v)
		json_array_append_new(out, json_string(key));
	if (variant(x) == KEYS_SORTED && out) {
		json_t *s;
		if ((rc = sorted(c, out, 0, &s))) {
			json_decref(out);
			return rc;
		}
		json_decref(out);
		out = s;
	}
	return give(c, k, ud, out);
}

static int bi_to_entries(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	if (!json_is_object(in) && !json_is_array(in))
		return wmap__jn_err(c, "%s has no keys", wmap__jn_type_name(in));
	return give(c, k, ud, to_entries(in));
}

static int bi_from_entries(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	json_t *out;
	int rc;
	if ((rc = from_entries(c, in, &out)))
		return rc;
	return give(c, k, ud, out);
}

/* *acc = *acc + v, the reference to the old *acc dropped. */
static int add_to(ectx *c, json_t **acc, json_t *v)
{
	json_t *next;
	int rc = wmap__jn_arith(c, T_PLUS, *acc, v, &next);
	if (rc)
		return rc;
	json_decref(*acc);
	*acc = next;
	return 0;
}

static int bi_add(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	json_t *acc = json_null(), *v;
	size_t i;
	const char *key;
	int rc = 0;
	if (json_is_object(in)) {
		json_object_foreach(in, key, v)
			if ((rc = add_to(c, &acc, v)))
				break;
	} else if (json_is_array(in)) {
		json_array_foreach(in, i, v)
			if ((rc = add_to(c, &acc, v)))
				break;
	} else {
		return wmap__jn_err(c, "Cannot iterate over %s", wmap__jn_type_name(in));
	}
	if (rc) {
		json_decref(acc);
		return rc;
	}
	return give(c, k, ud, acc);
}

enum { MIN,
       MAX };

static int bi_minmax(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	size_t i;
	json_t *v, *best = NULL;
	if (!json_is_array(in))
		return wmap__jn_err(c, "Cannot compute %s of %s", x->name, wmap__jn_type_name(in));
	json_array_foreach(in, i, v) {
		int r = best ? wmap__jn_compare(v, best) : 0;
		if (!best || (variant(x) == MIN ? r < 0 : r >= 0))
			best = v;
	}
	return k(c, ud, best ? best : json_null(), NULL);
}

enum { M_FLOOR,
       M_CEIL,
       M_ROUND,
       M_SQRT,
       M_FABS };

static int bi_math(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	if (!json_is_number(in))
		return wmap__jn_err(c, "%s number required", wmap__jn_type_name(in));
	double d = wmap__jn_num(in);
	switch (variant(x)) {
	case M_FLOOR: d = floor(d); break;
	case M_CEIL: d = ceil(d); break;
	case M_ROUND: d = round(d); break;
	case M_SQRT: d = sqrt(d); break;
	default: d = fabs(d); break;
	}
	return give(c, k, ud, wmap__jn_mknum(d));
}

/* in as a JSON string (tojson; tostring, which leaves strings as they are). */
static int bi_tojson(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	char *d = wmap__jn_dump(in);
	json_t *out = d ? json_string(d) : NULL;
	free(d);
	return give(c, k, ud, out);
}

static int bi_tostring(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	if (json_is_string(in))
		return k(c, ud, in, NULL);
	return bi_tojson(c, x, in, ptr, e, k, ud);
}

enum { TONUMBER,
       FROMJSON };

static int bi_fromjson(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	int number = variant(x) == TONUMBER;
	if (number && json_is_number(in))
		return k(c, ud, in, NULL);
	if (!json_is_string(in))
		return wmap__jn_err(c, "%s cannot be parsed as a number", wmap__jn_type_name(in));
	json_error_t je;
	json_t *out = json_loads(json_string_value(in), JSON_DECODE_ANY, &je);
	if (!out || (number && !json_is_number(out))) {
		json_decref(out);
		return wmap__jn_err(c, "Cannot parse '%s' as JSON", json_string_value(in));
	}
	if (json_is_real(out)) {
		json_t *norm = wmap__jn_mknum(json_real_value(out));
		json_decref(out);
		out = norm;
	}
	return give(c, k, ud, out);
}

static int bi_type(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	return give(c, k, ud, json_string(wmap__jn_type_name(in)));
}

enum { DOWNCASE,
       UPCASE };

static int bi_ascii_case(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	if (!json_is_string(in))
		return wmap__jn_err(c, "%s input must be a string", x->name);
	size_t len = json_string_length(in);
	char *s = malloc(len + 1);
	if (!s)
		return wmap__jn_oom(c);
	memcpy(s, json_string_value(in), len + 1);
	for (size_t i = 0; i < len; i++)
		if (variant(x) == DOWNCASE && s[i] >= 'A' && s[i] <= 'Z')
			s[i] = (char)(s[i] + 32);
		else if (variant(x) == UPCASE && s[i] >= 'a' && s[i] <= 'z')
			s[i] = (char)(s[i] - 32);
	json_t *out = json_stringn(s, len);
	free(s);
	return give(c, k, ud, out);
}

/* first and last of no argument: .[0] and .[-1], locations kept. variant: the index. */
static int bi_first_last(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	json_t *idx = json_integer(variant(x)), *v;
	char *p;
	if (!idx)
		return wmap__jn_oom(c);
	int rc = wmap__jn_index_value(c, in, ptr, idx, &v, &p);
	json_decref(idx);
	if (rc)
		return rc;
	rc = k(c, ud, v, p);
	json_decref(v);
	free(p);
	return rc;
}

static int bi_reverse(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	if (json_is_null(in))
		return give(c, k, ud, json_array());
	if (!json_is_array(in))
		return wmap__jn_err(c, "Cannot reverse %s", wmap__jn_type_name(in));
	json_t *out = json_array();
	for (size_t i = json_array_size(in); out && i-- > 0;)
		json_array_append(out, json_array_get(in, i));
	return give(c, k, ud, out);
}

enum { SORT_ALL,
       SORT_UNIQUE };

static int bi_sort(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	json_t *out;
	int rc;
	if ((rc = sorted(c, in, variant(x) == SORT_UNIQUE, &out)))
		return rc;
	return give(c, k, ud, out);
}

static int bi_error(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	return raise_error(c, in);
}

/* ---- builtins that see their argument expressions ---- */

static int bi_select(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	cont s = { NULL, in, ptr, NULL, k, ud };
	return wmap__jn_ev(c, x->args[0], in, NULL, e, select_emit, &s);
}

enum { MAP_VALUES,
       MAP_ENTRIES };

/* map(f), and with_entries(f): to_entries | map(f) | from_entries. */
static int bi_map(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	int entries = variant(x) == MAP_ENTRIES;
	json_t *src = entries ? NULL : json_incref(in), *out = NULL;
	int rc;
	if (entries) {
		if (!json_is_object(in) && !json_is_array(in))
			return wmap__jn_err(c, "%s has no keys", wmap__jn_type_name(in));
		src = to_entries(in);
		if (!src)
			return wmap__jn_oom(c);
	}
	rc = map(c, x->args[0], src, e, &out);
	json_decref(src);
	if (rc)
		return rc;
	if (entries) {
		json_t *obj;
		rc = from_entries(c, out, &obj);
		json_decref(out);
		if (rc)
			return rc;
		out = obj;
	}
	return give(c, k, ud, out);
}

enum { ALL,
       ANY };

/* any, any(cond), any(gen; cond), and all likewise. */
static int bi_anyall(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	const node *gen = x->n == 2 ? x->args[0] : NULL;
	const node *cond = x->n > 0 ? x->args[x->n - 1] : NULL;
	return anyall(c, gen, cond, in, e, variant(x) == ANY, k, ud);
}

/* first(f), last(f), isempty(f). variant: first_ud's want (-1 stops at the first output, -2
 * never stops, so the last one stays), or ISEMPTY. */
enum { FIRST_OF = -1,
       LAST_OF = -2,
       ISEMPTY = 1 };

static int bi_first_of(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	int isempty = variant(x) == ISEMPTY;
	first_ud f = { NULL, NULL, 0, isempty ? FIRST_OF : variant(x), 0, NULL, NULL };
	int rc = run_until(c, x->args[0], in, ptr, e, first_emit, &f);
	if (!rc && isempty)
		rc = k(c, ud, json_boolean(f.v == NULL), NULL);
	else if (!rc && f.v)
		rc = k(c, ud, f.v, f.ptr);
	else if (!rc && variant(x) == LAST_OF) /* jq 1.6: last(f) is reduce f as $x (null; $x) */
		rc = k(c, ud, json_null(), NULL);
	json_decref(f.v);
	free(f.ptr);
	return rc;
}

static int bi_limit(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	json_t *ns;
	size_t i;
	json_t *nv;
	int rc;
	if ((rc = wmap__jn_ev_all(c, x->args[0], in, e, &ns)))
		return rc;
	json_array_foreach(ns, i, nv) {
		/* jq 1.6 quirk: a limit of 0 or less still lets the first output through */
		long lim = json_is_number(nv) ? (long)wmap__jn_num(nv) : 0;
		first_ud f = { NULL, NULL, 0, 0, lim > 0 ? lim : 1, k, ud };
		if ((rc = run_until(c, x->args[1], in, ptr, e, limit_emit, &f)))
			break;
	}
	json_decref(ns);
	return rc;
}

/* IN(s): any(s == .; .); IN(src; s): any(src == s; .) */
static int bi_IN(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	json_t *srcs, *ss;
	int rc;
	if (x->n == 1) {
		srcs = json_pack("[O]", in);
		if (!srcs)
			return wmap__jn_oom(c);
	} else if ((rc = wmap__jn_ev_all(c, x->args[0], in, e, &srcs))) {
		return rc;
	}
	if ((rc = wmap__jn_ev_all(c, x->args[x->n - 1], in, e, &ss))) {
		json_decref(srcs);
		return rc;
	}
	int found = 0;
	size_t i, j;
	json_t *a, *b;
	json_array_foreach(ss, j, b)
		json_array_foreach(srcs, i, a)
			if (wmap__jn_compare(a, b) == 0)
				found = 1;
	json_decref(srcs);
	json_decref(ss);
	return k(c, ud, json_boolean(found), NULL);
}

/* min_by(f) and max_by(f): the element whose [f] is least or greatest. */
static int bi_minmax_by(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	size_t i;
	json_t *v, *best = NULL, *best_key = NULL;
	int rc = 0;
	if (!json_is_array(in))
		return wmap__jn_err(c, "Cannot index %s with number", wmap__jn_type_name(in));
	json_array_foreach(in, i, v) {
		json_t *key;
		if ((rc = wmap__jn_ev_all(c, x->args[0], v, e, &key)))
			break;
		int r = best_key ? wmap__jn_compare(key, best_key) : 0;
		if (!best || (variant(x) == MIN ? r < 0 : r >= 0)) {
			json_decref(best_key);
			best_key = key;
			best = v;
		} else {
			json_decref(key);
		}
	}
	json_decref(best_key);
	return rc ? rc : k(c, ud, best ? best : json_null(), NULL);
}

/* ---- the table, bound when an expression is parsed ---- */

#define CALL(name, arity, fn, variant)         \
	{                                      \
		name, arity, fn, NULL, variant \
	}
#define VALUE(name, fn, variant)           \
	{                                  \
		name, 1, NULL, fn, variant \
	}
static const jn_builtin builtins[] = {
	CALL("empty", 0, bi_empty, 0),
	CALL("not", 0, bi_not, 0),
	CALL("length", 0, bi_length, 0),
	CALL("utf8bytelength", 0, bi_utf8bytelength, 0),
	CALL("keys", 0, bi_keys, KEYS_SORTED),
	CALL("keys_unsorted", 0, bi_keys, KEYS_UNSORTED),
	CALL("values", 0, bi_type_filter, F_VALUES),
	CALL("nulls", 0, bi_type_filter, F_NULLS),
	CALL("booleans", 0, bi_type_filter, F_BOOLEANS),
	CALL("numbers", 0, bi_type_filter, F_NUMBERS),
	CALL("strings", 0, bi_type_filter, F_STRINGS),
	CALL("arrays", 0, bi_type_filter, F_ARRAYS),
	CALL("objects", 0, bi_type_filter, F_OBJECTS),
	CALL("iterables", 0, bi_type_filter, F_ITERABLES),
	CALL("scalars", 0, bi_type_filter, F_SCALARS),
	CALL("to_entries", 0, bi_to_entries, 0),
	CALL("from_entries", 0, bi_from_entries, 0),
	CALL("add", 0, bi_add, 0),
	CALL("any", 0, bi_anyall, ANY),
	CALL("all", 0, bi_anyall, ALL),
	CALL("min", 0, bi_minmax, MIN),
	CALL("max", 0, bi_minmax, MAX),
	CALL("floor", 0, bi_math, M_FLOOR),
	CALL("ceil", 0, bi_math, M_CEIL),
	CALL("round", 0, bi_math, M_ROUND),
	CALL("sqrt", 0, bi_math, M_SQRT),
	CALL("fabs", 0, bi_math, M_FABS),
	CALL("tostring", 0, bi_tostring, 0),
	CALL("tonumber", 0, bi_fromjson, TONUMBER),
	CALL("tojson", 0, bi_tojson, 0),
	CALL("fromjson", 0, bi_fromjson, FROMJSON),
	CALL("type", 0, bi_type, 0),
	CALL("ascii_downcase", 0, bi_ascii_case, DOWNCASE),
	CALL("ascii_upcase", 0, bi_ascii_case, UPCASE),
	CALL("first", 0, bi_first_last, 0),
	CALL("last", 0, bi_first_last, -1),
	CALL("reverse", 0, bi_reverse, 0),
	CALL("sort", 0, bi_sort, SORT_ALL),
	CALL("unique", 0, bi_sort, SORT_UNIQUE),
	CALL("error", 0, bi_error, 0),
	CALL("select", 1, bi_select, 0),
	CALL("map", 1, bi_map, MAP_VALUES),
	CALL("with_entries", 1, bi_map, MAP_ENTRIES),
	CALL("any", 1, bi_anyall, ANY),
	CALL("all", 1, bi_anyall, ALL),
	CALL("first", 1, bi_first_of, FIRST_OF),
	CALL("last", 1, bi_first_of, LAST_OF),
	CALL("isempty", 1, bi_first_of, ISEMPTY),
	CALL("IN", 1, bi_IN, 0),
	CALL("min_by", 1, bi_minmax_by, MIN),
	CALL("max_by", 1, bi_minmax_by, MAX),
	VALUE("has", v_has, 0),
	VALUE("in", v_in, 0),
	VALUE("contains", v_contains, CONTAINS),
	VALUE("inside", v_contains, INSIDE),
	VALUE("index", v_indices, INDEX_FIRST),
	VALUE("rindex", v_indices, INDEX_LAST),
	VALUE("indices", v_indices, INDEX_ALL),
	VALUE("startswith", v_startswith, AT_START),
	VALUE("endswith", v_startswith, AT_END),
	VALUE("ltrimstr", v_trimstr, AT_START),
	VALUE("rtrimstr", v_trimstr, AT_END),
	VALUE("split", v_split, 0),
	VALUE("join", v_join, 0),
	VALUE("getpath", v_getpath, 0),
	VALUE("error", v_error, 0),
	CALL("any", 2, bi_anyall, ANY),
	CALL("all", 2, bi_anyall, ALL),
	CALL("limit", 2, bi_limit, 0),
	CALL("IN", 2, bi_IN, 0),
};

const jn_builtin *wmap__jn_builtin(const char *name, size_t arity)
{
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (builtins[i].arity == arity && strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

int wmap__jn_call(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	if (x->fn->value)
		return with_arg(c, x, in, ptr, e, x->fn->value, k, ud);
	return x->fn->call(c, x, in, ptr, e, k, ud);
}
