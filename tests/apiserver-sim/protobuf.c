/* Protobuf request bodies → JSON, for the objects kubectl's generator commands send
 * (`kubectl create namespace|configmap|secret|deployment|job|service`, `kubectl run`).
 * client-go's typed clients send `application/vnd.kubernetes.protobuf`: the bytes "k8s\0"
 * then a runtime.Unknown {typeMeta{apiVersion=1,kind=2}=1, raw=2, contentEncoding=3,
 * contentType=4} whose raw is the object's gogo-protobuf encoding (field numbers from
 * k8s.io/api generated.proto). Only the fields in the tables below are understood; any
 * other field makes the request fail loudly (415) rather than lose data silently.
 * gogo writes non-pointer scalars even when zero, so zero values of those are dropped (JSON
 * `omitempty`); pointer fields (replicas, parallelism, ...) keep their zeros. */
#include "sim.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum ptype {
    PT_STR,      /* string, omitted when empty */
    PT_INT,      /* varint, omitted when 0 */
    PT_INTP,     /* pointer varint: kept when 0 */
    PT_BOOL,     /* omitted when false */
    PT_BOOLP,    /* pointer bool */
    PT_MSG,      /* embedded message */
    PT_MAPSS,    /* map<string,string> */
    PT_MAPSB,    /* map<string,bytes> → base64 strings */
    PT_MAPSQ,    /* map<string,Quantity> */
    PT_TIME,     /* meta.v1.Time {seconds=1,nanos=2} → RFC 3339, omitted when zero */
    PT_INTORSTR, /* util.intstr.IntOrString {type=1,intVal=2,strVal=3} */
};

struct pmsg;
struct pfield {
    int num;
    const char *name;
    enum ptype t;
    bool repeated;
    const struct pmsg *msg;
};
struct pmsg {
    const char *name;
    const struct pfield *f;
};

#define END {0, NULL, PT_STR, false, NULL}

static const struct pmsg m_objectmeta, m_labelselector, m_podtemplate, m_empty;

/* Status stanzas: the server resets them on create, so their fields are skipped unread. */
static const struct pmsg m_empty = {"(status)", NULL};

static const struct pfield f_objectmeta[] = {
    {1, "name", PT_STR, false, NULL},         {2, "generateName", PT_STR, false, NULL},
    {3, "namespace", PT_STR, false, NULL},    {4, "selfLink", PT_STR, false, NULL},
    {5, "uid", PT_STR, false, NULL},          {6, "resourceVersion", PT_STR, false, NULL},
    {7, "generation", PT_INT, false, NULL},   {8, "creationTimestamp", PT_TIME, false, NULL},
    {9, "deletionTimestamp", PT_TIME, false, NULL}, {11, "labels", PT_MAPSS, false, NULL},
    {12, "annotations", PT_MAPSS, false, NULL}, {14, "finalizers", PT_STR, true, NULL},
    END};
static const struct pmsg m_objectmeta = {"ObjectMeta", f_objectmeta};

static const struct pfield f_ns_spec[] = {{1, "finalizers", PT_STR, true, NULL}, END};
static const struct pmsg m_ns_spec = {"NamespaceSpec", f_ns_spec};
static const struct pfield f_ns_status[] = {{1, "phase", PT_STR, false, NULL}, END};
static const struct pmsg m_ns_status = {"NamespaceStatus", f_ns_status};
static const struct pfield f_namespace[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                            {2, "spec", PT_MSG, false, &m_ns_spec},
                                            {3, "status", PT_MSG, false, &m_ns_status}, END};

static const struct pfield f_configmap[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                            {2, "data", PT_MAPSS, false, NULL},
                                            {3, "binaryData", PT_MAPSB, false, NULL},
                                            {4, "immutable", PT_BOOLP, false, NULL}, END};

static const struct pfield f_secret[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                         {2, "data", PT_MAPSB, false, NULL},
                                         {3, "type", PT_STR, false, NULL},
                                         {4, "stringData", PT_MAPSS, false, NULL},
                                         {5, "immutable", PT_BOOLP, false, NULL}, END};

static const struct pfield f_port[] = {{1, "name", PT_STR, false, NULL},   {2, "hostPort", PT_INT, false, NULL},
                                       {3, "containerPort", PT_INT, false, NULL}, {4, "protocol", PT_STR, false, NULL},
                                       {5, "hostIP", PT_STR, false, NULL}, END};
static const struct pmsg m_port = {"ContainerPort", f_port};
static const struct pfield f_env[] = {{1, "name", PT_STR, false, NULL}, {2, "value", PT_STR, false, NULL}, END};
static const struct pmsg m_env = {"EnvVar", f_env};
static const struct pfield f_resources[] = {{1, "limits", PT_MAPSQ, false, NULL},
                                            {2, "requests", PT_MAPSQ, false, NULL}, END};
static const struct pmsg m_resources = {"ResourceRequirements", f_resources};
static const struct pfield f_container[] = {
    {1, "name", PT_STR, false, NULL},       {2, "image", PT_STR, false, NULL},
    {3, "command", PT_STR, true, NULL},     {4, "args", PT_STR, true, NULL},
    {5, "workingDir", PT_STR, false, NULL}, {6, "ports", PT_MSG, true, &m_port},
    {7, "env", PT_MSG, true, &m_env},       {8, "resources", PT_MSG, false, &m_resources},
    {13, "terminationMessagePath", PT_STR, false, NULL}, {14, "imagePullPolicy", PT_STR, false, NULL},
    {16, "stdin", PT_BOOL, false, NULL},    {17, "stdinOnce", PT_BOOL, false, NULL},
    {18, "tty", PT_BOOL, false, NULL},      {20, "terminationMessagePolicy", PT_STR, false, NULL},
    END};
static const struct pmsg m_container = {"Container", f_container};
static const struct pfield f_podspec[] = {
    {2, "containers", PT_MSG, true, &m_container}, {3, "restartPolicy", PT_STR, false, NULL},
    {4, "terminationGracePeriodSeconds", PT_INTP, false, NULL}, {5, "activeDeadlineSeconds", PT_INTP, false, NULL},
    {6, "dnsPolicy", PT_STR, false, NULL},       {7, "nodeSelector", PT_MAPSS, false, NULL},
    {8, "serviceAccountName", PT_STR, false, NULL}, {9, "serviceAccount", PT_STR, false, NULL},
    {10, "nodeName", PT_STR, false, NULL},      {11, "hostNetwork", PT_BOOL, false, NULL},
    {12, "hostPID", PT_BOOL, false, NULL},      {13, "hostIPC", PT_BOOL, false, NULL},
    {16, "hostname", PT_STR, false, NULL},       {17, "subdomain", PT_STR, false, NULL},
    {19, "schedulerName", PT_STR, false, NULL},  {20, "initContainers", PT_MSG, true, &m_container},
    {24, "priorityClassName", PT_STR, false, NULL}, END};
static const struct pmsg m_podspec = {"PodSpec", f_podspec};
static const struct pfield f_podstatus[] = {{1, "phase", PT_STR, false, NULL}, END};
static const struct pmsg m_podstatus = {"PodStatus", f_podstatus};
static const struct pfield f_pod[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                      {2, "spec", PT_MSG, false, &m_podspec},
                                      {3, "status", PT_MSG, false, &m_podstatus}, END};
static const struct pfield f_podtemplate[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                              {2, "spec", PT_MSG, false, &m_podspec}, END};
static const struct pmsg m_podtemplate = {"PodTemplateSpec", f_podtemplate};

static const struct pfield f_labelselector[] = {{1, "matchLabels", PT_MAPSS, false, NULL}, END};
static const struct pmsg m_labelselector = {"LabelSelector", f_labelselector};
static const struct pfield f_strategy[] = {{1, "type", PT_STR, false, NULL}, END};
static const struct pmsg m_strategy = {"DeploymentStrategy", f_strategy};
static const struct pfield f_deployspec[] = {
    {1, "replicas", PT_INTP, false, NULL},          {2, "selector", PT_MSG, false, &m_labelselector},
    {3, "template", PT_MSG, false, &m_podtemplate}, {4, "strategy", PT_MSG, false, &m_strategy},
    {5, "minReadySeconds", PT_INT, false, NULL},    {6, "revisionHistoryLimit", PT_INTP, false, NULL},
    {7, "paused", PT_BOOL, false, NULL},            {9, "progressDeadlineSeconds", PT_INTP, false, NULL}, END};
static const struct pmsg m_deployspec = {"DeploymentSpec", f_deployspec};
static const struct pfield f_deployment[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                             {2, "spec", PT_MSG, false, &m_deployspec},
                                             {3, "status", PT_MSG, false, &m_empty}, END};

static const struct pfield f_jobspec[] = {
    {1, "parallelism", PT_INTP, false, NULL},       {2, "completions", PT_INTP, false, NULL},
    {3, "activeDeadlineSeconds", PT_INTP, false, NULL}, {4, "selector", PT_MSG, false, &m_labelselector},
    {5, "manualSelector", PT_BOOLP, false, NULL},   {6, "template", PT_MSG, false, &m_podtemplate},
    {7, "backoffLimit", PT_INTP, false, NULL},      {8, "ttlSecondsAfterFinished", PT_INTP, false, NULL},
    {9, "completionMode", PT_STR, false, NULL},     {10, "suspend", PT_BOOLP, false, NULL}, END};
static const struct pmsg m_jobspec = {"JobSpec", f_jobspec};
static const struct pfield f_job[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                      {2, "spec", PT_MSG, false, &m_jobspec},
                                      {3, "status", PT_MSG, false, &m_empty}, END};

static const struct pfield f_svcport[] = {{1, "name", PT_STR, false, NULL},     {2, "protocol", PT_STR, false, NULL},
                                          {3, "port", PT_INT, false, NULL},     {4, "targetPort", PT_INTORSTR, false, NULL},
                                          {5, "nodePort", PT_INT, false, NULL}, END};
static const struct pmsg m_svcport = {"ServicePort", f_svcport};
static const struct pfield f_svcspec[] = {{1, "ports", PT_MSG, true, &m_svcport}, {2, "selector", PT_MAPSS, false, NULL},
                                          {3, "clusterIP", PT_STR, false, NULL}, {4, "type", PT_STR, false, NULL},
                                          {7, "sessionAffinity", PT_STR, false, NULL},
                                          {8, "loadBalancerIP", PT_STR, false, NULL},
                                          {10, "externalName", PT_STR, false, NULL},
                                          {11, "externalTrafficPolicy", PT_STR, false, NULL},
                                          {12, "healthCheckNodePort", PT_INT, false, NULL},
                                          {13, "publishNotReadyAddresses", PT_BOOL, false, NULL}, END};
static const struct pmsg m_svcspec = {"ServiceSpec", f_svcspec};
static const struct pfield f_lbstatus[] = {END};
static const struct pmsg m_lbstatus = {"LoadBalancerStatus", f_lbstatus};
static const struct pfield f_svcstatus[] = {{1, "loadBalancer", PT_MSG, false, &m_lbstatus}, END};
static const struct pmsg m_svcstatus = {"ServiceStatus", f_svcstatus};
static const struct pfield f_service[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                          {2, "spec", PT_MSG, false, &m_svcspec},
                                          {3, "status", PT_MSG, false, &m_svcstatus}, END};

/* `kubectl create token` (authentication.k8s.io/v1 TokenRequest). */
static const struct pfield f_boundref[] = {{1, "kind", PT_STR, false, NULL}, {2, "apiVersion", PT_STR, false, NULL},
                                           {3, "name", PT_STR, false, NULL}, {4, "uid", PT_STR, false, NULL}, END};
static const struct pmsg m_boundref = {"BoundObjectReference", f_boundref};
static const struct pfield f_tokenspec[] = {{1, "audiences", PT_STR, true, NULL},
                                            {3, "boundObjectRef", PT_MSG, false, &m_boundref},
                                            {4, "expirationSeconds", PT_INTP, false, NULL}, END};
static const struct pmsg m_tokenspec = {"TokenRequestSpec", f_tokenspec};
static const struct pfield f_tokenrequest[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                               {2, "spec", PT_MSG, false, &m_tokenspec},
                                               {3, "status", PT_MSG, false, &m_empty}, END};

/* `kubectl auth can-i` (authorization.k8s.io/v1 SelfSubjectAccessReview, SubjectAccessReview). */
static const struct pfield f_resattrs[] = {{1, "namespace", PT_STR, false, NULL}, {2, "verb", PT_STR, false, NULL},
                                           {3, "group", PT_STR, false, NULL},     {4, "version", PT_STR, false, NULL},
                                           {5, "resource", PT_STR, false, NULL},  {6, "subresource", PT_STR, false, NULL},
                                           {7, "name", PT_STR, false, NULL},      END};
static const struct pmsg m_resattrs = {"ResourceAttributes", f_resattrs};
static const struct pfield f_nonresattrs[] = {{1, "path", PT_STR, false, NULL}, {2, "verb", PT_STR, false, NULL}, END};
static const struct pmsg m_nonresattrs = {"NonResourceAttributes", f_nonresattrs};
static const struct pfield f_ssarspec[] = {{1, "resourceAttributes", PT_MSG, false, &m_resattrs},
                                           {2, "nonResourceAttributes", PT_MSG, false, &m_nonresattrs}, END};
static const struct pmsg m_ssarspec = {"SelfSubjectAccessReviewSpec", f_ssarspec};
static const struct pfield f_ssar[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                       {2, "spec", PT_MSG, false, &m_ssarspec},
                                       {3, "status", PT_MSG, false, &m_empty}, END};
static const struct pfield f_sarspec[] = {{1, "resourceAttributes", PT_MSG, false, &m_resattrs},
                                          {2, "nonResourceAttributes", PT_MSG, false, &m_nonresattrs},
                                          {3, "user", PT_STR, false, NULL},
                                          {4, "groups", PT_STR, true, NULL},
                                          {6, "uid", PT_STR, false, NULL}, END};
static const struct pmsg m_sarspec = {"SubjectAccessReviewSpec", f_sarspec};
static const struct pfield f_sar[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                      {2, "spec", PT_MSG, false, &m_sarspec},
                                      {3, "status", PT_MSG, false, &m_empty}, END};

static const struct pfield f_ssrrspec[] = {{1, "namespace", PT_STR, false, NULL}, END};
static const struct pmsg m_ssrrspec = {"SelfSubjectRulesReviewSpec", f_ssrrspec};
static const struct pfield f_ssrr[] = {{1, "metadata", PT_MSG, false, &m_objectmeta},
                                       {2, "spec", PT_MSG, false, &m_ssrrspec},
                                       {3, "status", PT_MSG, false, &m_empty}, END};

static const struct {
    const char *apiversion, *kind;
    struct pmsg msg;
} top[] = {
    {"authorization.k8s.io/v1", "SelfSubjectRulesReview", {"SelfSubjectRulesReview", f_ssrr}},
    {"authentication.k8s.io/v1", "TokenRequest", {"TokenRequest", f_tokenrequest}},
    {"authorization.k8s.io/v1", "SelfSubjectAccessReview", {"SelfSubjectAccessReview", f_ssar}},
    {"authorization.k8s.io/v1", "SubjectAccessReview", {"SubjectAccessReview", f_sar}},
    {"v1", "Namespace", {"Namespace", f_namespace}},
    {"v1", "ConfigMap", {"ConfigMap", f_configmap}},
    {"v1", "Secret", {"Secret", f_secret}},
    {"v1", "Pod", {"Pod", f_pod}},
    {"v1", "Service", {"Service", f_service}},
    {"apps/v1", "Deployment", {"Deployment", f_deployment}},
    {"batch/v1", "Job", {"Job", f_job}},
};

struct rd {
    const unsigned char *p, *end;
};

static int varint(struct rd *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return -1;
        unsigned char b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* Reads one field header and its payload: varints into *v, length-delimited into sub. */
static int field(struct rd *r, int *num, int *wt, uint64_t *v, struct rd *sub)
{
    uint64_t key;
    if (varint(r, &key) < 0)
        return -1;
    *num = (int)(key >> 3);
    *wt = (int)(key & 7);
    if (*wt == 0)
        return varint(r, v);
    if (*wt == 2) {
        uint64_t len;
        if (varint(r, &len) < 0 || len > (uint64_t)(r->end - r->p))
            return -1;
        sub->p = r->p;
        sub->end = r->p + len;
        r->p += len;
        return 0;
    }
    return -1; /* fixed32/64 and groups appear in none of the messages we decode */
}

static json_t *decode_msg(struct rd r, const struct pmsg *m, int depth, char *err, size_t en);

static json_t *map_entry(struct rd r, enum ptype t, char **key, char *err, size_t en)
{
    json_t *val = NULL;
    int num, wt;
    uint64_t v;
    struct rd sub;
    *key = NULL;
    while (r.p < r.end) {
        if (field(&r, &num, &wt, &v, &sub) < 0 || wt != 2) {
            snprintf(err, en, "malformed map entry");
            goto fail;
        }
        if (num == 1) {
            free(*key);
            *key = strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
        } else if (num == 2) {
            json_decref(val);
            if (t == PT_MAPSS) {
                val = json_stringn((const char *)sub.p, (size_t)(sub.end - sub.p));
            } else if (t == PT_MAPSB) {
                size_t n = (size_t)(sub.end - sub.p), cap = n / 3 * 4 + 8;
                char *b64 = malloc(cap);
                if (!b64 || !sim_b64_encode(sub.p, n, b64, cap)) {
                    free(b64);
                    snprintf(err, en, "out of memory");
                    goto fail;
                }
                val = json_string(b64);
                free(b64);
            } else { /* Quantity {string=1} */
                int qn, qw;
                uint64_t qv;
                struct rd qs, q = sub;
                val = NULL;
                while (q.p < q.end) {
                    if (field(&q, &qn, &qw, &qv, &qs) < 0 || qn != 1 || qw != 2) {
                        snprintf(err, en, "malformed Quantity");
                        goto fail;
                    }
                    json_decref(val);
                    val = json_stringn((const char *)qs.p, (size_t)(qs.end - qs.p));
                }
            }
        }
    }
    if (!*key || !val) {
        snprintf(err, en, "map entry without key or value");
        goto fail;
    }
    return val;
fail:
    free(*key);
    *key = NULL;
    json_decref(val);
    return NULL;
}

static json_t *scalar_or_msg(const struct pfield *f, int wt, uint64_t v, struct rd sub, int depth, char *err, size_t en)
{
    switch (f->t) {
    case PT_STR:
        return wt == 2 ? json_stringn((const char *)sub.p, (size_t)(sub.end - sub.p)) : NULL;
    case PT_INT:
    case PT_INTP:
        return wt == 0 ? json_integer((json_int_t)(int64_t)v) : NULL;
    case PT_BOOL:
    case PT_BOOLP:
        return wt == 0 ? json_boolean(v != 0) : NULL;
    case PT_MSG:
        return wt == 2 ? decode_msg(sub, f->msg, depth + 1, err, en) : NULL;
    case PT_TIME: {
        int n, w;
        uint64_t tv, secs = 0;
        struct rd s;
        char buf[40];
        time_t t;
        struct tm tm;
        while (sub.p < sub.end) {
            if (field(&sub, &n, &w, &tv, &s) < 0 || w != 0)
                return NULL;
            if (n == 1)
                secs = tv;
        }
        if (secs == 0)
            return json_null();
        t = (time_t)secs;
        gmtime_r(&t, &tm);
        strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
        return json_string(buf);
    }
    case PT_INTORSTR: {
        int n, w;
        uint64_t iv, type = 0, ival = 0;
        struct rd s, str = {NULL, NULL};
        while (sub.p < sub.end) {
            if (field(&sub, &n, &w, &iv, &s) < 0)
                return NULL;
            if (n == 1)
                type = iv;
            else if (n == 2)
                ival = iv;
            else if (n == 3)
                str = s;
        }
        if (type == 1)
            return str.p ? json_stringn((const char *)str.p, (size_t)(str.end - str.p)) : json_string("");
        return json_integer((json_int_t)(int32_t)ival);
    }
    default:
        return NULL;
    }
}

static bool zero_omitted(const struct pfield *f, const json_t *v)
{
    if (f->repeated)
        return false;
    if (f->t == PT_STR)
        return json_string_length(v) == 0;
    if (f->t == PT_INT)
        return json_integer_value(v) == 0;
    if (f->t == PT_BOOL)
        return json_is_false(v);
    if (f->t == PT_TIME)
        return json_is_null(v);
    return false;
}

static json_t *decode_msg(struct rd r, const struct pmsg *m, int depth, char *err, size_t en)
{
    json_t *out = json_object();
    if (depth > 16) {
        snprintf(err, en, "protobuf nesting too deep");
        goto fail;
    }
    if (!m->f)
        return out;
    while (r.p < r.end) {
        int num, wt;
        uint64_t v = 0;
        struct rd sub = {NULL, NULL};
        const struct pfield *f;
        json_t *val;
        if (field(&r, &num, &wt, &v, &sub) < 0) {
            snprintf(err, en, "malformed protobuf in %s", m->name);
            goto fail;
        }
        for (f = m->f; f->name && f->num != num; f++)
            ;
        if (!f->name) {
            snprintf(err, en, "protobuf field %d of %s is not understood by apiserver-sim; send JSON", num, m->name);
            goto fail;
        }
        if (f->t == PT_MAPSS || f->t == PT_MAPSB || f->t == PT_MAPSQ) {
            char *key;
            json_t *map = json_object_get(out, f->name);
            if (wt != 2 || !(val = map_entry(sub, f->t, &key, err, en)))
                goto fail;
            if (!map) {
                map = json_object();
                json_object_set_new(out, f->name, map);
            }
            json_object_set_new(map, key, val);
            free(key);
            continue;
        }
        val = scalar_or_msg(f, wt, v, sub, depth, err, en);
        if (!val) {
            if (!*err)
                snprintf(err, en, "wrong wire type for %s.%s", m->name, f->name);
            goto fail;
        }
        if (f->repeated) {
            json_t *arr = json_object_get(out, f->name);
            if (!arr) {
                arr = json_array();
                json_object_set_new(out, f->name, arr);
            }
            json_array_append_new(arr, val);
        } else if (zero_omitted(f, val)) {
            json_decref(val);
        } else {
            json_object_set_new(out, f->name, val);
        }
    }
    return out;
fail:
    json_decref(out);
    return NULL;
}

json_t *sim_protobuf_decode(const char *buf, size_t len, char *err, size_t en)
{
    struct rd r = {(const unsigned char *)buf + 4, (const unsigned char *)buf + len}, sub, raw = {NULL, NULL};
    char apiversion[128] = "", kind[128] = "";
    int num, wt;
    uint64_t v;
    json_t *obj;
    err[0] = '\0';
    if (len < 4 || memcmp(buf, "k8s\0", 4)) {
        snprintf(err, en, "not a Kubernetes protobuf envelope");
        return NULL;
    }
    while (r.p < r.end) {
        if (field(&r, &num, &wt, &v, &sub) < 0 || wt != 2) {
            snprintf(err, en, "malformed runtime.Unknown envelope");
            return NULL;
        }
        if (num == 1) {
            struct rd tm = sub, s;
            while (tm.p < tm.end) {
                if (field(&tm, &num, &wt, &v, &s) < 0 || wt != 2)
                    break;
                if (num == 1)
                    snprintf(apiversion, sizeof(apiversion), "%.*s", (int)(s.end - s.p), (const char *)s.p);
                else if (num == 2)
                    snprintf(kind, sizeof(kind), "%.*s", (int)(s.end - s.p), (const char *)s.p);
            }
        } else if (num == 2) {
            raw = sub;
        }
    }
    for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
        if (strcmp(top[i].apiversion, apiversion) || strcmp(top[i].kind, kind))
            continue;
        obj = decode_msg(raw.p ? raw : (struct rd){r.end, r.end}, &top[i].msg, 0, err, en);
        if (obj) {
            json_object_set_new(obj, "apiVersion", json_string(apiversion));
            json_object_set_new(obj, "kind", json_string(kind));
        }
        return obj;
    }
    snprintf(err, en, "protobuf bodies of %s %s are not understood by apiserver-sim; send JSON", apiversion, kind);
    return NULL;
}
