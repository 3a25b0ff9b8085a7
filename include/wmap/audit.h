/* wmap: policy evaluation with structured results, the one path behind /validate, `kubectl
 * wmap audit` (offline and live) and the webhook's policy reports.
 *
 * A policy with validation actions (wmap/policy.h: Deny, Warn, Audit) is violated by a
 * workload when a pod template the policy matches lacks what the policy sets: in
 * `override` and `require` mode a field that differs from the policy's value, in `default`
 * mode a field that is absent; tolerations the template lacks in all three. It is also
 * violated when the workload at its desired replicas, or one of its pods, asks for more
 * than the policy's `limits` allow (one violation per limit, or per limit and component
 * instance for pod limits, with component NULL for a workload total). Policies that only
 * mutate (no actions) are not evaluated. The object is judged as it is given: the object
 * at /validate (after the mutating webhooks) or stored in the cluster as is; a workload
 * from a file is judged as it would be admitted, after wmap's own mutation
 * (wmap_audit_admitted), which never applies `require` policies. */
#ifndef WMAP_AUDIT_H
#define WMAP_AUDIT_H

#include <jansson.h>
#include <stddef.h>
#include "wmap/admission.h"
#include "wmap/error.h"
#include "wmap/policy.h"
#include "wmap/registry.h"

typedef struct wmap_violation {
	char *policy;     /* the policy's name */
	unsigned actions; /* WMAP_ACTION_* of that policy */
	char *component;  /* the component's name, NULL when it concerns the workload as a whole */
	char *instance;   /* the instance's name, NULL when the component has a single instance */
	char *field;      /* what was checked: "labels[team]", "annotations[k]",
			   * "nodeSelector[k]", "priorityClassName", "schedulerName",
			   * "runtimeClassName", "tolerations", "limits.workload[nvidia.com/gpu]",
			   * "limits.pod[cpu]" */
	char *want;       /* the value the policy wants (a toleration as compact JSON; the
			   * limit as written) */
	char *have;       /* the value found, NULL when absent (the amount asked for) */
	char *message;    /* one line for people: policy, component (instance), field, want,
			   * have; for a limit the workload, the figure, the limit and the
			   * components behind the figure */
} wmap_violation;

typedef struct wmap_audit_result {
	size_t n_policies;
	char **policies; /* the policies with actions that apply to the object, in policy-set
			  * order: each passes unless it has a violation below */
	size_t n;
	wmap_violation *violations; /* by policy, then workload order of the templates */
	int owned;                  /* 1: not evaluated, a controller owns the object (a JobSet's Job, a
		    * Deployment's ReplicaSet): it is checked through its owner */
	char **warnings;            /* what could not be checked (a component without a pod-spec
			  * location for nodeSelector, ...), at most 8; n_warnings of them */
	size_t n_warnings;
} wmap_audit_result;

/* Evaluates every policy of cfg->policies with validation actions that matches object (a
 * whole workload object, borrowed) for operation op (WMAP_POLICY_OP_*), resolving it with eng
 * and cfg (max_depth, deadline_ns) as admission does; the namespace is the object's
 * metadata.namespace. *out is filled (zeroed first) and owned by the caller, who frees it
 * with wmap_audit_result_free, also after a failure. Returns 0; WMAP_ENODEF when no
 * definition covers the object's kind, whether or not a policy matches it (callers count it
 * as skipped, err names the kind);
 * WMAP_EINVAL or WMAP_ELIMIT when the object does not fit its definition, is nested deeper
 * than cfg->max_depth or the deadline passed; WMAP_ENOMEM. An object of a covered kind no
 * policy matches (or not a JSON object, or op 0) is a success with no policies and no
 * violations. */
int wmap_audit_object(wmap_audit_result *out, wmap_engine *eng, const wmap_admission_config *cfg,
		      const json_t *object, unsigned op, wmap_error *err);

/* Frees the members of r, not r itself, and zeroes it; accepts NULL. */
void wmap_audit_result_free(wmap_audit_result *r);

/* The object as wmap's mutating webhook would admit it for op: a deep copy of object with
 * the patch of wmap_admission_mutate applied (its namespace the object's), in *out owned by
 * the caller. The mutation's warnings are dropped. Returns 0, or what the mutation returns
 * (WMAP_ENODEF for an uncovered kind, ...): the webhook would admit such an object as it
 * is. */
int wmap_audit_admitted(json_t **out, wmap_engine *eng, const wmap_admission_config *cfg,
			const json_t *object, unsigned op, wmap_error *err);

/* The worst action among the violations of r: WMAP_ACTION_DENY, else WMAP_ACTION_WARN, else
 * WMAP_ACTION_AUDIT, 0 without violations (what a CI gate reads). */
unsigned wmap_audit_worst(const wmap_audit_result *r);

#endif
