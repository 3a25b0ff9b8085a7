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
