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

#endif
