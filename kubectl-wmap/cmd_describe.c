/* kubectl-wmap describe: one workload resolved through its Karta definition.
 *
 * File mode (-f FILE|-) reads one object (or each item of a List or of several
 * documents), finds its definition (the embedded catalog plus
 * --definitions), resolves it and prints the tree, the phase read from the object's own
 * .status and the resources. The live form (TYPE/NAME) needs the cluster client, which
 * comes with the live-cluster commands; until then it says so instead of pretending. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "live.h"
#include "render.h"
#include "wmap/workload.h"
#include "wmap/yaml.h"
#include "wmap/file.h"

static const cli_flag flags[] = {
	{ "filename", "file", 'f', "FILE", "the object to describe, YAML or JSON (- reads stdin)" },
	{ "pod-limit", NULL, 0, "N", "live: show at most N pods per component, unhealthy first (0 = all)" },
	{ "component-limit", NULL, 0, "N", "live: show at most N components per level, unhealthy first (0 = all)" },
	{ "events", NULL, 0, "N", "live: show the N newest Warning events per component and of the workload (default 3, 0 = none, no events request)" },
	{ "watch", NULL, 'w', NULL, "live: redraw the view when the workload or its pods change (Ctrl-C ends)" },
	{ "until-done", NULL, 0, NULL, "live, with -w: end when the workload is Completed (exit 0) or Failed (exit 1)" },
	CLI_FLAG_STRICT,
	{ NULL, NULL, 0, NULL, NULL },
};

/* Names stdin the way messages can be read ("-" on its own is easy to miss). */
static const char *display_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "a list";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: break;
	}
	return "null";
}

/* Reads the objects of a file: one object, several documents, or a `kind: List` (what
 * `kubectl get -o yaml` prints for several), its items in order. Workload manifests may
 * use YAML anchors (Helm and kustomize output does), so aliases are expanded, under the
 * reader's node cap. *list_out is 1 when the file held a List or several documents. */
static int read_objects(json_t **out, int *list_out, const char *path, wmap_error *err)
{
	wmap_yaml_opts yo = { 0 };
	const char *name = display_name(path);
	char *data = NULL;
	size_t len = 0, n, i;
	json_t *docs = NULL, *objects = NULL, *d;
	int rc;

	*out = NULL;
	*list_out = 0;
	yo.allow_aliases = 1;
	if ((rc = wmap_file_read(&data, &len, path, WMAP_YAML_MAX_BYTES, err)) != 0)
		goto cleanup;
	if ((rc = wmap_yaml_parse(&docs, data, len, name, &yo, err)) != 0)
		goto cleanup;
	n = json_array_size(docs);
	if (n == 0) {
		rc = wmap_error_set(err, WMAP_EINVAL, "%s: no object to describe (the file is empty)",
				    name);
		goto cleanup;
	}
	if (!(objects = json_array())) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	json_array_foreach(docs, i, d) {
		const char *kind = json_string_value(json_object_get(d, "kind"));
		const json_t *items = json_object_get(d, "items");
		size_t kl = kind ? strlen(kind) : 0;

		if (!json_is_object(d)) {
			char doc[48] = "";

			if (n > 1)
				snprintf(doc, sizeof(doc), ": document %zu", i + 1);
			rc = wmap_error_set(err, WMAP_EINVAL, "%s%s: the document is %s, not a Kubernetes object",
					    name, doc, json_type_name(d));
			goto cleanup;
		}
		if (kl >= 4 && strcmp(kind + kl - 4, "List") == 0 && json_is_array(items)) {
			json_array_extend(objects, (json_t *)items);
			*list_out = 1;
		} else {
			json_array_append(objects, d);
		}
	}
	*list_out |= n > 1;
	if (json_array_size(objects) == 0) {
		rc = wmap_error_set(err, WMAP_EINVAL, "%s: the List has no items", name);
		goto cleanup;
	}
	*out = objects;
	objects = NULL;
cleanup:
	json_decref(objects);
	json_decref(docs);
	free(data);
	return rc;
}

/* With -o json|yaml, scripts get the no-definition case as data on stdout too. */
static void print_no_definition(const cli_options *o, const json_t *object)
{
	const char *api = json_string_value(json_object_get(object, "apiVersion"));
	const char *kind = json_string_value(json_object_get(object, "kind"));
	wmap_error ignored = { 0 };
	char gvk[512];
	json_t *v;

	if (o->output == CLI_OUTPUT_TABLE)
		return;
	render_gvk_of(gvk, sizeof(gvk), api, kind);
	v = json_pack("{s:s, s:s, s:s}", "error", "no_definition_for_type", "gvk", gvk, "message",
		      "no Karta definition covers this workload type");
	if (v)
		render_value(stdout, v, o->output, &ignored);
	json_decref(v);
}

/* Describes one object: the table on stdout, or its model appended to models (-o json|
 * yaml). where names it in messages ("file", "file: item 3"; warnings name it only when it
 * is an item). Returns the exit code. */
static int describe_object(const cli_options *o, json_t *object, const char *where, int item,
			   json_t *models, int *printed, int *warned)
{
	wmap_error err = { 0 };
	wmap_registry *reg = NULL;
	wmap_engine *eng = NULL;
	wmap_workload *w = NULL;
	const wmap_definition *def = NULL;
	json_t *model = NULL;
	size_t i;
	int rc;

	if (!json_is_object(object)) {
		rc = wmap_error_set(&err, WMAP_EINVAL, "%s: the item is %s, not a Kubernetes object",
				    where, json_type_name(object));
		goto cleanup;
	}
	if ((rc = cli_registry_load_for(&reg, o, object, &err)) != 0)
		goto cleanup;
	if ((rc = wmap_registry_find_object(&def, reg, object, &err)) == 0 &&
	    (rc = wmap_engine_new(&eng, reg, &err)) == 0)
		rc = wmap_workload_resolve(&w, eng, object, def, &err);
	if (rc != 0) {
		if (rc == WMAP_ENODEF && !item)
			print_no_definition(o, object);
		/* The core names the JSON path; the user also needs to know which file. */
		wmap_error_prefix(&err, "%s", where);
		goto cleanup;
	}
	if (o->output == CLI_OUTPUT_TABLE && (*printed)++ > 0)
		fputc('\n', stdout); /* between the tables of a List's items */
	if (o->output == CLI_OUTPUT_TABLE)
		rc = render_describe(stdout, w, &err);
	else if ((rc = render_describe_model(&model, w, &err)) == 0)
		rc = models ? (json_array_append(models, model) ? wmap_error_set(&err, WMAP_ENOMEM, "out of memory") : 0)
			    : render_value(stdout, model, o->output, &err);
	if (rc != 0)
		goto cleanup;
	/* After the output, as kubectl and upstream do, so that they stay visible. */
	fflush(stdout);
	for (i = 0; i < w->n_warnings; i++)
		cli_print_line(stderr, "warning: ", w->warnings[i], strlen(w->warnings[i]));
	if (cli_warn_verify(w, 0, item ? where : NULL) > 0)
		*warned = 1;
cleanup:
	fflush(stdout);
	json_decref(model);
	wmap_workload_free(w);
	wmap_engine_free(eng);
	wmap_registry_free(reg);
	return rc != 0 ? cli_fail(&err) : CLI_EXIT_OK;
}

/* One object as before; a List or several documents: each item in turn (a blank line
 * between tables), or a List of their models with -o json|yaml. An item that fails is
 * reported and the others are still described; the first failure's code is the exit code. */
static int describe_file(const cli_options *o, const char *path)
{
	wmap_error err = { 0 };
	json_t *objects = NULL, *models = NULL, *obj;
	int list = 0, warned = 0, printed = 0, rc = CLI_EXIT_OK;
	size_t i;

	if (read_objects(&objects, &list, path, &err) != 0)
		return cli_fail(&err);
	if (o->output != CLI_OUTPUT_TABLE && list && !(models = json_array())) {
		json_decref(objects);
		return cli_error("out of memory");
	}
	json_array_foreach(objects, i, obj) {
		char where[1024];
		int one;

		if (list)
			snprintf(where, sizeof(where), "%s: item %zu", display_name(path), i + 1);
		else
			snprintf(where, sizeof(where), "%s", display_name(path));
		one = describe_object(o, obj, where, list, models, &printed, &warned);
		if (one != CLI_EXIT_OK && rc == CLI_EXIT_OK)
			rc = one;
	}
	if (models) {
		json_t *v = json_pack("{s:s, s:s, s:O}", "apiVersion", "v1", "kind", "List", "items", models);
		wmap_error e = { 0 };

		if (!v || render_value(stdout, v, o->output, &e) != 0)
			rc = v ? cli_fail(&e) : cli_error("out of memory");
		json_decref(v);
	}
	json_decref(models);
	json_decref(objects);
	if (rc == CLI_EXIT_OK && warned && cli_options_get(o, "strict"))
		rc = CLI_EXIT_WARNINGS;
	return rc;
}

static int run(const cli_options *o)
{
	const char *file = cli_options_get(o, "filename");

	if (file) {
		if (o->n_args > 0)
			return cli_usage_error(o, &cli_cmd_describe,
					       "describe -f FILE takes no other argument (got \"%s\")",
					       o->args[0]);
		if (file[0] == '\0')
			return cli_usage_error(o, &cli_cmd_describe, "-f needs a file name");
		if (cli_options_get(o, "watch") || cli_options_get(o, "until-done"))
			return cli_usage_error(o, &cli_cmd_describe,
					       "-w and --until-done watch a live workload (TYPE/NAME), not a file");
		return describe_file(o, file);
	}
	if (o->n_args == 0)
		return cli_usage_error(o, &cli_cmd_describe,
				       "describe needs -f FILE, or TYPE/NAME for a live workload");
	if (o->n_args > 2)
		return cli_usage_error(o, &cli_cmd_describe,
				       "describe takes TYPE/NAME or TYPE NAME (got %zu arguments)",
				       o->n_args);
	return live_describe(o);
}

const cli_command cli_cmd_describe = {
	.name = "describe",
	.summary = "Show the components, replicas, GPUs and status of one workload",
	.usage = "describe (-f FILE | TYPE/NAME | TYPE NAME) [-o table|json|yaml] [flags]",
	.help =
		"Resolves the workload through the Karta definition of its kind (the built-in\n"
		"catalog, or --definitions) and prints its components as a tree, the phase read\n"
		"from its .status, and the replicas, GPUs, CPU and memory each component asks for.\n"
		"\n"
		"-f reads a file (YAML or JSON; - is standard input) and needs no cluster: one\n"
		"object, or a kind: List (what kubectl get -o yaml prints for several) or several\n"
		"documents, each item described in turn (-o json|yaml: a v1 List of them); an item\n"
		"that fails is reported and the others are still described.\n"
		"TYPE/NAME (or TYPE NAME) reads the workload and its pods from the cluster of the\n"
		"kubeconfig (--kubeconfig, --context, -n, ...): pods per component, ready/desired.\n"
		"-w watches the workload and its pods and redraws the view when they change (in\n"
		"place on a terminal; piped, each changed view after a blank line) until the\n"
		"workload is deleted, Ctrl-C, or with --until-done until it is Completed or Failed.\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap describe -f jobset.yaml\n"
		"  kubectl wmap describe -f jobset.yaml -o json\n"
		"  kubectl get jobset demo -o yaml | kubectl wmap describe -f -\n"
		"  kubectl wmap describe jobset/train -w --until-done\n"
		"\n"
		"-f warns (stderr) where the definition finds nothing in the object: a spec path\n"
		"that matched nothing although the object has the key in another case (`worker`\n"
		"for `Worker`), no pods found at all, a pod spec without containers, a .status no\n"
		"status mapping matches. --strict turns the warnings into exit code 8.\n"
		"\n"
		"Exit codes: 0 ok, 1 error (unreadable or malformed object), 2 usage,\n"
		"4 no Karta definition covers the object's type, 8 warnings with --strict.\n"
		"-w: 0 when the workload is deleted or Completed, 1 when it Failed\n"
		"(--until-done), 130 on Ctrl-C.\n",
	.flags = flags,
	.run = run,
};
