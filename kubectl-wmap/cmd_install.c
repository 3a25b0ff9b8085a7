/* kubectl-wmap install and uninstall: print the manifests that install wmap's webhook (for
 * `kubectl wmap install | kubectl apply -f -`), or the objects to delete.
 *
 * The manifests are deploy/base/ and deploy/overlays/cert-manager/certificates.yaml, embedded
 * at build time by deploy/embed.sh: one source with `kubectl apply -k deploy/`. install then
 * adjusts them for the chosen setup: the namespace (every "wmap-system" in them), the image
 * (default: the images: entry of deploy/base/kustomization.yaml), the replicas, the gang
 * scheduler and queue of the webhook's arguments, and the certificates: those of the
 * cluster's Secret while they are good, else made with OpenSSL (install_ca.c, install_certs.c:
 * a CA and a serving certificate; the CA's key is thrown away, the serving key goes only into
 * the Secret, the CA into the Secret's ca.crt and every caBundle), or left to cert-manager.
 * install --check and this certificate step are the two that read the cluster. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "install_ca.h"
#include "install_certs.h"
#include "install_check.h"
#include "wmap/base64.h"
#include "wmap/gang.h"
#include "wmap/yaml.h"

struct wmap_deploy_file {
	const char *name;
	const char *text;
};
extern const struct wmap_deploy_file wmap_deploy_files[];
extern const size_t wmap_deploy_count;

#define DEFAULT_NS "wmap-system"
#define SERVICE "wmap-webhook"

extern const cli_command cli_cmd_install, cli_cmd_uninstall;

/* Every document of the embedded files whose path ends in suffix, appended to docs. */
static int load_docs(json_t *docs, const char *suffix, wmap_error *err)
{
	size_t i, sl = strlen(suffix);

	for (i = 0; i < wmap_deploy_count; i++) {
		const struct wmap_deploy_file *f = &wmap_deploy_files[i];
		size_t nl = strlen(f->name);
		json_t *parsed = NULL;

		if (nl < sl || strcmp(f->name + nl - sl, suffix) != 0)
			continue;
		if (wmap_yaml_parse(&parsed, f->text, strlen(f->text), f->name, NULL, err) != 0)
			return -1;
		json_array_extend(docs, parsed);
		json_decref(parsed);
	}
	return 0;
}

/* The image deploy/base/kustomization.yaml sets (images[0]: newName:newTag), into buf. */
static int default_image(char *buf, size_t len, wmap_error *err)
{
	json_t *k = json_array(), *img;
	const char *name, *tag;
	int rc = -1;

	if (!k || load_docs(k, "base/kustomization.yaml", err) != 0)
		goto out;
	img = json_array_get(json_object_get(json_array_get(k, 0), "images"), 0);
	name = json_string_value(json_object_get(img, "newName"));
	tag = json_string_value(json_object_get(img, "newTag"));
	if (!name || !tag) {
		wmap_error_set(err, WMAP_EINVAL, "deploy/base/kustomization.yaml: images[0] has no newName and newTag");
		goto out;
	}
	if ((size_t)snprintf(buf, len, "%s:%s", name, tag) >= len) {
		wmap_error_set(err, WMAP_EINVAL, "deploy/base/kustomization.yaml: images[0]: too long");
		goto out;
	}
	rc = 0;
out:
	json_decref(k);
	return rc;
}

/* Replaces every "wmap-system" inside every string of v by ns (names, namespaces, service
 * host names, cert-manager's inject-ca-from, the webhooks' excluded namespaces). */
static int rename_ns(json_t *v, const char *ns)
{
	const char *key;
	json_t *child;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach(v, key, child)
			if (json_is_string(child)) {
				char *s = NULL;
				const char *old = json_string_value(child), *p;
				size_t n = 0, cap, ol = strlen(DEFAULT_NS), nl = strlen(ns);

				if (!strstr(old, DEFAULT_NS))
					continue;
				cap = strlen(old) / ol * nl + strlen(old) + 1;
				if ((s = malloc(cap)) == NULL)
					return -1;
				for (p = old; *p;) {
					if (strncmp(p, DEFAULT_NS, ol) == 0) {
						memcpy(s + n, ns, nl);
						n += nl;
						p += ol;
					} else {
						s[n++] = *p++;
					}
				}
				s[n] = '\0';
				json_object_set_new(v, key, json_string(s));
				free(s);
			} else if (rename_ns(child, ns) != 0) {
				return -1;
			}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, child) {
			if (json_is_string(child) && strcmp(json_string_value(child), DEFAULT_NS) == 0)
				json_array_set_new(v, i, json_string(ns));
			else if (rename_ns(child, ns) != 0)
				return -1;
		}
	}
	return 0;
}

/* Sets the webhook container's image and replaces or adds --NAME=value in its args. */
static void set_arg(json_t *args, const char *name, const char *value)
{
	char buf[320];
	size_t i, nl = strlen(name);
	json_t *a;

	snprintf(buf, sizeof(buf), "--%s=%s", name, value);
	json_array_foreach(args, i, a) {
		const char *s = json_string_value(a);
		if (s && strncmp(s, "--", 2) == 0 && strncmp(s + 2, name, nl) == 0 && s[2 + nl] == '=') {
			json_array_set_new(args, i, json_string(buf));
			return;
		}
	}
	json_array_append_new(args, json_string(buf));
}

static int is_kind(const json_t *o, const char *kind)
{
	const char *k = json_string_value(json_object_get(o, "kind"));
	return k && strcmp(k, kind) == 0;
}

static int valid_label(const char *s, size_t max)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > max)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return s[0] != '-' && s[n - 1] != '-';
}

static json_t *b64(const char *s)
{
	char *e = wmap_base64((const unsigned char *)s, strlen(s));
	json_t *v = e ? json_string(e) : NULL;
	free(e);
	return v;
}

static int print_docs(const json_t *docs, wmap_error *err)
{
	size_t i;
	json_t *d;

	json_array_foreach(docs, i, d) {
		char *y = NULL;
		if (wmap_yaml_dump(&y, d, err) != 0)
			return -1;
		printf("---\n%s", y);
		free(y);
	}
	return fflush(stdout) == 0 ? 0 : -1;
}

static int run_install(const cli_options *o)
{
	const char *ns = o->kube.namespace_ ? o->kube.namespace_ : DEFAULT_NS;
	const char *image = cli_options_get(o, "image");
	const char *replicas_s = cli_options_get(o, "replicas");
	const char *sched = cli_options_get(o, "gang-scheduler");
	const char *queue = cli_options_get(o, "queue");
	int cert_manager = cli_options_get(o, "cert-manager") != NULL;
	char image_buf[512], *ca = NULL, *crt = NULL, *key = NULL, *end;
	wmap_error err = { 0 };
	wmap_gang_scheduler gs;
	json_t *docs = NULL, *out = NULL, *d;
	long replicas = 2;
	size_t i;
	int rc = CLI_EXIT_ERROR;

	if (o->n_args > 0)
		return cli_usage_error(o, &cli_cmd_install, "install takes no arguments");
	if (cli_require_table(o, &cli_cmd_install) != 0)
		return CLI_EXIT_USAGE;
	if (!valid_label(ns, 63))
		return cli_usage_error(o, &cli_cmd_install,
				       "--namespace %s: not a namespace name (lower-case letters, digits and '-', at most 63)", ns);
	if (replicas_s) {
		errno = 0;
		replicas = strtol(replicas_s, &end, 10);
		if (errno || end == replicas_s || *end || replicas < 1 || replicas > 100)
			return cli_usage_error(o, &cli_cmd_install, "--replicas %s: expected a whole number from 1 to 100", replicas_s);
	}
	if (image && (!*image || strcspn(image, " \t\r\n") != strlen(image) || strlen(image) > 400))
		return cli_usage_error(o, &cli_cmd_install, "--image: expected an image reference without spaces");
	if (sched && wmap_gang_scheduler_parse(&gs, sched, &err) != 0)
		return cli_usage_error(o, &cli_cmd_install, "--gang-scheduler: %s", err.message);
	if (queue && (!*queue || strlen(queue) > 253 || strcspn(queue, " \t\r\n=") != strlen(queue)))
		return cli_usage_error(o, &cli_cmd_install, "--queue: expected a queue name");
	if (cli_require_queue_scheduler(o, &cli_cmd_install) != 0)
		return CLI_EXIT_USAGE;
	if (cert_manager && cli_options_get(o, "new-ca"))
		return cli_usage_error(o, &cli_cmd_install, "--new-ca: cert-manager makes the certificates with --cert-manager");
	if (cli_options_get(o, "check"))
		return install_check(o, ns);
	if (!image) {
		if (default_image(image_buf, sizeof(image_buf), &err) != 0)
			return cli_fail(&err);
		image = image_buf;
	}

	if ((docs = json_array()) == NULL || (out = json_array()) == NULL)
		goto oom;
	if (load_docs(docs, ".yaml", &err) != 0)
		goto fail;
	if (!cert_manager && (rc = install_ca_plan(o, ns, SERVICE, cli_options_get(o, "new-ca") != NULL, &ca, &crt, &key)) != 0)
		goto done;
	rc = CLI_EXIT_ERROR;

	json_array_foreach(docs, i, d) {
		json_t *spec = json_object_get(d, "spec"), *c, *w;
		size_t j;

		if (is_kind(d, "Kustomization"))
			continue;
		/* certificates.yaml belongs to the cert-manager setup only. */
		if (!cert_manager && (is_kind(d, "Issuer") || is_kind(d, "Certificate")))
			continue;
		/* One replica cannot keep a PodDisruptionBudget of minAvailable 1 without blocking
		 * every node drain. */
		if (is_kind(d, "PodDisruptionBudget") && replicas < 2)
			continue;
		if (rename_ns(d, ns) != 0)
			goto oom;
		if (is_kind(d, "Deployment")) {
			json_object_set_new(spec, "replicas", json_integer(replicas));
			c = json_array_get(json_object_get(json_object_get(json_object_get(spec, "template"), "spec"), "containers"), 0);
			json_object_set_new(c, "image", json_string(image));
			if (sched)
				set_arg(json_object_get(c, "args"), "gang-scheduler", sched);
			if (queue)
				set_arg(json_object_get(c, "args"), "queue", queue);
		}
		if (!cert_manager && (is_kind(d, "MutatingWebhookConfiguration") || is_kind(d, "ValidatingWebhookConfiguration"))) {
			json_t *ann = json_object_get(json_object_get(d, "metadata"), "annotations");
			json_object_del(ann, "cert-manager.io/inject-ca-from");
			if (ann && json_object_size(ann) == 0)
				json_object_del(json_object_get(d, "metadata"), "annotations");
			json_array_foreach(json_object_get(d, "webhooks"), j, w)
				json_object_set_new(json_object_get(w, "clientConfig"), "caBundle", b64(ca));
		}
		json_array_append(out, d);
		/* The Secret right after the namespace it lives in. */
		if (!cert_manager && is_kind(d, "Namespace")) {
			json_t *secret = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:s, s:{s:o, s:o}}",
						   "apiVersion", "v1", "kind", "Secret",
						   "metadata", "name", "wmap-webhook-tls", "namespace", ns,
						   "labels", "app.kubernetes.io/name", "wmap-webhook", "app.kubernetes.io/part-of", "wmap",
						   "type", "kubernetes.io/tls",
						   "data", "tls.crt", b64(crt), "tls.key", b64(key));
			/* The CA bundle too, so that the next install finds the CA in force. */
			if (secret)
				json_object_set_new(json_object_get(secret, "data"), "ca.crt", b64(ca));
			if (!secret)
				goto oom;
			json_array_append_new(out, secret);
		}
	}
	if (print_docs(out, &err) != 0)
		goto fail;
	rc = CLI_EXIT_OK;
	goto done;
oom:
	rc = cli_error("out of memory");
	goto done;
fail:
	rc = cli_fail(&err);
done:
	install_certs_key_free(key);
	free(ca);
	free(crt);
	json_decref(docs);
	json_decref(out);
	return rc;
}

/* uninstall: the objects install creates, webhook configurations first (so that the API
 * server stops calling a webhook that is going away), then the namespace (with everything in
 * it), the cluster-wide RBAC and, only with --include-crds, the CRDs (their deletion deletes
 * every Karta and WorkloadPolicy in the cluster). */
static int run_uninstall(const cli_options *o)
{
	static const char *const order[] = {
		"MutatingWebhookConfiguration",
		"ValidatingWebhookConfiguration",
		"Deployment",
		"Namespace",
		"ClusterRoleBinding",
		"ClusterRole",
		"CustomResourceDefinition",
		NULL,
	};
	const char *ns = o->kube.namespace_ ? o->kube.namespace_ : DEFAULT_NS;
	int crds = cli_options_get(o, "include-crds") != NULL;
	wmap_error err = { 0 };
	json_t *docs = json_array(), *out = json_array(), *d;
	size_t i, k;
	int rc = CLI_EXIT_ERROR;

	if (o->n_args > 0) {
		rc = cli_usage_error(o, &cli_cmd_uninstall, "uninstall takes no arguments");
		goto done;
	}
	if (!valid_label(ns, 63)) {
		rc = cli_usage_error(o, &cli_cmd_uninstall, "--namespace %s: not a namespace name", ns);
		goto done;
	}
	if (!docs || !out) {
		rc = cli_error("out of memory");
		goto done;
	}
	if (load_docs(docs, ".yaml", &err) != 0) {
		rc = cli_fail(&err);
		goto done;
	}
	for (k = 0; order[k]; k++) {
		if (!crds && strcmp(order[k], "CustomResourceDefinition") == 0)
			continue;
		json_array_foreach(docs, i, d) {
			json_t *meta = json_object_get(d, "metadata"), *ref;
			if (!is_kind(d, order[k]))
				continue;
			if (rename_ns(d, ns) != 0)
				goto done;
			meta = json_object_get(d, "metadata");
			ref = json_pack("{s:O, s:O, s:{s:O}}", "apiVersion", json_object_get(d, "apiVersion"),
					"kind", json_object_get(d, "kind"), "metadata", "name", json_object_get(meta, "name"));
			if (ref && json_object_get(meta, "namespace"))
				json_object_set(json_object_get(ref, "metadata"), "namespace", json_object_get(meta, "namespace"));
			if (!ref || json_array_append_new(out, ref) != 0)
				goto done;
		}
	}
	rc = print_docs(out, &err) == 0 ? CLI_EXIT_OK : cli_fail(&err);
done:
	json_decref(docs);
	json_decref(out);
	return rc;
}

static const cli_flag install_flags[] = {
	{ "image", NULL, 0, "REF", "the webhook's image (default: deploy/base/kustomization.yaml's)" },
	{ "replicas", NULL, 0, "N", "webhook replicas, 1 to 100 (2; with 1, no PodDisruptionBudget)" },
	{ "gang-scheduler", NULL, 0, "NAME", "the webhook's --gang-scheduler (kai, volcano, ...; none)" },
	{ "queue", NULL, 0, "NAME",
	  "the webhook's --queue for the gang scheduler (needs kai, volcano, yunikorn or kueue)" },
	{ "cert-manager", NULL, 0, NULL, "certificates from cert-manager instead of made here" },
	{ "new-ca", NULL, 0, NULL, "a new CA and serving certificate, without reading the cluster's" },
	{ "check", NULL, 0, NULL, "read the cluster and check the installed webhook, check by check" },
	{ NULL, NULL, 0, NULL, NULL },
};

static const cli_flag uninstall_flags[] = {
	{ "include-crds", NULL, 0, NULL, "also the CRDs (deletes every Karta and WorkloadPolicy)" },
	{ NULL, NULL, 0, NULL, NULL },
};

const cli_command cli_cmd_install = {
	.name = "install",
	.summary = "Print the manifests that install the wmap webhook",
	.usage = "install [-n NAMESPACE] [--image REF] [--replicas N] [--gang-scheduler NAME] "
		 "[--queue NAME] [--cert-manager | --new-ca] | install --check [-n NAMESPACE] [--gang-scheduler kai]",
	.help =
		"Prints the manifests of deploy/ (built in) for the chosen setup, to pipe into\n"
		"kubectl apply. Without --cert-manager the webhook's serving certificate for\n"
		"wmap-webhook.NAMESPACE.svc and its CA are those of the cluster's Secret\n"
		"NAMESPACE/wmap-webhook-tls when it exists and both have 90 days left: applying the\n"
		"output again (an upgrade, a GitOps re-sync) changes no certificate. Otherwise install\n"
		"makes a CA and a serving certificate (the key goes only into the Secret, the CA into\n"
		"the Secret's ca.crt and every webhook's caBundle, the CA's key is not kept); replacing\n"
		"an expiring one, it keeps the old CA in the caBundles until it expires, so that pods\n"
		"still serving the old certificate stay trusted. Without a kubeconfig (or in-cluster\n"
		"account) it makes new ones and says so; a configured cluster it cannot read is an\n"
		"error. --new-ca makes new ones without reading the cluster. With --cert-manager,\n"
		"cert-manager's Issuers and Certificate are printed instead and cainjector fills the\n"
		"caBundles.\n"
		"\n"
		"--check reads the cluster instead and reports check by check: the CRDs established,\n"
		"the Deployment available, the webhook configurations present with a caBundle that\n"
		"verifies the serving certificate (Secret wmap-webhook-tls), the Service's endpoints,\n"
		"and the webhook answering through the API server (a server-side dry-run create of a\n"
		"sample JobSet in namespace default must come back stamped; skipped when JobSets are\n"
		"not served). With --gang-scheduler kai, one line per Karta kind: whether KAI's\n"
		"pod-grouper can gang it (no built-in KAI plugin for the kind, its service account\n"
		"kai-scheduler/pod-grouper may list the kind, exactly one Karta with the run.ai/karta-*\n"
		"labels claims that exact version, it has gang instructions). Exit 1 when a check fails.\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap install | kubectl apply -f -\n"
		"  kubectl wmap install -n ml-infra --gang-scheduler kai --queue default | kubectl apply -f -\n"
		"  kubectl wmap install --cert-manager --replicas 3 > wmap.yaml\n"
		"  kubectl wmap install --check\n",
	.flags = install_flags,
	.run = run_install,
};

const cli_command cli_cmd_uninstall = {
	.name = "uninstall",
	.summary = "Print the objects to delete to remove the wmap webhook",
	.usage = "uninstall [-n NAMESPACE] [--include-crds]",
	.help =
		"Prints, in deletion order, the objects that install creates: the webhook\n"
		"configurations first, then the Deployment, the namespace and the cluster-wide RBAC;\n"
		"the CRDs only with --include-crds. Reads no cluster.\n"
		"\n"
		"Example:\n"
		"  kubectl wmap uninstall | kubectl delete -f - --ignore-not-found\n",
	.flags = uninstall_flags,
	.run = run_uninstall,
};
