/* kubectl-wmap: watches, and `describe TYPE/NAME -w`.
 *
 * A watch starts from the resourceVersion of a list of the same collection (a list with
 * limit=1: one small request whatever the collection's size), asks for bookmarks so that
 * the resourceVersion keeps up while nothing changes, starts again from where it was when
 * the server ends it, and lists again after 410 Gone (the version was compacted away).
 *
 * describe -w watches the workload (fieldSelector metadata.name) and its pods (a label every
 * pod of the workload carries with the workload's name, else every pod of the namespace),
 * and redraws the view after a change, at most every REDRAW_MS so that a burst of events
 * (a JobSet's pods all starting) is one redraw. Nothing is polled: between events no
 * request is made. On a terminal the view is redrawn in place (cursor home, each line
 * cleared to its end, the rest of the screen cleared); piped, a changed view is printed
 * after a blank line. It ends when the workload is deleted (0), with --until-done when it
 * is Completed (0) or Failed (1), or on Ctrl-C (130, as a shell reports SIGINT). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "live_pods.h"
#include "live_watch.h"

#define REDRAW_MS 150       /* at most one redraw per 150 ms */
#define WATCH_TIMEOUT_S 300 /* the server ends a watch after this; we start it again */
#define TICK_MS 200         /* how long one wait lasts when nothing is due */

/* ---- watches ------------------------------------------------------------------------- */

static const char *query_sep(const char *path)
{
	return strchr(path, '?') ? "&" : "?";
}

int live_watch_sync(live_watch *w, live_ctx *lc, size_t *count)
{
	wmap_error err = { 0 };
	char url[2200];
	json_t *list = NULL;
	const char *rv;
	int rc;

	snprintf(url, sizeof(url), "%s%slimit=1", w->path, query_sep(w->path));
	if ((rc = wmap_kube_get(&list, lc->client, url, &err)) != 0)
		return live_fail(&err, live_code(&err));
	rv = json_string_value(json_object_get(json_object_get(list, "metadata"), "resourceVersion"));
	snprintf(w->rv, sizeof(w->rv), "%s", rv ? rv : "");
	if (count)
		*count = json_array_size(json_object_get(list, "items"));
	json_decref(list);
	return 0;
}

int live_watch_open(live_watch *w, wmap_kube_streams *s, live_ctx *lc)
{
	wmap_error err = { 0 };
	char url[2400], *rv = wmap_kube_query_escape(w->rv);

	if (!rv)
		return cli_error("out of memory");
	snprintf(url, sizeof(url), "%s%swatch=true&allowWatchBookmarks=true&timeoutSeconds=%d%s%s",
		 w->path, query_sep(w->path), WATCH_TIMEOUT_S, rv[0] ? "&resourceVersion=" : "", rv);
	free(rv);
	wmap_kube_stream_spec spec = { NULL, LIVE_WATCH_LINE_MAX, 1, 0 };

	if (wmap_kube_stream_start(s, w->id, url, &spec, &err) != 0)
		return live_fail(&err, CLI_EXIT_ERROR);
	w->open = 1;
	return 0;
}

wmap_watch_kind live_watch_event(live_watch *w, const char *line, size_t len,
				 wmap_watch_event *ev)
{
	wmap_watch_event_read(ev, line, len);
	if (ev->rv && strlen(ev->rv) < sizeof(w->rv))
		snprintf(w->rv, sizeof(w->rv), "%s", ev->rv);
	return ev->kind;
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

void live_sigint_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int live_interrupted(void)
{
	return interrupted != 0;
}

long long live_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- describe -w --------------------------------------------------------------------- */

enum { W_WORKLOAD = 1,
       W_PODS = 2 };

typedef struct watcher {
	live_ctx *lc;
	live_target *t;
	const cli_options *o;
	wmap_kube_streams *streams;
	live_watch w[3]; /* [W_WORKLOAD], [W_PODS] */
	int resync[3], reopen[3];
	int dirty, deleted, tty, drawn;
	long long last_draw;
	char *view; /* the last view shown */
	int failed; /* a watch failed: exit code */
	wmap_error err;
} watcher;

static void on_line(void *arg, int id, const char *line, size_t len)
{
	watcher *x = arg;
	wmap_watch_event ev;

	if (id != W_WORKLOAD && id != W_PODS)
		return;
	switch (live_watch_event(&x->w[id], line, len, &ev)) {
	case WMAP_WATCH_DELETED:
		if (id == W_WORKLOAD)
			x->deleted = 1;
		x->dirty = 1;
		break;
	case WMAP_WATCH_ADDED:
	case WMAP_WATCH_MODIFIED:
		x->dirty = 1;
		break;
	case WMAP_WATCH_BOOKMARK:
		break;
	case WMAP_WATCH_GONE:
	case WMAP_WATCH_ERROR:
	case WMAP_WATCH_BAD:
		/* The watch cannot go on from where it is: list again, then watch again. */
		x->resync[id] = 1;
		break;
	}
	wmap_watch_event_clear(&ev);
}

static void on_end(void *arg, int id, long status, const wmap_error *err)
{
	watcher *x = arg;

	if (id != W_WORKLOAD && id != W_PODS)
		return;
	x->w[id].open = 0;
	if (!err)
		x->reopen[id] = 1; /* the server's timeout: go on from w->rv */
	else if (status == 410)
		x->resync[id] = 1;
	else if (!x->failed) {
		x->err = *err;
		x->failed = CLI_EXIT_ERROR;
	}
}

/* The header's age changes by itself; it is not a change of the view. */
static int same_view(const char *a, const char *b)
{
	const char *ea, *eb;

	if (!a || !b)
		return 0;
	ea = strstr(a, "   age: ");
	eb = strstr(b, "   age: ");
	if (!ea || !eb || strchr(a, '\n') < ea || strchr(b, '\n') < eb)
		return strcmp(a, b) == 0;
	return ea - a == eb - b && strncmp(a, b, (size_t)(ea - a)) == 0 &&
	       strcmp(strchr(ea, '\n'), strchr(eb, '\n')) == 0;
}

static void show(watcher *x, char *view)
{
	if (x->tty) {
		/* In place: home, every line cleared to its end, then the rest of the screen. */
		fputs(x->drawn ? "\033[H" : "\033[H\033[2J", stdout);
		for (const char *p = view; *p;) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);

			fwrite(p, 1, n, stdout);
			fputs("\033[K\n", stdout);
			p += n + (nl ? 1 : 0);
		}
		fputs("\033[J", stdout);
	} else {
		if (x->drawn)
			fputc('\n', stdout);
		fputs(view, stdout);
	}
	fflush(stdout);
	x->drawn = 1;
	free(x->view);
	x->view = view;
}

/* Reads the workload and its pods again and shows the view when it changed. 0, or an exit
 * code; x->deleted when the workload is gone. */
static int draw(watcher *x)
{
	FILE *mem, *saved = stdout;
	char *view = NULL;
	size_t len = 0;
	int rc;

	x->dirty = 0;
	x->last_draw = live_now_ms();
	if (x->deleted)
		return 0;
	if ((rc = live_target_reload(x->t, x->lc)) != 0) {
		if (rc == CLI_EXIT_NOTFOUND) {
			x->deleted = 1;
			return 0;
		}
		return rc;
	}
	if ((mem = open_memstream(&view, &len)) == NULL)
		return cli_error("out of memory");
	/* The describe view prints on stdout; here it goes into the buffer instead, so that it
	 * can be compared with the last one and drawn in one write (glibc's stdout is a plain
	 * variable that may be assigned). */
	fflush(stdout);
	stdout = mem;
	rc = live_describe_view(x->lc, x->t, !x->drawn);
	fflush(stdout);
	stdout = saved;
	fclose(mem);
	if (rc != 0) {
		free(view);
		return rc;
	}
	if (x->drawn && same_view(x->view, view)) {
		free(view);
		return 0;
	}
	show(x, view);
	return 0;
}

/* A label every pod of the workload carries with the workload's name as its value, so the
 * pod watch sees only them: wmap's own (the webhook stamps it), else the first in order. */
static void pod_selector(char *out, size_t len, live_ctx *lc, live_target *t)
{
	static const char *const preferred[] = { "wmap.io/workload-name",
						 "jobset.sigs.k8s.io/jobset-name", "ray.io/cluster",
						 "training.kubeflow.org/job-name",
						 "leaderworkerset.sigs.k8s.io/name", NULL };
	wmap_error err = { 0 };
	live_pods set;
	const char *name = t->w->name;

	out[0] = '\0';
	memset(&set, 0, sizeof(set));
	if (!name || live_pods_load(&set, lc, t->w, &err) != 0 || set.n == 0) {
		live_pods_free(&set);
		return;
	}
	for (size_t k = 0; preferred[k] && !out[0]; k++) {
		size_t i;

		for (i = 0; i < set.n; i++) {
			const json_t *labels = json_object_get(json_object_get(set.v[i].pod, "metadata"),
							       "labels");
			const char *v = json_string_value(json_object_get(labels, preferred[k]));

			if (!v || strcmp(v, name) != 0)
				break;
		}
		if (i == set.n) {
			char *ev = wmap_kube_query_escape(name), *ek = wmap_kube_query_escape(preferred[k]);

			if (ev && ek)
				snprintf(out, len, "labelSelector=%s%%3D%s", ek, ev);
			free(ev);
			free(ek);
		}
	}
	live_pods_free(&set);
}

static int setup(watcher *x)
{
	live_target *t = x->t;
	const char *ns = t->w->namespace_ ? t->w->namespace_ : x->lc->ns;
	char *coll = wmap_resource_path(t->res, t->res->namespaced ? ns : NULL, NULL);
	char *name = wmap_kube_query_escape(t->name), sel[1024];
	size_t count = 0;
	int rc;

	if (!coll || !name) {
		free(coll);
		free(name);
		return cli_error("out of memory");
	}
	x->w[W_WORKLOAD].id = W_WORKLOAD;
	snprintf(x->w[W_WORKLOAD].path, sizeof(x->w[W_WORKLOAD].path),
		 "%s?fieldSelector=metadata.name%%3D%s", coll, name);
	free(coll);
	free(name);
	pod_selector(sel, sizeof(sel), x->lc, t);
	x->w[W_PODS].id = W_PODS;
	snprintf(x->w[W_PODS].path, sizeof(x->w[W_PODS].path), "/api/v1/namespaces/%s/pods%s%s",
		 ns, sel[0] ? "?" : "", sel);
	if ((rc = live_watch_sync(&x->w[W_WORKLOAD], x->lc, &count)) != 0)
		return rc;
	if (count == 0)
		x->deleted = 1;
	return live_watch_sync(&x->w[W_PODS], x->lc, NULL);
}

/* Lists again what must be listed, opens what must be opened. */
static int restart(watcher *x)
{
	int rc;

	for (int id = W_WORKLOAD; id <= W_PODS; id++) {
		if (x->resync[id]) {
			size_t count = 1;

			x->resync[id] = 0;
			wmap_kube_stream_close(x->streams, id);
			x->w[id].open = 0;
			if ((rc = live_watch_sync(&x->w[id], x->lc, &count)) != 0)
				return rc;
			if (id == W_WORKLOAD && count == 0)
				x->deleted = 1;
			x->dirty = 1; /* what changed meanwhile is in the new list */
			x->reopen[id] = 1;
		}
		if (x->reopen[id] && !x->w[id].open) {
			x->reopen[id] = 0;
			if ((rc = live_watch_open(&x->w[id], x->streams, x->lc)) != 0)
				return rc;
		}
	}
	return 0;
}

static int done_code(const watcher *x)
{
	unsigned st = x->t->w ? x->t->w->statuses : 0;

	if (!cli_options_get(x->o, "until-done"))
		return -1;
	if (st & (1u << WMAP_STATUS_FAILED))
		return CLI_EXIT_ERROR;
	if (st & (1u << WMAP_STATUS_COMPLETED))
		return CLI_EXIT_OK;
	return -1;
}

int live_watch_describe(live_ctx *lc, live_target *t, const cli_options *o)
{
	watcher x;
	int rc, code;

	memset(&x, 0, sizeof(x));
	x.lc = lc;
	x.t = t;
	x.o = o;
	x.tty = o->output == CLI_OUTPUT_TABLE && isatty(STDOUT_FILENO);
	live_sigint_install();
	if ((rc = wmap_kube_streams_new(&x.streams, lc->client, on_line, on_end, &x, &x.err)) != 0)
		return live_fail(&x.err, CLI_EXIT_ERROR);
	if ((rc = setup(&x)) != 0)
		goto done;
	if (x.tty)
		fputs("\033[?25l", stdout); /* no cursor blinking over the view */
	if ((rc = draw(&x)) != 0 || (code = done_code(&x)) >= 0) {
		rc = rc ? rc : code;
		goto done;
	}
	x.reopen[W_WORKLOAD] = x.reopen[W_PODS] = 1;
	for (;;) {
		long long wait = TICK_MS;

		if ((rc = restart(&x)) != 0)
			break;
		if (x.dirty) {
			long long due = x.last_draw + REDRAW_MS - live_now_ms();

			if (due <= 0) {
				if ((rc = draw(&x)) != 0 || (code = done_code(&x)) >= 0) {
					rc = rc ? rc : code;
					break;
				}
				continue;
			}
			wait = due;
		}
		if (x.deleted)
			break;
		if (live_interrupted()) {
			rc = 130;
			break;
		}
		if (wmap_kube_streams_run(x.streams, (int)wait, &x.err) != 0) {
			rc = live_fail(&x.err, CLI_EXIT_ERROR);
			break;
		}
		if (x.failed) {
			rc = live_fail(&x.err, x.failed);
			break;
		}
		if (live_interrupted()) {
			rc = 130;
			break;
		}
	}
done:
	if (x.tty)
		fputs("\033[?25h", stdout);
	fflush(stdout);
	if (rc == 0 && x.deleted)
		fprintf(stderr, "%s/%s deleted\n", t->label, t->name);
	wmap_kube_streams_free(x.streams);
	free(x.view);
	return rc;
}
