/* wmap: a workload object resolved through its definition.
 *
 * The model is a tree of components (as in the definition), each with its instances; an
 * instance that describes pods carries its pod template, pod spec or fragmented pod spec,
 * with the exact JSON location of each part in the object (a JSON Pointer, RFC 6901) so
 * that the webhook and `patch` can write there, its replica counts and its resources.
 * The workload holds a reference to the object: values below are borrowed from it. */
#ifndef WMAP_WORKLOAD_H
#define WMAP_WORKLOAD_H

#include <jansson.h>
#include <stdint.h>
#include "wmap/definition.h"
#include "wmap/registry.h"
#include "wmap/error.h"
#include "wmap/quantity.h"

/* Sums and products keep the memory's suffix family as Kubernetes' Quantity.Add does: a sum
 * takes the family of its first non-zero term, a larger value's family wins a max. */
typedef struct wmap_resources {
	int64_t gpu;                        /* nvidia.com/gpu, whole devices */
	int64_t cpu_milli;                  /* millicores */
	int64_t memory;                     /* bytes */
	wmap_quantity_family memory_family; /* how memory was written ("16Gi", "144G") */
} wmap_resources;

/* Where one part of a pod description lives in the object. pointer is NULL when the
 * expression is not a plain path (read-only projections such as `{requests: .x}`, or jq
 * expressions whose path cannot be traced). value is NULL when nothing is there yet; the
 * pointer still says where it would go, e.g. a template's missing "/metadata/labels". */
typedef struct wmap_location {
	char *pointer;
	json_t *value; /* a reference the workload holds */
	/* When pointer runs through keyed list entries that are not there yet (a definition's
	 * `.a[]? | select(.name == "x") | ...`): add create at create_at first. NULL otherwise. */
	char *create_at;
	json_t *create; /* a reference the workload holds */
} wmap_location;

typedef struct wmap_pod {
	wmap_spec_shape shape;
	wmap_location template_;             /* WMAP_SPEC_TEMPLATE: the PodTemplateSpec */
	wmap_location spec;                  /* the PodSpec (template's /spec, or podSpecPath) */
	wmap_location metadata;              /* the ObjectMeta (template's /metadata, or metadataPath) */
	wmap_location frag[WMAP_FRAG_COUNT]; /* WMAP_SPEC_FRAGMENTED, by field */
} wmap_pod;

typedef struct wmap_instance {
	char *id; /* "" for a single-instance component; in the node's instances block */
	int has_pod;
	wmap_pod pod;
	int has_replicas, has_min, has_max;
	int64_t replicas, min_replicas, max_replicas;
	int64_t desired; /* replicas, else minReplicas, else 1 */
	wmap_resources per_replica;
	wmap_resources total; /* per_replica x desired */
} wmap_instance;

typedef struct wmap_node {
	const wmap_component *def;
	int index; /* the component's index in the definition */
	size_t n_instances;
	wmap_instance *instances; /* sorted as in the object (by index) */
	size_t n_children;
	int *children;        /* indices into workload->nodes */
	int64_t desired;      /* own instances' desired replicas, or children's sum */
	wmap_resources own;   /* own instances' totals */
	wmap_resources total; /* own + children's */
} wmap_node;

typedef struct wmap_condition {
	char *type, *status, *reason, *message; /* NULL when absent */
} wmap_condition;

typedef struct wmap_workload {
	json_t *object; /* a reference the workload holds */
	const wmap_definition *definition;
	int exact_version;                                                  /* 0 when read through another version's definition */
	const char *api_version, *kind, *name, *generate_name, *namespace_; /* borrowed; may be NULL */

	unsigned statuses; /* bit (1 << wmap_status) per matched status; 0 = Undefined */
	char *phase;       /* the raw phase, NULL when none */
	size_t n_conditions;
	wmap_condition *conditions;

	size_t n_nodes;
	wmap_node *nodes;     /* [0] is the root, then the definition's order */
	int64_t desired;      /* total desired pods over pod-bearing components */
	wmap_resources total; /* total over pod-bearing components */
	size_t n_warnings;
	char **warnings; /* things a user should know (pruned labels, ...) */
} wmap_workload;

/* Resolves object through def (or, when def is NULL, through the registry's definition for
 * the object's kind). The workload takes a reference to object. Errors name the JSON path
 * and the definition field that failed. The caller owns *out. */
int wmap_workload_resolve(wmap_workload **out, wmap_engine *eng, json_t *object,
			  const wmap_definition *def, wmap_error *err);

/* The same with flags: WMAP_RESOLVE_NO_STATUS skips the status (admission has none to read),
 * WMAP_RESOLVE_NO_RESOURCES skips resource totals. */
#define WMAP_RESOLVE_NO_STATUS 1u
#define WMAP_RESOLVE_NO_RESOURCES 2u
int wmap_workload_resolve_ex(wmap_workload **out, wmap_engine *eng, json_t *object,
			     const wmap_definition *def, unsigned flags, wmap_error *err);

/* Frees w; it may outlive its engine and definition (it reads neither). */
void wmap_workload_free(wmap_workload *w);

/* Matched statuses joined with sep into buf, "Undefined" when none. */
void wmap_workload_status_string(const wmap_workload *w, char *buf, size_t len, const char *sep);

/* Evaluates the root status of object through def only (no tree): *statuses gets the bits. */
int wmap_status_evaluate(unsigned *statuses, wmap_engine *eng, const wmap_definition *def,
			 json_t *object, wmap_error *err);

/* Resources of one pod spec (reference 5.8): requests falling back to limits, the larger of
 * the biggest init container and the containers plus sidecars, pod-level resources, overhead.
 * Malformed quantities are errors naming their JSON path (base is the spec's path). */
int wmap_pod_resources(wmap_resources *out, const json_t *pod_spec, const char *base,
		       wmap_error *err);

/* The most resource names wmap_pod_amounts counts in one call. */
#define WMAP_POD_AMOUNTS_MAX 32

/* What one pod of pod (an instance's, borrowed) asks for in each of the n resources names
 * (any resource name: "nvidia.com/gpu", "amd.com/gpu", "cpu", "ephemeral-storage", ...),
 * by the rules of wmap_pod_resources and, for a fragmented definition, of the fragments:
 * milli[i] in thousandths of a unit, exact (each quantity rounded up as Kubernetes'
 * MilliValue), and family[i] (family may be NULL) the suffix family it was written in.
 * The caller owns both arrays (n entries each); they are zeroed on failure. Malformed
 * quantities are errors naming their JSON path; WMAP_EINVAL when n exceeds
 * WMAP_POD_AMOUNTS_MAX. */
int wmap_pod_amounts(int64_t *milli, wmap_quantity_family *family, const wmap_pod *pod,
		     const char *const *names, size_t n, wmap_error *err);

/* The same for a plain pod spec (a Pod's .spec, borrowed) at base (its JSON Pointer, for
 * messages): what a pod already on a node asks for, by the very same rules. */
int wmap_pod_spec_amounts(int64_t *milli, wmap_quantity_family *family, const json_t *spec,
			  const char *base, const char *const *names, size_t n, wmap_error *err);

/* Adds every resource name pod's requests, limits and overhead mention to set (a JSON
 * object used as a set; keys added with the value true): the names wmap_pod_amounts must
 * count for this pod. WMAP_EINVAL when set is not an object. */
int wmap_pod_resource_names(json_t *set, const wmap_pod *pod);

#endif
