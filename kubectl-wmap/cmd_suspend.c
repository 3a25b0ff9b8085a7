/* kubectl-wmap suspend|resume TYPE/NAME: the definition's suspend or resume actions
 * (suspendDefinition: a path and a JSON value each), written at the locations the engine
 * finds for each path, in one guarded JSON Patch (see live_patch.c). */
#include <stdio.h>
#include <string.h>

#include "live.h"
#include "wmap/pods.h"

static const cli_flag flags[] = {
	{ "dry-run", NULL, 0, "none|client|server", "client: send nothing; server: ?dryRun=All" },
	{ "diff", NULL, 0, NULL, "print a unified diff of the object before and after" },
	{ NULL, NULL, 0, NULL, NULL },
};

static int build(json_t **out, live_ctx *lc, live_target *t, void *arg)
{
	int resume = *(const int *)arg;
	wmap_error err = { 0 };
	int rc = wmap_actions_patch(out, lc->eng, t->def, t->object, resume, &err);

	if (rc == WMAP_ENOTFOUND) {
		fprintf(stderr, "error: %s/%s: the definition %s has no %s actions\n", t->label, t->name,
			t->def->name, resume ? "resume" : "suspend");
		return CLI_EXIT_ERROR;
	}
	return rc ? live_fail(&err, CLI_EXIT_ERROR) : 0;
}

static int run_action(const cli_options *o, const cli_command *cmd, int resume)
{
	char type[256], name[256];
	json_t *result = NULL, *before = NULL;
	int has_name, rc;
	size_t n_ops = 0;
	live_dry dry;
	live_ctx lc;
	live_target t;

	memset(&lc, 0, sizeof(lc));
	memset(&t, 0, sizeof(t));
	if ((rc = live_dry_run(&dry, o, cmd)) != 0 ||
	    (rc = live_split_target(type, sizeof(type), name, sizeof(name), &has_name, o, cmd, 1)) != 0)
		goto done;
	if ((rc = live_open(&lc, o)) != 0 || (rc = live_target_load(&t, &lc, type, name)) != 0)
		goto done;
	if ((rc = live_patch_guarded(&result, &before, &n_ops, &lc, &t, build, &resume, dry)) != 0)
		goto done;
	rc = live_patch_report(o, &t, before, result, n_ops, dry, resume ? "resumed" : "suspended", NULL);
done:
	json_decref(result);
	json_decref(before);
	live_target_clear(&t);
	live_close(&lc);
	return rc;
}

static int run_suspend(const cli_options *o)
{
	return run_action(o, &cli_cmd_suspend, 0);
}

static int run_resume(const cli_options *o)
{
	return run_action(o, &cli_cmd_resume, 1);
}

const cli_command cli_cmd_suspend = {
	.name = "suspend",
	.summary = "Suspend a live workload through its definition's suspend actions",
	.usage = "suspend TYPE/NAME [--dry-run=client|server] [--diff] [-o json|yaml]",
	.help =
		"Writes the values of the definition's suspendActions (for a JobSet .spec.suspend =\n"
		"true) in one JSON Patch guarded by metadata.resourceVersion, children's actions\n"
		"first. Nothing is written when the workload is already suspended.\n"
		"\n"
		"Exit codes: 0 ok, 1 error, 2 usage, 3 workload not found, 4 no definition covers the type.\n",
	.flags = flags,
	.run = run_suspend,
};

const cli_command cli_cmd_resume = {
	.name = "resume",
	.summary = "Resume a suspended live workload through its definition's resume actions",
	.usage = "resume TYPE/NAME [--dry-run=client|server] [--diff] [-o json|yaml]",
	.help =
		"Writes the values of the definition's resumeActions (for a JobSet .spec.suspend =\n"
		"false) in one JSON Patch guarded by metadata.resourceVersion, the root's first.\n"
		"\n"
		"Exit codes: 0 ok, 1 error, 2 usage, 3 workload not found, 4 no definition covers the type.\n",
	.flags = flags,
	.run = run_resume,
};
