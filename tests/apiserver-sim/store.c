/* The resource table and the in-memory object store.
 * Objects are kept per resource in a jansson object keyed "namespace/name" (cluster-scoped:
 * "/name"), which is also the order lists are returned in, as etcd's key order would give. */
#include "sim.h"

#include <stdio.h>
#include <string.h>

struct builtin {
    const char *group, *version, *plural, *singular, *kind, *shorts;
    bool namespaced, status, generation;
};

/* The built-ins wmap and kubectl touch; short names as kube-apiserver 1.32 reports them. */
static const struct builtin builtins[] = {
    {"", "v1", "namespaces", "namespace", "Namespace", "ns", false, true, false},
    {"", "v1", "pods", "pod", "Pod", "po", true, true, false},
    {"", "v1", "nodes", "node", "Node", "no", false, true, false},
    {"", "v1", "services", "service", "Service", "svc", true, true, false},
    {"", "v1", "configmaps", "configmap", "ConfigMap", "cm", true, false, false},
    {"", "v1", "secrets", "secret", "Secret", "", true, false, false},
    {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", "sa", true, false, false},
    {"", "v1", "events", "event", "Event", "ev", true, false, false},
    {"", "v1", "endpoints", "endpoints", "Endpoints", "ep", true, false, false},
    {"apps", "v1", "deployments", "deployment", "Deployment", "deploy", true, true, true},
    {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", "sts", true, true, true},
    {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", "rs", true, true, true},
    {"batch", "v1", "jobs", "job", "Job", "", true, true, true},
    {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
     "CustomResourceDefinition", "crd,crds", false, true, true},
    {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
     "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", "", false, false, true},
    {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
     "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", "", false, false, true},
    {"coordination.k8s.io", "v1", "leases", "lease", "Lease", "", true, false, false},
    {"policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", "pdb", true, true, true},
    {"networking.k8s.io", "v1", "networkpolicies", "networkpolicy", "NetworkPolicy", "netpol", true, false, true},
    {"rbac.authorization.k8s.io", "v1", "roles", "role", "Role", "", true, false, false},
    {"rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", "", true, false, false},
    {"rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", "", false, false, false},
    {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", "", false,
     false, false},
};

void sim_builtins_register(struct sim *s)
{
    static const char *const system_ns[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
    for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
        const struct builtin *b = &builtins[i];
        struct sim_resource t;
        memset(&t, 0, sizeof(t));
        snprintf(t.group, sizeof(t.group), "%s", b->group);
        snprintf(t.version, sizeof(t.version), "%s", b->version);
        snprintf(t.plural, sizeof(t.plural), "%s", b->plural);
        snprintf(t.singular, sizeof(t.singular), "%s", b->singular);
        snprintf(t.kind, sizeof(t.kind), "%s", b->kind);
        t.namespaced = b->namespaced;
        t.has_status = b->status;
        t.has_generation = b->generation;
        t.builtin = true;
        if (!strcmp(b->group, "apps")) {
            /* Deployments, StatefulSets and ReplicaSets serve /scale. */
            t.has_scale = true;
            snprintf(t.spec_replicas_path, sizeof(t.spec_replicas_path), ".spec.replicas");
            snprintf(t.status_replicas_path, sizeof(t.status_replicas_path), ".status.replicas");
            snprintf(t.selector_path, sizeof(t.selector_path), ".spec.selector");
        }
        if (b->shorts[0]) {
            char buf[64];
            char *save = NULL, *tok;
            snprintf(buf, sizeof(buf), "%s", b->shorts);
            for (tok = strtok_r(buf, ",", &save); tok && t.n_short < 4; tok = strtok_r(NULL, ",", &save))
                snprintf(t.short_names[t.n_short++], sizeof(t.short_names[0]), "%s", tok);
        }
        sim_resource_add(s, &t);
    }
    /* The namespaces every cluster starts with. */
    for (size_t i = 0; i < sizeof(system_ns) / sizeof(system_ns[0]); i++) {
        struct sim_err err;
        memset(&err, 0, sizeof(err));
        json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                               "metadata", "name", system_ns[i]);
        sim_store_create_direct(s, ns, &err);
        json_decref(ns);
        sim_err_clear(&err);
    }
}

struct sim_resource *sim_resource_find(struct sim *s, const char *group, const char *version,
                                       const char *plural)
{
    for (int i = 0; i < s->n_res; i++) {
        struct sim_resource *r = &s->res[i];
        if (!strcmp(r->group, group) && !strcmp(r->version, version) && !strcmp(r->plural, plural))
            return r;
    }
    return NULL;
}

struct sim_resource *sim_resource_by_kind(struct sim *s, const char *apiversion, const char *kind)
{
    char group[128] = "", version[64];
    const char *slash = strchr(apiversion, '/');
    if (slash) {
        snprintf(group, sizeof(group), "%.*s", (int)(slash - apiversion), apiversion);
        snprintf(version, sizeof(version), "%s", slash + 1);
    } else {
        snprintf(version, sizeof(version), "%s", apiversion);
    }
    for (int i = 0; i < s->n_res; i++) {
        struct sim_resource *r = &s->res[i];
        if (!strcmp(r->group, group) && !strcmp(r->version, version) && !strcmp(r->kind, kind))
            return r;
    }
    return NULL;
}

struct sim_resource *sim_resource_add(struct sim *s, const struct sim_resource *tmpl)
{
    struct sim_resource *r = sim_resource_find(s, tmpl->group, tmpl->version, tmpl->plural);
    if (r) {
        /* Re-registration (CRD update): keep stored objects, refresh names and schema. */
        json_t *objects = r->objects;
        json_decref(r->schema);
        *r = *tmpl;
        r->objects = objects;
        return r;
    }
    if (s->n_res >= SIM_MAX_RESOURCES)
        return NULL;
    r = &s->res[s->n_res++];
    *r = *tmpl;
    r->objects = json_object();
    return r;
}

void sim_resource_remove(struct sim *s, struct sim_resource *r)
{
    int idx = (int)(r - s->res);
    json_decref(r->objects);
    json_decref(r->schema);
    memmove(&s->res[idx], &s->res[idx + 1], (size_t)(s->n_res - idx - 1) * sizeof(s->res[0]));
    s->n_res--;
}

void sim_qualified(const struct sim_resource *r, char *out, size_t n)
{
    if (r->group[0])
        snprintf(out, n, "%s.%s", r->plural, r->group);
    else
        snprintf(out, n, "%s", r->plural);
}

void sim_api_version(const struct sim_resource *r, char *out, size_t n)
{
    if (r->group[0])
        snprintf(out, n, "%s/%s", r->group, r->version);
    else
        snprintf(out, n, "%s", r->version);
}

json_t *sim_object_get(struct sim_resource *r, const char *ns, const char *name)
{
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", r->namespaced ? ns : "", name);
    return json_object_get(r->objects, key);
}

const char *sim_next_rv(struct sim *s, char *buf, size_t n)
{
    snprintf(buf, n, "%llu", ++s->rv);
    return buf;
}

json_t *sim_namespace_labels(struct sim *s, const char *ns)
{
    struct sim_resource *r = sim_resource_find(s, "", "v1", "namespaces");
    json_t *o = r ? sim_object_get(r, "", ns) : NULL;
    return o ? sim_jpath(o, "metadata", "labels") : NULL;
}
