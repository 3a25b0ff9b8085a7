/* wmap internal: the only module that touches libjq. jv values never leave it: results
 * cross its edge as jansson values, errors as wmap_error. */
#ifndef WMAP_JQ_H
#define WMAP_JQ_H

#include <stddef.h>
#include "eval.h"

typedef struct wmap_jq wmap_jq;

/* Compiles every expression of exprs into one program (one jq_compile call): expression i
 * is selected at run time by wrapping the input, through a balanced dispatcher. */
int wmap__jq_compile(wmap_jq **out, char *const *exprs, size_t n, wmap_error *err);
void wmap__jq_free(wmap_jq *q);

/* Runs expression idx on in, appending its outputs. In path mode the outputs are paths
 * (from a path(...) expression); they are turned into JSON Pointers and their values read
 * from in->object. Stops at the first error: libjq 1.6 aborts if asked for more. */
int wmap__jq_run(wmap_jq *q, size_t idx, wmap_input *in, int path_mode, wmap_results *out,
		 wmap_error *err);

/* Compiles exprs as one program, only to say whether they all parse. */
int wmap__jq_check_all(char *const *exprs, size_t n, char *msg, size_t len);

/* Compiles one expression alone to say whether it parses; msg gets libjq's message. */
int wmap__jq_check(const char *expr, char *msg, size_t len);

/* Upstream's jq safety rule: no del, range, paths, recurse, walk, repeat, no `..`, no
 * assignment or update operator. 0 when safe; otherwise msg names what was found. */
int wmap__jq_safety(const char *expr, char *msg, size_t len);
#endif
