/* kubectl-wmap: shared helpers of the live commands (see live.h). */
#define _GNU_SOURCE /* timegm */
#include <stdarg.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "live.h"
#include "render.h"

long live_timeout_ms(const cli_options *o)
{
	if (!o->kube.request_timeout)
		return 0;
	return wmap_kube_parse_duration(o->kube.request_timeout);
}

int live_fail(const wmap_error *err, int code)
{
	const char *m = err->message[0] ? err->message : wmap_error_name(err->code);

	if (strncmp(m, "Error from server", 17) == 0)
		fprintf(stderr, "%s\n", m);
	else
		fprintf(stderr, "error: %s\n", m);
	return code;
}

int live_code(const wmap_error *err)
{
	return err->code == WMAP_ENOTFOUND ? CLI_EXIT_NOTFOUND
	       : err->code == WMAP_ENODEF  ? CLI_EXIT_NODEF
					   : CLI_EXIT_ERROR;
}

void live_warn(live_ctx *lc, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (lc->n_warnings == LIVE_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < lc->n_warnings; i++)
		if (strcmp(lc->warnings[i], buf) == 0)
			return;
	if ((lc->warnings[lc->n_warnings] = strdup(buf)) != NULL)
		lc->n_warnings++;
}

void live_overrides(wmap_kube_overrides *ov, const cli_options *o)
{
	memset(ov, 0, sizeof(*ov));
	ov->kubeconfig = o->kube.kubeconfig;
	ov->context = o->kube.context;
	ov->cluster = o->kube.cluster;
	ov->user = o->kube.user;
	ov->namespace_ = o->kube.namespace_;
	ov->server = o->kube.server;
	ov->token = o->kube.token;
	ov->as_user = o->kube.as_user;
	ov->as_uid = o->kube.as_uid;
	ov->as_groups = o->kube.as_groups;
	ov->n_as_groups = o->kube.n_as_groups;
	ov->ca_file = o->kube.certificate_authority;
	ov->cert_file = o->kube.client_certificate;
	ov->key_file = o->kube.client_key;
	ov->insecure = o->kube.insecure_skip_tls_verify;
	ov->tls_server_name = o->kube.tls_server_name;
}

int live_open(live_ctx *lc, const cli_options *o)
{
	wmap_kube_overrides ov;
	wmap_kube_opts ko = { 0 };
	wmap_error err = { 0 };
	int rc;

	memset(lc, 0, sizeof(*lc));
	lc->o = o;
	live_overrides(&ov, o);
	ko.timeout_ms = live_timeout_ms(o);
	if (ko.timeout_ms < 0) {
		fprintf(stderr, "error: invalid --request-timeout \"%s\" (use e.g. 30s, 1m, 0)\n",
			o->kube.request_timeout);
		return CLI_EXIT_USAGE;
	}
	if (ko.timeout_ms == 0 && o->kube.request_timeout)
		ko.timeout_ms = -1; /* "0": no timeout, as kubectl */
	if ((rc = wmap_kubeconfig_load(&lc->cfg, &ov, &err)) != 0)
		return live_fail(&err, CLI_EXIT_ERROR);
	lc->ns = lc->cfg->namespace_;
	if ((rc = wmap_kube_client_new(&lc->client, lc->cfg, &ko, &err)) != 0)
		return live_fail(&err, CLI_EXIT_ERROR);
	if ((rc = wmap_discovery_load(&lc->disc, lc->client, 0, &err)) != 0)
		return live_fail(&err, CLI_EXIT_ERROR);
	return 0;
}

void live_close(live_ctx *lc)
{
	fflush(stdout);
	for (size_t i = 0; i < lc->n_warnings; i++) {
		fprintf(stderr, "Warning: %s\n", lc->warnings[i]);
		free(lc->warnings[i]);
	}
	lc->n_warnings = 0;
	wmap_engine_free(lc->eng);
	wmap_registry_free(lc->reg);
	wmap_discovery_free(lc->disc);
	wmap_kube_client_free(lc->client);
	wmap_kubeconfig_free(lc->cfg);
	memset(lc, 0, sizeof(*lc));
}

/* Cluster Karta objects, best effort: a missing CRD, no permission or a broken object
 * only costs a warning (reference 6.2). */
static void add_cluster_definitions(live_ctx *lc)
{
	const wmap_api_resource *r = wmap_discovery_find_kind(lc->disc, "run.ai", "v1alpha1",
							      "Karta");
	wmap_error err = { 0 };
	json_t *items = json_array();
	char *path = NULL;
	size_t i;
	json_t *it;

	if (!items)
		return;
	/* Not in a cached discovery: the CRD may be newer than the cache, so list at its
	 * well-known path anyway (one request either way; 404 = not installed). */
	if (!r && !wmap_discovery_cached(lc->disc)) {
		live_warn(lc, "the kartas.run.ai CRD is not installed; showing built-in "
			      "definitions only");
		goto done;
	}
	if ((path = r ? wmap_resource_path(r, NULL, NULL) : strdup("/apis/run.ai/v1alpha1/kartas")) == NULL)
		goto done;
	if (live_list(items, lc, path, 500, &err) != 0) {
		if (err.code == WMAP_ENOTFOUND && !r)
			live_warn(lc, "the kartas.run.ai CRD is not installed; showing built-in "
				      "definitions only");
		else if (strstr(err.message, "(Forbidden)"))
			live_warn(lc, "cannot list kartas.run.ai (forbidden); showing built-in "
				      "definitions only");
		else
			live_warn(lc, "cannot list kartas.run.ai: %s; showing built-in definitions "
				      "only",
				  err.message);
		goto done;
	}
	json_array_foreach(items, i, it) {
		const char *name = json_string_value(
			json_object_get(json_object_get(it, "metadata"), "name"));
		wmap_definition *def = NULL;
		char source[300];

		snprintf(source, sizeof(source), "kartas.run.ai/%s", name ? name : "?");
		json_object_del(it, "status");
		if (wmap_definition_load(&def, it, source, WMAP_ORIGIN_CLUSTER, NULL, 0, &err) != 0) {
			live_warn(lc, "skipping invalid cluster definition %s: %s", source,
				  err.message);
			continue;
		}
		{
			const wmap_gvk *k = def->components[0].kind;
			const wmap_definition *have = NULL;
			char gvk[300] = "", dname[256];
			int exact = 0;

			if (k) {
				wmap_gvk_format(gvk, sizeof(gvk), k);
				have = wmap_registry_find(lc->reg, k->group, k->version, k->kind, &exact);
			}
			snprintf(dname, sizeof(dname), "%s", def->name);
			if (wmap_registry_add(lc->reg, def, &err) == 0)
				continue;
			if (err.code == WMAP_EINVALID && have && exact && have->origin == WMAP_ORIGIN_CLUSTER)
				live_warn(lc, "2 cluster Karta definitions claim %s: %s, %s; using %s", gvk,
					  have->name, dname, have->name);
			else
				live_warn(lc, "skipping cluster definition %s: %s", source, err.message);
		}
	}
done:
	free(path);
	json_decref(items);
}

int live_load_definitions(live_ctx *lc, const char *group, const char *kind)
{
	wmap_error err = { 0 };
	int rc;

	if ((rc = wmap_registry_new(&lc->reg, &err)) != 0)
		return live_fail(&err, CLI_EXIT_ERROR);
	/* Reading one object needs one catalog file, not the whole catalog parsed. */
	if (group && kind)
		rc = wmap_registry_add_catalog_kind(lc->reg, group, kind, &err);
	else
		rc = wmap_registry_add_catalog(lc->reg, &err);
	for (size_t i = 0; rc == 0 && i < lc->o->n_definitions; i++)
		rc = wmap_registry_add_path(lc->reg, lc->o->definitions[i], WMAP_ORIGIN_FILE, &err);
	if (rc != 0)
		return live_fail(&err, CLI_EXIT_ERROR);
	add_cluster_definitions(lc);
	if ((rc = wmap_engine_new(&lc->eng, lc->reg, &err)) != 0)
		return live_fail(&err, CLI_EXIT_ERROR);
	return 0;
}

int live_split_target(char *type, size_t tlen, char *name, size_t nlen, int *has_name,
		      const cli_options *o, const cli_command *cmd, int need_name)
{
	const char *slash;

	*has_name = 0;
	type[0] = name[0] = '\0';
	if (o->n_args == 0)
		return cli_usage_error(o, cmd, "%s needs TYPE/NAME or TYPE NAME", cmd->name);
	if (o->n_args > 2)
		return cli_usage_error(o, cmd, "%s takes TYPE/NAME or TYPE NAME (got %zu arguments)",
				       cmd->name, o->n_args);
	slash = strchr(o->args[0], '/');
	if (slash) {
		if (o->n_args > 1)
			return cli_usage_error(o, cmd, "there is no need to specify a resource type "
						       "as a separate argument when passing arguments in "
						       "resource/name form");
		snprintf(type, tlen, "%.*s", (int)(slash - o->args[0]), o->args[0]);
		snprintf(name, nlen, "%s", slash + 1);
		*has_name = 1;
	} else {
		snprintf(type, tlen, "%s", o->args[0]);
		if (o->n_args == 2) {
			snprintf(name, nlen, "%s", o->args[1]);
			*has_name = 1;
		}
	}
	if (!type[0] || (*has_name && !name[0]))
		return cli_usage_error(o, cmd, "arguments in resource/name form must have a "
					       "single resource and name");
	if (need_name && !*has_name)
		return cli_usage_error(o, cmd, "%s needs a NAME: TYPE/NAME or TYPE NAME", cmd->name);
	return 0;
}

/* The plural the API server would most likely serve for kind, lower case (Kubernetes'
 * default: PyTorchJob -> pytorchjobs, Gateway... -> ...s, Policy -> policies, Ingress ->
 * ingresses): a CRD that is not installed has no discovery entry to read it from. */
static void guess_plural(char *buf, size_t len, const char *kind)
{
	size_t n = strlen(kind);
	char low[256];

	snprintf(low, sizeof(low), "%s", kind);
	for (char *p = low; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	n = strlen(low);
	if (n > 1 && low[n - 1] == 'y' && !strchr("aeiou", low[n - 2]))
		snprintf(buf, len, "%.*sies", (int)(n - 1), low);
	else if (n > 0 && (low[n - 1] == 's' || low[n - 1] == 'x' ||
			   (n > 1 && (low[n - 1] == 'h') && (low[n - 2] == 'c' || low[n - 2] == 's'))))
		snprintf(buf, len, "%ses", low);
	else
		snprintf(buf, len, "%ss", low);
}

/* Whether type names kind in group as kubectl would spell it: the kind, its singular or
 * (guessed) plural, each alone or followed by .group or .version.group. */
static int names_kind(const char *type, const wmap_gvk *k)
{
	const char *dot = strchr(type, '.');
	size_t n = dot ? (size_t)(dot - type) : strlen(type);
	char plural[300], vg[512];

	if (dot) {
		snprintf(vg, sizeof(vg), "%s.%s", k->version, k->group);
		if (strcasecmp(dot + 1, k->group) != 0 && strcasecmp(dot + 1, vg) != 0)
			return 0;
	}
	guess_plural(plural, sizeof(plural), k->kind);
	return (strlen(k->kind) == n && strncasecmp(type, k->kind, n) == 0) ||
	       (strlen(plural) == n && strncasecmp(type, plural, n) == 0);
}

/* Whether some definition's root kind is called type (names_kind). */
static int definition_knows(live_ctx *lc, const char *type)
{
	wmap_registry *reg = lc->reg;
	wmap_error err = { 0 };
	int known = 0;

	if (!reg) {
		if (wmap_registry_new(&reg, &err) != 0 || wmap_registry_add_catalog(reg, &err) != 0) {
			wmap_registry_free(reg);
			return 0;
		}
	}
	for (size_t i = 0; i < wmap_registry_count(reg) && !known; i++) {
		const wmap_gvk *k = wmap_registry_get(reg, i)->components[0].kind;

		known = k && names_kind(type, k);
	}
	if (reg != lc->reg)
		wmap_registry_free(reg);
	return known;
}

/* With -o json|yaml, scripts get the no-definition case as data on stdout too (as upstream
 * and describe -f do). */
static void print_no_definition(live_ctx *lc, const char *key, const char *value)
{
	wmap_error ignored = { 0 };
	json_t *v;

	if (lc->o->output == CLI_OUTPUT_TABLE)
		return;
	v = json_pack("{s:s, s:s, s:s}", "error", "no_definition_for_type", key, value, "message",
		      "no Karta definition covers this workload type");
	if (v)
		render_value(stdout, v, lc->o->output, &ignored);
	json_decref(v);
}

int live_resolve_type(const wmap_api_resource **out, live_ctx *lc, const char *type)
{
	wmap_error err = { 0 };
	int rc = wmap_discovery_resolve(out, lc->disc, type, &err);

	if (rc == WMAP_ENOTFOUND && wmap_discovery_cached(lc->disc)) {
		wmap_error e2 = { 0 };

		/* The cache may predate a CRD: ask the server once more. */
		if (wmap_discovery_refresh(lc->disc, lc->client, &e2) != 0)
			return live_fail(&e2, CLI_EXIT_ERROR);
		rc = wmap_discovery_resolve(out, lc->disc, type, &err);
	}
	if (rc == WMAP_ENOTFOUND) {
		if (definition_knows(lc, type)) {
			fprintf(stderr, "error: %s; its CRD is not installed in this cluster\n",
				err.message);
			return CLI_EXIT_NOTFOUND;
		}
		print_no_definition(lc, "type", type);
		fprintf(stderr, "error: %s, and no Karta definition covers it\n", err.message);
		return CLI_EXIT_NODEF;
	}
	if (rc != 0)
		return live_fail(&err, CLI_EXIT_USAGE);
	return 0;
}

int live_definition_for(const wmap_definition **out, live_ctx *lc, const wmap_api_resource *r)
{
	int exact = 1;
	char label[512];

	*out = wmap_registry_find(lc->reg, r->group, r->version, r->kind, &exact);
	if (*out)
		return 0;
	wmap_resource_label(label, sizeof(label), r);
	{
		char gvk[600];

		/* as Kubernetes prints a GroupVersionKind, like describe -f */
		snprintf(gvk, sizeof(gvk), "%s%s%s, Kind=%s", r->group, r->group[0] ? "/" : "",
			 r->version, r->kind);
		print_no_definition(lc, "gvk", gvk);
	}
	fprintf(stderr, "error: no Karta definition covers %s (%s%s%s/%s)\n", label, r->kind,
		r->group[0] ? "." : "", r->group, r->version);
	return CLI_EXIT_NODEF;
}

void live_target_clear(live_target *t)
{
	wmap_workload_free(t->w);
	json_decref(t->object);
	memset(t, 0, sizeof(*t));
}

static int fetch(live_target *t, live_ctx *lc)
{
	wmap_error err = { 0 };
	char *path = wmap_resource_path(t->res, lc->ns, t->name);
	int rc;

	if (!path)
		return cli_error("out of memory");
	wmap_workload_free(t->w);
	json_decref(t->object);
	t->w = NULL;
	t->object = NULL;
	rc = wmap_kube_get(&t->object, lc->client, path, &err);
	free(path);
	if (rc != 0)
		return live_fail(&err, live_code(&err));
	if ((rc = wmap_workload_resolve(&t->w, lc->eng, t->object, t->def, &err)) != 0) {
		wmap_error_prefix(&err, "%s/%s", t->label, t->name);
		return live_fail(&err, cli_exit_code(rc));
	}
	return 0;
}

int live_target_load(live_target *t, live_ctx *lc, const char *type, const char *name)
{
	int rc;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	if ((rc = live_resolve_type(&t->res, lc, type)) != 0)
		return rc;
	wmap_resource_label(t->label, sizeof(t->label), t->res);
	if (!lc->reg && (rc = live_load_definitions(lc, t->res->group, t->res->kind)) != 0)
		return rc;
	if ((rc = live_definition_for(&t->def, lc, t->res)) != 0)
		return rc;
	return fetch(t, lc);
}

int live_target_reload(live_target *t, live_ctx *lc)
{
	return fetch(t, lc);
}

void live_age(char *buf, size_t len, const char *ts)
{
	struct tm tm = { 0 };
	long long s, m, h, d;

	if (!ts || !strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(buf, len, "<unknown>");
		return;
	}
	s = (long long)(time(NULL) - timegm(&tm));
	if (s < 0)
		s = 0;
	m = s / 60;
	h = m / 60;
	d = h / 24;
	/* k8s.io/apimachinery duration.HumanDuration */
	if (s < 120)
		snprintf(buf, len, "%llds", s);
	else if (m < 10)
		snprintf(buf, len, s % 60 ? "%lldm%llds" : "%lldm", m, s % 60);
	else if (h < 3)
		snprintf(buf, len, "%lldm", m);
	else if (h < 8)
		snprintf(buf, len, m % 60 ? "%lldh%lldm" : "%lldh", h, m % 60);
	else if (h < 48)
		snprintf(buf, len, "%lldh", h);
	else if (d < 8)
		snprintf(buf, len, h % 24 ? "%lldd%lldh" : "%lldd", d, h % 24);
	else if (d < 365 * 2)
		snprintf(buf, len, "%lldd", d);
	else
		snprintf(buf, len, "%lldy", d / 365);
}

int live_list_pages(live_ctx *lc, const char *path, long chunk, live_page_fn fn, void *arg,
		    wmap_error *err)
{
	char *cont = NULL;
	int rc = 0, pages = 0;

	do {
		json_t *page = NULL;
		const char *next;
		char *esc = cont ? wmap_kube_query_escape(cont) : NULL;
		const char *sep = strchr(path, '?') ? "&" : "?";
		size_t len = strlen(path) + (esc ? strlen(esc) : 0) + 64;
		char *url = malloc(len);

		if (url && chunk > 0)
			snprintf(url, len, "%s%slimit=%ld%s%s", path, sep, chunk,
				 esc ? "&continue=" : "", esc ? esc : "");
		else if (url)
			snprintf(url, len, "%s", path);
		free(esc);
		free(cont);
		cont = NULL;
		if (!url) {
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			break;
		}
		rc = wmap_kube_get(&page, lc->client, url, err);
		free(url);
		if (rc != 0)
			break;
		if ((rc = fn(arg, json_object_get(page, "items"), err)) != 0) {
			json_decref(page);
			break;
		}
		next = json_string_value(json_object_get(json_object_get(page, "metadata"),
							 "continue"));
		if (next && next[0] && chunk > 0)
			cont = strdup(next);
		json_decref(page);
		if (++pages > 100000) {
			rc = wmap_error_set(err, WMAP_ELIMIT, "more than 100000 pages listing %s", path);
			break;
		}
	} while (cont);
	free(cont);
	return rc;
}

static int append_items(void *arg, json_t *items, wmap_error *err)
{
	size_t i;
	json_t *it;

	json_array_foreach(items, i, it) {
		if (json_array_append((json_t *)arg, it) != 0)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	return 0;
}

int live_list(json_t *items, live_ctx *lc, const char *path, long chunk, wmap_error *err)
{
	return live_list_pages(lc, path, chunk, append_items, items, err);
}
