/* wmap: the jq builtins the native evaluator knows (see jqnative.h).
 *
 * Each follows jq 1.6's definition, including its quirks (index on strings counts bytes,
 * join turns numbers into JSON, add of nothing is null). A name or arity missing from the
 * table below makes the parser refuse the expression, so libjq evaluates it instead. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jqnative_int.h"

static const struct {
	const char *name;
	size_t arity;
} known[] = {
	{ "empty", 0 },
	{ "not", 0 },
	{ "length", 0 },
	{ "utf8bytelength", 0 },
	{ "keys", 0 },
	{ "keys_unsorted", 0 },
	{ "values", 0 },
	{ "nulls", 0 },
	{ "booleans", 0 },
	{ "numbers", 0 },
	{ "strings", 0 },
	{ "arrays", 0 },
	{ "objects", 0 },
	{ "iterables", 0 },
	{ "scalars", 0 },
	{ "to_entries", 0 },
	{ "from_entries", 0 },
	{ "add", 0 },
	{ "any", 0 },
	{ "all", 0 },
	{ "min", 0 },
	{ "max", 0 },
	{ "floor", 0 },
	{ "ceil", 0 },
	{ "round", 0 },
	{ "sqrt", 0 },
	{ "fabs", 0 },
	{ "tostring", 0 },
	{ "tonumber", 0 },
	{ "tojson", 0 },
	{ "fromjson", 0 },
	{ "type", 0 },
	{ "ascii_downcase", 0 },
	{ "ascii_upcase", 0 },
	{ "first", 0 },
	{ "last", 0 },
	{ "reverse", 0 },
	{ "sort", 0 },
	{ "unique", 0 },
	{ "error", 0 },
	{ "select", 1 },
	{ "map", 1 },
	{ "any", 1 },
	{ "all", 1 },
	{ "first", 1 },
	{ "last", 1 },
	{ "isempty", 1 },
	{ "with_entries", 1 },
	{ "has", 1 },
	{ "in", 1 },
	{ "contains", 1 },
	{ "inside", 1 },
	{ "index", 1 },
	{ "rindex", 1 },
	{ "indices", 1 },
	{ "startswith", 1 },
	{ "endswith", 1 },
	{ "ltrimstr", 1 },
	{ "rtrimstr", 1 },
	{ "split", 1 },
	{ "join", 1 },
	{ "getpath", 1 },
	{ "error", 1 },
	{ "IN", 1 },
	{ "min_by", 1 },
	{ "max_by", 1 },
	{ "any", 2 },
	{ "all", 2 },
	{ "limit", 2 },
	{ "IN", 2 },
};

int wmap__jn_known(const char *name, size_t arity)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].arity == arity && strcmp(known[i].name, name) == 0)
			return 1;
	return 0;
}

static int is(const node *x, const char *name, size_t arity)
{
	return x->n == arity && strcmp(x->name, name) == 0;
}

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

/* Calls fn(in, arg) for every output of the argument (jq's $-parameters). */
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

static int fn_value(ectx *c, const node *x, json_t *in, const char *ptr, json_t *arg, emit_fn k, void *ud)
{
	const char *n = x->name;
	json_t *out = NULL;
	int rc;

	if (strcmp(n, "has") == 0) {
		if (json_is_object(in) && json_is_string(arg))
			return k(c, ud, json_boolean(json_object_get(in, json_string_value(arg)) != NULL), NULL);
		if (json_is_array(in) && json_is_number(arg))
			return k(c, ud, json_boolean(wmap__jn_num(arg) >= 0 && wmap__jn_num(arg) < (double)json_array_size(in)), NULL);
		return wmap__jn_err(c, "Cannot check whether %s has a %s key", wmap__jn_type_name(in), wmap__jn_type_name(arg));
	}
	if (strcmp(n, "in") == 0) {
		if (json_is_object(arg) && json_is_string(in))
			return k(c, ud, json_boolean(json_object_get(arg, json_string_value(in)) != NULL), NULL);
		if (json_is_array(arg) && json_is_number(in))
			return k(c, ud, json_boolean(wmap__jn_num(in) >= 0 && wmap__jn_num(in) < (double)json_array_size(arg)), NULL);
		return wmap__jn_err(c, "Cannot check whether %s has a %s key", wmap__jn_type_name(arg), wmap__jn_type_name(in));
	}
	if (strcmp(n, "contains") == 0 || strcmp(n, "inside") == 0) {
		int r = strcmp(n, "contains") == 0 ? contains(c, in, arg) : contains(c, arg, in);
		return r < 0 ? WMAP_EEVAL : k(c, ud, json_boolean(r), NULL);
	}
	if (strcmp(n, "index") == 0 || strcmp(n, "rindex") == 0 || strcmp(n, "indices") == 0) {
		if ((rc = indices(c, in, arg, &out)))
			return rc;
		if (strcmp(n, "indices") != 0 && json_is_array(out)) {
			size_t sz = json_array_size(out);
			json_t *pick = sz ? json_incref(json_array_get(out, n[0] == 'i' ? 0 : sz - 1)) : json_null();
			json_decref(out);
			out = pick;
		}
		return give(c, k, ud, out);
	}
	if (strcmp(n, "startswith") == 0 || strcmp(n, "endswith") == 0) {
		if ((rc = string_test(c, n, in, arg)))
			return rc;
		size_t ls = json_string_length(in), la = json_string_length(arg);
		const char *s = json_string_value(in);
		int r = la <= ls && memcmp(n[0] == 's' ? s : s + ls - la, json_string_value(arg), la) == 0;
		return k(c, ud, json_boolean(r), NULL);
	}
	if (strcmp(n, "ltrimstr") == 0 || strcmp(n, "rtrimstr") == 0) {
		if (json_is_string(in) && json_is_string(arg)) {
			size_t ls = json_string_length(in), la = json_string_length(arg);
			const char *s = json_string_value(in);
			if (n[0] == 'l' && la <= ls && memcmp(s, json_string_value(arg), la) == 0)
				return give(c, k, ud, json_stringn(s + la, ls - la));
			if (n[0] == 'r' && la <= ls && memcmp(s + ls - la, json_string_value(arg), la) == 0)
				return give(c, k, ud, json_stringn(s, ls - la));
		}
		return k(c, ud, in, ptr);
	}
	if (strcmp(n, "split") == 0) {
		if ((rc = string_test(c, "split input and separator", in, arg)))
			return wmap__jn_err(c, "split input and separator must be strings");
		const char *s = json_string_value(in), *sep = json_string_value(arg);
		size_t ls = json_string_length(in), lsep = json_string_length(arg), start = 0;
		out = json_array();
		if (!out)
			return wmap__jn_oom(c);
		if (ls == 0)
			return give(c, k, ud, out);
		for (size_t i = 0; lsep > 0 && i + lsep <= ls;) {
			if (memcmp(s + i, sep, lsep) == 0) {
				json_array_append_new(out, json_stringn(s + start, i - start));
				i += lsep;
				start = i;
			} else {
				i++;
			}
		}
		if (lsep == 0) {
			for (size_t i = 0; i < ls; i++)
				if (((unsigned char)s[i] & 0xC0) != 0x80 && i > start) {
					json_array_append_new(out, json_stringn(s + start, i - start));
					start = i;
				}
		}
		json_array_append_new(out, json_stringn(s + start, ls - start));
		return give(c, k, ud, out);
	}
	if (strcmp(n, "join") == 0) {
		json_t *acc = NULL;
		size_t i;
		json_t *v;
		if (!json_is_array(in) && !json_is_object(in))
			return wmap__jn_err(c, "Cannot iterate over %s", wmap__jn_type_name(in));
		if (json_is_object(in))
			return wmap__jn_err(c, "join input must be an array");
		json_array_foreach(in, i, v) {
			json_t *piece, *next;
			if (json_is_null(v))
				piece = json_string("");
			else if (json_is_boolean(v) || json_is_number(v)) {
				char *d = wmap__jn_dump(v);
				piece = d ? json_string(d) : NULL;
				free(d);
			} else
				piece = json_incref(v);
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
	if (strcmp(n, "getpath") == 0) {
		json_t *cur = json_incref(in);
		char *p = ptr ? strdup(ptr) : NULL;
		size_t i;
		json_t *key;
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
	if (strcmp(n, "error") == 0) {
		char *d = json_is_string(arg) ? NULL : wmap__jn_dump(arg);
		rc = wmap__jn_err(c, "%s", d ? d : json_string_value(arg));
		free(d);
		return rc;
	}
	return wmap__jn_err(c, "%s/1 is not supported", n);
}

/* ---- 0-arity builtins ---- */

static int type_filter(const char *n, const json_t *in)
{
	if (strcmp(n, "values") == 0)
		return !json_is_null(in);
	if (strcmp(n, "nulls") == 0)
		return json_is_null(in);
	if (strcmp(n, "booleans") == 0)
		return json_is_boolean(in);
	if (strcmp(n, "numbers") == 0)
		return json_is_number(in);
	if (strcmp(n, "strings") == 0)
		return json_is_string(in);
	if (strcmp(n, "arrays") == 0)
		return json_is_array(in);
	if (strcmp(n, "objects") == 0)
		return json_is_object(in);
	if (strcmp(n, "iterables") == 0)
		return json_is_array(in) || json_is_object(in);
	if (strcmp(n, "scalars") == 0)
		return !json_is_array(in) && !json_is_object(in);
	return -1;
}

static int call0(ectx *c, const node *x, json_t *in, const char *ptr, emit_fn k, void *ud)
{
	const char *n = x->name;
	int rc, f;
	json_t *out;

	if ((f = type_filter(n, in)) >= 0)
		return f ? k(c, ud, in, ptr) : 0;
	if (strcmp(n, "empty") == 0)
		return 0;
	if (strcmp(n, "not") == 0)
		return k(c, ud, json_boolean(!wmap__jn_truthy(in)), NULL);
	if (strcmp(n, "length") == 0) {
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
	if (strcmp(n, "utf8bytelength") == 0) {
		if (!json_is_string(in))
			return wmap__jn_err(c, "%s only strings have UTF-8 byte length", wmap__jn_type_name(in));
		return give(c, k, ud, json_integer((json_int_t)json_string_length(in)));
	}
	if (strcmp(n, "keys") == 0 || strcmp(n, "keys_unsorted") == 0) {
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
		if (n[4] == '\0' && out) {
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
	if (strcmp(n, "to_entries") == 0) {
		if (!json_is_object(in) && !json_is_array(in))
			return wmap__jn_err(c, "%s has no keys", wmap__jn_type_name(in));
		return give(c, k, ud, to_entries(in));
	}
	if (strcmp(n, "from_entries") == 0) {
		if ((rc = from_entries(c, in, &out)))
			return rc;
		return give(c, k, ud, out);
	}
	if (strcmp(n, "add") == 0) {
		json_t *acc = json_null();
		size_t i;
		json_t *v;
		const char *key;
		if (json_is_object(in)) {
			json_object_foreach(in, key, v) {
				json_t *next;
				if ((rc = wmap__jn_arith(c, T_PLUS, acc, v, &next))) {
					json_decref(acc);
					return rc;
				}
				json_decref(acc);
				acc = next;
			}
		} else if (json_is_array(in)) {
			json_array_foreach(in, i, v) {
				json_t *next;
				if ((rc = wmap__jn_arith(c, T_PLUS, acc, v, &next))) {
					json_decref(acc);
					return rc;
				}
				json_decref(acc);
				acc = next;
			}
		} else {
			return wmap__jn_err(c, "Cannot iterate over %s", wmap__jn_type_name(in));
		}
		return give(c, k, ud, acc);
	}
	if (strcmp(n, "any") == 0 || strcmp(n, "all") == 0)
		return anyall(c, NULL, NULL, in, NULL, n[1] == 'n', k, ud);
	if (strcmp(n, "min") == 0 || strcmp(n, "max") == 0) {
		size_t i;
		json_t *v, *best = NULL;
		if (!json_is_array(in))
			return wmap__jn_err(c, "Cannot compute %s of %s", n, wmap__jn_type_name(in));
		json_array_foreach(in, i, v) {
			int r = best ? wmap__jn_compare(v, best) : 0;
			if (!best || (n[1] == 'i' ? r < 0 : r >= 0))
				best = v;
		}
		return k(c, ud, best ? best : json_null(), NULL);
	}
	if (strcmp(n, "floor") == 0 || strcmp(n, "ceil") == 0 || strcmp(n, "round") == 0 ||
	    strcmp(n, "sqrt") == 0 || strcmp(n, "fabs") == 0) {
		if (!json_is_number(in))
			return wmap__jn_err(c, "%s number required", wmap__jn_type_name(in));
		double d = wmap__jn_num(in);
		d = n[0] == 'f' && n[1] == 'l' ? floor(d) : n[0] == 'c' ? ceil(d)
						    : n[0] == 'r'       ? round(d)
						    : n[0] == 's'       ? sqrt(d)
									: fabs(d);
		return give(c, k, ud, wmap__jn_mknum(d));
	}
	if (strcmp(n, "tostring") == 0) {
		if (json_is_string(in))
			return k(c, ud, in, NULL);
		char *d = wmap__jn_dump(in);
		out = d ? json_string(d) : NULL;
		free(d);
		return give(c, k, ud, out);
	}
	if (strcmp(n, "tojson") == 0) {
		char *d = wmap__jn_dump(in);
		out = d ? json_string(d) : NULL;
		free(d);
		return give(c, k, ud, out);
	}
	if (strcmp(n, "tonumber") == 0 || strcmp(n, "fromjson") == 0) {
		if (n[0] == 't' && json_is_number(in))
			return k(c, ud, in, NULL);
		if (!json_is_string(in))
			return wmap__jn_err(c, "%s cannot be parsed as a number", wmap__jn_type_name(in));
		json_error_t je;
		out = json_loads(json_string_value(in), JSON_DECODE_ANY, &je);
		if (!out || (n[0] == 't' && !json_is_number(out))) {
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
	if (strcmp(n, "type") == 0)
		return give(c, k, ud, json_string(wmap__jn_type_name(in)));
	if (strcmp(n, "ascii_downcase") == 0 || strcmp(n, "ascii_upcase") == 0) {
		if (!json_is_string(in))
			return wmap__jn_err(c, "%s input must be a string", n);
		size_t len = json_string_length(in);
		char *s = malloc(len + 1);
		if (!s)
			return wmap__jn_oom(c);
		memcpy(s, json_string_value(in), len + 1);
		for (size_t i = 0; i < len; i++)
			if (n[6] == 'd' && s[i] >= 'A' && s[i] <= 'Z')
				s[i] = (char)(s[i] + 32);
			else if (n[6] == 'u' && s[i] >= 'a' && s[i] <= 'z')
				s[i] = (char)(s[i] - 32);
		out = json_stringn(s, len);
		free(s);
		return give(c, k, ud, out);
	}
	if (strcmp(n, "first") == 0 || strcmp(n, "last") == 0) {
		json_t *idx = json_integer(n[0] == 'f' ? 0 : -1), *v;
		char *p;
		if (!idx)
			return wmap__jn_oom(c);
		rc = wmap__jn_index_value(c, in, ptr, idx, &v, &p);
		json_decref(idx);
		if (rc)
			return rc;
		rc = k(c, ud, v, p);
		json_decref(v);
		free(p);
		return rc;
	}
	if (strcmp(n, "reverse") == 0) {
		if (json_is_null(in))
			return give(c, k, ud, json_array());
		if (!json_is_array(in))
			return wmap__jn_err(c, "Cannot reverse %s", wmap__jn_type_name(in));
		out = json_array();
		for (size_t i = json_array_size(in); out && i-- > 0;)
			json_array_append(out, json_array_get(in, i));
		return give(c, k, ud, out);
	}
	if (strcmp(n, "sort") == 0 || strcmp(n, "unique") == 0) {
		if ((rc = sorted(c, in, n[0] == 'u', &out)))
			return rc;
		return give(c, k, ud, out);
	}
	if (strcmp(n, "error") == 0) {
		char *d = json_is_string(in) ? NULL : wmap__jn_dump(in);
		rc = wmap__jn_err(c, "%s", d ? d : json_string_value(in));
		free(d);
		return rc;
	}
	return wmap__jn_err(c, "%s/0 is not supported", n);
}

/* by_key for min_by/max_by: [f] of each element. */
static int minmax_by(ectx *c, const node *x, json_t *in, const env *e, emit_fn k, void *ud)
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
		if (!best || (x->name[1] == 'i' ? r < 0 : r >= 0)) {
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

int wmap__jn_call(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	const char *n = x->name;
	int rc;

	if (x->n == 0)
		return call0(c, x, in, ptr, k, ud);
	if (is(x, "select", 1)) {
		cont s = { NULL, in, ptr, NULL, k, ud };
		return wmap__jn_ev(c, x->args[0], in, NULL, e, select_emit, &s);
	}
	if (is(x, "map", 1) || is(x, "with_entries", 1)) {
		json_t *src = is(x, "map", 1) ? json_incref(in) : NULL, *out = NULL;
		if (!src) {
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
		if (is(x, "with_entries", 1)) {
			json_t *obj;
			rc = from_entries(c, out, &obj);
			json_decref(out);
			if (rc)
				return rc;
			out = obj;
		}
		return give(c, k, ud, out);
	}
	if (is(x, "any", 1) || is(x, "all", 1))
		return anyall(c, NULL, x->args[0], in, e, n[1] == 'n', k, ud);
	if (is(x, "any", 2) || is(x, "all", 2))
		return anyall(c, x->args[0], x->args[1], in, e, n[1] == 'n', k, ud);
	if (is(x, "first", 1) || is(x, "last", 1) || is(x, "isempty", 1)) {
		first_ud f = { NULL, NULL, 0, n[0] == 'l' ? -2 : -1, 0, NULL, NULL };
		rc = run_until(c, x->args[0], in, ptr, e, first_emit, &f);
		if (!rc && n[0] == 'i')
			rc = k(c, ud, json_boolean(f.v == NULL), NULL);
		else if (!rc && f.v)
			rc = k(c, ud, f.v, f.ptr);
		json_decref(f.v);
		free(f.ptr);
		return rc;
	}
	if (is(x, "limit", 2)) {
		json_t *ns;
		size_t i;
		json_t *nv;
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
	if (is(x, "IN", 1) || is(x, "IN", 2)) {
		/* IN(s): any(s == .; .); IN(src; s): any(src == s; .) */
		json_t *srcs, *ss;
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
	if (is(x, "min_by", 1) || is(x, "max_by", 1))
		return minmax_by(c, x, in, e, k, ud);
	if (x->n == 1)
		return with_arg(c, x, in, ptr, e, fn_value, k, ud);
	return wmap__jn_err(c, "%s/%zu is not supported", n, x->n);
}
