/* kubectl-wmap validate FILE|-: checks Karta definitions offline with upstream's rules
 * (structure, references, cycles, gang members, jq syntax and forbidden jq).
 *
 * Exit codes differ from upstream's kli on purpose: kli exits 2 for unreadable input, but
 * 2 is our usage error everywhere, so unreadable or unparseable input exits 1, like an
 * invalid definition. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "wmap/definition.h"
#include "wmap/file.h"
#include "wmap/yaml.h"

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

/* Loads and checks one document; returns the number of findings (0 = valid). */
static size_t check_document(const json_t *doc, const char *name, const json_t *positions,
			     size_t index, size_t n_docs)
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
	} else {
		printf("INVALID: %s%s\n", name, where);
		n = print_findings(err.message[0] ? err.message : wmap_error_name(rc), name);
		if (n == 0)
			n = 1;
	}
	wmap_definition_free(def);
	return n;
}

static int run(const cli_options *o)
{
	wmap_yaml_opts yo = { 0 };
	wmap_error err = { 0 };
	json_t *docs = NULL, *positions = NULL;
	const char *path, *name;
	char *data = NULL;
	size_t len = 0, n, i, findings = 0;
	int rc;

	if ((rc = cli_require_table(o, &cli_cmd_validate)) != 0)
		return rc;
	if (o->n_args != 1)
		return cli_usage_error(o, &cli_cmd_validate,
				       "validate takes exactly one FILE (- reads standard input)");
	path = o->args[0];
	name = display_name(path);
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
		findings += check_document(json_array_get(docs, i), name, positions, i, n);
	if (findings > 0)
		rc = wmap_error_set(&err, WMAP_EINVALID, "%zu finding%s in %s", findings,
				    findings == 1 ? "" : "s", name);
cleanup:
	fflush(stdout);
	json_decref(docs);
	json_decref(positions);
	free(data);
	/* Invalid, unreadable or not YAML: all exit 1, never 2 (see the top). */
	return rc == 0 ? CLI_EXIT_OK : (cli_fail(&err), CLI_EXIT_ERROR);
}

const cli_command cli_cmd_validate = {
	.name = "validate",
	.summary = "Check Karta definitions in a file offline",
	.usage = "validate FILE|-",
	.help =
		"Checks every document of FILE (- is standard input) with upstream's rules: the\n"
		"structure, unique component names, owner references, ownership cycles, gang\n"
		"members, and that every jq expression compiles and uses no forbidden builtin\n"
		"(del, range, paths, recurse, walk, repeat, .., assignments). Prints\n"
		"`OK: FILE is a valid Karta definition (GVK: ...)` per document, or `INVALID: FILE`\n"
		"followed by every finding.\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap validate my-karta.yaml\n"
		"  kubectl get karta my-karta -o yaml | kubectl wmap validate -\n"
		"\n"
		"Exit codes: 0 valid, 1 invalid, unreadable or not YAML, 2 usage.\n",
	.flags = NULL,
	.run = run,
};
