/* wmap: a Kubernetes apiVersion taken apart: "apps/v1" is group "apps" and version "v1",
 * "v1" is the core group "" and version "v1" (the split is at the first '/'). */
#ifndef WMAP_APIVERSION_H
#define WMAP_APIVERSION_H

#include <stddef.h>

typedef struct wmap_api_version {
	const char *group; /* group_len bytes of api (not NUL-terminated) */
	size_t group_len;
	const char *version; /* the rest of api, NUL-terminated */
} wmap_api_version;

/* Splits api (NULL counts as "") without copying: the parts borrow from it. */
void wmap_api_version_split(wmap_api_version *out, const char *api);

/* The same into the caller's buffers, each NUL-terminated; -1 (and both "") when a part
 * does not fit, 0 otherwise. */
int wmap_api_version_parse(char *group, size_t group_size, char *version, size_t version_size,
			   const char *api);

#endif
