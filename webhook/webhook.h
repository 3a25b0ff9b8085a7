/* wmap-webhook: internal interfaces of the admission server (not part of libwmap). */
#ifndef WMAP_WEBHOOK_H
#define WMAP_WEBHOOK_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include "wmap/admission.h"
#include "wmap/buf.h"
#include "wmap/gang.h"
#include "wmap/kube/client.h"
#include "wmap/kube/kubeconfig.h"
#include "wmap/policy.h"
#include "wmap/registry.h"
#include "wmap/schema.h"
#include "wmap/report.h"

typedef struct wh_options {
	const char *cert, *key;  /* PEM files, reloaded when they change */
	const char *definitions; /* FILE|DIR, NULL = catalog only */
	const char *policy;      /* WorkloadPolicy YAML, reloaded when it changes */
	const char *queue;
	wmap_gang_scheduler scheduler;
	const char *cosched_profile; /* --coscheduling-profile, NULL = WMAP_GANG_COSCHED_PROFILE */
	const char *kai_mode;        /* --kai-mode: "external" or NULL/"karta" */
	int port;
	unsigned threads;
	size_t max_body;           /* bytes; 413 above */
	size_t max_inflight_bytes; /* all bodies being read at once; 503 above */
	unsigned max_connections;
	unsigned connection_timeout; /* seconds of inactivity */
	unsigned budget_ms;          /* per request */
	unsigned reload_ms;          /* how often files are checked */
	unsigned drain_s;            /* longest wait for in-flight requests on SIGTERM */
	unsigned shutdown_delay_s;   /* on SIGTERM, keep accepting this long (unready) first */
	const char *tls_priorities;
	int null_admission;                   /* benchmarks: allow every review after parsing it */
	const char *kubeconfig;               /* --kubeconfig: watch this cluster */
	int no_cluster;                       /* --no-cluster: files only, even in a pod */
	unsigned sync_timeout_s;              /* ready after this even when not synced */
	unsigned long long audit_interval_ms; /* --audit-interval: the leader's audit rounds */
	unsigned audit_qps;                   /* --audit-qps: the audit's requests per second */
	wmap_report_api report_api;           /* --report-api: the reports' format */
	int no_workload_metrics;              /* --no-workload-metrics: no exporter */
	size_t workload_max_series;           /* --workload-metrics-max-series: the cap */
} wh_options;

/* ---- log.c: one JSON object per line on stderr ---- */
/* Logs msg with level and the fields of extra (borrowed, may be NULL). */
void wh_log(const char *level, const char *msg, const json_t *extra);
void wh_logf(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- metrics.c: the request metrics, the metrics providers and the Prometheus writer ---- */
typedef enum wh_endpoint { WH_EP_MUTATE,
			   WH_EP_VALIDATE,
			   WH_EP_OTHER,
			   WH_EP_COUNT } wh_endpoint;

void wh_metrics_init(void);
/* One admission answered: counts by endpoint, kind, operation and result. */
void wh_metrics_request(wh_endpoint ep, const char *kind, const char *operation,
			const char *result, const char *reason, size_t patch_ops,
			size_t patch_bytes);
/* The policies a /validate review violated (info->hits), counted once per action of each
 * in wmap_policy_violations{policy,action,namespace}; dry runs are not counted. */
void wh_metrics_violations(const wmap_admission_info *info);
/* One HTTP exchange finished with status after seconds (latency histogram). */
void wh_metrics_http(wh_endpoint ep, unsigned status, double seconds);
void wh_metrics_reload(const char *what, int ok);
void wh_metrics_cert_expiry(time_t not_after);
void wh_metrics_set_ready(int ready);

/* A metrics provider: appends its families to out at scrape time (with wh_prom_family and
 * wh_prom_sample, or text it rendered earlier with wmap_buf_add). It runs on a poll thread
 * and must not block for long: take a lock for a copy, never make a request. */
typedef void (*wh_metrics_fn)(void *ctx, wmap_buf *out);
/* Adds fn(ctx) to the providers of path ("/metrics", or a path of the provider's own such
 * as "/metrics/workloads": under 64 bytes, starting with "/metrics"); GET path renders them
 * in the order they were added (200 with an empty body when they write nothing; 404 for a
 * path no provider serves). 0, WMAP_EINVAL for another path, or WMAP_ELIMIT when the table
 * (32) is full. ctx is borrowed until wh_metrics_withdraw(ctx). */
int wh_metrics_provide(const char *path, wh_metrics_fn fn, void *ctx);
/* Removes every provider of ctx; returns once no scrape runs one of them (call it before
 * freeing ctx). */
void wh_metrics_withdraw(void *ctx);
/* The text of GET path, a new string owned by the caller (its length in *len); NULL with
 * *found 0 when no provider serves path, NULL with *found 1 when out of memory. */
char *wh_metrics_render(const char *path, size_t *len, int *found);

/* The Prometheus text writer (exposition format 0.0.4), for providers and for text rendered
 * ahead of a scrape. */
/* The # HELP and # TYPE lines of family name (type: counter, gauge, histogram). */
void wh_prom_family(wmap_buf *out, const char *name, const char *type, const char *help);
/* One sample line: name{label="value",...} value, the labels given as name, value pairs
 * ended by NULL (values escaped as the format requires). Integers are written exactly. */
void wh_prom_sample(wmap_buf *out, const char *name, double value, ...)
	__attribute__((sentinel));

/* ---- tls.c: the serving certificate, swapped under a lock on every handshake ---- */
/* Loads cert and key; 0 or -1 with a message in err (the old pair stays in force). */
int wh_tls_load(const char *cert, const char *key, char *err, size_t errlen);
/* The gnutls_certificate_retrieve_function2 that MHD calls on every handshake. */
void *wh_tls_callback(void);
void wh_tls_free_all(void);

/* ---- a file's identity, to notice replacement (kubelet swaps a symlink) ---- */
typedef struct wh_filesig {
	int ok;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
} wh_filesig;
wh_filesig wh_filesig_of(const char *path);
int wh_filesig_same(const wh_filesig *a, const wh_filesig *b);

/* ---- inforce.c: the state in force, published whole, read by every part ----
 *
 * A state is immutable once published. Readers take a reference (wh_inforce_acquire), read,
 * and give it back (wh_inforce_release) without waiting for anything: a review holds one for
 * its evaluation, a controller while it computes from it, never across a request to the API
 * server (the auditor is the exception: it holds one for a page and follows the state with
 * wh_inforce_follow). The writer (the watches with a cluster, main.c's file reload without
 * one) publishes a new state from the parts it changed; the publish waits until no reader
 * holds the state it replaces and frees the parts no longer in force, so no reader ever pays
 * for a free or sees a half-built state, and then tells the listeners what changed. */

/* The parts of a state (bits): a publish names the ones it replaces. */
#define WH_STATE_DEFS 1u     /* the definitions (and the verdicts on the Kartas) */
#define WH_STATE_POLICIES 2u /* the policies (and the verdicts on the WorkloadPolicies) */
#define WH_STATE_CRDS 4u     /* the cluster's CRDs (schema path check) */
#define WH_STATE_OBJECTS 8u  /* the Karta and WorkloadPolicy objects last seen */
#define WH_STATE_NPARTS 4
/* Not a part: what the leader's callback adds to a kick (this replica just took the Lease). */
#define WH_KICK_LEAD 16u

/* A prepared definition set: a registry and one engine per poll thread, every definition's
 * jq compiled (no compile ever happens on the request path). */
typedef struct wh_defs {
	wmap_registry *reg;
	wmap_engine **engines; /* one per poll thread */
	size_t n_engines;
} wh_defs;

/* A set of reg (taken over, also on failure) with threads engines, each prepared now (off
 * the request path: costly). The caller owns *out until it publishes it. */
int wh_defs_prepare(wh_defs **out, wmap_registry *reg, unsigned threads, wmap_error *err);
void wh_defs_free(wh_defs *d);

/* One state in force. Every field is read-only for readers and lives as long as their
 * reference (json_incref a value to keep it longer). */
typedef struct wh_state {
	const wh_defs *defs;             /* never NULL once published */
	const wmap_policy_set *policies; /* the --policy file and the cluster's, merged; NULL: none */
	const wmap_crd_lookup *crds;     /* the CRDs by group and kind; NULL: none known */
	/* What the last builds made of each cluster object (name -> {generation, ready, reason,
	 * message[, kind: {group, version, kind} of a Karta in force]}); NULL before one. */
	json_t *kverdicts, *pverdicts;
	/* The Karta and WorkloadPolicy objects as last listed or watched (name -> object, with
	 * status and resourceVersion); NULL without a cluster. */
	json_t *kartas, *wpolicies;
	/* inforce.c's own */
	wmap_crd_lookup crd_lookup_;
	json_t *crd_index_;
	unsigned long long serial_[WH_STATE_NPARTS]; /* the publish that brought each part */
	unsigned owns_;                              /* WH_STATE_* parts this state frees */
	atomic_int refs_;
} wh_state;

/* What a publish puts in force: the parts named in what, each taken over by the publish
 * (also on failure); the parts not named stay as they are. */
typedef struct wh_update {
	unsigned what;              /* WH_STATE_* bits */
	wh_defs *defs;              /* WH_STATE_DEFS: never NULL */
	json_t *kverdicts;          /* WH_STATE_DEFS: may be NULL */
	wmap_policy_set *policies;  /* WH_STATE_POLICIES: may be NULL */
	json_t *pverdicts;          /* WH_STATE_POLICIES: may be NULL */
	json_t *crd_index;          /* WH_STATE_CRDS: from wh_crd_index, may be NULL */
	json_t *kartas, *wpolicies; /* WH_STATE_OBJECTS: may be NULL */
} wh_update;

typedef struct wh_inforce wh_inforce;
/* The state in force is told what changed: fn(ctx, what) runs on the publishing thread after
 * each publish (what: WH_STATE_* bits); it must not block. */
typedef void (*wh_inforce_listener)(void *ctx, unsigned what);

/* An empty state in force for threads poll threads (nothing in force until the first
 * publish). The caller owns *out (wh_inforce_free, once no thread uses it). */
int wh_inforce_new(wh_inforce **out, unsigned threads, wmap_error *err);
void wh_inforce_free(wh_inforce *inf); /* NULL is fine */
/* Adds a listener (before the publishing threads start); 0 or WMAP_ELIMIT (8 at most). */
int wh_inforce_listen(wh_inforce *inf, wh_inforce_listener fn, void *ctx);
/* Publishes u (its parts taken over) as described above. 0, or WMAP_ENOMEM (u's parts are
 * freed, the state in force stays). */
int wh_inforce_publish(wh_inforce *inf, wh_update *u);
/* The state in force with a reference for the caller, NULL before the first publish. */
wh_state *wh_inforce_acquire(wh_inforce *inf);
void wh_inforce_release(wh_state *st); /* NULL is fine; never waits */
/* 1 when the state in force has the same parts (WH_STATE_* bits) as *st: then the caller's
 * reference moves to it (*st is the state in force). 0 when one of them was replaced (*st is
 * left as it was): what a long reader calls between two steps. */
int wh_inforce_follow(wh_inforce *inf, wh_state **st, unsigned parts);
/* The calling poll thread's engine of st (NULL when the thread has none). */
wmap_engine *wh_state_engine(wh_inforce *inf, const wh_state *st);
/* A new index (group and kind -> CRD) of crds (name -> CRD object) for WH_STATE_CRDS; NULL
 * on ENOMEM. */
json_t *wh_crd_index(const json_t *crds);
/* Readiness: set once the first state is complete (synced with the cluster, or past
 * --sync-timeout); /readyz and the auditor read it. */
void wh_inforce_set_ready(wh_inforce *inf);
int wh_inforce_ready(const wh_inforce *inf);

/* ---- cluster.c: the watches (Kartas, WorkloadPolicies, CRDs) and the builder ---- */
typedef struct wh_cluster wh_cluster;

/* Starts the watch and builder threads with clients of cfg (borrowed; outlives them); they
 * publish what they build into inf, and mark it ready once synced or after --sync-timeout.
 * They start nothing else. The caller owns *out (wh_cluster_stop). */
int wh_cluster_start(wh_cluster **out, const wh_options *o, wh_inforce *inf,
		     const wmap_kube_config *cfg, wmap_error *err);
/* Stops and joins the threads, frees cl (NULL is fine). */
void wh_cluster_stop(wh_cluster *cl);
/* The --policy file changed (and parses): merge it with the cluster's policies again. */
void wh_cluster_policy_file_changed(wh_cluster *cl);

/* ---- leader.c: a coordination.k8s.io/v1 Lease; only the leader writes ---- */
typedef struct wh_leader wh_leader;
/* Starts the election thread with its own client for cfg (borrowed), Lease wmap-webhook in
 * ns; on_lead(ctx) runs (on that thread) each time this replica becomes the leader. The
 * caller owns *out (wh_leader_stop). */
int wh_leader_start(wh_leader **out, const wmap_kube_config *cfg, const char *ns,
		    void (*on_lead)(void *ctx), void *ctx, wmap_error *err);
int wh_leader_is(const wh_leader *l); /* 1 while l holds the Lease within its deadline */
void wh_leader_stop(wh_leader *l);    /* gives the Lease up when held, frees l (NULL is fine) */

/* ---- controllers: the parts that act on the cluster, one file each, in main.c's table ----
 *
 * main.c starts them in the order of its table once the state in force, the watches and the
 * leader election run, kicks each of them when the state in force changes and when this
 * replica takes the Lease, and stops them in the reverse order before the watches and the
 * leader. A controller starts no other part and calls none; it reads the state in force
 * (wh_inforce_acquire), makes its own API clients from env->kube, writes to the cluster only
 * while wh_leader_is(env->leader), and registers its metrics (wh_metrics_provide). */
typedef struct wh_env {
	const wh_options *opt;
	wh_inforce *inforce;          /* the state in force: read it, never publish */
	const wmap_kube_config *kube; /* the cluster (a client per thread: wmap_kube_client_new) */
	const wh_leader *leader;      /* write only while wh_leader_is(leader) */
} wh_env;

typedef struct wh_controller {
	const char *name; /* for log lines: "reconciler", "auditor" */
	/* Starts the controller's threads; *self is its handle, NULL when its options turn it
	 * off. env outlives it. 0, or a WMAP_E* code with err set (main.c then exits). */
	int (*start)(void **self, const wh_env *env, wmap_error *err);
	/* what changed: WH_STATE_* bits, WH_KICK_LEAD. Called from the publishing and the
	 * leader's threads: it only notes the work and wakes the controller's thread. */
	void (*kick)(void *self, unsigned what);
	/* Stops and joins its threads, withdraws its metrics, frees self. */
	void (*stop)(void *self);
} wh_controller;

/* ---- reconcile.c: the webhook configurations' rules (and, with status.c, the Ready
 * conditions) follow what is in force ---- */
extern const wh_controller wh_reconcile_controller;

/* ---- gangs.c: the gang schedulers' group objects (Volcano, coscheduling and KAI PodGroups)
 * of every workload whose gang setting asks for one, owned by the workload ---- */
extern const wh_controller wh_gangs_controller;

/* ---- status.c: the Ready condition of every Karta and WorkloadPolicy (for reconcile.c) ---- */
typedef struct wmap_discovery wmap_discovery;
typedef struct wh_status_writer {
	json_t *pending; /* "resource/name" -> resourceVersion a write was based on */
	atomic_uint writes, conflicts, errors;
	int error_logged;
} wh_status_writer;
/* Writes, through the status subresource, the Ready condition of every object of st
 * (borrowed; the caller's reference) whose condition differs from what the last build made
 * of it (kinds looked up in disc, may be NULL). Only while leader leads; c, disc and leader
 * are borrowed. */
void wh_status_sync(wh_status_writer *w, wmap_kube_client *c, const wmap_discovery *disc,
		    const json_t *kartas, const json_t *kverdicts, const json_t *policies,
		    const json_t *pverdicts, const wh_leader *leader);
void wh_status_writer_clear(wh_status_writer *w);                 /* frees what w holds; NULL is fine */
void wh_status_metrics(const wh_status_writer *w, wmap_buf *out); /* its families */

/* ---- audit.c: the leader audits every workload and writes policy reports ---- */
extern const wh_controller wh_audit_controller;

/* ---- workloads.c: the leader's workload metrics on /metrics/workloads ---- */
extern const wh_controller wh_workloads_controller;

/* ---- server.c: HTTPS, /mutate, /validate, probes and metrics ---- */
typedef struct wh_server {
	wh_options opt;
	wh_inforce *inforce; /* what reviews run on (borrowed) */
	atomic_int draining;
	atomic_long inflight;
	atomic_size_t inflight_bytes;
	struct MHD_Daemon *daemon;
} wh_server;

/* Starts MHD on s->opt.port; 0 or -1 (logged). */
int wh_server_start(wh_server *s);
/* Turns unready (/readyz 503) and tells keep-alive clients to close, still accepting new
 * connections: the start of a shutdown while the Service's endpoints are being updated. */
void wh_server_unready(wh_server *s);
/* Stops accepting, waits for in-flight requests (up to drain_s), stops MHD. */
void wh_server_drain(wh_server *s);

#endif
