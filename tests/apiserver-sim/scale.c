/* The scale subresource: an autoscaling/v1 Scale view of an object's replica count, for apps/v1
 * workloads and CRDs that declare `subresources.scale` (specReplicasPath, statusReplicasPath,
 * labelSelectorPath). Writes change only the replicas at specReplicasPath. */
#include "api.h"

#include <stdio.h>
#include <string.h>

/* The value at a simple dotted path (".spec.replicas"); `create` makes missing objects. */
static json_t *at_path(json_t *obj, const char *path, bool create, char *last, size_t ln, json_t **parent)
{
    char buf[128], *save = NULL, *tok, *next;
    json_t *cur = obj;
    if (!path || path[0] != '.' || strlen(path) >= sizeof(buf) || strpbrk(path, "[]"))
        return NULL;
    snprintf(buf, sizeof(buf), "%s", path + 1);
    tok = strtok_r(buf, ".", &save);
    while (tok) {
        next = strtok_r(NULL, ".", &save);
        if (!next) {
            snprintf(last, ln, "%s", tok);
            *parent = cur;
            return json_object_get(cur, tok);
        }
        if (!json_is_object(json_object_get(cur, tok))) {
            if (!create)
                return NULL;
            json_object_set_new(cur, tok, json_object());
        }
        cur = json_object_get(cur, tok);
        tok = next;
    }
    return NULL;
}

static json_t *get_path(json_t *obj, const char *path)
{
    char last[128];
    json_t *parent = NULL;
    return at_path(obj, path, false, last, sizeof(last), &parent);
}

/* A label selector object as the string form the Scale status carries. */
static json_t *selector_string(json_t *sel)
{
    char out[1024] = "";
    size_t o = 0;
    const char *k;
    json_t *v;
    if (json_is_string(sel))
        return json_incref(sel);
    json_object_foreach(json_object_get(sel, "matchLabels"), k, v) {
        int w = snprintf(out + o, sizeof(out) - o, "%s%s=%s", o ? "," : "", k, json_string_value(v) ? json_string_value(v) : "");
        if (w < 0 || (size_t)w >= sizeof(out) - o)
            break;
        o += (size_t)w;
    }
    return o ? json_string(out) : NULL;
}

static json_t *scale_of(const struct sim_resource *res, json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    json_t *spec_r = get_path(obj, res->spec_replicas_path), *status_r = get_path(obj, res->status_replicas_path);
    json_t *sel = res->selector_path[0] ? selector_string(get_path(obj, res->selector_path)) : NULL;
    json_t *scale = json_pack("{s:s,s:s,s:{s:O*,s:O*,s:O*,s:O*,s:O*},s:{s:I},s:{s:I}}", "kind", "Scale", "apiVersion",
                              "autoscaling/v1", "metadata", "name", json_object_get(meta, "name"), "namespace",
                              json_object_get(meta, "namespace"), "uid", json_object_get(meta, "uid"),
                              "resourceVersion", json_object_get(meta, "resourceVersion"), "creationTimestamp",
                              json_object_get(meta, "creationTimestamp"), "spec", "replicas",
                              (json_int_t)(json_is_integer(spec_r) ? json_integer_value(spec_r) : 0), "status",
                              "replicas", (json_int_t)(json_is_integer(status_r) ? json_integer_value(status_r) : 0));
    if (sel)
        json_object_set_new(json_object_get(scale, "status"), "selector", sel);
    return scale;
}

void sim_scale_handle(struct sim *s, struct sim_req *r, struct sim_resource *res, const char *ns, const char *name)
{
    json_t *obj = sim_object_get(res, ns, name), *scale = NULL, *in = NULL, *copy = NULL, *parent = NULL, *rep;
    const char *ct = r->content_type ? r->content_type : "", *rv;
    char e[512], last[128], key[600], nrv[32];
    bool dry = api_dry_run(r, NULL);
    if (!obj) {
        api_not_found(r, res, name);
        return;
    }
    scale = scale_of(res, obj);
    if (!strcmp(r->method, "GET")) {
        r->resp = scale;
        r->status = 200;
        return;
    }
    if (strcmp(r->method, "PUT") && strcmp(r->method, "PATCH")) {
        sim_err_set(&r->err, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        goto out;
    }
    if (!(in = api_parse_body(r)))
        goto out;
    if (!strcmp(r->method, "PUT")) {
        json_decref(scale);
        scale = json_incref(in);
    } else if (!strncmp(ct, "application/json-patch+json", 27)) {
        if (sim_json_patch(scale, in, e, sizeof(e)) < 0) {
            sim_err_set(&r->err, 422, "Invalid", "%s", e);
            goto out;
        }
    } else if (!strncmp(ct, "application/merge-patch+json", 28) || !strncmp(ct, "application/strategic-merge-patch+json", 38)) {
        scale = sim_merge_patch(scale, in);
    } else {
        sim_err_set(&r->err, 415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                    "media types include: application/json-patch+json, application/merge-patch+json");
        goto out;
    }
    rv = sim_jstr(json_object_get(scale, "metadata"), "resourceVersion");
    if (rv && *rv && strcmp(rv, sim_jstr(json_object_get(obj, "metadata"), "resourceVersion"))) {
        api_conflict(r, res, name);
        goto out;
    }
    rep = json_object_get(json_object_get(scale, "spec"), "replicas");
    if (!json_is_integer(rep) || json_integer_value(rep) < 0) {
        char msg[64];
        snprintf(msg, sizeof(msg), "Invalid value: %lld: must be greater than or equal to 0",
                 json_is_integer(rep) ? (long long)json_integer_value(rep) : -1LL);
        sim_err_set(&r->err, 422, "Invalid", "Scale.autoscaling \"%s\" is invalid: spec.replicas: %s", name, msg);
        goto out;
    }
    copy = json_deep_copy(obj);
    at_path(copy, res->spec_replicas_path, true, last, sizeof(last), &parent);
    if (!json_is_object(parent)) {
        sim_err_set(&r->err, 500, "InternalError", "Internal error occurred: cannot set %s", res->spec_replicas_path);
        goto out;
    }
    if (!json_equal(json_object_get(parent, last), rep)) {
        json_t *meta = json_object_get(copy, "metadata");
        json_object_set(parent, last, rep);
        if (res->has_generation)
            json_object_set_new(meta, "generation",
                                json_integer(json_integer_value(json_object_get(meta, "generation")) + 1));
        if (!dry) {
            json_object_set_new(meta, "resourceVersion", json_string(sim_next_rv(s, nrv, sizeof(nrv))));
            snprintf(key, sizeof(key), "%s/%s", res->namespaced ? ns : "", name);
            json_object_set_new(res->objects, key, json_deep_copy(copy));
            sim_event_push(s, res, "MODIFIED", copy);
        }
    }
    r->resp = scale_of(res, copy);
    r->status = 200;
out:
    json_decref(scale);
    json_decref(in);
    json_decref(copy);
}
