/* Allocation failures, curl-torture style: each scenario runs once to count its fallible
 * allocations, then again failing the k-th one for every k (sampled above SWEEP_MAX unless
 * WMAP_ALLOCFAIL_FULL=1). Every run must end without a crash, with either the baseline's
 * result or a negative code and a message; an admission may also fail open (allowed, no
 * patch), but never answer with another patch. Leaks show under `make check SANITIZE=1`.
 *
 * Two hooks. In unit-tests only jansson's allocations can fail (json_set_alloc_funcs).
 * build/allocfail-tests (`make allocfail`, tests/fuzz/fuzz.mk) links
 * tests/fuzz/allocfail_interpose.c, which also fails libwmap's own malloc, calloc, realloc,
 * strdup and strndup and libyaml's; the weak symbols below say which one is present. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/admission.h"
#include "wmap/arena.h"
#include "wmap/audit.h"
#include "wmap/file.h"
#include "wmap/pod_target.h"
#include "wmap/definition.h"
#include "wmap/policy.h"
#include "wmap/json_text.h"
#include "wmap/registry.h"
#include "wmap/report.h"
#include "wmap/schema.h"
#include "wmap/workload.h"
#include "wmap/wlmetrics.h"
#include "wmap/yaml.h"

extern int wmap_allocfail_interposed __attribute__((weak));
void wmap_allocfail_arm(long k) __attribute__((weak));
long wmap_allocfail_disarm(void) __attribute__((weak));

#define SWEEP_MAX 1500

/* ---- the jansson-only hook ---------------------------------------------------------- */

static int j_armed;
static long j_fail_at, j_counted;

static void *j_malloc(size_t n)
{
	if (j_armed && ++j_counted == j_fail_at) {
		errno = ENOMEM;
		return NULL;
	}
	return malloc(n);
}

static void j_free(void *p)
{
	free(p);
}

static int interposed(void)
{
	return &wmap_allocfail_interposed != NULL && wmap_allocfail_arm && wmap_allocfail_disarm;
}

static void arm(long k)
{
	if (interposed()) {
		wmap_allocfail_arm(k);
		return;
	}
	json_set_alloc_funcs(j_malloc, j_free);
	j_fail_at = k;
	j_counted = 0;
	j_armed = 1;
}

static long disarm(void)
{
	if (interposed())
		return wmap_allocfail_disarm();
	j_armed = 0;
	return j_counted;
}

/* ---- the sweep ------------------------------------------------------------------------ */

/* A scenario runs the code under test between arm and disarm (the harness does that) and
 * returns its code; it describes its result into out (compared with the baseline's) and
 * frees everything itself. */
typedef int (*scenario_fn)(void *arg, char *out, size_t len, wmap_error *err);

typedef struct sweep_result {
	long allocations, runs, failed_clean, same_result, fail_open, partial;
} sweep_result;

/* "patched <json>" results: 1 when every operation of got is one of base's (a patch with
 * operations missing, none changed). */
static int partial_patch(const char *base, const char *got)
{
	if (strncmp(base, "patched [", 9) != 0 || strncmp(got, "patched [", 9) != 0)
		return 0;
	json_t *b = json_loads(base + 8, 0, NULL), *g = json_loads(got + 8, 0, NULL);
	int ok = json_is_array(b) && json_is_array(g) && json_array_size(g) < json_array_size(b);
	size_t i, j;
	json_t *op, *x;
	json_array_foreach(g, i, op) {
		int found = 0;
		json_array_foreach(b, j, x)
			found |= json_equal(op, x);
		ok &= found;
	}
	json_decref(b);
	json_decref(g);
	return ok;
}

/* A scenario that may make no jansson value at all (a RayCluster's resolve: its scale
 * values are plain numbers): with jansson's allocations alone hooked, nothing can fail
 * there, and the sweep has nothing to do. Every other scenario must allocate. */
static int none_ok;

/* fail_open_ok: a result "failopen" counts as clean (admission). */
static sweep_result sweep_n(const char *name, scenario_fn fn, void *arg, int fail_open_ok,
			    long max_runs)
{
	sweep_result r = {0};
	static char base[65536], got[65536];
	wmap_error err = {0};

	arm(0);
	int rc = fn(arg, base, sizeof(base), &err);
	r.allocations = disarm();
	cr_assert_eq(rc, 0, "%s: baseline failed: %s", name, err.message);
	if (r.allocations == 0 && none_ok && !interposed()) {
		cr_log_info("%s: no jansson allocation to fail", name);
		return r;
	}
	cr_assert_gt(r.allocations, 0, "%s: no allocation seen", name);

	long step = 1;
	/* Under valgrind (make valgrind) every run costs ~50x: sample ten times fewer points. */
	const char *pre = getenv("LD_PRELOAD");
	if (pre && strstr(pre, "vgpreload"))
		max_runs = max_runs / 10 + 1;
	if (r.allocations > max_runs && !getenv("WMAP_ALLOCFAIL_FULL"))
		step = r.allocations / max_runs + 1;
	for (long k = 1; k <= r.allocations; k += (k < 200 && step < 10 ? 1 : step)) {
		wmap_error_clear(&err);
		got[0] = '\0';
		arm(k);
		rc = fn(arg, got, sizeof(got), &err);
		long seen = disarm();
		r.runs++;
		if (seen < k) /* the path changed before reaching k: nothing failed */
			continue;
		if (rc < 0) {
			cr_expect(err.message[0] != '\0', "%s: k=%ld: rc %d without a message", name,
				  k, rc);
			cr_expect(rc == err.code, "%s: k=%ld: rc %d but err.code %d", name, k, rc,
				  err.code);
			r.failed_clean++;
		} else if (strcmp(got, base) == 0) {
			r.same_result++;
		} else if (fail_open_ok && strncmp(got, "failopen", 8) == 0) {
			r.fail_open++;
		} else if (fail_open_ok && partial_patch(base, got)) {
			/* Some writes silently skipped: the review must fail open instead. */
			r.partial++;
			size_t d = 0;
			while (base[d] && base[d] == got[d])
				d++;
			cr_expect(0, "%s: k=%ld: partial patch, from byte %zu: baseline ...%.160s",
				  name, k, d, base + (d > 40 ? d - 40 : 0));
		} else {
			size_t d = 0;
			while (base[d] && base[d] == got[d])
				d++;
			size_t from = d > 60 ? d - 60 : 0;
			cr_expect(0, "%s: k=%ld: succeeded with another result, from byte %zu:\n"
				  "  baseline ...%.200s\n  got      ...%.200s", name, k, d, base + from,
				  got + from);
		}
	}
	cr_log_info("%s: %ld fallible allocations (%s), %ld runs: %ld clean errors, %ld same result, "
		    "%ld fail-open, %ld partial patches", name, r.allocations,
		    interposed() ? "libwmap+jansson+libyaml" : "jansson", r.runs, r.failed_clean,
		    r.same_result, r.fail_open, r.partial);
	return r;
}

static sweep_result sweep(const char *name, scenario_fn fn, void *arg, int fail_open_ok)
{
	return sweep_n(name, fn, arg, fail_open_ok, SWEEP_MAX);
}

/* ---- scenarios ------------------------------------------------------------------------ */

#define JOBSET_DEF "catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml"
#define JOBSET "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/created.yaml"
#define RAYCLUSTER "tests/fixtures/ray-io-raycluster-v1/running.yaml"

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len;
	wmap_error err = {0};
	cr_assert_eq(wmap_file_read(&text, &len, path, 1 << 20, &err), 0, "%s", err.message);
	return text;
}

/* YAML text -> documents -> definition. */
static int s_definition(void *arg, char *out, size_t len, wmap_error *err)
{
	const char *text = arg;
	json_t *docs = NULL, *pos = json_object();
	wmap_definition *d = NULL;
	wmap_yaml_opts o = {.positions = pos};
	int rc = pos ? 0 : wmap_error_set(err, WMAP_ENOMEM, "test: out of memory");
	if (rc == 0)
		rc = wmap_yaml_parse(&docs, text, strlen(text), JOBSET_DEF, &o, err);
	if (rc == 0)
		rc = wmap_definition_load(&d, json_array_get(docs, 0), JOBSET_DEF,
					  WMAP_ORIGIN_FILE, pos, 0, err);
	if (rc == 0)
		snprintf(out, len, "%s components=%zu exprs=%zu groups=%zu", d->name,
			 d->n_components, d->n_exprs, d->n_pod_groups);
	wmap_definition_free(d);
	json_decref(docs);
	json_decref(pos);
	return rc;
}

/* The whole embedded catalog into a registry. */
static int s_catalog(void *arg, char *out, size_t len, wmap_error *err)
{
	(void)arg;
	wmap_registry *reg = NULL;
	int rc = wmap_registry_new(&reg, err);
	if (rc == 0)
		rc = wmap_registry_add_catalog(reg, err);
	if (rc == 0)
		snprintf(out, len, "%zu definitions", wmap_registry_count(reg));
	wmap_registry_free(reg);
	return rc;
}

typedef struct resolve_arg {
	wmap_engine *eng;
	json_t *object;
} resolve_arg;

/* An object resolved through its catalog definition (the engine is prepared outside). */
static int s_resolve(void *arg, char *out, size_t len, wmap_error *err)
{
	resolve_arg *a = arg;
	wmap_workload *w = NULL;
	int rc = wmap_workload_resolve(&w, a->eng, a->object, NULL, err);
	if (rc == 0) {
		char st[256];
		wmap_workload_status_string(w, st, sizeof(st), ",");
		snprintf(out, len, "nodes=%zu desired=%lld gpu=%lld cpu=%lld status=%s", w->n_nodes,
			 (long long)w->desired, (long long)w->total.gpu,
			 (long long)w->total.cpu_milli, st);
	}
	wmap_workload_free(w);
	return rc;
}

/* What `kubectl wmap patch` writes through: every pod-template target of a resolved
 * workload. Out of memory must fail the whole list (the plugin then sends no patch), never
 * leave a location out and carry on: a NULL pointer means "nothing to write there". */
static int s_pod_targets(void *arg, char *out, size_t len, wmap_error *err)
{
	const wmap_workload *w = arg;
	size_t n = 0;
	int rc = 0;

	out[0] = '\0';
	for (size_t k = 0; k < w->n_nodes && rc == 0; k++) {
		for (size_t i = 0; i < w->nodes[k].n_instances && rc == 0; i++) {
			wmap_pod_target t;
			int ok;

			if (!w->nodes[k].instances[i].has_pod)
				continue;
			ok = wmap_pod_target_init(&t, NULL, w, k, i);
			if (ok < 0)
				rc = wmap_error_set(err, ok, "pod targets: out of memory");
			else if (ok > 0 && n < len)
				n += (size_t)snprintf(out + n, len - n, "%s[%s] %s %s %s %s %s\n",
						      t.component, t.instance ? t.instance : "",
						      t.labels ? t.labels : "-",
						      t.annotations ? t.annotations : "-",
						      t.spec ? t.spec : "-",
						      t.scheduler ? t.scheduler : "-",
						      t.priority ? t.priority : "-");
			wmap_pod_target_clear(&t);
		}
	}
	return rc;
}

typedef struct admit_arg {
	wmap_engine *eng;
	wmap_admission_config cfg;
	json_t *review;
} admit_arg;

/* Standard base64 into out (no allocation); the decoded text, or "?" when malformed. */
static const char *unbase64(const char *b64, char *out, size_t len)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	unsigned v = 0;
	int bits = 0;
	for (const char *s = b64; *s && *s != '='; s++) {
		const char *p = strchr(tab, *s);
		if (!p || o + 1 >= len)
			return "?";
		v = v << 6 | (unsigned)(p - tab);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)(v >> bits & 0xff);
		}
	}
	out[o] = '\0';
	return out;
}

/* One AdmissionReview answered; the result is the patch, or "failopen" and the reason. */
static int s_admit(void *arg, char *out, size_t len, wmap_error *err)
{
	admit_arg *a = arg;
	json_t *resp = NULL;
	wmap_admission_info info;
	int rc = wmap_admission_review(&resp, a->eng, &a->cfg, WMAP_ADMISSION_MUTATE, a->review,
				       &info, err);
	if (rc == 0) {
		json_t *r = json_object_get(resp, "response");
		const char *patch = json_string_value(json_object_get(r, "patch"));
		if (info.result && strcmp(info.result, "failopen") == 0 && !patch &&
		    json_is_true(json_object_get(r, "allowed")))
			snprintf(out, len, "failopen %s", info.reason ? info.reason : "");
		else {
			static char text[60000];
			snprintf(out, len, "%s %s", info.result ? info.result : "?",
				 patch ? unbase64(patch, text, sizeof(text)) : "no patch");
		}
	}
	json_decref(resp);
	return rc;
}

static const char policy_yaml[] =
	"apiVersion: wmap.io/v1alpha1\n"
	"kind: WorkloadPolicy\n"
	"metadata: {name: team}\n"
	"spec:\n"
	"  match: {namespaces: [\"ml-*\"], selector: {matchExpressions: [{key: env, operator: DoesNotExist}]}}\n"
	"  podTemplate:\n"
	"    labels: {cost-center: research}\n"
	"    annotations: {example.com/owner: team-a}\n"
	"    nodeSelector: {nvidia.com/gpu.present: \"true\"}\n"
	"    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
	"  gang: {scheduler: volcano, queue: q}\n"
	"---\n"
	"apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: gpus}\n"
	"spec:\n  mode: require\n  validationActions: [Deny]\n"
	"  podTemplate: {priorityClassName: high}\n"
	"  limits:\n    workload: {nvidia.com/gpu: 64, memory: 4Ti, pods: 256}\n"
	"    pod: {nvidia.com/gpu: 8, cpu: 500m}\n";

/* A policy set from YAML text. */
static int s_policy(void *arg, char *out, size_t len, wmap_error *err)
{
	const char *text = arg;
	json_t *docs = NULL, *pos = json_object();
	wmap_policy_set *set = NULL;
	wmap_yaml_opts o = {.positions = pos};
	int rc = pos ? 0 : wmap_error_set(err, WMAP_ENOMEM, "test: out of memory");
	if (rc == 0)
		rc = wmap_yaml_parse(&docs, text, strlen(text), "policy.yaml", &o, err);
	if (rc == 0)
		rc = wmap_policy_set_parse(&set, docs, "policy.yaml", pos, err);
	if (rc == 0)
		snprintf(out, len, "%zu policies, first %s", set->n, set->policies[0].name);
	wmap_policy_set_free(set);
	json_decref(docs);
	json_decref(pos);
	return rc;
}

/* A compact description of a value that allocates nothing (jansson's own dump may fail
 * under the hook, and would then describe the hook rather than the code under test). */
static void describe(const json_t *v, char *out, size_t len, size_t *n)
{
	const char *k;
	json_t *x;
	size_t i;
#define PUT(...) (*n += (size_t)snprintf(out + (*n < len ? *n : len), *n < len ? len - *n : 0, __VA_ARGS__))
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		PUT("{");
		json_object_foreach((json_t *)v, k, x) {
			PUT("%s:", k);
			describe(x, out, len, n);
			PUT(",");
		}
		PUT("}");
		break;
	case JSON_ARRAY:
		PUT("[");
		json_array_foreach(v, i, x) {
			describe(x, out, len, n);
			PUT(",");
		}
		PUT("]");
		break;
	case JSON_STRING:
		PUT("\"%s\"", json_string_value(v));
		break;
	case JSON_INTEGER:
		PUT("%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		PUT("%g", json_real_value(v));
		break;
	default:
		PUT("%s", json_is_true(v) ? "true" : json_is_false(v) ? "false" : "null");
	}
#undef PUT
}

/* YAML with anchors, aliases and merge keys. */
static int s_yaml_aliases(void *arg, char *out, size_t len, wmap_error *err)
{
	const char *text = arg;
	json_t *docs = NULL;
	wmap_yaml_opts o = {.allow_aliases = 1};
	int rc = wmap_yaml_parse(&docs, text, strlen(text), "aliases.yaml", &o, err);
	if (rc == 0) {
		size_t n = 0;
		describe(docs, out, len, &n);
	}
	json_decref(docs);
	return rc;
}

/* A namespace's policy report from three workloads' results, against a previous report
 * (timestamps carried over): the whole document, or a negative code. */
static int s_report(void *arg, char *out, size_t len, wmap_error *err)
{
	json_t *const *in = arg, *rep = NULL;
	int rc = wmap_report_build(&rep, WMAP_REPORT_OPENREPORTS, "ml", in[0], in[1], 7, err);
	if (rc == 0) {
		char *t = wmap_json_text(rep, NULL); /* whole or nothing, unlike json_dumps */
		if (!t)
			rc = wmap_error_set(err, WMAP_ENOMEM, "test: out of memory");
		else
			snprintf(out, len, "%s", t);
		free(t);
	}
	json_decref(rep);
	return rc;
}

/* ---- tests ---------------------------------------------------------------------------- */

Test(allocfail, definition_load)
{
	char *text = slurp(JOBSET_DEF);
	sweep("definition " JOBSET_DEF, s_definition, text, 0);
	free(text);
}

Test(allocfail, catalog, .timeout = 120)
{
	/* ~70,000 allocations per load: 300 sampled points keep it under a minute with ASan. */
	sweep_n("whole catalog", s_catalog, NULL, 0, 300);
}

Test(allocfail, policy_set)
{
	sweep("policy set", s_policy, (void *)policy_yaml, 0);
}

Test(allocfail, policy_report)
{
	json_t *in[2];
	in[0] = t_yaml("- workload: {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: b, uid: u-b}\n"
		       "  pass: [labels]\n"
		       "  fail: [{policy: prio, actions: [Audit], message: m1}, {policy: prio, actions: [Deny], message: m0}]\n"
		       "- workload: {apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: p}\n"
		       "  pass: [prio, labels]\n"
		       "- workload: {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: a}\n"
		       "  fail: [{policy: labels, actions: [Warn], message: m2}]\n");
	wmap_error err = {0};
	cr_assert_eq(wmap_report_build(&in[1], WMAP_REPORT_OPENREPORTS, "ml", in[0], NULL, 3, &err), 0, "%s", err.message);
	sweep("policy report", s_report, in, 0);
	json_decref(in[0]);
	json_decref(in[1]);
}

Test(allocfail, yaml_aliases)
{
	static const char text[] = "base: &b {image: x, env: [{name: A, value: \"1\"}]}\n"
				   "list: &l [1, 2, 3]\n"
				   "a: {<<: *b, extra: *l}\n"
				   "b: [*b, *l, *l]\n"
				   "---\n"
				   "{\"json\": [1, 2.5, true, null, \"s\"]}\n";
	sweep("yaml with aliases", s_yaml_aliases, (void *)text, 0);
}

static void with_engine(void (*body)(wmap_engine *eng))
{
	wmap_registry *reg = NULL;
	wmap_engine *eng = NULL;
	wmap_error err = {0};
	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_engine_new(&eng, reg, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_engine_prepare(eng, &err), 0, "%s", err.message);
	body(eng);
	wmap_engine_free(eng);
	wmap_registry_free(reg);
}

static void resolve_body(wmap_engine *eng)
{
	const char *paths[] = {JOBSET, RAYCLUSTER};
	for (size_t i = 0; i < 2; i++) {
		char msg[WMAP_ERROR_MAX];
		resolve_arg a = {eng, t_load_file(paths[i], msg, sizeof(msg))};
		cr_assert_not_null(a.object, "%s", msg);
		none_ok = i == 1; /* RAYCLUSTER */
		sweep(paths[i], s_resolve, &a, 0);
		none_ok = 0;
		json_decref(a.object);
	}
}

/* A resolved workload's workload metrics lines: whole, or a clean error. */
static int s_wlmetrics(void *arg, char *out, size_t len, wmap_error *err)
{
	const wmap_workload *w = arg;
	wmap_buf b[WMAP_WLM_COUNT];
	size_t series = 0, bytes = 0;
	for (int f = 0; f < WMAP_WLM_COUNT; f++)
		wmap_buf_init(&b[f], 1 << 20, 0);
	int rc = wmap_wlm_workload(b, &series, w, err);
	for (int f = 0; f < WMAP_WLM_COUNT; f++) {
		bytes += b[f].len;
		wmap_buf_free(&b[f]);
	}
	if (rc == 0)
		snprintf(out, len, "series=%zu bytes=%zu", series, bytes);
	return rc;
}

static void wlmetrics_body(wmap_engine *eng)
{
	const char *paths[] = {JOBSET, RAYCLUSTER};
	for (size_t i = 0; i < 2; i++) {
		char msg[WMAP_ERROR_MAX];
		wmap_error err = {0};
		wmap_workload *w = NULL;
		json_t *obj = t_load_file(paths[i], msg, sizeof(msg));
		cr_assert_not_null(obj, "%s", msg);
		cr_assert_eq(wmap_workload_resolve(&w, eng, obj, NULL, &err), 0, "%s", err.message);
		sweep(paths[i], s_wlmetrics, w, 0);
		wmap_workload_free(w);
		json_decref(obj);
	}
}

/* The webhook's workload metrics lines (src/wlmetrics.c). */
Test(allocfail, wlmetrics, .timeout = 120)
{
	if (!interposed())
		cr_skip_test("needs build/allocfail-tests (make allocfail)");
	with_engine(wlmetrics_body);
}

static void pod_targets_body(wmap_engine *eng)
{
	const char *paths[] = {
		JOBSET, RAYCLUSTER,
		/* fragmented: locations under parts the object lacks are dropped */
		"tests/fixtures/serving-kserve-io-llminferenceservice-v1alpha1/running.yaml",
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char msg[WMAP_ERROR_MAX];
		wmap_error err = {0};
		wmap_workload *w = NULL;
		json_t *obj = t_load_file(paths[i], msg, sizeof(msg));
		cr_assert_not_null(obj, "%s", msg);
		cr_assert_eq(wmap_workload_resolve(&w, eng, obj, NULL, &err), 0, "%s", err.message);
		sweep(paths[i], s_pod_targets, w, 0);
		wmap_workload_free(w);
		json_decref(obj);
	}
}

/* The targets of `kubectl wmap patch` (and of the webhook's stamping). */
Test(allocfail, pod_targets, .timeout = 120)
{
	/* They allocate with libc only: the jansson-only hook of unit-tests cannot fail them. */
	if (!interposed())
		cr_skip_test("needs build/allocfail-tests (make allocfail)");
	with_engine(pod_targets_body);
}

Test(allocfail, resolve, .timeout = 120)
{
	with_engine(resolve_body);
}

static void admit_body(wmap_engine *eng)
{
	char msg[WMAP_ERROR_MAX];
	json_t *obj = t_load_file(JOBSET, msg, sizeof(msg));
	cr_assert_not_null(obj, "%s", msg);
	json_t *docs = NULL;
	wmap_policy_set *set = NULL;
	wmap_error err = {0};
	cr_assert_eq(wmap_yaml_parse(&docs, policy_yaml, sizeof(policy_yaml) - 1, "p", NULL, &err), 0);
	cr_assert_eq(wmap_policy_set_parse(&set, docs, "p", NULL, &err), 0, "%s", err.message);
	admit_arg a = {0};
	a.eng = eng;
	a.cfg.scheduler = WMAP_GANG_KAI;
	a.cfg.queue = "default-queue";
	a.cfg.policies = set;
	a.review = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:O, s:b}}",
			     "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview",
			     "request", "uid", "0b9f8c1e-allocfail", "operation", "CREATE",
			     "namespace", "ml-team", "kind", "group", "jobset.x-k8s.io", "version",
			     "v1alpha2", "kind", "JobSet", "object", obj, "dryRun", 0);
	cr_assert_not_null(a.review);
	sweep("admission of a JobSet", s_admit, &a, 1);
	/* YuniKorn writes a JSON annotation of every task group. */
	a.cfg.scheduler = WMAP_GANG_YUNIKORN;
	a.cfg.policies = NULL;
	sweep("admission of a JobSet (yunikorn)", s_admit, &a, 1);
	json_decref(a.review);
	json_decref(obj);
	wmap_policy_set_free(set);
	json_decref(docs);
}

Test(allocfail, admission, .timeout = 120)
{
	with_engine(admit_body);
}

/* ---- the webhook's way: parse, review and answer in the review arena (wmap/arena.h) ---- */

typedef struct arena_arg {
	wmap_engine *eng;
	wmap_admission_config cfg;
	const char *body;
} arena_arg;

/* The webhook's review with the arena in use: each of libwmap's own allocations failing in
 * turn (and the heap's, where the arena falls back to it) fails the review cleanly: the
 * parse fails (ENOMEM) or the review fails open or with a negative code, never another
 * patch. (The arena's blocks are mapped pages; past its cap it takes from the heap:
 * tests/unit/test_arena.c.) */
static int s_admit_arena(void *arg, char *out, size_t len, wmap_error *err)
{
	arena_arg *a = arg;
	json_t *review = NULL, *resp = NULL;
	wmap_json_cut cut;
	json_error_t je;
	int rc;
	out[0] = '\0';
	wmap_arena_begin();
	rc = wmap_admission_parse(&review, &cut, a->body, strlen(a->body), 0, &je);
	if (rc) {
		wmap_error_set(err, rc, "parse: %s", je.text);
		goto cleanup;
	}
	wmap_admission_config cfg = a->cfg;
	cfg.cut = &cut;
	wmap_admission_info info;
	rc = wmap_admission_review(&resp, a->eng, &cfg, WMAP_ADMISSION_MUTATE, review, &info, err);
	if (rc == 0) {
		json_t *r = json_object_get(resp, "response");
		const char *patch = json_string_value(json_object_get(r, "patch"));
		if (info.result && strcmp(info.result, "failopen") == 0 && !patch &&
		    json_is_true(json_object_get(r, "allowed")))
			snprintf(out, len, "failopen %s", info.reason ? info.reason : "");
		else {
			static char text[60000];
			snprintf(out, len, "%s %s", info.result ? info.result : "?",
				 patch ? unbase64(patch, text, sizeof(text)) : "no patch");
		}
	}
cleanup:
	json_decref(resp);
	if (!wmap_arena_holds(review))
		json_decref(review);
	wmap_arena_end();
	wmap_arena_release_thread(); /* the next run starts from an empty arena */
	return rc;
}

static void admit_arena_body(wmap_engine *eng)
{
	char msg[WMAP_ERROR_MAX];
	json_t *obj = t_load_file(JOBSET, msg, sizeof(msg));
	cr_assert_not_null(obj, "%s", msg);
	json_t *review = json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:o, s:b}}", "apiVersion",
		"admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid",
		"0b9f8c1e-allocfail", "operation", "CREATE", "namespace", "ml-team", "kind", "group",
		"jobset.x-k8s.io", "version", "v1alpha2", "kind", "JobSet", "object", obj, "dryRun", 0);
	char *body = review ? wmap_json_text(review, NULL) : NULL;
	json_decref(review);
	cr_assert_not_null(body);
	arena_arg a = { 0 };
	a.eng = eng;
	a.cfg.scheduler = WMAP_GANG_KAI;
	a.cfg.queue = "default-queue";
	a.body = body;
	sweep("admission in the review arena", s_admit_arena, &a, 1);
	free(body);
}

Test(allocfail, admission_in_the_review_arena, .timeout = 120)
{
	/* jansson's allocations come from the arena here, so the jansson-only hook sees none;
	 * the interposer fails libwmap's own. */
	if (!interposed())
		cr_skip_test("needs build/allocfail-tests (make allocfail)");
	with_engine(admit_arena_body);
}

/* ---- policy evaluation: wmap_audit_object and /validate with Warn ---------------------- */

static const char audit_policy_yaml[] =
	"apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: warn}\n"
	"spec:\n  mode: override\n  validationActions: [Warn, Audit]\n"
	"  podTemplate:\n    labels: {team: ml}\n    priorityClassName: high\n"
	"    nodeSelector: {pool: gpu}\n"
	"    tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
	"---\n"
	"apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: checks}\n"
	"spec:\n  mode: require\n  validationActions: [Warn]\n"
	"  podTemplate: {schedulerName: kai-scheduler, labels: {team: ml}}\n"
	"  limits:\n    workload: {nvidia.com/gpu: 4, pods: 2, memory: 1Gi}\n"
	"    pod: {nvidia.com/gpu: 2}\n";

/* Every violation of the object, one line each: no half-filled violation may come out. */
static int s_audit(void *arg, char *out, size_t len, wmap_error *err)
{
	admit_arg *a = arg;
	wmap_audit_result r;
	size_t n = 0;
	json_t *obj = json_object_get(json_object_get(a->review, "request"), "object");
	int rc = wmap_audit_object(&r, a->eng, &a->cfg, obj, WMAP_POLICY_OP_CREATE, err);
	out[0] = '\0';
	for (size_t i = 0; rc == 0 && i < r.n && n < len; i++) {
		const wmap_violation *v = &r.violations[i];
		n += (size_t)snprintf(out + n, len - n, "%s|%u|%s|%s|%s|%s|%s|%s\n", v->policy,
				      v->actions, v->component ? v->component : "-",
				      v->instance ? v->instance : "-",
				      v->field, v->want, v->have ? v->have : "-", v->message);
	}
	if (rc == 0 && n < len)
		snprintf(out + n, len - n, "policies %zu", r.n_policies);
	wmap_audit_result_free(&r);
	return rc;
}

/* /validate: the warnings of a Warn policy, all of them or a failure. */
static int s_validate_warn(void *arg, char *out, size_t len, wmap_error *err)
{
	admit_arg *a = arg;
	json_t *resp = NULL;
	wmap_admission_info info;
	int rc = wmap_admission_review(&resp, a->eng, &a->cfg, WMAP_ADMISSION_VALIDATE, a->review,
				       &info, err);
	if (rc == 0) {
		json_t *r = json_object_get(resp, "response");
		size_t n = (size_t)snprintf(out, len, "%s %zu hits;", info.result, info.n_hits), i;
		json_t *w;
		json_array_foreach(json_object_get(r, "warnings"), i, w) {
			if (n < len)
				n += (size_t)snprintf(out + n, len - n, " %s;", json_string_value(w));
		}
	}
	json_decref(resp);
	return rc;
}

static void audit_body(wmap_engine *eng)
{
	char msg[WMAP_ERROR_MAX];
	json_t *obj = t_load_file(JOBSET, msg, sizeof(msg));
	cr_assert_not_null(obj, "%s", msg);
	json_t *docs = NULL;
	wmap_policy_set *set = NULL;
	wmap_error err = {0};
	cr_assert_eq(wmap_yaml_parse(&docs, audit_policy_yaml, sizeof(audit_policy_yaml) - 1, "p",
				     NULL, &err), 0);
	cr_assert_eq(wmap_policy_set_parse(&set, docs, "p", NULL, &err), 0, "%s", err.message);
	admit_arg a = {0};
	a.eng = eng;
	a.cfg.policies = set;
	a.review = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:O, s:b}}",
			     "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview",
			     "request", "uid", "0b9f8c1e-allocfail", "operation", "CREATE",
			     "namespace", "ml-team", "kind", "group", "jobset.x-k8s.io", "version",
			     "v1alpha2", "kind", "JobSet", "object", obj, "dryRun", 0);
	cr_assert_not_null(a.review);
	sweep("audit of a JobSet", s_audit, &a, 0);
	sweep("validate of a JobSet (Warn)", s_validate_warn, &a, 0);
	json_decref(a.review);
	json_decref(obj);
	wmap_policy_set_free(set);
	json_decref(docs);
}

Test(allocfail, audit, .timeout = 120)
{
	with_engine(audit_body);
}

/* ---- the schema path check and /validate of Karta objects ------------------------------ */

typedef struct schema_arg {
	wmap_definition *def;
	json_t *crd;
} schema_arg;

static int s_schema(void *arg, char *out, size_t len, wmap_error *err)
{
	schema_arg *a = arg;
	json_t *f = NULL;
	int rc = wmap_schema_check(&f, a->def, a->crd, err);
	size_t i, n = 0;
	json_t *v;
	/* Not json_dumps: it may write a cut text when an allocation fails. */
	json_array_foreach(f, i, v) {
		int w = snprintf(out + n, len - n, "%s\n", json_string_value(json_object_get(v, "message")));
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
	if (rc == 0 && n == 0)
		snprintf(out, len, "no findings");
	json_decref(f);
	return rc;
}

static json_t *find_crd(void *ctx, const char *group, const char *kind)
{
	json_t *crd = ctx;
	return wmap_schema_crd_matches(crd, group, kind) ? json_incref(crd) : NULL;
}

/* A Karta at /validate. A review that could not be completed is denied as "could not
 * check" (reason internal): counted with the fail-open runs, as the review did not finish. */
static int s_validate(void *arg, char *out, size_t len, wmap_error *err)
{
	admit_arg *a = arg;
	json_t *resp = NULL;
	wmap_admission_info info;
	int rc = wmap_admission_review(&resp, a->eng, &a->cfg, WMAP_ADMISSION_VALIDATE, a->review,
				       &info, err);
	if (rc == 0) {
		json_t *r = json_object_get(resp, "response");
		const char *m = json_string_value(json_object_get(json_object_get(r, "status"), "message"));
		size_t i, n;
		json_t *v;
		if (info.reason && strcmp(info.reason, "internal") == 0) {
			snprintf(out, len, "failopen internal");
		} else {
			n = (size_t)snprintf(out, len, "%s %s", info.result ? info.result : "?", m ? m : "");
			json_array_foreach(json_object_get(r, "warnings"), i, v) {
				int w = n < len ? snprintf(out + n, len - n, " | %s", json_string_value(v)) : -1;
				if (w < 0 || (size_t)w >= len - n)
					break;
				n += (size_t)w;
			}
		}
	}
	json_decref(resp);
	return rc;
}

static void karta_body(wmap_engine *eng)
{
	char msg[WMAP_ERROR_MAX];
	char *text = slurp("tests/golden/defs/widget-paths-v2.yaml");
	schema_arg s = {0};
	s.def = t_definition(text, msg, sizeof(msg));
	cr_assert_not_null(s.def, "%s", msg);
	s.crd = t_load_file("tests/golden/crds/widget-crd.yaml", msg, sizeof(msg));
	cr_assert_not_null(s.crd, "%s", msg);
	sweep("schema check with 9 findings", s_schema, &s, 0);

	json_t *obj = t_yaml(text);
	wmap_crd_lookup lookup = { find_crd, s.crd };
	admit_arg a = {0};
	a.eng = eng;
	a.cfg.crds = &lookup;
	a.review = json_pack("{s:s, s:s, s:{s:s, s:s, s:O}}", "apiVersion", "admission.k8s.io/v1",
			     "kind", "AdmissionReview", "request", "uid", "karta-allocfail",
			     "operation", "CREATE", "object", obj);
	sweep("a Karta at /validate with schema warnings", s_validate, &a, 1);
	/* An invalid one: denied with its findings. */
	json_object_set_new(json_array_get(json_object_get(json_object_get(json_object_get(obj, "spec"),
		"structureDefinition"), "childComponents"), 0), "ownerRef", json_string("nobody"));
	json_decref(a.review);
	a.review = json_pack("{s:s, s:s, s:{s:s, s:s, s:O}}", "apiVersion", "admission.k8s.io/v1",
			     "kind", "AdmissionReview", "request", "uid", "karta-allocfail",
			     "operation", "UPDATE", "object", obj);
	sweep("an invalid Karta at /validate", s_validate, &a, 1);
	json_decref(a.review);
	json_decref(obj);
	json_decref(s.crd);
	wmap_definition_free(s.def);
	free(text);
}

Test(allocfail, schema_and_karta_admission, .timeout = 120)
{
	with_engine(karta_body);
}

