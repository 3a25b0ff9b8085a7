/* kubectl-wmap fit: the clusters of kubeconfig contexts (fit_cmd.h).
 *
 * Each context gets its own kubeconfig resolution (the plugin's LIVE.md rules, with the
 * connection flags), its own client and two lists: the nodes, and the pods of every namespace
 * whose phase is neither Succeeded nor Failed (the scheduler's own informer selector), 500 a
 * page. Contexts are asked side by side, one thread each, at most --parallel at a time: a slow
 * or failing cluster costs its own row only. Of each item only what fit reads is kept (a pod's
 * name, uid, node, phase and resources; a node's name, labels, cordon, taints, allocatable,
 * capacity and conditions), page by page: a node's status.images alone can be tens of
 * kilobytes. fit_files.c keeps the same members of --snapshot files. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_cmd.h"
#include "live.h"
#include "wmap/kube/client.h"
#include "wmap/kube/kubeconfig.h"

void fit_source_clear(fit_source *s)
{
	json_decref(s->nodes);
	json_decref(s->pods);
	wmap_fit_snapshot_free(s->snap);
	s->nodes = s->pods = NULL;
	s->snap = NULL;
}

/* What fit reads of a Pod and of a Node (references into obj). */
static json_t *slim_containers(const json_t *list)
{
	json_t *out = json_array(), *c;
	size_t i;
	json_array_foreach((json_t *)list, i, c) {
		json_t *one = json_object();
		if (!one || json_array_append_new(out, one))
			goto oom;
		if ((json_object_get(c, "resources") && json_object_set(one, "resources", json_object_get(c, "resources"))) ||
		    (json_object_get(c, "restartPolicy") &&
		     json_object_set(one, "restartPolicy", json_object_get(c, "restartPolicy"))))
			goto oom;
	}
	return out;
oom:
	json_decref(out);
	return NULL;
}

/* Copies the members keys[] of from that are present into a new object under name in to. */
static int pick(json_t *to, const char *name, const json_t *from, const char *const *keys)
{
	json_t *o = json_object();
	if (!o || json_object_set_new(to, name, o))
		return -1;
	for (size_t i = 0; keys[i]; i++) {
		json_t *v = json_object_get(from, keys[i]);
		if (v && json_object_set(o, keys[i], v))
			return -1;
	}
	return 0;
}

static json_t *slim_pod(const json_t *pod)
{
	static const char *const meta[] = { "name", "namespace", "uid", NULL };
	static const char *const spec[] = { "nodeName", "overhead", "resources", NULL };
	static const char *const status[] = { "phase", NULL };
	const json_t *sp = json_object_get(pod, "spec");
	json_t *o = json_object(), *s = NULL;
	if (!o || pick(o, "metadata", json_object_get(pod, "metadata"), meta) ||
	    pick(o, "spec", sp, spec) || pick(o, "status", json_object_get(pod, "status"), status))
		goto oom;
	s = json_object_get(o, "spec");
	if (json_is_array(json_object_get(sp, "containers")) &&
	    json_object_set_new(s, "containers", slim_containers(json_object_get(sp, "containers"))))
		goto oom;
	if (json_is_array(json_object_get(sp, "initContainers")) &&
	    json_object_set_new(s, "initContainers", slim_containers(json_object_get(sp, "initContainers"))))
		goto oom;
	return o;
oom:
	json_decref(o);
	return NULL;
}

static json_t *slim_node(const json_t *node)
{
	static const char *const meta[] = { "name", "labels", NULL };
	static const char *const spec[] = { "unschedulable", "taints", NULL };
	static const char *const status[] = { "allocatable", "capacity", "conditions", NULL };
	json_t *o = json_object();
	if (!o || pick(o, "metadata", json_object_get(node, "metadata"), meta) ||
	    pick(o, "spec", json_object_get(node, "spec"), spec) ||
	    pick(o, "status", json_object_get(node, "status"), status)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

typedef json_t *(*slim_fn)(const json_t *);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int fit_live_contexts(fit_source *out, size_t *n, const cli_options *o, int all, wmap_error *err)
{
	wmap_kube_overrides ov;
	wmap_kube_config *cfg = NULL;
	const char *names[FIT_MAX_SOURCES];
	size_t k = 0;
	int rc;

	*n = 0;
	if (o->kube.n_contexts > 0 && !all) {
		for (size_t i = 0; i < o->kube.n_contexts; i++)
			names[k++] = o->kube.contexts[i];
		goto copy;
	}
	live_overrides(&ov, o);
	ov.context = NULL;
	if ((rc = wmap_kubeconfig_load(&cfg, &ov, err)) != 0)
		return rc;
	if (!all) {
		names[k++] = cfg->context;
	} else {
		size_t i;
		json_t *v;
		json_array_foreach(cfg->context_names, i, v) {
			if (k < FIT_MAX_SOURCES)
				names[k++] = json_string_value(v);
		}
		qsort(names, k, sizeof(names[0]), cmp_str);
	}
copy:
	for (size_t i = 0; i < k; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		snprintf(out[i].name, sizeof(out[i].name), "%s", names[i] ? names[i] : "");
	}
	*n = k;
	wmap_kubeconfig_free(cfg);
	if (k == 0)
		return wmap_error_set(err, WMAP_ENOTFOUND, "the kubeconfig has no context");
	return 0;
}

typedef struct slim_page {
	json_t *items;
	slim_fn slim;
} slim_page;

static int slim_items(void *arg, json_t *items, wmap_error *err)
{
	slim_page *sp = arg;
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it) {
		if (json_array_append_new(sp->items, sp->slim(it)))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	return 0;
}

typedef struct fetch_job {
	fit_source *s;
	const cli_options *o;
	pthread_t thread;
	int started;
} fetch_job;

static void *fetch_one(void *arg)
{
	fetch_job *j = arg;
	fit_source *s = j->s;
	wmap_kube_overrides ov;
	wmap_kube_opts ko = { 0 };
	wmap_error err = { 0 };
	live_ctx lc = { 0 };
	int rc;

	live_overrides(&ov, j->o);
	ov.context = s->name;
	ko.timeout_ms = live_timeout_ms(j->o);
	if (ko.timeout_ms == 0 && j->o->kube.request_timeout)
		ko.timeout_ms = -1;
	lc.o = j->o;
	s->nodes = json_array();
	s->pods = json_array();
	if (!s->nodes || !s->pods)
		rc = wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
	else if ((rc = wmap_kubeconfig_load(&lc.cfg, &ov, &err)) == 0 &&
		 (rc = wmap_kube_client_new(&lc.client, lc.cfg, &ko, &err)) == 0 &&
		 (rc = live_list_pages(&lc, "/api/v1/nodes", 500, slim_items, &(slim_page){ s->nodes, slim_node }, &err)) == 0)
		rc = live_list_pages(&lc, "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed",
				     500, slim_items, &(slim_page){ s->pods, slim_pod }, &err);
	if (rc)
		snprintf(s->error, sizeof(s->error), "%s", err.message[0] ? err.message : "cannot read the cluster");
	wmap_kube_client_free(lc.client);
	wmap_kubeconfig_free(lc.cfg);
	return NULL;
}

void fit_live_fetch(fit_source *src, size_t n, const cli_options *o, int parallel)
{
	fetch_job jobs[FIT_MAX_SOURCES];
	if (parallel < 1)
		parallel = 1;
	for (size_t first = 0; first < n; first += (size_t)parallel) {
		size_t end = first + (size_t)parallel < n ? first + (size_t)parallel : n;
		for (size_t i = first; i < end; i++) {
			jobs[i] = (fetch_job){ .s = &src[i], .o = o };
			if (n == 1 || pthread_create(&jobs[i].thread, NULL, fetch_one, &jobs[i]) != 0)
				fetch_one(&jobs[i]); /* one cluster, or no thread to be had: here */
			else
				jobs[i].started = 1;
		}
		for (size_t i = first; i < end; i++) {
			if (jobs[i].started)
				pthread_join(jobs[i].thread, NULL);
		}
	}
}
