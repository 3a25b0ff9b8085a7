/* Fault injection for the end-to-end scenarios: POST /sim/faults (any authenticated user)
 * arms one fault, which then hits the next matching requests or watch events:
 *
 *   {"status": 429, "count": 20, "retryAfter": 1, "path": "/apis/run.ai/v1alpha1/kartas"}
 *       the next 20 requests for that path (the collection: lists and watches; or
 *       "pathPrefix": every path under it; neither: every path but /sim/) are answered with
 *       that status (429 TooManyRequests or any 5xx as InternalError) and, when retryAfter
 *       is given, a Retry-After header;
 *   {"cutWatch": 3, "path": "/apis/run.ai/v1alpha1/kartas"}
 *       the next 3 watch events sent on watches of that path (or under pathPrefix) are cut
 *       in the middle: half of the event's line is written, then the connection drops;
 *   a POST arms what it names and leaves the other fault as it was; {} clears both.
 *   GET /sim/faults shows what is still armed.
 *
 * Nothing else of the simulator changes; a real API server does these things under load, on
 * restarts and behind flaky load balancers. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "sim.h"

static struct {
    pthread_mutex_t lock;
    int status, count, retry_after, cut;
    char prefix[256], cut_prefix[256];
    bool exact, cut_exact;
} f = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool prefixed(const char *path, const char *prefix, bool exact)
{
    if (!prefix[0])
        return strncmp(path, "/sim/", 5) != 0;
    return exact ? strcmp(path, prefix) == 0 : strncmp(path, prefix, strlen(prefix)) == 0;
}

bool sim_faults_handle(struct sim_req *r)
{
    bool done = false;
    if (!strcmp(r->path, "/sim/faults")) {
        pthread_mutex_lock(&f.lock);
        if (!strcmp(r->method, "POST")) {
            char err[256];
            json_t *b = sim_json_parse(r->body, r->body_len, err, sizeof(err));
            const char *exact = b ? sim_jstr(b, "path") : NULL;
            const char *p = exact ? exact : b ? sim_jstr(b, "pathPrefix") : NULL;
            if (!json_is_object(b)) {
                sim_err_set(&r->err, 400, "BadRequest", "/sim/faults: a JSON object is expected");
            } else if (json_object_size(b) == 0) {
                f.status = f.count = f.cut = 0;
            } else if (json_object_get(b, "status")) {
                f.status = (int)json_integer_value(json_object_get(b, "status"));
                f.count = (int)json_integer_value(json_object_get(b, "count"));
                f.retry_after = json_object_get(b, "retryAfter")
                                    ? (int)json_integer_value(json_object_get(b, "retryAfter")) : -1;
                snprintf(f.prefix, sizeof(f.prefix), "%s", p ? p : "");
                f.exact = exact != NULL;
                if (f.status != 429 && (f.status < 500 || f.status > 599)) {
                    sim_err_set(&r->err, 400, "BadRequest", "/sim/faults: status must be 429 or 5xx");
                    f.status = f.count = 0;
                }
            } else if (json_object_get(b, "cutWatch")) {
                f.cut = (int)json_integer_value(json_object_get(b, "cutWatch"));
                snprintf(f.cut_prefix, sizeof(f.cut_prefix), "%s", p ? p : "");
                f.cut_exact = exact != NULL;
            } else {
                sim_err_set(&r->err, 400, "BadRequest", "/sim/faults: give status (with count) or cutWatch");
            }
            json_decref(b);
        }
        if (!r->err.code) {
            r->status = 200;
            r->resp = json_pack("{s:i,s:i,s:i,s:s,s:i,s:s}", "status", f.status, "count", f.count,
                                "retryAfter", f.retry_after, "pathPrefix", f.prefix, "cutWatch", f.cut,
                                "cutPathPrefix", f.cut_prefix);
        }
        pthread_mutex_unlock(&f.lock);
        return true;
    }
    pthread_mutex_lock(&f.lock);
    if (f.count > 0 && f.status && prefixed(r->path, f.prefix, f.exact)) {
        f.count--;
        if (f.status == 429)
            sim_err_set(&r->err, 429, "TooManyRequests", "Too many requests, please try again later.");
        else
            sim_err_set(&r->err, f.status, "InternalError", "Internal error occurred: injected fault");
        r->has_retry_after = f.retry_after >= 0;
        r->retry_after = f.retry_after;
        done = true;
    }
    pthread_mutex_unlock(&f.lock);
    return done;
}

size_t sim_faults_cut(const char *path, size_t avail)
{
    size_t n = 0;
    pthread_mutex_lock(&f.lock);
    if (f.cut > 0 && avail >= 2 && prefixed(path, f.cut_prefix, f.cut_exact)) {
        f.cut--;
        n = avail / 2;
    }
    pthread_mutex_unlock(&f.lock);
    return n;
}
