/* wmap: streams of the Kubernetes API client (src/kube/kube_stream.c), its one mechanism for
 * long-lived GETs: many (watches, followed logs) at once on one curl multi handle.
 * wmap_kube_stream in wmap/kube/client.h (the webhook's watches, through wmap_watch_run) is
 * a set of one watch stream run on the caller's thread. */
#ifndef WMAP_KUBE_STREAMS_H
#define WMAP_KUBE_STREAMS_H

#include <stddef.h>
#include "wmap/error.h"
#include "wmap/kube/client.h"

/* A set of long-lived GET requests multiplexed on one connection pool (libcurl's multi
 * interface): watch streams (one JSON event per line) and log streams. Lines are handed
 * over whole, never a part of one next to a part of another. */
typedef struct wmap_kube_streams wmap_kube_streams;

/* A complete line of stream id's body, without its newline (and a carriage return before
 * it), NUL-terminated; line is borrowed for the call. A log stream hands over a last line
 * without a newline when the stream ends, and a line longer than its cap in pieces of the
 * cap; a watch stream does neither (see wmap_kube_stream_spec). */
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

/* How one stream reads its body. */
typedef struct wmap_kube_stream_spec {
	const char *accept; /* NULL = application/json */
	size_t max_line;    /* 0 = WMAP_KUBE_LINE_MAX_DEFAULT */
	/* 1: a watch, one JSON event a line (read them with wmap_watch_event_read in
	 * wmap/kube/watch.h): a line longer than max_line ends the stream with WMAP_ELIMIT
	 * (status the HTTP code), and a last line without its newline (a stream cut in the
	 * middle of an event) is never handed over. 0: a log, lines as they come. */
	int watch;
	long timeout_ms; /* the whole stream; 0 = none (only connecting is timed) */
} wmap_kube_stream_spec;

/* Starts a GET of path (query included) as stream id (the caller's number, unique among
 * the open streams), read as spec says (borrowed for the call). Counted as a request of
 * the client. WMAP_ELIMIT beyond WMAP_KUBE_STREAMS_MAX streams. */
int wmap_kube_stream_start(wmap_kube_streams *s, int id, const char *path,
			   const wmap_kube_stream_spec *spec, wmap_error *err);

/* The same for a log stream: accept NULL = application/json; max_line 0 = 1 MiB. */
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
