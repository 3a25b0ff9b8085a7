/* wmap-webhook: the rules of the `wmap-webhook` MutatingWebhookConfiguration kept equal to
 * the group/version/resources of the definitions in force whose CRD is served.
 *
 * A thread computes the rules after every definition swap and every RESYNC_S seconds
 * (so it converges from any starting state, including a hand edit): the root kind of every
 * definition in force, looked up in discovery (plurals as the server names them, never
 * guessed; a kind the server does not serve gets no rule), grouped by group, version and
 * scope, sorted, CREATE only. It reads the configuration and writes it back only when the
 * rules of its `pod-templates.wmap.io` webhook differ: a PUT of the object it read, with that
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
#define WEBHOOK_NAME "pod-templates.wmap.io"
#define WRITER_ANNOTATION "wmap.io/rules-written-by"
#define RESYNC_S 10

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
	return strcmp(json_string_value(json_object_get(a, "scope")),
		      json_string_value(json_object_get(b, "scope")));
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

/* The rules for the definitions of reg that disc serves; a new array, NULL on ENOMEM. */
json_t *wh_mutating_rules(const wmap_registry *reg, const wmap_discovery *disc)
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
		char key[400];
		if (!res)
			continue; /* not served: a rule would never match */
		const char *scope = res->namespaced ? "Namespaced" : "Cluster";
		snprintf(key, sizeof(key), "%s\n%s\n%s", res->group, res->version, scope);
		json_t *rule = json_object_get(byk, key);
		if (!rule) {
			rule = json_pack("{s:[s], s:[s], s:[s], s:[], s:s}", "operations", "CREATE",
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

typedef struct reconciler {
	wh_server *srv;
	wmap_kube_client *client;
	wmap_discovery *disc;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int kick, started;
	atomic_int stop;
	atomic_uint writes, conflicts, errors, skipped_newer, rules;
	int last_error_logged;
} reconciler;

static reconciler R = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void log_error(const char *what, const wmap_error *err)
{
	atomic_fetch_add(&R.errors, 1);
	if (R.last_error_logged)
		return; /* once until a round succeeds */
	R.last_error_logged = 1;
	json_t *f = json_pack("{s:s, s:s}", "step", what, "error", err->message);
	wh_log("warn", "cannot keep the MutatingWebhookConfiguration's rules in step; retrying", f);
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

/* One round: compute, compare, write when different. Discovery is read again on the
 * periodic rounds (a CRD may have gone), and on a definition change only when a kind of it
 * is not in the discovery at hand (a full walk costs a request per group). */
static void reconcile_once(int resync)
{
	wmap_error err;
	json_t *cfg = NULL, *rules = NULL;
	char *body = NULL;
	if (!wh_leader_is())
		return; /* only the leader reads discovery and writes */
	wh_defs *d = wh_defs_ref(R.srv);
	if (!d)
		return;
	if (!R.disc ? wmap_discovery_load(&R.disc, R.client, 1, &err) != 0
		    : (resync || !all_found(d->reg, R.disc)) &&
			      wmap_discovery_refresh(R.disc, R.client, &err) != 0) {
		log_error("discovery", &err);
		goto done;
	}
	if (!(rules = wh_mutating_rules(d->reg, R.disc)))
		goto done;
	atomic_store(&R.rules, (unsigned)json_array_size(rules));
	long status = 0;
	if (wmap_kube_request(&cfg, &status, R.client, "GET", MWC_PATH, NULL, NULL, &err) != 0) {
		log_error("read", &err);
		goto done;
	}
	json_t *hooks = json_object_get(cfg, "webhooks"), *hook = NULL, *h;
	size_t i;
	json_array_foreach(hooks, i, h)
		if (json_is_string(json_object_get(h, "name")) &&
		    strcmp(json_string_value(json_object_get(h, "name")), WEBHOOK_NAME) == 0)
			hook = h;
	if (!hook) {
		wmap_error_set(&err, WMAP_ENOTFOUND, "wmap-webhook has no webhook named %s",
			       WEBHOOK_NAME);
		log_error("read", &err);
		goto done;
	}
	R.last_error_logged = 0;
	/* deploy/ ships the hook without rules (absent, so that kubectl apply leaves them
	 * alone): absent means none. */
	json_t *cur = json_object_get(hook, "rules");
	if (cur ? json_equal(cur, rules) : json_array_size(rules) == 0)
		goto done;
	json_t *md = json_object_get(cfg, "metadata");
	json_t *ann = json_object_get(md, "annotations");
	const char *by = json_string_value(json_object_get(ann, WRITER_ANNOTATION));
	if (by && newer(by, WMAP_VERSION)) {
		atomic_fetch_add(&R.skipped_newer, 1);
		goto done; /* a newer version keeps these rules */
	}
	if (!json_is_object(ann)) {
		ann = json_object();
		json_object_set_new(md, "annotations", ann);
	}
	json_object_set_new(ann, WRITER_ANNOTATION, json_string(WMAP_VERSION));
	json_object_set(hook, "rules", rules);
	if (!(body = wmap_json_text(cfg, NULL)) || !wh_leader_is())
		goto done; /* lost the Lease meanwhile: write nothing */
	if (wmap_kube_request(NULL, &status, R.client, "PUT", MWC_PATH, "application/json", body,
			      &err) != 0) {
		if (status == 409) {
			atomic_fetch_add(&R.conflicts, 1);
			pthread_mutex_lock(&R.lock);
			R.kick = 1; /* changed under us: read it again at once */
			pthread_mutex_unlock(&R.lock);
		} else {
			log_error("write", &err);
		}
		goto done;
	}
	atomic_fetch_add(&R.writes, 1);
	json_t *f = json_pack("{s:i}", "rules", (int)json_array_size(rules));
	wh_log("info", "MutatingWebhookConfiguration wmap-webhook: rules updated", f);
	json_decref(f);
done:
	free(body);
	json_decref(cfg);
	json_decref(rules);
	wh_defs_release(d);
}

static void *reconcile_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&R.lock);
	while (!atomic_load(&R.stop)) {
		if (!R.kick) {
			struct timespec t;
			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_sec += RESYNC_S;
			pthread_cond_timedwait(&R.cond, &R.lock, &t);
			if (atomic_load(&R.stop))
				break;
		}
		int resync = !R.kick; /* woken by the clock, not by a change */
		R.kick = 0;
		pthread_mutex_unlock(&R.lock);
		reconcile_once(resync);
		pthread_mutex_lock(&R.lock);
	}
	pthread_mutex_unlock(&R.lock);
	return NULL;
}

int wh_reconcile_start(wh_server *s, const wmap_kube_config *cfg, wmap_error *err)
{
	wmap_kube_opts ko = { .timeout_ms = 10000, .max_retries = 2, .user_agent = "wmap-webhook/" WMAP_VERSION };
	R.srv = s;
	int rc = wmap_kube_client_new(&R.client, cfg, &ko, err);
	if (rc)
		return rc;
	R.kick = 1;
	if (pthread_create(&R.thread, NULL, reconcile_main, NULL) != 0)
		return wmap_error_set(err, WMAP_ENOMEM, "cannot start the reconciler thread");
	R.started = 1;
	return 0;
}

void wh_reconcile_kick(void)
{
	pthread_mutex_lock(&R.lock);
	R.kick = 1;
	pthread_cond_signal(&R.cond);
	pthread_mutex_unlock(&R.lock);
}

void wh_reconcile_stop(void)
{
	atomic_store(&R.stop, 1);
	wh_reconcile_kick();
	if (R.started)
		pthread_join(R.thread, NULL);
	R.started = 0;
	wmap_discovery_free(R.disc);
	R.disc = NULL;
	wmap_kube_client_free(R.client);
	R.client = NULL;
}

char *wh_reconcile_metrics(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "# HELP wmap_webhook_config_writes_total Updates of the "
		   "MutatingWebhookConfiguration's rules.\n# TYPE wmap_webhook_config_writes_total "
		   "counter\nwmap_webhook_config_writes_total{configuration=\"mutating\"} %u\n"
		   "# HELP wmap_webhook_config_conflicts_total Updates refused with 409 (read again).\n"
		   "# TYPE wmap_webhook_config_conflicts_total counter\n"
		   "wmap_webhook_config_conflicts_total{configuration=\"mutating\"} %u\n"
		   "# HELP wmap_webhook_config_errors_total Rounds that could not read or write.\n"
		   "# TYPE wmap_webhook_config_errors_total counter\n"
		   "wmap_webhook_config_errors_total{configuration=\"mutating\"} %u\n"
		   "# HELP wmap_webhook_config_newer_writer_total Rounds that left rules written by "
		   "a newer version alone.\n# TYPE wmap_webhook_config_newer_writer_total counter\n"
		   "wmap_webhook_config_newer_writer_total{configuration=\"mutating\"} %u\n"
		   "# HELP wmap_webhook_config_rules Rules computed for the definitions in force.\n"
		   "# TYPE wmap_webhook_config_rules gauge\n"
		   "wmap_webhook_config_rules{configuration=\"mutating\"} %u\n",
		atomic_load(&R.writes), atomic_load(&R.conflicts), atomic_load(&R.errors),
		atomic_load(&R.skipped_newer), atomic_load(&R.rules));
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
