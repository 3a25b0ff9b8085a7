/* The pod `log` subresource: GET /api/v1/namespaces/NS/pods/NAME/log with container,
 * follow, tailLines, sinceSeconds, previous and timestamps, as kubectl logs sends them.
 *
 * There is no kubelet, so a scenario writes each container's log into the pod itself: the
 * annotation `apiserver-sim.test/log.CONTAINER` holds the text of the current container,
 * `apiserver-sim.test/previous-log.CONTAINER` that of the previous one (--previous). A line
 * may start with an RFC 3339 time and a space (the time it was written, as the kubelet
 * records it); a line without one was written when the pod was created. `follow=true`
 * streams what exists, then every line appended to the annotation later (kubectl annotate
 * --overwrite with the longer text; the last line needs no newline), until the pod is
 * deleted or the container terminates. */
#include "api.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOG_ANNOTATION "apiserver-sim.test/log."
#define PREVIOUS_ANNOTATION "apiserver-sim.test/previous-log."

struct follow {
    struct sim *s;
    char ns[256], name[256], container[256];
    size_t sent;              /* bytes of the annotation already handled */
    bool timestamps;
    char *pending;
    size_t plen, poff;
    unsigned long long seen;  /* watch log position, to wake on changes */
    bool ended;
};

static time_t parse_time(const char *s, size_t n)
{
    struct tm tm = {0};
    char buf[64];
    if (n >= sizeof(buf))
        return (time_t)-1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (sscanf(buf, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec) != 6)
        return (time_t)-1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return timegm(&tm);
}

/* One line of the annotation: its time (the leading stamp, else created) and its text. */
static const char *split_line(const char *line, size_t len, time_t created, time_t *when, size_t *tlen)
{
    const char *sp = memchr(line, ' ', len);
    if (sp && sp - line >= 20 && line[4] == '-' && line[10] == 'T') {
        time_t t = parse_time(line, (size_t)(sp - line));
        if (t != (time_t)-1) {
            *when = t;
            *tlen = len - (size_t)(sp - line) - 1;
            return sp + 1;
        }
    }
    *when = created;
    *tlen = len;
    return line;
}

static void format_time(time_t t, char *out, size_t n)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%S.000000000Z", &tm);
}

/* Appends the lines of text[0..len) that pass the filters to *out (a growing string). */
static void render(const char *text, size_t len, time_t created, long since, bool timestamps, long tail,
                   char **out, size_t *olen)
{
    size_t nlines = 0, skip = 0, i = 0, idx = 0;
    time_t now = time(NULL);
    for (size_t k = 0; k < len; k++)
        if (text[k] == '\n' || k + 1 == len)
            nlines++;
    if (tail >= 0 && (size_t)tail < nlines)
        skip = nlines - (size_t)tail;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t ll = nl ? (size_t)(nl - (text + i)) : len - i;
        time_t when;
        size_t tl;
        const char *t = split_line(text + i, ll, created, &when, &tl);
        if (idx++ >= skip && (since < 0 || when >= now - since)) {
            char stamp[64] = "";
            char *np;
            if (timestamps) {
                format_time(when, stamp, sizeof(stamp) - 1);
                stamp[strlen(stamp) + 1] = '\0';
                stamp[strlen(stamp)] = ' ';
            }
            np = realloc(*out, *olen + strlen(stamp) + tl + 2);
            if (np) {
                *out = np;
                memcpy(*out + *olen, stamp, strlen(stamp));
                *olen += strlen(stamp);
                memcpy(*out + *olen, t, tl);
                *olen += tl;
                (*out)[(*olen)++] = '\n';
                (*out)[*olen] = '\0';
            }
        }
        i += ll + 1;
    }
}

static const char *annotation(const json_t *pod, const char *prefix, const char *container)
{
    char key[512];
    snprintf(key, sizeof(key), "%s%s", prefix, container);
    return sim_jstr(sim_jpath((json_t *)pod, "metadata", "annotations"), key);
}

static const json_t *container_status(const json_t *pod, const char *container)
{
    size_t i;
    json_t *c;
    json_array_foreach(sim_jpath((json_t *)pod, "status", "containerStatuses"), i, c)
        if (sim_jstr(c, "name") && !strcmp(sim_jstr(c, "name"), container))
            return c;
    return NULL;
}

static bool has_container(const json_t *pod, const char *list, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(sim_jpath((json_t *)pod, "spec", list), i, c)
        if (sim_jstr(c, "name") && !strcmp(sim_jstr(c, "name"), name))
            return true;
    return false;
}

static time_t created_at(const json_t *pod)
{
    const char *ts = sim_jstr(json_object_get(pod, "metadata"), "creationTimestamp");
    time_t t = ts ? parse_time(ts, strlen(ts) > 19 ? 19 : strlen(ts)) : (time_t)-1;
    return t == (time_t)-1 ? time(NULL) : t;
}

/* An annotation's last line needs no newline: the text counts as ending with one. */
static size_t text_end(const char *text)
{
    size_t n = strlen(text);
    return n + (n > 0 && text[n - 1] != '\n');
}

static ssize_t follow_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct follow *f = cls;
    struct sim *s = f->s;
    (void)pos;
    pthread_mutex_lock(&s->lock);
    while (f->poff >= f->plen && !f->ended) {
        struct sim_resource *res = sim_resource_find(s, "", "v1", "pods");
        json_t *pod = res ? sim_object_get(res, f->ns, f->name) : NULL;
        const char *text;
        const json_t *cs;
        f->plen = f->poff = 0;
        if (!pod) {
            f->ended = true;
            break;
        }
        text = annotation(pod, LOG_ANNOTATION, f->container);
        if (text && text_end(text) > f->sent && f->sent <= strlen(text)) {
            /* The new lines: the text grew after what was sent. */
            render(text + f->sent, strlen(text) - f->sent, created_at(pod), -1, f->timestamps, -1, &f->pending,
                   &f->plen);
            f->sent = text_end(text);
        }
        if (f->plen)
            break;
        cs = container_status(pod, f->container);
        if (cs && sim_jpath((json_t *)cs, "state", "terminated")) {
            f->ended = true;
            break;
        }
        if (!sim_watch_wait(s, &f->seen)) {
            f->ended = true;
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (f->poff < f->plen) {
        size_t n = f->plen - f->poff < max ? f->plen - f->poff : max;
        memcpy(buf, f->pending + f->poff, n);
        f->poff += n;
        return (ssize_t)n;
    }
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static void follow_free(void *cls)
{
    struct follow *f = cls;
    free(f->pending);
    free(f);
}

static bool flag(struct sim_req *r, const char *key)
{
    const char *v = api_qarg(r, key);
    return v && (!strcmp(v, "true") || !strcmp(v, "1"));
}

/* GET pods/NAME/log (lock held). */
void sim_log_handle(struct sim *s, struct sim_req *r, struct sim_resource *res, const char *ns, const char *name)
{
    json_t *pod = sim_object_get(res, ns, name);
    const char *container = api_qarg(r, "container"), *tail_s = api_qarg(r, "tailLines");
    const char *since_s = api_qarg(r, "sinceSeconds"), *text;
    bool previous = flag(r, "previous"), timestamps = flag(r, "timestamps"), follow = flag(r, "follow");
    long tail = -1, since = -1;
    const json_t *cs;
    char *out = NULL;
    size_t olen = 0;
    if (strcmp(r->method, "GET")) {
        sim_err_set(&r->err, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        return;
    }
    if (!pod) {
        api_not_found(r, res, name);
        return;
    }
    if (tail_s && sim_parse_int(tail_s, 0, 1L << 30, &tail) < 0) {
        sim_err_set(&r->err, 400, "BadRequest", "invalid tailLines \"%s\"", tail_s);
        return;
    }
    if (since_s && sim_parse_int(since_s, 1, 1L << 40, &since) < 0) {
        sim_err_set(&r->err, 400, "BadRequest", "invalid sinceSeconds \"%s\": must be greater than 0", since_s);
        return;
    }
    if (!container || !*container) {
        json_t *cs_list = sim_jpath(pod, "spec", "containers");
        if (json_array_size(cs_list) != 1) {
            char names[1024] = "";
            size_t i, o = 0;
            json_t *c;
            json_array_foreach(cs_list, i, c)
                o += (size_t)snprintf(names + o, o < sizeof(names) ? sizeof(names) - o : 0, "%s%s", i ? " " : "",
                                      sim_jstr(c, "name") ? sim_jstr(c, "name") : "");
            sim_err_set(&r->err, 400, "BadRequest",
                        "a container name must be specified for pod %s, choose one of: [%s]", name, names);
            return;
        }
        container = sim_jstr(json_array_get(cs_list, 0), "name");
        if (!container)
            container = "";
    }
    if (!has_container(pod, "containers", container) && !has_container(pod, "initContainers", container)) {
        sim_err_set(&r->err, 400, "BadRequest", "container %s is not valid for pod %s", container, name);
        return;
    }
    cs = container_status(pod, container);
    if (previous) {
        text = annotation(pod, PREVIOUS_ANNOTATION, container);
        if (!text) {
            sim_err_set(&r->err, 400, "BadRequest", "previous terminated container \"%s\" in pod \"%s\" not found",
                        container, name);
            return;
        }
    } else {
        const json_t *waiting = cs ? sim_jpath((json_t *)cs, "state", "waiting") : NULL;
        if (waiting) {
            sim_err_set(&r->err, 400, "BadRequest", "container \"%s\" in pod \"%s\" is waiting to start: %s",
                        container, name, sim_jstr(waiting, "reason") ? sim_jstr(waiting, "reason") : "ContainerCreating");
            return;
        }
        text = annotation(pod, LOG_ANNOTATION, container);
    }
    if (text)
        render(text, strlen(text), created_at(pod), since, timestamps, tail, &out, &olen);
    if (follow && !previous) {
        struct follow *f = calloc(1, sizeof(*f));
        struct MHD_Response *resp;
        if (!f) {
            free(out);
            sim_err_set(&r->err, 500, "InternalError", "Internal error occurred: out of memory");
            return;
        }
        f->s = s;
        snprintf(f->ns, sizeof(f->ns), "%s", ns);
        snprintf(f->name, sizeof(f->name), "%s", name);
        snprintf(f->container, sizeof(f->container), "%s", container);
        f->timestamps = timestamps;
        /* What was there is sent now; later lines follow as the annotation grows. */
        f->sent = text ? text_end(text) : 0;
        f->pending = out;
        f->plen = olen;
        f->seen = sim_watch_position();
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, follow_reader, f, follow_free);
        if (!resp) {
            follow_free(f);
            sim_err_set(&r->err, 500, "InternalError", "Internal error occurred: cannot stream the log");
            return;
        }
        MHD_add_response_header(resp, "Content-Type", "text/plain");
        r->stream = resp;
        r->status = 200;
        return;
    }
    r->resp = json_string(out ? out : "");
    free(out);
    r->status = 200;
}
