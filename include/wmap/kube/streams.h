/* wmap: streams of the Kubernetes API client (src/kube/kube_stream.c): many long-lived GETs
 * (watches, followed logs) at once on one curl multi handle. The webhook's single watch
 * stream is wmap_kube_stream in wmap/kube/client.h. */
#ifndef WMAP_KUBE_STREAMS_H
#define WMAP_KUBE_STREAMS_H

#include <stddef.h>
#include "wmap/error.h"
#include "wmap/kube/client.h"

/* A set of long-lived GET requests multiplexed on one connection pool (libcurl's multi
 * interface): watch streams (one JSON event per line) and log streams. Lines are handed
 * over whole, never a part of one next to a part of another. */
typedef struct wmap_kube_streams wmap_kube_streams;

/* A complete line of stream id's body, without its newline (a last line without one is
 * handed over when the stream ends; a line longer than the stream's cap arrives in pieces
 * of the cap). line is borrowed for the call. */
typedef void (*wmap_kube_line_fn)(void *arg, int id, const char *line, size_t len);
/* Stream id ended: status is the HTTP code (0 when the transfer failed); err is NULL when a
 * 2xx response simply ended, else the message kubectl would print. The stream is gone
 * when this is called. */
typedef void (*wmap_kube_end_fn)(void *arg, int id, long status, const wmap_error *err);

#define WMAP_KUBE_STREAMS_MAX 1024
#define WMAP_KUBE_LINE_MAX_DEFAULT (1u << 20)

/* A new, empty set using c (borrowed; must outlive the set) and the callbacks (called only
 * from wmap_kube_streams_run; they must not open or close streams of the set). The caller
 * owns *out. */
int wmap_kube_streams_new(wmap_kube_streams **out, wmap_kube_client *c,
			  wmap_kube_line_fn on_line, wmap_kube_end_fn on_end, void *arg,
			  wmap_error *err);
/* Stops every stream (no end callbacks) and frees the set; NULL is fine. */
void wmap_kube_streams_free(wmap_kube_streams *s);

/* Starts a GET of path (query included) as stream id (the caller's number, unique among
 * the open streams). accept NULL = application/json; max_line 0 = 1 MiB. Counted as a
 * request of the client. WMAP_ELIMIT beyond WMAP_KUBE_STREAMS_MAX streams. */
int wmap_kube_stream_open(wmap_kube_streams *s, int id, const char *path, const char *accept,
			  size_t max_line, wmap_error *err);
/* Stops stream id (no end callback); unknown ids are ignored. */
void wmap_kube_stream_close(wmap_kube_streams *s, int id);
/* How many streams are open. */
size_t wmap_kube_streams_count(const wmap_kube_streams *s);

/* Moves every stream on: waits at most timeout_ms for data (returns at once when some is
 * there), hands over the complete lines and the ends. 0, or WMAP_EIO when libcurl itself
 * fails (a stream's own failure goes to its end callback). */
int wmap_kube_streams_run(wmap_kube_streams *s, int timeout_ms, wmap_error *err);

#endif
