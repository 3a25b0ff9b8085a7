/* wmap-webhook: leader election with a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection does it (lease 15 s, renew deadline 10 s, retry every 2 s).
 *
 * Every RETRY_S a candidate reads the Lease. The holder renews it (an update guarded by the
 * resourceVersion it read); a leader that has not renewed within RENEW_DEADLINE_S stops
 * acting as leader at once, before anyone else may take over (LEASE_S). Another candidate
 * takes the Lease only when its record (holder and renewTime) has not changed for LEASE_S
 * by this process's own clock (so clock skew between replicas does not matter), again with
 * an update guarded by resourceVersion, so two candidates cannot both win. On a clean stop
 * the leader gives the Lease up (holderIdentity emptied), so the next one takes over within
 * one retry. Only the leader writes to the cluster: every controller asks wh_leader_is before
 * each write. The on-lead callback (main.c's) kicks the controllers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "webhook.h"
#include "wmap/json_text.h"
#include "wmap/kube/client.h"

#define LEASE_S 15
#define RENEW_DEADLINE_S 10
#define RETRY_S 2

struct wh_leader {
	wmap_kube_client *client;
	char path[512], coll[512], name[128], ns[128], id[256];
	void (*on_lead)(void *ctx); /* called when this replica becomes the leader */
	void *ctx;
	pthread_t thread;
	int started;
	atomic_int stop, leader;
	atomic_uint transitions, renew_failures;
	atomic_llong last_renew_ms; /* monotonic: when the leader last renewed */
	char seen[512];             /* holder + renewTime last observed */
	struct timespec seen_at;    /* monotonic: when it last changed */
};

static long long mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Seconds since the last renewal (the reconciler reads it from its own thread). */
static double since_renew(const wh_leader *L)
{
	return (double)(mono_ms() - atomic_load(&L->last_renew_ms)) / 1000.0;
}

static double mono_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* metav1.MicroTime: RFC 3339 with microseconds, UTC. */
static void micro_now(char *buf, size_t len)
{
	struct timespec t;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &t);
	gmtime_r(&t.tv_sec, &tm);
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%06ldZ", t.tv_nsec / 1000);
}

static void set_leader(wh_leader *L, int on)
{
	if (atomic_exchange(&L->leader, on) == on)
		return;
	if (on)
		atomic_fetch_add(&L->transitions, 1);
	json_t *f = json_pack("{s:s, s:s}", "lease", L->name, "identity", L->id);
	wh_log("info", on ? "leader: this replica holds the Lease and writes" : "leader: this replica no longer holds the Lease; it stops writing", f);
	json_decref(f);
	if (on && L->on_lead)
		L->on_lead(L->ctx);
}

static int put_lease(wh_leader *L, json_t *lease, int take)
{
	char now[64];
	json_t *spec = json_object_get(lease, "spec");
	micro_now(now, sizeof(now));
	if (!json_is_object(spec)) {
		spec = json_object();
		json_object_set_new(lease, "spec", spec);
	}
	if (take) {
		json_int_t tr = json_integer_value(json_object_get(spec, "leaseTransitions"));
		json_object_set_new(spec, "holderIdentity", json_string(L->id));
		json_object_set_new(spec, "acquireTime", json_string(now));
		json_object_set_new(spec, "leaseTransitions", json_integer(tr + 1));
	}
	json_object_set_new(spec, "leaseDurationSeconds", json_integer(LEASE_S));
	json_object_set_new(spec, "renewTime", json_string(now));
	char *body = wmap_json_text(lease, NULL);
	wmap_error err;
	long status = 0;
	int rc = body ? wmap_kube_request(NULL, &status, L->client, "PUT", L->path, "application/json",
					  body, &err)
		      : WMAP_ENOMEM;
	free(body);
	return rc;
}

static int create_lease(wh_leader *L)
{
	char now[64];
	micro_now(now, sizeof(now));
	json_t *lease = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, s:s, s:s, s:i}}",
				  "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
				  "metadata", "name", L->name, "namespace", L->ns,
				  "spec", "holderIdentity", L->id, "leaseDurationSeconds", LEASE_S,
				  "acquireTime", now, "renewTime", now, "leaseTransitions", 0);
	char *body = lease ? wmap_json_text(lease, NULL) : NULL;
	json_decref(lease);
	wmap_error err;
	long status = 0;
	int rc = body ? wmap_kube_request(NULL, &status, L->client, "POST", L->coll,
					  "application/json", body, &err)
		      : WMAP_ENOMEM;
	free(body);
	return rc;
}

static void round_once(wh_leader *L)
{
	json_t *lease = NULL;
	wmap_error err;
	long status = 0;
	int renewed = 0;
	if (wmap_kube_request(&lease, &status, L->client, "GET", L->path, NULL, NULL, &err) != 0) {
		if (status == 404 && create_lease(L) == 0) {
			atomic_store(&L->last_renew_ms, mono_ms());
			renewed = 1;
		}
		goto done;
	}
	const json_t *spec = json_object_get(lease, "spec");
	const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
	const char *renew = json_string_value(json_object_get(spec, "renewTime"));
	char seen[512];
	snprintf(seen, sizeof(seen), "%s|%s", holder ? holder : "", renew ? renew : "");
	if (strcmp(seen, L->seen) != 0) {
		snprintf(L->seen, sizeof(L->seen), "%s", seen);
		clock_gettime(CLOCK_MONOTONIC, &L->seen_at);
	}
	if (holder && strcmp(holder, L->id) == 0) {
		if (put_lease(L, lease, 0) == 0) {
			atomic_store(&L->last_renew_ms, mono_ms());
			renewed = 1;
		}
	} else if (!holder || !holder[0] || mono_since(&L->seen_at) >= LEASE_S) {
		if (put_lease(L, lease, 1) == 0) {
			atomic_store(&L->last_renew_ms, mono_ms());
			renewed = 1;
		}
	} else if (atomic_load(&L->leader)) {
		set_leader(L, 0); /* someone else holds it */
	}
done:
	json_decref(lease);
	if (renewed)
		set_leader(L, 1);
	else if (atomic_load(&L->leader)) {
		atomic_fetch_add(&L->renew_failures, 1);
		if (since_renew(L) >= RENEW_DEADLINE_S)
			set_leader(L, 0); /* past the renew deadline: stop acting at once */
	}
}

static void release(wh_leader *L)
{
	json_t *lease = NULL;
	wmap_error err;
	long status = 0;
	if (!atomic_load(&L->leader))
		return;
	set_leader(L, 0);
	if (wmap_kube_request(&lease, &status, L->client, "GET", L->path, NULL, NULL, &err) == 0) {
		json_t *spec = json_object_get(lease, "spec");
		const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
		if (holder && strcmp(holder, L->id) == 0) {
			json_object_set_new(spec, "holderIdentity", json_string(""));
			char *body = wmap_json_text(lease, NULL);
			if (body)
				wmap_kube_request(NULL, &status, L->client, "PUT", L->path,
						  "application/json", body, &err);
			free(body);
		}
	}
	json_decref(lease);
}

static void *leader_main(void *arg)
{
	wh_leader *L = arg;
	while (!atomic_load(&L->stop)) {
		round_once(L);
		for (int i = 0; i < RETRY_S * 10 && !atomic_load(&L->stop); i++) {
			struct timespec t = { 0, 100000000L };
			nanosleep(&t, NULL);
			/* The deadline holds between rounds too. */
			if (atomic_load(&L->leader) && since_renew(L) >= RENEW_DEADLINE_S)
				set_leader(L, 0);
		}
	}
	release(L);
	return NULL;
}

static void leader_metrics(void *ctx, wmap_buf *o);

int wh_leader_start(wh_leader **out, const wmap_kube_config *cfg, const char *ns,
		    void (*on_lead)(void *ctx), void *ctx, wmap_error *err)
{
	wmap_kube_opts ko = { .timeout_ms = 5000, .max_retries = -1, .user_agent = "wmap-webhook/" WMAP_VERSION };
	char host[128] = "";
	wh_leader *L = calloc(1, sizeof(*L));
	int rc;
	*out = NULL;
	if (!L)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if ((rc = wmap_kube_client_new(&L->client, cfg, &ko, err)) != 0)
		goto fail;
	L->on_lead = on_lead;
	L->ctx = ctx;
	gethostname(host, sizeof(host) - 1);
	snprintf(L->id, sizeof(L->id), "%s_%ld", host[0] ? host : "wmap-webhook", (long)getpid());
	snprintf(L->name, sizeof(L->name), "wmap-webhook");
	snprintf(L->ns, sizeof(L->ns), "%s", ns && ns[0] ? ns : "wmap-system");
	snprintf(L->coll, sizeof(L->coll), "/apis/coordination.k8s.io/v1/namespaces/%s/leases", L->ns);
	snprintf(L->path, sizeof(L->path), "%s/%s", L->coll, L->name);
	clock_gettime(CLOCK_MONOTONIC, &L->seen_at);
	if ((rc = wh_metrics_provide("/metrics", leader_metrics, L)) != 0) {
		wmap_error_set(err, rc, "too many metrics providers");
		goto fail;
	}
	if (pthread_create(&L->thread, NULL, leader_main, L) != 0) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "cannot start the leader election thread");
		goto fail;
	}
	L->started = 1;
	*out = L;
	return 0;
fail:
	wh_leader_stop(L);
	return rc;
}

int wh_leader_is(const wh_leader *L)
{
	return L && atomic_load(&L->leader) && since_renew(L) < RENEW_DEADLINE_S;
}

void wh_leader_stop(wh_leader *L)
{
	if (!L)
		return;
	atomic_store(&L->stop, 1);
	if (L->started)
		pthread_join(L->thread, NULL);
	wh_metrics_withdraw(L);
	wmap_kube_client_free(L->client);
	free(L);
}

/* The election's families (wh_metrics_fn). */
static void leader_metrics(void *ctx, wmap_buf *o)
{
	const wh_leader *L = ctx;
	wh_prom_family(o, "wmap_webhook_leader", "gauge", "1 while this replica holds the Lease (and may write).");
	wh_prom_sample(o, "wmap_webhook_leader", wh_leader_is(L), NULL);
	wh_prom_family(o, "wmap_webhook_leader_acquired_total", "counter", "Times this replica became the leader.");
	wh_prom_sample(o, "wmap_webhook_leader_acquired_total", atomic_load(&L->transitions), NULL);
	wh_prom_family(o, "wmap_webhook_leader_renew_failures_total", "counter",
		       "Rounds in which the leader could not renew.");
	wh_prom_sample(o, "wmap_webhook_leader_renew_failures_total", atomic_load(&L->renew_failures), NULL);
}
