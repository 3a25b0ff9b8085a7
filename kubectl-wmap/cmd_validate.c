/* kubectl-wmap validate FILE|-: checks Karta definitions offline with upstream's rules
 * (structure, references, cycles, gang members, jq syntax and forbidden jq), and with
 * --crd FILE or --from-cluster every plain path of a definition against the structural schema
 * of its kind's CRD (wmap/schema.h).
 *
 * Exit codes differ from upstream's kli on purpose: kli exits 2 for unreadable input, but
 * 2 is our usage error everywhere, so unreadable or unparseable input exits 1, like an
 * invalid definition. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "live.h"
#include "wmap/definition.h"
#include "wmap/file.h"
#include "wmap/schema.h"
#include "wmap/yaml.h"

static const cli_flag flags[] = {
	{ "crd", NULL, 0, "FILE",
	  "check paths against the CustomResourceDefinitions in FILE (YAML or JSON)" },
	/* Not --cluster: that is kubectl's connection flag (the kubeconfig cluster to use),
	 * which the plugin honours for every live command, this one included. */
	{ "from-cluster", NULL, 0, NULL,
	  "check paths against the CRD of each definition's kind read from the cluster" },
	{ NULL, NULL, 0, NULL, NULL },
};

/* Where the CRDs come from: the documents of --crd FILE, or the cluster (--from-cluster). */
typedef struct crd_source {
	const char *file; /* --crd, for messages */
	json_t *docs;     /* its documents */
	live_ctx *lc;     /* --from-cluster */
} crd_source;

static const char *display_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* Prints the findings of message (one per line) indented by two spaces; returns how many.
 * Every finding starts with the file's name (the core names the place); a line that does
 * not continues the finding above it (libjq's compile errors quote the expression on a
 * line of their own). */
static size_t print_findings(const char *m, const char *name)
{
	size_t n = 0, name_len = strlen(name);
	const char *nl;

	for (; m && m[0]; m = nl ? nl + 1 : m + strlen(m)) {
		int len;

		nl = strchr(m, '\n');
		len = nl ? (int)(nl - m) : (int)strlen(m);
		if (len == 0)
			continue;
		if (n > 0 && strncmp(m, name, name_len) != 0) {
			printf("    %.*s\n", len, m);
			continue;
		}
		printf("  %.*s\n", len, m);
		n++;
	}
	return n;
}

/* The CRD for the definition's root kind from the cluster: a new reference, or NULL with
 * why in note (not served, a built-in kind, not readable). */
static json_t *cluster_crd(live_ctx *lc, const wmap_gvk *gvk, char *note, size_t len)
{
	const wmap_api_resource *r = NULL;
	wmap_error e = { 0 };
	json_t *crd = NULL;
	char path[700];

	for (size_t i = 0; i < wmap_discovery_count(lc->disc) && !r; i++) {
		const wmap_api_resource *x = wmap_discovery_get(lc->disc, i);
		if (strcmp(x->group, gvk->group) == 0 && strcmp(x->kind, gvk->kind) == 0 &&
		    !strchr(x->plural, '/'))
			r = x;
	}
	if (!r) {
		snprintf(note, len, "the cluster serves no %s%s%s: no CRD to check against", gvk->kind,
			 gvk->group[0] ? "." : "", gvk->group);
		return NULL;
	}
	if (!strchr(r->group, '.')) {
		snprintf(note, len, "%s is a built-in kind: no CRD to check against", gvk->kind);
		return NULL;
	}
	snprintf(path, sizeof(path), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/%s.%s",
		 r->plural, r->group);
	if (wmap_kube_get(&crd, lc->client, path, &e) != 0) {
		snprintf(note, len, "cannot read the CRD %s.%s: %s", r->plural, r->group, e.message);
		return NULL;
	}
	return crd;
}

/* The schema check of a valid definition; returns the number of findings. */
static size_t check_schema(const wmap_definition *def, const crd_source *src)
{
	const wmap_gvk *gvk = def->n_components ? def->components[0].kind : NULL;
	json_t *crd = NULL, *findings = NULL, *d;
	wmap_error err = { 0 };
	char note[1200] = "";
	size_t n = 0, i;

	if (!gvk)
		return 0;
	if (src->lc) {
		crd = cluster_crd(src->lc, gvk, note, sizeof(note));
	} else {
		json_array_foreach(src->docs, i, d) {
			if (wmap_schema_crd_matches(d, gvk->group, gvk->kind)) {
				crd = json_incref(d);
				break;
			}
		}
		if (!crd)
			snprintf(note, sizeof(note), "%s has no CustomResourceDefinition for %s%s%s",
				 src->file, gvk->kind, gvk->group[0] ? "." : "", gvk->group);
	}
	if (!crd) {
		printf("  schema not checked: %s\n", note);
		return 0;
	}
	if (wmap_schema_check(&findings, def, crd, &err) != 0) {
		printf("  schema not checked: %s\n", err.message);
		json_decref(crd);
		return 0;
	}
	const char *crd_name = json_string_value(json_object_get(json_object_get(crd, "metadata"), "name"));
	if (json_array_size(findings) == 0) {
		printf("  every plain path is in the schema of %s (CRD %s)\n", gvk->version,
		       crd_name ? crd_name : "?");
	} else {
		printf("SCHEMA: %zu finding%s against the CRD %s, version %s:\n", json_array_size(findings),
		       json_array_size(findings) == 1 ? "" : "s", crd_name ? crd_name : "?", gvk->version);
		json_array_foreach(findings, i, d) {
			const char *m = json_string_value(json_object_get(d, "message"));
			cli_print_line(stdout, "  ", m, strlen(m));
		}
		n = json_array_size(findings);
	}
	json_decref(findings);
	json_decref(crd);
	return n;
}

/* Loads and checks one document; returns the number of findings (0 = valid). */
static size_t check_document(const json_t *doc, const char *name, const json_t *positions,
			     size_t index, size_t n_docs, const crd_source *src)
{
	wmap_definition *def = NULL;
	wmap_error err = { 0 };
	char where[64] = "";
	size_t n = 0;
	int rc;

	if (n_docs > 1)
		snprintf(where, sizeof(where), " (document %zu)", index + 1);
	rc = wmap_definition_load(&def, doc, name, WMAP_ORIGIN_FILE, positions, (int)index, &err);
	if (rc == 0)
		rc = wmap_definition_check_jq(def, &err);
	if (rc == 0) {
		char gvk[256] = "?";

		if (def->n_components > 0 && def->components[0].kind)
			wmap_gvk_format(gvk, sizeof(gvk), def->components[0].kind);
		printf("OK: %s%s is a valid Karta definition (GVK: %s)\n", name, where, gvk);
		if (src)
			n = check_schema(def, src);
	} else {
		printf("INVALID: %s%s\n", name, where);
		n = print_findings(err.message[0] ? err.message : wmap_error_name(rc), name);
		if (n == 0)
			n = 1;
	}
	wmap_definition_free(def);
	return n;
}

/* The CRD documents of --crd FILE (positions are not needed: findings name the Karta).
 * Generated CRDs may share schemas through anchors, as manifests may (node cap applies). */
static int load_crds(json_t **out, const char *file, wmap_error *err)
{
	wmap_yaml_opts yo = { .allow_aliases = 1 };
	char *data = NULL;
	size_t len = 0;
	int rc = wmap_file_read(&data, &len, file, WMAP_YAML_MAX_BYTES, err);
	if (rc == 0)
		rc = wmap_yaml_parse(out, data, len, display_name(file), &yo, err);
	free(data);
	return rc;
}

static int run(const cli_options *o)
{
	wmap_yaml_opts yo = { 0 };
	wmap_error err = { 0 };
	json_t *docs = NULL, *positions = NULL;
	const char *path, *name;
	char *data = NULL;
	size_t len = 0, n, i, findings = 0;
	int rc, opened = 0;
	crd_source src = { NULL, NULL, NULL };
	live_ctx lc;

	if ((rc = cli_require_table(o, &cli_cmd_validate)) != 0)
		return rc;
	if (o->n_args != 1)
		return cli_usage_error(o, &cli_cmd_validate,
				       "validate takes exactly one FILE (- reads standard input)");
	src.file = cli_options_get(o, "crd");
	if (src.file && cli_options_get(o, "from-cluster"))
		return cli_usage_error(o, &cli_cmd_validate, "--crd and --from-cluster exclude each other");
	path = o->args[0];
	name = display_name(path);
	if (src.file && strcmp(src.file, "-") == 0 && strcmp(path, "-") == 0)
		return cli_usage_error(o, &cli_cmd_validate,
				       "FILE and --crd cannot both be standard input");
	if (src.file && (rc = load_crds(&src.docs, src.file, &err)) != 0)
		goto cleanup;
	if (cli_options_get(o, "from-cluster")) {
		if ((rc = live_open(&lc, o)) != 0) {
			live_close(&lc);
			return rc;
		}
		opened = 1;
		src.lc = &lc;
	}
	/* Positions let findings name file:line:column; definitions may not use anchors. */
	if ((positions = json_object()) == NULL) {
		rc = wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	yo.positions = positions;
	if ((rc = wmap_file_read(&data, &len, path, WMAP_YAML_MAX_BYTES, &err)) != 0)
		goto cleanup;
	if ((rc = wmap_yaml_parse(&docs, data, len, name, &yo, &err)) != 0)
		goto cleanup;
	n = json_array_size(docs);
	if (n == 0) {
		rc = wmap_error_set(&err, WMAP_EINVAL, "%s: no Karta definition (the file is empty)",
				    name);
		goto cleanup;
	}
	for (i = 0; i < n; i++)
		findings += check_document(json_array_get(docs, i), name, positions, i, n,
					   src.file || src.lc ? &src : NULL);
	if (findings > 0)
		rc = wmap_error_set(&err, WMAP_EINVALID, "%zu finding%s in %s", findings,
				    findings == 1 ? "" : "s", name);
cleanup:
	fflush(stdout);
	if (opened)
		live_close(&lc);
	json_decref(src.docs);
	json_decref(docs);
	json_decref(positions);
	free(data);
	/* Invalid, unreadable or not YAML: all exit 1, never 2 (see the top). */
	return rc == 0 ? CLI_EXIT_OK : (cli_fail(&err), CLI_EXIT_ERROR);
}

const cli_command cli_cmd_validate = {
	.name = "validate",
	.summary = "Check Karta definitions in a file (paths too, with --crd)",
	.usage = "validate FILE|- [--crd CRD-FILE | --from-cluster]",
	.help =
		"Checks every document of FILE (- is standard input) with upstream's rules: the\n"
		"structure, unique component names, owner references, ownership cycles, gang\n"
		"members, and that every jq expression compiles and uses no forbidden builtin\n"
		"(del, range, paths, recurse, walk, repeat, .., assignments). Prints\n"
		"`OK: FILE is a valid Karta definition (GVK: ...)` per document, or `INVALID: FILE`\n"
		"followed by every finding.\n"
		"\n"
		"With --crd or --from-cluster, every plain path a valid definition reads or writes on its\n"
		"workload (pod templates, pod specs, metadata, replicas, instance ids, status,\n"
		"suspend/resume actions) is also walked through the structural schema of the\n"
		"definition's version in its kind's CustomResourceDefinition; a path the schema\n"
		"lacks is listed under `SCHEMA:` with the Karta field that holds it. --crd reads\n"
		"the CRDs from a file (several documents allowed); --from-cluster reads the CRD of\n"
		"each definition's kind from the cluster of the kubeconfig (connection flags as for\n"
		"the live commands, --cluster NAME included). Expressions that are more than a\n"
		"plain path are not checked.\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap validate my-karta.yaml\n"
		"  kubectl get karta my-karta -o yaml | kubectl wmap validate -\n"
		"  kubectl wmap validate my-karta.yaml --crd jobset-crd.yaml\n"
		"  kubectl wmap validate my-karta.yaml --from-cluster\n"
		"\n"
		"Exit codes: 0 valid (and every checked path in its schema), 1 invalid, a path\n"
		"missing from the schema, unreadable or not YAML, or the cluster failed, 2 usage.\n",
	.flags = flags,
	.run = run,
};
