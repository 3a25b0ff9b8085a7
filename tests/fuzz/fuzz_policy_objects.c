/* libFuzzer target: WorkloadPolicy objects as the cluster serves them. The input is the body
 * of a list response of workloadpolicies.wmap.io (JSON, with the server's fields: uid,
 * resourceVersion, managedFields, status), read as wmap-webhook's cluster reader reads it
 * (webhook/cluster.c): the items keyed by name (a later item replaces an earlier one, as a
 * watch MODIFIED event does), each checked alone without its status, then the valid ones
 * parsed together into the set in force. Properties, beyond no crash, leak or UB:
 *   - every refusal carries a message naming the policy;
 *   - policies valid one by one are valid together (the webhook builds the set in force from
 *     them: a set that failed would drop every cluster policy at once);
 *   - the set holds each of them, by name. */
#include <jansson.h>
#include "fuzz.h"
#include "wmap/policy.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	json_object_seed(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 128 * 1024)
		return -1;
	json_t *list = json_loadb((const char *)data, size, 0, NULL);
	json_t *byname = json_object(), *valid = json_array(), *item;
	size_t i;
	json_array_foreach(json_object_get(list, "items"), i, item) {
		const char *name = json_string_value(json_object_get(json_object_get(item, "metadata"), "name"));
		if (i >= 64)
			break;
		if (name && json_is_object(item))
			json_object_set(byname, name, item);
	}
	const char *key;
	json_object_foreach(byname, key, item) {
		json_t *one = json_array(), *copy = json_deep_copy(item);
		wmap_policy_set *set = NULL;
		wmap_error err = { 0 };
		char label[300];
		if (!one || !copy)
			abort();
		json_object_del(copy, "status"); /* as the webhook's without_status */
		json_array_append_new(one, copy);
		snprintf(label, sizeof(label), "workloadpolicies.wmap.io/%.200s", key);
		int rc = wmap_policy_set_parse(&set, one, label, NULL, &err);
		if (rc == 0) {
			FZ_CHECK(set->n == 1, "one object gave %zu policies", set->n);
			(void)wmap_policy_matches(&set->policies[0], "JobSet.jobset.x-k8s.io", "team-a",
						  json_object_get(json_object_get(item, "metadata"), "labels"),
						  WMAP_POLICY_OP_CREATE);
			(void)wmap_policy_needs_validation(&set->policies[0]);
			json_array_append(valid, copy);
		} else {
			FZ_CHECK(rc == WMAP_EINVAL || rc == WMAP_ENOMEM, "parse returned %d", rc);
			FZ_CHECK(err.message[0] && strstr(err.message, "workloadpolicies.wmap.io/"),
				 "refusal without a message naming the policy: %s", err.message);
		}
		wmap_policy_set_free(set);
		json_decref(one);
	}
	if (json_array_size(valid) > 0) {
		wmap_policy_set *all = NULL;
		wmap_error err = { 0 };
		int rc = wmap_policy_set_parse(&all, valid, "workloadpolicies.wmap.io", NULL, &err);
		FZ_CHECK(rc == 0 || rc == WMAP_ENOMEM, "policies valid alone are refused together: %s", err.message);
		if (rc == 0)
			FZ_CHECK(all->n == json_array_size(valid), "%zu policies of %zu", all->n, json_array_size(valid));
		wmap_policy_set_free(all);
	}
	json_decref(valid);
	json_decref(byname);
	json_decref(list);
	return 0;
}
