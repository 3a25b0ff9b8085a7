/* wmap-webhook: controller "gangs": the group objects of gang schedulers, kept in step with
 * the workloads by the leader.
 *
 * For every workload kind of the definitions in force that a gang setting (--gang-scheduler
 * or a WorkloadPolicy's gang) may send to a scheduler whose row has a group object
 * (wmap_gang_group_rows: Volcano, coscheduling, KAI external), and for the group
 * collections of those rows, a watch thread keeps the collection (wmap_watch_run). The
 * reconcile thread, while this replica holds the Lease, computes the group objects every
 * workload asks for (wmap_admission_groups: the same settings, plan and names admission
 * stamped on its templates) and makes the cluster's groups labelled
 * app.kubernetes.io/managed-by=wmap-webhook equal to them:
 * - missing: created (409: read back and compared as below);
 * - owned by another UID of the same kind and name (a deleted and recreated workload):
 *   deleted (precondition on its UID) and created again;
 * - owned by another workload: left alone and counted as a conflict (names are per
 *   workload name, so two kinds of one name in one namespace collide);
 * - different: a merge patch of metadata.labels, ownerReferences and the spec fields wmap
 *   owns (never status, never an Update: Volcano's scheduler rewrites the whole object);
 *   KAI's spec.queue is kept as the live object has it (KAI and Grove inherit it);
 * - not asked for any more (the workload is gone, or no longer asks for a gang): deleted
 *   (precondition on its UID), only once every watch has listed and only when its owner's
 *   kind is watched (owner_known: a kind whose Karta is not in force yet has no watch) or
 *   it has no owner at all (orphaned).
 * A workload whose plan says its gang can never form (a minimum above its pods, members
 * started in order) gets a Warning Event, reason GangCannotForm, once per text.
 * Every Karta of the cluster keeps KAI's lookup labels (run.ai/karta-group, -version,
 * -kind equal to its root kind), as upstream's operator stamps them, so that KAI's
 * pod-grouper (v0.17+) finds it.
 * Nothing is done before the state in force is first synced. Watches run on every replica,
 * so that a new leader acts at once on what it already holds; failed writes are tried again
 * a second later. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "webhook.h"
#include "wmap/kube/discovery.h"
#include "wmap/json_text.h"
#include "wmap/kube/watch.h"

#define MAX_WATCHES 256
#define RESYNC_S 30.0

typedef struct gangs gangs;

typedef struct watchw {
	gangs *G;
	char path[512]; /* collection, all namespaces */
	char key[300];  /* "group/resource" */
	char gk[300];   /* "group/Kind", as an ownerReference names it */
	int is_group;   /* a group collection (else a workload kind) */
	const wmap_gang_row *row;
	wmap_kube_client *client;
	pthread_t thread;
	atomic_int stop;
	int started, keep;
	json_t *objects; /* under G->lock: the last set, or NULL before the first list */
	wmap_watch_stats stats;
} watchw;

struct gangs {
	const wh_env *env;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned kick; /* WH_STATE_* | WH_KICK_LEAD, under lock */
	int dirty;     /* a watch changed its set, under lock */
	atomic_int stop;
	int started;
	wmap_kube_client *client;
	wmap_discovery *disc;
	watchw *w[MAX_WATCHES];
	size_t n_w;
	atomic_uint creates, patches, deletes, replaced, conflicts, errors, rounds, watched;
	atomic_uint groups; /* groups in place as of the last round */
	atomic_uint events, karta_labels;
	json_t *evented; /* workload uid -> the warning text an Event was recorded for */
	/* What each workload asks for, by "group/resource/ns/name": [resourceVersion, groups,
	 * warnings, row name]; only the reconcile thread uses it. Emptied when the definitions
	 * or the policies change (cache_clear, under lock). */
	json_t *cache;
	int cache_clear;
	const void *cache_defs, *cache_policies;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void on_change(void *ud, const json_t *objects, int synced)
{
	watchw *W = ud;
	json_t *copy = json_copy((json_t *)objects); /* shallow: the objects are never changed */
	if (!copy)
		return;
	pthread_mutex_lock(&W->G->lock);
	json_decref(W->objects);
	W->objects = copy;
	W->G->dirty = 1;
	pthread_cond_signal(&W->G->cond);
	pthread_mutex_unlock(&W->G->lock);
}

static void *watch_main(void *arg)
{
	watchw *W = arg;
	wmap_watch_opts o = { .path = W->path, .backoff_min_ms = 500, .backoff_max_ms = 10000, .on_change = on_change, .ud = W, .stop = &W->stop };
	wmap_error err;
	if (wmap_watch_run(W->client, &o, &W->stats, &err) != 0)
		wh_logf("error", "gangs: watch %s stopped: %s", W->path, err.message);
	return NULL;
}

static void watch_free(watchw *W)
{
	if (!W)
		return;
	atomic_store(&W->stop, 1);
	if (W->started)
		pthread_join(W->thread, NULL);
	wmap_kube_client_free(W->client);
	json_decref(W->objects);
	free(W);
}

static watchw *watch_find(gangs *G, const char *key)
{
	for (size_t i = 0; i < G->n_w; i++)
		if (!strcmp(G->w[i]->key, key))
			return G->w[i];
	return NULL;
}

/* Marks (and starts when new) the watch of res. */
static void watch_want(gangs *G, const wmap_api_resource *res, int is_group, const wmap_gang_row *row)
{
	char key[300];
	snprintf(key, sizeof(key), "%s/%s", res->group, res->plural);
	watchw *W = watch_find(G, key);
	if (W) {
		W->keep = 1;
		if (is_group)
			W->is_group = 1, W->row = row;
		return;
	}
	if (G->n_w >= MAX_WATCHES)
		return;
	char *path = wmap_resource_path(res, NULL, NULL);
	wmap_kube_opts ko = { .timeout_ms = 30000, .max_retries = 3, .user_agent = "wmap-webhook/" WMAP_VERSION };
	wmap_error err;
	if (!path || !(W = calloc(1, sizeof(*W)))) {
		free(path);
		return;
	}
	W->G = G;
	snprintf(W->path, sizeof(W->path), "%s", path);
	free(path);
	snprintf(W->key, sizeof(W->key), "%s", key);
	snprintf(W->gk, sizeof(W->gk), "%s/%s", res->group, res->kind);
	W->is_group = is_group;
	W->row = row;
	W->keep = 1;
	if (wmap_kube_client_new(&W->client, G->env->kube, &ko, &err) != 0) {
		wh_logf("error", "gangs: %s: %s", key, err.message);
		free(W);
		return;
	}
	if (pthread_create(&W->thread, NULL, watch_main, W) != 0) {
		wmap_kube_client_free(W->client);
		free(W);
		return;
	}
	W->started = 1;
	G->w[G->n_w++] = W;
}

/* The scheduler rows any setting in st may send a workload to (flag or policy). */
static int rows_in_use(const wh_state *st, const wh_options *opt, const wmap_gang_row **rows, size_t max)
{
	size_t n = 0;
	const wmap_gang_row *r = wmap_gang_row_of(opt->scheduler, opt->kai_mode && !strcmp(opt->kai_mode, "external"));
	if (r->kind)
		rows[n++] = r;
	for (size_t i = 0; st->policies && i < st->policies->n && n < max; i++) {
		const wmap_policy *p = &st->policies->policies[i];
		if (!p->has_gang || !wmap_policy_writes(p))
			continue;
		r = wmap_gang_row_of(p->gang, p->gang_external);
		int seen = 0;
		for (size_t j = 0; j < n; j++)
			seen |= rows[j] == r;
		if (r->kind && !seen)
			rows[n++] = r;
	}
	return (int)n;
}

/* The watches the state in force asks for: started, and the ones no longer asked for
 * stopped. */
static void plan_watches(gangs *G)
{
	wmap_error err;
	const wmap_gang_row *rows[8];
	int rc = !G->disc ? wmap_discovery_load(&G->disc, G->client, 1, &err)
			  : wmap_discovery_refresh(G->disc, G->client, &err);
	if (rc != 0) {
		wh_logf("warn", "gangs: discovery failed, watches unchanged: %s", err.message);
		return;
	}
	for (size_t i = 0; i < G->n_w; i++)
		G->w[i]->keep = 0;
	wh_state *st = wh_inforce_acquire(G->env->inforce);
	int n_rows = rows_in_use(st, G->env->opt, rows, 8);
	if (n_rows > 0) {
		const wmap_registry *reg = st->defs->reg;
		for (size_t i = 0; i < wmap_registry_count(reg); i++) {
			const wmap_gvk *g = wmap_registry_get(reg, i)->components[0].kind;
			const wmap_api_resource *res = g ? wmap_discovery_find_kind(G->disc, g->group, g->version, g->kind) : NULL;
			/* Not bare Pods: a cluster-wide pod watch costs more than the groups of
			 * single pods are worth (deploy/base/02-rbac.yaml grants no pod access). */
			if (res && res->namespaced && !(!res->group[0] && !strcmp(res->plural, "pods")))
				watch_want(G, res, 0, NULL);
		}
		for (int r = 0; r < n_rows; r++) {
			const wmap_api_resource *res = wmap_discovery_find_kind(G->disc, rows[r]->api_group,
										rows[r]->version, rows[r]->kind);
			if (res)
				watch_want(G, res, 1, rows[r]);
			else
				wh_logf("warn", "gangs: %s/%s %s is not served: no %s groups can be made "
						"(install the scheduler's CRDs)",
					rows[r]->api_group, rows[r]->version, rows[r]->kind, rows[r]->name);
		}
	}
	wh_inforce_release(st);
	size_t k = 0;
	for (size_t i = 0; i < G->n_w; i++) {
		if (G->w[i]->keep) {
			G->w[k++] = G->w[i];
		} else {
			watchw *W = G->w[i];
			pthread_mutex_lock(&G->lock);
			json_t *o = W->objects;
			W->objects = NULL;
			pthread_mutex_unlock(&G->lock);
			json_decref(o);
			watch_free(W);
		}
	}
	G->n_w = k;
	atomic_store(&G->watched, (unsigned)k);
}

static const char *owner_uid(const json_t *obj, const char **kind, const char **name)
{
	size_t i;
	json_t *ref;
	json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, ref) {
		if (json_is_true(json_object_get(ref, "controller"))) {
			*kind = json_string_value(json_object_get(ref, "kind"));
			*name = json_string_value(json_object_get(ref, "name"));
			return json_string_value(json_object_get(ref, "uid"));
		}
	}
	*kind = *name = NULL;
	return NULL;
}

static int str_eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* The spec fields wmap writes, per row (the rest is the scheduler's or the user's). */
/* The row of a name in the cache (wmap_gang_row.name); NONE's row when unknown. */
static const wmap_gang_row *row_named(const char *name)
{
	size_t n;
	const wmap_gang_row *const *rows = wmap_gang_group_rows(&n);
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(rows[i]->name, name))
			return rows[i];
	return wmap_gang_row_of(WMAP_GANG_NONE, 0);
}

static const char *const *owned_fields(const wmap_gang_row *row)
{
	static const char *const volcano[] = { "minMember", "minTaskMember", "queue", "priorityClassName", "minResources", NULL };
	static const char *const cosched[] = { "minMember", "minResources", "scheduleTimeoutSeconds", NULL };
	static const char *const kai[] = { "minMember", "minSubGroup", "subGroups", "priorityClassName", NULL };
	return row->id == WMAP_GANG_VOLCANO ? volcano : row->id == WMAP_GANG_COSCHEDULING ? cosched
											  : kai;
}

/* A merge patch taking live to want (wmap's fields only), or NULL when equal. */
static json_t *merge_patch(const wmap_gang_row *row, const json_t *live, const json_t *want)
{
	json_t *p = json_object(), *spec = json_object(), *md = json_object();
	const json_t *ls = json_object_get(live, "spec"), *ws = json_object_get(want, "spec");
	const json_t *lm = json_object_get(live, "metadata"), *wm = json_object_get(want, "metadata");
	int diff = 0;
	if (!p || !spec || !md)
		goto fail;
	for (const char *const *f = owned_fields(row); *f; f++) {
		json_t *lv = json_object_get(ls, *f), *wv = json_object_get(ws, *f);
		if (json_equal(lv, wv) || (!lv && !wv))
			continue;
		diff = 1;
		if (!wv) {
			json_object_set_new(spec, *f, json_null());
		} else if (json_is_object(wv) && json_is_object(lv)) {
			/* a merge patch merges maps: drop the keys wmap no longer wants */
			json_t *v = json_deep_copy(wv);
			const char *k;
			json_t *x;
			json_object_foreach((json_t *)lv, k, x)
				if (v && !json_object_get(wv, k))
					json_object_set_new(v, k, json_null());
			json_object_set_new(spec, *f, v);
		} else {
			json_object_set(spec, *f, wv);
		}
	}
	const char *k;
	json_t *v;
	json_t *labels = json_object();
	json_object_foreach(json_object_get((json_t *)wm, "labels"), k, v)
		if (!json_equal(json_object_get(json_object_get(lm, "labels"), k), v))
			json_object_set(labels, k, v), diff = 1;
	if (json_object_size(labels))
		json_object_set(md, "labels", labels);
	json_decref(labels);
	if (!json_equal(json_object_get(lm, "ownerReferences"), json_object_get(wm, "ownerReferences"))) {
		json_object_set(md, "ownerReferences", json_object_get(wm, "ownerReferences"));
		diff = 1;
	}
	if (!diff)
		goto fail;
	if (json_object_size(spec))
		json_object_set(p, "spec", spec);
	if (json_object_size(md))
		json_object_set(p, "metadata", md);
	json_decref(spec);
	json_decref(md);
	return p;
fail:
	json_decref(p);
	json_decref(spec);
	json_decref(md);
	return NULL;
}

/* "/apis/G/V/namespaces/NS/RES[/NAME]" of a group object. */
static void group_path(char *buf, size_t len, const wmap_gang_row *row, const char *ns, const char *name)
{
	snprintf(buf, len, "/apis/%s/%s/namespaces/%s/%s%s%s", row->api_group, row->version, ns,
		 row->resource, name ? "/" : "", name ? name : "");
}

static int leading(gangs *G)
{
	return wh_leader_is(G->env->leader) && !atomic_load(&G->stop);
}

/* Creates want; on 409 compares with what is there. 0, or -1 when it should be tried again. */
static int create_group(gangs *G, const wmap_gang_row *row, const json_t *want);

/* Deletes the group at path only if it is still the object live (a UID precondition): one
 * made again under the same name since the watch saw live answers 409 and stays. */
static int delete_group(gangs *G, const char *path, const json_t *live, long *status, wmap_error *err)
{
	const char *uid = json_string_value(json_object_get(json_object_get(live, "metadata"), "uid"));
	json_t *opts = json_pack("{s:s, s:s, s:{s:s}}", "kind", "DeleteOptions", "apiVersion", "v1",
				 "preconditions", "uid", uid ? uid : "");
	char *body = opts ? wmap_json_text(opts, NULL) : NULL;
	json_decref(opts);
	if (!body)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	int rc = wmap_kube_request(NULL, status, G->client, "DELETE", path, "application/json", body, err);
	free(body);
	return rc;
}

static int reconcile_one(gangs *G, const wmap_gang_row *row, const json_t *live, const json_t *want)
{
	wmap_error err;
	long status = 0;
	char path[1024];
	const json_t *md = json_object_get(want, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));
	if (!live)
		return create_group(G, row, want);
	const char *lk, *ln, *wk, *wn;
	const char *luid = owner_uid(live, &lk, &ln), *wuid = owner_uid(want, &wk, &wn);
	group_path(path, sizeof(path), row, ns, name);
	if (!str_eq(luid, wuid)) {
		if (luid && !(str_eq(lk, wk) && str_eq(ln, wn))) {
			atomic_fetch_add(&G->conflicts, 1);
			return 0; /* another workload's group of the same name */
		}
		/* A stale group: its owner was deleted and a workload of the same name made. */
		if (!leading(G))
			return 0;
		int rc = delete_group(G, path, live, &status, &err);
		if (rc != 0 && status != 404 && status != 409) {
			atomic_fetch_add(&G->errors, 1);
			wh_logf("warn", "gangs: delete stale %s: %s", path, err.message);
			return -1;
		}
		atomic_fetch_add(&G->replaced, 1);
		wh_logf("info", "gangs: replacing %s (owner %s, not the live workload's %s)", path,
			luid ? luid : "none", wuid ? wuid : "none");
		return create_group(G, row, want);
	}
	json_t *mp = merge_patch(row, live, want);
	if (!mp)
		return 0;
	char *body = wmap_json_text(mp, NULL);
	json_decref(mp);
	if (!body || !leading(G)) {
		free(body);
		return body ? 0 : -1;
	}
	int rc = wmap_kube_request(NULL, &status, G->client, "PATCH", path, "application/merge-patch+json", body, &err);
	free(body);
	if (rc != 0) {
		atomic_fetch_add(&G->errors, 1);
		wh_logf("warn", "gangs: patch %s: %s", path, err.message);
		return -1;
	}
	atomic_fetch_add(&G->patches, 1);
	return 0;
}

static int create_group(gangs *G, const wmap_gang_row *row, const json_t *want)
{
	wmap_error err;
	long status = 0;
	char path[1024];
	const json_t *md = json_object_get(want, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));
	group_path(path, sizeof(path), row, ns, NULL);
	char *body = wmap_json_text(want, NULL);
	if (!body || !leading(G)) {
		free(body);
		return body ? 0 : -1;
	}
	int rc = wmap_kube_request(NULL, &status, G->client, "POST", path, "application/json", body, &err);
	free(body);
	if (rc == 0) {
		atomic_fetch_add(&G->creates, 1);
		return 0;
	}
	if (status != 409) {
		atomic_fetch_add(&G->errors, 1);
		wh_logf("warn", "gangs: create %s/%s in %s: %s", row->resource, name, ns, err.message);
		return -1;
	}
	/* There already (a watch behind our own writes, or a stale group still going): the
	 * same owner is compared at once, anything else waits for the next round. */
	json_t *live = NULL;
	const char *lk, *ln, *wk, *wn;
	group_path(path, sizeof(path), row, ns, name);
	if (wmap_kube_get(&live, G->client, path, &err) != 0)
		return -1;
	const char *luid = owner_uid(live, &lk, &ln), *wuid = owner_uid(want, &wk, &wn);
	rc = str_eq(luid, wuid) ? reconcile_one(G, row, live, want) : -1;
	json_decref(live);
	return rc;
}

/* "row/ns/name" keys. */
static void gkey(char *buf, size_t len, const wmap_gang_row *row, const json_t *obj)
{
	const json_t *md = json_object_get(obj, "metadata");
	snprintf(buf, len, "%s/%s/%s", row->name, json_string_value(json_object_get(md, "namespace")),
		 json_string_value(json_object_get(md, "name")));
}

/* A Warning Event on the workload (reason GangCannotForm) with the notes of its plan that
 * say a gang can never form; once per workload and text. */
static void record_event(gangs *G, json_t *seen, const json_t *obj, const json_t *warnings)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *uid = json_string_value(json_object_get(md, "uid"));
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));
	char msg[1024] = "";
	size_t i, used = 0;
	json_t *w;
	json_array_foreach(warnings, i, w) {
		const char *t = json_string_value(w);
		if (t && strstr(t, "can never form") && used < sizeof(msg))
			used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s%s", used ? "; " : "", t);
	}
	if (!uid || !ns || !name || !msg[0])
		return;
	json_t *prev = json_object_get(G->evented, uid);
	json_object_set_new(seen, uid, json_string(msg));
	if (prev && !strcmp(json_string_value(prev), msg))
		return;
	char ts[32], path[512], ename[300];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(ename, sizeof(ename), "%.200s.gang%lx", name, (unsigned long)now);
	json_t *e = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s?, s:s?, s:s, s:s, s:s}, s:s, s:s, s:s, "
			      "s:{s:s}, s:s, s:s, s:i}",
			      "apiVersion", "v1", "kind", "Event", "metadata", "name", ename, "namespace", ns,
			      "involvedObject", "apiVersion", json_string_value(json_object_get(obj, "apiVersion")),
			      "kind", json_string_value(json_object_get(obj, "kind")), "name", name, "namespace", ns,
			      "uid", uid, "reason", "GangCannotForm", "message", msg, "type", "Warning",
			      "source", "component", "wmap-webhook", "firstTimestamp", ts, "lastTimestamp", ts,
			      "count", 1);
	char *body = e ? wmap_json_text(e, NULL) : NULL;
	json_decref(e);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ns);
	long status = 0;
	wmap_error err;
	if (body && leading(G)) {
		if (wmap_kube_request(NULL, &status, G->client, "POST", path, "application/json", body, &err) == 0)
			atomic_fetch_add(&G->events, 1);
		else
			wh_logf("warn", "gangs: event on %s/%s: %s", ns, name, err.message);
	}
	free(body);
}

/* May the group be deleted as unwanted? Only when what would want it is known: it has no
 * controller (wmap always sets one: an orphaned group), or its controller's kind is watched
 * and listed. A kind whose definition is not in force yet (a cluster Karta still being
 * built when the state in force is first synced) has no watch, and its groups stay. */
static int owner_known(gangs *G, json_t *const *snaps, const json_t *group)
{
	const char *kind, *name;
	const json_t *ref = NULL;
	size_t i;
	json_t *r;
	if (!owner_uid(group, &kind, &name))
		return 1;
	json_array_foreach(json_object_get(json_object_get(group, "metadata"), "ownerReferences"), i, r)
		if (json_is_true(json_object_get(r, "controller")))
			ref = r;
	const char *av = json_string_value(json_object_get(ref, "apiVersion"));
	const char *slash = av ? strchr(av, '/') : NULL;
	char gk[300];
	snprintf(gk, sizeof(gk), "%.*s/%s", slash ? (int)(slash - av) : 0, slash ? av : "", kind ? kind : "");
	for (i = 0; i < G->n_w; i++)
		if (!G->w[i]->is_group && !strcmp(G->w[i]->gk, gk))
			return snaps[i] != NULL;
	return 0;
}

/* One round: every group asked for in place, every other group of wmap's deleted. 0, or -1
 * when something should be tried again. */
static int round_once(gangs *G)
{
	json_t *want = json_object();    /* key -> [row index, object] */
	json_t *live = json_object();    /* key -> object */
	json_t *evented = json_object(); /* this round's workloads with a can-never-form note */
	json_t *snaps[MAX_WATCHES] = { 0 };

	int synced = 1, again = 0;
	wmap_error err;
	if (!want || !live || !evented) {
		json_decref(want);
		json_decref(live);
		json_decref(evented);
		return -1;
	}
	pthread_mutex_lock(&G->lock);
	G->dirty = 0;
	int clear = G->cache_clear;
	G->cache_clear = 0;
	for (size_t i = 0; i < G->n_w; i++) {
		snaps[i] = json_incref(G->w[i]->objects);
		synced &= snaps[i] != NULL;
	}
	pthread_mutex_unlock(&G->lock);
	wh_state *st = wh_inforce_acquire(G->env->inforce);
	wmap_engine *eng = NULL;
	const wmap_gang_row *rowsv[8];
	size_t nrows = 0;
	json_t *ncache = json_object();
	if (!ncache) {
		wh_inforce_release(st);
		again = -1;
		goto done;
	}
	if (clear || !G->cache || G->cache_defs != st->defs || G->cache_policies != st->policies) {
		json_decref(G->cache);
		G->cache = json_object();
		G->cache_defs = st->defs;
		G->cache_policies = st->policies;
	}
	const wh_options *opt = G->env->opt;
	wmap_admission_config cfg = { .scheduler = opt->scheduler, .queue = opt->queue, .policies = st->policies, .cosched_profile = opt->cosched_profile, .kai_external = opt->kai_mode && !strcmp(opt->kai_mode, "external") };
	for (size_t i = 0; i < G->n_w; i++) {
		const char *k;
		json_t *obj;
		if (G->w[i]->is_group) {
			json_object_foreach(snaps[i], k, obj) {
				const char *mb = json_string_value(json_object_get(
					json_object_get(json_object_get(obj, "metadata"), "labels"), "app.kubernetes.io/managed-by"));
				char key[700];
				if (!str_eq(mb, WMAP_GANG_MANAGED_BY))
					continue;
				gkey(key, sizeof(key), G->w[i]->row, obj);
				json_object_set(live, key, obj);
			}
			continue;
		}
		json_object_foreach(snaps[i], k, obj) {
			json_t *groups = NULL, *warns = NULL;
			const wmap_gang_row *row = NULL;
			const json_t *md = json_object_get(obj, "metadata");
			const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
			char ck[800];
			if (json_object_get(md, "deletionTimestamp"))
				continue; /* going: its groups go with it */
			snprintf(ck, sizeof(ck), "%s/%s", G->w[i]->key, k);
			json_t *hit = json_object_get(G->cache, ck);
			if (hit && rv && str_eq(json_string_value(json_array_get(hit, 0)), rv)) {
				groups = json_incref(json_array_get(hit, 1));
				warns = json_incref(json_array_get(hit, 2));
				row = row_named(json_string_value(json_array_get(hit, 3)));
			} else {
				if (!eng && wmap_engine_new(&eng, st->defs->reg, &err) != 0) {
					again = -1;
					break;
				}
				warns = json_array();
				if (wmap_admission_groups(&groups, &row, warns, eng, &cfg, obj, &err) != 0) {
					json_decref(warns);
					continue;
				}
			}
			if (rv && groups && warns)
				json_object_set_new(ncache, ck, json_pack("[s, O, O, s]", rv, groups, warns, row->name));
			if (json_array_size(groups))
				record_event(G, evented, obj, warns);
			json_decref(warns);
			size_t j;
			json_t *g;
			json_array_foreach(groups, j, g) {
				char key[700];
				size_t r = 0;
				while (r < nrows && rowsv[r] != row)
					r++;
				if (r == nrows && nrows < 8)
					rowsv[nrows++] = row;
				gkey(key, sizeof(key), row, g);
				json_object_set_new(want, key, json_pack("[I, O]", (json_int_t)r, g));
			}
			json_decref(groups);
		}
	}
	json_decref(G->cache); /* only the workloads still there */
	G->cache = ncache;
	wmap_engine_free(eng);
	wh_inforce_release(st);
	/* a group kind watched but not wanted by any workload: its groups are all stale */
	for (size_t i = 0; i < G->n_w; i++) {
		if (G->w[i]->is_group) {
			size_t r = 0;
			while (r < nrows && rowsv[r] != G->w[i]->row)
				r++;
			if (r == nrows && nrows < 8)
				rowsv[nrows++] = G->w[i]->row;
		}
	}
	const char *k;
	json_t *v;
	json_object_foreach(want, k, v) {
		if (!leading(G))
			break;
		const wmap_gang_row *row = rowsv[json_integer_value(json_array_get(v, 0))];
		if (reconcile_one(G, row, json_object_get(live, k), json_array_get(v, 1)) != 0)
			again = -1;
	}
	if (synced) {
		json_object_foreach(live, k, v) {
			if (json_object_get(want, k) || !leading(G) || !owner_known(G, snaps, v))
				continue;
			const json_t *md = json_object_get(v, "metadata");
			const wmap_gang_row *row = NULL;
			char path[1024];
			long status = 0;
			for (size_t r = 0; r < nrows; r++)
				if (!strncmp(k, rowsv[r]->name, strlen(rowsv[r]->name)) && k[strlen(rowsv[r]->name)] == '/')
					row = rowsv[r];
			if (!row)
				continue;
			group_path(path, sizeof(path), row, json_string_value(json_object_get(md, "namespace")),
				   json_string_value(json_object_get(md, "name")));
			if (delete_group(G, path, v, &status, &err) == 0) {
				atomic_fetch_add(&G->deletes, 1);
				wh_logf("info", "gangs: deleted %s (no workload asks for it)", path);
			} else if (status != 404 && status != 409) {
				atomic_fetch_add(&G->errors, 1);
				again = -1;
			}
		}
	} else {
		again = again ? again : 1;
	}
	atomic_store(&G->groups, (unsigned)json_object_size(want));
	json_decref(G->evented); /* only the workloads still there are remembered */
	G->evented = json_incref(evented);
	atomic_fetch_add(&G->rounds, 1);
done:
	json_decref(evented);
	for (size_t i = 0; i < MAX_WATCHES; i++)
		json_decref(snaps[i]);
	json_decref(want);
	json_decref(live);
	return again;
}

/* KAI's lookup labels (wmap_karta_labels) on every Karta of the cluster, as upstream's
 * operator keeps them: a merge patch of metadata.labels where they differ. */
static void label_kartas(gangs *G)
{
	json_t *todo = json_object();
	wh_state *st = wh_inforce_acquire(G->env->inforce);
	const char *name;
	json_t *k;
	json_object_foreach(st->kartas, name, k) {
		json_t *want = wmap_karta_labels(k), *diff = json_object();
		const json_t *have = json_object_get(json_object_get(k, "metadata"), "labels");
		const char *lk;
		json_t *lv;
		json_object_foreach(want, lk, lv)
			if (diff && !json_equal(json_object_get(have, lk), lv))
				json_object_set(diff, lk, lv);
		if (todo && diff && json_object_size(diff))
			json_object_set(todo, name, diff);
		json_decref(diff);
		json_decref(want);
	}
	wh_inforce_release(st);
	json_object_foreach(todo, name, k) {
		json_t *p = json_pack("{s:{s:O}}", "metadata", "labels", k);
		char *body = p ? wmap_json_text(p, NULL) : NULL;
		char *esc = wmap_kube_query_escape(name);
		char path[600];
		long status = 0;
		wmap_error err;
		json_decref(p);
		snprintf(path, sizeof(path), "/apis/run.ai/v1alpha1/kartas/%s", esc ? esc : name);
		free(esc);
		if (body && leading(G)) {
			if (wmap_kube_request(NULL, &status, G->client, "PATCH", path, "application/merge-patch+json",
					      body, &err) == 0)
				atomic_fetch_add(&G->karta_labels, 1);
			else
				wh_logf("warn", "gangs: cannot label Karta %s for KAI: %s", name, err.message);
		}
		free(body);
	}
	json_decref(todo);
}

static void *gangs_main(void *arg)
{
	gangs *G = arg;
	double next_resync = 0, retry_at = 0;
	int replan = 1, kartas_pending = 0;
	pthread_mutex_lock(&G->lock);
	while (!atomic_load(&G->stop)) {
		unsigned kick = G->kick;
		G->kick = 0;
		replan |= (kick & (WH_STATE_DEFS | WH_STATE_POLICIES | WH_STATE_CRDS | WH_KICK_LEAD)) != 0;
		int kartas = kartas_pending || (kick & (WH_STATE_OBJECTS | WH_KICK_LEAD)) != 0;
		kartas_pending = 0;
		double now = now_s();
		int due = G->dirty || replan || kartas || (retry_at && now >= retry_at) || now >= next_resync;
		if (due) {
			pthread_mutex_unlock(&G->lock);
			/* Read before the watches are planned: once ready, the plan sees the
			 * definitions of the first sync. */
			int ready = wh_inforce_ready(G->env->inforce);
			if (replan || now >= next_resync)
				plan_watches(G);
			replan = 0;
			/* Not before the first sync: the definitions of the cluster's Kartas are not
			 * in force yet, and their kinds' groups would look unwanted. */
			int rc = !ready ? 1 : leading(G) ? round_once(G)
							 : 0;
			if (ready && leading(G) && (kartas || now >= next_resync))
				label_kartas(G);
			else if (kartas && !ready)
				kartas_pending = 1; /* after the first sync (rc is 1: again in a second) */
			retry_at = rc ? now_s() + 1.0 : 0;
			next_resync = now_s() + RESYNC_S;
			pthread_mutex_lock(&G->lock);
			if (G->kick || G->dirty)
				continue;
		}
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 250000000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&G->cond, &G->lock, &t);
	}
	pthread_mutex_unlock(&G->lock);
	return NULL;
}

static void gangs_metrics(void *ctx, wmap_buf *o);
static void gangs_stop(void *self);

static int gangs_start(void **self, const wh_env *env, wmap_error *err)
{
	/* No retry inside a request: a refused write (429, 5xx) would hold up every other
	 * group of the round; the round goes on and the next one, a second later, tries it
	 * again. */
	wmap_kube_opts ko = { .timeout_ms = 30000, .max_retries = -1, .user_agent = "wmap-webhook/" WMAP_VERSION };
	gangs *G = calloc(1, sizeof(*G));
	int rc;
	*self = NULL;
	if (!G)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	pthread_mutex_init(&G->lock, NULL);
	pthread_cond_init(&G->cond, NULL);
	G->env = env;
	if ((rc = wmap_kube_client_new(&G->client, env->kube, &ko, err)) != 0)
		goto fail;
	if ((rc = wh_metrics_provide("/metrics", gangs_metrics, G)) != 0) {
		wmap_error_set(err, rc, "too many metrics providers");
		goto fail;
	}
	if (pthread_create(&G->thread, NULL, gangs_main, G) != 0) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "cannot start the gangs thread");
		goto fail;
	}
	G->started = 1;
	*self = G;
	return 0;
fail:
	gangs_stop(G);
	return rc;
}

static void gangs_kick(void *self, unsigned what)
{
	gangs *G = self;
	if (!(what & (WH_STATE_DEFS | WH_STATE_POLICIES | WH_STATE_CRDS | WH_STATE_OBJECTS | WH_KICK_LEAD)))
		return;
	pthread_mutex_lock(&G->lock);
	G->kick |= what;
	G->cache_clear |= (what & (WH_STATE_DEFS | WH_STATE_POLICIES)) != 0;
	pthread_cond_signal(&G->cond);
	pthread_mutex_unlock(&G->lock);
}

static void gangs_stop(void *self)
{
	gangs *G = self;
	if (!G)
		return;
	atomic_store(&G->stop, 1);
	pthread_mutex_lock(&G->lock);
	pthread_cond_signal(&G->cond);
	pthread_mutex_unlock(&G->lock);
	if (G->started)
		pthread_join(G->thread, NULL);
	wh_metrics_withdraw(G);
	for (size_t i = 0; i < G->n_w; i++)
		atomic_store(&G->w[i]->stop, 1);
	for (size_t i = 0; i < G->n_w; i++)
		watch_free(G->w[i]);
	wmap_discovery_free(G->disc);
	wmap_kube_client_free(G->client);
	json_decref(G->evented);
	json_decref(G->cache);
	pthread_mutex_destroy(&G->lock);
	pthread_cond_destroy(&G->cond);
	free(G);
}

const wh_controller wh_gangs_controller = { "gangs", gangs_start, gangs_kick, gangs_stop };

static void gangs_metrics(void *ctx, wmap_buf *o)
{
	gangs *G = ctx;
	static const struct {
		const char *name, *type, *help;
	} fams[] = {
		{ "wmap_gang_groups", "gauge", "Group objects the workloads ask for, as of the last round." },
		{ "wmap_gang_watches", "gauge", "Collections watched by the gangs controller (workload kinds and group kinds)." },
		{ "wmap_gang_rounds_total", "counter", "Reconcile rounds of the gangs controller (leader only)." },
		{ "wmap_gang_creates_total", "counter", "Group objects created." },
		{ "wmap_gang_patches_total", "counter", "Group objects patched (minimum, resources, owner, labels)." },
		{ "wmap_gang_deletes_total", "counter", "Group objects deleted (workload gone or no longer asking for a gang)." },
		{ "wmap_gang_replaced_total", "counter", "Stale group objects (owner UID of a deleted workload) replaced." },
		{ "wmap_gang_conflicts_total", "counter", "Group names held by another workload's group (left alone)." },
		{ "wmap_gang_errors_total", "counter", "Writes that failed (tried again)." },
		{ "wmap_gang_karta_labels_total", "counter", "Kartas given KAI's run.ai/karta-{group,version,kind} labels." },
		{ "wmap_gang_events_total", "counter", "Warning Events (GangCannotForm) recorded on workloads whose gang can never form." },
	};
	const double vals[] = {
		atomic_load(&G->groups),
		atomic_load(&G->watched),
		atomic_load(&G->rounds),
		atomic_load(&G->creates),
		atomic_load(&G->patches),
		atomic_load(&G->deletes),
		atomic_load(&G->replaced),
		atomic_load(&G->conflicts),
		atomic_load(&G->errors),
		atomic_load(&G->karta_labels),
		atomic_load(&G->events),
	};
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		wh_prom_family(o, fams[i].name, fams[i].type, fams[i].help);
		wh_prom_sample(o, fams[i].name, vals[i], NULL);
	}
}
