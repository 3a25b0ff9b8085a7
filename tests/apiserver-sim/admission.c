/* The admission chain: matching Mutating/ValidatingWebhookConfigurations, calling webhooks over
 * HTTPS with an admission.k8s.io/v1 AdmissionReview, applying their JSON patches, reinvocation
 * and failurePolicy, with the error texts of kube-apiserver's webhook dispatcher. */
#include "sim.h"

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RESP_CAP (4u * 1024u * 1024u)

#define MAX_ENDPOINTS 16

struct hook {
    json_t *wh;          /* the webhook stanza (owned copy) */
    /* The ready endpoints of the webhook's Service when an Endpoints object of that name
     * exists (read under the lock when the hooks are collected): the loopback ports to dial,
     * in turn. has_endpoints false: no such object, --service-port decides. */
    bool has_endpoints;
    int n_endpoints;
    int endpoint_ports[MAX_ENDPOINTS];
    bool reinvoke;       /* reinvocationPolicy: IfNeeded */
    bool called;
    unsigned long mutations_at_call;
};

struct call_ctx {
    struct sim *s;
    struct sim_req *r;
    const char *group, *version, *kind, *plural, *sub;
    enum sim_op op;
    const char *ns, *name;
    bool dry, namespaced, is_namespace;
    const json_t *old, *options, *ns_labels;
    json_t *schema;      /* CR schema copy for re-pruning, or NULL */
};

static bool list_has(const json_t *list, const char *v)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        if (json_is_string(e) && (!strcmp(json_string_value(e), "*") || !strcmp(json_string_value(e), v)))
            return true;
    }
    return false;
}

static bool resource_matches(const json_t *resources, const char *plural, const char *sub)
{
    size_t i;
    json_t *e;
    json_array_foreach(resources, i, e) {
        const char *v = json_string_value(e), *slash;
        if (!v)
            continue;
        if (!strcmp(v, "*/*"))
            return true;
        slash = strchr(v, '/');
        if (!slash) {
            if (!sub && (!strcmp(v, "*") || !strcmp(v, plural)))
                return true;
        } else if (sub) {
            size_t rl = (size_t)(slash - v);
            bool res_ok = (rl == 1 && v[0] == '*') || (strlen(plural) == rl && !strncmp(v, plural, rl));
            bool sub_ok = !strcmp(slash + 1, "*") || !strcmp(slash + 1, sub);
            if (res_ok && sub_ok)
                return true;
        } else if (!strcmp(slash + 1, "*") && strlen(plural) == (size_t)(slash - v) &&
                   !strncmp(v, plural, (size_t)(slash - v))) {
            return true; /* a "pods/ *" style rule covers pods itself */
        }
    }
    return false;
}

static bool rules_match(const json_t *wh, const struct call_ctx *c)
{
    static const char *const opnames[] = {"CREATE", "UPDATE", "DELETE"};
    size_t i;
    json_t *rule;
    json_array_foreach(json_object_get(wh, "rules"), i, rule) {
        const char *scope = sim_jstr(rule, "scope");
        if (!list_has(json_object_get(rule, "operations"), opnames[c->op]))
            continue;
        if (!list_has(json_object_get(rule, "apiGroups"), c->group))
            continue;
        if (!list_has(json_object_get(rule, "apiVersions"), c->version))
            continue;
        if (!resource_matches(json_object_get(rule, "resources"), c->plural, c->sub))
            continue;
        if (scope && !strcmp(scope, "Cluster") && c->namespaced)
            continue;
        if (scope && !strcmp(scope, "Namespaced") && !c->namespaced)
            continue;
        return true;
    }
    return false;
}

/* Selectors are evaluated on the object as it is when the webhook is reached. */
static int selectors_match(const json_t *wh, const struct call_ctx *c, const json_t *obj, bool *out, char *e, size_t n)
{
    bool a = true, b = false;
    const json_t *nsl = c->ns_labels;
    const json_t *os = json_object_get(wh, "objectSelector");
    *out = false;
    if (c->is_namespace)
        nsl = sim_jpath((json_t *)(obj ? obj : c->old), "metadata", "labels");
    if (c->namespaced || c->is_namespace) {
        if (sim_labelselector_match(json_object_get(wh, "namespaceSelector"), nsl, &a, e, n) < 0)
            return -1;
        if (!a)
            return 0;
    }
    if (obj && sim_labelselector_match(os, sim_jpath((json_t *)obj, "metadata", "labels"), &b, e, n) < 0)
        return -1;
    if (!b && c->old &&
        sim_labelselector_match(os, sim_jpath((json_t *)c->old, "metadata", "labels"), &b, e, n) < 0)
        return -1;
    *out = b;
    return 0;
}

struct buf {
    char *p;
    size_t n;
    bool overflow;
};

static size_t collect(char *data, size_t sz, size_t nm, void *ud)
{
    struct buf *b = ud;
    size_t len = sz * nm;
    char *np;
    if (b->n + len > RESP_CAP) {
        b->overflow = true;
        return 0;
    }
    np = realloc(b->p, b->n + len + 1);
    if (!np)
        return 0;
    b->p = np;
    memcpy(b->p + b->n, data, len);
    b->n += len;
    b->p[b->n] = '\0';
    return len;
}

static const struct sim_service *service_port(struct sim *s, const char *ns, const char *name)
{
    for (int i = 0; i < s->cfg.n_services; i++) {
        if (!strcmp(s->cfg.services[i].ns, ns) && !strcmp(s->cfg.services[i].name, name))
            return &s->cfg.services[i];
    }
    return NULL;
}

/* Performs one HTTPS call. Returns the parsed response JSON, or NULL with `err` set to the
 * Go-shaped reason (without the "failed calling webhook" prefix). */
/* Spreads calls over a Service's endpoints in turn, as kube-proxy would: one counter per
 * webhook (by a hash of its name), so that a mutating and a validating call of one request
 * do not always land on different endpoints. */
static atomic_uint next_endpoint[16];

static unsigned name_slot(const char *name)
{
    unsigned h = 5381;
    for (; name && *name; name++)
        h = h * 33u + (unsigned char)*name;
    return h % 16u;
}

static json_t *http_call(struct call_ctx *c, const struct hook *hk, const char *body, char *err, size_t en,
                         int *call_ms)
{
    const json_t *wh = hk->wh;
    const json_t *cc = json_object_get(wh, "clientConfig");
    const json_t *svc = json_object_get(cc, "service");
    const char *url = sim_jstr(cc, "url"), *ca = sim_jstr(cc, "caBundle");
    long timeout = 10;
    char full[1200], connect_to[400], cerr[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL, *ct = NULL;
    struct buf b = {0};
    unsigned char *capem = NULL;
    size_t calen = 0;
    json_t *resp = NULL;
    CURL *h = NULL;
    CURLcode rc;
    long code = 0;
    struct timespec t0, t1;
    if (json_is_integer(json_object_get(wh, "timeoutSeconds")))
        timeout = (long)json_integer_value(json_object_get(wh, "timeoutSeconds"));
    if (timeout < 1 || timeout > 30)
        timeout = 10;
    if (svc) {
        const char *sns = sim_jstr(svc, "namespace"), *sname = sim_jstr(svc, "name");
        const char *path = sim_jstr(svc, "path");
        long port = json_is_integer(json_object_get(svc, "port")) ? (long)json_integer_value(json_object_get(svc, "port")) : 443;
        const struct sim_service *m;
        snprintf(full, sizeof(full), "https://%s.%s.svc:%ld%s?timeout=%lds", sname ? sname : "", sns ? sns : "",
                 port, path ? path : "/", timeout);
        int dial;
        m = sns && sname ? service_port(c->s, sns, sname) : NULL;
        if (hk->has_endpoints) {
            if (hk->n_endpoints == 0) {
                snprintf(err, en, "failed to call webhook: Post \"%s\": no endpoints available for service \"%s\"", full,
                         sname ? sname : "");
                return NULL;
            }
            unsigned turn = atomic_fetch_add(&next_endpoint[name_slot(sim_jstr(wh, "name"))], 1u);
            dial = hk->endpoint_ports[turn % (unsigned)hk->n_endpoints];
        } else if (m) {
            dial = m->port;
        } else {
            snprintf(err, en, "failed to call webhook: Post \"%s\": service \"%s\" not found", full, sname ? sname : "");
            return NULL;
        }
        /* Dial loopback but keep the service DNS name for SNI and the certificate check. */
        snprintf(connect_to, sizeof(connect_to), "%s.%s.svc:%ld:127.0.0.1:%d", sname, sns, port, dial);
        ct = curl_slist_append(NULL, connect_to);
    } else if (url) {
        snprintf(full, sizeof(full), "%s%stimeout=%lds", url, strchr(url, '?') ? "&" : "?", timeout);
    } else {
        snprintf(err, en, "failed to call webhook: clientConfig has neither url nor service");
        return NULL;
    }
    h = curl_easy_init();
    if (!h) {
        snprintf(err, en, "failed to call webhook: out of memory");
        goto out;
    }
    hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Accept: application/json, */*");
    curl_easy_setopt(h, CURLOPT_URL, full);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout * 1000L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (ct)
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, ct);
    if (ca) {
        struct curl_blob blob;
        capem = sim_b64_decode(ca, &calen);
        if (!capem) {
            snprintf(err, en, "failed to call webhook: invalid caBundle: illegal base64 data");
            goto out;
        }
        blob.data = capem;
        blob.len = calen;
        blob.flags = CURL_BLOB_COPY;
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = curl_easy_perform(h);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *call_ms = (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(err, en, "failed to call webhook: Post \"%s\": context deadline exceeded", full);
        goto out;
    }
    if (rc == CURLE_COULDNT_CONNECT) {
        snprintf(err, en, "failed to call webhook: Post \"%s\": dial tcp: connect: connection refused", full);
        goto out;
    }
    if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CONNECT_ERROR) {
        const char *why = strstr(cerr, "subject") || strstr(cerr, "name")
                              ? "x509: certificate is not valid for the requested name"
                              : "x509: certificate signed by unknown authority";
        snprintf(err, en, "failed to call webhook: Post \"%s\": tls: failed to verify certificate: %s (%s)", full,
                 why, cerr);
        goto out;
    }
    if (rc != CURLE_OK) {
        snprintf(err, en, "failed to call webhook: Post \"%s\": %s", full, cerr[0] ? cerr : curl_easy_strerror(rc));
        goto out;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (code != 200) {
        snprintf(err, en, "failed to call webhook: the server responded with the status code %ld but did not return more information", code);
        goto out;
    }
    {
        char pe[256];
        resp = b.p ? sim_json_parse(b.p, b.n, pe, sizeof(pe)) : NULL;
        if (!resp)
            snprintf(err, en, "received invalid webhook response: %s", b.p ? pe : "empty body");
    }
out:
    curl_slist_free_all(hdrs);
    curl_slist_free_all(ct);
    if (h)
        curl_easy_cleanup(h);
    free(capem);
    free(b.p);
    return resp;
}

static json_t *build_review(struct call_ctx *c, const json_t *obj, char *uid, size_t un)
{
    static const char *const opnames[] = {"CREATE", "UPDATE", "DELETE"};
    json_t *kind = json_pack("{s:s,s:s,s:s}", "group", c->group, "version", c->version, "kind", c->kind);
    json_t *res = json_pack("{s:s,s:s,s:s}", "group", c->group, "version", c->version, "resource", c->plural);
    json_t *groups = json_array(), *req;
    char hex[40];
    sim_random_hex(hex, 16);
    snprintf(uid, un, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
    for (int i = 0; i < c->r->user.n_groups; i++)
        json_array_append_new(groups, json_string(c->r->user.groups[i]));
    req = json_pack("{s:s, s:O, s:O, s:O, s:O, s:s, s:s, s:s, s:{s:s,s:o}, s:O, s:O, s:b, s:O}", "uid", uid,
                    "kind", kind, "resource", res, "requestKind", kind, "requestResource", res, "name", c->name,
                    "namespace", c->ns, "operation", opnames[c->op], "userInfo", "username", c->r->user.name,
                    "groups", groups, "object", obj ? obj : json_null(), "oldObject",
                    c->old ? c->old : json_null(), "dryRun", c->dry, "options",
                    c->options ? c->options : json_null());
    if (c->sub) {
        json_object_set_new(req, "subResource", json_string(c->sub));
        json_object_set_new(req, "requestSubResource", json_string(c->sub));
    }
    json_decref(kind);
    json_decref(res);
    return json_pack("{s:s,s:s,s:o}", "kind", "AdmissionReview", "apiVersion", "admission.k8s.io/v1", "request", req);
}

enum outcome { HOOK_OK, HOOK_CALL_ERROR, HOOK_REJECT };

/* Calls one webhook. HOOK_CALL_ERROR leaves the message in `msg` for failurePolicy to judge;
 * HOOK_REJECT has already filled r->err. *obj is patched in place for mutating hooks. */
static enum outcome call_one(struct call_ctx *c, const struct hook *hk, json_t **obj, bool mutating, char *msg,
                            size_t mn)
{
    const json_t *wh = hk->wh;
    const char *whname = sim_jstr(wh, "name") ? sim_jstr(wh, "name") : "";
    char uid[64], e[1500];
    json_t *review = NULL, *resp = NULL, *response, *warnings, *w;
    char *body = NULL;
    int ms = 0;
    size_t i;
    enum outcome out = HOOK_CALL_ERROR;
    if (!list_has(json_object_get(wh, "admissionReviewVersions"), "v1")) {
        snprintf(msg, mn, "failed calling webhook \"%s\": webhook does not accept v1 AdmissionReview", whname);
        return HOOK_CALL_ERROR;
    }
    review = build_review(c, obj ? *obj : NULL, uid, sizeof(uid));
    body = json_dumps(review, JSON_COMPACT);
    resp = body ? http_call(c, hk, body, e, sizeof(e), &ms) : NULL;
    sim_log_request(c->s, mutating ? "MUTATE" : "VALIDATE", whname, resp ? 200 : 0, ms);
    if (!resp) {
        snprintf(msg, mn, "failed calling webhook \"%s\": %s", whname, body ? e : "out of memory");
        goto done;
    }
    if (!sim_jstr(resp, "apiVersion") || strcmp(sim_jstr(resp, "apiVersion"), "admission.k8s.io/v1") ||
        !sim_jstr(resp, "kind") || strcmp(sim_jstr(resp, "kind"), "AdmissionReview")) {
        snprintf(msg, mn, "failed calling webhook \"%s\": received invalid webhook response: expected webhook response of "
                 "admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s", whname,
                 sim_jstr(resp, "apiVersion") ? sim_jstr(resp, "apiVersion") : "",
                 sim_jstr(resp, "kind") ? sim_jstr(resp, "kind") : "");
        goto done;
    }
    response = json_object_get(resp, "response");
    if (!json_is_object(response)) {
        snprintf(msg, mn, "failed calling webhook \"%s\": received invalid webhook response: webhook response was absent", whname);
        goto done;
    }
    if (!sim_jstr(response, "uid") || strcmp(sim_jstr(response, "uid"), uid)) {
        snprintf(msg, mn, "failed calling webhook \"%s\": received invalid webhook response: expected response.uid=\"%s\", got \"%s\"",
                 whname, uid, sim_jstr(response, "uid") ? sim_jstr(response, "uid") : "");
        goto done;
    }
    warnings = json_object_get(response, "warnings");
    json_array_foreach(warnings, i, w) {
        if (json_is_string(w))
            sim_add_warning(c->r, "%s", json_string_value(w));
    }
    if (!json_is_true(json_object_get(response, "allowed"))) {
        json_t *st = json_object_get(response, "status");
        long code = json_is_integer(json_object_get(st, "code")) ? (long)json_integer_value(json_object_get(st, "code")) : 0;
        const char *m = sim_jstr(st, "message"), *reason = sim_jstr(st, "reason");
        if (code < 400)
            code = 400;
        if (m && *m)
            sim_err_set(&c->r->err, (int)code, reason ? reason : "", "admission webhook \"%s\" denied the request: %s", whname, m);
        else if (reason && *reason)
            sim_err_set(&c->r->err, (int)code, reason, "admission webhook \"%s\" denied the request: %s", whname, reason);
        else
            sim_err_set(&c->r->err, (int)code, "", "admission webhook \"%s\" denied the request without explanation", whname);
        out = HOOK_REJECT;
        goto done;
    }
    if (mutating) {
        const char *pt = sim_jstr(response, "patchType"), *p64 = sim_jstr(response, "patch");
        if (p64 && !pt) {
            snprintf(msg, mn, "failed calling webhook \"%s\": received invalid webhook response: webhook returned response.patch but not response.patchType", whname);
            goto done;
        }
        if (pt && !p64) {
            snprintf(msg, mn, "failed calling webhook \"%s\": received invalid webhook response: webhook returned response.patchType but not response.patch", whname);
            goto done;
        }
        if (pt && strcmp(pt, "JSONPatch")) {
            snprintf(msg, mn, "failed calling webhook \"%s\": received invalid webhook response: webhook returned invalid response.patchType of \"%s\"", whname, pt);
            goto done;
        }
        if (p64 && *p64) {
            size_t plen;
            unsigned char *raw = sim_b64_decode(p64, &plen);
            json_t *ops, *patched;
            char pe[512];
            if (!raw) {
                snprintf(msg, mn, "failed calling webhook \"%s\": received invalid webhook response: illegal base64 data in response.patch", whname);
                goto done;
            }
            ops = sim_json_parse((const char *)raw, plen, pe, sizeof(pe));
            free(raw);
            if (!ops || !json_is_array(ops)) {
                snprintf(msg, mn, "failed calling webhook \"%s\": received invalid webhook response: invalid patch: %s", whname,
                         ops ? "not a JSON array" : pe);
                json_decref(ops);
                goto done;
            }
            if (!obj || !*obj) {
                json_decref(ops);
                sim_err_set(&c->r->err, 500, "InternalError",
                            "Internal error occurred: admission webhook \"%s\" attempted to modify the object, which is not supported for this operation", whname);
                out = HOOK_REJECT;
                goto done;
            }
            patched = json_deep_copy(*obj);
            if (json_array_size(ops) && sim_json_patch(patched, ops, pe, sizeof(pe)) < 0) {
                /* Not a call error: the real dispatcher returns InternalError whatever the policy. */
                json_decref(ops);
                json_decref(patched);
                sim_err_set(&c->r->err, 500, "InternalError", "Internal error occurred: %s", pe);
                out = HOOK_REJECT;
                goto done;
            }
            json_decref(ops);
            /* Custom resources are pruned and defaulted again after every mutation (KEP-2332). */
            sim_prune(patched, c->schema, NULL);
            sim_default(patched, c->schema);
            json_decref(*obj);
            *obj = patched;
        }
    }
    out = HOOK_OK;
done:
    free(body);
    json_decref(review);
    json_decref(resp);
    return out;
}

/* Applies failurePolicy to a call error; returns -1 when the request must be rejected. */
static int on_call_error(struct call_ctx *c, const json_t *wh, const char *msg)
{
    const char *fp = sim_jstr(wh, "failurePolicy");
    if (fp && !strcmp(fp, "Ignore")) {
        sim_log_request(c->s, "FAILOPEN", msg, 0, 0);
        return 0;
    }
    sim_err_set(&c->r->err, 500, "InternalError", "Internal error occurred: %s", msg);
    c->r->err.causes = json_pack("[{s:s}]", "message", msg);
    return -1;
}

static int cmpkey(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The Endpoints object named like the webhook's Service (lock held): every ready address
 * (subsets[].addresses, not notReadyAddresses) with its subset's first port becomes one
 * loopback port to dial; the address itself is not dialled (all webhooks run on this host). */
static void read_endpoints(struct sim *s, const json_t *wh, struct hook *h)
{
    const json_t *svc = json_object_get(json_object_get(wh, "clientConfig"), "service");
    const char *sns = sim_jstr(svc, "namespace"), *sname = sim_jstr(svc, "name");
    struct sim_resource *eps = sim_resource_find(s, "", "v1", "endpoints");
    json_t *ep, *sub;
    size_t i, j;
    if (!sns || !sname || !eps || (ep = sim_object_get(eps, sns, sname)) == NULL)
        return;
    h->has_endpoints = true;
    json_array_foreach(json_object_get(ep, "subsets"), i, sub) {
        json_t *p0 = json_array_get(json_object_get(sub, "ports"), 0), *addr;
        json_int_t port = json_integer_value(json_object_get(p0, "port"));
        if (port < 1 || port > 65535)
            continue;
        json_array_foreach(json_object_get(sub, "addresses"), j, addr) {
            if (h->n_endpoints < MAX_ENDPOINTS)
                h->endpoint_ports[h->n_endpoints++] = (int)port;
        }
    }
}

/* Snapshots the matching webhooks (by rules) of one configuration kind, sorted by config name. */
static int collect_hooks(struct sim *s, const char *plural, struct call_ctx *c, struct hook **out)
{
    struct sim_resource *cfgs = sim_resource_find(s, "admissionregistration.k8s.io", "v1", plural);
    const char **keys, *k;
    json_t *v;
    size_t nk = 0, i, j;
    int n = 0;
    *out = NULL;
    if (!cfgs || !json_object_size(cfgs->objects))
        return 0;
    keys = calloc(json_object_size(cfgs->objects), sizeof(*keys));
    json_object_foreach(cfgs->objects, k, v) keys[nk++] = k;
    qsort(keys, nk, sizeof(*keys), cmpkey);
    for (i = 0; i < nk; i++) {
        json_t *whs = json_object_get(json_object_get(cfgs->objects, keys[i]), "webhooks"), *wh;
        json_array_foreach(whs, j, wh) {
            struct hook *nh;
            if (!rules_match(wh, c))
                continue;
            nh = realloc(*out, (size_t)(n + 1) * sizeof(**out));
            if (!nh)
                break;
            *out = nh;
            memset(&nh[n], 0, sizeof(nh[n]));
            nh[n].wh = json_deep_copy(wh);
            nh[n].reinvoke = sim_jstr(wh, "reinvocationPolicy") && !strcmp(sim_jstr(wh, "reinvocationPolicy"), "IfNeeded");
            read_endpoints(s, wh, &nh[n]);
            n++;
        }
    }
    free(keys);
    return n;
}

static int run_hook(struct call_ctx *c, struct hook *h, json_t **obj, bool mutating)
{
    char msg[2048], e[256];
    bool match;
    enum outcome o;
    if (selectors_match(h->wh, c, obj ? *obj : NULL, &match, e, sizeof(e)) < 0) {
        snprintf(msg, sizeof(msg), "failed calling webhook \"%s\": invalid selector: %s",
                 sim_jstr(h->wh, "name") ? sim_jstr(h->wh, "name") : "", e);
        return on_call_error(c, h->wh, msg);
    }
    if (!match)
        return 0;
    if (json_object_get(h->wh, "matchConditions"))
        sim_log_request(c->s, "NOTE", "matchConditions are not evaluated (treated as true)", 0, 0);
    o = call_one(c, h, obj, mutating, msg, sizeof(msg));
    if (o == HOOK_REJECT)
        return -1;
    if (o == HOOK_CALL_ERROR)
        return on_call_error(c, h->wh, msg);
    return 0;
}

int sim_admit(struct sim *s, struct sim_req *r, struct sim_resource *res, const char *subresource,
              enum sim_op op, const char *ns, const char *name, json_t **obj, const json_t *old,
              bool dry_run, const json_t *options, bool validating)
{
    struct call_ctx c;
    struct hook *hooks = NULL;
    char group[128], version[64], kind[128], plural[128], nsb[256], nameb[256];
    json_t *ns_labels = NULL;
    int n, rc = 0;
    unsigned long mutations = 0;
    /* Webhooks are never called for webhook configurations themselves. */
    if (!strcmp(res->group, "admissionregistration.k8s.io"))
        return 0;
    memset(&c, 0, sizeof(c));
    snprintf(group, sizeof(group), "%s", res->group);
    snprintf(version, sizeof(version), "%s", res->version);
    snprintf(kind, sizeof(kind), "%s", res->kind);
    snprintf(plural, sizeof(plural), "%s", res->plural);
    snprintf(nsb, sizeof(nsb), "%s", res->namespaced && ns ? ns : "");
    snprintf(nameb, sizeof(nameb), "%s", name ? name : "");
    c.s = s;
    c.r = r;
    c.group = group;
    c.version = version;
    c.kind = kind;
    c.plural = plural;
    c.sub = subresource;
    c.op = op;
    c.ns = nsb;
    c.name = nameb;
    c.dry = dry_run;
    c.namespaced = res->namespaced;
    c.is_namespace = !strcmp(plural, "namespaces") && !group[0];
    c.old = old;
    c.options = options;
    n = collect_hooks(s, validating ? "validatingwebhookconfigurations" : "mutatingwebhookconfigurations", &c, &hooks);
    if (n == 0)
        return 0;
    if (res->namespaced)
        ns_labels = json_deep_copy(sim_namespace_labels(s, nsb));
    c.ns_labels = ns_labels;
    c.schema = json_deep_copy(res->schema);
    /* No stored state is touched while webhooks run, so other requests may proceed. */
    pthread_mutex_unlock(&s->lock);
    if (validating) {
        /* The real server calls validating webhooks in parallel; order does not matter. */
        for (int i = 0; i < n && rc == 0; i++)
            rc = run_hook(&c, &hooks[i], obj, false);
    } else {
        for (int i = 0; i < n && rc == 0; i++) {
            json_t *before = obj && *obj ? json_deep_copy(*obj) : NULL;
            rc = run_hook(&c, &hooks[i], obj, true);
            hooks[i].called = true;
            if (before && obj && *obj && !json_equal(before, *obj))
                mutations++;
            hooks[i].mutations_at_call = mutations;
            json_decref(before);
        }
        /* Round 1: hooks with IfNeeded run again once if something changed after them. */
        for (int i = 0; i < n && rc == 0; i++) {
            if (hooks[i].called && hooks[i].reinvoke && mutations > hooks[i].mutations_at_call)
                rc = run_hook(&c, &hooks[i], obj, true);
        }
    }
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < n; i++)
        json_decref(hooks[i].wh);
    free(hooks);
    json_decref(ns_labels);
    json_decref(c.schema);
    return rc;
}
