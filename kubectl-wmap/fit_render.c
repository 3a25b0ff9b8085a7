/* kubectl-wmap fit: the verdicts printed (fit_cmd.h).
 *
 * The table has one row per context: the verdict, eligible/all nodes, free/needed per
 * resource the workload asks for (free on the eligible nodes), and why. -o wide adds, per
 * context, each component's line in the scheduler's own `<count> <reason>` wording and the
 * placement found. What the verdict does not check is printed under every table. -o json|yaml
 * print the object the table is made from. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit_cmd.h"
#include "render.h"
#include "wmap/fit.h"

#define FIT_RES_COLUMNS 6 /* beyond this many resources, one FREE/NEED column lists them */

static void upper(char *buf, size_t len, const char *s)
{
	size_t i = 0;
	for (; s[i] && i + 1 < len; i++)
		buf[i] = (char)toupper((unsigned char)s[i]);
	buf[i] = '\0';
}

static void append(char *buf, size_t len, const char *fmt, const char *a, const char *b, const char *c)
{
	size_t used = strlen(buf);
	if (used < len)
		snprintf(buf + used, len - used, fmt, a, b, c);
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static void header(FILE *out, const json_t *wl)
{
	char need[1024] = "", gangs[1024] = "";
	const char *k, *ns = str(wl, "namespace");
	json_t *v;
	size_t i;
	json_object_foreach(json_object_get(wl, "need"), k, v)
		append(need, sizeof(need), "%s%s %s", *need ? ", " : "", k, json_string_value(v));
	json_array_foreach(json_object_get(wl, "gangs"), i, v) {
		char min[32];
		snprintf(min, sizeof(min), "%lld", (long long)json_integer_value(json_object_get(v, "minMember")));
		append(gangs, sizeof(gangs), "%sgang %s (min %s)", *gangs ? ", " : "", str(v, "name"), min);
	}
	fprintf(out, "Workload %s/%s%s%s%s: %lld pods%s%s%s%s%s\n", str(wl, "kind"), str(wl, "name"), *ns ? " (" : "",
		ns, *ns ? ")" : "", (long long)json_integer_value(json_object_get(wl, "pods")),
		json_is_true(json_object_get(wl, "min")) ? " (gang minimum)" : "", *need ? " · " : "", need,
		*gangs ? " · " : "", gangs);
}

static int table(FILE *out, const json_t *wl, const json_t *contexts, wmap_error *err)
{
	const json_t *need = json_object_get(wl, "need");
	size_t n_res = json_object_size(need), cols;
	int per_res = n_res <= FIT_RES_COLUMNS;
	const char *cells[RENDER_TABLE_MAX_COLS], *k, *rk;
	char heads[FIT_RES_COLUMNS][128], vals[FIT_RES_COLUMNS][128], nodes[64], all_res[2048];
	render_table *t = NULL;
	json_t *c, *rv;
	int rc;

	cols = 4 + (per_res ? n_res : 1);
	if ((rc = render_table_new(&t, cols, err)))
		return rc;
	size_t j = 0;
	cells[j++] = "CONTEXT";
	cells[j++] = "FIT";
	cells[j++] = "NODES";
	if (per_res) {
		json_object_foreach((json_t *)need, rk, rv) {
			upper(heads[j - 3], sizeof(heads[0]), rk);
			cells[j] = heads[j - 3];
			j++;
		}
	} else {
		cells[j++] = "FREE/NEED";
	}
	cells[j++] = "WHY";
	rc = render_table_add(t, cells, err);
	json_object_foreach((json_t *)contexts, k, c) {
		const json_t *nd = json_object_get(c, "nodes"), *free_ = json_object_get(c, "free");
		int unknown = strcmp(str(c, "verdict"), "unknown") == 0;
		if (rc)
			break;
		j = 0;
		cells[j++] = k;
		cells[j++] = str(c, "verdict");
		if (unknown)
			snprintf(nodes, sizeof(nodes), "-");
		else
			snprintf(nodes, sizeof(nodes), "%lld/%lld", (long long)json_integer_value(json_object_get(nd, "eligible")),
				 (long long)json_integer_value(json_object_get(nd, "all")));
		cells[j++] = nodes;
		all_res[0] = '\0';
		size_t r = 0;
		json_object_foreach((json_t *)need, rk, rv) {
			const char *f = json_string_value(json_object_get(free_, rk));
			if (per_res) {
				if (unknown)
					snprintf(vals[r], sizeof(vals[r]), "-");
				else
					snprintf(vals[r], sizeof(vals[r]), "%s/%s", f ? f : "0", json_string_value(rv));
				cells[j++] = vals[r++];
			} else if (!unknown) {
				append(all_res, sizeof(all_res), "%s%s %s", *all_res ? ", " : "", rk, "");
				append(all_res, sizeof(all_res), "%s/%s%s", f ? f : "0", json_string_value(rv), "");
			}
		}
		if (!per_res)
			cells[j++] = unknown ? "-" : all_res;
		cells[j++] = unknown ? str(c, "error") : str(c, "why");
		rc = render_table_add(t, cells, err);
	}
	if (rc == 0)
		render_table_print(out, t);
	render_table_free(t);
	return rc;
}

/* -o wide: per context, each component's line and the placement. */
static void wide(FILE *out, const json_t *wl, const json_t *contexts)
{
	const char *k;
	json_t *c;
	json_object_foreach((json_t *)contexts, k, c) {
		size_t i;
		json_t *comp, *p;
		if (strcmp(str(c, "verdict"), "unknown") == 0)
			continue;
		fprintf(out, "\n%s:\n", k);
		json_array_foreach(json_object_get(c, "components"), i, comp) {
			const json_t *wc = json_array_get(json_object_get(wl, "components"), i);
			char per[1024] = "";
			const char *rk;
			json_t *rv;
			json_object_foreach(json_object_get(wc, "perPod"), rk, rv) {
				if (strcmp(json_string_value(rv), "0") != 0) /* what it does not ask for */
					append(per, sizeof(per), "%s%s %s", *per ? ", " : "", rk, json_string_value(rv));
			}
			fprintf(out, "  %s x%lld (%s each): room for %lld; %s\n", str(comp, "name"),
				(long long)json_integer_value(json_object_get(comp, "pods")), *per ? per : "nothing",
				(long long)json_integer_value(json_object_get(comp, "slots")), str(comp, "message"));
		}
		if (json_array_size(json_object_get(c, "placement")) > 0) {
			fprintf(out, "  placement:");
			json_array_foreach(json_object_get(c, "placement"), i, p)
				fprintf(out, "%s %s -> %s", i ? "," : "", str(p, "pod"), str(p, "node"));
			fprintf(out, "\n");
		}
	}
}

int fit_render(const cli_options *o, const json_t *workload, const json_t *contexts, wmap_error *err)
{
	char fits[2048] = "";
	const char *k;
	json_t *c;
	int rc;

	if (o->output != CLI_OUTPUT_TABLE) {
		json_t *doc = json_pack("{s:O, s:O, s:[]}", "workload", workload, "contexts", contexts, "notChecked");
		for (size_t i = 0; doc && wmap_fit_not_checked[i]; i++) {
			if (json_array_append_new(json_object_get(doc, "notChecked"), json_string(wmap_fit_not_checked[i]))) {
				json_decref(doc);
				doc = NULL;
			}
		}
		if (!doc)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		rc = render_value(stdout, doc, o->output, err);
		json_decref(doc);
		return rc;
	}
	header(stdout, workload);
	if ((rc = table(stdout, workload, contexts, err)))
		return rc;
	json_object_foreach((json_t *)contexts, k, c) {
		if (strcmp(str(c, "verdict"), "yes") == 0)
			append(fits, sizeof(fits), "%s%s%s", *fits ? ", " : "", k, "");
	}
	if (o->wide)
		wide(stdout, workload, contexts);
	printf("%s%s.\n", *fits ? "Fits: " : "Fits nowhere", fits);
	printf("Not checked:");
	for (size_t i = 0; wmap_fit_not_checked[i]; i++)
		printf("%s %s", i ? "," : "", wmap_fit_not_checked[i]);
	printf("; a snapshot, not a reservation.\n");
	return 0;
}
