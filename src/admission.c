/* wmap: admission logic (see wmap/admission.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wmap/apiversion.h"
#include "wmap/arena.h"
#include "wmap/base64.h"
#include "wmap/admission.h"
#include "admission_int.h"
#include "audit_int.h"
#include "wmap/json_text.h"
#include "wmap/patch.h"
#include "wmap/pod_target.h"
#include "wmap/quantity.h"
#include "wmap/workload.h"

#define MAX_WARNINGS WMAP__MAX_WARNINGS
#define WARNING_MAX WMAP__WARNING_MAX

/* wmap's own keys (architecture.md, "Label and annotation keys"). */
#define KEY_KIND "wmap.io/workload-kind"
#define KEY_NAME "wmap.io/workload-name"
#define KEY_COMPONENT "wmap.io/component"
#define KEY_INSTANCE "wmap.io/instance"
#define KEY_GROUP "wmap.io/pod-group"
#define KEY_GROUP_MIN "wmap.io/pod-group-min-member"

/* ---- small helpers ----------------------------------------------------------------- */

/* Appends n bytes of s at buf[*at] as far as they fit before buf's last byte. */
static void append_cut(char *buf, size_t len, size_t *at, const char *s, size_t n)
{
	size_t room = len - 1 - *at;
	if (n > room)
		n = room;
	memcpy(buf + *at, s, n);
	*at += n;
}

/* Every review asks for its object's kind (and the mutation again): one pass over the
 * object's few top-level members rather than two hashed look-ups, and the text put
 * together by hand (as snprintf "%s.%.*s" would, cut at len - 1 bytes). */
void wmap_admission_kind(char *buf, size_t len, const json_t *object)
{
	const char *api = NULL, *kind = NULL, *k;
	size_t kn, at = 0;
	json_t *v;
	if (!len)
		return;
	json_object_keylen_foreach((json_t *)object, k, kn, v) {
		if (kn == 4 && !memcmp(k, "kind", 4))
			kind = json_string_value(v);
		else if (kn == 10 && !memcmp(k, "apiVersion", 10))
			api = json_string_value(v);
	}
	wmap_api_version av;
	wmap_api_version_split(&av, api);
	if (kind)
		append_cut(buf, len, &at, kind, strlen(kind));
	if (av.group_len) {
		append_cut(buf, len, &at, ".", 1);
		append_cut(buf, len, &at, av.group, av.group_len);
	}
	buf[at] = '\0';
}

/* wmap__admission_warn and _checked: -1 when memory runs out. */
static int vwarn(json_t *warnings, const char *fmt, va_list ap)
{
	char buf[WARNING_MAX + 1];
	if (!warnings || json_array_size(warnings) >= MAX_WARNINGS)
		return 0;
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n >= (int)sizeof(buf))
		memcpy(buf + sizeof(buf) - 4, "...", 4);
	/* Messages may carry object text: keep them one printable line. */
	for (char *s = buf; *s; s++) {
		if ((unsigned char)*s < 32)
			*s = ' ';
	}
	size_t i;
	json_t *e;
	json_array_foreach(warnings, i, e) {
		if (strcmp(json_string_value(e), buf) == 0)
			return 0;
	}
	return json_array_append_new(warnings, json_string(buf)) ? -1 : 0;
}

void wmap__admission_warn(json_t *warnings, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)vwarn(warnings, fmt, ap);
	va_end(ap);
}

int wmap__admission_warn_checked(json_t *warnings, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vwarn(warnings, fmt, ap);
	va_end(ap);
	return rc;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int too_deep(const json_t *v, int left)
{
	if (left < 0)
		return 1;
	if (json_is_object(v)) {
		const char *k;
		json_t *c;
		json_object_foreach((json_t *)v, k, c) {
			if ((json_is_object(c) || json_is_array(c)) && too_deep(c, left - 1))
				return 1;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *c;
		json_array_foreach(v, i, c) {
			if ((json_is_object(c) || json_is_array(c)) && too_deep(c, left - 1))
				return 1;
		}
	}
	return 0;
}

/* ---- where a pod template can be written ------------------------------------------- */

typedef wmap_pod_target target; /* mark: writes the identity there (mark_owners) */

/* wmap_pod_target_init, with its warning added to warnings. */
static int target_init(target *t, const wmap_workload *w, size_t k, size_t i, json_t *warnings)
{
	const char *why;
	int rc = wmap_pod_target_init(t, &why, w, k, i);

	if (why && rc >= 0)
		wmap__admission_warn(warnings, "component %s: %s", t->component, why);
	return rc;
}

/* ---- writing ----------------------------------------------------------------------- */

typedef struct writer {
	wmap_patch *patch;
	json_t *warnings;
	wmap_audit_result *check;  /* validation: record what would change instead */
	const wmap_policy *policy; /* the policy being checked */
	const json_t *object;      /* the object being checked, for the values found */
	int failed;                /* a write failed (not an object where one was expected) */
	wmap_error *err;
} writer;

static void out_of_memory(writer *wr);

/* The value at the pointer ptr (then its member key, when key) as text: a string as it
 * is, anything else as compact JSON; NULL when absent. *oom set when a copy failed. */
static char *found_text(const json_t *object, const char *ptr, const char *key, int *oom)
{
	const json_t *v = ptr ? wmap_pointer_lookup(object, ptr) : NULL;
	char *txt;
	if (v && key)
		v = json_object_get(v, key);
	if (!v)
		return NULL;
	txt = json_is_string(v) ? strdup(json_string_value(v)) : wmap_json_text(v, NULL);
	*oom |= txt == NULL;
	return txt;
}

/* One violation of wr->policy at t: field (for scripts), what (for people: "label team"),
 * want, and the value found at ptr/key. */
static void violation(writer *wr, const target *t, const char *field, const char *what,
		      const char *want, const char *ptr, const char *key)
{
	wmap_audit_result *r = wr->check;
	const wmap_policy *p = wr->policy;
	char msg[800], found[300];
	int oom = 0;
	/* override and require want the policy's value, default only a value */
	int exact = p->mode != WMAP_POLICY_DEFAULT;
	wmap_violation *v = wmap__audit_push(r); /* counted, so that the result frees it */
	if (!v) {
		out_of_memory(wr);
		return;
	}
	v->have = found_text(wr->object, ptr, key, &oom);
	if (exact && v->have)
		snprintf(found, sizeof(found), " (found \"%.250s\")", v->have);
	else if (exact && strcmp(field, "tolerations") != 0)
		snprintf(found, sizeof(found), " (not set)");
	else
		found[0] = '\0';
	if (strcmp(field, "tolerations") == 0)
		snprintf(msg, sizeof(msg), "%s must include %s", what, want);
	else if (exact)
		snprintf(msg, sizeof(msg), "%s must be \"%s\"%s", what, want, found);
	else
		snprintf(msg, sizeof(msg), "%s must be set (default \"%s\")", what, want);
	char *line = NULL;
	size_t need = strlen(p->name) + strlen(t->component) + strlen(t->instance) + strlen(msg) + 64;
	if ((line = malloc(need))) {
		if (t->instance[0])
			snprintf(line, need, "policy %s: component %s (instance %s): %s", p->name,
				 t->component, t->instance, msg);
		else
			snprintf(line, need, "policy %s: component %s: %s", p->name, t->component,
				 msg);
	}
	v->actions = p->actions;
	v->policy = strdup(p->name);
	v->component = strdup(t->component);
	v->instance = t->instance[0] ? strdup(t->instance) : NULL;
	v->field = strdup(field);
	v->want = strdup(want);
	v->message = line;
	if (oom || !v->policy || !v->component || (t->instance[0] && !v->instance) ||
	    !v->field || !v->want || !v->message)
		out_of_memory(wr);
}

static void out_of_memory(writer *wr)
{
	wr->failed = 1;
	wmap_error_set(wr->err, WMAP_ENOMEM, "out of memory");
}

/* A builder call failed: out of memory fails the whole review (open), anything else only
 * skips that write with a warning. */
static void write_failed(writer *wr, const target *t, const wmap_error *e)
{
	if (e->code == WMAP_ENOMEM) {
		wr->failed = 1;
		wmap_error_set(wr->err, e->code, "%s", e->message);
	} else {
		wmap__admission_warn(wr->warnings, "component %s: %s; left unchanged", t->component, e->message);
	}
}

/* p with its prefix from (a pointer) replaced by to; p itself when it does not start so. */
static int rebase(char **p, const char *from, const char *to)
{
	size_t n = strlen(from);
	if (!*p || strncmp(*p, from, n) != 0 || ((*p)[n] != '\0' && (*p)[n] != '/'))
		return 0;
	size_t rest = strlen(*p + n), tl = strlen(to);
	char *np = wmap_arena_alloc(tl + rest + 1); /* a target's pointer (wmap/pod_target.h) */
	if (!np)
		return -1;
	memcpy(np, to, tl);
	memcpy(np + tl, *p + n, rest + 1);
	wmap_arena_release(*p);
	*p = np;
	return 0;
}

/* Makes the list entry t's labels live in when it is not there yet (once per target).
 * The entry goes at the end of its list; if earlier writes of this patch took that index,
 * t's pointers follow it to the one it got. */
static void ensure_entry(writer *wr, target *t)
{
	if (!t->create_at || wr->check)
		return;
	t->labels_from = NULL; /* not at the pointer the entry gets */
	char *got = NULL;
	wmap_error e;
	json_t *v = json_deep_copy(t->create);
	int rc = wmap_patch_create(wr->patch, t->create_at, v, &got, &e);
	if (rc == 0 && (rebase(&t->labels, t->create_at, got) || rebase(&t->annotations, t->create_at, got))) {
		rc = WMAP_ENOMEM;
		wmap_error_set(&e, rc, "out of memory");
	}
	free(got);
	if (rc) {
		write_failed(wr, t, &e);
		wmap_arena_release(t->labels);
		wmap_arena_release(t->annotations);
		t->labels = t->annotations = NULL;
	}
	t->labels_len = t->labels ? strlen(t->labels) : 0;
	t->create_at = NULL;
}

/* Sets key in the map at ptr. Returns 1 when it changed something. */
static int put(writer *wr, const target *t, const char *ptr, const char *key, json_t *value,
	       wmap_patch_mode mode)
{
	int changed = 0;
	if (!ptr) {
		json_decref(value);
		return 0;
	}
	wmap_error e;
	if (wmap_patch_set(wr->patch, ptr, key, value, mode, &changed, &e) != 0) {
		write_failed(wr, t, &e);
		return 0;
	}
	return changed;
}

/* put with a string value: the builder keeps it as text (no jansson string per label). */
static int put_str(writer *wr, const target *t, const char *ptr, const char *key,
		   const char *value, wmap_patch_mode mode)
{
	int changed = 0;
	if (!ptr)
		return 0;
	wmap_error e;
	if (wmap_patch_set_str(wr->patch, ptr, key, value, mode, &changed, &e) != 0) {
		write_failed(wr, t, &e);
		return 0;
	}
	return changed;
}

static int put_field(writer *wr, const target *t, const char *field_ptr, const char *value,
		     wmap_patch_mode mode)
{
	int changed = 0;
	if (!field_ptr)
		return 0;
	wmap_error e;
	if (wmap_patch_set_str_at(wr->patch, field_ptr, value, mode, &changed, &e) != 0) {
		write_failed(wr, t, &e);
		return 0;
	}
	return changed;
}

/* The label values that are the same for every template of a workload or of a component,
 * made once (wmap_label_value) rather than once per instance. */
typedef struct identity {
	char kind[64], name[64], component[64];
	size_t kind_len, name_len, component_len;
	int has_name;
	const char *component_of; /* the component name component[] was made from */
} identity;

/* The identity labels, set in one builder call (one walk to the template's labels, and
 * one `add` holding them all when its metadata or labels are missing). */
static void stamp_identity(writer *wr, const target *t, identity *id)
{
	char v[64];
	wmap_patch_str m[4];
	size_t n = 0;
	if (!t->labels)
		return;
	m[n++] = (wmap_patch_str){ KEY_KIND, id->kind, WMAP_PATCH_OVERRIDE, 0, 1,
				   sizeof(KEY_KIND) - 1, id->kind_len, 1 };
	if (id->has_name)
		m[n++] = (wmap_patch_str){ KEY_NAME, id->name, WMAP_PATCH_OVERRIDE, 0, 1,
					   sizeof(KEY_NAME) - 1, id->name_len, 1 };
	if (id->component_of != t->component) {
		id->component_len = wmap_label_value(id->component, sizeof(id->component),
						     t->component);
		id->component_of = t->component;
	}
	m[n++] = (wmap_patch_str){ KEY_COMPONENT, id->component, WMAP_PATCH_OVERRIDE, 0, 1,
				   sizeof(KEY_COMPONENT) - 1, id->component_len, 1 };
	if (t->multi && t->instance[0]) {
		size_t vn = wmap_label_value(v, sizeof(v), t->instance);
		m[n++] = (wmap_patch_str){ KEY_INSTANCE, v, WMAP_PATCH_OVERRIDE, 0, 1,
					   sizeof(KEY_INSTANCE) - 1, vn, 1 };
	}
	wmap_error e;
	if (wmap_patch_set_strs_in(wr->patch, t->labels, t->labels_len, t->labels_from, t->labels_from_len,
				   m, n, &e) != 0)
		write_failed(wr, t, &e);
}

/* YuniKorn's task-groups annotation: every pod template of the workload as a task group. */
static json_t *yunikorn_task_groups(const wmap_gang_plan *plan)
{
	/* Every failed insert is counted: an annotation missing a field under memory pressure
	 * would be sent as if complete. */
	json_t *arr = json_array();
	int bad = !arr;
	for (size_t m = 0; !bad && m < plan->n_members; m++) {
		const wmap_gang_member *mem = &plan->members[m];
		char cpu[32], mem_s[32];
		json_t *res = json_object();
		wmap_quantity_format_cpu(cpu, sizeof(cpu), mem->per_pod.cpu_milli);
		wmap_quantity_format_bytes(mem_s, sizeof(mem_s), mem->per_pod.memory, mem->per_pod.memory_family);
		if (mem->per_pod.cpu_milli)
			bad |= json_object_set_new(res, "cpu", json_string(cpu)) != 0;
		if (mem->per_pod.memory)
			bad |= json_object_set_new(res, "memory", json_string(mem_s)) != 0;
		if (mem->per_pod.gpu) {
			char g[32];
			snprintf(g, sizeof(g), "%" PRId64, mem->per_pod.gpu);
			bad |= json_object_set_new(res, "nvidia.com/gpu", json_string(g)) != 0;
		}
		json_t *tg = res ? json_pack("{s:s, s:I, s:O}", "name", mem->task_group,
					     "minMember", (json_int_t)mem->task_min,
					     "minResource", res)
				 : NULL;
		json_decref(res);
		bad |= !tg || json_array_append_new(arr, tg) != 0;
	}
	if (bad) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

typedef struct gang_ctx {
	wmap_gang_scheduler scheduler;
	int external; /* KAI external mode */
	const wmap_gang_row *row;
	const char *queue;
	const char *profile; /* coscheduling's schedulerName */
	const wmap_gang_plan *plan;
	const char *name;
	const char *ns;
	int kueue_pods;    /* Kueue: a kind without an integration, gang-admitted as plain pods */
	int hard;          /* YuniKorn gangSchedulingStyle=Hard */
	char *task_groups; /* YuniKorn annotation text, computed once */
} gang_ctx;

/* Members of the plan's group gi. */
static size_t group_size(const wmap_gang_plan *plan, int gi)
{
	size_t n = 0;
	for (size_t m = 0; m < plan->n_members; m++)
		n += plan->members[m].group == gi;
	return n;
}

/* A row's key on the template (labels or annotations; the root's labels are written once by
 * write_targets). */
static void put_key(writer *wr, const target *t, const wmap_gang_key *k, const char *value)
{
	if (!k->key || !value)
		return;
	if (k->where == WMAP_GANG_AT_LABEL)
		put_str(wr, t, t->labels, k->key, value, WMAP_PATCH_DEFAULT);
	else if (k->where == WMAP_GANG_AT_ANNOTATION)
		put_str(wr, t, t->annotations, k->key, value, WMAP_PATCH_DEFAULT);
}

/* YuniKorn's application ID: unique in the cluster (YuniKorn keys applications by ID
 * alone), the same on every pod of the instance: "<namespace>-<name>", shortened with the
 * stable hash when long. */
static void yunikorn_app_id(char *v, size_t len, const char *ns, const char *name)
{
	char raw[600];
	snprintf(raw, sizeof(raw), "%s%s%s", ns && *ns ? ns : "", ns && *ns ? "-" : "", name);
	wmap_label_value(v, len, raw);
}

static void stamp_gang(writer *wr, const target *t, const gang_ctx *g)
{
	const wmap_gang_row *row = g->row;
	const wmap_gang_member *mem = wmap_gang_plan_member(g->plan, t->node, t->instance_index);
	const wmap_gang_group *grp = (mem && mem->group >= 0) ? &g->plan->groups[mem->group]
							      : NULL;
	const char *sched = row->id == WMAP_GANG_COSCHEDULING && g->profile ? g->profile
									    : row->scheduler_name;
	char v[64];
	if (sched)
		put_field(wr, t, t->scheduler, sched, WMAP_PATCH_DEFAULT);
	if (grp) {
		put_key(wr, t, &row->group, grp->name);
		put_key(wr, t, &row->opt_out, row->opt_out_value);
		/* A role key where the group object has per-role minimums (several members). */
		if (row->task_minimums && group_size(g->plan, mem->group) > 1)
			put_key(wr, t, &row->task, mem->task_group);
	}
	put_key(wr, t, &row->queue, g->queue);
	if (row->id == WMAP_GANG_YUNIKORN) {
		if (g->name) {
			yunikorn_app_id(v, sizeof(v), g->ns, g->name);
			put_str(wr, t, t->labels, "yunikorn.apache.org/app-id", v,
				WMAP_PATCH_DEFAULT);
		}
		if (grp && mem) {
			put_key(wr, t, &row->task, mem->task_group);
			if (g->task_groups)
				put_str(wr, t, t->annotations, "yunikorn.apache.org/task-groups",
					g->task_groups, WMAP_PATCH_DEFAULT);
			put_str(wr, t, t->annotations, "yunikorn.apache.org/schedulingPolicyParameters",
				g->hard ? "gangSchedulingStyle=Hard" : "gangSchedulingStyle=Soft",
				WMAP_PATCH_DEFAULT);
		}
	}
	if (row->id == WMAP_GANG_KUEUE && g->kueue_pods && grp && g->queue) {
		char total[32];
		snprintf(total, sizeof(total), "%" PRId64, grp->pods);
		put_str(wr, t, t->labels, "kueue.x-k8s.io/queue-name", g->queue, WMAP_PATCH_DEFAULT);
		put_str(wr, t, t->labels, "kueue.x-k8s.io/pod-group-name", grp->name, WMAP_PATCH_DEFAULT);
		put_str(wr, t, t->annotations, "kueue.x-k8s.io/pod-group-total-count", total,
			WMAP_PATCH_DEFAULT);
	}
	if (grp) {
		char min[32];
		snprintf(min, sizeof(min), "%" PRId64, grp->min_member);
		put_str(wr, t, t->annotations, KEY_GROUP, grp->name, WMAP_PATCH_OVERRIDE);
		put_str(wr, t, t->annotations, KEY_GROUP_MIN, min, WMAP_PATCH_OVERRIDE);
	}
}

/* Sets (or, in check mode, checks) key of the map at ptr to the string value v;
 * field_name is "labels", "annotations" or "nodeSelector", what the words for people. */
static void apply_map_entry(writer *wr, const target *t, const char *ptr, const char *map,
			    const char *what, const char *key, json_t *v, wmap_patch_mode mode)
{
	if (!put(wr, t, ptr, key, json_incref(v), mode) || !wr->check)
		return;
	char field[300], words[300];
	snprintf(field, sizeof(field), "%s[%s]", map, key);
	snprintf(words, sizeof(words), "%s %s", what, key);
	violation(wr, t, field, words, json_string_value(v), ptr, key);
}

/* The same for a single field at its pointer. */
static void apply_field(writer *wr, const target *t, const char *ptr, const char *name,
			const char *value, wmap_patch_mode mode)
{
	if (put_field(wr, t, ptr, value, mode) && wr->check)
		violation(wr, t, name, name, value, ptr, NULL);
}

static void apply_tolerations(writer *wr, const target *t, const wmap_policy *p)
{
	/* Lists are sets: append what is missing, never replace (override acts alike). */
	char *tp = wmap_pointer_join(t->spec, "tolerations");
	size_t i;
	json_t *v;
	if (!tp) {
		out_of_memory(wr);
		return;
	}
	json_array_foreach(p->tolerations, i, v) {
		int changed = 0;
		wmap_error e;
		/* A copy: the policy set is shared by every thread, and the builder may later
		 * append into a list it created around this value. */
		if (wmap_patch_append_unique(wr->patch, tp, json_deep_copy(v), &changed, &e)) {
			write_failed(wr, t, &e);
		} else if (changed && wr->check) {
			char *txt = wmap_json_text(v, NULL);
			if (!txt)
				out_of_memory(wr);
			else
				violation(wr, t, "tolerations", "tolerations", txt, NULL, NULL);
			free(txt);
		}
	}
	free(tp);
}

/* Writes (or, when wr->check, checks) one policy's settings on one template. */
static void apply_policy(writer *wr, const target *t, const wmap_policy *p)
{
	/* require is checked as override is (the policy's value, exactly); it never writes */
	wmap_patch_mode mode = p->mode == WMAP_POLICY_DEFAULT ? WMAP_PATCH_DEFAULT
							      : WMAP_PATCH_OVERRIDE;
	const char *k;
	json_t *v;
	json_object_foreach(p->labels, k, v)
		apply_map_entry(wr, t, t->labels, "labels", "label", k, v, mode);
	json_object_foreach(p->annotations, k, v)
		apply_map_entry(wr, t, t->annotations, "annotations", "annotation", k, v, mode);
	if (p->priority_class_name)
		apply_field(wr, t, t->priority, "priorityClassName", p->priority_class_name, mode);
	if (p->scheduler_name)
		apply_field(wr, t, t->scheduler, "schedulerName", p->scheduler_name, mode);
	if ((p->runtime_class_name || p->node_selector || p->tolerations) && !t->spec) {
		wmap__admission_warn(wr->warnings, "component %s: no pod spec location; policy %s's "
						   "runtimeClassName, nodeSelector and tolerations not applied",
				     t->component, p->name);
		return;
	}
	if (p->runtime_class_name &&
	    put_str(wr, t, t->spec, "runtimeClassName", p->runtime_class_name, mode) && wr->check)
		violation(wr, t, "runtimeClassName", "runtimeClassName", p->runtime_class_name,
			  t->spec, "runtimeClassName");
	if (p->node_selector) {
		char *ns = wmap_pointer_join(t->spec, "nodeSelector");
		if (!ns)
			out_of_memory(wr);
		json_object_foreach(p->node_selector, k, v) {
			if (ns)
				apply_map_entry(wr, t, ns, "nodeSelector", "nodeSelector", k, v,
						mode);
		}
		free(ns);
	}
	if (p->tolerations)
		apply_tolerations(wr, t, p);
}

/* Every writable pod template of w, in workload order. */
static int collect_targets(target **out, size_t *n_out, const wmap_workload *w,
			   json_t *warnings)
{
	target *v = NULL;
	size_t n = 0, cap = 0;
	/* one allocation, for every instance with a pod template */
	for (size_t k = 0; k < w->n_nodes; k++) {
		for (size_t i = 0; i < w->nodes[k].n_instances; i++)
			cap += w->nodes[k].instances[i].has_pod != 0;
	}
	if (cap && !(v = malloc(cap * sizeof(*v))))
		return WMAP_ENOMEM;
	for (size_t k = 0; k < w->n_nodes; k++) {
		for (size_t i = 0; i < w->nodes[k].n_instances; i++) {
			if (!w->nodes[k].instances[i].has_pod)
				continue;
			target *t = &v[n]; /* made in place: kept when it has somewhere to write */
			int ok = target_init(t, w, k, i, warnings);
			if (ok == 0) {
				wmap_pod_target_clear(t);
				continue;
			}
			if (ok < 0) {
				for (size_t j = 0; j <= n; j++)
					wmap_pod_target_clear(&v[j]);
				free(v);
				return WMAP_ENOMEM;
			}
			n++;
		}
	}
	*out = v;
	*n_out = n;
	return 0;
}

static void targets_free(target *v, size_t n)
{
	for (size_t j = 0; j < n; j++)
		wmap_pod_target_clear(&v[j]);
	free(v);
}

/* A location's hash (FNV-1a, eight bytes at a time) for mark_owners. */
static uint64_t loc_hash(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037u, w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3u;
		h ^= h >> 32;
	}
	for (; n; s++, n--)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return h ^ (h >> 29);
}

typedef struct located {
	uint64_t hash;
	size_t pick; /* 1 + the template that writes there so far, 0: a free slot */
	int live;    /* pick has replicas */
} located;

/* Where template t writes its identity (NULL: nowhere shared). */
static const char *location_of(const target *t)
{
	return t->labels ? t->labels : t->annotations;
}

/* Some definitions describe alternatives at one location (NIMService's single-node
 * Deployment and multi-node leader both read .spec.labels). The identity written there
 * is the first such template with replicas, else the first: never one per template, which
 * would flip on every pass. One pass in workload order over a table of the locations, so a
 * 1000-group workload costs n lookups, not n squared comparisons (nor a sort). */
static int mark_owners(const wmap_workload *w, target *v, size_t n)
{
	size_t cap = 16;
	while (cap < n + n / 2) /* at most two thirds full */
		cap *= 2;
	located *l = n ? wmap_arena_alloc(cap * sizeof(*l)) : NULL; /* review memory */
	if (n && !l)
		return WMAP_ENOMEM;
	if (n)
		memset(l, 0, cap * sizeof(*l));
	for (size_t j = 0; j < n; j++) {
		const char *loc = location_of(&v[j]);
		v[j].mark = loc == NULL;
		if (!loc)
			continue;
		uint64_t h = loc_hash(loc, v[j].labels ? v[j].labels_len : strlen(loc));
		located *e = &l[h & (cap - 1)];
		while (e->pick && !(e->hash == h && strcmp(location_of(&v[e->pick - 1]), loc) == 0))
			e = e + 1 == l + cap ? l : e + 1;
		int live = w->nodes[v[j].node].instances[v[j].instance_index].desired > 0;
		if (!e->pick)
			*e = (located){ h, j + 1, live };
		else if (!e->live && live)
			e->pick = j + 1, e->live = 1;
	}
	for (size_t i = 0; i < cap && n; i++) {
		if (l[i].pick)
			v[l[i].pick - 1].mark = 1;
	}
	wmap_arena_release(l);
	return 0;
}

/* ---- one object -------------------------------------------------------------------- */

typedef struct prepared {
	const wmap_definition *def;
	wmap_workload *w;
	char kind[128];
	const char *ns;
	json_t *labels;
	unsigned op;
} prepared;

/* Finds the definition and resolves object; negative when wmap cannot process it. */
static int prepare(prepared *pr, const char **reason, wmap_engine *eng,
		   const wmap_admission_config *cfg, json_t *object, unsigned resolve_flags,
		   wmap_error *err)
{
	/* A review read by wmap_admission_parse (cfg->cut set) is already held to
	 * WMAP_REVIEW_MAX_DEPTH levels, which leaves the object's containers at most 201 deep:
	 * no second walk over the whole object for that. Objects from elsewhere (mutate -f,
	 * audit) and a stricter cfg->max_depth are walked. */
	int depth = cfg->max_depth > 0 ? cfg->max_depth : WMAP_ADMISSION_MAX_DEPTH;
	if ((!cfg->cut || cfg->max_depth > 0) && too_deep(object, depth)) {
		*reason = "too-deep";
		return wmap_error_set(err, WMAP_ELIMIT, "object nested deeper than %d levels",
				      depth);
	}
	int rc = wmap_registry_find_object(&pr->def, wmap_engine_registry(eng), object, err);
	if (rc) {
		*reason = rc == WMAP_ENODEF ? "no-definition" : "evaluation";
		return rc;
	}
	/* Admission reads structure only: an object being created has no status to evaluate. */
	rc = wmap_workload_resolve_ex(&pr->w, eng, object, pr->def,
				      WMAP_RESOLVE_NO_STATUS | resolve_flags, err);
	if (rc) {
		*reason = rc == WMAP_ENOMEM ? "internal" : "evaluation";
		return rc;
	}
	if (cfg->deadline_ns && now_ns() > cfg->deadline_ns) {
		*reason = "budget";
		return wmap_error_set(err, WMAP_ELIMIT, "request time budget exceeded");
	}
	return 0;
}

/* Objects a controller creates (a JobSet's Jobs, a Deployment's ReplicaSets, every Pod of
 * those) are never mutated: their templates come from the owner, which was stamped when
 * it was created, and a second identity would overwrite the owner's (gatekeeper#2963). */
static int controller_owned(const json_t *object)
{
	return wmap_object_controller(object) != NULL;
}

static int policy_applies(const wmap_policy *p, const prepared *pr)
{
	return wmap_policy_matches(p, pr->kind, pr->ns, pr->labels, pr->op);
}

/* A policy the mutation applies: one that writes (require policies and limits only check). */
static int policy_writes_to(const wmap_policy *p, const prepared *pr)
{
	return wmap_policy_writes(p) && policy_applies(p, pr);
}

/* UPDATE is left alone unless a policy that writes asks for it (decision 5): no resolve at
 * all. */
static int mutation_wanted(const wmap_admission_config *cfg, const prepared *pr)
{
	int wanted = pr->op == WMAP_POLICY_OP_CREATE;
	for (size_t i = 0; !wanted && cfg->policies && i < cfg->policies->n; i++)
		wanted = policy_writes_to(&cfg->policies->policies[i], pr);
	return wanted;
}

/* Gang settings: the first matching policy that gives them wins over the flags. */
static void gang_settings(gang_ctx *g, const wmap_admission_config *cfg, const prepared *pr)
{
	int have_sched = 0, have_queue = 0;
	g->scheduler = cfg->scheduler;
	g->external = cfg->kai_external;
	g->queue = cfg->queue;
	g->profile = cfg->cosched_profile;
	for (size_t i = 0; cfg->policies && i < cfg->policies->n; i++) {
		const wmap_policy *p = &cfg->policies->policies[i];
		if (!policy_applies(p, pr))
			continue;
		if (p->has_gang && !have_sched) {
			g->scheduler = p->gang;
			g->external = p->gang == WMAP_GANG_KAI && p->gang_external;
			g->hard = p->gang == WMAP_GANG_YUNIKORN && p->gang_hard;
			have_sched = 1;
		}
		if (p->queue && !have_queue) {
			g->queue = p->queue;
			have_queue = 1;
		}
	}
	g->row = wmap_gang_row_of(g->scheduler, g->external);
}

/* On CREATE: the gang plan of g's scheduler into *plan (g->plan, and YuniKorn's task groups
 * text), and the notes about the object. Negative (*why set) when it cannot be built. */
static int plan_gang(gang_ctx *g, wmap_gang_plan **plan, const char **why, const wmap_workload *w,
		     const char *kind, json_t *warnings, wmap_error *err)
{
	int rc;
	if (!w->name)
		wmap__admission_warn(warnings, "%s has only generateName: no workload-name label and no "
					       "name-based gang hints",
				     kind);
	if (g->scheduler != WMAP_GANG_NONE) {
		if ((rc = wmap_gang_plan_build(plan, w, w->name, err))) {
			*why = "internal";
			return rc;
		}
		g->plan = *plan;
		for (size_t i = 0; i < (*plan)->n_notes; i++) {
			if (w->name)
				wmap__admission_warn(warnings, "gang: %s", (*plan)->notes[i]);
		}
		if (g->scheduler == WMAP_GANG_YUNIKORN) {
			json_t *tg = yunikorn_task_groups(*plan);
			g->task_groups = tg ? wmap_json_text(tg, NULL) : NULL;
			json_decref(tg);
			if (!g->task_groups) {
				*why = "internal";
				return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			}
		}
		if (g->scheduler == WMAP_GANG_NATIVE)
			wmap__admission_warn(warnings, "gang: the native Workload API needs Workload objects "
						       "(a side effect); only wmap.io annotations written");
		if (g->scheduler == WMAP_GANG_KUEUE && !g->queue)
			wmap__admission_warn(warnings, "gang: kueue selected but no queue given; no "
						       "queue-name label written");
	}
	for (size_t i = 0; i < w->n_warnings; i++)
		wmap__admission_warn(warnings, "%s", w->warnings[i]);
	return 0;
}

/* Every template: the identity and gang hints (CREATE, the template that owns its
 * location), then every matching policy; then the queue label schedulers read from the
 * workload itself. */
static void write_targets(writer *wr, target *targets, size_t n_targets, const prepared *pr,
			  const gang_ctx *g, const wmap_admission_config *cfg)
{
	const wmap_workload *w = pr->w;
	identity id = { .has_name = w->name != NULL };
	id.kind_len = wmap_label_value(id.kind, sizeof(id.kind), pr->kind);
	if (w->name)
		id.name_len = wmap_label_value(id.name, sizeof(id.name), w->name);
	if (pr->op == WMAP_POLICY_OP_CREATE) {
		/* the identity labels' ops, made room for at once: one per label into a labels
		 * map the template has, one `add` of the whole map (or metadata) otherwise */
		size_t n_ops = 0;
		for (size_t j = 0; j < n_targets; j++) {
			const target *t = &targets[j];
			if (t->mark && t->labels)
				n_ops += t->labels_from && t->labels_from_len == t->labels_len
						 ? 4
						 : 1;
		}
		wmap_patch_reserve(wr->patch, n_ops);
	}
	for (size_t j = 0; j < n_targets && !wr->failed; j++) {
		target *t = &targets[j];
		if (pr->op == WMAP_POLICY_OP_CREATE && t->mark) {
			ensure_entry(wr, t);
			stamp_identity(wr, t, &id);
			if (g->plan)
				stamp_gang(wr, t, g);
		}
		for (size_t p = 0; cfg->policies && p < cfg->policies->n; p++) {
			const wmap_policy *pol = &cfg->policies->policies[p];
			if (policy_writes_to(pol, pr) && wmap_policy_matches_component(pol, t->component)) {
				ensure_entry(wr, t);
				apply_policy(wr, t, pol);
			}
		}
	}
	if (pr->op == WMAP_POLICY_OP_CREATE && g->queue && !wr->failed) {
		const char *key = g->row->queue.where == WMAP_GANG_AT_ROOT_LABEL ? g->row->queue.key
										 : NULL;
		target top = { .component = w->definition->components[0].name, .instance = "" };
		if (key)
			put_str(wr, &top, "/metadata/labels", key, g->queue, WMAP_PATCH_DEFAULT);
	}
}

/* The mutation of object as a patch builder in *out (NULL when there is nothing to write),
 * its warnings appended to warnings. Negative when wmap cannot process the object (*reason says
 * why, see wmap_admission_info). */
int wmap__admission_mutate(wmap_patch **out, json_t *warnings, const char **reason,
			   wmap_engine *eng, const wmap_admission_config *cfg, json_t *object,
			   const char *operation, const char *ns, wmap_error *err)
{
	prepared pr = { 0 };
	wmap_patch *pb = NULL;
	wmap_gang_plan *plan = NULL;
	gang_ctx g = { 0 };
	target *targets = NULL;
	size_t n_targets = 0;
	int rc = 0;
	const char *why = NULL;
	*out = NULL;
	*reason = NULL;
	json_t *meta = json_object_get(object, "metadata");
	pr.op = wmap_policy_operation(operation);
	pr.ns = ns && *ns ? ns : json_string_value(json_object_get(meta, "namespace"));
	pr.labels = json_object_get(meta, "labels");
	wmap_admission_kind(pr.kind, sizeof(pr.kind), object);
	if (!pr.op || !json_is_object(object))
		return 0; /* DELETE, CONNECT: nothing to write */
	if (controller_owned(object))
		return 0; /* stamped through its owner's template already */
	if (!mutation_wanted(cfg, &pr))
		return 0;
	gang_settings(&g, cfg, &pr);
	/* Only YuniKorn's task groups carry per-pod resources (minResource). */
	int need_resources = pr.op == WMAP_POLICY_OP_CREATE && g.scheduler == WMAP_GANG_YUNIKORN;
	if ((rc = prepare(&pr, &why, eng, cfg, object,
			  need_resources ? 0 : WMAP_RESOLVE_NO_RESOURCES, err)))
		goto done;
	if ((rc = wmap_patch_new(&pb, object, err))) {
		why = "internal";
		goto done;
	}
	writer wr = { pb, warnings, NULL, NULL, NULL, 0, err };
	g.name = pr.w->name;
	g.ns = pr.ns;
	{
		const wmap_gvk *root = pr.w->definition->components[0].kind;
		g.kueue_pods = root && !wmap_gang_kueue_native(root->group, root->kind);
	}
	if (pr.op == WMAP_POLICY_OP_CREATE &&
	    (rc = plan_gang(&g, &plan, &why, pr.w, pr.kind, warnings, err)))
		goto done;
	if ((rc = collect_targets(&targets, &n_targets, pr.w, warnings)) ||
	    (rc = mark_owners(pr.w, targets, n_targets))) {
		why = "internal";
		wmap_error_set(err, rc, "out of memory");
		goto done;
	}
	write_targets(&wr, targets, n_targets, &pr, &g, cfg);
	if (wr.failed) {
		rc = WMAP_ENOMEM;
		why = "internal";
		goto done;
	}
	if (cfg->deadline_ns && now_ns() > cfg->deadline_ns) {
		why = "budget";
		rc = wmap_error_set(err, WMAP_ELIMIT, "request time budget exceeded");
		goto done;
	}
	*out = pb;
	pb = NULL;
done:
	*reason = why;
	free(g.task_groups);
	targets_free(targets, n_targets);
	wmap_gang_plan_free(plan);
	wmap_patch_free(pb);
	wmap_workload_free(pr.w);
	return rc;
}

int wmap_admission_mutate(json_t **patch, json_t **warnings, const char **reason,
			  wmap_engine *eng, const wmap_admission_config *cfg, json_t *object,
			  const char *operation, const char *ns, wmap_error *err)
{
	wmap_patch *pb = NULL;
	const char *why = NULL;
	*warnings = json_array();
	int rc = *warnings ? wmap__admission_mutate(&pb, *warnings, &why, eng, cfg, object, operation, ns, err)
			   : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	*patch = pb ? wmap_patch_take_ops(pb) : json_array();
	if (!*patch && rc == 0) {
		why = "internal";
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	if (rc && *patch)
		json_array_clear(*patch);
	wmap_patch_free(pb); /* the taken array keeps what it needs */
	if (reason)
		*reason = why;
	return rc;
}

/* The policies of cfg with actions that apply to pr's object, as names into res. */
static int applying_policies(wmap_audit_result *res, const wmap_admission_config *cfg,
			     const prepared *pr, wmap_error *err)
{
	for (size_t i = 0; cfg->policies && i < cfg->policies->n; i++) {
		const wmap_policy *p = &cfg->policies->policies[i];
		if (!wmap_policy_needs_validation(p) || !policy_applies(p, pr))
			continue;
		char **nv = realloc(res->policies, (res->n_policies + 1) * sizeof(*nv));
		if (!nv)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		res->policies = nv;
		if (!(nv[res->n_policies] = strdup(p->name)))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		res->n_policies++;
	}
	return 0;
}

/* Checks one policy on every template of pr's workload, into res. */
static int check_policy(wmap_audit_result *res, json_t *warnings, const prepared *pr,
			const wmap_policy *pol, const json_t *object, wmap_error *err)
{
	/* A fresh builder per policy: each is checked against the object alone. */
	wmap_patch *pb = NULL;
	int rc = wmap_patch_new(&pb, (json_t *)object, err);
	if (rc)
		return rc;
	writer wr = { pb, warnings, res, pol, object, 0, err };
	for (size_t k = 0; k < pr->w->n_nodes && !wr.failed; k++) {
		for (size_t i = 0; i < pr->w->nodes[k].n_instances && !wr.failed; i++) {
			target t;
			if (!pr->w->nodes[k].instances[i].has_pod)
				continue;
			int ok = target_init(&t, pr->w, k, i, warnings);
			if (ok < 0)
				wr.failed = 1; /* out of memory: no partial answer */
			else if (ok > 0 && wmap_policy_matches_component(pol, t.component))
				apply_policy(&wr, &t, pol);
			wmap_pod_target_clear(&t);
		}
	}
	wmap_patch_free(pb);
	if (wr.failed)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	return 0;
}

int wmap__audit_object(wmap_audit_result *res, json_t *warnings, const char **reason,
		       wmap_engine *eng, const wmap_admission_config *cfg, const json_t *object,
		       unsigned op, const char *ns, wmap_error *err)
{
	prepared pr = { 0 };
	int rc = 0;
	const char *why = NULL;
	memset(res, 0, sizeof(*res));
	if (reason)
		*reason = NULL;
	json_t *meta = json_object_get(object, "metadata");
	pr.op = op;
	pr.ns = ns && *ns ? ns : json_string_value(json_object_get(meta, "namespace"));
	pr.labels = json_object_get(meta, "labels");
	wmap_admission_kind(pr.kind, sizeof(pr.kind), object);
	if (!pr.op || !json_is_object(object) || !cfg->policies)
		return 0;
	if (controller_owned(object)) {
		res->owned = 1;
		return 0;
	}
	if ((rc = applying_policies(res, cfg, &pr, err))) {
		why = "internal";
		goto done;
	}
	if (res->n_policies == 0)
		return 0;
	if ((rc = prepare(&pr, &why, eng, cfg, (json_t *)object, WMAP_RESOLVE_NO_RESOURCES, err)))
		goto done;
	for (size_t p = 0; p < cfg->policies->n && rc == 0; p++) {
		const wmap_policy *pol = &cfg->policies->policies[p];
		if (!wmap_policy_needs_validation(pol) || !policy_applies(pol, &pr))
			continue;
		if (wmap_policy_sets_template(pol) &&
		    (rc = check_policy(res, warnings, &pr, pol, object, err)))
			why = "internal";
		else if ((pol->n_workload_limits || pol->n_pod_limits) &&
			 (rc = wmap__audit_limits(res, pr.w, pol, pr.ns, err)))
			why = rc == WMAP_ENOMEM ? "internal" : "evaluation";
	}
done:
	if (reason)
		*reason = why;
	wmap_workload_free(pr.w);
	return rc;
}

int wmap_admission_groups(json_t **out, const wmap_gang_row **row, json_t *warnings,
			  wmap_engine *eng, const wmap_admission_config *cfg, json_t *object,
			  wmap_error *err)
{
	prepared pr = { 0 };
	gang_ctx g = { 0 };
	wmap_gang_plan *plan = NULL;
	const char *why = NULL;
	int rc;
	*out = NULL;
	*row = wmap_gang_row_of(WMAP_GANG_NONE, 0);
	json_t *meta = json_object_get(object, "metadata");
	pr.op = WMAP_POLICY_OP_CREATE; /* the settings it was created with */
	pr.ns = json_string_value(json_object_get(meta, "namespace"));
	pr.labels = json_object_get(meta, "labels");
	wmap_admission_kind(pr.kind, sizeof(pr.kind), object);
	gang_settings(&g, cfg, &pr);
	*row = g.row;
	if (!g.row->kind || !json_is_object(object) || controller_owned(object)) {
		*out = json_array();
		return *out ? 0 : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	if ((rc = prepare(&pr, &why, eng, cfg, object, 0, err)))
		return rc;
	if ((rc = wmap_gang_plan_build(&plan, pr.w, pr.w->name, err)) == 0) {
		for (size_t i = 0; i < plan->n_notes; i++)
			wmap__admission_warn(warnings, "gang: %s", plan->notes[i]);
		const char *prio = NULL;
		for (size_t i = 0; cfg->policies && i < cfg->policies->n && !prio; i++) {
			const wmap_policy *p = &cfg->policies->policies[i];
			if (policy_writes_to(p, &pr))
				prio = p->priority_class_name;
		}
		wmap_gang_build b = { .workload = object, .w = pr.w, .queue = g.queue, .priority_class = prio };
		rc = wmap_gang_group_objects(out, g.row, plan, &b, err);
	}
	wmap_gang_plan_free(plan);
	wmap_workload_free(pr.w);
	return rc;
}
