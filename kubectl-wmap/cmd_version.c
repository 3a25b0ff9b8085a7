/* kubectl-wmap version: the version the Makefile builds in (WMAP_VERSION). */
#include <jansson.h>
#include <stdio.h>

#include "cli.h"
#include "render.h"

#ifndef WMAP_VERSION
#define WMAP_VERSION "unknown"
#endif

static int run(const cli_options *o)
{
	wmap_error err = { 0 };
	json_t *v;
	int rc;

	if (o->n_args > 0)
		return cli_usage_error(o, &cli_cmd_version, "version takes no arguments");
	if (o->output == CLI_OUTPUT_TABLE) {
		printf("kubectl-wmap version %s\n", WMAP_VERSION);
		return CLI_EXIT_OK;
	}
	if ((v = json_pack("{s:s}", "version", WMAP_VERSION)) == NULL)
		return cli_error("out of memory");
	rc = render_value(stdout, v, o->output, &err);
	json_decref(v);
	return rc != 0 ? cli_fail(&err) : CLI_EXIT_OK;
}

const cli_command cli_cmd_version = {
	.name = "version",
	.summary = "Print the version of kubectl-wmap",
	.usage = "version [-o json|yaml]",
	.help = "",
	.flags = NULL,
	.run = run,
};
