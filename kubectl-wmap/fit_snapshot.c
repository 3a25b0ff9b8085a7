/* kubectl-wmap fit: the clusters' snapshots (fit_cmd.h).
 *
 * A --snapshot DIR holds one folder per cluster, DIR/NAME/nodes.json and DIR/NAME/pods.json
 * as `kubectl get nodes -o json` and `kubectl get pods -A -o json` print them, answered under
 * NAME. Live, each kubeconfig context gets its own kubeconfig resolution (the plugin's
 * LIVE.md rules, with the connection flags), its own client and two lists: the nodes, and the
 * pods of every namespace whose phase is neither Succeeded nor Failed (the scheduler's own
 * informer selector), 500 a page. Contexts are asked side by side, one thread each, at most
 * --parallel at a time: a slow or failing cluster costs its own row only. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fit_cmd.h"
#include "live.h"
#include "wmap/kube/client.h"
#include "wmap/kube/kubeconfig.h"

void fit_source_clear(fit_source *s)
{
	json_decref(s->nodes);
	json_decref(s->pods);
	s->nodes = s->pods = NULL;
}

/* One JSON file of a snapshot folder; errors name file:line:column. */
static int read_json(json_t **out, char *error, size_t len, const char *dir, const char *name,
		     const char *file)
{
	char path[4096];
	json_error_t je;
	snprintf(path, sizeof(path), "%s/%s/%s", dir, name, file);
	*out = json_load_file(path, 0, &je);
	if (!*out) {
		if (je.line < 0) /* jansson's text names the file already */
			snprintf(error, len, "%s", je.text);
		else
			snprintf(error, len, "%s:%d:%d: %s", path, je.line, je.column, je.text);
		return -1;
	}
	return 0;
}

static void read_source(fit_source *s, const char *dir)
{
	if (read_json(&s->nodes, s->error, sizeof(s->error), dir, s->name, "nodes.json") == 0)
		read_json(&s->pods, s->error, sizeof(s->error), dir, s->name, "pods.json");
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const fit_source *)a)->name, ((const fit_source *)b)->name);
}

int fit_snapshot_dir(fit_source *out, size_t *n, const char *dir, const char *const *only,
		     size_t n_only, wmap_error *err)
{
	DIR *d;
	struct dirent *e;

	*n = 0;
	if (n_only > 0) {
		for (size_t i = 0; i < n_only && *n < FIT_MAX_SOURCES; i++) {
			fit_source *s = &out[(*n)++];
			memset(s, 0, sizeof(*s));
			snprintf(s->name, sizeof(s->name), "%s", only[i]);
			read_source(s, dir);
		}
		return 0;
	}
	if (!(d = opendir(dir)))
		return wmap_error_set(err, WMAP_EIO, "--snapshot %s: cannot read the folder", dir);
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/nodes.json", dir, e->d_name);
		if (stat(path, &st) != 0)
			continue;
		if (*n == FIT_MAX_SOURCES) {
			closedir(d);
			return wmap_error_set(err, WMAP_ELIMIT, "--snapshot %s: more than %d clusters", dir,
					      FIT_MAX_SOURCES);
		}
		memset(&out[*n], 0, sizeof(out[*n]));
		snprintf(out[*n].name, sizeof(out[*n].name), "%s", e->d_name);
		(*n)++;
	}
	closedir(d);
	if (*n == 0)
		return wmap_error_set(err, WMAP_EINVAL,
				      "--snapshot %s: no cluster folder (DIR/NAME/nodes.json and pods.json)", dir);
	qsort(out, *n, sizeof(*out), cmp_name);
	for (size_t i = 0; i < *n; i++)
		read_source(&out[i], dir);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int fit_live_contexts(fit_source *out, size_t *n, const cli_options *o, int all, wmap_error *err)
{
	wmap_kube_overrides ov;
	wmap_kube_config *cfg = NULL;
	const char *names[FIT_MAX_SOURCES];
	size_t k = 0;
	int rc;

	*n = 0;
	if (o->kube.n_contexts > 0 && !all) {
		for (size_t i = 0; i < o->kube.n_contexts; i++)
			names[k++] = o->kube.contexts[i];
		goto copy;
	}
	live_overrides(&ov, o);
	ov.context = NULL;
	if ((rc = wmap_kubeconfig_load(&cfg, &ov, err)) != 0)
		return rc;
	if (!all) {
		names[k++] = cfg->context;
	} else {
		size_t i;
		json_t *v;
		json_array_foreach(cfg->context_names, i, v) {
			if (k < FIT_MAX_SOURCES)
				names[k++] = json_string_value(v);
		}
		qsort(names, k, sizeof(names[0]), cmp_str);
	}
copy:
	for (size_t i = 0; i < k; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		snprintf(out[i].name, sizeof(out[i].name), "%s", names[i] ? names[i] : "");
	}
	*n = k;
	wmap_kubeconfig_free(cfg);
	if (k == 0)
		return wmap_error_set(err, WMAP_ENOTFOUND, "the kubeconfig has no context");
	return 0;
}

typedef struct fetch_job {
	fit_source *s;
	const cli_options *o;
	pthread_t thread;
	int started;
} fetch_job;

static void *fetch_one(void *arg)
{
	fetch_job *j = arg;
	fit_source *s = j->s;
	wmap_kube_overrides ov;
	wmap_kube_opts ko = { 0 };
	wmap_error err = { 0 };
	live_ctx lc = { 0 };
	int rc;

	live_overrides(&ov, j->o);
	ov.context = s->name;
	ko.timeout_ms = live_timeout_ms(j->o);
	if (ko.timeout_ms == 0 && j->o->kube.request_timeout)
		ko.timeout_ms = -1;
	lc.o = j->o;
	s->nodes = json_array();
	s->pods = json_array();
	if (!s->nodes || !s->pods)
		rc = wmap_error_set(&err, WMAP_ENOMEM, "out of memory");
	else if ((rc = wmap_kubeconfig_load(&lc.cfg, &ov, &err)) == 0 &&
		 (rc = wmap_kube_client_new(&lc.client, lc.cfg, &ko, &err)) == 0 &&
		 (rc = live_list(s->nodes, &lc, "/api/v1/nodes", 500, &err)) == 0)
		rc = live_list(s->pods, &lc,
			       "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed",
			       500, &err);
	if (rc)
		snprintf(s->error, sizeof(s->error), "%s", err.message[0] ? err.message : "cannot read the cluster");
	wmap_kube_client_free(lc.client);
	wmap_kubeconfig_free(lc.cfg);
	return NULL;
}

void fit_live_fetch(fit_source *src, size_t n, const cli_options *o, int parallel)
{
	fetch_job jobs[FIT_MAX_SOURCES];
	if (parallel < 1)
		parallel = 1;
	for (size_t first = 0; first < n; first += (size_t)parallel) {
		size_t end = first + (size_t)parallel < n ? first + (size_t)parallel : n;
		for (size_t i = first; i < end; i++) {
			jobs[i] = (fetch_job){ .s = &src[i], .o = o };
			if (n == 1 || pthread_create(&jobs[i].thread, NULL, fetch_one, &jobs[i]) != 0)
				fetch_one(&jobs[i]); /* one cluster, or no thread to be had: here */
			else
				jobs[i].started = 1;
		}
		for (size_t i = first; i < end; i++) {
			if (jobs[i].started)
				pthread_join(jobs[i].thread, NULL);
		}
	}
}
