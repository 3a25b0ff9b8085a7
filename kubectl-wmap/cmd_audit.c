/* kubectl-wmap audit: evaluates WorkloadPolicies with validation actions against workloads
 * and lists the violations, with the core's one evaluation path (wmap_audit_object, as
 * /validate). Offline (-f PATH: a file, a directory walked recursively, or -) each object is
 * judged as wmap's mutating webhook would admit it; live, every workload of every covered
 * type the cluster serves is judged as stored. A CI gate: exit 1 when a Deny or Warn
 * policy is violated or an input could not be read. */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "live.h"
#include "render.h"
#include "wmap/apiversion.h"
#include "wmap/audit.h"
#include "wmap/yaml.h"

extern const cli_command cli_cmd_audit;

static const cli_flag flags[] = {
	{ "filename", "file", 'f', "PATH",
	  "workloads offline: a file, a directory (recursive: *.yaml, *.yml, *.json) or -" },
	{ "policy", NULL, 0, "FILE|DIR",
	  "WorkloadPolicy documents (repeatable; live: instead of the cluster's)" },
	{ "selector", NULL, 'l', "SELECTOR", "live: label selector of the workloads" },
	{ "kind", NULL, 0, "KIND[,KIND]", "only these kinds (Kind or Kind.group)" },
	{ "fail-on", NULL, 0, "ACTION", "deny, warn (default) or audit: the least action whose "
					"violation exits 1" },
	{ "as-written", NULL, 0, NULL, "offline: judge objects as written, without wmap's mutation" },
	{ "chunk-size", NULL, 0, "N", "live: list in pages of N (default 500; 0 = one request)" },
	CLI_FLAG_STRICT,
	{ NULL, NULL, 0, NULL, NULL },
};

#define MAX_DEPTH_DIRS 64 /* directory nesting the walk follows */

typedef struct audit_ctx {
	const cli_options *o;
	wmap_engine *eng;
	wmap_admission_config cfg;
	unsigned fail_mask; /* actions whose violation fails the run */
	int as_written;     /* offline: no mutation */
	/* The violations found, each kept as its compact JSON text (the -o json entry): a
	 * cluster-wide audit may find tens of thousands, and a jansson tree each would cost
	 * several KiB apiece. */
	char **viol;
	size_t n_viol, cap_viol;
	json_t *errors; /* strings */
	size_t checked, skipped;
	unsigned seen; /* actions of every violation */
	int oom;
	size_t warnings; /* offline: what definitions found nothing for (cli_verify_object) */
	struct {
		dev_t dev;
		ino_t ino;
	} walking[MAX_DEPTH_DIRS]; /* the folders being walked, outermost first */
} audit_ctx;

static void add_error(audit_ctx *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_error(audit_ctx *a, const char *fmt, ...)
{
	char msg[WMAP_ERROR_MAX + 512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	a->oom |= json_array_append_new(a->errors, json_string(msg)) != 0;
}

/* ["Deny", "Audit"]: a policy's actions as JSON. */
static json_t *actions_json(unsigned actions)
{
	static const char *const names[3] = { "Deny", "Warn", "Audit" };
	json_t *arr = json_array();
	for (unsigned k = 0; arr && k < 3; k++) {
		if ((actions & (1u << k)) && json_array_append_new(arr, json_string(names[k]))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static const char *jstr(const json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : dflt;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* Keeps the entry e (taken) as compact text; -1 when out of memory. */
static int keep_violation(audit_ctx *a, json_t *e)
{
	char *text = e ? json_dumps(e, JSON_COMPACT) : NULL;
	json_decref(e);
	if (!text)
		return -1;
	if (a->n_viol == a->cap_viol) {
		size_t cap = a->cap_viol ? a->cap_viol * 2 : 64;
		char **v = realloc(a->viol, cap * sizeof(*v));
		if (!v) {
			free(text);
			return -1;
		}
		a->viol = v;
		a->cap_viol = cap;
	}
	a->viol[a->n_viol++] = text;
	return 0;
}

/* Entry i back as a tree, a new reference (NULL when out of memory). */
static json_t *violation_at(const audit_ctx *a, size_t i)
{
	return json_loads(a->viol[i], 0, NULL);
}

/* The violations of one workload into the model. */
static void add_result(audit_ctx *a, const json_t *obj, const wmap_audit_result *r)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const json_t *name = json_object_get(meta, "name");
	if (!json_is_string(name))
		name = json_object_get(meta, "generateName");
	for (size_t i = 0; i < r->n; i++) {
		const wmap_violation *v = &r->violations[i];
		json_t *e = json_pack(
			"{s:{s:O?, s:O?, s:O?, s:O?}, s:o, s:o, s:s, s:o, s:s, s:s, s:o, s:s}",
			"workload", "apiVersion", json_object_get(obj, "apiVersion"), "kind",
			json_object_get(obj, "kind"), "namespace", json_object_get(meta, "namespace"),
			"name", json_is_string(name) ? name : NULL, "component",
			str_or_null(v->component), "instance", str_or_null(v->instance), "policy",
			v->policy, "actions", actions_json(v->actions), "field", v->field, "want",
			v->want, "have", str_or_null(v->have), "message", v->message);
		a->oom |= keep_violation(a, e) != 0;
		a->seen |= v->actions;
	}
}

/* 1 when --kind lets kind (Kind) and kg (Kind.group) through; no --kind: all. */
static int kind_selected(const audit_ctx *a, const char *kind, const char *kg)
{
	const char *want = cli_options_get(a->o, "kind");
	char buf[512], *save = NULL, *tok;
	if (!want)
		return 1;
	snprintf(buf, sizeof(buf), "%s", want);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcasecmp(tok, kg) || (kind && !strcasecmp(tok, kind)))
			return 1;
	}
	return 0;
}

static int kind_wanted(const audit_ctx *a, const json_t *obj)
{
	char kg[300];
	wmap_admission_kind(kg, sizeof(kg), obj);
	return kind_selected(a, json_string_value(json_object_get(obj, "kind")), kg);
}

/* Judges one workload object (owned by the caller); where names it in errors. */
static void check_object(audit_ctx *a, json_t *obj, const char *where, int offline)
{
	wmap_audit_result r = { 0 };
	wmap_error err = { 0 };
	json_t *admitted = NULL;
	int rc = 0;
	if (!kind_wanted(a, obj))
		return;
	if (offline && !a->as_written) {
		rc = wmap_audit_admitted(&admitted, a->eng, &a->cfg, obj, WMAP_POLICY_OP_CREATE, &err);
		if (rc == WMAP_ENODEF) {
			a->skipped++;
			return;
		}
	}
	if (rc == 0)
		rc = wmap_audit_object(&r, a->eng, &a->cfg, admitted ? admitted : obj,
				       WMAP_POLICY_OP_CREATE, &err);
	if (rc == WMAP_ENODEF || (rc == 0 && r.owned))
		a->skipped++;
	else if (rc == WMAP_ENOMEM)
		a->oom = 1;
	else if (rc)
		add_error(a, "%s: %s", where, err.message);
	else {
		a->checked++;
		add_result(a, obj, &r);
		if (offline)
			a->warnings += cli_verify_object(a->eng, obj, WMAP_VERIFY_NO_STATUS, where);
	}
	wmap_audit_result_free(&r);
	json_decref(admitted);
}

/* Every object of a parsed document: a List's items, or the object itself. */
static void check_document(audit_ctx *a, json_t *doc, const char *where)
{
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	json_t *items = json_object_get(doc, "items");
	size_t n = kind ? strlen(kind) : 0;
	if (json_is_null(doc))
		return;
	if (!json_is_object(doc) || !kind || !json_is_string(json_object_get(doc, "apiVersion"))) {
		add_error(a, "%s: not a Kubernetes object (no apiVersion and kind)", where);
		return;
	}
	if (n >= 4 && !strcmp(kind + n - 4, "List") && json_is_array(items)) {
		size_t i;
		json_t *it;
		json_array_foreach(items, i, it) {
			char sub[1024];
			snprintf(sub, sizeof(sub), "%s: .items[%zu]", where, i);
			if (json_is_null(it)) /* an empty document is nothing; a null item is an error */
				add_error(a, "%s: the item is null, not a Kubernetes object", sub);
			else
				check_document(a, it, sub);
		}
		return;
	}
	const char *ns = a->o->kube.namespace_;
	json_t *meta = json_object_get(doc, "metadata");
	/* As kubectl apply -n NS would create it. */
	if (ns && json_is_object(meta) && !json_object_get(meta, "namespace"))
		json_object_set_new(meta, "namespace", json_string(ns));
	check_object(a, doc, where, 1);
}

static const char *display(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

static void check_file(audit_ctx *a, const char *path)
{
	json_t *docs = NULL;
	wmap_error err = { 0 };
	wmap_yaml_opts yo = { 0 };
	size_t i;
	json_t *doc;
	yo.allow_aliases = 1;
	if (wmap_yaml_parse_file(&docs, path, &yo, &err) != 0) {
		/* The parser names file:line:column; the rest of the files are still checked. */
		if (err.code == WMAP_ENOMEM)
			a->oom = 1;
		else
			add_error(a, "%s", err.message);
		return;
	}
	json_array_foreach(docs, i, doc) {
		char where[1024];
		if (json_array_size(docs) > 1)
			snprintf(where, sizeof(where), "%s: document %zu", display(path), i + 1);
		else
			snprintf(where, sizeof(where), "%s", display(path));
		check_document(a, doc, where);
	}
	json_decref(docs);
}

static int has_ext(const char *name)
{
	size_t n = strlen(name);
	return (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml")) ||
	       (n > 5 && !strcmp(name + n - 5, ".json"));
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void walk(audit_ctx *a, const char *path, int depth);

/* A directory's entries in name order: YAML and JSON files, and subdirectories. */
static void walk_dir(audit_ctx *a, const char *path, int depth)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	if (!dir) {
		add_error(a, "%s: %s", path, strerror(errno));
		return;
	}
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue; /* ., .. and hidden entries (.git) */
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*nn));
			if (!nn) {
				a->oom = 1;
				break;
			}
			names = nn;
		}
		size_t l = strlen(path) + strlen(de->d_name) + 2;
		if (!(names[n] = malloc(l))) {
			a->oom = 1;
			break;
		}
		snprintf(names[n++], l, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/",
			 de->d_name);
	}
	closedir(dir);
	if (names)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (!a->oom)
			walk(a, names[i], depth + 1);
		free(names[i]);
	}
	free(names);
}

static void walk(audit_ctx *a, const char *path, int depth)
{
	struct stat st;
	if (strcmp(path, "-") == 0) {
		check_file(a, path);
		return;
	}
	if (stat(path, &st) != 0) {
		add_error(a, "%s: %s", path, strerror(errno));
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		/* A symbolic link back to a folder being walked would read it again and again. */
		for (int i = 0; i < depth && i < MAX_DEPTH_DIRS; i++) {
			if (a->walking[i].dev == st.st_dev && a->walking[i].ino == st.st_ino) {
				add_error(a, "%s: a link to a folder that contains it; not read again",
					  path);
				return;
			}
		}
		if (depth >= MAX_DEPTH_DIRS) {
			add_error(a, "%s: directories nested deeper than %d levels are not read", path,
				  MAX_DEPTH_DIRS);
			return;
		}
		a->walking[depth].dev = st.st_dev;
		a->walking[depth].ino = st.st_ino;
		walk_dir(a, path, depth);
	} else if (depth == 0 || (S_ISREG(st.st_mode) && has_ext(path))) {
		check_file(a, path); /* a file named on the command line, whatever its name */
	}
}

/* ---- live ------------------------------------------------------------------------- */

/* The cluster's WorkloadPolicy objects as a policy set; an invalid one is skipped with a
 * warning, as the webhook skips it. */
static int cluster_policies(wmap_policy_set **out, live_ctx *lc)
{
	json_t *items = json_array(), *docs = json_array();
	wmap_error err = { 0 };
	size_t i;
	json_t *it;
	int rc = 0;
	if (!items || !docs) {
		rc = cli_error("out of memory");
		goto done;
	}
	if (live_list(items, lc, "/apis/wmap.io/v1alpha1/workloadpolicies", 500, &err) != 0) {
		wmap_error_prefix(&err, "reading the cluster's WorkloadPolicies (or give --policy "
					"FILE)");
		rc = live_fail(&err, CLI_EXIT_ERROR);
		goto done;
	}
	json_array_foreach(items, i, it) {
		const char *name = json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));
		json_t *doc = json_pack("{s:s, s:s, s:{s:s?}, s:O?}", "apiVersion", "wmap.io/v1alpha1",
					"kind", "WorkloadPolicy", "metadata", "name", name, "spec",
					json_object_get(it, "spec"));
		json_t *one = json_array();
		wmap_policy_set *set = NULL;
		char label[600];
		snprintf(label, sizeof(label), "workloadpolicies.wmap.io/%s", name ? name : "?");
		if (!doc || !one || json_array_append(one, doc)) {
			json_decref(doc);
			json_decref(one);
			rc = cli_error("out of memory");
			goto done;
		}
		if (wmap_policy_set_parse(&set, one, label, NULL, &err) == 0)
			json_array_append(docs, doc);
		else
			live_warn(lc, "%s is invalid and not applied: %s", label, err.message);
		wmap_policy_set_free(set);
		json_decref(one);
		json_decref(doc);
	}
	if (wmap_policy_set_parse(out, docs, "workloadpolicies.wmap.io", NULL, &err) != 0)
		rc = cli_fail(&err);
done:
	json_decref(items);
	json_decref(docs);
	return rc;
}

/* An object whose controller is itself a covered workload is judged through its owner. */
static int top_level(const live_ctx *lc, const json_t *obj)
{
	return wmap_registry_find_controller(lc->reg, obj) == NULL;
}

typedef struct page_ctx {
	audit_ctx *a;
	live_ctx *lc;
	const wmap_api_resource *r;
} page_ctx;

/* Judges the objects of one page of a list of pc->r. */
static int audit_page(void *arg, json_t *items, wmap_error *err)
{
	page_ctx *pc = arg;
	const wmap_api_resource *r = pc->r;
	char api[320];
	size_t i;
	json_t *obj;
	/* A list's items carry no apiVersion/kind. */
	snprintf(api, sizeof(api), "%s%s%s", r->group, r->group[0] ? "/" : "", r->version);
	json_array_foreach(items, i, obj) {
		char where[700];
		const json_t *meta = json_object_get(obj, "metadata");
		if (json_object_set_new(obj, "apiVersion", json_string(api)) ||
		    json_object_set_new(obj, "kind", json_string(r->kind)))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		if (!top_level(pc->lc, obj))
			continue;
		snprintf(where, sizeof(where), "%s/%s/%s", r->kind, jstr(meta, "namespace", ""),
			 jstr(meta, "name", ""));
		check_object(pc->a, obj, where, 0);
	}
	return pc->a->oom ? wmap_error_set(err, WMAP_ENOMEM, "out of memory") : 0;
}

/* Lists one resource (the namespace in force or -A, -l) a page at a time and judges each
 * object, so memory holds one page of workloads, not all of them. */
static int audit_resource(audit_ctx *a, live_ctx *lc, const wmap_api_resource *r, long chunk)
{
	const char *sel = cli_options_get(a->o, "selector");
	char *path = wmap_resource_path(r, a->o->kube.all_namespaces ? NULL : lc->ns, NULL);
	char *esc = sel ? wmap_kube_query_escape(sel) : NULL;
	size_t len = (path ? strlen(path) : 0) + (esc ? strlen(esc) : 0) + 32;
	char *url = malloc(len);
	page_ctx pc = { a, lc, r };
	wmap_error err = { 0 };
	int rc = 0;
	if (!path || !url || (sel && !esc)) {
		rc = cli_error("out of memory");
		goto done;
	}
	snprintf(url, len, "%s%s%s", path, esc ? "?labelSelector=" : "", esc ? esc : "");
	if (live_list_pages(lc, url, chunk, audit_page, &pc, &err) != 0)
		rc = live_fail(&err, CLI_EXIT_ERROR);
done:
	free(path);
	free(esc);
	free(url);
	return rc;
}

static int audit_live(audit_ctx *a, live_ctx *lc, long chunk)
{
	int rc = 0;
	for (size_t i = 0; i < wmap_registry_count(lc->reg) && rc == 0 && !a->oom; i++) {
		const wmap_definition *def = wmap_registry_get(lc->reg, i);
		const wmap_gvk *k = def->components[0].kind;
		const wmap_api_resource *r;
		if (!k || !(r = wmap_discovery_find_kind(lc->disc, k->group, k->version, k->kind)))
			continue; /* not served by this cluster */
		/* Another definition of the same kind (another version) covers it too: once. */
		if (wmap_registry_find(lc->reg, r->group, r->version, r->kind, &(int){ 0 }) != def)
			continue;
		char kg[300];
		snprintf(kg, sizeof(kg), "%s%s%s", r->kind, r->group[0] ? "." : "", r->group);
		int want = kind_selected(a, r->kind, kg);
		if (want)
			rc = audit_resource(a, lc, r, chunk);
	}
	return rc;
}

/* ---- output ----------------------------------------------------------------------- */

static int print_table(const audit_ctx *a)
{
	static const char *const head[7] = { "WORKLOAD", "COMPONENT", "POLICY", "ACTIONS",
					     "FIELD", "WANT", "HAVE" };
	render_table *t = NULL;
	wmap_error err = { 0 };
	int rc = render_table_new(&t, 7, &err);
	if (rc == 0)
		rc = render_table_add(t, head, &err);
	for (size_t i = 0; i < a->n_viol && rc == 0; i++) {
		json_t *v = violation_at(a, i);
		if (!v) {
			rc = wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
			break;
		}
		const json_t *w = json_object_get(v, "workload");
		char wl[700], comp[300], acts[32];
		const char *ns = jstr(w, "namespace", NULL);
		snprintf(wl, sizeof(wl), "%s/%s%s%s", jstr(w, "kind", "?"), ns ? ns : "", ns ? "/" : "",
			 jstr(w, "name", "<none>"));
		snprintf(comp, sizeof(comp), "%s%s%s", jstr(v, "component", "-"),
			 json_is_string(json_object_get(v, "instance")) ? "/" : "",
			 jstr(v, "instance", ""));
		size_t n = 0, k;
		json_t *x;
		acts[0] = '\0';
		json_array_foreach(json_object_get(v, "actions"), k, x)
			n += (size_t)snprintf(acts + n, n < sizeof(acts) ? sizeof(acts) - n : 0, "%s%s",
					      k ? "," : "", json_string_value(x));
		const char *cells[7] = { wl, comp,
					 jstr(v, "policy", ""), acts,
					 jstr(v, "field", ""), jstr(v, "want", ""),
					 jstr(v, "have", "<none>") };
		rc = render_table_add(t, cells, &err);
		json_decref(v);
	}
	if (rc == 0 && a->n_viol > 0)
		render_table_print(stdout, t);
	render_table_free(t);
	return rc ? cli_fail(&err) : 0;
}

/* Writes s, each line after the first indented by pad spaces. */
static void put_indented(const char *s, int pad)
{
	for (; *s; s++) {
		fputc(*s, stdout);
		if (*s == '\n')
			fprintf(stdout, "%*s", pad, "");
	}
}

/* One entry of -o json|yaml: in JSON indented under "violations" (sep before it), in YAML
 * as an item of a top-level sequence, which is how the sequence under violations: reads. */
static int print_entry(const json_t *v, int yaml, const char *sep, wmap_error *err)
{
	json_t *one = yaml ? json_pack("[O]", v) : NULL;
	char *text = NULL;
	int rc = 0;
	if (yaml && (!one || (rc = wmap_yaml_dump(&text, one, err)) != 0)) {
		json_decref(one);
		return rc ? rc : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	if (!yaml && !(text = json_dumps(v, JSON_INDENT(2))))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if (yaml) {
		fputs(text, stdout);
	} else {
		fputs(sep, stdout);
		put_indented(text, 4);
	}
	free(text);
	json_decref(one);
	return 0;
}

/* -o json|yaml: the document {violations, checked, skipped, errors}, written an entry at
 * a time (the same text as rendering it whole, without holding it whole). */
static int print_document(const audit_ctx *a, wmap_error *err)
{
	int yaml = a->o->output == CLI_OUTPUT_YAML, rc = 0;
	json_t *rest = json_pack("{s:I, s:I, s:O}", "checked", (json_int_t)a->checked, "skipped",
				 (json_int_t)a->skipped, "errors", a->errors);
	char *text = NULL;
	if (!rest)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	fputs(yaml ? "violations:" : "{\n  \"violations\": [", stdout);
	if (a->n_viol == 0)
		fputs(yaml ? " []\n" : "],\n", stdout);
	else if (yaml)
		fputc('\n', stdout);
	for (size_t i = 0; i < a->n_viol && rc == 0; i++) {
		json_t *v = violation_at(a, i);
		rc = v ? print_entry(v, yaml, i ? ",\n    " : "\n    ", err)
		       : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		json_decref(v);
	}
	if (rc == 0 && !yaml && a->n_viol > 0)
		fputs("\n  ],\n", stdout);
	if (rc == 0 && yaml)
		rc = wmap_yaml_dump(&text, rest, err);
	else if (rc == 0 && !(text = json_dumps(rest, JSON_INDENT(2))))
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if (rc == 0) {
		/* JSON: the members after violations, without the opening brace */
		fputs(yaml ? text : text + 2, stdout);
		if (!yaml)
			fputc('\n', stdout);
	}
	free(text);
	json_decref(rest);
	return rc;
}

static int print_result(const audit_ctx *a)
{
	int rc = 0;
	if (a->o->output == CLI_OUTPUT_TABLE) {
		rc = print_table(a);
	} else {
		wmap_error err = { 0 };
		if (print_document(a, &err) != 0)
			rc = cli_fail(&err);
	}
	fflush(stdout);
	size_t i;
	json_t *e;
	json_array_foreach(a->errors, i, e)
		cli_print_line(stderr, "error: ", json_string_value(e), strlen(json_string_value(e)));
	if (a->o->output == CLI_OUTPUT_TABLE)
		fprintf(stderr, "%zu violation%s in %zu workload%s checked; %zu skipped (no definition "
				"or owned by a controller); %zu error%s\n",
			a->n_viol, a->n_viol == 1 ? "" : "s",
			a->checked, a->checked == 1 ? "" : "s", a->skipped,
			json_array_size(a->errors), json_array_size(a->errors) == 1 ? "" : "s");
	return rc;
}

/* ---- the command ------------------------------------------------------------------ */

static int parse_flags(audit_ctx *a, long *chunk)
{
	const cli_options *o = a->o;
	const char *fail = cli_options_get(o, "fail-on");
	const char *cs = cli_options_get(o, "chunk-size");
	const char *file = cli_options_get(o, "filename");
	if (o->n_args > 0)
		return cli_usage_error(o, &cli_cmd_audit, "audit takes no argument (got \"%s\")",
				       o->args[0]);
	if (!fail || !strcmp(fail, "warn"))
		a->fail_mask = WMAP_ACTION_DENY | WMAP_ACTION_WARN;
	else if (!strcmp(fail, "deny"))
		a->fail_mask = WMAP_ACTION_DENY;
	else if (!strcmp(fail, "audit"))
		a->fail_mask = WMAP_ACTION_DENY | WMAP_ACTION_WARN | WMAP_ACTION_AUDIT;
	else
		return cli_usage_error(o, &cli_cmd_audit,
				       "--fail-on must be deny, warn or audit (got \"%s\")", fail);
	*chunk = 500;
	if (cs) {
		char *end;
		*chunk = strtol(cs, &end, 10);
		if (end == cs || *end || *chunk < 0)
			return cli_usage_error(o, &cli_cmd_audit, "--chunk-size needs a number >= 0");
	}
	a->as_written = cli_options_get(o, "as-written") != NULL;
	if (file && !*file)
		return cli_usage_error(o, &cli_cmd_audit, "-f needs a PATH");
	if (file && !cli_options_get(o, "policy"))
		return cli_usage_error(o, &cli_cmd_audit,
				       "the offline audit (-f) needs --policy FILE|DIR");
	if (file && (cli_options_get(o, "selector") || o->kube.all_namespaces || cs))
		return cli_usage_error(o, &cli_cmd_audit,
				       "-l, -A and --chunk-size are for the live audit (without -f)");
	if (!file && a->as_written)
		return cli_usage_error(o, &cli_cmd_audit, "--as-written is for the offline audit (-f)");
	return 0;
}

/* Every -f PATH, in command-line order. */
static void audit_files(audit_ctx *a)
{
	for (size_t i = 0; i < a->o->n_values && !a->oom; i++) {
		if (!strcmp(a->o->values[i].name, "filename"))
			walk(a, a->o->values[i].value, 0);
	}
}

static int run(const cli_options *o)
{
	audit_ctx a = { 0 };
	live_ctx lc = { 0 };
	wmap_registry *reg = NULL;
	wmap_policy_set *set = NULL;
	wmap_error err = { 0 };
	int live = !cli_options_get(o, "filename"), rc, opened = 0;
	long chunk = 0;
	a.o = o;
	if ((rc = parse_flags(&a, &chunk)) != 0)
		return rc;
	a.errors = json_array();
	if (!a.errors) {
		rc = cli_error("out of memory");
		goto done;
	}
	if ((rc = cli_policy_load(&set, o, &err)) != 0) {
		rc = cli_fail(&err);
		goto done;
	}
	if (live) {
		if ((rc = live_open(&lc, o)) != 0)
			goto done;
		opened = 1;
		if ((rc = live_load_definitions(&lc, NULL, NULL)) != 0 ||
		    (!set && (rc = cluster_policies(&set, &lc)) != 0))
			goto done;
		a.eng = lc.eng;
	} else {
		if ((rc = cli_registry_load(&reg, o, &err)) != 0 ||
		    (rc = wmap_engine_new(&a.eng, reg, &err)) != 0) {
			rc = cli_fail(&err);
			goto done;
		}
	}
	a.cfg.policies = set;
	if (live)
		rc = audit_live(&a, &lc, chunk);
	else
		audit_files(&a);
	if (rc == 0 && a.oom)
		rc = cli_error("out of memory");
	if (rc == 0 && (rc = print_result(&a)) == 0 &&
	    ((a.seen & a.fail_mask) || json_array_size(a.errors) > 0))
		rc = CLI_EXIT_ERROR;
	if (rc == 0 && a.warnings > 0 && cli_options_get(o, "strict"))
		rc = CLI_EXIT_WARNINGS;
done:
	if (!live)
		wmap_engine_free(a.eng);
	wmap_registry_free(reg);
	if (opened)
		live_close(&lc);
	wmap_policy_set_free(set);
	for (size_t i = 0; i < a.n_viol; i++)
		free(a.viol[i]);
	free(a.viol);
	json_decref(a.errors);
	return rc;
}

const cli_command cli_cmd_audit = {
	.name = "audit",
	.summary = "Check workloads against WorkloadPolicies and list the violations",
	.usage = "audit [-f PATH --policy FILE|DIR | [-n NS | -A] [-l SELECTOR] [--policy FILE|DIR]] "
		 "[--kind KIND[,KIND]] [--fail-on deny|warn|audit] [-o table|json|yaml]",
	.help =
		"Evaluates the WorkloadPolicies that have validationActions (Deny, Warn, Audit)\n"
		"against workloads, with the webhook's own check, and lists every violation:\n"
		"the workload, the component (and instance), the policy and its actions, the\n"
		"field, the value the policy wants and the value found (<none>: absent). A\n"
		"limit (field limits.workload[NAME] or limits.pod[NAME]) shows the limit and\n"
		"the amount asked for; a workload total has no component (-).\n"
		"\n"
		"Live (no -f): every workload of every type a definition covers that the cluster\n"
		"serves, in the namespace in force (-n, or -A for all), top-level objects only,\n"
		"judged as stored; the policies are the cluster's workloadpolicies.wmap.io\n"
		"objects, or those of --policy.\n"
		"--policy FILE|DIR may be repeated; a folder is read recursively (*.yaml, *.yml,\n"
		"*.json, in name order); the policies merge in command-line order, and two\n"
		"policies of one name are an error that names both places.\n"
		"Offline (-f PATH --policy FILE): PATH is a file (every document; kind: List\n"
		"items), a directory walked recursively (*.yaml, *.yml, *.json; hidden entries\n"
		"skipped) or - for stdin; -f may be repeated. Each object is judged as wmap's\n"
		"mutating webhook would admit it (a default-mode policy that sets a field is not\n"
		"violated by an object that lacks it; require-mode policies write nothing, so\n"
		"they judge what the file says), or as written with --as-written; -n NS\n"
		"gives objects without a namespace that one, as kubectl apply -n would.\n"
		"Objects of kinds no definition covers, and objects a controller owns, are\n"
		"counted as skipped; a file that does not parse is reported with\n"
		"file:line:column and the other files are still checked.\n"
		"\n"
		"The table goes to stdout and a summary line to stderr. -o json|yaml prints\n"
		"{violations: [{workload: {apiVersion, kind, namespace, name}, component,\n"
		"instance, policy, actions, field, want, have, message}], checked, skipped,\n"
		"errors}.\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap audit -A\n"
		"  kubectl wmap audit -n team-a --kind JobSet -o json\n"
		"  kubectl wmap audit -f manifests/ --policy policies.yaml\n"
		"  kubectl kustomize overlays/prod | kubectl wmap audit -f - --policy p.yaml\n"
		"\n"
		"Exit codes: 0 no Deny or Warn policy violated (Audit-only violations are listed),\n"
		"1 a Deny or Warn policy is violated (with --fail-on audit: any; --fail-on deny:\n"
		"Deny only), an input could not be read or checked, or a cluster error;\n"
		"2 usage; 8 with --strict: offline, a definition found nothing in an object\n"
		"(the warnings describe -f gives), and nothing else failed.\n",
	.flags = flags,
	.run = run,
};
