/* wmap: exec credential plugins (client.authentication.k8s.io): the plugin found on PATH,
 * run with KUBERNETES_EXEC_INFO and the kubeconfig's env, its ExecCredential read from its
 * standard output (capped) and handed over (see kube_int.h). The client in kube.c decides
 * when to run it and keeps what it gave. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kube_int.h"
#include "wmap/buf.h"

#define EXEC_MAX_OUTPUT (1u << 20)

/* Finds a command on PATH (commands with a slash are used as given). */
static int find_command(char *buf, size_t len, const char *cmd)
{
	const char *path = getenv("PATH");
	const char *p, *end;

	if (strchr(cmd, '/')) {
		snprintf(buf, len, "%s", cmd);
		return access(buf, X_OK) == 0 ? 0 : -1;
	}
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		snprintf(buf, len, "%.*s/%s", (int)(end - p), end == p ? "." : p, cmd);
		if (access(buf, X_OK) == 0)
			return 0;
	}
	return -1;
}

/* KUBERNETES_EXEC_INFO: an ExecCredential with the cluster when the kubeconfig asks for it.
 * New text, the caller frees it; NULL when out of memory. */
static char *exec_info(const wmap_kube_config *cfg)
{
	json_t *spec = json_pack("{s:b}", "interactive", 0), *v;
	char *out;

	if (spec && cfg->exec_provide_cluster_info) {
		json_t *cl = json_pack("{s:s, s:b}", "server", cfg->server,
				       "insecure-skip-tls-verify", cfg->insecure);
		if (cl && cfg->tls_server_name)
			json_object_set_new(cl, "tls-server-name", json_string(cfg->tls_server_name));
		if (cl && cfg->proxy_url)
			json_object_set_new(cl, "proxy-url", json_string(cfg->proxy_url));
		if (cl && cfg->exec_cluster_config)
			json_object_set(cl, "config", cfg->exec_cluster_config);
		json_object_set_new(spec, "cluster", cl);
	}
	v = json_pack("{s:s, s:s, s:o}", "apiVersion", cfg->exec_api_version, "kind",
		      "ExecCredential", "spec", spec);
	out = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	return out;
}

/* The child: standard input from /dev/null, standard output into the pipe, the kubeconfig's
 * env and KUBERNETES_EXEC_INFO set, then the plugin. Never returns. */
static void exec_child(const char *path, const char *info, const wmap_kube_config *cfg,
		       const int fds[2])
{
	size_t i;
	json_t *e;
	char **argv = calloc(cfg->exec_n_args + 2, sizeof(char *));
	int devnull = open("/dev/null", O_RDONLY);

	if (!argv)
		_exit(127);
	if (devnull >= 0)
		dup2(devnull, 0);
	dup2(fds[1], 1);
	close(fds[0]);
	close(fds[1]);
	json_array_foreach(cfg->exec_env, i, e) {
		const char *n = json_string_value(json_object_get(e, "name"));
		const char *v = json_string_value(json_object_get(e, "value"));

		if (n && v)
			setenv(n, v, 1);
	}
	setenv("KUBERNETES_EXEC_INFO", info, 1);
	argv[0] = (char *)cfg->exec_command;
	for (i = 0; i < cfg->exec_n_args; i++)
		argv[i + 1] = cfg->exec_args[i];
	execv(path, argv);
	_exit(127);
}

/* Reads the plugin's output to its end into out; 1 when it passed the cap (the rest is not
 * read: the buffer would drop, and not wipe, the credential text). */
static int read_output(int fd, wmap_buf *out)
{
	for (;;) {
		char chunk[4096];
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		if (wmap_buf_grow_size(out, (size_t)n) == 0)
			return 1;
		if (wmap_buf_add(out, chunk, (size_t)n))
			return 0;
	}
}

int wmap_kube__run_exec(wmap_kube__credential *cred, const wmap_kube_config *cfg,
			wmap_error *err)
{
	char path[PATH_MAX], *info = NULL;
	wmap_buf out = WMAP_BUF_INIT(EXEC_MAX_OUTPUT, 16384);
	int fds[2] = { -1, -1 }, wstatus = 0, rc = 0, overflow;
	pid_t pid;

	memset(cred, 0, sizeof(*cred));
	if (find_command(path, sizeof(path), cfg->exec_command) != 0)
		return wmap_error_set(err, WMAP_EIO,
				      "exec credential plugin: executable %s not found%s%s",
				      cfg->exec_command, cfg->exec_install_hint ? "\n\n" : "",
				      cfg->exec_install_hint ? cfg->exec_install_hint : "");
	if ((info = exec_info(cfg)) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if (pipe(fds) != 0) {
		rc = wmap_error_set(err, WMAP_EIO, "exec credential plugin: pipe: %s", strerror(errno));
		goto cleanup;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rc = wmap_error_set(err, WMAP_EIO, "exec credential plugin: fork: %s", strerror(errno));
		goto cleanup;
	}
	if (pid == 0)
		exec_child(path, info, cfg, fds);
	close(fds[1]);
	fds[1] = -1;
	overflow = read_output(fds[0], &out);
	close(fds[0]);
	fds[0] = -1;
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
		rc = wmap_error_set(err, WMAP_EIO,
				    "exec credential plugin %s failed (exit status %d)",
				    cfg->exec_command, WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
		goto cleanup;
	}
	if (overflow || out.error || !out.data) {
		rc = wmap_error_set(err, WMAP_EINVAL,
				    "exec credential plugin %s: its output is not an ExecCredential "
				    "(JSON)",
				    cfg->exec_command);
		goto cleanup;
	}
	rc = wmap_kube__exec_credential(cred, out.data, out.len, cfg->exec_api_version,
					cfg->exec_command, err);
cleanup:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	if (out.data) {
		memset(out.data, 0, out.len);
		free(out.data);
	}
	free(info);
	return rc;
}
