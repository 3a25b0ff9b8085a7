/* kubectl-wmap install --check: reads the cluster and reports, one line per check, whether
 * the webhook that `install` sets up is there and working. Exit 0 when every check passes
 * (a check that cannot run is reported as skipped), 1 when one fails. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "install_certs.h"
#include "install_check.h"
#include "live.h"

typedef struct check_ctx {
	live_ctx *lc;
	const char *ns;
	int failed;
} check_ctx;

static void report(check_ctx *c, const char *check, const char *result, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report(check_ctx *c, const char *check, const char *result, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (strcmp(result, "FAIL") == 0)
		c->failed = 1;
	printf("%-24s %-5s %s\n", check, result, msg);
}

static const json_t *condition(const json_t *obj, const char *type)
{
	size_t i;
	json_t *cond;

	json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, cond) {
		const char *t = json_string_value(json_object_get(cond, "type"));
		if (t && strcmp(t, type) == 0)
			return cond;
	}
	return NULL;
}

static int cond_true(const json_t *obj, const char *type)
{
	const char *s = json_string_value(json_object_get(condition(obj, type), "status"));
	return s && strcmp(s, "True") == 0;
}

static void check_crds(check_ctx *c)
{
	static const char *const crds[] = { "kartas.run.ai", "workloadpolicies.wmap.io", NULL };
	char path[256], bad[512] = "";
	size_t i;

	for (i = 0; crds[i]; i++) {
		wmap_error err = { 0 };
		json_t *crd = NULL;

		snprintf(path, sizeof(path), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/%s", crds[i]);
		if (wmap_kube_get(&crd, c->lc->client, path, &err) != 0)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%s: %s",
				 bad[0] ? "; " : "", crds[i], err.message);
		else if (!cond_true(crd, "Established"))
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%s: not Established",
				 bad[0] ? "; " : "", crds[i]);
		json_decref(crd);
	}
	if (bad[0])
		report(c, "crds", "FAIL", "%s", bad);
	else
		report(c, "crds", "ok", "kartas.run.ai and workloadpolicies.wmap.io established");
}

static void check_deployment(check_ctx *c)
{
	wmap_error err = { 0 };
	json_t *d = NULL;
	char path[256];
	json_int_t want, avail;

	snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/deployments/wmap-webhook", c->ns);
	if (wmap_kube_get(&d, c->lc->client, path, &err) != 0) {
		report(c, "deployment", "FAIL", "%s", err.message);
		return;
	}
	want = json_integer_value(json_object_get(json_object_get(d, "spec"), "replicas"));
	avail = json_integer_value(json_object_get(json_object_get(d, "status"), "availableReplicas"));
	if (!cond_true(d, "Available") || avail < 1)
		report(c, "deployment", "FAIL", "%s/wmap-webhook is not available (%lld of %lld replicas available)",
		       c->ns, (long long)avail, (long long)want);
	else
		report(c, "deployment", "ok", "%s/wmap-webhook available, %lld of %lld replicas", c->ns,
		       (long long)avail, (long long)want);
	json_decref(d);
}

static void check_webhooks(check_ctx *c)
{
	static const char *const kinds[] = { "mutatingwebhookconfigurations", "validatingwebhookconfigurations", NULL };
	wmap_error err = { 0 };
	json_t *secret = NULL, *cfg, *w;
	unsigned char *crt = NULL;
	size_t crt_len = 0, i, k, n_hooks = 0;
	char path[256], host[320], bad[1024] = "", why[256];

	snprintf(host, sizeof(host), "wmap-webhook.%s.svc", c->ns);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/wmap-webhook-tls", c->ns);
	if (wmap_kube_get(&secret, c->lc->client, path, &err) != 0) {
		report(c, "webhook-configurations", "FAIL", "the serving certificate: %s", err.message);
		return;
	}
	const char *crt64 = json_string_value(json_object_get(json_object_get(secret, "data"), "tls.crt"));
	if (!crt64 || install_certs_b64_decode(&crt, &crt_len, crt64, strlen(crt64)) != 0) {
		report(c, "webhook-configurations", "FAIL", "secret %s/wmap-webhook-tls has no tls.crt", c->ns);
		json_decref(secret);
		return;
	}
	json_decref(secret);
	char *crt_pem = (char *)crt;

	for (k = 0; kinds[k]; k++) {
		cfg = NULL;
		snprintf(path, sizeof(path), "/apis/admissionregistration.k8s.io/v1/%s/wmap-webhook", kinds[k]);
		if (wmap_kube_get(&cfg, c->lc->client, path, &err) != 0) {
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%s", bad[0] ? "; " : "", err.message);
			continue;
		}
		json_array_foreach(json_object_get(cfg, "webhooks"), i, w) {
			const char *name = json_string_value(json_object_get(w, "name"));
			const char *ca = json_string_value(json_object_get(json_object_get(w, "clientConfig"), "caBundle"));
			n_hooks++;
			if (!ca || !*ca)
				snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%swebhook %s has no caBundle",
					 bad[0] ? "; " : "", name ? name : "?");
			else if (install_certs_verify(crt_pem, ca, host, why, sizeof(why)) != 0)
				snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
					 "%sthe caBundle of webhook %s does not verify the serving certificate (%s)",
					 bad[0] ? "; " : "", name ? name : "?", why);
		}
		json_decref(cfg);
	}
	free(crt_pem);
	if (bad[0])
		report(c, "webhook-configurations", "FAIL", "%s", bad);
	else
		report(c, "webhook-configurations", "ok", "%zu webhooks; every caBundle verifies the serving certificate for %s",
		       n_hooks, host);
}

static void check_endpoints(check_ctx *c)
{
	wmap_error err = { 0 };
	json_t *ep = NULL, *s;
	char path[256];
	size_t i, ready = 0;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/endpoints/wmap-webhook", c->ns);
	if (wmap_kube_get(&ep, c->lc->client, path, &err) != 0) {
		report(c, "service-endpoints", "FAIL", "%s", err.message);
		return;
	}
	json_array_foreach(json_object_get(ep, "subsets"), i, s)
		ready += json_array_size(json_object_get(s, "addresses"));
	if (ready == 0)
		report(c, "service-endpoints", "FAIL", "service %s/wmap-webhook has no ready endpoint", c->ns);
	else
		report(c, "service-endpoints", "ok", "service %s/wmap-webhook: %zu ready endpoints", c->ns, ready);
	json_decref(ep);
}

/* A server-side dry-run create of a small JobSet in the default namespace: the API server
 * calls the mutating webhook, and the object it answers with must carry wmap's stamp. */
static void check_answers(check_ctx *c)
{
	static const char body[] =
		"{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
		"\"metadata\":{\"name\":\"wmap-install-check\",\"namespace\":\"default\"},"
		"\"spec\":{\"replicatedJobs\":[{\"name\":\"workers\",\"replicas\":1,\"template\":{\"spec\":"
		"{\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
		"\"image\":\"busybox\"}]}}}}}]}}";
	wmap_error err = { 0 };
	json_t *out = NULL, *labels;
	long status = 0;
	const char *stamp;

	if (wmap_kube_request(&out, &status, c->lc->client, "POST",
			      "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets?dryRun=All",
			      "application/json", body, &err) != 0) {
		if (status == 404)
			report(c, "webhook-answers", "skip", "JobSets (jobset.x-k8s.io/v1alpha2) are not served: "
							     "no sample workload to send through the webhook");
		else
			report(c, "webhook-answers", "FAIL", "dry-run create of a sample JobSet: %s", err.message);
		return;
	}
	labels = json_object_get(json_object_get(json_object_get(json_object_get(json_object_get(
											 json_array_get(json_object_get(json_object_get(out, "spec"), "replicatedJobs"), 0),
											 "template"),
										 "spec"),
								 "template"),
						 "metadata"),
				 "labels");
	stamp = json_string_value(json_object_get(labels, "wmap.io/workload-name"));
	if (stamp && strcmp(stamp, "wmap-install-check") == 0)
		report(c, "webhook-answers", "ok", "a server-side dry-run JobSet came back stamped by the webhook");
	else
		report(c, "webhook-answers", "FAIL", "a server-side dry-run JobSet came back without wmap's labels: "
						     "the webhook did not answer (failurePolicy Ignore lets the API server go on without it) "
						     "or has no rule for JobSets");
	json_decref(out);
}

int install_check(const cli_options *o, const char *ns)
{
	live_ctx lc;
	check_ctx c = { 0 };
	int rc;

	if ((rc = live_open(&lc, o)) != 0)
		return rc;
	c.lc = &lc;
	c.ns = ns;
	printf("%-24s %-5s %s\n", "CHECK", "RESULT", "DETAIL");
	check_crds(&c);
	check_deployment(&c);
	check_webhooks(&c);
	check_endpoints(&c);
	check_answers(&c);
	fflush(stdout);
	live_close(&lc);
	return c.failed ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}
