/* kubectl-wmap definitions [NAME]: the Karta definitions in force (the embedded catalog
 * plus --definitions), as a table, or as the Karta objects themselves with -o json|yaml. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "render.h"
#include "wmap/definition.h"
#include "wmap/gang.h"
#include "wmap/registry.h"

#define SHOWN_CHILDREN 3 /* upstream's COMPONENTS column: root + 3 children, then +N */

static const cli_flag flags[] = {
	{ "group", NULL, 0, "GROUP", "only definitions of this API group (core or \"\" for Pod)" },
	{ "kind", NULL, 0, "KIND", "only this kind (any letter case; in every group without --group)" },
	{ "version", NULL, 0, "VERSION", "only this version (needs --kind)" },
	{ NULL, NULL, 0, NULL, NULL },
};

typedef struct filter {
	const char *group, *kind, *version;
} filter;

static int matches(const wmap_definition *def, const filter *f)
{
	const wmap_gvk *k = def->n_components > 0 ? def->components[0].kind : NULL;
	const char *group;

	if (!f->group && !f->kind)
		return 1;
	if (!k)
		return 0;
	/* The core group is "" in a definition; users type it as "core" or as "". */
	group = f->group && strcmp(f->group, "core") == 0 ? "" : f->group;
	if (group && strcmp(k->group ? k->group : "", group) != 0)
		return 0;
	if (f->kind && strcasecmp(k->kind ? k->kind : "", f->kind) != 0)
		return 0;
	if (f->version && strcmp(k->version ? k->version : "", f->version) != 0)
		return 0;
	return 1;
}

/* "jobset, replicatedjob" or "milvus, etcd, minio, pulsar, +12 more". */
static void components_cell(char *buf, size_t len, const wmap_definition *def)
{
	size_t used = 0, i;
	size_t shown = def->n_components < SHOWN_CHILDREN + 1 ? def->n_components
							      : SHOWN_CHILDREN + 1;

	buf[0] = '\0';
	for (i = 0; i < shown && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 def->components[i].name ? def->components[i].name : "?");

		if (n < 0)
			return;
		used += (size_t)n;
	}
	if (def->n_components > shown && used < len)
		snprintf(buf + used, len - used, ", +%zu more", def->n_components - shown);
}

static int print_table(const wmap_definition *const *defs, size_t n, wmap_error *err)
{
	const char *header[4] = { "NAME", "KIND", "ORIGIN", "COMPONENTS" };
	render_table *t = NULL;
	size_t i;
	int rc;

	if ((rc = render_table_new(&t, 4, err)) != 0 || (rc = render_table_add(t, header, err)) != 0)
		goto cleanup;
	for (i = 0; i < n; i++) {
		char kind[256] = "-", comps[512];
		const char *cells[4] = { defs[i]->name, kind, wmap_origin_name(defs[i]->origin),
					 comps };

		if (defs[i]->n_components > 0)
			render_kind_label(kind, sizeof(kind), defs[i]->components[0].kind);
		components_cell(comps, sizeof(comps), defs[i]);
		if ((rc = render_table_add(t, cells, err)) != 0)
			goto cleanup;
	}
	render_table_print(stdout, t);
cleanup:
	render_table_free(t);
	return rc;
}

/* The Karta objects as read; a list is a KartaList, so the output can be applied back. */
static int print_objects(const cli_options *o, const wmap_definition *const *defs, size_t n,
			 int single, wmap_error *err)
{
	json_t *v = NULL, *items;
	size_t i;
	int rc;

	/* KAI's lookup labels on every Karta, so that `... -o yaml | kubectl apply -f -`
	 * registers the catalog for KAI (wmap/gang.h). */
	if (single) {
		v = wmap_karta_labelled(defs[0]->raw);
	} else {
		v = json_pack("{s:s, s:s, s:[]}", "apiVersion", "run.ai/v1alpha1", "kind", "KartaList",
			      "items");
		items = json_object_get(v, "items");
		for (i = 0; v && i < n; i++)
			if (json_array_append_new(items, wmap_karta_labelled(defs[i]->raw)) != 0) {
				json_decref(v);
				v = NULL;
			}
	}
	if (!v)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory building the output");
	rc = render_value(stdout, v, o->output, err);
	json_decref(v);
	return rc;
}

/* After "not found": the definitions NAME most likely meant, kubectl's way: those whose kind
 * NAME spells (`pytorchjob`, `PyTorchJob`, `pytorchjobs`), else the names within a few
 * edits (a typo) or that contain NAME. */
static void suggest(const wmap_registry *reg, const char *name)
{
	const char *found[8];
	size_t n = 0, best = 4, count = reg ? wmap_registry_count(reg) : 0;
	char low[128];

	snprintf(low, sizeof(low), "%s", name);
	for (char *p = low; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	for (size_t i = 0; i < count && n < 8; i++) {
		const wmap_definition *d = wmap_registry_get(reg, i);
		const char *kind = d->n_components && d->components[0].kind ? d->components[0].kind->kind : "";
		size_t kl = strlen(kind);

		if (strcasecmp(kind, name) == 0 ||
		    (strlen(name) == kl + 1 && strncasecmp(kind, name, kl) == 0 && name[kl] == 's'))
			found[n++] = d->name;
	}
	for (size_t i = 0; n == 0 && i < count; i++) {
		const wmap_definition *d = wmap_registry_get(reg, i);
		size_t dist = cli_edit_distance(low, d->name);

		if (strlen(low) >= 4 && strstr(d->name, low))
			dist = 3; /* "pytorch" for kubeflow-org-pytorchjob-v1 */
		if (dist < best) {
			best = dist;
			found[0] = d->name;
		}
	}
	if (best < 4 && n == 0)
		n = 1;
	if (n == 0)
		return;
	fprintf(stderr, "\nDid you mean %s?\n", n == 1 ? "this" : "one of these");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "    %s\n", found[i]);
}

static int run(const cli_options *o)
{
	filter f = { cli_options_get(o, "group"), cli_options_get(o, "kind"),
		     cli_options_get(o, "version") };
	const char *name = o->n_args == 1 ? o->args[0] : NULL;
	const wmap_definition **defs = NULL;
	wmap_registry *reg = NULL;
	wmap_error err = { 0 };
	size_t n = 0, i, count;
	int rc, exit_code, missing = 0;

	if (o->n_args > 1)
		return cli_usage_error(o, &cli_cmd_definitions,
				       "definitions takes at most one NAME (got %zu)", o->n_args);
	if (f.version && !f.kind)
		return cli_usage_error(o, &cli_cmd_definitions, "--version needs --kind");
	if ((rc = cli_registry_load(&reg, o, &err)) != 0)
		goto cleanup;
	count = wmap_registry_count(reg);
	if (count > 0 && (defs = calloc(count, sizeof(*defs))) == NULL) {
		rc = wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (i = 0; i < count; i++) {
		const wmap_definition *d = wmap_registry_get(reg, i);

		if (d && matches(d, &f) && (!name || strcmp(d->name, name) == 0))
			defs[n++] = d;
	}
	if (name && n == 0) {
		missing = 1;
		rc = wmap_error_set(&err, WMAP_ENOTFOUND, "Karta definition \"%s\" not found%s",
				    name, f.group || f.kind ? " (with the --group/--kind/--version filters)" : "");
		goto cleanup;
	}
	if (o->output != CLI_OUTPUT_TABLE)
		rc = print_objects(o, defs, n, name != NULL, &err);
	else if (n == 0)
		fprintf(stderr, "No Karta definitions found.\n");
	else
		rc = print_table(defs, n, &err);
cleanup:
	fflush(stdout);
	exit_code = rc == 0 ? CLI_EXIT_OK : cli_fail(&err);
	/* Only the lookup of NAME says "not found": the core also uses it for missing files. */
	if (missing) {
		suggest(reg, name);
		exit_code = CLI_EXIT_NOTFOUND;
	}
	free(defs);
	wmap_registry_free(reg);
	return exit_code;
}

const cli_command cli_cmd_definitions = {
	.name = "definitions",
	.summary = "List the Karta definitions in force (built-in catalog and --definitions)",
	.usage = "definitions [NAME] [--group GROUP] [--kind KIND [--version VERSION]] "
		 "[-o table|json|yaml]",
	.help =
		"Lists one row per definition: its name, the workload kind it covers, where it\n"
		"comes from (catalog: built in; file: --definitions) and its components (the root\n"
		"and its first children). With -o json|yaml prints the Karta objects themselves:\n"
		"a KartaList, or the bare object when NAME is given. --kind alone matches the kind\n"
		"in every group. An unknown NAME gets suggestions: the definitions of the kind it\n"
		"spells (pytorchjob), or the names a typo away.\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap definitions\n"
		"  kubectl wmap definitions --group kubeflow.org\n"
		"  kubectl wmap definitions --kind PyTorchJob\n"
		"  kubectl wmap definitions jobset-x-k8s-io-jobset-v1alpha2 -o yaml\n"
		"  kubectl wmap definitions --definitions ./my-kartas/\n"
		"\n"
		"Exit codes: 0 ok, 1 error (e.g. an invalid --definitions file), 2 usage,\n"
		"3 NAME not found.\n",
	.flags = flags,
	.run = run,
};
