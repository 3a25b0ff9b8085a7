/* kubectl-wmap: tables, the describe tree and the -o json|yaml model (see render.h).
 *
 * The tree follows upstream's `kli describe` (reference 6.4): a root without pods is not
 * shown (its children are the top level), a multi-instance component gets one row per
 * instance, and components that describe no pods and add nothing (no children, no
 * replicas, no resources, e.g. Deployment's replicaset) are left out. The JSON model has
 * the components the object describes: a pod-bearing component it has nothing for (no pod
 * description, no replicas) is left out. The table also leaves out components at 0
 * replicas, unless the whole workload is at 0; the JSON model keeps them. */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "wmap/apiversion.h"
#include "wmap/quantity.h"
#include "wmap/yaml.h"

struct render_table {
	size_t ncols;
	size_t nrows;
	size_t cap;   /* rows allocated */
	char **cells; /* nrows * ncols, NULL for an empty cell */
};

int render_table_new(render_table **out, size_t ncols, wmap_error *err)
{
	render_table *t;

	*out = NULL;
	if (ncols == 0 || ncols > RENDER_TABLE_MAX_COLS)
		return wmap_error_set(err, WMAP_EINVAL, "a table has 1 to %d columns",
				      RENDER_TABLE_MAX_COLS);
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	t->ncols = ncols;
	*out = t;
	return 0;
}

int render_table_add(render_table *t, const char *const *cells, wmap_error *err)
{
	size_t i;

	if (t->nrows == RENDER_TABLE_MAX_ROWS)
		return wmap_error_set(err, WMAP_ELIMIT, "more than %d rows to print",
				      RENDER_TABLE_MAX_ROWS);
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **c = realloc(t->cells, cap * t->ncols * sizeof(*c));

		if (!c)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		t->cells = c;
		t->cap = cap;
	}
	for (i = 0; i < t->ncols; i++) {
		char *copy = NULL;

		if (cells[i] && cells[i][0] && (copy = strdup(cells[i])) == NULL) {
			while (i-- > 0)
				free(t->cells[t->nrows * t->ncols + i]);
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
		t->cells[t->nrows * t->ncols + i] = copy;
	}
	t->nrows++;
	return 0;
}

size_t render_table_rows(const render_table *t)
{
	return t ? t->nrows : 0;
}

/* Display width of UTF-8 text: code points, not bytes (names may hold any letters). */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

void render_table_print(FILE *out, const render_table *t)
{
	size_t width[RENDER_TABLE_MAX_COLS] = { 0 };
	size_t r, c;

	if (!t)
		return;
	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++) {
			size_t w = text_width(t->cells[r * t->ncols + c]);

			if (w > width[c])
				width[c] = w;
		}
	for (r = 0; r < t->nrows; r++) {
		char *const *row = t->cells + r * t->ncols;
		size_t last = t->ncols;
		size_t pad = 0;

		/* Empty trailing cells print nothing, so no line ends in spaces. */
		while (last > 0 && !row[last - 1])
			last--;
		for (c = 0; c < last; c++) {
			fprintf(out, "%*s%s", (int)pad, "", row[c] ? row[c] : "");
			pad = width[c] + RENDER_COLUMN_GAP - text_width(row[c]);
		}
		fputc('\n', out);
	}
}

void render_table_free(render_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

void render_gvk_of(char *buf, size_t len, const char *api_version, const char *kind)
{
	char group[256] = "", version[256] = "", kind_copy[256] = "";
	wmap_api_version av;
	wmap_gvk gvk;

	wmap_api_version_split(&av, api_version);
	snprintf(group, sizeof(group), "%.*s", (int)av.group_len, av.group);
	snprintf(version, sizeof(version), "%s", av.version);
	snprintf(kind_copy, sizeof(kind_copy), "%s", kind ? kind : "");
	gvk.group = group;
	gvk.version = version;
	gvk.kind = kind_copy;
	wmap_gvk_format(buf, len, &gvk);
}

void render_kind_label(char *buf, size_t len, const wmap_gvk *k)
{
	if (!k || !k->kind)
		snprintf(buf, len, "-");
	else if (k->group && k->group[0])
		snprintf(buf, len, "%s.%s/%s", k->kind, k->group, k->version ? k->version : "");
	else
		snprintf(buf, len, "%s/%s", k->kind, k->version ? k->version : "");
}

int render_exact_version(const wmap_workload *w)
{
	const wmap_gvk *k = w->definition->n_components > 0 ? w->definition->components[0].kind
							    : NULL;
	wmap_api_version av;

	wmap_api_version_split(&av, w->api_version);

	if (!w->exact_version)
		return 0;
	/* The core may not know when the caller chose the definition; compare ourselves. */
	if (!k || !k->version || strcmp(k->version, av.version) != 0)
		return 0;
	return strlen(k->group ? k->group : "") == av.group_len &&
	       strncmp(k->group ? k->group : "", av.group, av.group_len) == 0;
}

/* ---- which components are shown ---- */

static int node_has_pods(const wmap_node *n)
{
	return wmap_component_has_pods(n->def);
}

static int multi_instance(const wmap_node *n)
{
	return n->def->instance_id_path != NULL;
}

static int resources_zero(const wmap_resources *r)
{
	return r->gpu == 0 && r->cpu_milli == 0 && r->memory == 0;
}

/* Upstream's rule: a pod-bearing component shows its own desired pods; a grouping one the
 * sum of its children's (its own scale counts groups, not pods). depth guards against a
 * malformed tree; the definition's validation already refuses ownership cycles. */
static int64_t shown_replicas(const wmap_workload *w, int i, int depth)
{
	const wmap_node *n = &w->nodes[i];
	int64_t sum = 0;
	size_t k;

	if (node_has_pods(n)) {
		for (k = 0; k < n->n_instances; k++)
			sum += n->instances[k].desired;
		return sum;
	}
	if (depth > 64)
		return 0;
	for (k = 0; k < n->n_children; k++)
		sum += shown_replicas(w, n->children[k], depth + 1);
	return sum;
}

/* A pod-bearing component is there when the object describes pods for it: a TFJob
 * without a Chief has no chief, and a KServe InferenceService without an explainer has no
 * explainer, although their definitions name one. A fragmented spec counts when one of
 * its fields has a value (the core also records where absent fields would go). */
static int instance_present(const wmap_instance *in)
{
	int f;

	if (!in->has_pod)
		return 0;
	if (in->pod.shape != WMAP_SPEC_FRAGMENTED)
		return in->pod.spec.value != NULL || in->pod.template_.value != NULL;
	for (f = 0; f < WMAP_FRAG_COUNT; f++)
		if (in->pod.frag[f].value)
			return 1;
	return 0;
}

static int present(const wmap_node *n)
{
	size_t k;

	for (k = 0; k < n->n_instances; k++)
		if (instance_present(&n->instances[k]))
			return 1;
	return 0;
}

/* hide_idle: leave out components at 0 replicas (the table does, unless the whole workload
 * is at 0, e.g. stopped; the JSON model keeps every component the object describes). */
static int shown(const wmap_workload *w, int i, int hide_idle, int depth)
{
	const wmap_node *n = &w->nodes[i];
	size_t k;

	if (shown_replicas(w, i, 0) > 0 || !resources_zero(&n->total))
		return 1;
	if (!hide_idle && node_has_pods(n) && present(n))
		return 1;
	if (depth > 64)
		return 0;
	for (k = 0; k < n->n_children; k++)
		if (shown(w, n->children[k], hide_idle, depth + 1))
			return 1;
	return 0;
}

/* The top-level components: the root when it describes pods, else its children. */
static size_t top_level(const wmap_workload *w, int hide_idle, int *out, size_t max)
{
	const wmap_node *root = &w->nodes[0];
	size_t n = 0, k;

	if (node_has_pods(root)) {
		out[n++] = 0;
		return n;
	}
	for (k = 0; k < root->n_children && n < max; k++)
		if (shown(w, root->children[k], hide_idle, 0))
			out[n++] = root->children[k];
	return n;
}

#define MAX_TOP 256
#define PREFIX_MAX 256

/* ---- the tree ---- */

typedef struct tree_ctx {
	const wmap_workload *w;
	int hide_idle;
	render_table *tree;
	render_table *res;
	wmap_error *err;
} tree_ctx;

static int tree_row(tree_ctx *t, const char *prefix, int last, const char *label,
		    int64_t replicas, int64_t gpu)
{
	char name[PREFIX_MAX + 256], rep[48], g[48] = "";
	const char *cells[3];

	snprintf(name, sizeof(name), "%s%s%s", prefix, last ? "`-- " : "|-- ", label);
	snprintf(rep, sizeof(rep), "replicas: %lld", (long long)replicas);
	if (gpu > 0)
		snprintf(g, sizeof(g), "gpu: %lld", (long long)gpu);
	cells[0] = name;
	cells[1] = rep;
	cells[2] = g;
	return render_table_add(t->tree, cells, t->err);
}

static int resource_row(tree_ctx *t, const char *label, int64_t replicas,
			const wmap_resources *r)
{
	char rep[32], gpu[32], cpu[32], mem[32];
	const char *cells[5] = { label, rep, gpu, cpu, mem };

	snprintf(rep, sizeof(rep), "%lld", (long long)replicas);
	snprintf(gpu, sizeof(gpu), "%lld", (long long)r->gpu);
	wmap_quantity_format_cpu(cpu, sizeof(cpu), r->cpu_milli);
	wmap_quantity_format_bytes(mem, sizeof(mem), r->memory, r->memory_family);
	return render_table_add(t->res, cells, t->err);
}

/* Text from the object goes to a terminal: control characters (escape sequences, line
 * breaks) become '?', so that an object cannot rewrite the screen or break the columns. */
static const char *clean(char *buf, size_t len, const char *s)
{
	size_t i;

	snprintf(buf, len, "%s", s ? s : "");
	for (i = 0; buf[i]; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	return buf;
}

static const char *instance_label(char *buf, size_t len, const wmap_instance *in)
{
	return in->id && in->id[0] ? clean(buf, len, in->id) : "<no id>";
}

static int tree_node(tree_ctx *t, int i, const char *prefix, int last, int depth)
{
	const wmap_workload *w = t->w;
	const wmap_node *n = &w->nodes[i];
	int multi = multi_instance(n) && node_has_pods(n);
	char child_prefix[PREFIX_MAX];
	int kids[MAX_TOP];
	size_t n_kids = 0, k, rows;
	int rc;

	if (depth > 64)
		return wmap_error_set(t->err, WMAP_ELIMIT, "components nest deeper than 64");
	if ((rc = tree_row(t, prefix, last, n->def->name, shown_replicas(w, i, 0),
			   n->total.gpu)) != 0)
		return rc;
	if (node_has_pods(n)) {
		if (!multi) {
			rc = resource_row(t, n->def->name, shown_replicas(w, i, 0), &n->own);
		} else if (n->n_instances == 0) {
			wmap_resources none = { 0 };

			rc = resource_row(t, n->def->name, 0, &none);
		}
		if (rc != 0)
			return rc;
	}
	/* Strings longer than the buffer only lose indentation, never memory safety. */
	snprintf(child_prefix, sizeof(child_prefix), "%s%s", prefix, last ? "    " : "|   ");
	for (k = 0; k < n->n_children && n_kids < MAX_TOP; k++)
		if (shown(w, n->children[k], t->hide_idle, 0))
			kids[n_kids++] = n->children[k];
	rows = 0;
	for (k = 0; multi && k < n->n_instances; k++)
		if (!t->hide_idle || n->instances[k].desired > 0)
			rows++;
	for (k = 0; multi && k < n->n_instances; k++) {
		const wmap_instance *in = &n->instances[k];
		char label[PREFIX_MAX + 256], id[256];

		if (t->hide_idle && in->desired == 0)
			continue;
		rc = tree_row(t, child_prefix, --rows == 0 && n_kids == 0,
			      instance_label(id, sizeof(id), in), in->desired, in->total.gpu);
		if (rc != 0)
			return rc;
		snprintf(label, sizeof(label), "%s/%s", n->def->name, id);
		if ((rc = resource_row(t, label, in->desired, &in->total)) != 0)
			return rc;
	}
	for (k = 0; k < n_kids; k++)
		if ((rc = tree_node(t, kids[k], child_prefix, k + 1 == n_kids, depth + 1)) != 0)
			return rc;
	return 0;
}

int render_describe(FILE *out, const wmap_workload *w, wmap_error *err)
{
	/* A workload at 0 replicas (stopped, suspended by scaling down) still shows its
	 * structure; otherwise the table shows what runs. */
	tree_ctx t = { w, w->desired > 0, NULL, NULL, err };
	char status[256], cpu[32], mem[32], rep[32], gpu[32], kind[256], name[256], ns[256];
	const char *header[5] = { "COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY" };
	const char *total[5] = { "TOTAL", rep, gpu, cpu, mem };
	const wmap_definition *def = w->definition;
	int top[MAX_TOP];
	size_t n_top, k;
	int rc;

	if ((rc = render_table_new(&t.tree, 3, err)) != 0 ||
	    (rc = render_table_new(&t.res, 5, err)) != 0 ||
	    (rc = render_table_add(t.res, header, err)) != 0)
		goto cleanup;
	n_top = w->n_nodes > 0 ? top_level(w, t.hide_idle, top, MAX_TOP) : 0;
	for (k = 0; k < n_top; k++)
		if ((rc = tree_node(&t, top[k], "", k + 1 == n_top, 0)) != 0)
			goto cleanup;
	snprintf(rep, sizeof(rep), "%lld", (long long)w->desired);
	snprintf(gpu, sizeof(gpu), "%lld", (long long)w->total.gpu);
	wmap_quantity_format_cpu(cpu, sizeof(cpu), w->total.cpu_milli);
	wmap_quantity_format_bytes(mem, sizeof(mem), w->total.memory, w->total.memory_family);
	if ((rc = render_table_add(t.res, total, err)) != 0)
		goto cleanup;

	fprintf(out, "%s/%s   namespace: %s   definition: %s (%s)\n",
		clean(kind, sizeof(kind), w->kind ? w->kind : "?"),
		clean(name, sizeof(name), w->name ? w->name : w->generate_name ? w->generate_name
									       : "<none>"),
		clean(ns, sizeof(ns), w->namespace_ ? w->namespace_ : "<none>"), def->name,
		wmap_origin_name(def->origin));
	fprintf(out, "(file mode: no pods; the phase is read from the object's .status)\n");
	if (!render_exact_version(w)) {
		char api[256];

		render_kind_label(kind, sizeof(kind), def->components[0].kind);
		fprintf(out, "(no definition for %s; read through the one for %s)\n",
			clean(api, sizeof(api), w->api_version ? w->api_version : "?"), kind);
	}
	wmap_workload_status_string(w, status, sizeof(status), ",");
	fprintf(out, "Phase: %s\n\n", status);
	if (render_table_rows(t.tree) == 0)
		fprintf(out, "(no components describe pods)\n");
	render_table_print(out, t.tree);
	fprintf(out, "\nResources:\n");
	render_table_print(out, t.res);
cleanup:
	render_table_free(t.tree);
	render_table_free(t.res);
	return rc;
}

/* ---- the JSON model ---- */

/* jansson's _new setters steal their value, and a NULL value makes them fail; so
 * every builder below can be nested and one check on the outer object is enough. */
json_t *render_resources_json(const wmap_resources *r)
{
	return json_pack("{s:I, s:I, s:I}", "gpus", (json_int_t)r->gpu, "cpuMillis",
			 (json_int_t)r->cpu_milli, "memoryBytes", (json_int_t)r->memory);
}

static const char *shape_name(wmap_spec_shape s)
{
	switch (s) {
	case WMAP_SPEC_TEMPLATE: return "podTemplateSpec";
	case WMAP_SPEC_PODSPEC: return "podSpec";
	case WMAP_SPEC_FRAGMENTED: return "fragmented";
	case WMAP_SPEC_NONE: break;
	}
	return "none";
}

/* Where an instance's pods are described: the template, else the pod spec. Fragmented
 * specs have no single place (their fields are spread out). */
static const char *pod_pointer(const wmap_instance *in)
{
	if (!in->has_pod)
		return NULL;
	if (in->pod.shape == WMAP_SPEC_TEMPLATE && in->pod.template_.pointer)
		return in->pod.template_.pointer;
	if (in->pod.shape == WMAP_SPEC_PODSPEC)
		return in->pod.spec.pointer;
	return NULL;
}

/* {desired, current, ready}: a file has no pods, so current and ready are null (absent),
 * where the live form counts them. */
static json_t *file_replicas_json(int64_t desired)
{
	return json_pack("{s:I, s:n, s:n}", "desired", (json_int_t)desired, "current", "ready");
}

int render_pod_location(json_t *c, const wmap_node *n, size_t instance)
{
	if (!wmap_component_has_pods(n->def))
		return 0;
	if (n->def->instance_id_path) {
		const char *p = instance < n->n_instances ? pod_pointer(&n->instances[instance]) : NULL;
		return p ? json_object_set_new(c, "pointer", json_string(p)) : 0;
	}
	const char *p = n->n_instances > 0 ? pod_pointer(&n->instances[0]) : NULL;
	return json_object_set_new(c, "podTemplate", json_pack("{s:s, s:s?}", "shape", shape_name(n->def->shape), "pointer", p));
}

static json_t *component_json(const wmap_workload *w, int i, int depth)
{
	const wmap_node *n = &w->nodes[i];
	json_t *c = json_object();
	json_t *kids = NULL;
	size_t k;

	if (!c || depth > 64)
		goto fail;
	if (json_object_set_new(c, "name", json_string(n->def->name)) != 0)
		goto fail;
	if (n->def->kind &&
	    json_object_set_new(c, "kind", json_pack("{s:s, s:s, s:s}", "group", n->def->kind->group, "version", n->def->kind->version, "kind", n->def->kind->kind)) != 0)
		goto fail;
	if (json_object_set_new(c, "replicas", file_replicas_json(shown_replicas(w, i, 0))) != 0 ||
	    json_object_set_new(c, "resources", render_resources_json(&n->total)) != 0 ||
	    json_object_set_new(c, "nodes", json_null()) != 0)
		goto fail;
	if (node_has_pods(n) && !multi_instance(n) &&
	    (render_pod_location(c, n, 0) != 0 || json_object_set_new(c, "pods", json_null()) != 0))
		goto fail;
	if (node_has_pods(n) && multi_instance(n)) {
		json_t *list = json_array();

		if (json_object_set_new(c, "instances", list) != 0)
			goto fail;
		for (k = 0; k < n->n_instances; k++) {
			const wmap_instance *in = &n->instances[k];
			json_t *io = json_pack("{s:s, s:o, s:o, s:n, s:n}", "id", in->id ? in->id : "",
					       "replicas", file_replicas_json(in->desired), "resources",
					       render_resources_json(&in->total), "nodes", "pods");

			if (json_array_append_new(list, io) != 0 || render_pod_location(io, n, k) != 0)
				goto fail;
		}
	}
	for (k = 0; k < n->n_children; k++) {
		if (!shown(w, n->children[k], 0, 0))
			continue;
		if (!kids && json_object_set_new(c, "children", kids = json_array()) != 0)
			goto fail;
		if (json_array_append_new(kids, component_json(w, n->children[k], depth + 1)) != 0)
			goto fail;
	}
	return c;
fail:
	json_decref(c);
	return NULL;
}

json_t *render_phases_json(const wmap_workload *w)
{
	json_t *list = json_array();
	int s;

	for (s = 0; list && s < WMAP_STATUS_COUNT; s++)
		if ((w->statuses & (1u << s)) &&
		    json_array_append_new(list, json_string(wmap_status_name((wmap_status)s))) != 0)
			goto fail;
	if (list && json_array_size(list) == 0 &&
	    json_array_append_new(list, json_string(wmap_status_name(WMAP_STATUS_UNDEFINED))) != 0)
		goto fail;
	return list;
fail:
	json_decref(list);
	return NULL;
}

int render_describe_model(json_t **out, const wmap_workload *w, wmap_error *err)
{
	const wmap_definition *def = w->definition;
	json_t *m, *list;
	int top[MAX_TOP];
	size_t n_top, k;

	*out = NULL;
	const json_t *md = json_object_get(w->object, "metadata");

	/* The live form's shape (live_describe.c), what a file cannot know set to null: no pods,
	 * so no current or ready counts, nodes, events or gang state. */
	m = json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:{s:s, s:s}, s:b, s:o, s:s?, s:o, s:o, s:n, s:n}",
		      "kind", w->kind, "apiVersion", w->api_version, "name",
		      w->name ? w->name : w->generate_name, "namespace", w->namespace_, "createdAt",
		      json_string_value(json_object_get(md, "creationTimestamp")), "definition",
		      "name", def->name, "origin", wmap_origin_name(def->origin), "fileMode", 1,
		      "phases", render_phases_json(w), "phase", w->phase, "replicas",
		      file_replicas_json(w->desired), "resources", render_resources_json(&w->total),
		      "events", "gang");
	if (!m)
		goto nomem;
	if (json_object_set_new(m, "components", list = json_array()) != 0)
		goto nomem;
	n_top = w->n_nodes > 0 ? top_level(w, 0, top, MAX_TOP) : 0;
	for (k = 0; k < n_top; k++)
		if (json_array_append_new(list, component_json(w, top[k], 0)) != 0)
			goto nomem;
	*out = m;
	return 0;
nomem:
	json_decref(m);
	return wmap_error_set(err, WMAP_ENOMEM, "out of memory building the output");
}

int render_value(FILE *out, const json_t *value, cli_output format, wmap_error *err)
{
	char *text = NULL;
	int rc;

	if (format == CLI_OUTPUT_YAML) {
		if ((rc = wmap_yaml_dump(&text, value, err)) != 0)
			return rc;
		fputs(text, out);
		free(text);
		return 0;
	}
	if (json_dumpf(value, out, JSON_INDENT(2)) != 0)
		return wmap_error_set(err, WMAP_EIO, "cannot write the output");
	fputc('\n', out);
	return 0;
}
