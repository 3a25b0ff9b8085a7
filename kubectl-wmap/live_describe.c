/* kubectl-wmap describe TYPE/NAME: one live workload with its pods (reference 5.7, 5.8, 6.4):
 * the tree (components, instances, pods; --pod-limit and --component-limit keep the
 * unhealthy first), the phase, the resources table, -o json|yaml, and the CRD pruning
 * warning. Which pods belong where is live_pods.c's business. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "live_pods.h"
#include "live_watch.h"
#include "live_why.h"
#include "render.h"
#include "wmap/pods.h"
#include "wmap/quantity.h"

#define MAX_KIDS 1024

typedef struct desc {
	live_ctx *lc;
	live_target *t;
	const wmap_workload *w;
	live_pods set;  /* the workload's pods */
	size_t n_pods;  /* = set.n */
	pod_info *pods; /* = set.v */
	long pod_limit, comp_limit;
	long n_events; /* --events: event lines per section, 0 = no events request */
	live_events ev;
	int have_events;
	live_gang gang;
	json_t *why; /* the sections of "Why", see build_why */
	render_table *tree;
	wmap_error err;
} desc;

/* ---- counting ---------------------------------------------------------------------- */

static int is_under(const wmap_workload *w, int k, int top)
{
	for (int depth = 0; k >= 0 && depth < 64; depth++) {
		if (k == top)
			return 1;
		k = w->nodes[k].def->parent;
	}
	return 0;
}

typedef struct stats {
	int64_t desired, current, ready, unhealthy;
	size_t n_nodes;
	const char *nodes[64];
	char node_list[1024];
} stats;

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void stats_add_node(stats *s, const char *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < s->n_nodes; i++)
		if (strcmp(s->nodes[i], node) == 0)
			return;
	if (s->n_nodes < sizeof(s->nodes) / sizeof(s->nodes[0]))
		s->nodes[s->n_nodes++] = node;
}

/* Sorted distinct node names joined with commas; past NODES_LISTED names, how many ("250
 * nodes", "64+ nodes" when more than the stats keep) so that a row stays one line. */
#define NODES_LISTED 6

static void stats_finish(stats *s)
{
	size_t used = 0;

	qsort(s->nodes, s->n_nodes, sizeof(s->nodes[0]), str_cmp);
	s->node_list[0] = '\0';
	if (s->n_nodes > NODES_LISTED) {
		snprintf(s->node_list, sizeof(s->node_list), "%zu%s nodes", s->n_nodes,
			 s->n_nodes == sizeof(s->nodes) / sizeof(s->nodes[0]) ? "+" : "");
		return;
	}
	for (size_t i = 0; i < s->n_nodes && used < sizeof(s->node_list); i++)
		used += (size_t)snprintf(s->node_list + used, sizeof(s->node_list) - used, "%s%s",
					 i ? "," : "", s->nodes[i]);
}

static int64_t shown_desired(const wmap_workload *w, int k, int depth)
{
	const wmap_node *n = &w->nodes[k];
	int64_t sum = 0;

	if (wmap_component_has_pods(n->def)) {
		for (size_t i = 0; i < n->n_instances; i++)
			sum += n->instances[i].desired;
		return sum;
	}
	for (size_t c = 0; c < n->n_children && depth < 64; c++)
		sum += shown_desired(w, n->children[c], depth + 1);
	return sum;
}

/* inst < 0: the whole subtree of component k; else one instance of k. */
static void count(const desc *d, int k, int inst, stats *s)
{
	memset(s, 0, sizeof(*s));
	s->desired = inst < 0 ? shown_desired(d->w, k, 0) : d->w->nodes[k].instances[inst].desired;
	for (size_t i = 0; i < d->n_pods; i++) {
		const pod_info *p = &d->pods[i];

		if (p->comp < 0 || !is_under(d->w, p->comp, k) || (inst >= 0 && (p->comp != k || p->inst != inst)))
			continue;
		s->current++;
		s->ready += p->ready;
		s->unhealthy += !p->healthy;
		stats_add_node(s, p->node);
	}
	stats_finish(s);
}

static int unhealthy(const stats *s)
{
	return s->ready < s->desired || s->unhealthy > 0;
}

/* ---- which components are shown (as in file mode) --------------------------------- */

static int present(const wmap_node *n)
{
	for (size_t i = 0; i < n->n_instances; i++) {
		const wmap_instance *in = &n->instances[i];

		if (!in->has_pod)
			continue;
		if (in->pod.shape != WMAP_SPEC_FRAGMENTED) {
			if (in->pod.spec.value || in->pod.template_.value)
				return 1;
			continue;
		}
		for (int f = 0; f < WMAP_FRAG_COUNT; f++)
			if (in->pod.frag[f].value)
				return 1;
	}
	return 0;
}

static int shown(const desc *d, int k, int depth)
{
	const wmap_node *n = &d->w->nodes[k];

	if ((wmap_component_has_pods(n->def) && present(n)) || shown_desired(d->w, k, 0) > 0 ||
	    n->total.gpu || n->total.cpu_milli || n->total.memory)
		return 1;
	for (size_t i = 0; i < d->n_pods; i++)
		if (d->pods[i].comp >= 0 && is_under(d->w, d->pods[i].comp, k))
			return 1;
	for (size_t c = 0; c < n->n_children && depth < 64; c++)
		if (shown(d, n->children[c], depth + 1))
			return 1;
	return 0;
}

/* ---- the tree ---------------------------------------------------------------------- */

enum { ENT_COMPONENT,
       ENT_INSTANCE,
       ENT_POD,
       ENT_MORE };

typedef struct entry {
	int type;
	int comp; /* the component (node index) of an instance entry */
	int idx;  /* node index, instance index or pod index */
	int bad;  /* unhealthy: listed first when a limit applies */
	char more[128];
} entry;

static int row(desc *d, const char *prefix, int last, const char *label, const char *status,
	       int64_t gpu, const char *nodes)
{
	char name[1400], g[48] = "";
	const char *cells[4];

	snprintf(name, sizeof(name), "%s%s%s", prefix, last ? "`-- " : "|-- ", label);
	if (gpu > 0)
		snprintf(g, sizeof(g), "gpu: %lld", (long long)gpu);
	cells[0] = name;
	cells[1] = status;
	cells[2] = g;
	cells[3] = nodes;
	return render_table_add(d->tree, cells, &d->err);
}

static int entry_cmp_bad(const void *a, const void *b)
{
	const entry *x = a, *y = b;

	return y->bad - x->bad;
}

/* Keeps at most limit entries of v (unhealthy first, stable otherwise), appending a
 * "..." entry that says how many were left out. */
static size_t apply_limit(entry *v, size_t n, long limit, int pods)
{
	size_t bad_total = 0, bad_shown = 0, keep;
	entry *tmp;

	if (limit <= 0 || n <= (size_t)limit)
		return n;
	for (size_t i = 0; i < n; i++)
		bad_total += v[i].bad;
	/* stable partition: unhealthy first */
	tmp = malloc(n * sizeof(*tmp));
	if (tmp) {
		size_t o = 0;

		for (int pass = 1; pass >= 0; pass--)
			for (size_t i = 0; i < n; i++)
				if (v[i].bad == pass)
					tmp[o++] = v[i];
		memcpy(v, tmp, n * sizeof(*v));
		free(tmp);
	} else {
		qsort(v, n, sizeof(*v), entry_cmp_bad);
	}
	keep = (size_t)limit;
	for (size_t i = 0; i < keep; i++)
		bad_shown += v[i].bad;
	v[keep].type = ENT_MORE;
	if (pods) {
		if (bad_shown == bad_total)
			snprintf(v[keep].more, sizeof(v[keep].more), "and %zu more (%zu unhealthy shown)",
				 n - keep, bad_shown);
		else
			snprintf(v[keep].more, sizeof(v[keep].more),
				 "and %zu more (%zu of %zu unhealthy shown)", n - keep, bad_shown,
				 bad_total);
	} else if (bad_total > bad_shown) {
		snprintf(v[keep].more, sizeof(v[keep].more), "and %zu more component%s (%zu unhealthy)",
			 n - keep, n - keep == 1 ? "" : "s", bad_total - bad_shown);
	} else {
		snprintf(v[keep].more, sizeof(v[keep].more), "and %zu more component%s", n - keep,
			 n - keep == 1 ? "" : "s");
	}
	return keep + 1;
}

static void pod_status(char *buf, size_t len, const pod_info *p)
{
	int bad = !p->ready && strcmp(p->phase, "Succeeded") != 0;

	if (bad && p->reason && p->reason[0] && p->restarts > 0)
		snprintf(buf, len, "%s (%s, %lld restart%s)", p->phase, p->reason,
			 (long long)p->restarts, p->restarts == 1 ? "" : "s");
	else if (bad && p->reason && p->reason[0])
		snprintf(buf, len, "%s (%s)", p->phase, p->reason);
	else
		snprintf(buf, len, "%s", p->phase);
}

static int render_entries(desc *d, entry *v, size_t n, const char *prefix, int depth);
static int render_instance(desc *d, int k, int inst, const char *prefix, int last, int depth);

static int add_pod_entries(desc *d, entry *v, size_t *n, size_t max, int k, int inst)
{
	size_t start = *n;

	for (size_t i = 0; i < d->n_pods && *n < max; i++)
		if (d->pods[i].comp == k && (inst < 0 || d->pods[i].inst == inst)) {
			v[*n].type = ENT_POD;
			v[*n].idx = (int)i;
			v[*n].bad = !d->pods[i].healthy;
			(*n)++;
		}
	return (int)apply_limit(v + start, *n - start, d->pod_limit, 1) + (int)start;
}

static int add_component_entries(desc *d, entry *v, size_t n_max, const int *kids, size_t nk)
{
	size_t n = 0;

	for (size_t i = 0; i < nk && n < n_max; i++) {
		stats s;

		count(d, kids[i], -1, &s);
		v[n].type = ENT_COMPONENT;
		v[n].idx = kids[i];
		v[n].bad = unhealthy(&s);
		n++;
	}
	return (int)apply_limit(v, n, d->comp_limit, 0);
}

static int render_component(desc *d, int k, const char *prefix, int last, int depth)
{
	const wmap_node *n = &d->w->nodes[k];
	int multi = n->def->instance_id_path && wmap_component_has_pods(n->def);
	char child_prefix[1024], status[64];
	entry *v = NULL;
	size_t nv = 0, cap;
	int kids[MAX_KIDS], rc;
	size_t nk = 0;
	stats s;

	if (depth > 32)
		return wmap_error_set(&d->err, WMAP_ELIMIT, "components nest deeper than 32");
	count(d, k, -1, &s);
	snprintf(status, sizeof(status), "%lld/%lld ready", (long long)s.ready, (long long)s.desired);
	if ((rc = row(d, prefix, last, n->def->name, status, n->total.gpu, s.node_list)) != 0)
		return rc;
	snprintf(child_prefix, sizeof(child_prefix), "%s%s", prefix, last ? "    " : "|   ");
	for (size_t c = 0; c < n->n_children && nk < MAX_KIDS; c++)
		if (shown(d, n->children[c], 0))
			kids[nk++] = n->children[c];
	cap = d->n_pods + n->n_instances + nk + 4;
	if ((v = calloc(cap, sizeof(*v))) == NULL)
		return wmap_error_set(&d->err, WMAP_ENOMEM, "out of memory");
	if (multi) {
		for (size_t i = 0; i < n->n_instances; i++) {
			stats is;

			count(d, k, (int)i, &is);
			v[nv].type = ENT_INSTANCE;
			v[nv].comp = k;
			v[nv].idx = (int)i;
			v[nv].bad = unhealthy(&is);
			nv++;
		}
		nv = apply_limit(v, nv, d->comp_limit, 0);
	} else if (wmap_component_has_pods(n->def)) {
		nv = (size_t)add_pod_entries(d, v, &nv, cap, k, -1);
	}
	nv += (size_t)add_component_entries(d, v + nv, cap - nv, kids, nk);
	rc = render_entries(d, v, nv, child_prefix, depth + 1);
	free(v);
	return rc;
}

static int render_instance(desc *d, int k, int inst, const char *prefix, int last, int depth)
{
	const wmap_node *n = &d->w->nodes[k];
	const wmap_instance *in = &n->instances[inst];
	char child_prefix[1024], status[64];
	entry *v;
	size_t nv = 0;
	stats s;
	int rc;

	count(d, k, inst, &s);
	snprintf(status, sizeof(status), "%lld/%lld ready", (long long)s.ready, (long long)s.desired);
	if ((rc = row(d, prefix, last, in->id && in->id[0] ? in->id : "<no id>", status,
		      in->total.gpu, s.node_list)) != 0)
		return rc;
	snprintf(child_prefix, sizeof(child_prefix), "%s%s", prefix, last ? "    " : "|   ");
	if ((v = calloc(d->n_pods + 2, sizeof(*v))) == NULL)
		return wmap_error_set(&d->err, WMAP_ENOMEM, "out of memory");
	nv = (size_t)add_pod_entries(d, v, &nv, d->n_pods + 1, k, inst);
	rc = render_entries(d, v, nv, child_prefix, depth + 1);
	free(v);
	return rc;
}

static int render_entries(desc *d, entry *v, size_t n, const char *prefix, int depth)
{
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		int last = i + 1 == n;

		switch (v[i].type) {
		case ENT_COMPONENT:
			rc = render_component(d, v[i].idx, prefix, last, depth);
			break;
		case ENT_INSTANCE:
			rc = render_instance(d, v[i].comp, v[i].idx, prefix, last, depth);
			break;
		case ENT_POD: {
			const pod_info *p = &d->pods[v[i].idx];
			char st[256];

			pod_status(st, sizeof(st), p);
			rc = row(d, prefix, last, p->name ? p->name : "?", st, p->res.gpu,
				 p->node ? p->node : "<none>");
			break;
		}
		case ENT_MORE:
			rc = row(d, prefix, last, "...", v[i].more, 0, NULL);
			break;
		}
	}
	return rc;
}

/* ---- why: container issues, Warning events, gang ---------------------------------- */

#define WHY_PODS 10         /* not-ready pods listed per section without --pod-limit */
#define WHY_OWNER_CHECKS 32 /* pod-less controllers checked for ownership */

static const char *uid_of(const json_t *obj)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
}

static const char *controller_uid(const json_t *obj)
{
	return json_string_value(json_object_get(wmap_object_controller(obj), "uid"));
}

static void section_label(char *buf, size_t len, const desc *d, int k, int inst)
{
	const wmap_node *n = &d->w->nodes[k];

	if (inst >= 0 && n->def->instance_id_path)
		snprintf(buf, len, "%s/%s", n->def->name, n->instances[inst].id);
	else
		snprintf(buf, len, "%s", n->def->name);
}

/* The deduplicated events of the objects in uids (an object used as a set). */
static int sum_events(json_t **out, size_t *older, desc *d, const json_t *uids)
{
	live_event_sum sum = { 0 };
	const char *uid;
	json_t *v;

	*out = NULL;
	*older = 0;
	json_object_foreach((json_t *)uids, uid, v)
		if (live_event_sum_add(&sum, &d->ev, uid, &d->err) != 0) {
			live_event_sum_free(&sum);
			return d->err.code;
		}
	if (!sum.list && !(sum.list = json_array()))
		return wmap_error_set(&d->err, WMAP_ENOMEM, "out of memory");
	*older = live_event_sum_finish(&sum, (size_t)d->n_events);
	*out = sum.list;
	return 0;
}

/* One section for component k (instance inst, -1 for all): its pods that are not ready
 * with their container issues, and the events of those pods and of the controllers of its
 * pods (and of extra, controllers that have no pods). Appended to why.sections when there
 * is something to say. */
static int why_section(desc *d, int k, int inst, const json_t *extra)
{
	const char *root = uid_of(d->w->object);
	json_t *uids = json_object(), *pods = json_array(), *events = NULL, *sec;
	size_t total = 0, not_ready = 0, older = 0;
	char label[600];
	int rc = 0;

	if (!uids || !pods) {
		rc = wmap_error_set(&d->err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < d->n_pods; i++) {
		const pod_info *p = &d->pods[i];
		const char *cu = controller_uid(p->pod);

		if (p->comp != k || (inst >= 0 && p->inst != inst))
			continue;
		total++;
		if (cu && (!root || strcmp(cu, root) != 0))
			json_object_set_new(uids, cu, json_true());
		if (p->healthy)
			continue;
		not_ready++;
		if (uid_of(p->pod))
			json_object_set_new(uids, uid_of(p->pod), json_true());
		json_array_append_new(pods, json_integer((json_int_t)i));
	}
	if (extra) {
		size_t i;
		json_t *u;

		json_array_foreach(extra, i, u)
			json_object_set_new(uids, json_string_value(u), json_true());
	}
	if (d->have_events && (rc = sum_events(&events, &older, d, uids)) != 0)
		goto cleanup;
	if (not_ready == 0 && json_array_size(events) == 0)
		goto cleanup;
	section_label(label, sizeof(label), d, k, inst);
	sec = json_pack("{s:s, s:i, s:i, s:I, s:I, s:O, s:o, s:I}", "label", label, "comp", k,
			"inst", inst, "pods", (json_int_t)total, "notReady", (json_int_t)not_ready,
			"podIndexes", pods, "events", events ? events : json_null(), "olderEvents",
			(json_int_t)older);
	events = NULL;
	if (!sec || json_array_append_new(json_object_get(d->why, "sections"), sec) != 0)
		rc = wmap_error_set(&d->err, WMAP_ENOMEM, "out of memory");
cleanup:
	json_decref(events);
	json_decref(uids);
	json_decref(pods);
	return rc;
}

/* The instance of component k a controller stands for, read with the component's instance
 * selector on the controller's own labels (a JobSet's Jobs carry the replicated job's name
 * as its pods do); -2 when it says nothing. */
static int instance_of(desc *d, int k, const json_t *obj)
{
	const wmap_node *n = &d->w->nodes[k];
	wmap_error e = { 0 };
	char *id = NULL;
	int found = -2;

	if (!n->def->pod_instance_id_path)
		return n->def->instance_id_path ? -2 : -1;
	if (wmap_pod_key(&id, d->lc->eng, d->w->definition, n->index, (json_t *)obj, 0, &e) == 0 &&
	    id)
		for (size_t i = 0; i < n->n_instances; i++)
			if (strcmp(n->instances[i].id, id) == 0)
				found = (int)i;
	free(id);
	return found;
}

/* Controllers with Warning events that own no pod of ours (a Job that cannot create its
 * pods): by component kind, checked for ownership through the owner cache. Returns an
 * object "k" -> [uid]. */
static json_t *podless_controllers(desc *d)
{
	json_t *out = json_object(), *known = json_object();
	int checks = 0;

	if (!out || !known || !d->have_events)
		goto done;
	for (size_t i = 0; i < d->n_pods; i++)
		if (controller_uid(d->pods[i].pod))
			json_object_set_new(known, controller_uid(d->pods[i].pod), json_true());
	for (size_t k = 0; k < d->w->n_nodes; k++) {
		const wmap_component *c = d->w->nodes[k].def;
		json_t *objs, *o;
		size_t i;

		if (!c->kind || !wmap_component_has_pods(c) || strcmp(c->kind->kind, "Pod") == 0 || k == 0)
			continue;
		if (!(objs = live_events_objects_of_kind(&d->ev, c->kind->kind)))
			continue;
		json_array_foreach(objs, i, o) {
			const char *uid = json_string_value(json_object_get(o, "uid"));
			const json_t *obj;
			char key[48];
			json_t *list;

			if (json_object_get(known, uid) || checks >= WHY_OWNER_CHECKS)
				continue;
			checks++;
			json_object_set_new(known, uid, json_true());
			if (!live_pods_owned(&obj, &d->set, d->lc, d->w, o, d->w->namespace_))
				continue;
			snprintf(key, sizeof(key), "%zu/%d", k, instance_of(d, (int)k, obj));
			if (!(list = json_object_get(out, key)))
				json_object_set_new(out, key, list = json_array());
			json_array_append_new(list, json_string(uid));
		}
		json_decref(objs);
	}
done:
	json_decref(known);
	return out;
}

/* Fetches what "why" needs (events: one request; gang objects: one list per served kind)
 * and builds d->why = {workload: [events], workloadOlder, sections: [...]}. */
static int build_why(desc *d)
{
	json_t *extra = NULL, *wl = NULL, *uids;
	size_t older = 0;
	int rc;

	if ((rc = live_gang_load(&d->gang, d->lc, d->w, &d->set, &d->err)) != 0)
		return rc;
	if (d->n_events > 0) {
		wmap_error e = { 0 };

		if (live_events_load(&d->ev, d->lc, d->w->namespace_, &e) == 0)
			d->have_events = 1;
		else
			live_warn(d->lc, "events not shown: %s", e.message);
	}
	if (!(d->why = json_pack("{s:[]}", "sections")))
		return wmap_error_set(&d->err, WMAP_ENOMEM, "out of memory");
	if (d->have_events && uid_of(d->w->object)) {
		if (!(uids = json_pack("{s:b}", uid_of(d->w->object), 1)))
			return wmap_error_set(&d->err, WMAP_ENOMEM, "out of memory");
		rc = sum_events(&wl, &older, d, uids);
		json_decref(uids);
		if (rc != 0)
			return rc;
		json_object_set_new(d->why, "workload", wl);
		json_object_set_new(d->why, "workloadOlder", json_integer((json_int_t)older));
	}
	extra = podless_controllers(d);
	for (size_t k = 0; k < d->w->n_nodes && rc == 0; k++) {
		const wmap_node *n = &d->w->nodes[k];
		char key[48];
		const json_t *x;

		if (!wmap_component_has_pods(n->def))
			continue;
		if (n->def->instance_id_path) {
			for (size_t i = 0; i < n->n_instances && rc == 0; i++) {
				snprintf(key, sizeof(key), "%zu/%zu", k, i);
				rc = why_section(d, (int)k, (int)i, json_object_get(extra, key));
			}
			snprintf(key, sizeof(key), "%zu/-2", k);
			x = json_object_get(extra, key);
			if (rc == 0 && x)
				rc = why_section(d, (int)k, -2, x); /* -2: no instance, no pods */
		} else {
			snprintf(key, sizeof(key), "%zu/-1", k);
			rc = why_section(d, (int)k, -1, json_object_get(extra, key));
		}
	}
	json_decref(extra);
	return rc;
}

static void print_events(const json_t *events, size_t older, const char *indent, long n)
{
	size_t i;
	json_t *e;

	json_array_foreach(events, i, e) {
		char age[32], who[512];
		json_int_t objects = json_integer_value(json_object_get(e, "objects"));

		live_age(age, sizeof(age), json_string_value(json_object_get(e, "lastSeen")));
		if (objects > 1)
			snprintf(who, sizeof(who), "%lld objects, latest %s", (long long)objects,
				 json_string_value(json_object_get(e, "object")));
		else
			snprintf(who, sizeof(who), "%s", json_string_value(json_object_get(e, "object")));
		printf("%s%s ago  %s x%lld  %s: %s\n", indent, age,
		       json_string_value(json_object_get(e, "reason")),
		       (long long)json_integer_value(json_object_get(e, "count")), who,
		       json_string_value(json_object_get(e, "message")));
	}
	if (older)
		printf("%s(%zu more not shown; --events %ld shows %ld per section)\n", indent, older,
		       n, n);
}

static void pod_status(char *buf, size_t len, const pod_info *p);

static void print_why(desc *d)
{
	const json_t *wl = json_object_get(d->why, "workload");
	const json_t *secs = json_object_get(d->why, "sections"), *sec;
	size_t i, limit = d->pod_limit > 0 ? (size_t)d->pod_limit : WHY_PODS;
	int header = 0;

	if (json_array_size(wl) > 0) {
		printf("\nProblems:\n  %s/%s\n", d->w->kind ? d->w->kind : "?", d->w->name ? d->w->name : "?");
		print_events(wl, (size_t)json_integer_value(json_object_get(d->why, "workloadOlder")),
			     "    ", d->n_events);
		header = 1;
	}
	json_array_foreach(secs, i, sec) {
		json_int_t nr = json_integer_value(json_object_get(sec, "notReady"));
		json_int_t total = json_integer_value(json_object_get(sec, "pods"));
		const json_t *idx = json_object_get(sec, "podIndexes"), *x;
		size_t j;

		if (!header)
			printf("\nProblems:\n");
		header = 1;
		if (nr > 0)
			printf("  %s: %lld of %lld pod%s not ready\n",
			       json_string_value(json_object_get(sec, "label")), (long long)nr,
			       (long long)total, total == 1 ? "" : "s");
		else
			printf("  %s\n", json_string_value(json_object_get(sec, "label")));
		json_array_foreach(idx, j, x) {
			const pod_info *p = &d->pods[json_integer_value(x)];
			char st[256];
			json_t *issues;
			size_t m;
			json_t *is;

			if (j >= limit) {
				printf("    ... and %zu more not ready\n", json_array_size(idx) - limit);
				break;
			}
			pod_status(st, sizeof(st), p);
			printf("    %s: %s\n", p->name ? p->name : "?", st);
			if (!(issues = live_container_issues(p->pod)))
				continue;
			json_array_foreach(issues, m, is) {
				char line[2048];

				live_container_issue_text(line, sizeof(line), is);
				printf("      %s\n", line);
			}
			json_decref(issues);
		}
		print_events(json_object_get(sec, "events"),
			     (size_t)json_integer_value(json_object_get(sec, "olderEvents")), "    ",
			     d->n_events);
	}
}

static void print_gang(const desc *d)
{
	char line[256];
	size_t i;
	json_t *g;

	if (!d->gang.on)
		return;
	live_gang_text(line, sizeof(line), &d->gang);
	printf("Gang: %s\n", line);
	json_array_foreach(d->gang.groups, i, g) {
		const json_t *min = json_object_get(g, "minMember");
		const char *phase = json_string_value(json_object_get(g, "phase"));
		const char *msg = json_string_value(json_object_get(g, "message"));
		char mins[48] = "";

		if (min)
			snprintf(mins, sizeof(mins), ", min %lld", (long long)json_integer_value(min));
		printf("  %s %s %s: %s%s%s%s\n", json_string_value(json_object_get(g, "scheduler")),
		       json_string_value(json_object_get(g, "kind")),
		       json_string_value(json_object_get(g, "name")) ? json_string_value(json_object_get(g, "name")) : "?",
		       phase ? phase : "no status yet", mins, msg ? ": " : "", msg ? msg : "");
	}
	/* A gang short of its minimum may never start as the cluster is: fit says (issue 25). */
	if (d->gang.scheduled < d->gang.min)
		printf("  would it fit at all? kubectl wmap fit %s/%s%s%s\n", d->t->label, d->t->name,
		       d->w->namespace_ ? " -n " : "", d->w->namespace_ ? d->w->namespace_ : "");
}

/* ---- the resources table ----------------------------------------------------------- */

static int res_row(render_table *t, const char *label, int64_t replicas, const wmap_resources *r,
		   wmap_error *err)
{
	char rep[32], gpu[32], cpu[32], mem[32];
	const char *cells[5] = { label, rep, gpu, cpu, mem };

	snprintf(rep, sizeof(rep), "%lld", (long long)replicas);
	snprintf(gpu, sizeof(gpu), "%lld", (long long)r->gpu);
	wmap_quantity_format_cpu(cpu, sizeof(cpu), r->cpu_milli);
	wmap_quantity_format_bytes(mem, sizeof(mem), r->memory, r->memory_family);
	return render_table_add(t, cells, err);
}

static int res_rows(desc *d, render_table *t, int k, int depth)
{
	const wmap_node *n = &d->w->nodes[k];
	int rc = 0;

	if (depth > 32)
		return 0;
	if (wmap_component_has_pods(n->def)) {
		if (!n->def->instance_id_path) {
			rc = res_row(t, n->def->name, shown_desired(d->w, k, 0), &n->own, &d->err);
		} else {
			for (size_t i = 0; i < n->n_instances && rc == 0; i++) {
				char label[512];

				snprintf(label, sizeof(label), "%s/%s", n->def->name, n->instances[i].id);
				rc = res_row(t, label, n->instances[i].desired, &n->instances[i].total,
					     &d->err);
			}
		}
	}
	for (size_t c = 0; c < n->n_children && rc == 0; c++)
		if (shown(d, n->children[c], 0))
			rc = res_rows(d, t, n->children[c], depth + 1);
	return rc;
}

/* The top-level components: the root when it describes pods, else its shown children. */
static size_t top_level(const desc *d, int *out, size_t max)
{
	const wmap_node *root = &d->w->nodes[0];
	size_t n = 0;

	if (wmap_component_has_pods(root->def)) {
		out[0] = 0;
		return 1;
	}
	for (size_t c = 0; c < root->n_children && n < max; c++)
		if (shown(d, root->children[c], 0))
			out[n++] = root->children[c];
	return n;
}

static int render_text(desc *d)
{
	const wmap_workload *w = d->w;
	const json_t *md = json_object_get(w->object, "metadata");
	const char *header[5] = { "COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY" };
	render_table *res = NULL;
	char age[32], status[256];
	int top[MAX_KIDS], rc;
	size_t nt;
	entry *v = NULL;

	live_age(age, sizeof(age), json_string_value(json_object_get(md, "creationTimestamp")));
	nt = w->n_nodes ? top_level(d, top, MAX_KIDS) : 0;
	if ((rc = render_table_new(&d->tree, 4, &d->err)) != 0 ||
	    (rc = render_table_new(&res, 5, &d->err)) != 0 ||
	    (rc = render_table_add(res, header, &d->err)) != 0)
		goto cleanup;
	if ((v = calloc(nt + 2, sizeof(*v))) == NULL) {
		rc = wmap_error_set(&d->err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((rc = render_entries(d, v, (size_t)add_component_entries(d, v, nt + 1, top, nt), "",
				 0)) != 0)
		goto cleanup;
	for (size_t i = 0; i < nt && rc == 0; i++)
		rc = res_rows(d, res, top[i], 0);
	if (rc == 0)
		rc = res_row(res, "TOTAL", w->desired, &w->total, &d->err);
	if (rc != 0)
		goto cleanup;
	printf("%s/%s   namespace: %s   definition: %s (%s)   age: %s\n\n", w->kind ? w->kind : "?",
	       w->name ? w->name : "?", w->namespace_ ? w->namespace_ : "<none>",
	       w->definition->name, wmap_origin_name(w->definition->origin), age);
	if (render_table_rows(d->tree) == 0)
		printf("(no components describe pods)\n");
	render_table_print(stdout, d->tree);
	wmap_workload_status_string(w, status, sizeof(status), ",");
	printf("\nPhase: %s\n", status);
	print_gang(d);
	print_why(d);
	printf("\nResources:\n");
	render_table_print(stdout, res);
cleanup:
	free(v);
	render_table_free(res);
	return rc;
}

/* ---- -o json|yaml ------------------------------------------------------------------ */

static json_t *replicas_json(const stats *s)
{
	return json_pack("{s:I, s:I, s:I}", "desired", (json_int_t)s->desired, "current",
			 (json_int_t)s->current, "ready", (json_int_t)s->ready);
}

static json_t *nodes_json(const stats *s)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < s->n_nodes; i++)
		json_array_append_new(a, json_string(s->nodes[i]));
	return a;
}

/* A pod that is not ready: its container issues and (when events were read) its own
 * deduplicated events. */
static void add_pod_why(desc *d, json_t *o, const pod_info *p)
{
	json_t *issues = live_container_issues(p->pod), *uids, *events = NULL;
	size_t older;

	if (issues)
		json_object_set_new(o, "containerIssues", issues);
	if (!d->have_events || !uid_of(p->pod) || !(uids = json_pack("{s:b}", uid_of(p->pod), 1)))
		return;
	if (sum_events(&events, &older, d, uids) == 0)
		json_object_set_new(o, "events", events);
	json_decref(uids);
}

/* The section's events for component k, instance inst (-1: the component), or NULL. */
static const json_t *section_events(const desc *d, int k, int inst)
{
	size_t i;
	json_t *sec;

	json_array_foreach(json_object_get(d->why, "sections"), i, sec)
		if (json_integer_value(json_object_get(sec, "comp")) == k &&
		    json_integer_value(json_object_get(sec, "inst")) == inst)
			return json_object_get(sec, "events");
	return NULL;
}

static void add_section_events(const desc *d, json_t *o, int k, int inst)
{
	const json_t *ev = section_events(d, k, inst);

	if (d->have_events)
		json_object_set_new(o, "events", ev && json_is_array(ev) ? json_deep_copy(ev) : json_array());
}

static json_t *pods_json(const desc *d, int k, int inst)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < d->n_pods; i++) {
		const pod_info *p = &d->pods[i];
		json_t *o;

		if (p->comp != k || (inst >= 0 && p->inst != inst))
			continue;
		o = json_pack("{s:s?, s:s, s:b, s:o, s:o}", "name", p->name, "phase", p->phase,
			      "ready", p->ready, "node", p->node ? json_string(p->node) : json_null(),
			      "resources", render_resources_json(&p->res));
		if (o && p->reason && !p->ready)
			json_object_set_new(o, "reason", json_string(p->reason));
		if (o)
			json_object_set_new(o, "restarts", json_integer((json_int_t)p->restarts));
		if (o && !p->healthy)
			add_pod_why((desc *)d, o, p);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *component_json(const desc *d, int k, int depth)
{
	const wmap_node *n = &d->w->nodes[k];
	json_t *c, *kids = NULL;
	stats s;

	if (depth > 32)
		return NULL;
	count(d, k, -1, &s);
	c = json_pack("{s:s, s:o, s:o, s:o}", "name", n->def->name, "replicas", replicas_json(&s),
		      "resources", render_resources_json(&n->total), "nodes", nodes_json(&s));
	if (!c)
		return NULL;
	if (n->def->kind)
		json_object_set_new(c, "kind", json_pack("{s:s, s:s, s:s}", "group", n->def->kind->group, "version", n->def->kind->version, "kind", n->def->kind->kind));
	if (wmap_component_has_pods(n->def) && !n->def->instance_id_path)
		render_pod_location(c, n, 0);
	if (wmap_component_has_pods(n->def) && n->def->instance_id_path) {
		json_t *list = json_array();

		for (size_t i = 0; list && i < n->n_instances; i++) {
			stats is;

			count(d, k, (int)i, &is);
			json_t *io = json_pack("{s:s, s:o, s:o, s:o, s:o}", "id", n->instances[i].id,
					       "replicas", replicas_json(&is), "resources",
					       render_resources_json(&n->instances[i].total), "nodes",
					       nodes_json(&is), "pods", pods_json(d, k, (int)i));

			if (io) {
				add_section_events(d, io, k, (int)i);
				render_pod_location(io, n, i);
			}
			json_array_append_new(list, io);
		}
		json_object_set_new(c, "instances", list);
		if (section_events(d, k, -2))
			add_section_events(d, c, k, -2);
	} else if (wmap_component_has_pods(n->def)) {
		json_object_set_new(c, "pods", pods_json(d, k, -1));
		add_section_events(d, c, k, -1);
	}
	for (size_t i = 0; i < n->n_children; i++) {
		if (!shown(d, n->children[i], 0))
			continue;
		if (!kids)
			json_object_set_new(c, "children", kids = json_array());
		json_array_append_new(kids, component_json(d, n->children[i], depth + 1));
	}
	return c;
}

static json_t *gang_json(const desc *d)
{
	const live_gang *g = &d->gang;

	if (!g->on)
		return json_null();
	return json_pack("{s:I, s:s, s:I, s:I, s:I, s:b, s:O}", "minMember", (json_int_t)g->min,
			 "minFrom", g->min_source ? g->min_source : "definition", "desired",
			 (json_int_t)g->desired, "scheduled", (json_int_t)g->scheduled, "ready",
			 (json_int_t)g->ready, "admitted", g->admitted, "groups", g->groups);
}

static int render_model(desc *d, cli_output format)
{
	const wmap_workload *w = d->w;
	const json_t *md = json_object_get(w->object, "metadata");
	json_t *m, *phases = render_phases_json(w), *list = json_array();
	int top[MAX_KIDS], rc;
	size_t nt = w->n_nodes ? top_level(d, top, MAX_KIDS) : 0;
	stats all = { 0 };

	all.desired = w->desired;
	for (size_t i = 0; i < d->n_pods; i++)
		if (d->pods[i].comp >= 0) {
			all.current++;
			all.ready += d->pods[i].ready;
		}
	for (size_t i = 0; list && i < nt; i++)
		json_array_append_new(list, component_json(d, top[i], 0));
	m = json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:{s:s, s:s}, s:b, s:o, s:s?, s:o, s:o, s:o}",
		      "kind", w->kind, "apiVersion", w->api_version, "name", w->name, "namespace",
		      w->namespace_, "createdAt",
		      json_string_value(json_object_get(md, "creationTimestamp")), "definition",
		      "name", w->definition->name, "origin", wmap_origin_name(w->definition->origin),
		      "fileMode", 0, "phases", phases, "phase", w->phase, "replicas",
		      replicas_json(&all), "resources", render_resources_json(&w->total), "components",
		      list);
	if (!m)
		return wmap_error_set(&d->err, WMAP_ENOMEM, "out of memory building the output");
	json_object_set_new(m, "events", d->have_events ? json_deep_copy(json_object_get(d->why, "workload")) : json_null());
	json_object_set_new(m, "gang", gang_json(d));
	rc = render_value(stdout, m, format, &d->err);
	json_decref(m);
	return rc;
}

/* ---- pruning check ----------------------------------------------------------------- */

/* Labels written into pod-template metadata that the CRD's schema declares as a bare
 * object are dropped by the API server (kubernetes/kubernetes#103739): say so. */
static void check_pruning(desc *d)
{
	const wmap_api_resource *r = d->t->res;
	const wmap_workload *w = d->w;
	wmap_error e = { 0 };
	json_t *crd = NULL;
	char path[700];

	if (!r->group[0] || !strchr(r->group, '.'))
		return; /* built-in kinds have no CRD */
	snprintf(path, sizeof(path), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/%s.%s",
		 r->plural, r->group);
	if (wmap_kube_get(&crd, d->lc->client, path, &e) != 0)
		return; /* no permission to read CRDs: nothing to say */
	for (size_t k = 0; k < w->n_nodes; k++)
		for (size_t i = 0; i < w->nodes[k].n_instances; i++) {
			const wmap_pod *pod = &w->nodes[k].instances[i].pod;
			const char *mp = pod->metadata.pointer;
			char parent[512], dotted[600];
			const char *slash;

			if (!w->nodes[k].instances[i].has_pod || !mp)
				continue;
			slash = strrchr(mp, '/');
			snprintf(parent, sizeof(parent), "%.*s", (int)(slash ? slash - mp : 0), mp);
			if (!wmap_crd_prunes_template_labels(crd, r->version, parent))
				continue;
			snprintf(dotted, sizeof(dotted), "%s", mp);
			for (char *c = dotted; *c; c++)
				if (*c == '/')
					*c = '.';
			live_warn(d->lc, "the CRD %s.%s declares pod template metadata (%s) without "
					 "properties: the API server prunes labels and annotations written "
					 "there (kubernetes/kubernetes#103739); component %s",
				  r->plural,
				  r->group, dotted, w->nodes[k].def->name);
		}
	json_decref(crd);
}

/* ---- the command ------------------------------------------------------------------- */

static int parse_limit(long *out, const cli_options *o, const char *name, long dflt)
{
	const char *v = cli_options_get(o, name);
	char *end;

	*out = dflt;
	if (!v)
		return 0;
	*out = strtol(v, &end, 10);
	if (end == v || *end || *out < 0)
		return cli_usage_error(o, &cli_cmd_describe, "--%s needs a number >= 0 (got \"%s\")",
				       name, v);
	return 0;
}

int live_describe_check_flags(const cli_options *o)
{
	long ignored;
	int rc;

	if ((rc = parse_limit(&ignored, o, "pod-limit", 0)) != 0 ||
	    (rc = parse_limit(&ignored, o, "component-limit", 0)) != 0 ||
	    (rc = parse_limit(&ignored, o, "events", LIVE_EVENTS_DEFAULT)) != 0)
		return rc;
	return 0;
}

int live_describe_view(live_ctx *lc, live_target *t, int warn)
{
	const cli_options *o = lc->o;
	desc d;
	int rc;

	memset(&d, 0, sizeof(d));
	if ((rc = parse_limit(&d.pod_limit, o, "pod-limit", 0)) != 0 ||
	    (rc = parse_limit(&d.comp_limit, o, "component-limit", 0)) != 0 ||
	    (rc = parse_limit(&d.n_events, o, "events", LIVE_EVENTS_DEFAULT)) != 0)
		return rc;
	d.lc = lc;
	d.t = t;
	d.w = t->w;
	if (live_pods_load(&d.set, lc, t->w, &d.err) != 0) {
		rc = live_fail(&d.err, CLI_EXIT_ERROR);
		goto cleanup;
	}
	d.pods = d.set.v;
	d.n_pods = d.set.n;
	if (build_why(&d) != 0) {
		rc = live_fail(&d.err, CLI_EXIT_ERROR);
		goto cleanup;
	}
	if (warn) {
		check_pruning(&d);
		for (size_t i = 0; i < t->w->n_warnings; i++)
			live_warn(lc, "%s", t->w->warnings[i]);
	}
	rc = o->output == CLI_OUTPUT_TABLE ? render_text(&d) : render_model(&d, o->output);
	if (rc != 0)
		rc = live_fail(&d.err, CLI_EXIT_ERROR);
cleanup:
	render_table_free(d.tree);
	json_decref(d.why);
	live_gang_free(&d.gang);
	live_events_free(&d.ev);
	live_pods_free(&d.set);
	return rc;
}

int live_describe(const cli_options *o)
{
	char type[256], name[256];
	int has_name = 0, rc;
	live_ctx lc;
	live_target t;

	memset(&t, 0, sizeof(t));
	if ((rc = live_describe_check_flags(o)) != 0)
		return rc;
	if ((rc = live_split_target(type, sizeof(type), name, sizeof(name), &has_name, o,
				    &cli_cmd_describe, 1)) != 0)
		return rc;
	if (cli_options_get(o, "until-done") && !cli_options_get(o, "watch"))
		return cli_usage_error(o, &cli_cmd_describe, "--until-done goes with -w");
	if ((rc = live_open(&lc, o)) != 0) {
		live_close(&lc);
		return rc;
	}
	if ((rc = live_target_load(&t, &lc, type, name)) != 0)
		goto cleanup;
	if (cli_options_get(o, "watch"))
		rc = live_watch_describe(&lc, &t, o);
	else
		rc = live_describe_view(&lc, &t, 1);
cleanup:
	live_target_clear(&t);
	live_close(&lc);
	return rc;
}
