/* wmap: workload metrics. A resolved workload and the pods attributed to it turned into
 * Prometheus text lines (exposition format 0.0.4), by family, with no I/O: the webhook's
 * exporter (webhook/workloads.c) renders an object's lines when it changes and concatenates
 * them per family at publish time, as kube-state-metrics keeps one text per object.
 *
 * Every series carries namespace, workload, workload_kind and workload_group (empty for the
 * core group). Label names follow upstream Workload Map's prototype, metric names
 * Prometheus' and kube-state-metrics' conventions (reference: workload-metrics.md §9). */
#ifndef WMAP_WLMETRICS_H
#define WMAP_WLMETRICS_H

#include <jansson.h>
#include <stddef.h>
#include "wmap/buf.h"
#include "wmap/error.h"
#include "wmap/registry.h"
#include "wmap/workload.h"

/* The families, in the order they are exposed. */
typedef enum wmap_wlm_family {
	WMAP_WLM_INFO,     /* wmap_workload_info */
	WMAP_WLM_STATUS,   /* wmap_workload_status: every phase, 0 or 1 */
	WMAP_WLM_REPLICAS, /* wmap_workload_component_replicas */
	WMAP_WLM_REQUESTS, /* wmap_workload_component_resource_requests */
	WMAP_WLM_POD,      /* wmap_pod_workload_info */
	WMAP_WLM_COUNT,
} wmap_wlm_family;

/* The family's name ("wmap_workload_info"); a static string. */
const char *wmap_wlm_family_name(wmap_wlm_family f);
/* Appends the # HELP and # TYPE lines of f to out. */
void wmap_wlm_header(wmap_buf *out, wmap_wlm_family f);

/* Appends the lines of w (borrowed) to out[WMAP_WLM_INFO .. WMAP_WLM_REQUESTS] and adds
 * the number of series written to *series. The queue label comes from the workload's own
 * queue label or annotation (Kueue, KAI, Volcano, YuniKorn). Requests are those of the
 * desired replicas (per-pod requests x desired), non-zero only, every resource the pod
 * specs name (cpu, memory and nvidia.com/gpu always looked at). 0; WMAP_EEVAL with err
 * naming the JSON path of a malformed quantity; WMAP_ENOMEM or WMAP_ELIMIT when an append
 * failed (then in that buffer's error too). On failure the buffers without an error are
 * left as they were and *series is unchanged. */
int wmap_wlm_workload(wmap_buf out[WMAP_WLM_COUNT], size_t *series, const wmap_workload *w,
		      wmap_error *err);

/* Where pod (borrowed) belongs in w, by the rules of `kubectl wmap describe`: the first
 * pod-bearing component (in the definition's order) whose componentTypeSelector matches
 * (a component without one claims every pod when it is the only pod-bearing one), then the
 * instance its componentInstanceSelector names. *node is an index into w->nodes and *inst
 * into that node's instances, -1 each when none claims it. 0, or a WMAP_E* code of the
 * selector's evaluation with err set. */
int wmap_wlm_place(int *node, int *inst, wmap_engine *eng, const wmap_workload *w, json_t *pod,
		   wmap_error *err);

/* Appends the wmap_pod_workload_info line of pod (borrowed) placed at node/inst of w (-1:
 * component or instance "<unknown>", the sentinel no Kubernetes name can equal). */
void wmap_wlm_pod(wmap_buf *out, const wmap_workload *w, const json_t *pod, int node, int inst);

/* Appends s as a label value (backslash, double quote and newline escaped). */
void wmap_wlm_escape(wmap_buf *out, const char *s);

#endif
