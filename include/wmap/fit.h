/* wmap: would a workload fit in a cluster now, taken as a gang, and if not, exactly why.
 *
 * Pure: a resolved workload and one cluster's snapshot (its Node objects and Pod objects,
 * as `kubectl get nodes -o json` and `kubectl get pods -A -o json` list them) in, one
 * verdict out. Nothing is read or printed here; the plugin fetches and renders.
 *
 * The checks are those of the default scheduler that a static preview can honour, with
 * its own reason strings: per pod its requests (wmap_pod_amounts: limits as fallback, the
 * init-container and sidecar rule, pod-level resources, overhead) against each node's
 * allocatable minus the requests of the non-terminal pods bound to it (`Insufficient
 * <name>`), the pod count (`Too many pods`), cordon (`node(s) were unschedulable`),
 * NoSchedule/NoExecute taints and tolerations (`node(s) had untolerated taint {k: v}`),
 * nodeSelector and required node affinity (`node(s) didn't match Pod's node
 * affinity/selector`); only Ready nodes (`node(s) were not ready`, a preview's own rule).
 *
 * The whole set of target pods (every desired pod, or with WMAP_FIT_MIN each gang's minimum)
 * is placed at once. The verdict is "yes" with the pod-to-node assignment found, "no" when
 * counting proves it impossible (free amounts on the eligible nodes, or slots: how many pods
 * of one shape the nodes can hold), or "no?" when the placement search (largest requests
 * first, tightest node; then most constrained first) found none without a proof. */
#ifndef WMAP_FIT_H
#define WMAP_FIT_H

#include <jansson.h>

#include "wmap/error.h"
#include "wmap/gang.h"
#include "wmap/workload.h"

/* Place each gang group's minimum (its members' own minimum scale) instead of every
 * desired pod; pods in no group are all placed either way. */
#define WMAP_FIT_MIN 1u

typedef struct wmap_fit_opts {
	unsigned flags;          /* WMAP_FIT_* */
	const json_t *skip_uids; /* object whose keys are Pod UIDs not to count (the workload's own); may be NULL */
	const char *nodes_name;  /* names the node list in messages ("nodes.json"); may be NULL */
	const char *pods_name;   /* names the pod list in messages ("pods.json"); may be NULL */
} wmap_fit_opts;

/* The workload's side of the answer, the same for every cluster: a new object owned by the
 * caller, {"kind", "name", "namespace", "pods", "need": {resource: quantity}, "components":
 * [{"name", "pods", "desired", "perPod": {...}}], "gangs": [{"name", "minMember"}]}.
 * plan may be NULL (no gang groups). */
int wmap_fit_workload(json_t **out, const wmap_workload *w, const wmap_gang_plan *plan,
		      const wmap_fit_opts *opts, wmap_error *err);

/* The verdict of w (with its gang plan, may be NULL) in the cluster whose Node list and Pod
 * list are nodes and pods (borrowed: a List object with "items", or the items array): a new
 * object owned by the caller, {"verdict": "yes|no|no?", "why": text, "nodes": {"all",
 * "ready", "eligible"}, "free": {resource: quantity on the eligible nodes}, "need": {...},
 * "components": [{"name", "pods", "eligibleNodes", "nodesWithRoom", "slots", "reasons":
 * {reason: nodes}, "message"}], "placement": [{"pod", "node"}] (yes only)}. A malformed
 * snapshot is an error naming the list and JSON path; WMAP_ELIMIT when the workload asks for
 * more than WMAP_POD_AMOUNTS_MAX resource names. */
int wmap_fit_evaluate(json_t **out, const wmap_workload *w, const wmap_gang_plan *plan,
		      const json_t *nodes, const json_t *pods, const wmap_fit_opts *opts,
		      wmap_error *err);

/* The same a node and a pod at a time, for snapshots too large to hold whole: every node
 * first (each kept by reference until the snapshot is freed), then the pods (read at once and
 * not kept), then the verdict (as wmap_fit_evaluate's; it may be asked again after more pods).
 * Messages name the items by their position in the order added. The caller owns *out and
 * frees it with wmap_fit_snapshot_free (NULL is fine). */
typedef struct wmap_fit_snapshot wmap_fit_snapshot;
int wmap_fit_snapshot_new(wmap_fit_snapshot **out, const wmap_workload *w, const wmap_gang_plan *plan,
			  const wmap_fit_opts *opts, wmap_error *err);
/* node is a Node object; the snapshot takes a reference. WMAP_EINVAL for a node without a
 * name, listed twice, or with a malformed quantity; WMAP_ELIMIT past 1,048,576 nodes. */
int wmap_fit_snapshot_add_node(wmap_fit_snapshot *s, json_t *node, wmap_error *err);
/* pod (borrowed) counts on its node when it is bound to a node already added and is neither
 * Succeeded nor Failed nor one of opts' skip_uids. WMAP_EINVAL for a malformed quantity. */
int wmap_fit_snapshot_add_pod(wmap_fit_snapshot *s, const json_t *pod, wmap_error *err);
int wmap_fit_snapshot_verdict(json_t **out, wmap_fit_snapshot *s, wmap_error *err);
void wmap_fit_snapshot_free(wmap_fit_snapshot *s);

/* What the verdict does not take into account, one short phrase each (a static NULL-ended
 * list): every rendering prints them. */
extern const char *const wmap_fit_not_checked[];

#endif
