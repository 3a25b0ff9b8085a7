/* kubectl-wmap: completion of live values (workload types, names, namespaces) for
 * cmd_complete.c. Quiet: a cluster that cannot be reached completes nothing, and nothing is
 * printed on stderr. Types come from the cached discovery, filtered to those a definition
 * covers; names and namespaces are listed from the cluster (one page). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"

typedef struct quiet_conn {
	wmap_kube_config *cfg;
	wmap_kube_client *client;
	wmap_discovery *disc;
} quiet_conn;

static void conn_close(quiet_conn *q)
{
	wmap_discovery_free(q->disc);
	wmap_kube_client_free(q->client);
	wmap_kubeconfig_free(q->cfg);
	memset(q, 0, sizeof(*q));
}

/* The connection flags among the typed words (the rest of the line is not parsed). */
static int conn_open(quiet_conn *q, int n, char **words)
{
	wmap_kube_overrides ov = { 0 };
	wmap_kube_opts ko = { 0 };
	wmap_error err = { 0 };

	const char *groups[CLI_MAX_AS_GROUPS];

	memset(q, 0, sizeof(*q));
	ov.as_groups = groups;
	for (int i = 0; i + 1 < n; i++) {
		const char *w = words[i];
		const char **slot = strcmp(w, "--kubeconfig") == 0                            ? &ov.kubeconfig
				    : strcmp(w, "--context") == 0                             ? &ov.context
				    : strcmp(w, "--cluster") == 0                             ? &ov.cluster
				    : strcmp(w, "--user") == 0                                ? &ov.user
				    : (strcmp(w, "-n") == 0 || strcmp(w, "--namespace") == 0) ? &ov.namespace_
				    : (strcmp(w, "-s") == 0 || strcmp(w, "--server") == 0)    ? &ov.server
				    : strcmp(w, "--token") == 0                               ? &ov.token
				    : strcmp(w, "--as") == 0                                  ? &ov.as_user
				    : strcmp(w, "--as-uid") == 0                              ? &ov.as_uid
				    : strcmp(w, "--certificate-authority") == 0               ? &ov.ca_file
				    : strcmp(w, "--client-certificate") == 0                  ? &ov.cert_file
				    : strcmp(w, "--client-key") == 0                          ? &ov.key_file
				    : strcmp(w, "--tls-server-name") == 0                     ? &ov.tls_server_name
											      : NULL;

		if (strcmp(w, "--insecure-skip-tls-verify") == 0 ||
		    strcmp(w, "--insecure-skip-tls-verify=true") == 0)
			ov.insecure = 1;
		if (strcmp(w, "--as-group") == 0 && i + 2 < n && ov.n_as_groups < CLI_MAX_AS_GROUPS)
			groups[ov.n_as_groups++] = words[i + 1];
		if (slot && i + 2 < n) /* not the word being completed */
			*slot = words[i + 1];
	}
	ko.timeout_ms = 5000;
	ko.max_retries = -1;
	if (wmap_kubeconfig_load(&q->cfg, &ov, &err) != 0 ||
	    wmap_kube_client_new(&q->client, q->cfg, &ko, &err) != 0)
		return -1;
	return 0;
}

static int has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static void list_names(quiet_conn *q, const wmap_api_resource *r, const char *ns, const char *prefix,
		       const char *type_prefix)
{
	wmap_error err = { 0 };
	char *path = wmap_resource_path(r, ns, NULL), url[2048];
	json_t *list = NULL, *it;
	size_t i;

	if (!path)
		return;
	snprintf(url, sizeof(url), "%s?limit=500", path);
	free(path);
	if (wmap_kube_get(&list, q->client, url, &err) != 0)
		return;
	json_array_foreach(json_object_get(list, "items"), i, it) {
		const char *name = json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));

		if (name && has_prefix(name, prefix))
			printf("%s%s\n", type_prefix ? type_prefix : "", name);
	}
	json_decref(list);
}

void live_complete_namespaces(int n, char **words, const char *prefix)
{
	quiet_conn q;
	wmap_api_resource ns = { .group = "", .version = "v1", .plural = "namespaces" };

	if (conn_open(&q, n, words) == 0)
		list_names(&q, &ns, NULL, prefix, NULL);
	conn_close(&q);
}

void live_complete_target(int n, char **words, const char *type, const char *cur)
{
	wmap_registry *reg = NULL;
	wmap_error err = { 0 };
	quiet_conn q;
	const char *slash = strchr(cur, '/');
	const wmap_api_resource *r;

	if (conn_open(&q, n, words) != 0 || wmap_discovery_load(&q.disc, q.client, 0, &err) != 0)
		goto done;
	if (type || slash) {
		char t[256], tp[300];

		snprintf(t, sizeof(t), "%.*s", slash && !type ? (int)(slash - cur) : 255, type ? type : cur);
		if (wmap_discovery_resolve(&r, q.disc, t, &err) != 0)
			goto done;
		snprintf(tp, sizeof(tp), "%s/", t);
		list_names(&q, r, q.cfg->namespace_, type ? cur : slash + 1, type ? NULL : tp);
		goto done;
	}
	/* Types: every served resource a definition covers, by plural as kubectl completes. */
	if (wmap_registry_new(&reg, &err) != 0 || wmap_registry_add_catalog(reg, &err) != 0)
		goto done;
	for (size_t i = 0; i < wmap_discovery_count(q.disc); i++) {
		int exact;

		r = wmap_discovery_get(q.disc, i);
		if (r->preferred && has_prefix(r->plural, cur) &&
		    wmap_registry_find(reg, r->group, r->version, r->kind, &exact))
			printf("%s\t%s%s%s\n", r->plural, r->kind, r->group[0] ? "." : "", r->group);
	}
done:
	wmap_registry_free(reg);
	conn_close(&q);
}

/* logs TYPE/NAME <TAB>: the workload's pod-bearing components, and component/instance for
 * those with several instances (the object is read and resolved). */
void live_complete_components(int n, char **words, const char *target, const char *cur)
{
	wmap_registry *reg = NULL;
	wmap_engine *eng = NULL;
	wmap_workload *w = NULL;
	const wmap_definition *def;
	const wmap_api_resource *r;
	wmap_error err = { 0 };
	json_t *obj = NULL;
	char type[256], *path = NULL;
	const char *slash = strchr(target, '/');
	quiet_conn q;

	if (!slash || conn_open(&q, n, words) != 0)
		return;
	snprintf(type, sizeof(type), "%.*s", (int)(slash - target), target);
	if (wmap_discovery_load(&q.disc, q.client, 0, &err) != 0 ||
	    wmap_discovery_resolve(&r, q.disc, type, &err) != 0 ||
	    (path = wmap_resource_path(r, r->namespaced ? q.cfg->namespace_ : NULL, slash + 1)) == NULL ||
	    wmap_kube_get(&obj, q.client, path, &err) != 0 || wmap_registry_new(&reg, &err) != 0 ||
	    wmap_registry_add_catalog(reg, &err) != 0 ||
	    wmap_registry_find_object(&def, reg, obj, &err) != 0 ||
	    wmap_engine_new(&eng, reg, &err) != 0 || wmap_workload_resolve(&w, eng, obj, def, &err) != 0)
		goto done;
	for (size_t k = 0; k < w->n_nodes; k++) {
		const wmap_node *nd = &w->nodes[k];

		if (!wmap_component_has_pods(nd->def))
			continue;
		if (has_prefix(nd->def->name, cur))
			printf("%s\n", nd->def->name);
		for (size_t i = 0; nd->def->instance_id_path && i < nd->n_instances; i++) {
			char c[512];

			snprintf(c, sizeof(c), "%s/%s", nd->def->name,
				 nd->instances[i].id ? nd->instances[i].id : "");
			if (has_prefix(c, cur))
				printf("%s\n", c);
		}
	}
done:
	wmap_workload_free(w);
	wmap_engine_free(eng);
	wmap_registry_free(reg);
	json_decref(obj);
	free(path);
	conn_close(&q);
}
