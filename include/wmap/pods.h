/* wmap: what a definition says about live Pods and live actions: the podSelector
 * expressions evaluated on Pod objects (upstream's PodQuerier, reference 5.5), and the
 * suspend/resume actions turned into a JSON Patch. */
#ifndef WMAP_PODS_H
#define WMAP_PODS_H

#include <jansson.h>
#include "wmap/definition.h"
#include "wmap/error.h"
#include "wmap/registry.h"

/* Whether pod (a Pod object, borrowed) belongs to component index ci of def by its
 * componentTypeSelector: keyPath with value (any result equal to the string value),
 * keyPath alone (any non-null result), matchLabels (every label equal), AND-ed. *out is
 * -1 when the component has no type selector (the caller decides: upstream gives all pods
 * to the only pod-bearing component). */
int wmap_pod_matches_component(int *out, wmap_engine *eng, const wmap_definition *def,
			       int ci, json_t *pod, wmap_error *err);

/* The instance id of pod for component ci (componentInstanceSelector.idPath), or the
 * replica key (replicaSelector.keyPath) when replica is 1: exactly one non-null,
 * non-empty result rendered as a string, a new string owned by the caller. *out is NULL
 * when the component has no such selector. WMAP_EEVAL when the result is not single
 * ("expected single query result, got N") or empty. */
int wmap_pod_key(char **out, wmap_engine *eng, const wmap_definition *def, int ci,
		 json_t *pod, int replica, wmap_error *err);

/* The JSON Patch (a new array owned by the caller) that applies the suspend actions
 * (resume = 0) or resume actions (resume = 1) of every component of def to object:
 * each action's path is evaluated with its locations and its value set there (missing
 * containers created, equal values left alone). Suspend goes children first, resume
 * root first. WMAP_ENOTFOUND when the definition has no such actions; WMAP_EEVAL when a
 * path has no writable location. */
int wmap_actions_patch(json_t **out, wmap_engine *eng, const wmap_definition *def,
		       json_t *object, int resume, wmap_error *err);

#endif
