/* wmap: gang-scheduling plans of resolved workloads (see wmap/gang.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wmap/gang.h"
#include "wmap/patch.h"
#include "wmap/quantity.h"

static const char *const scheduler_names[WMAP_GANG_COUNT] = {
	"none",
	"kai",
	"volcano",
	"coscheduling",
	"yunikorn",
	"kueue",
	"native",
};

const char *wmap_gang_scheduler_name(wmap_gang_scheduler s)
{
	return (s >= 0 && s < WMAP_GANG_COUNT) ? scheduler_names[s] : "none";
}

int wmap_gang_scheduler_parse(wmap_gang_scheduler *out, const char *name, wmap_error *err)
{
	for (int i = 0; i < WMAP_GANG_COUNT; i++) {
		if (name && strcmp(name, scheduler_names[i]) == 0) {
			*out = (wmap_gang_scheduler)i;
			return 0;
		}
	}
	return wmap_error_set(err, WMAP_EINVAL,
			      "unknown gang scheduler \"%s\" (kai, volcano, coscheduling, "
			      "yunikorn, kueue, native or none)",
			      name ? name : "");
}

/* The node that holds component comp, or -1. */
static int node_of(const wmap_workload *w, int comp)
{
	for (size_t k = 0; k < w->n_nodes; k++) {
		if (w->nodes[k].index == comp)
			return (int)k;
	}
	return -1;
}

static int parent_node(const wmap_workload *w, size_t k)
{
	int parent = w->nodes[k].def->parent;
	return parent < 0 ? -1 : node_of(w, parent);
}

static int any_scale(const wmap_definition *def)
{
	for (size_t i = 0; i < def->n_components; i++) {
		if (def->components[i].has_scale)
			return 1;
	}
	return 0;
}

static int64_t effective_min(const wmap_instance *in)
{
	if (in->has_min && in->min_replicas > 0)
		return in->min_replicas;
	if (in->has_replicas && in->replicas > 0)
		return in->replicas;
	return 0;
}

/* The pods an instance will have: its replicas when given (0 included), else its minimum. */
static int64_t will_exist(const wmap_instance *in)
{
	if (in->has_replicas)
		return in->replicas;
	return effective_min(in);
}

/* scaled: 0 counts instances, 1 minimums, 2 the pods that will exist. */
static int64_t subtree(const wmap_workload *w, size_t k, const char *id, int scaled)
{
	const wmap_node *n = &w->nodes[k];
	int leaf = wmap_component_has_pods(n->def);
	int64_t own = 0, children = 0;
	for (size_t i = 0; i < n->n_instances; i++) {
		if (id && strcmp(n->instances[i].id, id) != 0)
			continue;
		own += scaled == 2 ? will_exist(&n->instances[i]) : scaled ? effective_min(&n->instances[i])
									   : 1;
	}
	if (leaf)
		return own;
	for (size_t c = 0; c < n->n_children; c++)
		children += subtree(w, (size_t)n->children[c], NULL, scaled);
	if (!scaled)
		return children;
	if (own == 0)
		return children;
	if (children == 0)
		return own;
	return own * children;
}

int64_t wmap_gang_subtree_scale(const wmap_workload *w, size_t node, const char *instance_id)
{
	if (node >= w->n_nodes)
		return 0;
	return subtree(w, node, instance_id, any_scale(w->definition));
}

void wmap_gang_plan_free(wmap_gang_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_groups; i++)
		free(plan->groups[i].name);
	for (size_t i = 0; i < plan->n_members; i++)
		free(plan->members[i].task_group);
	for (size_t i = 0; i < plan->n_notes; i++)
		free(plan->notes[i]);
	free(plan->groups);
	free(plan->members);
	free(plan->notes);
	free(plan);
}

const wmap_gang_member *wmap_gang_plan_member(const wmap_gang_plan *plan, size_t node,
					      size_t instance)
{
	for (size_t i = 0; i < plan->n_members; i++) {
		if (plan->members[i].node == node && plan->members[i].instance == instance)
			return &plan->members[i];
	}
	return NULL;
}

static int note(wmap_gang_plan *plan, const char *fmt, const char *a, const char *b)
{
	char buf[256];
	snprintf(buf, sizeof(buf), fmt, a, b ? b : "");
	for (size_t i = 0; i < plan->n_notes; i++) {
		if (strcmp(plan->notes[i], buf) == 0)
			return 0;
	}
	char **v = realloc(plan->notes, (plan->n_notes + 1) * sizeof(*v));
	if (!v)
		return WMAP_ENOMEM;
	plan->notes = v;
	if (!(v[plan->n_notes] = strdup(buf)))
		return WMAP_ENOMEM;
	plan->n_notes++;
	return 0;
}

/* The group named name, created with min_member when new; its index or a negative code. */
static int group_index(wmap_gang_plan *plan, const char *raw, const char *pod_group,
		       int64_t min_member)
{
	char name[64];
	wmap_label_value(name, sizeof(name), raw);
	for (size_t i = 0; i < plan->n_groups; i++) {
		if (strcmp(plan->groups[i].name, name) == 0)
			return (int)i;
	}
	wmap_gang_group *g = realloc(plan->groups, (plan->n_groups + 1) * sizeof(*g));
	if (!g)
		return WMAP_ENOMEM;
	plan->groups = g;
	g = &plan->groups[plan->n_groups];
	if (!(g->name = strdup(name)))
		return WMAP_ENOMEM;
	g->pod_group = pod_group;
	g->min_member = min_member;
	return (int)plan->n_groups++;
}

/* Does a groupByKeyPaths entry of m key on the text of e (an instance or replica path)? */
static int keyed_by(const wmap_group_member *m, const wmap_expr *e)
{
	if (!e)
		return 0;
	const char *want = wmap_expr_text(e);
	for (size_t i = 0; i < m->n_group_by; i++) {
		if (want && *want && strstr(wmap_expr_text(m->group_by[i]), want))
			return 1;
	}
	return 0;
}

/* Sum of the subtree scales of g's members that have no ancestor also in g. */
static int64_t group_min(const wmap_workload *w, const wmap_pod_group *g)
{
	int64_t sum = 0;
	for (size_t j = 0; j < g->n_members; j++) {
		int k = node_of(w, g->members[j].component_index);
		if (k < 0)
			continue;
		int nested = 0;
		for (int a = parent_node(w, (size_t)k); a >= 0 && !nested; a = parent_node(w, (size_t)a)) {
			for (size_t o = 0; o < g->n_members; o++)
				nested |= g->members[o].component_index == w->nodes[a].index;
		}
		if (!nested)
			sum += wmap_gang_subtree_scale(w, (size_t)k, NULL);
	}
	return sum;
}

static int plan_pod_groups(wmap_gang_plan *plan, const wmap_workload *w, const char *name)
{
	const wmap_definition *def = w->definition;
	char raw[512];
	for (size_t m = 0; m < plan->n_members; m++) {
		wmap_gang_member *mem = &plan->members[m];
		const wmap_pod_group *g = NULL;
		const wmap_group_member *gm = NULL;
		int k = (int)mem->node;
		/* The template's own component first, then its ancestors (upstream's order). */
		for (; k >= 0 && !gm; k = gm ? k : parent_node(w, (size_t)k)) {
			for (size_t gi = 0; gi < def->n_pod_groups && !gm; gi++) {
				for (size_t j = 0; j < def->pod_groups[gi].n_members; j++) {
					if (def->pod_groups[gi].members[j].component_index ==
					    w->nodes[k].index) {
						g = &def->pod_groups[gi];
						gm = &g->members[j];
						break;
					}
				}
			}
		}
		if (!gm) {
			if (note(plan, "component %s is in no gang group of the definition",
				 w->nodes[mem->node].def->name, NULL))
				return WMAP_ENOMEM;
			continue;
		}
		const wmap_node *owner = &w->nodes[k];
		const wmap_instance *inst = &w->nodes[mem->node].instances[mem->instance];
		int per_instance = (size_t)k == mem->node && owner->def->instance_id_path &&
				   keyed_by(gm, owner->def->pod_instance_id_path) && inst->id[0];
		int n = snprintf(raw, sizeof(raw), "%s", name);
		if (def->n_pod_groups > 1 && n > 0 && (size_t)n < sizeof(raw))
			n += snprintf(raw + n, sizeof(raw) - (size_t)n, "-%s", g->name);
		if (per_instance && n > 0 && (size_t)n < sizeof(raw))
			snprintf(raw + n, sizeof(raw) - (size_t)n, "-%s", inst->id);
		int64_t min = per_instance ? wmap_gang_subtree_scale(w, (size_t)k, inst->id)
					   : group_min(w, g);
		if (!per_instance && keyed_by(gm, owner->def->replica_key_path)) {
			/* One gang per replica of the member: its pods per replica. */
			int64_t own = 0;
			for (size_t i = 0; i < owner->n_instances; i++)
				own += effective_min(&owner->instances[i]);
			if (own > 0 && min % own == 0)
				min /= own;
			if (note(plan, "component %s: one gang per replica; the template carries one "
				       "group name for all of them%s",
				 owner->def->name, NULL))
				return WMAP_ENOMEM;
		}
		int gi = group_index(plan, raw, g->name, min);
		if (gi < 0)
			return gi;
		mem->group = gi;
	}
	return 0;
}

static int plan_v2(wmap_gang_plan *plan, const wmap_workload *w, const char *name)
{
	json_t *subs = json_object_get(w->definition->pod_group_v2, "subGroups");
	int64_t min = 0;
	if (json_array_size(subs) > 0) {
		size_t i;
		json_t *sg;
		json_array_foreach(subs, i, sg) {
			const char *c = json_string_value(json_object_get(sg, "componentName"));
			int k = c ? node_of(w, wmap_definition_component(w->definition, c)) : -1;
			if (k >= 0)
				min += wmap_gang_subtree_scale(w, (size_t)k, NULL);
		}
	} else {
		min = wmap_gang_subtree_scale(w, 0, NULL);
	}
	int gi = group_index(plan, name, NULL, min);
	if (gi < 0)
		return gi;
	for (size_t m = 0; m < plan->n_members; m++)
		plan->members[m].group = gi;
	return 0;
}

/* Gangs whose minimum the pods will never reach, as notes that say so (admission warns, the
 * webhook's group controller records an Event on the workload):
 * - a minimum above the pods its members will have (minReplicas above replicas, say);
 * - members started one after the other (JobSet's startupPolicy InOrder: a later replicated
 *   job's pods are created only once the earlier ones run, which a gang holds back) in one
 *   gang of several members. */
static int never_forms(wmap_gang_plan *plan, const wmap_workload *w)
{
	const char *order = json_string_value(json_object_get(
		json_object_get(json_object_get(w->object, "spec"), "startupPolicy"), "startupPolicyOrder"));
	int scaled = any_scale(w->definition);
	for (size_t gi = 0; gi < plan->n_groups; gi++) {
		int64_t pods = 0;
		size_t n = 0;
		for (size_t m = 0; m < plan->n_members; m++) {
			const wmap_gang_member *mem = &plan->members[m];
			if (mem->group != (int)gi)
				continue;
			n++;
			pods += scaled ? subtree(w, mem->node, w->nodes[mem->node].instances[mem->instance].id, 2) : 1;
		}
		char buf[200];
		plan->groups[gi].pods = pods;
		if (plan->groups[gi].min_member > pods) {
			snprintf(buf, sizeof(buf), "%lld pods will exist but the minimum is %lld",
				 (long long)pods, (long long)plan->groups[gi].min_member);
			if (note(plan, "group %s can never form: %s", plan->groups[gi].name, buf))
				return WMAP_ENOMEM;
		}
		if (order && !strcmp(order, "InOrder") && n > 1 &&
		    note(plan, "group %s can never form: startupPolicy InOrder creates its members' pods "
			       "one after the other, and the gang holds the first ones back%s",
			 plan->groups[gi].name, NULL))
			return WMAP_ENOMEM;
	}
	return 0;
}

int wmap_gang_plan_build(wmap_gang_plan **out, const wmap_workload *w, const char *name,
			 wmap_error *err)
{
	*out = NULL;
	wmap_gang_plan *plan = calloc(1, sizeof(*plan));
	int rc = 0;
	if (!plan)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	for (size_t k = 0; k < w->n_nodes; k++) {
		const wmap_node *n = &w->nodes[k];
		for (size_t i = 0; i < n->n_instances; i++) {
			if (!n->instances[i].has_pod)
				continue;
			wmap_gang_member *v = realloc(plan->members,
						      (plan->n_members + 1) * sizeof(*v));
			if (!v) {
				rc = WMAP_ENOMEM;
				goto done;
			}
			plan->members = v;
			v = &plan->members[plan->n_members];
			memset(v, 0, sizeof(*v));
			v->node = k;
			v->instance = i;
			v->group = -1;
			v->task_min = wmap_gang_subtree_scale(w, k, n->instances[i].id);
			v->per_pod = n->instances[i].per_replica;
			char raw[512], label[64];
			if (n->instances[i].id[0])
				snprintf(raw, sizeof(raw), "%s-%s", n->def->name, n->instances[i].id);
			else
				snprintf(raw, sizeof(raw), "%s", n->def->name);
			wmap_label_value(label, sizeof(label), raw);
			plan->n_members++;
			if (!(v->task_group = strdup(label))) {
				rc = WMAP_ENOMEM;
				goto done;
			}
		}
	}
	const wmap_definition *def = w->definition;
	if (!name || !*name) {
		rc = note(plan, "the workload has no name yet (generateName only): no gang group "
				"names written%s%s",
			  "", NULL);
		goto done;
	}
	if (def->n_pod_groups > 0)
		rc = plan_pod_groups(plan, w, name);
	else if (def->pod_group_v2)
		rc = plan_v2(plan, w, name);
	else
		rc = note(plan, "definition %s has no gangScheduling: no gang group written%s",
			  def->name, NULL);
	if (!rc)
		rc = never_forms(plan, w);
done:
	if (rc) {
		wmap_gang_plan_free(plan);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	*out = plan;
	return 0;
}

/* ---- the scheduler table (wmap/gang.h) ---- */

#define NO_KEY                          \
	{                               \
		NULL, WMAP_GANG_AT_NONE \
	}

static const wmap_gang_row rows[WMAP_GANG_COUNT] = {
	[WMAP_GANG_NONE] = { .id = WMAP_GANG_NONE, .name = "none", .group = NO_KEY, .task = NO_KEY, .queue = NO_KEY, .opt_out = NO_KEY },
	/* Karta mode: KAI's pod-grouper makes the group from a labelled Karta (v0.17+). */
	[WMAP_GANG_KAI] = { .id = WMAP_GANG_KAI, .name = "kai", .scheduler_name = "kai-scheduler", .group = NO_KEY, .task = NO_KEY, .queue = { "kai.scheduler/queue", WMAP_GANG_AT_ROOT_LABEL }, .opt_out = NO_KEY },
	/* The annotation alone stops Volcano's pg-controller; nobody else creates the group. */
	[WMAP_GANG_VOLCANO] = { .id = WMAP_GANG_VOLCANO, .name = "volcano", .scheduler_name = "volcano", .group = { "scheduling.k8s.io/group-name", WMAP_GANG_AT_ANNOTATION }, .task = { "volcano.sh/task-spec", WMAP_GANG_AT_ANNOTATION }, .queue = { "scheduling.volcano.sh/queue-name", WMAP_GANG_AT_ANNOTATION }, .opt_out = NO_KEY, .api_group = "scheduling.volcano.sh", .version = "v1beta1", .kind = "PodGroup", .resource = "podgroups", .status_subresource = 0, .min_resources = 1, .task_minimums = 1 },
	/* The label is read only by a profile that enables Coscheduling. */
	[WMAP_GANG_COSCHEDULING] = { .id = WMAP_GANG_COSCHEDULING, .name = "coscheduling", .scheduler_name = WMAP_GANG_COSCHED_PROFILE, .group = { "scheduling.x-k8s.io/pod-group", WMAP_GANG_AT_LABEL }, .task = NO_KEY, .queue = NO_KEY, .opt_out = NO_KEY, .api_group = "scheduling.x-k8s.io", .version = "v1alpha1", .kind = "PodGroup", .resource = "podgroups", .status_subresource = 1, .min_resources = 1, .task_minimums = 0 },
	/* No object: the application is built from the pods' annotations (admission.c). */
	[WMAP_GANG_YUNIKORN] = { .id = WMAP_GANG_YUNIKORN, .name = "yunikorn", .scheduler_name = "yunikorn", .group = NO_KEY, .task = { "yunikorn.apache.org/task-group-name", WMAP_GANG_AT_ANNOTATION }, .queue = { "yunikorn.apache.org/queue", WMAP_GANG_AT_LABEL }, .opt_out = NO_KEY },
	[WMAP_GANG_KUEUE] = { .id = WMAP_GANG_KUEUE, .name = "kueue", .group = NO_KEY, .task = NO_KEY, .queue = { "kueue.x-k8s.io/queue-name", WMAP_GANG_AT_ROOT_LABEL }, .opt_out = NO_KEY },
	[WMAP_GANG_NATIVE] = { .id = WMAP_GANG_NATIVE, .name = "native", .group = NO_KEY, .task = NO_KEY, .queue = NO_KEY, .opt_out = NO_KEY },
};

/* External mode: wmap makes the PodGroup, KAI's pod-grouper is told to keep off. The group
 * object's spec.queue is what KAI reads for such groups. */
static const wmap_gang_row kai_external = {
	.id = WMAP_GANG_KAI,
	.name = "kai-external",
	.scheduler_name = "kai-scheduler",
	.group = { "pod-group-name", WMAP_GANG_AT_ANNOTATION },
	.task = { "kai.scheduler/subgroup-name", WMAP_GANG_AT_LABEL },
	.queue = { "kai.scheduler/queue", WMAP_GANG_AT_ROOT_LABEL },
	.opt_out = { "kai.scheduler/skip-podgrouper", WMAP_GANG_AT_ANNOTATION },
	.opt_out_value = "true",
	.api_group = "scheduling.run.ai",
	.version = "v2alpha2",
	.kind = "PodGroup",
	.resource = "podgroups",
	.status_subresource = 1,
	.min_resources = 0,
	.task_minimums = 2,
};

const wmap_gang_row *wmap_gang_row_of(wmap_gang_scheduler s, int external)
{
	if (s == WMAP_GANG_KAI && external)
		return &kai_external;
	return (s >= 0 && s < WMAP_GANG_COUNT) ? &rows[s] : &rows[WMAP_GANG_NONE];
}

const wmap_gang_row *const *wmap_gang_group_rows(size_t *n)
{
	static const wmap_gang_row *const with_objects[] = {
		&rows[WMAP_GANG_VOLCANO],
		&rows[WMAP_GANG_COSCHEDULING],
		&kai_external,
	};
	*n = sizeof(with_objects) / sizeof(with_objects[0]);
	return with_objects;
}

/* Kueue's integrations (Kueue's Helm chart and its job framework list, reference
 * gang-schedulers.md 5.3), by API group and kind. */
int wmap_gang_kueue_native(const char *group, const char *kind)
{
	static const char *const native[][2] = {
		{ "", "Pod" },
		{ "batch", "Job" },
		{ "apps", "Deployment" },
		{ "apps", "StatefulSet" },
		{ "jobset.x-k8s.io", "JobSet" },
		{ "kubeflow.org", "MPIJob" },
		{ "kubeflow.org", "PyTorchJob" },
		{ "kubeflow.org", "TFJob" },
		{ "kubeflow.org", "XGBoostJob" },
		{ "kubeflow.org", "PaddleJob" },
		{ "kubeflow.org", "JAXJob" },
		{ "ray.io", "RayJob" },
		{ "ray.io", "RayCluster" },
		{ "ray.io", "RayService" },
		{ "workload.codeflare.dev", "AppWrapper" },
		{ "trainer.kubeflow.org", "TrainJob" },
		{ "leaderworkerset.x-k8s.io", "LeaderWorkerSet" },
	};
	for (size_t i = 0; i < sizeof(native) / sizeof(native[0]); i++)
		if (group && kind && !strcmp(group, native[i][0]) && !strcmp(kind, native[i][1]))
			return 1;
	return 0;
}

/* ---- group objects ---- */

static void res_add(wmap_resources *sum, const wmap_resources *per, int64_t n)
{
	if (!sum->memory && per->memory)
		sum->memory_family = per->memory_family;
	sum->cpu_milli += per->cpu_milli * n;
	sum->memory += per->memory * n;
	sum->gpu += per->gpu * n;
}

/* A ResourceList of r, NULL when r is all zero (or on allocation failure, *bad set). */
static json_t *resource_list(const wmap_resources *r, int *bad)
{
	if (!r->cpu_milli && !r->memory && !r->gpu)
		return NULL;
	json_t *o = json_object();
	char v[32];
	*bad |= !o;
	if (!o)
		return NULL;
	if (r->cpu_milli) {
		wmap_quantity_format_cpu(v, sizeof(v), r->cpu_milli);
		*bad |= json_object_set_new(o, "cpu", json_string(v)) != 0;
	}
	if (r->memory) {
		wmap_quantity_format_bytes(v, sizeof(v), r->memory, r->memory_family);
		*bad |= json_object_set_new(o, "memory", json_string(v)) != 0;
	}
	if (r->gpu) {
		snprintf(v, sizeof(v), "%lld", (long long)r->gpu);
		*bad |= json_object_set_new(o, "nvidia.com/gpu", json_string(v)) != 0;
	}
	return o;
}

static void set_new(json_t *o, const char *k, json_t *v, int *bad)
{
	if (!v)
		return;
	*bad |= json_object_set_new(o, k, v) != 0;
}

static json_t *group_object(const wmap_gang_row *row, const wmap_gang_plan *plan, size_t gi,
			    const wmap_gang_build *b, int *bad)
{
	const wmap_gang_group *grp = &plan->groups[gi];
	const json_t *md = json_object_get(b->workload, "metadata");
	const char *api = json_string_value(json_object_get(b->workload, "apiVersion"));
	const char *kind = json_string_value(json_object_get(b->workload, "kind"));
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *uid = json_string_value(json_object_get(md, "uid"));
	char apiv[256], kv[64], nv[64];
	snprintf(apiv, sizeof(apiv), "%s/%s", row->api_group, row->version);
	wmap_label_value(kv, sizeof(kv), kind ? kind : "");
	wmap_label_value(nv, sizeof(nv), name ? name : "");
	json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]}}",
				"apiVersion", apiv, "kind", row->kind, "metadata", "name", grp->name,
				"labels", "app.kubernetes.io/managed-by", WMAP_GANG_MANAGED_BY,
				"wmap.io/workload-kind", kv, "wmap.io/workload-name", nv,
				"ownerReferences", "apiVersion", api ? api : "", "kind", kind ? kind : "",
				"name", name ? name : "", "uid", uid ? uid : "", "controller", 1,
				"blockOwnerDeletion", 1);
	json_t *spec = json_object();
	if (!obj || !spec) {
		*bad = 1;
		json_decref(obj);
		json_decref(spec);
		return NULL;
	}
	if (ns)
		set_new(json_object_get(obj, "metadata"), "namespace", json_string(ns), bad);
	size_t n_in = 0;
	wmap_resources minres = { 0 };
	for (size_t m = 0; m < plan->n_members; m++) {
		if (plan->members[m].group != (int)gi)
			continue;
		n_in++;
		res_add(&minres, &plan->members[m].per_pod, plan->members[m].task_min);
	}
	int64_t min = grp->min_member;
	if (row->id == WMAP_GANG_COSCHEDULING && min < 1)
		min = 1; /* the CRD's minimum */
	if (row->task_minimums == 2 && n_in > 1) {
		json_t *subs = json_array();
		*bad |= !subs;
		for (size_t m = 0; subs && m < plan->n_members; m++) {
			const wmap_gang_member *mem = &plan->members[m];
			if (mem->group == (int)gi)
				*bad |= json_array_append_new(subs, json_pack("{s:s, s:I}", "name", mem->task_group,
									      "minMember", (json_int_t)mem->task_min)) != 0;
		}
		set_new(spec, "minSubGroup", json_integer((json_int_t)n_in), bad);
		set_new(spec, "subGroups", subs, bad);
	} else {
		set_new(spec, "minMember", json_integer((json_int_t)min), bad);
	}
	if (row->task_minimums == 1 && n_in > 1) {
		json_t *tm = json_object();
		*bad |= !tm;
		for (size_t m = 0; tm && m < plan->n_members; m++) {
			const wmap_gang_member *mem = &plan->members[m];
			if (mem->group == (int)gi)
				set_new(tm, mem->task_group, json_integer((json_int_t)mem->task_min), bad);
		}
		set_new(spec, "minTaskMember", tm, bad);
	}
	if (row->id != WMAP_GANG_COSCHEDULING && b->queue)
		set_new(spec, "queue", json_string(b->queue), bad);
	if (row->id != WMAP_GANG_COSCHEDULING && b->priority_class)
		set_new(spec, "priorityClassName", json_string(b->priority_class), bad);
	if (row->min_resources)
		set_new(spec, "minResources", resource_list(&minres, bad), bad);
	if (row->id == WMAP_GANG_COSCHEDULING && b->schedule_timeout_s > 0)
		set_new(spec, "scheduleTimeoutSeconds", json_integer((json_int_t)b->schedule_timeout_s), bad);
	*bad |= json_object_set_new(obj, "spec", spec) != 0;
	return obj;
}

int wmap_gang_group_objects(json_t **out, const wmap_gang_row *row, const wmap_gang_plan *plan,
			    const wmap_gang_build *b, wmap_error *err)
{
	int bad = 0;
	*out = json_array();
	if (!*out)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if (!row->kind || !plan)
		return 0;
	for (size_t gi = 0; gi < plan->n_groups && !bad; gi++) {
		json_t *o = group_object(row, plan, gi, b, &bad);
		bad |= !o || json_array_append_new(*out, o) != 0;
	}
	if (bad) {
		json_decref(*out);
		*out = NULL;
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	return 0;
}

/* ---- KAI's Karta labels ---- */

json_t *wmap_karta_labels(const json_t *karta)
{
	const json_t *k = json_object_get(json_object_get(json_object_get(json_object_get(
										  karta, "spec"),
									  "structureDefinition"),
							  "rootComponent"),
					  "kind");
	const char *g = json_string_value(json_object_get(k, "group"));
	const char *v = json_string_value(json_object_get(k, "version"));
	const char *kind = json_string_value(json_object_get(k, "kind"));
	if (!g || !v || !kind || !*v || !*kind || (*g && !wmap_label_value_valid(g)) ||
	    !wmap_label_value_valid(v) || !wmap_label_value_valid(kind))
		return NULL;
	return json_pack("{s:s, s:s, s:s}", WMAP_KARTA_LABEL_GROUP, g, WMAP_KARTA_LABEL_VERSION, v,
			 WMAP_KARTA_LABEL_KIND, kind);
}

json_t *wmap_karta_labelled(const json_t *karta)
{
	json_t *out = json_deep_copy(karta), *want = wmap_karta_labels(karta);
	if (!out || !want) {
		json_decref(want);
		return out;
	}
	json_t *md = json_object_get(out, "metadata");
	if (!json_is_object(md)) {
		md = json_object();
		if (json_object_set_new(out, "metadata", md) != 0)
			goto fail;
	}
	json_t *labels = json_object_get(md, "labels");
	if (!json_is_object(labels)) {
		labels = json_object();
		if (json_object_set_new(md, "labels", labels) != 0)
			goto fail;
	}
	if (json_object_update(labels, want) != 0)
		goto fail;
	json_decref(want);
	return out;
fail:
	json_decref(want);
	json_decref(out);
	return NULL;
}
