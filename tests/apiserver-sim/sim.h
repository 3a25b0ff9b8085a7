/* apiserver-sim: a small in-memory Kubernetes API server for end-to-end tests.
 *
 * It is an independent witness for wmap: nothing here includes include/wmap or src/.
 * One global state (struct sim) guarded by one mutex; every request handler takes the
 * lock for its whole run except while admission webhooks are being called.
 * jansson ownership: getters borrow, *_new setters steal; functions below say when
 * they return a new reference.
 */
#ifndef SIM_H
#define SIM_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define SIM_MAX_RESOURCES 256
#define SIM_MAX_SERVICES  32
#define SIM_BODY_CAP      (3u * 1024u * 1024u) /* etcd objects top out near 1.5 MiB */
#define SIM_JSON_DEPTH    64                   /* deeper than any real manifest */

/* One served resource (a plural within a group/version). */
struct sim_resource {
    char group[128];
    char version[64];
    char plural[128];
    char singular[128];
    char kind[128];
    char short_names[4][32];
    int n_short;
    bool namespaced;
    bool has_status;      /* serves PLURAL/status */
    bool has_scale;       /* serves PLURAL/scale (autoscaling/v1 Scale) */
    char spec_replicas_path[128], status_replicas_path[128], selector_path[128]; /* ".spec.replicas" */
    bool builtin;         /* false for custom resources (no strategic merge patch) */
    bool has_generation;  /* metadata.generation is maintained */
    json_t *schema;       /* openAPIV3Schema for CRs (owned), NULL for built-ins */
    char crd_name[300];   /* owning CRD, "" for built-ins */
    json_t *objects;      /* object: "ns/name" -> stored object (owned) */
};

struct sim_service {
    char ns[64];
    char name[64];
    int port;             /* loopback port the service maps to */
};

struct sim_config {
    int port;
    const char *tls_cert_file, *tls_key_file, *tls_ca_file;
    const char *kubeconfig_out, *ready_file, *log_file, *pki_dir;
    const char *load_files[16];
    int n_load;
    char token[80];
    char viewer_token[80]; /* a read-only user, for Forbidden */
    struct sim_service services[SIM_MAX_SERVICES];
    int n_services;
    long token_min_expiry; /* shortest TokenRequest expirationSeconds accepted (600 by default) */
    int watch_expire_s;    /* --watch-expire-seconds: watches end with 410 Expired after N s */
};

/* A service-account token handed out by TokenRequest (rbac.c). */
struct sim_sa_token {
    char token[72];
    char ns[64];
    char name[128];
    char sa_uid[40];      /* the token dies with this ServiceAccount object */
    long long expires;    /* unix seconds */
};
#define SIM_MAX_SA_TOKENS 512

struct sim {
    pthread_mutex_t lock;
    unsigned long long rv;         /* global resourceVersion counter */
    unsigned long long admission_uid;
    struct sim_resource res[SIM_MAX_RESOURCES];
    int n_res;
    struct sim_config cfg;
    /* PEM material, NUL-terminated, owned */
    char *ca_pem, *server_cert_pem, *server_key_pem;
    char *client_ca_pem, *client_ca_key_pem, *client_cert_pem, *client_key_pem;
    void *log;                     /* FILE *, NULL when not logging */
    pthread_mutex_t log_lock;
    struct sim_sa_token sa_tokens[SIM_MAX_SA_TOKENS]; /* guarded by lock */
    int n_sa_tokens;
};

/* The identity a request was authenticated as. */
struct sim_user {
    bool read_only;       /* may only get, list and watch */
    char name[256];
    char groups[8][128];
    int n_groups;
    bool impersonated;    /* name, groups and uid come from Impersonate-* headers */
    bool rbac;            /* a service account: authorized by RBAC objects (rbac.c) */
    char uid[128];
};

/* An API error, turned into a Status body by the HTTP layer. */
struct sim_err {
    int code;             /* 0 = no error */
    char reason[32];
    char message[2048];
    char details_name[256];
    char details_group[128];
    char details_kind[128];
    json_t *causes;       /* optional array (owned) */
};

/* Per-request context handed to the API handlers. */
struct sim_req {
    const char *method;
    const char *path;
    const char *content_type;
    const char *accept;
    const char *body;
    size_t body_len;
    void *conn;            /* struct MHD_Connection * for query arguments */
    struct sim_user user;
    /* outputs */
    int status;
    json_t *resp;          /* body (owned); NULL with err.code set for errors */
    void *stream;          /* a streaming MHD response (watch) instead of resp */
    const char *resp_content_type; /* static string; NULL = application/json */
    struct sim_err err;
    char warnings[8][512]; /* Warning headers to send */
    int n_warnings;
    bool has_retry_after;  /* send Retry-After: retry_after (an injected fault) */
    int retry_after;
};

/* faults.c: POST /sim/faults arms injected errors and cut watches (see the file) */
bool sim_faults_handle(struct sim_req *r);          /* true when it answered or failed r */
size_t sim_faults_cut(const char *path, size_t avail); /* bytes to send before a cut, 0 = none */

/* util.c */
void sim_err_set(struct sim_err *e, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void sim_err_clear(struct sim_err *e);
json_t *sim_status_json(const struct sim_err *e);  /* new reference */
json_t *sim_json_parse(const char *buf, size_t len, char *errbuf, size_t errlen); /* new ref, depth-checked */
int sim_json_depth_ok(const json_t *v, int limit);
void sim_now_rfc3339(char *out, size_t n);
void sim_random_hex(char *out, size_t nbytes);
void sim_random_suffix(char *out, size_t n);        /* generateName suffix alphabet */
size_t sim_b64_encode(const unsigned char *in, size_t len, char *out, size_t outlen);
unsigned char *sim_b64_decode(const char *in, size_t *outlen); /* malloc'd, NULL on error */
const char *sim_jstr(const json_t *obj, const char *key);      /* borrowed or NULL */
json_t *sim_jpath(json_t *root, const char *a, const char *b); /* borrowed */
void sim_add_warning(struct sim_req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sim_parse_int(const char *s, long lo, long hi, long *out);
char *sim_read_file(const char *path, size_t cap, size_t *len); /* malloc'd */
int sim_write_file(const char *path, const char *data, size_t len);

/* store.c: resources and objects */
void sim_builtins_register(struct sim *s);
struct sim_resource *sim_resource_find(struct sim *s, const char *group, const char *version,
                                       const char *plural);
struct sim_resource *sim_resource_by_kind(struct sim *s, const char *apiversion, const char *kind);
struct sim_resource *sim_resource_add(struct sim *s, const struct sim_resource *tmpl);
void sim_resource_remove(struct sim *s, struct sim_resource *r);
void sim_qualified(const struct sim_resource *r, char *out, size_t n); /* "jobsets.jobset.x-k8s.io" */
void sim_api_version(const struct sim_resource *r, char *out, size_t n);
json_t *sim_object_get(struct sim_resource *r, const char *ns, const char *name); /* borrowed */
const char *sim_next_rv(struct sim *s, char *buf, size_t n);
json_t *sim_namespace_labels(struct sim *s, const char *ns); /* borrowed or NULL */

/* api.c: the verbs */
void sim_api_handle(struct sim *s, struct sim_req *r);
/* Creates an object without admission (used by --load). 0 or -1 with err. */
int sim_store_create_direct(struct sim *s, json_t *obj, struct sim_err *err);

/* discovery.c */
bool sim_discovery_handle(struct sim *s, struct sim_req *r);

/* crd.c */
int sim_crd_apply(struct sim *s, json_t *crd, struct sim_err *err); /* register/refresh */
void sim_crd_remove(struct sim *s, const char *crd_name);
int sim_crd_validate(json_t *crd, struct sim_err *err);
/* Prunes obj against schema; records dropped field paths into `pruned` (array, may be NULL). */
void sim_prune(json_t *obj, const json_t *schema, json_t *pruned);
/* Applies the schema's `default`s to missing fields (structural defaulting). */
void sim_default(json_t *obj, const json_t *schema);

/* patch.c */
int sim_json_patch(json_t *doc, const json_t *ops, char *errbuf, size_t n); /* in place */
json_t *sim_merge_patch(json_t *target, const json_t *patch); /* returns new ref, consumes target */
json_t *sim_strategic_patch(json_t *target, const json_t *patch); /* approximation */

/* selector.c */
/* Parses a label selector string; returns a json array of requirements, NULL with errbuf on error. */
json_t *sim_selector_parse(const char *sel, char *errbuf, size_t n);
bool sim_selector_match(const json_t *reqs, const json_t *labels);
/* metav1.LabelSelector object (matchLabels/matchExpressions); NULL selector matches all. */
int sim_labelselector_match(const json_t *selector, const json_t *labels, bool *out, char *errbuf, size_t n);

/* events.c: a selectable field of a core/v1 Event; false when the label is not one. */
bool sim_event_field(const json_t *ev, const char *label, const char **value);

/* admission.c */
enum sim_op { SIM_CREATE, SIM_UPDATE, SIM_DELETE };
/* Runs the mutating (validating=false) or the validating chain. *obj may be replaced (owned by caller).
 * Called with s->lock held; releases it during webhook calls. 0 or -1 with r->err. */
int sim_admit(struct sim *s, struct sim_req *r, struct sim_resource *res, const char *subresource,
              enum sim_op op, const char *ns, const char *name, json_t **obj, const json_t *old,
              bool dry_run, const json_t *options, bool validating);

/* auth.c */
int sim_authenticate(struct sim *s, void *conn, const char *authz, struct sim_user *u);
/* Impersonate-User/-Group/-Uid headers: 0 (u replaced when present), or -1 with err set. */
int sim_impersonate(void *conn, struct sim_user *u, struct sim_err *err);

/* rbac.c: service-account tokens, RBAC authorization, access reviews */
/* Looks a bearer token up among TokenRequest tokens (takes s->lock). 0 with u filled, -1 unknown/expired. */
int sim_sa_token_user(struct sim *s, const char *token, struct sim_user *u);
/* Marks u as RBAC-authorized when it names a service account (system:serviceaccount:NS:NAME). */
void sim_user_classify(struct sim_user *u);
/* Authorizes the request (lock held): true when handled here (TokenRequest, access reviews) or
 * refused (r->err set); false to go on with the API. */
bool sim_rbac_handle(struct sim *s, struct sim_req *r);

/* certs.c */
int sim_certs_init(struct sim *s, char *errbuf, size_t n);
int sim_write_kubeconfig(struct sim *s, const char *path, int port);

/* load.c */
int sim_load_file(struct sim *s, const char *path, char *errbuf, size_t n);
json_t *sim_yaml_parse(const char *buf, size_t len, char *errbuf, size_t n); /* array of documents */

/* protobuf.c: the "k8s\0" protobuf envelope of a few built-in kinds → JSON (new ref). */
json_t *sim_protobuf_decode(const char *buf, size_t len, char *errbuf, size_t n);

/* scale.c: GET/PUT/PATCH of PLURAL/scale (lock held). */
void sim_scale_handle(struct sim *s, struct sim_req *r, struct sim_resource *res, const char *ns, const char *name);

/* watch.c: the event log and ?watch=true streams. Push and start with s->lock held. */
/* gc.c: owner-reference garbage collection (with s->lock held) */
void sim_gc_deleted(struct sim *s, const char *uid, bool orphan); /* the dependents of uid */
void sim_gc_created(struct sim *s, struct sim_resource *res, const char *ns, const char *name);
void sim_event_push(struct sim *s, const struct sim_resource *res, const char *type, const json_t *obj);
void *sim_watch_start(struct sim *s, struct sim_req *r, const struct sim_resource *res, const char *ns,
                      const char *label_sel, const char *field_sel, const char *rv, const char *timeout_s,
                      const char *include);
void sim_watch_shutdown(void);
/* The position of the event log now, and a wait (lock held, at most 1 s) for an event after
 * *seen (updated); false once the server is stopping. For streams that follow objects. */
unsigned long long sim_watch_position(void);
bool sim_watch_wait(struct sim *s, unsigned long long *seen);

/* logs.c: GET pods/NAME/log (lock held). */
void sim_log_handle(struct sim *s, struct sim_req *r, struct sim_resource *res, const char *ns, const char *name);

/* http.c */
/* Starts serving on 127.0.0.1:*port (0 = any; the chosen port is written back). */
void *sim_http_start(struct sim *s, int *port, char *err, size_t n);
void sim_http_stop(void *daemon);
void sim_log_request(struct sim *s, const char *method, const char *url, int code, double ms);
/* The same, with " as=NAME groups=G1,G2 uid=UID" appended when u was impersonated. */
void sim_log_request_as(struct sim *s, const char *method, const char *url, int code, double ms,
                        const struct sim_user *u);

#endif
