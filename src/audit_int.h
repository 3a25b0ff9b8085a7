/* wmap internal: the policy check of src/admission.c, shared by audit.c (the public
 * wmap_audit_object) and /validate (wmap_admission_review). */
#ifndef WMAP_AUDIT_INT_H
#define WMAP_AUDIT_INT_H

#include <jansson.h>
#include "wmap/audit.h"
#include "wmap/workload.h"

/* wmap_audit_object with the namespace ns (NULL or "" = the object's, as /validate takes
 * the request's), its notes appended to warnings (a JSON array of strings, capped as
 * admission warnings are), and *reason (may be NULL) the failure class of
 * wmap_admission_info. res is zeroed first; the caller frees it, also after a failure. */
int wmap__audit_object(wmap_audit_result *res, json_t *warnings, const char **reason,
		       wmap_engine *eng, const wmap_admission_config *cfg, const json_t *object,
		       unsigned op, const char *ns, wmap_error *err);

/* A new violation at the end of r->violations, zeroed and already counted in r->n (so that
 * wmap_audit_result_free frees whatever the caller manages to fill in); NULL when memory
 * runs out. */
wmap_violation *wmap__audit_push(wmap_audit_result *r);

/* Checks p's spec.limits (wmap/policy.h) on the resolved workload w (in namespace ns, NULL
 * = none) at its desired replicas, counting the pods of the components p matches: every
 * workload total and every one pod over its limit is a violation appended to res, its
 * message naming the workload, the figure, the limit and the components behind the figure.
 * Returns 0, WMAP_EINVAL when a quantity in the object does not read (err names its path),
 * WMAP_ENOMEM. */
int wmap__audit_limits(wmap_audit_result *res, const wmap_workload *w, const wmap_policy *p,
		       const char *ns, wmap_error *err);

#endif
