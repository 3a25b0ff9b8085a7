/* wmap: what kube.c shares with kube_stream.c, and nothing else (internal: the double
 * underscore says so; front ends never include this). */
#ifndef WMAP_KUBE_INT_H
#define WMAP_KUBE_INT_H

#include <curl/curl.h>

#include "wmap/kube.h"

/* Sets on h everything a request to url needs that comes from the client: headers (Accept,
 * Content-Type, the bearer token, impersonation), TLS (CA, client certificate and key),
 * tls-server-name, proxy, compression, method and body. *hdrs and *connect_to are lists the
 * caller frees after the transfer (curl_slist_free_all). No timeouts, no callbacks. */
void wmap_kube__configure(wmap_kube_client *c, CURL *h, const char *url, const char *method,
			  const char *accept, const char *content_type, const char *body,
			  struct curl_slist **hdrs, struct curl_slist **connect_to);

/* Refreshes the credentials, counts one request and makes the URL of path: *url is new,
 * the caller frees it. */
int wmap_kube__prepare(char **url, wmap_kube_client *c, const char *path, wmap_error *err);

/* The error kubectl would print for an error response (code, body); WMAP_ENOTFOUND for 404,
 * WMAP_EIO otherwise. */
int wmap_kube__status_error(wmap_error *err, long code, const char *body, size_t len);

/* The client's --request-timeout in milliseconds (0 = none). */
long wmap_kube__timeout_ms(const wmap_kube_client *c);

#endif
