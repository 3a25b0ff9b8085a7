/* wmap: what the API client reads from outside besides objects: an error response's
 * metav1.Status and an exec credential plugin's ExecCredential (see kube_int.h). Kept apart
 * from the transport in kube.c so that the fuzz targets can feed them any bytes. */
#define _GNU_SOURCE /* timegm, strptime */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube_int.h"

static time_t parse_rfc3339(const char *s)
{
	struct tm tm = { 0 };

	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return timegm(&tm);
}

static void wipe_free(char *s)
{
	if (!s)
		return;
	memset(s, 0, strlen(s));
	free(s);
}

void wmap_kube__credential_clear(wmap_kube__credential *c)
{
	wipe_free(c->token);
	wipe_free(c->cert);
	wipe_free(c->key);
	memset(c, 0, sizeof(*c));
}

int wmap_kube__exec_credential(wmap_kube__credential *out, const char *text, size_t len,
			       const char *api_version, const char *command, wmap_error *err)
{
	json_t *cred = text ? json_loadb(text, len, 0, NULL) : NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!cred) {
		rc = wmap_error_set(err, WMAP_EINVAL, "exec credential plugin %s: its output is not "
						      "an ExecCredential (JSON)",
				    command);
		goto cleanup;
	}
	const char *kind = json_string_value(json_object_get(cred, "kind"));
	const char *api = json_string_value(json_object_get(cred, "apiVersion"));
	if (!kind || strcmp(kind, "ExecCredential") != 0 || !api ||
	    strcmp(api, api_version) != 0) {
		rc = wmap_error_set(err, WMAP_EINVAL, "exec credential plugin %s: expected an "
						      "ExecCredential of %s, got kind \"%.64s\" apiVersion \"%.64s\"",
				    command, api_version, kind ? kind : "", api ? api : "");
		goto cleanup;
	}
	json_t *status = json_object_get(cred, "status");
	const char *tok = json_string_value(json_object_get(status, "token"));
	const char *crt = json_string_value(json_object_get(status, "clientCertificateData"));
	const char *key = json_string_value(json_object_get(status, "clientKeyData"));
	if (!(tok && tok[0]) && !(crt && key)) {
		rc = wmap_error_set(err, WMAP_EINVAL, "exec credential plugin %s: status has "
						      "neither a token nor clientCertificateData and clientKeyData",
				    command);
		goto cleanup;
	}
	if ((tok && tok[0] && !(out->token = strdup(tok))) || (crt && !(out->cert = strdup(crt))) ||
	    (key && !(out->key = strdup(key)))) {
		wmap_kube__credential_clear(out);
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	out->expiry = parse_rfc3339(json_string_value(json_object_get(status,
								      "expirationTimestamp")));
cleanup:
	json_decref(cred);
	return rc;
}

int wmap_kube__status_error(wmap_error *err, long code, const char *body, size_t len)
{
	json_t *st = body ? json_loadb(body, len, 0, NULL) : NULL;
	const char *kind = json_string_value(json_object_get(st, "kind"));
	const char *reason = json_string_value(json_object_get(st, "reason"));
	const char *msg = json_string_value(json_object_get(st, "message"));
	int rc = code == 404 ? WMAP_ENOTFOUND : WMAP_EIO;

	if (code == 401) {
		wmap_error_set(err, rc, "You must be logged in to the server (Unauthorized)");
	} else if (kind && strcmp(kind, "Status") == 0 && msg) {
		wmap_error_set(err, rc, "Error from server (%s): %s",
			       reason && reason[0] ? reason : "Unknown", msg);
	} else {
		const char *name = code == 403 ? "Forbidden" : code == 404 ? "NotFound"
						       : code == 429       ? "TooManyRequests"
						       : code >= 500       ? "InternalError"
									   : "BadRequest";
		size_t n = len > 200 ? 200 : len;

		wmap_error_set(err, rc,
			       "Error from server (%s): the server responded with status %ld%s%.*s",
			       name, code, n ? ": " : "", (int)n, body ? body : "");
		/* Keep it one line. */
		for (char *p = err ? err->message : NULL; p && *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
	}
	json_decref(st);
	return rc;
}
