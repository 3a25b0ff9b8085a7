/* The review arena (src/util/arena.c): a review inside it answers byte for byte as on the
 * heap, values made before the scope can be used and released inside it, an arena that
 * cannot grow fails the review cleanly, and threads keep their arenas apart. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/admission.h"
#include "wmap/arena.h"
#include "wmap/json_text.h"

static wmap_registry *reg;
static wmap_engine *eng;
static wmap_policy_set *set;

static const char policy_yaml[] =
	"apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: gpu}\n"
	"spec:\n  mode: override\n"
	"  podTemplate:\n    labels: {team: ml}\n    priorityClassName: high\n"
	"    nodeSelector: {pool: gpu}\n"
	"    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n";

static void setup(void)
{
	t_catalog_engine(&reg, &eng);
	set = t_policy_set(policy_yaml);
}

static void teardown(void)
{
	wmap_policy_set_free(set);
	t_catalog_engine_free(reg, eng);
}

TestSuite(arena, .init = setup, .fini = teardown);

#define JOBSET "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/leader-workers.yaml"
#define RAY "tests/fixtures/ray-io-raycluster-v1/running.yaml"

/* The review body of the fixture at path (group/version/kind from its apiVersion). */
static char *review_text(const char *path, const char *group, const char *version)
{
	char msg[WMAP_ERROR_MAX];
	json_t *obj = t_load_file(path, msg, sizeof(msg));
	cr_assert_not_null(obj, "%s", msg);
	json_object_del(obj, "status");
	json_t *review = json_pack(
		"{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:o, s:b}}", "apiVersion",
		"admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid", "u-1",
		"operation", "CREATE", "namespace", "ml", "kind", "group", group, "version", version,
		"kind", json_string_value(json_object_get(obj, "kind")), "object", obj, "dryRun", 0);
	cr_assert_not_null(review);
	char *text = wmap_json_text(review, NULL);
	json_decref(review);
	cr_assert_not_null(text);
	return text;
}

/* Parse, review and write the answer as the webhook does; the answer text (owned by the
 * caller) or NULL when the review failed; *rc its code. */
static char *answer_with(wmap_engine *e, const char *body, wmap_admission_mode mode, int *rc)
{
	json_t *review = NULL, *out = NULL;
	wmap_json_cut cut;
	json_error_t je;
	*rc = wmap_admission_parse(&review, &cut, body, strlen(body), 0, &je);
	if (*rc)
		return NULL;
	wmap_admission_config cfg = { 0 };
	cfg.cut = &cut;
	cfg.policies = set;
	cfg.scheduler = WMAP_GANG_KAI;
	cfg.queue = "q";
	wmap_admission_info info;
	wmap_error err;
	*rc = wmap_admission_review(&out, e, &cfg, mode, review, &info, &err);
	json_decref(review);
	char *text = *rc ? NULL : wmap_json_text(out, NULL);
	json_decref(out);
	return text;
}

static char *answer(const char *body, wmap_admission_mode mode, int *rc)
{
	return answer_with(eng, body, mode, rc);
}

static char *answer_in_arena_with(wmap_engine *e, const char *body, wmap_admission_mode mode,
				  int *rc, size_t *used)
{
	wmap_arena_begin();
	json_t *probe = json_object();
	char *text = answer_with(e, body, mode, rc);
	if (used)
		*used = wmap_arena_used();
	json_decref(probe);
	wmap_arena_end();
	return text;
}

static char *answer_in_arena(const char *body, wmap_admission_mode mode, int *rc, size_t *used)
{
	return answer_in_arena_with(eng, body, mode, rc, used);
}

Test(arena, a_review_in_the_arena_answers_as_on_the_heap)
{
	const char *fixtures[][3] = { { JOBSET, "jobset.x-k8s.io", "v1alpha2" },
				      { RAY, "ray.io", "v1" } };
	wmap_admission_mode modes[] = { WMAP_ADMISSION_MUTATE, WMAP_ADMISSION_VALIDATE,
					WMAP_ADMISSION_ALLOW };
	for (size_t f = 0; f < 2; f++) {
		char *body = review_text(fixtures[f][0], fixtures[f][1], fixtures[f][2]);
		for (size_t m = 0; m < 3; m++) {
			int rc_heap, rc_arena;
			size_t used = 0;
			char *heap = answer(body, modes[m], &rc_heap);
			/* Twice: the second review reuses the block the first one left. */
			for (int round = 0; round < 2; round++) {
				char *arena = answer_in_arena(body, modes[m], &rc_arena, &used);
				cr_assert_eq(rc_heap, 0);
				cr_assert_eq(rc_arena, 0);
				cr_assert_str_eq(arena, heap, "%s, mode %zu", fixtures[f][0], m);
				cr_expect_gt(used, 1000, "the review's values come from the arena");
				free(arena);
			}
			if (modes[m] == WMAP_ADMISSION_MUTATE)
				cr_expect(strstr(heap, "\"patch\"") != NULL, "%s", heap);
			free(heap);
		}
		free(body);
	}
	cr_expect_eq(wmap_arena_used(), 0, "nothing is handed out outside a scope");
}

Test(arena, values_made_before_the_scope_are_used_and_released_inside_it)
{
	json_t *kept = json_pack("{s:[s,s], s:{s:i}}", "a", "x", "y", "b", "c", 1);
	json_t *dropped = json_pack("{s:s}", "k", "v");
	wmap_arena_begin();
	json_t *tree = json_object();
	cr_assert_not_null(tree);
	cr_assert_eq(json_object_set(tree, "kept", kept), 0); /* a reference from the arena */
	cr_assert_eq(json_object_set_new(tree, "dropped", dropped), 0);
	cr_assert_eq(json_object_set_new(tree, "s", json_string("made inside")), 0);
	cr_expect(wmap_arena_holds(tree));
	cr_expect(!wmap_arena_holds(kept), "a value from before the scope is on the heap");
	char *text = wmap_json_text(tree, NULL);
	json_decref(tree); /* frees dropped, a heap value, from inside the scope */
	wmap_arena_end();
	cr_assert_str_eq(text, "{\"kept\":{\"a\":[\"x\",\"y\"],\"b\":{\"c\":1}},\"dropped\":"
			       "{\"k\":\"v\"},\"s\":\"made inside\"}");
	free(text);
	cr_expect_eq(kept->refcount, 1, "the arena's reference was released");
	cr_expect(!wmap_arena_holds(kept));
	json_decref(kept);
}

Test(arena, scopes_do_not_nest)
{
	wmap_arena_begin();
	json_t *a = json_string("outer");
	size_t before = wmap_arena_used();
	cr_expect_gt(before, 0);
	wmap_arena_begin(); /* inside a scope: nothing */
	json_t *b = json_string("inner");
	cr_expect_gt(wmap_arena_used(), before, "the inner begin kept the outer scope");
	json_decref(b);
	json_decref(a);
	wmap_arena_end(); /* ends the one scope: nothing made in it may be used after this */
	cr_expect_eq(wmap_arena_used(), 0);
	wmap_arena_end(); /* outside a scope: nothing */
	json_t *c = json_string("heap");
	cr_expect_eq(wmap_arena_used(), 0);
	json_decref(c);
}

/* A review whose arena is capped at every size up to what it needs takes the rest from
 * the heap: the same answer each time, and each allocation freed the right way. (A block
 * that cannot be had at all fails the review cleanly: tests/unit/test_allocfail.c.) */
Test(arena, an_arena_at_its_cap_takes_the_rest_from_the_heap, .timeout = 120)
{
	char *body = review_text(JOBSET, "jobset.x-k8s.io", "v1alpha2");
	int rc;
	size_t need = 0;
	char *heap = answer(body, WMAP_ADMISSION_MUTATE, &rc);
	cr_assert_eq(rc, 0);
	free(answer_in_arena(body, WMAP_ADMISSION_MUTATE, &rc, &need));
	size_t runs = 0;
	wmap_arena_release_thread(); /* from an empty arena, so the cap is what it holds */
	for (size_t cap = 1; cap <= need + 65536; cap += need / 97 + 1) { /* 0: the default */
		wmap_arena_set_limit(cap);
		size_t used = 0;
		char *got = answer_in_arena(body, WMAP_ADMISSION_MUTATE, &rc, &used);
		wmap_arena_release_thread();
		cr_assert_eq(rc, 0, "cap %zu", cap);
		cr_assert_str_eq(got, heap, "cap %zu", cap);
		cr_expect_leq(used, cap, "cap %zu", cap);
		free(got);
		runs++;
	}
	wmap_arena_set_limit(0);
	cr_expect_gt(runs, 90);
	free(heap);
	free(body);
}

typedef struct worker {
	const char *body;
	const char *want;
	int arena, bad;
} worker;

static void *work(void *p)
{
	worker *w = p;
	wmap_engine *e = NULL;
	wmap_error err;
	if (wmap_engine_new(&e, reg, &err) || wmap_engine_prepare(e, &err)) {
		w->bad = 1;
		wmap_engine_free(e);
		return NULL;
	}
	for (int i = 0; i < 20; i++) {
		int rc;
		char *got = w->arena ? answer_in_arena_with(e, w->body, WMAP_ADMISSION_MUTATE, &rc,
							    NULL)
				     : answer_with(e, w->body, WMAP_ADMISSION_MUTATE, &rc);
		w->bad += !got || strcmp(got, w->want) != 0;
		free(got);
	}
	wmap_engine_free(e);
	wmap_arena_release_thread();
	return NULL;
}

Test(arena, threads_keep_their_arenas_apart)
{
	char *body = review_text(RAY, "ray.io", "v1");
	int rc;
	char *want = answer(body, WMAP_ADMISSION_MUTATE, &rc);
	cr_assert_eq(rc, 0);
	worker w[3] = { { body, want, 1, 0 }, { body, want, 1, 0 }, { body, want, 0, 0 } };
	pthread_t t[3];
	/* An engine is per thread: each worker makes its own over the same registry. */
	for (int i = 0; i < 3; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(w[i].bad, 0, "worker %d", i);
	free(want);
	free(body);
}

/* Every fixture of every catalog kind, reviewed in turn in one arena (the block of one
 * review reused by the next), answers as on the heap. */
Test(arena, every_fixture_answers_as_on_the_heap, .timeout = 120)
{
	size_t n = 0;
	char **files = t_glob("tests/fixtures/*/*.yaml", &n);
	cr_assert_gt(n, 100);
	size_t compared = 0;
	for (size_t i = 0; i < n; i++) {
		char msg[WMAP_ERROR_MAX];
		json_t *obj = t_load_file(files[i], msg, sizeof(msg));
		const char *api = json_string_value(json_object_get(obj, "apiVersion"));
		if (!api || !json_is_string(json_object_get(obj, "kind"))) {
			json_decref(obj);
			continue;
		}
		char group[128] = "", version[64];
		const char *slash = strchr(api, '/');
		if (slash)
			snprintf(group, sizeof(group), "%.*s", (int)(slash - api), api);
		snprintf(version, sizeof(version), "%s", slash ? slash + 1 : api);
		json_decref(obj);
		char *body = review_text(files[i], group, version);
		for (int m = 0; m < 2; m++) {
			wmap_admission_mode mode = m ? WMAP_ADMISSION_VALIDATE : WMAP_ADMISSION_MUTATE;
			int rc_heap, rc_arena;
			char *heap = answer(body, mode, &rc_heap);
			char *arena = answer_in_arena(body, mode, &rc_arena, NULL);
			cr_expect_eq(rc_arena, rc_heap, "%s", files[i]);
			if (heap && arena)
				cr_expect_str_eq(arena, heap, "%s", files[i]);
			else
				cr_expect(!heap && !arena, "%s", files[i]);
			compared++;
			free(heap);
			free(arena);
		}
		free(body);
	}
	t_free_list(files, n);
	cr_expect_gt(compared, 200);
}

/* wmap's own bytes (a patch's paths): arena memory inside a scope, given back by the
 * scope's end; malloc outside one or past the cap, freed by wmap_arena_release (LSan sees
 * a leak otherwise). */
Test(arena, own_bytes_come_from_the_arena_in_a_scope_and_the_heap_outside)
{
	char *out = wmap_arena_alloc(32);
	cr_assert_not_null(out);
	strcpy(out, "outside");
	wmap_arena_begin();
	char *in = wmap_arena_alloc(40);
	cr_assert_not_null(in);
	strcpy(in, "/spec/replicatedJobs/0/template");
	cr_expect(wmap_arena_holds(in));
	cr_expect_not(wmap_arena_holds(out));
	size_t used = wmap_arena_used();
	cr_expect_geq(used, 40);
	char *m = malloc(8);
	wmap_arena_release(m);   /* not the arena's: freed */
	wmap_arena_release(in);  /* the arena's: kept until the scope ends */
	wmap_arena_release(NULL);
	cr_expect_str_eq(in, "/spec/replicatedJobs/0/template");
	wmap_arena_end();
	wmap_arena_release_thread();
	wmap_arena_set_limit(1); /* at the cap: from the heap, freed by release */
	wmap_arena_begin();
	char *over = wmap_arena_alloc(4096);
	cr_assert_not_null(over);
	cr_expect_not(wmap_arena_holds(over));
	memset(over, 1, 4096);
	wmap_arena_release(over);
	wmap_arena_end();
	wmap_arena_set_limit(0);
	wmap_arena_release_thread();
	cr_expect_str_eq(out, "outside");
	wmap_arena_release(out);
}
