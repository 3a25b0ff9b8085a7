/* wmap: checking a definition's paths against the structural schema of its kind's CRD.
 *
 * A Karta reads and writes its workload through jq paths (pod templates, metadata,
 * replicas, status fields). When a framework renames or moves a field in a new API version,
 * a definition written for the old one keeps loading and silently finds nothing. The CRD's
 * structural schema says which paths exist: every plain path of the definition that is
 * evaluated on the workload object (not the pod selectors, which read Pods) is walked
 * through the schema of the definition's root version, following `properties`, `items`,
 * `additionalProperties` maps and ObjectMeta at the root and in embedded resources; below
 * `x-kubernetes-preserve-unknown-fields: true` anything goes. Expressions that are more than
 * a plain path are walked abstractly over their jq syntax tree (the native subset: pipes,
 * `as` bindings, `//`, `if`, `select`, `map`, `any`/`all`, `to_entries`, object and array
 * construction): every field they read on the object is checked the same way, strings
 * compared with ==/!= and byPhase values must be in the field's `enum`, and what wmap writes
 * under a pod template, pod spec or metadata (labels, annotations, schedulerName,
 * priorityClassName) must be kept. Expressions outside the subset are not checked. */
#ifndef WMAP_SCHEMA_H
#define WMAP_SCHEMA_H

#include <jansson.h>
#include "wmap/definition.h"
#include "wmap/error.h"

/* Checks def's expressions against crd (an apiextensions.k8s.io/v1 CustomResourceDefinition
 * object, borrowed). *findings gets a new array owned by the caller, one object per field the
 * schema lacks (empty: every path is in the schema; NULL on failure): "message" is the whole
 * finding ("file:line:col: <Karta field>: path \"...\" is not in the schema of G/V Kind:
 * <reason>"), "field" the Karta field holding the expression (".spec.structureDefinition.
 * childComponents[0].specDefinition.podTemplateSpecPath"), "path" the expression, "reason"
 * the missing step ("no field \"x\" under .spec.y"). Returns WMAP_EINVAL when crd
 * is not a CRD or does not define the definition's root group and kind, WMAP_ENOMEM. A CRD
 * that does not serve the root version is one finding, not an error. */
int wmap_schema_check(json_t **findings, const wmap_definition *def, const json_t *crd,
		      wmap_error *err);

/* 1 when crd (borrowed) is a CustomResourceDefinition for group and kind, else 0. */
int wmap_schema_crd_matches(const json_t *crd, const char *group, const char *kind);

/* Finds the CRD of a group and kind for the admission check: returns a new reference the
 * caller releases with json_decref, or NULL when no such CRD is known. ctx is the lookup's
 * own state; the function may be called from several threads at once. */
typedef json_t *(*wmap_crd_lookup_fn)(void *ctx, const char *group, const char *kind);

typedef struct wmap_crd_lookup {
	wmap_crd_lookup_fn find;
	void *ctx;
} wmap_crd_lookup;

#endif
