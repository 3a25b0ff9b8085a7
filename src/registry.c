/* wmap: the definitions in force (see include/wmap/registry.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wmap/apiversion.h"
#include "wmap/registry.h"
#include "wmap/file.h"
#include "wmap/yaml.h"

struct wmap_catalog_file {
	const char *name;
	const char *text;
};
extern const struct wmap_catalog_file wmap__catalog_files[];
extern const size_t wmap__catalog_count;

struct wmap_registry {
	size_t n, cap;
	wmap_definition **defs; /* sorted by name */
};

int wmap_registry_new(wmap_registry **out, wmap_error *err)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : wmap_error_set(err, WMAP_ENOMEM, "out of memory");
}

void wmap_registry_free(wmap_registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->n; i++)
		wmap_definition_free(reg->defs[i]);
	free(reg->defs);
	free(reg);
}

size_t wmap_registry_count(const wmap_registry *reg)
{
	return reg->n;
}

const wmap_definition *wmap_registry_get(const wmap_registry *reg, size_t i)
{
	return i < reg->n ? reg->defs[i] : NULL;
}

const wmap_definition *wmap_registry_by_name(const wmap_registry *reg, const char *name)
{
	for (size_t i = 0; i < reg->n; i++)
		if (strcmp(reg->defs[i]->name, name) == 0)
			return reg->defs[i];
	return NULL;
}

static const wmap_gvk *root_kind(const wmap_definition *d)
{
	return d->components[0].kind;
}

static int same_gvk(const wmap_gvk *a, const wmap_gvk *b)
{
	return strcmp(a->group, b->group) == 0 && strcmp(a->version, b->version) == 0 &&
	       strcmp(a->kind, b->kind) == 0;
}

/* cluster > file > catalog */
static int rank(wmap_origin o)
{
	return o == WMAP_ORIGIN_CLUSTER ? 2 : o == WMAP_ORIGIN_FILE ? 1
								    : 0;
}

int wmap_registry_add(wmap_registry *reg, wmap_definition *def, wmap_error *err)
{
	const wmap_gvk *g = root_kind(def);

	for (size_t i = 0; i < reg->n; i++) {
		/* Two definitions of one name from the same kind of source: which one
		 * `definitions NAME` shows would depend on the order of the arguments. */
		if (strcmp(reg->defs[i]->name, def->name) == 0 && !same_gvk(root_kind(reg->defs[i]), g) &&
		    rank(reg->defs[i]->origin) == rank(def->origin) && def->origin != WMAP_ORIGIN_CATALOG) {
			int rc = wmap_error_set(err, WMAP_EINVALID,
						"%s: definition %s is also defined in %s (names must be unique)",
						def->source, def->name, reg->defs[i]->source);
			wmap_definition_free(def);
			return rc;
		}
	}
	for (size_t i = 0; i < reg->n; i++) {
		if (!same_gvk(root_kind(reg->defs[i]), g))
			continue;
		if (rank(reg->defs[i]->origin) > rank(def->origin)) {
			wmap_definition_free(def); /* a higher-ranked definition stays in force */
			return 0;
		}
		if (rank(reg->defs[i]->origin) == rank(def->origin) && def->origin != WMAP_ORIGIN_CATALOG) {
			char gvk[256];
			wmap_gvk_format(gvk, sizeof(gvk), g);
			int rc = wmap_error_set(err, WMAP_EINVALID,
						"%s: definition %s claims %s, which %s (%s) already claims",
						def->source, def->name, gvk, reg->defs[i]->name,
						reg->defs[i]->source);
			wmap_definition_free(def);
			return rc;
		}
		wmap_definition_free(reg->defs[i]);
		memmove(&reg->defs[i], &reg->defs[i + 1], (reg->n - i - 1) * sizeof(*reg->defs));
		reg->n--;
		break;
	}
	if (reg->n == reg->cap) {
		size_t cap = reg->cap ? reg->cap * 2 : 32;
		wmap_definition **nd = realloc(reg->defs, cap * sizeof(*nd));
		if (!nd) {
			wmap_definition_free(def);
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
		reg->defs = nd;
		reg->cap = cap;
	}
	size_t at = reg->n;
	while (at > 0 && strcmp(reg->defs[at - 1]->name, def->name) > 0)
		at--;
	memmove(&reg->defs[at + 1], &reg->defs[at], (reg->n - at) * sizeof(*reg->defs));
	reg->defs[at] = def;
	reg->n++;
	return 0;
}

/* Loads every document of one parsed file; all of them or none. */
static int add_documents(wmap_registry *reg, const char *data, size_t len, const char *name,
			 wmap_origin origin, int with_positions, wmap_error *err)
{
	json_t *positions = NULL, *docs = NULL;
	wmap_yaml_opts opts = { .max_bytes = 1u << 20 };
	wmap_definition **loaded = NULL;
	size_t n = 0;
	int rc;

	/* Positions cost as much as the parse itself; record them only when a definition turns
	 * out to be invalid, to name the line and column of each finding. */
	if (with_positions) {
		positions = json_object();
		if (!positions)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		opts.positions = positions;
	}
	rc = wmap_yaml_parse(&docs, data, len, name, &opts, err);
	if (rc)
		goto out;
	if (json_array_size(docs) == 0) {
		rc = wmap_error_set(err, WMAP_EINVAL, "%s: no definition in the file", name);
		goto out;
	}
	loaded = calloc(json_array_size(docs), sizeof(*loaded));
	if (!loaded) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto out;
	}
	for (n = 0; n < json_array_size(docs); n++) {
		rc = wmap_definition_load(&loaded[n], json_array_get(docs, n), name, origin, positions,
					  (int)n, err);
		/* Strict loading: a broken jq expression in a definition from outside fails here,
		 * not at its first use (the catalog's are checked by tests). */
		if (rc == 0 && origin != WMAP_ORIGIN_CATALOG &&
		    (rc = wmap_definition_check_jq(loaded[n], err)) != 0) {
			wmap_definition_free(loaded[n]);
			loaded[n] = NULL;
		}
		if ((rc == WMAP_EINVALID || rc == WMAP_EJQ) && !with_positions) {
			for (size_t i = 0; i < n; i++)
				wmap_definition_free(loaded[i]);
			free(loaded);
			json_decref(docs);
			return add_documents(reg, data, len, name, origin, 1, err);
		}
		if (rc)
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		wmap_definition *d = loaded[i];
		loaded[i] = NULL;
		if ((rc = wmap_registry_add(reg, d, err)))
			goto out;
	}
out:
	for (size_t i = 0; loaded && i < n; i++)
		wmap_definition_free(loaded[i]);
	free(loaded);
	json_decref(docs);
	json_decref(positions);
	return rc;
}

int wmap_registry_add_catalog(wmap_registry *reg, wmap_error *err)
{
	for (size_t i = 0; i < wmap__catalog_count; i++) {
		const struct wmap_catalog_file *f = &wmap__catalog_files[i];
		int rc = add_documents(reg, f->text, strlen(f->text), f->name, WMAP_ORIGIN_CATALOG, 0, err);
		if (rc)
			return rc;
	}
	return 0;
}

int wmap_registry_add_catalog_kind(wmap_registry *reg, const char *group, const char *kind,
				   wmap_error *err)
{
	char prefix[512];
	/* catalog/<group-dashed>-<kind>-<version>.yaml: the name says which kind a file holds,
	 * so only the files that can match are parsed (tests check every name). */
	wmap_definition_slug(prefix, sizeof(prefix), group, kind, "");
	for (size_t i = 0; i < wmap__catalog_count; i++) {
		const struct wmap_catalog_file *f = &wmap__catalog_files[i];
		const char *base = strrchr(f->name, '/') ? strrchr(f->name, '/') + 1 : f->name;
		if (strncmp(base, prefix, strlen(prefix)) != 0)
			continue;
		int rc = add_documents(reg, f->text, strlen(f->text), f->name, WMAP_ORIGIN_CATALOG, 0, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int add_file(wmap_registry *reg, const char *path, wmap_origin origin, wmap_error *err)
{
	char *buf;
	size_t len;
	int rc = wmap_file_read(&buf, &len, path, 1u << 20, err);
	if (rc)
		return rc;
	rc = add_documents(reg, buf, len, strcmp(path, "-") == 0 ? "<stdin>" : path, origin, 0, err);
	free(buf);
	return rc;
}

int wmap_registry_add_path(wmap_registry *reg, const char *path, wmap_origin origin,
			   wmap_error *err)
{
	wmap_file_list files = { 0 };
	wmap_registry *tmp = NULL;
	int rc;

	if ((rc = wmap_file_list_add(&files, path, err)) != 0)
		return rc;
	if (files.n == 1 && strcmp(files.paths[0], path) == 0) {
		rc = add_file(reg, path, origin, err);
		goto out;
	}
	/* A directory: its YAML and JSON files in name order, all or nothing. */
	if ((rc = wmap_registry_new(&tmp, err)))
		goto out;
	for (size_t i = 0; i < files.n && !rc; i++)
		rc = add_file(tmp, files.paths[i], origin, err);
	/* Every file read: move the definitions over. */
	while (!rc && tmp->n > 0) {
		wmap_definition *d = tmp->defs[--tmp->n];
		rc = wmap_registry_add(reg, d, err);
	}
out:
	wmap_file_list_clear(&files);
	wmap_registry_free(tmp);
	return rc;
}

const wmap_definition *wmap_registry_find(const wmap_registry *reg, const char *group,
					  const char *version, const char *kind, int *exact)
{
	const wmap_definition *other = NULL;
	for (size_t i = 0; i < reg->n; i++) {
		const wmap_gvk *g = root_kind(reg->defs[i]);
		if (strcmp(g->group, group) != 0 || strcmp(g->kind, kind) != 0)
			continue;
		if (strcmp(g->version, version) == 0) {
			if (exact)
				*exact = 1;
			return reg->defs[i];
		}
		if (!other)
			other = reg->defs[i];
	}
	if (exact)
		*exact = 0;
	return other;
}

const json_t *wmap_object_controller(const json_t *obj)
{
	size_t i;
	json_t *ref;

	json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, ref) {
		if (json_is_true(json_object_get(ref, "controller")))
			return ref;
	}
	return NULL;
}

const wmap_definition *wmap_registry_find_controller(const wmap_registry *reg, const json_t *obj)
{
	const json_t *ref = wmap_object_controller(obj);
	const char *api = json_string_value(json_object_get(ref, "apiVersion"));
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	char group[256], version[64];
	int exact;

	if (!api || !kind ||
	    wmap_api_version_parse(group, sizeof(group), version, sizeof(version), api))
		return NULL;
	return wmap_registry_find(reg, group, version, kind, &exact);
}

int wmap_registry_find_object(const wmap_definition **out, const wmap_registry *reg,
			      const json_t *object, wmap_error *err)
{
	const char *api = json_string_value(json_object_get(object, "apiVersion"));
	const char *kind = json_string_value(json_object_get(object, "kind"));
	char group[256];
	const char *version;

	*out = NULL;
	if (!json_is_object(object))
		return wmap_error_set(err, WMAP_EINVAL, "the object is not a mapping");
	if (json_object_get(object, "apiVersion") && !api)
		return wmap_error_set(err, WMAP_EINVAL, ".apiVersion: must be a string");
	if (json_object_get(object, "kind") && !kind)
		return wmap_error_set(err, WMAP_EINVAL, ".kind: must be a string");
	if (!api || !*api)
		return wmap_error_set(err, WMAP_EINVAL, ".apiVersion: the object has no apiVersion");
	if (!kind || !*kind)
		return wmap_error_set(err, WMAP_EINVAL, ".kind: the object has no kind");
	wmap_api_version av;
	wmap_api_version_split(&av, api);
	if (av.group_len >= sizeof(group))
		return wmap_error_set(err, WMAP_EINVAL, ".apiVersion: too long");
	memcpy(group, av.group, av.group_len);
	group[av.group_len] = '\0';
	version = av.version;
	*out = wmap_registry_find(reg, group, version, kind, NULL);
	if (!*out)
		return wmap_error_set(err, WMAP_ENODEF, "no definition covers %s%s%s/%s, Kind=%s", group,
				      *group ? "" : "", "", version, kind);
	return 0;
}
