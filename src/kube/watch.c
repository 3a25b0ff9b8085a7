/* wmap: list and watch one collection (see watch.h): the reflector behind the webhook's
 * Karta and WorkloadPolicy sources. The set of objects is a jansson object whose values are
 * never changed once stored, so a consumer may keep them while the loop goes on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wmap/kube/watch.h"

#define PAGE 500
#define KEY_MAX 512

typedef struct loop {
	wmap_kube_client *c;
	const wmap_watch_opts *o;
	wmap_watch_stats *st;
	json_t *objects; /* key -> object */
	char rv[128];    /* the last resourceVersion seen */
	int gone;        /* the watch said 410: list again */
	int changed;
	unsigned lines; /* lines read by the current watch */
	int failed;     /* it ended on an ERROR event or a line that was no event */
	unsigned seed;
} loop;

unsigned wmap_watch_backoff_ms(unsigned min_ms, unsigned max_ms, unsigned n, double r)
{
	unsigned long long d = min_ms;

	for (unsigned i = 0; i < n && d < max_ms; i++)
		d *= 2;
	if (d > max_ms)
		d = max_ms;
	d = d + (unsigned long long)((double)d * r);
	return d > max_ms ? max_ms : (unsigned)d;
}

static int stopped(const loop *l)
{
	return l->o->stop && atomic_load(l->o->stop);
}

/* Sleeps ms in short steps so that a stop is seen within 100 ms. */
static void pause_ms(const loop *l, unsigned ms)
{
	while (ms > 0 && !stopped(l)) {
		unsigned step = ms > 100 ? 100 : ms;
		struct timespec t = { 0, (long)step * 1000000L };

		nanosleep(&t, NULL);
		ms -= step;
	}
}

static double jitter(loop *l)
{
	return (double)(rand_r(&l->seed) % 10000) / 10000.0;
}

static void count(atomic_uint *c)
{
	if (c)
		atomic_fetch_add(c, 1);
}

#define STAT(l, field) ((l)->st ? &(l)->st->field : NULL)

/* "namespace/name" or "name"; 0, or -1 when the object has no name. */
static int object_key(char *buf, size_t len, const json_t *obj)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *ns = json_string_value(json_object_get(md, "namespace"));

	if (!name || !name[0])
		return -1;
	if (ns && ns[0])
		snprintf(buf, len, "%s/%s", ns, name);
	else
		snprintf(buf, len, "%s", name);
	return 0;
}

wmap_watch_kind wmap_watch_event_read(wmap_watch_event *ev, const char *line, size_t len)
{
	static const struct {
		const char *name;
		wmap_watch_kind kind;
	} types[] = { { "ADDED", WMAP_WATCH_ADDED },
		      { "MODIFIED", WMAP_WATCH_MODIFIED },
		      { "DELETED", WMAP_WATCH_DELETED },
		      { "BOOKMARK", WMAP_WATCH_BOOKMARK },
		      { "ERROR", WMAP_WATCH_ERROR } };
	const char *type;
	json_t *obj;

	memset(ev, 0, sizeof(*ev));
	ev->kind = WMAP_WATCH_BAD;
	ev->doc = json_loadb(line, len, 0, NULL);
	type = json_string_value(json_object_get(ev->doc, "type"));
	obj = json_object_get(ev->doc, "object");
	if (!type || !json_is_object(obj))
		return ev->kind;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(type, types[i].name) == 0)
			ev->kind = types[i].kind;
	if (ev->kind == WMAP_WATCH_BAD)
		return ev->kind;
	ev->object = obj;
	if (ev->kind == WMAP_WATCH_ERROR) {
		const char *msg = json_string_value(json_object_get(obj, "message"));

		ev->code = (long)json_integer_value(json_object_get(obj, "code"));
		ev->message = msg ? msg : "";
		if (ev->code == 410)
			ev->kind = WMAP_WATCH_GONE;
		return ev->kind;
	}
	ev->rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	if (ev->rv && !ev->rv[0])
		ev->rv = NULL;
	return ev->kind;
}

void wmap_watch_event_clear(wmap_watch_event *ev)
{
	if (!ev)
		return;
	json_decref(ev->doc);
	memset(ev, 0, sizeof(*ev));
}

static void remember_rv(loop *l, const char *rv)
{
	if (rv && strlen(rv) < sizeof(l->rv))
		snprintf(l->rv, sizeof(l->rv), "%s", rv);
}

static void report(const loop *l, const wmap_error *err, long status)
{
	if (l->o->on_error)
		l->o->on_error(l->o->ud, err, status);
}

/* Stores obj (or what the caller's transform keeps of it) under key; 0 or -1 on ENOMEM. */
static int store(const wmap_watch_opts *o, json_t *objects, const char *key, json_t *obj)
{
	json_t *t = o->transform ? o->transform(o->ud, obj) : NULL;
	return t ? json_object_set_new(objects, key, t) : json_object_set(objects, key, obj);
}

/* Every page of the collection into a new set; 0, or an error (reported). */
static int list_all(loop *l, wmap_error *err)
{
	json_t *objects = json_object(), *page = NULL;
	char cont[1024] = "", path[2048], rv[128] = "";
	int rc = 0;
	long status = 0;

	if (!objects)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	do {
		char *esc = cont[0] ? wmap_kube_query_escape(cont) : NULL;
		size_t i;
		json_t *it;

		if (cont[0] && !esc) {
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			goto cleanup;
		}
		snprintf(path, sizeof(path), "%s?limit=%d%s%s", l->o->path, PAGE,
			 esc ? "&continue=" : "", esc ? esc : "");
		free(esc);
		json_decref(page);
		page = NULL;
		if ((rc = wmap_kube_request(&page, &status, l->c, "GET", path, NULL, NULL, err)) != 0)
			goto cleanup;
		const json_t *md = json_object_get(page, "metadata");
		const char *prv = json_string_value(json_object_get(md, "resourceVersion"));
		const char *next = json_string_value(json_object_get(md, "continue"));
		const json_t *items = json_object_get(page, "items");

		if (!json_is_array(items) && !json_is_null(items) && items) {
			rc = wmap_error_set(err, WMAP_EINVAL, "GET %s: .items is not a list", l->o->path);
			goto cleanup;
		}
		if (!rv[0] && prv && strlen(prv) < sizeof(rv))
			snprintf(rv, sizeof(rv), "%s", prv);
		json_array_foreach(items, i, it) {
			char key[KEY_MAX];

			if (object_key(key, sizeof(key), it) != 0)
				continue;
			if (store(l->o, objects, key, it) != 0) {
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				goto cleanup;
			}
		}
		if (next && strlen(next) >= sizeof(cont)) {
			rc = wmap_error_set(err, WMAP_ELIMIT, "GET %s: a continue token over %zu bytes",
					    l->o->path, sizeof(cont));
			goto cleanup;
		}
		snprintf(cont, sizeof(cont), "%s", next ? next : "");
	} while (cont[0] && !stopped(l));
	json_decref(l->objects);
	l->objects = objects;
	objects = NULL;
	snprintf(l->rv, sizeof(l->rv), "%s", rv);
	l->gone = 0;
cleanup:
	if (rc != 0 && rc != WMAP_ENOMEM)
		report(l, err, status);
	json_decref(objects);
	json_decref(page);
	return rc;
}

/* One watch event line. Nonzero ends the stream (410, or a line that is no event). */
static int on_line(void *ud, const char *line, size_t len)
{
	loop *l = ud;
	wmap_watch_event ev;
	char key[KEY_MAX];
	int end = 0;

	l->lines++;
	switch (wmap_watch_event_read(&ev, line, len)) {
	case WMAP_WATCH_BOOKMARK:
		remember_rv(l, ev.rv);
		break;
	case WMAP_WATCH_GONE:
		l->gone = 1;
		count(STAT(l, gone));
		end = 1;
		break;
	case WMAP_WATCH_ERROR: {
		wmap_error e;

		wmap_error_set(&e, WMAP_EIO, "watch %s: ERROR event %ld: %s", l->o->path, ev.code,
			       ev.message);
		report(l, &e, ev.code);
		end = l->failed = 1;
		break;
	}
	case WMAP_WATCH_ADDED:
	case WMAP_WATCH_MODIFIED:
	case WMAP_WATCH_DELETED:
		if (object_key(key, sizeof(key), ev.object) != 0) {
			count(STAT(l, bad_events));
			end = l->failed = 1;
			break;
		}
		remember_rv(l, ev.rv);
		if (ev.kind == WMAP_WATCH_DELETED) {
			json_object_del(l->objects, key);
		} else if (store(l->o, l->objects, key, ev.object) != 0) {
			break;
		}
		count(STAT(l, events));
		l->changed = 1;
		break;
	case WMAP_WATCH_BAD:
		count(STAT(l, bad_events));
		end = l->failed = 1;
		break;
	}
	wmap_watch_event_clear(&ev);
	if (l->changed && !end) {
		l->changed = 0;
		l->o->on_change(l->o->ud, l->objects, 0);
	}
	return end;
}

/* One watch from l->rv: 0 when the server ended it, nonzero when it failed or was cut;
 * *status is the HTTP status (0 when none came). */
static int watch_once(loop *l, long *retry_after, long *status_out)
{
	unsigned t = l->o->timeout_s ? l->o->timeout_s : 300;
	char path[2048];
	long status = 0;
	wmap_error err;
	wmap_kube_stream_opts so = { on_line, l, l->o->stop, 0, retry_after };

	t += (unsigned)((double)t * jitter(l));
	/* The server ends the watch after timeoutSeconds; past that plus a margin, the
	 * connection is taken for dead (an API server that went away without a FIN). */
	so.timeout_ms = ((long)t + 30) * 1000L;
	snprintf(path, sizeof(path),
		 "%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%u",
		 l->o->path, l->rv, t);
	count(STAT(l, watches));
	*retry_after = -1;
	l->lines = 0;
	l->failed = 0;
	int rc = wmap_kube_stream(&status, l->c, path, &so, &err);
	*status_out = status;
	if (rc != 0) {
		if (status == 410) {
			l->gone = 1;
			count(STAT(l, gone));
		} else if (!stopped(l)) {
			report(l, &err, status);
		}
		return -1;
	}
	return l->failed ? -1 : 0;
}

int wmap_watch_run(wmap_kube_client *c, const wmap_watch_opts *o, wmap_watch_stats *stats,
		   wmap_error *err)
{
	loop l = { .c = c, .o = o, .st = stats, .gone = 1, .seed = (unsigned)time(NULL) ^ (unsigned)(size_t)o };
	unsigned min = o->backoff_min_ms ? o->backoff_min_ms : 800;
	unsigned max = o->backoff_max_ms ? o->backoff_max_ms : 30000;
	unsigned failures = 0;
	int rc = 0;

	while (!stopped(&l)) {
		long wait_ms = -1;

		if (l.gone || !l.objects) {
			rc = list_all(&l, err);
			if (rc == WMAP_ENOMEM)
				break;
			if (rc != 0) {
				long ra = wmap_kube_retry_after(c);

				count(STAT(&l, list_errors));
				wait_ms = wmap_watch_backoff_ms(min, max, failures++, jitter(&l));
				if (ra >= 0 && ra * 1000 > wait_ms)
					wait_ms = ra * 1000 > max ? max : ra * 1000;
				pause_ms(&l, (unsigned)wait_ms);
				continue;
			}
			failures = 0;
			count(STAT(&l, lists));
			if (stats)
				atomic_store(&stats->synced, 1);
			o->on_change(o->ud, l.objects, 1);
			continue;
		}
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		long ra = -1, status = 0;
		int wr = watch_once(&l, &ra, &status);

		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (stopped(&l))
			break;
		count(STAT(&l, restarts));
		if (l.gone)
			continue; /* list again at once, as client-go does */
		/* A watch that ran a while or brought events was a success, whatever ended
		 * it: the failures before it no longer count. One the server ends at once with
		 * nothing is backed off, so a broken server is never polled in a loop. */
		if (status == 200 && !l.failed && (l.lines > 0 || t1.tv_sec - t0.tv_sec >= 1)) {
			failures = 0;
			if (wr == 0)
				continue; /* ended by the server: watch again at once */
		}
		wait_ms = wmap_watch_backoff_ms(min, max, failures++, jitter(&l));
		if (status == 429 && ra >= 0 && ra * 1000 > wait_ms)
			wait_ms = ra * 1000 > max ? max : ra * 1000;
		pause_ms(&l, (unsigned)wait_ms);
	}
	json_decref(l.objects);
	return rc == WMAP_ENOMEM ? rc : 0;
}
