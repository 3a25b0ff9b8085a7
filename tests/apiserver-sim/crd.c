/* CustomResourceDefinitions: serving a CRD's group/versions/plural as soon as it is stored,
 * and pruning custom objects against the structural schema (KEP-2332 semantics). */
#include "sim.h"

#include <stdio.h>
#include <string.h>

int sim_crd_validate(json_t *crd, struct sim_err *err)
{
    json_t *spec = json_object_get(crd, "spec");
    json_t *names = json_object_get(spec, "names");
    const char *group = sim_jstr(spec, "group"), *plural = sim_jstr(names, "plural");
    const char *kind = sim_jstr(names, "kind"), *scope = sim_jstr(spec, "scope");
    const char *name = sim_jstr(json_object_get(crd, "metadata"), "name");
    json_t *versions = json_object_get(spec, "versions");
    char want[400];
    json_t *causes = json_array();
    if (!group || !*group)
        json_array_append_new(causes, json_pack("{s:s,s:s,s:s}", "reason", "FieldValueRequired",
                                                "message", "Required value", "field", "spec.group"));
    if (!plural || !*plural)
        json_array_append_new(causes, json_pack("{s:s,s:s,s:s}", "reason", "FieldValueRequired",
                                                "message", "Required value", "field", "spec.names.plural"));
    if (!kind || !*kind)
        json_array_append_new(causes, json_pack("{s:s,s:s,s:s}", "reason", "FieldValueRequired",
                                                "message", "Required value", "field", "spec.names.kind"));
    if (!scope || (strcmp(scope, "Namespaced") && strcmp(scope, "Cluster")))
        json_array_append_new(causes, json_pack("{s:s,s:s,s:s}", "reason", "FieldValueNotSupported",
                                                "message", "Unsupported value: supported values: \"Cluster\", \"Namespaced\"",
                                                "field", "spec.scope"));
    if (!json_is_array(versions) || json_array_size(versions) == 0)
        json_array_append_new(causes, json_pack("{s:s,s:s,s:s}", "reason", "FieldValueRequired",
                                                "message", "Required value: must have exactly one version marked as storage version",
                                                "field", "spec.versions"));
    if (group && plural && name) {
        snprintf(want, sizeof(want), "%s.%s", plural, group);
        if (strcmp(want, name))
            json_array_append_new(causes, json_pack("{s:s,s:s,s:s}", "reason", "FieldValueInvalid",
                                                    "message", "Invalid value: must be spec.names.plural+\".\"+spec.group",
                                                    "field", "metadata.name"));
    }
    if (json_array_size(causes)) {
        json_t *c0 = json_array_get(causes, 0);
        sim_err_set(err, 422, "Invalid", "CustomResourceDefinition.apiextensions.k8s.io \"%s\" is invalid: %s: %s",
                    name ? name : "", sim_jstr(c0, "field"), sim_jstr(c0, "message"));
        snprintf(err->details_name, sizeof(err->details_name), "%s", name ? name : "");
        snprintf(err->details_group, sizeof(err->details_group), "apiextensions.k8s.io");
        snprintf(err->details_kind, sizeof(err->details_kind), "CustomResourceDefinition");
        err->causes = causes;
        return -1;
    }
    json_decref(causes);
    return 0;
}

void sim_crd_remove(struct sim *s, const char *crd_name)
{
    for (int i = s->n_res - 1; i >= 0; i--) {
        if (!strcmp(s->res[i].crd_name, crd_name))
            sim_resource_remove(s, &s->res[i]);
    }
}

int sim_crd_apply(struct sim *s, json_t *crd, struct sim_err *err)
{
    json_t *spec = json_object_get(crd, "spec");
    json_t *names = json_object_get(spec, "names");
    const char *crd_name = sim_jstr(json_object_get(crd, "metadata"), "name");
    json_t *versions = json_object_get(spec, "versions");
    json_t *v, *status, *accepted;
    size_t i;
    char now[40];
    json_t *kept = json_object(); /* "version" -> the stored objects of a served version */
    if (sim_crd_validate(crd, err) < 0) {
        json_decref(kept);
        return -1;
    }
    /* Versions dropped by an update stop being served; the rest are re-registered below
     * and keep their objects (an update of a CRD, even an unchanged `kubectl apply`, does
     * not delete custom resources). */
    for (int k = 0; k < s->n_res; k++)
        if (!strcmp(s->res[k].crd_name, crd_name) && s->res[k].objects)
            json_object_set(kept, s->res[k].version, s->res[k].objects);
    sim_crd_remove(s, crd_name);
    json_array_foreach(versions, i, v) {
        struct sim_resource t;
        json_t *sn, *sub;
        size_t j;
        memset(&t, 0, sizeof(t));
        if (json_is_false(json_object_get(v, "served")))
            continue;
        snprintf(t.group, sizeof(t.group), "%s", sim_jstr(spec, "group"));
        snprintf(t.version, sizeof(t.version), "%s", sim_jstr(v, "name") ? sim_jstr(v, "name") : "v1");
        snprintf(t.plural, sizeof(t.plural), "%s", sim_jstr(names, "plural"));
        snprintf(t.kind, sizeof(t.kind), "%s", sim_jstr(names, "kind"));
        if (sim_jstr(names, "singular"))
            snprintf(t.singular, sizeof(t.singular), "%s", sim_jstr(names, "singular"));
        else {
            /* The real default: the lower-cased kind. */
            for (j = 0; t.kind[j] && j + 1 < sizeof(t.singular); j++)
                t.singular[j] = (char)((t.kind[j] >= 'A' && t.kind[j] <= 'Z') ? t.kind[j] + 32 : t.kind[j]);
        }
        sn = json_object_get(names, "shortNames");
        for (j = 0; j < json_array_size(sn) && t.n_short < 4; j++)
            if (json_is_string(json_array_get(sn, j)))
                snprintf(t.short_names[t.n_short++], sizeof(t.short_names[0]), "%s",
                         json_string_value(json_array_get(sn, j)));
        t.namespaced = !strcmp(sim_jstr(spec, "scope"), "Namespaced");
        sub = json_object_get(v, "subresources");
        t.has_status = json_object_get(sub, "status") != NULL;
        if (json_is_object(json_object_get(sub, "scale"))) {
            json_t *sc = json_object_get(sub, "scale");
            t.has_scale = true;
            snprintf(t.spec_replicas_path, sizeof(t.spec_replicas_path), "%s",
                     sim_jstr(sc, "specReplicasPath") ? sim_jstr(sc, "specReplicasPath") : ".spec.replicas");
            snprintf(t.status_replicas_path, sizeof(t.status_replicas_path), "%s",
                     sim_jstr(sc, "statusReplicasPath") ? sim_jstr(sc, "statusReplicasPath") : ".status.replicas");
            snprintf(t.selector_path, sizeof(t.selector_path), "%s",
                     sim_jstr(sc, "labelSelectorPath") ? sim_jstr(sc, "labelSelectorPath") : "");
        }
        t.has_generation = true;
        t.builtin = false;
        t.schema = json_deep_copy(sim_jpath(json_object_get(v, "schema"), "openAPIV3Schema", NULL));
        snprintf(t.crd_name, sizeof(t.crd_name), "%s", crd_name);
        {
            struct sim_resource *added = sim_resource_add(s, &t);
            json_t *old = json_object_get(kept, t.version);
            if (!added) {
                json_decref(t.schema);
                json_decref(kept);
                sim_err_set(err, 500, "InternalError", "Internal error occurred: too many resources");
                return -1;
            }
            if (old && json_object_size(old) > 0) {
                json_decref(added->objects);
                added->objects = json_incref(old);
            }
        }
    }
    /* The real apiextensions controller marks the CRD accepted and established within
     * moments; we do it at once so `kubectl wait --for condition=established` returns. */
    sim_now_rfc3339(now, sizeof(now));
    accepted = json_deep_copy(names);
    if (!sim_jstr(accepted, "singular"))
        json_object_set_new(accepted, "singular", json_string(""));
    if (!json_object_get(accepted, "listKind")) {
        char lk[160];
        snprintf(lk, sizeof(lk), "%sList", sim_jstr(names, "kind"));
        json_object_set_new(accepted, "listKind", json_string(lk));
    }
    status = json_pack("{s:[{s:s,s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s,s:s}], s:o, s:[]}",
                       "conditions",
                       "type", "NamesAccepted", "status", "True", "lastTransitionTime", now,
                       "reason", "NoConflicts", "message", "no conflicts found",
                       "type", "Established", "status", "True", "lastTransitionTime", now,
                       "reason", "InitialNamesAccepted", "message", "the initial names have been accepted",
                       "acceptedNames", accepted, "storedVersions");
    json_array_foreach(versions, i, v) {
        if (json_is_true(json_object_get(v, "storage")))
            json_array_append(json_object_get(status, "storedVersions"), json_object_get(v, "name"));
    }
    json_object_set_new(crd, "status", status);
    json_decref(kept);
    return 0;
}

/* ObjectMeta fields: at the root (and in x-kubernetes-embedded-resource objects) metadata is
 * always decoded as ObjectMeta, whatever the schema says, so these survive and others go. */
static const char *const objectmeta_fields[] = {
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields", NULL};

static void path_join(char *out, size_t n, const char *base, const char *key)
{
    /* Paths only feed messages: a truncated one is still a useful one. */
    int w = base[0] ? snprintf(out, n, "%s.%s", base, key) : snprintf(out, n, "%s", key);
    if (w < 0 || (size_t)w >= n)
        out[n - 1] = '\0';
}

static void prune_value(json_t *v, const json_t *schema, const char *path, json_t *pruned, bool root);

static void prune_meta(json_t *meta, const char *path, json_t *pruned)
{
    const char *k;
    json_t *c;
    void *tmp;
    if (!json_is_object(meta))
        return;
    json_object_foreach_safe(meta, tmp, k, c) {
        bool ok = false;
        for (int i = 0; objectmeta_fields[i]; i++)
            if (!strcmp(k, objectmeta_fields[i]))
                ok = true;
        if (!ok) {
            char p[1024];
            path_join(p, sizeof(p), path, k);
            if (pruned)
                json_array_append_new(pruned, json_string(p));
            json_object_del(meta, k);
        }
    }
}

static void prune_value(json_t *v, const json_t *schema, const char *path, json_t *pruned, bool root)
{
    const json_t *props, *addl, *items;
    bool preserve;
    if (!schema)
        return;
    props = json_object_get(schema, "properties");
    addl = json_object_get(schema, "additionalProperties");
    items = json_object_get(schema, "items");
    preserve = json_is_true(json_object_get(schema, "x-kubernetes-preserve-unknown-fields"));
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        void *tmp;
        bool embedded = root || json_is_true(json_object_get(schema, "x-kubernetes-embedded-resource"));
        json_object_foreach_safe(v, tmp, k, c) {
            char p[1024];
            const json_t *ps = json_object_get(props, k);
            path_join(p, sizeof(p), path, k);
            if (embedded && (!strcmp(k, "apiVersion") || !strcmp(k, "kind")))
                continue;
            if (embedded && !strcmp(k, "metadata")) {
                prune_meta(c, p, pruned);
                continue;
            }
            if (ps) {
                prune_value(c, ps, p, pruned, false);
            } else if (json_is_object(addl)) {
                prune_value(c, addl, p, pruned, false);
            } else if (preserve || json_is_true(addl)) {
                continue;
            } else {
                /* Not described: this is where a bare `metadata: {type: object}` inside a
                 * pod template loses its labels (kubernetes/kubernetes#103739). */
                if (pruned)
                    json_array_append_new(pruned, json_string(p));
                json_object_del(v, k);
            }
        }
    } else if (json_is_array(v) && items) {
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c) {
            char p[1024];
            if (snprintf(p, sizeof(p), "%s[%zu]", path, i) >= (int)sizeof(p))
                p[sizeof(p) - 1] = '\0';
            prune_value(c, items, p, pruned, false);
        }
    }
}

void sim_prune(json_t *obj, const json_t *schema, json_t *pruned)
{
    if (!schema)
        return;
    prune_value(obj, schema, "", pruned, true);
}

/* Structural defaulting: a `default` in the schema fills a missing field of an object that is
 * present (parents are not created unless they have a default of their own). The real server
 * defaults on request decode, on read and after mutating webhooks that patched. */
static void default_value(json_t *v, const json_t *schema, int depth)
{
    const json_t *props, *items;
    if (!schema || depth > SIM_JSON_DEPTH)
        return;
    props = json_object_get(schema, "properties");
    items = json_object_get(schema, "items");
    if (json_is_object(v) && json_is_object(props)) {
        const char *k;
        json_t *ps;
        json_object_foreach((json_t *)props, k, ps) {
            json_t *cur = json_object_get(v, k), *def = json_object_get(ps, "default");
            if (!cur && def) {
                json_object_set_new(v, k, json_deep_copy(def));
                cur = json_object_get(v, k);
            }
            if (cur)
                default_value(cur, ps, depth + 1);
        }
    } else if (json_is_object(v) && json_is_object(json_object_get(schema, "additionalProperties"))) {
        const char *k;
        json_t *c;
        json_object_foreach(v, k, c) default_value(c, json_object_get(schema, "additionalProperties"), depth + 1);
    } else if (json_is_array(v) && items) {
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c) default_value(c, items, depth + 1);
    }
}

void sim_default(json_t *obj, const json_t *schema)
{
    const json_t *props = json_object_get(schema, "properties");
    const char *k;
    json_t *ps;
    if (!schema || !json_is_object(obj))
        return;
    /* The root's apiVersion, kind and metadata are never defaulted from the schema. */
    json_object_foreach((json_t *)props, k, ps) {
        json_t *cur;
        if (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata"))
            continue;
        cur = json_object_get(obj, k);
        if (!cur && json_object_get(ps, "default")) {
            json_object_set_new(obj, k, json_deep_copy(json_object_get(ps, "default")));
            cur = json_object_get(obj, k);
        }
        if (cur)
            default_value(cur, ps, 1);
    }
}
