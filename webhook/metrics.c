/* wmap-webhook: Prometheus metrics, text exposition format 0.0.4.
 *
 * Three things: the request metrics the HTTP server counts, the table of metrics providers
 * (each part registers a function that writes its own families; GET /metrics, or the path a
 * provider names, renders them in order), and the one writer of the text format that every
 * provider uses (wh_prom_family, wh_prom_sample).
 *
 * Request counters live behind one mutex: a request touches it twice for a few nanoseconds,
 * far below the cost of the TLS record around it. Label sets are bounded (kinds the request
 * names are free text, so past MAX_SERIES new ones are counted as kind="other"). */
#include <math.h>
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

static void request_metrics(void *ctx, wmap_buf *o);

void wh_metrics_init(void)
{
	/* The request metrics come first on /metrics. */
	wh_metrics_provide("/metrics", request_metrics, NULL);
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

/* ---- the Prometheus text writer -------------------------------------------------- */

/* Appends s escaped as a label value (\\, \", \n) or, with help set, as HELP text (\\, \n). */
static void put_escaped(wmap_buf *o, const char *s, int help)
{
	const char *run = s;
	for (; *s; s++) {
		if (*s != '\\' && *s != '\n' && (help || *s != '"'))
			continue;
		const char esc[3] = { '\\', *s == '\n' ? 'n' : *s, '\0' };
		wmap_buf_add(o, run, (size_t)(s - run));
		wmap_buf_add(o, esc, 2);
		run = s + 1;
	}
	wmap_buf_add(o, run, (size_t)(s - run));
}

void wh_prom_family(wmap_buf *o, const char *name, const char *type, const char *help)
{
	wmap_buf_addf(o, "# HELP %s ", name);
	put_escaped(o, help, 1);
	wmap_buf_addf(o, "\n# TYPE %s %s\n", name, type);
}

void wh_prom_sample(wmap_buf *o, const char *name, double value, ...)
{
	va_list ap;
	const char *label;
	int n = 0;
	wmap_buf_adds(o, name);
	va_start(ap, value);
	while ((label = va_arg(ap, const char *)) != NULL) {
		const char *v = va_arg(ap, const char *);
		wmap_buf_addf(o, "%s%s=\"", n++ ? "," : "{", label);
		put_escaped(o, v ? v : "", 0);
		wmap_buf_addc(o, '"');
	}
	va_end(ap);
	if (n)
		wmap_buf_addc(o, '}');
	/* Counts are integers: written as such up to 2^53 (%g would round them). */
	if (isnan(value))
		wmap_buf_adds(o, " NaN\n");
	else if (isinf(value))
		wmap_buf_adds(o, value > 0 ? " +Inf\n" : " -Inf\n");
	else if (value == floor(value) && fabs(value) < 9007199254740992.0)
		wmap_buf_addf(o, " %.0f\n", value);
	else
		wmap_buf_addf(o, " %.9g\n", value);
}

/* ---- the providers ---------------------------------------------------------------- */

#define MAX_PROVIDERS 32
#define PATH_MAX_LEN 64
/* The exposition of one path: a few hundred series for /metrics (the tables above are
 * capped); a provider of its own path may write far more (a series per workload). */
#define METRICS_TEXT_MAX ((size_t)256 << 20)

static struct {
	pthread_mutex_t lock; /* held while providers render: withdraw waits for them */
	struct {
		char path[PATH_MAX_LEN];
		wh_metrics_fn fn;
		void *ctx;
	} p[MAX_PROVIDERS];
	size_t n;
} providers = { .lock = PTHREAD_MUTEX_INITIALIZER };

int wh_metrics_provide(const char *path, wh_metrics_fn fn, void *ctx)
{
	int rc = 0;
	if (strlen(path) >= PATH_MAX_LEN || strncmp(path, "/metrics", 8) != 0)
		return WMAP_EINVAL;
	pthread_mutex_lock(&providers.lock);
	if (providers.n < MAX_PROVIDERS) {
		snprintf(providers.p[providers.n].path, PATH_MAX_LEN, "%s", path);
		providers.p[providers.n].fn = fn;
		providers.p[providers.n++].ctx = ctx;
	} else {
		rc = WMAP_ELIMIT;
	}
	pthread_mutex_unlock(&providers.lock);
	return rc;
}

void wh_metrics_withdraw(void *ctx)
{
	pthread_mutex_lock(&providers.lock);
	size_t j = 0;
	for (size_t i = 0; i < providers.n; i++)
		if (providers.p[i].ctx != ctx)
			providers.p[j++] = providers.p[i];
	providers.n = j;
	pthread_mutex_unlock(&providers.lock);
}

char *wh_metrics_render(const char *path, size_t *len, int *found)
{
	wmap_buf o = WMAP_BUF_INIT(METRICS_TEXT_MAX, 8192);
	*found = 0;
	*len = 0;
	pthread_mutex_lock(&providers.lock);
	for (size_t i = 0; i < providers.n; i++) {
		if (strcmp(providers.p[i].path, path) != 0)
			continue;
		*found = 1;
		providers.p[i].fn(providers.p[i].ctx, &o);
	}
	pthread_mutex_unlock(&providers.lock);
	if (!*found)
		return NULL;
	return wmap_buf_take(&o, len); /* no series at all is an empty text, not a failure */
}

/* ---- the request metrics ---------------------------------------------------------- */

/* wmap_policy_violations, with the lock held. */
static void render_violations(wmap_buf *o)
{
	wh_prom_family(o, "wmap_policy_violations", "counter",
		       "Workloads admitted or denied at /validate that violated a policy, by policy, "
		       "action (deny, warn, audit: each of the policy's validationActions) and "
		       "namespace; dry runs not counted.");
	for (size_t i = 0; i < m.n_viol; i++)
		wh_prom_sample(o, "wmap_policy_violations", (double)m.viol[i].count, "policy",
			       m.viol[i].policy, "action", action_labels[m.viol[i].action], "namespace",
			       m.viol[i].ns, NULL);
}

/* The request metrics (wh_metrics_fn). */
static void request_metrics(void *ctx, wmap_buf *o)
{
	static const char *const codes[6] = { "200", "400", "404", "413", "503", "other" };
	static const char *const what[2] = { "certificate", "policy" };
	(void)ctx;
	pthread_mutex_lock(&m.lock);
	wh_prom_family(o, "wmap_webhook_requests_total", "counter",
		       "Admission reviews answered, by endpoint, workload kind, operation and result "
		       "(patched, allowed, denied, failopen).");
	for (size_t i = 0; i < m.n_req; i++)
		wh_prom_sample(o, "wmap_webhook_requests_total", (double)m.req[i].count, "endpoint",
			       m.req[i].key[0], "kind", m.req[i].key[1], "operation", m.req[i].key[2],
			       "result", m.req[i].key[3], NULL);
	wh_prom_family(o, "wmap_webhook_fail_open_total", "counter",
		       "Reviews allowed unchanged because wmap could not process them, by reason.");
	for (size_t i = 0; i < m.n_failopen; i++)
		wh_prom_sample(o, "wmap_webhook_fail_open_total", (double)m.failopen[i].count,
			       "endpoint", m.failopen[i].key[0], "reason", m.failopen[i].key[1], NULL);
	wh_prom_family(o, "wmap_webhook_http_responses_total", "counter",
		       "HTTP responses by endpoint and code.");
	for (int e = 0; e < WH_EP_COUNT; e++)
		for (int s = 0; s < 6; s++)
			if (m.status[e][s])
				wh_prom_sample(o, "wmap_webhook_http_responses_total", (double)m.status[e][s],
					       "endpoint", endpoints[e], "code", codes[s], NULL);
	wh_prom_family(o, "wmap_webhook_request_duration_seconds", "histogram",
		       "Time from the request headers to the last response byte.");
	for (int e = 0; e < WH_EP_COUNT; e++) {
		unsigned long long cum = 0;
		char le[32];
		for (int bi = 0; bi < N_BUCKETS; bi++) {
			cum += m.hist[e][bi];
			snprintf(le, sizeof(le), "%g", buckets[bi]);
			wh_prom_sample(o, "wmap_webhook_request_duration_seconds_bucket", (double)cum,
				       "endpoint", endpoints[e], "le", le, NULL);
		}
		cum += m.hist[e][N_BUCKETS];
		wh_prom_sample(o, "wmap_webhook_request_duration_seconds_bucket", (double)cum,
			       "endpoint", endpoints[e], "le", "+Inf", NULL);
		wh_prom_sample(o, "wmap_webhook_request_duration_seconds_sum", m.hist_sum[e],
			       "endpoint", endpoints[e], NULL);
		wh_prom_sample(o, "wmap_webhook_request_duration_seconds_count",
			       (double)m.hist_count[e], "endpoint", endpoints[e], NULL);
	}
	wh_prom_family(o, "wmap_webhook_patches_total", "counter", "Responses that carried a JSON Patch.");
	wh_prom_sample(o, "wmap_webhook_patches_total", (double)m.patches, NULL);
	wh_prom_family(o, "wmap_webhook_patch_operations_total", "counter", "JSON Patch operations sent.");
	wh_prom_sample(o, "wmap_webhook_patch_operations_total", (double)m.patch_ops, NULL);
	wh_prom_family(o, "wmap_webhook_patch_bytes_total", "counter", "JSON Patch bytes sent (before base64).");
	wh_prom_sample(o, "wmap_webhook_patch_bytes_total", (double)m.patch_bytes, NULL);
	wh_prom_family(o, "wmap_webhook_reloads_total", "counter",
		       "File reloads by file and result; a failed reload keeps the last good file in force.");
	for (int w = 0; w < 2; w++) {
		wh_prom_sample(o, "wmap_webhook_reloads_total", (double)m.reload_ok[w], "file", what[w],
			       "result", "success", NULL);
		wh_prom_sample(o, "wmap_webhook_reloads_total", (double)m.reload_fail[w], "file",
			       what[w], "result", "failure", NULL);
	}
	wh_prom_family(o, "wmap_webhook_reload_last_failure_timestamp_seconds", "gauge",
		       "When a reload last failed (0 = never).");
	for (int w = 0; w < 2; w++)
		wh_prom_sample(o, "wmap_webhook_reload_last_failure_timestamp_seconds",
			       m.last_reload_fail[w], "file", what[w], NULL);
	wh_prom_family(o, "wmap_webhook_certificate_expiry_timestamp_seconds", "gauge",
		       "notAfter of the serving certificate in force.");
	wh_prom_sample(o, "wmap_webhook_certificate_expiry_timestamp_seconds", m.cert_expiry, NULL);
	wh_prom_family(o, "wmap_webhook_ready", "gauge",
		       "1 once every definition is compiled and the server accepts reviews.");
	wh_prom_sample(o, "wmap_webhook_ready", m.ready, NULL);
	render_violations(o);
	pthread_mutex_unlock(&m.lock);
}
