/* The native jq subset against libjq itself: both engines must give the same outputs, or
 * both fail, for every expression of every shipped definition on every sample object, and
 * for a table of edge cases of jq's semantics. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../src/jq.h"
#include "../../src/jqnative.h"
#include "helpers.h"
#include "wmap/registry.h"

/* Outputs that came as plain numbers (wmap__jn_eval_numbers), over all comparisons. */
static size_t numbers_seen;

/* Compares the two engines on one expression and input; returns 1 when they agree. */
static int agree(const char *text, wmap_jq *q, size_t slot, const wmap_jn *jn, json_t *input,
		 const char *where)
{
	wmap_results a = {0}, b = {0};
	wmap_error ea = {0}, eb = {0};
	wmap_input in = {input, NULL, NULL};
	int ra = wmap__jq_run(q, slot, &in, 0, &a, &ea);
	int rb = wmap__jn_eval(jn, input, &b, &eb);
	int ok = (ra != 0) == (rb != 0);
	/* Values only (no pointers): single nodes are evaluated straight to their value there;
	 * the outputs and the error message must be those of the general evaluation. */
	wmap_results v = {0};
	wmap_error ev = {0};
	int rv = wmap__jn_eval_values(jn, input, &v, &ev);
	if (rv != rb || (rv && strcmp(ev.message, eb.message) != 0) || (!rv && v.n != b.n)) {
		cr_log_error("%s: %s\n  values only: rc %d, %zu outputs %s\n  with pointers: rc %d, %zu outputs %s",
			     where, text, rv, v.n, rv ? ev.message : "", rb, b.n, rb ? eb.message : "");
		ok = 0;
	}
	for (size_t i = 0; ok && !rv && i < v.n; i++)
		ok = json_equal(v.v[i].value ? v.v[i].value : json_null(), b.v[i].value ? b.v[i].value : json_null());
	wmap__results_clear(&v);
	/* Numbers allowed (scale values): an integer may come as a plain number; the outputs,
	 * their kinds and the errors must still be the general evaluation's. */
	wmap_results nr = {0};
	wmap_error en = {0};
	int rn = wmap__jn_eval_numbers(jn, input, NULL, &nr, &en);
	if (rn != rb || (rn && strcmp(en.message, eb.message) != 0) || (!rn && nr.n != b.n)) {
		cr_log_error("%s: %s\n  numbers: rc %d, %zu outputs %s\n  with pointers: rc %d, %zu outputs %s",
			     where, text, rn, nr.n, rn ? en.message : "", rb, b.n, rb ? eb.message : "");
		ok = 0;
	}
	for (size_t i = 0; ok && !rn && i < nr.n; i++) {
		json_t *want = b.v[i].value ? b.v[i].value : json_null();
		if (nr.v[i].is_num) {
			ok = !nr.v[i].value && json_is_integer(want) && json_integer_value(want) == nr.v[i].num;
			numbers_seen++;
		} else {
			ok = json_equal(nr.v[i].value ? nr.v[i].value : json_null(), want);
		}
		if (!ok)
			cr_log_error("%s: %s: numbers output %zu differs", where, text, i);
	}
	wmap__results_clear(&nr);
	if (ok && ra == 0) {
		ok = a.n == b.n;
		for (size_t i = 0; ok && i < a.n; i++)
			ok = json_equal(a.v[i].value ? a.v[i].value : json_null(),
					b.v[i].value ? b.v[i].value : json_null());
	}
	if (!ok) {
		char *sa = NULL, *sb = NULL;
		if (!ra && a.n)
			sa = json_dumps(a.v[0].value, JSON_ENCODE_ANY | JSON_COMPACT);
		if (!rb && b.n)
			sb = json_dumps(b.v[0].value, JSON_ENCODE_ANY | JSON_COMPACT);
		cr_log_error("%s: %s\n  libjq:  rc %d, %zu outputs, first %s %s\n  native: rc %d, %zu outputs, first %s %s",
			     where, text, ra, a.n, sa ? sa : "-", ra ? ea.message : "", rb, b.n,
			     sb ? sb : "-", rb ? eb.message : "");
		free(sa);
		free(sb);
	}
	wmap__input_release(&in);
	wmap__results_clear(&a);
	wmap__results_clear(&b);
	return ok;
}

Test(jqnative, agrees_with_libjq_on_edge_cases)
{
	static const char *const exprs[] = {
		".a // 1", ".a // .b // \"x\"", "(.a, .b) // 3", ".x[] // 9", "[.[]?]", ".a.b.c",
		"[(1,2) + (10,20)]", "{a: (1,2), b: (3,4)}", "[(true,false) and (true,false)]",
		"[(true,false) or (true,false)]", ".a and .b", "[.arr[] | select(. > 1)]",
		"[.arr[] | . * 2]", ".arr | length", ".s | length", ".o | length", "null | length",
		"true | length", ".arr | map(. + 1)", ".o | to_entries", ".o | keys", ".o | keys_unsorted",
		".o | with_entries(.value += 0)", ".o | with_entries(select(.value > 1))",
		"[.arr[] | tostring]", ".s | ascii_downcase", ".s | ascii_upcase", "\"12\" | tonumber",
		"\"x\" | tonumber", ".n | tostring", ".arr | min", ".arr | max", "[] | min", ".arr | add",
		"[] | add", ".o | add", ".s | startswith(\"Ab\")", ".s | endswith(\"c\")",
		".s | ltrimstr(\"Ab\")", ".s | rtrimstr(\"c\")", ".n | startswith(\"a\")",
		".s | split(\"b\")", ".arr | join(\"-\")", "[.o[] ] | join(\",\")", "[[1]] | join(\",\")",
		".arr | index(2)", ".arr | index([2, 3])", ".s | index(\"b\")", "null | index(\"a\")",
		".arr | rindex(2)", ".arr | indices(2)", ".o | has(\"a\")", ".arr | has(1)",
		"\"a\" | in({\"a\": 1})", ".arr | contains([2])", ".o | contains({a: 1})",
		".s | contains(\"b\")", "[.arr[] | if . > 1 then \"big\" elif . == 1 then \"one\" else \"small\" end]",
		"if .a then 1 end", ". as $x | $x.n", ".arr[] as $v | $v * 10", "[.arr[] | . as $v | {v: $v}]",
		"first(.arr[])", "first(empty)", "last(.arr[])", "isempty(.arr[])", "isempty(empty)",
		"[limit(2; .arr[])]", "any", "[] | all", ".arr | any(. > 2)", ".arr | all(. > 0)",
		"any(.arr[]; . == 3)", "all(.arr[]; . < 3)", ".n | IN(1, 5)", "IN(.arr[]; 3, 4)",
		".arr | first", ".arr | last", ".arr | reverse", "[3,1,2] | sort", "[1,1,2] | unique",
		"try error(\"x\") catch .", "try (1, error(\"x\"), 3)", "[.[] | numbers]", "[.[] | strings]",
		"[.[] | objects]", "[.[] | arrays]", "[.[] | iterables]", "[.[] | scalars]", "[.[] | values]",
		"[.arr[] | -.]", ".n % 2", "-5 % 2", "5 / 2", "\"ab\" * 2", "\"ab\" * 0", ".n / 0",
		"{a: {b: 1}} * {a: {c: 2}}", "\"a,b\" / \",\"", "[1,2,2] - [2]", "null + 1", "{} + {a: 1}",
		"[1] + [2]", "\"a\" + 1", "1 - \"a\"", "[1, \"a\", null, true, [1], {}] | sort",
		"[{} < [], [] < \"\", \"\" < 0, 0 < true, true > false, false > null]", "1 == 1.0",
		"{a: 1, b: 2} == {b: 2, a: 1}", ".o | getpath([\"a\"])", "getpath([\"x\", \"y\"])",
		".s | getpath([\"a\"])", "{\"k\": .n, $__none: 1}", "{n}", "{\"s\"}", "{(.s): 1}",
		".arr | .[1]", ".arr | .[-1]", ".arr | .[1.5]", ".arr[10]", ".o[\"a\"]", ".o.a?",
		".s.a?", ".s.a", ".arr[\"x\"]", ".n[]?", ".n[]", "[.arr[]?]", "(.a // empty) | length",
		".o | min_by(.)", "[{a: 2}, {a: 1}] | min_by(.a)", "[{a: 2}, {a: 1}] | max_by(.a)",
		".arr | .[0] as $first | map(. - $first)", "[.arr[] | select(. != 2)] | length",
		"(.arr | length) as $n | [range0]", "\"\\n\\t\\\"\" | length", ".o | tojson | fromjson",
		"{a: 1} | .a += 1", ".arr | floor", "3.7 | floor", "3.2 | ceil", "9 | sqrt", "-3 | fabs",
		"[.arr[] | type]", "not", "[true, false, null, 1] | map(not)", ".arr | utf8bytelength",
		"\"héllo\" | length", "\"héllo\" | utf8bytelength", "\"abc\" | split(\"\")",
		"3.5 | round", "-2.5 | round", ".arr | inside([1, 2, 3, 4])", ".o | inside({a: 1})",
		"try (\"m\" | error) catch .", "try ({a: 1} | error) catch .", "try error([1, {b: null}]) catch .[1]", "try error(null) catch .", "[.[] | nulls]",
		"[.[] | booleans]", ".o | to_entries | from_entries", "[.arr[] | tojson]", ".o | tojson",
		"last(empty)", "[.arr[] | IN(2, 3)]", "\"abc\" / \"\"", "\"\" / \",\"", ".s | indices(\"b\")", "[limit(0; .arr[])]",
		"[.[] | strings | ascii_downcase]", "\"1.5\" | tonumber", "\"[1]\" | fromjson",
		".o | keys_unsorted | length", "[.o | to_entries[] | .key] | join(\"+\")",
		/* single nodes (one output), evaluated straight to their value without pointers */
		"[.n, .s] | max", "[.s, .n, .z] | min", "[] | max", "[.arr[], 0] | max", "[(.a // 0), (.n // 1)] | max",
		"([([(.a // 0), (.n // 0)] | max), (.m // 2147483647)] | min) * (.h // 1)",
		"if .t == true then 0 else [.n, 1] | min end", "{(.n): 1}", "{a: .n, b: .s.x}", "-(.s)",
		"-(.n + 1)", ".s.a + 1", ".arr[.n - 4]", ".o[.s]", ".n as $v | [$v, 2] | max", "(.n > 2) and (.s | length > 2)",
		".z or (.n < 0)", "([.n, .n] | max) as $m | $m * 2", "[.n, .o] | max | length", ".s | length + .n",
		"[.arr[] | [., 2] | max]", ".n - (.s | length)", "[.n, (.arr | length)] | min | tostring",
		"{a: (.n | type), b: (.arr | tojson)} | .b", ".t and .s.x", "[.n, .n] | .[0] + .[1]",
		".n * 3 - 20", "[.n * 1000000000, 3000000000 * 3000000, 2999999999 * 3000000, -3000000000 * 3000000] | map(. + 0)",
		"[1 + 4503599627370496 * 2, .n - 9000000000000001, .n + 8999999999999995]", "[.n, 1.5] | .[0] * .[1]",
		".n * 2", "if .t then .n * 2 else 1 end", "if .z then 1 else .n - 7 end", "[.n * 2, 3] | max",
		"[.n * 2, 10] | max", "[10, .n * 2] | min", "[.n * 2, \"a\"] | min", "[.n * 2, null] | max",
		"[.n * 1, 5.0] | max", "[5.0, .n * 1] | max", "[.n * 1, 5.5] | min", "[.n * .n, .n + 20] | max",
		".arr[] | . * 2", ".arr[] | [. * 3, 4] | min", ".n * 3000000000000000", ".n / 2", ".s * 2",
		".o * 2", "[.arr[] * 2] | max", ".n + 1.5", "[.n * 2, [.n]] | max", "[[.n], .n * 2] | min",
		/* fast nodes (borrowed values) and where they give up to the general evaluation */
		".z // .t // 3", ".z // false", "false // .z", ".n as $v | $v * 2", "(.n // 0) as $p | [$p, (.m // $p)] | min",
		"(.n * 2) | . + 1", ".n | . - 2", "if .s == \"Abc\" then .n + 1 else 0 end", ".t == true", ".z == null",
		".arr == [1, 2, 3]", ".o == {a: 1, b: 2}", "[.arr, 1] | max", "[.o, .n] | min", "[.n, .o] | max",
		".arr[] | (.x // 1)", ".s.x // 1", ".n * 1.5", ".n - 2.5 < 3", ".arr[]? | (.n // 1) * 2",
		".o[]? | if . > 1 then . * 10 else . end", ".arr[] | [., (.n? // 2)] | max", ".s[]? | . + 1",
		".n[]? | . + 1", ".n[] | . + 1", "[.arr[]? | . - 1]", ".arr[] | $__loc__ // 1", ". as $r | .arr[]? | $r.n * .",
		"if .z then 1 elif .t then .n * 1000000000000000 * 100 else 2 end", ".n * 9000000000000000",
		"[(.n * 2), (.n + .n)] | max", "[(.s // \"x\"), .n] | min", ".n < .s", ".s > .n and .t",
		"{a: [{n: 1}, {n: 2, m: 5}, {m: false}]} | .a[]? | (.n // 0) * (.m // 1)",
		"{a: [{n: 1}, 3]} | .a[]? | (.n // 0) + 1", "{a: [{n: 1}, {n: \"x\"}]} | .a[] | .n * 2",
		"{a: {b: [{n: 4}, {}]}} | .a.b[] | if .n == null then -1 else [.n, 2] | min end",
		"{a: []} | .a[]? | .n + 1", "{a: null} | .a[]? | .n + 1", "{a: 1} | .a[]? | .n + 1",
	};
	json_t *input = t_yaml("arr: [1, 2, 3]\ns: Abc\nn: 5\no: {a: 1, b: 2}\nt: true\nz: null\n");
	size_t n = sizeof(exprs) / sizeof(exprs[0]), native = 0, checked = 0;
	for (size_t i = 0; i < n; i++) {
		wmap_jn *jn = wmap__jn_parse(exprs[i]);
		wmap_jq *q = NULL;
		wmap_error err = {0};
		char *one[1] = {(char *)exprs[i]};
		if (!jn)
			continue; /* outside the subset: libjq evaluates it, nothing to compare */
		native++;
		if (wmap__jq_compile(&q, one, 1, &err) != 0) {
			cr_expect_fail("native parser accepted what libjq refuses: %s (%s)", exprs[i], err.message);
			wmap__jn_free(jn);
			continue;
		}
		cr_expect(agree(exprs[i], q, 0, jn, input, "edge case"), "engines disagree on %s", exprs[i]);
		checked++;
		wmap__jq_free(q);
		wmap__jn_free(jn);
	}
	cr_expect_gt(native, n * 8 / 10, "most cases are in the subset (%zu of %zu)", native, n);
	cr_expect_gt(numbers_seen, 10, "plain numbers were given (%zu)", numbers_seen);
	json_decref(input);
}

Test(jqnative, agrees_with_libjq_on_every_catalog_expression_and_fixture)
{
	wmap_registry *reg;
	wmap_error err = {0};
	size_t compared = 0;
	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0, "%s", err.message);
	for (size_t d = 0; d < wmap_registry_count(reg); d++) {
		const wmap_definition *def = wmap_registry_get(reg, d);
		char **texts = calloc(def->n_exprs + 1, sizeof(*texts));
		const wmap_expr **native = calloc(def->n_exprs + 1, sizeof(*native));
		size_t k = 0;
		for (size_t i = 0; i < def->n_exprs; i++)
			if (def->exprs[i]->jn) {
				native[k] = def->exprs[i];
				texts[k++] = def->exprs[i]->text;
			}
		wmap_jq *q = NULL;
		if (k && wmap__jq_compile(&q, texts, k, &err) != 0) {
			cr_expect_fail("%s: libjq refuses what the native parser took: %s", def->name, err.message);
			k = 0;
		}
		char pattern[512];
		size_t nf;
		snprintf(pattern, sizeof(pattern), "tests/fixtures/%s/*.yaml", def->name);
		char **files = t_glob(pattern, &nf);
		for (size_t f = 0; f < nf; f++) {
			char msg[WMAP_ERROR_MAX];
			json_t *obj = t_load_file(files[f], msg, sizeof(msg));
			if (!obj)
				continue;
			for (size_t i = 0; i < k; i++) {
				cr_expect(agree(native[i]->text, q, i, native[i]->jn, obj, files[f]),
					  "%s: %s: engines disagree", files[f], native[i]->where);
				compared++;
			}
			json_decref(obj);
		}
		t_free_list(files, nf);
		wmap__jq_free(q);
		free(texts);
		free(native);
	}
	cr_expect_gt(compared, 500);
	wmap_registry_free(reg);
}

/* Runs jn on input (numbers allowed) into out, with memo or without; the error text in msg. */
static int run_numbers(const wmap_jn *jn, json_t *input, wmap_jn_memo *memo, wmap_results *out,
		       char *msg, size_t cap)
{
	wmap_error e = {0};
	int rc = wmap__jn_eval_numbers(jn, input, memo, out, &e);
	snprintf(msg, cap, "%s", rc ? e.message : "");
	return rc;
}

/* Whether two runs gave the same outputs (plain numbers and values alike) or the same error. */
static int same_runs(int ra, const wmap_results *a, const char *ma, int rb, const wmap_results *b,
		     const char *mb)
{
	if (ra != rb || strcmp(ma, mb) != 0 || (!ra && a->n != b->n))
		return 0;
	for (size_t i = 0; !ra && i < a->n; i++) {
		const wmap_result *x = &a->v[i], *y = &b->v[i];
		if (x->is_num != y->is_num || (x->is_num && x->num != y->num))
			return 0;
		if (!x->is_num && !json_equal(x->value ? x->value : json_null(), y->value ? y->value : json_null()))
			return 0;
	}
	return 1;
}

/* Runs the n expressions one after the other with one memo, as resolve_scale does, and
 * each on its own without; every run must agree. Returns how many element rows the memo
 * was made with (0 when unused). */
static size_t shared_agree(wmap_jn *const *shared, wmap_jn *const *alone, size_t n, json_t *input,
			   const char *where)
{
	wmap_jn_memo memo = {0};
	size_t rows = 0;
	for (size_t i = 0; i < n; i++) {
		if (!shared[i])
			continue;
		wmap_results a = {0}, b = {0};
		char ma[WMAP_ERROR_MAX], mb[WMAP_ERROR_MAX];
		int ra = run_numbers(shared[i], input, &memo, &a, ma, sizeof(ma));
		int rb = run_numbers(alone[i], input, NULL, &b, mb, sizeof(mb));
		cr_expect(same_runs(ra, &a, ma, rb, &b, mb),
			  "%s: expression %zu: with the memo rc %d (%zu outputs) %s, alone rc %d (%zu outputs) %s",
			  where, i, ra, a.n, ma, rb, b.n, mb);
		wmap__results_clear(&a);
		wmap__results_clear(&b);
	}
	rows = memo.cells ? memo.n_rows : 0;
	wmap__jn_memo_release(&memo);
	return rows;
}

Test(jqnative, shared_reads_give_what_separate_runs_give)
{
	/* the scale expressions' shapes, with members read on the element, on a member's value
	 * (after a pipe: another object's key of the same name) and under a binding */
	static const char *const texts[] = {
		".g[]? | if .s == true then 0 else ([([(.r // 0), (.mn // 0)] | max), (.mx // 9)] | min) * (.h // 1) end",
		".g[]? | (.mn // 0) * (.h // 1)",
		".g[]? | .sub | (.h // 5) + (.mn // 0)",
		".g[]? | .h as $x | (.h // 0) + ($x // 0) + (.mx // 0)",
	};
	static const char *const inputs[] = {
		"{\"g\": [{\"r\": 2, \"mn\": 1, \"mx\": 3, \"h\": 2, \"sub\": {\"h\": 7, \"mn\": 4}},"
		" {\"s\": true, \"h\": 4, \"sub\": {}}, {}, {\"h\": null, \"mn\": false}]}",
		"{\"g\": [{\"r\": \"x\", \"h\": 1}, {\"h\": 2.5}]}",     /* not integers: the general evaluation */
		"{\"g\": [{\"h\": 1}, 5, {\"h\": 2}]}",                 /* an element that is no object: an error */
		"{\"g\": [{\"h\": 1, \"sub\": 3}]}",                    /* a member's value that is no object */
		"{\"g\": []}", "{\"g\": null}", "{}", "{\"g\": {\"a\": {\"h\": 3}}}", /* no array */
	};
	const size_t n = sizeof(texts) / sizeof(texts[0]);
	wmap_jn *shared[4], *alone[4];
	for (size_t i = 0; i < n; i++) {
		shared[i] = wmap__jn_parse(texts[i]);
		alone[i] = wmap__jn_parse(texts[i]);
		cr_assert(shared[i] && alone[i], "%s", texts[i]);
	}
	wmap__jn_share_keys(shared, n);
	size_t used = 0;
	for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++) {
		json_error_t je;
		json_t *in = json_loads(inputs[k], 0, &je);
		cr_assert(in, "%s", je.text);
		used += shared_agree(shared, alone, n, in, inputs[k]) > 0;
		json_decref(in);
	}
	cr_expect_geq(used, 3, "the memo was made for %zu of the inputs", used);
	for (size_t i = 0; i < n; i++) {
		wmap__jn_free(shared[i]);
		wmap__jn_free(alone[i]);
	}
}

Test(jqnative, shared_scale_reads_agree_on_every_catalog_fixture)
{
	wmap_registry *reg;
	wmap_error err = {0};
	size_t runs = 0, with_memo = 0;
	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	cr_assert_eq(wmap_registry_add_catalog(reg, &err), 0, "%s", err.message);
	for (size_t d = 0; d < wmap_registry_count(reg); d++) {
		const wmap_definition *def = wmap_registry_get(reg, d);
		char pattern[512];
		size_t nf;
		snprintf(pattern, sizeof(pattern), "tests/fixtures/%s/*.yaml", def->name);
		char **files = t_glob(pattern, &nf);
		for (size_t c = 0; c < def->n_components; c++) {
			const wmap_component *comp = &def->components[c];
			const wmap_expr *e[3] = { comp->replicas_path, comp->min_replicas_path,
						  comp->max_replicas_path };
			wmap_jn *shared[3], *alone[3];
			for (int i = 0; i < 3; i++) {
				shared[i] = e[i] ? e[i]->jn : NULL; /* as loaded: keys shared */
				alone[i] = shared[i] ? wmap__jn_parse(e[i]->text) : NULL;
			}
			for (size_t f = 0; f < nf; f++) {
				char msg[WMAP_ERROR_MAX];
				json_t *obj = t_load_file(files[f], msg, sizeof(msg));
				if (!obj)
					continue;
				with_memo += shared_agree(shared, alone, 3, obj, files[f]) > 0;
				runs++;
				json_decref(obj);
			}
			for (int i = 0; i < 3; i++)
				wmap__jn_free(alone[i]);
		}
		t_free_list(files, nf);
	}
	cr_expect_gt(runs, 100);
	cr_expect_gt(with_memo, 5, "the memo served %zu of %zu runs", with_memo, runs);
	wmap_registry_free(reg);
}
