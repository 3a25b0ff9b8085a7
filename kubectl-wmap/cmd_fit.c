/* kubectl-wmap fit: would this workload fit now, in which cluster, and if not, exactly why.
 *
 * The workload comes from -f FILE|- or, live, TYPE/NAME (read from the first --context, else
 * the current one; its own pods are left out of the count, so the answer is whether it could
 * fit as a fresh copy). The clusters are every --context, every context (--all-contexts), the
 * current one, or the folders of --snapshot DIR. The core (include/wmap/fit.h) answers for
 * each; a cluster that cannot be read answers "unknown" without stopping the others. Exit
 * codes: 0 fits in at least one, 6 every cluster answered no or no?, 7 none fits and at least
 * one is unknown (1-4 as for the other commands). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fit_cmd.h"
#include "live.h"
#include "live_pods.h"
#include "wmap/fit.h"
#include "wmap/gang.h"
#include "wmap/yaml.h"

extern const cli_command cli_cmd_fit;

static const cli_flag flags[] = {
	{ "filename", "file", 'f', "FILE", "the workload object, YAML or JSON (- reads stdin)" },
	{ "snapshot", NULL, 0, "DIR", "offline: DIR/NAME/nodes.json and pods.json per cluster NAME" },
	{ "all-contexts", NULL, 0, NULL, "ask every context of the kubeconfig" },
	{ "min", NULL, 0, NULL, "place each gang's minimum instead of every desired pod" },
	{ "parallel", NULL, 0, "N", "contexts asked at once (default 5)" },
	{ NULL, NULL, 0, NULL, NULL },
};

/* The workload: one object from the file, resolved; or the live one, with its pods' UIDs. */
typedef struct fit_input {
	json_t *docs;
	wmap_registry *reg;
	wmap_engine *eng;
	wmap_workload *w; /* file mode */
	live_ctx lc;      /* live mode */
	live_target t;
	int live;
	json_t *own_uids;
} fit_input;

static void input_free(fit_input *in)
{
	wmap_workload_free(in->w);
	wmap_engine_free(in->eng);
	wmap_registry_free(in->reg);
	json_decref(in->docs);
	json_decref(in->own_uids);
	if (in->live) {
		live_target_clear(&in->t);
		live_close(&in->lc);
	}
}

static int read_file_workload(fit_input *in, const cli_options *o, const char *file)
{
	wmap_yaml_opts yo = { 0 };
	wmap_error err = { 0 };
	const wmap_definition *def = NULL;
	const char *where = strcmp(file, "-") == 0 ? "<stdin>" : file;
	json_t *object;
	int rc;

	yo.allow_aliases = 1;
	if ((rc = wmap_yaml_parse_file(&in->docs, file, &yo, &err)) != 0)
		return cli_fail(&err);
	if (json_array_size(in->docs) != 1 || !json_is_object(json_array_get(in->docs, 0))) {
		wmap_error_set(&err, WMAP_EINVAL, "%s: fit -f takes exactly one object (found %zu documents)", where,
			       json_array_size(in->docs));
		return cli_fail(&err);
	}
	object = json_array_get(in->docs, 0);
	if ((rc = cli_registry_load_for(&in->reg, o, object, &err)) == 0 &&
	    (rc = wmap_registry_find_object(&def, in->reg, object, &err)) == 0 &&
	    (rc = wmap_engine_new(&in->eng, in->reg, &err)) == 0)
		rc = wmap_workload_resolve(&in->w, in->eng, object, def, &err);
	if (rc) {
		wmap_error_prefix(&err, "%s", where);
		return cli_fail(&err);
	}
	return 0;
}

/* TYPE/NAME from the first --context (else the current one), and its pods' UIDs. */
static int read_live_workload(fit_input *in, const cli_options *o, cli_options *src)
{
	char type[256], name[256];
	int has_name, rc;
	live_pods pods = { 0 };
	wmap_error err = { 0 };

	if ((rc = live_split_target(type, sizeof(type), name, sizeof(name), &has_name, o, &cli_cmd_fit, 1)))
		return rc;
	*src = *o;
	src->kube.context = o->kube.n_contexts ? o->kube.contexts[0] : NULL;
	in->live = 1;
	if ((rc = live_open(&in->lc, src)) || (rc = live_target_load(&in->t, &in->lc, type, name)))
		return rc;
	if (!(in->own_uids = json_object()))
		return cli_error("out of memory");
	if (live_pods_load(&pods, &in->lc, in->t.w, &err) != 0) {
		live_pods_free(&pods);
		return live_fail(&err, CLI_EXIT_ERROR);
	}
	for (size_t i = 0; i < pods.n; i++) {
		const char *uid = json_string_value(json_object_get(json_object_get(pods.v[i].pod, "metadata"), "uid"));
		if (uid)
			json_object_set_new(in->own_uids, uid, json_true());
	}
	live_pods_free(&pods);
	return 0;
}

static int parse_parallel(int *out, const cli_options *o)
{
	const char *v = cli_options_get(o, "parallel");
	char *end;
	long n;
	*out = 5;
	if (!v)
		return 0;
	n = strtol(v, &end, 10);
	if (!*v || *end || n < 1 || n > FIT_MAX_SOURCES)
		return cli_usage_error(o, &cli_cmd_fit, "--parallel must be a number from 1 to %d (got \"%s\")",
				       FIT_MAX_SOURCES, v);
	*out = (int)n;
	return 0;
}

/* One cluster's answer: the core's verdict, or "unknown" with the reason. */
static json_t *answer(fit_source *s, const wmap_workload *w, const wmap_gang_plan *plan, const wmap_fit_opts *base)
{
	wmap_fit_opts opts = *base;
	wmap_error err = { 0 };
	json_t *v = NULL;

	if (!s->error[0] && s->snap) {
		if (wmap_fit_snapshot_verdict(&v, s->snap, &err) == 0)
			return v;
	} else if (!s->error[0]) {
		snprintf(s->nodes_name, sizeof(s->nodes_name), "%s: nodes", s->name);
		snprintf(s->pods_name, sizeof(s->pods_name), "%s: pods", s->name);
		opts.nodes_name = s->nodes_name;
		opts.pods_name = s->pods_name;
		if (wmap_fit_evaluate(&v, w, plan, s->nodes, s->pods, &opts, &err) == 0)
			return v;
	}
	return json_pack("{s:s, s:s}", "verdict", "unknown", "error", s->error[0] ? s->error : err.message);
}

static int run(const cli_options *o)
{
	static fit_source src[FIT_MAX_SOURCES];
	const char *file = cli_options_get(o, "filename"), *snapshot = cli_options_get(o, "snapshot");
	int all = cli_options_get(o, "all-contexts") != NULL, parallel, rc;
	fit_input in;
	cli_options src_opts;
	wmap_gang_plan *plan = NULL;
	wmap_fit_opts opts = { 0 };
	wmap_error err = { 0 };
	json_t *workload = NULL, *contexts = NULL;
	size_t n = 0;
	int yes = 0, unknown = 0;

	memset(&in, 0, sizeof(in));
	if ((file != NULL) == (o->n_args > 0))
		return cli_usage_error(o, &cli_cmd_fit, "fit needs -f FILE or TYPE/NAME (one of them)");
	if (all && o->kube.n_contexts > 0)
		return cli_usage_error(o, &cli_cmd_fit, "--all-contexts and --context exclude each other");
	if (all && snapshot)
		return cli_usage_error(o, &cli_cmd_fit, "--all-contexts and --snapshot exclude each other");
	if ((rc = parse_parallel(&parallel, o)))
		return rc;
	if ((rc = file ? read_file_workload(&in, o, file) : read_live_workload(&in, o, &src_opts)))
		goto done;
	const wmap_workload *w = in.live ? in.t.w : in.w;
	opts.flags = cli_options_get(o, "min") ? WMAP_FIT_MIN : 0;
	opts.skip_uids = in.own_uids;
	if ((rc = wmap_gang_plan_build(&plan, w, w->name, &err)) || (rc = wmap_fit_workload(&workload, w, plan, &opts, &err))) {
		rc = cli_fail(&err);
		goto done;
	}
	if (snapshot)
		rc = fit_snapshot_dir(src, &n, snapshot, o->kube.contexts, o->kube.n_contexts, w, plan, &opts, &err);
	else if ((rc = fit_live_contexts(src, &n, o, all, &err)) == 0)
		fit_live_fetch(src, n, o, parallel);
	if (rc) {
		rc = cli_fail(&err);
		goto done;
	}
	if (!(contexts = json_object())) {
		rc = cli_error("out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *v = answer(&src[i], w, plan, &opts);
		const char *verdict = json_string_value(json_object_get(v, "verdict"));
		fit_source_clear(&src[i]);
		if (!v || json_object_set_new(contexts, src[i].name, v)) {
			rc = cli_error("out of memory");
			goto done;
		}
		yes |= strcmp(verdict, "yes") == 0;
		unknown |= strcmp(verdict, "unknown") == 0;
	}
	if ((rc = fit_render(o, workload, contexts, &err))) {
		rc = cli_fail(&err);
		goto done;
	}
	rc = yes ? CLI_EXIT_OK : unknown ? CLI_EXIT_FIT_UNKNOWN
					 : CLI_EXIT_NOFIT;
done:
	fflush(stdout);
	for (size_t i = 0; i < n; i++)
		fit_source_clear(&src[i]);
	json_decref(workload);
	json_decref(contexts);
	wmap_gang_plan_free(plan);
	input_free(&in);
	return rc;
}

const cli_command cli_cmd_fit = {
	.name = "fit",
	.summary = "Say whether a workload would fit now, in which cluster, and why not",
	.usage = "fit -f FILE|- | TYPE/NAME [--context NAME]... [--all-contexts] [--snapshot DIR] [--min] "
		 "[-o wide|json|yaml] [flags]",
	.help = "Takes the workload as a gang: every desired pod (or with --min each gang's minimum)\n"
		"placed at once, by the default scheduler's rules a preview can honour: requests\n"
		"(limits as fallback, init containers and sidecars, overhead) against allocatable minus\n"
		"the requests of non-terminal pods, the pod count, cordon, NoSchedule/NoExecute taints\n"
		"and tolerations, nodeSelector and required node affinity, Ready nodes only.\n"
		"\n"
		"One row per cluster: yes (a placement was found; -o wide prints it), no (proved by\n"
		"counting), no? (no placement found, no proof), unknown (could not be read). Clusters are\n"
		"the --context flags (repeatable), every context (--all-contexts) or the current one,\n"
		"asked in parallel; --snapshot DIR reads DIR/NAME/nodes.json and DIR/NAME/pods.json\n"
		"(kubectl get nodes -o json, kubectl get pods -A -o json) per cluster NAME instead.\n"
		"TYPE/NAME is read from the first --context (else the current one) and its own pods\n"
		"are not counted. Exit 0 when it fits somewhere, 6 when every cluster said no or no?,\n"
		"7 when none fits and one could not be evaluated.\n",
	.flags = flags,
	.run = run,
	.wide_output = 1,
};
