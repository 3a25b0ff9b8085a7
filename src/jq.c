/* wmap: the libjq layer (see jq.h).
 *
 * libjq 1.6 spends ~25 ms in every jq_compile, most of it rebinding its builtin library, so
 * all expressions of a definition (or of every definition) become one program:
 *
 *     def e0: (EXPR0);  def e1: (EXPR1); ...
 *     .[0] as $__wmap_i | .[1] | if $__wmap_i < 1 then e0 else e1 end
 *
 * and the caller picks an expression by feeding [index, object]. The dispatcher is a
 * balanced tree of comparisons, so selecting one of n costs log2(n), not n. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jq.h>
#include <jv.h>

#include "jq.h"
#include "wmap/buf.h"

struct wmap_jq {
	jq_state *jq;
	size_t n;
	char errbuf[1024];
	size_t errlen;
};

/* The program text: the definitions' expressions (each from a file of at most 8 MiB). */
#define PROGRAM_MAX ((size_t)64 << 20)

static void dispatch(wmap_buf *t, size_t lo, size_t hi)
{
	if (hi - lo == 1) {
		wmap_buf_addf(t, "e%zu", lo);
		return;
	}
	size_t mid = lo + (hi - lo) / 2;
	wmap_buf_addf(t, "if $__wmap_i < %zu then ", mid);
	dispatch(t, lo, mid);
	wmap_buf_adds(t, " else ");
	dispatch(t, mid, hi);
	wmap_buf_adds(t, " end");
}

/* libjq reports compile errors through this callback; without it they go to stderr. */
static void on_error(void *data, jv msg)
{
	wmap_jq *q = data;
	const char *s = jv_get_kind(msg) == JV_KIND_STRING ? jv_string_value(msg) : "jq error";
	if (q->errlen < sizeof(q->errbuf) - 1) {
		int w = snprintf(q->errbuf + q->errlen, sizeof(q->errbuf) - q->errlen, "%s%s",
				 q->errlen ? "; " : "", s);
		if (w > 0)
			q->errlen += (size_t)w;
		if (q->errlen >= sizeof(q->errbuf))
			q->errlen = sizeof(q->errbuf) - 1;
	}
	jv_free(msg);
}

int wmap__jq_compile(wmap_jq **out, char *const *exprs, size_t n, wmap_error *err)
{
	wmap_jq *q = calloc(1, sizeof(*q));
	wmap_buf t = WMAP_BUF_INIT(PROGRAM_MAX, 1024);
	int rc = 0;

	*out = NULL;
	if (!q)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if (n == 0) {
		*out = q;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		/* newlines keep a '#' comment inside an expression from swallowing the rest */
		wmap_buf_addf(&t, "def e%zu: (\n", i);
		wmap_buf_adds(&t, exprs[i]);
		wmap_buf_adds(&t, "\n);\n");
	}
	wmap_buf_adds(&t, ".[0] as $__wmap_i | .[1] | ");
	dispatch(&t, 0, n);
	if (t.error == WMAP_ELIMIT) {
		rc = wmap_error_set(err, WMAP_ELIMIT, "the jq program is larger than %zu bytes",
				    PROGRAM_MAX);
		goto out;
	}
	if (t.error) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto out;
	}
	q->jq = jq_init();
	if (!q->jq) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "cannot start libjq");
		goto out;
	}
	jq_set_error_cb(q->jq, on_error, q);
	if (!jq_compile(q->jq, wmap_buf_cstr(&t))) {
		rc = wmap_error_set(err, WMAP_EJQ, "jq: %s", q->errlen ? q->errbuf : "compile error");
		goto out;
	}
	q->n = n;
	*out = q;
	q = NULL;
out:
	wmap_buf_free(&t);
	wmap__jq_free(q);
	return rc;
}

void wmap__jq_free(wmap_jq *q)
{
	if (!q)
		return;
	if (q->jq)
		jq_teardown(&q->jq);
	free(q);
}

int wmap__jq_check_all(char *const *exprs, size_t n, char *msg, size_t len)
{
	wmap_jq *q;
	wmap_error e;
	int rc = wmap__jq_compile(&q, exprs, n, &e);
	if (rc == 0)
		wmap__jq_free(q);
	else
		snprintf(msg, len, "%s", e.message);
	return rc;
}

int wmap__jq_check(const char *expr, char *msg, size_t len)
{
	/* compiled as written, so that libjq's message speaks of the user's text only */
	wmap_jq q = { 0 };
	int rc = 0;
	q.jq = jq_init();
	if (!q.jq) {
		snprintf(msg, len, "cannot start libjq");
		return WMAP_ENOMEM;
	}
	jq_set_error_cb(q.jq, on_error, &q);
	if (!jq_compile(q.jq, expr)) {
		snprintf(msg, len, "%s", q.errlen ? q.errbuf : "compile error");
		rc = WMAP_EJQ;
	}
	jq_teardown(&q.jq);
	return rc;
}

/* ---- jansson <-> jv at the module's edge ---- */

static jv to_jv(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		jv o = jv_object();
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x)
			o = jv_object_set(o, jv_string(k), to_jv(x));
		return o;
	}
	case JSON_ARRAY: {
		jv a = jv_array_sized((int)json_array_size(v));
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
			a = jv_array_append(a, to_jv(x));
		return a;
	}
	case JSON_STRING:
		return jv_string_sized(json_string_value(v), (int)json_string_length(v));
	case JSON_INTEGER:
		return jv_number((double)json_integer_value(v));
	case JSON_REAL:
		return jv_number(json_real_value(v));
	case JSON_TRUE:
		return jv_true();
	case JSON_FALSE:
		return jv_false();
	default:
		return jv_null();
	}
}

/* Borrows v (does not consume it). */
static json_t *from_jv(jv v, int depth)
{
	if (depth > 4096)
		return NULL;
	switch (jv_get_kind(v)) {
	case JV_KIND_OBJECT: {
		json_t *o = json_object();
		if (!o)
			return NULL;
		for (int it = jv_object_iter(v); jv_object_iter_valid(v, it); it = jv_object_iter_next(v, it)) {
			jv key = jv_object_iter_key(v, it);
			jv val = jv_object_iter_value(v, it);
			json_t *x = from_jv(val, depth + 1);
			int bad = !x || json_object_set_new(o, jv_string_value(key), x);
			jv_free(key);
			jv_free(val);
			if (bad) {
				json_decref(o);
				return NULL;
			}
		}
		return o;
	}
	case JV_KIND_ARRAY: {
		json_t *a = json_array();
		int n = jv_array_length(jv_copy(v));
		for (int i = 0; a && i < n; i++) {
			jv el = jv_array_get(jv_copy(v), i);
			json_t *x = from_jv(el, depth + 1);
			jv_free(el);
			if (!x || json_array_append_new(a, x)) {
				json_decref(a);
				return NULL;
			}
		}
		return a;
	}
	case JV_KIND_STRING:
		return json_stringn(jv_string_value(v), (size_t)jv_string_length_bytes(jv_copy(v)));
	case JV_KIND_NUMBER: {
		double d = jv_number_value(v);
		if (d == floor(d) && fabs(d) < 9.0e15)
			return json_integer((json_int_t)d);
		return json_real(d);
	}
	case JV_KIND_TRUE:
		return json_true();
	case JV_KIND_FALSE:
		return json_false();
	default:
		return json_null();
	}
}

/* A jq path ([..keys and indices..]) as a JSON Pointer. */
static char *path_to_pointer(jv path)
{
	char *ptr = strdup("");
	int n = jv_array_length(jv_copy(path));
	for (int i = 0; ptr && i < n; i++) {
		jv el = jv_array_get(jv_copy(path), i);
		char *next = NULL;
		if (jv_get_kind(el) == JV_KIND_STRING)
			next = wmap_pointer_join(ptr, jv_string_value(el));
		else if (jv_get_kind(el) == JV_KIND_NUMBER && jv_number_value(el) >= 0)
			next = wmap_pointer_join_index(ptr, (size_t)jv_number_value(el));
		jv_free(el);
		free(ptr);
		ptr = next; /* NULL for slices and negative indices: location unknown */
	}
	return ptr;
}

void wmap__input_release(wmap_input *in)
{
	if (in && in->jv) {
		jv *j = in->jv;
		jv_free(*j);
		free(j);
		in->jv = NULL;
	}
}

int wmap__jq_run(wmap_jq *q, size_t idx, wmap_input *in, int path_mode, wmap_results *out,
		 wmap_error *err)
{
	if (idx >= q->n)
		return wmap_error_set(err, WMAP_EJQ, "no such jq expression %zu", idx);
	if (!in->jv) {
		jv *j = malloc(sizeof(*j));
		if (!j)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		*j = to_jv(in->object);
		in->jv = j;
	}
	jv input = jv_array_append(jv_array_append(jv_array(), jv_number((double)idx)),
				   jv_copy(*(jv *)in->jv));
	jq_start(q->jq, input, 0);
	for (;;) {
		jv v = jq_next(q->jq);
		if (!jv_is_valid(v)) {
			/* The end, or an error. Either way jq_next must not be called again. */
			if (jv_invalid_has_msg(jv_copy(v))) {
				jv msg = jv_invalid_get_msg(v);
				if (jv_get_kind(msg) == JV_KIND_STRING) {
					wmap_error_set(err, WMAP_EEVAL, "%s", jv_string_value(msg));
				} else {
					jv s = jv_dump_string(msg, 0);
					wmap_error_set(err, WMAP_EEVAL, "%s", jv_string_value(s));
					jv_free(s);
					msg = jv_null();
				}
				jv_free(msg);
				return WMAP_EEVAL;
			}
			jv_free(v);
			return 0;
		}
		if (out->n >= WMAP_MAX_RESULTS) {
			jv_free(v);
			return wmap_error_set(err, WMAP_ELIMIT, "more than %d results", WMAP_MAX_RESULTS);
		}
		int bad;
		if (path_mode) {
			char *ptr = jv_get_kind(v) == JV_KIND_ARRAY ? path_to_pointer(v) : NULL;
			json_t *val = ptr ? wmap_pointer_lookup(in->object, ptr) : NULL;
			bad = !ptr || wmap__results_push(out, val ? json_incref(val) : NULL, ptr);
		} else {
			json_t *x = from_jv(v, 0);
			bad = !x || wmap__results_push(out, x, NULL);
		}
		jv_free(v);
		if (bad)
			return wmap_error_set(err, path_mode ? WMAP_EEVAL : WMAP_ENOMEM,
					      path_mode ? "not a path" : "out of memory");
	}
}
