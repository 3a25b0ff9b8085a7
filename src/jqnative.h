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
 * or max) may come as a plain number (wmap_result.is_num, value NULL); memo (below) may be
 * NULL. */
int wmap__jn_eval_numbers(const wmap_jn *p, json_t *input, wmap_jn_memo *memo, wmap_results *out,
			  wmap_error *err);

/* Members read once per element for several expressions. Expressions of the form
 * `P[]? | body` given to wmap__jn_share_keys (the replicas, minimum and maximum of one
 * component, all run on the same object) number the `.key` reads of body on the element
 * that they make more than once between them; a memo, given to each run (in->memo), then
 * keeps what each element's key held, so the three expressions look each member up once per
 * element. A memo serves one object while it is unchanged: its rows are the elements of the
 * first array it is used with (any other array runs without it). */
struct wmap_jn_memo {
	const json_t *array; /* the array the rows are for; NULL until first used */
	size_t n_rows;
	unsigned n_slots;
	json_t **cells; /* n_rows x n_slots borrowed values, NULL where not looked up yet */
	int failed;     /* the cells could not be allocated: runs go without */
};
void wmap__jn_share_keys(wmap_jn *const *exprs, size_t n);
/* Gives back a memo's cells (the memo is then as new). */
void wmap__jn_memo_release(wmap_jn_memo *m);

#endif
