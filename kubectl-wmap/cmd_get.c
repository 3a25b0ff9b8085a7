/* kubectl-wmap get (TYPE [NAME] | --all-types): live workloads with the phase their
 * definition reads from them (reference 6.3). Lists are paged with limit/continue
 * (--chunk-size, default 500 as kubectl), label selectors go to the server, --phase filters
 * here. Rows are sorted newest first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wmap/apiversion.h"
#include "live.h"
#include "render.h"

static const cli_flag flags[] = {
	{ "selector", NULL, 'l', "SELECTOR", "label selector (k=v, k!=v, k in (a,b), k, !k)" },
	{ "phase", NULL, 0, "PHASE[,PHASE]", "only workloads in these phases (Running, Failed, ..., Undefined)" },
	{ "chunk-size", NULL, 0, "N", "list in pages of N (default 500; 0 = one request)" },
	{ "all-types", NULL, 0, NULL, "every workload type a definition covers (top-level objects only)" },
	{ NULL, NULL, 0, NULL, NULL },
};

typedef struct row_t {
	json_t *obj; /* borrowed from the list */
	const wmap_definition *def;
	unsigned statuses;
	char type[256];
	const char *created;
	/* -o wide */
	int64_t ready, desired, gpu;
	char components[256];
} row_t;

typedef struct get_ctx {
	live_ctx *lc;
	const cli_options *o;
	unsigned phase_mask; /* 0 = all; bit WMAP_STATUS_COUNT = Undefined */
	long chunk;
	const char *selector;
	json_t *items; /* every object listed (keeps rows' objects alive) */
	size_t n, cap;
	row_t *rows;
	json_t *listed; /* -o wide: "group/kind" of the resources listed */
} get_ctx;

static int parse_phases(unsigned *mask, const cli_options *o)
{
	*mask = 0;
	for (size_t i = 0; i < o->n_values; i++) {
		char buf[512], *save = NULL, *tok;

		if (strcmp(o->values[i].name, "phase") != 0)
			continue;
		snprintf(buf, sizeof(buf), "%s", o->values[i].value);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int s, found = 0;

			for (s = 0; s <= WMAP_STATUS_COUNT; s++)
				if (strcasecmp(tok, wmap_status_name((wmap_status)s)) == 0) {
					*mask |= 1u << s;
					found = 1;
				}
			if (!found)
				return cli_usage_error(o, &cli_cmd_get, "unknown phase \"%s\" (use Undefined, "
									"Resuming, Suspending, Suspended, Running, Failed, "
									"Completed, Initializing or Degraded)",
						       tok);
		}
	}
	return 0;
}

static int add_row(get_ctx *g, json_t *obj, const wmap_definition *def, const char *type)
{
	wmap_error err = { 0 };
	unsigned st = 0;
	row_t *r;

	if (wmap_status_evaluate(&st, g->lc->eng, def, obj, &err) != 0) {
		const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));

		live_warn(g->lc, "%s %s: status not evaluated: %s", type, name ? name : "?", err.message);
		st = 0;
	}
	if (g->phase_mask && !(g->phase_mask & (st ? st : 1u << WMAP_STATUS_COUNT)))
		return 0;
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		row_t *nr = realloc(g->rows, cap * sizeof(*nr));

		if (!nr)
			return cli_error("out of memory");
		g->rows = nr;
		g->cap = cap;
	}
	r = &g->rows[g->n++];
	memset(r, 0, sizeof(*r));
	r->obj = obj;
	r->def = def;
	r->statuses = st;
	snprintf(r->type, sizeof(r->type), "%s", type);
	r->created = json_string_value(json_object_get(json_object_get(obj, "metadata"), "creationTimestamp"));
	return 0;
}

/* An object is top level when its controller is not itself a covered workload (a JobSet
 * made by a JobSet-producing controller is not listed twice). */
static int top_level(get_ctx *g, const json_t *obj)
{
	return wmap_registry_find_controller(g->lc->reg, obj) == NULL;
}

static int list_type(get_ctx *g, const wmap_api_resource *r, const wmap_definition *def,
		     int all_types, const char *name)
{
	wmap_error err = { 0 };
	char type[256], *path, *url;
	size_t start = json_array_size(g->items), len;
	int rc;

	snprintf(type, sizeof(type), "%s%s%s", r->kind, r->group[0] ? "." : "", r->group);
	if (g->listed)
		json_object_set_new(g->listed, type, json_true());
	if (name) {
		json_t *obj = NULL;

		if ((path = wmap_resource_path(r, g->lc->ns, name)) == NULL)
			return cli_error("out of memory");
		rc = wmap_kube_get(&obj, g->lc->client, path, &err);
		free(path);
		if (rc != 0)
			return live_fail(&err, live_code(&err));
		json_array_append_new(g->items, obj);
		return add_row(g, obj, def, type);
	}
	path = wmap_resource_path(r, g->o->kube.all_namespaces ? NULL : g->lc->ns, NULL);
	if (!path)
		return cli_error("out of memory");
	len = strlen(path) + (g->selector ? strlen(g->selector) * 3 + 32 : 1);
	if ((url = malloc(len)) == NULL) {
		free(path);
		return cli_error("out of memory");
	}
	if (g->selector) {
		char *esc = wmap_kube_query_escape(g->selector);

		snprintf(url, len, "%s?labelSelector=%s", path, esc ? esc : "");
		free(esc);
	} else {
		snprintf(url, len, "%s", path);
	}
	free(path);
	rc = live_list(g->items, g->lc, url, g->chunk, &err);
	free(url);
	if (rc != 0)
		return live_fail(&err, live_code(&err) == CLI_EXIT_NOTFOUND ? CLI_EXIT_ERROR : live_code(&err));
	for (size_t i = start; i < json_array_size(g->items); i++) {
		json_t *obj = json_array_get(g->items, i);

		/* A list's items carry no apiVersion/kind; the definition (and -o wide, which
		 * counts listed pods) needs them. */
		if (!json_object_get(obj, "kind")) {
			char api[320];

			snprintf(api, sizeof(api), "%s%s%s", r->group, r->group[0] ? "/" : "", r->version);
			json_object_set_new(obj, "apiVersion", json_string(api));
			json_object_set_new(obj, "kind", json_string(r->kind));
		}
		if (all_types && !top_level(g, obj))
			continue;
		if ((rc = add_row(g, obj, def, type)) != 0)
			return rc;
	}
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const row_t *x = a, *y = b;
	const json_t *mx = json_object_get(x->obj, "metadata"), *my = json_object_get(y->obj, "metadata");
	int c = strcmp(y->created ? y->created : "", x->created ? x->created : "");

	if (c)
		return c; /* newest first; RFC 3339 UTC compares as text */
	c = strcmp(json_string_value(json_object_get(mx, "namespace")) ? json_string_value(json_object_get(mx, "namespace")) : "",
		   json_string_value(json_object_get(my, "namespace")) ? json_string_value(json_object_get(my, "namespace")) : "");
	if (c)
		return c;
	c = strcmp(json_string_value(json_object_get(mx, "name")) ? json_string_value(json_object_get(mx, "name")) : "",
		   json_string_value(json_object_get(my, "name")) ? json_string_value(json_object_get(my, "name")) : "");
	return c ? c : strcmp(x->type, y->type);
}

static void phases_text(char *buf, size_t len, unsigned st)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int s = 0; s < WMAP_STATUS_COUNT; s++)
		if ((st & (1u << s)) && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
						 wmap_status_name((wmap_status)s));
	if (!buf[0])
		snprintf(buf, len, "%s", wmap_status_name(WMAP_STATUS_UNDEFINED));
}

static json_t *view(const row_t *r)
{
	const json_t *md = json_object_get(r->obj, "metadata");
	json_t *ph = json_array();

	for (int s = 0; ph && s < WMAP_STATUS_COUNT; s++)
		if (r->statuses & (1u << s))
			json_array_append_new(ph, json_string(wmap_status_name((wmap_status)s)));
	if (ph && !r->statuses)
		json_array_append_new(ph, json_string(wmap_status_name(WMAP_STATUS_UNDEFINED)));
	return json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:s, s:s, s:o}", "name",
			 json_string_value(json_object_get(md, "name")), "namespace",
			 json_string_value(json_object_get(md, "namespace")), "kind",
			 json_string_value(json_object_get(r->obj, "kind")), "apiVersion",
			 json_string_value(json_object_get(r->obj, "apiVersion")), "createdAt", r->created,
			 "definition", r->def->name, "origin", wmap_origin_name(r->def->origin), "phases", ph);
}

/* ---- -o wide: PODS, GPU, COMPONENTS from one pod list ------------------------------- */

/* The wide columns need the pods of every row, and neither a request per workload nor one
 * per owner: the objects between a workload and its pods (a JobSet's Jobs, a
 * LeaderWorkerSet's StatefulSets) are listed once per kind, the pods once (page by page,
 * kept only as counts), and each pod's controller chain is followed through those lists. */

#define CHAIN_HOPS 6

static const char *uid_of(const json_t *obj)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
}

static const char *controller_uid(const json_t *obj)
{
	return json_string_value(json_object_get(wmap_object_controller(obj), "uid"));
}

/* Lists the component kinds of the rows' definitions that were not listed yet. */
static int list_intermediates(get_ctx *g)
{
	json_t *seen = json_object();
	int rc = 0;

	if (!seen)
		return cli_error("out of memory");
	for (size_t i = 0; i < g->n && rc == 0; i++) {
		const wmap_definition *def = g->rows[i].def;

		for (size_t c = 1; c < def->n_components && rc == 0; c++) {
			const wmap_gvk *k = def->components[c].kind;
			const wmap_api_resource *r;
			wmap_error err = { 0 };
			char key[300], *path;

			if (!k || strcmp(k->kind, "Pod") == 0)
				continue;
			snprintf(key, sizeof(key), "%s%s%s", k->kind, k->group[0] ? "." : "", k->group);
			if (json_object_get(seen, key) || json_object_get(g->listed, key))
				continue;
			json_object_set_new(seen, key, json_true());
			r = wmap_discovery_find_kind(g->lc->disc, k->group, k->version, k->kind);
			if (!r)
				continue; /* not served: no such objects, no pods through them */
			path = wmap_resource_path(r, g->o->kube.all_namespaces ? NULL : g->lc->ns, NULL);
			if (!path) {
				rc = cli_error("out of memory");
				break;
			}
			/* Only owner references and uids are needed. */
			if (live_list(g->items, g->lc, path, g->chunk, &err) != 0)
				live_warn(g->lc, "cannot list %s: %s; their pods are not counted", key,
					  err.message);
			free(path);
		}
	}
	json_decref(seen);
	return rc;
}

static void count_pod(get_ctx *g, const json_t *pod, const json_t *rows_by_uid,
		      const json_t *by_uid)
{
	const json_t *obj = pod;

	for (int hop = 0; hop < CHAIN_HOPS && obj; hop++) {
		/* The pod itself first: a Pod is a workload of its own. */
		const char *u = hop == 0 && uid_of(pod) && json_object_get(rows_by_uid, uid_of(pod))
					? uid_of(pod)
					: controller_uid(obj);
		const json_t *ri;

		if (!u)
			return;
		if ((ri = json_object_get(rows_by_uid, u)) != NULL) {
			row_t *r = &g->rows[json_integer_value(ri)];
			size_t i;
			json_t *c;

			json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
				if (json_is_string(json_object_get(c, "type")) &&
				    strcmp(json_string_value(json_object_get(c, "type")), "Ready") == 0 &&
				    json_is_string(json_object_get(c, "status")) &&
				    strcmp(json_string_value(json_object_get(c, "status")), "True") == 0)
					r->ready++;
			return;
		}
		obj = json_object_get(by_uid, u);
	}
}

/* Every pod of the namespace (or cluster), a page at a time, counted into the rows. */
static int count_pods(get_ctx *g, const json_t *rows_by_uid, const json_t *by_uid)
{
	char *cont = NULL;
	int rc = 0;

	do {
		wmap_error err = { 0 };
		char *esc = cont ? wmap_kube_query_escape(cont) : NULL, url[2400];
		json_t *page = NULL, *pod;
		const char *next;
		size_t i;

		char limit[48] = "";

		if (g->chunk > 0) /* --chunk-size 0: one request, as for the workloads */
			snprintf(limit, sizeof(limit), "?limit=%ld", g->chunk);
		if (g->o->kube.all_namespaces)
			snprintf(url, sizeof(url), "/api/v1/pods%s%s%s", limit,
				 esc ? (limit[0] ? "&continue=" : "?continue=") : "", esc ? esc : "");
		else
			snprintf(url, sizeof(url), "/api/v1/namespaces/%s/pods%s%s%s", g->lc->ns, limit,
				 esc ? (limit[0] ? "&continue=" : "?continue=") : "", esc ? esc : "");
		free(esc);
		free(cont);
		cont = NULL;
		if (wmap_kube_get(&page, g->lc->client, url, &err) != 0) {
			rc = live_fail(&err, CLI_EXIT_ERROR);
			break;
		}
		json_array_foreach(json_object_get(page, "items"), i, pod)
			count_pod(g, pod, rows_by_uid, by_uid);
		next = json_string_value(json_object_get(json_object_get(page, "metadata"), "continue"));
		if (next && next[0] && (cont = strdup(next)) == NULL)
			rc = cli_error("out of memory");
		json_decref(page);
	} while (cont && rc == 0);
	free(cont);
	return rc;
}

static void components_text(char *buf, size_t len, const wmap_workload *w)
{
	size_t used = 0, shown = 0, total = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < w->n_nodes; k++) {
		const wmap_node *n = &w->nodes[k];

		if (!wmap_component_has_pods(n->def))
			continue;
		total++;
		if (shown == 3 || used >= len)
			continue;
		shown++;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", n->def->name);
		if (n->def->instance_id_path && n->n_instances > 0 && used < len) {
			used += (size_t)snprintf(buf + used, len - used, "[");
			for (size_t i = 0; i < n->n_instances && i < 4 && used < len; i++)
				used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
							 n->instances[i].id ? n->instances[i].id : "");
			if (n->n_instances > 4 && used < len)
				used += (size_t)snprintf(buf + used, len - used, ",+%zu", n->n_instances - 4);
			if (used < len)
				used += (size_t)snprintf(buf + used, len - used, "]");
		}
	}
	if (total > shown && used < len)
		snprintf(buf + used, len - used, " +%zu more", total - shown);
	if (!buf[0])
		snprintf(buf, len, "<none>");
}

static int wide_columns(get_ctx *g)
{
	json_t *rows_by_uid = json_object(), *by_uid = json_object(), *it;
	size_t i;
	int rc;

	if (!rows_by_uid || !by_uid) {
		json_decref(rows_by_uid);
		json_decref(by_uid);
		return cli_error("out of memory");
	}
	for (i = 0; i < g->n; i++) {
		row_t *r = &g->rows[i];
		wmap_workload *w = NULL;
		wmap_error err = { 0 };

		if (uid_of(r->obj))
			json_object_set_new(rows_by_uid, uid_of(r->obj), json_integer((json_int_t)i));
		if (wmap_workload_resolve(&w, g->lc->eng, r->obj, r->def, &err) != 0) {
			const char *name = json_string_value(json_object_get(json_object_get(r->obj, "metadata"), "name"));

			live_warn(g->lc, "%s %s: not resolved: %s", r->type, name ? name : "?", err.message);
			snprintf(r->components, sizeof(r->components), "<error>");
			continue;
		}
		r->desired = w->desired;
		r->gpu = w->total.gpu;
		components_text(r->components, sizeof(r->components), w);
		wmap_workload_free(w);
	}
	if ((rc = list_intermediates(g)) == 0) {
		json_array_foreach(g->items, i, it)
			if (uid_of(it))
				json_object_set(by_uid, uid_of(it), it);
		if (json_object_get(g->listed, "Pod")) {
			/* --all-types listed the pods already (Pod is a covered type): count those. */
			json_array_foreach(g->items, i, it)
				if (strcmp(json_string_value(json_object_get(it, "kind")) ? json_string_value(json_object_get(it, "kind")) : "", "Pod") == 0 &&
				    strcmp(json_string_value(json_object_get(it, "apiVersion")) ? json_string_value(json_object_get(it, "apiVersion")) : "", "v1") == 0)
					count_pod(g, it, rows_by_uid, by_uid);
		} else {
			rc = count_pods(g, rows_by_uid, by_uid);
		}
	}
	json_decref(rows_by_uid);
	json_decref(by_uid);
	return rc;
}

static int print_rows(get_ctx *g, int with_type, int single)
{
	wmap_error err = { 0 };
	render_table *t = NULL;
	int rc = 0;

	if (g->n > 1)
		qsort(g->rows, g->n, sizeof(*g->rows), row_cmp);
	if (g->o->output != CLI_OUTPUT_TABLE) {
		json_t *out, *items = json_array();

		for (size_t i = 0; items && i < g->n; i++)
			json_array_append_new(items, view(&g->rows[i]));
		out = single && g->n == 1 ? json_incref(json_array_get(items, 0))
					  : json_pack("{s:O, s:I}", "items", items, "count", (json_int_t)g->n);
		json_decref(items);
		if (!out || render_value(stdout, out, g->o->output, &err) != 0)
			rc = live_fail(&err, CLI_EXIT_ERROR);
		json_decref(out);
		return rc;
	}
	if (g->n == 0) {
		if (g->o->kube.all_namespaces)
			fprintf(stderr, "No workloads found.\n");
		else
			fprintf(stderr, "No workloads found in namespace %s.\n", g->lc->ns);
		return 0;
	}
	{
		/* kubectl's order: the usual columns, then the wide ones. */
		const char *head[9] = { "NAME", "NAMESPACE", "TYPE", "PHASE", "AGE", "ORIGIN", "PODS",
					"GPU", "COMPONENTS" };
		const char *cells[9];
		size_t nc = 0;

		for (size_t c = 0; c < 9; c++)
			if ((c != 2 || with_type) && (c < 5 || g->o->wide))
				cells[nc++] = head[c];
		if (render_table_new(&t, nc, &err) != 0)
			return live_fail(&err, CLI_EXIT_ERROR);
		rc = render_table_add(t, cells, &err);
	}
	for (size_t i = 0; i < g->n && rc == 0; i++) {
		const row_t *r = &g->rows[i];
		const json_t *md = json_object_get(r->obj, "metadata");
		char ph[256], age[32], pods[64], gpu[32];
		const char *name = json_string_value(json_object_get(md, "name"));
		const char *ns = json_string_value(json_object_get(md, "namespace"));
		const char *all[9], *cells[9];
		size_t nc = 0;

		phases_text(ph, sizeof(ph), r->statuses);
		live_age(age, sizeof(age), r->created);
		snprintf(pods, sizeof(pods), "%lld/%lld", (long long)r->ready, (long long)r->desired);
		snprintf(gpu, sizeof(gpu), "%lld", (long long)r->gpu);
		all[0] = name;
		all[1] = ns ? ns : "<none>";
		all[2] = r->type;
		all[3] = ph;
		all[4] = age;
		all[5] = wmap_origin_name(r->def->origin);
		all[6] = pods;
		all[7] = gpu;
		all[8] = r->components;
		for (size_t c = 0; c < 9; c++)
			if ((c != 2 || with_type) && (c < 5 || g->o->wide))
				cells[nc++] = all[c];
		rc = render_table_add(t, cells, &err);
	}
	if (rc == 0)
		render_table_print(stdout, t);
	else
		rc = live_fail(&err, CLI_EXIT_ERROR);
	render_table_free(t);
	return rc;
}

static int all_types(get_ctx *g)
{
	int rc = 0, any = 0;

	for (size_t i = 0; i < wmap_registry_count(g->lc->reg) && rc == 0; i++) {
		const wmap_definition *def = wmap_registry_get(g->lc->reg, i);
		const wmap_gvk *k = def->components[0].kind;
		const wmap_api_resource *r;

		if (!k)
			continue;
		r = wmap_discovery_find_kind(g->lc->disc, k->group, k->version, k->kind);
		if (!r)
			continue; /* not served by this cluster */
		/* Another definition of the same kind (another version) covers it too: once. */
		if (wmap_registry_find(g->lc->reg, r->group, r->version, r->kind, &(int){ 0 }) != def)
			continue;
		any = 1;
		rc = list_type(g, r, def, 1, NULL);
	}
	(void)any;
	return rc;
}

static int run(const cli_options *o)
{
	char type[256], name[256];
	int has_name = 0, rc, every = cli_options_get(o, "all-types") != NULL;
	const char *chunk = cli_options_get(o, "chunk-size");
	get_ctx g;
	live_ctx lc;

	memset(&g, 0, sizeof(g));
	memset(&lc, 0, sizeof(lc));
	g.o = o;
	g.lc = &lc;
	g.chunk = 500;
	g.selector = cli_options_get(o, "selector");
	if (chunk) {
		char *end;

		g.chunk = strtol(chunk, &end, 10);
		if (end == chunk || *end || g.chunk < 0)
			return cli_usage_error(o, &cli_cmd_get, "--chunk-size needs a number >= 0");
	}
	if ((rc = parse_phases(&g.phase_mask, o)) != 0)
		return rc;
	if (every && o->n_args > 0)
		return cli_usage_error(o, &cli_cmd_get, "--all-types takes no TYPE");
	if (!every && (rc = live_split_target(type, sizeof(type), name, sizeof(name), &has_name, o,
					      &cli_cmd_get, 0)) != 0)
		return rc;
	if ((g.items = json_array()) == NULL || (o->wide && (g.listed = json_object()) == NULL)) {
		json_decref(g.items);
		return cli_error("out of memory");
	}
	if ((rc = live_open(&lc, o)) != 0)
		goto done;
	if (every) {
		if ((rc = live_load_definitions(&lc, NULL, NULL)) == 0 && (rc = all_types(&g)) == 0 &&
		    (!o->wide || (rc = wide_columns(&g)) == 0))
			rc = print_rows(&g, 1, 0);
	} else {
		const wmap_api_resource *r;
		const wmap_definition *def;

		if ((rc = live_resolve_type(&r, &lc, type)) == 0 &&
		    (rc = live_load_definitions(&lc, r->group, r->kind)) == 0 &&
		    (rc = live_definition_for(&def, &lc, r)) == 0 &&
		    (rc = list_type(&g, r, def, 0, has_name ? name : NULL)) == 0 &&
		    (!o->wide || (rc = wide_columns(&g)) == 0))
			rc = print_rows(&g, 0, has_name);
	}
done:
	free(g.rows);
	json_decref(g.items);
	json_decref(g.listed);
	live_close(&lc);
	return rc;
}

const cli_command cli_cmd_get = {
	.name = "get",
	.summary = "List live workloads of a type (or of every covered type) with their phase",
	.usage = "get (TYPE [NAME] | --all-types) [-n NS | -A] [-l SELECTOR] [--phase P[,P]] "
		 "[--chunk-size N] [-o table|wide|json|yaml]",
	.help =
		"Lists the workloads of TYPE (as kubectl spells types: jobset, jobsets, JobSet,\n"
		"jobsets.jobset.x-k8s.io, short names) with the phase their Karta definition reads\n"
		"from them, newest first. --all-types lists every type a definition covers that the\n"
		"cluster serves, top-level objects only, with a TYPE column.\n"
		"-o wide adds ORIGIN (where the definition comes from), PODS (ready/desired), GPU\n"
		"(of the desired pods) and COMPONENTS; it costs one list of the pods and one of\n"
		"each kind between workloads and pods (Jobs, StatefulSets), never one per workload.\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap get jobsets -A\n"
		"  kubectl wmap get rayclusters --phase Running,Degraded -l team=ml\n"
		"  kubectl wmap get --all-types -o json\n"
		"  kubectl wmap get --all-types -A -o wide\n"
		"\n"
		"Exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 no definition covers the type.\n",
	.flags = flags,
	.run = run,
	.wide_output = 1,
};
