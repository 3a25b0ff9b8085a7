/* kubectl-wmap __complete: shell completion for kubectl (see cli.h, cli_complete).
 *
 * kubectl 1.26+ runs `kubectl_complete-wmap WORDS... CURRENT` on TAB; that script (shipped
 * beside the binary) runs `kubectl-wmap __complete "$@"`. Completes commands, flags, -o
 * values and definition names; files are left to the shell (directive 0). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "live.h"
#include "wmap/registry.h"

/* Cobra's ShellCompDirective bits. */
#define DIRECTIVE_FILES 0    /* let the shell complete file names */
#define DIRECTIVE_NO_FILES 4 /* ShellCompDirectiveNoFileComp */

static int has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void candidate(const char *word, const char *prefix, const char *description)
{
	if (!has_prefix(word, prefix))
		return;
	if (description && description[0])
		printf("%s\t%s\n", word, description);
	else
		printf("%s\n", word);
}

static void complete_flags(const cli_flag *f, const char *prefix)
{
	char word[80];

	for (; f && f->name; f++) {
		snprintf(word, sizeof(word), "--%s", f->name);
		candidate(word, prefix, f->help);
	}
}

static void complete_commands(const char *prefix)
{
	const cli_command *c;
	size_t i;

	for (i = 0; (c = cli_command_at(i)) != NULL; i++)
		candidate(c->name, prefix, c->summary);
}

/* Names of the embedded definitions; a broken catalog just completes nothing. */
static void complete_definitions(const char *prefix)
{
	wmap_registry *reg = NULL;
	wmap_error err = { 0 };
	size_t i;

	if (wmap_registry_new(&reg, &err) == 0 && wmap_registry_add_catalog(reg, &err) == 0)
		for (i = 0; i < wmap_registry_count(reg); i++)
			candidate(wmap_registry_get(reg, i)->name, prefix, NULL);
	wmap_registry_free(reg);
}

/* The value of a flag: -o has three (get: four), audit's --fail-on three; file flags go to
 * the shell; the rest has none yet. */
static int complete_value(const cli_flag *f, const char *prefix, const cli_command *cmd)
{
	if (strcmp(f->name, "output") == 0) {
		candidate("table", prefix, NULL);
		if (cmd && cmd->wide_output)
			candidate("wide", prefix, NULL);
		candidate("json", prefix, NULL);
		candidate("yaml", prefix, NULL);
		return DIRECTIVE_NO_FILES;
	}
	if (strcmp(f->name, "fail-on") == 0) {
		candidate("deny", prefix, NULL);
		candidate("warn", prefix, NULL);
		candidate("audit", prefix, NULL);
		return DIRECTIVE_NO_FILES;
	}
	if (f->arg && (strstr(f->arg, "FILE") || strstr(f->arg, "DIR") ||
		       strstr(f->arg, "PATH")))
		return DIRECTIVE_FILES;
	return DIRECTIVE_NO_FILES;
}

int cli_complete(int n, char **words)
{
	char *argv[CLI_MAX_ARGS + 1];
	const cli_flag *tables[16];
	const cli_command *cmd = NULL, *c;
	const char *cur = n > 0 ? words[n - 1] : "";
	const cli_flag *prev_flag;
	const char *name;
	size_t i, k = 0;
	int directive = DIRECTIVE_NO_FILES, positional = 0;
	const char *target = NULL; /* the first argument of a live command (TYPE or TYPE/NAME) */

	if (n < 1 || n > CLI_MAX_ARGS) {
		printf(":%d\n", DIRECTIVE_NO_FILES);
		return CLI_EXIT_OK;
	}
	for (i = 0; (c = cli_command_at(i)) != NULL && k + 1 < sizeof(tables) / sizeof(tables[0]); i++)
		if (c->flags)
			tables[k++] = c->flags;
	tables[k] = NULL;
	/* The words before the current one, behind a program name, as main sees them. */
	argv[0] = "kubectl-wmap";
	for (i = 0; i + 1 < (size_t)n; i++)
		argv[i + 1] = words[i];
	name = cli_options_find_command(n, argv, tables);
	cmd = cli_command_find(name);
	prev_flag = n > 1 ? cli_flag_lookup(words[n - 2], cmd ? cmd->flags : NULL) : NULL;

	if (prev_flag && prev_flag->arg && !strchr(words[n - 2], '=') &&
	    (words[n - 2][1] == '-' || words[n - 2][2] == '\0')) {
		if (strcmp(prev_flag->name, "namespace") == 0)
			live_complete_namespaces(n, words, cur);
		else
			directive = complete_value(prev_flag, cur, cmd);
	} else if (cur[0] == '-') {
		complete_flags(cmd ? cmd->flags : NULL, cur);
		complete_flags(cli_global_flags, cur);
	} else if (!name) {
		complete_commands(cur);
	} else if (cmd) {
		/* Positional arguments already typed after the command. */
		for (i = 1; i < (size_t)n; i++) {
			const cli_flag *f = cli_flag_lookup(argv[i], cmd->flags);

			if (argv[i][0] == '-' && argv[i][1] != '\0') {
				if (f && f->arg && !strchr(argv[i], '=') &&
				    (argv[i][1] == '-' || argv[i][2] == '\0'))
					i++;
				continue;
			}
			positional++;
			if (positional == 2)
				target = argv[i];
		}
		positional--; /* the command itself */
		if (strcmp(cmd->name, "definitions") == 0 && positional == 0)
			complete_definitions(cur);
		else if (strcmp(cmd->name, "help") == 0 && positional == 0)
			complete_commands(cur);
		else if (strcmp(cmd->name, "validate") == 0 && positional == 0)
			directive = DIRECTIVE_FILES;
		else if (cmd == &cli_cmd_logs && positional == 1 && target && strchr(target, '/'))
			live_complete_components(n, words, target, cur);
		else if (cmd == &cli_cmd_get || cmd == &cli_cmd_patch || cmd == &cli_cmd_suspend ||
			 cmd == &cli_cmd_resume || cmd == &cli_cmd_describe || cmd == &cli_cmd_logs ||
			 strcmp(cmd->name, "fit") == 0)
			if (positional == 0 || (positional == 1 && target && !strchr(target, '/')))
				live_complete_target(n, words, positional == 1 ? target : NULL, cur);
	}
	printf(":%d\n", directive);
	return CLI_EXIT_OK;
}
