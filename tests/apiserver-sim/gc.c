/* Owner-reference garbage collection, as the Kubernetes documentation describes it
 * ("Garbage Collection", "Owners and Dependents"): when an object is deleted, its dependents
 * (objects whose metadata.ownerReferences name its UID) are deleted too under the
 * background (default) and foreground policies, transitively; under the orphan policy
 * the owner's reference is removed from each dependent and they stay. A dependent with
 * several owners goes only once none of them exists. An object created with owner
 * references none of which names an existing object (a dangling owner) is collected as
 * well, right after its creation (sim_gc_created). Here collection is immediate, inside the
 * request, with a DELETED event per object; real clusters do it asynchronously, so
 * clients must already cope with either order. Called with s->lock held. */
#include <string.h>
#include "sim.h"

static const char *jz(const json_t *o, const char *k)
{
    const char *v = sim_jstr(o, k);
    return v ? v : "";
}

/* Does an object with uid exist, in namespace ns or cluster-scoped? */
static bool uid_exists(struct sim *s, const char *ns, const char *uid)
{
    for (int i = 0; i < s->n_res; i++) {
        struct sim_resource *res = &s->res[i];
        const char *k;
        json_t *v;
        json_object_foreach(res->objects, k, v) {
            json_t *md = json_object_get(v, "metadata");
            if (res->namespaced && ns && strcmp(jz(md, "namespace"), ns))
                continue;
            if (!strcmp(jz(md, "uid"), uid))
                return true;
        }
    }
    return false;
}

static bool names_uid(const json_t *obj, const char *uid)
{
    size_t i;
    json_t *ref;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, ref)
        if (!strcmp(jz(ref, "uid"), uid))
            return true;
    return false;
}

static bool any_owner_alive(struct sim *s, const json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    size_t i;
    json_t *ref;
    json_array_foreach(json_object_get(md, "ownerReferences"), i, ref)
        if (uid_exists(s, jz(md, "namespace"), jz(ref, "uid")))
            return true;
    return false;
}

static void remove_object(struct sim *s, struct sim_resource *res, const char *key, json_t *v)
{
    char rv[32];
    json_t *copy = json_deep_copy(v);
    json_object_set_new(json_object_get(copy, "metadata"), "resourceVersion",
                        json_string(sim_next_rv(s, rv, sizeof(rv))));
    json_object_del(res->objects, key);
    sim_event_push(s, res, "DELETED", copy);
    char uid[128];
    snprintf(uid, sizeof(uid), "%s", jz(json_object_get(copy, "metadata"), "uid"));
    json_decref(copy);
    sim_gc_deleted(s, uid, false);
}

void sim_gc_deleted(struct sim *s, const char *uid, bool orphan)
{
    if (!uid || !uid[0])
        return;
    for (int i = 0; i < s->n_res; i++) {
        struct sim_resource *res = &s->res[i];
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(res->objects, tmp, k, v) {
            if (!names_uid(v, uid))
                continue;
            if (orphan) {
                json_t *refs = json_object_get(json_object_get(v, "metadata"), "ownerReferences");
                for (size_t j = json_array_size(refs); j-- > 0;)
                    if (!strcmp(jz(json_array_get(refs, j), "uid"), uid))
                        json_array_remove(refs, j);
                if (!json_array_size(refs))
                    json_object_del(json_object_get(v, "metadata"), "ownerReferences");
                char rv[32];
                json_object_set_new(json_object_get(v, "metadata"), "resourceVersion",
                                    json_string(sim_next_rv(s, rv, sizeof(rv))));
                sim_event_push(s, res, "MODIFIED", v);
            } else if (!any_owner_alive(s, v)) {
                char key[600];
                snprintf(key, sizeof(key), "%s", k);
                remove_object(s, res, key, v);
                /* the maps changed under the iteration: start this resource again */
                i = -1;
                break;
            }
        }
    }
}

void sim_gc_created(struct sim *s, struct sim_resource *res, const char *ns, const char *name)
{
    json_t *v = sim_object_get(res, ns, name);
    if (!v || !json_array_size(json_object_get(json_object_get(v, "metadata"), "ownerReferences")) ||
        any_owner_alive(s, v))
        return;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", res->namespaced && ns ? ns : "", name);
    remove_object(s, res, key, v);
}
