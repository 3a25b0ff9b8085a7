/* kubectl-wmap: the entry point. Finds the command, parses the flags with that command's
 * table, and hands over. kubectl runs us as `kubectl-wmap ARGS...` for `kubectl wmap ARGS...`
 * and passes every flag through, so the connection flags are ours to parse too. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
	const cli_flag *tables[16];
	const cli_command *cmd, *c;
	const char *name;
	cli_options opts;
	size_t i, n = 0;

	for (i = 0; (c = cli_command_at(i)) != NULL && n + 1 < sizeof(tables) / sizeof(tables[0]); i++)
		if (c->flags)
			tables[n++] = c->flags;
	tables[n] = NULL;

	/* Completion gets the raw words: half-typed flags must not be usage errors. */
	if (argc >= 2 && strcmp(argv[1], "__complete") == 0)
		return cli_complete(argc - 2, argv + 2);
	/* `kli --version` prints the version; we keep that spelling for scripts. */
	if (argc == 2 && strcmp(argv[1], "--version") == 0)
		return cli_cmd_version.run(&(cli_options){ .prog = "kubectl wmap" });

	name = cli_options_find_command(argc, argv, tables);
	cmd = cli_command_find(name);
	if (cli_options_parse(&opts, argc, argv, cmd ? cmd->flags : NULL) != 0) {
		if (name && !cmd)
			return cli_unknown_command(&opts, name);
		return cli_usage_error(&opts, cmd, "%s", opts.message);
	}
	if (name && !cmd)
		return cli_unknown_command(&opts, name);
	if (!cmd) {
		if (opts.help) {
			cli_print_help(stdout, &opts, NULL);
			return CLI_EXIT_OK;
		}
		cli_print_help(stderr, &opts, NULL);
		return CLI_EXIT_USAGE;
	}
	if (opts.help) {
		cli_print_help(stdout, &opts, cmd);
		return CLI_EXIT_OK;
	}
	if (opts.wide && !cmd->wide_output)
		return cli_usage_error(&opts, cmd, "-o wide is supported by get only");
	return cmd->run(&opts);
}
