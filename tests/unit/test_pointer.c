/* JSON Pointers (RFC 6901): one strict reader for the resolver, the patch builder and the
 * applier. Every row is a pointer and what it must find in one document. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/pointer.h"

static const char *doc_text =
	"{\"a\": {\"b\": \"ab\"}, \"arr\": [\"zero\", \"one\", \"two\", \"three\", \"four\", \"five\","
	" \"six\", \"seven\", \"eight\", \"nine\", \"ten\"],"
	" \"x/y\": \"slash\", \"m~n\": \"tilde\", \"~1\": \"literal\", \"\": \"empty\","
	" \"01\": \"key-01\", \" \": \"space\"}";

static const struct {
	const char *pointer;
	const char *want;   /* the string found, "{}" for the root, NULL for nothing */
} lookups[] = {
	{ "", "{}" },
	{ "/a/b", "ab" },
	{ "/arr/0", "zero" },
	{ "/arr/10", "ten" },
	{ "/x~1y", "slash" },
	{ "/m~0n", "tilde" },
	{ "/~01", "literal" },        /* "~0" then "1": the key "~1", never "/" */
	{ "/", "empty" },             /* the empty key */
	{ "/01", "key-01" },          /* object keys are taken as they are */
	{ "/%20", NULL },             /* no percent-decoding (that is for URI fragments) */
	{ "/ ", "space" },
	/* array indexes: "0" or digits without a leading zero, nothing else */
	{ "/arr/01", NULL },
	{ "/arr/+1", NULL },
	{ "/arr/-1", NULL },
	{ "/arr/ 1", NULL },
	{ "/arr/1 ", NULL },
	{ "/arr/1x", NULL },
	{ "/arr/-", NULL },
	{ "/arr/", NULL },
	{ "/arr/11", NULL },
	{ "/arr/1000000000", NULL },  /* more than 9 digits */
	/* malformed escapes */
	{ "/m~2n", NULL },
	{ "/m~", NULL },
	{ "/~", NULL },
	{ "/x~1y~", NULL },
	/* not a pointer */
	{ "a/b", NULL },
	{ "#/a", NULL },
	{ "/a/b/c", NULL },           /* through a string */
	{ "/missing", NULL },
};

Test(pointer, looks_up_strictly)
{
	json_error_t je;
	json_t *doc = json_loads(doc_text, 0, &je);
	cr_assert_not_null(doc, "%s", je.text);
	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
		json_t *v = wmap_pointer_lookup(doc, lookups[i].pointer);
		const char *want = lookups[i].want;
		if (!want)
			cr_expect_null(v, "\"%s\" should find nothing", lookups[i].pointer);
		else if (strcmp(want, "{}") == 0)
			cr_expect_eq(v, doc, "\"%s\" is the root", lookups[i].pointer);
		else
			cr_expect_str_eq(json_string_value(v) ? json_string_value(v) : "(none)", want,
					 "\"%s\"", lookups[i].pointer);
	}
	cr_expect_null(wmap_pointer_lookup(doc, NULL));
	json_decref(doc);
}

static const struct {
	const char *base, *token, *want;
} joins[] = {
	{ "", "a", "/a" },
	{ "/metadata/labels", "kai.scheduler/queue", "/metadata/labels/kai.scheduler~1queue" },
	{ "", "a/~b", "/a~1~0b" },
	{ "/x", "~1", "/x/~01" },
	{ "/x", "", "/x/" },
};

Test(pointer, joins_and_escapes_tokens)
{
	for (size_t i = 0; i < sizeof(joins) / sizeof(joins[0]); i++) {
		char *p = wmap_pointer_join(joins[i].base, joins[i].token);
		cr_assert_not_null(p);
		cr_expect_str_eq(p, joins[i].want, "join(\"%s\", \"%s\")", joins[i].base,
				 joins[i].token);
		free(p);
	}
	char *p = wmap_pointer_join_index("/spec/jobs", 12);
	cr_expect_str_eq(p, "/spec/jobs/12");
	free(p);

	char buf[4];
	cr_expect_eq(wmap_pointer_escape(buf, sizeof(buf), "a/b"), 4, "the whole length");
	cr_expect_str_eq(buf, "a~1", "cut, never in the middle of an escape");
	cr_expect_eq(wmap_pointer_escape(buf, sizeof(buf), "ab~"), 4);
	cr_expect_str_eq(buf, "ab", "an escape that does not fit is left out whole");
}

static const struct {
	const char *tok;
	int ok;
	size_t index;
} indexes[] = {
	{ "0", 1, 0 }, { "7", 1, 7 }, { "123456789", 1, 123456789 },
	{ "", 0, 0 }, { "00", 0, 0 }, { "01", 0, 0 }, { "+1", 0, 0 }, { "-1", 0, 0 },
	{ " 1", 0, 0 }, { "1e3", 0, 0 }, { "1234567890", 0, 0 }, { "-", 0, 0 },
};

Test(pointer, array_indexes)
{
	for (size_t i = 0; i < sizeof(indexes) / sizeof(indexes[0]); i++) {
		size_t v = 99;
		int rc = wmap_pointer_index(&v, indexes[i].tok);
		cr_expect_eq(rc == 0, indexes[i].ok, "\"%s\"", indexes[i].tok);
		if (indexes[i].ok)
			cr_expect_eq(v, indexes[i].index, "\"%s\"", indexes[i].tok);
	}
}

Test(pointer, tokens_unescape_or_are_refused)
{
	static const struct {
		const char *in, *out;
	} toks[] = {
		{ "abc", "abc" }, { "a~0b", "a~b" }, { "a~1b", "a/b" }, { "~01", "~1" },
		{ "~10", "/0" }, { "a~", NULL }, { "a~2", NULL }, { "~", NULL },
	};
	for (size_t i = 0; i < sizeof(toks) / sizeof(toks[0]); i++) {
		size_t n = strlen(toks[i].in);
		char *t = wmap_pointer_token_dup(toks[i].in, n);
		cr_expect_eq(wmap_pointer_token_valid(toks[i].in, n), toks[i].out != NULL, "%s",
			     toks[i].in);
		if (toks[i].out)
			cr_expect_str_eq(t ? t : "(null)", toks[i].out, "%s", toks[i].in);
		else
			cr_expect_null(t, "%s", toks[i].in);
		free(t);
	}
}

Test(pointer, reads_as_a_path_for_messages)
{
	static const struct {
		const char *pointer, *path;
	} rows[] = {
		{ "", "." },
		{ "/spec/replicatedJobs/1/template", ".spec.replicatedJobs[1].template" },
		{ "/spec/jobs/1/resources/limits/nvidia.com~1gpu",
		  ".spec.jobs[1].resources.limits[\"nvidia.com/gpu\"]" },
		{ "/a/b~2c/d", ".a" },   /* shown up to its first malformed token */
	};
	char buf[256];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		wmap_pointer_to_path(buf, sizeof(buf), rows[i].pointer);
		cr_expect_str_eq(buf, rows[i].path, "%s", rows[i].pointer);
	}
}
