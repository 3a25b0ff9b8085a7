/* kubectl-wmap validate (FILE|DIR|-)...: checks Karta definitions offline with upstream's rules
 * (structure, references, cycles, gang members, jq syntax and forbidden jq), and with
 * --crd FILE or --from-cluster every expression of a definition against the structural schema
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
#include "wmap/verify.h"
#include "wmap/workload.h"
#include "wmap/yaml.h"

static const cli_flag flags[] = {
	{ "crd", NULL, 0, "FILE",
	  "check paths against the CustomResourceDefinitions in FILE (YAML or JSON)" },
	/* Not --cluster: that is kubectl's connection flag (the kubeconfig cluster to use),
	 * which the plugin honours for every live command, this one included. */
	{ "from-cluster", NULL, 0, NULL,
	  "check paths against the CRD of each definition's kind read from the cluster" },
	{ "sample", NULL, 0, "FILE",
	  "resolve the objects of FILE through each definition of their kind and warn where it "
	  "finds nothing" },
	CLI_FLAG_STRICT,
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
static size_t print_findings(FILE *out, const char *m, const char *name)
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
			fprintf(out, "    %.*s\n", len, m);
			continue;
		}
		fprintf(out, "  %.*s\n", len, m);
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
static size_t check_schema(FILE *out, const wmap_definition *def, const crd_source *src)
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
		fprintf(out, "  schema not checked: %s\n", note);
		return 0;
	}
	if (wmap_schema_check(&findings, def, crd, &err) != 0) {
		fprintf(out, "  schema not checked: %s\n", err.message);
		json_decref(crd);
		return 0;
	}
	const char *crd_name = json_string_value(json_object_get(json_object_get(crd, "metadata"), "name"));
	if (json_array_size(findings) == 0) {
		fprintf(out, "  every field it reads or writes is in the schema of %s (CRD %s)\n", gvk->version,
			crd_name ? crd_name : "?");
	} else {
		fprintf(out, "SCHEMA: %zu finding%s against the CRD %s, version %s:\n", json_array_size(findings),
			json_array_size(findings) == 1 ? "" : "s", crd_name ? crd_name : "?", gvk->version);
		json_array_foreach(findings, i, d) {
			const char *m = json_string_value(json_object_get(d, "message"));
			cli_print_line(out, "  ", m, strlen(m));
		}
		n = json_array_size(findings);
	}
	json_decref(findings);
	json_decref(crd);
	return n;
}

/* What one file came to: its findings, the GVKs of its valid documents, the warnings of
 * --sample, and the text to print under its verdict. */
typedef struct file_result {
	size_t findings, warnings, valid;
	char gvks[1024]; /* "a; b" of the valid documents */
	FILE *body;      /* an open_memstream: notes and findings, printed under the verdict */
	char *text;
	size_t len;
} file_result;

/* --sample: the objects of a file, and where it came from. */
typedef struct sample_source {
	const char *name;
	json_t *objects; /* every document, List items spread out */
} sample_source;

/* Resolves every sample object of def's kind through def alone (doc, loaded again into a
 * registry of its own) and prints what it found nothing for (wmap_workload_verify, every
 * check); returns the warnings, and adds a finding when an object does not resolve. */
static size_t check_sample(file_result *fr, const json_t *doc, const wmap_definition *def,
			   const char *name, const sample_source *sample)
{
	const wmap_gvk *g = def->components[0].kind;
	wmap_registry *reg = NULL;
	wmap_definition *copy = NULL;
	wmap_engine *eng = NULL;
	wmap_error err = { 0 };
	size_t warnings = 0, used = 0, i;
	json_t *obj;

	if (wmap_registry_new(&reg, &err) != 0 ||
	    wmap_definition_load(&copy, doc, name, WMAP_ORIGIN_FILE, NULL, 0, &err) != 0 ||
	    wmap_registry_add(reg, copy, &err) != 0 || wmap_engine_new(&eng, reg, &err) != 0) {
		fprintf(fr->body, "  sample not checked: %s\n", err.message);
		goto out;
	}
	json_array_foreach(sample->objects, i, obj) {
		const wmap_definition *d = NULL;
		wmap_workload *w = NULL;
		json_t *found = NULL, *v;
		char who[700];
		size_t k;

		if (wmap_registry_find_object(&d, reg, obj, &err) != 0)
			continue; /* another kind: for another definition of the files */
		used++;
		snprintf(who, sizeof(who), "%s: %s/%s", sample->name,
			 json_string_value(json_object_get(obj, "kind")),
			 json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"))
				 ? json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"))
				 : "?");
		if (wmap_workload_resolve(&w, eng, obj, d, &err) != 0 ||
		    wmap_workload_verify(&found, w, WMAP_VERIFY_ALL, &err) != 0) {
			fprintf(fr->body, "  %s: %s\n", who, err.message);
			fr->findings++;
			wmap_workload_free(w);
			continue;
		}
		json_array_foreach(found, k, v)
			fprintf(fr->body, "  warning: %s: %s\n", who, json_string_value(v));
		warnings += json_array_size(found);
		json_decref(found);
		wmap_workload_free(w);
	}
	if (used == 0) {
		fprintf(fr->body, "  warning: %s holds no %s%s%s object to try the definition on\n",
			sample->name, g->kind, g->group[0] ? "." : "", g->group);
		warnings++;
	}
out:
	wmap_engine_free(eng);
	wmap_registry_free(reg);
	return warnings;
}

/* Loads and checks one document into fr. */
static void check_document(file_result *fr, const json_t *doc, const char *name,
			   const json_t *positions, size_t index, const crd_source *src,
			   const sample_source *sample)
{
	wmap_definition *def = NULL;
	wmap_error err = { 0 };
	size_t n;
	int rc;

	rc = wmap_definition_load(&def, doc, name, WMAP_ORIGIN_FILE, positions, (int)index, &err);
	if (rc == 0)
		rc = wmap_definition_check_jq(def, &err);
	if (rc == 0) {
		char gvk[256] = "?";
		size_t l = strlen(fr->gvks);

		if (def->n_components > 0 && def->components[0].kind)
			wmap_gvk_format(gvk, sizeof(gvk), def->components[0].kind);
		snprintf(fr->gvks + l, sizeof(fr->gvks) - l, "%s%s", l ? "; " : "", gvk);
		fr->valid++;
		if (src)
			fr->findings += check_schema(fr->body, def, src);
		if (sample)
			fr->warnings += check_sample(fr, doc, def, name, sample);
	} else {
		n = print_findings(fr->body, err.message[0] ? err.message : wmap_error_name(rc), name);
		fr->findings += n ? n : 1;
	}
	wmap_definition_free(def);
}

/* Checks every document of one file into fr; an unreadable file or one that is not YAML is
 * a finding of its own. */
static void check_file(file_result *fr, const char *path, const crd_source *src,
		       const sample_source *sample)
{
	wmap_yaml_opts yo = { 0 };
	wmap_error err = { 0 };
	json_t *docs = NULL, *positions = json_object();
	const char *name = display_name(path);
	char *data = NULL;
	size_t len = 0, n, i;

	/* Positions let findings name file:line:column; definitions may not use anchors. */
	yo.positions = positions;
	if (!positions) {
		wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
	} else if (wmap_file_read(&data, &len, path, WMAP_YAML_MAX_BYTES, &err) == 0 &&
		   wmap_yaml_parse(&docs, data, len, name, &yo, &err) == 0) {
		n = json_array_size(docs);
		if (n == 0)
			wmap_error_set(&err, WMAP_EINVAL, "%s: no Karta definition (the file is empty)", name);
		for (i = 0; i < n; i++)
			check_document(fr, json_array_get(docs, i), name, positions, i, src, sample);
	}
	if (err.code) {
		fprintf(fr->body, "  %s\n", err.message);
		fr->findings++;
	}
	json_decref(docs);
	json_decref(positions);
	free(data);
}

/* The verdict of one file, then what was found. */
static void print_verdict(const file_result *fr, const char *name, int strict)
{
	if (fr->findings > 0 || (strict && fr->warnings > 0))
		printf("INVALID: %s%s\n", name,
		       fr->findings == 0 ? " (warnings, with --strict)" : "");
	else if (fr->valid == 1)
		printf("OK: %s is a valid Karta definition (GVK: %s)\n", name, fr->gvks);
	else
		printf("OK: %s holds %zu valid Karta definitions (GVK: %s)\n", name, fr->valid, fr->gvks);
	fwrite(fr->text, 1, fr->len, stdout);
}

/* The objects of --sample FILE: every document, kind: List items spread out. */
static int load_sample(sample_source *s, const char *path, wmap_error *err)
{
	wmap_yaml_opts yo = { .allow_aliases = 1 };
	json_t *docs = NULL, *d;
	size_t i;
	int rc;

	s->name = display_name(path);
	if ((rc = wmap_yaml_parse_file(&docs, path, &yo, err)) != 0)
		return rc;
	if (!(s->objects = json_array())) {
		json_decref(docs);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	json_array_foreach(docs, i, d) {
		const json_t *items = json_object_get(d, "items");
		if (json_is_array(items) && json_is_string(json_object_get(d, "kind")))
			json_array_extend(s->objects, (json_t *)items);
		else if (json_is_object(d))
			json_array_append(s->objects, d);
	}
	json_decref(docs);
	if (json_array_size(s->objects) == 0)
		return wmap_error_set(err, WMAP_EINVAL, "%s: no object in the --sample file", s->name);
	return 0;
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
	wmap_error err = { 0 };
	wmap_file_list files = { 0 };
	file_result *res = NULL;
	size_t i, findings = 0, failed = 0, warnings = 0, stdin_uses = 0;
	int rc = 0, opened = 0, strict = cli_options_get(o, "strict") != NULL;
	const char *sample_path = cli_options_get(o, "sample");
	crd_source src = { NULL, NULL, NULL };
	sample_source sample = { NULL, NULL };
	live_ctx lc;

	if ((rc = cli_require_table(o, &cli_cmd_validate)) != 0)
		return rc;
	if (o->n_args == 0)
		return cli_usage_error(o, &cli_cmd_validate,
				       "validate needs a FILE or DIR (- reads standard input)");
	src.file = cli_options_get(o, "crd");
	if (src.file && cli_options_get(o, "from-cluster"))
		return cli_usage_error(o, &cli_cmd_validate, "--crd and --from-cluster exclude each other");
	for (i = 0; i < o->n_args; i++)
		stdin_uses += strcmp(o->args[i], "-") == 0;
	stdin_uses += (src.file && strcmp(src.file, "-") == 0) + (sample_path && strcmp(sample_path, "-") == 0);
	if (stdin_uses > 1)
		return cli_usage_error(o, &cli_cmd_validate,
				       "standard input (-) can be read once: by one FILE, --crd or --sample");
	for (i = 0; i < o->n_args && rc == 0; i++)
		rc = wmap_file_list_add(&files, o->args[i], &err);
	if (rc == 0 && src.file)
		rc = load_crds(&src.docs, src.file, &err);
	if (rc == 0 && sample_path)
		rc = load_sample(&sample, sample_path, &err);
	if (rc != 0)
		goto cleanup;
	if (cli_options_get(o, "from-cluster")) {
		if ((rc = live_open(&lc, o)) != 0) {
			live_close(&lc);
			goto done;
		}
		opened = 1;
		src.lc = &lc;
	}
	if (!(res = calloc(files.n, sizeof(*res)))) {
		rc = wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (i = 0; i < files.n; i++) {
		if (!(res[i].body = open_memstream(&res[i].text, &res[i].len))) {
			rc = wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
			goto cleanup;
		}
		check_file(&res[i], files.paths[i], src.file || src.lc ? &src : NULL,
			   sample_path ? &sample : NULL);
		fclose(res[i].body);
		res[i].body = NULL;
		findings += res[i].findings;
		warnings += res[i].warnings;
		failed += res[i].findings > 0;
	}
	/* One verdict per file, the valid ones first: a failure is the last thing on screen,
	 * never followed by an OK that could be mistaken for the run's. */
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < files.n; i++)
			if ((res[i].findings > 0 || (strict && res[i].warnings > 0)) == pass)
				print_verdict(&res[i], display_name(files.paths[i]), strict);
	if (findings > 0 && files.n == 1)
		rc = wmap_error_set(&err, WMAP_EINVALID, "%zu finding%s in %s", findings,
				    findings == 1 ? "" : "s", display_name(files.paths[0]));
	else if (findings > 0)
		rc = wmap_error_set(&err, WMAP_EINVALID, "%zu finding%s in %zu of %zu files", findings,
				    findings == 1 ? "" : "s", failed, files.n);
cleanup:
	fflush(stdout);
	/* Invalid, unreadable or not YAML: all exit 1, never 2 (see the top). */
	if (rc != 0)
		rc = (cli_fail(&err), CLI_EXIT_ERROR);
	else if (strict && warnings > 0)
		rc = (cli_error("%zu warning%s, with --strict", warnings, warnings == 1 ? "" : "s"),
		      CLI_EXIT_WARNINGS);
done:
	if (opened)
		live_close(&lc);
	for (i = 0; res && i < files.n; i++) {
		if (res[i].body)
			fclose(res[i].body);
		free(res[i].text);
	}
	free(res);
	wmap_file_list_clear(&files);
	json_decref(src.docs);
	json_decref(sample.objects);
	return rc;
}

const cli_command cli_cmd_validate = {
	.name = "validate",
	.summary = "Check Karta definitions in files and folders (paths too, with --crd)",
	.usage = "validate (FILE|DIR|-)... [--crd CRD-FILE | --from-cluster]",
	.help =
		"Checks every document of every FILE (- is standard input; a DIR is read\n"
		"recursively: *.yaml, *.yml, *.json in name order, hidden entries skipped) with\n"
		"upstream's rules: the structure, unique component names, owner references,\n"
		"ownership cycles, gang members, and that every jq expression compiles and uses no\n"
		"forbidden builtin (del, range, paths, recurse, walk, repeat, .., assignments).\n"
		"\n"
		"Prints one verdict per file, the valid files first and the failing ones last:\n"
		"`OK: FILE is a valid Karta definition (GVK: ...)` (`OK: FILE holds N valid Karta\n"
		"definitions` for several documents), or `INVALID: FILE` followed by every finding.\n"
		"\n"
		"With --crd or --from-cluster, every expression a valid definition evaluates on its\n"
		"workload (pod templates, pod specs, metadata, replicas, instance ids, status,\n"
		"suspend/resume actions) is also walked through the structural schema of the\n"
		"definition's version in its kind's CustomResourceDefinition: plain paths, and the\n"
		"field reads of the rest of wmap's jq subset (pipes, as-bindings, //, if, select,\n"
		"map, any, all, to_entries, object construction), with what wmap writes under each\n"
		"pod template (labels, annotations, schedulerName, priorityClassName), strings\n"
		"compared with == or != and byPhase values against a field's enum. A field the\n"
		"schema lacks makes the file INVALID and is listed under `SCHEMA:` with the Karta\n"
		"field that holds it. --crd reads the CRDs from a file (several documents allowed);\n"
		"--from-cluster reads the CRD of each definition's kind from the cluster of the\n"
		"kubeconfig (connection flags as for the live commands, --cluster NAME included).\n"
		"Expressions outside the subset (left to libjq) are not checked.\n"
		"\n"
		"--sample FILE resolves the objects of FILE (documents, List items) through each\n"
		"valid definition of their kind and warns, as upstream's karta-verify does, where\n"
		"the definition finds nothing: a spec path that matched nothing, a pod spec without\n"
		"containers, a multi-instance component without instances, an object .status no\n"
		"status mapping matches. With --strict a warning makes its file INVALID (exit 8).\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap validate my-karta.yaml\n"
		"  kubectl wmap validate kartas/ extra-karta.yaml\n"
		"  kubectl get karta my-karta -o yaml | kubectl wmap validate -\n"
		"  kubectl wmap validate my-karta.yaml --crd jobset-crd.yaml\n"
		"  kubectl wmap validate my-karta.yaml --from-cluster\n"
		"  kubectl wmap validate my-karta.yaml --crd widget-crd.yaml --sample widget.yaml --strict\n"
		"\n"
		"Exit codes: 0 every file valid (and every checked path in its schema), 1 a file\n"
		"invalid, a path missing from the schema, unreadable or not YAML, or the cluster\n"
		"failed, 2 usage, 8 warnings with --strict (and nothing invalid).\n",
	.flags = flags,
	.run = run,
};
