/* wmap-webhook: the workload metrics exporter, a controller (wh_workloads_controller).
 *
 * Once this replica first leads, it lists and watches the pods and every workload kind in
 * force that the API server serves (the root kind of each definition but the bare Pod: pods
 * are what is attributed), one watch thread each (wmap_watch_run, as cluster.c). A worker
 * thread follows their snapshots: an object whose snapshot entry changed is resolved through
 * its definition and its lines rendered again (src/wlmetrics.c), nothing else; then each pod
 * is attributed by its controller chain (up to OWNER_HOPS, through watched objects and pods)
 * to the topmost watched owner, as `kubectl wmap describe` does, and placed in its component
 * and instance. A watched object with a watched controller (a JobSet's Jobs, a Deployment's
 * ReplicaSets) is part of its owner, not a workload of its own. The families are then
 * concatenated into one text, which GET /metrics/workloads copies: a scrape renders nothing.
 * Only the Lease holder serves that text (the others answer with no series, so a Service
 * scrape never counts a workload twice). Past --workload-metrics-max-series, whole objects
 * are left out and counted, never folded together. The exporter's own health is on /metrics.
 * --no-workload-metrics turns it off. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "webhook.h"
#include "wmap/json_text.h"
#include "wmap/kube/discovery.h"
#include "wmap/kube/watch.h"
#include "wmap/wlmetrics.h"

#define DEBOUNCE_MS 100
#define OWNER_HOPS 6
#define MAX_SOURCES 64
#define PODS_PATH "/api/v1/pods"
#define TEXT_MAX ((size_t)200 << 20) /* the concatenated text: 50,000 pods take about 15 MB */
#define LINES_MAX ((size_t)1 << 20)  /* one object's lines */

/* Why a pod is not attributed (wmap_exporter_unattributed_pods{reason}). */
enum { POD_ATTRIBUTED,
       POD_NO_OWNER,
       POD_UNCOVERED_OWNER,
       POD_UNRESOLVED_OWNER,
       POD_REASONS };
static const char *const reason_names[POD_REASONS] = { "", "no_owner", "uncovered_owner",
						       "unresolved_owner" };

typedef struct exporter exporter;

/* One watched collection. The watch thread writes snap and dirty under X->lock; the rest
 * is the worker's. */
typedef struct source {
	exporter *X;
	char path[512];  /* all namespaces: "/apis/jobset.x-k8s.io/v1alpha2/jobsets" */
	char label[300]; /* "jobsets.jobset.x-k8s.io", "pods" */
	int is_pods;
	wmap_kube_client *client;
	wmap_watch_stats stats;
	pthread_t thread;
	int started, wanted;
	atomic_int stop;
	long logged;  /* the HTTP status of the failure last logged (-1: none), the watch thread's */
	json_t *snap; /* the latest map (key -> object), under X->lock */
	int dirty;    /* under X->lock */
	json_t *seen; /* key -> the object last processed (the worker's) */
} source;

/* A watched workload object (the worker's). */
typedef struct wobj {
	json_t *obj;             /* a reference */
	char *owner_uid;         /* its controller's uid, NULL when it has none */
	wmap_workload *w;        /* NULL when it could not be resolved */
	char *fam[WMAP_WLM_POD]; /* each family's lines (NULL: none), exactly their size */
	size_t fam_len[WMAP_WLM_POD];
	size_t series;
	unsigned gen; /* bumped at every render: pods placed against an older one are placed again */
} wobj;

/* A watched pod (the worker's). */
typedef struct wpod {
	json_t *obj;
	char *owner_uid;   /* its controller's uid, NULL when it has none */
	char root_uid[64]; /* the workload it was placed in ("" none) */
	unsigned root_gen;
	int reason;
	char *line; /* its wmap_pod_workload_info line, NULL when not attributed */
	size_t line_len;
} wpod;

struct exporter {
	const wh_env *env;
	wmap_kube_client *client; /* discovery */
	wmap_discovery *disc;
	pthread_t thread;
	int started, watching;
	atomic_int stop;
	pthread_mutex_t lock; /* kick, dirty, the sources' snapshots */
	pthread_cond_t cond;
	unsigned kick;
	int dirty, defs_kicked;
	int retry_kinds; /* discovery failed: the kinds are looked up again within a second */
	size_t n_src;
	source *src[MAX_SOURCES];
	/* the worker's */
	json_t *objs, *pods; /* uid -> wobj *, wpod * (as integers) */
	const wh_defs *defs; /* the definitions the objects were resolved with */
	wmap_engine *eng;
	wmap_buf scratch[WMAP_WLM_COUNT]; /* one object's lines, copied out at their size */
	/* the text served, under text_lock */
	pthread_mutex_t text_lock;
	char *text;
	size_t text_len;
	/* health */
	atomic_int synced;
	atomic_llong last_sync_ms, render_us;
	atomic_uint workloads, series, dropped, resolve_errors, watches, renders;
	atomic_uint unattributed[POD_REASONS];
};

static void *ptr_get(json_t *map, const char *key)
{
	json_t *v = json_object_get(map, key);
	return v ? (void *)(intptr_t)json_integer_value(v) : NULL;
}

static int ptr_set(json_t *map, const char *key, void *p)
{
	return json_object_set_new(map, key, json_integer((json_int_t)(intptr_t)p));
}

static const char *uid_of(const json_t *obj)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
}

static const char *controller_uid(const json_t *obj)
{
	return json_string_value(json_object_get(wmap_object_controller(obj), "uid"));
}

static void wake(exporter *X, unsigned kick)
{
	pthread_mutex_lock(&X->lock);
	X->kick |= kick;
	if (kick & WH_STATE_DEFS)
		X->defs_kicked = 1;
	pthread_cond_signal(&X->cond);
	pthread_mutex_unlock(&X->lock);
}

/* ---- the watch threads ------------------------------------------------------------ */

static void on_change(void *ud, const json_t *objects, int synced)
{
	source *s = ud;
	/* The map is copied, its objects shared: the watch never changes a stored object. */
	json_t *snap = json_copy((json_t *)objects);
	if (!snap)
		return;
	s->logged = -1; /* a later failure is logged again */
	pthread_mutex_lock(&s->X->lock);
	json_decref(s->snap);
	s->snap = snap;
	s->dirty = 1;
	s->X->dirty = 1;
	pthread_cond_signal(&s->X->cond);
	pthread_mutex_unlock(&s->X->lock);
	(void)synced;
}

static void on_error(void *ud, const wmap_error *err, long status)
{
	source *s = ud;
	if (status == s->logged)
		return; /* once per kind of failure: a 403 retried every 30 s is one line */
	s->logged = status;
	json_t *f = json_pack("{s:s, s:i, s:s}", "resource", s->label, "status", (int)status,
			      "error", err->message);
	wh_log("warn", "workload metrics: list/watch failed; retrying", f);
	json_decref(f);
}

/* What the exporter keeps of a pod (wmap_watch_opts.transform): the metadata attribution and
 * a definition's podSelector read (name, uid, labels, annotations, owners), as compact JSON
 * text, parsed again when the pod is placed. A pod of a real cluster is 5-20 KB of JSON
 * (managedFields, statuses, env, volumes); in jansson even the bench's 575-byte pods take
 * 6 KB each, their metadata alone 3.2 KB, and the text 0.4 KB (measured over 50,000: 300,
 * 160 and 21 MB). */
static json_t *trim_pod(void *ud, json_t *pod)
{
	static const char *const keep[] = { "name", "namespace", "uid",
					    "labels", "annotations", "ownerReferences" };
	const json_t *md = json_object_get(pod, "metadata");
	json_t *t = json_object(), *m = json_object(), *text = NULL;
	char *s = NULL;
	size_t len = 0;
	(void)ud;
	if (!t || !m || json_object_set(t, "metadata", m) != 0)
		goto done;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		json_t *v = json_object_get(md, keep[i]);
		if (v && json_object_set(m, keep[i], v) != 0)
			goto done;
	}
	if ((s = wmap_json_text(t, &len)) != NULL)
		text = json_stringn(s, len);
done:
	free(s);
	json_decref(m);
	json_decref(t);
	return text; /* NULL: kept whole */
}

static void *watch_main(void *arg)
{
	source *s = arg;
	wmap_watch_opts o = { 0 };
	wmap_error err;
	o.path = s->path;
	o.on_change = on_change;
	o.on_error = on_error;
	o.transform = s->is_pods ? trim_pod : NULL;
	o.ud = s;
	o.stop = &s->stop;
	if (wmap_watch_run(s->client, &o, &s->stats, &err) != 0)
		wh_logf("error", "workload metrics: watch of %s stopped: %s", s->label, err.message);
	return NULL;
}

static source *source_start(exporter *X, const char *path, const char *label, int is_pods)
{
	wmap_error err;
	wmap_kube_opts ko = { .user_agent = "wmap-webhook" };
	source *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->X = X;
	s->logged = -1;
	s->is_pods = is_pods;
	s->wanted = 1;
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->label, sizeof(s->label), "%s", label);
	if (!(s->seen = json_object()) || wmap_kube_client_new(&s->client, X->env->kube, &ko, &err) != 0 ||
	    pthread_create(&s->thread, NULL, watch_main, s) != 0) {
		wmap_kube_client_free(s->client);
		json_decref(s->seen);
		free(s);
		return NULL;
	}
	s->started = 1;
	return s;
}

/* Stops and joins the thread; the worker forgets the source's objects afterwards. */
static void source_stop(source *s)
{
	atomic_store(&s->stop, 1);
	if (s->started)
		pthread_join(s->thread, NULL);
	s->started = 0;
	wmap_kube_client_free(s->client);
	s->client = NULL;
}

/* ---- the objects ------------------------------------------------------------------ */

static void wobj_free(wobj *o)
{
	if (!o)
		return;
	json_decref(o->obj);
	free(o->owner_uid);
	wmap_workload_free(o->w);
	for (int f = 0; f < WMAP_WLM_POD; f++)
		free(o->fam[f]);
	free(o);
}

static void wpod_free(wpod *p)
{
	if (!p)
		return;
	json_decref(p->obj);
	free(p->owner_uid);
	free(p->line);
	free(p);
}

/* Empties b for the next object, keeping its memory unless an append failed (the error
 * stays in a buffer until it is freed). */
static void scratch_reset(wmap_buf *b)
{
	if (b->error)
		wmap_buf_free(b);
	wmap_buf_clear(b);
}

/* A copy of b's text at its size (NULL for none, or when out of memory: no lines). */
static char *take_exact(wmap_buf *b, size_t *len)
{
	char *t = NULL;
	*len = 0;
	if (!b->error && b->len && (t = malloc(b->len)) != NULL) {
		memcpy(t, b->data, b->len);
		*len = b->len;
	}
	wmap_buf_clear(b);
	return t;
}

/* Resolves o->obj with X->eng and renders its lines (none when it cannot be resolved). */
static void wobj_render(exporter *X, wobj *o)
{
	wmap_error err = { 0 };
	wmap_workload_free(o->w);
	o->w = NULL;
	o->series = 0;
	o->gen++;
	for (int f = 0; f < WMAP_WLM_COUNT; f++)
		scratch_reset(&X->scratch[f]);
	if (wmap_workload_resolve(&o->w, X->eng, o->obj, NULL, &err) != 0 ||
	    wmap_wlm_workload(X->scratch, &o->series, o->w, &err) != 0) {
		const json_t *md = json_object_get(o->obj, "metadata");
		json_t *f = json_pack("{s:s?, s:s?, s:s?, s:s}", "kind",
				      json_string_value(json_object_get(o->obj, "kind")), "namespace",
				      json_string_value(json_object_get(md, "namespace")), "name",
				      json_string_value(json_object_get(md, "name")), "error", err.message);
		wh_log("warn", "workload metrics: cannot resolve a workload; it has no series", f);
		json_decref(f);
		wmap_workload_free(o->w);
		o->w = NULL;
		o->series = 0;
	}
	for (int f = 0; f < WMAP_WLM_POD; f++) {
		free(o->fam[f]);
		o->fam[f] = o->w ? take_exact(&X->scratch[f], &o->fam_len[f]) : NULL;
		if (!o->w)
			o->fam_len[f] = 0;
	}
}

/* The pod stored as obj (the text trim_pod made of it, or the object itself when that
 * failed) as an object: a new reference, NULL when the text does not parse. */
static json_t *pod_of(json_t *obj)
{
	return json_is_string(obj) ? wmap_json_parse(json_string_value(obj), json_string_length(obj), NULL)
				   : json_incref(obj);
}

static void upsert_pod(exporter *X, json_t *obj)
{
	json_t *pod = pod_of(obj);
	const char *uid = uid_of(pod), *ou = controller_uid(pod);
	wpod *p = uid ? ptr_get(X->pods, uid) : NULL;
	if (!uid)
		goto done;
	if (!p) {
		if (!(p = calloc(1, sizeof(*p))))
			goto done;
		if (ptr_set(X->pods, uid, p) != 0) {
			wpod_free(p);
			goto done;
		}
	}
	json_decref(p->obj);
	p->obj = json_incref(obj);
	free(p->owner_uid);
	p->owner_uid = ou ? strdup(ou) : NULL;
	p->root_uid[0] = '\0'; /* placed again */
done:
	json_decref(pod);
}

static void upsert(exporter *X, source *s, json_t *obj)
{
	if (s->is_pods) {
		upsert_pod(X, obj);
		return;
	}
	const char *uid = uid_of(obj);
	if (!uid)
		return;
	wobj *o = ptr_get(X->objs, uid);
	if (!o) {
		if (!(o = calloc(1, sizeof(*o))))
			return;
		if (ptr_set(X->objs, uid, o) != 0) {
			wobj_free(o);
			return;
		}
	}
	json_decref(o->obj);
	o->obj = json_incref(obj);
	free(o->owner_uid);
	const char *ou = controller_uid(obj);
	o->owner_uid = ou ? strdup(ou) : NULL;
	wobj_render(X, o);
}

static void forget(exporter *X, source *s, json_t *obj)
{
	json_t *o_ = s->is_pods ? pod_of(obj) : json_incref(obj);
	const char *uid = uid_of(o_);
	if (uid && s->is_pods) {
		wpod *p = ptr_get(X->pods, uid);
		if (p && p->obj == obj) {
			json_object_del(X->pods, uid);
			wpod_free(p);
		}
	} else if (uid) {
		wobj *o = ptr_get(X->objs, uid);
		if (o && o->obj == obj) {
			json_object_del(X->objs, uid);
			wobj_free(o);
		}
	}
	json_decref(o_);
}

/* Applies what changed in s's snap (NULL: every object is gone) since the last call. */
static void follow(exporter *X, source *s, json_t *snap)
{
	const char *k;
	json_t *v, *prev;
	void *tmp;
	json_object_foreach_safe(s->seen, tmp, k, prev) {
		if (snap && json_object_get(snap, k) == prev)
			continue;
		forget(X, s, prev); /* gone, or replaced below */
		json_object_del(s->seen, k);
	}
	json_object_foreach(snap, k, v) {
		if (json_object_get(s->seen, k) == v)
			continue;
		upsert(X, s, v);
		json_object_set(s->seen, k, v);
	}
}

/* ---- attribution and the text ----------------------------------------------------- */

/* The topmost watched owner of pod p, or NULL with p->reason set. */
static wobj *root_of(exporter *X, wpod *p)
{
	const char *uid = p->owner_uid;
	wobj *root = NULL;
	int had_owner = uid != NULL;
	for (int hop = 0; hop < OWNER_HOPS && uid; hop++) {
		wobj *o;
		wpod *mid;
		if ((o = ptr_get(X->objs, uid)) != NULL) {
			root = o;
			uid = o->owner_uid;
		} else if ((mid = ptr_get(X->pods, uid)) != NULL) {
			uid = mid->owner_uid; /* a pod owning a StatefulSet (LeaderWorkerSet's leader) */
		} else {
			break; /* a kind no definition covers, or not listed yet */
		}
	}
	p->reason = root        ? (root->w ? POD_ATTRIBUTED : POD_UNRESOLVED_OWNER)
		    : had_owner ? POD_UNCOVERED_OWNER
				: POD_NO_OWNER;
	return root && root->w ? root : NULL;
}

/* Places every pod whose workload changed (or that changed) and counts the others. */
static void attribute(exporter *X, unsigned counts[POD_REASONS])
{
	const char *k;
	json_t *v;
	memset(counts, 0, sizeof(unsigned) * POD_REASONS);
	json_object_foreach(X->pods, k, v) {
		wpod *p = (wpod *)(intptr_t)json_integer_value(v);
		wobj *root = root_of(X, p);
		counts[p->reason]++;
		if (!root) {
			p->root_uid[0] = '\0';
			free(p->line);
			p->line = NULL;
			p->line_len = 0;
			continue;
		}
		const char *ruid = uid_of(root->obj);
		if (strcmp(p->root_uid, ruid) == 0 && p->root_gen == root->gen)
			continue;
		int node = -1, inst = -1;
		wmap_error err = { 0 };
		json_t *pod = pod_of(p->obj);
		if (!pod)
			continue;
		if (wmap_wlm_place(&node, &inst, X->eng, root->w, pod, &err) != 0)
			node = inst = -1; /* counted under the sentinels */
		wmap_buf *b = &X->scratch[WMAP_WLM_POD];
		scratch_reset(b);
		wmap_wlm_pod(b, root->w, pod, node, inst);
		json_decref(pod);
		free(p->line);
		p->line = take_exact(b, &p->line_len);
		snprintf(p->root_uid, sizeof(p->root_uid), "%s", ruid);
		p->root_gen = root->gen;
	}
}

/* Whether o is a workload of its own: resolved, and no watched object or pod controls it
 * (LeaderWorkerSet's worker StatefulSets belong to their leader pod). */
static int exposed(exporter *X, const wobj *o)
{
	return o->w && !(o->owner_uid && (ptr_get(X->objs, o->owner_uid) ||
					  ptr_get(X->pods, o->owner_uid)));
}

/* The families, concatenated, within the cap: the new text served. */
static void assemble(exporter *X, const unsigned counts[POD_REASONS])
{
	size_t cap = X->env->opt->workload_max_series, total = 0, dropped = 0, n = 0;
	unsigned resolve_errors = 0;
	/* One allocation of about the last text's size, not a doubling series of them. */
	wmap_buf out = WMAP_BUF_INIT(TEXT_MAX, X->text_len + X->text_len / 8 + (1 << 16));
	json_t *keep = json_object();
	const char *k;
	json_t *v;
	if (!keep)
		return;
	json_object_foreach(X->objs, k, v) {
		wobj *o = (wobj *)(intptr_t)json_integer_value(v);
		resolve_errors += !o->w;
		if (!exposed(X, o))
			continue;
		if (total + o->series > cap) {
			dropped += o->series;
			continue;
		}
		total += o->series;
		n++;
		json_object_set_new(keep, k, json_true());
	}
	for (int f = 0; f < WMAP_WLM_POD; f++) {
		wmap_wlm_header(&out, (wmap_wlm_family)f);
		json_object_foreach(X->objs, k, v) {
			wobj *o = (wobj *)(intptr_t)json_integer_value(v);
			if (o->fam_len[f] && json_object_get(keep, k))
				wmap_buf_add(&out, o->fam[f], o->fam_len[f]);
		}
	}
	wmap_wlm_header(&out, WMAP_WLM_POD);
	json_object_foreach(X->pods, k, v) {
		wpod *p = (wpod *)(intptr_t)json_integer_value(v);
		if (!p->line)
			continue;
		if (total + 1 > cap) {
			dropped++;
			continue;
		}
		total++;
		wmap_buf_add(&out, p->line, p->line_len);
	}
	json_decref(keep);
	size_t len;
	char *text = wmap_buf_take(&out, &len);
	if (!text) {
		wh_logf("error", "workload metrics: the text does not fit; the last one stays");
		return;
	}
	/* The gauges first: whoever sees the new text sees the gauges that go with it. */
	atomic_store(&X->workloads, (unsigned)n);
	atomic_store(&X->series, (unsigned)total);
	atomic_store(&X->dropped, (unsigned)dropped);
	atomic_store(&X->resolve_errors, resolve_errors);
	for (int r = 0; r < POD_REASONS; r++)
		atomic_store(&X->unattributed[r], counts[r]);
	pthread_mutex_lock(&X->text_lock);
	free(X->text);
	X->text = text;
	X->text_len = len;
	pthread_mutex_unlock(&X->text_lock);
}

static long long now_us(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* One pass: the snapshots that changed applied, the pods attributed, the text assembled. */
static void rebuild(exporter *X, wh_state *st)
{
	long long t0 = now_us(CLOCK_MONOTONIC);
	json_t *snaps[MAX_SOURCES] = { 0 };
	int all_synced = 1, defs_changed;
	pthread_mutex_lock(&X->lock);
	defs_changed = X->defs_kicked || st->defs != X->defs;
	X->defs_kicked = 0;
	X->dirty = 0;
	for (size_t i = 0; i < X->n_src; i++) {
		source *s = X->src[i];
		if (s->dirty)
			snaps[i] = json_incref(s->snap);
		s->dirty = 0;
		all_synced &= atomic_load(&s->stats.synced) != 0;
	}
	pthread_mutex_unlock(&X->lock);
	if (defs_changed) {
		wmap_engine *eng = NULL;
		wmap_error err;
		if (wmap_engine_new(&eng, st->defs->reg, &err) != 0) {
			wh_logf("error", "workload metrics: %s", err.message);
			for (size_t i = 0; i < X->n_src; i++)
				json_decref(snaps[i]);
			return;
		}
		wmap_engine_free(X->eng);
		X->eng = eng;
		X->defs = st->defs;
		const char *k;
		json_t *v;
		json_object_foreach(X->objs, k, v)
			wobj_render(X, (wobj *)(intptr_t)json_integer_value(v));
	}
	for (size_t i = 0; i < X->n_src; i++) {
		if (snaps[i])
			follow(X, X->src[i], snaps[i]);
		json_decref(snaps[i]);
	}
	unsigned counts[POD_REASONS];
	attribute(X, counts);
	assemble(X, counts);
	atomic_fetch_add(&X->renders, 1);
	atomic_store(&X->render_us, now_us(CLOCK_MONOTONIC) - t0);
	if (all_synced) {
		atomic_store(&X->synced, 1);
		atomic_store(&X->last_sync_ms, now_us(CLOCK_REALTIME) / 1000);
	}
}

/* ---- the kinds watched ------------------------------------------------------------ */

/* Starts a watch for every kind in force the server serves (and for pods), stops those no
 * longer in force; the objects of a stopped one are forgotten. */
static void update_kinds(exporter *X, wh_state *st)
{
	wmap_error err;
	int rc = !X->disc ? wmap_discovery_load(&X->disc, X->client, 1, &err)
			  : wmap_discovery_refresh(X->disc, X->client, &err);
	X->retry_kinds = rc != 0;
	if (rc != 0) {
		wh_logf("warn", "workload metrics: discovery: %s", err.message);
		if (!X->disc)
			return;
	}
	for (size_t i = 0; i < X->n_src; i++)
		X->src[i]->wanted = X->src[i]->is_pods;
	const wmap_registry *reg = st->defs->reg;
	for (size_t i = 0; i < wmap_registry_count(reg); i++) {
		const wmap_gvk *g = wmap_registry_get(reg, i)->components[0].kind;
		const wmap_api_resource *res;
		char *path, label[300];
		if (!g || (!g->group[0] && strcmp(g->kind, "Pod") == 0))
			continue;
		if (!(res = wmap_discovery_find_kind(X->disc, g->group, g->version, g->kind)))
			continue;
		if (!(path = wmap_resource_path(res, NULL, NULL)))
			continue;
		wmap_resource_label(label, sizeof(label), res);
		/* One watch per group and resource, whichever version the definitions name first. */
		size_t j = 0;
		for (; j < X->n_src; j++)
			if (strcmp(X->src[j]->label, label) == 0)
				break;
		if (j < X->n_src) {
			X->src[j]->wanted = 1;
		} else if (X->n_src < MAX_SOURCES) {
			source *s = source_start(X, path, label, 0);
			if (s)
				X->src[X->n_src++] = s;
			else
				wh_logf("error", "workload metrics: cannot watch %s", label);
		}
		free(path);
	}
	size_t j = 0;
	for (size_t i = 0; i < X->n_src; i++) {
		source *s = X->src[i];
		if (s->wanted) {
			X->src[j++] = s;
			continue;
		}
		source_stop(s);
		follow(X, s, NULL);
		pthread_mutex_lock(&X->lock);
		json_decref(s->snap);
		pthread_mutex_unlock(&X->lock);
		json_decref(s->seen);
		free(s);
		X->dirty = 1;
	}
	X->n_src = j;
	atomic_store(&X->watches, (unsigned)j);
}

/* ---- the worker ------------------------------------------------------------------- */

static void wait_kick(exporter *X, unsigned *what)
{
	pthread_mutex_lock(&X->lock);
	while (!X->kick && !X->dirty && !atomic_load(&X->stop)) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 1;
		pthread_cond_timedwait(&X->cond, &X->lock, &t);
		if ((!X->watching && wh_leader_is(X->env->leader)) || X->retry_kinds)
			break; /* took the Lease without a kick reaching us yet; or discovery again */
	}
	*what = X->kick;
	X->kick = 0;
	pthread_mutex_unlock(&X->lock);
}

static void *worker_main(void *arg)
{
	exporter *X = arg;
	while (!atomic_load(&X->stop)) {
		unsigned what = 0;
		wait_kick(X, &what);
		if (atomic_load(&X->stop))
			break;
		if (!X->watching && !wh_leader_is(X->env->leader))
			continue; /* watches start when this replica first leads */
		struct timespec d = { 0, DEBOUNCE_MS * 1000000L };
		nanosleep(&d, NULL);
		wh_state *st = wh_inforce_acquire(X->env->inforce);
		if (!st)
			continue;
		if (!X->watching) {
			source *pods = source_start(X, PODS_PATH, "pods", 1);
			if (!pods) {
				wh_logf("error", "workload metrics: cannot watch pods");
				wh_inforce_release(st);
				continue;
			}
			X->src[X->n_src++] = pods;
			X->watching = 1;
			what |= WH_STATE_DEFS;
		}
		if ((what & (WH_STATE_DEFS | WH_STATE_CRDS)) || X->retry_kinds)
			update_kinds(X, st);
		rebuild(X, st);
		wh_inforce_release(st);
	}
	return NULL;
}

/* ---- serving ---------------------------------------------------------------------- */

/* GET /metrics/workloads (wh_metrics_fn): the text, on the leader only. */
static void workloads_text(void *ctx, wmap_buf *out)
{
	exporter *X = ctx;
	if (!wh_leader_is(X->env->leader))
		return;
	pthread_mutex_lock(&X->text_lock);
	if (X->text)
		wmap_buf_add(out, X->text, X->text_len);
	pthread_mutex_unlock(&X->text_lock);
}

/* The exporter's health on /metrics (wh_metrics_fn). */
static void health_metrics(void *ctx, wmap_buf *o)
{
	exporter *X = ctx;
	wh_prom_family(o, "wmap_exporter_synced", "gauge",
		       "1 once every watch of the workload metrics exporter listed and the text was "
		       "rendered from them.");
	wh_prom_sample(o, "wmap_exporter_synced", atomic_load(&X->synced), NULL);
	wh_prom_family(o, "wmap_exporter_last_sync_timestamp_seconds", "gauge",
		       "When the workload series were last rendered from synced watches (Unix time).");
	wh_prom_sample(o, "wmap_exporter_last_sync_timestamp_seconds",
		       (double)atomic_load(&X->last_sync_ms) / 1e3, NULL);
	wh_prom_family(o, "wmap_exporter_render_duration_seconds", "gauge",
		       "How long the last rendering of the workload series took.");
	wh_prom_sample(o, "wmap_exporter_render_duration_seconds",
		       (double)atomic_load(&X->render_us) / 1e6, NULL);
	wh_prom_family(o, "wmap_exporter_renders_total", "counter",
		       "Renderings of the workload series.");
	wh_prom_sample(o, "wmap_exporter_renders_total", atomic_load(&X->renders), NULL);
	wh_prom_family(o, "wmap_exporter_watches", "gauge",
		       "Collections watched (pods and each workload kind served).");
	wh_prom_sample(o, "wmap_exporter_watches", atomic_load(&X->watches), NULL);
	wh_prom_family(o, "wmap_exporter_workloads", "gauge", "Workloads with series.");
	wh_prom_sample(o, "wmap_exporter_workloads", atomic_load(&X->workloads), NULL);
	wh_prom_family(o, "wmap_exporter_unresolved_workloads", "gauge",
		       "Watched workload objects their definition could not resolve (no series).");
	wh_prom_sample(o, "wmap_exporter_unresolved_workloads", atomic_load(&X->resolve_errors), NULL);
	wh_prom_family(o, "wmap_exporter_pods", "gauge", "Pods attributed to a workload.");
	wh_prom_sample(o, "wmap_exporter_pods", atomic_load(&X->unattributed[POD_ATTRIBUTED]), NULL);
	wh_prom_family(o, "wmap_exporter_unattributed_pods", "gauge",
		       "Pods not attributed to a workload, by reason: no_owner (no controller), "
		       "uncovered_owner (a controller no definition covers), unresolved_owner "
		       "(its workload could not be resolved).");
	for (int r = 1; r < POD_REASONS; r++)
		wh_prom_sample(o, "wmap_exporter_unattributed_pods", atomic_load(&X->unattributed[r]),
			       "reason", reason_names[r], NULL);
	wh_prom_family(o, "wmap_exporter_series", "gauge", "Series on /metrics/workloads.");
	wh_prom_sample(o, "wmap_exporter_series", atomic_load(&X->series), NULL);
	wh_prom_family(o, "wmap_exporter_series_dropped", "gauge",
		       "Series left out of /metrics/workloads past --workload-metrics-max-series "
		       "(whole objects, never folded together).");
	wh_prom_sample(o, "wmap_exporter_series_dropped", atomic_load(&X->dropped), NULL);
}

/* ---- the controller --------------------------------------------------------------- */

static void workloads_stop(void *self);

static int workloads_start(void **self, const wh_env *env, wmap_error *err)
{
	wmap_kube_opts ko = { .user_agent = "wmap-webhook" };
	int rc;
	*self = NULL;
	if (env->opt->no_workload_metrics)
		return 0;
	exporter *X = calloc(1, sizeof(*X));
	if (!X)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	X->env = env;
	for (int f = 0; f < WMAP_WLM_COUNT; f++)
		wmap_buf_init(&X->scratch[f], LINES_MAX, 1024);
	pthread_mutex_init(&X->lock, NULL);
	pthread_mutex_init(&X->text_lock, NULL);
	pthread_cond_init(&X->cond, NULL);
	if (!(X->objs = json_object()) || !(X->pods = json_object())) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = wmap_kube_client_new(&X->client, env->kube, &ko, err)) != 0)
		goto fail;
	if ((rc = wh_metrics_provide("/metrics/workloads", workloads_text, X)) != 0 ||
	    (rc = wh_metrics_provide("/metrics", health_metrics, X)) != 0) {
		rc = wmap_error_set(err, rc, "too many metrics providers");
		goto fail;
	}
	if (pthread_create(&X->thread, NULL, worker_main, X) != 0) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "cannot start the workload metrics thread");
		goto fail;
	}
	X->started = 1;
	*self = X;
	return 0;
fail:
	workloads_stop(X);
	return rc;
}

static void workloads_kick(void *self, unsigned what)
{
	if (what & (WH_STATE_DEFS | WH_STATE_CRDS | WH_KICK_LEAD))
		wake(self, what);
}

static void workloads_stop(void *self)
{
	exporter *X = self;
	const char *k;
	json_t *v;
	if (!X)
		return;
	atomic_store(&X->stop, 1);
	wake(X, 0);
	if (X->started)
		pthread_join(X->thread, NULL);
	wh_metrics_withdraw(X);
	for (size_t i = 0; i < X->n_src; i++) {
		source_stop(X->src[i]);
		json_decref(X->src[i]->snap);
		json_decref(X->src[i]->seen);
		free(X->src[i]);
	}
	json_object_foreach(X->objs, k, v)
		wobj_free((wobj *)(intptr_t)json_integer_value(v));
	json_object_foreach(X->pods, k, v)
		wpod_free((wpod *)(intptr_t)json_integer_value(v));
	json_decref(X->objs);
	json_decref(X->pods);
	wmap_engine_free(X->eng);
	for (int f = 0; f < WMAP_WLM_COUNT; f++)
		wmap_buf_free(&X->scratch[f]);
	wmap_discovery_free(X->disc);
	wmap_kube_client_free(X->client);
	free(X->text);
	pthread_mutex_destroy(&X->lock);
	pthread_mutex_destroy(&X->text_lock);
	pthread_cond_destroy(&X->cond);
	free(X);
}

const wh_controller wh_workloads_controller = { "workload metrics", workloads_start,
						workloads_kick, workloads_stop };
