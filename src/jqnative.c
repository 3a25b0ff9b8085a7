/* wmap: the jq subset of definitions, parsed and evaluated natively (see jqnative.h).
 *
 * Evaluation follows jq's generator model with callbacks: every node calls `emit` once per
 * output. Short-circuiting constructs (first, any, all, limit) stop a generator by having
 * their callback return JN_STOP. `?` and `try` swallow errors raised by their own body but
 * never errors raised downstream of it (inside their emit), as jq does. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jqnative_int.h"
#include "wmap/arena.h"
#include "wmap/json_text.h"

#define JN_MAX_STEPS 2000000UL /* evaluation budget per run: no expression loops for ever */

/* ---- evaluation ---- */

int wmap__jn_err(ectx *c, const char *fmt, ...)
{
	va_list ap;
	json_decref(c->thrown); /* an error of its own: no value was raised */
	c->thrown = NULL;
	va_start(ap, fmt);
	if (c->err) {
		vsnprintf(c->err->message, sizeof(c->err->message), fmt, ap);
		c->err->code = WMAP_EEVAL;
	}
	va_end(ap);
	return WMAP_EEVAL;
}

int wmap__jn_oom(ectx *c)
{
	if (c->err)
		wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
	return WMAP_ENOMEM;
}

const char *wmap__jn_type_name(const json_t *v)
{
	return wmap__json_type_name(v);
}

int wmap__jn_truthy(const json_t *v)
{
	return v && !json_is_null(v) && !json_is_false(v);
}

double wmap__jn_num(const json_t *v)
{
	return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

json_t *wmap__jn_mknum(double d)
{
	if (d == floor(d) && fabs(d) < 9e15)
		return json_integer((json_int_t)d);
	return json_real(d);
}

/* jq's order: null < false < true < numbers < strings < arrays < objects. */
static int kind_rank(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL: return 0;
	case JSON_FALSE: return 1;
	case JSON_TRUE: return 2;
	case JSON_INTEGER:
	case JSON_REAL: return 3;
	case JSON_STRING: return 4;
	case JSON_ARRAY: return 5;
	default: return 6;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char **sorted_keys(const json_t *o, size_t *n)
{
	const char **keys = malloc((json_object_size(o) + 1) * sizeof(*keys));
	const char *k;
	json_t *v;
	*n = 0;
	if (!keys)
		return NULL;
	json_object_foreach((json_t *)o, k, v)
		keys[(*n)++] = k;
	qsort(keys, *n, sizeof(*keys), cmp_str);
	return keys;
}

int wmap__jn_compare(const json_t *a, const json_t *b)
{
	int ra = kind_rank(a), rb = kind_rank(b);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	switch (ra) {
	case 3: {
		double x = wmap__jn_num(a), y = wmap__jn_num(b);
		return x < y ? -1 : x > y;
	}
	case 4: {
		size_t la = json_string_length(a), lb = json_string_length(b);
		int r = memcmp(json_string_value(a), json_string_value(b), la < lb ? la : lb);
		return r ? (r < 0 ? -1 : 1) : (la < lb ? -1 : la > lb);
	}
	case 5: {
		size_t la = json_array_size(a), lb = json_array_size(b);
		for (size_t i = 0; i < la && i < lb; i++) {
			int r = wmap__jn_compare(json_array_get(a, i), json_array_get(b, i));
			if (r)
				return r;
		}
		return la < lb ? -1 : la > lb;
	}
	case 6: {
		size_t na, nb;
		const char **ka = sorted_keys(a, &na), **kb = sorted_keys(b, &nb);
		int r = 0;
		if (!ka || !kb) {
			free(ka);
			free(kb);
			return 0;
		}
		for (size_t i = 0; !r && i < na && i < nb; i++)
			r = strcmp(ka[i], kb[i]);
		if (!r && na != nb)
			r = na < nb ? -1 : 1;
		for (size_t i = 0; !r && i < na; i++)
			r = wmap__jn_compare(json_object_get(a, ka[i]), json_object_get(b, ka[i]));
		free(ka);
		free(kb);
		return r < 0 ? -1 : r > 0;
	}
	default:
		return 0;
	}
}

char *wmap__jn_dump(const json_t *v)
{
	return wmap_json_text(v, NULL); /* malloc'd: json_dumps text may be review-arena memory */
}

/* "number (1)": the operand in a message, shortened like jq's. */
void wmap__jn_describe(char *buf, size_t len, const json_t *v)
{
	char *s = wmap__jn_dump(v);
	snprintf(buf, len, "%s (%.11s%s)", wmap__jn_type_name(v), s ? s : "", s && strlen(s) > 11 ? "..." : "");
	free(s);
}

/* jq's object multiplication: a recursive merge, b winning. */
static json_t *deep_merge(const json_t *a, const json_t *b)
{
	json_t *out = json_copy((json_t *)a);
	const char *k;
	json_t *v;
	if (!out)
		return NULL;
	json_object_foreach((json_t *)b, k, v) {
		json_t *av = json_object_get(out, k);
		json_t *nv = json_is_object(av) && json_is_object(v) ? deep_merge(av, v) : json_incref(v);
		if (!nv || json_object_set_new(out, k, nv)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* jq's string division: split a by the separator b. */
json_t *wmap__jn_split(const json_t *a, const json_t *b)
{
	const char *s = json_string_value(a), *sep = json_string_value(b);
	size_t ls = json_string_length(a), lsep = json_string_length(b), start = 0;
	json_t *out = json_array();
	if (!out || ls == 0)
		return out;
	for (size_t i = 0; lsep > 0 && i + lsep <= ls;)
		if (memcmp(s + i, sep, lsep) == 0) {
			json_array_append_new(out, json_stringn(s + start, i - start));
			i += lsep;
			start = i;
		} else {
			i++;
		}
	/* An empty separator splits between characters (UTF-8 code points). */
	for (size_t i = 0; lsep == 0 && i < ls; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80 && i > start) {
			json_array_append_new(out, json_stringn(s + start, i - start));
			start = i;
		}
	json_array_append_new(out, json_stringn(s + start, ls - start));
	return out;
}

int wmap__jn_arith(ectx *c, tok_kind op, json_t *a, json_t *b, json_t **out)
{
	char da[64], db[64];
	*out = NULL;
	if (op == T_PLUS) {
		if (json_is_null(a)) {
			*out = json_incref(b);
		} else if (json_is_null(b)) {
			*out = json_incref(a);
		} else if (json_is_number(a) && json_is_number(b)) {
			*out = wmap__jn_mknum(wmap__jn_num(a) + wmap__jn_num(b));
		} else if (json_is_string(a) && json_is_string(b)) {
			size_t la = json_string_length(a), lb = json_string_length(b);
			char *s = malloc(la + lb + 1);
			if (!s)
				return wmap__jn_oom(c);
			memcpy(s, json_string_value(a), la);
			memcpy(s + la, json_string_value(b), lb);
			s[la + lb] = '\0';
			*out = json_stringn_nocheck(s, la + lb);
			free(s);
		} else if (json_is_array(a) && json_is_array(b)) {
			*out = json_copy(a);
			if (*out && json_array_extend(*out, b))
				return wmap__jn_oom(c);
		} else if (json_is_object(a) && json_is_object(b)) {
			*out = json_copy(a);
			if (*out && json_object_update(*out, b))
				return wmap__jn_oom(c);
		} else {
			goto mismatch;
		}
	} else if (op == T_STAR && ((json_is_string(a) && json_is_number(b)) || (json_is_number(a) && json_is_string(b)))) {
		/* jq repeats a string n times (n truncated; none -> null) */
		const json_t *str = json_is_string(a) ? a : b;
		double times = wmap__jn_num(json_is_string(a) ? b : a);
		size_t len = json_string_length(str);
		long long n = times >= 1 ? (long long)times : 0;
		if (n <= 0)
			return (*out = json_null()), 0;
		if (len && (unsigned long long)n > (16u << 20) / len)
			return wmap__jn_err(c, "string repetition too long");
		char *buf = malloc(len * (size_t)n + 1);
		if (!buf)
			return wmap__jn_oom(c);
		for (long long i = 0; i < n; i++)
			memcpy(buf + (size_t)i * len, json_string_value(str), len);
		*out = json_stringn_nocheck(buf, len * (size_t)n);
		free(buf);
	} else if (op == T_STAR && json_is_object(a) && json_is_object(b)) {
		*out = deep_merge(a, b);
	} else if (op == T_SLASH && json_is_string(a) && json_is_string(b)) {
		*out = wmap__jn_split(a, b);
	} else if (json_is_number(a) && json_is_number(b)) {
		double x = wmap__jn_num(a), y = wmap__jn_num(b);
		if (op == T_MINUS)
			*out = wmap__jn_mknum(x - y);
		else if (op == T_STAR)
			*out = wmap__jn_mknum(x * y);
		else if (op == T_SLASH) {
			if (y == 0)
				goto divzero;
			*out = wmap__jn_mknum(x / y);
		} else {
			long long xi = (long long)x, yi = (long long)y;
			if (yi == 0)
				goto divzero;
			*out = wmap__jn_mknum((double)(xi % (yi < 0 ? -yi : yi)));
		}
	} else if (op == T_MINUS && json_is_array(a) && json_is_array(b)) {
		*out = json_array();
		size_t i, j;
		json_t *x, *y;
		json_array_foreach(a, i, x) {
			int keep = 1;
			json_array_foreach(b, j, y)
				if (wmap__jn_compare(x, y) == 0)
					keep = 0;
			if (keep && *out)
				json_array_append(*out, x);
		}
	} else {
		goto mismatch;
	}
	return *out ? 0 : wmap__jn_oom(c);
mismatch:
	wmap__jn_describe(da, sizeof(da), a);
	wmap__jn_describe(db, sizeof(db), b);
	return wmap__jn_err(c, "%s and %s cannot be %s", da, db,
			    op == T_PLUS ? "added" : op == T_MINUS ? "subtracted"
					     : op == T_STAR        ? "multiplied"
					     : op == T_SLASH       ? "divided"
								   : "divided");
divzero:
	wmap__jn_describe(da, sizeof(da), a);
	wmap__jn_describe(db, sizeof(db), b);
	return wmap__jn_err(c, "%s and %s cannot be divided because the divisor is zero", da, db);
}

/* ---- helpers that collect or consume generator outputs ---- */

typedef struct collect {
	json_t *arr;
} collect;

static int collect_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	(void)ptr;
	return json_array_append(((collect *)ud)->arr, v) ? wmap__jn_oom(c) : 0;
}

/* Every output of x on in, as a new array. */
int wmap__jn_ev_all(ectx *c, const node *x, json_t *in, const env *e, json_t **out)
{
	collect col = { json_array() };
	if (!col.arr)
		return wmap__jn_oom(c);
	int rc = wmap__jn_ev(c, x, in, NULL, e, collect_emit, &col);
	if (rc) {
		json_decref(col.arr);
		return rc;
	}
	*out = col.arr;
	return 0;
}

/* Runs k on one element of a container: x at index idx (key NULL) or at key, with its location
 * below ptr when the container has one. */
static int iterate_member(ectx *c, json_t *x, const char *ptr, const char *key, size_t idx, emit_fn k,
			  void *ud)
{
	char *p = NULL;
	if (ptr && !(p = key ? wmap_pointer_join(ptr, key) : wmap_pointer_join_index(ptr, idx)))
		return wmap__jn_oom(c);
	int rc = k(c, ud, x, p);
	free(p);
	return rc;
}

/* Runs k for each element of a container (jq's .[]). */
int wmap__jn_iterate(ectx *c, json_t *in, const char *ptr, int optional, emit_fn k, void *ud)
{
	int rc = 0;
	if (json_is_array(in)) {
		size_t i;
		json_t *x;
		json_array_foreach(in, i, x)
			if ((rc = iterate_member(c, x, ptr, NULL, i, k, ud)))
				return rc;
		return 0;
	}
	if (json_is_object(in)) {
		const char *key;
		json_t *x;
		json_object_foreach(in, key, x)
			if ((rc = iterate_member(c, x, ptr, key, 0, k, ud)))
				return rc;
		return 0;
	}
	if (optional)
		return 0;
	return wmap__jn_err(c, "Cannot iterate over %s%s", wmap__jn_type_name(in),
			    json_is_null(in) ? "" : json_is_string(in) ? " (string)"
								       : "");
}

/* The result of indexing in with idx (jq's .[idx]); ptr of the result into *optr. */
int wmap__jn_index_value(ectx *c, json_t *in, const char *ptr, json_t *idx, json_t **out, char **optr)
{
	*optr = NULL;
	*out = NULL;
	if (json_is_null(in) && (json_is_string(idx) || json_is_number(idx) || json_is_null(idx))) {
		*out = json_null();
	} else if (json_is_object(in) && json_is_string(idx)) {
		*out = json_object_get(in, json_string_value(idx));
		if (ptr && !(*optr = wmap_pointer_join(ptr, json_string_value(idx))))
			return wmap__jn_oom(c);
		*out = *out ? json_incref(*out) : json_null();
		return 0;
	} else if (json_is_array(in) && json_is_number(idx)) {
		double d = wmap__jn_num(idx);
		long long i = (long long)floor(d);
		size_t n = json_array_size(in);
		if (i < 0)
			i += (long long)n;
		json_t *v = (i >= 0 && (size_t)i < n && d == floor(d)) ? json_array_get(in, (size_t)i) : NULL;
		if (ptr && i >= 0 && d == floor(d) && !(*optr = wmap_pointer_join_index(ptr, (size_t)i)))
			return wmap__jn_oom(c);
		*out = v ? json_incref(v) : json_null();
		return 0;
	} else if (json_is_array(in) && json_is_array(idx)) {
		/* indices of a sub-array, as jq's .[array] */
		json_t *res = json_array();
		size_t n = json_array_size(in), m = json_array_size(idx);
		for (size_t i = 0; res && m > 0 && i + m <= n; i++) {
			size_t j = 0;
			while (j < m && wmap__jn_compare(json_array_get(in, i + j), json_array_get(idx, j)) == 0)
				j++;
			if (j == m)
				json_array_append_new(res, json_integer((json_int_t)i));
		}
		*out = res;
	} else {
		char a[64];
		if (json_is_string(idx))
			return wmap__jn_err(c, "Cannot index %s with \"%s\"", wmap__jn_type_name(in), json_string_value(idx));
		wmap__jn_describe(a, sizeof(a), idx);
		return wmap__jn_err(c, "Cannot index %s with %s", wmap__jn_type_name(in), wmap__jn_type_name(idx));
	}
	return *out ? 0 : wmap__jn_oom(c);
}

/* ---- node evaluation ---- */

typedef struct pipe_ud {
	const node *next;
	const env *e;
	emit_fn k;
	void *ud;
} pipe_ud;

static int pipe_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	pipe_ud *p = ud;
	return wmap__jn_ev(c, p->next, v, ptr, p->e, p->k, p->ud);
}

/* Forwards outputs and remembers whether the downstream failed (guards for try and //). */
typedef struct guard {
	emit_fn k;
	void *ud;
	int downstream_rc;
	int emitted;
	int only_truthy;
} guard;

static int guard_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	guard *g = ud;
	if (g->only_truthy && !wmap__jn_truthy(v))
		return 0;
	g->emitted = 1;
	int rc = g->k(c, g->ud, v, ptr);
	if (rc)
		g->downstream_rc = rc;
	return rc;
}

static int index_emit(ectx *c, void *ud, json_t *idx, const char *ptr_unused)
{
	cont *x = ud;
	json_t *v;
	char *p;
	(void)ptr_unused;
	int rc = wmap__jn_index_value(c, x->in, x->ptr, idx, &v, &p);
	if (rc)
		return rc;
	rc = x->k(c, x->ud, v, p);
	json_decref(v);
	free(p);
	return rc;
}

typedef struct target_ud {
	const node *x;
	const env *e;
	emit_fn k;
	void *ud;
	json_t *root; /* the input of the whole postfix expression (index expressions read it) */
	const char *rootptr;
} target_ud;

static int target_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	target_ud *t = ud;
	if (t->x->k == N_ITER)
		return wmap__jn_iterate(c, v, ptr, 0, t->k, t->ud);
	cont iu = { NULL, v, ptr, NULL, t->k, t->ud };
	/* the index expression reads the original input, not the target */
	return wmap__jn_ev(c, t->x->b, t->root, NULL, t->e, index_emit, &iu);
}

typedef struct binop_ud {
	const node *x;
	json_t *in;
	const env *e;
	json_t *rhs;
	emit_fn k;
	void *ud;
} binop_ud;

static int binop_lhs(ectx *c, void *ud, json_t *lhs, const char *ptr)
{
	binop_ud *b = ud;
	json_t *res = NULL;
	int rc;
	(void)ptr;
	switch (b->x->op) {
	case T_EQ: res = json_boolean(wmap__jn_compare(lhs, b->rhs) == 0); break;
	case T_NE: res = json_boolean(wmap__jn_compare(lhs, b->rhs) != 0); break;
	case T_LT: res = json_boolean(wmap__jn_compare(lhs, b->rhs) < 0); break;
	case T_LE: res = json_boolean(wmap__jn_compare(lhs, b->rhs) <= 0); break;
	case T_GT: res = json_boolean(wmap__jn_compare(lhs, b->rhs) > 0); break;
	case T_GE: res = json_boolean(wmap__jn_compare(lhs, b->rhs) >= 0); break;
	default:
		if ((rc = wmap__jn_arith(c, b->x->op, lhs, b->rhs, &res)))
			return rc;
	}
	rc = b->k(c, b->ud, res, NULL);
	json_decref(res);
	return rc;
}

static int binop_rhs(ectx *c, void *ud, json_t *rhs, const char *ptr)
{
	binop_ud *b = ud;
	(void)ptr;
	b->rhs = rhs;
	/* jq runs the right operand in the outer loop */
	return wmap__jn_ev(c, b->x->a, b->in, NULL, b->e, binop_lhs, b);
}

static int logic_rhs(ectx *c, void *ud, json_t *v, const char *ptr)
{
	cont *l = ud;
	(void)ptr;
	return l->k(c, l->ud, json_boolean(wmap__jn_truthy(v)), NULL);
}

static int logic_lhs(ectx *c, void *ud, json_t *v, const char *ptr)
{
	cont *l = ud;
	(void)ptr;
	int t = wmap__jn_truthy(v);
	if (l->x->k == N_AND && !t)
		return l->k(c, l->ud, json_false(), NULL);
	if (l->x->k == N_OR && t)
		return l->k(c, l->ud, json_true(), NULL);
	return wmap__jn_ev(c, l->x->b, l->in, NULL, l->e, logic_rhs, l);
}

static int bind_emit(ectx *c, void *ud, json_t *v, const char *ptr_unused)
{
	cont *b = ud;
	env ne = { b->x->name, v, b->e };
	(void)ptr_unused;
	return wmap__jn_ev(c, b->x->b, b->in, b->ptr, &ne, b->k, b->ud);
}

static int if_emit(ectx *c, void *ud, json_t *cond, const char *ptr_unused)
{
	cont *f = ud;
	(void)ptr_unused;
	if (wmap__jn_truthy(cond))
		return wmap__jn_ev(c, f->x->b, f->in, f->ptr, f->e, f->k, f->ud);
	return wmap__jn_ev(c, f->x->c, f->in, f->ptr, f->e, f->k, f->ud);
}

/* Object construction: the cartesian product of every entry's keys and values. */
typedef struct obj_ud {
	const node *x;
	json_t *in;
	const env *e;
	size_t at;
	json_t *obj;
	json_t *key;
	emit_fn k;
	void *ud;
} obj_ud;

static int obj_step(ectx *c, obj_ud *o);

static int obj_value(ectx *c, void *ud, json_t *v, const char *ptr)
{
	obj_ud *o = ud;
	(void)ptr;
	json_t *saved = json_copy(o->obj);
	if (!saved || json_object_set(o->obj, json_string_value(o->key), v)) {
		json_decref(saved);
		return wmap__jn_oom(c);
	}
	o->at++;
	json_t *key = o->key;
	int rc = obj_step(c, o);
	o->key = key;
	o->at--;
	json_decref(o->obj);
	o->obj = saved;
	return rc;
}

static int obj_key(ectx *c, void *ud, json_t *k, const char *ptr)
{
	obj_ud *o = ud;
	(void)ptr;
	if (!json_is_string(k))
		return wmap__jn_err(c, "Object keys must be strings");
	o->key = k;
	return wmap__jn_ev(c, o->x->args[2 * o->at + 1], o->in, NULL, o->e, obj_value, o);
}

static int obj_step(ectx *c, obj_ud *o)
{
	if (o->at == o->x->n)
		return o->k(c, o->ud, o->obj, NULL);
	return wmap__jn_ev(c, o->x->args[2 * o->at], o->in, NULL, o->e, obj_key, o);
}

/* The plain-path subset: x a chain of .key accesses down to `.` (`.spec.replicas`) on
 * objects and nulls. *out gets the value (borrowed from in, or null) and *levels the keys;
 * 0 when x is anything else or a value on the way is neither, and the general evaluation
 * (which raises jq's error) must run. No continuation, reference or pointer per key. */
#define PLAIN_MAX_KEYS 16

static inline int plain_path(const node *x, json_t *in, json_t **out, int *levels)
{
	const node *keys[PLAIN_MAX_KEYS];
	int n = 0;
	if (!x->plain) /* marked when parsed (wmap__jn_mark_single) */
		return 0;
	if (x->k == N_INDEX && x->a->k == N_IDENTITY) { /* `.key`, the usual operand */
		json_t *v = in;
		if (json_is_object(in)) {
			if (!(v = json_object_getn(in, x->key, x->key_len)))
				v = json_null();
		} else if (!json_is_null(in)) {
			return 0;
		}
		*out = v;
		*levels = 1;
		return 1;
	}
	for (; x->k == N_INDEX; x = x->a)
		keys[n++] = x;
	json_t *v = in;
	for (int i = n - 1; i >= 0; i--) {
		if (json_is_object(v)) {
			v = json_object_getn(v, keys[i]->key, keys[i]->key_len);
			if (!v)
				v = json_null();
		} else if (!json_is_null(v)) {
			return 0;
		}
	}
	*out = v;
	*levels = n;
	return 1;
}

/* ---- single nodes: one output, evaluated straight to it ----
 *
 * A node with exactly one output on every input (a literal, a plain path, `a // b`, a
 * comparison or sum of such, `[...]`, `if` over such, min, length, ...) needs no generator:
 * its value is computed bottom-up and handed to the continuation once. The operands run in
 * the order the generator runs them, every node counts its step as wmap__jn_ev counts it,
 * and errors are raised by the same functions, so the outputs, errors and step budget are
 * those of the general evaluation; only the continuations and the pointer plumbing go
 * (values only: a single node is evaluated this way when no pointer is asked for). */

/* Builtins of arity 0 that emit exactly one value on every input, or raise an error. */
static const char *const single_builtins[] = { "not", "length", "min", "max", "type", "floor",
					       "ceil", "round", "sqrt", "fabs", "tojson", "tostring",
					       NULL };

/* Whether body (`[body]`) is a comma list of single nodes. */
static int single_list(const node *body)
{
	for (; body && body->k == N_COMMA; body = body->b)
		if (!body->a || !single_list(body->a))
			return 0;
	return body && body->single;
}

/* Whether body (`[body]` of a min or max) is a comma list of fast nodes. */
static int fast_list(const node *body)
{
	if (body->k == N_COMMA)
		return fast_list(body->a) && fast_list(body->b);
	return body->fast;
}

#define IS_SINGLE(n) ((n) && (n)->single) /* a missing operand (never in a parsed tree) is not */

void wmap__jn_mark_single(node *x)
{
	if (!x)
		return;
	wmap__jn_mark_single(x->a);
	wmap__jn_mark_single(x->b);
	wmap__jn_mark_single(x->c);
	size_t nargs = x->k == N_OBJECT ? 2 * x->n : x->n;
	int args_single = 1;
	for (size_t i = 0; i < nargs; i++) {
		wmap__jn_mark_single(x->args[i]);
		args_single &= IS_SINGLE(x->args[i]);
	}
	if (x->k == N_IDENTITY)
		x->plain = 1; /* `.`: the empty path */
	if (x->k == N_INDEX && x->a && x->b && x->b->k == N_LITERAL && json_is_string(x->b->lit)) {
		x->key = json_string_value(x->b->lit);
		x->key_len = strlen(x->key); /* as json_object_get reads it */
		int depth = 1;
		const node *below = x->a;
		for (; below->k == N_INDEX && below->plain; below = below->a)
			depth++;
		x->plain = depth <= PLAIN_MAX_KEYS && below->k == N_IDENTITY;
	}
	if (x->k == N_PIPE && x->a && x->b && x->a->k == N_ARRAY && x->a->a && x->b->k == N_CALL &&
	    x->b->n == 0 && (strcmp(x->b->name, "min") == 0 || strcmp(x->b->name, "max") == 0) &&
	    single_list(x->a->a))
		x->best = x->b->name[1] == 'a' ? 2 : 1;
	switch (x->k) {
	case N_IDENTITY:
	case N_LITERAL:
	case N_VAR:
	case N_ARRAY:
		x->single = x->k != N_ARRAY || x->a;
		break;
	case N_INDEX:
	case N_PIPE:
	case N_ALT:
	case N_AND:
	case N_OR:
	case N_BINOP:
	case N_BIND:
		x->single = IS_SINGLE(x->a) && IS_SINGLE(x->b);
		break;
	case N_NEG:
		x->single = IS_SINGLE(x->a);
		break;
	case N_IF:
		x->single = IS_SINGLE(x->a) && IS_SINGLE(x->b) && IS_SINGLE(x->c);
		break;
	case N_OBJECT:
		x->single = (unsigned char)args_single;
		break;
	case N_CALL:
		x->single = 0;
		for (const char *const *b = single_builtins; x->n == 0 && *b; b++)
			if (strcmp(*b, x->name) == 0)
				x->single = 1;
		break;
	default:
		x->single = 0;
	}
	x->fast = 0;
	x->dot_key = x->alt_leaf = 0;
	if (!x->single)
		return;
	switch (x->k) {
	case N_IDENTITY:
	case N_LITERAL:
	case N_VAR:
		x->fast = 1;
		break;
	case N_INDEX:
		x->fast = x->plain;
		break;
	case N_ALT:
	case N_BIND:
		x->fast = x->a->fast && x->b->fast;
		break;
	case N_BINOP:
		x->fast = x->a->fast && x->b->fast && x->op != T_SLASH && x->op != T_PERCENT;
		break;
	case N_IF:
		x->fast = x->a->fast && x->b->fast && x->c->fast;
		break;
	case N_PIPE:
		if (x->best) {
			x->fast = (unsigned char)fast_list(x->a->a);
		} else {
			x->fast = x->a->fast && x->b->fast;
		}
		break;
	default:
		break;
	}
	x->dot_key = x->fast && x->k == N_INDEX && x->a->k == N_IDENTITY;
	x->alt_leaf = x->fast && x->k == N_ALT && x->a->k == N_INDEX &&
		      (x->b->k == N_LITERAL || x->b->k == N_VAR);
}

#define STEP(c)                                                                                            \
	do {                                                                                               \
		if (++(c)->steps > JN_MAX_STEPS)                                                           \
			return wmap__jn_err((c), "the expression took more than %lu steps", JN_MAX_STEPS); \
	} while (0)

static int single(ectx *c, const node *x, json_t *in, const env *e, json_t **out);

/* a + b, a - b or a * b of two integers whose result wmap__jn_arith would compute exactly
 * in doubles and give as an integer (|a|, |b| and the result below 9e15 < 2^53): the same
 * value without the doubles. 0 when it does not apply (or out of memory: the general
 * arithmetic then says so). */
static int int_value(tok_kind op, const json_t *a, const json_t *b, long long *out)
{
	const json_int_t lim = 9000000000000000LL;
	if (!json_is_integer(a) || !json_is_integer(b) || (op != T_PLUS && op != T_MINUS && op != T_STAR))
		return 0;
	long long x = json_integer_value(a), y = json_integer_value(b), r;
	if (x <= -lim || x >= lim || y <= -lim || y >= lim)
		return 0;
	if (op == T_STAR ? __builtin_mul_overflow(x, y, &r) : op == T_PLUS ? __builtin_add_overflow(x, y, &r)
									   : __builtin_sub_overflow(x, y, &r))
		return 0;
	if (r <= -lim || r >= lim)
		return 0;
	*out = r;
	return 1;
}

static int int_arith(tok_kind op, const json_t *a, const json_t *b, json_t **out)
{
	long long r;
	return int_value(op, a, b, &r) && (*out = json_integer(r)) != NULL;
}

static int one_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	(void)c;
	(void)ptr;
	*(json_t **)ud = json_incref(v);
	return 0;
}

/* Appends every output of x on in to arr: `[a, b]`'s body, straight where it is single. */
static int list(ectx *c, const node *x, json_t *in, const env *e, json_t *arr)
{
	if (x->k == N_COMMA) {
		STEP(c);
		int rc = list(c, x->a, in, e, arr);
		return rc ? rc : list(c, x->b, in, e, arr);
	}
	if (!x->single) {
		collect col = { arr };
		return wmap__jn_ev(c, x, in, NULL, e, collect_emit, &col);
	}
	json_t *v;
	int rc = single(c, x, in, e, &v);
	if (rc)
		return rc;
	rc = json_array_append_new(arr, v) ? wmap__jn_oom(c) : 0;
	return rc;
}

/* `[body] | min` and `| max`: the best of body's outputs, with no array between. */
static int best_of(ectx *c, const node *body, int want_max, json_t *in, const env *e, json_t **best)
{
	if (body->k == N_COMMA) {
		STEP(c);
		int rc = best_of(c, body->a, want_max, in, e, best);
		return rc ? rc : best_of(c, body->b, want_max, in, e, best);
	}
	json_t *v;
	int rc = single(c, body, in, e, &v);
	if (rc)
		return rc;
	int r = *best ? wmap__jn_compare(v, *best) : 0;
	if (!*best || (want_max ? r >= 0 : r < 0)) {
		json_decref(*best);
		*best = v;
	} else {
		json_decref(v);
	}
	return 0;
}

static int single(ectx *c, const node *x, json_t *in, const env *e, json_t **out)
{
	json_t *a = NULL, *b = NULL;
	int rc;

	*out = NULL;
	STEP(c);
	switch (x->k) {
	case N_IDENTITY:
		*out = json_incref(in);
		return 0;
	case N_LITERAL:
		*out = json_incref(x->lit);
		return 0;
	case N_VAR:
		for (const env *v = e; v; v = v->next)
			if (strcmp(v->name, x->name) == 0) {
				*out = json_incref(v->v);
				return 0;
			}
		return wmap__jn_err(c, "$%s is not defined", x->name);
	case N_INDEX: {
		json_t *v;
		int levels;
		char *p;
		if (plain_path(x, in, &v, &levels)) {
			c->steps += 2 * (unsigned long)levels;
			if (c->steps > JN_MAX_STEPS)
				return wmap__jn_err(c, "the expression took more than %lu steps", JN_MAX_STEPS);
			*out = json_incref(v);
			return 0;
		}
		if ((rc = single(c, x->a, in, e, &a)) || (rc = single(c, x->b, in, e, &b)))
			break;
		rc = wmap__jn_index_value(c, a, NULL, b, out, &p);
		break;
	}
	case N_PIPE:
		if (x->best) {
			/* the pipe's, the array's and the call's steps, then the body's */
			STEP(c);
			c->steps++;
			if ((rc = best_of(c, x->a->a, x->best == 2, in, e, out)))
				return rc;
			if (!*out)
				*out = json_null();
			return 0;
		}
		if ((rc = single(c, x->a, in, e, &a)))
			break;
		rc = single(c, x->b, a, e, out);
		break;
	case N_ALT: {
		json_t *v;
		int levels;
		if (plain_path(x->a, in, &v, &levels)) {
			c->steps += 1 + 2 * (unsigned long)levels;
			if (c->steps > JN_MAX_STEPS)
				return wmap__jn_err(c, "the expression took more than %lu steps", JN_MAX_STEPS);
			if (wmap__jn_truthy(v)) {
				*out = json_incref(v);
				return 0;
			}
			return single(c, x->b, in, e, out);
		}
		if ((rc = single(c, x->a, in, e, &a)))
			break;
		if (wmap__jn_truthy(a)) {
			*out = a;
			return 0;
		}
		json_decref(a);
		return single(c, x->b, in, e, out);
	}
	case N_AND:
	case N_OR: {
		if ((rc = single(c, x->a, in, e, &a)))
			break;
		int t = wmap__jn_truthy(a);
		json_decref(a);
		a = NULL;
		if (x->k == N_AND && !t) {
			*out = json_false();
			return 0;
		}
		if (x->k == N_OR && t) {
			*out = json_true();
			return 0;
		}
		if ((rc = single(c, x->b, in, e, &b)))
			break;
		*out = json_boolean(wmap__jn_truthy(b));
		break;
	}
	case N_BINOP:
		/* jq runs the right operand first */
		if ((rc = single(c, x->b, in, e, &b)) || (rc = single(c, x->a, in, e, &a)))
			break;
		switch (x->op) {
		case T_EQ: *out = json_boolean(wmap__jn_compare(a, b) == 0); break;
		case T_NE: *out = json_boolean(wmap__jn_compare(a, b) != 0); break;
		case T_LT: *out = json_boolean(wmap__jn_compare(a, b) < 0); break;
		case T_LE: *out = json_boolean(wmap__jn_compare(a, b) <= 0); break;
		case T_GT: *out = json_boolean(wmap__jn_compare(a, b) > 0); break;
		case T_GE: *out = json_boolean(wmap__jn_compare(a, b) >= 0); break;
		default:
			if (!int_arith(x->op, a, b, out))
				rc = wmap__jn_arith(c, x->op, a, b, out);
		}
		break;
	case N_NEG:
		if ((rc = single(c, x->a, in, e, &a)))
			break;
		if (!json_is_number(a))
			rc = wmap__jn_err(c, "%s cannot be negated", wmap__jn_type_name(a));
		else if (!(*out = wmap__jn_mknum(-wmap__jn_num(a))))
			rc = wmap__jn_oom(c);
		break;
	case N_ARRAY:
		if (!(*out = json_array()))
			return wmap__jn_oom(c);
		rc = list(c, x->a, in, e, *out);
		break;
	case N_OBJECT:
		if (!(*out = json_object()))
			return wmap__jn_oom(c);
		rc = 0;
		for (size_t i = 0; !rc && i < x->n; i++) {
			json_t *v = NULL;
			if ((rc = single(c, x->args[2 * i], in, e, &a)))
				break;
			if (!json_is_string(a))
				rc = wmap__jn_err(c, "Object keys must be strings");
			else if (!(rc = single(c, x->args[2 * i + 1], in, e, &v)) &&
				 json_object_set_new(*out, json_string_value(a), v))
				rc = wmap__jn_oom(c);
			json_decref(a);
			a = NULL;
		}
		break;
	case N_BIND: {
		if ((rc = single(c, x->a, in, e, &a)))
			break;
		env ne = { x->name, a, e };
		rc = single(c, x->b, in, &ne, out);
		break;
	}
	case N_IF:
		if ((rc = single(c, x->a, in, e, &a)))
			break;
		rc = single(c, wmap__jn_truthy(a) ? x->b : x->c, in, e, out);
		break;
	case N_CALL:
		rc = wmap__jn_call(c, x, in, NULL, e, one_emit, out);
		break;
	default:
		rc = wmap__jn_err(c, "unknown node");
	}
	json_decref(a);
	json_decref(b);
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

/* An output of single_num: a jansson value (v), or a plain integer (v NULL, is_num). */
typedef struct num_out {
	json_t *v;
	int is_num;
	long long n;
} num_out;

static int single_num(ectx *c, const node *x, json_t *in, const env *e, num_out *o);

/* wmap__jn_compare of two outputs, either of them a plain integer: numbers compare as the
 * doubles wmap__jn_num makes of them, other kinds by rank. */
static int num_compare(const num_out *a, const num_out *b)
{
	if (!a->is_num && !b->is_num)
		return wmap__jn_compare(a->v, b->v);
	int ra = a->is_num ? 3 : kind_rank(a->v), rb = b->is_num ? 3 : kind_rank(b->v);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	double x = a->is_num ? (double)a->n : wmap__jn_num(a->v);
	double y = b->is_num ? (double)b->n : wmap__jn_num(b->v);
	return x < y ? -1 : x > y;
}

/* best_of, its outputs by single_num. */
static int best_num(ectx *c, const node *body, int want_max, json_t *in, const env *e, num_out *best,
		    int *have)
{
	if (body->k == N_COMMA) {
		STEP(c);
		int rc = best_num(c, body->a, want_max, in, e, best, have);
		return rc ? rc : best_num(c, body->b, want_max, in, e, best, have);
	}
	num_out v;
	int rc = single_num(c, body, in, e, &v);
	if (rc)
		return rc;
	int r = *have ? num_compare(&v, best) : 0;
	if (!*have || (want_max ? r >= 0 : r < 0)) {
		json_decref(best->v);
		*best = v;
		*have = 1;
	} else {
		json_decref(v.v);
	}
	return 0;
}

/* single's output, where an integer +, -, * (so an if's branch, or [..] | min/max of them)
 * that single would make a jansson integer of comes as a plain number: the same steps,
 * operand order, value and errors. */
static int single_num(ectx *c, const node *x, json_t *in, const env *e, num_out *o)
{
	json_t *a = NULL, *b = NULL;
	int rc;

	o->v = NULL;
	o->is_num = 0;
	switch (x->k) {
	case N_BINOP:
		if (x->op != T_PLUS && x->op != T_MINUS && x->op != T_STAR)
			break;
		STEP(c);
		/* jq runs the right operand first */
		if (!(rc = single(c, x->b, in, e, &b)) && !(rc = single(c, x->a, in, e, &a))) {
			if (int_value(x->op, a, b, &o->n))
				o->is_num = 1;
			else
				rc = wmap__jn_arith(c, x->op, a, b, &o->v);
		}
		json_decref(a);
		json_decref(b);
		if (rc) {
			json_decref(o->v);
			o->v = NULL;
		}
		return rc;
	case N_IF: {
		STEP(c);
		if ((rc = single(c, x->a, in, e, &a)))
			return rc;
		int t = wmap__jn_truthy(a);
		json_decref(a);
		return single_num(c, t ? x->b : x->c, in, e, o);
	}
	case N_PIPE: {
		if (!x->best)
			break;
		/* single's step, the pipe's, the array's and the call's, then the body's */
		STEP(c);
		STEP(c);
		c->steps++;
		int have = 0;
		if ((rc = best_num(c, x->a->a, x->best == 2, in, e, o, &have))) {
			json_decref(o->v);
			o->v = NULL;
			o->is_num = 0;
			return rc;
		}
		if (!have)
			o->v = json_null();
		return 0;
	}
	default:
		break;
	}
	return single(c, x, in, e, &o->v);
}

/* ---- fast nodes: the usual case of a single node, with borrowed values ----
 *
 * A fast node (marked when parsed) is evaluated with no reference taken, no value made and
 * no error raised: its value is borrowed from the input, the tree's literals or jansson's
 * true/false, or is a plain integer. Anything else on the way (a path through a value that
 * is neither an object nor null, arithmetic other than on integers, an unbound variable, a
 * comparison of objects, the step budget reached) gives up (FAST_BAIL) with nothing done
 * but steps counted: the caller puts the step count back and runs the general single
 * evaluation, which gives the same value or raises the error. The steps counted and the
 * operands' order are single's. */
#define FAST_BAIL 2

static inline int fast_truthy(const num_out *v)
{
	return v->is_num || wmap__jn_truthy(v->v);
}

/* The integer of v (a plain one or a jansson integer) within int_value's bounds. */
static inline int fast_int(const num_out *v, long long *n)
{
	const long long lim = 9000000000000000LL;
	if (v->is_num)
		*n = v->n;
	else if (json_is_integer(v->v))
		*n = json_integer_value(v->v);
	else
		return 0;
	return *n > -lim && *n < lim;
}

/* Whether v compares without an allocation (objects compare by sorted keys, arrays may
 * hold objects): others are left to the general evaluation. */
static inline int fast_plain_cmp(const num_out *v)
{
	return v->is_num || (!json_is_object(v->v) && !json_is_array(v->v));
}

/* num_compare of two fast values (neither an object nor an array): kinds by rank, numbers as
 * the doubles wmap__jn_num makes of them, strings by wmap__jn_compare. */
static inline int fast_compare(const num_out *a, const num_out *b)
{
	int ra = a->is_num ? 3 : kind_rank(a->v), rb = b->is_num ? 3 : kind_rank(b->v);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (ra == 4)
		return wmap__jn_compare(a->v, b->v);
	if (ra != 3)
		return 0; /* null, false or true: one value each */
	double x = a->is_num ? (double)a->n : wmap__jn_num(a->v);
	double y = b->is_num ? (double)b->n : wmap__jn_num(b->v);
	return x < y ? -1 : x > y;
}

static __attribute__((noinline)) int fast(ectx *c, const node *x, json_t *in, const env *e, num_out *o);

/* A plain path's value (x a fast N_INDEX), with its steps (1 and 2 per key). */
static inline __attribute__((always_inline)) int fast_path(ectx *c, const node *x, json_t *in, json_t **v)
{
	int levels;
	if (x->dot_key && json_is_object(in)) { /* `.key`, the usual one */
		c->steps += 3;
		/* a key the memo keeps (on the element: wmap__jn_share_keys) */
		json_t **cell = x->slot && c->row ? &c->row[x->slot - 1] : NULL;
		if (cell && *cell) {
			*v = *cell;
			return 0;
		}
		if (!(*v = json_object_getn(in, x->key, x->key_len)))
			*v = json_null();
		if (cell)
			*cell = *v;
		return 0;
	}
	if (!plain_path(x, in, v, &levels))
		return FAST_BAIL;
	c->steps += 1 + 2 * (unsigned long)levels;
	return 0;
}

static inline int fast_var(const node *x, const env *e, json_t **v)
{
	for (; e; e = e->next)
		if (strcmp(e->name, x->name) == 0) {
			*v = e->v;
			return 0;
		}
	return FAST_BAIL; /* the general evaluation raises the error */
}

/* fast() of an operand, its usual leaves read in place: a literal, `.`, a $var, a plain
 * path, and `path // literal` or `path // $var` (one lookup with its default). */
static inline __attribute__((always_inline)) int sub(ectx *c, const node *x, json_t *in, const env *e,
						     num_out *o)
{
	o->is_num = 0;
	switch (x->k) {
	case N_LITERAL:
		c->steps++;
		o->v = x->lit;
		return 0;
	case N_IDENTITY:
		c->steps++;
		o->v = in;
		return 0;
	case N_VAR:
		c->steps++;
		return fast_var(x, e, &o->v);
	case N_INDEX:
		return fast_path(c, x, in, &o->v);
	case N_ALT:
		if (!x->alt_leaf)
			break;
		c->steps++;
		if (fast_path(c, x->a, in, &o->v))
			return FAST_BAIL;
		if (wmap__jn_truthy(o->v))
			return 0;
		c->steps++;
		if (x->b->k == N_LITERAL) {
			o->v = x->b->lit;
			return 0;
		}
		return fast_var(x->b, e, &o->v);
	default:
		break;
	}
	return fast(c, x, in, e, o);
}

/* [body] | min or max: best_num's choice among body's outputs. */
static int fast_best(ectx *c, const node *body, int want_max, json_t *in, const env *e, num_out *best,
		     int *have)
{
	if (body->k == N_COMMA) {
		c->steps++;
		int rc = fast_best(c, body->a, want_max, in, e, best, have);
		return rc ? rc : fast_best(c, body->b, want_max, in, e, best, have);
	}
	num_out v;
	if (sub(c, body, in, e, &v))
		return FAST_BAIL;
	if (!fast_plain_cmp(&v))
		return FAST_BAIL;
	if (*have) {
		int r = fast_compare(&v, best);
		if (!(want_max ? r >= 0 : r < 0))
			return 0;
	}
	*best = v;
	*have = 1;
	return 0;
}

static int fast(ectx *c, const node *x, json_t *in, const env *e, num_out *o)
{
	num_out a, b;
	o->is_num = 0;
	c->steps++;
	switch (x->k) {
	case N_IDENTITY:
		o->v = in;
		return 0;
	case N_LITERAL:
		o->v = x->lit;
		return 0;
	case N_VAR:
		for (const env *v = e; v; v = v->next)
			if (strcmp(v->name, x->name) == 0) {
				o->v = v->v;
				return 0;
			}
		return FAST_BAIL;
	case N_INDEX: {
		int levels;
		if (!plain_path(x, in, &o->v, &levels))
			return FAST_BAIL;
		c->steps += 2 * (unsigned long)levels;
		return 0;
	}
	case N_ALT:
		if (sub(c, x->a, in, e, o))
			return FAST_BAIL;
		return fast_truthy(o) ? 0 : sub(c, x->b, in, e, o);
	case N_BINOP: {
		/* jq runs the right operand first */
		if (sub(c, x->b, in, e, &b) || sub(c, x->a, in, e, &a))
			return FAST_BAIL;
		if (x->op == T_PLUS || x->op == T_MINUS || x->op == T_STAR) {
			long long p, q, r;
			if (!fast_int(&a, &p) || !fast_int(&b, &q))
				return FAST_BAIL;
			if (x->op == T_STAR   ? __builtin_mul_overflow(p, q, &r)
			    : x->op == T_PLUS ? __builtin_add_overflow(p, q, &r)
					      : __builtin_sub_overflow(p, q, &r))
				return FAST_BAIL;
			o->is_num = 1;
			o->n = r;
			o->v = NULL;
			return fast_int(o, &r) ? 0 : FAST_BAIL;
		}
		if (!fast_plain_cmp(&a) || !fast_plain_cmp(&b))
			return FAST_BAIL;
		int r = fast_compare(&a, &b), t;
		switch (x->op) {
		case T_EQ: t = r == 0; break;
		case T_NE: t = r != 0; break;
		case T_LT: t = r < 0; break;
		case T_LE: t = r <= 0; break;
		case T_GT: t = r > 0; break;
		default: t = r >= 0; break;
		}
		o->v = t ? json_true() : json_false();
		return 0;
	}
	case N_IF:
		if (sub(c, x->a, in, e, &a))
			return FAST_BAIL;
		return sub(c, fast_truthy(&a) ? x->b : x->c, in, e, o);
	case N_BIND: {
		if (sub(c, x->a, in, e, &a) || a.is_num)
			return FAST_BAIL;
		env ne = { x->name, a.v, e };
		return sub(c, x->b, in, &ne, o);
	}
	case N_PIPE: {
		if (x->best) {
			/* the pipe's step (above), the array's and the call's, then the body's */
			c->steps += 2;
			int have = 0;
			if (fast_best(c, x->a->a, x->best == 2, in, e, o, &have))
				return FAST_BAIL;
			if (!have)
				o->v = json_null();
			return 0;
		}
		if (sub(c, x->a, in, e, &a) || a.is_num)
			return FAST_BAIL;
		return sub(c, x->b, a.v, e, o);
	}
	default:
		return FAST_BAIL;
	}
}

static int results_emit(ectx *c, void *ud, json_t *v, const char *ptr);
static inline __attribute__((always_inline)) int results_num(ectx *c, void *ud, long long n);
static int results_reserve(void *ud, size_t n);

/* x (fast) on in, its output to k: 0, an error of k, or FAST_BAIL (the steps put back). */
static inline __attribute__((always_inline)) int fast_emit(ectx *c, const node *x, json_t *in, const env *e,
							   emit_fn k, void *ud)
{
	unsigned long steps = c->steps;
	num_out o;
	if (sub(c, x, in, e, &o) || c->steps > JN_MAX_STEPS) {
		c->steps = steps;
		return FAST_BAIL;
	}
	if (!o.is_num)
		return k(c, ud, o.v, NULL);
	if (c->numbers && k == results_emit)
		return results_num(c, ud, o.n);
	json_t *v = json_integer(o.n);
	if (!v) {
		c->steps = steps; /* the general evaluation meets (and reports) the same failure */
		return FAST_BAIL;
	}
	int rc = k(c, ud, v, NULL);
	json_decref(v);
	return rc;
}

/* ---- shared reads: the members several expressions read on the same element ---- */

#define MEMO_MAX_READS 32 /* the element reads one expression's body is searched for */
#define MEMO_MAX_SLOTS 16

static void element_reads(node *x, node **out, size_t *n);

/* The reads of each element of a comma list (fast_best's body). */
static void list_reads(node *l, node **out, size_t *n)
{
	if (l->k == N_COMMA) {
		list_reads(l->a, out, n);
		list_reads(l->b, out, n);
	} else {
		element_reads(l, out, n);
	}
}

/* The `.key` reads on x's input that the fast evaluation makes: x's operands run on that
 * input, except a pipe's right side (it reads the left side's value). */
static void element_reads(node *x, node **out, size_t *n)
{
	if (!x || !x->fast || *n >= MEMO_MAX_READS)
		return;
	switch (x->k) {
	case N_INDEX:
		if (x->a->k == N_IDENTITY && x->key)
			out[(*n)++] = x;
		return;
	case N_PIPE:
		if (!x->best) {
			element_reads(x->a, out, n);
			return;
		}
		list_reads(x->a->a, out, n); /* [a, b, ...] | min or max: each on the input */
		return;
	case N_IF:
		element_reads(x->c, out, n);
		/* fall through */
	case N_ALT:
	case N_BINOP:
	case N_BIND:
		element_reads(x->a, out, n);
		element_reads(x->b, out, n);
		return;
	default:
		return;
	}
}

/* The body of root when root is `P[]? | body` or `P[] | body` over a plain path P (what
 * fast_iter runs on each element), else NULL. */
static node *iter_body(node *root)
{
	if (root->k != N_PIPE || !root->b->fast)
		return NULL;
	const node *it = root->a;
	if (it->k == N_TRY && !it->b)
		it = it->a;
	return it->k == N_ITER && it->a->plain ? root->b : NULL;
}

void wmap__jn_share_keys(wmap_jn *const *exprs, size_t n)
{
	node *reads[8][MEMO_MAX_READS];
	size_t n_reads[8] = { 0 };
	if (n > 8)
		n = 8;
	for (size_t i = 0; i < n; i++) {
		node *body = exprs[i] ? iter_body(exprs[i]->root) : NULL;
		if (body)
			element_reads(body, reads[i], &n_reads[i]);
	}
	/* a slot for every key read twice or more between them, in the order first read */
	const node *keyed[MEMO_MAX_SLOTS];
	unsigned n_slots = 0;
	for (size_t i = 0; i < n; i++) {
		for (size_t r = 0; r < n_reads[i]; r++) {
			node *x = reads[i][r];
			unsigned slot = 0, count = 0;
			for (unsigned s = 0; s < n_slots && !slot; s++)
				if (keyed[s]->key_len == x->key_len && memcmp(keyed[s]->key, x->key, x->key_len) == 0)
					slot = s + 1;
			for (size_t j = 0; !slot && j < n; j++)
				for (size_t q = 0; q < n_reads[j]; q++)
					count += reads[j][q]->key_len == x->key_len &&
						 memcmp(reads[j][q]->key, x->key, x->key_len) == 0;
			if (!slot && count >= 2 && n_slots < MEMO_MAX_SLOTS) {
				keyed[n_slots++] = x;
				slot = n_slots;
			}
			x->slot = (unsigned char)slot;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int any = 0;
		for (size_t r = 0; r < n_reads[i]; r++)
			any |= reads[i][r]->slot != 0;
		if (any) {
			exprs[i]->root->memo_root = 1;
			exprs[i]->n_slots = n_slots;
		}
	}
}

/* The memo's rows for the elements of arr: made on first use, NULL when the memo serves
 * another array, has another layout or could not be made (the run goes without). */
static json_t **memo_cells(ectx *c, const json_t *arr)
{
	wmap_jn_memo *m = c->memo;
	if (!m || !c->n_slots || m->failed)
		return NULL;
	if (m->array)
		return m->array == arr && m->n_slots == c->n_slots ? m->cells : NULL;
	size_t n = json_array_size(arr);
	if (n == 0)
		return NULL;
	size_t bytes = n * c->n_slots * sizeof(json_t *);
	if (!(m->cells = wmap_arena_alloc(bytes))) {
		m->failed = 1;
		return NULL;
	}
	memset(m->cells, 0, bytes);
	m->array = arr;
	m->n_rows = n;
	m->n_slots = c->n_slots;
	return m->cells;
}

void wmap__jn_memo_release(wmap_jn_memo *m)
{
	wmap_arena_release(m->cells);
	*m = (wmap_jn_memo){ 0 };
}

/* `.path[]? | body` or `.path[] | body`, body fast, over an array (the scale expressions'
 * `.spec.workerGroupSpecs[]? | ...`): each element straight to body's evaluation, with no
 * continuation between. The steps the general evaluation counts before the first element
 * (the pipe's, the try's, the iteration's, then the path's: 1 and 2 per key) are counted
 * at once; FAST_BAIL with nothing counted when the path does not lead to an array (the
 * general evaluation iterates the object or raises the error). */
static int fast_iter(ectx *c, const node *x, json_t *in, const env *e, emit_fn k, void *ud)
{
	const node *it = x->a;
	unsigned long pre = 2;
	if (it->k == N_TRY && !it->b) {
		it = it->a;
		pre++;
	}
	json_t *arr, *v;
	int levels;
	if (it->k != N_ITER || !it->a->plain || !plain_path(it->a, in, &arr, &levels) || !json_is_array(arr))
		return FAST_BAIL;
	pre += 1 + 2 * (unsigned long)levels;
	if (c->steps + pre > JN_MAX_STEPS)
		return FAST_BAIL;
	c->steps += pre;
	/* each element gives one output: the results' room made at once */
	if (k == results_emit && results_reserve(ud, json_array_size(arr)))
		return wmap__jn_oom(c);
	json_t **cells = x->memo_root ? memo_cells(c, arr) : NULL;
	size_t i;
	json_array_foreach(arr, i, v) {
		c->row = cells ? cells + i * c->n_slots : NULL;
		int rc = fast_emit(c, x->b, v, e, k, ud);
		c->row = NULL;       /* the general evaluation reads no memo */
		if (rc == FAST_BAIL) /* the general evaluation, as wmap__jn_ev would run it */
			rc = wmap__jn_ev(c, x->b, v, NULL, e, k, ud);
		if (rc)
			return rc;
	}
	return 0;
}

int wmap__jn_ev(ectx *c, const node *x, json_t *in, const char *ptr, const env *e, emit_fn k, void *ud)
{
	if (x->single && !ptr) {
		json_t *v;
		int rc;
		if (x->fast && (rc = fast_emit(c, x, in, e, k, ud)) != FAST_BAIL)
			return rc;
		if (c->numbers && k == results_emit) {
			num_out o;
			if ((rc = single_num(c, x, in, e, &o)))
				return rc;
			if (o.is_num)
				return results_num(c, ud, o.n);
			v = o.v;
		} else if ((rc = single(c, x, in, e, &v))) {
			return rc;
		}
		rc = k(c, ud, v, NULL);
		json_decref(v);
		return rc;
	}
	if (x->k == N_PIPE && !ptr && x->b->fast) {
		int rc = fast_iter(c, x, in, e, k, ud);
		if (rc != FAST_BAIL)
			return rc;
	}
	if (++c->steps > JN_MAX_STEPS)
		return wmap__jn_err(c, "the expression took more than %lu steps", JN_MAX_STEPS);
	switch (x->k) {
	case N_IDENTITY:
		return k(c, ud, in, ptr);
	case N_LITERAL:
		return k(c, ud, x->lit, NULL);
	case N_INDEX: {
		json_t *v;
		int levels;
		if (!ptr && plain_path(x, in, &v, &levels)) {
			/* The steps the general evaluation counts: each key's node and literal,
			 * and the `.` at the bottom (this node's own is counted above). */
			c->steps += 2 * (unsigned long)levels;
			if (c->steps > JN_MAX_STEPS)
				return wmap__jn_err(c, "the expression took more than %lu steps",
						    JN_MAX_STEPS);
			return k(c, ud, v, NULL);
		}
	}
		/* fall through */
	case N_ITER: {
		target_ud t = { x, e, k, ud, in, ptr };
		return wmap__jn_ev(c, x->a, in, ptr, e, target_emit, &t);
	}
	case N_PIPE: {
		pipe_ud p = { x->b, e, k, ud };
		return wmap__jn_ev(c, x->a, in, ptr, e, pipe_emit, &p);
	}
	case N_COMMA: {
		int rc = wmap__jn_ev(c, x->a, in, ptr, e, k, ud);
		return rc ? rc : wmap__jn_ev(c, x->b, in, ptr, e, k, ud);
	}
	case N_ALT: {
		/* `a // b`: a's truthy outputs; b when there are none. libjq 1.6 lets an error
		 * in a through (later jq versions swallow it): so do we. */
		json_t *v;
		int levels;
		if (!ptr && plain_path(x->a, in, &v, &levels)) {
			/* `.replicas // 1`: a's one output read at once (its steps counted as the
			 * general evaluation counts them) */
			c->steps += 1 + 2 * (unsigned long)levels;
			if (c->steps > JN_MAX_STEPS)
				return wmap__jn_err(c, "the expression took more than %lu steps",
						    JN_MAX_STEPS);
			if (wmap__jn_truthy(v))
				return k(c, ud, v, NULL);
			return wmap__jn_ev(c, x->b, in, ptr, e, k, ud);
		}
		guard g = { k, ud, 0, 0, 1 };
		int rc = wmap__jn_ev(c, x->a, in, ptr, e, guard_emit, &g);
		if (rc || g.emitted)
			return rc;
		return wmap__jn_ev(c, x->b, in, ptr, e, k, ud);
	}
	case N_AND:
	case N_OR: {
		cont l = { x, in, NULL, e, k, ud };
		return wmap__jn_ev(c, x->a, in, NULL, e, logic_lhs, &l);
	}
	case N_BINOP: {
		binop_ud b = { x, in, e, NULL, k, ud };
		return wmap__jn_ev(c, x->b, in, NULL, e, binop_rhs, &b);
	}
	case N_NEG: {
		json_t *all;
		int rc = wmap__jn_ev_all(c, x->a, in, e, &all);
		size_t i;
		json_t *v;
		json_array_foreach(all, i, v) {
			if (!rc && !json_is_number(v))
				rc = wmap__jn_err(c, "%s cannot be negated", wmap__jn_type_name(v));
			json_t *n = rc ? NULL : wmap__jn_mknum(-wmap__jn_num(v));
			if (!rc)
				rc = n ? k(c, ud, n, NULL) : wmap__jn_oom(c);
			json_decref(n);
		}
		json_decref(rc && !all ? NULL : all);
		return rc;
	}
	case N_ARRAY: {
		json_t *all;
		int rc = wmap__jn_ev_all(c, x->a, in, e, &all);
		if (rc)
			return rc;
		rc = k(c, ud, all, NULL);
		json_decref(all);
		return rc;
	}
	case N_OBJECT: {
		obj_ud o = { x, in, e, 0, json_object(), NULL, k, ud };
		if (!o.obj)
			return wmap__jn_oom(c);
		int rc = obj_step(c, &o);
		json_decref(o.obj);
		return rc;
	}
	case N_VAR:
		for (const env *v = e; v; v = v->next)
			if (strcmp(v->name, x->name) == 0)
				return k(c, ud, v->v, NULL);
		return wmap__jn_err(c, "$%s is not defined", x->name);
	case N_BIND: {
		cont b = { x, in, ptr, e, k, ud };
		return wmap__jn_ev(c, x->a, in, NULL, e, bind_emit, &b);
	}
	case N_IF: {
		cont f = { x, in, ptr, e, k, ud };
		return wmap__jn_ev(c, x->a, in, NULL, e, if_emit, &f);
	}
	case N_TRY: {
		guard g = { k, ud, 0, 0, 0 };
		int rc = wmap__jn_ev(c, x->a, in, ptr, e, guard_emit, &g);
		if (!rc || g.downstream_rc || rc == JN_STOP || rc == WMAP_ENOMEM)
			return rc;
		if (!x->b) {
			json_decref(c->thrown); /* swallowed */
			c->thrown = NULL;
			return 0;
		}
		/* catch sees the value error raised, else the message; jq 1.6 catches error(null)
		 * with no output at all */
		json_t *msg = c->thrown ? c->thrown : json_string(c->err ? c->err->message : "error");
		c->thrown = NULL;
		if (!msg)
			return wmap__jn_oom(c);
		if (json_is_null(msg))
			return 0;
		rc = wmap__jn_ev(c, x->b, msg, NULL, e, k, ud);
		json_decref(msg);
		return rc;
	}
	case N_CALL:
		return wmap__jn_call(c, x, in, ptr, e, k, ud);
	}
	return wmap__jn_err(c, "unknown node");
}

typedef struct results_ud {
	wmap_results *out;
} results_ud;

static int results_emit(ectx *c, void *ud, json_t *v, const char *ptr)
{
	results_ud *r = ud;
	if (r->out->n >= WMAP_MAX_RESULTS)
		return wmap__jn_err(c, "more than %d results", WMAP_MAX_RESULTS);
	char *p = ptr ? strdup(ptr) : NULL;
	if ((ptr && !p) || wmap__results_push(r->out, json_incref(v), p))
		return wmap__jn_oom(c);
	return 0;
}

static int results_reserve(void *ud, size_t n)
{
	return wmap__results_reserve(((results_ud *)ud)->out, n);
}

static inline __attribute__((always_inline)) int results_num(ectx *c, void *ud, long long n)
{
	results_ud *r = ud;
	if (r->out->n >= WMAP_MAX_RESULTS)
		return wmap__jn_err(c, "more than %d results", WMAP_MAX_RESULTS);
	wmap_results *o = r->out;
	if (o->n < o->cap) /* room made at once (fast_iter): the result written in place */
		o->n++;
	else if (wmap__results_push(o, NULL, NULL))
		return wmap__jn_oom(c);
	o->v[o->n - 1] = (wmap_result){ .is_num = 1, .num = n };
	return 0;
}

static int eval_from(const wmap_jn *p, json_t *input, const char *root_ptr, wmap_results *out,
		     int numbers, wmap_jn_memo *memo, wmap_error *error)
{
	ectx c = { error, 0, NULL, numbers, memo, p->n_slots, NULL };
	results_ud r = { out };
	int rc = wmap__jn_ev(&c, p->root, input, root_ptr, NULL, results_emit, &r);
	json_decref(c.thrown);
	if (rc == JN_STOP)
		rc = 0;
	return rc;
}

int wmap__jn_eval(const wmap_jn *p, json_t *input, wmap_results *out, wmap_error *error)
{
	return eval_from(p, input, "", out, 0, NULL, error);
}

int wmap__jn_eval_values(const wmap_jn *p, json_t *input, wmap_results *out, wmap_error *error)
{
	return eval_from(p, input, NULL, out, 0, NULL, error);
}

int wmap__jn_eval_numbers(const wmap_jn *p, json_t *input, wmap_jn_memo *memo, wmap_results *out,
			  wmap_error *error)
{
	return eval_from(p, input, NULL, out, 1, memo, error);
}
