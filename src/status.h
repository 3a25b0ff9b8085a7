/* wmap internal: root status evaluation, shared by resolve.c and wmap_status_evaluate. */
#ifndef WMAP_STATUS_H
#define WMAP_STATUS_H

#include "eval.h"
#include "wmap/workload.h"

typedef struct wmap_status_result {
	unsigned statuses;
	char *phase;
	size_t n_conditions;
	wmap_condition *conditions;
} wmap_status_result;

int wmap__status_eval(wmap_status_result *r, wmap_engine *eng, const wmap_definition *def,
		      wmap_input *in, wmap_error *err);
void wmap__status_result_clear(wmap_status_result *r);

#endif
