/* Conformance with the upstream catalog: every workload object in
 * ../shared/interop/upstream-samples (manifests and every STATE frame of the recordings) is
 * read through our catalog's definition and through upstream's definition of the same kind,
 * both on our engine. The table of both goes to stdout (and build/conformance.md); every
 * difference must be listed with its reason in tests/conformance/differences.txt, and every
 * recorded frame must read as its recorded state. Exit 0 when all holds, 1 otherwise,
 * 77 (skipped) when ../shared is absent. */
#define _POSIX_C_SOURCE 200809L
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wmap/registry.h"
#include "wmap/workload.h"
#include "wmap/yaml.h"

typedef struct reading {
	int ok;
	char status[128];
	long long replicas, gpus;
	char err[160];
} reading;

static wmap_registry *ours, *theirs;
static wmap_engine *our_eng, *their_eng;
static char differences[64 * 1024];
static int failures, rows, documented;

static void read_with(reading *r, wmap_engine *eng, json_t *obj)
{
	wmap_workload *w = NULL;
	wmap_error err = {0};
	memset(r, 0, sizeof(*r));
	if (wmap_workload_resolve(&w, eng, obj, NULL, &err) != 0) {
		snprintf(r->err, sizeof(r->err), "%s", err.code == WMAP_ENODEF ? "no definition" : "error");
		snprintf(r->status, sizeof(r->status), "%s", r->err);
		return;
	}
	r->ok = 1;
	wmap_workload_status_string(w, r->status, sizeof(r->status), ",");
	r->replicas = w->desired;
	r->gpus = w->total.gpu;
	wmap_workload_free(w);
}

/* "<name> <field>" listed in differences.txt (a line "name field: reason"). */
static int documented_difference(const char *name, const char *field)
{
	char key[512];
	snprintf(key, sizeof(key), "\n%s %s:", name, field);
	return strstr(differences, key) != NULL;
}

static void compare(FILE *md, const char *name, json_t *obj, const char *recorded_state)
{
	reading a, b;
	read_with(&a, our_eng, obj);
	read_with(&b, their_eng, obj);
	const char *fields[3] = {"status", "replicas", "gpus"};
	int differs[3] = {strcmp(a.status, b.status) != 0, a.replicas != b.replicas, a.gpus != b.gpus};
	char note[256] = "";
	size_t nl = 0;
	for (int f = 0; f < 3; f++) {
		if (!differs[f])
			continue;
		int doc = documented_difference(name, fields[f]);
		nl += (size_t)snprintf(note + nl, sizeof(note) - nl, "%s%s %s", nl ? "; " : "", fields[f],
				       doc ? "differs (documented)" : "DIFFERS (undocumented)");
		if (doc)
			documented++;
		else
			failures++;
	}
	if (recorded_state && !strstr(a.status, recorded_state) &&
	    !documented_difference(name, "recorded")) {
		nl += (size_t)snprintf(note + nl, sizeof(note) - nl, "%sours does not read recorded %s",
				       nl ? "; " : "", recorded_state);
		failures++;
	}
	const char *fmt = "| %s | %s | %s / %lld / %lld | %s / %lld / %lld | %s |\n";
	fprintf(md, fmt, name, recorded_state ? recorded_state : "", a.status, a.replicas, a.gpus,
		b.status, b.replicas, b.gpus, *note ? note : "same");
	printf("%-58s %-11s ours %-22s %3lld %3lld   upstream %-22s %3lld %3lld  %s\n", name,
	       recorded_state ? recorded_state : "-", a.status, a.replicas, a.gpus, b.status, b.replicas,
	       b.gpus, *note ? note : "same");
	rows++;
}

static int load_differences(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n;
	if (!f)
		return -1;
	differences[0] = '\n';
	n = fread(differences + 1, 1, sizeof(differences) - 2, f);
	differences[n + 1] = '\0';
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	const char *shared = argc > 1 ? argv[1] : "../shared";
	const char *out = argc > 2 ? argv[2] : "build/conformance.md";
	char pattern[1024];
	struct stat st;
	wmap_error err = {0};
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/interop", shared);
	if (stat(pattern, &st) != 0 || !S_ISDIR(st.st_mode)) {
		printf("conformance: skipped: upstream's catalog and samples are not here (%s is absent)\n", pattern);
		return 77;
	}
	if (load_differences("tests/conformance/differences.txt")) {
		fprintf(stderr, "conformance: cannot read tests/conformance/differences.txt\n");
		return 1;
	}
	snprintf(pattern, sizeof(pattern), "%s/interop/upstream-catalog", shared);
	if (wmap_registry_new(&ours, &err) || wmap_registry_add_catalog(ours, &err) ||
	    wmap_registry_new(&theirs, &err) || wmap_registry_add_path(theirs, pattern, WMAP_ORIGIN_FILE, &err) ||
	    wmap_engine_new(&our_eng, ours, &err) || wmap_engine_new(&their_eng, theirs, &err)) {
		fprintf(stderr, "conformance: %s\n", err.message);
		return 1;
	}
	FILE *md = fopen(out, "w");
	if (!md) {
		fprintf(stderr, "conformance: cannot write %s\n", out);
		return 1;
	}
	fprintf(md, "| object | recorded | ours: status / replicas / GPUs | upstream: status / replicas / GPUs | note |\n|---|---|---|---|---|\n");

	/* manifests: every document of a kind both catalogs cover */
	snprintf(pattern, sizeof(pattern), "%s/interop/upstream-samples/*.yaml", shared);
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			json_t *docs;
			wmap_yaml_opts o = {.allow_aliases = 1};
			const char *base = strrchr(g.gl_pathv[i], '/') + 1;
			if (wmap_yaml_parse_file(&docs, g.gl_pathv[i], &o, &err))
				continue; /* upstream's broken mpijob.yaml: tested elsewhere */
			size_t k;
			json_t *doc;
			json_array_foreach(docs, k, doc) {
				const wmap_definition *d;
				/* definitions themselves (docs/examples) are not workloads */
				if (wmap_registry_find_object(&d, theirs, doc, &err) != 0)
					continue;
				compare(md, base, doc, NULL);
			}
			json_decref(docs);
		}
		globfree(&g);
	}
	/* recordings: every STATE frame */
	snprintf(pattern, sizeof(pattern), "%s/interop/upstream-samples/recorded/*.yaml", shared);
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			json_t *docs;
			const char *base = strrchr(g.gl_pathv[i], '/') + 1;
			if (wmap_yaml_parse_file(&docs, g.gl_pathv[i], NULL, &err)) {
				fprintf(stderr, "conformance: %s\n", err.message);
				failures++;
				continue;
			}
			json_t *events = json_object_get(json_array_get(docs, 0), "events");
			size_t k;
			json_t *ev;
			json_array_foreach(events, k, ev) {
				char name[512];
				const char *kind = json_string_value(json_object_get(ev, "kind"));
				if (!kind || strcmp(kind, "STATE") != 0)
					continue;
				snprintf(name, sizeof(name), "%s#%zu", base, k);
				compare(md, name, json_object_get(ev, "object"),
					json_string_value(json_object_get(ev, "state")));
			}
			json_decref(docs);
		}
		globfree(&g);
	}
	fclose(md);
	printf("conformance: %d objects compared, %d documented differences, %d failures (table in %s)\n",
	       rows, documented, failures, out);
	wmap_engine_free(our_eng);
	wmap_engine_free(their_eng);
	wmap_registry_free(ours);
	wmap_registry_free(theirs);
	return failures ? 1 : 0;
}
