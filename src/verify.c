/* wmap: what a definition found nothing for (see wmap/verify.h). Reads a resolved workload
 * only; the resolver itself stays as lenient as upstream's library. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "wmap/verify.h"

static int add(json_t *out, wmap_error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int add(json_t *out, wmap_error *err, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (json_array_append_new(out, json_string(buf)) != 0)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	return 0;
}

/* "component 'role' (instance head)" or "component 'master'", into buf. */
static const char *who(char *buf, size_t len, const wmap_node *n, const wmap_instance *in)
{
	if (in && in->id && in->id[0])
		snprintf(buf, len, "component '%s' (instance %s)", n->def->name, in->id);
	else
		snprintf(buf, len, "component '%s'", n->def->name);
	return buf;
}

static int has_containers(const json_t *v)
{
	return json_is_array(v) && json_array_size(v) > 0;
}

/* 1 when the instance's spec path found something in the object. */
static int found(const wmap_component *c, const wmap_instance *in)
{
	if (c->shape != WMAP_SPEC_FRAGMENTED)
		return in->has_pod;
	for (int f = 0; f < WMAP_FRAG_COUNT; f++)
		if (in->pod.frag[f].value)
			return 1;
	return 0;
}

/* The expression a component's pods are read from, and its field name. */
static const wmap_expr *spec_expr(const wmap_component *c, const char **key)
{
	*key = c->shape == WMAP_SPEC_TEMPLATE ? "podTemplateSpecPath" : "podSpecPath";
	if (c->shape != WMAP_SPEC_FRAGMENTED)
		return c->shape == WMAP_SPEC_TEMPLATE ? c->template_path : c->podspec_path;
	for (int f = 0; f < WMAP_FRAG_COUNT; f++) {
		if (c->frag[f]) {
			*key = wmap_frag_field_key((wmap_frag_field)f);
			return c->frag[f];
		}
	}
	return NULL;
}

/* Follows the leading `.key` steps of a path expression through the object; where a key is
 * missing and the map holds one spelled the same but for case, copies that key into hint.
 * Anything but plain keys (iteration, pipes, ...) ends the walk without a hint. */
static int case_typo(char *hint, size_t len, const json_t *object, const char *text)
{
	const json_t *at = object;
	const char *p = text;

	while (p && *p == '.' && json_is_object(at)) {
		char key[256];
		size_t k = 0;

		p++;
		while ((*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9')) &&
		       k + 1 < sizeof(key))
			key[k++] = *p++;
		key[k] = '\0';
		if (k == 0 || (*p && *p != '.'))
			return 0;
		const json_t *next = json_object_get(at, key);
		if (next) {
			at = next;
			continue;
		}
		const char *other;
		json_t *v;
		json_object_foreach((json_t *)at, other, v) {
			if (strcasecmp(other, key) == 0) {
				snprintf(hint, len, "%s", other);
				return 1;
			}
		}
		return 0;
	}
	return 0;
}

/* A pod-bearing component's instances: the spec path found something, with containers. */
static int check_pods(json_t *out, const wmap_workload *w, const wmap_node *n, int all,
		      wmap_error *err)
{
	const wmap_component *c = n->def;
	const char *key;
	const wmap_expr *e = spec_expr(c, &key);
	char name[400], hint[256];
	int rc = 0;

	for (size_t i = 0; i < n->n_instances && rc == 0; i++) {
		const wmap_instance *in = &n->instances[i];
		who(name, sizeof(name), n, in);
		if (!found(c, in)) {
			if (e && case_typo(hint, sizeof(hint), w->object, wmap_expr_text(e)))
				rc = add(out, err, "%s: %s \"%s\" matched nothing in the object, which has \"%s\" there (keys are case-sensitive)",
					 name, key, wmap_expr_text(e), hint);
			else if (all && e)
				rc = add(out, err, "%s: %s \"%s\" matched nothing in the object", name, key,
					 wmap_expr_text(e));
			continue;
		}
		if (in->desired == 0 && !all)
			continue; /* a role scaled to zero (or absent): its spec runs no pod */
		if (c->shape != WMAP_SPEC_FRAGMENTED) {
			if (!has_containers(json_object_get(in->pod.spec.value, "containers")))
				rc = add(out, err, "%s: the pod spec%s%s has no containers", name,
					 in->pod.spec.pointer ? " at " : "",
					 in->pod.spec.pointer ? in->pod.spec.pointer : "");
			continue;
		}
		const wmap_expr *ce = c->frag[WMAP_FRAG_CONTAINERS], *c1 = c->frag[WMAP_FRAG_CONTAINER];
		if ((ce || c1) && !has_containers(in->pod.frag[WMAP_FRAG_CONTAINERS].value) &&
		    !json_is_object(in->pod.frag[WMAP_FRAG_CONTAINER].value))
			rc = add(out, err, "%s: the pod spec has no containers (%s \"%s\" matched nothing)", name,
				 ce ? "containersPath" : "containerPath", wmap_expr_text(ce ? ce : c1));
	}
	return rc;
}

/* 1 when some pod-bearing component found something in the object. */
static int any_pods(const wmap_workload *w)
{
	for (size_t i = 0; i < w->n_nodes; i++) {
		const wmap_node *n = &w->nodes[i];
		if (!wmap_component_has_pods(n->def))
			continue;
		for (size_t k = 0; k < n->n_instances; k++)
			if (found(n->def, &n->instances[k]))
				return 1;
	}
	return 0;
}

static int status_present(const json_t *object)
{
	const json_t *st = json_object_get(object, "status");
	return json_is_object(st) && json_object_size(st) > 0;
}

int wmap_workload_verify(json_t **out, const wmap_workload *w, unsigned flags, wmap_error *err)
{
	json_t *list = json_array();
	/* A definition that finds no pods at all is checked as thoroughly as a sample. */
	int all = (flags & WMAP_VERIFY_ALL) || !any_pods(w);
	char name[400];
	int rc = 0;

	*out = NULL;
	if (!list)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	for (size_t i = 0; i < w->n_nodes && rc == 0; i++) {
		const wmap_node *n = &w->nodes[i];
		if (n->def->instance_id_path && n->n_instances == 0) {
			if (all)
				rc = add(list, err, "%s: instanceIdPath \"%s\" found no instances in the object",
					 who(name, sizeof(name), n, NULL),
					 wmap_expr_text(n->def->instance_id_path));
		} else if (wmap_component_has_pods(n->def)) {
			rc = check_pods(list, w, n, all, err);
		}
	}
	if (rc == 0 && !(flags & WMAP_VERIFY_NO_STATUS) && w->statuses == 0 &&
	    status_present(w->object)) {
		if (w->phase)
			rc = add(list, err, "no status mapping of definition %s matched the object's .status (phase \"%s\")",
				 w->definition->name, w->phase);
		else
			rc = add(list, err, "no status mapping of definition %s matched the object's .status",
				 w->definition->name);
	}
	if (rc) {
		json_decref(list);
		return rc;
	}
	*out = list;
	return 0;
}
