/* The writing verbs: update (PUT, including /status), patch (JSON, merge, strategic for
 * built-ins) and delete, each through admission. Called with s->lock held. */
#include "api.h"

#include <stdio.h>
#include <string.h>

/* ---- update, patch, delete ---- */

/* Times a write is tried again when another writer came in while its webhooks ran. */
#define WRITE_ATTEMPTS 20

/* After the lock was released for webhooks: the resource and the object again, and the
 * resourceVersion check again. When another writer came in between, *raced is set and no
 * error is: the caller tries the whole request again on the new object, as the API server's
 * GuaranteedUpdate does, so that a request without a resourceVersion of its own (a patch,
 * an unconditional update) succeeds and one with a stale resourceVersion gets 409. */
static struct sim_resource *relookup(struct sim *s, struct sim_req *r, struct route *rt, const char *g, const char *v,
                                     const char *p, const char *orv, json_t **old, bool *raced)
{
    struct sim_resource *res = sim_resource_find(s, g, v, p);
    *old = res ? sim_object_get(res, rt->ns, rt->name) : NULL;
    if (!*old) {
        if (res)
            api_not_found(r, res, rt->name);
        else
            sim_err_set(&r->err, 404, "NotFound", "the server could not find the requested resource");
        return NULL;
    }
    if (strcmp(sim_jstr(json_object_get(*old, "metadata"), "resourceVersion"), orv)) {
        rt->res = res; /* the table may have moved while the lock was released */
        *raced = true;
        return NULL;
    }
    return res;
}

/* The shared tail of PUT and PATCH: `obj` (owned) is the full new object. Returns true when
 * another writer changed the object while the webhooks ran (relookup): nothing was written or
 * answered, and the request is to be tried again from the start. */
static bool update_object(struct sim *s, struct sim_req *r, struct route *rt, json_t *obj, bool is_patch)
{
    struct sim_resource *res = rt->res;
    json_t *old = sim_object_get(res, rt->ns, rt->name), *meta, *oldmeta, *opts = NULL, *oldcopy = NULL;
    const char *brv;
    char orv[32], resgroup[128], resversion[64], resplural[128], av[200];
    bool dry = api_dry_run(r, NULL), raced = false;
    if (!old) {
        api_not_found(r, res, rt->name);
        goto out;
    }
    if (!json_is_object(obj)) {
        sim_err_set(&r->err, 400, "BadRequest", "the body of the request was not a JSON object");
        goto out;
    }
    oldcopy = json_deep_copy(old);
    oldmeta = json_object_get(oldcopy, "metadata");
    snprintf(orv, sizeof(orv), "%s", sim_jstr(oldmeta, "resourceVersion"));
    meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    sim_api_version(res, av, sizeof(av));
    if (sim_jstr(obj, "kind") && strcmp(sim_jstr(obj, "kind"), res->kind)) {
        sim_err_set(&r->err, 400, "BadRequest", "the API version in the data (%s) does not match the expected API version (%s)",
                    sim_jstr(obj, "apiVersion") ? sim_jstr(obj, "apiVersion") : "", av);
        goto out;
    }
    if (sim_jstr(meta, "name") && strcmp(sim_jstr(meta, "name"), rt->name)) {
        sim_err_set(&r->err, 400, "BadRequest", "the name of the object (%s) does not match the name on the URL (%s)",
                    sim_jstr(meta, "name"), rt->name);
        goto out;
    }
    brv = sim_jstr(meta, "resourceVersion");
    if (!brv || !*brv) {
        /* Custom resources refuse unconditional updates (AllowUnconditionalUpdate is false). */
        if (!res->builtin && !is_patch) {
            api_invalid(r, res, rt->name, "metadata.resourceVersion", "FieldValueInvalid",
                    "Invalid value: 0x0: must be specified for an update");
            goto out;
        }
    } else if (strcmp(brv, orv)) {
        api_conflict(r, res, rt->name);
        goto out;
    }
    /* Immutable metadata always comes from storage. */
    json_object_set(meta, "uid", json_object_get(oldmeta, "uid"));
    json_object_set(meta, "creationTimestamp", json_object_get(oldmeta, "creationTimestamp"));
    json_object_set(meta, "name", json_object_get(oldmeta, "name"));
    if (res->namespaced)
        json_object_set(meta, "namespace", json_object_get(oldmeta, "namespace"));
    if (json_object_get(oldmeta, "generation"))
        json_object_set(meta, "generation", json_object_get(oldmeta, "generation"));
    api_set_type_meta(res, obj);
    if (rt->sub[0]) {
        /* /status: only .status changes; everything else comes from storage. */
        json_t *st = json_incref(json_object_get(obj, "status"));
        json_decref(obj);
        obj = json_deep_copy(oldcopy);
        if (st)
            json_object_set_new(obj, "status", st);
        else
            json_object_del(obj, "status");
    } else if (res->has_status) {
        if (json_object_get(oldcopy, "status"))
            json_object_set(obj, "status", json_object_get(oldcopy, "status"));
        else
            json_object_del(obj, "status");
    }
    if (api_prune_request(r, res, obj) < 0)
        goto out;
    opts = api_options_obj(r, is_patch ? "PatchOptions" : "UpdateOptions", dry);
    snprintf(resgroup, sizeof(resgroup), "%s", res->group);
    snprintf(resversion, sizeof(resversion), "%s", res->version);
    snprintf(resplural, sizeof(resplural), "%s", res->plural);
    if (sim_admit(s, r, res, rt->sub[0] ? rt->sub : NULL, SIM_UPDATE, rt->ns, rt->name, &obj, oldcopy, dry, opts,
                  false) < 0)
        goto out;
    /* The lock was released while webhooks ran: look everything up again. */
    if (!(res = relookup(s, r, rt, resgroup, resversion, resplural, orv, &old, &raced)))
        goto out;
    /* What rest.BeforeUpdate does: identity from storage, generation bumped on spec change. */
    meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    oldmeta = json_object_get(old, "metadata");
    json_object_set(meta, "name", json_object_get(oldmeta, "name"));
    json_object_set(meta, "uid", json_object_get(oldmeta, "uid"));
    json_object_set(meta, "creationTimestamp", json_object_get(oldmeta, "creationTimestamp"));
    if (res->namespaced)
        json_object_set(meta, "namespace", json_object_get(oldmeta, "namespace"));
    if (json_object_get(oldmeta, "generation"))
        json_object_set(meta, "generation", json_object_get(oldmeta, "generation"));
    json_object_set_new(meta, "resourceVersion", json_string(orv));
    api_set_type_meta(res, obj);
    if (json_equal(obj, old)) {
        /* A no-op update is not written and keeps its resourceVersion, as in etcd3 storage. */
        r->resp = json_deep_copy(old);
        r->status = 200;
        goto out;
    }
    if (res->has_generation && !rt->sub[0] && api_spec_changed(res, obj, old)) {
        json_int_t g = json_integer_value(json_object_get(oldmeta, "generation"));
        json_object_set_new(meta, "generation", json_integer(g + 1));
    }
    if (sim_admit(s, r, res, rt->sub[0] ? rt->sub : NULL, SIM_UPDATE, rt->ns, rt->name, &obj, oldcopy, dry, opts,
                  true) < 0)
        goto out;
    if (!(res = relookup(s, r, rt, resgroup, resversion, resplural, orv, &old, &raced)))
        goto out;
    meta = json_object_get(obj, "metadata");
    if (!strcmp(res->plural, "customresourcedefinitions") && sim_crd_validate(obj, &r->err) < 0)
        goto out;
    if (!dry) {
        char rv[32], key[600];
        json_object_set_new(meta, "resourceVersion", json_string(sim_next_rv(s, rv, sizeof(rv))));
        if (api_store_hooks(s, res, obj, &r->err) < 0)
            goto out;
        res = sim_resource_find(s, resgroup, resversion, resplural);
        snprintf(key, sizeof(key), "%s/%s", res->namespaced ? rt->ns : "", rt->name);
        json_object_set_new(res->objects, key, json_deep_copy(obj));
        sim_event_push(s, res, "MODIFIED", obj);
    }
    r->resp = json_incref(obj);
    r->status = 200;
out:
    json_decref(opts);
    json_decref(oldcopy);
    json_decref(obj);
    return raced;
}

/* One more try of a raced write: the warnings of the last try's webhooks are dropped (the
 * next try's give them again, and the API server's recorder keeps one of each). False, with
 * the conflict answered, when the tries are used up. */
static bool try_again(struct sim_req *r, const struct route *rt, int attempt, int n_warnings)
{
    r->n_warnings = n_warnings;
    if (attempt + 1 < WRITE_ATTEMPTS)
        return true;
    api_conflict(r, rt->res, rt->name);
    return false;
}

void api_do_update(struct sim *s, struct sim_req *r, struct route *rt)
{
    int n_warnings = r->n_warnings;
    for (int attempt = 0;; attempt++) {
        json_t *obj = api_parse_body(r);
        if (!obj || !update_object(s, r, rt, obj, false) || !try_again(r, rt, attempt, n_warnings))
            return;
    }
}

static bool patch_once(struct sim *s, struct sim_req *r, struct route *rt);

void api_do_patch(struct sim *s, struct sim_req *r, struct route *rt)
{
    int n_warnings = r->n_warnings;
    for (int attempt = 0; patch_once(s, r, rt) && try_again(r, rt, attempt, n_warnings); attempt++)
        ;
}

/* The patch applied to the object as it is now, and the update: true when it raced. */
static bool patch_once(struct sim *s, struct sim_req *r, struct route *rt)
{
    json_t *old = sim_object_get(rt->res, rt->ns, rt->name), *patch, *obj;
    const char *ct = r->content_type ? r->content_type : "";
    char e[512];
    if (!strncmp(ct, "application/apply-patch+yaml", 28) ||
        (!strncmp(ct, "application/strategic-merge-patch+json", 38) && !rt->res->builtin) ||
        (strncmp(ct, "application/json-patch+json", 27) && strncmp(ct, "application/merge-patch+json", 28) &&
         strncmp(ct, "application/strategic-merge-patch+json", 38))) {
        sim_err_set(&r->err, 415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types include: "
                    "application/json-patch+json, application/merge-patch+json%s",
                    rt->res->builtin ? ", application/strategic-merge-patch+json" : "");
        return false;
    }
    if (!old) {
        api_not_found(r, rt->res, rt->name);
        return false;
    }
    patch = api_parse_body(r);
    if (!patch)
        return false;
    obj = json_deep_copy(old);
    if (ct[12] == 'j') { /* application/json-patch+json */
        if (!json_is_array(patch)) {
            sim_err_set(&r->err, 400, "BadRequest",
                        "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
            goto fail;
        }
        if (sim_json_patch(obj, patch, e, sizeof(e)) < 0) {
            sim_err_set(&r->err, 422, "Invalid", "%s", e);
            goto fail;
        }
    } else if (ct[12] == 'm') {
        obj = sim_merge_patch(obj, patch);
    } else {
        obj = sim_strategic_patch(obj, patch);
    }
    json_decref(patch);
    return update_object(s, r, rt, obj, true);
fail:
    json_decref(patch);
    json_decref(obj);
    return false;
}

static void delete_namespace_contents(struct sim *s, const char *ns)
{
    for (int i = 0; i < s->n_res; i++) {
        struct sim_resource *res = &s->res[i];
        const char *k;
        json_t *v;
        void *tmp;
        if (!res->namespaced)
            continue;
        json_object_foreach_safe(res->objects, tmp, k, v) {
            if (!strcmp(sim_jstr(json_object_get(v, "metadata"), "namespace"), ns)) {
                char rv[32];
                json_object_set_new(json_object_get(v, "metadata"), "resourceVersion",
                                    json_string(sim_next_rv(s, rv, sizeof(rv))));
                sim_event_push(s, res, "DELETED", v);
                json_object_del(res->objects, k);
            }
        }
    }
}

void api_do_delete(struct sim *s, struct sim_req *r, struct route *rt)
{
    json_t *old = sim_object_get(rt->res, rt->ns, rt->name), *opts = NULL, *body = NULL, *oldcopy = NULL;
    char resgroup[128], resversion[64], resplural[128], key[600];
    struct sim_resource *res = rt->res;
    bool dry;
    if (r->body_len) {
        body = api_parse_body(r);
        if (!body)
            return;
    }
    dry = api_dry_run(r, body);
    if (!old) {
        api_not_found(r, res, rt->name);
        goto out;
    }
    oldcopy = json_deep_copy(old);
    opts = api_options_obj(r, "DeleteOptions", dry);
    snprintf(resgroup, sizeof(resgroup), "%s", res->group);
    snprintf(resversion, sizeof(resversion), "%s", res->version);
    snprintf(resplural, sizeof(resplural), "%s", res->plural);
    if (sim_admit(s, r, res, NULL, SIM_DELETE, rt->ns, rt->name, NULL, oldcopy, dry, opts, false) < 0 ||
        sim_admit(s, r, res, NULL, SIM_DELETE, rt->ns, rt->name, NULL, oldcopy, dry, opts, true) < 0)
        goto out;
    res = sim_resource_find(s, resgroup, resversion, resplural);
    if (!res || !sim_object_get(res, rt->ns, rt->name)) {
        if (res)
            api_not_found(r, res, rt->name);
        else
            sim_err_set(&r->err, 404, "NotFound", "the server could not find the requested resource");
        goto out;
    }
    const char *pre = sim_jstr(json_object_get(body, "preconditions"), "uid");
    const char *cur = sim_jstr(json_object_get(sim_object_get(res, rt->ns, rt->name), "metadata"), "uid");
    if (pre && (!cur || strcmp(pre, cur))) {
        sim_err_set(&r->err, 409, "Conflict", "Operation cannot be fulfilled on %s \"%s\": Precondition "
                    "failed: UID in precondition: %s, UID in object meta: %s", resplural, rt->name, pre, cur ? cur : "");
        goto out;
    }
    if (!dry) {
        char rv[32], uid[128];
        const char *prop = sim_jstr(body, "propagationPolicy");
        if (!prop)
            prop = api_qarg(r, "propagationPolicy");
        snprintf(uid, sizeof(uid), "%s", cur ? cur : "");
        snprintf(key, sizeof(key), "%s/%s", res->namespaced ? rt->ns : "", rt->name);
        /* The deletion is a change of its own: watchers see it at a new resourceVersion. */
        json_object_set_new(json_object_get(oldcopy, "metadata"), "resourceVersion",
                            json_string(sim_next_rv(s, rv, sizeof(rv))));
        sim_event_push(s, res, "DELETED", oldcopy);
        json_object_del(res->objects, key);
        if (!strcmp(resplural, "customresourcedefinitions") && !strcmp(resgroup, "apiextensions.k8s.io"))
            sim_crd_remove(s, rt->name);
        if (!strcmp(resplural, "namespaces") && !resgroup[0])
            delete_namespace_contents(s, rt->name);
        sim_gc_deleted(s, uid, prop && !strcmp(prop, "Orphan"));
    }
    /* Deletion is immediate here (no finalizers, no grace period), and so is the collection
     * of its dependents (gc.c): return the last state. */
    r->resp = json_incref(oldcopy);
    r->status = 200;
out:
    json_decref(opts);
    json_decref(body);
    json_decref(oldcopy);
}

