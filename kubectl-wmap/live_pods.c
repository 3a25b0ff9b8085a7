/* kubectl-wmap: which live pods belong to a workload and where (reference 5.7).
 *
 * Ownership first: a pod of the workload's namespace (every namespace for a cluster-scoped
 * workload) is kept when its controller chain, up to 6 hops, reaches an owner reference
 * with the workload's uid (or the pod is the workload). Owners are fetched once each and
 * cached, misses too; the listed pods are owners as well (LWS workers belong to a
 * StatefulSet owned by the leader Pod). Then each pod-bearing component, in the
 * definition's order, claims the pods its componentTypeSelector matches (a component
 * without one claims all only when it is the only pod-bearing component), and a
 * multi-instance component splits them by componentInstanceSelector. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live_pods.h"
#include "wmap/apiversion.h"
#include "wmap/pods.h"

#define OWNER_HOPS 6

typedef struct attrib {
	live_ctx *lc;
	const wmap_workload *w;
	const char *root_uid;
	json_t *owners; /* "apiVersion|kind|ns|name" -> object or null (a miss) */
	size_t n_pods;
	pod_info *pods;
	wmap_error *err;
} attrib;

/* ---- attribution ------------------------------------------------------------------- */

int live_refs_uid(const json_t *obj, const char *uid)
{
	size_t i;
	json_t *r;

	json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, r) {
		const char *u = json_string_value(json_object_get(r, "uid"));

		if (u && uid && strcmp(u, uid) == 0)
			return 1;
	}
	return 0;
}

static const json_t *owner_of(attrib *d, const json_t *ref, const char *ns)
{
	const char *api = json_string_value(json_object_get(ref, "apiVersion"));
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	const char *name = json_string_value(json_object_get(ref, "name"));
	char key[1024], group[256] = "", version[64] = "";
	const wmap_api_resource *r;
	json_t *obj = NULL;
	char *path;

	if (!api || !kind || !name)
		return NULL;
	snprintf(key, sizeof(key), "%s|%s|%s|%s", api, kind, ns ? ns : "", name);
	if ((obj = json_object_get(d->owners, key)) != NULL)
		return json_is_null(obj) ? NULL : obj;
	if (wmap_api_version_parse(group, sizeof(group), version, sizeof(version), api) != 0) {
		json_object_set_new(d->owners, key, json_null());
		return NULL;
	}
	r = wmap_discovery_find_kind(d->lc->disc, group, version, kind);
	obj = NULL;
	if (r && (path = wmap_resource_path(r, ns, name)) != NULL) {
		wmap_error e = { 0 };

		/* Only metadata is needed (owner references, uid): ask for just that. */
		if (wmap_kube_get_as(&obj, d->lc->client, path,
				     "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
				     "application/json",
				     &e) != 0)
			obj = NULL;
		free(path);
	}
	json_object_set_new(d->owners, key, obj ? obj : json_null());
	return obj;
}

static int belongs(attrib *d, const json_t *pod, const char *ns)
{
	const json_t *obj = pod;
	const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));

	if (uid && d->root_uid && strcmp(uid, d->root_uid) == 0)
		return 1; /* describe pod/NAME: the workload is the pod */

	for (int hop = 0; hop < OWNER_HOPS && obj; hop++) {
		const json_t *ref;

		if (live_refs_uid(obj, d->root_uid))
			return 1;
		if ((ref = wmap_object_controller(obj)) == NULL)
			return 0;
		obj = owner_of(d, ref, ns);
	}
	return 0;
}

/* ---- pods -------------------------------------------------------------------------- */

static const json_t *condition(const json_t *pod, const char *type)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

static int cond_is(const json_t *c, const char *status)
{
	const char *s = json_string_value(json_object_get(c, "status"));

	return s && strcmp(s, status) == 0;
}

/* What kubectl get pods would show for the containers: an init container's trouble as
 * "Init:REASON", else the first container that waits (not merely being created) or ended
 * with a non-zero exit. NULL when none. */
static const char *container_reason(pod_info *p, const json_t *st)
{
	static const char *const lists[2] = { "initContainerStatuses", "containerStatuses" };

	for (int l = 0; l < 2; l++) {
		size_t i;
		json_t *cs;

		json_array_foreach(json_object_get(st, lists[l]), i, cs) {
			const json_t *state = json_object_get(cs, "state");
			const json_t *w = json_object_get(state, "waiting");
			const json_t *t = json_object_get(state, "terminated");
			const char *r = NULL;

			if (w) {
				r = json_string_value(json_object_get(w, "reason"));
				if (r && (strcmp(r, "ContainerCreating") == 0 ||
					  strcmp(r, "PodInitializing") == 0))
					r = NULL;
			} else if (t && json_integer_value(json_object_get(t, "exitCode")) != 0) {
				r = json_string_value(json_object_get(t, "reason"));
				if (!r)
					r = "Error";
			}
			if (!r)
				continue;
			snprintf(p->reason_buf, sizeof(p->reason_buf), "%s%s", l == 0 ? "Init:" : "", r);
			return p->reason_buf;
		}
	}
	return NULL;
}

static void pod_fill(pod_info *p, json_t *pod)
{
	const json_t *st = json_object_get(pod, "status");
	const json_t *sched = condition(pod, "PodScheduled"), *ready = condition(pod, "Ready");
	wmap_error ignored = { 0 };

	p->pod = pod;
	p->name = json_string_value(json_object_get(json_object_get(pod, "metadata"), "name"));
	p->phase = json_string_value(json_object_get(st, "phase"));
	if (!p->phase)
		p->phase = "Unknown";
	p->node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
	if (p->node && !p->node[0])
		p->node = NULL;
	p->ready = ready && cond_is(ready, "True");
	p->healthy = p->ready || strcmp(p->phase, "Succeeded") == 0;
	p->reason = NULL;
	p->restarts = 0;
	{
		size_t i;
		json_t *cs;

		json_array_foreach(json_object_get(st, "containerStatuses"), i, cs)
			p->restarts += json_integer_value(json_object_get(cs, "restartCount"));
	}
	if (!p->ready) {
		if (sched && cond_is(sched, "False"))
			p->reason = json_string_value(json_object_get(sched, "reason"));
		if (!p->reason && strcmp(p->phase, "Succeeded") != 0)
			p->reason = container_reason(p, st);
		if (!p->reason)
			p->reason = json_string_value(json_object_get(st, "reason"));
		if (!p->reason && ready && cond_is(ready, "False"))
			p->reason = json_string_value(json_object_get(ready, "reason"));
	}
	if (wmap_pod_resources(&p->res, json_object_get(pod, "spec"), ".spec", &ignored) != 0)
		memset(&p->res, 0, sizeof(p->res));
	p->comp = -1;
	p->inst = -1;
}

static int pod_cmp(const void *a, const void *b)
{
	const pod_info *x = a, *y = b;

	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static int count_pod_bearing(const wmap_definition *def)
{
	int n = 0;

	for (size_t i = 0; i < def->n_components; i++)
		n += wmap_component_has_pods(&def->components[i]);
	return n;
}

static int place(attrib *d, pod_info *p)
{
	const wmap_workload *w = d->w;
	const wmap_definition *def = w->definition;
	int sole = count_pod_bearing(def) == 1;

	for (size_t k = 0; k < w->n_nodes; k++) {
		const wmap_node *n = &w->nodes[k];
		int m;

		if (!wmap_component_has_pods(n->def))
			continue;
		if (wmap_pod_matches_component(&m, d->lc->eng, def, n->index, p->pod, d->err) != 0)
			return -1;
		if (m < 0)
			m = sole;
		if (!m)
			continue;
		p->comp = (int)k;
		if (n->def->pod_instance_id_path) {
			char *id = NULL;
			wmap_error e = { 0 };

			/* A pod without the id label is not this workload's business. */
			if (wmap_pod_key(&id, d->lc->eng, def, n->index, p->pod, 0, &e) == 0 && id)
				for (size_t i = 0; i < n->n_instances; i++)
					if (strcmp(n->instances[i].id, id) == 0)
						p->inst = (int)i;
			free(id);
			if (p->inst < 0)
				p->comp = -1;
		} else if (n->n_instances > 0) {
			p->inst = 0;
		}
		return 0;
	}
	return 0;
}

/* Owners reached by many pods (a 2,000-pod JobSet has hundreds of Jobs) are listed once per
 * kind instead of fetched one by one: with more than OWNER_LIST_MIN distinct controllers of
 * one kind missing from the cache, the namespace's objects of that kind fill it. */
#define OWNER_LIST_MIN 16

static void prefetch_owners(attrib *d, json_t *items, const char *ns)
{
	json_t *kinds = json_object(), *seen = json_object(), *it;
	const json_t *ref;
	const char *key;
	size_t i;

	if (!kinds || !seen || !ns)
		goto cleanup;
	json_array_foreach(items, i, it) {
		const char *api, *kind, *name;
		char k[600], n[900];
		json_int_t c;

		if (!(ref = wmap_object_controller(it)))
			continue;
		api = json_string_value(json_object_get(ref, "apiVersion"));
		kind = json_string_value(json_object_get(ref, "kind"));
		name = json_string_value(json_object_get(ref, "name"));
		if (!api || !kind || !name || strcmp(kind, "Pod") == 0)
			continue;
		snprintf(k, sizeof(k), "%s|%s", api, kind);
		snprintf(n, sizeof(n), "%s|%s|%s|%s", api, kind, ns, name);
		if (json_object_get(seen, n) || json_object_get(d->owners, n))
			continue;
		json_object_set_new(seen, n, json_true());
		c = json_integer_value(json_object_get(kinds, k));
		json_object_set_new(kinds, k, json_integer(c + 1));
	}
	json_object_foreach(kinds, key, it) {
		char group[256] = "", version[64] = "", kind[256] = "";
		const char *bar = strchr(key, '|'), *slash;
		const wmap_api_resource *r;
		json_t *list;
		char *path;
		wmap_error e = { 0 };
		size_t j;
		json_t *o;

		if (json_integer_value(it) <= OWNER_LIST_MIN || !bar)
			continue;
		snprintf(kind, sizeof(kind), "%s", bar + 1);
		slash = memchr(key, '/', (size_t)(bar - key));
		if (slash) {
			snprintf(group, sizeof(group), "%.*s", (int)(slash - key), key);
			snprintf(version, sizeof(version), "%.*s", (int)(bar - slash - 1), slash + 1);
		} else {
			snprintf(version, sizeof(version), "%.*s", (int)(bar - key), key);
		}
		if (!(r = wmap_discovery_find_kind(d->lc->disc, group, version, kind)) ||
		    !(path = wmap_resource_path(r, ns, NULL)))
			continue;
		if ((list = json_array()) != NULL && live_list(list, d->lc, path, 500, &e) == 0)
			json_array_foreach(list, j, o) {
				const char *name = json_string_value(
					json_object_get(json_object_get(o, "metadata"), "name"));
				char n[900];

				if (!name)
					continue;
				snprintf(n, sizeof(n), "%.*s|%s|%s", (int)(bar - key), key, kind, ns);
				snprintf(n + strlen(n), sizeof(n) - strlen(n), "|%s", name);
				json_object_set(d->owners, n, o);
			}
		json_decref(list);
		free(path);
	}
cleanup:
	json_decref(kinds);
	json_decref(seen);
}

static int load(attrib *d)
{
	live_ctx *lc = d->lc;
	const char *ns = d->w->namespace_;
	json_t *items = json_array();
	char *path;
	size_t i, n = 0;
	json_t *it;
	int rc;

	if (!items)
		return wmap_error_set(d->err, WMAP_ENOMEM, "out of memory");
	path = strdup(ns ? "" : "/api/v1/pods");
	if (ns) {
		size_t len = strlen(ns) + 32;

		free(path);
		if ((path = malloc(len)) != NULL)
			snprintf(path, len, "/api/v1/namespaces/%s/pods", ns);
	}
	if (!path) {
		json_decref(items);
		return wmap_error_set(d->err, WMAP_ENOMEM, "out of memory");
	}
	rc = live_list(items, lc, path, 500, d->err);
	free(path);
	if (rc != 0) {
		json_decref(items);
		return rc;
	}
	/* Pods are owners too (LWS workers belong to a StatefulSet owned by the leader Pod). */
	json_array_foreach(items, i, it) {
		const json_t *md = json_object_get(it, "metadata");
		char key[1024];

		snprintf(key, sizeof(key), "v1|Pod|%s|%s",
			 json_string_value(json_object_get(md, "namespace")) ? json_string_value(json_object_get(md, "namespace")) : "",
			 json_string_value(json_object_get(md, "name")) ? json_string_value(json_object_get(md, "name")) : "");
		json_object_set(d->owners, key, it);
	}
	prefetch_owners(d, items, ns);
	if ((d->pods = calloc(json_array_size(items) + 1, sizeof(*d->pods))) == NULL) {
		json_decref(items);
		return wmap_error_set(d->err, WMAP_ENOMEM, "out of memory");
	}
	json_array_foreach(items, i, it) {
		const char *pns = json_string_value(json_object_get(json_object_get(it, "metadata"),
								    "namespace"));

		if (!belongs(d, it, pns))
			continue;
		pod_fill(&d->pods[n], it);
		if (place(d, &d->pods[n]) != 0) {
			json_decref(items);
			return d->err->code;
		}
		n++;
	}
	d->n_pods = n;
	qsort(d->pods, n, sizeof(*d->pods), pod_cmp);
	for (size_t k = 0; k < n; k++) /* the sort moved the buffers the reasons point into */
		if (d->pods[k].reason_buf[0])
			d->pods[k].reason = d->pods[k].reason_buf;
	/* The pods stay referenced by the owner cache, which lives as long as d. */
	json_decref(items);
	return 0;
}

int live_pods_load(live_pods *out, live_ctx *lc, const wmap_workload *w, wmap_error *err)
{
	attrib d = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	d.lc = lc;
	d.w = w;
	d.err = err;
	d.root_uid = json_string_value(json_object_get(json_object_get(w->object, "metadata"), "uid"));
	if ((d.owners = json_object()) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	rc = load(&d);
	out->owners = d.owners;
	out->v = d.pods;
	out->n = d.n_pods;
	if (rc != 0)
		live_pods_free(out);
	return rc;
}

int live_pods_owned(const json_t **out, live_pods *p, live_ctx *lc, const wmap_workload *w,
		    const json_t *ref, const char *ns)
{
	attrib d = { 0 };
	const json_t *obj;

	*out = NULL;
	d.lc = lc;
	d.w = w;
	d.owners = p->owners;
	d.root_uid = json_string_value(json_object_get(json_object_get(w->object, "metadata"), "uid"));
	if (!p->owners || !(obj = owner_of(&d, ref, ns)) || !belongs(&d, obj, ns))
		return 0;
	*out = obj;
	return 1;
}

void live_pods_free(live_pods *p)
{
	if (!p)
		return;
	free(p->v);
	json_decref(p->owners);
	memset(p, 0, sizeof(*p));
}
