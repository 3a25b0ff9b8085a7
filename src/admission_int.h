/* wmap internal: what src/admission.c (the mutation and the policy check) and
 * src/admission_review.c (the AdmissionReview envelope) share. */
#ifndef WMAP_ADMISSION_INT_H
#define WMAP_ADMISSION_INT_H

#include <jansson.h>
#include "wmap/admission.h"
#include "wmap/patch.h"

#define WMAP__MAX_WARNINGS 8
#define WMAP__WARNING_MAX 240 /* the apiserver may cut warnings past 256 characters */

/* Adds a warning to warnings (a JSON array; NULL: nothing) as one printable line cut at
 * WMAP__WARNING_MAX, unless it is there already or WMAP__MAX_WARNINGS are. Best effort:
 * under memory pressure a note may be missing. */
void wmap__admission_warn(json_t *warnings, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The same for a warning that is part of the answer (a Warn policy's violation): -1 when
 * memory runs out, so that the caller sends no half answer. */
int wmap__admission_warn_checked(json_t *warnings, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The mutation of object as a patch builder in *out (owned by the caller; NULL when there is
 * nothing to write), its warnings appended to warnings. Negative when wmap cannot process
 * the object (*reason names the class, see wmap_admission_info). */
int wmap__admission_mutate(wmap_patch **out, json_t *warnings, const char **reason,
			   wmap_engine *eng, const wmap_admission_config *cfg, json_t *object,
			   const char *operation, const char *ns, wmap_error *err);

#endif
