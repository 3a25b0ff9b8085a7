/* kubectl-wmap: watches (live_watch.c): list-then-watch of one collection with the
 * resourceVersion of the list, bookmarks, and a new list after 410 Gone; Ctrl-C; and
 * `describe -w`, which redraws the describe view when the workload or its pods change. */
#ifndef KUBECTL_WMAP_LIVE_WATCH_H
#define KUBECTL_WMAP_LIVE_WATCH_H

#include "live.h"

#define LIVE_WATCH_LINE_MAX (16u << 20) /* one watch event: an object, at most */

typedef enum live_event {
	LIVE_EV_ADDED,
	LIVE_EV_MODIFIED,
	LIVE_EV_DELETED,
	LIVE_EV_BOOKMARK, /* the resourceVersion moved on; nothing changed */
	LIVE_EV_GONE,     /* 410: the watch must start again from a new list */
	LIVE_EV_ERROR,    /* another ERROR event, or a line that is not an event */
} live_event;

/* One watched collection: path is the collection with its selector query
 * ("/api/v1/namespaces/ns/pods?labelSelector=..."). */
typedef struct live_watch {
	int id; /* the stream id in the set */
	int open;
	char path[2048];
	char rv[64]; /* where the next watch starts */
} live_watch;

/* Lists path with limit=1 only to learn the collection's resourceVersion now (one small
 * request, whatever the number of objects), into w->rv; *count (may be NULL) gets the
 * number of items of that page (0 = the collection is empty). 0 or an exit code (printed). */
int live_watch_sync(live_watch *w, live_ctx *lc, size_t *count);

/* Opens the watch of w from w->rv with bookmarks, as stream w->id of s. 0 or an exit code
 * (printed). */
int live_watch_open(live_watch *w, wmap_kube_streams *s, live_ctx *lc);

/* Reads one event line of w: the type, and *obj (borrowed from *doc, which the caller
 * frees with json_decref) the object; w->rv follows the events. */
live_event live_watch_event(live_watch *w, const char *line, size_t len, json_t **doc,
			    const json_t **obj);

/* Ctrl-C: after live_sigint_install, live_interrupted() says whether SIGINT came. */
void live_sigint_install(void);
int live_interrupted(void);

/* Milliseconds of a monotonic clock. */
long long live_now_ms(void);

/* describe TYPE/NAME -w: t is loaded; redraws until the workload is deleted (0), it is
 * Completed (0) or Failed (1) with --until-done, or Ctrl-C (130). */
int live_watch_describe(live_ctx *lc, live_target *t, const cli_options *o);

#endif
