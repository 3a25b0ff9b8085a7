/* kubectl-wmap: the live pods of a workload, attributed and placed (live_pods.c). */
#ifndef KUBECTL_WMAP_LIVE_PODS_H
#define KUBECTL_WMAP_LIVE_PODS_H

#include "live.h"

typedef struct pod_info {
	json_t *pod; /* borrowed from the list */
	const char *name, *phase, *node, *reason;
	int ready, healthy;
	int64_t restarts;    /* restartCount summed over the containers */
	char reason_buf[96]; /* "Init:CrashLoopBackOff" when reason points here */
	wmap_resources res;
	int comp; /* node index, -1 when no component claimed it */
	int inst; /* instance index, -1 for none */
} pod_info;

typedef struct live_pods {
	json_t *owners; /* the owner cache; it also holds the pods below */
	size_t n;
	pod_info *v; /* sorted by name */
} live_pods;

/* Lists the pods of w's namespace and keeps those w owns, each with the component and
 * instance it belongs to (comp -1 when no component claims it). *out owns what it holds,
 * also after a failure (free it with live_pods_free). */
int live_pods_load(live_pods *out, live_ctx *lc, const wmap_workload *w, wmap_error *err);
void live_pods_free(live_pods *p);

/* Whether one of obj's ownerReferences has this uid (NULL: none has). */
int live_refs_uid(const json_t *obj, const char *uid);

/* Whether the object ref names ({apiVersion, kind, name}) in namespace ns belongs to w
 * through its controller chain (a Job of the JobSet that has no pods yet): 1 with *out the
 * object's metadata (borrowed from p's cache), else 0. Owners are read through p's cache
 * (one metadata GET each, misses kept). */
int live_pods_owned(const json_t **out, live_pods *p, live_ctx *lc, const wmap_workload *w,
		    const json_t *ref, const char *ns);

#endif
