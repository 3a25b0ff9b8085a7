/* kubectl-wmap: command-line flags (see options.h).
 *
 * Flags follow kubectl (pflag) conventions: `--flag value`, `--flag=value`, `-o json`,
 * `-ojson`, `-o=json`, switches as `-A` or `--all-namespaces=true`, `--` ends the flags and
 * a lone `-` is an argument (standard input). Flags may come before or after the command. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "options.h"

const cli_flag cli_global_flags[] = {
	{ "help", NULL, 'h', NULL, "show help for the command" },
	{ "definitions", NULL, 0, "FILE|DIR",
	  "also read Karta definitions from a file or a directory (repeatable); "
	  "they take precedence over the built-in catalog" },
	{ "output", NULL, 'o', "FORMAT", "output format: table (default), json or yaml" },
	{ "kubeconfig", NULL, 0, "FILE", "path to the kubeconfig file (live commands)" },
	{ "context", NULL, 0, "NAME", "kubeconfig context to use (live commands)" },
	{ "cluster", NULL, 0, "NAME", "kubeconfig cluster to use (live commands)" },
	{ "user", NULL, 0, "NAME", "kubeconfig user to use (live commands)" },
	{ "server", NULL, 's', "URL", "the API server's address, over the kubeconfig's (live commands)" },
	{ "token", NULL, 0, "TOKEN", "bearer token for the API server (live commands)" },
	{ "as", NULL, 0, "USER", "impersonate this user (live commands)" },
	{ "as-group", NULL, 0, "GROUP", "impersonate this group, with --as (repeatable; live commands)" },
	{ "as-uid", NULL, 0, "UID", "impersonate this UID, with --as (live commands)" },
	{ "certificate-authority", NULL, 0, "FILE",
	  "CA certificate file to check the server with (live commands)" },
	{ "client-certificate", NULL, 0, "FILE", "client certificate file for TLS (live commands)" },
	{ "client-key", NULL, 0, "FILE", "client key file for TLS (live commands)" },
	{ "insecure-skip-tls-verify", NULL, 0, NULL,
	  "do not check the server's certificate: insecure (live commands)" },
	{ "tls-server-name", NULL, 0, "NAME",
	  "server name to check the certificate against, instead of the host (live commands)" },
	{ "namespace", NULL, 'n', "NAMESPACE", "namespace of the workload (live commands)" },
	{ "request-timeout", NULL, 0, "DURATION",
	  "how long to wait for the API server, e.g. 30s (live commands)" },
	{ "all-namespaces", NULL, 'A', NULL, "list across all namespaces (live commands)" },
	{ NULL, NULL, 0, NULL, NULL },
};

const char *cli_output_name(cli_output o)
{
	switch (o) {
	case CLI_OUTPUT_JSON: return "json";
	case CLI_OUTPUT_YAML: return "yaml";
	case CLI_OUTPUT_TABLE: break;
	}
	return "table";
}

static int usage(cli_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage(cli_options *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->message, sizeof(o->message), fmt, ap);
	va_end(ap);
	return -1;
}

static const cli_flag *find_long(const cli_flag *table, const char *name, size_t len)
{
	for (; table && table->name; table++) {
		if (strlen(table->name) == len && strncmp(table->name, name, len) == 0)
			return table;
		if (table->alias && strlen(table->alias) == len &&
		    strncmp(table->alias, name, len) == 0)
			return table;
	}
	return NULL;
}

static const cli_flag *find_short(const cli_flag *table, char c)
{
	for (; table && table->name; table++)
		if (table->short_name && table->short_name == c)
			return table;
	return NULL;
}

/* One flag token split up: which flag, whether it is global, and an inline value. */
typedef struct flag_token {
	const cli_flag *flag;
	int global;
	const char *name; /* as typed, without dashes or value, for messages */
	size_t name_len;
	const char *inline_value; /* after '=' or after a short flag's letter; NULL when none */
} flag_token;

static void split_token(flag_token *t, const char *arg, const cli_flag *command_flags)
{
	memset(t, 0, sizeof(*t));
	if (arg[1] == '-') {
		const char *eq;

		t->name = arg + 2;
		eq = strchr(t->name, '=');
		t->name_len = eq ? (size_t)(eq - t->name) : strlen(t->name);
		t->inline_value = eq ? eq + 1 : NULL;
		t->flag = find_long(cli_global_flags, t->name, t->name_len);
		t->global = t->flag != NULL;
		if (!t->flag)
			t->flag = find_long(command_flags, t->name, t->name_len);
	} else {
		t->name = arg + 1;
		t->name_len = 1;
		if (arg[2] != '\0')
			t->inline_value = arg[2] == '=' ? arg + 3 : arg + 2;
		t->flag = find_short(cli_global_flags, arg[1]);
		t->global = t->flag != NULL;
		if (!t->flag)
			t->flag = find_short(command_flags, arg[1]);
	}
}

const cli_flag *cli_flag_lookup(const char *token, const cli_flag *command_flags)
{
	flag_token t;

	if (!token || token[0] != '-' || token[1] == '\0' || strcmp(token, "--") == 0)
		return NULL;
	split_token(&t, token, command_flags);
	return t.flag;
}

const char *cli_options_find_command(int argc, char **argv, const cli_flag *const *tables)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		flag_token t;
		size_t k;

		if (strcmp(a, "--") == 0)
			return i + 1 < argc ? argv[i + 1] : NULL;
		if (a[0] != '-' || a[1] == '\0')
			return a;
		split_token(&t, a, NULL);
		for (k = 0; !t.flag && tables && tables[k]; k++)
			split_token(&t, a, tables[k]);
		/* An unknown flag is taken for a switch; the real parse reports it. */
		if (t.flag && t.flag->arg && !t.inline_value)
			i++;
	}
	return NULL;
}

static int parse_bool(int *out, const char *v)
{
	if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0) {
		*out = 1;
		return 0;
	}
	if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0) {
		*out = 0;
		return 0;
	}
	return -1;
}

static int set_global(cli_options *o, const cli_flag *f, const char *value)
{
	const char *n = f->name;

	if (strcmp(n, "help") == 0)
		return parse_bool(&o->help, value);
	if (strcmp(n, "all-namespaces") == 0)
		return parse_bool(&o->kube.all_namespaces, value);
	if (strcmp(n, "insecure-skip-tls-verify") == 0)
		return parse_bool(&o->kube.insecure_skip_tls_verify, value);
	if (strcmp(n, "as-group") == 0) {
		if (o->kube.n_as_groups == CLI_MAX_AS_GROUPS)
			return usage(o, "too many --as-group (at most %d)", CLI_MAX_AS_GROUPS);
		o->kube.as_groups[o->kube.n_as_groups++] = value;
		return 0;
	}
	if (strcmp(n, "definitions") == 0) {
		if (value[0] == '\0')
			return usage(o, "flag --definitions needs a file or directory");
		if (o->n_definitions == CLI_MAX_DEFINITIONS)
			return usage(o, "too many --definitions (at most %d)", CLI_MAX_DEFINITIONS);
		o->definitions[o->n_definitions++] = value;
		return 0;
	}
	if (strcmp(n, "output") == 0) {
		if (strcmp(value, "table") == 0)
			o->output = CLI_OUTPUT_TABLE;
		else if (strcmp(value, "json") == 0)
			o->output = CLI_OUTPUT_JSON;
		else if (strcmp(value, "yaml") == 0)
			o->output = CLI_OUTPUT_YAML;
		else if (strcmp(value, "wide") == 0)
			o->output = CLI_OUTPUT_TABLE; /* a table with more columns (get only) */
		else
			return usage(o, "unsupported output format \"%s\" (use table, wide, json or yaml)",
				     value);
		o->wide = strcmp(value, "wide") == 0;
		o->output_set = 1;
		return 0;
	}
	if (strcmp(n, "kubeconfig") == 0)
		o->kube.kubeconfig = value;
	else if (strcmp(n, "context") == 0) {
		if (o->kube.n_contexts == CLI_MAX_CONTEXTS)
			return usage(o, "--context given more than %d times", CLI_MAX_CONTEXTS);
		o->kube.context = value;
		o->kube.contexts[o->kube.n_contexts++] = value;
	} else if (strcmp(n, "cluster") == 0)
		o->kube.cluster = value;
	else if (strcmp(n, "user") == 0)
		o->kube.user = value;
	else if (strcmp(n, "namespace") == 0)
		o->kube.namespace_ = value;
	else if (strcmp(n, "request-timeout") == 0)
		o->kube.request_timeout = value;
	else if (strcmp(n, "server") == 0)
		o->kube.server = value;
	else if (strcmp(n, "token") == 0)
		o->kube.token = value;
	else if (strcmp(n, "as") == 0)
		o->kube.as_user = value;
	else if (strcmp(n, "as-uid") == 0)
		o->kube.as_uid = value;
	else if (strcmp(n, "certificate-authority") == 0)
		o->kube.certificate_authority = value;
	else if (strcmp(n, "client-certificate") == 0)
		o->kube.client_certificate = value;
	else if (strcmp(n, "client-key") == 0)
		o->kube.client_key = value;
	else if (strcmp(n, "tls-server-name") == 0)
		o->kube.tls_server_name = value;
	return 0;
}

static const char *program_name(const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	base = base ? base + 1 : (argv0 && argv0[0] ? argv0 : "kubectl-wmap");
	/* kubectl runs plugins by full path; users then type `kubectl wmap`, so usage lines
	 * say so (krew's guidance for plugin help). */
	if (strncmp(base, "kubectl-", 8) == 0)
		return "kubectl wmap";
	return base;
}

int cli_options_parse(cli_options *o, int argc, char **argv, const cli_flag *command_flags)
{
	int only_args = 0;
	int i;

	memset(o, 0, sizeof(*o));
	o->prog = program_name(argc > 0 ? argv[0] : NULL);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *value;
		flag_token t;

		if (only_args || a[0] != '-' || a[1] == '\0') {
			if (!o->command) {
				o->command = a;
				continue;
			}
			if (o->n_args == CLI_MAX_ARGS)
				return usage(o, "too many arguments (at most %d)", CLI_MAX_ARGS);
			o->args[o->n_args++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_args = 1;
			continue;
		}
		split_token(&t, a, command_flags);
		if (!t.flag) {
			if (a[1] == '-')
				return usage(o, "unknown flag: --%.*s", (int)t.name_len, t.name);
			return usage(o, "unknown shorthand flag: '%c' in %s", a[1], a);
		}
		if (t.flag->arg) {
			if (t.inline_value) {
				value = t.inline_value;
			} else if (i + 1 < argc) {
				value = argv[++i];
			} else {
				return usage(o, "flag needs an argument: --%s", t.flag->name);
			}
		} else if (t.inline_value) {
			int b;

			if (parse_bool(&b, t.inline_value) != 0) {
				if (a[1] != '-')
					return usage(o, "unknown shorthand flag: '%c' in %s",
						     t.inline_value[0], a);
				return usage(o, "invalid value \"%s\" for --%s (use true or false)",
					     t.inline_value, t.flag->name);
			}
			value = b ? "true" : "false";
		} else {
			value = "true";
		}
		if (t.global) {
			if (set_global(o, t.flag, value) != 0) {
				if (!o->message[0])
					usage(o, "invalid value \"%s\" for --%s", value, t.flag->name);
				return -1;
			}
			continue;
		}
		if (o->n_values == CLI_MAX_VALUES)
			return usage(o, "too many flags (at most %d)", CLI_MAX_VALUES);
		o->values[o->n_values].name = t.flag->name;
		o->values[o->n_values].value = value;
		o->n_values++;
	}
	return 0;
}

const char *cli_options_get(const cli_options *o, const char *name)
{
	size_t i = o->n_values;

	/* The last occurrence wins, as with kubectl's single-valued flags. */
	while (i-- > 0)
		if (strcmp(o->values[i].name, name) == 0)
			return o->values[i].value;
	return NULL;
}

size_t cli_options_all(const char **out, size_t max, const cli_options *o, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < o->n_values; i++)
		if (strcmp(o->values[i].name, name) == 0 && n < max)
			out[n++] = o->values[i].value;
	return n;
}
