/* libFuzzer target: the body of an error response from the API server (a metav1.Status, or
 * anything a proxy sends instead), as the plugin's client turns it into kubectl's message
 * (wmap_kube__status_error in src/kube_response.c). The first byte picks the HTTP code.
 * Properties, beyond no crash, leak or UB:
 *   - 404 is WMAP_ENOTFOUND, every other code WMAP_EIO, always with a message;
 *   - the message starts as kubectl's do ("Error from server (" or the 401 text);
 *   - a body that is not a Status with a message shows at most 200 bytes of itself, on one
 *     line. */
#include <jansson.h>
#include "fuzz.h"
#include "../../src/kube/kube_int.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long codes[] = { 400, 401, 403, 404, 405, 409, 410, 422, 429, 500, 502,
				      503, 504, 418 };
	if (size < 1)
		return 0;
	long code = codes[data[0] % (sizeof(codes) / sizeof(*codes))];
	const char *body = size > 1 ? (const char *)data + 1 : NULL;
	size_t len = size - 1;
	wmap_error err = { 0 };
	int rc = wmap_kube__status_error(&err, code, body, len);
	FZ_CHECK(rc == (code == 404 ? WMAP_ENOTFOUND : WMAP_EIO), "rc %d for %ld", rc, code);
	FZ_CHECK(err.code == rc && err.message[0], "no message");
	if (code == 401) {
		FZ_CHECK(!strcmp(err.message, "You must be logged in to the server (Unauthorized)"),
			 "401: %s", err.message);
		return 0;
	}
	FZ_CHECK(!strncmp(err.message, "Error from server (", 19), "message %s", err.message);
	json_t *st = body ? json_loadb(body, len, 0, NULL) : NULL;
	const char *kind = json_string_value(json_object_get(st, "kind"));
	int status = kind && !strcmp(kind, "Status") &&
		     json_is_string(json_object_get(st, "message"));
	if (!status) {
		FZ_CHECK(!strchr(err.message, '\n') && !strchr(err.message, '\r'),
			 "a raw body on more than one line");
		const char *colon = strstr(err.message, "responded with status");
		FZ_CHECK(colon != NULL, "message %s", err.message);
		const char *shown = strstr(colon, ": ");
		FZ_CHECK(!shown || strlen(shown + 2) <= 200, "more than 200 bytes of the body");
	}
	json_decref(st);
	return 0;
}
