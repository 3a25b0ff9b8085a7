/* kubectl-wmap: guarded JSON Patch writes shared by patch, suspend and resume (see live.h).
 *
 * Optimistic concurrency (architecture decision 9): every PATCH starts with
 * {"op":"test","path":"/metadata/resourceVersion","value":<rv>}, so it applies only to the
 * object it was computed from. When someone else wrote in between, the API server refuses
 * the patch (422 for a failed test, 409 for a stale resourceVersion); we read the object
 * again and recompute, so their change stays and ours lands on top of it.
 *
 * WMAP_TEST_PATCH_PAUSE=<path> (for the end-to-end tests only): before sending the first
 * PATCH, create <path>.waiting and wait (up to 60 s) until <path>.go exists, so a test can
 * change the object between our read and our write. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "render.h"
#include "wmap/patch.h"
#include "wmap/yaml.h"

int live_dry_run(live_dry *out, const cli_options *o, const cli_command *cmd)
{
	const char *v = cli_options_get(o, "dry-run");

	*out = LIVE_DRY_NONE;
	if (!v || strcmp(v, "none") == 0 || strcmp(v, "false") == 0)
		return 0;
	if (strcmp(v, "client") == 0 || strcmp(v, "true") == 0) {
		*out = LIVE_DRY_CLIENT;
		return 0;
	}
	if (strcmp(v, "server") == 0) {
		*out = LIVE_DRY_SERVER;
		return 0;
	}
	return cli_usage_error(o, cmd, "--dry-run must be \"none\", \"server\", or \"client\" (got \"%s\")",
			       v);
}

static void test_pause(int attempt)
{
	const char *base = getenv("WMAP_TEST_PATCH_PAUSE");
	char waiting[4096], go[4096];
	int fd;

	if (!base || !base[0] || attempt > 0)
		return;
	snprintf(waiting, sizeof(waiting), "%s.waiting", base);
	snprintf(go, sizeof(go), "%s.go", base);
	if ((fd = open(waiting, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0)
		close(fd);
	for (int i = 0; i < 6000 && access(go, F_OK) != 0; i++) {
		struct timespec ts = { 0, 10000000L };

		nanosleep(&ts, NULL);
	}
}

static const char *resource_version(const json_t *obj)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

int live_patch_guarded(json_t **result, json_t **before, size_t *n_ops, live_ctx *lc,
		       live_target *t, live_build_fn build, void *arg, live_dry dry)
{
	wmap_error err = { 0 };
	json_t *ops = NULL;
	char *body = NULL, *path = NULL;
	int rc = 0;

	*result = NULL;
	*before = NULL;
	*n_ops = 0;
	for (int attempt = 0;; attempt++) {
		char rv[128];
		long status = 0;
		size_t plen;

		json_decref(ops);
		ops = NULL;
		free(body);
		body = NULL;
		json_decref(*before);
		if ((*before = json_deep_copy(t->object)) == NULL) {
			rc = cli_error("out of memory");
			goto cleanup;
		}
		if ((rc = build(&ops, lc, t, arg)) != 0)
			goto cleanup;
		*n_ops = json_array_size(ops);
		if (*n_ops == 0) {
			*result = json_incref(t->object);
			goto cleanup;
		}
		if (dry == LIVE_DRY_CLIENT) {
			json_t *copy = json_deep_copy(t->object);

			if (!copy || wmap_patch_apply(&copy, ops, &err) != 0) {
				json_decref(copy);
				rc = live_fail(&err, CLI_EXIT_ERROR);
				goto cleanup;
			}
			*result = copy;
			goto cleanup;
		}
		snprintf(rv, sizeof(rv), "%s", resource_version(t->object) ? resource_version(t->object) : "");
		if (!rv[0]) {
			rc = cli_error("%s/%s has no metadata.resourceVersion; refusing an unguarded patch",
				       t->label, t->name);
			goto cleanup;
		}
		if (json_array_insert_new(ops, 0, json_pack("{s:s, s:s, s:s}", "op", "test", "path", "/metadata/resourceVersion", "value", rv)) != 0 ||
		    (body = json_dumps(ops, JSON_COMPACT)) == NULL) {
			rc = cli_error("out of memory");
			goto cleanup;
		}
		free(path);
		path = NULL;
		{
			char *base = wmap_resource_path(t->res, lc->ns, t->name);

			plen = base ? strlen(base) + 64 : 0;
			if (base && (path = malloc(plen)) != NULL)
				snprintf(path, plen, "%s?fieldManager=kubectl-wmap%s", base,
					 dry == LIVE_DRY_SERVER ? "&dryRun=All" : "");
			free(base);
		}
		if (!path) {
			rc = cli_error("out of memory");
			goto cleanup;
		}
		test_pause(attempt);
		rc = wmap_kube_request(result, &status, lc->client, "PATCH", path,
				       "application/json-patch+json", body, &err);
		{
			size_t i;
			json_t *wv;

			json_array_foreach((json_t *)wmap_kube_warnings(lc->client), i, wv)
				live_warn(lc, "%s", json_string_value(wv));
		}
		if (rc == 0)
			goto cleanup;
		if ((status == 409 || status == 422) && attempt + 1 < LIVE_PATCH_ATTEMPTS) {
			char old_rv[128];

			snprintf(old_rv, sizeof(old_rv), "%s", rv);
			if ((rc = live_target_reload(t, lc)) != 0)
				goto cleanup;
			/* Only a moved resourceVersion means someone else wrote: retry on top of it.
			 * The same version means our patch itself is invalid: report that. */
			if (resource_version(t->object) && strcmp(resource_version(t->object), old_rv) != 0) {
				err.message[0] = '\0';
				continue;
			}
		}
		if (status == 409 || status == 422)
			rc = live_fail(&err, CLI_EXIT_ERROR);
		else
			rc = live_fail(&err, live_code(&err));
		goto cleanup;
	}
cleanup:
	if (rc != 0) {
		json_decref(*result);
		*result = NULL;
	}
	json_decref(ops);
	free(body);
	free(path);
	return rc;
}

/* Writes v as YAML into a new temporary file; its name into path. */
static int yaml_temp(char *path, size_t len, const json_t *v, const char *tag)
{
	wmap_error err = { 0 };
	char *text = NULL;
	int fd, ok;

	snprintf(path, len, "%s/wmap-%s-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag);
	if ((fd = mkstemp(path)) < 0)
		return -1;
	if (wmap_yaml_dump(&text, v, &err) != 0) {
		close(fd);
		unlink(path);
		return -1;
	}
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	free(text);
	return ok ? 0 : -1;
}

/* A unified diff of a and b through diff(1), as `kubectl diff` does with its KUBECTL_EXTERNAL_DIFF. */
static int print_diff(const json_t *a, const json_t *b, const char *name)
{
	char pa[4096], pb[4096], la[600], lb[600];
	int status = 0;
	pid_t pid;

	if (yaml_temp(pa, sizeof(pa), a, "live") != 0)
		return cli_error("cannot write a temporary file for --diff");
	if (yaml_temp(pb, sizeof(pb), b, "patched") != 0) {
		unlink(pa);
		return cli_error("cannot write a temporary file for --diff");
	}
	snprintf(la, sizeof(la), "%s (live)", name);
	snprintf(lb, sizeof(lb), "%s (patched)", name);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execlp("diff", "diff", "-u", "--label", la, "--label", lb, pa, pb, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	unlink(pa);
	unlink(pb);
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) > 1)
		return cli_error("diff(1) failed; is diffutils installed?");
	return 0;
}

int live_patch_report(const cli_options *o, live_target *t, const json_t *before,
		      const json_t *result, size_t n_ops, live_dry dry, const char *verb,
		      const char *detail)
{
	wmap_error err = { 0 };
	char kind[256];
	const char *note = n_ops == 0 ? " (no change)" : dry == LIVE_DRY_CLIENT ? " (dry run)"
						 : dry == LIVE_DRY_SERVER       ? " (server dry run)"
										: "";
	int rc = 0;

	snprintf(kind, sizeof(kind), "%s", t->label);
	/* kubectl names objects by singular.group ("jobset.jobset.x-k8s.io/train"). */
	if (t->res->group[0])
		snprintf(kind, sizeof(kind), "%s.%s", t->res->singular, t->res->group);
	else
		snprintf(kind, sizeof(kind), "%s", t->res->singular);
	if (cli_options_get(o, "diff")) {
		char name[600];

		snprintf(name, sizeof(name), "%s/%s", kind, t->name);
		rc = print_diff(before, result, name);
	}
	if (rc == 0 && o->output != CLI_OUTPUT_TABLE) {
		if (render_value(stdout, result, o->output, &err) != 0)
			rc = live_fail(&err, CLI_EXIT_ERROR);
	} else if (rc == 0) {
		printf("%s/%s %s%s%s%s%s\n", kind, t->name, verb, note,
		       detail && n_ops ? " (" : "", detail && n_ops ? detail : "",
		       detail && n_ops ? ")" : "");
	}
	return rc;
}
