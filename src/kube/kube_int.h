/* wmap: internals of the API client shared between src/kube/kube.c and src/kube/kube_response.c
 * (and the fuzz targets that read what a server or a plugin sends); not part of libwmap's
 * API. */
#ifndef WMAP_KUBE_INT_H
#define WMAP_KUBE_INT_H

#include <stddef.h>
#include <time.h>
#include "wmap/error.h"

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

/* The error kubectl prints for an error response with HTTP code and body (a metav1.Status,
 * or anything else; body may be NULL): WMAP_ENOTFOUND for 404, WMAP_EIO otherwise, with
 * the message in err. */
int wmap_kube__status_error(wmap_error *err, long code, const char *body, size_t len);

#endif
