/* wmap: the Kubernetes API client: kubeconfig (as kubectl reads it), in-cluster config,
 * an HTTPS client on libcurl, discovery (cached on disk) and resource-type resolution.
 *
 * Secrets (tokens, keys, exec credentials) are never put into error messages or any other
 * text this module hands out. */
#ifndef WMAP_KUBE_H
#define WMAP_KUBE_H

#include <jansson.h>
#include <stddef.h>
#include "wmap/error.h"

/* ---- kubeconfig ------------------------------------------------------------------- */

/* What the command line overrides (kubectl's flags); NULL or "" = not given. They combine
 * with the kubeconfig as client-go clientcmd's ConfigOverrides do: each given value replaces
 * the kubeconfig's; --insecure-skip-tls-verify or --certificate-authority replaces the
 * cluster's whole CA setting (file, data, insecure); --server or --tls-server-name replaces
 * its tls-server-name; --client-certificate replaces the user's certificate (file and data),
 * --client-key its key; --token its token (a kubeconfig tokenFile still wins, as in
 * client-go, which re-reads the file on every request); a token or a client certificate and
 * key means the user's exec plugin or auth-provider is not used. */
typedef struct wmap_kube_overrides {
	const char *kubeconfig;   /* --kubeconfig: only that file, no merging */
	const char *context;
	const char *cluster;
	const char *user;
	const char *namespace_;   /* -n */

	const char *server;       /* -s/--server: URL, or host:port */
	const char *ca_file;      /* --certificate-authority */
	int insecure;             /* --insecure-skip-tls-verify (only true overrides) */
	const char *tls_server_name;

	const char *token;        /* --token (secret) */
	const char *cert_file;    /* --client-certificate */
	const char *key_file;     /* --client-key */
	const char *as_user;      /* --as */
	const char *as_uid;       /* --as-uid */
	const char *const *as_groups;  /* --as-group, repeatable: n_as_groups of them */
	size_t n_as_groups;
} wmap_kube_overrides;

/* The connection settings of one context, resolved. Every string is owned by the config. */
typedef struct wmap_kube_config {
	char *source;             /* the file(s) read, or "in-cluster"; for messages */
	char *context, *cluster_name, *user_name;
	char *server;             /* https://host:port[/prefix] */
	char *namespace_;         /* -n, else the context's, else "default" */
	int namespace_explicit;   /* from -n or the context, not the default */

	char *ca_file;            /* certificate-authority, made absolute */
	char *ca_data;            /* certificate-authority-data, decoded PEM */
	size_t ca_data_len;
	int insecure;             /* insecure-skip-tls-verify */
	char *tls_server_name;
	char *proxy_url;
	int disable_compression;

	char *cert_file, *key_file;   /* client-certificate / client-key */
	char *cert_data, *key_data;   /* decoded PEM */
	size_t cert_data_len, key_data_len;
	char *token;              /* bearer token (secret) */
	char *token_file;         /* tokenFile; re-read when used */

	/* exec credential plugin (client.authentication.k8s.io/v1 or v1beta1) */
	char *exec_api_version, *exec_command, *exec_install_hint;
	size_t exec_n_args;
	char **exec_args;
	json_t *exec_env;         /* [{name, value}] */
	int exec_provide_cluster_info;
	json_t *exec_cluster_config;  /* the cluster's client.authentication.k8s.io/exec extension */

	/* impersonation (as, as-uid, as-groups, as-user-extra) */
	char *as_user, *as_uid;
	json_t *as_groups;        /* array of strings, NULL when unset */
	json_t *as_extra;         /* object of string arrays, NULL when unset */

	int in_cluster;
} wmap_kube_config;

/* Loads the connection settings as kubectl does: --kubeconfig, else $KUBECONFIG (files
 * merged, the first to set a value or map key wins, missing files skipped), else
 * ~/.kube/config; the context (--context or current-context), its cluster and user
 * (overridable), the namespace, then the flag overrides of ov. With no kubeconfig at all,
 * --server (with --token, ...) is enough; without it the in-cluster service account config
 * is used when KUBERNETES_SERVICE_HOST is set (--server, --token and
 * --certificate-authority apply to it, as in client-go). A malformed file is WMAP_EINVAL
 * naming file:line:col; settings kubectl refuses (insecure with a CA, a client certificate
 * without its key, --as-group without --as, a malformed server URL) are WMAP_EINVAL; no
 * usable config at all is WMAP_ENOTFOUND. Messages never carry a token. The caller owns
 * *out. */
int wmap_kubeconfig_load(wmap_kube_config **out, const wmap_kube_overrides *ov,
			 wmap_error *err);

/* The same from one parsed, already merged kubeconfig document (tests; exec plugins with
 * relative paths resolve against dir). */
int wmap_kubeconfig_from_json(wmap_kube_config **out, const json_t *doc, const char *dir,
			      const char *source, const wmap_kube_overrides *ov, wmap_error *err);

/* Merges the kubeconfig documents docs[0..n) by kubectl's rules into a new object. */
json_t *wmap_kubeconfig_merge(json_t *const *docs, size_t n);

void wmap_kubeconfig_free(wmap_kube_config *cfg);

/* ---- the client ------------------------------------------------------------------- */

typedef struct wmap_kube_client wmap_kube_client;

typedef struct wmap_kube_opts {
	long timeout_ms;          /* per request; 0 = 30 s; -1 = none */
	int max_retries;          /* 429/5xx retries, 0 = 3; -1 = none */
	size_t max_response;      /* body cap, 0 = 64 MiB */
	const char *user_agent;   /* NULL = "kubectl-wmap" */
} wmap_kube_opts;

/* A client for cfg (borrowed; must outlive the client). One curl handle is reused, so
 * connections are kept alive between requests. The certificate-authority, client-certificate
 * and client-key files (and data) are read first, as client-go does when it builds its
 * transport: one that cannot be read or holds no PEM block of its kind is WMAP_EIO or
 * WMAP_EINVAL naming the file, never its content. The caller owns *out. */
int wmap_kube_client_new(wmap_kube_client **out, const wmap_kube_config *cfg,
			 const wmap_kube_opts *opts, wmap_error *err);
void wmap_kube_client_free(wmap_kube_client *c);

/* Parses a kubectl duration ("30s", "1m", "500ms", "0", a bare number = seconds) into
 * milliseconds; -1 when malformed. "0" means no timeout (returns 0). */
long wmap_kube_parse_duration(const char *s);

/* One request. path starts with "/" (query included); body may be NULL. On a response
 * with a 2xx code: 0 and *out (may be NULL when the caller does not want it) the parsed
 * body, owned by the caller. On an error response: WMAP_ENOTFOUND for 404, WMAP_EIO for
 * the rest, with *status set and the message kubectl would print
 * ("Error from server (NotFound): jobsets.jobset.x-k8s.io \"x\" not found"). Transport
 * failures are WMAP_EIO with *status 0 (connection failures of GETs are retried). 429,
 * 502, 503 and 504, and any other 5xx that carries Retry-After, are retried up to
 * max_retries times, waiting Retry-After (at most 10 s) or 200 ms doubling; a plain 500 (a
 * failing webhook) is final. A 401 with a token file or an exec plugin takes a fresh
 * credential once. */
int wmap_kube_request(json_t **out, long *status, wmap_kube_client *c, const char *method,
		      const char *path, const char *content_type, const char *body,
		      wmap_error *err);

/* GET a path into *out. */
int wmap_kube_get(json_t **out, wmap_kube_client *c, const char *path, wmap_error *err);

/* The same with an Accept header of the caller's (aggregated discovery, Table, ...). */
int wmap_kube_get_as(json_t **out, wmap_kube_client *c, const char *path, const char *accept,
		     wmap_error *err);

/* The Warning headers of the last response (texts; an array borrowed from the client,
 * valid until the next request). kubectl prints them as "Warning: <text>". */
const json_t *wmap_kube_warnings(const wmap_kube_client *c);

/* Requests made so far (for measurements and tests). */
unsigned wmap_kube_requests(const wmap_kube_client *c);

/* The config the client was made with (borrowed). */
const wmap_kube_config *wmap_kube_client_config(const wmap_kube_client *c);

/* Percent-encodes s for a query value (Go url.Values: space as '+') into a new string. */
char *wmap_kube_query_escape(const char *s);

/* ---- streams: watches and followed logs, many at once (kube_stream.c) ------------- */

/* A set of long-lived GET requests multiplexed on one connection pool (libcurl's multi
 * interface): watch streams (one JSON event per line) and log streams. Lines are handed
 * over whole, never a part of one next to a part of another. */
typedef struct wmap_kube_streams wmap_kube_streams;

/* A complete line of stream id's body, without its newline (a last line without one is
 * handed over when the stream ends; a line longer than the stream's cap arrives in pieces
 * of the cap). line is borrowed for the call. */
typedef void (*wmap_kube_line_fn)(void *arg, int id, const char *line, size_t len);
/* Stream id ended: status is the HTTP code (0 when the transfer failed); err is NULL when a
 * 2xx response simply ended, else the message kubectl would print. The stream is gone
 * when this is called. */
typedef void (*wmap_kube_end_fn)(void *arg, int id, long status, const wmap_error *err);

#define WMAP_KUBE_STREAMS_MAX 1024
#define WMAP_KUBE_LINE_MAX_DEFAULT (1u << 20)

/* A new, empty set using c (borrowed; must outlive the set) and the callbacks (called only
 * from wmap_kube_streams_run; they must not open or close streams of the set). The caller
 * owns *out. */
int wmap_kube_streams_new(wmap_kube_streams **out, wmap_kube_client *c,
			  wmap_kube_line_fn on_line, wmap_kube_end_fn on_end, void *arg,
			  wmap_error *err);
/* Stops every stream (no end callbacks) and frees the set; NULL is fine. */
void wmap_kube_streams_free(wmap_kube_streams *s);

/* Starts a GET of path (query included) as stream id (the caller's number, unique among
 * the open streams). accept NULL = application/json; max_line 0 = 1 MiB. Counted as a
 * request of the client. WMAP_ELIMIT beyond WMAP_KUBE_STREAMS_MAX streams. */
int wmap_kube_stream_open(wmap_kube_streams *s, int id, const char *path, const char *accept,
			  size_t max_line, wmap_error *err);
/* Stops stream id (no end callback); unknown ids are ignored. */
void wmap_kube_stream_close(wmap_kube_streams *s, int id);
/* How many streams are open. */
size_t wmap_kube_streams_count(const wmap_kube_streams *s);

/* Moves every stream on: waits at most timeout_ms for data (returns at once when some is
 * there), hands over the complete lines and the ends. 0, or WMAP_EIO when libcurl itself
 * fails (a stream's own failure goes to its end callback). */
int wmap_kube_streams_run(wmap_kube_streams *s, int timeout_ms, wmap_error *err);

/* ---- discovery -------------------------------------------------------------------- */

typedef struct wmap_api_resource {
	char *group;              /* "" for the core group */
	char *version;
	char *plural;             /* "jobsets" */
	char *singular;           /* "jobset" (lowercased kind when the server gives none) */
	char *kind;               /* "JobSet" */
	int namespaced;
	int preferred;            /* served at the group's preferred version */
	size_t n_short;
	char **short_names;
} wmap_api_resource;

typedef struct wmap_discovery wmap_discovery;

/* Discovery of the API server behind c: read from the cache when it is younger than
 * ttl_seconds (0 = 6 hours; the folder is $WMAP_CACHE_DIR, else
 * ~/.kube/cache/wmap/discovery/<host_port>/), else read from the server and written back:
 * aggregated discovery (KEP-3352: two requests, /api and /apis as APIGroupDiscoveryList)
 * when the server serves it, else the walk of /api/v1, /apis and every /apis/G/V. The
 * caller owns *out. */
int wmap_discovery_load(wmap_discovery **out, wmap_kube_client *c, int ttl_seconds,
			wmap_error *err);
/* Walks the server again (ignoring the cache), after a type was not found. */
int wmap_discovery_refresh(wmap_discovery *d, wmap_kube_client *c, wmap_error *err);
void wmap_discovery_free(wmap_discovery *d);
/* 1 when the discovery came from the cache. */
int wmap_discovery_cached(const wmap_discovery *d);

size_t wmap_discovery_count(const wmap_discovery *d);
const wmap_api_resource *wmap_discovery_get(const wmap_discovery *d, size_t i);

/* Resolves a TYPE as kubectl does: plural, singular, short name or kind, case-insensitive,
 * optionally qualified as resource.group, resource.version.group or Kind.version.group.
 * Borrowed result. WMAP_ENOTFOUND when nothing matches, WMAP_EINVAL when several groups
 * serve it (the message lists the qualified names). */
int wmap_discovery_resolve(const wmap_api_resource **out, const wmap_discovery *d,
			   const char *type, wmap_error *err);

/* The resource serving group/version/kind (exact version), NULL when none. */
const wmap_api_resource *wmap_discovery_find_kind(const wmap_discovery *d, const char *group,
						  const char *version, const char *kind);

/* The REST path of a resource: collection when name is NULL; ns NULL = all namespaces
 * (or cluster-scoped). New string owned by the caller, NULL on ENOMEM. */
char *wmap_resource_path(const wmap_api_resource *r, const char *ns, const char *name);

/* "jobsets.jobset.x-k8s.io" ("pods" for core), for messages. */
void wmap_resource_label(char *buf, size_t len, const wmap_api_resource *r);

/* Whether the CRD (an apiextensions.k8s.io/v1 object) would prune labels written into the
 * pod-template metadata at pointer (e.g. "/spec/template") of version's schema: 1 when the
 * schema declares that metadata as a bare object (no properties, no
 * x-kubernetes-preserve-unknown-fields), 0 otherwise. */
int wmap_crd_prunes_template_labels(const json_t *crd, const char *version,
				    const char *template_pointer);

#endif
