/* The strict YAML reader and the writer. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/yaml.h"

static int parse(json_t **out, const char *text, const wmap_yaml_opts *o, wmap_error *err)
{
	return wmap_yaml_parse(out, text, strlen(text), "in.yaml", o, err);
}

Test(yaml, types_scalars_as_kubectl_does)
{
	json_t *d = t_yaml("a: 1\nb: \"1\"\nc: true\nd: yes\ne: off\nf: ~\ng: 1.5\nh: 0x1f\ni: 010\n"
			   "j: hello\nk: '3'\nl: 1e3\nm: \"\"\nn: 12345678901234567890\n");
	cr_expect(json_is_integer(json_object_get(d, "a")));
	cr_expect_str_eq(json_string_value(json_object_get(d, "b")), "1");
	cr_expect(json_is_true(json_object_get(d, "c")));
	cr_expect(json_is_true(json_object_get(d, "d")));
	cr_expect(json_is_false(json_object_get(d, "e")));
	cr_expect(json_is_null(json_object_get(d, "f")));
	cr_expect_float_eq(json_real_value(json_object_get(d, "g")), 1.5, 1e-9);
	cr_expect_eq(json_integer_value(json_object_get(d, "h")), 31);
	cr_expect_eq(json_integer_value(json_object_get(d, "i")), 8);
	cr_expect_str_eq(json_string_value(json_object_get(d, "j")), "hello");
	cr_expect_str_eq(json_string_value(json_object_get(d, "k")), "3");
	cr_expect(json_is_real(json_object_get(d, "l")));
	cr_expect_str_eq(json_string_value(json_object_get(d, "m")), "");
	cr_expect(json_is_real(json_object_get(d, "n")), "an integer past int64 becomes a float");
	json_decref(d);
}

Test(yaml, reads_every_document_and_skips_empty_ones)
{
	json_t *docs;
	wmap_error err = {0};
	cr_assert_eq(parse(&docs, "a: 1\n---\n---\nb: 2\n...\n", NULL, &err), 0, "%s", err.message);
	cr_expect_eq(json_array_size(docs), 2);
	json_decref(docs);
}

Test(yaml, refuses_duplicate_keys_with_their_place)
{
	json_t *docs;
	wmap_error err = {0};
	cr_assert_eq(parse(&docs, "spec:\n  a: 1\n  a: 2\n", NULL, &err), WMAP_EINVAL);
	cr_expect_str_eq(err.message, "in.yaml:3:3: duplicate key \"a\"");
}

Test(yaml, refuses_anchors_unless_allowed)
{
	json_t *docs;
	wmap_error err = {0};
	const char *text = "a: &x {b: 1}\nc: *x\n";
	cr_assert_eq(parse(&docs, text, NULL, &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "in.yaml:1:4: anchors and aliases are not allowed") != NULL, "%s",
		  err.message);
	wmap_yaml_opts o = {.allow_aliases = 1};
	cr_assert_eq(parse(&docs, text, &o, &err), 0, "%s", err.message);
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(json_array_get(docs, 0), "c"), "b")), 1);
	json_decref(docs);
}

Test(yaml, stops_billion_laughs_at_the_node_cap)
{
	const char *text = "a: &a [x, x, x, x, x, x, x, x, x]\n"
			   "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			   "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			   "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			   "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
			   "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
			   "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
			   "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
	json_t *docs;
	wmap_error err = {0};
	wmap_yaml_opts o = {.allow_aliases = 1, .max_nodes = 100000};
	cr_assert_eq(parse(&docs, text, &o, &err), WMAP_ELIMIT);
	cr_expect(strstr(err.message, "more than 100000 nodes") != NULL, "%s", err.message);
}

Test(yaml, bounds_nesting_depth)
{
	char text[4096];
	size_t n = 0;
	for (int i = 0; i < 200; i++)
		text[n++] = '[';
	for (int i = 0; i < 200; i++)
		text[n++] = ']';
	text[n] = '\0';
	json_t *docs;
	wmap_error err = {0};
	cr_expect_eq(parse(&docs, text, NULL, &err), WMAP_ELIMIT, "%s", err.message);
	cr_expect(strstr(err.message, "nesting deeper than 128 levels") != NULL, "%s", err.message);
	/* the same as YAML block style */
	char *deep = malloc(200 * 204);
	n = 0;
	for (int i = 0; i < 200; i++) {
		for (int k = 0; k < i; k++)
			deep[n++] = ' ';
		n += (size_t)sprintf(deep + n, "a:\n");
	}
	deep[n] = '\0';
	cr_expect_eq(parse(&docs, deep, NULL, &err), WMAP_ELIMIT, "%s", err.message);
	free(deep);
}

Test(yaml, refuses_oversize_input)
{
	json_t *docs;
	wmap_error err = {0};
	wmap_yaml_opts o = {.max_bytes = 10};
	cr_expect_eq(parse(&docs, "a: 1234567890\n", &o, &err), WMAP_ELIMIT);
	cr_expect(strstr(err.message, "larger than 10 bytes") != NULL, "%s", err.message);
}

Test(yaml, names_syntax_errors_by_line_and_column)
{
	json_t *docs;
	wmap_error err = {0};
	cr_assert_eq(parse(&docs, "a: 1\nb: [1, 2\nc: 3\n", NULL, &err), WMAP_EINVAL);
	cr_expect(strncmp(err.message, "in.yaml:3:", 10) == 0, "%s", err.message);
	cr_assert_eq(parse(&docs, "{\"a\": [1, 2}", NULL, &err), WMAP_EINVAL);
	cr_expect(strncmp(err.message, "in.yaml:1:", 10) == 0, "%s", err.message);
}

Test(yaml, reads_json_and_refuses_its_duplicate_keys)
{
	json_t *docs;
	wmap_error err = {0};
	cr_assert_eq(parse(&docs, "{\"a\": {\"b\": [1, \"x\"]}}", NULL, &err), 0, "%s", err.message);
	cr_expect_eq(json_array_size(docs), 1);
	json_decref(docs);
	cr_expect_eq(parse(&docs, "{\"a\": 1, \"a\": 2}", NULL, &err), WMAP_EINVAL);
}

Test(yaml, refuses_nul_bytes)
{
	json_t *docs;
	wmap_error err = {0};
	cr_expect_eq(wmap_yaml_parse(&docs, "a: b\0c\n", 7, "in.yaml", NULL, &err), WMAP_EINVAL);
}

Test(yaml, records_positions_of_values)
{
	json_t *docs, *pos = json_object();
	wmap_error err = {0};
	wmap_yaml_opts o = {.positions = pos};
	cr_assert_eq(parse(&docs, "spec:\n  list:\n  - name: x\n    path: .a\n", &o, &err), 0);
	char buf[128];
	wmap_yaml_position(buf, sizeof(buf), pos, "in.yaml", "0/spec/list/0/path");
	cr_expect_str_eq(buf, "in.yaml:4:5");
	json_decref(docs);
	json_decref(pos);
}

Test(yaml, writes_yaml_that_reads_back_the_same)
{
	json_t *v = json_pack("{s:s, s:s, s:s, s:i, s:b, s:n, s:[s, f], s:s}", "plain", "hello",
			      "looks_bool", "true", "looks_int", "0123", "n", 5, "b", 1, "z", "list",
			      "a: b", 1.5, "empty", "");
	char *text;
	wmap_error err = {0};
	cr_assert_eq(wmap_yaml_dump(&text, v, &err), 0, "%s", err.message);
	json_t *back = t_yaml(text);
	cr_expect(json_equal(v, back), "round trip changed the value:\n%s", text);
	free(text);
	json_decref(v);
	json_decref(back);
}
