/* wmap: long-lived requests (see wmap/kube/streams.h), the API client's one stream
 * mechanism.
 *
 * `describe -w` keeps two watches open (the workload, its pods) and `logs -f` one request
 * per container, plus a pod watch; they all wait on one curl multi handle, so one thread
 * serves them and no request is polled. The webhook's watches (wmap_watch_run, through
 * wmap_kube_stream below) are a set of one stream on their thread. Each stream splits its
 * body into lines in a buffer with a hard cap, and hands over only whole lines: two pods'
 * log lines never mix, and a watch event is whole or the watch fails. An error response is
 * kept (capped) and turned into kubectl's message when it ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube_int.h"
#include "wmap/kube/streams.h"

#define ERROR_BODY_MAX (64u << 10)

typedef struct stream {
	int id;
	int watch; /* watch events: a line over the cap fails the stream, a cut one is dropped */
	CURL *h;
	struct curl_slist *hdrs, *connect_to;
	char *url, *path;
	char *line; /* the line being read */
	size_t len, cap, max;
	char *ebody; /* an error response's body */
	size_t elen;
	long code;              /* 0 until the status line is read */
	int overflow;           /* a watch event longer than max */
	int nomem;              /* the line could not grow */
	wmap_kube__headers hdr; /* Retry-After */
	struct wmap_kube_streams *set;
} stream;

struct wmap_kube_streams {
	wmap_kube_client *client;
	CURLM *multi;
	wmap_kube_line_fn on_line;
	wmap_kube_end_fn on_end;
	void *arg;
	size_t n, cap;
	stream **v;
	/* wmap_kube_stream's: its line callback asked to stop (every transfer is cut), and
	 * what the stream that ended last had. */
	int halt;
	long ended_code, ended_retry_after;
};

static void stream_free(stream *st)
{
	if (!st)
		return;
	if (st->h) {
		if (st->set)
			wmap__curl_multi_remove_handle(st->set->multi, st->h);
		wmap__curl_easy_cleanup(st->h);
	}
	wmap__curl_slist_free_all(st->hdrs);
	wmap__curl_slist_free_all(st->connect_to);
	free(st->url);
	free(st->path);
	free(st->line);
	free(st->ebody);
	free(st);
}

static int grow(stream *st, size_t need)
{
	size_t cap = st->cap ? st->cap : 4096;
	char *d;

	while (cap < need)
		cap *= 2;
	if ((d = realloc(st->line, cap)) == NULL)
		return -1;
	st->line = d;
	st->cap = cap;
	return 0;
}

/* Hands the line over, NUL-terminated (grow keeps room for the NUL). */
static void emit(stream *st)
{
	size_t n = st->len;

	if (n && st->line[n - 1] == '\r')
		n--;
	st->line[n] = '\0';
	st->set->on_line(st->set->arg, st->id, st->line, n);
	st->len = 0;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
	stream *st = user;
	size_t n = size * nmemb;

	if (st->code == 0)
		wmap__curl_easy_getinfo(st->h, CURLINFO_RESPONSE_CODE, &st->code);
	if (st->code < 200 || st->code >= 300) {
		size_t room = ERROR_BODY_MAX - st->elen, take = n < room ? n : room;
		char *d;

		if (take && (d = realloc(st->ebody, st->elen + take + 1)) != NULL) {
			st->ebody = d;
			memcpy(st->ebody + st->elen, ptr, take);
			st->elen += take;
			st->ebody[st->elen] = '\0';
		}
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		if (ptr[i] == '\n') {
			emit(st);
			if (st->set->halt)
				return 0; /* wmap_kube_stream's caller is done: cuts the transfer */
			continue;
		}
		if (st->len + 2 > st->cap && grow(st, st->len + 2) != 0) {
			st->nomem = 1;
			return 0; /* aborts this stream */
		}
		st->line[st->len++] = ptr[i];
		if (st->len >= st->max) {
			if (st->watch) {
				st->overflow = 1; /* half an event is no event */
				return 0;
			}
			emit(st); /* over the cap: handed over in pieces */
		}
	}
	return n;
}

int wmap_kube_streams_new(wmap_kube_streams **out, wmap_kube_client *c,
			  wmap_kube_line_fn on_line, wmap_kube_end_fn on_end, void *arg,
			  wmap_error *err)
{
	wmap_kube_streams *s;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if ((s->multi = wmap__curl_multi_init()) == NULL) {
		free(s);
		return wmap_error_set(err, WMAP_EIO, "libcurl: no multi handle");
	}
	s->client = c;
	s->on_line = on_line;
	s->on_end = on_end;
	s->arg = arg;
	*out = s;
	return 0;
}

void wmap_kube_streams_free(wmap_kube_streams *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		stream_free(s->v[i]);
	free(s->v);
	wmap__curl_multi_cleanup(s->multi);
	free(s);
}

static size_t find(const wmap_kube_streams *s, int id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i]->id == id)
			return i;
	return (size_t)-1;
}

int wmap_kube_stream_open(wmap_kube_streams *s, int id, const char *path, const char *accept,
			  size_t max_line, wmap_error *err)
{
	wmap_kube_stream_spec spec = { accept, max_line, 0, 0 };

	return wmap_kube_stream_start(s, id, path, &spec, err);
}

int wmap_kube_stream_start(wmap_kube_streams *s, int id, const char *path,
			   const wmap_kube_stream_spec *spec, wmap_error *err)
{
	long timeout = wmap_kube__timeout_ms(s->client);
	stream *st = NULL;
	int rc;

	if (find(s, id) != (size_t)-1)
		return wmap_error_set(err, WMAP_EINVAL, "stream %d is already open", id);
	if (s->n >= WMAP_KUBE_STREAMS_MAX)
		return wmap_error_set(err, WMAP_ELIMIT, "more than %d streams at once",
				      WMAP_KUBE_STREAMS_MAX);
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		stream **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		s->v = v;
		s->cap = cap;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	st->id = id;
	st->watch = spec->watch;
	st->max = spec->max_line ? spec->max_line : WMAP_KUBE_LINE_MAX_DEFAULT;
	st->hdr.retry_after = -1;
	if ((st->path = strdup(path)) == NULL) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = wmap_kube__prepare(&st->url, s->client, path, err)) != 0)
		goto fail;
	if ((st->h = wmap__curl_easy_init()) == NULL) {
		rc = wmap_error_set(err, WMAP_ENOMEM, "libcurl: no handle");
		goto fail;
	}
	if ((rc = wmap_kube__configure(s->client, st->h, st->url, "GET", spec->accept, NULL, NULL,
				       &st->hdrs, &st->connect_to, err)) != 0)
		goto fail;
	/* A watch or a followed log lasts as long as it lasts: only connecting is timed,
	 * unless the caller bounds the whole stream. */
	wmap__curl_easy_setopt(st->h, CURLOPT_CONNECTTIMEOUT_MS,
			       timeout > 0 && timeout < 10000 ? timeout : 10000L);
	if (spec->timeout_ms > 0)
		wmap__curl_easy_setopt(st->h, CURLOPT_TIMEOUT_MS, spec->timeout_ms);
	wmap__curl_easy_setopt(st->h, CURLOPT_HEADERFUNCTION, wmap_kube__on_header);
	wmap__curl_easy_setopt(st->h, CURLOPT_HEADERDATA, &st->hdr);
	wmap__curl_easy_setopt(st->h, CURLOPT_TCP_KEEPALIVE, 1L);
	wmap__curl_easy_setopt(st->h, CURLOPT_WRITEFUNCTION, on_data);
	wmap__curl_easy_setopt(st->h, CURLOPT_WRITEDATA, st);
	wmap__curl_easy_setopt(st->h, CURLOPT_PRIVATE, st);
	if (wmap__curl_multi_add_handle(s->multi, st->h) != CURLM_OK) {
		rc = wmap_error_set(err, WMAP_EIO, "libcurl: cannot start the request %s", path);
		goto fail;
	}
	st->set = s;
	s->v[s->n++] = st;
	return 0;
fail:
	stream_free(st);
	return rc;
}

static void drop(wmap_kube_streams *s, size_t i)
{
	stream_free(s->v[i]);
	s->v[i] = s->v[--s->n];
}

void wmap_kube_stream_close(wmap_kube_streams *s, int id)
{
	size_t i = s ? find(s, id) : (size_t)-1;

	if (i != (size_t)-1)
		drop(s, i);
}

size_t wmap_kube_streams_count(const wmap_kube_streams *s)
{
	return s ? s->n : 0;
}

static void finish(wmap_kube_streams *s, stream *st, CURLcode cc)
{
	wmap_error e = { 0 };
	long code = st->code;
	int id = st->id;

	if (code == 0)
		wmap__curl_easy_getinfo(st->h, CURLINFO_RESPONSE_CODE, &code);
	s->ended_code = code; /* a stream cut after its headers had one too */
	s->ended_retry_after = st->hdr.retry_after;
	if (cc == CURLE_OK && code >= 200 && code < 300) {
		if (st->len && !st->watch)
			emit(st); /* a log's last line; a watch's would be half an event */
		drop(s, find(s, id));
		s->on_end(s->arg, id, code, NULL);
		return;
	}
	if (st->overflow)
		wmap_error_set(&e, WMAP_ELIMIT, "an event of the watch GET %s is larger than %zu bytes",
			       st->path, st->max);
	else if (st->nomem)
		wmap_error_set(&e, WMAP_ENOMEM, "out of memory");
	else if (cc != CURLE_OK)
		wmap_error_set(&e, WMAP_EIO, "Unable to connect to the server %s: %s",
			       wmap_kube_client_config(s->client)->server, wmap__curl_easy_strerror(cc));
	else
		wmap_kube__status_error(&e, code, st->ebody ? st->ebody : "", st->elen);
	if (cc != CURLE_OK && !st->overflow)
		code = 0;
	drop(s, find(s, id));
	s->on_end(s->arg, id, code, &e);
}

/* Performs and hands over the streams that ended. */
static int step(wmap_kube_streams *s, wmap_error *err)
{
	int running = 0, left = 0;
	CURLMsg *m;

	if (wmap__curl_multi_perform(s->multi, &running) != CURLM_OK)
		return wmap_error_set(err, WMAP_EIO, "libcurl: the streams failed");
	while ((m = wmap__curl_multi_info_read(s->multi, &left)) != NULL) {
		stream *st = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		wmap__curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&st);
		if (st)
			finish(s, st, m->data.result); /* m is not used after this */
	}
	return 0;
}

int wmap_kube_streams_run(wmap_kube_streams *s, int timeout_ms, wmap_error *err)
{
	int rc;

	if ((rc = step(s, err)) != 0 || s->n == 0)
		return rc;
	if (wmap__curl_multi_poll(s->multi, NULL, 0, timeout_ms, NULL) != CURLM_OK)
		return wmap_error_set(err, WMAP_EIO, "libcurl: waiting on the streams failed");
	return step(s, err);
}

/* ---- one stream on the caller's thread: wmap_kube_stream (wmap/kube/client.h) ---- */

typedef struct single {
	const wmap_kube_stream_opts *o;
	wmap_kube_streams *set;
	int ended, stopped;
	wmap_error failure; /* the stream's end, when it failed */
} single;

static void single_line(void *arg, int id, const char *line, size_t len)
{
	single *x = arg;

	(void)id;
	if (x->stopped || len == 0)
		return;
	if (x->o->on_line(x->o->ud, line, len) != 0)
		x->stopped = x->set->halt = 1;
}

static void single_end(void *arg, int id, long status, const wmap_error *err)
{
	single *x = arg;

	(void)id, (void)status;
	x->ended = 1;
	if (err)
		x->failure = *err;
}

static int stop_asked(const wmap_kube_stream_opts *o)
{
	return o->stop && atomic_load(o->stop);
}

/* One attempt: the stream until it ends or its caller stops it. *code is the status it had
 * (0 when none came), *retry_after its Retry-After. */
static int single_attempt(single *x, wmap_kube_client *c, const char *path, long *code,
			  long *retry_after, wmap_error *err)
{
	wmap_kube_stream_spec spec = { NULL, wmap_kube__max_response(c), 1, x->o->timeout_ms };
	int rc;

	*code = 0;
	*retry_after = -1;
	x->ended = x->stopped = 0;
	x->failure.code = 0;
	if ((rc = wmap_kube_streams_new(&x->set, c, single_line, single_end, x, err)) != 0)
		return rc;
	if ((rc = wmap_kube_stream_start(x->set, 1, path, &spec, err)) != 0)
		goto done;
	/* the stop flag seen within a quarter of a second */
	while (!x->ended && !x->stopped && !stop_asked(x->o))
		if ((rc = wmap_kube_streams_run(x->set, 250, err)) != 0)
			goto done;
	if (!x->ended) {
		/* the stop flag: the stream, still open, is cut when the set is freed */
		stream *st = x->set->v[0];

		x->stopped = 1;
		if (st->code == 0)
			wmap__curl_easy_getinfo(st->h, CURLINFO_RESPONSE_CODE, &st->code);
		*code = st->code;
		*retry_after = st->hdr.retry_after;
	} else {
		*code = x->set->ended_code;
		*retry_after = x->set->ended_retry_after;
	}
	if (!x->stopped && x->failure.code != 0) {
		*err = x->failure;
		rc = x->failure.code;
	}
done:
	wmap_kube_streams_free(x->set);
	x->set = NULL;
	return rc;
}

int wmap_kube_stream(long *status, wmap_kube_client *c, const char *path,
		     const wmap_kube_stream_opts *opts, wmap_error *err)
{
	single x = { opts, NULL, 0, 0, { 0, "" } };
	long code = 0, retry_after = -1;
	int rc;

	*status = 0;
	for (int reauthed = 0;; reauthed = 1) {
		rc = single_attempt(&x, c, path, &code, &retry_after, err);
		wmap_kube__set_retry_after(c, retry_after);
		if (opts->retry_after)
			*opts->retry_after = retry_after;
		if (rc == 0 || x.stopped || code != 401 || reauthed)
			break;
		/* A credential may have expired: a fresh one is taken once. */
		int ra = wmap_kube__reauth(c, err);
		if (ra != 0) {
			if (ra < 0)
				rc = ra;
			break;
		}
	}
	*status = code;
	return x.stopped ? 0 : rc;
}
