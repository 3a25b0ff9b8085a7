/* wmap: resolving a workload object through its definition (see include/wmap/workload.h).
 *
 * Each component's expressions run once over the whole object; their results are zipped
 * with the component's instance ids by index, as upstream does (reference 5.3). A spec path
 * with [] must therefore yield exactly one result per instance, in the same order; anything
 * else is an error that names the component, the expression and both counts. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "status.h"
#include "jqnative.h"
#include "wmap/apiversion.h"
#include "wmap/arena.h"
#include "wmap/json_text.h"
#include "wmap/workload.h"

int wmap__fragment_resources(wmap_resources *out, const wmap_pod *pod, wmap_error *err);

typedef struct rctx {
	wmap_engine *eng;
	const wmap_definition *def;
	wmap_input in;
	wmap_workload *w;
	unsigned flags;
	wmap_error *err;
} rctx;

static int oom(rctx *c)
{
	return wmap_error_set(c->err, WMAP_ENOMEM, "out of memory");
}

static int add_warning(wmap_workload *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int add_warning(wmap_workload *w, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char **nw = realloc(w->warnings, (w->n_warnings + 1) * sizeof(*nw));
	if (!nw)
		return -1;
	w->warnings = nw;
	if (!(w->warnings[w->n_warnings] = strdup(buf)))
		return -1;
	w->n_warnings++;
	return 0;
}

static int eval(rctx *c, wmap_results *out, const wmap_expr *e, int want_pointers)
{
	return wmap__eval(out, c->eng, c->def, e, &c->in, want_pointers, c->err);
}

/* Takes r's pointers (r is cleared right after: no copy per instance). */
static int set_location(rctx *c, wmap_location *loc, wmap_result *r)
{
	(void)c;
	/* A reference of its own: a jq projection's value is not part of the object. */
	loc->value = r->value && !json_is_null(r->value) ? json_incref(r->value) : NULL;
	loc->pointer = r->pointer;
	r->pointer = NULL;
	loc->create_at = r->create_at;
	r->create_at = NULL;
	loc->create = json_incref(r->create);
	return 0;
}

/* Review memory (wmap/arena.h) for the workload's own arrays and strings: the workload of a
 * review is made and freed in its scope, so a 128-group RayCluster's instances, ids and
 * pointers cost a bump each rather than a malloc and a free. Zeroed; NULL on overflow or
 * when memory runs out. */
static void *zalloc(size_t n, size_t size)
{
	if (n && size > SIZE_MAX / n)
		return NULL;
	unsigned char *p = wmap_arena_alloc(n * size);
	/* Zeroed a block at a time: glibc clears a large block with `rep stosb`, which the
	 * instruction counts of the bench (callgrind) count byte by byte. */
	for (size_t at = 0; p && at < n * size; at += 1024)
		memset(p + at, 0, n * size - at < 1024 ? n * size - at : 1024);
	return p;
}

/* The locations below a template: its "/spec" and "/metadata". A template is an object of
 * two members as a rule: read member by member, in one pass, rather than hashed twice. */
static int template_parts(rctx *c, wmap_pod *pod)
{
	const wmap_location *t = &pod->template_;
	json_t *spec = NULL, *md = NULL;
	if (t->value && json_is_object(t->value)) {
		if (json_object_size(t->value) > 8) {
			spec = json_object_get(t->value, "spec");
			md = json_object_get(t->value, "metadata");
		} else {
			const char *k;
			size_t kn;
			json_t *v;
			json_object_keylen_foreach(t->value, k, kn, v) {
				if (kn == 4 && memcmp(k, "spec", 4) == 0)
					spec = v;
				else if (kn == 8 && memcmp(k, "metadata", 8) == 0)
					md = v;
			}
		}
	}
	pod->spec.value = spec && !json_is_null(spec) ? json_incref(spec) : NULL;
	pod->metadata.value = md && !json_is_null(md) ? json_incref(md) : NULL;
	if (t->pointer) {
		/* Both in one block, spec's: wmap_workload_free gives back the spec pointer only. */
		size_t bl = strlen(t->pointer);
		char *b = wmap_arena_alloc(2 * bl + sizeof("/spec") + sizeof("/metadata"));
		if (!b)
			return oom(c);
		memcpy(b, t->pointer, bl);
		memcpy(b + bl, "/spec", sizeof("/spec"));
		pod->spec.pointer = b;
		b += bl + sizeof("/spec");
		memcpy(b, t->pointer, bl);
		memcpy(b + bl, "/metadata", sizeof("/metadata"));
		pod->metadata.pointer = b;
	}
	return 0;
}

static int count_mismatch(rctx *c, const wmap_component *comp, const wmap_expr *e, size_t ids,
			  size_t got)
{
	return wmap_error_set(c->err, WMAP_EEVAL,
			      "component '%s': %s \"%s\": instance ids count (%zu) does not match results count (%zu)",
			      comp->name, e->where, e->text, ids, got);
}

/* Reads a scale value: a number (a plain one included, wmap_result.is_num) or a numeric
 * string. */
static int scale_value(rctx *c, const wmap_component *comp, const wmap_expr *e, const wmap_result *res,
		       size_t index, int *has, int64_t *out)
{
	const json_t *v = res->value;
	*has = 0;
	if (res->is_num) {
		*out = res->num;
	} else if (!v || json_is_null(v)) {
		return 0;
	} else if (json_is_integer(v)) {
		*out = json_integer_value(v);
	} else if (json_is_real(v)) {
		*out = (int64_t)json_real_value(v);
	} else if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		long long n = strtoll(s, &end, 10);
		if (!*s || *end || n > INT32_MAX || n < INT32_MIN)
			return wmap_error_set(c->err, WMAP_EEVAL,
					      "component '%s': %s: replicas value \"%s\" at index %zu is not a number",
					      comp->name, e->where, s, index);
		*out = n;
	} else {
		return wmap_error_set(c->err, WMAP_EEVAL,
				      "component '%s': %s: replicas value at index %zu is not a number",
				      comp->name, e->where, index);
	}
	if (*out < 0)
		return wmap_error_set(c->err, WMAP_EEVAL, "component '%s': %s: replicas value at index %zu is negative",
				      comp->name, e->where, index);
	*has = 1;
	return 0;
}

/* The text of a number id (wmap_json_text, malloc'ed), NULL when memory runs out. */
static char *number_id(const json_t *v, size_t *len)
{
	char *s = wmap_json_text(v, NULL); /* freed with free(): not jansson's allocator */
	if (s)
		*len = strlen(s);
	return s;
}

/* A node's instances and their ids' text are one block, the instances first:
 * wmap_workload_free gives back node->instances alone. */
static int instance_ids(rctx *c, const wmap_component *comp, wmap_node *node)
{
	wmap_results r = { 0 };
	int rc;

	if (!comp->instance_id_path) {
		node->instances = zalloc(1, sizeof(*node->instances) + 1);
		if (!node->instances)
			return oom(c);
		node->instances[0].id = (char *)(node->instances + 1); /* "": zeroed */
		node->n_instances = 1;
		return 0;
	}
	if ((rc = eval(c, &r, comp->instance_id_path, 0)))
		return rc;
	size_t n = r.n ? r.n : 1, text = 0, len;
	for (size_t i = 0; i < r.n; i++) {
		const json_t *v = r.v[i].value;
		if (json_is_string(v) && *json_string_value(v)) {
			text += json_string_length(v) + 1;
		} else if (json_is_integer(v) || json_is_real(v)) {
			char *s = number_id(v, &len);
			if (!s) {
				wmap__results_clear(&r);
				return oom(c);
			}
			free(s);
			text += len + 1;
		}
	}
	node->instances = zalloc(1, n * sizeof(*node->instances) + text);
	if (!node->instances) {
		wmap__results_clear(&r);
		return oom(c);
	}
	char *at = (char *)(node->instances + n);
	for (size_t i = 0; i < r.n; i++) {
		const json_t *v = r.v[i].value;
		char *id = at;
		if (json_is_string(v) && *json_string_value(v)) {
			len = json_string_length(v);
			memcpy(at, json_string_value(v), len);
		} else if (json_is_integer(v) || json_is_real(v)) {
			char *s = number_id(v, &len);
			if (!s) {
				rc = oom(c);
				break;
			}
			memcpy(at, s, len);
			free(s);
		} else {
			rc = wmap_error_set(c->err, WMAP_EEVAL,
					    "component '%s': %s \"%s\": instance id %zu is %s", comp->name,
					    comp->instance_id_path->where, comp->instance_id_path->text, i,
					    json_is_string(v) ? "an empty string" : "not a string");
			break;
		}
		at[len] = '\0';
		at += len + 1;
		node->instances[node->n_instances++].id = id;
	}
	wmap__results_clear(&r);
	return rc;
}

/* Evaluates e and zips its results with the node's instances. Single-instance components
 * take the first result (none means absent); multi-instance ones need one per instance. */
static int zipped(rctx *c, const wmap_component *comp, const wmap_node *node, const wmap_expr *e,
		  int want_pointers, wmap_results *r)
{
	int rc = eval(c, r, e, want_pointers);
	if (rc)
		return rc;
	if (comp->instance_id_path && r->n != node->n_instances)
		return count_mismatch(c, comp, e, node->n_instances, r->n);
	if (!comp->instance_id_path && r->n > 1)
		return count_mismatch(c, comp, e, 1, r->n);
	return 0;
}

static int resolve_pods(rctx *c, const wmap_component *comp, wmap_node *node)
{
	wmap_results r = { 0 };
	int rc = 0;

	for (size_t i = 0; i < node->n_instances; i++)
		node->instances[i].pod.shape = comp->shape;
	if (comp->shape == WMAP_SPEC_TEMPLATE || comp->shape == WMAP_SPEC_PODSPEC) {
		const wmap_expr *e = comp->shape == WMAP_SPEC_TEMPLATE ? comp->template_path : comp->podspec_path;
		if ((rc = zipped(c, comp, node, e, 1, &r)))
			goto out;
		for (size_t i = 0; i < node->n_instances && i < r.n; i++) {
			wmap_pod *pod = &node->instances[i].pod;
			if (comp->shape == WMAP_SPEC_TEMPLATE) {
				if ((rc = set_location(c, &pod->template_, &r.v[i])) || (rc = template_parts(c, pod)))
					goto out;
			} else if ((rc = set_location(c, &pod->spec, &r.v[i]))) {
				goto out;
			}
			node->instances[i].has_pod = pod->spec.value != NULL;
		}
		wmap__results_clear(&r);
		if (comp->shape == WMAP_SPEC_PODSPEC && comp->metadata_path) {
			if ((rc = zipped(c, comp, node, comp->metadata_path, 1, &r)))
				goto out;
			for (size_t i = 0; i < node->n_instances && i < r.n; i++)
				if ((rc = set_location(c, &node->instances[i].pod.metadata, &r.v[i])))
					goto out;
			wmap__results_clear(&r);
		}
	} else if (comp->shape == WMAP_SPEC_FRAGMENTED) {
		for (int f = 0; f < WMAP_FRAG_COUNT; f++) {
			if (!comp->frag[f])
				continue;
			/* Upstream takes the longest result list and leaves missing indices empty. */
			if ((rc = eval(c, &r, comp->frag[f], 1)))
				goto out;
			if (comp->instance_id_path && r.n > node->n_instances) {
				rc = count_mismatch(c, comp, comp->frag[f], node->n_instances, r.n);
				goto out;
			}
			for (size_t i = 0; i < node->n_instances && i < r.n; i++) {
				if ((rc = set_location(c, &node->instances[i].pod.frag[f], &r.v[i])))
					goto out;
				if (node->instances[i].pod.frag[f].value || node->instances[i].pod.frag[f].pointer)
					node->instances[i].has_pod = 1;
			}
			wmap__results_clear(&r);
		}
	}
out:
	wmap__results_clear(&r);
	return rc;
}

static int resolve_scale(rctx *c, const wmap_component *comp, wmap_node *node)
{
	const wmap_expr *paths[3] = { comp->replicas_path, comp->min_replicas_path, comp->max_replicas_path };
	wmap_results r = { 0 };
	wmap_jn_memo memo = { 0 }; /* what the three read on each instance, read once */
	int rc = 0;

	c->in.memo = &memo;
	for (int k = 0; k < 3; k++) {
		if (!paths[k])
			continue;
		if ((rc = zipped(c, comp, node, paths[k], WMAP_EVAL_NUMBERS, &r)))
			break;
		for (size_t i = 0; i < node->n_instances && i < r.n; i++) {
			wmap_instance *in = &node->instances[i];
			int *has = k == 0 ? &in->has_replicas : k == 1 ? &in->has_min
								       : &in->has_max;
			int64_t *v = k == 0 ? &in->replicas : k == 1 ? &in->min_replicas
								     : &in->max_replicas;
			if ((rc = scale_value(c, comp, paths[k], &r.v[i], i, has, v)))
				goto out;
		}
		wmap__results_clear(&r);
	}
out:
	c->in.memo = NULL;
	wmap__jn_memo_release(&memo);
	wmap__results_clear(&r);
	for (size_t i = 0; i < node->n_instances; i++) {
		wmap_instance *in = &node->instances[i];
		in->desired = in->has_replicas ? in->replicas : in->has_min ? in->min_replicas
									    : 1;
	}
	return rc;
}

/* An optional role the object leaves out (a PyTorchJob without a Master) runs no pods: the
 * default of 1 replica does not apply to it. A count the definition states explicitly still
 * does (a RayJob's submitter pod exists even without a template: KubeRay makes a default). */
static void drop_absent(const wmap_component *comp, wmap_node *node)
{
	if (comp->shape != WMAP_SPEC_TEMPLATE && comp->shape != WMAP_SPEC_PODSPEC)
		return;
	for (size_t i = 0; i < node->n_instances; i++) {
		wmap_instance *in = &node->instances[i];
		if (!in->has_pod && !in->has_replicas && !in->has_min)
			in->desired = 0;
	}
}

static void res_add(wmap_resources *a, const wmap_resources *b)
{
	a->gpu += b->gpu;
	a->cpu_milli += b->cpu_milli;
	if (a->memory == 0)
		a->memory_family = b->memory_family; /* as Quantity.Add */
	a->memory += b->memory;
}

static void res_scale(wmap_resources *out, const wmap_resources *per, int64_t n)
{
	/* replicas are int32 and quantities are bounded, so this cannot overflow int64 in
	 * practice; saturate rather than wrap if a hostile object tries. */
	const int64_t cap = INT64_MAX / 2;
	out->gpu = n && per->gpu > cap / n ? cap : per->gpu * n;
	out->cpu_milli = n && per->cpu_milli > cap / n ? cap : per->cpu_milli * n;
	out->memory = n && per->memory > cap / n ? cap : per->memory * n;
	out->memory_family = per->memory_family;
}

static int resolve_resources(rctx *c, const wmap_component *comp, wmap_node *node)
{
	for (size_t i = 0; i < node->n_instances; i++) {
		wmap_instance *in = &node->instances[i];
		int rc = 0;
		if (!in->has_pod)
			continue;
		if (comp->shape == WMAP_SPEC_FRAGMENTED)
			rc = wmap__fragment_resources(&in->per_replica, &in->pod, c->err);
		else
			rc = wmap_pod_resources(&in->per_replica, in->pod.spec.value,
						in->pod.spec.pointer ? in->pod.spec.pointer : "", c->err);
		if (rc) {
			wmap_error_prefix(c->err, "component '%s'", comp->name);
			return rc;
		}
		res_scale(&in->total, &in->per_replica, in->desired);
		res_add(&node->own, &in->total);
	}
	return 0;
}

/* Totals bottom-up: a grouping component counts its children's pods. */
static void sum_tree(wmap_workload *w, int i)
{
	wmap_node *n = &w->nodes[i];
	int64_t children = 0;
	n->total = n->own;
	for (size_t k = 0; k < n->n_children; k++) {
		sum_tree(w, n->children[k]);
		res_add(&n->total, &w->nodes[n->children[k]].total);
		children += w->nodes[n->children[k]].desired;
	}
	if (wmap_component_has_pods(n->def)) {
		n->desired = 0;
		for (size_t k = 0; k < n->n_instances; k++)
			n->desired += n->instances[k].desired;
		w->desired += n->desired;
		res_add(&w->total, &n->own);
	} else {
		n->desired = children;
	}
}

int wmap_workload_resolve_ex(wmap_workload **out, wmap_engine *eng, json_t *object,
			     const wmap_definition *def, unsigned flags, wmap_error *err)
{
	rctx c = { eng, def, { object, NULL, NULL }, NULL, flags, err };
	wmap_workload *w;
	int rc = 0, exact = 1;

	*out = NULL;
	if (!json_is_object(object))
		return wmap_error_set(err, WMAP_EINVAL, "the object is not a mapping");
	if (!def) {
		if ((rc = wmap_registry_find_object(&def, wmap_engine_registry(eng), object, err)))
			return rc;
		c.def = def;
	}
	const wmap_gvk *g = def->components[0].kind;
	const char *api = json_string_value(json_object_get(object, "apiVersion"));
	wmap_api_version av;
	wmap_api_version_split(&av, api);
	exact = g && g->version && strcmp(av.version, g->version) == 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return oom(&c);
	c.w = w;
	w->object = json_incref(object);
	w->definition = def;
	w->exact_version = exact;
	const json_t *md = json_object_get(object, "metadata");
	if (md && !json_is_object(md)) {
		rc = wmap_error_set(err, WMAP_EINVAL, ".metadata: must be an object");
		goto out;
	}
	w->api_version = json_string_value(json_object_get(object, "apiVersion"));
	w->kind = json_string_value(json_object_get(object, "kind"));
	w->name = json_string_value(json_object_get(md, "name"));
	w->generate_name = json_string_value(json_object_get(md, "generateName"));
	w->namespace_ = json_string_value(json_object_get(md, "namespace"));
	if (!exact && add_warning(w, "%s %s is read through definition %s, written for version %s",
				  w->kind, w->api_version, def->name, def->components[0].kind->version)) {
		rc = oom(&c);
		goto out;
	}

	if (!(flags & WMAP_RESOLVE_NO_STATUS)) {
		wmap_status_result st;
		if ((rc = wmap__status_eval(&st, eng, def, &c.in, err)))
			goto out;
		w->statuses = st.statuses;
		w->phase = st.phase;
		w->n_conditions = st.n_conditions;
		w->conditions = st.conditions;
	}

	w->nodes = zalloc(def->n_components, sizeof(*w->nodes));
	if (!w->nodes) {
		rc = oom(&c);
		goto out;
	}
	w->n_nodes = def->n_components;
	for (size_t i = 0; i < def->n_components; i++) {
		const wmap_component *comp = &def->components[i];
		wmap_node *node = &w->nodes[i];
		node->def = comp;
		node->index = (int)i;
		if ((rc = instance_ids(&c, comp, node)) || (rc = resolve_scale(&c, comp, node)) ||
		    (rc = resolve_pods(&c, comp, node)))
			goto out;
		drop_absent(comp, node);
		if (!(flags & WMAP_RESOLVE_NO_RESOURCES) && (rc = resolve_resources(&c, comp, node)))
			goto out;
		if (comp->parent >= 0) {
			wmap_node *p = &w->nodes[comp->parent];
			int *nc = realloc(p->children, (p->n_children + 1) * sizeof(*nc));
			if (!nc) {
				rc = oom(&c);
				goto out;
			}
			p->children = nc;
			p->children[p->n_children++] = (int)i;
		}
	}
	sum_tree(w, 0);
out:
	wmap__input_release(&c.in);
	if (rc) {
		wmap_workload_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int wmap_workload_resolve(wmap_workload **out, wmap_engine *eng, json_t *object,
			  const wmap_definition *def, wmap_error *err)
{
	return wmap_workload_resolve_ex(out, eng, object, def, 0, err);
}

static void location_free(wmap_location *l)
{
	if (!l->pointer && !l->value && !l->create_at && !l->create)
		return;                 /* most are unset: a template's fragments, a fragmented pod's template */
	wmap_arena_release(l->pointer); /* review memory, or malloc'ed (wmap/arena.h) */
	json_decref(l->value);
	wmap_arena_release(l->create_at);
	json_decref(l->create);
}

void wmap_workload_free(wmap_workload *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n_nodes; i++) {
		wmap_node *n = &w->nodes[i];
		for (size_t k = 0; k < n->n_instances; k++) {
			wmap_instance *in = &n->instances[k];
			/* Nothing here reads n->def: a workload may outlive its definition (the
			 * webhook's exporter frees old workloads after a swap of definitions). A
			 * template's metadata pointer is in its spec pointer's block
			 * (template_parts): right after the spec pointer's text. */
			const char *sp = in->pod.spec.pointer;
			if (sp && in->pod.metadata.pointer == sp + strlen(sp) + 1)
				in->pod.metadata.pointer = NULL;
			location_free(&in->pod.template_);
			location_free(&in->pod.spec);
			location_free(&in->pod.metadata);
			/* fragments are only ever set on a fragmented pod (resolve_pods) */
			for (int f = 0; in->pod.shape == WMAP_SPEC_FRAGMENTED && f < WMAP_FRAG_COUNT; f++)
				location_free(&in->pod.frag[f]);
		}
		wmap_arena_release(n->instances);
		free(n->children);
	}
	wmap_arena_release(w->nodes);
	for (size_t i = 0; i < w->n_conditions; i++) {
		free(w->conditions[i].type);
		free(w->conditions[i].status);
		free(w->conditions[i].reason);
		free(w->conditions[i].message);
	}
	free(w->conditions);
	free(w->phase);
	for (size_t i = 0; i < w->n_warnings; i++)
		free(w->warnings[i]);
	free(w->warnings);
	json_decref(w->object);
	free(w);
}

void wmap_workload_status_string(const wmap_workload *w, char *buf, size_t len, const char *sep)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int s = 0; s < WMAP_STATUS_COUNT; s++) {
		if (!(w->statuses & (1u << s)))
			continue;
		int k = snprintf(buf + n, len > n ? len - n : 0, "%s%s", n ? sep : "", wmap_status_name(s));
		if (k > 0)
			n += (size_t)k;
		if (n >= len)
			return;
	}
	if (n == 0)
		snprintf(buf, len, "%s", wmap_status_name(WMAP_STATUS_UNDEFINED));
}
