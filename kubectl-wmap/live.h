/* kubectl-wmap: what the live commands (describe TYPE/NAME, get, patch, suspend, resume,
 * completion) share: the connection from the kubectl flags, discovery, the definitions
 * (cluster Karta objects over --definitions over the catalog), TYPE[/NAME] parsing and
 * resolution, fetching one workload, and kubectl-like error printing with the exit codes
 * of reference 6.3 (0 ok, 1 error, 2 usage, 3 not found, 4 no definition). */
#ifndef KUBECTL_WMAP_LIVE_H
#define KUBECTL_WMAP_LIVE_H

#include <jansson.h>

#include "cli.h"
#include "wmap/kube.h"
#include "wmap/registry.h"
#include "wmap/workload.h"

#define LIVE_MAX_WARNINGS 64

extern const cli_command cli_cmd_get, cli_cmd_patch, cli_cmd_suspend, cli_cmd_resume,
	cli_cmd_logs;

typedef struct live_ctx {
	const cli_options *o;
	wmap_kube_config *cfg;
	wmap_kube_client *client;
	wmap_discovery *disc;
	wmap_registry *reg;
	wmap_engine *eng;
	const char *ns; /* the namespace in force (borrowed from cfg) */
	size_t n_warnings;
	char *warnings[LIVE_MAX_WARNINGS]; /* printed on stderr after the output */
} live_ctx;

/* A workload fetched from the cluster and resolved. */
typedef struct live_target {
	const wmap_api_resource *res; /* borrowed from the discovery */
	const wmap_definition *def;   /* borrowed from the registry */
	json_t *object;
	wmap_workload *w;
	char label[512]; /* "jobsets.jobset.x-k8s.io" */
	char name[256];
} live_target;

/* The kubeconfig overrides of o's connection flags (strings borrowed from o). */
void live_overrides(wmap_kube_overrides *ov, const cli_options *o);

/* Connects (kubeconfig, client, discovery). On failure prints the error and returns the
 * exit code; 0 when connected. */
int live_open(live_ctx *lc, const cli_options *o);

/* Prints the collected warnings (after the output, as kubectl does) and frees everything. */
void live_close(live_ctx *lc);

void live_warn(live_ctx *lc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads the definitions: for one kind (group/kind non-NULL: only that catalog file) or
 * all of them, --definitions, then the cluster's kartas.run.ai (best effort, warnings on
 * failure), and makes the engine. 0 or an exit code (error printed). */
int live_load_definitions(live_ctx *lc, const char *group, const char *kind);

/* Splits the positional arguments into TYPE and NAME ("TYPE/NAME" or "TYPE NAME"); name
 * is NULL when only a TYPE was given and need_name is 0. 0 or CLI_EXIT_USAGE (printed). */
int live_split_target(char *type, size_t tlen, char *name, size_t nlen, int *has_name,
		      const cli_options *o, const cli_command *cmd, int need_name);

/* Resolves TYPE through discovery (walking the server again once when the cached
 * discovery does not know it). When the cluster does not serve it: exit 4 when no
 * definition covers such a kind either, else 3 (the type is not installed). Prints. */
int live_resolve_type(const wmap_api_resource **out, live_ctx *lc, const char *type);

/* The definition of a resource's group/version/kind: exact version, else another version
 * of the kind. NULL (and prints, exit 4) when none covers it. */
int live_definition_for(const wmap_definition **out, live_ctx *lc, const wmap_api_resource *r);

/* Fetches and resolves TYPE NAME in the namespace in force: resolves the type, loads the
 * definition for it, GETs the object (404 -> exit 3) and resolves it. Prints errors. */
int live_target_load(live_target *t, live_ctx *lc, const char *type, const char *name);
/* Re-reads the object (after a conflict) and resolves it again. */
int live_target_reload(live_target *t, live_ctx *lc);
void live_target_clear(live_target *t);

/* Prints err the way kubectl does ("Error from server (...): ..." as is, otherwise
 * "error: ...") and returns code. */
int live_fail(const wmap_error *err, int code);

/* The exit code of a client error: 3 for not found, 1 otherwise. */
int live_code(const wmap_error *err);

/* "5m", "2h", "3d": kubectl's short ages, from an RFC 3339 timestamp ("<unknown>" when
 * absent). */
void live_age(char *buf, size_t len, const char *timestamp);

/* A list of every object at path (a collection path with or without a query), following
 * metadata.continue with limit chunk (0 = one request). Items are appended to items. */
int live_list(json_t *items, live_ctx *lc, const char *path, long chunk, wmap_error *err);

/* The same, a page at a time: fn(arg, the page's items (borrowed, mutable), err) for each
 * page as it arrives, so a caller that judges objects one by one holds one page, not the
 * whole list. A non-zero return of fn stops the listing and is returned. */
typedef int (*live_page_fn)(void *arg, json_t *items, wmap_error *err);
int live_list_pages(live_ctx *lc, const char *path, long chunk, live_page_fn fn, void *arg,
		    wmap_error *err);

/* ---- guarded writes (live_patch.c) ---- */

typedef enum live_dry {
	LIVE_DRY_NONE,
	LIVE_DRY_CLIENT, /* nothing is sent; the result is computed locally */
	LIVE_DRY_SERVER, /* sent with ?dryRun=All: admission runs, nothing is stored */
} live_dry;

/* Parses --dry-run (none|client|server; absent = none). 0 or CLI_EXIT_USAGE (printed). */
int live_dry_run(live_dry *out, const cli_options *o, const cli_command *cmd);

/* Builds the JSON Patch for the object t holds now (t->object, t->w): *ops a new array
 * (empty = nothing to change). Returns 0 or an exit code (message printed). */
typedef int (*live_build_fn)(json_t **ops, live_ctx *lc, live_target *t, void *arg);

/* Sends the patch build() makes, guarded by a test of /metadata/resourceVersion, as one
 * application/json-patch+json PATCH. When the guard fails (409/422 and the object has a
 * new resourceVersion) the object is read again and the patch rebuilt, at most
 * LIVE_PATCH_ATTEMPTS times, so a concurrent writer's change is never overwritten.
 * *result gets the object after the patch (the server's answer, or computed locally for
 * client dry runs, or the object itself when nothing changes); *before a copy of the object
 * the last patch was built on; *n_ops the operations sent. Returns 0 or an exit code. */
#define LIVE_PATCH_ATTEMPTS 5
int live_patch_guarded(json_t **result, json_t **before, size_t *n_ops, live_ctx *lc,
		       live_target *t, live_build_fn build, void *arg, live_dry dry);

/* Prints the outcome as the options ask: -o json|yaml the object, --diff a unified diff
 * of before and result, else "<resource>/<name> <verb>" (with "(no change)", "(dry run)"
 * or "(server dry run)", then "(detail)" when something changed; detail may be NULL).
 * Returns 0 or an exit code. */
int live_patch_report(const cli_options *o, live_target *t, const json_t *before,
		      const json_t *result, size_t n_ops, live_dry dry, const char *verb,
		      const char *detail);

/* ---- completion (live_complete.c), for cmd_complete.c; print candidates, never errors ---- */

/* Namespaces of the cluster starting with prefix. words: everything typed after the plugin
 * name (the last being the word under completion); the connection flags are read there. */
void live_complete_namespaces(int n, char **words, const char *prefix);

/* The first argument of describe/get/patch/suspend/resume: workload types a definition
 * covers ("jobsets"), or with "TYPE/" typed, "TYPE/NAME"; with type given (the TYPE NAME
 * form), the names of that type. */
void live_complete_target(int n, char **words, const char *type, const char *cur);

/* After logs TYPE/NAME: the workload's components ("replicatedjob", "replicatedjob/leader"). */
void live_complete_components(int n, char **words, const char *target, const char *cur);

/* logs TYPE/NAME [COMPONENT[/INSTANCE]] (live_logs.c); returns the exit code. */
int live_logs(const cli_options *o);

/* The live describe (cmd_describe.c hands TYPE/NAME over to it); returns the exit code. */
int live_describe(const cli_options *o);

/* Checks describe's numeric flags (--pod-limit, --component-limit, --events) before
 * anything is sent. 0 or CLI_EXIT_USAGE (printed). */
int live_describe_check_flags(const cli_options *o);

/* One view of the live describe of t (loaded by live_target_load) on an open connection:
 * reads its pods, its Warning events (one request) and its gang objects, and prints it on
 * stdout as lc->o asks (tree or -o json|yaml); warn 0 leaves out the warnings (already
 * given once). Errors are printed; returns the exit code. describe calls it once, describe
 * -w (live_watch.c) once per redraw, after live_target_reload. */
int live_describe_view(live_ctx *lc, live_target *t, int warn);

/* "--request-timeout" in milliseconds (0 = default), -1 when malformed. */
long live_timeout_ms(const cli_options *o);

#endif
