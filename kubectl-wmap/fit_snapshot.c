/* kubectl-wmap fit: the clusters' snapshots (fit_cmd.h).
 *
 * A --snapshot DIR holds one folder per cluster, DIR/NAME/nodes.json and DIR/NAME/pods.json
 * as `kubectl get nodes -o json` and `kubectl get pods -A -o json` print them, answered under
 * NAME. Live, each kubeconfig context gets its own kubeconfig resolution (the plugin's
 * LIVE.md rules, with the connection flags), its own client and two lists: the nodes, and the
 * pods of every namespace whose phase is neither Succeeded nor Failed (the scheduler's own
 * informer selector), 500 a page. Contexts are asked side by side, one thread each, at most
 * --parallel at a time: a slow or failing cluster costs its own row only.
 *
 * Either way only what fit reads of each object is kept (a pod's uid, node, phase and
 * resources; a node's name, labels, cordon, taints, allocatable, capacity and conditions),
 * one object at a time: a file's list is walked item by item (each item's text is skimmed,
 * then parsed alone) and a live list page by page. A node's status.images alone can be tens
 * of kilobytes; 5,000 nodes and 100,000 pods held whole would take gigabytes. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* What fit reads of a Pod and of a Node (references into obj). */
static json_t *slim_containers(const json_t *list)
{
	json_t *out = json_array(), *c;
	size_t i;
	json_array_foreach((json_t *)list, i, c) {
		json_t *one = json_object();
		if (!one || json_array_append_new(out, one))
			goto oom;
		if ((json_object_get(c, "resources") && json_object_set(one, "resources", json_object_get(c, "resources"))) ||
		    (json_object_get(c, "restartPolicy") &&
		     json_object_set(one, "restartPolicy", json_object_get(c, "restartPolicy"))))
			goto oom;
	}
	return out;
oom:
	json_decref(out);
	return NULL;
}

/* Copies the members keys[] of from that are present into a new object under name in to. */
static int pick(json_t *to, const char *name, const json_t *from, const char *const *keys)
{
	json_t *o = json_object();
	if (!o || json_object_set_new(to, name, o))
		return -1;
	for (size_t i = 0; keys[i]; i++) {
		json_t *v = json_object_get(from, keys[i]);
		if (v && json_object_set(o, keys[i], v))
			return -1;
	}
	return 0;
}

static json_t *slim_pod(const json_t *pod)
{
	static const char *const meta[] = { "name", "namespace", "uid", NULL };
	static const char *const spec[] = { "nodeName", "overhead", "resources", NULL };
	static const char *const status[] = { "phase", NULL };
	const json_t *sp = json_object_get(pod, "spec");
	json_t *o = json_object(), *s = NULL;
	if (!o || pick(o, "metadata", json_object_get(pod, "metadata"), meta) ||
	    pick(o, "spec", sp, spec) || pick(o, "status", json_object_get(pod, "status"), status))
		goto oom;
	s = json_object_get(o, "spec");
	if (json_is_array(json_object_get(sp, "containers")) &&
	    json_object_set_new(s, "containers", slim_containers(json_object_get(sp, "containers"))))
		goto oom;
	if (json_is_array(json_object_get(sp, "initContainers")) &&
	    json_object_set_new(s, "initContainers", slim_containers(json_object_get(sp, "initContainers"))))
		goto oom;
	return o;
oom:
	json_decref(o);
	return NULL;
}

static json_t *slim_node(const json_t *node)
{
	static const char *const meta[] = { "name", "labels", NULL };
	static const char *const spec[] = { "unschedulable", "taints", NULL };
	static const char *const status[] = { "allocatable", "capacity", "conditions", NULL };
	json_t *o = json_object();
	if (!o || pick(o, "metadata", json_object_get(node, "metadata"), meta) ||
	    pick(o, "spec", json_object_get(node, "spec"), spec) ||
	    pick(o, "status", json_object_get(node, "status"), status)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

typedef json_t *(*slim_fn)(const json_t *);

/* The end of the JSON value at p (strings, nested brackets, scalars), NULL when malformed;
 * only skims, each item is then parsed for real. */
static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

static const char *skip_value(const char *p, const char *end)
{
	int depth = 0;
	if (p >= end)
		return NULL;
	if (*p != '{' && *p != '[') {
		if (*p == '"')
			return skip_string(p, end);
		while (p < end && !strchr(",]} \t\r\n", *p))
			p++;
		return p;
	}
	for (; p < end; p++) {
		if (*p == '"') {
			if (!(p = skip_string(p, end)))
				return NULL;
			p--;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if ((*p == '}' || *p == ']') && --depth == 0) {
			return p + 1;
		}
	}
	return NULL;
}

/* line:column of at in text, for messages; a parse error inside an item (je, when not NULL)
 * is placed from where the item starts. */
static void where(char *buf, size_t len, const char *text, const char *at, const json_error_t *je)
{
	int line = 1, col = 1;
	for (const char *p = text; p < at; p++) {
		if (*p == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (je && je->line > 0) {
		col = je->line == 1 ? col + je->column - 1 : je->column;
		line += je->line - 1;
	}
	snprintf(buf, len, "%d:%d", line, col);
}

/* The items of the list in text (a List object's "items", or an array), each slimmed. */
static int walk_items(json_t *items, char *error, size_t len, const char *path, const char *text, const char *end,
		      slim_fn slim)
{
	const char *p = skip_ws(text, end), *arr = NULL;
	char at[32];
	if (p < end && *p == '[') {
		arr = p;
	} else if (p < end && *p == '{') {
		for (p = skip_ws(p + 1, end); p < end && *p == '"';) {
			const char *k = p, *kend = skip_string(p, end);
			if (!kend)
				break;
			p = skip_ws(kend, end);
			if (p >= end || *p != ':')
				break;
			p = skip_ws(p + 1, end);
			if (kend - k == 7 && strncmp(k, "\"items\"", 7) == 0 && p < end && *p == '[') {
				arr = p;
				break;
			}
			if (!(p = skip_value(p, end)))
				break;
			p = skip_ws(p, end);
			if (p < end && *p == ',')
				p = skip_ws(p + 1, end);
		}
	}
	if (!arr) {
		snprintf(error, len, "%s: .items: expected a list of objects", path);
		return -1;
	}
	for (p = skip_ws(arr + 1, end); p < end && *p != ']';) {
		const char *v_end = skip_value(p, end);
		json_error_t je;
		json_t *v, *sl;
		if (!v_end || !(v = json_loadb(p, (size_t)(v_end - p), JSON_DECODE_ANY, &je))) {
			where(at, sizeof(at), text, p, v_end ? &je : NULL);
			snprintf(error, len, "%s:%s: .items[%zu]: %s", path, at, json_array_size(items),
				 v_end ? je.text : "the item does not end");
			return -1;
		}
		sl = json_is_object(v) ? slim(v) : json_incref(v);
		json_decref(v);
		if (!sl || json_array_append_new(items, sl)) {
			snprintf(error, len, "out of memory");
			return -1;
		}
		p = skip_ws(v_end, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
		else if (p < end && *p != ']')
			break;
	}
	if (p >= end || *p != ']') {
		where(at, sizeof(at), text, p < end ? p : end, NULL);
		snprintf(error, len, "%s:%s: the list of items does not end", path, at);
		return -1;
	}
	return 0;
}

/* One list file of a snapshot folder, mapped and walked item by item; errors name
 * file:line:column. */
static int read_list(json_t **out, char *error, size_t len, const char *dir, const char *name, const char *file,
		     slim_fn slim)
{
	char path[4096];
	struct stat st;
	void *map = NULL;
	int fd, rc = -1;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, name, file);
	*out = NULL;
	if ((fd = open(path, O_RDONLY)) < 0 || fstat(fd, &st) != 0) {
		snprintf(error, len, "%s: %s", path, strerror(errno));
		goto done;
	}
	if (st.st_size == 0) {
		snprintf(error, len, "%s: the file is empty", path);
		goto done;
	}
	if ((map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		map = NULL;
		snprintf(error, len, "%s: cannot read the file", path);
		goto done;
	}
	if (!(*out = json_array())) {
		snprintf(error, len, "out of memory");
		goto done;
	}
	rc = walk_items(*out, error, len, path, map, (const char *)map + st.st_size, slim);
done:
	if (map)
		munmap(map, (size_t)st.st_size);
	if (fd >= 0)
		close(fd);
	return rc;
}

static void read_source(fit_source *s, const char *dir)
{
	if (read_list(&s->nodes, s->error, sizeof(s->error), dir, s->name, "nodes.json", slim_node) == 0)
		read_list(&s->pods, s->error, sizeof(s->error), dir, s->name, "pods.json", slim_pod);
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

typedef struct slim_page {
	json_t *items;
	slim_fn slim;
} slim_page;

static int slim_items(void *arg, json_t *items, wmap_error *err)
{
	slim_page *sp = arg;
	size_t i;
	json_t *it;
	json_array_foreach(items, i, it) {
		if (json_array_append_new(sp->items, sp->slim(it)))
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
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
		 (rc = live_list_pages(&lc, "/api/v1/nodes", 500, slim_items, &(slim_page){ s->nodes, slim_node }, &err)) == 0)
		rc = live_list_pages(&lc, "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed",
				     500, slim_items, &(slim_page){ s->pods, slim_pod }, &err);
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
