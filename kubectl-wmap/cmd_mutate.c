/* kubectl-wmap mutate -f FILE: what wmap-webhook would write into a workload on CREATE,
 * computed offline with the same admission code (src/admission.c). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "render.h"
#include "wmap/admission.h"
#include "wmap/patch.h"
#include "wmap/policy.h"
#include "wmap/yaml.h"

/* cli.c refers to this command weakly; cli.h does not declare it. */
extern const cli_command cli_cmd_mutate;

static const cli_flag flags[] = {
	{ "filename", "file", 'f', "FILE", "the workload object, YAML or JSON (- reads stdin)" },
	{ "policy", NULL, 0, "FILE|DIR",
	  "WorkloadPolicy documents to apply (repeatable; a folder is read recursively)" },
	{ "gang-scheduler", NULL, 0, "NAME",
	  "kai, volcano, coscheduling, yunikorn, kueue, native or none (default none)" },
	{ "queue", NULL, 0, "NAME", "queue for the gang scheduler (kai, volcano, yunikorn or kueue)" },
	{ "operation", NULL, 0, "OP", "CREATE (default) or UPDATE" },
	CLI_FLAG_STRICT,
	{ NULL, NULL, 0, NULL, NULL },
};

static const char *display_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

static int run(const cli_options *o)
{
	wmap_error err = { 0 };
	wmap_registry *reg = NULL;
	wmap_engine *eng = NULL;
	wmap_policy_set *policies = NULL;
	json_t *docs = NULL, *patch = NULL, *warnings = NULL, *object = NULL;
	const char *file = cli_options_get(o, "filename");
	const char *sched = cli_options_get(o, "gang-scheduler");
	const char *op = cli_options_get(o, "operation");
	const char *reason = NULL;
	wmap_admission_config cfg = { 0 };
	int rc, strict_failed = 0;

	if (!file || !*file)
		return cli_usage_error(o, &cli_cmd_mutate, "mutate needs -f FILE");
	if (o->n_args > 0)
		return cli_usage_error(o, &cli_cmd_mutate, "mutate takes no argument (got \"%s\")",
				       o->args[0]);
	if (!op)
		op = "CREATE";
	if (!wmap_policy_operation(op))
		return cli_usage_error(o, &cli_cmd_mutate,
				       "--operation must be CREATE or UPDATE (got \"%s\")", op);
	if (sched && wmap_gang_scheduler_parse(&cfg.scheduler, sched, &err) != 0)
		return cli_usage_error(o, &cli_cmd_mutate, "--gang-scheduler: %s", err.message);
	if ((rc = cli_require_queue_scheduler(o, &cli_cmd_mutate)) != 0)
		return rc;
	cfg.queue = cli_options_get(o, "queue");

	wmap_yaml_opts yo = { 0 };
	yo.allow_aliases = 1;
	if ((rc = wmap_yaml_parse_file(&docs, file, &yo, &err)) != 0)
		goto cleanup;
	if (json_array_size(docs) != 1 || !json_is_object(json_array_get(docs, 0))) {
		rc = wmap_error_set(&err, WMAP_EINVAL, "%s: mutate -f takes exactly one object "
						       "(found %zu documents)",
				    display_name(file),
				    json_array_size(docs));
		goto cleanup;
	}
	object = json_array_get(docs, 0);
	/* The webhook sees one object, never a List: say so, rather than "no definition". */
	const char *kind = json_string_value(json_object_get(object, "kind"));
	json_t *items = json_object_get(object, "items");
	if (kind && strlen(kind) >= 4 && !strcmp(kind + strlen(kind) - 4, "List") &&
	    json_is_array(items)) {
		rc = wmap_error_set(&err, WMAP_EINVAL,
				    "%s: mutate -f takes exactly one object (found a %s of %zu "
				    "items; describe -f and audit -f read Lists)",
				    display_name(file), kind, json_array_size(items));
		goto cleanup;
	}
	if ((rc = cli_policy_load(&policies, o, &err)) != 0)
		goto cleanup;
	cfg.policies = policies;
	if ((rc = cli_registry_load(&reg, o, &err)) != 0 ||
	    (rc = wmap_engine_new(&eng, reg, &err)) != 0)
		goto cleanup;
	rc = wmap_admission_mutate(&patch, &warnings, &reason, eng, &cfg, object, op,
				   o->kube.namespace_, &err);
	if (rc != 0) {
		/* The webhook would allow the object unchanged; offline, say why as an error. */
		wmap_error_prefix(&err, "%s", display_name(file));
		goto cleanup;
	}
	if (o->output == CLI_OUTPUT_TABLE) {
		/* The default output is the JSON Patch itself, as the webhook would send it. */
		rc = render_value(stdout, patch, CLI_OUTPUT_JSON, &err);
	} else {
		json_t *result = json_deep_copy(object);
		if (!result) {
			rc = wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
			goto cleanup;
		}
		rc = wmap_patch_apply(&result, patch, &err);
		if (rc == 0)
			rc = render_value(stdout, result, o->output, &err);
		json_decref(result);
	}
	fflush(stdout);
	size_t i;
	json_t *w;
	json_array_foreach(warnings, i, w)
		fprintf(stderr, "warning: %s\n", json_string_value(w));
	if (cli_verify_object(eng, object, WMAP_VERIFY_NO_STATUS, NULL) > 0 &&
	    cli_options_get(o, "strict"))
		strict_failed = 1;
cleanup:
	fflush(stdout);
	json_decref(patch);
	json_decref(warnings);
	json_decref(docs);
	wmap_policy_set_free(policies);
	wmap_engine_free(eng);
	wmap_registry_free(reg);
	return rc != 0 ? cli_fail(&err) : strict_failed ? CLI_EXIT_WARNINGS
							: CLI_EXIT_OK;
}

const cli_command cli_cmd_mutate = {
	.name = "mutate",
	.summary = "Show what wmap-webhook would write into a workload (offline)",
	.usage = "mutate -f FILE [--policy FILE|DIR]... [--gang-scheduler NAME] [--queue NAME] "
		 "[-o json|yaml] [flags]",
	.help =
		"Runs the webhook's admission logic on one object without a cluster: identity\n"
		"labels on every pod template (wmap.io/workload-kind, workload-name, component,\n"
		"instance), the gang scheduler's hints and the settings of matching policies.\n"
		"\n"
		"Prints the RFC 6902 JSON Patch the webhook would return (the default, also\n"
		"-o table), or the patched object with -o json|yaml. Warnings go to stderr.\n"
		"Applying the patch and running mutate again prints [] (the patch is idempotent).\n"
		"--policy FILE|DIR may be repeated; a folder is read recursively (*.yaml, *.yml,\n"
		"*.json, in name order); the policies apply in command-line order, each on the\n"
		"result of the ones before, and two policies of one name are an error that names\n"
		"both places.\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap mutate -f jobset.yaml\n"
		"  kubectl wmap mutate -f jobset.yaml --gang-scheduler volcano -o yaml\n"
		"  kubectl wmap mutate -f job.yaml --policy policies.yaml -n team-a\n"
		"\n"
		"Warns (stderr), as describe -f does, where the definition finds nothing in the\n"
		"object; --strict turns the warnings into exit code 8.\n"
		"\n"
		"Exit codes: 0 ok, 1 error (unreadable object or policy, evaluation error),\n"
		"2 usage, 4 no Karta definition covers the object's type, 8 warnings with\n"
		"--strict.\n",
	.flags = flags,
	.run = run,
};
