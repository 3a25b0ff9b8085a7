/* The JSON Patch builder: escaping, whole-map creation, never replacing maps or lists,
 * the overlay, idempotence; the applier; label values and keys. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/patch.h"

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);
	cr_assert_not_null(v, "bad test JSON: %s", e.text);
	return v;
}

static json_t *ops_of(wmap_patch *p)
{
	return json_deep_copy(wmap_patch_ops(p));
}

/* Applies the builder's patch to a copy of doc and returns the result. */
static json_t *applied(const json_t *doc, wmap_patch *p)
{
	wmap_error err = { 0 };
	json_t *copy = json_deep_copy(doc);
	cr_assert_eq(wmap_patch_apply(&copy, wmap_patch_ops(p), &err), 0, "%s", err.message);
	return copy;
}

static void expect_json(const json_t *got, const char *want_text)
{
	json_t *want = parse(want_text);
	char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
	char *w = json_dumps(want, JSON_SORT_KEYS | JSON_COMPACT);
	cr_expect(json_equal(got, want), "got %s\nwant %s", g, w);
	free(g);
	free(w);
	json_decref(want);
}

Test(patch, escapes_pointer_tokens)
{
	char *p = wmap_pointer_join("/metadata/labels", "kai.scheduler/queue");
	cr_expect_str_eq(p, "/metadata/labels/kai.scheduler~1queue");
	free(p);
	/* `~` is escaped before `/`: "a/~b" is "a~1~0b", never "a~01b". */
	p = wmap_pointer_join("", "a/~b");
	cr_expect_str_eq(p, "/a~1~0b");
	free(p);

	json_t *doc = parse("{\"metadata\":{\"labels\":{\"x\":\"1\"}}}");
	wmap_patch *pb;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/metadata/labels", "kai.scheduler/queue",
				    json_string("q"), WMAP_PATCH_DEFAULT, NULL, &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/metadata/labels", "odd~key", json_string("v"),
				    WMAP_PATCH_DEFAULT, NULL, &err), 0);
	json_t *ops = ops_of(pb);
	expect_json(ops, "[{\"op\":\"add\",\"path\":\"/metadata/labels/kai.scheduler~1queue\","
			 "\"value\":\"q\"},{\"op\":\"add\",\"path\":\"/metadata/labels/odd~0key\","
			 "\"value\":\"v\"}]");
	json_t *out = applied(doc, pb);
	expect_json(out, "{\"metadata\":{\"labels\":{\"x\":\"1\",\"kai.scheduler/queue\":\"q\","
			 "\"odd~key\":\"v\"}}}");
	cr_expect_not_null(wmap_pointer_lookup(out, "/metadata/labels/kai.scheduler~1queue"));
	json_decref(out);
	json_decref(ops);
	wmap_patch_free(pb);
	json_decref(doc);
}

Test(patch, creates_missing_maps_whole_with_one_add)
{
	json_t *doc = parse("{\"spec\":{\"template\":{\"spec\":{\"containers\":[]}}}}");
	wmap_patch *pb;
	wmap_error err = { 0 };
	int changed = 0;
	cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/spec/template/metadata/labels", "a", json_string("1"),
				    WMAP_PATCH_OVERRIDE, &changed, &err), 0, "%s", err.message);
	cr_expect_eq(changed, 1);
	cr_assert_eq(wmap_patch_set(pb, "/spec/template/metadata/labels", "b", json_string("2"),
				    WMAP_PATCH_OVERRIDE, NULL, &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/spec/template/metadata/annotations", "c",
				    json_string("3"), WMAP_PATCH_OVERRIDE, NULL, &err), 0);
	/* The overlay sees what the patch has created. */
	cr_expect_str_eq(json_string_value(wmap_patch_get(pb, "/spec/template/metadata/labels/b")),
			 "2");
	json_t *ops = ops_of(pb);
	expect_json(ops, "[{\"op\":\"add\",\"path\":\"/spec/template/metadata\",\"value\":"
			 "{\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"annotations\":{\"c\":\"3\"}}}]");
	json_decref(ops);
	wmap_patch_free(pb);
	json_decref(doc);
}

Test(patch, adds_keys_to_an_existing_map_and_never_replaces_it)
{
	json_t *doc = parse("{\"m\":{\"labels\":{\"keep\":\"me\",\"a\":\"old\"}}}");
	wmap_patch *pb;
	wmap_error err = { 0 };
	int changed = 1;
	cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
	/* default mode: an existing value stays */
	cr_assert_eq(wmap_patch_set(pb, "/m/labels", "a", json_string("new"), WMAP_PATCH_DEFAULT,
				    &changed, &err), 0);
	cr_expect_eq(changed, 0);
	cr_expect_eq(wmap_patch_len(pb), 0);
	/* override mode: replaced, by key */
	cr_assert_eq(wmap_patch_set(pb, "/m/labels", "a", json_string("new"), WMAP_PATCH_OVERRIDE,
				    &changed, &err), 0);
	cr_expect_eq(changed, 1);
	/* setting the same key again updates the same operation */
	cr_assert_eq(wmap_patch_set(pb, "/m/labels", "a", json_string("newer"),
				    WMAP_PATCH_OVERRIDE, NULL, &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/m/labels", "b", json_string("x"), WMAP_PATCH_DEFAULT,
				    NULL, &err), 0);
	json_t *ops = ops_of(pb);
	expect_json(ops, "[{\"op\":\"add\",\"path\":\"/m/labels/a\",\"value\":\"newer\"},"
			 "{\"op\":\"add\",\"path\":\"/m/labels/b\",\"value\":\"x\"}]");
	json_t *out = applied(doc, pb);
	expect_json(out, "{\"m\":{\"labels\":{\"keep\":\"me\",\"a\":\"newer\",\"b\":\"x\"}}}");
	json_decref(out);
	json_decref(ops);
	wmap_patch_free(pb);
	json_decref(doc);
}

Test(patch, second_pass_on_the_result_is_empty)
{
	json_t *doc = parse("{\"spec\":{\"jobs\":[{\"template\":{\"spec\":{}}},"
			    "{\"template\":{\"metadata\":{\"labels\":null},\"spec\":"
			    "{\"tolerations\":[{\"key\":\"a\"}]}}}]}}");
	json_t *cur = json_deep_copy(doc);
	for (int pass = 0; pass < 2; pass++) {
		wmap_patch *pb;
		wmap_error err = { 0 };
		cr_assert_eq(wmap_patch_new(&pb, cur, &err), 0);
		for (int j = 0; j < 2; j++) {
			char base[64], lab[96], tol[96];
			snprintf(base, sizeof(base), "/spec/jobs/%d/template", j);
			snprintf(lab, sizeof(lab), "%s/metadata/labels", base);
			snprintf(tol, sizeof(tol), "%s/spec/tolerations", base);
			cr_assert_eq(wmap_patch_set(pb, lab, "wmap.io/component", json_string("c"),
						    WMAP_PATCH_OVERRIDE, NULL, &err), 0, "%s",
				     err.message);
			cr_assert_eq(wmap_patch_append_unique(pb, tol, parse("{\"key\":\"a\"}"),
							      NULL, &err), 0, "%s", err.message);
			cr_assert_eq(wmap_patch_append_unique(pb, tol, parse("{\"key\":\"gpu\"}"),
							      NULL, &err), 0);
			cr_assert_eq(wmap_patch_append_unique(pb, tol, parse("{\"key\":\"gpu\"}"),
							      NULL, &err), 0);
		}
		if (pass == 1) {
			char *t = json_dumps(wmap_patch_ops(pb), JSON_COMPACT);
			cr_expect_eq(wmap_patch_len(pb), 0, "second pass: %s", t);
			free(t);
		} else {
			cr_expect_gt(wmap_patch_len(pb), 0);
			json_t *next = applied(cur, pb);
			json_decref(cur);
			cur = next;
		}
		wmap_patch_free(pb);
	}
	/* labels: null was replaced by a map; the existing toleration was not duplicated */
	cr_expect_str_eq(json_string_value(wmap_pointer_lookup(
				 cur, "/spec/jobs/1/template/metadata/labels/wmap.io~1component")),
			 "c");
	cr_expect_eq(json_array_size(wmap_pointer_lookup(cur, "/spec/jobs/1/template/spec/"
							      "tolerations")), 2);
	cr_expect_eq(json_array_size(wmap_pointer_lookup(cur, "/spec/jobs/0/template/spec/"
							      "tolerations")), 2);
	json_decref(cur);
	json_decref(doc);
}

Test(patch, appends_to_lists_with_dash_only_when_missing)
{
	json_t *doc = parse("{\"spec\":{\"tolerations\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}}");
	wmap_patch *pb;
	wmap_error err = { 0 };
	int changed = 1;
	cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
	cr_assert_eq(wmap_patch_append_unique(pb, "/spec/tolerations",
					      parse("{\"operator\":\"Exists\",\"key\":\"a\"}"),
					      &changed, &err), 0);
	cr_expect_eq(changed, 0, "an equal element (key order aside) is already there");
	cr_assert_eq(wmap_patch_append_unique(pb, "/spec/tolerations", parse("{\"key\":\"b\"}"),
					      &changed, &err), 0);
	cr_expect_eq(changed, 1);
	json_t *ops = ops_of(pb);
	expect_json(ops, "[{\"op\":\"add\",\"path\":\"/spec/tolerations/-\","
			 "\"value\":{\"key\":\"b\"}}]");
	json_decref(ops);
	wmap_patch_free(pb);
	json_decref(doc);
}

Test(patch, refuses_to_write_through_a_non_object)
{
	json_t *doc = parse("{\"metadata\":{\"labels\":\"oops\"},\"list\":[1]}");
	wmap_patch *pb;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
	cr_expect_eq(wmap_patch_set(pb, "/metadata/labels", "a", json_string("1"),
				    WMAP_PATCH_DEFAULT, NULL, &err), WMAP_EEVAL);
	cr_expect_eq(wmap_patch_set(pb, "/list/0/x", "a", json_string("1"), WMAP_PATCH_DEFAULT,
				    NULL, &err), WMAP_EEVAL);
	cr_expect_eq(wmap_patch_set(pb, "/list/5", "a", json_string("1"), WMAP_PATCH_DEFAULT,
				    NULL, &err), WMAP_EEVAL, "no element to create into an array");
	cr_expect_eq(wmap_patch_set(pb, "no-slash", "a", json_string("1"), WMAP_PATCH_DEFAULT,
				    NULL, &err), WMAP_EINVAL);
	cr_expect_eq(wmap_patch_len(pb), 0);
	wmap_patch_free(pb);
	json_decref(doc);
}

Test(patch, applier_follows_rfc6902)
{
	json_t *doc = parse("{\"a\":[1,2],\"b\":{\"c\":1}}");
	wmap_error err = { 0 };
	json_t *ops = parse("[{\"op\":\"add\",\"path\":\"/a/1\",\"value\":9},"
			    "{\"op\":\"add\",\"path\":\"/a/-\",\"value\":3},"
			    "{\"op\":\"replace\",\"path\":\"/b/c\",\"value\":2},"
			    "{\"op\":\"test\",\"path\":\"/b/c\",\"value\":2},"
			    "{\"op\":\"copy\",\"from\":\"/b\",\"path\":\"/d\"},"
			    "{\"op\":\"move\",\"from\":\"/d/c\",\"path\":\"/e\"},"
			    "{\"op\":\"remove\",\"path\":\"/a/0\"}]");
	cr_assert_eq(wmap_patch_apply(&doc, ops, &err), 0, "%s", err.message);
	expect_json(doc, "{\"a\":[9,2,3],\"b\":{\"c\":2},\"d\":{},\"e\":2}");
	json_t *bad = parse("[{\"op\":\"add\",\"path\":\"/x/y\",\"value\":1}]");
	cr_expect_eq(wmap_patch_apply(&doc, bad, &err), WMAP_EINVAL, "parent missing");
	cr_expect(strstr(err.message, "patch[0]") != NULL, "%s", err.message);
	json_decref(bad);
	bad = parse("[{\"op\":\"test\",\"path\":\"/e\",\"value\":3}]");
	cr_expect_eq(wmap_patch_apply(&doc, bad, &err), WMAP_EINVAL);
	json_decref(bad);
	json_decref(ops);
	json_decref(doc);
}

/* (input, expected) pairs; "~" marks "shortened with a hash suffix". */
static const struct {
	const char *in;
	const char *want;
} values[] = {
	{ "JobSet.jobset.x-k8s.io", "JobSet.jobset.x-k8s.io" },
	{ "", "" },
	{ "a_b-c.d", "a_b-c.d" },
	{ "-leading", "~" },
	{ "trailing.", "~" },
	{ "has space", "~" },
	{ "ünïcode", "~" },
	{ "a-very-long-workload-name-that-goes-on-and-on-beyond-sixty-three-characters", "~" },
	{ "7", "7" },
	{ "-", "~" },
	{ "a0000000000000000000000000000000000000000000000000000000000000z",
	  "a0000000000000000000000000000000000000000000000000000000000000z" }, /* 63: kept */
	{ "a00000000000000000000000000000000000000000000000000000000000000z", "~" }, /* 64 */
};

Test(patch, label_values_are_valid_or_shortened_with_a_stable_hash)
{
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char buf[64], again[64];
		size_t n = wmap_label_value(buf, sizeof(buf), values[i].in);
		cr_expect_eq(n, strlen(buf), "the length written");
		cr_expect(wmap_label_value_valid(buf), "\"%s\" -> \"%s\" is not valid",
			  values[i].in, buf);
		if (strcmp(values[i].want, "~") != 0) {
			cr_expect_str_eq(buf, values[i].want);
			continue;
		}
		cr_expect_str_neq(buf, values[i].in);
		cr_expect_leq(strlen(buf), 63);
		wmap_label_value(again, sizeof(again), values[i].in);
		cr_expect_str_eq(buf, again, "stable");
	}
	char a[64], b[64];
	wmap_label_value(a, sizeof(a), "x-1234567890123456789012345678901234567890123456789012345678901");
	wmap_label_value(b, sizeof(b), "x-1234567890123456789012345678901234567890123456789012345678902");
	cr_expect_str_neq(a, b, "inputs differing past the cut stay distinct");
}

Test(patch, label_keys)
{
	cr_expect(wmap_label_key_valid("wmap.io/component"));
	cr_expect(wmap_label_key_valid("app"));
	cr_expect(wmap_label_key_valid("kai.scheduler/queue"));
	cr_expect_not(wmap_label_key_valid("Bad.Prefix/x"));
	cr_expect_not(wmap_label_key_valid("a/b/c"));
	cr_expect_not(wmap_label_key_valid("wmap.io/"));
	cr_expect_not(wmap_label_key_valid(""));
	cr_expect_not(wmap_label_key_valid("-x"));
}

/* The builder remembers its last walk (several keys of one map in a row): a map replaced
 * above it, or created on the way to it, must be seen by the next key. */
Test(patch, sees_changes_made_above_a_map_it_just_wrote_to)
{
	json_t *doc = parse("{\"a\":{\"b\":{}}}");
	wmap_patch *pb;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/a/b", "k", json_integer(1), WMAP_PATCH_DEFAULT, NULL,
				    &err), 0);
	/* /a/b itself is replaced: later keys of /a/b go into the new value, not after it. */
	cr_assert_eq(wmap_patch_set(pb, "/a", "b", parse("{\"new\":true}"), WMAP_PATCH_OVERRIDE,
				    NULL, &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/a/b", "k2", json_integer(2), WMAP_PATCH_DEFAULT, NULL,
				    &err), 0);
	json_t *ops = ops_of(pb);
	expect_json(ops, "[{\"op\":\"add\",\"path\":\"/a/b/k\",\"value\":1},"
			 "{\"op\":\"add\",\"path\":\"/a/b\",\"value\":{\"new\":true,\"k2\":2}}]");
	json_decref(ops);
	wmap_patch_free(pb);

	/* A missing map created by the first key, then filled, then a sibling set above it. */
	cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/a/x/y", "k1", json_integer(1), WMAP_PATCH_DEFAULT, NULL,
				    &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/a/x/y", "k2", json_integer(2), WMAP_PATCH_DEFAULT, NULL,
				    &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/a/x", "s", json_integer(3), WMAP_PATCH_DEFAULT, NULL,
				    &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/a/x/y", "k3", json_integer(4), WMAP_PATCH_DEFAULT, NULL,
				    &err), 0);
	ops = ops_of(pb);
	expect_json(ops, "[{\"op\":\"add\",\"path\":\"/a/x\","
			 "\"value\":{\"y\":{\"k1\":1,\"k2\":2,\"k3\":4},\"s\":3}}]");
	json_decref(ops);
	json_t *out = applied(doc, pb);
	expect_json(out, "{\"a\":{\"b\":{},\"x\":{\"y\":{\"k1\":1,\"k2\":2,\"k3\":4},\"s\":3}}}");
	json_decref(out);
	wmap_patch_free(pb);
	json_decref(doc);
}

/* A member set to null and then filled: null counts as absent, so the second call creates
 * the map whole at the same path, and that later op is the one the overlay reads. */
Test(patch, a_whole_value_over_a_null_one_is_what_later_calls_see)
{
	json_t *doc = parse("{\"a\":{}}");
	wmap_patch *pb;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/a", "m", json_null(), WMAP_PATCH_DEFAULT, NULL, &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/a/m", "k", json_integer(1), WMAP_PATCH_DEFAULT, NULL,
				    &err), 0);
	cr_assert_eq(wmap_patch_set(pb, "/a/m", "j", json_integer(2), WMAP_PATCH_DEFAULT, NULL,
				    &err), 0);
	cr_expect_eq(json_integer_value(wmap_patch_get(pb, "/a/m/j")), 2);
	json_t *out = applied(doc, pb);
	expect_json(out, "{\"a\":{\"m\":{\"k\":1,\"j\":2}}}");
	json_decref(out);
	char *text = NULL;
	cr_assert_eq(wmap_patch_dump(&text, NULL, pb, &err), 0);
	cr_expect_str_eq(text, "[{\"op\":\"add\",\"path\":\"/a/m\",\"value\":null},"
			       "{\"op\":\"add\",\"path\":\"/a/m\",\"value\":{\"k\":1,\"j\":2}}]");
	free(text);
	wmap_patch_free(pb);
	json_decref(doc);
}

Test(patch, creates_list_entries_at_the_end_and_writes_through_them)
{
	json_t *doc = t_yaml("spec: {patches: [{manager: kueue}]}\n");
	wmap_patch *pb = NULL;
	wmap_error err = {0};
	char *got = NULL;
	cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
	/* Two new entries for one list in one patch: the second takes the next index. */
	cr_assert_eq(wmap_patch_create(pb, "/spec/patches/1", json_pack("{s:s}", "manager", "a"), &got, &err), 0,
		     "%s", err.message);
	cr_expect_str_eq(got, "/spec/patches/1");
	free(got);
	cr_assert_eq(wmap_patch_create(pb, "/spec/patches/1", json_pack("{s:s}", "manager", "b"), &got, &err), 0);
	cr_expect_str_eq(got, "/spec/patches/2", "an entry of another key goes after the first");
	free(got);
	cr_assert_eq(wmap_patch_create(pb, "/spec/patches/1", json_pack("{s:s}", "manager", "a"), &got, &err), 0);
	cr_expect_str_eq(got, "/spec/patches/1", "the entry is there: nothing added");
	free(got);
	cr_assert_eq(wmap_patch_create(pb, "/spec/patches/1/x", json_pack("[]"), &got, &err), 0);
	free(got);
	/* Writes below a created entry go into it: still one operation for it. */
	cr_assert_eq(wmap_patch_set(pb, "/spec/patches/1/meta/labels", "k", json_string("v"), WMAP_PATCH_DEFAULT,
				    NULL, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_patch_create(pb, "/spec/other/0", json_object(), &got, &err), WMAP_EEVAL);
	cr_expect_eq(wmap_patch_len(pb), 2);
	json_t *out = json_deep_copy(doc);
	cr_assert_eq(wmap_patch_apply(&out, wmap_patch_ops(pb), &err), 0, "%s", err.message);
	json_t *want = t_yaml("spec: {patches: [{manager: kueue}, {manager: a, x: [], meta: {labels: {k: v}}},"
			      " {manager: b}]}\n");
	cr_expect(json_equal(out, want));
	json_decref(want);
	json_decref(out);
	wmap_patch_free(pb);
	json_decref(doc);
}

/* Writes that go from one list entry to the next and back to a map made a moment ago: the
 * builder resumes each walk after the tokens it shares with the last one, and must see the
 * maps its own operations made (tests the remembered steps, issue 27). */
Test(patch, walks_that_share_leading_tokens_see_every_earlier_write)
{
	json_t *doc = parse("{\"spec\":{\"l\":[{\"t\":{\"metadata\":{}}},{\"t\":{}},"
			    "{\"t\":{\"metadata\":{\"labels\":{\"a\":\"1\"}}}},{\"t\":null}]}}");
	wmap_patch *p;
	wmap_error err;
	cr_assert_eq(wmap_patch_new(&p, doc, &err), 0);
	char base[64], meta[80], labels[96], notes[96];
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 4; i++) {
			snprintf(base, sizeof(base), "/spec/l/%d/t", i);
			snprintf(meta, sizeof(meta), "%s/metadata", base);
			snprintf(labels, sizeof(labels), "%s/labels", meta);
			snprintf(notes, sizeof(notes), "%s/annotations", meta);
			cr_assert_eq(wmap_patch_set(p, labels, "k", json_string("v"),
						    WMAP_PATCH_OVERRIDE, NULL, &err), 0, "%s", err.message);
			cr_assert_eq(wmap_patch_set(p, notes, "n", json_string("m"),
						    WMAP_PATCH_OVERRIDE, NULL, &err), 0, "%s", err.message);
			cr_assert_eq(wmap_patch_set(p, labels, "k2", json_string("v2"),
						    WMAP_PATCH_OVERRIDE, NULL, &err), 0, "%s", err.message);
			cr_assert_eq(wmap_patch_set(p, base, "x", json_integer(i),
						    WMAP_PATCH_OVERRIDE, NULL, &err), 0, "%s", err.message);
		}
	}
	json_t *ops = ops_of(p);
	/* 3 + 2 + 4 + 1 (the null template replaced whole); the second round adds none. */
	cr_expect_eq(json_array_size(ops), 10, "%zu ops", json_array_size(ops));
	json_t *got = json_deep_copy(doc);
	cr_assert_eq(wmap_patch_apply(&got, ops, &err), 0, "%s", err.message);
	json_t *want = parse(
		"{\"spec\":{\"l\":["
		"{\"t\":{\"metadata\":{\"labels\":{\"k\":\"v\",\"k2\":\"v2\"},"
		"\"annotations\":{\"n\":\"m\"}},\"x\":0}},"
		"{\"t\":{\"metadata\":{\"labels\":{\"k\":\"v\",\"k2\":\"v2\"},"
		"\"annotations\":{\"n\":\"m\"}},\"x\":1}},"
		"{\"t\":{\"metadata\":{\"labels\":{\"a\":\"1\",\"k\":\"v\",\"k2\":\"v2\"},"
		"\"annotations\":{\"n\":\"m\"}},\"x\":2}},"
		"{\"t\":{\"metadata\":{\"labels\":{\"k\":\"v\",\"k2\":\"v2\"},"
		"\"annotations\":{\"n\":\"m\"}},\"x\":3}}]}}");
	char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
	char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
	cr_expect_str_eq(g, w);
	free(g);
	free(w);
	json_decref(want);
	json_decref(got);
	json_decref(ops);
	wmap_patch_free(p);
	json_decref(doc);
}

/* wmap_patch_set_str and _set_strs keep string values as text: the patch, its operations,
 * the overlay, the results and the errors must be those of wmap_patch_set with a jansson
 * string, over maps that exist, are null, are missing (one `add` holding them all), sit
 * inside an op's value, or are not maps; keys and values that need escaping or are not
 * UTF-8; both modes; a jansson write through a map kept as text. */
static const char *str_parents[] = {
	"/a/metadata/labels",  "/b/metadata/labels",	"/b/metadata/annotations",
	"/c/metadata/labels",  "/d/metadata/labels",	"/e/0/metadata/labels",
	"/e/0/metadata/a~1b/labels", "/b/x~0y/labels", "bad", "/nope/deep/labels",
	"/a/metadata/labels/x", "/b/metadata",
};
static const char *str_keys[] = { "x", "k/1", "t~", "wmap.io/component", "q\"uote", "\xc3\xa9" };
static const char *str_values[] = { "1", "v", "2", "", "\xc3\xa9", "\xff", "a\"b", "line\n" };

typedef struct str_step {
	const char *parent, *key, *value;
	wmap_patch_mode mode;
	int as_json; /* a jansson integer through wmap_patch_set (every builder alike) */
	int as_object; /* with as_json: an empty object instead (a map later runs go into) */
} str_step;

static json_t *json_of(const str_step *s)
{
	return s->as_object ? json_object() : json_integer(7);
}

static char *dump_of(wmap_patch *p)
{
	char *t = NULL;
	size_t n = 0;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_patch_dump(&t, &n, p, &err), 0);
	cr_assert_eq(strlen(t), n);
	return t;
}

static void expect_same_builders(wmap_patch *a, wmap_patch *b, const char *what)
{
	char *ta = dump_of(a), *tb = dump_of(b);
	cr_expect_str_eq(tb, ta, "%s", what);
	cr_expect_eq(wmap_patch_len(b), wmap_patch_len(a), "%s", what);
	for (size_t i = 0; i < sizeof(str_parents) / sizeof(str_parents[0]); i++) {
		const json_t *ga = wmap_patch_get(a, str_parents[i]);
		const json_t *gb = wmap_patch_get(b, str_parents[i]);
		cr_expect(ga == gb || json_equal(ga, gb), "%s: get %s", what, str_parents[i]);
	}
	json_t *oa = ops_of(a), *ob = ops_of(b);
	cr_expect(json_equal(oa, ob), "%s: ops", what);
	char *ja = json_dumps(oa, JSON_COMPACT);
	cr_expect_str_eq(ja, ta, "%s: ops as text", what); /* the dump is the ops' text */
	free(ja);
	json_decref(oa);
	json_decref(ob);
	free(ta);
	free(tb);
}

/* A node given to wmap_patch_set_strs_in is the document's: an op that owns its pointer, a
 * container on the way or the missing member after it shadows it, as it does a walk from
 * the root. Templates with labels, with metadata only, with neither. */
Test(patch, set_strs_in_a_given_node_is_shadowed_by_ops)
{
	json_t *doc = parse("{\"t\":{\"metadata\":{\"labels\":{\"x\":\"1\"}}},"
			    "\"v\":{\"metadata\":{\"name\":\"n\"}},\"w\":{},\"u\":{}}");
	const json_t *t = json_object_get(json_object_get(doc, "t"), "metadata");
	const struct {
		const char *tmpl, *meta, *parent;
		const json_t *node;
		size_t at;
	} given[] = {
		{ "/t", "/t/metadata", "/t/metadata/labels", json_object_get(t, "labels"), 18 },
		{ "/v", "/v/metadata", "/v/metadata/labels",
		  json_object_get(json_object_get(doc, "v"), "metadata"), 11 },
		{ "/w", "/w/metadata", "/w/metadata/labels", json_object_get(doc, "w"), 2 },
	};
	for (size_t g = 0; g < sizeof(given) / sizeof(given[0]); g++) {
		for (int before = 0; before < 3; before++) {
			char *dumps[2];
			for (int with = 0; with < 2; with++) {
				wmap_patch *p;
				wmap_error err = { 0 };
				cr_assert_eq(wmap_patch_new(&p, doc, &err), 0);
				if (before == 1) /* the labels set whole */
					cr_assert_eq(wmap_patch_set(p, given[g].meta, "labels",
								    json_pack("{s:s}", "y", "2"),
								    WMAP_PATCH_OVERRIDE, NULL, &err), 0);
				if (before == 2) /* the metadata set whole */
					cr_assert_eq(wmap_patch_set(p, given[g].tmpl, "metadata",
								    json_pack("{s:{s:s}}", "labels", "w", "4"),
								    WMAP_PATCH_OVERRIDE, NULL, &err), 0);
				/* a walk elsewhere is remembered in between */
				cr_assert_eq(wmap_patch_set_str(p, "/u", "k", "v", WMAP_PATCH_DEFAULT,
								NULL, &err), 0);
				wmap_patch_str m[2] = { { "z", "3", WMAP_PATCH_OVERRIDE, 0, 1, 0, 0, 0 },
							{ "x", "5", WMAP_PATCH_DEFAULT, 0, 1, 0, 0, 0 } };
				cr_assert_eq(wmap_patch_set_strs_in(p, given[g].parent,
								    strlen(given[g].parent),
								    with ? given[g].node : NULL,
								    given[g].at, m, 2, &err), 0, "%s",
					     err.message);
				cr_assert_eq(wmap_patch_set_str(p, given[g].parent, "q", "6",
								WMAP_PATCH_DEFAULT, NULL, &err), 0);
				dumps[with] = dump_of(p);
				wmap_patch_free(p);
			}
			cr_expect_str_eq(dumps[1], dumps[0], "%s, ops before %d", given[g].parent, before);
			if (before == 1)
				cr_expect(strstr(dumps[1], "{\"y\":\"2\",\"z\":\"3\",\"x\":\"5\",\"q\":\"6\"}"),
					  "%s", dumps[1]);
			free(dumps[0]);
			free(dumps[1]);
		}
	}
	json_decref(doc);
}

Test(patch, string_members_kept_as_text_give_the_same_patch)
{
	json_t *doc = parse("{\"a\":{\"metadata\":{\"labels\":{\"x\":\"1\",\"k/1\":\"v\",\"n\":null}}},"
			    "\"b\":{\"spec\":{}},\"c\":{\"metadata\":{\"labels\":null}},"
			    "\"d\":{\"metadata\":\"str\"},\"e\":[{\"metadata\":{}}]}");
	uint32_t seed = 12345;
#define NEXT(n) ((seed = seed * 1103515245u + 12345u) >> 8) % (n)
	for (int round = 0; round < 400; round++) {
		str_step steps[10];
		size_t n_steps = 1 + NEXT(10);
		for (size_t i = 0; i < n_steps; i++) {
			/* runs at one parent, as templates' labels come */
			steps[i].parent = (i && NEXT(3)) ? steps[i - 1].parent
							 : str_parents[NEXT(sizeof(str_parents) / sizeof(str_parents[0]))];
			steps[i].key = str_keys[NEXT(6) < 3 ? NEXT(3) : NEXT(6)];
			steps[i].value = str_values[NEXT(4) ? NEXT(4) : NEXT(8)];
			steps[i].mode = NEXT(2) ? WMAP_PATCH_OVERRIDE : WMAP_PATCH_DEFAULT;
			steps[i].as_json = NEXT(12) == 0;
			steps[i].as_object = NEXT(2);
		}
		wmap_patch *a, *b, *c;
		wmap_error ea = { 0 }, eb = { 0 }, ec = { 0 };
		cr_assert_eq(wmap_patch_new(&a, doc, &ea), 0);
		cr_assert_eq(wmap_patch_new(&b, doc, &eb), 0);
		cr_assert_eq(wmap_patch_new(&c, doc, &ec), 0);
		int failed = 0, changed_a[10], changed_c[10] = { 0 };
		char what[64];
		snprintf(what, sizeof(what), "round %d", round);
		for (size_t i = 0; i < n_steps; i++) {
			const str_step *s = &steps[i];
			int ca = -1, cb = -2, ra, rb;
			if (s->as_json) {
				ra = wmap_patch_set(a, s->parent, s->key, json_of(s), s->mode, &ca, &ea);
				rb = wmap_patch_set(b, s->parent, s->key, json_of(s), s->mode, &cb, &eb);
			} else if (i % 4 == 3 && !strchr(s->key, '~') && !strchr(s->key, '/')) {
				/* the same member by its whole pointer */
				char at[128];
				snprintf(at, sizeof(at), "%s/%s", s->parent, s->key);
				ra = wmap_patch_set_at(a, at, json_string(s->value), s->mode, &ca, &ea);
				rb = wmap_patch_set_str_at(b, at, s->value, s->mode, &cb, &eb);
			} else {
				ra = wmap_patch_set(a, s->parent, s->key, json_string(s->value), s->mode,
						    &ca, &ea);
				rb = wmap_patch_set_str(b, s->parent, s->key, s->value, s->mode, &cb, &eb);
			}
			changed_a[i] = ra ? 0 : ca;
			cr_expect_eq(rb, ra, "%s step %zu: %s / %s", what, i, s->parent, s->key);
			if (ra && rb) {
				cr_expect_str_eq(eb.message, ea.message, "%s step %zu", what, i);
				failed = 1;
			} else {
				cr_expect_eq(cb, ca, "%s step %zu: changed", what, i);
			}
		}
		expect_same_builders(a, b, what);
		/* The same steps with each run at one parent in one wmap_patch_set_strs call. */
		for (size_t i = 0; i < n_steps && !failed;) {
			size_t j = i;
			wmap_patch_str m[10];
			if (steps[i].as_json) {
				cr_assert_eq(wmap_patch_set(c, steps[i].parent, steps[i].key, json_of(&steps[i]),
							    steps[i].mode, &changed_c[i], &ec), 0);
				i++;
				continue;
			}
			for (; j < n_steps && !steps[j].as_json && steps[j].parent == steps[i].parent; j++)
				m[j - i] = (wmap_patch_str){ steps[j].key, steps[j].value, steps[j].mode,
							     -1, 0, 0, 0, 0 };
			/* every other run whose keys are distinct says so (known_distinct): the
			 * builder must come to the same patch without its own check */
			if (NEXT(2)) {
				int distinct = 1;
				for (size_t a1 = 0; a1 < j - i; a1++)
					for (size_t a2 = 0; a2 < a1; a2++)
						distinct &= strcmp(m[a1].key, m[a2].key) != 0;
				for (size_t a1 = 0; a1 < j - i; a1++)
					m[a1].known_distinct = distinct;
			}
			/* every other run given the document's value at a prefix of its parent (the
			 * whole of it, a shorter one, or the root), as admission gives a template's */
			const char *par = steps[i].parent;
			size_t at = 0;
			const json_t *node = NULL;
			if (NEXT(2) && par[0] == '/') {
				/* the deepest value the document has on the way (an object short of
				 * parent), as wmap_patch_set_strs_in wants it */
				char pre[128];
				for (size_t q = 0;; q++) {
					if (par[q] != '/' && par[q] != '\0')
						continue;
					snprintf(pre, sizeof(pre), "%.*s", (int)q, par);
					const json_t *v = wmap_pointer_lookup(doc, pre);
					if (!v || json_is_null(v))
						break;
					node = v;
					at = q;
					if (!par[q] || !json_is_object(v))
						break;
				}
				if (node && at < strlen(par) && !json_is_object(node))
					node = NULL;
			}
			cr_assert_eq(wmap_patch_set_strs_in(c, par, strlen(par), node, at, m, j - i, &ec), 0,
				     "%s: %s", what, ec.message);
			for (size_t k = i; k < j; k++)
				changed_c[k] = m[k - i].changed;
			i = j;
		}
		if (!failed) {
			for (size_t i = 0; i < n_steps; i++)
				cr_expect_eq(changed_c[i], changed_a[i], "%s step %zu: changed (strs)", what, i);
			expect_same_builders(a, c, what);
			/* idempotence: the patched document gives an empty patch */
			json_t *done = applied(doc, c);
			wmap_patch *d;
			wmap_error ed = { 0 };
			cr_assert_eq(wmap_patch_new(&d, done, &ed), 0);
			for (size_t i = 0; i < n_steps; i++) {
				if (!steps[i].as_json)
					cr_assert_eq(wmap_patch_set_str(d, steps[i].parent, steps[i].key,
									steps[i].value, WMAP_PATCH_DEFAULT,
									NULL, &ed), 0);
			}
			cr_expect_eq(wmap_patch_len(d), 0, "%s: second pass", what);
			wmap_patch_free(d);
			json_decref(done);
		}
		wmap_patch_free(a);
		wmap_patch_free(b);
		wmap_patch_free(c);
	}
#undef NEXT
	json_decref(doc);
}

/* Labels marked plain by the caller are written as they are; a map kept as text is made
 * JSON when a later write goes through it, with the same result. */
Test(patch, identity_labels_in_one_call)
{
	json_t *doc = parse("{\"spec\":{\"groups\":[{\"template\":{\"spec\":{}}},"
			    "{\"template\":{\"metadata\":{\"labels\":{\"app\":\"x\"}}}}]}}");
	wmap_patch *pb;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
	for (int j = 0; j < 2; j++) {
		char lab[96];
		snprintf(lab, sizeof(lab), "/spec/groups/%d/template/metadata/labels", j);
		wmap_patch_str m[] = {
			{ "wmap.io/workload-kind", "RayCluster.ray.io", WMAP_PATCH_OVERRIDE, 0, 1, 0, 0, 0 },
			{ "wmap.io/component", "worker", WMAP_PATCH_OVERRIDE, 0, 1, 0, 0, 0 },
			{ "wmap.io/component", "worker", WMAP_PATCH_OVERRIDE, 0, 1, 0, 0, 0 },
		};
		cr_assert_eq(wmap_patch_set_strs(pb, lab, m, 3, &err), 0, "%s", err.message);
		cr_expect_eq(m[0].changed, 1);
		cr_expect_eq(m[1].changed, 1);
		cr_expect_eq(m[2].changed, 0);
	}
	char *t = dump_of(pb);
	cr_expect_str_eq(t, "[{\"op\":\"add\",\"path\":\"/spec/groups/0/template/metadata\",\"value\":"
			    "{\"labels\":{\"wmap.io/workload-kind\":\"RayCluster.ray.io\","
			    "\"wmap.io/component\":\"worker\"}}},"
			    "{\"op\":\"add\",\"path\":\"/spec/groups/1/template/metadata/labels/"
			    "wmap.io~1workload-kind\",\"value\":\"RayCluster.ray.io\"},"
			    "{\"op\":\"add\",\"path\":\"/spec/groups/1/template/metadata/labels/"
			    "wmap.io~1component\",\"value\":\"worker\"}]");
	free(t);
	/* a jansson write into the map kept as text */
	cr_assert_eq(wmap_patch_set(pb, "/spec/groups/0/template/metadata/labels", "n",
				    json_integer(1), WMAP_PATCH_OVERRIDE, NULL, &err), 0);
	t = dump_of(pb);
	cr_expect(strstr(t, "{\"labels\":{\"wmap.io/workload-kind\":\"RayCluster.ray.io\","
			    "\"wmap.io/component\":\"worker\",\"n\":1}}") != NULL, "%s", t);
	free(t);
	json_t *out = applied(doc, pb);
	cr_expect_str_eq(json_string_value(wmap_pointer_lookup(
				 out, "/spec/groups/1/template/metadata/labels/app")), "x");
	json_decref(out);
	wmap_patch_free(pb);
	json_decref(doc);
}

/* A map created whole by one call (its members plain, lengths given or not, room reserved
 * or not) gives the same patch as member by member, and takes later writes: a new key, the
 * same members again (no change), a jansson write through it. */
Test(patch, a_map_created_whole_takes_later_writes)
{
	json_t *doc = parse("{\"spec\":{\"template\":{\"spec\":{}}}}");
	const char *lab = "/spec/template/metadata/labels";
	char *dumps[2];
	for (int whole = 0; whole < 2; whole++) {
		wmap_patch *pb;
		wmap_error err = { 0 };
		cr_assert_eq(wmap_patch_new(&pb, doc, &err), 0);
		if (whole)
			wmap_patch_reserve(pb, 8);
		wmap_patch_str m[] = {
			{ "wmap.io/workload-kind", "JobSet", WMAP_PATCH_OVERRIDE, 0, 1, 21, 6, 0 },
			{ "wmap.io/workload-name", "a", WMAP_PATCH_OVERRIDE, 0, 1, 0, 0, 0 },
			{ "b/c", "d", WMAP_PATCH_DEFAULT, 0, 0, 0, 0, 0 },
		};
		if (whole) {
			cr_assert_eq(wmap_patch_set_strs(pb, lab, m, 3, &err), 0, "%s", err.message);
			for (int i = 0; i < 3; i++)
				cr_expect_eq(m[i].changed, 1);
		} else {
			for (int i = 0; i < 3; i++)
				cr_assert_eq(wmap_patch_set_str(pb, lab, m[i].key, m[i].value, m[i].mode,
								NULL, &err), 0);
		}
		int changed = 0;
		cr_assert_eq(wmap_patch_set_str(pb, lab, "e", "f", WMAP_PATCH_DEFAULT, &changed, &err),
			     0);
		cr_expect_eq(changed, 1);
		cr_assert_eq(wmap_patch_set_strs(pb, lab, m, 3, &err), 0);
		for (int i = 0; i < 3; i++)
			cr_expect_eq(m[i].changed, 0);
		cr_assert_eq(wmap_patch_set(pb, lab, "n", json_integer(1), WMAP_PATCH_OVERRIDE, NULL,
					    &err), 0);
		dumps[whole] = dump_of(pb);
		wmap_patch_free(pb);
	}
	cr_expect_str_eq(dumps[1], dumps[0]);
	cr_expect_str_eq(dumps[0], "[{\"op\":\"add\",\"path\":\"/spec/template/metadata\",\"value\":"
				   "{\"labels\":{\"wmap.io/workload-kind\":\"JobSet\","
				   "\"wmap.io/workload-name\":\"a\",\"b/c\":\"d\",\"e\":\"f\","
				   "\"n\":1}}}]");
	free(dumps[0]);
	free(dumps[1]);
	json_decref(doc);
}
