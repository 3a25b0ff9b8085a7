/* kubectl-wmap logs TYPE/NAME [COMPONENT[/INSTANCE]]: the logs of a workload's pods, or of
 * one component's (a JobSet's replicatedjob/leader, a Ray worker group), each line prefixed
 * with its pod (and container when the pod has several), coloured per pod on a terminal as
 * stern does (no colour when piped or with NO_COLOR).
 *
 * Pods are the ones describe attributes (live_pods.c). Without -f each container's log is
 * read in turn, pods in name order. With -f every container is followed at once, one
 * streaming request each on one curl multi handle (kube.h "streams"), each line written
 * whole; a pod watch (from the resourceVersion of a list) notices pods that appear or whose
 * containers start, and their logs are followed too; so is a container that runs again
 * after its log ended (its restartCount grew): its new log from the start. More pods than --max-pods is refused
 * before any log is read (exit 5), so a 2,000-pod JobSet never floods the terminal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live_pods.h"
#include "live_watch.h"

#define DEFAULT_MAX_PODS 50
#define RELOAD_MS 500 /* pods are read again at most this often while following */
#define POD_WATCH 1   /* stream id of the pod watch; logs are LOG_BASE + index */
#define LOG_BASE 16

static const char *const pod_colors[] = { "32", "33", "34", "35", "36", "31",
					  "92", "93", "94", "95", "96", "91" };
#define N_COLORS (sizeof(pod_colors) / sizeof(pod_colors[0]))

typedef struct source {
	char pod[256], container[256];
	int color;
	int show_container;
	int done;
	long long restarts; /* the container's restartCount when its log was opened */
	int reopen;         /* restarted while followed: open its new log */
} source;

typedef struct logs {
	live_ctx *lc;
	live_target *t;
	const cli_options *o;
	int comp, inst; /* the component (node index) and instance; -1 = all */
	const char *container;
	long tail, since_s, max_pods;
	int previous, timestamps, follow, color;
	source *src;
	size_t n_src, cap_src;
	size_t n_pods;     /* distinct pods whose logs are read */
	json_t *pods_seen; /* pod name -> color index */
	json_t *refused;   /* pods left out (over --max-pods), said once */
	wmap_kube_streams *streams;
	live_watch pw;
	int pw_resync, pw_reopen, pods_dirty;
	long long last_reload;
	int failures;
	size_t with_container; /* selected pods that have the -c container */
	int failed;
	wmap_error err;
} logs;

/* ---- which pods and containers ------------------------------------------------------ */

static int is_under(const wmap_workload *w, int k, int top)
{
	for (int depth = 0; k >= 0 && depth < 64; depth++) {
		if (k == top)
			return 1;
		k = w->nodes[k].def->parent;
	}
	return 0;
}

static int selected(const logs *g, const pod_info *p)
{
	if (p->comp < 0)
		return 0;
	if (g->comp < 0)
		return 1;
	if (g->inst >= 0)
		return p->comp == g->comp && p->inst == g->inst;
	return is_under(g->t->w, p->comp, g->comp);
}

static const json_t *container_status(const json_t *pod, const char *name)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(json_object_get(pod, "status"), "containerStatuses"), i, c) {
		const char *n = json_string_value(json_object_get(c, "name"));

		if (n && strcmp(n, name) == 0)
			return c;
	}
	json_array_foreach(json_object_get(json_object_get(pod, "status"), "initContainerStatuses"), i, c) {
		const char *n = json_string_value(json_object_get(c, "name"));

		if (n && strcmp(n, name) == 0)
			return c;
	}
	return NULL;
}

/* Whether the container has a log to read: it runs or ran (the previous one: it ended). */
static int started(const logs *g, const json_t *pod, const char *name, const char **why)
{
	const json_t *cs = container_status(pod, name);
	const json_t *state = json_object_get(cs, "state");

	*why = NULL;
	if (g->previous)
		return json_object_get(json_object_get(cs, "lastState"), "terminated") != NULL || !cs;
	if (json_object_get(state, "running") || json_object_get(state, "terminated"))
		return 1;
	if (!cs) {
		/* No status for it: the pod is not running yet (or a client wrote no status). */
		const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));

		if (phase && strcmp(phase, "Pending") != 0)
			return 1;
		*why = phase ? phase : "Pending";
		return 0;
	}
	*why = json_string_value(json_object_get(json_object_get(state, "waiting"), "reason"));
	if (!*why)
		*why = "waiting";
	return 0;
}

static int color_of(logs *g, const char *pod)
{
	json_t *c = json_object_get(g->pods_seen, pod);

	if (c)
		return (int)json_integer_value(c);
	json_object_set_new(g->pods_seen, pod, json_integer((json_int_t)g->n_pods));
	return (int)(g->n_pods++ % N_COLORS);
}

static source *find_source(logs *g, const char *pod, const char *container)
{
	for (size_t i = 0; i < g->n_src; i++)
		if (strcmp(g->src[i].pod, pod) == 0 && strcmp(g->src[i].container, container) == 0)
			return &g->src[i];
	return NULL;
}

static long long restart_count(const json_t *pod, const char *container)
{
	return json_integer_value(json_object_get(container_status(pod, container), "restartCount"));
}

/* While following, a container whose log ended and that has run again since (its
 * restartCount grew) is marked to be read again: its new log, from the start. */
static void mark_restarted(const logs *g, source *s, const json_t *pod)
{
	const char *why;
	long long n = restart_count(pod, s->container);

	if (!g->follow || !s->done || n <= s->restarts || !started(g, pod, s->container, &why))
		return;
	s->restarts = n;
	s->done = 0;
	s->reopen = 1;
}

static int add_source(logs *g, const char *pod, const char *container, int show_container,
		      long long restarts)
{
	source *s;

	if (g->n_src == g->cap_src) {
		size_t cap = g->cap_src ? g->cap_src * 2 : 16;
		source *v = realloc(g->src, cap * sizeof(*v));

		if (!v)
			return cli_error("out of memory");
		g->src = v;
		g->cap_src = cap;
	}
	s = &g->src[g->n_src++];
	memset(s, 0, sizeof(*s));
	snprintf(s->pod, sizeof(s->pod), "%s", pod);
	snprintf(s->container, sizeof(s->container), "%s", container);
	s->show_container = show_container;
	s->restarts = restarts;
	s->color = color_of(g, pod);
	return 0;
}

/* ---- output -------------------------------------------------------------------------- */

static void on_log_line(logs *g, size_t i, const char *line, size_t len)
{
	const source *s = &g->src[i];
	const char *pc = pod_colors[s->color % N_COLORS];

	/* One line at a time, whole: streams are read by this one thread. */
	if (g->color && s->show_container)
		printf("\033[%sm%s\033[0m \033[2;%sm%s\033[0m ", pc, s->pod, pc, s->container);
	else if (g->color)
		printf("\033[%sm%s\033[0m ", pc, s->pod);
	else if (s->show_container)
		printf("%s %s ", s->pod, s->container);
	else
		printf("%s ", s->pod);
	fwrite(line, 1, len, stdout);
	fputc('\n', stdout);
	if (!g->follow)
		return;
	fflush(stdout);
}

static void on_line(void *arg, int id, const char *line, size_t len)
{
	logs *g = arg;

	if (id == POD_WATCH) {
		wmap_watch_event ev;
		wmap_watch_kind k = live_watch_event(&g->pw, line, len, &ev);

		if (k == WMAP_WATCH_GONE || k == WMAP_WATCH_ERROR || k == WMAP_WATCH_BAD)
			g->pw_resync = 1;
		else if (k != WMAP_WATCH_BOOKMARK)
			g->pods_dirty = 1;
		wmap_watch_event_clear(&ev);
		return;
	}
	if (id >= LOG_BASE && (size_t)(id - LOG_BASE) < g->n_src)
		on_log_line(g, (size_t)(id - LOG_BASE), line, len);
}

static void on_end(void *arg, int id, long status, const wmap_error *err)
{
	logs *g = arg;

	if (id == POD_WATCH) {
		g->pw.open = 0;
		if (!err)
			g->pw_reopen = 1;
		else if (status == 410)
			g->pw_resync = 1;
		else if (!g->failed) {
			g->err = *err;
			g->failed = CLI_EXIT_ERROR;
		}
		return;
	}
	if (id >= LOG_BASE && (size_t)(id - LOG_BASE) < g->n_src) {
		source *s = &g->src[id - LOG_BASE];

		s->done = 1;
		g->pods_dirty = g->follow; /* it may have restarted already: read the pods again */
		if (err) {
			fflush(stdout);
			fprintf(stderr, "error: %s/%s: %s\n", s->pod, s->container, err->message);
			g->failures++;
		}
	}
}

/* ---- streams ------------------------------------------------------------------------- */

static int open_log(logs *g, size_t i)
{
	const source *s = &g->src[i];
	const char *ns = g->t->w->namespace_ ? g->t->w->namespace_ : g->lc->ns;
	char *c = wmap_kube_query_escape(s->container), path[2048], extra[128] = "";
	wmap_error err = { 0 };
	size_t used;

	if (!c)
		return cli_error("out of memory");
	used = (size_t)snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/log?container=%s",
				ns, s->pod, c);
	free(c);
	if (g->follow)
		used += (size_t)snprintf(path + used, sizeof(path) - used, "&follow=true");
	if (g->tail >= 0 && !s->reopen)
		snprintf(extra, sizeof(extra), "&tailLines=%ld", g->tail);
	used += (size_t)snprintf(path + used, sizeof(path) - used, "%s", extra);
	if (g->since_s > 0)
		used += (size_t)snprintf(path + used, sizeof(path) - used, "&sinceSeconds=%ld",
					 g->since_s);
	if (g->previous)
		used += (size_t)snprintf(path + used, sizeof(path) - used, "&previous=true");
	if (g->timestamps)
		snprintf(path + used, sizeof(path) - used, "&timestamps=true");
	if (wmap_kube_stream_open(g->streams, LOG_BASE + (int)i, path, "*/*", 0, &err) != 0)
		return live_fail(&err, CLI_EXIT_ERROR);
	return 0;
}

/* Adds the containers of the selected pods that are not read yet (and have started);
 * *n_selected gets the number of selected pods. With report, says which wait. */
static int collect(logs *g, live_pods *set, size_t *n_selected, int report)
{
	int rc = 0;

	*n_selected = 0;
	for (size_t i = 0; i < set->n && rc == 0; i++) {
		const pod_info *p = &set->v[i];
		const json_t *cs = json_object_get(json_object_get(p->pod, "spec"), "containers");
		size_t n_c = json_array_size(cs), j, found = 0;
		json_t *c;

		if (!selected(g, p) || !p->name)
			continue;
		(*n_selected)++;
		if (!json_object_get(g->pods_seen, p->name) && g->n_pods >= (size_t)g->max_pods) {
			if (!json_object_get(g->refused, p->name)) {
				json_object_set_new(g->refused, p->name, json_true());
				fprintf(stderr, "warning: not following pod %s: --max-pods %ld reached\n",
					p->name, g->max_pods);
			}
			continue;
		}
		json_array_foreach(cs, j, c) {
			const char *name = json_string_value(json_object_get(c, "name"));
			const char *why;
			source *known;

			if (!name || (g->container && strcmp(name, g->container) != 0))
				continue;
			found++;
			if ((known = find_source(g, p->name, name)) != NULL) {
				mark_restarted(g, known, p->pod);
				continue;
			}
			if (!started(g, p->pod, name, &why)) {
				if (report)
					fprintf(stderr, "%s/%s: no log yet (%s)\n", p->name, name, why);
				continue;
			}
			if ((rc = add_source(g, p->name, name, !g->container && n_c > 1,
					     restart_count(p->pod, name))) != 0)
				break;
		}
		g->with_container += found > 0;
	}
	return rc;
}

static int read_all(logs *g)
{
	for (size_t i = 0; i < g->n_src; i++) {
		int rc;

		if ((rc = open_log(g, i)) != 0)
			return rc;
		while (!g->src[i].done) {
			if (live_interrupted())
				return 130;
			if (wmap_kube_streams_run(g->streams, 200, &g->err) != 0)
				return live_fail(&g->err, CLI_EXIT_ERROR);
		}
	}
	fflush(stdout);
	return g->failures ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

static int reload(logs *g)
{
	live_pods set;
	wmap_error err = { 0 };
	size_t before = g->n_src, n = 0;
	int rc;

	g->pods_dirty = 0;
	g->last_reload = live_now_ms();
	memset(&set, 0, sizeof(set));
	if (live_pods_load(&set, g->lc, g->t->w, &err) != 0) {
		live_pods_free(&set);
		return live_fail(&err, CLI_EXIT_ERROR);
	}
	rc = collect(g, &set, &n, 0);
	live_pods_free(&set);
	for (size_t i = 0; i < g->n_src && rc == 0; i++) {
		if (i < before && !g->src[i].reopen)
			continue;
		rc = open_log(g, i);
		g->src[i].reopen = 0;
	}
	return rc;
}

static int follow(logs *g)
{
	const char *ns = g->t->w->namespace_ ? g->t->w->namespace_ : g->lc->ns;
	int rc;

	g->pw.id = POD_WATCH;
	snprintf(g->pw.path, sizeof(g->pw.path), "/api/v1/namespaces/%s/pods", ns);
	for (size_t i = 0; i < g->n_src; i++)
		if ((rc = open_log(g, i)) != 0)
			return rc;
	if ((rc = live_watch_open(&g->pw, g->streams, g->lc)) != 0)
		return rc;
	fflush(stdout);
	for (;;) {
		long long wait = 200;

		if (live_interrupted())
			return 130;
		if (g->pw_resync) {
			g->pw_resync = 0;
			wmap_kube_stream_close(g->streams, POD_WATCH);
			g->pw.open = 0;
			if ((rc = live_watch_sync(&g->pw, g->lc, NULL)) != 0)
				return rc;
			g->pods_dirty = g->pw_reopen = 1;
		}
		if (g->pw_reopen && !g->pw.open) {
			g->pw_reopen = 0;
			if ((rc = live_watch_open(&g->pw, g->streams, g->lc)) != 0)
				return rc;
		}
		if (g->pods_dirty) {
			long long due = g->last_reload + RELOAD_MS - live_now_ms();

			if (due <= 0) {
				if ((rc = reload(g)) != 0)
					return rc;
				continue;
			}
			wait = due;
		}
		if (wmap_kube_streams_run(g->streams, (int)wait, &g->err) != 0)
			return live_fail(&g->err, CLI_EXIT_ERROR);
		if (g->failed)
			return live_fail(&g->err, g->failed);
	}
}

/* ---- the command --------------------------------------------------------------------- */

/* "replicatedjob/leader": the component's node index and the instance's index. */
static int find_component(logs *g, const char *spec)
{
	const wmap_workload *w = g->t->w;
	char comp[256], *slash;
	const char *inst;

	snprintf(comp, sizeof(comp), "%s", spec);
	slash = strchr(comp, '/');
	inst = slash ? slash + 1 : NULL;
	if (slash)
		*slash = '\0';
	g->comp = g->inst = -1;
	for (size_t k = 0; k < w->n_nodes; k++) {
		const wmap_node *n = &w->nodes[k];

		if (strcmp(n->def->name, comp) != 0)
			continue;
		g->comp = (int)k;
		if (!inst)
			return 0;
		for (size_t i = 0; i < n->n_instances; i++)
			if (n->instances[i].id && strcmp(n->instances[i].id, inst) == 0) {
				g->inst = (int)i;
				return 0;
			}
		break;
	}
	{
		char list[2048];
		size_t used = 0;

		list[0] = '\0';
		for (size_t k = 0; k < w->n_nodes && used < sizeof(list); k++) {
			const wmap_node *n = &w->nodes[k];

			if (!wmap_component_has_pods(n->def))
				continue;
			if (n->def->instance_id_path && n->n_instances)
				for (size_t i = 0; i < n->n_instances && used < sizeof(list); i++)
					used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s/%s",
								 used ? ", " : "", n->def->name,
								 n->instances[i].id ? n->instances[i].id : "");
			else
				used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
							 used ? ", " : "", n->def->name);
		}
		fprintf(stderr, "error: %s/%s has no component %s (its components: %s)\n", g->t->label,
			g->t->name, spec, list[0] ? list : "none with pods");
	}
	return CLI_EXIT_NOTFOUND;
}

static int number(long *out, const cli_options *o, const char *name, long dflt, long min)
{
	const char *v = cli_options_get(o, name);
	char *end;

	*out = dflt;
	if (!v)
		return 0;
	*out = strtol(v, &end, 10);
	if (end == v || *end || *out < min)
		return cli_usage_error(o, &cli_cmd_logs, "--%s needs a number >= %ld (got \"%s\")", name,
				       min, v);
	return 0;
}

static int options(logs *g, const cli_options *o)
{
	const char *since = cli_options_get(o, "since"), *nc = getenv("NO_COLOR");
	int rc;

	if ((rc = number(&g->tail, o, "tail", -1, -1)) != 0 ||
	    (rc = number(&g->max_pods, o, "max-pods", DEFAULT_MAX_PODS, 1)) != 0)
		return rc;
	if (since) {
		long ms = wmap_kube_parse_duration(since);

		if (ms <= 0)
			return cli_usage_error(o, &cli_cmd_logs, "--since needs a duration such as 30s, "
								 "5m or 2h (got \"%s\")",
					       since);
		g->since_s = (ms + 999) / 1000;
	}
	g->container = cli_options_get(o, "container");
	g->follow = cli_options_get(o, "follow") != NULL;
	g->previous = cli_options_get(o, "previous") != NULL;
	g->timestamps = cli_options_get(o, "timestamps") != NULL;
	if (g->follow && g->previous)
		return cli_usage_error(o, &cli_cmd_logs, "-f and --previous do not go together");
	g->color = isatty(STDOUT_FILENO) && !(nc && nc[0]);
	return 0;
}

int live_logs(const cli_options *o)
{
	char type[256], name[256];
	const char *component = NULL;
	cli_options split = *o;
	int has_name = 0, rc;
	live_ctx lc;
	live_target t;
	live_pods set;
	size_t n_selected = 0;
	logs g;

	memset(&g, 0, sizeof(g));
	memset(&t, 0, sizeof(t));
	memset(&set, 0, sizeof(set));
	if ((rc = options(&g, o)) != 0)
		return rc;
	/* TYPE/NAME [COMPONENT] or TYPE NAME [COMPONENT] */
	if (o->n_args == 0 || o->n_args > 3)
		return cli_usage_error(o, &cli_cmd_logs, "logs takes TYPE/NAME [COMPONENT[/INSTANCE]]");
	split.n_args = strchr(o->args[0], '/') ? 1 : (o->n_args >= 2 ? 2 : 1);
	if (o->n_args > split.n_args + 1)
		return cli_usage_error(o, &cli_cmd_logs, "logs takes TYPE/NAME [COMPONENT[/INSTANCE]] "
							 "(got %zu arguments)",
				       o->n_args);
	if (o->n_args > split.n_args)
		component = o->args[split.n_args];
	if ((rc = live_split_target(type, sizeof(type), name, sizeof(name), &has_name, &split,
				    &cli_cmd_logs, 1)) != 0)
		return rc;
	if ((rc = live_open(&lc, o)) != 0) {
		live_close(&lc);
		return rc;
	}
	g.lc = &lc;
	g.t = &t;
	g.o = o;
	g.comp = g.inst = -1;
	if ((g.pods_seen = json_object()) == NULL || (g.refused = json_object()) == NULL) {
		rc = cli_error("out of memory");
		goto cleanup;
	}
	live_sigint_install();
	if ((rc = live_target_load(&t, &lc, type, name)) != 0)
		goto cleanup;
	if (component && (rc = find_component(&g, component)) != 0)
		goto cleanup;
	if ((rc = wmap_kube_streams_new(&g.streams, lc.client, on_line, on_end, &g, &g.err)) != 0) {
		rc = live_fail(&g.err, CLI_EXIT_ERROR);
		goto cleanup;
	}
	if (g.follow) {
		/* The pod watch starts where this list is, so no pod is missed in between. */
		const char *ns = t.w->namespace_ ? t.w->namespace_ : lc.ns;

		snprintf(g.pw.path, sizeof(g.pw.path), "/api/v1/namespaces/%s/pods", ns);
		if ((rc = live_watch_sync(&g.pw, &lc, NULL)) != 0)
			goto cleanup;
	}
	if (live_pods_load(&set, &lc, t.w, &g.err) != 0) {
		rc = live_fail(&g.err, CLI_EXIT_ERROR);
		goto cleanup;
	}
	for (size_t i = 0; i < set.n; i++)
		n_selected += selected(&g, &set.v[i]);
	if (n_selected > (size_t)g.max_pods) {
		fprintf(stderr, "error: %s/%s%s%s has %zu pods, more than --max-pods %ld: name a "
				"component (kubectl wmap describe %s/%s lists them) or raise --max-pods\n",
			t.label, t.name, component ? " " : "", component ? component : "", n_selected,
			g.max_pods, t.res->plural, t.name);
		rc = CLI_EXIT_LIMIT;
		goto cleanup;
	}
	if (n_selected == 0 && !g.follow)
		fprintf(stderr, "%s/%s%s%s has no pods\n", t.label, t.name, component ? " " : "",
			component ? component : "");
	if ((rc = collect(&g, &set, &n_selected, 1)) != 0)
		goto cleanup;
	if (g.container && n_selected > 0 && g.with_container == 0) {
		/* Pods without it are skipped quietly; none at all is a mistake worth saying. */
		rc = cli_error("no pod of %s/%s%s%s has a container %s", t.label, t.name,
			       component ? " " : "", component ? component : "", g.container);
		goto cleanup;
	}
	rc = g.follow ? follow(&g) : read_all(&g);
cleanup:
	fflush(stdout);
	wmap_kube_streams_free(g.streams);
	live_pods_free(&set);
	json_decref(g.pods_seen);
	json_decref(g.refused);
	free(g.src);
	live_target_clear(&t);
	live_close(&lc);
	return rc;
}
