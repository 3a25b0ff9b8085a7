/* wmap: list and watch one collection of the API server, as client-go's reflector does:
 * the objects of the collection kept in step with the server, in a loop on the caller's
 * thread, until the caller stops it. And the one reader of watch events
 * (wmap_watch_event_read), for this loop and for the plugin's watches on streams.
 *
 * The loop lists (500 a page), then watches from the list's resourceVersion with
 * allowWatchBookmarks. A watch the server ends (timeoutSeconds) or cuts is watched again
 * from the last resourceVersion seen; an ERROR event with 410 Gone (or a 410 answer) lists
 * again. Failures back off exponentially from backoff_min_ms to backoff_max_ms with jitter
 * (the delay is drawn from [d, 2d), capped), honouring Retry-After on 429; a successful
 * list resets the delay. A line that is not a watch event ends that watch (it is counted
 * and the loop watches again); a half-written last event is never read. */
#ifndef WMAP_KUBE_WATCH_H
#define WMAP_KUBE_WATCH_H

#include <jansson.h>
#include <stdatomic.h>
#include "wmap/error.h"
#include "wmap/kube/client.h"

/* What one line of a watch is (a metav1.WatchEvent). */
typedef enum wmap_watch_kind {
	WMAP_WATCH_ADDED,
	WMAP_WATCH_MODIFIED,
	WMAP_WATCH_DELETED,
	WMAP_WATCH_BOOKMARK, /* the resourceVersion moved on; nothing changed */
	WMAP_WATCH_GONE,     /* an ERROR event with code 410: list again */
	WMAP_WATCH_ERROR,    /* another ERROR event */
	WMAP_WATCH_BAD,      /* not a watch event: not JSON, no type or object, an unknown type */
} wmap_watch_kind;

typedef struct wmap_watch_event {
	wmap_watch_kind kind;
	json_t *doc;         /* the line read, owned: wmap_watch_event_clear frees it (NULL: not JSON) */
	json_t *object;      /* .object, borrowed from doc; NULL when BAD */
	const char *rv;      /* .object.metadata.resourceVersion of ADDED, MODIFIED, DELETED and
			  * BOOKMARK events, borrowed from doc; NULL when it has none */
	long code;           /* GONE and ERROR: the Status's code */
	const char *message; /* GONE and ERROR: the Status's message ("" when none) */
} wmap_watch_event;

/* Reads one line of a watch (len bytes, need not be NUL-terminated) into *ev and returns
 * its kind; every line is some kind (BAD when it is no event). Free with
 * wmap_watch_event_clear. */
wmap_watch_kind wmap_watch_event_read(wmap_watch_event *ev, const char *line, size_t len);
/* Frees what ev holds and empties it; NULL is fine. */
void wmap_watch_event_clear(wmap_watch_event *ev);

/* Counters a server exposes as metrics; written by the loop, read from any thread. */
typedef struct wmap_watch_stats {
	atomic_uint lists;       /* successful lists */
	atomic_uint list_errors; /* failed lists (each followed by a backoff) */
	atomic_uint watches;     /* watch requests made */
	atomic_uint restarts;    /* watches that ended or failed and were started again */
	atomic_uint gone;        /* 410 Gone: the resourceVersion was too old, listed again */
	atomic_uint events;      /* ADDED, MODIFIED and DELETED events applied */
	atomic_uint bad_events;  /* lines that were not watch events */
	atomic_int synced;       /* 1 after the first successful list */
} wmap_watch_stats;

typedef struct wmap_watch_opts {
	const char *path;        /* the collection, "/apis/run.ai/v1alpha1/kartas" */
	unsigned backoff_min_ms; /* 0 = 800 */
	unsigned backoff_max_ms; /* 0 = 30000 */
	unsigned timeout_s;      /* a watch's timeoutSeconds: drawn from [t, 2t); 0 = 300 */
	/* After a list and after every event that changed the set: objects maps
	 * "namespace/name" (or "name" when cluster-scoped) to the object. Both are borrowed
	 * for the call; the objects are never changed afterwards (an event replaces them), so
	 * the callee may keep references (json_incref, json_copy of the map) and read them
	 * from other threads. synced is 1 for the set a list produced. */
	void (*on_change)(void *ud, const json_t *objects, int synced);
	/* A failed list or watch, with the HTTP status (0 for a transport failure); the
	 * loop backs off and tries again. May be NULL. */
	void (*on_error)(void *ud, const wmap_error *err, long status);
	/* What is kept of each listed or watched object, as client-go's informer transform: a
	 * new reference to store instead (a smaller copy: a pod's metadata), or NULL to store
	 * the object as it came. Runs on the loop's thread before on_change sees the object.
	 * May be NULL. */
	json_t *(*transform)(void *ud, json_t *obj);
	void *ud;
	const atomic_int *stop; /* nonzero ends the loop within about a second */
} wmap_watch_opts;

/* Runs the loop with c (not shared with any other thread while it runs) until *o->stop.
 * Returns 0 when stopped; WMAP_ENOMEM when memory runs out. stats may be NULL. */
int wmap_watch_run(wmap_kube_client *c, const wmap_watch_opts *o, wmap_watch_stats *stats,
		   wmap_error *err);

/* The delay before attempt n (0-based) of a retry: min * 2^n capped at max, then jittered
 * into [d, 2d) capped at max with the random value r in [0, 1). */
unsigned wmap_watch_backoff_ms(unsigned min_ms, unsigned max_ms, unsigned n, double r);

#endif
