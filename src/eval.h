/* wmap internal: evaluating a definition's expressions against an object.
 *
 * Plain path expressions (.a.b, .a[0], .a[], .a[]?, .["k"]) are evaluated natively on
 * jansson and every result carries its JSON Pointer; anything else goes to libjq through
 * the engine's compiled program. Results are owned references. */
#ifndef WMAP_EVAL_H
#define WMAP_EVAL_H

#include <jansson.h>
#include "wmap/definition.h"
#include "wmap/pointer.h"
#include "wmap/registry.h"

#define WMAP_MAX_RESULTS 1000 /* as upstream: more results is an error */

typedef struct wmap_result {
	json_t *value; /* owned; NULL when the path leads nowhere (reads as null) */
	char *pointer; /* JSON Pointer of the value, NULL when unknown; malloc'ed or review
			* memory (wmap_arena_alloc): given back with wmap_arena_release */
	/* Locating only (wmap__path_locate): pointer runs through list entries that do not
	 * exist yet; adding create (owned) at create_at makes them, keys included. */
	char *create_at;
	json_t *create;
	/* Numbers asked for (WMAP_EVAL_NUMBERS): an integer output that was never a jansson
	 * value; value is NULL then. */
	int is_num;
	long long num;
} wmap_result;

typedef struct wmap_results {
	size_t n, cap;
	wmap_result *v;
} wmap_results;

void wmap__results_clear(wmap_results *r);
int wmap__results_push(wmap_results *r, json_t *value_stolen, char *pointer_stolen);
/* Room for more results at once (at most WMAP_MAX_RESULTS in all), so that as many pushes
 * need no growth: 0, or -1 when out of memory (r unchanged). */
int wmap__results_reserve(wmap_results *r, size_t more);

/* A native path, parsed once when the definition loads. */
typedef struct wmap_path wmap_path;
/* Parses text as a plain path; NULL when it is anything else (then libjq evaluates it). */
wmap_path *wmap__path_parse(const char *text);
/* The same; *oom is 1 when NULL came from a failed allocation rather than from the text. */
wmap_path *wmap__path_parse_oom(const char *text, int *oom);
void wmap__path_free(wmap_path *p);
/* The steps of a parsed path, for schema checks (schema.c): how many (0 for a literal or
 * "."), and each one's kind; *key is set for WMAP_PATH_KEY (borrowed). */
typedef enum { WMAP_PATH_KEY,
	       WMAP_PATH_INDEX,
	       WMAP_PATH_ITER } wmap_path_step_kind;
size_t wmap__path_n_steps(const wmap_path *p);
wmap_path_step_kind wmap__path_step(const wmap_path *p, size_t i, const char **key);
/* Appends every result of p on root (pointer prefix base, "" for the document). */
int wmap__path_eval(const wmap_path *p, json_t *root, wmap_results *out, wmap_error *err);
/* The same values, every pointer NULL: no pointer is built (scale, instance ids, status). */
int wmap__path_values(const wmap_path *p, json_t *root, wmap_results *out, wmap_error *err);
/* The same, for a location to write to: a path whose every iteration picks a keyed entry
 * (`.a[]? | select(.name == "x") | .b`) and finds none yields one result anyway, with the
 * pointer the entry would have and what to add to create it (create_at, create). */
int wmap__path_locate(const wmap_path *p, json_t *root, wmap_results *out, wmap_error *err);

struct wmap_expr {
	char *text;
	char *where;        /* the definition field, e.g. ".spec...rootComponent.scaleDefinition.replicasPath" */
	char *place;        /* where it is written: "file:line:col", or "file: <where>" */
	wmap_path *path;    /* plain path form, NULL when it is more than a path */
	struct wmap_jn *jn; /* native jq form (jqnative.c), NULL when libjq is needed */
	int jq_slot;        /* the expression's index in the definition's jq list, -1 when native */
	int jq_path_slot;   /* index of path(<text>) in that list (locations), -1 when none */
};

/* The object an evaluation reads, and its libjq twin made on first need (once per resolve). */
typedef struct wmap_jn_memo wmap_jn_memo;
typedef struct wmap_input {
	json_t *object;
	void *jv;           /* jq.c's converted copy, NULL until needed */
	wmap_jn_memo *memo; /* shared reads of native numbers runs (jqnative.h), NULL when none */
} wmap_input;

void wmap__input_release(wmap_input *in);

/* Evaluates e on in. want_pointers asks libjq expressions for their locations too;
 * WMAP_EVAL_NUMBERS (no pointers) lets native jq give an integer it computes as a plain
 * number (wmap_result.is_num) instead of making a jansson value of it. */
#define WMAP_EVAL_NUMBERS 2
int wmap__eval(wmap_results *out, wmap_engine *eng, const wmap_definition *def,
	       const wmap_expr *e, wmap_input *in, int want_pointers, wmap_error *err);

/* jq's name of a value's type: "object", "array", "string", "number", "boolean", "null". */
const char *wmap__json_type_name(const json_t *v);

#endif
