/* wmap-webhook: Prometheus metrics, text exposition format 0.0.4.
 *
 * Counters live behind one mutex: a request touches it twice for a few nanoseconds, far
 * below the cost of the TLS record around it. Label sets are bounded (kinds the request
 * names are free text, so past MAX_SERIES new ones are counted as kind="other"). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "webhook.h"
#include "wmap/buf.h"

#define MAX_SERIES 256
#define N_BUCKETS 15

static const double buckets[N_BUCKETS] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
					   0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5 };
static const char *const endpoints[WH_EP_COUNT] = { "mutate", "validate", "other" };

/* wmap_policy_violations: series by policy, action and namespace. Policies are the
 * operator's own (tens); namespaces are many in a big cluster, so past MAX_VIOLATION_SERIES
 * a new namespace is counted as namespace="other", and a new policy past that as
 * policy="other" too: the exposition never grows with what users create. */
#define MAX_VIOLATION_SERIES 512
static const char *const action_labels[3] = { "deny", "warn", "audit" };

typedef struct vseries {
	char policy[254];
	char ns[64];
	int action; /* index into action_labels */
	unsigned long long count;
} vseries;

typedef struct series {
	char key[4][128]; /* endpoint, kind, operation, result */
	unsigned long long count;
} series;

static struct {
	pthread_mutex_t lock;
	series req[MAX_SERIES];
	size_t n_req;
	series failopen[32]; /* endpoint, reason */
	size_t n_failopen;
	unsigned long long patches, patch_ops, patch_bytes;
	unsigned long long hist[WH_EP_COUNT][N_BUCKETS + 1];
	double hist_sum[WH_EP_COUNT];
	unsigned long long hist_count[WH_EP_COUNT];
	unsigned long long status[WH_EP_COUNT][6];       /* 200, 400, 404/405, 413, 503, other */
	unsigned long long reload_ok[2], reload_fail[2]; /* cert, policy */
	double last_reload_fail[2];
	double cert_expiry;
	int ready;
	vseries viol[MAX_VIOLATION_SERIES];
	size_t n_viol;
} m = { .lock = PTHREAD_MUTEX_INITIALIZER };

void wh_metrics_init(void)
{
}

static void bump(series *tab, size_t *n, size_t cap, const char *const keys[4])
{
	for (size_t i = 0; i < *n; i++) {
		if (!strcmp(tab[i].key[0], keys[0]) && !strcmp(tab[i].key[1], keys[1]) &&
		    !strcmp(tab[i].key[2], keys[2]) && !strcmp(tab[i].key[3], keys[3])) {
			tab[i].count++;
			return;
		}
	}
	if (*n < cap) {
		series *s = &tab[(*n)++];
		for (int k = 0; k < 4; k++)
			snprintf(s->key[k], sizeof(s->key[k]), "%s", keys[k] ? keys[k] : "");
		s->count = 1;
	}
}

void wh_metrics_request(wh_endpoint ep, const char *kind, const char *operation,
			const char *result, const char *reason, size_t patch_ops,
			size_t patch_bytes)
{
	pthread_mutex_lock(&m.lock);
	const char *keys[4] = { endpoints[ep], kind && *kind ? kind : "unknown",
				operation && *operation ? operation : "unknown", result };
	size_t before = m.n_req;
	bump(m.req, &m.n_req, MAX_SERIES - 1, keys);
	if (m.n_req == before && before >= MAX_SERIES - 1) {
		/* The table is full: an unseen kind is folded into "other". */
		int seen = 0;
		for (size_t i = 0; i < m.n_req && !seen; i++)
			seen = !strcmp(m.req[i].key[1], keys[1]) && !strcmp(m.req[i].key[0], keys[0]) &&
			       !strcmp(m.req[i].key[2], keys[2]) && !strcmp(m.req[i].key[3], keys[3]);
		if (!seen) {
			keys[1] = "other";
			bump(m.req, &m.n_req, MAX_SERIES, keys);
		}
	}
	if (reason) {
		const char *fk[4] = { endpoints[ep], reason, "", "" };
		bump(m.failopen, &m.n_failopen, 32, fk);
	}
	if (patch_ops) {
		m.patches++;
		m.patch_ops += patch_ops;
		m.patch_bytes += patch_bytes;
	}
	pthread_mutex_unlock(&m.lock);
}

/* The series of (policy, ns, action), created when there is room (the last two slots are
 * kept for the "other" folds); NULL when full. Called with the lock held. */
static vseries *vfind(const char *policy, const char *ns, int action, size_t cap)
{
	for (size_t i = 0; i < m.n_viol; i++) {
		vseries *v = &m.viol[i];
		if (v->action == action && !strcmp(v->policy, policy) && !strcmp(v->ns, ns))
			return v;
	}
	if (m.n_viol >= cap)
		return NULL;
	vseries *v = &m.viol[m.n_viol++];
	snprintf(v->policy, sizeof(v->policy), "%s", policy);
	snprintf(v->ns, sizeof(v->ns), "%s", ns);
	v->action = action;
	v->count = 0;
	return v;
}

void wh_metrics_violations(const wmap_admission_info *info)
{
	if (info->dry_run || (!info->n_hits && !info->hits_dropped))
		return;
	pthread_mutex_lock(&m.lock);
	for (size_t i = 0; i <= info->n_hits; i++) {
		const char *policy = i < info->n_hits ? info->hits[i].policy : "other";
		unsigned actions = i < info->n_hits ? info->hits[i].actions : WMAP_ACTION_AUDIT;
		unsigned long long n = i < info->n_hits ? 1 : info->hits_dropped;
		for (int a = 0; a < 3 && n; a++) {
			if (!(actions & (1u << a)))
				continue;
			vseries *v = vfind(policy, info->namespace_, a, MAX_VIOLATION_SERIES - 6);
			if (!v)
				v = vfind(policy, "other", a, MAX_VIOLATION_SERIES - 3);
			if (!v)
				v = vfind("other", "other", a, MAX_VIOLATION_SERIES);
			if (v)
				v->count += n;
		}
	}
	pthread_mutex_unlock(&m.lock);
}

void wh_metrics_http(wh_endpoint ep, unsigned status, double seconds)
{
	int si = status == 200 ? 0 : status == 400              ? 1
			     : (status == 404 || status == 405) ? 2
			     : status == 413                    ? 3
			     : status == 503                    ? 4
								: 5;
	pthread_mutex_lock(&m.lock);
	m.status[ep][si]++;
	int b = 0;
	while (b < N_BUCKETS && seconds > buckets[b])
		b++;
	m.hist[ep][b]++;
	m.hist_sum[ep] += seconds;
	m.hist_count[ep]++;
	pthread_mutex_unlock(&m.lock);
}

void wh_metrics_reload(const char *what, int ok)
{
	int w = strcmp(what, "certificate") == 0 ? 0 : 1;
	pthread_mutex_lock(&m.lock);
	if (ok) {
		m.reload_ok[w]++;
	} else {
		m.reload_fail[w]++;
		m.last_reload_fail[w] = (double)time(NULL);
	}
	pthread_mutex_unlock(&m.lock);
}

void wh_metrics_cert_expiry(time_t not_after)
{
	pthread_mutex_lock(&m.lock);
	m.cert_expiry = (double)not_after;
	pthread_mutex_unlock(&m.lock);
}

void wh_metrics_set_ready(int ready)
{
	pthread_mutex_lock(&m.lock);
	m.ready = ready;
	pthread_mutex_unlock(&m.lock);
}

/* The exposition text: a few hundred series at most (the tables above are capped). */
#define METRICS_TEXT_MAX ((size_t)16 << 20)

/* Label values are escaped as the format requires (\\, \", \n). */
static const char *esc(char *buf, size_t len, const char *s)
{
	size_t n = 0;
	for (; *s && n + 3 < len; s++) {
		if (*s == '\\' || *s == '"') {
			buf[n++] = '\\';
			buf[n++] = *s;
		} else if (*s == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else {
			buf[n++] = *s;
		}
	}
	buf[n] = '\0';
	return buf;
}

/* wmap_policy_violations, with the lock held. */
static void render_violations(wmap_buf *o)
{
	char a[300], b[300];
	wmap_buf_addf(o, "# HELP wmap_policy_violations Workloads admitted or denied at /validate "
			 "that violated a policy, by policy, action (deny, warn, audit: each of the "
			 "policy's validationActions) and namespace; dry runs not counted.\n"
			 "# TYPE wmap_policy_violations counter\n");
	for (size_t i = 0; i < m.n_viol; i++)
		wmap_buf_addf(o, "wmap_policy_violations{policy=\"%s\",action=\"%s\",namespace=\"%s\"} "
				 "%llu\n",
			      esc(a, sizeof(a), m.viol[i].policy), action_labels[m.viol[i].action],
			      esc(b, sizeof(b), m.viol[i].ns), m.viol[i].count);
}

char *wh_metrics_render(long inflight)
{
	wmap_buf o = WMAP_BUF_INIT(METRICS_TEXT_MAX, 8192);
	char a[300], b[300], c[300], d[300];
	static const char *const codes[6] = { "200", "400", "404", "413", "503", "other" };
	pthread_mutex_lock(&m.lock);
	wmap_buf_addf(&o, "# HELP wmap_webhook_requests_total Admission reviews answered, by endpoint, "
			  "workload kind, operation and result (patched, allowed, denied, failopen).\n"
			  "# TYPE wmap_webhook_requests_total counter\n");
	for (size_t i = 0; i < m.n_req; i++)
		wmap_buf_addf(&o, "wmap_webhook_requests_total{endpoint=\"%s\",kind=\"%s\",operation=\"%s\","
				  "result=\"%s\"} %llu\n",
			      esc(a, sizeof(a), m.req[i].key[0]),
			      esc(b, sizeof(b), m.req[i].key[1]), esc(c, sizeof(c), m.req[i].key[2]),
			      esc(d, sizeof(d), m.req[i].key[3]), m.req[i].count);
	wmap_buf_addf(&o, "# HELP wmap_webhook_fail_open_total Reviews allowed unchanged because wmap "
			  "could not process them, by reason.\n# TYPE wmap_webhook_fail_open_total counter\n");
	for (size_t i = 0; i < m.n_failopen; i++)
		wmap_buf_addf(&o, "wmap_webhook_fail_open_total{endpoint=\"%s\",reason=\"%s\"} %llu\n",
			      m.failopen[i].key[0], esc(a, sizeof(a), m.failopen[i].key[1]),
			      m.failopen[i].count);
	wmap_buf_addf(&o, "# HELP wmap_webhook_http_responses_total HTTP responses by endpoint and code.\n"
			  "# TYPE wmap_webhook_http_responses_total counter\n");
	for (int e = 0; e < WH_EP_COUNT; e++)
		for (int s = 0; s < 6; s++)
			if (m.status[e][s])
				wmap_buf_addf(&o, "wmap_webhook_http_responses_total{endpoint=\"%s\",code=\"%s\"} "
						  "%llu\n",
					      endpoints[e], codes[s], m.status[e][s]);
	wmap_buf_addf(&o, "# HELP wmap_webhook_request_duration_seconds Time from the request headers to "
			  "the last response byte.\n# TYPE wmap_webhook_request_duration_seconds histogram\n");
	for (int e = 0; e < WH_EP_COUNT; e++) {
		unsigned long long cum = 0;
		for (int bi = 0; bi < N_BUCKETS; bi++) {
			cum += m.hist[e][bi];
			wmap_buf_addf(&o, "wmap_webhook_request_duration_seconds_bucket{endpoint=\"%s\",le=\"%g\"}"
					  " %llu\n",
				      endpoints[e], buckets[bi], cum);
		}
		cum += m.hist[e][N_BUCKETS];
		wmap_buf_addf(&o, "wmap_webhook_request_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} "
				  "%llu\n",
			      endpoints[e], cum);
		wmap_buf_addf(&o, "wmap_webhook_request_duration_seconds_sum{endpoint=\"%s\"} %.9f\n",
			      endpoints[e], m.hist_sum[e]);
		wmap_buf_addf(&o, "wmap_webhook_request_duration_seconds_count{endpoint=\"%s\"} %llu\n",
			      endpoints[e], m.hist_count[e]);
	}
	wmap_buf_addf(&o, "# HELP wmap_webhook_patches_total Responses that carried a JSON Patch.\n"
			  "# TYPE wmap_webhook_patches_total counter\nwmap_webhook_patches_total %llu\n"
			  "# HELP wmap_webhook_patch_operations_total JSON Patch operations sent.\n"
			  "# TYPE wmap_webhook_patch_operations_total counter\n"
			  "wmap_webhook_patch_operations_total %llu\n"
			  "# HELP wmap_webhook_patch_bytes_total JSON Patch bytes sent (before base64).\n"
			  "# TYPE wmap_webhook_patch_bytes_total counter\nwmap_webhook_patch_bytes_total %llu\n",
		      m.patches, m.patch_ops, m.patch_bytes);
	wmap_buf_addf(&o, "# HELP wmap_webhook_reloads_total File reloads by file and result; a failed "
			  "reload keeps the last good file in force.\n"
			  "# TYPE wmap_webhook_reloads_total counter\n");
	static const char *const what[2] = { "certificate", "policy" };
	for (int w = 0; w < 2; w++) {
		wmap_buf_addf(&o, "wmap_webhook_reloads_total{file=\"%s\",result=\"success\"} %llu\n",
			      what[w], m.reload_ok[w]);
		wmap_buf_addf(&o, "wmap_webhook_reloads_total{file=\"%s\",result=\"failure\"} %llu\n",
			      what[w], m.reload_fail[w]);
	}
	wmap_buf_addf(&o, "# HELP wmap_webhook_reload_last_failure_timestamp_seconds When a reload last "
			  "failed (0 = never).\n# TYPE wmap_webhook_reload_last_failure_timestamp_seconds "
			  "gauge\n");
	for (int w = 0; w < 2; w++)
		wmap_buf_addf(&o, "wmap_webhook_reload_last_failure_timestamp_seconds{file=\"%s\"} %.0f\n",
			      what[w], m.last_reload_fail[w]);
	wmap_buf_addf(&o, "# HELP wmap_webhook_certificate_expiry_timestamp_seconds notAfter of the serving "
			  "certificate in force.\n# TYPE wmap_webhook_certificate_expiry_timestamp_seconds "
			  "gauge\nwmap_webhook_certificate_expiry_timestamp_seconds %.0f\n",
		      m.cert_expiry);
	wmap_buf_addf(&o, "# HELP wmap_webhook_ready 1 once every definition is compiled and the server "
			  "accepts reviews.\n# TYPE wmap_webhook_ready gauge\nwmap_webhook_ready %d\n",
		      m.ready);
	render_violations(&o);
	pthread_mutex_unlock(&m.lock);
	wmap_buf_addf(&o, "# HELP wmap_webhook_in_flight_requests Requests being read or answered.\n"
			  "# TYPE wmap_webhook_in_flight_requests gauge\nwmap_webhook_in_flight_requests %ld\n",
		      inflight);
	return wmap_buf_take(&o, NULL);
}
