/* wmap_json_text: the same text as jansson's compact dump, for every fixture object and for
 * the values that need escapes, and nothing at all when it cannot be whole. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/json_text.h"

static void same_as_jansson(const json_t *v, const char *what)
{
	size_t n = 0;
	char *ours = wmap_json_text(v, &n);
	char *theirs = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	cr_assert_not_null(ours, "%s: no text", what);
	cr_assert_not_null(theirs);
	cr_expect_eq(n, strlen(ours), "%s: length", what);
	cr_expect_str_eq(ours, theirs, "%s", what);
	free(ours);
	free(theirs);
}

Test(json_text, every_fixture_object_as_jansson_writes_it)
{
	size_t n = 0;
	char **files = t_glob("tests/fixtures/*/*.yaml", &n);
	cr_assert_gt(n, 100, "the fixtures are read from the repository root");
	for (size_t i = 0; i < n; i++) {
		char err[512];
		json_t *obj = t_load_file(files[i], err, sizeof(err));
		if (!obj)
			continue;   /* fixtures/bad holds unreadable files on purpose */
		same_as_jansson(obj, files[i]);
		json_decref(obj);
	}
	t_free_list(files, n);
}

Test(json_text, escapes_scalars_and_order)
{
	json_t *v = json_pack("{s:s, s:s, s:i, s:I, s:f, s:f, s:f, s:b, s:n, s:[], s:{}, s:[s,i]}",
			      "quote\"back\\slash/", "tab\there\nnew\rret\b\f\x01\x1f end",
			      "utf8", "gr\xc3\xbc\xc3\x9f\xe2\x82\xac \xf0\x9f\x9a\x80", "int", -42,
			      "big", (json_int_t)9007199254740993LL, "real", 1.5, "tiny", 1e-300,
			      "whole", 3.0, "yes", 1, "none", "empty", "obj", "mixed", "a", 7);
	cr_assert_not_null(v);
	/* Insertion order, not sorted: "z" first. */
	json_t *order = json_pack("{s:i, s:i, s:i}", "z", 1, "a", 2, "m", 3);
	same_as_jansson(v, "escapes");
	same_as_jansson(order, "order");
	char *t = wmap_json_text(order, NULL);
	cr_expect_str_eq(t, "{\"z\":1,\"a\":2,\"m\":3}");
	free(t);
	/* A string with a NUL inside (json_stringn) keeps its whole length. */
	json_t *nul = json_stringn("a\0b", 3);
	same_as_jansson(nul, "embedded NUL");
	t = wmap_json_text(nul, NULL);
	cr_expect_str_eq(t, "\"a\\u0000b\"");
	free(t);
	json_t *scalars[] = { json_true(), json_false(), json_null(), json_integer(0),
			      json_real(-0.25), json_string("") };
	for (size_t i = 0; i < sizeof(scalars) / sizeof(*scalars); i++) {
		same_as_jansson(scalars[i], "scalar");
		json_decref(scalars[i]);
	}
	json_decref(nul);
	json_decref(order);
	json_decref(v);
}

Test(json_text, refuses_what_it_cannot_write_whole)
{
	size_t n = 99;
	cr_expect_null(wmap_json_text(NULL, &n));
	cr_expect_eq(n, 0);
	/* Nesting past the cap: no text rather than a cut one. */
	json_t *deep = json_array(), *cur = deep;
	for (int i = 0; i < WMAP_JSON_TEXT_MAX_DEPTH + 5; i++) {
		json_t *next = json_array();
		json_array_append_new(cur, next);
		cur = next;
	}
	cr_expect_null(wmap_json_text(deep, &n));
	json_decref(deep);
}

/* ---- wmap_json_parse: the same answer as json_loadb(text, len, 0) ------------------- */

/* Both refuse, or both give equal values (json_equal tells integers from reals). */
static void parses_as_jansson(const char *text, size_t len, const char *what)
{
	json_error_t je, we;
	json_t *want = json_loadb(text, len, 0, &je);
	json_t *got = wmap_json_parse(text, len, &we);
	if (!want) {
		cr_expect_null(got, "%s: jansson refuses (%s), wmap accepts", what, je.text);
		if (!got)
			cr_expect(we.text[0] != '\0' && we.line >= 1 && we.column >= 1,
				  "%s: a refusal says where and why", what);
	} else {
		cr_expect_not_null(got, "%s: jansson accepts, wmap refuses: %s (line %d column %d)",
				   what, we.text, we.line, we.column);
		if (got) {
			char *a = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
			char *b = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
			cr_expect(json_equal(want, got), "%s: jansson %s, wmap %s", what, a, b);
			free(a);
			free(b);
		}
	}
	json_decref(want);
	json_decref(got);
}

Test(json_parse, every_fixture_object_as_jansson_reads_it)
{
	size_t n = 0;
	char **files = t_glob("tests/fixtures/*/*.yaml", &n);
	cr_assert_gt(n, 100);
	for (size_t i = 0; i < n; i++) {
		char err[512];
		json_t *obj = t_load_file(files[i], err, sizeof(err));
		if (!obj)
			continue;
		/* Compact and indented text, as API servers and people write it. */
		size_t flags[] = { JSON_COMPACT, JSON_INDENT(2) };
		for (size_t f = 0; f < 2; f++) {
			char *text = json_dumps(obj, flags[f]);
			cr_assert_not_null(text);
			parses_as_jansson(text, strlen(text), files[i]);
			json_t *back = wmap_json_parse(text, strlen(text), NULL);
			cr_expect(json_equal(back, obj), "%s: round trip", files[i]);
			json_decref(back);
			free(text);
		}
		json_decref(obj);
	}
	t_free_list(files, n);
}

Test(json_parse, accepts_and_refuses_what_jansson_does)
{
	static const char *cases[] = {
		"{}", "[]", " [1] \n", "1", "\"a\"", "", "   ", "null", "[1,]", "[,1]", "{\"a\":1,}",
		"{\"a\" 1}", "{1:2}", "{\"a\":}", "[01]", "[-0]", "[-]", "[1.]", "[.5]", "[1e5]",
		"[1E+5]", "[2.5e-3]", "[1e]", "[1e400]", "[-1e400]", "[1e-400]", "[-0.0]", "[0e0]",
		"[9223372036854775807]", "[9223372036854775808]", "[-9223372036854775808]",
		"[-9223372036854775809]", "[123abc]", "[1 2]", "[true,false,null]", "[tru]",
		"[nul]", "[null", "[\"\\u0000\"]", "{\"\\u0000\":1}", "[\"\\ud800\"]",
		"[\"\\ud83d\\ude00\"]", "[\"\\uD834\\uDD1E\"]", "[\"\\udc00\"]", "[\"\\ud83d x\"]",
		"[\"\\ud83d\\u0041\"]", "[\"\\u00e9\\u00E9\"]", "[\"\\u12\"]", "[\"\\x\"]",
		"[\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"]", "[\"\t\"]", "[\"\x7f\"]", "[\"\xc3\xa9\"]",
		"[\"\xc3\"]", "[\"\xe0\x80\x80\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]",
		"[\"\xf4\x90\x80\x80\"]", "[\"\xf0\x9f\x9a\x80\"]", "[\"\xff\"]", "{\"a\":1,\"a\":2}",
		"{\"a\":{\"b\":[1,{\"c\":null}]},\"d\":\"e\"}", "[1] x", "[1]\n\n", "\xef\xbb\xbf[1]",
		"[\"a\"\"b\"]", "{\"a\":1 \"b\":2}", "[\"unterminated", "{\"k", "[1,{\"a\":[",
		"\n\n  {\"a\": tru}", "[1e+]", "[-01]", "[+1]", "[Infinity]", "[NaN]", "['a']",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		parses_as_jansson(cases[i], strlen(cases[i]), cases[i]);
	/* A NUL byte after the value, and inside a string. */
	parses_as_jansson("[1]\0", 4, "NUL after the value");
	parses_as_jansson("[\"a\0b\"]", 7, "raw NUL in a string");
	/* The one difference: jansson 2.14 skips a NUL right after a number; wmap refuses it. */
	json_error_t e;
	cr_expect_null(wmap_json_parse("[947\0,-2]", 9, &e));
	cr_expect_eq(e.position, 4);
	/* Depth: jansson's limit is 2048 levels. */
	for (int depth = 2047; depth <= 2049; depth++) {
		char *t = malloc((size_t)depth * 2 + 1);
		memset(t, '[', (size_t)depth);
		memset(t + depth, ']', (size_t)depth);
		t[depth * 2] = '\0';
		parses_as_jansson(t, (size_t)depth * 2, "nested arrays");
		free(t);
	}
}

Test(json_parse, says_where_the_text_breaks)
{
	json_error_t e;
	cr_expect_null(wmap_json_parse("{\n  \"a\": 1,\n  \"b\": tru\n}", 23, &e));
	cr_expect_eq(e.line, 3);
	cr_expect_eq(e.column, 8, "column %d", e.column);
	cr_expect_str_eq(e.text, "invalid token");
	cr_expect_null(wmap_json_parse("[\"caf\xc3\xa9\", \xff]", 13, &e));
	cr_expect_eq(e.line, 1);
	cr_expect_eq(e.column, 10, "columns count characters, not bytes: %d", e.column);
	cr_expect_eq(e.position, 10);
}
