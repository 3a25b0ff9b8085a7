/* wmap: the strict YAML/JSON reader and the YAML writer (see include/wmap/yaml.h).
 *
 * libyaml's event API is used, not its document loader: the loader keeps aliases as
 * references that a naive walk expands exponentially, and it cannot refuse duplicate keys
 * or bound depth while reading. Building the jansson tree from events lets us enforce every
 * limit at the point the input crosses it, and name that point by line and column. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "wmap/buf.h"
#include "wmap/file.h"
#include "wmap/pointer.h"
#include "wmap/yaml.h"

typedef struct frame {
	json_t *container; /* object or array being filled */
	char *key;         /* pending mapping key (owned), NULL when the next scalar is a key */
	size_t key_line, key_col;
	char *anchor;    /* anchor of this container, registered when it closes */
	size_t path_len; /* length of the pointer prefix of this container */
} frame;

typedef struct anchor {
	char *name;
	json_t *value;
	size_t nodes;
} anchor;

typedef struct loader {
	const char *name;
	const wmap_yaml_opts *opts;
	int max_depth;
	size_t max_nodes, nodes;
	frame *stack;
	int depth;
	anchor *anchors;
	size_t n_anchors, cap_anchors;
	char path[4096]; /* JSON pointer of the current node, "<doc>/a/b" */
	size_t path_len;
	int path_overflow;
	wmap_error *err;
} loader;

static int fail(loader *ld, const yaml_mark_t *m, int code, const char *what)
{
	return wmap_error_set(ld->err, code, "%s:%zu:%zu: %s", ld->name, m->line + 1, m->column + 1,
			      what);
}

/* ---- scalar typing, as kubectl's go-yaml v2 resolver does it ---- */

static int is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
static const char *const trues[] = { "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE",
				     "on", "On", "ON", NULL };
static const char *const falses[] = { "n", "N", "no", "No", "NO", "false", "False", "FALSE",
				      "off", "Off", "OFF", NULL };
static const char *const infs[] = { ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
				    "-.Inf", "-.INF", ".nan", ".NaN", ".NAN", NULL };

/* Integer forms: decimal, 0x hex, 0o / leading-0 octal, 0b binary, '_' separators. */
static int parse_int(const char *s, json_int_t *out, int *overflow)
{
	char buf[80];
	size_t n = 0;
	const char *p = s;
	int neg = 0, base = 10;
	unsigned long long v = 0;

	*overflow = 0;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return 0;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		base = 16, p += 2;
	else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
		base = 8, p += 2;
	else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
		base = 2, p += 2;
	else if (p[0] == '0' && p[1])
		base = 8, p += 1;
	for (; *p; p++) {
		if (*p == '_')
			continue;
		if (n + 1 >= sizeof(buf))
			return 0;
		buf[n++] = *p;
	}
	buf[n] = '\0';
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int d;
		char c = buf[i];
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return 0;
		if (d >= base)
			return 0;
		if (v > (ULLONG_MAX - (unsigned)d) / (unsigned)base) {
			*overflow = 1;
			return 1;
		}
		v = v * (unsigned)base + (unsigned)d;
	}
	if (neg ? v > (unsigned long long)INT64_MAX + 1 : v > (unsigned long long)INT64_MAX) {
		*overflow = 1;
		return 1;
	}
	*out = neg ? (json_int_t)(0 - v) : (json_int_t)v;
	return 1;
}

static int looks_float(const char *s)
{
	const char *p = s;
	int digits = 0;

	if (*p == '+' || *p == '-')
		p++;
	while ((*p >= '0' && *p <= '9') || *p == '_')
		digits += *p++ != '_';
	if (*p == '.') {
		p++;
		while ((*p >= '0' && *p <= '9') || *p == '_')
			digits += *p++ != '_';
	}
	if (!digits)
		return 0;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

/* 1 when a plain scalar with this text would not read back as the same string. */
static int retypes(const char *s)
{
	json_int_t i;
	int ov;
	return is_one_of(s, nulls) || is_one_of(s, trues) || is_one_of(s, falses) ||
	       is_one_of(s, infs) || parse_int(s, &i, &ov) || looks_float(s);
}

static json_t *type_scalar(loader *ld, const yaml_event_t *ev, int *rc)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	json_int_t iv;
	int overflow;

	*rc = 0;
	if (strlen(s) != len) {
		*rc = fail(ld, &ev->start_mark, WMAP_EINVAL, "NUL byte in a scalar");
		return NULL;
	}
	if (tag && strcmp(tag, YAML_STR_TAG) == 0)
		return json_stringn(s, len);
	if (!plain && !(tag && strcmp(tag, "!") != 0))
		return json_stringn(s, len);
	if (tag && strcmp(tag, YAML_NULL_TAG) == 0)
		return json_null();
	if (is_one_of(s, nulls) && (!tag || strcmp(tag, YAML_NULL_TAG) == 0))
		return json_null();
	if (is_one_of(s, trues))
		return json_true();
	if (is_one_of(s, falses))
		return json_false();
	if (is_one_of(s, infs)) {
		*rc = fail(ld, &ev->start_mark, WMAP_EINVAL,
			   "infinite or NaN numbers cannot be represented in JSON");
		return NULL;
	}
	if (parse_int(s, &iv, &overflow)) {
		if (!overflow)
			return json_integer(iv);
		return json_real(strtod(s, NULL));
	}
	if (looks_float(s)) {
		char buf[128];
		size_t n = 0;
		for (const char *p = s; *p && n + 1 < sizeof(buf); p++)
			if (*p != '_')
				buf[n++] = *p;
		buf[n] = '\0';
		double d = strtod(buf, NULL);
		if (!isfinite(d)) {
			*rc = fail(ld, &ev->start_mark, WMAP_EINVAL, "number out of range");
			return NULL;
		}
		return json_real(d);
	}
	return json_stringn(s, len);
}

/* ---- anchors (manifests only) ---- */

static size_t count_nodes(const json_t *v)
{
	size_t n = 1;
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x)
			n += count_nodes(x);
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
			n += count_nodes(x);
	}
	return n;
}

static int anchor_add(loader *ld, const char *name, json_t *value)
{
	if (ld->n_anchors == ld->cap_anchors) {
		size_t cap = ld->cap_anchors ? ld->cap_anchors * 2 : 16;
		anchor *a = realloc(ld->anchors, cap * sizeof(*a));
		if (!a)
			return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
		ld->anchors = a;
		ld->cap_anchors = cap;
	}
	anchor *a = &ld->anchors[ld->n_anchors];
	a->name = strdup(name);
	if (!a->name)
		return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
	a->value = json_incref(value);
	a->nodes = count_nodes(value);
	ld->n_anchors++;
	return 0;
}

static void anchors_free(loader *ld)
{
	for (size_t i = 0; i < ld->n_anchors; i++) {
		free(ld->anchors[i].name);
		json_decref(ld->anchors[i].value);
	}
	free(ld->anchors);
	ld->anchors = NULL;
	ld->n_anchors = ld->cap_anchors = 0;
}

/* ---- JSON pointer of the node being read (for positions) ---- */

static void path_push(loader *ld, const char *token)
{
	size_t n = ld->path_len, room;
	if (ld->path_overflow || !ld->opts->positions)
		return;
	if (n + 1 >= sizeof(ld->path)) {
		ld->path_overflow = 1;
		return;
	}
	ld->path[n++] = '/';
	room = sizeof(ld->path) - n;
	size_t w = wmap_pointer_escape(ld->path + n, room, token);
	if (w >= room) {
		ld->path[ld->path_len] = '\0';
		ld->path_overflow = 1;
		return;
	}
	ld->path_len = n + w;
}

/* A mapping value is placed where its key is written: that is where a reader looks. */
static void record_position(loader *ld, const yaml_mark_t *m)
{
	yaml_mark_t at = *m;
	if (!ld->opts->positions || ld->path_overflow)
		return;
	if (ld->depth > 0) {
		const frame *f = &ld->stack[ld->depth - 1];
		if (json_is_object(f->container) && f->key) {
			at.line = f->key_line;
			at.column = f->key_col;
		}
	}
	m = &at;
	json_t *pos = json_pack("[ii]", (json_int_t)(m->line + 1), (json_int_t)(m->column + 1));
	if (pos)
		json_object_set_new(ld->opts->positions, ld->path, pos);
}

/* Enters the position of the next value inside the top container. */
static void path_enter_child(loader *ld)
{
	if (!ld->opts->positions || ld->depth == 0)
		return;
	frame *f = &ld->stack[ld->depth - 1];
	ld->path_len = f->path_len;
	ld->path[ld->path_len] = '\0';
	if (json_is_array(f->container)) {
		char idx[32];
		snprintf(idx, sizeof(idx), "%zu", json_array_size(f->container));
		path_push(ld, idx);
	} else if (f->key) {
		path_push(ld, f->key);
	}
}

/* ---- tree building ---- */

/* Puts a finished value into the container on top of the stack (or makes it the document). */
static int attach(loader *ld, json_t *value, json_t **doc, const yaml_mark_t *m)
{
	if (ld->depth == 0) {
		*doc = value;
		return 0;
	}
	frame *f = &ld->stack[ld->depth - 1];
	if (json_is_array(f->container)) {
		if (json_array_append_new(f->container, value))
			return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
		return 0;
	}
	if (!f->key) {
		/* value is a key */
		if (!json_is_string(value)) {
			int keep_scalar = json_is_integer(value) || json_is_real(value) ||
					  json_is_boolean(value) || json_is_null(value);
			if (!keep_scalar) {
				json_decref(value);
				return fail(ld, m, WMAP_EINVAL, "mapping keys must be scalars");
			}
			/* JSON keys are strings: 1 -> "1", true -> "true" as sigs.k8s.io/yaml does. */
			char *txt = json_dumps(value, JSON_ENCODE_ANY);
			json_decref(value);
			if (!txt)
				return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
			f->key = txt;
		} else {
			f->key = strdup(json_string_value(value));
			json_decref(value);
			if (!f->key)
				return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
		}
		f->key_line = m->line;
		f->key_col = m->column;
		if (json_object_get(f->container, f->key)) {
			char msg[400];
			snprintf(msg, sizeof(msg), "duplicate key \"%.300s\"", f->key);
			return fail(ld, m, WMAP_EINVAL, msg);
		}
		return 0;
	}
	if (strcmp(f->key, "<<") == 0 && ld->opts->allow_aliases &&
	    (json_is_object(value) || json_is_array(value))) {
		/* A merge key: bring in the keys the mapping does not have yet. */
		json_t *srcs = json_is_array(value) ? value : NULL;
		size_t n = srcs ? json_array_size(srcs) : 1;
		for (size_t i = 0; i < n; i++) {
			json_t *src = srcs ? json_array_get(srcs, i) : value;
			const char *k;
			json_t *x;
			if (!json_is_object(src)) {
				json_decref(value);
				return fail(ld, m, WMAP_EINVAL, "a merge key takes mappings");
			}
			json_object_foreach(src, k, x) {
				if (!json_object_get(f->container, k) &&
				    json_object_set(f->container, k, x)) {
					json_decref(value);
					return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
				}
			}
		}
		json_decref(value);
	} else if (json_object_set_new(f->container, f->key, value)) {
		free(f->key);
		f->key = NULL;
		return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
	}
	free(f->key);
	f->key = NULL;
	return 0;
}

static int count_node(loader *ld, const yaml_mark_t *m, size_t n)
{
	ld->nodes += n;
	if (ld->nodes > ld->max_nodes) {
		char msg[128];
		snprintf(msg, sizeof(msg), "document has more than %zu nodes", ld->max_nodes);
		return fail(ld, m, WMAP_ELIMIT, msg);
	}
	return 0;
}

static int next_is_key(const loader *ld)
{
	if (ld->depth == 0)
		return 0;
	const frame *f = &ld->stack[ld->depth - 1];
	return json_is_object(f->container) && !f->key;
}

static int check_anchor(loader *ld, const yaml_event_t *ev, const yaml_char_t *anchor_name)
{
	if (anchor_name && !ld->opts->allow_aliases)
		return fail(ld, &ev->start_mark, WMAP_EINVAL,
			    "anchors and aliases are not allowed here");
	return 0;
}

/* The parser's message for a stream it cannot read, at the place it stopped. */
static int syntax_error(loader *ld, const yaml_parser_t *parser)
{
	char msg[512];
	snprintf(msg, sizeof(msg), "%s%s%s", parser->problem ? parser->problem : "syntax error",
		 parser->context ? " " : "", parser->context ? parser->context : "");
	return fail(ld, &parser->problem_mark, WMAP_EINVAL, msg);
}

/* A document starts: node count and position path begin again. */
static void document_start(loader *ld, int doc_index)
{
	ld->nodes = 0;
	if (ld->opts->positions) {
		snprintf(ld->path, sizeof(ld->path), "%d", doc_index);
		ld->path_len = strlen(ld->path);
		ld->path_overflow = 0;
	}
}

/* A document ends: *doc (taken) joins docs unless it is empty; anchors do not outlive it. */
static int document_end(loader *ld, json_t *docs, json_t **doc, int *doc_index)
{
	int rc = 0;
	anchors_free(ld);
	if (*doc && !json_is_null(*doc)) {
		if (json_array_append_new(docs, *doc))
			rc = wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
		(*doc_index)++;
	} else {
		json_decref(*doc);
	}
	*doc = NULL;
	return rc;
}

/* A mapping or a sequence opens: a new frame on the stack, within the limits. */
static int collection_start(loader *ld, const yaml_event_t *ev)
{
	int mapping = ev->type == YAML_MAPPING_START_EVENT;
	const yaml_char_t *an = mapping ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
	int rc;
	if (next_is_key(ld))
		return fail(ld, &ev->start_mark, WMAP_EINVAL, "mapping keys must be scalars");
	if ((rc = check_anchor(ld, ev, an)) || (rc = count_node(ld, &ev->start_mark, 1)))
		return rc;
	if (ld->depth >= ld->max_depth) {
		char msg[96];
		snprintf(msg, sizeof(msg), "nesting deeper than %d levels", ld->max_depth);
		return fail(ld, &ev->start_mark, WMAP_ELIMIT, msg);
	}
	path_enter_child(ld);
	record_position(ld, &ev->start_mark);
	frame *f = &ld->stack[ld->depth];
	memset(f, 0, sizeof(*f));
	f->container = mapping ? json_object() : json_array();
	f->path_len = ld->path_len;
	if (!f->container || (an && !(f->anchor = strdup((const char *)an)))) {
		json_decref(f->container);
		return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
	}
	ld->depth++;
	return 0;
}

/* A mapping or a sequence closes: its frame's value is anchored if asked and attached. */
static int collection_end(loader *ld, const yaml_event_t *ev, json_t **doc)
{
	frame *f = &ld->stack[--ld->depth];
	json_t *v = f->container;
	int rc = 0;
	if (f->anchor) {
		rc = anchor_add(ld, f->anchor, v);
		free(f->anchor);
		f->anchor = NULL;
	}
	free(f->key);
	f->key = NULL;
	if (rc) {
		json_decref(v);
		return rc;
	}
	return attach(ld, v, doc, &ev->start_mark);
}

static int scalar(loader *ld, const yaml_event_t *ev, json_t **doc)
{
	int rc;
	if ((rc = check_anchor(ld, ev, ev->data.scalar.anchor)) ||
	    (rc = count_node(ld, &ev->start_mark, 1)))
		return rc;
	int is_key = next_is_key(ld);
	/* Keys keep the text as written: `y:` or `on:` as a key stays a string (kubectl's
	 * go-yaml v2 would make it "true", which nobody means). */
	json_t *v = is_key ? json_stringn((const char *)ev->data.scalar.value, ev->data.scalar.length)
			   : type_scalar(ld, ev, &rc);
	if (rc)
		return rc;
	if (!v)
		return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
	if (!is_key) {
		path_enter_child(ld);
		record_position(ld, &ev->start_mark);
	}
	if (ev->data.scalar.anchor && (rc = anchor_add(ld, (const char *)ev->data.scalar.anchor, v))) {
		json_decref(v);
		return rc;
	}
	return attach(ld, v, doc, &ev->start_mark);
}

/* An alias: a copy of its anchor's value, counted as all the nodes it holds. */
static int alias(loader *ld, const yaml_event_t *ev, json_t **doc)
{
	const anchor *a = NULL;
	int rc;
	if (!ld->opts->allow_aliases)
		return fail(ld, &ev->start_mark, WMAP_EINVAL, "anchors and aliases are not allowed here");
	for (size_t i = ld->n_anchors; i-- > 0;)
		if (strcmp(ld->anchors[i].name, (const char *)ev->data.alias.anchor) == 0) {
			a = &ld->anchors[i];
			break;
		}
	if (!a)
		return fail(ld, &ev->start_mark, WMAP_EINVAL, "alias to an unknown anchor");
	if ((rc = count_node(ld, &ev->start_mark, a->nodes)))
		return rc;
	json_t *copy = json_deep_copy(a->value);
	if (!copy)
		return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
	if (!next_is_key(ld)) {
		path_enter_child(ld);
		record_position(ld, &ev->start_mark);
	}
	return attach(ld, copy, doc, &ev->start_mark);
}

static int load_events(loader *ld, yaml_parser_t *parser, json_t *docs)
{
	yaml_event_t ev;
	json_t *doc = NULL;
	int rc = 0, done = 0, doc_index = 0;

	while (!done && !rc) {
		if (!yaml_parser_parse(parser, &ev)) {
			rc = syntax_error(ld, parser);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT: done = 1; break;
		case YAML_DOCUMENT_START_EVENT:
			doc = NULL;
			document_start(ld, doc_index);
			break;
		case YAML_DOCUMENT_END_EVENT: rc = document_end(ld, docs, &doc, &doc_index); break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT: rc = collection_start(ld, &ev); break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT: rc = collection_end(ld, &ev, &doc); break;
		case YAML_SCALAR_EVENT: rc = scalar(ld, &ev, &doc); break;
		case YAML_ALIAS_EVENT: rc = alias(ld, &ev, &doc); break;
		default: break;
		}
		yaml_event_delete(&ev);
	}
	/* Unwind whatever an error left open. */
	while (ld->depth > 0) {
		frame *f = &ld->stack[--ld->depth];
		json_decref(f->container);
		free(f->key);
		free(f->anchor);
	}
	if (rc)
		json_decref(doc);
	anchors_free(ld);
	return rc;
}

static int depth_ok(const json_t *v, int left)
{
	if (left < 0)
		return 0;
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x)
			if (!depth_ok(x, left - 1))
				return 0;
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
			if (!depth_ok(x, left - 1))
				return 0;
	}
	return 1;
}

/* JSON input goes through jansson: faster, and its messages carry line and column. */
static int parse_json(json_t **out, const char *data, size_t len, loader *ld)
{
	json_error_t je;
	json_t *v = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!v)
		return wmap_error_set(ld->err, WMAP_EINVAL, "%s:%d:%d: %s", ld->name, je.line,
				      je.column, je.text);
	if (!depth_ok(v, ld->max_depth)) {
		json_decref(v);
		return wmap_error_set(ld->err, WMAP_ELIMIT, "%s: nesting deeper than %d levels",
				      ld->name, ld->max_depth);
	}
	json_t *docs = json_array();
	if (!docs || json_array_append_new(docs, v)) {
		json_decref(docs);
		return wmap_error_set(ld->err, WMAP_ENOMEM, "out of memory");
	}
	*out = docs;
	return 0;
}

int wmap_yaml_parse(json_t **out, const char *data, size_t len, const char *name,
		    const wmap_yaml_opts *opts, wmap_error *err)
{
	static const wmap_yaml_opts defaults;
	loader ld;
	yaml_parser_t parser;
	json_t *docs = NULL;
	int rc;

	*out = NULL;
	memset(&ld, 0, sizeof(ld));
	ld.name = name ? name : "<input>";
	ld.opts = opts ? opts : &defaults;
	ld.err = err;
	ld.max_depth = ld.opts->max_depth > 0 ? ld.opts->max_depth : WMAP_YAML_MAX_DEPTH;
	ld.max_nodes = ld.opts->max_nodes ? ld.opts->max_nodes : WMAP_YAML_MAX_NODES;
	size_t max_bytes = ld.opts->max_bytes ? ld.opts->max_bytes : WMAP_YAML_MAX_BYTES;

	if (len > max_bytes)
		return wmap_error_set(err, WMAP_ELIMIT, "%s: larger than %zu bytes", ld.name, max_bytes);
	if (memchr(data, '\0', len))
		return wmap_error_set(err, WMAP_EINVAL, "%s: contains a NUL byte", ld.name);

	size_t i = 0;
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
		i++;
	if (i < len && (data[i] == '{' || data[i] == '[') && !ld.opts->positions) {
		rc = parse_json(out, data, len, &ld);
		/* Flow-style YAML also starts with '{'; fall back to YAML when JSON fails. */
		if (rc != WMAP_EINVAL)
			return rc;
	}

	ld.stack = calloc((size_t)ld.max_depth + 1, sizeof(frame));
	docs = json_array();
	if (!ld.stack || !docs) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (!yaml_parser_initialize(&parser)) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	rc = load_events(&ld, &parser, docs);
	yaml_parser_delete(&parser);
	if (rc == 0) {
		*out = docs;
		docs = NULL;
	}
cleanup:
	json_decref(docs);
	free(ld.stack);
	return rc;
}

int wmap_yaml_parse_file(json_t **out, const char *path, const wmap_yaml_opts *opts,
			 wmap_error *err)
{
	size_t max = opts && opts->max_bytes ? opts->max_bytes : WMAP_YAML_MAX_BYTES;
	char *buf;
	size_t len;
	int rc = wmap_file_read(&buf, &len, path, max, err);
	if (rc)
		return rc;
	rc = wmap_yaml_parse(out, buf, len, strcmp(path, "-") == 0 ? "<stdin>" : path, opts, err);
	free(buf);
	return rc;
}

void wmap_yaml_position(char *buf, size_t len, const json_t *positions, const char *name,
			const char *pointer)
{
	json_t *pos = positions ? json_object_get(positions, pointer) : NULL;
	if (pos && json_array_size(pos) == 2)
		snprintf(buf, len, "%s:%lld:%lld", name,
			 (long long)json_integer_value(json_array_get(pos, 0)),
			 (long long)json_integer_value(json_array_get(pos, 1)));
	else
		snprintf(buf, len, "%s", name);
}

/* ---- writer ---- */

/* The YAML text: as large as the JSON text of the same value may be, and some. */
#define DUMP_MAX ((size_t)1 << 30)

static int buf_write(void *data, unsigned char *buffer, size_t size)
{
	return wmap_buf_add(data, buffer, size) == 0;
}

static int emit_scalar(yaml_emitter_t *em, const char *s, size_t n, int plain_ok)
{
	yaml_event_t ev;
	yaml_scalar_style_t style = plain_ok ? YAML_ANY_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)n, plain_ok, 1, style))
		return -1;
	return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int emit_value(yaml_emitter_t *em, const json_t *v, int depth)
{
	yaml_event_t ev;
	char num[64];

	if (depth > 4096)
		return -1;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *x;
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		json_object_foreach((json_t *)v, k, x) {
			if (emit_scalar(em, k, strlen(k), !retypes(k)) || emit_value(em, x, depth + 1))
				return -1;
		}
		if (!yaml_mapping_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
			return -1;
		return 0;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *x;
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		json_array_foreach(v, i, x)
			if (emit_value(em, x, depth + 1))
				return -1;
		if (!yaml_sequence_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
			return -1;
		return 0;
	}
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v);
		return emit_scalar(em, s, n, strlen(s) == n && !retypes(s));
	}
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		return emit_scalar(em, num, strlen(num), 1);
	case JSON_REAL: {
		char *txt = json_dumps(v, JSON_ENCODE_ANY);
		int rc = txt ? emit_scalar(em, txt, strlen(txt), 1) : -1;
		free(txt);
		return rc;
	}
	case JSON_TRUE:
		return emit_scalar(em, "true", 4, 1);
	case JSON_FALSE:
		return emit_scalar(em, "false", 5, 1);
	default:
		return emit_scalar(em, "null", 4, 1);
	}
}

int wmap_yaml_dump(char **out, const json_t *value, wmap_error *err)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	wmap_buf b = WMAP_BUF_INIT(DUMP_MAX, 1024);
	int rc = 0;

	*out = NULL;
	if (!yaml_emitter_initialize(&em))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	yaml_emitter_set_output(&em, buf_write, &b);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	yaml_emitter_set_indent(&em, 2);
	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) || !yaml_emitter_emit(&em, &ev) ||
	    !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) || !yaml_emitter_emit(&em, &ev) ||
	    emit_value(&em, value, 0) ||
	    !yaml_document_end_event_initialize(&ev, 1) || !yaml_emitter_emit(&em, &ev) ||
	    !yaml_stream_end_event_initialize(&ev) || !yaml_emitter_emit(&em, &ev) ||
	    !yaml_emitter_flush(&em) || b.error) {
		rc = wmap_error_set(err, b.error ? b.error : WMAP_EINVAL, "cannot write YAML: %s",
				    b.error == WMAP_ELIMIT ? "the text is too large"
				    : em.problem           ? em.problem
							   : "out of memory");
	} else if ((*out = wmap_buf_take(&b, NULL)) == NULL) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	wmap_buf_free(&b);
	yaml_emitter_delete(&em);
	return rc;
}
