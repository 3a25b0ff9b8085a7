/* wmap internal: the policy check of src/admission.c, shared by audit.c (the public
 * wmap_audit_object) and /validate (wmap_admission_review). */
#ifndef WMAP_AUDIT_INT_H
#define WMAP_AUDIT_INT_H

#include <jansson.h>
#include "wmap/audit.h"

/* wmap_audit_object with the namespace ns (NULL or "" = the object's, as /validate takes
 * the request's), its notes appended to warnings (a JSON array of strings, capped as
 * admission warnings are), and *reason (may be NULL) the failure class of
 * wmap_admission_info. res is zeroed first; the caller frees it, also after a failure. */
int wmap__audit_object(wmap_audit_result *res, json_t *warnings, const char **reason,
		       wmap_engine *eng, const wmap_admission_config *cfg, const json_t *object,
		       unsigned op, const char *ns, wmap_error *err);

#endif
