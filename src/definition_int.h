/* wmap internal: strict reading of a definition document, shared by definition.c. */
#ifndef WMAP_DEFINITION_INT_H
#define WMAP_DEFINITION_INT_H

#include <jansson.h>
#include "eval.h"
#include "wmap/definition.h"

/* The state of one load: the definition being built and every finding so far. */
typedef struct ctx {
	wmap_definition *def;
	const json_t *positions;
	int doc;
	char findings[WMAP_ERROR_MAX];
	size_t flen;
	int n_findings;
	int oom;
} ctx;

/* Records a finding at ptr (a JSON pointer in the document, NULL for the whole document),
 * prefixed with file:line:column when positions are known, else the file and JSON path. */
void wmap__def_finding(ctx *c, const char *ptr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "file:line:col" of ptr when positions are known, else "file: .json.path". */
void wmap__def_place_of(ctx *c, const char *ptr, char *place, size_t len);
char *wmap__def_xstrdup(ctx *c, const char *s);
char *wmap__def_child_ptr(ctx *c, const char *base, const char *key);
/* Reports every key of obj not in allowed (NULL-terminated). */
void wmap__def_check_keys(ctx *c, const json_t *obj, const char *ptr, const char *const *allowed);
/* obj[key] as an object, a list or a new string; NULL (with a finding when the type is
 * wrong, or when a required string is missing). */
const json_t *wmap__def_get_object(ctx *c, const json_t *obj, const char *ptr, const char *key);
const json_t *wmap__def_get_array(ctx *c, const json_t *obj, const char *ptr, const char *key);
char *wmap__def_get_string(ctx *c, const json_t *obj, const char *ptr, const char *key, int required);
/* A jq expression at obj[key], checked against the safety rule and registered with the
 * definition. writable: the engine should also trace its location. */
wmap_expr *wmap__def_get_expr(ctx *c, const json_t *obj, const char *ptr, const char *key, int required,
			      int writable);
void wmap__def_expr_free(wmap_expr *e);

/* Calls each() for every element of list (found at ptr/key), with the element's pointer; an
 * element that is not an object is a finding ("<what> must be an object"). */
typedef void (*item_fn)(ctx *c, const json_t *item, const char *item_ptr, void *ud);
void wmap__def_for_each_item(ctx *c, const json_t *list, const char *ptr, const char *key, const char *what,
			     item_fn each, void *ud);

#endif
