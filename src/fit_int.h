/* wmap: what the parts of `fit` share (src/fit.c, src/fit_filter.c, src/fit_place.c). */
#ifndef WMAP_FIT_INT_H
#define WMAP_FIT_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "wmap/fit.h"

/* Whether a Node's Ready condition is True. */
int wmap__fit_node_ready(const json_t *node);

/* Whether node's labels and name satisfy spec's nodeSelector and required node affinity. */
int wmap__fit_affinity_matches(const json_t *spec, const json_t *node);

/* The scheduler's reason why node cannot take a pod of spec before resources are counted
 * (cordon, taints, node affinity), NULL when it can. The text is static or written in buf. */
const char *wmap__fit_static_reason(char *buf, size_t len, const json_t *spec, const json_t *node);

#define FIT_MAX_RES WMAP_POD_AMOUNTS_MAX
#define FIT_MAX_NODES (1 << 20) /* a snapshot's node list grows from input: cap it (the largest clusters have 15,000) */

/* One node of the snapshot: what it has and what its pods already ask for, in thousandths. */
typedef struct fit_node {
	const json_t *obj;
	const char *name;
	int ready;
	int64_t alloc[FIT_MAX_RES], used[FIT_MAX_RES];
	int64_t pods_alloc, pods_used;
} fit_node;

/* One pod shape of the workload: a pod-bearing instance. */
typedef struct fit_class {
	char label[256]; /* "worker", "replicatedjob/worker" */
	json_t *spec;    /* the pod spec the filters read (a reference) */
	int64_t req[FIT_MAX_RES];
	int64_t desired;       /* desired replicas */
	int64_t count;         /* pods to place */
	int group;             /* gang group, -1 none */
	unsigned char *elig;   /* per node: passes the static filters */
	size_t n_elig, n_room; /* eligible nodes; those with room for one pod now */
	int64_t slots;         /* pods of this shape the eligible nodes could hold */
	json_t *reasons;       /* reason -> nodes */
} fit_class;

typedef struct fit_state {
	size_t n_res;
	const char *res[FIT_MAX_RES];
	size_t n_nodes;
	fit_node *nodes;
	size_t n_classes;
	fit_class *classes;
} fit_state;

/* Places every class's count pods on the nodes; *placed gets [{pod, node}] (a new array)
 * when it found a placement, NULL otherwise. */
int wmap__fit_place(json_t **placed, const fit_state *st, wmap_error *err);

#endif
