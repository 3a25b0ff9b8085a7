/* wmap-webhook: the leader's background audit. Every workload of every covered kind that a
 * policy with validation actions may match is listed (pages of 500, under a token bucket of
 * --audit-qps requests a second), checked with wmap_audit_object, and the results are
 * written as one policy report per namespace (include/wmap/report.h): created, updated with
 * the resourceVersion it was read with (a 409 reads it again), left alone when unchanged,
 * and deleted when the namespace has nothing left to report.
 *
 * The auditor is a controller (wh_audit_controller, started by main.c) with its handle, its
 * thread and its API client. A round runs at start, after every definition or policy
 * change (main.c's kick), when this replica takes the Lease, and every --audit-interval;
 * only the Lease holder runs one. A round is three steps: the gate (leader, synced,
 * anything to check), the list (every page judged into entries by namespace, holding the
 * state in force) and the write (the reports and the gauge, holding nothing). A round whose
 * definitions or policies change while it lists stops at the next page and starts again on
 * the new set; a change of other parts of the state is followed (wh_inforce_follow), so a
 * publish, which waits for the readers of the state it replaces, waits for one page at
 * most. A list that fails for another reason than 403/404 leaves every report as it was: a
 * report is never rewritten from a partial view. A kind the webhook may not list (403) or
 * that is not served (404) is skipped, logged once, and counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "webhook.h"
#include "wmap/audit.h"
#include "wmap/json_text.h"
#include "wmap/kube/client.h"
#include "wmap/kube/discovery.h"
#include "wmap/report.h"

#define PAGE 500
#define WRITE_TRIES 3
#define RETRY_S 10.0 /* after a failed round */

typedef struct auditor {
	const wh_env *env;     /* env->opt, env->inforce, env->leader: audits only while it leads */
	const wh_options *opt; /* env->opt */
	wmap_kube_client *client;
	wmap_discovery *disc;
	pthread_t thread;
	pthread_mutex_t lock; /* kick, and the gauge below */
	pthread_cond_t cond;
	int kick, started;
	atomic_int stop;
	double tokens; /* the request budget */
	struct timespec refilled;
	json_t *gauge;    /* "policy\naction\nnamespace" -> violating workloads, last round */
	json_t *skipped;  /* "group/resource" -> 1 for kinds already logged as not listable */
	int report_noted; /* the report API was found not served (logged once) */
	int reports_seen; /* the last round found or wrote a report */
	atomic_uint rounds, round_failures, aborted, writes, deletes, conflicts, write_errors;
	atomic_uint skipped_kinds, eval_errors;
	atomic_ullong requests, workloads, last_workloads, last_requests, last_us;
} auditor;

static double now_s(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Waits for a token of the bucket (rate --audit-qps, burst the same). */
static void take_token(auditor *A)
{
	double qps = (double)A->opt->audit_qps;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	double dt = (double)(t.tv_sec - A->refilled.tv_sec) + (double)(t.tv_nsec - A->refilled.tv_nsec) / 1e9;
	A->refilled = t;
	A->tokens += dt * qps;
	if (A->tokens > qps)
		A->tokens = qps;
	if (A->tokens < 1) {
		double wait = (1 - A->tokens) / qps;
		struct timespec w = { (time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9) };
		nanosleep(&w, NULL);
		A->tokens = 1;
		clock_gettime(CLOCK_MONOTONIC, &A->refilled);
	}
	A->tokens -= 1;
}

static int request(auditor *A, json_t **out, long *status, const char *method, const char *path,
		   const char *body, wmap_error *err)
{
	take_token(A);
	return wmap_kube_request(out, status, A->client, method, path,
				 body ? "application/json" : NULL, body, err);
}

/* 1 while the round may go on: not stopped, still the leader, the same definitions and
 * policies in force (*st follows the state in force when only other parts changed). */
static int still_current(auditor *A, wh_state **st)
{
	if (atomic_load(&A->stop) || !wh_leader_is(A->env->leader))
		return 0;
	return wh_inforce_follow(A->env->inforce, st, WH_STATE_DEFS | WH_STATE_POLICIES);
}

/* 1 when some policy with actions could match kind ("Kind.group"). */
static int kind_audited(const wmap_policy_set *set, const char *kind)
{
	for (size_t i = 0; set && i < set->n; i++) {
		const wmap_policy *p = &set->policies[i];
		if (wmap_policy_needs_validation(p) && wmap_policy_matches_kind(p, kind))
			return 1;
	}
	return 0;
}

static void note_skipped(auditor *A, const char *label, long status, const char *msg)
{
	atomic_fetch_add(&A->skipped_kinds, 1);
	if (json_object_get(A->skipped, label))
		return;
	json_object_set_new(A->skipped, label, json_true());
	json_t *f = json_pack("{s:s, s:i, s:s}", "resource", label, "status", (int)status, "error", msg);
	wh_log("warn", "audit: cannot list this kind; its workloads are not in the reports", f);
	json_decref(f);
}

static int keep_entry(json_t *byns, const char *ns, json_t *e);

/* Adds one workload's result to its namespace's entries in byns. */
static int add_result(json_t *byns, const json_t *obj, const wmap_audit_result *r)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	if (!ns || !*ns || !json_is_string(json_object_get(md, "name")))
		return 0; /* cluster-scoped: no namespace report to put it in */
	json_t *w = json_pack("{s:O, s:O, s:O}", "apiVersion", json_object_get(obj, "apiVersion"),
			      "kind", json_object_get(obj, "kind"), "name", json_object_get(md, "name"));
	json_t *pass = json_array(), *fail = json_array();
	json_t *e = w && pass && fail ? json_pack("{s:o, s:o, s:o}", "workload", w, "pass", pass, "fail", fail)
				      : NULL;
	if (!e) {
		json_decref(w);
		json_decref(pass);
		json_decref(fail);
		return WMAP_ENOMEM;
	}
	if (json_is_string(json_object_get(md, "uid")))
		json_object_set(w, "uid", json_object_get(md, "uid"));
	for (size_t i = 0; i < r->n_policies; i++) {
		int failed = 0;
		for (size_t j = 0; j < r->n && !failed; j++)
			failed = strcmp(r->violations[j].policy, r->policies[i]) == 0;
		if (!failed)
			json_array_append_new(pass, json_string(r->policies[i]));
	}
	for (size_t j = 0; j < r->n; j++) {
		const wmap_violation *v = &r->violations[j];
		json_t *acts = json_array();
		static const char *const names[] = { "Deny", "Warn", "Audit" };
		for (unsigned b = 0; b < 3; b++)
			if (v->actions & (1u << b))
				json_array_append_new(acts, json_string(names[b]));
		json_array_append_new(fail, json_pack("{s:s, s:o, s:s}", "policy", v->policy, "actions",
						      acts, "message", v->message ? v->message : v->policy));
	}
	return keep_entry(byns, ns, e);
}

/* A workload that could not be evaluated: an error result for every policy with
 * validation actions that applies to it by kind, namespace and labels, so that a result it
 * had does not silently vanish from the report. */
static int add_error(json_t *byns, const json_t *obj, const wmap_policy_set *set, const char *msg)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	char kind[300];
	if (!ns || !*ns || !json_is_string(json_object_get(md, "name")))
		return 0;
	wmap_admission_kind(kind, sizeof(kind), obj);
	json_t *errs = json_array();
	json_t *e = errs ? json_pack("{s:{s:O, s:O, s:O}, s:o}", "workload", "apiVersion",
				     json_object_get(obj, "apiVersion"), "kind", json_object_get(obj, "kind"),
				     "name", json_object_get(md, "name"), "error", errs)
			 : NULL;
	if (!e)
		return WMAP_ENOMEM;
	if (json_is_string(json_object_get(md, "uid")))
		json_object_set(json_object_get(e, "workload"), "uid", json_object_get(md, "uid"));
	for (size_t i = 0; set && i < set->n; i++) {
		const wmap_policy *p = &set->policies[i];
		if (wmap_policy_needs_validation(p) &&
		    wmap_policy_matches(p, kind, ns, json_object_get(md, "labels"), WMAP_POLICY_OP_CREATE))
			json_array_append_new(errs, json_pack("{s:s, s:s}", "policy", p->name, "message", msg));
	}
	if (json_array_size(errs) == 0) {
		json_decref(e);
		return 0;
	}
	return keep_entry(byns, ns, e);
}

/* Appends entry e (taken over) to namespace ns's list in byns. */
static int keep_entry(json_t *byns, const char *ns, json_t *e)
{
	/* Kept as compact text until its namespace's report is built: a fraction of the memory
	 * of the tree (measured on 10,000 workloads with 9 violations each: see
	 * tests/bench/README.md), read back once per round. */
	size_t len = 0;
	char *text = wmap_json_text(e, &len);
	json_decref(e);
	json_t *list = json_object_get(byns, ns);
	if (!list) {
		list = json_array();
		json_object_set_new(byns, ns, list);
	}
	int rc = text && json_array_append_new(list, json_stringn_nocheck(text, len)) == 0 ? 0 : WMAP_ENOMEM;
	free(text);
	return rc;
}

/* The entries of one namespace as objects again (a new array, NULL on ENOMEM). */
static json_t *expand(const json_t *list)
{
	json_t *out = json_array(), *v;
	size_t i;
	json_array_foreach(list, i, v) {
		json_t *e = wmap_json_parse(json_string_value(v), json_string_length(v), NULL);
		if (!e || json_array_append_new(out, e) != 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* Lists one resource page by page into byns. 0; 1 when the kind is skipped (403/404);
 * 2 when the round must stop (swap, stop, Lease lost); negative on other failures. */
static int list_kind(auditor *A, json_t *byns, const wmap_api_resource *res, wmap_engine *eng,
		     const wmap_admission_config *cfg, wh_state **st, wmap_error *err)
{
	char *base = wmap_resource_path(res, NULL, NULL), label[300];
	char *cont = NULL;
	int rc = 0;
	wmap_resource_label(label, sizeof(label), res);
	if (!base)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	do {
		char path[4096];
		char *esc = cont ? wmap_kube_query_escape(cont) : NULL;
		snprintf(path, sizeof(path), "%s?limit=%d%s%s", base, PAGE, esc ? "&continue=" : "",
			 esc ? esc : "");
		free(esc);
		free(cont);
		cont = NULL;
		json_t *page = NULL, *item;
		long status = 0;
		if (request(A, &page, &status, "GET", path, NULL, err) != 0) {
			if (status == 403 || status == 404) {
				note_skipped(A, label, status, err->message);
				rc = 1;
			} else {
				rc = rc ? rc : WMAP_EIO;
			}
			break;
		}
		size_t i;
		json_array_foreach(json_object_get(page, "items"), i, item) {
			wmap_audit_result r;
			wmap_error e2;
			char av[300];
			/* A list's items may lack apiVersion and kind; the definition needs them. */
			snprintf(av, sizeof(av), "%s%s%s", res->group, res->group[0] ? "/" : "", res->version);
			json_object_set_new(item, "apiVersion", json_string(av));
			json_object_set_new(item, "kind", json_string(res->kind));
			int arc = wmap_audit_object(&r, eng, cfg, item, WMAP_POLICY_OP_CREATE, &e2);
			atomic_fetch_add(&A->workloads, 1);
			if (arc == 0 && !r.owned && r.n_policies > 0 && add_result(byns, item, &r) != 0)
				arc = WMAP_ENOMEM;
			else if (arc != 0 && arc != WMAP_ENODEF && arc != WMAP_ENOMEM) {
				atomic_fetch_add(&A->eval_errors, 1);
				if (add_error(byns, item, cfg->policies, e2.message) != 0)
					arc = WMAP_ENOMEM;
			}
			wmap_audit_result_free(&r);
			if (arc == WMAP_ENOMEM) {
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				break;
			}
		}
		const char *c = json_string_value(json_object_get(json_object_get(page, "metadata"), "continue"));
		if (rc == 0 && c && *c && !(cont = strdup(c)))
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		json_decref(page);
		if (rc == 0 && !still_current(A, st))
			rc = 2;
	} while (rc == 0 && cont);
	free(cont);
	free(base);
	return rc;
}

/* The reports wmap wrote, by namespace; NULL when the report API is not served (*served 0)
 * or on failure (err set). */
static json_t *stored_reports(auditor *A, int *served, wmap_error *err)
{
	wmap_report_api api = A->opt->report_api;
	json_t *byns = json_object(), *item;
	char *cont = NULL;
	*served = 1;
	do {
		char path[4096];
		char *esc = cont ? wmap_kube_query_escape(cont) : NULL;
		snprintf(path, sizeof(path), "/apis/%s/%s?labelSelector=app.kubernetes.io%%2Fmanaged-by%%3D%s&limit=%d%s%s",
			 wmap_report_api_version(api), wmap_report_plural(api), WMAP_REPORT_MANAGED_BY,
			 PAGE, esc ? "&continue=" : "", esc ? esc : "");
		free(esc);
		free(cont);
		cont = NULL;
		json_t *page = NULL;
		long status = 0;
		if (request(A, &page, &status, "GET", path, NULL, err) != 0) {
			*served = status != 404;
			json_decref(byns);
			return NULL;
		}
		size_t i;
		json_array_foreach(json_object_get(page, "items"), i, item) {
			const json_t *md = json_object_get(item, "metadata");
			const char *ns = json_string_value(json_object_get(md, "namespace"));
			const char *name = json_string_value(json_object_get(md, "name"));
			if (ns && name && strcmp(name, WMAP_REPORT_NAME) == 0)
				json_object_set(byns, ns, item);
		}
		const char *c = json_string_value(json_object_get(json_object_get(page, "metadata"), "continue"));
		cont = c && *c ? strdup(c) : NULL;
		json_decref(page);
	} while (cont);
	return byns;
}

static void report_path(auditor *A, char *buf, size_t len, const char *ns, int named)
{
	wmap_report_api api = A->opt->report_api;
	snprintf(buf, len, "/apis/%s/namespaces/%s/%s%s%s", wmap_report_api_version(api), ns,
		 wmap_report_plural(api), named ? "/" : "", named ? WMAP_REPORT_NAME : "");
}

/* Writes ns's report from entries, starting from stored (borrowed, may be NULL). */
static void write_report(auditor *A, const char *ns, const json_t *entries, json_t *stored)
{
	wmap_error err;
	char path[512];
	json_incref(stored);
	for (int tries = 0; tries < WRITE_TRIES; tries++) {
		json_t *built = NULL;
		char *body = NULL;
		long status = 0;
		int rc;
		if (wmap_report_build(&built, A->opt->report_api, ns, entries, stored,
				      (long long)now_s(CLOCK_REALTIME), &err) != 0) {
			atomic_fetch_add(&A->write_errors, 1);
			wh_logf("error", "audit: report for namespace %s: %s", ns, err.message);
			break;
		}
		if (stored && wmap_report_same(stored, built)) {
			json_decref(built);
			break; /* nothing changed: no write */
		}
		if (stored)
			json_object_set(json_object_get(built, "metadata"), "resourceVersion",
					json_object_get(json_object_get(stored, "metadata"), "resourceVersion"));
		body = wmap_json_text(built, NULL);
		json_decref(built);
		if (!body || !wh_leader_is(A->env->leader)) {
			free(body);
			break;
		}
		report_path(A, path, sizeof(path), ns, stored != NULL);
		rc = request(A, NULL, &status, stored ? "PUT" : "POST", path, body, &err);
		free(body);
		if (rc == 0) {
			atomic_fetch_add(&A->writes, 1);
			break;
		}
		if (status != 409 && status != 404) {
			atomic_fetch_add(&A->write_errors, 1);
			wh_logf("warn", "audit: cannot write the report of namespace %s: %s", ns, err.message);
			break;
		}
		/* Changed, created or deleted under us: read it again and build on what is there. */
		atomic_fetch_add(&A->conflicts, 1);
		json_decref(stored);
		stored = NULL;
		report_path(A, path, sizeof(path), ns, 1);
		if (request(A, &stored, &status, "GET", path, NULL, &err) != 0 && status != 404) {
			atomic_fetch_add(&A->write_errors, 1);
			break;
		}
	}
	json_decref(stored);
}

static void delete_report(auditor *A, const char *ns)
{
	wmap_error err;
	char path[512];
	long status = 0;
	report_path(A, path, sizeof(path), ns, 1);
	if (!wh_leader_is(A->env->leader))
		return;
	if (request(A, NULL, &status, "DELETE", path, NULL, &err) == 0)
		atomic_fetch_add(&A->deletes, 1);
	else if (status != 404) {
		atomic_fetch_add(&A->write_errors, 1);
		wh_logf("warn", "audit: cannot delete the report of namespace %s: %s", ns, err.message);
	}
}

/* Series of the gauge at most; past it a new namespace is folded into namespace="other"
 * (policies are the operator's own, namespaces grow with the cluster). */
#define MAX_GAUGE_SERIES 512

/* Adds one namespace's violating workloads per policy and action to the gauge g. */
static void count_violations(json_t *g, const char *ns, const json_t *entries)
{
	static const char *const names[] = { "deny", "warn", "audit" };
	json_t *e, *f, *a;
	size_t i, j, k;
	json_array_foreach(entries, i, e) {
		const json_t *fails = json_object_get(e, "fail");
		unsigned seen[64] = { 0 }; /* actions counted per policy of this workload */
		json_array_foreach(fails, j, f) {
			const char *pol = json_string_value(json_object_get(f, "policy"));
			size_t first = j; /* the policy's first failure on this workload */
			for (size_t x = 0; x < j; x++)
				if (strcmp(pol, json_string_value(json_object_get(json_array_get(fails, x), "policy"))) == 0) {
					first = x;
					break;
				}
			json_array_foreach(json_object_get(f, "actions"), k, a) {
				const char *an = json_string_value(a);
				int idx = strcmp(an, "Deny") == 0 ? 0 : strcmp(an, "Warn") == 0 ? 1
												: 2;
				if (first < 64 && (seen[first] & (1u << idx)))
					continue; /* one workload counts once per policy and action */
				if (first < 64)
					seen[first] |= 1u << idx;
				char key[1024];
				snprintf(key, sizeof(key), "%s\n%s\n%s", pol, names[idx], ns);
				if (!json_object_get(g, key) && json_object_size(g) >= MAX_GAUGE_SERIES - 8)
					snprintf(key, sizeof(key), "%s\n%s\nother", pol, names[idx]);
				json_t *c = json_object_get(g, key);
				json_object_set_new(g, key, json_integer(json_integer_value(c) + 1));
			}
		}
	}
}

/* The round's gate: 1 with *st held when a round is to run now; 0 when there is nothing to
 * do (not the leader, nothing to check and nothing written that could be stale); -1 when it
 * must wait (not synced yet: the round stays due). */
static int round_gate(auditor *A, wh_state **st)
{
	*st = NULL;
	if (!wh_leader_is(A->env->leader))
		return 0;
	/* Before the first sync the policies in force may be only part of them: a round now
	 * would delete the reports of the rest. */
	if (!wh_inforce_ready(A->env->inforce))
		return -1;
	if (!(*st = wh_inforce_acquire(A->env->inforce)))
		return 0;
	const wmap_policy_set *set = (*st)->policies;
	int validating = 0;
	for (size_t i = 0; set && i < set->n; i++)
		validating |= wmap_policy_needs_validation(&set->policies[i]);
	if (!validating && !A->reports_seen && atomic_load(&A->rounds) > 0) {
		/* Nothing to check and nothing written that could be stale: no request at all
		 * (a cluster whose Kartas change often, without such policies, costs nothing). */
		wh_inforce_release(*st);
		*st = NULL;
		return 0;
	}
	return 1;
}

/* The round's list: every served kind of the definitions in *st that a policy with actions
 * may match, one list per group and resource, judged into byns (namespace -> entries). 0
 * done; 1 stopped (a new set, a stop or a lost Lease: the next round starts over); negative
 * with err set on failure. *st may follow the state in force (still_current). */
static int round_list(auditor *A, wh_state **st, json_t *byns, wmap_error *err)
{
	const wmap_policy_set *set = (*st)->policies;
	const wmap_registry *reg = (*st)->defs->reg;
	wmap_admission_config cfg = { .scheduler = A->opt->scheduler, .queue = A->opt->queue, .policies = set };
	wmap_engine *eng = NULL;
	json_t *listed = NULL;
	int rc;
	if ((rc = wmap_engine_new(&eng, reg, err)) != 0)
		return rc;
	take_token(A);
	if ((rc = !A->disc ? wmap_discovery_load(&A->disc, A->client, 1, err)
			   : wmap_discovery_refresh(A->disc, A->client, err)) != 0)
		goto done;
	if (!(listed = json_object())) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < wmap_registry_count(reg) && rc >= 0 && rc != 2; i++) {
		const wmap_gvk *g = wmap_registry_get(reg, i)->components[0].kind;
		char kind[300], key[300];
		if (!g)
			continue;
		snprintf(kind, sizeof(kind), "%s%s%s", g->kind, g->group[0] ? "." : "", g->group);
		const wmap_api_resource *res = wmap_discovery_find_kind(A->disc, g->group, g->version, g->kind);
		if (!res || !kind_audited(set, kind))
			continue;
		/* One list per group and resource, whichever version the definitions name first. */
		snprintf(key, sizeof(key), "%s/%s", res->group, res->plural);
		if (json_object_get(listed, key))
			continue;
		json_object_set_new(listed, key, json_true());
		rc = list_kind(A, byns, res, eng, &cfg, st, err);
	}
	if (rc == 2) {
		atomic_fetch_add(&A->aborted, 1);
		rc = 1;
	} else if (rc > 0) {
		rc = 0; /* the last kind was skipped (403/404) */
	}
done:
	json_decref(listed);
	wmap_engine_free(eng);
	return rc;
}

/* The round's write: each namespace's report from byns (created, updated, left alone or,
 * for a namespace with nothing left, deleted) and the violations gauge. 0, or -1 with err
 * set when the stored reports cannot be read (every report stays as it was). */
static int round_write(auditor *A, json_t *byns, wmap_error *err)
{
	int served = 1;
	json_t *stored = stored_reports(A, &served, err), *g = NULL, *v;
	const char *ns;
	if (!stored) {
		if (served)
			return -1;
		if (!A->report_noted)
			wh_logf("warn", "audit: %s/%s is not served; violations are counted in the "
					"metrics but no reports are written",
				wmap_report_api_version(A->opt->report_api),
				wmap_report_plural(A->opt->report_api));
		A->report_noted = 1;
	} else {
		A->report_noted = 0;
	}
	if (!(g = json_object())) {
		json_decref(stored);
		wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		return -1;
	}
	/* One namespace at a time: its entries are read back, reported, counted, dropped. */
	json_object_foreach(byns, ns, v) {
		json_t *entries = expand(v);
		if (!entries) {
			json_decref(g);
			json_decref(stored);
			wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			return -1;
		}
		if (stored)
			write_report(A, ns, entries, json_object_get(stored, ns));
		count_violations(g, ns, entries);
		json_decref(entries);
	}
	json_object_foreach(stored, ns, v)
		if (!json_object_get(byns, ns))
			delete_report(A, ns);
	A->reports_seen = json_object_size(byns) > 0 || json_object_size(stored) > 0;
	pthread_mutex_lock(&A->lock);
	json_decref(A->gauge);
	A->gauge = g;
	pthread_mutex_unlock(&A->lock);
	json_decref(stored);
	return 0;
}

/* One round (gate, list, write): 0 done (or nothing to do), 1 stopped by a swap or not
 * synced yet, -1 failed. */
static int round_once(auditor *A)
{
	wmap_error err;
	json_t *byns = NULL;
	wh_state *st = NULL;
	int rc = round_gate(A, &st);
	if (rc <= 0)
		return rc < 0 ? 1 : 0;
	double t0 = now_s(CLOCK_MONOTONIC);
	/* Every request of the client counts: discovery, retries, lists and writes. */
	unsigned req0 = wmap_kube_requests(A->client);
	unsigned long long w0 = atomic_load(&A->workloads);
	if (!(byns = json_object()))
		rc = wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
	else
		rc = round_list(A, &st, byns, &err);
	wh_inforce_release(st); /* the writes need none of it */
	if (rc == 0)
		rc = round_write(A, byns, &err);
	if (rc == 0) {
		atomic_fetch_add(&A->rounds, 1);
		atomic_store(&A->last_us, (unsigned long long)((now_s(CLOCK_MONOTONIC) - t0) * 1e6));
		atomic_store(&A->last_workloads, atomic_load(&A->workloads) - w0);
		atomic_store(&A->last_requests, wmap_kube_requests(A->client) - req0);
		json_t *f = json_pack("{s:I, s:I, s:i, s:f}", "workloads", (json_int_t)atomic_load(&A->last_workloads),
				      "requests", (json_int_t)atomic_load(&A->last_requests), "namespaces",
				      (int)json_object_size(byns), "durationMs", (now_s(CLOCK_MONOTONIC) - t0) * 1e3);
		wh_log("info", "audit round done", f);
		json_decref(f);
	} else if (rc < 0) {
		rc = -1;
		atomic_fetch_add(&A->round_failures, 1);
		wh_logf("warn", "audit round failed; the reports stay as they were: %s", err.message);
	}
	atomic_fetch_add(&A->requests, wmap_kube_requests(A->client) - req0);
	json_decref(byns);
	return rc;
}

/* Rounds run when one is due (start, a kick, the interval) and this replica leads; a
 * replica that is not the leader checks again every second, and taking the Lease kicks it,
 * so a new leader audits at once. */
static void *audit_main(void *arg)
{
	auditor *A = arg;
	int due = 1;
	double next = 0;
	pthread_mutex_lock(&A->lock);
	while (!atomic_load(&A->stop)) {
		due |= A->kick || now_s(CLOCK_MONOTONIC) >= next;
		A->kick = 0;
		if (due && wh_leader_is(A->env->leader)) {
			pthread_mutex_unlock(&A->lock);
			int rc = round_once(A);
			pthread_mutex_lock(&A->lock);
			double wait = (double)A->opt->audit_interval_ms / 1e3;
			if (rc < 0 && wait > RETRY_S)
				wait = RETRY_S; /* failed: try again sooner than the interval */
			next = now_s(CLOCK_MONOTONIC) + wait;
			due = rc > 0; /* stopped by a swap, or not synced yet: again soon */
			if (A->kick)
				continue;
		}
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 1;
		pthread_cond_timedwait(&A->cond, &A->lock, &t);
	}
	pthread_mutex_unlock(&A->lock);
	return NULL;
}

static void audit_metrics(void *ctx, wmap_buf *o);
static void audit_stop(void *self);

static int audit_start(void **self, const wh_env *env, wmap_error *err)
{
	wmap_kube_opts ko = { .timeout_ms = 30000, .max_retries = 3, .user_agent = "wmap-webhook/" WMAP_VERSION };
	auditor *A = calloc(1, sizeof(*A));
	int rc;
	*self = NULL;
	if (!A)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	pthread_mutex_init(&A->lock, NULL);
	pthread_cond_init(&A->cond, NULL);
	A->env = env;
	A->opt = env->opt;
	A->tokens = (double)env->opt->audit_qps;
	clock_gettime(CLOCK_MONOTONIC, &A->refilled);
	if (!(A->skipped = json_object())) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = wmap_kube_client_new(&A->client, env->kube, &ko, err)) != 0)
		goto fail;
	if ((rc = wh_metrics_provide("/metrics", audit_metrics, A)) != 0) {
		wmap_error_set(err, rc, "too many metrics providers");
		goto fail;
	}
	A->kick = 1;
	if (pthread_create(&A->thread, NULL, audit_main, A) != 0) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "cannot start the audit thread");
		goto fail;
	}
	A->started = 1;
	*self = A;
	return 0;
fail:
	audit_stop(A);
	return rc;
}

/* Definitions or policies changed, or this replica leads now: audit again now. */
static void audit_kick(void *self, unsigned what)
{
	auditor *A = self;
	if (!(what & (WH_STATE_DEFS | WH_STATE_POLICIES | WH_KICK_LEAD)))
		return;
	pthread_mutex_lock(&A->lock);
	A->kick = 1;
	pthread_cond_signal(&A->cond);
	pthread_mutex_unlock(&A->lock);
}

static void audit_stop(void *self)
{
	auditor *A = self;
	if (!A)
		return;
	atomic_store(&A->stop, 1);
	pthread_mutex_lock(&A->lock);
	pthread_cond_signal(&A->cond);
	pthread_mutex_unlock(&A->lock);
	if (A->started)
		pthread_join(A->thread, NULL);
	wh_metrics_withdraw(A);
	wmap_discovery_free(A->disc);
	wmap_kube_client_free(A->client);
	json_decref(A->gauge);
	json_decref(A->skipped);
	pthread_mutex_destroy(&A->lock);
	pthread_cond_destroy(&A->cond);
	free(A);
}

const wh_controller wh_audit_controller = { "auditor", audit_start, audit_kick, audit_stop };

/* The audit's families (wh_metrics_fn). */
static void audit_metrics(void *ctx, wmap_buf *o)
{
	auditor *A = ctx;
	const char *key;
	json_t *v;
	wh_prom_family(o, "wmap_audit_violations", "gauge",
		       "Workloads in the cluster that violate a policy as of the last audit round, by "
		       "policy, action (deny, warn, audit: each of the policy's validationActions) and "
		       "namespace.");
	pthread_mutex_lock(&A->lock);
	json_object_foreach(A->gauge, key, v) {
		char tmp[1024];
		snprintf(tmp, sizeof(tmp), "%s", key);
		char *a = strchr(tmp, '\n'), *n = a ? strchr(a + 1, '\n') : NULL;
		if (!a || !n)
			continue;
		*a++ = '\0';
		*n++ = '\0';
		wh_prom_sample(o, "wmap_audit_violations", (double)json_integer_value(v), "policy", tmp,
			       "action", a, "namespace", n, NULL);
	}
	pthread_mutex_unlock(&A->lock);
	static const struct {
		const char *name, *type, *help;
	} fams[] = {
		{ "wmap_audit_rounds_total", "counter", "Audit rounds completed (reports written)." },
		{ "wmap_audit_round_failures_total", "counter", "Rounds that could not list or read the reports; the reports stayed as they were." },
		{ "wmap_audit_rounds_restarted_total", "counter", "Rounds stopped by a definition or policy swap (started again on the new set)." },
		{ "wmap_audit_last_duration_seconds", "gauge", "How long the last completed round took." },
		{ "wmap_audit_last_workloads", "gauge", "Workloads checked by the last completed round." },
		{ "wmap_audit_last_requests", "gauge", "API requests made by the last completed round." },
		{ "wmap_audit_workloads_total", "counter", "Workloads checked." },
		{ "wmap_audit_requests_total", "counter", "API requests the audit made." },
		{ "wmap_audit_evaluation_errors_total", "counter", "Workloads that could not be evaluated." },
		{ "wmap_audit_skipped_kinds_total", "counter", "Lists refused with 403 or 404 (kind not audited)." },
		{ "wmap_audit_report_writes_total", "counter", "Reports created or updated." },
		{ "wmap_audit_report_deletes_total", "counter", "Reports deleted (nothing left to report)." },
		{ "wmap_audit_report_conflicts_total", "counter", "Report writes answered 409 or 404 (read again)." },
		{ "wmap_audit_report_errors_total", "counter", "Report writes that failed." },
	};
	const double vals[] = {
		atomic_load(&A->rounds), atomic_load(&A->round_failures), atomic_load(&A->aborted),
		(double)atomic_load(&A->last_us) / 1e6, (double)atomic_load(&A->last_workloads),
		(double)atomic_load(&A->last_requests), (double)atomic_load(&A->workloads),
		(double)atomic_load(&A->requests), atomic_load(&A->eval_errors),
		atomic_load(&A->skipped_kinds), atomic_load(&A->writes), atomic_load(&A->deletes),
		atomic_load(&A->conflicts), atomic_load(&A->write_errors)
	};
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		wh_prom_family(o, fams[i].name, fams[i].type, fams[i].help);
		wh_prom_sample(o, fams[i].name, vals[i], NULL);
	}
}
