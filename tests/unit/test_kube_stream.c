/* Streams (kube.h): long GETs side by side on one multi handle, against a loopback server
 * that writes each response in timed pieces on its own connection. Lines come out whole
 * and per stream however the bytes are cut; a last line without a newline comes out at
 * the end; a line over the cap comes out in pieces; an error response ends the stream with
 * kubectl's message; a closed stream is silent. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
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
