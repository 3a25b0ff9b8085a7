/* wmap: a policy's spec.limits checked on a resolved workload (see audit_int.h).
 *
 * Limits are ResourceQuota's vocabulary applied to one workload, which only a resolver
 * knows as a whole: a TrainJob's, a RayCluster's or a Dynamo graph's pods are spread over
 * components and instances. Every instance with pods counts what one pod asks for
 * (wmap_pod_amounts: requests falling back to limits, as describe counts) times its desired
 * replicas; `pods` counts the desired replicas. Amounts are exact thousandths of a unit, so
 * "500m" against "0.5" and "4Ti" against "4096Gi" compare as the API server would. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_int.h"
#include "wmap/quantity.h"

_Static_assert(2 * WMAP_POLICY_MAX_LIMITS <= WMAP_POD_AMOUNTS_MAX,
	       "a policy's workload and pod limits are counted in one call");

#define TERMS_SHOWN 8 /* components named in a message; the rest are "+ N more" */

/* An instance with pods that the policy counts, and what one of its pods asks for. */
typedef struct counted {
	const char *component, *instance; /* instance "" for single-instance components */
	int64_t desired;
	int64_t per[WMAP_POD_AMOUNTS_MAX];
	wmap_quantity_family fam[WMAP_POD_AMOUNTS_MAX];
} counted;

typedef struct tally {
	const char *names[WMAP_POD_AMOUNTS_MAX]; /* the resources counted (not "pods") */
	size_t n_names;
	counted *inst;
	size_t n_inst;
	int64_t total[WMAP_POD_AMOUNTS_MAX];
	wmap_quantity_family fam[WMAP_POD_AMOUNTS_MAX];
	int64_t pods;
} tally;

static int64_t sat_mul(int64_t a, int64_t b)
{
	if (a <= 0 || b <= 0)
		return 0;
	return a > INT64_MAX / b ? INT64_MAX : a * b;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* The index of resource in t->names, added when new; -1 for "pods" (not a pod resource). */
static int name_index(tally *t, const char *resource)
{
	if (strcmp(resource, "pods") == 0)
		return -1;
	for (size_t i = 0; i < t->n_names; i++) {
		if (strcmp(t->names[i], resource) == 0)
			return (int)i;
	}
	t->names[t->n_names] = resource; /* the parser bounds each map, so both fit */
	return (int)t->n_names++;
}

static int is_bytes(const char *resource)
{
	return !strcmp(resource, "memory") || !strcmp(resource, "ephemeral-storage") ||
	       !strcmp(resource, "storage") || !strncmp(resource, "hugepages-", 10);
}

/* An amount as Kubernetes writes it: whole units plainly ("96"), byte counts in their
 * suffix family ("4Ti", "144G"), fractions in thousandths ("1500m"). */
static void format_amount(char *buf, size_t len, const char *resource, int64_t milli,
			  wmap_quantity_family fam)
{
	if (milli % 1000 != 0)
		wmap_quantity_format_cpu(buf, len, milli);
	else if (fam != WMAP_QUANTITY_DECIMAL_SI || is_bytes(resource))
		wmap_quantity_format_bytes(buf, len, milli / 1000, fam);
	else
		snprintf(buf, len, "%" PRId64, milli / 1000);
}

/* Every instance with pods of the components p matches, with its per-pod amounts. */
static int count(tally *t, const wmap_workload *w, const wmap_policy *p, wmap_error *err)
{
	size_t cap = 0;
	for (size_t k = 0; k < w->n_nodes; k++)
		cap += w->nodes[k].n_instances;
	if (cap && !(t->inst = calloc(cap, sizeof(*t->inst))))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	for (size_t k = 0; k < w->n_nodes; k++) {
		const wmap_node *n = &w->nodes[k];
		if (!wmap_component_has_pods(n->def) || !wmap_policy_matches_component(p, n->def->name))
			continue;
		for (size_t i = 0; i < n->n_instances; i++) {
			const wmap_instance *in = &n->instances[i];
			if (!in->has_pod || in->desired <= 0)
				continue; /* no pods: nothing asked for */
			counted *c = &t->inst[t->n_inst];
			int rc = wmap_pod_amounts(c->per, c->fam, &in->pod, t->names, t->n_names, err);
			if (rc) {
				wmap_error_prefix(err, "component '%s'", n->def->name);
				return rc;
			}
			c->component = n->def->name;
			c->instance = in->id ? in->id : "";
			c->desired = in->desired;
			t->n_inst++;
			t->pods = sat_add(t->pods, in->desired);
			for (size_t r = 0; r < t->n_names; r++) {
				if (t->total[r] == 0)
					t->fam[r] = c->fam[r];
				t->total[r] = sat_add(t->total[r], sat_mul(c->per[r], c->desired));
			}
		}
	}
	return 0;
}

/* "TrainJob team-a/llama" (cluster-scoped: "Kind name"). */
static void workload_words(char *buf, size_t len, const wmap_workload *w, const char *ns)
{
	const char *name = w->name ? w->name : w->generate_name ? w->generate_name
								: "(no name)";
	if (ns && *ns)
		snprintf(buf, len, "%s %s/%s", w->kind ? w->kind : "?", ns, name);
	else
		snprintf(buf, len, "%s %s", w->kind ? w->kind : "?", name);
}

/* The components behind a workload figure: "master 1 x 8 + worker 11 x 8" (r < 0: pods,
 * "master 1 + worker 11"), at most TERMS_SHOWN of them. */
static void breakdown(char *buf, size_t len, const tally *t, int r)
{
	size_t n = 0, shown = 0, left = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < t->n_inst; i++) {
		const counted *c = &t->inst[i];
		char per[40] = "";
		if (r >= 0 && c->per[r] == 0)
			continue;
		if (shown == TERMS_SHOWN) {
			left++;
			continue;
		}
		if (r >= 0) {
			char a[32];
			format_amount(a, sizeof(a), t->names[r], c->per[r], c->fam[r]);
			snprintf(per, sizeof(per), " x %s", a);
		}
		int wr = snprintf(buf + n, n < len ? len - n : 0, "%s%s%s%s %" PRId64 "%s",
				  shown ? " + " : "", c->component, c->instance[0] ? "/" : "",
				  c->instance, c->desired, per);
		n += wr > 0 ? (size_t)wr : 0;
		shown++;
	}
	if (left && n < len)
		snprintf(buf + n, len - n, " + %zu more", left);
}

/* Fills the violation v of p; 0, or WMAP_ENOMEM. */
static int fill(wmap_violation *v, const wmap_policy *p, const char *component,
		const char *instance, const char *field, const char *want, const char *have,
		const char *message, wmap_error *err)
{
	v->actions = p->actions;
	v->policy = strdup(p->name);
	v->component = component ? strdup(component) : NULL;
	v->instance = instance && *instance ? strdup(instance) : NULL;
	v->field = strdup(field);
	v->want = strdup(want);
	v->have = strdup(have);
	v->message = strdup(message);
	if (!v->policy || (component && !v->component) || (instance && *instance && !v->instance) ||
	    !v->field || !v->want || !v->have || !v->message)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	return 0;
}

static int check_workload(wmap_audit_result *res, const tally *t, const wmap_policy *p,
			  const char *who, wmap_error *err)
{
	for (size_t l = 0; l < p->n_workload_limits; l++) {
		const wmap_policy_limit *lim = &p->workload_limits[l];
		int r = -1;
		for (size_t i = 0; i < t->n_names; i++)
			r = strcmp(t->names[i], lim->resource) == 0 ? (int)i : r;
		int64_t have = r < 0 ? sat_mul(t->pods, 1000) : t->total[r];
		if (have <= lim->milli)
			continue;
		char field[300], fig[32], parts[400], msg[1200];
		snprintf(field, sizeof(field), "limits.workload[%s]", lim->resource);
		if (r < 0) {
			snprintf(fig, sizeof(fig), "%" PRId64, t->pods);
			breakdown(parts, sizeof(parts), t, -1);
			snprintf(msg, sizeof(msg), "policy %s: %s: %s pods (limit %s): %s", p->name, who,
				 fig, lim->text, parts);
		} else {
			format_amount(fig, sizeof(fig), lim->resource, have, t->fam[r]);
			breakdown(parts, sizeof(parts), t, r);
			snprintf(msg, sizeof(msg), "policy %s: %s: %s %s requested (limit %s): %s",
				 p->name, who, fig, lim->resource, lim->text, parts);
		}
		wmap_violation *v = wmap__audit_push(res);
		if (!v)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		int rc = fill(v, p, NULL, NULL, field, lim->text, fig, msg, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int check_pods(wmap_audit_result *res, const tally *t, const wmap_policy *p,
		      const char *who, wmap_error *err)
{
	for (size_t i = 0; i < t->n_inst; i++) {
		const counted *c = &t->inst[i];
		for (size_t l = 0; l < p->n_pod_limits; l++) {
			const wmap_policy_limit *lim = &p->pod_limits[l];
			size_t r = 0;
			while (strcmp(t->names[r], lim->resource) != 0)
				r++; /* every pod limit was named in the tally */
			if (c->per[r] <= lim->milli)
				continue;
			char field[300], fig[32], inst[300] = "", msg[1200];
			snprintf(field, sizeof(field), "limits.pod[%s]", lim->resource);
			format_amount(fig, sizeof(fig), lim->resource, c->per[r], c->fam[r]);
			if (c->instance[0])
				snprintf(inst, sizeof(inst), " (instance %s)", c->instance);
			snprintf(msg, sizeof(msg), "policy %s: %s: component %s%s: %s %s per pod (limit "
						   "%s)",
				 p->name, who, c->component, inst, fig, lim->resource, lim->text);
			wmap_violation *v = wmap__audit_push(res);
			if (!v)
				return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			int rc = fill(v, p, c->component, c->instance, field, lim->text, fig, msg, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int wmap__audit_limits(wmap_audit_result *res, const wmap_workload *w, const wmap_policy *p,
		       const char *ns, wmap_error *err)
{
	tally t;
	char who[600];
	int rc;
	memset(&t, 0, sizeof(t));
	for (size_t l = 0; l < p->n_workload_limits; l++)
		name_index(&t, p->workload_limits[l].resource);
	for (size_t l = 0; l < p->n_pod_limits; l++)
		name_index(&t, p->pod_limits[l].resource);
	workload_words(who, sizeof(who), w, ns);
	if ((rc = count(&t, w, p, err)) == 0 && (rc = check_workload(res, &t, p, who, err)) == 0)
		rc = check_pods(res, &t, p, who, err);
	free(t.inst);
	return rc;
}
