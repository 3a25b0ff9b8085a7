/* wmap: the API server client on libcurl (see wmap/kube/client.h).
 *
 * One easy handle serves every request, so the TLS connection is set up once and kept
 * alive (describe makes several requests). Responses are read into a buffer with a hard
 * cap. Errors become kubectl's messages; credentials never appear in them. Long-lived GETs
 * (watches, followed logs; wmap_kube_stream too) are kube_stream.c's. */
#define _GNU_SOURCE /* timegm */
#include <ctype.h>
#include "curl_lazy.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube_int.h"
#include "wmap/kube/client.h"
#include "wmap/buf.h"
#include "wmap/file.h"
#include "wmap/yaml.h"

#define DEFAULT_TIMEOUT_MS 30000L
#define DEFAULT_RETRIES 3
#define DEFAULT_MAX_RESPONSE (64u << 20)
#define RETRY_AFTER_MAX_S 10
#define AUTH_MAX 16384 /* the Authorization header, token included */

struct wmap_kube_client {
	const wmap_kube_config *cfg;
	CURL *curl;
	long timeout_ms;
	int max_retries;
	size_t max_response;
	char user_agent[128];
	char *url_base;             /* server, or the tls-server-name form of it */
	char *connect_to;           /* "name:port:host:port" for tls-server-name */
	char *token;                /* secret: the bearer token in force */
	time_t token_expiry;        /* exec credentials: 0 = none */
	char *exec_cert, *exec_key; /* exec credentials' PEM */
	unsigned requests;
	long retry_after;    /* Retry-After of the last response, -1 when none */
	json_t *warnings;    /* texts of the last response's Warning headers */
	char no_proxy[2048]; /* $NO_PROXY (or $no_proxy) and the loopback names */
};

/* Appends a piece of the body; a body past the cap (or out of memory) aborts the transfer. */
static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user)
{
	size_t n = size * nmemb;

	return wmap_buf_add(user, ptr, n) == 0 ? n : 0;
}

/* Warning: 299 - "text" (RFC 7234): the text, unquoted (\" and \\ unescaped). */
static void add_warning(json_t *list, const char *v, size_t n)
{
	char buf[1024];
	const char *q = memchr(v, '"', n), *end = v + n;
	size_t o = 0;

	if (!list || json_array_size(list) >= 32)
		return;
	if (q) {
		for (const char *p = q + 1; p < end && *p != '"' && o + 1 < sizeof(buf); p++) {
			if (*p == '\\' && p + 1 < end)
				p++;
			buf[o++] = *p;
		}
		buf[o] = '\0';
	} else {
		snprintf(buf, sizeof(buf), "%.*s", (int)n, v);
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	json_array_append_new(list, json_string(buf));
}

size_t wmap_kube__on_header(char *ptr, size_t size, size_t nmemb, void *user)
{
	wmap_kube__headers *hc = user;
	long *retry_after = &hc->retry_after;
	size_t n = size * nmemb;

	if (n > 8 && strncasecmp(ptr, "Warning:", 8) == 0)
		add_warning(hc->warnings, ptr + 8, n - 8);

	if (n > 12 && strncasecmp(ptr, "Retry-After:", 12) == 0) {
		char tmp[32];
		char *end;
		long v;

		snprintf(tmp, sizeof(tmp), "%.*s", (int)(n - 12 < 31 ? n - 12 : 31), ptr + 12);
		errno = 0;
		v = strtol(tmp, &end, 10);
		if (errno == 0 && end != tmp && v >= 0)
			*retry_after = v;
	}
	return n;
}

long wmap_kube_parse_duration(const char *s)
{
	double total = 0;
	const char *p = s;

	if (!s || !*s)
		return -1;
	if (strcmp(s, "0") == 0)
		return 0;
	while (*p) {
		char *end;
		double v;

		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno || v < 0)
			return -1;
		p = end;
		if (*p == '\0') {
			if (p == s + strlen(s) && total == 0)
				/* a bare number is seconds; NaN and inf fail the test */
				return v * 1000 < (double)LONG_MAX ? (long)(v * 1000) : -1;
			return -1;
		}
		if (strncmp(p, "ms", 2) == 0) {
			total += v;
			p += 2;
		} else if (*p == 's') {
			total += v * 1000;
			p++;
		} else if (*p == 'm') {
			total += v * 60000;
			p++;
		} else if (*p == 'h') {
			total += v * 3600000;
			p++;
		} else {
			return -1;
		}
	}
	return total < (double)LONG_MAX ? (long)total : -1; /* "nan", "infs" too */
}

char *wmap_kube_query_escape(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *out = malloc(n * 3 + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
			out[o++] = (char)ch;
		} else if (ch == ' ') {
			out[o++] = '+';
		} else {
			snprintf(out + o, 4, "%%%02X", ch);
			o += 3;
		}
	}
	out[o] = '\0';
	return out;
}

/* Runs the exec credential plugin (kube_exec.c) and keeps what it gave. */
static int run_exec(wmap_kube_client *c, wmap_error *err)
{
	wmap_kube__credential cred;
	int rc = wmap_kube__run_exec(&cred, c->cfg, err);

	if (rc == 0) {
		free(c->token);
		free(c->exec_cert);
		free(c->exec_key);
		c->token = cred.token;
		c->exec_cert = cred.cert;
		c->exec_key = cred.key;
		c->token_expiry = cred.expiry;
		memset(&cred, 0, sizeof(cred)); /* handed over */
	}
	wmap_kube__credential_clear(&cred);
	return rc;
}

/* The token in force: exec plugin (cached until it expires), token file (re-read, it
 * rotates), or the kubeconfig's token. */
static int refresh_credentials(wmap_kube_client *c, int force, wmap_error *err)
{
	const wmap_kube_config *cfg = c->cfg;

	if (cfg->exec_command) {
		if (force || (!c->token && !c->exec_cert) ||
		    (c->token_expiry && time(NULL) + 10 >= c->token_expiry))
			return run_exec(c, err);
		return 0;
	}
	if (cfg->token_file) {
		char *t = NULL;
		size_t len;

		if (wmap_file_read(&t, &len, cfg->token_file, 1u << 20, NULL) != 0)
			return wmap_error_set(err, WMAP_EIO, "cannot read the token file %s",
					      cfg->token_file);
		while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' '))
			t[--len] = '\0';
		free(c->token);
		c->token = t;
		return 0;
	}
	if (!c->token && cfg->token && (c->token = strdup(cfg->token)) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	return 0;
}

/* tls-server-name: the request goes to the server's address, while the TLS name (SNI and
 * certificate check) is tls-server-name. curl does that with CONNECT_TO. */
static int setup_server_name(wmap_kube_client *c, wmap_error *err)
{
	const char *server = c->cfg->server;
	const char *hs = strstr(server, "://"), *host, *rest, *colon;
	char hostpart[512], port[16] = "443";
	size_t len;

	if (!c->cfg->tls_server_name || !hs) {
		c->url_base = strdup(server);
		return c->url_base ? 0 : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	host = hs + 3;
	rest = host + strcspn(host, "/");
	snprintf(hostpart, sizeof(hostpart), "%.*s", (int)(rest - host), host);
	colon = hostpart[0] == '[' ? strstr(hostpart, "]:") : strrchr(hostpart, ':');
	if (colon) {
		const char *pp = hostpart[0] == '[' ? colon + 2 : colon + 1;

		snprintf(port, sizeof(port), "%s", pp);
		hostpart[colon - hostpart + (hostpart[0] == '[' ? 1 : 0)] = '\0';
	}
	len = strlen(c->cfg->tls_server_name) * 2 + strlen(hostpart) + strlen(port) * 2 +
	      strlen(rest) + 32;
	c->connect_to = malloc(len);
	c->url_base = malloc(len);
	if (!c->connect_to || !c->url_base)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	snprintf(c->connect_to, len, "%s:%s:%s:%s", c->cfg->tls_server_name, port, hostpart, port);
	snprintf(c->url_base, len, "https://%s:%s%s", c->cfg->tls_server_name, port, rest);
	return 0;
}

#define PEM_FILE_MAX (1u << 20)

/* Whether PEM text holds a block of the kind (a certificate, or any private key). */
static int pem_has(const char *data, size_t len, int key)
{
	const char *p = data, *end = data + len;

	while (p < end && (p = memmem(p, (size_t)(end - p), "-----BEGIN ", 11)) != NULL) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);

		if (key ? memmem(p, n, "PRIVATE KEY-----", 16) != NULL
			: (n >= 27 && memcmp(p, "-----BEGIN CERTIFICATE-----", 27) == 0))
			return 1;
		p += 11;
	}
	return 0;
}

/* client-go reads the CA and the client certificate and key when it builds its transport,
 * so a wrong path or a file of the wrong kind fails before any request, naming the file
 * (never its content). data/len: the kubeconfig's *-data instead of a file. */
static int check_pem(const char *what, const char *file, const char *data, size_t len,
		     int key, wmap_error *err)
{
	char *buf = NULL;
	size_t n = 0;
	int ok;
	FILE *f;

	if (!file && !data)
		return 0;
	if (file) {
		if ((f = fopen(file, "rb")) == NULL)
			return wmap_error_set(err, WMAP_EIO, "unable to read %s %s: %s", what, file,
					      strerror(errno));
		if ((buf = malloc(PEM_FILE_MAX)) == NULL) {
			fclose(f);
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
		n = fread(buf, 1, PEM_FILE_MAX, f);
		if (ferror(f)) {
			int e = errno;

			fclose(f);
			free(buf);
			return wmap_error_set(err, WMAP_EIO, "unable to read %s %s: %s", what, file,
					      strerror(e ? e : EIO));
		}
		fclose(f);
		data = buf;
		len = n;
	}
	ok = pem_has(data, len, key);
	if (buf) {
		memset(buf, 0, n);
		free(buf);
	}
	if (ok)
		return 0;
	if (file)
		return wmap_error_set(err, WMAP_EINVAL, "%s %s holds no PEM %s", what, file,
				      key ? "private key" : "certificate");
	return wmap_error_set(err, WMAP_EINVAL, "%s-data holds no PEM %s", what,
			      key ? "private key" : "certificate");
}

int wmap_kube_client_new(wmap_kube_client **out, const wmap_kube_config *cfg,
			 const wmap_kube_opts *opts, wmap_error *err)
{
	static const wmap_kube_opts none = { 0 };
	wmap_kube_client *c;
	int rc;

	*out = NULL;
	if (!opts)
		opts = &none;
	if ((rc = check_pem("certificate-authority", cfg->ca_file, cfg->ca_data, cfg->ca_data_len,
			    0, err)) != 0 ||
	    (rc = check_pem("client-certificate", cfg->cert_file, cfg->cert_data,
			    cfg->cert_data_len, 0, err)) != 0 ||
	    (rc = check_pem("client-key", cfg->key_file, cfg->key_data, cfg->key_data_len, 1,
			    err)) != 0)
		return rc;
	if (wmap__curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return wmap_error_set(err, WMAP_EIO, "libcurl could not be initialised");
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	c->cfg = cfg;
	c->retry_after = -1;
	if ((c->warnings = json_array()) == NULL) {
		free(c);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	c->timeout_ms = opts->timeout_ms == 0  ? DEFAULT_TIMEOUT_MS
			: opts->timeout_ms < 0 ? 0
					       : opts->timeout_ms;
	c->max_retries = opts->max_retries == 0  ? DEFAULT_RETRIES
			 : opts->max_retries < 0 ? 0
						 : opts->max_retries;
	c->max_response = opts->max_response ? opts->max_response : DEFAULT_MAX_RESPONSE;
	snprintf(c->user_agent, sizeof(c->user_agent), "%s",
		 opts->user_agent ? opts->user_agent : "kubectl-wmap");
	{
		const char *np = getenv("NO_PROXY");

		if (!np || !np[0])
			np = getenv("no_proxy");
		snprintf(c->no_proxy, sizeof(c->no_proxy), "%s%slocalhost,127.0.0.1,::1",
			 np && np[0] ? np : "", np && np[0] ? "," : "");
	}
	if ((rc = setup_server_name(c, err)) != 0)
		goto fail;
	if ((c->curl = wmap__curl_easy_init()) == NULL) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "libcurl: no handle");
		goto fail;
	}
	*out = c;
	return 0;
fail:
	wmap_kube_client_free(c);
	return rc;
}

void wmap_kube_client_free(wmap_kube_client *c)
{
	if (!c)
		return;
	if (c->curl)
		wmap__curl_easy_cleanup(c->curl);
	if (c->token) {
		memset(c->token, 0, strlen(c->token));
		free(c->token);
	}
	if (c->exec_key) {
		memset(c->exec_key, 0, strlen(c->exec_key));
		free(c->exec_key);
	}
	free(c->exec_cert);
	json_decref(c->warnings);
	free(c->url_base);
	free(c->connect_to);
	free(c);
}

const json_t *wmap_kube_warnings(const wmap_kube_client *c)
{
	return c->warnings;
}

long wmap_kube_retry_after(const wmap_kube_client *c)
{
	return c->retry_after;
}

unsigned wmap_kube_requests(const wmap_kube_client *c)
{
	return c ? c->requests : 0;
}

long wmap_kube__timeout_ms(const wmap_kube_client *c)
{
	return c->timeout_ms;
}

size_t wmap_kube__max_response(const wmap_kube_client *c)
{
	return c->max_response;
}

void wmap_kube__set_retry_after(wmap_kube_client *c, long seconds)
{
	c->retry_after = seconds;
}

int wmap_kube__reauth(wmap_kube_client *c, wmap_error *err)
{
	if (!c->cfg->exec_command && !c->cfg->token_file)
		return 1;
	return refresh_credentials(c, 1, err);
}

const wmap_kube_config *wmap_kube_client_config(const wmap_kube_client *c)
{
	return c->cfg;
}

static void set_blob(CURL *h, CURLoption opt, const char *data, size_t len)
{
	struct curl_blob b;

	b.data = (void *)data;
	b.len = len;
	b.flags = CURL_BLOB_COPY;
	wmap__curl_easy_setopt(h, opt, &b);
}

/* The message kubectl prints for an error response (kube_response.c). */
static int status_error(wmap_error *err, long code, const wmap_buf *body)
{
	return wmap_kube__status_error(err, code, body->data, body->len);
}

/* Appends line to *list through a temporary, as curl's own tool does: a failed append
 * leaves the list whole (to be freed by the caller) instead of losing it. -1 on ENOMEM. */
static int add_header(struct curl_slist **list, const char *line)
{
	struct curl_slist *n = wmap__curl_slist_append(*list, line);

	if (!n)
		return -1;
	*list = n;
	return 0;
}

/* kubeconfig as/as-uid/as-groups/as-user-extra as Impersonate-* headers; -1 on ENOMEM. */
static int impersonation(struct curl_slist **h, const wmap_kube_config *cfg)
{
	char line[1024];
	const char *k;
	size_t i, j;
	json_t *v, *e;

	if (cfg->as_user) {
		snprintf(line, sizeof(line), "Impersonate-User: %s", cfg->as_user);
		if (add_header(h, line))
			return -1;
	}
	if (cfg->as_uid) {
		snprintf(line, sizeof(line), "Impersonate-Uid: %s", cfg->as_uid);
		if (add_header(h, line))
			return -1;
	}
	json_array_foreach(cfg->as_groups, i, v) {
		if (!json_is_string(v))
			continue;
		snprintf(line, sizeof(line), "Impersonate-Group: %s", json_string_value(v));
		if (add_header(h, line))
			return -1;
	}
	json_object_foreach(cfg->as_extra, k, v) {
		char *key = wmap_kube_query_escape(k); /* header names carry the key escaped */
		int rc = key ? 0 : -1;

		json_array_foreach(v, j, e) {
			if (rc || !json_is_string(e))
				continue;
			snprintf(line, sizeof(line), "Impersonate-Extra-%s: %s", key, json_string_value(e));
			rc = add_header(h, line);
		}
		free(key);
		if (rc)
			return -1;
	}
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int wmap_kube__configure(wmap_kube_client *c, CURL *h, const char *url, const char *method,
			 const char *accept, const char *content_type, const char *body,
			 struct curl_slist **hdrs, struct curl_slist **connect_to, wmap_error *err)
{
	const wmap_kube_config *cfg = c->cfg;
	char auth[AUTH_MAX], ctype[256];
	int hfail;

	snprintf(ctype, sizeof(ctype), "Accept: %s", accept ? accept : "application/json");
	hfail = add_header(hdrs, ctype);
	/* No "Expect: 100-continue" round trip before bodies over 1 KiB. */
	hfail = hfail || add_header(hdrs, "Expect:");
	if (content_type && !hfail) {
		snprintf(ctype, sizeof(ctype), "Content-Type: %s", content_type);
		hfail = add_header(hdrs, ctype);
	}
	if (c->token && !hfail) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->token);
		hfail = add_header(hdrs, auth);
		memset(auth, 0, sizeof(auth));
	}
	if (hfail || impersonation(hdrs, cfg))
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	wmap__curl_easy_setopt(h, CURLOPT_URL, url);
	wmap__curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	wmap__curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
	wmap__curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
	wmap__curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	wmap__curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
	if (!cfg->disable_compression)
		wmap__curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	if (body) {
		wmap__curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		wmap__curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	} else if (strcmp(method, "GET") == 0) {
		wmap__curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	}
	if (cfg->insecure) {
		wmap__curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		wmap__curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (cfg->ca_data) {
		set_blob(h, CURLOPT_CAINFO_BLOB, cfg->ca_data, cfg->ca_data_len);
	} else if (cfg->ca_file) {
		wmap__curl_easy_setopt(h, CURLOPT_CAINFO, cfg->ca_file);
	}
	if (c->exec_cert && c->exec_key) {
		set_blob(h, CURLOPT_SSLCERT_BLOB, c->exec_cert, strlen(c->exec_cert));
		set_blob(h, CURLOPT_SSLKEY_BLOB, c->exec_key, strlen(c->exec_key));
	} else {
		if (cfg->cert_data)
			set_blob(h, CURLOPT_SSLCERT_BLOB, cfg->cert_data, cfg->cert_data_len);
		else if (cfg->cert_file)
			wmap__curl_easy_setopt(h, CURLOPT_SSLCERT, cfg->cert_file);
		if (cfg->key_data)
			set_blob(h, CURLOPT_SSLKEY_BLOB, cfg->key_data, cfg->key_data_len);
		else if (cfg->key_file)
			wmap__curl_easy_setopt(h, CURLOPT_SSLKEY, cfg->key_file);
	}
	if (c->connect_to) {
		if (!*connect_to && add_header(connect_to, c->connect_to))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		wmap__curl_easy_setopt(h, CURLOPT_CONNECT_TO, *connect_to);
	}
	/* proxy-url wins over the environment; else curl reads HTTPS_PROXY, and NO_PROXY
	 * plus loopback: like client-go, never proxy requests to this host. */
	if (cfg->proxy_url)
		wmap__curl_easy_setopt(h, CURLOPT_PROXY, cfg->proxy_url);
	else
		wmap__curl_easy_setopt(h, CURLOPT_NOPROXY, c->no_proxy);
	return 0;
}

/* The request's URL: the client's base and path. */
static int url_for(char **url, const wmap_kube_client *c, const char *path, wmap_error *err)
{
	size_t ulen = strlen(c->url_base) + strlen(path) + 1;

	if ((*url = malloc(ulen)) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	snprintf(*url, ulen, "%s%s", c->url_base, path);
	return 0;
}

/* A credential in force (exec plugins and token files read again when due) that fits the
 * Authorization header. */
static int ready_credentials(wmap_kube_client *c, wmap_error *err)
{
	int rc;

	if ((rc = refresh_credentials(c, 0, err)) != 0)
		return rc;
	if (c->token && strlen(c->token) + 32 > AUTH_MAX)
		return wmap_error_set(err, WMAP_ELIMIT, "the bearer token is longer than %d bytes",
				      AUTH_MAX - 32);
	return 0;
}

int wmap_kube__prepare(char **url, wmap_kube_client *c, const char *path, wmap_error *err)
{
	int rc;

	*url = NULL;
	if ((rc = ready_credentials(c, err)) != 0 || (rc = url_for(url, c, path, err)) != 0)
		return rc;
	c->requests++;
	return 0;
}

/* One request across its attempts: where the response goes, what the last attempt got. */
typedef struct exchange {
	wmap_kube_client *c;
	const char *method, *path;
	wmap_buf resp; /* the body */
	wmap_kube__headers hc;
	int attempt, reauthed, max_retries;
	long code; /* the last attempt's HTTP status, 0 when none */
} exchange;

/* The per-attempt settings of the handle the headers were configured on: time limits, where
 * the body and the headers go (emptied of a previous attempt's), the size cap. */
static void setup_transfer(exchange *x, CURL *h)
{
	wmap_kube_client *c = x->c;

	x->hc = (wmap_kube__headers){ -1, c->warnings };
	wmap__curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	wmap__curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
			       c->timeout_ms && c->timeout_ms < 10000 ? c->timeout_ms : 10000L);
	wmap__curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	wmap__curl_easy_setopt(h, CURLOPT_WRITEDATA, &x->resp);
	wmap__curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, wmap_kube__on_header);
	wmap__curl_easy_setopt(h, CURLOPT_HEADERDATA, &x->hc);
	json_array_clear(c->warnings);
	wmap__curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->max_response);

	if (x->resp.error)
		wmap_buf_free(&x->resp); /* a failed attempt: start again */
	else
		wmap_buf_clear(&x->resp);
}

enum { ATTEMPT_DONE,
       ATTEMPT_AGAIN };

/* A transfer that failed (cc): too large a response, a connection failure worth retrying
 * (reads only: ATTEMPT_AGAIN after a pause), or the error kubectl reports. */
static int failed_transfer(exchange *x, CURLcode cc, wmap_error *err)
{
	if (x->resp.error == WMAP_ELIMIT || cc == CURLE_FILESIZE_EXCEEDED)
		return wmap_error_set(err, WMAP_ELIMIT, "the response to %s %s is larger than %zu bytes",
				      x->method, x->path, x->c->max_response);
	if (strcmp(x->method, "GET") == 0 && x->attempt < x->max_retries &&
	    cc != CURLE_OPERATION_TIMEDOUT && cc != CURLE_PEER_FAILED_VERIFICATION &&
	    cc != CURLE_SSL_CACERT_BADFILE && cc != CURLE_SSL_CERTPROBLEM) {
		sleep_ms(100L << x->attempt);
		return ATTEMPT_AGAIN;
	}
	return wmap_error_set(err, WMAP_EIO, "Unable to connect to the server %s: %s",
			      x->c->cfg->server, wmap__curl_easy_strerror(cc));
}

/* What one attempt's outcome calls for: ATTEMPT_DONE (a response to hand over),
 * ATTEMPT_AGAIN (after a fresh credential or a pause), or a negative code with err set. */
static int judge_attempt(exchange *x, CURLcode cc, long *status, wmap_error *err)
{
	wmap_kube_client *c = x->c;
	long code = x->code;
	int rc;

	if (cc != CURLE_OK)
		return failed_transfer(x, cc, err);
	if (code == 401 && !x->reauthed && (rc = wmap_kube__reauth(c, err)) <= 0) {
		/* A credential may have expired: a fresh one is taken once. */
		if (rc != 0)
			return rc;
		x->reauthed = 1;
		x->attempt--;
		return ATTEMPT_AGAIN;
	}
	if ((code == 429 || code == 502 || code == 503 || code == 504 ||
	     (code >= 500 && x->hc.retry_after >= 0)) &&
	    x->attempt < x->max_retries) {
		long wait = x->hc.retry_after >= 0 ? x->hc.retry_after * 1000 : 200L << x->attempt;

		if (wait > RETRY_AFTER_MAX_S * 1000)
			wait = RETRY_AFTER_MAX_S * 1000;
		sleep_ms(wait);
		return ATTEMPT_AGAIN;
	}
	return ATTEMPT_DONE;
}

/* The final response: its status, kubectl's message for an error status, the body as JSON
 * into *out (when asked for, and not a watch). */
static int take_response(exchange *x, json_t **out, long *status, wmap_error *err)
{
	json_error_t je;

	if (status)
		*status = x->code;
	if (x->code < 200 || x->code >= 300)
		return status_error(err, x->code, &x->resp);
	if (out && x->resp.len > 0 &&
	    (*out = json_loadb(x->resp.data, x->resp.len, 0, &je)) == NULL)
		return wmap_error_set(err, WMAP_EINVAL,
				      "the server's answer to %s %s is not JSON: %s (line %d)",
				      x->method, x->path, je.text, je.line);
	return 0;
}

static int request(json_t **out, long *status, wmap_kube_client *c, const char *method,
		   const char *path, const char *accept, const char *content_type,
		   const char *body, wmap_error *err)
{
	exchange x = { c, method, path, WMAP_BUF_INIT(c->max_response, 16384), { -1, c->warnings }, 0, 0, c->max_retries, 0 };
	char *url = NULL;
	struct curl_slist *hdrs = NULL, *connect_to = NULL;
	int rc;

	if (out)
		*out = NULL;
	if (status)
		*status = 0;
	if ((rc = url_for(&url, c, path, err)) != 0)
		return rc;
	if ((rc = ready_credentials(c, err)) != 0)
		goto cleanup;
	for (;; x.attempt++) {
		CURL *h = c->curl;
		CURLcode cc;

		wmap__curl_easy_reset(h);
		wmap__curl_slist_free_all(hdrs);
		hdrs = NULL;
		if ((rc = wmap_kube__configure(c, h, url, method, accept, content_type, body, &hdrs,
					       &connect_to, err)) != 0)
			goto cleanup;
		setup_transfer(&x, h);
		c->requests++;
		cc = wmap__curl_easy_perform(h);
		c->retry_after = x.hc.retry_after;
		x.code = 0;
		if (cc == CURLE_OK)
			wmap__curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x.code);
		if ((rc = judge_attempt(&x, cc, status, err)) != ATTEMPT_AGAIN)
			break;
	}
	if (rc == ATTEMPT_DONE)
		rc = take_response(&x, out, status, err);
cleanup:
	wmap__curl_slist_free_all(hdrs);
	wmap__curl_slist_free_all(connect_to);
	wmap_buf_free(&x.resp);
	free(url);
	return rc;
}

int wmap_kube_request(json_t **out, long *status, wmap_kube_client *c, const char *method,
		      const char *path, const char *content_type, const char *body,
		      wmap_error *err)
{
	return request(out, status, c, method, path, NULL, content_type, body, err);
}

int wmap_kube_get_as(json_t **out, wmap_kube_client *c, const char *path, const char *accept,
		     wmap_error *err)
{
	return request(out, NULL, c, "GET", path, accept, NULL, NULL, err);
}

int wmap_kube_get(json_t **out, wmap_kube_client *c, const char *path, wmap_error *err)
{
	return wmap_kube_request(out, NULL, c, "GET", path, NULL, NULL, err);
}
