/* wmap: admission logic shared by the webhook and `kubectl wmap mutate`: an AdmissionReview
 * (or a bare object) in, a response (or a JSON Patch) out. No I/O, no global state.
 *
 * Mutation on CREATE stamps every pod template of every component with the identity
 * labels (wmap.io/workload-kind, -name, component, instance), the chosen scheduler's gang
 * hints and the settings of matching policies. UPDATE gets nothing unless a policy lists
 * UPDATE in its operations. Anything wmap cannot process (no definition, an evaluation
 * error, the time budget) is allowed unchanged with a warning: mutation fails open.
 * Validation evaluates the policies with validation actions (wmap/audit.h): a violation of
 * a Deny policy is denied, of a Warn policy admitted with an admission warning per
 * violation, of an Audit policy admitted and counted (wmap_admission_info.hits). An object
 * that a Deny policy matches but that cannot be evaluated (an evaluation error, the time
 * budget) is denied too: enforcement does not fail open. It also checks the webhook's own objects: a Karta
 * that upstream's rules refuse and a WorkloadPolicy that does not parse are denied. */
#ifndef WMAP_ADMISSION_H
#define WMAP_ADMISSION_H

#include <jansson.h>
#include <stdint.h>
#include "wmap/error.h"
#include "wmap/gang.h"
#include "wmap/json_text.h"
#include "wmap/policy.h"
#include "wmap/registry.h"
#include "wmap/schema.h"

typedef struct wmap_admission_config {
	wmap_gang_scheduler scheduler;   /* used when no matching policy picks one */
	const char *queue;               /* used when no matching policy gives one; NULL = none */
	int kai_external;                /* KAI external mode when no matching policy picks a mode */
	const char *cosched_profile;     /* coscheduling's schedulerName; NULL = WMAP_GANG_COSCHED_PROFILE */
	const wmap_policy_set *policies; /* NULL = none (borrowed) */
	int64_t deadline_ns;             /* CLOCK_MONOTONIC deadline, 0 = none */
	int max_depth;                   /* object nesting limit, 0 = WMAP_ADMISSION_MAX_DEPTH */
	/* The CRDs the cluster serves, for the schema path check of Karta objects at
	 * /validate; NULL (or a NULL find) = unknown, no check. Borrowed. */
	const wmap_crd_lookup *crds;
	const wmap_json_cut *cut; /* what wmap_admission_parse left out of the review
					    * (borrowed); NULL or no reason: nothing. Set, it also
					    * says the review was read with that parse's depth cap,
					    * so the object is not walked again for its depth */
} wmap_admission_config;

#define WMAP_ADMISSION_MAX_DEPTH 200

/* The caps a review is read with (wmap_admission_parse), from Kubernetes' own limits: the
 * API server takes request bodies up to 3 MiB and stores objects up to about 1.5 MiB, and
 * holds an object's annotations to 256 KiB in total.
 * - Depth: objects deeper than WMAP_ADMISSION_MAX_DEPTH are not processed anyway; the
 *   review adds 2 levels (review, request) above its object, and the depth check lets a
 *   scalar sit 2 levels below its deepest allowed container: nothing it accepts is cut.
 * - Members per object or array: 16,384. 256 KiB of annotations over 16,384 entries is 16
 *   bytes of key and value each; real workload maps and lists hold tens to thousands (the
 *   benchmarks' 1000-job JobSet has 1,000).
 * - Values in all: 65,536. Workload objects measure 16 to 48 bytes of JSON per value (the
 *   benchmark inputs), so this is an object of 1 to 3 MiB. The cheapest values to send and
 *   dearest to build (short distinct keys) cost 0.3-0.5 us each to build and free, so the
 *   cap bounds the build at 20-33 ms, and the rest of a 7 MiB body is skimmed at a few ns
 *   a byte: make bench measures the worst body at about 22 ms of CPU against a goal of 50
 *   (tests/bench/README.md).
 * A review over a cap is not refused: what is over is left out, the envelope is read, and
 * wmap_admission_review fails open (mutation) or denies where a Deny policy matches
 * (validation). */
#define WMAP_REVIEW_MAX_DEPTH (WMAP_ADMISSION_MAX_DEPTH + 4)
#define WMAP_REVIEW_MAX_MEMBERS 16384
#define WMAP_REVIEW_MAX_NODES 65536

typedef enum wmap_admission_mode {
	WMAP_ADMISSION_MUTATE,
	WMAP_ADMISSION_VALIDATE,
	/* The envelope is checked as for the others, then the review is allowed unchanged
	 * without a look at its object: the floor that benchmarks measure wmap's own work
	 * against (wmap-webhook --null-admission). Never for a real cluster. */
	WMAP_ADMISSION_ALLOW,
} wmap_admission_mode;

#define WMAP_ADMISSION_MAX_HITS 16

/* What happened, for the log line and the metrics. Strings are truncated copies. */
typedef struct wmap_admission_info {
	char uid[80];
	char kind[128]; /* "Kind.group" */
	char namespace_[64];
	char name[256];
	char operation[16];
	const char *result; /* "patched", "allowed", "denied", "failopen" (static) */
	const char *reason; /* for failopen: "no-definition", "evaluation", "budget",
				  * "too-deep", "too-many-members", "too-many-nodes",
				  * "internal"; for a denial the review could not be checked:
				  * the same; NULL otherwise (static) */
	size_t patch_ops, patch_bytes;
	int dry_run;
	/* /validate: each policy the object violates, once (whatever was decided: a Deny
	 * policy's violation is denied, a Warn or Audit one admitted), for the metrics;
	 * hits_dropped counts those past WMAP_ADMISSION_MAX_HITS. */
	size_t n_hits, hits_dropped;
	struct {
		char policy[254]; /* a Kubernetes object name has at most 253 characters */
		unsigned actions; /* WMAP_ACTION_* */
	} hits[WMAP_ADMISSION_MAX_HITS];
} wmap_admission_info;

/* Reads an AdmissionReview body of len bytes with the caps above and deadline_ns
 * (CLOCK_MONOTONIC, 0 = none) in cut mode: *out gets the review (owned by the caller) with
 * whatever was over a cap left out, and *cut says what (pass it in
 * wmap_admission_config.cut). Returns 0; WMAP_EINVAL when the body is not JSON, or
 * WMAP_ENOMEM, with the place in *jerr (may be NULL). */
int wmap_admission_parse(json_t **out, wmap_json_cut *cut, const char *body, size_t len,
			 int64_t deadline_ns, json_error_t *jerr);

/* Answers review (an admission.k8s.io/v1 AdmissionReview, borrowed) with a new
 * AdmissionReview in *out owned by the caller: uid echoed, patchType JSONPatch and a
 * base64 patch when there is one, warnings when useful. Returns WMAP_EINVAL (message for
 * an HTTP 400, *out NULL) when review is not a usable AdmissionReview; every other case,
 * including fail-open, returns 0 with a response. info may be NULL. */
int wmap_admission_review(json_t **out, wmap_engine *eng, const wmap_admission_config *cfg,
			  wmap_admission_mode mode, json_t *review, wmap_admission_info *info,
			  wmap_error *err);

/* The same answer as compact JSON text, what wmap_json_text of *out would be, written
 * directly (the webhook sends it; the base64 patch is never a string of its own): *text a
 * NUL-terminated string owned by the caller (free()), its length in *len (may be NULL).
 * The same returns; on 0, *text NULL means memory ran out writing the text. */
int wmap_admission_review_text(char **text, size_t *len, wmap_engine *eng,
			       const wmap_admission_config *cfg, wmap_admission_mode mode,
			       json_t *review, wmap_admission_info *info, wmap_error *err);

/* The mutation of object (borrowed) for operation ("CREATE", "UPDATE", ...) in namespace
 * ns (NULL = the object's): *patch gets a JSON Patch array (possibly empty), *warnings an
 * array of strings; both owned by the caller, also when failing. A negative return means
 * wmap could not process the object (err says why, *reason names the class as in
 * wmap_admission_info); callers fail open. */
int wmap_admission_mutate(json_t **patch, json_t **warnings, const char **reason,
			  wmap_engine *eng, const wmap_admission_config *cfg, json_t *object,
			  const char *operation, const char *ns, wmap_error *err);

/* The group objects the gang settings of object (a live workload: uid set) ask for, as
 * the webhook's group controller keeps them (wmap_gang_group_objects): an array, empty
 * when its scheduler needs none (or it is owned by a controller: its owner has the group);
 * *row is the scheduler's row. Notes (why a component has no group) go to warnings (may be
 * NULL). Negative when the object cannot be resolved (no definition: WMAP_ENODEF). */
int wmap_admission_groups(json_t **out, const wmap_gang_row **row, json_t *warnings,
			  wmap_engine *eng, const wmap_admission_config *cfg, json_t *object,
			  wmap_error *err);

/* The webhook's own objects at /validate: a run.ai/v1alpha1 Karta is loaded with
 * upstream's rules (wmap_definition_load, then wmap_definition_check_jq) and a
 * wmap.io/v1alpha1 WorkloadPolicy is parsed as a policy-file document (its status aside).
 * *violations gets what denies the object (each finding with its field path), *warnings
 * the schema path findings of a valid Karta whose kind cfg->crds knows; both new arrays
 * owned by the caller. Returns 1 when object is one of the two kinds, 0 when it is not
 * (both arrays NULL then), WMAP_ENOMEM. DELETE and other operations are not checked. */
int wmap_admission_check_own_object(json_t **violations, json_t **warnings,
				    const wmap_admission_config *cfg, const json_t *object,
				    const char *operation, wmap_error *err);

/* "Kind.group" (or "Kind" for the core group) of an object's apiVersion and kind. */
void wmap_admission_kind(char *buf, size_t len, const json_t *object);

#endif
