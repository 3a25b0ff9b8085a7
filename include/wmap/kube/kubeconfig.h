/* wmap: the connection settings of the Kubernetes API client: kubeconfig files read as
 * kubectl reads them, kubectl's flag overrides, and the in-cluster service account.
 *
 * Secrets (tokens, keys, exec credentials) are never put into error messages or any other
 * text this module hands out. */
#ifndef WMAP_KUBE_KUBECONFIG_H
#define WMAP_KUBE_KUBECONFIG_H

#include <jansson.h>
#include <stddef.h>
#include "wmap/error.h"

/* What the command line overrides (kubectl's flags); NULL or "" = not given. They combine
 * with the kubeconfig as client-go clientcmd's ConfigOverrides do: each given value replaces
 * the kubeconfig's; --insecure-skip-tls-verify or --certificate-authority replaces the
 * cluster's whole CA setting (file, data, insecure); --server or --tls-server-name replaces
 * its tls-server-name; --client-certificate replaces the user's certificate (file and data),
 * --client-key its key; --token its token (a kubeconfig tokenFile still wins, as in
 * client-go, which re-reads the file on every request); a token or a client certificate and
 * key means the user's exec plugin or auth-provider is not used. */
typedef struct wmap_kube_overrides {
	const char *kubeconfig; /* --kubeconfig: only that file, no merging */
	const char *context;
	const char *cluster;
	const char *user;
	const char *namespace_; /* -n */

	const char *server;  /* -s/--server: URL, or host:port */
	const char *ca_file; /* --certificate-authority */
	int insecure;        /* --insecure-skip-tls-verify (only true overrides) */
	const char *tls_server_name;

	const char *token;            /* --token (secret) */
	const char *cert_file;        /* --client-certificate */
	const char *key_file;         /* --client-key */
	const char *as_user;          /* --as */
	const char *as_uid;           /* --as-uid */
	const char *const *as_groups; /* --as-group, repeatable: n_as_groups of them */
	size_t n_as_groups;
} wmap_kube_overrides;

/* The connection settings of one context, resolved. Every string is owned by the config. */
typedef struct wmap_kube_config {
	char *source; /* the file(s) read, or "in-cluster"; for messages */
	char *context, *cluster_name, *user_name;
	char *server;           /* https://host:port[/prefix] */
	char *namespace_;       /* -n, else the context's, else "default" */
	int namespace_explicit; /* from -n or the context, not the default */

	char *ca_file; /* certificate-authority, made absolute */
	char *ca_data; /* certificate-authority-data, decoded PEM */
	size_t ca_data_len;
	int insecure; /* insecure-skip-tls-verify */
	char *tls_server_name;
	char *proxy_url;
	int disable_compression;

	char *cert_file, *key_file; /* client-certificate / client-key */
	char *cert_data, *key_data; /* decoded PEM */
	size_t cert_data_len, key_data_len;
	char *token;      /* bearer token (secret) */
	char *token_file; /* tokenFile; re-read when used */

	/* exec credential plugin (client.authentication.k8s.io/v1 or v1beta1) */
	char *exec_api_version, *exec_command, *exec_install_hint;
	size_t exec_n_args;
	char **exec_args;
	json_t *exec_env; /* [{name, value}] */
	int exec_provide_cluster_info;
	json_t *exec_cluster_config; /* the cluster's client.authentication.k8s.io/exec extension */

	/* impersonation (as, as-uid, as-groups, as-user-extra) */
	char *as_user, *as_uid;
	json_t *as_groups; /* array of strings, NULL when unset */
	json_t *as_extra;  /* object of string arrays, NULL when unset */

	int in_cluster;
	json_t *context_names; /* every context's name in the merged kubeconfig (array of strings) */
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

#endif
