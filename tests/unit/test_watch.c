/* The list+watch loop against a scripted plain-HTTP server on loopback: paging, events
 * applied in order, the resourceVersion carried from the list, events and bookmarks into the
 * next watch, a watch cut in the middle of an event (the half line is never read), 410 Gone
 * (listed again), and the backoff's bounds; the one reader of watch event lines. */
#define _GNU_SOURCE   /* memmem */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helpers.h"
#include "wmap/kube/watch.h"

typedef struct step {
	const char *body;
	int cut; /* announce more than is sent, then close */
} step;

static struct {
	int fd, port;
	pthread_t thread;
	const step *script;
	size_t n;
	size_t served;
	char paths[16][512];
} S;

/* One request per connection (Connection: close), answered from the script in order. */
static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(S.fd, NULL, NULL);
		char buf[8192], head[256];
		size_t len = 0;
		ssize_t r;

		if (c < 0)
			return NULL;
		while (!memmem(buf, len, "\r\n\r\n", 4) && len < sizeof(buf) &&
		       (r = read(c, buf + len, sizeof(buf) - len)) > 0)
			len += (size_t)r;
		if (S.served < 16)
			snprintf(S.paths[S.served], sizeof(S.paths[0]), "%.*s",
				 (int)strcspn(buf + 4, " "), buf + 4);
		const step *st = &S.script[S.served < S.n ? S.served : S.n - 1];
		S.served++;
		size_t blen = strlen(st->body);
		snprintf(head, sizeof(head),
			 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
			 "Content-Length: %zu\r\n\r\n",
			 blen + (st->cut ? 100 : 0));
		if (write(c, head, strlen(head)) < 0 || write(c, st->body, blen) < 0) {
			close(c);
			continue;
		}
		close(c);
	}
}

static void start(const step *script, size_t n)
{
	memset(&S, 0, sizeof(S));
	S.script = script;
	S.n = n;
	S.fd = t_listen_loopback(8, &S.port);
	pthread_create(&S.thread, NULL, serve, NULL);
}

static void stop_server(void)
{
	shutdown(S.fd, SHUT_RDWR);
	close(S.fd);
	pthread_join(S.thread, NULL);
}

/* What the consumer saw: every set, as "name@rv,name@rv|" in key order. */
typedef struct seen {
	char log[4096];
	int changes;
	atomic_int stop;
	const char *stop_at; /* stop once a set equal to this was seen */
} seen;

static int cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void on_change(void *ud, const json_t *objects, int synced)
{
	seen *s = ud;
	const char *k, *keys[16];
	json_t *v;
	size_t n = strlen(s->log), start = n, nk = 0;

	json_object_foreach((json_t *)objects, k, v)
		if (nk < 16)
			keys[nk++] = k;
	qsort(keys, nk, sizeof(keys[0]), cmp);
	for (size_t i = 0; i < nk; i++) {
		v = json_object_get(objects, keys[i]);
		const char *rv = json_string_value(
			json_object_get(json_object_get(v, "metadata"), "resourceVersion"));
		n += (size_t)snprintf(s->log + n, sizeof(s->log) - n, "%s%s@%s", n > start ? "," : "",
				      keys[i], rv ? rv : "?");
	}
	n += (size_t)snprintf(s->log + n, sizeof(s->log) - n, "%s|", synced ? "*" : "");
	s->changes++;
	if (s->stop_at && strcmp(s->log + start, s->stop_at) == 0)
		atomic_store(&s->stop, 1);
}

#define OBJ(name, rv) "{\"metadata\":{\"name\":\"" name "\",\"resourceVersion\":\"" rv "\"}}"
#define EV(type, name, rv) "{\"type\":\"" type "\",\"object\":" OBJ(name, rv) "}\n"

/* The transform of the next run (NULL: none). */
static json_t *(*transform)(void *ud, json_t *obj);

static void run(seen *s, const char *stop_at, wmap_watch_stats *st)
{
	wmap_kube_config cfg = { 0 };
	wmap_kube_opts ko = { .timeout_ms = 5000, .max_retries = -1 };
	wmap_kube_client *c = NULL;
	wmap_error err = { 0 };
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", S.port);
	cfg.server = url;
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	cr_assert_eq(wmap_kube_client_new(&c, &cfg, &ko, &err), 0, "%s", err.message);
	s->stop_at = stop_at;
	wmap_watch_opts o = { .path = "/apis/run.ai/v1alpha1/kartas", .backoff_min_ms = 10, .backoff_max_ms = 40, .on_change = on_change, .ud = s, .stop = &s->stop, .transform = transform };
	cr_assert_eq(wmap_watch_run(c, &o, st, &err), 0, "%s", err.message);
	wmap_kube_client_free(c);
	stop_server();
}

Test(watch, lists_pages_then_applies_events_and_relists_on_gone)
{
	static const step script[] = {
		{ "{\"metadata\":{\"resourceVersion\":\"5\",\"continue\":\"c 1\"},\"items\":[" OBJ("a", "3") "]}", 0 },
		{ "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[" OBJ("b", "4") "]}", 0 },
		{ EV("ADDED", "c", "6") EV("MODIFIED", "a", "7") EV("DELETED", "b", "8") "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n", 0 },
		/* cut in the middle of the second event: the first one counts, the half does not */
		{ EV("ADDED", "d", "10") "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"half", 1 },
		{ "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}\n", 0 },
		{ "{\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[" OBJ("z", "20") "]}", 0 },
	};
	seen s = { 0 };
	wmap_watch_stats st = { 0 };

	start(script, sizeof(script) / sizeof(script[0]));
	run(&s, "z@20*|", &st);
	cr_assert_str_eq(s.log, "a@3,b@4*|a@3,b@4,c@6|a@7,b@4,c@6|a@7,c@6|a@7,c@6,d@10|z@20*|");
	cr_assert_str_eq(S.paths[0], "/apis/run.ai/v1alpha1/kartas?limit=500");
	cr_assert_str_eq(S.paths[1], "/apis/run.ai/v1alpha1/kartas?limit=500&continue=c+1");
	cr_assert(strstr(S.paths[2], "?watch=1&allowWatchBookmarks=true&resourceVersion=5&"),
		  "%s", S.paths[2]);
	/* after the bookmark, from its resourceVersion; after the cut, from the last event */
	cr_assert(strstr(S.paths[3], "&resourceVersion=9&"), "%s", S.paths[3]);
	cr_assert(strstr(S.paths[4], "&resourceVersion=10&"), "%s", S.paths[4]);
	cr_assert_str_eq(S.paths[5], "/apis/run.ai/v1alpha1/kartas?limit=500");
	cr_assert_eq(atomic_load(&st.lists), 2);
	cr_assert_eq(atomic_load(&st.gone), 1);
	cr_assert_eq(atomic_load(&st.events), 4);
	cr_assert_eq(atomic_load(&st.bad_events), 0);
	cr_assert_eq(atomic_load(&st.synced), 1);
}

Test(watch, a_line_that_is_no_event_ends_the_watch_and_is_counted)
{
	static const step script[] = {
		{ "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[]}", 0 },
		{ "not json\n", 0 },
		{ EV("ADDED", "x", "6"), 0 },
	};
	seen s = { 0 };
	wmap_watch_stats st = { 0 };

	start(script, sizeof(script) / sizeof(script[0]));
	run(&s, "x@6|", &st);
	cr_assert_eq(atomic_load(&st.bad_events), 1);
	cr_assert(strstr(S.paths[2], "&resourceVersion=5&"), "%s", S.paths[2]);
}

/* Keeps "t<rv>" as an object's resourceVersion, and object "keep" as it came (NULL). */
static json_t *mark(void *ud, json_t *obj)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
	(void)ud;
	if (name && strcmp(name, "keep") == 0)
		return NULL;
	return json_pack("{s:{s:s, s:s+}}", "metadata", "name", name ? name : "", "resourceVersion",
			 "t", rv ? rv : "");
}

Test(watch, a_transform_decides_what_is_kept_and_the_watch_resumes_from_the_server_rv)
{
	static const step script[] = {
		{ "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[" OBJ("a", "3") "," OBJ("keep", "4") "]}", 0 },
		{ EV("MODIFIED", "a", "7"), 1 },
		{ EV("ADDED", "b", "8"), 0 },
	};
	seen s = { 0 };
	wmap_watch_stats st = { 0 };

	transform = mark;
	start(script, sizeof(script) / sizeof(script[0]));
	run(&s, "a@t7,b@t8,keep@4|", &st);
	transform = NULL;
	cr_assert_str_eq(s.log, "a@t3,keep@4*|a@t7,keep@4|a@t7,b@t8,keep@4|");
	/* the object's own resourceVersion, not the transformed one */
	cr_assert(strstr(S.paths[2], "&resourceVersion=7&"), "%s", S.paths[2]);
}

Test(watch, backoff_doubles_with_jitter_and_is_capped)
{
	cr_assert_eq(wmap_watch_backoff_ms(800, 30000, 0, 0.0), 800);
	cr_assert_eq(wmap_watch_backoff_ms(800, 30000, 1, 0.0), 1600);
	cr_assert_eq(wmap_watch_backoff_ms(800, 30000, 1, 0.5), 2400);
	cr_assert_eq(wmap_watch_backoff_ms(800, 30000, 5, 0.0), 25600);
	cr_assert_eq(wmap_watch_backoff_ms(800, 30000, 5, 0.99), 30000);
	cr_assert_eq(wmap_watch_backoff_ms(800, 30000, 400, 0.5), 30000);
}

Test(watch, one_reader_of_watch_events)
{
	static const struct {
		const char *line;
		wmap_watch_kind kind;
		const char *rv;
		long code;
	} cases[] = {
		{ EV("ADDED", "a", "7"), WMAP_WATCH_ADDED, "7", 0 },
		{ EV("MODIFIED", "a", "8"), WMAP_WATCH_MODIFIED, "8", 0 },
		{ EV("DELETED", "a", "9"), WMAP_WATCH_DELETED, "9", 0 },
		{ "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}", WMAP_WATCH_BOOKMARK, "12", 0 },
		{ "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\",\"resourceVersion\":\"\"}}}", WMAP_WATCH_ADDED, NULL, 0 },
		{ "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":\"too old\"}}", WMAP_WATCH_GONE, NULL, 410 },
		{ "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,\"message\":\"boom\"}}", WMAP_WATCH_ERROR, NULL, 500 },
		{ "not json", WMAP_WATCH_BAD, NULL, 0 },
		{ "{\"object\":{}}", WMAP_WATCH_BAD, NULL, 0 },
		{ "{\"type\":\"ADDED\",\"object\":[]}", WMAP_WATCH_BAD, NULL, 0 },
		{ "{\"type\":\"RENAMED\",\"object\":{}}", WMAP_WATCH_BAD, NULL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		wmap_watch_event ev;
		/* the reader takes a length: what follows the line is not read */
		char buf[512];
		size_t len = strlen(cases[i].line);

		snprintf(buf, sizeof(buf), "%s}garbage", cases[i].line);
		cr_expect_eq(wmap_watch_event_read(&ev, buf, len), cases[i].kind, "case %zu", i);
		cr_expect_eq(ev.kind, cases[i].kind, "case %zu", i);
		if (cases[i].rv)
			cr_expect_str_eq(ev.rv, cases[i].rv, "case %zu", i);
		else
			cr_expect_null(ev.rv, "case %zu", i);
		cr_expect_eq(ev.code, cases[i].code, "case %zu", i);
		if (cases[i].kind == WMAP_WATCH_BAD)
			cr_expect_null(ev.object, "case %zu", i);
		else
			cr_expect(json_is_object(ev.object), "case %zu", i);
		if (cases[i].kind == WMAP_WATCH_ERROR)
			cr_expect_str_eq(ev.message, "boom");
		wmap_watch_event_clear(&ev);
		cr_expect_null(ev.doc);
	}
	wmap_watch_event_clear(NULL);
}
