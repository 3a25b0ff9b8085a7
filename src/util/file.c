/* wmap: reading a whole file (or standard input) under a byte cap (see wmap/file.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wmap/buf.h"
#include "wmap/file.h"

int wmap_file_read(char **out, size_t *out_len, const char *path, size_t max, wmap_error *err)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	wmap_buf b = WMAP_BUF_INIT(max, 65536 + 1);
	char chunk[16384];
	int rc = 0;

	*out = NULL;
	*out_len = 0;
	if (!f)
		return wmap_error_set(err, errno == ENOENT ? WMAP_ENOTFOUND : WMAP_EIO, "%s: %s", path,
				      strerror(errno));
	for (;;) {
		size_t n = fread(chunk, 1, sizeof(chunk), f);

		if ((rc = wmap_buf_add(&b, chunk, n)) == WMAP_ELIMIT) {
			rc = wmap_error_set(err, WMAP_ELIMIT, "%s: larger than %zu bytes", path, max);
			goto out;
		}
		if (rc) {
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			goto out;
		}
		if (n < sizeof(chunk)) {
			if (ferror(f)) {
				/* a directory opens fine and fails here with EISDIR */
				rc = wmap_error_set(err, WMAP_EIO, "%s: %s", path, strerror(errno));
				goto out;
			}
			break;
		}
	}
	if ((*out = wmap_buf_take(&b, out_len)) == NULL)
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
out:
	wmap_buf_free(&b);
	if (f != stdin)
		fclose(f);
	return rc;
}

/* ---- the files a FILE|DIR argument names --------------------------------------------- */

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_push(wmap_file_list *l, char *path, wmap_error *err)
{
	char **np = realloc(l->paths, (l->n + 1) * sizeof(*np));
	if (!np) {
		free(path);
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	l->paths = np;
	l->paths[l->n++] = path;
	return 0;
}

typedef struct walk_state {
	dev_t dev[WMAP_FILE_LIST_MAX_DEPTH];
	ino_t ino[WMAP_FILE_LIST_MAX_DEPTH];
} walk_state;

static int walk_path(wmap_file_list *l, const char *path, int depth, walk_state *ws, wmap_error *err);

/* The entries of one folder, sorted, each walked in turn. */
static int walk_dir(wmap_file_list *l, const char *path, int depth, walk_state *ws, wmap_error *err)
{
	DIR *dir = opendir(path);
	char **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	int rc = 0;

	if (!dir)
		return wmap_error_set(err, WMAP_EIO, "%s: %s", path, strerror(errno));
	while (rc == 0 && (de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		size_t len = strlen(path) + strlen(de->d_name) + 2;
		char *full = malloc(len), **nn = realloc(names, (n + 1) * sizeof(*nn));
		if (nn)
			names = nn;
		if (!full || !nn) {
			free(full);
			rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
			break;
		}
		snprintf(full, len, "%s%s%s", path, has_suffix(path, "/") ? "" : "/", de->d_name);
		names[n++] = full;
	}
	closedir(dir);
	if (names)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n && rc == 0; i++)
		rc = walk_path(l, names[i], depth + 1, ws, err);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

static int walk_path(wmap_file_list *l, const char *path, int depth, walk_state *ws, wmap_error *err)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		if (depth > 0 && errno == ENOENT)
			return 0; /* a dangling link inside a folder: nothing to read */
		return wmap_error_set(err, errno == ENOENT ? WMAP_ENOTFOUND : WMAP_EIO, "%s: %s", path,
				      strerror(errno));
	}
	if (!S_ISDIR(st.st_mode)) {
		/* Inside a folder only YAML and JSON files count; a file named outright is read. */
		if (depth > 0 && !(has_suffix(path, ".yaml") || has_suffix(path, ".yml") ||
				   has_suffix(path, ".json")))
			return 0;
		char *copy = strdup(path);
		if (!copy)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		return list_push(l, copy, err);
	}
	if (depth >= WMAP_FILE_LIST_MAX_DEPTH)
		return wmap_error_set(err, WMAP_ELIMIT, "%s: folders nested deeper than %d", path,
				      WMAP_FILE_LIST_MAX_DEPTH);
	for (int i = 0; i < depth; i++)
		if (ws->dev[i] == st.st_dev && ws->ino[i] == st.st_ino)
			return wmap_error_set(err, WMAP_EINVAL,
					      "%s: a symbolic link back to a folder being read", path);
	ws->dev[depth] = st.st_dev;
	ws->ino[depth] = st.st_ino;
	return walk_dir(l, path, depth, ws, err);
}

int wmap_file_list_add(wmap_file_list *list, const char *path, wmap_error *err)
{
	size_t before = list->n;
	walk_state ws;
	struct stat st;
	int rc;

	if (strcmp(path, "-") == 0) {
		char *copy = strdup(path);
		return copy ? list_push(list, copy, err) : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	}
	rc = walk_path(list, path, 0, &ws, err);
	if (rc == 0 && list->n == before && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		rc = wmap_error_set(err, WMAP_EINVAL, "%s: the folder holds no *.yaml, *.yml or *.json file",
				    path);
	if (rc != 0) {
		while (list->n > before)
			free(list->paths[--list->n]);
	}
	return rc;
}

void wmap_file_list_clear(wmap_file_list *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->n; i++)
		free(list->paths[i]);
	free(list->paths);
	list->paths = NULL;
	list->n = 0;
}
