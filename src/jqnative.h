/* wmap internal: the jq subset that definitions use, evaluated natively on jansson.
 *
 * libjq 1.6 needs ~25 ms to compile even "." and seconds for a program holding the whole
 * catalog (its builtin binding grows with program size), so the expressions definitions
 * actually contain (paths, //, comparisons, and/or, if, select, any/all, map, length,
 * to_entries, as-bindings, object and array construction, ...) are parsed and evaluated
 * here, in microseconds and with no compile at all. Anything outside the subset (regular
 * expressions, reduce, def, string interpolation, ...) is refused by the parser and left to
 * libjq. tests/unit/test_jqnative.c checks both engines agree on every catalog expression. */
#ifndef WMAP_JQNATIVE_H
#define WMAP_JQNATIVE_H

#include "eval.h"

typedef struct wmap_jn wmap_jn;

/* Parses text; NULL when it is outside the subset (or not valid jq: libjq will say why). */
wmap_jn *wmap__jn_parse(const char *text);
void wmap__jn_free(wmap_jn *p);

/* Runs p on input, appending every output. Outputs carry a JSON Pointer when they are a
 * location in input (path expressions), else NULL. Errors end the run, as in jq. */
int wmap__jn_eval(const wmap_jn *p, json_t *input, wmap_results *out, wmap_error *err);
/* The same without pointers (every output's is NULL): no pointer is joined at each step, for
 * callers that read values only (scale, instance ids, status). */
int wmap__jn_eval_values(const wmap_jn *p, json_t *input, wmap_results *out, wmap_error *err);
/* The same, where an integer output computed by +, -, * (in an if's branch or a [..] | min
 * or max) may come as a plain number (wmap_result.is_num, value NULL). */
int wmap__jn_eval_numbers(const wmap_jn *p, json_t *input, wmap_results *out, wmap_error *err);

#endif
