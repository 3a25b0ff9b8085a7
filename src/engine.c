/* wmap: the per-thread engine: which compiled jq program serves which definition.
 *
 * A server compiles every definition into one program at start-up (wmap_engine_prepare);
 * a command line that reads one object compiles only that object's definition, and only
 * when the definition has an expression that is not a plain path. Either way no expression
 * is ever compiled twice by one engine. */
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "jq.h"
#include "jqnative.h"

typedef struct binding {
	const wmap_definition *def;
	wmap_jq *prog; /* shared by the definitions compiled together */
	size_t base;   /* index of the definition's first expression in prog */
} binding;

struct wmap_engine {
	const wmap_registry *reg;
	size_t n_progs;
	wmap_jq **progs;
	size_t n_bind, cap_bind;
	binding *bind;
	unsigned compiles;
};

int wmap_engine_new(wmap_engine **out, const wmap_registry *reg, wmap_error *err)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	(*out)->reg = reg;
	return 0;
}

void wmap_engine_free(wmap_engine *eng)
{
	if (!eng)
		return;
	for (size_t i = 0; i < eng->n_progs; i++)
		wmap__jq_free(eng->progs[i]);
	free(eng->progs);
	free(eng->bind);
	free(eng);
}

unsigned wmap_engine_compiles(const wmap_engine *eng)
{
	return eng->compiles;
}

const wmap_registry *wmap_engine_registry(const wmap_engine *eng)
{
	return eng->reg;
}

static const binding *find_binding(const wmap_engine *eng, const wmap_definition *def)
{
	for (size_t i = 0; i < eng->n_bind; i++)
		if (eng->bind[i].def == def)
			return &eng->bind[i];
	return NULL;
}

/* Compiles defs[0..n) into one program and binds each of them to it. */
static int compile_set(wmap_engine *eng, const wmap_definition *const *defs, size_t n,
		       wmap_error *err)
{
	size_t total = 0, at = 0;
	char **texts = NULL;
	wmap_jq *prog = NULL;
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		total += defs[i]->n_jq;
	if (total > 0) {
		texts = malloc(total * sizeof(*texts));
		if (!texts)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < defs[i]->n_jq; j++)
				texts[at++] = defs[i]->jq_texts[j];
		eng->compiles++;
		rc = wmap__jq_compile(&prog, texts, total, err);
		free(texts);
		if (rc)
			return rc;
		wmap_jq **np = realloc(eng->progs, (eng->n_progs + 1) * sizeof(*np));
		if (!np) {
			wmap__jq_free(prog);
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		}
		eng->progs = np;
		eng->progs[eng->n_progs++] = prog;
	}
	if (eng->n_bind + n > eng->cap_bind) {
		size_t cap = (eng->n_bind + n) * 2;
		binding *nb = realloc(eng->bind, cap * sizeof(*nb));
		if (!nb)
			return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
		eng->bind = nb;
		eng->cap_bind = cap;
	}
	at = 0;
	for (size_t i = 0; i < n; i++) {
		eng->bind[eng->n_bind++] = (binding){ defs[i], prog, at };
		at += defs[i]->n_jq;
	}
	return 0;
}

int wmap_engine_prepare(wmap_engine *eng, wmap_error *err)
{
	size_t n = eng->reg ? wmap_registry_count(eng->reg) : 0, k = 0;
	const wmap_definition **defs;
	int rc;

	if (n == 0)
		return 0;
	defs = malloc(n * sizeof(*defs));
	if (!defs)
		return wmap_error_set(err, WMAP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const wmap_definition *d = wmap_registry_get(eng->reg, i);
		if (!find_binding(eng, d))
			defs[k++] = d;
	}
	rc = k ? compile_set(eng, defs, k, err) : 0;
	free(defs);
	return rc;
}

static int bind_one(const binding **out, wmap_engine *eng, const wmap_definition *def,
		    wmap_error *err)
{
	*out = find_binding(eng, def);
	if (*out)
		return 0;
	int rc = compile_set(eng, &def, 1, err);
	if (rc) {
		wmap_error_prefix(err, "%s", def->source ? def->source : def->name);
		return rc;
	}
	*out = find_binding(eng, def);
	return 0;
}

int wmap__eval(wmap_results *out, wmap_engine *eng, const wmap_definition *def,
	       const wmap_expr *e, wmap_input *in, int want_pointers, wmap_error *err)
{
	const binding *b;
	int rc;

	if (e->path)
		rc = want_pointers == 1 ? wmap__path_locate(e->path, in->object, out, err)
					: wmap__path_values(e->path, in->object, out, err);
	else if (e->jn)
		rc = want_pointers == 1 ? wmap__jn_eval(e->jn, in->object, out, err)
		     : want_pointers    ? wmap__jn_eval_numbers(e->jn, in->object, in->memo, out, err)
					: wmap__jn_eval_values(e->jn, in->object, out, err);
	else if ((rc = bind_one(&b, eng, def, err)))
		return rc;
	else if (want_pointers == 1 && e->jq_path_slot >= 0) {
		rc = wmap__jq_run(b->prog, b->base + (size_t)e->jq_path_slot, in, 1, out, err);
		if (rc == WMAP_EEVAL) {
			/* Not a path expression (a projection such as {requests: .x}): read the
			 * values; their location stays unknown and nothing will be written there. */
			wmap__results_clear(out);
			rc = wmap__jq_run(b->prog, b->base + (size_t)e->jq_slot, in, 0, out, err);
		}
	} else {
		rc = wmap__jq_run(b->prog, b->base + (size_t)e->jq_slot, in, 0, out, err);
	}
	if (rc)
		wmap__results_clear(out); /* no partial results: callers return on an error */
	if (rc && rc != WMAP_ENOMEM) {
		char msg[WMAP_ERROR_MAX];
		memcpy(msg, err->message, sizeof(msg));
		wmap_error_set(err, rc, "%s: %s: jq expression \"%.200s\": %.1000s", def->source,
			       e->where, e->text, msg);
	}
	return rc;
}
