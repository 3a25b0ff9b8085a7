/* wmap: the HTTPS client of the Kubernetes API (on libcurl, loaded on first use): one
 * kept-alive connection, retries, credentials refreshed from token files and exec plugins.
 *
 * Secrets are never put into error messages or any other text this module hands out. */
#ifndef WMAP_KUBE_CLIENT_H
#define WMAP_KUBE_CLIENT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include "wmap/error.h"
#include "wmap/kube/kubeconfig.h"

typedef struct wmap_kube_client wmap_kube_client;

typedef struct wmap_kube_opts {
	long timeout_ms;        /* per request; 0 = 30 s; -1 = none */
	int max_retries;        /* 429/5xx retries, 0 = 3; -1 = none */
	size_t max_response;    /* body cap, 0 = 64 MiB */
	const char *user_agent; /* NULL = "kubectl-wmap" */
} wmap_kube_opts;

/* A client for cfg (borrowed; must outlive the client). One curl handle is reused, so
 * connections are kept alive between requests. The certificate-authority, client-certificate
 * and client-key files (and data) are read first, as client-go does when it builds its
 * transport: one that cannot be read or holds no PEM block of its kind is WMAP_EIO or
 * WMAP_EINVAL naming the file, never its content. The caller owns *out. */
int wmap_kube_client_new(wmap_kube_client **out, const wmap_kube_config *cfg,
			 const wmap_kube_opts *opts, wmap_error *err);
void wmap_kube_client_free(wmap_kube_client *c);

/* Parses a kubectl duration ("30s", "1m", "500ms", "0", a bare number = seconds) into
 * milliseconds; -1 when malformed. "0" means no timeout (returns 0). */
long wmap_kube_parse_duration(const char *s);

/* One request. path starts with "/" (query included); body may be NULL. On a response
 * with a 2xx code: 0 and *out (may be NULL when the caller does not want it) the parsed
 * body, owned by the caller. On an error response: WMAP_ENOTFOUND for 404, WMAP_EIO for
 * the rest, with *status set and the message kubectl would print
 * ("Error from server (NotFound): jobsets.jobset.x-k8s.io \"x\" not found"). Transport
 * failures are WMAP_EIO with *status 0 (connection failures of GETs are retried). 429,
 * 502, 503 and 504, and any other 5xx that carries Retry-After, are retried up to
 * max_retries times, waiting Retry-After (at most 10 s) or 200 ms doubling; a plain 500 (a
 * failing webhook) is final. A 401 with a token file or an exec plugin takes a fresh
 * credential once. */
int wmap_kube_request(json_t **out, long *status, wmap_kube_client *c, const char *method,
		      const char *path, const char *content_type, const char *body,
		      wmap_error *err);

/* A streamed GET (a watch), see wmap_kube_stream. */
typedef struct wmap_kube_stream_opts {
	/* Called with every complete, non-empty line of a 2xx body, without its newline and
	 * NUL-terminated (borrowed for the call); nonzero ends the stream. A last line without
	 * its newline (a stream cut in the middle of an event) is never handed out. */
	int (*on_line)(void *ud, const char *line, size_t len);
	void *ud;
	const atomic_int *stop; /* checked every quarter second; nonzero ends the stream */
	long timeout_ms;        /* the whole stream; 0 = none */
	long *retry_after;      /* may be NULL: set to the Retry-After seconds, -1 if none */
} wmap_kube_stream_opts;

/* GETs path and streams its body line by line to opts->on_line as it arrives: a watch
 * stream of wmap/kube/streams.h (a line is capped at max_response: a longer one is
 * WMAP_ELIMIT), one at a time on the caller's thread. Returns 0 when the server ends the
 * stream or the caller stops it (callback or stop flag), with *status the HTTP code; an
 * error response is WMAP_ENOTFOUND/WMAP_EIO with kubectl's message as in
 * wmap_kube_request, a transport failure WMAP_EIO with *status 0, a stream cut after its
 * headers WMAP_EIO with *status the code it had. Nothing is retried (the caller backs
 * off); a 401 with a token file or exec plugin takes a fresh credential once. The stream
 * has its own connection (not the client's kept-alive one). opts is borrowed for the
 * call. */
int wmap_kube_stream(long *status, wmap_kube_client *c, const char *path,
		     const wmap_kube_stream_opts *opts, wmap_error *err);

/* GET a path into *out. */
int wmap_kube_get(json_t **out, wmap_kube_client *c, const char *path, wmap_error *err);

/* The same with an Accept header of the caller's (aggregated discovery, Table, ...). */
int wmap_kube_get_as(json_t **out, wmap_kube_client *c, const char *path, const char *accept,
		     wmap_error *err);

/* The Warning headers of the last response (texts; an array borrowed from the client,
 * valid until the next request). kubectl prints them as "Warning: <text>". */
const json_t *wmap_kube_warnings(const wmap_kube_client *c);

/* The Retry-After seconds of the last response answered by the server, -1 when it had
 * none (a caller that does its own backoff honours it on 429). */
long wmap_kube_retry_after(const wmap_kube_client *c);

/* Requests made so far (for measurements and tests). */
unsigned wmap_kube_requests(const wmap_kube_client *c);

/* The config the client was made with (borrowed). */
const wmap_kube_config *wmap_kube_client_config(const wmap_kube_client *c);

/* Percent-encodes s for a query value (Go url.Values: space as '+') into a new string. */
char *wmap_kube_query_escape(const char *s);

#endif
