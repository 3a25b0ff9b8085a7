/* kubectl-wmap fit: the clusters of a --snapshot folder (fit_cmd.h).
 *
 * DIR/NAME/nodes.json and DIR/NAME/pods.json, as `kubectl get nodes -o json` and `kubectl get
 * pods -A -o json` print them, answered under NAME. A cluster of 5,000 nodes and 100,000 pods
 * prints about 450 MB: held as jansson values that is gigabytes, and jansson reads it at about
 * 110 instructions a byte. So the file is mapped and walked item by item; in each item only the
 * members fit reads (the same as fit_snapshot.c keeps of live lists) are parsed, by
 * wmap_json_parse, and everything else is only skimmed (strings found with memchr, containers
 * by their brackets); each pod goes to the core's snapshot at once and is dropped, and the
 * pages behind the walk are given back, so memory stays at the nodes plus a window of the
 * file. A malformed item is parsed whole to name its error's line and column. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fit_cmd.h"
#include "wmap/json_text.h"

/* What to keep of an object: members by key, each kept whole, or picked from (an object, or
 * each object of an array) by its own rules. */
enum { PICK_VALUE,
       PICK_OBJECT,
       PICK_EACH };
typedef struct pick_rule {
	const char *key;
	int how;
	const struct pick_rule *sub;
} pick_rule;

static const pick_rule container_rules[] = { { "resources", PICK_VALUE, NULL },
					     { "restartPolicy", PICK_VALUE, NULL },
					     { NULL, 0, NULL } };
static const pick_rule pod_rules[] = {
	{ "metadata", PICK_OBJECT,
	  (const pick_rule[]){ { "name", PICK_VALUE, NULL },
			       { "namespace", PICK_VALUE, NULL },
			       { "uid", PICK_VALUE, NULL },
			       { NULL, 0, NULL } } },
	{ "spec", PICK_OBJECT,
	  (const pick_rule[]){ { "nodeName", PICK_VALUE, NULL },
			       { "overhead", PICK_VALUE, NULL },
			       { "resources", PICK_VALUE, NULL },
			       { "containers", PICK_EACH, container_rules },
			       { "initContainers", PICK_EACH, container_rules },
			       { NULL, 0, NULL } } },
	{ "status", PICK_OBJECT, (const pick_rule[]){ { "phase", PICK_VALUE, NULL }, { NULL, 0, NULL } } },
	{ NULL, 0, NULL },
};
static const pick_rule node_rules[] = {
	{ "metadata", PICK_OBJECT,
	  (const pick_rule[]){ { "name", PICK_VALUE, NULL }, { "labels", PICK_VALUE, NULL }, { NULL, 0, NULL } } },
	{ "spec", PICK_OBJECT,
	  (const pick_rule[]){ { "unschedulable", PICK_VALUE, NULL }, { "taints", PICK_VALUE, NULL }, { NULL, 0, NULL } } },
	{ "status", PICK_OBJECT,
	  (const pick_rule[]){ { "allocatable", PICK_VALUE, NULL },
			       { "capacity", PICK_VALUE, NULL },
			       { "conditions", PICK_VALUE, NULL },
			       { NULL, 0, NULL } } },
	{ NULL, 0, NULL },
};

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* Past the closing quote of the string at p; NULL when it does not end. */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end;) {
		const char *q = memchr(p, '"', (size_t)(end - p)), *b;
		if (!q)
			return NULL;
		for (b = q; b > p && b[-1] == '\\'; b--)
			;
		if ((q - b) % 2 == 0)
			return q + 1;
		p = q + 1;
	}
	return NULL;
}

/* Past the value at p (skimmed, not checked: the parts kept are parsed for real); NULL when
 * it does not end. */
static const char *skip_value(const char *p, const char *end)
{
	static unsigned char special[256];
	int depth = 0;
	if (!special['"'])
		special['"'] = special['{'] = special['['] = special['}'] = special[']'] = 1;
	if (p >= end)
		return NULL;
	if (*p == '"')
		return skip_string(p, end);
	if (*p != '{' && *p != '[') {
		while (p < end && !strchr(",]} \t\r\n", *p))
			p++;
		return p;
	}
	while (p < end) {
		while (p < end && !special[(unsigned char)*p])
			p++;
		if (p >= end)
			return NULL;
		if (*p == '"') {
			if (!(p = skip_string(p, end)))
				return NULL;
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if (--depth == 0)
			return p + 1;
		p++;
	}
	return NULL;
}

/* The value of [p, end) parsed, any JSON value. */
static json_t *parse_span(const char *p, const char *end)
{
	if (*p == '{' || *p == '[')
		return wmap_json_parse(p, (size_t)(end - p), NULL);
	return json_loadb(p, (size_t)(end - p), JSON_DECODE_ANY, NULL);
}

/* The object at *pp with only what rules keep; *pp moves past it. NULL when it is malformed
 * (or memory runs out). */
static json_t *pick_object(const char **pp, const char *end, const pick_rule *rules)
{
	const char *p = skip_ws(*pp, end);
	json_t *out = json_object();
	if (!out || p >= end || *p != '{')
		goto bad;
	p = skip_ws(p + 1, end);
	if (p < end && *p == '}') {
		*pp = p + 1;
		return out;
	}
	while (p < end && *p == '"') {
		const char *k = p + 1, *kend = skip_string(p, end), *v_end;
		const pick_rule *r = rules;
		if (!kend)
			goto bad;
		p = skip_ws(kend, end);
		if (p >= end || *p != ':')
			goto bad;
		p = skip_ws(p + 1, end);
		for (; r->key; r++) {
			size_t kl = strlen(r->key);
			if ((size_t)(kend - 1 - k) == kl && memcmp(k, r->key, kl) == 0)
				break;
		}
		json_t *v = NULL;
		if (!r->key) {
			if (!(v_end = skip_value(p, end)))
				goto bad;
		} else if (r->how == PICK_OBJECT && p < end && *p == '{') {
			v_end = p;
			v = pick_object(&v_end, end, r->sub);
		} else if (r->how == PICK_EACH && p < end && *p == '[') {
			v = json_array();
			for (v_end = skip_ws(p + 1, end); v && v_end < end && *v_end != ']';) {
				json_t *one = *v_end == '{' ? pick_object(&v_end, end, r->sub) : NULL;
				if (!one || json_array_append_new(v, one)) {
					json_decref(v);
					v = NULL;
					break;
				}
				v_end = skip_ws(v_end, end);
				if (v_end < end && *v_end == ',')
					v_end = skip_ws(v_end + 1, end);
			}
			if (v && v_end < end)
				v_end++;
		} else {
			v = (v_end = skip_value(p, end)) ? parse_span(p, v_end) : NULL;
		}
		if (r->key && (!v || json_object_set_new(out, r->key, v)))
			goto bad;
		p = skip_ws(v_end, end);
		if (p < end && *p == ',') {
			p = skip_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == '}') {
			*pp = p + 1;
			return out;
		}
		goto bad;
	}
bad:
	json_decref(out);
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

typedef int (*item_fn)(void *arg, json_t *item, wmap_error *err);

/* Hands each item of the list in [text, end) (a List object's "items", or an array) to fn,
 * kept as rules say. The pages behind the walk are given back every 32 MiB. */
static int walk_items(char *error, size_t len, const char *path, const char *text, const char *end,
		      const pick_rule *rules, item_fn fn, void *arg)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE), step = (size_t)32 << 20;
	const char *p = skip_ws(text, end), *arr = NULL, *released = text;
	wmap_error err = { 0 };
	char at[32];
	size_t i = 0;

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
	for (p = skip_ws(arr + 1, end); p < end && *p != ']'; i++) {
		const char *start = p;
		json_t *item = *p == '{' ? pick_object(&p, end, rules) : NULL;
		if (!item) {
			json_error_t je;
			const char *v_end = skip_value(start, end);
			json_t *whole = v_end ? json_loadb(start, (size_t)(v_end - start), JSON_DECODE_ANY, &je) : NULL;
			where(at, sizeof(at), text, start, whole ? NULL : &je);
			snprintf(error, len, "%s:%s: .items[%zu]: %s", path, at, i,
				 whole ? "expected an object" : v_end ? je.text
								      : "the item does not end");
			json_decref(whole);
			return -1;
		}
		int rc = fn(arg, item, &err);
		json_decref(item);
		if (rc) {
			snprintf(error, len, "%s", err.message);
			return -1;
		}
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
		else if (p < end && *p != ']')
			break;
		if ((size_t)(p - released) > step) {
			const char *to = text + ((size_t)(p - text) / page) * page;
			madvise((void *)released, (size_t)(to - released), MADV_DONTNEED);
			released = to;
		}
	}
	if (p >= end || *p != ']') {
		where(at, sizeof(at), text, p < end ? p : end, NULL);
		snprintf(error, len, "%s:%s: the list of items does not end", path, at);
		return -1;
	}
	return 0;
}

/* One list file, mapped and walked. */
static int read_list(char *error, size_t len, const char *path, const pick_rule *rules, item_fn fn, void *arg)
{
	struct stat st;
	void *map = NULL;
	int fd, rc = -1;

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
		snprintf(error, len, "%s: %s", path, strerror(errno));
		goto done;
	}
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	rc = walk_items(error, len, path, map, (const char *)map + st.st_size, rules, fn, arg);
done:
	if (map)
		munmap(map, (size_t)st.st_size);
	if (fd >= 0)
		close(fd);
	return rc;
}

static int add_node(void *arg, json_t *item, wmap_error *err)
{
	return wmap_fit_snapshot_add_node(arg, item, err);
}

static int add_pod(void *arg, json_t *item, wmap_error *err)
{
	return wmap_fit_snapshot_add_pod(arg, item, err);
}

static void read_source(fit_source *s, const char *dir, const wmap_workload *w, const wmap_gang_plan *plan,
			const wmap_fit_opts *base)
{
	wmap_fit_opts opts = *base;
	wmap_error err = { 0 };

	snprintf(s->nodes_name, sizeof(s->nodes_name), "%s/%s/nodes.json", dir, s->name);
	snprintf(s->pods_name, sizeof(s->pods_name), "%s/%s/pods.json", dir, s->name);
	opts.nodes_name = s->nodes_name;
	opts.pods_name = s->pods_name;
	if (wmap_fit_snapshot_new(&s->snap, w, plan, &opts, &err)) {
		snprintf(s->error, sizeof(s->error), "%s", err.message);
		return;
	}
	if (read_list(s->error, sizeof(s->error), s->nodes_name, node_rules, add_node, s->snap) == 0)
		read_list(s->error, sizeof(s->error), s->pods_name, pod_rules, add_pod, s->snap);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const fit_source *)a)->name, ((const fit_source *)b)->name);
}

int fit_snapshot_dir(fit_source *out, size_t *n, const char *dir, const char *const *only, size_t n_only,
		     const wmap_workload *w, const wmap_gang_plan *plan, const wmap_fit_opts *opts, wmap_error *err)
{
	DIR *d;
	struct dirent *e;

	*n = 0;
	if (n_only > 0) {
		for (size_t i = 0; i < n_only && *n < FIT_MAX_SOURCES; i++) {
			memset(&out[*n], 0, sizeof(out[*n]));
			snprintf(out[*n].name, sizeof(out[*n].name), "%s", only[i]);
			(*n)++;
		}
	} else {
		if (!(d = opendir(dir)))
			return wmap_error_set(err, WMAP_EIO, "--snapshot %s: %s", dir, strerror(errno));
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
	}
	for (size_t i = 0; i < *n; i++)
		read_source(&out[i], dir, w, plan, opts);
	return 0;
}
