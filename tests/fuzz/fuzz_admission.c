/* libFuzzer target: AdmissionReview in, AdmissionReview out (wmap_admission_review, what the
 * webhook calls), against the whole embedded catalog and a fixed set of WorkloadPolicies.
 * The input is the request body (JSON). Properties, beyond no crash, leak or UB:
 *   - WMAP_EINVAL comes with a message and no response; anything else is a response that
 *     echoes the uid and says allowed true/false;
 *   - warnings (Warn policies add one per violation) stay at most 8 printable lines under
 *     256 characters;
 *   - a mutation's patch is base64 of a JSON array that applies to request.object with an
 *     independent RFC 6902 applier (jsonpatch.c);
 *   - admitting the patched object again yields no patch (reinvocationPolicy: IfNeeded);
 *   - the body is read as the server reads it (wmap_admission_parse) or with small caps so
 *     that cut reviews are common: the capped parse accepts what jansson accepts (beyond
 *     what it never reads: numbers past range and depth past the cap), equal values when
 *     nothing was cut, and a cut review never gets a patch. */
#include <jansson.h>
#include "fuzz.h"
#include "jsonpatch.h"
#include "wmap/admission.h"
#include "wmap/json_text.h"
#include "wmap/policy.h"
#include "wmap/registry.h"
#include "wmap/yaml.h"

static wmap_registry *reg;
static wmap_engine *eng;
static wmap_policy_set *policies;

/* Policies that never contradict each other, so a second admission must be a no-op. */
static const char policy_yaml[] =
	"apiVersion: wmap.io/v1alpha1\n"
	"kind: WorkloadPolicy\n"
	"metadata: {name: team-labels}\n"
	"spec:\n"
	"  match: {namespaces: [\"team-*\"], operations: [CREATE, UPDATE]}\n"
	"  podTemplate:\n"
	"    labels: {cost-center: research}\n"
	"    annotations: {example.com/owner: team-a}\n"
	"    nodeSelector: {nvidia.com/gpu.present: \"true\"}\n"
	"    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
	"---\n"
	"apiVersion: wmap.io/v1alpha1\n"
	"kind: WorkloadPolicy\n"
	"metadata: {name: prod}\n"
	"spec:\n"
	"  match:\n"
	"    namespaces: [prod]\n"
	"    selector:\n"
	"      matchLabels: {tier: serving}\n"
	"      matchExpressions: [{key: env, operator: NotIn, values: [dev]}]\n"
	"  mode: override\n"
	"  enforce: true\n"
	"  podTemplate: {priorityClassName: serving-high, runtimeClassName: nvidia}\n"
	"  gang: {scheduler: volcano, queue: prod}\n"
	"---\n"
	"apiVersion: wmap.io/v1alpha1\n"
	"kind: WorkloadPolicy\n"
	"metadata: {name: ray}\n"
	"spec:\n"
	"  match: {kinds: [\"*.ray.io\", \"JobSet.jobset.x-k8s.io\"], components: [worker, head]}\n"
	"  podTemplate: {schedulerName: my-scheduler}\n"
	"  gang: {scheduler: kai, queue: q1}\n"
	"---\n"
	"apiVersion: wmap.io/v1alpha1\n"
	"kind: WorkloadPolicy\n"
	"metadata: {name: warn-team}\n"
	"spec:\n"
	"  match: {namespaces: [\"team-*\", \"prod\"]}\n"
	"  validationActions: [Warn, Audit]\n"
	"  podTemplate: {labels: {team: fuzz}, annotations: {example.com/ticket: \"1\"}}\n"
	"---\n"
	"apiVersion: wmap.io/v1alpha1\n"
	"kind: WorkloadPolicy\n"
	"metadata: {name: audit-gpu}\n"
	"spec:\n"
	"  validationActions: [Audit]\n"
	"  podTemplate: {tolerations: [{key: fuzz, operator: Exists}]}\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	wmap_error err;
	json_t *docs = NULL;
	json_object_seed(1);
	if (wmap_registry_new(&reg, &err) || wmap_registry_add_catalog(reg, &err) ||
	    wmap_engine_new(&eng, reg, &err) || wmap_engine_prepare(eng, &err) ||
	    wmap_yaml_parse(&docs, policy_yaml, sizeof(policy_yaml) - 1, "policy", NULL, &err) ||
	    wmap_policy_set_parse(&policies, docs, "policy", NULL, &err)) {
		fprintf(stderr, "fuzz_admission: set-up failed: %s\n", err.message);
		abort();
	}
	json_decref(docs);
	return 0;
}

static json_t *decode_patch(const char *b64)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(b64);
	FZ_CHECK(n % 4 == 0, "patch base64 length %zu", n);
	unsigned char *out = malloc(n / 4 * 3 + 1);
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		unsigned v = 0;
		int pad = 0;
		for (int j = 0; j < 4; j++) {
			const char *p = b64[i + j] == '=' ? NULL : strchr(tab, b64[i + j]);
			FZ_CHECK(p || (b64[i + j] == '=' && i + 4 == n && j >= 2), "bad base64");
			if (!p)
				pad++;
			v = v << 6 | (p ? (unsigned)(p - tab) : 0);
		}
		out[o++] = (unsigned char)(v >> 16);
		if (pad < 2)
			out[o++] = (unsigned char)(v >> 8);
		if (pad < 1)
			out[o++] = (unsigned char)v;
	}
	json_error_t jerr;
	json_t *ops = json_loadb((const char *)out, o, 0, &jerr);
	FZ_CHECK(json_is_array(ops), "patch is not a JSON array: %s", jerr.text);
	free(out);
	return ops;
}

/* Runs one review; returns the decoded patch (NULL when none) and checks the response. */
static json_t *admit(json_t *review, wmap_admission_config *cfg, wmap_admission_mode mode,
		     int *invalid)
{
	json_t *out = NULL;
	wmap_admission_info info;
	wmap_error err;
	int rc = wmap_admission_review(&out, eng, cfg, mode, review, &info, &err);
	*invalid = rc == WMAP_EINVAL;
	if (rc != 0) {
		FZ_CHECK(rc == WMAP_EINVAL || rc == WMAP_ENOMEM, "unexpected rc %d: %s", rc,
			 err.message);
		FZ_CHECK(out == NULL && err.message[0], "failure with a response or no message");
		return NULL;
	}
	json_t *resp = json_object_get(out, "response");
	FZ_CHECK(json_is_object(resp), "response missing");
	const char *uid = json_string_value(json_object_get(resp, "uid"));
	const char *want = json_string_value(
		json_object_get(json_object_get(review, "request"), "uid"));
	FZ_CHECK(uid && want && strcmp(uid, want) == 0, "uid not echoed");
	FZ_CHECK(json_is_boolean(json_object_get(resp, "allowed")), "allowed missing");
	/* Warn policies add a warning per violation: still at most 8, each under the API
	 * server's 256 characters, one printable line. */
	json_t *warnings = json_object_get(resp, "warnings");
	size_t wi;
	json_t *w;
	FZ_CHECK(json_array_size(warnings) <= 8, "%zu warnings", json_array_size(warnings));
	json_array_foreach(warnings, wi, w) {
		const char *t = json_string_value(w);
		FZ_CHECK(t && strlen(t) <= 256, "warning too long or not a string");
		for (; *t; t++)
			FZ_CHECK((unsigned char)*t >= 32, "control character in a warning");
	}
	FZ_CHECK(info.n_hits <= WMAP_ADMISSION_MAX_HITS, "%zu hits", info.n_hits);
	json_t *ops = NULL;
	const char *b64 = json_string_value(json_object_get(resp, "patch"));
	if (b64) {
		FZ_CHECK(mode == WMAP_ADMISSION_MUTATE, "validation sent a patch");
		ops = decode_patch(b64);
	}
	json_decref(out);
	return ops;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256 * 1024)
		return -1;
	/* The scheduler, the policies and the caps vary with the input, deterministically. */
	unsigned h = 0;
	for (size_t i = 0; i < size; i++)
		h = h * 31 + data[i];
	/* Read as the server reads it (wmap_admission_parse), or with small caps so that cut
	 * reviews are common; either way jansson must agree on whether it is JSON and, when
	 * nothing was cut, on the value. */
	json_error_t jerr, je;
	json_t *review = NULL, *full = json_loadb((const char *)data, size, 0, &je);
	wmap_json_cut cut;
	int prc;
	if ((h >> 10) % 2) {
		prc = wmap_admission_parse(&review, &cut, (const char *)data, size, 0, &jerr);
	} else {
		wmap_json_limits lim = { 0 };
		lim.cut = 1;
		lim.keep_depth = 3;
		lim.max_depth = 4 + (int)((h >> 11) % 16);
		lim.max_members = 2 + (h >> 15) % 8;
		lim.max_nodes = 16 + (h >> 18) % 256;
		prc = wmap_json_parse_limited(&review, &cut, (const char *)data, size, &lim, &jerr);
	}
	FZ_CHECK(prc == 0 || prc == WMAP_EINVAL || prc == WMAP_ENOMEM, "parse rc %d", prc);
	if (prc == 0 && !full) {
		/* The differences allowed: a number left out is never converted (1e999), nothing
		 * deeper than the cap is read (jansson stops at 2048 levels), and jansson skips a
		 * NUL right after a number. */
		FZ_CHECK((cut.reason && (strstr(je.text, "too big") || strstr(je.text, "overflow") ||
					 strstr(je.text, "depth"))) || memchr(data, '\0', size),
			 "jansson refuses (%s) what the capped parse accepts", je.text);
	}
	if (prc != 0 && prc != WMAP_ENOMEM)
		FZ_CHECK(!full || memchr(data, '\0', size), "jansson accepts what the capped "
			 "parse refuses: %s", jerr.text);
	if (prc == 0 && full && !cut.reason)
		FZ_CHECK(json_equal(review, full), "uncut parse differs from jansson's");
	json_decref(full);
	if (!review)
		return 0;
	wmap_admission_config cfg = {0};
	cfg.scheduler = (wmap_gang_scheduler)(h % WMAP_GANG_COUNT);
	cfg.queue = (h >> 8) % 2 ? "fuzz-queue" : NULL;
	cfg.policies = (h >> 9) % 2 ? policies : NULL;
	cfg.cut = &cut;

	int invalid;
	json_t *ops = admit(review, &cfg, WMAP_ADMISSION_VALIDATE, &invalid);
	json_decref(ops);
	ops = admit(review, &cfg, WMAP_ADMISSION_MUTATE, &invalid);
	FZ_CHECK(!ops || !cut.reason, "a patch for a review the parse cut (%s)", cut.reason);
	cfg.cut = NULL;   /* the patched object below is whole */
	if (ops) {
		json_t *req = json_object_get(review, "request");
		json_t *obj = json_deep_copy(json_object_get(req, "object"));
		int bad = fz_patch_apply(&obj, ops);
		if (bad) {
			char *p = json_dumps(ops, JSON_COMPACT);
			FZ_CHECK(0, "patch op %d does not apply: %s", bad - 1, p);
		}
		/* Second pass on the patched object: nothing left to do. */
		json_object_set_new(req, "object", obj);
		json_t *again = admit(review, &cfg, WMAP_ADMISSION_MUTATE, &invalid);
		if (again && json_array_size(again) > 0) {
			char *p1 = json_dumps(ops, JSON_COMPACT), *p2 = json_dumps(again, JSON_COMPACT);
			FZ_CHECK(0, "second admission is not empty:\nfirst  %s\nsecond %s", p1, p2);
		}
		json_decref(again);
		json_decref(ops);
	}
	json_decref(review);
	return 0;
}
