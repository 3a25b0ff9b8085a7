/* wmap: workload metrics, the text of each family for one workload or one pod (see
 * include/wmap/wlmetrics.h). Only formatting and the resolver's numbers: no I/O, no state. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wmap/apiversion.h"
#include "wmap/pods.h"
#include "wmap/wlmetrics.h"

/* Resource names looked for in one pod description (more are ignored: a pod names a handful). */
#define MAX_RESOURCES 16
/* How deep the search for requests/limits maps goes in a pod spec (containers[i].resources). */
#define MAX_DEPTH 5

static const struct {
	const char *name, *help;
} families[WMAP_WLM_COUNT] = {
	[WMAP_WLM_INFO] = { "wmap_workload_info",
			    "Workloads wmap resolves through a definition (always 1), with the "
			    "version and definition read, and the queue a gang setting names." },
	[WMAP_WLM_STATUS] = { "wmap_workload_status",
			      "The workload's normalized phase: 1 for each phase it is in, 0 for "
			      "the others." },
	[WMAP_WLM_REPLICAS] = { "wmap_workload_component_replicas",
				"Desired replicas of each component instance, from the spec." },
	[WMAP_WLM_REQUESTS] = { "wmap_workload_component_resource_requests",
				"Resources the desired replicas of each component instance request "
				"(per-pod requests x replicas), pods created or not." },
	[WMAP_WLM_POD] = { "wmap_pod_workload_info",
			   "Pods attributed to their topmost described workload, with their "
			   "component and instance (always 1): the join key for pod metrics." },
};

/* Labels a workload's gang settings name its queue with, looked up in this order. */
static const char *const queue_keys[] = {
	"kueue.x-k8s.io/queue-name",
	"kai.scheduler/queue",
	"scheduling.volcano.sh/queue-name",
	"yunikorn.apache.org/queue",
};

const char *wmap_wlm_family_name(wmap_wlm_family f)
{
	return f < WMAP_WLM_COUNT ? families[f].name : "";
}

void wmap_wlm_header(wmap_buf *out, wmap_wlm_family f)
{
	if (f < WMAP_WLM_COUNT)
		wmap_buf_addf(out, "# HELP %s %s\n# TYPE %s gauge\n", families[f].name,
			      families[f].help, families[f].name);
}

void wmap_wlm_escape(wmap_buf *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			wmap_buf_addc(out, '\\');
		if (*s == '\n') {
			wmap_buf_adds(out, "\\n");
			continue;
		}
		wmap_buf_addc(out, *s);
	}
}

static void label(wmap_buf *out, const char *name, const char *value, int first)
{
	wmap_buf_addf(out, "%s%s=\"", first ? "" : ",", name);
	wmap_wlm_escape(out, value);
	wmap_buf_addc(out, '"');
}

/* The identity of w: name{namespace=..,workload=..,workload_kind=..,workload_group=.. */
static void identity(wmap_buf *out, const char *metric, const wmap_workload *w,
		     const char *namespace_)
{
	char group[256] = "", version[64] = "";
	if (w->api_version)
		wmap_api_version_parse(group, sizeof(group), version, sizeof(version), w->api_version);
	wmap_buf_adds(out, metric);
	wmap_buf_addc(out, '{');
	label(out, "namespace", namespace_ ? namespace_ : "", 1);
	label(out, "workload", w->name, 0);
	label(out, "workload_kind", w->kind, 0);
	label(out, "workload_group", group, 0);
}

static const char *queue_of(const wmap_workload *w)
{
	const json_t *md = json_object_get(w->object, "metadata");
	for (size_t i = 0; i < sizeof(queue_keys) / sizeof(queue_keys[0]); i++) {
		const char *q = json_string_value(json_object_get(json_object_get(md, "labels"), queue_keys[i]));
		if (!q)
			q = json_string_value(json_object_get(json_object_get(md, "annotations"), queue_keys[i]));
		if (q && q[0])
			return q;
	}
	return NULL;
}

static void info(wmap_buf *out, size_t *series, const wmap_workload *w)
{
	char group[256] = "", version[64] = "";
	const char *q = queue_of(w);
	if (w->api_version)
		wmap_api_version_parse(group, sizeof(group), version, sizeof(version), w->api_version);
	identity(out, families[WMAP_WLM_INFO].name, w, w->namespace_);
	label(out, "workload_version", version, 0);
	label(out, "definition", w->definition ? w->definition->name : "", 0);
	if (q)
		label(out, "queue", q, 0);
	wmap_buf_adds(out, "} 1\n");
	++*series;
}

static void status(wmap_buf *out, size_t *series, const wmap_workload *w)
{
	for (int s = 0; s <= WMAP_STATUS_COUNT; s++) {
		int on = s == WMAP_STATUS_UNDEFINED ? w->statuses == 0 : (w->statuses >> s) & 1u;
		identity(out, families[WMAP_WLM_STATUS].name, w, w->namespace_);
		label(out, "phase", wmap_status_name((wmap_status)s), 0);
		wmap_buf_addf(out, "} %d\n", on);
		++*series;
	}
}

/* Adds the keys of every "requests" or "limits" object under v (to MAX_DEPTH) to names. */
static void collect_names(const char **names, size_t *n, const json_t *v, int depth)
{
	const char *k;
	json_t *x;
	size_t i;
	if (depth > MAX_DEPTH)
		return;
	if (json_is_array(v)) {
		json_array_foreach((json_t *)v, i, x)
			collect_names(names, n, x, depth + 1);
		return;
	}
	json_object_foreach((json_t *)v, k, x) {
		if ((strcmp(k, "requests") == 0 || strcmp(k, "limits") == 0) && json_is_object(x)) {
			const char *r;
			json_t *q;
			json_object_foreach(x, r, q) {
				size_t j = 0;
				while (j < *n && strcmp(names[j], r) != 0)
					j++;
				if (j == *n && *n < MAX_RESOURCES)
					names[(*n)++] = r;
			}
		} else if (json_is_object(x) || json_is_array(x)) {
			collect_names(names, n, x, depth + 1);
		}
	}
}

/* kube-state-metrics' spelling: "nvidia.com/gpu" -> "nvidia_com_gpu", and its unit. */
static void resource_label(char *buf, size_t len, const char **unit, const char *name)
{
	size_t i = 0;
	for (; name[i] && i + 1 < len; i++) {
		char c = name[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		buf[i] = ok ? c : '_';
	}
	buf[i] = '\0';
	if (strcmp(name, "cpu") == 0)
		*unit = "core";
	else if (strcmp(name, "memory") == 0 || strcmp(name, "ephemeral-storage") == 0 ||
		 strncmp(name, "hugepages-", 10) == 0)
		*unit = "byte";
	else
		*unit = "integer";
}

/* v thousandths as a decimal number: "12", "0.5". */
static void add_milli(wmap_buf *out, int64_t v)
{
	int64_t whole = v / 1000, frac = v % 1000;
	if (frac == 0) {
		wmap_buf_addf(out, "%" PRId64, whole);
		return;
	}
	char f[8];
	snprintf(f, sizeof(f), "%03d", (int)(frac < 0 ? -frac : frac));
	for (int i = 2; i > 0 && f[i] == '0'; i--)
		f[i] = '\0';
	wmap_buf_addf(out, "%s%" PRId64 ".%s", v < 0 && whole == 0 ? "-" : "", whole, f);
}

static int instance_lines(wmap_buf out[WMAP_WLM_COUNT], size_t *series, const wmap_workload *w,
			  const wmap_node *n, const wmap_instance *in, wmap_error *err)
{
	const char *names[MAX_RESOURCES] = { "cpu", "memory", "nvidia.com/gpu" };
	size_t nn = 3;
	int64_t milli[MAX_RESOURCES];
	int rc;

	identity(&out[WMAP_WLM_REPLICAS], families[WMAP_WLM_REPLICAS].name, w, w->namespace_);
	label(&out[WMAP_WLM_REPLICAS], "component", n->def->name, 0);
	label(&out[WMAP_WLM_REPLICAS], "component_instance", in->id, 0);
	wmap_buf_addf(&out[WMAP_WLM_REPLICAS], "} %" PRId64 "\n", in->desired);
	++*series;

	collect_names(names, &nn, in->pod.spec.value, 0);
	for (int f = 0; f < WMAP_FRAG_COUNT; f++)
		collect_names(names, &nn, in->pod.frag[f].value, 0);
	if ((rc = wmap_pod_amounts(milli, NULL, &in->pod, names, nn, err)) != 0)
		return rc;
	for (size_t i = 0; i < nn; i++) {
		char res[256];
		const char *unit;
		if (milli[i] <= 0 || in->desired <= 0)
			continue;
		resource_label(res, sizeof(res), &unit, names[i]);
		identity(&out[WMAP_WLM_REQUESTS], families[WMAP_WLM_REQUESTS].name, w, w->namespace_);
		label(&out[WMAP_WLM_REQUESTS], "component", n->def->name, 0);
		label(&out[WMAP_WLM_REQUESTS], "component_instance", in->id, 0);
		label(&out[WMAP_WLM_REQUESTS], "resource", res, 0);
		label(&out[WMAP_WLM_REQUESTS], "unit", unit, 0);
		wmap_buf_adds(&out[WMAP_WLM_REQUESTS], "} ");
		add_milli(&out[WMAP_WLM_REQUESTS], milli[i] > INT64_MAX / in->desired
							   ? INT64_MAX
							   : milli[i] * in->desired);
		wmap_buf_addc(&out[WMAP_WLM_REQUESTS], '\n');
		++*series;
	}
	return 0;
}

int wmap_wlm_workload(wmap_buf out[WMAP_WLM_COUNT], size_t *series, const wmap_workload *w,
		      wmap_error *err)
{
	size_t mark[WMAP_WLM_COUNT], n0 = *series;
	int rc = 0;
	for (int f = 0; f < WMAP_WLM_COUNT; f++)
		mark[f] = out[f].len;
	info(&out[WMAP_WLM_INFO], series, w);
	status(&out[WMAP_WLM_STATUS], series, w);
	for (size_t k = 0; k < w->n_nodes && rc == 0; k++) {
		const wmap_node *n = &w->nodes[k];
		for (size_t i = 0; i < n->n_instances && rc == 0; i++)
			if (n->instances[i].has_pod)
				rc = instance_lines(out, series, w, n, &n->instances[i], err);
	}
	for (int f = 0; f < WMAP_WLM_COUNT && rc == 0; f++)
		if (out[f].error)
			rc = wmap_error_set(err, out[f].error, "workload metrics: %s",
					    out[f].error == WMAP_ENOMEM ? "out of memory"
									: "lines over the buffer's cap");
	if (rc != 0) {
		for (int f = 0; f < WMAP_WLM_COUNT; f++)
			if (!out[f].error)
				out[f].len = mark[f];
		*series = n0;
	}
	return rc;
}

static int count_pod_bearing(const wmap_definition *def)
{
	int n = 0;
	for (size_t i = 0; i < def->n_components; i++)
		n += wmap_component_has_pods(&def->components[i]);
	return n;
}

int wmap_wlm_place(int *node, int *inst, wmap_engine *eng, const wmap_workload *w, json_t *pod,
		   wmap_error *err)
{
	const wmap_definition *def = w->definition;
	int sole = count_pod_bearing(def) == 1, rc;
	*node = *inst = -1;
	for (size_t k = 0; k < w->n_nodes; k++) {
		const wmap_node *n = &w->nodes[k];
		int m;
		if (!wmap_component_has_pods(n->def))
			continue;
		if ((rc = wmap_pod_matches_component(&m, eng, def, n->index, pod, err)) != 0)
			return rc;
		if (m < 0)
			m = sole;
		if (!m)
			continue;
		*node = (int)k;
		if (n->def->pod_instance_id_path) {
			char *id = NULL;
			wmap_error e = { 0 };
			/* A pod without the id its instance selector reads belongs to no instance. */
			if (wmap_pod_key(&id, eng, def, n->index, pod, 0, &e) == 0 && id)
				for (size_t i = 0; i < n->n_instances; i++)
					if (strcmp(n->instances[i].id, id) == 0)
						*inst = (int)i;
			free(id);
		} else if (n->n_instances > 0) {
			*inst = 0;
		}
		return 0;
	}
	return 0;
}

void wmap_wlm_pod(wmap_buf *out, const wmap_workload *w, const json_t *pod, int node, int inst)
{
	const json_t *md = json_object_get(pod, "metadata");
	const wmap_node *n = node >= 0 && (size_t)node < w->n_nodes ? &w->nodes[node] : NULL;
	const char *comp = n ? n->def->name : "<unknown>";
	const char *id = n && inst >= 0 && (size_t)inst < n->n_instances ? n->instances[inst].id
									 : "<unknown>";
	identity(out, families[WMAP_WLM_POD].name, w,
		 json_string_value(json_object_get(md, "namespace")));
	label(out, "pod", json_string_value(json_object_get(md, "name")), 0);
	label(out, "uid", json_string_value(json_object_get(md, "uid")), 0);
	label(out, "component", comp, 0);
	label(out, "component_instance", id, 0);
	wmap_buf_adds(out, "} 1\n");
}
