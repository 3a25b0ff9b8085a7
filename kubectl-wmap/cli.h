/* kubectl-wmap: what every command shares: the command table entry, exit codes, error
 * printing and the set-up of the definition registry from the global flags.
 *
 * A command lives in kubectl-wmap/cmd_<name>.c and exports one
 * `const cli_command cli_cmd_<name>`; cli.c lists them. Commands print their results on
 * stdout and errors on stderr as `error: <message>`, and return one of the CLI_EXIT_*
 * codes. */
#ifndef KUBECTL_WMAP_CLI_H
#define KUBECTL_WMAP_CLI_H

#include <stdio.h>

#include "options.h"
#include "wmap/error.h"
#include "wmap/policy.h"
#include "wmap/registry.h"
#include "wmap/verify.h"
#include "wmap/workload.h"

enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_ERROR = 1,       /* bad input, invalid definition, I/O, cluster */
	CLI_EXIT_USAGE = 2,       /* unknown command or flag, wrong arguments */
	CLI_EXIT_NOTFOUND = 3,    /* a named definition or workload does not exist */
	CLI_EXIT_NODEF = 4,       /* no Karta definition covers the workload's type */
	CLI_EXIT_LIMIT = 5,       /* logs: more pods than --max-pods */
	CLI_EXIT_NOFIT = 6,       /* fit: every cluster answered no or no? */
	CLI_EXIT_FIT_UNKNOWN = 7, /* fit: none fits and at least one cluster could not be evaluated */
	CLI_EXIT_WARNINGS = 8,    /* --strict: a definition found nothing somewhere (warnings) */
};

typedef struct cli_command {
	const char *name;
	const char *summary;   /* one line for the command list */
	const char *usage;     /* the synopsis after the program name */
	const char *help;      /* what --help prints between the synopsis and the flags */
	const cli_flag *flags; /* the command's own flags, NULL-name terminated; may be NULL */
	int (*run)(const cli_options *opts);
	int wide_output; /* accepts -o wide */
} cli_command;

/* The commands, in the order `help` lists them; NULL after the last. */
const cli_command *cli_command_at(size_t i);
const cli_command *cli_command_find(const char *name);
/* The command a mistyped name most likely meant (edit distance <= 2, or a prefix); NULL
 * when none is close. */
const cli_command *cli_command_suggest(const char *name);
/* Levenshtein distance of two short words (letter case counts); 99 when one is longer than
 * 64 characters (never close). */
size_t cli_edit_distance(const char *a, const char *b);
/* Reports an unknown command as a usage error, with a suggestion; returns CLI_EXIT_USAGE. */
int cli_unknown_command(const cli_options *opts, const char *name);

/* Prints the help of cmd (NULL: the plugin's overview) on out. */
void cli_print_help(FILE *out, const cli_options *opts, const cli_command *cmd);

/* Prints `error: <message>` on stderr and returns CLI_EXIT_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints `error: <message>` and a hint to --help on stderr; returns CLI_EXIT_USAGE.
 * cmd may be NULL (the hint then points at the plugin's help). */
int cli_usage_error(const cli_options *opts, const cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The exit code for a core error code: WMAP_ENODEF -> CLI_EXIT_NODEF, others -> 1. */
int cli_exit_code(int wmap_code);

/* Prints prefix and len bytes of text (less at a NUL) and a newline; control characters
 * print as '?': messages quote objects, and an object must not drive the terminal. */
void cli_print_line(FILE *out, const char *prefix, const char *text, size_t len);

/* Prints err as `error: <message>` (every line of a multi-line message) and returns the
 * exit code for its code. */
int cli_fail(const wmap_error *err);

/* A registry with the embedded catalog and every --definitions path (origin file), owned
 * by the caller. */
int cli_registry_load(wmap_registry **out, const cli_options *opts, wmap_error *err);
/* The same, for commands that read one object: only the catalog files of the object's kind
 * are parsed (the whole catalog takes most of a describe -f otherwise). */
int cli_registry_load_for(wmap_registry **out, const cli_options *opts, const json_t *object,
			  wmap_error *err);

/* The policies of every --policy FILE|DIR (repeatable), merged in command-line order
 * (wmap_policy_set_load_paths); *out is NULL when no --policy was given. Owned by the
 * caller. */
int cli_policy_load(wmap_policy_set **out, const cli_options *opts, wmap_error *err);

/* The --strict switch of describe, mutate, audit and validate: its flag table row. */
#define CLI_FLAG_STRICT                                                                   \
	{                                                                                 \
		"strict", NULL, 0, NULL,                                                  \
			"exit 8 when a definition found nothing somewhere (the warnings)" \
	}

/* Prints what the definition found nothing for in w (wmap_workload_verify) on stderr, one
 * `warning: <where>: <finding>` line each (where may be NULL); returns how many. flags are
 * WMAP_VERIFY_* flags. */
size_t cli_warn_verify(const wmap_workload *w, unsigned flags, const char *where);

/* Resolves object (with WMAP_VERIFY_NO_STATUS in flags: without its status) and prints
 * what its definition found nothing for, as cli_warn_verify; returns how many. An object
 * that does not resolve prints nothing here (the command reports it its own way). */
size_t cli_verify_object(wmap_engine *eng, json_t *object, unsigned flags, const char *where);

/* --queue names a queue of the --gang-scheduler: refused (usage error, CLI_EXIT_USAGE)
 * when no scheduler with queues (kai, volcano, yunikorn, kueue) is given, where it would be
 * silently ignored. Returns 0 otherwise (the scheduler's own name is checked by the caller). */
int cli_require_queue_scheduler(const cli_options *opts, const cli_command *cmd);

/* Refuses -o json|yaml for commands that only print text; returns 0 or CLI_EXIT_USAGE. */
int cli_require_table(const cli_options *opts, const cli_command *cmd);

/* Shell completion: `kubectl-wmap __complete WORDS... CURRENT`, as kubectl (1.26+) runs
 * kubectl_complete-wmap. Prints one candidate per line (`candidate<TAB>description`), then
 * `:<directive>` (Cobra's ShellCompDirective). words are the words after the plugin name;
 * the last is the one being completed (possibly ""). */
int cli_complete(int n, char **words);

extern const cli_command cli_cmd_describe;
extern const cli_command cli_cmd_definitions;
extern const cli_command cli_cmd_validate;
extern const cli_command cli_cmd_version;
extern const cli_command cli_cmd_help;

#endif
