/* wmap_json_text: the same text as jansson's compact dump, for every fixture object and for
 * the values that need escapes, and nothing at all when it cannot be whole. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/base64.h"
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

/* Strings of every length to 40 with a byte to escape at every place (or none), among
 * plain ASCII and UTF-8 (bytes >= 0x80, which need no escape): the scan of 16, 8 and the
 * last 8 bytes at a time finds the first one exactly, as jansson does. */
Test(json_text, every_escape_at_every_place_as_jansson)
{
	const char specials[] = { '"', '\\', '\n', '\x01', '\x1f', '\t', ' ', '~', '\x7f' };
	char buf[64];
	for (size_t n = 0; n <= 40; n++) {
		for (size_t at = 0; at <= n; at++) {
			for (size_t k = 0; k < sizeof(specials); k++) {
				for (size_t i = 0; i < n; i++)
					buf[i] = (char)('a' + i % 26);
				/* a two-byte UTF-8 letter where it fits before the special */
				if (at >= 2) {
					buf[at - 2] = (char)0xc3;
					buf[at - 1] = (char)0xa9;
				}
				if (at < n)
					buf[at] = specials[k];
				if (at + 3 < n)
					buf[n - 1] = '"'; /* a second one past the first */
				json_t *v = json_stringn(buf, n);
				cr_assert_not_null(v, "%zu %zu", n, at);
				same_as_jansson(v, "string with an escape");
				json_decref(v);
			}
		}
	}
}

/* A base64 string written straight into the text: the same as jansson's dump of the string
 * wmap_base64 makes, when the writer has room for it all, when it must grow (in chunks),
 * after other text, and nothing when the cap is passed. */
Test(json_text, base64_written_in_place_or_in_chunks)
{
	static unsigned char data[10000];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 131 + (i >> 5));
	size_t sizes[] = { 0, 1, 2, 3, 16, 3071, 3072, 3073, 7000, sizeof(data) };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *b64 = wmap_base64(data, sizes[i]);
		json_t *v = json_pack("[s,s]", "x", b64);
		char *want = json_dumps(v, JSON_COMPACT);
		size_t firsts[] = { 0, 20000 }; /* grows from 256 bytes; room for it all */
		for (size_t f = 0; f < 2; f++) {
			wmap_json_writer w = { WMAP_BUF_INIT(WMAP_JSON_TEXT_MAX_BYTES, firsts[f]) };
			size_t n = 0;
			wmap_json_write_raw(&w, "[\"x\",", 5);
			wmap_json_write_base64(&w, data, sizes[i]);
			wmap_json_write_raw(&w, "]", 1);
			char *got = wmap_json_writer_finish(&w, &n);
			cr_assert_not_null(got, "%zu bytes", sizes[i]);
			cr_expect_eq(n, strlen(want));
			cr_expect_str_eq(got, want, "%zu bytes, first %zu", sizes[i], firsts[f]);
			free(got);
		}
		free(want);
		json_decref(v);
		free(b64);
	}
	wmap_json_writer w = { WMAP_BUF_INIT(5000, 0) };
	wmap_json_write_base64(&w, data, sizeof(data));
	cr_expect_null(wmap_json_writer_finish(&w, NULL), "past the cap: nothing");
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

/* ---- wmap_json_parse_limited: caps, cut mode and where it stops -------------------- */

static int parse_lim(json_t **out, wmap_json_cut *cut, const char *text,
		     const wmap_json_limits *lim, json_error_t *e)
{
	return wmap_json_parse_limited(out, cut, text, strlen(text), lim, e);
}

/* n levels of [ ... ] around inner, as a new string. */
static char *nest(const char *before, int n, const char *inner, const char *after)
{
	size_t bl = strlen(before), il = strlen(inner), al = strlen(after);
	char *t = malloc(bl + 2 * (size_t)n + il + al + 1);
	cr_assert_not_null(t);
	memcpy(t, before, bl);
	memset(t + bl, '[', (size_t)n);
	memcpy(t + bl + n, inner, il);
	memset(t + bl + n + il, ']', (size_t)n);
	memcpy(t + bl + 2 * n + il, after, al + 1);
	return t;
}

Test(json_parse_limited, strict_mode_fails_at_each_cap_and_says_where)
{
	wmap_json_limits lim = { 0 };
	json_t *v = NULL;
	json_error_t e;
	lim.max_depth = 4;   /* levels as jansson counts them: scalars too */
	cr_expect_eq(parse_lim(&v, NULL, "{\"a\":[[1]]}", &lim, &e), 0, "4 levels fit");
	json_decref(v);
	cr_expect_eq(parse_lim(&v, NULL, "{\"a\":\n [[[1]]]}", &lim, &e), WMAP_ELIMIT);
	cr_expect_null(v);
	cr_expect_str_eq(e.text, "maximum parsing depth reached");
	cr_expect_eq(e.line, 2);
	cr_expect_eq(e.column, 5, "the fifth level is the 1 at column 5: %d", e.column);

	wmap_json_limits m = { 0 };
	m.max_members = 2;
	cr_expect_eq(parse_lim(&v, NULL, "{\"a\":1,\"b\":[1,2]}", &m, &e), 0);
	json_decref(v);
	cr_expect_eq(parse_lim(&v, NULL, "{\"a\":1,\"b\":2,\"c\":3}", &m, &e), WMAP_ELIMIT);
	cr_expect_str_eq(e.text, "too many members in an object");
	cr_expect_eq(e.position, 17, "at the third value: %d", e.position);
	cr_expect_eq(parse_lim(&v, NULL, "[1,2,3]", &m, &e), WMAP_ELIMIT);
	cr_expect_str_eq(e.text, "too many items in an array");
	cr_expect_eq(e.column, 6);

	wmap_json_limits n = { 0 };
	n.max_nodes = 4;
	cr_expect_eq(parse_lim(&v, NULL, "{\"a\":[1,2]}", &n, &e), 0, "4 values fit");
	json_decref(v);
	cr_expect_eq(parse_lim(&v, NULL, "{\"a\":[1,2],\"b\":3}", &n, &e), WMAP_ELIMIT);
	cr_expect_str_eq(e.text, "too many values");
	cr_expect_eq(e.column, 16);

	/* Not JSON is still EINVAL, whatever the caps. */
	cr_expect_eq(parse_lim(&v, NULL, "{\"a\":[1,2}", &n, &e), WMAP_EINVAL);
	cr_expect_str_eq(e.text, "',' or ']' expected");
}

Test(json_parse_limited, cut_mode_leaves_out_what_is_too_deep_and_keeps_the_rest)
{
	wmap_json_limits lim = { 0 };
	lim.max_depth = 6;
	lim.cut = 1;
	wmap_json_cut cut;
	json_t *v = NULL;
	json_error_t e;
	/* A 3,000-level field between two plain ones. */
	char *t = nest("{\"request\":{\"uid\":\"u1\",\"object\":{\"spec\":{\"x\":", 3000, "1",
		       "},\"kind\":\"JobSet\"}},\"tail\":true}");
	cr_assert_eq(wmap_json_parse_limited(&v, &cut, t, strlen(t), &lim, &e), 0, "%s", e.text);
	cr_expect_str_eq(cut.reason, "too-deep");
	cr_expect_eq(cut.limit, 6);
	cr_expect_str_eq(cut.path, ".request.object.spec.x[0][0]");
	cr_expect_eq(cut.line, 1);
	cr_expect_eq(cut.position, strlen("{\"request\":{\"uid\":\"u1\",\"object\":{\"spec\":{\"x\":[["));
	cr_expect_eq(cut.column, (int)cut.position + 1);
	cr_expect_eq(cut.left_out, 1);
	json_t *req = json_object_get(v, "request");
	cr_expect_str_eq(json_string_value(json_object_get(req, "uid")), "u1");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(req, "object"), "kind")),
			 "JobSet", "members after the cut are kept");
	cr_expect(json_is_true(json_object_get(v, "tail")));
	json_t *x = json_object_get(json_object_get(json_object_get(req, "object"), "spec"), "x");
	cr_expect_eq(json_array_size(json_array_get(x, 0)), 0, "the too-deep part is left out");
	json_decref(v);
	free(t);
	size_t at = cut.position;

	/* The same text in strict mode: refused at the same place. */
	t = nest("{\"request\":{\"uid\":\"u1\",\"object\":{\"spec\":{\"x\":", 3000, "1", "}}}}");
	lim.cut = 0;
	cr_expect_eq(wmap_json_parse_limited(&v, &cut, t, strlen(t), &lim, &e), WMAP_ELIMIT);
	cr_expect_eq((size_t)e.position, at);
	cr_expect_null(v);
	free(t);
}

Test(json_parse_limited, cut_mode_members_nodes_and_the_kept_envelope)
{
	wmap_json_limits lim = { 0 };
	lim.cut = 1;
	lim.max_members = 3;
	wmap_json_cut cut;
	json_t *v = NULL;
	json_error_t e;
	cr_assert_eq(parse_lim(&v, &cut, "{\"o\":{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":[5]},"
				       "\"l\":[1,2,3,4],\"z\":0}", &lim, &e), 0, "%s", e.text);
	cr_expect_str_eq(cut.reason, "too-many-members");
	cr_expect_str_eq(cut.path, ".o.d");
	cr_expect_eq(cut.column, 29);
	cr_expect_eq(cut.left_out, 2, "two runs left out: %zu", cut.left_out);
	cr_expect_eq(json_object_size(json_object_get(v, "o")), 3);
	cr_expect_eq(json_array_size(json_object_get(v, "l")), 3);
	cr_expect_eq(json_integer_value(json_object_get(v, "z")), 0);
	json_decref(v);

	/* The node cap: later values are left out, except those at keep_depth or above. */
	wmap_json_limits n = { 0 };
	n.cut = 1;
	n.max_nodes = 6;
	n.keep_depth = 3;
	cr_assert_eq(parse_lim(&v, &cut, "{\"request\":{\"object\":{\"a\":[1,2,3,4,5,6,7,8]},"
				       "\"uid\":\"late\",\"kind\":{\"kind\":\"X\"}}}", &n, &e), 0);
	cr_expect_str_eq(cut.reason, "too-many-nodes");
	cr_expect_eq(cut.limit, 6);
	cr_expect_str_eq(cut.path, ".request.object.a[2]");
	json_t *req = json_object_get(v, "request");
	cr_expect_str_eq(json_string_value(json_object_get(req, "uid")), "late",
			 "an envelope member after the cut is read");
	cr_expect(json_is_object(json_object_get(req, "kind")));
	cr_expect_eq(json_object_size(json_object_get(req, "kind")), 0,
		     "below keep_depth nothing more is built");
	cr_expect_eq(json_array_size(json_object_get(json_object_get(req, "object"), "a")), 2);
	json_decref(v);

	/* The deadline: read every 4096 values; one in the past cuts at the 4097th. */
	size_t len = 2 + 10000 * 2;
	char *t = malloc(len + 1);
	t[0] = '[';
	for (size_t i = 0; i < 10000; i++) {
		t[1 + 2 * i] = '7';
		t[2 + 2 * i] = ',';
	}
	t[len - 2] = '7';
	t[len - 1] = ']';
	t[len] = '\0';
	wmap_json_limits d = { 0 };
	d.cut = 1;
	d.deadline_ns = 1;
	cr_assert_eq(wmap_json_parse_limited(&v, &cut, t, len, &d, &e), 0);
	cr_expect_str_eq(cut.reason, "budget");
	cr_expect_str_eq(cut.path, "[4095]");
	cr_expect_eq(json_array_size(v), 4095);
	json_decref(v);
	free(t);
}

Test(json_parse_limited, what_is_skipped_is_still_checked)
{
	/* Each text wrapped 3 levels deep with a depth cap of 2: the skimmer alone reads it, and
	 * must accept exactly what jansson accepts (range errors aside: a number left out is
	 * never converted). */
	const char *cases[] = {
		"1", "-0", "0.5e-3", "01", "1.", ".5", "-", "1e", "1e+", "true", "tru", "nul", "false",
		"\"a\"", "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\\udc00\"",
		"\"\\u0000\"", "\"\\x\"", "\"\t\"", "\"\xc3\xa9\"", "\"\xc3\"", "\"\xed\xa0\x80\"",
		"\"unterminated", "{}", "[]", "{\"a\":1}", "{\"a\" 1}", "{\"a\":1,}", "[1,]",
		"[1 2]", "{1:2}", "{\"a\":[{\"b\":[]}],\"c\":{}}", "[[[[[[[[[[]]]]]]]]]]", "[[[]]",
		"{\"a\":{\"b\":1]}", "[\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"]", "NaN", "'a'", "",
	};
	wmap_json_limits lim = { 0 };
	lim.cut = 1;
	lim.max_depth = 2;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *t = nest("", 3, cases[i], "");
		json_error_t je, we;
		wmap_json_cut cut;
		json_t *want = json_loadb(t, strlen(t), 0, &je), *got = NULL;
		int rc = wmap_json_parse_limited(&got, &cut, t, strlen(t), &lim, &we);
		cr_expect_eq(!want, rc != 0, "%s: jansson %s, skimmer %s (%s)", cases[i],
			     want ? "accepts" : je.text, rc ? "refuses" : "accepts",
			     rc ? we.text : "");
		if (rc) {
			cr_expect_eq(rc, WMAP_EINVAL);
			cr_expect(we.line >= 1 && we.column >= 1 && we.text[0], "%s: says where", cases[i]);
		} else {
			cr_expect_str_eq(cut.reason, "too-deep", "%s", cases[i]);
			cr_expect_eq(json_array_size(json_array_get(got, 0)), 0, "%s", cases[i]);
		}
		json_decref(want);
		json_decref(got);
		free(t);
	}
	/* A broken item after a cut in the same container is found too. */
	wmap_json_limits m = { 0 };
	m.cut = 1;
	m.max_members = 1;
	json_t *v = NULL;
	json_error_t e;
	cr_expect_eq(parse_lim(&v, NULL, "[1,2,{\"a\":tru}]", &m, &e), WMAP_EINVAL);
	cr_expect_eq(e.column, 11);
	cr_expect_null(v);
	/* 100,000 levels are skimmed without recursion. */
	char *deep = nest("{\"a\":", 100000, "", "}");
	wmap_json_cut cut;
	cr_expect_eq(wmap_json_parse_limited(&v, &cut, deep, strlen(deep), &m, &e), 0);
	cr_expect_str_eq(cut.reason, "too-deep", "%s", cut.reason ? cut.reason : "(none)");
	json_decref(v);
	free(deep);
}

Test(json_parse_limited, paths_quote_odd_keys_and_stay_short)
{
	wmap_json_limits lim = { 0 };
	lim.cut = 1;
	lim.max_depth = 3;
	wmap_json_cut cut;
	json_t *v = NULL;
	json_error_t e;
	cr_assert_eq(parse_lim(&v, &cut, "{\"a.b/c\":{\"q\\\"\":[[1]]}}", &lim, &e), 0);
	cr_expect_str_eq(cut.path, "[\"a.b/c\"][\"q\\\"\"][0]");
	json_decref(v);
	lim.max_depth = 2000;
	char *t = nest("", 2500, "", "");
	cr_assert_eq(wmap_json_parse_limited(&v, &cut, t, strlen(t), &lim, &e), 0);
	cr_expect_lt(strlen(cut.path), sizeof(cut.path));
	cr_expect(strstr(cut.path, "...") != NULL, "a long path ends with ...: %s", cut.path);
	json_decref(v);
	free(t);
}
