/* kubeconfig resolution as kubectl does it: merging, overrides, relative paths, data fields,
 * exec settings, in-cluster config, and errors that name file:line:col. */
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
	t_temp_dir(dir, sizeof(dir), "wmap-kc");
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
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

#define BASE \
	"apiVersion: v1\nkind: Config\ncurrent-context: a\n" \
	"clusters:\n- name: c1\n  cluster: {server: \"https://10.0.0.1:6443/\", certificate-authority: certs/ca.crt, tls-server-name: kubernetes}\n" \
	"- name: c2\n  cluster: {server: \"https://10.0.0.2:6443\", insecure-skip-tls-verify: true, proxy-url: \"http://proxy:3128\"}\n" \
	"contexts:\n- name: a\n  context: {cluster: c1, user: u1, namespace: team-a}\n" \
	"- name: b\n  context: {cluster: c2, user: u2}\n" \
	"users:\n- name: u1\n  user: {token: secret-token-1}\n" \
	"- name: u2\n  user: {client-certificate-data: aGVsbG8=, client-key-data: d29ybGQ=}\n"

TestSuite(kubeconfig, .init = setup, .fini = teardown);

Test(kubeconfig, reads_current_context_cluster_user_namespace)
{
	wmap_kube_overrides ov = { .kubeconfig = write_file("config", BASE) };
	wmap_kube_config *c = NULL;
	wmap_error err = { 0 };
	char want[600];

	cr_assert_eq(wmap_kubeconfig_load(&c, &ov, &err), 0, "%s", err.message);
	cr_expect_str_eq(c->context, "a");
	cr_expect_str_eq(c->server, "https://10.0.0.1:6443", "trailing slash dropped");
	cr_expect_str_eq(c->namespace_, "team-a");
	cr_expect_str_eq(c->token, "secret-token-1");
	cr_expect_str_eq(c->tls_server_name, "kubernetes");
	snprintf(want, sizeof(want), "%s/certs/ca.crt", dir);
	cr_expect_str_eq(c->ca_file, want, "relative paths are relative to the kubeconfig's folder");
	wmap_kubeconfig_free(c);
}

Test(kubeconfig, flags_override_context_cluster_user_namespace)
{
	wmap_kube_overrides ov = { .kubeconfig = write_file("config", BASE), .context = "b",
				   .namespace_ = "ns1" };
	wmap_kube_config *c = NULL;
	wmap_error err = { 0 };

	cr_assert_eq(wmap_kubeconfig_load(&c, &ov, &err), 0, "%s", err.message);
	cr_expect_str_eq(c->server, "https://10.0.0.2:6443");
	cr_expect(c->insecure);
	cr_expect_str_eq(c->proxy_url, "http://proxy:3128");
	cr_expect_str_eq(c->namespace_, "ns1");
	cr_expect_str_eq(c->cert_data, "hello", "base64 data decoded");
	cr_expect_str_eq(c->key_data, "world");
	wmap_kubeconfig_free(c);

	ov.context = NULL;
	ov.namespace_ = NULL;
	ov.user = "u2";
	ov.cluster = "c2";
	cr_assert_eq(wmap_kubeconfig_load(&c, &ov, &err), 0, "%s", err.message);
	cr_expect_str_eq(c->server, "https://10.0.0.2:6443");
	cr_expect_null(c->token);
	cr_expect_str_eq(c->namespace_, "team-a", "the context's namespace");
	wmap_kubeconfig_free(c);
}

Test(kubeconfig, default_namespace_and_home_config)
{
	wmap_kube_config *c = NULL;
	wmap_error err = { 0 };
	char kdir[400];

	snprintf(kdir, sizeof(kdir), "%s/.kube", dir);
	mkdir(kdir, 0700);
	write_file(".kube/config", BASE);
	wmap_kube_overrides ov = { .context = "b" };
	cr_assert_eq(wmap_kubeconfig_load(&c, &ov, &err), 0, "%s", err.message);
	cr_expect_str_eq(c->namespace_, "default");
	cr_expect_not(c->namespace_explicit);
	wmap_kubeconfig_free(c);
}

Test(kubeconfig, kubeconfig_env_merges_first_wins_and_skips_missing)
{
	const char *first = write_file("first",
		"apiVersion: v1\nkind: Config\ncurrent-context: b\n"
		"users:\n- name: u2\n  user: {token: from-first}\n");
	const char *second = write_file("second", BASE);
	char env[1200];
	wmap_kube_config *c = NULL;
	wmap_error err = { 0 };

	snprintf(env, sizeof(env), "%s/missing::%s:%s", dir, first, second);
	setenv("KUBECONFIG", env, 1);
	cr_assert_eq(wmap_kubeconfig_load(&c, NULL, &err), 0, "%s", err.message);
	cr_expect_str_eq(c->context, "b", "current-context from the first file setting it");
	cr_expect_str_eq(c->token, "from-first", "a user is taken whole from the first file");
	cr_expect_null(c->cert_data, "later fields of the same user are discarded");
	cr_expect_str_eq(c->server, "https://10.0.0.2:6443");
	wmap_kubeconfig_free(c);
}

Test(kubeconfig, merge_is_by_name)
{
	json_t *a = json_loads("{\"current-context\":\"x\",\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"s1\"}}]}", 0, NULL);
	json_t *b = json_loads("{\"current-context\":\"y\",\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"s2\"}},{\"name\":\"d\",\"cluster\":{\"server\":\"s3\"}}]}", 0, NULL);
	json_t *docs[2] = { a, b };
	json_t *m = wmap_kubeconfig_merge(docs, 2);

	cr_assert_not_null(m);
	cr_expect_str_eq(json_string_value(json_object_get(m, "current-context")), "x");
	cr_expect_eq(json_array_size(json_object_get(m, "clusters")), 2);
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(json_object_get(m, "clusters"), 0), "cluster"), "server")), "s1");
	json_decref(a);
	json_decref(b);
	json_decref(m);
}

Test(kubeconfig, malformed_files_name_file_line_column)
{
	wmap_kube_overrides ov = { .kubeconfig = write_file("bad", "apiVersion: v1\nclusters:\n- name: c\n  cluster: {server: \"x\"\n") };
	wmap_kube_config *c = NULL;
	wmap_error err = { 0 };
	char want[400];

	cr_expect_eq(wmap_kubeconfig_load(&c, &ov, &err), WMAP_EINVAL);
	snprintf(want, sizeof(want), "%s:", ov.kubeconfig);
	cr_expect(strstr(err.message, want) != NULL, "%s", err.message);

	ov.kubeconfig = write_file("shape", "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: [1]\n");
	cr_expect_eq(wmap_kubeconfig_load(&c, &ov, &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "shape:4:") != NULL, "%s", err.message);
	cr_expect(strstr(err.message, "users[0].user must be a mapping") != NULL, "%s", err.message);
}

Test(kubeconfig, errors_never_show_secrets)
{
	wmap_kube_overrides ov = { .kubeconfig = write_file("config",
		"apiVersion: v1\nkind: Config\ncurrent-context: a\n"
		"clusters:\n- name: c\n  cluster: {server: \"https://x\"}\n"
		"contexts:\n- name: a\n  context: {cluster: c, user: u}\n"
		"users:\n- name: u\n  user: {token: top-secret-1, client-key-data: \"!!notbase64\"}\n") };
	wmap_kube_config *c = NULL;
	wmap_error err = { 0 };

	cr_expect_neq(wmap_kubeconfig_load(&c, &ov, &err), 0);
	cr_expect(strstr(err.message, "client-key-data is not valid base64") != NULL, "%s", err.message);
	cr_expect(strstr(err.message, "top-secret") == NULL);
	cr_expect(strstr(err.message, "notbase64") == NULL);
}

Test(kubeconfig, missing_context_cluster_user)
{
	wmap_kube_overrides ov = { .kubeconfig = write_file("config", BASE), .context = "zz" };
	wmap_kube_config *c = NULL;
	wmap_error err = { 0 };

	cr_expect_eq(wmap_kubeconfig_load(&c, &ov, &err), WMAP_ENOTFOUND);
	cr_expect(strstr(err.message, "context \"zz\" does not exist") != NULL, "%s", err.message);
	ov.context = NULL;
	ov.cluster = "nope";
	cr_expect_eq(wmap_kubeconfig_load(&c, &ov, &err), WMAP_ENOTFOUND);
	cr_expect(strstr(err.message, "cluster \"nope\" does not exist") != NULL, "%s", err.message);
	ov.kubeconfig = "/nonexistent/kubeconfig";
	cr_expect_eq(wmap_kubeconfig_load(&c, &ov, &err), WMAP_EIO, "--kubeconfig must exist");
}

Test(kubeconfig, exec_settings)
{
	wmap_kube_overrides ov = { .kubeconfig = write_file("config",
		"apiVersion: v1\nkind: Config\ncurrent-context: a\n"
		"clusters:\n- name: c\n  cluster:\n    server: \"https://x\"\n"
		"    extensions: [{name: client.authentication.k8s.io/exec, extension: {audience: a}}]\n"
		"contexts:\n- name: a\n  context: {cluster: c, user: u}\n"
		"users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
		"      command: bin/cred\n      args: [get, --x]\n      env: [{name: A, value: b}]\n"
		"      provideClusterInfo: true\n      installHint: get it\n") };
	wmap_kube_config *c = NULL;
	wmap_error err = { 0 };
	char want[400];

	cr_assert_eq(wmap_kubeconfig_load(&c, &ov, &err), 0, "%s", err.message);
	snprintf(want, sizeof(want), "%s/bin/cred", dir);
	cr_expect_str_eq(c->exec_command, want);
	cr_expect_eq(c->exec_n_args, 2);
	cr_expect_str_eq(c->exec_args[1], "--x");
	cr_expect(c->exec_provide_cluster_info);
	cr_expect_str_eq(c->exec_install_hint, "get it");
	cr_expect_str_eq(json_string_value(json_object_get(c->exec_cluster_config, "audience")), "a");
	wmap_kubeconfig_free(c);

	ov.kubeconfig = write_file("config2",
		"apiVersion: v1\nkind: Config\ncurrent-context: a\n"
		"clusters:\n- name: c\n  cluster: {server: \"https://x\"}\n"
		"contexts:\n- name: a\n  context: {cluster: c, user: u}\n"
		"users:\n- name: u\n  user: {token: t, exec: {apiVersion: client.authentication.k8s.io/v1, command: x}}\n");
	cr_expect_eq(wmap_kubeconfig_load(&c, &ov, &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "more than one of token, exec") != NULL, "%s", err.message);
}

Test(kubeconfig, in_cluster_when_nothing_else)
{
	char sa[400];
	wmap_kube_config *c = NULL;
	wmap_error err = { 0 };

	snprintf(sa, sizeof(sa), "%s/sa", dir);
	mkdir(sa, 0700);
	write_file("sa/token", "tok\n");
	write_file("sa/namespace", "ml\n");
	setenv("WMAP_SERVICEACCOUNT_DIR", sa, 1);
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	cr_assert_eq(wmap_kubeconfig_load(&c, NULL, &err), 0, "%s", err.message);
	cr_expect(c->in_cluster);
	cr_expect_str_eq(c->server, "https://[fd00::1]:443");
	cr_expect_str_eq(c->namespace_, "ml");
	cr_expect_null(c->token, "the token file is read when used (it rotates)");
	cr_expect_not_null(c->token_file);
	wmap_kubeconfig_free(c);
	unsetenv("KUBERNETES_SERVICE_HOST");
	cr_expect_eq(wmap_kubeconfig_load(&c, NULL, &err), WMAP_ENOTFOUND);
	cr_expect(strstr(err.message, "no cluster configuration") != NULL, "%s", err.message);
}

Test(kubeconfig, durations)
{
	cr_expect_eq(wmap_kube_parse_duration("30s"), 30000);
	cr_expect_eq(wmap_kube_parse_duration("1m30s"), 90000);
	cr_expect_eq(wmap_kube_parse_duration("500ms"), 500);
	cr_expect_eq(wmap_kube_parse_duration("2"), 2000);
	cr_expect_eq(wmap_kube_parse_duration("0"), 0);
	cr_expect_eq(wmap_kube_parse_duration("1h"), 3600000);
	cr_expect_eq(wmap_kube_parse_duration("soon"), -1);
	cr_expect_eq(wmap_kube_parse_duration("5x"), -1);
	cr_expect_eq(wmap_kube_parse_duration(""), -1);
}

Test(kubeconfig, query_escape_like_go)
{
	char *s = wmap_kube_query_escape("app=foo,tier!=db,env in (a,b),!legacy");

	cr_expect_str_eq(s, "app%3Dfoo%2Ctier%21%3Ddb%2Cenv+in+%28a%2Cb%29%2C%21legacy");
	free(s);
}
