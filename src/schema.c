/* wmap: a definition's plain paths walked through its kind's CRD schema (see wmap/schema.h).
 *
 * The walk follows what the API server keeps when it prunes an object (KEP-2332): a key
 * exists when `properties` lists it or an `additionalProperties` schema admits it; `[]` and
 * `[N]` go into `items` of an array, or into the values of an `additionalProperties` map
 * (jq iterates objects too); `x-kubernetes-preserve-unknown-fields: true` keeps everything
 * below; `apiVersion`, `kind` and `metadata` exist at the root and in objects marked
 * `x-kubernetes-embedded-resource`, where metadata is ObjectMeta. A path the schema lacks
 * is a finding: the object the definition is written for can never have it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "jqnative_int.h"
#include "wmap/schema.h"

/* ObjectMeta's fields; labels and annotations are string maps, the rest are leaves or
 * lists wmap never walks into. */
static const char *const object_meta[] = {
	"name",
	"generateName",
	"namespace",
	"uid",
	"resourceVersion",
	"generation",
	"creationTimestamp",
	"deletionTimestamp",
	"deletionGracePeriodSeconds",
	"labels",
	"annotations",
	"ownerReferences",
	"finalizers",
	"managedFields",
	"selfLink",
	NULL,
};

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return 1;
	return 0;
}

int wmap_schema_crd_matches(const json_t *crd, const char *group, const char *kind)
{
	const json_t *spec = json_object_get(crd, "spec");
	const char *g = json_string_value(json_object_get(spec, "group"));
	const char *k = json_string_value(json_object_get(json_object_get(spec, "names"), "kind"));
	const char *ck = json_string_value(json_object_get(crd, "kind"));
	return ck && strcmp(ck, "CustomResourceDefinition") == 0 && g && k && group && kind &&
	       strcmp(g, group) == 0 && strcmp(k, kind) == 0;
}

static const json_t *version_schema(const json_t *crd, const char *version)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"), i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		if (name && strcmp(name, version) == 0)
			return json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
	}
	return NULL;
}

static int preserves(const json_t *s)
{
	return json_is_true(json_object_get(s, "x-kubernetes-preserve-unknown-fields"));
}

/* What a walk position is: a schema node, ObjectMeta (or one of its string maps), or
 * anything (below preserve-unknown-fields, or a field ObjectMeta keeps whole). */
typedef enum { AT_SCHEMA,
	       AT_META,
	       AT_STRMAP,
	       AT_STRING,
	       AT_ANY,
	       AT_ENTRIES, /* to_entries of a map: a list of {key, value}; the value is (vat, vs) */
	       AT_ENTRY } at_kind;

typedef struct walk {
	at_kind at;
	const json_t *s;
	at_kind vat; /* AT_ENTRIES, AT_ENTRY: where the values are */
	const json_t *vs;
} walk;

static int int_or_string(const json_t *s)
{
	return json_is_true(json_object_get(s, "x-kubernetes-int-or-string"));
}

/* One step from w; 0 and w moved, or -1 with why (a short phrase) in buf. */
/* Steps from s into the values of a map (additionalProperties), or anywhere when s keeps
 * unknown fields; 0 when s has neither. */
static int into_map_value(walk *w, const json_t *s)
{
	const json_t *ap = json_object_get(s, "additionalProperties");
	if (json_is_object(ap)) {
		w->s = ap;
		return 1;
	}
	if (json_is_true(ap) || preserves(s)) {
		w->at = AT_ANY;
		return 1;
	}
	return 0;
}

static int step_key(walk *w, const char *key, int root, const char *at, char *why, size_t len)
{
	if (w->at == AT_ANY)
		return 0;
	if (w->at == AT_ENTRY) {
		if (strcmp(key, "value") == 0) {
			w->at = w->vat;
			w->s = w->vs;
		} else if (strcmp(key, "key") == 0) {
			w->at = AT_ANY;
		} else {
			snprintf(why, len, "%s is a to_entries entry, with only key and value, no field \"%s\"", at, key);
			return -1;
		}
		return 0;
	}
	if (w->at == AT_ENTRIES) {
		snprintf(why, len, "%s is a list (to_entries), with no field \"%s\"", at, key);
		return -1;
	}
	if (w->at == AT_STRMAP) {
		w->at = AT_STRING; /* one label or annotation */
		return 0;
	}
	if (w->at == AT_STRING) {
		snprintf(why, len, "%s is a string, with no field \"%s\"", at, key);
		return -1;
	}
	if (w->at == AT_META) {
		if (strcmp(key, "labels") == 0 || strcmp(key, "annotations") == 0)
			w->at = AT_STRMAP;
		else if (in_list(object_meta, key))
			w->at = AT_ANY;
		else {
			snprintf(why, len, "%s is ObjectMeta, which has no field \"%s\"", at, key);
			return -1;
		}
		return 0;
	}
	const json_t *s = w->s;
	const json_t *props = json_object_get(s, "properties");
	const json_t *next = json_object_get(props, key);
	int embedded = root || json_is_true(json_object_get(s, "x-kubernetes-embedded-resource"));
	if (int_or_string(s)) {
		snprintf(why, len, "%s is an int-or-string, with no field \"%s\"", at, key);
		return -1;
	}
	if (embedded && strcmp(key, "metadata") == 0) {
		w->at = AT_META;
		return 0;
	}
	if (next) {
		w->s = next;
		return 0;
	}
	if (embedded && (strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0)) {
		w->at = AT_ANY;
		return 0;
	}
	if (into_map_value(w, s))
		return 0;
	const char *type = json_string_value(json_object_get(s, "type"));
	if (type && strcmp(type, "object") != 0)
		snprintf(why, len, "%s is of type %s, with no field \"%s\"", at, type, key);
	else
		snprintf(why, len, "no field \"%s\" under %s", key, at);
	return -1;
}

/* [] (index 0) or [N] (index 1): jq iterates lists and objects, but indexes only lists. */
static int step_iter_or_index(walk *w, int index, const char *at, char *why, size_t len)
{
	if (w->at == AT_ANY)
		return 0;
	if (w->at == AT_ENTRIES) {
		w->at = AT_ENTRY;
		return 0;
	}
	if (w->at == AT_ENTRY) {
		snprintf(why, len, "%s is a to_entries entry {key, value}, not a list", at);
		return -1;
	}
	if (index && (w->at == AT_STRMAP || w->at == AT_META)) {
		snprintf(why, len, "%s is %s, not a list: [N] needs a list", at, w->at == AT_META ? "ObjectMeta" : "a map");
		return -1;
	}
	if (w->at == AT_STRMAP) {
		w->at = AT_STRING; /* the string values themselves */
		return 0;
	}
	if (w->at == AT_META) {
		w->at = AT_ANY; /* jq iterates an object's values: ObjectMeta's differ */
		return 0;
	}
	if (w->at == AT_STRING) {
		snprintf(why, len, "%s is a string, not a list", at);
		return -1;
	}
	const json_t *s = w->s;
	const char *type = json_string_value(json_object_get(s, "type"));
	if (int_or_string(s)) {
		snprintf(why, len, "%s is an int-or-string, not a list", at);
		return -1;
	}
	if (type && strcmp(type, "array") == 0) {
		const json_t *items = json_object_get(s, "items");
		if (json_is_object(items))
			w->s = items;
		else
			w->at = AT_ANY;
		return 0;
	}
	if (index && (!type || strcmp(type, "object") == 0) && !preserves(s)) {
		snprintf(why, len, "%s is %s, not a list: [N] needs a list", at,
			 json_object_get(s, "additionalProperties") ? "a map" : "an object");
		return -1;
	}
	if (into_map_value(w, s))
		return 0;
	if (!type || strcmp(type, "object") == 0) {
		/* jq iterates an object's values too; they have different schemas, so the walk
		 * cannot follow (nothing below is checked). */
		w->at = AT_ANY;
		return 0;
	}
	snprintf(why, len, "%s is of type %s, not a list", at, type);
	return -1;
}

static int step_iter(walk *w, const char *at, char *why, size_t len)
{
	return step_iter_or_index(w, 0, at, why, len);
}

/* Appends the jq spelling of step i of p to buf (".a", "[]", "[2]"). */
static void append_step(char *buf, size_t len, const wmap_path *p, size_t i)
{
	const char *key;
	size_t n = strlen(buf);
	wmap_path_step_kind k = wmap__path_step(p, i, &key);
	if (n >= len)
		return;
	if (k == WMAP_PATH_KEY)
		snprintf(buf + n, len - n, ".%s", key);
	else if (k == WMAP_PATH_ITER)
		snprintf(buf + n, len - n, "[]");
	else
		snprintf(buf + n, len - n, "[N]");
}

typedef struct check {
	const json_t *schema;
	const char *what; /* "jobset.x-k8s.io/v1alpha2 JobSet" */
	json_t *findings;
	int oom;
	const char *source; /* the definition's file, for findings without a position */
} check;

static void add_finding(check *c, const char *msg, const char *field, const char *path, const char *why)
{
	size_t i;
	json_t *f;
	if (c->oom)
		return;
	json_array_foreach(c->findings, i, f) /* one finding per message */
		if (strcmp(json_string_value(json_object_get(f, "message")), msg) == 0)
			return;
	if (json_array_append_new(c->findings,
				  json_pack("{s:s, s:s, s:s, s:s}", "message", msg, "field", field, "path", path,
					    "reason", why)))
		c->oom = 1;
}

/* "place: field" for an expression (the place already names the field when it has no
 * position). */
static void expr_place(char *buf, size_t len, const wmap_expr *e)
{
	size_t pl = strlen(e->place), wl = strlen(e->where);
	int named = pl >= wl && strcmp(e->place + pl - wl, e->where) == 0;
	snprintf(buf, len, "%s%s%s", e->place, named ? "" : ": ", named ? "" : e->where);
}

/* ---- Expressions beyond plain paths: an abstract walk of the jq subset's syntax tree
 * (jqnative_parse.c) over the schema. A value is the set of schema places it may come from
 * (at most AV_MAX; more, or anything computed, counts as "other", which is never checked).
 * Every field read on a place is stepped as the plain walk does; a step the schema lacks is
 * a finding. Literals compared with == or != to a place with an enum must be in it. */
#define AV_MAX 8
#define AV_AT 160

typedef struct aplace {
	walk w;
	char at[AV_AT]; /* the jq path that led here, ".spec.x[]" */
} aplace;

typedef struct aval {
	size_t n;
	aplace p[AV_MAX];
	int other; /* also values that are not schema places */
} aval;

typedef struct xenv {
	const char *name;
	const aval *v;
	const struct xenv *next;
} xenv;

typedef struct xwalk {
	check *c;
	const wmap_expr *e;
	int depth;
	int byphase; /* x_enum for a byPhase value */
} xwalk;

static void av_add(aval *out, const aplace *p)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->p[i].w.at == p->w.at && out->p[i].w.s == p->w.s && out->p[i].w.vs == p->w.vs)
			return;
	if (out->n == AV_MAX) {
		out->other = 1; /* too many places: precision lost, never a false finding */
		return;
	}
	out->p[out->n++] = *p;
}

static void av_union(aval *out, const aval *a)
{
	for (size_t i = 0; i < a->n; i++)
		av_add(out, &a->p[i]);
	out->other |= a->other;
}

/* The expression's text for a message: at most 100 bytes. */
static void short_text(char *buf, size_t len, const char *text)
{
	if (strlen(text) <= 100)
		snprintf(buf, len, "%s", text);
	else
		snprintf(buf, len, "%.97s...", text);
}

static void x_report(xwalk *x, const char *at, const char *why)
{
	char place[1024], msg[2048], text[128];
	expr_place(place, sizeof(place), x->e);
	short_text(text, sizeof(text), x->e->text);
	snprintf(msg, sizeof(msg), "%s: expression \"%s\" reads %s, which is not in the schema of %s: %s", place, text,
		 at[0] ? at : ".", x->c->what, why);
	add_finding(x->c, msg, x->e->where, x->e->text, why);
}

/* kind 0: .key, 1: [], 2: [N], 3: a computed key or index (the values of a map or list). */
static void av_step(xwalk *x, const aval *in, int kind, const char *key, aval *out)
{
	memset(out, 0, sizeof(*out));
	out->other = in->other;
	for (size_t i = 0; i < in->n; i++) {
		aplace p = in->p[i];
		char why[512];
		const char *here = p.at[0] ? p.at : "the top level";
		size_t n = strlen(p.at);
		int rc;
		if (kind == 0)
			rc = step_key(&p.w, key, p.at[0] == 0, here, why, sizeof(why));
		else if (kind == 3) {
			/* a computed index: lists and maps have one schema for every entry */
			rc = 0;
			if (p.w.at == AT_SCHEMA) {
				const char *type = json_string_value(json_object_get(p.w.s, "type"));
				if (!(type && strcmp(type, "array") == 0) &&
				    !json_is_object(json_object_get(p.w.s, "additionalProperties"))) {
					out->other = 1;
					continue;
				}
			}
			rc = step_iter(&p.w, here, why, sizeof(why));
		} else
			rc = step_iter_or_index(&p.w, kind == 2, here, why, sizeof(why));
		if (rc) {
			char at[AV_AT + 64];
			snprintf(at, sizeof(at), "%s%s%s", p.at, kind == 0 ? "." : kind == 1 ? "[]"
											     : "[N]",
				 kind == 0 ? key : "");
			x_report(x, at, why);
			continue;
		}
		if (n < AV_AT - 1)
			snprintf(p.at + n, AV_AT - n, "%s%s", kind == 0 ? "." : kind == 1 ? "[]"
											  : "[N]",
				 kind == 0 ? key : "");
		av_add(out, &p);
	}
}

static void x_ev(xwalk *x, const node *n, const aval *in, const xenv *vars, aval *out);

/* to_entries: a list of {key, value} entries whose values are those of the map in. */
static void av_entries(xwalk *x, const aval *in, aval *out)
{
	memset(out, 0, sizeof(*out));
	out->other = in->other;
	for (size_t i = 0; i < in->n; i++) {
		aplace p = in->p[i];
		walk v = p.w;
		char why[512];
		if (p.w.at == AT_ANY || p.w.at == AT_ENTRIES || p.w.at == AT_ENTRY) {
			out->other = 1;
			continue;
		}
		/* The values, as [] sees them; an object with properties gives AT_ANY. */
		if (step_iter(&v, p.at[0] ? p.at : "the top level", why, sizeof(why)) != 0) {
			char at[AV_AT + 16];
			snprintf(at, sizeof(at), "%s | to_entries", p.at);
			x_report(x, at, why);
			continue;
		}
		p.w.at = AT_ENTRIES;
		p.w.vat = v.at;
		p.w.vs = v.s;
		av_add(out, &p);
	}
}

/* == / != of a place and a string literal: the literal must be in the place's enum. */
static void x_enum(xwalk *x, const aval *v, const node *lit)
{
	const char *s = lit && lit->k == N_LITERAL ? json_string_value(lit->lit) : NULL;
	if (!s || !*s) /* "" is the absent-field test of `(.x // "") == ""` */
		return;
	for (size_t i = 0; i < v->n; i++) {
		const json_t *en = v->p[i].w.at == AT_SCHEMA ? json_object_get(v->p[i].w.s, "enum") : NULL;
		size_t j;
		json_t *e;
		char list[512] = "", why[768];
		int found = 0;
		if (!json_is_array(en))
			continue;
		json_array_foreach(en, j, e) {
			const char *es = json_string_value(e);
			size_t l = strlen(list);
			if (es && strcmp(es, s) == 0)
				found = 1;
			if (es && l < sizeof(list) - 1)
				snprintf(list + l, sizeof(list) - l, "%s%s", l ? ", " : "", es);
		}
		if (found)
			continue;
		char place[1024], msg[2048], text[128];
		snprintf(why, sizeof(why), "\"%s\" is not in the enum of %s (%s)", s, v->p[i].at, list);
		expr_place(place, sizeof(place), x->e);
		short_text(text, sizeof(text), x->e->text);
		if (x->byphase)
			snprintf(msg, sizeof(msg), "%s: the phase (%s, phaseDefinition.path \"%s\") can never be \"%s\": the schema of %s allows only %s",
				 place, v->p[i].at, text, s, x->c->what, list);
		else
			snprintf(msg, sizeof(msg), "%s: expression \"%s\" compares %s with \"%s\", which the schema of %s does not allow there (enum: %s)",
				 place, text, v->p[i].at, s, x->c->what, list);
		add_finding(x->c, msg, x->e->where, x->e->text, why);
	}
}

static int is_call(const node *n, const char *name, size_t arity)
{
	return n->k == N_CALL && n->n == arity && strcmp(n->name, name) == 0;
}

static void x_ev(xwalk *x, const node *n, const aval *in, const xenv *vars, aval *out)
{
	aval a, b;
	memset(out, 0, sizeof(*out));
	if (!n || x->c->oom)
		return;
	if (++x->depth > 100) { /* a deeper tree is not checked below this depth (stack) */
		out->other = 1;
		x->depth--;
		return;
	}
	switch (n->k) {
	case N_IDENTITY:
		*out = *in;
		break;
	case N_LITERAL:
		out->other = 1;
		break;
	case N_INDEX:
		x_ev(x, n->a, in, vars, &a);
		if (n->b && n->b->k == N_LITERAL && json_is_string(n->b->lit))
			av_step(x, &a, 0, json_string_value(n->b->lit), out);
		else if (n->b && n->b->k == N_LITERAL && json_is_number(n->b->lit))
			av_step(x, &a, 2, NULL, out);
		else {
			x_ev(x, n->b, in, vars, &b); /* the index is computed on the same input */
			av_step(x, &a, 3, NULL, out);
		}
		break;
	case N_ITER:
		x_ev(x, n->a, in, vars, &a);
		av_step(x, &a, 1, NULL, out);
		break;
	case N_TRY:
		x_ev(x, n->a, in, vars, out);
		if (n->b) {
			aval msg = { 0 };
			msg.other = 1;
			x_ev(x, n->b, &msg, vars, &b);
			av_union(out, &b);
		}
		break;
	case N_PIPE:
		x_ev(x, n->a, in, vars, &a);
		x_ev(x, n->b, &a, vars, out);
		break;
	case N_COMMA:
	case N_ALT:
		x_ev(x, n->a, in, vars, out);
		x_ev(x, n->b, in, vars, &b);
		av_union(out, &b);
		break;
	case N_BINOP:
		x_ev(x, n->a, in, vars, &a);
		x_ev(x, n->b, in, vars, &b);
		if (n->op == T_EQ || n->op == T_NE) {
			x_enum(x, &a, n->b);
			x_enum(x, &b, n->a);
		}
		out->other = 1;
		break;
	case N_AND:
	case N_OR:
	case N_NEG:
	case N_ARRAY:
		x_ev(x, n->a, in, vars, &a);
		if (n->b)
			x_ev(x, n->b, in, vars, &b);
		out->other = 1;
		break;
	case N_OBJECT:
		for (size_t i = 0; i < 2 * n->n; i++)
			if (!(i % 2 == 0 && n->args[i]->k == N_LITERAL))
				x_ev(x, n->args[i], in, vars, &a);
		out->other = 1;
		break;
	case N_VAR: {
		const xenv *v = vars;
		while (v && strcmp(v->name, n->name) != 0)
			v = v->next;
		if (v)
			*out = *v->v;
		else
			out->other = 1; /* $__loc__, $ENV: nothing of the object */
		break;
	}
	case N_BIND: {
		x_ev(x, n->a, in, vars, &a);
		xenv e2 = { n->name, &a, vars };
		x_ev(x, n->b, in, &e2, out);
		break;
	}
	case N_IF:
		x_ev(x, n->a, in, vars, &a);
		x_ev(x, n->b, in, vars, out);
		if (n->c)
			x_ev(x, n->c, in, vars, &b);
		else
			b = *in;
		av_union(out, &b);
		break;
	case N_CALL:
		if (is_call(n, "select", 1)) {
			x_ev(x, n->args[0], in, vars, &a);
			*out = *in;
		} else if (is_call(n, "map", 1) || is_call(n, "any", 1) || is_call(n, "all", 1) ||
			   is_call(n, "sort_by", 1) || is_call(n, "group_by", 1) || is_call(n, "unique_by", 1) ||
			   is_call(n, "min_by", 1) || is_call(n, "max_by", 1)) {
			av_step(x, in, 1, NULL, &a);
			x_ev(x, n->args[0], &a, vars, &b);
			if (is_call(n, "min_by", 1) || is_call(n, "max_by", 1))
				*out = a; /* an entry of the list */
			else
				out->other = 1;
		} else if (is_call(n, "any", 0) || is_call(n, "all", 0) || is_call(n, "add", 0) ||
			   is_call(n, "min", 0) || is_call(n, "max", 0)) {
			av_step(x, in, 1, NULL, &a);
			out->other = 1;
		} else if (is_call(n, "any", 2) || is_call(n, "all", 2)) {
			x_ev(x, n->args[0], in, vars, &a);
			x_ev(x, n->args[1], &a, vars, &b);
			out->other = 1;
		} else if (is_call(n, "to_entries", 0)) {
			av_entries(x, in, out);
		} else if (is_call(n, "with_entries", 1)) {
			av_entries(x, in, &a);
			av_step(x, &a, 1, NULL, &b);
			x_ev(x, n->args[0], &b, vars, &a);
			out->other = 1;
		} else if (is_call(n, "first", 1) || is_call(n, "last", 1)) {
			x_ev(x, n->args[0], in, vars, out);
		} else if (is_call(n, "limit", 2)) {
			x_ev(x, n->args[0], in, vars, &a);
			x_ev(x, n->args[1], in, vars, out);
		} else if (is_call(n, "first", 0) || is_call(n, "last", 0)) {
			av_step(x, in, 2, NULL, out);
		} else if (n->n == 0 && (strcmp(n->name, "values") == 0 || strcmp(n->name, "objects") == 0 ||
					 strcmp(n->name, "arrays") == 0 || strcmp(n->name, "strings") == 0 ||
					 strcmp(n->name, "numbers") == 0 || strcmp(n->name, "booleans") == 0 ||
					 strcmp(n->name, "iterables") == 0 || strcmp(n->name, "scalars") == 0 ||
					 strcmp(n->name, "nulls") == 0)) {
			*out = *in; /* filters: what passes is the input */
		} else if (n->n == 0 && (strcmp(n->name, "empty") == 0 || strcmp(n->name, "error") == 0)) {
			/* no output */
		} else {
			/* Any other builtin: its arguments read the same input; what it makes is not
			 * a place of the object (length, keys, tostring, has, test, ...). */
			for (size_t i = 0; i < n->n; i++)
				x_ev(x, n->args[i], in, vars, &a);
			out->other = 1;
		}
		break;
	}
	x->depth--;
}

/* The places e's expression yields on the workload object: every field read on the way
 * checked. *parsed is 0 when the expression is outside the subset (libjq's alone). */
static void x_places(check *c, const wmap_expr *e, aval *out, int *parsed)
{
	wmap_jn *jn = e->jn ? e->jn : wmap__jn_parse(e->text);
	aval root;
	xwalk x = { c, e, 0, 0 };
	memset(out, 0, sizeof(*out));
	memset(&root, 0, sizeof(root));
	*parsed = jn != NULL;
	if (!jn)
		return;
	root.n = 1;
	root.p[0].w = (walk){ AT_SCHEMA, c->schema, AT_ANY, NULL };
	x_ev(&x, jn->root, &root, NULL, out);
	if (jn != e->jn)
		wmap__jn_free(jn);
}

static void check_expr(check *c, const wmap_expr *e)
{
	const wmap_path *p = e ? e->path : NULL;
	size_t n = wmap__path_n_steps(p);
	walk w = { AT_SCHEMA, c->schema, AT_ANY, NULL };
	char at[512] = "", why[256];
	if (n == 0 || c->oom)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *key;
		wmap_path_step_kind k = wmap__path_step(p, i, &key);
		const char *here = at[0] ? at : "the top level";
		int rc = k == WMAP_PATH_KEY ? step_key(&w, key, i == 0, here, why, sizeof(why))
					    : step_iter_or_index(&w, k == WMAP_PATH_INDEX, here, why, sizeof(why));
		if (rc) {
			char msg[1600], place[1024];
			/* The place is file:line:column, or "source: <field>" without positions;
			 * name the Karta field in both cases. */
			expr_place(place, sizeof(place), e);
			snprintf(msg, sizeof(msg), "%s: path \"%s\" is not in the schema of %s: %s", place, e->text,
				 c->what, why);
			add_finding(c, msg, e->where, e->text, why);
			return;
		}
		append_step(at, sizeof(at), p, i);
	}
}

/* Every expression: a plain path as above, then (also for a plain path's select keys) the
 * abstract walk; out gets the places it yields (NULL: not wanted). */
static void check_any(check *c, const wmap_expr *e, aval *out)
{
	aval tmp;
	int parsed, before;
	if (!out)
		out = &tmp;
	memset(out, 0, sizeof(*out));
	if (!e || c->oom)
		return;
	before = (int)json_array_size(c->findings);
	check_expr(c, e);
	if ((int)json_array_size(c->findings) > before) {
		out->other = 1;
		return; /* the plain walk said it */
	}
	x_places(c, e, out, &parsed);
}

/* What wmap writes or reads under the places of a pod template, pod spec or metadata
 * expression must be in the schema too (else the API server prunes the labels the webhook
 * stamps). */
static void check_below(check *c, const wmap_expr *e, const aval *v, const char *const *steps)
{
	for (size_t i = 0; i < v->n && !c->oom; i++)
		for (const char *const *st = steps; *st; st++) {
			char path[128], at[AV_AT + 128], why[512];
			aplace p = v->p[i];
			int rc = 0;
			snprintf(path, sizeof(path), "%s", *st);
			snprintf(at, sizeof(at), "%s", p.at);
			for (char *tok = path, *dot; tok && rc == 0; tok = dot) {
				if ((dot = strchr(tok, '.')) != NULL)
					*dot++ = '\0';
				rc = step_key(&p.w, tok, at[0] == 0, at[0] ? at : "the top level", why, sizeof(why));
				size_t l = strlen(at);
				snprintf(at + l, sizeof(at) - l, ".%s", tok);
			}
			if (rc) {
				char msg[2048], place[1024];
				expr_place(place, sizeof(place), e);
				snprintf(msg, sizeof(msg), "%s: wmap writes or reads %s under \"%s\", which is not in the schema of %s: %s",
					 place, at, e->text, c->what, why);
				add_finding(c, msg, e->where, e->text, why);
			}
		}
}

static void check_component(check *c, const wmap_component *comp)
{
	static const char *const template_fields[] = { "metadata.labels", "metadata.annotations", "spec.schedulerName",
						       "spec.priorityClassName", NULL };
	static const char *const podspec_fields[] = { "schedulerName", "priorityClassName", NULL };
	static const char *const meta_fields[] = { "labels", "annotations", NULL };
	aval v;

	check_any(c, comp->template_path, &v);
	check_below(c, comp->template_path, &v, template_fields);
	check_any(c, comp->podspec_path, &v);
	check_below(c, comp->podspec_path, &v, podspec_fields);
	check_any(c, comp->metadata_path, &v);
	check_below(c, comp->metadata_path, &v, meta_fields);
	for (int f = 0; f < WMAP_FRAG_COUNT; f++)
		check_any(c, comp->frag[f], NULL);
	check_any(c, comp->replicas_path, NULL);
	check_any(c, comp->min_replicas_path, NULL);
	check_any(c, comp->max_replicas_path, NULL);
	check_any(c, comp->instance_id_path, NULL);
	for (size_t i = 0; i < comp->n_suspend; i++)
		check_any(c, comp->suspend[i].path, NULL);
	for (size_t i = 0; i < comp->n_resume; i++)
		check_any(c, comp->resume[i].path, NULL);
	if (comp->status) {
		const wmap_status_def *sd = comp->status;
		check_any(c, sd->phase_path, &v);
		check_any(c, sd->conditions_path, NULL);
		for (int s = 0; s < WMAP_STATUS_COUNT; s++)
			for (size_t m = 0; m < sd->n_matchers[s]; m++) {
				const wmap_matcher *mt = &sd->matchers[s][m];
				check_any(c, mt->expression, NULL);
				if (mt->by_phase && sd->phase_path) {
					/* byPhase values must be in the phase field's enum */
					node lit = { .k = N_LITERAL };
					char where[256], place[1024];
					wmap_expr fake = *sd->phase_path;
					xwalk x = { c, &fake, 0, 1 };
					lit.lit = json_string(mt->by_phase);
					snprintf(where, sizeof(where),
						 ".spec.structureDefinition.rootComponent.statusDefinition.statusMappings.%s[%zu].byPhase",
						 wmap_status_key((wmap_status)s), m);
					fake.where = where;
					fake.place = where;
					if (c->source) {
						snprintf(place, sizeof(place), "%s: %s", c->source, where);
						fake.place = place;
					}
					if (!lit.lit)
						c->oom = 1;
					else
						x_enum(&x, &v, &lit);
					json_decref(lit.lit);
				}
			}
	}
	/* Not here: componentTypeSelector, componentInstanceSelector and replicaSelector paths
	 * are evaluated on Pods, not on the workload. */
}

int wmap_schema_check(json_t **findings, const wmap_definition *def, const json_t *crd,
		      wmap_error *err)
{
	const wmap_gvk *gvk = def && def->n_components ? def->components[0].kind : NULL;
	char what[512];
	json_t *out = NULL;
	int rc = 0;

	*findings = NULL;
	if (!gvk)
		return wmap_error_set(err, WMAP_EINVAL, "the definition has no root kind to check");
	if (!json_is_object(crd) || !wmap_schema_crd_matches(crd, gvk->group, gvk->kind)) {
		const json_t *spec = json_object_get(crd, "spec");
		const char *g = json_string_value(json_object_get(spec, "group"));
		const char *k = json_string_value(json_object_get(json_object_get(spec, "names"), "kind"));
		return wmap_error_set(err, WMAP_EINVAL,
				      "the CustomResourceDefinition defines %s%s%s, not the definition's kind %s.%s",
				      k ? k : "no kind", g ? "." : "", g ? g : "", gvk->kind, gvk->group);
	}
	snprintf(what, sizeof(what), "%s/%s %s", gvk->group, gvk->version, gvk->kind);
	if (!(out = json_array())) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	const json_t *schema = version_schema(crd, gvk->version);
	if (!json_is_object(schema)) {
		char msg[1024], why[512];
		const char *name = json_string_value(json_object_get(json_object_get(crd, "metadata"), "name"));
		snprintf(why, sizeof(why), "the CustomResourceDefinition %s has no schema for version %s",
			 name ? name : "?", gvk->version);
		snprintf(msg, sizeof(msg), "%s: %s", def->source ? def->source : def->name, why);
		if (json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s}", "message", msg, "field",
							 ".spec.structureDefinition.rootComponent.kind.version",
							 "path", "", "reason", why)))
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (preserves(schema))
		goto cleanup; /* the whole object is kept: nothing to check */
	check c = { schema, what, out, 0, def->source };
	for (size_t i = 0; i < def->n_components && !c.oom; i++)
		check_component(&c, &def->components[i]);
	if (c.oom)
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
cleanup:
	if (rc) {
		json_decref(out);
		return rc;
	}
	*findings = out;
	return 0;
}
