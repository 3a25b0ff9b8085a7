/* wmap: gang-scheduling groups of a resolved workload, and the schedulers that read them.
 *
 * A plan says, for every pod template of a workload, which gang group it belongs to, the
 * group's name and its minimum member count. It follows the definition's
 * optimizationInstructions.gangScheduling (reference karta-upstream 3.9 and 5.10):
 *
 * - podGroups (the form every catalog entry uses): a template belongs to the first group
 *   that lists its component or, failing that, its nearest listed ancestor. Member filters
 *   and groupByKeyPaths run against pods, which do not exist at admission; a group whose
 *   key path is the member's instance selector (JobSet's replicatedjob-name) is split per
 *   instance ("<name>-<instance>"), otherwise it is one group per workload. With several
 *   podGroups the group's name is appended ("<name>-<podGroup>").
 * - podGroup (v2): one group for the workload; with subGroups its minimum is the sum of
 *   the subgroups' minimums.
 * - no gangScheduling: no groups (the scheduler may still be selected).
 *
 * The minimum is upstream's CalculateSubtreeScale: with any scale definition, a component's
 * own scale is the sum of its instances' minReplicas (when > 0) else replicas; a pod-bearing
 * component counts its own scale, others the product of their own scale and their
 * children's sum (whichever is non-zero when one is zero); with no scale definition at all,
 * the number of pod-bearing instances. */
#ifndef WMAP_GANG_H
#define WMAP_GANG_H

#include <stddef.h>
#include <stdint.h>
#include "wmap/error.h"
#include "wmap/workload.h"

typedef enum wmap_gang_scheduler {
	WMAP_GANG_NONE,
	WMAP_GANG_KAI,          /* schedulerName kai-scheduler, queue label on the workload */
	WMAP_GANG_VOLCANO,      /* schedulerName volcano, scheduling.k8s.io/group-name */
	WMAP_GANG_COSCHEDULING, /* label scheduling.x-k8s.io/pod-group */
	WMAP_GANG_YUNIKORN,     /* schedulerName yunikorn, task-group annotations */
	WMAP_GANG_KUEUE,        /* label kueue.x-k8s.io/queue-name on the workload */
	WMAP_GANG_NATIVE,       /* Workload API: detect and annotate only (needs objects) */
	WMAP_GANG_COUNT,
} wmap_gang_scheduler;

/* "kai", "volcano", "coscheduling", "yunikorn", "kueue", "native", "none". */
const char *wmap_gang_scheduler_name(wmap_gang_scheduler s);

/* Parses a name as above; WMAP_EINVAL naming the accepted names otherwise. */
int wmap_gang_scheduler_parse(wmap_gang_scheduler *out, const char *name, wmap_error *err);

typedef struct wmap_gang_group {
	char *name;            /* a valid label value */
	const char *pod_group; /* the definition's podGroup name (borrowed), NULL for v2 */
	int64_t min_member;
	int64_t pods; /* the pods its members will have (replicas, not minimums) */
} wmap_gang_group;

typedef struct wmap_gang_member {
	size_t node;            /* index into workload->nodes */
	size_t instance;        /* index into that node's instances */
	int group;              /* index into plan->groups, -1 when in no group */
	char *task_group;       /* "<component>[-<instance>]" as a label value */
	int64_t task_min;       /* the template's own minimum (its instance's scale) */
	wmap_resources per_pod; /* the template's per-replica resources */
} wmap_gang_member;

typedef struct wmap_gang_plan {
	size_t n_groups;
	wmap_gang_group *groups;
	size_t n_members; /* one per pod-bearing instance, in workload order */
	wmap_gang_member *members;
	size_t n_notes;
	char **notes; /* why something was left out, for admission warnings */
} wmap_gang_plan;

/* Builds the plan of w; name is the base of group names (the workload's metadata.name).
 * With name NULL (an object with only generateName) the plan has members but no groups and
 * a note saying why. The caller owns *out. */
int wmap_gang_plan_build(wmap_gang_plan **out, const wmap_workload *w, const char *name,
			 wmap_error *err);
void wmap_gang_plan_free(wmap_gang_plan *plan);

/* The member for a node's instance (borrowed from plan), NULL when it has no pods. */
const wmap_gang_member *wmap_gang_plan_member(const wmap_gang_plan *plan, size_t node,
					      size_t instance);

/* CalculateSubtreeScale of the node at index node, over all its instances (instance_id
 * NULL) or one of them. */
int64_t wmap_gang_subtree_scale(const wmap_workload *w, size_t node, const char *instance_id);

/* ---- the scheduler table: what each gang scheduler reads and which object it needs ----
 *
 * One row per scheduler (and one for KAI's external mode), from each project's source
 * (../shared/reference/gang-schedulers.md): admission stamps the row's keys, the webhook's
 * group controller builds the row's group object, `describe` reads the pod keys that name a
 * group. A key is written on pod templates at `where`. */
typedef enum wmap_gang_where {
	WMAP_GANG_AT_NONE,
	WMAP_GANG_AT_LABEL,      /* template metadata.labels */
	WMAP_GANG_AT_ANNOTATION, /* template metadata.annotations */
	WMAP_GANG_AT_ROOT_LABEL, /* the workload's own metadata.labels */
} wmap_gang_where;

typedef struct wmap_gang_key {
	const char *key;
	wmap_gang_where where;
} wmap_gang_key;

typedef struct wmap_gang_row {
	wmap_gang_scheduler id;
	const char *name;           /* as --gang-scheduler spells it; "kai-external" for the mode */
	const char *scheduler_name; /* spec.schedulerName stamped where the template has none */
	wmap_gang_key group;        /* names the group on each template */
	wmap_gang_key task;         /* names the member's role (task / subgroup) */
	wmap_gang_key queue;        /* the queue (NULL key: the group object carries it) */
	wmap_gang_key opt_out;      /* a constant that turns the scheduler's own grouper off */
	const char *opt_out_value;
	/* The group object wmap creates; NULL kind: none (the scheduler needs none, or makes
	 * its own). */
	const char *api_group, *version, *kind, *resource;
	int status_subresource; /* 0: the scheduler rewrites the whole object (patch only) */
	int min_resources;      /* spec.minResources is read */
	int task_minimums;      /* per-role minimums: 1 minTaskMember, 2 subGroups + minSubGroup */
} wmap_gang_row;

/* The row of s; KAI's external mode with kai_external. Never NULL (WMAP_GANG_NONE's row
 * writes nothing). */
const wmap_gang_row *wmap_gang_row_of(wmap_gang_scheduler s, int kai_external);

/* The rows that create group objects (for `describe` and RBAC): n into *n. */
const wmap_gang_row *const *wmap_gang_group_rows(size_t *n);

/* 1 when Kueue has an integration of its own for group/kind (Job, JobSet, the Kubeflow
 * jobs, Ray, LeaderWorkerSet, AppWrapper, TrainJob, Deployment, StatefulSet, Pod): only the
 * workload's queue label is written. Any other kind is gang-admitted through Kueue's pod
 * integration: every template carries the queue, the pod group's name and its total count. */
int wmap_gang_kueue_native(const char *group, const char *kind);

/* KAI's Karta lookup (v0.17+) lists Kartas by three labels equal to the top owner's group,
 * version and kind, as upstream's operator stamps them. */
#define WMAP_KARTA_LABEL_GROUP "run.ai/karta-group"
#define WMAP_KARTA_LABEL_VERSION "run.ai/karta-version"
#define WMAP_KARTA_LABEL_KIND "run.ai/karta-kind"

/* The three labels of a Karta object (its spec.structureDefinition.rootComponent.kind) as
 * a new object {label: value}; NULL when the Karta has no root kind or a value is not a
 * valid label value. */
json_t *wmap_karta_labels(const json_t *karta);

/* A copy of karta with those labels set in metadata.labels (its other labels kept); NULL
 * on allocation failure. */
json_t *wmap_karta_labelled(const json_t *karta);

/* The coscheduling profile's schedulerName when no setting gives one (the scheduler-plugins
 * chart's second scheduler). */
#define WMAP_GANG_COSCHED_PROFILE "scheduler-plugins-scheduler"

/* What a group object is built from besides the plan. */
typedef struct wmap_gang_build {
	const json_t *workload;     /* the live object: apiVersion, kind, metadata.{name,namespace,uid} */
	const wmap_workload *w;     /* resolved with resources */
	const char *queue;          /* NULL: none written (Volcano's default queue applies) */
	const char *priority_class; /* NULL: none */
	int64_t schedule_timeout_s; /* coscheduling scheduleTimeoutSeconds, 0 = unset */
} wmap_gang_build;

/* Labels every group object of wmap carries (the controller lists its own by them). */
#define WMAP_GANG_MANAGED_BY "wmap-webhook"

/* The group objects of plan for row (a JSON array, one object per plan group, possibly
 * empty): apiVersion, kind, metadata {name, namespace, labels, ownerReferences: one
 * controller reference to the workload with blockOwnerDeletion}, spec. Never a status.
 * The caller owns *out. */
int wmap_gang_group_objects(json_t **out, const wmap_gang_row *row, const wmap_gang_plan *plan,
			    const wmap_gang_build *b, wmap_error *err);

#endif
