/* kubectl-wmap fit: what its parts share. cmd_fit.c reads the workload and hands each
 * cluster's snapshot to the core (include/wmap/fit.h); fit_snapshot.c gets the snapshots
 * (a --snapshot folder per cluster, or the nodes and pods of kubeconfig contexts, queried in
 * parallel); fit_render.c prints the verdicts (table, -o wide, json, yaml). */
#ifndef KUBECTL_WMAP_FIT_CMD_H
#define KUBECTL_WMAP_FIT_CMD_H

#include <jansson.h>

#include "cli.h"
#include "wmap/fit.h"

/* One cluster to answer for: its nodes and pods (live; owned, NULL when unread) or its
 * snapshot already fed to the core (--snapshot; owned). A non-empty error makes its verdict
 * "unknown". */
typedef struct fit_source {
	char name[256];
	json_t *nodes, *pods;
	wmap_fit_snapshot *snap;
	char nodes_name[600], pods_name[600]; /* what messages call the lists */
	char error[1024];
} fit_source;

#define FIT_MAX_SOURCES 256

/* The clusters of a --snapshot DIR: one per folder holding nodes.json (name order), or only
 * the folders named in only[0..n_only) (in that order; a missing one is an error of its
 * own). Each folder's files are read here, item by item, into a snapshot of w (with plan and
 * opts, see wmap_fit_snapshot_new). 0, or WMAP_EIO/WMAP_EINVAL when DIR cannot be read. */
int fit_snapshot_dir(fit_source *out, size_t *n, const char *dir, const char *const *only,
		     size_t n_only, const wmap_workload *w, const wmap_gang_plan *plan,
		     const wmap_fit_opts *opts, wmap_error *err);

/* The kubeconfig contexts to ask: every --context (in order), every context of the
 * kubeconfig with all (sorted), else the current one. Names only; 0 or an error. */
int fit_live_contexts(fit_source *out, size_t *n, const cli_options *o, int all, wmap_error *err);

/* Reads the nodes and non-terminal pods of every source (its name a context) with the
 * connection flags of o, at most parallel at a time; failures go to each source's error. */
void fit_live_fetch(fit_source *src, size_t n, const cli_options *o, int parallel);

void fit_source_clear(fit_source *s);

/* Prints {"workload": workload, "contexts": {name: verdict}, "notChecked": [...]} as o asks: the table (one row
 * per context; -o wide adds per-component lines and the placement) with the list of what is
 * not checked under it, or the object as json|yaml. */
int fit_render(const cli_options *o, const json_t *workload, const json_t *contexts,
	       wmap_error *err);

#endif
