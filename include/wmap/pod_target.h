/* wmap: where the pod templates of a resolved workload can be written: the JSON Pointers of
 * each template's labels, annotations, pod spec, schedulerName and priorityClassName. The
 * webhook's stamping and policies and `kubectl wmap patch` all write through these. */
#ifndef WMAP_POD_TARGET_H
#define WMAP_POD_TARGET_H

#include <stddef.h>
#include "wmap/workload.h"

typedef struct wmap_pod_target {
	const char *component; /* the component's name (borrowed from the definition) */
	const char *instance;  /* the instance id (borrowed), "" for single-instance components */
	int multi;             /* the component has several instances (instanceIdPath) */
	char *labels;          /* pointer of the labels map, NULL when not writable */
	size_t labels_len;     /* its length (0 when NULL); whoever replaces labels sets it */
	char *annotations;
	char *spec;      /* pointer of the PodSpec, NULL for fragmented definitions */
	char *scheduler; /* pointer of schedulerName */
	char *priority;  /* pointer of priorityClassName */
	size_t node, instance_index;
	/* labels (and annotations) lie in a keyed list entry that is not there yet: create is
	 * added at create_at before the first write (both borrowed from the workload). */
	const char *create_at;
	const json_t *create;
	/* The object's value at the first labels_from_len bytes of labels, borrowed from the
	 * workload: the labels map, else the metadata object, else the template object that
	 * lacks it; NULL when not known. A writer may start there (wmap_patch_set_strs_in). */
	const json_t *labels_from;
	size_t labels_from_len;
	/* The one allocation a template's or pod spec's pointers share (then none of them may
	 * be replaced or given back alone), NULL for a fragmented pod's. */
	void *block;
	int mark; /* the caller's (0 after init) */
} wmap_pod_target;

/* Fills t for instance i of node k of w. Returns 1 when the template has a location to write,
 * 0 when it has none, WMAP_ENOMEM when memory ran out (then nothing may be written: a NULL
 * pointer always means "no such location", never "out of memory"). *why (may be NULL) is
 * set to a warning for the caller to show ("its pod template is not at a plain path; not
 * stamped"), or NULL. Locations whose parent the object lacks are dropped: writing there
 * would create a part of the workload (a fragmented spec's optional section). t owns its
 * pointers: free them with wmap_pod_target_clear, whatever the result. They are review
 * memory (wmap_arena_alloc): in a review arena's scope, clear t in that scope. A pointer of
 * t may be replaced only when t->block is NULL (a fragmented pod's): give the old one back
 * with wmap_arena_release. */
int wmap_pod_target_init(wmap_pod_target *t, const char **why, const wmap_workload *w,
			 size_t k, size_t i);

/* Frees t's pointers and zeroes it. */
void wmap_pod_target_clear(wmap_pod_target *t);

#endif
