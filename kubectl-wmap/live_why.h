/* kubectl-wmap: why a live workload is not ready, for describe (live_events.c, live_gang.c):
 * what is wrong with the containers of a pod, the Warning events of the workload, its pods
 * and their controllers (one events request per describe), and the gang state against the
 * definition's gangScheduling and the scheduler's own group object. */
#ifndef KUBECTL_WMAP_LIVE_WHY_H
#define KUBECTL_WMAP_LIVE_WHY_H

#include "live_pods.h"

/* ---- containers (live_events.c) ---------------------------------------------------- */

/* A JSON array, new reference, of what keeps the pod's containers from being ready:
 * {container, init, reason, message?, exitCode?, restarts, lastTermination?{reason,
 * exitCode}} for each container that waits (CrashLoopBackOff, ImagePullBackOff, ...), ended
 * badly, or whose last run was killed (OOMKilled); empty when nothing is wrong. NULL on
 * ENOMEM. */
json_t *live_container_issues(const json_t *pod);

/* One line for a container issue ("main: CrashLoopBackOff, 7 restarts, last terminated
 * OOMKilled (exit 137)"). */
void live_container_issue_text(char *buf, size_t len, const json_t *issue);

/* ---- events (live_events.c) -------------------------------------------------------- */

#define LIVE_EVENTS_DEFAULT 3 /* --events: lines per component */

/* The Warning events of one namespace, from one list request (type=Warning as a field
 * selector, everything else filtered here: tests/bench/README.md has the measurement). */
typedef struct live_events {
	json_t *items;  /* the events as listed (owned) */
	json_t *by_uid; /* involvedObject.uid -> array of borrowed events (owned) */
} live_events;

/* Lists the namespace's Warning events (ns NULL: every namespace) in one request. *out
 * owns what it holds, also after a failure (free with live_events_free). */
int live_events_load(live_events *out, live_ctx *lc, const char *ns, wmap_error *err);
void live_events_free(live_events *ev);

/* A deduplicated view of the events of several objects: the same reason and message on
 * any of them is one entry, its counts summed, its last time the newest, newest first. */
typedef struct live_event_sum {
	json_t *list; /* array of {reason, message, count, lastSeen, objects, object}
				     (owned); object is "Kind/name" of the first involved object */
} live_event_sum;

/* Adds the events of the object with uid to sum (creating its list on first use). */
int live_event_sum_add(live_event_sum *sum, const live_events *ev, const char *uid,
		       wmap_error *err);
/* Sorts newest first and keeps at most max entries; returns how many were dropped. */
size_t live_event_sum_finish(live_event_sum *sum, size_t max);
void live_event_sum_free(live_event_sum *sum);

/* The uids of the objects of ev's namespace that have events and are not in known, whose
 * kind is kind: candidates for a controller of the workload without pods (a Job that
 * cannot create its pods). A new array of {uid, apiVersion, kind, name}. */
json_t *live_events_objects_of_kind(const live_events *ev, const char *kind);

/* ---- gang state (live_gang.c) ------------------------------------------------------ */

#define LIVE_GANG_MAX_OBJECTS 8

typedef struct live_gang {
	int on;      /* gang-scheduled: the definition says so or a group exists */
	int64_t min; /* the group's minimum (the scheduler's, else the definition's) */
	int64_t desired, scheduled, ready;
	int admitted;           /* 1 / 0 */
	const char *min_source; /* "definition" or the scheduler object's kind */
	json_t *groups;         /* array of {apiVersion, kind, name, minMember?, phase?,
				     admitted?, message?} (owned) */
} live_gang;

/* Fills g for w with its attributed pods: the definition's gang plan, then the schedulers'
 * group objects whose kinds discovery says are served (Volcano and scheduler-plugins
 * PodGroups, KAI's PodGroup, Kueue's Workload), one list per served kind, matched by owner
 * reference or by the group names the pods and the plan carry. A kind that is not served
 * costs nothing; a list that fails is left out with a warning. */
int live_gang_load(live_gang *g, live_ctx *lc, const wmap_workload *w, const live_pods *pods,
		   wmap_error *err);
void live_gang_free(live_gang *g);

/* "4/5 scheduled, 3/5 ready (min 5), not admitted". */
void live_gang_text(char *buf, size_t len, const live_gang *g);

#endif
