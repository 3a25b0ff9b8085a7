/* kubectl-wmap: command-line flags.
 *
 * One parse of argv fills one cli_options: the global flags (definitions, output), the
 * kubectl connection flags (kept for the live commands), the command name, its positional
 * arguments and the values of the command's own flags. Nothing is allocated: every string
 * is borrowed from argv, which lives as long as the process. */
#ifndef KUBECTL_WMAP_OPTIONS_H
#define KUBECTL_WMAP_OPTIONS_H

#include <stddef.h>

#define CLI_MAX_ARGS 64        /* positional arguments after the command */
#define CLI_MAX_DEFINITIONS 32 /* --definitions FILE|DIR, repeatable */
#define CLI_MAX_VALUES 64      /* values of command flags, in command-line order */
#define CLI_MESSAGE_MAX 512
#define CLI_MAX_AS_GROUPS 32 /* --as-group GROUP, repeatable */
#define CLI_MAX_CONTEXTS 32  /* --context NAME, repeatable (fit) */

typedef enum cli_output {
	CLI_OUTPUT_TABLE,
	CLI_OUTPUT_JSON,
	CLI_OUTPUT_YAML,
} cli_output;

/* One flag a command (or the whole plugin) accepts. Tables end with an entry whose name
 * is NULL. */
typedef struct cli_flag {
	const char *name;  /* long name without the dashes: "filename" */
	const char *alias; /* a second long name ("file"), or NULL */
	char short_name;   /* 'f', or 0 */
	const char *arg;   /* placeholder of the value ("FILE"); NULL for a switch */
	const char *help;  /* one line for --help */
} cli_flag;

typedef struct cli_value {
	const char *name;  /* the flag's canonical long name */
	const char *value; /* "true" for a switch */
} cli_value;

/* The kubectl connection flags. Parsed now so that the live-cluster commands only add
 * commands; NULL when not given. */
typedef struct cli_kube_options {
	const char *kubeconfig;
	const char *context; /* the last --context */
	size_t n_contexts;   /* every --context, in order (fit queries several) */
	const char *contexts[CLI_MAX_CONTEXTS];
	const char *cluster;
	const char *user;
	const char *namespace_;
	const char *request_timeout;
	int all_namespaces;
	/* over the kubeconfig's cluster and user, as kubectl's flags of the same names */
	const char *server;
	const char *token; /* secret: never printed */
	const char *as_user;
	const char *as_uid;
	size_t n_as_groups;
	const char *as_groups[CLI_MAX_AS_GROUPS];
	const char *certificate_authority;
	const char *client_certificate;
	const char *client_key;
	int insecure_skip_tls_verify;
	const char *tls_server_name;
} cli_kube_options;

typedef struct cli_options {
	const char *prog;    /* "kubectl wmap" (as a plugin) or the binary's name */
	const char *command; /* the first positional argument; NULL when none */
	int help;            /* -h/--help was given */

	cli_output output;
	int output_set; /* -o was given (commands that print text only refuse it) */
	int wide;       /* -o wide: the table with more columns (output is TABLE) */
	size_t n_definitions;
	const char *definitions[CLI_MAX_DEFINITIONS];

	cli_kube_options kube;

	size_t n_args; /* positional arguments after the command */
	const char *args[CLI_MAX_ARGS];

	size_t n_values; /* the command's own flags */
	cli_value values[CLI_MAX_VALUES];

	/* Why parsing failed (a usage error), empty otherwise. */
	char message[CLI_MESSAGE_MAX];
} cli_options;

/* The flags every command accepts (help, definitions, output, kubectl connection). */
extern const cli_flag cli_global_flags[];

/* Finds the command name in argv without judging the rest: the first argument that is
 * neither a flag nor the value of one. tables (NULL-terminated) are every command's own
 * flags, consulted so that the value of a command flag placed before the command is not
 * taken for the command. NULL when there is none. */
const char *cli_options_find_command(int argc, char **argv, const cli_flag *const *tables);

/* Parses argv (argv[0] is the program) with the global flags plus command_flags (may be
 * NULL). Returns 0, or -1 for a usage error with the reason in opts->message. */
int cli_options_parse(cli_options *opts, int argc, char **argv, const cli_flag *command_flags);

/* The flag a token names ("--output", "-o", "--output=json"), looked up in the global flags
 * and then in command_flags (may be NULL); NULL when none. */
const cli_flag *cli_flag_lookup(const char *token, const cli_flag *command_flags);

/* The last value of a command flag, NULL when it was not given (borrowed from argv). */
const char *cli_options_get(const cli_options *opts, const char *name);

/* Every value of a repeatable command flag, in command-line order, into out (at most max);
 * returns how many were given (borrowed from argv). */
size_t cli_options_all(const char **out, size_t max, const cli_options *opts, const char *name);

/* The name of an output format: "table", "json", "yaml". */
const char *cli_output_name(cli_output o);

#endif
