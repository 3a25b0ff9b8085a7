/* wmap: API discovery (cached on disk) and resource-type resolution as kubectl does it,
 * and the REST paths of resources. */
#ifndef WMAP_KUBE_DISCOVERY_H
#define WMAP_KUBE_DISCOVERY_H

#include <jansson.h>
#include <stddef.h>
#include "wmap/error.h"
#include "wmap/kube/client.h"

typedef struct wmap_api_resource {
	char *group; /* "" for the core group */
	char *version;
	char *plural;   /* "jobsets" */
	char *singular; /* "jobset" (lowercased kind when the server gives none) */
	char *kind;     /* "JobSet" */
	int namespaced;
	int preferred; /* served at the group's preferred version */
	size_t n_short;
	char **short_names;
} wmap_api_resource;

typedef struct wmap_discovery wmap_discovery;

/* Discovery of the API server behind c: read from the cache when it is younger than
 * ttl_seconds (0 = 6 hours; the folder is $WMAP_CACHE_DIR, else
 * ~/.kube/cache/wmap/discovery/<host_port>/), else read from the server and written back:
 * aggregated discovery (KEP-3352: two requests, /api and /apis as APIGroupDiscoveryList)
 * when the server serves it, else the walk of /api/v1, /apis and every /apis/G/V. The
 * caller owns *out. */
int wmap_discovery_load(wmap_discovery **out, wmap_kube_client *c, int ttl_seconds,
			wmap_error *err);
/* Walks the server again (ignoring the cache), after a type was not found. */
int wmap_discovery_refresh(wmap_discovery *d, wmap_kube_client *c, wmap_error *err);
void wmap_discovery_free(wmap_discovery *d);
/* 1 when the discovery came from the cache. */
int wmap_discovery_cached(const wmap_discovery *d);

size_t wmap_discovery_count(const wmap_discovery *d);
const wmap_api_resource *wmap_discovery_get(const wmap_discovery *d, size_t i);

/* Resolves a TYPE as kubectl does: plural, singular, short name or kind, case-insensitive,
 * optionally qualified as resource.group, resource.version.group or Kind.version.group.
 * Borrowed result. WMAP_ENOTFOUND when nothing matches, WMAP_EINVAL when several groups
 * serve it (the message lists the qualified names). */
int wmap_discovery_resolve(const wmap_api_resource **out, const wmap_discovery *d,
			   const char *type, wmap_error *err);

/* The resource serving group/version/kind (exact version), NULL when none. */
const wmap_api_resource *wmap_discovery_find_kind(const wmap_discovery *d, const char *group,
						  const char *version, const char *kind);

/* The REST path of a resource: collection when name is NULL; ns NULL = all namespaces
 * (or cluster-scoped). New string owned by the caller, NULL on ENOMEM. */
char *wmap_resource_path(const wmap_api_resource *r, const char *ns, const char *name);

/* "jobsets.jobset.x-k8s.io" ("pods" for core), for messages. */
void wmap_resource_label(char *buf, size_t len, const wmap_api_resource *r);

#endif
