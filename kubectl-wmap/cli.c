/* kubectl-wmap: the command table, help text, errors and exit codes (see cli.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wmap/apiversion.h"
#include "wmap/gang.h"
#include "cli.h"

/* `mutate` is written by the webhook's owner in cmd_mutate.c. A weak reference lets the
 * plugin link (without the command) while that file does not exist yet. */
extern const cli_command cli_cmd_mutate __attribute__((weak));
/* The live-cluster commands (cmd_get.c, cmd_patch.c, cmd_suspend.c). */
extern const cli_command cli_cmd_get, cli_cmd_patch, cli_cmd_suspend, cli_cmd_resume, cli_cmd_logs;
extern const cli_command cli_cmd_audit; /* cmd_audit.c */
extern const cli_command cli_cmd_fit;   /* cmd_fit.c */
/* Installing the webhook (cmd_install.c). */
extern const cli_command cli_cmd_install, cli_cmd_uninstall;

const cli_command *cli_command_at(size_t i)
{
	const cli_command *const table[] = {
		&cli_cmd_describe,
		&cli_cmd_get,
		&cli_cmd_logs,
		&cli_cmd_fit,
		&cli_cmd_patch,
		&cli_cmd_suspend,
		&cli_cmd_resume,
		&cli_cmd_definitions,
		&cli_cmd_validate,
		&cli_cmd_mutate,
		&cli_cmd_audit,
		&cli_cmd_install,
		&cli_cmd_uninstall,
		&cli_cmd_version,
		&cli_cmd_help,
	};
	size_t n = sizeof(table) / sizeof(table[0]);
	size_t k;

	for (k = 0; k < n; k++) {
		if (!table[k])
			continue; /* a weak command that is not linked in */
		if (i-- == 0)
			return table[k];
	}
	return NULL;
}

const cli_command *cli_command_find(const char *name)
{
	const cli_command *c;
	size_t i;

	for (i = 0; name && (c = cli_command_at(i)) != NULL; i++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

size_t cli_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t prev[65], cur[65];
	size_t i, j;

	if (la > 64 || lb > 64)
		return 99;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(cur[0]));
	}
	return prev[lb];
}

const cli_command *cli_command_suggest(const char *name)
{
	const cli_command *c, *best = NULL;
	size_t best_d = 3, i;

	for (i = 0; (c = cli_command_at(i)) != NULL; i++) {
		size_t d = cli_edit_distance(name, c->name);

		if (name[0] && strncmp(c->name, name, strlen(name)) == 0)
			d = 0; /* "desc" for "describe" */
		if (d < best_d) {
			best_d = d;
			best = c;
		}
	}
	return best;
}

int cli_unknown_command(const cli_options *o, const char *name)
{
	const cli_command *s = cli_command_suggest(name);

	fprintf(stderr, "error: unknown command \"%s\" for \"%s\"\n", name, o->prog);
	if (s)
		fprintf(stderr, "\nDid you mean this?\n    %s\n\n", s->name);
	fprintf(stderr, "See '%s --help' for usage.\n", o->prog);
	return CLI_EXIT_USAGE;
}

static void print_flags(FILE *out, const cli_flag *f)
{
	char left[64];

	for (; f && f->name; f++) {
		if (f->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", f->short_name, f->name,
				 f->arg ? " " : "", f->arg ? f->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", f->name, f->arg ? " " : "",
				 f->arg ? f->arg : "");
		fprintf(out, "  %-33s %s\n", left, f->help);
	}
}

void cli_print_help(FILE *out, const cli_options *o, const cli_command *cmd)
{
	const cli_command *c;
	size_t i;

	if (cmd) {
		fprintf(out, "%s\n\nUsage:\n  %s %s\n", cmd->summary, o->prog, cmd->usage);
		if (cmd->help && cmd->help[0])
			fprintf(out, "\n%s", cmd->help);
		if (cmd->flags && cmd->flags->name) {
			fprintf(out, "\nFlags:\n");
			print_flags(out, cmd->flags);
		}
		fprintf(out, "\nGlobal flags:\n");
		print_flags(out, cli_global_flags);
		return;
	}
	fprintf(out,
		"%s: the structure of Kubernetes AI workloads (JobSet, PyTorchJob, RayCluster, ...),\n"
		"read through Karta definitions (NVIDIA Workload Map, run.ai/v1alpha1 Karta).\n\n"
		"Usage:\n  %s COMMAND [flags]\n\nCommands:\n",
		o->prog, o->prog);
	for (i = 0; (c = cli_command_at(i)) != NULL; i++)
		fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fprintf(out, "\nGlobal flags:\n");
	print_flags(out, cli_global_flags);
	fprintf(out,
		"\nExit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 no definition covers the type,\n"
		"5 logs: too many pods, 8 --strict: warnings.\n"
		"Run '%s COMMAND --help' for the flags and examples of a command.\n",
		o->prog);
}

int cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_EXIT_ERROR;
}

int cli_usage_error(const cli_options *o, const cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (cmd)
		fprintf(stderr, "See '%s %s --help' for usage.\n", o->prog, cmd->name);
	else
		fprintf(stderr, "See '%s --help' for usage.\n", o->prog);
	return CLI_EXIT_USAGE;
}

int cli_exit_code(int code)
{
	/* Not WMAP_ENOTFOUND -> 3: the core also says "not found" of a missing file, which
	 * is an error (1); a command that looks a name up returns CLI_EXIT_NOTFOUND itself. */
	switch (code) {
	case WMAP_OK: return CLI_EXIT_OK;
	case WMAP_ENODEF: return CLI_EXIT_NODEF;
	default: return CLI_EXIT_ERROR;
	}
}

void cli_print_line(FILE *out, const char *prefix, const char *text, size_t len)
{
	size_t i;

	fputs(prefix, out);
	for (i = 0; i < len && text[i]; i++) {
		unsigned char c = (unsigned char)text[i];

		fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
	}
	fputc('\n', out);
}

int cli_fail(const wmap_error *err)
{
	const char *m = err->message[0] ? err->message : wmap_error_name(err->code);
	const char *nl;

	/* Findings come one per line; each gets its own prefix so that grep finds them. */
	for (; (nl = strchr(m, '\n')) != NULL; m = nl + 1)
		cli_print_line(stderr, "error: ", m, (size_t)(nl - m));
	if (m[0])
		cli_print_line(stderr, "error: ", m, strlen(m));
	return cli_exit_code(err->code ? err->code : WMAP_EINVAL);
}

/* The --definitions paths, over whatever catalog reg holds. */
static int add_definitions(wmap_registry *reg, const cli_options *o, wmap_error *err)
{
	for (size_t i = 0; i < o->n_definitions; i++) {
		int rc = wmap_registry_add_path(reg, o->definitions[i], WMAP_ORIGIN_FILE, err);
		if (rc)
			return rc;
	}
	return 0;
}

int cli_registry_load(wmap_registry **out, const cli_options *o, wmap_error *err)
{
	wmap_registry *reg = NULL;
	int rc;

	*out = NULL;
	if ((rc = wmap_registry_new(&reg, err)) != 0 || (rc = wmap_registry_add_catalog(reg, err)) != 0 ||
	    (rc = add_definitions(reg, o, err)) != 0) {
		wmap_registry_free(reg);
		return rc;
	}
	*out = reg;
	return 0;
}

int cli_registry_load_for(wmap_registry **out, const cli_options *o, const json_t *object,
			  wmap_error *err)
{
	const char *api = json_string_value(json_object_get(object, "apiVersion"));
	const char *kind = json_string_value(json_object_get(object, "kind"));
	wmap_api_version av;
	wmap_registry *reg = NULL;
	char group[256];
	int rc;

	wmap_api_version_split(&av, api);
	/* Without a kind the whole catalog is loaded, so the error says what is missing. */
	if (!kind || !api || av.group_len >= sizeof(group))
		return cli_registry_load(out, o, err);
	snprintf(group, sizeof(group), "%.*s", (int)av.group_len, av.group);
	*out = NULL;
	if ((rc = wmap_registry_new(&reg, err)) != 0 ||
	    (rc = wmap_registry_add_catalog_kind(reg, group, kind, err)) != 0 ||
	    (rc = add_definitions(reg, o, err)) != 0) {
		wmap_registry_free(reg);
		return rc;
	}
	*out = reg;
	return 0;
}

int cli_policy_load(wmap_policy_set **out, const cli_options *o, wmap_error *err)
{
	const char *paths[CLI_MAX_VALUES];
	size_t n = cli_options_all(paths, CLI_MAX_VALUES, o, "policy");

	*out = NULL;
	return n ? wmap_policy_set_load_paths(out, paths, n, err) : 0;
}

size_t cli_warn_verify(const wmap_workload *w, unsigned flags, const char *where)
{
	wmap_error err = { 0 };
	json_t *found = NULL, *v;
	char prefix[600];
	size_t i, n;

	if (wmap_workload_verify(&found, w, flags, &err) != 0) {
		cli_print_line(stderr, "warning: ", err.message, strlen(err.message));
		return 1;
	}
	snprintf(prefix, sizeof(prefix), "warning: %s%s", where ? where : "", where ? ": " : "");
	json_array_foreach(found, i, v)
		cli_print_line(stderr, prefix, json_string_value(v), strlen(json_string_value(v)));
	n = json_array_size(found);
	json_decref(found);
	return n;
}

size_t cli_verify_object(wmap_engine *eng, json_t *object, unsigned flags, const char *where)
{
	unsigned rf = WMAP_RESOLVE_NO_RESOURCES | (flags & WMAP_VERIFY_NO_STATUS ? WMAP_RESOLVE_NO_STATUS : 0);
	wmap_workload *w = NULL;
	wmap_error err = { 0 };
	size_t n = 0;

	if (wmap_workload_resolve_ex(&w, eng, object, NULL, rf, &err) == 0)
		n = cli_warn_verify(w, flags, where);
	wmap_workload_free(w);
	return n;
}

int cli_require_queue_scheduler(const cli_options *o, const cli_command *cmd)
{
	const char *sched = cli_options_get(o, "gang-scheduler");
	wmap_gang_scheduler s = WMAP_GANG_NONE;
	wmap_error err = { 0 };

	if (!cli_options_get(o, "queue"))
		return 0;
	if (sched && wmap_gang_scheduler_parse(&s, sched, &err) != 0)
		return 0; /* reported by the caller */
	if (s == WMAP_GANG_KAI || s == WMAP_GANG_VOLCANO || s == WMAP_GANG_YUNIKORN || s == WMAP_GANG_KUEUE)
		return 0;
	return cli_usage_error(o, cmd,
			       "--queue needs --gang-scheduler kai, volcano, yunikorn or kueue (%s%s has no queues); "
			       "without one the queue would be ignored",
			       sched ? "" : "the default, ", sched ? sched : "none");
}

int cli_require_table(const cli_options *o, const cli_command *cmd)
{
	if (o->output_set && o->output != CLI_OUTPUT_TABLE)
		return cli_usage_error(o, cmd, "%s prints text only; -o %s is not supported",
				       cmd->name, cli_output_name(o->output));
	return 0;
}
