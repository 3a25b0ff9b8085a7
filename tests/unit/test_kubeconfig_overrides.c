/* kubectl's connection flags over the kubeconfig (--server, --token, --as, --as-group,
 * --as-uid, --certificate-authority, --client-certificate, --client-key,
 * --insecure-skip-tls-verify, --tls-server-name), as client-go's clientcmd combines them.
 * One table of cases: the kubeconfig context, the flags, then either the fields expected in
 * the resolved config or the error expected. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "wmap/kube.h"

static char dir[256];

static void setup(void)
{
	t_temp_dir(dir, sizeof(dir), "wmap-kco");
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	unsetenv("WMAP_SERVICEACCOUNT_DIR");
	setenv("HOME", dir, 1);
}

static void teardown(void)
{
	t_remove_dir(dir);
}

static const char *write_file(const char *name, const char *text)
{
	return t_write_file(dir, name, text);
}

static const char KUBECONFIG[] =
	"apiVersion: v1\nkind: Config\ncurrent-context: tok\n"
	"clusters:\n"
	"- name: ca-file\n  cluster: {server: \"https://10.0.0.1:6443/\", certificate-authority: ca.crt, tls-server-name: kubernetes}\n"
	"- name: insecure\n  cluster: {server: \"https://10.0.0.2:6443\", insecure-skip-tls-verify: true}\n"
	"- name: both\n  cluster: {server: \"https://10.0.0.3:6443\", insecure-skip-tls-verify: true, certificate-authority-data: aGVsbG8=}\n"
	"contexts:\n"
	"- name: tok\n  context: {cluster: ca-file, user: tok, namespace: team-a}\n"
	"- name: cert\n  context: {cluster: insecure, user: cert}\n"
	"- name: exec\n  context: {cluster: ca-file, user: exec}\n"
	"- name: tokfile\n  context: {cluster: ca-file, user: tokfile}\n"
	"- name: both\n  context: {cluster: both, user: tok}\n"
	"- name: imp\n  context: {cluster: ca-file, user: imp}\n"
	"- name: dangling\n  context: {cluster: gone, user: tok}\n"
	"users:\n"
	"- name: tok\n  user: {token: kc-token}\n"
	"- name: cert\n  user: {client-certificate-data: aGVsbG8=, client-key-data: d29ybGQ=}\n"
	"- name: exec\n  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: cred}}\n"
	"- name: tokfile\n  user: {tokenFile: tok.txt}\n"
	"- name: imp\n  user: {token: kc-token, as-groups: [ml, ops]}\n";

static const char *const G_AB[] = { "a", "b" };

typedef struct override_case {
	const char *name;
	int no_kubeconfig;          /* KUBECONFIG names a missing file: flags only */
	wmap_kube_overrides ov;     /* .kubeconfig is filled in */
	int rc;
	const char *expect;         /* rc 0: "field=value;..." ("-" = unset, "~/" = the folder); else a message part */
} override_case;

static const override_case CASES[] = {
	{ "server and token without any kubeconfig", 1,
	  { .server = "https://h.example:6443/", .token = "flag-token" }, 0,
	  "server=https://h.example:6443;token=flag-token;namespace=default;context=;ca_file=-;in_cluster=0" },
	{ "server without a scheme is https with TLS settings", 1,
	  { .server = "h.example:6443", .token = "t", .ca_file = "ca.pem" }, 0,
	  "server=https://h.example:6443;ca_file=ca.pem" },
	{ "server without a scheme and without TLS settings is http (client-go)", 1,
	  { .server = "h.example:8080", .token = "t" }, 0, "server=http://h.example:8080" },
	{ "--server keeps the cluster's CA and drops its tls-server-name", 0,
	  { .server = "https://10.9.9.9:443" }, 0,
	  "server=https://10.9.9.9:443;ca_file=~/ca.crt;tls_server_name=-;token=kc-token;namespace=team-a" },
	{ "--server with --tls-server-name", 0,
	  { .server = "https://10.9.9.9:443", .tls_server_name = "api.example" }, 0,
	  "tls_server_name=api.example" },
	{ "--tls-server-name alone replaces the kubeconfig's", 0,
	  { .tls_server_name = "api.example" }, 0,
	  "server=https://10.0.0.1:6443;tls_server_name=api.example" },
	{ "--server makes a context's missing cluster unnecessary", 0,
	  { .context = "dangling", .server = "https://10.9.9.9" }, 0,
	  "server=https://10.9.9.9;token=kc-token;ca_file=-" },
	{ "without --server a context's missing cluster is an error", 0,
	  { .context = "dangling" }, WMAP_ENOTFOUND, "cluster \"gone\" does not exist" },
	{ "--insecure-skip-tls-verify clears the kubeconfig's CA", 0,
	  { .insecure = 1 }, 0, "insecure=1;ca_file=-;ca_data=-" },
	{ "--certificate-authority clears the kubeconfig's insecure", 0,
	  { .context = "cert", .ca_file = "/etc/ca.pem" }, 0, "insecure=0;ca_file=/etc/ca.pem" },
	{ "--insecure-skip-tls-verify with --certificate-authority", 0,
	  { .insecure = 1, .ca_file = "/etc/ca.pem" }, WMAP_EINVAL,
	  "specifying a root certificates file with the insecure flag is not allowed" },
	{ "a kubeconfig cluster with insecure and a CA", 0,
	  { .context = "both" }, WMAP_EINVAL,
	  "specifying a root certificates file with the insecure flag is not allowed" },
	{ "--insecure-skip-tls-verify settles a kubeconfig cluster with insecure and a CA", 0,
	  { .context = "both", .insecure = 1 }, 0, "insecure=1;ca_data=-" },
	{ "--token over a client-certificate user: both are sent", 0,
	  { .context = "cert", .token = "flag-token" }, 0,
	  "token=flag-token;cert_data=hello;key_data=world" },
	{ "--token over an exec user: the plugin is not run", 0,
	  { .context = "exec", .token = "flag-token" }, 0, "token=flag-token;exec_command=-" },
	{ "--token with a tokenFile user: the file still wins (client-go)", 0,
	  { .context = "tokfile", .token = "flag-token" }, 0,
	  "token=flag-token;token_file=~/tok.txt" },
	{ "a client certificate and key over an exec user: the plugin is not run", 0,
	  { .context = "exec", .cert_file = "c.pem", .key_file = "k.pem" }, 0,
	  "cert_file=c.pem;key_file=k.pem;exec_command=-" },
	{ "--client-certificate and --client-key replace the user's data", 0,
	  { .context = "cert", .cert_file = "c.pem", .key_file = "k.pem" }, 0,
	  "cert_file=c.pem;cert_data=-;key_file=k.pem;key_data=-" },
	{ "--client-certificate alone keeps the user's key", 0,
	  { .context = "cert", .cert_file = "c.pem" }, 0, "cert_file=c.pem;cert_data=-;key_data=world" },
	{ "--client-certificate without any key", 0,
	  { .cert_file = "c.pem" }, WMAP_EINVAL, "user \"tok\" has a client certificate but no client key" },
	{ "--client-certificate without a key and without a kubeconfig", 1,
	  { .server = "https://h", .cert_file = "c.pem" }, WMAP_EINVAL,
	  "--client-certificate needs --client-key" },
	{ "--client-key without a certificate is ignored", 0,
	  { .key_file = "k.pem" }, 0, "key_file=-;cert_file=-;token=kc-token" },
	{ "--as, --as-group twice, --as-uid", 0,
	  { .as_user = "bob", .as_uid = "42", .as_groups = G_AB, .n_as_groups = 2 }, 0,
	  "as_user=bob;as_uid=42;as_groups=a,b" },
	{ "--as keeps the kubeconfig's as-groups", 0,
	  { .context = "imp", .as_user = "bob" }, 0, "as_user=bob;as_groups=ml,ops" },
	{ "--as-group replaces the kubeconfig's as-groups", 0,
	  { .context = "imp", .as_user = "bob", .as_groups = G_AB, .n_as_groups = 2 }, 0,
	  "as_groups=a,b" },
	{ "--as-group without --as", 1,
	  { .server = "https://h", .as_groups = G_AB, .n_as_groups = 2 }, WMAP_EINVAL,
	  "--as-uid and --as-group need --as" },
	{ "kubeconfig as-groups without as", 0,
	  { .context = "imp" }, WMAP_EINVAL,
	  "user \"imp\": requesting uid, groups or user-extra without impersonating a user" },
	{ "--as-uid without --as", 0,
	  { .as_uid = "42" }, WMAP_EINVAL, "without impersonating a user" },
	{ "--server with an unsupported scheme", 0,
	  { .server = "ftp://h" }, WMAP_EINVAL, "invalid --server \"ftp://h\": unsupported scheme \"ftp\"" },
	{ "--server without a host", 0,
	  { .server = "https://" }, WMAP_EINVAL, "host must be a URL or a host:port pair" },
	{ "--server with a bad port", 0,
	  { .server = "https://h:65536" }, WMAP_EINVAL, "invalid port \"65536\"" },
	{ "--server with a space", 0,
	  { .server = "https://h x" }, WMAP_EINVAL, "a server URL has no spaces" },
	{ "--server with an IPv6 address", 1,
	  { .server = "https://[fd00::1]:6443", .insecure = 1 }, 0, "server=https://[fd00::1]:6443" },
	{ "empty flags are not given (kubectl)", 0,
	  { .server = "", .token = "", .as_user = "", .cert_file = "" }, 0,
	  "server=https://10.0.0.1:6443;token=kc-token;as_user=-;cert_file=-" },
};

static const char *field(const wmap_kube_config *c, const char *name, char *buf, size_t len)
{
#define S(f) if (strcmp(name, #f) == 0) return c->f;
	S(server) S(token) S(token_file) S(ca_file) S(ca_data) S(tls_server_name) S(cert_file)
	S(cert_data) S(key_file) S(key_data) S(as_user) S(as_uid) S(exec_command) S(context)
	S(namespace_)
#undef S
	if (strcmp(name, "namespace") == 0)
		return c->namespace_;
	if (strcmp(name, "insecure") == 0 || strcmp(name, "in_cluster") == 0) {
		snprintf(buf, len, "%d", name[1] == 'n' && name[2] == 's' ? c->insecure : c->in_cluster);
		return buf;
	}
	if (strcmp(name, "as_groups") == 0) {
		size_t i, n = 0;
		json_t *g;

		buf[0] = '\0';
		if (!c->as_groups)
			return NULL;
		json_array_foreach(c->as_groups, i, g)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "",
					      json_string_value(g));
		return buf;
	}
	cr_assert_fail("unknown field %s", name);
	return NULL;
}

static void check_fields(const override_case *t, const wmap_kube_config *c)
{
	char spec[512], *save = NULL, *item, want[512], buf[256];

	snprintf(spec, sizeof(spec), "%s", t->expect);
	for (item = strtok_r(spec, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(item, '=');
		const char *got;

		cr_assert_not_null(eq, "%s: bad expectation %s", t->name, item);
		*eq = '\0';
		if (strncmp(eq + 1, "~/", 2) == 0)
			snprintf(want, sizeof(want), "%s/%s", dir, eq + 3);
		else
			snprintf(want, sizeof(want), "%s", eq + 1);
		got = field(c, item, buf, sizeof(buf));
		if (strcmp(want, "-") == 0)
			cr_expect_null(got, "%s: %s should be unset, is %s", t->name, item, got);
		else
			cr_expect(got && strcmp(got, want) == 0, "%s: %s is %s, want %s", t->name, item,
				  got ? got : "(unset)", want);
	}
}

TestSuite(kubeconfig_overrides, .init = setup, .fini = teardown);

Test(kubeconfig_overrides, flags_over_the_kubeconfig_as_clientcmd)
{
	const char *kc = write_file("config", KUBECONFIG);
	char missing[300];

	snprintf(missing, sizeof(missing), "%s/missing", dir);
	for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
		const override_case *t = &CASES[i];
		wmap_kube_overrides ov = t->ov;
		wmap_kube_config *c = NULL;
		wmap_error err = { 0 };
		int rc;

		if (t->no_kubeconfig)
			setenv("KUBECONFIG", missing, 1);
		else
			ov.kubeconfig = kc;
		rc = wmap_kubeconfig_load(&c, &ov, &err);
		unsetenv("KUBECONFIG");
		cr_expect_eq(rc, t->rc, "%s: rc %d, want %d (%s)", t->name, rc, t->rc, err.message);
		if (rc == 0 && c)
			check_fields(t, c);
		else if (rc != 0)
			cr_expect(strstr(err.message, t->expect) != NULL, "%s: message \"%s\" lacks \"%s\"",
				  t->name, err.message, t->expect);
		cr_expect(strstr(err.message, "flag-token") == NULL && strstr(err.message, "kc-token") == NULL,
			  "%s: a token in the message", t->name);
		wmap_kubeconfig_free(c);
	}
}

Test(kubeconfig_overrides, server_flag_is_not_in_cluster)
{
	char sa[400], missing[300];
	wmap_kube_overrides ov = { .server = "https://10.1.1.1:6443", .token = "flag-token" };
	wmap_kube_config *c = NULL;
	wmap_error err = { 0 };

	snprintf(sa, sizeof(sa), "%s/sa", dir);
	mkdir(sa, 0700);
	write_file("sa/token", "sa-token\n");
	write_file("sa/ca.crt", "x");
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	setenv("KUBECONFIG", missing, 1);
	setenv("WMAP_SERVICEACCOUNT_DIR", sa, 1);
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.10", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);

	/* --server: the flags are a config of their own, as client-go's non-default config. */
	cr_assert_eq(wmap_kubeconfig_load(&c, &ov, &err), 0, "%s", err.message);
	cr_expect_not(c->in_cluster);
	cr_expect_str_eq(c->server, "https://10.1.1.1:6443");
	cr_expect_str_eq(c->token, "flag-token");
	wmap_kubeconfig_free(c);

	/* In cluster, --token and --certificate-authority apply (client-go's inClusterClientConfig). */
	ov.server = NULL;
	ov.ca_file = "/etc/other-ca.pem";
	cr_assert_eq(wmap_kubeconfig_load(&c, &ov, &err), 0, "%s", err.message);
	cr_expect(c->in_cluster);
	cr_expect_str_eq(c->server, "https://10.0.0.10:443");
	cr_expect_str_eq(c->token, "flag-token");
	cr_expect_null(c->token_file, "--token replaces the service account token");
	cr_expect_str_eq(c->ca_file, "/etc/other-ca.pem");
	wmap_kubeconfig_free(c);
	unsetenv("KUBECONFIG");
	unsetenv("WMAP_SERVICEACCOUNT_DIR");
}
