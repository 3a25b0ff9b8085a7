/* Admission: AdmissionReview in, response out. Every fixture's templates stamped and the
 * second pass empty; the envelope checks; fail open; UPDATE; generateName; policies in
 * both modes; enforcement; every scheduler's keys in their place. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "wmap/base64.h"
#include "wmap/admission.h"
#include "wmap/audit.h"
#include "wmap/patch.h"
#include "wmap/workload.h"

static wmap_registry *reg;
static wmap_engine *eng;

static void setup(void)
{
	t_catalog_engine(&reg, &eng);
}

static void teardown(void)
{
	t_catalog_engine_free(reg, eng);
}

TestSuite(admission, .init = setup, .fini = teardown);

#define JOBSET "tests/fixtures/jobset-x-k8s-io-jobset-v1alpha2/created.yaml"

static json_t *load(const char *path)
{
	char msg[WMAP_ERROR_MAX];
	json_t *o = t_load_file(path, msg, sizeof(msg));
	cr_assert_not_null(o, "%s", msg);
	return o;
}

static json_t *review_of(json_t *object, const char *op, const char *uid)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:O, s:b}}", "apiVersion",
			 "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid", uid,
			 "operation", op, "namespace", "ml-team", "object", object, "dryRun", 0);
}

static json_t *decode_patch(const json_t *resp)
{
	const char *b64 = json_string_value(json_object_get(resp, "patch"));
	if (!b64)
		return json_array();
	/* Decode standard base64 with a small table: an independent check of the encoder. */
	size_t n = strlen(b64), o = 0;
	unsigned char *buf = malloc(n);
	unsigned v = 0;
	int bits = 0;
	for (size_t i = 0; i < n && b64[i] != '='; i++) {
		const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *p = strchr(tab, b64[i]);
		cr_assert_not_null(p);
		v = v << 6 | (unsigned)(p - tab);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[o++] = (unsigned char)(v >> bits);
		}
	}
	json_error_t e;
	json_t *patch = json_loadb((const char *)buf, o, 0, &e);
	free(buf);
	cr_assert_not_null(patch, "patch is not JSON: %s", e.text);
	return patch;
}

/* Mutates object (CREATE) and returns the patched copy; *n_ops gets the patch length. */
static json_t *mutate(json_t *object, const wmap_admission_config *cfg, size_t *n_ops,
		      json_t **warnings_out)
{
	json_t *patch = NULL, *warnings = NULL;
	wmap_error err = { 0 };
	const char *reason = NULL;
	int rc = wmap_admission_mutate(&patch, &warnings, &reason, eng, cfg, object, "CREATE",
				       NULL, &err);
	cr_assert_eq(rc, 0, "%s (%s)", err.message, reason ? reason : "");
	json_t *out = json_deep_copy(object);
	cr_assert_eq(wmap_patch_apply(&out, patch, &err), 0, "patch does not apply: %s",
		     err.message);
	if (n_ops)
		*n_ops = json_array_size(patch);
	if (warnings_out)
		*warnings_out = warnings;
	else
		json_decref(warnings);
	json_decref(patch);
	return out;
}

static const char *label_of(const json_t *labels, const char *key)
{
	return json_string_value(json_object_get(labels, key));
}

/* The labels map of every pod-bearing instance of object, via the resolver. */
static void check_stamped(const char *path, json_t *original, json_t *result)
{
	wmap_workload *w = NULL, *w0 = NULL;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_workload_resolve(&w, eng, result, NULL, &err), 0, "%s: %s", path,
		     err.message);
	cr_assert_eq(wmap_workload_resolve(&w0, eng, original, NULL, &err), 0);
	char kind[128];
	wmap_admission_kind(kind, sizeof(kind), original);
	for (size_t k = 0; k < w->n_nodes; k++) {
		for (size_t i = 0; i < w->nodes[k].n_instances; i++) {
			const wmap_instance *in = &w->nodes[k].instances[i];
			const wmap_pod *pod = &in->pod;
			json_t *labels = NULL;
			const char *where = NULL;
			if (!in->has_pod)
				continue;
			if (pod->shape == WMAP_SPEC_FRAGMENTED) {
				where = pod->frag[WMAP_FRAG_LABELS].pointer;
				labels = pod->frag[WMAP_FRAG_LABELS].value;
			} else if (pod->metadata.pointer) {
				char *p = wmap_pointer_join(pod->metadata.pointer, "labels");
				where = pod->metadata.pointer;
				labels = wmap_pointer_lookup(result, p);
				free(p);
			}
			if (!where)
				continue;   /* nowhere to write: the webhook warns instead */
			if (pod->shape == WMAP_SPEC_FRAGMENTED) {
				/* a part the object does not have is not created */
				char *parent = strndup(where, (size_t)(strrchr(where, '/') - where));
				int present = wmap_pointer_lookup(original, parent) != NULL;
				free(parent);
				if (!present)
					continue;
			}
			const char *comp = w->nodes[k].def->name;
			const char *got = label_of(labels, "wmap.io/component");
			cr_assert_not_null(got, "%s: %s at %s has no component label", path, comp,
					   where);
			/* Templates sharing one location (alternatives) carry one of their names. */
			int ok = strcmp(got, comp) == 0;
			for (size_t k2 = 0; k2 < w->n_nodes && !ok; k2++) {
				for (size_t i2 = 0; i2 < w->nodes[k2].n_instances && !ok; i2++) {
					const wmap_pod *p2 = &w->nodes[k2].instances[i2].pod;
					const char *w2 = p2->shape == WMAP_SPEC_FRAGMENTED
								 ? p2->frag[WMAP_FRAG_LABELS].pointer
								 : p2->metadata.pointer;
					ok = w2 && strcmp(w2, where) == 0 &&
					     strcmp(got, w->nodes[k2].def->name) == 0;
				}
			}
			cr_expect(ok, "%s: %s at %s is labelled %s", path, comp, where, got);
			cr_expect_str_eq(label_of(labels, "wmap.io/workload-kind"), kind, "%s", path);
			if (w->name)
				cr_expect_str_eq(label_of(labels, "wmap.io/workload-name"), w->name,
						 "%s", path);
			if (w->nodes[k].def->instance_id_path)
				cr_expect_not_null(label_of(labels, "wmap.io/instance"), "%s: %s", path,
						   comp);
			/* labels the user had survive */
			json_t *before = NULL;
			if (pod->shape == WMAP_SPEC_FRAGMENTED) {
				before = wmap_pointer_lookup(original, where);
			} else {
				char *p = wmap_pointer_join(where, "labels");
				before = wmap_pointer_lookup(original, p);
				free(p);
			}
			const char *key;
			json_t *val;
			json_object_foreach(before, key, val) {
				if (strncmp(key, "wmap.io/", 8) != 0)
					cr_expect(json_equal(json_object_get(labels, key), val),
						  "%s: label %s lost", path, key);
			}
		}
	}
	wmap_workload_free(w);
	wmap_workload_free(w0);
}

static int has_template(json_t *obj)
{
	wmap_workload *w = NULL;
	wmap_error err = { 0 };
	int any = 0;
	cr_assert_eq(wmap_workload_resolve(&w, eng, obj, NULL, &err), 0, "%s", err.message);
	for (size_t k = 0; k < w->n_nodes; k++)
		for (size_t i = 0; i < w->nodes[k].n_instances; i++) {
			const wmap_instance *in = &w->nodes[k].instances[i];
			any |= in->has_pod && (in->pod.template_.value || in->pod.spec.value);
		}
	wmap_workload_free(w);
	return any;
}

Test(admission, every_fixture_is_stamped_and_the_second_pass_is_empty)
{
	size_t n = 0;
	char **files = t_glob("tests/fixtures/*/*.yaml", &n);
	size_t done = 0;
	cr_assert_gt(n, 0);
	for (size_t f = 0; f < n; f++) {
		if (strstr(files[f], "/bad/"))
			continue;
		json_t *obj = load(files[f]);
		size_t ri;
		json_t *ref;
		int owned = 0;
		json_array_foreach(json_object_get(json_object_get(obj, "metadata"),
						   "ownerReferences"), ri, ref)
			owned |= json_is_true(json_object_get(ref, "controller"));
		if (owned) {
			/* a controller's object: left alone (test below) */
			json_decref(obj);
			continue;
		}
		for (int s = 0; s < WMAP_GANG_COUNT; s++) {
			wmap_admission_config cfg = { 0 };
			cfg.scheduler = (wmap_gang_scheduler)s;
			cfg.queue = "q1";
			size_t ops = 0, again = 0;
			json_t *warnings = NULL;
			json_t *out = mutate(obj, &cfg, &ops, &warnings);
			/* No patch only when the definition gives nowhere to write (and says so),
			 * or the object holds no pod template at all (a RayJob on an existing
			 * cluster). */
			cr_expect(ops > 0 || json_array_size(warnings) > 0 || !has_template(obj),
				  "%s: no patch", files[f]);
			json_decref(warnings);
			check_stamped(files[f], obj, out);
			json_t *out2 = mutate(out, &cfg, &again, NULL);
			cr_expect_eq(again, 0, "%s (%s): second pass has %zu ops", files[f],
				     wmap_gang_scheduler_name(cfg.scheduler), again);
			cr_expect(json_equal(out, out2));
			json_decref(out2);
			json_decref(out);
		}
		json_decref(obj);
		done++;
	}
	t_free_list(files, n);
	cr_expect_gt(done, 10);
}

Test(admission, review_answers_in_kind_with_a_base64_json_patch)
{
	json_t *obj = load(JOBSET);
	json_t *review = review_of(obj, "CREATE", "uid-1");
	json_t *out = NULL;
	wmap_admission_config cfg = { 0 };
	wmap_admission_info info;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_admission_review(&out, eng, &cfg, WMAP_ADMISSION_MUTATE, review, &info,
					   &err), 0, "%s", err.message);
	cr_expect_str_eq(json_string_value(json_object_get(out, "apiVersion")),
			 "admission.k8s.io/v1");
	cr_expect_str_eq(json_string_value(json_object_get(out, "kind")), "AdmissionReview");
	json_t *resp = json_object_get(out, "response");
	cr_expect_str_eq(json_string_value(json_object_get(resp, "uid")), "uid-1");
	cr_expect(json_is_true(json_object_get(resp, "allowed")));
	cr_expect_str_eq(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
	cr_expect_str_eq(info.result, "patched");
	cr_expect_str_eq(info.kind, "JobSet.jobset.x-k8s.io");
	cr_expect_str_eq(info.namespace_, "ml-team");
	json_t *patch = decode_patch(resp);
	cr_expect_eq(json_array_size(patch), info.patch_ops);
	json_t *copy = json_deep_copy(obj);
	cr_assert_eq(wmap_patch_apply(&copy, patch, &err), 0, "%s", err.message);

	/* The result admitted again: allowed, no patch at all. */
	json_t *review2 = review_of(copy, "CREATE", "uid-2");
	json_t *out2 = NULL;
	cr_assert_eq(wmap_admission_review(&out2, eng, &cfg, WMAP_ADMISSION_MUTATE, review2, &info,
					   &err), 0);
	json_t *resp2 = json_object_get(out2, "response");
	cr_expect_null(json_object_get(resp2, "patch"));
	cr_expect_null(json_object_get(resp2, "patchType"));
	cr_expect_str_eq(info.result, "allowed");

	/* dryRun is answered exactly like a real request. */
	json_t *dry = review_of(obj, "CREATE", "uid-1");
	json_object_set_new(json_object_get(dry, "request"), "dryRun", json_true());
	json_t *out3 = NULL;
	cr_assert_eq(wmap_admission_review(&out3, eng, &cfg, WMAP_ADMISSION_MUTATE, dry, &info,
					   &err), 0);
	cr_expect(json_equal(out, out3));
	cr_expect(info.dry_run);

	json_decref(out3);
	json_decref(dry);
	json_decref(out2);
	json_decref(review2);
	json_decref(copy);
	json_decref(patch);
	json_decref(out);
	json_decref(review);
	json_decref(obj);
}

Test(admission, malformed_reviews_are_refused_with_a_message)
{
	static const struct {
		const char *json;
		const char *want;
	} cases[] = {
		{ "[]", "not a JSON object" },
		{ "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\"}",
		  "apiVersion must be admission.k8s.io/v1" },
		{ "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
		  "request is missing" },
		{ "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		  "\"request\":{\"operation\":\"CREATE\",\"object\":{}}}", "request.uid" },
		{ "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		  "\"request\":{\"uid\":7,\"operation\":\"CREATE\",\"object\":{}}}", "request.uid" },
		{ "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		  "\"request\":{\"uid\":\"u\",\"object\":{}}}", "request.operation" },
		{ "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		  "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":\"x\"}}",
		  "request.object" },
		{ "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		  "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":{},"
		  "\"dryRun\":\"yes\"}}", "dryRun" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *review = json_loads(cases[i].json, 0, NULL);
		cr_assert_not_null(review);
		json_t *out = NULL;
		wmap_admission_config cfg = { 0 };
		wmap_error err = { 0 };
		cr_expect_eq(wmap_admission_review(&out, eng, &cfg, WMAP_ADMISSION_MUTATE, review,
						   NULL, &err), WMAP_EINVAL, "case %zu", i);
		cr_expect_null(out);
		cr_expect(strstr(err.message, cases[i].want) != NULL, "case %zu: %s", i,
			  err.message);
		json_decref(review);
	}
}

Test(admission, unknown_kinds_and_delete_are_allowed_unchanged)
{
	json_t *obj = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "example.com/v9", "kind",
				"Mystery", "metadata", "name", "m");
	json_t *review = review_of(obj, "CREATE", "u");
	json_t *out = NULL;
	wmap_admission_config cfg = { 0 };
	wmap_admission_info info;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_admission_review(&out, eng, &cfg, WMAP_ADMISSION_MUTATE, review, &info,
					   &err), 0);
	json_t *resp = json_object_get(out, "response");
	cr_expect(json_is_true(json_object_get(resp, "allowed")));
	cr_expect_null(json_object_get(resp, "patch"));
	cr_expect_str_eq(info.result, "failopen");
	cr_expect_str_eq(info.reason, "no-definition");
	const char *w = json_string_value(json_array_get(json_object_get(resp, "warnings"), 0));
	cr_assert_not_null(w);
	cr_expect(strstr(w, "no definition for Mystery.example.com") != NULL, "%s", w);
	json_decref(out);
	json_decref(review);

	review = json_pack("{s:s, s:s, s:{s:s, s:s, s:n}}", "apiVersion", "admission.k8s.io/v1",
			   "kind", "AdmissionReview", "request", "uid", "d", "operation", "DELETE",
			   "object");
	cr_assert_eq(wmap_admission_review(&out, eng, &cfg, WMAP_ADMISSION_MUTATE, review, &info,
					   &err), 0, "%s", err.message);
	cr_expect_str_eq(info.result, "allowed");
	json_decref(out);
	json_decref(review);
	json_decref(obj);
}

static wmap_policy_set *policies(const char *yaml_docs)
{
	json_t *docs = json_array();
	const char *p = yaml_docs;
	/* Documents are separated by "---\n" lines in these tests. */
	while (p && *p) {
		const char *sep = strstr(p, "---\n");
		char *one = strndup(p, sep ? (size_t)(sep - p) : strlen(p));
		json_array_append_new(docs, t_yaml(one));
		free(one);
		p = sep ? sep + 4 : NULL;
	}
	wmap_policy_set *set = NULL;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_policy_set_parse(&set, docs, "test-policies", NULL, &err), 0, "%s",
		     err.message);
	json_decref(docs);
	return set;
}

Test(admission, update_is_left_alone_unless_a_policy_asks)
{
	json_t *obj = load(JOBSET);
	json_t *patch = NULL, *warnings = NULL;
	wmap_admission_config cfg = { 0 };
	wmap_error err = { 0 };
	cr_assert_eq(wmap_admission_mutate(&patch, &warnings, NULL, eng, &cfg, obj, "UPDATE", NULL,
					   &err), 0);
	cr_expect_eq(json_array_size(patch), 0);
	json_decref(patch);
	json_decref(warnings);

	wmap_policy_set *set = policies(
		"apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: upd}\n"
		"spec:\n  match: {operations: [UPDATE]}\n  podTemplate: {labels: {team: a}}\n");
	cfg.policies = set;
	cr_assert_eq(wmap_admission_mutate(&patch, &warnings, NULL, eng, &cfg, obj, "UPDATE", NULL,
					   &err), 0);
	char *t = json_dumps(patch, JSON_COMPACT);
	cr_expect_eq(json_array_size(patch), 2, "one team label per template: %s", t);
	cr_expect(strstr(t, "wmap.io") == NULL, "no identity labels on UPDATE: %s", t);
	free(t);
	json_decref(patch);
	json_decref(warnings);
	wmap_policy_set_free(set);
	json_decref(obj);
}

Test(admission, generate_name_gets_no_name_based_hints_and_a_warning)
{
	json_t *obj = load(JOBSET);
	json_t *meta = json_object_get(obj, "metadata");
	json_object_del(meta, "name");
	json_object_set_new(meta, "generateName", json_string("train-"));
	wmap_admission_config cfg = { 0 };
	cfg.scheduler = WMAP_GANG_VOLCANO;
	json_t *warnings = NULL;
	json_t *out = mutate(obj, &cfg, NULL, &warnings);
	char *text = json_dumps(out, JSON_COMPACT);
	cr_expect(strstr(text, "wmap.io/workload-name") == NULL, "%s", text);
	cr_expect(strstr(text, "scheduling.k8s.io/group-name") == NULL);
	cr_expect(strstr(text, "\"schedulerName\":\"volcano\"") != NULL, "scheduler still set");
	char *wt = json_dumps(warnings, JSON_COMPACT);
	cr_expect(strstr(wt, "generateName") != NULL, "%s", wt);
	free(wt);
	free(text);
	json_decref(warnings);
	json_decref(out);
	json_decref(obj);
}

static const char *template_ptr(int i)
{
	static char buf[2][96];
	snprintf(buf[i], sizeof(buf[i]), "/spec/replicatedJobs/%d/template/spec/template", i);
	return buf[i];
}

static const char *at(const json_t *doc, const char *base, const char *rest)
{
	char p[256];
	snprintf(p, sizeof(p), "%s%s", base, rest);
	return json_string_value(wmap_pointer_lookup(doc, p));
}

Test(admission, every_scheduler_writes_its_keys_where_it_reads_them)
{
	json_t *obj = load(JOBSET);
	wmap_admission_config cfg = { 0 };
	cfg.queue = "team-q";
	const char *t0 = template_ptr(0);

	cfg.scheduler = WMAP_GANG_KAI;
	json_t *out = mutate(obj, &cfg, NULL, NULL);
	cr_expect_str_eq(at(out, t0, "/spec/schedulerName"), "kai-scheduler");
	cr_expect_str_eq(at(out, "", "/metadata/labels/kai.scheduler~1queue"), "team-q");
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/wmap.io~1pod-group"),
			 "llama-train-new");
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/wmap.io~1pod-group-min-member"), "3");
	json_decref(out);

	cfg.scheduler = WMAP_GANG_VOLCANO;
	out = mutate(obj, &cfg, NULL, NULL);
	cr_expect_str_eq(at(out, t0, "/spec/schedulerName"), "volcano");
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/scheduling.k8s.io~1group-name"),
			 "llama-train-new");
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/scheduling.volcano.sh~1queue-name"),
			 "team-q");
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/volcano.sh~1task-spec"),
			 "replicatedjob-leader", "the task key of minTaskMember");
	cr_expect_str_eq(at(out, template_ptr(1), "/metadata/annotations/volcano.sh~1task-spec"),
			 "replicatedjob-workers");
	json_decref(out);

	cfg.scheduler = WMAP_GANG_KAI;
	cfg.kai_external = 1;
	out = mutate(obj, &cfg, NULL, NULL);
	cr_expect_str_eq(at(out, t0, "/spec/schedulerName"), "kai-scheduler");
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/kai.scheduler~1skip-podgrouper"), "true");
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/pod-group-name"), "llama-train-new");
	cr_expect_str_eq(at(out, template_ptr(1), "/metadata/labels/kai.scheduler~1subgroup-name"),
			 "replicatedjob-workers");
	cfg.kai_external = 0;
	json_decref(out);

	cfg.scheduler = WMAP_GANG_COSCHEDULING;
	out = mutate(obj, &cfg, NULL, NULL);
	cr_expect_str_eq(at(out, t0, "/metadata/labels/scheduling.x-k8s.io~1pod-group"),
			 "llama-train-new");
	cr_expect_str_eq(at(out, t0, "/spec/schedulerName"), "scheduler-plugins-scheduler",
			 "without a coscheduling profile the label is ignored");
	json_decref(out);
	cfg.cosched_profile = "gang-profile";
	out = mutate(obj, &cfg, NULL, NULL);
	cr_expect_str_eq(at(out, t0, "/spec/schedulerName"), "gang-profile");
	cfg.cosched_profile = NULL;
	json_decref(out);

	cfg.scheduler = WMAP_GANG_YUNIKORN;
	out = mutate(obj, &cfg, NULL, NULL);
	cr_expect_str_eq(at(out, t0, "/spec/schedulerName"), "yunikorn");
	cr_expect_str_eq(at(out, t0, "/metadata/labels/yunikorn.apache.org~1queue"), "team-q");
	cr_expect_str_eq(at(out, t0, "/metadata/labels/yunikorn.apache.org~1app-id"),
			 "ml-team-llama-train-new", "unique in the cluster: namespace and name");
	cr_expect_str_eq(at(out, template_ptr(1), "/metadata/labels/yunikorn.apache.org~1app-id"),
			 "ml-team-llama-train-new", "the same on every template");
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/yunikorn.apache.org~1schedulingPolicyParameters"),
			 "gangSchedulingStyle=Soft", "Soft unless a policy asks for Hard");
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/yunikorn.apache.org~1task-groups"),
			 at(out, template_ptr(1), "/metadata/annotations/yunikorn.apache.org~1task-groups"),
			 "the same full task-groups on every template");
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/yunikorn.apache.org~1task-group-name"),
			 "replicatedjob-leader");
	const char *tg = at(out, t0, "/metadata/annotations/yunikorn.apache.org~1task-groups");
	cr_assert_not_null(tg);
	json_t *groups = json_loads(tg, 0, NULL);
	cr_expect_eq(json_array_size(groups), 2);
	cr_expect_not_null(json_object_get(json_array_get(groups, 0), "minMember"));
	json_decref(groups);
	json_decref(out);

	cfg.scheduler = WMAP_GANG_KUEUE;
	out = mutate(obj, &cfg, NULL, NULL);
	/* the fixture already names a Kueue queue: default mode keeps it */
	cr_expect_str_eq(at(out, "", "/metadata/labels/kueue.x-k8s.io~1queue-name"),
			 "ml-team-queue");
	cr_expect_null(at(out, t0, "/metadata/labels/kueue.x-k8s.io~1pod-group-name"),
		       "JobSet has a Kueue integration: only the root's label");
	json_decref(out);

	cfg.scheduler = WMAP_GANG_NATIVE;
	json_t *warnings = NULL;
	out = mutate(obj, &cfg, NULL, &warnings);
	cr_expect_null(at(out, t0, "/spec/schedulerName"));
	cr_expect_str_eq(at(out, t0, "/metadata/annotations/wmap.io~1pod-group"),
			 "llama-train-new");
	char *wt = json_dumps(warnings, JSON_COMPACT);
	cr_expect(strstr(wt, "Workload") != NULL, "%s", wt);
	free(wt);
	json_decref(warnings);
	json_decref(out);
	json_decref(obj);
}

static const char *policy_docs =
	"apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: defaults}\n"
	"spec:\n"
	"  match: {kinds: [\"*.jobset.x-k8s.io\"], namespaces: [ml-team]}\n"
	"  podTemplate:\n"
	"    labels: {team: ml, app.kubernetes.io/name: ignored-when-present}\n"
	"    priorityClassName: batch-low\n"
	"    nodeSelector: {pool: gpu}\n"
	"    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
	"---\n"
	"apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: must-be-high}\n"
	"spec:\n"
	"  match: {kinds: [\"JobSet.jobset.x-k8s.io\"], components: [replicatedjob]}\n"
	"  mode: override\n"
	"  enforce: true\n"
	"  podTemplate: {priorityClassName: high}\n";

Test(admission, policies_default_then_override_and_enforcement)
{
	json_t *obj = load(JOBSET);
	wmap_policy_set *set = policies(policy_docs);
	wmap_admission_config cfg = { 0 };
	cfg.policies = set;
	const char *t0 = template_ptr(0);
	json_t *out = mutate(obj, &cfg, NULL, NULL);
	cr_expect_str_eq(at(out, t0, "/metadata/labels/team"), "ml");
	cr_expect_str_eq(at(out, t0, "/spec/nodeSelector/pool"), "gpu");
	cr_expect_str_eq(at(out, t0, "/spec/priorityClassName"), "high",
			 "the override policy comes later and replaces the default");
	cr_expect_str_eq(at(out, t0, "/spec/tolerations/0/key"), "nvidia.com/gpu");

	/* validation: the mutated object complies, the original does not */
	wmap_audit_result res;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_audit_object(&res, eng, &cfg, out, WMAP_POLICY_OP_CREATE, &err), 0, "%s",
		     err.message);
	cr_expect_eq(res.n, 0);
	cr_expect_eq(res.n_policies, 1, "must-be-high applies and passes");
	wmap_audit_result_free(&res);

	json_t *review = review_of(obj, "CREATE", "v1");
	json_t *resp_review = NULL;
	wmap_admission_info info;
	cr_assert_eq(wmap_admission_review(&resp_review, eng, &cfg, WMAP_ADMISSION_VALIDATE, review,
					   &info, &err), 0);
	json_t *resp = json_object_get(resp_review, "response");
	cr_expect(json_is_false(json_object_get(resp, "allowed")));
	cr_expect_str_eq(info.result, "denied");
	json_t *status = json_object_get(resp, "status");
	cr_expect_eq(json_integer_value(json_object_get(status, "code")), 403);
	const char *msg = json_string_value(json_object_get(status, "message"));
	cr_assert_not_null(msg);
	cr_expect(strstr(msg, "policy must-be-high: component replicatedjob (instance leader): "
			      "priorityClassName must be \"high\"") != NULL, "%s", msg);
	json_decref(resp_review);
	json_decref(review);
	json_decref(out);
	wmap_policy_set_free(set);
	json_decref(obj);
}

Test(admission, base64_vectors)
{
	static const char *in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *want[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
				      "Zm9vYmFy" };
	for (size_t i = 0; i < 7; i++) {
		char *b = wmap_base64((const unsigned char *)in[i], strlen(in[i]));
		cr_expect_str_eq(b, want[i]);
		free(b);
	}
}

Test(admission, objects_owned_by_a_controller_are_left_alone)
{
	json_t *obj = load(JOBSET);
	json_t *refs = json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "example.com/v1",
				 "kind", "Owner", "name", "o", "uid", "1", "controller", 1);
	json_object_set_new(json_object_get(obj, "metadata"), "ownerReferences", refs);
	json_t *patch = NULL, *warnings = NULL;
	wmap_admission_config cfg = { 0 };
	cfg.scheduler = WMAP_GANG_VOLCANO;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_admission_mutate(&patch, &warnings, NULL, eng, &cfg, obj, "CREATE", NULL,
					   &err), 0);
	cr_expect_eq(json_array_size(patch), 0);
	json_decref(patch);
	json_decref(warnings);
	json_decref(obj);
}

Test(admission, validation_does_not_fail_open_under_an_enforced_policy)
{
	json_t *obj = load(JOBSET);
	wmap_policy_set *set = policies(policy_docs);
	wmap_admission_config cfg = { 0 };
	cfg.policies = set;
	cfg.max_depth = 3;   /* the object is deeper: it cannot be evaluated */
	json_t *review = review_of(obj, "CREATE", "deep");
	json_t *out = NULL;
	wmap_admission_info info;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_admission_review(&out, eng, &cfg, WMAP_ADMISSION_VALIDATE, review, &info,
					   &err), 0);
	json_t *resp = json_object_get(out, "response");
	cr_expect(json_is_false(json_object_get(resp, "allowed")));
	cr_expect_str_eq(info.result, "denied");
	const char *msg = json_string_value(json_object_get(json_object_get(resp, "status"),
							     "message"));
	cr_expect(msg && strstr(msg, "could not check"), "%s", msg ? msg : "");
	json_decref(out);
	/* mutation with the same failure fails open */
	cr_assert_eq(wmap_admission_review(&out, eng, &cfg, WMAP_ADMISSION_MUTATE, review, &info,
					   &err), 0);
	cr_expect(json_is_true(json_object_get(json_object_get(out, "response"), "allowed")));
	cr_expect_str_eq(info.result, "failopen");
	json_decref(out);
	json_decref(review);
	wmap_policy_set_free(set);
	json_decref(obj);
}

#define TRAINJOB_DIR "tests/fixtures/trainer-kubeflow-org-trainjob-v1alpha1/"

/* The labels the resolver finds for TrainJob's node pods in obj (the runtimePatches entry). */
static json_t *trainjob_node_labels(json_t *obj)
{
	wmap_workload *w = NULL;
	wmap_error err = { 0 };
	json_t *labels = NULL;
	cr_assert_eq(wmap_workload_resolve(&w, eng, obj, NULL, &err), 0, "%s", err.message);
	for (size_t k = 0; k < w->n_nodes; k++)
		if (strcmp(w->nodes[k].def->name, "node") == 0 && w->nodes[k].n_instances == 1)
			labels = json_incref(w->nodes[k].instances[0].pod.frag[WMAP_FRAG_LABELS].value);
	wmap_workload_free(w);
	return labels;
}

static json_t *entry_of(json_t *obj, const char *manager)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(json_object_get(obj, "spec"), "runtimePatches"), i, e) {
		if (strcmp(json_string_value(json_object_get(e, "manager")), manager) == 0)
			return e;
	}
	return NULL;
}

static json_t *replicated_jobs(json_t *entry)
{
	json_t *t = json_object_get(json_object_get(entry, "trainingRuntimeSpec"), "template");
	return json_object_get(json_object_get(t, "spec"), "replicatedJobs");
}

static void expect_trainjob_identity(json_t *out, const char *name)
{
	json_t *labels = trainjob_node_labels(out);
	cr_assert_not_null(labels, "no labels location after the patch");
	cr_expect_str_eq(label_of(labels, "wmap.io/workload-kind"), "TrainJob.trainer.kubeflow.org");
	cr_expect_str_eq(label_of(labels, "wmap.io/workload-name"), name);
	cr_expect_str_eq(label_of(labels, "wmap.io/component"), "node");
	json_decref(labels);
}

Test(admission, trainjob_pods_are_labelled_through_a_runtime_patch_of_its_own)
{
	/* No runtimePatches at all: the list is added with wmap's entry for the node job. */
	json_t *obj = load(TRAINJOB_DIR "running.yaml");
	wmap_admission_config cfg = { 0 };
	size_t ops = 0, again = 0;
	json_t *labels = trainjob_node_labels(obj);
	cr_expect_null(labels, "the fixture already has wmap's entry");
	json_decref(labels);
	json_t *out = mutate(obj, &cfg, &ops, NULL);
	cr_expect_eq(ops, 1);
	cr_expect_eq(json_array_size(json_object_get(json_object_get(out, "spec"), "runtimePatches")), 1);
	json_t *mine = entry_of(out, "wmap.io/webhook");
	cr_assert_not_null(mine);
	json_t *jobs = replicated_jobs(mine);
	cr_expect_eq(json_array_size(jobs), 1);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(jobs, 0), "name")), "node");
	expect_trainjob_identity(out, "llama-sft");
	/* Idempotent: the second admission finds the entry and writes nothing. */
	json_t *out2 = mutate(out, &cfg, &again, NULL);
	cr_expect_eq(again, 0);
	cr_expect(json_equal(out, out2));
	json_decref(out2);
	json_decref(out);
	json_decref(obj);
}

Test(admission, trainjob_runtime_patches_of_other_managers_are_kept)
{
	/* Kueue's entry is there: wmap's goes after it, at an index read from the request. */
	json_t *obj = load(TRAINJOB_DIR "kueue-patched.yaml");
	json_t *kueue = json_deep_copy(entry_of(obj, "kueue.x-k8s.io/manager"));
	wmap_admission_config cfg = { 0 };
	json_t *patch = NULL, *warnings = NULL;
	wmap_error err = { 0 };
	const char *reason = NULL;
	cr_assert_eq(wmap_admission_mutate(&patch, &warnings, &reason, eng, &cfg, obj, "CREATE", NULL,
					   &err), 0, "%s", err.message);
	cr_assert_eq(json_array_size(patch), 1);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(patch, 0), "path")),
			 "/spec/runtimePatches/1");
	json_t *out = json_deep_copy(obj);
	cr_assert_eq(wmap_patch_apply(&out, patch, &err), 0, "%s", err.message);
	cr_expect_eq(json_array_size(json_object_get(json_object_get(out, "spec"), "runtimePatches")), 2);
	cr_expect(json_equal(entry_of(out, "kueue.x-k8s.io/manager"), kueue), "Kueue's entry changed");
	expect_trainjob_identity(out, "qwen-dpo");
	size_t again = 0;
	json_t *out2 = mutate(out, &cfg, &again, NULL);
	cr_expect_eq(again, 0);
	json_decref(out2);
	json_decref(out);
	json_decref(patch);
	json_decref(warnings);
	json_decref(kueue);
	json_decref(obj);
}

Test(admission, trainjob_entry_of_wmap_without_the_node_job_gets_it_added)
{
	/* wmap's entry exists (written by hand, or an older version) but targets another job:
	 * the node job is appended to its list; the other job and the user's labels stay. */
	json_t *obj = load(TRAINJOB_DIR "running.yaml");
	json_t *entry = json_pack("{s:s, s:{s:{s:{s:[{s:s, s:{s:{s:{s:{s:{s:s}}}}}}]}}}}",
				  "manager", "wmap.io/webhook", "trainingRuntimeSpec", "template", "spec",
				  "replicatedJobs", "name", "launcher", "template", "spec", "template",
				  "metadata", "labels", "team", "ml");
	cr_assert_not_null(entry);
	json_object_set_new(json_object_get(obj, "spec"), "runtimePatches", json_pack("[o]", entry));
	json_t *launcher = json_deep_copy(json_array_get(replicated_jobs(entry), 0));
	wmap_admission_config cfg = { 0 };
	size_t ops = 0, again = 0;
	json_t *out = mutate(obj, &cfg, &ops, NULL);
	cr_expect_eq(ops, 1);
	json_t *jobs = replicated_jobs(entry_of(out, "wmap.io/webhook"));
	cr_expect_eq(json_array_size(jobs), 2);
	cr_expect(json_equal(json_array_get(jobs, 0), launcher), "the launcher entry changed");
	expect_trainjob_identity(out, "llama-sft");
	json_t *out2 = mutate(out, &cfg, &again, NULL);
	cr_expect_eq(again, 0);
	json_decref(out2);
	json_decref(out);
	json_decref(launcher);
	json_decref(obj);
}

/* A JobSet review whose template carries a field nested `levels` deep, as the API server
 * sends it (namespace in the envelope, request.kind, the object, then dryRun and options). */
static char *deep_review_text(int levels, const char *ns, const char *labels_json)
{
	const char *head_fmt =
		"{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
		"\"request\":{\"uid\":\"deep-1\",\"kind\":{\"group\":\"jobset.x-k8s.io\","
		"\"version\":\"v1alpha2\",\"kind\":\"JobSet\"},\"namespace\":\"%s\","
		"\"operation\":\"CREATE\",\"object\":{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\","
		"\"kind\":\"JobSet\",\"metadata\":{\"name\":\"deep\",\"namespace\":\"%s\","
		"\"labels\":%s},\"spec\":{\"replicatedJobs\":[{\"name\":\"w\",\"replicas\":1,"
		"\"template\":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
		"\"image\":\"i\"}],\"x\":";
	const char *tail = "}}}}}]}},\"dryRun\":false,\"options\":{\"kind\":\"CreateOptions\"}}}";
	char head[1024];
	snprintf(head, sizeof(head), head_fmt, ns, ns, labels_json);
	size_t hl = strlen(head), tl = strlen(tail);
	char *t = malloc(hl + 2 * (size_t)levels + 2 + tl + 1);
	cr_assert_not_null(t);
	memcpy(t, head, hl);
	size_t n = hl;
	for (int i = 0; i < levels; i++)
		t[n++] = '[';
	t[n++] = '1';
	for (int i = 0; i < levels; i++)
		t[n++] = ']';
	memcpy(t + n, tail, tl + 1);
	return t;
}

static json_t *answer_deep(wmap_admission_mode mode, const wmap_policy_set *set,
			   const char *ns, const char *labels, wmap_admission_info *info)
{
	char *text = deep_review_text(3000, ns, labels);
	json_t *review = NULL, *out = NULL;
	wmap_json_cut cut;
	json_error_t je;
	cr_assert_eq(wmap_admission_parse(&review, &cut, text, strlen(text), 0, &je), 0, "%s",
		     je.text);
	cr_assert_str_eq(cut.reason, "too-deep");
	wmap_admission_config cfg = { 0 };
	cfg.policies = set;
	cfg.cut = &cut;
	wmap_error err = { 0 };
	cr_assert_eq(wmap_admission_review(&out, eng, &cfg, mode, review, info, &err), 0, "%s",
		     err.message);
	json_decref(review);
	free(text);
	return out;
}

Test(admission, a_review_cut_by_the_parse_is_allowed_with_a_warning)
{
	wmap_admission_info info;
	json_t *out = answer_deep(WMAP_ADMISSION_MUTATE, NULL, "team-a", "{}", &info);
	json_t *resp = json_object_get(out, "response");
	cr_expect_str_eq(json_string_value(json_object_get(resp, "uid")), "deep-1");
	cr_expect(json_is_true(json_object_get(resp, "allowed")));
	cr_expect_null(json_object_get(resp, "patch"), "nothing is written into a cut object");
	json_t *w = json_object_get(resp, "warnings");
	cr_assert_eq(json_array_size(w), 1);
	const char *text = json_string_value(json_array_get(w, 0));
	cr_expect(strstr(text, "nesting deeper than 204 levels at .request.object.spec."
			       "replicatedJobs[0].template.spec.template.spec.x[0]") != NULL,
		  "%s", text);
	cr_expect(strstr(text, "allowed unchanged") != NULL, "%s", text);
	cr_expect_str_eq(info.result, "failopen");
	cr_expect_str_eq(info.reason, "too-deep");
	cr_expect_str_eq(info.kind, "JobSet.jobset.x-k8s.io");
	cr_expect_str_eq(info.namespace_, "team-a");
	json_decref(out);

	/* /validate with no policy: allowed, the same warning. */
	out = answer_deep(WMAP_ADMISSION_VALIDATE, NULL, "team-a", "{}", &info);
	resp = json_object_get(out, "response");
	cr_expect(json_is_true(json_object_get(resp, "allowed")));
	cr_expect_eq(json_array_size(json_object_get(resp, "warnings")), 1);
	cr_expect_str_eq(info.result, "failopen");
	json_decref(out);
}

static const char *prod_policy =
	"apiVersion: wmap.io/v1alpha1\nkind: WorkloadPolicy\nmetadata: {name: prod-priority}\n"
	"spec:\n"
	"  match:\n"
	"    kinds: [\"JobSet.jobset.x-k8s.io\"]\n"
	"    namespaces: [prod]\n"
	"    selector: {matchLabels: {tier: training}}\n"
	"  mode: override\n"
	"  enforce: true\n"
	"  podTemplate: {priorityClassName: high}\n";

Test(admission, a_cut_review_is_denied_where_an_enforced_policy_matches)
{
	wmap_policy_set *set = policies(prod_policy);
	wmap_admission_info info;
	json_t *out = answer_deep(WMAP_ADMISSION_VALIDATE, set, "prod", "{\"tier\":\"training\"}",
				  &info);
	json_t *resp = json_object_get(out, "response");
	cr_expect_str_eq(json_string_value(json_object_get(resp, "uid")), "deep-1");
	cr_expect(json_is_false(json_object_get(resp, "allowed")));
	json_t *status = json_object_get(resp, "status");
	cr_expect_eq(json_integer_value(json_object_get(status, "code")), 403);
	const char *msg = json_string_value(json_object_get(status, "message"));
	cr_assert_not_null(msg);
	cr_expect(strstr(msg, "could not check this JobSet.jobset.x-k8s.io against enforced "
			      "policy prod-priority: the review has nesting deeper than 204 levels "
			      "at .request.object.spec.") != NULL, "%s", msg);
	cr_expect_str_eq(info.result, "denied");
	cr_expect_str_eq(info.reason, "too-deep");
	json_decref(out);

	/* The selector is not consulted (the labels may be what was cut): still denied. */
	out = answer_deep(WMAP_ADMISSION_VALIDATE, set, "prod", "{\"tier\":\"other\"}", &info);
	cr_expect(json_is_false(json_object_get(json_object_get(out, "response"), "allowed")));
	json_decref(out);

	/* Another namespace: the policy does not match; allowed with the warning. */
	out = answer_deep(WMAP_ADMISSION_VALIDATE, set, "dev", "{\"tier\":\"training\"}", &info);
	resp = json_object_get(out, "response");
	cr_expect(json_is_true(json_object_get(resp, "allowed")));
	cr_expect_eq(json_array_size(json_object_get(resp, "warnings")), 1);
	json_decref(out);

	/* /mutate never denies. */
	out = answer_deep(WMAP_ADMISSION_MUTATE, set, "prod", "{\"tier\":\"training\"}", &info);
	cr_expect(json_is_true(json_object_get(json_object_get(out, "response"), "allowed")));
	json_decref(out);
	wmap_policy_set_free(set);
}

Test(admission, a_review_without_a_uid_is_still_refused_when_cut)
{
	const char *text = "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
			   "\"request\":{\"operation\":\"CREATE\",\"object\":{\"a\":[[[[[[1]]]]]]}}}";
	json_t *review = NULL, *out = NULL;
	wmap_json_cut cut;
	wmap_json_limits lim = { 0 };
	lim.cut = 1;
	lim.max_depth = 6;
	json_error_t je;
	cr_assert_eq(wmap_json_parse_limited(&review, &cut, text, strlen(text), &lim, &je), 0);
	cr_assert_not_null(cut.reason);
	wmap_admission_config cfg = { 0 };
	cfg.cut = &cut;
	wmap_error err = { 0 };
	cr_expect_eq(wmap_admission_review(&out, eng, &cfg, WMAP_ADMISSION_MUTATE, review, NULL,
					   &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "request.uid") != NULL, "%s", err.message);
	cr_expect_null(out);
	json_decref(review);
}

/* The group objects of a live JobSet, as the webhook's group controller keeps them. */
static json_t *groups_of(json_t *obj, const wmap_admission_config *cfg, const char **row_name)
{
	json_t *out = NULL;
	const wmap_gang_row *row = NULL;
	wmap_error err;
	cr_assert_eq(wmap_admission_groups(&out, &row, NULL, eng, cfg, obj, &err), 0, "%s", err.message);
	*row_name = row->name;
	return out;
}

Test(admission, group_objects_follow_the_row_and_the_definition)
{
	json_t *obj = load(JOBSET);
	json_object_set_new(json_object_get(obj, "metadata"), "uid", json_string("u-1"));
	wmap_admission_config cfg = { .scheduler = WMAP_GANG_VOLCANO, .queue = "team-q" };
	const char *row;
	json_t *g = groups_of(obj, &cfg, &row);
	cr_expect_str_eq(row, "volcano");
	cr_assert_eq(json_array_size(g), 1);
	json_t *pg = json_array_get(g, 0);
	cr_expect_str_eq(at(pg, "", "/apiVersion"), "scheduling.volcano.sh/v1beta1");
	cr_expect_str_eq(at(pg, "", "/metadata/name"), "llama-train-new");
	cr_expect_str_eq(at(pg, "", "/metadata/namespace"), "ml-team");
	cr_expect_str_eq(at(pg, "", "/metadata/ownerReferences/0/uid"), "u-1");
	cr_expect(json_is_true(wmap_pointer_lookup(pg, "/metadata/ownerReferences/0/controller")));
	cr_expect(json_is_true(wmap_pointer_lookup(pg, "/metadata/ownerReferences/0/blockOwnerDeletion")));
	cr_expect_eq(json_integer_value(wmap_pointer_lookup(pg, "/spec/minMember")), 3);
	cr_expect_eq(json_integer_value(wmap_pointer_lookup(pg, "/spec/minTaskMember/replicatedjob-leader")), 1);
	cr_expect_eq(json_integer_value(wmap_pointer_lookup(pg, "/spec/minTaskMember/replicatedjob-workers")), 2);
	cr_expect_str_eq(at(pg, "", "/spec/queue"), "team-q");
	cr_expect_str_eq(at(pg, "", "/spec/minResources/nvidia.com~1gpu"), "12");
	cr_expect_str_eq(at(pg, "", "/spec/minResources/cpu"), "48");
	cr_expect_str_eq(at(pg, "", "/spec/minResources/memory"), "384Gi");
	cr_expect_null(json_object_get(pg, "status"), "status is never written");
	json_decref(g);

	cfg.scheduler = WMAP_GANG_COSCHEDULING;
	g = groups_of(obj, &cfg, &row);
	pg = json_array_get(g, 0);
	cr_expect_str_eq(at(pg, "", "/apiVersion"), "scheduling.x-k8s.io/v1alpha1");
	cr_expect_eq(json_integer_value(wmap_pointer_lookup(pg, "/spec/minMember")), 3);
	cr_expect_null(wmap_pointer_lookup(pg, "/spec/queue"), "coscheduling has no queue");
	json_decref(g);

	cfg.scheduler = WMAP_GANG_KAI;
	g = groups_of(obj, &cfg, &row);
	cr_expect_eq(json_array_size(g), 0, "Karta mode: KAI makes the group");
	json_decref(g);
	cfg.kai_external = 1;
	g = groups_of(obj, &cfg, &row);
	cr_expect_str_eq(row, "kai-external");
	pg = json_array_get(g, 0);
	cr_expect_str_eq(at(pg, "", "/apiVersion"), "scheduling.run.ai/v2alpha2");
	cr_expect_null(wmap_pointer_lookup(pg, "/spec/minMember"), "exclusive with minSubGroup");
	cr_expect_eq(json_integer_value(wmap_pointer_lookup(pg, "/spec/minSubGroup")), 2);
	cr_expect_str_eq(at(pg, "", "/spec/subGroups/1/name"), "replicatedjob-workers");
	cr_expect_eq(json_integer_value(wmap_pointer_lookup(pg, "/spec/subGroups/1/minMember")), 2);
	cr_expect_null(wmap_pointer_lookup(pg, "/spec/minResources"), "KAI has no minResources");
	json_decref(g);

	cfg.scheduler = WMAP_GANG_YUNIKORN;
	g = groups_of(obj, &cfg, &row);
	cr_expect_eq(json_array_size(g), 0, "YuniKorn needs no object");
	json_decref(g);
	json_decref(obj);
}

/* A gang that can never form is said at admission (and, by the webhook, as an Event). */
Test(admission, a_gang_that_can_never_form_is_a_warning)
{
	json_t *obj = load(JOBSET);
	wmap_admission_config cfg = { .scheduler = WMAP_GANG_VOLCANO };
	json_t *warnings = NULL;
	json_t *out = mutate(obj, &cfg, NULL, &warnings);
	char *wt = json_dumps(warnings, JSON_COMPACT);
	cr_expect(strstr(wt, "never form") == NULL, "a gang that forms: %s", wt);
	free(wt);
	json_decref(warnings);
	json_decref(out);
	json_object_set_new(json_object_get(obj, "spec"), "startupPolicy",
			    json_pack("{s:s}", "startupPolicyOrder", "InOrder"));
	out = mutate(obj, &cfg, NULL, &warnings);
	wt = json_dumps(warnings, JSON_COMPACT);
	cr_expect(strstr(wt, "gang: group llama-train-new can never form: startupPolicy InOrder") != NULL, "%s", wt);
	free(wt);
	json_decref(warnings);
	json_decref(out);
	json_decref(obj);
}
