/* wmap: policy reports, one object per namespace, in the openreports.io/v1alpha1 `Report`
 * format (what Kyverno moved to and Policy Reporter reads) or the older
 * wgpolicyk8s.io/v1alpha2 `PolicyReport`. Both have the same result shape: policy, result
 * (pass|fail|warn|error|skip), severity, scored, category, message, source, timestamp
 * {seconds, nanos}, resources (ObjectReferences) and properties (a map of strings), plus a
 * summary {pass, fail, warn, error, skip}; openreports adds a report-level `source`.
 *
 * Building is pure: the same workloads and the same previous report give a byte-identical
 * object, so a writer that finds nothing changed skips its PUT. */
#ifndef WMAP_REPORT_H
#define WMAP_REPORT_H

#include <jansson.h>
#include "wmap/error.h"

typedef enum wmap_report_api {
	WMAP_REPORT_OPENREPORTS, /* openreports.io/v1alpha1 Report (the default) */
	WMAP_REPORT_WGPOLICY,    /* wgpolicyk8s.io/v1alpha2 PolicyReport */
} wmap_report_api;

#define WMAP_REPORT_NAME "wmap-policy" /* one report per namespace, always this name */
#define WMAP_REPORT_MANAGED_BY "wmap-webhook"
/* Results kept in one report. Each result is about 400 bytes of JSON, so 2,000 stay well
 * under the 1.5 MiB an object may take in etcd; past it pass results go first (summary
 * counts still count everything) and an annotation says how many were left out. */
#define WMAP_REPORT_MAX_RESULTS 2000
#define WMAP_REPORT_OMITTED_ANNOTATION "wmap.io/results-omitted"

/* "openreports" or "wgpolicyk8s" into *out; WMAP_EINVAL naming the value otherwise. */
int wmap_report_api_parse(wmap_report_api *out, const char *s, wmap_error *err);
/* The API's apiVersion, kind and resource plural (static strings). */
const char *wmap_report_api_version(wmap_report_api api);
const char *wmap_report_kind(wmap_report_api api);
const char *wmap_report_plural(wmap_report_api api);

/* Builds namespace ns's report into *out (owned by the caller) from workloads (borrowed), an
 * array with one entry per checked workload:
 *
 *   {"workload": {"apiVersion", "kind", "name", "uid"?},
 *    "pass": ["policy", ...],                        policies that apply and hold
 *    "fail": [{"policy", "actions": ["Deny"|"Warn"|"Audit", ...], "message"}, ...],
 *    "error": [{"policy", "message"}, ...]}       the workload could not be evaluated
 *
 * An entry with "error" gives one `error` result per policy listed there (its pass and fail
 * lists are not used) and counts in summary.error; failures and errors are kept first
 * when the cap applies.
 * One result per workload and policy: a policy with several failures on one workload is one
 * `fail` result whose message joins theirs (sorted, "; ") and whose actions are their union;
 * a policy both passed and failed is failed. Every result is `fail` or `pass`; a failure's
 * severity follows its strongest action (Deny high, Warn medium, Audit low), its actions are
 * in properties.actions ("Deny,Audit"). Results are sorted by kind, name, apiVersion, policy.
 * A result equal to one of previous (the report in the cluster, borrowed, may be NULL) keeps
 * that one's timestamp; new ones get now_s. WMAP_EINVAL names the entry that is malformed
 * (".[2].fail[0].policy: not a string"), WMAP_ENOMEM. */
int wmap_report_build(json_t **out, wmap_report_api api, const char *ns, const json_t *workloads,
		      const json_t *previous, long long now_s, wmap_error *err);

/* 1 when the report in the cluster (borrowed) already says what built (borrowed) says:
 * same apiVersion, kind, source, summary, results, labels and omitted-annotation, whatever
 * the server's metadata. */
int wmap_report_same(const json_t *stored, const json_t *built);

#endif
