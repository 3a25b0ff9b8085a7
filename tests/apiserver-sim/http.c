/* The HTTPS front: libmicrohttpd over GnuTLS on 127.0.0.1, one thread per connection, bodies
 * capped, authentication, dispatch to discovery or the API, Status bodies, Warning headers and
 * the request log. */
#include "sim.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct conn_state {
    char uri[2048];
    char *buf;
    size_t len, cap;
    bool too_big;
    bool started;     /* the first call only announces the headers */
    struct timespec t0;
};

void sim_log_request_as(struct sim *s, const char *method, const char *url, int code, double ms,
                        const struct sim_user *u)
{
    FILE *f = s->log;
    char ts[40], as[1400] = "";
    if (!f)
        return;
    sim_now_rfc3339(ts, sizeof(ts));
    if (u && u->impersonated) {
        size_t n = (size_t)snprintf(as, sizeof(as), " as=%s groups=", u->name);
        for (int i = 0; i < u->n_groups && n < sizeof(as); i++)
            n += (size_t)snprintf(as + n, sizeof(as) - n, "%s%s", i ? "," : "", u->groups[i]);
        if (n < sizeof(as))
            snprintf(as + n, sizeof(as) - n, " uid=%s", u->uid);
    }
    pthread_mutex_lock(&s->log_lock);
    fprintf(f, "%s %s %s %d %.1fms%s\n", ts, method, url, code, ms, as);
    fflush(f);
    pthread_mutex_unlock(&s->log_lock);
}

void sim_log_request(struct sim *s, const char *method, const char *url, int code, double ms)
{
    sim_log_request_as(s, method, url, code, ms, NULL);
}

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct conn_state *st = calloc(1, sizeof(*st));
    (void)cls;
    (void)conn;
    if (!st)
        return NULL;
    snprintf(st->uri, sizeof(st->uri), "%s", uri ? uri : "");
    clock_gettime(CLOCK_MONOTONIC, &st->t0);
    return st;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    struct conn_state *st = *con_cls;
    (void)cls;
    (void)conn;
    (void)toe;
    if (st) {
        free(st->buf);
        free(st);
        *con_cls = NULL;
    }
}

/* `Warning: 299 - "text"` with quotes and backslashes escaped, as RFC 7234 wants. */
static void warning_header(const char *text, char *out, size_t n)
{
    size_t o = 0;
    int w = snprintf(out, n, "299 - \"");
    if (w < 0)
        return;
    o = (size_t)w;
    for (const char *p = text; *p && o + 4 < n; p++) {
        if (*p == '"' || *p == '\\')
            out[o++] = '\\';
        out[o++] = (*p == '\n' || *p == '\r') ? ' ' : *p;
    }
    out[o++] = '"';
    out[o] = '\0';
}

static enum MHD_Result respond(struct MHD_Connection *conn, struct sim_req *r)
{
    char *text;
    struct MHD_Response *resp;
    enum MHD_Result ret;
    const char *ctype = "application/json";
    if (r->stream && !r->err.code) {
        resp = r->stream;
        r->stream = NULL;
        for (int i = 0; i < r->n_warnings; i++) {
            char h[1200];
            warning_header(r->warnings[i], h, sizeof(h));
            MHD_add_response_header(resp, "Warning", h);
        }
        ret = MHD_queue_response(conn, 200, resp);
        MHD_destroy_response(resp);
        return ret;
    }
    if (r->err.code) {
        json_t *st = sim_status_json(&r->err);
        text = json_dumps(st, JSON_COMPACT);
        json_decref(st);
        r->status = r->err.code;
    } else if (json_is_string(r->resp)) {
        text = strdup(json_string_value(r->resp));
        ctype = "text/plain; charset=utf-8";
    } else {
        text = json_dumps(r->resp, JSON_COMPACT);
        if (r->resp_content_type)
            ctype = r->resp_content_type;
    }
    if (!text)
        return MHD_NO;
    resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", ctype);
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    if (r->has_retry_after && r->retry_after >= 0) {
        char ra[32];
        snprintf(ra, sizeof(ra), "%d", r->retry_after);
        MHD_add_response_header(resp, "Retry-After", ra);
    }
    for (int i = 0; i < r->n_warnings; i++) {
        char h[1200];
        warning_header(r->warnings[i], h, sizeof(h));
        MHD_add_response_header(resp, "Warning", h);
    }
    ret = MHD_queue_response(conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    struct sim *s = cls;
    struct conn_state *st = *con_cls;
    struct sim_req r;
    struct timespec t1;
    enum MHD_Result ret;
    (void)version;
    if (!st)
        return MHD_NO;
    if (!st->started) {
        st->started = true;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t add = *upload_size;
        *upload_size = 0;
        if (st->too_big || st->len + add > SIM_BODY_CAP) {
            st->too_big = true; /* keep draining, answer once the body is read */
            return MHD_YES;
        }
        if (st->len + add + 1 > st->cap) {
            size_t ncap = st->cap ? st->cap : 16384;
            char *nb;
            while (ncap < st->len + add + 1)
                ncap *= 2;
            nb = realloc(st->buf, ncap);
            if (!nb)
                return MHD_NO;
            st->buf = nb;
            st->cap = ncap;
        }
        memcpy(st->buf + st->len, upload, add);
        st->len += add;
        st->buf[st->len] = '\0';
        return MHD_YES;
    }
    memset(&r, 0, sizeof(r));
    r.method = method;
    r.path = url;
    r.conn = conn;
    r.body = st->buf ? st->buf : "";
    r.body_len = st->len;
    r.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    r.accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
    if (!st->too_big && r.content_type && !strncmp(r.content_type, "application/vnd.kubernetes.protobuf", 36)) {
        /* Typed clients (kubectl's generators) send protobuf; decode what we know to JSON. */
        char perr[256];
        json_t *obj = st->len ? sim_protobuf_decode(st->buf, st->len, perr, sizeof(perr)) : NULL;
        char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
        json_decref(obj);
        if (!text) {
            sim_err_set(&r.err, 415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                        "accepted media types include: application/json, application/yaml (%s)",
                        st->len ? perr : "empty body");
        } else {
            free(st->buf);
            st->buf = text;
            st->len = st->cap = strlen(text);
            r.body = st->buf;
            r.body_len = st->len;
            r.content_type = "application/json";
        }
    }
    if (r.err.code) {
        /* already answered */
    } else if (st->too_big) {
        sim_err_set(&r.err, 413, "RequestEntityTooLarge", "Request entity too large: limit is %u", SIM_BODY_CAP);
    } else if (sim_authenticate(s, conn, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization"),
                                &r.user) < 0) {
        sim_err_set(&r.err, 401, "Unauthorized", "Unauthorized");
    } else if (sim_impersonate(conn, &r.user, &r.err) < 0) {
        /* r.err says why */
    } else if (sim_faults_handle(&r)) {
        /* /sim/faults, or an injected fault */
    } else {
        pthread_mutex_lock(&s->lock);
        if (!sim_discovery_handle(s, &r) && !r.err.code)
            sim_api_handle(s, &r);
        pthread_mutex_unlock(&s->lock);
        if (!r.err.code && !r.resp && !r.stream)
            sim_err_set(&r.err, 500, "InternalError", "Internal error occurred: no response");
    }
    ret = respond(conn, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    sim_log_request_as(s, method, st->uri, r.status,
                       (double)(t1.tv_sec - st->t0.tv_sec) * 1000.0 + (double)(t1.tv_nsec - st->t0.tv_nsec) / 1e6,
                       &r.user);
    json_decref(r.resp);
    sim_err_clear(&r.err);
    return ret;
}

void *sim_http_start(struct sim *s, int *port, char *err, size_t n)
{
    struct sockaddr_in sa;
    struct MHD_Daemon *d;
    const union MHD_DaemonInfo *di;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)*port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS |
                             MHD_USE_ERROR_LOG,
                         0, NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                         MHD_OPTION_HTTPS_MEM_KEY, s->server_key_pem, MHD_OPTION_HTTPS_MEM_CERT, s->server_cert_pem,
                         MHD_OPTION_HTTPS_MEM_TRUST, s->client_ca_pem, MHD_OPTION_URI_LOG_CALLBACK, uri_log, NULL,
                         MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned)200, MHD_OPTION_END);
    if (!d) {
        snprintf(err, n, "cannot listen on 127.0.0.1:%d", *port);
        return NULL;
    }
    di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    if (di)
        *port = di->port;
    return d;
}

void sim_http_stop(void *d)
{
    if (d)
        MHD_stop_daemon(d);
}
