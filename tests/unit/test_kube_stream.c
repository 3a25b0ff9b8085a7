/* Streams (kube.h): long GETs side by side on one multi handle, against a loopback server
 * that writes each response in timed pieces on its own connection. Lines come out whole
 * and per stream however the bytes are cut; a last line without a newline comes out at
 * the end; a line over the cap comes out in pieces; an error response ends the stream with
 * kubectl's message; a closed stream is silent. A watch stream drops a cut last event and
 * fails on one over the cap; wmap_kube_stream runs one on the caller's thread until the
 * server, the callback, the stop flag or the timeout ends it. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "wmap/kube.h"

/* One scripted response: the status and the body's pieces, written 30 ms apart. */
typedef struct piece_script {
	const char *path;
	int status;
	const char *pieces[6];
} piece_script;

static const piece_script SCRIPT[] = {
	{ "/a", 200, { "a1\na", "2\n", "a3", "\n", NULL } },
	{ "/b", 200, { "b1\nb", "2", NULL } },
	{ "/long", 200, { "0123456789abcdefghij\nok\n", NULL } },
	{ "/missing", 404, { "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
			     "\"message\":\"pods \\\"x\\\" not found\",\"reason\":\"NotFound\",\"code\":404}", NULL } },
	{ "/slow", 200, { "s1\n", NULL } },
};

static int listen_fd, port;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *conn(void *arg)
{
	int c = (int)(long)arg;
	char buf[4096], path[256] = "", head[256];
	ssize_t n = read(c, buf, sizeof(buf) - 1);

	if (n > 0) {
		buf[n] = '\0';
		sscanf(buf, "GET %255s", path);
	}
	for (size_t i = 0; i < sizeof(SCRIPT) / sizeof(SCRIPT[0]); i++) {
		const piece_script *s = &SCRIPT[i];

		if (strcmp(s->path, path) != 0)
			continue;
		snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n",
			 s->status);
		if (write(c, head, strlen(head)) < 0)
			break;
		for (int p = 0; s->pieces[p]; p++) {
			sleep_ms(30);
			if (write(c, s->pieces[p], strlen(s->pieces[p])) < 0)
				break;
		}
		if (strcmp(path, "/slow") == 0)
			sleep_ms(3000);   /* still open when the test closes it */
		break;
	}
	close(c);
	return NULL;
}

static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(listen_fd, NULL, NULL);
		pthread_t t;

		if (c < 0)
			return NULL;
		pthread_create(&t, NULL, conn, (void *)(long)c);
		pthread_detach(t);
	}
}

static void start(void)
{
	pthread_t t;

	signal(SIGPIPE, SIG_IGN); /* a client that hangs up early is no crash of the server */
	listen_fd = t_listen_loopback(16, &port);
	pthread_create(&t, NULL, serve, NULL);
	pthread_detach(t);
}

typedef struct seen {
	char lines[8][16][64];
	int n[8];
	int ended[8];
	long status[8];
	char message[8][256];
} seen;

static void on_line(void *arg, int id, const char *line, size_t len)
{
	seen *s = arg;

	if (s->n[id] < 16)
		snprintf(s->lines[id][s->n[id]++], 64, "%.*s", (int)len, line);
}

static void on_end(void *arg, int id, long status, const wmap_error *err)
{
	seen *s = arg;

	s->ended[id] = 1;
	s->status[id] = status;
	if (err)
		snprintf(s->message[id], sizeof(s->message[id]), "%s", err->message);
}

static wmap_kube_config cfg;
static char url[64];

static wmap_kube_client *client(void)
{
	wmap_kube_client *c = NULL;
	wmap_error err = { 0 };

	memset(&cfg, 0, sizeof(cfg));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	cfg.server = url;
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	cr_assert_eq(wmap_kube_client_new(&c, &cfg, NULL, &err), 0, "%s", err.message);
	return c;
}

static void run_until(wmap_kube_streams *ss, seen *s, const int *ids, int n)
{
	wmap_error err = { 0 };

	for (int tries = 0; tries < 200; tries++) {
		int all = 1;

		for (int i = 0; i < n; i++)
			all &= s->ended[ids[i]];
		if (all)
			return;
		cr_assert_eq(wmap_kube_streams_run(ss, 50, &err), 0, "%s", err.message);
	}
	cr_assert_fail("the streams did not end");
}

Test(kube_stream, lines_are_whole_and_per_stream)
{
	static seen s;
	wmap_kube_streams *ss = NULL;
	wmap_kube_client *c;
	wmap_error err = { 0 };
	const int ids[] = { 1, 2 };

	start();
	c = client();
	cr_assert_eq(wmap_kube_streams_new(&ss, c, on_line, on_end, &s, &err), 0);
	cr_assert_eq(wmap_kube_stream_open(ss, 1, "/a", NULL, 0, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_kube_stream_open(ss, 2, "/b", NULL, 0, &err), 0, "%s", err.message);
	cr_expect_eq(wmap_kube_stream_open(ss, 2, "/b", NULL, 0, &err), WMAP_EINVAL, "ids are unique");
	cr_expect_eq(wmap_kube_streams_count(ss), 2);
	run_until(ss, &s, ids, 2);
	cr_expect_eq(s.n[1], 3);
	cr_expect_str_eq(s.lines[1][0], "a1");
	cr_expect_str_eq(s.lines[1][1], "a2");
	cr_expect_str_eq(s.lines[1][2], "a3");
	cr_expect_eq(s.n[2], 2);
	cr_expect_str_eq(s.lines[2][0], "b1");
	cr_expect_str_eq(s.lines[2][1], "b2", "the last line without a newline comes at the end");
	cr_expect_eq(s.status[1], 200);
	cr_expect_str_empty(s.message[1]);
	cr_expect_eq(wmap_kube_streams_count(ss), 0);
	cr_expect_eq(wmap_kube_requests(c), 2);
	wmap_kube_streams_free(ss);
	wmap_kube_client_free(c);
}

Test(kube_stream, long_lines_in_pieces_errors_and_close)
{
	static seen s;
	wmap_kube_streams *ss = NULL;
	wmap_kube_client *c;
	wmap_error err = { 0 };
	const int ids[] = { 3, 4 };

	start();
	c = client();
	cr_assert_eq(wmap_kube_streams_new(&ss, c, on_line, on_end, &s, &err), 0);
	cr_assert_eq(wmap_kube_stream_open(ss, 3, "/long", NULL, 8, &err), 0);
	cr_assert_eq(wmap_kube_stream_open(ss, 4, "/missing", NULL, 0, &err), 0);
	cr_assert_eq(wmap_kube_stream_open(ss, 5, "/slow", NULL, 0, &err), 0);
	run_until(ss, &s, ids, 2);
	cr_expect_eq(s.n[3], 4);
	cr_expect_str_eq(s.lines[3][0], "01234567");
	cr_expect_str_eq(s.lines[3][1], "89abcdef");
	cr_expect_str_eq(s.lines[3][2], "ghij");
	cr_expect_str_eq(s.lines[3][3], "ok");
	cr_expect_eq(s.status[4], 404);
	cr_expect_str_eq(s.message[4], "Error from server (NotFound): pods \"x\" not found");
	cr_expect_eq(s.n[4], 0, "an error body is no line");
	/* The slow one is still open: closing it says nothing. */
	cr_expect_eq(wmap_kube_streams_count(ss), 1);
	wmap_kube_stream_close(ss, 5);
	wmap_kube_stream_close(ss, 99);
	cr_expect_eq(wmap_kube_streams_count(ss), 0);
	cr_expect_eq(s.ended[5], 0);
	cr_expect_eq(wmap_kube_streams_run(ss, 10, &err), 0, "nothing open: returns at once");
	wmap_kube_streams_free(ss);
	wmap_kube_streams_free(NULL);
	wmap_kube_client_free(c);
}

Test(kube_stream, a_watch_stream_drops_a_cut_event_and_fails_an_oversized_one)
{
	static seen s;
	wmap_kube_streams *ss = NULL;
	wmap_kube_client *c;
	wmap_error err = { 0 };
	const int ids[] = { 1, 2 };
	wmap_kube_stream_spec watch8 = { NULL, 8, 1, 0 }, watch = { NULL, 0, 1, 0 };

	start();
	c = client();
	cr_assert_eq(wmap_kube_streams_new(&ss, c, on_line, on_end, &s, &err), 0);
	cr_assert_eq(wmap_kube_stream_start(ss, 1, "/b", &watch, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_kube_stream_start(ss, 2, "/long", &watch8, &err), 0, "%s", err.message);
	run_until(ss, &s, ids, 2);
	cr_expect_eq(s.n[1], 1, "the last line, without its newline, is half an event");
	cr_expect_str_eq(s.lines[1][0], "b1");
	cr_expect_str_eq(s.message[1], "", "a watch the server ended is no failure");
	cr_expect_eq(s.n[2], 0, "no piece of an event is handed over");
	cr_expect_eq(s.status[2], 200);
	cr_expect(strstr(s.message[2], "an event of the watch GET /long is larger than 8 bytes"),
		  "%s", s.message[2]);
	wmap_kube_streams_free(ss);
	wmap_kube_client_free(c);
}

/* wmap_kube_stream: one watch stream on the caller's thread. */
static long long t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct single_seen {
	char lines[8][64];
	int n, stop_after;
	atomic_int *flag; /* set instead of returning nonzero */
} single_seen;

static int single_line(void *ud, const char *line, size_t len)
{
	single_seen *s = ud;

	cr_expect_eq(line[len], '\0', "lines are NUL-terminated");
	if (s->n < 8)
		snprintf(s->lines[s->n++], 64, "%s", line);
	if (s->stop_after && s->n == s->stop_after) {
		if (s->flag) {
			atomic_store(s->flag, 1);
			return 0;
		}
		return 1;
	}
	return 0;
}

Test(kube_stream, one_stream_on_the_callers_thread)
{
	wmap_kube_client *c;
	wmap_error err = { 0 };
	atomic_int stop = 0;
	long status = -1, ra = 0;
	single_seen s = { .stop_after = 2 };
	wmap_kube_stream_opts o = { single_line, &s, &stop, 0, &ra };

	start();
	c = client();
	/* the callback ends it: 0, the status it had */
	cr_expect_eq(wmap_kube_stream(&status, c, "/a", &o, &err), 0, "%s", err.message);
	cr_expect_eq(status, 200);
	cr_expect_eq(s.n, 2);
	cr_expect_str_eq(s.lines[1], "a2");
	cr_expect_eq(ra, -1, "no Retry-After");
	/* the server ends it: every whole line, not the cut last one */
	memset(&s, 0, sizeof(s));
	cr_expect_eq(wmap_kube_stream(&status, c, "/b", &o, &err), 0, "%s", err.message);
	cr_expect_eq(status, 200);
	cr_expect_eq(s.n, 1);
	/* an error response: kubectl's message and the status */
	memset(&s, 0, sizeof(s));
	cr_expect_eq(wmap_kube_stream(&status, c, "/missing", &o, &err), WMAP_ENOTFOUND);
	cr_expect_eq(status, 404);
	cr_expect_str_eq(err.message, "Error from server (NotFound): pods \"x\" not found");
	/* the stop flag ends a stream the server keeps open, within a quarter second */
	memset(&s, 0, sizeof(s));
	s.stop_after = 1;
	s.flag = &stop;
	long long t0 = t_now_ms();
	cr_expect_eq(wmap_kube_stream(&status, c, "/slow", &o, &err), 0, "%s", err.message);
	cr_expect_lt(t_now_ms() - t0, 1500, "the server holds it open for 3 s");
	cr_expect_eq(status, 200);
	cr_expect_eq(s.n, 1);
	/* a timeout of the whole stream: cut after its headers */
	atomic_store(&stop, 0);
	memset(&s, 0, sizeof(s));
	o.timeout_ms = 300;
	cr_expect_eq(wmap_kube_stream(&status, c, "/slow", &o, &err), WMAP_EIO);
	cr_expect_eq(status, 200, "the code it had: %ld (%s)", status, err.message);
	cr_expect_eq(s.n, 1);
	wmap_kube_client_free(c);
}
