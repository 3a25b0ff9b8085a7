/* kubectl-wmap: watches (live_watch.c): list-then-watch of one collection with the
 * resourceVersion of the list, bookmarks, and a new list after 410 Gone; Ctrl-C; and
 * `describe -w`, which redraws the describe view when the workload or its pods change. */
#ifndef KUBECTL_WMAP_LIVE_WATCH_H
#define KUBECTL_WMAP_LIVE_WATCH_H

#include "live.h"
#include "wmap/kube/watch.h"

#define LIVE_WATCH_LINE_MAX (16u << 20) /* one watch event: an object, at most */

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

/* Opens the watch of w from w->rv with bookmarks, as watch stream w->id of s (an event over
 * LIVE_WATCH_LINE_MAX fails it). 0 or an exit code (printed). */
int live_watch_open(live_watch *w, wmap_kube_streams *s, live_ctx *lc);

/* Reads one event line of w into *ev (the API client's reader, wmap_watch_event_read; the
 * caller clears it with wmap_watch_event_clear) and returns its kind; w->rv follows the
 * events. GONE, ERROR and BAD all mean: list again, then watch again. */
wmap_watch_kind live_watch_event(live_watch *w, const char *line, size_t len,
				 wmap_watch_event *ev);

/* Ctrl-C: after live_sigint_install, live_interrupted() says whether SIGINT came. */
void live_sigint_install(void);
int live_interrupted(void);

/* Milliseconds of a monotonic clock. */
long long live_now_ms(void);

/* describe TYPE/NAME -w: t is loaded; redraws until the workload is deleted (0), it is
 * Completed (0) or Failed (1) with --until-done, or Ctrl-C (130). */
int live_watch_describe(live_ctx *lc, live_target *t, const cli_options *o);

#endif
