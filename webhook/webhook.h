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
} wh_options;

/* ---- log.c: one JSON object per line on stderr ---- */
/* Logs msg with level and the fields of extra (borrowed, may be NULL). */
void wh_log(const char *level, const char *msg, const json_t *extra);
void wh_logf(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- metrics.c ---- */
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
/* Prometheus text exposition into a new string owned by the caller. */
char *wh_metrics_render(long inflight);

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

/* ---- defs.c: the definition set in force, swapped whole ---- */
typedef struct wh_defs {
	wmap_registry *reg;
	wmap_engine **engines; /* one per poll thread, every definition prepared */
	size_t n_engines;
	atomic_int refs; /* the server's own, plus one per review using it */
} wh_defs;

typedef struct wh_server wh_server;

/* A set of reg (taken over, also on failure) with threads engines, each prepared now. The
 * caller owns *out. */
int wh_defs_prepare(wh_defs **out, wmap_registry *reg, unsigned threads, wmap_error *err);
void wh_defs_free(wh_defs *d);
/* The set in force with a reference for the caller, and the calling poll thread's engine
 * of it in *eng (NULL when the thread has none); give it back with wh_defs_release. */
wh_defs *wh_defs_acquire(wh_server *s, wmap_engine **eng);
void wh_defs_release(wh_defs *d);
/* The set in force with a reference for the caller (not a poll thread: no engine). */
wh_defs *wh_defs_ref(wh_server *s);
/* Puts d in force (the server owns it); waits until no review uses the old set, frees it. */
void wh_defs_swap(wh_server *s, wh_defs *d);

/* ---- cluster.c: Kartas and WorkloadPolicies from the API server ---- */
typedef struct wh_cluster wh_cluster;

/* The cluster to watch: --kubeconfig FILE, else the service account when running in a pod
 * (KUBERNETES_SERVICE_HOST), else none (*out NULL, files only; also with --no-cluster).
 * The caller owns *out. */
int wh_cluster_config(wmap_kube_config **out, const wh_options *o, wmap_error *err);
/* Starts the watch and builder threads; takes cfg over (also on failure). Sets s->ready
 * once synced, or after --sync-timeout. The caller owns *out (wh_cluster_stop). */
int wh_cluster_start(wh_cluster **out, wh_server *s, wmap_kube_config *cfg, wmap_error *err);
/* Stops and joins the threads, frees cl (NULL is fine). */
void wh_cluster_stop(wh_cluster *cl);
/* The --policy file changed (and parses): merge it with the cluster's policies again. */
void wh_cluster_policy_file_changed(wh_cluster *cl);
/* For the status writer: the latest Karta and WorkloadPolicy objects (name -> object, with
 * their status and resourceVersion) and the verdicts of the last builds (name ->
 * {generation, ready, reason, message, kind: {group, version, kind} for Kartas in force});
 * new references for the caller, each NULL when there is none yet. */
void wh_cluster_status_input(wh_cluster *cl, json_t **kartas, json_t **kverdicts,
			     json_t **policies, json_t **pverdicts);
/* The cluster metrics in Prometheus text (watches, builds, Lease, configurations, statuses),
 * a new string owned by the caller (NULL: none). */
char *wh_cluster_metrics(const wh_cluster *cl);

/* ---- leader.c: a coordination.k8s.io/v1 Lease; only the leader writes ---- */
typedef struct wh_leader wh_leader;
/* Starts the election thread with its own client for cfg (borrowed), Lease wmap-webhook in
 * ns; on_lead(ctx) runs (on that thread) each time this replica becomes the leader. The
 * caller owns *out (wh_leader_stop). */
int wh_leader_start(wh_leader **out, const wmap_kube_config *cfg, const char *ns,
		    void (*on_lead)(void *ctx), void *ctx, wmap_error *err);
int wh_leader_is(const wh_leader *l);        /* 1 while l holds the Lease within its deadline */
void wh_leader_stop(wh_leader *l);           /* gives the Lease up when held, frees l (NULL is fine) */
char *wh_leader_metrics(const wh_leader *l); /* Prometheus text, owned by the caller */

/* ---- reconcile.c: the webhook configurations' rules follow what is in force ---- */
typedef struct wmap_discovery wmap_discovery;
typedef struct wh_reconciler wh_reconciler;
/* The CREATE rules for the root kinds of reg that disc serves, sorted; a new array. */
json_t *wh_mutating_rules(const wmap_registry *reg, const wmap_discovery *disc);
/* The rules of the validating webhook policies.wmap.io (failurePolicy Fail): the root kinds
 * of reg that disc serves and that a Deny policy of policies (may be NULL) matches, with
 * those policies' operations, sorted; a new array (empty when no such policy). */
json_t *wh_validating_rules(const wmap_registry *reg, const wmap_discovery *disc,
			    const wmap_policy_set *policies);
/* The same for advisories.wmap.io (failurePolicy Ignore): the kinds and operations that only
 * Warn or Audit policies match (none of wh_validating_rules'). */
json_t *wh_advisory_rules(const wmap_registry *reg, const wmap_discovery *disc,
			  const wmap_policy_set *policies);
/* Starts the reconciler thread with its own client for cfg (borrowed); while leader (borrowed,
 * outlives it) leads, it writes the rules of both configurations and the statuses of cl's
 * objects. The caller owns *out (wh_reconcile_stop). */
int wh_reconcile_start(wh_reconciler **out, wh_server *s, wh_cluster *cl,
		       const wh_leader *leader, const wmap_kube_config *cfg, wmap_error *err);
/* The definitions or policies changed: reconcile now (NULL is fine: not started yet). */
void wh_reconcile_kick(wh_reconciler *r);
void wh_reconcile_kick_status(wh_reconciler *r);    /* only objects changed: statuses now */
void wh_reconcile_stop(wh_reconciler *r);           /* joins the thread, frees r (NULL is fine) */
char *wh_reconcile_metrics(const wh_reconciler *r); /* Prometheus text, owned by the caller */

/* ---- status.c: the Ready condition of every Karta and WorkloadPolicy ---- */
typedef struct wh_status_writer {
	json_t *pending; /* "resource/name" -> resourceVersion a write was based on */
	atomic_uint writes, conflicts, errors;
	int error_logged;
} wh_status_writer;
/* Writes, through the status subresource, the Ready condition of every object of cl whose
 * condition differs from what the last build made of it (kinds looked up in disc, may be
 * NULL). Only while leader leads; c, disc and leader are borrowed. */
void wh_status_sync(wh_status_writer *w, wmap_kube_client *c, const wmap_discovery *disc,
		    wh_cluster *cl, const wh_leader *leader);
void wh_status_writer_clear(wh_status_writer *w);   /* frees what w holds; NULL is fine */
char *wh_status_metrics(const wh_status_writer *w); /* Prometheus text, owned by the caller */

/* ---- audit.c: the leader audits every workload and writes policy reports ---- */
/* Starts the audit thread with its own client for cfg (borrowed; outlives it); it audits
 * only while leader (borrowed, outlives it) leads. */
int wh_audit_start(wh_server *s, const wh_leader *leader, const wmap_kube_config *cfg, wmap_error *err);
void wh_audit_kick(void); /* definitions or policies changed: audit again now */
void wh_audit_stop(void);
char *wh_audit_metrics(void); /* Prometheus text, owned by the caller */

/* ---- server.c ---- */
typedef struct wh_policy_ref {
	wmap_policy_set *set; /* NULL when no policy file */
	int refs;
} wh_policy_ref;

struct wh_server {
	wh_options opt;
	wh_defs *defs;        /* the definitions in force */
	atomic_int next_slot; /* poll threads take engine slots 0, 1, ... */
	pthread_mutex_t lock; /* the defs and policy pointers */
	wh_policy_ref *policy;
	atomic_int ready, draining;
	atomic_long inflight;
	atomic_size_t inflight_bytes;
	struct MHD_Daemon *daemon;
	wh_cluster *cluster; /* NULL without a cluster */
	/* The cluster's CRDs for the schema path check at /validate (NULL: no check); set by
	 * wh_cluster_start, read by every review. */
	_Atomic(const wmap_crd_lookup *) crds;
};

/* Starts MHD on s->opt.port; 0 or -1 (logged). */
int wh_server_start(wh_server *s);
/* Turns unready (/readyz 503) and tells keep-alive clients to close, still accepting new
 * connections: the start of a shutdown while the Service's endpoints are being updated. */
void wh_server_unready(wh_server *s);
/* Stops accepting, waits for in-flight requests (up to drain_s), stops MHD. */
void wh_server_drain(wh_server *s);

/* The policies in force with a reference for the caller (NULL when none); give it back
 * with wh_policy_release. */
wh_policy_ref *wh_policy_acquire(wh_server *s);
void wh_policy_release(wh_server *s, wh_policy_ref *p); /* NULL is fine */
/* Replaces the policy set (NULL allowed); the old one is freed when its last user is done. */
void wh_policy_swap(wh_server *s, wmap_policy_set *set);

#endif
