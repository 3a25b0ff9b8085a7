/* libFuzzer target: the kubeconfig reader (include/wmap/kube.h). The input is YAML: its
 * documents are merged by kubectl's rules (wmap_kubeconfig_merge) and resolved
 * (wmap_kubeconfig_from_json) with and without overrides; the first line, when it starts
 * with "#", is also read as a kubectl duration. Nothing is connected to and no exec plugin
 * runs. Properties: no crash, leak or UB; failures carry a message; a resolved config has
 * a server and a namespace. */
#include <jansson.h>
#include "fuzz.h"
#include "wmap/kube.h"
#include "wmap/yaml.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	json_object_seed(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 32 * 1024)
		return -1;
	if (size > 1 && data[0] == '#') {
		const uint8_t *nl = memchr(data, '\n', size);
		char *line = fz_cstr(data + 1, nl ? (size_t)(nl - data - 1) : size - 1);
		wmap_kube_parse_duration(line);
		char *q = wmap_kube_query_escape(line);
		free(q);
		free(line);
	}
	json_t *docs = NULL;
	wmap_yaml_opts o = {0};
	o.allow_aliases = 1; /* kubeconfigs are ordinary YAML */
	o.max_nodes = 100000;
	wmap_error err;
	if (wmap_yaml_parse(&docs, (const char *)data, size, "kubeconfig", &o, &err) != 0)
		return 0;
	size_t n = json_array_size(docs);
	json_t **v = calloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(docs, i);
	json_t *merged = wmap_kubeconfig_merge(v, n);
	free(v);
	if (merged) {
		static const wmap_kube_overrides none = {0};
		static const wmap_kube_overrides some = {NULL, "ctx", "c1", "u1", "ns"};
		const wmap_kube_overrides *ovs[] = {&none, &some};
		for (int i = 0; i < 2; i++) {
			wmap_kube_config *cfg = NULL;
			int rc = wmap_kubeconfig_from_json(&cfg, merged, "/nonexistent", "kubeconfig",
							   ovs[i], &err);
			if (rc == 0) {
				FZ_CHECK(cfg && cfg->namespace_, "config without namespace");
				wmap_kubeconfig_free(cfg);
			} else {
				FZ_CHECK(cfg == NULL && err.message[0], "failure without message (rc %d)",
					 rc);
			}
		}
		json_decref(merged);
	}
	json_decref(docs);
	return 0;
}
