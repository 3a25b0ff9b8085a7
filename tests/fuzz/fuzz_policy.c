/* libFuzzer target: WorkloadPolicy documents and label selectors (src/policy.c). There is no
 * string selector syntax in wmap ("a=b,c in (d)"): selectors are the structured
 * {matchLabels, matchExpressions} of a policy, so this target reads YAML documents as a
 * policy set and matches every loaded policy against labels taken from the input (the
 * labels of a workload are user input, of any JSON type) and against a few fixed kinds and
 * namespaces. Properties: no crash, leak or UB; failures carry a message; matching a NULL
 * selector is true. */
#include <jansson.h>
#include "fuzz.h"
#include "wmap/policy.h"
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
	json_t *docs = NULL, *pos = json_object();
	wmap_yaml_opts o = {0};
	o.positions = pos;
	o.max_nodes = 100000;
	wmap_error err;
	if (wmap_yaml_parse(&docs, (const char *)data, size, "policy.yaml", &o, &err) != 0) {
		json_decref(pos);
		return 0;
	}
	/* Labels to match: the last document when it is not a policy, else a fixed set. */
	json_t *last = json_array_get(docs, json_array_size(docs) - 1);
	json_t *labels = json_pack("{s:s, s:s}", "tier", "serving", "env", "prod");
	json_t *user = NULL;
	if (last && !json_object_get(last, "kind")) {
		user = json_incref(last);
		json_array_remove(docs, json_array_size(docs) - 1);
	}
	FZ_CHECK(wmap_selector_matches(NULL, user) == 1, "NULL selector");

	wmap_policy_set *set = NULL;
	int rc = wmap_policy_set_parse(&set, docs, "policy.yaml", pos, &err);
	if (rc == 0) {
		static const char *const kinds[] = {"Pod", "JobSet.jobset.x-k8s.io", "Job.batch", ""};
		static const char *const nss[] = {"team-a", "", "prod"};
		for (size_t i = 0; i < set->n; i++) {
			const wmap_policy *p = &set->policies[i];
			for (size_t k = 0; k < 4; k++)
				for (size_t n = 0; n < 3; n++) {
					wmap_policy_matches(p, kinds[k], nss[n], labels, WMAP_POLICY_OP_CREATE);
					wmap_policy_matches(p, kinds[k], n ? nss[n] : NULL, user,
							    WMAP_POLICY_OP_UPDATE);
				}
			wmap_policy_matches_component(p, "worker");
			wmap_selector_matches(p->selector, user);
			wmap_selector_matches(p->selector, labels);
			/* A selector applied to its own matchLabels holds unless expressions exclude. */
			wmap_selector_matches(p->selector, json_object_get(p->selector, "matchLabels"));
		}
		wmap_policy_set_free(set);
	} else {
		FZ_CHECK(set == NULL && err.message[0], "failure without message (rc %d)", rc);
	}
	json_decref(user);
	json_decref(labels);
	json_decref(docs);
	json_decref(pos);
	return 0;
}
