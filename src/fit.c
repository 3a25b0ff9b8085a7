/* wmap: would a workload fit in one cluster now (include/wmap/fit.h).
 *
 * The snapshot becomes a table of nodes (allocatable, or capacity when a node reports no
 * allocatable, as kubectl does; minus what the non-terminal pods bound to it ask for, by the
 * same wmap_pod_spec_amounts the workload's pods are counted with) and the workload a list of
 * pod shapes, one per pod-bearing instance. Amounts are in thousandths, for exactly the
 * resource names the workload asks for: a resource nobody in the workload asks for cannot
 * stop it. Then, in this order, the verdict: no node can take one pod of some shape (the
 * scheduler's own `0/N nodes are available: ...`), more asked than is free on the eligible
 * nodes, fewer slots than pods for some shape (Karmada's estimator count: per node the
 * smallest of free/request over the requested resources and the free pod count), else the
 * placement search (fit_place.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_int.h"
#include "wmap/quantity.h"

const char *const wmap_fit_not_checked[] = {
	"pod affinity/anti-affinity",
	"topology spread",
	"volumes",
	"DRA",
	"quotas",
	"preemption",
	"autoscaling",
	"nominated pods",
	"host ports",
	NULL,
};

/* Extended resources (GPUs) first, then cpu, memory, the others; by name within each. */
static int res_rank(const char *n)
{
	if (strcmp(n, "cpu") == 0)
		return 1;
	if (strcmp(n, "memory") == 0)
		return 2;
	return strchr(n, '/') ? 0 : 3;
}

static int res_before(const char *a, const char *b)
{
	int ra = res_rank(a), rb = res_rank(b);
	return ra != rb ? ra < rb : strcmp(a, b) < 0;
}

static int bytes_like(const char *n)
{
	return strcmp(n, "memory") == 0 || strcmp(n, "ephemeral-storage") == 0 ||
	       strncmp(n, "hugepages-", 10) == 0;
}

/* A quantity of resource name as Kubernetes prints it. */
static void fmt_q(char *buf, size_t len, const char *name, int64_t milli)
{
	if (milli < 0)
		milli = 0;
	if (strcmp(name, "cpu") == 0)
		wmap_quantity_format_cpu(buf, len, milli);
	else if (bytes_like(name))
		wmap_quantity_format_bytes(buf, len, milli / 1000 + (milli % 1000 != 0), WMAP_QUANTITY_BINARY_SI);
	else if (milli % 1000 == 0)
		snprintf(buf, len, "%lld", (long long)(milli / 1000));
	else
		snprintf(buf, len, "%lldm", (long long)milli);
}

static int64_t sat_add(int64_t a, int64_t b)
{
	return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
	return a != 0 && b > INT64_MAX / a ? INT64_MAX : a * b;
}

static void state_free(fit_state *st)
{
	for (size_t k = 0; k < st->n_classes; k++) {
		json_decref(st->classes[k].spec);
		json_decref(st->classes[k].reasons);
		free(st->classes[k].elig);
	}
	free(st->classes);
	free(st->nodes);
	memset(st, 0, sizeof(*st));
}

/* The pod shapes of w: their resource names (sorted), requests and counts. */
static int classes_load(fit_state *st, json_t *names, const wmap_workload *w, const wmap_gang_plan *plan,
			const wmap_fit_opts *opts, wmap_error *err)
{
	size_t n = 0;
	const char *k;
	json_t *v;
	int rc;

	for (size_t i = 0; i < w->n_nodes; i++) {
		for (size_t j = 0; j < w->nodes[i].n_instances; j++) {
			if (w->nodes[i].instances[j].has_pod) {
				n++;
				wmap_pod_resource_names(names, &w->nodes[i].instances[j].pod);
			}
		}
	}
	json_object_del(names, "pods");
	json_object_foreach(names, k, v) {
		size_t at = st->n_res;
		if (st->n_res == FIT_MAX_RES)
			return wmap_error_set(err, WMAP_ELIMIT, "the workload asks for more than %d resource names",
					      FIT_MAX_RES);
		while (at > 0 && res_before(k, st->res[at - 1])) {
			st->res[at] = st->res[at - 1];
			at--;
		}
		st->res[at] = k;
		st->n_res++;
	}
	if (!(st->classes = calloc(n + 1, sizeof(*st->classes))))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	for (size_t i = 0; i < w->n_nodes; i++) {
		const wmap_node *nd = &w->nodes[i];
		for (size_t j = 0; j < nd->n_instances; j++) {
			const wmap_instance *in = &nd->instances[j];
			fit_class *c = &st->classes[st->n_classes];
			const wmap_gang_member *m = plan ? wmap_gang_plan_member(plan, i, j) : NULL;
			if (!in->has_pod)
				continue;
			st->n_classes++;
			snprintf(c->label, sizeof(c->label), "%s%s%s", nd->def->name, *in->id ? "/" : "", in->id);
			if ((rc = wmap_pod_amounts(c->req, NULL, &in->pod, st->res, st->n_res, err)))
				return rc;
			c->desired = in->desired;
			c->count = in->desired;
			c->group = m ? m->group : -1;
			if (m && m->group >= 0 && (opts->flags & WMAP_FIT_MIN) && m->task_min < c->count)
				c->count = m->task_min;
			if (in->pod.shape == WMAP_SPEC_FRAGMENTED) {
				json_t *na = in->pod.frag[WMAP_FRAG_NODE_AFFINITY].value;
				c->spec = na ? json_pack("{s:{s:O}}", "affinity", "nodeAffinity", na) : json_object();
			} else {
				c->spec = json_is_object(in->pod.spec.value) ? json_incref(in->pod.spec.value) : json_object();
			}
			if (!c->spec || !(c->reasons = json_object()))
				return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
	}
	return 0;
}

static json_t *amount_map(const fit_state *st, const int64_t *milli)
{
	json_t *o = json_object();
	for (size_t r = 0; o && r < st->n_res; r++) {
		char q[48];
		fmt_q(q, sizeof(q), st->res[r], milli[r]);
		if (json_object_set_new(o, st->res[r], json_string(q))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static void need_of(int64_t *need, const fit_state *st)
{
	for (size_t r = 0; r < st->n_res; r++) {
		need[r] = 0;
		for (size_t k = 0; k < st->n_classes; k++)
			need[r] = sat_add(need[r], sat_mul(st->classes[k].count, st->classes[k].req[r]));
	}
}

int wmap_fit_workload(json_t **out, const wmap_workload *w, const wmap_gang_plan *plan,
		      const wmap_fit_opts *opts, wmap_error *err)
{
	fit_state st = { 0 };
	json_t *names = json_object(), *o = NULL, *comps, *gangs;
	int64_t need[FIT_MAX_RES], pods = 0;
	int rc;

	*out = NULL;
	if (!names)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if ((rc = classes_load(&st, names, w, plan, opts, err)))
		goto done;
	need_of(need, &st);
	o = json_pack("{s:s?, s:s?, s:s?, s:o, s:[], s:[]}", "kind", w->kind, "name", w->name ? w->name : w->generate_name,
		      "namespace", w->namespace_, "need", amount_map(&st, need), "components", "gangs");
	if (!o)
		goto oom;
	comps = json_object_get(o, "components");
	for (size_t k = 0; k < st.n_classes; k++) {
		const fit_class *c = &st.classes[k];
		pods += c->count;
		if (json_array_append_new(comps, json_pack("{s:s, s:I, s:I, s:o}", "name", c->label, "pods",
							   (json_int_t)c->count, "desired", (json_int_t)c->desired,
							   "perPod", amount_map(&st, c->req))))
			goto oom;
	}
	gangs = json_object_get(o, "gangs");
	for (size_t g = 0; plan && g < plan->n_groups; g++) {
		if (json_array_append_new(gangs, json_pack("{s:s, s:I}", "name", plan->groups[g].name, "minMember",
							   (json_int_t)plan->groups[g].min_member)))
			goto oom;
	}
	if (json_object_set_new(o, "pods", json_integer(pods)) ||
	    json_object_set_new(o, "min", json_boolean(opts->flags & WMAP_FIT_MIN)))
		goto oom;
	*out = o;
	o = NULL;
	goto done;
oom:
	rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
done:
	json_decref(o);
	state_free(&st);
	json_decref(names);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	const fit_node *x = a, *y = b;
	return strcmp(x->name, y->name);
}

/* A resource list of a node into amounts; path for messages. */
static int node_list(int64_t *out, int64_t *pods, const json_t *list, const fit_state *st, const char *what,
		     size_t i, const char *field, wmap_error *err)
{
	for (size_t r = 0; r <= st->n_res; r++) {
		const char *name = r < st->n_res ? st->res[r] : "pods";
		const json_t *v = json_object_get(list, name);
		int64_t *dst = r < st->n_res ? &out[r] : pods;
		*dst = 0;
		if (!v)
			continue;
		if (!json_is_string(v) && !json_is_integer(v))
			return wmap_error_set(err, WMAP_EINVAL, "%s: .items[%zu].status.%s.%s: a quantity must be a string",
					      what, i, field, name);
		char num[32];
		const char *s = json_string_value(v);
		if (!s) {
			snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
			s = num;
		}
		if (wmap_quantity_parse_milli(dst, s, err)) {
			wmap_error_prefix(err, "%s: .items[%zu].status.%s.%s", what, i, field, name);
			return err->code;
		}
	}
	*pods /= 1000;
	return 0;
}

struct wmap_fit_snapshot {
	fit_state st;
	json_t *names;   /* the resource names st.res borrows */
	json_t *index;   /* node name -> index into st.nodes */
	json_t *objects; /* the nodes st.nodes borrows */
	size_t cap_nodes, n_pods;
	wmap_fit_opts opts;
};

void wmap_fit_snapshot_free(wmap_fit_snapshot *s)
{
	if (!s)
		return;
	state_free(&s->st);
	json_decref(s->names);
	json_decref(s->index);
	json_decref(s->objects);
	free(s);
}

int wmap_fit_snapshot_new(wmap_fit_snapshot **out, const wmap_workload *w, const wmap_gang_plan *plan,
			  const wmap_fit_opts *opts, wmap_error *err)
{
	static const wmap_fit_opts none = { 0 };
	wmap_fit_snapshot *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	s->opts = opts ? *opts : none;
	if (!s->opts.nodes_name)
		s->opts.nodes_name = "nodes";
	if (!s->opts.pods_name)
		s->opts.pods_name = "pods";
	if (!(s->names = json_object()) || !(s->index = json_object()) || !(s->objects = json_array())) {
		wmap_fit_snapshot_free(s);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	if ((rc = classes_load(&s->st, s->names, w, plan, &s->opts, err))) {
		wmap_fit_snapshot_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int wmap_fit_snapshot_add_node(wmap_fit_snapshot *s, json_t *n, wmap_error *err)
{
	fit_state *st = &s->st;
	size_t i = st->n_nodes;
	const json_t *status = json_object_get(n, "status");
	const json_t *alloc = json_object_get(status, "allocatable");
	const char *field = "allocatable", *name = json_string_value(json_object_get(json_object_get(n, "metadata"), "name"));
	int rc;

	if (!name)
		return wmap_error_set(err, WMAP_EINVAL, "%s: .items[%zu].metadata.name: a node has no name", s->opts.nodes_name,
				      i);
	if (json_object_get(s->index, name))
		return wmap_error_set(err, WMAP_EINVAL, "%s: .items[%zu]: node \"%s\" is listed twice", s->opts.nodes_name, i,
				      name);
	if (i == FIT_MAX_NODES)
		return wmap_error_set(err, WMAP_ELIMIT, "%s: more than %d nodes", s->opts.nodes_name, FIT_MAX_NODES);
	if (i == s->cap_nodes) {
		size_t cap = s->cap_nodes ? 2 * s->cap_nodes : 64;
		fit_node *grown = realloc(st->nodes, cap * sizeof(*grown));
		if (!grown)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		st->nodes = grown;
		s->cap_nodes = cap;
	}
	fit_node *nd = &st->nodes[i];
	memset(nd, 0, sizeof(*nd));
	if (json_object_size(alloc) == 0) {
		alloc = json_object_get(status, "capacity");
		field = "capacity";
	}
	if ((rc = node_list(nd->alloc, &nd->pods_alloc, alloc, st, s->opts.nodes_name, i, field, err)))
		return rc;
	if (json_array_append(s->objects, n) || json_object_set_new(s->index, name, json_integer((json_int_t)i)))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	nd->obj = n;
	nd->name = name;
	nd->ready = wmap__fit_node_ready(n);
	st->n_nodes++;
	return 0;
}

/* What a non-terminal pod bound to a node asks for (the scheduler's informer lists pods with
 * status.phase other than Succeeded and Failed). */
int wmap_fit_snapshot_add_pod(wmap_fit_snapshot *s, const json_t *p, wmap_error *err)
{
	fit_state *st = &s->st;
	const json_t *spec = json_object_get(p, "spec"), *at;
	const char *phase = json_string_value(json_object_get(json_object_get(p, "status"), "phase"));
	const char *node = json_string_value(json_object_get(spec, "nodeName"));
	const char *uid = json_string_value(json_object_get(json_object_get(p, "metadata"), "uid"));
	int64_t amt[FIT_MAX_RES];
	size_t i = s->n_pods++;

	if (!node || !*node || (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)))
		return 0;
	if (uid && s->opts.skip_uids && json_object_get(s->opts.skip_uids, uid))
		return 0;
	if (!(at = json_object_get(s->index, node)))
		return 0; /* bound to a node the list does not have */
	fit_node *nd = &st->nodes[json_integer_value(at)];
	if (st->n_res) {
		char base[48];
		snprintf(base, sizeof(base), "/items/%zu/spec", i);
		if (wmap_pod_spec_amounts(amt, NULL, spec, base, st->res, st->n_res, err)) {
			wmap_error_prefix(err, "%s", s->opts.pods_name);
			return err->code;
		}
		for (size_t r = 0; r < st->n_res; r++)
			nd->used[r] = sat_add(nd->used[r], amt[r]);
	}
	nd->pods_used++;
	return 0;
}

static int count_reason(json_t *reasons, const char *reason)
{
	json_int_t n = json_integer_value(json_object_get(reasons, reason));
	return json_object_set_new(reasons, reason, json_integer(n + 1));
}

/* Per shape and node: the first failing filter, or the resources short now; the slots. */
static int judge(fit_state *st, unsigned char *any_elig, wmap_error *err)
{
	for (size_t k = 0; k < st->n_classes; k++) {
		fit_class *c = &st->classes[k];
		if (!(c->elig = calloc(st->n_nodes + 1, 1)))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		for (size_t n = 0; n < st->n_nodes; n++) {
			const fit_node *nd = &st->nodes[n];
			char buf[600];
			const char *why = nd->ready ? wmap__fit_static_reason(buf, sizeof(buf), c->spec, nd->obj)
						    : "node(s) were not ready";
			int bad = 0;
			if (why) {
				if (count_reason(c->reasons, why))
					return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				continue;
			}
			c->elig[n] = 1;
			any_elig[n] = 1;
			c->n_elig++;
			int64_t slots = nd->pods_alloc - nd->pods_used;
			if (slots < 1)
				bad |= count_reason(c->reasons, "Too many pods") ? 2 : 1;
			for (size_t r = 0; r < st->n_res; r++) {
				int64_t free_ = nd->alloc[r] - nd->used[r];
				if (c->req[r] <= 0)
					continue;
				if (c->req[r] > free_) {
					char reason[300];
					snprintf(reason, sizeof(reason), "Insufficient %s", st->res[r]);
					bad |= count_reason(c->reasons, reason) ? 2 : 1;
				}
				int64_t q = free_ > 0 ? free_ / c->req[r] : 0;
				if (q < slots)
					slots = q;
			}
			if (bad & 2)
				return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			if (!bad)
				c->n_room++;
			c->slots = sat_add(c->slots, slots > 0 ? slots : 0);
		}
	}
	return 0;
}

/* The scheduler's histogram: "<count> <reason>" sorted as strings, joined by ", ". */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void histogram(char *buf, size_t len, const json_t *reasons)
{
	size_t n = json_object_size(reasons), i = 0, used = 0;
	char **parts = calloc(n + 1, sizeof(*parts));
	const char *k;
	json_t *v;
	buf[0] = '\0';
	if (!parts)
		return;
	json_object_foreach((json_t *)reasons, k, v) {
		size_t l = strlen(k) + 24;
		if ((parts[i] = malloc(l)))
			snprintf(parts[i++], l, "%lld %s", (long long)json_integer_value(v), k);
	}
	qsort(parts, i, sizeof(*parts), cmp_str);
	for (size_t j = 0; j < i; j++) {
		int w = snprintf(buf + used, len - used, "%s%s", j ? ", " : "", parts[j]);
		if (w > 0 && (size_t)w < len - used)
			used += (size_t)w;
		free(parts[j]);
	}
	free(parts);
}

static json_t *component_json(const fit_state *st, const fit_class *c)
{
	char hist[4096], msg[4200];
	histogram(hist, sizeof(hist), c->reasons);
	if (c->n_room == 0)
		snprintf(msg, sizeof(msg), "0/%zu nodes are available: %s.", st->n_nodes, hist);
	else if (*hist)
		snprintf(msg, sizeof(msg), "%zu/%zu nodes have room for one now; %s.", c->n_room, st->n_nodes, hist);
	else
		snprintf(msg, sizeof(msg), "%zu/%zu nodes have room for one now.", c->n_room, st->n_nodes);
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:O, s:s}", "name", c->label, "pods", (json_int_t)c->count,
			 "eligibleNodes", (json_int_t)c->n_elig, "nodesWithRoom", (json_int_t)c->n_room, "slots",
			 (json_int_t)c->slots, "reasons", c->reasons, "message", msg);
}

/* Whether every pod of d takes at least one of c's slots wherever it goes: d asks for at
 * least what c asks for, resource by resource, and can only go where c can (a pod that big
 * on a node lowers floor(free/request) of c's size there by one or more). */
static int covers(const fit_state *st, const fit_class *d, const fit_class *c)
{
	for (size_t r = 0; r < st->n_res; r++) {
		if (d->req[r] < c->req[r])
			return 0;
	}
	for (size_t n = 0; n < st->n_nodes; n++) {
		if (d->elig[n] && !c->elig[n])
			return 0;
	}
	return 1;
}

/* The proofs of "no", in order; *why gets the first that holds, verdict stays NULL when none. */
static void prove(const char **verdict, char *why, size_t len, const fit_state *st, const unsigned char *any_elig,
		  const int64_t *need, const int64_t *free_)
{
	int64_t pods_need = 0, pods_free = 0;
	for (size_t k = 0; k < st->n_classes; k++) {
		const fit_class *c = &st->classes[k];
		pods_need += c->count;
		if (c->count > 0 && c->n_room == 0) {
			char hist[4096];
			histogram(hist, sizeof(hist), c->reasons);
			snprintf(why, len, "%s: 0/%zu nodes are available: %s.", c->label, st->n_nodes, hist);
			*verdict = "no";
			return;
		}
	}
	for (size_t r = 0; r < st->n_res; r++) {
		if (need[r] > free_[r]) {
			char f[48], n[48];
			fmt_q(f, sizeof(f), st->res[r], free_[r]);
			fmt_q(n, sizeof(n), st->res[r], need[r]);
			snprintf(why, len, "%s: %s free on the eligible nodes < %s needed", st->res[r], f, n);
			*verdict = "no";
			return;
		}
	}
	for (size_t n = 0; n < st->n_nodes; n++) {
		int64_t f = st->nodes[n].pods_alloc - st->nodes[n].pods_used;
		if (any_elig[n] && f > 0)
			pods_free += f;
	}
	if (pods_need > pods_free) {
		snprintf(why, len, "pods: %lld free pod slots on the eligible nodes < %lld needed", (long long)pods_free,
			 (long long)pods_need);
		*verdict = "no";
		return;
	}
	for (size_t k = 0; k < st->n_classes; k++) {
		const fit_class *c = &st->classes[k];
		char users[1024] = "";
		int64_t demand = 0;
		size_t r, n_users = 0;
		for (size_t d = 0; d < st->n_classes; d++) {
			if (st->classes[d].count > 0 && covers(st, &st->classes[d], c)) {
				demand = sat_add(demand, st->classes[d].count);
				size_t u = strlen(users);
				snprintf(users + u, sizeof(users) - u, "%s%s", n_users++ ? ", " : "", st->classes[d].label);
			}
		}
		if (c->count == 0 || c->slots >= demand)
			continue;
		for (r = 0; r < st->n_res && c->req[r] <= 0; r++)
			;
		char detail[512] = "";
		if (r < st->n_res) {
			int64_t own = 0;
			char f[48], q[48];
			for (size_t n = 0; n < st->n_nodes; n++) {
				int64_t x = st->nodes[n].alloc[r] - st->nodes[n].used[r];
				if (c->elig[n] && x > 0)
					own = sat_add(own, x);
			}
			fmt_q(f, sizeof(f), st->res[r], own);
			fmt_q(q, sizeof(q), st->res[r], c->req[r]);
			snprintf(detail, sizeof(detail), "; %s %s free on its %zu eligible nodes, %s per pod", f,
				 st->res[r], c->n_elig, q);
		}
		if (n_users == 1)
			snprintf(why, len, "%s: room for %lld of %lld pods%s", c->label, (long long)c->slots,
				 (long long)c->count, detail);
		else
			snprintf(why, len, "%s: room for %lld pods of its size, %lld needed by %s%s", c->label,
				 (long long)c->slots, (long long)demand, users, detail);
		*verdict = "no";
		return;
	}
}

static int verdict_json(json_t *o, const fit_state *st, const unsigned char *any_elig, wmap_error *err)
{
	int64_t need[FIT_MAX_RES], free_[FIT_MAX_RES];
	size_t ready = 0, eligible = 0, used_nodes = 0;
	const char *verdict = NULL;
	char why[4600] = "";
	json_t *comps = json_array(), *placed = NULL;
	int rc;

	need_of(need, st);
	for (size_t r = 0; r < st->n_res; r++)
		free_[r] = 0;
	for (size_t n = 0; n < st->n_nodes; n++) {
		ready += st->nodes[n].ready != 0;
		if (!any_elig[n])
			continue;
		eligible++;
		for (size_t r = 0; r < st->n_res; r++) {
			int64_t x = st->nodes[n].alloc[r] - st->nodes[n].used[r];
			free_[r] = sat_add(free_[r], x > 0 ? x : 0);
		}
	}
	for (size_t k = 0; comps && k < st->n_classes; k++) {
		if (json_array_append_new(comps, component_json(st, &st->classes[k]))) {
			json_decref(comps);
			comps = NULL;
		}
	}
	if (!comps)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	prove(&verdict, why, sizeof(why), st, any_elig, need, free_);
	if (!verdict) {
		if ((rc = wmap__fit_place(&placed, st, err))) {
			json_decref(comps);
			return rc;
		}
		if (placed) {
			json_t *seen = json_object();
			size_t i;
			json_t *p;
			json_array_foreach(placed, i, p)
				json_object_set(seen, json_string_value(json_object_get(p, "node")), json_true());
			used_nodes = json_object_size(seen);
			json_decref(seen);
			verdict = "yes";
			snprintf(why, sizeof(why), "%zu pod%s on %zu node%s", json_array_size(placed),
				 json_array_size(placed) == 1 ? "" : "s", used_nodes, used_nodes == 1 ? "" : "s");
		} else {
			verdict = "no?";
			snprintf(why, sizeof(why), "no placement found (the counts allow it; the search is a heuristic)");
		}
	}
	if (json_object_set_new(o, "verdict", json_string(verdict)) || json_object_set_new(o, "why", json_string(why)) ||
	    json_object_set_new(o, "nodes", json_pack("{s:I, s:I, s:I}", "all", (json_int_t)st->n_nodes, "ready", (json_int_t)ready, "eligible", (json_int_t)eligible)) ||
	    json_object_set_new(o, "free", amount_map(st, free_)) || json_object_set_new(o, "need", amount_map(st, need)) ||
	    json_object_set_new(o, "components", comps) || (placed && json_object_set_new(o, "placement", placed)))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	return 0;
}

int wmap_fit_snapshot_verdict(json_t **out, wmap_fit_snapshot *s, wmap_error *err)
{
	unsigned char *any_elig = NULL;
	json_t *o = json_object();
	int rc;

	*out = NULL;
	/* Name order: ties of the placement go to the first node by name, whatever the list's. */
	qsort(s->st.nodes, s->st.n_nodes, sizeof(*s->st.nodes), by_name);
	for (size_t k = 0; k < s->st.n_classes; k++) {
		fit_class *c = &s->st.classes[k];
		free(c->elig);
		c->elig = NULL;
		c->n_elig = c->n_room = 0;
		c->slots = 0;
		json_object_clear(c->reasons);
	}
	if (!o || !(any_elig = calloc(s->st.n_nodes + 1, 1)))
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	else if ((rc = judge(&s->st, any_elig, err)) == 0 && (rc = verdict_json(o, &s->st, any_elig, err)) == 0) {
		*out = o;
		o = NULL;
	}
	/* The index follows the order again, should more pods come. */
	for (size_t n = 0; n < s->st.n_nodes; n++)
		json_object_set_new(s->index, s->st.nodes[n].name, json_integer((json_int_t)n));
	free(any_elig);
	json_decref(o);
	return rc;
}

static const json_t *items_of(const json_t *list, const char *what, wmap_error *err)
{
	const json_t *items = json_is_array(list) ? list : json_object_get(list, "items");
	if (!json_is_array(items)) {
		wmap_error_set(err, WMAP_EINVAL, "%s: .items: expected a list of objects", what);
		return NULL;
	}
	return items;
}

int wmap_fit_evaluate(json_t **out, const wmap_workload *w, const wmap_gang_plan *plan, const json_t *nodes,
		      const json_t *pods, const wmap_fit_opts *opts, wmap_error *err)
{
	wmap_fit_snapshot *s = NULL;
	const json_t *ni, *pi;
	size_t i;
	json_t *v;
	int rc;

	*out = NULL;
	if ((rc = wmap_fit_snapshot_new(&s, w, plan, opts, err)))
		return rc;
	if (!(ni = items_of(nodes, s->opts.nodes_name, err)) || !(pi = items_of(pods, s->opts.pods_name, err))) {
		rc = err->code;
		goto done;
	}
	json_array_foreach(ni, i, v) {
		if ((rc = wmap_fit_snapshot_add_node(s, v, err)))
			goto done;
	}
	json_array_foreach(pi, i, v) {
		if ((rc = wmap_fit_snapshot_add_pod(s, v, err)))
			goto done;
	}
	rc = wmap_fit_snapshot_verdict(out, s, err);
done:
	wmap_fit_snapshot_free(s);
	return rc;
}
