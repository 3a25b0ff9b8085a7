/* libFuzzer target: a list response from the API server (a workload list for `get`, a pod
 * list for the live `describe`), read as the plugin reads it: the body parsed with
 * jansson's rules (wmap_kube_request), then every item resolved through the definition of
 * its kind, with status (what `get` prints), and matched as a Pod against each component
 * of the JobSet definition (the pod selectors `describe` evaluates). Properties, beyond no
 * crash, leak or UB:
 *   - every failure comes with a message;
 *   - a resolved workload has at least its root node;
 *   - a pod key, when there is one, is a non-empty string. */
#include <jansson.h>
#include "fuzz.h"
#include "wmap/pods.h"
#include "wmap/registry.h"
#include "wmap/workload.h"

static wmap_registry *reg;
static wmap_engine *eng;
static const wmap_definition *jobset;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	wmap_error err;
	json_object_seed(1);
	if (wmap_registry_new(&reg, &err) || wmap_registry_add_catalog(reg, &err) ||
	    wmap_engine_new(&eng, reg, &err) || wmap_engine_prepare(eng, &err)) {
		fprintf(stderr, "fuzz_kube_list: set-up failed: %s\n", err.message);
		abort();
	}
	jobset = wmap_registry_find(reg, "jobset.x-k8s.io", "v1alpha2", "JobSet", NULL);
	if (!jobset)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256 * 1024)
		return -1;
	json_t *list = json_loadb((const char *)data, size, 0, NULL);
	size_t i;
	json_t *item;
	json_array_foreach(json_object_get(list, "items"), i, item) {
		if (i >= 64)
			break;
		wmap_error err = { 0 };
		const wmap_definition *def = NULL;
		int rc = wmap_registry_find_object(&def, reg, item, &err);
		if (rc == 0) {
			wmap_workload *w = NULL;
			rc = wmap_workload_resolve_ex(&w, eng, item, def, 0, &err);
			FZ_CHECK(rc != 0 || (w && w->n_nodes >= 1), "resolved with no root");
			FZ_CHECK(rc == 0 || err.message[0], "resolve failed without a message");
			wmap_workload_free(w);
		} else {
			FZ_CHECK(err.message[0], "no definition without a message");
		}
		for (size_t ci = 0; ci < jobset->n_components; ci++) {
			int match = 0;
			wmap_error e2 = { 0 };
			if (wmap_pod_matches_component(&match, eng, jobset, (int)ci, item, &e2))
				FZ_CHECK(e2.message[0], "pod match failed without a message");
			char *key = NULL;
			if (wmap_pod_key(&key, eng, jobset, (int)ci, item, (int)(i % 2), &e2) == 0)
				FZ_CHECK(!key || key[0], "an empty pod key");
			else
				FZ_CHECK(e2.message[0], "pod key failed without a message");
			free(key);
		}
	}
	json_decref(list);
	return 0;
}
