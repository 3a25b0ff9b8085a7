/* The REST verbs: routing of /api and /apis paths, get, list, create, update, patch, delete,
 * the status subresource and dry run. Called with s->lock held. */
#include "api.h"
#include "table.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *api_qarg(struct sim_req *r, const char *key)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)r->conn, MHD_GET_ARGUMENT_KIND, key);
}

bool api_dry_run(struct sim_req *r, const json_t *body_opts)
{
    const char *d = api_qarg(r, "dryRun");
    json_t *arr = json_object_get(body_opts, "dryRun");
    return (d && !strcmp(d, "All")) || (json_array_size(arr) > 0);
}

void api_not_found(struct sim_req *r, const struct sim_resource *res, const char *name)
{
    char q[300];
    sim_qualified(res, q, sizeof(q));
    sim_err_set(&r->err, 404, "NotFound", "%s \"%s\" not found", q, name);
    snprintf(r->err.details_name, sizeof(r->err.details_name), "%s", name);
    snprintf(r->err.details_group, sizeof(r->err.details_group), "%s", res->group);
    snprintf(r->err.details_kind, sizeof(r->err.details_kind), "%s", res->plural);
}

void api_conflict(struct sim_req *r, const struct sim_resource *res, const char *name)
{
    char q[300];
    sim_qualified(res, q, sizeof(q));
    sim_err_set(&r->err, 409, "Conflict",
                "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please apply "
                "your changes to the latest version and try again", q, name);
    snprintf(r->err.details_name, sizeof(r->err.details_name), "%s", name);
    snprintf(r->err.details_group, sizeof(r->err.details_group), "%s", res->group);
    snprintf(r->err.details_kind, sizeof(r->err.details_kind), "%s", res->plural);
}

void api_invalid(struct sim_req *r, const struct sim_resource *res, const char *name, const char *field,
                    const char *reason, const char *msg)
{
    if (res->group[0])
        sim_err_set(&r->err, 422, "Invalid", "%s.%s \"%s\" is invalid: %s: %s", res->kind, res->group, name,
                    field, msg);
    else
        sim_err_set(&r->err, 422, "Invalid", "%s \"%s\" is invalid: %s: %s", res->kind, name, field, msg);
    snprintf(r->err.details_name, sizeof(r->err.details_name), "%s", name);
    snprintf(r->err.details_group, sizeof(r->err.details_group), "%s", res->group);
    snprintf(r->err.details_kind, sizeof(r->err.details_kind), "%s", res->kind);
    r->err.causes = json_pack("[{s:s,s:s,s:s}]", "reason", reason, "message", msg, "field", field);
}

/* Path → resource, namespace, name, subresource. */
static int route_parse(struct sim *s, struct sim_req *r, struct route *rt)
{
    char buf[1024], *seg[8], *save = NULL, *tok;
    char group[128] = "", version[64];
    int n = 0, i = 0;
    memset(rt, 0, sizeof(*rt));
    if (strlen(r->path) >= sizeof(buf))
        return -1;
    snprintf(buf, sizeof(buf), "%s", r->path);
    for (tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (n >= 8)
            return -1;
        seg[n++] = tok;
    }
    if (n >= 2 && !strcmp(seg[0], "api")) {
        snprintf(version, sizeof(version), "%s", seg[1]);
        i = 2;
    } else if (n >= 3 && !strcmp(seg[0], "apis")) {
        snprintf(group, sizeof(group), "%s", seg[1]);
        snprintf(version, sizeof(version), "%s", seg[2]);
        i = 3;
    } else {
        return -1;
    }
    if (n - i >= 3 && !strcmp(seg[i], "namespaces")) {
        struct sim_resource *nr = sim_resource_find(s, group, version, seg[i + 2]);
        if (nr && nr->namespaced) {
            rt->has_ns = true;
            snprintf(rt->ns, sizeof(rt->ns), "%s", seg[i + 1]);
            i += 2;
        }
    }
    if (n - i < 1 || n - i > 3)
        return -1;
    rt->res = sim_resource_find(s, group, version, seg[i]);
    if (!rt->res)
        return -1;
    if (n - i >= 2) {
        rt->has_name = true;
        snprintf(rt->name, sizeof(rt->name), "%s", seg[i + 1]);
    }
    if (n - i == 3) {
        snprintf(rt->sub, sizeof(rt->sub), "%s", seg[i + 2]);
        if (!(!strcmp(rt->sub, "status") && rt->res->has_status) && !(!strcmp(rt->sub, "scale") && rt->res->has_scale) &&
            !(!strcmp(rt->sub, "log") && !rt->res->group[0] && !strcmp(rt->res->plural, "pods")))
            return -1;
    }
    if (rt->res->namespaced && rt->has_name && !rt->has_ns)
        return -1;
    if (!rt->res->namespaced && rt->has_ns)
        return -1;
    return 0;
}

json_t *api_parse_body(struct sim_req *r)
{
    char e[256];
    json_t *v;
    if (!r->body_len) {
        sim_err_set(&r->err, 400, "BadRequest", "the request body is empty");
        return NULL;
    }
    v = sim_json_parse(r->body, r->body_len, e, sizeof(e));
    if (!v) {
        /* YAML bodies (kubectl never sends them) and garbage land here alike. */
        sim_err_set(&r->err, 400, "BadRequest", "couldn't get version/kind; json parse error: %s", e);
        return NULL;
    }
    return v;
}

static bool valid_dns_subdomain(const char *n)
{
    size_t len = strlen(n);
    if (len == 0 || len > 253)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = n[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && c != '-' && c != '.')
            return false;
        if ((i == 0 || i == len - 1) && !alnum)
            return false;
    }
    return true;
}

/* The field validation the real server does on decode for custom resources: prune, and
 * under fieldValidation=Strict reject what pruning would drop (Warn: warn, Ignore: drop). */
int api_prune_request(struct sim_req *r, struct sim_resource *res, json_t *obj)
{
    const char *fv = api_qarg(r, "fieldValidation");
    json_t *pruned;
    size_t i;
    json_t *p;
    if (!res->schema)
        return 0;
    pruned = json_array();
    sim_prune(obj, res->schema, pruned);
    if (json_array_size(pruned) && fv && !strcmp(fv, "Strict")) {
        char msg[1536];
        size_t o = 0;
        json_array_foreach(pruned, i, p) {
            int w = snprintf(msg + o, sizeof(msg) - o, "%sunknown field \"%s\"", i ? ", " : "",
                             json_string_value(p));
            if (w < 0 || (size_t)w >= sizeof(msg) - o)
                break;
            o += (size_t)w;
        }
        sim_err_set(&r->err, 400, "BadRequest", "%s in version \"%s\" cannot be handled as a %s: strict decoding error: %s",
                    res->kind, res->version, res->kind, msg);
        json_decref(pruned);
        return -1;
    }
    if (!fv || !strcmp(fv, "Warn")) {
        json_array_foreach(pruned, i, p) sim_add_warning(r, "unknown field \"%s\"", json_string_value(p));
    }
    json_decref(pruned);
    sim_default(obj, res->schema);
    return 0;
}

json_t *api_options_obj(struct sim_req *r, const char *kind, bool dry)
{
    json_t *o = json_pack("{s:s,s:s}", "kind", kind, "apiVersion", "meta.k8s.io/v1");
    const char *fm = api_qarg(r, "fieldManager");
    if (fm)
        json_object_set_new(o, "fieldManager", json_string(fm));
    if (dry)
        json_object_set_new(o, "dryRun", json_pack("[s]", "All"));
    return o;
}

bool api_spec_changed(const struct sim_resource *res, const json_t *a, const json_t *b)
{
    const char *k;
    json_t *v;
    if (res->builtin)
        return !json_equal(json_object_get(a, "spec"), json_object_get(b, "spec")) &&
               (json_object_get(a, "spec") || json_object_get(b, "spec"));
    /* Custom resources: any change outside metadata and status bumps generation. */
    json_object_foreach((json_t *)a, k, v) {
        if (!strcmp(k, "metadata") || !strcmp(k, "status"))
            continue;
        if (!json_equal(v, json_object_get(b, k)) && !(json_is_null(v) && !json_object_get(b, k)))
            return true;
    }
    json_object_foreach((json_t *)b, k, v) {
        if (strcmp(k, "metadata") && strcmp(k, "status") && !json_object_get(a, k))
            return true;
    }
    return false;
}

void api_set_type_meta(const struct sim_resource *res, json_t *obj)
{
    char av[200];
    sim_api_version(res, av, sizeof(av));
    json_object_set_new(obj, "apiVersion", json_string(av));
    json_object_set_new(obj, "kind", json_string(res->kind));
}

/* Side effects of storing certain kinds: CRDs start or stop being served. */
int api_store_hooks(struct sim *s, struct sim_resource *res, json_t *obj, struct sim_err *err)
{
    if (!strcmp(res->plural, "customresourcedefinitions") && !strcmp(res->group, "apiextensions.k8s.io"))
        return sim_crd_apply(s, obj, err);
    return 0;
}

static void new_uid(char *out, size_t n)
{
    char u[40];
    sim_random_hex(u, 16);
    snprintf(out, n, "%.8s-%.4s-%.4s-%.4s-%.12s", u, u + 8, u + 12, u + 16, u + 20);
}

/* What rest.BeforeCreate does: namespace, uid, creationTimestamp, generation, and per-kind
 * preparation. Runs after mutating admission and before validating admission. */
static void prepare_new(struct sim_resource *res, json_t *obj, const char *ns)
{
    json_t *meta = json_object_get(obj, "metadata");
    char uid[40], ts[40];
    const char *name = sim_jstr(meta, "name");
    new_uid(uid, sizeof(uid));
    sim_now_rfc3339(ts, sizeof(ts));
    if (res->namespaced)
        json_object_set_new(meta, "namespace", json_string(ns));
    else
        json_object_del(meta, "namespace");
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string(ts));
    json_object_del(meta, "resourceVersion");
    json_object_del(meta, "deletionTimestamp");
    if (res->has_generation)
        json_object_set_new(meta, "generation", json_integer(1));
    else
        json_object_del(meta, "generation");
    if (res->has_status && strcmp(res->plural, "namespaces"))
        json_object_del(obj, "status"); /* status is written through /status only */
    if (!strcmp(res->plural, "namespaces") && !res->group[0] && name) {
        json_t *labels = json_object_get(meta, "labels");
        if (!json_is_object(labels)) {
            labels = json_object();
            json_object_set_new(meta, "labels", labels);
        }
        json_object_set_new(labels, "kubernetes.io/metadata.name", json_string(name));
        json_object_set_new(obj, "spec", json_pack("{s:[s]}", "finalizers", "kubernetes"));
        json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Active"));
    }
    if (!strcmp(res->plural, "pods") && !res->group[0])
        json_object_set_new(obj, "status", json_pack("{s:s,s:s}", "phase", "Pending", "qosClass", "BestEffort"));
    api_set_type_meta(res, obj);
}

static void already_exists(struct sim_err *err, const struct sim_resource *res, const char *name)
{
    char q[300];
    sim_qualified(res, q, sizeof(q));
    sim_err_set(err, 409, "AlreadyExists", "%s \"%s\" already exists", q, name);
    snprintf(err->details_name, sizeof(err->details_name), "%s", name);
    snprintf(err->details_group, sizeof(err->details_group), "%s", res->group);
    snprintf(err->details_kind, sizeof(err->details_kind), "%s", res->plural);
}

/* Storage: existence check, resourceVersion, side effects, insert. Steals nothing; stores a copy. */
static int commit_new(struct sim *s, struct sim_resource *res, json_t *obj, bool dry, struct sim_err *err)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = sim_jstr(meta, "name"), *ns = sim_jstr(meta, "namespace");
    char key[600], rv[32];
    snprintf(key, sizeof(key), "%s/%s", res->namespaced && ns ? ns : "", name);
    if (json_object_get(res->objects, key)) {
        already_exists(err, res, name);
        return -1;
    }
    if (res->namespaced && !sim_object_get(sim_resource_find(s, "", "v1", "namespaces"), "", ns)) {
        sim_err_set(err, 404, "NotFound", "namespaces \"%s\" not found", ns);
        snprintf(err->details_name, sizeof(err->details_name), "%s", ns);
        snprintf(err->details_kind, sizeof(err->details_kind), "namespaces");
        return -1;
    }
    if (dry)
        return 0;
    json_object_set_new(meta, "resourceVersion", json_string(sim_next_rv(s, rv, sizeof(rv))));
    if (api_store_hooks(s, res, obj, err) < 0)
        return -1;
    /* A CRD may have re-registered resources; `res` still points at the CRD table entry. */
    json_object_set_new(res->objects, key, json_deep_copy(obj));
    sim_event_push(s, res, "ADDED", obj);
    return 0;
}

int sim_store_create_direct(struct sim *s, json_t *obj, struct sim_err *err)
{
    const char *av = sim_jstr(obj, "apiVersion"), *kind = sim_jstr(obj, "kind");
    struct sim_resource *res;
    json_t *copy, *meta;
    const char *ns;
    int rc;
    if (!av || !kind) {
        sim_err_set(err, 400, "BadRequest", "Object 'Kind' is missing");
        return -1;
    }
    res = sim_resource_by_kind(s, av, kind);
    if (!res) {
        sim_err_set(err, 404, "NotFound", "no matches for kind \"%s\" in version \"%s\"", kind, av);
        return -1;
    }
    copy = json_deep_copy(obj);
    meta = json_object_get(copy, "metadata");
    if (!json_is_object(meta) || !sim_jstr(meta, "name")) {
        json_decref(copy);
        sim_err_set(err, 422, "Invalid", "metadata.name: Required value: name is required");
        return -1;
    }
    ns = sim_jstr(meta, "namespace") ? sim_jstr(meta, "namespace") : "default";
    {
        char nsbuf[256];
        snprintf(nsbuf, sizeof(nsbuf), "%s", ns);
        json_t *status = json_incref(json_object_get(copy, "status"));
        char given_uid[64] = "";
        if (sim_jstr(meta, "uid") && strlen(sim_jstr(meta, "uid")) < sizeof(given_uid))
            snprintf(given_uid, sizeof(given_uid), "%s", sim_jstr(meta, "uid"));
        sim_prune(copy, res->schema, NULL);
        sim_default(copy, res->schema);
        prepare_new(res, copy, nsbuf);
        /* A preloaded object keeps the uid it was given, so that a file can hold a whole
         * ownership tree (a JobSet, its Jobs and their pods with owner references). */
        if (given_uid[0])
            json_object_set_new(json_object_get(copy, "metadata"), "uid", json_string(given_uid));
        /* Preloaded objects keep the status they were given: they stand for state that a
         * controller would have written. */
        if (status && strcmp(res->plural, "namespaces"))
            json_object_set(copy, "status", status);
        json_decref(status);
    }
    rc = commit_new(s, res, copy, false, err);
    json_decref(copy);
    return rc;
}

/* ---- list and get ---- */

static bool wants_table(struct sim_req *r)
{
    return r->accept && strstr(r->accept, "as=Table");
}

/* Every resource supports metadata.name and metadata.namespace; events also their own fields
 * (involvedObject.*, reason, type, ...: events.c), which `kubectl describe` asks for. */
/* Pods also take status.phase and spec.nodeName, as kube-apiserver's pod field set does. */
static bool pod_field(const json_t *obj, const char *field, const char **have)
{
    if (!strcmp(field, "status.phase"))
        *have = sim_jstr(json_object_get(obj, "status"), "phase");
    else if (!strcmp(field, "spec.nodeName"))
        *have = sim_jstr(json_object_get(obj, "spec"), "nodeName");
    else
        return false;
    if (!*have)
        *have = "";
    return true;
}

static int field_selector_match(const char *fs, const json_t *obj, bool *out, struct sim_req *r, bool any_field,
                                bool pods)
{
    char buf[512], *save = NULL, *tok;
    const json_t *meta = json_object_get(obj, "metadata");
    *out = true;
    if (!fs || !*fs)
        return 0;
    if (strlen(fs) >= sizeof(buf)) {
        sim_err_set(&r->err, 400, "BadRequest", "field selector too long");
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", fs);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strstr(tok, "="), *val;
        bool neg = false;
        const char *have;
        if (!eq) {
            sim_err_set(&r->err, 400, "BadRequest", "invalid selector: '%s'; can't understand '%s'", fs, tok);
            return -1;
        }
        if (eq > tok && eq[-1] == '!') {
            neg = true;
            eq[-1] = '\0';
        }
        *eq = '\0';
        val = eq + 1;
        if (*val == '=')
            val++;
        if (!strcmp(tok, "metadata.name"))
            have = sim_jstr(meta, "name");
        else if (!strcmp(tok, "metadata.namespace"))
            have = sim_jstr(meta, "namespace");
        else if (pods && pod_field(obj, tok, &have))
            ;
        else if (!any_field || !sim_event_field(obj, tok, &have)) {
            sim_err_set(&r->err, 400, "BadRequest", "field label not supported: %s", tok);
            return -1;
        }
        if ((have && !strcmp(have, val)) == neg)
            *out = false;
    }
    return 0;
}

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void do_list(struct sim *s, struct sim_req *r, struct route *rt)
{
    struct sim_resource *res = rt->res;
    const char *ls = api_qarg(r, "labelSelector"), *fs = api_qarg(r, "fieldSelector");
    const char *limit_s = api_qarg(r, "limit"), *cont = api_qarg(r, "continue"), *watch = api_qarg(r, "watch");
    json_t *sel = NULL, *items = json_array(), *listmeta;
    const char **keys = NULL, *k;
    json_t *v;
    size_t nkeys = 0, i, start = 0;
    long limit = 0;
    char err[256], rv[32], *after = NULL;
    if (watch && (!strcmp(watch, "true") || !strcmp(watch, "1"))) {
        r->stream = sim_watch_start(s, r, res, rt->has_ns ? rt->ns : NULL, ls, fs, api_qarg(r, "resourceVersion"),
                                    api_qarg(r, "timeoutSeconds"), api_qarg(r, "includeObject"));
        if (r->stream)
            r->status = 200;
        goto out;
    }
    if (ls && !(sel = sim_selector_parse(ls, err, sizeof(err)))) {
        sim_err_set(&r->err, 400, "BadRequest", "unable to parse requirement: %s", err);
        goto out;
    }
    if (limit_s && sim_parse_int(limit_s, 0, 1L << 30, &limit) < 0) {
        sim_err_set(&r->err, 400, "BadRequest", "invalid limit \"%s\"", limit_s);
        goto out;
    }
    if (cont && *cont) {
        /* Our continue token is base64 of the last key returned. */
        size_t n;
        after = (char *)sim_b64_decode(cont, &n);
        if (!after) {
            sim_err_set(&r->err, 400, "BadRequest", "continue key is not valid: illegal base64 data");
            goto out;
        }
    }
    keys = calloc(json_object_size(res->objects) + 1, sizeof(*keys));
    json_object_foreach(res->objects, k, v) keys[nkeys++] = k;
    qsort(keys, nkeys, sizeof(*keys), cmpstr);
    if (after)
        while (start < nkeys && strcmp(keys[start], after) <= 0)
            start++;
    snprintf(rv, sizeof(rv), "%llu", s->rv);
    listmeta = json_pack("{s:s}", "resourceVersion", rv);
    for (i = start; i < nkeys; i++) {
        json_t *o = json_object_get(res->objects, keys[i]);
        json_t *meta = json_object_get(o, "metadata");
        bool fm;
        if (rt->has_ns && strcmp(sim_jstr(meta, "namespace"), rt->ns))
            continue;
        if (sel && !sim_selector_match(sel, json_object_get(meta, "labels")))
            continue;
        if (field_selector_match(fs, o, &fm, r, !strcmp(res->plural, "events"),
                                 !strcmp(res->plural, "pods") && !res->group[0]) < 0) {
            json_decref(listmeta);
            goto out;
        }
        if (!fm)
            continue;
        if (limit > 0 && (long)json_array_size(items) >= limit) {
            char tok[1024];
            const char *last = keys[i - 1];
            /* Like etcd-backed lists, a token is handed out when more keys follow, even if
             * none of them would match the selectors. */
            sim_b64_encode((const unsigned char *)last, strlen(last), tok, sizeof(tok));
            json_object_set_new(listmeta, "continue", json_string(tok));
            break;
        }
        json_array_append_new(items, json_deep_copy(o));
    }
    if (wants_table(r)) {
        r->resp = sim_table(s, res, items, api_qarg(r, "includeObject"), listmeta);
    } else {
        char av[200], lk[160];
        sim_api_version(res, av, sizeof(av));
        snprintf(lk, sizeof(lk), "%sList", res->kind);
        r->resp = json_pack("{s:s,s:s,s:O,s:O}", "kind", lk, "apiVersion", av, "metadata", listmeta,
                            "items", items);
    }
    json_decref(listmeta);
    r->status = 200;
out:
    free(after);
    free(keys);
    json_decref(items);
    json_decref(sel);
}

static void do_get(struct sim *s, struct sim_req *r, struct route *rt)
{
    json_t *o = sim_object_get(rt->res, rt->ns, rt->name);
    if (!o) {
        api_not_found(r, rt->res, rt->name);
        return;
    }
    if (wants_table(r)) {
        json_t *items = json_pack("[O]", o), *lm = json_pack("{s:s}", "resourceVersion",
                                                            sim_jstr(json_object_get(o, "metadata"), "resourceVersion"));
        r->resp = sim_table(s, rt->res, items, api_qarg(r, "includeObject"), lm);
        json_decref(items);
        json_decref(lm);
    } else {
        r->resp = json_deep_copy(o);
    }
    r->status = 200;
}

/* ---- create ---- */

static void do_create(struct sim *s, struct sim_req *r, struct route *rt)
{
    struct sim_resource *res = rt->res;
    json_t *obj = api_parse_body(r), *meta, *opts = NULL;
    const char *name, *gen, *bns;
    char av[200], gname[300], resgroup[128], resversion[64], resplural[128];
    bool dry = api_dry_run(r, NULL);
    if (!obj)
        return;
    sim_api_version(res, av, sizeof(av));
    if (!json_is_object(obj)) {
        sim_err_set(&r->err, 400, "BadRequest", "the body of the request was not a JSON object");
        goto out;
    }
    if (sim_jstr(obj, "kind") && strcmp(sim_jstr(obj, "kind"), res->kind)) {
        sim_err_set(&r->err, 400, "BadRequest", "the API version in the data (%s) does not match the expected API version (%s)",
                    sim_jstr(obj, "apiVersion") ? sim_jstr(obj, "apiVersion") : "", av);
        goto out;
    }
    meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    bns = sim_jstr(meta, "namespace");
    if (res->namespaced && bns && strcmp(bns, rt->ns)) {
        sim_err_set(&r->err, 400, "BadRequest",
                    "the namespace of the provided object does not match the namespace sent on the request");
        goto out;
    }
    if (res->namespaced)
        json_object_set_new(meta, "namespace", json_string(rt->ns));
    api_set_type_meta(res, obj);
    if (api_prune_request(r, res, obj) < 0)
        goto out;
    opts = api_options_obj(r, "CreateOptions", dry);
    snprintf(resgroup, sizeof(resgroup), "%s", res->group);
    snprintf(resversion, sizeof(resversion), "%s", res->version);
    snprintf(resplural, sizeof(resplural), "%s", res->plural);
    /* Mutating admission sees the object before a generateName'd name is chosen. */
    if (sim_admit(s, r, res, NULL, SIM_CREATE, rt->ns, sim_jstr(meta, "name") ? sim_jstr(meta, "name") : "",
                  &obj, NULL, dry, opts, false) < 0)
        goto out;
    res = sim_resource_find(s, resgroup, resversion, resplural);
    if (!res) {
        sim_err_set(&r->err, 404, "NotFound", "the server could not find the requested resource");
        goto out;
    }
    meta = json_object_get(obj, "metadata");
    name = sim_jstr(meta, "name");
    gen = sim_jstr(meta, "generateName");
    if ((!name || !*name) && gen && *gen) {
        char suf[8];
        sim_random_suffix(suf, sizeof(suf));
        snprintf(gname, sizeof(gname), "%.57s%s", gen, suf);
        json_object_set_new(meta, "name", json_string(gname));
        name = sim_jstr(meta, "name");
    }
    if (!name || !*name) {
        api_invalid(r, res, "", "metadata.name", "FieldValueRequired", "Required value: name or generateName is required");
        goto out;
    }
    if (!valid_dns_subdomain(name)) {
        char msg[600];
        snprintf(msg, sizeof(msg),
                 "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                 "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
                 "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                 name);
        api_invalid(r, res, name, "metadata.name", "FieldValueInvalid", msg);
        goto out;
    }
    if (!strcmp(res->plural, "customresourcedefinitions") && sim_crd_validate(obj, &r->err) < 0)
        goto out;
    prepare_new(res, obj, rt->ns);
    if (sim_admit(s, r, res, NULL, SIM_CREATE, rt->ns, name, &obj, NULL, dry, opts, true) < 0)
        goto out;
    res = sim_resource_find(s, resgroup, resversion, resplural);
    if (!res) {
        sim_err_set(&r->err, 404, "NotFound", "the server could not find the requested resource");
        goto out;
    }
    if (commit_new(s, res, obj, dry, &r->err) < 0)
        goto out;
    r->resp = json_incref(obj);
    r->status = 201;
out:
    json_decref(opts);
    json_decref(obj);
}

void sim_api_handle(struct sim *s, struct sim_req *r)
{
    struct route rt;
    const char *m = r->method;
    if (sim_rbac_handle(s, r))
        return; /* refused, or a TokenRequest / access review answered */
    if (route_parse(s, r, &rt) < 0) {
        sim_err_set(&r->err, 404, "NotFound", "the server could not find the requested resource");
        return;
    }
    if (r->user.read_only && strcmp(m, "GET")) {
        /* The viewer may read everything and write nothing: RBAC's message shape. */
        static const char *const verbs[][2] = {{"POST", "create"}, {"PUT", "update"}, {"PATCH", "patch"}, {"DELETE", "delete"}};
        const char *verb = "modify";
        char resource[200];
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
            if (!strcmp(m, verbs[i][0]))
                verb = verbs[i][1];
        char subject[600], q[300];
        snprintf(resource, sizeof(resource), "%s%s%s", rt.res->plural, rt.sub[0] ? "/" : "", rt.sub);
        sim_qualified(rt.res, q, sizeof(q));
        if (rt.has_name)
            snprintf(subject, sizeof(subject), "%s \"%s\"", q, rt.name);
        else
            snprintf(subject, sizeof(subject), "%s", q);
        if (rt.res->namespaced && rt.has_ns)
            sim_err_set(&r->err, 403, "Forbidden",
                        "%s is forbidden: User \"%s\" cannot %s resource \"%s\" in API group \"%s\" in the namespace \"%s\"",
                        subject, r->user.name, verb, resource, rt.res->group, rt.ns);
        else
            sim_err_set(&r->err, 403, "Forbidden",
                        "%s is forbidden: User \"%s\" cannot %s resource \"%s\" in API group \"%s\" at the cluster scope",
                        subject, r->user.name, verb, resource, rt.res->group);
        snprintf(r->err.details_name, sizeof(r->err.details_name), "%s", rt.name);
        snprintf(r->err.details_group, sizeof(r->err.details_group), "%s", rt.res->group);
        snprintf(r->err.details_kind, sizeof(r->err.details_kind), "%s", rt.res->plural);
        return;
    }
    if (!strcmp(rt.sub, "scale")) {
        sim_scale_handle(s, r, rt.res, rt.ns, rt.name);
        return;
    }
    if (!strcmp(rt.sub, "log")) {
        sim_log_handle(s, r, rt.res, rt.ns, rt.name);
        return;
    }
    if (!strcmp(m, "GET")) {
        if (rt.has_name)
            do_get(s, r, &rt);
        else
            do_list(s, r, &rt);
    } else if (!strcmp(m, "POST") && !rt.has_name) {
        if (rt.res->namespaced && !rt.has_ns) {
            sim_err_set(&r->err, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
            return;
        }
        do_create(s, r, &rt);
    } else if (!strcmp(m, "PUT") && rt.has_name) {
        api_do_update(s, r, &rt);
    } else if (!strcmp(m, "PATCH") && rt.has_name) {
        api_do_patch(s, r, &rt);
    } else if (!strcmp(m, "DELETE") && rt.has_name && !rt.sub[0]) {
        api_do_delete(s, r, &rt);
    } else {
        sim_err_set(&r->err, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
    }
}
