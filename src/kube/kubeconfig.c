/* wmap: kubeconfig resolution as kubectl (client-go clientcmd) does it (see wmap/kube/kubeconfig.h).
 *
 * Files are parsed with the strict YAML reader so that a malformed file is reported with
 * file:line:col. Entries keep the folder of the file they came from, because relative paths
 * inside a kubeconfig are relative to that file, not to the working directory. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wmap/kube/kubeconfig.h"
#include "wmap/file.h"
#include "wmap/yaml.h"

#define KUBECONFIG_MAX_FILES 32
#define KUBECONFIG_MAX_BYTES (4u << 20)
#define DIR_KEY "\x01dir" /* a member no real kubeconfig can have */

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Standard base64 (whitespace ignored) into a new NUL-terminated buffer; NULL when
 * malformed or out of memory. */
static char *b64_decode(const char *in, size_t *out_len)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), o = 0;
	unsigned acc = 0;
	int bits = 0;
	char *out = malloc(n * 3 / 4 + 4);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char ch = in[i];
		const char *p;

		if (ch == '=' || ch == '\n' || ch == '\r' || ch == ' ' || ch == '\t')
			continue;
		if (ch == '\0' || (p = strchr(tbl, ch)) == NULL) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned)(p - tbl);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xFF);
		}
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return out;
}

static const char *str_of(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* A path of a kubeconfig made absolute against the folder of its file. */
static char *abs_path(const char *path, const char *dir)
{
	size_t len;
	char *out;

	if (!path || !path[0])
		return NULL;
	if (path[0] == '/' || !dir || !dir[0])
		return strdup(path);
	len = strlen(dir) + strlen(path) + 2;
	if ((out = malloc(len)) != NULL)
		snprintf(out, len, "%s/%s", dir, path);
	return out;
}

/* Checks that list is a list of {name, <field>: object} entries; names the place. */
static int check_named_list(const json_t *doc, const char *list, const char *field,
			    const char *file, const json_t *positions, wmap_error *err)
{
	const json_t *l = json_object_get(doc, list);
	char where[1024], ptr[256];
	size_t i;
	json_t *e;

	if (!l || json_is_null(l))
		return 0;
	if (!json_is_array(l)) {
		wmap_yaml_position(where, sizeof(where), positions, file, "0/");
		snprintf(ptr, sizeof(ptr), "0/%s", list);
		wmap_yaml_position(where, sizeof(where), positions, file, ptr);
		return wmap_error_set(err, WMAP_EINVAL, "%s: %s must be a list", where, list);
	}
	json_array_foreach(l, i, e) {
		snprintf(ptr, sizeof(ptr), "0/%s/%zu", list, i);
		wmap_yaml_position(where, sizeof(where), positions, file, ptr);
		if (!json_is_object(e) || !json_is_string(json_object_get(e, "name")))
			return wmap_error_set(err, WMAP_EINVAL, "%s: %s[%zu] needs a name", where,
					      list, i);
		if (json_object_get(e, field) && !json_is_object(json_object_get(e, field)))
			return wmap_error_set(err, WMAP_EINVAL, "%s: %s[%zu].%s must be a mapping",
					      where, list, i, field);
	}
	return 0;
}

/* Reads one kubeconfig file; *out NULL when the file does not exist and missing_ok. */
static int read_file(json_t **out, const char *path, int missing_ok, wmap_error *err)
{
	wmap_yaml_opts yo = { 0 };
	json_t *docs = NULL, *doc;
	struct stat st;
	char dir[PATH_MAX];
	const char *slash;
	int rc;

	*out = NULL;
	if (stat(path, &st) != 0) {
		if (missing_ok && errno == ENOENT)
			return 0;
		return wmap_error_set(err, WMAP_EIO, "%s: %s", path, strerror(errno));
	}
	yo.max_bytes = KUBECONFIG_MAX_BYTES;
	if ((yo.positions = json_object()) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if ((rc = wmap_yaml_parse_file(&docs, path, &yo, err)) != 0)
		goto cleanup;
	if (json_array_size(docs) > 1) {
		rc = wmap_error_set(err, WMAP_EINVAL, "%s: a kubeconfig holds one document, not %zu",
				    path, json_array_size(docs));
		goto cleanup;
	}
	doc = json_array_size(docs) ? json_array_get(docs, 0) : NULL;
	if (doc && !json_is_object(doc)) {
		char where[1024];

		wmap_yaml_position(where, sizeof(where), yo.positions, path, "0/");
		rc = wmap_error_set(err, WMAP_EINVAL, "%s: a kubeconfig must be a mapping", where);
		goto cleanup;
	}
	if (!doc) {
		*out = json_object(); /* an empty file is an empty config */
		goto cleanup;
	}
	if ((rc = check_named_list(doc, "clusters", "cluster", path, yo.positions, err)) ||
	    (rc = check_named_list(doc, "users", "user", path, yo.positions, err)) ||
	    (rc = check_named_list(doc, "contexts", "context", path, yo.positions, err)))
		goto cleanup;
	if (json_object_get(doc, "current-context") &&
	    !json_is_string(json_object_get(doc, "current-context")) &&
	    !json_is_null(json_object_get(doc, "current-context"))) {
		char where[1024];

		wmap_yaml_position(where, sizeof(where), yo.positions, path, "0/current-context");
		rc = wmap_error_set(err, WMAP_EINVAL, "%s: current-context must be a string", where);
		goto cleanup;
	}
	/* Remember each entry's folder for its relative paths. */
	slash = strrchr(path, '/');
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else if (!getcwd(dir, sizeof(dir)))
		dir[0] = '\0';
	if (slash && slash == path)
		snprintf(dir, sizeof(dir), "/");
	{
		const char *lists[] = { "clusters", "users" };

		for (size_t k = 0; k < 2; k++) {
			size_t i;
			json_t *e;

			json_array_foreach(json_object_get(doc, lists[k]), i, e)
				json_object_set_new(e, DIR_KEY, json_string(dir));
		}
	}
	*out = json_incref(doc);
cleanup:
	json_decref(docs);
	json_decref(yo.positions);
	return rc;
}

json_t *wmap_kubeconfig_merge(json_t *const *docs, size_t n)
{
	const char *lists[] = { "clusters", "users", "contexts" };
	json_t *out = json_object();

	if (!out)
		return NULL;
	for (size_t k = 0; k < 3; k++)
		json_object_set_new(out, lists[k], json_array());
	for (size_t d = 0; d < n; d++) {
		const char *cc = str_of(docs[d], "current-context");

		/* The first file to set a value wins. */
		if (cc && cc[0] && !json_object_get(out, "current-context"))
			json_object_set_new(out, "current-context", json_string(cc));
		for (size_t k = 0; k < 3; k++) {
			json_t *dst = json_object_get(out, lists[k]), *e, *have;
			size_t i, j;

			json_array_foreach(json_object_get(docs[d], lists[k]), i, e) {
				const char *name = str_of(e, "name");
				int dup = 0;

				json_array_foreach(dst, j, have)
					if (name && str_of(have, "name") &&
					    strcmp(name, str_of(have, "name")) == 0)
						dup = 1;
				/* A map entry is taken whole from the first file defining it. */
				if (!dup)
					json_array_append(dst, e);
			}
		}
	}
	return out;
}

static const json_t *find_named(const json_t *doc, const char *list, const char *name)
{
	size_t i;
	json_t *e;

	json_array_foreach(json_object_get(doc, list), i, e) {
		const char *n = str_of(e, "name");

		if (n && name && strcmp(n, name) == 0)
			return e;
	}
	return NULL;
}

void wmap_kubeconfig_free(wmap_kube_config *c)
{
	if (!c)
		return;
	json_decref(c->context_names);
	free(c->source);
	free(c->context);
	free(c->cluster_name);
	free(c->user_name);
	free(c->server);
	free(c->namespace_);
	free(c->ca_file);
	free(c->ca_data);
	free(c->tls_server_name);
	free(c->proxy_url);
	free(c->cert_file);
	free(c->key_file);
	free(c->cert_data);
	free(c->key_data);
	if (c->token) {
		memset(c->token, 0, strlen(c->token));
		free(c->token);
	}
	free(c->token_file);
	free(c->exec_api_version);
	free(c->exec_command);
	free(c->exec_install_hint);
	for (size_t i = 0; i < c->exec_n_args; i++)
		free(c->exec_args[i]);
	free(c->exec_args);
	json_decref(c->exec_env);
	json_decref(c->exec_cluster_config);
	free(c->as_user);
	free(c->as_uid);
	json_decref(c->as_groups);
	json_decref(c->as_extra);
	free(c);
}

/* Decodes a *-data field; a malformed one is an error naming the field, never its value. */
static int decode_field(char **out, size_t *len, const json_t *obj, const char *key,
			const char *entry, const char *source, wmap_error *err)
{
	const char *v = str_of(obj, key);

	if (!v || !v[0])
		return 0;
	if ((*out = b64_decode(v, len)) == NULL)
		return wmap_error_set(err, WMAP_EINVAL, "%s: %s: %s is not valid base64", source,
				      entry, key);
	return 0;
}

static int set_exec(wmap_kube_config *c, const json_t *ex, const json_t *cluster,
		    const char *dir, const char *source, wmap_error *err)
{
	const json_t *args = json_object_get(ex, "args");
	const char *api = str_of(ex, "apiVersion"), *cmd = str_of(ex, "command");
	size_t i;
	json_t *a;

	if (!cmd || !cmd[0])
		return wmap_error_set(err, WMAP_EINVAL, "%s: user %s: exec needs a command", source,
				      c->user_name);
	if (!api || (strcmp(api, "client.authentication.k8s.io/v1") != 0 &&
		     strcmp(api, "client.authentication.k8s.io/v1beta1") != 0))
		return wmap_error_set(err, WMAP_EINVAL,
				      "%s: user %s: exec apiVersion \"%s\" is not supported (use "
				      "client.authentication.k8s.io/v1 or v1beta1)",
				      source, c->user_name, api ? api : "");
	c->exec_api_version = strdup(api);
	/* A command with a slash but not absolute is relative to the kubeconfig's folder. */
	c->exec_command = (strchr(cmd, '/') && cmd[0] != '/') ? abs_path(cmd, dir) : strdup(cmd);
	c->exec_install_hint = xstrdup(str_of(ex, "installHint"));
	c->exec_provide_cluster_info = json_is_true(json_object_get(ex, "provideClusterInfo"));
	if (json_is_array(args) && json_array_size(args) > 0) {
		c->exec_args = calloc(json_array_size(args), sizeof(char *));
		if (!c->exec_args)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		json_array_foreach(args, i, a) {
			if (!json_is_string(a))
				return wmap_error_set(err, WMAP_EINVAL,
						      "%s: user %s: exec args[%zu] must be a string",
						      source, c->user_name, i);
			c->exec_args[c->exec_n_args++] = strdup(json_string_value(a));
		}
	}
	if (json_is_array(json_object_get(ex, "env")))
		c->exec_env = json_deep_copy(json_object_get(ex, "env"));
	json_array_foreach(json_object_get(cluster, "extensions"), i, a) {
		if (str_of(a, "name") && strcmp(str_of(a, "name"), "client.authentication.k8s.io/exec") == 0)
			c->exec_cluster_config = json_deep_copy(json_object_get(a, "extension"));
	}
	return c->exec_api_version && c->exec_command ? 0
						      : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
}

static int given(const char *s)
{
	return s && s[0];
}

/* The server as client-go reads it: a URL with scheme http or https, or host:port (https
 * when TLS settings are given, else http, as rest.DefaultServerURL decides). The query and
 * fragment are dropped and so are trailing slashes ("https://h:6443/" is "https://h:6443").
 * what names where it came from, for the message. */
static int normalize_server(char **out, const char *in, int tls, const char *what,
			    wmap_error *err)
{
	const char *sep = strstr(in, "://"), *host, *p, *port = NULL;
	size_t host_len, len;
	char *s;

	*out = NULL;
	for (p = in; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return wmap_error_set(err, WMAP_EINVAL,
					      "invalid %s: a server URL has no spaces or control "
					      "characters",
					      what);
	if (sep && !((sep - in == 5 && strncasecmp(in, "https", 5) == 0) ||
		     (sep - in == 4 && strncasecmp(in, "http", 4) == 0)))
		return wmap_error_set(err, WMAP_EINVAL,
				      "invalid %s \"%s\": unsupported scheme \"%.*s\" (use https:// "
				      "or http://)",
				      what, in, (int)(sep - in), in);
	host = sep ? sep + 3 : in;
	host_len = strcspn(host, "/?#");
	if (host_len == 0 || host[0] == ':')
		return wmap_error_set(err, WMAP_EINVAL,
				      "invalid %s \"%s\": host must be a URL or a host:port pair",
				      what, in);
	if (memchr(host, '@', host_len))
		return wmap_error_set(err, WMAP_EINVAL,
				      "invalid %s: credentials in the server URL are not supported",
				      what);
	if (host[0] == '[') {
		const char *rb = memchr(host, ']', host_len);

		if (!rb || (rb + 1 < host + host_len && rb[1] != ':'))
			return wmap_error_set(err, WMAP_EINVAL,
					      "invalid %s \"%s\": malformed IPv6 address", what, in);
		if (rb + 1 < host + host_len)
			port = rb + 2;
	} else if ((p = memchr(host, ':', host_len)) != NULL) {
		port = p + 1;
	}
	if (port) {
		size_t n = (size_t)(host + host_len - port);
		long v = 0;

		for (size_t i = 0; i < n; i++) {
			if (port[i] < '0' || port[i] > '9' || v > 65535) {
				v = -1;
				break;
			}
			v = v * 10 + (port[i] - '0');
		}
		if (n == 0 || v < 1 || v > 65535)
			return wmap_error_set(err, WMAP_EINVAL, "invalid %s \"%s\": invalid port \"%.*s\"",
					      what, in, (int)n, port);
	}
	len = strlen(in) + 9;
	if ((s = malloc(len)) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	snprintf(s, len, "%s%s", sep ? "" : tls ? "https://"
						: "http://",
		 in);
	s[strcspn(s + 8, "?#") + 8] = '\0';
	while (strlen(s) > 8 && s[strlen(s) - 1] == '/')
		s[strlen(s) - 1] = '\0';
	*out = s;
	return 0;
}

/* Replaces *dst by a copy of v (NULL clears it). */
static int set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = v ? strdup(v) : NULL;
	return v && !*dst ? WMAP_ENOMEM : 0;
}

/* What a context picks from the kubeconfig: its entries and names, and the folders the
 * relative paths of the cluster and the user are relative to. The pointers are borrowed
 * from the document (and the overrides) the config is built from. */
typedef struct picked {
	const char *ctx_name, *cl_name, *us_name;
	const json_t *ctx, *cl, *us;
	const json_t *ex, *ap; /* the user's exec and auth-provider; NULL when absent or null */
	const char *cl_dir, *us_dir;
} picked;

/* Finds the context, its cluster and its user (or those the flags name), as clientcmd's
 * getContext, getCluster and getAuthInfo do, and sets c's names and namespace. */
static int pick_entries(picked *p, wmap_kube_config *c, const json_t *doc, const char *dir,
			const wmap_kube_overrides *ov, wmap_error *err)
{
	const json_t *ctx_e = NULL, *cl_e = NULL, *us_e;
	const char *ns;

	p->ctx_name = given(ov->context) ? ov->context : str_of(doc, "current-context");
	if (given(p->ctx_name) && (ctx_e = find_named(doc, "contexts", p->ctx_name)) == NULL)
		return wmap_error_set(err, WMAP_ENOTFOUND, "%s: context \"%s\" does not exist",
				      c->source, p->ctx_name);
	/* Without a context, kubectl still works from --cluster and --user, or from --server. */
	if (!ctx_e && !(given(ov->cluster) && given(ov->user)) && !given(ov->server))
		return wmap_error_set(err, WMAP_ENOTFOUND,
				      "%s: no current-context is set; use --context (or --server)",
				      c->source);
	p->ctx = json_object_get(ctx_e, "context");
	c->context = xstrdup(given(p->ctx_name) ? p->ctx_name : "");
	p->cl_name = given(ov->cluster) ? ov->cluster : str_of(p->ctx, "cluster");
	p->us_name = given(ov->user) ? ov->user : str_of(p->ctx, "user");
	/* A cluster named by --cluster must exist; the context's may be missing when --server
	 * gives the server (client-go only requires what a flag names). */
	if ((!given(p->cl_name) || (cl_e = find_named(doc, "clusters", p->cl_name)) == NULL) &&
	    (given(ov->cluster) || !given(ov->server)))
		return wmap_error_set(err, WMAP_ENOTFOUND,
				      "%s: context \"%s\": cluster \"%s\" does not exist", c->source,
				      given(p->ctx_name) ? p->ctx_name : "",
				      p->cl_name ? p->cl_name : "");
	p->cl = json_object_get(cl_e, "cluster");
	p->cl_dir = str_of(cl_e, DIR_KEY) ? str_of(cl_e, DIR_KEY) : dir;
	p->us_dir = dir;
	if (given(p->us_name)) {
		if ((us_e = find_named(doc, "users", p->us_name)) == NULL)
			return wmap_error_set(err, WMAP_ENOTFOUND,
					      "%s: context \"%s\": user \"%s\" does not exist",
					      c->source, given(p->ctx_name) ? p->ctx_name : "",
					      p->us_name);
		p->us = json_object_get(us_e, "user");
		p->us_dir = str_of(us_e, DIR_KEY) ? str_of(us_e, DIR_KEY) : dir;
	}
	c->cluster_name = xstrdup(p->cl_name ? p->cl_name : "");
	c->user_name = xstrdup(p->us_name ? p->us_name : "");
	ns = given(ov->namespace_) ? ov->namespace_ : str_of(p->ctx, "namespace");
	c->namespace_explicit = given(ns);
	c->namespace_ = strdup(given(ns) ? ns : "default");
	return 0;
}

/* The cluster's TLS settings, then the flags over them (clientcmd getCluster). */
static int set_cluster_tls(wmap_kube_config *c, const picked *p, const wmap_kube_overrides *ov,
			   wmap_error *err)
{
	const json_t *cl = p->cl;
	int rc;

	if (!given(ov->server) && !given(str_of(cl, "server")))
		return wmap_error_set(err, WMAP_EINVAL, "%s: cluster \"%s\" has no server",
				      c->source, p->cl_name);
	c->ca_file = abs_path(str_of(cl, "certificate-authority"), p->cl_dir);
	c->insecure = json_is_true(json_object_get(cl, "insecure-skip-tls-verify"));
	c->tls_server_name = xstrdup(str_of(cl, "tls-server-name"));
	c->proxy_url = xstrdup(str_of(cl, "proxy-url"));
	c->disable_compression = json_is_true(json_object_get(cl, "disable-compression"));
	if ((rc = decode_field(&c->ca_data, &c->ca_data_len, cl, "certificate-authority-data",
			       p->cl_name, c->source, err)) != 0)
		return rc;
	/* --insecure-skip-tls-verify or --certificate-authority replaces the CA setting whole,
	 * so that a kubeconfig CA does not make the insecure flag an error. */
	if (ov->insecure || given(ov->ca_file)) {
		c->insecure = ov->insecure;
		free(c->ca_data);
		c->ca_data = NULL;
		c->ca_data_len = 0;
		if (set_str(&c->ca_file, given(ov->ca_file) ? ov->ca_file : NULL))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	/* --server clears the kubeconfig's tls-server-name unless --tls-server-name is given:
	 * the name belonged to the other address. */
	if ((given(ov->tls_server_name) || given(ov->server)) &&
	    set_str(&c->tls_server_name, given(ov->tls_server_name) ? ov->tls_server_name : NULL))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	return 0;
}

/* The user's credentials and impersonation as the kubeconfig gives them (clientcmd
 * getAuthInfo); notes its exec and auth-provider in p. */
static int set_user(wmap_kube_config *c, picked *p, const wmap_kube_overrides *ov,
		    wmap_error *err)
{
	const json_t *us = p->us;
	int rc, methods;

	if (!us)
		return 0;
	p->ex = json_object_get(us, "exec");
	p->ap = json_object_get(us, "auth-provider");
	if (json_is_null(p->ex))
		p->ex = NULL;
	if (json_is_null(p->ap))
		p->ap = NULL;
	c->cert_file = abs_path(str_of(us, "client-certificate"), p->us_dir);
	c->key_file = abs_path(str_of(us, "client-key"), p->us_dir);
	if ((rc = decode_field(&c->cert_data, &c->cert_data_len, us, "client-certificate-data",
			       p->us_name, c->source, err)) ||
	    (rc = decode_field(&c->key_data, &c->key_data_len, us, "client-key-data", p->us_name,
			       c->source, err)))
		return rc;
	if (given(str_of(us, "token")))
		c->token = xstrdup(str_of(us, "token"));
	c->token_file = abs_path(str_of(us, "tokenFile"), p->us_dir);
	methods = (c->token || c->token_file) + (p->ex != NULL) + (p->ap != NULL);
	/* wmap refuses a user with two ways of getting a token, unless --token settles it. */
	if (methods > 1 && !given(ov->token))
		return wmap_error_set(err, WMAP_EINVAL,
				      "%s: user \"%s\" sets more than one of token, exec and "
				      "auth-provider",
				      c->source, p->us_name);
	c->as_user = xstrdup(str_of(us, "as"));
	c->as_uid = xstrdup(str_of(us, "as-uid"));
	if (json_is_array(json_object_get(us, "as-groups")))
		c->as_groups = json_deep_copy(json_object_get(us, "as-groups"));
	if (json_is_object(json_object_get(us, "as-user-extra")))
		c->as_extra = json_deep_copy(json_object_get(us, "as-user-extra"));
	return 0;
}

/* Forgets the client key (its bytes wiped). */
static void drop_key_data(wmap_kube_config *c)
{
	if (c->key_data)
		memset(c->key_data, 0, c->key_data_len);
	free(c->key_data);
	c->key_data = NULL;
	c->key_data_len = 0;
}

/* The flags over the user: --token, --client-certificate, --client-key, --as, --as-uid,
 * --as-group. Returns 0 or WMAP_ENOMEM. */
static int override_user(wmap_kube_config *c, const wmap_kube_overrides *ov)
{
	if (given(ov->token) && set_str(&c->token, ov->token))
		return WMAP_ENOMEM;
	if (given(ov->cert_file)) {
		free(c->cert_data);
		c->cert_data = NULL;
		c->cert_data_len = 0;
		if (set_str(&c->cert_file, ov->cert_file))
			return WMAP_ENOMEM;
	}
	if (given(ov->key_file)) {
		drop_key_data(c);
		if (set_str(&c->key_file, ov->key_file))
			return WMAP_ENOMEM;
	}
	if (given(ov->as_user) && set_str(&c->as_user, ov->as_user))
		return WMAP_ENOMEM;
	if (given(ov->as_uid) && set_str(&c->as_uid, ov->as_uid))
		return WMAP_ENOMEM;
	if (ov->n_as_groups > 0) {
		json_decref(c->as_groups);
		if ((c->as_groups = json_array()) == NULL)
			return WMAP_ENOMEM;
		for (size_t i = 0; i < ov->n_as_groups; i++)
			if (given(ov->as_groups[i]) &&
			    json_array_append_new(c->as_groups, json_string(ov->as_groups[i])) != 0)
				return WMAP_ENOMEM;
	}
	return 0;
}

/* What kubectl checks of the user before any request (validateAuthInfo): one form of each
 * client credential, a key with every certificate, a user to impersonate with uid or groups. */
static int check_user(wmap_kube_config *c, const picked *p, wmap_error *err)
{
	const char *us_name = p->us_name;

	if (c->cert_file && c->cert_data)
		return wmap_error_set(err, WMAP_EINVAL, "%s: user \"%s\" sets both client-certificate "
							"and client-certificate-data",
				      c->source, us_name);
	if (c->key_file && c->key_data)
		return wmap_error_set(err, WMAP_EINVAL, "%s: user \"%s\" sets both client-key and "
							"client-key-data",
				      c->source, us_name);
	if ((c->cert_file || c->cert_data) && !(c->key_file || c->key_data))
		return given(us_name)
			       ? wmap_error_set(err, WMAP_EINVAL,
						"user \"%s\" has a client certificate but no client key "
						"(client-key, client-key-data or --client-key)",
						us_name)
			       : wmap_error_set(err, WMAP_EINVAL,
						"--client-certificate needs --client-key");
	if (!(c->cert_file || c->cert_data) && (c->key_file || c->key_data)) {
		/* A key without a certificate authenticates nothing; client-go ignores it. */
		free(c->key_file);
		c->key_file = NULL;
		drop_key_data(c);
	}
	if ((c->as_uid || json_array_size(c->as_groups) > 0 || json_object_size(c->as_extra) > 0) &&
	    !given(c->as_user))
		return given(us_name)
			       ? wmap_error_set(err, WMAP_EINVAL,
						"user \"%s\": requesting uid, groups or user-extra without "
						"impersonating a user (as, or --as)",
						us_name)
			       : wmap_error_set(err, WMAP_EINVAL,
						"requesting uid or groups without impersonating a user: "
						"--as-uid and --as-group need --as");
	return 0;
}

/* What kubectl checks of the cluster (validateClusterInfo, tlsConfigFor), then the server URL
 * (https when any TLS setting or a client certificate is there). */
static int check_cluster(wmap_kube_config *c, const picked *p, const wmap_kube_overrides *ov,
			 wmap_error *err)
{
	char what[300];
	int has_cert;

	if (c->ca_file && c->ca_data)
		return wmap_error_set(err, WMAP_EINVAL, "%s: cluster \"%s\" sets both "
							"certificate-authority and certificate-authority-data",
				      c->source, p->cl_name);
	if (c->insecure && (c->ca_file || c->ca_data))
		return wmap_error_set(err, WMAP_EINVAL,
				      "specifying a root certificates file with the insecure flag is "
				      "not allowed");
	if (given(ov->server))
		snprintf(what, sizeof(what), "--server");
	else
		snprintf(what, sizeof(what), "server of cluster \"%s\"", p->cl_name ? p->cl_name : "");
	has_cert = (c->cert_file || c->cert_data) && (c->key_file || c->key_data);
	return normalize_server(&c->server, given(ov->server) ? ov->server : str_of(p->cl, "server"),
				c->ca_file || c->ca_data || c->insecure || has_cert, what, err);
}

/* Credential plugins: client-go does not run them when a token or a client certificate is
 * there (from the kubeconfig or the flags). An oidc auth-provider's id-token is used as it is;
 * other auth-providers are refused. */
static int set_plugins(wmap_kube_config *c, const picked *p, const wmap_kube_overrides *ov,
		       wmap_error *err)
{
	int has_cert = (c->cert_file || c->cert_data) && (c->key_file || c->key_data);

	if (p->ap && !given(ov->token)) {
		const char *name = str_of(p->ap, "name");
		const char *idt = str_of(json_object_get(p->ap, "config"), "id-token");

		if (!name || strcmp(name, "oidc") != 0 || !given(idt))
			return wmap_error_set(err, WMAP_EINVAL,
					      "%s: user \"%s\": auth-provider \"%s\" is not "
					      "supported; use an exec credential plugin",
					      c->source, p->us_name, name ? name : "");
		if (set_str(&c->token, idt))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	if (p->ex && !c->token && !c->token_file && !has_cert)
		return set_exec(c, p->ex, p->cl, p->us_dir, c->source, err);
	return 0;
}

/* The kubeconfig's cluster and user for the context, with the flag overrides on top, in the
 * order client-go's DirectClientConfig uses (getContext, getCluster, getAuthInfo), then the
 * checks kubectl makes before any request (ConfirmUsable, tlsConfigFor). */
int wmap_kubeconfig_from_json(wmap_kube_config **out, const json_t *doc, const char *dir,
			      const char *source, const wmap_kube_overrides *ov, wmap_error *err)
{
	static const wmap_kube_overrides none = { 0 };
	picked p = { 0 };
	wmap_kube_config *c;
	int rc;

	*out = NULL;
	if (!ov)
		ov = &none;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	c->source = strdup(given(source) ? source : "kubeconfig");
	if (!c->source) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((rc = pick_entries(&p, c, doc, dir, ov, err)) || (rc = set_cluster_tls(c, &p, ov, err)) ||
	    (rc = set_user(c, &p, ov, err)))
		goto cleanup;
	if (override_user(c, ov)) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((rc = check_user(c, &p, err)) || (rc = check_cluster(c, &p, ov, err)) ||
	    (rc = set_plugins(c, &p, ov, err)))
		goto cleanup;
	if (!c->namespace_ || !c->context || !c->cluster_name || !c->user_name ||
	    !(c->context_names = json_array())) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	{
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(doc, "contexts"), i, x) {
			const char *name = str_of(x, "name");
			if (name && json_array_append_new(c->context_names, json_string(name))) {
				rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
				goto cleanup;
			}
		}
	}
	*out = c;
	c = NULL;
cleanup:
	wmap_kubeconfig_free(c);
	return rc;
}

/* Service-account config (client-go rest.InClusterConfig). The folder may be moved for
 * tests with WMAP_SERVICEACCOUNT_DIR. */
static int in_cluster(wmap_kube_config **out, const wmap_kube_overrides *ov, wmap_error *err)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *dir = getenv("WMAP_SERVICEACCOUNT_DIR");
	char token[PATH_MAX], ca[PATH_MAX], nsf[PATH_MAX], server[512];
	wmap_kube_config *c;
	char *ns = NULL;
	size_t len;

	*out = NULL;
	if (!dir || !dir[0])
		dir = "/var/run/secrets/kubernetes.io/serviceaccount";
	snprintf(token, sizeof(token), "%s/token", dir);
	snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
	snprintf(nsf, sizeof(nsf), "%s/namespace", dir);
	if (!host || !host[0] || !port || !port[0] || access(token, R_OK) != 0)
		return WMAP_ENOTFOUND;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	snprintf(server, sizeof(server), strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s",
		 host, port);
	c->in_cluster = 1;
	c->source = strdup("in-cluster");
	c->context = strdup("in-cluster");
	c->cluster_name = strdup("in-cluster");
	c->user_name = strdup("serviceaccount");
	c->server = strdup(server);
	c->token_file = strdup(token);
	if (access(ca, R_OK) == 0)
		c->ca_file = strdup(ca);
	/* client-go's in-cluster config takes only these three flags. */
	if (ov && given(ov->server)) {
		free(c->server);
		c->server = NULL;
		if (normalize_server(&c->server, ov->server, 1, "--server", err) != 0) {
			wmap_kubeconfig_free(c);
			return err ? err->code : WMAP_EINVAL;
		}
	}
	if (ov && given(ov->token)) {
		free(c->token_file);
		c->token_file = NULL;
		c->token = strdup(ov->token);
	}
	if (ov && given(ov->ca_file)) {
		free(c->ca_file);
		c->ca_file = strdup(ov->ca_file);
	}
	if (ov && ov->namespace_ && ov->namespace_[0])
		c->namespace_ = strdup(ov->namespace_);
	else if (getenv("POD_NAMESPACE") && getenv("POD_NAMESPACE")[0])
		c->namespace_ = strdup(getenv("POD_NAMESPACE"));
	else if (wmap_file_read(&ns, &len, nsf, 4096, NULL) == 0) {
		ns[strcspn(ns, "\r\n")] = '\0';
		c->namespace_ = ns;
		ns = NULL;
	}
	free(ns);
	if (!c->namespace_)
		c->namespace_ = strdup("default");
	c->namespace_explicit = 1;
	*out = c;
	return 0;
}

int wmap_kubeconfig_load(wmap_kube_config **out, const wmap_kube_overrides *ov,
			 wmap_error *err)
{
	static const wmap_kube_overrides none = { 0 };
	json_t *docs[KUBECONFIG_MAX_FILES] = { 0 };
	json_t *merged = NULL;
	char source[2048] = "", home_cfg[PATH_MAX], *list = NULL, *save = NULL, *tok;
	const char *env = getenv("KUBECONFIG");
	size_t n = 0;
	int rc = 0;

	*out = NULL;
	if (!ov)
		ov = &none;
	if (ov->kubeconfig && ov->kubeconfig[0]) {
		/* --kubeconfig: only that file; a missing one is an error. */
		if ((rc = read_file(&docs[0], ov->kubeconfig, 0, err)) != 0)
			goto cleanup;
		n = 1;
		snprintf(source, sizeof(source), "%s", ov->kubeconfig);
	} else if (env && env[0]) {
		if ((list = strdup(env)) == NULL) {
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			goto cleanup;
		}
		for (tok = strtok_r(list, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
			json_t *d = NULL;

			if (!tok[0])
				continue;
			if (n == KUBECONFIG_MAX_FILES) {
				rc = wmap_error_set(err, WMAP_ELIMIT, "KUBECONFIG lists more than %d files",
						    KUBECONFIG_MAX_FILES);
				goto cleanup;
			}
			if ((rc = read_file(&d, tok, 1, err)) != 0)
				goto cleanup;
			if (!d)
				continue; /* missing files are skipped, as kubectl does */
			docs[n++] = d;
			{
				size_t used = strlen(source);

				snprintf(source + used, sizeof(source) - used, "%s%s",
					 used ? ":" : "", tok);
			}
		}
	} else if (getenv("HOME") && getenv("HOME")[0]) {
		snprintf(home_cfg, sizeof(home_cfg), "%s/.kube/config", getenv("HOME"));
		if ((rc = read_file(&docs[0], home_cfg, 1, err)) != 0)
			goto cleanup;
		n = docs[0] ? 1 : 0;
		snprintf(source, sizeof(source), "%s", home_cfg);
	}
	if ((merged = wmap_kubeconfig_merge(docs, n)) == NULL) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto cleanup;
	}
	/* An empty config falls back to the service account, as client-go does; --server makes
	 * the flags a config of their own (client-go's config is then not the default one). */
	if (json_array_size(json_object_get(merged, "contexts")) == 0 &&
	    json_array_size(json_object_get(merged, "clusters")) == 0 &&
	    !given(ov->context) && !given(ov->server) && !(given(ov->cluster) && given(ov->user))) {
		rc = in_cluster(out, ov, err);
		if (rc == WMAP_ENOTFOUND)
			rc = wmap_error_set(err, WMAP_ENOTFOUND,
					    "no cluster configuration: no kubeconfig (%s) and not "
					    "running in a cluster; set KUBECONFIG or use --kubeconfig",
					    source[0] ? source : "KUBECONFIG unset, no HOME");
		goto cleanup;
	}
	rc = wmap_kubeconfig_from_json(out, merged, NULL, source, ov, err);
cleanup:
	for (size_t i = 0; i < n; i++)
		json_decref(docs[i]);
	json_decref(merged);
	free(list);
	return rc;
}
