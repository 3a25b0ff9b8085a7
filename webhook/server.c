/* wmap-webhook: HTTP over TLS with libmicrohttpd (internal polling thread pool).
 *
 * The handler runs on MHD's poll threads. A review takes the state in force (inforce.c) and
 * its poll thread's prepared wmap_engine of it (libjq is not thread-safe, and compiling
 * costs ~25 ms, so no compile ever happens on the request path). The body is copied into
 * one buffer with a hard cap and parsed once (wmap_admission_parse: wmap_json_parse with
 * caps on depth, members and values, and the deadline) into jansson values. GET /metrics
 * (and any path a metrics provider serves) renders the providers (metrics.c). The server
 * reads the state in force and writes metrics; it calls no other part. */
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "webhook.h"
#include "wmap/buf.h"
#include "wmap/arena.h"
#include "wmap/json_text.h"

typedef struct request {
	wh_endpoint ep;
	int is_post_review;
	int too_big;
	int over_budget; /* the global in-flight byte budget was exceeded */
	unsigned status;
	struct timespec start;
	wmap_buf body;    /* capped at max_body */
	size_t len;       /* body bytes received (kept after the body is freed) */
	size_t accounted; /* bytes of body memory counted in the in-flight budget */
	wh_server *srv;
} request;

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static enum MHD_Result reply(struct MHD_Connection *c, request *r, unsigned status,
			     const char *type, char *body, size_t len)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (r->srv->draining)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	r->status = status;
	enum MHD_Result ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, request *r, unsigned status,
				  const char *text)
{
	char *body = strdup(text);
	if (!body)
		return MHD_NO;
	return reply(c, r, status, "text/plain; charset=utf-8", body, strlen(body));
}

/* A metav1.Status body for a request we cannot answer with an AdmissionReview. */
static enum MHD_Result reply_status(struct MHD_Connection *c, request *r, unsigned status,
				    const char *message)
{
	json_t *st = json_pack("{s:s, s:s, s:s, s:i, s:s}", "apiVersion", "v1", "kind", "Status",
			       "status", "Failure", "code", (int)status, "message", message);
	size_t n = 0;
	char *body = st ? wmap_json_text(st, &n) : NULL;
	json_decref(st);
	if (!body)
		return MHD_NO;
	char *nl = realloc(body, n + 2);
	if (nl) {
		body = nl;
		body[n++] = '\n';
		body[n] = '\0';
	}
	return reply(c, r, status, "application/json", body, n);
}

/* "10s", "2500ms": the apiserver's own deadline for this call, in milliseconds. */
static long query_timeout_ms(struct MHD_Connection *c)
{
	const char *t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "timeout");
	if (!t)
		return 0;
	char *end;
	errno = 0;
	double v = strtod(t, &end);
	if (errno || end == t || v <= 0)
		return 0;
	if (strcmp(end, "ms") == 0)
		return (long)v;
	if (strcmp(end, "s") == 0 || *end == '\0')
		return (long)(v * 1000);
	if (strcmp(end, "m") == 0)
		return (long)(v * 60000);
	return 0;
}

static void log_review(const request *r, const wmap_admission_info *info,
		       const wmap_json_cut *cut, const char *error)
{
	json_t *f = json_pack("{s:s, s:i}", "endpoint",
			      r->ep == WH_EP_MUTATE ? "mutate" : "validate", "status",
			      (int)r->status);
	if (!f)
		return;
	if (info) {
		char nn[340];
		snprintf(nn, sizeof(nn), "%s%s%s", info->namespace_, info->namespace_[0] ? "/" : "",
			 info->name);
		json_object_set_new(f, "uid", json_string(info->uid));
		json_object_set_new(f, "kind", json_string(info->kind));
		json_object_set_new(f, "object", json_string(nn));
		json_object_set_new(f, "operation", json_string(info->operation));
		json_object_set_new(f, "dryRun", json_boolean(info->dry_run));
		json_object_set_new(f, "result", json_string(info->result ? info->result : ""));
		if (info->reason)
			json_object_set_new(f, "reason", json_string(info->reason));
		json_object_set_new(f, "patchOps", json_integer((json_int_t)info->patch_ops));
		json_object_set_new(f, "patchBytes", json_integer((json_int_t)info->patch_bytes));
	}
	if (cut && cut->reason) {
		/* Where the review was cut, as a place in the body: the path would quote keys. */
		json_object_set_new(f, "cutLine", json_integer(cut->line));
		json_object_set_new(f, "cutColumn", json_integer(cut->column));
		json_object_set_new(f, "cutValuesLeftOut", json_integer((json_int_t)cut->left_out));
	}
	if (error)
		json_object_set_new(f, "error", json_string(error));
	json_object_set_new(f, "bodyBytes", json_integer((json_int_t)r->len));
	json_object_set_new(f, "durationMs", json_real(since(&r->start) * 1000.0));
	wh_log("info", "admission", f);
	json_decref(f);
}

/* Refuses a review with a Status of code and message, counts it as invalid when asked, and
 * logs it with log_msg (NULL: message), which never quotes the body. */
static enum MHD_Result refuse(struct MHD_Connection *c, request *r, unsigned code,
			      const char *message, int invalid, const char *log_msg)
{
	enum MHD_Result ret = reply_status(c, r, code, message);
	if (invalid)
		wh_metrics_request(r->ep, "", "", "invalid", NULL, 0, 0);
	log_review(r, NULL, NULL, log_msg ? log_msg : message);
	return ret;
}

/* When a review must be answered by (monotonic ns): --request-budget-ms after it arrived, or
 * the API server's own timeout when that is shorter; 0 for no limit. */
static int64_t review_deadline(struct MHD_Connection *c, const request *r)
{
	long budget = (long)r->srv->opt.budget_ms, tmo = query_timeout_ms(c);
	if (tmo > 0 && (budget == 0 || tmo < budget))
		budget = tmo;
	if (budget <= 0)
		return 0;
	return (int64_t)r->start.tv_sec * 1000000000 + r->start.tv_nsec + (int64_t)budget * 1000000;
}

/* Reads the body into *review with caps: a review over one is cut, not refused, and answered
 * from its envelope (wmap_admission_parse); the deadline is checked while reading too. NULL
 * when the review was refused (answered in *ret). */
static json_t *read_review(struct MHD_Connection *c, request *r, wmap_json_cut *cut,
			   int64_t deadline_ns, enum MHD_Result *ret)
{
	json_error_t jerr;
	json_t *review = NULL;
	int prc = r->len ? wmap_admission_parse(&review, cut, r->body.data, r->len, deadline_ns, &jerr)
			 : WMAP_EINVAL;
	if (prc == WMAP_ENOMEM) {
		*ret = refuse(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory", 0,
			      "out of memory reading the review");
		return NULL;
	}
	if (!review) {
		char msg[300], log_msg[100];
		if (!r->len)
			snprintf(msg, sizeof(msg), "empty body: expected an AdmissionReview");
		else
			snprintf(msg, sizeof(msg), "body is not JSON: line %d column %d: %s",
				 jerr.line, jerr.column, jerr.text);
		/* The log gets the place only: jansson's text may quote the body. */
		snprintf(log_msg, sizeof(log_msg), "body is not JSON: line %d column %d", jerr.line,
			 jerr.column);
		*ret = refuse(c, r, MHD_HTTP_BAD_REQUEST, msg, 1, r->len ? log_msg : NULL);
		return NULL;
	}
	/* The parse owns the body from here; free it early to bound memory. */
	wmap_buf_free(&r->body);
	return review;
}

static enum MHD_Result answer_review(struct MHD_Connection *c, request *r)
{
	wh_server *s = r->srv;
	if (r->too_big) {
		char msg[128];
		snprintf(msg, sizeof(msg), "request body exceeds %zu bytes", s->opt.max_body);
		return refuse(c, r, 413, msg, 0, NULL);
	}
	if (r->over_budget)
		return refuse(c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
			      "too many request bytes in flight; retry", 0,
			      "in-flight byte budget exceeded");
	wmap_admission_config cfg = { 0 };
	wmap_json_cut cut;
	enum MHD_Result ret = MHD_NO;
	cfg.deadline_ns = review_deadline(c, r);
	/* Every jansson value of the review, from the parse to the written answer, comes from
	 * this thread's arena and is released at once (wmap/arena.h). */
	wmap_arena_begin();
	json_t *review = read_review(c, r, &cut, cfg.deadline_ns, &ret);
	if (!review) {
		wmap_arena_end();
		return ret;
	}

	wh_state *st = wh_inforce_acquire(s->inforce);
	cfg.scheduler = s->opt.scheduler;
	cfg.queue = s->opt.queue;
	cfg.cosched_profile = s->opt.cosched_profile;
	cfg.kai_external = s->opt.kai_mode && !strcmp(s->opt.kai_mode, "external");
	cfg.policies = st ? st->policies : NULL;
	cfg.cut = &cut;
	cfg.crds = st ? st->crds : NULL;

	wmap_admission_info info;
	wmap_error err;
	size_t body_len = 0;
	char *body = NULL;
	wmap_engine *eng = wh_state_engine(s->inforce, st);
	wmap_admission_mode mode = s->opt.null_admission   ? WMAP_ADMISSION_ALLOW
				   : r->ep == WH_EP_MUTATE ? WMAP_ADMISSION_MUTATE
							   : WMAP_ADMISSION_VALIDATE;
	/* The answer's text is written directly (malloc, outliving the arena). */
	int rc = eng ? wmap_admission_review_text(&body, &body_len, eng, &cfg, mode, review,
						  &info, &err)
		     : wmap_error_set(&err, WMAP_ENOMEM, "no engine");
	wh_inforce_release(st);
	if (!wmap_arena_holds(review))
		json_decref(review); /* else the arena's end drops the whole tree at once */
	wmap_arena_end();
	if (rc == WMAP_EINVAL)
		return refuse(c, r, MHD_HTTP_BAD_REQUEST, err.message, 1, NULL);
	if (rc)
		return refuse(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, err.message, 0, NULL);
	if (!body)
		return refuse(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory", 0,
			      "out of memory writing the response");
	ret = reply(c, r, MHD_HTTP_OK, "application/json", body, body_len);
	wh_metrics_request(r->ep, info.kind, info.operation, info.result, info.reason,
			   info.patch_ops, info.patch_bytes);
	wh_metrics_violations(&info);
	log_review(r, &info, &cut, NULL);
	return ret;
}

/* GET /metrics, or another path a provider serves: the providers' text; 0 when none serves
 * url (then it is a 404). */
static enum MHD_Result reply_metrics(struct MHD_Connection *c, request *r, const char *url,
				     int *found)
{
	size_t len = 0;
	char *text = wh_metrics_render(url, &len, found);
	if (!text)
		return MHD_NO;
	return reply(c, r, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

/* A request's first call: the reviews are read on (or refused at once when too large); the
 * probes and metrics are answered now. */
static enum MHD_Result route(struct MHD_Connection *c, request *r, const char *url,
			     const char *method)
{
	wh_server *s = r->srv;
	int post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
		  strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	if (strcmp(url, "/mutate") == 0 || strcmp(url, "/validate") == 0) {
		r->ep = url[1] == 'm' ? WH_EP_MUTATE : WH_EP_VALIDATE;
		if (!post)
			return reply_text(c, r, MHD_HTTP_METHOD_NOT_ALLOWED,
					  "POST an AdmissionReview here\n");
		r->is_post_review = 1;
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > s->opt.max_body) {
			/* Refuse before reading a byte of it. */
			r->too_big = 1;
			return answer_review(c, r);
		}
		return MHD_YES;
	}
	if (!get)
		return reply_text(c, r, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (strcmp(url, "/healthz") == 0 || strcmp(url, "/livez") == 0)
		return reply_text(c, r, MHD_HTTP_OK, "ok\n");
	if (strcmp(url, "/readyz") == 0) {
		int ok = wh_inforce_ready(s->inforce) && !s->draining;
		return reply_text(c, r, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
				  ok ? "ok\n" : s->draining ? "draining\n"
							    : "starting\n");
	}
	if (strncmp(url, "/metrics", 8) == 0) {
		int found = 0;
		enum MHD_Result ret = reply_metrics(c, r, url, &found);
		if (found)
			return ret;
	}
	return reply_text(c, r, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* A piece of a review's body: kept within --max-body and the in-flight budget (past either,
 * the rest is drained and the review answered at the end). */
static enum MHD_Result take_body(request *r, const char *data, size_t n)
{
	wh_server *s = r->srv;
	if (r->too_big || r->over_budget)
		return MHD_YES; /* drain what was sent, answer at the end */
	size_t want = wmap_buf_grow_size(&r->body, n);
	if (want == 0) {
		r->too_big = 1;
		wmap_buf_free(&r->body);
		atomic_fetch_sub(&s->inflight_bytes, r->accounted);
		r->accounted = 0;
		return MHD_YES;
	}
	if (want > r->body.alloc) {
		/* Counted before it is taken: the budget bounds memory, not just bodies. */
		size_t grow = want - r->body.alloc;
		if (atomic_fetch_add(&s->inflight_bytes, grow) + grow > s->opt.max_inflight_bytes) {
			atomic_fetch_sub(&s->inflight_bytes, grow);
			r->over_budget = 1;
			return MHD_YES;
		}
		r->accounted += grow;
	}
	if (wmap_buf_add(&r->body, data, n))
		return MHD_NO;
	r->len = r->body.len;
	return MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version,
			       const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	wh_server *s = cls;
	request *r = *con_cls;
	(void)version;
	if (!r) {
		if (!(r = calloc(1, sizeof(*r))))
			return MHD_NO;
		r->srv = s;
		wmap_buf_init(&r->body, s->opt.max_body, 16384);
		r->ep = WH_EP_OTHER;
		clock_gettime(CLOCK_MONOTONIC, &r->start);
		*con_cls = r;
		atomic_fetch_add(&s->inflight, 1);
		return route(c, r, url, method);
	}
	if (!r->is_post_review) {
		*upload_data_size = 0; /* a body on a GET is read and dropped */
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
		return take_body(r, upload_data, n);
	}
	return answer_review(c, r);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	wh_server *s = cls;
	request *r = *con_cls;
	(void)c;
	if (!r)
		return;
	*con_cls = NULL;
	wh_metrics_http(r->ep, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? r->status : 0,
			since(&r->start));
	atomic_fetch_sub(&s->inflight_bytes, r->accounted);
	atomic_fetch_sub(&s->inflight, 1);
	wmap_buf_free(&r->body);
	free(r);
}

static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
	char buf[1024];
	(void)cls;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	size_t n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	json_t *f = json_pack("{s:s}", "component", "libmicrohttpd");
	wh_log("debug", buf, f);
	json_decref(f);
}

/* wmap_webhook_in_flight_requests (wh_metrics_fn). */
static void server_metrics(void *ctx, wmap_buf *o)
{
	const wh_server *s = ctx;
	wh_prom_family(o, "wmap_webhook_in_flight_requests", "gauge", "Requests being read or answered.");
	wh_prom_sample(o, "wmap_webhook_in_flight_requests", (double)atomic_load(&s->inflight), NULL);
}

int wh_server_start(wh_server *s)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS | MHD_USE_ITC |
			 MHD_USE_ERROR_LOG;
#ifdef __linux__
	flags |= MHD_USE_EPOLL;
#endif
	s->daemon = MHD_start_daemon(
		flags, (uint16_t)s->opt.port, NULL, NULL, &handler, s,
		MHD_OPTION_EXTERNAL_LOGGER, &mhd_logger, NULL,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)s->opt.threads,
		MHD_OPTION_HTTPS_CERT_CALLBACK, wh_tls_callback(),
		MHD_OPTION_HTTPS_PRIORITIES, s->opt.tls_priorities,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->opt.connection_timeout,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->opt.max_connections,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536,
		MHD_OPTION_NOTIFY_COMPLETED, &completed, s,
		MHD_OPTION_END);
	if (!s->daemon) {
		wh_logf("error", "cannot start the HTTPS server on port %d", s->opt.port);
		return -1;
	}
	if (wh_metrics_provide("/metrics", server_metrics, s) != 0) {
		wh_logf("error", "too many metrics providers");
		return -1;
	}
	return 0;
}

void wh_server_unready(wh_server *s)
{
	s->draining = 1;
	wh_metrics_set_ready(0);
}

void wh_server_drain(wh_server *s)
{
	s->draining = 1;
	wh_metrics_set_ready(0);
	/* Stop accepting; keep-alive connections are told to close with their next answer. */
	MHD_socket fd = MHD_quiesce_daemon(s->daemon);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load(&s->inflight) > 0 && since(&t0) < (double)s->opt.drain_s) {
		struct timespec pause = { 0, 10 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
	long left = atomic_load(&s->inflight);
	wh_logf(left ? "warn" : "info", "drained in %.3f s, %ld request(s) left", since(&t0),
		left);
	MHD_stop_daemon(s->daemon);
	s->daemon = NULL;
	wh_metrics_withdraw(s);
}
