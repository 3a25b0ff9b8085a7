/* Service accounts as a real API server treats them:
 *  - TokenRequest (`POST /api/v1/namespaces/NS/serviceaccounts/NAME/token`) hands out an opaque
 *    bearer token bound to that ServiceAccount object, with an expiry; the token stops working
 *    when it expires or when the ServiceAccount is deleted.
 *  - Requests by `system:serviceaccount:NS:NAME` (a token, or an admin impersonating one) are
 *    authorized by the stored rbac.authorization.k8s.io/v1 objects: ClusterRoleBindings grant
 *    their ClusterRole everywhere, RoleBindings grant their Role or ClusterRole in their namespace.
 *    Verbs, API groups, resources (`x`, `x/sub`, `*`, `* /sub`), resourceNames. The attributes of
 *    a request are derived from its path the way kube-apiserver's RequestInfoFactory does
 *    (list/watch of one name through `fieldSelector=metadata.name=X` carry that name).
 *  - SelfSubjectAccessReview and SubjectAccessReview (`kubectl auth can-i`) answer from the same
 *    evaluation. Creating a SelfSubjectAccessReview is always allowed (the system:basic-user role
 *    of a real cluster).
 * Everyone else keeps the simulator's old two-valued authorization (admin / viewer). */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct attrs {
    bool resource_request;
    char verb[32];
    char group[128];
    char version[64];
    char resource[128];
    char sub[64];
    char ns[256];
    char name[256];
    char path[512];
};

static const char sa_prefix[] = "system:serviceaccount:";

void sim_user_classify(struct sim_user *u)
{
    u->rbac = !strncmp(u->name, sa_prefix, sizeof(sa_prefix) - 1);
}

/* ---- tokens ---- */

static long long now_s(void)
{
    return (long long)time(NULL);
}

static json_t *service_account(struct sim *s, const char *ns, const char *name)
{
    struct sim_resource *sa = sim_resource_find(s, "", "v1", "serviceaccounts");
    return sa ? sim_object_get(sa, ns, name) : NULL;
}

int sim_sa_token_user(struct sim *s, const char *token, struct sim_user *u)
{
    int rc = -1;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->n_sa_tokens; i++) {
        struct sim_sa_token *t = &s->sa_tokens[i];
        json_t *sa;
        if (strcmp(t->token, token))
            continue;
        sa = service_account(s, t->ns, t->name);
        if (t->expires <= now_s() || !sa ||
            strcmp(sim_jstr(json_object_get(sa, "metadata"), "uid") ? sim_jstr(json_object_get(sa, "metadata"), "uid") : "",
                   t->sa_uid))
            break;
        memset(u, 0, sizeof(*u));
        snprintf(u->name, sizeof(u->name), "%s%s:%s", sa_prefix, t->ns, t->name);
        snprintf(u->uid, sizeof(u->uid), "%s", t->sa_uid);
        snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "system:serviceaccounts");
        snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "system:serviceaccounts:%.100s", t->ns);
        u->rbac = true;
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Expired tokens go first; when the table is still full the oldest one is dropped. */
static struct sim_sa_token *token_slot(struct sim *s)
{
    long long now = now_s();
    int w = 0;
    for (int i = 0; i < s->n_sa_tokens; i++)
        if (s->sa_tokens[i].expires > now)
            s->sa_tokens[w++] = s->sa_tokens[i];
    s->n_sa_tokens = w;
    if (s->n_sa_tokens == SIM_MAX_SA_TOKENS) {
        memmove(&s->sa_tokens[0], &s->sa_tokens[1], (SIM_MAX_SA_TOKENS - 1) * sizeof(s->sa_tokens[0]));
        s->n_sa_tokens--;
    }
    return &s->sa_tokens[s->n_sa_tokens++];
}

static void do_token_request(struct sim *s, struct sim_req *r, const char *ns, const char *name)
{
    json_t *sa = service_account(s, ns, name), *body = NULL, *spec, *aud, *resp;
    json_int_t exp = 3600;
    struct sim_sa_token *t;
    char ts[40];
    time_t et;
    struct tm tm;
    if (strcmp(r->method, "POST")) {
        sim_err_set(&r->err, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        return;
    }
    if (!sa) {
        sim_err_set(&r->err, 404, "NotFound", "serviceaccounts \"%s\" not found", name);
        snprintf(r->err.details_name, sizeof(r->err.details_name), "%s", name);
        snprintf(r->err.details_kind, sizeof(r->err.details_kind), "serviceaccounts");
        return;
    }
    if (!(body = api_parse_body(r)))
        return;
    spec = json_object_get(body, "spec");
    if (json_is_integer(json_object_get(spec, "expirationSeconds")))
        exp = json_integer_value(json_object_get(spec, "expirationSeconds"));
    if (exp < s->cfg.token_min_expiry || exp > (json_int_t)1 << 32) {
        json_t *causes;
        sim_err_set(&r->err, 422, "Invalid",
                    "TokenRequest.authentication.k8s.io \"%s\" is invalid: spec.expirationSeconds: Invalid value: %lld: "
                    "may not specify a duration less than %ld seconds", name, (long long)exp, s->cfg.token_min_expiry);
        causes = json_pack("[{s:s,s:s,s:s}]", "reason", "FieldValueInvalid", "field", "spec.expirationSeconds",
                           "message", "may not specify a duration shorter than the server's minimum");
        r->err.causes = causes;
        snprintf(r->err.details_name, sizeof(r->err.details_name), "%s", name);
        snprintf(r->err.details_group, sizeof(r->err.details_group), "authentication.k8s.io");
        snprintf(r->err.details_kind, sizeof(r->err.details_kind), "TokenRequest");
        json_decref(body);
        return;
    }
    t = token_slot(s);
    memset(t, 0, sizeof(*t));
    memcpy(t->token, "sim-sa.", 7);
    sim_random_hex(t->token + 7, 24);
    snprintf(t->ns, sizeof(t->ns), "%s", ns);
    snprintf(t->name, sizeof(t->name), "%s", name);
    snprintf(t->sa_uid, sizeof(t->sa_uid), "%s", sim_jstr(json_object_get(sa, "metadata"), "uid"));
    t->expires = now_s() + (long long)exp;
    et = (time_t)t->expires;
    gmtime_r(&et, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    aud = json_object_get(spec, "audiences");
    resp = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:O,s:I},s:{s:s,s:s}}", "kind", "TokenRequest", "apiVersion",
                     "authentication.k8s.io/v1", "metadata", "name", name, "namespace", ns, "spec", "audiences",
                     json_is_array(aud) ? aud : json_pack("[s]", "https://kubernetes.default.svc"),
                     "expirationSeconds", exp, "status", "token", t->token, "expirationTimestamp", ts);
    if (!json_is_array(aud))
        json_decref(json_object_get(json_object_get(resp, "spec"), "audiences"));
    r->resp = resp;
    r->status = 201;
    json_decref(body);
}

/* ---- request attributes ---- */

static void request_attrs(struct sim_req *r, struct attrs *a)
{
    char buf[1024], *parts[10], *save = NULL, *tok;
    int n = 0, i = 0;
    const char *m = r->method;
    memset(a, 0, sizeof(*a));
    snprintf(a->path, sizeof(a->path), "%s", r->path);
    snprintf(buf, sizeof(buf), "%s", r->path);
    for (tok = strtok_r(buf, "/", &save); tok && n < 10; tok = strtok_r(NULL, "/", &save))
        parts[n++] = tok;
    if (n >= 3 && !strcmp(parts[0], "api")) {
        snprintf(a->version, sizeof(a->version), "%s", parts[1]);
        i = 2;
    } else if (n >= 4 && !strcmp(parts[0], "apis")) {
        snprintf(a->group, sizeof(a->group), "%s", parts[1]);
        snprintf(a->version, sizeof(a->version), "%s", parts[2]);
        i = 3;
    } else {
        snprintf(a->verb, sizeof(a->verb), "%s", !strcmp(m, "GET") ? "get" : !strcmp(m, "POST") ? "post" : "put");
        return; /* a non-resource URL (discovery, /version, /openapi) */
    }
    a->resource_request = true;
    if (!strcmp(m, "POST"))
        snprintf(a->verb, sizeof(a->verb), "create");
    else if (!strcmp(m, "PUT"))
        snprintf(a->verb, sizeof(a->verb), "update");
    else if (!strcmp(m, "PATCH"))
        snprintf(a->verb, sizeof(a->verb), "patch");
    else if (!strcmp(m, "DELETE"))
        snprintf(a->verb, sizeof(a->verb), "delete");
    else
        snprintf(a->verb, sizeof(a->verb), "get");
    if (n - i >= 1 && !strcmp(parts[i], "watch")) {
        snprintf(a->verb, sizeof(a->verb), "watch");
        i++;
    }
    if (n - i >= 2 && !strcmp(parts[i], "namespaces")) {
        snprintf(a->ns, sizeof(a->ns), "%s", parts[i + 1]);
        if (n - i > 2 && strcmp(parts[i + 2], "status") && strcmp(parts[i + 2], "finalize"))
            i += 2;
    }
    if (n - i >= 3)
        snprintf(a->sub, sizeof(a->sub), "%s", parts[i + 2]);
    if (n - i >= 2)
        snprintf(a->name, sizeof(a->name), "%s", parts[i + 1]);
    if (n - i >= 1)
        snprintf(a->resource, sizeof(a->resource), "%s", parts[i]);
    if (!a->name[0] && !strcmp(a->verb, "get")) {
        const char *w = api_qarg(r, "watch"), *fs = api_qarg(r, "fieldSelector");
        snprintf(a->verb, sizeof(a->verb), "%s", w && (!strcmp(w, "true") || !strcmp(w, "1")) ? "watch" : "list");
        /* One exact metadata.name requirement names the object for authorization. */
        if (fs && !strncmp(fs, "metadata.name=", 14) && !strchr(fs + 14, ','))
            snprintf(a->name, sizeof(a->name), "%s", fs[14] == '=' ? fs + 15 : fs + 14);
    } else if (!a->name[0] && !strcmp(a->verb, "delete")) {
        snprintf(a->verb, sizeof(a->verb), "deletecollection");
    }
}

/* ---- RBAC evaluation ---- */

static bool str_in(const json_t *arr, const char *v, bool star)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        const char *s = json_string_value(e);
        if (s && (!strcmp(s, v) || (star && !strcmp(s, "*"))))
            return true;
    }
    return false;
}

static bool rule_allows(const json_t *rule, const struct attrs *a)
{
    json_t *res = json_object_get(rule, "resources"), *names = json_object_get(rule, "resourceNames"), *e;
    char combined[200];
    size_t i;
    bool res_ok = false;
    if (!str_in(json_object_get(rule, "verbs"), a->verb, true))
        return false;
    if (!a->resource_request) {
        json_array_foreach(json_object_get(rule, "nonResourceURLs"), i, e) {
            const char *u = json_string_value(e);
            size_t ul = u ? strlen(u) : 0;
            if (u && (!strcmp(u, "*") || !strcmp(u, a->path) ||
                      (ul && u[ul - 1] == '*' && !strncmp(u, a->path, ul - 1))))
                return true;
        }
        return false;
    }
    if (!str_in(json_object_get(rule, "apiGroups"), a->group, true))
        return false;
    snprintf(combined, sizeof(combined), "%s%s%s", a->resource, a->sub[0] ? "/" : "", a->sub);
    json_array_foreach(res, i, e) {
        const char *s = json_string_value(e);
        if (!s)
            continue;
        if (!strcmp(s, "*") || !strcmp(s, combined) ||
            (a->sub[0] && !strncmp(s, "*/", 2) && !strcmp(s + 2, a->sub)))
            res_ok = true;
    }
    if (!res_ok)
        return false;
    if (json_array_size(names) == 0)
        return true;
    return a->name[0] && str_in(names, a->name, false);
}

static bool subject_matches(const json_t *subj, const struct sim_user *u, const char *binding_ns)
{
    const char *kind = sim_jstr(subj, "kind"), *name = sim_jstr(subj, "name");
    if (!kind || !name)
        return false;
    if (!strcmp(kind, "User"))
        return !strcmp(name, u->name);
    if (!strcmp(kind, "Group")) {
        for (int i = 0; i < u->n_groups; i++)
            if (!strcmp(u->groups[i], name))
                return true;
        return false;
    }
    if (!strcmp(kind, "ServiceAccount")) {
        char full[600];
        const char *ns = sim_jstr(subj, "namespace");
        if (!ns)
            ns = binding_ns ? binding_ns : "";
        snprintf(full, sizeof(full), "%s%s:%s", sa_prefix, ns, name);
        return !strcmp(full, u->name);
    }
    return false;
}

static bool role_allows(struct sim *s, const json_t *roleref, const char *binding_ns, const struct attrs *a)
{
    const char *kind = sim_jstr(roleref, "kind"), *name = sim_jstr(roleref, "name");
    struct sim_resource *rr;
    json_t *role, *rule;
    size_t i;
    if (!kind || !name)
        return false;
    if (!strcmp(kind, "ClusterRole"))
        rr = sim_resource_find(s, "rbac.authorization.k8s.io", "v1", "clusterroles");
    else if (!strcmp(kind, "Role") && binding_ns)
        rr = sim_resource_find(s, "rbac.authorization.k8s.io", "v1", "roles");
    else
        return false;
    role = rr ? sim_object_get(rr, binding_ns ? binding_ns : "", name) : NULL;
    json_array_foreach(json_object_get(role, "rules"), i, rule) if (rule_allows(rule, a)) return true;
    return false;
}

static bool bindings_allow(struct sim *s, const char *plural, const struct sim_user *u, const struct attrs *a)
{
    struct sim_resource *br = sim_resource_find(s, "rbac.authorization.k8s.io", "v1", plural);
    bool cluster = !strcmp(plural, "clusterrolebindings");
    const char *key;
    json_t *b;
    if (!br)
        return false;
    json_object_foreach(br->objects, key, b) {
        const char *bns = cluster ? NULL : sim_jstr(json_object_get(b, "metadata"), "namespace");
        json_t *subj;
        size_t i;
        bool match = false;
        if (!cluster && (!bns || strcmp(bns, a->ns)))
            continue; /* a RoleBinding grants only inside its namespace */
        json_array_foreach(json_object_get(b, "subjects"), i, subj) match = match || subject_matches(subj, u, bns);
        if (!match)
            continue;
        /* A RoleBinding to a ClusterRole grants that role's rules in the binding's namespace. */
        if (role_allows(s, json_object_get(b, "roleRef"), cluster ? NULL : bns, a))
            return true;
    }
    return false;
}

static bool always_allowed(const struct attrs *a)
{
    /* system:discovery, system:public-info-viewer and system:basic-user of a real cluster. */
    if (!a->resource_request)
        return !strcmp(a->verb, "get");
    return !strcmp(a->group, "authorization.k8s.io") && !strcmp(a->verb, "create") &&
           (!strcmp(a->resource, "selfsubjectaccessreviews") || !strcmp(a->resource, "selfsubjectrulesreviews"));
}

static bool user_allowed(struct sim *s, const struct sim_user *u, const struct attrs *a)
{
    if (always_allowed(a))
        return true;
    if (u->rbac)
        return bindings_allow(s, "clusterrolebindings", u, a) || (a->ns[0] && bindings_allow(s, "rolebindings", u, a));
    if (u->read_only)
        return !a->resource_request || !strcmp(a->verb, "get") || !strcmp(a->verb, "list") ||
               !strcmp(a->verb, "watch");
    return true;
}

static void forbidden(struct sim_req *r, const struct attrs *a)
{
    char subject[600], reason[900], res[200];
    if (!a->resource_request) {
        sim_err_set(&r->err, 403, "Forbidden", "forbidden: User \"%s\" cannot %s path \"%s\"", r->user.name, a->verb,
                    a->path);
        return;
    }
    if (a->group[0])
        snprintf(subject, sizeof(subject), "%s.%s", a->resource, a->group);
    else
        snprintf(subject, sizeof(subject), "%s", a->resource);
    if (a->name[0]) {
        size_t l = strlen(subject);
        snprintf(subject + l, sizeof(subject) - l, " \"%s\"", a->name);
    }
    snprintf(res, sizeof(res), "%s%s%s", a->resource, a->sub[0] ? "/" : "", a->sub);
    if (a->ns[0])
        snprintf(reason, sizeof(reason), "User \"%s\" cannot %s resource \"%s\" in API group \"%s\" in the namespace \"%s\"",
                 r->user.name, a->verb, res, a->group, a->ns);
    else
        snprintf(reason, sizeof(reason), "User \"%s\" cannot %s resource \"%s\" in API group \"%s\" at the cluster scope",
                 r->user.name, a->verb, res, a->group);
    sim_err_set(&r->err, 403, "Forbidden", "%s is forbidden: %s", subject, reason);
    snprintf(r->err.details_name, sizeof(r->err.details_name), "%s", a->name);
    snprintf(r->err.details_group, sizeof(r->err.details_group), "%s", a->group);
    snprintf(r->err.details_kind, sizeof(r->err.details_kind), "%s", a->resource);
}

/* ---- access reviews ---- */

static void attrs_from_review(const json_t *spec, struct attrs *a)
{
    json_t *ra = json_object_get(spec, "resourceAttributes"), *nra = json_object_get(spec, "nonResourceAttributes");
    memset(a, 0, sizeof(*a));
#define CP(field, key, obj) snprintf(a->field, sizeof(a->field), "%s", sim_jstr(obj, key) ? sim_jstr(obj, key) : "")
    if (json_is_object(ra)) {
        a->resource_request = true;
        CP(verb, "verb", ra);
        CP(group, "group", ra);
        CP(version, "version", ra);
        CP(resource, "resource", ra);
        CP(sub, "subresource", ra);
        CP(ns, "namespace", ra);
        CP(name, "name", ra);
    } else {
        CP(verb, "verb", nra);
        CP(path, "path", nra);
    }
#undef CP
}

static void do_access_review(struct sim *s, struct sim_req *r, bool self)
{
    json_t *body = api_parse_body(r), *spec, *resp, *g;
    struct sim_user subject;
    struct attrs a;
    bool allowed;
    size_t i;
    if (!body)
        return;
    spec = json_object_get(body, "spec");
    if (!json_is_object(spec) || (!json_is_object(json_object_get(spec, "resourceAttributes")) &&
                                  !json_is_object(json_object_get(spec, "nonResourceAttributes")))) {
        sim_err_set(&r->err, 422, "Invalid", "%sSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
                    "spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or "
                    "resourceAttributes must be specified", self ? "Self" : "");
        json_decref(body);
        return;
    }
    if (self) {
        subject = r->user;
    } else {
        memset(&subject, 0, sizeof(subject));
        snprintf(subject.name, sizeof(subject.name), "%s", sim_jstr(spec, "user") ? sim_jstr(spec, "user") : "");
        json_array_foreach(json_object_get(spec, "groups"), i, g) if (json_is_string(g) && subject.n_groups < 8)
            snprintf(subject.groups[subject.n_groups++], sizeof(subject.groups[0]), "%.127s", json_string_value(g));
        sim_user_classify(&subject);
        for (int k = 0; k < subject.n_groups; k++) {
            if (!strcmp(subject.groups[k], "system:masters"))
                subject.rbac = false;
            if (!strcmp(subject.groups[k], "sim:viewers"))
                subject.read_only = true;
        }
        subject.read_only = subject.read_only || !strcmp(subject.name, "sim-viewer");
    }
    attrs_from_review(spec, &a);
    allowed = user_allowed(s, &subject, &a);
    resp = json_deep_copy(body);
    json_object_set_new(resp, "apiVersion", json_string("authorization.k8s.io/v1"));
    json_object_set_new(resp, "kind", json_string(self ? "SelfSubjectAccessReview" : "SubjectAccessReview"));
    if (!json_is_object(json_object_get(resp, "metadata")))
        json_object_set_new(resp, "metadata", json_object());
    json_object_set_new(resp, "status",
                        allowed ? json_pack("{s:b,s:s}", "allowed", 1, "reason",
                                            subject.rbac ? "RBAC: allowed by a role binding" : "allowed")
                                : json_pack("{s:b}", "allowed", 0));
    r->resp = resp;
    r->status = 201;
    json_decref(body);
}

/* The rules that apply to the user in a namespace: what `kubectl auth can-i --list` prints. */
static void collect_rules(struct sim *s, const char *plural, const struct sim_user *u, const char *ns, json_t *out)
{
    struct sim_resource *br = sim_resource_find(s, "rbac.authorization.k8s.io", "v1", plural);
    bool cluster = !strcmp(plural, "clusterrolebindings");
    const char *key;
    json_t *b;
    if (!br)
        return;
    json_object_foreach(br->objects, key, b) {
        const char *bns = cluster ? NULL : sim_jstr(json_object_get(b, "metadata"), "namespace");
        json_t *subj, *ref = json_object_get(b, "roleRef"), *role, *rule;
        struct sim_resource *rr;
        size_t i;
        bool match = false;
        if (!cluster && (!bns || strcmp(bns, ns)))
            continue;
        json_array_foreach(json_object_get(b, "subjects"), i, subj) match = match || subject_matches(subj, u, bns);
        if (!match || !sim_jstr(ref, "kind") || !sim_jstr(ref, "name"))
            continue;
        rr = sim_resource_find(s, "rbac.authorization.k8s.io", "v1",
                               !strcmp(sim_jstr(ref, "kind"), "ClusterRole") ? "clusterroles" : "roles");
        role = rr ? sim_object_get(rr, !strcmp(sim_jstr(ref, "kind"), "ClusterRole") ? "" : bns, sim_jstr(ref, "name"))
                  : NULL;
        json_array_foreach(json_object_get(role, "rules"), i, rule) json_array_append(out, rule);
    }
}

static void do_rules_review(struct sim *s, struct sim_req *r)
{
    json_t *body = api_parse_body(r), *rules, *res_rules, *nonres, *rule, *resp;
    const char *ns;
    size_t i;
    if (!body)
        return;
    ns = sim_jstr(json_object_get(body, "spec"), "namespace");
    rules = json_array();
    res_rules = json_array();
    nonres = json_array();
    if (r->user.rbac) {
        collect_rules(s, "clusterrolebindings", &r->user, ns ? ns : "", rules);
        if (ns && *ns)
            collect_rules(s, "rolebindings", &r->user, ns, rules);
    } else {
        json_array_append_new(rules, json_pack("{s:[s],s:[s],s:[s]}", "verbs", r->user.read_only ? "get" : "*",
                                               "apiGroups", "*", "resources", "*"));
        if (r->user.read_only) {
            json_t *v = json_object_get(json_array_get(rules, 0), "verbs");
            json_array_append_new(v, json_string("list"));
            json_array_append_new(v, json_string("watch"));
        }
    }
    /* What system:basic-user and system:discovery give every authenticated user. */
    json_array_append_new(res_rules, json_pack("{s:[s],s:[s],s:[s,s]}", "verbs", "create", "apiGroups",
                                               "authorization.k8s.io", "resources", "selfsubjectaccessreviews",
                                               "selfsubjectrulesreviews"));
    json_array_append_new(nonres, json_pack("{s:[s],s:[s,s,s,s,s,s,s,s,s]}", "verbs", "get", "nonResourceURLs", "/api",
                                            "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi/*",
                                            "/readyz", "/version"));
    json_array_foreach(rules, i, rule) {
        json_t *c = json_deep_copy(rule);
        if (json_object_get(c, "nonResourceURLs")) {
            json_array_append_new(nonres, json_pack("{s:O,s:O}", "verbs", json_object_get(c, "verbs"),
                                                    "nonResourceURLs", json_object_get(c, "nonResourceURLs")));
            json_decref(c);
        } else {
            json_array_append_new(res_rules, c);
        }
    }
    resp = json_pack("{s:s,s:s,s:{},s:O,s:{s:o,s:o,s:b}}", "kind", "SelfSubjectRulesReview", "apiVersion",
                     "authorization.k8s.io/v1", "metadata", "spec", json_object_get(body, "spec"), "status",
                     "resourceRules", res_rules, "nonResourceRules", nonres, "incomplete", 0);
    r->resp = resp;
    r->status = 201;
    json_decref(rules);
    json_decref(body);
}

bool sim_rbac_handle(struct sim *s, struct sim_req *r)
{
    struct attrs a;
    request_attrs(r, &a);
    if ((r->user.rbac || r->user.read_only) && !user_allowed(s, &r->user, &a)) {
        forbidden(r, &a);
        return true;
    }
    if (!a.resource_request)
        return false;
    if (!a.group[0] && !strcmp(a.resource, "serviceaccounts") && !strcmp(a.sub, "token") && a.name[0] && a.ns[0]) {
        do_token_request(s, r, a.ns, a.name);
        return true;
    }
    if (!strcmp(a.group, "authorization.k8s.io") && !strcmp(a.version, "v1") && !a.ns[0] && !a.name[0]) {
        bool self = !strcmp(a.resource, "selfsubjectaccessreviews");
        bool rules = !strcmp(a.resource, "selfsubjectrulesreviews");
        if (self || rules || !strcmp(a.resource, "subjectaccessreviews")) {
            if (strcmp(r->method, "POST"))
                sim_err_set(&r->err, 405, "MethodNotAllowed",
                            "the server does not allow this method on the requested resource");
            else if (rules)
                do_rules_review(s, r);
            else
                do_access_review(s, r, self);
            return true;
        }
    }
    return false;
}
