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
	       AT_ANY } at_kind;

typedef struct walk {
	at_kind at;
	const json_t *s;
} walk;

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

static int step_iter(walk *w, const char *at, char *why, size_t len)
{
	if (w->at == AT_ANY)
		return 0;
	if (w->at == AT_STRMAP) {
		w->at = AT_STRING; /* the string values themselves */
		return 0;
	}
	if (w->at == AT_STRING || w->at == AT_META) {
		snprintf(why, len, "%s is %s, not a list", at, w->at == AT_STRING ? "a string" : "ObjectMeta");
		return -1;
	}
	const json_t *s = w->s;
	const char *type = json_string_value(json_object_get(s, "type"));
	if (type && strcmp(type, "array") == 0) {
		const json_t *items = json_object_get(s, "items");
		if (json_is_object(items))
			w->s = items;
		else
			w->at = AT_ANY;
		return 0;
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
} check;

static void check_expr(check *c, const wmap_expr *e)
{
	const wmap_path *p = e ? e->path : NULL;
	size_t n = wmap__path_n_steps(p);
	walk w = { AT_SCHEMA, c->schema };
	char at[512] = "", why[256];
	if (n == 0 || c->oom)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *key;
		wmap_path_step_kind k = wmap__path_step(p, i, &key);
		const char *here = at[0] ? at : "the top level";
		int rc = k == WMAP_PATH_KEY ? step_key(&w, key, i == 0, here, why, sizeof(why))
					    : step_iter(&w, here, why, sizeof(why));
		if (rc) {
			char msg[1600];
			/* The place is file:line:column, or "source: <field>" without positions;
			 * name the Karta field in both cases. */
			size_t pl = strlen(e->place), wl = strlen(e->where);
			int named = pl >= wl && strcmp(e->place + pl - wl, e->where) == 0;
			snprintf(msg, sizeof(msg), "%s%s%s: path \"%s\" is not in the schema of %s: %s",
				 e->place, named ? "" : ": ", named ? "" : e->where, e->text, c->what,
				 why);
			if (json_array_append_new(c->findings,
						  json_pack("{s:s, s:s, s:s, s:s}", "message", msg, "field",
							    e->where, "path", e->text, "reason", why)))
				c->oom = 1;
			return;
		}
		append_step(at, sizeof(at), p, i);
	}
}

static void check_component(check *c, const wmap_component *comp)
{
	check_expr(c, comp->template_path);
	check_expr(c, comp->podspec_path);
	check_expr(c, comp->metadata_path);
	for (int f = 0; f < WMAP_FRAG_COUNT; f++)
		check_expr(c, comp->frag[f]);
	check_expr(c, comp->replicas_path);
	check_expr(c, comp->min_replicas_path);
	check_expr(c, comp->max_replicas_path);
	check_expr(c, comp->instance_id_path);
	for (size_t i = 0; i < comp->n_suspend; i++)
		check_expr(c, comp->suspend[i].path);
	for (size_t i = 0; i < comp->n_resume; i++)
		check_expr(c, comp->resume[i].path);
	if (comp->status) {
		const wmap_status_def *sd = comp->status;
		check_expr(c, sd->phase_path);
		check_expr(c, sd->conditions_path);
		for (int s = 0; s < WMAP_STATUS_COUNT; s++)
			for (size_t m = 0; m < sd->n_matchers[s]; m++)
				check_expr(c, sd->matchers[s][m].expression);
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
	check c = { schema, what, out, 0 };
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
