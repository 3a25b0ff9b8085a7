/* sim-testhook: a tiny admission webhook for the end-to-end scenarios. The URL path picks the
 * behaviour, so one process serves every mode:
 *   /add-label           add label KEY=VALUE to metadata.labels (JSON Patch)
 *   /add-template-label  add it to spec.template.metadata.labels (creating parents)
 *   /sleep               sleep --sleep seconds, then add the label (to trip timeoutSeconds)
 *   /bad-patch           return a patch that decodes but does not apply
 *   /deny                refuse with a message (403 Forbidden)
 *   /warn                allow with a warning
 *   /allow               allow unchanged
 * Every review received is appended, one JSON line each, to --record FILE when given. */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BODY_CAP (8u * 1024u * 1024u)

struct opts {
    int port;
    const char *cert, *key, *ready, *record;
    char label_key[256], label_val[256];
    int sleep_s;
    pthread_mutex_t rec_lock;
};

struct body {
    char *p;
    size_t n;
    bool started, too_big;
};

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > (1 << 20) || fseek(f, 0, SEEK_SET)) {
        fclose(f);
        return NULL;
    }
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

/* RFC 6901: '~' becomes "~0" before '/' becomes "~1". */
static void escape_token(const char *in, char *out, size_t n)
{
    size_t o = 0;
    for (; *in && o + 3 < n; in++) {
        if (*in == '~') {
            out[o++] = '~';
            out[o++] = '0';
        } else if (*in == '/') {
            out[o++] = '~';
            out[o++] = '1';
        } else
            out[o++] = *in;
    }
    out[o] = '\0';
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *base64(const char *in)
{
    size_t len = strlen(in), o = 0;
    char *out = malloc(len / 3 * 4 + 5);
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)(unsigned char)in[i] << 16;
        if (i + 1 < len)
            v |= (unsigned)(unsigned char)in[i + 1] << 8;
        if (i + 2 < len)
            v |= (unsigned char)in[i + 2];
        out[o++] = b64[(v >> 18) & 63];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? b64[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

/* Builds the ops that add KEY=VALUE under `base` (a JSON pointer to an object that may lack
 * metadata or labels), creating the missing parents with whole-object adds. */
static json_t *label_ops(struct opts *o, json_t *obj, const char *base_ptr, json_t *base)
{
    json_t *ops = json_array(), *meta = json_object_get(base, "metadata");
    json_t *labels = json_object_get(meta, "labels");
    char path[1024], tok[600];
    escape_token(o->label_key, tok, sizeof(tok));
    (void)obj;
    if (!json_is_object(meta)) {
        snprintf(path, sizeof(path), "%s/metadata", base_ptr);
        json_array_append_new(ops, json_pack("{s:s,s:s,s:{s:{s:s}}}", "op", "add", "path", path, "value", "labels",
                                             o->label_key, o->label_val));
    } else if (!json_is_object(labels)) {
        snprintf(path, sizeof(path), "%s/metadata/labels", base_ptr);
        json_array_append_new(ops, json_pack("{s:s,s:s,s:{s:s}}", "op", "add", "path", path, "value", o->label_key,
                                             o->label_val));
    } else {
        snprintf(path, sizeof(path), "%s/metadata/labels/%s", base_ptr, tok);
        json_array_append_new(ops, json_pack("{s:s,s:s,s:s}", "op", "add", "path", path, "value", o->label_val));
    }
    return ops;
}

static json_t *review_response(struct opts *o, const char *mode, json_t *req)
{
    json_t *resp = json_pack("{s:O,s:b}", "uid", json_object_get(req, "uid"), "allowed", 1);
    json_t *obj = json_object_get(req, "object"), *ops = NULL;
    if (!strcmp(mode, "/add-label") && json_is_object(obj)) {
        ops = label_ops(o, obj, "", obj);
    } else if (!strcmp(mode, "/add-template-label") && json_is_object(obj)) {
        json_t *spec = json_object_get(obj, "spec"), *tmpl = json_object_get(spec, "template");
        if (json_is_object(tmpl))
            ops = label_ops(o, obj, "/spec/template", tmpl);
    } else if (!strcmp(mode, "/sleep")) {
        sleep((unsigned)o->sleep_s);
        if (json_is_object(obj))
            ops = label_ops(o, obj, "", obj);
    } else if (!strcmp(mode, "/bad-patch")) {
        ops = json_pack("[{s:s,s:s,s:i}]", "op", "replace", "path", "/spec/doesNotExist/field", "value", 1);
    } else if (!strcmp(mode, "/deny")) {
        json_object_set_new(resp, "allowed", json_false());
        json_object_set_new(resp, "status", json_pack("{s:i,s:s,s:s}", "code", 403, "reason", "Forbidden", "message",
                                                      "denied by sim-testhook"));
    } else if (!strcmp(mode, "/warn")) {
        json_object_set_new(resp, "warnings", json_pack("[s]", "sim-testhook saw this request"));
    }
    if (ops) {
        char *text = json_dumps(ops, JSON_COMPACT), *enc = text ? base64(text) : NULL;
        if (enc) {
            json_object_set_new(resp, "patchType", json_string("JSONPatch"));
            json_object_set_new(resp, "patch", json_string(enc));
        }
        free(text);
        free(enc);
        json_decref(ops);
    }
    return json_pack("{s:s,s:s,s:o}", "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "response", resp);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret;
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **con_cls)
{
    struct opts *o = cls;
    struct body *b = *con_cls;
    json_t *review, *out;
    json_error_t je;
    char *text;
    enum MHD_Result ret;
    (void)version;
    if (!b) {
        b = calloc(1, sizeof(*b));
        if (!b)
            return MHD_NO;
        *con_cls = b;
        return MHD_YES;
    }
    if (*size) {
        char *np;
        if (b->n + *size > BODY_CAP)
            b->too_big = true;
        else if ((np = realloc(b->p, b->n + *size + 1))) {
            b->p = np;
            memcpy(b->p + b->n, data, *size);
            b->n += *size;
            b->p[b->n] = '\0';
        }
        *size = 0;
        return MHD_YES;
    }
    if (strcmp(method, "POST") || b->too_big || !b->p)
        return reply(c, 400, "{\"error\":\"want a POSTed AdmissionReview\"}");
    review = json_loadb(b->p, b->n, 0, &je);
    if (!review || !json_is_object(json_object_get(review, "request"))) {
        json_decref(review);
        return reply(c, 400, "{\"error\":\"not an AdmissionReview\"}");
    }
    if (o->record) {
        json_t *rec = json_pack("{s:s,s:O}", "path", url, "request", json_object_get(review, "request"));
        char *line = json_dumps(rec, JSON_COMPACT);
        FILE *f;
        pthread_mutex_lock(&o->rec_lock);
        if (line && (f = fopen(o->record, "a"))) {
            fprintf(f, "%s\n", line);
            fclose(f);
        }
        pthread_mutex_unlock(&o->rec_lock);
        free(line);
        json_decref(rec);
    }
    out = review_response(o, url, json_object_get(review, "request"));
    text = json_dumps(out, JSON_COMPACT);
    ret = text ? reply(c, 200, text) : MHD_NO;
    free(text);
    json_decref(out);
    json_decref(review);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    struct body *b = *con_cls;
    (void)cls;
    (void)c;
    (void)t;
    if (b) {
        free(b->p);
        free(b);
        *con_cls = NULL;
    }
}

int main(int argc, char **argv)
{
    struct opts o;
    struct MHD_Daemon *d;
    struct sockaddr_in sa;
    char *cert, *key;
    sigset_t set;
    int sig;
    memset(&o, 0, sizeof(o));
    o.sleep_s = 3;
    snprintf(o.label_key, sizeof(o.label_key), "sim-testhook.example.com/injected");
    snprintf(o.label_val, sizeof(o.label_val), "true");
    pthread_mutex_init(&o.rec_lock, NULL);
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--port"))
            o.port = (int)strtol(v, NULL, 10);
        else if (!strcmp(a, "--cert"))
            o.cert = v;
        else if (!strcmp(a, "--key"))
            o.key = v;
        else if (!strcmp(a, "--ready-file"))
            o.ready = v;
        else if (!strcmp(a, "--record"))
            o.record = v;
        else if (!strcmp(a, "--sleep"))
            o.sleep_s = (int)strtol(v, NULL, 10);
        else if (!strcmp(a, "--label")) {
            const char *eq = strchr(v, '=');
            if (!eq || (size_t)(eq - v) >= sizeof(o.label_key))
                return 2;
            snprintf(o.label_key, sizeof(o.label_key), "%.*s", (int)(eq - v), v);
            snprintf(o.label_val, sizeof(o.label_val), "%s", eq + 1);
        } else {
            fprintf(stderr, "sim-testhook: unknown option %s\n", a);
            return 2;
        }
    }
    if (!o.cert || !o.key || o.port < 0 || o.port > 65535 || o.sleep_s < 0 || o.sleep_s > 120) {
        fprintf(stderr, "usage: sim-testhook --cert F --key F [--port N] [--ready-file F] [--record F] "
                        "[--sleep S] [--label K=V]\n");
        return 2;
    }
    cert = slurp(o.cert);
    key = slurp(o.key);
    if (!cert || !key) {
        fprintf(stderr, "sim-testhook: cannot read certificate or key\n");
        return 1;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Loopback only: nothing outside this machine ever talks to the test hook. */
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)o.port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS |
                             MHD_USE_ERROR_LOG,
                         (uint16_t)o.port, NULL, NULL, handler, &o, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_HTTPS_MEM_CERT, cert,
                         MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "sim-testhook: cannot listen on port %d\n", o.port);
        return 1;
    }
    {
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        int port = di ? di->port : o.port;
        printf("sim-testhook listening on https://127.0.0.1:%d\n", port);
        fflush(stdout);
        if (o.ready) {
            FILE *f = fopen(o.ready, "w");
            if (f) {
                fprintf(f, "%d\n", port);
                fclose(f);
            }
        }
    }
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    free(cert);
    free(key);
    return 0;
}
