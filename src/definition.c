/* wmap: loading and validating Karta definitions (see include/wmap/definition.h).
 *
 * Reading is strict: an unknown field, a value of the wrong type or a missing required
 * field is a finding that names its place, because a typo in a definition otherwise shows
 * up much later as a workload with no pods. Upstream's validation rules follow, with
 * upstream's messages, so that tests and users can compare the two tools. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "definition_int.h"
#include "eval.h"
#include "jq.h"
#include "jqnative.h"
#include "wmap/definition.h"
#include "wmap/yaml.h"

static const char *const status_names[] = { "Resuming", "Suspending", "Suspended", "Running",
					    "Failed", "Completed", "Initializing", "Degraded",
					    "Undefined" };
static const char *const status_keys[] = { "resuming", "suspending", "suspended", "running",
					   "failed", "completed", "initializing", "degraded" };
static const char *const frag_keys[] = {
	"schedulerNamePath", "labelsPath", "annotationsPath", "resourcesPath",
	"resourceClaimsPath", "podAffinityPath", "nodeAffinityPath", "containersPath",
	"containerPath", "priorityClassNamePath", "imagePath"
};

const char *wmap_status_name(wmap_status s)
{
	return s <= WMAP_STATUS_UNDEFINED ? status_names[s] : "Undefined";
}

const char *wmap_status_key(wmap_status s)
{
	return s < WMAP_STATUS_COUNT ? status_keys[s] : "undefined";
}

const char *wmap_frag_field_key(wmap_frag_field f)
{
	return f < WMAP_FRAG_COUNT ? frag_keys[f] : "";
}

const char *wmap_origin_name(wmap_origin o)
{
	return o == WMAP_ORIGIN_CLUSTER ? "cluster" : o == WMAP_ORIGIN_FILE ? "file"
									    : "catalog";
}

const char *wmap_expr_text(const wmap_expr *e)
{
	return e ? e->text : NULL;
}

int wmap_expr_is_native(const wmap_expr *e)
{
	return e && e->path;
}

static wmap_gvk *get_gvk(ctx *c, const json_t *obj, const char *ptr, const char *key)
{
	const json_t *o = wmap__def_get_object(c, obj, ptr, key);
	static const char *const keys[] = { "group", "version", "kind", NULL };
	if (!o)
		return NULL;
	char *p = wmap__def_child_ptr(c, ptr, key);
	wmap_gvk *g = calloc(1, sizeof(*g));
	if (!g || !p) {
		c->oom = 1;
		free(g);
		free(p);
		return NULL;
	}
	wmap__def_check_keys(c, o, p, keys);
	g->group = wmap__def_get_string(c, o, p, "group", 0);
	g->version = wmap__def_get_string(c, o, p, "version", 0);
	g->kind = wmap__def_get_string(c, o, p, "kind", 0);
	if (!g->group)
		g->group = wmap__def_xstrdup(c, "");
	free(p);
	return g;
}

static void gvk_free(wmap_gvk *g)
{
	if (!g)
		return;
	free(g->group);
	free(g->version);
	free(g->kind);
}

void wmap_definition_slug(char *buf, size_t len, const char *group, const char *kind,
			  const char *version)
{
	snprintf(buf, len, "%s-%s-%s", *group ? group : "core", kind, version ? version : "");
	for (char *p = buf; *p; p++)
		*p = *p == '.' ? '-' : (*p >= 'A' && *p <= 'Z') ? (char)(*p + 32)
								: *p;
}

void wmap_gvk_format(char *buf, size_t len, const wmap_gvk *g)
{
	if (!g)
		snprintf(buf, len, "<none>");
	else if (g->group && *g->group)
		snprintf(buf, len, "%s/%s, Kind=%s", g->group, g->version ? g->version : "",
			 g->kind ? g->kind : "");
	else
		snprintf(buf, len, "/%s, Kind=%s", g->version ? g->version : "", g->kind ? g->kind : "");
}

/* ---- components ---- */

static void load_spec(ctx *c, wmap_component *comp, const json_t *obj, const char *ptr)
{
	static const char *const keys[] = { "podTemplateSpecPath", "podSpecPath", "metadataPath",
					    "fragmentedPodSpecDefinition", NULL };
	const json_t *sd = wmap__def_get_object(c, obj, ptr, "specDefinition");
	if (!sd)
		return;
	char *p = wmap__def_child_ptr(c, ptr, "specDefinition");
	if (!p)
		return;
	wmap__def_check_keys(c, sd, p, keys);
	comp->template_path = wmap__def_get_expr(c, sd, p, "podTemplateSpecPath", 0, 1);
	comp->podspec_path = wmap__def_get_expr(c, sd, p, "podSpecPath", 0, 1);
	comp->metadata_path = wmap__def_get_expr(c, sd, p, "metadataPath", 0, 1);
	const json_t *fr = wmap__def_get_object(c, sd, p, "fragmentedPodSpecDefinition");
	int shapes = (comp->template_path != NULL) + (comp->podspec_path != NULL) + (fr != NULL);
	if (shapes > 1)
		wmap__def_finding(c, p, "component '%s' has multiple pod spec definitions", comp->name);
	if (fr) {
		char *fp = wmap__def_child_ptr(c, p, "fragmentedPodSpecDefinition");
		const char *fkeys[WMAP_FRAG_COUNT + 1];
		for (int i = 0; i < WMAP_FRAG_COUNT; i++)
			fkeys[i] = frag_keys[i];
		fkeys[WMAP_FRAG_COUNT] = NULL;
		if (fp) {
			wmap__def_check_keys(c, fr, fp, fkeys);
			for (int i = 0; i < WMAP_FRAG_COUNT; i++)
				comp->frag[i] = wmap__def_get_expr(c, fr, fp, frag_keys[i], 0, 1);
		}
		free(fp);
	}
	comp->shape = comp->template_path  ? WMAP_SPEC_TEMPLATE
		      : comp->podspec_path ? WMAP_SPEC_PODSPEC
		      : fr                 ? WMAP_SPEC_FRAGMENTED
					   : WMAP_SPEC_NONE;
	free(p);
}

static void load_scale(ctx *c, wmap_component *comp, const json_t *obj, const char *ptr)
{
	static const char *const keys[] = { "replicasPath", "minReplicasPath", "maxReplicasPath", NULL };
	const json_t *sd = wmap__def_get_object(c, obj, ptr, "scaleDefinition");
	if (!sd)
		return;
	char *p = wmap__def_child_ptr(c, ptr, "scaleDefinition");
	if (!p)
		return;
	wmap__def_check_keys(c, sd, p, keys);
	comp->has_scale = 1;
	comp->replicas_path = wmap__def_get_expr(c, sd, p, "replicasPath", 0, 0);
	comp->min_replicas_path = wmap__def_get_expr(c, sd, p, "minReplicasPath", 0, 0);
	comp->max_replicas_path = wmap__def_get_expr(c, sd, p, "maxReplicasPath", 0, 0);
	/* the three run on the same object, one after the other (resolve_scale): the members
	 * they all read are looked up once per instance */
	wmap_jn *jn[3] = { comp->replicas_path ? comp->replicas_path->jn : NULL,
			   comp->min_replicas_path ? comp->min_replicas_path->jn : NULL,
			   comp->max_replicas_path ? comp->max_replicas_path->jn : NULL };
	wmap__jn_share_keys(jn, 3);
	free(p);
}

static void load_condition(ctx *c, const json_t *x, const char *ip, void *ud)
{
	static const char *const ckeys[] = { "type", "status", "reason", NULL };
	wmap_matcher *m = ud;
	struct wmap_cond_match *cm = &m->conditions[m->n_conditions++];
	wmap__def_check_keys(c, x, ip, ckeys);
	cm->type = wmap__def_get_string(c, x, ip, "type", 1);
	cm->status = wmap__def_get_string(c, x, ip, "status", 0);
	cm->reason = wmap__def_get_string(c, x, ip, "reason", 0);
}

/* Where wmap__def_for_each_item's callbacks append: an array sized beforehand and its count. */
typedef struct matcher_list {
	wmap_matcher *v;
	size_t *n;
} matcher_list;

typedef struct action_list {
	wmap_action *v;
	size_t *n;
} action_list;

static void load_matcher(ctx *c, const json_t *o, const char *p, void *ud)
{
	matcher_list *l = ud;
	wmap_matcher *m = &l->v[(*l->n)++];
	static const char *const keys[] = { "byPhase", "byConditions", "byExpression", NULL };
	static const char *const ekeys[] = { "expression", "expectedResult", NULL };

	wmap__def_check_keys(c, o, p, keys);
	m->by_phase = wmap__def_get_string(c, o, p, "byPhase", 0);
	const json_t *conds = wmap__def_get_array(c, o, p, "byConditions");
	if (conds && json_array_size(conds)) {
		m->conditions = calloc(json_array_size(conds), sizeof(*m->conditions));
		if (!m->conditions) {
			c->oom = 1;
			return;
		}
		wmap__def_for_each_item(c, conds, p, "byConditions", "a condition matcher", load_condition, m);
	}
	const json_t *ex = wmap__def_get_object(c, o, p, "byExpression");
	if (ex) {
		char *ep = wmap__def_child_ptr(c, p, "byExpression");
		if (ep) {
			wmap__def_check_keys(c, ex, ep, ekeys);
			m->expression = wmap__def_get_expr(c, ex, ep, "expression", 1, 0);
			m->expected = wmap__def_get_string(c, ex, ep, "expectedResult", 1);
		}
		free(ep);
	}
}

static void load_status(ctx *c, wmap_component *comp, const json_t *obj, const char *ptr)
{
	static const char *const keys[] = { "phaseDefinition", "conditionsDefinition",
					    "statusMappings", NULL };
	static const char *const ckeys[] = { "path", "typeFieldName", "statusFieldName",
					     "messageFieldName", "reasonFieldName", NULL };
	static const char *const pkeys[] = { "path", NULL };
	const json_t *sd = wmap__def_get_object(c, obj, ptr, "statusDefinition");
	if (!sd)
		return;
	char *p = wmap__def_child_ptr(c, ptr, "statusDefinition");
	wmap_status_def *st = calloc(1, sizeof(*st));
	if (!p || !st) {
		c->oom = 1;
		free(p);
		free(st);
		return;
	}
	comp->status = st;
	wmap__def_check_keys(c, sd, p, keys);
	const json_t *pd = wmap__def_get_object(c, sd, p, "phaseDefinition");
	if (pd) {
		char *pp = wmap__def_child_ptr(c, p, "phaseDefinition");
		if (pp) {
			wmap__def_check_keys(c, pd, pp, pkeys);
			st->phase_path = wmap__def_get_expr(c, pd, pp, "path", 1, 0);
		}
		free(pp);
	}
	const json_t *cd = wmap__def_get_object(c, sd, p, "conditionsDefinition");
	if (cd) {
		char *cp = wmap__def_child_ptr(c, p, "conditionsDefinition");
		if (cp) {
			wmap__def_check_keys(c, cd, cp, ckeys);
			st->conditions_path = wmap__def_get_expr(c, cd, cp, "path", 1, 0);
			/* The CRD defaults these; a document read from a file has not been through
			 * the API server, so apply the same defaults here. */
			st->type_field = wmap__def_get_string(c, cd, cp, "typeFieldName", 0);
			st->status_field = wmap__def_get_string(c, cd, cp, "statusFieldName", 0);
			st->message_field = wmap__def_get_string(c, cd, cp, "messageFieldName", 0);
			st->reason_field = wmap__def_get_string(c, cd, cp, "reasonFieldName", 0);
			if (!st->type_field)
				st->type_field = wmap__def_xstrdup(c, "type");
			if (!st->status_field)
				st->status_field = wmap__def_xstrdup(c, "status");
			if (!st->message_field)
				st->message_field = wmap__def_xstrdup(c, "message");
			if (!st->reason_field)
				st->reason_field = wmap__def_xstrdup(c, "reason");
		}
		free(cp);
	}
	const json_t *sm = json_object_get(sd, "statusMappings");
	if (!sm) {
		wmap__def_finding(c, p, "statusMappings is required");
	} else if (!json_is_object(sm)) {
		char *mp = wmap__def_child_ptr(c, p, "statusMappings");
		wmap__def_finding(c, mp ? mp : p, "statusMappings must be an object");
		free(mp);
	} else {
		char *mp = wmap__def_child_ptr(c, p, "statusMappings");
		const char *mkeys[WMAP_STATUS_COUNT + 1];
		for (int i = 0; i < WMAP_STATUS_COUNT; i++)
			mkeys[i] = status_keys[i];
		mkeys[WMAP_STATUS_COUNT] = NULL;
		if (mp) {
			wmap__def_check_keys(c, sm, mp, mkeys);
			for (int s = 0; s < WMAP_STATUS_COUNT; s++) {
				const json_t *list = wmap__def_get_array(c, sm, mp, status_keys[s]);
				if (!list || !json_array_size(list))
					continue;
				st->matchers[s] = calloc(json_array_size(list), sizeof(wmap_matcher));
				if (!st->matchers[s]) {
					c->oom = 1;
					break;
				}
				matcher_list l = { st->matchers[s], &st->n_matchers[s] };
				wmap__def_for_each_item(c, list, mp, status_keys[s], "a status matcher", load_matcher, &l);
			}
		}
		free(mp);
	}
	free(p);
}

static void load_action(ctx *c, const json_t *x, const char *ip, void *ud)
{
	static const char *const keys[] = { "path", "value", NULL };
	action_list *l = ud;
	wmap_action *a = &l->v[(*l->n)++];
	wmap__def_check_keys(c, x, ip, keys);
	a->path = wmap__def_get_expr(c, x, ip, "path", 1, 1);
	char *val = wmap__def_get_string(c, x, ip, "value", 1);
	if (val) {
		json_error_t je;
		a->value = json_loads(val, JSON_DECODE_ANY, &je);
		/* jansson names every syntax error; no message (or the out-of-memory code) means
		 * an allocation failed, which is not the definition's fault. */
		if (!a->value && (json_error_code(&je) == json_error_out_of_memory || !je.text[0])) {
			c->oom = 1;
		} else if (!a->value) {
			char *vp = wmap__def_child_ptr(c, ip, "value");
			wmap__def_finding(c, vp ? vp : ip, "value \"%s\" is not JSON: %s", val, je.text);
			free(vp);
		}
		free(val);
	}
}

static void load_actions(ctx *c, const json_t *sd, const char *p, const char *key,
			 wmap_action **out, size_t *n)
{
	const json_t *list = wmap__def_get_array(c, sd, p, key);
	if (!list || json_array_size(list) == 0) {
		wmap__def_finding(c, p, "%s must have at least 1 item", key);
		return;
	}
	*out = calloc(json_array_size(list), sizeof(**out));
	if (!*out) {
		c->oom = 1;
		return;
	}
	action_list l = { *out, n };
	wmap__def_for_each_item(c, list, p, key, "an action", load_action, &l);
}

static void load_selector(ctx *c, wmap_component *comp, const json_t *obj, const char *ptr)
{
	static const char *const keys[] = { "componentTypeSelector", "componentInstanceSelector",
					    "replicaSelector", NULL };
	static const char *const tkeys[] = { "keyPath", "value", "matchLabels", NULL };
	static const char *const ikeys[] = { "idPath", NULL };
	static const char *const rkeys[] = { "keyPath", NULL };
	const json_t *ps = wmap__def_get_object(c, obj, ptr, "podSelector");
	if (!ps)
		return;
	char *p = wmap__def_child_ptr(c, ptr, "podSelector");
	if (!p)
		return;
	wmap__def_check_keys(c, ps, p, keys);
	const json_t *ts = wmap__def_get_object(c, ps, p, "componentTypeSelector");
	if (ts) {
		char *tp = wmap__def_child_ptr(c, p, "componentTypeSelector");
		if (tp) {
			wmap__def_check_keys(c, ts, tp, tkeys);
			comp->has_type_selector = 1;
			comp->type_key_path = wmap__def_get_expr(c, ts, tp, "keyPath", 0, 0);
			comp->type_value = wmap__def_get_string(c, ts, tp, "value", 0);
			const json_t *ml = wmap__def_get_object(c, ts, tp, "matchLabels");
			if (ml) {
				const char *k;
				json_t *v;
				if (json_object_size(ml) == 0)
					wmap__def_finding(c, tp, "matchLabels must have at least 1 entry");
				json_object_foreach((json_t *)ml, k, v)
					if (!json_is_string(v))
						wmap__def_finding(c, tp, "matchLabels value of \"%s\" must be a string", k);
				comp->match_labels = json_incref((json_t *)ml);
			}
			if (!json_object_get(ts, "keyPath") && !ml)
				wmap__def_finding(c, tp, "at least one of keyPath or matchLabels must be set");
			if (json_object_get(ts, "value") && !json_object_get(ts, "keyPath"))
				wmap__def_finding(c, tp, "value requires keyPath");
		}
		free(tp);
	}
	const json_t *is = wmap__def_get_object(c, ps, p, "componentInstanceSelector");
	if (is) {
		char *ip = wmap__def_child_ptr(c, p, "componentInstanceSelector");
		if (ip) {
			wmap__def_check_keys(c, is, ip, ikeys);
			comp->pod_instance_id_path = wmap__def_get_expr(c, is, ip, "idPath", 1, 0);
		}
		free(ip);
	}
	const json_t *rs = wmap__def_get_object(c, ps, p, "replicaSelector");
	if (rs) {
		char *rp = wmap__def_child_ptr(c, p, "replicaSelector");
		if (rp) {
			wmap__def_check_keys(c, rs, rp, rkeys);
			comp->replica_key_path = wmap__def_get_expr(c, rs, rp, "keyPath", 1, 0);
		}
		free(rp);
	}
	free(p);
}

static void load_component(ctx *c, wmap_component *comp, const json_t *obj, const char *ptr)
{
	static const char *const keys[] = { "name", "kind", "ownerRef", "specDefinition",
					    "scaleDefinition", "statusDefinition", "suspendDefinition",
					    "instanceIdPath", "podSelector", NULL };
	comp->parent = -1;
	if (!json_is_object(obj)) {
		wmap__def_finding(c, ptr, "a component must be an object");
		comp->name = wmap__def_xstrdup(c, ""); /* validate() compares every component's name */
		return;
	}
	wmap__def_check_keys(c, obj, ptr, keys);
	comp->name = wmap__def_get_string(c, obj, ptr, "name", 0);
	if (!comp->name || !*comp->name) {
		wmap__def_finding(c, ptr, "component name must not be empty");
		if (!comp->name)
			comp->name = wmap__def_xstrdup(c, "");
	}
	comp->kind = get_gvk(c, obj, ptr, "kind");
	comp->owner_ref = wmap__def_get_string(c, obj, ptr, "ownerRef", 0);
	load_spec(c, comp, obj, ptr);
	load_scale(c, comp, obj, ptr);
	load_status(c, comp, obj, ptr);
	const json_t *sd = wmap__def_get_object(c, obj, ptr, "suspendDefinition");
	if (sd) {
		static const char *const skeys[] = { "suspendActions", "resumeActions", NULL };
		char *sp = wmap__def_child_ptr(c, ptr, "suspendDefinition");
		if (sp) {
			wmap__def_check_keys(c, sd, sp, skeys);
			load_actions(c, sd, sp, "suspendActions", &comp->suspend, &comp->n_suspend);
			load_actions(c, sd, sp, "resumeActions", &comp->resume, &comp->n_resume);
		}
		free(sp);
	}
	comp->instance_id_path = wmap__def_get_expr(c, obj, ptr, "instanceIdPath", 0, 0);
	load_selector(c, comp, obj, ptr);
	if ((comp->instance_id_path != NULL) != (comp->pod_instance_id_path != NULL))
		wmap__def_finding(c, ptr,
				  comp->instance_id_path
					  ? "component '%s' has instanceIdPath but no podSelector.componentInstanceSelector"
					  : "component '%s' has podSelector.componentInstanceSelector but no instanceIdPath",
				  comp->name);
}

static void component_free(wmap_component *c)
{
	free(c->name);
	gvk_free(c->kind);
	free(c->kind);
	free(c->owner_ref);
	free(c->type_value);
	json_decref(c->match_labels);
	if (c->status) {
		for (int s = 0; s < WMAP_STATUS_COUNT; s++) {
			for (size_t i = 0; i < c->status->n_matchers[s]; i++) {
				wmap_matcher *m = &c->status->matchers[s][i];
				free(m->by_phase);
				for (size_t j = 0; j < m->n_conditions; j++) {
					free(m->conditions[j].type);
					free(m->conditions[j].status);
					free(m->conditions[j].reason);
				}
				free(m->conditions);
				free(m->expected);
			}
			free(c->status->matchers[s]);
		}
		free(c->status->type_field);
		free(c->status->status_field);
		free(c->status->message_field);
		free(c->status->reason_field);
		free(c->status);
	}
	for (size_t i = 0; i < c->n_suspend; i++)
		json_decref(c->suspend[i].value);
	for (size_t i = 0; i < c->n_resume; i++)
		json_decref(c->resume[i].value);
	free(c->suspend);
	free(c->resume);
	/* expressions are owned by the definition's exprs list */
}

/* ---- gang scheduling ---- */

static void load_gang(ctx *c, const json_t *spec, const char *ptr)
{
	static const char *const okeys[] = { "gangScheduling", NULL };
	static const char *const gkeys[] = { "podGroups", "podGroup", NULL };
	static const char *const pkeys[] = { "name", "members", NULL };
	static const char *const mkeys[] = { "componentName", "groupByKeyPaths", "filters", NULL };
	wmap_definition *d = c->def;
	const json_t *oi = wmap__def_get_object(c, spec, ptr, "optimizationInstructions");
	if (!oi)
		return;
	char *op = wmap__def_child_ptr(c, ptr, "optimizationInstructions");
	if (!op)
		return;
	wmap__def_check_keys(c, oi, op, okeys);
	const json_t *gs = wmap__def_get_object(c, oi, op, "gangScheduling");
	char *gp = gs ? wmap__def_child_ptr(c, op, "gangScheduling") : NULL;
	if (!gs || !gp)
		goto out;
	wmap__def_check_keys(c, gs, gp, gkeys);
	const json_t *pg2 = wmap__def_get_object(c, gs, gp, "podGroup");
	if (pg2)
		d->pod_group_v2 = json_incref((json_t *)pg2);
	const json_t *groups = wmap__def_get_array(c, gs, gp, "podGroups");
	if (!groups || !json_array_size(groups))
		goto out;
	char *lp = wmap__def_child_ptr(c, gp, "podGroups");
	d->pod_groups = calloc(json_array_size(groups), sizeof(*d->pod_groups));
	if (!d->pod_groups || !lp) {
		c->oom = 1;
		free(lp);
		goto out;
	}
	size_t i;
	json_t *g;
	json_array_foreach(groups, i, g) {
		char *ip = wmap_pointer_join_index(lp, i);
		if (!ip) {
			c->oom = 1;
			break;
		}
		if (!json_is_object(g)) {
			wmap__def_finding(c, ip, "a pod group must be an object");
			free(ip);
			continue;
		}
		wmap__def_check_keys(c, g, ip, pkeys);
		wmap_pod_group *pg = &d->pod_groups[d->n_pod_groups++];
		pg->name = wmap__def_get_string(c, g, ip, "name", 1);
		const json_t *members = wmap__def_get_array(c, g, ip, "members");
		if (!members) {
			wmap__def_finding(c, ip, "members is required");
			free(ip);
			continue;
		}
		char *mp = wmap__def_child_ptr(c, ip, "members");
		pg->members = calloc(json_array_size(members) + 1, sizeof(*pg->members));
		if (!pg->members || !mp) {
			c->oom = 1;
			free(mp);
			free(ip);
			break;
		}
		size_t j;
		json_t *m;
		json_array_foreach(members, j, m) {
			char *jp = wmap_pointer_join_index(mp, j);
			if (!jp) {
				c->oom = 1;
				break;
			}
			if (!json_is_object(m)) {
				wmap__def_finding(c, jp, "a member must be an object");
				free(jp);
				continue;
			}
			wmap__def_check_keys(c, m, jp, mkeys);
			wmap_group_member *gm = &pg->members[pg->n_members++];
			gm->component = wmap__def_get_string(c, m, jp, "componentName", 1);
			gm->component_index = -1;
			for (size_t k = 0; gm->component && k + 1 < pg->n_members; k++)
				if (pg->members[k].component && strcmp(pg->members[k].component, gm->component) == 0)
					wmap__def_finding(c, jp, "pod-group member '%s' is listed twice", gm->component);
			const char *lists[2] = { "groupByKeyPaths", "filters" };
			for (int w = 0; w < 2; w++) {
				const json_t *arr = wmap__def_get_array(c, m, jp, lists[w]);
				size_t n = arr ? json_array_size(arr) : 0;
				if (!n)
					continue;
				wmap_expr **es = calloc(n, sizeof(*es));
				char *ap = wmap__def_child_ptr(c, jp, lists[w]);
				if (!es || !ap) {
					c->oom = 1;
					free(es);
					free(ap);
					continue;
				}
				size_t cnt = 0;
				for (size_t k = 0; k < n; k++) {
					char idx[32];
					json_t *holder = json_object();
					snprintf(idx, sizeof(idx), "%zu", k);
					if (!holder) {
						c->oom = 1;
						break;
					}
					/* get_expr reads from an object: give it {"<k>": item} under the list */
					json_object_set(holder, idx, json_array_get(arr, k));
					wmap_expr *e = wmap__def_get_expr(c, holder, ap, idx, 1, 0);
					json_decref(holder);
					if (e)
						es[cnt++] = e;
				}
				if (w == 0) {
					gm->group_by = es;
					gm->n_group_by = cnt;
				} else {
					gm->filters = es;
					gm->n_filters = cnt;
				}
				free(ap);
			}
			free(jp);
		}
		free(mp);
		free(ip);
	}
	free(lp);
out:
	free(gp);
	free(op);
}

/* ---- upstream's structural rules (reference section 4) ---- */

static void validate(ctx *c, const char *comps_ptr)
{
	wmap_definition *d = c->def;
	size_t n = d->n_components;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(d->components[i].name, d->components[j].name) == 0 &&
			    *d->components[i].name) {
				wmap__def_finding(c, comps_ptr, "component name %s is not unique", d->components[j].name);
				return; /* as upstream: nothing else is meaningful after this */
			}
	int before = c->n_findings;
	wmap_component *root = &d->components[0];
	if (!root->kind || !root->kind->version || !*root->kind->version || !root->kind->kind ||
	    !*root->kind->kind || (!*root->kind->group && strcmp(root->kind->kind, "Pod") != 0))
		wmap__def_finding(c, "/spec/structureDefinition/rootComponent",
				  "root component must have full kind (group, version, kind)");
	if (root->owner_ref)
		wmap__def_finding(c, "/spec/structureDefinition/rootComponent", "root component cannot have owner ref");
	if (!root->status)
		wmap__def_finding(c, "/spec/structureDefinition/rootComponent",
				  "root component must have status definition");
	for (size_t i = 1; i < n; i++) {
		wmap_component *comp = &d->components[i];
		char ptr[128];
		snprintf(ptr, sizeof(ptr), "/spec/structureDefinition/childComponents/%zu", i - 1);
		if (!comp->owner_ref || !*comp->owner_ref) {
			wmap__def_finding(c, ptr, "child component '%s' has no owner ref", comp->name);
			continue;
		}
		comp->parent = wmap_definition_component(d, comp->owner_ref);
		if (comp->parent < 0)
			wmap__def_finding(c, ptr, "child component '%s' has owner ref to non-existing component '%s'",
					  comp->name, comp->owner_ref);
		if (comp->status)
			wmap__def_finding(c, ptr, "statusDefinition is read only on the root component ('%s' is a child)",
					  comp->name);
	}
	if (c->n_findings == before) {
		/* Every component must reach the root by following owner refs. */
		for (size_t i = 1; i < n; i++) {
			int at = (int)i;
			size_t hops = 0;
			while (at > 0 && hops <= n) {
				at = d->components[at].parent;
				hops++;
			}
			if (at != 0) {
				wmap__def_finding(c, "/spec/structureDefinition/childComponents",
						  "ownership cycle detected involving component %s", d->components[i].name);
				break;
			}
		}
	}
	for (size_t g = 0; g < d->n_pod_groups; g++)
		for (size_t m = 0; m < d->pod_groups[g].n_members; m++) {
			wmap_group_member *gm = &d->pod_groups[g].members[m];
			if (!gm->component)
				continue;
			gm->component_index = wmap_definition_component(d, gm->component);
			if (gm->component_index < 0) {
				char ptr[160];
				snprintf(ptr, sizeof(ptr),
					 "/spec/optimizationInstructions/gangScheduling/podGroups/%zu/members/%zu",
					 g, m);
				wmap__def_finding(c, ptr,
						  "pod-group member component '%s' is not defined (should be a root or child component)",
						  gm->component);
			}
		}
}

int wmap_definition_component(const wmap_definition *def, const char *name)
{
	for (size_t i = 0; i < def->n_components; i++)
		if (def->components[i].name && strcmp(def->components[i].name, name) == 0)
			return (int)i;
	return -1;
}

int wmap_component_has_pods(const wmap_component *c)
{
	return c->shape != WMAP_SPEC_NONE;
}

/* A definition read from a file may have no metadata (upstream's old examples): it is then
 * named like a catalog file. */
static char *default_name(const wmap_gvk *g)
{
	char buf[512];
	if (!g || !g->kind || !g->version)
		return strdup("unnamed");
	wmap_definition_slug(buf, sizeof(buf), g->group, g->kind, g->version);
	return strdup(buf);
}

int wmap_definition_load(wmap_definition **out, const json_t *doc, const char *source,
			 wmap_origin origin, const json_t *positions, int doc_index,
			 wmap_error *err)
{
	static const char *const top_keys[] = { "apiVersion", "kind", "metadata", "spec", "status", NULL };
	static const char *const spec_keys[] = { "structureDefinition", "optimizationInstructions", NULL };
	static const char *const sd_keys[] = { "rootComponent", "childComponents",
					       "additionalChildKinds", NULL };
	ctx c = { 0 };
	wmap_definition *d = calloc(1, sizeof(*d));
	int rc = 0;

	*out = NULL;
	if (!d)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	c.def = d;
	c.positions = positions;
	c.doc = doc_index;
	d->origin = origin;
	d->source = strdup(source ? source : "<definition>");
	d->raw = json_incref((json_t *)doc);
	if (!d->source) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto out;
	}
	if (!json_is_object(doc)) {
		wmap__def_finding(&c, NULL, "a definition must be a mapping");
		goto done;
	}
	wmap__def_check_keys(&c, doc, "", top_keys);
	const char *api = json_string_value(json_object_get(doc, "apiVersion"));
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	if (api && kind && strcmp(api, "run.ai/v1alpha1") == 0 && strcmp(kind, "Karta") == 0) {
		d->legacy = 0;
	} else if (api && kind && strcmp(api, "optimization.nvidia.com/v1alpha1") == 0 &&
		   strcmp(kind, "ResourceInterface") == 0) {
		d->legacy = 1;
	} else {
		wmap__def_finding(&c, NULL, "not a Karta definition: apiVersion must be run.ai/v1alpha1 and kind Karta (got %s %s)",
				  api ? api : "<none>", kind ? kind : "<none>");
		goto done;
	}
	const json_t *md = wmap__def_get_object(&c, doc, "", "metadata");
	d->name = md ? wmap__def_get_string(&c, md, "/metadata", "name", 0) : NULL;
	const json_t *spec = wmap__def_get_object(&c, doc, "", "spec");
	if (!spec) {
		wmap__def_finding(&c, NULL, "spec is required");
		goto done;
	}
	wmap__def_check_keys(&c, spec, "/spec", spec_keys);
	const json_t *sd = wmap__def_get_object(&c, spec, "/spec", "structureDefinition");
	if (!sd) {
		wmap__def_finding(&c, "/spec", "structureDefinition is required");
		goto done;
	}
	wmap__def_check_keys(&c, sd, "/spec/structureDefinition", sd_keys);
	const json_t *root = wmap__def_get_object(&c, sd, "/spec/structureDefinition", "rootComponent");
	if (!root) {
		wmap__def_finding(&c, "/spec/structureDefinition", "rootComponent is required");
		goto done;
	}
	const json_t *children = wmap__def_get_array(&c, sd, "/spec/structureDefinition", "childComponents");
	size_t nchild = children ? json_array_size(children) : 0;
	d->components = calloc(nchild + 1, sizeof(*d->components));
	if (!d->components) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto out;
	}
	d->n_components = nchild + 1;
	load_component(&c, &d->components[0], root, "/spec/structureDefinition/rootComponent");
	for (size_t i = 0; i < nchild; i++) {
		char ptr[96];
		snprintf(ptr, sizeof(ptr), "/spec/structureDefinition/childComponents/%zu", i);
		load_component(&c, &d->components[i + 1], json_array_get(children, i), ptr);
	}
	const json_t *extra = wmap__def_get_array(&c, sd, "/spec/structureDefinition", "additionalChildKinds");
	if (extra && json_array_size(extra)) {
		d->additional_kinds = calloc(json_array_size(extra), sizeof(*d->additional_kinds));
		if (!d->additional_kinds) {
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < json_array_size(extra); i++) {
			char ptr[96];
			json_t *holder = json_object();
			snprintf(ptr, sizeof(ptr), "/spec/structureDefinition/additionalChildKinds/%zu", i);
			if (!holder) {
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				goto out;
			}
			json_object_set(holder, "k", json_array_get(extra, i));
			wmap_gvk *g = get_gvk(&c, holder, ptr, "k");
			json_decref(holder);
			if (g) {
				for (size_t j = 0; j < d->n_additional_kinds; j++)
					if (g->kind && d->additional_kinds[j].kind &&
					    strcmp(g->kind, d->additional_kinds[j].kind) == 0)
						wmap__def_finding(&c, ptr, "additionalChildKinds lists kind %s twice", g->kind);
				d->additional_kinds[d->n_additional_kinds++] = *g;
				free(g);
			}
		}
	}
	load_gang(&c, spec, "/spec");
	validate(&c, "/spec/structureDefinition");
	if (!d->name && !(d->name = default_name(d->components[0].kind)))
		c.oom = 1;
done:
	if (!d->name && !(d->name = strdup("")))
		c.oom = 1;
	if (c.oom)
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	else if (c.n_findings)
		rc = wmap_error_set(err, WMAP_EINVALID, "%s", c.findings);
out:
	if (rc)
		wmap_definition_free(d);
	else
		*out = d;
	return rc;
}

/* libjq's compile message, without its command-line dressing: "syntax error, unexpected
 * '|'" out of "jq: jq: error: syntax error, unexpected '|' (Unix shell quoting issues?) at
 * <top-level>, line 2:\n<program>; jq: 1 compile error". Rewrites msg in place. */
static const char *jq_message(char *msg)
{
	char *s = msg, *cut;
	while (strncmp(s, "jq: ", 4) == 0)
		s += 4;
	if (strncmp(s, "error: ", 7) == 0)
		s += 7;
	if ((cut = strstr(s, " (Unix shell quoting issues?)")) || (cut = strstr(s, " at <top-level>")) ||
	    (cut = strchr(s, '\n')) || (cut = strchr(s, ';')))
		*cut = '\0';
	return s;
}

int wmap_definition_check_jq(const wmap_definition *def, wmap_error *err)
{
	char msg[1024];
	char *all = NULL;

	if (def->n_jq == 0)
		return 0;
	if (wmap__jq_check_all(def->jq_texts, def->n_jq, msg, sizeof(msg)) == 0)
		return 0;
	/* Something is broken: compile each expression alone to name the broken ones. */
	wmap_error_clear(err);
	size_t len = 0;
	int n = 0;
	for (size_t i = 0; i < def->n_exprs; i++) {
		const wmap_expr *e = def->exprs[i];
		if (e->path || e->jn || wmap__jq_check(e->text, msg, sizeof(msg)) == 0)
			continue;
		char line[1600];
		snprintf(line, sizeof(line), "%s%s: jq expression \"%.200s\" does not compile: %.900s",
			 n ? "\n" : "", e->place, e->text, jq_message(msg));
		size_t l = strlen(line);
		char *na = realloc(all, len + l + 1);
		if (!na) {
			free(all);
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
		all = na;
		memcpy(all + len, line, l + 1);
		len += l;
		n++;
	}
	int rc = wmap_error_set(err, WMAP_EJQ, "%s", all ? all : msg);
	free(all);
	return rc;
}

void wmap_definition_free(wmap_definition *d)
{
	if (!d)
		return;
	free(d->name);
	free(d->source);
	json_decref(d->raw);
	for (size_t i = 0; i < d->n_components; i++)
		component_free(&d->components[i]);
	free(d->components);
	for (size_t i = 0; i < d->n_additional_kinds; i++)
		gvk_free(&d->additional_kinds[i]);
	free(d->additional_kinds);
	for (size_t g = 0; g < d->n_pod_groups; g++) {
		wmap_pod_group *pg = &d->pod_groups[g];
		for (size_t m = 0; m < pg->n_members; m++) {
			free(pg->members[m].component);
			free(pg->members[m].group_by);
			free(pg->members[m].filters);
		}
		free(pg->members);
		free(pg->name);
	}
	free(d->pod_groups);
	json_decref(d->pod_group_v2);
	for (size_t i = 0; i < d->n_exprs; i++)
		wmap__def_expr_free(d->exprs[i]);
	free(d->exprs);
	for (size_t i = 0; i < d->n_jq; i++)
		free(d->jq_texts[i]);
	free(d->jq_texts);
	free(d);
}
