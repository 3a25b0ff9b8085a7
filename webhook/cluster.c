/* wmap-webhook: the watches, the only writer of the state in force with a cluster.
 *
 * Three watch threads (wmap_watch_run, each with its own API client) keep the kartas.run.ai,
 * workloadpolicies.wmap.io and customresourcedefinitions objects in step with the API
 * server. The CRDs are published at once (an index by group and kind for the schema path
 * check); the other two hand snapshots to a builder thread. The builder coalesces bursts (it
 * waits DEBOUNCE_MS after a change), builds the new definition set (catalog, --definitions,
 * cluster Kartas) with every thread's engine prepared, and the new policy set (the --policy
 * file, then the cluster's policies), and publishes them with their verdicts and the
 * objects they were built from (wh_inforce_publish), in one state. Reviews never wait for
 * any of it: they run on the state in force. When the API server cannot be reached, the last
 * good sets stay. The watches start nothing and call no controller: main.c's listener on the
 * state in force kicks the controllers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "webhook.h"
#include "wmap/kube/watch.h"
#include "wmap/yaml.h"

#define DEBOUNCE_MS 50
#define KARTAS_PATH "/apis/run.ai/v1alpha1/kartas"
#define POLICIES_PATH "/apis/wmap.io/v1alpha1/workloadpolicies"
#define CRDS_PATH "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

typedef struct wsource {
	wh_cluster *cl;
	const char *what; /* "kartas", "workloadpolicies" */
	const char *path;
	wmap_kube_client *client;
	wmap_watch_stats stats;
	pthread_t thread;
	int started;
	json_t *objects; /* latest snapshot (name -> object), under cl->lock */
	int synced;      /* a list succeeded (or the CRD is not installed) */
	int absent;      /* the last list said 404: logged once */
	int dirty;
} wsource;

struct wh_cluster {
	const wh_options *opt;
	wh_inforce *inf;             /* where the builds are published */
	const wmap_kube_config *cfg; /* borrowed */
	wsource kartas, policies, crds;
	pthread_t builder;
	int builder_started;
	atomic_int stop;
	pthread_mutex_t lock; /* snapshots, dirty flags */
	pthread_cond_t cond;
	int file_policy_dirty;
	json_t *file_docs, *file_pos; /* the --policy file's last good documents */
	json_t *invalid_seen;         /* "kind/name" -> resourceVersion already logged */
	/* What the last builds took (to skip a build when only statuses changed); under lock. */
	json_t *built_kartas, *built_policies;
	int built_k, built_p;
	struct timespec started_at;
	/* metrics */
	atomic_uint swaps, swap_failures, policy_swaps, invalid_kartas, invalid_policies,
		conflicts, cluster_kartas, cluster_policies, cluster_crds, sync_timeouts;
	atomic_int synced;
	atomic_llong last_build_us;
};

static double elapsed_s(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ---- the watch threads ------------------------------------------------------------ */

/* The CRD watch: the index is published at once (no build needed); the listeners learn that
 * the CRDs changed (the reconciler looks at discovery again: a kind may be served now, or no
 * longer). */
static void on_crds(wsource *src, const json_t *objects)
{
	wh_cluster *cl = src->cl;
	wh_update u = { .what = WH_STATE_CRDS, .crd_index = wh_crd_index(objects) };
	if (!u.crd_index)
		return; /* the last index stays */
	size_t n = json_object_size(u.crd_index);
	if (wh_inforce_publish(cl->inf, &u) == 0)
		atomic_store(&cl->cluster_crds, (unsigned)n);
}

static void on_change(void *ud, const json_t *objects, int synced)
{
	wsource *src = ud;
	if (src == &src->cl->crds) {
		on_crds(src, objects);
		return;
	}
	/* The map is copied, its objects shared: the watch never changes a stored object. */
	json_t *snap = json_copy((json_t *)objects);
	if (!snap)
		return;
	pthread_mutex_lock(&src->cl->lock);
	json_decref(src->objects);
	src->objects = snap;
	src->dirty = 1;
	if (synced) {
		src->synced = 1;
		src->absent = 0;
	}
	pthread_cond_signal(&src->cl->cond);
	pthread_mutex_unlock(&src->cl->lock);
}

static void on_error(void *ud, const wmap_error *err, long status)
{
	wsource *src = ud;
	json_t *f = json_pack("{s:s, s:i, s:s}", "resource", src->what, "status", (int)status,
			      "error", err->message);
	/* No CRD: nothing of this kind exists. Serve without it and keep watching for it. */
	int first = 1;
	if (status == 404 && src == &src->cl->crds) {
		first = !src->absent;
		src->absent = 1;
	} else if (status == 404) {
		pthread_mutex_lock(&src->cl->lock);
		first = !src->absent;
		src->absent = 1;
		if (!src->synced || src->objects) {
			json_decref(src->objects);
			src->objects = NULL;
			src->synced = 1;
			src->dirty = 1;
			pthread_cond_signal(&src->cl->cond);
		}
		pthread_mutex_unlock(&src->cl->lock);
	}
	if (status != 404)
		src->absent = 0;
	if (first)
		wh_log(status == 404 ? "info" : "warn",
		       status == 404 ? "the CRD is not installed; watching for it"
				     : "list/watch failed; serving the last good set and retrying",
		       f);
	json_decref(f);
}

static void *watch_main(void *arg)
{
	wsource *src = arg;
	wmap_watch_opts o = { 0 };
	wmap_error err;
	o.path = src->path;
	o.on_change = on_change;
	o.on_error = on_error;
	o.ud = src;
	o.stop = &src->cl->stop;
	if (wmap_watch_run(src->client, &o, &src->stats, &err) != 0)
		wh_logf("error", "watch of %s stopped: %s", src->what, err.message);
	return NULL;
}

/* ---- building the sets ------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of an object, sorted (the build must not depend on the order of events). */
static const char **sorted_keys(const json_t *obj, size_t *n)
{
	const char **keys = calloc(json_object_size(obj) + 1, sizeof(*keys));
	const char *k;
	json_t *v;
	*n = 0;
	if (!keys)
		return NULL;
	json_object_foreach((json_t *)obj, k, v)
		keys[(*n)++] = k;
	qsort(keys, *n, sizeof(*keys), cmp_str);
	return keys;
}

/* Logs an invalid object once per resourceVersion (a Karta flipping fifty times a second
 * gets a line per version, not per rebuild). */
static void log_invalid(wh_cluster *cl, const char *what, const char *name, const json_t *obj,
			const char *message)
{
	char key[600];
	const char *rv = json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	snprintf(key, sizeof(key), "%s/%s", what, name);
	if (json_object_size(cl->invalid_seen) > 10000)
		json_object_clear(cl->invalid_seen); /* bounded: deleted objects leave keys */
	const char *seen = json_string_value(json_object_get(cl->invalid_seen, key));
	if (seen && rv && strcmp(seen, rv) == 0)
		return;
	json_object_set_new(cl->invalid_seen, key, json_string(rv ? rv : ""));
	json_t *f = json_pack("{s:s, s:s, s:s}", "resource", what, "name", name, "findings",
			      message);
	wh_log("warn", "skipping an invalid cluster object; the others stay in force", f);
	json_decref(f);
}

#define VERDICT_MESSAGE_MAX 1024

/* Records into verdicts (when not NULL) what the build made of the object name: reason
 * InForce, Invalid or Superseded with a message capped at VERDICT_MESSAGE_MAX bytes, for the
 * metadata.generation it was built from, and the root kind of a Karta (NULL for policies). */
static void verdict(json_t *verdicts, const char *name, const json_t *obj, const char *reason,
		    const char *message, const wmap_gvk *kind)
{
	char msg[VERDICT_MESSAGE_MAX + 4];
	json_t *gen = json_object_get(json_object_get(obj, "metadata"), "generation");
	if (!verdicts)
		return;
	snprintf(msg, sizeof(msg), "%s", message ? message : "");
	if (message && strlen(message) > VERDICT_MESSAGE_MAX)
		memcpy(msg + VERDICT_MESSAGE_MAX - 3, "...", 4);
	json_t *v = json_pack("{s:I, s:b, s:s, s:s}", "generation",
			      (json_int_t)(json_is_integer(gen) ? json_integer_value(gen) : 0),
			      "ready", strcmp(reason, "InForce") == 0, "reason", reason, "message",
			      msg);
	if (v && kind)
		json_object_set_new(v, "kind", json_pack("{s:s, s:s, s:s}", "group", kind->group, "version", kind->version, "kind", kind->kind));
	if (v)
		json_object_set_new(verdicts, name, v);
}

/* The object without its status (not part of the document format). */
static json_t *without_status(const json_t *obj)
{
	json_t *c = json_copy((json_t *)obj);
	if (c)
		json_object_del(c, "status");
	return c;
}

static int build_registry(wh_cluster *cl, wmap_registry **out, const json_t *kartas,
			  json_t *verdicts, wmap_error *err)
{
	const wh_options *o = cl->opt;
	wmap_registry *reg = NULL;
	const char **keys = NULL;
	size_t n = 0;
	unsigned invalid = 0, conflicts = 0;
	int rc;

	*out = NULL;
	if ((rc = wmap_registry_new(&reg, err)) != 0 ||
	    (rc = wmap_registry_add_catalog(reg, err)) != 0 ||
	    (o->definitions &&
	     (rc = wmap_registry_add_path(reg, o->definitions, WMAP_ORIGIN_FILE, err)) != 0))
		goto fail;
	if (kartas && !(keys = sorted_keys(kartas, &n))) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *obj = json_object_get(kartas, keys[i]);
		json_t *doc = without_status(obj);
		wmap_definition *def = NULL;
		wmap_error e;
		char source[600];
		snprintf(source, sizeof(source), "kartas.run.ai/%s", keys[i]);
		if (!doc) {
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			goto fail;
		}
		int lrc = wmap_definition_load(&def, doc, source, WMAP_ORIGIN_CLUSTER, NULL, 0, &e);
		json_decref(doc);
		/* An expression libjq must compile is checked now: one broken expression would
		 * otherwise fail the preparation of the whole set. */
		if (lrc == 0 && def->n_jq > 0 && wmap_definition_check_jq(def, &e) != 0) {
			wmap_definition_free(def);
			lrc = WMAP_EJQ;
		}
		if (lrc == WMAP_ENOMEM) {
			rc = lrc;
			*err = e;
			goto fail;
		}
		if (lrc != 0) {
			invalid++;
			log_invalid(cl, "kartas.run.ai", keys[i], obj, e.message);
			verdict(verdicts, keys[i], obj, "Invalid", e.message, NULL);
			continue;
		}
		const wmap_gvk *k = def->components[0].kind;
		char gvk[300] = "", dname[256];
		int exact = 0;
		const wmap_definition *have = NULL;
		if (k) {
			wmap_gvk_format(gvk, sizeof(gvk), k);
			have = wmap_registry_find(reg, k->group, k->version, k->kind, &exact);
		}
		snprintf(dname, sizeof(dname), "%s", def->name);
		if (wmap_registry_add(reg, def, &e) == 0) {
			if (k)
				snprintf(e.message, sizeof(e.message), "the definition of %s is in force",
					 gvk);
			else
				snprintf(e.message, sizeof(e.message), "in force");
			verdict(verdicts, keys[i], obj, "InForce", e.message, k); /* reg owns k */
			continue;
		}
		if (e.code == WMAP_ENOMEM) {
			rc = WMAP_ENOMEM;
			*err = e;
			goto fail;
		}
		conflicts++;
		int superseded = have && exact && have->origin == WMAP_ORIGIN_CLUSTER;
		if (superseded)
			snprintf(e.message, sizeof(e.message),
				 "2 cluster Karta definitions claim %s: %s, %s; using %s", gvk,
				 have->name, dname, have->name);
		log_invalid(cl, "kartas.run.ai", keys[i], obj, e.message);
		verdict(verdicts, keys[i], obj, superseded ? "Superseded" : "Invalid", e.message,
			NULL);
	}
	atomic_store(&cl->invalid_kartas, invalid);
	atomic_store(&cl->conflicts, conflicts);
	atomic_store(&cl->cluster_kartas, (unsigned)(n - invalid - conflicts));
	free(keys);
	*out = reg;
	return 0;
fail:
	free(keys);
	wmap_registry_free(reg);
	return rc;
}

/* Reads the --policy file's documents (the reload thread has checked the file). */
static void load_file_policies(wh_cluster *cl)
{
	const char *path = cl->opt->policy;
	json_t *docs = NULL, *pos = json_object();
	wmap_yaml_opts yo = { 0 };
	wmap_error err;
	wmap_policy_set *check = NULL;
	if (!path || !pos) {
		json_decref(pos);
		return;
	}
	yo.positions = pos;
	if (wmap_yaml_parse_file(&docs, path, &yo, &err) != 0 ||
	    wmap_policy_set_parse(&check, docs, path, pos, &err) != 0) {
		json_decref(docs);
		json_decref(pos);
		return; /* the reload thread reports it; the last good documents stay */
	}
	wmap_policy_set_free(check);
	json_decref(cl->file_docs);
	json_decref(cl->file_pos);
	cl->file_docs = docs;
	cl->file_pos = pos;
}

/* The file's policies in file order, a cluster object replacing a file policy of the same
 * name in place; then the cluster's other policies by name. Invalid objects are skipped. */
static int build_policies(wh_cluster *cl, wmap_policy_set **out, const json_t *objects,
			  json_t *verdicts, wmap_error *err)
{
	json_t *docs = json_array(), *used = json_object();
	const char **keys = NULL;
	size_t n = 0, i;
	unsigned invalid = 0, count = 0;
	json_t *doc;
	int rc = 0;

	*out = NULL;
	if (!docs || !used || (objects && !(keys = sorted_keys(objects, &n)))) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	/* Check each cluster object alone, so one broken object costs only itself. */
	json_t *valid = json_object();
	if (!valid) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		const json_t *obj = json_object_get(objects, keys[i]);
		json_t *one = json_array();
		wmap_policy_set *set = NULL;
		wmap_error e;
		char name[600];
		snprintf(name, sizeof(name), "workloadpolicies.wmap.io/%s", keys[i]);
		if (!one || json_array_append_new(one, without_status(obj)) != 0) {
			json_decref(one);
			json_decref(valid);
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			goto cleanup;
		}
		if (wmap_policy_set_parse(&set, one, name, NULL, &e) == 0) {
			json_object_set(valid, keys[i], json_array_get(one, 0));
			verdict(verdicts, keys[i], obj, "InForce",
				wmap_policy_needs_validation(&set->policies[0])
					? "in force; checked at /validate"
					: "in force",
				NULL);
		} else {
			invalid++;
			log_invalid(cl, "workloadpolicies.wmap.io", keys[i], obj, e.message);
			verdict(verdicts, keys[i], obj, "Invalid", e.message, NULL);
		}
		wmap_policy_set_free(set);
		json_decref(one);
	}
	json_array_foreach(cl->file_docs, i, doc) {
		const char *name = json_string_value(
			json_object_get(json_object_get(doc, "metadata"), "name"));
		json_t *over = name ? json_object_get(valid, name) : NULL;
		json_array_append(docs, over ? over : doc);
		if (over)
			json_object_set_new(used, name, json_true());
	}
	for (i = 0; i < n; i++) {
		json_t *v = json_object_get(valid, keys[i]);
		if (v && !json_object_get(used, keys[i]))
			json_array_append(docs, v);
		if (v)
			count++;
	}
	json_decref(valid);
	atomic_store(&cl->invalid_policies, invalid);
	atomic_store(&cl->cluster_policies, count);
	/* The file's documents come first, so their recorded positions still apply. */
	rc = wmap_policy_set_parse(out, docs, cl->opt->policy ? cl->opt->policy : "workloadpolicies.wmap.io",
				   cl->file_pos, err);
cleanup:
	free(keys);
	json_decref(docs);
	json_decref(used);
	return rc;
}

static void set_ready(wh_cluster *cl, int timed_out)
{
	if (wh_inforce_ready(cl->inf))
		return;
	wh_inforce_set_ready(cl->inf);
	wh_metrics_set_ready(1);
	if (timed_out) {
		atomic_fetch_add(&cl->sync_timeouts, 1);
		wh_logf("warn", "not synced with the API server after %u s; ready with the "
				"definitions and policies at hand (catalog and files), still trying",
			cl->opt->sync_timeout_s);
	} else {
		wh_logf("info", "synced with the API server; ready");
	}
}

/* 1 when the metadata keys a build reads are equal. */
static int same_meta(const json_t *a, const json_t *b)
{
	static const char *const keys[] = { "name", "uid", "generation", "labels", "annotations" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *x = json_object_get(a, keys[i]), *y = json_object_get(b, keys[i]);
		if ((x || y) && !(x && y && json_equal((json_t *)x, (json_t *)y)))
			return 0;
	}
	return 1;
}

/* 1 when two snapshots (name -> object) differ at most in what a build does not read: the
 * status and metadata such as resourceVersion. A status write of the leader then costs no
 * build. */
static int same_but_status(const json_t *a, const json_t *b)
{
	const char *name, *k;
	json_t *va, *x;
	if (!a || !b)
		return a == b;
	if (json_object_size(a) != json_object_size(b))
		return 0;
	json_object_foreach((json_t *)a, name, va) {
		json_t *vb = json_object_get(b, name);
		if (!vb)
			return 0;
		if (va == vb)
			continue;
		if (json_object_size(va) - (json_object_get(va, "status") != NULL) !=
		    json_object_size(vb) - (json_object_get(vb, "status") != NULL))
			return 0;
		json_object_foreach(va, k, x) {
			if (strcmp(k, "status") == 0)
				continue;
			json_t *y = json_object_get(vb, k);
			if (!y || !(strcmp(k, "metadata") == 0 ? same_meta(x, y) : json_equal(x, y)))
				return 0;
		}
	}
	return 1;
}

/* Builds what changed (defs, policies) from the snapshots kartas and pols, and publishes it
 * in one state with the snapshots themselves (the status writer's input). A set that cannot
 * be built leaves the last good one in force. */
static void rebuild(wh_cluster *cl, int defs, int policies, json_t *kartas, json_t *pols)
{
	wh_update u = { .what = WH_STATE_OBJECTS };
	wmap_error err;
	struct timespec t0;
	size_t n_defs = 0, n_policies = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (defs) {
		wmap_registry *reg = NULL;
		json_t *verdicts = json_object();
		if (!verdicts || build_registry(cl, &reg, kartas, verdicts, &err) != 0 ||
		    wh_defs_prepare(&u.defs, reg, cl->opt->threads, &err) != 0) {
			if (!verdicts)
				wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
			atomic_fetch_add(&cl->swap_failures, 1);
			json_t *f = json_pack("{s:s}", "error", err.message);
			wh_log("error", "cannot build the new definition set; the last good one "
					"stays in force",
			       f);
			json_decref(f);
			json_decref(verdicts);
		} else {
			u.what |= WH_STATE_DEFS;
			u.kverdicts = verdicts;
			n_defs = wmap_registry_count(u.defs->reg);
		}
	}
	if (policies) {
		json_t *verdicts = json_object();
		if (!verdicts || build_policies(cl, &u.policies, pols, verdicts, &err) != 0) {
			if (!verdicts)
				wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
			json_t *f = json_pack("{s:s}", "error", err.message);
			wh_log("error", "cannot merge the policies; the last good ones stay", f);
			json_decref(f);
			json_decref(verdicts);
		} else {
			u.what |= WH_STATE_POLICIES;
			u.pverdicts = verdicts;
			n_policies = u.policies->n;
		}
	}
	unsigned what = u.what;
	u.kartas = json_incref(kartas);
	u.wpolicies = json_incref(pols);
	if (wh_inforce_publish(cl->inf, &u) != 0) {
		if (what & WH_STATE_DEFS)
			atomic_fetch_add(&cl->swap_failures, 1);
		wh_logf("error", "cannot publish the new state (out of memory); the last one stays");
		what = 0;
	}
	if (what & WH_STATE_DEFS) {
		atomic_fetch_add(&cl->swaps, 1);
		json_t *f = json_pack("{s:i, s:i, s:i, s:f}", "definitions", (int)n_defs,
				      "clusterKartas", (int)atomic_load(&cl->cluster_kartas),
				      "invalidKartas", (int)atomic_load(&cl->invalid_kartas),
				      "buildMs", elapsed_s(&t0) * 1e3);
		wh_log("info", "definitions swapped", f);
		json_decref(f);
	}
	if (what & WH_STATE_POLICIES) {
		atomic_fetch_add(&cl->policy_swaps, 1);
		json_t *f = json_pack("{s:i, s:i, s:i}", "policies", (int)n_policies,
				      "clusterPolicies", (int)atomic_load(&cl->cluster_policies),
				      "invalidPolicies", (int)atomic_load(&cl->invalid_policies));
		wh_log("info", "policies swapped", f);
		json_decref(f);
	}
	atomic_store(&cl->last_build_us, (long long)(elapsed_s(&t0) * 1e6));
}

static void *builder_main(void *arg)
{
	wh_cluster *cl = arg;
	pthread_mutex_lock(&cl->lock);
	while (!atomic_load(&cl->stop)) {
		int defs = cl->kartas.dirty, pols = cl->policies.dirty || cl->file_policy_dirty;
		if (!defs && !pols) {
			struct timespec t;
			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_nsec += 200 * 1000000L;
			if (t.tv_nsec >= 1000000000L) {
				t.tv_sec++;
				t.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&cl->cond, &cl->lock, &t);
			if (!wh_inforce_ready(cl->inf) &&
			    elapsed_s(&cl->started_at) >= (double)cl->opt->sync_timeout_s)
				set_ready(cl, 1);
			continue;
		}
		/* Let a burst of events settle into one build. */
		pthread_mutex_unlock(&cl->lock);
		struct timespec d = { 0, DEBOUNCE_MS * 1000000L };
		nanosleep(&d, NULL);
		pthread_mutex_lock(&cl->lock);
		defs = cl->kartas.dirty;
		pols = cl->policies.dirty || cl->file_policy_dirty;
		int file = cl->file_policy_dirty;
		json_t *k = json_incref(cl->kartas.objects), *p = json_incref(cl->policies.objects);
		cl->kartas.dirty = cl->policies.dirty = cl->file_policy_dirty = 0;
		int synced = cl->kartas.synced && cl->policies.synced;
		/* Only statuses changed (the leader's writes among them): nothing to build. */
		if (defs && cl->built_k && same_but_status(cl->built_kartas, k))
			defs = 0;
		if (pols && !file && cl->built_p && same_but_status(cl->built_policies, p))
			pols = 0;
		if (defs) {
			json_decref(cl->built_kartas);
			cl->built_kartas = json_incref(k);
			cl->built_k = 1;
		}
		if (pols) {
			json_decref(cl->built_policies);
			cl->built_policies = json_incref(p);
			cl->built_p = 1;
		}
		pthread_mutex_unlock(&cl->lock);
		if (file)
			load_file_policies(cl);
		rebuild(cl, defs, pols, k, p);
		json_decref(k);
		json_decref(p);
		if (synced) {
			atomic_store(&cl->synced, 1);
			set_ready(cl, 0);
		}
		pthread_mutex_lock(&cl->lock);
	}
	pthread_mutex_unlock(&cl->lock);
	return NULL;
}

/* ---- start and stop --------------------------------------------------------------- */

void wh_cluster_policy_file_changed(wh_cluster *cl)
{
	if (!cl)
		return;
	pthread_mutex_lock(&cl->lock);
	cl->file_policy_dirty = 1;
	pthread_cond_signal(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
}

static int start_source(wh_cluster *cl, wsource *src, const char *what, const char *path,
			wmap_error *err)
{
	wmap_kube_opts ko = { 0 };
	src->cl = cl;
	src->what = what;
	src->path = path;
	ko.timeout_ms = 15000;
	ko.max_retries = -1; /* the watch loop backs off itself */
	ko.user_agent = "wmap-webhook/" WMAP_VERSION;
	int rc = wmap_kube_client_new(&src->client, cl->cfg, &ko, err);
	if (rc)
		return rc;
	if (pthread_create(&src->thread, NULL, watch_main, src) != 0)
		return wmap_error_set(err, WMAP_ENOMEM, "cannot start the %s watch thread", what);
	src->started = 1;
	return 0;
}

static void cluster_metrics(void *ctx, wmap_buf *o);

int wh_cluster_start(wh_cluster **out, const wh_options *opt, wh_inforce *inf,
		     const wmap_kube_config *cfg, wmap_error *err)
{
	wh_cluster *cl = calloc(1, sizeof(*cl));
	int rc;
	*out = NULL;
	if (!cl || !(cl->invalid_seen = json_object())) {
		free(cl);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	cl->opt = opt;
	cl->inf = inf;
	cl->cfg = cfg;
	pthread_mutex_init(&cl->lock, NULL);
	pthread_cond_init(&cl->cond, NULL);
	clock_gettime(CLOCK_MONOTONIC, &cl->started_at);
	if (opt->policy)
		load_file_policies(cl);
	if ((rc = wh_metrics_provide("/metrics", cluster_metrics, cl)) != 0) {
		wmap_error_set(err, rc, "too many metrics providers");
		goto fail;
	}
	if ((rc = start_source(cl, &cl->kartas, "kartas", KARTAS_PATH, err)) != 0 ||
	    (rc = start_source(cl, &cl->policies, "workloadpolicies", POLICIES_PATH, err)) != 0 ||
	    (rc = start_source(cl, &cl->crds, "customresourcedefinitions", CRDS_PATH, err)) != 0)
		goto fail;
	if (pthread_create(&cl->builder, NULL, builder_main, cl) != 0) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "cannot start the builder thread");
		goto fail;
	}
	cl->builder_started = 1;
	json_t *f = json_pack("{s:s, s:s, s:i}", "server", cfg->server, "source", cfg->source,
			      "syncTimeoutS", (int)opt->sync_timeout_s);
	wh_log("info", "watching Kartas, WorkloadPolicies and CRDs", f);
	json_decref(f);
	*out = cl;
	return 0;
fail:
	wh_cluster_stop(cl);
	return rc;
}

void wh_cluster_stop(wh_cluster *cl)
{
	if (!cl)
		return;
	atomic_store(&cl->stop, 1);
	pthread_mutex_lock(&cl->lock);
	pthread_cond_broadcast(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
	wsource *srcs[3] = { &cl->kartas, &cl->policies, &cl->crds };
	for (int i = 0; i < 3; i++)
		if (srcs[i]->started)
			pthread_join(srcs[i]->thread, NULL);
	if (cl->builder_started)
		pthread_join(cl->builder, NULL);
	wh_metrics_withdraw(cl);
	for (int i = 0; i < 3; i++) {
		wmap_kube_client_free(srcs[i]->client);
		json_decref(srcs[i]->objects);
	}
	json_decref(cl->file_docs);
	json_decref(cl->file_pos);
	json_decref(cl->invalid_seen);
	json_decref(cl->built_kartas);
	json_decref(cl->built_policies);
	pthread_mutex_destroy(&cl->lock);
	pthread_cond_destroy(&cl->cond);
	free(cl);
}

/* ---- metrics ---------------------------------------------------------------------- */

/* The watches' and the builder's families (wh_metrics_fn). */
static void cluster_metrics(void *ctx, wmap_buf *o)
{
	const wh_cluster *cl = ctx;
	const wsource *srcs[3] = { &cl->kartas, &cl->policies, &cl->crds };
	wh_prom_family(o, "wmap_webhook_cluster_synced", "gauge",
		       "1 once Kartas and WorkloadPolicies were listed and the sets built from them are in force.");
	wh_prom_sample(o, "wmap_webhook_cluster_synced", atomic_load(&cl->synced), NULL);
	wh_prom_family(o, "wmap_webhook_sync_timeouts_total", "counter",
		       "Times the webhook turned ready without a sync (--sync-timeout).");
	wh_prom_sample(o, "wmap_webhook_sync_timeouts_total", atomic_load(&cl->sync_timeouts), NULL);
	static const char *const names[][2] = {
		{ "lists", "successful lists" }, { "list_errors", "failed lists" }, { "watches", "watch requests" }, { "watch_restarts", "watches started again" }, { "watch_gone", "410 Gone answers (listed again)" }, { "watch_events", "ADDED, MODIFIED and DELETED events" }, { "watch_bad_events", "lines that were not watch events" }
	};
	for (size_t m = 0; m < sizeof(names) / sizeof(names[0]); m++) {
		char name[64], help[128];
		snprintf(name, sizeof(name), "wmap_webhook_%s_total", names[m][0]);
		snprintf(help, sizeof(help), "List/watch of cluster objects: %s.", names[m][1]);
		wh_prom_family(o, name, "counter", help);
		for (int i = 0; i < 3; i++) {
			const wmap_watch_stats *st = &srcs[i]->stats;
			unsigned v = m == 0   ? atomic_load(&st->lists)
				     : m == 1 ? atomic_load(&st->list_errors)
				     : m == 2 ? atomic_load(&st->watches)
				     : m == 3 ? atomic_load(&st->restarts)
				     : m == 4 ? atomic_load(&st->gone)
				     : m == 5 ? atomic_load(&st->events)
					      : atomic_load(&st->bad_events);
			wh_prom_sample(o, name, v, "resource", srcs[i]->what, NULL);
		}
	}
	wh_prom_family(o, "wmap_webhook_definition_swaps_total", "counter",
		       "Definition sets built and put in force, by result.");
	wh_prom_sample(o, "wmap_webhook_definition_swaps_total", atomic_load(&cl->swaps), "result", "success", NULL);
	wh_prom_sample(o, "wmap_webhook_definition_swaps_total", atomic_load(&cl->swap_failures), "result", "failure", NULL);
	wh_prom_family(o, "wmap_webhook_policy_swaps_total", "counter", "Policy sets merged and put in force.");
	wh_prom_sample(o, "wmap_webhook_policy_swaps_total", atomic_load(&cl->policy_swaps), NULL);
	wh_prom_family(o, "wmap_webhook_cluster_objects", "gauge", "Cluster objects in force.");
	wh_prom_sample(o, "wmap_webhook_cluster_objects", atomic_load(&cl->cluster_kartas), "resource", "kartas", NULL);
	wh_prom_sample(o, "wmap_webhook_cluster_objects", atomic_load(&cl->cluster_policies), "resource", "workloadpolicies", NULL);
	wh_prom_sample(o, "wmap_webhook_cluster_objects", atomic_load(&cl->cluster_crds), "resource", "customresourcedefinitions", NULL);
	wh_prom_family(o, "wmap_webhook_invalid_objects", "gauge",
		       "Cluster objects skipped as invalid (kartas: also a second Karta claiming a kind).");
	wh_prom_sample(o, "wmap_webhook_invalid_objects", atomic_load(&cl->invalid_kartas), "resource", "kartas", "reason", "invalid", NULL);
	wh_prom_sample(o, "wmap_webhook_invalid_objects", atomic_load(&cl->conflicts), "resource", "kartas", "reason", "conflict", NULL);
	wh_prom_sample(o, "wmap_webhook_invalid_objects", atomic_load(&cl->invalid_policies), "resource", "workloadpolicies", "reason", "invalid", NULL);
	wh_prom_family(o, "wmap_webhook_last_build_seconds", "gauge",
		       "Time the last build of the sets took (off the request path).");
	wh_prom_sample(o, "wmap_webhook_last_build_seconds", (double)atomic_load(&cl->last_build_us) / 1e6, NULL);
}
