/* The API client against a scripted plain-HTTP server on loopback: retries with
 * Retry-After, bounded retries, kubectl-like Status messages, the response cap, connection
 * reuse, the bearer token, and the request timeout. */
#define _GNU_SOURCE   /* memmem */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "../../src/kube/kube_int.h"
#include "wmap/kube.h"

typedef struct reply {
	int status;
	const char *headers;    /* extra header lines, each ending in \r\n */
	const char *body;
	size_t big;             /* >0: a body of that many 'x' instead */
	int delay_ms;
} reply;

static struct server {
	int fd, port;
	pthread_t thread;
	const reply *script;
	size_t n_script;
	int requests, connections;
	char last_auth[256];
	char last_head[4096];
	int stop;
} S;

static void handle(int c)
{
	char buf[65536];
	size_t len = 0;

	for (;;) {
		char *end;
		ssize_t r;
		const reply *rp;
		char head[1024];

		while (!(end = memmem(buf, len, "\r\n\r\n", 4))) {
			if (len == sizeof(buf) || (r = read(c, buf + len, sizeof(buf) - len)) <= 0)
				return;
			len += (size_t)r;
		}
		snprintf(S.last_head, sizeof(S.last_head), "%.*s", (int)(end - buf), buf);
		{
			char *a = memmem(buf, (size_t)(end - buf), "Authorization: ", 15);

			if (a)
				snprintf(S.last_auth, sizeof(S.last_auth), "%.*s", (int)strcspn(a + 15, "\r\n"), a + 15);
		}
		len -= (size_t)(end + 4 - buf);
		memmove(buf, end + 4, len);
		rp = &S.script[S.requests < (int)S.n_script ? S.requests : (int)S.n_script - 1];
		S.requests++;
		if (rp->delay_ms) {
			struct timespec ts = { rp->delay_ms / 1000, (rp->delay_ms % 1000) * 1000000L };

			nanosleep(&ts, NULL);
		}
		size_t blen = rp->big ? rp->big : strlen(rp->body ? rp->body : "");
		snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%sContent-Length: %zu\r\n\r\n",
			 rp->status, rp->headers ? rp->headers : "", blen);
		if (write(c, head, strlen(head)) < 0)
			return;
		if (rp->big) {
			char *b = malloc(rp->big);

			memset(b, 'x', rp->big);
			if (write(c, b, rp->big) < 0) {
				free(b);
				return;
			}
			free(b);
		} else if (blen && write(c, rp->body, blen) < 0) {
			return;
		}
	}
}

static void *serve(void *arg)
{
	(void)arg;
	while (!S.stop) {
		int c = accept(S.fd, NULL, NULL);

		if (c < 0)
			break;
		S.connections++;
		handle(c);
		close(c);
	}
	return NULL;
}

static void start(const reply *script, size_t n)
{
	memset(&S, 0, sizeof(S));
	S.script = script;
	S.n_script = n;
	S.fd = t_listen_loopback(8, &S.port);
	pthread_create(&S.thread, NULL, serve, NULL);
}

static wmap_kube_config cfg;
static char server_url[64];

static wmap_kube_client *client(long timeout_ms, int retries, size_t cap)
{
	wmap_kube_opts o = { .timeout_ms = timeout_ms, .max_retries = retries, .max_response = cap };
	wmap_kube_client *c = NULL;
	wmap_error err = { 0 };

	memset(&cfg, 0, sizeof(cfg));
	snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%d", S.port);
	cfg.server = server_url;
	cfg.token = "sekret-token-42";
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	cr_assert_eq(wmap_kube_client_new(&c, &cfg, &o, &err), 0, "%s", err.message);
	return c;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NOTFOUND "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"jobsets.jobset.x-k8s.io \\\"x\\\" not found\",\"reason\":\"NotFound\",\"code\":404}"

Test(kube, retries_429_honouring_retry_after)
{
	static const reply script[] = {
		{ 429, "Retry-After: 1\r\n", "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"message\":\"slow down\"}", 0, 0 },
		{ 200, NULL, "{\"ok\":true}", 0, 0 },
	};
	wmap_kube_client *c;
	wmap_error err = { 0 };
	json_t *out = NULL;
	struct timespec t0, t1;

	start(script, N(script));
	c = client(0, 3, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_expect_eq(wmap_kube_get(&out, c, "/api/v1", &err), 0, "%s", err.message);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_expect(json_is_true(json_object_get(out, "ok")));
	cr_expect_eq(S.requests, 2);
	cr_expect_geq(t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9, 0.9, "waited Retry-After");
	cr_expect_str_eq(S.last_auth, "Bearer sekret-token-42");
	json_decref(out);
	wmap_kube_client_free(c);
}

Test(kube, retries_are_bounded)
{
	static const reply script[] = { { 503, NULL, "unavailable", 0, 0 } };
	wmap_kube_client *c;
	wmap_error err = { 0 };
	long status = 0;

	start(script, N(script));
	c = client(0, 2, 0);
	cr_expect_eq(wmap_kube_request(NULL, &status, c, "GET", "/x", NULL, NULL, &err), WMAP_EIO);
	cr_expect_eq(status, 503);
	cr_expect_eq(S.requests, 3, "one try and two retries");
	cr_expect(strstr(err.message, "Error from server (InternalError): the server responded with status 503") != NULL,
		  "%s", err.message);
	wmap_kube_client_free(c);
}

Test(kube, status_errors_read_like_kubectl)
{
	static const reply script[] = {
		{ 404, NULL, NOTFOUND, 0, 0 },
		{ 500, NULL, "{\"kind\":\"Status\",\"reason\":\"InternalError\",\"message\":\"Internal error occurred: failed calling webhook\"}", 0, 0 },
		{ 401, NULL, "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"message\":\"Unauthorized\"}", 0, 0 },
	};
	wmap_kube_client *c;
	wmap_error err = { 0 };
	long status = 0;

	start(script, N(script));
	c = client(0, 3, 0);
	cr_expect_eq(wmap_kube_get(NULL, c, "/a", &err), WMAP_ENOTFOUND);
	cr_expect_str_eq(err.message, "Error from server (NotFound): jobsets.jobset.x-k8s.io \"x\" not found");
	cr_expect_eq(wmap_kube_request(NULL, &status, c, "PATCH", "/b", "application/json-patch+json", "[]", &err), WMAP_EIO);
	cr_expect_eq(status, 500);
	cr_expect_eq(S.requests, 2, "a webhook's 500 without Retry-After is final");
	cr_expect_str_eq(err.message, "Error from server (InternalError): Internal error occurred: failed calling webhook");
	cr_expect_eq(wmap_kube_get(NULL, c, "/c", &err), WMAP_EIO);
	cr_expect_str_eq(err.message, "You must be logged in to the server (Unauthorized)");
	cr_expect(strstr(err.message, "sekret") == NULL);
	cr_expect_eq(S.connections, 1, "one connection kept alive for every request");
	wmap_kube_client_free(c);
}

Test(kube, response_size_is_capped)
{
	static const reply script[] = { { 200, NULL, NULL, 2u << 20, 0 } };
	wmap_kube_client *c;
	wmap_error err = { 0 };
	json_t *out = NULL;

	start(script, N(script));
	c = client(0, 3, 1u << 20);
	cr_expect_eq(wmap_kube_get(&out, c, "/big", &err), WMAP_ELIMIT);
	cr_expect(strstr(err.message, "larger than 1048576 bytes") != NULL, "%s", err.message);
	cr_expect_null(out);
	wmap_kube_client_free(c);
}

Test(kube, request_timeout)
{
	static const reply script[] = { { 200, NULL, "{}", 0, 3000 } };
	wmap_kube_client *c;
	wmap_error err = { 0 };
	struct timespec t0, t1;

	start(script, N(script));
	c = client(300, 3, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_expect_eq(wmap_kube_get(NULL, c, "/slow", &err), WMAP_EIO);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_expect(strstr(err.message, "Unable to connect to the server") != NULL, "%s", err.message);
	cr_expect_lt(t1.tv_sec - t0.tv_sec, 2, "timed out, not retried: timeouts are final");
	wmap_kube_client_free(c);
}

Test(kube, impersonation_headers)
{
	static const reply script[] = { { 200, NULL, "{}", 0, 0 } };
	wmap_kube_client *c;
	wmap_error err = { 0 };

	start(script, N(script));
	c = client(0, 3, 0);
	cfg.as_user = "jane";
	cfg.as_groups = json_pack("[s, s]", "ml", "ops");
	cfg.as_extra = json_pack("{s:[s]}", "scopes.example/x", "view");
	cr_expect_eq(wmap_kube_get(NULL, c, "/x", &err), 0, "%s", err.message);
	cr_expect(strstr(S.last_head, "Impersonate-User: jane\r\n") != NULL, "%s", S.last_head);
	cr_expect(strstr(S.last_head, "Impersonate-Group: ml\r\nImpersonate-Group: ops\r\n") != NULL, "%s", S.last_head);
	cr_expect(strstr(S.last_head, "Impersonate-Extra-scopes.example%2Fx: view") != NULL, "%s", S.last_head);
	json_decref(cfg.as_groups);
	json_decref(cfg.as_extra);
	wmap_kube_client_free(c);
}

Test(kube, aggregated_discovery_in_two_requests)
{
	static const reply script[] = {
		{ 200, NULL, "{\"kind\":\"APIGroupDiscoveryList\",\"apiVersion\":\"apidiscovery.k8s.io/v2\",\"items\":["
			     "{\"metadata\":{},\"versions\":[{\"version\":\"v1\",\"resources\":["
			     "{\"resource\":\"pods\",\"responseKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
			     "\"scope\":\"Namespaced\",\"singularResource\":\"pod\",\"shortNames\":[\"po\"]}]}]}]}", 0, 0 },
		{ 200, NULL, "{\"kind\":\"APIGroupDiscoveryList\",\"apiVersion\":\"apidiscovery.k8s.io/v2\",\"items\":["
			     "{\"metadata\":{\"name\":\"jobset.x-k8s.io\"},\"versions\":["
			     "{\"version\":\"v1alpha2\",\"resources\":[{\"resource\":\"jobsets\",\"responseKind\":"
			     "{\"group\":\"jobset.x-k8s.io\",\"version\":\"v1alpha2\",\"kind\":\"JobSet\"},"
			     "\"scope\":\"Namespaced\",\"singularResource\":\"jobset\",\"shortNames\":[\"js\"]}]},"
			     "{\"version\":\"v1alpha1\",\"resources\":[{\"resource\":\"jobsets\",\"responseKind\":"
			     "{\"group\":\"jobset.x-k8s.io\",\"version\":\"v1alpha1\",\"kind\":\"JobSet\"},"
			     "\"scope\":\"Namespaced\",\"singularResource\":\"jobset\"}]}]}]}", 0, 0 },
	};
	char dir[64];
	const wmap_api_resource *r = NULL;
	wmap_discovery *d = NULL;
	wmap_kube_client *c;
	wmap_error err = { 0 };

	t_temp_dir(dir, sizeof(dir), "wmap-agg");
	setenv("WMAP_CACHE_DIR", dir, 1);
	start(script, N(script));
	c = client(0, 3, 0);
	cr_assert_eq(wmap_discovery_load(&d, c, 0, &err), 0, "%s", err.message);
	cr_expect_eq(S.requests, 2, "/api and /apis, nothing else");
	cr_expect(strstr(S.last_head, "as=APIGroupDiscoveryList") != NULL, "%s", S.last_head);
	cr_expect_eq(wmap_discovery_resolve(&r, d, "js", &err), 0, "%s", err.message);
	cr_expect_str_eq(r->version, "v1alpha2", "the first version listed is preferred");
	cr_expect_eq(wmap_discovery_resolve(&r, d, "po", &err), 0, "%s", err.message);
	cr_expect(r->namespaced);
	cr_expect_eq(wmap_discovery_resolve(&r, d, "jobsets.v1alpha1.jobset.x-k8s.io", &err), 0);
	wmap_discovery_free(d);
	/* Read back from the cache: no request. */
	cr_assert_eq(wmap_discovery_load(&d, c, 0, &err), 0, "%s", err.message);
	cr_expect(wmap_discovery_cached(d));
	cr_expect_eq(S.requests, 2);
	wmap_discovery_free(d);
	wmap_kube_client_free(c);
	t_remove_dir(dir);
}

/* The CA, client certificate and key are read when the client is made (as client-go builds
 * its transport): a missing file or one of the wrong kind fails before any request, naming
 * the file and never its content. */
Test(kube, certificate_files_checked_before_any_request)
{
	char dir[64], crt[128], key[128];
	static const char cert_pem[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
	static const char key_pem[] = "-----BEGIN EC PRIVATE KEY-----\nsekret-key-material\n-----END EC PRIVATE KEY-----\n";
	wmap_kube_config k = { .server = "https://127.0.0.1:1" };
	wmap_kube_client *c = NULL;
	wmap_error err = { 0 };

	t_temp_dir(dir, sizeof(dir), "wmap-pem");
	snprintf(crt, sizeof(crt), "%s", t_write_file(dir, "c.pem", cert_pem));
	snprintf(key, sizeof(key), "%s", t_write_file(dir, "k.pem", key_pem));

	k.ca_file = "/nonexistent/ca.crt";
	cr_expect_eq(wmap_kube_client_new(&c, &k, NULL, &err), WMAP_EIO);
	cr_expect(strstr(err.message, "unable to read certificate-authority /nonexistent/ca.crt") != NULL,
		  "%s", err.message);
	k.ca_file = key;
	cr_expect_eq(wmap_kube_client_new(&c, &k, NULL, &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "holds no PEM certificate") != NULL, "%s", err.message);
	cr_expect(strstr(err.message, "sekret") == NULL, "%s", err.message);
	k.ca_file = crt;
	k.cert_file = crt;
	k.key_file = crt;
	cr_expect_eq(wmap_kube_client_new(&c, &k, NULL, &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "client-key") != NULL && strstr(err.message, "holds no PEM private key") != NULL,
		  "%s", err.message);
	k.key_file = key;
	cr_expect_eq(wmap_kube_client_new(&c, &k, NULL, &err), 0, "%s", err.message);
	wmap_kube_client_free(c);
	c = NULL;
	k.ca_file = NULL;
	k.ca_data = "not a certificate";
	k.ca_data_len = strlen(k.ca_data);
	cr_expect_eq(wmap_kube_client_new(&c, &k, NULL, &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "certificate-authority-data holds no PEM certificate") != NULL,
		  "%s", err.message);
	t_remove_dir(dir);
}

/* ---- kube_response.c: what comes back besides objects ------------------------------ */

Test(kube_response, exec_credential_takes_a_token_or_a_certificate_and_never_quotes_them)
{
	const char *v1 = "client.authentication.k8s.io/v1";
	wmap_kube__credential c;
	wmap_error err = { 0 };
	const char *ok = "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
			 "\"ExecCredential\",\"status\":{\"token\":\"s3cret-t0ken-value\","
			 "\"expirationTimestamp\":\"2030-01-02T03:04:05Z\"}}";
	cr_assert_eq(wmap_kube__exec_credential(&c, ok, strlen(ok), v1, "plug", &err), 0, "%s",
		     err.message);
	cr_expect_str_eq(c.token, "s3cret-t0ken-value");
	cr_expect_null(c.cert);
	cr_expect_eq(c.expiry, (time_t)1893553445);
	wmap_kube__credential_clear(&c);
	cr_expect_null(c.token);

	/* Another apiVersion: refused, naming the plugin, without the token. */
	cr_expect_eq(wmap_kube__exec_credential(&c, ok, strlen(ok),
						"client.authentication.k8s.io/v1beta1", "plug",
						&err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "plug") && !strstr(err.message, "s3cret"), "%s",
		  err.message);
	cr_expect_null(c.token);
	/* A certificate without its key, and text that is not JSON. */
	const char *half = "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
			   "\"ExecCredential\",\"status\":{\"clientCertificateData\":\"PEM\"}}";
	cr_expect_eq(wmap_kube__exec_credential(&c, half, strlen(half), v1, "plug", &err),
		     WMAP_EINVAL);
	cr_expect(strstr(err.message, "neither a token nor") != NULL, "%s", err.message);
	cr_expect_eq(wmap_kube__exec_credential(&c, "oops", 4, v1, "plug", &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "not an ExecCredential") != NULL, "%s", err.message);
	cr_expect_eq(wmap_kube__exec_credential(&c, NULL, 0, v1, "plug", &err), WMAP_EINVAL);
}

Test(kube_response, status_bodies_become_kubectls_messages)
{
	wmap_error err = { 0 };
	const char *st = "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"message\":"
			 "\"jobsets.jobset.x-k8s.io \\\"x\\\" not found\"}";
	cr_expect_eq(wmap_kube__status_error(&err, 404, st, strlen(st)), WMAP_ENOTFOUND);
	cr_expect_str_eq(err.message, "Error from server (NotFound): jobsets.jobset.x-k8s.io "
				      "\"x\" not found");
	const char *html = "<html>\r\n<b>bad gateway</b>\n</html>";
	cr_expect_eq(wmap_kube__status_error(&err, 502, html, strlen(html)), WMAP_EIO);
	cr_expect_str_eq(err.message, "Error from server (InternalError): the server responded "
				      "with status 502: <html>  <b>bad gateway</b> </html>");
	cr_expect_eq(wmap_kube__status_error(&err, 401, NULL, 0), WMAP_EIO);
	cr_expect_str_eq(err.message, "You must be logged in to the server (Unauthorized)");
	cr_expect_eq(wmap_kube__status_error(&err, 403, NULL, 0), WMAP_EIO);
	cr_expect_str_eq(err.message, "Error from server (Forbidden): the server responded with "
				      "status 403");
}
