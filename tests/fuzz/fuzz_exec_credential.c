/* libFuzzer target: what an exec credential plugin writes on stdout, as the plugin's client
 * reads it (wmap_kube__exec_credential in src/kube_response.c). The first byte picks the
 * apiVersion the kubeconfig asks for. Properties, beyond no crash, leak or UB:
 *   - accepted: a token, or a certificate and a key, equal to the ExecCredential's status;
 *   - refused: WMAP_EINVAL (or WMAP_ENOMEM) with a message that names the command and does
 *     not depend on the token, certificate or key the text carried (they are secrets): the
 *     same document with other secret values gets the same message. (A plain "the secret is
 *     not in the message" cannot hold: a token may equal a kind or a word that the message
 *     rightly quotes, as the first finding of this target showed.) */
#include <jansson.h>
#include "fuzz.h"
#include "../../src/kube/kube_int.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* The message for doc with every non-empty secret of its status replaced: it must be msg. */
static void message_ignores_secrets(const char *msg, json_t *doc, const char *api)
{
	static const char *const fields[] = { "token", "clientCertificateData", "clientKeyData" };
	json_t *other = json_deep_copy(doc);
	json_t *status = json_object_get(other, "status");
	int changed = 0;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *v = json_string_value(json_object_get(status, fields[i]));
		if (v && v[0]) {
			json_object_set_new(status, fields[i], json_string("not-the-secret"));
			changed = 1;
		}
	}
	char *text = changed ? json_dumps(other, JSON_COMPACT) : NULL;
	if (text) {
		wmap_kube__credential cred;
		wmap_error err = { 0 };
		int rc = wmap_kube__exec_credential(&cred, text, strlen(text), api, "fuzz-plugin", &err);
		if (rc == WMAP_EINVAL)
			FZ_CHECK(!strcmp(err.message, msg), "the message depends on a secret: %s", msg);
		wmap_kube__credential_clear(&cred);
		free(text);
	}
	json_decref(other);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *api = data[0] % 2 ? "client.authentication.k8s.io/v1"
				      : "client.authentication.k8s.io/v1beta1";
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	wmap_kube__credential cred;
	wmap_error err = { 0 };
	int rc = wmap_kube__exec_credential(&cred, len ? text : NULL, len, api, "fuzz-plugin",
					    &err);
	json_t *doc = json_loadb(text, len, 0, NULL);
	json_t *status = json_object_get(doc, "status");
	if (rc == 0) {
		const char *tok = json_string_value(json_object_get(status, "token"));
		const char *crt = json_string_value(json_object_get(status, "clientCertificateData"));
		const char *key = json_string_value(json_object_get(status, "clientKeyData"));
		FZ_CHECK(cred.token || (cred.cert && cred.key), "accepted without a credential");
		FZ_CHECK(!cred.token || (tok && !strcmp(tok, cred.token)), "token differs");
		FZ_CHECK(!cred.cert || (crt && !strcmp(crt, cred.cert)), "certificate differs");
		FZ_CHECK(!cred.key || (key && !strcmp(key, cred.key)), "key differs");
		FZ_CHECK(!strcmp(json_string_value(json_object_get(doc, "apiVersion")), api),
			 "accepted another apiVersion");
	} else {
		FZ_CHECK(rc == WMAP_EINVAL || rc == WMAP_ENOMEM, "rc %d", rc);
		FZ_CHECK(!cred.token && !cred.cert && !cred.key, "a credential with an error");
		FZ_CHECK(strstr(err.message, "fuzz-plugin") || rc == WMAP_ENOMEM,
			 "the message does not name the plugin: %s", err.message);
		if (rc == WMAP_EINVAL && json_is_object(status))
			message_ignores_secrets(err.message, doc, api);
	}
	json_decref(doc);
	wmap_kube__credential_clear(&cred);
	return 0;
}
