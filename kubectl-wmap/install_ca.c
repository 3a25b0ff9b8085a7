/* kubectl-wmap install: which certificates to print (see install_ca.h). The CA in force is
 * the one the cluster already trusts, so that re-applying install's output (an upgrade, a
 * GitOps re-sync) changes no caBundle and no serving certificate: the Secret
 * NS/wmap-webhook-tls is read back and kept while its certificate verifies against its CA
 * (the Secret's ca.crt, else the caBundle of the installed MutatingWebhookConfiguration, as
 * installs before ca.crt left it) and both have INSTALL_RENEW_DAYS to run. When they do not,
 * a new CA and certificate are made and the old CAs that have not expired stay in the
 * bundle, so that the pods still serving the old certificate stay trusted until they load the
 * new Secret. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "install_ca.h"
#include "install_certs.h"
#include "live.h"

#define SECRET "wmap-webhook-tls"

/* The base64 field key of obj's data, decoded; NULL when absent or not base64. */
static char *data_field(const json_t *obj, const char *key)
{
	const char *b = json_string_value(json_object_get(json_object_get(obj, "data"), key));
	unsigned char *out = NULL;
	size_t n = 0;

	if (!b || install_certs_b64_decode(&out, &n, b, strlen(b)) != 0)
		return NULL;
	return (char *)out;
}

/* The caBundle of the installed MutatingWebhookConfiguration's first webhook, decoded. */
static char *installed_bundle(live_ctx *lc, const char *service, wmap_error *err)
{
	char path[256];
	json_t *cfg = NULL;
	const char *b;
	unsigned char *out = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/%s", service);
	if (wmap_kube_get(&cfg, lc->client, path, err) != 0)
		return NULL;
	b = json_string_value(json_object_get(
		json_object_get(json_array_get(json_object_get(cfg, "webhooks"), 0), "clientConfig"), "caBundle"));
	if (b)
		install_certs_b64_decode(&out, &n, b, strlen(b));
	json_decref(cfg);
	return (char *)out;
}

static char *concat(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = malloc(na + nb + 1);

	if (s) {
		memcpy(s, a, na);
		memcpy(s + na, b, nb + 1);
	}
	return s;
}

int install_ca_plan(const cli_options *o, const char *ns, const char *service, int new_ca, char **ca, char **crt,
		    char **key)
{
	live_ctx lc;
	wmap_error err = { 0 };
	json_t *secret = NULL;
	char path[256], host[320], why[512] = "", *old_ca = NULL, *old_crt = NULL, *old_key = NULL, *kept = NULL;
	int rc, code = CLI_EXIT_ERROR;

	*ca = *crt = *key = NULL;
	snprintf(host, sizeof(host), "%s.%s.svc", service, ns);
	if (new_ca) {
		if (install_certs_make(ca, crt, key, service, ns, &err) != 0)
			return cli_fail(&err);
		return 0;
	}
	rc = live_connect(&lc, o, &err);
	if (rc == 1) {
		live_close(&lc);
		return CLI_EXIT_USAGE;
	}
	if (rc == WMAP_ENOTFOUND && strncmp(err.message, "no cluster configuration", 24) == 0) {
		fprintf(stderr, "install: %s: a new CA (applied over an installed webhook it replaces that CA; "
				"run install where the cluster is reachable to keep it)\n",
			err.message);
		live_close(&lc);
		if (install_certs_make(ca, crt, key, service, ns, &err) != 0)
			return cli_fail(&err);
		return 0;
	}
	if (rc != 0)
		goto cluster_failed;
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns, SECRET);
	rc = wmap_kube_get(&secret, lc.client, path, &err);
	if (rc == WMAP_ENOTFOUND) {
		fprintf(stderr, "install: no Secret %s/%s in the cluster: a new CA and serving certificate\n", ns, SECRET);
		if (install_certs_make(ca, crt, key, service, ns, &err) != 0)
			goto failed;
		goto ok;
	}
	if (rc != 0)
		goto cluster_failed;
	old_crt = data_field(secret, "tls.crt");
	old_key = data_field(secret, "tls.key");
	if ((old_ca = data_field(secret, "ca.crt")) == NULL) {
		old_ca = installed_bundle(&lc, service, &err);
		if (!old_ca && err.code && err.code != WMAP_ENOTFOUND)
			goto cluster_failed;
	}
	if (!old_crt || !old_key)
		snprintf(why, sizeof(why), "it has no tls.crt or tls.key");
	else if (!old_ca)
		snprintf(why, sizeof(why), "no ca.crt in it and no caBundle installed");
	else if (install_certs_reusable(old_crt, old_key, old_ca, host, INSTALL_RENEW_DAYS, why, sizeof(why)) == 0) {
		/* Kept as they are; a CA of an earlier rotation that has expired leaves the bundle. */
		if ((*ca = install_certs_unexpired(old_ca)) == NULL)
			goto oom;
		*crt = old_crt;
		*key = old_key;
		old_crt = old_key = NULL;
		fprintf(stderr, "install: keeping the CA and serving certificate of Secret %s/%s\n", ns, SECRET);
		goto ok;
	}
	/* A rotation: a new CA and certificate, the old CAs still trusted while they last. */
	if (install_certs_make(ca, crt, key, service, ns, &err) != 0)
		goto failed;
	if (old_ca) {
		char *both;
		if ((kept = install_certs_unexpired(old_ca)) == NULL || (both = concat(*ca, kept)) == NULL)
			goto oom;
		free(*ca);
		*ca = both;
	}
	fprintf(stderr, "install: Secret %s/%s is not kept (%s): a new CA and serving certificate; %s\n", ns, SECRET, why,
		kept && *kept ? "the old CA stays in the caBundles until it expires" : "no old CA left to trust");
ok:
	code = 0;
	goto done;
oom:
	code = cli_error("out of memory");
	goto done;
cluster_failed:
	fprintf(stderr, "error: install: reading the webhook's serving Secret %s/%s: %s (--new-ca makes a new CA without "
			"reading the cluster)\n",
		ns, SECRET, err.message);
	code = CLI_EXIT_ERROR;
	goto done;
failed:
	code = cli_fail(&err);
done:
	if (code != 0) {
		free(*ca);
		free(*crt);
		install_certs_key_free(*key);
		*ca = *crt = *key = NULL;
	}
	install_certs_key_free(old_key);
	free(old_crt);
	free(old_ca);
	free(kept);
	json_decref(secret);
	live_close(&lc);
	return code;
}
