/* wmap-bench: benchmark inputs and in-process timings for `make bench` (tests/bench/).
 *
 *   wmap-bench object SPEC             the object of SPEC as compact JSON on stdout
 *   wmap-bench review SPEC [--nodef]   the object wrapped in an admission.k8s.io/v1
 *                                      AdmissionReview (operation CREATE) on stdout;
 *                                      --nodef moves it to a group no definition covers
 *   wmap-bench resolve SPEC [--no-status] [--samples N] [--sample-ms MS]
 *                                      times wmap_workload_resolve of the parsed object
 *                                      (--no-status: WMAP_RESOLVE_NO_STATUS, what admission
 *                                      asks for)
 *   wmap-bench admit SPEC [--null|--nodef] [--samples N] [--sample-ms MS]
 *                                      times what the webhook does per review, minus HTTP:
 *                                      wmap_json_parse + wmap_admission_review +
 *                                      wmap_json_text;
 *                                      --null: WMAP_ADMISSION_ALLOW, what
 *                                      wmap-webhook --null-admission does (the floor)
 *
 * SPEC is one of
 *   file:PATH        a YAML or JSON object (a tests/fixtures file)
 *   jobset:N         the JobSet fixture leader-workers.yaml with N replicated jobs
 *   raycluster:N     the RayCluster fixture running.yaml with N worker groups
 *   large:BYTES      a JobSet of 16 replicated jobs whose pod templates carry big env
 *                    lists, padded until the object is at least BYTES of compact JSON
 *   hostile:SHAPE[:BYTES]  (review and admit only) a JobSet review of BYTES (default
 *                    7340032, wmap-webhook's --max-body) whose object.spec.x is filled
 *                    with the cheapest-to-send, dearest-to-read JSON of one shape: keys
 *                    (maps of 16,384 short distinct keys), labels (metadata.labels with
 *                    k0..kN), ints ([[0,0,...],...] in arrays of 16,384), strings
 *                    ([["",...],...]), objects ([[{},...],...]),
 *                    deep ({"a":{"a":...}}), escapes (one string of \u00e9), floats
 *                    ([1.5e3,...])
 *
 * --calls N runs exactly N calls without timing them (for callgrind --toggle-collect=run_*).
 * admit --print writes the answer text of one review on stdout and nothing else: what a
 * change that must keep the output byte for byte the same is compared with.
 * The timing modes print one JSON object: median/min/max microseconds per call over the
 * samples (median_cpu_us: process CPU time per call, the figure for hostile bodies), each sample being the mean of as many calls as fit in --sample-ms (at least 1).
 * The engine is prepared (every jq program compiled) and warmed up before timing. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "wmap/admission.h"
#include "wmap/arena.h"
#include "wmap/json_text.h"
#include "wmap/error.h"
#include "wmap/registry.h"
#include "wmap/workload.h"
#include "wmap/yaml.h"

#define FIXTURES "tests/fixtures"
#define JOBSET_FIXTURE FIXTURES "/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml"
#define RAY_FIXTURE FIXTURES "/ray-io-raycluster-v1/running.yaml"

static void die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "wmap-bench: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	exit(1);
}

static json_t *load_file(const char *path)
{
	json_t *docs = NULL;
	wmap_error err;
	wmap_yaml_opts opts = { 0 };
	opts.allow_aliases = 1;
	if (wmap_yaml_parse_file(&docs, path, &opts, &err))
		die("%s: %s", path, err.message);
	if (json_array_size(docs) < 1)
		die("%s: %s", path, "no document");
	json_t *o = json_incref(json_array_get(docs, 0));
	json_decref(docs);
	return o;
}

/* Renames a pod template's component label so that copies stay distinct. */
static void set_component_label(json_t *pod_template, const char *value)
{
	json_t *md = json_object_get(pod_template, "metadata");
	if (!json_is_object(md)) {
		md = json_object();
		json_object_set_new(pod_template, "metadata", md);
	}
	json_t *labels = json_object_get(md, "labels");
	if (!json_is_object(labels)) {
		labels = json_object();
		json_object_set_new(md, "labels", labels);
	}
	json_object_set_new(labels, "app.kubernetes.io/component", json_string(value));
}

/* JobSet with n replicated jobs: copies of the fixture's "workers" entry named rj-<i>,
 * with one replicatedJobsStatus entry each (what a live object carries). */
static json_t *gen_jobset(long n)
{
	json_t *o = load_file(JOBSET_FIXTURE);
	json_t *spec = json_object_get(o, "spec");
	json_t *rjs = json_object_get(spec, "replicatedJobs");
	json_t *tmpl = json_deep_copy(json_array_get(rjs, json_array_size(rjs) - 1));
	json_t *st = json_object_get(json_object_get(o, "status"), "replicatedJobsStatus");
	json_t *st_tmpl = json_deep_copy(json_array_get(st, json_array_size(st) - 1));
	json_t *out = json_array(), *out_st = json_array();
	char name[64];
	for (long i = 0; i < n; i++) {
		json_t *rj = json_deep_copy(tmpl);
		snprintf(name, sizeof(name), "rj-%ld", i);
		json_object_set_new(rj, "name", json_string(name));
		set_component_label(json_object_get(json_object_get(json_object_get(rj, "template"),
								    "spec"), "template"), name);
		json_array_append_new(out, rj);
		json_t *s = json_deep_copy(st_tmpl);
		json_object_set_new(s, "name", json_string(name));
		json_array_append_new(out_st, s);
	}
	json_object_set_new(spec, "replicatedJobs", out);
	if (st)
		json_object_set_new(json_object_get(o, "status"), "replicatedJobsStatus", out_st);
	else
		json_decref(out_st);
	/* successPolicy names a replicated job: point it at the first one. */
	json_t *sp = json_object_get(spec, "successPolicy");
	if (json_is_object(sp))
		json_object_set_new(sp, "targetReplicatedJobs", json_pack("[s]", "rj-0"));
	json_object_set_new(json_object_get(o, "metadata"), "name",
			    json_string(n == 1 ? "jobset-1" : "jobset-n"));
	json_decref(tmpl);
	json_decref(st_tmpl);
	return o;
}

/* RayCluster with n worker groups: copies of the fixture's first group named wg-<i>. */
static json_t *gen_raycluster(long n)
{
	json_t *o = load_file(RAY_FIXTURE);
	json_t *spec = json_object_get(o, "spec");
	json_t *groups = json_object_get(spec, "workerGroupSpecs");
	json_t *tmpl = json_deep_copy(json_array_get(groups, 0));
	json_t *out = json_array();
	char name[64];
	for (long i = 0; i < n; i++) {
		json_t *g = json_deep_copy(tmpl);
		snprintf(name, sizeof(name), "wg-%ld", i);
		json_object_set_new(g, "groupName", json_string(name));
		json_array_append_new(out, g);
	}
	json_object_set_new(spec, "workerGroupSpecs", out);
	json_decref(tmpl);
	return o;
}

static size_t json_size(const json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);
	size_t n = s ? strlen(s) : 0;
	free(s);
	return n;
}

/* A ~BYTES JobSet: 16 replicated jobs, each container with a long env list (the shape of
 * real training jobs that inline their configuration). */
static json_t *gen_large(long bytes)
{
	json_t *o = gen_jobset(16);
	json_t *rjs = json_object_get(json_object_get(o, "spec"), "replicatedJobs");
	size_t have = json_size(o);
	long i = 0;
	char name[64], value[256];
	while ((long)have < bytes) {
		for (size_t j = 0; j < json_array_size(rjs) && (long)have < bytes; j++) {
			json_t *c = json_array_get(
				json_object_get(json_object_get(json_object_get(json_object_get(
					json_object_get(json_array_get(rjs, j), "template"), "spec"),
					"template"), "spec"), "containers"), 0);
			json_t *env = json_object_get(c, "env");
			if (!json_is_array(env)) {
				env = json_array();
				json_object_set_new(c, "env", env);
			}
			snprintf(name, sizeof(name), "TRAIN_CONFIG_%ld", i);
			snprintf(value, sizeof(value),
				 "layer=%ld;heads=32;hidden=8192;ffn=28672;rope_theta=500000;"
				 "dtype=bf16;checkpoint=s3://ml-team/llama/ckpt/%08ld", i, i * 7919);
			json_array_append_new(env, json_pack("{s:s, s:s}", "name", name,
							     "value", value));
			have += strlen(name) + strlen(value) + 26;
		}
		i++;
	}
	return o;
}

static json_t *make_object(const char *spec)
{
	const char *colon = strchr(spec, ':');
	if (!colon)
		die("bad SPEC %s%s", spec, "");
	char *end;
	long n = strtol(colon + 1, &end, 10);
	if (!strncmp(spec, "file:", 5))
		return load_file(spec + 5);
	if (*end || n < 1)
		die("bad SPEC %s%s", spec, "");
	if (!strncmp(spec, "jobset:", 7))
		return gen_jobset(n);
	if (!strncmp(spec, "raycluster:", 11))
		return gen_raycluster(n);
	if (!strncmp(spec, "large:", 6))
		return gen_large(n);
	die("bad SPEC %s%s", spec, "");
	return NULL;
}

/* What the API server sends on CREATE: no status, no server-set metadata. With nodef the
 * group becomes one that no definition covers (the floor: parsed, looked up, allowed). */
static json_t *make_review(json_t *obj, int nodef, long seq)
{
	json_object_del(obj, "status");
	json_t *md = json_object_get(obj, "metadata");
	const char *server_set[] = { "uid", "resourceVersion", "creationTimestamp", "generation",
				     "managedFields" };
	for (size_t i = 0; i < sizeof(server_set) / sizeof(*server_set); i++)
		json_object_del(md, server_set[i]);
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	if (!av || !kind)
		die("object has no apiVersion or kind%s%s", "", "");
	char group[256] = "", version[64];
	const char *slash = strchr(av, '/');
	if (slash) {
		snprintf(group, sizeof(group), "%.*s", (int)(slash - av), av);
		snprintf(version, sizeof(version), "%s", slash + 1);
	} else {
		snprintf(version, sizeof(version), "%s", av);
	}
	if (nodef) {
		char nav[400];
		snprintf(group, sizeof(group), "nodef.bench.wmap.io");
		snprintf(nav, sizeof(nav), "%s/%s", group, version);
		json_object_set_new(obj, "apiVersion", json_string(nav));
	}
	char resource[128];
	size_t k = 0;
	for (; kind[k] && k < sizeof(resource) - 2; k++)
		resource[k] = (char)(kind[k] >= 'A' && kind[k] <= 'Z' ? kind[k] + 32 : kind[k]);
	resource[k++] = 's';
	resource[k] = '\0';
	char uid[64];
	snprintf(uid, sizeof(uid), "b3e1c0de-0000-4000-8000-%012ld", seq);
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));
	json_t *gvk = json_pack("{s:s, s:s, s:s}", "group", group, "version", version, "kind", kind);
	json_t *gvr = json_pack("{s:s, s:s, s:s}", "group", group, "version", version,
				"resource", resource);
	json_t *req = json_pack(
		"{s:s, s:O, s:O, s:O, s:O, s:s, s:s, s:s, s:{s:s, s:s, s:[s, s]}, s:O, s:n, "
		"s:b, s:{s:s, s:s, s:s}}",
		"uid", uid, "kind", gvk, "resource", gvr, "requestKind", gvk, "requestResource",
		gvr, "name", name ? name : "", "namespace", ns ? ns : "default", "operation",
		"CREATE", "userInfo", "username", "kubernetes-admin", "uid", "bench-user",
		"groups", "system:masters", "system:authenticated", "object", obj, "oldObject",
		"dryRun", 0, "options", "apiVersion", "meta.k8s.io/v1", "kind", "CreateOptions",
		"fieldManager", "kubectl-client-side-apply");
	json_decref(gvk);
	json_decref(gvr);
	return json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
			 "AdmissionReview", "request", req);
}

/* ---- hostile bodies: text, since the deep one cannot be a jansson value ------------ */

typedef struct buf {
	char *p;
	size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		while (cap < b->n + n + 1)
			cap *= 2;
		if (!(b->p = realloc(b->p, cap)))
			die("out of memory%s%s", "", "");
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void puts_(buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* The review text of hostile:SHAPE[:BYTES]; the body is at most BYTES long. */
static char *make_hostile(const char *spec, size_t *len)
{
	char shape[32] = "";
	long bytes = 7340032;
	const char *colon = strchr(spec + 8, ':');
	size_t sl = colon ? (size_t)(colon - (spec + 8)) : strlen(spec + 8);
	if (sl >= sizeof(shape))
		die("bad spec %s%s", spec, "");
	memcpy(shape, spec + 8, sl);
	if (colon)
		bytes = atol(colon + 1);
	const char *head =
		"{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
		"\"request\":{\"uid\":\"hostile-bench\",\"kind\":{\"group\":\"jobset.x-k8s.io\","
		"\"version\":\"v1alpha2\",\"kind\":\"JobSet\"},\"resource\":{\"group\":"
		"\"jobset.x-k8s.io\",\"version\":\"v1alpha2\",\"resource\":\"jobsets\"},"
		"\"name\":\"h\",\"namespace\":\"bench\",\"operation\":\"CREATE\","
		"\"userInfo\":{\"username\":\"bench\"},\"object\":{\"apiVersion\":"
		"\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":{\"name\":\"h\","
		"\"namespace\":\"bench\",\"labels\":{";
	const char *mid = "}},\"spec\":{\"replicatedJobs\":[],\"x\":";
	const char *tail = "}},\"oldObject\":null,\"dryRun\":false,\"options\":{}}}";
	buf b = { 0 };
	char item[64];
	puts_(&b, head);
	int labels = !strcmp(shape, "labels");
	size_t room = (size_t)bytes - strlen(tail) - strlen(mid) - 64;
	if (labels) {
		for (long i = 0; b.n + 24 < room; i++) {
			int n = snprintf(item, sizeof(item), "%s\"k%lx\":\"v\"", i ? "," : "", i);
			put(&b, item, (size_t)n);
		}
		puts_(&b, mid);
		puts_(&b, "1");
	} else {
		puts_(&b, mid);
		if (!strcmp(shape, "keys")) {
			puts_(&b, "[");
			for (long o = 0; b.n + 32 < room; o++) {
				puts_(&b, o ? ",{" : "{");
				for (long i = 0; i < 16384 && b.n + 32 < room; i++) {
					int n = snprintf(item, sizeof(item), "%s\"%lx\":0", i ? "," : "", i);
					put(&b, item, (size_t)n);
				}
				puts_(&b, "}");
			}
			puts_(&b, "]");
		} else if (!strcmp(shape, "deep")) {
			long levels = (long)(room - b.n - 2) / 6;
			for (long i = 0; i < levels; i++)
				puts_(&b, "{\"a\":");
			puts_(&b, "1");
			for (long i = 0; i < levels; i++)
				puts_(&b, "}");
		} else if (!strcmp(shape, "escapes")) {
			puts_(&b, "\"");
			while (b.n + 8 < room)
				puts_(&b, "\\u00e9");
			puts_(&b, "\"");
		} else {
			const char *one = !strcmp(shape, "ints") ? "0" : !strcmp(shape, "strings") ? "\"\""
					: !strcmp(shape, "objects") ? "{}" : !strcmp(shape, "floats") ? "1.5e3"
					: NULL;
			if (!one)
				die("unknown hostile shape %s%s", shape, "");
			/* Arrays of 16,384 items (the member cap), so that the node cap is reached. */
			size_t ol = strlen(one);
			puts_(&b, "[[");
			put(&b, one, ol);
			for (long i = 1; b.n + ol + 8 < room; i++) {
				puts_(&b, i % 16384 ? "," : "],[");
				put(&b, one, ol);
			}
			puts_(&b, "]]");
		}
	}
	puts_(&b, tail);
	*len = b.n;
	return b.p;
}

static double cpu_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

typedef struct timed {
	wmap_engine *eng;
	json_t *object;       /* resolve */
	char *body;           /* admit */
	size_t body_len;
	unsigned flags;       /* resolve: WMAP_RESOLVE_* */
	wmap_admission_mode mode;   /* admit */
	const char *result;   /* admit: what the review did (patched, failopen, ...) */
	char reason[96];
	size_t patch_ops;
	int ok;
	int print;            /* admit --print: the answer text to stdout */
} timed;

static void run_resolve(timed *t)
{
	wmap_workload *w = NULL;
	wmap_error err;
	if (wmap_workload_resolve_ex(&w, t->eng, t->object, NULL, t->flags, &err))
		die("resolve: %s%s", err.message, "");
	t->ok += w->n_nodes > 0;
	wmap_workload_free(w);
}

static void run_admit(timed *t)
{
	json_error_t jerr;
	json_t *review = NULL;
	wmap_json_cut cut;
	wmap_admission_config cfg = { 0 };
	/* As the server: the thread's review arena from the parse to the written answer (the
	 * floor too, since it is the same parse), its caps, no deadline, so that a run under
	 * callgrind (50 times slower) does the same work as a timed one. */
	wmap_arena_begin();
	if (wmap_admission_parse(&review, &cut, t->body, t->body_len, 0, &jerr))
		die("review: %s%s", jerr.text, "");
	cfg.cut = &cut;
	wmap_admission_info info;
	wmap_error err;
	char *text = NULL; /* as webhook/server.c writes it */
	if (wmap_admission_review_text(&text, NULL, t->eng, &cfg, t->mode, review, &info, &err))
		die("admission: %s%s", err.message, "");
	if (!wmap_arena_holds(review))
		json_decref(review); /* as the server: the arena's end drops it */
	t->result = info.result;
	t->patch_ops = info.patch_ops;
	snprintf(t->reason, sizeof(t->reason), "%s", info.reason ? info.reason : "");
	t->ok += text != NULL;
	if (t->print && text)
		printf("%s\n", text);
	wmap_arena_end();
	free(text);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: wmap-bench object|review|resolve|admit SPEC [--nodef] "
				"[--null] [--samples N] [--sample-ms MS]\n");
		return 2;
	}
	const char *cmd = argv[1], *spec = argv[2];
	/* The allocator settings of wmap-webhook (webhook/main.c): freed memory is kept. */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	int nodef = 0, null_mode = 0, samples = 15, print = 0;
	long fixed_calls = 0;
	unsigned flags = 0;
	double sample_ms = 20;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--nodef"))
			nodef = 1;
		else if (!strcmp(argv[i], "--null"))
			null_mode = 1;
		else if (!strcmp(argv[i], "--no-status"))
			flags |= WMAP_RESOLVE_NO_STATUS;
		else if (!strcmp(argv[i], "--print"))
			print = 1;
		else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			samples = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			fixed_calls = atol(argv[++i]);
		else if (!strcmp(argv[i], "--sample-ms") && i + 1 < argc)
			sample_ms = atof(argv[++i]);
		else
			die("unknown argument %s%s", argv[i], "");
	}
	if (samples < 1)
		samples = 1;
	int hostile = !strncmp(spec, "hostile:", 8);
	if (hostile && !strcmp(cmd, "review")) {
		size_t n;
		char *text = make_hostile(spec, &n);
		if (fwrite(text, 1, n, stdout) != n || fflush(stdout))
			die("cannot write%s%s", "", "");
		free(text);
		return 0;
	}
	if (hostile && strcmp(cmd, "admit"))
		die("%s: only review and admit take hostile bodies%s", spec, "");
	json_t *obj = hostile ? NULL : make_object(spec);
	if (!strcmp(cmd, "object") || !strcmp(cmd, "review")) {
		json_t *out = !strcmp(cmd, "object") ? json_incref(obj) : make_review(obj, nodef, 1);
		if (!strcmp(cmd, "object"))
			json_decref(obj);
		if (json_dumpf(out, stdout, JSON_COMPACT) || fflush(stdout))
			die("cannot write%s%s", "", "");
		json_decref(out);
		return 0;
	}
	int resolve = !strcmp(cmd, "resolve");
	if (!resolve && strcmp(cmd, "admit"))
		die("unknown command %s%s", cmd, "");

	wmap_registry *reg;
	wmap_engine *eng;
	wmap_error err;
	if (wmap_registry_new(&reg, &err) || wmap_registry_add_catalog(reg, &err) ||
	    wmap_engine_new(&eng, reg, &err) || wmap_engine_prepare(eng, &err))
		die("engine: %s%s", err.message, "");
	timed t = { .eng = eng, .flags = flags,
		    .mode = null_mode ? WMAP_ADMISSION_ALLOW : WMAP_ADMISSION_MUTATE };
	size_t bytes;
	if (resolve) {
		t.object = obj;
		bytes = json_size(obj);
	} else if (hostile) {
		t.body = make_hostile(spec, &t.body_len);
		bytes = t.body_len;
	} else {
		json_t *review = make_review(obj, nodef, 1);
		t.body = json_dumps(review, JSON_COMPACT);
		t.body_len = strlen(t.body);
		bytes = t.body_len;
		json_decref(review);
	}
	void (*fn)(timed *) = resolve ? run_resolve : run_admit;

	if (print && !resolve) {
		t.print = 1;
		run_admit(&t);
		return 0;
	}
	if (fixed_calls > 0) {
		/* For profilers (callgrind --toggle-collect=run_*): exactly N calls, no timing. */
		for (long i = 0; i < fixed_calls; i++)
			fn(&t);
		printf("{\"mode\":\"%s\",\"spec\":\"%s\",\"calls\":%ld,\"result\":\"%s\"}\n", cmd,
		       spec, fixed_calls, t.result ? t.result : "");
		return 0;
	}
	/* Warm-up: at least 50 ms and 3 calls (first-use allocations, caches). */
	double t0 = now_us();
	for (int i = 0; i < 3 || now_us() - t0 < 50e3; i++)
		fn(&t);
	double *per = calloc((size_t)samples, sizeof(double));
	double *cpu = calloc((size_t)samples, sizeof(double));
	long calls = 0;
	for (int s = 0; s < samples; s++) {
		long n = 0;
		double a = now_us(), ca = cpu_us(), b;
		do {
			fn(&t);
			n++;
			b = now_us();
		} while (b - a < sample_ms * 1e3);
		per[s] = (b - a) / (double)n;
		cpu[s] = (cpu_us() - ca) / (double)n;
		calls += n;
	}
	qsort(per, (size_t)samples, sizeof(double), cmp_double);
	qsort(cpu, (size_t)samples, sizeof(double), cmp_double);
	double median_cpu = samples % 2 ? cpu[samples / 2]
					: (cpu[samples / 2 - 1] + cpu[samples / 2]) / 2;
	double median = samples % 2 ? per[samples / 2]
				    : (per[samples / 2 - 1] + per[samples / 2]) / 2;
	printf("{\"mode\":\"%s\",\"spec\":\"%s\",\"nodef\":%s,\"null\":%s,\"no_status\":%s,\"bytes\":%zu,\"samples\":%d,"
	       "\"calls\":%ld,\"median_us\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,"
	       "\"median_cpu_us\":%.3f,\"jq_compiles\":%u,\"result\":\"%s\",\"reason\":\"%s\",\"patch_ops\":%zu}\n",
	       cmd, spec, nodef ? "true" : "false", null_mode ? "true" : "false", flags & WMAP_RESOLVE_NO_STATUS ? "true" : "false", bytes, samples, calls, median, per[0],
	       per[samples - 1], median_cpu, wmap_engine_compiles(eng), t.result ? t.result : "",
	       t.reason, t.patch_ops);
	free(per);
	free(cpu);
	free(t.body);
	json_decref(obj);
	wmap_engine_free(eng);
	wmap_registry_free(reg);
	return 0;
}
