/* Watch: every stored change is appended to a bounded event log (ring), and `?watch=true`
 * streams matching events as newline-delimited {"type","object"} JSON over a chunked response,
 * as kube-apiserver does. Enough for `kubectl get -w`, `kubectl wait` and informers. */
#include "sim.h"
#include "table.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING 4096

struct event {
    unsigned long long rv;
    char type[12];
    char group[128], version[64], plural[128];
    json_t *obj;
};

static struct event ring[RING];
static unsigned long long ring_count; /* events ever pushed */
static pthread_cond_t ring_cond = PTHREAD_COND_INITIALIZER;
static volatile int stopping;

void sim_event_push(struct sim *s, const struct sim_resource *res, const char *type, const json_t *obj)
{
    struct event *e = &ring[ring_count % RING];
    const char *rv = sim_jstr(json_object_get((json_t *)obj, "metadata"), "resourceVersion");
    json_decref(e->obj);
    e->rv = rv ? strtoull(rv, NULL, 10) : s->rv;
    snprintf(e->type, sizeof(e->type), "%s", type);
    snprintf(e->group, sizeof(e->group), "%s", res->group);
    snprintf(e->version, sizeof(e->version), "%s", res->version);
    snprintf(e->plural, sizeof(e->plural), "%s", res->plural);
    e->obj = json_deep_copy(obj);
    ring_count++;
    pthread_cond_broadcast(&ring_cond);
}

void sim_watch_shutdown(void)
{
    stopping = 1;
    pthread_cond_broadcast(&ring_cond);
}

unsigned long long sim_watch_position(void)
{
    return ring_count;
}

bool sim_watch_wait(struct sim *s, unsigned long long *seen)
{
    if (ring_count == *seen && !stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&ring_cond, &s->lock, &ts);
    }
    *seen = ring_count;
    return !stopping;
}

#define BOOKMARK_SECONDS 2  /* kube-apiserver sends one about every minute; tests want them sooner */

struct watch {
    struct sim *s;
    bool bookmarks;      /* allowWatchBookmarks=true */
    time_t last_sent;    /* last event or bookmark */
    time_t expire_at;    /* --watch-expire-seconds: 0 = never */
    char kind[128];
    char group[128], version[64], plural[128], ns[256];
    bool has_ns, table;
    char include[16];
    json_t *sel;         /* parsed label selector or NULL */
    char fs_name[256];   /* metadata.name=... field selector, "" for none */
    unsigned long long next; /* next ring index to read */
    unsigned long long min_rv;
    time_t deadline;
    char *pending;
    size_t plen, poff;
    bool ended;
    bool cut;              /* an injected fault cut the stream: drop the connection */
};

static bool matches(struct watch *w, const char *group, const char *version, const char *plural, const json_t *obj)
{
    const json_t *meta = json_object_get((json_t *)obj, "metadata");
    if (strcmp(group, w->group) || strcmp(version, w->version) || strcmp(plural, w->plural))
        return false;
    if (w->has_ns && (!sim_jstr(meta, "namespace") || strcmp(sim_jstr(meta, "namespace"), w->ns)))
        return false;
    if (w->fs_name[0] && (!sim_jstr(meta, "name") || strcmp(sim_jstr(meta, "name"), w->fs_name)))
        return false;
    return !w->sel || sim_selector_match(w->sel, json_object_get((json_t *)meta, "labels"));
}

static void append_event(struct watch *w, const char *type, json_t *obj)
{
    json_t *ev, *payload = obj;
    char *text;
    size_t n;
    if (w->table && strcmp(type, "ERROR")) {
        struct sim_resource *res = sim_resource_find(w->s, w->group, w->version, w->plural);
        json_t *items = json_pack("[O]", obj), *lm = json_pack("{s:s}", "resourceVersion",
            sim_jstr(json_object_get(obj, "metadata"), "resourceVersion") ? sim_jstr(json_object_get(obj, "metadata"), "resourceVersion") : "");
        payload = res ? sim_table(w->s, res, items, w->include[0] ? w->include : NULL, lm) : json_incref(obj);
        json_decref(items);
        json_decref(lm);
    } else {
        json_incref(payload);
    }
    ev = json_pack("{s:s,s:o}", "type", type, "object", payload);
    text = json_dumps(ev, JSON_COMPACT);
    json_decref(ev);
    if (!text)
        return;
    n = strlen(text);
    char *np = realloc(w->pending, w->plen + n + 2);
    if (np) {
        w->pending = np;
        memcpy(w->pending + w->plen, text, n);
        w->pending[w->plen + n] = '\n';
        w->plen += n + 1;
    }
    free(text);
}

/* Collects ring events after w->next; called with the lock held. */
static void drain(struct watch *w)
{
    if (ring_count > RING && w->next < ring_count - RING) {
        json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1", "metadata",
                               "status", "Failure", "message", "too old resource version", "reason", "Expired",
                               "code", 410);
        append_event(w, "ERROR", st);
        json_decref(st);
        w->ended = true;
        return;
    }
    for (; w->next < ring_count; w->next++) {
        struct event *e = &ring[w->next % RING];
        if (e->rv > w->min_rv && matches(w, e->group, e->version, e->plural, e->obj))
            append_event(w, e->type, e->obj);
    }
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct watch *w = cls;
    struct sim *s = w->s;
    (void)pos;
    pthread_mutex_lock(&s->lock);
    while (w->poff >= w->plen && !w->ended) {
        struct timespec ts;
        time_t now = time(NULL);
        w->plen = w->poff = 0;
        drain(w);
        if (w->plen)
            w->last_sent = now;
        if (w->plen || w->ended)
            break;
        if (stopping || now >= w->deadline) {
            w->ended = true;
            break;
        }
        if (w->expire_at && now >= w->expire_at) {
            /* As after an etcd compaction: the client must list again. */
            json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1",
                                   "metadata", "status", "Failure", "message",
                                   "The resourceVersion for the provided watch is too old.", "reason", "Expired",
                                   "code", 410);
            append_event(w, "ERROR", st);
            json_decref(st);
            w->ended = true;
            break;
        }
        if (w->bookmarks && now - w->last_sent >= BOOKMARK_SECONDS) {
            char rv[32], av[200];
            json_t *bm;
            struct sim_resource *res = sim_resource_find(s, w->group, w->version, w->plural);
            snprintf(rv, sizeof(rv), "%llu", s->rv);
            if (res)
                sim_api_version(res, av, sizeof(av));
            else
                snprintf(av, sizeof(av), "%s", w->version);
            bm = json_pack("{s:s,s:s,s:{s:s}}", "kind", w->kind, "apiVersion", av, "metadata", "resourceVersion", rv);
            append_event(w, "BOOKMARK", bm);
            json_decref(bm);
            w->last_sent = now;
            break;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1; /* wake up now and then to notice the deadline and shutdown */
        pthread_cond_timedwait(&ring_cond, &s->lock, &ts);
    }
    pthread_mutex_unlock(&s->lock);
    if (w->cut)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (w->poff < w->plen) {
        size_t n = w->plen - w->poff < max ? w->plen - w->poff : max;
        const char *nl = memchr(w->pending + w->poff, '\n', w->plen - w->poff);
        char path[400];
        snprintf(path, sizeof(path), "%s%s/%s/%s", w->group[0] ? "/apis/" : "/api", w->group,
                 w->version, w->plural);
        size_t cut = nl ? sim_faults_cut(path, (size_t)(nl - (w->pending + w->poff))) : 0;
        if (cut && cut < n) {
            n = cut;
            w->cut = true;
        }
        memcpy(buf, w->pending + w->poff, n);
        w->poff += n;
        return (ssize_t)n;
    }
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static void reader_free(void *cls)
{
    struct watch *w = cls;
    json_decref(w->sel);
    free(w->pending);
    free(w);
}

/* Starts a watch for `res` (lock held). Returns an MHD response, or NULL with r->err set. */
void *sim_watch_start(struct sim *s, struct sim_req *r, const struct sim_resource *res, const char *ns,
                      const char *label_sel, const char *field_sel, const char *rv, const char *timeout_s,
                      const char *include)
{
    struct watch *w = calloc(1, sizeof(*w));
    struct MHD_Response *resp;
    char err[256];
    long timeout = 1800;
    if (!w) {
        sim_err_set(&r->err, 500, "InternalError", "Internal error occurred: out of memory");
        return NULL;
    }
    w->s = s;
    snprintf(w->group, sizeof(w->group), "%s", res->group);
    snprintf(w->version, sizeof(w->version), "%s", res->version);
    snprintf(w->plural, sizeof(w->plural), "%s", res->plural);
    if (ns) {
        w->has_ns = true;
        snprintf(w->ns, sizeof(w->ns), "%s", ns);
    }
    w->table = r->accept && strstr(r->accept, "as=Table");
    snprintf(w->include, sizeof(w->include), "%s", include ? include : "");
    if (label_sel && *label_sel && !(w->sel = sim_selector_parse(label_sel, err, sizeof(err)))) {
        sim_err_set(&r->err, 400, "BadRequest", "unable to parse requirement: %s", err);
        goto fail;
    }
    if (field_sel && *field_sel) {
        if (strncmp(field_sel, "metadata.name=", 14) || strchr(field_sel, ',')) {
            sim_err_set(&r->err, 400, "BadRequest", "watch supports only the field selector metadata.name=NAME");
            goto fail;
        }
        snprintf(w->fs_name, sizeof(w->fs_name), "%s", field_sel + (field_sel[14] == '=' ? 15 : 14));
    }
    if (timeout_s && sim_parse_int(timeout_s, 1, 86400, &timeout) < 0)
        timeout = 1800;
    w->deadline = time(NULL) + timeout;
    w->last_sent = time(NULL);
    snprintf(w->kind, sizeof(w->kind), "%s", res->kind);
    {
        const char *b = MHD_lookup_connection_value((struct MHD_Connection *)r->conn, MHD_GET_ARGUMENT_KIND,
                                                    "allowWatchBookmarks");
        w->bookmarks = b && (!strcmp(b, "true") || !strcmp(b, "1"));
    }
    if (s->cfg.watch_expire_s > 0)
        w->expire_at = time(NULL) + s->cfg.watch_expire_s;
    w->next = ring_count;
    w->min_rv = s->rv;
    if (!rv || !*rv || !strcmp(rv, "0")) {
        /* No starting point: synthetic ADDED events for what exists, then changes. */
        const char *k;
        json_t *o;
        json_object_foreach(res->objects, k, o) {
            if (matches(w, res->group, res->version, res->plural, o))
                append_event(w, "ADDED", o);
        }
    } else {
        unsigned long long from = strtoull(rv, NULL, 10);
        unsigned long long oldest = ring_count > RING ? ring_count - RING : 0;
        /* Replay from the ring what happened after `from`. */
        w->min_rv = from;
        w->next = oldest;
        while (w->next < ring_count && ring[w->next % RING].rv <= from)
            w->next++;
        if (oldest > 0 && w->next == oldest && ring[oldest % RING].rv > from + 1)
            w->next = 0; /* force the Expired error in drain() */
    }
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, reader, w, reader_free);
    if (!resp) {
        sim_err_set(&r->err, 500, "InternalError", "Internal error occurred: cannot start watch");
        goto fail;
    }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    return resp;
fail:
    reader_free(w);
    return NULL;
}
