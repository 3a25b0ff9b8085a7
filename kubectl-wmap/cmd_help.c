/* kubectl-wmap help [COMMAND]: the overview, or one command's help. */
#include <stdio.h>

#include "cli.h"

static int run(const cli_options *o)
{
	const cli_command *cmd;

	if (o->n_args > 1)
		return cli_usage_error(o, &cli_cmd_help, "help takes at most one COMMAND");
	if (o->n_args == 0) {
		cli_print_help(stdout, o, NULL);
		return CLI_EXIT_OK;
	}
	if ((cmd = cli_command_find(o->args[0])) == NULL)
		return cli_unknown_command(o, o->args[0]);
	cli_print_help(stdout, o, cmd);
	return CLI_EXIT_OK;
}

const cli_command cli_cmd_help = {
	.name = "help",
	.summary = "Show help for the plugin or for one command",
	.usage = "help [COMMAND]",
	.help = "Every command also takes -h/--help.\n",
	.flags = NULL,
	.run = run,
};
