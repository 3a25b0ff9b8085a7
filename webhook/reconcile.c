/* wmap-webhook: the rules of the two `wmap-webhook` webhook configurations kept in step
 * with what is in force.
 *
 * - MutatingWebhookConfiguration, webhook `pod-templates.wmap.io`: the group/version/
 *   resources of the definitions in force whose CRD is served, CREATE.
 * - ValidatingWebhookConfiguration, webhook `policies.wmap.io` (failurePolicy Fail): of
 *   those, the kinds that a Deny policy can match (its match.kinds patterns on Kind.group;
 *   none = every kind), with the operations of those policies. Webhook
 *   `advisories.wmap.io` (failurePolicy Ignore): the kinds and operations that only Warn or
 *   Audit policies match, so that a stage meant to advise never blocks a request while the
 *   webhook is down. Each kind and operation goes to one of the two at most (both send to
 *   /validate, which judges every policy). No such policy: no rule at all, so no workload
 *   waits for /validate. The webhook `definitions.wmap.io` (Karta and WorkloadPolicy
 *   objects) has static rules and is left alone.
 *
 * A thread computes the rules after every definition or policy swap and every RESYNC_S
 * seconds (so it converges from any starting state, including a hand edit): the root kind of
 * every definition in force, looked up in discovery (plurals as the server names them, never
 * guessed; a kind the server does not serve gets no rule), grouped by group, version, scope
 * and operations, sorted. For each configuration one helper (sync_rules) reads it and writes
 * it back only when the rules of its webhooks differ (both validating ones in one PUT, so a
 * kind moving between them is never in neither): a PUT of the object it read, with that
 * object's resourceVersion (a concurrent change gives 409 and the next round reads again),
 * with only `rules` and one annotation changed, so `caBundle` and everything else stay as
 * they are. The annotation `wmap.io/rules-written-by` records the writer's version; a
 * webhook never overwrites rules written by a newer version, so during a rolling update the
 * old and the new replicas cannot flap (the new one's rules stay). Replicas of one version
 * compute the same rules, so whichever writes first, the others find nothing to change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "webhook.h"
#include "wmap/json_text.h"
#include "wmap/kube/client.h"
#include "wmap/kube/discovery.h"

#define MWC_PATH "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/wmap-webhook"
#define VWC_PATH "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/wmap-webhook"
#define WRITER_ANNOTATION "wmap.io/rules-written-by"
#define RESYNC_S 10
#define STATUS_MIN_MS 1000

/* 1 when version a is newer than b ("0.2.0" > "0.1.9"); non-numbers compare as 0. */
static int newer(const char *a, const char *b)
{
	while (*a || *b) {
		char *ea, *eb;
		unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
		if (x != y)
			return x > y;
		a = *ea == '.' ? ea + 1 : ea + strlen(ea);
		b = *eb == '.' ? eb + 1 : eb + strlen(eb);
	}
	return 0;
}

static int cmp_rule(const void *pa, const void *pb)
{
	const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
	static const char *const keys[] = { "apiGroups", "apiVersions" };
	for (int i = 0; i < 2; i++) {
		int c = strcmp(json_string_value(json_array_get(json_object_get(a, keys[i]), 0)),
			       json_string_value(json_array_get(json_object_get(b, keys[i]), 0)));
		if (c)
			return c;
	}
	int c = strcmp(json_string_value(json_object_get(a, "scope")),
		       json_string_value(json_object_get(b, "scope")));
	if (c)
		return c;
	/* ["CREATE"] < ["CREATE", "UPDATE"] < ["UPDATE"] */
	json_t *oa = json_object_get(a, "operations"), *ob = json_object_get(b, "operations");
	c = strcmp(json_string_value(json_array_get(oa, 0)), json_string_value(json_array_get(ob, 0)));
	return c ? c : (int)json_array_size(oa) - (int)json_array_size(ob);
}

static int cmp_json_str(const void *pa, const void *pb)
{
	return strcmp(json_string_value(*(json_t *const *)pa), json_string_value(*(json_t *const *)pb));
}

/* Sorts a JSON array in place with cmp. */
static void sort_array(json_t *arr, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(arr);
	json_t **v = calloc(n + 1, sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), cmp);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
}

/* The operations (WMAP_POLICY_OP_* bits) a rule for kind ("Kind.group", "Kind" for core)
 * gets; 0: no rule. */
typedef unsigned (*ops_fn)(const void *ctx, const char *kind);

/* The rules for the definitions of reg that disc serves, with the operations ops gives each
 * kind; a new array, NULL on ENOMEM. */
static json_t *rules_for(const wmap_registry *reg, const wmap_discovery *disc, ops_fn ops,
			 const void *ctx)
{
	json_t *byk = json_object(), *rules = json_array();
	const char *k;
	json_t *r;
	if (!byk || !rules)
		goto fail;
	for (size_t i = 0; i < wmap_registry_count(reg); i++) {
		const wmap_gvk *g = wmap_registry_get(reg, i)->components[0].kind;
		const wmap_api_resource *res = g ? wmap_discovery_find_kind(disc, g->group, g->version,
									    g->kind)
						 : NULL;
		char key[400], kind[300];
		if (!res)
			continue; /* not served: a rule would never match */
		if (g->group[0])
			snprintf(kind, sizeof(kind), "%s.%s", g->kind, g->group);
		else
			snprintf(kind, sizeof(kind), "%s", g->kind);
		unsigned op = ops(ctx, kind);
		if (!op)
			continue;
		const char *scope = res->namespaced ? "Namespaced" : "Cluster";
		snprintf(key, sizeof(key), "%s\n%s\n%s\n%u", res->group, res->version, scope, op);
		json_t *rule = json_object_get(byk, key);
		if (!rule) {
			json_t *opl = json_array();
			if (opl && (op & WMAP_POLICY_OP_CREATE))
				json_array_append_new(opl, json_string("CREATE"));
			if (opl && (op & WMAP_POLICY_OP_UPDATE))
				json_array_append_new(opl, json_string("UPDATE"));
			rule = json_pack("{s:o, s:[s], s:[s], s:[], s:s}", "operations", opl,
					 "apiGroups", res->group, "apiVersions", res->version,
					 "resources", "scope", scope);
			if (!rule || json_object_set_new(byk, key, rule) != 0)
				goto fail;
		}
		json_t *list = json_object_get(rule, "resources");
		int have = 0;
		size_t j;
		json_t *v;
		json_array_foreach(list, j, v)
			have |= strcmp(json_string_value(v), res->plural) == 0;
		if (!have && json_array_append_new(list, json_string(res->plural)) != 0)
			goto fail;
	}
	json_object_foreach(byk, k, r) {
		sort_array(json_object_get(r, "resources"), cmp_json_str);
		if (json_array_append(rules, r) != 0)
			goto fail;
	}
	sort_array(rules, cmp_rule);
	json_decref(byk);
	return rules;
fail:
	json_decref(byk);
	json_decref(rules);
	return NULL;
}

static unsigned create_only(const void *ctx, const char *kind)
{
	(void)ctx;
	(void)kind;
	return WMAP_POLICY_OP_CREATE;
}

/* The operations of the policies needing /validate whose match.kinds cover kind: those
 * with Deny when deny, the others when not. */
static unsigned policy_ops(const wmap_policy_set *ps, const char *kind, int deny)
{
	unsigned op = 0;
	for (size_t i = 0; ps && i < ps->n; i++) {
		const wmap_policy *p = &ps->policies[i];
		if (wmap_policy_matches_kind(p, kind) && wmap_policy_needs_validation(p) &&
		    !(p->actions & WMAP_ACTION_DENY) == !deny)
			op |= p->operations;
	}
	return op & (WMAP_POLICY_OP_CREATE | WMAP_POLICY_OP_UPDATE);
}

/* policies.wmap.io (Fail): what a Deny policy may match. */
static unsigned enforced_ops(const void *ctx, const char *kind)
{
	return policy_ops(ctx, kind, 1);
}

/* advisories.wmap.io (Ignore): what only Warn or Audit policies match. */
static unsigned advisory_ops(const void *ctx, const char *kind)
{
	return policy_ops(ctx, kind, 0) & ~policy_ops(ctx, kind, 1);
}

/* The CREATE rules for the root kinds of reg that disc serves, sorted; a new array. */
static json_t *mutating_rules(const wmap_registry *reg, const wmap_discovery *disc)
{
	return rules_for(reg, disc, create_only, NULL);
}

/* The rules of the validating webhook policies.wmap.io (failurePolicy Fail): the root kinds
 * of reg that disc serves and that a Deny policy of policies (may be NULL) matches, with
 * those policies' operations, sorted; a new array (empty when no such policy). */
static json_t *validating_rules(const wmap_registry *reg, const wmap_discovery *disc,
				const wmap_policy_set *policies)
{
	return rules_for(reg, disc, enforced_ops, policies);
}

/* The same for advisories.wmap.io (failurePolicy Ignore): the kinds and operations that only
 * Warn or Audit policies match (none of validating_rules'). */
static json_t *advisory_rules(const wmap_registry *reg, const wmap_discovery *disc,
			      const wmap_policy_set *policies)
{
	return rules_for(reg, disc, advisory_ops, policies);
}

/* One configuration whose webhook's rules the leader keeps in step. */
typedef struct cfg_target {
	const char *what;    /* metrics label: "mutating", "validating" */
	const char *kind;    /* for log lines */
	const char *path;    /* the object */
	const char *webhook; /* the webhook whose rules are ours */
	atomic_uint writes, conflicts, errors, skipped_newer, rules;
	int last_error_logged;
} cfg_target;

#define KICK_RULES 1
#define KICK_STATUS 2

typedef struct wh_reconciler {
	const wh_env *env;       /* env->leader: only while it leads does a round read or write */
	const wh_leader *leader; /* env->leader */
	wmap_kube_client *client;
	wmap_discovery *disc;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int kick, started; /* kick: KICK_* bits */
	atomic_int stop;
	cfg_target mwc, vwc, awc;
	wh_status_writer status;
} wh_reconciler;

static void log_error(cfg_target *t, const char *what, const wmap_error *err)
{
	atomic_fetch_add(&t->errors, 1);
	if (t->last_error_logged)
		return; /* once until a round succeeds */
	t->last_error_logged = 1;
	json_t *f = json_pack("{s:s, s:s, s:s}", "configuration", t->kind, "step", what, "error",
			      err->message);
	wh_log("warn", "cannot keep a webhook configuration's rules in step; retrying", f);
	json_decref(f);
}

/* 1 when every definition's root kind is in disc. */
static int all_found(const wmap_registry *reg, const wmap_discovery *disc)
{
	for (size_t i = 0; i < wmap_registry_count(reg); i++) {
		const wmap_gvk *g = wmap_registry_get(reg, i)->components[0].kind;
		if (g && !wmap_discovery_find_kind(disc, g->group, g->version, g->kind))
			return 0;
	}
	return 1;
}

/* The webhook named name in cfg (borrowed), NULL when there is none. */
static json_t *find_hook(json_t *cfg, const char *name)
{
	json_t *hook = NULL, *h;
	size_t i;
	json_array_foreach(json_object_get(cfg, "webhooks"), i, h)
		if (json_is_string(json_object_get(h, "name")) &&
		    strcmp(json_string_value(json_object_get(h, "name")), name) == 0)
			hook = h;
	return hook;
}

/* Reads the configuration of ts[0] and, when the rules of any of its webhooks ts[0..n)
 * differ from rules[0..n) (borrowed), writes them back in one PUT with the resourceVersion
 * it read, so that a kind moving from one webhook to another is never in neither; only
 * `rules` and the writer annotation change. A webhook after the first that the object
 * lacks (deploy/ of an older release) has its rules added to the first's, which then
 * covers them as it did before. Rules written by a newer version are left alone. */
#define MAX_HOOKS 2 /* webhooks of one configuration whose rules are ours */

static void sync_rules(wh_reconciler *R, cfg_target *const *ts, json_t *const *rules, size_t n)
{
	wmap_error err;
	json_t *cfg = NULL, *want[MAX_HOOKS] = { NULL }, *hook[MAX_HOOKS] = { NULL };
	char *body = NULL;
	long status = 0;
	int differ = 0;
	if (n > MAX_HOOKS)
		n = MAX_HOOKS; /* (a caller's mistake; the table below has two rows) */
	for (size_t k = 0; k < n; k++)
		atomic_store(&ts[k]->rules, (unsigned)json_array_size(rules[k]));
	if (wmap_kube_request(&cfg, &status, R->client, "GET", ts[0]->path, NULL, NULL, &err) != 0) {
		log_error(ts[0], "read", &err);
		goto done;
	}
	if (!(hook[0] = find_hook(cfg, ts[0]->webhook))) {
		wmap_error_set(&err, WMAP_ENOTFOUND, "wmap-webhook has no webhook named %s",
			       ts[0]->webhook);
		log_error(ts[0], "read", &err);
		goto done;
	}
	ts[0]->last_error_logged = 0;
	if (!(want[0] = json_copy(rules[0])))
		goto done;
	for (size_t k = 1; k < n; k++) {
		if ((hook[k] = find_hook(cfg, ts[k]->webhook))) {
			ts[k]->last_error_logged = 0;
			want[k] = json_incref(rules[k]);
		} else if (json_array_extend(want[0], rules[k]) == 0) {
			wmap_error_set(&err, WMAP_ENOTFOUND, "wmap-webhook has no webhook named %s: its "
							     "rules go to %s",
				       ts[k]->webhook, ts[0]->webhook);
			log_error(ts[k], "read", &err);
		}
	}
	for (size_t k = 0; k < n; k++) {
		/* deploy/ ships the hooks without rules (absent, so that kubectl apply leaves
		 * them alone): absent means none. */
		json_t *cur = hook[k] ? json_object_get(hook[k], "rules") : NULL;
		if (hook[k] && !(cur ? json_equal(cur, want[k]) : json_array_size(want[k]) == 0))
			differ |= 1 << k;
	}
	if (!differ)
		goto done;
	json_t *md = json_object_get(cfg, "metadata");
	json_t *ann = json_object_get(md, "annotations");
	const char *by = json_string_value(json_object_get(ann, WRITER_ANNOTATION));
	if (by && newer(by, WMAP_VERSION)) {
		atomic_fetch_add(&ts[0]->skipped_newer, 1);
		goto done; /* a newer version keeps these rules */
	}
	if (!json_is_object(ann)) {
		ann = json_object();
		json_object_set_new(md, "annotations", ann);
	}
	json_object_set_new(ann, WRITER_ANNOTATION, json_string(WMAP_VERSION));
	for (size_t k = 0; k < n; k++) {
		if (differ & (1 << k))
			json_object_set(hook[k], "rules", want[k]);
	}
	if (!(body = wmap_json_text(cfg, NULL)) || !wh_leader_is(R->leader))
		goto done; /* lost the Lease meanwhile: write nothing */
	if (wmap_kube_request(NULL, &status, R->client, "PUT", ts[0]->path, "application/json",
			      body, &err) != 0) {
		if (status == 409) {
			atomic_fetch_add(&ts[0]->conflicts, 1);
			pthread_mutex_lock(&R->lock);
			R->kick |= KICK_RULES; /* changed under us: read it again at once */
			pthread_mutex_unlock(&R->lock);
		} else {
			log_error(ts[0], "write", &err);
		}
		goto done;
	}
	for (size_t k = 0; k < n; k++) {
		if (!(differ & (1 << k)))
			continue;
		atomic_fetch_add(&ts[k]->writes, 1);
		json_t *f = json_pack("{s:s, s:s, s:i}", "configuration", ts[k]->kind, "webhook",
				      ts[k]->webhook, "rules", (int)json_array_size(want[k]));
		wh_log("info", "wmap-webhook configuration: rules updated", f);
		json_decref(f);
	}
done:
	for (size_t k = 0; k < n; k++)
		json_decref(want[k]);
	free(body);
	json_decref(cfg);
}

/* One round: compute, compare, write when different (the rules with KICK_RULES in what,
 * the statuses with KICK_STATUS). Discovery is read again on the periodic rounds (a CRD may
 * have gone), and on a definition change only when a kind of it is not in the discovery at
 * hand (a full walk costs a request per group). The state in force is held only while the
 * rules are computed, never across a request: a publish waits for its readers. */
static void reconcile_once(wh_reconciler *R, int what, int resync)
{
	wmap_error err;
	json_t *mrules = NULL, *vrules = NULL, *arules = NULL, *k = NULL, *kv = NULL, *p = NULL,
	       *pv = NULL;
	if (!wh_leader_is(R->leader))
		return; /* only the leader reads discovery and writes */
	wh_state *st = wh_inforce_acquire(R->env->inforce);
	if (!st)
		return;
	int load = !R->disc;
	int refresh = !load && (what & KICK_RULES) && (resync || !all_found(st->defs->reg, R->disc));
	wh_inforce_release(st);
	if (load ? wmap_discovery_load(&R->disc, R->client, 1, &err) != 0
		 : refresh && wmap_discovery_refresh(R->disc, R->client, &err) != 0) {
		log_error(&R->mwc, "discovery", &err);
		return;
	}
	if (!(st = wh_inforce_acquire(R->env->inforce)))
		return;
	if (what & KICK_RULES) {
		mrules = mutating_rules(st->defs->reg, R->disc);
		vrules = validating_rules(st->defs->reg, R->disc, st->policies);
		arules = advisory_rules(st->defs->reg, R->disc, st->policies);
	}
	if (what & KICK_STATUS) {
		k = json_incref(st->kartas);
		kv = json_incref(st->kverdicts);
		p = json_incref(st->wpolicies);
		pv = json_incref(st->pverdicts);
	}
	wh_inforce_release(st);
	if (mrules && vrules && arules) {
		cfg_target *const mt[1] = { &R->mwc }, *const vt[2] = { &R->vwc, &R->awc };
		json_t *const mr[1] = { mrules }, *const vr[2] = { vrules, arules };
		sync_rules(R, mt, mr, 1);
		sync_rules(R, vt, vr, 2);
	}
	if (what & KICK_STATUS)
		wh_status_sync(&R->status, R->client, R->disc, k, kv, p, pv, R->leader);
	json_decref(mrules);
	json_decref(vrules);
	json_decref(arules);
	json_decref(k);
	json_decref(kv);
	json_decref(p);
	json_decref(pv);
}

static long long mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits on R->cond (R->lock held) for at most ms milliseconds. */
static void wait_ms(wh_reconciler *R, long long ms)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += (time_t)(ms / 1000);
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&R->cond, &R->lock, &t);
}

/* Rounds run on a kick, and every RESYNC_S seconds for everything. A kick for statuses
 * alone (the watch saw objects change, the leader's own status writes among them) is taken
 * at most every STATUS_MIN_MS, so a burst of status events costs one pass over the objects
 * rather than one per event; a definition or policy swap is taken at once. */
static void *reconcile_main(void *arg)
{
	wh_reconciler *R = arg;
	long long next_resync = mono_ms() + RESYNC_S * 1000LL, last_status = 0;
	pthread_mutex_lock(&R->lock);
	while (!atomic_load(&R->stop)) {
		long long now = mono_ms();
		int rules = R->kick & KICK_RULES;
		int status = (R->kick & KICK_STATUS) && now - last_status >= STATUS_MIN_MS;
		int resync = now >= next_resync;
		if (!rules && !status && !resync) {
			long long until = next_resync;
			if ((R->kick & KICK_STATUS) && last_status + STATUS_MIN_MS < until)
				until = last_status + STATUS_MIN_MS;
			wait_ms(R, until > now ? until - now : 1);
			continue;
		}
		int what = resync ? KICK_RULES | KICK_STATUS
				  : rules | (R->kick & KICK_STATUS ? KICK_STATUS : 0);
		R->kick &= ~what;
		if (resync)
			next_resync = now + RESYNC_S * 1000LL;
		if (what & KICK_STATUS)
			last_status = now;
		pthread_mutex_unlock(&R->lock);
		reconcile_once(R, what, resync);
		pthread_mutex_lock(&R->lock);
	}
	pthread_mutex_unlock(&R->lock);
	return NULL;
}

static void reconcile_metrics(void *ctx, wmap_buf *o);
static void reconcile_stop(void *self);

static int reconcile_start(void **self, const wh_env *env, wmap_error *err)
{
	wmap_kube_opts ko = { .timeout_ms = 10000, .max_retries = 2, .user_agent = "wmap-webhook/" WMAP_VERSION };
	wh_reconciler *R = calloc(1, sizeof(*R));
	int rc;
	*self = NULL;
	if (!R)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	pthread_mutex_init(&R->lock, NULL);
	pthread_cond_init(&R->cond, NULL);
	R->env = env;
	R->leader = env->leader;
	R->mwc = (cfg_target){ .what = "mutating", .kind = "MutatingWebhookConfiguration", .path = MWC_PATH, .webhook = "pod-templates.wmap.io" };
	R->vwc = (cfg_target){ .what = "validating", .kind = "ValidatingWebhookConfiguration", .path = VWC_PATH, .webhook = "policies.wmap.io" };
	R->awc = (cfg_target){ .what = "advisory", .kind = "ValidatingWebhookConfiguration", .path = VWC_PATH, .webhook = "advisories.wmap.io" };
	if ((rc = wmap_kube_client_new(&R->client, env->kube, &ko, err)) != 0)
		goto fail;
	if ((rc = wh_metrics_provide("/metrics", reconcile_metrics, R)) != 0) {
		wmap_error_set(err, rc, "too many metrics providers");
		goto fail;
	}
	R->kick = KICK_RULES | KICK_STATUS;
	if (pthread_create(&R->thread, NULL, reconcile_main, R) != 0) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "cannot start the reconciler thread");
		goto fail;
	}
	R->started = 1;
	*self = R;
	return 0;
fail:
	reconcile_stop(R);
	return rc;
}

static void kick(wh_reconciler *R, int what)
{
	pthread_mutex_lock(&R->lock);
	R->kick |= what;
	pthread_cond_signal(&R->cond);
	pthread_mutex_unlock(&R->lock);
}

/* Definitions, policies or CRDs changed, or this replica leads now: rules and statuses.
 * Only the objects changed (their statuses among them): statuses. */
static void reconcile_kick(void *self, unsigned what)
{
	if (what & (WH_STATE_DEFS | WH_STATE_POLICIES | WH_STATE_CRDS | WH_KICK_LEAD))
		kick(self, KICK_RULES | KICK_STATUS);
	else if (what & WH_STATE_OBJECTS)
		kick(self, KICK_STATUS);
}

static void reconcile_stop(void *self)
{
	wh_reconciler *R = self;
	if (!R)
		return;
	atomic_store(&R->stop, 1);
	kick(R, KICK_RULES | KICK_STATUS);
	if (R->started)
		pthread_join(R->thread, NULL);
	wh_metrics_withdraw(R);
	wmap_discovery_free(R->disc);
	wh_status_writer_clear(&R->status);
	wmap_kube_client_free(R->client);
	pthread_mutex_destroy(&R->lock);
	pthread_cond_destroy(&R->cond);
	free(R);
}

const wh_controller wh_reconcile_controller = { "reconciler", reconcile_start, reconcile_kick,
						reconcile_stop };

/* The configurations' families (the mutating one and both validating webhooks), then the status writer's (wh_metrics_fn). */
static void reconcile_metrics(void *ctx, wmap_buf *o)
{
	const wh_reconciler *R = ctx;
	static const char *const help[][3] = {
		{ "writes_total", "counter", "Updates of a webhook configuration's rules." },
		{ "conflicts_total", "counter", "Updates refused with 409 (read again)." },
		{ "errors_total", "counter", "Rounds that could not read or write." },
		{ "newer_writer_total", "counter",
		  "Rounds that left rules written by a newer version alone." },
		{ "rules", "gauge", "Rules computed from what is in force." },
	};
	for (size_t m = 0; m < sizeof(help) / sizeof(help[0]); m++) {
		char name[64];
		snprintf(name, sizeof(name), "wmap_webhook_config_%s", help[m][0]);
		wh_prom_family(o, name, help[m][1], help[m][2]);
		const cfg_target *ts[3] = { &R->mwc, &R->vwc, &R->awc };
		for (int i = 0; i < 3; i++) {
			const cfg_target *t = ts[i];
			unsigned v = m == 0   ? atomic_load(&t->writes)
				     : m == 1 ? atomic_load(&t->conflicts)
				     : m == 2 ? atomic_load(&t->errors)
				     : m == 3 ? atomic_load(&t->skipped_newer)
					      : atomic_load(&t->rules);
			wh_prom_sample(o, name, v, "configuration", t->what, NULL);
		}
	}
	wh_status_metrics(&R->status, o);
}
