/* wmap: WorkloadPolicy documents (wmap.io/v1alpha1), read from YAML and matched against
 * workloads. webhook/README.md describes the format with examples:
 *
 *   apiVersion: wmap.io/v1alpha1
 *   kind: WorkloadPolicy
 *   metadata: {name: team-a}
 *   spec:
 *     match:            # every part optional; all given parts must hold
 *       kinds: ["JobSet.jobset.x-k8s.io", "*.kubeflow.org"]   # fnmatch on Kind.group
 *       namespaces: ["team-a", "ml-*"]
 *       excludeNamespaces: ["ml-sandbox"]
 *       selector: {matchLabels: {...}, matchExpressions: [...]}  # on the workload's labels
 *       components: ["worker"]
 *       operations: [CREATE]            # CREATE (the default) and/or UPDATE
 *     mode: default     # default: set what is absent; override: replace what differs;
 *                       # require: write nothing, check the object as it is
 *     validationActions: [Deny]   # what /validate does with a violation: Deny, Warn,
 *                                 # Audit, [Deny, Audit] or [Warn, Audit]; none given =
 *                                 # the policy only mutates. (The older enforce: true
 *                                 # reads as [Deny], enforce: false as none.)
 *     podTemplate: {labels, annotations, priorityClassName, schedulerName,
 *                   runtimeClassName, nodeSelector, tolerations}
 *     gang: {scheduler: kai|volcano|coscheduling|yunikorn|kueue|native|none, queue: q}
 *     limits:           # checks on the resolved workload (ResourceQuota's vocabulary)
 *       workload: {nvidia.com/gpu: 64, cpu: "512", memory: 4Ti, pods: 256}  # totals
 *       pod: {nvidia.com/gpu: 8}                                             # any one pod
 *
 * A policy set is immutable once loaded; threads may share it. */
#ifndef WMAP_POLICY_H
#define WMAP_POLICY_H

#include <jansson.h>
#include <stddef.h>
#include "wmap/error.h"
#include "wmap/gang.h"

#define WMAP_POLICY_OP_CREATE 1u
#define WMAP_POLICY_OP_UPDATE 2u

/* A policy's validation actions (spec.validationActions), Kubernetes' ValidatingAdmission-
 * Policy names: Deny refuses a violating object, Warn admits it with an admission warning
 * per violation, Audit admits it silently and counts it (metrics, reports). Deny and Warn
 * never come together. */
#define WMAP_ACTION_DENY 1u
#define WMAP_ACTION_WARN 2u
#define WMAP_ACTION_AUDIT 4u

typedef enum wmap_policy_mode {
	WMAP_POLICY_DEFAULT,  /* set what is absent; a check wants the field present */
	WMAP_POLICY_OVERRIDE, /* replace what differs; a check wants the policy's value */
	WMAP_POLICY_REQUIRE,  /* write nothing; a check wants the policy's value, as written */
} wmap_policy_mode;

/* One entry of spec.limits.workload or spec.limits.pod: at most `milli` thousandths of a
 * unit of `resource` ("nvidia.com/gpu", "cpu", "memory", ...; "pods" in workload limits is
 * the number of the workload's pods). */
typedef struct wmap_policy_limit {
	char *resource;
	char *text;    /* the limit as written ("64", "4Ti"), for messages */
	int64_t milli; /* exact, as wmap_quantity_parse_milli reads text */
} wmap_policy_limit;

/* Resource names one limits map may list (a bound for the per-pod count, wmap_pod_amounts). */
#define WMAP_POLICY_MAX_LIMITS 16

typedef struct wmap_policy {
	char *name;  /* metadata.name */
	char *where; /* "file:line:col" of the document, for messages */
	size_t n_kinds, n_namespaces, n_exclude, n_components;
	char **kinds;        /* patterns on "Kind.group" ("Kind" for core); none = all */
	char **namespaces;   /* patterns; none = all */
	char **exclude;      /* namespace patterns never matched */
	char **components;   /* component names; none = all */
	json_t *selector;    /* {matchLabels, matchExpressions}, NULL = all */
	unsigned operations; /* WMAP_POLICY_OP_* bits */
	wmap_policy_mode mode;
	unsigned actions; /* WMAP_ACTION_* bits; 0 = the policy only mutates */

	json_t *labels;            /* object of strings, NULL when unset */
	json_t *annotations;       /* object of strings */
	json_t *node_selector;     /* object of strings */
	json_t *tolerations;       /* array of objects */
	char *priority_class_name; /* NULL when unset */
	char *scheduler_name;
	char *runtime_class_name;

	int has_gang; /* gang.scheduler given */
	wmap_gang_scheduler gang;
	char *queue; /* gang.queue, NULL when unset */

	size_t n_workload_limits, n_pod_limits;
	wmap_policy_limit *workload_limits; /* spec.limits.workload, in document order */
	wmap_policy_limit *pod_limits;      /* spec.limits.pod */
} wmap_policy;

typedef struct wmap_policy_set {
	char *source; /* the file it was read from */
	size_t n;
	wmap_policy *policies; /* in document order */
} wmap_policy_set;

/* Reads every WorkloadPolicy document of a YAML file (wmap_yaml_parse_file). Any invalid
 * document fails the whole file, with file:line:col. The caller owns *out. */
int wmap_policy_set_load(wmap_policy_set **out, const char *path, wmap_error *err);

/* The same from parsed documents (an array); positions as wmap_yaml_opts.positions gives
 * them (may be NULL); name is used in messages. */
int wmap_policy_set_parse(wmap_policy_set **out, const json_t *docs, const char *name,
			  const json_t *positions, wmap_error *err);

/* Reads the policies of several FILE|DIR paths (wmap_file_list_add: a folder is walked
 * recursively in name order) into one set, in the order given: the paths in argument order,
 * each file's documents in file order. An invalid document fails it all; two policies of one
 * name are an error naming both places (file:line:col). The caller owns *out. */
int wmap_policy_set_load_paths(wmap_policy_set **out, const char *const *paths, size_t n,
			       wmap_error *err);

void wmap_policy_set_free(wmap_policy_set *set);

/* 1 when p applies to a workload of kind ("Kind.group", or "Kind" for the core group) in
 * namespace ns (may be NULL or "") with labels (its metadata.labels, may be NULL), for
 * the operation bit op. Components are matched separately. */
int wmap_policy_matches(const wmap_policy *p, const char *kind, const char *ns,
			const json_t *labels, unsigned op);

/* 1 when p's match.kinds cover kind ("Kind.group", or "Kind" for the core group; NULL is
 * ""): a pattern matches it as fnmatch does, and no kinds cover every kind. The one kind rule
 * of wmap_policy_matches, the webhook's registration rules and the auditor's kinds. */
int wmap_policy_matches_kind(const wmap_policy *p, const char *kind);

/* 1 when p applies to pod templates of the named component. */
int wmap_policy_matches_component(const wmap_policy *p, const char *component);

/* A Kubernetes label selector ({matchLabels, matchExpressions}; operators In, NotIn,
 * Exists, DoesNotExist) against labels (NULL = none). NULL selector matches everything. */
int wmap_selector_matches(const json_t *selector, const json_t *labels);

/* 1 when p has validation actions, i.e. /validate must see the workloads it matches. */
int wmap_policy_needs_validation(const wmap_policy *p);

/* 1 when p has podTemplate settings (what a field check compares). */
int wmap_policy_sets_template(const wmap_policy *p);

/* 1 when p writes something into the workloads it matches: podTemplate settings or gang
 * hints outside `require` mode. Mutation (the webhook's /mutate, `kubectl wmap mutate`)
 * reads only these policies. */
int wmap_policy_writes(const wmap_policy *p);

/* "Deny", "Warn,Audit", ... (Kubernetes' names, comma-separated, in Deny, Warn, Audit
 * order; "" for none) into buf as snprintf does: returns the whole length. */
size_t wmap_policy_actions_format(char *buf, size_t len, unsigned actions);

/* The operation bit for "CREATE"/"UPDATE", 0 for anything else. */
unsigned wmap_policy_operation(const char *operation);

#endif
