/* kubectl-wmap: the gang state of a live workload (live_why.h).
 *
 * The minimum comes from the scheduler's own group object when one exists (it is what the
 * scheduler enforces), else from the definition's gangScheduling through the core's gang
 * plan. The group objects and their fields, from each project's API types:
 * - Volcano PodGroup (scheduling.volcano.sh/v1beta1): spec.minMember, status.phase
 *   (Pending, Inqueue, Running, Unknown, Completed), status.conditions[] {type
 *   Unschedulable|Scheduled, status, reason, message};
 * - scheduler-plugins coscheduling PodGroup (scheduling.x-k8s.io/v1alpha1): spec.minMember,
 *   status.phase (Pending, PreScheduling, Scheduling, Scheduled, Running, Unknown, Finished,
 *   Failed); no message;
 * - KAI PodGroup (scheduling.run.ai/v2alpha2): spec.minMember (or its subGroups'),
 *   status.phase, status.schedulingConditions[] {type UnschedulableOnNodePool, nodePool,
 *   reason, message, reasons[] {reason, message}};
 * - Kueue Workload (kueue.x-k8s.io/v1beta1): spec.podSets[] {name, count, minCount},
 *   status.conditions[] (QuotaReserved, Admitted, Evicted, Finished) with reason and message.
 * Group objects are found by owner reference (Kueue, KAI's pod-grouper) or by the group
 * names the pods carry (Volcano's scheduling.k8s.io/group-name, coscheduling's
 * scheduling.x-k8s.io/pod-group label, KAI's pod-group-name, wmap.io/pod-group) and the
 * names the plan gives (what wmap's webhook writes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live_why.h"
#include "wmap/gang.h"

enum sched { SCHED_VOLCANO,
	     SCHED_COSCHED,
	     SCHED_KAI,
	     SCHED_KUEUE,
	     SCHED_N };

static const struct sched_kind {
	const char *group, *version, *kind, *who;
} kinds[SCHED_N] = {
	[SCHED_VOLCANO] = { "scheduling.volcano.sh", "v1beta1", "PodGroup", "Volcano" },
	[SCHED_COSCHED] = { "scheduling.x-k8s.io", "v1alpha1", "PodGroup", "coscheduling" },
	[SCHED_KAI] = { "scheduling.run.ai", "v2alpha2", "PodGroup", "KAI" },
	[SCHED_KUEUE] = { "kueue.x-k8s.io", "v1beta1", "Workload", "Kueue" },
};

/* Pod keys that name a group: annotations (a = 1) or labels. */
static const struct name_key {
	const char *key;
	int annotation;
	int sched; /* -1: any scheduler */
} name_keys[] = {
	{ "scheduling.k8s.io/group-name", 1, SCHED_VOLCANO },
	{ "scheduling.volcano.sh/group-name", 1, SCHED_VOLCANO },
	{ "scheduling.x-k8s.io/pod-group", 0, SCHED_COSCHED },
	{ "pod-group-name", 1, SCHED_KAI },
	{ "wmap.io/pod-group", 1, -1 },
};

static const json_t *condition(const json_t *obj, const char *list, const char *type)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(json_object_get(obj, "status"), list), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

static int cond_true(const json_t *c)
{
	const char *s = json_string_value(json_object_get(c, "status"));

	return s && strcmp(s, "True") == 0;
}

/* "reason: message" of a condition, or "". */
static void cond_text(char *buf, size_t len, const json_t *c)
{
	const char *r = json_string_value(json_object_get(c, "reason"));
	const char *m = json_string_value(json_object_get(c, "message"));

	if (r && m && m[0])
		snprintf(buf, len, "%s: %s", r, m);
	else
		snprintf(buf, len, "%s", m && m[0] ? m : r ? r
							   : "");
}

static int64_t int_at(const json_t *obj, const char *a, const char *b)
{
	return json_integer_value(json_object_get(json_object_get(obj, a), b));
}

/* The facts of one group object; admitted is 1/0, or -1 when the object does not say. */
static json_t *group_facts(int s, const json_t *obj, int64_t *min, int *admitted)
{
	const json_t *md = json_object_get(obj, "metadata"), *st = json_object_get(obj, "status");
	const char *phase = json_string_value(json_object_get(st, "phase"));
	char msg[2048] = "", av[200];
	json_t *g;

	*admitted = -1;
	*min = int_at(obj, "spec", "minMember");
	if (s == SCHED_VOLCANO) {
		const json_t *c = condition(obj, "conditions", "Unschedulable");

		if (c && cond_true(c))
			cond_text(msg, sizeof(msg), c);
	} else if (s == SCHED_KAI) {
		size_t i, used = 0;
		json_t *c, *r;

		if (*min <= 0) {
			json_array_foreach(json_object_get(json_object_get(obj, "spec"), "subGroups"), i, c)
				*min += json_integer_value(json_object_get(c, "minMember"));
		}
		json_array_foreach(json_object_get(st, "schedulingConditions"), i, c) {
			size_t j;

			msg[0] = '\0';
			used = 0;
			json_array_foreach(json_object_get(c, "reasons"), j, r)
				if (used < sizeof(msg))
					used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s%s: %s",
								 used ? "; " : "",
								 json_string_value(json_object_get(r, "reason")) ? json_string_value(json_object_get(r, "reason")) : "?",
								 json_string_value(json_object_get(r, "message")) ? json_string_value(json_object_get(r, "message")) : "");
			if (!used)
				cond_text(msg, sizeof(msg), c);
		}
	} else if (s == SCHED_KUEUE) {
		const json_t *adm = condition(obj, "conditions", "Admitted");
		const json_t *quota = condition(obj, "conditions", "QuotaReserved");
		const json_t *evicted = condition(obj, "conditions", "Evicted");
		const json_t *fin = condition(obj, "conditions", "Finished");
		size_t i;
		json_t *ps;

		*min = 0;
		json_array_foreach(json_object_get(json_object_get(obj, "spec"), "podSets"), i, ps) {
			const json_t *mc = json_object_get(ps, "minCount");

			*min += mc ? json_integer_value(mc) : json_integer_value(json_object_get(ps, "count"));
		}
		*admitted = adm && cond_true(adm);
		phase = fin && cond_true(fin)           ? "Finished"
			: *admitted                     ? "Admitted"
			: evicted && cond_true(evicted) ? "Evicted"
			: quota && cond_true(quota)     ? "QuotaReserved"
							: "Pending";
		if (!*admitted) {
			if (evicted && cond_true(evicted))
				cond_text(msg, sizeof(msg), evicted);
			else if (quota && !cond_true(quota))
				cond_text(msg, sizeof(msg), quota);
			else if (adm)
				cond_text(msg, sizeof(msg), adm);
		}
	}
	snprintf(av, sizeof(av), "%s/%s", kinds[s].group, kinds[s].version);
	g = json_pack("{s:s, s:s, s:s?, s:s}", "apiVersion", av, "kind", kinds[s].kind, "name",
		      json_string_value(json_object_get(md, "name")), "scheduler", kinds[s].who);
	if (!g)
		return NULL;
	if (*min > 0)
		json_object_set_new(g, "minMember", json_integer((json_int_t)*min));
	if (phase)
		json_object_set_new(g, "phase", json_string(phase));
	if (*admitted >= 0)
		json_object_set_new(g, "admitted", json_boolean(*admitted));
	if (msg[0])
		json_object_set_new(g, "message", json_string(msg));
	return g;
}

/* names[s]: the group names each scheduler's objects may carry (the key "*" for any). */
static void collect_names(json_t *names, const live_pods *pods, const wmap_gang_plan *plan)
{
	for (size_t i = 0; i < pods->n; i++) {
		const json_t *md = json_object_get(pods->v[i].pod, "metadata");

		if (pods->v[i].comp < 0)
			continue;
		for (size_t k = 0; k < sizeof(name_keys) / sizeof(name_keys[0]); k++) {
			const char *v = json_string_value(json_object_get(
				json_object_get(md, name_keys[k].annotation ? "annotations" : "labels"),
				name_keys[k].key));
			char key[300];

			if (!v)
				continue;
			snprintf(key, sizeof(key), "%d|%s", name_keys[k].sched, v);
			json_object_set_new(names, key, json_true());
		}
	}
	for (size_t i = 0; plan && i < plan->n_groups; i++) {
		char key[300];

		snprintf(key, sizeof(key), "-1|%s", plan->groups[i].name);
		json_object_set_new(names, key, json_true());
	}
}

static int named(const json_t *names, int s, const char *name)
{
	char key[300];

	if (!name)
		return 0;
	snprintf(key, sizeof(key), "%d|%s", s, name);
	if (json_object_get(names, key))
		return 1;
	snprintf(key, sizeof(key), "-1|%s", name);
	return json_object_get(names, key) != NULL;
}

static int pod_scheduled(const pod_info *p)
{
	size_t i;
	json_t *c;

	if (p->node)
		return 1;
	json_array_foreach(json_object_get(json_object_get(p->pod, "status"), "conditions"), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && strcmp(t, "PodScheduled") == 0)
			return cond_true(c);
	}
	return 0;
}

/* The group the workload's templates name for a scheduler that needs a group object (the
 * keys of its row in wmap/gang.h, as wmap's admission stamps them): when no such object was
 * found, an entry {..., missing: true, message} saying so and why. */
static int add_missing(live_gang *g, live_ctx *lc, const wmap_workload *w, wmap_error *err)
{
	size_t nrows;
	const wmap_gang_row *const *rows = wmap_gang_group_rows(&nrows);
	for (size_t r = 0; r < nrows; r++) {
		const wmap_gang_row *row = rows[r];
		const char *want = NULL;
		for (size_t k = 0; k < w->n_nodes && !want; k++) {
			for (size_t i = 0; i < w->nodes[k].n_instances && !want; i++) {
				const wmap_instance *in = &w->nodes[k].instances[i];
				const json_t *md = in->has_pod ? in->pod.metadata.value : NULL;
				const json_t *m = json_object_get(md, row->group.where == WMAP_GANG_AT_LABEL ? "labels" : "annotations");
				const char *v = json_string_value(json_object_get(m, row->group.key));
				/* KAI's pod-group-name alone may be KAI's own: external mode opts out */
				if (v && row->opt_out.key &&
				    !json_object_get(json_object_get(md, "annotations"), row->opt_out.key))
					v = NULL;
				want = v;
			}
		}
		if (!want)
			continue;
		int found = 0;
		size_t i;
		json_t *it;
		char av[256];
		snprintf(av, sizeof(av), "%s/%s", row->api_group, row->version);
		json_array_foreach(g->groups, i, it) {
			const char *a = json_string_value(json_object_get(it, "apiVersion"));
			const char *n = json_string_value(json_object_get(it, "name"));
			found |= a && n && !strcmp(a, av) && !strcmp(n, want);
		}
		if (found)
			continue;
		const char *who = "?";
		for (int s = 0; s < SCHED_N; s++)
			if (!strcmp(kinds[s].group, row->api_group))
				who = kinds[s].who;
		char msg[512];
		if (!wmap_discovery_find_kind(lc->disc, row->api_group, row->version, row->kind))
			snprintf(msg, sizeof(msg), "the cluster does not serve %s %s (install the scheduler's "
						   "CRDs); the pods wait for it",
				 av, row->kind);
		else
			snprintf(msg, sizeof(msg), "not found in %s; wmap-webhook's leader creates it (is it "
						   "running against this cluster, and may it list and watch this kind? see "
						   "deploy/base/02-rbac.yaml); until then the pods wait",
				 w->namespace_ ? w->namespace_ : "the namespace");
		json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:b, s:s}", "apiVersion", av, "kind", row->kind,
				      "name", want, "scheduler", who, "missing", 1, "message", msg);
		if (!e || json_array_append_new(g->groups, e) != 0)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	return 0;
}

int live_gang_load(live_gang *g, live_ctx *lc, const wmap_workload *w, const live_pods *pods,
		   wmap_error *err)
{
	const char *uid = json_string_value(
		json_object_get(json_object_get(w->object, "metadata"), "uid"));
	wmap_gang_plan *plan = NULL;
	json_t *names = NULL;
	int64_t plan_min = 0, obj_min = 0, kueue_min = 0;
	const char *obj_source = NULL;
	int kueue_admitted = -1, rc = 0;

	memset(g, 0, sizeof(*g));
	if (!(g->groups = json_array()) || !(names = json_object())) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (w->name && wmap_gang_plan_build(&plan, w, w->name, err) != 0) {
		rc = err->code;
		goto cleanup;
	}
	for (size_t i = 0; plan && i < plan->n_groups; i++)
		plan_min += plan->groups[i].min_member;
	collect_names(names, pods, plan);
	for (int s = 0; s < SCHED_N && w->namespace_; s++) {
		const wmap_api_resource *r = wmap_discovery_find_kind(lc->disc, kinds[s].group,
								      kinds[s].version, kinds[s].kind);
		json_t *items, *it;
		wmap_error e = { 0 };
		char *path;
		size_t i;

		if (!r || !(path = wmap_resource_path(r, w->namespace_, NULL)))
			continue; /* not installed: nothing to ask */
		if (!(items = json_array()) || live_list(items, lc, path, 500, &e) != 0) {
			if (items)
				live_warn(lc, "gang state: cannot list %s.%s: %s", r->plural, r->group,
					  e.message);
			json_decref(items);
			free(path);
			continue;
		}
		free(path);
		json_array_foreach(items, i, it) {
			const char *name = json_string_value(
				json_object_get(json_object_get(it, "metadata"), "name"));
			int64_t min;
			int adm;
			json_t *facts;

			if (!live_refs_uid(it, uid) && !(s != SCHED_KUEUE && named(names, s, name)))
				continue;
			if (json_array_size(g->groups) >= LIVE_GANG_MAX_OBJECTS)
				break;
			if (!(facts = group_facts(s, it, &min, &adm))) {
				json_decref(items);
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				goto cleanup;
			}
			json_array_append_new(g->groups, facts);
			if (s == SCHED_KUEUE) {
				kueue_admitted = kueue_admitted == 0 ? 0 : adm;
				kueue_min += min;
			} else if (!obj_source || obj_source == kinds[s].who) {
				/* One scheduler places the pods: the first kind with groups gives
				 * the minimum, the sum of its groups (one per instance, say). */
				obj_min += min;
				if (min > 0)
					obj_source = kinds[s].who;
			}
		}
		json_decref(items);
	}
	if ((rc = add_missing(g, lc, w, err)) != 0)
		goto cleanup;
	g->on = plan_min > 0 || json_array_size(g->groups) > 0;
	/* The scheduler's PodGroup is what it enforces; Kueue admits whole podSets; the
	 * definition says what wmap would ask for. */
	if (obj_min > 0) {
		g->min = obj_min;
		g->min_source = obj_source;
	} else if (kueue_min > 0) {
		g->min = kueue_min;
		g->min_source = "Kueue";
	} else {
		g->min = plan_min;
		g->min_source = "definition";
	}
	g->desired = w->desired;
	for (size_t i = 0; i < pods->n; i++) {
		if (pods->v[i].comp < 0)
			continue;
		g->scheduled += pod_scheduled(&pods->v[i]);
		g->ready += pods->v[i].ready;
	}
	g->admitted = kueue_admitted >= 0 ? kueue_admitted : (g->min > 0 && g->scheduled >= g->min);
cleanup:
	wmap_gang_plan_free(plan);
	json_decref(names);
	return rc;
}

void live_gang_free(live_gang *g)
{
	if (!g)
		return;
	json_decref(g->groups);
	memset(g, 0, sizeof(*g));
}

void live_gang_text(char *buf, size_t len, const live_gang *g)
{
	snprintf(buf, len, "%lld/%lld scheduled, %lld/%lld ready (min %lld), %s",
		 (long long)g->scheduled, (long long)g->desired, (long long)g->ready,
		 (long long)g->desired, (long long)g->min, g->admitted ? "admitted" : "not admitted");
}
