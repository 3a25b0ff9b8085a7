/* wmap: internals of the API client shared between src/kube/kube.c, kube_response.c,
 * kube_exec.c and kube_stream.c (and the fuzz targets that read what a server or a plugin
 * sends); not part of libwmap's API. */
#ifndef WMAP_KUBE_INT_H
#define WMAP_KUBE_INT_H

#include <stddef.h>
#include <time.h>
#include "curl_lazy.h"
#include "wmap/error.h"
#include "wmap/kube/client.h"

/* What an exec credential plugin handed over: new strings owned by the caller (free them
 * with wmap_kube__credential_clear, which wipes them first). */
typedef struct wmap_kube__credential {
	char *token;      /* NULL when the plugin gave a client certificate */
	char *cert, *key; /* PEM, both or neither */
	time_t expiry;    /* 0 = none given */
} wmap_kube__credential;

/* Reads the ExecCredential a plugin wrote (len bytes of text, not NUL-terminated): its
 * apiVersion must be api_version, its status must hold a token or a certificate and key.
 * WMAP_EINVAL with a message naming command (never the text: it holds secrets). */
int wmap_kube__exec_credential(wmap_kube__credential *out, const char *text, size_t len,
			       const char *api_version, const char *command, wmap_error *err);
void wmap_kube__credential_clear(wmap_kube__credential *c);

/* Runs cfg's exec credential plugin (kube_exec.c) and reads its ExecCredential into *cred
 * (cleared first; the caller clears it with wmap_kube__credential_clear, on failure too).
 * WMAP_EIO when the plugin cannot be found or run or fails, WMAP_EINVAL when what it wrote
 * is not a credential; messages name the command, never what it wrote. */
int wmap_kube__run_exec(wmap_kube__credential *cred, const wmap_kube_config *cfg,
			wmap_error *err);

/* The error kubectl prints for an error response with HTTP code and body (a metav1.Status,
 * or anything else; body may be NULL): WMAP_ENOTFOUND for 404, WMAP_EIO otherwise, with
 * the message in err. */
int wmap_kube__status_error(wmap_error *err, long code, const char *body, size_t len);

/* ---- what kube.c shares with kube_stream.c ---- */

/* Sets on h everything a request to url needs that comes from the client: headers (Accept,
 * Content-Type, the bearer token, impersonation), TLS (CA, client certificate and key),
 * tls-server-name, proxy, compression, method and body. *hdrs and *connect_to are lists the
 * caller frees after the transfer (wmap__curl_slist_free_all), also on failure. No
 * timeouts, no callbacks. 0, or WMAP_ENOMEM (a header list could not grow; err set). */
int wmap_kube__configure(wmap_kube_client *c, CURL *h, const char *url, const char *method,
			 const char *accept, const char *content_type, const char *body,
			 struct curl_slist **hdrs, struct curl_slist **connect_to, wmap_error *err);

/* Refreshes the credentials, counts one request and makes the URL of path: *url is new,
 * the caller frees it. */
int wmap_kube__prepare(char **url, wmap_kube_client *c, const char *path, wmap_error *err);

/* The client's --request-timeout in milliseconds (0 = none). */
long wmap_kube__timeout_ms(const wmap_kube_client *c);

/* The client's cap on a response (wmap_kube_opts.max_response): a stream's line for
 * wmap_kube_stream. */
size_t wmap_kube__max_response(const wmap_kube_client *c);

/* What wmap_kube_retry_after reports next: a stream's Retry-After. */
void wmap_kube__set_retry_after(wmap_kube_client *c, long seconds);

/* After a 401: takes a fresh credential (the exec plugin run again, the token file read
 * again). 0 when one was taken, 1 when the client has none to refresh (a fixed token or a
 * certificate), or the plugin's failure. */
int wmap_kube__reauth(wmap_kube_client *c, wmap_error *err);

/* What the headers of a response said (CURLOPT_HEADERFUNCTION wmap_kube__on_header, with a
 * wmap_kube__headers as its data): Retry-After in seconds (-1 when none; set it before the
 * transfer) and the Warning texts appended to warnings (NULL: not kept). */
typedef struct wmap_kube__headers {
	long retry_after;
	json_t *warnings;
} wmap_kube__headers;
size_t wmap_kube__on_header(char *ptr, size_t size, size_t nmemb, void *user);

#endif
