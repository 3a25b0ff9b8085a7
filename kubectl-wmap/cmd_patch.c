/* kubectl-wmap patch TYPE/NAME: changes every pod template of a live workload (or of one
 * --component) in one guarded JSON Patch.
 *
 * The locations come from the definition through the core (template metadata and spec,
 * pod spec with its metadata path, or the fields of a fragmented pod spec), and the patch
 * from src/patch.c's builder, so it always applies: missing maps are created whole,
 * existing maps get one `add` per key, lists are appended to. --policy runs the webhook's
 * policy code (wmap_admission_mutate) first; the flags then apply on top of its result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "wmap/admission.h"
#include "wmap/patch.h"
#include "wmap/pod_target.h"
#include "wmap/policy.h"

#define MAX_EDITS CLI_MAX_VALUES

static const cli_flag flags[] = {
	{ "label", NULL, 0, "KEY=VALUE|KEY-", "set (or with KEY- remove) a pod template label (repeatable)" },
	{ "annotation", NULL, 0, "KEY=VALUE|KEY-", "set (or remove) a pod template annotation (repeatable)" },
	{ "scheduler-name", NULL, 0, "NAME", "set spec.schedulerName of every pod template" },
	{ "priority-class", NULL, 0, "NAME", "set spec.priorityClassName of every pod template" },
	{ "node-selector", NULL, 0, "KEY=VALUE", "add a nodeSelector entry (repeatable)" },
	{ "toleration", NULL, 0, "KEY[=VALUE]:EFFECT", "add a toleration (repeatable)" },
	{ "policy", NULL, 0, "FILE|DIR",
	  "apply the WorkloadPolicy documents of FILE or DIR (repeatable; as the webhook does)" },
	{ "component", NULL, 0, "NAME", "only the pod templates of this component" },
	{ "dry-run", NULL, 0, "none|client|server", "client: send nothing; server: ?dryRun=All" },
	{ "diff", NULL, 0, NULL, "print a unified diff of the object before and after" },
	{ NULL, NULL, 0, NULL, NULL },
};

typedef struct edit {
	const char *flag; /* "label", "annotation", ... */
	char key[320];
	char value[320];
	int remove;
	json_t *toleration; /* for --toleration */
} edit;

typedef struct patch_args {
	size_t n;
	edit *edits;
	const char *component;
	wmap_policy_set *policies;
	size_t templates; /* pod templates written, for the message */
} patch_args;

/* ---- the flags --------------------------------------------------------------------- */

static int parse_kv(edit *e, const char *v, int removable)
{
	const char *eq = strchr(v, '=');
	size_t len = strlen(v);

	if (removable && !eq && len > 1 && v[len - 1] == '-') {
		snprintf(e->key, sizeof(e->key), "%.*s", (int)(len - 1), v);
		e->remove = 1;
		return wmap_label_key_valid(e->key) ? 0 : -1;
	}
	if (!eq || eq == v)
		return -1;
	snprintf(e->key, sizeof(e->key), "%.*s", (int)(eq - v), v);
	snprintf(e->value, sizeof(e->value), "%s", eq + 1);
	return wmap_label_key_valid(e->key) ? 0 : -1;
}

/* key[=value]:Effect, as `kubectl taint` writes taints. */
static json_t *parse_toleration(const char *v)
{
	const char *colon = strrchr(v, ':'), *eq = strchr(v, '=');
	char key[320], value[320] = "", effect[64];

	if (!colon || colon == v || !colon[1])
		return NULL;
	if (eq && eq > colon)
		eq = NULL;
	snprintf(key, sizeof(key), "%.*s", (int)((eq ? eq : colon) - v), v);
	if (eq)
		snprintf(value, sizeof(value), "%.*s", (int)(colon - eq - 1), eq + 1);
	snprintf(effect, sizeof(effect), "%s", colon + 1);
	if (strcmp(effect, "NoSchedule") != 0 && strcmp(effect, "PreferNoSchedule") != 0 &&
	    strcmp(effect, "NoExecute") != 0)
		return NULL;
	if (!key[0] || !wmap_label_key_valid(key))
		return NULL;
	if (eq)
		return json_pack("{s:s, s:s, s:s, s:s}", "key", key, "operator", "Equal", "value",
				 value, "effect", effect);
	return json_pack("{s:s, s:s, s:s}", "key", key, "operator", "Exists", "effect", effect);
}

static int parse_edits(patch_args *a, const cli_options *o)
{
	for (size_t i = 0; i < o->n_values; i++) {
		const char *f = o->values[i].name, *v = o->values[i].value;
		edit *e = &a->edits[a->n];

		if (strcmp(f, "label") && strcmp(f, "annotation") && strcmp(f, "scheduler-name") &&
		    strcmp(f, "priority-class") && strcmp(f, "node-selector") && strcmp(f, "toleration"))
			continue;
		memset(e, 0, sizeof(*e));
		e->flag = f;
		if (strcmp(f, "label") == 0 || strcmp(f, "annotation") == 0) {
			if (parse_kv(e, v, 1) != 0)
				return cli_usage_error(o, &cli_cmd_patch, "--%s \"%s\": use KEY=VALUE or KEY- "
									  "with a valid key",
						       f, v);
			if (strcmp(f, "label") == 0 && !e->remove && !wmap_label_value_valid(e->value))
				return cli_usage_error(o, &cli_cmd_patch, "--label \"%s\": \"%s\" is not a "
									  "valid label value (63 characters of [A-Za-z0-9_.-], "
									  "alphanumeric at both ends)",
						       v, e->value);
		} else if (strcmp(f, "node-selector") == 0) {
			if (parse_kv(e, v, 0) != 0)
				return cli_usage_error(o, &cli_cmd_patch, "--node-selector \"%s\": use KEY=VALUE", v);
		} else if (strcmp(f, "toleration") == 0) {
			if ((e->toleration = parse_toleration(v)) == NULL)
				return cli_usage_error(o, &cli_cmd_patch, "--toleration \"%s\": use "
									  "KEY[=VALUE]:EFFECT with EFFECT NoSchedule, "
									  "PreferNoSchedule or NoExecute",
						       v);
		} else {
			if (!v[0])
				return cli_usage_error(o, &cli_cmd_patch, "--%s needs a value", f);
			snprintf(e->value, sizeof(e->value), "%s", v);
		}
		/* Setting and removing one key in one call is a contradiction, not an order. */
		for (size_t k = 0; k < a->n; k++)
			if (a->edits[k].flag == f && strcmp(a->edits[k].key, e->key) == 0 && e->key[0] &&
			    a->edits[k].remove != e->remove)
				return cli_usage_error(o, &cli_cmd_patch, "--%s %s is both set and removed",
						       f, e->key);
		a->n++;
	}
	return 0;
}

/* ---- building the patch ------------------------------------------------------------ */

static int put_map(wmap_patch *pb, json_t *removes, const json_t *doc, const char *map,
		   const edit *e, wmap_error *err)
{
	char *ptr;
	int rc = 0;

	if (!map)
		return 0;
	if (!e->remove)
		return wmap_patch_set(pb, map, e->key, json_string(e->value), WMAP_PATCH_OVERRIDE, NULL, err);
	if ((ptr = wmap_pointer_join(map, e->key)) == NULL)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	if (wmap_pointer_lookup(doc, ptr)) {
		size_t i;
		json_t *op;
		int dup = 0;

		json_array_foreach(removes, i, op)
			dup |= strcmp(json_string_value(json_object_get(op, "path")), ptr) == 0;
		if (!dup)
			rc = json_array_append_new(removes, json_pack("{s:s, s:s}", "op", "remove", "path", ptr))
				     ? wmap_error_set(err, WMAP_ENOMEM, "out of memory")
				     : 0;
	}
	free(ptr);
	return rc;
}

static int apply_edit(wmap_patch *pb, json_t *removes, const json_t *doc, const wmap_pod_target *w,
		      const edit *e, live_ctx *lc, wmap_error *err)
{
	if (w->create_at && (strcmp(e->flag, "label") == 0 || strcmp(e->flag, "annotation") == 0)) {
		/* The webhook makes that entry (TrainJob's runtimePatches one) when the workload is
		 * created; a patch of a live workload does not add parts to it. */
		live_warn(lc, "component %s: its labels live in a list entry the workload does not have; "
			      "--%s not applied",
			  w->component, e->flag);
		return 0;
	}
	if (strcmp(e->flag, "label") == 0) {
		if (!w->labels)
			live_warn(lc, "component %s: the definition gives no labels location; --label not applied",
				  w->component);
		return put_map(pb, removes, doc, w->labels, e, err);
	}
	if (strcmp(e->flag, "annotation") == 0) {
		if (!w->annotations)
			live_warn(lc, "component %s: the definition gives no annotations location; "
				      "--annotation not applied",
				  w->component);
		return put_map(pb, removes, doc, w->annotations, e, err);
	}
	if (strcmp(e->flag, "scheduler-name") == 0 || strcmp(e->flag, "priority-class") == 0) {
		const char *ptr = e->flag[0] == 's' ? w->scheduler : w->priority;

		if (!ptr) {
			live_warn(lc, "component %s: no %s location; --%s not applied", w->component,
				  e->flag[0] == 's' ? "schedulerName" : "priorityClassName", e->flag);
			return 0;
		}
		return wmap_patch_set_at(pb, ptr, json_string(e->value), WMAP_PATCH_OVERRIDE, NULL, err);
	}
	if (!w->spec) {
		live_warn(lc, "component %s: no pod spec location; --%s not applied", w->component, e->flag);
		return 0;
	}
	if (strcmp(e->flag, "node-selector") == 0) {
		char *ns = wmap_pointer_join(w->spec, "nodeSelector");
		int rc = ns ? wmap_patch_set(pb, ns, e->key, json_string(e->value), WMAP_PATCH_OVERRIDE,
					     NULL, err)
			    : wmap_error_set(err, WMAP_ENOMEM, "out of memory");

		free(ns);
		return rc;
	}
	{
		char *tp = wmap_pointer_join(w->spec, "tolerations");
		int rc = tp ? wmap_patch_append_unique(pb, tp, json_deep_copy(e->toleration), NULL, err)
			    : wmap_error_set(err, WMAP_ENOMEM, "out of memory");

		free(tp);
		return rc;
	}
}

/* The policy part: the webhook's code, with every policy taken as wanted on this update. */
static int policy_ops(json_t **out, live_ctx *lc, live_target *t, patch_args *a, wmap_error *err)
{
	wmap_admission_config cfg = { 0 };
	json_t *warnings = NULL;
	const char *reason = NULL;
	size_t i;
	json_t *w;
	int rc;

	cfg.scheduler = WMAP_GANG_NONE;
	cfg.policies = a->policies;
	rc = wmap_admission_mutate(out, &warnings, &reason, lc->eng, &cfg, t->object, "UPDATE",
				   lc->ns, err);
	json_array_foreach(warnings, i, w)
		live_warn(lc, "policy: %s", json_string_value(w));
	json_decref(warnings);
	return rc;
}

static int build(json_t **out, live_ctx *lc, live_target *t, void *arg)
{
	patch_args *a = arg;
	wmap_error err = { 0 };
	wmap_patch *pb = NULL;
	json_t *removes = json_array(), *pops = NULL, *doc = NULL;
	const wmap_workload *w = t->w;
	int rc = 0, found = 0;

	*out = NULL;
	a->templates = 0;
	if (!removes)
		return cli_error("out of memory");
	if (a->policies) {
		if (policy_ops(&pops, lc, t, a, &err) != 0) {
			rc = live_fail(&err, CLI_EXIT_ERROR);
			goto cleanup;
		}
		/* The flags are computed on the object as the policies leave it. */
		doc = json_deep_copy(t->object);
		if (!doc || wmap_patch_apply(&doc, pops, &err) != 0) {
			rc = live_fail(&err, CLI_EXIT_ERROR);
			goto cleanup;
		}
	} else {
		doc = json_incref(t->object);
	}
	if (wmap_patch_new(&pb, doc, &err) != 0) {
		rc = live_fail(&err, CLI_EXIT_ERROR);
		goto cleanup;
	}
	for (size_t k = 0; k < w->n_nodes; k++) {
		const wmap_node *n = &w->nodes[k];

		if (a->component && strcmp(a->component, n->def->name) != 0)
			continue;
		found = 1;
		for (size_t i = 0; i < n->n_instances; i++) {
			wmap_pod_target loc;
			int ok;

			if (!n->instances[i].has_pod)
				continue;
			/* Out of memory fails the whole patch: a template silently left out would
			 * send a partial one. */
			if ((ok = wmap_pod_target_init(&loc, NULL, w, k, i)) < 0) {
				wmap_pod_target_clear(&loc);
				rc = cli_error("out of memory");
				goto cleanup;
			}
			if (ok == 0) {
				wmap_pod_target_clear(&loc);
				continue;
			}
			a->templates++;
			for (size_t e = 0; e < a->n && rc == 0; e++)
				if (apply_edit(pb, removes, doc, &loc, &a->edits[e], lc, &err) != 0)
					rc = live_fail(&err, CLI_EXIT_ERROR);
			wmap_pod_target_clear(&loc);
			if (rc)
				goto cleanup;
		}
	}
	if (a->component && !found) {
		fprintf(stderr, "error: definition %s has no component \"%s\"\n", w->definition->name,
			a->component);
		rc = CLI_EXIT_USAGE;
		goto cleanup;
	}
	if ((*out = pops ? json_deep_copy(pops) : json_array()) == NULL ||
	    json_array_extend(*out, (json_t *)wmap_patch_ops(pb)) != 0 || json_array_extend(*out, removes) != 0)
		rc = cli_error("out of memory");
cleanup:
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	wmap_patch_free(pb);
	json_decref(doc);
	json_decref(pops);
	json_decref(removes);
	return rc;
}

static int run(const cli_options *o)
{
	char type[256], name[256];
	edit edits[MAX_EDITS];
	patch_args a = { 0 };
	json_t *result = NULL, *before = NULL;
	const char *policy = cli_options_get(o, "policy");
	int has_name, rc;
	size_t n_ops = 0;
	live_dry dry;
	live_ctx lc;
	live_target t;

	memset(&lc, 0, sizeof(lc));
	memset(&t, 0, sizeof(t));
	a.edits = edits;
	a.component = cli_options_get(o, "component");
	if ((rc = live_dry_run(&dry, o, &cli_cmd_patch)) != 0 ||
	    (rc = live_split_target(type, sizeof(type), name, sizeof(name), &has_name, o,
				    &cli_cmd_patch, 1)) != 0 ||
	    (rc = parse_edits(&a, o)) != 0)
		goto done;
	if (a.n == 0 && !policy) {
		rc = cli_usage_error(o, &cli_cmd_patch, "nothing to change: give --label, --annotation, "
							"--scheduler-name, --priority-class, --node-selector, --toleration "
							"or --policy");
		goto done;
	}
	if (policy) {
		wmap_error err = { 0 };

		if (cli_policy_load(&a.policies, o, &err) != 0) {
			rc = live_fail(&err, CLI_EXIT_ERROR);
			goto done;
		}
		/* Asked for by name: every policy applies to this update (the webhook applies
		 * them on CREATE unless they list UPDATE). */
		for (size_t i = 0; i < a.policies->n; i++)
			a.policies->policies[i].operations |= WMAP_POLICY_OP_UPDATE | WMAP_POLICY_OP_CREATE;
	}
	if ((rc = live_open(&lc, o)) != 0 || (rc = live_target_load(&t, &lc, type, name)) != 0)
		goto done;
	if ((rc = live_patch_guarded(&result, &before, &n_ops, &lc, &t, build, &a, dry)) != 0)
		goto done;
	{
		char detail[96];

		snprintf(detail, sizeof(detail), "%zu pod template%s, %zu operation%s", a.templates,
			 a.templates == 1 ? "" : "s", n_ops, n_ops == 1 ? "" : "s");
		rc = live_patch_report(o, &t, before, result, n_ops, dry, "patched", detail);
	}
done:
	for (size_t i = 0; i < a.n; i++)
		json_decref(edits[i].toleration);
	wmap_policy_set_free(a.policies);
	json_decref(result);
	json_decref(before);
	live_target_clear(&t);
	live_close(&lc);
	return rc;
}

const cli_command cli_cmd_patch = {
	.name = "patch",
	.summary = "Change every pod template of a live workload (labels, scheduler, policy, ...)",
	.usage = "patch TYPE/NAME [--label K=V|K-]... [--annotation K=V|K-]... [--scheduler-name N] "
		 "[--priority-class N] [--node-selector K=V]... [--toleration K[=V]:EFFECT]... "
		 "[--policy FILE|DIR]... [--component NAME] [--dry-run=client|server] [--diff] [-o json|yaml]",
	.help =
		"Finds every pod template of the workload through its Karta definition (templates,\n"
		"pod specs, or the fields of a fragmented pod spec) and sends one JSON Patch guarded\n"
		"by a test of metadata.resourceVersion. If someone else changes the object between\n"
		"our read and our write, the object is read again and the patch recomputed (up to 5\n"
		"times), so their change is kept.\n"
		"\n"
		"Examples:\n"
		"  kubectl wmap patch jobset/train --label team=ml --annotation owner-\n"
		"  kubectl wmap patch raycluster demo --scheduler-name kai-scheduler --component worker\n"
		"  kubectl wmap patch pytorchjob/ft --toleration nvidia.com/gpu:NoSchedule --dry-run=server -o yaml\n"
		"  kubectl wmap patch jobset/train --policy team-a-policy.yaml --diff\n"
		"\n"
		"Exit codes: 0 ok, 1 error, 2 usage, 3 workload not found, 4 no definition covers the type.\n",
	.flags = flags,
	.run = run,
};
