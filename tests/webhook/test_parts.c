/* The webhook's own parts in process (Criterion, run by make check-webhook before the TLS
 * tests): the state in force (webhook/inforce.c: parts moved or freed on publish, a publish
 * that waits for its readers, follow, listeners, the CRD lookup) and the metrics providers
 * with the Prometheus writer (webhook/metrics.c). Under SANITIZE=1 a part freed twice or
 * never shows up here first. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webhook.h"

/* ---- the state in force ----------------------------------------------------------- */

static wh_defs *empty_defs(unsigned threads)
{
	wmap_registry *reg = NULL;
	wh_defs *d = NULL;
	wmap_error err;
	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wh_defs_prepare(&d, reg, threads, &err), 0, "%s", err.message);
	return d;
}

static wmap_policy_set *policies(const char *name)
{
	char doc[256];
	wmap_policy_set *set = NULL;
	wmap_error err;
	json_error_t jerr;
	snprintf(doc, sizeof(doc),
		 "[{\"apiVersion\":\"wmap.io/v1alpha1\",\"kind\":\"WorkloadPolicy\","
		 "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"podTemplate\":{\"labels\":{\"a\":\"b\"}}}}]",
		 name);
	json_t *docs = json_loads(doc, 0, &jerr);
	cr_assert_not_null(docs);
	cr_assert_eq(wmap_policy_set_parse(&set, docs, "test", NULL, &err), 0, "%s", err.message);
	json_decref(docs);
	return set;
}

typedef struct heard {
	unsigned what[8];
	int n;
} heard;

static void listener(void *ctx, unsigned what)
{
	heard *h = ctx;
	if (h->n < 8)
		h->what[h->n++] = what;
}

Test(inforce, parts_move_to_the_new_state_and_only_replaced_ones_are_freed, .timeout = 30)
{
	wh_inforce *inf = NULL;
	wmap_error err;
	heard h = { { 0 }, 0 };
	cr_assert_eq(wh_inforce_new(&inf, 2, &err), 0);
	cr_assert_eq(wh_inforce_listen(inf, listener, &h), 0);
	cr_assert_null(wh_inforce_acquire(inf), "nothing is in force before the first publish");

	wh_defs *d = empty_defs(2);
	wmap_policy_set *p1 = policies("one");
	wh_update u = { .what = WH_STATE_DEFS | WH_STATE_POLICIES, .defs = d, .policies = p1 };
	cr_assert_eq(wh_inforce_publish(inf, &u), 0);
	wh_state *st = wh_inforce_acquire(inf);
	cr_assert_eq(st->defs, d);
	cr_assert_eq(st->policies, p1);
	cr_assert_null(st->crds, "no CRD known: no schema check");
	cr_assert_eq(st->defs->n_engines, 2);
	wh_inforce_release(st);

	/* Objects only: the definitions and policies are the same objects in the new state. */
	json_t *kartas = json_pack("{s:{s:s}}", "k1", "kind", "Karta");
	wh_update o = { .what = WH_STATE_OBJECTS, .kartas = kartas };
	cr_assert_eq(wh_inforce_publish(inf, &o), 0);
	st = wh_inforce_acquire(inf);
	cr_assert_eq(st->defs, d);
	cr_assert_eq(st->policies, p1);
	cr_assert_eq(st->kartas, kartas);
	wh_inforce_release(st);

	/* A new policy set replaces the old one (freed: ASan and LSan would say otherwise). */
	wmap_policy_set *p2 = policies("two");
	wh_update q = { .what = WH_STATE_POLICIES, .policies = p2 };
	cr_assert_eq(wh_inforce_publish(inf, &q), 0);
	st = wh_inforce_acquire(inf);
	cr_assert_eq(st->policies, p2);
	cr_assert_str_eq(st->policies->policies[0].name, "two");
	cr_assert_eq(st->kartas, kartas);
	wh_inforce_release(st);

	cr_assert_eq(h.n, 3, "one notice per publish");
	cr_assert_eq(h.what[0], WH_STATE_DEFS | WH_STATE_POLICIES);
	cr_assert_eq(h.what[1], WH_STATE_OBJECTS);
	cr_assert_eq(h.what[2], WH_STATE_POLICIES);
	wh_inforce_free(inf);
}

/* A publish on its own thread (it waits for the readers of the state it replaces). */
typedef struct job {
	wh_inforce *inf;
	wh_update u;
	pthread_t thread;
	atomic_int done;
} job;

static void *publish_main(void *arg)
{
	job *j = arg;
	cr_assert_eq(wh_inforce_publish(j->inf, &j->u), 0);
	atomic_store(&j->done, 1);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&t, NULL);
}

static json_t *one_crd(void)
{
	json_t *crds = json_pack("{s:{s:{s:s, s:{s:s}}}}", "widgets.example.com", "spec", "group",
				 "example.com", "names", "kind", "Widget");
	json_t *idx = wh_crd_index(crds);
	json_decref(crds);
	return idx;
}

Test(inforce, a_publish_waits_for_the_readers_of_the_state_it_replaces, .timeout = 30)
{
	wh_inforce *inf = NULL;
	wmap_error err;
	cr_assert_eq(wh_inforce_new(&inf, 1, &err), 0);
	wh_update u = { .what = WH_STATE_DEFS, .defs = empty_defs(1) };
	cr_assert_eq(wh_inforce_publish(inf, &u), 0);
	wh_state *st = wh_inforce_acquire(inf);
	const wh_defs *old = st->defs;

	job j = { .inf = inf, .u = { .what = WH_STATE_DEFS, .defs = empty_defs(1) } };
	cr_assert_eq(pthread_create(&j.thread, NULL, publish_main, &j), 0);
	sleep_ms(100);
	cr_assert_eq(atomic_load(&j.done), 0, "the publish returned while a reader held the old state");
	/* The reader still sees its own state whole (the publish has not freed it). */
	cr_assert_eq(st->defs, old);
	cr_assert_eq(old->n_engines, 1);
	wh_state *now = wh_inforce_acquire(inf);
	cr_assert_neq(now->defs, old, "new readers get the new state at once");
	wh_inforce_release(now);
	wh_inforce_release(st);
	pthread_join(j.thread, NULL);
	cr_assert_eq(atomic_load(&j.done), 1);
	wh_inforce_free(inf);
}

Test(inforce, follow_moves_across_other_parts_and_stops_at_a_new_set, .timeout = 30)
{
	wh_inforce *inf = NULL;
	wmap_error err;
	cr_assert_eq(wh_inforce_new(&inf, 1, &err), 0);
	wh_update u = { .what = WH_STATE_DEFS | WH_STATE_POLICIES, .defs = empty_defs(1), .policies = policies("p") };
	cr_assert_eq(wh_inforce_publish(inf, &u), 0);
	wh_state *st = wh_inforce_acquire(inf), *first = st;
	cr_assert_eq(wh_inforce_follow(inf, &st, WH_STATE_DEFS | WH_STATE_POLICIES), 1, "nothing changed");
	cr_assert_eq(st, first);

	/* The CRDs change while st is held: the publish waits until st follows. */
	job j = { .inf = inf, .u = { .what = WH_STATE_CRDS, .crd_index = one_crd() } };
	cr_assert_eq(pthread_create(&j.thread, NULL, publish_main, &j), 0);
	sleep_ms(50);
	cr_assert_eq(atomic_load(&j.done), 0);
	const wh_defs *defs = st->defs;
	cr_assert_eq(wh_inforce_follow(inf, &st, WH_STATE_DEFS | WH_STATE_POLICIES), 1,
		     "the definitions and policies are still in force");
	cr_assert_neq(st, first, "the reference moved to the newest state");
	cr_assert_eq(st->defs, defs);
	pthread_join(j.thread, NULL); /* it could finish: nobody holds the old state */
	cr_assert_not_null(st->crds);
	json_t *crd = st->crds->find(st->crds->ctx, "example.com", "Widget");
	cr_assert_not_null(crd, "the CRD is found by group and kind");
	json_decref(crd);
	cr_assert_null(st->crds->find(st->crds->ctx, "example.com", "Gadget"));

	/* New definitions: follow says stop, and st stays as it was until released. */
	job k = { .inf = inf, .u = { .what = WH_STATE_DEFS, .defs = empty_defs(1) } };
	cr_assert_eq(pthread_create(&k.thread, NULL, publish_main, &k), 0);
	while (wh_inforce_follow(inf, &st, WH_STATE_DEFS | WH_STATE_POLICIES) == 1)
		sleep_ms(5); /* until the publish has swapped the new state in */
	cr_assert_eq(st->defs, defs, "a stopped reader keeps its own state");
	wh_inforce_release(st);
	pthread_join(k.thread, NULL);
	wh_inforce_free(inf);
}

Test(inforce, an_engine_per_poll_thread, .timeout = 30)
{
	wh_inforce *inf = NULL;
	wmap_error err;
	cr_assert_eq(wh_inforce_new(&inf, 3, &err), 0);
	wh_update u = { .what = WH_STATE_DEFS, .defs = empty_defs(3) };
	cr_assert_eq(wh_inforce_publish(inf, &u), 0);
	wh_state *st = wh_inforce_acquire(inf);
	wmap_engine *e = wh_state_engine(inf, st);
	cr_assert_not_null(e);
	cr_assert_eq(wh_state_engine(inf, st), e, "a thread keeps its slot");
	cr_assert_null(wh_state_engine(inf, NULL));
	wh_inforce_release(st);
	cr_assert_eq(wh_inforce_ready(inf), 0);
	wh_inforce_set_ready(inf);
	cr_assert_eq(wh_inforce_ready(inf), 1);
	wh_inforce_free(inf);
}

/* ---- metrics providers and the Prometheus writer ---------------------------------- */

static char *render(const char *path, int *found)
{
	size_t len = 0;
	char *text = wh_metrics_render(path, &len, found);
	if (text)
		cr_assert_eq(strlen(text), len);
	return text;
}

static void provider_a(void *ctx, wmap_buf *o)
{
	wh_prom_family(o, "t_a_total", "counter", (const char *)ctx);
	wh_prom_sample(o, "t_a_total", 3, "path", "a\\b\"c\nd", NULL);
}

static void provider_b(void *ctx, wmap_buf *o)
{
	(void)ctx;
	wh_prom_family(o, "t_b", "gauge", "B.");
	wh_prom_sample(o, "t_b", 0.25, NULL);
	wh_prom_sample(o, "t_b", 1099511627776.0, "k", "v", NULL); /* 2^40: exactly */
	wh_prom_sample(o, "t_b", -2, "k", "w", "l", "", NULL);
}

static void provider_quiet(void *ctx, wmap_buf *o)
{
	(void)ctx;
	(void)o;
}

Test(metrics, providers_render_in_order_on_their_path)
{
	static char help[] = "A with \\ and\nnewline.";
	int a, b, other, found = 0;
	cr_assert_eq(wh_metrics_provide("/metrics/test", provider_a, help), 0);
	cr_assert_eq(wh_metrics_provide("/metrics/test", provider_b, &b), 0);
	cr_assert_eq(wh_metrics_provide("/metrics/quiet", provider_quiet, &a), 0);
	char *text = render("/metrics/test", &found);
	cr_assert_eq(found, 1);
	cr_assert_str_eq(text, "# HELP t_a_total A with \\\\ and\\nnewline.\n"
			       "# TYPE t_a_total counter\n"
			       "t_a_total{path=\"a\\\\b\\\"c\\nd\"} 3\n"
			       "# HELP t_b B.\n"
			       "# TYPE t_b gauge\n"
			       "t_b 0.25\n"
			       "t_b{k=\"v\"} 1099511627776\n"
			       "t_b{k=\"w\",l=\"\"} -2\n");
	free(text);
	text = render("/metrics/quiet", &found);
	cr_assert_eq(found, 1, "a path whose providers write nothing is served, empty");
	cr_assert_str_eq(text, "");
	free(text);
	cr_assert_null(render("/metrics/none", &found));
	cr_assert_eq(found, 0, "a path nobody serves is not found (404)");

	wh_metrics_withdraw(&other); /* not a registered ctx: a no-op */
	wh_metrics_withdraw(&b);
	text = render("/metrics/test", &found);
	cr_assert_not_null(text);
	cr_assert(strstr(text, "t_a_total") && !strstr(text, "t_b"), "%s", text);
	free(text);
	wh_metrics_withdraw(&a);
	render("/metrics/quiet", &found);
	cr_assert_eq(found, 0, "withdrawn: the path is gone");
}

Test(metrics, provider_paths_and_table_are_bounded)
{
	static int ctx[40];
	cr_assert_eq(wh_metrics_provide("/healthz", provider_quiet, &ctx[0]), WMAP_EINVAL);
	cr_assert_eq(wh_metrics_provide("/metrics/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
					provider_quiet, &ctx[0]),
		     WMAP_EINVAL);
	int ok = 0, full = 0;
	for (int i = 0; i < 40; i++) {
		int rc = wh_metrics_provide("/metrics/many", provider_quiet, &ctx[i]);
		ok += rc == 0;
		full += rc == WMAP_ELIMIT;
	}
	cr_assert_eq(ok, 32);
	cr_assert_eq(full, 8);
	for (int i = 0; i < 40; i++)
		wh_metrics_withdraw(&ctx[i]);
}

Test(metrics, special_values)
{
	wmap_buf o = WMAP_BUF_INIT(4096, 256);
	wh_prom_sample(&o, "x", 0.0 / 0.0, NULL);
	wh_prom_sample(&o, "x", 1.0 / 0.0, NULL);
	wh_prom_sample(&o, "x", -1.0 / 0.0, NULL);
	wh_prom_sample(&o, "x", 1e300, NULL);
	wh_prom_sample(&o, "x", 123.456789, NULL);
	char *text = wmap_buf_take(&o, NULL);
	cr_assert_str_eq(text, "x NaN\nx +Inf\nx -Inf\nx 1e+300\nx 123.456789\n");
	free(text);
}

Test(inforce, follow_sees_a_part_replaced_by_an_equal_one, .timeout = 30)
{
	wh_inforce *inf = NULL;
	wmap_error err;
	cr_assert_eq(wh_inforce_new(&inf, 1, &err), 0);
	wh_update u = { .what = WH_STATE_DEFS | WH_STATE_OBJECTS, .defs = empty_defs(1) };
	cr_assert_eq(wh_inforce_publish(inf, &u), 0);
	wh_state *st = wh_inforce_acquire(inf);
	/* No objects before, none after (without a cluster): still a new part. */
	job j = { .inf = inf, .u = { .what = WH_STATE_OBJECTS } };
	cr_assert_eq(pthread_create(&j.thread, NULL, publish_main, &j), 0);
	while (wh_inforce_follow(inf, &st, WH_STATE_OBJECTS) == 1)
		sleep_ms(5); /* until the publish has swapped the new state in */
	cr_assert_eq(wh_inforce_follow(inf, &st, WH_STATE_OBJECTS), 0);
	cr_assert_eq(wh_inforce_follow(inf, &st, WH_STATE_DEFS), 1, "the definitions stay");
	wh_inforce_release(st);
	pthread_join(j.thread, NULL);
	wh_inforce_free(inf);
}
