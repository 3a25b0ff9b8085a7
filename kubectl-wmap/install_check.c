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
#include "wmap/gang.h"
#include "wmap/json_text.h"
#include "wmap/kube/discovery.h"

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

/* ---- --gang-scheduler kai: can KAI gang each Karta's kind? ----
 * KAI's pod-grouper (v0.17+) takes a Karta for a top owner only when: no built-in plugin of
 * its own handles that kind (they win over a Karta), its service account may read the kind
 * (else the owner walk stops short, silently), exactly one valid Karta with gang
 * instructions carries the three run.ai/karta-* labels of that exact version (two: an error
 * KAI only logs). Reference: gang-schedulers.md 2.2 and 2.6. */

#define KAI_SA "system:serviceaccount:kai-scheduler:pod-grouper"

static int kai_native(const char *group, const char *kind)
{
	static const char *const native[][2] = {
		{ "apps", "Deployment" },
		{ "apps", "StatefulSet" },
		{ "apps", "ReplicaSet" },
		{ "batch", "Job" },
		{ "batch", "CronJob" },
		{ "", "Pod" },
		{ "kubeflow.org", "TFJob" },
		{ "kubeflow.org", "PyTorchJob" },
		{ "kubeflow.org", "XGBoostJob" },
		{ "kubeflow.org", "JAXJob" },
		{ "kubeflow.org", "MPIJob" },
		{ "kubeflow.org", "Notebook" },
		{ "ray.io", "RayCluster" },
		{ "ray.io", "RayJob" },
		{ "ray.io", "RayService" },
		{ "jobset.x-k8s.io", "JobSet" },
		{ "leaderworkerset.x-k8s.io", "LeaderWorkerSet" },
		{ "grove.io", "PodCliqueSet" },
		{ "grove.io", "PodGangSet" },
		{ "serving.knative.dev", "Service" },
		{ "machinelearning.seldon.io", "SeldonDeployment" },
		{ "kubevirt.io", "VirtualMachineInstance" },
		{ "tekton.dev", "PipelineRun" },
		{ "tekton.dev", "TaskRun" },
		{ "argoproj.io", "Workflow" },
		{ "trainer.kubeflow.org", "TrainJob" },
		{ "nvidia.com", "DynamoGraphDeployment" },
	};
	for (size_t i = 0; i < sizeof(native) / sizeof(native[0]); i++)
		if (!strcmp(group, native[i][0]) && !strcmp(kind, native[i][1]))
			return 1;
	return 0;
}

/* "yes", "no", or NULL when the API server cannot be asked (a SubjectAccessReview, as
 * `kubectl auth can-i --as` asks). */
static const char *kai_may_list(check_ctx *c, const char *group, const char *resource)
{
	json_t *req = json_pack("{s:s, s:s, s:{s:s, s:[s, s, s], s:{s:s, s:s, s:s}}}", "apiVersion",
				"authorization.k8s.io/v1", "kind", "SubjectAccessReview", "spec", "user", KAI_SA,
				"groups", "system:serviceaccounts", "system:serviceaccounts:kai-scheduler",
				"system:authenticated", "resourceAttributes", "group", group, "resource",
				resource, "verb", "list");
	char *body = req ? wmap_json_text(req, NULL) : NULL;
	json_t *out = NULL;
	long status = 0;
	wmap_error err = { 0 };
	const char *v = NULL;

	json_decref(req);
	if (body && wmap_kube_request(&out, &status, c->lc->client, "POST",
				      "/apis/authorization.k8s.io/v1/subjectaccessreviews", "application/json",
				      body, &err) == 0)
		v = json_is_true(json_object_get(json_object_get(out, "status"), "allowed")) ? "yes" : "no";
	free(body);
	json_decref(out);
	return v;
}

static void check_kai(check_ctx *c)
{
	json_t *list = NULL, *k, *k2;
	wmap_error err = { 0 };
	size_t i, j;
	int any = 0;

	if (wmap_kube_get(&list, c->lc->client, "/apis/run.ai/v1alpha1/kartas", &err) != 0) {
		report(c, "kai-kartas", "FAIL", "cannot list Kartas: %s", err.message);
		return;
	}
	json_array_foreach(json_object_get(list, "items"), i, k) {
		const json_t *gvk = json_object_get(json_object_get(json_object_get(json_object_get(
											    k, "spec"),
										    "structureDefinition"),
								    "rootComponent"),
						    "kind");
		const char *g = json_string_value(json_object_get(gvk, "group"));
		const char *v = json_string_value(json_object_get(gvk, "version"));
		const char *kind = json_string_value(json_object_get(gvk, "kind"));
		const json_t *gs = json_object_get(json_object_get(json_object_get(k, "spec"),
								   "optimizationInstructions"),
						   "gangScheduling");
		json_t *want = wmap_karta_labels(k);
		const json_t *have = json_object_get(json_object_get(k, "metadata"), "labels");
		char name[300], bad[900] = "";
		int claims = 0;

		if (!g || !v || !kind) {
			json_decref(want);
			continue;
		}
		any = 1;
		snprintf(name, sizeof(name), "kai %s%s%s/%s", kind, g[0] ? "." : "", g, v);
		if (kai_native(g, kind)) {
			report(c, name, "skip", "KAI's own plugin for %s wins over a Karta (no gang from it)", kind);
			json_decref(want);
			continue;
		}
		json_array_foreach(json_object_get(list, "items"), j, k2) {
			json_t *w2 = wmap_karta_labels(k2);
			claims += want && w2 && json_equal(want, w2);
			json_decref(w2);
		}
		const char *lk;
		json_t *lv;
		int labelled = want != NULL;
		json_object_foreach(want, lk, lv)
			labelled &= json_equal(json_object_get(have, lk), lv);
		if (!labelled)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%slacks the run.ai/karta-* labels of "
									       "its root kind (wmap-webhook's leader sets them)",
				 bad[0] ? "; " : "");
		if (claims > 1)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%d Kartas claim %s %s (KAI takes none)",
				 bad[0] ? "; " : "", claims, v, kind);
		if (!json_object_get(gs, "podGroup") && !json_array_size(json_object_get(gs, "podGroups")))
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%sno gang instructions "
									       "(optimizationInstructions.gangScheduling)",
				 bad[0] ? "; " : "");
		const wmap_api_resource *r = wmap_discovery_find_kind(c->lc->disc, g, v, kind);
		const char *may = r ? kai_may_list(c, g, r->plural) : NULL;
		if (!r)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%s/%s %s is not served",
				 bad[0] ? "; " : "", g, v, kind);
		else if (may && !strcmp(may, "no"))
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%s may not list %s.%s "
									       "(grant it get/list/watch, or KAI groups its pods one by one)",
				 bad[0] ? "; " : "", KAI_SA, r->plural, g);
		if (bad[0])
			report(c, name, "FAIL", "Karta %s: %s", json_string_value(json_object_get(json_object_get(k, "metadata"), "name")), bad);
		else
			report(c, name, "ok", "KAI can gang it from Karta %s%s",
			       json_string_value(json_object_get(json_object_get(k, "metadata"), "name")),
			       may ? "" : " (its service account's access could not be asked)");
		json_decref(want);
	}
	if (!any)
		report(c, "kai-kartas", "skip", "no Karta in the cluster");
	json_decref(list);
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
	if (cli_options_get(o, "gang-scheduler") && !strcmp(cli_options_get(o, "gang-scheduler"), "kai"))
		check_kai(&c);
	fflush(stdout);
	live_close(&lc);
	return c.failed ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}
