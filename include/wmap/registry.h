/* wmap: the set of definitions in force, and the per-thread engine that evaluates them.
 *
 * Precedence for one group/version/kind: a cluster Karta object, then a --definitions file,
 * then the embedded catalog; a definition of higher precedence replaces the other. */
#ifndef WMAP_REGISTRY_H
#define WMAP_REGISTRY_H

#include <jansson.h>
#include "wmap/definition.h"
#include "wmap/error.h"

typedef struct wmap_registry wmap_registry;

/* An empty registry owned by the caller. */
int wmap_registry_new(wmap_registry **out, wmap_error *err);
void wmap_registry_free(wmap_registry *reg);

/* Adds every definition embedded in the binary at build time. */
int wmap_registry_add_catalog(wmap_registry *reg, wmap_error *err);

/* Adds only the embedded definitions of one group and kind (any version): what a command
 * that reads a single object needs, without parsing the whole catalog. */
int wmap_registry_add_catalog_kind(wmap_registry *reg, const char *group, const char *kind,
				   wmap_error *err);

/* Adds the definitions of a file (every document) or of every *.yaml, *.yml, *.json file
 * of a directory. Any invalid definition fails the whole call and adds nothing. */
int wmap_registry_add_path(wmap_registry *reg, const char *path, wmap_origin origin,
			   wmap_error *err);

/* Adds def, which the registry then owns (also on failure). Replaces a definition of the
 * same group/version/kind whose origin does not rank higher. */
int wmap_registry_add(wmap_registry *reg, wmap_definition *def, wmap_error *err);

size_t wmap_registry_count(const wmap_registry *reg);
/* Borrowed; lives as long as the registry. Sorted by name. */
const wmap_definition *wmap_registry_get(const wmap_registry *reg, size_t i);
const wmap_definition *wmap_registry_by_name(const wmap_registry *reg, const char *name);

/* The definition for group/version/kind. When no definition has that version, another
 * version of the same group and kind is returned and *exact is set to 0 (describe -f reads
 * an object of another served version through it). NULL when nothing covers the kind. */
const wmap_definition *wmap_registry_find(const wmap_registry *reg, const char *group,
					  const char *version, const char *kind, int *exact);

/* The same, from an object's apiVersion and kind. WMAP_ENODEF when nothing covers it,
 * WMAP_EINVAL when the object has no apiVersion or kind. */
int wmap_registry_find_object(const wmap_definition **out, const wmap_registry *reg,
			      const json_t *object, wmap_error *err);

/* The ownerReference of obj (a Kubernetes object) that has controller: true, borrowed from
 * obj; NULL when none has (the API server allows at most one). The one walk of
 * metadata.ownerReferences for the object's controller. */
const json_t *wmap_object_controller(const json_t *obj);

/* The definition covering the kind of obj's controller (wmap_object_controller; any version
 * of it, as wmap_registry_find), borrowed; NULL when obj has no controller or reg does not
 * cover its kind. An object whose controller is a covered workload (the Jobs of a JobSet, a
 * JobSet a controller makes) is judged through its owner. */
const wmap_definition *wmap_registry_find_controller(const wmap_registry *reg, const json_t *obj);

/* The evaluation state of one thread: libjq programs compiled from the registry's
 * definitions. libjq is not thread-safe, so every thread has its own engine. */
typedef struct wmap_engine wmap_engine;

int wmap_engine_new(wmap_engine **out, const wmap_registry *reg, wmap_error *err);
void wmap_engine_free(wmap_engine *eng);

/* Compiles the jq expressions of every definition into one program now (a server does this
 * at start-up so that no request ever compiles). Without it, the engine compiles one program
 * per definition the first time that definition needs jq. */
int wmap_engine_prepare(wmap_engine *eng, wmap_error *err);

/* How many times this engine has called jq_compile (for measurements and tests). */
unsigned wmap_engine_compiles(const wmap_engine *eng);

/* The registry the engine serves (borrowed). */
const wmap_registry *wmap_engine_registry(const wmap_engine *eng);

#endif
