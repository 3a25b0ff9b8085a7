/* wmap-webhook: the Ready condition of every Karta and WorkloadPolicy, written by the
 * replica holding the Lease.
 *
 * The builder (cluster.c) publishes, in the state in force, the objects and what it made of
 * each: in force, invalid (with the findings), superseded (another Karta claims its kind),
 * for the metadata.generation it read. Here, in the reconciler's thread, the leader turns
 * that into a condition
 *
 *   {type: Ready, status: "True"|"False", reason, message, observedGeneration,
 *    lastTransitionTime}
 *
 * (a Karta in force whose kind the server does not serve is `False`, `KindNotServed`) and
 * compares it with the condition the object carries. Only when status, reason, message or
 * observedGeneration differ does it PUT the object's status subresource, with the
 * resourceVersion it read: a concurrent change is a 409 and the next round compares again.
 * The condition is a function of the object and what is in force, computed the same way by
 * every replica, so a new leader finds nothing to write, and a resync writes nothing either:
 * one write per change. While the watch has not yet delivered the leader's own write (the
 * object's resourceVersion is still the one the write was based on), the object is left
 * alone, so one change is never written twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "webhook.h"
#include "wmap/json_text.h"
#include "wmap/kube/discovery.h"

#define PENDING_MAX 20000

typedef struct resource {
	const char *what; /* "kartas", "workloadpolicies" */
	const char *path; /* the collection */
} resource;

static const resource KARTAS = { "kartas", "/apis/run.ai/v1alpha1/kartas" };
static const resource POLICIES = { "workloadpolicies", "/apis/wmap.io/v1alpha1/workloadpolicies" };

/* 1 when name can go into a path as it is (an object name is a DNS subdomain). */
static int name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 253)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '-' || name[i] == '.'))
			return 0;
	return 1;
}

static void log_error(wh_status_writer *w, const char *what, const char *name,
		      const wmap_error *err)
{
	atomic_fetch_add(&w->errors, 1);
	if (w->error_logged)
		return; /* once until a write succeeds */
	w->error_logged = 1;
	json_t *f = json_pack("{s:s, s:s, s:s}", "resource", what, "name", name, "error",
			      err->message);
	wh_log("warn", "cannot write a status; retrying on the next round", f);
	json_decref(f);
}

/* The Ready condition object carries, NULL when none. */
static json_t *ready_of(const json_t *obj)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
		if (json_is_string(json_object_get(c, "type")) &&
		    strcmp(json_string_value(json_object_get(c, "type")), "Ready") == 0)
			return c;
	return NULL;
}

static int same_str(const json_t *c, const char *key, const char *want)
{
	const char *have = json_string_value(json_object_get(c, key));
	return have && strcmp(have, want) == 0;
}

/* The condition due for a verdict v, into reason/message (KindNotServed for a Karta in force
 * whose kind disc lacks). */
static int due(const json_t *v, const wmap_discovery *disc, const char **reason,
	       const char **message, char *buf, size_t len)
{
	int ready = json_is_true(json_object_get(v, "ready"));
	const json_t *k = json_object_get(v, "kind");
	*reason = json_string_value(json_object_get(v, "reason"));
	*message = json_string_value(json_object_get(v, "message"));
	if (ready && k && disc) {
		const char *g = json_string_value(json_object_get(k, "group"));
		const char *ver = json_string_value(json_object_get(k, "version"));
		const char *kind = json_string_value(json_object_get(k, "kind"));
		if (g && ver && kind && !wmap_discovery_find_kind(disc, g, ver, kind)) {
			snprintf(buf, len,
				 "the API server does not serve %s%s%s/%s (is its CRD installed?); the "
				 "definition waits for it",
				 kind, g[0] ? "." : "", g, ver);
			*reason = "KindNotServed";
			*message = buf;
			return 0;
		}
	}
	return ready;
}

/* Compares and, when different, writes one object's Ready condition. */
static void sync_one(wh_status_writer *w, wmap_kube_client *c, const wh_leader *leader,
		     const resource *r, const char *name, const json_t *obj, const json_t *v,
		     const wmap_discovery *disc)
{
	char buf[512], key[320], path[600], now[32];
	const char *reason, *message;
	const json_t *md = json_object_get(obj, "metadata");
	const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
	json_t *gen = json_object_get(md, "generation");
	json_int_t g = json_is_integer(gen) ? json_integer_value(gen) : 0;
	json_t *copy = NULL;
	char *body = NULL;
	wmap_error err;
	long status = 0;

	/* The verdict is of another generation: the build has not caught up yet. */
	if (!rv || !name_ok(name) || json_integer_value(json_object_get(v, "generation")) != g)
		return;
	snprintf(key, sizeof(key), "%s/%s", r->what, name);
	const char *pending = json_string_value(json_object_get(w->pending, key));
	if (pending && strcmp(pending, rv) == 0)
		return; /* our last write is not back from the watch yet */
	int ready = due(v, disc, &reason, &message, buf, sizeof(buf));
	if (!reason || !message)
		return;
	const char *st = ready ? "True" : "False";
	const json_t *have = ready_of(obj);
	if (have && same_str(have, "status", st) && same_str(have, "reason", reason) &&
	    same_str(have, "message", message) &&
	    json_integer_value(json_object_get(have, "observedGeneration")) == g &&
	    json_integer_value(json_object_get(json_object_get(obj, "status"),
					       "observedGeneration")) == g)
		return;
	/* lastTransitionTime moves only when the status does. */
	const char *since = have && same_str(have, "status", st)
				    ? json_string_value(json_object_get(have, "lastTransitionTime"))
				    : NULL;
	if (!since) {
		time_t t = time(NULL);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
		since = now;
	}
	json_t *cond = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "type", "Ready", "status", st,
				 "reason", reason, "message", message, "observedGeneration", g,
				 "lastTransitionTime", since);
	json_t *conds = json_array();
	if (!cond || !conds || !(copy = json_deep_copy(obj)))
		goto done;
	/* Other condition types stay as they are. */
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, e)
		if (e != have)
			json_array_append(conds, e);
	json_array_append(conds, cond);
	json_t *stobj = json_object_get(copy, "status");
	if (!json_is_object(stobj)) {
		stobj = json_object();
		json_object_set_new(copy, "status", stobj);
	}
	json_object_set_new(stobj, "observedGeneration", json_integer(g));
	json_object_set(stobj, "conditions", conds);
	snprintf(path, sizeof(path), "%s/%s/status", r->path, name);
	if (!(body = wmap_json_text(copy, NULL)) || !wh_leader_is(leader))
		goto done; /* lost the Lease meanwhile: write nothing */
	if (wmap_kube_request(NULL, &status, c, "PUT", path, "application/json", body, &err) != 0) {
		if (status == 409)
			atomic_fetch_add(&w->conflicts, 1); /* the next round reads it again */
		else if (status != 404)                     /* deleted meanwhile: nothing to do */
			log_error(w, r->what, name, &err);
		goto done;
	}
	w->error_logged = 0;
	atomic_fetch_add(&w->writes, 1);
	if (json_object_size(w->pending) > PENDING_MAX)
		json_object_clear(w->pending); /* bounded: deleted objects leave keys */
	json_object_set_new(w->pending, key, json_string(rv));
	json_t *f = json_pack("{s:s, s:s, s:s, s:s, s:I}", "resource", r->what, "name", name,
			      "ready", st, "reason", reason, "observedGeneration", g);
	wh_log("info", "status written", f);
	json_decref(f);
done:
	json_decref(cond);
	json_decref(conds);
	json_decref(copy);
	free(body);
}

static void sync_all(wh_status_writer *w, wmap_kube_client *c, const wh_leader *leader,
		     const resource *r, const json_t *objects, const json_t *verdicts,
		     const wmap_discovery *disc)
{
	const char *name;
	json_t *obj;
	json_object_foreach((json_t *)objects, name, obj) {
		const json_t *v = json_object_get(verdicts, name);
		if (!v)
			continue; /* not built yet */
		if (!wh_leader_is(leader))
			return;
		sync_one(w, c, leader, r, name, obj, v, disc);
	}
}

void wh_status_sync(wh_status_writer *w, wmap_kube_client *c, const wmap_discovery *disc,
		    const json_t *kartas, const json_t *kverdicts, const json_t *policies,
		    const json_t *pverdicts, const wh_leader *leader)
{
	if (!wh_leader_is(leader))
		return;
	if (!w->pending && !(w->pending = json_object()))
		return;
	sync_all(w, c, leader, &KARTAS, kartas, kverdicts, disc);
	sync_all(w, c, leader, &POLICIES, policies, pverdicts, disc);
}

void wh_status_writer_clear(wh_status_writer *w)
{
	if (!w)
		return;
	json_decref(w->pending);
	w->pending = NULL;
}

void wh_status_metrics(const wh_status_writer *w, wmap_buf *o)
{
	wh_prom_family(o, "wmap_webhook_status_writes_total", "counter", "Ready conditions written (one per change).");
	wh_prom_sample(o, "wmap_webhook_status_writes_total", atomic_load(&w->writes), NULL);
	wh_prom_family(o, "wmap_webhook_status_conflicts_total", "counter",
		       "Status writes refused with 409 (compared again).");
	wh_prom_sample(o, "wmap_webhook_status_conflicts_total", atomic_load(&w->conflicts), NULL);
	wh_prom_family(o, "wmap_webhook_status_errors_total", "counter", "Status writes that failed otherwise.");
	wh_prom_sample(o, "wmap_webhook_status_errors_total", atomic_load(&w->errors), NULL);
}
