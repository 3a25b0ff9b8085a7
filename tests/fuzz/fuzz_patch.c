/* libFuzzer target: the JSON Patch builder (src/patch.c). The input is a JSON document, a
 * NUL byte, then a script: each 3 bytes are one builder call (set default, set override,
 * set_at, append_unique), a pointer chosen among the document's own containers and some
 * awkward ones, a key and a value. Properties, beyond no crash, leak or UB:
 *   - the operations apply to the document with an independent applier (jsonpatch.c);
 *   - what wmap_patch_get reports for each successful target is what the patched document
 *     holds (targets with other calls below them excepted: see the note in the loop);
 *   - replaying the script on the patched document gives an empty patch (idempotence),
 *     when every call succeeded and no override target was touched twice;
The builder steals the values it is given and may later change them in place (an append
 * to an array it created from one); callers hand it fresh values or scalars (admission
 * passes policy strings and whole tolerations by reference, which nothing appends into),
 * so that is not checked here.
 *   - wmap_label_value always yields a valid label value. */
#include <jansson.h>
#include "fuzz.h"
#include "jsonpatch.h"
#include "wmap/patch.h"

#define MAX_PTRS 48
#define MAX_CALLS 24

static const char *const fixed_ptrs[] = {
	"", "/metadata", "/metadata/labels", "/metadata/annotations", "/spec/template/metadata",
	"/spec/template/metadata/labels", "/spec/template/spec/tolerations", "/spec/tolerations",
	"/a~1b/c~0d", "/~01", "/spec/x/y/z", "/0", "/-", "/metadata/labels/", "//", "/a~2b", "x",
	"/spec/containers/0", "/spec/containers/1/env",
};
static const char *const keys[] = {
	"wmap.io/workload-name", "a", "~", "/", "~1", "", "labels", "metadata", "0", "-",
	"kai.scheduler/queue", "x~0y/z", "\xc3\xa9",
};
static const char *const values[] = {
	"\"v\"", "\"w\"", "1", "null", "true", "{}", "{\"k\":\"v\"}", "[]", "[1]",
	"{\"key\":\"gpu\",\"operator\":\"Exists\"}", "{\"a\":{\"b\":{}}}", "\"\"",
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void collect(json_t *v, const char *ptr, char **out, size_t *n)
{
	if (*n >= MAX_PTRS || !(json_is_object(v) || json_is_array(v)))
		return;
	out[(*n)++] = strdup(ptr);
	const char *k;
	json_t *c;
	size_t i;
	if (json_is_object(v)) {
		json_object_foreach(v, k, c) {
			char *p = wmap_pointer_join(ptr, k);
			collect(c, p, out, n);
			free(p);
		}
	} else {
		json_array_foreach(v, i, c) {
			char idx[24];
			snprintf(idx, sizeof(idx), "%zu", i);
			char *p = wmap_pointer_join(ptr, idx);
			collect(c, p, out, n);
			free(p);
		}
	}
}

typedef struct call {
	int kind;          /* 0 set default, 1 set override, 2 set_at override, 3 append */
	const char *ptr;
	const char *key;
	json_t *value;     /* each call gets a deep copy */
	int rc;            /* what the call returned in the first run */
} call;

/* Runs the calls against doc; returns the builder, *errors counts failed calls. */
static wmap_patch *run(const json_t *doc, call *calls, size_t n, int *errors)
{
	wmap_patch *p = NULL;
	wmap_error err;
	FZ_CHECK(wmap_patch_new(&p, doc, &err) == 0, "patch_new");
	*errors = 0;
	for (size_t i = 0; i < n; i++) {
		call *c = &calls[i];
		int rc, changed = -1;
		json_t *v = json_deep_copy(c->value);
		if (c->kind == 0 || c->kind == 1) {
			rc = wmap_patch_set(p, c->ptr, c->key, v,
					    c->kind ? WMAP_PATCH_OVERRIDE : WMAP_PATCH_DEFAULT,
					    &changed, &err);
		} else if (c->kind == 2) {
			char *full = wmap_pointer_join(c->ptr, c->key);
			rc = wmap_patch_set_at(p, full, v, WMAP_PATCH_OVERRIDE, &changed, &err);
			free(full);
		} else {
			rc = wmap_patch_append_unique(p, c->ptr, v, &changed, &err);
		}
		c->rc = rc;
		if (rc) {
			FZ_CHECK(rc == WMAP_EEVAL || rc == WMAP_EINVAL, "call %zu: rc %d: %s", i, rc,
				 err.message);
			(*errors)++;
		}
	}
	return p;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	json_object_seed(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16 * 1024)
		return -1;
	const uint8_t *nul = memchr(data, 0, size);
	size_t doc_len = nul ? (size_t)(nul - data) : size;
	const uint8_t *script = nul ? nul + 1 : NULL;
	size_t script_len = nul ? size - doc_len - 1 : 0;

	/* Label values: any C string in gives a valid value out. */
	{
		char *s = fz_cstr(data, doc_len), buf[64];
		wmap_label_value(buf, sizeof(buf), s);
		FZ_CHECK(wmap_label_value_valid(buf), "label value \"%s\" from \"%.80s\"", buf, s);
		wmap_label_key_valid(s);
		free(s);
	}

	json_error_t jerr;
	json_t *doc = json_loadb((const char *)data, doc_len, JSON_DECODE_ANY, &jerr);
	if (!doc)
		return 0;
	char *ptrs[MAX_PTRS + N(fixed_ptrs)];
	size_t n_ptrs = 0;
	collect(doc, "", ptrs, &n_ptrs);
	for (size_t i = 0; i < N(fixed_ptrs); i++)
		ptrs[n_ptrs++] = strdup(fixed_ptrs[i]);

	call calls[MAX_CALLS];
	size_t n = 0;
	int replayable = 1;
	for (size_t i = 0; i + 3 <= script_len && n < MAX_CALLS; i += 3) {
		call *c = &calls[n++];
		c->kind = script[i] % 4;
		c->ptr = ptrs[script[i + 1] % n_ptrs];
		c->key = keys[script[i + 2] % N(keys)];
		const char *vt = values[(script[i] / 4 + script[i + 2] / N(keys)) % N(values)];
		c->value = json_loads(vt, JSON_DECODE_ANY, NULL);
	}
	/* Idempotence holds only when a caller does not set one override target twice (or set
	 * an override inside another target): the last call wins, the first one differs. */
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			if (i == j || !(calls[i].kind == 1 || calls[i].kind == 2))
				continue;
			if (strncmp(calls[j].ptr, calls[i].ptr, strlen(calls[i].ptr)) == 0 ||
			    strncmp(calls[i].ptr, calls[j].ptr, strlen(calls[j].ptr)) == 0)
				replayable = 0;
		}
		/* An override of a container, or of a key that other calls go through. */
		if ((calls[i].kind == 1 || calls[i].kind == 2) &&
		    (json_is_object(calls[i].value) || json_is_array(calls[i].value)))
			replayable = 0;
	}

	int errors;
	wmap_patch *p = run(doc, calls, n, &errors);
	const json_t *ops = wmap_patch_ops(p);
	FZ_CHECK(json_array_size(ops) == wmap_patch_len(p), "len");
	char *text = NULL;
	wmap_error err;
	FZ_CHECK(wmap_patch_dump(&text, NULL, p, &err) == 0, "dump");

	json_t *patched = json_deep_copy(doc);
	int bad = fz_patch_apply(&patched, ops);
	FZ_CHECK(bad == 0, "op %d does not apply: %s", bad - 1, text);

	/* wmap's own applier agrees with ours. */
	json_t *theirs = json_deep_copy(doc);
	FZ_CHECK(wmap_patch_apply(&theirs, ops, &err) == 0, "wmap_patch_apply: %s", err.message);
	FZ_CHECK(json_equal(theirs, patched), "appliers disagree on %s", text);
	json_decref(theirs);

	/* The overlay shows what the patch leaves (set targets only, outside appended arrays). */
	for (size_t i = 0; i < n; i++) {
		if (calls[i].kind == 3 || calls[i].rc != 0)
			continue;
		int under_append = 0;
		char *full = wmap_pointer_join(calls[i].ptr, calls[i].key);
		/* Known limit: a value read at a pointer whose descendants were patched by later,
		 * separate operations is the document's (wmap_patch_get is not used by admission). */
		for (size_t j = 0; j < n; j++)
			if ((calls[j].kind == 3 &&
			     strncmp(calls[i].ptr, calls[j].ptr, strlen(calls[j].ptr)) == 0) ||
			    (j != i && strncmp(calls[j].ptr, full, strlen(full)) == 0))
				under_append = 1;
		if (under_append) {
			free(full);
			continue;
		}
		const json_t *seen = wmap_patch_get(p, full);
		json_t *real = fz_pointer_get(patched, full);
		FZ_CHECK((seen && real && json_equal(seen, real)) || (!seen && (!real || json_is_null(real))),
			 "overlay at %s differs from the patched document; patch %s", full, text);
		free(full);
	}

	if (replayable && errors == 0) {
		int errors2;
		wmap_patch *p2 = run(patched, calls, n, &errors2);
		char *t2 = NULL;
		wmap_patch_dump(&t2, NULL, p2, &err);
		FZ_CHECK(errors2 == 0 && wmap_patch_len(p2) == 0,
			 "second pass not empty (%d errors): first %s second %s", errors2, text, t2);
		free(t2);
		wmap_patch_free(p2);
	}

	free(text);
	wmap_patch_free(p);
	json_decref(patched);
	for (size_t i = 0; i < n; i++) {
		json_decref(calls[i].value);
	}
	for (size_t i = 0; i < n_ptrs; i++)
		free(ptrs[i]);
	json_decref(doc);
	return 0;
}
