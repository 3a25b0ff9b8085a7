/* wmap: API discovery, its disk cache, TYPE resolution as kubectl does it, and REST paths
 * (see wmap/kube/discovery.h).
 *
 * The cache is one JSON file per server: ~/.kube/cache/wmap/discovery/<host_port>/
 * resources.json (or $WMAP_CACHE_DIR/<host_port>/resources.json), the flattened resource
 * list with the time it was read. kubectl's own cache (~/.kube/cache/discovery) is a tree
 * of per-group files in client-go's format; wmap keeps its own next to it rather than
 * writing into one it does not own. The TTL is kubectl's (6 hours); a type that is not
 * found makes the caller walk the server again once. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wmap/kube/discovery.h"
#include "wmap/yaml.h"

#define DEFAULT_TTL (6 * 3600)
#define MAX_RESOURCES 20000

struct wmap_discovery {
	size_t n, cap;
	wmap_api_resource *v;
	int cached;
	char cache_file[PATH_MAX];
};

static void resource_clear(wmap_api_resource *r)
{
	free(r->group);
	free(r->version);
	free(r->plural);
	free(r->singular);
	free(r->kind);
	for (size_t i = 0; i < r->n_short; i++)
		free(r->short_names[i]);
	free(r->short_names);
	memset(r, 0, sizeof(*r));
}

static void clear_all(wmap_discovery *d)
{
	for (size_t i = 0; i < d->n; i++)
		resource_clear(&d->v[i]);
	d->n = 0;
}

void wmap_discovery_free(wmap_discovery *d)
{
	if (!d)
		return;
	clear_all(d);
	free(d->v);
	free(d);
}

int wmap_discovery_cached(const wmap_discovery *d)
{
	return d->cached;
}

size_t wmap_discovery_count(const wmap_discovery *d)
{
	return d ? d->n : 0;
}

const wmap_api_resource *wmap_discovery_get(const wmap_discovery *d, size_t i)
{
	return d && i < d->n ? &d->v[i] : NULL;
}

static char *lower_dup(const char *s)
{
	char *o = strdup(s ? s : "");

	for (char *p = o; p && *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return o;
}

/* Adds one entry of an APIResourceList (or of the cache). */
static int add_resource(wmap_discovery *d, const char *group, const char *version,
			const json_t *e, int preferred)
{
	const char *name = json_string_value(json_object_get(e, "name"));
	const char *kind = json_string_value(json_object_get(e, "kind"));
	const char *sing = json_string_value(json_object_get(e, "singularName"));
	const json_t *sn = json_object_get(e, "shortNames");
	wmap_api_resource *r;
	size_t i;
	json_t *s;

	if (!name || !kind || strchr(name, '/'))
		return 0; /* subresources (jobsets/status) are not types */
	if (d->n == MAX_RESOURCES)
		return WMAP_ELIMIT;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 128;
		wmap_api_resource *nv = realloc(d->v, cap * sizeof(*nv));

		if (!nv)
			return WMAP_ENOMEM;
		d->v = nv;
		d->cap = cap;
	}
	r = &d->v[d->n];
	memset(r, 0, sizeof(*r));
	r->group = strdup(group);
	r->version = strdup(version);
	r->plural = strdup(name);
	r->singular = sing && sing[0] ? strdup(sing) : lower_dup(kind);
	r->kind = strdup(kind);
	r->namespaced = json_is_true(json_object_get(e, "namespaced"));
	r->preferred = json_is_true(json_object_get(e, "preferred")) || preferred;
	if (json_array_size(sn) > 0) {
		r->short_names = calloc(json_array_size(sn), sizeof(char *));
		if (!r->short_names) {
			resource_clear(r);
			return WMAP_ENOMEM;
		}
		json_array_foreach(sn, i, s)
			if (json_is_string(s))
				r->short_names[r->n_short++] = strdup(json_string_value(s));
	}
	if (!r->group || !r->version || !r->plural || !r->singular || !r->kind) {
		resource_clear(r);
		return WMAP_ENOMEM;
	}
	d->n++;
	return 0;
}

static int add_list(wmap_discovery *d, const char *group, const char *version,
		    const json_t *list, int preferred)
{
	size_t i;
	json_t *e;
	int rc;

	json_array_foreach(json_object_get(list, "resources"), i, e)
		if ((rc = add_resource(d, group, version, e, preferred)) != 0)
			return rc;
	return 0;
}

/* The cache folder of a server: <base>/<host_port>, as kubectl names its own. */
static void cache_path(char *buf, size_t len, const char *server)
{
	const char *base = getenv("WMAP_CACHE_DIR");
	const char *home = getenv("HOME");
	const char *host = strstr(server, "://");
	char hp[256];
	size_t k = 0;

	host = host ? host + 3 : server;
	for (; *host && *host != '/' && k + 1 < sizeof(hp); host++)
		hp[k++] = (isalnum((unsigned char)*host) || *host == '.' || *host == '-')
				  ? *host
				  : '_';
	hp[k] = '\0';
	if (base && base[0])
		snprintf(buf, len, "%s/%s/resources.json", base, hp);
	else if (home && home[0])
		snprintf(buf, len, "%s/.kube/cache/wmap/discovery/%s/resources.json", home, hp);
	else
		buf[0] = '\0';
}

static void mkdir_p(const char *file)
{
	char tmp[PATH_MAX];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", file);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(tmp, 0750);
		*p = '/';
	}
}

static int read_cache(wmap_discovery *d, const char *server, int ttl)
{
	json_t *doc = NULL;
	json_error_t je;
	const char *srv;
	json_int_t when;
	size_t i;
	json_t *e;
	int ok = 0;

	if (!d->cache_file[0] || (doc = json_load_file(d->cache_file, 0, &je)) == NULL)
		return 0;
	srv = json_string_value(json_object_get(doc, "server"));
	when = json_integer_value(json_object_get(doc, "time"));
	if (!srv || strcmp(srv, server) != 0 || when <= 0 || (json_int_t)time(NULL) - when > ttl ||
	    (json_int_t)time(NULL) < when)
		goto done;
	json_array_foreach(json_object_get(doc, "resources"), i, e) {
		const char *g = json_string_value(json_object_get(e, "group"));
		const char *v = json_string_value(json_object_get(e, "version"));

		if (!g || !v || add_resource(d, g, v, e, 0) != 0) {
			clear_all(d);
			goto done;
		}
	}
	ok = d->n > 0;
done:
	json_decref(doc);
	return ok;
}

/* Best effort: a cache that cannot be written only costs time. */
static void write_cache(const wmap_discovery *d, const char *server)
{
	json_t *doc = json_pack("{s:s, s:I, s:[]}", "server", server, "time",
				(json_int_t)time(NULL), "resources");
	json_t *list = json_object_get(doc, "resources");
	char tmp[PATH_MAX + 16];

	if (!doc || !d->cache_file[0])
		goto done;
	for (size_t i = 0; i < d->n; i++) {
		const wmap_api_resource *r = &d->v[i];
		json_t *sn = json_array();

		for (size_t k = 0; sn && k < r->n_short; k++)
			json_array_append_new(sn, json_string(r->short_names[k]));
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:o}",
						      "group", r->group, "version", r->version,
						      "name", r->plural, "singularName", r->singular,
						      "kind", r->kind, "namespaced", r->namespaced,
						      "preferred", r->preferred, "shortNames", sn));
	}
	mkdir_p(d->cache_file);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", d->cache_file, (long)getpid());
	if (json_dump_file(doc, tmp, JSON_COMPACT) == 0 && rename(tmp, d->cache_file) != 0)
		unlink(tmp);
done:
	json_decref(doc);
}

#define AGGREGATED_ACCEPT                                                            \
	"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"      \
	"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," \
	"application/json"

/* One APIGroupDiscoveryList: versions are listed most preferred first. */
static int add_aggregated(wmap_discovery *d, const json_t *list)
{
	size_t i, j, k, n;
	json_t *g, *v, *r;
	int rc;

	json_array_foreach(json_object_get(list, "items"), i, g) {
		const char *group = json_string_value(json_object_get(json_object_get(g, "metadata"), "name"));

		json_array_foreach(json_object_get(g, "versions"), j, v) {
			const char *ver = json_string_value(json_object_get(v, "version"));

			if (!ver)
				continue;
			json_array_foreach(json_object_get(v, "resources"), k, r) {
				const json_t *rk = json_object_get(r, "responseKind");
				const char *scope = json_string_value(json_object_get(r, "scope"));
				json_t *e = json_pack("{s:s?, s:s?, s:s?, s:b, s:O?}", "name",
						      json_string_value(json_object_get(r, "resource")), "kind",
						      json_string_value(json_object_get(rk, "kind")),
						      "singularName",
						      json_string_value(json_object_get(r, "singularResource")),
						      "namespaced", scope && strcmp(scope, "Namespaced") == 0,
						      "shortNames", json_object_get(r, "shortNames"));

				if (!e)
					return WMAP_ENOMEM;
				rc = add_resource(d, group ? group : "", ver, e, j == 0);
				json_decref(e);
				if (rc != 0)
					return rc;
			}
		}
	}
	n = d->n;
	return n > 0 ? 0 : WMAP_ENOTFOUND;
}

static int is_aggregated(const json_t *v)
{
	const char *kind = json_string_value(json_object_get(v, "kind"));

	return kind && strcmp(kind, "APIGroupDiscoveryList") == 0;
}

/* Aggregated discovery: 0 when the server serves it (d filled), 1 when it does not. */
static int aggregated(wmap_discovery *d, wmap_kube_client *c, wmap_error *err)
{
	json_t *core = NULL, *apis = NULL;
	int rc;

	if ((rc = wmap_kube_get_as(&core, c, "/api", AGGREGATED_ACCEPT, err)) != 0)
		goto done;
	if (!is_aggregated(core)) {
		rc = 1;
		goto done;
	}
	if ((rc = wmap_kube_get_as(&apis, c, "/apis", AGGREGATED_ACCEPT, err)) != 0)
		goto done;
	if (!is_aggregated(apis)) {
		rc = 1;
		goto done;
	}
	if ((rc = add_aggregated(d, core)) == 0 || rc == WMAP_ENOTFOUND)
		rc = add_aggregated(d, apis);
	if (rc != 0) {
		clear_all(d);
		rc = wmap_error_set(err, rc, "discovery: %s",
				    rc == WMAP_ELIMIT ? "too many resources" : "an empty or broken "
									       "aggregated discovery document");
	}
done:
	json_decref(core);
	json_decref(apis);
	return rc;
}

static int walk(wmap_discovery *d, wmap_kube_client *c, wmap_error *err)
{
	json_t *core = NULL, *groups = NULL, *list = NULL;
	size_t i, j;
	json_t *g, *v;
	char path[600];
	int rc;

	clear_all(d);
	d->cached = 0;
	if ((rc = aggregated(d, c, err)) == 0) {
		write_cache(d, wmap_kube_client_config(c)->server);
		return 0;
	}
	if (rc != 1)
		return rc;
	if ((rc = wmap_kube_get(&core, c, "/api/v1", err)) != 0)
		goto cleanup;
	if ((rc = add_list(d, "", "v1", core, 1)) != 0)
		goto nomem;
	if ((rc = wmap_kube_get(&groups, c, "/apis", err)) != 0)
		goto cleanup;
	json_array_foreach(json_object_get(groups, "groups"), i, g) {
		const char *name = json_string_value(json_object_get(g, "name"));
		const char *pref = json_string_value(
			json_object_get(json_object_get(g, "preferredVersion"), "version"));

		json_array_foreach(json_object_get(g, "versions"), j, v) {
			const char *ver = json_string_value(json_object_get(v, "version"));

			if (!name || !ver)
				continue;
			snprintf(path, sizeof(path), "/apis/%s/%s", name, ver);
			json_decref(list);
			list = NULL;
			rc = wmap_kube_get(&list, c, path, err);
			if (rc == WMAP_ENOTFOUND)
				continue; /* a group going away while we walk */
			if (rc != 0)
				goto cleanup;
			if ((rc = add_list(d, name, ver, list, pref && strcmp(pref, ver) == 0)) != 0)
				goto nomem;
		}
	}
	write_cache(d, wmap_kube_client_config(c)->server);
	rc = 0;
	goto cleanup;
nomem:
	rc = wmap_error_set(err, rc, "discovery: %s",
			    rc == WMAP_ELIMIT ? "too many resources" : "out of memory");
cleanup:
	json_decref(core);
	json_decref(groups);
	json_decref(list);
	return rc;
}

int wmap_discovery_load(wmap_discovery **out, wmap_kube_client *c, int ttl_seconds,
			wmap_error *err)
{
	const char *server = wmap_kube_client_config(c)->server;
	wmap_discovery *d;
	int rc;

	*out = NULL;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	cache_path(d->cache_file, sizeof(d->cache_file), server);
	if (read_cache(d, server, ttl_seconds > 0 ? ttl_seconds : DEFAULT_TTL)) {
		d->cached = 1;
		*out = d;
		return 0;
	}
	if ((rc = walk(d, c, err)) != 0) {
		wmap_discovery_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

int wmap_discovery_refresh(wmap_discovery *d, wmap_kube_client *c, wmap_error *err)
{
	return walk(d, c, err);
}

/* ---- resolving a TYPE -------------------------------------------------------------- */

static int name_matches(const wmap_api_resource *r, const char *name, int kinds)
{
	if (kinds)
		return strcasecmp(r->kind, name) == 0;
	if (strcasecmp(r->plural, name) == 0 || strcasecmp(r->singular, name) == 0)
		return 1;
	for (size_t i = 0; i < r->n_short; i++)
		if (strcasecmp(r->short_names[i], name) == 0)
			return 1;
	return 0;
}

/* Collects the resources matching name in group (NULL = any) and version (NULL = the
 * preferred one). */
static size_t collect(const wmap_discovery *d, const char *name, const char *group,
		      const char *version, int kinds, const wmap_api_resource **m, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n && n < max; i++) {
		const wmap_api_resource *r = &d->v[i];

		if (group && strcasecmp(r->group, group) != 0)
			continue;
		if (version ? strcasecmp(r->version, version) != 0 : !r->preferred)
			continue;
		if (name_matches(r, name, kinds))
			m[n++] = r;
	}
	return n;
}

static int builtin_group(const char *g)
{
	return !strchr(g, '.') || (strlen(g) > 7 && strcmp(g + strlen(g) - 7, ".k8s.io") == 0 &&
				   !strstr(g, ".x-k8s.io"));
}

int wmap_discovery_resolve(const wmap_api_resource **out, const wmap_discovery *d,
			   const char *type, wmap_error *err)
{
	const wmap_api_resource *m[64];
	char first[256], rest[512], ver[128], grp[512];
	const char *dot = strchr(type, '.');
	size_t n = 0;

	*out = NULL;
	if (!type[0] || strlen(type) >= sizeof(rest))
		return wmap_error_set(err, WMAP_EINVAL, "invalid resource type \"%s\"", type);
	for (int kinds = 0; kinds <= 1 && n == 0; kinds++) {
		if (!dot) {
			n = collect(d, type, NULL, NULL, kinds, m, 64);
			continue;
		}
		snprintf(first, sizeof(first), "%.*s", (int)(dot - type), type);
		snprintf(rest, sizeof(rest), "%s", dot + 1);
		/* resource.version.group first (needs two dots), then resource.group. */
		if (strchr(rest, '.')) {
			const char *d2 = strchr(rest, '.');

			snprintf(ver, sizeof(ver), "%.*s", (int)(d2 - rest), rest);
			snprintf(grp, sizeof(grp), "%s", d2 + 1);
			n = collect(d, first, grp, ver, kinds, m, 64);
		}
		if (n == 0)
			n = collect(d, first, rest, NULL, kinds, m, 64);
	}
	if (n == 0)
		return wmap_error_set(err, WMAP_ENOTFOUND,
				      "the server doesn't have a resource type \"%s\"", type);
	if (n > 1) {
		/* One group: the same resource twice cannot happen; several groups: built-in
		 * groups first (kubectl's priority), else the user must qualify it. */
		size_t builtin = 0, pick = 0;
		char list[1024] = "";

		for (size_t i = 0; i < n; i++)
			if (builtin_group(m[i]->group)) {
				builtin++;
				pick = i;
			}
		if (builtin == 1) {
			*out = m[pick];
			return 0;
		}
		for (size_t i = 0; i < n; i++) {
			size_t used = strlen(list);

			snprintf(list + used, sizeof(list) - used, "%s%s.%s", i ? ", " : "",
				 m[i]->plural, m[i]->group[0] ? m[i]->group : "core");
		}
		return wmap_error_set(err, WMAP_EINVAL,
				      "resource type \"%s\" is ambiguous: %s; qualify it as "
				      "resource.group",
				      type, list);
	}
	*out = m[0];
	return 0;
}

const wmap_api_resource *wmap_discovery_find_kind(const wmap_discovery *d, const char *group,
						  const char *version, const char *kind)
{
	for (size_t i = 0; d && i < d->n; i++) {
		const wmap_api_resource *r = &d->v[i];

		if (strcmp(r->group, group ? group : "") == 0 && strcmp(r->kind, kind) == 0 &&
		    (!version || strcmp(r->version, version) == 0))
			return r;
	}
	return NULL;
}

char *wmap_resource_path(const wmap_api_resource *r, const char *ns, const char *name)
{
	size_t len = strlen(r->group) + strlen(r->version) + strlen(r->plural) +
		     (ns ? strlen(ns) : 0) + (name ? strlen(name) : 0) + 64;
	char *p = malloc(len);
	int k;

	if (!p)
		return NULL;
	k = r->group[0] ? snprintf(p, len, "/apis/%s/%s", r->group, r->version)
			: snprintf(p, len, "/api/%s", r->version);
	if (r->namespaced && ns)
		k += snprintf(p + k, len - (size_t)k, "/namespaces/%s", ns);
	k += snprintf(p + k, len - (size_t)k, "/%s", r->plural);
	if (name)
		snprintf(p + k, len - (size_t)k, "/%s", name);
	return p;
}

void wmap_resource_label(char *buf, size_t len, const wmap_api_resource *r)
{
	if (r->group[0])
		snprintf(buf, len, "%s.%s", r->plural, r->group);
	else
		snprintf(buf, len, "%s", r->plural);
}
