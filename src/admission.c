/* wmap: admission logic (see wmap/admission.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wmap/apiversion.h"
#include "wmap/base64.h"
#include "wmap/admission.h"
#include "wmap/json_text.h"
#include "wmap/patch.h"
#include "wmap/pod_target.h"
#include "wmap/quantity.h"
#include "wmap/workload.h"

#define REVIEW_API "admission.k8s.io/v1"
#define MAX_WARNINGS 8
#define WARNING_MAX 240 /* the apiserver may cut warnings past 256 characters */

/* wmap's own keys (architecture.md, "Label and annotation keys"). */
#define KEY_KIND "wmap.io/workload-kind"
#define KEY_NAME "wmap.io/workload-name"
#define KEY_COMPONENT "wmap.io/component"
#define KEY_INSTANCE "wmap.io/instance"
#define KEY_GROUP "wmap.io/pod-group"
#define KEY_GROUP_MIN "wmap.io/pod-group-min-member"

/* ---- small helpers ----------------------------------------------------------------- */

static void copy_str(char *buf, size_t len, const char *s)
{
	snprintf(buf, len, "%s", s ? s : "");
}

void wmap_admission_kind(char *buf, size_t len, const json_t *object)
{
	const char *api = json_string_value(json_object_get(object, "apiVersion"));
	const char *kind = json_string_value(json_object_get(object, "kind"));
	wmap_api_version av;
	wmap_api_version_split(&av, api);
	if (!kind)
		kind = "";
	if (av.group_len)
		snprintf(buf, len, "%s.%.*s", kind, (int)av.group_len, av.group);
	else
		snprintf(buf, len, "%s", kind);
}

static void warn(json_t *warnings, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(json_t *warnings, const char *fmt, ...)
{
	char buf[WARNING_MAX + 1];
	if (!warnings || json_array_size(warnings) >= MAX_WARNINGS)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
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
			return;
	}
	json_array_append_new(warnings, json_string(buf));
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
		warn(warnings, "component %s: %s", t->component, why);
	return rc;
}

/* ---- writing ----------------------------------------------------------------------- */

typedef struct writer {
	wmap_patch *patch;
	json_t *warnings;
	json_t *violations; /* validation: collect what would change instead */
	const char *policy; /* the policy being checked, for messages */
	int failed;         /* a write failed (not an object where one was expected) */
	wmap_error *err;
} writer;

static void violation(writer *wr, const target *t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void violation(writer *wr, const target *t, const char *fmt, ...)
{
	char field[512], msg[800];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(field, sizeof(field), fmt, ap);
	va_end(ap);
	if (t->instance[0])
		snprintf(msg, sizeof(msg), "policy %s: component %s (instance %s): %s",
			 wr->policy, t->component, t->instance, field);
	else
		snprintf(msg, sizeof(msg), "policy %s: component %s: %s", wr->policy,
			 t->component, field);
	json_array_append_new(wr->violations, json_string(msg));
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
		warn(wr->warnings, "component %s: %s; left unchanged", t->component, e->message);
	}
}

/* p with its prefix from (a pointer) replaced by to; p itself when it does not start so. */
static int rebase(char **p, const char *from, const char *to)
{
	size_t n = strlen(from);
	if (!*p || strncmp(*p, from, n) != 0 || ((*p)[n] != '\0' && (*p)[n] != '/'))
		return 0;
	size_t rest = strlen(*p + n), tl = strlen(to);
	char *np = malloc(tl + rest + 1);
	if (!np)
		return -1;
	memcpy(np, to, tl);
	memcpy(np + tl, *p + n, rest + 1);
	free(*p);
	*p = np;
	return 0;
}

/* Makes the list entry t's labels live in when it is not there yet (once per target).
 * The entry goes at the end of its list; if earlier writes of this patch took that index,
 * t's pointers follow it to the one it got. */
static void ensure_entry(writer *wr, target *t)
{
	if (!t->create_at || wr->violations)
		return;
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
		free(t->labels);
		free(t->annotations);
		t->labels = t->annotations = NULL;
	}
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

static int put_str(writer *wr, const target *t, const char *ptr, const char *key,
		   const char *value, wmap_patch_mode mode)
{
	return put(wr, t, ptr, key, json_string(value), mode);
}

static int put_field(writer *wr, const target *t, const char *field_ptr, const char *value,
		     wmap_patch_mode mode)
{
	int changed = 0;
	if (!field_ptr)
		return 0;
	wmap_error e;
	if (wmap_patch_set_at(wr->patch, field_ptr, json_string(value), mode, &changed, &e) != 0) {
		write_failed(wr, t, &e);
		return 0;
	}
	return changed;
}

static void stamp_identity(writer *wr, const target *t, const char *kind, const char *name)
{
	char v[64];
	wmap_label_value(v, sizeof(v), kind);
	put_str(wr, t, t->labels, KEY_KIND, v, WMAP_PATCH_OVERRIDE);
	if (name) {
		wmap_label_value(v, sizeof(v), name);
		put_str(wr, t, t->labels, KEY_NAME, v, WMAP_PATCH_OVERRIDE);
	}
	wmap_label_value(v, sizeof(v), t->component);
	put_str(wr, t, t->labels, KEY_COMPONENT, v, WMAP_PATCH_OVERRIDE);
	if (t->multi && t->instance[0]) {
		wmap_label_value(v, sizeof(v), t->instance);
		put_str(wr, t, t->labels, KEY_INSTANCE, v, WMAP_PATCH_OVERRIDE);
	}
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
	const char *queue;
	const wmap_gang_plan *plan;
	const char *name;
	char *task_groups; /* YuniKorn annotation text, computed once */
} gang_ctx;

static void stamp_gang(writer *wr, const target *t, const gang_ctx *g)
{
	const wmap_gang_member *mem = wmap_gang_plan_member(g->plan, t->node, t->instance_index);
	const wmap_gang_group *grp = (mem && mem->group >= 0) ? &g->plan->groups[mem->group]
							      : NULL;
	char v[64];
	switch (g->scheduler) {
	case WMAP_GANG_KAI:
		put_field(wr, t, t->scheduler, "kai-scheduler", WMAP_PATCH_DEFAULT);
		break;
	case WMAP_GANG_VOLCANO:
		put_field(wr, t, t->scheduler, "volcano", WMAP_PATCH_DEFAULT);
		if (grp)
			put_str(wr, t, t->annotations, "scheduling.k8s.io/group-name", grp->name,
				WMAP_PATCH_DEFAULT);
		if (g->queue)
			put_str(wr, t, t->annotations, "scheduling.volcano.sh/queue-name", g->queue,
				WMAP_PATCH_DEFAULT);
		break;
	case WMAP_GANG_COSCHEDULING:
		if (grp)
			put_str(wr, t, t->labels, "scheduling.x-k8s.io/pod-group", grp->name,
				WMAP_PATCH_DEFAULT);
		break;
	case WMAP_GANG_YUNIKORN:
		put_field(wr, t, t->scheduler, "yunikorn", WMAP_PATCH_DEFAULT);
		if (g->name) {
			wmap_label_value(v, sizeof(v), g->name);
			put_str(wr, t, t->labels, "yunikorn.apache.org/app-id", v,
				WMAP_PATCH_DEFAULT);
		}
		if (g->queue)
			put_str(wr, t, t->labels, "yunikorn.apache.org/queue", g->queue,
				WMAP_PATCH_DEFAULT);
		if (grp && mem) {
			put_str(wr, t, t->annotations, "yunikorn.apache.org/task-group-name",
				mem->task_group, WMAP_PATCH_DEFAULT);
			if (g->task_groups)
				put_str(wr, t, t->annotations, "yunikorn.apache.org/task-groups",
					g->task_groups, WMAP_PATCH_DEFAULT);
		}
		break;
	default:
		break;
	}
	if (grp) {
		char min[32];
		snprintf(min, sizeof(min), "%" PRId64, grp->min_member);
		put_str(wr, t, t->annotations, KEY_GROUP, grp->name, WMAP_PATCH_OVERRIDE);
		put_str(wr, t, t->annotations, KEY_GROUP_MIN, min, WMAP_PATCH_OVERRIDE);
	}
}

/* Writes (or, when wr->violations, checks) one policy's settings on one template. */
static void apply_policy(writer *wr, const target *t, const wmap_policy *p)
{
	wmap_patch_mode mode = p->mode == WMAP_POLICY_OVERRIDE ? WMAP_PATCH_OVERRIDE
							       : WMAP_PATCH_DEFAULT;
	const char *k;
	json_t *v;
	int check = wr->violations != NULL;
	const char *req = mode == WMAP_PATCH_OVERRIDE ? "must be" : "must be set (default";
	const char *end = mode == WMAP_PATCH_OVERRIDE ? "" : ")";
	json_object_foreach(p->labels, k, v) {
		if (put(wr, t, t->labels, k, json_incref(v), mode) && check)
			violation(wr, t, "label %s %s \"%s\"%s", k, req, json_string_value(v), end);
	}
	json_object_foreach(p->annotations, k, v) {
		if (put(wr, t, t->annotations, k, json_incref(v), mode) && check)
			violation(wr, t, "annotation %s %s \"%s\"%s", k, req, json_string_value(v),
				  end);
	}
	if (p->priority_class_name &&
	    put_field(wr, t, t->priority, p->priority_class_name, mode) && check)
		violation(wr, t, "priorityClassName %s \"%s\"%s", req, p->priority_class_name, end);
	if (p->scheduler_name && put_field(wr, t, t->scheduler, p->scheduler_name, mode) && check)
		violation(wr, t, "schedulerName %s \"%s\"%s", req, p->scheduler_name, end);
	if ((p->runtime_class_name || p->node_selector || p->tolerations) && !t->spec) {
		warn(wr->warnings, "component %s: no pod spec location; policy %s's "
				   "runtimeClassName, nodeSelector and tolerations not applied",
		     t->component,
		     p->name);
		return;
	}
	if (p->runtime_class_name &&
	    put_str(wr, t, t->spec, "runtimeClassName", p->runtime_class_name, mode) && check)
		violation(wr, t, "runtimeClassName %s \"%s\"%s", req, p->runtime_class_name, end);
	if (p->node_selector) {
		char *ns = wmap_pointer_join(t->spec, "nodeSelector");
		if (!ns)
			out_of_memory(wr);
		json_object_foreach(p->node_selector, k, v) {
			if (put(wr, t, ns, k, json_incref(v), mode) && check)
				violation(wr, t, "nodeSelector %s %s \"%s\"%s", k, req,
					  json_string_value(v), end);
		}
		free(ns);
	}
	if (p->tolerations) {
		/* Lists are sets: append what is missing, never replace (override acts alike). */
		char *tp = wmap_pointer_join(t->spec, "tolerations");
		size_t i;
		if (!tp)
			out_of_memory(wr);
		json_array_foreach(p->tolerations, i, v) {
			int changed = 0;
			wmap_error e;
			if (!tp)
				break;
			/* A copy: the policy set is shared by every thread, and the builder may
			 * later append into a list it created around this value. */
			if (wmap_patch_append_unique(wr->patch, tp, json_deep_copy(v), &changed,
						     &e)) {
				write_failed(wr, t, &e);
			} else if (changed && check) {
				char *txt = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
				violation(wr, t, "tolerations must include %s", txt ? txt : "?");
				free(txt);
			}
		}
		free(tp);
	}
}

/* Every writable pod template of w, in workload order. */
static int collect_targets(target **out, size_t *n_out, const wmap_workload *w,
			   json_t *warnings)
{
	target *v = NULL;
	size_t n = 0;
	for (size_t k = 0; k < w->n_nodes; k++) {
		for (size_t i = 0; i < w->nodes[k].n_instances; i++) {
			target t;
			if (!w->nodes[k].instances[i].has_pod)
				continue;
			int ok = target_init(&t, w, k, i, warnings);
			if (ok == 0) {
				wmap_pod_target_clear(&t);
				continue;
			}
			target *nv = ok > 0 ? realloc(v, (n + 1) * sizeof(*nv)) : NULL;
			if (!nv) {
				wmap_pod_target_clear(&t);
				for (size_t j = 0; j < n; j++)
					wmap_pod_target_clear(&v[j]);
				free(v);
				return WMAP_ENOMEM;
			}
			v = nv;
			v[n++] = t;
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

typedef struct located {
	const char *loc;
	size_t index;
} located;

static int by_location(const void *a, const void *b)
{
	const located *x = a, *y = b;
	int c = strcmp(x->loc, y->loc);
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Some definitions describe alternatives at one location (NIMService's single-node
 * Deployment and multi-node leader both read .spec.labels). The identity written there
 * is the first such template with replicas, else the first: never one per template, which
 * would flip on every pass. Sorted by location, so a 1000-group workload costs n log n
 * comparisons, not n squared. */
static int mark_owners(const wmap_workload *w, target *v, size_t n)
{
	located *l = n ? malloc(n * sizeof(*l)) : NULL;
	size_t m = 0;
	if (n && !l)
		return WMAP_ENOMEM;
	for (size_t j = 0; j < n; j++) {
		const char *loc = v[j].labels ? v[j].labels : v[j].annotations;
		v[j].mark = loc == NULL;
		if (loc)
			l[m++] = (located){ loc, j };
	}
	if (m)
		qsort(l, m, sizeof(*l), by_location);
	for (size_t a = 0, b; a < m; a = b) {
		size_t pick = l[a].index;
		int live = 0;
		for (b = a; b < m && strcmp(l[b].loc, l[a].loc) == 0; b++) {
			const target *t = &v[l[b].index];
			if (!live && w->nodes[t->node].instances[t->instance_index].desired > 0) {
				pick = l[b].index;
				live = 1;
			}
		}
		v[pick].mark = 1;
	}
	free(l);
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
	int depth = cfg->max_depth > 0 ? cfg->max_depth : WMAP_ADMISSION_MAX_DEPTH;
	if (too_deep(object, depth)) {
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
	size_t i;
	json_t *ref;
	json_array_foreach(json_object_get(json_object_get(object, "metadata"), "ownerReferences"),
			   i, ref) {
		if (json_is_true(json_object_get(ref, "controller")))
			return 1;
	}
	return 0;
}

static int policy_applies(const wmap_policy *p, const prepared *pr)
{
	return wmap_policy_matches(p, pr->kind, pr->ns, pr->labels, pr->op);
}

/* The mutation of object as a patch builder in *out (NULL when there is nothing to write),
 * its warnings appended to warnings. Negative when wmap cannot process the object (*reason says
 * why, see wmap_admission_info). */
static int mutate(wmap_patch **out, json_t *warnings, const char **reason, wmap_engine *eng,
		  const wmap_admission_config *cfg, json_t *object, const char *operation,
		  const char *ns, wmap_error *err)
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

	/* UPDATE is left alone unless a policy asks for it (decision 5): no resolve at all. */
	int wanted = pr.op == WMAP_POLICY_OP_CREATE;
	for (size_t i = 0; !wanted && cfg->policies && i < cfg->policies->n; i++)
		wanted = policy_applies(&cfg->policies->policies[i], &pr);
	if (!wanted)
		return 0;

	/* Gang settings: the first matching policy that gives them wins over the flags. */
	g.scheduler = cfg->scheduler;
	g.queue = cfg->queue;
	int have_sched = 0, have_queue = 0;
	for (size_t i = 0; cfg->policies && i < cfg->policies->n; i++) {
		const wmap_policy *p = &cfg->policies->policies[i];
		if (!policy_applies(p, &pr))
			continue;
		if (p->has_gang && !have_sched) {
			g.scheduler = p->gang;
			have_sched = 1;
		}
		if (p->queue && !have_queue) {
			g.queue = p->queue;
			have_queue = 1;
		}
	}
	/* Only YuniKorn's task groups carry per-pod resources (minResource). */
	int need_resources = pr.op == WMAP_POLICY_OP_CREATE && g.scheduler == WMAP_GANG_YUNIKORN;
	if ((rc = prepare(&pr, &why, eng, cfg, object,
			  need_resources ? 0 : WMAP_RESOLVE_NO_RESOURCES, err)))
		goto done;
	wmap_workload *w = pr.w;
	if ((rc = wmap_patch_new(&pb, object, err))) {
		why = "internal";
		goto done;
	}
	writer wr = { pb, warnings, NULL, NULL, 0, err };

	g.name = w->name;
	if (pr.op == WMAP_POLICY_OP_CREATE) {
		if (!w->name)
			warn(warnings, "%s has only generateName: no workload-name label and no "
				       "name-based gang hints",
			     pr.kind);
		if (g.scheduler != WMAP_GANG_NONE) {
			if ((rc = wmap_gang_plan_build(&plan, w, w->name, err))) {
				why = "internal";
				goto done;
			}
			g.plan = plan;
			for (size_t i = 0; i < plan->n_notes; i++) {
				if (w->name)
					warn(warnings, "gang: %s", plan->notes[i]);
			}
			if (g.scheduler == WMAP_GANG_YUNIKORN) {
				json_t *tg = yunikorn_task_groups(plan);
				g.task_groups = tg ? wmap_json_text(tg, NULL) : NULL;
				json_decref(tg);
				if (!g.task_groups) {
					rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
					why = "internal";
					goto done;
				}
			}
			if (g.scheduler == WMAP_GANG_NATIVE)
				warn(warnings, "gang: the native Workload API needs Workload objects "
					       "(a side effect); only wmap.io annotations written");
			if (g.scheduler == WMAP_GANG_KUEUE && !g.queue)
				warn(warnings, "gang: kueue selected but no queue given; no "
					       "queue-name label written");
		}
		for (size_t i = 0; i < w->n_warnings; i++)
			warn(warnings, "%s", w->warnings[i]);
	}

	if ((rc = collect_targets(&targets, &n_targets, w, warnings)) ||
	    (rc = mark_owners(w, targets, n_targets))) {
		why = "internal";
		wmap_error_set(err, rc, "out of memory");
		goto done;
	}
	for (size_t j = 0; j < n_targets && !wr.failed; j++) {
		target *t = &targets[j];
		if (pr.op == WMAP_POLICY_OP_CREATE && t->mark) {
			ensure_entry(&wr, t);
			stamp_identity(&wr, t, pr.kind, w->name);
			if (g.plan)
				stamp_gang(&wr, t, &g);
		}
		for (size_t p = 0; cfg->policies && p < cfg->policies->n; p++) {
			const wmap_policy *pol = &cfg->policies->policies[p];
			if (policy_applies(pol, &pr) && wmap_policy_matches_component(pol, t->component)) {
				ensure_entry(&wr, t);
				apply_policy(&wr, t, pol);
			}
		}
	}
	/* Queue labels that schedulers read from the workload itself. */
	if (pr.op == WMAP_POLICY_OP_CREATE && g.queue && !wr.failed) {
		const char *key = g.scheduler == WMAP_GANG_KAI     ? "kai.scheduler/queue"
				  : g.scheduler == WMAP_GANG_KUEUE ? "kueue.x-k8s.io/queue-name"
								   : NULL;
		target top = { .component = w->definition->components[0].name, .instance = "" };
		if (key)
			put_str(&wr, &top, "/metadata/labels", key, g.queue, WMAP_PATCH_DEFAULT);
	}
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
	int rc = *warnings ? mutate(&pb, *warnings, &why, eng, cfg, object, operation, ns, err)
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

int wmap_admission_validate(json_t **violations, json_t **warnings, const char **reason,
			    wmap_engine *eng, const wmap_admission_config *cfg, json_t *object,
			    const char *operation, const char *ns, wmap_error *err)
{
	prepared pr = { 0 };
	int rc = 0;
	const char *why = NULL;
	*violations = json_array();
	*warnings = json_array();
	if (reason)
		*reason = NULL;
	if (!*violations || !*warnings)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	json_t *meta = json_object_get(object, "metadata");
	pr.op = wmap_policy_operation(operation);
	pr.ns = ns && *ns ? ns : json_string_value(json_object_get(meta, "namespace"));
	pr.labels = json_object_get(meta, "labels");
	wmap_admission_kind(pr.kind, sizeof(pr.kind), object);
	if (!pr.op || !json_is_object(object) || !cfg->policies || controller_owned(object))
		return 0;
	int wanted = 0;
	for (size_t i = 0; !wanted && i < cfg->policies->n; i++)
		wanted = cfg->policies->policies[i].enforce &&
			 policy_applies(&cfg->policies->policies[i], &pr);
	if (!wanted)
		return 0;
	if ((rc = prepare(&pr, &why, eng, cfg, object, WMAP_RESOLVE_NO_RESOURCES, err)))
		goto done;
	for (size_t p = 0; p < cfg->policies->n && rc == 0; p++) {
		const wmap_policy *pol = &cfg->policies->policies[p];
		if (!pol->enforce || !policy_applies(pol, &pr))
			continue;
		/* A fresh builder per policy: each is checked against the object alone. */
		wmap_patch *pb = NULL;
		if ((rc = wmap_patch_new(&pb, object, err))) {
			why = "internal";
			break;
		}
		writer wr = { pb, *warnings, *violations, pol->name, 0, err };
		for (size_t k = 0; k < pr.w->n_nodes; k++) {
			for (size_t i = 0; i < pr.w->nodes[k].n_instances; i++) {
				target t;
				if (!pr.w->nodes[k].instances[i].has_pod)
					continue;
				int ok = target_init(&t, pr.w, k, i, *warnings);
				if (ok < 0)
					wr.failed = 1; /* out of memory: no partial answer */
				else if (ok > 0 && wmap_policy_matches_component(pol, t.component))
					apply_policy(&wr, &t, pol);
				wmap_pod_target_clear(&t);
			}
		}
		if (wr.failed) {
			rc = WMAP_ENOMEM;
			why = "internal";
		}
		wmap_patch_free(pb);
	}
done:
	if (reason)
		*reason = why;
	wmap_workload_free(pr.w);
	return rc;
}

/* ---- the AdmissionReview envelope --------------------------------------------------- */

/* allowed: false with a Forbidden status; -1 when memory runs out (resp then unchanged or
 * without its status: the caller must not send it). */
static int deny(json_t *resp, const char *msg)
{
	json_t *st = json_pack("{s:i, s:s, s:s, s:s}", "code", 403, "status", "Failure", "reason",
			       "Forbidden", "message", msg);
	if (!st || json_object_set_new(resp, "status", st))
		return -1;
	return json_object_set_new(resp, "allowed", json_false()) ? -1 : 0;
}

int wmap_admission_parse(json_t **out, wmap_json_cut *cut, const char *body, size_t len,
			 int64_t deadline_ns, json_error_t *jerr)
{
	wmap_json_limits lim = { 0 };
	lim.max_depth = WMAP_REVIEW_MAX_DEPTH;
	lim.max_members = WMAP_REVIEW_MAX_MEMBERS;
	lim.max_nodes = WMAP_REVIEW_MAX_NODES;
	lim.deadline_ns = deadline_ns;
	lim.cut = 1;
	lim.keep_depth = 3; /* request.uid, .kind, .namespace, .operation, .dryRun */
	return wmap_json_parse_limited(out, cut, body, len, &lim, jerr);
}

/* What the parse left out, in words: "more than 16384 members in one object or array at
 * .request.object.metadata.labels (line 1, column 812)". */
static void describe_cut(char *buf, size_t len, const wmap_json_cut *c)
{
	char what[96];
	if (!strcmp(c->reason, "too-deep"))
		snprintf(what, sizeof(what), "nesting deeper than %zu levels", c->limit);
	else if (!strcmp(c->reason, "too-many-members"))
		snprintf(what, sizeof(what), "more than %zu members in one object or array",
			 c->limit);
	else if (!strcmp(c->reason, "too-many-nodes"))
		snprintf(what, sizeof(what), "more than %zu JSON values", c->limit);
	else {
		snprintf(buf, len, "the time budget ran out while reading the review, at %s "
				   "(line %d, column %d)",
			 c->path, c->line, c->column);
		return;
	}
	snprintf(buf, len, "the review has %s at %s (line %d, column %d)", what, c->path,
		 c->line, c->column);
}

/* The first enforced policy that matches kind, namespace and operation (its selector and
 * components are not looked at: the labels and templates may be what was left out), or
 * NULL. */
static const wmap_policy *enforced_for(const wmap_policy_set *set, const char *kind,
				       const char *ns, unsigned op)
{
	for (size_t i = 0; set && i < set->n; i++) {
		wmap_policy p = set->policies[i];
		p.selector = NULL;
		if (p.enforce && wmap_policy_matches(&p, kind, ns, NULL, op))
			return &set->policies[i];
	}
	return NULL;
}

/* A review the parse cut (cfg->cut): no patch, no evaluation. Validation denies when an
 * enforced policy matches, so that nesting or bulk cannot carry an object past
 * enforcement; everything else is allowed with a warning. */
static int answer_cut(json_t *resp, json_t *warnings, wmap_admission_mode mode,
		      const wmap_admission_config *cfg, const json_t *object, const char *op,
		      const char *ns, wmap_admission_info *info)
{
	char why[WARNING_MAX + 1], msg[WMAP_ERROR_MAX];
	describe_cut(why, sizeof(why), cfg->cut);
	info->reason = cfg->cut->reason;
	info->result = "failopen";
	if (mode == WMAP_ADMISSION_VALIDATE) {
		if (!ns || !*ns)
			ns = json_string_value(
				json_object_get(json_object_get(object, "metadata"), "namespace"));
		const wmap_policy *p = enforced_for(cfg->policies, info->kind, ns,
						    wmap_policy_operation(op));
		if (p) {
			snprintf(msg, sizeof(msg), "wmap could not check this %s against enforced "
						   "policy %s: %s, past what wmap reads",
				 info->kind, p->name, why);
			info->result = "denied";
			return deny(resp, msg);
		}
	}
	warn(warnings, "wmap: %s; allowed unchanged", why);
	return 0;
}

static int bad(wmap_error *err, const char *what)
{
	return wmap_error_set(err, WMAP_EINVAL, "not an admission.k8s.io/v1 AdmissionReview: %s",
			      what);
}

int wmap_admission_review(json_t **out, wmap_engine *eng, const wmap_admission_config *cfg,
			  wmap_admission_mode mode, json_t *review, wmap_admission_info *info,
			  wmap_error *err)
{
	wmap_admission_info scratch;
	if (!info)
		info = &scratch;
	memset(info, 0, sizeof(*info));
	*out = NULL;
	if (!json_is_object(review))
		return bad(err, "the body is not a JSON object");
	const char *api = json_string_value(json_object_get(review, "apiVersion"));
	const char *kind = json_string_value(json_object_get(review, "kind"));
	if (!api || strcmp(api, REVIEW_API) != 0 || !kind || strcmp(kind, "AdmissionReview") != 0)
		return bad(err, "apiVersion must be admission.k8s.io/v1 and kind AdmissionReview");
	json_t *req = json_object_get(review, "request");
	if (!json_is_object(req))
		return bad(err, "request is missing or not an object");
	const char *uid = json_string_value(json_object_get(req, "uid"));
	if (!uid || !*uid)
		return bad(err, "request.uid is missing or not a string");
	const char *op = json_string_value(json_object_get(req, "operation"));
	if (!op)
		return bad(err, "request.operation is missing or not a string");
	json_t *object = json_object_get(req, "object");
	json_t *dry = json_object_get(req, "dryRun");
	if (dry && !json_is_boolean(dry) && !json_is_null(dry))
		return bad(err, "request.dryRun must be a boolean");
	json_t *nsv = json_object_get(req, "namespace");
	if (nsv && !json_is_string(nsv) && !json_is_null(nsv))
		return bad(err, "request.namespace must be a string");
	unsigned opbit = wmap_policy_operation(op);
	int cut = cfg->cut && cfg->cut->reason;
	if (opbit && !json_is_object(object) && !(cut && !object))
		return bad(err, "request.object must be an object for CREATE and UPDATE");
	const char *ns = json_string_value(nsv);
	const char *name = json_string_value(json_object_get(req, "name"));
	if (!name || !*name)
		name = json_string_value(json_object_get(json_object_get(object, "metadata"),
							 "name"));

	copy_str(info->uid, sizeof(info->uid), uid);
	copy_str(info->operation, sizeof(info->operation), op);
	copy_str(info->namespace_, sizeof(info->namespace_), ns);
	copy_str(info->name, sizeof(info->name), name);
	info->dry_run = json_is_true(dry);
	if (json_is_string(json_object_get(object, "kind"))) {
		wmap_admission_kind(info->kind, sizeof(info->kind), object);
	} else {
		json_t *rk = json_object_get(req, "kind");
		const char *g = json_string_value(json_object_get(rk, "group"));
		const char *k = json_string_value(json_object_get(rk, "kind"));
		snprintf(info->kind, sizeof(info->kind), "%s%s%s", k ? k : "", g && *g ? "." : "",
			 g && *g ? g : "");
	}

	json_t *resp = json_pack("{s:s, s:b}", "uid", uid, "allowed", 1);
	wmap_patch *pb = NULL;
	json_t *warnings = NULL, *violations = NULL;
	const char *reason = NULL;
	wmap_error e;
	wmap_error_clear(&e);
	int rc;
	if (!resp)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	/* dryRun is treated exactly as a real request: the webhook has no side effects. */
	if (cut && mode != WMAP_ADMISSION_ALLOW) {
		if (!(warnings = json_array()) ||
		    answer_cut(resp, warnings, mode, cfg, object, op, ns, info)) {
			json_decref(resp);
			json_decref(warnings);
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
		if (json_array_size(warnings) > 0)
			json_object_set(resp, "warnings", warnings);
		json_decref(warnings);
		*out = json_pack("{s:s, s:s, s:o}", "apiVersion", REVIEW_API, "kind",
				 "AdmissionReview", "response", resp);
		return *out ? 0 : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	if (mode == WMAP_ADMISSION_MUTATE)
		rc = (warnings = json_array())
			     ? mutate(&pb, warnings, &reason, eng, cfg, object, op, ns, &e)
			     : wmap_error_set(&e, WMAP_ENOMEM, "out of memory");
	else if (mode == WMAP_ADMISSION_VALIDATE) {
		/* Karta and WorkloadPolicy objects are the webhook's own: checked as definitions
		 * and policies, never as workloads. */
		rc = json_is_object(object) ? wmap_admission_check_own_object(&violations, &warnings,
									      cfg, object, op, &e)
					    : 0;
		if (rc == 0)
			rc = wmap_admission_validate(&violations, &warnings, &reason, eng, cfg, object,
						     op, ns, &e);
		else if (rc > 0)
			rc = 0;
	} else
		rc = 0; /* WMAP_ADMISSION_ALLOW */
	info->result = "allowed";
	if (rc && mode == WMAP_ADMISSION_VALIDATE && rc != WMAP_ENODEF) {
		/* An enforced policy matched (validation stops earlier otherwise) but the object
		 * could not be checked: deny, or an object shaped to break evaluation would slip
		 * past enforcement. Without a definition there is nothing to check: allowed. */
		char msg[WMAP_ERROR_MAX + 64];
		snprintf(msg, sizeof(msg), "wmap could not check this %s against its enforced "
					   "policies: %s",
			 info->kind, e.message);
		info->result = "denied";
		info->reason = reason ? reason : "internal";
		if (deny(resp, msg))
			goto nomem;
	} else if (rc) {
		/* Fail open: allowed unchanged, and the user is told why. */
		info->result = "failopen";
		info->reason = reason ? reason : "internal";
		if (rc == WMAP_ENODEF)
			warn(warnings, "wmap: no definition for %s; allowed unchanged", info->kind);
		else
			warn(warnings, "wmap: %s; allowed unchanged", e.message);
	} else if (violations && json_array_size(violations) > 0) {
		char msg[2048];
		size_t n = 0, i;
		json_t *v;
		msg[0] = '\0';
		json_array_foreach(violations, i, v) {
			int w = snprintf(msg + n, sizeof(msg) - n, "%s%s", i ? "; " : "",
					 json_string_value(v));
			if (w < 0 || (size_t)w >= sizeof(msg) - n)
				break;
			n += (size_t)w;
		}
		info->result = "denied";
		if (deny(resp, msg))
			goto nomem;
	} else if (pb && wmap_patch_len(pb) > 0) {
		size_t text_len = 0;
		char *text = NULL;
		wmap_patch_dump(&text, &text_len, pb, &e);
		char *b64 = text ? wmap_base64((const unsigned char *)text, text_len) : NULL;
		/* base64 is ASCII by construction: no UTF-8 check of tens of kilobytes. */
		if (!b64 || json_object_set_new(resp, "patchType", json_string("JSONPatch")) ||
		    json_object_set_new(resp, "patch",
					json_stringn_nocheck(b64, strlen(b64)))) {
			free(b64);
			free(text);
			goto nomem;
		}
		info->result = "patched";
		info->patch_ops = wmap_patch_len(pb);
		info->patch_bytes = text_len;
		free(text);
		free(b64);
	}
	if (warnings && json_array_size(warnings) > 0 && json_object_set(resp, "warnings", warnings))
		goto nomem;
	wmap_patch_free(pb);
	json_decref(warnings);
	json_decref(violations);
	*out = json_pack("{s:s, s:s, s:o}", "apiVersion", REVIEW_API, "kind", "AdmissionReview",
			 "response", resp);
	return *out ? 0 : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
nomem:
	/* Half a response (a denial without its message, an answer without its warnings) is
	 * never sent: the webhook answers 500 and the API server applies the failurePolicy. */
	json_decref(resp);
	wmap_patch_free(pb);
	json_decref(warnings);
	json_decref(violations);
	return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
}
