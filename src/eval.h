/* wmap internal: evaluating a definition's expressions against an object.
 *
 * Plain path expressions (.a.b, .a[0], .a[], .a[]?, .["k"]) are evaluated natively on
 * jansson and every result carries its JSON Pointer; anything else goes to libjq through
 * the engine's compiled program. Results are owned references. */
#ifndef WMAP_EVAL_H
#define WMAP_EVAL_H

#include <jansson.h>
#include "wmap/definition.h"
#include "wmap/registry.h"

#define WMAP_MAX_RESULTS 1000   /* as upstream: more results is an error */

typedef struct wmap_result {
	json_t *value;    /* owned; NULL when the path leads nowhere (reads as null) */
	char *pointer;    /* JSON Pointer of the value, NULL when unknown */
} wmap_result;

typedef struct wmap_results {
	size_t n, cap;
	wmap_result *v;
} wmap_results;

void wmap_results_clear(wmap_results *r);
int wmap_results_push(wmap_results *r, json_t *value_stolen, char *pointer_stolen);

/* A native path, parsed once when the definition loads. */
typedef struct wmap_path wmap_path;
/* Parses text as a plain path; NULL when it is anything else (then libjq evaluates it). */
wmap_path *wmap_path_parse(const char *text);
void wmap_path_free(wmap_path *p);
/* The steps of a parsed path, for schema checks (schema.c): how many (0 for a literal or
 * "."), and each one's kind; *key is set for WMAP_PATH_KEY (borrowed). */
typedef enum { WMAP_PATH_KEY, WMAP_PATH_INDEX, WMAP_PATH_ITER } wmap_path_step_kind;
size_t wmap_path_n_steps(const wmap_path *p);
wmap_path_step_kind wmap_path_step(const wmap_path *p, size_t i, const char **key);
/* Appends every result of p on root (pointer prefix base, "" for the document). */
int wmap_path_eval(const wmap_path *p, json_t *root, wmap_results *out, wmap_error *err);

struct wmap_expr {
	char *text;
	char *where;          /* the definition field, e.g. ".spec...rootComponent.scaleDefinition.replicasPath" */
	char *place;          /* where it is written: "file:line:col", or "file: <where>" */
	wmap_path *path;      /* plain path form, NULL when it is more than a path */
	struct wmap_jn *jn;   /* native jq form (jqnative.c), NULL when libjq is needed */
	int jq_slot;          /* the expression's index in the definition's jq list, -1 when native */
	int jq_path_slot;     /* index of path(<text>) in that list (locations), -1 when none */
};

/* The object an evaluation reads, and its libjq twin made on first need (once per resolve). */
typedef struct wmap_input {
	json_t *object;
	void *jv;             /* jq.c's converted copy, NULL until needed */
} wmap_input;

void wmap_input_release(wmap_input *in);

/* Evaluates e on in. want_pointers asks libjq expressions for their locations too. */
int wmap_eval(wmap_results *out, wmap_engine *eng, const wmap_definition *def,
	      const wmap_expr *e, wmap_input *in, int want_pointers, wmap_error *err);

/* jq's name of a value's type: "object", "array", "string", "number", "boolean", "null". */
const char *wmap_json_type_name(const json_t *v);

/* A JSON Pointer token appended to a pointer, escaped (~ as ~0, / as ~1). New string. */
char *wmap_pointer_append(const char *base, const char *token);
char *wmap_pointer_append_index(const char *base, size_t index);
/* The value at pointer in root (borrowed), NULL when absent. */
json_t *wmap_pointer_get(json_t *root, const char *pointer);
/* ".spec.replicatedJobs[1].template" from "/spec/replicatedJobs/1/template", into buf. */
void wmap_pointer_to_path(char *buf, size_t len, const char *pointer);

#endif
