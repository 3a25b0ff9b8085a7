/* Discovery (/version, /api, /apis, per-group-version resource lists), the small part of
 * OpenAPI v3 kubectl reads to decide that the server validates fields itself, and the
 * published schemas of custom resources (for clients that check pruning there).
 * Aggregated discovery (v2) is served to clients that ask for it in Accept; the others get the
 * plain APIGroupList and walk the groups. */
#include "sim.h"

#include <stdio.h>
#include <string.h>

static json_t *verbs(void)
{
    return json_pack("[s,s,s,s,s,s,s,s]", "create", "delete", "deletecollection", "get", "list",
                     "patch", "update", "watch");
}

static json_t *resource_list(struct sim *s, const char *group, const char *version)
{
    json_t *list = json_array();
    char gv[200];
    bool any = false;
    for (int i = 0; i < s->n_res; i++) {
        struct sim_resource *r = &s->res[i];
        json_t *e, *shorts;
        if (strcmp(r->group, group) || strcmp(r->version, version))
            continue;
        any = true;
        shorts = json_array();
        for (int j = 0; j < r->n_short; j++)
            json_array_append_new(shorts, json_string(r->short_names[j]));
        e = json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", r->plural, "singularName", r->singular,
                      "namespaced", r->namespaced, "kind", r->kind, "verbs", verbs());
        if (r->n_short)
            json_object_set_new(e, "shortNames", shorts);
        else
            json_decref(shorts);
        json_object_set_new(e, "storageVersionHash", json_string("sim0000000="));
        json_array_append_new(list, e);
        if (r->has_status) {
            char sub[160];
            snprintf(sub, sizeof(sub), "%s/status", r->plural);
            json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:s, s:[s,s,s]}", "name", sub,
                                                  "singularName", "", "namespaced", r->namespaced,
                                                  "kind", r->kind, "verbs", "get", "patch", "update"));
        }
        if (r->has_scale) {
            char sub[160];
            snprintf(sub, sizeof(sub), "%s/scale", r->plural);
            json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:s, s:s, s:s, s:[s,s,s]}", "name", sub,
                                                  "singularName", "", "namespaced", r->namespaced, "group",
                                                  "autoscaling", "version", "v1", "kind", "Scale", "verbs", "get",
                                                  "patch", "update"));
        }
    }
    if (!any) {
        json_decref(list);
        return NULL;
    }
    if (group[0])
        snprintf(gv, sizeof(gv), "%s/%s", group, version);
    else
        snprintf(gv, sizeof(gv), "%s", version);
    return json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                     "groupVersion", gv, "resources", list);
}

/* Aggregated discovery (apidiscovery.k8s.io/v2, GA in 1.30): every group, version and resource
 * in one document, asked for with an Accept header naming it. `core` selects /api (the legacy
 * group) or /apis (all named groups). */
static json_t *aggregated(struct sim *s, bool core)
{
    json_t *items = json_array();
    for (int i = 0; i < s->n_res; i++) {
        struct sim_resource *r = &s->res[i];
        json_t *g = NULL, *v = NULL, *e, *res, *shorts;
        size_t j;
        if ((r->group[0] == '\0') != core)
            continue;
        json_array_foreach(items, j, e) {
            if (!strcmp(sim_jstr(json_object_get(e, "metadata"), "name"), r->group))
                g = e;
        }
        if (!g) {
            g = json_pack("{s:{s:s,s:n}, s:[]}", "metadata", "name", r->group, "creationTimestamp", "versions");
            json_array_append_new(items, g);
        }
        json_array_foreach(json_object_get(g, "versions"), j, e) {
            if (!strcmp(sim_jstr(e, "version"), r->version))
                v = e;
        }
        if (!v) {
            v = json_pack("{s:s, s:[], s:s}", "version", r->version, "resources", "freshness", "Current");
            json_array_append_new(json_object_get(g, "versions"), v);
        }
        shorts = json_array();
        for (int k = 0; k < r->n_short; k++)
            json_array_append_new(shorts, json_string(r->short_names[k]));
        res = json_pack("{s:s, s:{s:s,s:s,s:s}, s:s, s:s, s:o, s:o}", "resource", r->plural, "responseKind",
                        "group", r->group, "version", r->version, "kind", r->kind, "scope",
                        r->namespaced ? "Namespaced" : "Cluster", "singularResource", r->singular, "verbs", verbs(),
                        "shortNames", shorts);
        if (r->has_status || r->has_scale) {
            json_t *subs = json_array();
            if (r->has_status)
                json_array_append_new(subs, json_pack("{s:s, s:{s:s,s:s,s:s}, s:[s,s,s]}", "subresource", "status",
                                                      "responseKind", "group", r->group, "version", r->version, "kind",
                                                      r->kind, "verbs", "get", "patch", "update"));
            if (r->has_scale)
                json_array_append_new(subs, json_pack("{s:s, s:{s:s,s:s,s:s}, s:[s,s,s]}", "subresource", "scale",
                                                      "responseKind", "group", "autoscaling", "version", "v1", "kind",
                                                      "Scale", "verbs", "get", "patch", "update"));
            json_object_set_new(res, "subresources", subs);
        }
        json_array_append_new(json_object_get(v, "resources"), res);
    }
    return json_pack("{s:s, s:s, s:{}, s:o}", "kind", "APIGroupDiscoveryList", "apiVersion", "apidiscovery.k8s.io/v2",
                     "metadata", "items", items);
}

static bool wants_aggregated(const struct sim_req *r)
{
    return r->accept && strstr(r->accept, "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList") &&
           strstr(r->accept, "g=apidiscovery.k8s.io;v=v2;") != NULL;
}

/* Groups in registration order (built-ins first, as the real server orders them). */
static json_t *group_list(struct sim *s)
{
    json_t *groups = json_array();
    for (int i = 0; i < s->n_res; i++) {
        struct sim_resource *r = &s->res[i];
        json_t *g = NULL, *e;
        size_t j;
        char gv[200];
        if (!r->group[0])
            continue;
        json_array_foreach(groups, j, e) {
            if (!strcmp(sim_jstr(e, "name"), r->group))
                g = e;
        }
        snprintf(gv, sizeof(gv), "%s/%s", r->group, r->version);
        if (!g) {
            g = json_pack("{s:s, s:[], s:{s:s,s:s}}", "name", r->group, "versions", "preferredVersion",
                          "groupVersion", gv, "version", r->version);
            json_array_append_new(groups, g);
        }
        bool have = false;
        json_array_foreach(json_object_get(g, "versions"), j, e) {
            if (!strcmp(sim_jstr(e, "version"), r->version))
                have = true;
        }
        if (!have)
            json_array_append_new(json_object_get(g, "versions"),
                                  json_pack("{s:s,s:s}", "groupVersion", gv, "version", r->version));
    }
    return groups;
}

/* "jobset.x-k8s.io" → "io.x-k8s.jobset", the prefix the real server gives CRD schema names. */
static void reverse_group(const char *group, char *out, size_t n)
{
    size_t o = 0, len = strlen(group);
    out[0] = '\0';
    for (size_t end = len; end > 0;) {
        size_t start = end;
        while (start > 0 && group[start - 1] != '.')
            start--;
        int w = snprintf(out + o, n - o, "%s%.*s", o ? "." : "", (int)(end - start), group + start);
        if (w < 0 || (size_t)w >= n - o)
            return;
        o += (size_t)w;
        end = start ? start - 1 : 0;
    }
}

static const char objectmeta_ref[] = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/* The schema published for a custom resource: the CRD's openAPIV3Schema with metadata as a
 * reference to ObjectMeta, as kube-apiserver's CRD OpenAPI builder does. */
static json_t *cr_schema(const struct sim_resource *r)
{
    json_t *sc = json_deep_copy(r->schema), *props;
    if (!json_is_object(sc))
        return NULL;
    props = json_object_get(sc, "properties");
    if (json_is_object(props))
        json_object_set_new(props, "metadata", json_pack("{s:[{s:s}]}", "allOf", "$ref", objectmeta_ref));
    json_object_set_new(sc, "x-kubernetes-group-version-kind",
                        json_pack("[{s:s,s:s,s:s}]", "group", r->group, "version", r->version, "kind", r->kind));
    return sc;
}

/* A minimal OpenAPI v3 document per group-version: one PATCH operation per kind carrying the
 * `fieldValidation` query parameter. kubectl 1.32 looks for exactly that to decide the server
 * does field validation (and then skips its own, which would need the full schemas). */
static json_t *openapi_gv(struct sim *s, const char *group, const char *version)
{
    json_t *paths = json_object(), *schemas = json_object();
    bool any = false;
    for (int i = 0; i < s->n_res; i++) {
        struct sim_resource *r = &s->res[i];
        char p[512];
        if (strcmp(r->group, group) || strcmp(r->version, version))
            continue;
        any = true;
        if (r->schema) {
            char rg[160], name[400];
            json_t *sc = cr_schema(r);
            reverse_group(r->group, rg, sizeof(rg));
            snprintf(name, sizeof(name), "%s.%s.%s", rg, r->version, r->kind);
            if (sc)
                json_object_set_new(schemas, name, sc);
        }
        if (r->group[0])
            snprintf(p, sizeof(p), "/apis/%s/%s/%s%s/{name}", r->group, r->version,
                     r->namespaced ? "namespaces/{namespace}/" : "", r->plural);
        else
            snprintf(p, sizeof(p), "/api/%s/%s%s/{name}", r->version,
                     r->namespaced ? "namespaces/{namespace}/" : "", r->plural);
        json_object_set_new(
            paths, p,
            json_pack("{s:{s:{s:s,s:s,s:s}, s:[{s:s,s:s,s:{s:s}}], s:{s:{s:{}, s:{}}}}}", "patch",
                      "x-kubernetes-group-version-kind", "group", r->group, "version", r->version,
                      "kind", r->kind, "parameters", "name", "fieldValidation", "in", "query",
                      "schema", "type", "string", "requestBody", "content",
                      "application/json-patch+json", "application/merge-patch+json"));
    }
    if (!any) {
        json_decref(paths);
        json_decref(schemas);
        return NULL;
    }
    if (json_object_size(schemas))
        json_object_set_new(schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                            json_pack("{s:s,s:{s:{s:s},s:{s:s},s:{s:s},s:{s:s,s:{s:s}},s:{s:s,s:{s:s}}}}", "type", "object",
                                      "properties", "name", "type", "string", "namespace", "type", "string",
                                      "generateName", "type", "string", "labels", "type", "object",
                                      "additionalProperties", "type", "string", "annotations", "type", "object",
                                      "additionalProperties", "type", "string"));
    return json_pack("{s:s, s:{s:s,s:s}, s:o, s:{s:o}}", "openapi", "3.0.0", "info", "title", "Kubernetes",
                     "version", "v1.32.0-sim", "paths", paths, "components", "schemas", schemas);
}

static json_t *openapi_root(struct sim *s)
{
    json_t *paths = json_object();
    for (int i = 0; i < s->n_res; i++) {
        struct sim_resource *r = &s->res[i];
        char key[300], url[400];
        if (r->group[0])
            snprintf(key, sizeof(key), "apis/%s/%s", r->group, r->version);
        else
            snprintf(key, sizeof(key), "api/%s", r->version);
        /* The hash changes with the resource count so clients refetch after a CRD lands. */
        snprintf(url, sizeof(url), "/openapi/v3/%s?hash=SIM%04d%llu", key, s->n_res, s->rv);
        json_object_set_new(paths, key, json_pack("{s:s}", "serverRelativeURL", url));
    }
    return json_pack("{s:o}", "paths", paths);
}

static bool split2(const char *rest, char *a, size_t an, char *b, size_t bn)
{
    const char *slash = strchr(rest, '/');
    if (!slash)
        return false;
    if ((size_t)(slash - rest) >= an || strlen(slash + 1) >= bn || strchr(slash + 1, '/'))
        return false;
    snprintf(a, an, "%.*s", (int)(slash - rest), rest);
    snprintf(b, bn, "%s", slash + 1);
    return true;
}

bool sim_discovery_handle(struct sim *s, struct sim_req *r)
{
    const char *p = r->path;
    char g[128], v[64];
    if (strcmp(r->method, "GET"))
        return false;
    if (!strcmp(p, "/version") || !strcmp(p, "/version/")) {
        r->resp = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "major", "1", "minor", "32",
                            "gitVersion", "v1.32.0-apiserver-sim", "gitCommit", "0000000000000000",
                            "gitTreeState", "clean", "buildDate", "2026-01-01T00:00:00Z", "goVersion",
                            "go1.23", "compiler", "gc", "platform", "linux/amd64");
    } else if ((!strcmp(p, "/api") || !strcmp(p, "/apis")) && wants_aggregated(r)) {
        r->resp = aggregated(s, !strcmp(p, "/api"));
        r->resp_content_type = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    } else if (!strcmp(p, "/api") || !strcmp(p, "/api/")) {
        r->resp = json_pack("{s:s, s:[s], s:[{s:s,s:s}]}", "kind", "APIVersions", "versions", "v1",
                            "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0", "serverAddress",
                            "127.0.0.1:443");
    } else if (!strcmp(p, "/api/v1")) {
        r->resp = resource_list(s, "", "v1");
    } else if (!strcmp(p, "/apis") || !strcmp(p, "/apis/")) {
        r->resp = json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups",
                            group_list(s));
    } else if (!strncmp(p, "/apis/", 6) && split2(p + 6, g, sizeof(g), v, sizeof(v))) {
        r->resp = resource_list(s, g, v);
        if (!r->resp)
            return false;
    } else if (!strncmp(p, "/apis/", 6) && !strchr(p + 6, '/')) {
        json_t *groups = group_list(s), *e;
        size_t i;
        json_array_foreach(groups, i, e) {
            if (!strcmp(sim_jstr(e, "name"), p + 6)) {
                r->resp = json_incref(e);
                json_object_set_new(r->resp, "kind", json_string("APIGroup"));
                json_object_set_new(r->resp, "apiVersion", json_string("v1"));
            }
        }
        json_decref(groups);
        if (!r->resp)
            return false;
    } else if (!strcmp(p, "/openapi/v3") || !strcmp(p, "/openapi/v3/")) {
        r->resp = openapi_root(s);
    } else if (!strcmp(p, "/openapi/v3/api/v1")) {
        r->resp = openapi_gv(s, "", "v1");
    } else if (!strncmp(p, "/openapi/v3/apis/", 17) && split2(p + 17, g, sizeof(g), v, sizeof(v))) {
        r->resp = openapi_gv(s, g, v);
        if (!r->resp)
            return false;
    } else if (!strcmp(p, "/openapi/v2") || !strcmp(p, "/swagger.json")) {
        /* Not served: kubectl only needs v2 when v3 lacks a kind; 404 makes it skip. */
        sim_err_set(&r->err, 404, "NotFound", "the server could not find the requested resource");
        r->status = 404;
        return true;
    } else if (!strcmp(p, "/healthz") || !strcmp(p, "/readyz") || !strcmp(p, "/livez")) {
        r->resp = json_string("ok");
    } else {
        return false;
    }
    r->status = 200;
    return true;
}
