/* wmap: gang-scheduling plans of resolved workloads (see wmap/gang.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wmap/gang.h"
#include "wmap/patch.h"

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

static int64_t subtree(const wmap_workload *w, size_t k, const char *id, int scaled)
{
	const wmap_node *n = &w->nodes[k];
	int leaf = wmap_component_has_pods(n->def);
	int64_t own = 0, children = 0;
	for (size_t i = 0; i < n->n_instances; i++) {
		if (id && strcmp(n->instances[i].id, id) != 0)
			continue;
		own += scaled ? effective_min(&n->instances[i]) : 1;
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
done:
	if (rc) {
		wmap_gang_plan_free(plan);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	*out = plan;
	return 0;
}
